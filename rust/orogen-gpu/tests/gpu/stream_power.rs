//! The GPU stream-power step against orogen-core's CPU path, on Mesa's lavapipe where the
//! machine has no GPU. Without any Vulkan adapter these tests fail, saying what to install.

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::flow::accumulate::accumulate_f64;
use orogen_core::flow::{FlowRouter, OutletParams, Side, SinkMode};
use orogen_core::Grid;
use orogen_gpu::{GpuContext, GpuStreamPower};

use crate::common::{ctx, inputs, run_to_steady, slope_area_fit, Case};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const NO_LAKES: Params = Params {
    m: 0.5,
    n: 1.0,
    lakes: SinkMode::None,
};

/// Terrains that exercise the receivers' rules: uniform noise, integer heights (many equal
/// slopes, so ties), fine steps of 2^-10 m on 1 m cells (slopes equal after rounding), a
/// tilted surface with pits, flats, non-square cells, a sea and subsets of open sides.
fn cases() -> Vec<Case> {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
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
    let g1 = Grid::new(50, 61, 1.0).unwrap();
    add(
        "2^-10 m steps on 1 m cells",
        g1,
        all.clone(),
        &mut |x, y| ((x + 2 * y) as f32 + rng.random_range(0..4) as f32) / 1024.0,
    );
    add("tilt, pits and flats", g, all.clone(), &mut |x, y| {
        let base = (x as f32 * 0.7 + y as f32 * 0.3).floor();
        if rng.random::<f32>() < 0.1 {
            base - 3.0
        } else {
            base
        }
    });
    let gr = Grid::with_cells(40, 33, 30.0, 70.0).unwrap();
    add("non-square cells", gr, all.clone(), &mut |_, _| {
        rng.random_range(0..20) as f32 * 0.5
    });
    let sea = OutletParams {
        borders: vec![Side::North, Side::West],
        sea_level: Some(2.0),
    };
    add("sea, two open sides", g, sea, &mut |_, _| {
        rng.random::<f32>() * 10.0
    });
    // A serpentine river between walls, one chain over most of the grid: every
    // pointer-jumping round is needed, so stopping the rounds early shows.
    let (sw, sh) = (24usize, 31usize);
    let lanes: Vec<usize> = (1..sh).step_by(2).collect();
    let mut path = vec![0usize; sw * sh];
    let mut along = 1usize;
    for (k, &y) in lanes.iter().enumerate() {
        let xs: Vec<usize> = if k % 2 == 0 {
            (1..sw - 1).collect()
        } else {
            (1..sw - 1).rev().collect()
        };
        for x in xs {
            path[y * sw + x] = along;
            along += 1;
        }
        // The gap in the wall below this lane, at the lane's end.
        if y + 1 < sh - 1 {
            let end = if k % 2 == 0 { sw - 2 } else { 1 };
            path[(y + 1) * sw + end] = along;
            along += 1;
        }
    }
    let north = OutletParams {
        borders: vec![Side::North],
        sea_level: None,
    };
    add(
        "serpentine river",
        Grid::new(sw, sh, 10.0).unwrap(),
        north,
        &mut |x, y| match path[y * sw + x] {
            0 if y == 0 => 0.0,
            0 => 1e4,
            d => d as f32,
        },
    );
    let south = OutletParams {
        borders: vec![Side::South],
        sea_level: None,
    };
    add(
        "one open side",
        Grid::new(3, 70, 10.0).unwrap(),
        south,
        &mut |_, y| (70 - y) as f32 + rng.random::<f32>(),
    );
    out
}

fn gpu_for(ctx: &GpuContext, case: &Case) -> GpuStreamPower {
    let n = case.grid.len();
    let mut gpu = GpuStreamPower::on_grid(
        ctx,
        case.grid,
        &case.outlets,
        &NO_LAKES,
        inputs(n, 2e-4, 1e-3),
        "sp",
    )
    .unwrap();
    gpu.set_heights(&case.heights).unwrap();
    gpu
}

