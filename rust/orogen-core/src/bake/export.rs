//! What the two addon exports share ([`super::export_terrain3d`], [`super::export_hterrain`]):
//! cutting a padded window out of a map, the derived splat weights, and the manifest
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

/// Four non-negative weights as bytes that sum to exactly 255: each gets the floor of its
/// share, and the bytes left over go to the largest remainders (ties to the lower channel).
/// All-zero (or non-finite) weights give `[255, 0, 0, 0]`.
pub(crate) fn weights_255(w: [f32; 4]) -> [u8; 4] {
    let w = w.map(|v| if v.is_finite() && v > 0.0 { v } else { 0.0 });
    let sum: f32 = w.iter().sum();
    if sum <= 0.0 {
        return [255, 0, 0, 0];
    }
    let scaled = w.map(|v| v / sum * 255.0);
    let mut out = scaled.map(|v| (v.floor() as u32).min(255));
    let mut left = 255u32.saturating_sub(out.iter().sum());
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|&a, &b| {
        let (fa, fb) = (scaled[a] - scaled[a].floor(), scaled[b] - scaled[b].floor());
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &c in order.iter().cycle() {
        if left == 0 {
            break;
        }
        out[c] += 1;
        left -= 1;
    }
    out.map(|v| v as u8)
}

/// What each splat channel stands for.
pub(crate) type ChannelNames = [String; 4];

/// Cubic smoothstep of `x` between `a` and `b`.
fn smoothstep(a: f32, b: f32, x: f32) -> f32 {
    let t = ((x - a) / (b - a)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Splat weights (RGBA8, each pixel summing to 255) and what each channel is.
///
/// A layered terrain uses its `splat` map (the four most exposed materials, most common
/// first); a cell whose two materials are both outside those four goes to the first.
/// Any other terrain gets weights from slope, height and drainage: R grass (gentle slopes),
/// G rock (steeper than about 31°, full at 45°), B snow (the top 20 % of the height range,
/// on slopes rock does not take), A wet ground (where the drainage is within the top
/// fifth of its log range: river beds and valley floors).
pub(crate) fn splat_weights(world: &World) -> (Vec<[u8; 4]>, ChannelNames) {
    if let Some(MapData::Rgba(splat)) = world.maps.get(names::SPLAT) {
        let data = splat
            .data
            .iter()
            .map(|p| weights_255(p.map(|v| v as f32)))
            .collect();
        return (data, splat_material_names(world));
    }
    let grid = world.grid();
    let (w, h) = (grid.width, grid.height);
    let hf = &world.height.data;
    let (lo, hi) = world.height.min_max();
    let span = (hi - lo).max(f32::MIN_POSITIVE);
    let drainage = match world.maps.get(names::DRAINAGE) {
        Some(MapData::Scalar(m)) => Some(&m.data),
        _ => None,
    };
    let log_range = drainage.map(|d| {
        let (dlo, dhi) = crate::field::finite_min_max(d);
        let l = |v: f32| (v.max(1e-6) as f64).ln() as f32;
        (l(dlo.max(1e-6)), l(dhi.max(1e-6)))
    });
    let (dx, dy) = (grid.dx(), grid.dy());
    let data = (0..grid.len())
        .map(|i| {
            let (x, y) = (i % w, i / w);
            // Central differences, one-sided at the borders.
            let (xa, xb) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let (ya, yb) = (y.saturating_sub(1), (y + 1).min(h - 1));
            let gx = if xb > xa {
                (hf[y * w + xb] - hf[y * w + xa]) / ((xb - xa) as f32 * dx)
            } else {
                0.0
            };
            let gy = if yb > ya {
                (hf[yb * w + x] - hf[ya * w + x]) / ((yb - ya) as f32 * dy)
            } else {
                0.0
            };
            let slope = (gx * gx + gy * gy).sqrt();
            let rock = smoothstep(0.6, 1.0, slope);
            let t = (hf[i] - lo) / span;
            let snow = smoothstep(0.8, 0.9, t) * (1.0 - rock);
            let wet = match (drainage, log_range) {
                (Some(d), Some((a, b))) if b > a => {
                    let l = (d[i].max(1e-6) as f64).ln() as f32;
                    smoothstep(a + 0.8 * (b - a), a + 0.9 * (b - a), l)
                        * (1.0 - rock)
                        * (1.0 - snow)
                }
                _ => 0.0,
            };
            let grass = (1.0 - rock - snow - wet).max(0.0);
            weights_255([grass, rock, snow, wet])
        })
        .collect();
    let names = ["grass", "rock", "snow", "wet"].map(String::from);
    (data, names)
}

/// The materials of a layered terrain's `splat` channels: the four most exposed, most
/// common first (as `World::export_layers` orders them).
fn splat_material_names(world: &World) -> ChannelNames {
    let mut out: ChannelNames = Default::default();
    if let Some(MapData::Index(material)) = world.maps.get(names::MATERIAL) {
        let mut unique: Vec<&str> = Vec::new();
        for m in &world.materials {
            if !unique.contains(&m.name.as_str()) {
                unique.push(&m.name);
            }
        }
        let mut counts = vec![0usize; unique.len()];
        for &m in &material.data {
            if let Some(c) = counts.get_mut(m as usize) {
                *c += 1;
            }
        }
        let mut order: Vec<usize> = (0..unique.len()).collect();
        order.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
        for (slot, &m) in out.iter_mut().zip(order.iter()) {
            *slot = unique[m].to_string();
        }
    }
    for slot in out.iter_mut().filter(|s| s.is_empty()) {
        *slot = "(unused)".to_string();
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
    mut manifest: serde_json::Map<String, serde_json::Value>,
    readme: String,
) -> Result<()> {
    let mut names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    names.push("README.txt".into());
    names.push("export.json".into());
    manifest.insert("files".into(), serde_json::json!(names));
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| {
        OrogenError::bad_file(
            dir.join("export.json"),
            format!("cannot build export.json: {e}"),
        )
    })?;
    files.push((
        "README.txt".into(),
        Box::new(move |out, path| crate::io::write_all(out, readme.as_bytes(), path)),
    ));
    files.push((
        "export.json".into(),
        Box::new(move |out, path| {
            crate::io::write_all(out, text.as_bytes(), path)?;
            crate::io::write_all(out, b"\n", path)
        }),
    ));
    Ok(())
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
