//! The memory estimate that refuses oversized bakes before they start
//! (`runner::estimate_bytes`) must bound what a bake really allocates: this binary
//! counts its own heap and runs and bakes each stage kind at 513², checking the peak per
//! cell against the estimate per cell (its fixed 64 MiB allowance left out).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::runner::{estimate_bytes, run_recipe};
use orogen_core::Recipe;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

/// Heap peak of running and baking `recipe`, bytes above what was allocated before.
fn peak_of(recipe: &Recipe) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let base = counting_alloc::start();
    let cancel = AtomicBool::new(false);
    let out = run_recipe(recipe, Path::new("."), &cancel, &mut |_| {}).unwrap();
    orogen_core::bake::write_bake(
        &dir.path().join("o"),
        recipe,
        &out.world,
        &out.timings,
        None,
    )
    .unwrap();
    drop(out);
    counting_alloc::peak_since(base)
}

// One test, so no other test's allocations land in the count.
#[test]
fn the_estimate_bounds_each_stage_kinds_peak() {
    let plain = Recipe::default_recipe()
        .apply_override("size=(513,513)")
        .unwrap();
    let strata = Recipe::built_in("strata")
        .unwrap()
        .apply_override("size=(513,513)")
        .unwrap();
    let cases: [(&Recipe, &str); 8] = [
        (&plain, "[StreamPower(iterations: 2)]"),
        (&plain, "[Thermal(iterations: 2)]"),
        (&plain, "[Hydrology()]"),
        (&plain, "[Hydraulic(iterations: 2)]"),
        (&strata, "[Hydraulic(iterations: 2)]"),
        (&strata, "[LayeredThermal(iterations: 2)]"),
        (&strata, "[Wind(iterations: 2)]"),
        (
            &strata,
            "[TimeLoop(iterations: 3, processes: [Hydraulic(), Wind(), LayeredThermal(), StreamPower()])]",
        ),
    ];
    let cells = 513.0 * 513.0;
    for (base, stages) in cases {
        let recipe = base.apply_override(&format!("stages={stages}")).unwrap();
        let peak = peak_of(&recipe) as f64 / cells;
        let estimate = (estimate_bytes(&recipe) - (64 << 20)) as f64 / cells;
        println!(
            "{} {stages}: peak {peak:.1} B/cell, estimate {estimate:.0} B/cell",
            if base.strata.is_some() {
                "strata"
            } else {
                "plain"
            }
        );
        assert!(
            peak <= estimate,
            "{stages}: {peak:.1} > {estimate:.0} B/cell"
        );
        // Not so loose that it refuses what would fit.
        assert!(
            estimate <= 4.0 * peak.max(16.0),
            "{stages}: {estimate:.0} ≫ {peak:.1}"
        );
    }
}
