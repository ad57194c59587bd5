//! Thermal erosion of a layered terrain: the exposed material of each cell slides to its
//! lower neighbours when the slope exceeds that material's talus angle.
//!
//! Thesis (Prokop 2009) §4.3.1, after Musgrave 1989 and Olsen 2004 (§3.1.3): for each cell
//! take the neighbours that are lower than h − T, with T = l·tan(talus of the exposed
//! material) and l the distance to them. With dᵢ = h − hᵢ, d_max the largest
//! and `sum` their total, the cell moves S = rate·r·0.5·D·d_max, D the exposed material's
//! thermal susceptibility and r drawn from N(1, σ) clamped to [0, 1]. S never exceeds the
//! exposed layer's thickness (bedrock is infinite): only the top layer moves in one step,
//! the one under it erodes in a later step with its own talus and susceptibility. S is
//! shared among the lower neighbours in proportion dᵢ / sum, into their layer 0.
//!
//! The neighbours are all eight (Moore), at their true distances: l = cell_size for the
//! four orthogonal ones and √2·cell_size for the diagonals. The thesis takes Olsen's
//! rotated von Neumann neighbourhood, the four diagonals alone, but a cell and its diagonals
//! always have the same parity of x + y: the grid falls apart into two interleaved lattices
//! that never exchange material. Thermal erosion smooths each of them on its own, and what
//! tells them apart (the random factor r, the exposed layer, another process) is never
//! smoothed away: it grows into a checkerboard one cell across, which the `weathering`
//! recipe showed on every slope at its talus (tests/integration/layered_erosion.rs measures it).
//!
//! The thesis applies each cell's move at once (Gauss–Seidel); here a step is Jacobi-style
//! so that it is parallel and deterministic whatever the thread count, like
//! [`super::thermal`]: every cell first computes its outflow factor from the old state,
//! then every receiver computes a scale so that it gains at most rate·0.5·d_in_max (d_in_max
//! the largest drop of a sender onto it: the pit that would fill into a spike in the thesis's
//! discussion of Olsen), then every cell gathers in a fixed neighbour order. A cell whose S
//! is its whole exposed layer is not scaled (its flows add at most that thin layer to a
//! receiver), so the layer empties in one step instead of leaving a remnant that shrinks
//! forever; the f32 rounding of its flows (~1e-7 of the layer) stays in the surface, that is
//! in the layers under it. A flow is
//! `k_sender·d·s_receiver`, the same f32 bits on both sides, summed in f64, so mass is
//! conserved up to the final rounding of each cell to f32. No material leaves the grid.
//!
//! The random factor comes from a counter-based hash of (seed, step, cell), so it does not
//! depend on threads or scheduling; it is the sum of four uniforms (Irwin–Hall) scaled to
//! mean 1 and deviation σ: the normal's mean and variance, with tails cut at ±3.5σ.
//!
//! Speed: a step is two parallel sweeps over the grid, each walking a row at a time.
//! Pass 1 (tasks of `ROWS_PER_TASK` rows) finds each cell's exposed material with one
//! branch-free, vectorised loop per layer over the row, then its outflow factor; it writes
//! the factor, material index and drop T per cell (13 B of buffers per cell with the old
//! surface) and the largest excess, so a step under the tolerance stops before touching
//! the terrain. Passes 2 and 3 are fused per band of `BAND_ROWS` rows: a band computes
//! the receiver scales of row y + 1 into a ring of three rows just before row y gathers
//! its flows, so the scales stay in cache and never go to memory; the rows on either side
//! of a band are computed by both neighbours, from pass 1's complete outputs, with the
//! same bits. The interior columns of an interior row run in loops of their own over row
//! slices (`*_interior`), which the compiler vectorises, and the two border columns and
//! border rows take the general per-cell path. Both compute the same expressions in the
//! same order, so the bytes do not depend on the path, the band height or the thread
//! count; the material moved is summed per `ROWS_PER_TASK` rows whatever the band.
//! Each cell's drop T is kept beside its material index so the neighbour loops need no
//! table lookup.

use crate::math;
use rayon::prelude::*;

