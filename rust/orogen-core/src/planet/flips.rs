//! Keeping the mesh a valid Delaunay triangulation between remeshes by edge flips (seed
//! "Plate Tectonics 1": "flipping edges that don't pass the circumference-condition until
//! the Delaunay triangulation is restored"; "Modifying Meshes / Edge Flip").
//!
//! After the points move, an edge `a→b` of triangle `(a, b, c)` whose other triangle is
//! `(b, a, d)` is flipped to `c–d` when `d` lies inside the circumcircle of `(a, b, c)`
//! (on the unit sphere: beyond the plane of `a, b, c`, `n · (d − a) > 0` with `n` its
//! outward normal) or when either triangle has turned over, provided both new triangles
//! `(c, a, d)` and `(d, b, c)` face outwards. Flipped edges queue their quad's four sides.
//! A flipped edge keeps its index, takes the current length as its spring rest length
//! (the seed swaps spring state with the dual edge; here a flipped spring starts relaxed)
//! and is joined or transform by its ends' plates. If a turned-over triangle remains (a
//! point ran past more than one triangle in one step), the step holds such points back
//! where they were (see `sim`), and rebuilds the whole mesh only if that fails too.

use super::hull::Topology;
use super::sphere::{orient, v3};

/// Relative tolerance of the in-circle test, so cocircular quads do not flip back and forth.
const IN_CIRCLE_EPS: f64 = 1e-12;

#[inline]
pub(super) fn next(i: usize) -> usize {
    (i + 1) % 3
}

/// Slot `k` of triangle `t` holding edge `x→y`.
pub(super) fn slot(tri: &[u32; 3], x: u32, y: u32) -> Option<usize> {
    (0..3).find(|&k| tri[k] == x && tri[next(k)] == y)
}

/// Should edge slot `i` of triangle `t` flip? Returns the other triangle and its slot.
fn wants_flip(
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    adj: &[[u32; 3]],
    t: usize,
    i: usize,
) -> Option<(usize, usize)> {
    let tri = triangles[t];
    let (a, b, c) = (tri[i], tri[next(i)], tri[next(next(i))]);
    let u = adj[t][i] as usize;
    let j = slot(&triangles[u], b, a)?;
    let d = triangles[u][next(next(j))];
    if d == c {
        return None;
    }
    let [pa, pb, pc, pd] = [a, b, c, d].map(|k| v3(positions[k as usize]));
    if orient(pc, pa, pd) <= 0.0 || orient(pd, pb, pc) <= 0.0 {
        return None;
    }
    let inverted = orient(pa, pb, pc) <= 0.0 || orient(pb, pa, pd) <= 0.0;
    let n = (pb - pa).cross(pc - pa);
    let beyond = n.dot(pd - pa) > IN_CIRCLE_EPS * n.length() * (pd - pa).length();
    (inverted || beyond).then_some((u, j))
}

/// The first, parallel pass of [`restore`] over edge slot `i` of triangle `t`, with each
/// triangle's normal `(b − a) × (c − a)` and turned-over flag precomputed: the same
/// answer as [`wants_flip`], but the turn-over and in-circle tests read stored values, and
/// the orientation of the new triangles is only computed for the few edges that fail them.
#[inline]
fn wants_flip_scan(
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    adj: &[[u32; 3]],
    normal: &[(glam::DVec3, bool)],
    t: usize,
    i: usize,
) -> bool {
    let tri = triangles[t];
    let (a, b, c) = (tri[i], tri[next(i)], tri[next(next(i))]);
    let u = adj[t][i] as usize;
    let Some(j) = slot(&triangles[u], b, a) else {
        return false;
    };
    let d = triangles[u][next(next(j))];
    if d == c {
        return false;
    }
    let (n, turned_t) = normal[t];
    let e = v3(positions[d as usize]) - v3(positions[a as usize]);
    let dot = n.dot(e);
    // Looser than `wants_flip`'s tests by a rounding margin, so this pass never misses an
    // edge it would flip.
    let eps = 0.5 * IN_CIRCLE_EPS;
    let beyond = dot > 0.0 && dot * dot > eps * eps * n.length_squared() * e.length_squared();
    (turned_t || normal[u].1 || beyond) && wants_flip(positions, triangles, adj, t, i).is_some()
}

/// The edge slots `(triangle, side)` that [`restore`] would flip first: each edge that is
/// not locally Delaunay or borders a turned-over triangle, by a parallel pass over every
/// triangle; and the triangles turned over (or within rounding of it), ascending.
pub(super) fn unfit_edges(
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    adj: &[[u32; 3]],
) -> (Vec<(u32, u8)>, Vec<u32>) {
    use rayon::prelude::*;
    // orient(a, b, c) = a · ((b − a) × (c − a)); turned over, or within rounding of it.
    let normal: Vec<(glam::DVec3, bool)> = triangles
        .par_iter()
        .map(|t| {
            let [a, b, c] = t.map(|k| v3(positions[k as usize]));
            let n = (b - a).cross(c - a);
            let o = n.dot(a);
            (n, o <= 0.0 || o * o <= 1e-18 * n.length_squared())
        })
        .collect();
    let normal = &normal;
    let edges = (0..triangles.len())
        .into_par_iter()
        .flat_map_iter(|t| {
            (0..3)
                .filter(move |&i| {
                    // Each edge once: from its lower-indexed triangle, unless turned over.
                    (t as u32) < adj[t][i] || normal[t].1
                })
                .filter(move |&i| wants_flip_scan(positions, triangles, adj, normal, t, i))
                .map(move |i| (t as u32, i as u8))
        })
        .collect();
    let turned = (0..triangles.len() as u32)
        .into_par_iter()
        .filter(|&t| normal[t as usize].1)
        .collect();
    (edges, turned)
}

