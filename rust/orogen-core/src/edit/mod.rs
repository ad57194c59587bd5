//! Edits of maps by hand: the brushes the Godot editor paints uplift and precipitation
//! with (FastFlow's authoring loop, seed 002: paint the inputs, the terrain answers).

pub mod brush;

pub use brush::{Brush, BrushMode};