use crate::error::{check_range, OrogenError, Result};
use crate::field::Grid;
use crate::neighbourhood::raster::{ring8, rows3};
use crate::state::{buffer, MaterialProps, TerrainMut};

/// Layered thermal erosion parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Factor on the thesis's amount S = r·0.5·D·d_max, dimensionless, in (0, 1].
    /// Default 1 (the thesis).
    pub rate: f32,
    /// Standard deviation σ of the random factor r ~ N(1, σ), clamped to [0, 1];
    /// dimensionless, in [0, 1]; 0 makes r = 1. Default 0.2 (the thesis).
    pub randomness: f32,
    /// A step moves nothing once no movable cell (exposed susceptibility > 0) is higher than
    /// a neighbour by more than its T plus this, metres (≥ 0). Default 0.01.
    pub tolerance: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            rate: 1.0,
            randomness: 0.2,
            tolerance: 0.01,
        }
    }
}

impl Params {
    /// Checks ranges; `field` prefixes error names (e.g. `stages[1].LayeredThermal`).
    /// An empty `field` names the parameters alone (`rate`).
    pub fn validate(&self, field: &str) -> Result<()> {
        let name = |sub: &str| crate::error::sub_field(field, sub);
        let rate = self.rate as f64;
        if !rate.is_finite() || rate <= 0.0 || rate > 1.0 {
            return Err(OrogenError::invalid(
                name("rate"),
                format!("must be within (0, 1], got {}", self.rate),
            ));
        }
        check_range(&name("randomness"), self.randomness as f64, 0.0, 1.0)?;
        check_range(&name("tolerance"), self.tolerance as f64, 0.0, f64::MAX)
    }
}

pub use crate::state::validate_materials;

/// What one [`LayeredThermal::step`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Largest dᵢ − T over the movable cells before the step, metres; at or below the
    /// tolerance nothing moved.
    pub max_excess: f32,
    /// Material moved in the step, metres summed over cells (× cell area for m³).
    pub moved: f64,
}

/// Most layers a terrain may have here (the exposed material is kept in a byte).
pub const MAX_LAYERS: usize = 254;

/// The layered thermal process over a grid, with its buffers kept between steps.
pub struct LayeredThermal {
    grid: Grid,
    params: Params,
    seed: u64,
    /// Where this grid lies in the whole map, for the random factor's cell index: the
    /// window's first column and row and the whole map's width (`(0, 0, width)` for a
    /// whole map; [`LayeredThermal::window`]).
    origin: (usize, usize, usize),
    steps: u64,
    /// Outflow factor per cell: the flow to a lower neighbour is `k·d·s_receiver`; a
    /// negative factor sends the whole exposed layer, `−k·d`, unscaled.
    k: Vec<f32>,
    /// Index of the exposed material per cell (`layers.len()` for bedrock).
    exposed: Vec<u8>,
    /// The drop T of each cell's exposed material, metres (so the neighbour loops need
    /// no table lookup).
    t: Vec<f32>,
    /// The surface before the step.
    old: Vec<f32>,
}

/// The Moore neighbourhood, `(dx, dy)`, in the fixed order every pass walks them, row by
/// row; a diagonal has `dx ≠ 0` and `dy ≠ 0`.
const NEIGHBOURS: [(isize, isize); 8] = crate::neighbourhood::raster::OFFSETS;

/// A diagonal neighbour's drop T is the orthogonal one's times this (it lies √2 further).
const SQRT2: f32 = std::f32::consts::SQRT_2;

/// The drop T towards a neighbour, from the cell's orthogonal T.
#[inline(always)]
fn drop_to(t: f32, diagonal: bool) -> f32 {
    if diagonal {
        t * SQRT2
    } else {
        t
    }
}

/// Rows per parallel task of pass 1, and per partial sum of the material moved.
const ROWS_PER_TASK: usize = 8;

/// Rows per parallel task of the fused passes 2 and 3 (a multiple of `ROWS_PER_TASK`).
const BAND_ROWS: usize = 4 * ROWS_PER_TASK;

