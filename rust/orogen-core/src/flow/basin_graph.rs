//! The graph of basins and the passes between them; which pass each lake overflows through.
//!
//! Cordonnier 2016, "Abstraction of the lake flows" and "Extraction of the lake
//! connections", after Cordonnier, Bovy & Braun 2019 (fastscapelib's `basin_graph`): every stream tree whose root is an interior pit is a lake; a pass is the
//! lowest pair of neighbouring nodes in two different basins (pass height = the higher of
//! the two); lakes join the outlet trees along a minimum spanning tree of the basin graph
//! (Kruskal with a union-find), O(N + M log M) for N nodes and M lakes. On a raster grid
//! each tile of 32 × 128 cells first keeps only its own minimum spanning forest (the cycle
//! property: an edge that is the highest of some cycle is in no minimum spanning tree), so
//! the global Kruskal sorts about one edge per lake instead of three, and each tile's table
//! of passes stays in cache.

use rayon::prelude::*;

use crate::flow::graph::prefetch;
use crate::neighbourhood::{Neighbourhood, RasterGrid};

/// Where one lake overflows: the pass it drains through, chosen by the spanning tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pass {
    /// The lake's pit (the root of its stream tree before resolution).
    pub pit: u32,
    /// The pass node on the lake's side.
    pub from: u32,
    /// The pass node on the downstream side (in the basin the lake spills into).
    pub to: u32,
    /// Pass height, metres: the higher of the two nodes' heights.
    pub height: f32,
    /// Distance from `from` to `to`, metres.
    pub dist: f32,
}

/// One candidate connection between two basin-graph nodes.
#[derive(Clone, Copy, Debug)]
struct Edge {
    height: f32,
    /// Graph nodes, `a` is the lake whose cells were scanned (`a > 0`).
    a: u32,
    b: u32,
    /// Pass nodes on `a`'s and `b`'s side.
    na: u32,
    nb: u32,
    dist: f32,
}

/// Scratch for scanning one run of lake trees.
#[derive(Debug, Default)]
struct ScanChunk {
    conn_pos: Vec<u32>,
    touched: Vec<u32>,
    edges: Vec<Edge>,
}

/// Runs of lake trees scanned in parallel; the edge list does not depend on the count.
const SCAN_CHUNKS: usize = 16;

/// Rows per band of a raster grid's pass scan (bands run in parallel); the edge list does
/// not depend on it.
const BAND_ROWS: usize = 32;

/// Columns per tile of a band: each tile's lowest passes and their spanning forest are found
/// in a table small enough to stay in cache. The tree does not depend on it.
const TILE_COLUMNS: usize = 128;

/// An empty slot of [`BandScan`]'s table (no pair of node numbers below `u32::MAX` makes it).
const EMPTY: u64 = u64::MAX;

/// Scratch for the raster pass scan of one band of rows, a tile at a time: the lowest pass
/// per basin-graph node pair, found through an open-addressing table keyed by
/// `(a << 32) | b`.
#[derive(Debug, Default)]
struct BandScan {
    keys: Vec<u64>,
    /// Index into `edges` of each occupied slot.
    slots: Vec<u32>,
    /// `64 - log2(table size)`: the hash keeps the product's top bits.
    shift: u32,
    edges: Vec<Edge>,
    /// Per cell of a row, which forward neighbours lie in another basin.
    diff: Vec<u8>,
    /// The pair offered last and its index in `edges`.
    last_key: u64,
    last_edge: u32,
    /// The band's tiles' minimum spanning forests: `edges` that no cycle of their tile's
    /// edges makes the highest (only these can be in the whole graph's tree), lowest first.
    forest: Vec<Edge>,
    /// Open-addressing table from basin-graph node to local node number.
    node_keys: Vec<u32>,
    node_ids: Vec<u32>,
    /// Per edge, its two ends as local node numbers.
    ends: Vec<[u32; 2]>,
    parent: Vec<u32>,
    rank: Vec<u8>,
    sort_keys: Vec<u64>,
    sort_scratch: Vec<u64>,
    counts: Vec<u32>,
}

