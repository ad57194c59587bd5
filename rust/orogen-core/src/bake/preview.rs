//! `preview.png`: shaded relief × hypsometric tint, water in blue.
//!
//! Hillshade uses the real cell size (so slopes are true slopes), light from the
//! north-west at 45° elevation. The tint runs over the height range: greens low,
//! browns, greys, white peaks. Cells with `lake_depth > 0` or on the `rivers` mask
//! are drawn as water.

use crate::math;
use image::RgbImage;
use rayon::prelude::*;

use crate::field::Heightfield;
use crate::world::{names, MapData, World};

/// Light azimuth, degrees clockwise from north (north-west, the cartographic default).
const AZIMUTH_DEG: f32 = 315.0;
/// Light elevation above the horizon, degrees.
const ALTITUDE_DEG: f32 = 45.0;

/// Tint stops over normalised height `t` in `[0, 1]`.
const TINT: [(f32, [f32; 3]); 7] = [
    (0.00, [62.0, 112.0, 58.0]),
    (0.18, [104.0, 150.0, 76.0]),
    (0.38, [178.0, 170.0, 102.0]),
    (0.55, [156.0, 118.0, 78.0]),
    (0.72, [128.0, 104.0, 88.0]),
    (0.86, [170.0, 168.0, 166.0]),
    (1.00, [255.0, 255.0, 255.0]),
];

/// Water colour (lakes and rivers).
const WATER: [f32; 3] = [58.0, 112.0, 190.0];

/// The hypsometric colour of normalised height `t` (clamped to `[0, 1]`).
pub fn tint(t: f32) -> [f32; 3] {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    for pair in TINT.windows(2) {
        let (t0, c0) = pair[0];
        let (t1, c1) = pair[1];
        if t <= t1 {
            let f = (t - t0) / (t1 - t0);
            return [
                c0[0] + (c1[0] - c0[0]) * f,
                c0[1] + (c1[1] - c0[1]) * f,
                c0[2] + (c1[2] - c0[2]) * f,
            ];
        }
    }
    TINT[TINT.len() - 1].1
}

/// Direction towards the light (x east, y south, z up), unit length.
fn light_direction() -> [f32; 3] {
    let zen = (90.0 - ALTITUDE_DEG).to_radians();
    let az = AZIMUTH_DEG.to_radians();
    [
        math::sin(az) * math::sin(zen),
        -math::cos(az) * math::sin(zen),
        math::cos(zen),
    ]
}

/// Lambertian shade in `[0, 1]` of cell `(x, y)`, with the slope from central
/// differences over the real cell size (one-sided on the border).
fn shade_at(height: &Heightfield, x: usize, y: usize, light: [f32; 3]) -> f32 {
    let (w, h) = (height.width(), height.height());
    let (csx, csy) = (height.grid.dx(), height.grid.dy());
    let z = &height.data;
    let (xl, xr) = (x.saturating_sub(1), (x + 1).min(w - 1));
    let (yu, yd) = (y.saturating_sub(1), (y + 1).min(h - 1));
    let dzdx = if xr > xl {
        (z[y * w + xr] - z[y * w + xl]) / ((xr - xl) as f32 * csx)
    } else {
        0.0
    };
    let dzdy = if yd > yu {
        (z[yd * w + x] - z[yu * w + x]) / ((yd - yu) as f32 * csy)
    } else {
        0.0
    };
    // Surface normal (-dz/dx, -dz/dy, 1), normalised, dotted with the light.
    let n = [-dzdx, -dzdy, 1.0];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    let d = (n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / len;
    if d.is_finite() {
        d.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Lambertian hillshade in `[0, 1]` at every cell (light from the north-west, 45°
/// up), with slopes over the real cell size.
pub fn hillshade(height: &Heightfield) -> Vec<f32> {
    let light = light_direction();
    let w = height.width();
    let mut out = vec![0.0f32; height.grid.len()];
    out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, s) in row.iter_mut().enumerate() {
            *s = shade_at(height, x, y, light);
        }
    });
    out
}

/// The `lake_depth` and `rivers` data, when present on the world's grid.
fn water_maps(world: &World) -> (Option<&[f32]>, Option<&[u8]>) {
    let n = world.grid().len();
    let lake = match world.maps.get(names::LAKE_DEPTH) {
        Some(MapData::Scalar(depth)) if depth.data.len() == n => Some(&depth.data[..]),
        _ => None,
    };
    let rivers = match world.maps.get(names::RIVERS) {
        Some(MapData::Mask(rivers)) if rivers.data.len() == n => Some(&rivers.data[..]),
        _ => None,
    };
    (lake, rivers)
}

/// Renders the world's shaded relief at one pixel per cell.
pub fn render_preview(world: &World) -> RgbImage {
    render_preview_max(world, usize::MAX)
}

/// Renders the preview, shrunk by an integer stride (nearest cell, shaded with its
/// full-resolution neighbours) so that neither side exceeds `max_side` pixels.
pub fn render_preview_max(world: &World, max_side: usize) -> RgbImage {
    let height = &world.height;
    let (w, h) = (height.width(), height.height());
    let stride = w.max(h).div_ceil(max_side.max(1)).max(1);
    let (ow, oh) = (w.div_ceil(stride), h.div_ceil(stride));
    let (lo, hi) = height.min_max();
    let span = if hi > lo { hi - lo } else { 1.0 };
    let light = light_direction();
    let (lake, rivers) = water_maps(world);
    let mut pixels = vec![0u8; ow * oh * 3];
    pixels
        .par_chunks_mut(ow * 3)
        .enumerate()
        .for_each(|(oy, row)| {
            let y = oy * stride;
            for ox in 0..ow {
                let x = ox * stride;
                let i = y * w + x;
                let s = shade_at(height, x, y, light);
                let water = lake.is_some_and(|d| d[i] > 0.0) || rivers.is_some_and(|r| r[i] != 0);
                let (base, light) = if water {
                    (WATER, 0.75 + 0.25 * s)
                } else {
                    (tint((height.data[i] - lo) / span), 0.25 + 0.95 * s)
                };
                for c in 0..3 {
                    row[ox * 3 + c] = (base[c] * light).round().clamp(0.0, 255.0) as u8;
                }
            }
        });
    RgbImage::from_raw(ow as u32, oh as u32, pixels).expect("buffer sized to the image")
}
