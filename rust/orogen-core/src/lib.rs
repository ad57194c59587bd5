//! Orogen core: every terrain algorithm, over plain data, with no Godot dependency.
//!
//! Folder map (one process per module):
//! - [`field`]: the grid shape and the maps laid on it (heights, scalars, masks, labels).
//! - [`world`]: the terrain being worked on: heights plus every named map a stage produced.
//! - [`recipe`]: the RON recipe shared by the CLI, the editor and the runtime.
//! - [`runner`]: runs a recipe's stages in order with progress and cancel.
//! - [`terrain`]: initial terrain: noise (fBm, ridged, multifractal, warping, faults) and scalar sources.
//! - [`io`]: reading and writing height and scalar maps (EXR, 16-bit PNG, R16, raw f32).
//! - [`flow`]: water routing: receivers, lakes, accumulation, water surface, the hydrology stage.
//! - [`eroders`]: processes that change heights: stream power with uplift, thermal.

pub mod eroders;
pub mod error;
pub mod field;
pub mod flow;
pub mod io;
pub mod recipe;
mod recipe_override;
pub mod runner;
pub mod terrain;
pub mod world;

pub use error::{OrogenError, Result};
pub use field::{Field, Grid, Heightfield, LabelMap, MaskMap, ScalarMap};
pub use recipe::Recipe;
pub use runner::{run_recipe, Event, StageContext};
pub use world::{MapData, World};

/// The crate version, written into `bake.json`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
