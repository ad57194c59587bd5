//! Thermal erosion through the whole recipe path: noise terrain, then Thermal stages, as
//! `orogen bake` runs them.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::support::on_threads;
use orogen_core::eroders::thermal::{max_talus_excess, talus_tangents, TalusAngle};
use orogen_core::recipe::Stage;
use orogen_core::runner::{initial_world, run_recipe, Event};
use orogen_core::Recipe;

const RECIPE: &str = "(
    size: (97, 81),
    cell_size: 30.0,
    seed: 77,
    terrain: Noise(kind: RidgedMultifractal, octaves: 7, wavelength: 2500.0, amplitude: 400.0,
                   warp: (strength: 600.0, wavelength: 5000.0), faults: (count: 30, offset: 15.0)),
    stages: [
        Thermal(iterations: 40, talus: Noise(min_deg: 6.0, max_deg: 54.0, wavelength: 1500.0)),
        Thermal(iterations: 40, talus: Height(below_deg: 25.0, above_deg: 60.0, height: 300.0)),
    ],
)";

fn sum64(v: &[f32]) -> f64 {
    v.iter().map(|&x| x as f64).sum()
}

fn run(recipe: &Recipe, threads: usize) -> Vec<u32> {
    on_threads(threads, || {
        let cancel = AtomicBool::new(false);
        let out = run_recipe(recipe, Path::new("."), &cancel, &mut |_| {}).unwrap();
        out.world.height.data.iter().map(|v| v.to_bits()).collect()
    })
}

#[test]
fn recipe_run_is_identical_with_one_and_four_threads() {
    let recipe = Recipe::from_ron_str(RECIPE, "test").unwrap();
    recipe.validate().unwrap();
    assert_eq!(run(&recipe, 1), run(&recipe, 4));
}

#[test]
fn thermal_stages_conserve_mass_and_soften_the_noise_terrain() {
    let recipe = Recipe::from_ron_str(RECIPE, "test").unwrap();
    let start = initial_world(&recipe, Path::new(".")).unwrap();
    let cancel = AtomicBool::new(false);
    let mut steps = 0;
    let out = run_recipe(&recipe, Path::new("."), &cancel, &mut |e| {
        if let Event::Step { .. } = e {
            steps += 1
        }
    })
    .unwrap();
    assert!(steps > 2 && steps <= 80, "{steps}");
    let (a, b) = (sum64(&start.height.data), sum64(&out.world.height.data));
    // Heights are far from zero on average, so a relative check is meaningful.
    let scale: f64 = start.height.data.iter().map(|&v| v.abs() as f64).sum();
    assert!((a - b).abs() / scale < 1e-5, "{a} -> {b}");
    // The Constant(30°) excess of the terrain went down: slopes were relaxed.
    let w = start.grid().width;
    let tan = talus_tangents(&TalusAngle::Constant(30.0), &start.height.data, w, 30.0, 0);
    let before = max_talus_excess(&start.height.data, w, 30.0, &tan);
    let after = max_talus_excess(&out.world.height.data, w, 30.0, &tan);
    assert!(after < before, "{before} -> {after}");
}

#[test]
fn a_converged_constant_talus_stage_leaves_no_slope_over_its_angle() {
    let mut recipe = Recipe::from_ron_str(RECIPE, "test").unwrap();
    recipe.stages = vec![stage(
        "Thermal(iterations: 100000, talus: Constant(35.0), tolerance: 0.02)",
    )];
    let cancel = AtomicBool::new(false);
    let out = run_recipe(&recipe, Path::new("."), &cancel, &mut |_| {}).unwrap();
    let h = &out.world.height;
    let tan = talus_tangents(&TalusAngle::Constant(35.0), &h.data, h.grid.width, 30.0, 0);
    let excess = max_talus_excess(&h.data, h.grid.width, 30.0, &tan);
    assert!(excess <= 0.02, "{excess}");
}

/// Parses one stage through a whole recipe (the public parsing path).
fn stage(text: &str) -> Stage {
    let r = Recipe::from_ron_str(
        &format!("(size: (1, 1), cell_size: 1.0, seed: 0, terrain: Flat(0.0), stages: [{text}])"),
        "stage",
    )
    .unwrap();
    r.stages.into_iter().next().unwrap()
}

#[test]
fn degenerate_grids_run_without_panicking() {
    for size in ["(1, 1)", "(1, 9)", "(9, 1)", "(2, 2)"] {
        let text = format!(
            "(size: {size}, cell_size: 10.0, seed: 2, terrain: Noise(wavelength: 30.0, \
             amplitude: 100.0), stages: [Thermal(iterations: 20)])"
        );
        let recipe = Recipe::from_ron_str(&text, "t").unwrap();
        let start = initial_world(&recipe, Path::new(".")).unwrap();
        let cancel = AtomicBool::new(false);
        let out = run_recipe(&recipe, Path::new("."), &cancel, &mut |_| {}).unwrap();
        let (a, b) = (sum64(&start.height.data), sum64(&out.world.height.data));
        assert!((a - b).abs() <= 1e-3, "{size}: {a} -> {b}");
    }
}

