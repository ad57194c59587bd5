//! Irregular node graphs for flow routing: points in the plane, their Delaunay neighbours
//! and Voronoi cell areas, walkable by [`crate::flow`] through its `Neighbourhood` trait.
//!
//! Cordonnier et al. 2016 §3: the stream graph G is built on random points, linked by their Delaunay triangulation.
//!
//! - [`graph`]: [`NodeGraph`], neighbour lists in compressed rows with link lengths, node
//!   areas and an open-boundary mask.
//! - [`delaunay`]: [`Delaunay`] triangulation (via `spade`), Voronoi areas clipped to the
//!   convex hull, and the graph they make.
//! - [`points`]: point sets to build on ([`points::jittered_grid`]).

pub mod delaunay;
pub mod graph;
pub mod points;

pub use delaunay::{delaunay_graph, Delaunay};
pub use graph::NodeGraph;
