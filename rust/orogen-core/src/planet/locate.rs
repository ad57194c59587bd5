//! Finding the triangle that holds a direction, for [`super::Planet::sample`].
//!
//! A cube map of `6 · res²` cells (res ≈ √(n/24), so about four points per cell) stores,
//! per cell, a triangle near the cell's centre. A query starts there and walks across the
//! triangle edges it lies outside of (a visibility walk with 3D orientation tests
//! `q · (a × b)`, so there is no seam at the antimeridian or the poles) until it lies
//! inside all three. The hints are rebuilt at each remesh; between remeshes points move
//! less than a spacing, so walks stay short.

use glam::DVec3;
use rayon::prelude::*;

use super::sphere::v3;

/// Tolerance of the inside test (unit-sphere volume), so a query on an edge stops.
const INSIDE_EPS: f64 = -1e-15;

/// Start triangles per cube-map cell.
#[derive(Clone, Debug, Default)]
pub(super) struct Locator {
    res: usize,
    hint: Vec<u32>,
}

/// The cube-map cell of a non-zero direction.
fn cell(res: usize, q: DVec3) -> usize {
    let a = q.abs();
    let (face, u, v, m) = if a.x >= a.y && a.x >= a.z {
        (if q.x > 0.0 { 0 } else { 1 }, q.y, q.z, a.x)
    } else if a.y >= a.z {
        (if q.y > 0.0 { 2 } else { 3 }, q.x, q.z, a.y)
    } else {
        (if q.z > 0.0 { 4 } else { 5 }, q.x, q.y, a.z)
    };
    let f = |t: f64| (((t / m + 1.0) * 0.5 * res as f64) as usize).min(res - 1);
    (face * res + f(v)) * res + f(u)
}

/// The centre direction of cell `(face, i, j)`.
fn centre(res: usize, face: usize, i: usize, j: usize) -> DVec3 {
    let u = (j as f64 + 0.5) / res as f64 * 2.0 - 1.0;
    let v = (i as f64 + 0.5) / res as f64 * 2.0 - 1.0;
    let s = if face.is_multiple_of(2) { 1.0 } else { -1.0 };
    match face / 2 {
        0 => DVec3::new(s, u, v),
        1 => DVec3::new(u, s, v),
        _ => DVec3::new(u, v, s),
    }
    .normalize()
}

impl Locator {
    /// Hints for the triangulation `(positions, triangles, adj)`.
    pub(super) fn new(positions: &[[f64; 3]], triangles: &[[u32; 3]], adj: &[[u32; 3]]) -> Self {
        let res = ((positions.len() as f64 / 24.0).sqrt().ceil() as usize).max(1);
        let hint: Vec<u32> = (0..6)
            .into_par_iter()
            .flat_map_iter(|face| {
                let mut t = 0u32;
                let mut out = Vec::with_capacity(res * res);
                for i in 0..res {
                    for j in 0..res {
                        let q = centre(res, face, i, j);
                        t = walk(positions, triangles, adj, t, q).0;
                        out.push(t);
                    }
                    t = out[i * res];
                }
                out
            })
            .collect();
        Locator { res, hint }
    }

    /// The triangle holding `q` (unit vector) and the barycentric weights of its corners.
    pub(super) fn locate(
        &self,
        positions: &[[f64; 3]],
        triangles: &[[u32; 3]],
        adj: &[[u32; 3]],
        q: DVec3,
    ) -> (u32, [f64; 3]) {
        let start = if self.hint.is_empty() {
            0
        } else {
            self.hint[cell(self.res, q)]
        };
        walk(positions, triangles, adj, start, q)
    }
}

/// Visibility walk from triangle `t` to the one holding `q`; falls back to a scan of all
/// triangles if the walk has not arrived after many steps (it cannot cycle on a Delaunay
/// triangulation; between remeshes the mesh is only nearly Delaunay).
fn walk(
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    adj: &[[u32; 3]],
    t: u32,
    q: DVec3,
) -> (u32, [f64; 3]) {
    let mut t = t as usize;
    let limit = 64 + 4 * (triangles.len() as f64).sqrt() as usize;
    for step in 0..limit {
        let tri = triangles[t];
        let p = tri.map(|i| v3(positions[i as usize]));
        // d[i]: side of q against edge (p[i], p[i+1]); positive inside.
        let d = [
            q.dot(p[0].cross(p[1])),
            q.dot(p[1].cross(p[2])),
            q.dot(p[2].cross(p[0])),
        ];
        let mut moved = false;
        for k in 0..3 {
            let i = (k + step) % 3;
            if d[i] < INSIDE_EPS {
                t = adj[t][i] as usize;
                moved = true;
                break;
            }
        }
        if !moved {
            return (t as u32, weights(d));
        }
    }
    scan(positions, triangles, q)
}

/// Corner weights from the edge sides: corner 0 is opposite edge 1, and so on.
fn weights(d: [f64; 3]) -> [f64; 3] {
    let w = [d[1].max(0.0), d[2].max(0.0), d[0].max(0.0)];
    let s = w[0] + w[1] + w[2];
    if s > 0.0 {
        [w[0] / s, w[1] / s, w[2] / s]
    } else {
        [1.0, 0.0, 0.0]
    }
}

/// The triangle whose worst edge side is best for `q`.
fn scan(positions: &[[f64; 3]], triangles: &[[u32; 3]], q: DVec3) -> (u32, [f64; 3]) {
    let mut best = (f64::NEG_INFINITY, 0usize, [0.0; 3]);
    for (t, tri) in triangles.iter().enumerate() {
        let p = tri.map(|i| v3(positions[i as usize]));
        let d = [
            q.dot(p[0].cross(p[1])),
            q.dot(p[1].cross(p[2])),
            q.dot(p[2].cross(p[0])),
        ];
        let m = d[0].min(d[1]).min(d[2]);
        // Only the near side of the sphere: a triangle on the far side has all d < 0 too.
        if m > best.0 && q.dot(p[0]) > 0.0 {
            best = (m, t, d);
        }
    }
    (best.1 as u32, weights(best.2))
}

impl Locator {
    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        std::mem::size_of_val(self.hint.as_slice())
    }
}
