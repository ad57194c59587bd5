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
//! of passes stays in cache. Before that, each cell keeps only its lowest pass to each
//! neighbouring node (a vectorised mask over its 8 neighbours): any other pair through it
//! has a lower pair between the same two nodes, so it is in no spanning tree. About 70 % of
//! the pairs of a noise terrain go, and the table never sees them.

use std::sync::Mutex;

use rayon::prelude::*;

use crate::flow::graph::{prefault, prefetch};
use crate::neighbourhood::raster::OFFSETS;
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

/// Scratch for the raster pass scan, a tile at a time (one per worker, lent out by a
/// [`Lease`]): the lowest pass per basin-graph node pair, found through an open-addressing
/// table keyed by `(a << 32) | b`, and the tile's spanning forest.
#[derive(Debug, Default)]
struct BandScan {
    keys: Vec<u64>,
    /// Index into `edges` of each occupied slot.
    slots: Vec<u32>,
    /// `64 - log2(table size)`: the hash keeps the product's top bits.
    shift: u32,
    edges: Vec<Edge>,
    /// Per cell of a row, which forward pairs are offered (bits E, SW, S, SE).
    diff: Vec<u8>,
    /// A row's offered pairs, `4 * column in the tile + bit`, packed from `diff`.
    offered: Vec<u32>,
    /// The tile and a margin (columns `x0 - 2 .. x1 + 2`, rows `y0 - 1 .. y1 + 2`): each
    /// cell's basin-graph node key ([`node_key`]), height order ([`ordered_i32`]) and
    /// [`keep_mask`].
    frame_nodes: Vec<u32>,
    frame_order: Vec<i32>,
    frame_keep: Vec<u8>,
    /// The pair offered last and its index in `edges`.
    last_key: u64,
    last_edge: u32,
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

