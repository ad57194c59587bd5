//! No stage writes NaN or inf: each reproducer from the hardening issue (#11) overflows
//! 32-bit floats somewhere, and the run must fail with a message naming the stage and the
//! recipe fields that drive it, instead of writing the values with success.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::runner::run_recipe;
use orogen_core::{OrogenError, Recipe};

/// Runs `ron` (with paths relative to `dir`); returns the error message.
fn failure(ron: &str, dir: &Path) -> String {
    let recipe = Recipe::from_ron_str(ron, "test").expect("the recipe parses");
    let cancel = AtomicBool::new(false);
    match run_recipe(&recipe, dir, &cancel, &mut |_| {}) {
        Ok(out) => panic!(
            "the run succeeded; first non-finite value: {:?}",
            out.world.first_non_finite()
        ),
        Err(e @ OrogenError::Numerical { .. }) => e.to_string(),
        Err(e) => panic!("expected a numerical error, got: {e}"),
    }
}

fn assert_names(msg: &str, needles: &[&str]) {
    for n in needles {
        assert!(msg.contains(n), "`{n}` missing from: {msg}");
    }
}

#[test]
fn huge_precipitation_fails_in_hydrology() {
    let msg = failure(
        "(size: (1, 1), cell_size: 100.0, seed: 1, terrain: Flat(0.0), \
         stages: [Hydrology(precipitation: Constant(1e35))])",
        Path::new("."),
    );
    assert_names(
        &msg,
        &[
            "stages[0].Hydrology",
            "inf",
            "`drainage`",
            "`precipitation`",
        ],
    );
}

#[test]
fn an_overflow_caught_mid_stage_names_the_stage_not_a_buffer() {
    // The first step's uplift overflows the heights; the second step's routing finds
    // them, which used to say only "invalid value for `heights`: node 34 is inf".
    let msg = failure(
        "(size: (33, 33), cell_size: 100.0, seed: 1, terrain: Flat(0.0), \
         uplift: Constant(1e38), stages: [StreamPower(iterations: 3)])",
        Path::new("."),
    );
    assert_names(
        &msg,
        &["stages[0].StreamPower", "inf", "`height`", "`uplift`"],
    );
    assert!(!msg.contains("`heights`"), "{msg}");
}

#[test]
fn huge_negative_uplift_fails_in_stream_power() {
    let msg = failure(
        "(size: (5, 5), cell_size: 100.0, seed: 1, terrain: Flat(0.0), \
         uplift: Constant(-1e34), stages: [StreamPower(iterations: 1, hydrology: false)])",
        Path::new("."),
    );
    assert_names(
        &msg,
        &["stages[0].StreamPower", "-inf", "`height`", "`uplift`"],
    );
}

#[test]
fn extreme_heightmap_fails_in_thermal() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = [3e38f32, -3e38]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(dir.path().join("h.f32"), bytes).unwrap();
    let msg = failure(
        "(size: (2, 1), cell_size: 1.0, seed: 1, \
         terrain: Heightmap(path: \"h.f32\", raw_size: (2, 1)), stages: [Thermal()])",
        dir.path(),
    );
    assert_names(&msg, &["stages[0].Thermal", "NaN", "`height`", "`terrain`"]);
}

#[test]
fn huge_terrain_under_uplift_fails_in_stream_power() {
    let msg = failure(
        "(size: (5, 5), cell_size: 100.0, seed: 1, terrain: Flat(3e38), \
         uplift: Constant(-1e34), stages: [StreamPower(iterations: 1)])",
        Path::new("."),
    );
    assert_names(&msg, &["stages[0].StreamPower", "`uplift`"]);
}

#[test]
fn ordinary_runs_pass_the_check() {
    // The check must not refuse ordinary work: the default recipe, small and short.
    let recipe = Recipe::default_recipe()
        .apply_override("size=(48,40)")
        .unwrap()
        .apply_override("stages[0].iterations=4")
        .unwrap();
    let cancel = AtomicBool::new(false);
    let out = run_recipe(&recipe, Path::new("."), &cancel, &mut |_| {}).unwrap();
    assert_eq!(out.world.first_non_finite(), None);
}
