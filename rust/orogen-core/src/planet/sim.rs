//! The simulation state and one time step (seed "Plate Tectonics 1 / Algorithm outline"):
//! boundary types, forces, Verlet motion, uplift, surface processes, ageing, edge flips
//! (points that ran past more than one triangle are held back where they were, at rest),
//! and a remesh every few steps when points need merging or gaps filling. Each part lives
//! in its own module; this one only orders them.
//!
//! Units: positions are unit vectors, velocities m/yr, lengths on the sphere are chords of
//! the unit sphere unless named `_m` (metres), elevations metres, ages years.

use std::sync::atomic::{AtomicBool, Ordering};

use glam::DVec3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::boundaries::{classify, PointsView, JOINED, TRANSFORM};
use super::crust::Crust;
use super::edit::edit;
use super::elevation::{
    ocean_depth, spreading_ages, update, uplift_rates, OLDEST_OCEAN_YEARS, RIDGE_ELEVATION,
};
use super::flips::{rebuild_csr, restore, sides_of, unfit_edges};
use super::forces::{edge_forces, integrate, length_m};
use super::hull::{triangulate, Topology};
use super::locate::Locator;
use super::plates::grow_plates;
use super::remesh::{compact, inverted, plan, wanted, REMESH_EVERY};
use super::sphere::{fibonacci_sphere, mean_spacing, orient, v3};
use crate::error::{OrogenError, Result};

/// Everything the planet holds.
#[derive(Clone, Debug, Default)]
pub(super) struct Sim {
    pub radius_m: f64,
    pub dt: f64,
    /// Mean point spacing of the initial sphere, unit-sphere chord.
    pub spacing: f64,
    pub positions: Vec<[f64; 3]>,
    /// m/yr.
    pub velocity: Vec<[f64; 3]>,
    pub plate: Vec<u32>,
    pub crust: Vec<Crust>,
    pub age: Vec<f32>,
    pub elevation: Vec<f32>,
    /// Moving average of the uplift rate, m/yr.
    pub uplift: Vec<f32>,
    /// Euler pole per plate, rad/yr.
    pub omega: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
    pub topo: Topology,
    /// Spring rest length per edge, metres.
    pub rest: Vec<f32>,
    /// Steps since the last remesh, and whether a point moved since.
    pub since_remesh: u32,
    pub moved_since: bool,
    /// Boundary type per edge (see `boundaries`).
    pub kinds: Vec<u8>,
    /// Built on the first sample after each remesh.
    pub locator: std::sync::OnceLock<Locator>,
    /// Remeshes so far, and how many of them were local edits.
    pub remeshes: u32,
    pub local_remeshes: u32,
}

/// Rounds of holding back points whose triangles flips could not right, before the mesh
/// is rebuilt instead.
const HOLD_BACK_ROUNDS: usize = 3;

/// The previous mesh's edges for [`Sim::fresh_edges`].
enum OldEdges<'a> {
    /// None: every edge is new.
    None,
    /// Topology, rest lengths, boundary types, and the old index of each new point
    /// (`u32::MAX` for inserted points): an edge is looked up by its ends.
    Lookup(&'a Topology, &'a [f32], &'a [u8], &'a [u32]),
    /// Rest lengths, boundary types, and each new edge's old index (`u32::MAX` for a new
    /// edge).
    Ids(&'a [f32], &'a [u8], &'a [u32]),
}

/// The planet's values at a direction: elevation, uplift, age, plate, crust.
pub(super) type Sampled = (f32, f32, f32, u32, Crust);

impl Sim {
    /// Flips edges until the mesh is Delaunay and upright at the current positions (at
    /// most four flips a point); the flipped triangles are added to `flipped`. False when
    /// some triangle stays turned over.
    fn flip_to_delaunay(&mut self, flipped: &mut Vec<u32>, seeds: &[(u32, u8)]) -> bool {
        restore(
            &self.positions,
            &mut self.triangles,
            &mut self.topo.tri_adj,
            &mut self.topo.tri_edge,
            &mut self.topo.edges,
            flipped,
            4 * self.positions.len(),
            seeds,
        )
    }

