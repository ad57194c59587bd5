//! Wind erosion of a layered terrain: the wind picks material up on windward slopes and
//! drops it in the wind shadow and before obstacles; what it carries off the map is lost.
//!
//! Thesis (Prokop 2009) §4.3.3, the author's own algorithm. The map is cut into rasterised
//! lines parallel to the wind, all translates of one digital line, so every cell lies on
//! exactly one of them; together they form the thesis's row perpendicular to the wind,
//! advancing one cell along the wind's major axis at a time. Walking a line, each line
//! carries a wind height h_wind and carried material s (metres):
//!
//! * one cell on, h_wind drops by tan(fall angle)·step (step = cell_size, or √2·cell_size
//!   where the line steps diagonally); the first cell of a line sets h_wind to its height;
//! * a cell at or above h_wind is windward: it loses S_e = min(R·E·h_barrier, C − s), with
//!   h_barrier = max(0, min(h_next, h) − h_wind), R = 1 − wind_resistance of the exposed
//!   material, E the erosion coefficient and C the capacity, walking down the layers like
//!   water dissolving them (a layer gives at most its thickness; the unmet fraction of the
//!   request is asked of the next layer with that layer's R, so a wind-proof layer shields
//!   what lies under it); h_wind rises to the cell; then before a rise (h_next > h) it gets
//!   s·min(1, k_wind·(h_next − h)/windtalus), windtalus = step·tan(wind talus);
//! * a cell below h_wind lies in the wind shadow and gets s·k_shadow;
//! * what a line still carries when it leaves the map is blown off and reported.
//!
//! Lee slopes rest at the wind talus (the creep of Beneš & Roa 2004 that the thesis leaves
//! to a thermal pass): a deposit never lifts a cell more than step·tan(wind talus) above
//! the next cell (the rest stays in the air and falls further down the lee); where a cell
//! ends lower than the cell before it on its line by more than step·tan(wind talus),
//! carried material fills the gap first, and if the wind carries too little, loose
//! material (the layers above the first wind-proof one) slides from the cell before by half
//! the remaining excess (a steep face made before the step relaxes over a few steps).
//!
//! Lines never share a cell, so a step is deterministic whatever the thread count: bands of
//! lines run in parallel, each writing what every one of its cells loses and gains into its
//! own part of a line-ordered buffer (phase 1, reading only the state before the step), then
//! the changes are applied row by row (phase 2). Material is conserved exactly: each cell's
//! loss and gain are f32 values, the carried material and what is blown off are their sums
//! in f64.
//!
//! Speed: phase 1 keeps the state of a band's lines (wind height, carried material, new
//! height of the cell before, heights at this position and the next) in arrays of one lane
//! per line and advances the whole band one position at a time. The cell of line `l` at
//! position `t` is `l·stride + off[t]` (`off` precomputed per position), and the band's
//! buffer rows for `t` and `t − 1` are fixed-size arrays, so a cell costs no coordinate
//! arithmetic or bounds checks. The lines on the map at a position form a run; the lanes
//! of the runs at `t − 1`, `t` and `t + 1` (past their first cell, before their last) take
//! a path without checks, the few others (a line entering or leaving the map) the general
//! one. Both inline one per-cell function, specialised on first / last cell by const
//! generics, so the bytes do not depend on the path. Mins and maxes whose other side is
//! never NaN are plain compare-selects ([`min_nn`], [`pos`]). Phase 2 walks row chunks
//! with each cell's buffer index read from a table built once (12 bytes of buffers per
//! cell in all), takes the loss from the top layer and walks lower layers only for the
//! rest.

use rayon::prelude::*;

use super::layered_thermal::layer_chunks;
use crate::error::{check_finite, check_range, OrogenError, Result};
use crate::field::Grid;
use crate::state::{buffer, MaterialProps, TerrainMut};

