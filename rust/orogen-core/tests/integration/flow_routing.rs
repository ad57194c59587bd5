//! Flow routing against brute-force references on random pit-rich terrains.

// Node-indexed parallel arrays read most clearly with index loops.
#![allow(clippy::needless_range_loop)]

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

use crate::support::on_threads;
use orogen_core::flow::accumulate::PointerJumpScratch;
use orogen_core::flow::{
    accumulate, water_surface, water_surface_pointer_jumping, FlowGraph, FlowRouter, OutletParams,
    Side, SinkMode,
};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random terrain full of pits: value noise plus white noise, sometimes quantised to
/// whole metres (flats and ties), with random open borders and sometimes a sea.
struct Case {
    grid: Grid,
    heights: Vec<f32>,
    outlets: OutletParams,
}

fn random_case(seed: u64) -> Case {
    random_case_sized(seed, 40..=64, 30..=64)
}

/// [`random_case`] with the width and height drawn from the given ranges.
fn random_case_sized(
    seed: u64,
    widths: std::ops::RangeInclusive<usize>,
    heights: std::ops::RangeInclusive<usize>,
) -> Case {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let w = rng.random_range(widths);
    let h = rng.random_range(heights);
    let cell = [1.0f32, 30.0, 100.0][rng.random_range(0..3)];
    let grid = Grid::new(w, h, cell).unwrap();
    let coarse = rng.random_range(3..10);
    let cw = w / coarse + 2;
    let ch = h / coarse + 2;
    let lattice: Vec<f32> = (0..cw * ch).map(|_| rng.random_range(0.0..100.0)).collect();
    let white = [0.0f32, 1.0, 10.0, 50.0][rng.random_range(0..4)];
    let quantise = rng.random_bool(0.3);
    let mut heights = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let fx = x as f32 / coarse as f32;
            let fy = y as f32 / coarse as f32;
            let (x0, y0) = (fx as usize, fy as usize);
            let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
            let l = |i: usize, j: usize| lattice[j * cw + i];
            let a = l(x0, y0) * (1.0 - tx) + l(x0 + 1, y0) * tx;
            let b = l(x0, y0 + 1) * (1.0 - tx) + l(x0 + 1, y0 + 1) * tx;
            let mut v = a * (1.0 - ty) + b * ty + rng.random_range(0.0..=white);
            if quantise {
                v = (v / 4.0).round();
            }
            heights.push(v);
        }
    }
    let mut borders = Vec::new();
    for side in [Side::North, Side::South, Side::East, Side::West] {
        if rng.random_bool(0.6) {
            borders.push(side);
        }
    }
    let sea_level = if rng.random_bool(0.3) {
        let mut sorted = heights.clone();
        sorted.sort_by(f32::total_cmp);
        Some(sorted[sorted.len() / 20])
    } else {
        None
    };
    Case {
        grid,
        heights,
        outlets: OutletParams { borders, sea_level },
    }
}

fn neighbours(grid: Grid, i: usize) -> Vec<(usize, f32)> {
    let (x, y) = grid.coords(i);
    let mut out = Vec::new();
    for dy in -1i64..=1 {
        for dx in -1i64..=1 {
            if dx == 0 && dy == 0 {
                continue;
            }
            let (nx, ny) = (x as i64 + dx, y as i64 + dy);
            if nx < 0 || ny < 0 || nx >= grid.width as i64 || ny >= grid.height as i64 {
                continue;
            }
            let d = if dx != 0 && dy != 0 {
                grid.cell_size * std::f32::consts::SQRT_2
            } else {
                grid.cell_size
            };
            out.push((grid.index(nx as usize, ny as usize), d));
        }
    }
    out
}

