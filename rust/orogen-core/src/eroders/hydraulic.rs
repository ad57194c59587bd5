//! Hydraulic erosion: rain and sources fill a shallow-water layer that flows through
//! virtual pipes between cells, dissolves the terrain where it runs fast and steep, carries
//! the sediment along and drops it where it slows down.
//!
//! Mei, Decaudin & Hu 2007, "Fast Hydraulic Erosion Simulation and Visualization on GPU",
//! as digested from the thesis (seeds README, "Hydraulic step"):
//! thesis 001, hydraulic erosion chapter (pipe model after Mei et al. 2007).
//!
//! The four-pipe model is inherently a grid scheme: each cell exchanges water with its four
//! orthogonal neighbours through pipes of cross-section `A` and length `l`, so this process
//! runs on a [`Grid`] only (not on a random-point graph). One step, for time step `Δt`:
//!
//! 1. water: `d1 = d + Δt·rain` (uniform, or drops on random cells), plus sources;
//! 2. flux: `fᵢ ← max(0, fᵢ + Δt·A·g·Δhᵢ / l)`, `Δhᵢ` the drop of the water surface `b + d1`
//!    to neighbour `i`, divided by `1 + Δt·A·g·fᵢ / (C²·l²·d1³)` when bed friction is on
//!    (Chézy, semi-implicit; see below), then all four scaled by `K = min(1, d1·l² / (Σf·Δt))` so a cell never
//!    sends more water than it holds; closed borders have no pipe out, an open border's
//!    pipe leads to an outside cell whose water surface is the cell's bed (so an open
//!    border cell's bed is held: it neither dissolves nor deposits, step 4);
//! 3. `d2 = d1 + Δt·(Σ inflow − Σ outflow) / l²`; velocity from the mean flux through the
//!    cell, `u = ΔW_x / (l·d̄)`, `d̄ = (d1 + d2)/2` (zero where `d̄` ≤ `min_water_depth`);
//! 4. capacity `C = Kc·max(sin α, min_slope)·|v|` (times `d̄` under
//!    [`CapacityLaw::StreamPower`]): where `C > s` dissolve `Ks·(C − s)` from the
//!    terrain (walking down the layers, see [`dissolve`]), else deposit `Kd·(s − C)` into
//!    layer 0;
//! 5. sediment moves with the water (see below);
//! 6. evaporation `d = d2·(1 − Ke·Δt)`; with evaporation on, water shallower than
//!    `min_water_depth` evaporates entirely.
//!
//! Friction and rills. Mei's pipes are frictionless: on a slope the water speeds up until a
//! cell sends all it holds every step, so everywhere `|v| ≈ l/Δt` (20 m/s on 1 m cells at
//! the default `Δt`) whatever its depth. Capacity then does not grow with the water
//! carried, and rain on a plane erodes an even sheet with no rills. Bed friction (Chézy,
//! `v = C·sqrt(d·S)` in steady flow, tested against that law) makes the speed grow with
//! depth; the stream-power capacity makes what the water carries grow faster than its
//! discharge (`q·v`, that is `q^(4/3)` under Chézy), the condition for a sheet of flow to
//! break into channels (Smith & Bretherton 1972). With both, rain on a plane cuts rills
//! along the slope (tested); the thesis's law and no friction are the defaults.
//!
//! Sediment transport. Mei's step 5 is semi-Lagrangian (`s(x) = s1(x − v·Δt)`, bilinear),
//! which neither conserves mass nor stays bounded on coarse steps. Here sediment moves by
//! donor-cell (first-order upwind) transport along the same pipe fluxes as the water: a
//! cell sends through pipe `i` the fraction `fᵢ·Δt / (d1·l²)` of its sediment, the fraction
//! of its water leaving through that pipe. Every amount leaves one cell and enters its
//! neighbour (or leaves the map through an open border, counted), so sediment is conserved
//! to rounding; the fractions sum to at most 1 (the `K` scaling), so it never goes negative.
//!
//! Every pass is Jacobi-style over row chunks (read the old arrays, write new ones, or
//! change only the cell itself), so results are the same bytes whatever the thread count.
//! Rain drops come from a counter-based hash of (seed, step, cell), never from a per-thread
//! generator. Reported sums are taken per chunk and added in chunk order.
//!
//! Speed: each pass walks a row at a time. Border cells take the general path with their
//! pipe masks; the interior of a row runs in a loop of its own (`interior`), branch-free and
//! over row slices of one length, so the compiler vectorises it. Both paths share one
//! inlined per-cell function, so they compute the same expressions (interior masks are
//! literal 1s) and the bytes do not depend on which path a cell took.

use glam::Vec2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_finite, check_positive, check_range, OrogenError, Result};
use crate::field::Grid;
use crate::state::{buffer, MaterialProps, SimState, TerrainMut};

/// `field.name`, or `name` alone when `field` is empty.
fn sub(field: &str, name: &str) -> String {
    if field.is_empty() {
        name.to_string()
    } else {
        format!("{field}.{name}")
    }
}

/// Where the water comes from each step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Rain {
    /// No rain (sources only).
    None,
    /// The same depth on every cell: `rate_m_per_s·dt` metres per step (finite, ≥ 0).
    Uniform { rate_m_per_s: f32 },
    /// Drops on random cells: each step every cell is hit with probability `power` (in
    /// [0, 1], the fraction of cells hit per step), a hit adding `volume_m3` (finite, ≥ 0).
    Drops { power: f32, volume_m3: f32 },
}

/// A water source: a point (`radius_m` 0: the nearest cell) or a disc (every cell whose
/// centre lies within `radius_m`; the nearest cell when none does).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// Centre, metres east of the centre of cell (0, 0); must lie on the map.
    pub x_m: f32,
    /// Centre, metres south of the centre of cell (0, 0); must lie on the map.
    pub y_m: f32,
    /// Radius, metres (finite, ≥ 0).
    pub radius_m: f32,
    /// Water added, m³/s (finite, ≥ 0), shared evenly by the source's cells.
    pub rate_m3_per_s: f32,
    /// True: the source flows every step. False: it adds `rate_m3_per_s·dt` once, on the
    /// first step only.
    pub every_step: bool,
}

/// How the sediment capacity depends on the water.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CapacityLaw {
    /// Mei et al.'s and the thesis's `C = Kc·max(sin α, min_slope)·|v|`, metres of material;
    /// `Kc` in seconds.
    #[default]
    Speed,
    /// `C = Kc·max(sin α, min_slope)·|v|·d̄`: grows with the discharge per metre of width
    /// `|v|·d̄` times the slope, the stream power per unit bed area over `ρ·g`; `Kc` in s/m.
    /// With bed friction ([`Params::chezy`]) it cuts rills where [`CapacityLaw::Speed`]
    /// erodes an even sheet.
    StreamPower,
}

