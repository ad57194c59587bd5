//! Live painting on the GPU (`runner::run_live_on`, what Godot's `start_live` runs; issue
//! #42): the heights read back only for the steps whose view is due give the same bytes as
//! reading every step, shared with the view rather than copied into the world, the steps
//! between leave the world alone, a painted uplift map taken
//! up mid-run hands the heights over, and the result is within 1e-3 of the CPU's live run.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use orogen_core::eroders::stream_power::{Inputs, Params};
use orogen_core::field::ScalarMap;
use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::runner::{initial_world, run_live, run_live_on, Event, LiveHooks, LiveMaps};
use orogen_core::stages::{Device, Devices};
use orogen_core::Grid;
use orogen_core::{Recipe, World};
use orogen_gpu::GpuStreamPower;

use crate::common::{bits, ctx, Counted, Tally};

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

/// What a live run saw: each step's heights as reported (`Event::step_heights`), the
/// world's heights then and whether they came shared (`shown`), and the world at the end.
struct Seen {
    reported: Vec<Vec<f32>>,
    worlds: Vec<Vec<f32>>,
    shared: Vec<bool>,
    end: Vec<f32>,
    device: String,
}

/// A live run of `r` for `STEPS` steps, the paint taken after step `PAINT_AT`, views due
/// where `due(step)` says; on the GPU where `gpu` is given (counting its steps), else
/// `run_live` (the CPU's).
fn live(r: &Recipe, gpu: Option<&Counted>, due: fn(u32) -> bool) -> Seen {
    let mut world = initial_world(r, Path::new(".")).unwrap();
    let paint = painted(&world);
    let stop = AtomicBool::new(false);
    let done = std::cell::Cell::new(0u32);
    let mut take = || (done.get() == PAINT_AT).then(|| paint.clone());
    let mut reported = Vec::new();
    let mut worlds = Vec::new();
    let mut shared = Vec::new();
    let mut step = 0u32;
    let mut view_due = || {
        step += 1;
        due(step)
    };
    let mut observer = |e: Event<'_>| {
        if let Some(h) = e.step_heights() {
            reported.push(h.to_vec());
        }
        if let Event::Step {
            iteration,
            world,
            shown,
            ..
        } = e
        {
            worlds.push(world.height.data.clone());
            shared.push(shown.is_some());
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
        worlds,
        shared,
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
    let gpu = Counted::new(true);
    let r = recipe("StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Carve)");
    let every = live(&r, Some(&gpu), |_| true);
    assert!(every.device.starts_with("gpu: "), "{}", every.device);
    // Every step on the GPU, before and after the paint, by one stepper that took the
    // painted uplift in place; the end maps routed there too.
    let t = &gpu.tally;
    assert_eq!(Tally::get(&t.steps), STEPS as usize);
    assert_eq!(Tally::get(&t.steppers), 1);
    assert_eq!(Tally::get(&t.inputs_taken), 1);
    assert_eq!(Tally::get(&t.maps), 1);
    let reads = Tally::get(&t.reads);
    let views = live(&r, Some(&gpu), |s| s % 5 == 0);
    // Read back for the views at 5, 10 and 15 and for the paint after 7; the end takes the
    // last view's buffer (a read-back more where `sync` read again).
    assert_eq!(Tally::get(&t.reads) - reads, 4);
    // The views' heights came shared as read back, none copied into the worker's world
    // (issue #42: the view's one copy is Godot's): at step 5 it still held the start, at
    // 10 and 15 the heights handed over for the paint.
    let due: Vec<bool> = (1..=STEPS).map(|s| s % 5 == 0).collect();
    assert_eq!(views.shared, due);
    assert_eq!(views.worlds[4], views.worlds[0]);
    assert_ne!(views.worlds[4], views.reported[4]);
    assert_eq!(views.worlds[9], views.worlds[7]);
    assert_eq!(views.worlds[14], views.worlds[7]);
    assert_ne!(views.worlds[14], views.reported[14]);
    assert_ne!(
        views.worlds[7], views.worlds[0],
        "the paint handed the heights over"
    );
    // Read every step, the world is still never written before the end.
    assert!(every.shared.iter().all(|&s| s));
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
        views.worlds[5], views.worlds[4],
        "step 6 read the heights back"
    );
    assert_eq!(
        views.worlds[0], views.worlds[1],
        "step 2 read the heights back"
    );
    assert_eq!(views.reported[5], views.worlds[5]);
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
    let gpu = Counted::new(true);
    let r =
        recipe("Thermal(iterations: 2), StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Carve)");
    // Views never due: with Thermal every step is read back anyway (it needs the heights).
    let on_gpu = live(&r, Some(&gpu), |_| false);
    assert!(on_gpu.device.starts_with("gpu: "), "{}", on_gpu.device);
    assert_eq!(Tally::get(&gpu.tally.steps), STEPS as usize);
    assert_ne!(on_gpu.reported[1], on_gpu.reported[0]);
    let cpu = live(&r, None, |_| true);
    let worst = worst_relative(&on_gpu.end, &cpu.end);
    assert!(
        worst <= 1e-3,
        "GPU live run with Thermal {worst} relative from the CPU's"
    );
}

