//! Stream-power fluvial erosion under tectonic uplift, solved implicitly along the flow
//! graph (Cordonnier et al. 2016 §3–4; Braun & Willett 2013; FastFlow eq. 2–4):
//!
//! ```text
//! ∂h/∂t = u − k·A^m·S^n
//! ```
//!
//! `u` uplift (m/yr), `k` erodibility, `A` drainage area (m², or discharge m³/yr with
//! precipitation), `S` slope to the receiver. One step, with the time loop in view as in
//! fastscapelib: route (steepest descent + lakes) → uplift non-outlet nodes by `u·dt` →
//! accumulate drainage → solve the implicit equation node by node in stack order (outlets
//! first), so each node sees its receiver's new height.
//!
//! Lakes: with `lakes: Carve` a lake floor drains through its pass along reversed
//! receivers; a node not above its receiver's new height does not erode (fastscapelib's
//! SPL eroder does the same), so lake floors only rise with uplift until they spill.
//! With `lakes: Fill(epsilon)` lakes are filled (heights raised) before each step.
//!
//! Recipe syntax: `StreamPower(iterations: 100, dt: 5e4, k: Constant(5e-6))`,
//! `StreamPower(n: 2.0, m: 1.0, k: Constant(1e-9), lakes: Fill(epsilon: 0.01),
//! outlets: (borders: [South]), tolerance: 0.01, hydrology: false)`.

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use crate::error::{check_finite, check_positive, check_range, OrogenError, Result};
use crate::field::Grid;
use crate::flow::accumulate::accumulate;
use crate::flow::graph::FlowGraph;
use crate::flow::hydrology::{compute_maps_in, HydrologyParams};
use crate::flow::outlets::OutletParams;
use crate::flow::router::{FlowRouter, SinkMode};
use crate::recipe::{ParamInfo, ScalarSource};
use crate::runner::StageContext;
use crate::world::World;

/// Largest accepted iteration count.
pub const MAX_ITERATIONS: u32 = 1_000_000;
/// Largest accepted time step, years.
pub const MAX_DT: f64 = 1e9;
/// Largest accepted area exponent `m`.
pub const MAX_M: f64 = 5.0;
/// Largest accepted slope exponent `n`.
pub const MAX_N: f64 = 10.0;

/// Salt mixed into the recipe seed for a noise erodibility map.
const ERODIBILITY_SEED: u64 = 0x6572_6f64_6962_696c;
/// Salt mixed into the recipe seed for a noise precipitation map (the Hydrology stage's).
const PRECIPITATION_SEED: u64 = 0x7261_696e_6661_6c6c;

/// `StreamPower` stage parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StreamPowerParams {
    /// Number of time steps, 1..=1e6. Default 100.
    pub iterations: u32,
    /// Time step, years (> 0, ≤ 1e9). The scheme is implicit, so any step is stable; large
    /// steps only coarsen the history. Default 5e4.
    pub dt: f32,
    /// Erodibility `k`, m^(1−2m)/yr (with precipitation: m^(1−3m)·yr^(m−1)); ≥ 0, a
    /// constant or a map (image, noise). Steady relief scales with `u/k`. Default
    /// `Constant(5e-6)`.
    pub k: ScalarSource,
    /// Drainage-area exponent `m` (> 0, ≤ 5). Default 0.5.
    pub m: f32,
    /// Slope exponent `n` (> 0, ≤ 10); 1 is solved exactly, others by per-node Newton.
    /// Default 1.0.
    pub n: f32,
    /// Multiplier on the world's uplift map: `u = uplift × uplift_scale`, m/yr. 0 erodes an
    /// existing terrain without uplift; negative uplift (subsidence) is allowed. Default 1.
    pub uplift_scale: f32,
    /// Stop early once the largest height change of a step (uplift and erosion together)
    /// is below this, metres (> 0). Default: none (run every iteration).
    pub tolerance: Option<f32>,
    /// How closed depressions drain: `Carve` (through their pass; heights unchanged),
    /// `Fill(epsilon: m)` (filled before each step) or `None`. Default `Carve`.
    pub lakes: SinkMode,
    /// Where water leaves: open borders and sea level. Default: all four borders open.
    pub outlets: OutletParams,
    /// Precipitation, m/yr (≥ 0); when set, erosion uses discharge = area × precipitation
    /// (m³/yr, FastFlow) instead of drainage area. Default: none.
    pub precipitation: Option<ScalarSource>,
    /// At the stage's end, write the hydrology maps (drainage, water surface, lake depth,
    /// rivers, basins) of the eroded terrain with the same outlets, lakes and
    /// precipitation, so a bake shows rivers and lakes without a Hydrology stage.
    /// Default true.
    pub hydrology: bool,
}

