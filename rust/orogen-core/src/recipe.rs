//! The recipe: one RON format shared by `orogen bake`, the editor dock and the runtime.
//!
//! A recipe names the grid, the seed, the initial terrain, the uplift and an ordered
//! list of stages. Parsing rejects unknown fields; [`Recipe::validate`] rejects values
//! out of range, naming the field (`stages[1].Thermal.talus`, `cell_size`, …).
//!
//! RON extensions `unwrap_variant_newtypes` and `implicit_some` are on, so a stage is
//! written `Thermal(iterations: 50)` and an optional block `warp: (strength: 500.0)`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::eroders::stream_power::StreamPowerParams;
use crate::eroders::thermal::ThermalParams;
use crate::error::{check_finite, OrogenError, Result};
use crate::field::Grid;
use crate::flow::hydrology::HydrologyParams;
use crate::io::heightmap::HeightmapSource;
use crate::terrain::noise::NoiseParams;

/// The embedded default recipe (`orogen recipe default`).
pub const DEFAULT_RECIPE: &str = include_str!("../recipes/default.ron");

/// A complete terrain recipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Grid size in cells, `(width, height)`; each side 1..=16385.
    pub size: (u32, u32),
    /// Distance between cell centres, metres (> 0).
    pub cell_size: f32,
    /// Seed for every random choice; same seed, same bytes.
    pub seed: u64,
    /// Where the initial heights come from.
    pub terrain: TerrainSource,
    /// Tectonic uplift rate, m/yr. Default: none (0).
    #[serde(default)]
    pub uplift: ScalarSource,
    /// Stages run in order.
    #[serde(default)]
    pub stages: Vec<Stage>,
}

/// Where the initial heights come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum TerrainSource {
    /// Every cell at this height, metres.
    Flat(f32),
    /// Procedural noise terrain (fBm, ridged, multifractal, warping, faults).
    Noise(NoiseParams),
    /// A heightmap image or raw file the user already has.
    Heightmap(HeightmapSource),
}

/// A scalar map given as a constant, a grayscale image or noise; used for uplift,
/// erodibility and precipitation. Images of any size are resampled to the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum ScalarSource {
    /// The same value everywhere.
    Constant(f32),
    /// An 8- or 16-bit grayscale PNG: black maps to `min`, white to `max`.
    Image { path: String, min: f32, max: f32 },
    /// Noise normalised over the grid to `[0, 1]`, then mapped to `[min, max]`.
    Noise {
        noise: NoiseParams,
        min: f32,
        max: f32,
    },
}

impl Default for ScalarSource {
    fn default() -> Self {
        ScalarSource::Constant(0.0)
    }
}

/// One stage of a recipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Stage {
    /// Stream-power fluvial erosion under uplift, with lake routing (Cordonnier 2016).
    StreamPower(StreamPowerParams),
    /// Thermal erosion: slopes relax to their talus angle.
    Thermal(ThermalParams),
    /// Route water only; writes the hydrology maps without changing a height.
    Hydrology(HydrologyParams),
}

impl Stage {
    /// The stage's name as shown in progress reports and `bake.json`.
    pub fn name(&self) -> &'static str {
        match self {
            Stage::StreamPower(_) => "StreamPower",
            Stage::Thermal(_) => "Thermal",
            Stage::Hydrology(_) => "Hydrology",
        }
    }

    /// Checks the stage's parameters; `prefix` is e.g. `stages[2]`.
    pub fn validate(&self, prefix: &str) -> Result<()> {
        let prefix = format!("{prefix}.{}", self.name());
        match self {
            Stage::StreamPower(p) => p.validate(&prefix),
            Stage::Thermal(p) => p.validate(&prefix),
            Stage::Hydrology(p) => p.validate(&prefix),
        }
    }
}

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

impl Stage {
    /// Every stage's name, in schema order.
    pub const NAMES: [&'static str; 3] = ["StreamPower", "Thermal", "Hydrology"];

    /// The scalar parameters of the stage called `name` (empty for an unknown name).
    pub fn describe(name: &str) -> &'static [ParamInfo] {
        match name {
            "StreamPower" => StreamPowerParams::describe(),
            "Thermal" => ThermalParams::describe(),
            "Hydrology" => HydrologyParams::describe(),
            _ => &[],
        }
    }

