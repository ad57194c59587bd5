//! Elevation change (seed "Plate Tectonics 3 / 6. Update elevation" and "9. Simulate
//! Erosion").
//!
//! Uplift, m/yr, from the edges classified this step:
//! - Collision (both ends continental, closing at `v` m/yr): both plates are lifted
//!   around the boundary at `COLLISION_UPLIFT · v · (1 − (d/r_c)²)²` with `d` the distance
//!   (m) to the nearest collision edge, `r_c` = [`COLLISION_RADIUS`].
//! - Subduction: the overriding plate is lifted at `SUBDUCTION_UPLIFT · f(d/r_s) ·
//!   min(v/v₀, 1)` (`v₀` = 0.1 m/yr, `r_s` = 1800 km after Cortial et al. 2019 §4.1), where
//!   `f` rises from 0.2 at the boundary to 1 at a quarter of `r_s` (inland, as the seed
//!   says) and falls to 0 at `r_s`; the subducting point sinks at `TRENCH_SINK · min(v/v₀,
//!   1)` (the trench).
//!
//! The falloff is the seed's flood fill: a breadth-first fill from all sources at once over
//! the mesh edges (path lengths in metres), confined to the plate of each source and to the
//! radius; each point keeps the source that reached it first. Uplift curves and rates are ours; the seed gives none.
//!
//! Surface processes, per point:
//! - Continents: uplift slows as the surface nears the height that thickened crust can hold
//!   (it fades out between [`PLATEAU_FROM_M`] and [`PLATEAU_TOP_M`], as Tibet and the
//!   Altiplano stand at 4–5 km: the crust's strength and isostasy limit a range's height;
//!   England & Molnar 1997), and erosion lowers land towards sea level at a rate
//!   proportional to its height (Ahnert 1970's denudation rate ∝ relief), with an e-folding
//!   time of [`CONTINENT_EROSION_YEARS`].
//! - Ocean floor relaxes, over [`OCEAN_RELAX_YEARS`], towards the depth of its age after
//!   Parsons & Sclater 1977 ([`ocean_depth`]: 2,500 m at a ridge, 2,500 + 350 √t m for
//!   t < 70 Myr, flattening towards 6,400 m); trench sinking and uplift move it off that
//!   depth while they act.
//!
//! Elevations are then clamped to [`MIN_ELEVATION`, `MAX_ELEVATION`], which the balance
//! above keeps them well inside.

use rayon::prelude::*;

use super::boundaries::{COLLISION, SUBDUCTING_DEST, SUBDUCTING_ORIGIN};
use super::crust::Crust;
use super::hull::Topology;
use super::sphere::v3;
use crate::math;

/// Highest elevation, metres (seed).
pub(super) const MAX_ELEVATION: f32 = 10_000.0;
/// Lowest elevation, metres (seed).
pub(super) const MIN_ELEVATION: f32 = -10_000.0;
/// Elevation of new crust at a ridge, metres (Parsons & Sclater 1977's ridge depth).
pub(super) const RIDGE_ELEVATION: f32 = -2500.0;
/// Continental uplift starts to fade at this height, metres.
pub(super) const PLATEAU_FROM_M: f32 = 2000.0;
/// Continental uplift has faded out at this height, metres.
pub(super) const PLATEAU_TOP_M: f32 = 7000.0;
/// E-folding time of continental erosion towards sea level, years.
pub(super) const CONTINENT_EROSION_YEARS: f32 = 2.0e7;
/// Time over which ocean floor relaxes to the depth of its age, years.
pub(super) const OCEAN_RELAX_YEARS: f32 = 2.0e6;

/// Ocean depth, metres below sea level, of crust `age` years old (Parsons & Sclater 1977,
/// eqs. 7 and 8: `2500 + 350 √t` for t < 70 Myr, `6400 − 3200 e^(−t/62.8)` beyond).
pub(super) fn ocean_depth(age: f32) -> f32 {
    let t = (age / 1.0e6).max(0.0);
    if t < 70.0 {
        2500.0 + 350.0 * t.sqrt()
    } else {
        6400.0 - 3200.0 * math::exp(-t / 62.8)
    }
}