impl Default for StreamPowerParams {
    fn default() -> Self {
        StreamPowerParams {
            iterations: 100,
            dt: 5e4,
            k: ScalarSource::Constant(5e-6),
            m: 0.5,
            n: 1.0,
            uplift_scale: 1.0,
            tolerance: None,
            lakes: SinkMode::Carve,
            outlets: OutletParams::default(),
            precipitation: None,
            hydrology: true,
        }
    }
}

const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "iterations",
        unit: "",
        min: 1.0,
        max: 1000.0,
        doc: "Number of time steps.",
    },
    ParamInfo {
        name: "dt",
        unit: "yr",
        min: 1e3,
        max: 1e6,
        doc: "Time step; implicit, so stable at any size.",
    },
    ParamInfo {
        name: "m",
        unit: "",
        min: 0.1,
        max: 1.5,
        doc: "Drainage-area exponent of the stream-power law (m/n ≈ 0.5 in nature).",
    },
    ParamInfo {
        name: "n",
        unit: "",
        min: 0.5,
        max: 3.0,
        doc: "Slope exponent of the stream-power law.",
    },
    ParamInfo {
        name: "uplift_scale",
        unit: "",
        min: 0.0,
        max: 10.0,
        doc: "Multiplier on the uplift map (0: erosion of an existing terrain only).",
    },
    ParamInfo {
        name: "tolerance",
        unit: "m",
        min: 0.0,
        max: 10.0,
        doc: "Stop once no height changes by more than this in a step.",
    },
];

impl StreamPowerParams {
    /// Scalar parameters with units and ranges, for editors (`k`, `precipitation`, `lakes`
    /// and `outlets` are edited as RON).
    pub fn describe() -> &'static [ParamInfo] {
        PARAMS
    }

    /// Checks ranges; `field` prefixes error names (e.g. `stages[0].StreamPower`).
    pub fn validate(&self, field: &str) -> Result<()> {
        crate::error::check_count(
            &format!("{field}.iterations"),
            self.iterations,
            MAX_ITERATIONS,
        )?;
        let dt = format!("{field}.dt");
        check_positive(&dt, self.dt as f64)?;
        check_range(&dt, self.dt as f64, 0.0, MAX_DT)?;
        validate_non_negative_source(&self.k, &format!("{field}.k"))?;
        let m = format!("{field}.m");
        check_positive(&m, self.m as f64)?;
        check_range(&m, self.m as f64, 0.0, MAX_M)?;
        let n = format!("{field}.n");
        check_positive(&n, self.n as f64)?;
        check_range(&n, self.n as f64, 0.0, MAX_N)?;
        check_finite(&format!("{field}.uplift_scale"), self.uplift_scale as f64)?;
        if let Some(t) = self.tolerance {
            check_positive(&format!("{field}.tolerance"), t as f64)?;
        }
        self.lakes.validate(&format!("{field}.lakes"))?;
        self.outlets.validate(&format!("{field}.outlets"))?;
        if let Some(p) = &self.precipitation {
            validate_non_negative_source(p, &format!("{field}.precipitation"))?;
        }
        Ok(())
    }

    /// The hydrology parameters matching this stage's routing.
    pub fn hydrology_params(&self) -> HydrologyParams {
        HydrologyParams {
            outlets: self.outlets.clone(),
            lakes: self.lakes,
            precipitation: self.precipitation.clone(),
            ..HydrologyParams::default()
        }
    }
}

/// A source's own checks, plus: a constant must be ≥ 0; an image's or noise's range too.
fn validate_non_negative_source(source: &ScalarSource, field: &str) -> Result<()> {
    source.validate(field)?;
    match source {
        ScalarSource::Constant(v) if *v < 0.0 => Err(OrogenError::invalid(
            field,
            format!("must be >= 0, got {v}"),
        )),
        ScalarSource::Image { min, max, .. } | ScalarSource::Noise { min, max, .. }
            if *min < 0.0 || *max < 0.0 =>
        {
            Err(OrogenError::invalid(
                field,
                format!("range must be >= 0, got min {min}, max {max}"),
            ))
        }
        _ => Ok(()),
    }
}

