//! Lakes across tiles: the basin graph of the whole map solved from small per-tile parts,
//! with the whole map's tie-breaking, so each lake gets the whole map's pass.
//!
//! Barnes 2016, "Parallel Priority-Flood depression filling for trillion cell digital
//! elevation models": each tile resolves its own basins and sends a small graph of the
//! basins touching its edges; one rank solves that graph; the tiles then finish.
//!
//! The whole map ([`crate::flow::basin_graph`]) joins lakes to the outlets along the minimum
//! spanning tree of the basin graph under a strict order of its edges (pass height in
//! [`f32::total_cmp`] order, then the node pair, then the pass cells): the tree is unique,
//! so it can be found in parts. Nodes: 0 for every outlet basin, a lake is its pit's global
//! index + 1 (the whole map numbers lakes by pit index: the same order). Each pair of
//! neighbouring cells in different nodes is an edge, owned by the tile of its first cell
//! (pairs to the E, SW, S and SE neighbours). A tile keeps its own minimum spanning forest
//! (by the cycle property no other edge of it is in the whole tree), prunes the subtrees
//! that reach no basin shared with another tile (always in the tree: a leaf's only edge is
//! its lowest), and cuts the rest into chains between shared or branching basins: a chain
//! stands in the root's graph as one edge ranked like its largest pass. If the root's tree
//! leaves a chain out, only that largest pass leaves the whole tree; the chain's other
//! edges are always in it.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::comm::{Reader, Writer};
use super::layout::{Rect, TileLayout};
use super::root::NONE;
use crate::error::{OrogenError, Result};
use crate::field::Grid;
use crate::flow::basin_graph::{ordered_bits, pass_height};
use crate::neighbourhood::raster::OFFSETS;

/// The basin-graph node of every outlet basin.
pub(crate) const OUTLET: u32 = 0;

/// One edge of the basin graph: two neighbouring cells in different nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Edge {
    /// The pass height's [`ordered_bits`].
    pub h: u32,
    /// Nodes: `a` the lower-numbered lake, or the lake facing an outlet (as the whole map).
    pub a: u32,
    pub b: u32,
    /// The pass cells (global indices) on `a`'s and `b`'s side.
    pub na: u32,
    pub nb: u32,
    /// Distance between the two cells, metres.
    pub dist: f32,
}

/// An edge's rank: the whole map's order of passes (`sort_by_pass` in the basin graph).
pub(crate) type Key = (u32, u32, u32, u32, u32);

impl Edge {
    pub fn key(&self) -> Key {
        (self.h, self.a, self.b, self.na, self.nb)
    }
}