/// Wind erosion parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Direction the wind blows towards, degrees (any finite angle): 0 = towards +x (east),
    /// 90 = towards +y (south, rows grow southwards), 180 = west, 270 = north. Default 0.
    pub direction_deg: f32,
    /// How fast the wind comes down behind a crest, degrees in [0, 45]: h_wind drops by
    /// tan(fall angle) per metre. Default 15.
    pub fall_angle_deg: f32,
    /// Erosion coefficient E: metres picked up per metre of barrier height on a fully
    /// susceptible material, dimensionless, ≥ 0. Default 0.05.
    pub erosion: f32,
    /// Steepest lee slope and the slope that sets windward deposition, degrees in (0, 90).
    /// Default 33 (dry sand).
    pub wind_talus_deg: f32,
    /// Capacity C: most material one line of wind carries, metres (≥ 0). Default 0.5.
    pub capacity: f32,
    /// Windward deposition k_wind: share of the carried material dropped before a rise of
    /// one wind talus, in [0, 1]. Default 0.5.
    pub windward_deposition: f32,
    /// Shadow deposition k_shadow: share of the carried material dropped on each cell in
    /// the wind shadow, in [0, 1]. Default 0.5.
    pub shadow_deposition: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            direction_deg: 0.0,
            fall_angle_deg: 15.0,
            erosion: 0.05,
            wind_talus_deg: 33.0,
            capacity: 0.5,
            windward_deposition: 0.5,
            shadow_deposition: 0.5,
        }
    }
}

impl Params {
    /// Checks ranges; `field` prefixes error names (e.g. `stages[2].Wind`); an empty
    /// `field` names the parameters alone (`fall_angle_deg`).
    pub fn validate(&self, field: &str) -> Result<()> {
        let name = |sub: &str| crate::error::sub_field(field, sub);
        check_finite(&name("direction_deg"), self.direction_deg as f64)?;
        check_range(
            &name("fall_angle_deg"),
            self.fall_angle_deg as f64,
            0.0,
            45.0,
        )?;
        check_range(&name("erosion"), self.erosion as f64, 0.0, f64::MAX)?;
        let t = self.wind_talus_deg as f64;
        if !t.is_finite() || t <= 0.0 || t >= 90.0 {
            return Err(OrogenError::invalid(
                name("wind_talus_deg"),
                format!(
                    "must be an angle strictly between 0 and 90 degrees, got {}",
                    self.wind_talus_deg
                ),
            ));
        }
        check_range(&name("capacity"), self.capacity as f64, 0.0, f64::MAX)?;
        check_range(
            &name("windward_deposition"),
            self.windward_deposition as f64,
            0.0,
            1.0,
        )?;
        check_range(
            &name("shadow_deposition"),
            self.shadow_deposition as f64,
            0.0,
            1.0,
        )
    }
}

pub use crate::state::validate_materials;

/// What one [`Wind::step`] did, metres summed over cells (× cell area for m³).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Material the wind picked up (and slid down lee slopes).
    pub eroded: f64,
    /// Material dropped on the map.
    pub deposited: f64,
    /// Material carried off the map: `eroded − deposited`.
    pub blown_off: f64,
}

/// Lines per band (a parallel task), a power of two.
const BAND: usize = 64;
/// Grid rows per task in the applying pass.
const ROWS_PER_TASK: usize = 16;

/// The lines of a wind direction over a grid.
#[derive(Clone, Debug)]
struct Lines {
    /// The line walks along x (else along y).
    major_is_x: bool,
    /// The line walks its major axis upwards.
    forward: bool,
    /// Cells along the major axis (positions per line).
    m: usize,
    /// Cells along the minor axis.
    minor: usize,
    /// Minor offset of the line at each position.
    f: Vec<i64>,
    /// Largest offset.
    fmax: i64,
    /// Number of lines.
    count: usize,
    /// Distance from the position before, metres (position 0: cell size).
    dist: Vec<f32>,
    /// Positions `t0..t1` of each line that lie on the map.
    range: Vec<(u32, u32)>,
    /// The cell of line `l` at position `t` is `l·stride + off[t]`.
    off: Vec<isize>,
    /// Cell index step from one line to the next.
    stride: isize,
}

