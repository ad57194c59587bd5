//! The routing of orogen-core's `Hydrology` stage on the GPU (issue #42's "hydrology maps
//! at the end of a run"): the stream-power stepper's receivers, lakes (`Carve`, `Fill` by
//! Borůvka's tree) and exact fixed-point drainage, with precipitation, then the water
//! surface by pointer jumping (fill.wgsl); the receivers, drainage and surface read back
//! once. orogen-core derives lake depth, rivers and basins from them.

use orogen_core::eroders::stream_power::{Inputs, Params};
use orogen_core::flow::hydrology;
use orogen_core::flow::OutletParams;
use orogen_core::stages::{HydrologyFields, HydrologyMapper};
use orogen_core::{Grid, OrogenError, Result};

use crate::{GpuContext, GpuStreamPower};

/// A `Hydrology` stage's routing on the GPU over one grid.
pub struct GpuHydrology {
    router: GpuStreamPower,
    epsilon: f32,
}

impl GpuHydrology {
    /// Whether the GPU routes these settings: `Ok`, else the error naming the field
    /// (`{field}.outlets.borders` for a closed domain). No GPU needed.
    pub fn supports(outlets: &OutletParams, params: &hydrology::Params, field: &str) -> Result<()> {
        params.validate(field)?;
        GpuStreamPower::supports(&Self::routing(params), outlets, field)
    }

    /// The stream-power parameters whose routing is this stage's (its `lakes`).
    fn routing(params: &hydrology::Params) -> Params {
        Params {
            lakes: params.lakes,
            ..Params::default()
        }
    }

    /// The routing over `grid` with `outlets`, `precipitation` in m/yr per cell (finite,
    /// ≥ 0) or none; `field` prefixes error names.
    pub fn on_grid(
        ctx: &GpuContext,
        grid: Grid,
        outlets: &OutletParams,
        params: &hydrology::Params,
        precipitation: Option<&[f32]>,
        field: &str,
    ) -> Result<Self> {
        Self::supports(outlets, params, field)?;
        let n = grid.len();
        if let Some(rain) = precipitation {
            if rain.len() != n {
                return Err(OrogenError::invalid(
                    format!("{field}.precipitation"),
                    format!("has {} values, the terrain has {n} nodes", rain.len()),
                ));
            }
        }
        // Erodibility and uplift are not used by a route; any valid values do.
        let inputs = Inputs {
            k: vec![1e-6; n],
            uplift: vec![0.0; n],
            precipitation: precipitation.map(<[f32]>::to_vec),
        };
        let router =
            GpuStreamPower::on_grid(ctx, grid, outlets, &Self::routing(params), inputs, field)?;
        Ok(GpuHydrology {
            router,
            epsilon: params.epsilon,
        })
    }

    /// New precipitation, m/yr per cell (finite, ≥ 0), or none, uploaded in place.
    pub fn set_precipitation(&mut self, precipitation: Option<&[f32]>) -> Result<()> {
        let n = self.router.nodes();
        self.router.set_inputs(&Inputs {
            k: vec![1e-6; n],
            uplift: vec![0.0; n],
            precipitation: precipitation.map(<[f32]>::to_vec),
        })
    }

    /// Routes `heights` on the GPU and reads back the receivers, drainage (rounded once
    /// from the exact sums) and water surface.
    pub fn maps(&mut self, heights: &[f32]) -> Result<HydrologyFields> {
        self.router.set_heights(heights)?;
        self.router.route()?;
        let receivers = self.router.receivers()?;
        let drainage = self
            .router
            .drainage()?
            .into_iter()
            .map(|v| v as f32)
            .collect();
        let water_surface = self.router.water_surface(self.epsilon)?;
        Ok(HydrologyFields {
            receivers,
            drainage,
            water_surface,
        })
    }
}

impl HydrologyMapper for GpuHydrology {
    fn maps(&mut self, heights: &[f32]) -> Result<HydrologyFields> {
        GpuHydrology::maps(self, heights)
    }

    fn set_precipitation(&mut self, precipitation: Option<&[f32]>) -> Result<bool> {
        self.set_precipitation(precipitation).map(|()| true)
    }
}