/// What happens at the map's edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Borders {
    /// No pipe leaves the map: water and sediment stay.
    #[default]
    Closed,
    /// Each border cell has a pipe out to an outside cell whose water surface is the
    /// border cell's bed; water and sediment leaving are counted in the [`StepReport`].
    Open,
}

/// Hydraulic erosion parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Time step, seconds (> 0, and below the pipe model's stability limit
    /// `sqrt(l³ / (2·A·g))`, checked against the grid). Default 0.05.
    pub dt: f32,
    /// Pipe cross-section `A`, m² (> 0). `None`: the cell area `cell_size²`. Default `None`.
    /// The pipe model's gravity waves travel like shallow water `A / l` metres deep.
    pub pipe_area_m2: Option<f32>,
    /// Gravity `g`, m/s² (> 0). Default 9.81.
    pub gravity: f32,
    /// Pipe length `l`, metres (> 0). `None`: the cell size. Default `None`.
    pub pipe_length_m: Option<f32>,
    /// Rain. Default `Uniform { rate_m_per_s: 1e-3 }`.
    pub rain: Rain,
    /// Water sources. Default none.
    pub sources: Vec<Source>,
    /// Evaporation `Ke`, 1/s (≥ 0, `Ke·dt` ≤ 1): each step keeps `1 − Ke·dt` of the water.
    /// Default 0.01.
    pub evaporation: f32,
    /// Sediment capacity `Kc`, seconds (metres of material per m/s of speed on a unit
    /// slope), ≥ 0. Default 0.05.
    pub capacity: f32,
    /// Dissolving `Ks`, fraction of the capacity deficit dissolved per step, in [0, 1].
    /// Default 0.1.
    pub dissolve: f32,
    /// Deposition `Kd`, fraction of the capacity excess dropped per step, in [0, 1].
    /// Default 0.1.
    pub deposit: f32,
    /// Smallest `sin α` used in the capacity (flat beds still carry sediment), in [0, 1].
    /// Default 0.01 (the thesis's value).
    pub min_slope: f32,
    /// Water shallower than this has no velocity; with evaporation on it evaporates
    /// entirely. Metres, ≥ 0. Default 1e-4.
    pub min_water_depth: f32,
    /// Map edges. Default `Closed`.
    pub borders: Borders,
    /// Bed friction, Chézy coefficient `C` in m^½/s (finite, > 0; 20–60 for rough to smooth
    /// beds): steady flow `d` deep on slope `S` runs at `C·sqrt(d·S)`. `None`: Mei's
    /// frictionless pipes. Default `None`.
    pub chezy: Option<f32>,
    /// Sediment capacity law. Default [`CapacityLaw::Speed`].
    pub capacity_law: CapacityLaw,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            dt: 0.05,
            pipe_area_m2: None,
            gravity: 9.81,
            pipe_length_m: None,
            rain: Rain::Uniform { rate_m_per_s: 1e-3 },
            sources: Vec::new(),
            evaporation: 0.01,
            capacity: 0.05,
            dissolve: 0.1,
            deposit: 0.1,
            min_slope: 0.01,
            min_water_depth: 1e-4,
            borders: Borders::Closed,
            chezy: None,
            capacity_law: CapacityLaw::Speed,
        }
    }
}

/// One row of the flux pass (step 2): the row's bed and depth and those of the rows above
/// and below (the row itself at a border), each exactly `w` cells, and the constants.
struct FluxRow<'a> {
    bc: &'a [f32],
    bu: &'a [f32],
    bd: &'a [f32],
    dc: &'a [f32],
    du: &'a [f32],
    dd: &'a [f32],
    /// Uniform rain added to every depth read, metres.
    rd: f32,
    /// 1 where the row has a row above / below, else 0.
    eu: f32,
    ed: f32,
    /// Pipe masks up / down (1 also at an open border).
    mu: f32,
    md: f32,
    inv_sy: f32,
    /// `Δt·A·g / l`.
    c: f32,
    area: f32,
    dt: f32,
    l: f32,
    edge: f32,
    min_slope: f32,
    /// Friction `Δt·A·g / (C²·l²)` (0: none).
    kf: f32,
}

impl FluxRow<'_> {
    /// The new fluxes and the slope factor of cell `x`, its left and right neighbours
    /// `xl`, `xr` (itself at a border) with masks `el`, `er`. Inlined, so interior cells'
    /// literal masks of 1 fold away and the interior loop vectorises.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn cell<const FRICTION: bool>(
        &self,
        frow: &mut [[f32; 4]],
        srow: &mut [f32],
        x: usize,
        xl: usize,
        xr: usize,
        el: f32,
        er: f32,
    ) {
        let (bi, di) = (self.bc[x], self.dc[x] + self.rd);
        let hi = bi + di;
        // An outside neighbour (e = 0) has its water surface at our bed.
        let hl = self.bc[xl] + (self.dc[xl] + self.rd) * el;
        let hr = self.bc[xr] + (self.dc[xr] + self.rd) * er;
        let hu = self.bu[x] + (self.du[x] + self.rd) * self.eu;
        let hd = self.bd[x] + (self.dd[x] + self.rd) * self.ed;
        let f = frow[x];
        let ml = el.max(self.edge);
        let mr = er.max(self.edge);
        // Chézy friction as a head loss `u²/(C²·d)` per metre, `u = f/(l·d)` the water's
        // speed, semi-implicit: each pipe's flux is divided by `1 + Δt·A·g·f/(C²·l²·d³)`
        // (exactly 1 without friction).
        // Without friction (`FRICTION` false) the divisions are left out, not made by 1.
        let mut fl = (f[0] + self.c * (hi - hl)).max(0.0) * ml;
        let mut fr = (f[1] + self.c * (hi - hr)).max(0.0) * mr;
        let mut fu = (f[2] + self.c * (hi - hu)).max(0.0) * self.mu;
        let mut fd = (f[3] + self.c * (hi - hd)).max(0.0) * self.md;
        if FRICTION {
            let kd = self.kf / (di * di * di + 1e-20);
            fl /= 1.0 + kd * f[0];
            fr /= 1.0 + kd * f[1];
            fu /= 1.0 + kd * f[2];
            fd /= 1.0 + kd * f[3];
        }
        let sum = fl + fr + fu + fd;
        // Computed unconditionally, then selected (branch-free, so the loop vectorises;
        // a 0/0 is never used).
        let k = (di * self.area / (sum * self.dt)).min(1.0);
        let k = if sum > 0.0 { k } else { 0.0 };
        frow[x] = [fl * k, fr * k, fu * k, fd * k];
        let span_x = (el + er) * self.l;
        let gx = (self.bc[xr] - self.bc[xl]) / span_x;
        let gx = if span_x > 0.0 { gx } else { 0.0 };
        let gy = (self.bd[x] - self.bu[x]) * self.inv_sy;
        let t2 = gx * gx + gy * gy;
        srow[x] = (t2 / (1.0 + t2)).sqrt().max(self.min_slope);
    }

    /// The whole row: border cells, then the interior.
    fn row<const FRICTION: bool>(&self, frow: &mut [[f32; 4]], srow: &mut [f32]) {
        let w = self.bc.len();
        if w == 1 {
            self.cell::<FRICTION>(frow, srow, 0, 0, 0, 0.0, 0.0);
            return;
        }
        self.cell::<FRICTION>(frow, srow, 0, 0, 1, 0.0, 1.0);
        self.interior::<FRICTION>(frow, srow);
        self.cell::<FRICTION>(frow, srow, w - 1, w - 2, w - 1, 1.0, 0.0);
    }

    /// Every cell of the row but the first and last: a loop of its own so that it
    /// vectorises (nothing from it is used after it).
    #[inline(never)]
    fn interior<const FRICTION: bool>(&self, frow: &mut [[f32; 4]], srow: &mut [f32]) {
        let w = self.bc.len();
        if w < 3 {
            return;
        }
        for x in 1..w - 1 {
            self.cell::<FRICTION>(frow, srow, x, x - 1, x + 1, 1.0, 1.0);
        }
    }
}

