//! Terrain generators: procedural noise (fBm, ridged, multifractal, warping), Godot's
//! FastNoiseLite, and faults.

pub mod fastnoise;
pub mod faults;
pub mod noise;
mod perlin;
