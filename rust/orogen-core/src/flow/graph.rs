//! The flow graph: who drains into whom, in an order that lets every pass be linear.
//!
//! Shared contract between routing (`flow::*`) and the eroders (`eroders::*`).

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8};

use rayon::prelude::*;

use crate::neighbourhood::RasterGrid;

/// Single-flow routing over the cells of a grid (or any node set).
#[derive(Clone, Debug, Default)]
pub struct FlowGraph {
    /// Receiver of each node; an outlet (or unresolved pit) is its own receiver.
    pub receivers: Vec<u32>,
    /// Distance from each node to its receiver, metres (0 for outlets).
    pub dist: Vec<f32>,
    /// Topological order, outlets first: every receiver comes before its donors
    /// (Braun & Willett 2013). Walk it backwards to accumulate downstream.
    pub stack: Vec<u32>,
    /// Optional: the stack cut into runs that each belong to one tree, in stack order, as
    /// `[start, length, tree]` (`tree` numbers the outlet or pit every node of the run
    /// drains to). Accumulation and the implicit stream-power solve then run whole trees in
    /// parallel, each tree's nodes in stack order: the same result as one walk. Empty: one
    /// walk.
    pub runs: Vec<[u32; 3]>,
    /// Optional, on a grid: each node's receiver as a one-byte link code (see
    /// [`RasterLinks`]), kept by the router with `receivers` and `dist`. The walks along the
    /// stack then read a byte a node where they read the receiver and its distance (8
    /// bytes): most of their time goes on reading nodes scattered over the grid.
    pub links: Option<RasterLinks>,
}

/// Receivers on a grid as link codes: `codes[i]` is [`RasterGrid::link_code`] of node `i`
/// and its receiver, which indexes the receiver's offset and distance
/// ([`SELF_LINK`](crate::neighbourhood::SELF_LINK) for a node that receives itself). The
/// router keeps them equal to the graph's `receivers` and `dist`.
#[derive(Clone, Debug)]
pub struct RasterLinks {
    /// Per node, its link code.
    pub codes: Vec<u8>,
    grid: RasterGrid,
    offsets: [isize; 9],
    distances: [f32; 9],
}

impl RasterLinks {
    /// Links over `grid` (at least 3 × 3 cells) for `codes`, one per node.
    pub(crate) fn new(grid: &RasterGrid, codes: Vec<u8>) -> Self {
        let (o, d) = (grid.offsets(), grid.distances);
        RasterLinks {
            codes,
            grid: grid.clone(),
            offsets: [o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], 0],
            distances: [d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], 0.0],
        }
    }

    /// The grid.
    pub fn grid(&self) -> &RasterGrid {
        &self.grid
    }

    /// Node `i`'s receiver and the distance to it, metres.
    #[inline(always)]
    pub fn link(&self, i: usize) -> (usize, f32) {
        let k = self.codes[i] as usize;
        ((i as isize + self.offsets[k]) as usize, self.distances[k])
    }
}

/// How a walk along the stack finds each node's receiver and the distance to it: from the
/// graph's arrays, or from its [`RasterLinks`].
pub(crate) trait Links: Sync {
    /// Node `i`'s receiver (`i` itself for a root) and the distance to it, metres.
    fn link(&self, i: usize) -> (usize, f32);
    /// Asks the caches for what [`Links::link`] will read for node `i`.
    fn prefetch(&self, i: usize);
}

/// The receivers and distances as arrays.
pub(crate) struct Arrays<'a>(pub &'a [u32], pub &'a [f32]);

impl Links for Arrays<'_> {
    #[inline(always)]
    fn link(&self, i: usize) -> (usize, f32) {
        (self.0[i] as usize, self.1[i])
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        prefetch(self.0, i);
        prefetch(self.1, i);
    }
}

impl Links for RasterLinks {
    #[inline(always)]
    fn link(&self, i: usize) -> (usize, f32) {
        RasterLinks::link(self, i)
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        prefetch(&self.codes, i);
    }
}

/// Below this many nodes a walk along the stack stays on one thread.
const PARALLEL_WALK: usize = 1 << 16;

/// Parts of whole trees a walk along the stack is dealt into: fixed, so that which node
/// reports an error does not depend on the thread count.
pub const WALK_PARTS: usize = 8;

/// How many stack positions ahead a walk along the stack asks for a node's values.
pub(crate) const PREFETCH_AHEAD: usize = 16;

/// `values` as atomics, like [`atomic_f32`].
pub(crate) fn atomic_u8(values: &mut [u8]) -> &[AtomicU8] {
    // SAFETY: `AtomicU8` has the size and alignment of `u8`; the exclusive borrow means
    // nothing else reads or writes `values` while the view lives.
    unsafe { &*(values as *mut [u8] as *const [AtomicU8]) }
}

/// `values` as atomics, like [`atomic_f32`].
pub(crate) fn atomic_u32(values: &mut [u32]) -> &[AtomicU32] {
    // SAFETY: `AtomicU32` has the size and alignment of `u32`; the exclusive borrow means
    // nothing else reads or writes `values` while the view lives.
    unsafe { &*(values as *mut [u32] as *const [AtomicU32]) }
}

