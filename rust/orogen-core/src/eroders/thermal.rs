//! Thermal erosion: slopes steeper than their talus angle shed material downhill until
//! they rest at it.
//!
//! Musgrave 1989 / Olsen 2004 (thesis digest, "Thermal step"): a cell whose height exceeds
//! a neighbour's by more than T = l·tan(talus) moves material to every such neighbour in
//! proportion to its excess dᵢ = h − hᵢ − T, in all S = rate·d_max/2. Cordonnier 2016 §7
//! (results): the talus angle is constant (30° the usual value), follows 3D noise between
//! 6° and 54°, or depends on height (gentle below, steep above: cliffs on crests).
//!
//! The step is Jacobi-style and deterministic whatever the thread count: every cell first
//! computes its outflow factor from the old heights (in parallel, each cell on its own),
//! then every cell gathers what its neighbours send it in a fixed neighbour order. The 8
//! neighbours are at their true distances (l or l·√2). No material leaves the grid: border
//! cells just have fewer neighbours. A receiver never gains more than rate·e_max/2 in one
//! step, e_max the largest excess of a neighbour over it, so many senders cannot overfill a
//! pit (the receiver-side twin of Olsen's sender limit) and the scheme does not oscillate.

use crate::math;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_positive, check_range, OrogenError, Result};
use crate::field::Grid;
use crate::neighbourhood::raster::{ring8, rows3, DIAGONAL};
use crate::neighbourhood::{Neighbourhood, RasterGrid};
use crate::state::{buffer, TerrainMut};
use glam::DVec2;

/// Talus angle of a noise-driven talus (Cordonnier 2016: "3D Perlin noise with a high
/// persistence ... minimal and maximal slope angles 6° and 54°").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NoiseTalus {
    /// Smallest talus angle, degrees, in (0, 90). Default 6.
    pub min_deg: f32,
    /// Largest talus angle, degrees, in (0, 90) and ≥ `min_deg`. Default 54.
    pub max_deg: f32,
    /// Horizontal feature size of the noise, metres (> 0). Default 3000.
    pub wavelength: f32,
    /// Vertical feature size of the noise (rock strata), metres (> 0). Default 400.
    pub vertical_wavelength: f32,
    /// Octaves of the noise, 1..=8. Default 4.
    pub octaves: u32,
    /// Amplitude ratio between octaves, in [0, 1]. Default 0.7 (high persistence).
    pub persistence: f32,
}

impl Default for NoiseTalus {
    fn default() -> Self {
        NoiseTalus {
            min_deg: 6.0,
            max_deg: 54.0,
            wavelength: 3000.0,
            vertical_wavelength: 400.0,
            octaves: 4,
            persistence: 0.7,
        }
    }
}

/// Height-dependent talus (Cordonnier 2016 Fig. 18: gentle slopes below a height, steep
/// above, which puts cliffs on the crests).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeightTalus {
    /// Talus angle of cells below `height`, degrees, in (0, 90). Default 20.
    pub below_deg: f32,
    /// Talus angle of cells at or above `height`, degrees, in (0, 90). Default 60.
    pub above_deg: f32,
    /// Height where the angle changes, metres (finite). Default 1000.
    pub height: f32,
}

impl Default for HeightTalus {
    fn default() -> Self {
        HeightTalus {
            below_deg: 20.0,
            above_deg: 60.0,
            height: 1000.0,
        }
    }
}

/// The steepest stable slope. The cell material falls from (the higher one of a pair)
/// sets the angle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum TalusAngle {
    /// The same angle everywhere, degrees, in (0, 90). `Constant(30.0)`.
    Constant(f32),
    /// Varies in space with 3D noise over (x, y, height) between `min_deg` and `max_deg`;
    /// evaluated once at the start of the stage from the heights then.
    /// `Noise(min_deg: 6.0, max_deg: 54.0, wavelength: 3000.0)`.
    Noise(NoiseTalus),
    /// `below_deg` under `height`, `above_deg` from it up, re-evaluated every step.
    /// `Height(below_deg: 20.0, above_deg: 60.0, height: 1200.0)`.
    Height(HeightTalus),
    /// Each cell's exposed material's own `talus_deg` (the recipe's materials), re-evaluated
    /// every step, so hard beds stand steep and soft ones slump; on a terrain without layers,
    /// the default material's 35°. `Material`.
    Material,
}

impl Default for TalusAngle {
    fn default() -> Self {
        TalusAngle::Constant(30.0)
    }
}

/// An angle in degrees strictly between 0 and 90.
fn check_angle(field: &str, deg: f32) -> Result<()> {
    let d = deg as f64;
    if !d.is_finite() || d <= 0.0 || d >= 90.0 {
        return Err(OrogenError::invalid(
            field,
            format!("must be an angle strictly between 0 and 90 degrees, got {deg}"),
        ));
    }
    Ok(())
}

impl TalusAngle {
    /// Checks ranges; `field` names the talus itself (e.g. `stages[1].Thermal.talus`).
    pub fn validate(&self, field: &str) -> Result<()> {
        match self {
            TalusAngle::Constant(deg) => check_angle(field, *deg),
            TalusAngle::Material => Ok(()),
            TalusAngle::Noise(n) => {
                check_angle(&format!("{field}.min_deg"), n.min_deg)?;
                check_angle(&format!("{field}.max_deg"), n.max_deg)?;
                if n.max_deg < n.min_deg {
                    return Err(OrogenError::invalid(
                        format!("{field}.max_deg"),
                        format!("must be ≥ min_deg ({}), got {}", n.min_deg, n.max_deg),
                    ));
                }
                check_positive(&format!("{field}.wavelength"), n.wavelength as f64)?;
                check_positive(
                    &format!("{field}.vertical_wavelength"),
                    n.vertical_wavelength as f64,
                )?;
                if n.octaves == 0 || n.octaves > 8 {
                    return Err(OrogenError::invalid(
                        format!("{field}.octaves"),
                        format!("must be between 1 and 8, got {}", n.octaves),
                    ));
                }
                check_range(
                    &format!("{field}.persistence"),
                    n.persistence as f64,
                    0.0,
                    1.0,
                )
            }
            TalusAngle::Height(h) => {
                check_angle(&format!("{field}.below_deg"), h.below_deg)?;
                check_angle(&format!("{field}.above_deg"), h.above_deg)?;
                crate::error::check_finite(&format!("{field}.height"), h.height as f64)
            }
        }
    }
}