/// Checks a resolved map: every value finite and ≥ 0 (`allow_negative` for uplift).
fn check_map(field: &str, grid: Grid, data: &[f32], allow_negative: bool) -> Result<()> {
    if let Some(i) = data
        .iter()
        .position(|v| !v.is_finite() || (!allow_negative && *v < 0.0))
    {
        let (x, y) = grid.coords(i);
        let need = if allow_negative {
            "finite"
        } else {
            "finite and >= 0"
        };
        return Err(OrogenError::invalid(
            field,
            format!(
                "must be {need} everywhere, got {} at cell ({x}, {y})",
                data[i]
            ),
        ));
    }
    Ok(())
}

/// What one [`StreamPowerSolver::step`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Largest lowering by erosion in the step, metres.
    pub max_erosion: f32,
    /// Largest |Δh| over the whole step (uplift and erosion), metres; only measured when
    /// the solver was built with `measure_change`.
    pub max_change: Option<f32>,
}

/// The stream-power time loop over one grid, with every buffer reused between steps.
pub struct StreamPowerSolver {
    router: FlowRouter,
    lakes: SinkMode,
    m: f64,
    n: f64,
    dt: f64,
    /// Erodibility per cell.
    k: Vec<f32>,
    /// Uplift per cell, m/yr (already scaled).
    uplift: Vec<f32>,
    /// Cell area × precipitation per cell.
    weights: Vec<f32>,
    drainage: Vec<f32>,
    /// Heights before the step, when the change is measured.
    before: Option<Vec<f32>>,
}

impl StreamPowerSolver {
    /// A solver over `grid` with resolved maps: erodibility `k`, uplift (m/yr, already
    /// scaled) and optional precipitation (m/yr). `field` prefixes error names. Checks the
    /// maps and that the largest erosion factor `k·A^m·dt/dist^n` stays usable in f64.
    pub fn new(
        grid: Grid,
        params: &StreamPowerParams,
        k: Vec<f32>,
        uplift: Vec<f32>,
        precipitation: Option<&[f32]>,
        measure_change: bool,
        field: &str,
    ) -> Result<Self> {
        params.validate(field)?;
        let n_cells = grid.len();
        for (what, len) in [("k", k.len()), ("uplift", uplift.len())] {
            if len != n_cells {
                return Err(OrogenError::invalid(
                    format!("{field}.{what}"),
                    format!("has {len} values, the grid has {n_cells} cells"),
                ));
            }
        }
        check_map(&format!("{field}.k"), grid, &k, false)?;
        check_map("uplift", grid, &uplift, true)?;
        let mut weights = vec![grid.cell_area(); n_cells];
        if let Some(p) = precipitation {
            let pf = format!("{field}.precipitation");
            if p.len() != n_cells {
                return Err(OrogenError::invalid(
                    pf,
                    format!("has {} values, the grid has {n_cells} cells", p.len()),
                ));
            }
            check_map(&pf, grid, p, false)?;
            for (w, r) in weights.iter_mut().zip(p) {
                *w *= r;
            }
        }
        let (m, n, dt) = (params.m as f64, params.n as f64, params.dt as f64);
        // The largest factor any node can see: all the water through the shortest link.
        let k_max = k.iter().fold(0.0_f32, |a, &b| a.max(b)) as f64;
        let total: f64 = weights.iter().map(|&w| w as f64).sum();
        let f_max = k_max * total.powf(m) * dt / (grid.cell_size as f64).powf(n);
        let term = f_max * MAX_RELIEF.powf(n);
        if term.is_nan() || term > MAX_EROSION_TERM {
            return Err(OrogenError::invalid(
                format!("{field}.dt"),
                format!(
                    "k·A^m·dt/dist^n reaches {f_max:e}, so k·A^m·S^n·dt over {MAX_RELIEF} m of \
                     relief ({term:e}) overflows the implicit solve; lower dt, k or \
                     precipitation"
                ),
            ));
        }
        let router = FlowRouter::new(grid, &params.outlets)?;
        Ok(StreamPowerSolver {
            router,
            lakes: params.lakes,
            m,
            n,
            dt,
            k,
            uplift,
            weights,
            drainage: vec![0.0; n_cells],
            before: measure_change.then(|| vec![0.0; n_cells]),
        })
    }

