//! Writing Orogen's default ground textures ([`crate::generators::ground`]) as PNG files:
//! `<material>_albedo_height.png` and `<material>_normal_roughness.png` for each of the
//! eight materials, RGBA8. `orogen textures --out DIR` calls this; the addon's copies in
//! `addons/orogen/runtime/textures/` were written by it.

use std::path::{Path, PathBuf};

use crate::error::{OrogenError, Result};
use crate::generators::ground::{ground_textures, GroundTexture};

/// The two file names of a material.
pub fn texture_file_names(material: &str) -> [String; 2] {
    [
        format!("{material}_albedo_height.png"),
        format!("{material}_normal_roughness.png"),
    ]
}

/// Encodes one RGBA8 image as PNG bytes.
pub fn png_bytes(size: usize, pixels: &[[u8; 4]]) -> Vec<u8> {
    let flat: Vec<u8> = pixels.iter().flatten().copied().collect();
    let mut out = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new_with_quality(
        &mut out,
        image::codecs::png::CompressionType::Best,
        image::codecs::png::FilterType::Adaptive,
    );
    image::ImageEncoder::write_image(
        encoder,
        &flat,
        size as u32,
        size as u32,
        image::ExtendedColorType::Rgba8,
    )
    .expect("encoding a PNG into memory cannot fail");
    out
}

/// The PNG files of every material at `size` pixels, as (file name, bytes).
pub fn ground_texture_files(size: usize) -> Vec<(String, Vec<u8>)> {
    ground_textures(size)
        .iter()
        .flat_map(|t: &GroundTexture| {
            let [a, n] = texture_file_names(t.name);
            [
                (a, png_bytes(t.size, &t.albedo_height)),
                (n, png_bytes(t.size, &t.normal_roughness)),
            ]
        })
        .collect()
}

/// Writes the sixteen PNG files into `dir` (created if missing) at `size` pixels (a multiple
/// of 32 from 32 to 4096). Each file is written beside its final name and renamed into
/// place, so an interrupted run leaves every earlier file whole. Returns the paths written.
pub fn write_ground_textures(dir: &Path, size: usize) -> Result<Vec<PathBuf>> {
    if !(32..=4096).contains(&size) || !size.is_multiple_of(32) {
        return Err(OrogenError::invalid(
            "size",
            format!("{size} is not a multiple of 32 from 32 to 4096"),
        ));
    }
    super::ensure_dir(dir)?;
    let mut written = Vec::new();
    for (name, bytes) in ground_texture_files(size) {
        let path = dir.join(&name);
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, &bytes)
            .map_err(|e| OrogenError::io("cannot write texture", &tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            OrogenError::io("cannot write texture", &path, e)
        })?;
        written.push(path);
    }
    Ok(written)
}
