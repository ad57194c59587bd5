//! A tectonic planet (seed 004, "Yggdrasill"; Cortial et al. 2019): sub-plates on a
//! spherical Delaunay mesh, moved by spring, ridge-push, slab-pull and collision forces,
//! lifting crust where plates collide or subduct, with ocean floor that ages and sinks.
//!
//! The public API below is what the rest of Orogen uses (the recipe's `planet` section,
//! the `Planet` scalar source and the bake's `planet_*` maps). Positions are unit vectors;
//! heights are metres; times are years.
//!
//! Coordinates: latitude φ = asin(z), longitude λ = atan2(y, x), both in degrees, so
//! [`Planet::direction`] of (0, 0) is +x and of (90, *) is +z.

//!
//! Where each part lives (one algorithm per file):
//! - `sphere`: the jittered Fibonacci sphere, spherical areas;
//! - `hull`: the spherical Delaunay triangulation (stereographic projection + `spade`)
//!   and the adjacency (triangle neighbours, sorted edges, CSR point → edges);
//! - `plates`: seed points, flood-fill growth, initial crust and Euler poles;
//! - `boundaries`: the boundary type of each edge;
//! - `forces`: springs, ridge push, slab pull, collision response, Verlet motion;
//! - `elevation`: uplift at collisions and subductions, erosion, ocean floor sinking;
//! - `flips`: edge flips keeping the mesh Delaunay and upright between remeshes;
//! - `remesh`: merging, subduction removal, new crust in gaps;
//! - `edit`: the remesh as local mesh edits (split, flip, merge), Lawson flips after;
//! - `locate`: finding the triangle under a direction for [`Planet::sample`];
//! - `sim`: the state and the order of one step.
//!
//! Determinism: everything random comes from `ChaCha8Rng` seeded with the seed; rayon is
//! used only for per-element maps collected in order and for order-free `any` tests, so
//! results are the same bytes for any number of threads.

use crate::math;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};

mod boundaries;
mod crust;
mod edit;
mod elevation;
mod flips;
mod forces;
mod hull;
mod locate;
mod plates;
mod remesh;
mod sim;
mod sphere;

pub use crust::Crust;
pub use sphere::spherical_area;

/// What the planet simulation is asked for (the recipe's `planet` section).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlanetParams {
    /// Points on the sphere (Fibonacci sphere, jittered by the seed), at least 12.
    /// Default 60,000.
    pub points: u32,
    /// Tectonic plates grown from random seed points, 1 ..= points. Default 24.
    pub plates: u32,
    /// Fraction of the plates that carry continental crust, 0–1. Default 0.35.
    pub continental_fraction: f32,
    /// Simulation steps to run. Default 200.
    pub steps: u32,
    /// Years per step. Default 1e5.
    pub dt_years: f32,
    /// Planet radius, metres. Default 6.371e6 (Earth).
    pub radius_m: f64,
}

impl Default for PlanetParams {
    fn default() -> Self {
        Self {
            points: 60_000,
            plates: 24,
            continental_fraction: 0.35,
            steps: 200,
            dt_years: 1e5,
            radius_m: 6.371e6,
        }
    }
}

/// Unit-vector points and their triangles (counter-clockwise seen from outside).
pub type SphereMesh = (Vec<[f64; 3]>, Vec<[u32; 3]>);

/// The initial mesh alone: `points` jittered Fibonacci-sphere points for `seed` (unit
/// vectors) and their spherical Delaunay triangles, counter-clockwise seen from outside;
/// checked to be a closed surface. What [`Planet::new`] starts from (for benches and
/// tests).
pub fn sphere_mesh(points: u32, seed: u64, cancel: &AtomicBool) -> Result<SphereMesh> {
    if !(12..=MAX_PLANET_POINTS).contains(&points) {
        return Err(OrogenError::invalid(
            "planet.points",
            format!("is {points}; a planet needs 12 ..= {MAX_PLANET_POINTS} points"),
        ));
    }
    let positions = sphere::fibonacci_sphere(points as usize, seed, cancel)?;
    let triangles = hull::triangulate(&positions)?;
    hull::Topology::new(positions.len(), &triangles)?;
    Ok((positions, triangles))
}

