//! Grayscale PNG reading (8 or 16 bit) for scalar maps and heightmaps.

use std::fs::File;
use std::path::Path;

use super::files::check_side_limits;
use crate::error::{OrogenError, Result};
use crate::field::{Grid, ScalarMap};

/// Reads an 8- or 16-bit grayscale PNG (an alpha channel is ignored) as values in
/// `[0, 1]` (black 0, white 1) on a grid of the image's own size with `cell_size` 1.
///
/// Errors name `path`: missing or unreadable file, a colour image ("is not
/// grayscale"), a side over [`MAX_SIDE`](crate::field::MAX_SIDE).
pub fn read_gray_image(path: &Path) -> Result<ScalarMap> {
    let (w, h) = image_dimensions(path)?;
    check_side_limits(path, w as u64, h as u64)?;
    let mut reader = open_image(path)?;
    reader.limits(decode_limits(w, h));
    let img = reader
        .decode()
        .map_err(|e| OrogenError::bad_file(path, format!("cannot decode image: {e}")))?;
    let grid = Grid::new(img.width() as usize, img.height() as usize, 1.0)?;
    let data: Vec<f32> = match img {
        image::DynamicImage::ImageLuma8(b) => {
            b.into_raw().into_iter().map(|v| v as f32 / 255.0).collect()
        }
        image::DynamicImage::ImageLumaA8(b) => b.pixels().map(|p| p.0[0] as f32 / 255.0).collect(),
        image::DynamicImage::ImageLuma16(b) => b
            .into_raw()
            .into_iter()
            .map(|v| v as f32 / 65535.0)
            .collect(),
        image::DynamicImage::ImageLumaA16(b) => {
            b.pixels().map(|p| p.0[0] as f32 / 65535.0).collect()
        }
        other => {
            return Err(OrogenError::bad_file(
                path,
                format!(
                    "is not grayscale ({:?}); save it as an 8- or 16-bit grayscale PNG",
                    other.color()
                ),
            ))
        }
    };
    ScalarMap::from_vec(grid, data, &path.display().to_string())
}

/// Width and height of an image file, read from its header only.
pub(crate) fn image_dimensions(path: &Path) -> Result<(u32, u32)> {
    open_image(path)?
        .into_dimensions()
        .map_err(|e| OrogenError::bad_file(path, format!("cannot read image header: {e}")))
}

/// Decoder limits for an image whose header says `w × h`: the pixels at up to 8 bytes each
/// (RGBA16) plus 16 MiB for everything else (an ICC profile is at most a few MiB), so a small file whose chunks inflate to
/// gigabytes (a PNG bomb, e.g. in iCCP) fails with an error instead of exhausting memory.
pub(crate) fn decode_limits(w: u32, h: u32) -> image::Limits {
    // Sides are checked against MAX_SIDE by the callers, with a message that names it.
    let mut limits = image::Limits::no_limits();
    limits.max_alloc = Some(w as u64 * h as u64 * 8 + (16 << 20));
    limits
}

pub(crate) fn open_image(path: &Path) -> Result<image::ImageReader<std::io::BufReader<File>>> {
    super::files::check_regular_file(path)?;
    let mut reader = image::ImageReader::open(path)
        .map_err(|e| OrogenError::io("cannot open", path, e))?
        .with_guessed_format()
        .map_err(|e| OrogenError::io("cannot read", path, e))?;
    // Header reads stay within the limits too (the dimensions are not known yet).
    reader.limits(decode_limits(0, 0));
    Ok(reader)
}
