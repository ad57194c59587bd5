//! The stream graph on random points (Cordonnier et al. 2016, #9): Poisson-disc nodes,
//! isotropic flow, the steady state on the graph, the Graph domain of a recipe, the
//! heightfields made from it, and its errors.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::support::on_threads;
use glam::DVec2;
use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::field::Grid;
use orogen_core::flow::{FlowRouter, Neighbourhood, OutletParams, SinkMode};
use orogen_core::mesh::points::poisson_disc;
use orogen_core::mesh::{Delaunay, NodeGraph};
use orogen_core::rasterise::{gaussian, phong, StreamSurface};
use orogen_core::runner::{check_memory, run_recipe};
use orogen_core::{OrogenError, Recipe};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn graph_of(points: &[DVec2]) -> (NodeGraph, Vec<[u32; 3]>) {
    let d = Delaunay::new(points).unwrap();
    let g = d.to_graph().unwrap();
    let (_, t, _) = d.into_parts();
    (g, t)
}

#[test]
fn poisson_points_keep_their_spacing_and_cover_the_rectangle() {
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (w, h) = (
            rng.random_range(800.0..3000.0),
            rng.random_range(800.0..3000.0),
        );
        let r = rng.random_range(20.0..60.0);
        let pts = poisson_disc(w, h, r, seed).unwrap();
        // Brute force over a bin grid: no two points closer than r.
        let cell = r;
        let mut bins = std::collections::HashMap::<(i64, i64), Vec<usize>>::new();
        for (i, p) in pts.iter().enumerate() {
            assert!(
                p.x >= 0.0 && p.x <= w && p.y >= 0.0 && p.y <= h,
                "{p} outside"
            );
            bins.entry(((p.x / cell) as i64, (p.y / cell) as i64))
                .or_default()
                .push(i);
        }
        for (i, p) in pts.iter().enumerate() {
            let (bx, by) = ((p.x / cell) as i64, (p.y / cell) as i64);
            for nx in bx - 1..=bx + 1 {
                for ny in by - 1..=by + 1 {
                    for &j in bins.get(&(nx, ny)).map(|v| v.as_slice()).unwrap_or(&[]) {
                        if j != i {
                            let d = p.distance(pts[j]);
                            assert!(d >= r * (1.0 - 1e-12), "seed {seed}: {i}, {j} at {d} < {r}");
                        }
                    }
                }
            }
        }
        // Maximal: no empty disc of radius 2r fits inside (every point of a fine lattice
        // is within 2r of a sample).
        let step = r / 2.0;
        let mut y = 0.0;
        while y <= h {
            let mut x = 0.0;
            while x <= w {
                let q = DVec2::new(x, y);
                let (bx, by) = ((x / cell) as i64, (y / cell) as i64);
                let near = (bx - 2..=bx + 2).any(|nx| {
                    (by - 2..=by + 2).any(|ny| {
                        bins.get(&(nx, ny))
                            .is_some_and(|v| v.iter().any(|&j| pts[j].distance(q) < 2.0 * r))
                    })
                });
                assert!(near, "seed {seed}: a hole at {q}");
                x += step;
            }
            y += step;
        }
        // The hull is the rectangle, so the Voronoi areas add up to its area.
        let (g, _) = graph_of(&pts);
        let total = g.total_area();
        assert!(
            (total / (w * h) - 1.0).abs() < 1e-6,
            "seed {seed}: areas sum to {total}, the rectangle is {}",
            w * h
        );
        assert_eq!(
            pts,
            poisson_disc(w, h, r, seed).unwrap(),
            "same seed, same points"
        );
    }
}

/// χ² of `angles` (radians) over 36 equal bins.
fn chi2_36(angles: &[f64]) -> f64 {
    let mut bins = [0f64; 36];
    for &a in angles {
        let t = a.rem_euclid(std::f64::consts::TAU) / std::f64::consts::TAU;
        bins[((t * 36.0) as usize).min(35)] += 1.0;
    }
    let e = angles.len() as f64 / 36.0;
    bins.iter().map(|&o| (o - e) * (o - e) / e).sum()
}

