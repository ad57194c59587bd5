//! Flow routing speed: ms per call for each phase on a noisy, pit-rich terrain.
//!
//! `cargo bench -p orogen-core --bench flow` (optionally `-- 256 512` to pick sizes).

use std::hint::black_box;
use std::time::Instant;

use orogen_core::flow::accumulate::PointerJumpScratch;
use orogen_core::flow::{
    accumulate, water_surface, water_surface_pointer_jumping, FlowRouter, OutletParams, SinkMode,
};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Value noise (two octaves) plus white noise: ridges, valleys and many small pits.
fn terrain(side: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut h = vec![0.0f32; side * side];
    for (cells, amp) in [(side / 64 + 2, 400.0f32), (side / 16 + 2, 80.0)] {
        let lattice: Vec<f32> = (0..cells * cells)
            .map(|_| rng.random_range(0.0..amp))
            .collect();
        let scale = (cells - 1) as f32 / side as f32;
        for y in 0..side {
            for x in 0..side {
                let (fx, fy) = (x as f32 * scale, y as f32 * scale);
                let (x0, y0) = (fx as usize, fy as usize);
                let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
                let l = |i: usize, j: usize| lattice[j * cells + i];
                let a = l(x0, y0) * (1.0 - tx) + l(x0 + 1, y0) * tx;
                let b = l(x0, y0 + 1) * (1.0 - tx) + l(x0 + 1, y0 + 1) * tx;
                h[y * side + x] += a * (1.0 - ty) + b * ty;
            }
        }
    }
    for v in h.iter_mut() {
        *v += rng.random_range(0.0..5.0);
    }
    h
}

/// Process CPU time (all threads), ms, from `/proc/self/stat`; `None` off Linux.
fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0) // USER_HZ is 100 on Linux.
}

/// FNV-1a over the routed graph and the drainage: equal across versions means the same results.
fn checksum(graph: &orogen_core::flow::FlowGraph, basins: &[u32], drainage: &[f32]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let words = graph
        .receivers
        .iter()
        .chain(&graph.stack)
        .chain(basins)
        .copied()
        .chain(graph.dist.iter().chain(drainage).map(|v| v.to_bits()));
    for w in words {
        for b in w.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Best-of-`reps` milliseconds for `f`.
fn time_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    best
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if args.is_empty() {
        vec![256, 512, 1024, 2048]
    } else {
        args
    };
    println!(
        "threads: {}  (best of N runs, ms per call)",
        rayon::current_num_threads()
    );
    println!(
        "{:>6} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10}  {:>16}",
        "side",
        "lakes",
        "receivers",
        "carve",
        "fill",
        "accum",
        "surface",
        "surf-jump",
        "route+accum",
        "(cpu ms)",
        "checksum"
    );
    for side in sizes {
        let grid = Grid::new(side, side, 100.0).unwrap();
        let n = grid.len();
        let base = terrain(side, 1);
        let mut router = FlowRouter::new(grid, &OutletParams::default()).unwrap();
        let areas = vec![grid.cell_area(); n];
        let mut out = vec![0.0f32; n];
        let mut heights = base.clone();
        let reps = if side >= 2048 { 3 } else { 7 };

        let receivers = time_ms(reps, || router.steepest_descent(black_box(&base)).unwrap());
        let lakes = router.roots().len() - router.outlet_root_count();
        // Lake routing alone: a fresh (untimed) descent before each timed resolution.
        let mut resolve = |mode: SinkMode, heights: &mut Vec<f32>| {
            let mut best = f64::INFINITY;
            for _ in 0..reps {
                heights.copy_from_slice(&base);
                router.steepest_descent(heights).unwrap();
                let t = Instant::now();
                router.resolve_sinks(heights, mode).unwrap();
                best = best.min(t.elapsed().as_secs_f64() * 1e3);
            }
            best
        };
        let carve = resolve(SinkMode::Carve, &mut heights);
        let fill = resolve(SinkMode::Fill { epsilon: 0.0 }, &mut heights);
        heights.copy_from_slice(&base);
        router.route(&mut heights, SinkMode::Carve).unwrap();
        let accum = time_ms(reps, || {
            accumulate(router.graph(), &areas, black_box(&mut out))
        });
        let surface = time_ms(reps, || {
            water_surface(router.graph(), &heights, 0.0, &mut out)
        });
        let mut scratch = PointerJumpScratch::default();
        let jump = time_ms(reps, || {
            water_surface_pointer_jumping(router.graph(), &heights, 0.0, &mut out, &mut scratch)
        });
        let cpu_before = cpu_ms();
        let total = time_ms(reps, || {
            let g = router.route(&mut heights, SinkMode::Carve).unwrap();
            accumulate(g, &areas, &mut out);
        });
        // Mean CPU time per call over every thread: what the machine spent, whatever
        // other processes took from the wall clock (with several threads it includes
        // rayon workers spinning while they wait; run with RAYON_NUM_THREADS=1 for the
        // single-core cost).
        let cpu = match (cpu_before, cpu_ms()) {
            (Some(a), Some(b)) => (b - a) / reps as f64,
            _ => f64::NAN,
        };
        let sum = checksum(router.graph(), router.basins(), &out);
        println!(
            "{:>6} {:>8} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>12.2} {:>10.1}  {:016x}",
            side, lakes, receivers, carve, fill, accum, surface, jump, total, cpu, sum
        );
    }
}
