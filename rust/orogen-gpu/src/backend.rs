//! orogen-core's device hook implemented: the GPU as an [`Accelerator`] a recipe's
//! `device: Gpu | Auto` runs `StreamPower`, `Thermal` and `Hydraulic` on (the CLI hands it to the
//! runner). Shared heights ([`SharedHeights`]) are a `wgpu::Buffer` of this GPU.

use std::sync::Arc;

use orogen_core::eroders::hydraulic;
use orogen_core::eroders::stream_power::{Inputs, Params};
use orogen_core::eroders::thermal;
use orogen_core::flow::hydrology;
use orogen_core::flow::OutletParams;
use orogen_core::stages::{
    Accelerator, HydraulicState, HydraulicStepper, HydrologyMapper, SharedHeights,
    StreamPowerStepper, ThermalStepper,
};
use orogen_core::{Grid, Result};

use crate::{GpuContext, GpuHydraulic, GpuHydrology, GpuStreamPower, GpuThermal};

/// The GPU found by [`GpuContext::new`], as orogen-core's [`Accelerator`].
pub struct GpuBackend {
    ctx: GpuContext,
}

impl GpuBackend {
    /// The best adapter of this machine; an error naming `device` when there is none
    /// (or `OROGEN_GPU_DISABLE=1` is set).
    pub fn new() -> Result<Self> {
        Ok(GpuBackend {
            ctx: GpuContext::new()?,
        })
    }

    /// The GPU for `device: Auto`: as [`GpuBackend::new`], but a software adapter (Mesa's
    /// lavapipe, WARP) is refused, since the CPU path is faster than a CPU emulating a GPU,
    /// unless `OROGEN_GPU_SOFTWARE=1` asks for it (the tests on lavapipe set it). The error
    /// names `device` and says which adapter was passed over.
    pub fn for_auto() -> Result<Self> {
        let gpu = GpuBackend::new()?;
        match gpu.refused_under_auto() {
            Some(e) => Err(e),
            None => Ok(gpu),
        }
    }

    /// Why `device: Auto` passes over this adapter (see [`GpuBackend::for_auto`]), if it does.
    pub fn refused_under_auto(&self) -> Option<orogen_core::OrogenError> {
        let allowed = std::env::var_os("OROGEN_GPU_SOFTWARE").is_some_and(|v| v == "1");
        (self.ctx.is_software() && !allowed).then(|| {
            orogen_core::OrogenError::invalid(
                "device",
                format!(
                    "the only adapter is a software one, {}, slower than the CPU \
                     (OROGEN_GPU_SOFTWARE=1 uses it)",
                    self.ctx.describe()
                ),
            )
        })
    }

    /// The GPU it runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }
}

impl Accelerator for GpuBackend {
    fn describe(&self) -> String {
        format!("gpu: {}", self.ctx.describe())
    }

    fn supports(&self, params: &Params, outlets: &OutletParams, field: &str) -> Result<()> {
        GpuStreamPower::supports(params, outlets, field)
    }

    fn stream_power(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &Params,
        inputs: Inputs,
        field: &str,
    ) -> Result<Box<dyn StreamPowerStepper>> {
        Ok(Box::new(GpuStreamPower::on_grid(
            &self.ctx, grid, outlets, params, inputs, field,
        )?))
    }

    fn supports_thermal(&self, grid: Grid, params: &thermal::Params, field: &str) -> Result<()> {
        GpuThermal::supports(grid, params, field)
    }

    fn thermal(
        &self,
        grid: Grid,
        params: &thermal::Params,
        tangents: &[f32],
        field: &str,
    ) -> Result<Box<dyn ThermalStepper>> {
        Ok(Box::new(GpuThermal::on_grid(
            &self.ctx, grid, params, tangents, field,
        )?))
    }

    fn supports_hydraulic(
        &self,
        grid: Grid,
        params: &hydraulic::Params,
        field: &str,
    ) -> Result<()> {
        GpuHydraulic::supports(grid, params, field)
    }

