//! Hydraulic erosion (pipe model): conservation, rest, symmetry, the dam break against
//! Ritter's solution, rills along the slope, hard rock against soft, determinism across
//! thread counts and errors that name the field.

use crate::support::on_threads;
use orogen_core::eroders::hydraulic::{
    Borders, CapacityLaw, Hydraulic, Params, Rain, Source, StepReport,
};
use orogen_core::state::{Layers, MaterialProps, SimState, TerrainMut};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn sum64(v: &[f32]) -> f64 {
    v.iter().map(|&x| x as f64).sum()
}

fn soluble(d: f32) -> MaterialProps {
    MaterialProps {
        dissolubility: d,
        ..MaterialProps::default()
    }
}

/// No rain, no evaporation, closed borders.
fn quiet() -> Params {
    Params {
        rain: Rain::None,
        evaporation: 0.0,
        ..Params::default()
    }
}

/// Runs `steps` steps of a one-material terrain; returns the reports.
fn run(
    grid: Grid,
    params: Params,
    surface: &mut [f32],
    sim: &mut SimState,
    steps: usize,
) -> Vec<StepReport> {
    let mut hy = Hydraulic::new(grid, params, 1).unwrap();
    let mut layers = Layers::none();
    let mut t = TerrainMut::new(surface, &mut layers);
    (0..steps)
        .map(|_| hy.step(&mut t, sim, &[soluble(1.0)]).unwrap())
        .collect()
}

#[test]
fn closed_borders_conserve_water_and_material() {
    conserve_water_and_material(Params {
        capacity: 0.5,
        dissolve: 0.3,
        deposit: 0.3,
        ..quiet()
    });
}

#[test]
fn closed_borders_conserve_water_and_material_with_friction() {
    conserve_water_and_material(Params {
        capacity: 2.0,
        dissolve: 0.3,
        deposit: 0.3,
        chezy: Some(30.0),
        capacity_law: CapacityLaw::StreamPower,
        ..quiet()
    });
}

fn conserve_water_and_material(params: Params) {
    let (w, h) = (32, 32);
    let grid = Grid::new(w, h, 1.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut b: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            1.0 + 0.3 * (x / 5.0).sin() * (y / 7.0).cos() + 0.02 * x + rng.random::<f32>() * 0.05
        })
        .collect();
    let b0 = b.clone();
    // A heap of water in one corner sloshes over the bumps.
    let water: Vec<f32> = (0..w * h)
        .map(|i| if i % w < 12 && i / w < 12 { 1.0 } else { 0.1 })
        .collect();
    let mut sim = SimState {
        water_depth: Some(water),
        ..SimState::default()
    };
    let w0 = sum64(sim.water_depth.as_ref().unwrap());
    let m0 = sum64(&b);
    let reports = run(grid, params, &mut b, &mut sim, 1000);
    let w1 = sum64(sim.water_depth.as_ref().unwrap());
    let m1 = sum64(&b) + sum64(sim.sediment.as_ref().unwrap());
    let moved: f64 = b.iter().zip(&b0).map(|(a, c)| (a - c).abs() as f64).sum();
    let max_speed = reports.iter().fold(0.0f32, |m, r| m.max(r.max_speed));
    println!(
        "water {w0} -> {w1} (rel {:.2e}); material {m0} -> {m1} (rel {:.2e}); \
         |Δb| summed {moved:.4} m; max speed {max_speed:.3} m/s",
        (w1 - w0).abs() / w0,
        (m1 - m0).abs() / m0
    );
    assert!(max_speed > 0.1, "the water must move");
    assert!(
        moved > 1e-3 * m0,
        "the test needs erosion to happen: {moved}"
    );
    assert!((w1 - w0).abs() <= 1e-6 * w0, "water {w0} -> {w1}");
    assert!((m1 - m0).abs() <= 1e-5 * m0, "material {m0} -> {m1}");
    for r in &reports {
        assert_eq!(r.water_lost_m3, 0.0);
        assert_eq!(r.sediment_lost_m3, 0.0);
    }
}