#[test]
fn overrides_reach_thermal_fields_and_bad_angles_name_them() {
    let recipe = Recipe::from_ron_str(RECIPE, "test").unwrap();
    let r = recipe
        .apply_override("stages[1].talus.below_deg=10.0")
        .unwrap()
        .apply_override("stages[1].rate=0.25")
        .unwrap()
        .apply_override("stages[0].talus.min_deg=12.0")
        .unwrap();
    r.validate().unwrap();
    assert_eq!(
        r.stages[1],
        stage("Thermal(iterations: 40, rate: 0.25, talus: Height(below_deg: 10.0, above_deg: 60.0, height: 300.0))")
    );
    assert_eq!(
        r.stages[0],
        stage("Thermal(iterations: 40, talus: Noise(min_deg: 12.0, max_deg: 54.0, wavelength: 1500.0))")
    );
    for (set, field) in [
        (
            "stages[1].talus.above_deg=90.0",
            "stages[1].Thermal.talus.above_deg",
        ),
        (
            "stages[0].talus.max_deg=0.0",
            "stages[0].Thermal.talus.max_deg",
        ),
        ("stages[1].rate=0.0", "stages[1].Thermal.rate"),
    ] {
        let err = recipe
            .apply_override(set)
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("`{field}`")), "{set}: {err}");
    }
}

/// The generic per-node path (any neighbourhood) gives the raster fast path's bits on a
/// grid, for every talus kind, with borders and a height talus re-evaluated per step.
#[test]
fn generic_neighbourhood_path_matches_the_raster_path_bit_for_bit() {
    use orogen_core::eroders::thermal::{HeightTalus, NoiseTalus, Params, Thermal};
    use orogen_core::neighbourhood::{RasterGrid, WithOutlets};
    use orogen_core::Grid;
    let r = Recipe::from_ron_str(RECIPE, "t").unwrap();
    let world = initial_world(&r, Path::new(".")).unwrap();
    let grid: Grid = world.grid();
    let talus = [
        TalusAngle::Constant(30.0),
        TalusAngle::Noise(NoiseTalus::default()),
        TalusAngle::Height(HeightTalus {
            height: 200.0,
            ..Default::default()
        }),
    ];
    for t in talus {
        let params = Params {
            talus: t,
            rate: 0.6,
            tolerance: 0.0,
        };
        let raster = RasterGrid::new(grid, &[]);
        // The mask wrapper hides the raster, so the generic path runs.
        let generic = WithOutlets::new(raster.clone(), vec![false; grid.len()]).unwrap();
        let mut a = world.height.data.clone();
        let mut b = a.clone();
        let mut ta = Thermal::new(raster, params.clone(), 9, &a, "a").unwrap();
        let mut tb = Thermal::new(generic, params.clone(), 9, &b, "b").unwrap();
        for _ in 0..15 {
            assert_eq!(ta.step_heights(&mut a), tb.step_heights(&mut b));
        }
        assert!(a == b, "{:?}: generic path differs", params.talus);
        assert!(a != world.height.data);
    }
}

/// The raster path (rows in bands of 32, interiors vectorised, borders apart) gives the
/// generic path's bits on every shape: single rows and columns, grids without an interior,
/// band edges falling anywhere, on rough random heights and per-cell talus.
#[test]
fn raster_bands_match_the_generic_path_on_every_shape() {
    use orogen_core::eroders::thermal::{thermal_step, thermal_step_generic, ThermalBuffers};
    use orogen_core::neighbourhood::{RasterGrid, WithOutlets};
    use orogen_core::Grid;
    use rand::{Rng, SeedableRng};
    let shapes = [
        (1, 1),
        (1, 7),
        (7, 1),
        (2, 2),
        (2, 40),
        (3, 3),
        (40, 2),
        (5, 33),
        (70, 100),
        (33, 65),
    ];
    for (seed, (w, h)) in shapes.into_iter().enumerate() {
        let grid = Grid::new(w, h, 10.0).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed as u64);
        let start: Vec<f32> = (0..grid.len())
            .map(|_| rng.random_range(0.0..60.0f32))
            .collect();
        let tan: Vec<f32> = (0..grid.len())
            .map(|_| rng.random_range(0.2..1.5f32))
            .collect();
        let generic =
            WithOutlets::new(RasterGrid::new(grid, &[]), vec![false; grid.len()]).unwrap();
        let (mut a, mut b) = (start.clone(), start.clone());
        let (mut ba, mut bb) = (ThermalBuffers::default(), ThermalBuffers::default());
        for step in 0..6 {
            let ea = thermal_step(&mut a, w, 10.0, &tan, 0.7, 0.0, &mut ba);
            let eb = thermal_step_generic(&generic, &mut b, &tan, 0.7, 0.0, &mut bb);
            assert_eq!(
                ea.to_bits(),
                eb.to_bits(),
                "{w}x{h} step {step}: max excess"
            );
            let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same, "{w}x{h} step {step}: heights differ");
        }
        if w * h > 1 {
            assert!(
                a != start,
                "{w}x{h}: nothing moved, the test would prove nothing"
            );
        }
    }
}
