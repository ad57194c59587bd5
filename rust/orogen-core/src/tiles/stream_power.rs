//! One rank's tile of a tiled stream-power step (every lake mode, any n) that gives the whole
//! map's [`StreamPower`](crate::eroders::stream_power::StreamPower) result:
//!
//! 1. halo rows of heights from the neighbouring tiles;
//! 2. steepest-descent receivers of the tile's cells, the whole map's rule (and ties) exactly;
//! 3. drainage: local sums, then the root resolves the flow crossing tile edges and each
//!    tile adds the inflows at its entry cells (Barnes 2017);
//! 4. the implicit solve: each cell's new height is `min(a·h_r + b, c)` in its receiver's,
//!    composed down its path; the root solves the chain of crossings and each tile finishes
//!    with the whole map's own arithmetic (Braun & Willett 2013).

use rayon::prelude::*;

use super::basins::LakeRoot;
use super::comm::{exchange_halo, through_root, Comm, Reader, Writer};
use super::layout::{Tile, TileLayout};
use super::root::{CrossGraph, NONE};
use crate::eroders::stream_power::{
    check_dt_against, erosion_factor, largest_factor_per_year, material_factor_bound, solve_drop,
    Inputs, Params, MAX_DT,
};
use crate::error::{check_positive, check_range, OrogenError, Result};
use crate::flow::graph::{prefetch, PREFETCH_AHEAD};
use crate::flow::router::SinkMode;
use crate::neighbourhood::raster::{steepest_row, OFFSETS};
use crate::neighbourhood::{Neighbourhood, OutletParams, RasterGrid, Side};

mod hydrology;
mod lakes;
mod layered;
mod restack;

/// The rank that solves the crossing graphs.
pub const ROOT: usize = 0;

const TAG_HALO: u32 = 1;
const TAG_ACC_UP: u32 = 2;
const TAG_ACC_DOWN: u32 = 3;
const TAG_SOLVE_UP: u32 = 4;
const TAG_SOLVE_DOWN: u32 = 5;
/// [`TileStreamPower::check_dt`]'s reduction of the largest `k` and the total water.
const TAG_DT_UP: u32 = 6;
const TAG_DT_DOWN: u32 = 7;

/// A local receiver that lies in another tile.
const EXIT: u32 = u32::MAX;

/// The direction of a cell that receives itself (no neighbour; distance 0).
const NO_DIR: u8 = 8;

/// One tile's per-cell inputs, row-major over its interior.
#[derive(Clone, Debug, PartialEq)]
pub struct TileInputs {
    pub heights: Vec<f32>,
    pub k: Vec<f32>,
    pub uplift: Vec<f32>,
    pub precipitation: Option<Vec<f32>>,
}

impl TileInputs {
    /// Tile `rank`'s part of whole-map heights and inputs (a one-process run, or a test).
    pub fn cut(layout: &TileLayout, rank: usize, heights: &[f32], inputs: &Inputs) -> Result<Self> {
        Ok(TileInputs {
            heights: layout.cut(rank, heights, "heights")?,
            k: layout.cut(rank, &inputs.k, "k")?,
            uplift: layout.cut(rank, &inputs.uplift, "uplift")?,
            precipitation: match &inputs.precipitation {
                Some(p) => Some(layout.cut(rank, p, "precipitation")?),
                None => None,
            },
        })
    }
}

/// How the implicit solve's chain of tile crossings is solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChainSolve {
    /// In rounds, one per crossing on the longest path: the root passes each tile's final
    /// heights at its entry cells on to the exits draining into them, and tiles finish the
    /// cells below each exit so resolved with the whole map's arithmetic: the whole map's
    /// bytes.
    #[default]
    Exact,
    /// In one round: tiles send each entry cell's new height as `min(A·y + B, C)` composed
    /// down its path, the root solves the chain in f64: a cell below a crossing may end
    /// one f32 step from the whole map's. For n = 1 only (the maps are affine there).
    Affine,
}

/// What one tiled step exchanged, for this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Bytes this rank sent to other ranks during the step.
    pub bytes_sent: u64,
    /// This tile's cells whose receiver lies in another tile.
    pub exits: usize,
    /// Round trips with the root in the implicit solve's chain (1 for
    /// [`ChainSolve::Affine`]; one per crossing on the longest path for the exact chain).
    pub rounds: usize,
    /// Lakes whose pass this tile found (carved or filled through).
    pub passes: usize,
}

/// The whole map's implicit update of one node (`walk_run` in `eroders::stream_power`):
/// uplifted height `h_up`, its receiver's new height `h_r`, erosion factor `f`, slope
/// exponent `n` (Newton per node for n ≠ 1, Braun & Willett 2013 §4).
#[inline(always)]
fn settle(h_up: f32, h_r: f32, f: f64, n: f64) -> Result<f32> {
    let h_r = h_r as f64;
    let d0 = h_up as f64 - h_r;
    if d0.is_nan() || d0 <= 0.0 || f == 0.0 {
        return Ok(h_up);
    }
    let drop = if n == 1.0 {
        d0 / (1.0 + f)
    } else {
        solve_drop(d0, f, n)?
    };
    Ok((h_r + drop) as f32)
}

/// True for cell `(x, y)` on an open border (`open` indexed by [`Side`]) of grid `g`.
#[inline]
fn on_open_border(open: [bool; 4], g: crate::field::Grid, x: usize, y: usize) -> bool {
    (open[Side::North as usize] && y == 0)
        || (open[Side::South as usize] && y + 1 == g.height)
        || (open[Side::East as usize] && x + 1 == g.width)
        || (open[Side::West as usize] && x == 0)
}

