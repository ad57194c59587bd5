//! The `StreamPower` stage through the recipe and the real flow router: parameter errors,
//! thread-count independence, the analytical steady state and the stage's outputs.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::support::{on_threads, slope_area_fit, HYDROLOGY_MAPS};
use orogen_core::eroders::stream_power::{Inputs, StreamPower};
use orogen_core::flow::SinkMode;
use orogen_core::recipe::{Recipe, ScalarSource, Stage};
use orogen_core::runner::{run_recipe, Event};
use orogen_core::stages::stream_power::StreamPowerParams;
use orogen_core::stages::StageKind;
use orogen_core::world::names;
use orogen_core::{Grid, MapData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn recipe(side: u32, uplift: f32, stage: &str) -> Recipe {
    let text = format!(
        "(size: ({side}, {side}), cell_size: 100.0, seed: 3, \
         terrain: Noise(wavelength: 3000.0, amplitude: 5.0), uplift: Constant({uplift}), \
         stages: [{stage}])"
    );
    Recipe::from_ron_str(&text, "<test>").expect("recipe parses")
}

fn run(r: &Recipe) -> (orogen_core::World, u32) {
    let cancel = AtomicBool::new(false);
    let mut steps = 0;
    let mut observer = |e: Event<'_>| {
        if let Event::Step { .. } = e {
            steps += 1;
        }
    };
    let out = run_recipe(r, Path::new("."), &cancel, &mut observer).expect("run");
    (out.world, steps)
}

/// The error message of validating a one-stage recipe.
fn stage_error(stage: &str) -> String {
    let text = format!(
        "(size: (33, 33), cell_size: 100.0, seed: 1, terrain: Flat(0.0), stages: [{stage}])"
    );
    match Recipe::from_ron_str(&text, "<test>") {
        Err(e) => e.to_string(),
        Ok(r) => r.validate().expect_err(stage).to_string(),
    }
}

#[test]
fn bad_parameters_name_their_field() {
    let cases = [
        ("StreamPower(k: Constant(-1e-6))", "stages[0].StreamPower.k"),
        ("StreamPower(k: Constant(NaN))", "stages[0].StreamPower.k"),
        ("StreamPower(m: 0.0)", "stages[0].StreamPower.m"),
        ("StreamPower(m: -0.5)", "stages[0].StreamPower.m"),
        ("StreamPower(n: 0.0)", "stages[0].StreamPower.n"),
        ("StreamPower(n: inf)", "stages[0].StreamPower.n"),
        ("StreamPower(dt: 0.0)", "stages[0].StreamPower.dt"),
        ("StreamPower(dt: -10.0)", "stages[0].StreamPower.dt"),
        ("StreamPower(dt: NaN)", "stages[0].StreamPower.dt"),
        ("StreamPower(dt: 1e12)", "stages[0].StreamPower.dt"),
        (
            "StreamPower(iterations: 0)",
            "stages[0].StreamPower.iterations",
        ),
        (
            "StreamPower(tolerance: 0.0)",
            "stages[0].StreamPower.tolerance",
        ),
        (
            "StreamPower(uplift_scale: inf)",
            "stages[0].StreamPower.uplift_scale",
        ),
        (
            "StreamPower(precipitation: Constant(-1.0))",
            "stages[0].StreamPower.precipitation",
        ),
        (
            "StreamPower(k: Noise(noise: (), min: -1.0, max: 1.0))",
            "stages[0].StreamPower.k",
        ),
        (
            "StreamPower(lakes: Fill(epsilon: -1.0))",
            "stages[0].StreamPower.lakes",
        ),
        (
            "StreamPower(outlets: (sea_level: NaN))",
            "stages[0].StreamPower.outlets.sea_level",
        ),
        ("StreamPower(erodibility: 1.0)", "erodibility"),
    ];
    for (stage, field) in cases {
        let msg = stage_error(stage);
        assert!(
            msg.contains(field),
            "{stage}: `{msg}` does not name {field}"
        );
    }
}

#[test]
fn overflowing_erosion_factor_names_dt() {
    let grid = Grid::new(33, 33, 1.0).unwrap();
    let p = StreamPowerParams {
        n: 10.0,
        m: 5.0,
        dt: 1e9,
        k: ScalarSource::Constant(3e38),
        ..Default::default()
    };
    p.validate("sp").expect("each value is in range");
    let rain = vec![1e38_f32; grid.len()];
    let err = new_solver(
        grid,
        &p,
        vec![3e38; grid.len()],
        vec![0.0; grid.len()],
        Some(&rain),
        false,
        "sp",
    )
    .err()
    .expect("overflow must be refused")
    .to_string();
    assert!(err.contains("sp.dt"), "{err}");
}