/// Outlet cells as the brief defines them; the lowest cell when there is none.
fn outlet_mask(case: &Case) -> Vec<bool> {
    let g = case.grid;
    let mut mask: Vec<bool> = (0..g.len())
        .map(|i| {
            let (x, y) = g.coords(i);
            let b = &case.outlets.borders;
            (b.contains(&Side::North) && y == 0)
                || (b.contains(&Side::South) && y + 1 == g.height)
                || (b.contains(&Side::West) && x == 0)
                || (b.contains(&Side::East) && x + 1 == g.width)
                || case.outlets.sea_level.is_some_and(|s| case.heights[i] <= s)
        })
        .collect();
    if !mask.contains(&true) {
        let lowest = (0..g.len())
            .min_by(|&a, &b| case.heights[a].total_cmp(&case.heights[b]).then(a.cmp(&b)))
            .unwrap();
        mask[lowest] = true;
    }
    mask
}

#[derive(PartialEq)]
struct Key(f32, usize);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Priority-Flood (Barnes, Lehman & Mulla 2014), written plainly: the lowest level each
/// cell must be filled to for water to reach an outlet.
fn priority_flood(case: &Case) -> Vec<f32> {
    let n = case.grid.len();
    let mask = outlet_mask(case);
    let mut w = vec![f32::NAN; n];
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    for i in 0..n {
        if mask[i] {
            w[i] = case.heights[i];
            done[i] = true;
            heap.push(Reverse(Key(w[i], i)));
        }
    }
    while let Some(Reverse(Key(level, c))) = heap.pop() {
        for (nb, _) in neighbours(case.grid, c) {
            if !done[nb] {
                done[nb] = true;
                w[nb] = case.heights[nb].max(level);
                heap.push(Reverse(Key(w[nb], nb)));
            }
        }
    }
    w
}

const MODES: [SinkMode; 4] = [
    SinkMode::Carve,
    SinkMode::Fill { epsilon: 0.0 },
    SinkMode::Fill { epsilon: 0.01 },
    SinkMode::None,
];

#[test]
fn receiver_chains_end_at_outlets_and_stack_is_topological() {
    for seed in 0..100 {
        let case = random_case(seed);
        let g = case.grid;
        let n = g.len();
        let mask = outlet_mask(&case);
        for mode in MODES {
            let mut heights = case.heights.clone();
            let mut router = FlowRouter::new(g, &case.outlets).unwrap();
            let graph = router.route(&mut heights, mode).unwrap().clone();
            assert_eq!(graph.len(), n);
            // Receivers are neighbours at their true distance, or the node itself.
            for i in 0..n {
                let r = graph.receivers[i] as usize;
                if r == i {
                    assert_eq!(graph.dist[i], 0.0);
                    if mode != SinkMode::None {
                        assert!(mask[i], "seed {seed} {mode:?}: interior sink at {i}");
                    }
                } else {
                    let d = neighbours(g, i).into_iter().find(|&(j, _)| j == r);
                    assert_eq!(
                        d.map(|(_, d)| d),
                        Some(graph.dist[i]),
                        "seed {seed}: {i}->{r}"
                    );
                    assert!(!mask[i], "seed {seed} {mode:?}: outlet {i} drains to {r}");
                }
            }
            // Every chain ends at an outlet within n steps (no cycle).
            for i in 0..n {
                let mut c = i;
                let mut steps = 0;
                while graph.receivers[c] as usize != c {
                    c = graph.receivers[c] as usize;
                    steps += 1;
                    assert!(steps <= n, "seed {seed} {mode:?}: cycle through {i}");
                }
                if mode != SinkMode::None {
                    assert!(mask[c], "seed {seed} {mode:?}: {i} ends at non-outlet {c}");
                }
            }
            // The stack holds every node once, each receiver before its donors.
            let mut pos = vec![usize::MAX; n];
            for (k, &c) in graph.stack.iter().enumerate() {
                assert_eq!(
                    pos[c as usize],
                    usize::MAX,
                    "seed {seed}: {c} twice in the stack"
                );
                pos[c as usize] = k;
            }
            for i in 0..n {
                assert!(pos[i] != usize::MAX);
                let r = graph.receivers[i] as usize;
                if r != i {
                    assert!(pos[r] < pos[i], "seed {seed} {mode:?}: {r} after donor {i}");
                }
            }
            // Heights are untouched except by Fill, which only raises them.
            for i in 0..n {
                match mode {
                    SinkMode::Fill { .. } => assert!(heights[i] >= case.heights[i]),
                    _ => assert_eq!(heights[i].to_bits(), case.heights[i].to_bits()),
                }
            }
            // Over a fill, water never climbs.
            if let SinkMode::Fill { .. } = mode {
                for i in 0..n {
                    assert!(heights[graph.receivers[i] as usize] <= heights[i]);
                }
            }
        }
    }
}

