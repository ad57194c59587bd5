//! Orogen core: every terrain algorithm, over plain data, with no Godot dependency.
//!
//! Layers, each importing only those below it (checked by `tests/integration/architecture.rs`;
//! drawn in `docs/architecture.md`):
//! 1. vocabulary: [`error`], [`field`] (grid and maps), [`schema`] (parameter docs),
//!    [`values`] (per-node inputs), [`math`] (one maths library on every platform), [`neighbourhood`] (grid, graph, outlets), [`mesh`]
//!    (graphs from points), [`state`] (layered terrain, simulation state);
//! 2. processes over plain data: [`flow`] (routing, lakes, hydrology), [`eroders`]
//!    (stream power, thermal), [`edit`] (brushes), [`generators`] (noise, faults), [`io`] (file formats), [`rasterise`] (graph to
//!    heightfield, rivers), [`planet`] (tectonic plates on a sphere), [`tiles`] (tiled runs
//!    that equal the whole map's);
//! 3. stages: [`stages`] (recipe entries adapted to processes, the time loop) and the
//!    [`world`] they work on;
//! 4. [`recipe`]: the RON recipe shared by the CLI, the editor and the runtime;
//! 5. [`runner`]: runs a recipe's stages in order with progress and cancel;
//! 6. [`bake`]: writes a world's maps and `bake.json`.

pub mod bake;
pub mod edit;
pub mod eroders;
pub mod error;
pub mod field;
pub mod flow;
pub mod generators;
pub mod io;
pub mod math;
pub mod mesh;
pub mod neighbourhood;
pub mod planet;
pub mod rasterise;
pub mod recipe;
pub mod runner;
pub mod schema;
pub mod stages;
pub mod state;
pub mod tiles;
pub mod values;
pub mod world;

pub use error::{OrogenError, Result};
pub use field::{CellSize, Field, Grid, Heightfield, LabelMap, MaskMap, ScalarMap};
pub use recipe::Recipe;
pub use runner::{run_recipe, Event, StageContext};
pub use world::{MapData, World};

/// The crate version, written into `bake.json`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
