//! Tiled runs (issue #41, first phase): a grid cut into tiles, one rank each, that exchange
//! only what crosses tile edges and give the whole map's result.
//!
//! - [`layout`]: the tiling ([`TileLayout`]: each tile's interior and one-cell halo);
//! - [`comm`]: the [`Comm`] trait the tiles talk through, its threaded implementation
//!   ([`ThreadComm`], [`run_threads`]) and the message codec; an MPI implementation
//!   (rsmpi) is the same trait;
//! - [`stream_power`]: one tile of the stream-power step (every lake mode, any n), equal
//!   to the whole map's, over strata too ([`TileStreamPower::step_layered`]: `k` from the
//!   exposed material, the change taken from the tile's own layers, per cell), and of the
//!   hydrology maps ([`TileStreamPower::hydrology`]);
//!   `root` holds the root rank's part (the graph of edge crossings), `basins` the lakes'
//!   (the basin graph reduced per tile and solved at the root);
//! - [`thermal`]: one tile of the thermal step (a halo of 3 cells), the same bytes as the
//!   whole map's;
//! - [`layered_thermal`]: one tile of the layered thermal step (a halo of 3 cells, the
//!   heights and every layer's thickness exchanged each step), the same bytes as the whole
//!   map's;
//! - [`hydraulic`]: one tile of the pipe model's step (a halo of 3 cells), the same bytes
//!   as the whole map's, its water and sediment lost at the borders summed as there; over
//!   strata ([`TileHydraulic::set_layers`]) every layer's thickness exchanged over one ring
//!   each step.
//!
//! How equal: receivers and thermal heights are the whole map's bit for bit; drainage sums
//! add the same terms in another order (measured 4e-16 relative). Stream-power heights
//! with the exact chain ([`ChainSolve::Exact`], the default: one round trip with the root
//! per crossing on the longest path, each tile finishing the cells below a resolved exit
//! with the whole map's own arithmetic, the Newton solve per node for n ≠ 1 included) came
//! out bit for bit equal in every test, with `lakes: None`, `Carve` and `Fill` (the basin
//! graph's spanning tree is unique under the whole map's order of passes, so the tiles find
//! the whole map's pass for every lake); with the affine chain ([`ChainSolve::Affine`], n = 1
//! only: one round trip, the crossings' chain solved in f64 from composed maps) a cell below
//! a crossing can end one f32 step away. A drainage sum that rounds to another f32 than the
//! whole map's would also move a height; none did in the tests.
//!
//! The CLI's `orogen bake --tiles NxM` runs these over threads or, built with its `mpi`
//! feature, over MPI ranks (`rust/orogen-cli/src/mpi_comm.rs`); each rank makes its own
//! tile of the start world (`TerrainSource::build_window`, `ScalarSource::resolve_window`)
//! and writes its own tiles (`bake::tiled`). A `CoarseToFine` stage runs its coarse levels
//! whole at rank 0 and its finest level on the tiles. Strata are laid per tile
//! (`stages::strata::build_window`); `Thermal` moves a tile's layers and reads them for a
//! `Material` talus ([`TileThermal::set_layers`]); `StreamPower` and `Hydraulic` erode
//! them. The river curves are traced at rank 0 from the tiles' river cells alone and carved
//! per tile ([`river_curves`]).

mod basins;
pub mod comm;
pub mod hydraulic;
pub mod layered_thermal;
pub mod layout;
pub mod river_curves;
mod root;
pub mod stream_power;
pub mod thermal;

pub use comm::{all_max, exchange_halo, gather_map, run_threads, through_root, Comm, ThreadComm};
pub use hydraulic::{TileHydraulic, TileWater};
pub use layered_thermal::TileLayeredThermal;
pub use layout::{Rect, Tile, TileLayout};
pub use stream_power::{ChainSolve, StepStats, TileInputs, TileStreamPower, ROOT};
pub use thermal::TileThermal;