#[test]
fn negative_erodibility_map_is_refused_naming_k() {
    let grid = Grid::new(17, 17, 100.0).unwrap();
    let mut k = vec![1e-5_f32; grid.len()];
    k[40] = -1e-6;
    let err = new_solver(
        grid,
        &StreamPowerParams::default(),
        k,
        vec![1e-3; grid.len()],
        None,
        false,
        "stages[2].StreamPower",
    )
    .err()
    .expect("negative k")
    .to_string();
    assert!(err.contains("stages[2].StreamPower.k"), "{err}");
    let mut u = vec![1e-3_f32; grid.len()];
    u[3] = f32::NAN;
    let err = new_solver(
        grid,
        &StreamPowerParams::default(),
        vec![1e-5; grid.len()],
        u,
        None,
        false,
        "sp",
    )
    .err()
    .expect("NaN uplift")
    .to_string();
    assert!(err.contains("uplift"), "{err}");
}

#[test]
fn subsidence_is_allowed_and_lowers_the_terrain() {
    let r = recipe(
        33,
        -1e-3,
        "StreamPower(iterations: 3, dt: 1e4, hydrology: false)",
    );
    r.validate().expect("negative uplift is valid");
    let before = orogen_core::runner::initial_world(&r, Path::new(".")).unwrap();
    let (world, _) = run(&r);
    let interior_lowered =
        (1..32).all(|y| (1..32).all(|x| world.height.get(x, y) < before.height.get(x, y)));
    assert!(interior_lowered);
}

#[test]
fn bytes_do_not_depend_on_thread_count() {
    let r = recipe(
        96,
        1e-3,
        "StreamPower(iterations: 6, dt: 5e4, k: Constant(5e-6), n: 1.0), \
         StreamPower(iterations: 3, n: 1.5, m: 0.75, k: Constant(1e-7), lakes: Fill(epsilon: 0.01))",
    );
    let run_with = |threads: usize| on_threads(threads, || run(&r).0);
    let a = run_with(1);
    let b = run_with(4);
    let bits = |w: &orogen_core::World| {
        w.height
            .data
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&a), bits(&b));
    assert_eq!(a.maps, b.maps);
}

#[test]
fn stage_grows_a_finite_range_and_writes_hydrology_maps() {
    let (world, steps) = run(&recipe(
        65,
        1e-3,
        "StreamPower(iterations: 40, dt: 5e4, k: Constant(5e-6))",
    ));
    assert_eq!(steps, 40);
    assert!(world.height.data.iter().all(|h| h.is_finite()));
    let (lo, hi) = world.height.min_max();
    // Never above pure uplift (initial relief ≤ 5 m plus u·t), clearly raised.
    assert!(hi <= 5.0 + 1e-3 * 5e4 * 40.0 + 1.0, "max {hi}");
    assert!(hi > 100.0, "max {hi}");
    assert!(lo > -10.0, "min {lo}");
    for name in HYDROLOGY_MAPS {
        assert!(world.maps.contains_key(name), "missing {name}");
    }
    // Drainage of the whole domain leaves through the borders: the border cells together
    // hold the area of every cell.
    let Some(MapData::Scalar(d)) = world.maps.get(names::DRAINAGE) else {
        panic!("drainage is not scalar")
    };
    let total: f64 = (0..65)
        .flat_map(|y| (0..65).map(move |x| (x, y)))
        .filter(|&(x, y)| d.grid.is_border(x, y))
        .map(|(x, y)| *d.get(x, y) as f64)
        .sum();
    assert!(
        (total / (65.0 * 65.0 * 1e4) - 1.0).abs() < 1e-4,
        "total {total}"
    );
}

#[test]
fn tolerance_stops_at_steady_state() {
    let (_, steps) = run(&recipe(
        33,
        1e-3,
        "StreamPower(iterations: 5000, dt: 1e5, k: Constant(1e-5), tolerance: 0.01, hydrology: false)",
    ));
    assert!(steps < 5000, "never reached the tolerance");
}

