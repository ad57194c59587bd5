//! Tiled runs (issue #41, first phase): a grid cut into tiles, one rank each, that exchange
//! only what crosses tile edges and give the whole map's result.
//!
//! - [`layout`]: the tiling ([`TileLayout`]: each tile's interior and one-cell halo);
//! - [`comm`]: the [`Comm`] trait the tiles talk through, its threaded implementation
//!   ([`ThreadComm`], [`run_threads`]) and the message codec; an MPI implementation
//!   (rsmpi) is the same trait;
//! - [`stream_power`]: one tile of the stream-power step (lakes: None, n = 1), equal to the
//!   whole map's; `root` holds the root rank's part (the graph of edge crossings);
//! - [`thermal`]: one tile of the thermal step (a halo of 3 cells), the same bytes as the
//!   whole map's.

pub mod comm;
pub mod layout;
mod root;
pub mod stream_power;
pub mod thermal;

pub use comm::{all_max, exchange_halo, gather_map, run_threads, Comm, ThreadComm};
pub use layout::{Rect, Tile, TileLayout};
pub use stream_power::{StepStats, TileInputs, TileStreamPower, ROOT};
pub use thermal::TileThermal;
