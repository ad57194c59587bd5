//! Layered rock for a recipe: named materials and the strata they form (thesis §3: a cell is
//! a column of (thickness, material) layers over a bottom material of infinite thickness;
//! layer 0 holds loose sediment and every deposit goes there).
//!
//! Strata are surfaces in space, as in World Machine's Strata device: layer boundaries start
//! at `top` metres and go down by each layer's thickness (a scalar source: constant, image
//! or noise), tilted by `dip_deg` towards `strike_deg + 90°` and folded by a noise warp. The
//! initial terrain cuts them: a column holds the part of each layer below its surface, so a
//! valley cut later exposes the beds in turn (hard beds make cliffs, benches and mesas).
//!
//! Recipe syntax:
//! ```ron
//! materials: [(name: "sandstone", erodibility: 0.3, colour: (196, 150, 96))],
//! strata: (top: 0.0, layers: [(material: "sandstone", thickness: Constant(120.0)),
//!     (material: "shale", thickness: Constant(80.0))], repeat: 6, bottom: "granite",
//!     dip_deg: 2.0, strike_deg: 30.0, warp: (amplitude: 40.0, wavelength: 8000.0)),
//! ```

use crate::math;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};
use crate::field::{Grid, Rect};
use crate::generators::noise::{NoiseKind, NoiseParams};
use crate::schema::{FieldInfo, FieldKind};
use crate::stages::source::ScalarSource;
use crate::state::{Layers, MaterialProps};

/// Salt mixed into the recipe seed for the strata's warp and thickness noise.
const STRATA_SEED: u64 = 0x7374_7261_7461; // "strata"

/// Largest accepted number of layers (after `repeat`).
pub const MAX_LAYERS: usize = 64;

/// A named material: how each process treats it, and its colour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Material {
    /// Name the strata refer to.
    pub name: String,
    /// Angle of repose, degrees, in (0, 90). Default 35.
    pub talus_deg: f32,
    /// Thermal susceptibility, 0 (thermal erosion never moves it) to 1. Default 0.5.
    pub thermal_susceptibility: f32,
    /// Dissolubility in flowing water, 0 (never) to 1. Default 0.5.
    pub dissolubility: f32,
    /// Wind resistance, 0 (blown freely) to 1 (never moves). Default 0.5.
    pub wind_resistance: f32,
    /// Factor on the stream-power erodibility `k` where the material is exposed, ≥ 0.
    /// Default 1.
    pub erodibility: f32,
    /// Colour (sRGB 0–255) for previews, splat maps and Godot. Default grey.
    pub colour: (u8, u8, u8),
}

impl Default for Material {
    fn default() -> Self {
        Material {
            name: String::new(),
            talus_deg: 35.0,
            thermal_susceptibility: 0.5,
            dissolubility: 0.5,
            wind_resistance: 0.5,
            erodibility: 1.0,
            colour: (128, 128, 128),
        }
    }
}

impl Material {
    /// The properties processes read.
    pub fn props(&self) -> MaterialProps {
        MaterialProps {
            talus_deg: self.talus_deg,
            thermal_susceptibility: self.thermal_susceptibility,
            dissolubility: self.dissolubility,
            wind_resistance: self.wind_resistance,
            erodibility: self.erodibility,
        }
    }

    /// Checks ranges; `field` names the material (`materials[2]`).
    pub fn validate(&self, field: &str) -> Result<()> {
        if self.name.is_empty() {
            return Err(OrogenError::invalid(format!("{field}.name"), "is empty"));
        }
        let t = self.talus_deg as f64;
        if !t.is_finite() || t <= 0.0 || t >= 90.0 {
            return Err(OrogenError::invalid(
                format!("{field}.talus_deg"),
                format!(
                    "must be strictly between 0 and 90 degrees, got {}",
                    self.talus_deg
                ),
            ));
        }
        for (name, v) in [
            ("thermal_susceptibility", self.thermal_susceptibility),
            ("dissolubility", self.dissolubility),
            ("wind_resistance", self.wind_resistance),
        ] {
            check_range(&format!("{field}.{name}"), v as f64, 0.0, 1.0)?;
        }
        check_range(
            &format!("{field}.erodibility"),
            self.erodibility as f64,
            0.0,
            MAX_ERODIBILITY,
        )
    }
}