/// The random factor r of `cell` in step `step`: N(1, σ) approximated by four uniforms,
/// clamped to [0, 1].
#[inline(always)]
fn random_factor(seed: u64, step: u64, cell: usize, sigma: f32) -> f32 {
    let mut z = seed
        ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (cell as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    // splitmix64 finaliser.
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let sum = (z & 0xFFFF) + ((z >> 16) & 0xFFFF) + ((z >> 32) & 0xFFFF) + (z >> 48);
    // Four uniforms on [0, 1): mean 2, variance 4/12.
    let u = (sum as f32 + 2.0) * (1.0 / 65536.0);
    let normal = (u - 2.0) * 1.732_050_8; // unit variance
    (1.0 + sigma * normal).clamp(0.0, 1.0)
}

/// Calls `f(j, diagonal)` for each neighbour `j` of `(x, y)` inside the grid, in
/// [`NEIGHBOURS`] order.
#[inline(always)]
fn for_neighbours(x: usize, y: usize, w: usize, h: usize, mut f: impl FnMut(usize, bool)) {
    for &(dx, dy) in &NEIGHBOURS {
        let (nx, ny) = (x as isize + dx, y as isize + dy);
        if nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < h {
            f(ny as usize * w + nx as usize, dx != 0 && dy != 0);
        }
    }
}

/// Every layer's thickness split into the same row chunks as the surface: one `Vec` of
/// per-layer slices per chunk of `chunk` cells.
pub(crate) fn layer_chunks(layers: &mut [Vec<f32>], chunk: usize) -> Vec<Vec<&mut [f32]>> {
    let chunks = layers.first().map_or(0, |l| l.len().div_ceil(chunk));
    let mut out: Vec<Vec<&mut [f32]>> = (0..chunks)
        .map(|_| Vec::with_capacity(layers.len()))
        .collect();
    for layer in layers.iter_mut() {
        for (c, part) in layer.chunks_mut(chunk).enumerate() {
            out[c].push(part);
        }
    }
    out
}

impl LayeredThermal {
    /// Layered thermal erosion over `grid`; `seed` drives the random factor.
    pub fn new(grid: Grid, params: Params, seed: u64) -> Result<Self> {
        params.validate("")?;
        grid.require_square("LayeredThermal")?;
        let grid = Grid::new(grid.width, grid.height, grid.cell_size)?;
        let n = grid.len();
        Ok(LayeredThermal {
            grid,
            params,
            seed,
            origin: (0, 0, grid.width),
            steps: 0,
            k: buffer(n, Default::default(), "layered thermal")?,
            exposed: buffer(n, Default::default(), "layered thermal")?,
            t: buffer(n, Default::default(), "layered thermal")?,
            old: buffer(n, Default::default(), "layered thermal")?,
        })
    }

    /// The parameters.
    /// The process over the window `[x0, y0, w, h]` of the whole map `grid`, treated as a
    /// grid of its own (its edges are borders) whose random factors are the whole map's
    /// (hashed from whole-map cell indices): the tiled run's step (`tiles::layered_thermal`)
    /// is this one's over a tile grown by a halo.
    pub fn window(grid: Grid, window: [usize; 4], params: Params, seed: u64) -> Result<Self> {
        let [x0, y0, w, h] = window;
        if w == 0 || h == 0 || x0 + w > grid.width || y0 + h > grid.height {
            return Err(OrogenError::invalid(
                "LayeredThermal window",
                format!(
                    "{w}x{h} cells at ({x0}, {y0}) is not inside the {}x{} map",
                    grid.width, grid.height
                ),
            ));
        }
        let mut t = LayeredThermal::new(Grid::new(w, h, grid.cell_size)?, params, seed)?;
        t.origin = (x0, y0, grid.width);
        Ok(t)
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Bytes of buffers the process keeps, per cell.
    pub fn bytes_per_cell(&self) -> usize {
        3 * std::mem::size_of::<f32>() + std::mem::size_of::<u8>()
    }

    /// One step over `terrain`, with `materials` one per layer top down then bedrock
    /// (`terrain.layers.len() + 1`).
    pub fn step(
        &mut self,
        terrain: &mut TerrainMut,
        materials: &[MaterialProps],
    ) -> Result<StepReport> {
        self.step_with(terrain, materials, Ok)
    }

    /// [`step`](Self::step) whose largest excess (found before anything moves) goes
    /// through `excess` first: a tiled run reduces it over the tiles there, so every tile
    /// stops, or moves, as the whole map does.
    pub fn step_with(
        &mut self,
        terrain: &mut TerrainMut,
        materials: &[MaterialProps],
        excess: impl FnOnce(f32) -> Result<f32>,
    ) -> Result<StepReport> {
        let (w, h) = (self.grid.width, self.grid.height);
        let n = w * h;
        terrain.check_grid(&self.grid)?;
        let nl = terrain.layers.len();
        if nl > MAX_LAYERS {
            return Err(OrogenError::invalid(
                "layers",
                format!("at most {MAX_LAYERS} layers, got {nl}"),
            ));
        }
        validate_materials(materials, nl)?;
        let step = self.steps;
        self.steps += 1;

        let l = self.grid.cell_size as f64;
        // Per material: the drop T = l·tan(talus) to an orthogonal neighbour (× √2 to a
        // diagonal one) and rate·0.5·D.
        let drop: Vec<f32> = materials
            .iter()
            .map(|m| (l * math::tan((m.talus_deg as f64).to_radians())) as f32)
            .collect();
        let factor: Vec<f32> = materials
            .iter()
            .map(|m| self.params.rate * 0.5 * m.thermal_susceptibility)
            .collect();
        let (seed, sigma) = (self.seed, self.params.randomness);

        self.old.copy_from_slice(terrain.surface);
        let hs: &[f32] = &self.old;
        let layers: &[Vec<f32>] = terrain.layers.thickness_all_mut();
        let chunk = ROWS_PER_TASK * w;

        // Pass 1: exposed material and outflow factor of every cell, from the old state.
        let consts = Pass1 {
            origin: self.origin,
            drop: &drop,
            factor: &factor,
            seed,
            step,
            sigma,
        };
        let max_excess = self
            .k
            .par_chunks_mut(chunk)
            .zip(self.exposed.par_chunks_mut(chunk))
            .zip(self.t.par_chunks_mut(chunk))
            .enumerate()
            .map(|(c, ((ks, es), ts))| {
                let mut worst = f32::NEG_INFINITY;
                // Per row: the exposed material, its thickness, drop T and factor.
                let mut ex_row = ExposedRow::default();
                let mut lrows: Vec<&[f32]> = Vec::with_capacity(nl);
                for (r, ((k_row, e_row), t_row)) in ks
                    .chunks_mut(w)
                    .zip(es.chunks_mut(w))
                    .zip(ts.chunks_mut(w))
                    .enumerate()
                {
                    let y = c * ROWS_PER_TASK + r;
                    let row = y * w;
                    lrows.clear();
                    lrows.extend(layers.iter().map(|l| &l[row..row + w]));
                    consts.exposed(&lrows, w, &mut ex_row);
                    for (e, &m) in e_row.iter_mut().zip(&ex_row.m) {
                        *e = m as u8;
                    }
                    t_row.copy_from_slice(&ex_row.t);
                    let interior = y > 0 && y + 1 < h && w >= 3;
                    let mut edge = |x: usize| {
                        let i = row + x;
                        let hi = hs[i];
                        let (mut dmax, mut sum) = (0.0f32, 0.0f32);
                        let mut over = f32::NEG_INFINITY;
                        let t = ex_row.t[x];
                        // Branch-free: a neighbour not below h − T adds 0.
                        for_neighbours(x, y, w, h, |j, diag| {
                            let (d, t) = (hi - hs[j], drop_to(t, diag));
                            over = over.max(d - t);
                            let d = if d > t { d } else { 0.0 };
                            dmax = dmax.max(d);
                            sum += d;
                        });
                        let cell = consts.cell(x, y);
                        let (k, excess) = consts.factor_of(cell, &ex_row, x, (dmax, sum, over));
                        k_row[x] = k;
                        worst = worst.max(excess);
                    };
                    if interior {
                        edge(0);
                        edge(w - 1);
                        worst = worst.max(consts.interior(y, w, hs, &ex_row, k_row));
                    } else {
                        (0..w).for_each(&mut edge);
                    }
                }
                worst
            })
            .reduce(|| f32::NEG_INFINITY, f32::max);
        let max_excess = excess(max_excess.max(0.0))?;
        if max_excess <= self.params.tolerance {
            return Ok(StepReport {
                max_excess,
                moved: 0.0,
            });
        }

        // Passes 2 and 3, fused per band of rows: each band walks its rows keeping the
        // receiver scales of rows y − 1, y and y + 1 in a ring of three rows; row y + 1's
        // scales are computed just before row y gathers. A band computes the scales of the
        // row on either side of it too (they depend only on pass 1's outputs, so both
        // bands get the same bits), and the scales never go to memory.
        let (ks, ex, ts): (&[f32], &[u8], &[f32]) = (&self.k, &self.exposed, &self.t);
        let half_rate = 0.5 * self.params.rate;
        let band = BAND_ROWS * w;
        let mut lchunks = layer_chunks(terrain.layers.thickness_all_mut(), band);
        if nl == 0 {
            // No layers: one empty list per band, so the zip below covers every band.
            lchunks = (0..n.div_ceil(band)).map(|_| Vec::new()).collect();
        }
        let scales_row = |y: usize, s_row: &mut [f32]| {
            let at = |x: usize| scale_at(y * w + x, x, y, w, h, hs, ks, ts, half_rate);
            if y > 0 && y + 1 < h && w >= 3 {
                scales_interior(y, w, hs, ks, ts, s_row, half_rate);
                s_row[0] = at(0);
                s_row[w - 1] = at(w - 1);
            } else {
                for (x, s) in s_row.iter_mut().enumerate() {
                    *s = at(x);
                }
            }
        };
        let moved: f64 = terrain
            .surface
            .par_chunks_mut(band)
            .zip(lchunks.into_par_iter())
            .enumerate()
            .map(|(b, (out, mut lts))| {
                // `moved` per ROWS_PER_TASK rows, so its f64 sum has the same grouping
                // whatever the band height.
                let mut moved = vec![0.0f64; (out.len() / w).div_ceil(ROWS_PER_TASK)];
                let mut flows = vec![(0.0f64, 0.0f64); w];
                let mut ring = vec![0.0f32; 3 * w];
                let slot = |y: usize| (y % 3) * w..(y % 3 + 1) * w;
                let y0 = b * BAND_ROWS;
                if y0 > 0 {
                    scales_row(y0 - 1, &mut ring[slot(y0 - 1)]);
                }
                scales_row(y0, &mut ring[slot(y0)]);
                for (r, z_row) in out.chunks_mut(w).enumerate() {
                    let y = y0 + r;
                    if y + 1 < h {
                        scales_row(y + 1, &mut ring[slot(y + 1)]);
                    }
                    // Rows y − 1, y, y + 1 (a stale row stands in for one outside the
                    // grid; nothing reads it).
                    let s3 = [&ring[slot(y + 2)], &ring[slot(y)], &ring[slot(y + 1)]];
                    let interior = y > 0 && y + 1 < h && w >= 3;
                    let at = |x: usize| gather(y * w + x, x, y, w, h, hs, ks, s3, ts);
                    if interior {
                        gather_interior(y, w, hs, ks, s3, ts, &mut flows);
                        flows[0] = at(0);
                        flows[w - 1] = at(w - 1);
                    } else {
                        for (x, f) in flows.iter_mut().enumerate() {
                            *f = at(x);
                        }
                    }
                    let moved = &mut moved[r / ROWS_PER_TASK];
                    for (x, (z, &(gain, loss))) in z_row.iter_mut().zip(&flows).enumerate() {
                        if gain == 0.0 && loss == 0.0 {
                            continue;
                        }
                        let o = r * w + x;
                        let i = b * band + o;
                        *moved += loss;
                        *z = (hs[i] as f64 + gain - loss) as f32;
                        if nl == 0 {
                            continue;
                        }
                        let m = ex[i] as usize;
                        if ks[i] < 0.0 {
                            // The whole exposed layer left (its f32 rounding, ~1e-7 of it,
                            // stays in the surface, i.e. in the layers under it).
                            if m > 0 {
                                lts[m][o] = 0.0;
                                lts[0][o] += gain as f32;
                            } else {
                                lts[0][o] = gain as f32;
                            }
                        } else if m == 0 {
                            let t = &mut lts[0][o];
                            *t = ((*t as f64 + gain - loss) as f32).max(0.0);
                        } else {
                            if m < nl {
                                let t = &mut lts[m][o];
                                *t = ((*t as f64 - loss) as f32).max(0.0);
                            }
                            let t = &mut lts[0][o];
                            *t = (*t as f64 + gain) as f32;
                        }
                    }
                }
                moved
            })
            .collect::<Vec<Vec<f64>>>()
            .iter()
            .flatten()
            .sum();
        Ok(StepReport { max_excess, moved })
    }
}

/// A flow from a cell with outflow factor `k` down a drop `d` to a receiver with scale
/// `s`: a negative factor sends its whole layer, unscaled. Branch-free: a pair below its T
/// (`d` = 0) or a factor 0 gives 0.
#[inline(always)]
fn flow(k: f32, d: f32, s: f32) -> f32 {
    k.abs() * d * if k < 0.0 { 1.0 } else { s }
}

/// A receiver's scale: 1, or `cap / want` when its senders want to give it more than
/// `cap`. Branch-free (the quotient is computed either way).
#[inline(always)]
fn scale(want: f32, cap: f32) -> f32 {
    let q = cap / want;
    if want > cap {
        q
    } else {
        1.0
    }
}

/// Pass 2 at cell `j` = `(x, y)`, anywhere on the grid: what its higher neighbours want
/// to send it, `k·d` over those above their T, against `half_rate·d_max`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn scale_at(
    j: usize,
    x: usize,
    y: usize,
    w: usize,
    h: usize,
    hs: &[f32],
    ks: &[f32],
    ts: &[f32],
    half_rate: f32,
) -> f32 {
    let hj = hs[j];
    let (mut want, mut dmax) = (0.0f32, 0.0f32);
    for_neighbours(x, y, w, h, |i, diag| {
        let d = hs[i] - hj;
        let d = if d > drop_to(ts[i], diag) { d } else { 0.0 };
        // A sender giving its whole layer is not scaled (else a remnant would shrink
        // forever): it only adds thin layers.
        want += ks[i].max(0.0) * d;
        dmax = dmax.max(d);
    });
    scale(want, half_rate * dmax)
}

/// The exposed material of each cell of a row: its index, thickness (infinite for
/// bedrock), drop T and factor rate·0.5·D, one array each.
#[derive(Default)]
struct ExposedRow {
    m: Vec<u32>,
    thick: Vec<f32>,
    t: Vec<f32>,
    f: Vec<f32>,
}

/// Pass 1's per-material tables and random-number key.
struct Pass1<'a> {
    /// [`LayeredThermal::origin`].
    origin: (usize, usize, usize),
    drop: &'a [f32],
    factor: &'a [f32],
    seed: u64,
    step: u64,
    sigma: f32,
}

