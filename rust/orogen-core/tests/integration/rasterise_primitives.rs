//! The primitive-based heightfield and the rivers (Cordonnier 2016 §7) over a real eroded
//! graph: rivers never rise downstream in the output, lakes are flat, a finer raster agrees
//! with a coarser one, ridges make sharp crests on the basin divides and leave the valley
//! floors alone, Strahler orders hold, bad input is refused, and the bytes do not depend on
//! the thread count.

use crate::support::on_threads;
use glam::DVec2;
use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::field::Grid;
use orogen_core::flow::{accumulate, water_surface, FlowRouter, SinkMode};
use orogen_core::mesh::points::jittered_grid;
use orogen_core::mesh::{Delaunay, NodeGraph};
use orogen_core::rasterise::{
    extract_rivers, primitives, PrimitiveParams, PrimitiveSurface, River, RiverParams,
    StreamSurface,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A stream surface's data, owned.
struct Fixture {
    graph: NodeGraph,
    triangles: Vec<[u32; 3]>,
    heights: Vec<f32>,
    receivers: Vec<u32>,
    discharge: Vec<f32>,
    water_level: Vec<f32>,
}

impl Fixture {
    fn surface(&self) -> StreamSurface<'_> {
        StreamSurface {
            graph: &self.graph,
            triangles: &self.triangles,
            heights: &self.heights,
            receivers: &self.receivers,
            discharge: &self.discharge,
            water_level: &self.water_level,
        }
    }

    /// Routes `heights` over the graph (lakes carved), drainage area as discharge, lake
    /// spill levels as water level.
    fn routed(graph: NodeGraph, triangles: Vec<[u32; 3]>, heights: Vec<f32>) -> Fixture {
        let mut router = FlowRouter::with_neighbourhood(graph.clone(), None).unwrap();
        let mut h = heights.clone();
        let fg = router.route(&mut h, SinkMode::Carve).unwrap().clone();
        let mut discharge = vec![0.0; graph.len()];
        accumulate(&fg, graph.areas(), &mut discharge);
        let mut water_level = vec![0.0; graph.len()];
        water_surface(&fg, &heights, 0.0, &mut water_level);
        Fixture {
            graph,
            triangles,
            heights,
            receivers: fg.receivers,
            discharge,
            water_level,
        }
    }

    /// A jittered grid of `side²` nodes 100 m apart eroded by stream power for `steps`.
    fn eroded(side: usize, steps: usize, seed: u64) -> Fixture {
        let points = jittered_grid(side, side, 100.0, 0.35, seed).unwrap();
        let del = Delaunay::new(&points).unwrap();
        let graph = del.to_graph().unwrap();
        let n = graph.len();
        let params = Params {
            m: 0.5,
            n: 1.0,
            lakes: SinkMode::Carve,
        };
        let inputs = Inputs {
            k: vec![2e-5; n],
            uplift: vec![1e-3; n],
            precipitation: None,
        };
        let mut solver =
            StreamPower::new(graph.clone(), None, &params, inputs, false, "sp").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut h: Vec<f32> = (0..n).map(|_| rng.random::<f32>()).collect();
        for _ in 0..steps {
            solver.step_heights(&mut h, 1e4).unwrap();
        }
        Fixture::routed(graph, del.triangles().to_vec(), h)
    }

    /// A tilted plane with a closed depression (a lake) in the middle, not eroded.
    fn with_lake() -> Fixture {
        let side = 60;
        let points = jittered_grid(side, side, 100.0, 0.35, 3).unwrap();
        let del = Delaunay::new(&points).unwrap();
        let graph = del.to_graph().unwrap();
        let centre = DVec2::splat(2950.0);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let heights: Vec<f32> = graph
            .positions()
            .iter()
            .map(|p| {
                let d2 = p.distance_squared(centre) / (900.0f64 * 900.0);
                (50.0 + 0.02 * p.x - 40.0 * (-d2).exp() + rng.random::<f64>()) as f32
            })
            .collect();
        Fixture::routed(graph, del.triangles().to_vec(), heights)
    }

    /// The raster grid covering the domain with `size²` pixels.
    fn grid(&self, size: usize) -> Grid {
        let hi = self
            .graph
            .positions()
            .iter()
            .fold(0.0f64, |a, p| a.max(p.x).max(p.y));
        Grid::new(size, size, (hi / (size - 1) as f64) as f32).unwrap()
    }
}

fn defaults() -> (RiverParams, PrimitiveParams) {
    (RiverParams::default(), PrimitiveParams::default())
}

