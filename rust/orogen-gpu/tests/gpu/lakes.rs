//! Lake routing on the GPU (`lakes: Carve` and `Fill`) against orogen-core's router and
//! `StreamPower` with the same lakes, on terrains full of pits (lavapipe where the machine
//! has no GPU).

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::flow::accumulate::accumulate_f64;
use orogen_core::flow::{FlowRouter, OutletParams, Side, SinkMode};
use orogen_core::Grid;
use orogen_gpu::{GpuContext, GpuStreamPower};

use crate::common::{bits, ctx, Case};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn params(lakes: SinkMode) -> Params {
    Params {
        m: 0.5,
        n: 1.0,
        lakes,
    }
}

fn inputs(n: usize) -> Inputs {
    Inputs {
        k: vec![2e-4; n],
        uplift: vec![1e-3; n],
        precipitation: None,
    }
}

/// Terrains with many pits: uniform noise (a pit every few cells, lakes spilling into
/// lakes), integer heights (ties between passes), smooth hills with noise (larger lakes,
/// long carved chains), a sea with two open sides, non-square cells, a flat (every pass
/// tied), one open side. The
/// noise and integer terrains overflow the first candidate list, so it grows.
fn cases() -> Vec<Case> {
    let mut rng = ChaCha8Rng::seed_from_u64(4242);
    let all = OutletParams::default();
    let mut out = Vec::new();
    let mut add =
        |name, grid: Grid, outlets: OutletParams, f: &mut dyn FnMut(usize, usize) -> f32| {
            out.push(Case::new(name, grid, outlets, f))
        };
    let g = Grid::new(67, 45, 100.0).unwrap();
    add("uniform noise", g, all.clone(), &mut |_, _| {
        rng.random::<f32>() * 100.0
    });
    add("integers (ties)", g, all.clone(), &mut |_, _| {
        rng.random_range(0..6) as f32
    });
    // Thousands of lakes, many spilling through chains of other lakes.
    add(
        "uniform noise, 257 x 193",
        Grid::new(257, 193, 100.0).unwrap(),
        all.clone(),
        &mut |_, _| rng.random::<f32>() * 100.0,
    );
    let gh = Grid::new(120, 90, 50.0).unwrap();
    add("hills with noise", gh, all.clone(), &mut |x, y| {
        let (x, y) = (x as f32 / 9.0, y as f32 / 7.0);
        40.0 + 30.0 * (x.sin() * y.cos()) + rng.random::<f32>() * 4.0
    });
    let sea = OutletParams {
        borders: vec![Side::North, Side::West],
        sea_level: Some(2.0),
    };
    add("sea, two open sides", g, sea, &mut |_, _| {
        rng.random::<f32>() * 10.0
    });
    let gr = Grid::with_cells(40, 33, 30.0, 70.0).unwrap();
    add("non-square cells", gr, all.clone(), &mut |_, _| {
        rng.random_range(0..20) as f32 * 0.5
    });
    // Every inner cell a pit of its own and every pass at the same height: the spanning
    // tree is decided by the tie-breaks alone (node pair, then pass cells).
    add(
        "flat",
        Grid::new(30, 20, 10.0).unwrap(),
        all.clone(),
        &mut |_, _| 7.5,
    );
    let south = OutletParams {
        borders: vec![Side::South],
        sea_level: None,
    };
    add(
        "one open side",
        Grid::new(9, 70, 10.0).unwrap(),
        south,
        &mut |_, y| (70 - y) as f32 * 0.1 + rng.random::<f32>() * 3.0,
    );
    out
}

fn gpu_for(ctx: &GpuContext, case: &Case, lakes: SinkMode) -> GpuStreamPower {
    let mut gpu = GpuStreamPower::on_grid(
        ctx,
        case.grid,
        &case.outlets,
        &params(lakes),
        inputs(case.grid.len()),
        "sp",
    )
    .unwrap();
    gpu.set_heights(&case.heights).unwrap();
    gpu
}

