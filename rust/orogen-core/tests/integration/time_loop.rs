//! The `TimeLoop` stage: several processes in one time loop (all every step, or one drawn
//! by proportions from the seed), deterministic whatever the thread count.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::{on_threads, run_world as run};
use orogen_core::runner::{run_recipe, Event};
use orogen_core::{MapData, OrogenError, Recipe, World};

fn recipe(stages: &str) -> Recipe {
    let text = format!(
        "(size: (65, 57), cell_size: 100.0, seed: 11,
          terrain: Noise(kind: Fbm, octaves: 4, wavelength: 3000.0, amplitude: 200.0),
          uplift: Constant(0.001), stages: [{stages}],
          // The stages' own heights: no river curves carved after them (issue #37).
          river_curves: None)"
    );
    let r = Recipe::from_ron_str(&text, "test").unwrap();
    r.validate().unwrap();
    r
}

/// Every map's bytes, in name order.
fn bytes(world: &World) -> Vec<u8> {
    let mut maps = world.all_maps();
    maps.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for (name, map) in maps {
        out.extend(name.as_bytes());
        match map {
            MapData::Scalar(m) => m.data.iter().for_each(|v| out.extend(v.to_le_bytes())),
            MapData::Mask(m) => out.extend(&m.data),
            MapData::Labels(m) => m.data.iter().for_each(|v| out.extend(v.to_le_bytes())),
            MapData::Index(m) => out.extend(&m.data),
            MapData::Rgba(m) => m.data.iter().for_each(|v| out.extend(v)),
            MapData::Vector(m) => m
                .data
                .iter()
                .flatten()
                .for_each(|v| out.extend(v.to_le_bytes())),
        }
    }
    out
}

fn with_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    on_threads(n, f)
}

const COUPLED: &str = "TimeLoop(iterations: 25, mode: Every, processes: [
    StreamPower(dt: 5e4), Thermal(talus: Noise(min_deg: 20.0, max_deg: 40.0))])";
const MIXED: &str = "TimeLoop(iterations: 40, mode: Proportions([3.0, 1.0]), processes: [
    StreamPower(dt: 5e4), Thermal(talus: Constant(25.0))])";

#[test]
fn coupled_and_proportions_loops_give_the_same_bytes_with_1_and_4_threads() {
    for stages in [COUPLED, MIXED] {
        let r = recipe(stages);
        let one = with_threads(1, || bytes(&run(&r)));
        let four = with_threads(4, || bytes(&run(&r)));
        assert!(
            one == four,
            "{stages}: bytes differ between 1 and 4 threads"
        );
    }
}

#[test]
fn a_coupled_loop_interleaves_its_processes() {
    // Stream power and thermal in the same step differ from all of one then all of the
    // other, and from stream power alone.
    let coupled = bytes(&run(&recipe(COUPLED)));
    let sequential = bytes(&run(&recipe(
        "StreamPower(iterations: 25, dt: 5e4),
         Thermal(iterations: 25, tolerance: 0.0, talus: Noise(min_deg: 20.0, max_deg: 40.0))",
    )));
    let alone = bytes(&run(&recipe("StreamPower(iterations: 25, dt: 5e4)")));
    assert!(coupled != sequential && coupled != alone);
}

#[test]
fn a_loop_of_one_process_is_that_stage() {
    let stage = bytes(&run(&recipe("StreamPower(iterations: 12, dt: 3e4)")));
    let every = bytes(&run(&recipe(
        "TimeLoop(iterations: 12, processes: [StreamPower(dt: 3e4)])",
    )));
    let drawn = bytes(&run(&recipe(
        "TimeLoop(iterations: 12, mode: Proportions([2.0]), processes: [StreamPower(dt: 3e4)])",
    )));
    assert!(stage == every && stage == drawn);
}

