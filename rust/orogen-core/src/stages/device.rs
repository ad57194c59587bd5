//! Where stream power, thermal and hydraulic erosion run (issue #42): the recipe's `device: Cpu | Gpu
//! | Auto` switch, and the hook a GPU backend implements. orogen-core never depends on a
//! GPU crate: a caller (the CLI, with orogen-gpu) hands the runner an [`Accelerator`]
//! through [`Devices`]; the `StreamPower` stage asks it for a [`StreamPowerStepper`], the
//! `Thermal` stage for a [`ThermalStepper`], the `Hydraulic` stage for a
//! [`HydraulicStepper`] (its pipe model), and steps that instead of the CPU's process.
//! A `TimeLoop` of such processes keeps the heights on the accelerator between them
//! ([`SharedHeights`]).
//!
//! - `Cpu` (the default): the CPU's code path, untouched; the accelerator is never asked.
//! - `Gpu`: every `StreamPower`, `Thermal` and `Hydraulic` stage runs on the accelerator; one it cannot
//!   run is an error naming the stage and why, and no accelerator is an error naming
//!   `device`. Other stages run on the CPU.
//! - `Auto`: the accelerator for the stages it runs, the CPU for the others (and for all
//!   when there is none); never an error for that. `bake.json` says which ran each stage.

use serde::{Deserialize, Serialize};

use crate::eroders::hydraulic;
use crate::eroders::stream_power::{Inputs, Params};
use crate::eroders::thermal;
use crate::error::{OrogenError, Result};
use crate::field::Grid;
use crate::flow::hydrology;
use crate::neighbourhood::OutletParams;

/// Where a recipe's `StreamPower`, `Thermal` and `Hydraulic` stages run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Device {
    /// The CPU (all cores): every stage, as before the switch existed.
    #[default]
    Cpu,
    /// A GPU for every `StreamPower`, `Thermal` and `Hydraulic` stage; an error where
    /// there is none or a stage needs what the GPU step does not do (a graph domain,
    /// layered rock, a closed domain, rain drops, …).
    Gpu,
    /// A GPU for the `StreamPower`, `Thermal` and `Hydraulic` stages it can run when one
    /// is found, else the CPU.
    Auto,
}

impl Device {
    /// True for `Cpu` (the recipe then leaves `device` out).
    pub fn is_cpu(&self) -> bool {
        *self == Device::Cpu
    }
}

/// What [`Devices::cpu_only`] says when a run is asked for a GPU it was not given.
pub const NO_BACKEND: &str = "this program runs the CPU only (no GPU backend is linked; \
     the `orogen` command line has one)";

/// A stream-power process stepped outside the CPU's solver (on a GPU): heights in, steps,
/// heights out. The heights it holds carry over from step to step.
pub trait StreamPowerStepper {
    /// The heights to step from, one per cell, metres.
    fn set_heights(&mut self, heights: &[f32]) -> Result<()>;
    /// One step of `dt` years: routing, lakes, drainage, uplift and erosion.
    fn step(&mut self, dt: f64) -> Result<()>;
    /// The heights after the last step (waits for the device).
    fn heights(&mut self) -> Result<Vec<f32>>;
    /// Waits until the device has done the steps asked for, reading nothing back (live
    /// painting's steps between two views; an error if the device failed).
    fn wait(&mut self) -> Result<()> {
        Ok(())
    }
    /// The heights it steps, on the device, for another stepper of the same accelerator
    /// to step in turn ([`ThermalStepper::share_heights`]); the steps in flight are
    /// finished first. `None` where it cannot share them.
    fn shared_heights(&mut self) -> Result<Option<SharedHeights>> {
        Ok(None)
    }
    /// Another stepper changed the shared heights on the device.
    fn heights_changed(&mut self) {}
    /// New erodibility, uplift and precipitation (live painting), taken in place: the
    /// steps after it as those of a stepper made with them over the same heights. `false`
    /// where it cannot (the caller then makes a new stepper).
    fn set_inputs(&mut self, _inputs: &Inputs) -> Result<bool> {
        Ok(false)
    }
}

/// Heights held on an accelerator, handed by one of its steppers to another so that a
/// `TimeLoop`'s processes step the same heights there without reading them back: the
/// accelerator's own handle (orogen-gpu's buffer), opaque to orogen-core.
#[derive(Clone)]
pub struct SharedHeights(pub std::sync::Arc<dyn std::any::Any + Send + Sync>);

/// A run a `TimeLoop` steps on the accelerator without reading the heights back, the
/// heights shared with the loop's other such processes (`StageRun::on_device` gives it).
pub trait DeviceProcess {
    /// Whether it can step another process's heights ([`DeviceProcess::adopt`]).
    fn can_adopt(&self) -> bool;
    /// Its heights on the device, for the others (its steps in flight finished).
    fn shared(&mut self) -> Result<Option<SharedHeights>>;
    /// Steps `shared` from now on: `Ok(false)` where it cannot.
    fn adopt(&mut self, shared: &SharedHeights) -> Result<bool>;
    /// Uploads the world's heights.
    fn upload(&mut self, heights: &[f32]) -> Result<()>;
    /// Another process changed the shared heights on the device.
    fn changed(&mut self);
    /// One step on the device, reading nothing back; done (not speculative) on return
    /// where another process steps the heights next.
    fn step_device(&mut self) -> Result<()>;
    /// Whether its last step converged (may read a figure back).
    fn converged(&mut self) -> Result<bool>;
    /// The heights on the device.
    fn download(&mut self) -> Result<Vec<f32>>;
}