#[test]
fn receivers_equal_the_cpu_routers() {
    let ctx = ctx();
    for case in cases() {
        let mut cpu = FlowRouter::new(case.grid, &case.outlets).unwrap();
        cpu.steepest_descent(&case.heights).unwrap();
        let mut gpu = gpu_for(&ctx, &case);
        gpu.route().unwrap();
        let got = gpu.receivers().unwrap();
        let want = &cpu.graph().receivers;
        let differ: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
        assert!(
            differ.is_empty(),
            "{}: {} receivers differ, first at node {} (GPU {}, CPU {})",
            case.name,
            differ.len(),
            differ[0],
            got[differ[0]],
            want[differ[0]]
        );
        // The test is not empty: some nodes drain elsewhere and some receive themselves.
        let own = (0..want.len()).filter(|&i| want[i] as usize == i).count();
        assert!(own > 0 && own < want.len(), "{}", case.name);
    }
}

/// receivers.wgsl's slope division (a product corrected by its remainder, exact in
/// integers; the long division where that cannot decide) gives the CPU's correctly rounded
/// f32 quotient bit for bit: drops of many magnitudes (subnormal ones and quotients that
/// overflow included), drops that are the product of a random quotient and the distance,
/// one ulp either side (the exact quotient then sits close to a float or to halfway between
/// two), over the distances of square and non-square cells and random ones.
#[test]
fn the_slopes_division_is_correctly_rounded() {
    let ctx = ctx();
    let grid = Grid::new(1024, 512, 100.0).unwrap();
    let n = grid.len();
    let mut gpu = GpuStreamPower::on_grid(
        &ctx,
        grid,
        &OutletParams::default(),
        &NO_LAKES,
        inputs(n, 2e-4, 1e-3),
        "sp",
    )
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let fixed = [
        100.0f32,
        100.0 * std::f32::consts::SQRT_2,
        1.0,
        std::f32::consts::SQRT_2,
        30.0,
        50.0,
        0.3,
        3.0e-3,
    ];
    let (mut a, mut d) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let di = if i % 3 == 0 {
            f32::from_bits(rng.random_range(0x3c00_0000u32..0x4600_0000))
        } else {
            fixed[rng.random_range(0..fixed.len())]
        };
        let ai = match i % 5 {
            // Any drop from 2^-40 to 2^40.
            0 => f32::from_bits(rng.random_range(0x2b80_0000u32..0x5380_0000)),
            // Subnormal drops, and quotients near f32::MAX or past it.
            1 if i % 10 == 1 => f32::from_bits(rng.random_range(1u32..0x0080_0000)),
            1 => f32::from_bits(rng.random_range(0x7e80_0000u32..0x7f80_0000)),
            // A random quotient times the distance, and one ulp either side.
            k => {
                let q = f32::from_bits(rng.random_range(0x3000_0000u32..0x4f00_0000));
                let p = (q * di).to_bits();
                f32::from_bits(p + 2 - k as u32 + 1)
            }
        };
        a.push(ai);
        d.push(di);
    }
    let got = gpu.quotient_bits(&a, &d).unwrap();
    let differ: Vec<usize> = (0..n)
        .filter(|&i| got[i] != (a[i] / d[i]).to_bits())
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {n} quotients differ, first {} / {}: GPU {:#x}, CPU {:#x}",
        differ.len(),
        a[differ[0]],
        d[differ[0]],
        got[differ[0]],
        (a[differ[0]] / d[differ[0]]).to_bits()
    );
}

#[test]
fn drainage_equals_the_cpus_and_repeats_bit_for_bit() {
    let ctx = ctx();
    for case in cases() {
        let mut router = FlowRouter::new(case.grid, &case.outlets).unwrap();
        let mut h = case.heights.clone();
        let graph = router.route(&mut h, SinkMode::None).unwrap();
        let areas = vec![case.grid.cell_area() as f64; case.grid.len()];
        let mut want = vec![0.0f64; case.grid.len()];
        accumulate_f64(graph, &areas, &mut want);
        let mut gpu = gpu_for(&ctx, &case);
        gpu.route().unwrap();
        let got = gpu.drainage().unwrap();
        let mut worst = 0.0f64;
        for (g, w) in got.iter().zip(&want) {
            worst = worst.max((g - w).abs() / w);
        }
        eprintln!(
            "{}: drainage within {worst:e} relative of the CPU's",
            case.name
        );
        assert!(
            worst <= 1e-6,
            "{}: drainage off by {worst:e} relative",
            case.name
        );
        assert!(want.iter().any(|&a| a > 4.0 * areas[0]), "{}", case.name);
        let first = gpu.drainage_fixed().unwrap();
        gpu.route().unwrap();
        assert_eq!(first, gpu.drainage_fixed().unwrap(), "{}: run 2", case.name);
        let mut other = gpu_for(&ctx, &case);
        other.route().unwrap();
        assert_eq!(
            first,
            other.drainage_fixed().unwrap(),
            "{}: a second process",
            case.name
        );
    }
}

