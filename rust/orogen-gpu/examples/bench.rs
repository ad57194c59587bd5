//! Milliseconds per stream-power step, CPU (orogen-core, all cores) against GPU, on the
//! issue #42 parameters (dx 100 m, dt 1e4 yr, K 2e-4, m 0.5, n 1, U 1e-3 m/yr) from the same
//! start, with the same lake routing on both sides (`--lakes carve`, the issue's, by default).
//!
//!   cargo run --release -p orogen-gpu --example bench -- [SIZE...] [--steps N]
//!       [--lakes none|carve|fill] [--start ramp|noise|uniform] [--n N] [--dump DIR]
//!
//! `--profile` then times `N` more GPU steps phase by phase (`GpuStreamPower::profile_step`:
//! timestamp queries where the adapter has them, else the wall clock with a wait after each
//! phase) and prints the mean per phase, with the longest chain of receivers in cells and in
//! tile exits (the pointer-jumping rounds run over about `log2` of each).
//!
//! `--dump DIR` writes each size's start as `DIR/start-SIZE.f32` (little-endian f32, rows
//! north to south), so a peer (scripts/gpu-side-by-side.sh runs fastflowx) starts from the
//! same heights.
//!
//! `--n` sets the slope exponent (default 1, the issue's; other values take the GPU's
//! per-node Newton solve, one dispatch per level of the longest chain of receivers).
//!
//! `--start ramp` (default): a metre per cell from the nearest border plus half a metre of
//! noise, no pits; `--start uniform`: uniform noise in [0, 1) m, the start (as
//! fastflowx's `torch.rand`); `--start noise`: 0.2 m per cell plus 5 m of noise, a pit
//! every few cells (the first step routes hundreds of lakes per 10,000 cells; later steps
//! few, as the uplift of 10 m a step fills them).
//!
//! `--thermal`: milliseconds per thermal step instead (orogen-core's `Thermal` on all
//! cores against `GpuThermal`), 30° talus, rate 0.5, no tolerance, 10 m cells, on a rough
//! start (3 m of noise per cell over cliffs of 40 m every few cells), sizes defaulting to
//! 1024 2048 4096 8192.
//!
//! `--hydraulic`: milliseconds per step of the pipe model instead (orogen-core's
//! `Hydraulic` on all cores against `GpuHydraulic`, nothing read back between GPU steps),
//! default parameters (uniform rain, closed borders), Chézy 30, 1 m cells, on a noisy
//! tilted plane; sizes defaulting to 1024 2048 4096 8192.
//!
//! `--hydrology`: milliseconds for a `Hydrology` stage's routing and maps instead (the
//! CPU's `flow::hydrology::Hydrology::compute` against `GpuHydrology::maps`, read-back
//! included), carved lakes, on the `--start` terrain (default `uniform`: a lake every few
//! cells); sizes defaulting to 1024 2048 4096 8192.
//!
//! Sizes default to 512 1024 2048 4096. Each side runs 2 warm-up steps, then N timed steps
//! (default 10); the GPU's time includes waiting for it, not reading heights back; then
//! N routes alone (receivers and drainage, no solve). Prints a Markdown table and the mean
//! heights (they should agree).

use std::time::Instant;

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::eroders::thermal;
use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::neighbourhood::RasterGrid;
use orogen_core::Grid;
use orogen_gpu::{GpuContext, GpuStreamPower, GpuThermal};