/// A hasher for node pairs packed in a `u64` (multiply and fold: the keys are not chosen by
/// anyone, and SipHash cost most of the scan).
#[derive(Default)]
struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b) ^ self.0.rotate_left(8));
        }
    }
    fn write_u64(&mut self, x: u64) {
        let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// The edges a tile owns: from each interior cell to its E, SW, S and SE neighbours (in the
/// halo where they lie outside), where the two nodes differ, only the lowest pass of each
/// node pair (in the whole map's order: any other is the highest edge of a cycle of two, so
/// in no spanning tree, as the whole map's scan keeps it). `heights` and `nodes` are laid
/// over the halo rectangle.
pub(crate) fn tile_edges(
    grid: Grid,
    (interior, halo): (Rect, Rect),
    heights: &[f32],
    nodes: &[u32],
    dists: &[f32; 8],
) -> Vec<Edge> {
    let mut edges: Vec<Edge> = Vec::new();
    let mut place: HashMap<u64, u32, BuildHasherDefault<PairHasher>> = HashMap::default();
    // Neighbouring cells mostly offer the pair just offered.
    let (mut last_pair, mut last_place) = (u64::MAX, 0usize);
    // Most cells lie in their four neighbours' node: rows are first scanned 16 cells at a
    // time (a loop that vectorises) where all four neighbours are in the grid.
    const RUN: usize = 16;
    let hw = halo.w;
    let (xa, xb) = (
        interior.x0.max(1),
        (interior.x0 + interior.w).min(grid.width - 1),
    );
    let mut same = vec![false; interior.w];
    for y in interior.y0..interior.y0 + interior.h {
        same.fill(false);
        if y + 1 < grid.height && xa < xb {
            let at = halo.index(xa, y);
            let m = xb - xa;
            let here = &nodes[at..at + m];
            let [e, sw, s, se] =
                [at + 1, at + hw - 1, at + hw, at + hw + 1].map(|o| &nodes[o..o + m]);
            let flags = &mut same[xa - interior.x0..xb - interior.x0];
            for (c, f) in flags.chunks_mut(RUN).enumerate() {
                let o = c * RUN;
                let mut differ = false;
                for j in o..o + f.len() {
                    differ |= (here[j] != e[j]) | (here[j] != sw[j]) | (here[j] != s[j]);
                    differ |= here[j] != se[j];
                }
                if !differ {
                    f.fill(true);
                }
            }
        }
        for x in interior.x0..interior.x0 + interior.w {
            if same[x - interior.x0] {
                continue;
            }
            let (hi, i) = (halo.index(x, y), grid.index(x, y) as u32);
            let ni = nodes[hi];
            for (k, &(dx, dy)) in OFFSETS.iter().enumerate().skip(4) {
                let (nx, ny) = (x as isize + dx, y as isize + dy);
                if nx < 0 || ny < 0 || nx as usize >= grid.width || ny as usize >= grid.height {
                    continue;
                }
                let (nx, ny) = (nx as usize, ny as usize);
                let hj = halo.index(nx, ny);
                let nj = nodes[hj];
                if ni == nj {
                    continue;
                }
                let j = grid.index(nx, ny) as u32;
                let lake_i = ni != OUTLET && (nj == OUTLET || ni < nj);
                let (a, b, na, nb) = if lake_i {
                    (ni, nj, i, j)
                } else {
                    (nj, ni, j, i)
                };
                let e = Edge {
                    h: ordered_bits(pass_height(heights[hi], heights[hj])),
                    a,
                    b,
                    na,
                    nb,
                    dist: dists[k],
                };
                let pair = (u64::from(a) << 32) | u64::from(b);
                if pair != last_pair {
                    last_pair = pair;
                    last_place = *place.entry(pair).or_insert_with(|| {
                        edges.push(e);
                        edges.len() as u32 - 1
                    }) as usize;
                }
                let old = &mut edges[last_place];
                if (e.h, e.na, e.nb) < (old.h, old.na, old.nb) {
                    *old = e;
                }
            }
        }
    }
    edges
}

/// Joins the sets of `a` and `b`; false if they were one already.
fn union(parent: &mut [u32], a: u32, b: u32) -> bool {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra == rb {
        return false;
    }
    // Any union rule gives the same tree (Kruskal decides by the order of the edges).
    parent[ra.max(rb) as usize] = ra.min(rb);
    true
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = parent[x as usize];
    }
    x
}

/// A path of the tile's forest between two shared or branching nodes, through nodes of
/// this tile alone.
#[derive(Debug)]
pub(crate) struct Chain {
    pub u: u32,
    pub v: u32,
    /// Its edges (indices into [`Reduced::edges`]) and the largest of them.
    pub edges: Vec<u32>,
    pub max: u32,
}

/// A tile's minimum spanning forest, pruned and cut into chains.
#[derive(Debug, Default)]
pub(crate) struct Reduced {
    /// The forest's edges.
    pub edges: Vec<Edge>,
    /// Forest edges of pruned subtrees: in the whole tree whatever the other tiles hold.
    pub pruned: Vec<u32>,
    pub chains: Vec<Chain>,
    /// Nodes shared with other tiles or branching (the chains' ends), increasing.
    pub keys: Vec<u32>,
}

