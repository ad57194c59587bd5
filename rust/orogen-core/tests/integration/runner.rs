//! The stage runner: event order, cancel within one step, validation before work.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use orogen_core::runner::{initial_world, initial_world_cancellable, run_recipe, Event};
use orogen_core::{OrogenError, Recipe};

fn small_recipe() -> Recipe {
    Recipe::default_recipe()
        .apply_override("size=(48,40)")
        .unwrap()
        .apply_override("stages[0].iterations=6")
        .unwrap()
        .apply_override("stages[1].iterations=4")
        .unwrap()
}

#[derive(Debug, PartialEq)]
enum Seen {
    Started(usize),
    Progress(usize, f32),
    Step(usize, u32),
    Finished(usize),
}

#[test]
fn events_arrive_in_stage_order_with_monotone_progress() {
    let recipe = small_recipe();
    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    let out = run_recipe(&recipe, Path::new("."), &cancel, &mut |e| match e {
        Event::StageStarted {
            index, stage_count, ..
        } => {
            assert_eq!(stage_count, recipe.stages.len());
            seen.push(Seen::Started(index))
        }
        Event::Progress {
            index, fraction, ..
        } => seen.push(Seen::Progress(index, fraction)),
        Event::Step {
            index,
            iteration,
            world,
            ..
        } => {
            assert!(world.height.data.iter().all(|h| h.is_finite()));
            seen.push(Seen::Step(index, iteration))
        }
        Event::StageFinished { index, .. } => seen.push(Seen::Finished(index)),
        Event::Setup { name, .. } => panic!("a recipe without a planet reported setup `{name}`"),
    })
    .unwrap();
    // One timing for the initial terrain, one per stage, and one for the river curves
    // carved after them (issue #37).
    assert!(out.world.rivers.is_some());
    assert_eq!(out.timings.len(), recipe.stages.len() + 2);
    assert_eq!(out.timings.last().unwrap().stage, "river curves");
    for stage in 0..recipe.stages.len() {
        let start = seen
            .iter()
            .position(|s| *s == Seen::Started(stage))
            .unwrap();
        let end = seen
            .iter()
            .position(|s| *s == Seen::Finished(stage))
            .unwrap();
        assert!(start < end);
        // Everything between belongs to this stage; fractions never go back; steps rise.
        let mut last_fraction = 0.0;
        let mut last_step = 0;
        for s in &seen[start + 1..end] {
            match *s {
                Seen::Progress(i, f) => {
                    assert_eq!(i, stage);
                    assert!(
                        f >= last_fraction,
                        "progress went back: {f} < {last_fraction}"
                    );
                    assert!((0.0..=1.0).contains(&f));
                    last_fraction = f;
                }
                Seen::Step(i, it) => {
                    assert_eq!(i, stage);
                    assert!(it > last_step);
                    last_step = it;
                }
                ref other => panic!("unexpected event inside stage {stage}: {other:?}"),
            }
        }
        assert!(last_step >= 1, "stage {stage} reported no step");
        if stage + 1 < recipe.stages.len() {
            assert!(
                end < seen
                    .iter()
                    .position(|s| *s == Seen::Started(stage + 1))
                    .unwrap()
            );
        }
    }
}

#[test]
fn cancel_stops_within_one_step() {
    let recipe = Recipe::default_recipe()
        .apply_override("size=(64,64)")
        .unwrap()
        .apply_override("stages[0].iterations=500")
        .unwrap();
    let cancel = AtomicBool::new(false);
    let mut steps_after_cancel = 0;
    let mut later_stage_started = false;
    let result = run_recipe(&recipe, Path::new("."), &cancel, &mut |e| match e {
        Event::Step { iteration, .. } => {
            if cancel.load(Ordering::Relaxed) {
                steps_after_cancel += 1;
            }
            if iteration == 3 {
                cancel.store(true, Ordering::Relaxed);
            }
        }
        Event::StageStarted { index, .. } if index > 0 => later_stage_started = true,
        _ => {}
    });
    assert!(
        matches!(result, Err(OrogenError::Cancelled)),
        "{:?}",
        result.err()
    );
    assert_eq!(steps_after_cancel, 0, "a step ran after cancel");
    assert!(!later_stage_started);
}

#[test]
fn a_set_cancel_flag_stops_before_any_stage() {
    let recipe = small_recipe();
    let cancel = AtomicBool::new(true);
    let mut started = 0;
    let result = run_recipe(&recipe, Path::new("."), &cancel, &mut |e| {
        if let Event::StageStarted { .. } = e {
            started += 1
        }
    });
    assert!(matches!(result, Err(OrogenError::Cancelled)));
    assert_eq!(started, 0);
}

#[test]
fn a_set_cancel_flag_stops_the_initial_terrain() {
    // A noise terrain looks at the flag row by row, so a run cancelled (or a node freed)
    // while a large terrain is being generated does not wait for all of it.
    let recipe = Recipe::default_recipe()
        .apply_override("size=(129,97)")
        .unwrap();
    let set = AtomicBool::new(true);
    assert!(matches!(
        initial_world_cancellable(&recipe, Path::new("."), &set),
        Err(OrogenError::Cancelled)
    ));
    // Not cancelled: the same world as without a flag.
    let clear = AtomicBool::new(false);
    let a = initial_world_cancellable(&recipe, Path::new("."), &clear).unwrap();
    let b = initial_world(&recipe, Path::new(".")).unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.height.data), bits(&b.height.data));
    assert_eq!(bits(&a.uplift.data), bits(&b.uplift.data));

    // The noise uplift and the strata (noise thickness and warp) after the terrain look
    // at the flag too.
    let grid = recipe.grid().unwrap();
    assert!(matches!(
        recipe
            .uplift
            .resolve_cancellable(grid, 1, Path::new("."), &set),
        Err(OrogenError::Cancelled)
    ));
    let strata = Recipe::built_in("strata").unwrap();
    let layered = strata.strata.as_ref().unwrap();
    let surface = vec![0.0f32; grid.len()];
    let build = |flag: &AtomicBool| {
        orogen_core::stages::strata::build_cancellable(
            &strata.materials,
            layered,
            grid,
            &surface,
            1,
            Path::new("."),
            flag,
        )
    };
    assert!(matches!(build(&set), Err(OrogenError::Cancelled)));
    let (layers, _) = build(&clear).unwrap();
    let (plain, _) = orogen_core::stages::strata::build(
        &strata.materials,
        layered,
        grid,
        &surface,
        1,
        Path::new("."),
    )
    .unwrap();
    assert_eq!(layers, plain);
}

#[test]
fn invalid_recipes_fail_before_work_naming_the_field() {
    let cancel = AtomicBool::new(false);
    for (set, field) in [
        ("cell_size=0.0", "cell_size"),
        ("size=(0,5)", "size.0"),
        ("size=(5,16386)", "size.1"),
        ("stages[1].talus.min_deg=95.0", "stages[1].Thermal.talus"),
        ("stages[0].m=0.0", "stages[0].StreamPower.m"),
    ] {
        let recipe = small_recipe().apply_override(set).unwrap();
        let mut events = 0;
        let err = run_recipe(&recipe, Path::new("."), &cancel, &mut |_| events += 1)
            .err()
            .unwrap_or_else(|| panic!("{set} was accepted"))
            .to_string();
        assert!(
            err.contains(field),
            "`{set}`: `{err}` does not name `{field}`"
        );
        assert_eq!(events, 0, "`{set}`: work started before validation");
    }
}