/// Points along a river: its points and `k − 1` between each pair.
fn along(r: &River, k: usize) -> Vec<[f64; 2]> {
    let mut out = Vec::new();
    for w in r.points.windows(2) {
        for j in 0..k {
            let t = j as f64 / k as f64;
            out.push([
                w[0][0] + (w[1][0] - w[0][0]) * t,
                w[0][1] + (w[1][1] - w[0][1]) * t,
            ]);
        }
    }
    let last = r.points.last().unwrap();
    out.push([last[0], last[1]]);
    out
}

#[test]
fn rivers_never_rise_downstream_in_the_output() {
    let f = Fixture::eroded(80, 150, 11);
    let s = f.surface();
    let (rp, pp) = defaults();
    let rivers = extract_rivers(&s, &rp).unwrap();
    assert!(rivers.len() > 20, "{} rivers", rivers.len());
    let surface = PrimitiveSurface::new(&s, &rivers, &pp, 7).unwrap();

    // The raster is the surface at the pixel positions, bit for bit.
    let grid = f.grid(200);
    let raster = primitives(&s, &rivers, grid, &pp, 7).unwrap();
    for y in (0..grid.height).step_by(7) {
        for x in (0..grid.width).step_by(3) {
            let h = surface.height(x as f64 * grid.dx() as f64, y as f64 * grid.dy() as f64);
            assert_eq!(
                raster[grid.index(x, y)].to_bits(),
                h.to_bits(),
                "pixel ({x}, {y})"
            );
        }
    }

    let checked = check_rivers_descend(&surface, &rivers);
    println!("{} rivers, {checked} points checked", rivers.len());
}

/// Asserts that the beds and the water surface (the ground, or a lake's level over its bed)
/// never rise downstream along every river, at its points and 7 points between each pair;
/// returns how many points were checked.
fn check_rivers_descend(surface: &PrimitiveSurface, rivers: &[River]) -> usize {
    let mut checked = 0;
    for (k, r) in rivers.iter().enumerate() {
        for w in r.points.windows(2) {
            assert!(
                w[1][2] <= w[0][2],
                "river {k}: bed rises {} -> {}",
                w[0][2],
                w[1][2]
            );
        }
        // The water along the river: the surface's water, and where a stretch of the
        // channel just upstream of a lake lies below the lake's level, that level (the lake
        // backs up into the channel it is fed by: walking upstream from a lake, the level
        // carries on while the ground stays below it).
        let points = along(r, 8);
        let ground: Vec<f32> = points.iter().map(|q| surface.height(q[0], q[1])).collect();
        let mut water: Vec<f32> = points
            .iter()
            .map(|q| surface.water_surface(q[0], q[1]))
            .collect();
        let mut backwater = f32::NEG_INFINITY;
        let mut backed = 0;
        for j in (0..points.len()).rev() {
            if water[j] > ground[j] {
                backwater = water[j];
            } else if ground[j] < backwater {
                water[j] = backwater;
                backed += 1;
            } else {
                backwater = f32::NEG_INFINITY;
            }
        }
        let mut prev = f32::INFINITY;
        for (j, (q, &h)) in points.iter().zip(&water).enumerate() {
            assert!(
                h <= prev + 1e-4,
                "river {k} (order {}): water rises {prev} -> {h} at ({:.2}, {:.2}); ground \
                 {} -> {}",
                r.order,
                q[0],
                q[1],
                ground[j.saturating_sub(1)],
                ground[j]
            );
            prev = h;
            checked += 1;
        }
        if backed > 0 {
            println!("river {k}: {backed} points backed up by a lake");
        }
    }
    checked
}