/// Steady state through the real router (carved lakes): S = (u/k)^(1/n)·A^(−m/n).
#[test]
fn steady_state_slope_area_with_flow_router() {
    for &(n, m, k) in &[(1.0_f32, 0.5_f32, 1e-5_f32), (2.0, 1.0, 1e-9)] {
        let side = 101;
        let grid = Grid::new(side, side, 100.0).unwrap();
        let u = 1e-3_f32;
        let p = StreamPowerParams {
            n,
            m,
            dt: 1e5,
            ..Default::default()
        };
        let mut solver = new_solver(
            grid,
            &p,
            vec![k; grid.len()],
            vec![u; grid.len()],
            None,
            true,
            "sp",
        )
        .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let mut h: Vec<f32> = (0..grid.len()).map(|_| rng.random::<f32>()).collect();
        let mut steady = false;
        for _ in 0..3000 {
            if solver
                .step_heights(&mut h, p.dt as f64)
                .unwrap()
                .max_change
                .unwrap()
                < 2e-3
            {
                steady = true;
                break;
            }
        }
        assert!(steady, "n={n}: no steady state");
        let (slope, intercept, c) =
            slope_area_fit(solver.graph(), solver.drainage(), &h, 20.0 * 1e4);
        let expected = ((u / k) as f64).powf(1.0 / n as f64);
        assert!(c > 500, "{c} channel cells");
        assert!(
            (slope + (m / n) as f64).abs() <= 0.02,
            "n={n}: exponent {slope}"
        );
        assert!(
            (intercept / expected - 1.0).abs() <= 0.05,
            "n={n}: intercept {intercept} vs {expected}"
        );
    }
}

#[test]
fn default_stage_round_trips_through_ron() {
    let r = recipe(
        33,
        1e-3,
        "StreamPower(iterations: 100, dt: 1e5, k: Constant(2e-5))",
    );
    let Stage::StreamPower(p) = &r.stages[0] else {
        panic!("not a StreamPower stage")
    };
    assert_eq!(p.k, ScalarSource::Constant(2e-5));
    assert_eq!(p.dt, 1e5);
    assert!(p.hydrology);
    let back = Recipe::from_ron_str(&r.to_ron_string(), "<round trip>").unwrap();
    assert_eq!(back, r);
}

/// A bowl whose floor is a pit: with `lakes: None` the pit receives itself like an outlet,
/// yet it is not base level, so it must rise with the uplift (and not erode); with `Carve`
/// the floor lies below its receiver and likewise only rises.
#[test]
fn lake_floors_rise_with_uplift_and_do_not_erode() {
    for lakes in [SinkMode::None, SinkMode::Carve] {
        let side = 33;
        let grid = Grid::new(side, side, 100.0).unwrap();
        let c = side / 2;
        let mut h: Vec<f32> = (0..grid.len())
            .map(|i| {
                let (x, y) = grid.coords(i);
                let r = ((x as f32 - c as f32).powi(2) + (y as f32 - c as f32).powi(2)).sqrt();
                let to_border = x.min(y).min(side - 1 - x).min(side - 1 - y) as f32;
                // A rim at r = 8 around the pit, falling away to the borders outside it.
                if r < 8.0 {
                    20.0 + r
                } else {
                    to_border
                }
            })
            .collect();
        let centre = grid.index(c, c);
        h[centre] = -5.0;
        let (u, dt) = (1e-3_f32, 1e4_f32);
        let p = StreamPowerParams {
            lakes,
            dt,
            ..Default::default()
        };
        let mut solver = new_solver(
            grid,
            &p,
            vec![1e-5; grid.len()],
            vec![u; grid.len()],
            None,
            false,
            "sp",
        )
        .unwrap();
        let before = h.clone();
        solver.step_heights(&mut h, p.dt as f64).unwrap();
        let expected = (before[centre] as f64 + u as f64 * dt as f64) as f32;
        assert_eq!(h[centre], expected, "{lakes:?}: pit floor");
        // Borders are base level; interior rim cells rose less than the uplift (eroded).
        assert_eq!(h[0], before[0]);
        let rim = grid.index(c + 8, c);
        assert!(
            h[rim] < before[rim] + u * dt,
            "{lakes:?}: rim did not erode"
        );
    }
}

