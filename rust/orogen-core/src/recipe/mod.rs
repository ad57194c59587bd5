//! The recipe: one RON format shared by `orogen bake`, the editor dock and the runtime.
//!
//! A recipe names the grid, the seed, the initial terrain, the uplift and an ordered
//! list of stages. Parsing rejects unknown fields; [`Recipe::validate`] rejects values
//! out of range, naming the field (`stages[1].Thermal.talus`, `cell_size`, …).
//!
//! RON extensions `unwrap_variant_newtypes` and `implicit_some` are on, so a stage is
//! written `Thermal(iterations: 50)` and an optional block `warp: (strength: 500.0)`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};
use crate::field::{CellSize, Grid};
pub use crate::io::resolve_path;
use crate::planet::PlanetParams;
pub use crate::rasterise::RiverCurveParams;
pub use crate::schema::ParamInfo;
pub use crate::stages::device::Device;
pub use crate::stages::domain::{Domain, GraphDomain, Surface};
pub use crate::stages::source::{PlaneParams, ScalarSource, TerrainSource};
pub use crate::stages::strata::{Material, Strata, Stratum};
pub use crate::stages::{Process, Stage};

mod r#override;

/// The output that is not simulation state: the surface's net change over the run.
const EROSION: &str = "erosion";

/// The embedded default recipe (`orogen recipe default`).
pub const DEFAULT_RECIPE: &str = include_str!("../../recipes/default.ron");

/// The built-in recipes, `(name, what it shows, RON text)`: `orogen recipe NAME` prints
/// one and `orogen bake NAME` bakes it.
pub const BUILT_IN: &[(&str, &str, &str)] = &[
    (
        "default",
        "a mountain range grown from uplift, cut by rivers, relaxed by thermal erosion",
        DEFAULT_RECIPE,
    ),
    (
        "large",
        "a 100 km range at 50 m (2049²) in seconds: stream power eroding coarse to fine",
        include_str!("../../recipes/large.ron"),
    ),
    (
        "gpu",
        "a 200 km range (2049²) on a GPU where there is one: stream power, thermal, hydrology",
        include_str!("../../recipes/gpu.ron"),
    ),
    (
        "coupled",
        "stream power and thermal hillslopes sharing one time loop (TimeLoop, Every)",
        include_str!("../../recipes/coupled.ron"),
    ),
    (
        "strata",
        "horizontal sandstone and shale over granite, lifted and cut into benches and mesas",
        include_str!("../../recipes/strata.ron"),
    ),
    (
        "rills",
        "rain on a bare inclined plane, cut into a branching network of rills (Hydraulic)",
        include_str!("../../recipes/rills.ron"),
    ),
    (
        "dunes",
        "a sand sea over bedrock leaned by the wind into dunes with slip faces (Wind)",
        include_str!("../../recipes/dunes.ron"),
    ),
    (
        "graph",
        "a 200 km range eroded on a graph of random points, rivers free of the grid's 45° steps",
        include_str!("../../recipes/graph.ron"),
    ),
    (
        "weathering",
        "layered hills weathered by water, wind and thermal erosion mixed 100 : 50 : 1",
        include_str!("../../recipes/weathering.ron"),
    ),
    (
        "paint",
        "a plain to paint uplift and rain on in Godot with live erosion; baked alone, low hills",
        include_str!("../../recipes/paint.ron"),
    ),
    (
        "planet",
        "a tectonic planet of drifting, colliding plates, baked as equirectangular maps",
        include_str!("../../recipes/planet.ron"),
    ),
    (
        "planet-region",
        "planet to rivers: a collision zone of the planet gives the uplift stream power erodes",
        include_str!("../../recipes/planet-region.ron"),
    ),
];

pub use crate::field::MAX_CELL_SIZE;