/// One row of the depth pass (steps 3 and 4 up to the capacity): the fluxes of the row and
/// of the rows above and below (the row itself at a border), its depths, and the constants.
struct DepthRow<'a> {
    fc: &'a [[f32; 4]],
    fu: &'a [[f32; 4]],
    fd: &'a [[f32; 4]],
    d: &'a [f32],
    /// 1 where the row has a row above / below, else 0.
    eu: f32,
    ed: f32,
    rd: f32,
    dt_area: f32,
    keep: f32,
    cut: f32,
    min_depth: f32,
    l: f32,
    kc: f32,
    /// 1 under [`CapacityLaw::StreamPower`], else 0.
    cd: f32,
}

/// What [`DepthRow::cell`] found at one cell.
struct Water {
    /// Depth after rain, metres.
    d1: f32,
    /// Water leaving through open border pipes, m³/s.
    border: f32,
    speed: f32,
    /// Sediment capacity, metres.
    cap: f32,
}

impl DepthRow<'_> {
    /// Cell `x` with left and right neighbours `xl`, `xr` (itself at a border) and masks
    /// `el`, `er`; `slope` its slope factor. Writes the new depth (after evaporation) and
    /// velocity.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn cell(
        &self,
        x: usize,
        xl: usize,
        xr: usize,
        el: f32,
        er: f32,
        slope: f32,
        dn: &mut [f32],
        vel: &mut [Vec2],
    ) -> Water {
        self.water(
            [self.fc, self.fu, self.fd],
            self.d,
            x,
            [xl, xr],
            [el, er],
            slope,
            dn,
            vel,
        )
    }

    /// [`DepthRow::cell`] over the row slices given (the same as `self`'s, re-sliced where
    /// the caller wants their lengths known). Inlined, so interior cells' literal masks of 1
    /// fold away.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn water(
        &self,
        [fcs, fus, fds]: [&[[f32; 4]]; 3],
        d: &[f32],
        x: usize,
        [xl, xr]: [usize; 2],
        [el, er]: [f32; 2],
        slope: f32,
        dn: &mut [f32],
        vel: &mut [Vec2],
    ) -> Water {
        let (eu, ed) = (self.eu, self.ed);
        let fc = fcs[x];
        let from_l = fcs[xl][1] * el;
        let from_r = fcs[xr][0] * er;
        let from_u = fus[x][3] * eu;
        let from_d = fds[x][2] * ed;
        let out = fc[0] + fc[1] + fc[2] + fc[3];
        let inflow = from_l + from_r + from_u + from_d;
        let d1 = d[x] + self.rd;
        let d2 = (d1 + (inflow - out) * self.dt_area).max(0.0);
        // Evaporation (step 6) on the new depth.
        let de = d2 * self.keep;
        dn[x] = if de < self.cut { 0.0 } else { de };
        // Water through open border pipes (zero on closed borders).
        let border = water_out(fc, [el, er, eu, ed]);
        let dbar = 0.5 * (d1 + d2);
        // Computed unconditionally, then selected (branch-free, so the loop vectorises).
        let inv = 1.0 / (self.l * dbar);
        let inv = if dbar > self.min_depth { inv } else { 0.0 };
        let u = 0.5 * (from_l - fc[0] + fc[1] - from_r) * inv;
        let v = 0.5 * (from_u - fc[2] + fc[3] - from_d) * inv;
        vel[x] = Vec2::new(u, v);
        let speed = (u * u + v * v).sqrt();
        Water {
            d1,
            border,
            speed,
            // `cd` is 1 under the stream-power law, else 0 (the factor is then exactly 1).
            cap: self.kc * slope * speed * (self.cd * dbar + (1.0 - self.cd)),
        }
    }

    /// Every cell of an interior row but the first and last: new depth and velocity, and
    /// the capacity into `cap`. Returns the largest speed. A loop of its own, over slices
    /// of one known length, so that it vectorises.
    #[inline(never)]
    fn interior(&self, slope: &[f32], dn: &mut [f32], vel: &mut [Vec2], cap: &mut [f32]) -> f32 {
        let w = self.fc.len();
        let (slope, dn, vel, cap) = (&slope[..w], &mut dn[..w], &mut vel[..w], &mut cap[..w]);
        let f = [&self.fc[..w], &self.fu[..w], &self.fd[..w]];
        let d = &self.d[..w];
        let mut vmax = 0.0f32;
        if w < 3 {
            return vmax;
        }
        for x in 1..w - 1 {
            let c = self.water(f, d, x, [x - 1, x + 1], [1.0, 1.0], slope[x], dn, vel);
            cap[x] = c.cap;
            vmax = vmax.max(c.speed);
        }
        vmax
    }
}

/// Step 4 at one cell: dissolve or deposit.
struct Erode<'a> {
    ks: f32,
    kd: f32,
    dt_area: f32,
    /// Dissolubility per layer, then bedrock.
    diss: &'a [f32],
}

impl Erode<'_> {
    /// Dissolves or deposits at cell `x` of the row slices (`k` in the chunk's layer
    /// slices) with capacity `cap`, then sets its sediment per unit outflow from its depth
    /// `d1`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn cell(
        &self,
        x: usize,
        k: usize,
        cap: f32,
        d1: f32,
        sed: &mut [f32],
        bed: &mut [f32],
        q: &mut [f32],
        lay: &mut [&mut [f32]],
    ) {
        let s = sed[x];
        let b = bed[x];
        let mut s1 = s;
        if cap > s {
            let ask = self.ks * (cap - s);
            let taken = if lay.is_empty() {
                ask * self.diss[0]
            } else {
                dissolve(ask, lay, k, self.diss)
            };
            let bn = b - taken;
            // What the surface really lost, so material is conserved to the bit of the
            // f32 heights.
            s1 = s + (b - bn);
            bed[x] = bn;
        } else {
            let drop = self.kd * (s - cap);
            let bn = b + drop;
            let gained = bn - b;
            if gained <= s {
                s1 = s - gained;
                bed[x] = bn;
                if let Some(top) = lay.first_mut() {
                    top[k] += gained;
                }
            }
        }
        sed[x] = s1;
        q[x] = if d1 > 0.0 {
            s1 * self.dt_area / d1
        } else {
            0.0
        };
    }
}

