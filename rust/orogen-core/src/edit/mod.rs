//! Edits of maps by hand: the brushes the Godot editor paints uplift and precipitation
//! with (FastFlow's authoring loop, seed 002: paint the inputs, the terrain answers), sculpts
//! heights with, the erosion brush (stream power and thermal erosion only under the brush),
//! and the ground materials painted over the simulation's.

pub mod brush;
pub mod erosion;
pub mod ground_paint;
pub mod sculpt;

pub use brush::{Brush, BrushMode};
pub use erosion::{ErosionBrush, ErosionBrushParams, ErosionReport};
pub use ground_paint::{GroundBrush, GroundPaint, GroundStroke, GroundTool};
pub use sculpt::SculptMode;
