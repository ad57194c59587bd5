//! The spherical Delaunay triangulation (= convex hull) of points on the unit sphere, and
//! the adjacency the simulation walks.
//!
//! The seed builds the hull with QuickHull and keeps it in a quad-edge mesh it edits with
//! flips, splits and collapses ("World mesh creation", "Modifying Meshes"). Here the hull
//! comes from a stereographic projection: projected from one of the points `P` onto the
//! plane through the centre perpendicular to `P`, circles on the sphere stay circles, so
//! the hull faces not touching `P` are exactly the planar Delaunay triangles of the other
//! points (built by `spade`, exact predicates, bulk loaded), and the faces touching `P`
//! close the planar convex hull. The projection mirrors orientation, so each planar
//! counter-clockwise triangle is stored reversed; the fan around `P` is oriented by
//! `a · (b × c) > 0`.
//!
//! Instead of a quad-edge mesh the planet keeps a flat triangle list, each triangle's three
//! neighbours, an undirected edge list and CSR lists of each point's edges and neighbours:
//! flat arrays that parallel passes read without pointer chasing. The seed's mesh edits
//! (flip, split, collapse) work on them in place (see `flips` and `edit`); this bulk
//! triangulation builds the first mesh, and rebuilds it only when an edit cannot go on.

use glam::DVec3;
use rayon::prelude::*;
use spade::{DelaunayTriangulation, Point2, Triangulation};

use super::sphere::{orient, v3};
use crate::error::{OrogenError, Result};
use crate::mesh::delaunay::Indexed;

/// Triangles (counter-clockwise seen from outside) of the convex hull of `points` (unit
/// vectors, at least 4, pairwise distinct, not all on one great circle).
pub(super) fn triangulate(points: &[[f64; 3]]) -> Result<Vec<[u32; 3]>> {
    let n = points.len();
    if n < 4 {
        return Err(OrogenError::invalid(
            "planet.points",
            format!("a spherical triangulation needs at least 4 points, got {n}"),
        ));
    }
    if n >= u32::MAX as usize {
        return Err(OrogenError::invalid("planet.points", "too many points"));
    }
    let pole = v3(points[0]);
    let helper = if pole.x.abs() < 0.6 {
        DVec3::X
    } else {
        DVec3::Y
    };
    let e1 = helper.cross(pole).normalize();
    let e2 = pole.cross(e1);
    let input: Vec<Indexed> = points[1..]
        .par_iter()
        .enumerate()
        .map(|(i, &p)| {
            let p = v3(p);
            // 1 − p·P, computed without cancellation for p near P.
            let d = 0.5 * (p - pole).length_squared();
            Indexed {
                at: Point2::new(p.dot(e1) / d, p.dot(e2) / d),
                index: i as u32 + 1,
            }
        })
        .collect();
    for (i, q) in input.iter().enumerate() {
        if !(q.at.x.is_finite() && q.at.y.is_finite())
            || spade::validate_coordinate(q.at.x).is_err()
            || spade::validate_coordinate(q.at.y).is_err()
        {
            return Err(OrogenError::Numerical {
                field: "planet.positions".into(),
                reason: format!("point {} coincides with point 0 or is not finite", i + 1),
            });
        }
    }
    let tri =
        DelaunayTriangulation::<Indexed>::bulk_load(input).map_err(|e| OrogenError::Numerical {
            field: "planet.positions".into(),
            reason: format!("triangulation rejected the points: {e}"),
        })?;
    if tri.num_vertices() < n - 1 {
        return Err(OrogenError::Numerical {
            field: "planet.positions".into(),
            reason: format!(
                "{} of {n} points coincide with another point",
                n - 1 - tri.num_vertices()
            ),
        });
    }
    if tri.all_vertices_on_line() {
        return Err(OrogenError::Numerical {
            field: "planet.positions".into(),
            reason: "all points lie on one great circle".into(),
        });
    }
    let mut triangles: Vec<[u32; 3]> =
        Vec::with_capacity(tri.num_inner_faces() + tri.convex_hull_size());
    triangles.extend(tri.inner_faces().map(|f| {
        let [a, b, c] = f.vertices().map(|v| v.data().index);
        [a, c, b]
    }));
    for e in tri.convex_hull() {
        let (a, b) = (e.from().data().index, e.to().data().index);
        let t = if orient(pole, v3(points[a as usize]), v3(points[b as usize])) > 0.0 {
            [0, a, b]
        } else {
            [0, b, a]
        };
        triangles.push(t);
    }
    Ok(by_lowest_corner(triangles, n))
}

