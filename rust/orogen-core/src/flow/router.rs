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

use std::sync::atomic::Ordering::Relaxed;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};
use crate::field::Grid;
use crate::flow::basin_graph::{BasinGraph, Pass};
use crate::flow::graph::{
    atomic_f32, atomic_u32, atomic_u8, prefault, prefetch, FlowGraph, RasterLinks,
};
use crate::neighbourhood::SELF_LINK;
use crate::neighbourhood::{Neighbourhood, OutletParams, RasterGrid};

/// Nodes per chunk when listing roots in parallel.
const ROOT_CHUNK: usize = 1 << 16;

/// Runs of trees traversed in parallel when building the stack.
const BFS_GROUPS: usize = 16;

/// Passes per task when carving in parallel.
const CARVE_CHUNK: usize = 1 << 12;

/// Largest accepted water-surface slope, metres per node (beyond it "filling" builds hills).
pub const MAX_EPSILON: f32 = 10.0;

/// How water leaves closed depressions (lakes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum SinkMode {
    /// Leave pits alone: their stream trees end inside the domain.
    None,
    /// Cordonnier 2016 "Stream tree update" / fastscapelib carve: each lake drains through
    /// its pass; the receivers from the pass back to the pit are reversed. Heights do not change.
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
    /// CSR donors (other than raster grids): `donors[offsets[i]..offsets[i + 1]]` drain
    /// into `i`. Allocated at first use.
    offsets: Vec<u32>,
    donors: Vec<u32>,
    /// Index into `roots` of the tree each node belongs to.
    basins: Vec<u32>,
    /// Tree roots, outlets first, then pits; each group by increasing index.
    roots: Vec<u32>,
    n_outlet_roots: usize,
    /// Stack position where the pits' trees start.
    pit_stack_start: usize,
    /// Stack position where each root's tree starts (one more entry: `n`).
    block_start: Vec<u32>,
    /// Second stack buffer, swapped with the graph's after carving.
    stack_tmp: Vec<u32>,
    /// Per pass, the length of the chain [`carve`] reversed (pass node to pit).
    chain_lens: Vec<u32>,
    /// Per chunk of [`CARVE_CHUNK`] passes, the nodes of its chains in pass order, each
    /// chain from its pass node down to its pit (the order the new stack lists them in).
    chain_nodes: Vec<Vec<u32>>,
    /// Per old tree, the tree it belongs to after carving.
    new_label: Vec<u32>,
    /// Per carved lake: where its block starts in the old stack, the block's length, where
    /// it starts in the new stack, its chain's length and where the chain starts in its
    /// chunk of `chain_nodes`.
    lake_moves: Vec<[u32; 5]>,
    /// Per carved lake: the tree its pass drains into.
    lake_down: Vec<u32>,
    /// Per run of trees: its nodes in stack order and where each tree starts (then the end).
    bfs_runs: Vec<(Vec<u32>, Vec<u32>)>,
    /// Per chunk of nodes: its outlet roots and pit roots.
    root_chunks: Vec<(Vec<u32>, Vec<u32>)>,
    /// Raster grids: per node, which of its 8 neighbours drain into it.
    donor_masks: Vec<u8>,
    /// Raster grids: per donor mask, the index offsets of the donors.
    donor_table: Vec<[u32; 8]>,
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
            runs: Vec::new(),
            links: match nb.as_raster() {
                Some(g) if g.grid().width >= 3 && g.grid().height >= 3 => {
                    Some(RasterLinks::new(g, buffer(n, SELF_LINK, "flow links")?))
                }
                _ => None,
            },
        };
        Ok(FlowRouter {
            nb,
            sea_level,
            graph,
            phase: Phase::Empty,
            offsets: Vec::new(),
            donors: Vec::new(),
            basins: buffer(n, 0u32, "flow basins")?,
            roots: Vec::new(),
            n_outlet_roots: 0,
            pit_stack_start: n,
            block_start: Vec::new(),
            stack_tmp: buffer(n, 0u32, "flow stack")?,
            chain_lens: Vec::new(),
            chain_nodes: Vec::new(),
            new_label: Vec::new(),
            lake_moves: Vec::new(),
            lake_down: Vec::new(),
            bfs_runs: Vec::new(),
            root_chunks: Vec::new(),
            donor_masks: Vec::new(),
            donor_table: Vec::new(),
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
        descend(&self.nb, heights, self.sea_level, &mut self.graph, false);
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
        // Cordonnier 2016, "Extraction of the lake connections": lakes join the outlet trees
        // along the minimum spanning tree of passes.
        // The restack's buffers are mapped while the basin graph runs a sequential phase.
        let n_roots = self.roots.len();
        let (chain_lens, new_label) = (&mut self.chain_lens, &mut self.new_label);
        let (lake_moves, lake_down) = (&mut self.lake_moves, &mut self.lake_down);
        self.basin_graph.lake_passes(
            &self.nb,
            heights,
            &self.roots,
            self.n_outlet_roots,
            &self.basins,
            &self.graph.stack,
            &self.block_start,
            &mut self.passes,
            |lakes| {
                prefault(chain_lens, lakes, 0);
                prefault(lake_moves, lakes, [0; 5]);
                prefault(lake_down, lakes, 0);
                prefault(new_label, n_roots, 0);
            },
        );
        carve(
            &mut self.graph,
            &self.passes,
            &mut self.chain_lens,
            &mut self.chain_nodes,
        );
        self.restack_after_carve();
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
            descend(&self.nb, heights, self.sea_level, &mut self.graph, true);
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
        // Chunks in parallel, each a branch-free (vectorised) test; the first bad one is
        // then searched.
        const CHUNK: usize = 1 << 16;
        let bad = heights
            .par_chunks(CHUNK)
            .position_first(|c| !c.iter().fold(true, |ok, h| ok & h.is_finite()));
        if let Some(i) = bad.and_then(|k| {
            let start = k * CHUNK;
            heights[start..]
                .iter()
                .position(|h| !h.is_finite())
                .map(|o| start + o)
        }) {
            return Err(OrogenError::invalid(
                "heights",
                format!("node {i} is {} (heights must be finite)", heights[i]),
            ));
        }
        Ok(())
    }

    /// CSR donors: counts, inclusive prefix sums, then filled from the back so that each
    /// node's donors end up ascending and `offsets[i]` is the start of node `i`'s donors.
    fn csr_donors(&mut self) -> Result<()> {
        let n = self.nb.len();
        if self.donors.len() != n {
            self.offsets = buffer(n + 1, 0u32, "flow donors")?;
            self.donors = buffer(n, 0u32, "flow donors")?;
        }
        let rcv = &self.graph.receivers;
        let offsets = &mut self.offsets[..];
        let donors = &mut self.donors[..];
        offsets.fill(0);
        for (i, &r) in rcv.iter().enumerate() {
            if r as usize != i {
                offsets[r as usize] += 1;
            }
        }
        let mut sum = 0u32;
        for o in offsets[..n].iter_mut() {
            sum += *o;
            *o = sum;
        }
        offsets[n] = sum;
        for (i, &r) in rcv.iter().enumerate().rev() {
            let r = r as usize;
            if r != i {
                offsets[r] -= 1;
                donors[offsets[r] as usize] = i as u32;
            }
        }
        Ok(())
    }

    /// Donors, roots (outlets first), the stack (Braun & Willett 2013; one breadth-first
    /// block per tree, receivers before donors) and each node's tree.
    fn build_stack(&mut self, heights: &[f32]) -> Result<()> {
        let n = self.nb.len();
        // On a grid (sides ≥ 3) each node's donors are a bit mask over its 8 neighbours;
        // elsewhere CSR donor lists.
        let raster = self
            .nb
            .as_raster()
            .filter(|g| g.grid().width >= 3 && g.grid().height >= 3)
            .cloned();
        if let Some(grid) = &raster {
            if self.donor_masks.len() != n {
                self.donor_masks = buffer(n, 0u8, "flow donors")?;
                self.donor_table = grid.donor_table();
            }
            let links = self
                .graph
                .links
                .as_ref()
                .expect("a grid of 3 × 3 has link codes");
            grid.donor_masks(&links.codes, &mut self.donor_masks);
        } else {
            self.csr_donors()?;
        }
        // Roots: outlets first, each group by index. Chunks of nodes in parallel, their
        // lists joined in chunk order.
        let rcv = &self.graph.receivers[..];
        let (nb, sea, fallback) = (&self.nb, self.sea_level, self.fallback_outlet);
        let chunks = n.div_ceil(ROOT_CHUNK);
        self.root_chunks.resize_with(chunks, Default::default);
        self.root_chunks
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, (outlets, pits))| {
                outlets.clear();
                pits.clear();
                let end = (k * ROOT_CHUNK + ROOT_CHUNK).min(n);
                for (i, &r) in rcv[..end].iter().enumerate().skip(k * ROOT_CHUNK) {
                    if r as usize == i {
                        let outlet = fallback == Some(r)
                            || nb.is_outlet(i)
                            || sea.is_some_and(|s| heights[i] <= s);
                        if outlet {
                            outlets.push(r)
                        } else {
                            pits.push(r)
                        }
                    }
                }
            });
        self.roots.clear();
        for (outlets, _) in &self.root_chunks[..chunks] {
            self.roots.extend_from_slice(outlets);
        }
        self.n_outlet_roots = self.roots.len();
        for (_, pits) in &self.root_chunks[..chunks] {
            self.roots.extend_from_slice(pits);
        }
        // One breadth-first block per tree. Runs of whole trees are traversed in parallel
        // into their own buffers, then laid end to end in root order: the same stack
        // whatever the thread count.
        let offsets = &self.offsets[..];
        let donors = &self.donors[..];
        let masks = &self.donor_masks[..];
        let table = &self.donor_table[..];
        let roots = &self.roots[..];
        let groups = BFS_GROUPS.min(roots.len());
        self.bfs_runs.resize_with(groups, Default::default);
        self.bfs_runs
            .par_iter_mut()
            .enumerate()
            .for_each(|(g, (nodes, starts))| {
                starts.clear();
                let (first, last) = (roots.len() * g / groups, roots.len() * (g + 1) / groups);
                let trees = &roots[first..last];
                if raster.is_some() {
                    bfs_masks(masks, table, trees, nodes, starts);
                } else {
                    bfs_csr(offsets, donors, trees, nodes, starts);
                }
            });
        // Where each run's nodes and trees start; then the runs laid end to end in
        // parallel, each labelling its own nodes.
        let (mut len, mut trees) = (0usize, 0usize);
        let mut bases = Vec::with_capacity(groups);
        for (_, starts) in &self.bfs_runs[..groups] {
            let (&used, starts) = starts.split_last().expect("one entry per tree and the end");
            bases.push((len, trees));
            len += used as usize;
            trees += starts.len();
        }
        if len != n {
            return Err(OrogenError::Numerical {
                field: "flow router".into(),
                reason: format!("receivers form a cycle: the stack covers {len} of {n} nodes"),
            });
        }
        self.block_start.clear();
        self.block_start.resize(trees + 1, n as u32);
        let mut parts = Vec::with_capacity(groups);
        let (mut stack_rest, mut start_rest) =
            (&mut self.graph.stack[..], &mut self.block_start[..]);
        for (nodes, starts) in &self.bfs_runs[..groups] {
            let (&used, starts) = starts.split_last().expect("one entry per tree and the end");
            let (stack_part, s_tail) = stack_rest.split_at_mut(used as usize);
            let (start_part, b_tail) = start_rest.split_at_mut(starts.len());
            parts.push((&nodes[..used as usize], starts, stack_part, start_part));
            stack_rest = s_tail;
            start_rest = b_tail;
        }
        let labels = atomic_u32(&mut self.basins);
        parts.into_par_iter().zip(&bases).for_each(
            |((nodes, starts, stack_part, start_part), &(base, tree))| {
                stack_part.copy_from_slice(nodes);
                for (k, &s) in starts.iter().enumerate() {
                    start_part[k] = (base + s as usize) as u32;
                    let e = starts.get(k + 1).map_or(nodes.len(), |&e| e as usize);
                    for &c in &nodes[s as usize..e] {
                        labels[c as usize].store((tree + k) as u32, Relaxed);
                    }
                }
            },
        );
        self.pit_stack_start = self.block_start[self.n_outlet_roots] as usize;
        self.graph.runs.clear();
        self.graph.runs.extend(
            self.block_start
                .windows(2)
                .enumerate()
                .map(|(b, w)| [w[0], w[1] - w[0], b as u32]),
        );
        Ok(())
    }

    /// The stack after [`carve`], without a new traversal: outlet trees keep their block;
    /// each lake's block follows its parent's (passes come parents first), led by its
    /// reversed chain from the pass node down to the pit, then its other nodes in their old
    /// order (their receivers did not change). Lakes no pass reached keep their block at the
    /// end. Also relabels `basins` to the outlet tree each node now drains to.
    fn restack_after_carve(&mut self) {
        // Slices, not `&mut Vec`s: the loops then keep their pointers in registers.
        let old = &self.graph.stack[..];
        let out = &mut self.stack_tmp[..];
        let basins = &mut self.basins[..];
        let block_start = &self.block_start[..];
        let n_out = self.n_outlet_roots;
        let n_roots = self.roots.len();
        // Per old tree, the tree it now belongs to (`n_roots`: not placed yet).
        let label = &mut self.new_label;
        label.clear();
        label.extend(0..n_out as u32);
        label.resize(n_roots, n_roots as u32);
        // 1a. Parallel over chunks of passes (carve's, whose chain lists they index): each
        //     lake's tree, its block, where its chain is listed and the tree its pass drains
        //     into. A move holds its tree where its new start will go.
        let moves = &mut self.lake_moves;
        let down = &mut self.lake_down;
        let passes = &self.passes[..];
        moves.clear();
        moves.resize(passes.len(), [0; 5]);
        down.clear();
        down.resize(passes.len(), 0);
        // Pass k's lake is tree `n_out + v - 1` for its graph node v.
        let graph = &self.basin_graph;
        let lake_tree = |k: usize| n_out + graph.pass_node(k) as usize - 1;
        let (chain_lens, old_basins) = (&self.chain_lens[..], &*basins);
        moves
            .par_chunks_mut(CARVE_CHUNK)
            .zip(down.par_chunks_mut(CARVE_CHUNK))
            .enumerate()
            .for_each(|(c, (ms, ds))| {
                let first = c * CARVE_CHUNK;
                let mut chain_at = 0u32;
                for (j, (m, d)) in ms.iter_mut().zip(ds).enumerate() {
                    let k = first + j;
                    // Ask for the block and the downstream node's tree 16 passes ahead.
                    if let Some(ahead) = passes.get(k + 16) {
                        prefetch(block_start, lake_tree(k + 16));
                        prefetch(old_basins, ahead.to as usize);
                    }
                    let b = lake_tree(k);
                    debug_assert_eq!(b, old_basins[passes[k].pit as usize] as usize);
                    let (s, e) = (block_start[b], block_start[b + 1]);
                    *m = [s, e - s, b as u32, chain_lens[k], chain_at];
                    chain_at += chain_lens[k];
                    *d = old_basins[passes[k].to as usize];
                }
            });
        // 1b. Sequential, in pass order: each lake's label (its parent's, set already) and
        //     where its block goes. The runs of whole trees (see `FlowGraph::runs`): outlet
        //     blocks, then lake blocks in their new order, then lakes no pass reached.
        let runs = &mut self.graph.runs;
        runs.clear();
        runs.extend((0..n_out).map(|b| {
            [
                block_start[b],
                block_start[b + 1] - block_start[b],
                b as u32,
            ]
        }));
        let mut len = self.pit_stack_start;
        for (k, (m, &d)) in moves.iter_mut().zip(down.iter()).enumerate() {
            if let Some(&ahead) = down.get(k + 8) {
                prefetch(label, ahead as usize);
            }
            let b = m[2] as usize;
            label[b] = label[d as usize];
            m[2] = len as u32;
            runs.push([len as u32, m[1], label[b]]);
            len += m[1] as usize;
        }
        let placed_end = len;
        // 2. Parallel over runs of lakes (each owning its part of the new stack): each
        //    block's chain, receiver first, then its other nodes in their old order.
        let groups = BFS_GROUPS.min(moves.len()).max(1);
        let mut parts = Vec::with_capacity(groups);
        let (head, mut rest) = out[..placed_end].split_at_mut(self.pit_stack_start);
        // The outlet trees keep their place.
        head.copy_from_slice(&old[..self.pit_stack_start]);
        let mut base = self.pit_stack_start;
        for r in 0..groups {
            let (first, last) = (moves.len() * r / groups, moves.len() * (r + 1) / groups);
            let end = moves.get(last).map_or(placed_end, |m| m[2] as usize);
            let (part, tail) = rest.split_at_mut(end - base);
            parts.push((first, &moves[first..last], base, part));
            rest = tail;
            base = end;
        }
        let chains = &self.chain_nodes[..];
        parts
            .into_par_iter()
            .for_each(|(first, moves, base, part)| {
                let mut sorted = Vec::new();
                for (k, &[s, blen, start, chain, at]) in moves.iter().enumerate() {
                    // Blocks come from all over the old stack: ask for the block 8 ahead.
                    if let Some(ahead) = moves.get(k + 8) {
                        prefetch(old, ahead[0] as usize);
                    }
                    let (s, blen, chain) = (s as usize, blen as usize, chain as usize);
                    let block = &mut part[start as usize - base..][..blen];
                    // The chain from the pass node down to the pit, as carve walked it.
                    let nodes = &chains[(first + k) / CARVE_CHUNK][at as usize..][..chain];
                    block[..chain].copy_from_slice(nodes);
                    let (chain_nodes, others) = block.split_at_mut(chain);
                    let old_block = &old[s..s + blen];
                    // Short chains are searched as they are, long ones sorted first.
                    if chain > 8 {
                        sorted.clear();
                        sorted.extend_from_slice(chain_nodes);
                        sorted.sort_unstable();
                    }
                    let mut k = 0;
                    for &c in old_block {
                        let on_chain = if chain <= 8 {
                            chain_nodes.contains(&c)
                        } else {
                            sorted.binary_search(&c).is_ok()
                        };
                        if !on_chain {
                            others[k] = c;
                            k += 1;
                        }
                    }
                    debug_assert_eq!(k, others.len());
                }
            });
        // Lakes no outlet reached (a neighbourhood in pieces) stay pits.
        let mut kept = n_out;
        len = placed_end;
        for b in n_out..n_roots {
            if label[b] != n_roots as u32 {
                continue;
            }
            label[b] = kept as u32;
            let (s, e) = (block_start[b] as usize, block_start[b + 1] as usize);
            self.graph
                .runs
                .push([len as u32, (e - s) as u32, kept as u32]);
            out[len..len + (e - s)].copy_from_slice(&old[s..e]);
            len += e - s;
            self.roots[kept] = self.roots[b];
            kept += 1;
        }
        // 3. Every node to its new tree (a parallel gather).
        let label = &*label;
        basins
            .par_chunks_mut(1 << 14)
            .for_each(|bs| bs.iter_mut().for_each(|b| *b = label[*b as usize]));
        self.roots.truncate(kept);
        self.pit_stack_start = placed_end;
        self.block_start.clear();
        debug_assert_eq!(len, old.len());
        std::mem::swap(&mut self.graph.stack, &mut self.stack_tmp);
    }
}

