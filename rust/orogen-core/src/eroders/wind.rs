//! Wind erosion of a layered terrain: the wind picks material up on windward slopes and
//! drops it in the wind shadow and before obstacles; at a closed edge it drops all it
//! carries, through an open one it carries it off the map, lost and counted.
//!
//! Thesis (Prokop 2009) §4.3.3, the author's own algorithm. The map is cut into rasterised
//! lines parallel to the wind, all translates of one digital line, so every cell lies on
//! exactly one of them; together they form the thesis's row perpendicular to the wind,
//! advancing one cell along the wind's major axis at a time. Walking a line, each line
//! carries a wind height h_wind and carried material s (metres):
//!
//! * one cell on, h_wind drops by tan(fall angle)·step (step = cell_size, or √2·cell_size
//!   where the line steps diagonally); the first cell of a line sets h_wind to its height
//!   and s to [`Params::influx`] (0 in the thesis);
//! * a cell at or above h_wind is windward: it loses S_e = min(R·E·h_barrier, C − s), with
//!   h_barrier = max(0, min(h_next, h) − h_wind), R = 1 − wind_resistance of the exposed
//!   material, E the erosion coefficient and C the capacity, walking down the layers like
//!   water dissolving them (a layer gives at most its thickness; the unmet fraction of the
//!   request is asked of the next layer with that layer's R, so a wind-proof layer shields
//!   what lies under it); h_wind rises to the cell; then before a rise (h_next > h) it gets
//!   s·min(1, k_wind·(h_next − h)/windtalus), windtalus = step·tan(wind talus);
//! * a cell below h_wind lies in the wind shadow and gets s·k_shadow;
//! * what a line still carries when it reaches the map's edge settles on its last cell
//!   where the borders are [`Borders::Closed`] (the edge is a wall, and the thesis drops
//!   the load before an obstacle, eq. 4.7, with the wall as h_next: all of it); where they
//!   are [`Borders::Open`] it is blown off and reported, as the thesis chose (§4.3.3, end).
//!
//! Lee slopes rest at the wind talus (the creep of Beneš & Roa 2004 that the thesis leaves
//! to a thermal pass): a deposit never lifts a cell more than step·tan(wind talus) above
//! the next cell (the rest stays in the air and falls further down the lee); where a cell
//! ends lower than the cell before it on its line by more than step·tan(wind talus),
//! carried material fills the gap first, and if the wind carries too little, loose
//! material (the layers above the first wind-proof one) slides from the cell before by half
//! the remaining excess (a steep face made before the step relaxes over a few steps).
//!
//! Lines never share a cell, and a line reads only its own cells, so a step is
//! deterministic whatever the thread count: bands of lines run in parallel and change the
//! terrain in place. A cell's loss and gain are settled once the next cell of its line has
//! been seen (a slide down its lee may take from it), and are applied then: the loss from
//! the top layer down, the gain into layer 0. Until then nothing of the cell has changed,
//! so every cell is read as it was before the step, as the thesis's two-phase step reads it
//! (tests/integration/wind_reference.rs checks the bytes against a line-by-line walk with a change
//! buffer). Material is conserved exactly: each cell's loss and gain are f32 values, the
//! carried material and what is blown off are their sums in f64.
//!
//! Speed: no buffer per cell (the line geometry is a few numbers per line and position),
//! and each band reads and writes memory near where it last did. Lines along x walk in
//! tiles of positions: every line of a band walks a tile, then the next tile, so a line
//! finds the cells the line before it just touched (a row away) still in cache. Lines
//! along y (adjacent columns) walk in lockstep, one position (a run of one row) at a time:
//! the lanes past their first cell and before their last take each step of the cell rule
//! as a branch-free loop over every lane, the walks down the layers a layer at a time
//! ([`Sweep::interior_lanes`]), which the compiler vectorises (AVX2 where the CPU has it,
//! picked at run time: the same operations, so the same bits). Each line keeps its own
//! sums, so lines walked together never wait on one chain of additions. Mins and maxes
//! whose other side is never NaN are plain compare-selects ([`min_nn`], [`pos`]).

use crate::math;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_finite, check_range, OrogenError, Result};
use crate::field::Grid;
use crate::state::{MaterialProps, TerrainMut};

/// What happens where the wind reaches the map's edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Borders {
    /// The edge is a wall: what the wind carries settles on the last cell before it (sand
    /// drifts against the wall, on bare rock too), so the map keeps its material.
    #[default]
    Closed,
    /// The wind carries what it holds off the map, lost and counted in
    /// [`StepReport::blown_off`] (the thesis's choice, §4.3.3, end).
    Open,
}

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
    /// Map edges: `Closed` (what reaches the edge settles there) or `Open` (it leaves the
    /// map). Default `Closed`.
    pub borders: Borders,
    /// What each line of wind carries onto the map at its upwind edge, metres, in
    /// [0, capacity]; only through `Open` borders. Default 0 (the thesis: the wind arrives
    /// empty, so it strips the upwind edges bare). A map that is a piece of a larger sand
    /// sea gets from upwind about what it loses downwind.
    pub influx: f32,
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
            borders: Borders::Closed,
            influx: 0.0,
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
        )?;
        check_range(
            &name("influx"),
            self.influx as f64,
            0.0,
            self.capacity as f64,
        )?;
        if self.influx > 0.0 && self.borders == Borders::Closed {
            return Err(OrogenError::invalid(
                name("influx"),
                "material blows onto the map only through open borders: set `borders: Open`",
            ));
        }
        Ok(())
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
    /// Material carried off the map: `eroded + blown_on − deposited`. With
    /// [`Borders::Closed`] only what the rounding of the carried load to a cell's f32
    /// leaves (about 1e-8 of it).
    pub blown_off: f64,
    /// Material carried onto the map at its upwind edges: [`Params::influx`] per line.
    pub blown_on: f64,
}