#[test]
fn steepest_descent_picks_the_steepest_lower_neighbour() {
    for seed in 100..130 {
        let case = random_case(seed);
        let g = case.grid;
        let mask = outlet_mask(&case);
        let mut router = FlowRouter::new(g, &case.outlets).unwrap();
        router.steepest_descent(&case.heights).unwrap();
        let graph = router.graph();
        for i in 0..g.len() {
            let r = graph.receivers[i] as usize;
            let opened = mask[i] && (r == i);
            let best = neighbours(g, i)
                .into_iter()
                .map(|(j, d)| ((case.heights[i] - case.heights[j]) / d, j))
                .filter(|&(s, _)| s > 0.0)
                .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
            if opened {
                continue;
            }
            match best {
                None => assert_eq!(r, i, "seed {seed}: {i} has no lower neighbour"),
                Some((_, j)) => {
                    assert!(!mask[i]);
                    assert_eq!(r, j, "seed {seed}: {i} should drain to {j}");
                }
            }
        }
    }
}

#[test]
fn water_surface_equals_priority_flood() {
    let mut scratch = PointerJumpScratch::default();
    for seed in 200..300 {
        let case = random_case(seed);
        let n = case.grid.len();
        let expected = priority_flood(&case);
        let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();

        let mut heights = case.heights.clone();
        let graph = router.route(&mut heights, SinkMode::Carve).unwrap();
        let mut surface = vec![0.0; n];
        water_surface(graph, &heights, 0.0, &mut surface);
        let mut jumped = vec![0.0; n];
        water_surface_pointer_jumping(graph, &heights, 0.0, &mut jumped, &mut scratch);
        for i in 0..n {
            assert_eq!(surface[i], expected[i], "seed {seed}: carve surface at {i}");
            assert_eq!(
                jumped[i], expected[i],
                "seed {seed}: pointer jumping at {i}"
            );
        }

        let mut filled = case.heights.clone();
        router
            .route(&mut filled, SinkMode::Fill { epsilon: 0.0 })
            .unwrap();
        for i in 0..n {
            assert_eq!(filled[i], expected[i], "seed {seed}: filled height at {i}");
        }
    }
}

#[test]
fn sloped_surface_rises_upstream_and_pointer_jumping_agrees() {
    let mut scratch = PointerJumpScratch::default();
    for seed in 300..340 {
        let case = random_case(seed);
        let n = case.grid.len();
        let flood = priority_flood(&case);
        let eps = 0.01f32;
        let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
        let mut heights = case.heights.clone();
        let graph = router.route(&mut heights, SinkMode::Carve).unwrap();
        let mut surface = vec![0.0; n];
        water_surface(graph, &heights, eps, &mut surface);
        let mut jumped = vec![0.0; n];
        water_surface_pointer_jumping(graph, &heights, eps, &mut jumped, &mut scratch);
        for i in 0..n {
            let r = graph.receivers[i] as usize;
            assert!(
                surface[i] >= flood[i],
                "seed {seed}: below the flood level at {i}"
            );
            if r != i {
                // Each step upstream climbs at least epsilon (float rounding aside).
                assert!(surface[i] >= surface[r] + eps * 0.99, "seed {seed}: {i}");
            }
            assert!((surface[i] - jumped[i]).abs() <= 1e-3, "seed {seed}: {i}");
        }
    }
}