impl Pass1<'_> {
    /// The whole-map index of cell `(x, y)` of this grid, which keys its random factor.
    #[inline(always)]
    fn cell(&self, x: usize, y: usize) -> usize {
        let (x0, y0, width) = self.origin;
        (y0 + y) * width + x0 + x
    }

    /// The exposed material of each cell of a row, from the row slices of every layer
    /// (top down): the first layer holding material, else bedrock. One loop per layer,
    /// bottom up and branch-free, so that each vectorises.
    fn exposed(&self, lrows: &[&[f32]], w: usize, out: &mut ExposedRow) {
        let nl = lrows.len();
        out.m.clear();
        out.m.resize(w, nl as u32);
        out.thick.clear();
        out.thick.resize(w, f32::INFINITY);
        out.t.clear();
        out.t.resize(w, self.drop[nl]);
        out.f.clear();
        out.f.resize(w, self.factor[nl]);
        let (m, thick, t, f) = (
            &mut out.m[..w],
            &mut out.thick[..w],
            &mut out.t[..w],
            &mut out.f[..w],
        );
        for (l, lr) in lrows.iter().enumerate().rev() {
            let mat = (l as u32, self.drop[l], self.factor[l]);
            cover_with_layer(&lr[..w], mat, m, thick, t, f);
        }
    }

    /// The outflow factor of cell `i` (its whole-map index, which keys the random factor;
    /// column `x` of the row `e`), from its largest drop `dmax` and drop sum `sum` over the
    /// neighbours below its T, and its excess (`over`, the largest dᵢ − Tᵢ; −∞ when it
    /// sends nothing). A negative factor sends the whole exposed layer.
    #[inline(always)]
    fn factor_of(
        &self,
        i: usize,
        e: &ExposedRow,
        x: usize,
        (dmax, sum, over): (f32, f32, f32),
    ) -> (f32, f32) {
        let (f, thick) = (e.f[x], e.thick[x]);
        if sum > 0.0 && f > 0.0 {
            let amount = f * random_factor(self.seed, self.step, i, self.sigma) * dmax;
            let k = if amount >= thick {
                // The whole layer goes: marked by the sign.
                -(thick / sum)
            } else {
                amount / sum
            };
            (k, over)
        } else {
            (0.0, f32::NEG_INFINITY)
        }
    }

    /// Columns `1..w − 1` of an interior row `y`: each cell's outflow factor into `k_row`;
    /// returns the largest excess. The neighbour sums run over row slices of one length.
    #[inline(never)]
    fn interior(&self, y: usize, w: usize, hs: &[f32], e: &ExposedRow, k_row: &mut [f32]) -> f32 {
        let [hu, hc, hd] = rows3(hs, y, w);
        let (ts, k_row) = (&e.t[..w], &mut k_row[..w]);
        let mut worst = f32::NEG_INFINITY;
        for x in 1..w - 1 {
            let (hi, t) = (hc[x], ts[x]);
            let (to, td) = (drop_to(t, false), drop_to(t, true));
            let (mut dmax, mut sum) = (0.0f32, 0.0f32);
            // NEIGHBOURS order.
            let mut over = f32::NEG_INFINITY;
            for (d, t) in [
                (hu[x - 1], td),
                (hu[x], to),
                (hu[x + 1], td),
                (hc[x - 1], to),
                (hc[x + 1], to),
                (hd[x - 1], td),
                (hd[x], to),
                (hd[x + 1], td),
            ] {
                let d = hi - d;
                over = over.max(d - t);
                let d = if d > t { d } else { 0.0 };
                dmax = dmax.max(d);
                sum += d;
            }
            let (k, excess) = self.factor_of(self.cell(x, y), e, x, (dmax, sum, over));
            k_row[x] = k;
            worst = worst.max(excess);
        }
        worst
    }
}

