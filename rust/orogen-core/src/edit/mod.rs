//! Edits of maps by hand: the brushes the Godot editor paints uplift and precipitation
//! with (FastFlow's authoring loop, seed 002: paint the inputs, the terrain answers), and the
//! ground materials painted over the simulation's.

pub mod brush;
pub mod ground_paint;

pub use brush::{Brush, BrushMode};
pub use ground_paint::{GroundBrush, GroundPaint, GroundStroke, GroundTool};