/// A thermal process stepped outside the CPU (on a GPU): heights in, steps, heights out.
pub trait ThermalStepper {
    /// The heights to step from, one per cell, metres.
    fn set_heights(&mut self, heights: &[f32]) -> Result<()>;
    /// One step, as the CPU's `Thermal::step_heights` (need not wait for the device).
    fn step(&mut self) -> Result<()>;
    /// The heights after the last step (waits for the device).
    fn heights(&mut self) -> Result<Vec<f32>>;
    /// The largest excess over the talus found before the last step, metres (waits).
    fn max_excess(&mut self) -> Result<f32>;
    /// Steps `shared` (another stepper's heights, [`StreamPowerStepper::shared_heights`])
    /// from now on instead of its own: `Ok(false)` where it cannot.
    fn share_heights(&mut self, _shared: &SharedHeights) -> Result<bool> {
        Ok(false)
    }
    /// Its heights on the device, for another stepper (as
    /// [`StreamPowerStepper::shared_heights`]).
    fn shared_heights(&mut self) -> Result<Option<SharedHeights>> {
        Ok(None)
    }
}

/// What a [`HydraulicStepper`] holds, read back: the heights and the `SimState` fields of
/// orogen-core's `Hydraulic`.
#[derive(Clone, Debug, PartialEq)]
pub struct HydraulicState {
    /// Bed heights, metres.
    pub heights: Vec<f32>,
    /// Water depth, metres.
    pub water: Vec<f32>,
    /// Suspended sediment, metres of material.
    pub sediment: Vec<f32>,
    /// Outflow fluxes (left, right, up, down), m³/s.
    pub flux: Vec<[f32; 4]>,
    /// Velocity, m/s.
    pub velocity: Vec<glam::Vec2>,
    /// Water that left through open borders since the stepper was made, m³.
    pub water_lost_m3: f64,
    /// Sediment that left through open borders since the stepper was made, m³ of material.
    pub sediment_lost_m3: f64,
}

/// The pipe model of `Hydraulic` stepped outside the CPU (on a GPU): state in, steps, state
/// out. Water, sediment and fluxes carry over from step to step.
pub trait HydraulicStepper {
    /// The state to step from: heights (metres), and the water, sediment and fluxes of a
    /// run before (`None`: zero, as the CPU's process creates them).
    fn set_state(
        &mut self,
        heights: &[f32],
        water: Option<&[f32]>,
        sediment: Option<&[f32]>,
        flux: Option<&[[f32; 4]]>,
    ) -> Result<()>;
    /// New heights only (another process moved the bed), the water and sediment kept.
    fn set_heights(&mut self, heights: &[f32]) -> Result<()>;
    /// One step, as the CPU's `Hydraulic::step` over a terrain without layers.
    fn step(&mut self) -> Result<()>;
    /// The heights after the last step (waits for the device).
    fn heights(&mut self) -> Result<Vec<f32>>;
    /// Everything after the last step (waits for the device).
    fn state(&mut self) -> Result<HydraulicState>;
    /// Waits until the device has done the steps asked for, reading nothing back (an
    /// error if it failed).
    fn wait(&mut self) -> Result<()> {
        Ok(())
    }
}

/// What an accelerator's routing gives for a `Hydrology` stage's maps, read back once:
/// the rest (lake depth, rivers, basins) is derived from these on the CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct HydrologyFields {
    /// Each cell's receiver, lakes resolved (itself for outlets and, with `lakes: None`,
    /// pits): the CPU router's.
    pub receivers: Vec<u32>,
    /// Drainage area (m²) or discharge (m³/yr), summed exactly and rounded once to f32.
    pub drainage: Vec<f32>,
    /// The water surface (FastFlow Algorithm 6 over the routed heights), metres.
    pub water_surface: Vec<f32>,
}

/// The routing of a `Hydrology` stage outside the CPU (on a GPU): heights in, the fields
/// of its maps out.
pub trait HydrologyMapper {
    /// Routes `heights` (metres, one per cell) and reads the fields back.
    fn maps(&mut self, heights: &[f32]) -> Result<HydrologyFields>;
    /// New precipitation (m/yr per cell, or none), taken in place; `false` where it
    /// cannot (the caller then makes a new mapper).
    fn set_precipitation(&mut self, _precipitation: Option<&[f32]>) -> Result<bool> {
        Ok(false)
    }
}

