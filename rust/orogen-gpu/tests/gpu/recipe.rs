//! The GPU step run from recipes through orogen-core's runner (`device: Gpu | Auto`):
//! progress and cancel per step as on the CPU, a `TimeLoop` whose other process changes
//! the heights between GPU steps, and the stages refused before any work.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use orogen_core::runner::{check_devices, run_recipe_on, Event};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use orogen_core::eroders::{stream_power, thermal};
use orogen_core::flow::OutletParams;
use orogen_core::stages::{
    Accelerator, Device, Devices, SharedHeights, StreamPowerStepper, ThermalStepper,
};
use orogen_core::Grid;
use orogen_core::{OrogenError, Recipe};
use orogen_gpu::{GpuBackend, NO_ADAPTER_HELP};

fn backend() -> GpuBackend {
    GpuBackend::new().unwrap_or_else(|e| panic!("{e}: {NO_ADAPTER_HELP}"))
}

fn recipe(device: &str, stages: &str) -> Recipe {
    let text = format!(
        "(size: (40, 32), cell_size: 100.0, seed: 5,
          terrain: Noise(amplitude: 40.0, wavelength: 1200.0), uplift: Constant(0.001),
          device: {device}, stages: [{stages}], river_curves: None)"
    );
    let r = Recipe::from_ron_str(&text, "<test>").unwrap();
    r.validate().unwrap();
    r
}

const STREAM_POWER: &str = "StreamPower(iterations: 12, dt: 10000.0, k: Constant(2e-4))";

