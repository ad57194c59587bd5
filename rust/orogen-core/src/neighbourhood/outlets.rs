//! Where water leaves a raster: open borders and the sea (one way of building the outlet
//! mask; a graph uses its hull, any neighbourhood can take a mask through `WithOutlets`).

use serde::{Deserialize, Serialize};

pub use super::raster::Side;
use crate::error::{check_finite, Result};

/// Which cells are outlets (base level). An outlet receives itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutletParams {
    /// Grid sides open to outflow: every cell on them is an outlet, e.g. `[North, West]`.
    /// Default: `[North, South, East, West]` (all four). `[]` closes the domain.
    pub borders: Vec<Side>,
    /// Sea level, metres: every cell at or below it is an outlet, so coasts and islands
    /// drain to the sea. Default: none (no sea).
    pub sea_level: Option<f32>,
}

impl Default for OutletParams {
    fn default() -> Self {
        OutletParams {
            borders: vec![Side::North, Side::South, Side::East, Side::West],
            sea_level: None,
        }
    }
}

impl OutletParams {
    /// Checks values; `field` prefixes error names (e.g. `stages[0].Hydrology.outlets`).
    pub fn validate(&self, field: &str) -> Result<()> {
        if let Some(level) = self.sea_level {
            check_finite(&format!("{field}.sea_level"), level as f64)?;
        }
        Ok(())
    }
}
