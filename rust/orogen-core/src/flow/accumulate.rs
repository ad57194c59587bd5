//! Passes over a routed [`FlowGraph`]: accumulation, water surface, basin labels.

use rayon::prelude::*;

use std::sync::atomic::Ordering::Relaxed;

use crate::flow::graph::{atomic_f64, Arrays, FlowGraph, Links, WALK_PARTS};

/// Accumulates `weights` downstream: `out[i]` = weight of `i` plus everything draining
/// into it. Weights = node areas give drainage area (m²); area × precipitation gives
/// discharge (m³/yr, FastFlow §river and lake modeling). Sums in f64 (see
/// [`accumulate_f64`]) and rounds each total to f32 once, so a 43,499-cell drainage is
/// exactly 43,499 cell areas (an f32 running sum gives 43,498.81). Allocates one f64
/// buffer per call; loops that accumulate every step keep their own and call
/// [`accumulate_f64`].
///
/// Panics if the slices' lengths differ from the graph's (a programming error).
pub fn accumulate(graph: &FlowGraph, weights: &[f32], out: &mut [f32]) {
    let n = graph.len();
    assert!(
        weights.len() == n && out.len() == n,
        "accumulate: length mismatch"
    );
    let w: Vec<f64> = weights.iter().map(|&v| v as f64).collect();
    let mut sum = vec![0.0f64; n];
    accumulate_f64(graph, &w, &mut sum);
    for (o, s) in out.iter_mut().zip(&sum) {
        *o = *s as f32;
    }
}

/// [`accumulate`] in f64 throughout. Walks the stack backwards; where the graph records
/// its trees ([`FlowGraph::runs`]), whole trees in parallel, each in its stack order, so
/// every sum adds the same terms in the same order whatever the thread count.
///
/// Panics if the slices' lengths differ from the graph's (a programming error).
pub fn accumulate_f64(graph: &FlowGraph, weights: &[f64], out: &mut [f64]) {
    accumulate_f64_in_parts(graph, &graph.tree_parts(WALK_PARTS), weights, out);
}

/// [`accumulate_f64`] over `parts`, the graph's [`FlowGraph::tree_parts`], for a caller that
/// also walks the stack over them (the stream-power step): dealt once, used twice.
pub fn accumulate_f64_in_parts(
    graph: &FlowGraph,
    parts: &[Vec<[u32; 2]>],
    weights: &[f64],
    out: &mut [f64],
) {
    let n = graph.len();
    assert!(
        weights.len() == n && out.len() == n,
        "accumulate: length mismatch"
    );
    // Each sum starts at its node's weight: 32 MB at 2048², copied by both cores.
    out.par_chunks_mut(1 << 16)
        .zip(weights.par_chunks(1 << 16))
        .for_each(|(o, w)| o.copy_from_slice(w));
    match &graph.links {
        Some(links) => walk_up(graph, links, parts, out),
        None => walk_up(graph, &Arrays(&graph.receivers, &graph.dist), parts, out),
    }
}

/// Adds each node's sum to its receiver's, walking the stack backwards.
#[inline(always)]
fn walk_up(graph: &FlowGraph, links: &impl Links, parts: &[Vec<[u32; 2]>], out: &mut [f64]) {
    if parts.len() > 1 {
        if let Some(sums) = atomic_f64(out) {
            parts.par_iter().for_each(|runs| {
                for &[start, len] in runs.iter().rev() {
                    let run = &graph.stack[start as usize..(start + len) as usize];
                    for &c in run.iter().rev() {
                        let c = c as usize;
                        let r = links.link(c).0;
                        if r != c {
                            let add = f64::from_bits(sums[c].load(Relaxed));
                            let to = f64::from_bits(sums[r].load(Relaxed));
                            sums[r].store((to + add).to_bits(), Relaxed);
                        }
                    }
                }
            });
            return;
        }
    }
    for &c in graph.stack.iter().rev() {
        let c = c as usize;
        let r = links.link(c).0;
        if r != c {
            out[r] += out[c];
        }
    }
}

/// FastFlow Algorithm 6 (depression-free water surface), evaluated along the stack:
/// `w[i] = max(z[i], w[receiver] + epsilon)`, outlets keep `z`. With carve routing this is
/// the lakes' spill level (their filled surface), sloped by `epsilon` metres per node
/// upstream from the pass. O(N), sequential.
///
/// Panics if the slices' lengths differ from the graph's (a programming error).
pub fn water_surface(graph: &FlowGraph, heights: &[f32], epsilon: f32, out: &mut [f32]) {
    let n = graph.len();
    assert!(
        heights.len() == n && out.len() == n,
        "water_surface: length mismatch"
    );
    let rcv = &graph.receivers;
    for &c in &graph.stack {
        let c = c as usize;
        let r = rcv[c] as usize;
        out[c] = if r == c {
            heights[c]
        } else {
            heights[c].max(out[r] + epsilon)
        };
    }
}

