//! The implicit stream-power solver against analytical steady states and brute-force roots,
//! over flow graphs built plainly here (priority-flood fill + D8 steepest descent), so the
//! solver is checked independently of `flow::`.

use crate::support::on_threads;
use orogen_core::eroders::stream_power::{
    apply_uplift, erosion_factors, solve_drop, solve_implicit, uplift_and_erode, NodeValues,
};
use orogen_core::flow::graph::FlowGraph;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A plain D8 router on a `w × h` grid with all four borders open: fills depressions with a
/// small gradient (priority flood), then sends each cell to its steepest lower neighbour.
fn route_filled(w: usize, h: usize, cell: f32, heights: &mut [f32]) -> FlowGraph {
    let n = w * h;
    let is_border = |i: usize| {
        let (x, y) = (i % w, i / w);
        x == 0 || y == 0 || x + 1 == w || y + 1 == h
    };
    let neighbours = |i: usize| {
        let (x, y) = ((i % w) as isize, (i / w) as isize);
        let mut out = Vec::with_capacity(8);
        for dy in -1..=1_isize {
            for dx in -1..=1_isize {
                if dx == 0 && dy == 0 {
                    continue;
                }
                let (nx, ny) = (x + dx, y + dy);
                if nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h {
                    let d = if dx != 0 && dy != 0 {
                        cell * std::f32::consts::SQRT_2
                    } else {
                        cell
                    };
                    out.push((ny as usize * w + nx as usize, d));
                }
            }
        }
        out
    };
    // Priority flood (Barnes 2014) with an epsilon gradient.
    #[derive(PartialEq)]
    struct Item(f32, usize);
    impl Eq for Item {}
    impl PartialOrd for Item {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Item {
        fn cmp(&self, o: &Self) -> Ordering {
            o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
        }
    }
    let mut seen = vec![false; n];
    let mut heap = BinaryHeap::new();
    for i in 0..n {
        if is_border(i) {
            seen[i] = true;
            heap.push(Item(heights[i], i));
        }
    }
    while let Some(Item(hc, c)) = heap.pop() {
        for (nb, _) in neighbours(c) {
            if seen[nb] {
                continue;
            }
            seen[nb] = true;
            let min = hc + (hc.abs() * 1e-6).max(1e-6);
            if heights[nb] < min {
                heights[nb] = min;
            }
            heap.push(Item(heights[nb], nb));
        }
    }
    // Steepest descent.
    let mut receivers: Vec<u32> = (0..n as u32).collect();
    let mut dist = vec![0.0_f32; n];
    for i in 0..n {
        if is_border(i) {
            continue;
        }
        let mut best = 0.0_f32;
        for (nb, d) in neighbours(i) {
            let s = (heights[i] - heights[nb]) / d;
            if s > best {
                best = s;
                receivers[i] = nb as u32;
                dist[i] = d;
            }
        }
        assert!(receivers[i] as usize != i, "filled surface left a pit");
    }
    let stack = build_stack(&receivers);
    FlowGraph {
        receivers,
        dist,
        stack,
        runs: Vec::new(),
        links: None,
    }
}

/// Outlets first, every receiver before its donors (depth-first from each outlet).
fn build_stack(receivers: &[u32]) -> Vec<u32> {
    let n = receivers.len();
    let mut donors: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, &r) in receivers.iter().enumerate() {
        if r as usize != i {
            donors[r as usize].push(i as u32);
        }
    }
    let mut stack = Vec::with_capacity(n);
    let mut todo = Vec::new();
    for (i, &r) in receivers.iter().enumerate() {
        if r as usize == i {
            todo.push(r);
            while let Some(c) = todo.pop() {
                stack.push(c);
                todo.extend(donors[c as usize].iter().copied());
            }
        }
    }
    assert_eq!(stack.len(), n, "receivers contain a cycle");
    stack
}

fn accumulate(g: &FlowGraph, weights: &[f32], out: &mut [f32]) {
    out.copy_from_slice(weights);
    for &i in g.stack.iter().rev() {
        let r = g.receivers[i as usize] as usize;
        if r != i as usize {
            out[r] += out[i as usize];
        }
    }
}