/// Steepest-descent directions over white-noise heights, away from the outlets.
fn flow_angles<N: Neighbourhood>(nb: N, seed: u64, keep: impl Fn(DVec2) -> bool) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = nb.len();
    let h: Vec<f32> = (0..n).map(|_| rng.random_range(0.0..100.0)).collect();
    let mut router = FlowRouter::with_neighbourhood(nb, None).unwrap();
    router.steepest_descent(&h).unwrap();
    let g = router.graph();
    let nb = router.neighbourhood();
    (0..n)
        .filter(|&i| g.receivers[i] as usize != i && keep(nb.position(i)))
        .map(|i| {
            let d = nb.position(g.receivers[i] as usize) - nb.position(i);
            d.y.atan2(d.x)
        })
        .collect()
}

#[test]
fn flow_on_random_points_has_no_preferred_direction_where_d8_does() {
    // χ² with 35 degrees of freedom: p = 0.01 at 57.34.
    const CRITICAL: f64 = 57.34;
    let side = 9000.0;
    let pts = poisson_disc(side, side, 50.0, 3).unwrap();
    let (g, _) = graph_of(&pts);
    let inner = |p: DVec2| p.x > 200.0 && p.x < side - 200.0 && p.y > 200.0 && p.y < side - 200.0;
    let graph_angles = flow_angles(g, 4, inner);
    let chi_graph = chi2_36(&graph_angles);
    let grid = Grid::new(180, 180, 50.0).unwrap();
    let d8 = orogen_core::neighbourhood::RasterGrid::new(grid, &OutletParams::default().borders);
    let grid_angles = flow_angles(d8, 4, inner);
    let chi_grid = chi2_36(&grid_angles);
    println!(
        "graph: {} directions, χ² {chi_graph:.1}; D8: {} directions, χ² {chi_grid:.1}",
        graph_angles.len(),
        grid_angles.len()
    );
    assert!(graph_angles.len() > 12_000);
    assert!(
        chi_graph < CRITICAL,
        "graph flow is anisotropic: χ² {chi_graph}"
    );
    assert!(chi_grid > CRITICAL, "D8 should fail: χ² {chi_grid}");
}

/// Runs stream power to steady state on `g` with uniform `u`, `k` (n = 1, m = 0.5) and
/// steps of `dt` years from `h`: returns the heights.
fn steady(g: &NodeGraph, u: f32, k: f32, dt: f64, mut h: Vec<f32>) -> Vec<f32> {
    let n = g.len();
    let inputs = Inputs {
        k: vec![k; n],
        uplift: vec![u; n],
        precipitation: None,
    };
    let mut sp = StreamPower::new(g.clone(), None, &Params::default(), inputs, true, "sp").unwrap();
    for _ in 0..5000 {
        // Converged when no node moves by a millionth of the relief in a step.
        let change = sp.step_heights(&mut h, dt).unwrap().max_change.unwrap();
        let relief = h.iter().cloned().fold(0.0f32, f32::max);
        if change < 1e-6 * relief.max(1.0) {
            if let Some(fit) = SLOPE_AREA.lock().unwrap().as_mut() {
                // ln S against ln A over channel nodes (A ≥ 10 node areas).
                let (gr, a) = (sp.graph(), sp.drainage());
                let min_area = 10.0 * g.total_area() / n as f64;
                fit.clear();
                for i in 0..n {
                    let r = gr.receivers[i] as usize;
                    if r != i && a[i] as f64 >= min_area {
                        let s = (h[i] as f64 - h[r] as f64) / gr.dist[i] as f64;
                        fit.push(((a[i] as f64).ln(), s.ln()));
                    }
                }
            }
            return h;
        }
    }
    panic!("no steady state for u={u}, k={k}");
}

/// Where [`steady`] leaves the (ln A, ln S) pairs of its steady state, when set.
static SLOPE_AREA: std::sync::Mutex<Option<Vec<(f64, f64)>>> = std::sync::Mutex::new(None);

