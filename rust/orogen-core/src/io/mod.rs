//! Reading and writing maps: 32-bit float EXR, 16-bit PNG, R16, raw f32, 8-bit PNG.
//!
//! - [`exr`]: single-channel 32-bit float OpenEXR (channel `R`, which Godot's
//!   `Image.load_exr` loads as `FORMAT_RF`).
//! - [`png16`]: grayscale PNG, 16-bit for heights (min..max → 0..65535), 8-bit for
//!   masks (0/255) and colour-coded label maps.
//! - [`raw`]: headerless little-endian R16 (normalised u16, what Terrain3D and HTerrain
//!   import) and f32.
//! - [`preview`]: shaded relief × hypsometric tint as an RGB image.
//! - [`bake`]: writes every map of a [`World`](crate::World) plus `bake.json`.
//! - [`heightmap`]: loading an initial terrain from any of these formats.
//!
//! Every file is written through [`write_atomic`]: to a temporary name in the same
//! folder, then renamed into place, so an interrupted write never leaves a half file.

pub mod bake;
pub mod exr;
pub mod heightmap;
pub mod png16;
pub mod preview;
pub mod raw;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{OrogenError, Result};
use crate::field::{Grid, ScalarMap, MAX_SIDE};

/// Reads an 8- or 16-bit grayscale PNG (an alpha channel is ignored) as values in
/// `[0, 1]` (black 0, white 1) on a grid of the image's own size with `cell_size` 1.
///
/// Errors name `path`: missing or unreadable file, a colour image ("is not
/// grayscale"), a side over [`MAX_SIDE`].
pub fn read_gray_image(path: &Path) -> Result<ScalarMap> {
    let (w, h) = image_dimensions(path)?;
    check_side_limits(path, w as u64, h as u64)?;
    let mut reader = open_image(path)?;
    reader.no_limits();
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
                cell_size: Some(map.grid.cell_size).filter(|&c| c != 1.0),
            })
        }
        Format::Png16 => {
            let (w, h) = image_dimensions(path)?;
            check_side_limits(path, w as u64, h as u64)?;
            let mut reader = open_image(path)?;
            reader.no_limits();
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
            })
        }
    }
}

/// `v` as the f64 with the same shortest decimal form (so 0.1f32 prints as 0.1).
fn short_f64(v: f32) -> f64 {
    v.to_string().parse().unwrap_or(v as f64)
}

/// Width and height of an image file, read from its header only.
pub(crate) fn image_dimensions(path: &Path) -> Result<(u32, u32)> {
    open_image(path)?
        .into_dimensions()
        .map_err(|e| OrogenError::bad_file(path, format!("cannot read image header: {e}")))
}

fn open_image(path: &Path) -> Result<image::ImageReader<std::io::BufReader<File>>> {
    image::ImageReader::open(path)
        .map_err(|e| OrogenError::io("cannot open", path, e))?
        .with_guessed_format()
        .map_err(|e| OrogenError::io("cannot read", path, e))
}

/// An error naming `path` when a side is 0 or over [`MAX_SIDE`].
pub(crate) fn check_side_limits(path: &Path, width: u64, height: u64) -> Result<()> {
    for (what, side) in [("width", width), ("height", height)] {
        if side == 0 || side > MAX_SIDE as u64 {
            return Err(OrogenError::bad_file(
                path,
                format!("{what} {side} is outside 1..={MAX_SIDE} cells"),
            ));
        }
    }
    Ok(())
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary path beside `target` (same folder, so a rename is atomic).
pub(crate) fn temp_path_for(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "orogen".into());
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// Writes a file to a temporary name through `write`, returning that name; the
/// caller renames it into place (see [`commit_temp`]). The temporary file is removed
/// when `write` fails.
pub(crate) fn write_temp(
    target: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<PathBuf> {
    if target.is_dir() {
        return Err(OrogenError::bad_file(
            target,
            "is a folder; cannot write a file in its place",
        ));
    }
    let tmp = temp_path_for(target);
    let file = File::create(&tmp).map_err(|e| OrogenError::io("cannot create", &tmp, e))?;
    let mut out = BufWriter::new(file);
    let result = write(&mut out).and_then(|()| {
        let file = out
            .into_inner()
            .map_err(|e| OrogenError::io("cannot write", &tmp, e.into_error()))?;
        file.sync_all()
            .map_err(|e| OrogenError::io("cannot write", &tmp, e))
    });
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Renames a temporary file from [`write_temp`] onto `target`.
pub(crate) fn commit_temp(tmp: &Path, target: &Path) -> Result<()> {
    std::fs::rename(tmp, target).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        OrogenError::io("cannot replace", target, e)
    })
}

/// Writes `target` atomically: the bytes go to a temporary file in the same folder,
/// which is renamed onto `target` only once `write` succeeded. On any error the
/// previous `target` (if any) is left as it was.
pub fn write_atomic(
    target: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    let tmp = write_temp(target, write)?;
    commit_temp(&tmp, target)
}

/// Wraps a `std::io::Error` from writing `path`.
pub(crate) fn write_err(path: &Path) -> impl Fn(std::io::Error) -> OrogenError + '_ {
    move |e| OrogenError::io("cannot write", path, e)
}

/// Writes all of `bytes`, naming `path` on failure.
pub(crate) fn write_all(out: &mut impl Write, bytes: &[u8], path: &Path) -> Result<()> {
    out.write_all(bytes).map_err(write_err(path))
}

pub(crate) use crate::field::finite_min_max;

/// Maps `data` linearly from its finite `min..max` onto `0..=65535` (rounded);
/// non-finite values and a constant map give 0. Returns the values and `(min, max)`.
pub fn normalise_u16(data: &[f32]) -> (Vec<u16>, (f32, f32)) {
    let (lo, hi) = finite_min_max(data);
    let span = hi as f64 - lo as f64;
    let out = data
        .iter()
        .map(|&v| {
            if !v.is_finite() || span <= 0.0 {
                0
            } else {
                (((v as f64 - lo as f64) / span) * 65535.0)
                    .round()
                    .clamp(0.0, 65535.0) as u16
            }
        })
        .collect();
    (out, (lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_u16_spans_full_range() {
        let (v, (lo, hi)) = normalise_u16(&[2.0, 4.0, 3.0, f32::NAN]);
        assert_eq!((lo, hi), (2.0, 4.0));
        assert_eq!(v, vec![0, 65535, 32768, 0]);
        let (v, _) = normalise_u16(&[5.0, 5.0]);
        assert_eq!(v, vec![0, 0]);
    }

    #[test]
    fn write_atomic_keeps_previous_file_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.bin");
        std::fs::write(&target, b"old").unwrap();
        let err = write_atomic(&target, |out| {
            write_all(out, b"half", &target)?;
            Err(OrogenError::bad_file(&target, "injected failure"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("injected failure"));
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        write_atomic(&target, |out| write_all(out, b"new", &target)).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }
}
