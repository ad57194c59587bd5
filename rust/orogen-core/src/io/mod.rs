//! Reading and writing maps: 32-bit float EXR, 16-bit PNG, R16, raw f32, 8-bit PNG.
//!
//! - [`exr`]: single-channel 32-bit float OpenEXR (channel `R`, which Godot's
//!   `Image.load_exr` loads as `FORMAT_RF`).
//! - [`png16`]: grayscale PNG, 16-bit for heights (min..max → 0..65535), 8-bit for
//!   masks (0/255) and colour-coded label maps.
//! - [`raw`]: headerless little-endian R16 (normalised u16, what Terrain3D and HTerrain
//!   import) and f32.
//! - [`heightmap`]: loading an initial terrain from any of these formats.
//!
//! Every file is written through [`write_atomic`]: to a temporary name in the same
//! folder, then renamed into place, so an interrupted write never leaves a half file.

pub mod exr;
mod files;
mod gray;
pub mod heightmap;
pub mod png16;
mod probe;
pub mod raw;

pub(crate) use files::write_all;
pub use files::{check_regular_file, normalise_u16, resolve_path, write_atomic};
pub use gray::read_gray_image;
pub use probe::{probe, MapInfo};
