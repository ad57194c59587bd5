//! What the orogen-gpu tests share: the GPU context, inputs, bit patterns, running to a
//! steady state, and the slope–area fit.
#![allow(dead_code)] // (each test file uses some of these)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use orogen_core::eroders::stream_power::{Inputs, Params};
use orogen_core::eroders::{hydraulic, thermal};
use orogen_core::flow::{hydrology, OutletParams};
use orogen_core::stages::{
    Accelerator, HydraulicState, HydraulicStepper, HydrologyFields, HydrologyMapper, SharedHeights,
    StreamPowerStepper, ThermalStepper,
};
use orogen_core::{Grid, Result};
use orogen_gpu::{GpuBackend, GpuContext, GpuStreamPower, NO_ADAPTER_HELP};

/// The GPU context; without a Vulkan adapter the test fails, saying how to get lavapipe.
pub fn ctx() -> GpuContext {
    GpuContext::new().unwrap_or_else(|e| {
        panic!(
            "{e}\nThe orogen-gpu tests need a Vulkan adapter: run scripts/install-vulkan.sh \
             (apt-get install mesa-vulkan-drivers libvulkan1) for Mesa's lavapipe"
        )
    })
}

/// Uniform erodibility `k` and uplift `u` over `n` nodes, no precipitation.
pub fn inputs(n: usize, k: f32, u: f32) -> Inputs {
    Inputs {
        k: vec![k; n],
        uplift: vec![u; n],
        precipitation: None,
    }
}

/// The bit patterns of `v`, to compare floats exactly.
pub fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Steps `gpu` (its heights set to `start`) by `dt` until no height moves 2 mm in a step:
/// the step count and the heights then. Fails after 3,000 steps.
pub fn run_to_steady(gpu: &mut GpuStreamPower, start: &[f32], dt: f64) -> (usize, Vec<f32>) {
    gpu.set_heights(start).unwrap();
    let mut before = start.to_vec();
    let mut steps = 0;
    loop {
        gpu.step(dt).unwrap();
        steps += 1;
        let now = gpu.heights().unwrap();
        let change = now
            .iter()
            .zip(&before)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        before = now;
        if change < 2e-3 {
            return (steps, before);
        }
        assert!(
            steps < 3000,
            "no steady state after {steps} steps (change {change} m)"
        );
    }
}

/// Least-squares fit of ln S against ln A over nodes draining more than `threshold` m²
/// (slope to the receiver over the link length): (exponent, exp(intercept), node count).
pub fn slope_area_fit(
    grid: Grid,
    h: &[f32],
    rcv: &[u32],
    area: &[f64],
    threshold: f64,
) -> (f64, f64, usize) {
    let (mut sx, mut sy, mut sxx, mut sxy, mut cnt) = (0.0, 0.0, 0.0, 0.0, 0usize);
    for i in 0..h.len() {
        let r = rcv[i] as usize;
        if r == i || area[i] < threshold {
            continue;
        }
        let (xi, yi) = ((i % grid.width) as f64, (i / grid.width) as f64);
        let (xr, yr) = ((r % grid.width) as f64, (r / grid.width) as f64);
        let dist = ((xi - xr) * grid.dx() as f64).hypot((yi - yr) * grid.dy() as f64);
        let s = (h[i] as f64 - h[r] as f64) / dist;
        assert!(s > 0.0, "channel node {i} not above its receiver");
        let (x, y) = (area[i].ln(), s.ln());
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        cnt += 1;
    }
    let c = cnt as f64;
    let b = (c * sxy - sx * sy) / (c * sxx - sx * sx);
    let a = (sy - b * sx) / c;
    (b, a.exp(), cnt)
}

/// One test terrain: a grid, its outlets and heights.
pub struct Case {
    pub name: &'static str,
    pub grid: Grid,
    pub outlets: OutletParams,
    pub heights: Vec<f32>,
}

impl Case {
    /// `name` on `grid` with `outlets`, heights `f(x, y)`.
    pub fn new(
        name: &'static str,
        grid: Grid,
        outlets: OutletParams,
        f: &mut dyn FnMut(usize, usize) -> f32,
    ) -> Case {
        let heights = (0..grid.len())
            .map(|i| f(i % grid.width, i / grid.width))
            .collect();
        Case {
            name,
            grid,
            outlets,
            heights,
        }
    }
}

/// What [`Counted`]'s steppers and mappers were asked to do.
#[derive(Default)]
pub struct Tally {
    /// Stream-power steppers made.
    pub steppers: AtomicUsize,
    /// Their steps, and their heights read back.
    pub steps: AtomicUsize,
    pub reads: AtomicUsize,
    /// New inputs taken in place.
    pub inputs_taken: AtomicUsize,
    /// Hydrology mappers made, and the maps they routed.
    pub mappers: AtomicUsize,
    pub maps: AtomicUsize,
    /// Heights read back from the pipe model's steppers, and their steps.
    pub hydraulic_reads: AtomicUsize,
    pub hydraulic_steps: AtomicUsize,
}

impl Tally {
    pub fn get(counter: &AtomicUsize) -> usize {
        counter.load(Ordering::Relaxed)
    }
}

/// The GPU, counting what its stream-power steppers and hydrology mappers do: proof that
/// the work ran there (a test equal to the CPU's would pass with the work on the CPU too).
/// With `in_place: false` its steppers refuse new inputs in place, as before live
/// painting could give them (the run then makes a new stepper).
pub struct Counted {
    pub gpu: GpuBackend,
    pub in_place: bool,
    pub tally: Arc<Tally>,
}

