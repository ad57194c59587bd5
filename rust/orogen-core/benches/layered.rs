//! Layered thermal and wind erosion speed: median ms per step on a rough terrain with four
//! layers (so every cell has work: most slopes exceed their talus, sand everywhere).
//!
//! `cargo bench -p orogen-core --bench layered` (optionally `-- 256 512` to pick sizes,
//! `wind` or `thermal` to run one process only, `dir=D` for one wind direction, `steps=N`
//! for N timed steps).

use std::hint::black_box;
use std::time::Instant;

use orogen_core::eroders::layered_thermal::{self, LayeredThermal};
use orogen_core::eroders::wind::{self, Wind};
use orogen_core::state::{Layers, MaterialProps, TerrainMut};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const LAYERS: usize = 4;

/// Rough bedrock (0..40 m of white noise on 10 m cells) under four layers 0..2 m thick.
fn terrain(side: usize) -> (Vec<f32>, Layers) {
    let n = side * side;
    let mut rng = ChaCha8Rng::seed_from_u64(side as u64);
    let layers: Vec<(String, Vec<f32>)> = (0..LAYERS)
        .map(|k| {
            let t = (0..n).map(|_| rng.random_range(0.0..2.0f32)).collect();
            (format!("layer{k}"), t)
        })
        .collect();
    let layers = Layers::new(layers, n).unwrap();
    let surface = (0..n)
        .map(|i| rng.random_range(0.0..40.0f32) + layers.total(i))
        .collect();
    (surface, layers)
}

fn materials() -> Vec<MaterialProps> {
    (0..=LAYERS)
        .map(|k| MaterialProps {
            talus_deg: 25.0 + 8.0 * k as f32,
            thermal_susceptibility: 0.9 - 0.15 * k as f32,
            wind_resistance: (0.25 * k as f32).min(1.0),
            ..Default::default()
        })
        .collect()
}

/// CPU seconds this process has used (user + system), from `/proc/self/stat`; 0 elsewhere.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses): utime is the 12th, stime
    // the 13th, in clock ticks (100 per second on Linux).
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Runs `step` once to warm up, then `steps` times: the wall ms of each timed step, and
/// the CPU ms per timed step (all threads).
fn time_steps(steps: usize, mut step: impl FnMut()) -> (Vec<f64>, f64) {
    step();
    let cpu0 = cpu_seconds();
    let times = (0..steps)
        .map(|_| {
            let t = Instant::now();
            step();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    (times, (cpu_seconds() - cpu0) * 1e3 / steps as f64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<usize> = words.iter().filter_map(|a| a.parse().ok()).collect();
    let only_wind = words.iter().any(|w| w == "wind");
    let only_thermal = words.iter().any(|w| w == "thermal");
    let steps_arg: Option<usize> = words
        .iter()
        .find_map(|w| w.strip_prefix("steps=").and_then(|v| v.parse().ok()));
    let dirs: Vec<f32> = match words
        .iter()
        .find_map(|w| w.strip_prefix("dir=").and_then(|v| v.parse().ok()))
    {
        Some(d) => vec![d],
        None => vec![0.0, 30.0, 90.0],
    };
    let sizes = if args.is_empty() {
        vec![256, 1024]
    } else {
        args
    };
    let mats = materials();
    println!("threads: {}", rayon::current_num_threads());
    println!(
        "{:<16} {:>6} {:>7} {:>14} {:>14} {:>16} {:>16}",
        "process",
        "size",
        "layers",
        "ms/step (med)",
        "CPU ms/step",
        "B/cell buffers",
        "B/cell terrain"
    );
    println!("(CPU ms/step: user + system CPU time over the timed steps, all threads)");
    let terrain_bytes = 4 * (1 + LAYERS);
    for side in sizes {
        let grid = Grid::new(side, side, 10.0).unwrap();
        let steps = steps_arg.unwrap_or(if side >= 1024 { 15 } else { 40 });

        if !only_wind {
            let (mut s, mut l) = terrain(side);
            let params = layered_thermal::Params {
                tolerance: 0.0,
                ..Default::default()
            };
            let mut p = LayeredThermal::new(grid, params, 1).unwrap();
            let (times, cpu) = time_steps(steps, || {
                black_box(p.step(&mut TerrainMut::new(&mut s, &mut l), &mats).unwrap());
            });
            println!(
                "{:<16} {:>6} {:>7} {:>14.2} {:>14.1} {:>16} {:>16}",
                "layered thermal",
                format!("{side}²"),
                LAYERS,
                median(times),
                cpu,
                p.bytes_per_cell(),
                terrain_bytes
            );
        }
        if only_thermal {
            continue;
        }

        for &dir in &dirs {
            let (mut s, mut l) = terrain(side);
            let params = wind::Params {
                direction_deg: dir,
                ..Default::default()
            };
            let mut p = Wind::new(grid, params).unwrap();
            let (times, cpu) = time_steps(steps, || {
                black_box(p.step(&mut TerrainMut::new(&mut s, &mut l), &mats).unwrap());
            });
            println!(
                "{:<16} {:>6} {:>7} {:>14.2} {:>14.1} {:>16} {:>16}",
                format!("wind {dir}°"),
                format!("{side}²"),
                LAYERS,
                median(times),
                cpu,
                p.bytes_per_cell(),
                terrain_bytes
            );
        }
    }
}
