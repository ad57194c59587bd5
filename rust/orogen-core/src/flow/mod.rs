//! Water routing over a terrain: receivers, lakes, accumulation, water surface.
//!
//! Laid out like fastscapelib's `flow/`: [`router`] (steepest descent, stack, sink
//! resolution), [`basin_graph`] (passes and their spanning tree), [`accumulate`]
//! (drainage, water surface, basins), [`graph`] (the routed flow graph) and [`hydrology`]
//! (the hydrology maps of a terrain). What is walked is a [`crate::neighbourhood`].

pub mod accumulate;
pub mod basin_graph;
pub mod graph;
pub mod hydrology;
pub mod router;

pub use crate::neighbourhood::{Neighbourhood, OutletParams, RasterGrid, Side};
pub use accumulate::{
    accumulate, accumulate_f64, accumulate_f64_in_parts, basin_labels, water_surface,
    water_surface_pointer_jumping,
};
pub use basin_graph::Pass;
pub use graph::{FlowGraph, RasterLinks, WALK_PARTS};
pub use router::{FlowRouter, SinkMode};
