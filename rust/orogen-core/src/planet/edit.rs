//! Local mesh edits for a remesh (seed "Modifying Meshes": flip, split, collapse): new
//! points split the triangle they fall in, removed points are flipped down to three
//! neighbours and their three triangles merged into one, and edge flips then make the
//! mesh Delaunay again (Lawson). The rest of the mesh is left as it was, so a remesh
//! costs in proportion to the points it adds and removes, not to the planet.
//!
//! Removal by flips (Mostafavi, Gold & Dakowicz 2003): the neighbours of a point `v` form
//! a polygon star-shaped from `v`; flipping an edge `v–w` whose two triangles make a
//! convex quad cuts the ear at `w` off the polygon and lowers `v`'s degree by one. At
//! degree 3, `v` lies inside the triangle of its neighbours, which replaces its three
//! triangles. Should no edge be flippable (not seen; rounding on near-degenerate rings
//! could cause it), the edit gives up and the caller rebuilds the whole mesh.

use super::flips::{flip, next, restore, sides_of};
use super::hull::Topology;
use super::sphere::{orient, v3};

/// A slot freed by an edit.
const DEAD: u32 = u32::MAX;

/// The mesh after the edits, in the new point numbering (survivors in order, then the
/// added points): triangles, topology, and for each edge the index it had before, or
/// `u32::MAX` when it is new or was flipped (its ends changed).
pub(super) struct Edited {
    pub triangles: Vec<[u32; 3]>,
    pub topo: Topology,
    pub old_edge: Vec<u32>,
}

/// Working copy of the mesh.
struct Mesh {
    triangles: Vec<[u32; 3]>,
    adj: Vec<[u32; 3]>,
    tri_edge: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    /// A triangle holding each point (kept up to date by the removals).
    holder: Vec<u32>,
    /// Edges created or flipped.
    touched: Vec<bool>,
}

impl Mesh {
    fn new_edge(&mut self, a: u32, b: u32) -> u32 {
        self.edges.push([a.min(b), a.max(b)]);
        self.touched.push(true);
        (self.edges.len() - 1) as u32
    }

    /// Replaces, in triangle `nb`, the neighbour `from` by `to`.
    fn repoint(&mut self, nb: u32, from: u32, to: u32) {
        for k in 0..3 {
            if self.adj[nb as usize][k] == from {
                self.adj[nb as usize][k] = to;
            }
        }
    }

    /// Splits triangle `t = (a, b, c)` at new point `p` (inside it) into `(a, b, p)`,
    /// `(b, c, p)` and `(c, a, p)`; returns the three triangles.
    fn split(&mut self, t: u32, p: u32) -> [u32; 3] {
        let tu = t as usize;
        let [a, b, c] = self.triangles[tu];
        let [n_ab, n_bc, n_ca] = self.adj[tu];
        let [e_ab, e_bc, e_ca] = self.tri_edge[tu];
        let (t1, t2) = (self.triangles.len() as u32, self.triangles.len() as u32 + 1);
        let (e_ap, e_bp, e_cp) = (
            self.new_edge(a, p),
            self.new_edge(b, p),
            self.new_edge(c, p),
        );
        self.triangles[tu] = [a, b, p];
        self.adj[tu] = [n_ab, t1, t2];
        self.tri_edge[tu] = [e_ab, e_bp, e_ap];
        self.triangles.push([b, c, p]);
        self.adj.push([n_bc, t2, t]);
        self.tri_edge.push([e_bc, e_cp, e_bp]);
        self.triangles.push([c, a, p]);
        self.adj.push([n_ca, t, t1]);
        self.tri_edge.push([e_ca, e_ap, e_cp]);
        self.repoint(n_bc, t, t1);
        self.repoint(n_ca, t, t2);
        self.holder[p as usize] = t;
        self.holder[b as usize] = t1;
        self.holder[c as usize] = t2;
        [t, t1, t2]
    }

    /// The triangles around `v` counter-clockwise, each with `v`'s slot in it.
    fn star(&self, v: u32, out: &mut Vec<(u32, usize)>) -> Option<()> {
        out.clear();
        let t0 = self.holder[v as usize];
        let mut t = t0;
        loop {
            let s = (0..3).find(|&k| self.triangles[t as usize][k] == v)?;
            out.push((t, s));
            // The next triangle around v: across the side (previous corner → v).
            t = self.adj[t as usize][next(next(s))];
            if t == t0 {
                return Some(());
            }
            if out.len() > 64 * 1024 {
                return None;
            }
        }
    }

