//! A tile's stream-power step over strata: the whole map's
//! [`StreamPower::step`](crate::eroders::stream_power::StreamPower::step) on a layered
//! terrain, cell by cell on the tile's own layers. Everything the whole map does to the
//! layers is per cell (`k` from the material exposed at the cell, the column uplifted
//! unless the cell receives itself, the change of height taken from the top layers down or
//! laid into layer 0), so the tile needs no layer from its neighbours: only its heights
//! cross tile edges, as without strata.

use super::TileStreamPower;
use crate::eroders::stream_power::{move_columns, set_material_k};
use crate::error::{OrogenError, Result};
use crate::state::{Layers, TerrainMut};
use crate::tiles::comm::Comm;
use crate::tiles::layout::check_tile_len;
use crate::tiles::StepStats;

impl TileStreamPower {
    /// Over strata, `k` at a cell is `k` times the factor of the material exposed there
    /// (one factor per layer top down, then bedrock; finite, ≥ 0), as the whole map's
    /// `StreamPower::set_material_erodibility`. Errors name `materials[i].erodibility`.
    pub fn set_material_erodibility(&mut self, factors: Vec<f32>) -> Result<()> {
        if let Some(i) = factors.iter().position(|f| !(f.is_finite() && *f >= 0.0)) {
            return Err(OrogenError::invalid(
                format!("materials[{i}].erodibility"),
                format!("must be finite and >= 0, got {}", factors[i]),
            ));
        }
        if self.k_base.is_empty() {
            self.k_base = self.k.clone();
        }
        self.material_factors = Some(factors);
        Ok(())
    }

    /// One step of `dt` years over this tile's heights and `layers` (top down, each
    /// row-major over the interior), as the whole map's `StreamPower::step` over a layered
    /// terrain: `k` from the exposed material, the tiled step, then per cell the uplift of
    /// the column (none where the cell receives itself) and the rest of the change eroded
    /// from the top layer down or deposited into layer 0. Without layers, [`Self::step`].
    /// Every rank calls it together.
    pub fn step_layered(
        &mut self,
        comm: &mut impl Comm,
        dt: f64,
        layers: &mut Layers,
    ) -> Result<StepStats> {
        if layers.is_empty() {
            return self.step(comm, dt);
        }
        let (rank, interior) = (self.tile.rank, self.tile.interior);
        for (k, name) in layers.names().iter().enumerate() {
            let what = format!("layers[{name:?}]");
            check_tile_len(
                &self.field,
                &what,
                rank,
                interior,
                layers.thickness(k).len(),
            )?;
        }
        let mut surface = self.heights();
        if let Some(factors) = &self.material_factors {
            let terrain = TerrainMut::new(&mut surface, layers);
            set_material_k(&self.field, factors, &self.k_base, &mut self.k, &terrain)?;
        }
        let stats = self.step(comm, dt)?;
        let new = self.heights();
        let mut terrain = TerrainMut::new(&mut surface, layers);
        let outlet = |i: usize| self.receivers[i] == self.global(i);
        move_columns(&mut terrain, &new, &self.uplift, dt, outlet);
        Ok(stats)
    }
}
