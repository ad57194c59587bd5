//! Points on the unit sphere and the spherical geometry the rest of `planet` uses.
//!
//! The initial points are a Fibonacci sphere (seed "Plate Tectonics 2 / Creating the
//! mesh"): point `i` of `n` sits at height `z = 1 − (2i + 1)/n` and longitude
//! `i · 2π(2 − φ)` (the golden angle). The seed jitters the spiral index by up to one step;
//! along the spiral one index step is a long way (137.5° of longitude), so that jitter can
//! put two points on top of each other. Here each point is instead moved in its tangent
//! plane by at most [`JITTER`] of the mean spacing `√(4π/n)`, in a random direction drawn
//! from a `ChaCha8Rng` seeded with the planet's seed, so points stay at least about half a
//! spacing apart. The points are then put in Z-order on a cube map for memory locality.
//! All positions are unit vectors (radians of arc on the planet).

use crate::math;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::error::{OrogenError, Result};

/// Largest jitter, as a fraction of the mean point spacing.
pub(super) const JITTER: f64 = 0.25;

/// Mean spacing (radians of arc) of `n` points spread evenly over the unit sphere.
pub(super) fn mean_spacing(n: usize) -> f64 {
    (4.0 * std::f64::consts::PI / n.max(1) as f64).sqrt()
}

/// `n` jittered Fibonacci-sphere points (unit vectors), deterministic for `seed`.
pub(super) fn fibonacci_sphere(n: usize, seed: u64, cancel: &AtomicBool) -> Result<Vec<[f64; 3]>> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let spacing = mean_spacing(n);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let jitter: Vec<(f64, f64)> = (0..n)
        .map(|_| (rng.random::<f64>(), rng.random::<f64>()))
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return Err(OrogenError::Cancelled);
    }
    let points: Vec<[f64; 3]> = jitter
        .par_iter()
        .enumerate()
        .map(|(i, &(u, w))| {
            let z = 1.0 - (2.0 * i as f64 + 1.0) / n as f64;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let theta = golden * i as f64;
            let (s, c) = math::sin_cos(theta);
            let p = DVec3::new(r * c, r * s, z);
            let east = DVec3::new(-s, c, 0.0);
            let north = p.cross(east);
            let rho = JITTER * spacing * u.sqrt();
            let (sa, ca) = math::sin_cos(std::f64::consts::TAU * w);
            (p + (east * ca + north * sa) * rho).normalize().to_array()
        })
        .collect();
    Ok(spatial_order(points))
}

/// The points reordered along a Z-order curve on the faces of the cube around the sphere,
/// so that points near each other on the sphere are near each other in memory (the
/// spiral order puts consecutive points 137.5° apart; every pass over the mesh then missed
/// the cache at each neighbour).
fn spatial_order(points: Vec<[f64; 3]>) -> Vec<[f64; 3]> {
    fn spread(x: u64) -> u64 {
        let mut x = x & 0xffff;
        x = (x | (x << 8)) & 0x00ff_00ff;
        x = (x | (x << 4)) & 0x0f0f_0f0f;
        x = (x | (x << 2)) & 0x3333_3333;
        (x | (x << 1)) & 0x5555_5555
    }
    let mut keyed: Vec<(u64, u32)> = points
        .par_iter()
        .enumerate()
        .map(|(i, &p)| {
            let q = DVec3::from(p);
            let a = q.abs();
            let (face, u, v, m) = if a.x >= a.y && a.x >= a.z {
                (u64::from(q.x < 0.0), q.y, q.z, a.x)
            } else if a.y >= a.z {
                (2 + u64::from(q.y < 0.0), q.x, q.z, a.y)
            } else {
                (4 + u64::from(q.z < 0.0), q.x, q.y, a.z)
            };
            let cell = |t: f64| (((t / m + 1.0) * 32768.0) as u64).min(65535);
            (
                (face << 32) | (spread(cell(u)) << 1) | spread(cell(v)),
                i as u32,
            )
        })
        .collect();
    keyed.par_sort_unstable();
    keyed.par_iter().map(|&(_, i)| points[i as usize]).collect()
}

/// `a · (b × c)`: positive when `a, b, c` turn counter-clockwise seen from outside.
#[inline]
pub(super) fn orient(a: DVec3, b: DVec3, c: DVec3) -> f64 {
    a.dot(b.cross(c))
}

/// Area (steradians) of the spherical triangle `a, b, c` (unit vectors, counter-clockwise
/// seen from outside), by Van Oosterom & Strackee (1983): `tan(E/2) = a·(b×c) /
/// (1 + a·b + b·c + c·a)`. Negative for a clockwise (inverted) triangle.
pub fn spherical_area(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    let (a, b, c) = (DVec3::from(a), DVec3::from(b), DVec3::from(c));
    let num = orient(a, b, c);
    let den = 1.0 + a.dot(b) + b.dot(c) + c.dot(a);
    2.0 * math::atan2(num, den)
}

#[inline]
pub(super) fn v3(p: [f64; 3]) -> DVec3 {
    DVec3::from_array(p)
}
