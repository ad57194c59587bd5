//! Hydraulic erosion speed: ms per step (median of several) on 1024² and 2048×1024
//! terrains with four layers (and 1024² without layers), under uniform rain with open
//! borders, after a warm-up that wets the map.
//!
//! `cargo bench -p orogen-core --bench hydraulic`. Targets on 2 cores: 1024² with four
//! layers ≤ 26 ms per step; 2048×1024 ≥ 20 steps/s. On a shared machine the wall time
//! depends on the load, so the table also gives the process's CPU time per step (Linux,
//! from /proc/self/stat) divided by the thread count: the wall time the step would take
//! with the cores to itself, if it parallelised perfectly.

// The bench's terrain uses the platform's maths; the core uses orogen_core::math.
#![allow(clippy::disallowed_methods)]

use std::hint::black_box;
use std::time::Instant;

use orogen_core::eroders::hydraulic::{Borders, Hydraulic, Params, Rain};
use orogen_core::state::{Layers, MaterialProps, SimState, TerrainMut};
use orogen_core::Grid;

fn main() {
    println!(
        "threads: {}  (uniform rain, open borders; median of the timed steps)",
        rayon::current_num_threads()
    );
    println!(
        "{:>11} {:>6} {:>6} {:>10} {:>9} {:>16} {:>11}",
        "size", "layers", "steps", "ms/step", "steps/s", "cpu ms/thread", "bytes/cell"
    );
    for (w, h, nl) in [(1024, 1024, 0), (1024, 1024, 4), (2048, 1024, 4)] {
        let n = w * h;
        let grid = Grid::new(w, h, 1.0).unwrap();
        let mut surface: Vec<f32> = (0..n)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                50.0 + 0.02 * (w as f32 - x)
                    + 3.0 * (x * 0.031).sin() * (y * 0.027).cos()
                    + 0.5 * (x * 0.17 + y * 0.11).sin()
            })
            .collect();
        let mut layers = Layers::new(
            (0..nl)
                .map(|k| (format!("l{k}"), vec![0.2 + 0.1 * k as f32; n]))
                .collect(),
            n,
        )
        .unwrap();
        let materials: Vec<MaterialProps> = (0..=nl)
            .map(|k| MaterialProps {
                dissolubility: 1.0 / (1.0 + k as f32),
                ..MaterialProps::default()
            })
            .collect();
        let params = Params {
            rain: Rain::Uniform { rate_m_per_s: 2e-3 },
            borders: Borders::Open,
            ..Params::default()
        };
        let mut hy = Hydraulic::new(grid, params, 1).unwrap();
        let mut sim = SimState::default();
        let mut t = TerrainMut::new(&mut surface, &mut layers);
        for _ in 0..10 {
            hy.step(&mut t, &mut sim, &materials).unwrap();
        }
        let steps = 30;
        let cpu0 = cpu_ms();
        let mut times: Vec<f64> = (0..steps)
            .map(|_| {
                let t0 = Instant::now();
                black_box(hy.step(&mut t, &mut sim, &materials).unwrap());
                t0.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let cpu = match (cpu0, cpu_ms()) {
            (Some(a), Some(b)) => format!(
                "{:.2}",
                (b - a) / steps as f64 / rayon::current_num_threads() as f64
            ),
            _ => "-".to_string(),
        };
        times.sort_by(|a, b| a.total_cmp(b));
        let ms = times[steps / 2];
        // Surface and layers, the simulation state (water, sediment, 4 fluxes, velocity)
        // and the process's own scratch.
        let bytes = 4 * (1 + nl) + 4 * (1 + 1 + 4 + 2) + Hydraulic::SCRATCH_BYTES_PER_CELL;
        println!(
            "{:>11} {:>6} {:>6} {:>10.2} {:>9.1} {:>16} {:>11}",
            format!("{w}x{h}"),
            nl,
            steps,
            ms,
            1e3 / ms,
            cpu,
            bytes
        );
    }
}

/// User + system CPU time of this process so far, ms (Linux; clock ticks of 10 ms).
fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime is the 12th, stime
    // the 13th of them.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0)
}
