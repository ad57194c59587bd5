//! orogen-core's device hook implemented: the GPU as an [`Accelerator`] a recipe's
//! `device: Gpu | Auto` runs `StreamPower` on (the CLI hands it to the runner).

use orogen_core::eroders::stream_power::{Inputs, Params};
use orogen_core::flow::OutletParams;
use orogen_core::stages::{Accelerator, StreamPowerStepper};
use orogen_core::{Grid, Result};

use crate::{GpuContext, GpuStreamPower};

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
}
