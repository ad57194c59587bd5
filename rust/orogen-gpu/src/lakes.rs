//! Which pass each lake drains through, from the GPU's candidate passes (basins.wgsl): the
//! minimum spanning tree of the basin graph, as orogen-core's `basin_graph.rs` finds it
//! (Cordonnier, Bovy & Braun 2019): Kruskal with a union-find over the passes in their
//! strict order (height in `f32::total_cmp` order, then the node pair `(a, b)`, then the
//! pass nodes `(na, nb)`), then the tree oriented away from the outlets, breadth first.
//!
//! The order is strict (each pair of cells is one candidate), so the spanning tree is
//! unique: the CPU's, whatever order the GPU appended the candidates in and whichever
//! candidates it left out that the CPU keeps (only pairs that are the highest edge of some
//! cycle are left out, and those are in no minimum spanning tree).

/// One candidate pass as basins.wgsl writes it: height bits, the lake-side node key `a`
/// (a pit's index + 1), the other key `b` (0 for the outlet trees, else a larger lake key),
/// and the pass's cells on `a`'s and `b`'s sides.
pub(crate) type Candidate = [u32; 5];

/// A height's bits mapped to a `u32` with the order of [`f32::total_cmp`].
fn ordered(bits: u32) -> u32 {
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = parent[x as usize];
    }
    x
}

/// Scratch reused from step to step.
#[derive(Debug, Default)]
pub(crate) struct LakePasses {
    /// Per node key, its graph node (0 the outlets, lakes from 1 in order of first sight;
    /// the numbering changes nothing but the union-find's layout), `u32::MAX` where unused.
    /// Grown to the largest key seen; the used entries are reset after each call.
    dense: Vec<u32>,
    used: Vec<u32>,
    /// `(ordered height << 32) | candidate index`, sorted.
    keys: Vec<u64>,
    parent: Vec<u32>,
    /// The spanning tree's candidates, and its adjacency (CSR: `(node, candidate)`).
    tree: Vec<u32>,
    offsets: Vec<u32>,
    adj: Vec<(u32, u32)>,
    seen: Vec<bool>,
    queue: Vec<u32>,
}

impl LakePasses {
    /// The graph node of `key`, numbered on first sight.
    fn node(&mut self, key: u32) -> u32 {
        if key == 0 {
            return 0;
        }
        let k = key as usize;
        if k >= self.dense.len() {
            self.dense.resize(k + 1, u32::MAX);
        }
        if self.dense[k] == u32::MAX {
            self.used.push(key);
            self.dense[k] = self.used.len() as u32;
        }
        self.dense[k]
    }

