//! The flow graph: who drains into whom, in an order that lets every pass be linear.
//!
//! Shared contract between routing (`flow::*`) and the eroders (`eroders::*`).

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
