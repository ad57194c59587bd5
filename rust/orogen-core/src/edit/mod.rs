//! Edits of maps by hand: the brushes the Godot editor paints uplift and precipitation
//! with (FastFlow's authoring loop, seed 002), sculpts heights with, and the erosion brush
//! (stream power and thermal erosion only under the brush).

pub mod brush;
pub mod erosion;
pub mod sculpt;

pub use brush::{Brush, BrushMode};
pub use erosion::{ErosionBrush, ErosionBrushParams, ErosionReport};
pub use sculpt::SculptMode;
