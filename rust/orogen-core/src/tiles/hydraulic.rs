//! One rank's tile of a tiled pipe-model step (the thesis's hydraulic erosion after Mei et
//! al. 2007, [`crate::eroders::hydraulic`]), the same bytes as the whole map's step.
//!
//! Every pass of the step is an explicit stencil of radius 1 (Jacobi: it reads the old
//! arrays and writes new ones), so a tile runs the whole map's own [`Hydraulic::step`] over
//! its interior grown by [`HALO`] cells ([`Hydraulic::window`]); the grown rectangle's cut
//! edges are treated as map borders and the cells near them come out wrong, but only in the
//! halo. Counting rings from a cut edge (ring 0 the outermost), one step leaves wrong: the
//! fluxes on ring 0 (a border pipe there), the depth, velocity and bed on rings 0–1 (they
//! read the fluxes either side), the sediment on rings 0–2 (it reads the neighbours' sediment
//! per outflow, made from their depth). So before each step the tiles exchange the heights,
//! the water and the sediment over [`HALO`] = 3 rings (beds and depths would need only 2);
//! the fluxes only before the first step (a cell's new flux reads its own old flux, and
//! ring 1's are right after every step). The rain drops hash whole-map cell indices, and the
//! sources are the whole map's cells that fall in the tile's rectangle.
//!
//! Over strata ([`TileHydraulic::set_layers`]) step 4 dissolves from the cell's own layers
//! and deposits into its layer 0, so a cell's new bed and layers read only its own layers,
//! and its new sediment its neighbours' sediment per outflow, which their layers decide: the
//! layers must be right one ring beyond the interior. The tiles exchange every layer's
//! thickness over that one ring before each step (the rings further out are never read by
//! an interior cell within the step, and their heights, water and sediment are exchanged).
//!
//! The water and sediment that left through the map's open borders are the whole map's
//! sums bit for bit: each tile keeps, per step, what each of its own cells on the map's edge
//! sent out ([`Hydraulic::border_losses`]), sends them to the root every 64 steps and at the
//! end, and the root sums them in the whole map's order ([`border_sums`]: per chunk of rows
//! in cell order, then the chunks).

use std::collections::HashMap;

use glam::Vec2;

use super::comm::{exchange_halo, exchange_halo_in, Comm, Reader, Writer};
use super::layout::{check_tile_len, cut, spread, Rect, TileLayout};
use super::stream_power::ROOT;
use crate::eroders::hydraulic::{border_sums, Borders, Hydraulic, Params};
use crate::error::{OrogenError, Result};
use crate::state::{Layers, MaterialProps, SimState, TerrainMut};

/// Halo width of the pipe model's step, cells.
pub const HALO: usize = 3;

const TAG_HEIGHTS: u32 = 40;
const TAG_WATER: u32 = 41;
const TAG_SEDIMENT: u32 = 42;
const TAG_FLUX: u32 = 43;
const TAG_LOSSES: u32 = 44;
/// Each layer's thickness, one tag per layer from this one (at most 255 layers).
const TAG_LAYERS: u32 = 12_000;

/// Rings of the layers exchanged before each step: the cells next to the interior.
const LAYER_HALO: usize = 1;

/// Steps whose edge losses a tile keeps before sending them to the root (a perimeter's
/// worth per step: 8 B an edge cell).
const FLUSH_EVERY: usize = 64;

/// The pipe model's state over one tile's interior (row-major), carried from one tiled
/// `Hydraulic` stage to the next as the whole map's [`SimState`] is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileWater {
    /// Water depth, metres.
    pub water: Vec<f32>,
    /// Suspended sediment, metres of material.
    pub sediment: Vec<f32>,
    /// Outflow fluxes (left, right, top, bottom), m³/s.
    pub flux: Vec<[f32; 4]>,
    /// Water velocity, m/s.
    pub velocity: Vec<Vec2>,
}

/// One rank's tile of the tiled pipe model.
pub struct TileHydraulic {
    layout: TileLayout,
    rank: usize,
    /// The interior grown by [`HALO`], and the heights and state over it.
    rect: Rect,
    hydraulic: Hydraulic,
    heights: Vec<f32>,
    sim: SimState,
    /// The layers over `rect` (right on the interior and, after the exchange, one ring
    /// beyond), and one material per layer then bedrock.
    layers: Layers,
    materials: Vec<MaterialProps>,
    /// This tile's own cells on the map's edge (indices in `rect`, row-major), with which
    /// neighbours the map has there.
    edge: Vec<(usize, [bool; 4])>,
    /// Per step since the last flush, per `edge` cell: water and sediment sent out of the
    /// map.
    losses: Vec<(f32, f32)>,
    /// Steps in `losses`.
    pending: usize,
    /// At the root: the water and sediment lost over the steps flushed, m³.
    lost: (f64, f64),
    steps: u64,
}