/// Most steps a planet may run (100,000 steps of a million years each is 100 Gyr; a step
/// of 60,000 points takes about 13 ms on two cores).
pub const MAX_PLANET_STEPS: u32 = 100_000;

/// Most points a planet may have.
pub const MAX_PLANET_POINTS: u32 = 20_000_000;

impl PlanetParams {
    /// Checks every value; errors name `{field}.points` and so on.
    pub fn validate(&self, field: &str) -> Result<()> {
        if self.points < 12 || self.points > MAX_PLANET_POINTS {
            return Err(OrogenError::invalid(
                format!("{field}.points"),
                format!(
                    "is {}; a planet needs 12 ..= {MAX_PLANET_POINTS} points",
                    self.points
                ),
            ));
        }
        if self.plates == 0 || self.plates > self.points {
            return Err(OrogenError::invalid(
                format!("{field}.plates"),
                format!("is {}; needs 1 ..= points ({})", self.plates, self.points),
            ));
        }
        check_range(
            &format!("{field}.continental_fraction"),
            self.continental_fraction as f64,
            0.0,
            1.0,
        )?;
        if self.steps > MAX_PLANET_STEPS {
            // (Fuzz finding #39.4: any u32 was taken, and a run of 4e9 steps looked hung.)
            return Err(OrogenError::invalid(
                format!("{field}.steps"),
                format!("is {}; at most {MAX_PLANET_STEPS}", self.steps),
            ));
        }
        check_range(&format!("{field}.dt_years"), self.dt_years as f64, 1.0, 1e8)?;
        check_range(&format!("{field}.radius_m"), self.radius_m, 1e3, 1e9)?;
        Ok(())
    }
}

/// The planet's values at one direction, interpolated over the mesh triangle that holds it
/// (the plate and crust are those of the nearest corner).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanetSample {
    /// Elevation above sea level, metres (negative under the sea).
    pub elevation: f32,
    /// Uplift rate, m/yr, from collisions and subductions (averaged over recent steps).
    pub uplift: f32,
    /// Crust age, years.
    pub age: f32,
    /// Plate index, 0 .. plates.
    pub plate: u32,
    /// Crust type.
    pub crust: Crust,
}

/// A simulated planet: points on the unit sphere, their spherical Delaunay triangles, and
/// per-point plate, crust, age, elevation and uplift.
#[derive(Clone, Debug)]
pub struct Planet {
    params: PlanetParams,
    sim: sim::Sim,
    steps_done: u32,
}

impl Planet {
    /// The initial planet for `params` and `seed`: jittered Fibonacci sphere, its hull,
    /// plates by flood fill from random seeds, initial crust. Cancelling returns
    /// [`OrogenError::Cancelled`].
    pub fn new(params: &PlanetParams, seed: u64, cancel: &AtomicBool) -> Result<Planet> {
        params.validate("planet")?;
        let sim = sim::Sim::new(
            params.points as usize,
            params.plates as usize,
            params.continental_fraction,
            params.radius_m,
            params.dt_years as f64,
            seed,
            cancel,
        )?;
        Ok(Planet {
            params: params.clone(),
            sim,
            steps_done: 0,
        })
    }