#[test]
fn lake_at_rest_stays_at_rest() {
    let (w, h) = (32, 32);
    let grid = Grid::new(w, h, 1.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    // Bed heights in 1/64 m steps, so the water surface b + (2 − b) is exactly 2 m in f32.
    let mut b: Vec<f32> = (0..w * h)
        .map(|_| rng.random_range(0..64) as f32 / 64.0)
        .collect();
    let b0 = b.clone();
    let mut sim = SimState {
        water_depth: Some(b.iter().map(|&z| 2.0 - z).collect()),
        ..SimState::default()
    };
    let params = Params {
        capacity: 1.0,
        dissolve: 0.5,
        ..quiet()
    };
    let reports = run(grid, params, &mut b, &mut sim, 1000);
    let vmax = reports.iter().fold(0.0f32, |m, r| m.max(r.max_speed));
    println!("lake at rest: max speed {vmax:e}");
    assert!(vmax < 1e-6, "max speed {vmax}");
    assert_eq!(b, b0, "nothing erodes");
    assert!(sim.sediment.unwrap().iter().all(|&s| s == 0.0));
}

#[test]
fn a_column_of_water_spreads_equally_to_its_four_neighbours() {
    let n = 9;
    let grid = Grid::new(n, n, 1.0).unwrap();
    let c = grid.index(4, 4);
    let mut water = vec![0.0f32; n * n];
    water[c] = 1.0;
    let mut sim = SimState {
        water_depth: Some(water),
        ..SimState::default()
    };
    let mut b = vec![0.0f32; n * n];
    run(grid, quiet(), &mut b, &mut sim, 1);
    let f = sim.flux.as_ref().unwrap()[c];
    println!("fluxes out of the column (L, R, T, B): {f:?}");
    assert!(f[0] > 0.0);
    for v in f {
        assert!((v - f[0]).abs() <= 1e-6 * f[0], "{f:?}");
    }
    // After more steps the water stays symmetric under the grid's mirrors and transpose.
    run(grid, quiet(), &mut b, &mut sim, 20);
    let d = sim.water_depth.as_ref().unwrap();
    let scale = d.iter().fold(0.0f32, |m, &v| m.max(v));
    for y in 0..n {
        for x in 0..n {
            let v = d[grid.index(x, y)];
            for u in [
                d[grid.index(n - 1 - x, y)],
                d[grid.index(x, n - 1 - y)],
                d[grid.index(y, x)],
            ] {
                assert!((u - v).abs() <= 1e-6 * scale, "({x}, {y}): {v} vs {u}");
            }
        }
    }
}

#[test]
fn dam_break_front_moves_like_ritter() {
    // A 1 m column of water on a dry flat bed, released at t = 0. Ritter: the wet/dry
    // front runs at 2·sqrt(g·h0). Pipes of cross-section l·h0 give the pipe model the
    // gravity-wave speed sqrt(g·h0) of that depth.
    let (w, l, h0) = (600, 1.0f32, 1.0f32);
    let x0 = 100usize;
    let grid = Grid::new(w, 1, l).unwrap();
    let params = Params {
        dt: 0.01,
        pipe_area_m2: Some(l * h0),
        capacity: 0.0,
        ..quiet()
    };
    let mut sim = SimState {
        water_depth: Some((0..w).map(|x| if x < x0 { h0 } else { 0.0 }).collect()),
        ..SimState::default()
    };
    let mut b = vec![0.0f32; w];
    let mut hy = Hydraulic::new(grid, params.clone(), 1).unwrap();
    let mut layers = Layers::none();
    let mut t = TerrainMut::new(&mut b, &mut layers);
    let g = params.gravity;
    let mut worst = 0.0f64;
    for (k, steps) in [(1, 500), (2, 500), (3, 500)] {
        for _ in 0..steps {
            hy.step(&mut t, &mut sim, &[soluble(0.0)]).unwrap();
        }
        let time = hy.steps() as f32 * params.dt;
        let d = sim.water_depth.as_ref().unwrap();
        // The front: the last cell holding more than 1 mm.
        let front = d.iter().rposition(|&v| v > 1e-3 * h0).unwrap();
        let got = (front as f32 + 0.5 - x0 as f32) * l;
        let ritter = 2.0 * (g * h0).sqrt() * time;
        let rel = (got - ritter) / ritter;
        println!(
            "check {k}: t = {time:.1} s, front {got:.1} m from the dam, Ritter {ritter:.1} m, \
             relative error {rel:+.3}"
        );
        worst = worst.max((got / ritter).ln().abs() as f64);
        assert!(
            front < w - 1,
            "the front must not reach the wall before the check"
        );
    }
    assert!(worst < 2f64.ln(), "front speed off by more than a factor 2");
}

/// Orientation (radians, in [0, π)) of the features of `e` by the structure tensor: the
/// direction perpendicular to the dominant gradient. Also the coherence in [0, 1].
fn feature_orientation(e: &[f32], w: usize, h: usize) -> (f64, f64) {
    let (mut jxx, mut jyy, mut jxy) = (0.0f64, 0.0f64, 0.0f64);
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let gx = (e[y * w + x + 1] - e[y * w + x - 1]) as f64 * 0.5;
            let gy = (e[(y + 1) * w + x] - e[(y - 1) * w + x]) as f64 * 0.5;
            jxx += gx * gx;
            jyy += gy * gy;
            jxy += gx * gy;
        }
    }
    let grad = 0.5 * (2.0 * jxy).atan2(jxx - jyy);
    let feature = (grad + std::f64::consts::FRAC_PI_2).rem_euclid(std::f64::consts::PI);
    let root = ((jxx - jyy).powi(2) + 4.0 * jxy * jxy).sqrt();
    (feature, root / (jxx + jyy).max(1e-300))
}