#[test]
fn steady_relief_on_a_poisson_graph_is_linear_in_u_over_k() {
    // Cordonnier 2016 §8: h_max is proportional to u/k. With c = (u/k) / (u₀/k₀), heights
    // c·h₀ and time steps dt₀·k₀/k make the same history scaled by c (same receivers
    // throughout), so the steady relief must scale by c; the solver's uplift, erodibility
    // and time step all enter the check.
    let pts = poisson_disc(6000.0, 6000.0, 100.0, 11).unwrap();
    let (g, _) = graph_of(&pts);
    let max = |h: &[f32]| h.iter().cloned().fold(f32::MIN, f32::max) as f64;
    let start: Vec<f32> = {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        (0..g.len()).map(|_| rng.random::<f32>()).collect()
    };
    let (u0, k0, dt0) = (1e-3f32, 1e-5f32, 1e5f64);
    *SLOPE_AREA.lock().unwrap() = Some(Vec::new());
    let base = max(&steady(&g, u0, k0, dt0, start.clone()));
    let pairs = SLOPE_AREA.lock().unwrap().take().unwrap();
    println!("base: h_max {base:.2} m over {} nodes", g.len());
    assert!(base > 100.0, "no relief grew: {base}");
    // The slope–area law S = (u/k)·A^(−m/n) on the random points.
    let c = pairs.len() as f64;
    let (sx, sy) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), p| (a + p.0, b + p.1));
    let sxx: f64 = pairs.iter().map(|p| p.0 * p.0).sum();
    let sxy: f64 = pairs.iter().map(|p| p.0 * p.1).sum();
    let exponent = (c * sxy - sx * sy) / (c * sxx - sx * sx);
    let intercept = ((sy - exponent * sx) / c).exp();
    println!("slope–area over {c} channel nodes: exponent {exponent:.4}, intercept {intercept:.4}");
    assert!(c > 200.0, "{c} channel nodes");
    assert!(
        (exponent + 0.5).abs() <= 0.02,
        "exponent {exponent}, expected -0.5"
    );
    assert!(
        (intercept / (u0 / k0) as f64 - 1.0).abs() <= 0.05,
        "intercept {intercept}, expected {}",
        u0 / k0
    );
    for (u, k) in [
        (2e-3f32, 1e-5f32),
        (1e-3, 2e-5),
        (5e-4, 2e-5),
        (3e-3, 1e-5),
        (1e-3, 4e-6),
    ] {
        let c = (u / k) as f64 / (u0 / k0) as f64;
        let h0: Vec<f32> = start.iter().map(|&v| (v as f64 * c) as f32).collect();
        let h = max(&steady(&g, u, k, dt0 * (k0 / k) as f64, h0));
        println!(
            "u={u} k={k}: h_max {h:.2} m, {:.4} × base (expected {c})",
            h / base
        );
        assert!(
            (h / base / c - 1.0).abs() < 0.03,
            "u={u}, k={k}: h_max {h} is {} × {base}, expected {c}",
            h / base
        );
    }
}

/// A surface over `g` with the given heights (routing by steepest descent, no lakes).
fn surface_parts(g: &NodeGraph, h: &[f32]) -> (Vec<u32>, Vec<f32>) {
    let mut router = FlowRouter::with_neighbourhood(g.clone(), None).unwrap();
    let mut hh = h.to_vec();
    router.route(&mut hh, SinkMode::Carve).unwrap();
    let rec = router.graph().receivers.clone();
    (rec, vec![1.0; g.len()])
}