impl TileHydraulic {
    /// Tile `rank` of `layout` with the whole map's parameters and seed (the stage's, as
    /// [`Hydraulic::new`] takes it), its heights row-major over its interior, and the state
    /// an earlier stage left on it (`None`: dry, as a whole map's first step). One material,
    /// the default bedrock, until [`TileHydraulic::set_layers`]. `field` prefixes error
    /// names.
    pub fn new(
        layout: &TileLayout,
        rank: usize,
        params: &Params,
        seed: u64,
        heights: &[f32],
        state: Option<&TileWater>,
        field: &str,
    ) -> Result<Self> {
        let grid = layout.grid();
        grid.require_square(field)?;
        let interior = layout.tile(rank).interior;
        let rect = layout.extended(rank, HALO);
        let hydraulic = Hydraulic::window(
            grid,
            [rect.x0, rect.y0, rect.w, rect.h],
            params.clone(),
            seed,
        )
        .map_err(|e| e.in_field(field))?;
        let place = |what: &str, len: usize| check_tile_len(field, what, rank, interior, len);
        place("heights", heights.len())?;
        let mut sim = SimState::default();
        let mut h = vec![0.0f32; rect.len()];
        spread(&rect, interior, heights, &mut h);
        if let Some(s) = state {
            place("water", s.water.len())?;
            place("sediment", s.sediment.len())?;
            place("flux", s.flux.len())?;
            place("velocity", s.velocity.len())?;
            let grown = |v: &[f32]| {
                let mut out = vec![0.0f32; rect.len()];
                spread(&rect, interior, v, &mut out);
                out
            };
            sim.water_depth = Some(grown(&s.water));
            sim.sediment = Some(grown(&s.sediment));
            let mut f = vec![[0.0f32; 4]; rect.len()];
            spread(&rect, interior, &s.flux, &mut f);
            sim.flux = Some(f);
            let mut v = vec![Vec2::ZERO; rect.len()];
            spread(&rect, interior, &s.velocity, &mut v);
            sim.velocity = Some(v);
        } else {
            let n = rect.len();
            sim.water_depth = Some(vec![0.0; n]);
            sim.sediment = Some(vec![0.0; n]);
            sim.flux = Some(vec![[0.0; 4]; n]);
            sim.velocity = Some(vec![Vec2::ZERO; n]);
        }
        let mut edge = Vec::new();
        if params.borders == Borders::Open {
            for y in interior.y0..interior.y0 + interior.h {
                for x in interior.x0..interior.x0 + interior.w {
                    let has = [x > 0, x + 1 < grid.width, y > 0, y + 1 < grid.height];
                    if has.contains(&false) {
                        edge.push((rect.index(x, y), has));
                    }
                }
            }
        }
        Ok(TileHydraulic {
            layout: layout.clone(),
            rank,
            rect,
            hydraulic,
            heights: h,
            sim,
            layers: Layers::none(),
            materials: vec![MaterialProps::default()],
            edge,
            losses: Vec::new(),
            pending: 0,
            lost: (0.0, 0.0),
            steps: 0,
        })
    }

    /// This tile's heights, row-major over its interior.
    pub fn heights(&self) -> Vec<f32> {
        self.cut(&self.heights)
    }

    /// This tile's water, sediment, fluxes and velocity, row-major over its interior.
    pub fn state(&self) -> TileWater {
        let s = &self.sim;
        TileWater {
            water: self.cut(s.water_depth.as_deref().unwrap_or_default()),
            sediment: self.cut(s.sediment.as_deref().unwrap_or_default()),
            flux: self.cut(s.flux.as_deref().unwrap_or_default()),
            velocity: self.cut(s.velocity.as_deref().unwrap_or_default()),
        }
    }

    /// Steps this tile over strata: its `layers` (top down, each row-major over the
    /// interior) and `materials`, one per layer and one for bedrock (the world's, as the
    /// whole map's stage takes them). Errors name `field`, the layer or the material.
    pub fn set_layers(
        &mut self,
        layers: Layers,
        materials: &[MaterialProps],
        field: &str,
    ) -> Result<()> {
        crate::state::validate_materials(materials, layers.len()).map_err(|e| e.in_field(field))?;
        let interior = self.layout.tile(self.rank).interior;
        let mut grown = Vec::with_capacity(layers.len());
        for (k, name) in layers.names().iter().enumerate() {
            let t = layers.thickness(k);
            check_tile_len(
                field,
                &format!("layers[{name:?}]"),
                self.rank,
                interior,
                t.len(),
            )?;
            let mut out = vec![0.0f32; self.rect.len()];
            spread(&self.rect, interior, t, &mut out);
            grown.push((name.clone(), out));
        }
        self.layers = Layers::new(grown, self.rect.len())?;
        self.materials = materials.to_vec();
        Ok(())
    }