/// Breadth-first blocks of the trees of `roots` over CSR donors, appended to `nodes`;
/// `starts` gets where each tree starts, then the end.
fn bfs_csr(
    offsets: &[u32],
    donors: &[u32],
    roots: &[u32],
    nodes: &mut Vec<u32>,
    starts: &mut Vec<u32>,
) {
    nodes.clear();
    for &root in roots {
        starts.push(nodes.len() as u32);
        let mut head = nodes.len();
        nodes.push(root);
        while head < nodes.len() {
            let c = nodes[head] as usize;
            head += 1;
            for &d in &donors[offsets[c] as usize..offsets[c + 1] as usize] {
                nodes.push(d);
            }
        }
    }
    starts.push(nodes.len() as u32);
}

/// [`bfs_csr`] over donor masks ([`RasterGrid::donor_masks`]): each node's donors are
/// written as 8 entries of `table` at once, then the end moves by the donor count. `nodes`
/// keeps its length as a buffer (grown as needed); the used length is the last of `starts`.
fn bfs_masks(
    masks: &[u8],
    table: &[[u32; 8]],
    roots: &[u32],
    nodes: &mut Vec<u32>,
    starts: &mut Vec<u32>,
) {
    let mut len = 0usize;
    for &root in roots {
        starts.push(len as u32);
        if nodes.len() < len + 9 {
            nodes.resize((2 * nodes.len()).max(len + 9), 0);
        }
        nodes[len] = root;
        len += 1;
        let mut head = len - 1;
        while head < len {
            let c = nodes[head];
            head += 1;
            if nodes.len() < len + 8 {
                nodes.resize(2 * nodes.len(), 0);
            }
            let m = masks[c as usize];
            let offs = &table[m as usize];
            let out: &mut [u32; 8] = (&mut nodes[len..len + 8])
                .try_into()
                .expect("8 free entries were ensured");
            for (o, &d) in out.iter_mut().zip(offs) {
                *o = c.wrapping_add(d);
            }
            len += m.count_ones() as usize;
        }
    }
    starts.push(len as u32);
}