    /// Removes point `v`: flips its edges until it has three neighbours, then merges its
    /// three triangles. The triangles it changed (some freed since) go to `changed`;
    /// `None` when stuck.
    fn remove(
        &mut self,
        v: u32,
        positions: &[[f64; 3]],
        star: &mut Vec<(u32, usize)>,
        changed: &mut Vec<u32>,
    ) -> Option<()> {
        let pos = |k: u32| v3(positions[k as usize]);
        loop {
            self.star(v, star)?;
            let k = star.len();
            if k < 3 {
                return None;
            }
            if k == 3 {
                break;
            }
            // Triangle m of the star is (v, w_m, w_m+1). Flip v–w_m (shared by triangles
            // m − 1 and m) where (w_m−1, w_m, w_m+1) and (v, w_m+1, w_m−1) face outwards.
            let ring = |m: usize| {
                let (t, s) = star[m % k];
                self.triangles[t as usize][next(s)]
            };
            let pv = pos(v);
            let found = (0..k).find(|&m| {
                let (wp, w, wn) = (ring(m + k - 1), ring(m), ring(m + 1));
                orient(pos(wp), pos(w), pos(wn)) > 0.0 && orient(pos(wn), pv, pos(wp)) > 0.0
            })?;
            // In triangle m (v, w_m, w_m+1) the edge v→w_m is slot s; in triangle m − 1
            // (v, w_m−1, w_m) it is w_m→v, slot s' + 2.
            let (tb, sb) = star[found];
            let (ta, sa) = star[(found + k - 1) % k];
            let e = flip(
                &mut self.triangles,
                &mut self.adj,
                &mut self.tri_edge,
                &mut self.edges,
                (tb as usize, sb),
                (ta as usize, next(next(sa))),
            );
            self.touched[e as usize] = true;
            changed.extend([ta, tb]);
            // tb = (w_m+1, v, w_m−1) holds v; ta = (w_m−1, w_m, w_m+1) the ear.
            self.holder[v as usize] = tb;
            for &w in &self.triangles[ta as usize] {
                self.holder[w as usize] = ta;
            }
        }
        // Three triangles (v, w0, w1), (v, w1, w2), (v, w2, w0): one (w0, w1, w2).
        let sides: Vec<(u32, u32, u32, u32)> = star
            .iter()
            .map(|&(t, s)| {
                let tri = self.triangles[t as usize];
                // Outer side w→w' is slot s + 1.
                (
                    t,
                    tri[next(s)],
                    self.adj[t as usize][next(s)],
                    self.tri_edge[t as usize][next(s)],
                )
            })
            .collect();
        let keep = sides[0].0;
        let w = [sides[0].1, sides[1].1, sides[2].1];
        if orient(pos(w[0]), pos(w[1]), pos(w[2])) <= 0.0 {
            return None;
        }
        for &(t, s) in star.iter() {
            // The spoke v→w is slot s.
            let spoke = self.tri_edge[t as usize][s];
            self.edges[spoke as usize] = [DEAD, DEAD];
        }
        for &(t, _, outer, _) in &sides[1..] {
            self.repoint(outer, t, keep);
            self.triangles[t as usize] = [DEAD; 3];
        }
        self.triangles[keep as usize] = w;
        self.adj[keep as usize] = [sides[0].2, sides[1].2, sides[2].2];
        self.tri_edge[keep as usize] = [sides[0].3, sides[1].3, sides[2].3];
        for &x in &w {
            self.holder[x as usize] = keep;
        }
        changed.push(keep);
        Some(())
    }
}