struct Sim {
    w: usize,
    h: usize,
    cell: f32,
    heights: Vec<f32>,
    uplift: Vec<f32>,
    k: Vec<f32>,
    m: f64,
    n: f64,
    dt: f64,
    graph: FlowGraph,
    area: Vec<f32>,
    factors: Vec<f64>,
}

impl Sim {
    #[allow(clippy::too_many_arguments)]
    fn new(side: usize, cell: f32, u: f32, k: f32, m: f64, n: f64, dt: f64, seed: u64) -> Sim {
        Sim::with_noise(side, cell, u, k, m, n, dt, seed, 1.0)
    }

    /// Initial heights: uniform noise in `[0, noise)` metres.
    #[allow(clippy::too_many_arguments)]
    fn with_noise(
        side: usize,
        cell: f32,
        u: f32,
        k: f32,
        m: f64,
        n: f64,
        dt: f64,
        seed: u64,
        noise: f32,
    ) -> Sim {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let len = side * side;
        let heights = (0..len).map(|_| noise * rng.random::<f32>()).collect();
        Sim {
            w: side,
            h: side,
            cell,
            heights,
            uplift: vec![u; len],
            k: vec![k; len],
            m,
            n,
            dt,
            graph: FlowGraph::default(),
            area: vec![0.0; len],
            factors: vec![0.0; len],
        }
    }

    /// One step; returns the largest |Δh| of the step (uplift and erosion together).
    fn step(&mut self) -> f32 {
        let before = self.heights.clone();
        self.graph = route_filled(self.w, self.h, self.cell, &mut self.heights);
        apply_uplift(
            &self.graph.receivers,
            &self.uplift,
            self.dt,
            &mut self.heights,
        );
        let weights = vec![self.cell * self.cell; self.w * self.h];
        accumulate(&self.graph, &weights, &mut self.area);
        erosion_factors(
            &self.graph.receivers,
            &self.graph.dist,
            &self.area,
            &self.k,
            self.m,
            self.n,
            self.dt,
            &mut self.factors,
        );
        solve_implicit(
            &self.graph.receivers,
            &self.graph.stack,
            &self.factors,
            self.n,
            &mut self.heights,
        )
        .expect("solve");
        before
            .iter()
            .zip(&self.heights)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max)
    }

    /// Steps until the largest change is under `tol` metres; panics after `max_steps`.
    fn run_to_steady(&mut self, tol: f32, max_steps: usize) -> usize {
        for s in 0..max_steps {
            if self.step() < tol {
                return s + 1;
            }
        }
        panic!("no steady state after {max_steps} steps");
    }

    /// Least-squares fit of ln S against ln A over cells with A above `threshold` (m²):
    /// returns (exponent, exp(intercept), cell count).
    fn slope_area_fit(&self, threshold: f32) -> (f64, f64, usize) {
        let g = &self.graph;
        let (mut sx, mut sy, mut sxx, mut sxy, mut cnt) = (0.0, 0.0, 0.0, 0.0, 0usize);
        for i in 0..self.heights.len() {
            let r = g.receivers[i] as usize;
            if r == i || self.area[i] < threshold {
                continue;
            }
            let s = (self.heights[i] as f64 - self.heights[r] as f64) / g.dist[i] as f64;
            assert!(s > 0.0, "channel cell {i} not above its receiver");
            let (x, y) = ((self.area[i] as f64).ln(), s.ln());
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
            cnt += 1;
        }
        let c = cnt as f64;
        let b = (c * sxy - sx * sy) / (c * sxx - sx * sx);
        let a = (sy - b * sx) / c;
        (b, a.exp(), cnt)
    }

    fn max_height(&self) -> f32 {
        self.heights.iter().copied().fold(f32::MIN, f32::max)
    }
}

fn check_steady_state(n: f64, m: f64, u: f32, k: f32, dt: f64) {
    let mut sim = Sim::new(101, 100.0, u, k, m, n, dt, 11);
    let steps = sim.run_to_steady(2e-3, 3000);
    let (exponent, intercept, cells) = sim.slope_area_fit(20.0 * 100.0 * 100.0);
    let expected = ((u / k) as f64).powf(1.0 / n);
    eprintln!(
        "n={n}: steady after {steps} steps, {cells} channel cells, exponent {exponent:.4} \
         (expected {:.4}), intercept {intercept:.4} (expected {expected:.4}), max h {}",
        -m / n,
        sim.max_height()
    );
    assert!(cells > 500, "too few channel cells: {cells}");
    assert!((exponent + m / n).abs() <= 0.02, "exponent {exponent}");
    assert!(
        (intercept / expected - 1.0).abs() <= 0.05,
        "intercept {intercept} vs {expected}"
    );
}