/// One rank's tile of the tiled stream-power process.
pub struct TileStreamPower {
    layout: TileLayout,
    tile: Tile,
    field: String,
    open: [bool; 4],
    sea: f32,
    dists: [f32; 8],
    m: f64,
    n: f64,
    /// Heights over the halo rectangle (the interior's are this tile's).
    heights: Vec<f32>,
    k: Vec<f32>,
    uplift: Vec<f32>,
    /// Each cell's weight (area × precipitation, m³/yr) when there is precipitation; else
    /// every cell weighs `area` (m²).
    weights: Option<Vec<f64>>,
    area: f64,
    /// Per interior cell: its receiver (global index) and the direction to it (its place
    /// in [`OFFSETS`], [`NO_DIR`] for a cell that receives itself).
    receivers: Vec<u32>,
    dir: Vec<u8>,
    /// Per interior cell: its receiver's interior index, itself for a root, or [`EXIT`].
    local: Vec<u32>,
    /// Per interior cell: bit `j` set when its neighbour at `OFFSETS[j]` drains into it
    /// (bits in increasing index order, so donors come out as a CSR list would give them).
    masks: Vec<u8>,
    /// Interior cells, receivers before donors: one breadth-first block per tree (exits and
    /// roots by index), so a walk down a tree stays in a small part of memory.
    order: Vec<u32>,
    /// The trees' blocks in `order` as [`TileStreamPower::build_order`] laid them: each
    /// tree's root or exit (by index) and where its block starts (then the end); emptied
    /// when the order no longer has them (after a restack).
    block_root: Vec<u32>,
    block_start: Vec<u32>,
    /// The carve's reversed chains, receivers first, and where each starts (then the end):
    /// what [`TileStreamPower::restack`] reorders by.
    chain_cells: Vec<u32>,
    chain_start: Vec<u32>,
    /// The restack's moved blocks.
    moved: Vec<u32>,
    exits: Vec<u32>,
    sums: Vec<f64>,
    drainage: Vec<f32>,
    /// Per interior cell: its erosion factor (0 for a cell that receives itself); and
    /// per cell whose path leaves the tile (the affine chain only; empty otherwise) its
    /// map `(a, b, c)` composed down to the new height of its exit's receiver.
    factors: Vec<f64>,
    maps: Vec<[f64; 3]>,
    /// Cells whose path leaves the tile, in flow order (receivers first), in runs of one
    /// exit: run `r` is `pending[run_end[r - 1]..run_end[r]]` (from 0 for the first), all
    /// leaving by exit `run_slot[r]`. A tree's cells lie together in the order, so the runs
    /// are about as many as the trees that leave the tile, not the cells.
    pending: Vec<u32>,
    run_slot: Vec<u32>,
    run_end: Vec<u32>,
    /// Per interior cell: the place among `exits` of the exit its path leaves by, or NONE.
    term_slot: Vec<u32>,
    /// The runs of `pending` by exit (the runs of exit `s` at
    /// `bucket[bucket_start[s]..bucket_start[s + 1]]`, in flow order), and the entries
    /// likewise (as places among `entries`).
    bucket_start: Vec<u32>,
    bucket: Vec<u32>,
    entry_start: Vec<u32>,
    entry_bucket: Vec<u32>,
    /// How the chain of crossings is solved, and in how many rounds it last was.
    chain: ChainSolve,
    rounds: usize,
    /// Interior heights while solving.
    scratch: Vec<f32>,
    /// Interior indices of the tile's border ring.
    ring: Vec<u32>,
    /// Interior indices of the entry cells the root named in this step.
    entries: Vec<u32>,
    /// [`TileStreamPower::add_inflows`]' cells below an entry and their donors to wait for.
    touched: Vec<u32>,
    pending_donors: Vec<u8>,
    /// Per exit (its place among `exits`): its receiver's new height, from the root.
    exit_heights: Vec<f32>,
    /// The root's crossing graph (used on [`ROOT`] only).
    cross: CrossGraph,
    /// How lakes are resolved, and the root's part of it (used on [`ROOT`] only).
    lakes: SinkMode,
    lake_root: LakeRoot,
    /// The basin labels' buffers, kept between steps (over the interior, and laid over the
    /// halo rectangle): new ones each step cost a page fault per 4 KiB.
    node: Vec<u32>,
    labels: Vec<u32>,
    /// Over strata ([`TileStreamPower::set_material_erodibility`]): per material (layers
    /// top down, then bedrock) the factor on `k` where it is exposed, and `k` as given.
    material_factors: Option<Vec<f32>>,
    k_base: Vec<f32>,
}