#[test]
fn linear_phong_and_gaussian_surfaces_reproduce_a_plane_and_stay_finite() {
    let pts = poisson_disc(3000.0, 2000.0, 60.0, 5).unwrap();
    let (g, tris) = graph_of(&pts);
    let plane = |p: DVec2| (0.03 * p.x - 0.05 * p.y + 400.0) as f32;
    let h: Vec<f32> = g.positions().iter().map(|&p| plane(p)).collect();
    let (rec, q) = surface_parts(&g, &h);
    let s = StreamSurface {
        graph: &g,
        triangles: &tris,
        heights: &h,
        receivers: &rec,
        discharge: &q,
        water_level: &h,
    };
    let grid = Grid::with_cells(301, 201, 10.0, 10.0).unwrap();
    let at = |x: usize, y: usize| plane(DVec2::new(x as f64 * 10.0, y as f64 * 10.0));
    // Linear interpolation and Phong tessellation (every normal equal) are exact on a plane.
    for (name, out) in [
        ("linear", phong::linear(&s, &h, grid).unwrap()),
        ("phong", phong::phong(&s, grid, 0.75).unwrap()),
    ] {
        for y in 0..grid.height {
            for x in 0..grid.width {
                let v = out[y * grid.width + x];
                assert!(
                    (v - at(x, y)).abs() < 2e-3,
                    "{name} at ({x}, {y}): {v} vs {}",
                    at(x, y)
                );
            }
        }
    }
    // A kernel too narrow to bin is an error naming sigma, not a panic (#39.1).
    for tiny in [1e-30, 1e-12] {
        let e = gaussian::gaussian(&s, grid, tiny).unwrap_err().to_string();
        assert!(e.contains("sigma"), "{e}");
    }
    // The kernel sum agrees with a brute-force sum over every node within 3σ.
    let sigma = 60.0;
    let gauss = gaussian::gaussian(&s, grid, sigma).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for _ in 0..300 {
        let (x, y) = (
            rng.random_range(0..grid.width),
            rng.random_range(0..grid.height),
        );
        let p = DVec2::new(x as f64 * 10.0, y as f64 * 10.0);
        let (mut sw, mut swh) = (0.0f64, 0.0f64);
        for (i, q) in g.positions().iter().enumerate() {
            let d2 = p.distance_squared(*q);
            if d2 < 9.0 * sigma * sigma {
                let w = (-d2 / (2.0 * sigma * sigma)).exp();
                sw += w;
                swh += w * h[i] as f64;
            }
        }
        let v = gauss[y * grid.width + x];
        assert!(
            (v as f64 - swh / sw).abs() < 1e-3,
            "gaussian at ({x}, {y}): {v} vs {}",
            swh / sw
        );
    }
    assert!(gauss.iter().all(|v| v.is_finite()));
    // A rough surface: Phong stays finite and between the lowest and highest node, give or
    // take its bulge.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let rough: Vec<f32> = (0..g.len()).map(|_| rng.random_range(0.0..50.0)).collect();
    let s = StreamSurface {
        heights: &rough,
        water_level: &rough,
        ..s
    };
    let out = phong::phong(&s, grid, 1.0).unwrap();
    assert!(out.iter().all(|v| v.is_finite()));
    assert!(phong::phong(&s, grid, 1.5).is_err(), "alpha beyond 1");
    assert!(gaussian::gaussian(&s, grid, 0.0).is_err(), "sigma 0");
    let short = &rough[..10];
    let bad = StreamSurface {
        heights: short,
        ..s
    };
    let e = phong::phong(&bad, grid, 0.5).unwrap_err().to_string();
    assert!(e.contains("heights"), "{e}");
}

fn graph_recipe() -> Recipe {
    let mut r = Recipe::built_in("graph").unwrap();
    r = r.apply_override("size=(129,97)").unwrap();
    r = r.apply_override("cell_size=200.0").unwrap();
    r = r.apply_override("domain.Graph.spacing=700.0").unwrap();
    r = r.apply_override("stages[0].iterations=30").unwrap();
    r.apply_override("stages[1].iterations=5").unwrap()
}

fn bake(recipe: &Recipe) -> orogen_core::World {
    run_recipe(recipe, Path::new("."), &AtomicBool::new(false), &mut |_| {})
        .unwrap()
        .world
}

#[test]
fn a_graph_recipe_erodes_and_bakes_the_same_bytes_on_1_and_4_threads() {
    let recipe = graph_recipe();
    let run = |threads: usize| on_threads(threads, || bake(&recipe));
    let a = run(1);
    let b = run(4);
    assert_eq!(a.height.grid.width, 129);
    assert!(
        a.graph.is_none(),
        "the world leaves the graph once rasterised"
    );
    let bytes = |w: &orogen_core::World| -> Vec<u32> {
        w.height.data.iter().map(|v| v.to_bits()).collect()
    };
    assert_eq!(
        bytes(&a),
        bytes(&b),
        "heights differ between 1 and 4 threads"
    );
    assert_eq!(a.maps, b.maps, "maps differ between 1 and 4 threads");
    assert_eq!(a.rivers, b.rivers, "rivers differ between 1 and 4 threads");
    let rivers = a.rivers.as_ref().expect("a graph bake has rivers");
    assert!(!rivers.is_empty(), "no river");
    // Polylines in the grid's rectangle, beds never rising downstream.
    for r in rivers {
        for w in r.points.windows(2) {
            assert!(w[1][2] <= w[0][2] + 1e-3, "bed rises downstream: {w:?}");
        }
        for p in &r.points {
            assert!(p[0] >= -1e-6 && p[0] <= 128.0 * 200.0 + 1e-6, "x {p:?}");
            assert!(p[1] >= -1e-6 && p[1] <= 96.0 * 200.0 + 1e-6, "y {p:?}");
        }
    }
    assert!(a.height.data.iter().all(|v| v.is_finite()));
    let (lo, hi) = a.height.min_max();
    assert!(hi - lo > 100.0, "uplift grew no relief: {lo}..{hi}");
    for name in [
        "drainage",
        "water_surface",
        "lake_depth",
        "rivers",
        "basins",
    ] {
        assert!(a.maps.contains_key(name), "no {name} map");
    }
}

