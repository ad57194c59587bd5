//! Noise terrain and scalar sources through the recipe path: overrides, uplift from noise,
//! and the default recipe's terrain.

use std::path::Path;

use orogen_core::generators::noise::{generate, NoiseKind, NoiseParams};
use orogen_core::runner::initial_world;
use orogen_core::{Grid, Recipe};

#[test]
fn overrides_reach_noise_fields_and_bad_values_name_them() {
    let base = Recipe::from_ron_str(
        "(size: (33, 33), cell_size: 100.0, seed: 1, terrain: Noise(octaves: 6))",
        "t",
    )
    .unwrap();
    let r = base.apply_override("terrain.kind=Ridged").unwrap();
    let r = r.apply_override("terrain.warp=(strength: 300.0)").unwrap();
    r.validate().unwrap();
    let w = initial_world(&r, Path::new(".")).unwrap();
    let (lo, _) = w.height.min_max();
    assert!(
        lo >= 0.0,
        "ridged noise with offset 0 is never below 0: {lo}"
    );
    let bad = base.apply_override("terrain.octaves=0").unwrap();
    let err = bad.validate().unwrap_err().to_string();
    assert!(err.contains("terrain.Noise.octaves"), "{err}");
    let bad = base.apply_override("terrain.lacunarity=-1.0").unwrap();
    let err = bad.validate().unwrap_err().to_string();
    assert!(err.contains("terrain.Noise.lacunarity"), "{err}");
}

#[test]
fn uplift_from_noise_spans_its_range_and_differs_from_the_terrain() {
    let r = Recipe::from_ron_str(
        "(size: (40, 30), cell_size: 200.0, seed: 5, terrain: Noise(wavelength: 4000.0), \
         uplift: Noise(noise: (wavelength: 4000.0), min: 0.0005, max: 0.002))",
        "t",
    )
    .unwrap();
    let w = initial_world(&r, Path::new(".")).unwrap();
    let (lo, hi) = w.uplift.min_max();
    assert!(
        (lo - 0.0005).abs() < 1e-9 && (hi - 0.002).abs() < 1e-9,
        "{lo}..{hi}"
    );
    // The uplift noise uses its own seed: it is not the terrain rescaled.
    let (tlo, thi) = w.height.min_max();
    let differs = w.height.data.iter().zip(&w.uplift.data).any(|(h, u)| {
        let a = (h - tlo) / (thi - tlo);
        let b = (u - 0.0005) / 0.0015;
        (a - b).abs() > 0.05
    });
    assert!(differs);
}

#[test]
fn default_recipe_terrain_is_bounded_by_its_amplitudes() {
    let r = Recipe::default_recipe();
    let w = initial_world(&r, Path::new(".")).unwrap();
    let p = match &r.terrain {
        orogen_core::recipe::TerrainSource::Noise(p) => p.clone(),
        other => panic!("default terrain is {other:?}"),
    };
    let bound: f64 = (0..p.octaves)
        .map(|i| (p.amplitude as f64 * (p.persistence as f64).powi(i as i32)).abs())
        .sum();
    let (lo, hi) = w.height.min_max();
    let off = p.offset as f64;
    if p.kind == NoiseKind::Fbm && p.faults.is_none() {
        assert!(lo as f64 >= off - bound - 1e-3 && hi as f64 <= off + bound + 1e-3);
    }
    assert!(hi > lo);
}

#[test]
fn one_grid_point_and_one_row_are_fine() {
    for (w, h) in [(1, 1), (1, 17), (17, 1)] {
        let g = Grid::new(w, h, 10.0).unwrap();
        let m = generate(&NoiseParams::default(), g, 3).unwrap();
        assert_eq!(m.data.len(), w * h);
        assert!(m.data.iter().all(|v| v.is_finite()));
    }
}