/// Kruskal over the tile's edges under the whole map's order, then the reduction.
/// `shared` lists nodes other tiles may also hold (node 0 always is).
pub(crate) fn reduce(mut edges: Vec<Edge>, shared: &[u32]) -> Reduced {
    edges.sort_unstable_by_key(Edge::key);
    let mut ids: Vec<u32> = edges.iter().flat_map(|e| [e.a, e.b]).collect();
    ids.sort_unstable();
    ids.dedup();
    let dense = |id: u32| ids.binary_search(&id).expect("an edge's node") as u32;
    let mut parent: Vec<u32> = (0..ids.len() as u32).collect();
    let forest: Vec<Edge> = edges
        .into_iter()
        .filter(|e| union(&mut parent, dense(e.a), dense(e.b)))
        .collect();
    let n = ids.len();
    let mut boundary = vec![false; n];
    for &s in shared.iter().chain(&[OUTLET]) {
        if let Ok(d) = ids.binary_search(&s) {
            boundary[d] = true;
        }
    }
    let mut adj: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    for (k, e) in forest.iter().enumerate() {
        let (a, b) = (dense(e.a), dense(e.b));
        adj[a as usize].push((b, k as u32));
        adj[b as usize].push((a, k as u32));
    }
    // Prune leaves no other tile holds, leaf by leaf.
    let mut degree: Vec<usize> = adj.iter().map(Vec::len).collect();
    let mut removed = vec![false; forest.len()];
    let mut pruned = Vec::new();
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&d| !boundary[d as usize] && degree[d as usize] == 1)
        .collect();
    while let Some(d) = queue.pop() {
        let Some(&(other, e)) = adj[d as usize].iter().find(|&&(_, e)| !removed[e as usize]) else {
            continue;
        };
        removed[e as usize] = true;
        pruned.push(e);
        degree[d as usize] -= 1;
        degree[other as usize] -= 1;
        if !boundary[other as usize] && degree[other as usize] == 1 {
            queue.push(other);
        }
    }
    pruned.sort_unstable();
    let is_key: Vec<bool> = (0..n).map(|d| boundary[d] || degree[d] >= 3).collect();
    let mut visited = removed;
    let mut chains = Vec::new();
    for u in 0..n {
        if !is_key[u] {
            continue;
        }
        for &(first, e0) in &adj[u] {
            if visited[e0 as usize] {
                continue;
            }
            visited[e0 as usize] = true;
            let (mut at, mut last, mut path) = (first, e0, vec![e0]);
            while !is_key[at as usize] {
                let &(next, e) = adj[at as usize]
                    .iter()
                    .find(|&&(_, e)| e != last && !visited[e as usize])
                    .expect("a node inside a chain has two edges left");
                visited[e as usize] = true;
                path.push(e);
                (at, last) = (next, e);
            }
            let max = *path
                .iter()
                .max_by_key(|&&e| forest[e as usize].key())
                .expect("a chain has an edge");
            chains.push(Chain {
                u: ids[u],
                v: ids[at as usize],
                edges: path,
                max,
            });
        }
    }
    let keys = (0..n).filter(|&d| is_key[d]).map(|d| ids[d]).collect();
    Reduced {
        edges: forest,
        pruned,
        chains,
        keys,
    }
}

/// A chain left out of the whole tree.
pub(crate) const CHAIN_OUT: u8 = 0;
/// A chain in the tree whose `u` end drains towards `v`.
pub(crate) const CHAIN_U_CHILD: u8 = 1;
/// A chain in the tree whose `v` end drains towards `u`.
pub(crate) const CHAIN_V_CHILD: u8 = 2;

/// One lake's pass, found by the tile that owns its edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TilePass {
    pub from: u32,
    pub to: u32,
    pub dist: f32,
}

