//! Resolving a [`ScalarSource`] (constant, grayscale image, noise) into a map. STUB.

use std::path::Path;

use crate::error::Result;
use crate::field::{Grid, ScalarMap};
use crate::recipe::ScalarSource;

/// The source as a map over `grid`.
pub fn resolve(source: &ScalarSource, grid: Grid, _seed: u64, _base_dir: &Path) -> Result<ScalarMap> {
    match source {
        ScalarSource::Constant(v) => Ok(ScalarMap::filled(grid, *v)),
        _ => Ok(ScalarMap::filled(grid, 0.0)),
    }
}