/// A device that can run stream power (orogen-gpu's `GpuBackend`).
pub trait Accelerator {
    /// What `bake.json` records for a stage it ran, e.g. `gpu: NVIDIA H100 (Vulkan, …)`.
    fn describe(&self) -> String;
    /// `Ok` when it can run stream power with these settings, else the error naming the
    /// field at fault (`{field}.outlets.borders`). Cheap: runs nothing.
    fn supports(&self, params: &Params, outlets: &OutletParams, field: &str) -> Result<()>;
    /// Stream power over `grid` with `outlets`, as the CPU's `StreamPower::on_grid`.
    fn stream_power(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &Params,
        inputs: Inputs,
        field: &str,
    ) -> Result<Box<dyn StreamPowerStepper>>;
    /// `Ok` when it can run thermal erosion with these settings over `grid`, else the
    /// error naming the field at fault. Cheap: runs nothing. None by default.
    fn supports_thermal(&self, _grid: Grid, _params: &thermal::Params, field: &str) -> Result<()> {
        Err(OrogenError::invalid(
            field,
            "this accelerator does not run thermal erosion; use device: Cpu, or Auto",
        ))
    }
    /// Thermal erosion over `grid`, each cell's talus tangent resolved on the CPU
    /// (`eroders::thermal::talus_tangents`), as the CPU's `Thermal` over a raster.
    fn thermal(
        &self,
        grid: Grid,
        params: &thermal::Params,
        _tangents: &[f32],
        field: &str,
    ) -> Result<Box<dyn ThermalStepper>> {
        self.supports_thermal(grid, params, field)?;
        Err(OrogenError::invalid(
            field,
            "this accelerator does not run thermal erosion; use device: Cpu, or Auto",
        ))
    }
    /// `Ok` when it can run the pipe model of `Hydraulic` with these settings over `grid`
    /// (one material), else the error naming the field at fault. Cheap: runs nothing.
    /// None by default.
    fn supports_hydraulic(
        &self,
        _grid: Grid,
        _params: &hydraulic::Params,
        field: &str,
    ) -> Result<()> {
        Err(OrogenError::invalid(
            field,
            "this accelerator does not run hydraulic erosion; use device: Cpu, or Auto",
        ))
    }
    /// The pipe model over `grid`, one material of `dissolubility`; `sources(step)` is
    /// the depth the sources add to each cell on that step (the CPU's
    /// `Hydraulic::source_depths`, asked for steps 0 and 1: later steps add what step 1
    /// does).
    fn hydraulic(
        &self,
        grid: Grid,
        params: &hydraulic::Params,
        _sources: &dyn Fn(u64) -> Vec<f32>,
        _dissolubility: f32,
        field: &str,
    ) -> Result<Box<dyn HydraulicStepper>> {
        self.supports_hydraulic(grid, params, field)?;
        Err(OrogenError::invalid(
            field,
            "this accelerator does not run hydraulic erosion; use device: Cpu, or Auto",
        ))
    }
    /// `Ok` when it can route a `Hydrology` stage's water with these settings over `grid`,
    /// else the error naming the field at fault. Cheap: runs nothing. None by default.
    fn supports_hydrology(
        &self,
        _grid: Grid,
        _outlets: &OutletParams,
        _params: &hydrology::Params,
        field: &str,
    ) -> Result<()> {
        Err(OrogenError::invalid(
            field,
            "this accelerator does not route hydrology; use device: Cpu, or Auto",
        ))
    }
    /// The routing of a `Hydrology` stage over `grid` with `outlets`, with
    /// `precipitation` (m/yr per cell) or none, as the CPU's `flow::hydrology::Hydrology`.
    fn hydrology(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &hydrology::Params,
        _precipitation: Option<&[f32]>,
        field: &str,
    ) -> Result<Box<dyn HydrologyMapper>> {
        self.supports_hydrology(grid, outlets, params, field)?;
        Err(OrogenError::invalid(
            field,
            "this accelerator does not route hydrology; use device: Cpu, or Auto",
        ))
    }
}

/// The device a run was asked for and the accelerator it was given.
#[derive(Clone, Copy)]
pub struct Devices<'a> {
    /// The recipe's `device` (after the CLI's `--device`).
    pub device: Device,
    /// The accelerator, if one was found.
    pub accelerator: Option<&'a dyn Accelerator>,
    /// Why there is none (said in the error under `Gpu`, in `bake.json` under `Auto`).
    pub missing: &'a str,
}

impl Devices<'static> {
    /// Everything on the CPU, as before the switch.
    pub const CPU: Devices<'static> = Devices {
        device: Device::Cpu,
        accelerator: None,
        missing: NO_BACKEND,
    };

    /// `device` with no accelerator: `Gpu` fails naming `device`, `Auto` runs the CPU.
    pub fn cpu_only(device: Device) -> Self {
        Devices {
            device,
            ..Devices::CPU
        }
    }
}

impl<'a> Devices<'a> {
    /// The accelerator a `Gpu` run needs; an error naming `device` when there is none.
    /// `None` for `Cpu`, and for `Auto` without one.
    pub fn wanted(&self) -> Result<Option<&'a dyn Accelerator>> {
        match (self.device, self.accelerator) {
            (Device::Cpu, _) => Ok(None),
            (Device::Gpu, None) => Err(OrogenError::invalid(
                "device",
                format!("Gpu needs a GPU: {}", self.missing),
            )),
            (_, a) => Ok(a),
        }
    }
}