#[test]
fn steady_state_slope_area_n1() {
    check_steady_state(1.0, 0.5, 1e-3, 1e-5, 1e5);
}

#[test]
fn steady_state_slope_area_n2() {
    check_steady_state(2.0, 1.0, 1e-3, 1e-9, 1e5);
}

#[test]
fn steady_state_slope_area_n07() {
    check_steady_state(0.7, 0.35, 1e-3, 2e-5, 1e5);
}

#[test]
fn steady_state_height_scales_with_u_over_k() {
    // Doubling u at fixed k doubles u/k; the initial noise (1 mm) only breaks ties, so both
    // runs grow the same network and the relief must double (Cordonnier 2016 §7: h_max ∝ u/k).
    let mut a = Sim::with_noise(101, 100.0, 1e-3, 1e-5, 0.5, 1.0, 1e5, 5, 1e-3);
    let mut b = Sim::with_noise(101, 100.0, 2e-3, 1e-5, 0.5, 1.0, 1e5, 5, 1e-3);
    a.run_to_steady(2e-3, 3000);
    b.run_to_steady(2e-3, 3000);
    let ratio = b.max_height() / a.max_height();
    eprintln!(
        "max heights {} and {}: ratio {ratio}",
        a.max_height(),
        b.max_height()
    );
    assert!((ratio - 2.0).abs() <= 0.06, "ratio {ratio}");
}

/// A random tree: node 0 is the outlet, node i drains to a random earlier node.
fn random_tree(len: usize, rng: &mut ChaCha8Rng) -> (Vec<u32>, Vec<u32>) {
    let mut receivers = vec![0_u32; len];
    for (i, r) in receivers.iter_mut().enumerate().skip(1) {
        *r = rng.random_range(0..i as u32);
    }
    let stack = build_stack(&receivers);
    (receivers, stack)
}

/// Root of d − d0 + F·dⁿ in (0, d0] by plain bisection in f64.
fn bisect_drop(d0: f64, f: f64, n: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, d0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid - d0 + f * mid.powf(n) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

#[test]
fn newton_matches_implicit_equation_on_random_graphs() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for &n in &[2.0, 0.7, 1.0, 1.5, 0.4, 3.0] {
        let len = 2000;
        let (receivers, stack) = random_tree(len, &mut rng);
        let old: Vec<f32> = (0..len).map(|_| rng.random_range(0.0..100.0)).collect();
        let factors: Vec<f64> = (0..len)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    10f64.powf(rng.random_range(-4.0..3.0))
                }
            })
            .collect();
        let mut heights = old.clone();
        solve_implicit(&receivers, &stack, &factors, n, &mut heights).expect("solve");
        let mut eroded = 0;
        for i in 1..len {
            let r = receivers[i] as usize;
            let h_r = heights[r] as f64;
            let d0 = old[i] as f64 - h_r;
            if d0 <= 0.0 {
                // Not above its (new) receiver: a lake floor, left as it was.
                assert_eq!(heights[i], old[i], "node {i} below its receiver changed");
                continue;
            }
            eroded += 1;
            let reference = h_r + bisect_drop(d0, factors[i], n);
            let got = heights[i] as f64;
            assert!(
                (got - reference).abs() <= 1e-6 * reference.abs().max(1.0),
                "n={n} node {i}: {got} vs {reference}"
            );
            assert!(got > h_r || got == h_r && reference - h_r < 1e-5);
            assert!(got <= old[i] as f64);
        }
        assert!(eroded > len / 4, "n={n}: only {eroded} nodes eroded");
    }
}

