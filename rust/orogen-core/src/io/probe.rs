//! `orogen info`: what a map file holds, read without loading it as a terrain.

use std::path::Path;

use super::files::check_side_limits;
use super::gray::{image_dimensions, open_image, read_gray_image};
use super::{exr, heightmap, raw};
use crate::error::{OrogenError, Result};
use crate::field::finite_min_max;

/// What `orogen info` shows about a map file.
#[derive(Clone, Debug, PartialEq)]
pub struct MapInfo {
    /// Human-readable format, e.g. `PNG 16-bit grayscale`, `EXR f32 (channel R)`.
    pub format: String,
    /// Width in samples.
    pub width: usize,
    /// Height in samples.
    pub height: usize,
    /// Smallest and largest sample as stored (integers for PNG/R16), `None` for colour images.
    pub range: Option<(f64, f64)>,
    /// Cell size stored in the file (Orogen EXR), metres.
    pub cell_size: Option<f32>,
    /// North-south cell size when it differs from `cell_size` (Orogen EXR of a recipe
    /// with `cell_size: (dx, dy)`), metres.
    pub cell_size_y: Option<f32>,
}

/// Reads a map file and describes it. The format comes from the extension (`.exr`,
/// `.png`, `.r16`, `.raw`/`.r32`/`.f32`); raw files need `raw_size`.
pub fn probe(path: &Path, raw_size: Option<(u32, u32)>) -> Result<MapInfo> {
    use heightmap::Format;
    let format = Format::from_extension(path).ok_or_else(|| {
        OrogenError::bad_file(
            path,
            "unknown extension; expected .exr, .png, .r16, .raw, .r32 or .f32",
        )
    })?;
    let need_size = || {
        raw_size.ok_or_else(|| {
            OrogenError::bad_file(
                path,
                "is a headerless raw file; give its size with --size W,H",
            )
        })
    };
    let range_of = |data: &[f32], k: f64| {
        let (lo, hi) = finite_min_max(data);
        Some(((lo as f64 * k).round(), (hi as f64 * k).round()))
    };
    match format {
        Format::Exr => {
            let map = exr::read_exr(path)?;
            let (lo, hi) = map.min_max();
            Ok(MapInfo {
                format: "EXR 32-bit float, one channel".into(),
                width: map.width(),
                height: map.height(),
                range: Some((short_f64(lo), short_f64(hi))),
                cell_size: Some(map.grid.cell_size).filter(|&c| c != 1.0 || !map.grid.is_square()),
                cell_size_y: Some(map.grid.dy()).filter(|_| !map.grid.is_square()),
            })
        }
        Format::Png16 => {
            let (w, h) = image_dimensions(path)?;
            check_side_limits(path, w as u64, h as u64)?;
            let mut reader = open_image(path)?;
            reader.limits(super::gray::decode_limits(w, h));
            let img = reader
                .decode()
                .map_err(|e| OrogenError::bad_file(path, format!("cannot decode image: {e}")))?;
            let color = img.color();
            let bits = color.bits_per_pixel() / color.channel_count() as u16;
            let kind = match color {
                image::ColorType::L8 | image::ColorType::L16 => "grayscale",
                image::ColorType::La8 | image::ColorType::La16 => "grayscale + alpha",
                image::ColorType::Rgb8 | image::ColorType::Rgb16 => "RGB",
                image::ColorType::Rgba8 | image::ColorType::Rgba16 => "RGBA",
                _ => "colour",
            };
            let range = if color.has_color() {
                None
            } else {
                let gray = read_gray_image(path)?;
                range_of(&gray.data, if bits == 16 { 65535.0 } else { 255.0 })
            };
            Ok(MapInfo {
                format: format!("PNG {bits}-bit {kind}"),
                width: w as usize,
                height: h as usize,
                range,
                cell_size: None,
                cell_size_y: None,
            })
        }
        Format::R16 => {
            let (w, h) = need_size()?;
            let map = raw::read_r16(path, w, h)?;
            Ok(MapInfo {
                format: "R16 (raw little-endian u16)".into(),
                width: map.width(),
                height: map.height(),
                range: range_of(&map.data, 65535.0),
                cell_size: None,
                cell_size_y: None,
            })
        }
        Format::RawF32 => {
            let (w, h) = need_size()?;
            let map = raw::read_raw_f32(path, w, h)?;
            let (lo, hi) = map.min_max();
            Ok(MapInfo {
                format: "raw little-endian f32".into(),
                width: map.width(),
                height: map.height(),
                range: Some((short_f64(lo), short_f64(hi))),
                cell_size: None,
                cell_size_y: None,
            })
        }
    }
}

/// `v` as the f64 with the same shortest decimal form (so 0.1f32 prints as 0.1).
fn short_f64(v: f32) -> f64 {
    v.to_string().parse().unwrap_or(v as f64)
}