    /// The initial planet.
    pub(super) fn new(
        points: usize,
        plates: usize,
        continental_fraction: f32,
        radius_m: f64,
        dt: f64,
        seed: u64,
        cancel: &AtomicBool,
    ) -> Result<Sim> {
        let check = || {
            if cancel.load(Ordering::Relaxed) {
                Err(OrogenError::Cancelled)
            } else {
                Ok(())
            }
        };
        check()?;
        let positions = fibonacci_sphere(points, seed, cancel)?;
        check()?;
        let triangles = triangulate(&positions)?;
        check()?;
        let topo = Topology::new(positions.len(), &triangles)?;
        check()?;
        // A separate stream from the sphere's jitter.
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
        let init = grow_plates(
            &positions,
            &topo,
            plates,
            continental_fraction,
            radius_m,
            &mut rng,
            cancel,
        )?;
        check()?;
        let velocity = mantle_velocity(&positions, &init.plate, &init.omega, radius_m);
        // Ocean floor as old as its distance from the ridge it moves away from, and as deep
        // as that age makes it (Parsons & Sclater 1977).
        let mut init = init;
        let ages = spreading_ages(
            &positions,
            &init.plate,
            &init.crust,
            &velocity,
            &topo,
            radius_m,
        );
        for (i, a) in ages.into_iter().enumerate() {
            if init.crust[i] == Crust::Oceanic {
                let age = a.unwrap_or(OLDEST_OCEAN_YEARS);
                init.age[i] = age;
                init.elevation[i] = -ocean_depth(age);
            }
        }
        let mut sim = Sim {
            radius_m,
            dt,
            spacing: mean_spacing(points),
            uplift: vec![0.0; positions.len()],
            positions,
            velocity,
            plate: init.plate,
            crust: init.crust,
            age: init.age,
            elevation: init.elevation,
            omega: init.omega,
            triangles,
            topo,
            ..Sim::default()
        };
        sim.fresh_edges(OldEdges::None);
        Ok(sim)
    }

    /// Rest lengths, stretch references and boundary types for the current topology;
    /// edges that existed before (`old`: the previous topology, rest lengths and types,
    /// and the old index of each point, `u32::MAX` for new points) keep theirs.
    fn fresh_edges(&mut self, old: OldEdges) {
        let plate = &self.plate;
        let (positions, radius_m) = (&self.positions, self.radius_m);
        let (rest, kinds): (Vec<f32>, Vec<u8>) = self
            .topo
            .edges
            .par_iter()
            .enumerate()
            .map(|(e, &[a, b])| {
                let same = plate[a as usize] == plate[b as usize];
                let metres = length_m(positions, a as usize, b as usize, radius_m) as f32;
                let fresh = (metres, if same { JOINED } else { TRANSFORM });
                let (k, rest, kinds) = match old {
                    OldEdges::None => return fresh,
                    OldEdges::Lookup(topo, rest, kinds, old_id) => {
                        let (oa, ob) = (old_id[a as usize], old_id[b as usize]);
                        if oa == u32::MAX || ob == u32::MAX {
                            return fresh;
                        }
                        match topo.find(oa.min(ob), oa.max(ob)) {
                            Some(k) => (k, rest, kinds),
                            None => return fresh,
                        }
                    }
                    OldEdges::Ids(rest, kinds, old_edge) => match old_edge[e] {
                        u32::MAX => return fresh,
                        k => (k as usize, rest, kinds),
                    },
                };
                if kinds[k] == JOINED && same {
                    (rest[k], JOINED)
                } else if !same {
                    (
                        metres,
                        if kinds[k] == JOINED {
                            TRANSFORM
                        } else {
                            kinds[k]
                        },
                    )
                } else {
                    fresh
                }
            })
            .unzip();
        self.rest = rest;
        self.kinds = kinds;
    }

