//! Orogen's default ground textures, made procedurally: eight tileable materials (rock, cliff
//! rock, scree, soil, grass, dry grass, sand, snow) as two images each, in the convention
//! Terrain3D users know: albedo (sRGB) with height in alpha, and a tangent-space normal with
//! roughness in alpha.
//!
//! Every pattern is built from noise that repeats with the texture (a lattice whose period
//! divides the texture, Worley cells that wrap), so the images tile without a seam; the
//! normal comes from the height with wrapped differences. `orogen textures` writes them as
//! PNG files (the addon ships them in `addons/orogen/runtime/textures/`, where a user can
//! replace them); the Godot binding embeds the same files.

use crate::math;
use rayon::prelude::*;

/// The ground materials, in the order of the texture array slots the terrain shader reads.
pub const GROUND_MATERIALS: [&str; 8] = [
    "rock",
    "cliff",
    "scree",
    "soil",
    "grass",
    "dry_grass",
    "sand",
    "snow",
];

/// Default texture size, pixels (a power of two; the textures tile at any multiple of 32).
pub const DEFAULT_SIZE: usize = 512;

/// One material's two images, row-major, `size × size` pixels of RGBA8.
#[derive(Clone, Debug, PartialEq)]
pub struct GroundTexture {
    /// The material's name (one of [`GROUND_MATERIALS`]).
    pub name: &'static str,
    /// Width and height, pixels.
    pub size: usize,
    /// sRGB albedo with the height (0 low, 255 high) in alpha.
    pub albedo_height: Vec<[u8; 4]>,
    /// Tangent-space normal (`0.5 + 0.5·n`, x along the image's columns, y along its rows,
    /// z out of the surface) with roughness (0 smooth, 255 rough) in alpha.
    pub normal_roughness: Vec<[u8; 4]>,
}

/// All eight materials at `size` pixels (a multiple of 32).
pub fn ground_textures(size: usize) -> Vec<GroundTexture> {
    GROUND_MATERIALS
        .iter()
        .enumerate()
        .map(|(slot, _)| ground_texture(slot, size))
        .collect()
}

/// The material of slot `slot` (an index into [`GROUND_MATERIALS`]) at `size` pixels.
///
/// # Panics
/// If `slot` is not below 8 or `size` is not a positive multiple of 32 (the patterns'
/// periods must divide it to tile).
pub fn ground_texture(slot: usize, size: usize) -> GroundTexture {
    assert!(slot < GROUND_MATERIALS.len(), "ground material slot {slot}");
    assert!(
        size >= 32 && size.is_multiple_of(32),
        "ground texture size {size}"
    );
    let pixels: Vec<Sample> = (0..size * size)
        .into_par_iter()
        .map(|i| {
            let u = (i % size) as f64 / size as f64;
            let v = (i / size) as f64 / size as f64;
            material(slot, u, v)
        })
        .collect();
    let (bump, roughness_base) = FINISH[slot];
    let albedo_height = pixels
        .iter()
        .map(|s| {
            [
                srgb_byte(s.colour[0]),
                srgb_byte(s.colour[1]),
                srgb_byte(s.colour[2]),
                unit_byte(s.height),
            ]
        })
        .collect();
    // Slopes in height units per pixel, scaled so `bump` is the height range in pixels.
    let normal_roughness = (0..size * size)
        .map(|i| {
            let (x, y) = (i % size, i / size);
            let at = |dx: isize, dy: isize| {
                let xx = (x as isize + dx).rem_euclid(size as isize) as usize;
                let yy = (y as isize + dy).rem_euclid(size as isize) as usize;
                pixels[yy * size + xx].height
            };
            let sx = (at(1, 0) - at(-1, 0)) * 0.5 * bump * size as f64 / DEFAULT_SIZE as f64;
            let sy = (at(0, 1) - at(0, -1)) * 0.5 * bump * size as f64 / DEFAULT_SIZE as f64;
            let n = normalise([-sx, -sy, 1.0]);
            let rough = (roughness_base + pixels[i].roughness).clamp(0.0, 1.0);
            [
                unit_byte(0.5 + 0.5 * n[0]),
                unit_byte(0.5 + 0.5 * n[1]),
                unit_byte(0.5 + 0.5 * n[2]),
                unit_byte(rough),
            ]
        })
        .collect();
    GroundTexture {
        name: GROUND_MATERIALS[slot],
        size,
        albedo_height,
        normal_roughness,
    }
}

