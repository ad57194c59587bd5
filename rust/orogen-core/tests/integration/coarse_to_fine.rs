//! The `StreamPower` stage's coarse-to-fine schedule (issues #12 and #39): on the default
//! recipe at 513², with cells of 50 m and of 100 m, the scheduled run must give the same
//! terrain as the plain one by four landscape measures — relief, hypsometric integral,
//! concavity and drainage density — and it must refuse the worlds it cannot run on.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::support::on_threads;
use orogen_core::flow::{accumulate, FlowRouter, OutletParams, SinkMode};
use orogen_core::recipe::{Recipe, DEFAULT_RECIPE};
use orogen_core::runner::{run_recipe, Event};
use orogen_core::Grid;

/// Nodes draining at least this many square metres are channels (100 cells of 100 m).
const CHANNEL_AREA: f32 = 1e6;

/// Rivers draining at least this many square metres have their winding measured.
const RIVER_AREA: f32 = 16e6;

/// Fine nodes over which a river's winding is measured (its path against its chord).
const RIVER_STEPS: usize = 64;

/// The default recipe at `side`² of `cell` metres, with its StreamPower schedule set to
/// `schedule`, run up to (not including) its thermal stage: the measures are of the fluvial
/// landscape.
fn run_default_at(side: usize, cell: f32, schedule: &str) -> (Grid, Vec<f32>) {
    let mut r = Recipe::from_ron_str(DEFAULT_RECIPE, "default")
        .and_then(|r| r.apply_override(&format!("size=({side}, {side})")))
        .and_then(|r| r.apply_override(&format!("cell_size={cell:?}")))
        .and_then(|r| r.apply_override(&format!("stages[0].StreamPower.schedule={schedule}")))
        .expect("default recipe with overrides");
    r.stages.truncate(1);
    // Without the fade at the borders: at these cell sizes its 8 km span most of the map,
    // and uplift rising across it bends the slope-area relation the concavity is fitted to.
    r.uplift_fade_m = 0.0;
    let cancel = AtomicBool::new(false);
    let out = run_recipe(&r, Path::new("."), &cancel, &mut |_: Event<'_>| {}).expect("run");
    (out.world.grid(), out.world.height.data.clone())
}

struct Measures {
    relief: f64,
    /// The 99.9th percentile of the height above the lowest node: the relief without the
    /// few highest divide nodes, which a single node decides.
    top: f64,
    /// Rivers' path length over `RIVER_STEPS` nodes against their chord (issue #39: a
    /// coarser grid's rivers wind less, so they are shorter; printed, not checked).
    sinuosity: f64,
    hypsometric_integral: f64,
    concavity: f64,
    drainage_density: f64,
}

/// The four measures of a terrain, with its flow routed the way the stage routes it
/// (steepest descent, lakes carved through their passes, all borders open).
fn measure(grid: Grid, heights: &[f32]) -> Measures {
    let (lo, hi) = heights.iter().fold((f64::MAX, f64::MIN), |(a, b), &h| {
        (a.min(h as f64), b.max(h as f64))
    });
    let mean = heights.iter().map(|&h| h as f64).sum::<f64>() / heights.len() as f64;
    let mut router = FlowRouter::new(grid, &OutletParams::default()).expect("router");
    let mut h = heights.to_vec();
    router.steepest_descent(&h).expect("descent");
    router
        .resolve_sinks(&mut h, SinkMode::Carve)
        .expect("lakes");
    let g = router.graph();
    let weights = vec![grid.cell_area(); grid.len()];
    let mut area = vec![0.0f32; grid.len()];
    accumulate(g, &weights, &mut area);
    // Concavity θ: the slope-area law S = ks·A^−θ fitted by least squares in log-log
    // space over channel nodes (Flint's law); drainage density: channel length per area.
    let (mut n, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut length = 0.0f64;
    for i in 0..grid.len() {
        let r = g.receivers[i] as usize;
        if r == i || area[i] < CHANNEL_AREA {
            continue;
        }
        length += g.dist[i] as f64;
        let slope = (heights[i] - heights[r]) as f64 / g.dist[i] as f64;
        if slope > 1e-6 {
            let (x, y) = ((area[i] as f64).ln(), slope.ln());
            n += 1.0;
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
        }
    }
    let theta = -(n * sxy - sx * sy) / (n * sxx - sx * sx);
    let (mut path, mut chord) = (0.0f64, 0.0f64);
    for i in (0..grid.len()).filter(|&i| area[i] >= RIVER_AREA) {
        // Only rivers that run the whole `RIVER_STEPS` before an outlet.
        let (mut j, mut p, mut steps) = (i, 0.0f64, 0);
        while steps < RIVER_STEPS && g.receivers[j] as usize != j {
            p += g.dist[j] as f64;
            j = g.receivers[j] as usize;
            steps += 1;
        }
        if steps < RIVER_STEPS {
            continue;
        }
        let ((x0, y0), (x1, y1)) = (grid.coords(i), grid.coords(j));
        let cx = (x0 as f64 - x1 as f64) * grid.dx() as f64;
        let cy = (y0 as f64 - y1 as f64) * grid.dy() as f64;
        path += p;
        chord += cx.hypot(cy);
    }
    let mut sorted = heights.to_vec();
    sorted.sort_by(f32::total_cmp);
    let top = sorted[(sorted.len() - 1) * 999 / 1000] as f64 - lo;
    Measures {
        relief: hi - lo,
        top,
        sinuosity: path / chord,
        hypsometric_integral: (mean - lo) / (hi - lo),
        concavity: theta,
        drainage_density: length / (grid.len() as f64 * grid.cell_area() as f64),
    }
}

#[test]
fn coarse_to_fine_gives_the_same_landscape_on_the_default_recipe() {
    // 513² of 50 m is the default recipe's 51.2 km at twice its resolution, where the
    // coarse levels' lower divides showed most (issue #39: with 10 steps per finer level
    // the relief fell 3.0 % at two levels and 10.1 % at three; 6.6 % and 7.4 % at 100 m).
    // Three levels at both cell sizes: their rivers kept the coarsest grid's straight
    // courses (drainage density 7 % low) until the handover went by direction and warped.
    for cell in [50.0, 100.0] {
        let (grid, fine) = run_default_at(513, cell, "Fine");
        let a = measure(grid, &fine);
        for levels in [2, 3] {
            let (_, scheduled) =
                run_default_at(513, cell, &format!("CoarseToFine(levels: {levels})"));
            let b = measure(grid, &scheduled);
            compare(cell, levels, &a, &b);
        }
    }
}

/// Prints the measures, `Fine` against 2 and 3 levels, at the sizes and cell sizes in
/// `OROGEN_C2F_SIDES` (default `1025`) and `OROGEN_C2F_CELLS` (default `50,100`), with
/// `OROGEN_C2F_EXTRA` appended to the schedule's fields (`, refine: 0.2`):
/// `cargo test --profile test -p orogen-core --test integration measure_coarse_to_fine
/// -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement (minutes at 1025²), not a check"]
fn measure_coarse_to_fine() {
    let list = |name: &str, default: &str| -> Vec<String> {
        std::env::var(name)
            .unwrap_or_else(|_| default.to_string())
            .split(',')
            .map(|s| s.trim().to_string())
            .collect()
    };
    for side in list("OROGEN_C2F_SIDES", "1025") {
        let side: usize = side.parse().expect("OROGEN_C2F_SIDES: sizes");
        for cell in list("OROGEN_C2F_CELLS", "50,100") {
            let cell: f32 = cell.parse().expect("OROGEN_C2F_CELLS: cell sizes");
            let t = std::time::Instant::now();
            let (grid, fine) = run_default_at(side, cell, "Fine");
            let a = measure(grid, &fine);
            println!(
                "{side}² of {cell} m: Fine in {:.1} s",
                t.elapsed().as_secs_f64()
            );
            for levels in [2, 3] {
                let t = std::time::Instant::now();
                let extra = std::env::var("OROGEN_C2F_EXTRA").unwrap_or_default();
                let (_, c2f) = run_default_at(
                    side,
                    cell,
                    &format!("CoarseToFine(levels: {levels}{extra})"),
                );
                let b = measure(grid, &c2f);
                println!(
                    "{side}² of {cell} m, {levels} levels ({:.1} s): relief {:.1} / {:.1} m \
                     ({:+.1} %), drainage density {:.3e} / {:.3e} per m ({:+.1} %), \
                     hypsometric integral {:.3} / {:.3}, concavity {:.3} / {:.3}, 99.9th \
                     percentile {:.1} / {:.1} m ({:+.1} %), sinuosity {:.3} / {:.3}",
                    t.elapsed().as_secs_f64(),
                    a.relief,
                    b.relief,
                    100.0 * (b.relief / a.relief - 1.0),
                    a.drainage_density,
                    b.drainage_density,
                    100.0 * (b.drainage_density / a.drainage_density - 1.0),
                    a.hypsometric_integral,
                    b.hypsometric_integral,
                    a.concavity,
                    b.concavity,
                    a.top,
                    b.top,
                    100.0 * (b.top / a.top - 1.0),
                    a.sinuosity,
                    b.sinuosity,
                );
            }
        }
    }
}

fn compare(cell: f32, levels: u32, a: &Measures, b: &Measures) {
    let at = format!("{cell} m, {levels} levels");
    println!(
        "{at}: relief {:.1} / {:.1} m, hypsometric integral {:.3} / {:.3}, concavity {:.3} / \
         {:.3}, drainage density {:.3e} / {:.3e} per m, 99.9th percentile {:.1} / {:.1} m, \
         sinuosity {:.3} / {:.3} (fine / coarse-to-fine)",
        a.relief,
        b.relief,
        a.hypsometric_integral,
        b.hypsometric_integral,
        a.concavity,
        b.concavity,
        a.drainage_density,
        b.drainage_density,
        a.top,
        b.top,
        a.sinuosity,
        b.sinuosity,
    );
    let relief = b.relief / a.relief - 1.0;
    assert!(
        relief.abs() <= 0.05,
        "{at}: relief {:+.1} %",
        100.0 * relief
    );
    assert!(
        (b.hypsometric_integral - a.hypsometric_integral).abs() <= 0.05,
        "{at}: hypsometric integral"
    );
    assert!((b.concavity - a.concavity).abs() <= 0.05, "{at}: concavity");
    // Issue #39 asks for 5 % at two and three levels. Three levels at 100 m kept 5.6 % less
    // channel length here while the warp reached half a coarse spacing (their rivers wound
    // less: 1.356 against 1.440), 7.4 % before the warp; at three quarters, 4.6 %.
    let density = b.drainage_density / a.drainage_density - 1.0;
    assert!(
        density.abs() <= 0.05,
        "{at}: drainage density {:+.1} %",
        100.0 * density
    );
}

fn run_text(text: &str) -> orogen_core::Result<orogen_core::World> {
    let r = Recipe::from_ron_str(text, "<test>")?;
    r.validate()?;
    let cancel = AtomicBool::new(false);
    run_recipe(&r, Path::new("."), &cancel, &mut |_: Event<'_>| {}).map(|o| o.world)
}

const SMALL: &str = "size: (129, 97), cell_size: 100.0, seed: 5, \
     terrain: Noise(wavelength: 4000.0, amplitude: 20.0), \
     uplift: Noise(noise: (octaves: 3, wavelength: 8000.0), min: 0.0, max: 0.002)";

#[test]
fn the_same_bytes_with_one_and_four_threads() {
    let text = format!(
        "({SMALL}, stages: [StreamPower(iterations: 40, schedule: CoarseToFine(levels: 3))])"
    );
    let run = |threads: usize| on_threads(threads, || run_text(&text).expect("run").height.data);
    let (a, b) = (run(1), run(4));
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    // And the schedule did something other than the plain run.
    let plain = run_text(&format!("({SMALL}, stages: [StreamPower(iterations: 40)])"))
        .unwrap()
        .height
        .data;
    assert_ne!(a, plain);
}

#[test]
fn every_step_is_reported_and_the_world_moves_during_coarse_levels() {
    // 40 iterations over 3 levels: 32 coarse, 4 and 4; one Step event each, and the world's
    // heights already change while the coarsest level runs (live views).
    let r = Recipe::from_ron_str(
        &format!(
            "({SMALL}, stages: [StreamPower(iterations: 40, schedule: CoarseToFine(levels: 3))])"
        ),
        "<test>",
    )
    .unwrap();
    let cancel = AtomicBool::new(false);
    let mut steps = 0;
    let mut first: Option<Vec<f32>> = None;
    let mut changed_early = false;
    let mut observer = |e: Event<'_>| {
        if let Event::Step {
            world, iteration, ..
        } = e
        {
            steps += 1;
            match &first {
                None => first = Some(world.height.data.clone()),
                Some(f) if iteration <= 16 => changed_early |= *f != world.height.data,
                _ => {}
            }
        }
    };
    run_recipe(&r, Path::new("."), &cancel, &mut observer).expect("run");
    assert_eq!(steps, 40);
    assert!(
        changed_early,
        "the world did not move during the coarsest level"
    );
}

#[test]
fn unsuitable_worlds_and_values_are_refused_naming_the_schedule() {
    let stage = |s: &str| format!("({SMALL}, stages: [StreamPower(schedule: {s})])");
    let cases = [
        (stage("CoarseToFine(levels: 0)"), "stages[0].StreamPower.schedule.levels"),
        (stage("CoarseToFine(levels: 9)"), "stages[0].StreamPower.schedule.levels"),
        // 97 rows at 8× coarser is 13 nodes: too few.
        (stage("CoarseToFine(levels: 4)"), "stages[0].StreamPower.schedule.levels"),
        (stage("CoarseToFine(refine: 0.0)"), "stages[0].StreamPower.schedule.refine"),
        (stage("CoarseToFine(refine: 0.7)"), "stages[0].StreamPower.schedule.refine"),
        (stage("CoarseToFine(detail: -1.0)"), "stages[0].StreamPower.schedule.detail"),
        (stage("CoarseToFine(detail: NaN)"), "stages[0].StreamPower.schedule.detail"),
        (
            format!(
                "({SMALL}, stages: [TimeLoop(iterations: 5, processes: \
                 [StreamPower(schedule: CoarseToFine())])])"
            ),
            "stages[0].TimeLoop.processes[0].StreamPower.schedule",
        ),
        (
            format!(
                "({SMALL}, domain: Graph(spacing: 600.0), \
                 stages: [StreamPower(schedule: CoarseToFine())])"
            ),
            "stages[0].StreamPower.schedule",
        ),
        (
            format!(
                "({SMALL}, strata: (layers: [(material: \"sandstone\", thickness: Constant(20.0))], \
                 bottom: \"granite\"), stages: [StreamPower(schedule: CoarseToFine())])"
            ),
            "stages[0].StreamPower.schedule",
        ),
    ];
    for (text, field) in cases {
        let e = run_text(&text)
            .err()
            .unwrap_or_else(|| panic!("accepted: {text}"));
        assert!(e.to_string().contains(field), "{text}: {e}");
    }
}