#[test]
fn lake_passes_form_a_minimum_spanning_tree_of_basins() {
    let mut checked_lakes = 0;
    for seed in 400..500 {
        let case = random_case(seed);
        let g = case.grid;
        let n = g.len();
        let mask = outlet_mask(&case);
        let mut router = FlowRouter::new(g, &case.outlets).unwrap();
        router.steepest_descent(&case.heights).unwrap();
        let rcv = router.graph().receivers.clone();
        // Brute force: each cell's root; outlet roots are one node (0), pits 1.. .
        let root = |mut c: usize| {
            while rcv[c] as usize != c {
                c = rcv[c] as usize;
            }
            c
        };
        let mut node_of_root = HashMap::new();
        let mut node = vec![0usize; n];
        for i in 0..n {
            let r = root(i);
            node[i] = if mask[r] {
                0
            } else {
                let next = node_of_root.len() + 1;
                *node_of_root.entry(r).or_insert(next)
            };
        }
        let lakes = node_of_root.len();
        // Lowest pass for every pair of adjacent basins, over every neighbouring pair.
        let mut best: HashMap<(usize, usize), f32> = HashMap::new();
        for i in 0..n {
            for (j, _) in neighbours(g, i) {
                let (a, b) = (node[i].min(node[j]), node[i].max(node[j]));
                if a == b {
                    continue;
                }
                let h = case.heights[i].max(case.heights[j]);
                let e = best.entry((a, b)).or_insert(h);
                *e = e.min(h);
            }
        }
        // Naive Kruskal.
        let mut edges: Vec<((usize, usize), f32)> = best.into_iter().collect();
        edges.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
        let mut comp: Vec<usize> = (0..=lakes).collect();
        let mut mst = Vec::new();
        for ((a, b), h) in edges {
            let (ca, cb) = (comp[a], comp[b]);
            if ca != cb {
                for c in comp.iter_mut() {
                    if *c == cb {
                        *c = ca;
                    }
                }
                mst.push(h);
            }
        }
        let mut heights = case.heights.clone();
        router.resolve_sinks(&mut heights, SinkMode::Carve).unwrap();
        let passes = router.passes();
        assert_eq!(passes.len(), lakes, "seed {seed}: every lake gets one pass");
        assert_eq!(
            mst.len(),
            lakes,
            "seed {seed}: the basin graph is connected"
        );
        let mut got: Vec<f32> = passes.iter().map(|p| p.height).collect();
        got.sort_by(f32::total_cmp);
        mst.sort_by(f32::total_cmp);
        assert_eq!(got, mst, "seed {seed}: pass heights differ from the MST's");
        for p in passes {
            let (from, to) = (p.from as usize, p.to as usize);
            assert_eq!(
                root(from),
                p.pit as usize,
                "seed {seed}: pass leaves its own lake"
            );
            assert_ne!(node[from], node[to]);
            assert!(neighbours(g, from).iter().any(|&(j, _)| j == to));
            assert_eq!(p.height, case.heights[from].max(case.heights[to]));
        }
        checked_lakes += lakes;
    }
    assert!(
        checked_lakes > 1000,
        "the terrains should be pit-rich, got {checked_lakes} lakes"
    );
}