/// One layer's step of [`Pass1::exposed`]: where the layer row `lr` holds material, its
/// index, thickness, drop and factor (`mat`) replace what the layers under it gave. A
/// function of its own so that the slices are distinct arguments (the compiler then knows
/// they do not overlap and vectorises the loop).
#[inline(never)]
fn cover_with_layer(
    lr: &[f32],
    (ml, tl, fl): (u32, f32, f32),
    m: &mut [u32],
    thick: &mut [f32],
    t: &mut [f32],
    f: &mut [f32],
) {
    let w = lr.len();
    let (m, thick, t, f) = (&mut m[..w], &mut thick[..w], &mut t[..w], &mut f[..w]);
    // A bit mask blend rather than `if on { new } else { old }`, which the compiler turns
    // into conditional stores that do not vectorise.
    let (tl, fl) = (tl.to_bits(), fl.to_bits());
    let blend = |old: u32, new: u32, on: u32| old ^ ((old ^ new) & on);
    for x in 0..w {
        let th = lr[x];
        let on = if th > 0.0 { u32::MAX } else { 0 };
        m[x] = blend(m[x], ml, on);
        thick[x] = f32::from_bits(blend(thick[x].to_bits(), th.to_bits(), on));
        t[x] = f32::from_bits(blend(t[x].to_bits(), tl, on));
        f[x] = f32::from_bits(blend(f[x].to_bits(), fl, on));
    }
}

