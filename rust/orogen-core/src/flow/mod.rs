//! Water routing over a terrain: receivers, lakes, accumulation, water surface.
//!
//! Laid out like fastscapelib's `flow/`: [`neighbourhood`] (what is walked),
//! [`router`] (steepest descent, stack, sink resolution), [`basin_graph`] (passes and
//! their spanning tree), [`accumulate`] (drainage, water surface, basins), [`outlets`],
//! and the [`hydrology`] stage.

pub mod accumulate;
pub mod basin_graph;
pub mod graph;
pub mod hydrology;
pub mod neighbourhood;
pub mod outlets;
pub mod router;

pub use accumulate::{accumulate, basin_labels, water_surface, water_surface_pointer_jumping};
pub use basin_graph::Pass;
pub use graph::FlowGraph;
pub use neighbourhood::{Neighbourhood, RasterGrid, Side};
pub use outlets::OutletParams;
pub use router::{FlowRouter, SinkMode};