/// One row of the sediment pass (step 5): fluxes and sediment per unit outflow of the row
/// and of the rows above and below (the row itself at a border), and its sediment.
struct SedRow<'a> {
    f: [&'a [[f32; 4]]; 3],
    q: [&'a [f32]; 3],
    s1: &'a [f32],
    /// 1 where the row has a row above / below, else 0.
    eu: f32,
    ed: f32,
}

impl SedRow<'_> {
    /// The new sediment of cell `x` with left and right neighbours `xl`, `xr` (itself at a
    /// border) and masks `el`, `er`, and what it sent out through open borders; over the
    /// row slices given (`self`'s, re-sliced where the caller wants their lengths known).
    #[inline(always)]
    fn cell(
        &self,
        [fc, fu, fd]: [&[[f32; 4]]; 3],
        [qc, qu, qd]: [&[f32]; 3],
        s1: &[f32],
        x: usize,
        [xl, xr]: [usize; 2],
        [el, er]: [f32; 2],
    ) -> (f32, f32) {
        let (eu, ed) = (self.eu, self.ed);
        let f = fc[x];
        let q = qc[x];
        let gone = q * f[0] + q * f[1] + q * f[2] + q * f[3];
        let came = qc[xl] * fc[xl][1] * el
            + qc[xr] * fc[xr][0] * er
            + qu[x] * fu[x][3] * eu
            + qd[x] * fd[x][2] * ed;
        let border = sediment_out(q, f, [el, er, eu, ed]);
        ((s1[x] - gone + came).max(0.0), border)
    }

    /// Every cell of an interior row but the first and last (no open border pipes there):
    /// a loop of its own, over slices of one known length, so that it vectorises.
    #[inline(never)]
    fn interior(&self, out: &mut [f32]) {
        let w = self.s1.len();
        if w < 3 {
            return;
        }
        let out = &mut out[..w];
        let f = [&self.f[0][..w], &self.f[1][..w], &self.f[2][..w]];
        let q = [&self.q[0][..w], &self.q[1][..w], &self.q[2][..w]];
        let s1 = &self.s1[..w];
        // An index loop: the iterator form does not vectorise.
        #[allow(clippy::needless_range_loop)]
        for x in 1..w - 1 {
            out[x] = self.cell(f, q, s1, x, [x - 1, x + 1], [1.0, 1.0]).0;
        }
    }
}

/// Water a cell sends out of the map through its border pipes, m³/s, from its fluxes `f`
/// and its neighbour masks `[left, right, up, down]` (0 where the map ends): zero on closed
/// borders and inside the map. The one expression [`Hydraulic::step`]'s sums and a tile's
/// ([`Hydraulic::border_losses`]) use.
#[inline(always)]
fn water_out(f: [f32; 4], [el, er, eu, ed]: [f32; 4]) -> f32 {
    f[0] * (1.0 - el) + f[1] * (1.0 - er) + f[2] * (1.0 - eu) + f[3] * (1.0 - ed)
}

/// Sediment a cell with sediment per unit outflow `q` sends out of the map through its
/// border pipes (as [`water_out`]).
#[inline(always)]
fn sediment_out(q: f32, f: [f32; 4], [el, er, eu, ed]: [f32; 4]) -> f32 {
    q * f[0] * (1.0 - el) + q * f[1] * (1.0 - er) + q * f[2] * (1.0 - eu) + q * f[3] * (1.0 - ed)
}

/// The water and sediment that left a `width`×`height` map through its open borders in one
/// step, m³, summed as [`Hydraulic::step`] sums them (per chunk of rows in cell order, in
/// f64, then the chunks in order), so the bytes equal its [`StepReport::water_lost_m3`] and
/// [`StepReport::sediment_lost_m3`]: `out(x, y)` gives a border cell's
/// [`Hydraulic::border_losses`] (only cells on the map's edge are asked; the others send
/// nothing out of the map, and adding their zeros changes no sum).
pub fn border_sums(
    width: usize,
    height: usize,
    dt: f32,
    cell_area: f32,
    mut out: impl FnMut(usize, usize) -> (f32, f32),
) -> (f64, f64) {
    let rows = chunk_rows(width);
    let mut chunks = Vec::with_capacity(height.div_ceil(rows));
    for y0 in (0..height).step_by(rows) {
        let (mut water, mut sed) = (0.0f64, 0.0f64);
        for y in y0..(y0 + rows).min(height) {
            let edge_row = y == 0 || y + 1 == height;
            let mut add = |x: usize| {
                let (w, s) = out(x, y);
                water += w as f64;
                sed += s as f64;
            };
            if edge_row {
                (0..width).for_each(&mut add);
            } else {
                add(0);
                if width > 1 {
                    add(width - 1);
                }
            }
        }
        chunks.push((water * dt as f64, sed));
    }
    (
        chunks.iter().map(|c| c.0).sum(),
        chunks.iter().map(|c| c.1).sum::<f64>() * cell_area as f64,
    )
}

/// Largest accepted time step, seconds.
pub const MAX_DT: f64 = 1e4;

/// Checks that `value` is finite and ≥ 0.
fn check_non_negative(field: &str, value: f64) -> Result<()> {
    check_range(field, value, 0.0, f64::MAX)
}

