//! The world a recipe works on: the terrain (surface and layers), uplift, the simulation
//! state beside it, and the named maps the stages produced for export.
//!
//! Map names are the same everywhere: in the core, in the CLI's file names
//! (`<name>.exr` / `<name>.png`) and in Godot's `TerrainWorld.get_map(name)`.

use std::collections::BTreeMap;

use crate::error::{OrogenError, Result};
use crate::field::{Grid, Heightfield, LabelMap, MaskMap, ScalarMap};
use crate::state::{Layers, SimState, TerrainMut};

/// Names of the maps Orogen produces. Stages must use these constants.
pub mod names {
    /// Terrain heights, metres.
    pub const HEIGHT: &str = "height";
    /// Tectonic uplift rate, m/yr.
    pub const UPLIFT: &str = "uplift";
    /// Drainage area (m²) or, with precipitation, discharge (m³/yr).
    pub const DRAINAGE: &str = "drainage";
    /// Depression-free water surface, metres.
    pub const WATER_SURFACE: &str = "water_surface";
    /// Water surface minus terrain, metres.
    pub const LAKE_DEPTH: &str = "lake_depth";
    /// Mask: 1 where discharge passes the river threshold.
    pub const RIVERS: &str = "rivers";
    /// Label: one id per outlet basin.
    pub const BASINS: &str = "basins";
}

/// One produced map.
#[derive(Clone, Debug, PartialEq)]
pub enum MapData {
    Scalar(ScalarMap),
    Mask(MaskMap),
    Labels(LabelMap),
}

impl MapData {
    /// The grid the map lies on.
    pub fn grid(&self) -> Grid {
        match self {
            MapData::Scalar(m) => m.grid,
            MapData::Mask(m) => m.grid,
            MapData::Labels(m) => m.grid,
        }
    }
}

/// Heights plus named maps; what a recipe run produces.
#[derive(Clone, Debug)]
pub struct World {
    /// Terrain surface heights, metres: bedrock plus [`World::layers`].
    pub height: Heightfield,
    /// The material layers over bedrock (none for a one-material terrain).
    pub layers: Layers,
    /// Simulation state (water, sediment, fluxes, velocity): not exported unless the
    /// recipe's `outputs` name it.
    pub sim: SimState,
    /// Uplift rate, m/yr (zero when the recipe has none).
    pub uplift: ScalarMap,
    /// Maps produced by stages, by name (see [`names`]).
    pub maps: BTreeMap<String, MapData>,
    /// The recipe's seed, for stages that draw random numbers.
    pub seed: u64,
}

impl World {
    /// A world over `height` with zero uplift and no maps.
    pub fn new(height: Heightfield, seed: u64) -> Self {
        let uplift = ScalarMap::filled(height.grid, 0.0);
        World {
            height,
            layers: Layers::none(),
            sim: SimState::default(),
            uplift,
            maps: BTreeMap::new(),
            seed,
        }
    }

    /// The grid shared by every map.
    pub fn grid(&self) -> Grid {
        self.height.grid
    }

    /// The terrain as processes change it: surface and layers.
    pub fn terrain_mut(&mut self) -> TerrainMut<'_> {
        TerrainMut::new(&mut self.height.data, &mut self.layers)
    }

    /// Copies the simulation-state field `name` (one of [`SimState::OUTPUTS`]) into the
    /// exported maps; `field` names the request in errors (e.g. `outputs[0]`).
    pub fn export_state(&mut self, name: &str, field: &str) -> Result<()> {
        let grid = self.grid();
        let missing = || {
            OrogenError::invalid(
                field,
                format!("`{name}` is not produced by any stage of this recipe"),
            )
        };
        let scalar = |data: Vec<f32>| MapData::Scalar(ScalarMap { grid, data });
        match name {
            "water_depth" => {
                let d = self.sim.water_depth.clone().ok_or_else(missing)?;
                self.maps.insert(name.into(), scalar(d));
            }
            "sediment" => {
                let d = self.sim.sediment.clone().ok_or_else(missing)?;
                self.maps.insert(name.into(), scalar(d));
            }
            "velocity" => {
                let v = self.sim.velocity.as_ref().ok_or_else(missing)?;
                let (x, y) = v.iter().map(|v| (v.x, v.y)).unzip();
                self.maps.insert("velocity_x".into(), scalar(x));
                self.maps.insert("velocity_y".into(), scalar(y));
            }
            _ => {
                return Err(OrogenError::invalid(
                    field,
                    format!(
                        "unknown output `{name}`; known: {}",
                        SimState::OUTPUTS.join(", ")
                    ),
                ))
            }
        }
        Ok(())
    }

    /// Every map by name, heights and uplift included.
    pub fn all_maps(&self) -> Vec<(String, MapData)> {
        let mut out = vec![
            (
                names::HEIGHT.to_string(),
                MapData::Scalar(self.height.clone()),
            ),
            (
                names::UPLIFT.to_string(),
                MapData::Scalar(self.uplift.clone()),
            ),
        ];
        out.extend(self.maps.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }
}