#[test]
fn drainage_with_precipitation_is_discharge() {
    let ctx = ctx();
    let grid = Grid::new(48, 40, 50.0).unwrap();
    let n = grid.len();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let heights: Vec<f32> = (0..n)
        .map(|i| (i % 48) as f32 + rng.random::<f32>() * 30.0)
        .collect();
    let rain: Vec<f32> = (0..n).map(|_| rng.random::<f32>() * 2.0).collect();
    let outlets = OutletParams::default();
    let mut gpu = GpuStreamPower::on_grid(
        &ctx,
        grid,
        &outlets,
        &NO_LAKES,
        Inputs {
            precipitation: Some(rain.clone()),
            ..inputs(n, 1e-4, 0.0)
        },
        "sp",
    )
    .unwrap();
    gpu.set_heights(&heights).unwrap();
    gpu.route().unwrap();
    let got = gpu.drainage().unwrap();
    let mut router = FlowRouter::new(grid, &outlets).unwrap();
    let mut h = heights.clone();
    let graph = router.route(&mut h, SinkMode::None).unwrap();
    let weights: Vec<f64> = rain
        .iter()
        .map(|&r| grid.cell_area() as f64 * r as f64)
        .collect();
    let mut want = vec![0.0f64; n];
    accumulate_f64(graph, &weights, &mut want);
    for i in 0..n {
        assert!(
            (got[i] - want[i]).abs() <= 1e-9 * want[i].max(1.0),
            "node {i}: {} against {}",
            got[i],
            want[i]
        );
    }
}

/// The parameters: dx 100 m, dt 1e4 yr, K 2e-4, m 0.5, n 1, U 1e-3 m/yr.
fn twenty_steps_case(seed: u64, w: usize, h: usize) -> (Grid, Vec<f32>) {
    let grid = Grid::new(w, h, 100.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // A pit-free start: one metre per cell from the nearest border, plus up to half a metre
    // of noise, so every inner cell has a lower neighbour.
    let heights = (0..grid.len())
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let border = x.min(y).min(w - 1 - x).min(h - 1 - y);
            border as f32 + rng.random::<f32>() * 0.5
        })
        .collect();
    (grid, heights)
}

#[test]
fn heights_after_twenty_steps_follow_the_cpu_to_1e_3() {
    let ctx = ctx();
    // The third: only the west side open and a sea at 3 m, on a start rising eastwards
    // (x metres plus noise, so still without pits): sea cells are outlets and stay put.
    let west_sea = OutletParams {
        borders: vec![Side::West],
        sea_level: Some(3.0),
    };
    for (seed, w, h, outlets) in [
        (1, 96, 80, OutletParams::default()),
        (2, 129, 129, OutletParams::default()),
        (3, 64, 48, west_sea),
    ] {
        let (grid, mut start) = twenty_steps_case(seed, w, h);
        if outlets.borders == [Side::West] {
            for (i, v) in start.iter_mut().enumerate() {
                *v = (i % w) as f32 + v.fract();
            }
        }
        let n = grid.len();
        let mut cpu = StreamPower::on_grid(
            grid,
            &outlets,
            &NO_LAKES,
            inputs(n, 2e-4, 1e-3),
            false,
            "sp",
        )
        .unwrap();
        let mut want = start.clone();
        let mut gpu =
            GpuStreamPower::on_grid(&ctx, grid, &outlets, &NO_LAKES, inputs(n, 2e-4, 1e-3), "sp")
                .unwrap();
        gpu.set_heights(&start).unwrap();
        for _ in 0..20 {
            cpu.step_heights(&mut want, 1e4).unwrap();
            gpu.step(1e4).unwrap();
        }
        let got = gpu.heights().unwrap();
        let mean = want.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        let mut worst = 0.0f64;
        for i in 0..n {
            let (g, c) = (got[i] as f64, want[i] as f64);
            // Relative to the node's height; outlets stay at their start on both sides.
            worst = worst.max((g - c).abs() / c.abs().max(1e-3 * mean));
        }
        eprintln!("{w}x{h}: mean height {mean:.3} m, worst relative difference {worst:e}");
        assert!(
            worst <= 1e-3,
            "{w}x{h}: heights differ by {worst:e} relative"
        );
        // The step did something: uplift 20 m against erosion.
        let start_mean = start.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        assert!(
            (mean - start_mean).abs() > 1.0,
            "mean {start_mean} -> {mean}"
        );
        // Same bytes run after run.
        let mut again =
            GpuStreamPower::on_grid(&ctx, grid, &outlets, &NO_LAKES, inputs(n, 2e-4, 1e-3), "sp")
                .unwrap();
        again.set_heights(&start).unwrap();
        for _ in 0..20 {
            again.step(1e4).unwrap();
        }
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&again.heights().unwrap()));
    }
}