#[test]
fn bad_graph_domains_are_refused_naming_the_field() {
    let err = |r: Result<Recipe, OrogenError>| -> String {
        match r.and_then(|r| r.validate().map(|_| r)) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted"),
        }
    };
    let base = graph_recipe();
    let e = err(base.apply_override("domain.Graph.spacing=0.0"));
    assert!(e.contains("domain.Graph.spacing"), "{e}");
    let e = err(base.apply_override("domain.Graph.spacing=-5.0"));
    assert!(e.contains("domain.Graph.spacing"), "{e}");
    // Empty: a domain with no area, and one with no room for a node inside.
    let e = err(base.apply_override("size=(1,1)"));
    assert!(e.contains("size"), "{e}");
    let e = err(base.apply_override("domain.Graph.spacing=20000.0"));
    assert!(
        e.contains("domain.Graph.spacing") && e.contains("no node"),
        "{e}"
    );
    // Stages that need the grid.
    let e = err(base.apply_override("stages[1]=Hydraulic()"));
    assert!(
        e.contains("stages[1].Hydraulic") && e.contains("Grid"),
        "{e}"
    );
    let e =
        err(base
            .apply_override("strata=(layers: [(material: \"sand\", thickness: Constant(5.0))])"));
    assert!(e.contains("strata"), "{e}");
    // A graph too big to triangulate in a few seconds, or to fit in memory, is refused
    // before anything is allocated.
    let tiny = base.apply_override("domain.Graph.spacing=0.01").unwrap();
    let e = tiny.validate().unwrap_err().to_string();
    assert!(
        e.contains("domain.Graph.spacing") && e.contains("nodes"),
        "{e}"
    );
    let e = run_recipe(&tiny, Path::new("."), &AtomicBool::new(false), &mut |_| {})
        .err()
        .map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("domain.Graph.spacing")));
    // 25.6 × 19.2 km at 20 m: up to 1.4M nodes, 0.7 GB, over a 256 MiB limit.
    let big = base.apply_override("domain.Graph.spacing=20.0").unwrap();
    big.validate().unwrap();
    let e = check_memory(&big, Some(256 << 20)).unwrap_err().to_string();
    assert!(
        e.contains("domain.Graph.spacing") && e.contains("nodes"),
        "{e}"
    );
    // Sampling stops once cancelled, with Cancelled.
    let cancel = AtomicBool::new(true);
    let e = orogen_core::mesh::points::poisson_disc_cancellable(25600.0, 19200.0, 20.0, 1, &cancel);
    assert!(matches!(e, Err(OrogenError::Cancelled)), "{:?}", e.err());
}