    /// A stage with default parameters, by name.
    pub fn default_named(name: &str) -> Option<Stage> {
        match name {
            "StreamPower" => Some(Stage::StreamPower(Default::default())),
            "Thermal" => Some(Stage::Thermal(Default::default())),
            "Hydrology" => Some(Stage::Hydrology(Default::default())),
            _ => None,
        }
    }
}

fn ron_options() -> ron::Options {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES)
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

impl Recipe {
    /// The embedded default recipe.
    pub fn default_recipe() -> Recipe {
        Recipe::from_ron_str(DEFAULT_RECIPE, "<embedded default>")
            .expect("the embedded default recipe parses")
    }

    /// Parses RON text; `origin` names the source in errors (a path or `<embedded>`).
    /// Does not validate values: call [`Recipe::validate`].
    pub fn from_ron_str(text: &str, origin: &str) -> Result<Recipe> {
        ron_options()
            .from_str::<Recipe>(text)
            .map_err(|e| OrogenError::RecipeSyntax {
                origin: origin.to_string(),
                message: e.code.to_string(),
                line: e.span.start.line,
                column: e.span.start.col,
            })
    }

    /// Reads and parses a recipe file, then validates it.
    pub fn load(path: &Path) -> Result<Recipe> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| OrogenError::io("cannot read recipe", path, e))?;
        let recipe = Recipe::from_ron_str(&text, &path.display().to_string())?;
        recipe.validate()?;
        Ok(recipe)
    }

    /// Pretty RON text that [`Recipe::from_ron_str`] reads back to an equal recipe.
    pub fn to_ron_string(&self) -> String {
        let pretty = ron::ser::PrettyConfig::new()
            .depth_limit(8)
            .indentor("    ".to_string());
        ron_options()
            .to_string_pretty(self, pretty)
            .expect("a recipe always serialises")
    }

    /// The validated grid this recipe runs on.
    pub fn grid(&self) -> Result<Grid> {
        Grid::new(self.size.0 as usize, self.size.1 as usize, self.cell_size)
    }

    /// Checks every value range, naming the first field at fault.
    pub fn validate(&self) -> Result<()> {
        self.grid()?;
        match &self.terrain {
            TerrainSource::Flat(h) => check_finite("terrain.Flat", *h as f64)?,
            TerrainSource::Noise(n) => n.validate("terrain.Noise")?,
            TerrainSource::Heightmap(h) => h.validate("terrain.Heightmap")?,
        }
        self.uplift.validate("uplift")?;
        for (i, stage) in self.stages.iter().enumerate() {
            stage.validate(&format!("stages[{i}]"))?;
        }
        Ok(())
    }

    /// Applies one `PATH=VALUE` override, e.g. `seed=7`, `size=(513,513)`,
    /// `stages[0].iterations=20` or `terrain.octaves=6` (enum variant names may be
    /// skipped). VALUE is RON. The result is re-parsed, so a mistyped value is an error.
    pub fn apply_override(&self, assignment: &str) -> Result<Recipe> {
        crate::recipe_override::apply(self, assignment)
    }
}

impl ScalarSource {
    /// Checks the source's values; `field` names it in errors.
    pub fn validate(&self, field: &str) -> Result<()> {
        match self {
            ScalarSource::Constant(v) => check_finite(field, *v as f64),
            ScalarSource::Image { path, min, max } => {
                if path.is_empty() {
                    return Err(OrogenError::invalid(format!("{field}.path"), "is empty"));
                }
                check_finite(&format!("{field}.min"), *min as f64)?;
                check_finite(&format!("{field}.max"), *max as f64)
            }
            ScalarSource::Noise { noise, min, max } => {
                noise.validate(&format!("{field}.noise"))?;
                check_finite(&format!("{field}.min"), *min as f64)?;
                check_finite(&format!("{field}.max"), *max as f64)
            }
        }
    }

    /// The source as a map over `grid`. `seed` drives noise; relative image paths are
    /// resolved against `base_dir` (the recipe file's folder).
    pub fn resolve(
        &self,
        grid: Grid,
        seed: u64,
        base_dir: &Path,
    ) -> Result<crate::field::ScalarMap> {
        crate::terrain::scalar_source::resolve(self, grid, seed, base_dir)
    }
}

/// Resolves `path` against `base_dir` unless it is absolute.
pub fn resolve_path(base_dir: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base_dir.join(p)
    }
}