/// Uplift per unit of converging speed at a collision (dimensionless).
pub(super) const COLLISION_UPLIFT: f64 = 0.02;
/// Reach of collision uplift, metres.
pub(super) const COLLISION_RADIUS: f64 = 1.0e6;
/// Largest subduction uplift, m/yr (Cortial et al. u₀ = 0.6 mm/yr).
pub(super) const SUBDUCTION_UPLIFT: f64 = 6e-4;
/// Reach of subduction uplift, metres (Cortial et al. r_s).
pub(super) const SUBDUCTION_RADIUS: f64 = 1.8e6;
/// Sinking of the subducting point at the trench, m/yr.
pub(super) const TRENCH_SINK: f64 = 2e-3;
/// Converging speed of full subduction uplift, m/yr (Cortial et al. v₀ = 100 mm/yr).
pub(super) const V0: f64 = 0.1;

/// A source of uplift: point, strength (m/yr) and reach (m).
struct Source {
    point: u32,
    strength: f64,
}

/// Nearest-source distance (m) and strength per point, within `radius` and the source's
/// plate: a breadth-first flood fill from all sources at once (the seed's flood fill),
/// each point taking the distance along the path that first reached it.
fn spread(
    n: usize,
    positions: &[[f64; 3]],
    plate: &[u32],
    topo: &Topology,
    sources: &[Source],
    radius: f64,
    radius_m: f64,
) -> Vec<(f64, f64)> {
    let mut best = vec![(f64::INFINITY, 0.0f64); n];
    let mut queue = std::collections::VecDeque::new();
    for s in sources {
        let p = s.point as usize;
        if best[p].0 > 0.0 {
            queue.push_back(s.point);
        }
        // Strongest source wins at the same point.
        if best[p].0 > 0.0 || best[p].1 < s.strength {
            best[p] = (0.0, s.strength);
        }
    }
    while let Some(p) = queue.pop_front() {
        let p = p as usize;
        let (d, strength) = best[p];
        for &m in topo.neighbours_of(p) {
            let m = m as usize;
            if plate[m] != plate[p] || best[m].0.is_finite() {
                continue;
            }
            let nd = d + (v3(positions[m]) - v3(positions[p])).length() * radius_m;
            if nd < radius {
                best[m] = (nd, strength);
                queue.push_back(m as u32);
            }
        }
    }
    best
}

/// Oldest ocean floor the start gives, years (Earth's oldest is about 180 Myr).
pub(super) const OLDEST_OCEAN_YEARS: f32 = 1.8e8;

/// The age of each oceanic point at the start, years, from the plates' own motion: ocean
/// floor is made at ridges, so a point `d` metres (along the mesh, within its plate) from
/// the nearest boundary its plate moves away from left that ridge `d / v` years ago, `v`
/// its plate's speed there (Parsons & Sclater's age–distance reading of magnetic
/// anomalies). Points whose plate has no such boundary, and continents, get `None`.
pub(super) fn spreading_ages(
    positions: &[[f64; 3]],
    plate: &[u32],
    crust: &[Crust],
    velocity: &[[f64; 3]],
    topo: &Topology,
    radius_m: f64,
) -> Vec<Option<f32>> {
    let n = positions.len();
    // A ridge point: oceanic, with a neighbour on another plate moving away from it.
    let sources: Vec<Source> = (0..n)
        .filter(|&p| {
            crust[p] == Crust::Oceanic
                && topo.neighbours_of(p).iter().any(|&m| {
                    let m = m as usize;
                    plate[m] != plate[p] && {
                        let dir = v3(positions[m]) - v3(positions[p]);
                        (v3(velocity[p]) - v3(velocity[m])).dot(dir) < 0.0
                    }
                })
        })
        .map(|p| Source {
            point: p as u32,
            strength: 0.0,
        })
        .collect();
    let near = spread(n, positions, plate, topo, &sources, f64::INFINITY, radius_m);
    (0..n)
        .map(|p| {
            let d = near[p].0;
            (crust[p] == Crust::Oceanic && d.is_finite()).then(|| {
                let v = v3(velocity[p]).length().max(1.0e-3);
                ((d / v) as f32).min(OLDEST_OCEAN_YEARS)
            })
        })
        .collect()
}