impl Counted {
    pub fn new(in_place: bool) -> Counted {
        Counted {
            gpu: GpuBackend::new().unwrap_or_else(|e| panic!("{e}: {NO_ADAPTER_HELP}")),
            in_place,
            tally: Arc::default(),
        }
    }
}

struct CountedStepper(Box<dyn StreamPowerStepper>, Arc<Tally>, bool);
struct CountedMapper(Box<dyn HydrologyMapper>, Arc<Tally>, bool);
struct CountedHydraulic(Box<dyn HydraulicStepper>, Arc<Tally>);

impl Accelerator for Counted {
    fn describe(&self) -> String {
        self.gpu.describe()
    }
    fn supports(&self, params: &Params, outlets: &OutletParams, field: &str) -> Result<()> {
        self.gpu.supports(params, outlets, field)
    }
    fn stream_power(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &Params,
        inputs: Inputs,
        field: &str,
    ) -> Result<Box<dyn StreamPowerStepper>> {
        let inner = self
            .gpu
            .stream_power(grid, outlets, params, inputs, field)?;
        self.tally.steppers.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(CountedStepper(
            inner,
            self.tally.clone(),
            self.in_place,
        )))
    }
    fn supports_thermal(&self, grid: Grid, params: &thermal::Params, field: &str) -> Result<()> {
        self.gpu.supports_thermal(grid, params, field)
    }
    fn thermal(
        &self,
        grid: Grid,
        params: &thermal::Params,
        tangents: &[f32],
        field: &str,
    ) -> Result<Box<dyn ThermalStepper>> {
        self.gpu.thermal(grid, params, tangents, field)
    }
    fn supports_hydraulic(
        &self,
        grid: Grid,
        params: &hydraulic::Params,
        field: &str,
    ) -> Result<()> {
        self.gpu.supports_hydraulic(grid, params, field)
    }
    fn hydraulic(
        &self,
        grid: Grid,
        params: &hydraulic::Params,
        sources: &dyn Fn(u64) -> Vec<f32>,
        dissolubility: f32,
        field: &str,
    ) -> Result<Box<dyn HydraulicStepper>> {
        let inner = self
            .gpu
            .hydraulic(grid, params, sources, dissolubility, field)?;
        Ok(Box::new(CountedHydraulic(inner, self.tally.clone())))
    }
    fn supports_hydrology(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &hydrology::Params,
        field: &str,
    ) -> Result<()> {
        self.gpu.supports_hydrology(grid, outlets, params, field)
    }
    fn hydrology(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &hydrology::Params,
        precipitation: Option<&[f32]>,
        field: &str,
    ) -> Result<Box<dyn HydrologyMapper>> {
        let inner = self
            .gpu
            .hydrology(grid, outlets, params, precipitation, field)?;
        self.tally.mappers.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(CountedMapper(
            inner,
            self.tally.clone(),
            self.in_place,
        )))
    }
}

impl StreamPowerStepper for CountedStepper {
    fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        self.0.set_heights(heights)
    }
    fn step(&mut self, dt: f64) -> Result<()> {
        self.1.steps.fetch_add(1, Ordering::Relaxed);
        self.0.step(dt)
    }
    fn heights(&mut self) -> Result<Vec<f32>> {
        self.1.reads.fetch_add(1, Ordering::Relaxed);
        self.0.heights()
    }
    fn wait(&mut self) -> Result<()> {
        self.0.wait()
    }
    fn shared_heights(&mut self) -> Result<Option<SharedHeights>> {
        self.0.shared_heights()
    }
    fn heights_changed(&mut self) {
        self.0.heights_changed()
    }
    fn set_inputs(&mut self, inputs: &Inputs) -> Result<bool> {
        if !self.2 {
            return Ok(false);
        }
        let taken = self.0.set_inputs(inputs)?;
        if taken {
            self.1.inputs_taken.fetch_add(1, Ordering::Relaxed);
        }
        Ok(taken)
    }
}

impl HydrologyMapper for CountedMapper {
    fn maps(&mut self, heights: &[f32]) -> Result<HydrologyFields> {
        self.1.maps.fetch_add(1, Ordering::Relaxed);
        self.0.maps(heights)
    }
    fn set_precipitation(&mut self, precipitation: Option<&[f32]>) -> Result<bool> {
        if !self.2 {
            return Ok(false);
        }
        self.0.set_precipitation(precipitation)
    }
}

impl HydraulicStepper for CountedHydraulic {
    fn set_state(
        &mut self,
        heights: &[f32],
        water: Option<&[f32]>,
        sediment: Option<&[f32]>,
        flux: Option<&[[f32; 4]]>,
    ) -> Result<()> {
        self.0.set_state(heights, water, sediment, flux)
    }
    fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        self.0.set_heights(heights)
    }
    fn step(&mut self) -> Result<()> {
        self.1.hydraulic_steps.fetch_add(1, Ordering::Relaxed);
        self.0.step()
    }
    fn heights(&mut self) -> Result<Vec<f32>> {
        self.1.hydraulic_reads.fetch_add(1, Ordering::Relaxed);
        self.0.heights()
    }
    fn state(&mut self) -> Result<HydraulicState> {
        self.0.state()
    }
    fn wait(&mut self) -> Result<()> {
        self.0.wait()
    }
}