/// Per material: the height range in pixels of a 512² image (how strong the normal is) and
/// the base roughness.
const FINISH: [(f64, f64); 8] = [
    (14.0, 0.78), // rock
    (18.0, 0.80), // cliff
    (22.0, 0.82), // scree
    (7.0, 0.90),  // soil
    (6.0, 0.88),  // grass
    (6.0, 0.90),  // dry grass
    (4.0, 0.85),  // sand
    (3.0, 0.55),  // snow
];

/// One pixel before it is quantised: linear colour, height 0..1, roughness offset.
struct Sample {
    colour: [f64; 3],
    height: f64,
    roughness: f64,
}

fn material(slot: usize, u: f64, v: f64) -> Sample {
    match slot {
        0 => rock(u, v),
        1 => cliff(u, v),
        2 => scree(u, v),
        3 => soil(u, v),
        4 => grass(u, v, [0.05, 0.1, 0.02], [0.15, 0.21, 0.05], 4),
        5 => grass(u, v, [0.26, 0.21, 0.09], [0.45, 0.38, 0.19], 5),
        6 => sand(u, v),
        _ => snow(u, v),
    }
}

/// Weathered bedrock: warped ridged fBm, a sparse network of cracks of varying width
/// (Worley borders in warped space, only where a noise lets them through), tonal blotches
/// and lichen.
fn rock(u: f64, v: f64) -> Sample {
    let wu = u + 0.04 * fbm(u, v, 4, 3, 0.5, 16);
    let wv = v + 0.04 * fbm(u, v, 4, 3, 0.5, 17);
    let base = fbm(wu, wv, 4, 6, 0.55, 11);
    let ridges = ridged(wu, wv, 6, 4, 12);
    let cracks = worley(wu.rem_euclid(1.0), wv.rem_euclid(1.0), 6, 13);
    let open = smooth(-0.1, 0.3, fbm(u, v, 8, 2, 0.5, 18));
    let width = 0.02 + 0.05 * open;
    let crack = (1.0 - smooth(0.0, width, cracks.f2 - cracks.f1)) * open;
    let height = (0.5 + 0.3 * base + 0.35 * (ridges - 0.5) - 0.4 * crack).clamp(0.0, 1.0);
    let blotch = fbm(u, v, 2, 4, 0.6, 14);
    let fine = fbm(u, v, 32, 3, 0.55, 15);
    let plate = hash2(cracks.id, 7, 19) - 0.5;
    // Tone: blotches a third of a tile across, each crack-bounded plate its own shade, and
    // rust and grey staining, strong enough to read at 50-300 m, where one tile is a few pixels.
    let stain = fbm(u, v, 3, 3, 0.5, 27);
    let grey =
        (0.13 + 0.09 * blotch + 0.05 * fine + 0.08 * (height - 0.5) + 0.035 * plate).max(0.02);
    let colour = [
        grey * (1.16 + 0.12 * blotch + 0.14 * stain),
        grey * (1.02 + 0.03 * stain),
        grey * (0.82 - 0.08 * blotch - 0.12 * stain),
    ];
    let lichen = smooth(0.25, 0.45, fbm(u, v, 16, 4, 0.6, 20)) * (1.0 - crack);
    let colour = mix3(colour, [0.2, 0.2, 0.13], 0.6 * lichen);
    Sample {
        colour: scale(colour, 1.0 - 0.65 * crack),
        height,
        roughness: 0.1 * crack - 0.05 * lichen,
    }
}