impl BandScan {
    fn reset(&mut self) {
        if self.keys.len() < 1024 {
            self.keys = vec![EMPTY; 1024];
            self.slots = vec![0; 1024];
        } else {
            self.keys.fill(EMPTY);
        }
        self.shift = 64 - self.keys.len().trailing_zeros();
        self.edges.clear();
        self.last_key = EMPTY;
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Keeps `e` if it is the lowest pass of its pair so far (lowest height, then lowest
    /// node pair: an order on candidates, so the result does not depend on scan order).
    #[inline(always)]
    fn offer(&mut self, e: Edge) {
        let key = (u64::from(e.a) << 32) | u64::from(e.b);
        // Neighbouring cells mostly offer the pair just offered.
        if key == self.last_key {
            let old = &mut self.edges[self.last_edge as usize];
            if e.height < old.height || (e.height == old.height && (e.na, e.nb) < (old.na, old.nb))
            {
                *old = e;
            }
            return;
        }
        self.offer_new_pair(key, e);
    }

    /// [`BandScan::offer`] for a pair other than the last one.
    #[inline(never)]
    fn offer_new_pair(&mut self, key: u64, e: Edge) {
        let mask = self.keys.len() - 1;
        let mut s = self.slot(key);
        loop {
            let k = self.keys[s];
            if k == key {
                self.last_key = key;
                self.last_edge = self.slots[s];
                let old = &mut self.edges[self.slots[s] as usize];
                if e.height < old.height
                    || (e.height == old.height && (e.na, e.nb) < (old.na, old.nb))
                {
                    *old = e;
                }
                return;
            }
            if k == EMPTY {
                self.keys[s] = key;
                self.slots[s] = self.edges.len() as u32;
                self.last_key = key;
                self.last_edge = self.slots[s];
                self.edges.push(e);
                if self.edges.len() * 2 > self.keys.len() {
                    self.grow();
                }
                return;
            }
            s = (s + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let cap = self.keys.len() * 2;
        self.keys.clear();
        self.keys.resize(cap, EMPTY);
        self.slots.resize(cap, 0);
        self.shift = 64 - cap.trailing_zeros();
        for (i, e) in self.edges.iter().enumerate() {
            let key = (u64::from(e.a) << 32) | u64::from(e.b);
            let mut s = self.slot(key);
            while self.keys[s] != EMPTY {
                s = (s + 1) & (cap - 1);
            }
            self.keys[s] = key;
            self.slots[s] = i as u32;
        }
    }

    /// Offers the pass between neighbouring cells `i` (in basin `bi`) and `j`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn pair(
        &mut self,
        heights: &[f32],
        basins: &[u32],
        n_out: u32,
        i: usize,
        bi: u32,
        j: usize,
        dist: f32,
    ) {
        let node_of = |basin: u32| -> u32 {
            if basin < n_out {
                0
            } else {
                basin - n_out + 1
            }
        };
        let (ai, aj) = (node_of(bi), node_of(basins[j]));
        if ai == aj {
            return;
        }
        // The lake side is `a`: the lower-numbered lake, or the lake facing an outlet.
        let (a, b, na, nb) = if ai != 0 && (aj == 0 || ai < aj) {
            (ai, aj, i, j)
        } else {
            (aj, ai, j, i)
        };
        self.offer(Edge {
            height: heights[na].max(heights[nb]),
            a,
            b,
            na: na as u32,
            nb: nb as u32,
            dist,
        });
    }

    /// Every pair of neighbouring cells from a cell of the tile `x0..x1` × `y0..y1` whose
    /// basins differ, each pair once: from each cell to its E, SW, S and SE neighbours.
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &mut self,
        grid: &RasterGrid,
        heights: &[f32],
        basins: &[u32],
        n_outlets: usize,
        (x0, x1): (usize, usize),
        (y0, y1): (usize, usize),
    ) {
        self.reset();
        let (w, h) = (grid.grid().width, grid.grid().height);
        let d = grid.distances;
        let n_out = n_outlets as u32;
        // Forward neighbours in bit order: E, SW, S, SE (OFFSETS entries 4, 5, 6, 7).
        let step = [1, w - 1, w, w + 1];
        let dist = [d[4], d[5], d[6], d[7]];
        let mut diff = std::mem::take(&mut self.diff);
        diff.clear();
        diff.resize(x1 - x0, 0);
        // The tile's columns with all four forward neighbours (when a row below exists).
        let (i0, i1) = (x0.max(1), x1.min(w - 1));
        for y in y0..y1 {
            let row = y * w;
            let here = &basins[row..row + w];
            // Per cell, the forward neighbours in another basin (a loop that vectorises).
            if y + 1 < h {
                let below = &basins[row + w..row + 2 * w];
                for (x, m) in (i0..i1).zip(diff[i0 - x0..i1 - x0].iter_mut()) {
                    let b = here[x];
                    *m = u8::from(here[x + 1] != b)
                        | u8::from(below[x - 1] != b) << 1
                        | u8::from(below[x] != b) << 2
                        | u8::from(below[x + 1] != b) << 3;
                }
                if x0 == 0 {
                    diff[0] = u8::from(here[1] != here[0])
                        | u8::from(below[0] != here[0]) << 2
                        | u8::from(below[1] != here[0]) << 3;
                }
                if x1 == w {
                    diff[w - 1 - x0] = u8::from(below[w - 2] != here[w - 1]) << 1
                        | u8::from(below[w - 1] != here[w - 1]) << 2;
                }
            } else {
                for (x, m) in (x0..x1).zip(diff.iter_mut()) {
                    *m = u8::from(x + 1 < w && here[x + 1] != here[x]);
                }
            }
            for (x, &m) in (x0..x1).zip(diff.iter()) {
                let mut m = m;
                while m != 0 {
                    let k = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let i = row + x;
                    self.pair(heights, basins, n_out, i, here[x], i + step[k], dist[k]);
                }
            }
        }
        self.diff = diff;
    }

    /// Kruskal over the tile's edges alone (local node numbers, everything in cache), added to
    /// the band's forest. By the cycle property an edge left out is the highest of a cycle of
    /// the tile's edges, so it is not in the whole graph's tree either: the global Kruskal
    /// only needs the forests. Tile edges of one node pair that other tiles also found are
    /// kept (the global order [`sort_by_pass`] ranks them like the lowest pass of the pair
    /// first).
    fn spanning_forest(&mut self) {
        let m = self.edges.len();
        if m == 0 {
            return;
        }
        let cap = (4 * m).next_power_of_two();
        let shift = 32 - cap.trailing_zeros();
        self.node_keys.clear();
        self.node_keys.resize(cap, u32::MAX);
        self.node_ids.resize(cap, 0);
        self.ends.clear();
        let mut n_local = 0u32;
        for e in &self.edges {
            let mut ends = [0u32; 2];
            for (end, node) in ends.iter_mut().zip([e.a, e.b]) {
                let mut s = (node.wrapping_mul(0x9E37_79B1) >> shift) as usize;
                loop {
                    let k = self.node_keys[s];
                    if k == node {
                        *end = self.node_ids[s];
                        break;
                    }
                    if k == u32::MAX {
                        self.node_keys[s] = node;
                        self.node_ids[s] = n_local;
                        *end = n_local;
                        n_local += 1;
                        break;
                    }
                    s = (s + 1) & (cap - 1);
                }
            }
            self.ends.push(ends);
        }
        sort_by_pass(
            &self.edges,
            &mut self.sort_keys,
            &mut self.sort_scratch,
            &mut self.counts,
        );
        self.parent.clear();
        self.parent.extend(0..n_local);
        self.rank.clear();
        self.rank.resize(n_local as usize, 0);
        let mut joined = 0;
        for &key in &self.sort_keys {
            let i = key as u32 as usize;
            let [a, b] = self.ends[i];
            if union(&mut self.parent, &mut self.rank, a, b) {
                self.forest.push(self.edges[i]);
                joined += 1;
                if joined + 1 == n_local as usize {
                    break;
                }
            }
        }
    }
}

/// Reusable buffers for the basin graph. Graph node 0 stands for every outlet basin
/// (merged: water that reaches any of them has left the domain); lake `k` is node `k + 1`.
#[derive(Debug, Default)]
pub(crate) struct BasinGraph {
    chunks: Vec<ScanChunk>,
    bands: Vec<BandScan>,
    edges: Vec<Edge>,
    keys: Vec<u64>,
    key_scratch: Vec<u64>,
    counts: Vec<u32>,
    parent: Vec<u32>,
    rank: Vec<u8>,
    tree: Vec<u32>,
    /// Per tree edge, its two graph nodes.
    tree_ends: Vec<[u32; 2]>,
    adj_offsets: Vec<u32>,
    /// `(neighbour << 32) | tree edge` per node, from `adj_offsets`.
    adj: Vec<u64>,
    /// Per lake reached from the outlets, in order: its `adj` entry from its parent.
    reached: Vec<u64>,
    visited: Vec<bool>,
    queue: Vec<u32>,
}

/// Joins the sets of `a` and `b` (union by rank); false if they were one already.
#[inline(always)]
fn union(parent: &mut [u32], rank: &mut [u8], a: u32, b: u32) -> bool {
    let ra = find(parent, a) as usize;
    let rb = find(parent, b) as usize;
    if ra == rb {
        return false;
    }
    if rank[ra] < rank[rb] {
        parent[ra] = rb as u32;
    } else {
        parent[rb] = ra as u32;
        if rank[ra] == rank[rb] {
            rank[ra] += 1;
        }
    }
    true
}

#[inline(always)]
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    // Path halving.
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = parent[x as usize];
    }
    x
}

