//! Milliseconds per stream-power step, CPU (orogen-core, all cores) against GPU, on the
//! issue #42 parameters (dx 100 m, dt 1e4 yr, K 2e-4, m 0.5, n 1, U 1e-3 m/yr) from the same
//! start, with `lakes: None` on both sides (the GPU step has no lakes yet).
//!
//!   cargo run --release -p orogen-gpu --example bench -- [SIZE...] [--steps N]
//!
//! Sizes default to 512 1024 2048 4096. Each side runs 2 warm-up steps, then N timed steps
//! (default 10); the GPU's time includes waiting for it, not reading heights back; then
//! N routes alone (receivers and drainage, no solve). Prints a Markdown table and the mean
//! heights (they should agree).

use std::time::Instant;

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::Grid;
use orogen_gpu::{GpuContext, GpuStreamPower};

fn main() {
    if let Err(e) = run() {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut sizes = Vec::new();
    let mut steps = 10usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--steps" {
            let v = args.next().ok_or("--steps needs a count")?;
            steps = v
                .parse()
                .map_err(|_| format!("--steps: `{v}` is not a count"))?;
        } else {
            sizes.push(
                a.parse::<usize>()
                    .map_err(|_| format!("`{a}` is not a grid side"))?,
            );
        }
    }
    if sizes.is_empty() {
        sizes = vec![512, 1024, 2048, 4096];
    }
    let ctx = GpuContext::new().map_err(|e| e.to_string())?;
    println!(
        "GPU: {}; CPU: {} threads; {steps} steps after 2 warm-up",
        ctx.describe(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!();
    println!(
        "| grid | CPU ms/step | GPU ms/step | of which receivers + drainage | CPU/GPU \
         | mean h CPU | mean h GPU |"
    );
    println!("|---|---|---|---|---|---|---|");
    let params = Params {
        m: 0.5,
        n: 1.0,
        lakes: SinkMode::None,
    };
    let (dt, k, u) = (1e4, 2e-4f32, 1e-3f32);
    for side in sizes {
        let grid = Grid::new(side, side, 100.0).map_err(|e| e.to_string())?;
        let n = grid.len();
        // A reproducible start without pits (the GPU step has no lakes yet, and held pits
        // make flats where rounding decides the routing): one metre per cell from the
        // nearest border plus up to half a metre of noise, a hash of the index.
        let start: Vec<f32> = (0..n as u64)
            .map(|i| {
                let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
                x ^= x >> 31;
                x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
                x ^= x >> 29;
                let noise = (x >> 40) as f32 / (1u64 << 24) as f32 * 0.5;
                let (cx, cy) = (i as usize % side, i as usize / side);
                let border = cx.min(cy).min(side - 1 - cx).min(side - 1 - cy);
                border as f32 + noise
            })
            .collect();
        let inputs = || Inputs {
            k: vec![k; n],
            uplift: vec![u; n],
            precipitation: None,
        };
        let outlets = OutletParams::default();
        let mut cpu = StreamPower::on_grid(grid, &outlets, &params, inputs(), false, "cpu")
            .map_err(|e| e.to_string())?;
        let mut h = start.clone();
        for _ in 0..2 {
            cpu.step_heights(&mut h, dt).map_err(|e| e.to_string())?;
        }
        let t = Instant::now();
        for _ in 0..steps {
            cpu.step_heights(&mut h, dt).map_err(|e| e.to_string())?;
        }
        let cpu_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let mut gpu = GpuStreamPower::on_grid(&ctx, grid, &outlets, &params, inputs(), "gpu")
            .map_err(|e| e.to_string())?;
        gpu.set_heights(&start).map_err(|e| e.to_string())?;
        for _ in 0..2 {
            gpu.step(dt).map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let t = Instant::now();
        for _ in 0..steps {
            gpu.step(dt).map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let gpu_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let g = gpu.heights().map_err(|e| e.to_string())?;
        // The same step without the solve: receivers and drainage only.
        let t = Instant::now();
        for _ in 0..steps {
            gpu.route().map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let route_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let mean = |v: &[f32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        println!(
            "| {side}² | {cpu_ms:.2} | {gpu_ms:.2} | {route_ms:.2} | {:.2} | {:.3} | {:.3} |",
            cpu_ms / gpu_ms,
            mean(&h),
            mean(&g)
        );
    }
    Ok(())
}