/// The mesh of `triangles`/`topo` over the first `n_old` of `positions`, with the points
/// `positions[n_old..]` added (each inside triangle `added_in[k]`, each triangle at most
/// once) and the points flagged in `removed` (length `n_old`) taken out, made Delaunay
/// again. `None` when an edit got stuck or the flips ran over budget: rebuild instead.
pub(super) fn edit(
    positions: &[[f64; 3]],
    n_old: usize,
    removed: &[bool],
    added_in: &[u32],
    triangles: &[[u32; 3]],
    topo: &Topology,
) -> Option<Edited> {
    let n_all = positions.len();
    let mut m = Mesh {
        triangles: triangles.to_vec(),
        adj: topo.tri_adj.clone(),
        tri_edge: topo.tri_edge.clone(),
        edges: topo.edges.clone(),
        holder: vec![DEAD; n_all],
        touched: vec![false; topo.edges.len()],
    };
    for (t, tri) in triangles.iter().enumerate() {
        for &p in tri {
            m.holder[p as usize] = t as u32;
        }
    }
    let mut seeds: Vec<u32> = Vec::new();
    for (k, &t) in added_in.iter().enumerate() {
        seeds.extend(m.split(t, (n_old + k) as u32));
    }
    let mut star = Vec::new();
    for v in (0..n_old).filter(|&v| removed[v]) {
        m.remove(v as u32, positions, &mut star, &mut seeds)?;
    }
    // Seeds may name triangles freed since; flips only reach live ones from live ones.
    seeds.retain(|&t| m.triangles[t as usize][0] != DEAD);
    seeds.sort_unstable();
    seeds.dedup();
    let mut flipped = Vec::new();
    if !restore(
        positions,
        &mut m.triangles,
        &mut m.adj,
        &mut m.tri_edge,
        &mut m.edges,
        &mut flipped,
        4 * n_all,
        &sides_of(&seeds),
    ) {
        return None;
    }
    for e in flipped {
        m.touched[e as usize] = true;
    }
    // Renumber points, triangles and edges without the freed slots.
    let (pmap, next_id) = renumber(n_all, |p| p >= n_old || !removed[p]);
    let (tmap, live_t) = renumber(m.triangles.len(), |t| m.triangles[t][0] != DEAD);
    let (emap, live_e) = renumber(m.edges.len(), |e| m.edges[e][0] != DEAD);
    let mut out_tris = Vec::with_capacity(live_t as usize);
    let mut tri_adj = Vec::with_capacity(live_t as usize);
    let mut tri_edge = Vec::with_capacity(live_t as usize);
    for t in 0..m.triangles.len() {
        if tmap[t] == DEAD {
            continue;
        }
        out_tris.push(m.triangles[t].map(|p| pmap[p as usize]));
        tri_adj.push(m.adj[t].map(|u| tmap[u as usize]));
        tri_edge.push(m.tri_edge[t].map(|e| emap[e as usize]));
    }
    let mut edges = Vec::with_capacity(live_e as usize);
    let mut old_edge = Vec::with_capacity(live_e as usize);
    for (e, &[a, b]) in m.edges.iter().enumerate() {
        if emap[e] == DEAD {
            continue;
        }
        let (a, b) = (pmap[a as usize], pmap[b as usize]);
        edges.push([a.min(b), a.max(b)]);
        old_edge.push(if e < topo.edges.len() && !m.touched[e] {
            e as u32
        } else {
            u32::MAX
        });
    }
    // Every point, edge and neighbour must have survived the renumbering.
    if out_tris.iter().flatten().any(|&p| p == DEAD)
        || tri_adj.iter().flatten().any(|&u| u == DEAD)
        || tri_edge.iter().flatten().any(|&e| e == DEAD)
        || next_id as usize + out_tris.len() != edges.len() + 2
        || 2 * edges.len() != 3 * out_tris.len()
    {
        return None;
    }
    let mut topo = Topology {
        tri_adj,
        tri_edge,
        edges,
        start: Vec::new(),
        point_edges: Vec::new(),
        point_nbrs: Vec::new(),
    };
    super::flips::rebuild_csr(&mut topo, next_id as usize);
    Some(Edited {
        triangles: out_tris,
        topo,
        old_edge,
    })
}