/// A complete terrain recipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Grid size in cells, `(width, height)`; each side 1..=16385.
    pub size: (u32, u32),
    /// Distance between cell centres, metres (> 0): one number for square cells, or
    /// `(dx, dy)` (east-west, north-south) for non-square ones, e.g. `(74.6, 92.5)`.
    pub cell_size: CellSize,
    /// Seed for every random choice; same seed, same bytes.
    pub seed: u64,
    /// Where the initial heights come from.
    pub terrain: TerrainSource,
    /// Tectonic uplift rate, m/yr. Default: none (0).
    #[serde(default)]
    pub uplift: ScalarSource,
    /// Metres inside the map's borders over which the uplift fades to 0 (a smoothstep; at
    /// most a quarter of the map's shorter side), so the range rises from lowlands and
    /// coasts rather than from walls at the borders (held at base level, they stand at the
    /// talus angle). 0 (the default): no fade.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uplift_fade_m: f32,
    /// How far the fade's start moves in from the borders and back, with noise along them,
    /// as a share of `uplift_fade_m` (at most 0.15 of the map's shorter side), in [0, 3]:
    /// the sea at the borders then reaches in as bays between headlands instead of the
    /// coast following the square. 0 (the default): the fade starts on the border.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uplift_fade_ragged: f32,
    /// Stages run in order.
    #[serde(default)]
    pub stages: Vec<Stage>,
    /// Simulation state to write as extra maps, by name (`water_depth`, `sediment`,
    /// `velocity`, `erosion`); each must be produced by a stage. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    /// Materials the strata use, beyond or instead of the built-in ones (bedrock, granite,
    /// sandstone, shale, sand, soil). Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub materials: Vec<Material>,
    /// Layered rock under the initial terrain. Default: none (one material).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strata: Option<Strata>,
    /// Where the stages run: `Grid` (the default), or `Graph(spacing: 500.0)`, a graph of
    /// random points made into the grid's heightfield at the end (Cordonnier 2016).
    #[serde(default, skip_serializing_if = "Domain::is_grid")]
    pub domain: Domain,
    /// Where the `StreamPower` stages run: `Cpu` (the default), `Gpu` (every one on a GPU;
    /// an error where there is none, or for a stage the GPU step does not run, naming
    /// it), or `Auto` (a GPU for the stages it runs when one is found, else the CPU).
    /// `bake.json` says which ran each stage. Only the `orogen` command line has a GPU
    /// backend; the CLI's `--device` overrides this.
    #[serde(default, skip_serializing_if = "Device::is_cpu")]
    pub device: Device,
    /// A tectonic planet simulated before the terrain (seed 004): its maps are baked as
    /// `planet_height.exr` and friends, and a `Planet(region: ..)` source takes a region
    /// of it as the `uplift` or `terrain`. Default: none (a `Planet` source alone uses
    /// the default planet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planet: Option<PlanetParams>,
    /// On a Grid domain, once the stages are done: the open border's held ring lowered
    /// onto the ground inside it (`stages::open_border`: no one-cell rim round the map, no
    /// dam across a channel at the edge), and the hydrology maps' rivers as smooth
    /// curves (`rivers.json`), carved into the heights with banks (issue #37).
    /// `(window: 3, spacing: 3, smoothing: 2, width_coeff: 0.004, carve: true,
    /// min_half_width: 0.75, bank_ratio: 1.0)` by default; `None` turns it off (the
    /// heights are then the stages' own). A Graph domain draws its own rivers and ignores
    /// this.
    #[serde(
        default = "default_river_curves",
        skip_serializing_if = "is_default_river_curves"
    )]
    pub river_curves: Option<RiverCurveParams>,
}

fn is_zero(v: &f32) -> bool {
    *v == 0.0
}

fn default_river_curves() -> Option<RiverCurveParams> {
    Some(RiverCurveParams::default())
}

fn is_default_river_curves(v: &Option<RiverCurveParams>) -> bool {
    *v == default_river_curves()
}

fn ron_options() -> ron::Options {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES)
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

impl Recipe {
    /// Maps painted in the editor take the place of the recipe's: `uplift` for the
    /// recipe's uplift, `precipitation` for every `StreamPower` stage's (a loop's too).
    pub fn paint_over(
        &mut self,
        uplift: Option<std::sync::Arc<crate::field::ScalarMap>>,
        precipitation: Option<std::sync::Arc<crate::field::ScalarMap>>,
    ) {
        if let Some(u) = uplift {
            self.uplift = ScalarSource::Values(u);
        }
        if let Some(p) = precipitation {
            for stage in &mut self.stages {
                for sp in stage.stream_power_mut() {
                    sp.precipitation = Some(ScalarSource::Values(p.clone()));
                }
            }
        }
    }

    /// The uplift's fade at the borders: `uplift_fade_m` and `uplift_fade_ragged`.
    pub fn border_fade(&self) -> crate::stages::source::BorderFade {
        crate::stages::source::BorderFade {
            fade_m: self.uplift_fade_m,
            ragged: self.uplift_fade_ragged,
        }
    }