/// Routes `case` on both sides with `lakes`, checks receivers, link lengths, lake counts
/// and drainage equal, and returns the CPU's and the GPU's heights after routing (Fill
/// raises them) and the count of lakes.
pub(crate) fn route_both(
    ctx: &GpuContext,
    case: &Case,
    lakes: SinkMode,
) -> (Vec<f32>, Vec<f32>, usize) {
    let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
    let mut want_h = case.heights.clone();
    router.route(&mut want_h, lakes).unwrap();
    let graph = router.graph();
    let mut gpu = gpu_for(ctx, case, lakes);
    gpu.route().unwrap();
    let got = gpu.receivers().unwrap();
    let differ: Vec<usize> = (0..got.len())
        .filter(|&i| got[i] != graph.receivers[i])
        .collect();
    assert!(
        differ.is_empty(),
        "{} {lakes:?}: {} of {} receivers differ, first at node {} (GPU {}, CPU {})",
        case.name,
        differ.len(),
        got.len(),
        differ[0],
        got[differ[0]],
        graph.receivers[differ[0]]
    );
    assert_eq!(
        bits(&gpu.dists().unwrap()),
        bits(&graph.dist),
        "{} {lakes:?}: link lengths",
        case.name
    );
    let lakes_found = router.passes().len();
    assert_eq!(
        gpu.lake_count().unwrap(),
        lakes_found,
        "{} {lakes:?}",
        case.name
    );
    // Every node drains to an outlet now: no pit is left.
    let outlets = |r: &[u32]| (0..r.len()).filter(|&i| r[i] as usize == i).count();
    assert_eq!(outlets(&got), router.roots().len(), "{}", case.name);
    let areas = vec![case.grid.cell_area() as f64; case.grid.len()];
    let mut want = vec![0.0f64; case.grid.len()];
    accumulate_f64(graph, &areas, &mut want);
    let drainage = gpu.drainage().unwrap();
    for i in 0..want.len() {
        assert!(
            (drainage[i] - want[i]).abs() <= 1e-9 * want[i],
            "{} {lakes:?}: drainage at {i}: {} against {}",
            case.name,
            drainage[i],
            want[i]
        );
    }
    (want_h, gpu.heights().unwrap(), lakes_found)
}

#[test]
fn carved_receivers_and_drainage_equal_the_cpus() {
    let ctx = ctx();
    for case in cases() {
        let (want, got, lakes) = route_both(&ctx, &case, SinkMode::Carve);
        eprintln!("{}: {lakes} lakes carved", case.name);
        assert!(lakes >= 5, "{}: only {lakes} lakes", case.name);
        // Carving does not change heights.
        assert_eq!(bits(&got), bits(&case.heights), "{}", case.name);
        assert_eq!(bits(&want), bits(&case.heights), "{}", case.name);
    }
}

#[test]
fn filled_lakes_equal_the_cpus() {
    let ctx = ctx();
    for case in cases() {
        let (want, got, lakes) = route_both(&ctx, &case, SinkMode::Fill { epsilon: 0.0 });
        assert_eq!(bits(&got), bits(&want), "{}: filled heights", case.name);
        let volume = |h: &[f32]| {
            h.iter()
                .zip(&case.heights)
                .map(|(&a, &b)| (a - b) as f64)
                .sum::<f64>()
                * case.grid.cell_area() as f64
        };
        let wet = |h: &[f32]| h.iter().zip(&case.heights).filter(|(a, b)| a > b).count();
        eprintln!(
            "{}: {lakes} lakes, {} cells filled, {:.1} m³",
            case.name,
            wet(&got),
            volume(&got)
        );
        assert!(lakes >= 5, "{}", case.name);
        // Filling raised something, except on the flat terrain, already level.
        assert!(case.name == "flat" || wet(&got) >= lakes, "{}", case.name);
        assert_eq!(volume(&got), volume(&want), "{}", case.name);
    }
}

/// A sloped water surface: the GPU adds ε over 2^k links at once where the CPU adds it link
/// by link, so the surfaces agree to rounding, not to the bit.
#[test]
fn filled_lakes_with_a_slope_follow_the_cpu() {
    let ctx = ctx();
    let epsilon = 1e-3;
    let lakes = SinkMode::Fill { epsilon };
    for case in cases() {
        let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
        let mut want = case.heights.clone();
        router.route(&mut want, lakes).unwrap();
        let mut gpu = gpu_for(&ctx, &case, lakes);
        gpu.route().unwrap();
        let got = gpu.heights().unwrap();
        let mut worst = 0.0f32;
        for (g, w) in got.iter().zip(&want) {
            worst = worst.max((g - w).abs() / w.abs().max(1.0));
        }
        let rcv = gpu.receivers().unwrap();
        let same = (0..rcv.len())
            .filter(|&i| rcv[i] == router.graph().receivers[i])
            .count();
        eprintln!(
            "{}: ε {epsilon}: heights within {worst:e}, {same} of {} receivers equal",
            case.name,
            rcv.len()
        );
        assert!(worst <= 1e-5, "{}: heights off by {worst:e}", case.name);
        assert!(
            same as f64 >= 0.9999 * rcv.len() as f64,
            "{}: {same} of {} receivers",
            case.name,
            rcv.len()
        );
    }
}