/// The tile's part of the whole tree from the root's verdict on its chains (`status`, one
/// per chain): each lake whose edge to its parent this tile owns, with that pass (from the
/// lake's cell to the parent's). Errors name the tile.
pub(crate) fn expand(red: &Reduced, status: &[u8], rank: usize) -> Result<Vec<TilePass>> {
    let bad = |reason: String| OrogenError::invalid(format!("tiles rank {rank} lakes"), reason);
    if status.len() != red.chains.len() {
        return Err(bad(format!(
            "{} verdicts for {} chains",
            status.len(),
            red.chains.len()
        )));
    }
    let mut ids: Vec<u32> = red.edges.iter().flat_map(|e| [e.a, e.b]).collect();
    ids.sort_unstable();
    ids.dedup();
    let dense = |id: u32| ids.binary_search(&id).expect("an edge's node");
    let mut included = vec![false; red.edges.len()];
    red.pruned.iter().for_each(|&e| included[e as usize] = true);
    let mut child = vec![false; ids.len()];
    for (c, &s) in red.chains.iter().zip(status) {
        for &e in &c.edges {
            included[e as usize] = s != CHAIN_OUT || e != c.max;
        }
        match s {
            CHAIN_OUT => {}
            CHAIN_U_CHILD => child[dense(c.u)] = true,
            CHAIN_V_CHILD => child[dense(c.v)] = true,
            _ => return Err(bad(format!("unknown chain verdict {s}"))),
        }
    }
    let mut adj: Vec<Vec<(usize, u32)>> = vec![Vec::new(); ids.len()];
    for (k, e) in red.edges.iter().enumerate() {
        if included[k] {
            let (a, b) = (dense(e.a), dense(e.b));
            adj[a].push((b, k as u32));
            adj[b].push((a, k as u32));
        }
    }
    // Breadth first from the shared nodes whose parent lies outside this tile's edges.
    let mut seen = vec![false; ids.len()];
    let mut queue: Vec<usize> = red
        .keys
        .iter()
        .map(|&k| dense(k))
        .filter(|&d| !child[d])
        .collect();
    queue.iter().for_each(|&d| seen[d] = true);
    let mut passes = Vec::new();
    let mut head = 0;
    while head < queue.len() {
        let p = queue[head];
        head += 1;
        for &(q, e) in &adj[p] {
            if seen[q] {
                continue;
            }
            seen[q] = true;
            queue.push(q);
            let e = &red.edges[e as usize];
            let (from, to) = if e.a == ids[q] {
                (e.na, e.nb)
            } else {
                (e.nb, e.na)
            };
            passes.push(TilePass {
                from,
                to,
                dist: e.dist,
            });
        }
    }
    if let Some(d) = (0..ids.len()).find(|&d| !seen[d] && !adj[d].is_empty()) {
        return Err(bad(format!(
            "basin node {} is reached from no outlet through the tree",
            ids[d]
        )));
    }
    Ok(passes)
}

/// The root's part: the graph of flow crossing tile edges (to label every cell with its
/// basin, and to carry a carved chain from tile to tile) and the tree of the chains.
#[derive(Default)]
pub(crate) struct LakeRoot {
    /// Per exit cell, its receiver (global indices).
    receiver: HashMap<u32, u32>,
    /// Per border-ring cell of every tile, the exit its path leaves by, or NONE.
    ring_term: HashMap<u32, u32>,
}

fn bad(what: &str, reason: String) -> OrogenError {
    OrogenError::invalid(format!("tiles root: {what}"), reason)
}

