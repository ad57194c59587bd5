//! Terrain generators: procedural noise (fBm, ridged, multifractal, warping), Godot's
//! FastNoiseLite, faults, and the default ground textures.

pub mod fastnoise;
pub mod faults;
pub mod ground;
pub mod noise;
mod perlin;