/// [`scale_at`] for the columns `1..w − 1` of an interior row `y`: the same expressions
/// in the same order over row slices of one length, in a loop of its own so that it
/// vectorises.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn scales_interior(
    y: usize,
    w: usize,
    hs: &[f32],
    ks: &[f32],
    ts: &[f32],
    out: &mut [f32],
    half_rate: f32,
) {
    let [hu, hc, hd] = rows3(hs, y, w);
    let [ku, kc, kd] = rows3(ks, y, w);
    let [tu, tc, td] = rows3(ts, y, w);
    let out = &mut out[..w];
    for x in 1..w - 1 {
        let hj = hc[x];
        let (mut want, mut dmax) = (0.0f32, 0.0f32);
        // NEIGHBOURS order, row by row; values gathered first so the loop is over plain
        // arrays (it unrolls and the columns vectorise).
        let (hr, kr, tr) = (
            ring8(hu, hc, hd, x),
            ring8(ku, kc, kd, x),
            ring8(tu, tc, td, x),
        );
        for n in 0..8 {
            let d = hr[n] - hj;
            let d = if d > tr[n] * RING_DROP[n] { d } else { 0.0 };
            want += kr[n].max(0.0) * d;
            dmax = dmax.max(d);
        }
        out[x] = scale(want, half_rate * dmax);
    }
}