impl Lines {
    fn new(grid: Grid, direction_deg: f32) -> Lines {
        let th = (direction_deg as f64).rem_euclid(360.0).to_radians();
        let (wx, wy) = (th.cos(), th.sin());
        let major_is_x = wx.abs() >= wy.abs();
        let (major, minor, along, across) = if major_is_x {
            (grid.width, grid.height, wx, wy)
        } else {
            (grid.height, grid.width, wy, wx)
        };
        let slope = across / along.abs();
        let f: Vec<i64> = (0..major)
            .map(|t| (t as f64 * slope).round() as i64)
            .collect();
        let fmax = f.iter().copied().max().unwrap_or(0);
        let fmin = f.iter().copied().min().unwrap_or(0);
        let cs = grid.cell_size;
        let dist = (0..major)
            .map(|t| {
                if t > 0 && f[t] != f[t - 1] {
                    cs * std::f32::consts::SQRT_2
                } else {
                    cs
                }
            })
            .collect();
        let mut lines = Lines {
            major_is_x,
            forward: along > 0.0,
            m: major,
            minor,
            count: minor + (fmax - fmin) as usize,
            f,
            fmax,
            dist,
            range: Vec::new(),
            off: Vec::new(),
            stride: if major_is_x { grid.width as isize } else { 1 },
        };
        lines.off = (0..major)
            .map(|t| {
                let b = lines.f[t] - lines.fmax;
                let a = if lines.forward { t } else { major - 1 - t } as i64;
                (if major_is_x {
                    b * grid.width as i64 + a
                } else {
                    a * grid.width as i64 + b
                }) as isize
            })
            .collect();
        // Each line's positions on the map form one run (its offset is monotonic).
        lines.range = (0..lines.count)
            .map(|l| {
                let on: Vec<usize> = (0..major)
                    .filter(|&t| lines.cell(l, t, grid.width).is_some())
                    .collect();
                match (on.first(), on.last()) {
                    (Some(&a), Some(&b)) => (a as u32, b as u32 + 1),
                    _ => (0, 0),
                }
            })
            .collect();
        lines
    }

    /// The grid cell of line `l` at position `t`, if on the map.
    #[inline(always)]
    fn cell(&self, l: usize, t: usize, width: usize) -> Option<usize> {
        let b = l as i64 + self.f[t] - self.fmax;
        if b < 0 || b >= self.minor as i64 {
            return None;
        }
        Some(self.cell_unchecked(l, t, width))
    }

    /// The grid cell of line `l` at position `t`, which is on the map (`t` in `range[l]`).
    #[inline(always)]
    fn cell_unchecked(&self, l: usize, t: usize, width: usize) -> usize {
        let b = (l as i64 + self.f[t] - self.fmax) as usize;
        let a = if self.forward { t } else { self.m - 1 - t };
        if self.major_is_x {
            b * width + a
        } else {
            a * width + b
        }
    }

    /// Index into the line-ordered buffer of line `l` at position `t`.
    #[inline(always)]
    fn slot(&self, l: usize, t: usize) -> usize {
        (l / BAND) * (BAND * self.m) + t * BAND + l % BAND
    }

    /// Indices into the line-ordered buffer of the cells of grid row `y`.
    fn row_slots(&self, y: usize, slots: &mut [usize]) {
        if self.major_is_x {
            // Position from x, line from y and the offset at that position.
            for (x, slot) in slots.iter_mut().enumerate() {
                let t = if self.forward { x } else { self.m - 1 - x };
                *slot = self.slot((y as i64 + self.fmax - self.f[t]) as usize, t);
            }
        } else {
            // One position for the row, consecutive lines along it.
            let t = if self.forward { y } else { self.m - 1 - y };
            let l0 = self.fmax - self.f[t];
            for (x, slot) in slots.iter_mut().enumerate() {
                *slot = self.slot((x as i64 + l0) as usize, t);
            }
        }
    }

    /// Lines `first + a .. first + b` of the `n` from `first` are on the map at position
    /// `t` (line `l` is on the map at `t` when `0 ≤ l + f[t] − fmax < minor`).
    #[inline(always)]
    fn on_map(&self, t: usize, first: usize, n: usize) -> (usize, usize) {
        let lo = self.fmax - self.f[t] - first as i64;
        let clamp = |v: i64| v.clamp(0, n as i64) as usize;
        (clamp(lo), clamp(lo + self.minor as i64))
    }

    fn bands(&self) -> usize {
        self.count.div_ceil(BAND)
    }
}

/// The wind process over a grid, with its line geometry and buffers kept between steps.
pub struct Wind {
    grid: Grid,
    params: Params,
    lines: Lines,
    /// What each cell loses and gains, `[eroded, deposited]`, in line order.
    change: Vec<[f32; 2]>,
    /// Where each grid cell's change is in `change`, in grid order.
    slots: Vec<u32>,
}