#[test]
fn drainage_conserves_area_and_matches_naive_accumulation() {
    for seed in 500..560 {
        let case = random_case(seed);
        let n = case.grid.len();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Whole-number weights keep every f32 sum exact.
        let weights: Vec<f32> = (0..n).map(|_| rng.random_range(1..=5) as f32).collect();
        let total: f32 = weights.iter().sum();
        for mode in MODES {
            let mut heights = case.heights.clone();
            let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
            let graph = router.route(&mut heights, mode).unwrap();
            let mut out = vec![0.0; n];
            accumulate(graph, &weights, &mut out);
            let mut naive = vec![0.0f32; n];
            for i in 0..n {
                let mut c = i;
                loop {
                    naive[c] += weights[i];
                    let r = graph.receivers[c] as usize;
                    if r == c {
                        break;
                    }
                    c = r;
                }
            }
            assert_eq!(out, naive, "seed {seed} {mode:?}");
            let at_roots: f32 = (0..n)
                .filter(|&i| graph.receivers[i] as usize == i)
                .map(|i| out[i])
                .sum();
            assert_eq!(
                at_roots, total,
                "seed {seed} {mode:?}: area lost or created"
            );
        }
    }
}

#[test]
fn same_bytes_with_one_and_four_threads() {
    let run = |threads: usize| {
        on_threads(threads, || {
            let mut bytes = Vec::new();
            for seed in [7u64, 8, 9] {
                let mut case = random_case(seed);
                // A larger grid so parallel loops really split.
                let grid = Grid::new(300, 200, 10.0).unwrap();
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                case.heights = (0..grid.len())
                    .map(|i| (i % 300) as f32 * 0.05 + rng.random_range(0.0..20.0))
                    .collect();
                case.grid = grid;
                for mode in MODES {
                    let mut heights = case.heights.clone();
                    let mut router = FlowRouter::new(grid, &case.outlets).unwrap();
                    let graph = router.route(&mut heights, mode).unwrap().clone();
                    let mut out = vec![0.0; grid.len()];
                    accumulate(&graph, &vec![grid.cell_area(); grid.len()], &mut out);
                    let mut surface = vec![0.0; grid.len()];
                    let mut scratch = PointerJumpScratch::default();
                    water_surface_pointer_jumping(
                        &graph,
                        &heights,
                        0.1,
                        &mut surface,
                        &mut scratch,
                    );
                    bytes.extend(graph.receivers.iter().flat_map(|v| v.to_le_bytes()));
                    bytes.extend(graph.stack.iter().flat_map(|v| v.to_le_bytes()));
                    bytes.extend(graph.dist.iter().flat_map(|v| v.to_le_bytes()));
                    for v in [&heights, &out, &surface] {
                        bytes.extend(v.iter().flat_map(|v| v.to_le_bytes()));
                    }
                }
            }
            bytes
        })
    };
    let one = run(1);
    assert!(!one.is_empty());
    assert!(one == run(4), "routing differs between 1 and 4 threads");
}

#[test]
fn bad_inputs_are_errors_naming_the_field() {
    let grid = Grid::new(8, 8, 1.0).unwrap();
    let outlets = OutletParams {
        sea_level: Some(f32::NAN),
        ..Default::default()
    };
    let err = FlowRouter::new(grid, &outlets)
        .err()
        .expect("NaN sea level")
        .to_string();
    assert!(err.contains("outlets.sea_level"), "{err}");

    let mut router = FlowRouter::new(grid, &OutletParams::default()).unwrap();
    let mut heights = vec![1.0f32; 64];
    heights[9] = f32::INFINITY;
    let err = router
        .route(&mut heights, SinkMode::Carve)
        .unwrap_err()
        .to_string();
    assert!(err.contains("heights") && err.contains("node 9"), "{err}");
    let err = router
        .route(&mut [0.0; 10], SinkMode::Carve)
        .unwrap_err()
        .to_string();
    assert!(err.contains("heights"), "{err}");
    let mut ok = vec![1.0f32; 64];
    let err = router
        .route(&mut ok, SinkMode::Fill { epsilon: -1.0 })
        .unwrap_err()
        .to_string();
    assert!(err.contains("lakes.Fill.epsilon"), "{err}");
    // resolve_sinks without a fresh descent.
    router.steepest_descent(&ok).unwrap();
    router.resolve_sinks(&mut ok, SinkMode::Carve).unwrap();
    assert!(router.resolve_sinks(&mut ok, SinkMode::Carve).is_err());
}