#[test]
fn progress_and_steps_are_reported_per_gpu_step_and_cancel_stops_within_one() {
    let gpu = backend();
    let r = recipe("Gpu", STREAM_POWER);
    let never = AtomicBool::new(false);
    let mut steps = Vec::new();
    let mut fractions = Vec::new();
    let mut first = None;
    let out = run_recipe_on(
        &r,
        Path::new("."),
        &never,
        &mut |e| match e {
            Event::Step { iteration, .. } => {
                steps.push(iteration);
                // Each step's heights come with it (shared as read back, issue #42).
                first.get_or_insert_with(|| e.step_heights().unwrap().to_vec());
            }
            Event::Progress { fraction, .. } => fractions.push(fraction),
            _ => {}
        },
        Some(&gpu),
        "",
    )
    .unwrap();
    assert_eq!(steps, (1..=12).collect::<Vec<u32>>());
    assert_eq!(fractions.len(), 12);
    assert_eq!(*fractions.last().unwrap(), 1.0);
    assert!(
        out.timings[1].device.starts_with("gpu: "),
        "{:?}",
        out.timings
    );
    assert_ne!(
        first.unwrap(),
        out.world.height.data,
        "the heights were not live"
    );

    // Cancel after the third step: the run stops there.
    let cancel = AtomicBool::new(false);
    let mut seen = 0;
    let e = run_recipe_on(
        &r,
        Path::new("."),
        &cancel,
        &mut |e| {
            if let Event::Step { iteration, .. } = e {
                seen = iteration;
                if iteration == 3 {
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        },
        Some(&gpu),
        "",
    )
    .err()
    .expect("cancelled");
    assert!(matches!(e, OrogenError::Cancelled), "{e}");
    assert_eq!(seen, 3);
}

#[test]
fn a_time_loop_hands_the_other_process_heights_to_the_gpu_each_step() {
    let gpu = backend();
    let stages = format!(
        "TimeLoop(iterations: 10, mode: Every, processes: [{}, Thermal(iterations: 1, talus: Constant(2.0))])",
        STREAM_POWER.replace("iterations: 12, ", "")
    );
    let never = AtomicBool::new(false);
    let run = |device: &str| {
        run_recipe_on(
            &recipe(device, &stages),
            Path::new("."),
            &never,
            &mut |_| {},
            Some(&gpu),
            "",
        )
        .unwrap()
    };
    let (g, c) = (run("Gpu"), run("Cpu"));
    assert!(
        g.timings[1].device.starts_with("processes[0]: gpu: "),
        "{:?}",
        g.timings[1]
    );
    assert!(
        g.timings[1].device.contains("; processes[1]: gpu: "),
        "{:?}",
        g.timings[1]
    );
    assert_eq!(c.timings[1].device, "cpu");
    let mut worst = 0.0f32;
    for (a, b) in g.world.height.data.iter().zip(&c.world.height.data) {
        worst = worst.max((a - b).abs() / b.abs().max(1.0));
    }
    // Without the hand-over the thermal steps would be lost on the GPU side.
    assert!(worst <= 1e-3, "worst relative difference {worst}");
}

#[test]
fn gpu_refuses_before_any_work_what_the_gpu_step_does_not_run() {
    let gpu = backend();
    let devices = |d| Devices {
        device: d,
        accelerator: Some(&gpu as &dyn Accelerator),
        missing: "",
    };
    let sp = |extra: &str| {
        STREAM_POWER.replace("k: Constant(2e-4)", &format!("k: Constant(2e-4){extra}"))
    };
    let cases = [
        (
            recipe(
                "Gpu",
                &format!("Thermal(), {}", sp(", outlets: (borders: [])")),
            ),
            "stages[1].StreamPower.outlets.borders",
        ),
        (
            recipe("Gpu", &sp(", schedule: CoarseToFine(levels: 2)")),
            "stages[0].StreamPower",
        ),
        (
            recipe(
                "Gpu",
                &format!(
                    "TimeLoop(iterations: 3, processes: [Thermal(), {}])",
                    sp(", outlets: (borders: [])").replace("iterations: 12, ", "")
                ),
            ),
            "stages[0].TimeLoop.processes[1].StreamPower.outlets.borders",
        ),
    ];
    for (r, field) in &cases {
        let e = check_devices(r, devices(Device::Gpu)).unwrap_err();
        assert!(e.to_string().contains(field), "{e} (wanted {field})");
        check_devices(r, devices(Device::Auto)).unwrap();
    }
    let mut graph = recipe("Gpu", STREAM_POWER);
    graph = graph
        .apply_override("domain=Graph(spacing: 300.0)")
        .unwrap();
    let e = check_devices(&graph, devices(Device::Gpu)).unwrap_err();
    assert!(
        e.to_string().contains("stages[0].StreamPower") && e.to_string().contains("Graph"),
        "{e}"
    );
    // A thermal stage on a graph, alone and in a loop: refused under Gpu naming it, run on
    // the CPU under Auto, saying why.
    for (stages, field) in [
        ("Thermal(iterations: 2)", "stages[0].Thermal"),
        (
            "TimeLoop(iterations: 2, processes: [Thermal()])",
            "stages[0].TimeLoop.processes[0].Thermal",
        ),
    ] {
        let r = recipe("Gpu", stages)
            .apply_override("domain=Graph(spacing: 300.0)")
            .unwrap();
        let e = check_devices(&r, devices(Device::Gpu)).unwrap_err();
        assert!(
            e.to_string().contains(field) && e.to_string().contains("Graph"),
            "{e}"
        );
        let auto = r.apply_override("device=Auto").unwrap();
        let out = run_recipe_on(
            &auto,
            Path::new("."),
            &never_ran(),
            &mut |_| {},
            Some(&gpu),
            "",
        )
        .unwrap();
        assert!(
            out.timings[1].device.contains("cpu (Auto: ")
                && out.timings[1].device.contains("Graph"),
            "{:?}",
            out.timings[1]
        );
    }
    // No accelerator: an error naming `device` under Gpu, from the runner as well.
    let never = AtomicBool::new(false);
    let e = orogen_core::run_recipe(
        &recipe("Gpu", STREAM_POWER),
        Path::new("."),
        &never,
        &mut |_| {},
    )
    .err()
    .expect("no accelerator");
    assert!(e.to_string().contains("`device`"), "{e}");
    let auto = orogen_core::run_recipe(
        &recipe("Auto", STREAM_POWER),
        Path::new("."),
        &never,
        &mut |_| {},
    )
    .unwrap();
    assert!(
        auto.timings[1].device.starts_with("cpu (Auto: "),
        "{:?}",
        auto.timings[1]
    );
}

fn never_ran() -> AtomicBool {
    AtomicBool::new(false)
}

/// Heights handed to and read back from the GPU's steppers, counted.
#[derive(Default)]
struct Counts {
    uploads: AtomicUsize,
    reads: AtomicUsize,
}

/// The GPU, its steppers counting the heights they upload and read back.
struct Counting {
    gpu: GpuBackend,
    counts: Arc<Counts>,
}

struct CountingStreamPower(Box<dyn StreamPowerStepper>, Arc<Counts>);
struct CountingThermal(Box<dyn ThermalStepper>, Arc<Counts>);

impl Accelerator for Counting {
    fn describe(&self) -> String {
        self.gpu.describe()
    }
    fn supports(
        &self,
        params: &stream_power::Params,
        outlets: &OutletParams,
        field: &str,
    ) -> orogen_core::Result<()> {
        self.gpu.supports(params, outlets, field)
    }
    fn stream_power(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &stream_power::Params,
        inputs: stream_power::Inputs,
        field: &str,
    ) -> orogen_core::Result<Box<dyn StreamPowerStepper>> {
        let inner = self
            .gpu
            .stream_power(grid, outlets, params, inputs, field)?;
        Ok(Box::new(CountingStreamPower(inner, self.counts.clone())))
    }
    fn supports_thermal(
        &self,
        grid: Grid,
        params: &thermal::Params,
        field: &str,
    ) -> orogen_core::Result<()> {
        self.gpu.supports_thermal(grid, params, field)
    }
    fn thermal(
        &self,
        grid: Grid,
        params: &thermal::Params,
        tangents: &[f32],
        field: &str,
    ) -> orogen_core::Result<Box<dyn ThermalStepper>> {
        let inner = self.gpu.thermal(grid, params, tangents, field)?;
        Ok(Box::new(CountingThermal(inner, self.counts.clone())))
    }
}

impl StreamPowerStepper for CountingStreamPower {
    fn set_heights(&mut self, heights: &[f32]) -> orogen_core::Result<()> {
        self.1.uploads.fetch_add(1, Ordering::Relaxed);
        self.0.set_heights(heights)
    }
    fn step(&mut self, dt: f64) -> orogen_core::Result<()> {
        self.0.step(dt)
    }
    fn heights(&mut self) -> orogen_core::Result<Vec<f32>> {
        self.1.reads.fetch_add(1, Ordering::Relaxed);
        self.0.heights()
    }
    fn wait(&mut self) -> orogen_core::Result<()> {
        self.0.wait()
    }
    fn shared_heights(&mut self) -> orogen_core::Result<Option<SharedHeights>> {
        self.0.shared_heights()
    }
    fn heights_changed(&mut self) {
        self.0.heights_changed()
    }
}

impl ThermalStepper for CountingThermal {
    fn set_heights(&mut self, heights: &[f32]) -> orogen_core::Result<()> {
        self.1.uploads.fetch_add(1, Ordering::Relaxed);
        self.0.set_heights(heights)
    }
    fn step(&mut self) -> orogen_core::Result<()> {
        self.0.step()
    }
    fn heights(&mut self) -> orogen_core::Result<Vec<f32>> {
        self.1.reads.fetch_add(1, Ordering::Relaxed);
        self.0.heights()
    }
    fn max_excess(&mut self) -> orogen_core::Result<f32> {
        self.0.max_excess()
    }
    fn share_heights(&mut self, shared: &SharedHeights) -> orogen_core::Result<bool> {
        self.0.share_heights(shared)
    }
    fn shared_heights(&mut self) -> orogen_core::Result<Option<SharedHeights>> {
        self.0.shared_heights()
    }
}

#[test]
fn a_time_loop_keeps_the_heights_on_the_gpu_between_its_processes() {
    let counting = Counting {
        gpu: backend(),
        counts: Arc::default(),
    };
    let never = AtomicBool::new(false);
    let loop_of = |order: &str, mode: &str| {
        let sp = STREAM_POWER.replace("iterations: 12, ", "");
        let th = "Thermal(talus: Constant(5.0))";
        let list = if order == "sp" {
            format!("{sp}, {th}")
        } else {
            format!("{th}, {sp}")
        };
        format!("TimeLoop(iterations: 10, mode: {mode}, processes: [{list}])")
    };
    for (order, mode) in [
        ("sp", "Every"),
        ("thermal", "Every"),
        ("sp", "Proportions([1.0, 2.0])"),
    ] {
        let stages = loop_of(order, mode);
        let label = format!("{order} first, {mode}");
        let run = |device: &str, accel: &dyn Accelerator| {
            run_recipe_on(
                &recipe(device, &stages),
                Path::new("."),
                &never,
                &mut |_| {},
                Some(accel),
                "",
            )
            .unwrap()
        };
        counting.counts.uploads.store(0, Ordering::Relaxed);
        counting.counts.reads.store(0, Ordering::Relaxed);
        let g = run("Gpu", &counting);
        // Each process's heights set once at its start; one read-back a loop step (for
        // progress and cancel), none between the processes (with proportions, one
        // process a step: the reads are still one a step).
        assert_eq!(
            counting.counts.uploads.load(Ordering::Relaxed),
            2,
            "{label}"
        );
        assert_eq!(counting.counts.reads.load(Ordering::Relaxed), 10, "{label}");
        let c = run("Cpu", &counting);
        let mut worst = 0.0f32;
        for (a, b) in g.world.height.data.iter().zip(&c.world.height.data) {
            worst = worst.max((a - b).abs() / b.abs().max(1.0));
        }
        assert!(worst <= 1e-3, "{label}: worst relative difference {worst}");
        let start = orogen_core::runner::initial_world(&recipe("Cpu", ""), Path::new("."))
            .unwrap()
            .height
            .data;
        let moved = g
            .world
            .height
            .data
            .iter()
            .zip(&start)
            .filter(|(a, b)| (*a - *b).abs() > 0.5)
            .count();
        assert!(moved > 100, "{label}: only {moved} cells moved");
        eprintln!("{label}: worst relative difference {worst:e}");
    }
}