#[test]
fn unsupported_settings_are_errors_naming_their_field() {
    let ctx = ctx();
    let grid = Grid::new(8, 8, 10.0).unwrap();
    let all = OutletParams::default();
    let err = |params: Params, outlets: &OutletParams, inputs: Inputs| match GpuStreamPower::on_grid(
        &ctx,
        grid,
        outlets,
        &params,
        inputs,
        "stages[0].StreamPower",
    ) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    let e = err(
        Params {
            n: -2.0,
            ..NO_LAKES
        },
        &all,
        inputs(64, 1e-4, 0.0),
    );
    assert!(e.contains("stages[0].StreamPower.n"), "{e}");
    // Lakes are routed (gpu/lakes.rs), but a bad Fill slope is refused by name.
    let e = err(
        Params {
            lakes: SinkMode::Fill { epsilon: -1.0 },
            ..NO_LAKES
        },
        &all,
        inputs(64, 1e-4, 0.0),
    );
    assert!(
        e.contains("stages[0].StreamPower.lakes.Fill.epsilon"),
        "{e}"
    );
    for lakes in [SinkMode::Carve, SinkMode::Fill { epsilon: 0.5 }] {
        assert!(GpuStreamPower::supports(&Params { lakes, ..NO_LAKES }, &all, "sp").is_ok());
    }
    let closed = OutletParams {
        borders: vec![],
        sea_level: None,
    };
    let e = err(NO_LAKES, &closed, inputs(64, 1e-4, 0.0));
    assert!(e.contains("borders"), "{e}");
    // The same answers without a GPU, for a `device: Auto` switch.
    assert!(GpuStreamPower::supports(&NO_LAKES, &all, "sp").is_ok());
    assert!(GpuStreamPower::supports(&Params { n: 2.0, ..NO_LAKES }, &all, "sp").is_ok());
    let e = GpuStreamPower::supports(&Params { n: 0.0, ..NO_LAKES }, &all, "sp").unwrap_err();
    assert!(e.to_string().contains("sp.n"), "{e}");
    let e = GpuStreamPower::supports(&NO_LAKES, &closed, "sp").unwrap_err();
    assert!(e.to_string().contains("sp.outlets.borders"), "{e}");
    let e = err(NO_LAKES, &all, inputs(63, 1e-4, 0.0));
    assert!(
        e.contains("stages[0].StreamPower.k") && e.contains("63"),
        "{e}"
    );
    let mut k = inputs(64, 1e-4, 0.0);
    k.uplift[5] = f32::NAN;
    let e = err(NO_LAKES, &all, k);
    assert!(e.contains("uplift") && e.contains("node 5"), "{e}");

    let mut gpu =
        GpuStreamPower::on_grid(&ctx, grid, &all, &NO_LAKES, inputs(64, 1e-4, 0.0), "sp").unwrap();
    let e = gpu.step(1e4).unwrap_err().to_string();
    assert!(e.contains("heights") && e.contains("set_heights"), "{e}");
    let mut h = vec![1.0f32; 64];
    h[9] = f32::INFINITY;
    let e = gpu.set_heights(&h).unwrap_err().to_string();
    assert!(e.contains("heights") && e.contains("node 9"), "{e}");
    let e = gpu.set_heights(&h[..10]).unwrap_err().to_string();
    assert!(e.contains("heights") && e.contains("10 values"), "{e}");
    gpu.set_heights(&[1.0; 64]).unwrap();
    for dt in [0.0, -1.0, f64::NAN, 1e12] {
        let e = gpu.step(dt).unwrap_err().to_string();
        assert!(e.contains("dt"), "{dt}: {e}");
    }
    let e = gpu.drainage().unwrap_err().to_string();
    assert!(e.contains("drainage"), "{e}");
}