/// FastFlow Algorithm 6 by pointer jumping: log₂(depth) parallel rounds over every node,
/// each doubling how far down the receiver chain a node looks. Same result as
/// [`water_surface`] for `epsilon = 0`; with `epsilon > 0` equal up to float rounding.
/// `scratch` is resized as needed (reuse it between calls).
///
/// Two corrections to the published listing: a node keeps its own running maximum
/// (`max(w[i], …)`, not `max(z[i], …)`, which would drop intermediate nodes) and a jump
/// that would pass an outlet stops there (outlets receive themselves, so `2^k·ε` would
/// otherwise grow without a node behind it).
pub fn water_surface_pointer_jumping(
    graph: &FlowGraph,
    heights: &[f32],
    epsilon: f32,
    out: &mut [f32],
    scratch: &mut PointerJumpScratch,
) {
    let n = graph.len();
    assert!(
        heights.len() == n && out.len() == n,
        "water_surface: length mismatch"
    );
    const NONE: u32 = u32::MAX;
    let s = scratch;
    s.jump.clear();
    s.jump.extend(
        graph
            .receivers
            .iter()
            .enumerate()
            .map(|(i, &r)| if r as usize == i { NONE } else { r }),
    );
    s.next_jump.resize(n, NONE);
    s.next_w.resize(n, 0.0);
    out.copy_from_slice(heights);
    let mut hop = epsilon;
    loop {
        {
            let (w, jump) = (&*out, &s.jump);
            s.next_w
                .par_iter_mut()
                .zip(s.next_jump.par_iter_mut())
                .enumerate()
                .with_min_len(4096)
                .for_each(|(i, (nw, nj))| {
                    let j = jump[i];
                    if j == NONE {
                        *nw = w[i];
                        *nj = NONE;
                    } else {
                        *nw = w[i].max(w[j as usize] + hop);
                        *nj = jump[j as usize];
                    }
                });
        }
        out.copy_from_slice(&s.next_w);
        std::mem::swap(&mut s.jump, &mut s.next_jump);
        if s.jump.par_iter().all(|&j| j == NONE) {
            break;
        }
        hop *= 2.0;
    }
}

/// Buffers reused by [`water_surface_pointer_jumping`].
#[derive(Debug, Default)]
pub struct PointerJumpScratch {
    jump: Vec<u32>,
    next_jump: Vec<u32>,
    next_w: Vec<f32>,
}

/// Labels each node with the tree (outlet basin) it drains to, numbered `0..` in stack
/// order of the roots. Returns the number of labels.
pub fn basin_labels(graph: &FlowGraph, out: &mut [u32]) -> u32 {
    assert!(out.len() == graph.len(), "basin_labels: length mismatch");
    let mut count = 0;
    for &c in &graph.stack {
        let c = c as usize;
        let r = graph.receivers[c] as usize;
        out[c] = if r == c {
            count += 1;
            count - 1
        } else {
            out[r]
        };
    }
    count
}

/// [`basin_labels`] from the receivers alone (a GPU's routing, which has no stack): the
/// same numbering, as the router's stack lists its roots: outlet roots by increasing
/// index, then pits (roots that are not outlets) by increasing index. `is_outlet(i)` says
/// whether root `i` is an outlet. Each node's root is found once (paths are labelled as
/// they are walked): O(n). Returns the number of labels.
///
/// Panics if the lengths differ or a receiver is out of range (a programming error).
pub fn basin_labels_from_receivers(
    receivers: &[u32],
    is_outlet: impl Fn(usize) -> bool,
    out: &mut [u32],
) -> u32 {
    assert!(
        out.len() == receivers.len(),
        "basin_labels_from_receivers: length mismatch"
    );
    const NONE: u32 = u32::MAX;
    out.fill(NONE);
    let mut count = 0;
    for outlets in [true, false] {
        for (i, &r) in receivers.iter().enumerate() {
            if r as usize == i && is_outlet(i) == outlets {
                out[i] = count;
                count += 1;
            }
        }
    }
    let mut path = Vec::new();
    for i in 0..receivers.len() {
        let mut c = i;
        while out[c] == NONE {
            path.push(c);
            c = receivers[c] as usize;
        }
        let label = out[c];
        for &p in &path {
            out[p] = label;
        }
        path.clear();
    }
    count
}
