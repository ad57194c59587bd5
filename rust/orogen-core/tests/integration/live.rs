//! Live erosion (`runner::run_live`, what the editor runs while uplift and rain are
//! painted) against the batch run, and the painted-map sources it and the CLI share.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use orogen_core::field::ScalarMap;
use orogen_core::recipe::ScalarSource;
use orogen_core::runner::{initial_world, run_live, run_recipe, run_stages, Event, LiveMaps};
use orogen_core::{Recipe, World};

fn recipe(hydrology: bool, precipitation: &str) -> Recipe {
    Recipe::from_ron_str(
        &format!(
            "(size: (48, 40), cell_size: 100.0, seed: 7,
              terrain: Noise(kind: Fbm, octaves: 4, wavelength: 2000.0, amplitude: 20.0),
              uplift: Noise(noise: (kind: Fbm, octaves: 2, wavelength: 3000.0), min: 0.0, max: 0.002),
              stages: [StreamPower(iterations: 12, dt: 50000.0, k: Constant(5e-6),
                                   hydrology: {hydrology}{precipitation})],
              // Live erosion shows the stage's own heights; a bake then carves the
              // rivers' curves into them (issue #37), which is not what is compared here.
              river_curves: None)"
        ),
        "test",
    )
    .unwrap()
}