impl TileStreamPower {
    /// Tile `rank` of `layout` with the whole map's outlets and stream-power parameters
    /// and its own part of the inputs. `field`
    /// prefixes error names.
    pub fn new(
        layout: &TileLayout,
        rank: usize,
        outlets: &OutletParams,
        params: &Params,
        inputs: TileInputs,
        field: &str,
    ) -> Result<Self> {
        params.validate(field)?;
        outlets.validate(&format!("{field}.outlets"))?;
        if outlets.borders.is_empty() {
            return Err(OrogenError::invalid(
                format!("{field}.outlets.borders"),
                "a tiled run needs an open border (a closed map's lowest pit becomes its \
                 outlet, a choice over the whole map that is not tiled yet)",
            ));
        }
        if rank >= layout.count() {
            return Err(OrogenError::invalid(
                "tiles rank",
                format!("{rank}, but the layout has {} tiles", layout.count()),
            ));
        }
        let grid = layout.grid();
        let tile = layout.tile(rank);
        let n_cells = tile.interior.len();
        let check = |what: &str, v: &[f32], allow_negative: bool| -> Result<()> {
            crate::eroders::stream_power::check_values(
                &format!("{field}.{what} (tile {rank})"),
                v,
                n_cells,
                allow_negative,
            )
        };
        check("heights", &inputs.heights, true)?;
        check("k", &inputs.k, false)?;
        check("uplift", &inputs.uplift, true)?;
        let area = grid.cell_area() as f64;
        let weights = match &inputs.precipitation {
            Some(p) => {
                check("precipitation", p, false)?;
                Some(p.iter().map(|&r| area * r as f64).collect())
            }
            None => None,
        };
        let raster = RasterGrid::new(grid, &outlets.borders);
        let mut open = [false; 4];
        for side in [Side::North, Side::South, Side::East, Side::West] {
            open[side as usize] = raster.is_open(side);
        }
        let mut heights = vec![0.0f32; tile.halo.len()];
        let r = tile.interior;
        for (y, row) in (r.y0..r.y0 + r.h).zip(inputs.heights.chunks_exact(r.w)) {
            let at = tile.halo.index(r.x0, y);
            heights[at..at + r.w].copy_from_slice(row);
        }
        Ok(TileStreamPower {
            layout: layout.clone(),
            tile,
            field: field.to_string(),
            open,
            sea: outlets.sea_level.unwrap_or(f32::NEG_INFINITY),
            dists: raster.distances,
            m: params.m as f64,
            n: params.n as f64,
            heights,
            k: inputs.k,
            uplift: inputs.uplift,
            weights,
            area,
            receivers: vec![0; n_cells],
            dir: vec![NO_DIR; n_cells],
            local: vec![0; n_cells],
            masks: vec![0; n_cells],
            order: Vec::with_capacity(n_cells),
            block_root: Vec::new(),
            block_start: Vec::new(),
            chain_cells: Vec::new(),
            chain_start: Vec::new(),
            moved: Vec::new(),
            exits: Vec::new(),
            sums: vec![0.0; n_cells],
            drainage: vec![0.0; n_cells],
            factors: vec![0.0; n_cells],
            maps: Vec::new(),
            entries: Vec::new(),
            touched: Vec::new(),
            pending_donors: Vec::new(),
            pending: Vec::new(),
            run_slot: Vec::new(),
            run_end: Vec::new(),
            term_slot: vec![NONE; n_cells],
            bucket_start: Vec::new(),
            bucket: Vec::new(),
            entry_start: Vec::new(),
            entry_bucket: Vec::new(),
            chain: ChainSolve::default(),
            rounds: 0,
            scratch: Vec::new(),
            ring: (0..n_cells as u32)
                .filter(|&li| {
                    let (li, r) = (li as usize, tile.interior);
                    r.on_ring(r.x0 + li % r.w, r.y0 + li / r.w)
                })
                .collect(),
            exit_heights: Vec::new(),
            cross: CrossGraph::default(),
            lakes: params.lakes,
            lake_root: LakeRoot::default(),
            node: Vec::new(),
            labels: Vec::new(),
            material_factors: None,
            k_base: Vec::new(),
        })
    }

    /// The tile.
    pub fn tile(&self) -> Tile {
        self.tile
    }

