//! The `Hydrology` stage: the recipe entry for [`crate::flow::hydrology`]. Route water over the terrain and write the hydrology maps
//! (drainage, water surface, lake depth, rivers, basins) without changing a height.
//!
//! Recipe syntax: `Hydrology(lakes: Carve, river_threshold: 2e6)`,
//! `Hydrology(outlets: (borders: [South], sea_level: 0.0), lakes: Fill(epsilon: 0.01),
//! precipitation: Constant(1.0))`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{OrogenError, Result};
use crate::field::{Field, ScalarMap};
use crate::flow::accumulate::basin_labels_from_receivers;
use crate::flow::hydrology::{lakes_and_rivers, Hydrology, HydrologyMaps, Params};
use crate::flow::router::SinkMode;
use crate::neighbourhood::{Neighbourhood, OutletParams, RasterGrid};
use crate::schema::ParamInfo;
use crate::stages::device::{Accelerator, HydrologyFields, HydrologyMapper};
use crate::stages::kind::{place, Env, Noted, StageKind, StageRun};
use crate::stages::source::{ScalarSource, PRECIPITATION_SEED};
use crate::world::{names, MapData, World};

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
    /// The process parameters.
    pub fn process(&self) -> Params {
        Params {
            lakes: self.lakes,
            river_threshold: self.river_threshold,
            epsilon: self.epsilon,
        }
    }
}

impl StageKind for HydrologyParams {
    fn bytes_per_cell(&self) -> u64 {
        // Flat terrain routes every cell as a pit: 293 B per cell (heap) at 513², 280 B of
        // RSS at 1025²; 76 B on noise terrain (fuzz finding #39.3).
        300
    }

    fn drivers(&self) -> &'static str {
        "`precipitation`"
    }

    fn describe() -> &'static [ParamInfo] {
        PARAMS
    }

    fn validate(&self, field: &str) -> Result<()> {
        self.outlets.validate(&format!("{field}.outlets"))?;
        if let Some(p) = &self.precipitation {
            p.validate(&format!("{field}.precipitation"))?;
            if p.planet().is_some() {
                return Err(OrogenError::invalid(
                    format!("{field}.precipitation.Planet"),
                    "only the recipe's `uplift` (and `terrain`) can come from the planet",
                ));
            }
        }
        self.process().validate(field)
    }

    /// One routing step.
    fn iterations(&self) -> u32 {
        1
    }

    fn start(&self, world: &World, env: &Env) -> Result<Box<dyn StageRun>> {
        let run: Box<dyn StageRun> = Box::new(Run {
            params: self.clone(),
            base_dir: env.base_dir.to_path_buf(),
            field: env.field.clone(),
        });
        // A Graph domain's maps are made with its heightfield: nothing runs here.
        if world.graph.is_some() {
            return Ok(run);
        }
        let note = match place(env, |accel| self.on_accelerator(accel, world, env))? {
            Ok(run) => return Ok(run),
            Err(note) => note,
        };
        Ok(Noted::wrap(run, note))
    }
}

impl HydrologyParams {
    /// The stage routed by `accel` (the precipitation resolved on the CPU), or why it
    /// cannot be: the DEM's nodata cells (outlets the GPU routing does not have), then the
    /// accelerator's own limits (a closed domain). The error names the stage.
    fn on_accelerator(
        &self,
        accel: &dyn Accelerator,
        world: &World,
        env: &Env,
    ) -> Result<Box<dyn StageRun>> {
        let field = &env.field;
        self.validate(field)?;
        if world.nodata_mask().is_some() {
            return Err(OrogenError::invalid(
                field.as_str(),
                "the GPU routing does not run a DEM's nodata cells yet; use device: Cpu, or \
                 Auto to run this stage on the CPU",
            ));
        }
        let grid = world.grid();
        let process = self.process();
        accel.supports_hydrology(grid, &self.outlets, &process, field)?;
        let rain = self.rain(world, env.base_dir)?;
        let mapper = accel.hydrology(
            grid,
            &self.outlets,
            &process,
            rain.as_ref().map(|r| r.data.as_slice()),
            field,
        )?;
        Ok(Box::new(AcceleratedHydrology {
            mapper,
            params: self.clone(),
            device: accel.describe(),
        }))
    }

    /// The precipitation resolved per cell, if any.
    fn rain(&self, world: &World, base_dir: &Path) -> Result<Option<ScalarMap>> {
        match &self.precipitation {
            Some(source) => Ok(Some(source.resolve(
                world.grid(),
                world.seed ^ PRECIPITATION_SEED,
                base_dir,
            )?)),
            None => Ok(None),
        }
    }
}

struct Run {
    params: HydrologyParams,
    base_dir: PathBuf,
    field: String,
}

impl StageRun for Run {
    /// Writes the maps of the heights as they are; never changes a height. On a Graph
    /// domain nothing: its hydrology maps are made with its heightfield, at the end.
    fn step(&mut self, world: &mut World) -> Result<bool> {
        if world.graph.is_none() {
            write_hydrology_maps(world, &self.params, &self.base_dir, &self.field)?;
        }
        Ok(false)
    }
}

