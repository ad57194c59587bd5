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
fn next(i: usize) -> usize {
    (i + 1) % 3
}

/// Slot `k` of triangle `t` holding edge `x→y`.
fn slot(tri: &[u32; 3], x: u32, y: u32) -> Option<usize> {
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

/// Flips edges until the mesh is Delaunay and upright, at most `max_flips` flips.
/// `tri_edge[t][i]` is the edge index of side `i` of triangle `t`; `flipped` receives
/// each flipped edge index. Returns false when the budget ran out.
pub(super) fn restore(
    positions: &[[f64; 3]],
    triangles: &mut [[u32; 3]],
    adj: &mut [[u32; 3]],
    tri_edge: &mut [[u32; 3]],
    topo_edges: &mut [[u32; 2]],
    flipped: &mut Vec<u32>,
    max_flips: usize,
) -> bool {
    use rayon::prelude::*;
    let mut stack: Vec<(u32, u8)> = (0..triangles.len())
        .into_par_iter()
        .flat_map_iter(|t| {
            let (triangles, adj) = (&*triangles, &*adj);
            (0..3)
                .filter(move |&i| {
                    // Each edge once: from its lower-indexed triangle, unless inverted.
                    (t as u32) < adj[t][i] || {
                        let p = triangles[t].map(|k| v3(positions[k as usize]));
                        orient(p[0], p[1], p[2]) <= 0.0
                    }
                })
                .filter(move |&i| wants_flip(positions, triangles, adj, t, i).is_some())
                .map(move |i| (t as u32, i as u8))
        })
        .collect();
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
        // t = (c, a, d), u = (d, b, c).
        triangles[t] = [c, a, d];
        adj[t] = [nb_ca, nb_ad, u as u32];
        tri_edge[t] = [e_ca, e_ad, e_ab];
        triangles[u] = [d, b, c];
        adj[u] = [nb_db, nb_bc, t as u32];
        tri_edge[u] = [e_db, e_bc, e_ab];
        // The neighbours across a–d and b–c now face t and u.
        if let Some(k) = slot(&triangles[nb_ad as usize], d, a) {
            adj[nb_ad as usize][k] = t as u32;
        }
        if let Some(k) = slot(&triangles[nb_bc as usize], c, b) {
            adj[nb_bc as usize][k] = u as u32;
        }
        topo_edges[e_ab as usize] = [c.min(d), c.max(d)];
        flipped.push(e_ab);
        stack.extend([(t as u32, 0), (t as u32, 1), (u as u32, 0), (u as u32, 1)]);
    }
    true
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
    topo.start = start;
    topo.point_edges = point_edges;
}