impl Params {
    /// Checks ranges; `field` prefixes error names (e.g. `stages[2].Hydraulic`). The checks
    /// that need the grid (sources on the map, the stability limit) are in
    /// [`Params::validate_on`].
    pub fn validate(&self, field: &str) -> Result<()> {
        check_positive(&sub(field, "dt"), self.dt as f64)?;
        check_range(&sub(field, "dt"), self.dt as f64, 0.0, MAX_DT)?;
        if let Some(a) = self.pipe_area_m2 {
            check_positive(&sub(field, "pipe_area_m2"), a as f64)?;
        }
        check_positive(&sub(field, "gravity"), self.gravity as f64)?;
        if let Some(l) = self.pipe_length_m {
            check_positive(&sub(field, "pipe_length_m"), l as f64)?;
        }
        match self.rain {
            Rain::None => {}
            Rain::Uniform { rate_m_per_s } => {
                check_non_negative(&sub(field, "rain.rate_m_per_s"), rate_m_per_s as f64)?
            }
            Rain::Drops { power, volume_m3 } => {
                check_range(&sub(field, "rain.power"), power as f64, 0.0, 1.0)?;
                check_non_negative(&sub(field, "rain.volume_m3"), volume_m3 as f64)?;
            }
        }
        for (i, s) in self.sources.iter().enumerate() {
            let f = sub(field, &format!("sources[{i}]"));
            check_finite(&format!("{f}.x_m"), s.x_m as f64)?;
            check_finite(&format!("{f}.y_m"), s.y_m as f64)?;
            check_non_negative(&format!("{f}.radius_m"), s.radius_m as f64)?;
            check_non_negative(&format!("{f}.rate_m3_per_s"), s.rate_m3_per_s as f64)?;
        }
        let ke = sub(field, "evaporation");
        check_non_negative(&ke, self.evaporation as f64)?;
        if self.evaporation as f64 * self.dt as f64 > 1.0 {
            return Err(OrogenError::invalid(
                ke,
                format!(
                    "evaporation·dt must be ≤ 1, got {}·{}",
                    self.evaporation, self.dt
                ),
            ));
        }
        check_non_negative(&sub(field, "capacity"), self.capacity as f64)?;
        check_range(&sub(field, "dissolve"), self.dissolve as f64, 0.0, 1.0)?;
        check_range(&sub(field, "deposit"), self.deposit as f64, 0.0, 1.0)?;
        check_range(&sub(field, "min_slope"), self.min_slope as f64, 0.0, 1.0)?;
        check_non_negative(&sub(field, "min_water_depth"), self.min_water_depth as f64)?;
        if let Some(c) = self.chezy {
            check_positive(&sub(field, "chezy"), c as f64)?;
            check_range(&sub(field, "chezy"), c as f64, 0.0, 1e6)?;
        }
        Ok(())
    }

    /// [`Params::validate`], then the checks against `grid`: every source on the map (a
    /// cell covers half a cell either side of its centre) and `dt` below the stability
    /// limit of the pipe model.
    pub fn validate_on(&self, grid: &Grid, field: &str) -> Result<()> {
        self.validate(field)?;
        grid.require_square(if field.is_empty() { "Hydraulic" } else { field })?;
        let l = grid.cell_size as f64;
        let (xmax, ymax) = (
            (grid.width as f64 - 0.5) * l,
            (grid.height as f64 - 0.5) * l,
        );
        for (i, s) in self.sources.iter().enumerate() {
            let (x, y) = (s.x_m as f64, s.y_m as f64);
            if x < -0.5 * l || x > xmax || y < -0.5 * l || y > ymax {
                return Err(OrogenError::invalid(
                    sub(field, &format!("sources[{i}]")),
                    format!(
                        "centre ({x}, {y}) m lies outside the map, which spans \
                         [{}, {xmax}] × [{}, {ymax}] m",
                        -0.5 * l,
                        -0.5 * l
                    ),
                ));
            }
        }
        let (a, pl) = self.pipes(grid);
        let limit = (pl as f64).powi(3) / (2.0 * a as f64 * self.gravity as f64);
        let limit = limit.sqrt();
        if self.dt as f64 >= limit {
            return Err(OrogenError::invalid(
                sub(field, "dt"),
                format!(
                    "must be below the pipe model's stability limit sqrt(l³/(2·A·g)) = \
                     {limit:.4} s on this grid, got {}",
                    self.dt
                ),
            ));
        }
        Ok(())
    }

    /// Pipe cross-section and length on `grid`.
    pub fn pipes(&self, grid: &Grid) -> (f32, f32) {
        let l = grid.cell_size;
        (
            self.pipe_area_m2.unwrap_or(l * l),
            self.pipe_length_m.unwrap_or(l),
        )
    }
}

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Water added by rain and sources this step, m³.
    pub water_added_m3: f64,
    /// Water that left through open borders this step, m³.
    pub water_lost_m3: f64,
    /// Sediment that left through open borders this step, m³ of material.
    pub sediment_lost_m3: f64,
    /// Water on the map after the step, m³.
    pub water_total_m3: f64,
    /// Suspended sediment on the map after the step, m³ of material.
    pub sediment_total_m3: f64,
    /// Largest water speed of the step, m/s.
    pub max_speed: f32,
}

/// The hydraulic process on one grid: parameters, source cells and scratch buffers.
pub struct Hydraulic {
    grid: Grid,
    params: Params,
    seed: u64,
    steps: u64,
    /// Source cells and the depth each adds per step, metres, and whether every step.
    sources: Vec<(usize, f32, bool)>,
    /// Next water depth.
    d_next: Vec<f32>,
    /// Next sediment.
    s_next: Vec<f32>,
    /// `max(sin α, min_slope)` per cell.
    slope: Vec<f32>,
    /// Sediment per unit outflow: `s1·Δt / (d1·l²)`, so pipe `i` carries `q·fᵢ`.
    q: Vec<f32>,
    /// Where `grid` lies in the whole map, when it is a window of it (a tile grown by its
    /// halo, [`Hydraulic::window`]): the rain drops' hash takes whole-map cell indices.
    window: Option<Window>,
}

/// A window's place in the whole map: its first cell and the map's width.
#[derive(Clone, Copy, Debug)]
struct Window {
    x0: usize,
    y0: usize,
    map_width: usize,
}

/// Rows per parallel chunk: about 16k cells.
fn chunk_rows(width: usize) -> usize {
    (16384 / width.max(1)).max(1)
}

/// SplitMix64 finaliser.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in [0, 1) from (seed, step, cell), the same on any thread.
#[inline(always)]
fn uniform(step_key: u64, cell: usize) -> f32 {
    (mix(step_key ^ cell as u64) >> 40) as f32 * (1.0 / 16_777_216.0)
}

/// Dissolves up to `request` metres at one cell from `layers` (thickness per layer, top
/// down, at index `i`) and bedrock, each material scaled by its dissolubility `diss[k]`
/// (`diss.len() == layers.len() + 1`). Returns the thickness dissolved.
///
/// The thesis's walk: layer `k` is asked `frac·request·diss[k]` (`frac` starting at 1). If
/// it holds that much it gives it and the walk ends. Otherwise it gives all it has and
/// disappears, and the unmet part of the ask, `1 − thickness/ask`, passes on: the next
/// material is asked `frac·request` times its own dissolubility. (Asked 10 cm, a 6 cm layer
/// gives 6 cm and 40 % of the request passes on.) Empty layers are skipped; an insoluble
/// layer (dissolubility 0) protects what lies under it. Bedrock never runs out.
#[inline]
pub fn dissolve(request: f32, layers: &mut [&mut [f32]], i: usize, diss: &[f32]) -> f32 {
    let mut frac = 1.0f32;
    let mut total = 0.0f32;
    for (t, &dk) in layers.iter_mut().zip(diss) {
        let have = t[i];
        if have <= 0.0 {
            continue;
        }
        let want = frac * request * dk;
        if want <= have {
            t[i] = have - want;
            return total + want;
        }
        t[i] = 0.0;
        total += have;
        frac *= 1.0 - have / want;
    }
    total + frac * request * diss[layers.len()]
}