/// `run_live` from the recipe's initial world, stopped after `steps` steps; `maps` is
/// handed over before step `at`.
fn live(recipe: &Recipe, steps: u32, maps: Option<(u32, LiveMaps)>) -> World {
    let mut world = initial_world(recipe, Path::new(".")).unwrap();
    let stop = AtomicBool::new(false);
    let done = std::cell::Cell::new(0u32);
    let mut maps = maps;
    let ran = run_live(
        recipe,
        Path::new("."),
        &mut world,
        &stop,
        &mut || match &maps {
            Some((at, _)) if done.get() == *at => maps.take().map(|(_, m)| m),
            _ => None,
        },
        &mut |e| {
            if let Event::Step { iteration, .. } = e {
                done.set(iteration);
                if iteration == steps {
                    stop.store(true, Ordering::SeqCst);
                }
            }
        },
    )
    .unwrap();
    assert_eq!(ran, steps);
    world
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn live_erosion_is_the_batch_stage_step_for_step() {
    for hydrology in [false, true] {
        let r = recipe(hydrology, "");
        let batch = run_recipe(&r, Path::new("."), &AtomicBool::new(false), &mut |_| {})
            .unwrap()
            .world;
        let live = live(&r, 12, None);
        assert_eq!(bits(&batch.height.data), bits(&live.height.data));
        // Live always ends with the hydrology maps of where it stopped.
        let names = |w: &World| w.maps.keys().cloned().collect::<Vec<_>>();
        assert!(live.maps.contains_key("drainage"), "{:?}", names(&live));
        if hydrology {
            assert_eq!(names(&batch), names(&live));
            for (name, map) in &batch.maps {
                assert_eq!(Some(map), live.maps.get(name), "{name}");
            }
        }
    }
}

/// A recipe's `Hydrology` stage says what a river is (its threshold) for the terrain live
/// erosion keeps, as for the recipe's bake: the live maps equal the batch run's, whose
/// last stage is that `Hydrology`, and they are not the stream power's own (1 km²).
#[test]
fn live_erosion_keeps_the_rivers_of_the_recipes_hydrology_stage() {
    let base = recipe(true, "");
    let mut r = base.clone();
    r.stages.push(orogen_core::recipe::Stage::Hydrology(
        orogen_core::stages::hydrology::HydrologyParams {
            river_threshold: 2.5e6,
            ..Default::default()
        },
    ));
    let never = AtomicBool::new(false);
    let batch = run_recipe(&r, Path::new("."), &never, &mut |_| {})
        .unwrap()
        .world;
    let kept_world = live(&r, 12, None);
    assert_eq!(bits(&batch.height.data), bits(&kept_world.height.data));
    for (name, map) in &batch.maps {
        assert_eq!(Some(map), kept_world.maps.get(name), "{name}");
    }
    let river_cells = |w: &World| match w.maps.get("rivers") {
        Some(orogen_core::world::MapData::Mask(m)) => m.data.iter().filter(|&&v| v != 0).count(),
        _ => panic!("no rivers map"),
    };
    let own = live(&base, 12, None);
    let (kept, all) = (river_cells(&kept_world), river_cells(&own));
    assert!(
        kept > 0 && kept < all,
        "rivers: {kept} with the stage's threshold, {all} without"
    );
}

/// The kept terrain's rivers are the recipe's river curves, carved, as its bake's: heights,
/// maps and curves equal the batch run's (the paint scene's plain drew its rivers from the
/// cell mask, in straight D8 reaches with right-angle bends). A second run from the kept
/// terrain makes its own curves, not the last stop's.
#[test]
fn live_erosion_keeps_the_recipes_river_curves() {
    let mut r = recipe(false, "");
    r.river_curves = Some(Default::default());
    r.stages.push(orogen_core::recipe::Stage::Hydrology(
        orogen_core::stages::hydrology::HydrologyParams {
            river_threshold: 2.5e6,
            ..Default::default()
        },
    ));
    let never = AtomicBool::new(false);
    let batch = run_recipe(&r, Path::new("."), &never, &mut |_| {})
        .unwrap()
        .world;
    let mut kept = live(&r, 12, None);
    let curves = batch.rivers.clone().expect("the bake has river curves");
    assert!(!curves.is_empty());
    assert_eq!(Some(&curves), kept.rivers.as_ref());
    assert_eq!(bits(&batch.height.data), bits(&kept.height.data));
    for (name, map) in &batch.maps {
        assert_eq!(Some(map), kept.maps.get(name), "{name}");
    }
    // On from the kept terrain, 12 more steps: new curves, of the terrain where it stopped.
    let stop = AtomicBool::new(false);
    run_live(
        &r,
        Path::new("."),
        &mut kept,
        &stop,
        &mut || None,
        &mut |e| {
            if let Event::Step { iteration: 12, .. } = e {
                stop.store(true, Ordering::SeqCst);
            }
        },
    )
    .unwrap();
    let again = kept.rivers.clone().expect("curves after the second run");
    assert_ne!(again, curves, "the second run kept the first run's curves");
}

#[test]
fn painted_maps_take_over_from_the_next_step() {
    let r = recipe(false, ", precipitation: Some(Constant(1.5))");
    // Batch: 5 steps, then twice the uplift and a rain map, then 7 more steps.
    let mut world = initial_world(&r, Path::new(".")).unwrap();
    let five = r.clone().apply_override("stages[0].iterations=5").unwrap();
    let seven = r.clone().apply_override("stages[0].iterations=7").unwrap();
    let never = AtomicBool::new(false);
    run_stages(
        &mut world,
        &five.stages,
        Path::new("."),
        &never,
        &mut |_| {},
    )
    .unwrap();
    let grid = world.grid();
    let uplift = ScalarMap {
        grid,
        data: world.uplift.data.iter().map(|u| u * 2.0).collect(),
    };
    let rain = ScalarMap {
        grid,
        data: (0..grid.len())
            .map(|i| 0.5 + (i % 7) as f32 * 0.25)
            .collect(),
    };
    world.uplift = uplift.clone();
    let mut rest = seven.clone();
    if let orogen_core::recipe::Stage::StreamPower(p) = &mut rest.stages[0] {
        p.precipitation = Some(ScalarSource::Values(Arc::new(rain.clone())));
    }
    run_stages(
        &mut world,
        &rest.stages,
        Path::new("."),
        &never,
        &mut |_| {},
    )
    .unwrap();

    let maps = LiveMaps {
        uplift: Some(uplift),
        precipitation: Some(rain),
    };
    let live = live(&r, 12, Some((5, maps)));
    assert_eq!(bits(&world.height.data), bits(&live.height.data));
    // And the painted maps did change the outcome.
    let plain = self::live(&r, 12, None);
    assert_ne!(bits(&plain.height.data), bits(&live.height.data));
}

#[test]
fn a_painted_map_saved_as_float_exr_is_read_back_exactly() {
    let dir = std::env::temp_dir().join(format!("orogen-live-exr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r = recipe(false, "");
    let world = initial_world(&r, Path::new(".")).unwrap();
    // Values no 16-bit PNG holds: tiny, irregular, negative (subsidence).
    let painted = ScalarMap {
        grid: world.grid(),
        data: world
            .uplift
            .data
            .iter()
            .enumerate()
            .map(|(i, u)| u * 1.37 - 1e-5 * (i % 3) as f32)
            .collect(),
    };
    orogen_core::io::exr::write_exr(&dir.join("uplift.exr"), &painted).unwrap();
    let from_file = ScalarSource::Image {
        path: "uplift.exr".into(),
        min: 0.0,
        max: 1.0,
    }
    .resolve(world.grid(), 1, &dir)
    .unwrap();
    let in_memory = ScalarSource::Values(Arc::new(painted.clone()))
        .resolve(world.grid(), 1, Path::new("."))
        .unwrap();
    assert_eq!(bits(&from_file.data), bits(&painted.data));
    assert_eq!(bits(&in_memory.data), bits(&painted.data));
    // And a recipe baked from the file equals one given the map in memory.
    let mut a = r.clone();
    a.uplift = ScalarSource::Image {
        path: "uplift.exr".into(),
        min: 0.0,
        max: 1.0,
    };
    let mut b = r.clone();
    b.uplift = ScalarSource::Values(Arc::new(painted));
    let never = AtomicBool::new(false);
    let wa = run_recipe(&a, &dir, &never, &mut |_| {}).unwrap().world;
    let wb = run_recipe(&b, Path::new("."), &never, &mut |_| {})
        .unwrap()
        .world;
    assert_eq!(bits(&wa.height.data), bits(&wb.height.data));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_painted_map_with_nan_or_negative_rain_is_refused_by_name() {
    let mut r = recipe(false, "");
    let grid = r.grid().unwrap();
    let mut bad = ScalarMap::filled(grid, 0.001);
    bad.data[50] = f32::NAN;
    r.uplift = ScalarSource::Values(Arc::new(bad));
    let e = r.validate().unwrap_err().to_string();
    assert!(e.contains("uplift") && e.contains("NaN"), "{e}");
    let mut r = recipe(false, "");
    if let orogen_core::recipe::Stage::StreamPower(p) = &mut r.stages[0] {
        p.precipitation = Some(ScalarSource::Values(Arc::new(ScalarMap::filled(
            grid, -1.0,
        ))));
    }
    let e = r.validate().unwrap_err().to_string();
    assert!(e.contains("precipitation") && e.contains(">= 0"), "{e}");
}

/// The steepest slope between 4-neighbours of a world's heights, degrees.
fn steepest_deg(world: &World) -> f32 {
    let g = world.grid();
    let h = &world.height.data;
    let mut worst = 0.0f32;
    for y in 0..g.height {
        for x in 0..g.width {
            let i = y * g.width + x;
            if x + 1 < g.width {
                worst = worst.max(((h[i] - h[i + 1]).abs() / g.dx()).atan().to_degrees());
            }
            if y + 1 < g.height {
                worst = worst.max(((h[i] - h[i + g.width]).abs() / g.dy()).atan().to_degrees());
            }
        }
    }
    worst
}

#[test]
fn live_painting_relaxes_slopes_with_the_recipes_thermal_stage() {
    // Issue #37: painted uplift grows a range with foothills, not a spike per cell. A narrow
    // band of strong painted uplift, live for 30 steps, with and without a Thermal stage.
    let text = |thermal: &str| {
        format!(
            "(size: (48, 40), cell_size: 100.0, seed: 7,
              terrain: Noise(kind: Fbm, octaves: 4, wavelength: 2000.0, amplitude: 20.0),
              stages: [StreamPower(iterations: 12, dt: 50000.0, k: Constant(5e-6)){thermal}],
              river_curves: None)"
        )
    };
    let base = Recipe::from_ron_str(&text(""), "test").unwrap();
    let with_thermal = Recipe::from_ron_str(
        &text(", Thermal(iterations: 30, talus: Constant(35.0))"),
        "test",
    )
    .unwrap();
    assert_eq!(with_thermal.stages.len(), 2);
    let grid = base.grid().unwrap();
    let paint = || {
        let mut u = ScalarMap::filled(grid, 0.0);
        for y in 15..25 {
            for x in 22..25 {
                u.data[y * grid.width + x] = 0.002;
            }
        }
        LiveMaps {
            uplift: Some(u),
            precipitation: None,
        }
    };
    let bare = live(&base, 30, Some((0, paint())));
    let relaxed = live(&with_thermal, 30, Some((0, paint())));
    let (s_bare, s_relaxed) = (steepest_deg(&bare), steepest_deg(&relaxed));
    // Without a hillslope process the painted band stands as a wall; with it, slopes stay
    // near the talus angle.
    assert!(
        s_bare > 60.0,
        "without thermal the band's walls are {s_bare:.1}°"
    );
    assert!(
        s_relaxed < 40.0,
        "with thermal the steepest slope is {s_relaxed:.1}°"
    );
    // Both grew a range from the paint (the band rose hundreds of metres over the plain of
    // ±20 m either way).
    let top = |w: &World| w.height.data.iter().copied().fold(f32::MIN, f32::max);
    assert!(
        top(&bare) > 200.0 && top(&relaxed) > 200.0,
        "{} and {}",
        top(&bare),
        top(&relaxed)
    );
}
