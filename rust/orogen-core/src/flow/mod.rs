//! Water routing over a terrain: receivers, lakes, accumulation, water surface.

pub mod graph;
pub mod hydrology;
