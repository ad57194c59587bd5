//! Rivers that leave the map, carried on over the skirt (issue #37): a river cut off at
//! the border showed where the map ends (graph's, paint's and strata's rivers stopped on a
//! straight line). Each river whose mouth lies on the border runs on outwards, turning
//! from its own direction to the border's normal and meandering a little, narrowing to
//! nothing over [`RUN_CELLS`], in the notch it cut in the border, which fills
//! in as it narrows. The skirt's vertices get the channel value the terrain's rivers are
//! drawn with (half width minus distance, metres: `grid_rivers::channel_field`).

use crate::field::Grid;
use crate::math;
use crate::rasterise::River;

/// How far a river runs on beyond the border, cells (at most [`RUN_EXTENTS`] of the map):
/// a few of its meanders. (Carried a quarter map out, graph's rivers ran on as long straight
/// canals, the skirt's rings too far apart for meanders the size of the map's.)
pub const RUN_CELLS: f32 = 12.0;

/// The most a river runs on beyond the border, in map extents.
pub const RUN_EXTENTS: f32 = 0.15;

/// How far rivers run on beyond the border of a map `extent` metres across, of cells
/// `cell` metres across: [`RUN_CELLS`], at most [`RUN_EXTENTS`] of the map.
pub fn run_m(cell: f32, extent: f32) -> f32 {
    (RUN_EXTENTS * extent).min(RUN_CELLS * cell)
}

/// A river's mouth is on the border when it lies within this many cells of it.
const MOUTH_CELLS: f32 = 1.5;

/// A river running on over the skirt, in the skirt's frame (metres, x east and z south from
/// the map's middle).
#[derive(Clone, Debug, PartialEq)]
pub struct Outflow {
    /// From the mouth outwards.
    pub path: Vec<[f32; 2]>,
    /// Half width per point, metres: the mouth's, narrowing to half of it at the end.
    pub half: Vec<f32>,
    /// How much the water shows per point: 1 at the mouth, fading out over the last three
    /// quarters of the path. (Narrowed to nothing, the rivers ended in blue needles.)
    pub fade: Vec<f32>,
    /// How deep the river's notch in the border is, metres, below the border round it.
    pub depth: f32,
    /// Width of the banks over which the notch's carve fades out, metres.
    pub bank: f32,
    /// The path's bounding box (least corner, greatest corner).
    pub bounds: [[f32; 2]; 2],
}

/// The rivers of `rivers` (on `grid`, metres from its first cell) whose mouths lie on the
/// border, carried on outwards: `border_h` is the height at each of `ring`'s border points
/// (cell coordinates and outward direction, as the skirt has them), `min_half_m` the
/// smallest half width the terrain draws a river with.
pub fn outflows(
    grid: Grid,
    ring: &[([f32; 2], [f32; 2])],
    border_h: &[f32],
    rivers: &[River],
    min_half_m: f32,
) -> Vec<Outflow> {
    let cell = grid.dx().max(grid.dy());
    let (w, h) = (
        (grid.width - 1) as f32 * grid.dx(),
        (grid.height - 1) as f32 * grid.dy(),
    );
    let run = run_m(cell, w.max(h));
    if ring.is_empty() || border_h.len() != ring.len() || run <= 0.0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (k, r) in rivers.iter().enumerate() {
        let n = r.points.len();
        if n < 2 || r.width.len() != n {
            continue;
        }
        let q = [r.points[n - 1][0] as f32, r.points[n - 1][1] as f32];
        let width = r.width[n - 1];
        if !(q[0].is_finite() && q[1].is_finite() && width.is_finite()) {
            continue;
        }
        // The nearest side, and its outward normal.
        let gaps = [q[0], w - q[0], q[1], h - q[1]];
        let (side, gap) =
            gaps.iter()
                .enumerate()
                .fold((0, f32::MAX), |a, (i, &g)| if g < a.1 { (i, g) } else { a });
        if gap > MOUTH_CELLS * cell {
            continue;
        }
        let normal = [[-1.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 1.0]][side];
        let half0 = (0.5 * width).max(min_half_m);
        let turn = turn_from(r, q, normal, cell);
        let (path, half, fade) = path(
            [q[0] - 0.5 * w, q[1] - 0.5 * h],
            normal,
            turn,
            half0,
            run,
            cell,
            k as u32,
        );
        let bounds = path
            .iter()
            .fold([[f32::MAX; 2], [f32::MIN; 2]], |[lo, hi], p| {
                [
                    [lo[0].min(p[0]), lo[1].min(p[1])],
                    [hi[0].max(p[0]), hi[1].max(p[1])],
                ]
            });
        out.push(Outflow {
            path,
            half,
            fade,
            depth: notch_depth(grid, ring, border_h, q, half0),
            bank: (3.0 * half0).max(4.0 * cell),
            bounds,
        });
    }
    out
}

