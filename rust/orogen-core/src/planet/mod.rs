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

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};

/// The crust a point carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Crust {
    /// Dense, young, low: ocean floor.
    Oceanic,
    /// Light, old, high: continents.
    Continental,
}

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
    positions: Vec<[f64; 3]>,
    triangles: Vec<[u32; 3]>,
    plate: Vec<u32>,
    crust: Vec<Crust>,
    age: Vec<f32>,
    elevation: Vec<f32>,
    uplift: Vec<f32>,
    steps_done: u32,
}

impl Planet {
    /// The initial planet for `params` and `seed`: jittered Fibonacci sphere, its hull,
    /// plates by flood fill from random seeds, initial crust. Cancelling returns
    /// [`OrogenError::Cancelled`].
    pub fn new(params: &PlanetParams, seed: u64, cancel: &AtomicBool) -> Result<Planet> {
        params.validate("planet")?;
        let _ = (seed, cancel);
        Err(OrogenError::invalid("planet", "not implemented yet"))
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
        self.positions.len()
    }
    /// True with no points (never, once built).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
    /// Unit vectors, one per point.
    pub fn positions(&self) -> &[[f64; 3]] {
        &self.positions
    }
    /// Triangles, counter-clockwise seen from outside.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }
    /// Plate index per point.
    pub fn plates(&self) -> &[u32] {
        &self.plate
    }
    /// Crust type per point.
    pub fn crust(&self) -> &[Crust] {
        &self.crust
    }
    /// Crust age per point, years.
    pub fn ages(&self) -> &[f32] {
        &self.age
    }
    /// Elevation per point, metres.
    pub fn elevations(&self) -> &[f32] {
        &self.elevation
    }
    /// Uplift rate per point, m/yr.
    pub fn uplifts(&self) -> &[f32] {
        &self.uplift
    }

    /// The values at `dir` (any non-zero vector; normalised here).
    pub fn sample(&self, dir: [f64; 3]) -> PlanetSample {
        let _ = dir;
        PlanetSample {
            elevation: 0.0,
            uplift: 0.0,
            age: 0.0,
            plate: 0,
            crust: Crust::Oceanic,
        }
    }

    /// Unit vector at latitude and longitude in degrees.
    pub fn direction(lat_deg: f64, lon_deg: f64) -> [f64; 3] {
        let (lat, lon) = (lat_deg.to_radians(), lon_deg.to_radians());
        [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
    }

    /// Bytes the planet holds per point (for the memory estimate).
    pub const BYTES_PER_POINT: u64 = 200;
}
