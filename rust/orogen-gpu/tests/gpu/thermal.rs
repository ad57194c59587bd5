//! Thermal erosion on the GPU (thermal.wgsl) against orogen-core's CPU `Thermal` on random
//! rough terrains, with each talus kind: heights after 12 steps, the largest excess each
//! step, mass conserved, the same bytes twice.

use orogen_core::eroders::thermal::{
    talus_tangents, HeightTalus, NoiseTalus, Params, TalusAngle, Thermal,
};
use orogen_core::neighbourhood::RasterGrid;
use orogen_core::Grid;
use orogen_gpu::GpuThermal;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::{bits, ctx};

/// White noise over a cone with a few cliffs: many slopes over any talus, metres.
fn rough(w: usize, h: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            let r = ((x - w as f32 / 2.0).powi(2) + (y - h as f32 / 2.0).powi(2)).sqrt();
            let cliff = if (x as usize / 9 + y as usize / 13).is_multiple_of(3) {
                40.0
            } else {
                0.0
            };
            300.0 * (1.0 - r / w as f32).max(0.0) + cliff + rng.random_range(0.0..60.0)
        })
        .collect()
}

fn talus_kinds() -> Vec<(&'static str, TalusAngle)> {
    vec![
        ("Constant", TalusAngle::Constant(30.0)),
        (
            "Noise",
            TalusAngle::Noise(NoiseTalus {
                wavelength: 200.0,
                vertical_wavelength: 50.0,
                ..Default::default()
            }),
        ),
        (
            "Height",
            TalusAngle::Height(HeightTalus {
                below_deg: 20.0,
                above_deg: 50.0,
                height: 180.0,
            }),
        ),
        ("Material", TalusAngle::Material),
    ]
}

const SEED: u64 = 11;

/// `steps` CPU steps: the heights and each step's largest excess.
fn cpu_run(grid: Grid, params: &Params, start: &[f32], steps: usize) -> (Vec<f32>, Vec<f32>) {
    let mut t = Thermal::new(RasterGrid::new(grid, &[]), params.clone(), SEED, start, "t").unwrap();
    t.set_material_talus(&[orogen_core::state::MaterialProps::default().talus_deg]);
    let mut h = start.to_vec();
    let excess = (0..steps).map(|_| t.step_heights(&mut h)).collect();
    (h, excess)
}

/// The same on the GPU.
fn gpu_run(grid: Grid, params: &Params, start: &[f32], steps: usize) -> (Vec<f32>, Vec<f32>) {
    let tan = talus_tangents(&params.talus, start, grid.width, grid.cell_size, SEED);
    let mut g = GpuThermal::on_grid(&ctx(), grid, params, &tan, "t").unwrap();
    g.set_heights(start).unwrap();
    let mut excess = Vec::new();
    for _ in 0..steps {
        g.step().unwrap();
        excess.push(g.max_excess().unwrap());
    }
    (g.heights().unwrap(), excess)
}

fn sum64(v: &[f32]) -> f64 {
    v.iter().map(|&x| x as f64).sum()
}

#[test]
fn gpu_thermal_follows_the_cpu_with_every_talus_and_conserves_mass() {
    let (w, h) = (67, 53);
    let grid = Grid::new(w, h, 10.0).unwrap();
    let steps = 12;
    for (seed, (name, talus)) in talus_kinds().into_iter().enumerate() {
        let start = rough(w, h, 100 + seed as u64);
        let params = Params {
            talus,
            rate: 0.5,
            tolerance: 0.0,
        };
        let (c, ce) = cpu_run(grid, &params, &start, steps);
        let (g, ge) = gpu_run(grid, &params, &start, steps);
        let moved = c
            .iter()
            .zip(&start)
            .filter(|(a, b)| (*a - *b).abs() > 0.5)
            .count();
        assert!(
            moved > w * h / 10,
            "{name}: only {moved} cells moved by 0.5 m"
        );
        let mut worst = 0.0f32;
        let mut equal = 0;
        for (i, (a, b)) in g.iter().zip(&c).enumerate() {
            let rel = (a - b).abs() / b.abs().max(1.0);
            worst = worst.max(rel);
            equal += usize::from(a.to_bits() == b.to_bits());
            assert!(rel <= 1e-6, "{name}: cell {i}: GPU {a} m, CPU {b} m");
        }
        for (k, (a, b)) in ge.iter().zip(&ce).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "{name}: step {k}: largest excess GPU {a}, CPU {b}"
            );
        }
        // Mass: every flow leaves one cell and reaches another with the same bits; what is
        // left is each cell's rounding to f32 (half an ulp of 512 m a cell a step).
        let (s0, sg, sc) = (sum64(&start), sum64(&g), sum64(&c));
        let bound = (w * h * steps) as f64 * 2f64.powi(-24 + 9);
        assert!((sg - s0).abs() <= bound, "{name}: GPU mass {s0} → {sg}");
        assert!((sc - s0).abs() <= bound, "{name}: CPU mass {s0} → {sc}");
        eprintln!(
            "{name}: worst relative difference {worst:e}, {equal} of {} heights bit-equal, \
             mass drift GPU {:e} CPU {:e} m³/m²",
            w * h,
            sg - s0,
            sc - s0
        );
        let (again, _) = gpu_run(grid, &params, &start, steps);
        assert_eq!(bits(&g), bits(&again), "{name}: not the same bytes twice");
    }
}

#[test]
fn a_step_within_the_tolerance_moves_nothing() {
    let (w, h) = (40, 30);
    let grid = Grid::new(w, h, 10.0).unwrap();
    // A 1:100 ramp with one bump of 2 m over its 30° talus (5.77 m over 10 m).
    let mut start: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 * 0.1).collect();
    start[15 * w + 20] += 7.8;
    for (tolerance, moves) in [(5.0, false), (0.5, true)] {
        let params = Params {
            tolerance,
            ..Params::default()
        };
        let (c, ce) = cpu_run(grid, &params, &start, 1);
        let (g, ge) = gpu_run(grid, &params, &start, 1);
        assert_eq!(c != start, moves, "CPU, tolerance {tolerance}");
        assert_eq!(g != start, moves, "GPU, tolerance {tolerance}");
        assert!((ge[0] - ce[0]).abs() <= 1e-5, "{ge:?} against {ce:?}");
        assert!(ge[0] > 1.0 && ge[0] < 5.0, "excess {ge:?}");
    }
}

#[test]
fn non_square_cells_are_refused_naming_the_field() {
    let grid = Grid::with_cells(20, 10, 10.0, 12.0).unwrap();
    let e = GpuThermal::supports(grid, &Params::default(), "stages[0].Thermal").unwrap_err();
    assert!(e.to_string().contains("stages[0].Thermal"), "{e}");
}
