//! The eroded stream graph turned into a heightfield at any resolution (Cordonnier et al.
//! 2016 §7, "Rendering"): three ways, each a function of a [`StreamSurface`] and a
//! target [`Grid`].
//!
//! - [`gaussian`]: a sum of Gaussian kernels centred on the nodes, normalised (the fast,
//!   smooth surface for live views).
//! - [`phong`]: the Delaunay mesh, Phong-tessellated (Boubekeur & Alexa 2008) and rasterised.
//! - [`primitives`]: river, valley, ridge and lake primitives combined by a construction
//!   tree (Génevaux et al. 2013), evaluated per pixel; the ridges follow the divides
//!   between the basins of the channel reaches (Cordonnier et al. 2016 §7).
//! - [`rivers`]: the stream tree's rivers as polylines with discharge, width and Strahler
//!   order (written as `rivers.json`, handed to Godot as curves).
//! - [`grid_rivers`]: the same curves for the regular grid's stream tree, smoothed off its
//!   eight directions, carved into a height map and drawn as a channel field.
//!
//! Pixel `(x, y)` of the target grid stands at `(x·dx, y·dy)` metres, the frame the graph's
//! node positions are in.

mod bins;
pub mod gaussian;
pub mod grid_rivers;
pub mod phong;
pub mod primitives;
pub mod rivers;

pub use grid_rivers::{grid_rivers, RiverCurveParams};
pub use primitives::{primitives, PrimitiveParams, PrimitiveSurface};
pub use rivers::{extract_rivers, River, RiverParams};

use crate::mesh::NodeGraph;

/// The eroded stream graph, as a rasteriser reads it. Every slice has one entry per node.
#[derive(Clone, Copy, Debug)]
pub struct StreamSurface<'a> {
    /// Nodes (positions in metres), links and Voronoi areas.
    pub graph: &'a NodeGraph,
    /// The Delaunay triangles, counter-clockwise node indices.
    pub triangles: &'a [[u32; 3]],
    /// Node heights, metres.
    pub heights: &'a [f32],
    /// Receiver of each node along the stream tree with lakes resolved (Cordonnier §4.3):
    /// an outlet receives itself. A node inside a lake may receive a higher node (towards
    /// its pass).
    pub receivers: &'a [u32],
    /// Water passing each node: drainage area (m²) or, with precipitation, discharge (m³/yr).
    pub discharge: &'a [f32],
    /// Water surface at each node, metres: the lake's spill level inside a lake, the node's
    /// height elsewhere (never below it).
    pub water_level: &'a [f32],
}
