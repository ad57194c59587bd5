//! The terrain being worked on: heights plus every named map a stage produced.
//!
//! Map names are the same everywhere: in the core, in the CLI's file names
//! (`<name>.exr` / `<name>.png`) and in Godot's `TerrainWorld.get_map(name)`.

use std::collections::BTreeMap;

use crate::field::{Grid, Heightfield, LabelMap, MaskMap, ScalarMap};

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
    /// Terrain heights, metres.
    pub height: Heightfield,
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
            uplift,
            maps: BTreeMap::new(),
            seed,
        }
    }

    /// The grid shared by every map.
    pub fn grid(&self) -> Grid {
        self.height.grid
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
