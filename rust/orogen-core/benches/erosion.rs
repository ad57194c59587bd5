//! Erosion speed: ms per iteration for each phase of a stream-power step (receivers, lake
//! routing, accumulation, implicit stream-power solve with uplift) plus a thermal step, on
//! the grid, parameters, initial terrain and step counts of `benches/fastscapelib_peer.py`.
//! The mean step is also split into the first step, which faults in the memory the router's
//! lake buffers grow to, and the mean of the later ones.
//!
//! `cargo bench -p orogen-core --bench erosion` (optionally `-- 256 512` to pick sizes,
//! `-- --json OUT.json` to also write the figures). `scripts/bench-vs-fastscapelib.sh`
//! runs both and prints the speedup.

use std::time::Instant;

use orogen_core::eroders::stream_power::{uplift_and_erode_in_parts, NodeValues};
use orogen_core::eroders::thermal::{talus_tangents, thermal_step, TalusAngle, ThermalBuffers};
use orogen_core::flow::{accumulate_f64_in_parts, FlowRouter, OutletParams, SinkMode, WALK_PARTS};
use orogen_core::Grid;
use rayon::prelude::*;

// Keep in step with fastscapelib_peer.py.
const CELL: f32 = 100.0;
const UPLIFT: f32 = 1e-3;
const K: f32 = 5e-6;
const M: f64 = 0.5;
const N: f64 = 1.0;
const DT: f64 = 5e4;
const SEED: u64 = 0x0E05;

/// Steps timed at each size (the Python peer uses the same table).
fn steps_for(size: usize) -> usize {
    match size {
        256 | 512 => 20,
        1024 => 10,
        _ => 5,
    }
}

/// Uniform noise in [0, 1) m from a SplitMix64 hash of the cell index (bit-identical to
/// `initial_terrain` in fastscapelib_peer.py).
fn initial_terrain(size: usize) -> Vec<f32> {
    (0..(size * size) as u64)
        .map(|i| {
            let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(SEED);
            x ^= x >> 30;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^= x >> 27;
            x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^= x >> 31;
            ((x >> 40) as f64 / (1u64 << 24) as f64) as f32
        })
        .collect()
}

#[derive(Default)]
struct Phases {
    receivers: f64,
    lakes: f64,
    accumulate: f64,
    stream_power: f64,
    thermal: f64,
    /// The first step's total, and the mean total of the later ones: the first also faults
    /// in the memory the router's buffers grow to (sized by the lakes, so not at creation).
    first: f64,
    later: f64,
}

impl Phases {
    /// The stream-power step so far: every phase but thermal.
    fn total(&self) -> f64 {
        self.receivers + self.lakes + self.accumulate + self.stream_power
    }
}

/// `n` copies of `value`, every page written (as `StreamPower`'s buffers are).
fn written<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, value);
    v
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn run(size: usize) -> (Phases, usize, f32) {
    let grid = Grid::new(size, size, CELL).expect("grid");
    let n = grid.len();
    let mut router = FlowRouter::new(grid, &OutletParams::default()).expect("router");
    let mut h = initial_terrain(size);
    let uplift = vec![UPLIFT; n];
    let k = vec![K; n];
    // f64 weights and sums kept between steps, as `StreamPower` keeps them. Like its
    // buffers they are written when made: `vec![0.0; n]` would map untouched zero pages and
    // charge the first step for faulting in 50 MB that `StreamPower` faults in at creation.
    let weights = vec![grid.cell_area() as f64; n];
    let mut sums = written(n, 0.0f64);
    let mut drainage = written(n, 0.0f32);
    let steps = steps_for(size);
    let mut p = Phases::default();
    for step in 0..steps {
        let before = p.total();
        let t = Instant::now();
        router.steepest_descent(&h).expect("descent");
        p.receivers += ms_since(t);
        let t = Instant::now();
        router
            .resolve_sinks(&mut h, SinkMode::Carve)
            .expect("lakes");
        p.lakes += ms_since(t);
        let g = router.graph();
        let t = Instant::now();
        // As `StreamPower` does: the trees dealt into parts once for both walks.
        let parts = g.tree_parts(WALK_PARTS);
        accumulate_f64_in_parts(g, &parts, &weights, &mut sums);
        // As `StreamPower` rounds the sums to its drainage map.
        drainage
            .par_iter_mut()
            .with_min_len(1 << 14)
            .zip(sums.par_iter())
            .for_each(|(d, &a)| *d = a as f32);
        p.accumulate += ms_since(t);
        let t = Instant::now();
        let (kv, uv) = (NodeValues::from_slice(&k), NodeValues::from_slice(&uplift));
        uplift_and_erode_in_parts(g, &parts, &drainage, kv, uv, M, N, DT, &mut h).expect("solve");
        p.stream_power += ms_since(t);
        let took = p.total() - before;
        if step == 0 {
            p.first = took;
        } else {
            p.later += took / (steps - 1) as f64;
        }
    }
    let max_h = h.iter().copied().fold(f32::MIN, f32::max);
    // Thermal, on the eroded terrain (not part of the fastscapelib comparison).
    let tan = talus_tangents(&TalusAngle::Constant(30.0), &h, size, CELL, SEED);
    let mut buf = ThermalBuffers::default();
    for _ in 0..steps {
        let t = Instant::now();
        thermal_step(&mut h, size, CELL, &tan, 0.5, 0.0, &mut buf);
        p.thermal += ms_since(t);
    }
    let s = steps as f64;
    p.receivers /= s;
    p.lakes /= s;
    p.accumulate /= s;
    p.stream_power /= s;
    p.thermal /= s;
    (p, steps, max_h)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let json_out = args.iter().position(|a| a == "--json").map(|i| {
        let path = args.get(i + 1).cloned().expect("--json needs a path");
        args.drain(i..i + 2);
        path
    });
    let mut sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![256, 512, 1024, 2048];
    }
    println!(
        "Orogen erosion, ms per iteration ({} rayon threads; total = receivers + lakes + \
         accumulate + stream power, thermal apart; first step = the first step's total, later \
         steps = the mean total of the others)",
        rayon::current_num_threads()
    );
    println!(
        "{:>6} {:>6} {:>10} {:>8} {:>11} {:>13} {:>9} {:>9} {:>10} {:>11} {:>11}",
        "size",
        "steps",
        "receivers",
        "lakes",
        "accumulate",
        "stream power",
        "total",
        "thermal",
        "max h (m)",
        "first step",
        "later steps"
    );
    let mut json = Vec::new();
    for size in sizes {
        let (p, steps, max_h) = run(size);
        let total = p.total();
        println!(
            "{size:>6} {steps:>6} {:>10.2} {:>8.2} {:>11.2} {:>13.2} {total:>9.2} {:>9.2} {max_h:>10.1} \
             {:>11.2} {:>11.2}",
            p.receivers, p.lakes, p.accumulate, p.stream_power, p.thermal, p.first, p.later
        );
        json.push(format!(
            "{{\"size\": {size}, \"steps\": {steps}, \"receivers\": {:.4}, \"lakes\": {:.4}, \
             \"accumulate\": {:.4}, \"stream_power\": {:.4}, \"total\": {total:.4}, \
             \"thermal\": {:.4}, \"max_height\": {max_h}, \"first_step\": {:.4}, \
             \"later_steps\": {:.4}}}",
            p.receivers, p.lakes, p.accumulate, p.stream_power, p.thermal, p.first, p.later
        ));
    }
    if let Some(path) = json_out {
        std::fs::write(&path, format!("[{}]\n", json.join(", "))).expect("write json");
    }
}