/// Thermal erosion parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Steepest stable slope: `Constant(deg)`, `Noise(..)` or `Height(..)`.
    /// Default `Constant(30.0)`.
    pub talus: TalusAngle,
    /// Fraction of a node's largest excess moved per step (half of it leaves the node),
    /// dimensionless, in (0, 1]. Default 0.5.
    pub rate: f32,
    /// A step moves nothing once no slope exceeds its talus by more than this height
    /// difference, metres (≥ 0). Default 0.01.
    pub tolerance: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            talus: TalusAngle::default(),
            rate: 0.5,
            tolerance: 0.01,
        }
    }
}

impl Params {
    /// Checks ranges; `field` prefixes error names (e.g. `stages[1].Thermal`).
    pub fn validate(&self, field: &str) -> Result<()> {
        self.talus.validate(&format!("{field}.talus"))?;
        let rate = self.rate as f64;
        if !rate.is_finite() || rate <= 0.0 || rate > 1.0 {
            return Err(OrogenError::invalid(
                format!("{field}.rate"),
                format!("must be within (0, 1], got {}", self.rate),
            ));
        }
        check_range(
            &format!("{field}.tolerance"),
            self.tolerance as f64,
            0.0,
            f64::MAX,
        )
    }
}

/// The thermal process over one neighbourhood: talus tangents and buffers kept between
/// steps. A step is one relaxation sweep (it has no time step: `rate` sets how far it goes).
pub struct Thermal<N: Neighbourhood> {
    nb: N,
    params: Params,
    seed: u64,
    tan: Vec<f32>,
    buf: ThermalBuffers,
    steps: u64,
    /// Heights of a layered terrain, stepped as one material then laid back on the layers.
    scratch: Vec<f32>,
    /// With [`TalusAngle::Material`], the talus tangent of each material (layers top down,
    /// then bedrock), given to every node from its exposed material before each step.
    material_tan: Option<Vec<f32>>,
}

impl<N: Neighbourhood> Thermal<N> {
    /// Thermal erosion over `nb`, starting from `heights` (a noise talus is evaluated from
    /// them once); `seed` drives the noise talus. `field` prefixes error names.
    pub fn new(nb: N, params: Params, seed: u64, heights: &[f32], field: &str) -> Result<Self> {
        params.validate(field)?;
        let n = nb.len();
        if heights.len() != n {
            return Err(OrogenError::invalid(
                field,
                format!("{} heights for {n} nodes", heights.len()),
            ));
        }
        let mut tan = buffer(n, 0.0, "thermal")?;
        fill_talus_tangents(&params.talus, heights, &nb, seed, &mut tan);
        Ok(Thermal {
            buf: ThermalBuffers::with_len(n)?,
            nb,
            params,
            seed,
            tan,
            steps: 0,
            scratch: Vec::new(),
            material_tan: None,
        })
    }

    /// With [`TalusAngle::Material`]: the talus angle of each material of the terrain,
    /// degrees (layers top down, then bedrock; each checked in (0, 90) by the materials'
    /// own validation). Other talus kinds ignore it.
    pub fn set_material_talus(&mut self, talus_deg: &[f32]) {
        if self.params.talus == TalusAngle::Material && !talus_deg.is_empty() {
            let tan: Vec<f32> = talus_deg
                .iter()
                .map(|d| math::tan((*d as f64).to_radians()) as f32)
                .collect();
            // Without layers every node shows the bottom material.
            let bottom = tan[tan.len() - 1];
            self.tan.par_iter_mut().for_each(|t| *t = bottom);
            self.material_tan = Some(tan);
        }
    }

    /// One step over a terrain. Returns the largest excess over the talus found before
    /// the step, metres; at or below the tolerance nothing moved. On a layered terrain the
    /// lowered nodes lose their top layers and the raised ones gain loose sediment.
    pub fn step(&mut self, terrain: &mut TerrainMut) -> f32 {
        if terrain.layers.is_empty() {
            return self.step_heights(terrain.surface);
        }
        if let Some(mt) = &self.material_tan {
            let layers = &*terrain.layers;
            let last = mt.len() - 1;
            self.tan.par_iter_mut().enumerate().for_each(|(i, t)| {
                let m = (0..layers.len())
                    .position(|k| layers.thickness(k)[i] > 0.0)
                    .unwrap_or(layers.len());
                *t = mt[m.min(last)];
            });
        }
        let mut h = std::mem::take(&mut self.scratch);
        h.clear();
        h.extend_from_slice(terrain.surface);
        let excess = self.step_heights(&mut h);
        terrain.set_surface(&h);
        self.scratch = h;
        excess
    }

    /// One step over the heights of a one-material terrain (metres).
    pub fn step_heights(&mut self, heights: &mut [f32]) -> f32 {
        // A height-dependent talus follows the heights; the first step uses the tangents
        // computed at the start.
        if self.steps > 0 {
            if let TalusAngle::Height(_) = self.params.talus {
                fill_talus_tangents(
                    &self.params.talus,
                    heights,
                    &self.nb,
                    self.seed,
                    &mut self.tan,
                );
            }
        }
        self.steps += 1;
        let (rate, tol) = (self.params.rate, self.params.tolerance);
        // Non-square cells take the generic walk, which uses each link's true length.
        match self.nb.as_raster().filter(|r| r.grid().is_square()) {
            Some(r) => {
                let g = r.grid();
                thermal_step(
                    heights,
                    g.width,
                    g.cell_size,
                    &self.tan,
                    rate,
                    tol,
                    &mut self.buf,
                )
            }
            None => thermal_step_generic(&self.nb, heights, &self.tan, rate, tol, &mut self.buf),
        }
    }

    /// The talus tangent of every node.
    pub fn tangents(&self) -> &[f32] {
        &self.tan
    }
}

/// The tangent of the talus angle of every cell, for heights `heights` on a grid of
/// `width` columns and `cell_size` metres; `seed` drives the noise talus.
pub fn talus_tangents(
    talus: &TalusAngle,
    heights: &[f32],
    width: usize,
    cell_size: f32,
    seed: u64,
) -> Vec<f32> {
    let grid = Grid::new(width, heights.len() / width.max(1), cell_size)
        .expect("talus_tangents: a valid grid");
    let mut out = vec![0.0f32; heights.len()];
    fill_talus_tangents(talus, heights, &RasterGrid::new(grid, &[]), seed, &mut out);
    out
}

