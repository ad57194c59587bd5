//! Noise terrain generation speed: million cells per second for 8-octave fBm, ridged and
//! warped fBm at 1025² and 4097² (the default recipe's noise, amplitude aside).
//!
//! `cargo bench -p orogen-core --bench noise` (optionally `-- 513 1025` to pick sizes, and
//! words such as `ridged` to keep only the cases whose names contain one of them).

use std::hint::black_box;
use std::time::Instant;

use orogen_core::generators::noise::{generate, NoiseBasis, NoiseKind, NoiseParams, Warp};
use orogen_core::Grid;

#[path = "common/mod.rs"]
mod common;
use common::cpu_secs;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.parse::<usize>().is_err() && !a.starts_with('-'))
        .collect();
    let sizes = if args.is_empty() {
        vec![1025, 4097]
    } else {
        args
    };
    let fbm = NoiseParams {
        octaves: 8,
        ..Default::default()
    };
    let cases: Vec<(&str, NoiseParams)> = vec![
        ("fbm 8 oct", fbm.clone()),
        (
            "ridged 8 oct",
            NoiseParams {
                kind: NoiseKind::Ridged,
                ..fbm.clone()
            },
        ),
        (
            "fbm 8 oct + warp 2 oct",
            NoiseParams {
                warp: Some(Warp::default()),
                ..fbm.clone()
            },
        ),
        (
            "fbm 8 oct OpenSimplex",
            NoiseParams {
                basis: NoiseBasis::OpenSimplex,
                ..fbm.clone()
            },
        ),
    ];
    let cases: Vec<_> = cases
        .into_iter()
        .filter(|(name, _)| words.is_empty() || words.iter().any(|w| name.contains(w.as_str())))
        .collect();
    println!(
        "threads: {}  (best of 3 runs at sizes up to 2049, 1 run above)",
        rayon::current_num_threads()
    );
    // "cpu ms" is the CPU time of the fastest run, all threads; "Mcells/cpu-s" is the
    // speed per busy core, which other processes on the machine hardly change.
    println!(
        "{:<24} {:>6} {:>10} {:>12} {:>10} {:>14}",
        "case", "side", "ms", "Mcells/s", "cpu ms", "Mcells/cpu-s"
    );
    for &side in &sizes {
        let grid = Grid::new(side, side, 100.0).expect("bench grid");
        for (name, params) in &cases {
            let reps = if side <= 2049 { 3 } else { 1 };
            let (mut best, mut best_cpu) = (f64::INFINITY, f64::NAN);
            for _ in 0..reps {
                let (t, c) = (Instant::now(), cpu_secs());
                let h = generate(params, grid, 1).expect("noise");
                let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_secs() - c);
                if wall < best {
                    (best, best_cpu) = (wall, cpu);
                }
                black_box(&h);
            }
            let mcells = grid.len() as f64 / 1e6;
            println!(
                "{:<24} {:>6} {:>10.1} {:>12.2} {:>10.1} {:>14.2}",
                name,
                side,
                best * 1e3,
                mcells / best,
                best_cpu * 1e3,
                mcells / best_cpu
            );
        }
    }
}