    /// Keeps `e` if it is the lowest pass of its pair so far ([`comes_before`]).
    #[inline(always)]
    fn offer(&mut self, e: Edge) {
        let key = (u64::from(e.a) << 32) | u64::from(e.b);
        // Neighbouring cells mostly offer the pair just offered.
        if key == self.last_key {
            let old = &mut self.edges[self.last_edge as usize];
            if comes_before(e.height, e.na, e.nb, old) {
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
                if comes_before(e.height, e.na, e.nb, old) {
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

    /// Every pair of neighbouring cells from a cell of the tile `x0..x1` × `y0..y1` whose
    /// basin-graph nodes differ, each pair once (from each cell to its E, SW, S and SE
    /// neighbours), except the pairs that are not the lowest pass between their two nodes
    /// through one of their cells ([`keep_mask`]): those are never in the spanning tree.
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
        // The frame: grid column x is frame column x + 2 - x0, grid row y frame row
        // y + 1 - y0 (cells outside the grid are never read, their masks stay 0).
        let (lw, lh) = (x1 - x0 + 4, y1 - y0 + 3);
        let at = |x: usize, y: usize| (y + 1 - y0) * lw + x + 2 - x0;
        // The frame's buffers are taken out while the pairs are offered to `self`.
        let mut frame_nodes = std::mem::take(&mut self.frame_nodes);
        let mut frame_order = std::mem::take(&mut self.frame_order);
        frame_nodes.resize(lw * lh, 0);
        frame_order.resize(lw * lh, 0);
        let mut keep = std::mem::take(&mut self.frame_keep);
        keep.clear();
        keep.resize(lw * lh, 0);
        let (nodes, order) = (&mut frame_nodes[..], &mut frame_order[..]);
        let (cx0, cx1) = (x0.saturating_sub(2), (x1 + 2).min(w));
        for y in y0.saturating_sub(1)..(y1 + 2).min(h) {
            let src = y * w + cx0..y * w + cx1;
            let dst = at(cx0, y)..at(cx0, y) + (cx1 - cx0);
            for (k, &b) in nodes[dst.clone()].iter_mut().zip(&basins[src.clone()]) {
                *k = node_key(b, n_out);
            }
            for (o, &v) in order[dst].iter_mut().zip(&heights[src]) {
                *o = ordered_i32(v);
            }
        }
        // Masks of the tile's cells and of the neighbours their forward pairs reach.
        let (kx0, kx1) = (x0.saturating_sub(1), (x1 + 1).min(w));
        for y in y0..(y1 + 1).min(h) {
            if y == 0 || y + 1 == h {
                for x in kx0..kx1 {
                    keep[at(x, y)] = keep_mask_at(nodes, order, lw, at(x, y), x, y, w, h);
                }
                continue;
            }
            let (ix0, ix1) = (kx0.max(1), kx1.min(w - 1));
            if ix0 < ix1 {
                let n = ix1 - ix0;
                let rows = [y - 1, y, y + 1].map(|r| at(ix0 - 1, r));
                keep_row(
                    rows.map(|s| &nodes[s..s + n + 2]),
                    rows.map(|s| &order[s..s + n + 2]),
                    &mut keep[at(ix0, y)..at(ix0, y) + n],
                );
            }
            for x in [0, w - 1] {
                if (kx0..kx1).contains(&x) {
                    keep[at(x, y)] = keep_mask_at(nodes, order, lw, at(x, y), x, y, w, h);
                }
            }
        }
        let (nodes, order) = (&frame_nodes[..], &frame_order[..]);
        let mut diff = std::mem::take(&mut self.diff);
        diff.clear();
        diff.resize(x1 - x0, 0);
        let mut offered = std::mem::take(&mut self.offered);
        offered.resize(4 * (x1 - x0) + 4, 0);
        // The same forward steps in the frame; a node key less `n_out - 1` (wrapping) is the
        // basin-graph node (0 for every outlet basin).
        let frame_step = [1, lw - 1, lw, lw + 1];
        let key_base = n_out.wrapping_sub(1);
        for y in y0..y1 {
            let row = y * w;
            // A pair is offered when both its cells keep it (a loop that vectorises).
            let (k0, k1) = (at(x0, y), at(x0, y + 1));
            let (mid, below) = (&keep[k0 - 1..k0 + lw - 3], &keep[k1 - 1..k1 + lw - 3]);
            for (i, m) in diff.iter_mut().enumerate() {
                let k = mid[i + 1];
                *m = (k >> 4 & mid[i + 2] >> 3 & 1)
                    | (k >> 5 & below[i] >> 2 & 1) << 1
                    | (k >> 6 & below[i + 1] >> 1 & 1) << 2
                    | (k >> 7 & below[i + 2] & 1) << 3;
            }
            // The offered pairs packed into a list without a branch per bit (which of a
            // cell's four bits are set is not predictable), then offered from the frame.
            let mut len = 0;
            for (x, &m) in diff.iter().enumerate() {
                let base = 4 * x as u32;
                let dst: &mut [u32; 4] = (&mut offered[len..len + 4]).try_into().unwrap();
                *dst = SET_BITS[usize::from(m)].map(|k| base + k);
                len += m.count_ones() as usize;
            }
            let f0 = at(x0, y);
            for &c in &offered[..len] {
                let (x, k) = (c as usize / 4, c as usize % 4);
                let (fi, fj) = (f0 + x, f0 + x + frame_step[k]);
                let i = (row + x0 + x) as u32;
                let j = i + step[k] as u32;
                let (ni, nj) = (
                    nodes[fi].wrapping_sub(key_base),
                    nodes[fj].wrapping_sub(key_base),
                );
                // The lake side is `a`: the lower-numbered lake, or the lake facing an outlet.
                let lake_i = ni != 0 && (nj == 0 || ni < nj);
                let (a, b) = std::hint::select_unpredictable(lake_i, (ni, nj), (nj, ni));
                let (na, nb) = std::hint::select_unpredictable(lake_i, (i, j), (j, i));
                self.offer(Edge {
                    // The pass height, [`pass_height`] of the two from their orders.
                    height: from_order(order[fi].max(order[fj])),
                    a,
                    b,
                    na,
                    nb,
                    dist: dist[k],
                });
            }
        }
        self.diff = diff;
        self.offered = offered;
        self.frame_keep = keep;
        self.frame_nodes = frame_nodes;
        self.frame_order = frame_order;
    }

    /// Kruskal over the tile's edges alone (local node numbers, everything in cache), added to
    /// `forest`, the band's. By the cycle property an edge left out is the highest of a cycle of
    /// the tile's edges, so it is not in the whole graph's tree either: the global Kruskal
    /// only needs the forests. Tile edges of one node pair that other tiles also found are
    /// kept (the global order [`sort_by_pass`] ranks them like the lowest pass of the pair
    /// first).
    fn spanning_forest(&mut self, forest: &mut Vec<Edge>) {
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
                forest.push(self.edges[i]);
                joined += 1;
                if joined + 1 == n_local as usize {
                    break;
                }
            }
        }
    }
}

/// A [`BandScan`] taken from a pool for one worker's run of bands, put back when dropped.
struct Lease<'a> {
    pool: &'a Mutex<Vec<BandScan>>,
    scan: BandScan,
}