impl ScanChunk {
    /// Lowest pass from each lake in `stack` (whole trees, in root order) to every adjacent
    /// basin-graph node that is an outlet (0) or a later lake (fastscapelib
    /// `connect_basins`): each pair is found once, from its lower-numbered lake.
    fn scan<N: Neighbourhood>(
        &mut self,
        nb: &N,
        heights: &[f32],
        basins: &[u32],
        n_outlets: usize,
        n_nodes: usize,
        stack: &[u32],
    ) {
        self.conn_pos.clear();
        self.conn_pos.resize(n_nodes, 0);
        self.touched.clear();
        self.edges.clear();
        let node_of = |basin: u32| -> u32 {
            if (basin as usize) < n_outlets {
                0
            } else {
                basin - n_outlets as u32 + 1
            }
        };
        let conn_pos = &mut self.conn_pos;
        let touched = &mut self.touched;
        let edges = &mut self.edges;
        let mut current = u32::MAX;
        let mut lake_start = 0;
        for &c in stack {
            let c = c as usize;
            let bc = basins[c];
            let a = node_of(bc);
            if a != current {
                for t in touched.drain(..) {
                    conn_pos[t as usize] = 0;
                }
                // The finished lake's edges by neighbour node: an order that does not
                // depend on how the neighbourhood lists neighbours.
                edges[lake_start..].sort_unstable_by_key(|e| e.b);
                lake_start = edges.len();
                current = a;
            }
            let hc = heights[c];
            nb.for_each_neighbour(c, |n, d| {
                let bn = basins[n as usize];
                if bn == bc {
                    return;
                }
                let b = node_of(bn);
                if b == a || (b != 0 && b < a) {
                    return;
                }
                let h = hc.max(heights[n as usize]);
                let pos = conn_pos[b as usize];
                if pos == 0 {
                    edges.push(Edge {
                        height: h,
                        a,
                        b,
                        na: c as u32,
                        nb: n,
                        dist: d,
                    });
                    conn_pos[b as usize] = edges.len() as u32;
                    touched.push(b);
                } else {
                    let e = &mut edges[pos as usize - 1];
                    // Equal heights: the lowest node pair, whatever the walking order.
                    if h < e.height || (h == e.height && (c as u32, n) < (e.na, e.nb)) {
                        e.height = h;
                        e.na = c as u32;
                        e.nb = n;
                        e.dist = d;
                    }
                }
            });
        }
        for t in touched.drain(..) {
            conn_pos[t as usize] = 0;
        }
        edges[lake_start..].sort_unstable_by_key(|e| e.b);
    }
}

