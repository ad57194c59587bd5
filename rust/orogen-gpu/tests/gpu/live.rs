//! Live painting on the GPU (`runner::run_live_on`, what Godot's `start_live` runs; issue
//! #42): the heights read back only for the steps whose view is due give the same bytes as
//! reading every step, the steps between leave the world alone, a painted uplift map taken
//! up mid-run hands the heights over, and the result is within 1e-3 of the CPU's live run.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use orogen_core::field::ScalarMap;
use orogen_core::runner::{initial_world, run_live, run_live_on, Event, LiveHooks, LiveMaps};
use orogen_core::stages::{Device, Devices};
use orogen_core::{Recipe, World};
use orogen_gpu::{GpuBackend, NO_ADAPTER_HELP};

const STEPS: u32 = 15;
/// The step after which the painted uplift arrives.
const PAINT_AT: u32 = 7;

fn recipe(stages: &str) -> Recipe {
    let text = format!(
        "(size: (48, 40), cell_size: 100.0, seed: 9,
          terrain: Noise(amplitude: 50.0, wavelength: 1500.0), uplift: Constant(0.001),
          device: Gpu, stages: [{stages}], river_curves: None)"
    );
    let r = Recipe::from_ron_str(&text, "<test>").unwrap();
    r.validate().unwrap();
    r
}

/// 5 mm/yr over the west half, 1 mm/yr elsewhere.
fn painted(world: &World) -> LiveMaps {
    let grid = world.grid();
    let w = grid.width;
    let data = (0..world.height.data.len())
        .map(|i| if i % w < w / 2 { 0.005 } else { 0.001 })
        .collect();
    LiveMaps {
        uplift: Some(ScalarMap { grid, data }),
        precipitation: None,
    }
}

/// What a live run saw: each step's world heights as reported, and the world at the end.
struct Seen {
    reported: Vec<Vec<f32>>,
    end: Vec<f32>,
    device: String,
}

/// A live run of `r` for `STEPS` steps, the paint taken after step `PAINT_AT`, views due
/// where `due(step)` says; on the GPU where `gpu` is given, else `run_live` (the CPU's).
fn live(r: &Recipe, gpu: Option<&GpuBackend>, due: fn(u32) -> bool) -> Seen {
    let mut world = initial_world(r, Path::new(".")).unwrap();
    let paint = painted(&world);
    let stop = AtomicBool::new(false);
    let done = std::cell::Cell::new(0u32);
    let mut take = || (done.get() == PAINT_AT).then(|| paint.clone());
    let mut reported = Vec::new();
    let mut step = 0u32;
    let mut view_due = || {
        step += 1;
        due(step)
    };
    let mut observer = |e: Event<'_>| {
        if let Event::Step {
            iteration, world, ..
        } = e
        {
            reported.push(world.height.data.clone());
            done.set(iteration);
            if iteration == STEPS {
                stop.store(true, Ordering::SeqCst);
            }
        }
    };
    let device = match gpu {
        Some(g) => {
            let hooks = LiveHooks {
                take_maps: &mut take,
                view_due: &mut view_due,
                observer: &mut observer,
            };
            let devices = Devices {
                device: Device::Gpu,
                accelerator: Some(g),
                missing: "",
            };
            run_live_on(r, Path::new("."), &mut world, &stop, hooks, devices)
                .unwrap()
                .device
        }
        None => {
            let mut cpu = r.clone();
            cpu.device = Device::Cpu;
            let n = run_live(
                &cpu,
                Path::new("."),
                &mut world,
                &stop,
                &mut take,
                &mut observer,
            )
            .unwrap();
            assert_eq!(n, STEPS);
            "cpu".into()
        }
    };
    Seen {
        reported,
        end: world.height.data,
        device,
    }
}

fn worst_relative(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0, f32::max)
}

#[test]
fn live_painting_on_the_gpu_reads_back_only_the_views_and_matches_reading_every_step() {
    let gpu = GpuBackend::new().unwrap_or_else(|e| panic!("{e}: {NO_ADAPTER_HELP}"));
    let r = recipe("StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Carve)");
    let every = live(&r, Some(&gpu), |_| true);
    let views = live(&r, Some(&gpu), |s| s % 5 == 0);
    assert!(every.device.starts_with("gpu: "), "{}", every.device);
    assert_eq!(every.reported.len(), STEPS as usize);
    assert_eq!(views.reported.len(), STEPS as usize);
    // Reading back only at steps 5, 10, 15 (and at the paint, and the end) changes nothing.
    assert_eq!(
        views.end, every.end,
        "the deferred steps gave other heights"
    );
    for s in [5usize, 10, 15] {
        assert_eq!(
            views.reported[s - 1],
            every.reported[s - 1],
            "the view of step {s}"
        );
    }
    // Between views the world is left as it was: nothing was read back.
    assert_eq!(
        views.reported[5], views.reported[4],
        "step 6 read the heights back"
    );
    assert_eq!(
        views.reported[0], views.reported[1],
        "step 2 read the heights back"
    );
    assert_ne!(every.reported[5], every.reported[4]);
    // The paint took effect: the west half rose more than the east.
    let start = &every.reported[0];
    let w = 48;
    let (mut west, mut east) = (0.0f64, 0.0f64);
    for (i, (a, b)) in every.end.iter().zip(start).enumerate() {
        if i % w < w / 2 {
            west += f64::from(a - b);
        } else {
            east += f64::from(a - b);
        }
    }
    assert!(
        west > east + 20.0 * (24 * 40) as f64,
        "west {west} east {east}"
    );
    // Against the CPU's live run with the same paint at the same step.
    let cpu = live(&r, None, |_| true);
    let worst = worst_relative(&every.end, &cpu.end);
    assert!(
        worst <= 1e-3,
        "GPU live run {worst} relative from the CPU's"
    );
    assert!(every.end.iter().all(|h| h.is_finite()));
}

#[test]
fn live_painting_with_a_hillslope_process_hands_the_heights_over_every_step() {
    let gpu = GpuBackend::new().unwrap_or_else(|e| panic!("{e}: {NO_ADAPTER_HELP}"));
    let r =
        recipe("Thermal(iterations: 2), StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Carve)");
    // Views never due: with Thermal every step is read back anyway (it needs the heights).
    let on_gpu = live(&r, Some(&gpu), |_| false);
    assert!(on_gpu.device.starts_with("gpu: "), "{}", on_gpu.device);
    assert_ne!(on_gpu.reported[1], on_gpu.reported[0]);
    let cpu = live(&r, None, |_| true);
    let worst = worst_relative(&on_gpu.end, &cpu.end);
    assert!(
        worst <= 1e-3,
        "GPU live run with Thermal {worst} relative from the CPU's"
    );
}
