//! The memory estimate that refuses oversized bakes before they start
//! (`runner::estimate_bytes`) must bound what a bake really allocates: this binary
//! counts its own heap and runs and bakes each stage kind at 513², checking the peak per
//! cell against the estimate per cell (its fixed 64 MiB allowance left out).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::runner::{estimate_bytes_in, run_recipe};
use orogen_core::Recipe;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

/// Heap peak of running and baking `recipe` (paths against `base_dir`), bytes above what
/// was allocated before.
fn peak_of(recipe: &Recipe, base_dir: &Path) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let base = counting_alloc::start();
    let cancel = AtomicBool::new(false);
    let out = run_recipe(recipe, base_dir, &cancel, &mut |_| {}).unwrap();
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

/// Checks that the estimate (its fixed 64 MiB left out) bounds the measured peak and is
/// not so loose that it refuses what would fit; `cells` are the world's. A failure is
/// pushed to `failed`, so one run shows every case's figures.
fn check(what: &str, recipe: &Recipe, base_dir: &Path, cells: f64, failed: &mut Vec<String>) {
    let peak = peak_of(recipe, base_dir) as f64;
    let estimate = (estimate_bytes_in(recipe, base_dir) - (64 << 20)) as f64;
    println!(
        "{what}: peak {:.1} B/cell, estimate {:.1} B/cell ({:.1} / {:.1} MiB)",
        peak / cells,
        estimate / cells,
        peak / 1048576.0,
        estimate / 1048576.0
    );
    if peak > estimate {
        failed.push(format!("{what}: peak {peak} > estimate {estimate} B"));
    }
    // Not so loose that it refuses what would fit.
    if estimate > 4.0 * peak.max(16.0 * cells) {
        failed.push(format!("{what}: estimate {estimate} ≫ peak {peak} B"));
    }
}

// One test, so no other test's allocations land in the count.
#[test]
fn the_estimate_bounds_each_stage_kinds_peak() {
    let plain = Recipe::default_recipe()
        .apply_override("size=(513,513)")
        .unwrap();
    // Fuzz finding #39.3: on flat terrain every cell is a pit at first, and stream power
    // peaked at 3 times its estimate.
    let flat = plain.apply_override("terrain=Flat(0.0)").unwrap();
    let strata = Recipe::built_in("strata")
        .unwrap()
        .apply_override("size=(513,513)")
        .unwrap();
    let cases: [(&Recipe, &str); 12] = [
        (&plain, "[StreamPower(iterations: 2)]"),
        (&flat, "[StreamPower(iterations: 2)]"),
        (&flat, "[StreamPower(iterations: 2, lakes: Fill())]"),
        (&plain, "[Thermal(iterations: 2)]"),
        (&plain, "[Hydrology()]"),
        (&flat, "[Hydrology()]"),
        (&plain, "[Hydraulic(iterations: 2)]"),
        (&plain, "[Wind(iterations: 2)]"),
        (&strata, "[Hydraulic(iterations: 2)]"),
        (&strata, "[LayeredThermal(iterations: 2)]"),
        (&strata, "[Wind(iterations: 2)]"),
        (
            &strata,
            "[TimeLoop(iterations: 3, processes: [Hydraulic(), Wind(), LayeredThermal(), StreamPower()])]",
        ),
    ];
    let here = Path::new(".");
    let mut failed = Vec::new();
    for (base, stages) in cases {
        let recipe = base.apply_override(&format!("stages={stages}")).unwrap();
        let name = if base.strata.is_some() {
            "strata"
        } else if base == &flat {
            "flat"
        } else {
            "plain"
        };
        check(
            &format!("{name} {stages}"),
            &recipe,
            here,
            513.0 * 513.0,
            &mut failed,
        );
    }

    // #39.3: a heightmap brings its own size (a 2049² PNG passed `--max-memory 100M` for a
    // recipe of 65², and peaked at 666 MiB).
    let dir = tempfile::tempdir().unwrap();
    let grid = orogen_core::field::Grid::new(513, 385, 100.0).unwrap();
    let heights: Vec<f32> = (0..grid.len())
        .map(|i| orogen_core::math::sin((i % 513) as f32 * 0.05) * 40.0 + (i / 513) as f32 * 0.3)
        .collect();
    let map = orogen_core::field::Field::from_vec(grid, heights, "test").unwrap();
    orogen_core::io::png16::write_png16(&dir.path().join("dem.png"), &map).unwrap();
    let dem = plain
        .apply_override("size=(65,65)")
        .unwrap()
        .apply_override("terrain=Heightmap(path: \"dem.png\")")
        .unwrap()
        .apply_override("stages=[StreamPower(iterations: 2)]")
        .unwrap();
    check(
        "heightmap 513x385",
        &dem,
        dir.path(),
        513.0 * 385.0,
        &mut failed,
    );

    // #39.3: the stage count (100,000 stages wrote an 83 MB bake.json).
    let many = format!(
        "stages=[{}]",
        ["StreamPower(iterations: 1)"; 5000].join(", ")
    );
    let many = plain
        .apply_override("size=(17,17)")
        .unwrap()
        .apply_override(&many)
        .unwrap();
    check(
        "5000 stages at 17x17",
        &many,
        here,
        17.0 * 17.0,
        &mut failed,
    );
    assert!(failed.is_empty(), "{failed:#?}");
}