/// The stage's process over a grid, with the stage's dt checked as the stage does.
fn new_solver(
    grid: Grid,
    p: &StreamPowerParams,
    k: Vec<f32>,
    uplift: Vec<f32>,
    precipitation: Option<&[f32]>,
    measure_change: bool,
    field: &str,
) -> orogen_core::Result<StreamPower> {
    let inputs = Inputs {
        k,
        uplift,
        precipitation: precipitation.map(|r| r.to_vec()),
    };
    let solver = StreamPower::on_grid(
        grid,
        &p.outlets,
        &p.process(),
        inputs,
        measure_change,
        field,
    )?;
    solver.check_dt(p.dt as f64)?;
    Ok(solver)
}

#[test]
fn misspelt_enum_fields_are_refused() {
    for text in [
        "StreamPower(lakes: Fill(espilon: 5.0))",
        "Hydrology(lakes: Fill(epsilon: 0.1, extra: 1.0))",
    ] {
        let full = format!(
            "(size: (9, 9), cell_size: 100.0, seed: 1, terrain: Flat(0.0), stages: [{text}])"
        );
        let err = Recipe::from_ron_str(&full, "t")
            .expect_err(text)
            .to_string();
        assert!(
            err.contains("espilon") || err.contains("extra"),
            "{text}: {err}"
        );
    }
}

