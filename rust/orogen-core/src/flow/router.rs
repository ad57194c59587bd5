//! Single-flow routing: steepest-descent receivers, the topological stack, lake resolution.
//!
//! The time loop stays with the caller (uplift → route → accumulate → erode):
//! ```no_run
//! # use orogen_core::{Grid, flow::{FlowRouter, OutletParams, SinkMode, accumulate}};
//! let grid = Grid::new(256, 256, 100.0).unwrap();
//! let mut router = FlowRouter::new(grid, &OutletParams::default()).unwrap();
//! let mut heights = vec![0.0f32; grid.len()];
//! let areas = vec![grid.cell_area(); grid.len()];
//! let mut drainage = vec![0.0f32; grid.len()];
//! let graph = router.route(&mut heights, SinkMode::Carve).unwrap();
//! accumulate(graph, &areas, &mut drainage);
//! ```

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};
use crate::field::Grid;
use crate::flow::basin_graph::{BasinGraph, Pass};
use crate::flow::graph::FlowGraph;
use crate::flow::neighbourhood::{Neighbourhood, RasterGrid};
use crate::flow::outlets::OutletParams;

/// Largest accepted water-surface slope, metres per node (beyond it "filling" builds hills).
pub const MAX_EPSILON: f32 = 10.0;

/// How water leaves closed depressions (lakes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum SinkMode {
    /// Leave pits alone: their stream trees end inside the domain.
    None,
    /// Cordonnier 2016 §4.3 / fastscapelib carve: each lake drains through its pass; the
    /// receivers from the pass back to the pit are reversed. Heights do not change.
    #[default]
    Carve,
    /// Fill each lake up to its spill level (a flat or `epsilon`-sloped water surface),
    /// then route over the filled surface. Raises heights.
    Fill {
        /// Slope of the filled surface, metres per node towards the pass (≥ 0). Default 0
        /// (flat). Must exceed the float spacing of the heights to show (1e-4 is lost at
        /// 3000 m in f32).
        #[serde(default)]
        epsilon: f32,
    },
}

impl SinkMode {
    /// Checks values; `field` prefixes error names.
    pub fn validate(&self, field: &str) -> Result<()> {
        if let SinkMode::Fill { epsilon } = self {
            check_range(
                &format!("{field}.Fill.epsilon"),
                *epsilon as f64,
                0.0,
                MAX_EPSILON as f64,
            )?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Empty,
    Descended,
    Resolved,
}

/// Routes water over a [`Neighbourhood`], reusing its buffers from call to call.
///
/// Phases: [`FlowRouter::steepest_descent`] then [`FlowRouter::resolve_sinks`], or both at
/// once with [`FlowRouter::route`]; read the result with [`FlowRouter::graph`].
pub struct FlowRouter<N: Neighbourhood = RasterGrid> {
    nb: N,
    sea_level: Option<f32>,
    graph: FlowGraph,
    phase: Phase,
    /// CSR donors: `donors[offsets[i]..offsets[i + 1]]` drain into `i`.
    offsets: Vec<u32>,
    donors: Vec<u32>,
    /// Index into `roots` of the tree each node belongs to.
    basins: Vec<u32>,
    /// Tree roots, outlets first, then pits; each group by increasing index.
    roots: Vec<u32>,
    n_outlet_roots: usize,
    /// Stack position where the pits' trees start.
    pit_stack_start: usize,
    /// The lowest pit, made an outlet when no node is one (a closed domain).
    fallback_outlet: Option<u32>,
    basin_graph: BasinGraph,
    passes: Vec<Pass>,
    surface: Vec<f32>,
}

/// A zero-filled buffer of `n` values, or an error naming `what` if memory runs out.
pub(crate) fn buffer<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        OrogenError::invalid(what, format!("cannot allocate {n} values (out of memory)"))
    })?;
    v.resize(n, value);
    Ok(v)
}

impl FlowRouter<RasterGrid> {
    /// A router over a regular grid (8 neighbours) with the given outlets.
    pub fn new(grid: Grid, outlets: &OutletParams) -> Result<Self> {
        outlets.validate("outlets")?;
        FlowRouter::with_neighbourhood(RasterGrid::new(grid, &outlets.borders), outlets.sea_level)
    }
}

impl<N: Neighbourhood> FlowRouter<N> {
    /// A router over any neighbourhood; nodes at or below `sea_level` (metres) are outlets.
    pub fn with_neighbourhood(nb: N, sea_level: Option<f32>) -> Result<Self> {
        if let Some(level) = sea_level {
            crate::error::check_finite("outlets.sea_level", level as f64)?;
        }
        let n = nb.len();
        if n == 0 || n >= u32::MAX as usize {
            return Err(OrogenError::invalid(
                "grid",
                format!("routing needs 1 to {} nodes, got {n}", u32::MAX - 1),
            ));
        }
        let graph = FlowGraph {
            receivers: buffer(n, 0u32, "flow receivers")?,
            dist: buffer(n, 0.0f32, "flow distances")?,
            stack: buffer(n, 0u32, "flow stack")?,
        };
        Ok(FlowRouter {
            nb,
            sea_level,
            graph,
            phase: Phase::Empty,
            offsets: buffer(n + 1, 0u32, "flow donors")?,
            donors: buffer(n, 0u32, "flow donors")?,
            basins: buffer(n, 0u32, "flow basins")?,
            roots: Vec::new(),
            n_outlet_roots: 0,
            pit_stack_start: n,
            fallback_outlet: None,
            basin_graph: BasinGraph::default(),
            passes: Vec::new(),
            surface: Vec::new(),
        })
    }