/// The analytic steady state of ∂h/∂t = U − K A^m S (n = 1): S = (U/K) A^(−m) on every
/// channel, as orogen-core's steady_state_slope_area_n1 checks on the CPU (101², 100 m
/// cells, U 1e-3 m/yr, K 1e-5, m 0.5, dt 1e5 yr, steady when no height moves 2 mm a step).
#[test]
fn steady_state_slope_area_n1() {
    let ctx = ctx();
    let (grid, start) = twenty_steps_case(11, 101, 101);
    let n = grid.len();
    let (u, k, dt) = (1e-3f32, 1e-5f32, 1e5);
    let outlets = OutletParams::default();
    let mut gpu =
        GpuStreamPower::on_grid(&ctx, grid, &outlets, &NO_LAKES, inputs(n, k, u), "sp").unwrap();
    let (steps, before) = run_to_steady(&mut gpu, &start, dt);
    gpu.route().unwrap();
    let (rcv, area) = (gpu.receivers().unwrap(), gpu.drainage().unwrap());
    let threshold = 20.0 * grid.cell_area() as f64;
    let (exponent, ks, cells) = slope_area_fit(grid, &before, &rcv, &area, threshold);
    let expected = (u / k) as f64;
    eprintln!(
        "GPU: steady after {steps} steps, {cells} channel nodes, θ {:.5} (expected 0.5), \
         ks {ks:.4} (expected {expected})",
        -exponent
    );
    assert!(cells > 500, "too few channel nodes: {cells}");
    assert!((exponent + 0.5).abs() <= 1e-3, "θ {}", -exponent);
    assert!(
        (ks / expected - 1.0).abs() <= 1e-3,
        "ks {ks} against {expected}"
    );
}

/// The three ways the shader takes A^m: sqrt (m = 0.5, above), A itself (m = 1) and pow
/// (any other m), each against the CPU after 20 steps.
#[test]
fn other_area_exponents_follow_the_cpu_to_1e_3() {
    let ctx = ctx();
    let (grid, start) = twenty_steps_case(5, 72, 60);
    let n = grid.len();
    let outlets = OutletParams::default();
    for (m, k) in [(1.0f32, 2e-7f32), (0.4, 1e-3), (0.7, 2e-5)] {
        let params = Params { m, ..NO_LAKES };
        let mut cpu =
            StreamPower::on_grid(grid, &outlets, &params, inputs(n, k, 1e-3), false, "sp").unwrap();
        let mut gpu =
            GpuStreamPower::on_grid(&ctx, grid, &outlets, &params, inputs(n, k, 1e-3), "sp")
                .unwrap();
        let mut want = start.clone();
        gpu.set_heights(&start).unwrap();
        for _ in 0..20 {
            cpu.step_heights(&mut want, 1e4).unwrap();
            gpu.step(1e4).unwrap();
        }
        let got = gpu.heights().unwrap();
        let worst = got
            .iter()
            .zip(&want)
            .map(|(&g, &c)| ((g - c).abs() / c.abs().max(1e-2)) as f64)
            .fold(0.0, f64::max);
        let eroded = want
            .iter()
            .zip(&start)
            .filter(|(&c, &s)| c < s + 20.0 * 1e-3 * 1e4 - 1.0)
            .count();
        eprintln!("m = {m}: worst relative difference {worst:e}, {eroded} nodes eroded > 1 m");
        assert!(
            worst <= 1e-3,
            "m = {m}: heights differ by {worst:e} relative"
        );
        assert!(eroded > n / 10, "m = {m}: only {eroded} nodes eroded");
    }
}

/// A serpentine river between walls of 1e4 m on `w` x `h` cells, its mouth at the north
/// side: one chain of receivers over most of the grid.
fn serpentine(w: usize, h: usize) -> Vec<f32> {
    let mut path = vec![0usize; w * h];
    let mut along = 1usize;
    for (k, y) in (1..h).step_by(2).enumerate() {
        let xs: Vec<usize> = if k % 2 == 0 {
            (1..w - 1).collect()
        } else {
            (1..w - 1).rev().collect()
        };
        for x in xs {
            path[y * w + x] = along;
            along += 1;
        }
        if y + 1 < h - 1 {
            path[(y + 1) * w + if k % 2 == 0 { w - 2 } else { 1 }] = along;
            along += 1;
        }
    }
    (0..w * h)
        .map(|i| match path[i] {
            0 if i < w => 0.0,
            0 => 1e4,
            d => d as f32,
        })
        .collect()
}