/// `triangles` ordered by their lowest corner (a counting sort, stable): the points are in
/// spatial order (see `sphere`), so neighbouring triangles end up near each other in
/// memory, which the per-step passes over triangles and edges read much faster than
/// `spade`'s face order.
fn by_lowest_corner(triangles: Vec<[u32; 3]>, n: usize) -> Vec<[u32; 3]> {
    let low = |t: &[u32; 3]| t[0].min(t[1]).min(t[2]) as usize;
    let mut start = vec![0u32; n + 1];
    for t in &triangles {
        start[low(t) + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut out = vec![[0u32; 3]; triangles.len()];
    for t in triangles {
        let k = &mut start[low(&t)];
        out[*k as usize] = t;
        *k += 1;
    }
    out
}

/// Adjacency of a closed triangulation.
#[derive(Clone, Debug, Default)]
pub(super) struct Topology {
    /// `tri_adj[t][i]`: the triangle across edge `(t[i], t[(i + 1) % 3])`.
    pub tri_adj: Vec<[u32; 3]>,
    /// `tri_edge[t][i]`: the index in `edges` of that edge.
    pub tri_edge: Vec<[u32; 3]>,
    /// Undirected edges `[a, b]` with `a < b`, sorted when built (flips then replace
    /// edges in place).
    pub edges: Vec<[u32; 2]>,
    /// CSR: the edges of point `p` are `point_edges[start[p] .. start[p + 1]]`, ascending.
    pub start: Vec<u32>,
    pub point_edges: Vec<u32>,
    /// The other end of each edge in `point_edges` (the flood fills and the force sums
    /// read neighbours without going through the edge list).
    pub point_nbrs: Vec<u32>,
}

impl Topology {
    /// The adjacency of `triangles` over `n` points; errors when they do not form a closed
    /// 2-manifold (an edge not shared by exactly two opposite triangles, a point in no
    /// triangle). Half-edges are bucketed by origin (counting sort), and each finds its
    /// twin among the few half-edges leaving its destination: linear, no global sort.
    pub(super) fn new(n: usize, triangles: &[[u32; 3]]) -> Result<Topology> {
        let bad = |why: &str| OrogenError::Numerical {
            field: "planet.triangles".into(),
            reason: format!("the triangles do not form a closed surface: {why}"),
        };
        let mut hstart = vec![0u32; n + 1];
        for tri in triangles {
            for &a in tri {
                if a as usize >= n {
                    return Err(bad("a corner is not a point"));
                }
                hstart[a as usize + 1] += 1;
            }
        }
        for i in 0..n {
            if hstart[i + 1] == 0 {
                return Err(OrogenError::Numerical {
                    field: "planet.triangles".into(),
                    reason: format!("point {i} is in no triangle"),
                });
            }
            hstart[i + 1] += hstart[i];
        }
        let mut fill = hstart.clone();
        let mut hes = vec![0u32; triangles.len() * 3];
        for (t, tri) in triangles.iter().enumerate() {
            for (i, &a) in tri.iter().enumerate() {
                hes[fill[a as usize] as usize] = (t * 3 + i) as u32;
                fill[a as usize] += 1;
            }
        }
        drop(fill);
        let dest = |h: u32| triangles[(h / 3) as usize][((h % 3 + 1) % 3) as usize];
        let origin = |h: u32| triangles[(h / 3) as usize][(h % 3) as usize];
        let out = |p: u32| &hes[hstart[p as usize] as usize..hstart[p as usize + 1] as usize];
        let twin: Vec<u32> = (0..hes.len() as u32)
            .into_par_iter()
            .map(|h| {
                let (a, b) = (origin(h), dest(h));
                let mut found = u32::MAX;
                for &g in out(b) {
                    if dest(g) == a {
                        if found != u32::MAX {
                            return u32::MAX - 1;
                        }
                        found = g;
                    }
                }
                found
            })
            .collect();
        if twin.par_iter().any(|&g| g >= u32::MAX - 1) {
            return Err(bad("an edge is not shared by exactly two triangles"));
        }
        let tri_adj: Vec<[u32; 3]> = (0..triangles.len())
            .into_par_iter()
            .map(|t| [0, 1, 2].map(|i| twin[t * 3 + i] / 3))
            .collect();
        let mut edges = Vec::with_capacity(hes.len() / 2);
        let mut eid = vec![0u32; hes.len()];
        let mut up: Vec<(u32, u32)> = Vec::with_capacity(16);
        for a in 0..n as u32 {
            up.clear();
            up.extend(out(a).iter().map(|&h| (dest(h), h)).filter(|&(b, _)| b > a));
            up.sort_unstable();
            for &(b, h) in &up {
                let id = edges.len() as u32;
                eid[h as usize] = id;
                eid[twin[h as usize] as usize] = id;
                edges.push([a, b]);
            }
        }
        let mut point_edges: Vec<u32> = hes.iter().map(|&h| eid[h as usize]).collect();
        for p in 0..n {
            point_edges[hstart[p] as usize..hstart[p + 1] as usize].sort_unstable();
        }
        let point_nbrs = csr_neighbours(&hstart, &point_edges, &edges);
        let tri_edge: Vec<[u32; 3]> = (0..triangles.len())
            .into_par_iter()
            .map(|t| [0, 1, 2].map(|i| eid[t * 3 + i]))
            .collect();
        Ok(Topology {
            tri_adj,
            tri_edge,
            edges,
            start: hstart,
            point_edges,
            point_nbrs,
        })
    }

    /// The edges of point `p`.
    #[inline]
    pub(super) fn edges_of(&self, p: usize) -> &[u32] {
        &self.point_edges[self.start[p] as usize..self.start[p + 1] as usize]
    }

    /// The neighbours of point `p`, in the order of [`Self::edges_of`].
    #[inline]
    pub(super) fn neighbours_of(&self, p: usize) -> &[u32] {
        &self.point_nbrs[self.start[p] as usize..self.start[p + 1] as usize]
    }

    /// The other end of edge `e` from `p`.
    #[inline]
    pub(super) fn other(&self, e: u32, p: u32) -> u32 {
        let [a, b] = self.edges[e as usize];
        if a == p {
            b
        } else {
            a
        }
    }

    /// Index of edge `a`–`b`, if present.
    pub(super) fn find(&self, a: u32, b: u32) -> Option<usize> {
        self.edges_of(a as usize)
            .iter()
            .find(|&&e| self.other(e, a) == b)
            .map(|&e| e as usize)
    }
}

/// The other end of each edge of the CSR lists `start`/`point_edges` over `edges`.
pub(super) fn csr_neighbours(start: &[u32], point_edges: &[u32], edges: &[[u32; 2]]) -> Vec<u32> {
    let mut nbrs = vec![0u32; point_edges.len()];
    nbrs.par_chunks_mut(4096)
        .enumerate()
        .for_each(|(c, chunk)| {
            let first = c * 4096;
            // The point owning slot `first`: the last start ≤ first.
            let mut p = start.partition_point(|&s| s as usize <= first) - 1;
            for (k, out) in chunk.iter_mut().enumerate() {
                let slot = first + k;
                while start[p + 1] as usize <= slot {
                    p += 1;
                }
                let [a, b] = edges[point_edges[slot] as usize];
                *out = if a as usize == p { b } else { a };
            }
        });
    nbrs
}
