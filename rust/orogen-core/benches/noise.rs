//! Noise terrain generation speed: million cells per second for 8-octave fBm, ridged and
//! warped fBm at 1025² and 4097² (the default recipe's noise, amplitude aside).
//!
//! `cargo bench -p orogen-core --bench noise` (optionally `-- 513 1025` to pick sizes).

use std::hint::black_box;
use std::time::Instant;

use orogen_core::generators::noise::{generate, NoiseBasis, NoiseKind, NoiseParams, Warp};
use orogen_core::Grid;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
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
    println!(
        "threads: {}  (best of 3 runs at sizes up to 2049, 1 run above)",
        rayon::current_num_threads()
    );
    println!(
        "{:<24} {:>6} {:>10} {:>12}",
        "case", "side", "ms", "Mcells/s"
    );
    for &side in &sizes {
        let grid = Grid::new(side, side, 100.0).expect("bench grid");
        for (name, params) in &cases {
            let reps = if side <= 2049 { 3 } else { 1 };
            let mut best = f64::INFINITY;
            for _ in 0..reps {
                let t = Instant::now();
                let h = generate(params, grid, 1).expect("noise");
                best = best.min(t.elapsed().as_secs_f64());
                black_box(&h);
            }
            println!(
                "{:<24} {:>6} {:>10.1} {:>12.2}",
                name,
                side,
                best * 1e3,
                grid.len() as f64 / best / 1e6
            );
        }
    }
}