/// The angle (radians, at most 1 either way) from the border's `normal` to the heading of
/// `river` over its last three cells, to its mouth `q`.
fn turn_from(river: &River, q: [f32; 2], normal: [f32; 2], cell: f32) -> f32 {
    let pts = &river.points;
    let mut j = pts.len() - 1;
    while j > 0 {
        j -= 1;
        let (ex, ey) = (q[0] - pts[j][0] as f32, q[1] - pts[j][1] as f32);
        if math::hypot(ex, ey) >= 3.0 * cell {
            break;
        }
    }
    let (ux, uy) = (q[0] - pts[j][0] as f32, q[1] - pts[j][1] as f32);
    if math::hypot(ux, uy) == 0.0 {
        return 0.0;
    }
    let mut a = math::atan2(uy, ux) - math::atan2(normal[1], normal[0]);
    while a > std::f32::consts::PI {
        a -= std::f32::consts::TAU;
    }
    while a < -std::f32::consts::PI {
        a += std::f32::consts::TAU;
    }
    a.clamp(-1.0, 1.0)
}

/// How deep a river of half width `half` cuts the border at its mouth `q` (metres from
/// the grid's first cell): the border round the mouth (three cells beyond the bed either
/// side) above the bed's lowest sample, of `border_h` round `ring`.
fn notch_depth(
    grid: Grid,
    ring: &[([f32; 2], [f32; 2])],
    border_h: &[f32],
    q: [f32; 2],
    half: f32,
) -> f32 {
    let (dx, dy) = (grid.dx(), grid.dy());
    let at = |i: usize| {
        let p = ring[i].0;
        (p[0] * dx - q[0]).powi(2) + (p[1] * dy - q[1]).powi(2)
    };
    let mouth = (0..ring.len())
        .min_by(|&a, &b| at(a).total_cmp(&at(b)))
        .unwrap_or(0);
    let m = ring.len();
    let span = |reach: usize| {
        let reach = reach.min((m - 1) / 2);
        (0..=2 * reach).map(move |o| (mouth + m + o - reach) % m)
    };
    let bed_cells = (half / dx.max(dy)).ceil() as usize;
    let bed = span(bed_cells)
        .map(|i| border_h[i])
        .fold(f32::MAX, f32::min);
    let around = span(bed_cells + 3);
    let round = around.clone().map(|i| border_h[i]).sum::<f32>() / around.count() as f32;
    if bed.is_finite() && round.is_finite() {
        (round - bed).max(0.0)
    } else {
        0.0
    }
}

