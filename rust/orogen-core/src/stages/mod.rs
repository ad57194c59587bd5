//! Stages: recipe entries adapted to processes, with progress and cancel.
//!
//! - [`kind`]: what a stage is ([`StageKind`], [`StageRun`]) and the driver that steps it.
//! - [`list`]: the one list of stages, which makes the recipe's `Stage` enum.
//! - [`context`]: progress events and the cancel flag a stage is handed.
//! - [`source`]: the recipe's inputs (initial terrain, scalar maps) resolved to plain data.
//! - one module per stage: [`stream_power`], [`thermal`], [`hydrology`], [`time_loop`].

pub mod accelerated;
pub mod context;
pub mod device;
pub mod domain;
pub mod hydraulic;
pub mod hydrology;
pub mod kind;
pub mod layered_thermal;
pub mod list;
pub mod open_border;
pub mod planet;
pub mod river_curves;
pub mod source;
pub mod strata;
pub mod stream_power;
pub mod thermal;
pub mod time_loop;
pub mod wind;

pub use context::{Event, StageContext};
pub use device::{
    Accelerator, Device, Devices, HydraulicState, HydraulicStepper, HydrologyFields,
    HydrologyMapper, SharedHeights, StreamPowerStepper, ThermalStepper,
};
pub use kind::{drive, Env, LoopProcess, StageKind, StageRun};
pub use list::{Process, Stage};