/// Uplift rate per point, m/yr, from this step's boundaries.
pub(super) fn uplift_rates(
    positions: &[[f64; 3]],
    plate: &[u32],
    topo: &Topology,
    classified: &[(u8, f32)],
    radius_m: f64,
) -> Vec<f32> {
    let n = positions.len();
    let mut collision = Vec::new();
    let mut subduction = Vec::new();
    let mut trench = vec![0f64; n];
    for (k, &(kind, v)) in classified.iter().enumerate() {
        let [a, b] = topo.edges[k];
        let v = v as f64;
        match kind {
            COLLISION if v > 0.0 => {
                let s = COLLISION_UPLIFT * v;
                collision.push(Source {
                    point: a,
                    strength: s,
                });
                collision.push(Source {
                    point: b,
                    strength: s,
                });
            }
            SUBDUCTING_ORIGIN | SUBDUCTING_DEST if v > 0.0 => {
                let (under, over) = if kind == SUBDUCTING_ORIGIN {
                    (a, b)
                } else {
                    (b, a)
                };
                let g = (v / V0).min(1.0);
                subduction.push(Source {
                    point: over,
                    strength: SUBDUCTION_UPLIFT * g,
                });
                let t = &mut trench[under as usize];
                *t = t.max(TRENCH_SINK * g);
            }
            _ => {}
        }
    }
    let mut rate = vec![0f32; n];
    // The two flood fills are independent: one on each core.
    let fill = |sources: &[Source], radius: f64| {
        (!sources.is_empty()).then(|| spread(n, positions, plate, topo, sources, radius, radius_m))
    };
    let (near_collision, near_subduction) = rayon::join(
        || fill(&collision, COLLISION_RADIUS),
        || fill(&subduction, SUBDUCTION_RADIUS),
    );
    if let Some(c) = near_collision {
        for (r, (d, s)) in rate.iter_mut().zip(c) {
            if d.is_finite() {
                let x = d / COLLISION_RADIUS;
                let f = (1.0 - x * x).powi(2);
                *r += (s * f) as f32;
            }
        }
    }
    if let Some(c) = near_subduction {
        for (r, (d, s)) in rate.iter_mut().zip(c) {
            if d.is_finite() {
                let x = d / SUBDUCTION_RADIUS;
                let f = if x < 0.25 {
                    0.2 + 0.8 * smoothstep(x / 0.25)
                } else {
                    1.0 - smoothstep((x - 0.25) / 0.75)
                };
                *r += (s * f) as f32;
            }
        }
    }
    for (r, t) in rate.iter_mut().zip(trench) {
        *r -= t as f32;
    }
    rate
}

fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

fn smootherstep(e0: f32, e1: f32, x: f32) -> f32 {
    let x = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    x * x * x * (x * (x * 6.0 - 15.0) + 10.0)
}

/// Erosion of land, or the ocean floor's relaxation to the depth of its age, over `dt`
/// years, then the elevation clamp; `age` is the crust age at the start of the step.
pub(super) fn surface(elevation: f32, crust: Crust, age: f32, dt: f32) -> f32 {
    let mut z = elevation;
    if crust == Crust::Continental {
        // Towards sea level at a rate proportional to the height (exactly, over the step).
        z *= math::exp(-dt / CONTINENT_EROSION_YEARS);
    } else {
        let target = -ocean_depth(age);
        z = target + (z - target) * math::exp(-dt / OCEAN_RELAX_YEARS);
    }
    z.clamp(MIN_ELEVATION, MAX_ELEVATION)
}

/// The share of a continental uplift rate that still raises ground at `z` metres: 1 up to
/// [`PLATEAU_FROM_M`], fading smoothly to 0 at [`PLATEAU_TOP_M`].
pub(super) fn plateau_factor(z: f32) -> f32 {
    1.0 - smootherstep(PLATEAU_FROM_M, PLATEAU_TOP_M, z)
}

/// Applies uplift and surface processes to every point.
pub(super) fn update(
    elevation: &mut [f32],
    uplift: &mut [f32],
    age: &mut [f32],
    crust: &[Crust],
    rate: &[f32],
    dt: f32,
) {
    elevation
        .par_iter_mut()
        .zip(uplift.par_iter_mut())
        .zip(age.par_iter_mut())
        .enumerate()
        .for_each(|(i, ((z, u), a))| {
            // Continental crust thickened towards its limit rises ever less.
            let r = if crust[i] == Crust::Continental && rate[i] > 0.0 {
                rate[i] * plateau_factor(*z)
            } else {
                rate[i]
            };
            let lifted = *z + r * dt;
            *z = surface(lifted, crust[i], *a, dt);
            *u = *u * (1.0 - UPLIFT_SMOOTHING) + rate[i] * UPLIFT_SMOOTHING;
            *a += dt;
        });
}

/// Weight of the newest step in the uplift moving average.
pub(super) const UPLIFT_SMOOTHING: f32 = 0.2;