/// The CPU time of this process so far (user + system, seconds; Linux's /proc/self/stat,
/// in clock ticks of 10 ms): on a software adapter (lavapipe) the GPU's work itself.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The longest chain of receivers, in cells, and in tile exits (cells whose receiver is in
/// another 16 x 16 tile, or themselves): tiles.wgsl's rounds run over the second; and how
/// many cells are exits.
fn chains(receivers: &[u32], width: usize) -> (u32, u32, usize) {
    let n = receivers.len();
    let tile = |i: usize| (i % width / 16, i / width / 16);
    // Depth below the root, in cells and in exits; u32::MAX while not known.
    let mut cells = vec![u32::MAX; n];
    let mut exits = vec![u32::MAX; n];
    let mut path = Vec::new();
    for start in 0..n {
        let mut i = start;
        while cells[i] == u32::MAX {
            let r = receivers[i] as usize;
            if r == i {
                cells[i] = 1;
                exits[i] = 1;
                break;
            }
            path.push(i);
            i = r;
        }
        while let Some(j) = path.pop() {
            let r = receivers[j] as usize;
            cells[j] = cells[r] + 1;
            exits[j] = exits[r] + u32::from(tile(j) != tile(r));
        }
    }
    let count = (0..n)
        .filter(|&i| {
            let r = receivers[i] as usize;
            r == i || tile(i) != tile(r)
        })
        .count();
    (
        cells.iter().copied().max().unwrap_or(0),
        exits.iter().copied().max().unwrap_or(0),
        count,
    )
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut sizes = Vec::new();
    let mut steps = 10usize;
    let mut lakes = SinkMode::Carve;
    let mut start_kind = "";
    let mut n_exp = 1.0f32;
    let mut dump: Option<std::path::PathBuf> = None;
    let mut profile = false;
    let mut thermal_mode = false;
    let mut hydraulic_mode = false;
    let mut hydrology_mode = false;
    let mut profiles = Vec::new();
    let mut cpu_times = Vec::new();
    let mut redos = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--lakes" {
            lakes = match args.next().as_deref() {
                Some("none") => SinkMode::None,
                Some("carve") => SinkMode::Carve,
                Some("fill") => SinkMode::Fill { epsilon: 0.0 },
                other => return Err(format!("--lakes: none, carve or fill, got {other:?}")),
            };
        } else if a == "--start" {
            start_kind = match args.next().as_deref() {
                Some("ramp") => "ramp",
                Some("noise") => "noise",
                Some("uniform") => "uniform",
                other => return Err(format!("--start: ramp, noise or uniform, got {other:?}")),
            };
        } else if a == "--n" {
            let v = args.next().ok_or("--n needs a value")?;
            n_exp = v
                .parse()
                .map_err(|_| format!("--n: `{v}` is not a number"))?;
        } else if a == "--profile" {
            profile = true;
        } else if a == "--thermal" {
            thermal_mode = true;
        } else if a == "--hydraulic" {
            hydraulic_mode = true;
        } else if a == "--hydrology" {
            hydrology_mode = true;
        } else if a == "--dump" {
            dump = Some(args.next().ok_or("--dump needs a folder")?.into());
        } else if a == "--steps" {
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
    if hydraulic_mode || hydrology_mode {
        if sizes.is_empty() {
            sizes = vec![1024, 2048, 4096, 8192];
        }
        return if hydraulic_mode {
            bench_hydraulic(&sizes, steps)
        } else {
            bench_hydrology(&sizes, steps.min(5), start_kind)
        };
    }
    if thermal_mode {
        if sizes.is_empty() {
            sizes = vec![1024, 2048, 4096, 8192];
        }
        return bench_thermal(&sizes, steps);
    }
    if sizes.is_empty() {
        sizes = vec![512, 1024, 2048, 4096];
    }
    if start_kind.is_empty() {
        start_kind = "ramp";
    }
    let ctx = GpuContext::new().map_err(|e| e.to_string())?;
    println!(
        "GPU: {}; CPU: {} threads; {steps} steps after 2 warm-up; lakes: {lakes:?}; \
         n {n_exp}; start: {}",
        ctx.describe(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        start_kind
    );
    println!();
    println!(
        "| grid | CPU ms/step | GPU ms/step | of which routing (receivers, lakes, drainage) \
         | CPU/GPU | lakes at the first step | first GPU step ms | mean h CPU | mean h GPU |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let params = Params {
        m: 0.5,
        n: n_exp,
        lakes,
    };
    let (dt, k, u) = (1e4, 2e-4f32, 1e-3f32);
    for side in sizes {
        let grid = Grid::new(side, side, 100.0).map_err(|e| e.to_string())?;
        let n = grid.len();
        // A reproducible start, a hash of the index for the noise: one metre per cell from
        // the nearest border plus up to half a metre of noise (no pits), 0.2 m per cell plus
        // up to 5 m (pits), or up to 1 m of noise alone (pits).
        let (rise, amplitude) = match start_kind {
            "noise" => (0.2, 10.0),
            "uniform" => (0.0, 2.0),
            _ => (1.0, 1.0),
        };
        let start: Vec<f32> = (0..n as u64)
            .map(|i| {
                let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
                x ^= x >> 31;
                x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
                x ^= x >> 29;
                let noise = (x >> 40) as f32 / (1u64 << 24) as f32 * 0.5 * amplitude;
                let (cx, cy) = (i as usize % side, i as usize / side);
                let border = cx.min(cy).min(side - 1 - cx).min(side - 1 - cy);
                border as f32 * rise + noise
            })
            .collect();
        if let Some(dir) = &dump {
            let path = dir.join(format!("start-{side}.f32"));
            let bytes: Vec<u8> = start.iter().flat_map(|v| v.to_le_bytes()).collect();
            std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        }
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
        let mut first_lakes = 0;
        let mut first_ms = 0.0;
        for s in 0..2 {
            let t = Instant::now();
            gpu.step(dt).map_err(|e| e.to_string())?;
            if s == 0 {
                gpu.wait().map_err(|e| e.to_string())?;
                first_ms = t.elapsed().as_secs_f64() * 1e3;
                first_lakes = gpu.lake_count().map_err(|e| e.to_string())?;
            }
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let encoded = gpu.dispatches_encoded();
        let redone0 = gpu.steps_redone();
        let cpu0 = cpu_seconds();
        let t = Instant::now();
        for _ in 0..steps {
            gpu.step(dt).map_err(|e| e.to_string())?;
        }
        let dispatches = (gpu.dispatches_encoded() - encoded) as f64 / steps as f64;
        let exit_rounds = gpu.exit_rounds();
        gpu.wait().map_err(|e| e.to_string())?;
        let gpu_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let redone1 = gpu.steps_redone();
        redos.push((
            side,
            redone1[0] - redone0[0],
            redone1[1] - redone0[1],
            redone1[2] - redone0[2],
        ));
        if let (Some(a), Some(b)) = (cpu0, cpu_seconds()) {
            cpu_times.push((side, (b - a) * 1e3 / steps as f64));
        }
        let g = gpu.heights().map_err(|e| e.to_string())?;
        if profile && n_exp != 1.0 {
            println!("(--profile times the n = 1 step only)");
        } else if profile {
            let mut sum: Vec<(&str, f64)> = Vec::new();
            let mut timed = false;
            for _ in 0..steps {
                let (times, t) = gpu.profile_step(dt).map_err(|e| e.to_string())?;
                timed = t;
                if sum.is_empty() {
                    sum = times.iter().map(|&(k, _)| (k, 0.0)).collect();
                }
                for (s, (_, ms)) in sum.iter_mut().zip(&times) {
                    s.1 += ms / steps as f64;
                }
            }
            let receivers = gpu.receivers().map_err(|e| e.to_string())?;
            profiles.push((
                side,
                sum,
                timed,
                chains(&receivers, side),
                dispatches,
                exit_rounds,
            ));
        }
        // The same step without the solve: receivers and drainage only.
        let t = Instant::now();
        for _ in 0..steps {
            gpu.route().map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let route_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let mean = |v: &[f32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        println!(
            "| {side}² | {cpu_ms:.2} | {gpu_ms:.2} | {route_ms:.2} | {:.2} | {first_lakes} \
             | {first_ms:.1} | {:.3} | {:.3} |",
            cpu_ms / gpu_ms,
            mean(&h),
            mean(&g)
        );
    }
    println!();
    for (side, ms) in cpu_times {
        println!(
            "{side}²: {ms:.1} ms of this process's CPU time per timed GPU step (user + \
             system: on a software adapter, the GPU's work)"
        );
    }
    for (side, skipped, full, again) in redos {
        println!(
            "{side}²: {skipped} speculative steps skipped in the timed run (a pit, too few \
             exit rounds, or after a skipped one), run again: {full} as full steps, {again} \
             speculatively"
        );
    }
    // Pointer-jumping rounds run for a longest chain of `l` links: ceil(log2 l), in pairs.
    let run = |l: u32| (u32::BITS - l.max(1).saturating_sub(1).leading_zeros()).next_multiple_of(2);
    for (side, sum, timed, (cells, exits, count), dispatches, exit_rounds) in profiles {
        println!();
        println!(
            "{side}²: ms per phase ({}), mean of {steps} steps; longest chain {cells} cells, \
             {exits} tile exits; {count} exits ({:.1} % of the cells); rounds run over the exits {} (a full-grid pass each before \
             the tiles: {}), encoded {exit_rounds}; {dispatches:.1} dispatches per timed step",
            if timed {
                "GPU timestamps"
            } else {
                "wall clock, a wait after each phase"
            },
            100.0 * count as f64 / (side * side) as f64,
            run(exits),
            run(cells),
        );
        let total: f64 = sum.iter().map(|s| s.1).sum();
        for (name, ms) in sum {
            println!("  {ms:9.3}  {name}");
        }
        println!("  {total:9.3}  total");
    }
    Ok(())
}

/// `--thermal`: ms per thermal step, CPU (all cores) against GPU, from the same rough start.
fn bench_thermal(sizes: &[usize], steps: usize) -> Result<(), String> {
    let ctx = GpuContext::new().map_err(|e| e.to_string())?;
    println!(
        "GPU: {}; CPU: {} threads; thermal, 30° talus, rate 0.5; {steps} steps after 2 warm-up",
        ctx.describe(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    println!();
    println!(
        "| grid | CPU ms/step | GPU ms/step | CPU/GPU | mean h CPU | mean h GPU | max rel. diff |"
    );
    println!("|---|---|---|---|---|---|---|");
    let params = thermal::Params {
        talus: thermal::TalusAngle::Constant(30.0),
        rate: 0.5,
        tolerance: 0.0,
    };
    let mut cpu_times = Vec::new();
    for &side in sizes {
        let grid = Grid::new(side, side, 10.0).map_err(|e| e.to_string())?;
        let n = grid.len();
        let start: Vec<f32> = (0..n as u64)
            .map(|i| {
                let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
                x ^= x >> 31;
                x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
                x ^= x >> 29;
                let noise = (x >> 40) as f32 / (1u64 << 24) as f32 * 3.0;
                let (cx, cy) = (i as usize % side, i as usize / side);
                let cliff = if (cx / 9 + cy / 13).is_multiple_of(3) {
                    40.0
                } else {
                    0.0
                };
                cliff + noise
            })
            .collect();
        let mut cpu =
            thermal::Thermal::new(RasterGrid::new(grid, &[]), params.clone(), 1, &start, "cpu")
                .map_err(|e| e.to_string())?;
        let mut h = start.clone();
        for _ in 0..2 {
            cpu.step_heights(&mut h);
        }
        let t = Instant::now();
        for _ in 0..steps {
            cpu.step_heights(&mut h);
        }
        let cpu_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let tan = thermal::talus_tangents(&params.talus, &start, side, grid.cell_size, 1);
        let mut gpu =
            GpuThermal::on_grid(&ctx, grid, &params, &tan, "gpu").map_err(|e| e.to_string())?;
        gpu.set_heights(&start).map_err(|e| e.to_string())?;
        for _ in 0..2 {
            gpu.step().map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let cpu0 = cpu_seconds();
        let t = Instant::now();
        for _ in 0..steps {
            gpu.step().map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let gpu_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        if let (Some(a), Some(b)) = (cpu0, cpu_seconds()) {
            cpu_times.push((side, (b - a) * 1e3 / steps as f64));
        }
        let g = gpu.heights().map_err(|e| e.to_string())?;
        let mean = |v: &[f32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let worst = g
            .iter()
            .zip(&h)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0f32, f32::max);
        println!(
            "| {side}² | {cpu_ms:.2} | {gpu_ms:.3} | {:.1} | {:.4} | {:.4} | {worst:.1e} |",
            cpu_ms / gpu_ms,
            mean(&h),
            mean(&g)
        );
    }
    println!();
    for (side, ms) in cpu_times {
        println!(
            "{side}²: {ms:.1} ms of this process's CPU time per timed GPU step (user + \
             system: on a software adapter, the GPU's work)"
        );
    }
    Ok(())
}

/// A reproducible hash of `i` in [0, 1).
fn unit_hash(i: u64) -> f32 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    (x >> 40) as f32 / (1u64 << 24) as f32
}

/// `--hydraulic`: ms per pipe-model step, CPU (all cores) against GPU, from the same start.
fn bench_hydraulic(sizes: &[usize], steps: usize) -> Result<(), String> {
    use orogen_core::eroders::hydraulic::{Hydraulic, Params as HParams};
    use orogen_core::state::{Layers, MaterialProps, SimState, TerrainMut};
    use orogen_gpu::GpuHydraulic;
    let ctx = GpuContext::new().map_err(|e| e.to_string())?;
    println!(
        "GPU: {}; CPU: {} threads; Hydraulic (pipe model), default parameters, Chézy 30, \
         1 m cells; {steps} steps after 2 warm-up",
        ctx.describe(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    println!();
    println!(
        "| grid | CPU ms/step | GPU ms/step | CPU/GPU | mean h CPU | mean h GPU | max diff m |"
    );
    println!("|---|---|---|---|---|---|---|");
    let params = HParams {
        chezy: Some(30.0),
        ..HParams::default()
    };
    let material = [MaterialProps::default()];
    for &side in sizes {
        let grid = Grid::new(side, side, 1.0).map_err(|e| e.to_string())?;
        let n = grid.len();
        let start: Vec<f32> = (0..n as u64)
            .map(|i| (i as usize / side) as f32 * 0.01 + unit_hash(i) * 0.5)
            .collect();
        let mut cpu = Hydraulic::new(grid, params.clone(), 1).map_err(|e| e.to_string())?;
        let mut h = start.clone();
        let mut layers = Layers::none();
        let mut sim = SimState::default();
        let t;
        {
            let mut terrain = TerrainMut::new(&mut h, &mut layers);
            for _ in 0..2 {
                cpu.step(&mut terrain, &mut sim, &material)
                    .map_err(|e| e.to_string())?;
            }
            t = Instant::now();
            for _ in 0..steps {
                cpu.step(&mut terrain, &mut sim, &material)
                    .map_err(|e| e.to_string())?;
            }
        }
        let cpu_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let fresh = Hydraulic::new(grid, params.clone(), 1).map_err(|e| e.to_string())?;
        let mut gpu = GpuHydraulic::on_grid(
            &ctx,
            grid,
            &params,
            |s| fresh.source_depths(s),
            material[0].dissolubility,
            "gpu",
        )
        .map_err(|e| e.to_string())?;
        gpu.set_state(&start, None, None, None)
            .map_err(|e| e.to_string())?;
        for _ in 0..2 {
            gpu.step().map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let t = Instant::now();
        for _ in 0..steps {
            gpu.step().map_err(|e| e.to_string())?;
        }
        gpu.wait().map_err(|e| e.to_string())?;
        let gpu_ms = t.elapsed().as_secs_f64() * 1e3 / steps as f64;
        let g = gpu.heights().map_err(|e| e.to_string())?;
        let mean = |v: &[f32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let worst = g
            .iter()
            .zip(&h)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        println!(
            "| {side}² | {cpu_ms:.2} | {gpu_ms:.3} | {:.1} | {:.5} | {:.5} | {worst:.1e} |",
            cpu_ms / gpu_ms,
            mean(&h),
            mean(&g)
        );
    }
    Ok(())
}

/// `--hydrology`: ms for a Hydrology stage's routing and maps, CPU against GPU (read-back
/// included), carved lakes.
fn bench_hydrology(sizes: &[usize], reps: usize, start_kind: &str) -> Result<(), String> {
    use orogen_core::flow::hydrology::{Hydrology, Params as HParams};
    use orogen_gpu::GpuHydrology;
    let ctx = GpuContext::new().map_err(|e| e.to_string())?;
    let start_kind = if start_kind.is_empty() {
        "uniform"
    } else {
        start_kind
    };
    println!(
        "GPU: {}; CPU: {} threads; Hydrology (carved lakes) routing and maps, read-back \
         included; mean of {reps} after 1 warm-up; start: {start_kind}",
        ctx.describe(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    println!();
    println!("| grid | CPU ms | GPU ms | CPU/GPU | lake cells | drainage bit-equal | surface bit-equal |");
    println!("|---|---|---|---|---|---|---|");
    let params = HParams::default();
    let outlets = OutletParams::default();
    for &side in sizes {
        let grid = Grid::new(side, side, 100.0).map_err(|e| e.to_string())?;
        let n = grid.len();
        let start: Vec<f32> = (0..n as u64)
            .map(|i| {
                let (cx, cy) = (i as usize % side, i as usize / side);
                let edge = cx.min(cy).min(side - 1 - cx).min(side - 1 - cy) as f32;
                match start_kind {
                    "ramp" => edge + unit_hash(i) * 0.5,
                    "noise" => edge * 0.2 + unit_hash(i) * 10.0,
                    _ => unit_hash(i),
                }
            })
            .collect();
        let nb = RasterGrid::new(grid, &outlets.borders);
        let mut cpu = Hydrology::new(nb, outlets.sea_level, params, None, "cpu")
            .map_err(|e| e.to_string())?;
        let mut c = cpu.compute(&start).map_err(|e| e.to_string())?;
        let t = Instant::now();
        for _ in 0..reps {
            c = cpu.compute(&start).map_err(|e| e.to_string())?;
        }
        let cpu_ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
        let mut gpu = GpuHydrology::on_grid(&ctx, grid, &outlets, &params, None, "gpu")
            .map_err(|e| e.to_string())?;
        let mut g = gpu.maps(&start).map_err(|e| e.to_string())?;
        let t = Instant::now();
        for _ in 0..reps {
            g = gpu.maps(&start).map_err(|e| e.to_string())?;
        }
        let gpu_ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
        let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        println!(
            "| {side}² | {cpu_ms:.1} | {gpu_ms:.1} | {:.1} | {} | {} | {} |",
            cpu_ms / gpu_ms,
            c.lake_depth.iter().filter(|&&d| d > 0.0).count(),
            same(&g.drainage, &c.drainage),
            same(&g.water_surface, &c.water_surface)
        );
    }
    Ok(())
}
