//! The unchanged stream-power process on an irregular graph (Delaunay of jittered points,
//! Voronoi cell areas, hull nodes as outlets) reaches the analytic steady state
//! S = (U/K)^(1/n)·A^(−m/n) (Cordonnier 2016 §4; the slope–area law), as on the raster.

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::flow::{Neighbourhood, SinkMode};
use orogen_core::mesh::delaunay_graph;
use orogen_core::mesh::points::jittered_grid;
use orogen_core::state::{Layers, TerrainMut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::support::slope_area_fit;

#[test]
fn steady_state_slope_area_on_an_irregular_graph() {
    let points = jittered_grid(70, 70, 100.0, 0.35, 5).unwrap();
    let graph = delaunay_graph(&points).unwrap();
    let mean_area = graph.total_area() / graph.len() as f64;
    assert!(
        (0..graph.len()).any(|i| (graph.node_area(i) as f64 - mean_area).abs() > 0.05 * mean_area),
        "areas must vary on a jittered graph"
    );
    for &(n, m, k) in &[(1.0_f32, 0.5_f32, 1e-5_f32), (2.0, 1.0, 1e-9)] {
        let u = 1e-3_f32;
        let nodes = graph.len();
        let inputs = Inputs {
            k: vec![k; nodes],
            uplift: vec![u; nodes],
            precipitation: None,
        };
        let params = Params {
            m,
            n,
            lakes: SinkMode::Carve,
        };
        let mut solver =
            StreamPower::new(graph.clone(), None, &params, inputs, true, "sp").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let mut h: Vec<f32> = (0..nodes).map(|_| rng.random::<f32>()).collect();
        let mut layers = Layers::none();
        let mut steady = false;
        for _ in 0..4000 {
            let mut t = TerrainMut::new(&mut h, &mut layers);
            if solver.step(&mut t, 1e5).unwrap().max_change.unwrap() < 2e-3 {
                steady = true;
                break;
            }
        }
        assert!(steady, "n={n}: no steady state");
        let (slope, intercept, count) =
            slope_area_fit(solver.graph(), solver.drainage(), &h, 20.0 * mean_area);
        let expected = ((u / k) as f64).powf(1.0 / n as f64);
        println!(
            "n={n}: {count} channel nodes, exponent {slope:.4} (expected {:.4}), intercept \
             {intercept:.3} (expected {expected:.3})",
            -(m / n)
        );
        assert!(count > 200, "{count} channel nodes");
        assert!(
            (slope + (m / n) as f64).abs() <= 0.02,
            "n={n}: exponent {slope}, expected {}",
            -(m / n)
        );
        assert!(
            (intercept / expected - 1.0).abs() <= 0.05,
            "n={n}: intercept {intercept} vs {expected}"
        );
    }
}