    /// One step of `dt` years.
    pub(super) fn step(&mut self) -> Result<()> {
        let dt = self.dt;
        let view = PointsView {
            positions: &self.positions,
            velocity: &self.velocity,
            plate: &self.plate,
            crust: &self.crust,
            age: &self.age,
        };
        let ridge_distance_m = self.spacing * self.radius_m;
        let classified = classify(
            &view,
            &self.topo.edges,
            &self.kinds,
            self.radius_m,
            ridge_distance_m,
        );
        self.kinds = classified.iter().map(|c| c.0).collect();
        let forces = edge_forces(
            &self.positions,
            &self.velocity,
            &self.topo,
            &self.kinds,
            &self.rest,
            self.radius_m,
            dt,
        );
        let (moved, moved_velocity) = integrate(
            &self.positions,
            &self.velocity,
            &self.plate,
            &self.omega,
            &self.topo,
            &forces,
            self.radius_m,
            dt,
        );
        drop(forces);
        if let Some(i) = moved
            .par_iter()
            .zip(moved_velocity.par_iter())
            .position_first(|(p, v)| {
                !(p.iter().all(|x| x.is_finite()) && v.iter().all(|x| x.is_finite()))
            })
        {
            return Err(OrogenError::Numerical {
                field: "planet.positions".into(),
                reason: format!("point {i} left the sphere (not finite) while moving"),
            });
        }
        self.moved_since |= moved
            .par_iter()
            .zip(self.positions.par_iter())
            .any(|(m, p)| m != p);
        let previous = std::mem::replace(&mut self.positions, moved);
        self.velocity = moved_velocity;
        let rate = uplift_rates(
            &self.positions,
            &self.plate,
            &self.topo,
            &classified,
            self.radius_m,
        );
        update(
            &mut self.elevation,
            &mut self.uplift,
            &mut self.age,
            &self.crust,
            &rate,
            dt as f32,
        );
        self.since_remesh += 1;
        // The mesh as it was, upright at the previous positions.
        let snapshot = (
            self.triangles.clone(),
            self.topo.tri_adj.clone(),
            self.topo.tri_edge.clone(),
            self.topo.edges.clone(),
        );
        let mut flipped = Vec::new();
        // The edges to flip at the step's positions, and every point held back since.
        let (unfit, turned) = unfit_edges(&self.positions, &self.triangles, &self.topo.tri_adj);
        // Flips only make upright triangles: after the first flips, a triangle turned over
        // is one of these, unchanged.
        let turned: Vec<(u32, [u32; 3])> = turned
            .into_iter()
            .map(|t| (t, self.triangles[t as usize]))
            .collect();
        let mut held_all: Vec<u32> = Vec::new();
        let mut seeds = unfit.clone();
        // Set once a pass over the triangles found none turned over since the last flips.
        let mut upright = false;
        let mut flipped_all = true;
        for round in 0..=HOLD_BACK_ROUNDS {
            if round > 0 {
                // Triangles flips could not right: their corners ran past more than one
                // triangle this step. Hold them back where they were (at rest), as a
                // collision would, and flip again; a later remesh merges or removes them.
                let held = if round == 1 {
                    still_turned_corners(&self.positions, &self.triangles, &turned)
                } else {
                    turned_over_corners(&self.positions, &self.triangles)
                };
                if held.is_empty() {
                    upright = true;
                    break;
                }
                for &p in &held {
                    self.positions[p as usize] = previous[p as usize];
                    self.velocity[p as usize] = [0.0; 3];
                }
                // Only the edges around the points held back can have changed.
                seeds = sides_of(&triangles_around(&held, &self.triangles));
                held_all.extend(held);
            }
            flipped_all = self.flip_to_delaunay(&mut flipped, &seeds);
            if !flipped_all {
                break;
            }
        }
        if flipped_all && !upright && inverted(&self.positions, &self.triangles) {
            // Still turned over: back to the step's mesh, upright at the previous
            // positions, and hold back the corners of turned-over triangles until none is
            // left (each round holds at least one more point; with all held the mesh is
            // the previous one), then flip for Delaunay only.
            (
                self.triangles,
                self.topo.tri_adj,
                self.topo.tri_edge,
                self.topo.edges,
            ) = snapshot;
            flipped.clear();
            for round in 0.. {
                let held = turned_over_corners(&self.positions, &self.triangles);
                if held.is_empty() {
                    break;
                }
                let all = round >= 64;
                for (p, (pos, vel)) in self
                    .positions
                    .iter_mut()
                    .zip(self.velocity.iter_mut())
                    .enumerate()
                {
                    if all || held.binary_search(&(p as u32)).is_ok() {
                        *pos = previous[p];
                        *vel = [0.0; 3];
                    }
                }
                if all {
                    held_all = (0..self.positions.len() as u32).collect();
                } else {
                    held_all.extend(held);
                }
            }
            // The step's mesh and positions again, but for the points held back: the
            // edges the first pass found, and those around the held points.
            held_all.sort_unstable();
            held_all.dedup();
            let mut seeds = unfit;
            seeds.extend(sides_of(&triangles_around(&held_all, &self.triangles)));
            // Flips only make upright triangles, and none is turned over now.
            flipped_all = self.flip_to_delaunay(&mut flipped, &seeds);
            upright = flipped_all;
        }
        drop(previous);
        if !flipped.is_empty() {
            rebuild_csr(&mut self.topo, self.positions.len());
            for &k in &flipped {
                let [a, b] = self.topo.edges[k as usize];
                let (a, b) = (a as usize, b as usize);
                self.rest[k as usize] = length_m(&self.positions, a, b, self.radius_m) as f32;
                self.kinds[k as usize] = if self.plate[a] == self.plate[b] {
                    JOINED
                } else {
                    TRANSFORM
                };
            }
        }
        let upright = flipped_all && (upright || !inverted(&self.positions, &self.triangles));
        if !upright
            || (self.since_remesh >= REMESH_EVERY
                && self.moved_since
                && wanted(&self.positions, &self.triangles, &self.topo, self.spacing))
        {
            // Local edits need an upright mesh; otherwise the whole mesh is rebuilt.
            self.remesh(upright)?;
        }
        Ok(())
    }