/// The tangent of the talus angle of every node of `nb` into `out`; `seed` drives the
/// noise talus, evaluated at each node's position and height.
pub fn fill_talus_tangents<N: Neighbourhood>(
    talus: &TalusAngle,
    heights: &[f32],
    nb: &N,
    seed: u64,
    out: &mut [f32],
) {
    fill_talus_tangents_at(talus, heights, &|i| nb.position(i), seed, out)
}

/// The talus tangents of the cells of `window` of a whole map over `grid` (`heights` and
/// the result row-major over the window): the values [`fill_talus_tangents`] gives those
/// cells over the whole map, bit for bit (a tiled run's tile, issue #41).
pub fn talus_tangents_window(
    talus: &TalusAngle,
    grid: Grid,
    window: crate::field::Rect,
    heights: &[f32],
    seed: u64,
) -> Vec<f32> {
    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    let w = window.w.max(1);
    let mut out = vec![0.0; heights.len()];
    let position = |i: usize| {
        DVec2::new(
            (window.x0 + i % w) as f64 * dx,
            (window.y0 + i / w) as f64 * dy,
        )
    };
    fill_talus_tangents_at(talus, heights, &position, seed, &mut out);
    out
}

fn fill_talus_tangents_at(
    talus: &TalusAngle,
    heights: &[f32],
    position: &(dyn Fn(usize) -> DVec2 + Sync),
    seed: u64,
    out: &mut [f32],
) {
    match talus {
        TalusAngle::Constant(deg) => {
            let t = math::tan((*deg as f64).to_radians()) as f32;
            out.par_iter_mut().for_each(|v| *v = t);
        }
        TalusAngle::Material => {
            // The exposed material's talus replaces this every step (set_material_talus).
            let deg = crate::state::MaterialProps::default().talus_deg;
            let t = math::tan((deg as f64).to_radians()) as f32;
            out.par_iter_mut().for_each(|v| *v = t);
        }
        TalusAngle::Height(h) => {
            let below = math::tan((h.below_deg as f64).to_radians()) as f32;
            let above = math::tan((h.above_deg as f64).to_radians()) as f32;
            out.par_iter_mut()
                .zip(heights.par_iter())
                .for_each(|(t, &z)| *t = if z < h.height { below } else { above });
        }
        TalusAngle::Noise(n) => {
            // Cordonnier 2016 §7: talus from 3D Perlin noise with a high persistence.
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(0x0074_616c_7573); // "talus"
            let octaves: Vec<(noise::Perlin, [f64; 3])> = (0..n.octaves)
                .map(|_| {
                    let s: u32 = rng.random();
                    let off = [
                        rng.random_range(-4096.0..4096.0),
                        rng.random_range(-4096.0..4096.0),
                        rng.random_range(-4096.0..4096.0),
                    ];
                    (noise::Perlin::new(s), off)
                })
                .collect();
            let p = n.persistence as f64;
            let norm: f64 = (0..n.octaves)
                .map(|i| p.powi(i as i32))
                .sum::<f64>()
                .max(1e-12);
            let (fxy, fz) = (
                1.0 / n.wavelength as f64,
                1.0 / n.vertical_wavelength as f64,
            );
            let (lo, hi) = (
                (n.min_deg as f64).to_radians(),
                (n.max_deg as f64).to_radians(),
            );
            out.par_iter_mut()
                .with_min_len(1024)
                .zip(heights.par_iter())
                .enumerate()
                .for_each(|(i, (t, &z))| {
                    use noise::NoiseFn;
                    let pos = position(i);
                    let (px, py, pz) = (pos.x, pos.y, z as f64);
                    let mut sum = 0.0;
                    let mut amp = 1.0;
                    let mut mul = 1.0;
                    for (perlin, off) in &octaves {
                        let q = [
                            safe_coord(px * fxy * mul + off[0]),
                            safe_coord(py * fxy * mul + off[1]),
                            safe_coord(pz * fz * mul + off[2]),
                        ];
                        sum += amp * perlin.get(q).clamp(-1.0, 1.0);
                        amp *= p;
                        mul *= 2.0;
                    }
                    let u = (0.5 + 0.5 * sum / norm).clamp(0.0, 1.0);
                    *t = math::tan(lo + (hi - lo) * u) as f32;
                });
        }
    }
}

/// A noise coordinate the `noise` crate accepts: it panics on NaN and on values past the
/// isize range (a NaN or huge height from an imported map), so those are clamped.
#[inline]
fn safe_coord(c: f64) -> f64 {
    if c.is_finite() {
        c.clamp(-1.0e12, 1.0e12)
    } else {
        0.0
    }
}

/// Neighbour offsets `(dx, dy)` in the fixed order every pass uses, and whether diagonal.
const NEIGHBOURS: [(isize, isize, bool); 8] = [
    (-1, -1, true),
    (0, -1, false),
    (1, -1, true),
    (-1, 0, false),
    (1, 0, false),
    (-1, 1, true),
    (0, 1, false),
    (1, 1, true),
];

/// Scratch buffers reused across steps (one value per cell each).
#[derive(Default)]
pub struct ThermalBuffers {
    /// Sender factor: outflow to neighbour j is `k·e_j·s_j`.
    k: Vec<f32>,
    /// Receiver scale in (0, 1] limiting a cell's total inflow.
    s: Vec<f32>,
    /// The next heights.
    next: Vec<f32>,
}

impl ThermalBuffers {
    /// Buffers for `n` cells, or an error (naming `size`) when memory runs out.
    pub fn with_len(n: usize) -> Result<ThermalBuffers> {
        Ok(ThermalBuffers {
            k: buffer(n, 0.0, "thermal")?,
            s: buffer(n, 0.0, "thermal")?,
            next: buffer(n, 0.0, "thermal")?,
        })
    }
}