/// Rain on a plane of soft material falling 0.1 m per metre towards `angle_deg` (0 = +x,
/// 90 = +y) with 1 cm of noise: the erosion's dominant orientation (structure tensor),
/// after a high-pass, lies within 10° of downslope away from the borders.
fn rills_follow_a_slope_towards(angle_deg: f64) {
    let (w, h) = (96, 96);
    let grid = Grid::new(w, h, 1.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (dx, dy) = (angle_deg.to_radians().cos(), angle_deg.to_radians().sin());
    // Distance downslope of each cell, from the highest corner.
    let along = |i: usize| (i % w) as f64 * dx + (i / w) as f64 * dy;
    let top = (0..w * h).map(along).fold(f64::INFINITY, f64::min);
    let mut b: Vec<f32> = (0..w * h)
        .map(|i| (-0.1 * (along(i) - top)) as f32 + 20.0 + 0.01 * rng.random::<f32>())
        .collect();
    let b0 = b.clone();
    let params = Params {
        rain: Rain::Uniform { rate_m_per_s: 2e-3 },
        evaporation: 0.02,
        borders: Borders::Open,
        // Bed friction and the stream-power capacity: see the module's "Friction and
        // rills" (with the thesis's law and frictionless pipes the plane erodes as a sheet).
        chezy: Some(30.0),
        capacity_law: CapacityLaw::StreamPower,
        capacity: 1.0,
        dissolve: 0.2,
        deposit: 0.05,
        ..Params::default()
    };
    let mut sim = SimState::default();
    run(grid, params, &mut b, &mut sim, 8000);
    // Net surface change, less its mean at each distance downslope (erosion grows
    // downslope; the rills are what varies across the slope).
    let raw: Vec<f32> = b.iter().zip(&b0).map(|(a, c)| a - c).collect();
    // High-pass: the erosion less its mean over the 9×9 cells around (the rills are the
    // small-scale part; erosion also grows downslope and towards the corner that drains
    // the longest paths).
    let r = 4i64;
    let e: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let (mut s, mut n) = (0.0f64, 0.0f64);
            for yy in (y - r).max(0)..=(y + r).min(h as i64 - 1) {
                for xx in (x - r).max(0)..=(x + r).min(w as i64 - 1) {
                    s += raw[yy as usize * w + xx as usize] as f64;
                    n += 1.0;
                }
            }
            (raw[i] as f64 - s / n) as f32
        })
        .collect();
    let total: f64 = b.iter().zip(&b0).map(|(a, c)| (c - a) as f64).sum();
    // Away from the open borders, which drain every edge cell whatever the slope.
    let m = 12;
    let (cw, ch) = (w - 2 * m, h - 2 * m);
    let inner: Vec<f32> = (0..cw * ch)
        .map(|k| e[(k / cw + m) * w + k % cw + m])
        .collect();
    let (theta, coherence) = feature_orientation(&inner, cw, ch);
    let deg = theta.to_degrees();
    let diff = (deg - angle_deg).rem_euclid(180.0);
    let off = diff.min(180.0 - diff);
    println!(
        "slope towards {angle_deg}°: net erosion {total:.3} m·cells; rill orientation \
         {deg:.1}°, {off:.1}° off, coherence {coherence:.2}"
    );
    assert!(total > 0.0, "the plane must erode");
    assert!(
        off <= 10.0,
        "rills run {off:.1}° off the slope towards {angle_deg}°"
    );
}