    /// This tile's heights, row-major over its interior.
    pub fn heights(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.tile.interior.len());
        self.heights_into(&mut out);
        out
    }

    /// [`TileStreamPower::heights`] into `out` (cleared first; no allocation once it has
    /// room).
    fn heights_into(&self, out: &mut Vec<f32>) {
        let r = self.tile.interior;
        out.clear();
        for y in r.y0..r.y0 + r.h {
            let at = self.tile.halo.index(r.x0, y);
            out.extend_from_slice(&self.heights[at..at + r.w]);
        }
    }

    /// Receivers (global indices) of the last routing, row-major over the interior.
    pub fn receivers(&self) -> &[u32] {
        &self.receivers
    }

    /// Drainage (m², or m³/yr with precipitation) of the last step, f64 sums and as the
    /// whole map rounds them to f32.
    pub fn drainage_sums(&self) -> &[f64] {
        &self.sums
    }

    /// [`TileStreamPower::drainage_sums`] rounded to f32.
    pub fn drainage(&self) -> &[f32] {
        &self.drainage
    }

    /// One step of `dt` years: halo, receivers, drainage, implicit solve. Every rank calls
    /// it together.
    pub fn step(&mut self, comm: &mut impl Comm, dt: f64) -> Result<StepStats> {
        let dt_field = format!("{}.dt", self.field);
        check_positive(&dt_field, dt)?;
        check_range(&dt_field, dt, 0.0, MAX_DT)?;
        let before = comm.bytes_sent();
        self.route(comm)?;
        let passes = self.resolve_lakes(comm)?;
        self.accumulate(comm)?;
        self.solve(comm, dt)?;
        Ok(StepStats {
            bytes_sent: comm.bytes_sent() - before,
            exits: self.exits.len(),
            rounds: self.rounds,
            passes,
        })
    }

    /// The whole map's stability check of a step of `dt` years
    /// (`StreamPower::check_dt`, through the one [`check_dt_against`]): the largest `k`
    /// and the total of node area × precipitation reduced over the tiles (through the
    /// root), the grid's shortest link, over strata the largest material factor; every
    /// rank gets the same answer, so a `dt` the whole map refuses is refused here with the
    /// same error, before any step. The total adds the tiles' sums in rank order, the
    /// whole map's cell by cell: equal without precipitation (a sum of one area), else up
    /// to the last bits, which only a `dt` within 1e-15 of the limit could tell apart.
    /// Every rank calls it together.
    pub fn check_dt(&self, comm: &mut impl Comm, dt: f64) -> Result<()> {
        let k = if self.k_base.is_empty() {
            &self.k
        } else {
            &self.k_base
        };
        let k_max = k.iter().fold(0.0_f32, |a, &b| a.max(b));
        let total: f64 = match &self.weights {
            Some(w) => w.iter().sum(),
            None => (0..self.k.len()).map(|_| self.area).sum(),
        };
        let mut up = Writer::with_capacity(12);
        up.f32(k_max);
        up.f64(total);
        let size = comm.size();
        let back = through_root(
            comm,
            ROOT,
            (TAG_DT_UP, TAG_DT_DOWN),
            up.into_bytes(),
            |all| {
                let (mut k_max, mut total) = (0.0_f32, 0.0_f64);
                for (rank, bytes) in all.iter().enumerate() {
                    let mut r = Reader::new(bytes, "the largest k and the total water", rank);
                    k_max = k_max.max(r.f32()?);
                    total += r.f64()?;
                    r.finish()?;
                }
                let mut w = Writer::with_capacity(12);
                w.f32(k_max);
                w.f64(total);
                Ok(vec![w.into_bytes(); size])
            },
        )?;
        let mut r = Reader::new(&back, "the largest k and the total water", ROOT);
        let (k_max, total) = (r.f32()?, r.f64()?);
        r.finish()?;
        let grid = self.layout.grid();
        let link = RasterGrid::new(grid, &[]).shortest_link();
        let mut factor = largest_factor_per_year(k_max as f64, total, link, self.m, self.n);
        if let Some(f) = &self.material_factors {
            factor *= material_factor_bound(f);
        }
        check_dt_against(&self.field, factor, self.n, dt)
    }

    /// Halo exchange, then receivers and the tile's flow order (no change to heights).
    pub fn route(&mut self, comm: &mut impl Comm) -> Result<()> {
        self.exchange_halo(comm)?;
        self.descend(false);
        self.build_order()
    }

    /// Halo rows of heights from the neighbouring tiles.
    fn exchange_halo(&mut self, comm: &mut impl Comm) -> Result<()> {
        exchange_halo(comm, &self.layout, 1, TAG_HALO, &mut self.heights)?;
        if let Some(bad) = self.heights.iter().position(|h| !h.is_finite()) {
            let (hx, hy) = (bad % self.tile.halo.w, bad / self.tile.halo.w);
            let (x, y) = (self.tile.halo.x0 + hx, self.tile.halo.y0 + hy);
            return Err(OrogenError::invalid(
                "heights",
                format!(
                    "cell ({x}, {y}) is {} (heights must be finite)",
                    self.heights[bad]
                ),
            ));
        }
        Ok(())
    }

    /// True for a cell on an open border of the whole grid.
    #[inline]
    fn is_outlet(&self, x: usize, y: usize) -> bool {
        on_open_border(self.open, self.layout.grid(), x, y)
    }

    /// Steepest-descent receivers of the interior, as [`RasterGrid`] picks them: the
    /// largest `(h − h_j)/d_j > 0` over the neighbours in offset order, strict `>` (ties to
    /// the lowest index); outlets and cells at or below sea level receive themselves. Also
    /// each cell's local receiver (interior index, itself, or [`EXIT`]). With `keep` (the
    /// route over a filled surface), a cell that receives itself stays so and one with no
    /// lower neighbour keeps its receiver, as the whole map's `descend` with `keep`. Parallel
    /// by row (each cell independent); the cells off the grid's border go through the whole
    /// map's vectorised sweep (`raster::steepest_row`: the same operations, the same
    /// directions), the others one by one.
    fn descend(&mut self, keep: bool) {
        let (g, halo, interior) = (self.layout.grid(), self.tile.halo, self.tile.interior);
        let (heights, dists, sea, open) = (&self.heights, self.dists, self.sea, self.open);
        // Halo index offsets of the 8 neighbours.
        let steps = OFFSETS.map(|(dx, dy)| dy * halo.w as isize + dx);
        let w = interior.w;
        // The row's cells with all 8 neighbours in the grid: x in xa..xb.
        let (xa, xb) = (interior.x0.max(1), (interior.x0 + w).min(g.width - 1));
        let rows = self
            .receivers
            .par_chunks_mut(w)
            .zip(self.dir.par_chunks_mut(w));
        let rows = rows.zip(self.local.par_chunks_mut(w)).enumerate();
        rows.for_each_init(
            || vec![u32::MAX; w],
            |best_dir, (row, ((rs, ds), ls))| {
                let y = interior.y0 + row;
                let swept = if y > 0 && y + 1 < g.height && xa < xb {
                    let (at, m) = (halo.index(xa, y), xb - xa);
                    let there = steps.map(|s| &heights[(at as isize + s) as usize..][..m]);
                    steepest_row(&heights[at..at + m], there, dists, &mut best_dir[..m]);
                    xa..xb
                } else {
                    0..0
                };
                for (col, ((r, d), l)) in rs.iter_mut().zip(ds.iter_mut()).zip(ls).enumerate() {
                    let x = interior.x0 + col;
                    let at = halo.index(x, y);
                    let here = heights[at];
                    let mut best_k = usize::MAX;
                    let own = here <= sea
                        || on_open_border(open, g, x, y)
                        || (keep && *r == g.index(x, y) as u32);
                    if !own {
                        if swept.contains(&x) {
                            let k = best_dir[x - xa];
                            if k != u32::MAX {
                                best_k = k as usize;
                            }
                        } else {
                            let mut best = 0.0f32;
                            for (k, &(dx, dy)) in OFFSETS.iter().enumerate() {
                                let (nx, ny) = (x as isize + dx, y as isize + dy);
                                if nx < 0
                                    || ny < 0
                                    || nx as usize >= g.width
                                    || ny as usize >= g.height
                                {
                                    continue;
                                }
                                let s =
                                    (here - heights[(at as isize + steps[k]) as usize]) / dists[k];
                                if s > best {
                                    (best, best_k) = (s, k);
                                }
                            }
                        }
                    }
                    if best_k == usize::MAX {
                        if keep && !own {
                            continue;
                        }
                        *r = g.index(x, y) as u32;
                        *d = NO_DIR;
                        *l = (row * w + col) as u32;
                        continue;
                    }
                    let (dx, dy) = OFFSETS[best_k];
                    let (nx, ny) = ((x as isize + dx) as usize, (y as isize + dy) as usize);
                    *r = g.index(nx, ny) as u32;
                    *d = best_k as u8;
                    *l = if interior.contains(nx, ny) {
                        interior.index(nx, ny) as u32
                    } else {
                        EXIT
                    };
                }
            },
        );
    }

    /// A breadth-first order from each of the tile's exits and roots in turn (over the local
    /// receivers [`TileStreamPower::descend`] wrote), donors by index as bit masks, and each
    /// cell's exit (the one its path leaves the tile by) and its place among `exits`.
    /// Each tree's cells come out together, so the walks over `order` (drainage, solve)
    /// touch a tree's part of memory at a time; a node's donors come in index order as
    /// before, so each node's sums add the same terms in the same order.
    fn build_order(&mut self) -> Result<()> {
        let n = self.tile.interior.len();
        let w = self.tile.interior.w as isize;
        // Interior index offset of the donor in bit j (at `OFFSETS[j]` from its receiver).
        let delta = OFFSETS.map(|(dx, dy)| dy * w + dx);
        let (local, dir, masks) = (&self.local[..], &self.dir[..], &mut self.masks[..]);
        masks.fill(0);
        for (i, &r) in local.iter().enumerate() {
            if r != EXIT && r as usize != i {
                // The donor lies at the opposite of its own direction to the receiver.
                masks[r as usize] |= 1 << (7 - dir[i]);
            }
        }
        // Per mask, its donors' offsets in index order (then zeros): each cell writes 8
        // entries and moves on by its donor count, without a branch per donor (as the whole
        // map's `bfs_masks`).
        let mut table = [[0u32; 8]; 256];
        for (m, offs) in table.iter_mut().enumerate() {
            let bits = (0..8).filter(|j| m & (1 << j) != 0);
            for (o, j) in offs.iter_mut().zip(bits) {
                *o = delta[j] as u32;
            }
        }
        let (order, exits) = (&mut self.order, &mut self.exits);
        let (block_root, block_start) = (&mut self.block_root, &mut self.block_start);
        let term_slot = &mut self.term_slot[..];
        // Room for 8 entries past the last cell: each cell enters the order once at most
        // (when its receiver leaves the queue), so `len` stays at most `n`.
        order.clear();
        order.resize(n + 8, 0);
        exits.clear();
        block_root.clear();
        block_start.clear();
        let mut len = 0usize;
        for (i, &r) in local.iter().enumerate() {
            let s = if r == EXIT {
                exits.push(i as u32);
                exits.len() as u32 - 1
            } else if r as usize == i {
                NONE
            } else {
                continue;
            };
            let start = len;
            block_root.push(i as u32);
            block_start.push(start as u32);
            order[len] = i as u32;
            len += 1;
            let mut head = start;
            while head < len {
                // Trees spread over the tile: ask for a later cell's mask now.
                if let Some(&ahead) = order.get(head + PREFETCH_AHEAD) {
                    prefetch(masks, ahead as usize);
                }
                let c = order[head];
                head += 1;
                let m = masks[c as usize];
                let out: &mut [u32; 8] = (&mut order[len..len + 8])
                    .try_into()
                    .expect("8 free entries past the last cell");
                for (o, &d) in out.iter_mut().zip(&table[m as usize]) {
                    *o = c.wrapping_add(d);
                }
                len += m.count_ones() as usize;
            }
            for &c in &order[start..len] {
                term_slot[c as usize] = s;
            }
        }
        order.truncate(len);
        block_start.push(len as u32);
        if order.len() != n {
            return Err(OrogenError::Numerical {
                field: format!("{} (tile {})", self.field, self.tile.rank),
                reason: format!(
                    "receivers form a cycle: the order covers {} of {n} cells",
                    order.len()
                ),
            });
        }
        Ok(())
    }

    /// How the chain of crossings is solved (default: [`ChainSolve::Exact`]).
    pub fn set_chain(&mut self, chain: ChainSolve) {
        self.chain = chain;
    }

    /// The exit (global index) the path of interior cell `li` leaves the tile by, or NONE.
    #[inline]
    fn term(&self, li: usize) -> u32 {
        match self.term_slot[li] {
            NONE => NONE,
            s => self.global(self.exits[s as usize] as usize),
        }
    }

    /// The global index of interior cell `li`.
    #[inline]
    fn global(&self, li: usize) -> u32 {
        let r = self.tile.interior;
        self.layout.grid().index(r.x0 + li % r.w, r.y0 + li / r.w) as u32
    }

    /// Sums the weights down the tile's trees: each cell's weight, then its donors' sums
    /// from the last donor (by index) to the first, donors before receivers. Each sum adds
    /// its terms in that order whatever the order of the tile's trees (a breadth-first
    /// block, or a block [`TileStreamPower::restack`] moved), so the bytes do not depend
    /// on it.
    fn sum_local(&mut self) {
        let w = self.tile.interior.w as isize;
        let delta = OFFSETS.map(|(dx, dy)| dy * w + dx);
        let (sums, masks) = (&mut self.sums[..], &self.masks[..]);
        let (weights, area) = (self.weights.as_deref(), self.area);
        let order = &self.order[..];
        for (p, &c) in order.iter().enumerate().rev() {
            // The walk jumps between a tree's cells: ask for an earlier cell's now.
            if let Some(&ahead) = p.checked_sub(PREFETCH_AHEAD).map(|a| &order[a]) {
                let a = ahead as usize;
                prefetch(masks, a);
                prefetch(sums, a.saturating_sub(w as usize));
                prefetch(sums, a + w as usize);
                if let Some(w) = weights {
                    prefetch(w, a);
                }
            }
            let c = c as usize;
            let mut s = weights.map_or(area, |w| w[c]);
            let mut m = masks[c];
            while m != 0 {
                // The last donor first, as a walk up a breadth-first block adds them.
                let j = 7 - m.leading_zeros() as usize;
                m &= !(1 << j);
                s += sums[(c as isize + delta[j]) as usize];
            }
            sums[c] = s;
        }
    }

    /// The sums again with `inflow` at the entry cells, as [`TileStreamPower::sum_local`]
    /// would make them, but only where they change: the cells below an entry, each summed
    /// as the full pass sums it (its weight, its inflows, then its donors' sums from the last
    /// donor to the first) once its donors below an entry are done. The same bits as the
    /// full pass, without walking the whole tile again.
    fn add_inflows(&mut self, inflow: &[f64]) {
        let (local, masks) = (&self.local[..], &self.masks[..]);
        let w = self.tile.interior.w as isize;
        let delta = OFFSETS.map(|(dx, dy)| dy * w + dx);
        // Per cell below an entry: 1 + its donors below an entry not summed yet (0 above).
        let (pending, touched) = (&mut self.pending_donors, &mut self.touched);
        pending.resize(local.len(), 0);
        touched.clear();
        for &e in &self.entries {
            let mut c = e as usize;
            if pending[c] != 0 {
                continue;
            }
            pending[c] = 1;
            touched.push(c as u32);
            loop {
                let r = local[c];
                if r == EXIT || r as usize == c {
                    break;
                }
                let r = r as usize;
                let seen = pending[r] != 0;
                pending[r] += if seen { 1 } else { 2 };
                if seen {
                    break;
                }
                touched.push(r as u32);
                c = r;
            }
        }
        let sums = &mut self.sums;
        for &c in touched.iter() {
            sums[c as usize] = self.weights.as_ref().map_or(self.area, |w| w[c as usize]);
        }
        for (&e, &f) in self.entries.iter().zip(inflow) {
            sums[e as usize] += f;
        }
        // Cells whose donors are done, summed in turn (Kahn's order: donors first).
        let mut ready: Vec<u32> = touched
            .iter()
            .copied()
            .filter(|&c| pending[c as usize] == 1)
            .collect();
        while let Some(c) = ready.pop() {
            let c = c as usize;
            let mut m = masks[c];
            while m != 0 {
                // The last donor first, as the full pass adds them.
                let j = 7 - m.leading_zeros() as usize;
                m &= !(1 << j);
                sums[c] += sums[(c as isize + delta[j]) as usize];
            }
            pending[c] = 0;
            let r = local[c];
            if r != EXIT && r as usize != c {
                let r = r as usize;
                pending[r] -= 1;
                if pending[r] == 1 {
                    ready.push(r as u32);
                }
            }
        }
    }

    /// Drainage: local sums, the crossing graph at the root, the inflows added.
    fn accumulate(&mut self, comm: &mut impl Comm) -> Result<()> {
        self.entries.clear();
        self.sum_local();
        let (interior, ring) = (self.tile.interior, &self.ring);
        let mut w = Writer::with_capacity(8 + 16 * self.exits.len() + 8 * ring.len());
        w.u32(self.exits.len() as u32);
        for &e in &self.exits {
            w.u32(self.global(e as usize));
            w.u32(self.receivers[e as usize]);
            w.f64(self.sums[e as usize]);
        }
        w.u32(ring.len() as u32);
        for &c in ring {
            w.u32(self.global(c as usize));
            w.u32(self.term(c as usize));
        }
        let reply = through_root(
            comm,
            ROOT,
            (TAG_ACC_UP, TAG_ACC_DOWN),
            w.into_bytes(),
            |all| self.cross.accumulate(&self.layout, all),
        )?;
        let mut rd = Reader::new(&reply, "inflows", ROOT);
        let count = rd.u32()? as usize;
        let mut inflow = Vec::with_capacity(count);
        let g = self.layout.grid();
        for _ in 0..count {
            let cell = rd.u32()? as usize;
            let (x, y) = (cell % g.width, cell / g.width);
            if !interior.contains(x, y) {
                return Err(OrogenError::invalid(
                    format!("tiles rank {}", self.tile.rank),
                    format!("the root sent an inflow for cell ({x}, {y}), outside the tile"),
                ));
            }
            self.entries.push(interior.index(x, y) as u32);
            inflow.push(rd.f64()?);
        }
        rd.finish()?;
        if !inflow.is_empty() {
            self.add_inflows(&inflow);
        }
        self.drainage
            .iter_mut()
            .zip(&self.sums)
            .for_each(|(d, &s)| *d = s as f32);
        Ok(())
    }

    /// True for a root that is not base level (a pit: it rises with the uplift).
    #[inline]
    fn is_pit(&self, li: usize, h: f32) -> bool {
        let r = self.tile.interior;
        !(h <= self.sea || self.is_outlet(r.x0 + li % r.w, r.y0 + li / r.w))
    }

    /// The implicit solve: maps composed down each path, the chain at the root, then the
    /// whole map's per-node arithmetic (`walk_run` in `eroders::stream_power`).
    fn solve(&mut self, comm: &mut impl Comm, dt: f64) -> Result<()> {
        // Heights over the interior, solved in place: cells whose path ends in the tile
        // get their new height in the first walk, the others their map, then their height
        // once the root has sent their exits' receivers.
        let mut h = std::mem::take(&mut self.scratch);
        self.heights_into(&mut h);
        self.clear_pending();
        if self.chain == ChainSolve::Affine {
            self.maps.resize(self.order.len(), [0.0; 3]);
        }
        // Each cell's erosion factor in a pass in index order (the whole map's
        // `erosion_factors`), so the walk below reads one array for it instead of three.
        let (m, n, dists) = (self.m, self.n, self.dists);
        let cells = self.factors.iter_mut().zip(&self.dir);
        for ((f, &j), (&k, &a)) in cells.zip(self.k.iter().zip(&self.drainage)) {
            *f = match j {
                NO_DIR => 0.0,
                j => match dists[j as usize] as f64 {
                    d if d > 0.0 => erosion_factor(k, a, d, m, n, dt),
                    _ => 0.0,
                },
            };
        }
        if let Some(bad) = self.factors.iter().position(|f| !f.is_finite()) {
            return Err(OrogenError::Numerical {
                field: self.field.clone(),
                reason: format!(
                    "erosion factor k·A^m·dt/dist^n = {} at cell {} is not usable; lower dt, \
                     k or precipitation",
                    self.factors[bad],
                    self.global(bad)
                ),
            });
        }
        for k in 0..self.order.len() {
            // The walk jumps between a tree's cells: ask for a later cell's values now.
            if let Some(&ahead) = self.order.get(k + PREFETCH_AHEAD) {
                let a = ahead as usize;
                prefetch(&self.local, a);
                prefetch(&h, a);
                prefetch(&self.uplift, a);
                prefetch(&self.factors, a);
                prefetch(&self.term_slot, a);
            }
            let c = self.order[k] as usize;
            let r = self.local[c];
            if r as usize == c {
                if self.is_pit(c, h[c]) {
                    h[c] = (h[c] as f64 + self.uplift[c] as f64 * dt) as f32;
                }
                continue;
            }
            let h_up = (h[c] as f64 + self.uplift[c] as f64 * dt) as f32;
            let f = self.factors[c];
            if self.term_slot[c] == NONE {
                h[c] =
                    settle(h_up, h[r as usize], f, self.n).map_err(|e| e.in_field(&self.field))?;
                continue;
            }
            self.push_pending(c as u32, self.term_slot[c]);
            h[c] = h_up;
            if self.chain != ChainSolve::Affine {
                continue;
            }
            let up = h_up as f64;
            let own = if f == 0.0 {
                [0.0, up, up]
            } else {
                [f / (1.0 + f), up / (1.0 + f), up]
            };
            self.maps[c] = if r == EXIT {
                own
            } else {
                let [a, b, cc] = own;
                let [ra, rb, rc] = self.maps[r as usize];
                [a * ra, a * rb + b, (a * rc + b).min(cc)]
            };
        }
        match self.chain {
            ChainSolve::Affine if self.n != 1.0 => {
                return Err(OrogenError::invalid(
                    format!("{}.n", self.field),
                    format!(
                        "{}: the affine chain needs n = 1 (use the exact chain)",
                        self.n
                    ),
                ))
            }
            ChainSolve::Affine => {
                self.rounds = 1;
                self.chain_affine(comm, &mut h)?
            }
            ChainSolve::Exact => self.chain_exact(comm, &mut h, None)?,
        }
        self.set_interior(&h);
        self.scratch = h;
        Ok(())
    }

    /// Empties `pending` and its runs.
    fn clear_pending(&mut self) {
        self.pending.clear();
        self.run_slot.clear();
        self.run_end.clear();
    }

    /// Appends cell `c`, whose path leaves the tile by exit `slot`, to `pending`: to the
    /// last run when that run leaves by the same exit, else in a new run.
    #[inline]
    fn push_pending(&mut self, c: u32, slot: u32) {
        self.pending.push(c);
        let end = self.pending.len() as u32;
        match (self.run_slot.last(), self.run_end.last_mut()) {
            (Some(&s), Some(last)) if s == slot => *last = end,
            _ => {
                self.run_slot.push(slot);
                self.run_end.push(end);
            }
        }
    }

    /// Writes `h` (row-major over the interior) into the heights.
    fn set_interior(&mut self, h: &[f32]) {
        let (halo, interior) = (self.tile.halo, self.tile.interior);
        for (y, row) in (interior.y0..).zip(h.chunks_exact(interior.w)) {
            let at = halo.index(interior.x0, y);
            self.heights[at..at + interior.w].copy_from_slice(row);
        }
    }

    /// [`ChainSolve::Affine`]: entry maps up, exits' receiver heights down, then the
    /// pending cells in flow order.
    fn chain_affine(&mut self, comm: &mut impl Comm, h: &mut [f32]) -> Result<()> {
        let mut w = Writer::with_capacity(24 * self.entries.len());
        for &e in &self.entries {
            let e = e as usize;
            // A path that ends in the tile: the new height itself.
            let map = match self.term_slot[e] {
                NONE => [0.0, h[e] as f64, h[e] as f64],
                _ => self.maps[e],
            };
            map.iter().for_each(|&v| w.f64(v));
        }
        let reply = through_root(
            comm,
            ROOT,
            (TAG_SOLVE_UP, TAG_SOLVE_DOWN),
            w.into_bytes(),
            |all| self.cross.solve(all),
        )?;
        let mut rd = Reader::new(&reply, "exit heights", ROOT);
        self.exit_heights.clear();
        for _ in 0..self.exits.len() {
            self.exit_heights.push(rd.f32()?);
        }
        rd.finish()?;
        // h holds each pending cell's uplifted height; receivers come first.
        for &c in &self.pending {
            let c = c as usize;
            let r = self.local[c];
            let h_r = if r == EXIT {
                self.exit_heights[self.term_slot[c] as usize]
            } else {
                h[r as usize]
            };
            h[c] = settle(h[c], h_r, self.factors[c], 1.0)?;
        }
        Ok(())
    }

    /// [`ChainSolve::Exact`]: rounds of final entry heights up and exits' receiver heights
    /// down; each exit's cells finish as soon as its receiver's height is known. With
    /// `fill`, the same rounds for the water surface (`max(h, h_r + epsilon)`).
    fn chain_exact(
        &mut self,
        comm: &mut impl Comm,
        h: &mut [f32],
        fill: Option<f32>,
    ) -> Result<()> {
        let slots = self.exits.len();
        self.exit_heights.clear();
        self.exit_heights.resize(slots, 0.0);
        let by_slot =
            |cells: &[u32], slot: &dyn Fn(u32) -> u32, start: &mut Vec<u32>, out: &mut Vec<u32>| {
                start.clear();
                start.resize(slots + 1, 0);
                for &c in cells {
                    let s = slot(c);
                    if s != NONE {
                        start[s as usize + 1] += 1;
                    }
                }
                for k in 0..slots {
                    start[k + 1] += start[k];
                }
                out.clear();
                out.resize(start[slots] as usize, 0);
                let mut fill = start.clone();
                for &c in cells {
                    let s = slot(c);
                    if s != NONE {
                        out[fill[s as usize] as usize] = c;
                        fill[s as usize] += 1;
                    }
                }
            };
        // The runs by exit, each exit's in flow order (a counting sort over the runs, not
        // the cells).
        let runs: Vec<u32> = (0..self.run_slot.len() as u32).collect();
        let run_slot = &self.run_slot;
        by_slot(
            &runs,
            &|r| run_slot[r as usize],
            &mut self.bucket_start,
            &mut self.bucket,
        );
        let term_slot = &self.term_slot;
        let places: Vec<u32> = (0..self.entries.len() as u32).collect();
        let entries = &self.entries;
        by_slot(
            &places,
            &|p| term_slot[entries[p as usize] as usize],
            &mut self.entry_start,
            &mut self.entry_bucket,
        );
        // Round 0: entries whose path ends in the tile are final already.
        let mut up = Writer::default();
        let finals: Vec<u32> = places
            .iter()
            .copied()
            .filter(|&p| term_slot[entries[p as usize] as usize] == NONE)
            .collect();
        up.u32(finals.len() as u32);
        for p in finals {
            up.u32(p);
            up.f32(h[entries[p as usize] as usize]);
        }
        let mut done = 0usize;
        self.rounds = 0;
        loop {
            self.rounds += 1;
            let reply = through_root(
                comm,
                ROOT,
                (TAG_SOLVE_UP, TAG_SOLVE_DOWN),
                up.into_bytes(),
                |all| self.cross.resolve_round(all),
            )?;
            let mut rd = Reader::new(&reply, "exit heights", ROOT);
            let more = rd.u32()? != 0;
            let count = rd.u32()?;
            let mut next = Vec::new();
            for _ in 0..count {
                let (slot, h_r) = (rd.u32()? as usize, rd.f32()?);
                if slot >= slots {
                    return Err(OrogenError::invalid(
                        format!("tiles rank {}", self.tile.rank),
                        format!("the root names exit {slot} of {slots}"),
                    ));
                }
                self.exit_heights[slot] = h_r;
                let runs = &self.bucket
                    [self.bucket_start[slot] as usize..self.bucket_start[slot + 1] as usize];
                for &run in runs {
                    let run = run as usize;
                    let start = match run {
                        0 => 0,
                        _ => self.run_end[run - 1] as usize,
                    };
                    let cells = &self.pending[start..self.run_end[run] as usize];
                    for (k, &c) in cells.iter().enumerate() {
                        // A tree's cells lie all over it: ask for a later one's values now.
                        if let Some(&ahead) = cells.get(k + PREFETCH_AHEAD) {
                            let a = ahead as usize;
                            prefetch(&self.local, a);
                            prefetch(h, a);
                            prefetch(&self.factors, a);
                        }
                        let c = c as usize;
                        let r = self.local[c];
                        let h_r = if r == EXIT { h_r } else { h[r as usize] };
                        h[c] = match fill {
                            None => settle(h[c], h_r, self.factors[c], self.n)
                                .map_err(|e| e.in_field(&self.field))?,
                            Some(epsilon) => h[c].max(h_r + epsilon),
                        };
                    }
                    done += cells.len();
                }
                let range = self.entry_start[slot] as usize..self.entry_start[slot + 1] as usize;
                next.extend(
                    self.entry_bucket[range]
                        .iter()
                        .map(|&p| (p, h[self.entries[p as usize] as usize])),
                );
            }
            rd.finish()?;
            if !more {
                break;
            }
            up = Writer::with_capacity(4 + 8 * next.len());
            up.u32(next.len() as u32);
            for (p, v) in next {
                up.u32(p);
                up.f32(v);
            }
        }
        if done != self.pending.len() {
            return Err(OrogenError::Numerical {
                field: format!("{} (tile {})", self.field, self.tile.rank),
                reason: format!(
                    "the chain of crossings settled {done} of {} cells",
                    self.pending.len()
                ),
            });
        }
        Ok(())
    }
}