/// `f32` bits mapped to a `u32` with the same order as [`f32::total_cmp`].
fn ordered_bits(h: f32) -> u32 {
    let bits = h.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// Stable LSD radix sort of `keys` by their upper 32 bits (three passes of 11 bits: the
/// counts stay in L1).
fn radix_sort_high(keys: &mut Vec<u64>, scratch: &mut Vec<u64>, counts: &mut Vec<u32>) {
    scratch.clear();
    scratch.resize(keys.len(), 0);
    for shift in [32u32, 43, 54] {
        counts.clear();
        counts.resize(1 << 11, 0);
        for &k in keys.iter() {
            counts[((k >> shift) & 0x7FF) as usize] += 1;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        for &k in keys.iter() {
            let d = ((k >> shift) & 0x7FF) as usize;
            scratch[counts[d] as usize] = k;
            counts[d] += 1;
        }
        std::mem::swap(keys, scratch);
    }
}

/// `keys` = `(ordered height bits << 32) | index` of every edge, in the order of the pass:
/// increasing height, then node pair `(a, b)`, then pass nodes `(na, nb)`. A strict order
/// (each pair of cells is one edge), so the spanning tree is unique; where one node pair has
/// several edges its lowest pass comes first, as if only that one were there.
fn sort_by_pass(
    edges: &[Edge],
    keys: &mut Vec<u64>,
    scratch: &mut Vec<u64>,
    counts: &mut Vec<u32>,
) {
    keys.clear();
    keys.extend(
        edges
            .iter()
            .enumerate()
            .map(|(i, e)| (u64::from(ordered_bits(e.height)) << 32) | i as u64),
    );
    if keys.len() < 1024 {
        // A tile's few edges: the radix sort's counts would cost more than the keys. The
        // index in the low bits keeps equal heights in index order, as the stable radix does.
        keys.sort_unstable();
    } else {
        radix_sort_high(keys, scratch, counts);
    }
    // Equal heights (rare, short runs): by node pair, then pass nodes.
    let mut s = 0;
    while s < keys.len() {
        let high = keys[s] >> 32;
        let mut e = s + 1;
        while e < keys.len() && keys[e] >> 32 == high {
            e += 1;
        }
        if e - s > 1 {
            keys[s..e].sort_unstable_by_key(|&k| {
                let x = &edges[k as u32 as usize];
                (x.a, x.b, x.na, x.nb)
            });
        }
        s = e;
    }
}

impl BasinGraph {
    /// Finds each lake's outflow pass. `basins[i]` is the index of node `i`'s root in
    /// `roots`, whose first `n_outlets` entries are outlets; `stack` lists every tree's
    /// nodes contiguously in root order, tree `b` from `block_start[b]`. Writes one
    /// [`Pass`] per lake reachable from an outlet into `passes`, in the order the spanning
    /// tree reaches them from the outlets (every lake after the one it drains into).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lake_passes<N: Neighbourhood>(
        &mut self,
        nb: &N,
        heights: &[f32],
        roots: &[u32],
        n_outlets: usize,
        basins: &[u32],
        stack: &[u32],
        block_start: &[u32],
        passes: &mut Vec<Pass>,
    ) {
        passes.clear();
        let lakes = roots.len() - n_outlets;
        if lakes == 0 {
            return;
        }
        let n_nodes = lakes + 1;

        // Grids of sides ≥ 3 (the row scan needs an interior); others walk lake trees.
        let raster = nb
            .as_raster()
            .filter(|g| g.grid().width >= 3 && g.grid().height >= 3);
        if let Some(grid) = raster {
            self.raster_edges(grid, heights, basins, n_outlets);
        } else {
            self.stack_edges(nb, heights, roots, n_outlets, basins, stack, block_start);
        }
        // 2. Kruskal: edges in the order of `sort_by_pass`.
        sort_by_pass(
            &self.edges,
            &mut self.keys,
            &mut self.key_scratch,
            &mut self.counts,
        );
        let edges = &self.edges;
        self.parent.clear();
        self.parent.extend(0..n_nodes as u32);
        self.rank.clear();
        self.rank.resize(n_nodes, 0);
        self.tree.clear();
        self.tree_ends.clear();
        let keys = &self.keys[..];
        for (k, &key) in keys.iter().enumerate() {
            // The edges come in height order, from all over the graph: ask for the edge
            // 16 ahead, and for the sets of the one 8 ahead (whose edge came 8 ago).
            if let Some(&ahead) = keys.get(k + 16) {
                prefetch(edges, ahead as u32 as usize);
            }
            if let Some(&ahead) = keys.get(k + 8) {
                let e = &edges[ahead as u32 as usize];
                prefetch(&self.parent, e.a as usize);
                prefetch(&self.parent, e.b as usize);
            }
            let e = key as u32;
            let edge = &edges[e as usize];
            if !union(&mut self.parent, &mut self.rank, edge.a, edge.b) {
                continue;
            }
            self.tree.push(e);
            self.tree_ends.push([edge.a, edge.b]);
            if self.tree.len() + 1 == n_nodes {
                break;
            }
        }

        // 3. Orient the tree away from the outlets: each lake drains towards its parent.
        //    Adjacency lists of (neighbour, tree edge), each node's in tree order.
        // The tree's edges and the queue visit nodes all over the graph: each loop asks for
        // the entries it will need a few iterations ahead.
        self.adj_offsets.clear();
        self.adj_offsets.resize(n_nodes + 1, 0);
        let ends = &self.tree_ends[..];
        let offsets = &mut self.adj_offsets[..];
        for (t, &[a, b]) in ends.iter().enumerate() {
            if let Some(&[pa, pb]) = ends.get(t + 16) {
                prefetch(offsets, pa as usize);
                prefetch(offsets, pb as usize);
            }
            offsets[a as usize] += 1;
            offsets[b as usize] += 1;
        }
        let mut sum = 0;
        for o in offsets.iter_mut() {
            sum += *o;
            *o = sum;
        }
        self.adj.clear();
        self.adj.resize(sum as usize, 0);
        let adj = &mut self.adj[..];
        for (t, &[a, b]) in ends.iter().enumerate().rev() {
            if let Some(&[pa, pb]) = t.checked_sub(16).map(|k| &ends[k]) {
                prefetch(offsets, pa as usize);
                prefetch(offsets, pb as usize);
            }
            // The slots the edge 8 back will fill (its offsets asked for 8 ago).
            if let Some(&[pa, pb]) = t.checked_sub(8).map(|k| &ends[k]) {
                prefetch(adj, (offsets[pa as usize] as usize).saturating_sub(1));
                prefetch(adj, (offsets[pb as usize] as usize).saturating_sub(1));
            }
            for (v, other) in [(a, b), (b, a)] {
                offsets[v as usize] -= 1;
                adj[offsets[v as usize] as usize] = (u64::from(other) << 32) | t as u64;
            }
        }
        // Breadth first from the outlets: the order of the passes.
        self.visited.clear();
        self.visited.resize(n_nodes, false);
        self.visited[0] = true;
        self.queue.clear();
        self.queue.push(0);
        self.reached.clear();
        let (offsets, adj, visited) = (&self.adj_offsets[..], &self.adj[..], &mut self.visited[..]);
        let queue = &mut self.queue;
        let mut head = 0;
        while head < queue.len() {
            // The offsets of the node 16 ahead, the list of the one 8 ahead and the marks of
            // the neighbours of the one 4 ahead (each asked for in an earlier round).
            if let Some(&ahead) = queue.get(head + 16) {
                prefetch(offsets, ahead as usize);
            }
            if let Some(&ahead) = queue.get(head + 8) {
                prefetch(adj, offsets[ahead as usize] as usize);
            }
            if let Some(&ahead) = queue.get(head + 4) {
                let (s, t) = (
                    offsets[ahead as usize] as usize,
                    offsets[ahead as usize + 1] as usize,
                );
                for &entry in &adj[s..t] {
                    prefetch(visited, (entry >> 32) as usize);
                }
            }
            let u = queue[head] as usize;
            head += 1;
            let (s, t) = (offsets[u] as usize, offsets[u + 1] as usize);
            for &entry in &adj[s..t] {
                let v = (entry >> 32) as u32;
                if visited[v as usize] {
                    continue;
                }
                visited[v as usize] = true;
                queue.push(v);
                self.reached.push(entry);
            }
        }
        // Each reached lake's pass, gathered in parallel in that order.
        let tree = &self.tree;
        passes.par_extend(self.reached.par_iter().map(|&entry| {
            let (v, t) = ((entry >> 32) as u32, entry as u32 as usize);
            let edge = &edges[tree[t] as usize];
            let (from, to) = if edge.a == v {
                (edge.na, edge.nb)
            } else {
                (edge.nb, edge.na)
            };
            Pass {
                pit: roots[n_outlets + v as usize - 1],
                from,
                to,
                height: edge.height,
                dist: edge.dist,
            }
        }));
    }

    /// The candidate edges on a raster grid: bands of rows scanned in parallel, a tile at a
    /// time, each tile's lowest pass per node pair reduced to its minimum spanning forest,
    /// the forests concatenated in band and tile order.
    fn raster_edges(
        &mut self,
        grid: &RasterGrid,
        heights: &[f32],
        basins: &[u32],
        n_outlets: usize,
    ) {
        let h = grid.grid().height;
        let bands = h.div_ceil(BAND_ROWS);
        self.bands.resize_with(bands, BandScan::default);
        let w = grid.grid().width;
        let tiles = w.div_ceil(TILE_COLUMNS);
        self.bands.par_iter_mut().enumerate().for_each(|(k, band)| {
            band.forest.clear();
            for t in 0..tiles {
                band.scan(
                    grid,
                    heights,
                    basins,
                    n_outlets,
                    (w * t / tiles, w * (t + 1) / tiles),
                    (h * k / bands, h * (k + 1) / bands),
                );
                band.spanning_forest();
            }
        });
        self.edges.clear();
        for band in &self.bands[..bands] {
            self.edges.extend_from_slice(&band.forest);
        }
    }

    /// Lowest pass per adjacent basin-graph node pair, walking each lake's tree, ordered
    /// by `(a, b)`.
    #[allow(clippy::too_many_arguments)]
    fn stack_edges<N: Neighbourhood>(
        &mut self,
        nb: &N,
        heights: &[f32],
        roots: &[u32],
        n_outlets: usize,
        basins: &[u32],
        stack: &[u32],
        block_start: &[u32],
    ) {
        let n_nodes = roots.len() - n_outlets + 1;
        // 1. Minimal pass per adjacent basin pair. The lakes' trees are cut into runs of
        //    whole trees scanned in parallel, then concatenated in order: the same edges
        //    in the same order as one sequential scan, whatever the thread count.
        let first = block_start[n_outlets] as usize;
        let total = stack.len() - first;
        let mut bounds = Vec::with_capacity(SCAN_CHUNKS + 1);
        bounds.push(n_outlets);
        for k in 1..SCAN_CHUNKS {
            let target = (first + total * k / SCAN_CHUNKS) as u32;
            let b =
                n_outlets + block_start[n_outlets..roots.len()].partition_point(|&s| s < target);
            bounds.push(b.max(*bounds.last().unwrap()));
        }
        bounds.push(roots.len());
        self.chunks.resize_with(SCAN_CHUNKS, ScanChunk::default);
        self.chunks
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, chunk)| {
                let (s, e) = (
                    block_start[bounds[k]] as usize,
                    block_start[bounds[k + 1]] as usize,
                );
                chunk.scan(nb, heights, basins, n_outlets, n_nodes, &stack[s..e]);
            });
        self.edges.clear();
        for chunk in &self.chunks {
            self.edges.extend_from_slice(&chunk.edges);
        }
    }
}
