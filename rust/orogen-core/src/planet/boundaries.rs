//! Boundary type of every edge (seed "Plate Tectonics 3 / Step 2: Identify boundary-types").
//!
//! An edge `[a, b]` (`a < b`; `a` is the seed's `origin`, `b` its `dest`) is `JOINED` when
//! both ends are on one plate. Otherwise, with `d` its length (m) and `v` the converging
//! velocity `(v_a − v_b) · (p_b − p_a)/d` (m/yr, positive when closing), and starting from
//! `TRANSFORM`:
//! - a transform edge separating (`v ≤ −`[`SEPARATING`] and `d ≥` one mean spacing)
//!   becomes a `RIDGE`;
//! - a transform edge converging (`v >` [`CONVERGING`]) becomes `SUBDUCTING_ORIGIN` /
//!   `SUBDUCTING_DEST` (oceanic under continental; of two oceanic ends the older
//!   subducts) or `COLLISION` (both continental);
//! - subduction and collision edges that stop converging (`v ≤ 0`), and ridges that
//!   converge (`v > 0`), return to `TRANSFORM`; an edge that became joined returns to
//!   transform when the plates differ again.
//!
//! The seed states the thresholds as `v ≤ −0.05`, `v > 0.1` and `d ≥ 1500 km` without a
//! velocity unit, on a mesh with about 630 km between points; here they are read as cm/yr
//! and the ridge distance as one mean spacing of this mesh.

use rayon::prelude::*;

use super::crust::Crust;
use super::sphere::v3;

pub(super) const JOINED: u8 = 0;
pub(super) const RIDGE: u8 = 1;
pub(super) const TRANSFORM: u8 = 2;
pub(super) const SUBDUCTING_ORIGIN: u8 = 3;
pub(super) const SUBDUCTING_DEST: u8 = 4;
pub(super) const COLLISION: u8 = 5;

/// Separation speed that opens a ridge, m/yr (seed 0.05, read as cm/yr).
pub(super) const SEPARATING: f64 = 0.0005;
/// Convergence speed that starts a subduction or collision, m/yr (seed 0.1, as cm/yr).
pub(super) const CONVERGING: f64 = 0.001;

/// What the boundary pass needs about the points.
pub(super) struct PointsView<'a> {
    pub positions: &'a [[f64; 3]],
    pub velocity: &'a [[f64; 3]],
    pub plate: &'a [u32],
    pub crust: &'a [Crust],
    pub age: &'a [f32],
}

/// The new type of each edge and its converging velocity (m/yr).
pub(super) fn classify(
    pts: &PointsView,
    edges: &[[u32; 2]],
    kinds: &[u8],
    radius_m: f64,
    ridge_distance_m: f64,
) -> Vec<(u8, f32)> {
    edges
        .par_iter()
        .zip(kinds.par_iter())
        .map(|(&[a, b], &kind)| {
            let (a, b) = (a as usize, b as usize);
            if pts.plate[a] == pts.plate[b] {
                return (JOINED, 0.0);
            }
            let diff = (v3(pts.positions[b]) - v3(pts.positions[a])) * radius_m;
            let d = diff.length();
            let dir = diff / d;
            let v = (v3(pts.velocity[a]) - v3(pts.velocity[b])).dot(dir);
            let mut kind = if kind == JOINED { TRANSFORM } else { kind };
            kind = match kind {
                RIDGE if v > 0.0 => TRANSFORM,
                SUBDUCTING_ORIGIN | SUBDUCTING_DEST | COLLISION if v <= 0.0 => TRANSFORM,
                k => k,
            };
            if kind == TRANSFORM {
                if v <= -SEPARATING && d >= ridge_distance_m {
                    kind = RIDGE;
                } else if v > CONVERGING {
                    kind = match (pts.crust[a], pts.crust[b]) {
                        (Crust::Continental, Crust::Continental) => COLLISION,
                        (Crust::Oceanic, Crust::Continental) => SUBDUCTING_ORIGIN,
                        (Crust::Continental, Crust::Oceanic) => SUBDUCTING_DEST,
                        (Crust::Oceanic, Crust::Oceanic) => {
                            if pts.age[a] >= pts.age[b] {
                                SUBDUCTING_ORIGIN
                            } else {
                                SUBDUCTING_DEST
                            }
                        }
                    };
                }
            }
            (kind, v as f32)
        })
        .collect()
}
