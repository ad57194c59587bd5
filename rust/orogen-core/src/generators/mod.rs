//! Terrain generators: procedural noise (fBm, ridged, multifractal, warping) and faults.

pub mod faults;
pub mod noise;
mod perlin;