    /// The embedded default recipe.
    pub fn default_recipe() -> Recipe {
        Recipe::from_ron_str(DEFAULT_RECIPE, "<embedded default>")
            .expect("the embedded default recipe parses")
    }

    /// The built-in recipe called `name` (see [`BUILT_IN`]).
    pub fn built_in(name: &str) -> Option<Recipe> {
        BUILT_IN
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(n, _, text)| {
                Recipe::from_ron_str(text, &format!("<built-in {n}>"))
                    .expect("every built-in recipe parses")
            })
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

    /// Largest recipe file read, bytes (a recipe is a few kilobytes; this leaves room for
    /// long inline lists and refuses `/dev/zero` or a huge file at once).
    pub const MAX_FILE_BYTES: u64 = 16 << 20;

    /// The text of a recipe file: a regular file of at most [`Recipe::MAX_FILE_BYTES`].
    pub fn read_text(path: &Path) -> Result<String> {
        let size = crate::io::check_regular_file(path)?;
        if size > Recipe::MAX_FILE_BYTES {
            return Err(OrogenError::bad_file(
                path,
                format!(
                    "is {size} bytes; a recipe is at most {} MiB",
                    Recipe::MAX_FILE_BYTES >> 20
                ),
            ));
        }
        std::fs::read_to_string(path).map_err(|e| OrogenError::io("cannot read recipe", path, e))
    }

    /// Reads and parses a recipe file, then validates it.
    pub fn load(path: &Path) -> Result<Recipe> {
        let text = Recipe::read_text(path)?;
        let recipe = Recipe::from_ron_str(&text, &path.display().to_string())?;
        recipe.validate()?;
        Ok(recipe)
    }

    /// Pretty RON text that [`Recipe::from_ron_str`] reads back to an equal recipe.
    pub fn to_ron_string(&self) -> String {
        // `\n` everywhere: ron's default is `\r\n` on Windows, which made bake.json differ.
        let pretty = ron::ser::PrettyConfig::new()
            .new_line("\n".to_string())
            .depth_limit(8)
            .indentor("    ".to_string());
        ron_options()
            .to_string_pretty(self, pretty)
            .expect("a recipe always serialises")
    }

    /// The validated grid this recipe runs on.
    pub fn grid(&self) -> Result<Grid> {
        self.cell_size
            .grid(self.size.0 as usize, self.size.1 as usize)
    }

