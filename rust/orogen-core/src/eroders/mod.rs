//! Processes that change the terrain: stream power with uplift (and its coarse-to-fine
//! schedule), thermal erosion (one material, and layered after the thesis), pipe-model
//! hydraulic erosion and wind.

pub mod coarse_to_fine;
pub mod hydraulic;
pub mod layered_thermal;
pub mod stream_power;
pub mod thermal;
pub mod wind;