#[test]
fn a_process_with_proportion_zero_never_runs() {
    // Hydrology writes its maps whenever it steps; with weight 0 it must never step. The
    // heights equal stream power alone.
    let r = recipe(
        "TimeLoop(iterations: 30, mode: Proportions([1.0, 0.0]), processes: [
            StreamPower(dt: 5e4, hydrology: false), Hydrology()])",
    );
    let w = run(&r);
    assert!(w.maps.is_empty(), "maps written: {:?}", w.maps.keys());
    let alone = run(&recipe(
        "TimeLoop(iterations: 30, processes: [StreamPower(dt: 5e4, hydrology: false)])",
    ));
    assert_eq!(w.height.data, alone.height.data);
    // And with a non-zero weight it does run.
    let r = recipe(
        "TimeLoop(iterations: 30, mode: Proportions([1.0, 0.2]), processes: [
            StreamPower(dt: 5e4, hydrology: false), Hydrology()])",
    );
    assert!(run(&r).maps.contains_key("drainage"));
}

#[test]
fn proportions_draw_each_process_about_as_often_as_its_weight() {
    // Hydrology never changes a height, so the heights tell how many steps stream power
    // got: find the stage length that gives the same bytes.
    let text = "TimeLoop(iterations: 400, mode: Proportions([1.0, 3.0]), processes: [
        StreamPower(dt: 1e3, hydrology: false), Hydrology()])";
    let w = run(&recipe(text));
    // Find k such that k stream-power steps alone give the same heights.
    let mut found = None;
    for k in 60..140 {
        let alone = run(&recipe(&format!(
            "StreamPower(iterations: {k}, dt: 1e3, hydrology: false)"
        )));
        if alone.height.data == w.height.data {
            found = Some(k);
            break;
        }
    }
    let k = found.expect("stream power ran between 60 and 140 of 400 steps");
    // Expected 100 of 400; binomial sd ≈ 8.7.
    assert!((70..=130).contains(&k), "stream power ran {k} times");
}

#[test]
fn progress_counts_loop_iterations_and_cancel_stops_within_a_step() {
    let r = recipe(COUPLED);
    let mut steps = Vec::new();
    run_recipe(&r, Path::new("."), &AtomicBool::new(false), &mut |e| {
        if let Event::Step { iteration, .. } = e {
            steps.push(iteration)
        }
    })
    .unwrap();
    assert_eq!(steps, (1..=25).collect::<Vec<u32>>());
    let cancel = AtomicBool::new(false);
    let mut seen = 0;
    let err = run_recipe(&r, Path::new("."), &cancel, &mut |e| {
        if let Event::Step { .. } = e {
            seen += 1;
            if seen == 3 {
                cancel.store(true, Ordering::Relaxed);
            }
        }
    })
    .err()
    .expect("cancelled");
    assert!(matches!(err, OrogenError::Cancelled));
    assert_eq!(seen, 3);
}

#[test]
fn bad_loops_are_refused_naming_the_field() {
    let cases = [
        (
            "TimeLoop(mode: Proportions([0.0, 0.0]), processes: [StreamPower(), Thermal()])",
            "stages[0].TimeLoop.mode.Proportions",
        ),
        (
            "TimeLoop(mode: Proportions([1.0]), processes: [StreamPower(), Thermal()])",
            "stages[0].TimeLoop.mode.Proportions",
        ),
        (
            "TimeLoop(mode: Proportions([1.0, -1.0]), processes: [StreamPower(), Thermal()])",
            "stages[0].TimeLoop.mode.Proportions[1]",
        ),
        ("TimeLoop(processes: [])", "stages[0].TimeLoop.processes"),
        (
            "TimeLoop(processes: [StreamPower(), Thermal(rate: 2.0)])",
            "stages[0].TimeLoop.processes[1].Thermal.rate",
        ),
        (
            "TimeLoop(iterations: 0, processes: [Thermal()])",
            "stages[0].TimeLoop.iterations",
        ),
    ];
    for (stage, field) in cases {
        let text = format!(
            "(size: (9, 9), cell_size: 100.0, seed: 1, terrain: Flat(0.0), stages: [{stage}])"
        );
        let err = Recipe::from_ron_str(&text, "t")
            .unwrap()
            .validate()
            .expect_err(stage);
        match err {
            OrogenError::InvalidParameter { field: f, .. } => assert_eq!(f, field, "{stage}"),
            other => panic!("{stage}: {other}"),
        }
    }
    // A loop cannot hold a loop.
    let text = "(size: (9, 9), cell_size: 100.0, seed: 1, terrain: Flat(0.0), stages: [
        TimeLoop(processes: [TimeLoop(processes: [Thermal()])])])";
    assert!(Recipe::from_ron_str(text, "t").is_err());
}
