//! Procedural noise terrain (Galin et al. 2019, §faulting and noise). STUB: being written.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::field::{Grid, Heightfield};

/// Noise terrain parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NoiseParams {
    /// Feature size of the first octave, metres.
    pub wavelength: f32,
    /// Amplitude of the first octave, metres.
    pub amplitude: f32,
}

impl Default for NoiseParams {
    fn default() -> Self {
        NoiseParams {
            wavelength: 20_000.0,
            amplitude: 500.0,
        }
    }
}

impl NoiseParams {
    /// Checks ranges; `field` prefixes error names.
    pub fn validate(&self, field: &str) -> Result<()> {
        crate::error::check_positive(&format!("{field}.wavelength"), self.wavelength as f64)?;
        crate::error::check_finite(&format!("{field}.amplitude"), self.amplitude as f64)
    }
}

/// Generates a heightfield from `params`.
pub fn generate(params: &NoiseParams, grid: Grid, _seed: u64) -> Result<Heightfield> {
    let _ = params;
    Ok(Heightfield::filled(grid, 0.0))
}