impl Wind {
    /// Wind erosion over `grid`.
    pub fn new(grid: Grid, params: Params) -> Result<Self> {
        params.validate("")?;
        grid.require_square("Wind")?;
        let grid = Grid::new(grid.width, grid.height, grid.cell_size)?;
        let lines = Lines::new(grid, params.direction_deg);
        let n = lines.bands() * BAND * lines.m;
        if u32::try_from(n).is_err() {
            return Err(OrogenError::invalid(
                "size",
                format!("cannot index wind buffers for {n} cells (too many)"),
            ));
        }
        let change = buffer(n, [0.0; 2], "wind")?;
        let mut slots = buffer(grid.len(), 0u32, "wind")?;
        let mut row = vec![0usize; grid.width];
        for (y, out) in slots.chunks_mut(grid.width).enumerate() {
            lines.row_slots(y, &mut row);
            for (o, &slot) in out.iter_mut().zip(&row) {
                *o = slot as u32;
            }
        }
        Ok(Wind {
            grid,
            params,
            lines,
            change,
            slots,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Bytes of buffers the process keeps, per cell.
    pub fn bytes_per_cell(&self) -> usize {
        (self.change.len() * std::mem::size_of::<[f32; 2]>()
            + self.slots.len() * std::mem::size_of::<u32>())
        .div_ceil(self.grid.len())
    }

    /// One step over `terrain`, with `materials` one per layer top down then bedrock
    /// (`terrain.layers.len() + 1`).
    pub fn step(
        &mut self,
        terrain: &mut TerrainMut,
        materials: &[MaterialProps],
    ) -> Result<StepReport> {
        let w = self.grid.width;
        terrain.check_grid(&self.grid)?;
        let nl = terrain.layers.len();
        validate_materials(materials, nl)?;
        // Wind susceptibility R per material, top down then bedrock.
        let sus: Vec<f32> = materials.iter().map(|m| 1.0 - m.wind_resistance).collect();
        let p = &self.params;
        let fall = (p.fall_angle_deg as f64).to_radians().tan() as f32;
        let talus = (p.wind_talus_deg as f64).to_radians().tan() as f32;
        let (e_coef, cap) = (p.erosion, p.capacity as f64);
        let (k_wind, k_shadow) = (p.windward_deposition, p.shadow_deposition as f64);
        let lines = &self.lines;
        let hs: &[f32] = terrain.surface;
        let layers: &[Vec<f32>] = terrain.layers.thickness_all_mut();

        let ctx = Sweep {
            lines,
            hs,
            layers,
            sus: &sus,
            fall,
            talus,
            e_coef,
            cap,
            k_wind,
            k_shadow,
        };

        // Phase 1: every band of lines walks along the wind, from the state before the
        // step, writing each cell's loss and gain into its own part of the buffer.
        let sums: Vec<[f64; 3]> = self
            .change
            .par_chunks_mut(BAND * lines.m)
            .enumerate()
            .map(|(band, out)| ctx.band(band, out))
            .collect();
        let mut report = StepReport {
            eroded: 0.0,
            deposited: 0.0,
            blown_off: 0.0,
        };
        for [e, d, l] in sums {
            report.eroded += e;
            report.deposited += d;
            report.blown_off += l;
        }

        // Phase 2: apply the changes row by row: remove the loss from the top down, then
        // lay the gain into layer 0.
        let change: &[[f32; 2]] = &self.change;
        let chunk = ROWS_PER_TASK * w;
        let lchunks = layer_chunks(terrain.layers.thickness_all_mut(), chunk);
        let slots: &[u32] = &self.slots;
        let apply = |c: usize, surface: &mut [f32], lts: &mut [&mut [f32]]| {
            let slots = &slots[c * chunk..c * chunk + surface.len()];
            let Some((top, below)) = lts.split_first_mut() else {
                for (z, &slot) in surface.iter_mut().zip(slots) {
                    let [e, d] = change[slot as usize];
                    if e.to_bits() | d.to_bits() != 0 {
                        *z = (*z as f64 + d as f64 - e as f64) as f32;
                    }
                }
                return;
            };
            let cells = surface.iter_mut().zip(slots).zip(top.iter_mut());
            for (x, ((z, &slot), t0)) in cells.enumerate() {
                let [e, d] = change[slot as usize];
                // e and d are never −0 (sums of amounts ≥ 0 from +0), so this is
                // `e == 0.0 && d == 0.0` in one test.
                if e.to_bits() | d.to_bits() == 0 {
                    continue;
                }
                if e > 0.0 {
                    let take = min_nn(e, *t0);
                    *t0 -= take;
                    let mut left = e - take;
                    for t in below.iter_mut() {
                        if left <= 0.0 {
                            break;
                        }
                        let t = &mut t[x];
                        let take = min_nn(left, *t);
                        *t -= take;
                        left -= take;
                    }
                }
                *t0 += d;
                *z = (*z as f64 + d as f64 - e as f64) as f32;
            }
        };
        if nl == 0 {
            terrain
                .surface
                .par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(c, out)| apply(c, out, &mut []));
        } else {
            terrain
                .surface
                .par_chunks_mut(chunk)
                .zip(lchunks.into_par_iter())
                .enumerate()
                .for_each(|(c, (out, mut lts))| apply(c, out, &mut lts));
        }
        Ok(report)
    }
}

/// What phase 1 reads: the line geometry, the state before the step and the constants.
struct Sweep<'a> {
    lines: &'a Lines,
    hs: &'a [f32],
    layers: &'a [Vec<f32>],
    /// Wind susceptibility R per material, top down then bedrock.
    sus: &'a [f32],
    /// tan(fall angle), tan(wind talus).
    fall: f32,
    talus: f32,
    e_coef: f32,
    cap: f64,
    k_wind: f32,
    k_shadow: f64,
}

/// Per-line state of a band, one lane per line.
struct Lanes {
    /// First and end position of each line on the map (`t0 == t1`: no cell).
    t0: [u32; BAND],
    t1: [u32; BAND],
    /// `line · stride`: the cell at position `t` is `base + off[t]`.
    base: [isize; BAND],
    /// Wind height, carried material, new height of the cell before.
    hw: [f32; BAND],
    s: [f64; BAND],
    prev_h: [f32; BAND],
    /// Height (before the step) of the cell at the current and at the next position.
    cur: [f32; BAND],
    ahead: [f32; BAND],
}

/// A position along the lines: its index, the distance from the position before and to
/// the next.
#[derive(Clone, Copy)]
struct At {
    t: usize,
    d_here: f32,
    d_next: f32,
}

/// The sums a band reports.
#[derive(Default)]
struct Sums {
    eroded: f64,
    deposited: f64,
    lost: f64,
}

/// `a.min(b)` for a `b` that is never NaN, as one instruction (`f32::min` also tests `b`
/// for NaN). Used where `b` is a thickness, a carried amount, a constant or a result of
/// [`pos`], never NaN whatever the heights, and where a zero result's sign cannot matter
/// (one side is > 0, or the result only counts when > 0): the same bytes as `f32::min`.
#[inline(always)]
fn min_nn(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// `a.max(0.0)` as one instruction (NaN gives 0, as `f32::max` does).
#[inline(always)]
fn pos(a: f32) -> f32 {
    if a > 0.0 {
        a
    } else {
        0.0
    }
}

/// Takes up to `want` (≥ 0) from the carried `s`, never more than `s`: the f32 taken.
#[inline(always)]
fn take(s: &mut f64, want: f32) -> f32 {
    if *s <= 0.0 || want <= 0.0 {
        return 0.0;
    }
    let mut a = min_nn(want, *s as f32);
    if a as f64 > *s {
        a = f32::from_bits(a.to_bits() - 1);
    }
    *s -= a as f64;
    a
}

impl Sweep<'_> {
    /// Loose material at `c` before the step: the layers above the first wind-proof one
    /// (infinite when bedrock is not wind-proof).
    fn loose(&self, c: usize) -> f32 {
        let mut sum = 0.0f32;
        for (k, t) in self.layers.iter().enumerate() {
            let t = t[c];
            if t > 0.0 {
                if self.sus[k] <= 0.0 {
                    return sum;
                }
                sum += t;
            }
        }
        if self.sus[self.layers.len()] > 0.0 {
            f32::INFINITY
        } else {
            sum
        }
    }

    /// Heights (before the step) of the band's lines at position `t` into `z.ahead`.
    #[inline(always)]
    fn load(&self, z: &mut Lanes, t: usize, first_line: usize, band_lines: usize) {
        let lines = self.lines;
        let (a, b) = lines.on_map(t, first_line, band_lines);
        let b = b.min(BAND);
        if a < b {
            let c0 = (z.base[a] + lines.off[t]) as usize;
            let ahead = &mut z.ahead[a..b];
            if lines.stride == 1 {
                ahead.copy_from_slice(&self.hs[c0..c0 + (b - a)]);
            } else {
                let stride = lines.stride as usize;
                for (i, h) in ahead.iter_mut().enumerate() {
                    *h = self.hs[c0 + i * stride];
                }
            }
        }
    }

    /// Phase 1 for band `band`: its lines walk in lockstep, one position at a time;
    /// returns the eroded, deposited and blown-off sums.
    fn band(&self, band: usize, out: &mut [[f32; 2]]) -> [f64; 3] {
        let lines = self.lines;
        let mut z = Lanes {
            t0: [0; BAND],
            t1: [0; BAND],
            base: [0; BAND],
            hw: [0.0; BAND],
            s: [0.0; BAND],
            prev_h: [0.0; BAND],
            cur: [0.0; BAND],
            ahead: [0.0; BAND],
        };
        let first_line = band * BAND;
        let band_lines = BAND.min(lines.count - first_line);
        for l in 0..band_lines {
            let line = first_line + l;
            (z.t0[l], z.t1[l]) = lines.range[line];
            z.base[l] = line as isize * lines.stride;
        }
        // The lanes on the map at position t, a run (see `Lines::on_map`).
        let on = |t: usize| lines.on_map(t, first_line, band_lines);
        self.load(&mut z, 0, first_line, band_lines);
        let mut sums = Sums::default();
        let mut dummy = [[0.0f32; 2]; BAND];
        for t in 0..lines.m {
            let d_here = lines.dist[t];
            let last = t + 1 == lines.m;
            let d_next = if last { d_here } else { lines.dist[t + 1] };
            z.cur = z.ahead;
            if !last {
                self.load(&mut z, t + 1, first_line, band_lines);
            }
            // This position's part of the buffer and the one before (a dummy at t = 0,
            // where every line starts).
            let (done, rest) = out.split_at_mut(t * BAND);
            let here: &mut [[f32; 2]; BAND] = (&mut rest[..BAND]).try_into().unwrap();
            let before: &mut [[f32; 2]; BAND] = match t {
                0 => &mut dummy,
                _ => (&mut done[(t - 1) * BAND..]).try_into().unwrap(),
            };
            let at = At { t, d_here, d_next };
            // Lanes on the map at t − 1, t and t + 1 need no checks: past their first
            // cell, before their last. The few others (a line entering or leaving the
            // map) take the general path.
            let (a, b) = on(t);
            let (ap, bp) = if t > 0 { on(t - 1) } else { (0, 0) };
            let (an, bn) = if last { (0, 0) } else { on(t + 1) };
            let ia = a.max(ap).max(an).min(b);
            let ib = b.min(bp).min(bn).max(ia).min(BAND);
            if ia == 0 && ib == band_lines {
                for l in 0..band_lines {
                    self.cell::<false, true>(&mut z, l, &at, here, before, &mut sums);
                }
                continue;
            }
            for l in (a..ia).chain(ib..b) {
                let (t0, t1) = (z.t0[l] as usize, z.t1[l] as usize);
                let z = &mut z;
                match (t == t0, t + 1 < t1) {
                    (false, true) => self.cell::<false, true>(z, l, &at, here, before, &mut sums),
                    (false, false) => self.cell::<false, false>(z, l, &at, here, before, &mut sums),
                    (true, true) => self.cell::<true, true>(z, l, &at, here, before, &mut sums),
                    (true, false) => self.cell::<true, false>(z, l, &at, here, before, &mut sums),
                }
            }
            for l in ia..ib {
                self.cell::<false, true>(&mut z, l, &at, here, before, &mut sums);
            }
        }
        [sums.eroded, sums.deposited, sums.lost]
    }

    /// One cell: line `l` of the band at position `at.t`, the line's first cell if
    /// `FIRST`, not its last if `NEXT`; writes the cell's loss and gain into `here[l]`
    /// (and what slides from the cell before into `before[l]`).
    #[inline(always)]
    fn cell<const FIRST: bool, const NEXT: bool>(
        &self,
        z: &mut Lanes,
        l: usize,
        at: &At,
        here: &mut [[f32; 2]; BAND],
        before: &mut [[f32; 2]; BAND],
        sums: &mut Sums,
    ) {
        let At { t, d_here, d_next } = *at;
        let (fall, talus, e_coef, k_wind) = (self.fall, self.talus, self.e_coef, self.k_wind);
        let hc = z.cur[l];
        let h_next = if NEXT { z.ahead[l] } else { hc };
        let (mut hw, mut s) = if FIRST {
            (hc, 0.0)
        } else {
            (z.hw[l] - fall * d_here, z.s[l])
        };
        let mut e = 0.0f32;
        let want = if hc >= hw {
            // Windward.
            let barrier = pos(h_next.min(hc) - hw);
            let room = if self.cap - s > 0.0 {
                self.cap - s
            } else {
                0.0
            } as f32;
            if barrier > 0.0 && room > 0.0 && e_coef > 0.0 {
                let c = (z.base[l] + self.lines.off[t]) as usize;
                e = erode(self.layers, self.sus, c, e_coef * barrier, room);
                s += e as f64;
            }
            hw = hc;
            if h_next > hc && k_wind > 0.0 {
                let frac = min_nn(k_wind * (h_next - hc) / (d_next * talus), 1.0);
                (s * frac as f64) as f32
            } else {
                0.0
            }
        } else {
            (s * self.k_shadow) as f32
        };
        // Grains do not rest on a lee steeper than the talus: a deposit never lifts the
        // cell more than step·tan(talus) over the next one; the rest stays in the air and
        // falls further down.
        let rest = pos(h_next + d_next * talus - (hc - e));
        let mut dep = take(&mut s, min_nn(want, rest));
        let mut hn = hc - e + dep;
        if !FIRST {
            // The lee slope from the cell before rests at the wind talus.
            let mut excess = z.prev_h[l] - hn - d_here * talus;
            if excess > 0.0 {
                let fill = take(&mut s, excess);
                dep += fill;
                hn += fill;
                excess -= fill;
                if excess > 0.0 {
                    let [pe, pd] = before[l];
                    let prev_c = (z.base[l] + self.lines.off[t - 1]) as usize;
                    let avail = self.loose(prev_c) - pe + pd;
                    let slide = min_nn(0.5 * excess, avail);
                    if slide > 0.0 {
                        let from_d = min_nn(slide, pd);
                        before[l] = [pe + (slide - from_d), pd - from_d];
                        sums.eroded += slide as f64;
                        dep += slide;
                        hn += slide;
                    }
                }
            }
        }
        here[l] = [e, dep];
        sums.eroded += e as f64;
        sums.deposited += dep as f64;
        z.prev_h[l] = hn;
        z.hw[l] = hw;
        if NEXT {
            z.s[l] = s;
        } else {
            // Blown off the map.
            sums.lost += s;
            z.s[l] = 0.0;
        }
    }
}

/// What the wind picks up at cell `c` for a request of `q` metres (E·h_barrier) with
/// `room` metres of capacity left, walking down from the exposed layer: each layer gives
/// at most its thickness of min(R·q, room) times the share of the request still unmet.
#[inline]
fn erode(layers: &[Vec<f32>], sus: &[f32], c: usize, q: f32, room: f32) -> f32 {
    let nl = layers.len();
    let mut unmet = 1.0f32;
    let mut got = 0.0f32;
    for (k, &r) in sus.iter().enumerate() {
        let thick = if k < nl { layers[k][c] } else { f32::INFINITY };
        if thick <= 0.0 {
            continue;
        }
        let want = unmet * min_nn(r * q, room);
        if want <= 0.0 {
            break;
        }
        let give = min_nn(want, thick);
        got += give;
        if give >= want {
            break;
        }
        unmet *= 1.0 - give / want;
    }
    min_nn(got, room)
}