impl Hydraulic {
    /// The process on `grid`; `seed` drives the rain drops. Checks `params` against the
    /// grid (error names without a prefix, e.g. `rain.power`, `sources[1]`).
    pub fn new(grid: Grid, params: Params, seed: u64) -> Result<Self> {
        params.validate_on(&grid, "")?;
        let sources = Self::sources_on(&grid, &params);
        Self::with_sources(grid, params, seed, sources, None)
    }

    /// The process on the window `w`×`h` at `(x0, y0)` of the whole map `map` (a tile grown
    /// by its halo): the same step as the whole map's [`Hydraulic::new`] over those cells,
    /// its sources the whole map's that fall in the window and its rain drops hashed from
    /// whole-map cell indices. The window's cut edges are treated as map borders, so the
    /// cells near them come out wrong: the caller overwrites them (a halo).
    pub fn window(
        map: Grid,
        [x0, y0, w, h]: [usize; 4],
        params: Params,
        seed: u64,
    ) -> Result<Self> {
        params.validate_on(&map, "")?;
        if x0 + w > map.width || y0 + h > map.height || w == 0 || h == 0 {
            return Err(OrogenError::invalid(
                "window",
                format!(
                    "{w}x{h} cells at ({x0}, {y0}) do not lie in the {}x{} map",
                    map.width, map.height
                ),
            ));
        }
        let sources = Self::sources_on(&map, &params)
            .into_iter()
            .filter_map(|(c, dd, every)| {
                let (x, y) = (c % map.width, c / map.width);
                let inside = (x0..x0 + w).contains(&x) && (y0..y0 + h).contains(&y);
                inside.then(|| ((y - y0) * w + x - x0, dd, every))
            })
            .collect();
        let grid = Grid::new(w, h, map.cell_size)?;
        let window = Window {
            x0,
            y0,
            map_width: map.width,
        };
        Self::with_sources(grid, params, seed, sources, Some(window))
    }

    fn with_sources(
        grid: Grid,
        params: Params,
        seed: u64,
        sources: Vec<(usize, f32, bool)>,
        window: Option<Window>,
    ) -> Result<Self> {
        let n = grid.len();
        Ok(Hydraulic {
            grid,
            params,
            seed,
            steps: 0,
            sources,
            d_next: buffer(n, 0.0, "hydraulic")?,
            s_next: buffer(n, 0.0, "hydraulic")?,
            slope: buffer(n, 0.0, "hydraulic")?,
            q: buffer(n, 0.0, "hydraulic")?,
            window,
        })
    }