    /// Each lake's pass `(from, to)`: `from` the pass cell in the lake, `to` the cell it
    /// spills into, one per lake the tree reaches from the outlets, in breadth-first order
    /// (the order does not change the carving: each chain lies in its own lake).
    pub(crate) fn passes(&mut self, candidates: &[Candidate], out: &mut Vec<[u32; 2]>) {
        out.clear();
        for c in candidates {
            self.node(c[1]);
            self.node(c[2]);
        }
        let n_nodes = self.used.len() + 1;
        // By height, then node pair (keys order as the CPU's node numbers: outlets 0, lakes
        // by pit index), then pass cells: the CPU's `sort_by_pass`. Heights first, as u64
        // keys; runs of equal heights (rare) then by the rest.
        self.keys.clear();
        self.keys.extend(
            candidates
                .iter()
                .enumerate()
                .map(|(k, c)| u64::from(ordered(c[0])) << 32 | k as u64),
        );
        self.keys.sort_unstable();
        let mut s = 0;
        while s < self.keys.len() {
            let high = self.keys[s] >> 32;
            let mut e = s + 1;
            while e < self.keys.len() && self.keys[e] >> 32 == high {
                e += 1;
            }
            if e - s > 1 {
                self.keys[s..e].sort_unstable_by_key(|&k| {
                    let c = &candidates[k as u32 as usize];
                    (c[1], c[2], c[3], c[4])
                });
            }
            s = e;
        }
        self.parent.clear();
        self.parent.extend(0..n_nodes as u32);
        self.tree.clear();
        for i in 0..self.keys.len() {
            let k = self.keys[i] as u32;
            let c = &candidates[k as usize];
            let (a, b) = (self.dense[c[1] as usize], self.node(c[2]));
            let (ra, rb) = (find(&mut self.parent, a), find(&mut self.parent, b));
            if ra == rb {
                continue;
            }
            // Which set goes under which does not change the tree, only the speed.
            self.parent[ra.max(rb) as usize] = ra.min(rb);
            self.tree.push(k);
            if self.tree.len() + 1 == n_nodes {
                break;
            }
        }
        // The tree's adjacency, then breadth first from the outlets: each lake drains
        // towards its parent.
        self.offsets.clear();
        self.offsets.resize(n_nodes + 1, 0);
        for &k in &self.tree {
            let c = &candidates[k as usize];
            for key in [c[1], c[2]] {
                let v = if key == 0 {
                    0
                } else {
                    self.dense[key as usize]
                };
                self.offsets[v as usize + 1] += 1;
            }
        }
        for v in 0..n_nodes {
            self.offsets[v + 1] += self.offsets[v];
        }
        self.adj.clear();
        self.adj.resize(2 * self.tree.len(), (0, 0));
        let mut fill = self.offsets.clone();
        for &k in &self.tree {
            let c = &candidates[k as usize];
            let (a, b) = (
                self.dense[c[1] as usize],
                if c[2] == 0 {
                    0
                } else {
                    self.dense[c[2] as usize]
                },
            );
            for (v, other) in [(a, b), (b, a)] {
                self.adj[fill[v as usize] as usize] = (other, k);
                fill[v as usize] += 1;
            }
        }
        self.seen.clear();
        self.seen.resize(n_nodes, false);
        self.seen[0] = true;
        self.queue.clear();
        self.queue.push(0);
        let mut head = 0;
        while head < self.queue.len() {
            let u = self.queue[head] as usize;
            head += 1;
            let (s, e) = (self.offsets[u] as usize, self.offsets[u + 1] as usize);
            for &(v, k) in &self.adj[s..e] {
                if self.seen[v as usize] {
                    continue;
                }
                self.seen[v as usize] = true;
                self.queue.push(v);
                let c = &candidates[k as usize];
                // `v` is the lake side `a` unless it is the other lake `b`.
                let v_is_a = self.dense[c[1] as usize] == v;
                out.push(if v_is_a { [c[3], c[4]] } else { [c[4], c[3]] });
            }
        }
        for &key in &self.used {
            self.dense[key as usize] = u32::MAX;
        }
        self.used.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_follows_total_cmp() {
        let hs = [-3.5f32, -1.0, -0.0, 0.0, 1e-30, 0.5, 2.0, 1e30];
        for a in hs {
            for b in hs {
                assert_eq!(
                    ordered(a.to_bits()).cmp(&ordered(b.to_bits())),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
            }
        }
    }

    /// The tree and its orientation by definition, on random basin graphs full of tied
    /// heights, with the candidates in a shuffled order (as the GPU's atomics append them):
    /// Prim's algorithm from the outlets (node 0) over every candidate in the strict order
    /// (height, a, b, na, nb) adds, at each step, the least edge leaving the tree, and the
    /// lake it reaches drains through it. Same passes per lake.
    #[test]
    fn the_passes_are_the_minimum_spanning_tree_in_the_strict_order() {
        use rand::seq::SliceRandom;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut scratch = LakePasses::default();
        for trial in 0..200 {
            let lakes = rng.random_range(1..40u32);
            // Lake keys: distinct, out of order, not dense.
            let mut keys: Vec<u32> = (0..lakes).map(|k| 7 * k + 3 + (k % 5)).collect();
            keys.shuffle(&mut rng);
            let mut cands: Vec<Candidate> = Vec::new();
            let mut cell = 0u32;
            // Each lake touches the outlets or an earlier lake, so all are reachable, and
            // gets a few more random edges (parallel ones included).
            for (i, &key) in keys.iter().enumerate() {
                let edges = rng.random_range(1..5);
                for e in 0..edges {
                    let other = if e == 0 && i == 0 || rng.random_bool(0.2) {
                        0
                    } else {
                        keys[rng.random_range(0..i.max(1))]
                    };
                    if other == key {
                        continue;
                    }
                    let h = rng.random_range(0..6) as f32 * 0.5 - 1.0;
                    let (a, b, na, nb) = if other == 0 || key < other {
                        (key, other, cell, cell + 1)
                    } else {
                        (other, key, cell + 1, cell)
                    };
                    cands.push([h.to_bits(), a, b, na, nb]);
                    cell += 2;
                }
            }
            let key_of_cell = |c: &Candidate, cell: u32| if cell == c[3] { c[1] } else { c[2] };
            // Prim by definition.
            let order = |c: &Candidate| (ordered(c[0]), c[1], c[2], c[3], c[4]);
            let mut inside = std::collections::HashSet::from([0u32]);
            let mut want = std::collections::HashMap::new();
            loop {
                let best = cands
                    .iter()
                    .filter(|c| inside.contains(&c[1]) != inside.contains(&c[2]))
                    .min_by_key(|c| order(c));
                let Some(c) = best else { break };
                let (from, to) = if inside.contains(&c[1]) {
                    (c[4], c[3])
                } else {
                    (c[3], c[4])
                };
                let lake = key_of_cell(c, from);
                inside.insert(lake);
                want.insert(lake, [from, to]);
            }
            assert_eq!(want.len(), lakes as usize, "trial {trial}: all reachable");
            cands.shuffle(&mut rng);
            let mut out = Vec::new();
            scratch.passes(&cands, &mut out);
            let mut got = std::collections::HashMap::new();
            for p in &out {
                let c = cands.iter().find(|c| c[3] == p[0] || c[4] == p[0]).unwrap();
                got.insert(key_of_cell(c, p[0]), *p);
            }
            assert_eq!(got, want, "trial {trial}");
        }
    }

    /// Two lakes (keys 5 and 9) and the outlets: lake 5 spills into lake 9 over a lower
    /// pass than its own to the outlets, and lake 9 into the outlets; the higher edge of
    /// the cycle is left out, ties go to the lower node pair, then to the lower pass nodes.
    #[test]
    fn kruskal_keeps_the_lowest_passes_and_orients_them_to_the_outlets() {
        let h = |v: f32| v.to_bits();
        let candidates = vec![
            [h(3.0), 5, 0, 40, 41], // 5 to the outlets, highest: left out
            [h(2.0), 9, 0, 90, 91], // 9 to the outlets
            [h(1.0), 5, 9, 50, 60], // 5 and 9: the lower pass nodes win the tie
            [h(1.0), 5, 9, 51, 61],
        ];
        let mut out = Vec::new();
        LakePasses::default().passes(&candidates, &mut out);
        // Lake 9 drains from 90 to 91, then lake 5 from 50 into lake 9 at 60.
        assert_eq!(out, vec![[90, 91], [50, 60]]);
        // Lake 9's side is `b` of the 5–9 pass: when 9 is reached through it, from is nb.
        let candidates = vec![
            [h(2.0), 5, 0, 40, 41],
            [h(1.0), 5, 9, 50, 60],
            [h(3.0), 9, 0, 90, 91],
        ];
        LakePasses::default().passes(&candidates, &mut out);
        assert_eq!(out, vec![[40, 41], [60, 50]]);
    }
}
