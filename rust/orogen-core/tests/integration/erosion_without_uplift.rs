//! Erosion without uplift on an existing terrain (issue: "a recipe may start from a heightmap
//! or noise with u = 0, small time steps and few iterations"): rivers only cut, never build.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::runner::{initial_world, run_stages};
use orogen_core::world::names;
use orogen_core::{MapData, Recipe};

fn fractal_recipe(stages: &str) -> Recipe {
    let text = format!(
        "(size: (96, 80), cell_size: 50.0, seed: 11,
          terrain: Noise(kind: Fbm, octaves: 7, wavelength: 3000.0, amplitude: 400.0, offset: 400.0),
          uplift: Constant(0.002),
          stages: [{stages}])"
    );
    let recipe = Recipe::from_ron_str(&text, "test").unwrap();
    recipe.validate().unwrap();
    recipe
}

#[test]
fn with_zero_uplift_no_cell_rises_and_rivers_appear() {
    // The recipe has an uplift map, but the stage scales it to zero.
    let recipe = fractal_recipe(
        "StreamPower(iterations: 5, dt: 2000.0, k: Constant(2e-5), uplift_scale: 0.0)",
    );
    let mut world = initial_world(&recipe, Path::new(".")).unwrap();
    let before = world.height.data.clone();
    let cancel = AtomicBool::new(false);
    run_stages(
        &mut world,
        &recipe.stages,
        Path::new("."),
        &cancel,
        &mut |_| {},
    )
    .unwrap();
    let after = &world.height.data;

    let mut lowered = 0usize;
    for (i, (&b, &a)) in before.iter().zip(after).enumerate() {
        assert!(a <= b, "cell {i} rose from {b} to {a} without uplift");
        if a < b {
            lowered += 1;
        }
    }
    assert!(
        lowered > before.len() / 10,
        "only {lowered} cells were eroded"
    );
    let vb: f64 = before.iter().map(|&h| h as f64).sum();
    let va: f64 = after.iter().map(|&h| h as f64).sum();
    assert!(va < vb);

    // The stage wrote a river network that drains the whole domain to the borders.
    let Some(MapData::Mask(rivers)) = world.maps.get(names::RIVERS) else {
        panic!("no rivers map")
    };
    assert!(rivers.data.iter().any(|&r| r != 0), "no river cell");
    let Some(MapData::Labels(basins)) = world.maps.get(names::BASINS) else {
        panic!("no basins map")
    };
    assert!(basins.data.iter().any(|&b| b != basins.data[0]));
}

#[test]
fn unknown_stage_fields_are_rejected() {
    let text = "(size: (8, 8), cell_size: 1.0, seed: 1, terrain: Flat(0.0),
                 stages: [StreamPower(iterations: 5, uplift_scal: 0.0)])";
    let err = Recipe::from_ron_str(text, "test").unwrap_err().to_string();
    assert!(err.contains("uplift_scal"), "{err}");
}