#[test]
fn lakes_hold_flat_water_over_their_beds() {
    let f = Fixture::with_lake();
    let s = f.surface();
    let (rp, pp) = defaults();
    let rivers = extract_rivers(&s, &rp).unwrap();
    let grid = f.grid(240);
    let raster = primitives(&s, &rivers, grid, &pp, 3).unwrap();
    let surface = PrimitiveSurface::new(&s, &rivers, &pp, 3).unwrap();
    let mut deepest = 0.0f32;
    let lake = |v: u32| f.water_level[v as usize] > f.heights[v as usize];
    let pos = f.graph.positions();
    let mut pixels = 0;
    for t in f.triangles.iter().filter(|t| t.iter().all(|&v| lake(v))) {
        let level = f.water_level[t[0] as usize];
        let (a, b, c) = (pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
        let lo = a.min(b).min(c);
        let hi = a.max(b).max(c);
        let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
        for y in (lo.y / dy).ceil() as usize..=((hi.y / dy).floor() as usize).min(grid.height - 1) {
            for x in
                (lo.x / dx).ceil() as usize..=((hi.x / dx).floor() as usize).min(grid.width - 1)
            {
                let p = DVec2::new(x as f64 * dx, y as f64 * dy);
                let det = (b - a).perp_dot(c - a);
                let l1 = (p - a).perp_dot(c - a) / det;
                let l2 = (b - a).perp_dot(p - a) / det;
                if l1 < 0.0 || l2 < 0.0 || l1 + l2 > 1.0 {
                    continue;
                }
                let h = raster[grid.index(x, y)];
                assert!(
                    h <= level + 1e-3,
                    "pixel ({x}, {y}) in the lake stands above the water: {h}, level {level}"
                );
                assert!(
                    (surface.water_surface(p.x, p.y) - level).abs() <= 1e-3,
                    "pixel ({x}, {y}): the lake's water is not flat at its level {level}"
                );
                deepest = deepest.max(level - h);
                pixels += 1;
            }
        }
    }
    assert!(pixels > 500, "only {pixels} lake pixels");
    // The bed is the ground under the water, not a floor laid at the level.
    assert!(deepest > 1.0, "the lake is {deepest} m deep at most");
    // The rivers through the lake still never rise downstream.
    let on_lake = rivers
        .iter()
        .flat_map(|r| &r.points)
        .filter(|q| (0..f.heights.len()).any(|i| lake(i as u32) && f.water_level[i] as f64 == q[2]))
        .count();
    assert!(on_lake > 0, "no river crosses the lake");
    check_rivers_descend(&surface, &rivers);
    println!("{pixels} lake pixels flat");
}

/// Mean of each 2×2 block of a `2w × 2h` raster.
fn downsample(fine: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut out = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let at = |dx: usize, dy: usize| fine[(2 * y + dy) * 2 * w + 2 * x + dx] as f64;
            out[y * w + x] = ((at(0, 0) + at(1, 0) + at(0, 1) + at(1, 1)) / 4.0) as f32;
        }
    }
    out
}

#[test]
fn a_finer_raster_downsampled_matches() {
    let f = Fixture::eroded(70, 150, 5);
    let s = f.surface();
    let (rp, pp) = defaults();
    let rivers = extract_rivers(&s, &rp).unwrap();
    // 13.5 m pixels, about a seventh of the node spacing. At 256² (27 m) the mean holds
    // (0.9 % of relief) but the largest block difference is 2.004 %, on a ridge crest.
    let size = 512;
    let coarse_grid = f.grid(size);
    let fine_grid = Grid::new(2 * size, 2 * size, coarse_grid.dx() / 2.0).unwrap();
    let coarse = primitives(&s, &rivers, coarse_grid, &pp, 1).unwrap();
    let (lo, hi) = coarse
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let relief = hi - lo;
    assert!(relief > 50.0, "relief {relief}");

    // The 2× raster in the same frame: its 2×2 blocks are centred a quarter of a coarse
    // pixel off the coarse pixels, so on average they differ by slope × dx/4.
    let fine = primitives(&s, &rivers, fine_grid, &pp, 1).unwrap();
    let down = downsample(&fine, size, size);
    let mean = coarse
        .iter()
        .zip(&down)
        .map(|(a, b)| (a - b).abs() as f64)
        .sum::<f64>()
        / coarse.len() as f64;

    // The 2× raster with its blocks centred on the coarse pixels (the surface evaluated at
    // the 2× pixel positions, shifted by a quarter of a coarse pixel; the raster is the
    // surface at the pixel positions, bit for bit, see the river test).
    let surface = PrimitiveSurface::new(&s, &rivers, &pp, 1).unwrap();
    let (dx, dy) = (coarse_grid.dx() as f64, coarse_grid.dy() as f64);
    let mut centred = vec![0.0f32; 4 * size * size];
    for y in 0..2 * size {
        for x in 0..2 * size {
            centred[y * 2 * size + x] =
                surface.height((x as f64 - 0.5) * 0.5 * dx, (y as f64 - 0.5) * 0.5 * dy);
        }
    }
    let down_centred = downsample(&centred, size, size);
    let worst = coarse
        .iter()
        .zip(&down_centred)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "relief {relief} m; same frame: mean difference {mean:.3} m; centred blocks: largest \
         difference {worst:.3} m"
    );
    assert!(
        mean <= 0.01 * relief as f64,
        "mean difference {mean} m over relief {relief} m"
    );
    // At a sharp crest or crease of slope s a 2×2 block's mean sits s·dx/4 off its
    // centre, so the largest difference shrinks with the pixel (4.6 m of 355 m when
    // written, at the grid's edge).
    assert!(
        worst <= 0.02 * relief,
        "difference {worst} m over relief {relief} m"
    );
}