impl<'a> Lease<'a> {
    fn take(pool: &'a Mutex<Vec<BandScan>>) -> Self {
        let scan = pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
        Lease {
            pool,
            scan: scan.unwrap_or_default(),
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let scan = std::mem::take(&mut self.scan);
        self.pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(scan);
    }
}

/// Reusable buffers for the basin graph. Graph node 0 stands for every outlet basin
/// (merged: water that reaches any of them has left the domain); lake `k` is node `k + 1`.
#[derive(Debug, Default)]
pub(crate) struct BasinGraph {
    chunks: Vec<ScanChunk>,
    /// Per band of rows, its tiles' minimum spanning forests: edges that no cycle of their
    /// tile's edges makes the highest (only these can be in the whole graph's tree), each
    /// tile's lowest first.
    forests: Vec<Vec<Edge>>,
    /// Tile scratch, lent to the workers of each scan: about one per thread, not one per
    /// band (a band's scratch is some hundred kilobytes, and 64 bands' worth was most of the
    /// memory the first scan of a 2048² grid faulted in).
    tile_scans: Mutex<Vec<BandScan>>,
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
    /// `(neighbour << 32) | edge` per node (the index in `edges` of a tree edge), from
    /// `adj_offsets`.
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
                let h = pass_height(hc, heights[n as usize]);
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
                    if comes_before(h, c as u32, n, e) {
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

/// Flips all but the sign bit of a negative `b`: its own inverse, since the sign bit, which
/// picks whether the rest is flipped, stays.
#[inline(always)]
fn flip_negative(b: i32) -> i32 {
    b ^ (((b >> 31) as u32) >> 1) as i32
}

/// `f32` bits mapped to an `i32` with the order of [`f32::total_cmp`].
#[inline(always)]
fn ordered_i32(h: f32) -> i32 {
    flip_negative(h.to_bits() as i32)
}

/// The height whose [`ordered_i32`] is `o`.
#[inline(always)]
fn from_order(o: i32) -> f32 {
    f32::from_bits(flip_negative(o) as u32)
}

/// Per 4-bit mask, its set bits in increasing order (the rest 0).
const SET_BITS: [[u32; 4]; 16] = {
    let mut t = [[0u32; 4]; 16];
    let mut m = 0;
    while m < 16 {
        let (mut n, mut k) = (0, 0);
        while k < 4 {
            if m >> k & 1 == 1 {
                t[m][n] = k as u32;
                n += 1;
            }
            k += 1;
        }
        m += 1;
    }
    t
};

/// [`ordered_i32`] as a `u32` with the same order (the sort's keys).
pub(crate) fn ordered_bits(h: f32) -> u32 {
    ordered_i32(h) as u32 ^ 0x8000_0000
}

/// The height of the pass between two cells: the higher of the two in [`f32::total_cmp`]
/// order (the order passes are ranked in, where -0 lies below +0).
#[inline(always)]
pub(crate) fn pass_height(a: f32, b: f32) -> f32 {
    if ordered_i32(a) >= ordered_i32(b) {
        a
    } else {
        b
    }
}

/// Whether a pass of height `h` through nodes `na`, `nb` comes before `old` in the order
/// of passes: lower height ([`f32::total_cmp`]), then lower pass nodes. An order on the
/// candidates of one node pair, so the one kept does not depend on the scan's order.
#[inline(always)]
fn comes_before(h: f32, na: u32, nb: u32, old: &Edge) -> bool {
    let (x, y) = (ordered_i32(h), ordered_i32(old.height));
    x < y || (x == y && (na, nb) < (old.na, old.nb))
}

/// A basin's key for the pass scan: every outlet basin (below `n_out`) is graph node 0,
/// so they share one key; lakes keep their own.
#[inline(always)]
fn node_key(basin: u32, n_out: u32) -> u32 {
    basin.max(n_out.saturating_sub(1))
}

/// Which of a cell's neighbours (bit k for [`OFFSETS`] entry k) it keeps a pair with: the
/// neighbour lies in another basin-graph node, and of the cell's neighbours in that node it
/// gives the lowest pass (the pair's height `max` of the two, in [`f32::total_cmp`] order;
/// equal heights: the lower-numbered neighbour, as [`sort_by_pass`] ranks the pass nodes).
/// Every other pair has a lower pair between the same two nodes, so it is the highest
/// edge of a cycle and in no minimum spanning tree. `nodes` and `order` are per neighbour
/// ([`node_key`], [`ordered_i32`]); `present` leaves out neighbours outside the grid.
#[inline(always)]
fn keep_mask(centre: u32, height: i32, nodes: [u32; 8], order: [i32; 8], present: u8) -> u8 {
    let p = order.map(|o| o.max(height));
    let mut dominated = [false; 8];
    for l in 0..8 {
        for k in l + 1..8 {
            let same = nodes[l] == nodes[k] && (present >> l) & (present >> k) & 1 == 1;
            let lower = p[l] <= p[k];
            dominated[k] |= same & lower;
            dominated[l] |= same & !lower;
        }
    }
    let mut m = 0u8;
    for k in 0..8 {
        m |= u8::from(nodes[k] != centre && !dominated[k]) << k;
    }
    m & present
}

/// [`keep_mask`] of the frame cell `f` (grid cell `x`, `y`), any cell of the grid.
#[allow(clippy::too_many_arguments)]
fn keep_mask_at(
    nodes: &[u32],
    order: &[i32],
    lw: usize,
    f: usize,
    x: usize,
    y: usize,
    w: usize,
    h: usize,
) -> u8 {
    let (mut nk, mut ok, mut present) = ([0u32; 8], [0i32; 8], 0u8);
    for (k, &(dx, dy)) in OFFSETS.iter().enumerate() {
        let (nx, ny) = (x as isize + dx, y as isize + dy);
        if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
            continue;
        }
        let g = (f as isize + dy * lw as isize + dx) as usize;
        nk[k] = nodes[g];
        ok[k] = order[g];
        present |= 1 << k;
    }
    keep_mask(nodes[f], order[f], nk, ok, present)
}

/// [`keep_mask`] of a run of cells with all 8 neighbours: `nodes` and `order` hold the
/// rows above, of and below the run, each from the column before the run's first to the
/// one after its last; `out` gets one mask per cell.
#[inline(always)]
fn keep_lanes(nodes: [&[u32]; 3], order: [&[i32]; 3], out: &mut [u8]) {
    let n = out.len();
    let [nu, nm, nd] = nodes.map(|r| &r[..n + 2]);
    let [ou, om, od] = order.map(|r| &r[..n + 2]);
    for (x, m) in out.iter_mut().enumerate() {
        *m = keep_mask(
            nm[x + 1],
            om[x + 1],
            [
                nu[x],
                nu[x + 1],
                nu[x + 2],
                nm[x],
                nm[x + 2],
                nd[x],
                nd[x + 1],
                nd[x + 2],
            ],
            [
                ou[x],
                ou[x + 1],
                ou[x + 2],
                om[x],
                om[x + 2],
                od[x],
                od[x + 1],
                od[x + 2],
            ],
            0xFF,
        );
    }
}

/// [`keep_lanes`] compiled for AVX2: integer operations only, so the same masks.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn keep_lanes_avx2(nodes: [&[u32]; 3], order: [&[i32]; 3], out: &mut [u8]) {
    keep_lanes(nodes, order, out)
}

/// [`keep_lanes`], with AVX2 where the CPU has it.
fn keep_row(nodes: [&[u32]; 3], order: [&[i32]; 3], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { keep_lanes_avx2(nodes, order, out) };
    }
    keep_lanes(nodes, order, out)
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

/// An edge with every field 0, to map the edge list's pages ([`prefault`]).
const PREFAULT_EDGE: Edge = Edge {
    height: 0.0,
    a: 0,
    b: 0,
    na: 0,
    nb: 0,
    dist: 0.0,
};

/// A pass with every field 0, to map `passes`' pages ([`prefault`]).
const PREFAULT_PASS: Pass = Pass {
    pit: 0,
    from: 0,
    to: 0,
    height: 0.0,
    dist: 0.0,
};

/// Kruskal over `edges` in the order of `keys` ([`sort_by_pass`]) on `n_nodes` graph nodes:
/// the spanning tree's edges (indices into `edges`) and their two nodes, in that order.
fn kruskal(
    edges: &[Edge],
    keys: &[u64],
    n_nodes: usize,
    (parent, rank): (&mut Vec<u32>, &mut Vec<u8>),
    (tree, tree_ends): (&mut Vec<u32>, &mut Vec<[u32; 2]>),
) {
    parent.clear();
    parent.extend(0..n_nodes as u32);
    rank.clear();
    rank.resize(n_nodes, 0);
    tree.clear();
    tree_ends.clear();
    for (k, &key) in keys.iter().enumerate() {
        // The edges come in height order, from all over the graph: ask for the edge
        // 16 ahead, and for the sets of the one 8 ahead (whose edge came 8 ago).
        if let Some(&ahead) = keys.get(k + 16) {
            prefetch(edges, ahead as u32 as usize);
        }
        if let Some(&ahead) = keys.get(k + 8) {
            let e = &edges[ahead as u32 as usize];
            prefetch(parent, e.a as usize);
            prefetch(parent, e.b as usize);
        }
        let e = key as u32;
        let edge = &edges[e as usize];
        if !union(parent, rank, edge.a, edge.b) {
            continue;
        }
        tree.push(e);
        tree_ends.push([edge.a, edge.b]);
        if tree.len() + 1 == n_nodes {
            break;
        }
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
        also: impl FnOnce(usize) + Send,
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
        // 2. Kruskal: edges in the order of `sort_by_pass`. Both run on one core; the other
        //    meanwhile maps the buffers of the phases after them (the first time only).
        rayon::join(
            || {
                sort_by_pass(
                    &self.edges,
                    &mut self.keys,
                    &mut self.key_scratch,
                    &mut self.counts,
                )
            },
            || {
                prefault(&mut self.parent, n_nodes, 0);
                prefault(&mut self.rank, n_nodes, 0);
                prefault(&mut self.tree, n_nodes, 0);
                prefault(&mut self.tree_ends, n_nodes, [0; 2]);
            },
        );
        rayon::join(
            || {
                kruskal(
                    &self.edges,
                    &self.keys,
                    n_nodes,
                    (&mut self.parent, &mut self.rank),
                    (&mut self.tree, &mut self.tree_ends),
                )
            },
            || {
                prefault(&mut self.adj_offsets, n_nodes + 1, 0);
                prefault(&mut self.adj, 2 * n_nodes, 0);
                prefault(&mut self.visited, n_nodes, false);
                prefault(&mut self.queue, n_nodes, 0);
                prefault(&mut self.reached, n_nodes, 0);
                prefault(passes, lakes, PREFAULT_PASS);
                also(lakes);
            },
        );
        let edges = &self.edges;

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
        let tree = &self.tree[..];
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
                adj[offsets[v as usize] as usize] = (u64::from(other) << 32) | u64::from(tree[t]);
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
        // Each reached lake's pass, gathered in parallel in that order (asking for the edge
        // and the pit of the lake 16 ahead).
        let reached = &self.reached[..];
        passes.par_extend(reached.par_iter().enumerate().map(|(k, &entry)| {
            if let Some(&ahead) = reached.get(k + 16) {
                prefetch(edges, ahead as u32 as usize);
                prefetch(roots, n_outlets + (ahead >> 32) as usize - 1);
            }
            let v = (entry >> 32) as u32;
            let edge = &edges[entry as u32 as usize];
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

    /// The graph node of the lake of pass `k` of the last [`BasinGraph::lake_passes`]
    /// (lake `j` is node `j + 1`, the root `roots[n_outlets + j]`).
    pub(crate) fn pass_node(&self, k: usize) -> u32 {
        (self.reached[k] >> 32) as u32
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
        self.forests.resize_with(bands, Vec::new);
        let w = grid.grid().width;
        let tiles = w.div_ceil(TILE_COLUMNS);
        let pool = &self.tile_scans;
        self.forests[..bands]
            .par_iter_mut()
            .enumerate()
            .for_each_init(
                || Lease::take(pool),
                |lease, (k, forest)| {
                    forest.clear();
                    let scan = &mut lease.scan;
                    for t in 0..tiles {
                        scan.scan(
                            grid,
                            heights,
                            basins,
                            n_outlets,
                            (w * t / tiles, w * (t + 1) / tiles),
                            (h * k / bands, h * (k + 1) / bands),
                        );
                        scan.spanning_forest(forest);
                    }
                },
            );
        // The forests laid end to end, while the other core maps the sort's keys.
        let total = self.forests[..bands].iter().map(Vec::len).sum();
        prefault(&mut self.edges, total, PREFAULT_EDGE);
        let (edges, forests) = (&mut self.edges, &self.forests[..bands]);
        rayon::join(
            || {
                edges.clear();
                for forest in forests {
                    edges.extend_from_slice(forest);
                }
            },
            || {
                prefault(&mut self.keys, total, 0);
                prefault(&mut self.key_scratch, total, 0);
            },
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Heights with many ties, both zeros among them.
    const HEIGHTS: [f32; 5] = [-1.0, -0.0, 0.0, 0.5, 1.0];

    /// The keep mask by its definition: a neighbour in another node is kept unless another
    /// neighbour in that node gives a pass that comes first (height in total order, then
    /// the lower-numbered neighbour).
    fn reference(centre: u32, h: f32, nodes: [u32; 8], hs: [f32; 8], present: u8) -> u8 {
        let pass = |k: usize| pass_height(h, hs[k]);
        let mut m = 0;
        for k in 0..8 {
            if present >> k & 1 == 0 || nodes[k] == centre {
                continue;
            }
            let beaten = (0..8).any(|l| {
                l != k
                    && present >> l & 1 == 1
                    && nodes[l] == nodes[k]
                    && pass(l).total_cmp(&pass(k)).then(l.cmp(&k)).is_lt()
            });
            if !beaten {
                m |= 1 << k;
            }
        }
        m
    }

    /// The radix sort equals a stable sort by the upper 32 bits (keys with few distinct
    /// upper halves, each digit used, so the order among equal ones is checked).
    #[test]
    fn radix_sort_is_a_stable_sort_by_the_upper_half() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for n in [0, 1, 1000, 300_001] {
            let mut keys: Vec<u64> = (0..n)
                .map(|i| u64::from(rng.random::<u32>() & 0xC03C_0F01) << 32 | i as u64)
                .collect();
            let mut want = keys.clone();
            want.sort_by_key(|k| k >> 32);
            let (mut scratch, mut counts) = (Vec::new(), Vec::new());
            radix_sort_high(&mut keys, &mut scratch, &mut counts);
            assert_eq!(keys, want, "{n} keys");
        }
    }

    #[test]
    fn from_order_undoes_ordered_i32() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
        ];
        let random = (0..100_000).map(|_| f32::from_bits(rng.random::<u32>()));
        for h in specials.into_iter().chain(random) {
            assert_eq!(from_order(ordered_i32(h)).to_bits(), h.to_bits(), "{h}");
        }
    }

    #[test]
    fn pass_height_is_the_total_order_maximum() {
        for a in HEIGHTS {
            for b in HEIGHTS {
                let want = if a.total_cmp(&b).is_ge() { a } else { b };
                assert_eq!(pass_height(a, b).to_bits(), want.to_bits(), "{a} {b}");
                assert_eq!(
                    ordered_i32(a).cmp(&ordered_i32(b)),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
            }
        }
    }

    /// The row kernel (with AVX2 where this CPU has it, and without) and the border-cell
    /// path give the masks of the definition, over random rows full of ties.
    #[test]
    fn keep_masks_match_their_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        for _ in 0..300 {
            let n = rng.random_range(1..40);
            let nodes: Vec<Vec<u32>> = (0..3)
                .map(|_| (0..n + 2).map(|_| rng.random_range(0..4)).collect())
                .collect();
            let hs: Vec<Vec<f32>> = (0..3)
                .map(|_| {
                    (0..n + 2)
                        .map(|_| HEIGHTS[rng.random_range(0..5)])
                        .collect()
                })
                .collect();
            let order: Vec<Vec<i32>> = hs
                .iter()
                .map(|r| r.iter().map(|&v| ordered_i32(v)).collect())
                .collect();
            let rows_n = [&nodes[0][..], &nodes[1][..], &nodes[2][..]];
            let rows_o = [&order[0][..], &order[1][..], &order[2][..]];
            let (mut dispatched, mut baseline) = (vec![0u8; n], vec![0u8; n]);
            keep_row(rows_n, rows_o, &mut dispatched);
            keep_lanes(rows_n, rows_o, &mut baseline);
            let flat_n: Vec<u32> = nodes.concat();
            let flat_o: Vec<i32> = order.concat();
            let lw = n + 2;
            for x in 0..n {
                let at = |dx: isize, dy: isize| {
                    ((1 + dy) as usize * lw) + (x as isize + 1 + dx) as usize
                };
                let (mut nk, mut hk) = ([0u32; 8], [0f32; 8]);
                for (k, &(dx, dy)) in OFFSETS.iter().enumerate() {
                    nk[k] = flat_n[at(dx, dy)];
                    hk[k] = hs[(1 + dy) as usize][(x as isize + 1 + dx) as usize];
                }
                let want = reference(nodes[1][x + 1], hs[1][x + 1], nk, hk, 0xFF);
                assert_eq!(dispatched[x], want, "cell {x} of {n}");
                assert_eq!(baseline[x], want, "cell {x} of {n}");
                // The same cell as a corner of a 3 × 3 grid (x, y) = (0, 0): only its E,
                // S and SE neighbours are present.
                let got = keep_mask_at(&flat_n, &flat_o, lw, at(0, 0), 0, 0, 3, 3);
                let present = 1 << 4 | 1 << 6 | 1 << 7;
                let want = reference(nodes[1][x + 1], hs[1][x + 1], nk, hk, present);
                assert_eq!(got, want, "corner cell {x} of {n}");
            }
        }
    }
}