    /// The source cells of `params` on `grid` and the depth each adds per step.
    fn sources_on(grid: &Grid, params: &Params) -> Vec<(usize, f32, bool)> {
        let l = grid.cell_size;
        let area = grid.cell_area();
        let mut sources = Vec::new();
        for s in &params.sources {
            let (cx, cy) = (s.x_m / l, s.y_m / l);
            let r = s.radius_m / l;
            let (x0, x1) = (
                (cx - r).floor().max(0.0) as usize,
                ((cx + r).ceil().max(0.0) as usize).min(grid.width - 1),
            );
            let (y0, y1) = (
                (cy - r).floor().max(0.0) as usize,
                ((cy + r).ceil().max(0.0) as usize).min(grid.height - 1),
            );
            let mut cells = Vec::new();
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let (dx, dy) = (x as f32 - cx, y as f32 - cy);
                    if dx * dx + dy * dy <= r * r {
                        cells.push(grid.index(x, y));
                    }
                }
            }
            if cells.is_empty() {
                let x = (cx.round().max(0.0) as usize).min(grid.width - 1);
                let y = (cy.round().max(0.0) as usize).min(grid.height - 1);
                cells.push(grid.index(x, y));
            }
            let depth = s.rate_m3_per_s * params.dt / (cells.len() as f32 * area);
            sources.extend(cells.into_iter().map(|c| (c, depth, s.every_step)));
        }
        sources
    }

    /// What cell `i` of this grid sent out of the map through its border pipes in the last
    /// step: water (m³/s) and sediment (metres of material over the cell),
    /// from `flux` (the state's fluxes after the step) and `[left, right, up, down]`, which
    /// neighbours the whole map has (a window's cut edges are not the map's). The terms of
    /// [`border_sums`].
    pub fn border_losses(&self, flux: &[[f32; 4]], i: usize, has: [bool; 4]) -> (f32, f32) {
        let e = has.map(|b| b as u32 as f32);
        (water_out(flux[i], e), sediment_out(self.q[i], flux[i], e))
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The depth the sources add to each cell on step `step` (0 the first), metres, summed
    /// over the sources in order: the water a GPU step adds before its passes (issue #42;
    /// uniform rain is added as the passes read the depth, as here).
    pub fn source_depths(&self, step: u64) -> Vec<f32> {
        let mut add = vec![0.0f32; self.grid.len()];
        for &(c, dd, every) in &self.sources {
            if every || step == 0 {
                add[c] += dd;
            }
        }
        add
    }

    /// Bytes of per-cell state the process keeps beside the terrain and [`SimState`].
    pub const SCRATCH_BYTES_PER_CELL: usize = 16;

    /// One step. `materials` holds one entry per layer, top down, then bedrock
    /// (`terrain.layers.len() + 1`); a terrain without layers uses `materials[0]` as its
    /// bedrock. Creates the water, sediment, flux and velocity of `sim` when `None`.
    pub fn step(
        &mut self,
        terrain: &mut TerrainMut,
        sim: &mut SimState,
        materials: &[MaterialProps],
    ) -> Result<StepReport> {
        let n = self.grid.len();
        let nl = terrain.layers.len();
        terrain.check_grid(&self.grid)?;
        crate::state::validate_materials(materials, nl)?;
        let diss: Vec<f32> = materials.iter().map(|m| m.dissolubility).collect();
        let water = state_field(&mut sim.water_depth, n, 0.0, "water_depth")?;
        let sed = state_field(&mut sim.sediment, n, 0.0, "sediment")?;
        let flux = state_field(&mut sim.flux, n, [0.0; 4], "flux")?;
        let vel = state_field(&mut sim.velocity, n, Vec2::ZERO, "velocity")?;

        let p = &self.params;
        let (w, h) = (self.grid.width, self.grid.height);
        let l = self.grid.cell_size;
        let area = self.grid.cell_area();
        let dt = p.dt;
        let (pipe_a, pipe_l) = p.pipes(&self.grid);
        let cs = chunk_rows(w) * w;
        let open = p.borders == Borders::Open;
        let window = self.window;

        // 1. Water in. Uniform rain is not written here: the passes below add it as they
        //    read the depth (`rd`), which saves a pass over the map.
        let mut rd = 0.0f32;
        let step_key = mix(self.seed ^ mix(self.steps.wrapping_add(0x68_7964_726f)));
        let mut added = match p.rain {
            Rain::None => 0.0,
            Rain::Uniform { rate_m_per_s } => {
                let dd = rate_m_per_s * dt;
                rd = dd;
                dd as f64 * area as f64 * n as f64
            }
            Rain::Drops { power, volume_m3 } => {
                let dd = volume_m3 / area;
                let hits: Vec<u64> = water
                    .par_chunks_mut(cs)
                    .enumerate()
                    .map(|(ci, chunk)| {
                        let mut hits = 0u64;
                        for (k, d) in chunk.iter_mut().enumerate() {
                            let i = ci * cs + k;
                            // The whole map's cell index (a window's cells hash as there).
                            let cell = match window {
                                None => i,
                                Some(o) => (o.y0 + i / w) * o.map_width + o.x0 + i % w,
                            };
                            let hit = uniform(step_key, cell) < power;
                            *d += if hit { dd } else { 0.0 };
                            hits += hit as u64;
                        }
                        hits
                    })
                    .collect();
                hits.iter().sum::<u64>() as f64 * dd as f64 * area as f64
            }
        };
        for &(c, dd, every) in &self.sources {
            if every || self.steps == 0 {
                water[c] += dd;
                added += dd as f64 * area as f64;
            }
        }

        // 2. Fluxes from the water surface, scaled so no cell sends more than it holds;
        //    with them the slope factor of the capacity (it reads the neighbours' beds,
        //    which step 4 changes).
        {
            let b: &[f32] = terrain.surface;
            let d: &[f32] = water;
            let c = dt * pipe_a * p.gravity / pipe_l;
            let min_slope = p.min_slope;
            let kf = p.chezy.map_or(0.0, |cz| {
                dt * pipe_a * p.gravity / (cz * cz * pipe_l * pipe_l)
            });
            let edge = if open { 1.0f32 } else { 0.0 };
            flux.par_chunks_mut(cs)
                .zip(self.slope.par_chunks_mut(cs))
                .enumerate()
                .for_each(|(ci, (fch, sch))| {
                    let y0 = ci * cs / w;
                    for (ry, (frow, srow)) in fch.chunks_mut(w).zip(sch.chunks_mut(w)).enumerate() {
                        let y = y0 + ry;
                        let row = y * w;
                        let up = if y > 0 { row - w } else { row };
                        let dn = if y + 1 < h { row + w } else { row };
                        let (eu, ed) = ((y > 0) as u32 as f32, (y + 1 < h) as u32 as f32);
                        let (mu, md) = (eu.max(edge), ed.max(edge));
                        let span_y = (eu + ed) * l;
                        let inv_sy = if span_y > 0.0 { 1.0 / span_y } else { 0.0 };
                        // Row slices of exactly `w` cells, so the interior loop below has no
                        // bounds checks and vectorises.
                        let (bc, bu, bd) = (&b[row..row + w], &b[up..up + w], &b[dn..dn + w]);
                        let (dc, du, dd) = (&d[row..row + w], &d[up..up + w], &d[dn..dn + w]);
                        let (frow, srow) = (&mut frow[..w], &mut srow[..w]);
                        let r = FluxRow {
                            bc,
                            bu,
                            bd,
                            dc,
                            du,
                            dd,
                            rd,
                            eu,
                            ed,
                            mu,
                            md,
                            inv_sy,
                            c,
                            area,
                            dt,
                            l,
                            edge,
                            min_slope,
                            kf,
                        };
                        if kf > 0.0 {
                            r.row::<true>(frow, srow);
                        } else {
                            r.row::<false>(frow, srow);
                        }
                    }
                });
        }

        // 3 + 4. New depth, velocity, then dissolve or deposit at each cell.
        let mut layer_chunks: Vec<Vec<&mut [f32]>> = (0..n.div_ceil(cs))
            .map(|_| Vec::with_capacity(nl))
            .collect();
        for t in terrain.layers.thickness_all_mut() {
            for (ci, ch) in t.chunks_mut(cs).enumerate() {
                layer_chunks[ci].push(ch);
            }
        }
        let per_chunk: Vec<(f64, f32, f64)> = {
            let f: &[[f32; 4]] = flux;
            let d: &[f32] = water;
            let (kc, ks, kd) = (p.capacity, p.dissolve, p.deposit);
            let cd = (p.capacity_law == CapacityLaw::StreamPower) as u32 as f32;
            let min_depth = p.min_water_depth;
            let dt_area = dt / area;
            let keep = 1.0 - p.evaporation * dt;
            let cut = if p.evaporation > 0.0 {
                p.min_water_depth
            } else {
                0.0
            };
            (
                self.d_next.par_chunks_mut(cs),
                vel.par_chunks_mut(cs),
                terrain.surface.par_chunks_mut(cs),
                sed.par_chunks_mut(cs),
                self.q.par_chunks_mut(cs),
                self.slope.par_chunks(cs),
                layer_chunks,
            )
                .into_par_iter()
                .enumerate()
                .map(|(ci, (dn_ch, v_ch, b_ch, s_ch, q_ch, sl_ch, mut lay))| {
                    let base = ci * cs;
                    let mut lost = 0.0f64;
                    let mut vmax = 0.0f32;
                    let mut wsum = 0.0f64;
                    let y0 = base / w;
                    let rows = dn_ch.len() / w;
                    let erode = Erode {
                        ks,
                        kd,
                        dt_area,
                        diss: &diss,
                    };
                    for ry in 0..rows {
                        let y = y0 + ry;
                        let row = ry * w;
                        let g = base + row;
                        let up = if y > 0 { g - w } else { g };
                        let dn = if y + 1 < h { g + w } else { g };
                        let r = DepthRow {
                            fc: &f[g..g + w],
                            fu: &f[up..up + w],
                            fd: &f[dn..dn + w],
                            d: &d[g..g + w],
                            eu: (y > 0) as u32 as f32,
                            ed: (y + 1 < h) as u32 as f32,
                            rd,
                            dt_area,
                            keep,
                            cut,
                            min_depth,
                            l,
                            kc,
                            cd,
                        };
                        let dn_r = &mut dn_ch[row..row + w];
                        let v_r = &mut v_ch[row..row + w];
                        let q_r = &mut q_ch[row..row + w];
                        let s_r = &mut s_ch[row..row + w];
                        let b_r = &mut b_ch[row..row + w];
                        let sl_r = &sl_ch[row..row + w];
                        // One cell whole, border masks from `x`: water, then erosion.
                        macro_rules! whole {
                            ($x:expr) => {{
                                let x: usize = $x;
                                let (xl, el) = if x > 0 { (x - 1, 1.0) } else { (x, 0.0) };
                                let (xr, er) = if x + 1 < w { (x + 1, 1.0) } else { (x, 0.0) };
                                let c = r.cell(x, xl, xr, el, er, sl_r[x], dn_r, v_r);
                                wsum += dn_r[x] as f64;
                                lost += c.border as f64;
                                vmax = vmax.max(c.speed);
                                // An open border cell is the map's outlet: its outside
                                // neighbour's water surface is its own bed, so a bed that
                                // eroded would pull that base level down with it and dig the
                                // border into a trench without end (a wall of pits along the
                                // edge). Its bed neither erodes nor fills (capacity = load);
                                // water and sediment pass through it and leave.
                                let cap = if open { s_r[x] } else { c.cap };
                                erode.cell(x, row + x, cap, c.d1, s_r, b_r, q_r, &mut lay);
                            }};
                        }
                        if y == 0 || y + 1 == h || w < 3 {
                            for x in 0..w {
                                whole!(x);
                            }
                            continue;
                        }
                        whole!(0);
                        // The interior: water for the whole row (vectorised; the capacity
                        // goes into `q` until erosion replaces it), then erosion cell by cell
                        // (each cell changes only itself), sums in cell order.
                        vmax = vmax.max(r.interior(sl_r, dn_r, v_r, q_r));
                        for x in 1..w - 1 {
                            wsum += dn_r[x] as f64;
                            let d1 = r.d[x] + rd;
                            erode.cell(x, row + x, q_r[x], d1, s_r, b_r, q_r, &mut lay);
                        }
                        whole!(w - 1);
                    }
                    (lost * dt as f64, vmax, wsum)
                })
                .collect()
        };
        let water_lost: f64 = per_chunk.iter().map(|c| c.0).sum();
        let max_speed = per_chunk.iter().fold(0.0f32, |m, c| m.max(c.1));
        let water_total: f64 = per_chunk.iter().map(|c| c.2).sum();

        // 5. Sediment moves with the water (donor cell).
        let per_chunk: Vec<(f64, f64)> = {
            let f: &[[f32; 4]] = flux;
            let q: &[f32] = &self.q;
            let s1: &[f32] = sed;
            self.s_next
                .par_chunks_mut(cs)
                .enumerate()
                .map(|(ci, s_ch)| {
                    let base = ci * cs;
                    let (mut lost, mut ssum) = (0.0f64, 0.0f64);
                    let y0 = base / w;
                    let rows = s_ch.len() / w;
                    for ry in 0..rows {
                        let y = y0 + ry;
                        let row = ry * w;
                        let g = base + row;
                        let up = if y > 0 { g - w } else { g };
                        let dn = if y + 1 < h { g + w } else { g };
                        let r = SedRow {
                            f: [&f[g..g + w], &f[up..up + w], &f[dn..dn + w]],
                            q: [&q[g..g + w], &q[up..up + w], &q[dn..dn + w]],
                            s1: &s1[g..g + w],
                            eu: (y > 0) as u32 as f32,
                            ed: (y + 1 < h) as u32 as f32,
                        };
                        let s_r = &mut s_ch[row..row + w];
                        let mut whole = |x: usize, s_r: &mut [f32]| {
                            let (xl, el) = if x > 0 { (x - 1, 1.0) } else { (x, 0.0) };
                            let (xr, er) = if x + 1 < w { (x + 1, 1.0) } else { (x, 0.0) };
                            let (s, border) = r.cell(r.f, r.q, r.s1, x, [xl, xr], [el, er]);
                            s_r[x] = s;
                            lost += border as f64;
                        };
                        if y == 0 || y + 1 == h || w < 3 {
                            for x in 0..w {
                                whole(x, s_r);
                            }
                        } else {
                            whole(0, s_r);
                            r.interior(s_r);
                            whole(w - 1, s_r);
                        }
                        // The sum in cell order, whichever loop wrote the cells.
                        for &s in s_r.iter() {
                            ssum += s as f64;
                        }
                    }
                    (lost, ssum)
                })
                .collect()
        };
        std::mem::swap(water, &mut self.d_next);
        std::mem::swap(sed, &mut self.s_next);
        self.steps += 1;
        let a64 = area as f64;
        Ok(StepReport {
            water_added_m3: added,
            water_lost_m3: water_lost,
            sediment_lost_m3: per_chunk.iter().map(|c| c.0).sum::<f64>() * a64,
            water_total_m3: water_total * a64,
            sediment_total_m3: per_chunk.iter().map(|c| c.1).sum::<f64>() * a64,
            max_speed,
        })
    }
}