    /// This tile's layers (top down), each row-major over its interior.
    pub fn layers(&self) -> Result<Layers> {
        let parts = (self.layers.names().iter().enumerate())
            .map(|(k, name)| (name.clone(), self.cut(self.layers.thickness(k))))
            .collect();
        Layers::new(parts, self.layout.tile(self.rank).interior.len())
    }

    fn cut<T: Copy>(&self, v: &[T]) -> Vec<T> {
        cut(&self.rect, self.layout.tile(self.rank).interior, v)
    }

    /// One step; every rank calls it together.
    pub fn step(&mut self, comm: &mut impl Comm) -> Result<()> {
        let (l, r) = (&self.layout, HALO);
        exchange_halo(comm, l, r, TAG_HEIGHTS, &mut self.heights)?;
        let sim = &mut self.sim;
        let missing = || OrogenError::invalid("tile water", "no state".to_string());
        exchange_halo(
            comm,
            l,
            r,
            TAG_WATER,
            sim.water_depth.as_mut().ok_or_else(missing)?,
        )?;
        exchange_halo(
            comm,
            l,
            r,
            TAG_SEDIMENT,
            sim.sediment.as_mut().ok_or_else(missing)?,
        )?;
        if self.steps == 0 {
            exchange_halo(comm, l, r, TAG_FLUX, sim.flux.as_mut().ok_or_else(missing)?)?;
        }
        for (k, t) in self.layers.thickness_all_mut().iter_mut().enumerate() {
            let tag = TAG_LAYERS + k as u32;
            exchange_halo_in(comm, l, LAYER_HALO, self.rect, tag, t)?;
        }
        let mut terrain = TerrainMut::new(&mut self.heights, &mut self.layers);
        self.hydraulic.step(&mut terrain, sim, &self.materials)?;
        let flux = sim.flux.as_deref().ok_or_else(missing)?;
        for &(i, has) in &self.edge {
            self.losses.push(self.hydraulic.border_losses(flux, i, has));
        }
        self.steps += 1;
        self.pending += 1;
        if self.pending == FLUSH_EVERY {
            self.flush(comm)?;
        }
        Ok(())
    }

    /// The water and the sediment that left the map through its open borders over every
    /// step so far, m³, summed as the whole map's stage sums its per-step figures
    /// (`hydraulic_water_lost_m3`, `hydraulic_sediment_lost_m3`): at the root (`None`
    /// elsewhere). Every rank calls it together.
    pub fn lost(&mut self, comm: &mut impl Comm) -> Result<Option<(f64, f64)>> {
        self.flush(comm)?;
        Ok((comm.rank() == ROOT).then_some(self.lost))
    }

    /// Sends the edge losses of the steps kept to the root, which adds each step's in the
    /// whole map's order. Closed borders lose nothing (the whole map adds zeros): no
    /// message. Every rank calls it together.
    fn flush(&mut self, comm: &mut impl Comm) -> Result<()> {
        let steps = std::mem::take(&mut self.pending);
        if self.hydraulic.params().borders == Borders::Closed {
            return Ok(());
        }
        let grid = self.layout.grid();
        let mut w = Writer::with_capacity(4 + 8 * self.edge.len() + 8 * self.losses.len());
        w.u32(self.edge.len() as u32);
        for &(i, _) in &self.edge {
            let (x, y) = (
                self.rect.x0 + i % self.rect.w,
                self.rect.y0 + i / self.rect.w,
            );
            let cell = (y * grid.width + x) as u64;
            w.u32(cell as u32);
            w.u32((cell >> 32) as u32);
        }
        for (a, b) in self.losses.drain(..) {
            w.f32(a);
            w.f32(b);
        }
        let all = comm.gather(ROOT, TAG_LOSSES, w.into_bytes())?;
        if comm.rank() != ROOT {
            return Ok(());
        }
        // Whole-map cell → (rank, its place among that rank's edge cells, their count).
        let mut at = HashMap::new();
        let mut values = Vec::with_capacity(all.len());
        for (rank, bytes) in all.iter().enumerate() {
            let mut rd = Reader::new(bytes, "hydraulic border losses", rank);
            let n = rd.u32()? as usize;
            for k in 0..n {
                let cell = rd.u32()? as u64 | (rd.u32()? as u64) << 32;
                at.insert(cell as usize, (rank, k, n));
            }
            let v = (0..n * steps)
                .map(|_| Ok((rd.f32()?, rd.f32()?)))
                .collect::<Result<Vec<(f32, f32)>>>()?;
            rd.finish()?;
            values.push(v);
        }
        let p = self.hydraulic.params();
        for step in 0..steps {
            let (a, b) =
                border_sums(
                    grid.width,
                    grid.height,
                    p.dt,
                    grid.cell_area(),
                    |x, y| match at.get(&(y * grid.width + x)) {
                        Some(&(rank, k, n)) => values[rank][step * n + k],
                        None => (0.0, 0.0),
                    },
                );
            self.lost.0 += a;
            self.lost.1 += b;
        }
        Ok(())
    }
}
