//! [`NodeGraph`]: an irregular set of nodes with neighbour lists, link lengths, node areas and
//! an open boundary, in compressed sparse rows, walkable by the flow code as a [`Neighbourhood`].

use glam::DVec2;

use crate::error::{OrogenError, Result};
use crate::neighbourhood::Neighbourhood;

/// An empty vector with room for `n` values, or an error naming `what` if memory runs out.
pub(crate) fn alloc<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        OrogenError::invalid(what, format!("cannot allocate {n} values (out of memory)"))
    })?;
    Ok(v)
}

/// An undirected graph of nodes in the plane, stored as compressed sparse rows.
///
/// Node `i` stands at `positions()[i]` (metres) for an area of `area(i)` m²; its neighbours
/// are `neighbours(i)`, sorted by increasing index, each at the straight-line distance
/// `link_lengths(i)[k]` (metres, f32). Nodes flagged in the open-boundary mask are outlets:
/// water reaching them leaves the domain.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeGraph {
    /// Node positions, metres.
    positions: Vec<DVec2>,
    /// Row starts: the neighbours of `i` are `neighbours[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<usize>,
    /// Neighbour indices, sorted within each row.
    neighbours: Vec<u32>,
    /// Euclidean length of each link in `neighbours`, metres.
    lengths: Vec<f32>,
    /// Area each node stands for, m².
    areas: Vec<f32>,
    /// True where water leaves the domain.
    open: Vec<bool>,
}