    /// [`Planet::new`] then `params.steps` steps; `progress` gets the fraction done.
    pub fn run(
        params: &PlanetParams,
        seed: u64,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(f32),
    ) -> Result<Planet> {
        let mut planet = Planet::new(params, seed, cancel)?;
        for i in 0..params.steps {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(OrogenError::Cancelled);
            }
            planet.step()?;
            progress((i + 1) as f32 / params.steps.max(1) as f32);
        }
        Ok(planet)
    }

    /// One time step of `params.dt_years`: forces, Verlet motion, uplift, ageing,
    /// remeshing where points drifted too far.
    pub fn step(&mut self) -> Result<()> {
        self.sim.step()?;
        self.steps_done += 1;
        Ok(())
    }

    /// The parameters it was built with.
    pub fn params(&self) -> &PlanetParams {
        &self.params
    }
    /// Steps run so far.
    pub fn steps_done(&self) -> u32 {
        self.steps_done
    }
    /// Number of points.
    pub fn len(&self) -> usize {
        self.sim.positions.len()
    }
    /// True with no points (never, once built).
    pub fn is_empty(&self) -> bool {
        self.sim.positions.is_empty()
    }
    /// Unit vectors, one per point.
    pub fn positions(&self) -> &[[f64; 3]] {
        &self.sim.positions
    }
    /// Triangles, counter-clockwise seen from outside.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.sim.triangles
    }
    /// Plate index per point.
    pub fn plates(&self) -> &[u32] {
        &self.sim.plate
    }
    /// Crust type per point.
    pub fn crust(&self) -> &[Crust] {
        &self.sim.crust
    }
    /// Crust age per point, years.
    pub fn ages(&self) -> &[f32] {
        &self.sim.age
    }
    /// Elevation per point, metres.
    pub fn elevations(&self) -> &[f32] {
        &self.sim.elevation
    }
    /// Uplift rate per point, m/yr.
    pub fn uplifts(&self) -> &[f32] {
        &self.sim.uplift
    }

    /// The values at `dir` (any non-zero vector; normalised here).
    ///
    /// A zero or non-finite `dir` samples +x. Cost: a short triangle walk from a cube-map
    /// hint, about a microsecond; safe to call from many threads at once.
    pub fn sample(&self, dir: [f64; 3]) -> PlanetSample {
        let d = glam::DVec3::from_array(dir);
        let q = if d.is_finite() && d.length_squared() > 0.0 {
            d.normalize()
        } else {
            glam::DVec3::X
        };
        let (elevation, uplift, age, plate, crust) = self.sim.sample(q);
        PlanetSample {
            elevation,
            uplift,
            age,
            plate,
            crust,
        }
    }

    /// Stops every plate (zero velocities and Euler poles), so that with no motion no
    /// boundary force arises and points stay where they are; elevations still change.
    /// Used by tests to check that nothing moves without forces.
    pub fn stop_plates(&mut self) {
        self.sim.stop();
    }

    /// Current simulated time, years (steps × `dt_years`).
    pub fn time_years(&self) -> f64 {
        self.steps_done as f64 * self.params.dt_years as f64
    }

    /// Times the mesh has been remeshed after drift (edited or rebuilt).
    pub fn remeshes(&self) -> u32 {
        self.sim.remeshes
    }

    /// How many of [`Self::remeshes`] edited the mesh locally (split, flip, merge) instead
    /// of rebuilding it.
    pub fn local_remeshes(&self) -> u32 {
        self.sim.local_remeshes
    }

    /// Bytes the planet's arrays hold now (the resident part of [`Self::BYTES_PER_POINT`]).
    pub fn heap_bytes(&self) -> usize {
        self.sim.bytes()
    }

    /// Unit vector at latitude and longitude in degrees.
    pub fn direction(lat_deg: f64, lon_deg: f64) -> [f64; 3] {
        let (lat, lon) = (lat_deg.to_radians(), lon_deg.to_radians());
        [
            math::cos(lat) * math::cos(lon),
            math::cos(lat) * math::sin(lon),
            math::sin(lat),
        ]
    }

    /// Bytes the planet needs per point at its peak (for the memory estimate): measured by
    /// `benches/planet.rs` at 500k points, 228 B of arrays the planet keeps (positions and
    /// velocities 48, triangles with neighbours and edge indices 72, edges and CSR lists
    /// with neighbours 76, springs and types 15, crust values 17) plus up to 513 B more at
    /// the peak of a step (a local remesh's working copy of the mesh and its renumbering,
    /// or a rebuild's triangulation by spade and the adjacency built from it: 366–504 B);
    /// rounded up.
    pub const BYTES_PER_POINT: u64 = 800;
}
