//! STUB: being written.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::runner::StageContext;
use crate::world::World;

/// Stage parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThermalParams {
    /// Number of steps.
    pub iterations: u32,
}

impl Default for ThermalParams {
    fn default() -> Self {
        ThermalParams { iterations: 10 }
    }
}

impl ThermalParams {
    /// Scalar parameters with units and ranges, for editors.
    pub fn describe() -> &'static [crate::recipe::ParamInfo] {
        &[]
    }

    /// Checks ranges; `field` prefixes error names.
    pub fn validate(&self, _field: &str) -> Result<()> {
        Ok(())
    }
}

/// Runs the stage.
pub fn run_stage(p: &ThermalParams, world: &mut World, ctx: &mut StageContext) -> Result<()> {
    for i in 0..p.iterations {
        ctx.step_done(world, i + 1, (i + 1) as f32 / p.iterations as f32)?;
    }
    Ok(())
}
