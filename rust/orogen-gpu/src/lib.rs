//! Orogen's GPU backend (issue #42): the stream-power step as WGSL compute shaders run
//! through wgpu (Vulkan, Metal, DX12; Mesa's lavapipe on machines without a GPU).
//!
//! - [`GpuContext::new`] finds an adapter, or returns an error naming `device`.
//! - [`GpuStreamPower`] steps a raster: D8 receivers equal to orogen-core's router,
//!   drainage by pointer jumping with integer atomics (deterministic), the implicit solve
//!   for `n = 1` by composing each node's affine-with-clamp map down the receivers (FastFlow,
//!   Jain et al. 2024, eq. 4 and the doubling of its Algorithm 6), and uplift; lakes
//!   (`Carve`, `Fill`) the same as the CPU's: basins by pointer jumping, their minimum
//!   spanning tree in the core's strict order by Borůvka's rounds, also on the GPU; for
//!   `n ≠ 1` the CPU's per-node Newton solve, one level of the receiver forest at a time.
//!
//! - [`GpuThermal`]: orogen-core's thermal step (three Jacobi passes, any talus), which may
//!   step a [`GpuStreamPower`]'s heights buffer (a `TimeLoop` of both).
//! - [`GpuHydraulic`]: the pipe model of orogen-core's `Hydraulic` (one material, uniform
//!   rain or none, sources), four passes a step.
//! - [`GpuBackend`]: orogen-core's `Accelerator` hook, so a recipe's `device: Gpu | Auto`
//!   (and the CLI's `--device`) runs its `StreamPower` and `Thermal` stages here.
//!
//! - [`GpuHydrology`]: the routing of orogen-core's `Hydrology` stage (receivers, lakes,
//!   drainage, water surface), read back once for its maps, and of a GPU `StreamPower`'s
//!   maps at its end (`hydrology: true`).
//!
//! Not done yet: closed domains, outlet masks (nodata), layered terrain.

mod backend;
mod context;
mod hydraulic;
mod hydrology;
mod lakes;
mod stream_power;
mod thermal;

pub use backend::GpuBackend;
pub use context::{GpuContext, DISABLE_ENV, NO_ADAPTER_HELP};
pub use hydraulic::GpuHydraulic;
pub use hydrology::GpuHydrology;
pub use orogen_core::stages::HydraulicState;
pub use stream_power::{GpuStreamPower, PHASES};
pub use thermal::GpuThermal;
