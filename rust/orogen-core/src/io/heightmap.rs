//! Loading an initial terrain from a heightmap file. STUB: being written.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::field::{Grid, Heightfield};

/// A heightmap the user already has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeightmapSource {
    /// File path; relative paths are relative to the recipe's folder.
    pub path: String,
}

impl HeightmapSource {
    /// Checks fields; `field` prefixes error names.
    pub fn validate(&self, field: &str) -> Result<()> {
        if self.path.is_empty() {
            return Err(crate::OrogenError::invalid(format!("{field}.path"), "is empty"));
        }
        Ok(())
    }

    /// Loads the heights.
    pub fn load(&self, grid: Grid, _base_dir: &Path) -> Result<Heightfield> {
        Ok(Heightfield::filled(grid, 0.0))
    }
}