impl LakeRoot {
    /// From every rank: a pit flag, its exits (cell, receiver) and its border ring (cell,
    /// exit or NONE, the node where the path ends in the tile). Returns, per rank, whether
    /// the whole map has a pit and the node each of its exits drains to.
    pub(crate) fn labels(&mut self, messages: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        self.receiver.clear();
        self.ring_term.clear();
        let mut ring_node: HashMap<u32, u32> = HashMap::new();
        let mut rank_exits = Vec::with_capacity(messages.len());
        let mut any_pit = false;
        for (rank, bytes) in messages.iter().enumerate() {
            let mut r = Reader::new(bytes, "basin labels", rank);
            any_pit |= r.u32()? != 0;
            let mut exits = Vec::new();
            for _ in 0..r.u32()? {
                let (cell, receiver) = (r.u32()?, r.u32()?);
                self.receiver.insert(cell, receiver);
                exits.push(cell);
            }
            for _ in 0..r.u32()? {
                let (cell, term, node) = (r.u32()?, r.u32()?, r.u32()?);
                self.ring_term.insert(cell, term);
                ring_node.insert(cell, node);
            }
            r.finish()?;
            rank_exits.push(exits);
        }
        let mut node_of: HashMap<u32, u32> = HashMap::new();
        let limit = self.receiver.len() + 1;
        let mut path = Vec::new();
        let mut out = Vec::with_capacity(messages.len());
        for exits in &rank_exits {
            let mut w = Writer::with_capacity(8 + 4 * exits.len());
            w.u32(u32::from(any_pit));
            for &e in exits {
                path.clear();
                let mut at = e;
                let node = loop {
                    if let Some(&n) = node_of.get(&at) {
                        break n;
                    }
                    path.push(at);
                    if path.len() > limit {
                        return Err(bad(
                            "crossings",
                            "the flow between tiles forms a cycle".into(),
                        ));
                    }
                    let r = self.receiver[&at];
                    let term = *self.ring_term.get(&r).ok_or_else(|| {
                        bad(
                            "crossings",
                            format!("cell {at} drains into {r}, on no tile's border"),
                        )
                    })?;
                    if term == NONE {
                        break ring_node[&r];
                    }
                    if !self.receiver.contains_key(&term) {
                        return Err(bad("crossings", format!("exit {term} was not sent")));
                    }
                    at = term;
                };
                path.iter().for_each(|&c| {
                    node_of.insert(c, node);
                });
                w.u32(node);
            }
            out.push(w.into_bytes());
        }
        Ok(out)
    }