#[test]
fn solve_drop_residual_is_tiny_over_random_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..20000 {
        let n = rng.random_range(0.2..4.0);
        let d0 = 10f64.powf(rng.random_range(-3.0..4.0));
        let f = 10f64.powf(rng.random_range(-6.0..6.0));
        let d = solve_drop(d0, f, n).expect("converges");
        assert!(d > 0.0 && d <= d0, "d={d} d0={d0}");
        let residual = d - d0 + f * d.powf(n);
        let scale = d0.max(f * d.powf(n));
        assert!(
            residual.abs() <= 1e-9 * scale,
            "n={n} d0={d0} f={f}: residual {residual}"
        );
    }
}

#[test]
fn solve_drop_rejects_unusable_factor() {
    assert!(solve_drop(1.0, f64::INFINITY, 2.0).is_err());
    assert!(solve_drop(1.0, f64::NAN, 2.0).is_err());
    assert!(solve_drop(1.0, -1.0, 2.0).is_err());
}

#[test]
fn uplift_skips_outlets() {
    let receivers = vec![0_u32, 0, 1, 3];
    let mut h = vec![0.0_f32; 4];
    apply_uplift(&receivers, &[1.0, 2.0, -1.0, 5.0], 10.0, &mut h);
    assert_eq!(h, vec![0.0, 20.0, -10.0, 0.0]);
}

#[test]
fn solver_bytes_do_not_depend_on_thread_count() {
    let run = |threads: usize| {
        on_threads(threads, || {
            let mut sim = Sim::new(64, 100.0, 1e-3, 1e-5, 0.4, 1.3, 5e4, 21);
            for _ in 0..5 {
                sim.step();
            }
            sim.heights
        })
    };
    let a = run(1);
    let b = run(4);
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
}

#[test]
fn fused_step_matches_the_three_passes_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for &(n, m) in &[(1.0, 0.5), (2.0, 1.0), (0.7, 0.35), (1.3, 0.6)] {
        let len = 3000;
        let (receivers, stack) = random_tree(len, &mut rng);
        let dist: Vec<f32> = (0..len)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    rng.random_range(50.0..150.0)
                }
            })
            .collect();
        let graph = FlowGraph {
            receivers,
            dist,
            stack,
            runs: Vec::new(),
            links: None,
        };
        let area: Vec<f32> = (0..len).map(|_| rng.random_range(1e4..1e8)).collect();
        let k: Vec<f32> = (0..len).map(|_| rng.random_range(0.0..2e-5)).collect();
        let uplift: Vec<f32> = (0..len).map(|_| rng.random_range(-1e-3..3e-3)).collect();
        let start: Vec<f32> = (0..len).map(|_| rng.random_range(0.0..500.0)).collect();
        let dt = 3e4;

        let mut three = start.clone();
        apply_uplift(&graph.receivers, &uplift, dt, &mut three);
        let mut factors = vec![0.0; len];
        erosion_factors(
            &graph.receivers,
            &graph.dist,
            &area,
            &k,
            m,
            n,
            dt,
            &mut factors,
        );
        let a = solve_implicit(&graph.receivers, &graph.stack, &factors, n, &mut three).unwrap();

        let mut fused = start.clone();
        let (kv, uv) = (NodeValues::PerNode(&k), NodeValues::PerNode(&uplift));
        let b = uplift_and_erode(&graph, &area, kv, uv, m, n, dt, &mut fused).unwrap();
        assert_eq!(a.to_bits(), b.to_bits());
        assert!(three
            .iter()
            .zip(&fused)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(three.iter().zip(&start).any(|(x, y)| x != y));

        // Uniform inputs take the monomorphised path: same bytes as the per-node maps.
        let (k1, u1) = (vec![k[0]; len], vec![uplift[0]; len]);
        let mut per_node = start.clone();
        let (kv, uv) = (NodeValues::PerNode(&k1), NodeValues::PerNode(&u1));
        uplift_and_erode(&graph, &area, kv, uv, m, n, dt, &mut per_node).unwrap();
        let mut uniform = start.clone();
        let (kv, uv) = (NodeValues::from_slice(&k1), NodeValues::from_slice(&u1));
        assert!(matches!(kv, NodeValues::Uniform(_)) && matches!(uv, NodeValues::Uniform(_)));
        uplift_and_erode(&graph, &area, kv, uv, m, n, dt, &mut uniform).unwrap();
        assert!(per_node
            .iter()
            .zip(&uniform)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
