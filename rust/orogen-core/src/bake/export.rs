//! What the two addon exports share ([`super::export_terrain3d`], [`super::export_hterrain`]):
//! cutting a padded window out of a map, weights as bytes summing to 255, and the manifest
//! (`export.json`, whose `files` list tells the next export into the folder which files it
//! may replace) and `README.txt` every export folder gets.

use std::path::Path;

use crate::error::{OrogenError, Result};
use crate::world::{names, MapData, World};

use super::write::Encoder;

/// The window `[x0, x0 + tw) × [y0, y0 + th)` of a `w × h` row-major map; samples outside
/// the map repeat the nearest edge sample (so a padded border continues the terrain flat
/// instead of dropping to 0).
pub(crate) fn window<T: Copy>(
    src: &[T],
    w: usize,
    h: usize,
    (x0, y0): (usize, usize),
    (tw, th): (usize, usize),
) -> Vec<T> {
    let mut out = Vec::with_capacity(tw * th);
    for y in y0..y0 + th {
        let row = y.min(h - 1) * w;
        for x in x0..x0 + tw {
            out.push(src[row + x.min(w - 1)]);
        }
    }
    out
}

/// Non-negative weights as bytes that sum to exactly 255: each gets the floor of its share,
/// and the bytes left over go to the largest remainders (ties to the lower channel).
/// All-zero (or non-finite) weights give 255 in the first channel.
pub(crate) fn weights_255<const N: usize>(w: [f32; N]) -> [u8; N] {
    let w = w.map(|v| if v.is_finite() && v > 0.0 { v } else { 0.0 });
    let sum: f32 = w.iter().sum();
    let mut out = [0u8; N];
    if sum <= 0.0 {
        out[0] = 255;
        return out;
    }
    let scaled = w.map(|v| v / sum * 255.0);
    let mut bytes = scaled.map(|v| (v.floor() as u32).min(255));
    let mut left = 255u32.saturating_sub(bytes.iter().sum());
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_by(|&a, &b| {
        let (fa, fb) = (scaled[a] - scaled[a].floor(), scaled[b] - scaled[b].floor());
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &c in order.iter().cycle() {
        if left == 0 {
            break;
        }
        bytes[c] += 1;
        left -= 1;
    }
    for (o, b) in out.iter_mut().zip(bytes) {
        *o = b as u8;
    }
    out
}

/// The surface colour of a layered terrain (sRGB RGBA8), if it has one.
pub(crate) fn surface_colour(world: &World) -> Option<&[[u8; 4]]> {
    match world.maps.get(names::SURFACE_COLOUR) {
        Some(MapData::Rgba(m)) => Some(&m.data),
        _ => None,
    }
}

/// Adds `bake.json` (the recipe and run, as `orogen bake` writes it) when there is one.
pub(crate) fn add_bake_json(files: &mut Vec<(String, Encoder<'_>)>, text: Option<String>) {
    if let Some(text) = text {
        files.push((
            "bake.json".into(),
            Box::new(move |out, path| {
                crate::io::write_all(out, text.as_bytes(), path)?;
                crate::io::write_all(out, b"\n", path)
            }),
        ));
    }
}

/// Adds `export.json` (`manifest` plus `files`, every file of the export including itself
/// and `README.txt`) and `README.txt` to `files`.
pub(crate) fn add_manifest_and_readme<'a>(
    files: &mut Vec<(String, Encoder<'a>)>,
    dir: &Path,
    manifest: serde_json::Map<String, serde_json::Value>,
    readme: String,
) -> Result<()> {
    let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    files.extend(manifest_and_readme(names, dir, manifest, readme)?);
    Ok(())
}

/// `README.txt` and `export.json` (`manifest` plus `files`: `names`, the export's other
/// files, then these two).
pub(crate) fn manifest_and_readme(
    mut names: Vec<String>,
    dir: &Path,
    mut manifest: serde_json::Map<String, serde_json::Value>,
    readme: String,
) -> Result<Vec<(String, Encoder<'static>)>> {
    names.push("README.txt".into());
    names.push("export.json".into());
    manifest.insert("files".into(), serde_json::json!(names));
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| {
        OrogenError::bad_file(
            dir.join("export.json"),
            format!("cannot build export.json: {e}"),
        )
    })?;
    Ok(vec![
        (
            "README.txt".into(),
            Box::new(move |out, path| crate::io::write_all(out, readme.as_bytes(), path)),
        ),
        (
            "export.json".into(),
            Box::new(move |out, path| {
                crate::io::write_all(out, text.as_bytes(), path)?;
                crate::io::write_all(out, b"\n", path)
            }),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_always_sum_to_255() {
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) * if state & 1 == 0 { 1.0 } else { 0.0 }
        };
        for _ in 0..10_000 {
            let w = [next(), next(), next(), next()];
            let b = weights_255(w);
            assert_eq!(
                b.iter().map(|&v| v as u32).sum::<u32>(),
                255,
                "{w:?} -> {b:?}"
            );
        }
        assert_eq!(weights_255([0.0; 4]), [255, 0, 0, 0]);
        assert_eq!(weights_255([1.0, 1.0, 1.0, 0.0]), [85, 85, 85, 0]);
        assert_eq!(weights_255([0.0, 0.0, 0.0, 2.0]), [0, 0, 0, 255]);
        assert_eq!(weights_255([f32::NAN, 1.0, 0.0, 0.0]), [0, 255, 0, 0]);
    }

    #[test]
    fn window_repeats_the_edges() {
        let src = [1, 2, 3, 4, 5, 6]; // 3 × 2
        assert_eq!(window(&src, 3, 2, (1, 1), (3, 2)), [5, 6, 6, 5, 6, 6]);
        assert_eq!(window(&src, 3, 2, (0, 0), (3, 2)), src);
    }
}
