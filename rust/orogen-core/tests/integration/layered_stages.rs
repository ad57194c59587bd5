//! The thesis's erosions as recipe stages over layered rock, mixed by proportions
//! (water : wind : thermal = 100 : 50 : 1), with their outputs and errors.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::support::{on_threads, run_world as run};
use orogen_core::runner::run_recipe;
use orogen_core::{MapData, OrogenError, Recipe, World};

fn recipe(stages: &str, outputs: &str) -> Recipe {
    let text = format!(
        "(size: (40, 36), cell_size: 2.0, seed: 9,
          terrain: Noise(kind: Fbm, octaves: 3, wavelength: 30.0, amplitude: 4.0, offset: 10.0),
          strata: (layers: [(material: \"sand\", thickness: Constant(0.5)),
                            (material: \"shale\", thickness: Constant(2.0))], bottom: \"granite\"),
          outputs: [{outputs}],
          stages: [{stages}])"
    );
    let r = Recipe::from_ron_str(&text, "test").unwrap();
    r.validate().unwrap();
    r
}

const MIX: &str = "TimeLoop(iterations: 120, mode: Proportions([100.0, 50.0, 1.0]), processes: [
    Hydraulic(dt: 0.02, rain: Drops(power: 0.05, volume_m3: 0.05), evaporation: 0.01),
    Wind(direction_deg: 30.0),
    LayeredThermal()])";

fn total(w: &World) -> f64 {
    w.height.data.iter().map(|&h| h as f64).sum()
}

#[test]
fn the_thesis_mix_runs_the_same_with_1_and_4_threads_and_writes_its_state() {
    let r = recipe(
        MIX,
        "\"water_depth\", \"velocity\", \"sediment\", \"erosion\"",
    );
    let a = on_threads(1, || run(&r));
    let b = on_threads(4, || run(&r));
    assert_eq!(a.height.data, b.height.data);
    for name in [
        "water_depth",
        "sediment",
        "velocity",
        "erosion",
        "material",
        "splat",
    ] {
        assert!(a.maps.contains_key(name), "missing {name}");
    }
    assert!(matches!(a.maps.get("velocity"), Some(MapData::Vector(_))));
    let Some(MapData::Scalar(e)) = a.maps.get("erosion") else {
        panic!()
    };
    assert!(e.data.iter().any(|&v| v < 0.0), "nothing eroded");
}

#[test]
fn one_line_stages_run_alone_and_keep_material() {
    // Closed borders, no evaporation, no rain: water and rock stay on the map, so the
    // surface total moves only by the sediment the water still carries.
    let r = recipe(
        "Hydraulic(iterations: 50, dt: 0.02, rain: None, evaporation: 0.0,
            sources: [(x_m: 40.0, y_m: 36.0, radius_m: 6.0, rate_m3_per_s: 2.0, every_step: true)]),
         LayeredThermal(iterations: 30)",
        "\"sediment\"",
    );
    let before = total(&run(&recipe("", "")));
    let w = run(&r);
    let Some(MapData::Scalar(s)) = w.maps.get("sediment") else {
        panic!()
    };
    let carried: f64 = s.data.iter().map(|&v| v as f64).sum();
    let after = total(&w) + carried;
    assert!(
        ((after - before) / before).abs() < 1e-5,
        "{before} -> {after}"
    );
}

#[test]
fn bad_layered_stages_name_the_field() {
    let cases = [
        (
            "Hydraulic(sources: [(x_m: 500.0, y_m: 1.0, radius_m: 1.0, rate_m3_per_s: 1.0, every_step: false)])",
            "stages[0].Hydraulic.sources[0]",
        ),
        ("Wind(fall_angle_deg: 60.0)", "stages[0].Wind.fall_angle_deg"),
        ("LayeredThermal(rate: 0.0)", "stages[0].LayeredThermal.rate"),
        (
            "TimeLoop(mode: Proportions([0.0, 0.0]), processes: [Hydraulic(), Wind()])",
            "stages[0].TimeLoop.mode.Proportions",
        ),
    ];
    for (stage, field) in cases {
        let text = format!(
            "(size: (20, 20), cell_size: 2.0, seed: 1, terrain: Flat(1.0), stages: [{stage}])"
        );
        let r = Recipe::from_ron_str(&text, "t").unwrap();
        let err = match r.validate() {
            Err(e) => e,
            Ok(()) => run_recipe(&r, Path::new("."), &AtomicBool::new(false), &mut |_| {})
                .err()
                .expect(stage),
        };
        let msg = err.to_string();
        match err {
            OrogenError::InvalidParameter { field: f, .. } => {
                assert!(f.starts_with(field), "{stage}: {f} ({msg})")
            }
            other => panic!("{stage}: {other}"),
        }
    }
}