    /// The neighbourhood routed over.
    pub fn neighbourhood(&self) -> &N {
        &self.nb
    }

    /// The current flow graph (after [`FlowRouter::steepest_descent`] or a full route).
    pub fn graph(&self) -> &FlowGraph {
        &self.graph
    }

    /// Per node, the index of the tree it drains to (see [`FlowRouter::roots`]): after a full
    /// route these are outlet basins, numbered outlets first by increasing node index.
    pub fn basins(&self) -> &[u32] {
        &self.basins
    }

    /// Roots of the current trees: outlets first, then unresolved pits, each by index.
    pub fn roots(&self) -> &[u32] {
        &self.roots
    }

    /// How many of [`FlowRouter::roots`] are outlets (the rest are pits).
    pub fn outlet_root_count(&self) -> usize {
        self.n_outlet_roots
    }

    /// The pass each lake overflowed through in the last [`FlowRouter::resolve_sinks`]
    /// (empty for [`SinkMode::None`]). One per lake, in the order the spanning tree reaches
    /// them from the outlets.
    pub fn passes(&self) -> &[Pass] {
        &self.passes
    }

    /// Routes `heights` fully: steepest descent, then lakes by `mode` (`Fill` raises
    /// `heights`). Errors on a wrong length or a non-finite height.
    pub fn route(&mut self, heights: &mut [f32], mode: SinkMode) -> Result<&FlowGraph> {
        self.steepest_descent(heights)?;
        self.resolve_sinks(heights, mode)?;
        Ok(&self.graph)
    }

    /// Phase 1: each node's steepest-descent receiver (outlets and pits receive
    /// themselves), the stack and the stream trees. Parallel over nodes.
    pub fn steepest_descent(&mut self, heights: &[f32]) -> Result<()> {
        self.check_heights(heights)?;
        descend(
            &self.nb,
            heights,
            self.sea_level,
            &mut self.graph.receivers,
            &mut self.graph.dist,
            false,
        );
        self.fallback_outlet = None;
        self.build_stack(heights)?;
        if self.n_outlet_roots == 0 {
            // A closed domain: its lowest pit becomes the single (terminal) outlet.
            let lowest = self.roots.iter().copied().min_by(|&a, &b| {
                heights[a as usize]
                    .total_cmp(&heights[b as usize])
                    .then(a.cmp(&b))
            });
            self.fallback_outlet = lowest;
            self.build_stack(heights)?;
        }
        self.passes.clear();
        self.phase = Phase::Descended;
        Ok(())
    }

    /// Phase 2: resolves the pits left by [`FlowRouter::steepest_descent`] (which must have
    /// run on the same `heights`). `Fill` raises `heights` to the lakes' water surface.
    pub fn resolve_sinks(&mut self, heights: &mut [f32], mode: SinkMode) -> Result<()> {
        if self.phase != Phase::Descended {
            return Err(OrogenError::invalid(
                "flow router",
                "resolve_sinks needs a fresh steepest_descent on the same heights",
            ));
        }
        self.check_heights(heights)?;
        mode.validate("lakes")?;
        self.phase = Phase::Resolved;
        if mode == SinkMode::None || self.roots.len() == self.n_outlet_roots {
            return Ok(());
        }
        // Cordonnier 2016 §4.3: lakes join outlet trees along the minimum spanning tree of passes.
        self.basin_graph.lake_passes(
            &self.nb,
            heights,
            &self.roots,
            self.n_outlet_roots,
            &self.basins,
            &self.graph.stack,
            self.pit_stack_start,
            &mut self.passes,
        );
        carve(&mut self.graph, &self.passes);
        self.build_stack(heights)?;
        if let SinkMode::Fill { epsilon } = mode {
            if self.surface.len() != heights.len() {
                self.surface = buffer(heights.len(), 0.0, "water surface")?;
            }
            crate::flow::accumulate::water_surface(
                &self.graph,
                heights,
                epsilon,
                &mut self.surface,
            );
            heights.copy_from_slice(&self.surface);
            // Re-route over the raised surface; where it is flat keep the carved receiver.
            descend(
                &self.nb,
                heights,
                self.sea_level,
                &mut self.graph.receivers,
                &mut self.graph.dist,
                true,
            );
            self.build_stack(heights)?;
        }
        Ok(())
    }