/// Pit-rich starts: noise of `noise` metres over a rise of 0.2 m per cell from the borders
/// (a pit every few cells), or with `bench` the bench's start (a metre per cell from the
/// border plus half a metre of noise: no pits).
fn start(seed: u64, w: usize, h: usize, noise: f32, bench: bool) -> (Grid, Vec<f32>) {
    let grid = Grid::new(w, h, 100.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rise = if bench { 1.0 } else { 0.2 };
    let heights = (0..grid.len())
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let border = x.min(y).min(w - 1 - x).min(h - 1 - y);
            border as f32 * rise + rng.random::<f32>() * noise
        })
        .collect();
    (grid, heights)
}

/// 20 steps of the parameters (dx 100 m, dt 1e4 yr, K 2e-4, m 0.5, n 1, U 1e-3
/// m/yr) on both sides. The solves round differently (f32 maps composed by doubling on the
/// GPU, f64 along the stack on the CPU), a few ulps a step; where two of a node's slopes
/// are that close, the steepest can differ, and that node's upstream follows another
/// receiver from then on. So: at most 0.1 % of the nodes beyond 1e-3 relative (in these
/// runs: none, or a handful behind one such flip), and the same bytes run after run.
#[test]
fn heights_after_twenty_steps_with_lakes_follow_the_cpu_to_1e_3() {
    let ctx = ctx();
    let outlets = OutletParams::default();
    for lakes in [SinkMode::Carve, SinkMode::Fill { epsilon: 0.0 }] {
        for (seed, w, h, noise, bench, u) in [
            (1, 96, 80, 5.0, false, 1e-3),
            (2, 129, 129, 2.5, false, 1e-3),
            (3, 96, 80, 60.0, false, 1e-3),
            (4, 129, 129, 0.5, true, 1e-3),
            // Slow uplift (0.1 m a step): lakes last, carved paths feed every solve.
            (5, 96, 80, 5.0, false, 1e-5),
        ] {
            let inputs = |n: usize| Inputs {
                uplift: vec![u; n],
                ..inputs(n)
            };
            let (grid, start) = start(seed, w, h, noise, bench);
            let n = grid.len();
            let mut cpu =
                StreamPower::on_grid(grid, &outlets, &params(lakes), inputs(n), false, "sp")
                    .unwrap();
            let mut want = start.clone();
            let mut gpu =
                GpuStreamPower::on_grid(&ctx, grid, &outlets, &params(lakes), inputs(n), "sp")
                    .unwrap();
            gpu.set_heights(&start).unwrap();
            let mut lake_steps = Vec::new();
            for _ in 0..20 {
                cpu.step_heights(&mut want, 1e4).unwrap();
                gpu.step(1e4).unwrap();
                lake_steps.push(gpu.lake_count().unwrap());
            }
            let got = gpu.heights().unwrap();
            let mean = want.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
            let rel = |i: usize| {
                let (g, c) = (got[i] as f64, want[i] as f64);
                (g - c).abs() / c.abs().max(1e-3 * mean)
            };
            let worst = (0..n).map(rel).fold(0.0f64, f64::max);
            let off = (0..n).filter(|&i| rel(i) > 1e-3).count();
            eprintln!(
                "{lakes:?} {w}x{h} noise {noise} U {u}: lakes per step {lake_steps:?}, mean height \
                 {mean:.3} m, worst relative difference {worst:e}, {off} nodes beyond 1e-3"
            );
            if !bench {
                assert!(lake_steps[0] >= 20, "{lakes:?} {w}x{h}: {lake_steps:?}");
            }
            assert!(
                off * 1000 <= n,
                "{lakes:?} {w}x{h}: {off} nodes beyond 1e-3 relative (worst {worst:e})"
            );
            let mut again =
                GpuStreamPower::on_grid(&ctx, grid, &outlets, &params(lakes), inputs(n), "sp")
                    .unwrap();
            again.set_heights(&start).unwrap();
            for _ in 0..20 {
                again.step(1e4).unwrap();
            }
            assert_eq!(bits(&got), bits(&again.heights().unwrap()), "{lakes:?}");
        }
    }
}