    /// The whole tree from every rank's chains (u, v, the key of its largest pass):
    /// Kruskal in the whole map's order, oriented from the outlets. Returns, per rank, one
    /// verdict per chain ([`CHAIN_OUT`], [`CHAIN_U_CHILD`], [`CHAIN_V_CHILD`]).
    pub(crate) fn tree(&self, messages: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        let mut all: Vec<(Key, u32, u32, usize, usize)> = Vec::new();
        let mut counts = Vec::with_capacity(messages.len());
        for (rank, bytes) in messages.iter().enumerate() {
            let mut r = Reader::new(bytes, "chains", rank);
            let n = r.u32()? as usize;
            for k in 0..n {
                let (u, v) = (r.u32()?, r.u32()?);
                let key = (r.u32()?, r.u32()?, r.u32()?, r.u32()?, r.u32()?);
                all.push((key, u, v, rank, k));
            }
            r.finish()?;
            counts.push(n);
        }
        all.sort_unstable_by_key(|c| c.0);
        if all.windows(2).any(|p| p[0].0 == p[1].0) {
            return Err(bad(
                "chains",
                "two chains rank alike (one pass sent twice)".into(),
            ));
        }
        let mut ids: Vec<u32> = all.iter().flat_map(|c| [c.1, c.2]).collect();
        ids.sort_unstable();
        ids.dedup();
        let dense = |id: u32| ids.binary_search(&id).expect("a chain's node");
        let mut parent: Vec<u32> = (0..ids.len() as u32).collect();
        let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); ids.len()];
        for (k, c) in all.iter().enumerate() {
            let (u, v) = (dense(c.1), dense(c.2));
            if union(&mut parent, u as u32, v as u32) {
                adj[u].push((v, k));
                adj[v].push((u, k));
            }
        }
        let mut status: Vec<Vec<u8>> = counts.iter().map(|&n| vec![CHAIN_OUT; n]).collect();
        if !ids.is_empty() {
            let start = ids.binary_search(&OUTLET).map_err(|_| {
                bad(
                    "chains",
                    "lakes cross tiles but no chain reaches an outlet".into(),
                )
            })?;
            let mut seen = vec![false; ids.len()];
            seen[start] = true;
            let mut queue = vec![start];
            let mut head = 0;
            while head < queue.len() {
                let p = queue[head];
                head += 1;
                for &(q, k) in &adj[p] {
                    if seen[q] {
                        continue;
                    }
                    seen[q] = true;
                    queue.push(q);
                    let (_, u, _, rank, idx) = all[k];
                    status[rank][idx] = if ids[q] == u {
                        CHAIN_U_CHILD
                    } else {
                        CHAIN_V_CHILD
                    };
                }
            }
            if queue.len() != ids.len() {
                return Err(bad(
                    "chains",
                    format!(
                        "{} of {} basins are reached from no outlet",
                        ids.len() - queue.len(),
                        ids.len()
                    ),
                ));
            }
        }
        Ok(status
            .into_iter()
            .map(|s| {
                let mut w = Writer::with_capacity(4 + s.len());
                w.u32(s.len() as u32);
                w.0.extend_from_slice(&s);
                w.into_bytes()
            })
            .collect())
    }

    /// Carving across tiles: from every rank, the passes whose lake-side cell lies in another
    /// tile (from, to) and the exits where a chain it carved left the tile. Returns, per
    /// rank, the walks it must carve: (cell, its new receiver), each reversing the path from
    /// that cell down to its pit or the tile's edge.
    pub(crate) fn carve(&self, layout: &TileLayout, messages: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        let width = layout.grid().width;
        let rank_of = |c: u32| layout.rank_of(c as usize % width, c as usize / width);
        let mut walks: Vec<Vec<(u32, u32)>> = vec![Vec::new(); messages.len()];
        let mut exits = Vec::new();
        for (rank, bytes) in messages.iter().enumerate() {
            let mut r = Reader::new(bytes, "carve", rank);
            for _ in 0..r.u32()? {
                let (from, to) = (r.u32()?, r.u32()?);
                walks[rank_of(from)].push((from, to));
                let term = *self.ring_term.get(&from).ok_or_else(|| {
                    bad("carve", format!("pass cell {from} is on no tile's border"))
                })?;
                if term != NONE {
                    exits.push(term);
                }
            }
            for _ in 0..r.u32()? {
                exits.push(r.u32()?);
            }
            r.finish()?;
        }
        for e in exits {
            let mut at = e;
            for _ in 0..=self.receiver.len() {
                let r = *self
                    .receiver
                    .get(&at)
                    .ok_or_else(|| bad("carve", format!("exit {at} was not sent")))?;
                walks[rank_of(r)].push((r, at));
                at = self.ring_term.get(&r).copied().unwrap_or(NONE);
                if at == NONE {
                    break;
                }
            }
            if at != NONE {
                return Err(bad("carve", format!("the chain from exit {e} never ends")));
            }
        }
        Ok(walks
            .into_iter()
            .map(|list| {
                let mut w = Writer::with_capacity(4 + 8 * list.len());
                w.u32(list.len() as u32);
                for (c, p) in list {
                    w.u32(c);
                    w.u32(p);
                }
                w.into_bytes()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Each lake's (from, to) in the minimum spanning tree of all `edges`, oriented from
    /// node 0: the whole map's answer.
    fn whole_tree(edges: &[Edge], n: u32) -> Vec<(u32, u32)> {
        let mut sorted = edges.to_vec();
        sorted.sort_by_key(Edge::key);
        let mut parent: Vec<u32> = (0..n).collect();
        let mut adj = vec![Vec::new(); n as usize];
        for e in sorted {
            if union(&mut parent, e.a, e.b) {
                adj[e.a as usize].push((e.b, e));
                adj[e.b as usize].push((e.a, e));
            }
        }
        let (mut seen, mut queue, mut out) = (vec![false; n as usize], vec![0u32], Vec::new());
        seen[0] = true;
        while let Some(p) = queue.pop() {
            for &(q, e) in &adj[p as usize] {
                if !seen[q as usize] {
                    seen[q as usize] = true;
                    queue.push(q);
                    out.push(if e.a == q { (e.na, e.nb) } else { (e.nb, e.na) });
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Random graphs (ties in height broken by the node pair and cells, as the whole map
    /// does) with edges dealt to tiles: the chains' tree at the root expanded in every tile
    /// gives the whole tree's passes.
    #[test]
    fn reduced_tiles_give_the_whole_spanning_tree() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for trial in 0..200 {
            let n: u32 = rng.random_range(2..60);
            let tiles = rng.random_range(1..6);
            let mut edges = Vec::new();
            let edge = |a: u32, b: u32, rng: &mut ChaCha8Rng, k: u32| Edge {
                h: rng.random_range(0..8),
                a,
                b,
                na: 2 * k,
                nb: 2 * k + 1,
                dist: 1.0,
            };
            for v in 1..n {
                let u = rng.random_range(0..v);
                let k = edges.len() as u32;
                edges.push(edge(v, u, &mut rng, k));
            }
            for _ in 0..rng.random_range(0..3 * n) {
                let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
                if a != b {
                    let k = edges.len() as u32;
                    edges.push(edge(a, b, &mut rng, k));
                }
            }
            let owner: Vec<usize> = edges.iter().map(|_| rng.random_range(0..tiles)).collect();
            let mut holders = vec![std::collections::BTreeSet::new(); n as usize];
            for (e, &t) in edges.iter().zip(&owner) {
                holders[e.a as usize].insert(t);
                holders[e.b as usize].insert(t);
            }
            let parts: Vec<Reduced> = (0..tiles)
                .map(|t| {
                    let mine: Vec<Edge> = (0..edges.len())
                        .filter(|&k| owner[k] == t)
                        .map(|k| edges[k])
                        .collect();
                    let shared: Vec<u32> =
                        (0..n).filter(|&v| holders[v as usize].len() > 1).collect();
                    reduce(mine, &shared)
                })
                .collect();
            let messages: Vec<Vec<u8>> = parts
                .iter()
                .map(|red| {
                    let mut w = Writer::default();
                    w.u32(red.chains.len() as u32);
                    for c in &red.chains {
                        w.u32(c.u);
                        w.u32(c.v);
                        let (h, a, b, na, nb) = red.edges[c.max as usize].key();
                        [h, a, b, na, nb].into_iter().for_each(|v| w.u32(v));
                    }
                    w.into_bytes()
                })
                .collect();
            let replies = LakeRoot::default().tree(&messages).unwrap();
            let mut got = Vec::new();
            for (t, (red, reply)) in parts.iter().zip(&replies).enumerate() {
                let passes = expand(red, &reply[4..], t).unwrap();
                got.extend(passes.iter().map(|p| (p.from, p.to)));
            }
            got.sort_unstable();
            assert_eq!(
                got,
                whole_tree(&edges, n),
                "trial {trial}: {n} nodes, {tiles} tiles"
            );
        }
    }

    #[test]
    fn wrong_verdicts_and_cut_off_basins_are_errors() {
        let e = |a: u32, b: u32, k: u32| Edge {
            h: 1,
            a,
            b,
            na: 2 * k,
            nb: 2 * k + 1,
            dist: 1.0,
        };
        let red = reduce(vec![e(1, 0, 0), e(2, 1, 1)], &[2]);
        assert_eq!(red.chains.len(), 1);
        let msg = expand(&red, &[], 3).unwrap_err().to_string();
        assert!(
            msg.contains("tiles rank 3") && msg.contains("0 verdicts for 1 chains"),
            "{msg}"
        );
        let msg = expand(&red, &[7], 3).unwrap_err().to_string();
        assert!(msg.contains("verdict 7"), "{msg}");
        // Chains between lakes alone: no outlet to drain to.
        let mut w = Writer::default();
        w.u32(1);
        [1, 2, 5, 1, 2, 0, 1].into_iter().for_each(|v| w.u32(v));
        let msg = LakeRoot::default()
            .tree(&[w.into_bytes()])
            .err()
            .unwrap()
            .to_string();
        assert!(msg.contains("no chain reaches an outlet"), "{msg}");
    }
}