const fn field(
    name: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    kind: FieldKind,
    doc: &'static str,
) -> FieldInfo {
    FieldInfo::new(name, unit, min, max, kind, doc)
}

/// Largest material erodibility factor (× the stage's `k`), what `orogen materials` lists.
pub const MAX_ERODIBILITY: f64 = 10.0;

/// Deepest the strata's layers reach in all, metres: the sum over `layers × repeat` of each
/// layer's largest thickness. Deeper columns overflow the 32-bit floats of the layer maps
/// (`Constant(1e38)` repeated 10 times wrote inf into `layer_shale.exr`, fuzz finding #39.2).
pub const MAX_STRATA_DEPTH: f64 = 1e7;

/// Range of `strata.top`, metres (what `orogen materials` lists).
pub const STRATA_TOP_RANGE: (f64, f64) = (-10000.0, 10000.0);

/// The fields of a [`Material`], in recipe order, for editors: the ranges are what
/// [`Material::validate`] accepts.
pub const MATERIAL_FIELDS: &[FieldInfo] = &[
    field(
        "name",
        "",
        0.0,
        0.0,
        FieldKind::Text,
        "Name the strata refer to; unique among the recipe's materials (a built-in name redefines that material).",
    ),
    field(
        "talus_deg",
        "deg",
        0.0,
        90.0,
        FieldKind::Number,
        "Angle of repose, strictly between 0 and 90 degrees: steeper slopes slide (layered thermal erosion).",
    ),
    field(
        "thermal_susceptibility",
        "",
        0.0,
        1.0,
        FieldKind::Number,
        "How readily thermal weathering moves it: 0 never, 1 freely.",
    ),
    field(
        "dissolubility",
        "",
        0.0,
        1.0,
        FieldKind::Number,
        "How readily flowing water dissolves it: 0 never, 1 freely.",
    ),
    field(
        "wind_resistance",
        "",
        0.0,
        1.0,
        FieldKind::Number,
        "How well it resists the wind: 0 blown freely, 1 never moves.",
    ),
    field(
        "erodibility",
        "×k",
        0.0,
        10.0,
        FieldKind::Number,
        "Factor on the stream-power erodibility k where it is exposed, ≥ 0 (1 = k as given).",
    ),
    field(
        "colour",
        "sRGB",
        0.0,
        255.0,
        FieldKind::Colour,
        "Colour (r, g, b), 0–255 each, of previews, the splat and surface colour maps and Godot's terrain.",
    ),
];

/// The fields of [`Strata`], in recipe order, for editors.
pub const STRATA_FIELDS: &[FieldInfo] = &[
    field(
        "top",
        "m",
        STRATA_TOP_RANGE.0,
        STRATA_TOP_RANGE.1,
        FieldKind::OptionalNumber,
        "Height of the top of the first layer at the map centre, metres; left out: the highest point of the initial terrain.",
    ),
    field(
        "layers",
        "",
        0.0,
        0.0,
        FieldKind::Ron,
        "Layers from the top down, (material, thickness) each.",
    ),
    field(
        "repeat",
        "",
        1.0,
        64.0,
        FieldKind::Integer,
        "How many times the layers repeat downwards; layers × repeat + 1 must be at most 64.",
    ),
    field(
        "bottom",
        "",
        0.0,
        0.0,
        FieldKind::MaterialName,
        "The material under every layer, of infinite thickness.",
    ),
    field(
        "sediment",
        "",
        0.0,
        0.0,
        FieldKind::MaterialName,
        "The material of layer 0, the loose sediment that deposits build up (empty at the start).",
    ),
    field(
        "dip_deg",
        "deg",
        0.0,
        60.0,
        FieldKind::Number,
        "Dip of the layer surfaces, degrees, from 0 (horizontal) up to but not including 60.",
    ),
    field(
        "strike_deg",
        "deg",
        0.0,
        360.0,
        FieldKind::Number,
        "Strike, degrees clockwise from north; the surfaces fall towards strike + 90°.",
    ),
    field(
        "warp",
        "",
        0.0,
        0.0,
        FieldKind::Ron,
        "Noise folds of the surfaces: (amplitude: m ≥ 0, wavelength: m > 0, octaves: 1–8); left out: none.",
    ),
];