/// Calls `f(j, dist_index)` for each in-grid neighbour `j` of `(x, y)`, in the fixed order
/// of [`NEIGHBOURS`]; `dist_index` is 0 for orthogonal and 1 for diagonal neighbours.
/// `offsets` are the row-major index offsets of [`NEIGHBOURS`] (see [`offsets`]).
#[inline(always)]
fn for_neighbours(
    x: usize,
    y: usize,
    w: usize,
    h: usize,
    offsets: &[isize; 8],
    mut f: impl FnMut(usize, usize),
) {
    if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
        // Interior: every neighbour exists.
        let i = (y * w + x) as isize;
        for (off, &(_, _, diag)) in offsets.iter().zip(&NEIGHBOURS) {
            f((i + off) as usize, diag as usize);
        }
        return;
    }
    for &(dx, dy, diag) in &NEIGHBOURS {
        let (nx, ny) = (x as isize + dx, y as isize + dy);
        if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
            continue;
        }
        f(ny as usize * w + nx as usize, diag as usize);
    }
}

/// Row-major index offsets of [`NEIGHBOURS`] on a grid `w` cells wide.
fn offsets(w: usize) -> [isize; 8] {
    NEIGHBOURS.map(|(dx, dy, _)| dy * w as isize + dx)
}

/// Excess of cell `i` (height `hi`, talus drop `drop` to the neighbour) over a neighbour of
/// height `hj`, metres. Every pass computes it by this one expression, so sender and
/// receiver agree to the bit and mass is conserved.
#[inline(always)]
fn excess(hi: f32, hj: f32, drop: f32) -> f32 {
    hi - hj - drop
}

/// One thermal step over `heights` (row-major, `width` columns, `cell_size` metres apart),
/// with per-cell talus tangents `tan_talus`. Returns the largest excess over the talus
/// found before the step, metres; when it is ≤ `tolerance` nothing is moved.
///
/// Musgrave 1989 / Olsen 2004: each cell sends S = rate·d_max/2 to its lower-than-talus
/// neighbours, in proportion to their excesses; receivers gather in fixed order.
pub fn thermal_step(
    heights: &mut [f32],
    width: usize,
    cell_size: f32,
    tan_talus: &[f32],
    rate: f32,
    tolerance: f32,
    buf: &mut ThermalBuffers,
) -> f32 {
    let n = heights.len();
    assert!(width > 0 && n.is_multiple_of(width) && tan_talus.len() == n);
    let h_rows = n / width;
    let dist = [cell_size, cell_size * std::f32::consts::SQRT_2];
    buf.next.resize(n, 0.0);
    let hs: &[f32] = heights;
    let w = width;
    let offs = offsets(w);
    let g = RowGeometry {
        w,
        h: h_rows,
        offs: &offs,
        dist,
        rate,
    };

    // Rows go in bands of `BAND_ROWS`, each band on its own: the sender factors of its
    // rows and two more on each side, the receiver scales of its rows and one more on each
    // side, into scratch of its own (which stays in cache), then its rows' new heights.
    // A row's factors do not depend on the band that computes them, so the bytes are those
    // of three passes over the whole grid.
    let max_excess = buf
        .next
        .par_chunks_mut(BAND_ROWS * w)
        .enumerate()
        .map_init(BandScratch::default, |scr, (b, next)| {
            let y0 = b * BAND_ROWS;
            let y1 = y0 + next.len() / w;
            let (ky0, ky1) = (y0.saturating_sub(2), (y1 + 2).min(h_rows));
            let (sy0, sy1) = (y0.saturating_sub(1), (y1 + 1).min(h_rows));
            let BandScratch { k, s, d } = scr;
            k.resize((ky1 - ky0) * w, 0.0);
            s.resize((sy1 - sy0) * w, 0.0);
            d.resize(w, 0.0);
            // Pass 1: sender factors k_i = rate·d_max / (2·Σ e_j) from the old heights,
            // and the largest excess (every row's d_max is the same in any band).
            let mut band_max = 0.0f32;
            for (y, krow) in (ky0..ky1).zip(k.chunks_exact_mut(w)) {
                g.senders_row(y, hs, tan_talus, krow, d);
                band_max = band_max.max(max_of(d));
            }
            // Pass 2: receiver scales, so a cell gains at most rate·e_max/2.
            let k = Band { v: k, y0: ky0 };
            for (y, srow) in (sy0..sy1).zip(s.chunks_exact_mut(w)) {
                g.receivers_row(y, hs, tan_talus, k, srow);
            }
            // Pass 3: every cell loses what it sends and gains what its neighbours send
            // it. A flow is k_sender·e·s_receiver, the same bits on both sides, so mass is
            // conserved.
            let s = Band { v: s, y0: sy0 };
            for (y, nrow) in (y0..y1).zip(next.chunks_exact_mut(w)) {
                g.settle_row(y, hs, tan_talus, k, s, nrow);
            }
            band_max
        })
        .reduce(|| 0.0f32, f32::max);
    // Nothing moves when every excess is within the tolerance.
    if max_excess <= tolerance {
        return max_excess;
    }
    heights
        .par_chunks_mut(1 << 16)
        .zip(buf.next.par_chunks(1 << 16))
        .for_each(|(h, n)| h.copy_from_slice(n));
    max_excess
}

/// Rows per band of [`thermal_step`]: its scratch (36 rows of sender factors and 34 of
/// receiver scales) stays in the second-level cache up to about 2,000 columns.
const BAND_ROWS: usize = 32;

/// A band's scratch rows: sender factors, receiver scales, one row of d_max.
#[derive(Default)]
struct BandScratch {
    k: Vec<f32>,
    s: Vec<f32>,
    d: Vec<f32>,
}

/// Whole rows `y0..` of a per-cell value held by a band: cell `j` of the grid is `v[j −
/// y0·w]`.
#[derive(Clone, Copy)]
struct Band<'a> {
    v: &'a [f32],
    y0: usize,
}

impl<'a> Band<'a> {
    #[inline(always)]
    fn at(self, j: usize, w: usize) -> f32 {
        self.v[j - self.y0 * w]
    }

    /// Rows `y − 1`, `y`, `y + 1`.
    #[inline(always)]
    fn rows3(self, y: usize, w: usize) -> [&'a [f32]; 3] {
        rows3(self.v, y - self.y0, w)
    }
}

/// What the passes of [`thermal_step`] share: the grid's shape and the constants.
struct RowGeometry<'a> {
    w: usize,
    h: usize,
    offs: &'a [isize; 8],
    dist: [f32; 2],
    rate: f32,
}

