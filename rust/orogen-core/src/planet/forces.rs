//! Forces on the sub-plates and their motion (seed "Plate Tectonics 3 / Step 4: Calculate
//! all forces" and "Step 5: Simulate movement").
//!
//! Units: metres, years, unit mass per point, so a force is an acceleration in m/yr².
//! Every edge acts on its two ends by its boundary type, with the seed's constants:
//! - joined: damped spring to the edge's rest length, `k` = 1e-4 compressed, 5e-5
//!   stretched (1/yr²), damping 2e-6 (1/yr);
//! - ridge: push apart, 2e-8; subducting: slab pull 5e-8 on the subducting end, towards
//!   the other;
//! - transform and collision: when closing at `v`, push apart with `α · v / (2 dt)`,
//!   `α = 1 / (1 + (max(0, d − 8 km) / 8 km)²)`.
//!
//! Two departures, both needed at geological steps (`dt` = 1e5 yr by default):
//! - An explicit step of a spring is stable only while `k dt²` stays well under one
//!   (about 1/3 for a point with six springs); the seed's `k` gives `k dt²` = 1e6. The
//!   spring and damping constants are therefore capped at [`SPRING_LIMIT`]`/dt²` and
//!   [`DAMPING_LIMIT`]`/dt`: plates stay soft bodies, only as stiff as the step allows.
//! - The seed's drag `(1 − drag · dt)` slows every point towards rest, which stops the
//!   plates once boundary forces balance. Here the drag pulls each point's step towards
//!   the motion of the mantle under its plate, the plate's Euler rotation `R ω × p`
//!   (basal drag, [`MANTLE_DRAG`] 1e-6 /yr): plates keep their drift and deform where
//!   forces act.
//!
//! Verlet as in the seed: `p' = normalise(p + (v dt + F dt²)(1 − c) + v_mantle dt c)`,
//! `c = min(1, drag · dt)`, then `v' = (p' − p) / dt`; a point with no step stays
//! bit-identical.

use glam::DVec3;
use rayon::prelude::*;

use super::boundaries::{COLLISION, JOINED, RIDGE, SUBDUCTING_DEST, SUBDUCTING_ORIGIN, TRANSFORM};
use super::hull::Topology;
use super::sphere::v3;

/// Spring constant for compressed joined edges, 1/yr² (seed).
pub(super) const K_COMPRESSED: f64 = 1e-4;
/// Spring constant for stretched joined edges, 1/yr² (seed).
pub(super) const K_STRETCHED: f64 = 5e-5;
/// Spring damping, 1/yr (seed).
pub(super) const DAMPING: f64 = 2e-6;
/// Ridge push, m/yr² (seed).
pub(super) const RIDGE_PUSH: f64 = 2e-8;
/// Slab pull, m/yr² (seed).
pub(super) const SLAB_PULL: f64 = 5e-8;
/// Distance below which colliding points are fully stopped, metres (seed).
pub(super) const COLLISION_MIN_DISTANCE: f64 = 8000.0;
/// Largest `k dt²` of a spring.
pub(super) const SPRING_LIMIT: f64 = 0.1;
/// Largest `damping · dt` of a spring.
pub(super) const DAMPING_LIMIT: f64 = 0.05;
/// Drag towards the mantle flow under the plate, 1/yr.
pub(super) const MANTLE_DRAG: f64 = 1e-6;

/// Length of edge `a`–`b` in metres (chord), exactly as the spring force measures it.
#[inline]
pub(super) fn length_m(positions: &[[f64; 3]], a: usize, b: usize, radius_m: f64) -> f64 {
    ((v3(positions[b]) - v3(positions[a])) * radius_m).length()
}

/// The force (m/yr²) each edge puts on its ends `[a, b]`.
pub(super) fn edge_forces(
    positions: &[[f64; 3]],
    velocity: &[[f64; 3]],
    topo: &Topology,
    kinds: &[u8],
    rest: &[f32],
    radius_m: f64,
    dt: f64,
) -> Vec<[DVec3; 2]> {
    let (kc, ks) = (
        K_COMPRESSED.min(SPRING_LIMIT / (dt * dt)),
        K_STRETCHED.min(SPRING_LIMIT / (dt * dt)),
    );
    let damping = DAMPING.min(DAMPING_LIMIT / dt);
    topo.edges
        .par_iter()
        .enumerate()
        .map(|(k, &[a, b])| {
            let (a, b) = (a as usize, b as usize);
            let kind = kinds[k];
            let diff = (v3(positions[b]) - v3(positions[a])) * radius_m;
            let dist = diff.length();
            debug_assert_eq!(dist, length_m(positions, a, b, radius_m));
            if dist == 0.0 {
                return [DVec3::ZERO; 2];
            }
            let dir = diff / dist;
            let closing = (v3(velocity[a]) - v3(velocity[b])).dot(dir);
            match kind {
                JOINED => {
                    // In f32 so an edge at its rest length has no force at all.
                    let displacement = (rest[k] - dist as f32) as f64;
                    let k = if displacement > 0.0 { kc } else { ks };
                    let f = dir * (displacement * k + closing * damping);
                    [-f, f]
                }
                RIDGE => [-dir * RIDGE_PUSH, dir * RIDGE_PUSH],
                SUBDUCTING_ORIGIN => [dir * SLAB_PULL, DVec3::ZERO],
                SUBDUCTING_DEST => [DVec3::ZERO, -dir * SLAB_PULL],
                TRANSFORM | COLLISION if closing > 0.0 => {
                    let d = (dist - COLLISION_MIN_DISTANCE).max(0.0) / COLLISION_MIN_DISTANCE;
                    let alpha = (1.0 / (1.0 + d * d)).clamp(0.0, 1.0);
                    let f = dir * (alpha * closing / dt / 2.0);
                    [-f, f]
                }
                _ => [DVec3::ZERO; 2],
            }
        })
        .collect()
}

/// Moves every point one Verlet step; returns the new positions and velocities (m/yr).
#[allow(clippy::type_complexity)]
#[allow(clippy::too_many_arguments)]
pub(super) fn integrate(
    positions: &[[f64; 3]],
    velocity: &[[f64; 3]],
    plate: &[u32],
    omega: &[[f64; 3]],
    topo: &Topology,
    forces: &[[DVec3; 2]],
    radius_m: f64,
    dt: f64,
) -> (Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let c = (MANTLE_DRAG * dt).min(1.0);
    positions
        .par_iter()
        .enumerate()
        .map(|(i, &p0)| {
            let mut f = DVec3::ZERO;
            for (&e, &m) in topo.edges_of(i).iter().zip(topo.neighbours_of(i)) {
                // Edges are stored `[low, high]`: this point is end 0 if it is the lower.
                let side = (m as usize) < i;
                f += forces[e as usize][side as usize];
            }
            let p = v3(p0);
            let mantle = v3(omega[plate[i] as usize]).cross(p) * radius_m;
            let step = (v3(velocity[i]) * dt + f * (dt * dt)) * (1.0 - c) + mantle * (dt * c);
            if step == DVec3::ZERO {
                return (p0, [0.0; 3]);
            }
            let q = (p + step / radius_m).normalize();
            (q.to_array(), ((q - p) * (radius_m / dt)).to_array())
        })
        .unzip()
}