/// `values` as atomics: walks over parts of whole trees share them without `unsafe`
/// sharing. Relaxed loads and stores compile to plain moves.
pub(crate) fn atomic_f32(values: &mut [f32]) -> &[AtomicU32] {
    // SAFETY: `AtomicU32` has the size and alignment of `u32`, so of `f32`; the exclusive
    // borrow means nothing else reads or writes `values` while the view lives.
    unsafe { &*(values as *mut [f32] as *const [AtomicU32]) }
}

/// An atomic view of f64 values (as their bits), for walks that give each thread its own
/// nodes (relaxed loads and stores compile to plain moves). None where the values are not
/// aligned as `AtomicU64` needs (it may be more aligned than `f64` on 32-bit targets).
pub(crate) fn atomic_f64(values: &mut [f64]) -> Option<&[AtomicU64]> {
    if !(values.as_ptr() as usize).is_multiple_of(std::mem::align_of::<AtomicU64>()) {
        return None;
    }
    // SAFETY: `AtomicU64` has the size of `f64`, and the values are aligned for it (checked
    // above); the exclusive borrow means nothing else reads or writes `values` while the
    // view lives.
    Some(unsafe { &*(values as *mut [f64] as *const [AtomicU64]) })
}

impl FlowGraph {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.receivers.len()
    }

    /// True when there is no node.
    pub fn is_empty(&self) -> bool {
        self.receivers.is_empty()
    }

    /// The stack's runs dealt into parts of whole trees, each part's runs as `[start,
    /// length]` in stack order: trees by number into `parts` groups of about equal node
    /// counts. One part (the whole stack) without [`FlowGraph::runs`] or on small graphs.
    pub fn tree_parts(&self, parts: usize) -> Vec<Vec<[u32; 2]>> {
        let n = self.stack.len();
        if self.runs.is_empty() || n < PARALLEL_WALK || parts <= 1 {
            return vec![vec![[0, n as u32]]];
        }
        let trees = self.runs.iter().map(|r| r[2]).max().unwrap_or(0) as usize + 1;
        let mut size = vec![0u64; trees];
        for &[_, len, tree] in &self.runs {
            size[tree as usize] += u64::from(len);
        }
        // Trees in number order, cut where the running count passes each part's share.
        let total: u64 = size.iter().sum();
        let mut part_of = vec![0u32; trees];
        let mut sum = 0u64;
        for (t, &s) in size.iter().enumerate() {
            part_of[t] = ((sum * parts as u64) / total.max(1)).min(parts as u64 - 1) as u32;
            sum += s;
        }
        let mut out = vec![Vec::new(); parts];
        for &[start, len, tree] in &self.runs {
            out[part_of[tree as usize] as usize].push([start, len]);
        }
        out.retain(|p| !p.is_empty());
        out
    }
}

/// Makes room in `v` for `len` values and writes `value` once in each page of the new room
/// (which stays spare capacity: `v`'s length and values do not change). The kernel maps a
/// page the first time it is written, at some microseconds a page: where a sequential phase
/// leaves the other core idle, it maps the buffers of the phases after it meanwhile. Only
/// the first call with a given length faults anything in.
pub(crate) fn prefault<T: Copy + Send + Sync>(v: &mut Vec<T>, len: usize, value: T) {
    if v.capacity() >= len {
        return;
    }
    v.reserve_exact(len - v.len());
    let step = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    // Runs of pages in parallel (an idle core takes some; a busy one leaves them all here).
    v.spare_capacity_mut()
        .par_chunks_mut(step * 64)
        .for_each(|run| {
            for x in run.iter_mut().step_by(step) {
                x.write(value);
            }
            if let Some(last) = run.last_mut() {
                last.write(value);
            }
        });
}

/// Asks the caches for `data[i]` ahead of its use. A hint only: it never faults, and does
/// nothing off x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(data: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that never faults; `wrapping_add` makes no claim
        // that the address is in bounds.
        unsafe { _mm_prefetch(data.as_ptr().wrapping_add(i) as *const i8, _MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, i);
}

#[cfg(test)]
mod tests {
    use super::prefault;

    #[test]
    fn prefault_reserves_room_and_leaves_the_values_alone() {
        for (start, len) in [(0usize, 0usize), (0, 1), (3, 2), (5, 1000), (17, 300_000)] {
            let mut v: Vec<u32> = (0..start as u32).map(|i| i * 7 + 1).collect();
            let before = v.clone();
            prefault(&mut v, len, 0xdead_beef);
            assert_eq!(v, before, "values, start {start}, len {len}");
            assert!(
                v.capacity() >= len.max(start),
                "room, start {start}, len {len}"
            );
            // Filling up to `len` needs no further allocation.
            let ptr = v.as_ptr();
            v.resize(len.max(start), 9);
            assert_eq!(v.as_ptr(), ptr, "moved, start {start}, len {len}");
        }
    }
}
