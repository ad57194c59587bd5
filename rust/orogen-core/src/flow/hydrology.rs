//! The `Hydrology` stage: route water over the terrain and write the hydrology maps
//! (drainage, water surface, lake depth, rivers, basins) without changing a height.
//!
//! Recipe syntax: `Hydrology(lakes: Carve, river_threshold: 2e6)`,
//! `Hydrology(outlets: (borders: [South], sea_level: 0.0), lakes: Fill(epsilon: 0.01),
//! precipitation: Constant(1.0))`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};
use crate::field::{Field, ScalarMap};
use crate::flow::accumulate::{accumulate, basin_labels, water_surface};
use crate::flow::outlets::OutletParams;
use crate::flow::router::{FlowRouter, SinkMode, MAX_EPSILON};
use crate::recipe::{ParamInfo, ScalarSource};
use crate::runner::StageContext;
use crate::world::{names, MapData, World};

/// Salt mixed into the recipe seed for a noise precipitation map.
const PRECIPITATION_SEED: u64 = 0x7261_696e_6661_6c6c;

/// Hydrology stage parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HydrologyParams {
    /// Where water leaves: open borders and sea level. Default: all four borders open, no sea.
    pub outlets: OutletParams,
    /// How closed depressions drain: `Carve` (through their pass), `Fill(epsilon: m)`
    /// (routed over the filled lake) or `None` (pits keep their water). Default: `Carve`.
    pub lakes: SinkMode,
    /// Precipitation, m/yr; when set, `drainage` is discharge (m³/yr) instead of area (m²).
    /// Default: none.
    pub precipitation: Option<ScalarSource>,
    /// A cell is a river where `drainage` is at least this, m² (m³/yr with precipitation).
    /// Default: 1e6 (1 km²).
    pub river_threshold: f32,
    /// Slope of the water surface, metres per cell, rising upstream from each lake's pass
    /// (FastFlow Algorithm 6's ε). River cells that fall less than this per cell are lifted
    /// too, so keep it small. Default: 0 (flat lakes).
    pub epsilon: f32,
}

impl Default for HydrologyParams {
    fn default() -> Self {
        HydrologyParams {
            outlets: OutletParams::default(),
            lakes: SinkMode::Carve,
            precipitation: None,
            river_threshold: 1e6,
            epsilon: 0.0,
        }
    }
}

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "river_threshold",
        unit: "m²",
        min: 0.0,
        max: 1e10,
        doc: "Drainage (m², or m³/yr with precipitation) from which a cell is a river.",
    },
    ParamInfo {
        name: "epsilon",
        unit: "m",
        min: 0.0,
        max: 1.0,
        doc: "Slope of the water surface over lakes, metres per cell.",
    },
];

impl HydrologyParams {
    /// Scalar parameters with units and ranges, for editors.
    pub fn describe() -> &'static [ParamInfo] {
        PARAMS
    }

    /// Checks ranges; `field` prefixes error names.
    pub fn validate(&self, field: &str) -> Result<()> {
        self.outlets.validate(&format!("{field}.outlets"))?;
        self.lakes.validate(&format!("{field}.lakes"))?;
        if let Some(p) = &self.precipitation {
            p.validate(&format!("{field}.precipitation"))?;
        }
        check_range(
            &format!("{field}.river_threshold"),
            self.river_threshold as f64,
            0.0,
            f32::MAX as f64,
        )?;
        check_range(
            &format!("{field}.epsilon"),
            self.epsilon as f64,
            0.0,
            MAX_EPSILON as f64,
        )
    }
}

/// Runs the stage: one routing step, heights untouched.
pub fn run_stage(p: &HydrologyParams, world: &mut World, ctx: &mut StageContext) -> Result<()> {
    ctx.check_cancel()?;
    compute_maps_in(world, p, ctx.base_dir())?;
    ctx.step_done(world, 1, 1.0)
}

/// Routes water over `world`'s heights and (re)writes `drainage`, `water_surface`,
/// `lake_depth`, `rivers` and `basins`. Heights are not changed. A relative precipitation
/// image path resolves against the current folder; use [`compute_maps_in`] to pick one.
pub fn compute_maps(world: &mut World, params: &HydrologyParams) -> Result<()> {
    compute_maps_in(world, params, Path::new("."))
}

/// [`compute_maps`] with relative paths resolved against `base_dir`.
pub fn compute_maps_in(world: &mut World, params: &HydrologyParams, base_dir: &Path) -> Result<()> {
    params.validate("Hydrology")?;
    let grid = world.grid();
    let n = grid.len();
    let mut router = FlowRouter::new(grid, &params.outlets)?;
    // Route on a copy: Fill raises the copy, never the world.
    let mut routed = world.height.data.clone();
    router.route(&mut routed, params.lakes)?;
    let graph = router.graph();

    // FastFlow: discharge accumulates cell area × precipitation.
    let mut weights = vec![grid.cell_area(); n];
    if let Some(source) = &params.precipitation {
        let rain = source.resolve(grid, world.seed ^ PRECIPITATION_SEED, base_dir)?;
        if let Some(i) = rain.data.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(OrogenError::invalid(
                "Hydrology.precipitation",
                format!(
                    "must be finite and >= 0 m/yr everywhere, got {} at cell {i}",
                    rain.data[i]
                ),
            ));
        }
        for (w, r) in weights.iter_mut().zip(&rain.data) {
            *w *= r;
        }
    }
    let mut drainage = vec![0.0f32; n];
    accumulate(graph, &weights, &mut drainage);

    // FastFlow Algorithm 6 over the routed surface (the fill, if any, is kept).
    let mut surface = vec![0.0f32; n];
    water_surface(graph, &routed, params.epsilon, &mut surface);
    let depth: Vec<f32> = surface
        .iter()
        .zip(&world.height.data)
        .map(|(w, z)| (w - z).max(0.0))
        .collect();
    let rivers: Vec<u8> = drainage
        .iter()
        .map(|&q| u8::from(q >= params.river_threshold))
        .collect();
    let mut basins = vec![0u32; n];
    basin_labels(graph, &mut basins);

    let scalar = |data: Vec<f32>| MapData::Scalar(ScalarMap { grid, data });
    world.maps.insert(names::DRAINAGE.into(), scalar(drainage));
    world
        .maps
        .insert(names::WATER_SURFACE.into(), scalar(surface));
    world.maps.insert(names::LAKE_DEPTH.into(), scalar(depth));
    world.maps.insert(
        names::RIVERS.into(),
        MapData::Mask(Field { grid, data: rivers }),
    );
    world.maps.insert(
        names::BASINS.into(),
        MapData::Labels(Field { grid, data: basins }),
    );
    Ok(())
}