impl NodeGraph {
    /// A graph of `positions.len()` nodes (metres) joined by the undirected `edges` (pairs
    /// of node indices, in any order and direction; repeats are merged), each node standing
    /// for `areas[i]` m². Link lengths are the Euclidean distances between positions, in
    /// metres. No node is on the open boundary yet: see [`NodeGraph::set_open_boundary`].
    ///
    /// Errors, naming the fault, when there is no node or `u32::MAX` or more, when a position
    /// is not finite, when `areas` has another length or an area is not finite and > 0, when
    /// an edge names a missing node or joins a node to itself, when two linked nodes lie so
    /// close that their distance is 0 in f32, or when memory runs out.
    pub fn from_edges(positions: Vec<DVec2>, edges: &[[u32; 2]], areas: Vec<f32>) -> Result<Self> {
        let n = positions.len();
        if n == 0 {
            return Err(OrogenError::invalid(
                "positions",
                "a graph needs at least one node",
            ));
        }
        if n >= u32::MAX as usize {
            return Err(OrogenError::invalid(
                "positions",
                format!("{n} nodes, at most {} allowed", u32::MAX - 1),
            ));
        }
        if let Some(i) = positions.iter().position(|p| !p.is_finite()) {
            return Err(OrogenError::invalid(
                format!("positions[{i}]"),
                format!(
                    "must be finite, got ({}, {})",
                    positions[i].x, positions[i].y
                ),
            ));
        }
        if areas.len() != n {
            return Err(OrogenError::invalid(
                "areas",
                format!("one area per node expected ({n}), got {}", areas.len()),
            ));
        }
        if let Some(i) = areas.iter().position(|a| !(a.is_finite() && *a > 0.0)) {
            return Err(OrogenError::invalid(
                format!("areas[{i}]"),
                format!("must be finite and > 0 m², got {}", areas[i]),
            ));
        }

        // Both directions of every edge, sorted by (from, to) and deduplicated: each row then
        // lists its neighbours by increasing index.
        let mut pairs: Vec<(u32, u32)> = alloc(edges.len().saturating_mul(2), "graph links")?;
        for (k, &[a, b]) in edges.iter().enumerate() {
            if a as usize >= n || b as usize >= n {
                return Err(OrogenError::invalid(
                    format!("edges[{k}]"),
                    format!("({a}, {b}) names a node beyond the {n} nodes"),
                ));
            }
            if a == b {
                return Err(OrogenError::invalid(
                    format!("edges[{k}]"),
                    format!("({a}, {b}) joins a node to itself"),
                ));
            }
            pairs.push((a, b));
            pairs.push((b, a));
        }
        pairs.sort_unstable();
        pairs.dedup();

        let mut offsets: Vec<usize> = alloc(n + 1, "graph row offsets")?;
        offsets.resize(n + 1, 0);
        for &(a, _) in &pairs {
            offsets[a as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut neighbours: Vec<u32> = alloc(pairs.len(), "graph neighbours")?;
        let mut lengths: Vec<f32> = alloc(pairs.len(), "graph link lengths")?;
        for &(a, b) in &pairs {
            let d = positions[a as usize].distance(positions[b as usize]) as f32;
            if !(d.is_finite() && d > 0.0) {
                return Err(OrogenError::invalid(
                    "positions",
                    format!("nodes {a} and {b} are linked but their distance is {d} m in f32"),
                ));
            }
            neighbours.push(b);
            lengths.push(d);
        }
        drop(pairs);

        let mut open: Vec<bool> = alloc(n, "graph open-boundary mask")?;
        open.resize(n, false);
        Ok(NodeGraph {
            positions,
            offsets,
            neighbours,
            lengths,
            areas,
            open,
        })
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// True when there is no node (never, for a graph built by [`NodeGraph::from_edges`]).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Number of undirected edges (each link counted once).
    pub fn edge_count(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// Node positions, metres.
    pub fn positions(&self) -> &[DVec2] {
        &self.positions
    }

    /// Position of `node`, metres. Panics when `node >= len()`.
    pub fn position(&self, node: usize) -> DVec2 {
        self.positions[node]
    }

    /// Row starts of the compressed sparse rows: `neighbours(i)` is
    /// `offsets()[i]..offsets()[i + 1]` of the flat neighbour list; `len() + 1` entries.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Neighbours of `node`, by increasing index. Panics when `node >= len()`.
    pub fn neighbours(&self, node: usize) -> &[u32] {
        &self.neighbours[self.offsets[node]..self.offsets[node + 1]]
    }

    /// Distances to the neighbours of `node`, metres, in [`NodeGraph::neighbours`] order.
    /// Panics when `node >= len()`.
    pub fn link_lengths(&self, node: usize) -> &[f32] {
        &self.lengths[self.offsets[node]..self.offsets[node + 1]]
    }

    /// Area `node` stands for, m². Panics when `node >= len()`.
    pub fn area(&self, node: usize) -> f32 {
        self.areas[node]
    }

    /// Every node's area, m².
    pub fn areas(&self) -> &[f32] {
        &self.areas
    }

    /// Sum of the node areas, m², added in f64.
    pub fn total_area(&self) -> f64 {
        self.areas.iter().map(|&a| a as f64).sum()
    }

    /// Per node, true when it is on the open boundary.
    pub fn open_boundary(&self) -> &[bool] {
        &self.open
    }

    /// Sets which nodes are on the open boundary (water reaching them leaves the domain):
    /// one flag per node. Errors when `mask` has another length.
    pub fn set_open_boundary(&mut self, mask: &[bool]) -> Result<()> {
        if mask.len() != self.len() {
            return Err(OrogenError::invalid(
                "open boundary mask",
                format!(
                    "one flag per node expected ({}), got {}",
                    self.len(),
                    mask.len()
                ),
            ));
        }
        self.open.copy_from_slice(mask);
        Ok(())
    }
}

impl Neighbourhood for NodeGraph {
    #[inline]
    fn len(&self) -> usize {
        self.positions.len()
    }

    #[inline]
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, mut f: F) {
        let (start, end) = (self.offsets[node], self.offsets[node + 1]);
        for (&j, &d) in self.neighbours[start..end]
            .iter()
            .zip(&self.lengths[start..end])
        {
            f(j, d);
        }
    }

    #[inline]
    fn is_outlet(&self, node: usize) -> bool {
        self.open[node]
    }

    #[inline]
    fn node_area(&self, node: usize) -> f32 {
        self.areas[node]
    }

    #[inline]
    fn position(&self, node: usize) -> DVec2 {
        self.positions[node]
    }
}