    /// Checks every value range, naming the first field at fault.
    pub fn validate(&self) -> Result<()> {
        let grid = self.grid()?;
        // A cell of 100 km is coarser than any terrain Orogen models; beyond that the noise
        // and erosion coordinates overflow and the error would blame another field.
        self.cell_size.validate("cell_size", MAX_CELL_SIZE)?;
        self.terrain.validate("terrain")?;
        if let TerrainSource::Plane(plane) = &self.terrain {
            plane.validate_on("terrain.Plane", grid)?;
        }
        self.uplift.validate("uplift")?;
        check_range("uplift_fade_m", self.uplift_fade_m as f64, 0.0, 1.0e7)?;
        check_range(
            "uplift_fade_ragged",
            self.uplift_fade_ragged as f64,
            0.0,
            3.0,
        )?;
        if let Some(p) = &self.planet {
            p.validate("planet")?;
        }
        if let Some(params) = self.planet_params() {
            let r = params.radius_m;
            if let Some(src) = self.uplift.planet() {
                src.validate_on("uplift.Planet", r)?;
            }
            if let Some(src) = self.terrain.planet() {
                src.validate_on("terrain.Planet", r)?;
            }
        }
        for (i, stage) in self.stages.iter().enumerate() {
            stage.validate(&format!("stages[{i}]"))?;
        }
        self.validate_noises(grid)?;
        for (i, name) in self.outputs.iter().enumerate() {
            if !crate::state::SimState::OUTPUTS.contains(&name.as_str()) && name != EROSION {
                return Err(OrogenError::invalid(
                    format!("outputs[{i}]"),
                    format!(
                        "unknown output `{}`; known: {}",
                        crate::error::shorten(name),
                        crate::state::SimState::OUTPUTS.join(", ") + ", " + EROSION
                    ),
                ));
            }
        }
        crate::stages::strata::validate_layers(&self.materials, self.strata.as_ref())?;
        if let Some(p) = &self.river_curves {
            p.validate("river_curves")?;
        }
        if let Domain::Graph(g) = &self.domain {
            g.validate("domain.Graph", grid)?;
            if self.strata.is_some() {
                return Err(OrogenError::invalid(
                    "strata",
                    "layered rock needs a Grid domain; a Graph domain is one material",
                ));
            }
            for (i, stage) in self.stages.iter().enumerate() {
                if !stage.runs_on_graph() {
                    return Err(OrogenError::invalid(
                        format!("stages[{i}].{}", stage.name()),
                        "runs on a Grid domain only; a Graph domain takes StreamPower, \
                         Thermal, Hydrology and TimeLoops of them",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks every noise of the recipe (terrain, uplift, a stage's sources, strata
    /// thicknesses) against the grid's extent: its finest octave must fit (see
    /// [`NoiseParams::validate_on`]). The error names the noise's full path,
    /// `uplift.Noise.noise.wavelength`.
    fn validate_noises(&self, grid: Grid) -> Result<()> {
        let Ok(tree) = serde_json::to_value(self) else {
            return Ok(());
        };
        let mut found = Vec::new();
        noise_fields(&tree, String::new(), &mut found);
        for (field, value) in found {
            if let Ok(noise) =
                serde_json::from_value::<crate::generators::noise::NoiseParams>(value.clone())
            {
                noise.validate_on(&field, grid)?;
            }
        }
        Ok(())
    }

    /// Checks that every file the recipe names exists: each `path` field (a heightmap
    /// terrain, an image uplift, an image erodibility or precipitation of a stage), resolved
    /// against `base_dir` when relative. The error names the field
    /// (`uplift.Image.path`, `stages[0].StreamPower.precipitation.Image.path`) and the file.
    pub fn check_files(&self, base_dir: &Path) -> Result<()> {
        // The serialised form names every field as the RON does; a value only held in
        // memory (a painted map) is not a file and cannot be serialised, so it is skipped.
        let Ok(tree) = serde_json::to_value(self) else {
            return Ok(());
        };
        let mut found = Vec::new();
        file_fields(&tree, String::new(), &mut found);
        for (field, path) in found {
            let file = resolve_path(base_dir, &path);
            if !file.is_file() {
                let why = if file.exists() {
                    "is not a regular file"
                } else {
                    "does not exist"
                };
                // The path as written (quoted, so a long one is cut), then where it was
                // looked for, start and end kept.
                let looked = crate::error::shorten_path(&file.display().to_string());
                return Err(OrogenError::invalid(
                    field,
                    format!("`{path}` {why} (looked for {looked})"),
                ));
            }
        }
        Ok(())
    }

    /// The planet to simulate: the `planet` section, or the default planet when only a
    /// `Planet` source asks for one; `None` when the recipe has no planet.
    pub fn planet_params(&self) -> Option<PlanetParams> {
        match &self.planet {
            Some(p) => Some(p.clone()),
            None if self.uplift.planet().is_some() || self.terrain.planet().is_some() => {
                Some(PlanetParams::default())
            }
            None => None,
        }
    }

    /// Applies one `PATH=VALUE` override, e.g. `seed=7`, `size=(513,513)`,
    /// `stages[0].iterations=20` or `terrain.octaves=6` (enum variant names may be
    /// skipped). VALUE is RON. The result is re-parsed, so a mistyped value is an error.
    pub fn apply_override(&self, assignment: &str) -> Result<Recipe> {
        r#override::apply(self, assignment)
    }
}

/// Every `path` field of `value` with a text value, as `(field, path)`, fields named from
/// `prefix` the way validation names them (`stages[1].Thermal.talus`).
/// The objects under `value` shaped like a noise's parameters (octaves, wavelength,
/// lacunarity and persistence), with their paths.
fn noise_fields<'a>(
    value: &'a serde_json::Value,
    prefix: String,
    out: &mut Vec<(String, &'a serde_json::Value)>,
) {
    match value {
        serde_json::Value::Object(map) => {
            if ["octaves", "wavelength", "lacunarity", "persistence"]
                .iter()
                .all(|k| map.contains_key(*k))
            {
                out.push((prefix.clone(), value));
            }
            for (key, v) in map {
                let sub = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                noise_fields(v, sub, out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                noise_fields(v, format!("{prefix}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn file_fields(value: &serde_json::Value, prefix: String, out: &mut Vec<(String, String)>) {
    let join = |key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match v {
                    serde_json::Value::String(path) if key == "path" => {
                        out.push((join(key), path.clone()))
                    }
                    _ => file_fields(v, join(key), out),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                file_fields(v, format!("{prefix}[{i}]"), out);
            }
        }
        _ => {}
    }
}
