//! The `Hydrology` stage: route water and write the hydrology maps. STUB.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::runner::StageContext;
use crate::world::World;

/// Hydrology stage parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HydrologyParams {}

impl HydrologyParams {
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
pub fn run_stage(_p: &HydrologyParams, _world: &mut World, _ctx: &mut StageContext) -> Result<()> {
    Ok(())
}
