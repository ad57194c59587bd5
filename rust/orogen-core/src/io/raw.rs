//! Headerless raw maps: R16 (little-endian u16, normalised; what Terrain3D and HTerrain
//! import) and little-endian f32.

use std::io::Write;
use std::path::Path;

use crate::error::{OrogenError, Result};
use crate::field::{Grid, ScalarMap};

/// Encodes `map` as R16 (finite min..max → 0..65535, little-endian) into `out`;
/// returns `(min, max)`.
pub(crate) fn encode_r16(map: &ScalarMap, out: &mut impl Write, path: &Path) -> Result<(f32, f32)> {
    let (values, range) = super::files::normalise_u16(&map.data);
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    super::files::write_all(out, &bytes, path)?;
    Ok(range)
}

/// Writes `map` as R16, atomically. Returns the `(min, max)` that map to 0 and 65535.
pub fn write_r16(path: &Path, map: &ScalarMap) -> Result<(f32, f32)> {
    let mut range = (0.0, 0.0);
    super::files::write_atomic(path, |out| {
        range = encode_r16(map, out, path)?;
        Ok(())
    })?;
    Ok(range)
}

/// Encodes `map` as little-endian f32 into `out`.
pub(crate) fn encode_f32(map: &ScalarMap, out: &mut impl Write, path: &Path) -> Result<()> {
    let bytes: Vec<u8> = map.data.iter().flat_map(|v| v.to_le_bytes()).collect();
    super::files::write_all(out, &bytes, path)
}

/// Writes `map` as raw little-endian f32, atomically.
pub fn write_raw_f32(path: &Path, map: &ScalarMap) -> Result<()> {
    super::files::write_atomic(path, |out| encode_f32(map, out, path))
}

/// Reads a whole raw file of `width × height` samples of `bytes_per_sample` bytes,
/// checking the size limit and that the file size matches exactly.
fn read_exact_size(path: &Path, width: u32, height: u32, bytes_per_sample: u64) -> Result<Vec<u8>> {
    super::files::check_side_limits(path, width as u64, height as u64)?;
    let expected = width as u64 * height as u64 * bytes_per_sample;
    let actual = super::files::check_regular_file(path)?;
    if actual != expected {
        return Err(OrogenError::bad_file(
            path,
            format!(
                "is {actual} bytes, but {width}x{height} samples of {bytes_per_sample} bytes need \
                 {expected} bytes; check raw_size"
            ),
        ));
    }
    std::fs::read(path).map_err(|e| OrogenError::io("cannot read", path, e))
}

/// Reads an R16 file of `width × height` little-endian u16 as values in `[0, 1]`,
/// cell size 1. The file size must be exactly `2 × width × height` bytes.
pub fn read_r16(path: &Path, width: u32, height: u32) -> Result<ScalarMap> {
    let bytes = read_exact_size(path, width, height, 2)?;
    let data = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]) as f32 / 65535.0)
        .collect();
    let grid = Grid::new(width as usize, height as usize, 1.0)?;
    ScalarMap::from_vec(grid, data, &path.display().to_string())
}

/// Reads a raw little-endian f32 file of `width × height` values, cell size 1. The
/// file size must be exactly `4 × width × height` bytes; NaN or infinite values are
/// an error naming the first such cell.
pub fn read_raw_f32(path: &Path, width: u32, height: u32) -> Result<ScalarMap> {
    read_raw_f32_with_nan(path, width, height, false)
}

/// [`read_raw_f32`]; with `allow_nan`, NaN samples are kept (a DEM's nodata, see
/// `HeightmapSource::nodata`) and only infinities are errors.
pub fn read_raw_f32_with_nan(
    path: &Path,
    width: u32,
    height: u32,
    allow_nan: bool,
) -> Result<ScalarMap> {
    let bytes = read_exact_size(path, width, height, 4)?;
    let data: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if let Some(i) = data
        .iter()
        .position(|v| !(v.is_finite() || (allow_nan && v.is_nan())))
    {
        return Err(OrogenError::bad_file(
            path,
            format!(
                "has a non-finite value ({}) at cell ({}, {})",
                data[i],
                i % width as usize,
                i / width as usize
            ),
        ));
    }
    let grid = Grid::new(width as usize, height as usize, 1.0)?;
    ScalarMap::from_vec(grid, data, &path.display().to_string())
}
