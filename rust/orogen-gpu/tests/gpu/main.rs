//! orogen-gpu's tests, one binary: each of them links wgpu, and CI builds them cold, so one
//! link instead of four (lavapipe where the machine has no GPU).

mod common;
mod dems;
mod hydraulic;
mod hydrology;
mod lakes;
mod live;
mod recipe;
mod slope_exponent;
mod stream_power;
mod thermal;