// Seen at full size (the high-passed erosion as an image): with friction and the
// stream-power capacity a branching network of rills grows headwards from the foot of the
// slope and, by 8000 steps (400 s), covers most of the plane; at 30° its channels run at
// the slope's angle, not along the pipes. Five seeds gave 0.1–5.2° off at 0° and 30°, one
// 7.8° at 30°. This test fails without either: with the thesis's capacity law no rills form
// (46° off at 0°), and frictionless ones at 30° are pulled 12° towards the pipes.
#[test]
fn rills_follow_the_slope() {
    rills_follow_a_slope_towards(0.0);
}

#[test]
fn rills_follow_a_slope_across_the_grid() {
    // Off the pipes' axes: the four-pipe model must not pull rills onto the grid.
    rills_follow_a_slope_towards(30.0);
}

/// Bed friction: rain on a plane reaches steady sheet flow, where the water's speed is
/// Chézy's `C·sqrt(d·S)` for its depth `d` and the slope `S` of its surface.
#[test]
fn steady_sheet_flow_follows_chezy() {
    let (w, h) = (96, 48);
    let grid = Grid::new(w, h, 1.0).unwrap();
    let slope = 0.05f32;
    let mut b: Vec<f32> = (0..w * h).map(|i| 10.0 - slope * (i % w) as f32).collect();
    let chezy = 30.0f32;
    let params = Params {
        rain: Rain::Uniform { rate_m_per_s: 1e-3 },
        evaporation: 0.0,
        borders: Borders::Open,
        capacity: 0.0,
        chezy: Some(chezy),
        ..Params::default()
    };
    let mut sim = SimState::default();
    run(grid, params, &mut b, &mut sim, 8000);
    let d = sim.water_depth.as_ref().unwrap();
    let v = sim.velocity.as_ref().unwrap();
    let y = h / 2;
    let mut worst = 0.0f32;
    for x in 30..w - 10 {
        let i = y * w + x;
        let surface = |j: usize| b[j] + d[j];
        let s = (surface(i - 1) - surface(i + 1)) / 2.0;
        let expect = chezy * (d[i] * s).sqrt();
        let err = (v[i].length() / expect - 1.0).abs();
        if x % 10 == 0 {
            println!(
                "x {x}: depth {:.4} m, surface slope {s:.4}, speed {:.4} m/s, Chézy {expect:.4}",
                d[i],
                v[i].length()
            );
        }
        worst = worst.max(err);
    }
    println!("largest relative error {worst:.4}");
    assert!(worst < 0.05, "speed off Chézy's law by {worst}");
}