/// The fields of one [`Stratum`] (a layer of the strata), for editors.
pub const STRATUM_FIELDS: &[FieldInfo] = &[
    field(
        "material",
        "",
        0.0,
        0.0,
        FieldKind::MaterialName,
        "The layer's material: one of the recipe's materials or a built-in one.",
    ),
    field(
        "thickness",
        "m",
        0.0,
        1000.0,
        FieldKind::ScalarSource,
        "Thickness, metres, ≥ 0: Constant(m), or an Image or Noise map whose min and max are ≥ 0.",
    ),
];

/// The names a stratum, `bottom` or `sediment` may use: the recipe's materials in order,
/// then the built-in ones it does not redefine.
pub fn material_names(materials: &[Material]) -> Vec<String> {
    let mut names: Vec<String> = materials.iter().map(|m| m.name.clone()).collect();
    for m in built_in_materials() {
        if !names.contains(&m.name) {
            names.push(m.name);
        }
    }
    names
}

/// The built-in materials, which a recipe may use by name or redefine in `materials`.
pub fn built_in_materials() -> Vec<Material> {
    let m = |name: &str, talus, thermal, dissolve, wind, erod, colour| Material {
        name: name.into(),
        talus_deg: talus,
        thermal_susceptibility: thermal,
        dissolubility: dissolve,
        wind_resistance: wind,
        erodibility: erod,
        colour,
    };
    vec![
        m("bedrock", 70.0, 0.05, 0.02, 0.98, 0.2, (92, 88, 86)),
        m("granite", 65.0, 0.1, 0.05, 0.95, 0.25, (150, 140, 138)),
        m("sandstone", 55.0, 0.3, 0.2, 0.7, 0.4, (196, 150, 96)),
        m("shale", 30.0, 0.7, 0.6, 0.5, 2.0, (110, 104, 120)),
        m("sand", 32.0, 0.9, 0.9, 0.1, 3.0, (222, 200, 150)),
        m("soil", 35.0, 0.8, 0.8, 0.3, 2.5, (112, 84, 56)),
    ]
}

/// One layer of the strata.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stratum {
    /// The material's name (built in, or from `materials`).
    pub material: String,
    /// Thickness, metres (≥ 0): a constant, an image or noise.
    pub thickness: ScalarSource,
}

/// A noise fold of the strata surfaces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StrataWarp {
    /// Vertical amplitude of the folds, metres (≥ 0). Default 50.
    pub amplitude: f32,
    /// Horizontal feature size, metres (> 0). Default 10000.
    pub wavelength: f32,
    /// Noise octaves, 1..=8. Default 3.
    pub octaves: u32,
}

impl Default for StrataWarp {
    fn default() -> Self {
        StrataWarp {
            amplitude: 50.0,
            wavelength: 10000.0,
            octaves: 3,
        }
    }
}

/// The strata under the initial terrain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Strata {
    /// Height of the top of the first layer at the map centre, metres. Default: the highest
    /// point of the initial terrain.
    pub top: Option<f32>,
    /// Layers from the top down.
    pub layers: Vec<Stratum>,
    /// How many times `layers` repeat downwards, 1..=64 in all. Default 1.
    pub repeat: u32,
    /// The material under every layer, of infinite thickness. Default "bedrock".
    pub bottom: String,
    /// The material of layer 0, the loose sediment that deposits build up (empty at the
    /// start). Default "sand".
    pub sediment: String,
    /// Dip of the strata surfaces, degrees, in [0, 60). Default 0 (horizontal).
    pub dip_deg: f32,
    /// Strike (direction of a horizontal line on a surface), degrees clockwise from north;
    /// the surfaces fall towards strike + 90°. Default 0.
    pub strike_deg: f32,
    /// Noise folding of the surfaces. Default: none.
    pub warp: Option<StrataWarp>,
}

impl Default for Strata {
    fn default() -> Self {
        Strata {
            top: None,
            layers: Vec::new(),
            repeat: 1,
            bottom: "bedrock".into(),
            sediment: "sand".into(),
            dip_deg: 0.0,
            strike_deg: 0.0,
            warp: None,
        }
    }
}

/// A material of the built world, one per layer top down, then the bottom one.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldMaterial {
    /// Name.
    pub name: String,
    /// Colour, sRGB.
    pub colour: [u8; 3],
    /// What the processes read.
    pub props: MaterialProps,
}

/// Looks up `name` in the recipe's materials, then the built-in ones.
fn find<'a>(
    materials: &'a [Material],
    built_in: &'a [Material],
    name: &str,
) -> Option<&'a Material> {
    materials
        .iter()
        .find(|m| m.name == name)
        .or_else(|| built_in.iter().find(|m| m.name == name))
}