#[test]
fn a_graph_run_shows_its_growing_relief_live_through_the_gaussian_preview() {
    // The live view while a graph erodes: each step's world gives a heightfield of the grid
    // from the nodes (the grid's own heights stay the initial terrain until the end).
    let recipe = graph_recipe();
    let mut highs = Vec::new();
    let mut initial_unchanged = true;
    let mut first: Option<Vec<f32>> = None;
    run_recipe(&recipe, Path::new("."), &AtomicBool::new(false), &mut |e| {
        if let orogen_core::Event::Step {
            index: 0, world, ..
        } = e
        {
            let p = world.graph_preview().expect("a graph world previews");
            assert_eq!(p.len(), world.grid().len());
            assert!(p.iter().all(|v| v.is_finite()));
            highs.push(p.iter().cloned().fold(f32::MIN, f32::max));
            let h = world.height.data.clone();
            match &first {
                None => first = Some(h),
                Some(f) => initial_unchanged &= *f == h,
            }
        }
    })
    .unwrap();
    assert_eq!(highs.len(), 30, "one preview per stream-power step");
    assert!(initial_unchanged, "the grid heights are not the live view");
    assert!(
        highs[29] > 2.0 * highs[2],
        "the preview follows the uplifted nodes: {highs:?}"
    );
}

#[test]
fn a_lake_floor_the_primitives_lay_at_the_water_level_is_all_lake() {
    // The built-in graph recipe's large lake, at a quarter of the pixels: the primitives
    // flatten its floor at the level. No dry pixel may stand at a lake's level right beside
    // it (before, the flat floor counted as dry land and only the channels cut below the
    // level showed as water).
    let r = Recipe::built_in("graph")
        .unwrap()
        .apply_override("size=(513, 513)")
        .and_then(|r| r.apply_override("cell_size=400.0"))
        .unwrap();
    let w = bake(&r);
    let grid = w.grid();
    let scalar = |name: &str| match &w.maps[name] {
        orogen_core::MapData::Scalar(m) => m.data.clone(),
        _ => panic!("{name} is not scalar"),
    };
    let (depth, surface) = (scalar("lake_depth"), scalar("water_surface"));
    let h = &w.height.data;
    let rivers = match &w.maps["rivers"] {
        orogen_core::MapData::Mask(m) => m.data.clone(),
        _ => panic!("rivers is not a mask"),
    };
    let lake_pixels = depth.iter().filter(|&&d| d > 0.0).count();
    assert!(
        lake_pixels > 500,
        "the recipe's lake is gone ({lake_pixels} pixels)"
    );
    let (mut dry_at_level, mut dry_below, mut shore) = (0, 0, 0);
    for y in 1..grid.height - 1 {
        for x in 1..grid.width - 1 {
            let i = grid.index(x, y);
            if depth[i] > 0.0 {
                continue;
            }
            let beside = [i - 1, i + 1, i - grid.width, i + grid.width];
            let beside_lake_at_its_level = beside
                .iter()
                .any(|&j| depth[j] > 0.0 && (h[i] - surface[j]).abs() < 1e-3);
            dry_at_level += usize::from(beside_lake_at_its_level);
            // The shore is where the ground rises through the water: a dry pixel beside a
            // lake stands above its level. A dry pixel below it would end the water in a
            // wall along the lake's triangles. (Except where a river leaves the lake: its
            // channel drops below the level.)
            dry_below += usize::from(
                rivers[i] == 0
                    && beside
                        .iter()
                        .any(|&j| depth[j] > 0.0 && h[i] < surface[j] - 1e-3),
            );
            shore += usize::from(beside.iter().any(|&j| depth[j] > 0.0));
        }
    }
    assert_eq!(
        dry_at_level, 0,
        "{dry_at_level} dry pixels at a lake's level beside it"
    );
    assert!(shore > 100, "{shore} shore pixels");
    // (Where an outlet's valley is cut into the lake's sill, the water does end over lower
    // ground: a spillway, 3 of 1,405 shore pixels of this lake. Laying the water over the
    // lake's triangles, as before, left 242 of 1,526.)
    println!("{dry_below} of {shore} dry shore pixels below the water");
    assert!(
        dry_below * 100 <= shore,
        "{dry_below} of {shore} dry pixels beside a lake lie below its water"
    );
    // The water of each lake pixel is flat: its four lake neighbours share its level.
    let uneven = (1..grid.height - 1)
        .flat_map(|y| (1..grid.width - 1).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let i = grid.index(x, y);
            depth[i] > 0.0
                && [i - 1, i + 1, i - grid.width, i + grid.width]
                    .iter()
                    .any(|&j| depth[j] > 0.0 && (surface[j] - surface[i]).abs() > 1e-3)
        })
        .count();
    assert_eq!(uneven, 0, "{uneven} lake pixels whose water is not flat");
}