    /// Merges, removes and inserts points (see `remesh`), by local edits of the mesh when
    /// it is `upright` (see `edit`), else (or should an edit get stuck) by rebuilding it.
    pub(super) fn remesh(&mut self, upright: bool) -> Result<()> {
        let plan = plan(
            &self.positions,
            &mut self.plate,
            &self.crust,
            &self.age,
            &mut self.elevation,
            &self.triangles,
            &self.topo,
            self.spacing,
        );
        let n_old = self.positions.len();
        let edited = if upright {
            let mut all = self.positions.clone();
            all.extend(plan.added.iter().map(|p| p.position));
            let added_in: Vec<u32> = plan.added.iter().map(|p| p.triangle).collect();
            edit(
                &all,
                n_old,
                &plan.removed,
                &added_in,
                &self.triangles,
                &self.topo,
            )
        } else {
            None
        };
        let mut old_id: Vec<u32> = (0..n_old as u32)
            .filter(|&i| !plan.removed[i as usize])
            .collect();
        old_id.extend(std::iter::repeat_n(u32::MAX, plan.added.len()));
        let r = &plan.removed;
        self.positions = compact(&self.positions, r);
        self.velocity = compact(&self.velocity, r);
        self.plate = compact(&self.plate, r);
        self.crust = compact(&self.crust, r);
        self.age = compact(&self.age, r);
        self.elevation = compact(&self.elevation, r);
        self.uplift = compact(&self.uplift, r);
        for p in &plan.added {
            let q = v3(p.position);
            self.positions.push(p.position);
            self.velocity
                .push((v3(self.omega[p.plate as usize]).cross(q) * self.radius_m).to_array());
            self.plate.push(p.plate);
            self.crust.push(Crust::Oceanic);
            self.age.push(0.0);
            self.elevation.push(RIDGE_ELEVATION);
            self.uplift.push(0.0);
        }
        let (old_rest, old_kinds) = (
            std::mem::take(&mut self.rest),
            std::mem::take(&mut self.kinds),
        );
        if let Some(e) = edited {
            self.triangles = e.triangles;
            self.topo = e.topo;
            self.local_remeshes += 1;
            self.fresh_edges(OldEdges::Ids(&old_rest, &old_kinds, &e.old_edge));
        } else {
            self.triangles = triangulate(&self.positions)?;
            let topo = Topology::new(self.positions.len(), &self.triangles)?;
            let old_topo = std::mem::replace(&mut self.topo, topo);
            // old_id maps new → old; the edge lookup needs it per new point.
            self.fresh_edges(OldEdges::Lookup(&old_topo, &old_rest, &old_kinds, &old_id));
        }
        self.locator = std::sync::OnceLock::new();
        self.remeshes += 1;
        self.since_remesh = 0;
        self.moved_since = false;
        Ok(())
    }

