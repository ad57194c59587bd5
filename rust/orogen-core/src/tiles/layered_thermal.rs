//! One rank's tile of a tiled layered thermal step (the thesis's §4.3.1 over material
//! layers, [`crate::eroders::layered_thermal`]), the same bytes as the whole map's step.
//!
//! The step is Jacobi: pass 1 gives each cell its outflow factor from its own layers
//! (exposed material) and the heights one cell away; a receiver's scale reads its
//! neighbours' factors; a cell's new height and layers read its neighbours' factors and
//! scales. So a new height reads heights 3 cells away and layers 2 away, and a tile runs
//! the whole map's own [`LayeredThermal::step_with`] over its interior grown by [`HALO`]
//! cells ([`LayeredThermal::window`], whose random factors hash whole-map cell indices):
//! the grown rectangle's cut edges act as borders and the cells near them come out wrong,
//! but only in the halo. Before each step the tiles exchange the heights and every layer's
//! thickness over the halo (one map per layer). The largest excess, which decides whether
//! the step moves anything, is reduced over the tiles before anything moves: a cell on a
//! cut edge sees fewer neighbours there, so its excess is at most its true one, which the
//! tile owning it finds.

use super::comm::{all_max, exchange_halo, Comm};
use super::layout::{check_tile_len, cut, spread, Rect, TileLayout};
use super::stream_power::ROOT;
use crate::eroders::layered_thermal::{LayeredThermal, Params};
use crate::error::Result;
use crate::state::{Layers, MaterialProps, TerrainMut};

/// Halo width of the layered thermal step, cells.
pub const HALO: usize = 3;

const TAG_HEIGHTS: u32 = 50;
const TAG_MAX: u32 = 51;
/// Each layer's thickness, one tag per layer from this one (at most
/// [`crate::eroders::layered_thermal::MAX_LAYERS`]).
const TAG_LAYERS: u32 = 10_000;

/// One rank's tile of the tiled layered thermal process.
pub struct TileLayeredThermal {
    layout: TileLayout,
    rank: usize,
    /// The interior grown by [`HALO`], and the heights and layers over it.
    rect: Rect,
    thermal: LayeredThermal,
    heights: Vec<f32>,
    layers: Layers,
    materials: Vec<MaterialProps>,
}

impl TileLayeredThermal {
    /// Tile `rank` of `layout` with the whole map's parameters and seed (the stage's, as
    /// [`LayeredThermal::new`] takes it), its heights and layers (top down) row-major over
    /// its interior, and the world's materials (one per layer, then the bottom one).
    /// Square cells only. `field` prefixes error names.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        layout: &TileLayout,
        rank: usize,
        params: &Params,
        seed: u64,
        heights: &[f32],
        layers: &Layers,
        materials: &[MaterialProps],
        field: &str,
    ) -> Result<Self> {
        let grid = layout.grid();
        grid.require_square(field)?;
        let interior = layout.tile(rank).interior;
        let rect = layout.extended(rank, HALO);
        let thermal =
            LayeredThermal::window(grid, [rect.x0, rect.y0, rect.w, rect.h], *params, seed)
                .map_err(|e| e.in_field(field))?;
        let place = |what: &str, len: usize| check_tile_len(field, what, rank, interior, len);
        place("heights", heights.len())?;
        let grow = |v: &[f32]| {
            let mut out = vec![0.0f32; rect.len()];
            spread(&rect, interior, v, &mut out);
            out
        };
        let mut grown = Vec::with_capacity(layers.len());
        for (k, name) in layers.names().iter().enumerate() {
            place(&format!("layers[{name:?}]"), layers.thickness(k).len())?;
            grown.push((name.clone(), grow(layers.thickness(k))));
        }
        Ok(TileLayeredThermal {
            layout: layout.clone(),
            rank,
            rect,
            thermal,
            heights: grow(heights),
            layers: Layers::new(grown, rect.len())?,
            materials: materials.to_vec(),
        })
    }

    /// This tile's heights, row-major over its interior.
    pub fn heights(&self) -> Vec<f32> {
        self.cut(&self.heights)
    }

    /// This tile's layers (top down), each row-major over its interior.
    pub fn layers(&self) -> Result<Layers> {
        let parts = (self.layers.names().iter().enumerate())
            .map(|(k, name)| (name.clone(), self.cut(self.layers.thickness(k))))
            .collect();
        Layers::new(parts, self.layout.tile(self.rank).interior.len())
    }

    fn cut(&self, v: &[f32]) -> Vec<f32> {
        cut(&self.rect, self.layout.tile(self.rank).interior, v)
    }

    /// One step; every rank calls it together. Returns the whole map's largest excess over
    /// the talus before the step (nothing moved when it is within the tolerance).
    pub fn step(&mut self, comm: &mut impl Comm) -> Result<f32> {
        let l = &self.layout;
        exchange_halo(comm, l, HALO, TAG_HEIGHTS, &mut self.heights)?;
        for (k, t) in self.layers.thickness_all_mut().iter_mut().enumerate() {
            exchange_halo(comm, l, HALO, TAG_LAYERS + k as u32, t)?;
        }
        let mut terrain = TerrainMut::new(&mut self.heights, &mut self.layers);
        let report = self
            .thermal
            .step_with(&mut terrain, &self.materials, |local| {
                all_max(comm, ROOT, TAG_MAX, local)
            })?;
        Ok(report.max_excess)
    }
}