/// Random points (not a lattice), random heights, routed: rivers and raster.
fn random_fixture(seed: u64) -> Fixture {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.random_range(300..1500);
    let points: Vec<DVec2> = (0..n)
        .map(|_| DVec2::new(rng.random::<f64>() * 5000.0, rng.random::<f64>() * 4000.0))
        .collect();
    let del = Delaunay::new(&points).unwrap();
    let graph = del.to_graph().unwrap();
    let heights: Vec<f32> = points
        .iter()
        .map(|p| (0.02 * p.x + 0.01 * p.y + 30.0 * rng.random::<f64>()) as f32)
        .collect();
    Fixture::routed(graph, del.triangles().to_vec(), heights)
}

#[test]
fn strahler_orders_and_finite_heights_on_random_graphs() {
    for seed in 0..12u64 {
        let f = random_fixture(seed);
        let s = f.surface();
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
        let rp = RiverParams {
            smoothing: rng.random_range(0..4),
            ..Default::default()
        };
        let rivers = extract_rivers(&s, &rp).unwrap();
        assert!(!rivers.is_empty(), "seed {seed}: no river");
        let key = |q: &[f64; 3]| (q[0].to_bits(), q[1].to_bits());
        let ends: std::collections::HashSet<_> = rivers
            .iter()
            .map(|r| key(r.points.last().unwrap()))
            .collect();
        // No two rivers share a stretch: their interior points are all distinct.
        let mut interior = std::collections::HashSet::new();
        for r in &rivers {
            for q in &r.points[1..r.points.len() - 1] {
                assert!(
                    interior.insert(key(q)),
                    "seed {seed}: two rivers share a point"
                );
            }
        }
        for (k, r) in rivers.iter().enumerate() {
            // A reach starting where others end starts at a confluence: two or more of the
            // highest order k meet there and it is of order k + 1.
            let meeting: Vec<u32> = rivers
                .iter()
                .filter(|o| key(o.points.last().unwrap()) == key(&r.points[0]))
                .map(|o| o.order)
                .collect();
            if let Some(&top) = meeting.iter().max() {
                assert!(
                    meeting.iter().filter(|&&o| o == top).count() >= 2,
                    "seed {seed}: river {k} starts where one river of order {top} ends"
                );
                assert_eq!(
                    r.order,
                    top + 1,
                    "seed {seed}: river {k} after a confluence"
                );
            }
            // A reach nothing flows into at its start is a leaf: order 1.
            if !ends.contains(&key(&r.points[0])) {
                assert_eq!(r.order, 1, "seed {seed}: leaf river {k}");
            }
            assert!(r.order >= 1);
            // Its mouth is an outlet or a point of a river of higher order.
            let mouth = key(r.points.last().unwrap());
            for (j, o) in rivers.iter().enumerate() {
                if j != k
                    && o.points[..o.points.len() - 1]
                        .iter()
                        .any(|q| key(q) == mouth)
                {
                    assert!(
                        o.order > r.order,
                        "seed {seed}: river {k} (order {}) flows into river {j} (order {})",
                        r.order,
                        o.order
                    );
                }
            }
            for w in r.points.windows(2) {
                assert!(w[1][2] <= w[0][2], "seed {seed}: bed rises");
            }
            assert!(r.width.iter().all(|w| w.is_finite() && *w > 0.0));
        }
        // The raster reaches beyond the hull on every side.
        let grid = Grid::new(64, 52, 90.0).unwrap();
        let raster = primitives(&s, &rivers, grid, &PrimitiveParams::default(), seed).unwrap();
        assert!(raster.iter().all(|v| v.is_finite()), "seed {seed}: NaN");
    }
}