#[test]
fn numerical_and_precipitation_errors_name_the_stage() {
    // Validation, the run-time checks of a stage and a process's numerical errors all
    // name the stage's place in the recipe.
    let r = recipe(
        17,
        1e-3,
        "StreamPower(iterations: 2, precipitation: Constant(-1.0))",
    );
    let err = r.validate().unwrap_err().to_string();
    assert!(err.contains("stages[0].StreamPower.precipitation"), "{err}");
    let r = recipe(
        17,
        1e-3,
        "Thermal(), Hydrology(precipitation: Constant(-1.0))",
    );
    let err = run_recipe(
        &r,
        std::path::Path::new("."),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .err()
    .expect("negative rain")
    .to_string();
    assert!(err.contains("stages[1].Hydrology.precipitation"), "{err}");
    let e = orogen_core::eroders::stream_power::solve_drop(1.0, f64::INFINITY, 2.0)
        .unwrap_err()
        .in_field("stages[3].StreamPower");
    assert!(e.to_string().contains("`stages[3].StreamPower`"), "{e}");
}

/// `uplift_fade_m`: the uplift is 0 on the border, the recipe's own from `uplift_fade_m`
/// inside, and rises monotonically between; eroded, the range then rises from lowlands
/// instead of from walls at the base-level border (the sides of the demo scenes).
#[test]
fn uplift_fading_at_the_borders_leaves_no_walls() {
    let stage = "StreamPower(iterations: 40, dt: 50000.0)";
    let walled = recipe(65, 1e-3, stage);
    let mut faded = walled.clone();
    faded.uplift_fade_m = 1500.0;
    let (w0, _) = run(&walled);
    let (w1, _) = run(&faded);
    let side = 65usize;
    // The faded uplift along the row through the middle, from the west border inwards.
    let row: Vec<f32> = (0..side).map(|x| w1.uplift.data[32 * side + x]).collect();
    assert_eq!(row[0], 0.0, "no uplift on the border");
    assert!(
        row.windows(2).take(16).all(|p| p[1] >= p[0]),
        "rises inwards: {row:?}"
    );
    assert!(
        (row[15] - 1e-3).abs() < 1e-9 && (row[32] - 1e-3).abs() < 1e-9,
        "the recipe's own 15 cells (1500 m) in: {row:?}"
    );
    assert!(
        w0.uplift.data.iter().all(|&u| u == 1e-3),
        "no fade by default"
    );
    // A fade wider than the map is held to a quarter of it (1600 m here): the middle keeps
    // the recipe's uplift.
    let grid = walled.grid().unwrap();
    let fade = |x| orogen_core::stages::source::border_fade(grid, x, 32, 1.0e6);
    assert_eq!(fade(16), 1.0, "16 cells (1600 m) in");
    assert!(fade(8) > 0.0 && fade(8) < 1.0, "8 cells in: {}", fade(8));
    // The steepest rise from a border cell to the cell inside it, metres per cell.
    let border_step = |w: &orogen_core::World| {
        let h = &w.height.data;
        (1..side - 1)
            .flat_map(|i| {
                [
                    h[side + i] - h[i],
                    h[(side - 2) * side + i] - h[(side - 1) * side + i],
                    h[i * side + 1] - h[i * side],
                    h[i * side + side - 2] - h[i * side + side - 1],
                ]
            })
            .fold(0.0f32, f32::max)
    };
    let (steep0, steep1) = (border_step(&w0), border_step(&w1));
    assert!(
        steep1 < 0.25 * steep0,
        "the border step should fall well below the walled range's: {steep1} m against {steep0} m"
    );
    // The interior still rises into a range.
    let max = |w: &orogen_core::World| w.height.data.iter().copied().fold(f32::MIN, f32::max);
    assert!(
        max(&w1) > 0.5 * max(&w0),
        "{} against {}",
        max(&w1),
        max(&w0)
    );
}

#[test]
fn a_bad_uplift_fade_names_its_field() {
    for (field, bad) in [
        ("uplift_fade_m", "-1.0"),
        ("uplift_fade_m", "NaN"),
        ("uplift_fade_m", "inf"),
        ("uplift_fade_ragged", "-0.1"),
        ("uplift_fade_ragged", "3.5"),
        ("uplift_fade_ragged", "NaN"),
    ] {
        let text = format!(
            "(size: (33, 33), cell_size: 100.0, seed: 1, terrain: Flat(0.0), \
             uplift_fade_m: 500.0, {field}: {bad})"
        );
        let e = match Recipe::from_ron_str(&text, "<test>") {
            Err(e) => e.to_string(),
            Ok(r) => r.validate().expect_err(bad).to_string(),
        };
        assert!(e.contains(field), "{field} {bad}: {e}");
    }
}

/// `uplift_fade_ragged`: the fade starts up to `ragged` × the fade inside the border, moved
/// in and out by noise along it, so the coast of an eroded range has bays and headlands; the
/// even fade (0) starts on the border everywhere. A window of the map (a tile) gets the
/// whole map's factors bit for bit.
#[test]
fn a_ragged_uplift_fade_moves_the_coast_in_and_out() {
    use orogen_core::field::Rect;
    use orogen_core::stages::source::{border_fade_window, BorderFade};
    let side = 257usize;
    let grid = Grid::new(side, side, 100.0).unwrap();
    let cancel = AtomicBool::new(false);
    let whole = Rect {
        x0: 0,
        y0: 0,
        w: side,
        h: side,
    };
    let factors = |ragged: f32| {
        let fade = BorderFade {
            fade_m: 4000.0,
            ragged,
        };
        border_fade_window(grid, whole, fade, 11, &cancel).expect("fade")
    };
    // Along the west border, the first cell (from the border) whose factor is over 1 %:
    // where the land starts.
    let starts = |f: &[f32]| -> Vec<usize> {
        (60..side - 60)
            .map(|y| (0..side / 2).find(|&x| f[y * side + x] > 0.01).unwrap())
            .collect()
    };
    let even = factors(0.0);
    let ragged = factors(1.0);
    let (e, r) = (starts(&even), starts(&ragged));
    assert!(
        e.iter().all(|&x| x == e[0]),
        "the even fade starts at one distance: {e:?}"
    );
    let (lo, hi) = (*r.iter().min().unwrap(), *r.iter().max().unwrap());
    assert!(
        lo <= e[0] + 3,
        "a headland reaches the border: {lo} cells in"
    );
    assert!(
        hi >= e[0] + 20,
        "a bay reaches at least half the 40-cell fade further in: {hi} cells against {}",
        e[0]
    );
    // The bays are wide, not single-cell notches: on average neighbouring rows start
    // within 1.5 cells of each other (a headland's tip can still jump a row).
    let mean_step =
        r.windows(2).map(|p| p[0].abs_diff(p[1])).sum::<usize>() as f64 / (r.len() - 1) as f64;
    assert!(mean_step < 1.5, "{mean_step}: {r:?}");
    // Deeper in, every cell gets the recipe's own uplift; the inset never passes 0.15 of
    // the map (38 cells) plus the fade (40).
    assert!((0..side).all(|x| ragged[(side / 2) * side + x] == 1.0 || x < 79 || x > side - 80));
    // A tile's factors are the whole map's.
    let tile = Rect {
        x0: 30,
        y0: 100,
        w: 70,
        h: 50,
    };
    let fade = BorderFade {
        fade_m: 4000.0,
        ragged: 1.0,
    };
    let part = border_fade_window(grid, tile, fade, 11, &cancel).expect("tile");
    for (i, v) in part.iter().enumerate() {
        let (x, y) = (tile.x0 + i % tile.w, tile.y0 + i / tile.w);
        assert_eq!(v.to_bits(), ragged[y * side + x].to_bits(), "({x}, {y})");
    }
}