/// A paint taken in place (the stepper's buffers rewritten) gives the bytes of the run that
/// made a new stepper for it, as live painting did before; with Thermal too, where the
/// heights are handed over every step.
#[test]
fn a_paint_taken_in_place_gives_a_new_steppers_bytes() {
    for stages in [
        "StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Carve)",
        "StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Fill(epsilon: 0.0), \
         precipitation: Constant(0.5))",
        "Thermal(iterations: 2), StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Carve)",
    ] {
        let r = recipe(stages);
        let (kept, renewed) = (Counted::new(true), Counted::new(false));
        let a = live(&r, Some(&kept), |s| s % 4 == 0);
        let b = live(&r, Some(&renewed), |s| s % 4 == 0);
        assert_eq!(Tally::get(&kept.tally.steppers), 1, "{stages}");
        assert_eq!(Tally::get(&kept.tally.inputs_taken), 1, "{stages}");
        assert_eq!(Tally::get(&renewed.tally.steppers), 2, "{stages}");
        assert!(
            bits(&a.end) == bits(&b.end),
            "{stages}: other heights at the end"
        );
        assert_eq!(a.reported.len(), b.reported.len());
        for (s, (x, y)) in a.reported.iter().zip(&b.reported).enumerate() {
            assert!(bits(x) == bits(y), "{stages}: step {}", s + 1);
        }
    }
}

/// `GpuStreamPower::set_inputs` against a stepper made with the new inputs: new uplift,
/// erodibility and precipitation (so the drainage sums' scale changes too) after three
/// steps, then five more, bit for bit; steps in flight are settled with the old inputs.
#[test]
fn new_inputs_in_place_equal_a_fresh_steppers_steps() {
    let ctx = ctx();
    let grid = Grid::new(57, 43, 100.0).unwrap();
    let n = grid.len();
    let start: Vec<f32> = (0..n)
        .map(|i| {
            let (x, y) = ((i % 57) as f32, (i / 57) as f32);
            30.0 * (x / 5.0).sin() * (y / 7.0).cos() + ((i * 7919) % 97) as f32 * 0.2
        })
        .collect();
    let params = Params {
        m: 0.5,
        n: 1.0,
        lakes: SinkMode::Carve,
    };
    let first = Inputs {
        k: vec![2e-4; n],
        uplift: vec![1e-3; n],
        precipitation: None,
    };
    let second = Inputs {
        k: (0..n).map(|i| 1e-4 + (i % 13) as f32 * 2e-5).collect(),
        uplift: (0..n)
            .map(|i| if i % 57 < 28 { 5e-3 } else { 1e-3 })
            .collect(),
        precipitation: Some((0..n).map(|i| 0.2 + (i % 29) as f32 * 0.1).collect()),
    };
    let outlets = OutletParams::default();
    let mut kept = GpuStreamPower::on_grid(&ctx, grid, &outlets, &params, first, "sp").unwrap();
    kept.set_heights(&start).unwrap();
    for _ in 0..3 {
        kept.step(1e4).unwrap();
    }
    // Not read back: the three steps are still in flight (speculative) when it is called.
    kept.set_inputs(&second).unwrap();
    let mid = kept.heights().unwrap();
    for _ in 0..5 {
        kept.step(1e4).unwrap();
    }
    let mut fresh = GpuStreamPower::on_grid(&ctx, grid, &outlets, &params, second, "sp").unwrap();
    fresh.set_heights(&mid).unwrap();
    for _ in 0..5 {
        fresh.step(1e4).unwrap();
    }
    let (a, b) = (kept.heights().unwrap(), fresh.heights().unwrap());
    let differ = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count();
    assert_eq!(differ, 0, "in place against fresh: {differ} heights differ");
    // The drainage with the new precipitation (its sums' scale changed with it).
    kept.route().unwrap();
    fresh.route().unwrap();
    assert_eq!(kept.drainage().unwrap(), fresh.drainage().unwrap());
    assert_ne!(bits(&a), bits(&mid), "five steps moved nothing");
    // A wrong count is an error naming the input.
    let short = Inputs {
        k: vec![2e-4; n - 1],
        uplift: vec![1e-3; n],
        precipitation: None,
    };
    let e = kept.set_inputs(&short).unwrap_err().to_string();
    assert!(e.contains("sp.k"), "{e}");
}