/// Speculative lake steps: steps not yet settled when the heights are set again are
/// forgotten (not redone on the new heights), and a run settled only at the end gives the
/// bytes of one settled step by step.
#[test]
fn unsettled_steps_are_forgotten_by_set_heights() {
    let ctx = ctx();
    let outlets = OutletParams::default();
    let (grid, pits) = start(6, 64, 48, 5.0, false);
    let (_, ramp) = start(7, 64, 48, 0.5, true);
    let n = grid.len();
    let make = || {
        GpuStreamPower::on_grid(
            &ctx,
            grid,
            &outlets,
            &params(SinkMode::Carve),
            inputs(n),
            "sp",
        )
        .unwrap()
    };
    // Three steps on a start with pits (all skipped so far), then the ramp and one step.
    let mut gpu = make();
    gpu.set_heights(&pits).unwrap();
    for _ in 0..3 {
        gpu.step(1e4).unwrap();
    }
    gpu.set_heights(&ramp).unwrap();
    gpu.step(1e4).unwrap();
    let mut fresh = make();
    fresh.set_heights(&ramp).unwrap();
    fresh.step(1e4).unwrap();
    assert_eq!(
        bits(&gpu.heights().unwrap()),
        bits(&fresh.heights().unwrap())
    );
    // Five steps on the start with pits, settled at the end or after each step.
    let mut late = make();
    late.set_heights(&pits).unwrap();
    let mut each = make();
    each.set_heights(&pits).unwrap();
    let mut lakes = 0;
    for _ in 0..5 {
        late.step(1e4).unwrap();
        each.step(1e4).unwrap();
        lakes += each.lake_count().unwrap();
    }
    assert!(lakes > 20, "{lakes} lakes");
    assert_eq!(
        bits(&late.heights().unwrap()),
        bits(&each.heights().unwrap())
    );
    // The late run skipped the steps after the first pit (control.wgsl's `enter`), until
    // `step` saw a skip or the end; settle ran the first skipped one with its lakes and any
    // others speculatively again (how many depends on when the skip was seen).
    let [skipped, full, again] = late.steps_redone();
    assert_eq!(skipped, full + again, "{:?}", late.steps_redone());
    assert!(full >= 1, "{:?}", late.steps_redone());
}

/// The spanning tree by Borůvka on the GPU (`route`) against Kruskal on the CPU over the
/// read-back candidates (`route_with_cpu_tree`), on the pit-rich terrains above and on
/// more with many tied passes (heights of few integer values, a larger flat, terraces): the
/// same receivers and link lengths bit for bit (a lake drained through another pass would
/// give its pass cell another receiver), the same lake count, the same drainage bytes.
#[test]
fn boruvka_on_the_gpu_chooses_the_cpu_trees_passes() {
    let ctx = ctx();
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let mut all = cases();
    let all_sides = OutletParams::default();
    for (name, w, h, levels) in [
        ("integers 0..3, 131 x 97", 131, 97, 3),
        ("integers 0..2, 64 x 64", 64, 64, 2),
    ] {
        let grid = Grid::new(w, h, 100.0).unwrap();
        let heights = (0..grid.len())
            .map(|_| rng.random_range(0..levels) as f32)
            .collect();
        all.push(Case {
            name,
            grid,
            outlets: all_sides.clone(),
            heights,
        });
    }
    let grid = Grid::new(80, 50, 10.0).unwrap();
    all.push(Case {
        name: "flat, 80 x 50",
        grid,
        outlets: all_sides.clone(),
        heights: vec![3.0; grid.len()],
    });
    let grid = Grid::new(90, 70, 10.0).unwrap();
    let terraces = (0..grid.len())
        .map(|i| {
            let (x, y) = ((i % 90) as f32, (i / 90) as f32);
            ((x * 0.3).sin() * 3.0 + (y * 0.2).cos() * 3.0).round() + rng.random_range(0..2) as f32
        })
        .collect();
    all.push(Case {
        name: "terraces",
        grid,
        outlets: all_sides,
        heights: terraces,
    });
    for case in &all {
        for lakes in [SinkMode::Carve, SinkMode::Fill { epsilon: 0.0 }] {
            let mut gpu = gpu_for(&ctx, case, lakes);
            gpu.route().unwrap();
            let got = (
                gpu.receivers().unwrap(),
                bits(&gpu.dists().unwrap()),
                gpu.lake_count().unwrap(),
                gpu.drainage_fixed().unwrap(),
                bits(&gpu.heights().unwrap()),
            );
            let mut cpu_tree = gpu_for(&ctx, case, lakes);
            cpu_tree.route_with_cpu_tree().unwrap();
            let want = (
                cpu_tree.receivers().unwrap(),
                bits(&cpu_tree.dists().unwrap()),
                cpu_tree.lake_count().unwrap(),
                cpu_tree.drainage_fixed().unwrap(),
                bits(&cpu_tree.heights().unwrap()),
            );
            let differ = (0..got.0.len()).filter(|&i| got.0[i] != want.0[i]).count();
            assert_eq!(differ, 0, "{} {lakes:?}: receivers differ", case.name);
            assert!(got.2 >= 5, "{}: only {} lakes", case.name, got.2);
            assert!(got == want, "{} {lakes:?}", case.name);
            eprintln!("{} {lakes:?}: {} lakes, the same passes", case.name, got.2);
        }
    }
}