/// Checks a recipe's `materials` (each one's ranges, names unique) and its `strata` when it
/// has them; errors name the field (`materials[1].talus_deg`, `strata.layers[0].material`).
pub fn validate_layers(materials: &[Material], strata: Option<&Strata>) -> Result<()> {
    match strata {
        Some(strata) => validate(materials, strata),
        None => validate_materials(materials),
    }
}

/// Checks each material's ranges and that no name is defined twice.
fn validate_materials(materials: &[Material]) -> Result<()> {
    for (i, m) in materials.iter().enumerate() {
        m.validate(&format!("materials[{i}]"))?;
        if materials[..i].iter().any(|o| o.name == m.name) {
            return Err(OrogenError::invalid(
                format!("materials[{i}].name"),
                format!("`{}` is defined twice", crate::error::shorten(&m.name)),
            ));
        }
    }
    Ok(())
}

/// Checks the recipe's `materials` and `strata` together.
pub fn validate(materials: &[Material], strata: &Strata) -> Result<()> {
    validate_materials(materials)?;
    let built_in = built_in_materials();
    let known = |field: String, name: &str| -> Result<()> {
        if find(materials, &built_in, name).is_none() {
            let mut names: Vec<&str> = materials.iter().map(|m| m.name.as_str()).collect();
            names.extend(built_in.iter().map(|m| m.name.as_str()));
            return Err(OrogenError::invalid(
                field,
                format!(
                    "unknown material `{}`; known: {}",
                    crate::error::shorten(name),
                    names.join(", ")
                ),
            ));
        }
        Ok(())
    };
    known("strata.bottom".into(), &strata.bottom)?;
    known("strata.sediment".into(), &strata.sediment)?;
    for (i, s) in strata.layers.iter().enumerate() {
        let f = format!("strata.layers[{i}]");
        known(format!("{f}.material"), &s.material)?;
        s.thickness
            .validate_non_negative(&format!("{f}.thickness"))?;
        if let ScalarSource::Noise { min, max, .. } = &s.thickness {
            if min > max {
                return Err(OrogenError::invalid(
                    format!("{f}.thickness.Noise"),
                    format!("min ({min} m) is above max ({max} m)"),
                ));
            }
        }
    }
    // The deepest the layers can reach: each layer's largest thickness, `repeat` times.
    let deepest = |s: &Stratum| -> f64 {
        match &s.thickness {
            ScalarSource::Constant(v) => *v as f64,
            ScalarSource::Image { min, max, .. } | ScalarSource::Noise { min, max, .. } => {
                min.max(*max) as f64
            }
            ScalarSource::Values(map) => map.data.iter().fold(0.0f32, |a, b| a.max(*b)) as f64,
            ScalarSource::Planet(_) => 0.0,
        }
    };
    let depth: f64 = strata.layers.iter().map(deepest).sum::<f64>()
        * strata.repeat.min(MAX_LAYERS as u32) as f64;
    if depth.is_nan() || depth > MAX_STRATA_DEPTH {
        let (k, thickest) = strata
            .layers
            .iter()
            .enumerate()
            .map(|(k, s)| (k, deepest(s)))
            .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
        return Err(OrogenError::invalid(
            format!("strata.layers[{k}].thickness"),
            format!(
                "up to {} m, with {} layers × {} repeats the strata reach {} m deep; at most {} m \
                 in all (lower the thicknesses or strata.repeat)",
                crate::error::fmt_num(thickest),
                strata.layers.len(),
                strata.repeat,
                crate::error::fmt_num(depth),
                crate::error::fmt_num(MAX_STRATA_DEPTH)
            ),
        ));
    }
    if strata.repeat == 0 || strata.layers.len() * strata.repeat as usize + 1 > MAX_LAYERS {
        return Err(OrogenError::invalid(
            "strata.repeat",
            format!(
                "{} layers × {} repeats must give 1 to {} layers with the sediment",
                strata.layers.len(),
                strata.repeat,
                MAX_LAYERS - 1
            ),
        ));
    }
    if let Some(top) = strata.top {
        check_range(
            "strata.top",
            top as f64,
            STRATA_TOP_RANGE.0,
            STRATA_TOP_RANGE.1,
        )?;
    }
    let dip = strata.dip_deg as f64;
    if !(dip.is_finite() && (0.0..60.0).contains(&dip)) {
        return Err(OrogenError::invalid(
            "strata.dip_deg",
            format!("must be within [0, 60) degrees, got {}", strata.dip_deg),
        ));
    }
    check_range("strata.strike_deg", strata.strike_deg as f64, 0.0, 360.0)?;
    if let Some(w) = &strata.warp {
        check_range("strata.warp.amplitude", w.amplitude as f64, 0.0, 1e5)?;
        crate::error::check_positive("strata.warp.wavelength", w.wavelength as f64)?;
        if !(1..=8).contains(&w.octaves) {
            return Err(OrogenError::invalid(
                "strata.warp.octaves",
                format!("must be between 1 and 8, got {}", w.octaves),
            ));
        }
    }
    Ok(())
}