    /// Values at a unit direction.
    pub(super) fn sample(&self, q: DVec3) -> Sampled {
        let (t, w) = self
            .locator
            .get_or_init(|| Locator::new(&self.positions, &self.triangles, &self.topo.tri_adj))
            .locate(&self.positions, &self.triangles, &self.topo.tri_adj, q);
        let tri = self.triangles[t as usize].map(|i| i as usize);
        let lerp = |v: &[f32]| {
            (w[0] * v[tri[0]] as f64 + w[1] * v[tri[1]] as f64 + w[2] * v[tri[2]] as f64) as f32
        };
        let near = if w[0] >= w[1] && w[0] >= w[2] {
            tri[0]
        } else if w[1] >= w[2] {
            tri[1]
        } else {
            tri[2]
        };
        (
            lerp(&self.elevation),
            lerp(&self.uplift),
            lerp(&self.age),
            self.plate[near],
            self.crust[near],
        )
    }

    /// Stops every plate: zero velocities and Euler poles.
    pub(super) fn stop(&mut self) {
        self.velocity.iter_mut().for_each(|v| *v = [0.0; 3]);
        self.omega.iter_mut().for_each(|w| *w = [0.0; 3]);
    }

    /// Bytes held (capacity of every array), for the memory figure.
    pub(super) fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(self.positions.as_slice())
            + size_of_val(self.velocity.as_slice())
            + size_of_val(self.plate.as_slice())
            + size_of_val(self.crust.as_slice())
            + size_of_val(self.age.as_slice())
            + size_of_val(self.elevation.as_slice())
            + size_of_val(self.uplift.as_slice())
            + size_of_val(self.triangles.as_slice())
            + size_of_val(self.topo.tri_adj.as_slice())
            + size_of_val(self.topo.tri_edge.as_slice())
            + size_of_val(self.topo.edges.as_slice())
            + size_of_val(self.topo.start.as_slice())
            + size_of_val(self.topo.point_edges.as_slice())
            + size_of_val(self.topo.point_nbrs.as_slice())
            + size_of_val(self.rest.as_slice())
            + size_of_val(self.kinds.as_slice())
            + self.locator.get().map_or(0, Locator::bytes)
    }
}

/// The triangles with a corner in `points` (ascending, without repeats), ascending.
fn triangles_around(points: &[u32], triangles: &[[u32; 3]]) -> Vec<u32> {
    triangles
        .par_iter()
        .enumerate()
        .filter(|(_, t)| t.iter().any(|p| points.binary_search(p).is_ok()))
        .map(|(k, _)| k as u32)
        .collect()
}

/// [`turned_over_corners`] when the only triangles that can face inwards are `candidates`
/// (index and corners when they were found): those still holding the same corners.
fn still_turned_corners(
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    candidates: &[(u32, [u32; 3])],
) -> Vec<u32> {
    let mut held: Vec<u32> = candidates
        .iter()
        .filter(|(t, corners)| {
            triangles[*t as usize] == *corners && {
                let [a, b, c] = corners.map(|i| v3(positions[i as usize]));
                orient(a, b, c) <= 0.0
            }
        })
        .flat_map(|(_, corners)| corners.iter().copied())
        .collect();
    held.sort_unstable();
    held.dedup();
    held
}

/// Corners of the triangles that face inwards, ascending, without repeats.
fn turned_over_corners(positions: &[[f64; 3]], triangles: &[[u32; 3]]) -> Vec<u32> {
    let mut held: Vec<u32> = triangles
        .par_iter()
        .filter(|t| {
            let [a, b, c] = t.map(|i| v3(positions[i as usize]));
            orient(a, b, c) <= 0.0
        })
        .flat_map_iter(|t| t.iter().copied())
        .collect();
    held.sort_unstable();
    held.dedup();
    held
}

/// Each point's velocity from its plate's Euler rotation, m/yr.
fn mantle_velocity(
    positions: &[[f64; 3]],
    plate: &[u32],
    omega: &[[f64; 3]],
    radius_m: f64,
) -> Vec<[f64; 3]> {
    positions
        .par_iter()
        .zip(plate.par_iter())
        .map(|(&p, &k)| (v3(omega[k as usize]).cross(v3(p)) * radius_m).to_array())
        .collect()
}