/// The drop factor of each neighbour in [`NEIGHBOURS`] order: √2 for diagonals, 1 else
/// (`t · 1` is `t` to the bit).
const RING_DROP: [f32; 8] = [SQRT2, 1.0, SQRT2, 1.0, 1.0, SQRT2, 1.0, SQRT2];

/// Pass 3 at cell `i` = `(x, y)`, anywhere on the grid: what it gains from its senders
/// and loses to its receivers, metres, summed in f64 in [`NEIGHBOURS`] order.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn gather(
    i: usize,
    x: usize,
    y: usize,
    w: usize,
    h: usize,
    hs: &[f32],
    ks: &[f32],
    s3: [&[f32]; 3],
    ts: &[f32],
) -> (f64, f64) {
    let (hi, ki, si, ti) = (hs[i], ks[i], s3[1][x], ts[i]);
    let (mut gain, mut loss) = (0.0f64, 0.0f64);
    for_neighbours(x, y, w, h, |j, diag| {
        let hj = hs[j];
        let out = hi - hj;
        let out = if out > drop_to(ti, diag) { out } else { 0.0 };
        loss += flow(ki, out, s3[j / w + 1 - y][j % w]) as f64;
        let inn = hj - hi;
        let inn = if inn > drop_to(ts[j], diag) { inn } else { 0.0 };
        gain += flow(ks[j], inn, si) as f64;
    });
    (gain, loss)
}