/// Builds the layers under `surface` (heights on `grid`) and the materials of the world
/// (one per layer top down, then the bottom one). Layer 0 is the empty sediment layer.
pub fn build(
    materials: &[Material],
    strata: &Strata,
    grid: Grid,
    surface: &[f32],
    seed: u64,
    base_dir: &Path,
) -> Result<(Layers, Vec<WorldMaterial>)> {
    let never = std::sync::atomic::AtomicBool::new(false);
    build_cancellable(materials, strata, grid, surface, seed, base_dir, &never)
}

/// [`build`], giving up with [`OrogenError::Cancelled`] soon after `cancel` is set
/// (between layers, and row by row inside noise thicknesses and the warp).
#[allow(clippy::too_many_arguments)]
pub fn build_cancellable(
    materials: &[Material],
    strata: &Strata,
    grid: Grid,
    surface: &[f32],
    seed: u64,
    base_dir: &Path,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<(Layers, Vec<WorldMaterial>)> {
    validate(materials, strata)?;
    let n = grid.len();
    let top = strata
        .top
        .unwrap_or_else(|| surface.iter().copied().fold(f32::MIN, f32::max));
    let warp = match &strata.warp {
        Some(w) => Some(
            crate::generators::noise::generate_cancellable(
                &warp_noise(w),
                grid,
                seed ^ STRATA_SEED,
                cancel,
            )?
            .data,
        ),
        None => None,
    };
    let mut thickness_maps = Vec::with_capacity(strata.layers.len());
    for (i, s) in strata.layers.iter().enumerate() {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(OrogenError::Cancelled);
        }
        let t = s.thickness.resolve_cancellable(
            grid,
            seed ^ STRATA_SEED ^ (i as u64 + 1),
            base_dir,
            cancel,
        )?;
        thickness_maps.push(t.data);
    }
    let whole = Rect {
        x0: 0,
        y0: 0,
        w: grid.width,
        h: grid.height,
    };
    debug_assert_eq!(whole.len(), n);
    lay(
        materials,
        strata,
        grid,
        whole,
        surface,
        top,
        warp,
        &thickness_maps,
    )
}

/// [`build_cancellable`] over the cells of `window` only (a tile of a tiled run, issue
/// #41): `surface` is the window's heights (row-major), and each cell's column comes out
/// as the whole map's there, bit for bit. The warp and noise thicknesses are evaluated at
/// the window's whole-map positions; what needs the whole map goes through `min_max`,
/// which turns this window's `(lo, hi)` into the whole map's (every tile calls it
/// together, the same number of times): the default `top` (the highest point of the whole
/// surface) and each noise thickness's normalisation.
#[allow(clippy::too_many_arguments)]
pub fn build_window(
    materials: &[Material],
    strata: &Strata,
    grid: Grid,
    window: Rect,
    surface: &[f32],
    seed: u64,
    base_dir: &Path,
    cancel: &std::sync::atomic::AtomicBool,
    min_max: &mut dyn FnMut(f32, f32) -> Result<(f32, f32)>,
) -> Result<(Layers, Vec<WorldMaterial>)> {
    validate(materials, strata)?;
    crate::generators::noise::check_window(grid, window)?;
    if surface.len() != window.len() {
        return Err(OrogenError::invalid(
            "strata window",
            format!(
                "{} heights for {}x{} cells",
                surface.len(),
                window.w,
                window.h
            ),
        ));
    }
    let top = match strata.top {
        Some(t) => t,
        None => {
            let local = surface.iter().copied().fold(f32::MIN, f32::max);
            min_max(local, local)?.1
        }
    };
    let warp = match &strata.warp {
        Some(w) => Some(crate::generators::noise::generate_window(
            &warp_noise(w),
            grid,
            window,
            seed ^ STRATA_SEED,
            cancel,
        )?),
        None => None,
    };
    let mut thickness_maps = Vec::with_capacity(strata.layers.len());
    for (i, s) in strata.layers.iter().enumerate() {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(OrogenError::Cancelled);
        }
        thickness_maps.push(s.thickness.resolve_window(
            grid,
            window,
            seed ^ STRATA_SEED ^ (i as u64 + 1),
            base_dir,
            cancel,
            min_max,
        )?);
    }
    lay(
        materials,
        strata,
        grid,
        window,
        surface,
        top,
        warp,
        &thickness_maps,
    )
}