    fn hydraulic(
        &self,
        grid: Grid,
        params: &hydraulic::Params,
        sources: &dyn Fn(u64) -> Vec<f32>,
        dissolubility: f32,
        field: &str,
    ) -> Result<Box<dyn HydraulicStepper>> {
        Ok(Box::new(GpuHydraulic::on_grid(
            &self.ctx,
            grid,
            params,
            sources,
            dissolubility,
            field,
        )?))
    }

    fn supports_hydrology(
        &self,
        _grid: Grid,
        outlets: &OutletParams,
        params: &hydrology::Params,
        field: &str,
    ) -> Result<()> {
        GpuHydrology::supports(outlets, params, field)
    }

    fn hydrology(
        &self,
        grid: Grid,
        outlets: &OutletParams,
        params: &hydrology::Params,
        precipitation: Option<&[f32]>,
        field: &str,
    ) -> Result<Box<dyn HydrologyMapper>> {
        Ok(Box::new(GpuHydrology::on_grid(
            &self.ctx,
            grid,
            outlets,
            params,
            precipitation,
            field,
        )?))
    }
}

impl HydraulicStepper for GpuHydraulic {
    fn set_state(
        &mut self,
        heights: &[f32],
        water: Option<&[f32]>,
        sediment: Option<&[f32]>,
        flux: Option<&[[f32; 4]]>,
    ) -> Result<()> {
        GpuHydraulic::set_state(self, heights, water, sediment, flux)
    }

    fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        GpuHydraulic::set_heights(self, heights)
    }

    fn step(&mut self) -> Result<()> {
        GpuHydraulic::step(self)
    }

    fn heights(&mut self) -> Result<Vec<f32>> {
        GpuHydraulic::heights(self)
    }

    fn state(&mut self) -> Result<HydraulicState> {
        GpuHydraulic::state(self)
    }

    fn wait(&mut self) -> Result<()> {
        GpuHydraulic::wait(self)
    }
}

impl ThermalStepper for GpuThermal {
    fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        GpuThermal::set_heights(self, heights)
    }

    fn step(&mut self) -> Result<()> {
        GpuThermal::step(self)
    }

    fn heights(&mut self) -> Result<Vec<f32>> {
        GpuThermal::heights(self)
    }

    fn max_excess(&mut self) -> Result<f32> {
        GpuThermal::max_excess(self)
    }

    fn share_heights(&mut self, shared: &SharedHeights) -> Result<bool> {
        match shared.0.downcast_ref::<wgpu::Buffer>() {
            Some(buffer) => GpuThermal::share_heights(self, buffer).map(|_| true),
            None => Ok(false),
        }
    }

    fn shared_heights(&mut self) -> Result<Option<SharedHeights>> {
        Ok(Some(SharedHeights(Arc::new(self.heights_buffer().clone()))))
    }
}

impl StreamPowerStepper for GpuStreamPower {
    fn set_heights(&mut self, heights: &[f32]) -> Result<()> {
        GpuStreamPower::set_heights(self, heights)
    }

    fn step(&mut self, dt: f64) -> Result<()> {
        GpuStreamPower::step(self, dt)
    }

    fn heights(&mut self) -> Result<Vec<f32>> {
        GpuStreamPower::heights(self)
    }

    fn wait(&mut self) -> Result<()> {
        GpuStreamPower::wait(self)
    }

    fn shared_heights(&mut self) -> Result<Option<SharedHeights>> {
        let buffer = self.heights_buffer()?.clone();
        Ok(Some(SharedHeights(Arc::new(buffer))))
    }

    fn heights_changed(&mut self) {
        GpuStreamPower::heights_changed(self)
    }

    fn set_inputs(&mut self, inputs: &Inputs) -> Result<bool> {
        GpuStreamPower::set_inputs(self, inputs).map(|()| true)
    }
}