/// A river's path from its mouth `start` (the skirt's frame) out to `run` metres, with
/// its half width and fade per point: in steps growing with the distance (as the skirt's
/// rings do), turning from `turn` off the border's `normal` onto it over a few cells and
/// meandering on a wavelength that grows with the distance too (`seed` picks the meanders).
fn path(
    start: [f32; 2],
    normal: [f32; 2],
    turn: f32,
    half0: f32,
    run: f32,
    cell: f32,
    seed: u32,
) -> (Vec<[f32; 2]>, Vec<f32>, Vec<f32>) {
    let heading_n = math::atan2(normal[1], normal[0]);
    let mut p = start;
    let (mut path, mut half, mut fade) = (vec![p], vec![half0], vec![1.0]);
    let mut s = 0.0f32;
    let wl = 4.0 * cell;
    while s < run {
        let ds = (0.5 * cell).max(0.1 * s).min(run - s);
        s += ds;
        let t = wl * math::ln(1.0 + s / wl);
        let wander = 0.6 * crate::bake::rolling::rolling(t, 97.0 * seed as f32, wl, 23);
        // (At most 1.2 rad off the normal: every step leads outwards.)
        let heading = heading_n + (turn * math::exp(-s / (4.0 * cell)) + wander).clamp(-1.2, 1.2);
        let (sin, cos) = math::sin_cos(heading);
        p = [p[0] + ds * cos, p[1] + ds * sin];
        path.push(p);
        let t = (s / run).min(1.0);
        half.push(half0 * (1.0 - 0.5 * t));
        let x = ((t - 0.25) / 0.75).clamp(0.0, 1.0);
        fade.push(1.0 - x * x * (3.0 - 2.0 * x));
    }
    (path, half, fade)
}

/// What the rivers leave at a point of the skirt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct At {
    /// The largest channel value over the rivers (half width minus distance, metres; at
    /// least the floor asked for).
    pub channel: f32,
    /// How much that river's water shows there (its [`Outflow::fade`]), 0 to 1.
    pub fade: f32,
    /// The deepest carve, metres (≥ 0): each notch's depth, filling in as the river fades
    /// and easing out across its banks.
    pub carve: f32,
}