/// Cliff rock: beds of varied thickness along the rows (the shader maps rows to altitude on
/// steep faces), each bed its own tone and hardness (hard beds stand out as ledges), with
/// sparse vertical joints.
fn cliff(u: f64, v: f64) -> Sample {
    let warp = 0.25 * fbm(u, v, 2, 3, 0.5, 21);
    let s = v * 8.0 + warp;
    let bed = s.floor();
    let bed_id = (bed as i64).rem_euclid(8);
    let within = s - bed;
    let bed_tone = hash2(bed_id, 0, 22) - 0.5;
    let hard = hash2(bed_id, 1, 25);
    let joints = worley(u, (v * 2.0).rem_euclid(1.0), 5, 23);
    let open = smooth(0.0, 0.4, fbm(u, v, 6, 2, 0.5, 26));
    let joint = (1.0 - smooth(0.0, 0.04, joints.f2 - joints.f1)) * open;
    let grain = fbm(u, v, 16, 4, 0.55, 24);
    let ledge = math::powf(within, 0.5 + hard);
    let height = (0.2 + 0.35 * ledge + 0.25 * hard + 0.12 * grain - 0.3 * joint).clamp(0.0, 1.0);
    let grey = (0.16 + 0.07 * bed_tone + 0.03 * grain).max(0.02);
    let colour = [
        grey * (1.2 + 0.2 * bed_tone),
        grey * (1.0 + 0.05 * bed_tone),
        grey * (0.78 - 0.1 * bed_tone),
    ];
    let shade = 1.0 - 0.45 * joint - 0.3 * (1.0 - smooth(0.0, 0.1, within));
    Sample {
        colour: scale(colour, shade),
        height,
        roughness: 0.05 * joint,
    }
}

/// Scree: stones of two sizes (Worley cells, each a dome of its own tone) in grit; small (a
/// twentieth and a fiftieth of a tile), so a slope of scree reads as gravel from 40 m, not as
/// paving stones.
fn scree(u: f64, v: f64) -> Sample {
    let big = worley(u, v, 20, 31);
    let small = worley(u, v, 48, 32);
    let dome = |w: &Cell, edge: f64| smooth(0.0, edge, w.f2 - w.f1).sqrt();
    let big_h = dome(&big, 0.45);
    let small_h = dome(&small, 0.4);
    let grit = fbm(u, v, 64, 2, 0.5, 33);
    let height = (0.55 * big_h + 0.35 * small_h + 0.1 * grit).clamp(0.0, 1.0);
    let tone = 0.8 * (hash2(big.id, 1, 34) - 0.5) + 0.5 * (hash2(small.id, 2, 35) - 0.5);
    let patch = fbm(u, v, 3, 3, 0.5, 37);
    let grey = (0.13 + 0.06 * tone + 0.04 * height + 0.04 * patch).max(0.02);
    let warm = 0.05 * (hash2(big.id, 3, 36) - 0.5);
    Sample {
        colour: scale(
            [grey * (1.12 + warm), grey, grey * (0.86 - warm)],
            0.7 + 0.3 * height,
        ),
        height,
        roughness: -0.05 * height,
    }
}

/// Soil: brown earth in rounded clods, darker in the hollows, with a few pebbles.
fn soil(u: f64, v: f64) -> Sample {
    let clods = fbm(u, v, 24, 3, 0.5, 41);
    let clod = smooth(-0.2, 0.4, clods);
    let base = fbm(u, v, 4, 5, 0.55, 42);
    let pebbles = worley(u, v, 40, 43);
    let pebble = if hash2(pebbles.id, 0, 44) > 0.88 {
        1.0 - smooth(0.1, 0.35, pebbles.f1)
    } else {
        0.0
    };
    let height = (0.35 + 0.2 * base + 0.3 * clod + 0.35 * pebble).clamp(0.0, 1.0);
    let dark = 0.6 + 0.35 * clod + 0.15 * base;
    let earth = scale([0.13, 0.09, 0.055], dark);
    let stone = scale([0.12, 0.115, 0.105], 0.8 + 0.4 * hash2(pebbles.id, 1, 45));
    Sample {
        colour: mix3(earth, stone, pebble),
        height,
        roughness: -0.05 * pebble,
    }
}