/// The stage routed on an accelerator: receivers, lakes, drainage and the water surface
/// there, read back once; lake depth, rivers and basins derived from them on the CPU.
struct AcceleratedHydrology {
    mapper: Box<dyn HydrologyMapper>,
    params: HydrologyParams,
    device: String,
}

impl StageRun for AcceleratedHydrology {
    fn step(&mut self, world: &mut World) -> Result<bool> {
        let fields = self.mapper.maps(&world.height.data)?;
        insert_device_maps(world, &self.params, fields)?;
        Ok(false)
    }

    fn device(&self) -> Option<String> {
        Some(self.device.clone())
    }
}

/// Writes the hydrology maps of `world` from an accelerator's `fields` (receivers,
/// drainage, water surface, as [`HydrologyMapper::maps`] gives them): `drainage` and
/// `water_surface` as they are; `lake_depth`, `rivers` and `basins` derived as the CPU's
/// [`Hydrology::compute`] derives them (basins numbered as the router's stack lists its
/// roots, [`basin_labels_from_receivers`]); `stream_receivers` the receivers. An error
/// naming `field` where a length is not the world's.
pub fn insert_device_maps(
    world: &mut World,
    params: &HydrologyParams,
    fields: HydrologyFields,
) -> Result<()> {
    let n = world.height.data.len();
    let HydrologyFields {
        receivers,
        drainage,
        water_surface,
    } = fields;
    if receivers.len() != n || drainage.len() != n || water_surface.len() != n {
        return Err(OrogenError::invalid(
            "hydrology",
            format!(
                "the device returned {}, {} and {} values for {n} cells",
                receivers.len(),
                drainage.len(),
                water_surface.len()
            ),
        ));
    }
    if let Some(i) = receivers.iter().position(|&r| r as usize >= n) {
        return Err(OrogenError::invalid(
            "hydrology",
            format!("the device gave cell {i} the receiver {}", receivers[i]),
        ));
    }
    let heights = &world.height.data;
    let (lake_depth, rivers) =
        lakes_and_rivers(&water_surface, heights, &drainage, params.river_threshold);
    let grid = world.grid();
    let nb = RasterGrid::new(grid, &params.outlets.borders);
    let sea = params.outlets.sea_level;
    let mut basins = vec![0u32; n];
    basin_labels_from_receivers(
        &receivers,
        |i| nb.is_outlet(i) || sea.is_some_and(|s| heights[i] <= s),
        &mut basins,
    );
    world.stream_receivers = Some(receivers.as_slice().into());
    insert_maps(
        world,
        HydrologyMaps {
            drainage,
            water_surface,
            lake_depth,
            rivers,
            basins,
        },
    );
    Ok(())
}

/// Routes water over `world`'s heights and (re)writes `drainage`, `water_surface`,
/// `lake_depth`, `rivers` and `basins`. Heights are not changed. A relative precipitation
/// image path resolves against the current folder; use [`write_hydrology_maps`] to pick
/// one.
pub fn compute_maps(world: &mut World, params: &HydrologyParams) -> Result<()> {
    write_hydrology_maps(world, params, Path::new("."), "Hydrology")
}

/// [`compute_maps`] with relative paths resolved against `base_dir`; `field` names the
/// stage in errors (`stages[2].Hydrology`).
pub fn write_hydrology_maps(
    world: &mut World,
    params: &HydrologyParams,
    base_dir: &Path,
    field: &str,
) -> Result<()> {
    params.validate(field)?;
    let grid = world.grid();
    let rain = match &params.precipitation {
        Some(source) => Some(source.resolve(grid, world.seed ^ PRECIPITATION_SEED, base_dir)?),
        None => None,
    };
    // The DEM's nodata cells are outlets too.
    let nb = RasterGrid::new(grid, &params.outlets.borders).with_outlet_mask(world.nodata_mask());
    let mut hydrology = Hydrology::new(
        nb,
        params.outlets.sea_level,
        params.process(),
        rain.as_ref().map(|r| r.data.as_slice()),
        field,
    )?;
    let maps = hydrology.compute(&world.height.data)?;
    world.stream_receivers = Some(hydrology.flow().receivers.as_slice().into());
    drop(hydrology);
    insert_maps(world, maps);
    Ok(())
}

/// The maps into `world`, under their names.
fn insert_maps(world: &mut World, maps: HydrologyMaps) {
    let grid = world.grid();
    let scalar = |data: Vec<f32>| MapData::Scalar(ScalarMap { grid, data });
    world
        .maps
        .insert(names::DRAINAGE.into(), scalar(maps.drainage));
    world
        .maps
        .insert(names::WATER_SURFACE.into(), scalar(maps.water_surface));
    world
        .maps
        .insert(names::LAKE_DEPTH.into(), scalar(maps.lake_depth));
    world.maps.insert(
        names::RIVERS.into(),
        MapData::Mask(Field {
            grid,
            data: maps.rivers,
        }),
    );
    world.maps.insert(
        names::BASINS.into(),
        MapData::Labels(Field {
            grid,
            data: maps.basins,
        }),
    );
}
