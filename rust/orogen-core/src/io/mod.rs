//! Reading and writing maps: 32-bit float EXR, 16-bit PNG, R16, raw f32, 8-bit PNG.

pub mod heightmap;
