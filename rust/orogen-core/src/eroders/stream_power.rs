//! STUB: being written.

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use crate::error::{OrogenError, Result};
use crate::runner::StageContext;
use crate::world::World;

/// Stage parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StreamPowerParams {
    /// Number of steps.
    pub iterations: u32,
}

impl Default for StreamPowerParams {
    fn default() -> Self {
        StreamPowerParams { iterations: 10 }
    }
}

impl StreamPowerParams {
    /// Scalar parameters with units and ranges, for editors.
    pub fn describe() -> &'static [crate::recipe::ParamInfo] {
        &[]
    }

    /// Checks ranges; `field` prefixes error names.
    pub fn validate(&self, _field: &str) -> Result<()> {
        Ok(())
    }
}

/// Runs the stage.
pub fn run_stage(p: &StreamPowerParams, world: &mut World, ctx: &mut StageContext) -> Result<()> {
    for i in 0..p.iterations {
        ctx.step_done(world, i + 1, (i + 1) as f32 / p.iterations as f32)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The implicit solver, over plain data.
// ---------------------------------------------------------------------------------------

/// Newton iterations allowed per node before the solve reports an error (n ≠ 1).
pub const MAX_NEWTON_ITERATIONS: u32 = 100;

/// Largest erosion factor `F = k·A^m·dt/dist^n` the solver accepts; beyond it `F·Δh^n`
/// would overflow f64 for any realistic relief.
pub const MAX_EROSION_FACTOR: f64 = 1e150;

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
            let a = drainage[i] as f64;
            let am = if m == 0.5 {
                a.sqrt()
            } else if m == 1.0 {
                a
            } else {
                a.powf(m)
            };
            let dn = if n == 1.0 { d } else { d.powf(n) };
            *f = k[i] as f64 * am * dt / dn;
        });
}

/// Solves `d − d0 + F·dⁿ = 0` for the new drop `d = h − h_receiver` in `(0, d0]`, given the
/// old drop `d0 > 0` and `F ≥ 0` (Braun & Willett 2013 §4, per-node Newton–Raphson).
///
/// `n = 1` is exact: `d = d0/(1 + F)`. Otherwise Newton from `d0`, kept inside the bracket
/// `[0, d0]` by bisection, so it cannot diverge; `Err` after [`MAX_NEWTON_ITERATIONS`].
pub fn solve_drop(d0: f64, f: f64, n: f64) -> Result<f64> {
    if !(d0 > 0.0) || f == 0.0 {
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
        if !(d0 > 0.0) || f == 0.0 {
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