/// The three side slots `(triangle, side)` of each triangle in `triangles`, as
/// [`restore`] takes its seeds.
pub(super) fn sides_of(triangles: &[u32]) -> Vec<(u32, u8)> {
    triangles
        .iter()
        .flat_map(|&t| (0..3u8).map(move |i| (t, i)))
        .collect()
}

/// Flips edges until the mesh is Delaunay and upright, at most `max_flips` flips, starting
/// from the edge slots `seeds` (`(triangle, side)`; all unfit edges when the rest of the
/// mesh is known to be fine: see [`unfit_edges`]) and going on with the sides of each
/// flipped quad. `tri_edge[t][i]` is the edge index of side `i` of triangle `t`;
/// `flipped` receives each flipped edge index. Returns false when the budget ran out.
#[allow(clippy::too_many_arguments)]
pub(super) fn restore(
    positions: &[[f64; 3]],
    triangles: &mut [[u32; 3]],
    adj: &mut [[u32; 3]],
    tri_edge: &mut [[u32; 3]],
    topo_edges: &mut [[u32; 2]],
    flipped: &mut Vec<u32>,
    max_flips: usize,
    seeds: &[(u32, u8)],
) -> bool {
    let mut stack = seeds.to_vec();
    stack.reverse();
    let mut flips = 0;
    while let Some((t, i)) = stack.pop() {
        let (t, i) = (t as usize, i as usize);
        let Some((u, j)) = wants_flip(positions, triangles, adj, t, i) else {
            continue;
        };
        if flips == max_flips {
            return false;
        }
        flips += 1;
        let e_ab = flip(triangles, adj, tri_edge, topo_edges, (t, i), (u, j));
        flipped.push(e_ab);
        stack.extend([(t as u32, 0), (t as u32, 1), (u as u32, 0), (u as u32, 1)]);
    }
    true
}

/// Flips the edge shared by slot `i` of triangle `t = (a, b, c)` (edge `a→b`) and slot `j`
/// of triangle `u = (b, a, d)`: afterwards `t = (c, a, d)` and `u = (d, b, c)`, the
/// neighbours across `a–d` and `b–c` face them, and the edge (same index, returned) is
/// `c–d`. The caller checks that both new triangles face outwards.
pub(super) fn flip(
    triangles: &mut [[u32; 3]],
    adj: &mut [[u32; 3]],
    tri_edge: &mut [[u32; 3]],
    topo_edges: &mut [[u32; 2]],
    (t, i): (usize, usize),
    (u, j): (usize, usize),
) -> u32 {
    let tri = triangles[t];
    let (a, b, c) = (tri[i], tri[next(i)], tri[next(next(i))]);
    let d = triangles[u][next(next(j))];
    let (nb_bc, nb_ca) = (adj[t][next(i)], adj[t][next(next(i))]);
    let (nb_ad, nb_db) = (adj[u][next(j)], adj[u][next(next(j))]);
    let (e_ab, e_bc, e_ca) = (
        tri_edge[t][i],
        tri_edge[t][next(i)],
        tri_edge[t][next(next(i))],
    );
    let (e_ad, e_db) = (tri_edge[u][next(j)], tri_edge[u][next(next(j))]);
    triangles[t] = [c, a, d];
    adj[t] = [nb_ca, nb_ad, u as u32];
    tri_edge[t] = [e_ca, e_ad, e_ab];
    triangles[u] = [d, b, c];
    adj[u] = [nb_db, nb_bc, t as u32];
    tri_edge[u] = [e_db, e_bc, e_ab];
    if let Some(k) = slot(&triangles[nb_ad as usize], d, a) {
        adj[nb_ad as usize][k] = t as u32;
    }
    if let Some(k) = slot(&triangles[nb_bc as usize], c, b) {
        adj[nb_bc as usize][k] = u as u32;
    }
    topo_edges[e_ab as usize] = [c.min(d), c.max(d)];
    e_ab
}

/// Rebuilds the CSR point → edges lists of `topo` from its edge list.
pub(super) fn rebuild_csr(topo: &mut Topology, n: usize) {
    let mut start = vec![0u32; n + 1];
    for e in &topo.edges {
        start[e[0] as usize + 1] += 1;
        start[e[1] as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut point_edges = vec![0u32; topo.edges.len() * 2];
    for (k, e) in topo.edges.iter().enumerate() {
        for &p in e {
            point_edges[fill[p as usize] as usize] = k as u32;
            fill[p as usize] += 1;
        }
    }
    topo.point_nbrs = super::hull::csr_neighbours(&start, &point_edges, &topo.edges);
    topo.start = start;
    topo.point_edges = point_edges;
}
