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

use std::collections::VecDeque;

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
    order: Vec<(u32, u32, u32, u32, u32, u32)>,
    lakes: Vec<u32>,
    parent: Vec<u32>,
    /// Per graph node, its tree edges as (other node, candidate index).
    adj: Vec<Vec<(u32, u32)>>,
    seen: Vec<bool>,
    queue: VecDeque<u32>,
}

impl LakePasses {
    /// Each lake's pass `(from, to)`: `from` the pass cell in the lake, `to` the cell it
    /// spills into, one per lake the tree reaches from the outlets, in breadth-first order
    /// (the order does not change the carving: each chain lies in its own lake).
    pub(crate) fn passes(&mut self, candidates: &[Candidate], out: &mut Vec<[u32; 2]>) {
        out.clear();
        // Dense graph nodes: 0 the outlets, then the lakes by key (the CPU's numbering).
        self.lakes.clear();
        for c in candidates {
            self.lakes.push(c[1]);
            if c[2] != 0 {
                self.lakes.push(c[2]);
            }
        }
        self.lakes.sort_unstable();
        self.lakes.dedup();
        let node = |lakes: &[u32], key: u32| -> u32 {
            if key == 0 {
                0
            } else {
                lakes.binary_search(&key).map_or(u32::MAX, |k| k as u32 + 1)
            }
        };
        let n_nodes = self.lakes.len() + 1;
        self.order.clear();
        self.order.extend(
            candidates
                .iter()
                .enumerate()
                .map(|(k, c)| (ordered(c[0]), c[1], c[2], c[3], c[4], k as u32)),
        );
        // By height, then node pair (keys order as the CPU's node numbers: outlets 0, lakes
        // by pit index), then pass nodes: the CPU's `sort_by_pass`.
        self.order.sort_unstable();
        self.parent.clear();
        self.parent.extend(0..n_nodes as u32);
        if self.adj.len() < n_nodes {
            self.adj.resize_with(n_nodes, Vec::new);
        }
        for a in &mut self.adj[..n_nodes] {
            a.clear();
        }
        let mut joined = 0;
        for &(_, a, b, _, _, k) in &self.order {
            let (a, b) = (node(&self.lakes, a), node(&self.lakes, b));
            let (ra, rb) = (find(&mut self.parent, a), find(&mut self.parent, b));
            if ra == rb {
                continue;
            }
            // Which set goes under which does not change the tree, only the speed.
            self.parent[ra.max(rb) as usize] = ra.min(rb);
            self.adj[a as usize].push((b, k));
            self.adj[b as usize].push((a, k));
            joined += 1;
            if joined + 1 == n_nodes {
                break;
            }
        }
        // Breadth first from the outlets: each lake drains towards its parent.
        self.seen.clear();
        self.seen.resize(n_nodes, false);
        self.seen[0] = true;
        self.queue.clear();
        self.queue.push_back(0);
        while let Some(u) = self.queue.pop_front() {
            for &(v, k) in &self.adj[u as usize] {
                if self.seen[v as usize] {
                    continue;
                }
                self.seen[v as usize] = true;
                self.queue.push_back(v);
                let c = &candidates[k as usize];
                // `v` is the lake side `a` unless `v` is the larger lake `b`.
                let v_is_a = node(&self.lakes, c[1]) == v;
                out.push(if v_is_a { [c[3], c[4]] } else { [c[4], c[3]] });
            }
        }
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
