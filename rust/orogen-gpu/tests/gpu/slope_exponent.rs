//! The GPU step with a slope exponent n ≠ 1 (the per-node Newton solve, level by level)
//! against orogen-core's `StreamPower` and the analytic steady state.

use orogen_core::eroders::stream_power::{Params, StreamPower};
use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::Grid;
use orogen_gpu::GpuStreamPower;

use crate::common::{bits, ctx, inputs, run_to_steady, slope_area_fit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A pit-free start: `rise` metres per cell from the nearest border plus up to half a metre
/// of noise.
fn ramp(seed: u64, w: usize, h: usize, rise: f32) -> (Grid, Vec<f32>) {
    let grid = Grid::new(w, h, 100.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let heights = (0..grid.len())
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let border = x.min(y).min(w - 1 - x).min(h - 1 - y);
            border as f32 * rise + rng.random::<f32>() * 0.5
        })
        .collect();
    (grid, heights)
}

/// 20 steps at n = 2 and n = 0.7 (dx 100 m, dt 1e4 yr, U 1e-3 m/yr; K scaled so erosion
/// and uplift are of one size), with `lakes: None` on a ramp and `Carve` on a start with
/// pits: within 1e-3 relative of the CPU, the same bytes run after run.
#[test]
fn heights_after_twenty_steps_at_n_2_and_0_7_follow_the_cpu() {
    let ctx = ctx();
    let outlets = OutletParams::default();
    for (n_exp, m, k) in [(2.0f32, 1.0f32, 2e-8f32), (0.7, 0.35, 2e-4)] {
        for (lakes, rise) in [(SinkMode::None, 1.0), (SinkMode::Carve, 0.05)] {
            let params = Params { m, n: n_exp, lakes };
            let (grid, start) = ramp(5, 80, 64, rise);
            let n = grid.len();
            let mut cpu =
                StreamPower::on_grid(grid, &outlets, &params, inputs(n, k, 1e-3), false, "sp")
                    .unwrap();
            let mut want = start.clone();
            let mut gpu =
                GpuStreamPower::on_grid(&ctx, grid, &outlets, &params, inputs(n, k, 1e-3), "sp")
                    .unwrap();
            gpu.set_heights(&start).unwrap();
            let mut lakes_seen = 0;
            for _ in 0..20 {
                cpu.step_heights(&mut want, 1e4).unwrap();
                gpu.step(1e4).unwrap();
                lakes_seen += gpu.lake_count().unwrap();
            }
            let got = gpu.heights().unwrap();
            let mean = want.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
            let start_mean = start.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
            let mut worst = 0.0f64;
            for i in 0..n {
                let (g, c) = (got[i] as f64, want[i] as f64);
                worst = worst.max((g - c).abs() / c.abs().max(1e-3 * mean));
            }
            eprintln!(
                "n {n_exp}, {lakes:?}: {lakes_seen} lakes over the steps, mean height \
                 {start_mean:.3} -> {mean:.3} m, worst relative difference {worst:e}"
            );
            assert!(worst <= 1e-3, "n {n_exp} {lakes:?}: {worst:e}");
            // Erosion did something: the mean rose by less than 95 % of the 200 m of uplift.
            assert!(mean - start_mean < 190.0, "{start_mean} -> {mean}");
            if lakes == SinkMode::Carve {
                assert!(lakes_seen > 0);
            }
            let mut again =
                GpuStreamPower::on_grid(&ctx, grid, &outlets, &params, inputs(n, k, 1e-3), "sp")
                    .unwrap();
            again.set_heights(&start).unwrap();
            for _ in 0..20 {
                again.step(1e4).unwrap();
            }
            assert_eq!(bits(&got), bits(&again.heights().unwrap()));
        }
    }
}

/// The analytic steady state of ∂h/∂t = U − K A^m S^n at n = 2: S = (U/K)^(1/n) A^(−m/n),
/// as orogen-core's steady_state_slope_area_n2 (101², 100 m cells, U 1e-3 m/yr, K 1e-9,
/// m 1, dt 1e5 yr, steady when no height moves 2 mm a step): θ = m/n = 0.5 and
/// ks = 1000, both to 1e-3.
#[test]
fn steady_state_slope_area_n2() {
    let ctx = ctx();
    let (grid, start) = ramp(11, 101, 101, 1.0);
    let n = grid.len();
    let (u, k, dt) = (1e-3f32, 1e-9f32, 1e5);
    let params = Params {
        m: 1.0,
        n: 2.0,
        lakes: SinkMode::None,
    };
    let outlets = OutletParams::default();
    let mut gpu =
        GpuStreamPower::on_grid(&ctx, grid, &outlets, &params, inputs(n, k, u), "sp").unwrap();
    let (steps, before) = run_to_steady(&mut gpu, &start, dt);
    gpu.route().unwrap();
    let (rcv, area) = (gpu.receivers().unwrap(), gpu.drainage().unwrap());
    let threshold = 20.0 * grid.cell_area() as f64;
    let (exponent, ks, cells) = slope_area_fit(grid, &before, &rcv, &area, threshold);
    let expected = ((u / k) as f64).sqrt();
    eprintln!(
        "GPU n = 2: steady after {steps} steps, {cells} channel nodes, θ {:.5} (expected 0.5), \
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
