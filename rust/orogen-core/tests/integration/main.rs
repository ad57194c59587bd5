//! The core's integration tests in one binary: one link of the library and its generics
//! instead of one per file (each file is a module). `decode_limits.rs` and `memory_estimate.rs`
//! stay binaries of their own: each counts allocations through its own global allocator.

// Tests work out their expected values with the platform's maths; the core itself uses
// `orogen_core::math` (rust/orogen-core/clippy.toml).
#![allow(clippy::disallowed_methods)]

mod architecture;
mod coarse_to_fine;
mod dem;
mod docs;
mod erosion_without_uplift;
mod export_addons;
mod finite_outputs;
mod flow_hydrology;
mod flow_routing;
mod fuzz_findings;
mod golden;
mod graph_divides;
mod graph_domain;
mod grid_rivers;
mod ground_weights;
mod hydraulic;
mod io_bake;
mod io_formats;
mod layered_erosion;
mod layered_stages;
mod live;
mod mesh;
mod module_graph;
mod noise;
mod planet;
mod planet_earth;
mod planet_recipe;
mod rasterise_primitives;
mod runner;
mod short_errors;
mod strata;
mod stream_power_graph;
mod stream_power_solver;
mod stream_power_stage;
mod support;
mod terrain_plane;
mod thermal;
mod tiles;
mod tiles_hydraulic;
mod tiles_hydrology;
mod tiles_layered;
mod tiles_strata;
mod time_loop;
mod wind_borders;
mod wind_reference;