/// Grass (live or dry): a dense speckle of blades (fine noise stretched along a direction
/// that turns from clump to clump), lighter tips over a dark floor, clumps of other tones.
fn grass(u: f64, v: f64, dark: [f64; 3], light: [f64; 3], seed: u64) -> Sample {
    let clumps = fbm(u, v, 6, 3, 0.5, 50 + seed);
    let lean = fbm(u, v, 4, 2, 0.5, 54 + seed) * 1.5;
    let (du, dv) = (math::cos(lean), math::sin(lean));
    // Blades: fine noise sampled in a frame squeezed across the blade direction.
    let along = u * du + v * dv;
    let across = -u * dv + v * du;
    let b1 = fbm(
        u + 0.002 * along,
        v + 0.002 * across,
        128,
        2,
        0.5,
        52 + seed,
    );
    let b2 = fbm(u, v, 256, 1, 0.5, 55 + seed);
    let blades = math::powf((0.5 + 0.5 * (0.7 * b1 + 0.3 * b2)).clamp(0.0, 1.0), 1.5);
    // Clumps: tufts a twentieth of a tile across standing over darker, barer gaps, and patches
    // of other tones (yellower, bluer) a third of a tile across, so grass has contrast at a
    // grazing angle and from a few hundred metres.
    let tufts = worley(u, v, 20, 56 + seed);
    let tuft = 1.0 - smooth(0.1, 1.0, tufts.f1 + 0.4 * fbm(u, v, 40, 2, 0.5, 59 + seed));
    let tuft_tone = hash2(tufts.id, 1, 57 + seed) - 0.5;
    let hue = fbm(u, v, 3, 3, 0.5, 58 + seed);
    let height = (0.1 + 0.45 * blades + 0.3 * tuft + 0.15 * (0.5 + 0.5 * clumps)).clamp(0.0, 1.0);
    let t = (0.5 + 0.8 * clumps + 0.3 * tuft_tone).clamp(0.0, 1.0);
    let colour = scale(
        mix3(dark, light, t * 0.7 + 0.3 * blades),
        (0.45 + 0.9 * blades) * (0.75 + 0.45 * tuft) * (1.0 + 0.3 * clumps),
    );
    let colour = [
        colour[0] * (1.0 + 0.3 * hue),
        colour[1] * (1.0 + 0.08 * hue),
        colour[2] * (1.0 - 0.2 * hue),
    ];
    Sample {
        colour,
        height,
        roughness: 0.0,
    }
}

/// Sand: wind ripples a few centimetres apart, bent by noise, over fine grain.
fn sand(u: f64, v: f64) -> Sample {
    let bend = fbm(u, v, 3, 3, 0.5, 61);
    let phase = (u * 0.3 + v) * 24.0 + 2.0 * bend;
    let ripple = 0.5 + 0.5 * math::sin(phase * std::f64::consts::TAU);
    let ripple = ripple * ripple;
    let grain = fbm(u, v, 128, 2, 0.5, 62);
    let patch = fbm(u, v, 4, 3, 0.5, 63);
    let height = (0.3 + 0.45 * ripple + 0.15 * grain + 0.1 * patch).clamp(0.0, 1.0);
    let shade = 0.9 + 0.12 * ripple + 0.08 * grain + 0.06 * patch;
    Sample {
        colour: scale([0.46, 0.36, 0.22], shade),
        height,
        roughness: 0.0,
    }
}

/// Snow: soft drifts, faintly blue in their hollows, with a sparkle of smoother crystals.
fn snow(u: f64, v: f64) -> Sample {
    let drifts = fbm(u, v, 3, 5, 0.5, 71);
    let fine = fbm(u, v, 64, 2, 0.5, 72);
    let height = (0.5 + 0.4 * drifts + 0.1 * fine).clamp(0.0, 1.0);
    let hollow = 1.0 - smooth(0.3, 0.7, height);
    let colour = mix3([0.8, 0.82, 0.86], [0.6, 0.66, 0.78], 0.5 * hollow);
    let sparkle = if hash2((u * 512.0) as i64, (v * 512.0) as i64, 73) > 0.97 {
        -0.3
    } else {
        0.0
    };
    Sample {
        colour,
        height,
        roughness: sparkle,
    }
}

