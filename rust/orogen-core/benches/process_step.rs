//! One whole process step through the public API, ms per step: stream power
//! (`StreamPower::step`: route, lakes, uplift, accumulate, implicit solve) and thermal
//! (`Thermal::step`), on the erosion bench's terrain. Run before and after a change to the
//! core's shape to see that the shape costs nothing: `cargo bench -p orogen-core --bench
//! process_step [-- 512 1024 2048]`.

use std::time::Instant;

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::eroders::thermal::{self, TalusAngle, Thermal};
use orogen_core::flow::{OutletParams, RasterGrid};
use orogen_core::state::{Layers, TerrainMut};
use orogen_core::Grid;

/// Uniform noise in [0, 1) m from a SplitMix64 hash of the cell index (as the erosion bench).
fn initial_terrain(size: usize) -> Vec<f32> {
    (0..(size * size) as u64)
        .map(|i| {
            let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0x0E05);
            x ^= x >> 30;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^= x >> 27;
            x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^= x >> 31;
            ((x >> 40) as f64 / (1u64 << 24) as f64) as f32
        })
        .collect()
}

fn main() {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![512, 1024, 2048];
    }
    println!(
        "Process steps, ms per step, best of 3 runs ({} rayon threads)",
        rayon::current_num_threads()
    );
    println!(
        "{:>6} {:>6} {:>14} {:>10}",
        "size", "steps", "stream power", "thermal"
    );
    for size in sizes {
        let steps = match size {
            0..=512 => 20,
            513..=1024 => 10,
            _ => 5,
        };
        let grid = Grid::new(size, size, 100.0).unwrap();
        let n = grid.len();
        let (mut best_sp, mut best_th) = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let mut h = initial_terrain(size);
            let mut layers = Layers::none();
            let inputs = Inputs {
                k: vec![5e-6; n],
                uplift: vec![1e-3; n],
                precipitation: None,
            };
            let mut sp = StreamPower::on_grid(
                grid,
                &OutletParams::default(),
                &Params::default(),
                inputs,
                false,
                "sp",
            )
            .unwrap();
            let t = Instant::now();
            for _ in 0..steps {
                sp.step(&mut TerrainMut::new(&mut h, &mut layers), 5e4)
                    .unwrap();
            }
            best_sp = best_sp.min(t.elapsed().as_secs_f64() * 1e3 / steps as f64);
            let params = thermal::Params {
                talus: TalusAngle::Constant(30.0),
                rate: 0.5,
                tolerance: 0.0,
            };
            let mut th = Thermal::new(RasterGrid::new(grid, &[]), params, 1, &h, "th").unwrap();
            let t = Instant::now();
            for _ in 0..steps {
                th.step(&mut TerrainMut::new(&mut h, &mut layers));
            }
            best_th = best_th.min(t.elapsed().as_secs_f64() * 1e3 / steps as f64);
        }
        println!("{size:>6} {steps:>6} {best_sp:>14.2} {best_th:>10.2}");
    }
}