#[test]
fn closed_domain_drains_to_its_lowest_cell() {
    let case = Case {
        grid: Grid::new(5, 4, 1.0).unwrap(),
        heights: vec![
            5.0, 5.0, 5.0, 5.0, 5.0, //
            5.0, 1.0, 4.0, 2.0, 5.0, //
            5.0, 3.0, 5.0, 0.5, 5.0, //
            5.0, 5.0, 5.0, 5.0, 5.0, //
        ],
        outlets: OutletParams {
            borders: vec![],
            sea_level: None,
        },
    };
    let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
    let mut heights = case.heights.clone();
    let graph = router.route(&mut heights, SinkMode::Carve).unwrap();
    let roots: Vec<usize> = (0..20)
        .filter(|&i| graph.receivers[i] as usize == i)
        .collect();
    assert_eq!(roots, vec![13], "the single outlet is the lowest cell");
    let mut surface = vec![0.0; 20];
    water_surface(graph, &heights, 0.0, &mut surface);
    assert_eq!(surface, priority_flood(&case));
    // The lake at cell 6 spills over cell 7 (4 m) into the terminal lake.
    assert_eq!(surface[6], 4.0);
    assert_eq!(surface[13], 0.5);
}

/// The same grid as an explicit graph, neighbours listed in a shuffled order: exercises
/// the generic (non-raster) code paths of every algorithm.
struct AdjacencyGraph {
    adj: Vec<Vec<(u32, f32)>>,
    open: Vec<bool>,
    area: f32,
}

impl orogen_core::flow::Neighbourhood for AdjacencyGraph {
    fn len(&self) -> usize {
        self.adj.len()
    }
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, mut f: F) {
        for &(j, d) in &self.adj[node] {
            f(j, d);
        }
    }
    fn is_outlet(&self, node: usize) -> bool {
        self.open[node]
    }
    fn node_area(&self, _node: usize) -> f32 {
        self.area
    }
    fn position(&self, node: usize) -> glam::DVec2 {
        glam::DVec2::new(node as f64, 0.0)
    }
}

/// Routes `case` on the raster grid and on the same grid as a shuffled explicit graph
/// (the generic code paths of every algorithm), asserting the same bytes.
fn assert_generic_routes_like_raster(case: &Case, seed: u64) {
    use rand::seq::SliceRandom;
    let g = case.grid;
    let n = g.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mask = outlet_mask(case);
    let adj = (0..n)
        .map(|i| {
            let mut v: Vec<(u32, f32)> = neighbours(g, i)
                .into_iter()
                .map(|(j, d)| (j as u32, d))
                .collect();
            v.shuffle(&mut rng);
            v
        })
        .collect();
    let open = (0..n)
        .map(|i| mask[i] && !case.outlets.sea_level.is_some_and(|s| case.heights[i] <= s))
        .collect();
    let graph_nb = AdjacencyGraph {
        adj,
        open,
        area: g.cell_area(),
    };
    let mut generic = FlowRouter::with_neighbourhood(graph_nb, case.outlets.sea_level).unwrap();
    let mut raster = FlowRouter::new(g, &case.outlets).unwrap();
    for mode in MODES {
        let (mut h1, mut h2) = (case.heights.clone(), case.heights.clone());
        let a = raster.route(&mut h1, mode).unwrap().clone();
        let b = generic.route(&mut h2, mode).unwrap().clone();
        assert_eq!(a.receivers, b.receivers, "seed {seed} {mode:?}");
        assert_eq!(a.dist, b.dist, "seed {seed} {mode:?}");
        assert_eq!(a.stack, b.stack, "seed {seed} {mode:?}");
        assert_eq!(h1, h2, "seed {seed} {mode:?}");
    }
}

