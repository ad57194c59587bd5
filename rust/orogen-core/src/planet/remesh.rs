//! Remeshing after the points moved (Cortial et al. 2019 §5, "periodic remeshing"; the
//! seed's steps 1, 3, 7 and 8: create crust at divergent boundaries, resolve collisions,
//! restore Delaunay).
//!
//! Between remeshes, edge flips keep the mesh Delaunay and upright (see `flips`), and
//! points that ran past more than one triangle in a step are held back where they were
//! (see `sim`). The mesh is remeshed, at most every [`REMESH_EVERY`] steps, when points came
//! closer than [`MERGE_DISTANCE`] or a triangle grew past [`GAP_RADIUS`] (plates parting),
//! or at once if a triangle is still turned over (not seen in the tests). Then, on the old
//! mesh:
//! - Merge: for each edge shorter than [`MERGE_DISTANCE`] spacings, in edge order, one end
//!   goes: oceanic before continental, the older of two oceanic points (it subducts), the
//!   lower of two continental points (whose elevation the survivor takes if higher).
//! - Subducted or sutured: a point whose neighbours all lie on other plates is removed if
//!   oceanic (consumed by subduction) or joins its first neighbour's plate if continental.
//! - Gaps: a triangle whose circumradius exceeds [`GAP_RADIUS`] spacings (plates pulled
//!   apart) gets a new point at its centroid: oceanic crust, age 0, at the ridge
//!   elevation, on the plate of its oceanic corner (else its first corner).
//!
//! Survivors keep their order, new points follow. The mesh is edited in place (see `edit`:
//! splits, flips, merges), or rebuilt from scratch (see `hull`) when it is not upright or an
//! edit gets stuck. Edges present before and after keep their rest length and boundary type.

use glam::DVec3;
use rayon::prelude::*;

use super::crust::Crust;
use super::hull::Topology;
use super::sphere::{orient, v3};

/// Points closer than this (fraction of the mean spacing) merge.
pub(super) const MERGE_DISTANCE: f64 = 0.3;
/// Triangles with a circumradius above this (fraction of the mean spacing) get a point.
pub(super) const GAP_RADIUS: f64 = 1.1;
/// Least steps between two remeshes asked for by merges and gaps (a turned-over triangle
/// that flips cannot fix rebuilds at once).
pub(super) const REMESH_EVERY: u32 = 5;

/// Circumradius of a triangle (unit sphere chords), 0 for a degenerate one.
fn circumradius(a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let twice_area = (b - a).cross(c - a).length();
    if twice_area <= 0.0 {
        return 0.0;
    }
    (b - a).length() * (c - b).length() * (a - c).length() / (2.0 * twice_area)
}

/// Is there anything to merge (an edge under [`MERGE_DISTANCE`]) or a gap to fill (a
/// triangle over [`GAP_RADIUS`])? `spacing` is on the unit sphere.
pub(super) fn wanted(
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    topo: &Topology,
    spacing: f64,
) -> bool {
    let (merge, gap) = (MERGE_DISTANCE * spacing, GAP_RADIUS * spacing);
    topo.edges
        .par_iter()
        .any(|&[a, b]| (v3(positions[a as usize]) - v3(positions[b as usize])).length() < merge)
        || triangles.par_iter().any(|t| {
            let [a, b, c] = t.map(|i| v3(positions[i as usize]));
            circumradius(a, b, c) > gap
        })
}

/// Has a triangle turned over?
pub(super) fn inverted(positions: &[[f64; 3]], triangles: &[[u32; 3]]) -> bool {
    triangles.par_iter().any(|t| {
        let [a, b, c] = t.map(|i| v3(positions[i as usize]));
        orient(a, b, c) <= 0.0
    })
}

/// A point to insert.
pub(super) struct NewPoint {
    pub position: [f64; 3],
    pub plate: u32,
    /// The triangle it falls in (its centroid's), on the old mesh.
    pub triangle: u32,
}

/// What a remesh does: which points go (`removed`) and which are added; plates and
/// elevations of survivors are updated in place.
pub(super) struct Plan {
    pub removed: Vec<bool>,
    pub added: Vec<NewPoint>,
}

/// Plans a remesh on the old mesh (see the module doc). `spacing` is on the unit sphere.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan(
    positions: &[[f64; 3]],
    plate: &mut [u32],
    crust: &[Crust],
    age: &[f32],
    elevation: &mut [f32],
    triangles: &[[u32; 3]],
    topo: &Topology,
    spacing: f64,
) -> Plan {
    let n = positions.len();
    let mut removed = vec![false; n];
    let mut left = n;
    let merge = MERGE_DISTANCE * spacing;
    for &[a, b] in &topo.edges {
        let (a, b) = (a as usize, b as usize);
        if removed[a] || removed[b] || left <= 4 {
            continue;
        }
        if (v3(positions[a]) - v3(positions[b])).length() >= merge {
            continue;
        }
        let loser = match (crust[a], crust[b]) {
            (Crust::Oceanic, Crust::Continental) => a,
            (Crust::Continental, Crust::Oceanic) => b,
            (Crust::Oceanic, Crust::Oceanic) => {
                if age[a] > age[b] {
                    a
                } else {
                    b
                }
            }
            (Crust::Continental, Crust::Continental) => {
                let (lo, hi) = if elevation[a] < elevation[b] {
                    (a, b)
                } else {
                    (b, a)
                };
                elevation[hi] = elevation[hi].max(elevation[lo]);
                lo
            }
        };
        removed[loser] = true;
        left -= 1;
    }
    // Points surrounded by other plates.
    let old_plate = plate.to_vec();
    for p in 0..n {
        if removed[p] || left <= 4 {
            continue;
        }
        let mut first = None;
        let mut any_same = false;
        for &e in topo.edges_of(p) {
            let m = topo.other(e, p as u32) as usize;
            if removed[m] {
                continue;
            }
            first.get_or_insert(m);
            any_same |= old_plate[m] == old_plate[p];
        }
        if let (Some(m), false) = (first, any_same) {
            if crust[p] == Crust::Oceanic {
                removed[p] = true;
                left -= 1;
            } else {
                plate[p] = old_plate[m];
            }
        }
    }
    // Gaps.
    let gap = GAP_RADIUS * spacing;
    let added: Vec<NewPoint> = triangles
        .par_iter()
        .enumerate()
        .filter_map(|(k, t)| {
            if t.iter().any(|&i| removed[i as usize]) {
                return None;
            }
            let [a, b, c] = t.map(|i| v3(positions[i as usize]));
            if circumradius(a, b, c) <= gap {
                return None;
            }
            let corner = t
                .iter()
                .copied()
                .find(|&i| crust[i as usize] == Crust::Oceanic)
                .unwrap_or(t[0]);
            let centre: DVec3 = (a + b + c).normalize();
            Some(NewPoint {
                position: centre.to_array(),
                plate: plate[corner as usize],
                triangle: k as u32,
            })
        })
        .collect();
    Plan { removed, added }
}

/// Keeps the elements of `v` whose `removed` flag is false.
pub(super) fn compact<T: Copy>(v: &[T], removed: &[bool]) -> Vec<T> {
    v.iter()
        .zip(removed)
        .filter(|(_, &r)| !r)
        .map(|(&x, _)| x)
        .collect()
}