/// What `flows` leave at `p` (the skirt's frame), the channel at least `floor`.
pub fn at(flows: &[Outflow], p: [f32; 2], floor: f32) -> At {
    let mut out = At {
        channel: floor,
        fade: 0.0,
        carve: 0.0,
    };
    for f in flows {
        let reach = f.half[0] + f.bank - floor.min(0.0);
        let [lo, hi] = f.bounds;
        if p[0] < lo[0] - reach
            || p[0] > hi[0] + reach
            || p[1] < lo[1] - reach
            || p[1] > hi[1] + reach
        {
            continue;
        }
        for (k, seg) in f.path.windows(2).enumerate() {
            let (a, b) = (seg[0], seg[1]);
            let lo = [a[0].min(b[0]) - reach, a[1].min(b[1]) - reach];
            let hi = [a[0].max(b[0]) + reach, a[1].max(b[1]) + reach];
            if p[0] < lo[0] || p[0] > hi[0] || p[1] < lo[1] || p[1] > hi[1] {
                continue;
            }
            let (ex, ez) = (b[0] - a[0], b[1] - a[1]);
            let len2 = ex * ex + ez * ez;
            let t = if len2 > 0.0 {
                (((p[0] - a[0]) * ex + (p[1] - a[1]) * ez) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let dist = math::hypot(p[0] - (a[0] + t * ex), p[1] - (a[1] + t * ez));
            let half = f.half[k] + (f.half[k + 1] - f.half[k]) * t;
            let fade = f.fade[k] + (f.fade[k + 1] - f.fade[k]) * t;
            if half - dist > out.channel {
                out.channel = half - dist;
                out.fade = fade;
            }
            // The notch fills in as the river fades; across, it is full over the bed and
            // eases out over the banks.
            let x = ((dist - half) / f.bank).clamp(0.0, 1.0);
            let across = 1.0 - x * x * (3.0 - 2.0 * x);
            out.carve = out.carve.max(f.depth * fade * across);
        }
    }
    out
}

/// `world`'s rivers as [`Look::rivers`](super::skirt::Look) takes them: its river curves
/// and the smallest half width the terrain draws them with (the default curve parameters',
/// as the binding's river display draws them); None without curves.
pub fn of(world: &crate::World) -> Option<(&[River], f32)> {
    let rivers = world.rivers.as_deref()?;
    let grid = world.grid();
    let min_half = crate::rasterise::grid_rivers::RiverCurveParams::default().min_half_width
        * grid.dx().max(grid.dy());
    Some((rivers, min_half))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bake::ground_weights::{Ground, GroundInputs, GroundParams};
    use crate::bake::skirt::{skirt_with, Edge, Look};

    fn river(points: &[[f64; 3]], width: f32) -> River {
        River {
            points: points.to_vec(),
            discharge: vec![1.0; points.len()],
            width: vec![width; points.len()],
            order: 1,
        }
    }

    /// A plain at 100 m, 65 × 49 cells of 50 m, with a river 100 m wide leaving it
    /// westwards along row 24 in a notch 5 m deep, one entering the map from the north at
    /// 45°, and one that ends inside the map. The first two run on over the skirt in their
    /// notches, fading out by 480 m (0.15 of the map) out; the third leaves nothing there.
    #[test]
    fn rivers_leaving_the_map_run_on_over_the_skirt_and_fade_away() {
        let grid = Grid::new(65, 49, 50.0).unwrap();
        let mut h = vec![100.0f32; grid.len()];
        for x in 0..41 {
            for y in 23..=25 {
                h[y * 65 + x] = if y == 24 { 95.0 } else { 97.5 };
            }
        }
        let west: Vec<[f64; 3]> = (0..=40)
            .rev()
            .map(|x| [x as f64 * 50.0, 1200.0, 95.0])
            .collect();
        // From (50, 20) cells north-west to the north border at (30, 0).
        let north: Vec<[f64; 3]> = (0..=20)
            .map(|k| [(50 - k) as f64 * 50.0, (20 - k) as f64 * 50.0, 99.0])
            .collect();
        let inside: Vec<[f64; 3]> = (30..=60)
            .rev()
            .map(|x| [x as f64 * 50.0, 500.0, 99.0])
            .collect();
        let rivers = vec![
            river(&west, 100.0),
            river(&north, 60.0),
            river(&inside, 100.0),
        ];
        let inputs = GroundInputs {
            grid,
            heights: &h,
            drainage: None,
            sediment: None,
        };
        let look = Look {
            inputs,
            ground: Ground {
                params: GroundParams::default(),
                paint: None,
            },
            colours: None,
            rivers: Some((&rivers, 37.5)),
        };
        let s = skirt_with(grid, &h, Edge::Skirt, 0.0, Some(&look));
        let without = Look {
            rivers: None,
            ..look
        };
        let plain = skirt_with(grid, &h, Edge::Skirt, 0.0, Some(&without));
        assert!(plain.channel.is_empty());
        assert_eq!(s.channel.len(), s.positions.len());
        assert_eq!(s.rings, plain.rings);
        let m = s.positions.len() / s.rings;
        let (hx, hz) = (1600.0f32, 1200.0f32);
        let run = run_m(50.0, 3200.0);
        // On the border at the west mouth, the channel is the river's half width.
        let mouth = (m..2 * m)
            .find(|&k| (s.positions[k][0] + hx).abs() < 1e-3 && s.positions[k][2].abs() < 1e-3)
            .expect("a border vertex at the west mouth");
        assert!(
            (s.channel[mouth][0] - 50.0).abs() < 1e-3,
            "{:?}",
            s.channel[mouth]
        );
        assert_eq!(s.channel[mouth][1], 1.0);
        for r in 1..s.rings {
            let ring = r * m..(r + 1) * m;
            let d = (s.positions[ring.start..ring.end]
                .iter()
                .map(|p| (-hx - p[0]).max(p[0] - hx).max(-hz - p[2]).max(p[2] - hz))
                .fold(f32::MIN, f32::max))
            .max(0.0);
            let wet: Vec<usize> = ring
                .clone()
                .filter(|&k| s.channel[k][0] > 0.0 && s.channel[k][1] > 0.0)
                .collect();
            if d > run + 50.0 {
                assert!(wet.is_empty(), "ring {r} ({d} m out) still has a river");
                continue;
            }
            // Every wet vertex lies beyond the west or the north border, near its mouth.
            for &k in &wet {
                let p = s.positions[k];
                let near = |q: [f32; 2]| math::hypot(p[0] - q[0], p[2] - q[1]) <= run + 100.0;
                let west_of = p[0] <= -hx + 1e-3 && near([-hx, 0.0]);
                let north_of = p[2] <= -hz + 1e-3 && near([30.0 * 50.0 - hx, -hz]);
                assert!(west_of || north_of, "ring {r}: a river at {p:?}");
            }
            let on_west = |k: &usize| s.positions[*k][0] < -hx;
            if d > 0.0 && d <= 0.25 * run {
                // Both rivers show.
                assert!(wet.iter().any(on_west), "ring {r}: no west river");
                assert!(wet.iter().any(|k| !on_west(k)), "ring {r}: no north river");
            }
            if d > 0.0 && d <= 0.6 * run {
                // The west one lies in its notch (3.9 m under the border round it), carved
                // into the skirt about as deep as its water shows there (never deeper than
                // the notch); ten cells to either side
                // the skirt is as it is without rivers.
                let bed = ring
                    .clone()
                    .filter(on_west)
                    .max_by(|a, b| s.channel[*a][0].total_cmp(&s.channel[*b][0]))
                    .unwrap();
                let carved = plain.positions[bed][1] - s.positions[bed][1];
                let want = 3.9 * s.channel[bed][1];
                assert!(
                    carved > 0.8 * want && carved < 3.9 && carved > 1.0,
                    "ring {r}: the bed carved {carved} m, its notch's {want} m"
                );
                let side = |dz: f32| {
                    let z = s.positions[bed][2] + dz;
                    ring.clone()
                        .filter(|&k| s.positions[k][0] < -hx)
                        .min_by(|&a, &b| {
                            (s.positions[a][2] - z)
                                .abs()
                                .total_cmp(&(s.positions[b][2] - z).abs())
                        })
                        .unwrap()
                };
                for k in [side(-500.0), side(500.0)] {
                    assert_eq!(
                        s.positions[k], plain.positions[k],
                        "ring {r}: carved beside"
                    );
                }
            }
        }
        // The path runs outwards all the way, turning from 45° onto the north normal.
        let ring = crate::bake::skirt::border_ring(grid);
        let flows = outflows(grid, &ring, &vec![100.0; ring.len()], &rivers, 37.5);
        assert_eq!(flows.len(), 2);
        for f in &flows {
            for w in f.path.windows(2) {
                let out_w = w[1][0] < w[0][0] && f.path[0][0] < -hx + 1.0;
                let out_n = w[1][1] < w[0][1] && f.path[0][1] < -hz + 1.0;
                assert!(out_w || out_n, "a step inwards: {w:?}");
            }
        }
        let north = flows.iter().find(|f| f.path[0][1] < -hz + 1.0).unwrap();
        let heading = |a: [f32; 2], b: [f32; 2]| math::atan2(b[1] - a[1], b[0] - a[0]);
        let first = heading(north.path[0], north.path[1]);
        let n = north.path.len();
        let last = heading(north.path[n - 2], north.path[n - 1]);
        let up = -std::f32::consts::FRAC_PI_2;
        assert!(
            (first - (up - std::f32::consts::FRAC_PI_4)).abs() < 0.45,
            "{first}"
        );
        assert!((last - up).abs() < 0.35, "{last}");
    }
}