    /// One time step over `heights` (route → uplift → accumulate → implicit erosion).
    pub fn step(&mut self, heights: &mut [f32]) -> Result<StepReport> {
        if let Some(before) = &mut self.before {
            before.copy_from_slice(heights);
        }
        self.router.route(heights, self.lakes)?;
        let graph = self.router.graph();
        // Unresolved pits (lakes: None) receive themselves like outlets but are not base
        // level: they rise with the uplift.
        for &pit in &self.router.roots()[self.router.outlet_root_count()..] {
            let i = pit as usize;
            if graph.receivers[i] == pit {
                heights[i] = (heights[i] as f64 + self.uplift[i] as f64 * self.dt) as f32;
            }
        }
        accumulate(graph, &self.weights, &mut self.drainage);
        let max_erosion = uplift_and_erode(
            graph,
            &self.drainage,
            NodeValues::from_slice(&self.k),
            NodeValues::from_slice(&self.uplift),
            self.m,
            self.n,
            self.dt,
            heights,
        )?;
        let max_change = self.before.as_ref().map(|before| {
            before
                .par_iter()
                .with_min_len(PAR_CHUNK)
                .zip(heights.par_iter())
                .map(|(a, b)| (a - b).abs())
                .reduce(|| 0.0, f32::max)
        });
        Ok(StepReport {
            max_erosion,
            max_change,
        })
    }

    /// The flow graph of the last step.
    pub fn graph(&self) -> &FlowGraph {
        self.router.graph()
    }

    /// Drainage area (m²) or discharge (m³/yr) of the last step.
    pub fn drainage(&self) -> &[f32] {
        &self.drainage
    }
}

