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

impl FieldInfo {
    /// A field: `name` in `unit` over `[min, max]`, holding `kind`, described by `doc`.
    pub const fn new(
        name: &'static str,
        unit: &'static str,
        min: f64,
        max: f64,
        kind: FieldKind,
        doc: &'static str,
    ) -> FieldInfo {
        FieldInfo {
            param: ParamInfo {
                name,
                unit,
                min,
                max,
                doc,
            },
            kind,
        }
    }
}

/// Lengths an editor shows in kilometres: the big ones (a noise's feature size, a warp's
/// reach), given in metres in the recipe.
const KM_FIELDS: &[&str] = &["wavelength", "strength", "spacing"];

/// Names whose words read better said otherwise (the rest are the name's words).
const LABELS: &[(&str, &str)] = &[
    ("talus_deg", "Angle of repose"),
    ("thermal_susceptibility", "Thermal weathering"),
    ("dissolubility", "Dissolves in water"),
    ("wind_resistance", "Wind resistance"),
    ("erodibility", "Erodibility"),
    ("lacunarity", "Detail frequency ×"),
    ("persistence", "Detail strength ×"),
    ("stretch_angle", "Stretch direction"),
    ("rotate_octaves", "Rotate octaves"),
    ("dt", "Time step"),
    ("m", "Area exponent m"),
    ("n", "Slope exponent n"),
    ("k", "Erodibility k"),
];

impl ParamInfo {
    /// The name in words for an editor's label: `talus_deg` → "Angle of repose",
    /// `uplift_scale` → "Uplift scale" (a unit suffix `_deg`, `_m`, `_km`, `_yr` dropped).
    pub fn label(&self) -> String {
        label_of(self.name)
    }

    /// The unit an editor shows and the factor from the recipe's unit to it: m/yr as
    /// mm/yr (×1000), `deg` as °, big lengths (a wavelength) in km (×0.001); others as
    /// they are (×1).
    pub fn display_unit(&self) -> (&'static str, f64) {
        display_unit(self.name, self.unit)
    }
}

/// [`ParamInfo::label`] of a field called `name`.
pub fn label_of(name: &str) -> String {
    if let Some((_, label)) = LABELS.iter().find(|(n, _)| *n == name) {
        return (*label).to_string();
    }
    let mut base = name;
    for suffix in ["_deg", "_km", "_m", "_yr"] {
        if let Some(stripped) = base.strip_suffix(suffix) {
            if !stripped.is_empty() {
                base = stripped;
                break;
            }
        }
    }
    let words = base.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// [`ParamInfo::display_unit`] of a field called `name` in `unit`.
pub fn display_unit(name: &str, unit: &'static str) -> (&'static str, f64) {
    match unit {
        "m/yr" => ("mm/yr", 1000.0),
        "deg" => ("°", 1.0),
        "m" if KM_FIELDS.contains(&name) => ("km", 0.001),
        _ => (unit, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_in_words() {
        assert_eq!(label_of("talus_deg"), "Angle of repose");
        assert_eq!(label_of("uplift_scale"), "Uplift scale");
        assert_eq!(label_of("width_km"), "Width");
        assert_eq!(label_of("octaves"), "Octaves");
    }

    #[test]
    fn display_units_scale_to_what_a_designer_reads() {
        assert_eq!(display_unit("uplift", "m/yr"), ("mm/yr", 1000.0));
        assert_eq!(display_unit("talus_deg", "deg"), ("°", 1.0));
        assert_eq!(display_unit("wavelength", "m"), ("km", 0.001));
        assert_eq!(display_unit("amplitude", "m"), ("m", 1.0));
    }
}