// --- tileable noise -------------------------------------------------------------------

/// A hash of two integers and a seed to [0, 1).
fn hash2(x: i64, y: i64, seed: u64) -> f64 {
    let mut h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ seed.wrapping_mul(0x1656_67B1_9E37_79F9);
    h ^= h >> 31;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 29;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 32;
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Gradient noise in about [-1, 1] at `(u, v)` (texture coordinates) on a lattice of
/// `period` cells across the texture, wrapping at its edges.
fn gradient(u: f64, v: f64, period: i64, seed: u64) -> f64 {
    let x = u * period as f64;
    let y = v * period as f64;
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (ix, iy) = (x0 as i64, y0 as i64);
    let corner = |dx: i64, dy: i64| {
        let a = hash2(
            (ix + dx).rem_euclid(period),
            (iy + dy).rem_euclid(period),
            seed,
        ) * std::f64::consts::TAU;
        math::cos(a) * (fx - dx as f64) + math::sin(a) * (fy - dy as f64)
    };
    let sx = fade(fx);
    let sy = fade(fy);
    let a = lerp(corner(0, 0), corner(1, 0), sx);
    let b = lerp(corner(0, 1), corner(1, 1), sx);
    1.41 * lerp(a, b, sy)
}

/// Tileable fBm: `octaves` octaves of gradient noise from `period` lattice cells across,
/// each of twice the frequency and `gain` times the amplitude. About [-1, 1].
fn fbm(u: f64, v: f64, period: i64, octaves: u32, gain: f64, seed: u64) -> f64 {
    let (mut sum, mut amp, mut norm, mut p) = (0.0, 1.0, 0.0, period);
    for k in 0..octaves {
        sum += amp * gradient(u, v, p, seed.wrapping_mul(31).wrapping_add(k as u64));
        norm += amp;
        amp *= gain;
        p *= 2;
    }
    sum / norm
}

/// Tileable ridged noise in [0, 1]: sharp crests where the noise crosses zero.
fn ridged(u: f64, v: f64, period: i64, octaves: u32, seed: u64) -> f64 {
    let (mut sum, mut amp, mut norm, mut p) = (0.0, 1.0, 0.0, period);
    for k in 0..octaves {
        let n = 1.0 - gradient(u, v, p, seed.wrapping_mul(37).wrapping_add(k as u64)).abs();
        sum += amp * n * n;
        norm += amp;
        amp *= 0.5;
        p *= 2;
    }
    sum / norm
}

/// The nearest and second nearest feature point of tileable Worley noise.
struct Cell {
    /// Distance to the nearest feature point, in cells.
    f1: f64,
    /// Distance to the second nearest, in cells.
    f2: f64,
    /// The nearest point's cell, as one number (wrapped, so equal across the seam).
    id: i64,
}

/// Worley noise with one feature point per cell of a `period × period` lattice that wraps.
fn worley(u: f64, v: f64, period: i64, seed: u64) -> Cell {
    let x = u * period as f64;
    let y = v * period as f64;
    let (ix, iy) = (x.floor() as i64, y.floor() as i64);
    let mut best = Cell {
        f1: f64::MAX,
        f2: f64::MAX,
        id: 0,
    };
    for dy in -1..=1 {
        for dx in -1..=1 {
            let cx = (ix + dx).rem_euclid(period);
            let cy = (iy + dy).rem_euclid(period);
            let px = (ix + dx) as f64 + hash2(cx, cy, seed);
            let py = (iy + dy) as f64 + hash2(cx, cy, seed ^ 0x5555);
            let d = ((px - x).powi(2) + (py - y).powi(2)).sqrt();
            if d < best.f1 {
                best.f2 = best.f1;
                best.f1 = d;
                best.id = cy * period + cx;
            } else if d < best.f2 {
                best.f2 = d;
            }
        }
    }
    best
}

fn fade(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + (b - a) * t
}

fn smooth(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn mix3(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [
        lerp(a[0], b[0], t),
        lerp(a[1], b[1], t),
        lerp(a[2], b[2], t),
    ]
}

fn scale(c: [f64; 3], k: f64) -> [f64; 3] {
    [c[0] * k, c[1] * k, c[2] * k]
}

fn normalise(v: [f64; 3]) -> [f64; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    [v[0] / l, v[1] / l, v[2] / l]
}

fn unit_byte(x: f64) -> u8 {
    (x.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// A linear value in [0, 1] as an sRGB byte.
fn srgb_byte(linear: f64) -> u8 {
    let l = linear.clamp(0.0, 1.0);
    let s = if l <= 0.003_130_8 {
        12.92 * l
    } else {
        1.055 * math::powf(l, 1.0 / 2.4) - 0.055
    };
    unit_byte(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean absolute difference between neighbouring pixels across the wrap (last column
    /// to first, last row to first) and inside the image.
    fn seam_and_interior(img: &[[u8; 4]], size: usize, ch: usize) -> (f64, f64) {
        let px = |x: usize, y: usize| img[y * size + x][ch] as f64;
        let (mut seam, mut inner) = (0.0, 0.0);
        for k in 0..size {
            seam += (px(size - 1, k) - px(0, k)).abs() + (px(k, size - 1) - px(k, 0)).abs();
            let m = size / 2;
            inner += (px(m - 1, k) - px(m, k)).abs() + (px(k, m - 1) - px(k, m)).abs();
        }
        (seam / (2 * size) as f64, inner / (2 * size) as f64)
    }

    #[test]
    fn every_texture_tiles_without_a_seam() {
        for t in ground_textures(128) {
            for ch in 0..4 {
                for img in [&t.albedo_height, &t.normal_roughness] {
                    let (seam, inner) = seam_and_interior(img, t.size, ch);
                    assert!(
                        seam <= 1.5 * inner + 1.0,
                        "{} channel {ch}: seam step {seam:.2} against {inner:.2} inside",
                        t.name
                    );
                }
            }
        }
    }

    #[test]
    fn textures_are_distinct_and_not_flat() {
        let ts = ground_textures(64);
        let mean = |t: &GroundTexture, ch: usize| {
            t.albedo_height.iter().map(|p| p[ch] as f64).sum::<f64>() / t.albedo_height.len() as f64
        };
        for t in &ts {
            let m = mean(t, 3);
            let var = t
                .albedo_height
                .iter()
                .map(|p| (p[3] as f64 - m).powi(2))
                .sum::<f64>()
                / t.albedo_height.len() as f64;
            assert!(var.sqrt() > 8.0, "{}: height std {:.1}", t.name, var.sqrt());
        }
        // Grass is greener than soil, snow brighter than everything, sand warmer than rock.
        let g = &ts[4];
        assert!(mean(g, 1) > mean(g, 0) && mean(g, 1) > mean(g, 2));
        for t in &ts[..7] {
            assert!(mean(&ts[7], 1) > mean(t, 1) + 40.0, "snow vs {}", t.name);
        }
        assert!(mean(&ts[6], 0) - mean(&ts[6], 2) > mean(&ts[0], 0) - mean(&ts[0], 2) + 20.0);
    }

    #[test]
    fn normals_follow_the_height() {
        // Where the height rises along the row, the normal leans back (x < 0.5).
        let t = ground_texture(0, 128);
        let s = t.size;
        let mut agree = 0;
        let mut total = 0;
        for y in 0..s {
            for x in 1..s - 1 {
                let dh = t.albedo_height[y * s + x + 1][3] as i32
                    - t.albedo_height[y * s + x - 1][3] as i32;
                if dh.abs() > 6 {
                    total += 1;
                    let nx = t.normal_roughness[y * s + x][0] as i32 - 128;
                    if nx.signum() == -dh.signum() {
                        agree += 1;
                    }
                }
            }
        }
        assert!(
            total > 100 && agree as f64 > 0.97 * total as f64,
            "{agree}/{total}"
        );
    }
}
