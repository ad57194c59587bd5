//! One rank's tile of a tiled thermal step, the same bytes as the whole map's
//! [`Thermal`](crate::eroders::thermal::Thermal) step.
//!
//! The step is an explicit stencil (Jacobi): a cell's new height reads the sender factors
//! two cells away, which read heights one more away. So a tile runs the whole map's own
//! [`thermal_step`] over its interior grown by [`HALO`] cells: cells near the grown
//! rectangle's cut edges see a border there and come out wrong, but those are all in the
//! halo, which the next exchange overwrites. The "nothing moves below the tolerance" test
//! is over the whole map: the largest excess is reduced over the ranks.

use super::comm::{all_max, exchange_halo, Comm};
use super::layout::{Rect, TileLayout};
use super::stream_power::ROOT;
use crate::eroders::thermal::{
    fill_talus_tangents, thermal_step, Params, TalusAngle, ThermalBuffers,
};
use crate::error::{OrogenError, Result};
use crate::field::Grid;
use crate::neighbourhood::RasterGrid;
use crate::state::{Layers, TerrainMut};

/// Halo width of the thermal stencil, cells.
pub const HALO: usize = 3;

const TAG_HEIGHTS: u32 = 20;
const TAG_TANGENTS: u32 = 21;
const TAG_MAX: u32 = 22;

/// One rank's tile of the tiled thermal process.
pub struct TileThermal {
    layout: TileLayout,
    rank: usize,
    params: Params,
    /// The interior grown by [`HALO`], and the heights and talus tangents over it.
    rect: Rect,
    heights: Vec<f32>,
    tan: Vec<f32>,
    before: Vec<f32>,
    buf: ThermalBuffers,
    steps: u64,
    /// A layered terrain's layers over the interior (empty without strata) and its
    /// surface there, which each step moves as the whole map's `Thermal::step` does.
    layers: Layers,
    surface: Vec<f32>,
    /// With [`TalusAngle::Material`]: each material's talus tangent (layers top down, then
    /// the bottom one).
    material_tan: Option<Vec<f32>>,
}

impl TileThermal {
    /// Tile `rank` of `layout` with the whole map's thermal parameters, its heights and
    /// its talus tangents (the whole map's [`Thermal::tangents`](crate::eroders::thermal::Thermal::tangents)
    /// cut to the tile: a noise talus is evaluated once, over the whole map's positions),
    /// each row-major over its interior. Square cells only. `field` prefixes error names.
    pub fn new(
        layout: &TileLayout,
        rank: usize,
        params: &Params,
        heights: &[f32],
        tangents: &[f32],
        field: &str,
    ) -> Result<Self> {
        params.validate(field)?;
        layout.grid().require_square(field)?;
        let interior = layout.tile(rank).interior;
        for (what, v) in [("heights", heights), ("talus tangents", tangents)] {
            if v.len() != interior.len() {
                return Err(OrogenError::invalid(
                    format!("{field} {what} (tile {rank})"),
                    format!("{} values for {}x{} cells", v.len(), interior.w, interior.h),
                ));
            }
        }
        let rect = layout.extended(rank, HALO);
        let mut h = vec![0.0f32; rect.len()];
        let mut t = vec![0.0f32; rect.len()];
        for (y, (hr, tr)) in (interior.y0..).zip(
            heights
                .chunks_exact(interior.w)
                .zip(tangents.chunks_exact(interior.w)),
        ) {
            let at = rect.index(interior.x0, y);
            h[at..at + interior.w].copy_from_slice(hr);
            t[at..at + interior.w].copy_from_slice(tr);
        }
        Ok(TileThermal {
            layout: layout.clone(),
            rank,
            params: params.clone(),
            rect,
            heights: h,
            tan: t,
            before: Vec::new(),
            buf: ThermalBuffers::with_len(rect.len())?,
            steps: 0,
            layers: Layers::none(),
            surface: Vec::new(),
            material_tan: None,
        })
    }