/// Runs the stage: `iterations` steps (fewer once `tolerance` is reached), then the
/// hydrology maps when `hydrology` is on.
pub fn run_stage(p: &StreamPowerParams, world: &mut World, ctx: &mut StageContext) -> Result<()> {
    let field = &ctx.field_prefix();
    p.validate(field)?;
    let grid = world.grid();
    let k =
        p.k.resolve(grid, world.seed ^ ERODIBILITY_SEED, ctx.base_dir())?;
    let scale = p.uplift_scale;
    let uplift: Vec<f32> = world.uplift.data.iter().map(|u| u * scale).collect();
    let rain = match &p.precipitation {
        Some(src) => Some(src.resolve(grid, world.seed ^ PRECIPITATION_SEED, ctx.base_dir())?),
        None => None,
    };
    let mut solver = StreamPowerSolver::new(
        grid,
        p,
        k.data,
        uplift,
        rain.as_ref().map(|r| r.data.as_slice()),
        p.tolerance.is_some(),
        field,
    )?;
    for i in 0..p.iterations {
        ctx.check_cancel()?;
        let report = solver.step(&mut world.height.data)?;
        let done = matches!((report.max_change, p.tolerance), (Some(c), Some(t)) if c < t);
        let fraction = if done {
            1.0
        } else {
            (i + 1) as f32 / p.iterations as f32
        };
        ctx.step_done(world, i + 1, fraction)?;
        if done {
            break;
        }
    }
    if p.hydrology {
        compute_maps_in(world, &p.hydrology_params(), ctx.base_dir())?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The implicit solver, over plain data.
// ---------------------------------------------------------------------------------------

/// Newton iterations allowed per node before the solve reports an error (n ≠ 1).
pub const MAX_NEWTON_ITERATIONS: u32 = 100;

/// Largest value of `F·R^n` the solver accepts, with `F = k·A^m·dt/dist^n` the largest
/// erosion factor and `R` = [`MAX_RELIEF`]: beyond it the Newton residual overflows f64.
pub const MAX_EROSION_TERM: f64 = 1e300;

/// Relief assumed when checking that the erosion term cannot overflow, metres.
pub const MAX_RELIEF: f64 = 1e5;

/// Smallest chunk of cells handed to one rayon task in the per-cell passes.
const PAR_CHUNK: usize = 1 << 14;

/// Raises every non-outlet node by `uplift[i]·dt` (outlets, which receive themselves, stay
/// at base level, like fastscapelib's fixed-value borders). Per-cell, so thread-count free.
pub fn apply_uplift(receivers: &[u32], uplift: &[f32], dt: f64, heights: &mut [f32]) {
    heights
        .par_iter_mut()
        .with_min_len(PAR_CHUNK)
        .zip(uplift.par_iter())
        .zip(receivers.par_iter())
        .enumerate()
        .for_each(|(i, ((h, &u), &r))| {
            if r as usize != i {
                *h = (*h as f64 + u as f64 * dt) as f32;
            }
        });
}

/// The per-node erosion factor `F = k·A^m·dt / dist^n` of the implicit step
/// (Braun & Willett 2013 eq. 22; FastFlow eq. 3: `K = k·Q^m·Δt/Δx`). `drainage` is the
/// drainage area (m²) or discharge (m³/yr); outlets get 0. Per-cell, so thread-count free.
#[allow(clippy::too_many_arguments)]
pub fn erosion_factors(
    receivers: &[u32],
    dist: &[f32],
    drainage: &[f32],
    k: &[f32],
    m: f64,
    n: f64,
    dt: f64,
    out: &mut [f64],
) {
    out.par_iter_mut()
        .with_min_len(PAR_CHUNK)
        .enumerate()
        .for_each(|(i, f)| {
            let d = dist[i] as f64;
            if receivers[i] as usize == i || d <= 0.0 {
                *f = 0.0;
                return;
            }
            *f = erosion_factor(k[i], drainage[i], d, m, n, dt);
        });
}

/// `k·A^m·dt / dist^n` for one node, with fast paths for m = 0.5, m = 1 and n = 1.
#[inline]
fn erosion_factor(k: f32, drainage: f32, dist: f64, m: f64, n: f64, dt: f64) -> f64 {
    let a = drainage as f64;
    let am = if m == 0.5 {
        a.sqrt()
    } else if m == 1.0 {
        a
    } else {
        a.powf(m)
    };
    let dn = if n == 1.0 { dist } else { dist.powf(n) };
    k as f64 * am * dt / dn
}

/// Solves `d − d0 + F·dⁿ = 0` for the new drop `d = h − h_receiver` in `(0, d0]`, given the
/// old drop `d0 > 0` and `F ≥ 0` (Braun & Willett 2013 §4, per-node Newton–Raphson).
///
/// `n = 1` is exact: `d = d0/(1 + F)`. Otherwise Newton from `d0`, kept inside the bracket
/// `[0, d0]` by bisection, so it cannot diverge; `Err` after [`MAX_NEWTON_ITERATIONS`].
pub fn solve_drop(d0: f64, f: f64, n: f64) -> Result<f64> {
    if d0.is_nan() || d0 <= 0.0 || f == 0.0 {
        return Ok(d0);
    }
    if !f.is_finite() || f < 0.0 || !d0.is_finite() {
        return Err(OrogenError::Numerical {
            field: "StreamPower".into(),
            reason: format!("erosion factor k·A^m·dt/dist^n = {f} with drop {d0} m is not usable"),
        });
    }
    if n == 1.0 {
        return Ok(d0 / (1.0 + f));
    }
    // g(d) = d − d0 + F·dⁿ is increasing on (0, ∞). At the root either d ≥ d0/2 or
    // F·dⁿ ≥ d0/2, so it lies in [hi·min(½, ½^(1/n)), hi] with hi = min(d0, (d0/F)^(1/n)).
    let mut hi = d0.min((d0 / f).powf(1.0 / n));
    let mut lo = hi * 0.5_f64.min(0.5_f64.powf(1.0 / n));
    let mut d = hi;
    for _ in 0..MAX_NEWTON_ITERATIONS {
        let dn1 = d.powf(n - 1.0);
        let g = d - d0 + f * dn1 * d;
        if g == 0.0 {
            return Ok(d);
        }
        if g > 0.0 {
            hi = d;
        } else {
            lo = d;
        }
        let dg = 1.0 + f * n * dn1;
        let mut next = d - g / dg;
        if !(next >= lo && next <= hi) {
            next = 0.5 * (lo + hi);
        }
        if (next - d).abs() <= 1e-14 * next || hi - lo <= 1e-14 * hi {
            return Ok(next);
        }
        d = next;
    }
    Err(OrogenError::Numerical {
        field: "StreamPower.n".into(),
        reason: format!(
            "Newton iteration for n = {n} did not converge in {MAX_NEWTON_ITERATIONS} \
             iterations (F = {f}, drop {d0} m); lower dt or k"
        ),
    })
}

/// One implicit stream-power step over a routed graph: walks `stack` (outlets first) and
/// lowers each node towards its already-updated receiver by solving
/// `h − h_old + F·(h − h_r)ⁿ = 0` (Cordonnier 2016 §4.3; FastFlow eq. 4 for n = 1:
/// `h = (h_old + F·h_r)/(1 + F)`). A node not above its receiver (a lake floor on a carved
/// path) does not erode, as in fastscapelib. Sequential: each node needs its receiver's
/// new height. Arithmetic in f64, heights stored f32. Returns the largest |Δh|, metres.
pub fn solve_implicit(
    receivers: &[u32],
    stack: &[u32],
    factors: &[f64],
    n: f64,
    heights: &mut [f32],
) -> Result<f32> {
    let mut max_change = 0.0_f32;
    for &node in stack {
        let i = node as usize;
        let r = receivers[i] as usize;
        if r == i {
            continue;
        }
        let f = factors[i];
        let h_old = heights[i];
        let h_r = heights[r] as f64;
        let d0 = h_old as f64 - h_r;
        if d0.is_nan() || d0 <= 0.0 || f == 0.0 {
            continue;
        }
        let d = if n == 1.0 {
            d0 / (1.0 + f)
        } else {
            solve_drop(d0, f, n)?
        };
        let h_new = (h_r + d) as f32;
        max_change = max_change.max((h_old - h_new).abs());
        heights[i] = h_new;
    }
    Ok(max_change)
}

/// A per-node input that is often the same everywhere (erodibility, uplift).
#[derive(Clone, Copy, Debug)]
pub enum NodeValues<'a> {
    /// One value for every node.
    Uniform(f32),
    /// One value per node.
    PerNode(&'a [f32]),
}

impl<'a> NodeValues<'a> {
    /// `Uniform` when every value of `values` is the same (bit for bit), else `PerNode`.
    pub fn from_slice(values: &'a [f32]) -> Self {
        match values.first() {
            Some(&v) if values.iter().all(|x| x.to_bits() == v.to_bits()) => NodeValues::Uniform(v),
            _ => NodeValues::PerNode(values),
        }
    }
}

/// The whole implicit update of one step in a single walk of `stack`: each non-outlet node
/// is uplifted by `uplift[i]·dt`, then eroded towards its receiver's new height with
/// `F = k·A^m·dt/dist^n`. Gives the same bytes as [`apply_uplift`] + [`erosion_factors`] +
/// [`solve_implicit`] (one pass over memory instead of three). Nodes that receive
/// themselves are left alone (uplift unresolved pits before calling). Returns the largest
/// lowering by erosion, metres.
#[allow(clippy::too_many_arguments)]
pub fn uplift_and_erode(
    graph: &FlowGraph,
    drainage: &[f32],
    k: NodeValues,
    uplift: NodeValues,
    m: f64,
    n: f64,
    dt: f64,
    heights: &mut [f32],
) -> Result<f32> {
    use NodeValues::{PerNode, Uniform};
    // One monomorphised walk per combination: no per-node branch or load for uniform maps.
    match (k, uplift) {
        (Uniform(k), Uniform(u)) => walk(graph, drainage, |_| k, |_| u, m, n, dt, heights),
        (Uniform(k), PerNode(u)) => walk(graph, drainage, |_| k, |i| u[i], m, n, dt, heights),
        (PerNode(k), Uniform(u)) => walk(graph, drainage, |i| k[i], |_| u, m, n, dt, heights),
        (PerNode(k), PerNode(u)) => walk(graph, drainage, |i| k[i], |i| u[i], m, n, dt, heights),
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn walk(
    graph: &FlowGraph,
    drainage: &[f32],
    k: impl Fn(usize) -> f32,
    uplift: impl Fn(usize) -> f32,
    m: f64,
    n: f64,
    dt: f64,
    heights: &mut [f32],
) -> Result<f32> {
    let (receivers, dist) = (&graph.receivers, &graph.dist);
    let mut max_change = 0.0_f32;
    for &node in &graph.stack {
        let i = node as usize;
        let r = receivers[i] as usize;
        if r == i {
            continue;
        }
        let h_up = (heights[i] as f64 + uplift(i) as f64 * dt) as f32;
        let d = dist[i] as f64;
        let f = if d > 0.0 {
            erosion_factor(k(i), drainage[i], d, m, n, dt)
        } else {
            0.0
        };
        let h_r = heights[r] as f64;
        let d0 = h_up as f64 - h_r;
        if d0.is_nan() || d0 <= 0.0 || f == 0.0 {
            heights[i] = h_up;
            continue;
        }
        let drop = if n == 1.0 {
            d0 / (1.0 + f)
        } else {
            solve_drop(d0, f, n)?
        };
        let h_new = (h_r + drop) as f32;
        max_change = max_change.max((h_up - h_new).abs());
        heights[i] = h_new;
    }
    Ok(max_change)
}
