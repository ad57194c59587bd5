//! The initial plates (seed "Plate Tectonics 2 / Generating the first tectonic plates").
//!
//! `plates` seed points are drawn at random (distinct); the first
//! `floor(plates · (1 − continental_fraction))` are oceanic, the rest continental. Each
//! seed gets a random elevation and age for its crust type and a random motion: a tangent
//! direction and a speed `uniform(0.01, 1) · max speed` (as the seed draws them), turned
//! into an Euler pole `ω = p × v / R` (rad/yr) so that every point of the plate moves
//! rigidly at `R · ω × p` (m/yr). Plates then grow by the seed's flood fill: each round,
//! every frontier point claims its unclaimed neighbours, and the new frontier is shuffled
//! so no plate is favoured; claimed points copy the crust with a small random walk in
//! elevation (±[`ELEVATION_WALK`] m a hop) and age (±[`AGE_WALK`] yr a hop).

use crate::math;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::DVec3;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::crust::Crust;
use super::hull::Topology;
use super::sphere::v3;
use crate::error::{OrogenError, Result};

/// Fastest oceanic plate, m/yr (10 cm/yr, Cortial et al.'s upper plate speed).
pub(super) const MAX_OCEANIC_SPEED: f64 = 0.1;
/// Fastest continental plate, m/yr.
pub(super) const MAX_CONTINENTAL_SPEED: f64 = 0.05;
/// Elevation random walk per flood-fill hop, metres.
const ELEVATION_WALK: f32 = 40.0;
/// Age random walk per flood-fill hop, years.
const AGE_WALK: f32 = 1.0e6;

/// The initial per-point crust and the plates' Euler poles.
pub(super) struct InitialPlates {
    pub plate: Vec<u32>,
    pub crust: Vec<Crust>,
    pub age: Vec<f32>,
    pub elevation: Vec<f32>,
    /// Angular velocity per plate, rad/yr.
    pub omega: Vec<[f64; 3]>,
}

/// Grows `plates` plates over the triangulation.
pub(super) fn grow_plates(
    positions: &[[f64; 3]],
    topo: &Topology,
    plates: usize,
    continental_fraction: f32,
    radius_m: f64,
    rng: &mut ChaCha8Rng,
    cancel: &AtomicBool,
) -> Result<InitialPlates> {
    let n = positions.len();
    if plates == 0 || plates > n {
        return Err(OrogenError::invalid(
            "planet.plates",
            format!("is {plates}; needs 1 ..= points ({n})"),
        ));
    }
    let ocean_count = (plates as f64 * (1.0 - continental_fraction as f64)).floor() as usize;
    // Distinct random seeds: a partial Fisher–Yates shuffle.
    let mut order: Vec<u32> = (0..n as u32).collect();
    for i in 0..plates {
        let j = rng.random_range(i..n);
        order.swap(i, j);
    }
    let mut plate = vec![u32::MAX; n];
    let mut crust = vec![Crust::Oceanic; n];
    let mut age = vec![0f32; n];
    let mut elevation = vec![0f32; n];
    let mut omega = Vec::with_capacity(plates);
    let mut open: Vec<u32> = Vec::with_capacity(plates);
    for (id, &s) in order[..plates].iter().enumerate() {
        let ocean = id < ocean_count;
        let su = s as usize;
        plate[su] = id as u32;
        crust[su] = if ocean {
            Crust::Oceanic
        } else {
            Crust::Continental
        };
        (elevation[su], age[su]) = if ocean {
            (
                rng.random_range(-6000.0..-4500.0f32),
                rng.random_range(2.0e7..1.0e8f32),
            )
        } else {
            (
                rng.random_range(200.0..800.0f32),
                rng.random_range(5.0e8..2.0e9f32),
            )
        };
        // Seed: random angle and speed in the tangent plane at the seed point.
        let angle = rng.random_range(0.0..std::f64::consts::TAU);
        let speed = rng.random_range(0.01..1.0)
            * if ocean {
                MAX_OCEANIC_SPEED
            } else {
                MAX_CONTINENTAL_SPEED
            };
        let p = v3(positions[su]);
        let helper = if p.x.abs() < 0.6 { DVec3::X } else { DVec3::Y };
        let tangent = p.cross(helper).normalize();
        let bitangent = p.cross(tangent);
        let v = (tangent * math::sin(angle) + bitangent * math::cos(angle)) * speed;
        omega.push((p.cross(v) / radius_m).to_array());
        open.push(s);
    }
    let mut next: Vec<u32> = Vec::with_capacity(open.len() * 4);
    while !open.is_empty() {
        if cancel.load(Ordering::Relaxed) {
            return Err(OrogenError::Cancelled);
        }
        for &s in &open {
            for &e in topo.edges_of(s as usize) {
                let m = topo.other(e, s) as usize;
                if plate[m] == u32::MAX {
                    let s = s as usize;
                    plate[m] = plate[s];
                    crust[m] = crust[s];
                    elevation[m] = elevation[s] + rng.random_range(-ELEVATION_WALK..ELEVATION_WALK);
                    age[m] = (age[s] + rng.random_range(-AGE_WALK..AGE_WALK)).max(0.0);
                    next.push(m as u32);
                }
            }
        }
        next.shuffle(rng);
        std::mem::swap(&mut open, &mut next);
        next.clear();
    }
    for (i, e) in elevation.iter_mut().enumerate() {
        *e = match crust[i] {
            Crust::Oceanic => e.clamp(-6500.0, -3000.0),
            Crust::Continental => e.clamp(0.0, 1500.0),
        };
    }
    Ok(InitialPlates {
        plate,
        crust,
        age,
        elevation,
        omega,
    })
}
