//! PNG maps: 16-bit grayscale heights, 8-bit masks, colour-coded labels, RGB images.

use std::io::Write;
use std::path::Path;

use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder};

use crate::error::{OrogenError, Result};
use crate::field::{LabelMap, MaskMap, ScalarMap};

/// Encodes raw pixel bytes (native-endian for 16-bit) as PNG into `out`.
fn encode_png(
    out: &mut impl Write,
    bytes: &[u8],
    width: usize,
    height: usize,
    color: ExtendedColorType,
    path: &Path,
) -> Result<()> {
    PngEncoder::new(out)
        .write_image(bytes, width as u32, height as u32, color)
        .map_err(|e| OrogenError::bad_file(path, format!("cannot encode PNG: {e}")))
}

/// Encodes `map` as a 16-bit grayscale PNG (finite min..max → 0..65535) into `out`;
/// returns the `(min, max)` that map to black and white.
pub(crate) fn encode_png16(
    map: &ScalarMap,
    out: &mut impl Write,
    path: &Path,
) -> Result<(f32, f32)> {
    let (values, range) = super::files::normalise_u16(&map.data);
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    encode_png(
        out,
        &bytes,
        map.width(),
        map.height(),
        ExtendedColorType::L16,
        path,
    )?;
    Ok(range)
}

/// Writes `map` as a 16-bit grayscale PNG normalised from its finite min..max to
/// 0..65535, atomically. Returns `(min, max)` in the map's unit.
pub fn write_png16(path: &Path, map: &ScalarMap) -> Result<(f32, f32)> {
    let mut range = (0.0, 0.0);
    super::files::write_atomic(path, |out| {
        range = encode_png16(map, out, path)?;
        Ok(())
    })?;
    Ok(range)
}

/// Encodes a mask as an 8-bit grayscale PNG: 0 stays 0, anything else is 255.
pub(crate) fn encode_mask_png(mask: &MaskMap, out: &mut impl Write, path: &Path) -> Result<()> {
    let bytes: Vec<u8> = mask
        .data
        .iter()
        .map(|&v| if v == 0 { 0 } else { 255 })
        .collect();
    encode_png(
        out,
        &bytes,
        mask.width(),
        mask.height(),
        ExtendedColorType::L8,
        path,
    )
}

/// Encodes an index map (e.g. the exposed material) as 8-bit grayscale, values as they are.
pub(crate) fn encode_index_png(map: &MaskMap, out: &mut impl Write, path: &Path) -> Result<()> {
    encode_png(
        out,
        &map.data,
        map.width(),
        map.height(),
        ExtendedColorType::L8,
        path,
    )
}

/// Encodes an RGBA map (e.g. splat weights) as an 8-bit RGBA PNG.
pub(crate) fn encode_rgba_png(
    map: &crate::field::Field<[u8; 4]>,
    out: &mut impl Write,
    path: &Path,
) -> Result<()> {
    let bytes: Vec<u8> = map.data.iter().flatten().copied().collect();
    encode_png(
        out,
        &bytes,
        map.width(),
        map.height(),
        ExtendedColorType::Rgba8,
        path,
    )
}

/// Writes a mask as an 8-bit grayscale PNG (0 / 255), atomically.
pub fn write_mask_png(path: &Path, mask: &MaskMap) -> Result<()> {
    super::files::write_atomic(path, |out| encode_mask_png(mask, out, path))
}

/// The colour of a label, the same in every bake: the hue steps by the golden ratio
/// from one id to the next (so consecutive basin ids get far-apart hues), saturation
/// and value vary by a hash of the id. Every channel is at least 40, so no label is black.
pub fn label_colour(label: u32) -> [u8; 3] {
    // splitmix64 finaliser of the id.
    let mut z = (label as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let hue = (label as f64 * 0.618_033_988_749_895).fract() * 6.0;
    let sat = 0.45 + 0.30 * ((z & 0xFF) as f64 / 255.0);
    let val = 0.75 + 0.25 * (((z >> 8) & 0xFF) as f64 / 255.0);
    let sector = hue.floor();
    let f = hue - sector;
    let (p, q, t) = (
        val * (1.0 - sat),
        val * (1.0 - sat * f),
        val * (1.0 - sat * (1.0 - f)),
    );
    let (r, g, b) = match sector as u32 {
        0 => (val, t, p),
        1 => (q, val, p),
        2 => (p, val, t),
        3 => (p, q, val),
        4 => (t, p, val),
        _ => (val, p, q),
    };
    let c = |x: f64| (x * 255.0).round().clamp(40.0, 255.0) as u8;
    [c(r), c(g), c(b)]
}

/// Encodes labels as an 8-bit RGB PNG, one [`label_colour`] per id.
pub(crate) fn encode_labels_png(
    labels: &LabelMap,
    out: &mut impl Write,
    path: &Path,
) -> Result<()> {
    let bytes: Vec<u8> = labels.data.iter().flat_map(|&l| label_colour(l)).collect();
    encode_png(
        out,
        &bytes,
        labels.width(),
        labels.height(),
        ExtendedColorType::Rgb8,
        path,
    )
}

/// Writes labels as an 8-bit RGB PNG with a distinct colour per label, atomically.
pub fn write_labels_png(path: &Path, labels: &LabelMap) -> Result<()> {
    super::files::write_atomic(path, |out| encode_labels_png(labels, out, path))
}

/// Encodes an RGB image as PNG.
pub(crate) fn encode_rgb_png(
    img: &image::RgbImage,
    out: &mut impl Write,
    path: &Path,
) -> Result<()> {
    encode_png(
        out,
        img.as_raw(),
        img.width() as usize,
        img.height() as usize,
        ExtendedColorType::Rgb8,
        path,
    )
}

/// Writes an RGB image as PNG, atomically.
pub fn write_rgb_png(path: &Path, img: &image::RgbImage) -> Result<()> {
    super::files::write_atomic(path, |out| encode_rgb_png(img, out, path))
}