impl RowGeometry<'_> {
    /// Whether row `y` has an interior (columns 1..w − 1 with all eight neighbours).
    fn interior(&self, y: usize) -> bool {
        y > 0 && y + 1 < self.h && self.w > 2
    }

    /// Pass 1 over row `y`: sender factors into `krow`, each cell's d_max into `drow`.
    fn senders_row(&self, y: usize, hs: &[f32], ts: &[f32], krow: &mut [f32], drow: &mut [f32]) {
        let (w, dist, rate) = (self.w, self.dist, self.rate);
        let sender = |x: usize| {
            let i = y * w + x;
            let (hi, t) = (hs[i], ts[i]);
            let drops = [t * dist[0], t * dist[1]];
            let (mut dmax, mut sum) = (0.0f32, 0.0f32);
            for_neighbours(x, y, w, self.h, self.offs, |j, d| {
                let e = excess(hi, hs[j], drops[d]).max(0.0);
                dmax = dmax.max(e);
                sum += e;
            });
            (sender_factor(rate, dmax, sum), dmax)
        };
        if self.interior(y) {
            senders_interior(y, w, hs, ts, dist, rate, krow, drow);
            for x in [0, w - 1] {
                (krow[x], drow[x]) = sender(x);
            }
        } else {
            for x in 0..w {
                (krow[x], drow[x]) = sender(x);
            }
        }
    }

    /// Pass 2 over row `y`: receiver scales into `srow`, from the sender factors `k`.
    fn receivers_row(&self, y: usize, hs: &[f32], ts: &[f32], k: Band, srow: &mut [f32]) {
        let (w, dist, rate) = (self.w, self.dist, self.rate);
        let receiver = |x: usize| {
            let j = y * w + x;
            let hj = hs[j];
            let (mut want, mut emax) = (0.0f32, 0.0f32);
            for_neighbours(x, y, w, self.h, self.offs, |i, d| {
                let e = excess(hs[i], hj, ts[i] * dist[d]).max(0.0);
                want += k.at(i, w) * e;
                emax = emax.max(e);
            });
            receiver_scale(rate, want, emax)
        };
        if self.interior(y) {
            receivers_interior(y, w, hs, ts, k.rows3(y, w), dist, rate, srow);
            for x in [0, w - 1] {
                srow[x] = receiver(x);
            }
        } else {
            for (x, s) in srow.iter_mut().enumerate() {
                *s = receiver(x);
            }
        }
    }

    /// Pass 3 over row `y`: the new heights into `nrow`.
    #[allow(clippy::too_many_arguments)]
    fn settle_row(&self, y: usize, hs: &[f32], ts: &[f32], k: Band, s: Band, nrow: &mut [f32]) {
        let (w, dist) = (self.w, self.dist);
        let settle = |x: usize| {
            let c = y * w + x;
            let (hc, kc, sc, tc) = (hs[c], k.at(c, w), s.at(c, w), ts[c]);
            let (mut gain, mut loss) = (0.0f64, 0.0f64);
            for_neighbours(x, y, w, self.h, self.offs, |j, d| {
                let hj = hs[j];
                let e_out = excess(hc, hj, tc * dist[d]).max(0.0);
                loss += (kc * e_out * s.at(j, w)) as f64;
                let e_in = excess(hj, hc, ts[j] * dist[d]).max(0.0);
                gain += (k.at(j, w) * e_in * sc) as f64;
            });
            (hc as f64 + (gain - loss)) as f32
        };
        if self.interior(y) {
            settle_interior(y, w, hs, ts, k.rows3(y, w), s.rows3(y, w), dist, nrow);
            for x in [0, w - 1] {
                nrow[x] = settle(x);
            }
        } else {
            for (x, out) in nrow.iter_mut().enumerate() {
                *out = settle(x);
            }
        }
    }
}

/// k = rate·d_max / (2·Σ e), or 0 where nothing is over the talus.
#[inline(always)]
fn sender_factor(rate: f32, dmax: f32, sum: f32) -> f32 {
    if sum > 0.0 {
        rate * dmax / (2.0 * sum)
    } else {
        0.0
    }
}

/// The receiver scale: at most rate·e_max/2 of inflow `want`.
#[inline(always)]
fn receiver_scale(rate: f32, want: f32, emax: f32) -> f32 {
    let cap = 0.5 * rate * emax;
    if want > cap {
        cap / want
    } else {
        1.0
    }
}

/// The largest value of `v` (0 when empty or all ≤ 0), over eight lanes so it vectorises
/// (a max does not depend on the order it is taken in).
fn max_of(v: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for (l, &x) in lanes.iter_mut().zip(c) {
            *l = l.max(x);
        }
    }
    let tail = chunks.remainder().iter().fold(0.0f32, |m, &x| m.max(x));
    lanes.iter().fold(tail, |m, &x| m.max(x))
}

/// Pass 1 of [`thermal_step`] for the columns `1..w − 1` of an interior row `y`: the
/// same expressions in the same order as the general path, over row slices.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn senders_interior(
    y: usize,
    w: usize,
    hs: &[f32],
    ts: &[f32],
    dist: [f32; 2],
    rate: f32,
    krow: &mut [f32],
    drow: &mut [f32],
) {
    let [hu, hc, hd] = rows3(hs, y, w);
    let tc = &ts[y * w..(y + 1) * w];
    let (krow, drow) = (&mut krow[..w], &mut drow[..w]);
    for x in 1..w - 1 {
        let (hi, t) = (hc[x], tc[x]);
        let drops = [t * dist[0], t * dist[1]];
        let (mut dmax, mut sum) = (0.0f32, 0.0f32);
        for (hj, d) in ring8(hu, hc, hd, x).into_iter().zip(DIAGONAL) {
            let e = excess(hi, hj, drops[d]).max(0.0);
            dmax = dmax.max(e);
            sum += e;
        }
        krow[x] = sender_factor(rate, dmax, sum);
        drow[x] = dmax;
    }
}

