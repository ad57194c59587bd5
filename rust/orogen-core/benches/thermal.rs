//! Thermal erosion speed: ms per step at 256², 512², 1024² and 2048² on a rough terrain
//! where most slopes exceed the talus (so every pass does its full work).
//!
//! `cargo bench -p orogen-core --bench thermal` (optionally `-- 256 512` to pick sizes).

use std::hint::black_box;
use std::time::Instant;

use orogen_core::eroders::thermal::{talus_tangents, thermal_step, TalusAngle, ThermalBuffers};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
    let cell_size = 10.0f32;
    println!(
        "threads: {}  (mean over the steps; talus Constant(30))",
        rayon::current_num_threads()
    );
    println!(
        "{:>6} {:>6} {:>12} {:>12} {:>14}",
        "side", "steps", "ms/step", "Mcells/s", "max excess m"
    );
    for side in sizes {
        let mut rng = ChaCha8Rng::seed_from_u64(side as u64);
        // White noise of 0..50 m on 10 m cells: almost every cell is over its 30° talus.
        let mut h: Vec<f32> = (0..side * side)
            .map(|_| rng.random_range(0.0..50.0f32))
            .collect();
        let tan = talus_tangents(&TalusAngle::Constant(30.0), &h, side, cell_size, 1);
        let mut buf = ThermalBuffers::default();
        // One warm-up step sizes the buffers.
        thermal_step(&mut h, side, cell_size, &tan, 0.5, 0.0, &mut buf);
        let steps = (20 * 256 * 256 / (side * side)).clamp(3, 20);
        let t = Instant::now();
        let mut excess = 0.0;
        for _ in 0..steps {
            excess = thermal_step(&mut h, side, cell_size, &tan, 0.5, 0.0, &mut buf);
        }
        let ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        black_box(&h);
        println!(
            "{:>6} {:>6} {:>12.2} {:>12.1} {:>14.2}",
            side,
            steps,
            ms,
            (side * side) as f64 / ms / 1e3,
            excess
        );
    }
}
