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

/// What a described field holds, so an editor can pick its widget (a slider, a colour picker,
/// a list of materials, a RON text box).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FieldKind {
    /// A number, `unit`, within [min, max] (the doc says whether an end is excluded).
    Number,
    /// A whole number within [min, max].
    Integer,
    /// A number that may be left out (the doc says what applies then).
    OptionalNumber,
    /// An sRGB colour `(r, g, b)`, 0–255 each.
    Colour,
    /// The name of a material: one the recipe defines or a built-in one.
    MaterialName,
    /// Free text.
    Text,
    /// A scalar map (`Constant(v)`, `Image(..)`, `Noise(..)`) in `unit`, [min, max] for a
    /// constant.
    ScalarSource,
    /// A nested block, edited as RON text.
    Ron,
}

/// One field of a recipe block that is not a stage (a material, the strata, a stratum): its
/// name, unit, range and doc, and what kind of value it holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FieldInfo {
    /// Name, unit, range and doc.
    pub param: ParamInfo,
    /// What the field holds.
    pub kind: FieldKind,
}