/// New indices for `n` slots keeping their order, [`DEAD`] for those `live` rejects, and
/// how many are live.
fn renumber(n: usize, live: impl Fn(usize) -> bool) -> (Vec<u32>, u32) {
    let mut map = vec![DEAD; n];
    let mut next = 0u32;
    for (k, slot) in map.iter_mut().enumerate() {
        if live(k) {
            *slot = next;
            next += 1;
        }
    }
    (map, next)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::atomic::AtomicBool;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::planet::hull::triangulate;
    use crate::planet::sphere::fibonacci_sphere;

    /// Each triangle as its corners rotated to start at the lowest: the same set for the
    /// same triangulation, whatever the order and rotation.
    fn canonical(triangles: &[[u32; 3]]) -> BTreeSet<[u32; 3]> {
        triangles
            .iter()
            .map(|t| {
                let k = (0..3).min_by_key(|&k| t[k]).unwrap();
                [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
            })
            .collect()
    }

    /// Adding and removing points by local edits gives the Delaunay triangulation of the
    /// new points, the same triangles as triangulating them from scratch (it is unique for
    /// points in general position), and every edge said to be old joins the same two
    /// points it joined before.
    #[test]
    fn edits_match_a_fresh_triangulation() {
        let cancel = AtomicBool::new(false);
        for seed in 0..6u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n_old = 400 + 300 * seed as usize;
            let positions = fibonacci_sphere(n_old, seed, &cancel).unwrap();
            let triangles = triangulate(&positions).unwrap();
            let topo = Topology::new(n_old, &triangles).unwrap();
            // Remove a tenth of the points (neighbours included), and split a twentieth of
            // the triangles that keep all their corners.
            let removed: Vec<bool> = (0..n_old).map(|_| rng.random_bool(0.1)).collect();
            let mut all = positions.clone();
            let mut added_in = Vec::new();
            for (t, tri) in triangles.iter().enumerate() {
                if tri.iter().any(|&p| removed[p as usize]) || !rng.random_bool(0.05) {
                    continue;
                }
                let [a, b, c] = tri.map(|p| v3(positions[p as usize]));
                all.push((a + b + c).normalize().to_array());
                added_in.push(t as u32);
            }
            let e = edit(&all, n_old, &removed, &added_in, &triangles, &topo)
                .expect("the edits went through");
            let kept: Vec<[f64; 3]> = (0..all.len())
                .filter(|&p| p >= n_old || !removed[p])
                .map(|p| all[p])
                .collect();
            let fresh = triangulate(&kept).unwrap();
            assert_eq!(
                canonical(&e.triangles),
                canonical(&fresh),
                "seed {seed}: {} removed, {} added",
                removed.iter().filter(|&&r| r).count(),
                added_in.len()
            );
            // The adjacency, edge indices and neighbour lists agree with the topology
            // built from scratch over the edited triangles.
            let built = Topology::new(kept.len(), &e.triangles).unwrap();
            assert_eq!(e.topo.tri_adj, built.tri_adj, "seed {seed}: neighbours");
            for (t, sides) in e.topo.tri_edge.iter().enumerate() {
                for (i, &k) in sides.iter().enumerate() {
                    let (a, b) = (e.triangles[t][i], e.triangles[t][(i + 1) % 3]);
                    assert_eq!(e.topo.edges[k as usize], [a.min(b), a.max(b)]);
                }
            }
            for p in 0..kept.len() {
                let mut mine = e.topo.neighbours_of(p).to_vec();
                let mut theirs = built.neighbours_of(p).to_vec();
                mine.sort_unstable();
                theirs.sort_unstable();
                assert_eq!(mine, theirs, "seed {seed}: point {p}");
                for (&k, &q) in e.topo.edges_of(p).iter().zip(e.topo.neighbours_of(p)) {
                    assert_eq!(e.topo.other(k, p as u32), q);
                }
            }
            let new_id: Vec<u32> = {
                let mut next = 0;
                (0..all.len())
                    .map(|p| {
                        if p >= n_old || !removed[p] {
                            next += 1;
                            next - 1
                        } else {
                            u32::MAX
                        }
                    })
                    .collect()
            };
            let mut old = 0;
            for (k, &o) in e.old_edge.iter().enumerate() {
                if o == u32::MAX {
                    continue;
                }
                old += 1;
                let [a, b] = topo.edges[o as usize].map(|p| new_id[p as usize]);
                assert_eq!(e.topo.edges[k], [a.min(b), a.max(b)], "edge {k}");
            }
            assert!(old > e.old_edge.len() / 2, "only {old} edges kept");
        }
    }
}