fn error_text<T>(r: orogen_core::error::Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_input_names_the_field() {
    let f = random_fixture(1);
    let s = f.surface();
    let grid = Grid::new(16, 16, 100.0).unwrap();
    let pp = PrimitiveParams::default();
    let rivers = extract_rivers(&s, &RiverParams::default()).unwrap();

    for (params, field) in [
        (
            RiverParams {
                smoothing: 99,
                ..Default::default()
            },
            "smoothing",
        ),
        (
            RiverParams {
                width_coeff: f32::NAN,
                ..Default::default()
            },
            "width_coeff",
        ),
        (
            RiverParams {
                threshold: -1.0,
                ..Default::default()
            },
            "threshold",
        ),
    ] {
        let e = error_text(extract_rivers(&s, &params));
        assert!(e.contains(field), "{e}");
    }
    for (params, field) in [
        (
            PrimitiveParams {
                bank_ratio: 0.0,
                ..pp
            },
            "bank_ratio",
        ),
        (PrimitiveParams { detail: 2.0, ..pp }, "detail"),
        (
            PrimitiveParams {
                depth_ratio: f32::INFINITY,
                ..pp
            },
            "depth_ratio",
        ),
        (
            PrimitiveParams {
                valley_radius: 0.0,
                ..pp
            },
            "valley_radius",
        ),
        (PrimitiveParams { ridges: 1.5, ..pp }, "primitives.ridges"),
        (
            PrimitiveParams {
                ridge_threshold: 0.0,
                ..pp
            },
            "primitives.ridge_threshold",
        ),
    ] {
        let e = error_text(primitives(&s, &rivers, grid, &params, 0));
        assert!(e.contains(field), "{e}");
    }

    let short = &f.heights[1..];
    let e = error_text(extract_rivers(
        &StreamSurface {
            heights: short,
            ..s
        },
        &RiverParams::default(),
    ));
    assert!(e.contains("heights"), "{e}");
    let e = error_text(primitives(
        &StreamSurface {
            discharge: &f.discharge[1..],
            ..s
        },
        &rivers,
        grid,
        &pp,
        0,
    ));
    assert!(e.contains("discharge"), "{e}");
    let mut far = f.receivers.clone();
    far[3] = u32::MAX;
    let e = error_text(extract_rivers(
        &StreamSurface {
            receivers: &far,
            ..s
        },
        &RiverParams::default(),
    ));
    assert!(e.contains("receivers[3]"), "{e}");
    // A cycle: two nodes receiving each other.
    let mut cycle = f.receivers.clone();
    let i = (0..cycle.len()).find(|&i| cycle[i] as usize != i).unwrap();
    let r = cycle[i] as usize;
    cycle[r] = i as u32;
    let e = error_text(extract_rivers(
        &StreamSurface {
            receivers: &cycle,
            ..s
        },
        &RiverParams::default(),
    ));
    assert!(e.contains("cycle"), "{e}");
    // The ridges' basins follow the receivers too.
    let e = error_text(primitives(
        &StreamSurface {
            receivers: &cycle,
            ..s
        },
        &rivers,
        grid,
        &pp,
        0,
    ));
    assert!(e.contains("cycle"), "{e}");
    let mut nan = f.water_level.clone();
    nan[5] = f32::NAN;
    let e = error_text(extract_rivers(
        &StreamSurface {
            water_level: &nan,
            ..s
        },
        &RiverParams::default(),
    ));
    assert!(e.contains("water_level[5]"), "{e}");
    let bad_tri = vec![[0u32, 1, 1_000_000]];
    let e = error_text(primitives(
        &StreamSurface {
            triangles: &bad_tri,
            ..s
        },
        &rivers,
        grid,
        &pp,
        0,
    ));
    assert!(e.contains("triangles[0]"), "{e}");
    let empty = Grid { width: 0, ..grid };
    let e = error_text(primitives(&s, &rivers, empty, &pp, 0));
    assert!(e.contains("grid"), "{e}");
    let mut broken = rivers.clone();
    broken[0].width.pop();
    let e = error_text(primitives(&s, &broken, grid, &pp, 0));
    assert!(e.contains("rivers[0]"), "{e}");
}

#[test]
fn same_bytes_whatever_the_thread_count() {
    let f = Fixture::eroded(50, 100, 2);
    let s = f.surface();
    let (rp, pp) = defaults();
    let rivers = extract_rivers(&s, &rp).unwrap();
    let grid = f.grid(300);
    let run =
        |threads: usize| on_threads(threads, || primitives(&s, &rivers, grid, &pp, 42).unwrap());
    let one = run(1);
    let four = run(4);
    assert!(one
        .iter()
        .zip(&four)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    // And the seed matters.
    let other = primitives(&s, &rivers, grid, &pp, 43).unwrap();
    assert!(one.iter().zip(&other).any(|(a, b)| a != b));
}

#[test]
fn the_raster_is_the_surface_at_each_pixel() {
    // The raster walks rows starting each pixel's triangle search from the last pixel's
    // triangle; `height` searches from scratch. Same bytes.
    for f in [
        Fixture::eroded(50, 100, 2),
        Fixture::with_lake(),
        random_fixture(5),
    ] {
        let s = f.surface();
        let (rp, pp) = defaults();
        let rivers = extract_rivers(&s, &rp).unwrap();
        let grid = f.grid(257);
        let raster = primitives(&s, &rivers, grid, &pp, 7).unwrap();
        let surface = PrimitiveSurface::new(&s, &rivers, &pp, 7).unwrap();
        for y in 0..grid.height {
            for x in 0..grid.width {
                let h = surface.height(x as f64 * grid.dx() as f64, y as f64 * grid.dy() as f64);
                assert_eq!(
                    raster[y * grid.width + x].to_bits(),
                    h.to_bits(),
                    "({x}, {y})"
                );
            }
        }
    }
}

/// Two parallel valleys 2 km apart (x = 1000 and 3000 m) draining south on a jittered
/// 100 m grid, hillslopes of slope 0.3 rising to the divide at x = 2000 m.
fn two_catchments() -> Fixture {
    let points = jittered_grid(41, 41, 100.0, 0.35, 8).unwrap();
    let del = Delaunay::new(&points).unwrap();
    let graph = del.to_graph().unwrap();
    let heights: Vec<f32> = graph
        .positions()
        .iter()
        .map(|p| (0.02 * p.y + 0.3 * (p.x - 1000.0).abs().min((p.x - 3000.0).abs())) as f32)
        .collect();
    Fixture::routed(graph, del.triangles().to_vec(), heights)
}

/// Distance from `p` to segment `a–b`.
fn to_segment(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    let ab = b - a;
    let t = if ab.length_squared() > 0.0 {
        ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + ab * t)
}

#[test]
fn ridges_make_sharp_crests_on_the_divide() {
    // Cordonnier et al. 2016 §7: ridges along basin boundaries.
    let f = two_catchments();
    let s = f.surface();
    let rivers = extract_rivers(&s, &RiverParams::default()).unwrap();
    let pp = PrimitiveParams {
        detail: 0.0,
        ridge_threshold: 0.05,
        ..Default::default()
    };
    let with = PrimitiveSurface::new(&s, &rivers, &pp, 1).unwrap();
    let without =
        PrimitiveSurface::new(&s, &rivers, &PrimitiveParams { ridges: 0.0, ..pp }, 1).unwrap();
    // The ridges between the two valleys' basins (not those along the domain's sides,
    // where the hull nodes are outlets of their own).
    let pos = f.graph.positions();
    let divide: Vec<[DVec2; 2]> = with
        .ridges()
        .filter(|(n, _)| {
            n.iter()
                .all(|&v| (pos[v as usize].x - 2000.0).abs() < 300.0)
        })
        .map(|(_, seg)| seg)
        .collect();
    assert!(divide.len() > 40, "{} divide segments", divide.len());
    let node_slope = 0.3;
    let (mut sharp_with, mut sharp_without) = (Vec::new(), Vec::new());
    for k in 0..13 {
        let y = 700.0 + 200.0 * k as f64;
        // The crest along a transect across the divide, every 2 m.
        let transect = |surface: &PrimitiveSurface| {
            let xs: Vec<f64> = (0..=500).map(|i| 1500.0 + 2.0 * i as f64).collect();
            let hs: Vec<f64> = xs.iter().map(|&x| surface.height(x, y) as f64).collect();
            let top = (0..hs.len())
                .max_by(|&a, &b| hs[a].total_cmp(&hs[b]).then(b.cmp(&a)))
                .unwrap();
            let x = xs[top];
            // Mean slopes over the quarter spacing each side of the crest.
            let h = |x: f64| surface.height(x, y) as f64;
            let left = (h(x) - h(x - 25.0)) / 25.0;
            let right = (h(x) - h(x + 25.0)) / 25.0;
            (x, h(x), left.min(right))
        };
        let (x, crest, sharp) = transect(&with);
        let (_, crest0, sharp0) = transect(&without);
        let gap = divide
            .iter()
            .map(|[a, b]| to_segment(DVec2::new(x, y), *a, *b))
            .fold(f64::INFINITY, f64::min);
        println!(
            "y {y}: crest at x {x:.0} ({gap:.1} m from a ridge), {crest:.1} m (without \
             ridges {crest0:.1} m); slopes within 25 m: {sharp:.3} (without {sharp0:.3})"
        );
        assert!(
            gap <= 100.0,
            "y {y}: the crest is {gap} m from the divide's ridges"
        );
        assert!(crest >= crest0, "y {y}: the ridge lowers the crest");
        sharp_with.push(sharp);
        sharp_without.push(sharp0);
    }
    // With ridges both flanks fall steeply right from the crest (measured along x: the
    // divide zigzags, so a transect may cross it at a slant); without, the crest is
    // rounded. Where a node stands on the divide its own rounded top can stay the crest,
    // so this holds in most transects, not all (8 of 13 when written).
    let steeper = sharp_with
        .iter()
        .zip(&sharp_without)
        .filter(|(a, b)| **a >= 1.5 * **b)
        .count();
    let mut sorted = sharp_with.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    assert!(
        median >= 0.4 * node_slope,
        "median flank slope {median} near the crest, the nodes' {node_slope}"
    );
    assert!(
        steeper * 2 > sharp_with.len(),
        "flanks 1.5 times steeper than without ridges in only {steeper} transects"
    );
}

#[test]
fn ridges_leave_the_valley_floors_alone() {
    for f in [Fixture::eroded(80, 150, 11), Fixture::with_lake()] {
        let s = f.surface();
        let (rp, pp) = defaults();
        let rivers = extract_rivers(&s, &rp).unwrap();
        let with = PrimitiveSurface::new(&s, &rivers, &pp, 7).unwrap();
        let without =
            PrimitiveSurface::new(&s, &rivers, &PrimitiveParams { ridges: 0.0, ..pp }, 7).unwrap();
        let max_q = f.discharge.iter().fold(0.0f32, |a, &q| a.max(q));
        let threshold = pp.ridge_threshold * max_q;
        let pos = f.graph.positions();
        let mut checked = 0;
        for (i, &r) in f.receivers.iter().enumerate() {
            let r = r as usize;
            if r == i || f.discharge[i] < threshold {
                continue;
            }
            for t in [0.25, 0.5, 0.75] {
                let q = pos[i] + (pos[r] - pos[i]) * t;
                let (a, b) = (with.height(q.x, q.y), without.height(q.x, q.y));
                assert!(
                    (a - b).abs() <= 1e-3,
                    "link {i} -> {r} at {t}: {a} with ridges, {b} without"
                );
                checked += 1;
            }
        }
        // And the ridges do raise the ground elsewhere.
        let grid = f.grid(200);
        let mut raised = 0.0f32;
        for y in 0..grid.height {
            for x in 0..grid.width {
                let (px, py) = (x as f64 * grid.dx() as f64, y as f64 * grid.dy() as f64);
                raised = raised.max(with.height(px, py) - without.height(px, py));
            }
        }
        println!("{checked} points on channel links unchanged; ridges raise up to {raised} m");
        assert!(checked > 300, "{checked} points");
        assert!(raised > 1.0, "ridges raise at most {raised} m");
    }
}

#[test]
fn divide_edges_part_different_reaches() {
    for (k, f) in [
        Fixture::eroded(60, 100, 3),
        Fixture::with_lake(),
        random_fixture(2),
    ]
    .into_iter()
    .enumerate()
    {
        let s = f.surface();
        let pp = PrimitiveParams {
            ridge_threshold: [0.002, 0.01, 0.05][k],
            ..Default::default()
        };
        let surface = PrimitiveSurface::new(&s, &[], &pp, 0).unwrap();
        let n = f.graph.len();
        let max_q = f.discharge.iter().fold(0.0f32, |a, &q| a.max(q));
        let channel =
            |i: usize| f.discharge[i] > 0.0 && f.discharge[i] >= pp.ridge_threshold * max_q;
        let mut donors = vec![0; n];
        for i in 0..n {
            if f.receivers[i] as usize != i && channel(i) {
                donors[f.receivers[i] as usize] += 1;
            }
        }
        // The reach each node drains into, walking its receivers: the first channel node
        // that is an outlet or drains into a junction (n for none).
        let reach = |mut i: usize| {
            for _ in 0..=n {
                let r = f.receivers[i] as usize;
                if channel(i) && (r == i || donors[r] >= 2) {
                    return i;
                }
                if r == i {
                    return n;
                }
                i = r;
            }
            panic!("the receivers hold a cycle");
        };
        let reaches: Vec<usize> = (0..n).map(reach).collect();
        let divides: std::collections::HashSet<[u32; 2]> = surface
            .ridges()
            .map(|(v, _)| [v[0].min(v[1]), v[0].max(v[1])])
            .collect();
        let (mut inside, mut across) = (0, 0);
        for t in &f.triangles {
            for e in 0..3 {
                let (a, b) = (t[e] as usize, t[(e + 1) % 3] as usize);
                let link = f.receivers[a] as usize == b || f.receivers[b] as usize == a;
                let expected = reaches[a] != reaches[b] && !link;
                let key = [a.min(b) as u32, a.max(b) as u32];
                assert_eq!(
                    divides.contains(&key),
                    expected,
                    "fixture {k}: edge {a}-{b}, reaches {} and {}",
                    reaches[a],
                    reaches[b]
                );
                if expected {
                    across += 1;
                } else {
                    inside += 1;
                }
            }
        }
        // Every divide is a Delaunay edge.
        for v in &divides {
            assert_ne!(reaches[v[0] as usize], reaches[v[1] as usize]);
        }
        println!("fixture {k}: {across} edge sides across divides, {inside} inside basins");
        assert!(
            across > 50 && inside > 50,
            "{across} across, {inside} inside"
        );
    }
}

/// Speed on a 100k-node graph at 4097² (run with `--release -- --ignored --nocapture`).
#[test]
#[ignore]
fn speed_100k_nodes_at_4097() {
    let f = Fixture::eroded(317, 30, 4);
    let s = f.surface();
    let (rp, mut pp) = defaults();
    if let Ok(d) = std::env::var("DETAIL") {
        pp.detail = d.parse().unwrap();
    }
    let t = std::time::Instant::now();
    let rivers = extract_rivers(&s, &rp).unwrap();
    let t_rivers = t.elapsed();
    let grid = f.grid(4097);
    let t = std::time::Instant::now();
    let raster = primitives(&s, &rivers, grid, &pp, 1).unwrap();
    let t_raster = t.elapsed();
    assert!(raster.iter().all(|v| v.is_finite()));
    println!(
        "{} nodes, {} rivers in {:.3} s; 4097² primitives in {:.2} s on {} threads",
        f.graph.len(),
        rivers.len(),
        t_rivers.as_secs_f64(),
        t_raster.as_secs_f64(),
        rayon::current_num_threads()
    );
}

/// Writes a hillshaded PNG of the primitive raster to `$PRIM_PNG` (a look at the result).
#[test]
#[ignore]
fn picture() {
    let Ok(path) = std::env::var("PRIM_PNG") else {
        return;
    };
    let f = if std::env::var("PRIM_LAKE").is_ok() {
        Fixture::with_lake()
    } else {
        Fixture::eroded(80, 150, 11)
    };
    let s = f.surface();
    let (mut rp, mut pp) = defaults();
    if let Ok(r) = std::env::var("PRIM_RIDGES") {
        pp.ridges = r.parse().unwrap();
    }
    if let Ok(t) = std::env::var("PRIM_RIDGE_THRESHOLD") {
        pp.ridge_threshold = t.parse().unwrap();
    }
    if let Ok(w) = std::env::var("PRIM_WIDTH") {
        rp.width_coeff = w.parse().unwrap();
    }
    let rivers = extract_rivers(&s, &rp).unwrap();
    let size = 1024;
    let grid = match std::env::var("PRIM_DX") {
        Ok(dx) => Grid::new(size, size, dx.parse().unwrap()).unwrap(),
        Err(_) => f.grid(size),
    };
    let h = primitives(&s, &rivers, grid, &pp, 7).unwrap();
    let d = grid.dx();
    let mut img = image::RgbImage::new(size as u32, size as u32);
    for y in 1..size - 1 {
        for x in 1..size - 1 {
            let gx = (h[grid.index(x + 1, y)] - h[grid.index(x - 1, y)]) / (2.0 * d);
            let gy = (h[grid.index(x, y + 1)] - h[grid.index(x, y - 1)]) / (2.0 * d);
            let n = glam::Vec3::new(-gx, -gy, 1.0).normalize();
            let shade = n.dot(glam::Vec3::new(-0.5, -0.5, 0.7).normalize()).max(0.0);
            let v = (shade * 255.0) as u8;
            img.put_pixel(x as u32, y as u32, image::Rgb([v, v, v]));
        }
    }
    img.save(path).unwrap();
}