/// A speculative step encodes only the exits' rounds the last settled steps needed (and a
/// pair more); a step they do not suffice for is skipped and redone with every round. A
/// stepper that learnt few rounds on short chains (a cone) and then meets one long chain
/// (a serpentine river crossing its 16 x 16 tiles some 70 times) gives the bytes of a fresh
/// stepper, which encodes every round, and follows the CPU.
#[test]
fn too_few_learnt_rounds_are_redone_with_every_round() {
    let ctx = ctx();
    let (w, h) = (48, 47);
    let grid = Grid::new(w, h, 10.0).unwrap();
    let n = grid.len();
    let outlets = OutletParams {
        borders: vec![Side::North],
        sea_level: None,
    };
    let carve = Params {
        m: 0.5,
        n: 1.0,
        lakes: SinkMode::Carve,
    };
    let make = || {
        GpuStreamPower::on_grid(&ctx, grid, &outlets, &carve, inputs(n, 2e-4, 1e-3), "sp").unwrap()
    };
    // Short chains: a metre per cell from the north side.
    let cone: Vec<f32> = (0..n)
        .map(|i| (i / w) as f32 + 0.01 * (i % w) as f32)
        .collect();
    let mut learnt = make();
    learnt.set_heights(&cone).unwrap();
    for _ in 0..3 {
        learnt.step(1e4).unwrap();
    }
    learnt.wait().unwrap();
    let river = serpentine(w, h);
    learnt.set_heights(&river).unwrap();
    let mut fresh = make();
    fresh.set_heights(&river).unwrap();
    let mut cpu =
        StreamPower::on_grid(grid, &outlets, &carve, inputs(n, 2e-4, 1e-3), false, "sp").unwrap();
    let mut want = river.clone();
    for _ in 0..5 {
        learnt.step(1e4).unwrap();
        fresh.step(1e4).unwrap();
        cpu.step_heights(&mut want, 1e4).unwrap();
    }
    let got = learnt.heights().unwrap();
    let other = fresh.heights().unwrap();
    let differ = (0..n)
        .filter(|&i| got[i].to_bits() != other[i].to_bits())
        .count();
    assert_eq!(
        differ, 0,
        "{differ} of {n} heights differ from a fresh stepper's"
    );
    let mut worst = 0.0f64;
    for i in 0..n {
        let (g, c) = (got[i] as f64, want[i] as f64);
        worst = worst.max((g - c).abs() / c.abs().max(1.0));
    }
    assert!(worst <= 1e-3, "heights differ from the CPU's by {worst:e}");
    // The river eroded: its mouth's chain carries the whole grid's drainage.
    let moved = (0..n).filter(|&i| got[i] != river[i]).count();
    assert!(moved > n / 2, "only {moved} of {n} nodes moved");
}

/// `profile_step` runs the step phase by phase (a compute pass each, timed): the same bytes
/// as `step`, with and without lakes, and a time for each phase.
#[test]
fn a_profiled_step_gives_the_steps_bytes() {
    let ctx = ctx();
    let (grid, start) = twenty_steps_case(7, 70, 53);
    let n = grid.len();
    for lakes in [SinkMode::None, SinkMode::Carve] {
        let params = Params {
            m: 0.5,
            n: 1.0,
            lakes,
        };
        let make = || {
            let mut g = GpuStreamPower::on_grid(
                &ctx,
                grid,
                &OutletParams::default(),
                &params,
                inputs(n, 2e-4, 1e-3),
                "sp",
            )
            .unwrap();
            g.set_heights(&start).unwrap();
            g
        };
        let (mut stepped, mut profiled) = (make(), make());
        for _ in 0..3 {
            stepped.step(1e4).unwrap();
            let (times, _) = profiled.profile_step(1e4).unwrap();
            assert_eq!(times.len(), orogen_gpu::PHASES.len() + 1);
            assert!(times.iter().all(|(_, ms)| ms.is_finite() && *ms >= 0.0));
        }
        let (a, b) = (stepped.heights().unwrap(), profiled.heights().unwrap());
        assert!(
            a.iter().zip(&start).any(|(x, y)| x != y),
            "{lakes:?}: no change"
        );
        let differ = (0..n).filter(|&i| a[i].to_bits() != b[i].to_bits()).count();
        assert_eq!(differ, 0, "{lakes:?}: {differ} of {n} heights differ");
    }
}