/// Steepest-descent receivers (see [`Neighbourhood::steepest_receivers`]).
/// On a grid with link codes, the codes too.
fn descend<N: Neighbourhood>(
    nb: &N,
    heights: &[f32],
    sea_level: Option<f32>,
    graph: &mut FlowGraph,
    keep: bool,
) {
    let sea = sea_level.unwrap_or(f32::NEG_INFINITY);
    let (receivers, dist) = (&mut graph.receivers, &mut graph.dist);
    match (nb.as_raster(), &mut graph.links) {
        (Some(grid), Some(links)) => grid.steepest_receivers_coded(
            heights,
            sea,
            receivers,
            dist,
            Some(&mut links.codes),
            keep,
        ),
        _ => nb.steepest_receivers(heights, sea, receivers, dist, keep),
    }
}

/// fastscapelib carve: each lake drains from its pass node `from` to `to`; the receiver
/// chain from `from` down to the pit is reversed so water climbs from the pit to the pass.
/// Each chain lies in its own lake's tree, so runs of passes are carved in parallel. Each
/// chain's length goes to `chain_lens` and its nodes, pass node first, to the chunk's list
/// in `chain_nodes` (the restack copies them from there); on a grid the link codes follow.
fn carve(
    graph: &mut FlowGraph,
    passes: &[Pass],
    chain_lens: &mut Vec<u32>,
    chain_nodes: &mut Vec<Vec<u32>>,
) {
    chain_lens.clear();
    chain_lens.resize(passes.len(), 0);
    let chunks = passes.len().div_ceil(CARVE_CHUNK);
    if chain_nodes.len() < chunks {
        chain_nodes.resize_with(chunks, Vec::new);
    }
    let receivers = atomic_u32(&mut graph.receivers);
    let dist = atomic_f32(&mut graph.dist);
    // The link codes (on a grid) taken out while carving, so the table can be shared.
    let mut codes = graph
        .links
        .as_mut()
        .map(|l| std::mem::take(&mut l.codes))
        .unwrap_or_default();
    let links = graph.links.as_ref().map(|l| (l, atomic_u8(&mut codes)));
    passes
        .par_chunks(CARVE_CHUNK)
        .zip(chain_lens.par_chunks_mut(CARVE_CHUNK))
        .zip(chain_nodes.par_iter_mut())
        .for_each(|((passes, lens), nodes)| {
            nodes.clear();
            for (k, (p, chain_len)) in passes.iter().zip(lens).enumerate() {
                if let Some(ahead) = passes.get(k + 16) {
                    prefetch(receivers, ahead.from as usize);
                }
                let mut prev = p.to;
                let mut c = p.from;
                let mut d = p.dist;
                let mut len = 1;
                loop {
                    nodes.push(c);
                    let next = receivers[c as usize].load(Relaxed);
                    let old_d = dist[c as usize].load(Relaxed);
                    receivers[c as usize].store(prev, Relaxed);
                    dist[c as usize].store(d.to_bits(), Relaxed);
                    if let Some((links, codes)) = &links {
                        codes[c as usize].store(links.grid().link_code(c, prev), Relaxed);
                    }
                    if next == c {
                        break;
                    }
                    d = f32::from_bits(old_d);
                    prev = c;
                    c = next;
                    len += 1;
                }
                *chain_len = len;
            }
        });
    if let Some(l) = &mut graph.links {
        l.codes = codes;
    }
}