#[test]
fn hard_rock_erodes_slower_than_soft() {
    // A plane falling towards +y; the left half's top is 2 m of soft rock, the right
    // half's 2 m of hard rock (two layers of complementary thickness), over hard bedrock.
    let (w, h) = (64, 64);
    let grid = Grid::new(w, h, 1.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut b: Vec<f32> = (0..w * h)
        .map(|i| 10.0 + 0.1 * (h - 1 - i / w) as f32 + 0.01 * rng.random::<f32>())
        .collect();
    let soft: Vec<f32> = (0..w * h)
        .map(|i| if i % w < w / 2 { 2.0 } else { 0.0 })
        .collect();
    let hard: Vec<f32> = soft.iter().map(|&s| 2.0 - s).collect();
    let mut layers =
        Layers::new(vec![("soft".into(), soft), ("hard".into(), hard)], w * h).unwrap();
    let materials = [soluble(1.0), soluble(0.1), soluble(0.1)];
    let b0 = b.clone();
    let params = Params {
        rain: Rain::Uniform { rate_m_per_s: 2e-3 },
        evaporation: 0.02,
        borders: Borders::Open,
        capacity: 0.2,
        // Dissolving slowly keeps the load under capacity (detachment-limited), where the
        // material, not the water, sets the rate.
        dissolve: 0.002,
        deposit: 0.2,
        ..Params::default()
    };
    let mut hy = Hydraulic::new(grid, params, 2).unwrap();
    let mut sim = SimState::default();
    let mut t = TerrainMut::new(&mut b, &mut layers);
    for _ in 0..800 {
        hy.step(&mut t, &mut sim, &materials).unwrap();
    }
    let (mut soft_loss, mut hard_loss) = (0.0f64, 0.0f64);
    for i in 0..w * h {
        let loss = (b0[i] - b[i]) as f64;
        if i % w < w / 2 {
            soft_loss += loss;
        } else {
            hard_loss += loss;
        }
    }
    println!(
        "soft half lost {soft_loss:.4} m·cells, hard half {hard_loss:.4} (ratio {:.1})",
        soft_loss / hard_loss
    );
    assert!(soft_loss > 0.0);
    assert!(
        soft_loss >= 3.0 * hard_loss.max(0.0),
        "soft {soft_loss} hard {hard_loss}"
    );
}

/// Every byte of a layered run with drops, a source and open borders.
fn layered_run_bytes(threads: usize) -> Vec<u32> {
    on_threads(threads, || {
        let (w, h) = (48, 40);
        let grid = Grid::new(w, h, 2.0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        let mut b: Vec<f32> = (0..w * h)
            .map(|i| 5.0 + 0.05 * (i % w) as f32 + rng.random::<f32>())
            .collect();
        let mut layers = Layers::new(
            (0..3)
                .map(|k| {
                    (
                        format!("l{k}"),
                        (0..w * h).map(|_| rng.random::<f32>() * 0.3).collect(),
                    )
                })
                .collect(),
            w * h,
        )
        .unwrap();
        let materials = [soluble(0.9), soluble(0.5), soluble(0.2), soluble(0.1)];
        let params = Params {
            rain: Rain::Drops {
                power: 0.05,
                volume_m3: 0.2,
            },
            sources: vec![Source {
                x_m: 30.0,
                y_m: 40.0,
                radius_m: 5.0,
                rate_m3_per_s: 1.0,
                every_step: true,
            }],
            borders: Borders::Open,
            capacity: 0.3,
            ..Params::default()
        };
        let mut hy = Hydraulic::new(grid, params, 99).unwrap();
        let mut sim = SimState::default();
        let mut t = TerrainMut::new(&mut b, &mut layers);
        let mut out = Vec::new();
        for _ in 0..60 {
            let r = hy.step(&mut t, &mut sim, &materials).unwrap();
            for v in [
                r.water_added_m3,
                r.water_lost_m3,
                r.sediment_lost_m3,
                r.water_total_m3,
                r.sediment_total_m3,
            ] {
                let bits = v.to_bits();
                out.extend([bits as u32, (bits >> 32) as u32]);
            }
            out.push(r.max_speed.to_bits());
        }
        out.extend(t.surface.iter().map(|v| v.to_bits()));
        for k in 0..t.layers.len() {
            out.extend(t.layers.thickness(k).iter().map(|v| v.to_bits()));
        }
        out.extend(sim.water_depth.unwrap().iter().map(|v| v.to_bits()));
        out.extend(sim.sediment.unwrap().iter().map(|v| v.to_bits()));
        out.extend(sim.flux.unwrap().iter().flatten().map(|v| v.to_bits()));
        out.extend(
            sim.velocity
                .unwrap()
                .iter()
                .flat_map(|v| [v.x.to_bits(), v.y.to_bits()]),
        );
        out
    })
}

#[test]
fn same_bytes_with_one_and_four_threads() {
    let one = layered_run_bytes(1);
    let four = layered_run_bytes(4);
    assert_eq!(one.len(), four.len());
    let first = one.iter().zip(&four).position(|(a, b)| a != b);
    assert_eq!(first, None, "first differing word {first:?}");
}

#[test]
fn bad_input_names_the_field() {
    let grid = Grid::new(16, 8, 1.0).unwrap();
    let f = "stages[1].Hydraulic";
    let source = |x_m: f32, rate: f32| Source {
        x_m,
        y_m: 2.0,
        radius_m: 1.0,
        rate_m3_per_s: rate,
        every_step: true,
    };
    let cases: Vec<(Params, &str)> = vec![
        (
            Params {
                sources: vec![source(3.0, 1.0), source(40.0, 1.0)],
                ..Params::default()
            },
            "stages[1].Hydraulic.sources[1]",
        ),
        (
            Params {
                sources: vec![source(3.0, -1.0)],
                ..Params::default()
            },
            "stages[1].Hydraulic.sources[0].rate_m3_per_s",
        ),
        (
            Params {
                rain: Rain::Uniform {
                    rate_m_per_s: -1e-3,
                },
                ..Params::default()
            },
            "stages[1].Hydraulic.rain.rate_m_per_s",
        ),
        (
            Params {
                rain: Rain::Drops {
                    power: f32::NAN,
                    volume_m3: 1.0,
                },
                ..Params::default()
            },
            "stages[1].Hydraulic.rain.power",
        ),
        (
            Params {
                dt: f32::NAN,
                ..Params::default()
            },
            "stages[1].Hydraulic.dt",
        ),
        (
            Params {
                dt: 5.0,
                ..Params::default()
            },
            "stages[1].Hydraulic.dt",
        ),
        (
            Params {
                evaporation: -0.1,
                ..Params::default()
            },
            "stages[1].Hydraulic.evaporation",
        ),
        (
            Params {
                deposit: f32::NAN,
                ..Params::default()
            },
            "stages[1].Hydraulic.deposit",
        ),
    ];
    for (p, want) in cases {
        let e = p.validate_on(&grid, f).unwrap_err().to_string();
        assert!(e.contains(&format!("`{want}`")), "{e} (wanted {want})");
        // The process checks the same on creation, naming the field without a prefix.
        let e = Hydraulic::new(grid, p, 0).err().unwrap().to_string();
        let bare = want.trim_start_matches("stages[1].Hydraulic.");
        assert!(e.contains(bare), "{e} (wanted {bare})");
    }
    // Materials: one per layer and bedrock, dissolubility in [0, 1].
    let mut hy = Hydraulic::new(grid, Params::default(), 0).unwrap();
    let mut b = vec![0.0f32; grid.len()];
    let mut layers = Layers::none();
    let mut t = TerrainMut::new(&mut b, &mut layers);
    let mut sim = SimState::default();
    let e = hy.step(&mut t, &mut sim, &[]).unwrap_err().to_string();
    assert!(e.contains("materials"), "{e}");
    let e = hy
        .step(&mut t, &mut sim, &[soluble(f32::NAN)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("materials[0].dissolubility"), "{e}");
}

/// Open borders are outlets at a fixed level: rain on a rough dome drains off every edge,
/// the interior erodes, and the border cells keep their beds. (Their outside neighbour's
/// water surface is their own bed, so a border that eroded lowered its own base level and
/// was dug, step after step, into a trench tens of metres deep: a wall of pits along the
/// edge of the map in Godot.)
#[test]
fn open_borders_hold_their_beds() {
    let (w, h) = (48, 40);
    let grid = Grid::new(w, h, 1.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut b: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = (
                (i % w) as f32 - w as f32 / 2.0,
                (i / w) as f32 - h as f32 / 2.0,
            );
            3.0 - 0.05 * (x * x + y * y).sqrt() + 0.05 * rng.random::<f32>()
        })
        .collect();
    let b0 = b.clone();
    let params = Params {
        rain: Rain::Uniform { rate_m_per_s: 2e-3 },
        evaporation: 0.01,
        borders: Borders::Open,
        capacity: 0.5,
        dissolve: 0.3,
        deposit: 0.3,
        ..Params::default()
    };
    let mut sim = SimState::default();
    let reports = run(grid, params, &mut b, &mut sim, 600);
    let left: f64 = reports.iter().map(|r| r.water_lost_m3).sum();
    assert!(left > 0.0, "water drains through the open borders");
    let border = |i: usize| {
        let (x, y) = (i % w, i / w);
        x == 0 || y == 0 || x + 1 == w || y + 1 == h
    };
    let mut eroded = 0.0f64;
    for i in 0..w * h {
        if border(i) {
            assert_eq!(b[i], b0[i], "border cell {i} keeps its bed");
        } else {
            eroded += (b0[i] - b[i]).max(0.0) as f64;
        }
    }
    assert!(eroded > 0.01, "the interior erodes ({eroded} m summed)");
    let carried: f64 = reports.iter().map(|r| r.sediment_lost_m3).sum();
    assert!(
        carried > 0.0,
        "sediment still leaves through the held border cells"
    );
}
