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