/// Pass 2 of [`thermal_step`] for the columns `1..w − 1` of an interior row `y`.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn receivers_interior(
    y: usize,
    w: usize,
    hs: &[f32],
    ts: &[f32],
    k3: [&[f32]; 3],
    dist: [f32; 2],
    rate: f32,
    srow: &mut [f32],
) {
    let [hu, hc, hd] = rows3(hs, y, w);
    let [tu, tc, td] = rows3(ts, y, w);
    let [ku, kc, kd] = k3.map(|r| &r[..w]);
    let srow = &mut srow[..w];
    for x in 1..w - 1 {
        let hj = hc[x];
        let (mut want, mut emax) = (0.0f32, 0.0f32);
        let (hr, tr, kr) = (
            ring8(hu, hc, hd, x),
            ring8(tu, tc, td, x),
            ring8(ku, kc, kd, x),
        );
        for n in 0..8 {
            let (hi, ti, ki, d) = (hr[n], tr[n], kr[n], DIAGONAL[n]);
            let e = excess(hi, hj, ti * dist[d]).max(0.0);
            want += ki * e;
            emax = emax.max(e);
        }
        srow[x] = receiver_scale(rate, want, emax);
    }
}

/// Pass 3 of [`thermal_step`] for the columns `1..w − 1` of an interior row `y`.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn settle_interior(
    y: usize,
    w: usize,
    hs: &[f32],
    ts: &[f32],
    k3: [&[f32]; 3],
    s3: [&[f32]; 3],
    dist: [f32; 2],
    nrow: &mut [f32],
) {
    let [hu, hc, hd] = rows3(hs, y, w);
    let [tu, tc, td] = rows3(ts, y, w);
    let [ku, kc, kd] = k3.map(|r| &r[..w]);
    let [su, sc, sd] = s3.map(|r| &r[..w]);
    let nrow = &mut nrow[..w];
    for x in 1..w - 1 {
        let (h0, k0, s0, t0) = (hc[x], kc[x], sc[x], tc[x]);
        let (mut gain, mut loss) = (0.0f64, 0.0f64);
        let (hr, tr) = (ring8(hu, hc, hd, x), ring8(tu, tc, td, x));
        let (kr, sr) = (ring8(ku, kc, kd, x), ring8(su, sc, sd, x));
        for n in 0..8 {
            let (hj, tj, kj, sj, d) = (hr[n], tr[n], kr[n], sr[n], DIAGONAL[n]);
            let e_out = excess(h0, hj, t0 * dist[d]).max(0.0);
            loss += (k0 * e_out * sj) as f64;
            let e_in = excess(hj, h0, tj * dist[d]).max(0.0);
            gain += (kj * e_in * s0) as f64;
        }
        nrow[x] = (h0 as f64 + (gain - loss)) as f32;
    }
}

/// Largest excess of any cell over any neighbour beyond its talus, metres (0 when every
/// slope is stable). Per-cell talus tangents as in [`thermal_step`].
pub fn max_talus_excess(heights: &[f32], width: usize, cell_size: f32, tan_talus: &[f32]) -> f32 {
    let h_rows = heights.len() / width;
    let dist = [cell_size, cell_size * std::f32::consts::SQRT_2];
    let offs = offsets(width);
    (0..h_rows)
        .into_par_iter()
        .map(|y| {
            let mut m = 0.0f32;
            for x in 0..width {
                let i = y * width + x;
                for_neighbours(x, y, width, h_rows, &offs, |j, d| {
                    m = m.max(excess(heights[i], heights[j], tan_talus[i] * dist[d]));
                });
            }
            m
        })
        .reduce(|| 0.0f32, f32::max)
}