/// Lines per parallel task; where lines are columns, the lanes walked in lockstep.
const BAND: usize = 64;
/// Positions per tile where lines run along x.
const TILE: usize = 64;
/// Rows ahead of the lanes that [`Sweep::prefetch`] asks for where lines are columns.
const PREFETCH_ROWS: usize = 4;

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
    /// Largest and smallest offset.
    fmax: i64,
    fmin: i64,
    /// Number of lines.
    count: usize,
    /// Distance from the position before, metres (position 0: cell size).
    dist: Vec<f32>,
    /// Distance to the position after, metres (the last position: its own `dist`).
    dist_next: Vec<f32>,
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
        let (wx, wy) = (math::cos(th), math::sin(th));
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
        let dist: Vec<f32> = (0..major)
            .map(|t| {
                if t > 0 && f[t] != f[t - 1] {
                    cs * std::f32::consts::SQRT_2
                } else {
                    cs
                }
            })
            .collect();
        let dist_next = (0..major)
            .map(|t| if t + 1 < major { dist[t + 1] } else { dist[t] })
            .collect();
        let mut lines = Lines {
            major_is_x,
            forward: along > 0.0,
            m: major,
            minor,
            count: minor + (fmax - fmin) as usize,
            f,
            fmax,
            fmin,
            dist,
            dist_next,
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
    fn cell(&self, l: usize, t: usize, width: usize) -> Option<usize> {
        let b = l as i64 + self.f[t] - self.fmax;
        if b < 0 || b >= self.minor as i64 {
            return None;
        }
        let b = b as usize;
        let a = if self.forward { t } else { self.m - 1 - t };
        Some(if self.major_is_x {
            b * width + a
        } else {
            a * width + b
        })
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

/// The wind process over a grid, with its line geometry kept between steps.
pub struct Wind {
    grid: Grid,
    params: Params,
    lines: Lines,
    avx2: bool,
}

impl Wind {
    /// Wind erosion over `grid`.
    pub fn new(grid: Grid, params: Params) -> Result<Self> {
        params.validate("")?;
        grid.require_square("Wind")?;
        let grid = Grid::new(grid.width, grid.height, grid.cell_size)?;
        let lines = Lines::new(grid, params.direction_deg);
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
        Ok(Wind {
            grid,
            params,
            lines,
            avx2,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Bytes of buffers the process keeps, per cell: its line geometry (a few numbers per
    /// line and position, nothing per cell).
    pub fn bytes_per_cell(&self) -> usize {
        let l = &self.lines;
        (l.m * (8 + 4 + 4 + 8) + l.count * 8).div_ceil(self.grid.len())
    }

    /// One step over `terrain`, with `materials` one per layer top down then bedrock
    /// (`terrain.layers.len() + 1`).
    pub fn step(
        &mut self,
        terrain: &mut TerrainMut,
        materials: &[MaterialProps],
    ) -> Result<StepReport> {
        terrain.check_grid(&self.grid)?;
        let n = self.grid.len();
        let nl = terrain.layers.len();
        validate_materials(materials, nl)?;
        let layers = terrain.layers.thickness_all_mut();
        if let Some(k) = layers.iter().position(|t| t.len() != n) {
            return Err(OrogenError::invalid(
                format!("layers[{k}]"),
                format!("has {} nodes, the terrain has {n}", layers[k].len()),
            ));
        }
        // Wind susceptibility R per material, top down then bedrock.
        let sus: Vec<f32> = materials.iter().map(|m| 1.0 - m.wind_resistance).collect();
        let p = &self.params;
        let lines = &self.lines;
        let layers: Vec<Shared> = layers.iter_mut().map(|t| Shared(t.as_mut_ptr())).collect();
        let sweep = Sweep {
            lines,
            surface: Shared(terrain.surface.as_mut_ptr()),
            layers: &layers,
            sus: &sus,
            fall: math::tan((p.fall_angle_deg as f64).to_radians()) as f32,
            talus: math::tan((p.wind_talus_deg as f64).to_radians()) as f32,
            e_coef: p.erosion,
            cap: p.capacity as f64,
            influx: p.influx as f64,
            k_wind: p.windward_deposition,
            closed: p.borders == Borders::Closed,
            k_shadow: p.shadow_deposition as f64,
            avx2: self.avx2,
        };
        // Bands of lines in parallel, each walking its lines and changing their cells in
        // place; the sums per band are added in band order.
        let sums: Vec<Sums> = (0..lines.bands())
            .into_par_iter()
            .map(|band| {
                // SAFETY: `sweep` touches only cells of the band's lines (line `l` at
                // position `t` is cell `l·stride + off[t]`, on the map for `t` in
                // `range[l]`, so below `n`, the length of the surface and of every
                // layer, checked above); every cell lies on exactly one line, so no two
                // bands touch the same element, and nothing else holds a reference to
                // the terrain while `sweep` lives (`terrain` is borrowed mutably).
                unsafe {
                    if lines.major_is_x {
                        sweep.rows(band)
                    } else {
                        sweep.columns(band)
                    }
                }
            })
            .collect();
        // Every line on the map enters it once, at its first cell.
        let entering = lines.range.iter().filter(|&&(a, b)| b > a).count();
        let mut report = StepReport {
            eroded: 0.0,
            deposited: 0.0,
            blown_off: 0.0,
            blown_on: p.influx as f64 * entering as f64,
        };
        for s in sums {
            report.eroded += s.eroded;
            report.deposited += s.deposited;
            report.blown_off += s.lost;
        }
        Ok(report)
    }
}

/// A terrain array (the surface or a layer) read and written in place by the bands.
#[derive(Clone, Copy)]
struct Shared(*mut f32);

// SAFETY: the bands reach through a `Shared` only the cells of their own lines, and lines
// never share a cell (see `Wind::step`), so no element is touched by two threads.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// Element `c`. Safety: `c` is in bounds and no other thread touches it.
    #[inline(always)]
    unsafe fn get(self, c: usize) -> f32 {
        unsafe { *self.0.add(c) }
    }

    /// Element `c`, mutably. Safety: as [`Shared::get`], and no other reference to it
    /// lives.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    unsafe fn at<'a>(self, c: usize) -> &'a mut f32 {
        unsafe { &mut *self.0.add(c) }
    }
}

/// What a step reads and changes: the line geometry, the terrain and the constants.
struct Sweep<'a> {
    lines: &'a Lines,
    surface: Shared,
    layers: &'a [Shared],
    /// Wind susceptibility R per material, top down then bedrock.
    sus: &'a [f32],
    /// tan(fall angle), tan(wind talus).
    fall: f32,
    talus: f32,
    e_coef: f32,
    cap: f64,
    /// What a line carries at its first cell ([`Params::influx`]).
    influx: f64,
    k_wind: f32,
    k_shadow: f64,
    /// The map's edges are walls ([`Borders::Closed`]).
    closed: bool,
    /// The CPU has AVX2 ([`Sweep::interior_lanes`] then takes its AVX2 build).
    avx2: bool,
}

/// What a line carries from one cell to the next, and its sums.
#[derive(Clone, Copy, Default)]
struct LineState {
    /// Wind height, metres.
    hw: f32,
    /// Carried material, metres.
    s: f64,
    /// New height of the cell before.
    prev_h: f32,
    /// What the cell before loses and gains, `[eroded, deposited]`: applied once the
    /// next cell has had its say (a slide down its lee takes from it).
    pend: [f32; 2],
    /// What the line eroded, deposited and blew off so far (one chain of additions per
    /// line, so lines walked together do not wait on each other).
    sums: Sums,
}

/// The sums a line or a band reports.
#[derive(Clone, Copy, Default)]
struct Sums {
    eroded: f64,
    deposited: f64,
    lost: f64,
}

impl Sums {
    fn add(&mut self, o: &Sums) {
        self.eroded += o.eroded;
        self.deposited += o.deposited;
        self.lost += o.lost;
    }
}

/// The state of a band's lanes where lines are columns, one array per [`LineState`]
/// field, so that [`Sweep::interior_lanes`] runs over plain arrays.
struct Lanes {
    hw: [f32; BAND],
    s: [f64; BAND],
    prev_h: [f32; BAND],
    pe: [f32; BAND],
    pd: [f32; BAND],
    eroded: [f64; BAND],
    deposited: [f64; BAND],
    lost: [f64; BAND],
}

impl Default for Lanes {
    fn default() -> Self {
        Lanes {
            hw: [0.0; BAND],
            s: [0.0; BAND],
            prev_h: [0.0; BAND],
            pe: [0.0; BAND],
            pd: [0.0; BAND],
            eroded: [0.0; BAND],
            deposited: [0.0; BAND],
            lost: [0.0; BAND],
        }
    }
}

impl Lanes {
    fn get(&self, l: usize) -> LineState {
        LineState {
            hw: self.hw[l],
            s: self.s[l],
            prev_h: self.prev_h[l],
            pend: [self.pe[l], self.pd[l]],
            sums: Sums {
                eroded: self.eroded[l],
                deposited: self.deposited[l],
                lost: self.lost[l],
            },
        }
    }

    fn set(&mut self, l: usize, st: &LineState) {
        self.hw[l] = st.hw;
        self.s[l] = st.s;
        self.prev_h[l] = st.prev_h;
        [self.pe[l], self.pd[l]] = st.pend;
        self.eroded[l] = st.sums.eroded;
        self.deposited[l] = st.sums.deposited;
        self.lost[l] = st.sums.lost;
    }
}

/// Per-lane values [`Sweep::interior_lanes`] hands from one of its loops to the next.
struct Scratch {
    hw0: [f32; BAND],
    windward: [bool; BAND],
    erodes: [bool; BAND],
    active: [bool; BAND],
    stopped: [bool; BAND],
    q: [f32; BAND],
    room: [f32; BAND],
    got: [f32; BAND],
    unmet: [f32; BAND],
    e: [f32; BAND],
    dep: [f32; BAND],
    h: [f32; BAND],
    excess: [f32; BAND],
    loose: [f32; BAND],
    left: [f32; BAND],
    t0a: [f32; BAND],
    /// Bedrock's thickness in every lane.
    infinite: [f32; BAND],
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            hw0: [0.0; BAND],
            windward: [false; BAND],
            erodes: [false; BAND],
            active: [false; BAND],
            stopped: [false; BAND],
            q: [0.0; BAND],
            room: [0.0; BAND],
            got: [0.0; BAND],
            unmet: [0.0; BAND],
            e: [0.0; BAND],
            dep: [0.0; BAND],
            h: [0.0; BAND],
            excess: [0.0; BAND],
            loose: [0.0; BAND],
            left: [0.0; BAND],
            t0a: [0.0; BAND],
            infinite: [f32::INFINITY; BAND],
        }
    }
}

/// The lanes [`Sweep::interior_lanes`] walks at one position: their cells start at `c`,
/// the cells before them at `p`, with the heights of both positions' cells by lane.
struct LaneRows<'a> {
    lanes: std::ops::Range<usize>,
    c: usize,
    p: usize,
    cur: &'a [f32; BAND],
    next: &'a [f32; BAND],
    d_here: f32,
    d_next: f32,
}