/// A state field, created as `n` copies of `zero` when absent; an error when its length
/// is not `n`.
fn state_field<'a, T: Clone>(
    slot: &'a mut Option<Vec<T>>,
    n: usize,
    zero: T,
    name: &str,
) -> Result<&'a mut Vec<T>> {
    let v = slot.get_or_insert_with(|| vec![zero; n]);
    if v.len() != n {
        return Err(OrogenError::invalid(
            name,
            format!("has {} values, the grid has {n} cells", v.len()),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dissolving_walks_down_the_layers_as_in_the_thesis() {
        // Asked 10 cm of a fully soluble 6 cm layer: it gives 6 cm and disappears, and 40 %
        // of the request (4 cm) is asked of the next layer, scaled by its dissolubility 0.5.
        let mut top = vec![0.06f32];
        let mut next = vec![1.0f32];
        let mut layers: Vec<&mut [f32]> = vec![&mut top, &mut next];
        let got = dissolve(0.1, &mut layers, 0, &[1.0, 0.5, 0.1]);
        assert!((got - 0.08).abs() < 1e-7, "dissolved {got}");
        assert_eq!(top[0], 0.0, "the top layer disappears");
        assert!(
            (next[0] - 0.98).abs() < 1e-7,
            "next layer gives 2 cm: {}",
            next[0]
        );
    }

    #[test]
    fn dissolving_scales_by_dissolubility_and_reaches_bedrock() {
        // Top layer of dissolubility 0.5 asked 10 cm: it is asked 5 cm and has 2 cm, so
        // 60 % of the request passes on; an empty layer is skipped; bedrock (0.25) gives
        // 0.6·10·0.25 = 1.5 cm.
        let mut top = vec![0.02f32];
        let mut empty = vec![0.0f32];
        let mut layers: Vec<&mut [f32]> = vec![&mut top, &mut empty];
        let got = dissolve(0.1, &mut layers, 0, &[0.5, 0.0, 0.25]);
        assert!((got - 0.035).abs() < 1e-7, "dissolved {got}");
        // An insoluble layer that is present stops the walk.
        let mut hard = vec![1.0f32];
        let mut layers: Vec<&mut [f32]> = vec![&mut hard];
        assert_eq!(dissolve(0.1, &mut layers, 0, &[0.0, 1.0]), 0.0);
    }

    #[test]
    fn drops_hit_about_power_of_the_cells() {
        let key = mix(7);
        let hits = (0..100_000).filter(|&c| uniform(key, c) < 0.1).count();
        assert!((9_000..11_000).contains(&hits), "{hits}");
    }
}