/// The warp's noise.
fn warp_noise(w: &StrataWarp) -> NoiseParams {
    NoiseParams {
        kind: NoiseKind::Fbm,
        octaves: w.octaves,
        wavelength: w.wavelength,
        amplitude: w.amplitude,
        ..Default::default()
    }
}

/// Lays the strata under `surface` over the cells of `window` of `grid` (row-major), from
/// the top surface's height at the map centre, the warp and each layer's thickness there.
#[allow(clippy::too_many_arguments)]
fn lay(
    materials: &[Material],
    strata: &Strata,
    grid: Grid,
    window: Rect,
    surface: &[f32],
    top: f32,
    warp: Option<Vec<f32>>,
    thickness_maps: &[Vec<f32>],
) -> Result<(Layers, Vec<WorldMaterial>)> {
    let built_in = built_in_materials();
    let world_material = |name: &str| {
        let m = find(materials, &built_in, name).expect("validated");
        WorldMaterial {
            name: m.name.clone(),
            colour: [m.colour.0, m.colour.1, m.colour.2],
            props: m.props(),
        }
    };
    let n = window.len();
    // Depth-varying surfaces: the top one, tilted and folded, then each layer below it.
    let (cx, cy) = (
        grid.width as f64 * grid.dx() as f64 / 2.0,
        grid.height as f64 * grid.dy() as f64 / 2.0,
    );
    // Surfaces fall towards strike + 90° (clockwise from north; north is -y).
    let dir = (strata.strike_deg as f64 + 90.0).to_radians();
    let (dx, dy) = (math::sin(dir), -math::cos(dir));
    let slope = math::tan((strata.dip_deg as f64).to_radians());
    let mut upper: Vec<f64> = (0..n)
        .map(|i| {
            let (x, y) = (window.x0 + i % window.w, window.y0 + i / window.w);
            let (px, py) = (
                x as f64 * grid.dx() as f64 - cx,
                y as f64 * grid.dy() as f64 - cy,
            );
            let w = warp.as_ref().map_or(0.0, |w| w[i] as f64);
            top as f64 - slope * (px * dx + py * dy) + w
        })
        .collect();
    let mut layers = vec![(strata.sediment.clone(), vec![0.0f32; n])];
    let mut mats = vec![world_material(&strata.sediment)];
    for _ in 0..strata.repeat {
        for (j, (s, t)) in strata.layers.iter().zip(thickness_maps).enumerate() {
            let mut thick = vec![0.0f32; n];
            for i in 0..n {
                let lower = upper[i] - t[i].max(0.0) as f64;
                // The part of [lower, upper] below the surface.
                let h = surface[i] as f64;
                thick[i] = (upper[i].min(h) - lower).max(0.0) as f32;
                upper[i] = lower;
            }
            // Named as the recipe names it, not as the layer stack does (`layers["shale"]`:
            // fuzz finding #39.8).
            if let Some(i) = thick.iter().position(|v| !v.is_finite()) {
                return Err(OrogenError::invalid(
                    format!("strata.layers[{j}].thickness"),
                    format!(
                        "gives a layer {} m thick at cell ({}, {}): beyond 32-bit floats",
                        thick[i],
                        window.x0 + i % window.w.max(1),
                        window.y0 + i / window.w.max(1)
                    ),
                ));
            }
            layers.push((s.material.clone(), thick));
            mats.push(world_material(&s.material));
        }
    }
    mats.push(world_material(&strata.bottom));
    Ok((Layers::new(layers, n)?, mats))
}