/// `if on { a } else { b }` as a bit-mask blend: where `b` is the value already in memory,
/// the compiler turns the `if` into a conditional store, which does not vectorise.
#[inline(always)]
fn sel32(on: bool, a: f32, b: f32) -> f32 {
    let m = u32::from(on).wrapping_neg();
    f32::from_bits(b.to_bits() ^ ((a.to_bits() ^ b.to_bits()) & m))
}

/// [`sel32`] for f64.
#[inline(always)]
fn sel64(on: bool, a: f64, b: f64) -> f64 {
    let m = u64::from(on).wrapping_neg();
    f64::from_bits(b.to_bits() ^ ((a.to_bits() ^ b.to_bits()) & m))
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

/// [`take`] without branches, for [`Sweep::interior_lanes`]: the same bits (`s − 0` is `s`,
/// and a = `min(want, s)` rounded down to an f32 is > 0 where the step down counts).
#[inline(always)]
fn take_sel(s: &mut f64, want: f32) -> f32 {
    let a = min_nn(want, *s as f32);
    let a = f32::from_bits(a.to_bits().wrapping_sub(u32::from(a as f64 > *s)));
    let a = if (*s > 0.0) & (want > 0.0) { a } else { 0.0 };
    *s -= a as f64;
    a
}

impl Sweep<'_> {
    /// The lines of band `band`, lines along x. The band walks in tiles of [`TILE`]
    /// positions: every line of the band walks the tile's cells, then the next tile. A
    /// line's cells lie a row below the line before's, so within a tile they are still
    /// in the first-level cache when the next line reads them.
    ///
    /// Safety: see `Wind::step`.
    unsafe fn rows(&self, band: usize) -> Sums {
        let lines = self.lines;
        let first = band * BAND;
        let nb = BAND.min(lines.count - first);
        let mut st = [LineState::default(); BAND];
        let mut t = 0;
        while t < lines.m {
            let end = (t + TILE).min(lines.m);
            for (l, st) in st[..nb].iter_mut().enumerate() {
                let (t0, t1) = lines.range[first + l];
                let (t0, t1) = (t0 as usize, t1 as usize);
                let (from, to) = (t.max(t0), end.min(t1));
                let base = (first + l) as isize * lines.stride;
                // The line's cells of the next tile, a cache line at a time (they may
                // lie on two rows).
                // Lines along a row (0°, 180°) read on in one page, where the hardware
                // prefetchers keep up.
                let mut p = if lines.fmax == lines.fmin {
                    t1
                } else {
                    end.max(t0)
                };
                while p < (end + TILE).min(t1) {
                    self.prefetch((base + lines.off[p]) as usize, 1);
                    p += 16;
                }
                if from < to {
                    unsafe { self.walk(st, base, (t0, t1), from, to) };
                }
            }
            t = end;
        }
        let mut sums = Sums::default();
        for s in &st[..nb] {
            sums.add(&s.sums);
        }
        sums
    }

    /// Positions `from..to` (`from < to`) of the line at `base` whose cells on the map
    /// are at positions `t0..t1`.
    ///
    /// Safety: see `Wind::step`.
    #[inline(always)]
    unsafe fn walk(
        &self,
        st: &mut LineState,
        base: isize,
        (t0, t1): (usize, usize),
        from: usize,
        to: usize,
    ) {
        let lines = self.lines;
        let (off, dist, dn) = (&lines.off, &lines.dist, &lines.dist_next);
        let hs = self.surface;
        let at = |t: usize| (base + off[t]) as usize;
        let mut t = from;
        if t == t0 {
            let c = at(t);
            unsafe {
                let hc = hs.get(c);
                if t + 1 < t1 {
                    let hn = hs.get(at(t + 1));
                    self.cell::<true, true>(st, c, c, hc, hn, dist[t], dn[t]);
                } else {
                    self.cell::<true, false>(st, c, c, hc, hc, dist[t], dn[t]);
                }
            }
            t += 1;
        }
        // Past the first cell and before the last.
        let mid = to.min(t1 - 1);
        if t < mid {
            let o = &off[t - 1..mid + 1];
            let cells = o.windows(3).zip(&dist[t..mid]).zip(&dn[t..mid]);
            for ((o, &d_here), &d_next) in cells {
                let (p, c, n) = (
                    (base + o[0]) as usize,
                    (base + o[1]) as usize,
                    (base + o[2]) as usize,
                );
                unsafe {
                    let (hc, hn) = (hs.get(c), hs.get(n));
                    self.cell::<false, true>(st, c, p, hc, hn, d_here, d_next);
                }
            }
            t = mid;
        }
        if t < to {
            // The line's last cell (t = t1 − 1 > t0).
            let (c, p) = (at(t), at(t - 1));
            unsafe {
                let hc = hs.get(c);
                self.cell::<false, false>(st, c, p, hc, hc, dist[t], dn[t]);
            }
        }
    }

    /// The lines of band `band`, adjacent columns, walked in lockstep one position (row)
    /// at a time, so each position reads and writes a run of one row.
    ///
    /// Safety: see `Wind::step`.
    unsafe fn columns(&self, band: usize) -> Sums {
        let lines = self.lines;
        debug_assert_eq!(lines.stride, 1);
        let first = band * BAND;
        let nb = BAND.min(lines.count - first);
        let mut t0 = [0usize; BAND];
        let mut t1 = [0usize; BAND];
        for l in 0..nb {
            let (a, b) = lines.range[first + l];
            (t0[l], t1[l]) = (a as usize, b as usize);
        }
        let mut st = Lanes::default();
        let mut scratch = Scratch::default();
        let mut ahead = [0.0f32; BAND];
        // The lanes on the map at position t, a run (see `Lines::on_map`).
        let on = |t: usize| {
            let (a, b) = lines.on_map(t, first, nb);
            (a, b.min(BAND))
        };
        // Heights of the lanes on the map at `t` into `ahead` (one run of a row).
        let load = |ahead: &mut [f32; BAND], t: usize| {
            let (a, b) = on(t);
            if a < b {
                let c0 = ((first + a) as isize + lines.off[t]) as usize;
                // SAFETY: cells c0..c0 + (b − a) are the band's lines a..b at t, on the
                // map; see `Wind::step`.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        self.surface.0.add(c0),
                        ahead.as_mut_ptr().add(a),
                        b - a,
                    )
                };
            }
        };
        load(&mut ahead, 0);
        for t in 0..lines.m {
            if t + PREFETCH_ROWS < lines.m {
                let (a, b) = on(t + PREFETCH_ROWS);
                if a < b {
                    let c = ((first + a) as isize + lines.off[t + PREFETCH_ROWS]) as usize;
                    self.prefetch(c, b - a);
                }
            }
            let (d_here, d_next) = (lines.dist[t], lines.dist_next[t]);
            let last = t + 1 == lines.m;
            let cur = ahead;
            if !last {
                load(&mut ahead, t + 1);
            }
            // The cell of lane l at t is c0 + l, the one before p0 + l.
            let c0 = first as isize + lines.off[t];
            let p0 = first as isize + if t > 0 { lines.off[t - 1] } else { 0 };
            let cell_of = |l: usize| ((c0 + l as isize) as usize, (p0 + l as isize) as usize);
            // Lanes on the map at t − 1, t and t + 1 are past their first cell and before
            // their last: no checks. The few others (a line entering or leaving the map)
            // take the general path.
            let (a, b) = on(t);
            let (ap, bp) = if t > 0 { on(t - 1) } else { (0, 0) };
            let (an, bn) = if last { (0, 0) } else { on(t + 1) };
            let ia = a.max(ap).max(an).min(b);
            let ib = b.min(bp).min(bn).max(ia);
            for l in (a..ia).chain(ib..b) {
                let (c, p) = cell_of(l);
                let (hc, hn, mut s) = (cur[l], ahead[l], st.get(l));
                unsafe {
                    match (t == t0[l], t + 1 < t1[l]) {
                        (false, true) => {
                            self.cell::<false, true>(&mut s, c, p, hc, hn, d_here, d_next)
                        }
                        (false, false) => {
                            self.cell::<false, false>(&mut s, c, p, hc, hc, d_here, d_next)
                        }
                        (true, true) => {
                            self.cell::<true, true>(&mut s, c, p, hc, hn, d_here, d_next)
                        }
                        (true, false) => {
                            self.cell::<true, false>(&mut s, c, p, hc, hc, d_here, d_next)
                        }
                    }
                }
                st.set(l, &s);
            }
            if ia < ib {
                let (c, p) = cell_of(ia);
                let rows = LaneRows {
                    lanes: ia..ib,
                    c,
                    p,
                    cur: &cur,
                    next: &ahead,
                    d_here,
                    d_next,
                };
                // SAFETY: lanes ia..ib at t and at t − 1 are cells of the band's lines on
                // the map, in two different rows; see `Wind::step`.
                unsafe { self.interior_lanes(&mut st, &mut scratch, rows) };
            }
        }
        let mut sums = Sums::default();
        for l in 0..nb {
            sums.add(&st.get(l).sums);
        }
        sums
    }

    /// [`Sweep::cell`] for lanes that are all past their first cell and before their last,
    /// the lanes' cells at one position being a run of one row (`c..`) and the cells
    /// before them a run of another (`p..`): the same expressions in the same order, one
    /// step at a time over every lane, each a plain loop over arrays (the walks down the
    /// layers too) that the compiler vectorises, with selects where `cell` branches. The
    /// same bits as `cell`: where `cell` skips an addition, the loop adds +0 to a value
    /// that is never −0, or keeps the old value by a select.
    ///
    /// Safety: `c..c + n` and `p..p + n` (n the number of lanes) are cells of the calling
    /// band's lines on the map, in two different rows; the cells at `c` not yet changed.
    #[inline(never)]
    unsafe fn interior_lanes(&self, st: &mut Lanes, x: &mut Scratch, rows: LaneRows) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the CPU has AVX2 (checked when the process was made).
            return unsafe { self.interior_lanes_avx2(st, x, rows) };
        }
        unsafe { self.interior_lanes_body(st, x, rows) }
    }

    /// [`Sweep::interior_lanes`] compiled for AVX2, whose wider registers hold four f64
    /// lanes: the same operations, so the same bits.
    ///
    /// Safety: as [`Sweep::interior_lanes`], on a CPU with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn interior_lanes_avx2(&self, st: &mut Lanes, x: &mut Scratch, rows: LaneRows) {
        unsafe { self.interior_lanes_body(st, x, rows) }
    }

    /// The body of [`Sweep::interior_lanes`].
    ///
    /// Safety: as [`Sweep::interior_lanes`].
    #[inline(always)]
    unsafe fn interior_lanes_body(&self, st: &mut Lanes, x: &mut Scratch, rows: LaneRows) {
        let LaneRows {
            lanes,
            c,
            p,
            cur,
            next,
            d_here,
            d_next,
        } = rows;
        let (l0, n) = (lanes.start, lanes.len());
        let (fall, talus, e_coef, k_wind, k_shadow, cap) = (
            self.fall,
            self.talus,
            self.e_coef,
            self.k_wind,
            self.k_shadow,
            self.cap,
        );
        let nl = self.layers.len();
        // SAFETY (all slices below): see the function's contract.
        let row_c = |a: Shared| unsafe { std::slice::from_raw_parts(a.0.add(c), n) };
        let row_p = |a: Shared| unsafe { std::slice::from_raw_parts_mut(a.0.add(p), n) };
        // Every slice below is cut to `n` so the loops need no bounds checks, and the
        // conditions use `&` and `|`, not `&&` and `||`, so that they are selects.
        let hc = &cur[l0..][..n];
        let hn = &next[l0..][..n];

        // The wind height, windward or not, and what the wind may pick up.
        {
            let (hw, s) = (&st.hw[l0..][..n], &st.s[l0..][..n]);
            let (q, room, got, unmet) = (
                &mut x.q[..n],
                &mut x.room[..n],
                &mut x.got[..n],
                &mut x.unmet[..n],
            );
            let (hw0, ww, erodes, active) = (
                &mut x.hw0[..n],
                &mut x.windward[..n],
                &mut x.erodes[..n],
                &mut x.active[..n],
            );
            let e_on = e_coef > 0.0;
            for i in 0..n {
                let h = hw[i] - fall * d_here;
                hw0[i] = h;
                let windward = hc[i] >= h;
                ww[i] = windward;
                let barrier = pos(hn[i].min(hc[i]) - h);
                let r = (if cap - s[i] > 0.0 { cap - s[i] } else { 0.0 }) as f32;
                room[i] = r;
                q[i] = e_coef * barrier;
                let e = windward & (barrier > 0.0) & (r > 0.0) & e_on;
                erodes[i] = e;
                active[i] = e;
                got[i] = 0.0;
                unmet[i] = 1.0;
            }
        }
        // `erode`, a layer at a time over every lane (bedrock: infinitely thick).
        for (k, &r) in self.sus.iter().enumerate() {
            let th = if k < nl {
                row_c(self.layers[k])
            } else {
                &x.infinite[..n]
            };
            let (q, room) = (&x.q[..n], &x.room[..n]);
            let (got, unmet, active) = (&mut x.got[..n], &mut x.unmet[..n], &mut x.active[..n]);
            for i in 0..n {
                let thick = th[i];
                let valid = active[i] & (thick > 0.0);
                let want = unmet[i] * min_nn(r * q[i], room[i]);
                let stop = want <= 0.0;
                let give = min_nn(want, thick);
                let go = valid & !stop;
                got[i] = sel32(go, got[i] + give, got[i]);
                let done = give >= want;
                let shrunk = unmet[i] * (1.0 - give / want);
                unmet[i] = sel32(go & !done, shrunk, unmet[i]);
                active[i] &= !(valid & (stop | done));
            }
        }
        // Pick-up, deposits and the lee slope's fill.
        {
            let s = &mut st.s[l0..][..n];
            let prev_h = &st.prev_h[l0..][..n];
            let (erodes, windward, got, room) =
                (&x.erodes[..n], &x.windward[..n], &x.got[..n], &x.room[..n]);
            let (e_out, dep_out, h_out, excess_out) = (
                &mut x.e[..n],
                &mut x.dep[..n],
                &mut x.h[..n],
                &mut x.excess[..n],
            );
            let w_on = k_wind > 0.0;
            for i in 0..n {
                let e = if erodes[i] {
                    min_nn(got[i], room[i])
                } else {
                    0.0
                };
                let mut sc = if erodes[i] { s[i] + e as f64 } else { s[i] };
                let (hc, hn) = (hc[i], hn[i]);
                let frac = min_nn(k_wind * (hn - hc) / (d_next * talus), 1.0);
                let want_w = if (hn > hc) & w_on {
                    (sc * frac as f64) as f32
                } else {
                    0.0
                };
                let want = if windward[i] {
                    want_w
                } else {
                    (sc * k_shadow) as f32
                };
                let rest = pos(hn + d_next * talus - (hc - e));
                let mut dep = take_sel(&mut sc, min_nn(want, rest));
                let mut h = hc - e + dep;
                let mut excess = prev_h[i] - h - d_here * talus;
                // `take` gives +0 unless excess > 0.
                let fill = take_sel(&mut sc, excess);
                dep += fill;
                h += fill;
                excess -= fill;
                s[i] = sc;
                e_out[i] = e;
                dep_out[i] = dep;
                h_out[i] = h;
                excess_out[i] = excess;
            }
        }
        // `loose` at the cells before, a layer at a time.
        {
            let (sum, stopped) = (&mut x.loose[..n], &mut x.stopped[..n]);
            sum.fill(0.0);
            stopped.fill(false);
            for (k, &r) in self.sus[..nl].iter().enumerate() {
                let th = &row_p(self.layers[k])[..n];
                if r <= 0.0 {
                    for i in 0..n {
                        stopped[i] |= th[i] > 0.0;
                    }
                } else {
                    for i in 0..n {
                        let add = (th[i] > 0.0) & !stopped[i];
                        sum[i] = sel32(add, sum[i] + th[i], sum[i]);
                    }
                }
            }
            if self.sus[nl] > 0.0 {
                for i in 0..n {
                    sum[i] = sel32(stopped[i], sum[i], f32::INFINITY);
                }
            }
        }
        // The slide down the lee from the cell before, then the cell before is settled.
        {
            let (pe, pd) = (&mut st.pe[l0..][..n], &mut st.pd[l0..][..n]);
            let eroded = &mut st.eroded[l0..][..n];
            let (dep, h) = (&mut x.dep[..n], &mut x.h[..n]);
            let (excess, loose) = (&x.excess[..n], &x.loose[..n]);
            for i in 0..n {
                let excess = excess[i];
                let avail = loose[i] - pe[i] + pd[i];
                let slide = min_nn(0.5 * excess, avail);
                let go = (excess > 0.0) & (slide > 0.0);
                let from_d = min_nn(slide, pd[i]);
                pe[i] = sel32(go, pe[i] + (slide - from_d), pe[i]);
                pd[i] = sel32(go, pd[i] - from_d, pd[i]);
                eroded[i] = sel64(go, eroded[i] + slide as f64, eroded[i]);
                dep[i] = sel32(go, dep[i] + slide, dep[i]);
                h[i] = sel32(go, h[i] + slide, h[i]);
            }
        }
        // `apply` at the cells before, a layer at a time.
        {
            let (pe, pd) = (&st.pe[l0..][..n], &st.pd[l0..][..n]);
            if let Some((&top, below)) = self.layers.split_first() {
                let t0 = &mut row_p(top)[..n];
                let (left, t0a) = (&mut x.left[..n], &mut x.t0a[..n]);
                for i in 0..n {
                    let (e, t) = (pe[i], t0[i]);
                    let take = min_nn(e, t);
                    t0a[i] = if e > 0.0 { t - take } else { t };
                    left[i] = if e > 0.0 { e - take } else { 0.0 };
                }
                for &layer in below {
                    let th = &mut row_p(layer)[..n];
                    for i in 0..n {
                        let (lf, t) = (left[i], th[i]);
                        let take = min_nn(lf, t);
                        let act = lf > 0.0;
                        th[i] = sel32(act, t - take, t);
                        left[i] = sel32(act, lf - take, lf);
                    }
                }
                for i in 0..n {
                    let changed = pe[i].to_bits() | pd[i].to_bits() != 0;
                    t0[i] = sel32(changed, t0a[i] + pd[i], t0[i]);
                }
            }
            let z = &mut row_p(self.surface)[..n];
            for i in 0..n {
                let (e, d) = (pe[i], pd[i]);
                let changed = e.to_bits() | d.to_bits() != 0;
                let new = (z[i] as f64 + d as f64 - e as f64) as f32;
                z[i] = sel32(changed, new, z[i]);
            }
        }
        // This cell's change waits for the next.
        {
            let (pe, pd, prev_h, hw) = (
                &mut st.pe[l0..][..n],
                &mut st.pd[l0..][..n],
                &mut st.prev_h[l0..][..n],
                &mut st.hw[l0..][..n],
            );
            let (eroded, deposited) = (&mut st.eroded[l0..][..n], &mut st.deposited[l0..][..n]);
            let (e, dep, h, windward, hw0) = (
                &x.e[..n],
                &x.dep[..n],
                &x.h[..n],
                &x.windward[..n],
                &x.hw0[..n],
            );
            for i in 0..n {
                pe[i] = e[i];
                pd[i] = dep[i];
                eroded[i] += e[i] as f64;
                deposited[i] += dep[i] as f64;
                prev_h[i] = h[i];
                hw[i] = if windward[i] { hc[i] } else { hw0[i] };
            }
        }
    }

    /// Asks the caches for cells `c..c + len` of the surface and of every layer, ahead of
    /// their use: a band's lines cross a row (or a tile's) in a short run, one page from
    /// the last, where the hardware prefetchers do not follow. A hint only.
    #[inline(always)]
    fn prefetch(&self, c: usize, len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let arrays = std::iter::once(self.surface).chain(self.layers.iter().copied());
            for a in arrays {
                let mut i = 0;
                while i < len + 15 {
                    // SAFETY: a prefetch is a hint that never faults; `wrapping_add` makes
                    // no claim that the address is in bounds.
                    unsafe { _mm_prefetch(a.0.wrapping_add(c + i) as *const i8, _MM_HINT_T0) };
                    i += 16;
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (c, len);
    }

    /// Loose material at `c` before the step: the layers above the first wind-proof one
    /// present (infinite when there is none and bedrock is not wind-proof).
    ///
    /// Safety: `c` is a cell of the calling band's lines, not yet changed.
    unsafe fn loose(&self, c: usize) -> f32 {
        let mut sum = 0.0f32;
        for (t, &r) in self.layers.iter().zip(self.sus) {
            let t = unsafe { t.get(c) };
            if t > 0.0 {
                if r <= 0.0 {
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

    /// What the wind picks up at cell `c` for a request of `q` metres (E·h_barrier) with
    /// `room` metres of capacity left, walking down from the exposed layer: each layer
    /// gives at most its thickness of min(R·q, room) times the share of the request still
    /// unmet.
    ///
    /// Safety: as [`Sweep::loose`].
    #[inline]
    unsafe fn erode(&self, c: usize, q: f32, room: f32) -> f32 {
        let nl = self.layers.len();
        let mut unmet = 1.0f32;
        let mut got = 0.0f32;
        for (k, &r) in self.sus.iter().enumerate() {
            let thick = if k < nl {
                unsafe { self.layers[k].get(c) }
            } else {
                f32::INFINITY
            };
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

    /// Applies what cell `c` loses and gains: the loss from the top layer down, the gain
    /// into layer 0, both to the surface.
    ///
    /// Safety: as [`Sweep::loose`]; `c` is never read again in this step.
    #[inline(always)]
    unsafe fn apply(&self, c: usize, [e, d]: [f32; 2]) {
        // e and d are never −0 (sums of amounts ≥ 0 from +0), so this is
        // `e == 0.0 && d == 0.0` in one test.
        if e.to_bits() | d.to_bits() == 0 {
            return;
        }
        if let Some((top, below)) = self.layers.split_first() {
            let t0 = unsafe { top.at(c) };
            if e > 0.0 {
                let take = min_nn(e, *t0);
                *t0 -= take;
                let mut left = e - take;
                for t in below {
                    if left <= 0.0 {
                        break;
                    }
                    let t = unsafe { t.at(c) };
                    let take = min_nn(left, *t);
                    *t -= take;
                    left -= take;
                }
            }
            *t0 += d;
        }
        let z = unsafe { self.surface.at(c) };
        *z = (*z as f64 + d as f64 - e as f64) as f32;
    }

    /// One cell `c` of a line with height `hc` (before the step), the cell before it
    /// `prev_c` and the height after it `h_next` (its own where there is none, `!NEXT`),
    /// `d_here` from the cell before and `d_next` to the next; the line's first cell if
    /// `FIRST`. Settles and applies the cell before, and leaves this cell's change in
    /// `st.pend` (applied here for the line's last cell).
    ///
    /// Safety: `c` and `prev_c` are cells of the calling band's line, `c` not yet changed.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn cell<const FIRST: bool, const NEXT: bool>(
        &self,
        st: &mut LineState,
        c: usize,
        prev_c: usize,
        hc: f32,
        h_next: f32,
        d_here: f32,
        d_next: f32,
    ) {
        let (fall, talus, e_coef, k_wind) = (self.fall, self.talus, self.e_coef, self.k_wind);
        let (mut hw, mut s) = if FIRST {
            (hc, self.influx)
        } else {
            (st.hw - fall * d_here, st.s)
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
                e = unsafe { self.erode(c, e_coef * barrier, room) };
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
            let mut excess = st.prev_h - hn - d_here * talus;
            if excess > 0.0 {
                let fill = take(&mut s, excess);
                dep += fill;
                hn += fill;
                excess -= fill;
                if excess > 0.0 {
                    let [pe, pd] = st.pend;
                    let avail = unsafe { self.loose(prev_c) } - pe + pd;
                    let slide = min_nn(0.5 * excess, avail);
                    if slide > 0.0 {
                        let from_d = min_nn(slide, pd);
                        st.pend = [pe + (slide - from_d), pd - from_d];
                        st.sums.eroded += slide as f64;
                        dep += slide;
                        hn += slide;
                    }
                }
            }
            // The cell before is settled.
            unsafe { self.apply(prev_c, st.pend) };
        }
        if !NEXT && self.closed {
            // A closed edge is a wall: the load settles before it (§4.3.3 eq. 4.7 with the
            // wall as h_next: min(1, ∞) of it), on bare rock too.
            let wall = take(&mut s, f32::INFINITY);
            dep += wall;
            hn += wall;
        }
        st.pend = [e, dep];
        st.sums.eroded += e as f64;
        st.sums.deposited += dep as f64;
        st.prev_h = hn;
        st.hw = hw;
        if NEXT {
            st.s = s;
        } else {
            // Blown off the map (with closed borders, the rounding `take` left); the line
            // ends here.
            st.sums.lost += s;
            st.s = 0.0;
            unsafe { self.apply(c, st.pend) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Layers;

    /// The lane kernel's AVX2 build and its baseline build give the same bits, for winds
    /// whose lines are columns, with closed and open borders (tests/integration/wind_reference.rs checks the build this CPU picks
    /// against a line-by-line walk).
    #[test]
    fn lane_kernel_builds_give_the_same_bits() {
        #[cfg(target_arch = "x86_64")]
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut seed = 0x2009_u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        for (case, &dir) in [90.0f32, 63.0, 101.0, 270.0, 243.0, 117.0]
            .iter()
            .enumerate()
        {
            let (w, h) = (150 + 7 * case, 130 - 5 * case);
            let n = w * h;
            let layers: Vec<(String, Vec<f32>)> = (0..3)
                .map(|k| {
                    let t = (0..n)
                        .map(|_| if next() < 0.2 { 0.0 } else { 2.0 * next() })
                        .collect();
                    (format!("layer{k}"), t)
                })
                .collect();
            let layers = Layers::new(layers, n).unwrap();
            let surface: Vec<f32> = (0..n)
                .map(|i| {
                    let (x, y) = ((i % w) as f32, (i / w) as f32);
                    8.0 * (math::sin(x * 0.3) + math::cos(y * 0.2)) + 3.0 * next() + layers.total(i)
                })
                .collect();
            let mats: Vec<MaterialProps> = (0..4)
                .map(|k| MaterialProps {
                    wind_resistance: if k == 2 { 1.0 } else { 0.3 * k as f32 },
                    ..Default::default()
                })
                .collect();
            let params = Params {
                direction_deg: dir,
                erosion: 0.2,
                borders: if case % 2 == 0 {
                    Borders::Closed
                } else {
                    Borders::Open
                },
                ..Default::default()
            };
            let grid = Grid::new(w, h, 5.0).unwrap();
            let run = |avx2: bool| {
                let (mut s, mut l) = (surface.clone(), layers.clone());
                let mut wind = Wind::new(grid, params).unwrap();
                wind.avx2 = avx2;
                let reports: Vec<[u64; 3]> = (0..3)
                    .map(|_| {
                        let r = wind
                            .step(&mut TerrainMut::new(&mut s, &mut l), &mats)
                            .unwrap();
                        [r.eroded, r.deposited, r.blown_off].map(f64::to_bits)
                    })
                    .collect();
                let mut bits: Vec<u32> = s.iter().map(|v| v.to_bits()).collect();
                for k in 0..3 {
                    bits.extend(l.thickness(k).iter().map(|v| v.to_bits()));
                }
                (reports, bits)
            };
            let (a, b) = (run(false), run(true));
            assert!(a.1.iter().zip(&surface).any(|(&x, y)| x != y.to_bits()));
            assert_eq!(a.0, b.0, "wind {dir}°: reports differ");
            assert!(a.1 == b.1, "wind {dir}°: terrain differs");
        }
    }
}