#[test]
fn generic_neighbourhood_routes_like_the_raster_grid() {
    for seed in 600..640 {
        assert_generic_routes_like_raster(&random_case(seed), seed);
    }
}

/// Grids wider than one tile and taller than one band of the raster pass scan: its tiles'
/// spanning forests must give the tree the whole-lake walk gives.
#[test]
fn tiled_pass_scan_routes_like_the_generic_neighbourhood() {
    for seed in 700..712 {
        let case = random_case_sized(seed, 129..=420, 33..=110);
        assert_generic_routes_like_raster(&case, seed);
    }
}

/// Heights from five values with both zeros among them: ties everywhere, and -0 below +0
/// in the order of passes. The raster scan leaves out the pairs that are not their cells'
/// lowest pass to a node; the generic walk offers them all: the same tree either way.
#[test]
fn signed_zero_ties_route_like_the_generic_neighbourhood() {
    for seed in 720..728 {
        let mut case = random_case_sized(seed, 129..=300, 33..=80);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for h in &mut case.heights {
            *h = [-1.0, -0.0, 0.0, 0.5, 1.0][rng.random_range(0..5)];
        }
        case.outlets.sea_level = case.outlets.sea_level.map(|_| -0.0);
        assert_generic_routes_like_raster(&case, seed);
    }
}

#[test]
fn thin_grids_route_to_their_outlets() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for (w, h) in [(1, 1), (1, 50), (50, 1), (2, 40), (40, 2), (3, 3)] {
        let grid = Grid::new(w, h, 10.0).unwrap();
        for borders in [vec![Side::North], vec![Side::West, Side::East], vec![]] {
            let case = Case {
                grid,
                heights: (0..grid.len())
                    .map(|_| rng.random_range(0.0..10.0))
                    .collect(),
                outlets: OutletParams {
                    borders,
                    sea_level: None,
                },
            };
            let mask = outlet_mask(&case);
            let expected = priority_flood(&case);
            let mut router = FlowRouter::new(grid, &case.outlets).unwrap();
            let mut heights = case.heights.clone();
            let graph = router.route(&mut heights, SinkMode::Carve).unwrap();
            for i in 0..grid.len() {
                let mut c = i;
                for _ in 0..grid.len() {
                    c = graph.receivers[c] as usize;
                }
                assert!(mask[c], "{w}x{h}: {i} ends at {c}");
            }
            let mut surface = vec![0.0; grid.len()];
            water_surface(graph, &heights, 0.0, &mut surface);
            assert_eq!(surface, expected, "{w}x{h}");
        }
    }
}

#[test]
fn raster_coords_split_indices_exactly() {
    use orogen_core::flow::RasterGrid;
    for w in [1usize, 2, 3, 7, 1000, 4097, 16385] {
        let h = orogen_core::field::MAX_SIDE;
        let grid = Grid::new(w, h, 1.0).unwrap();
        let r = RasterGrid::new(grid, &[]);
        let n = w * h;
        let mut probe: Vec<usize> = (0..2000).map(|k| k * (n / 2000)).collect();
        probe.extend((1..=2000).map(|k| n - k));
        probe.extend((0..h).step_by(97).flat_map(|y| [y * w, y * w + w - 1]));
        for i in probe {
            assert_eq!(r.coords(i), (i % w, i / w), "w {w}, index {i}");
        }
    }
}

