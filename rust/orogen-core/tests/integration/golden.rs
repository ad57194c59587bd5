//! Existing recipes give the same bytes as before the core was reshaped (issue 7): every
//! map of each recipe below is hashed and compared with the hash recorded on main at
//! 6c90840, before the change. Set `OROGEN_PRINT_HASHES=1` to print the hashes instead.
//!
//! Each recipe runs twice: with `river_curves: None`, which must give the bytes recorded
//! before river curves existed (issue #37), and with the default river curves carved
//! into the heights (hashes recorded when the carve came).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::{run_recipe, MapData, Recipe};

/// FNV-1a, 64 bits: stable across platforms and Rust versions.
fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= b as u64;
        *hash = hash.wrapping_mul(0x100_0000_01b3);
    }
}

/// One hash over every map's name, grid and bytes, in name order.
fn hash_recipe(text: &str, curves: bool) -> u64 {
    let mut recipe = Recipe::from_ron_str(text, "golden").unwrap();
    // The recorded runs had no fade at the borders (the default recipe took
    // `uplift_fade_m: 8000.0` later, a change of recipe, not of the core).
    recipe.uplift_fade_m = 0.0;
    if !curves {
        recipe.river_curves = None;
    }
    let out = run_recipe(
        &recipe,
        Path::new("."),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut maps = out.world.all_maps();
    maps.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, map) in maps {
        fnv(&mut h, name.as_bytes());
        let g = map.grid();
        fnv(&mut h, &(g.width as u64).to_le_bytes());
        fnv(&mut h, &(g.height as u64).to_le_bytes());
        match map {
            MapData::Scalar(m) => m.data.iter().for_each(|v| fnv(&mut h, &v.to_le_bytes())),
            MapData::Mask(m) => fnv(&mut h, &m.data),
            MapData::Labels(m) => m.data.iter().for_each(|v| fnv(&mut h, &v.to_le_bytes())),
            MapData::Index(m) => fnv(&mut h, &m.data),
            MapData::Rgba(m) => m.data.iter().for_each(|v| fnv(&mut h, v)),
            MapData::Vector(m) => m
                .data
                .iter()
                .flatten()
                .for_each(|v| fnv(&mut h, &v.to_le_bytes())),
        }
    }
    h
}

const SMALL: &str = "size: (97, 83), cell_size: 100.0, seed: 7,
    terrain: Noise(kind: Ridged, octaves: 5, wavelength: 3000.0, amplitude: 300.0,
        warp: (strength: 400.0), faults: (count: 6, offset: 20.0)),
    uplift: Noise(noise: (kind: Fbm, octaves: 2, wavelength: 9000.0), min: 0.0, max: 0.002),";

fn cases() -> Vec<(&'static str, String)> {
    let small = |stages: &str| format!("({SMALL} stages: [{stages}])");
    vec![
        ("default", orogen_core::recipe::DEFAULT_RECIPE.to_string()),
        (
            "carve_thermal_hydrology",
            small(
                "StreamPower(iterations: 20, dt: 5e4), Thermal(iterations: 15, talus: \
                 Constant(30.0)), Hydrology(river_threshold: 2e5)",
            ),
        ),
        (
            "fill_n2_rain_sea",
            small(
                "StreamPower(iterations: 15, dt: 2e4, n: 2.0, m: 1.0, k: Constant(1e-9), \
                 lakes: Fill(epsilon: 0.01), precipitation: Noise(noise: (octaves: 2, \
                 wavelength: 5000.0), min: 0.5, max: 1.5), outlets: (borders: [South], \
                 sea_level: 20.0), tolerance: 0.001)",
            ),
        ),
        (
            "none_lakes_height_talus",
            small(
                "StreamPower(iterations: 10, lakes: None, uplift_scale: 0.5, hydrology: \
                 false), Thermal(iterations: 25, talus: Height(below_deg: 20.0, above_deg: \
                 50.0, height: 200.0), rate: 0.7, tolerance: 0.0)",
            ),
        ),
        (
            "hydrology_fill_rain",
            small(
                "Hydrology(lakes: Fill(epsilon: 0.05), precipitation: Constant(0.8), \
                 outlets: (borders: [North, West]), epsilon: 0.01)",
            ),
        ),
    ]
}

/// Recorded on main at 6c90840 (before the reshaping). `default` and `fill_n2_rain_sea`
/// were re-recorded when drainage came to be summed in f64 (issue 11): their drainage
/// passes 2²⁴ ulps of a cell area (or is weighted by rain), so the f32 running sums they
/// had were rounded; with the sums rounded to f32 per addition again, all five hashes
/// are the 6c90840 ones. All five were re-recorded when the Perlin basis became Orogen's
/// own batched gradient noise (issue 12): every recipe here starts from Perlin noise.
const EXPECTED: &[(&str, u64)] = &[
    ("default", 0x76a094876e9b63ca),
    ("carve_thermal_hydrology", 0xf55352bede2ab5a9),
    ("fill_n2_rain_sea", 0xcc711ce6236ce7ce),
    ("none_lakes_height_talus", 0x9e83071701149c07),
    ("hydrology_fill_rain", 0x11f7b4ad614607e6),
];

/// With the default `river_curves` (issue #37): the heights carved along the rivers'
/// curves. `none_lakes_height_talus` writes no hydrology maps, so it has no rivers to
/// carve and kept its hash until the open border's held ring came to be lowered onto the
/// ground inside it with the curves (`stages::open_border`, issue #37), which re-recorded
/// it and `carve_thermal_hydrology` (the others' rings stood nowhere over their ground).
const EXPECTED_CURVES: &[(&str, u64)] = &[
    ("default", 0x0ff1c9ca6996c0ba),
    ("carve_thermal_hydrology", 0x16bd391ec9dcede7),
    ("fill_n2_rain_sea", 0x6ae4c81437e99a4a),
    ("none_lakes_height_talus", 0xa6f7889f545bdd40),
    ("hydrology_fill_rain", 0xca30330eb82ac5f4),
];

#[test]
fn existing_recipes_give_recorded_bytes() {
    let print = std::env::var_os("OROGEN_PRINT_HASHES").is_some();
    for (curves, expected) in [(false, EXPECTED), (true, EXPECTED_CURVES)] {
        for (name, text) in cases() {
            let got = hash_recipe(&text, curves);
            if print {
                println!("curves {curves}: (\"{name}\", 0x{got:016x}),");
                continue;
            }
            let want = expected
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("no recorded hash for {name}"))
                .1;
            assert_eq!(
                got, want,
                "recipe {name} (river curves {curves}): bytes differ from the recorded run"
            );
        }
    }
}