    /// On a layered terrain: the tile's layers (top down, each row-major over its
    /// interior) and each material's talus angle, degrees (layers top down, then the
    /// bottom one: the whole map's `material_props`). Each step then lowers and raises the
    /// layers as the whole map's does, and a [`TalusAngle::Material`] talus takes each
    /// cell's exposed material's angle (the tiles exchange those tangents over the halo
    /// every step). `field` prefixes error names.
    pub fn set_layers(&mut self, layers: Layers, talus_deg: &[f32], field: &str) -> Result<()> {
        let own = self.layout.tile(self.rank).interior.len();
        for (k, name) in layers.names().iter().enumerate() {
            if layers.thickness(k).len() != own {
                return Err(OrogenError::invalid(
                    format!("{field} layers[{name:?}] (tile {})", self.rank),
                    format!("{} values for {own} cells", layers.thickness(k).len()),
                ));
            }
        }
        // As `Thermal::set_material_talus`.
        if self.params.talus == TalusAngle::Material && !talus_deg.is_empty() {
            let tan: Vec<f32> = talus_deg
                .iter()
                .map(|d| crate::math::tan((*d as f64).to_radians()) as f32)
                .collect();
            let bottom = tan[tan.len() - 1];
            self.tan.iter_mut().for_each(|t| *t = bottom);
            self.material_tan = Some(tan);
        }
        self.layers = layers;
        self.surface = self.heights();
        Ok(())
    }

    /// This tile's layers (top down), each row-major over its interior.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// This tile's heights, row-major over its interior.
    pub fn heights(&self) -> Vec<f32> {
        let r = self.layout.tile(self.rank).interior;
        let mut out = Vec::with_capacity(r.len());
        for y in r.y0..r.y0 + r.h {
            let at = self.rect.index(r.x0, y);
            out.extend_from_slice(&self.heights[at..at + r.w]);
        }
        out
    }

    /// One step; every rank calls it together. Returns the largest excess over the talus
    /// on the whole map before the step (nothing moved when it is within the tolerance).
    pub fn step(&mut self, comm: &mut impl Comm) -> Result<f32> {
        let grid = self.layout.grid();
        exchange_halo(comm, &self.layout, HALO, TAG_HEIGHTS, &mut self.heights)?;
        let interior = self.layout.tile(self.rank).interior;
        let layered = !self.layers.is_empty();
        if let (Some(mt), true) = (&self.material_tan, layered) {
            // As the whole map's `Thermal::step`: each cell's exposed material's tangent,
            // made on the tile's own cells and exchanged.
            let (layers, last) = (&self.layers, mt.len() - 1);
            for (i, x, y) in (0..interior.len()).map(|i| {
                (
                    i,
                    interior.x0 + i % interior.w,
                    interior.y0 + i / interior.w,
                )
            }) {
                let m = (0..layers.len())
                    .position(|k| layers.thickness(k)[i] > 0.0)
                    .unwrap_or(layers.len());
                self.tan[self.rect.index(x, y)] = mt[m.min(last)];
            }
            exchange_halo(comm, &self.layout, HALO, TAG_TANGENTS, &mut self.tan)?;
        } else if self.steps == 0 {
            exchange_halo(comm, &self.layout, HALO, TAG_TANGENTS, &mut self.tan)?;
        } else if let TalusAngle::Height(_) = self.params.talus {
            // Per cell from its own height: the grown rectangle as a grid of its own.
            let sub = Grid::new(self.rect.w, self.rect.h, grid.cell_size)?;
            fill_talus_tangents(
                &self.params.talus,
                &self.heights,
                &RasterGrid::new(sub, &[]),
                0,
                &mut self.tan,
            );
        }
        self.steps += 1;
        self.before.clear();
        self.before.extend_from_slice(&self.heights);
        // Always settled here (a tolerance below every excess); kept or undone by the
        // whole map's largest excess.
        let local = thermal_step(
            &mut self.heights,
            self.rect.w,
            grid.cell_size,
            &self.tan,
            self.params.rate,
            -1.0,
            &mut self.buf,
        );
        let max = all_max(comm, ROOT, TAG_MAX, local)?;
        if max <= self.params.tolerance {
            std::mem::swap(&mut self.heights, &mut self.before);
        }
        if layered {
            // `TerrainMut::set_surface` cell by cell over the tile's own cells, as the
            // whole map's step lays its new heights on the layers.
            let new = self.heights();
            TerrainMut::new(&mut self.surface, &mut self.layers).set_surface(&new);
        }
        Ok(max)
    }
}