/// [`thermal_step`] over any neighbourhood (same rule, same order of sums: on a raster it
/// gives the same bits), walking each node's neighbours in the neighbourhood's order with
/// their own link lengths.
pub fn thermal_step_generic<N: Neighbourhood>(
    nb: &N,
    heights: &mut [f32],
    tan_talus: &[f32],
    rate: f32,
    tolerance: f32,
    buf: &mut ThermalBuffers,
) -> f32 {
    let n = heights.len();
    assert!(nb.len() == n && tan_talus.len() == n);
    const CHUNK: usize = 4096;
    buf.k.resize(n, 0.0);
    buf.s.resize(n, 0.0);
    buf.next.resize(n, 0.0);
    let hs: &[f32] = heights;
    // Pass 1: sender factors.
    let max_excess = buf
        .k
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(c, ks)| {
            let mut m = 0.0f32;
            for (o, k) in ks.iter_mut().enumerate() {
                let i = c * CHUNK + o;
                let (hi, t) = (hs[i], tan_talus[i]);
                let (mut dmax, mut sum) = (0.0f32, 0.0f32);
                nb.for_each_neighbour(i, |j, d| {
                    let e = excess(hi, hs[j as usize], t * d).max(0.0);
                    dmax = dmax.max(e);
                    sum += e;
                });
                *k = if sum > 0.0 {
                    rate * dmax / (2.0 * sum)
                } else {
                    0.0
                };
                m = m.max(dmax);
            }
            m
        })
        .reduce(|| 0.0f32, f32::max);
    if max_excess <= tolerance {
        return max_excess;
    }
    // Pass 2: receiver scales.
    let k: &[f32] = &buf.k;
    buf.s.par_chunks_mut(CHUNK).enumerate().for_each(|(c, ss)| {
        for (o, s) in ss.iter_mut().enumerate() {
            let j = c * CHUNK + o;
            let hj = hs[j];
            let (mut want, mut emax) = (0.0f32, 0.0f32);
            nb.for_each_neighbour(j, |i, d| {
                let i = i as usize;
                let e = excess(hs[i], hj, tan_talus[i] * d).max(0.0);
                want += k[i] * e;
                emax = emax.max(e);
            });
            let cap = 0.5 * rate * emax;
            *s = if want > cap { cap / want } else { 1.0 };
        }
    });
    // Pass 3: gather.
    let s: &[f32] = &buf.s;
    buf.next
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, outs)| {
            for (o, out) in outs.iter_mut().enumerate() {
                let ci = c * CHUNK + o;
                let (hc, kc, sc, tc) = (hs[ci], k[ci], s[ci], tan_talus[ci]);
                let (mut gain, mut loss) = (0.0f64, 0.0f64);
                nb.for_each_neighbour(ci, |j, d| {
                    let j = j as usize;
                    let hj = hs[j];
                    let e_out = excess(hc, hj, tc * d).max(0.0);
                    loss += (kc * e_out * s[j]) as f64;
                    let e_in = excess(hj, hc, tan_talus[j] * d).max(0.0);
                    gain += (k[j] * e_in * sc) as f64;
                });
                *out = (hc as f64 + (gain - loss)) as f32;
            }
        });
    heights
        .par_chunks_mut(1 << 16)
        .zip(buf.next.par_chunks(1 << 16))
        .for_each(|(h, n)| h.copy_from_slice(n));
    max_excess
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random rough terrain: white noise plus a cone, metres.
    fn rough(w: usize, h: usize, seed: u64, relief: f32) -> Vec<f32> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                let r = ((x - w as f32 / 2.0).powi(2) + (y - h as f32 / 2.0).powi(2)).sqrt();
                relief * (1.0 - r / w as f32).max(0.0) + rng.random_range(0.0..relief * 0.5)
            })
            .collect()
    }

    fn sum64(v: &[f32]) -> f64 {
        v.iter().map(|&x| x as f64).sum()
    }

    /// Brute-force check over every ordered 8-neighbour pair: the drop from a cell to a
    /// neighbour never exceeds tan(talus of the higher cell)·distance + tol.
    fn worst_violation(h: &[f32], w: usize, cs: f32, tan: &[f32]) -> f64 {
        let rows = h.len() / w;
        let mut worst = f64::MIN;
        for y in 0..rows {
            for x in 0..w {
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                        if (dx, dy) == (0, 0)
                            || nx < 0
                            || ny < 0
                            || nx >= w as i64
                            || ny >= rows as i64
                        {
                            continue;
                        }
                        let (i, j) = (y * w + x, ny as usize * w + nx as usize);
                        let l = cs as f64 * ((dx * dx + dy * dy) as f64).sqrt();
                        let v = (h[i] as f64 - h[j] as f64) - tan[i] as f64 * l;
                        worst = worst.max(v);
                    }
                }
            }
        }
        worst
    }

    /// Runs steps until converged (or `max` steps); returns the step count.
    fn relax(h: &mut [f32], w: usize, cs: f32, talus: &TalusAngle, tol: f32, max: u32) -> u32 {
        let mut buf = ThermalBuffers::default();
        let mut tan = talus_tangents(talus, h, w, cs, 0);
        for it in 0..max {
            if let TalusAngle::Height(_) = talus {
                tan = talus_tangents(talus, h, w, cs, 0);
            }
            if thermal_step(h, w, cs, &tan, 0.5, tol, &mut buf) <= tol {
                return it;
            }
        }
        max
    }

    #[test]
    fn converged_slopes_rest_at_their_talus_and_mass_is_kept() {
        let (w, h, cs) = (48, 40, 10.0);
        let mut z = rough(w, h, 1, 80.0);
        let before = sum64(&z);
        let talus = TalusAngle::Constant(30.0);
        let tol = 0.01;
        let steps = relax(&mut z, w, cs, &talus, tol, 20_000);
        assert!(steps < 20_000, "did not converge");
        let tan = talus_tangents(&talus, &z, w, cs, 0);
        let worst = worst_violation(&z, w, cs, &tan);
        assert!(worst <= tol as f64 + 1e-4, "worst excess {worst}");
        let after = sum64(&z);
        assert!(
            ((after - before) / before).abs() < 1e-5,
            "{before} -> {after}"
        );
        // The relief went down to the talus: the start had slopes far above it.
        assert!(steps > 10);
    }

    #[test]
    fn a_stable_slope_does_not_move() {
        // A plane at 20° under a 30° talus: every excess is negative.
        let (w, h, cs) = (20, 12, 5.0);
        let slope = math::tan(20f32.to_radians());
        let mut z: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 * cs * slope).collect();
        let orig = z.clone();
        let tan = talus_tangents(&TalusAngle::Constant(30.0), &z, w, cs, 0);
        let mut buf = ThermalBuffers::default();
        let e = thermal_step(&mut z, w, cs, &tan, 0.5, 0.0, &mut buf);
        assert!(e <= 0.0);
        assert_eq!(z, orig);
    }

    #[test]
    fn a_spike_spreads_without_overshoot() {
        // One tall column on flat ground: it never drops below its neighbours and no
        // neighbour rises above it in one step.
        let (w, cs) = (9, 1.0);
        let mut z = vec![0.0f32; w * w];
        z[4 * w + 4] = 100.0;
        let tan = talus_tangents(&TalusAngle::Constant(30.0), &z, w, cs, 0);
        let mut buf = ThermalBuffers::default();
        for _ in 0..50 {
            thermal_step(&mut z, w, cs, &tan, 1.0, 0.0, &mut buf);
            let c = z[4 * w + 4];
            for (i, &v) in z.iter().enumerate() {
                assert!(v <= c + 1e-4, "cell {i} {v} above the centre {c}");
            }
        }
        assert!((sum64(&z) - 100.0).abs() < 1e-4);
    }

    #[test]
    fn a_pit_fills_without_overshoot() {
        // A deep hole among 8 higher cells: all send to it, the cap keeps it from
        // rising above them.
        let (w, cs) = (3, 1.0);
        let mut z = vec![50.0f32; 9];
        z[4] = 0.0;
        let tan = talus_tangents(&TalusAngle::Constant(10.0), &z, w, cs, 0);
        let mut buf = ThermalBuffers::default();
        let mut prev = z[4];
        for _ in 0..40 {
            thermal_step(&mut z, w, cs, &tan, 1.0, 0.0, &mut buf);
            let ring_min = (0..9)
                .filter(|&i| i != 4)
                .map(|i| z[i])
                .fold(f32::MAX, f32::min);
            assert!(
                z[4] <= ring_min + 1e-4,
                "pit {} above ring {}",
                z[4],
                ring_min
            );
            assert!(z[4] >= prev - 1e-4, "pit went down");
            prev = z[4];
        }
        assert!((sum64(&z) - 400.0).abs() < 1e-3);
    }

    #[test]
    fn same_bytes_with_one_and_four_threads() {
        let (w, h, cs) = (67, 45, 20.0);
        let z0 = rough(w, h, 2, 200.0);
        let talus = TalusAngle::Noise(NoiseTalus::default());
        let run = |n: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
                .install(|| {
                    let mut z = z0.clone();
                    let tan = talus_tangents(&talus, &z, w, cs, 5);
                    let mut buf = ThermalBuffers::default();
                    for _ in 0..30 {
                        thermal_step(&mut z, w, cs, &tan, 0.5, 0.0, &mut buf);
                    }
                    z.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                })
        };
        assert_eq!(run(1), run(4));
    }

    #[test]
    fn height_talus_is_respected_per_cell() {
        let (w, h, cs) = (40, 40, 10.0);
        let mut z = rough(w, h, 3, 150.0);
        let before = sum64(&z);
        let talus = TalusAngle::Height(HeightTalus {
            below_deg: 15.0,
            above_deg: 55.0,
            height: 60.0,
        });
        let tol = 0.01;
        assert!(relax(&mut z, w, cs, &talus, tol, 50_000) < 50_000);
        // Independent per-cell angles from the final heights.
        let tan: Vec<f32> = z
            .iter()
            .map(|&v| math::tan(if v < 60.0 { 15f32 } else { 55f32 }.to_radians()))
            .collect();
        assert!(worst_violation(&z, w, cs, &tan) <= tol as f64 + 1e-4);
        assert!(((sum64(&z) - before) / before).abs() < 1e-5);
        // Both regimes occur, and somewhere above the height a slope is steeper than the
        // gentle angle allows (the cliffs the steep angle permits).
        let gentle = math::tan(15f32.to_radians()) as f64;
        let mut steep_found = false;
        for y in 0..h {
            for x in 0..w - 1 {
                let (a, b) = (z[y * w + x], z[y * w + x + 1]);
                if a.max(b) >= 60.0 && ((a - b).abs() as f64) > gentle * cs as f64 * 1.5 {
                    steep_found = true;
                }
            }
        }
        assert!(steep_found);
    }

    #[test]
    fn noise_talus_is_respected_per_cell_and_spans_its_range() {
        let (w, h, cs) = (48, 48, 25.0);
        let mut z = rough(w, h, 4, 400.0);
        let talus = TalusAngle::Noise(NoiseTalus {
            wavelength: 300.0,
            ..Default::default()
        });
        let tan = talus_tangents(&talus, &z, w, cs, 9);
        // Angles within [6°, 54°] and varied.
        let deg: Vec<f64> = tan
            .iter()
            .map(|t| math::atan(*t as f64).to_degrees())
            .collect();
        let lo = deg.iter().cloned().fold(f64::MAX, f64::min);
        let hi = deg.iter().cloned().fold(f64::MIN, f64::max);
        assert!(
            lo >= 6.0 - 1e-3 && hi <= 54.0 + 1e-3 && hi - lo > 15.0,
            "{lo}..{hi}"
        );
        let mut buf = ThermalBuffers::default();
        let tol = 0.01;
        let mut converged = false;
        for _ in 0..50_000 {
            if thermal_step(&mut z, w, cs, &tan, 0.5, tol, &mut buf) <= tol {
                converged = true;
                break;
            }
        }
        assert!(converged);
        assert!(worst_violation(&z, w, cs, &tan) <= tol as f64 + 1e-4);
    }

    #[test]
    fn noise_talus_survives_non_finite_and_huge_heights() {
        let z = vec![
            f32::NAN,
            f32::INFINITY,
            -f32::INFINITY,
            3.0e38,
            -3.0e38,
            0.0,
        ];
        let tan = talus_tangents(&TalusAngle::Noise(NoiseTalus::default()), &z, 3, 1.0e30, 1);
        let (lo, hi) = (math::tan(6f64.to_radians()), math::tan(54f64.to_radians()));
        for t in tan {
            assert!((t as f64) >= lo - 1e-6 && (t as f64) <= hi + 1e-6, "{t}");
        }
    }

    /// `Material` talus: a 45° step (100 m over 100 m cells) stands where hard rock (60°) is
    /// exposed on top, and the same step slumps to the soft bottom material's 20° where the
    /// hard layer has been stripped; mass is kept either way.
    #[test]
    fn material_talus_follows_the_exposed_material() {
        use crate::state::Layers;
        let (w, h, cs) = (8usize, 3usize, 100.0f32);
        let grid = Grid::new(w, h, cs).unwrap();
        let step: Vec<f32> = (0..w * h)
            .map(|i| if i % w < w / 2 { 100.0 } else { 0.0 })
            .collect();
        let params = Params {
            talus: TalusAngle::Material,
            ..Params::default()
        };
        let run = |hard_m: f32| -> (Vec<f32>, f32) {
            let mut surface = step.clone();
            // Hard rock `hard_m` thick on the high half (none where it was stripped).
            let hard: Vec<f32> = step
                .iter()
                .map(|&z| if z > 0.0 { hard_m } else { 0.0 })
                .collect();
            // Layer 0 is loose sediment (where thermal deposits go), as soft as the bottom.
            let layers = vec![("sand".into(), vec![0.0; w * h]), ("hard".into(), hard)];
            let mut layers = Layers::new(layers, w * h).unwrap();
            let mut t =
                Thermal::new(RasterGrid::new(grid, &[]), params.clone(), 0, &surface, "t").unwrap();
            t.set_material_talus(&[20.0, 60.0, 20.0]);
            let mut first = 0.0;
            for it in 0..400 {
                let e = t.step(&mut TerrainMut::new(&mut surface, &mut layers));
                if it == 0 {
                    first = e;
                }
            }
            (surface, first)
        };
        let (hard, excess) = run(150.0);
        assert!(
            excess <= 0.01,
            "a 45° step of 60° rock is stable, excess {excess}"
        );
        assert_eq!(hard, step, "nothing moves off the hard rock");
        let (soft, excess) = run(0.0);
        assert!(
            excess > 10.0,
            "the bare soft step exceeds its 20° talus by {excess} m"
        );
        assert!((sum64(&soft) - sum64(&step)).abs() < 1.0, "mass kept");
        let tan20 = math::tan(20f32.to_radians());
        let tans = vec![tan20; w * h];
        let worst = worst_violation(&soft, w, cs, &tans);
        assert!(
            worst < 1.0,
            "the soft slope relaxed to 20° (worst excess {worst} m)"
        );
        assert!(
            soft[w / 2 - 1] < 90.0 && soft[w / 2] > 10.0,
            "the step spread: {soft:?}"
        );
    }
}