    fn check_heights(&self, heights: &[f32]) -> Result<()> {
        let n = self.nb.len();
        if heights.len() != n {
            return Err(OrogenError::invalid(
                "heights",
                format!("has {} values, the router has {n} nodes", heights.len()),
            ));
        }
        if let Some(i) = heights.par_iter().position_first(|h| !h.is_finite()) {
            return Err(OrogenError::invalid(
                "heights",
                format!("node {i} is {} (heights must be finite)", heights[i]),
            ));
        }
        Ok(())
    }

    #[inline]
    fn is_outlet(&self, heights: &[f32], i: usize) -> bool {
        self.fallback_outlet == Some(i as u32)
            || self.nb.is_open_boundary(i)
            || self.sea_level.is_some_and(|s| heights[i] <= s)
    }

    /// Donors, roots (outlets first), the stack (Braun & Willett 2013; one breadth-first
    /// block per tree, receivers before donors) and each node's tree.
    fn build_stack(&mut self, heights: &[f32]) -> Result<()> {
        let n = self.nb.len();
        let rcv = &self.graph.receivers;
        // Donor counts, inclusive prefix sums, then filled from the back so that each
        // node's donors end up ascending and offsets[i] is the start of node i's donors.
        self.offsets[..].fill(0);
        for (i, &r) in rcv.iter().enumerate() {
            if r as usize != i {
                self.offsets[r as usize] += 1;
            }
        }
        let mut sum = 0u32;
        for o in self.offsets[..n].iter_mut() {
            sum += *o;
            *o = sum;
        }
        self.offsets[n] = sum;
        for i in (0..n).rev() {
            let r = rcv[i] as usize;
            if r != i {
                self.offsets[r] -= 1;
                self.donors[self.offsets[r] as usize] = i as u32;
            }
        }
        // Roots: outlets first.
        self.roots.clear();
        for (i, &r) in rcv.iter().enumerate() {
            if r as usize == i && self.is_outlet(heights, i) {
                self.roots.push(i as u32);
            }
        }
        self.n_outlet_roots = self.roots.len();
        for (i, &r) in rcv.iter().enumerate() {
            if r as usize == i && !self.is_outlet(heights, i) {
                self.roots.push(i as u32);
            }
        }
        // One breadth-first block per tree.
        let stack = &mut self.graph.stack;
        let mut len = 0usize;
        self.pit_stack_start = n;
        for (b, &root) in self.roots.iter().enumerate() {
            if b == self.n_outlet_roots {
                self.pit_stack_start = len;
            }
            stack[len] = root;
            self.basins[root as usize] = b as u32;
            let mut head = len;
            len += 1;
            while head < len {
                let c = stack[head] as usize;
                head += 1;
                for k in self.offsets[c]..self.offsets[c + 1] {
                    let d = self.donors[k as usize];
                    self.basins[d as usize] = b as u32;
                    stack[len] = d;
                    len += 1;
                }
            }
        }
        if len != n {
            return Err(OrogenError::Numerical {
                field: "flow router".into(),
                reason: format!("receivers form a cycle: the stack covers {len} of {n} nodes"),
            });
        }
        Ok(())
    }
}

/// Steepest-descent receivers, parallel over nodes (each node independent). Ties go to the
/// lowest neighbour index. Outlets receive themselves; a node with no lower neighbour
/// receives itself, or keeps its current receiver when `keep` (re-routing over a fill).
fn descend<N: Neighbourhood>(
    nb: &N,
    heights: &[f32],
    sea_level: Option<f32>,
    receivers: &mut [u32],
    dist: &mut [f32],
    keep: bool,
) {
    let sea = sea_level.unwrap_or(f32::NEG_INFINITY);
    receivers
        .par_iter_mut()
        .zip(dist.par_iter_mut())
        .enumerate()
        .with_min_len(4096)
        .for_each(|(i, (r, d))| {
            let hi = heights[i];
            if hi <= sea || nb.is_open_boundary(i) || (keep && *r as usize == i) {
                *r = i as u32;
                *d = 0.0;
                return;
            }
            let mut best = 0.0f32;
            let mut best_j = u32::MAX;
            let mut best_d = 0.0f32;
            nb.for_each_neighbour(i, |j, dj| {
                let s = (hi - heights[j as usize]) / dj;
                if s > best || (s == best && s > 0.0 && j < best_j) {
                    best = s;
                    best_j = j;
                    best_d = dj;
                }
            });
            if best_j != u32::MAX {
                *r = best_j;
                *d = best_d;
            } else if !keep {
                *r = i as u32;
                *d = 0.0;
            }
        });
}

/// fastscapelib carve: each lake drains from its pass node `from` to `to`; the receiver
/// chain from `from` down to the pit is reversed so water climbs from the pit to the pass.
fn carve(graph: &mut FlowGraph, passes: &[Pass]) {
    for p in passes {
        let mut prev = p.to;
        let mut c = p.from;
        let mut d = p.dist;
        loop {
            let next = graph.receivers[c as usize];
            let old_d = graph.dist[c as usize];
            graph.receivers[c as usize] = prev;
            graph.dist[c as usize] = d;
            if next == c {
                break;
            }
            d = old_d;
            prev = c;
            c = next;
        }
    }
}
