//! Orogen's Godot binding: thin classes over `orogen-core`.
//!
//! - [`recipe::TerrainRecipe`]: a recipe resource (the same RON text as `orogen bake`).
//! - [`data::TerrainData`]: heights and maps as Godot images.
//! - [`terrain::TerrainWorld`]: draws a terrain (GPU-displaced grid) with collision and queries.
//! - [`simulator::ErosionSimulator`]: runs a recipe on a worker thread with its own rayon pool.
//! - [`planet::PlanetWorld`]: a tectonic planet stepped live on a worker thread; a region of
//!   it becomes a `TerrainWorld` recipe.
//!
//! The API is described in the README's Godot section. Nothing here panics across the FFI
//! boundary on user input: errors come back as strings or through `failed(message)`.

use godot::prelude::*;

pub mod clipmap;
pub mod convert;
pub mod data;
pub mod paint;
pub mod planet;
pub mod prepared;
pub mod recipe;
pub mod simulator;
pub mod terrain;
mod worker;

struct OrogenExtension;

#[gdextension]
unsafe impl ExtensionLibrary for OrogenExtension {}
