//! Orogen's Godot binding: thin classes over `orogen-core`.
//!
//! - [`recipe::TerrainRecipe`]: a recipe resource (the same RON text as `orogen bake`).
//! - [`data::TerrainData`]: heights and maps as Godot images.
//! - [`terrain::TerrainWorld`]: draws a terrain (GPU-displaced grid) with collision and queries.
//! - [`simulator::ErosionSimulator`]: runs a recipe on a worker thread with its own rayon pool.
//! - [`planet::PlanetWorld`]: a tectonic planet stepped live on a worker thread; a region of
//!   it becomes a `TerrainWorld` recipe.
//!
//! The API is described in docs/godot.md. Nothing here panics across the FFI
//! boundary on user input: errors come back as strings or through `failed(message)`.
//!
//! # Which module sits on which
//!
//! Each module imports only those below it (`tests/architecture.rs` checks that there is
//! no import cycle and no file over 800 lines). Logic that is not about Godot (lakes as
//! drawn, collision regions, river display) is in the core's `bake`.
//!
//! ```text
//!  simulator::generate   TerrainWorld.generate(): starts an ErosionSimulator on the terrain
//!        │
//!  simulator             ErosionSimulator: start / start_live / cancel / poll
//!        │  ├ delivery   a finished run to the terrain, a slice per frame
//!        │  ├ live       live erosion's worker side, the painted maps it takes
//!        │  └ run        a run's worker side: pool, observer, messages
//!        │
//!  terrain::{apply, paint, files}   add to TerrainWorld from above (apply_slice and
//!        │                          ApplyJob; the painting API; heightmap in, maps out)
//!  terrain               TerrainWorld: properties, signals, queries; composes
//!        │  ├ mesher     the clipmap mesh and its LOD centre
//!        │  ├ material   the shader material, its textures and uniforms
//!        │  ├ sea        the sea plane
//!        │  ├ collision  the collision body, a HeightMapShape3D per region
//!        │  └ paint_maps the painted uplift and precipitation
//!        │
//!  planet                PlanetWorld (beside the terrain; uses worker only)
//!        │
//!  data, recipe,         TerrainData, TerrainRecipe resources; `Prepared`, a run's
//!  prepared              result made ready on the worker
//!        │
//!  convert, clipmap,     core values ↔ Godot (images, JSON); clipmap geometry; a
//!  worker                worker thread's handle
//! ```

use godot::prelude::*;

pub mod clipmap;
pub mod convert;
pub mod data;
pub mod planet;
pub mod prepared;
pub mod recipe;
pub mod simulator;
pub mod terrain;
mod worker;

struct OrogenExtension;

#[gdextension]
unsafe impl ExtensionLibrary for OrogenExtension {
    fn on_stage_init(stage: InitStage) {
        if stage == InitStage::Scene {
            malloc::keep_large_blocks_out_of_the_heap();
        }
    }
}

/// glibc's allocator, tuned for a run in the editor's or a game's process.
mod malloc {
    /// Pins glibc's mmap threshold at 4 MiB. By default glibc raises it to the size of
    /// each large block freed (up to 32 MiB), after which blocks of several MiB, a run's
    /// per-step buffers and live snapshots among them, come from per-thread heaps that
    /// keep them. A 1025² run in headless Godot (`scripts/bench-godot-apply.sh`) peaked at
    /// 303–321 MiB that way and at 255 MiB with the threshold pinned (the CLI's whole bake:
    /// 93 MiB); at 1 MiB it was 244 MiB but the 1025² load 8–15 % slower, while at 4 MiB the
    /// load (`scripts/bench-godot-load.sh`) is the same within noise. Blocks of 4 MiB and
    /// more are then mapped and returned when freed. Left alone when the user set
    /// `MALLOC_MMAP_THRESHOLD_`, and with another C library.
    pub fn keep_large_blocks_out_of_the_heap() {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
                const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
                extern "C" {
                    fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
                }
                // SAFETY: mallopt only sets an allocator parameter; any value is accepted
                // or refused (returns 0), never undefined.
                unsafe {
                    mallopt(M_MMAP_THRESHOLD, 4 << 20);
                }
            }
        }
    }
}