/// Graphs large enough for walks along the stack to run whole trees in parallel: the runs
/// cover the stack once, split into several parts, and the accumulation and the implicit
/// stream-power solve give the bytes of one sequential walk (the same graph without runs).
#[test]
fn parallel_tree_walks_equal_the_sequential_walk() {
    for seed in 800..803 {
        let case = random_case_sized(seed, 300..=420, 220..=300);
        let n = case.grid.len();
        let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
        for mode in MODES {
            let mut h = case.heights.clone();
            let graph = router.route(&mut h, mode).unwrap().clone();
            // The runs cover every stack position once.
            let mut seen = vec![false; n];
            for &[start, len, _] in &graph.runs {
                for s in &mut seen[start as usize..(start + len) as usize] {
                    assert!(!*s, "seed {seed} {mode:?}: a stack position in two runs");
                    *s = true;
                }
            }
            assert!(
                seen.iter().all(|&s| s),
                "seed {seed} {mode:?}: runs miss part of the stack"
            );
            let parts = graph.tree_parts(8);
            assert!(parts.len() > 1, "seed {seed} {mode:?}: one part only");
            let mut sequential = graph.clone();
            sequential.runs.clear();
            let weights: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
            assert_walks_agree(
                &graph,
                &sequential,
                &h,
                &weights,
                &format!("seed {seed} {mode:?}"),
            );
        }
    }
}

/// On a grid the router keeps a one-byte link code per node beside the receivers and
/// distances (`FlowGraph::links`): in every sink mode each code names the node's receiver
/// and its distance, bit for bit, and the accumulation and the implicit solve, which read
/// the codes, give the bytes of the same walks over the arrays.
#[test]
fn raster_links_equal_the_receivers_and_walk_alike() {
    let small = (0..40).map(random_case);
    let large = (810..812).map(|s| random_case_sized(s, 300..=420, 220..=300));
    for (k, case) in small.chain(large).enumerate() {
        let n = case.grid.len();
        let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
        for mode in MODES {
            let mut h = case.heights.clone();
            let graph = router.route(&mut h, mode).unwrap().clone();
            let links = graph
                .links
                .as_ref()
                .expect("a grid router keeps link codes");
            for i in 0..n {
                let (r, d) = links.link(i);
                assert_eq!(
                    (r, d.to_bits()),
                    (graph.receivers[i] as usize, graph.dist[i].to_bits()),
                    "case {k} {mode:?}: node {i}'s link"
                );
            }
            let mut plain = graph.clone();
            plain.links = None;
            let weights: Vec<f64> = (0..n).map(|i| 1.0 + (i % 5) as f64 * 0.3).collect();
            assert_walks_agree(&graph, &plain, &h, &weights, &format!("case {k} {mode:?}"));
        }
    }
}

/// Asserts that the accumulation of `weights` and the implicit solve (n = 1, then n = 1.5
/// on its result) over graphs `a` and `b` give the same bytes; `what` names the case.
fn assert_walks_agree(a: &FlowGraph, b: &FlowGraph, heights: &[f32], weights: &[f64], what: &str) {
    use orogen_core::eroders::stream_power::{uplift_and_erode, NodeValues};
    use orogen_core::flow::accumulate_f64;
    let n = heights.len();
    let (mut sa, mut sb) = (vec![0.0; n], vec![0.0; n]);
    accumulate_f64(a, weights, &mut sa);
    accumulate_f64(b, weights, &mut sb);
    assert!(
        sa.iter().zip(&sb).all(|(x, y)| x.to_bits() == y.to_bits()),
        "{what}: the accumulations differ"
    );
    let drainage: Vec<f32> = sa.iter().map(|&v| v as f32 * 900.0).collect();
    let (mut ha, mut hb) = (heights.to_vec(), heights.to_vec());
    for n_exp in [1.0, 1.5] {
        let (k, u) = (NodeValues::Uniform(2e-5), NodeValues::Uniform(1e-3));
        let ea = uplift_and_erode(a, &drainage, k, u, 0.5, n_exp, 1e4, &mut ha);
        let eb = uplift_and_erode(b, &drainage, k, u, 0.5, n_exp, 1e4, &mut hb);
        assert_eq!(ea.unwrap().to_bits(), eb.unwrap().to_bits(), "{what}");
        assert!(
            ha.iter().zip(&hb).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{what} n = {n_exp}: the solves differ"
        );
    }
}