/// [`gather`] for the columns `1..w − 1` of an interior row `y`, into `flows`: the same
/// expressions in the same order over row slices of one length, in a loop of its own so
/// that it vectorises.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn gather_interior(
    y: usize,
    w: usize,
    hs: &[f32],
    ks: &[f32],
    s3: [&[f32]; 3],
    ts: &[f32],
    flows: &mut [(f64, f64)],
) {
    let [hu, hc, hd] = rows3(hs, y, w);
    let [ku, kc, kd] = rows3(ks, y, w);
    let [su, sc, sd] = s3.map(|r| &r[..w]);
    let [tu, tc, td] = rows3(ts, y, w);
    let flows = &mut flows[..w];
    for x in 1..w - 1 {
        let (hi, ki, si, ti) = (hc[x], kc[x], sc[x], tc[x]);
        let (mut gain, mut loss) = (0.0f64, 0.0f64);
        // NEIGHBOURS order, row by row, over plain arrays (see `scales_interior`).
        let (hr, kr) = (ring8(hu, hc, hd, x), ring8(ku, kc, kd, x));
        let (sr, tr) = (ring8(su, sc, sd, x), ring8(tu, tc, td, x));
        for n in 0..8 {
            let (hj, m) = (hr[n], RING_DROP[n]);
            let out = hi - hj;
            let out = if out > ti * m { out } else { 0.0 };
            loss += flow(ki, out, sr[n]) as f64;
            let inn = hj - hi;
            let inn = if inn > tr[n] * m { inn } else { 0.0 };
            gain += flow(kr[n], inn, si) as f64;
        }
        flows[x] = (gain, loss);
    }
}
