//! The parameter schema editors read: each scalar parameter's name, unit, range and doc.

use serde::Serialize;

/// One scalar parameter of a stage, for editors: name, unit, allowed range, doc.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ParamInfo {
    /// Field name as written in RON.
    pub name: &'static str,
    /// Unit, e.g. `m`, `yr`, `deg`, `1/yr`, `` (dimensionless).
    pub unit: &'static str,
    /// Smallest sensible value (for sliders; validation may be looser).
    pub min: f64,
    /// Largest sensible value.
    pub max: f64,
    /// One-line description.
    pub doc: &'static str,
}
