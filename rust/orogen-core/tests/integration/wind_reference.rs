//! Wind erosion (Prokop 2009 §4.3.3) against a plain reference: every line walked on its
//! own, one after the other, each cell's loss and gain written to a buffer and applied at
//! the end. The process walks lines in parallel and changes the terrain in place (a cell
//! is settled once the next cell of its line has been seen); both must give the same
//! bytes on random terrains, directions, sizes, materials and borders (open or closed),
//! with 1 and 3 threads.

use crate::support::random_thickness;
use orogen_core::eroders::wind::{self, Wind};
use orogen_core::state::{Layers, MaterialProps, TerrainMut};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The reference step; returns (eroded, deposited, blown off, blown on).
fn reference_step(
    grid: Grid,
    p: &wind::Params,
    surface: &mut [f32],
    layers: &mut Layers,
    mats: &[MaterialProps],
) -> (f64, f64, f64, f64) {
    let (w, h, cs) = (grid.width, grid.height, grid.cell_size);
    let nl = layers.len();
    let sus: Vec<f32> = mats.iter().map(|m| 1.0 - m.wind_resistance).collect();
    let fall = (p.fall_angle_deg as f64).to_radians().tan() as f32;
    let talus = (p.wind_talus_deg as f64).to_radians().tan() as f32;
    let closed = p.borders == wind::Borders::Closed;
    // The rasterised lines: translates of one digital line along the major axis.
    let th = (p.direction_deg as f64).rem_euclid(360.0).to_radians();
    let (wx, wy) = (th.cos(), th.sin());
    let major_is_x = wx.abs() >= wy.abs();
    let (major, minor, along, across) = if major_is_x {
        (w, h, wx, wy)
    } else {
        (h, w, wy, wx)
    };
    let f: Vec<i64> = (0..major)
        .map(|t| (t as f64 * (across / along.abs())).round() as i64)
        .collect();
    let (fmax, fmin) = (*f.iter().max().unwrap(), *f.iter().min().unwrap());
    let dist = |t: usize| {
        if t > 0 && f[t] != f[t - 1] {
            cs * std::f32::consts::SQRT_2
        } else {
            cs
        }
    };
    let cell = |l: i64, t: usize| -> Option<usize> {
        let b = l + f[t] - fmax;
        if b < 0 || b >= minor as i64 {
            return None;
        }
        let a = if along > 0.0 { t } else { major - 1 - t };
        Some(if major_is_x {
            b as usize * w + a
        } else {
            a * w + b as usize
        })
    };
    let thick = |k: usize, c: usize| -> f32 {
        if k < nl {
            layers.thickness(k)[c]
        } else {
            f32::INFINITY
        }
    };
    let loose = |c: usize| -> f32 {
        let mut sum = 0.0f32;
        for (k, &r) in sus[..nl].iter().enumerate() {
            let t = thick(k, c);
            if t > 0.0 {
                if r <= 0.0 {
                    return sum;
                }
                sum += t;
            }
        }
        if sus[nl] > 0.0 {
            f32::INFINITY
        } else {
            sum
        }
    };
    let take = |s: &mut f64, want: f32| -> f32 {
        if *s <= 0.0 || want <= 0.0 {
            return 0.0;
        }
        let mut a = want.min(*s as f32);
        if a as f64 > *s {
            a = f32::from_bits(a.to_bits() - 1);
        }
        *s -= a as f64;
        a
    };
    let mut change = vec![[0.0f32; 2]; w * h];
    let (mut eroded, mut deposited, mut lost, mut on) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for l in 0..(minor as i64 + fmax - fmin) {
        let cells: Vec<(usize, usize)> = (0..major)
            .filter_map(|t| cell(l, t).map(|c| (t, c)))
            .collect();
        let (mut hw, mut s, mut prev_h) = (0.0f32, 0.0f64, 0.0f32);
        for (i, &(t, c)) in cells.iter().enumerate() {
            let first = i == 0;
            let next = cells.get(i + 1).map(|&(_, c2)| c2);
            let d_here = dist(t);
            let d_next = if t + 1 < major { dist(t + 1) } else { d_here };
            let hc = surface[c];
            let h_next = next.map_or(hc, |c2| surface[c2]);
            if first {
                // The wind arrives carrying the influx.
                (hw, s) = (hc, p.influx as f64);
                on += p.influx as f64;
            } else {
                hw -= fall * d_here;
            }
            let mut e = 0.0f32;
            let want = if hc >= hw {
                let barrier = (h_next.min(hc) - hw).max(0.0);
                let room = (p.capacity as f64 - s).max(0.0) as f32;
                if barrier > 0.0 && room > 0.0 && p.erosion > 0.0 {
                    // Walk down the layers: each gives at most its thickness of
                    // min(R·q, room) times the share of the request still unmet.
                    let q = p.erosion * barrier;
                    let (mut unmet, mut got) = (1.0f32, 0.0f32);
                    for (k, &r) in sus.iter().enumerate() {
                        let t = thick(k, c);
                        if t <= 0.0 {
                            continue;
                        }
                        let want = unmet * (r * q).min(room);
                        if want <= 0.0 {
                            break;
                        }
                        let give = want.min(t);
                        got += give;
                        if give >= want {
                            break;
                        }
                        unmet *= 1.0 - give / want;
                    }
                    e = got.min(room);
                    s += e as f64;
                }
                hw = hc;
                if h_next > hc && p.windward_deposition > 0.0 {
                    let frac = (p.windward_deposition * (h_next - hc) / (d_next * talus)).min(1.0);
                    (s * frac as f64) as f32
                } else {
                    0.0
                }
            } else {
                (s * p.shadow_deposition as f64) as f32
            };
            let rest = (h_next + d_next * talus - (hc - e)).max(0.0);
            let mut dep = take(&mut s, want.min(rest));
            let mut hn = hc - e + dep;
            if !first {
                let mut excess = prev_h - hn - d_here * talus;
                if excess > 0.0 {
                    let fill = take(&mut s, excess);
                    dep += fill;
                    hn += fill;
                    excess -= fill;
                    if excess > 0.0 {
                        let pc = cells[i - 1].1;
                        let [pe, pd] = change[pc];
                        let slide = (0.5 * excess).min(loose(pc) - pe + pd);
                        if slide > 0.0 {
                            let from_d = slide.min(pd);
                            change[pc] = [pe + (slide - from_d), pd - from_d];
                            eroded += slide as f64;
                            dep += slide;
                            hn += slide;
                        }
                    }
                }
            }
            if next.is_none() && closed {
                // A closed edge is a wall: all the wind still carries settles here.
                let wall = take(&mut s, f32::INFINITY);
                dep += wall;
            }
            change[c] = [e, dep];
            eroded += e as f64;
            deposited += dep as f64;
            prev_h = hn;
            if next.is_none() {
                lost += s;
            }
        }
    }
    // Apply: the loss from the top layer down, the gain into layer 0.
    let mut ts: Vec<Vec<f32>> = (0..nl).map(|k| layers.thickness(k).to_vec()).collect();
    for (c, &[e, d]) in change.iter().enumerate() {
        if e == 0.0 && d == 0.0 {
            continue;
        }
        let mut left = e;
        for t in ts.iter_mut() {
            if left <= 0.0 {
                break;
            }
            let take = left.min(t[c]);
            t[c] -= take;
            left -= take;
        }
        if let Some(t0) = ts.first_mut() {
            t0[c] += d;
        }
        surface[c] = (surface[c] as f64 + d as f64 - e as f64) as f32;
    }
    let names: Vec<(String, Vec<f32>)> = ts
        .into_iter()
        .enumerate()
        .map(|(k, t)| (format!("layer{k}"), t))
        .collect();
    *layers = Layers::new(names, w * h).unwrap();
    (eroded, deposited, lost, on)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn wind_matches_the_line_by_line_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(2009);
    for case in 0..150u64 {
        let (w, h) = (rng.random_range(1..140usize), rng.random_range(1..140usize));
        let nl = rng.random_range(0..4usize);
        let direction_deg = if case % 5 == 0 {
            45.0 * rng.random_range(0..8) as f32
        } else {
            rng.random_range(-400.0..400.0)
        };
        let relief = rng.random_range(0.5..20.0);
        let mut surface: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                relief * ((x * 0.3).sin() + (y * 0.2).cos()) + rng.random_range(0.0..relief * 0.3)
            })
            .collect();
        let ls: Vec<(String, Vec<f32>)> = (0..nl)
            .map(|k| {
                let max = rng.random_range(0.1..3.0);
                (format!("layer{k}"), random_thickness(&mut rng, w * h, max))
            })
            .collect();
        let layers0 = Layers::new(ls, w * h).unwrap();
        for (i, z) in surface.iter_mut().enumerate() {
            *z += layers0.total(i);
        }
        // Some materials wind-proof (resistance 1), the others anywhere in [0, 1).
        let mats: Vec<MaterialProps> = (0..=nl)
            .map(|_| MaterialProps {
                wind_resistance: if rng.random_bool(0.25) {
                    1.0
                } else {
                    rng.random_range(0.0..1.0)
                },
                ..Default::default()
            })
            .collect();
        let params = wind::Params {
            direction_deg,
            fall_angle_deg: rng.random_range(0.0..45.0),
            erosion: rng.random_range(0.0..0.5),
            wind_talus_deg: rng.random_range(5.0..80.0),
            capacity: rng.random_range(0.0..2.0),
            windward_deposition: rng.random_range(0.0..1.0),
            shadow_deposition: rng.random_range(0.0..1.0),
            borders: if case % 2 == 0 {
                wind::Borders::Open
            } else {
                wind::Borders::Closed
            },
            influx: 0.0,
        };
        // Through open borders, every other case's wind arrives carrying up to its capacity.
        let mut params = params;
        if case % 4 == 0 {
            params.influx = params.capacity * rng.random_range(0.0..=1.0f32);
        }
        let grid = Grid::new(w, h, rng.random_range(0.5..20.0)).unwrap();
        let (mut s_ref, mut l_ref) = (surface.clone(), layers0.clone());
        let mut reports = Vec::new();
        for _ in 0..4 {
            reports.push(reference_step(grid, &params, &mut s_ref, &mut l_ref, &mats));
        }
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (mut s, mut l) = (surface.clone(), layers0.clone());
            let mut wd = Wind::new(grid, params).unwrap();
            for (step, &(e, d, lost, on)) in reports.iter().enumerate() {
                let r = pool
                    .install(|| wd.step(&mut TerrainMut::new(&mut s, &mut l), &mats))
                    .unwrap();
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-30;
                assert!(
                    close(r.eroded, e)
                        && close(r.deposited, d)
                        && close(r.blown_off, lost)
                        && close(r.blown_on, on),
                    "case {case} step {step}: {r:?} vs reference ({e}, {d}, {lost}, {on})"
                );
            }
            let what = format!(
                "case {case}: {w}x{h}, {nl} layers, wind {direction_deg}°, {:?} borders, \
                 {threads} threads",
                params.borders
            );
            assert!(bits(&s) == bits(&s_ref), "{what}: surface differs");
            for k in 0..nl {
                assert!(
                    bits(l.thickness(k)) == bits(l_ref.thickness(k)),
                    "{what}: layer {k} differs"
                );
            }
        }
    }
}
