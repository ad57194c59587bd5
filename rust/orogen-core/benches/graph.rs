//! The stream graph's speed (#9): Poisson sampling and Delaunay of 1M points, one
//! stream-power iteration with lakes on 250k nodes, primitives to 4097², and a 100k-node
//! graph eroded for 200 iterations and rasterised to 2049².
//!
//! `cargo bench -p orogen-core --bench graph` (optionally `-- poisson sp` to pick rows:
//! `poisson`, `sp`, `raster`, `world`).

use std::hint::black_box;
use std::time::Instant;

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::mesh::points::poisson_disc;
use orogen_core::mesh::Delaunay;
use orogen_core::runner::{finish_world, initial_world, run_stages};
use orogen_core::Recipe;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// The square side, metres, over which Poisson sampling at `spacing` gives about `n` points.
fn side_for(n: f64, spacing: f64) -> f64 {
    // Measured density of poisson_disc: about 0.60 points per spacing².
    (n / 0.60).sqrt() * spacing
}

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

#[path = "common/mod.rs"]
mod common;
use common::cpu_secs;

fn main() {
    let rows: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |r: &str| rows.is_empty() || rows.iter().any(|x| x == r);
    println!("threads: {}", rayon::current_num_threads());
    println!("{:<52} {:>10} {:>10}", "what", "seconds", "target");

    if want("poisson") {
        let side = side_for(1e6, 100.0);
        let t = Instant::now();
        let pts = poisson_disc(side, side, 100.0, 1).unwrap();
        let tp = secs(t);
        let t = Instant::now();
        let d = Delaunay::new_in_strips(&pts, 600.0).unwrap();
        let td = secs(t);
        let t = Instant::now();
        let g = d.to_graph().unwrap();
        let tg = secs(t);
        black_box(&g);
        println!(
            "{:<52} {:>10.3} {:>10}",
            format!("Poisson sampling, {} points", pts.len()),
            tp,
            ""
        );
        println!(
            "{:<52} {:>10.3} {:>10}",
            "Delaunay (spade bulk load, in strips)", td, ""
        );
        println!(
            "{:<52} {:>10.3} {:>10}",
            "Poisson + Delaunay",
            tp + td,
            "1.5"
        );
        println!(
            "{:<52} {:>10.3} {:>10}",
            "graph: Voronoi areas and neighbour rows", tg, ""
        );
    }

    if want("sp") {
        let side = side_for(250e3, 100.0);
        let pts = poisson_disc(side, side, 100.0, 2).unwrap();
        let g = Delaunay::new(&pts).unwrap().to_graph().unwrap();
        let n = g.len();
        let inputs = Inputs {
            k: vec![2e-5; n],
            uplift: vec![1e-3; n],
            precipitation: None,
        };
        let mut sp = StreamPower::new(g, None, &Params::default(), inputs, false, "bench").unwrap();
        // A rough start (0..10 m of hash noise, pits everywhere), then 30 steps so the
        // measured ones see a growing range with its lakes, as a recipe run does.
        let mut h: Vec<f32> = (0..n)
            .map(|i| ((i as u64).wrapping_mul(2654435761) % 1000) as f32 * 0.01)
            .collect();
        let t = Instant::now();
        sp.step_heights(&mut h, 1e4).unwrap();
        let first = secs(t);
        for _ in 0..29 {
            sp.step_heights(&mut h, 1e4).unwrap();
        }
        let steps = 20;
        let t = Instant::now();
        for _ in 0..steps {
            sp.step_heights(&mut h, 1e4).unwrap();
        }
        println!(
            "{:<52} {:>10.4} {:>10}",
            format!("stream power with lakes, first iteration, {n} nodes"),
            first,
            ""
        );
        println!(
            "{:<52} {:>10.4} {:>10}",
            format!("stream power with lakes, 1 iteration, {n} nodes"),
            secs(t) / steps as f64,
            "0.025"
        );
    }

    if want("raster") || want("world") {
        // A 100k-node graph over 204.8 km, eroded by the built-in graph recipe.
        let recipe = Recipe::built_in("graph")
            .unwrap()
            .apply_override("size=(2049,2049)")
            .unwrap()
            .apply_override("cell_size=100.0")
            .unwrap()
            .apply_override("domain.Graph.spacing=510.0")
            .unwrap()
            .apply_override("stages[0].iterations=200")
            .unwrap();
        let cancel = AtomicBool::new(false);
        let t = Instant::now();
        let mut world = initial_world(&recipe, Path::new(".")).unwrap();
        let nodes = world.graph.as_ref().unwrap().graph.len();
        let t_init = secs(t);
        let t = Instant::now();
        run_stages(
            &mut world,
            &recipe.stages,
            Path::new("."),
            &cancel,
            &mut |_| {},
        )
        .unwrap();
        let t_erode = secs(t);
        let kept = world.clone();
        let t = Instant::now();
        finish_world(&recipe, &mut world).unwrap();
        let t_raster = secs(t);
        black_box(&world);
        if want("world") {
            println!(
                "{:<52} {:>10.3} {:>10}",
                format!("{nodes}-node graph: sample, Delaunay, initial terrain"),
                t_init,
                ""
            );
            println!(
                "{:<52} {:>10.3} {:>10}",
                "  200 stream-power iterations + 20 thermal", t_erode, ""
            );
            println!(
                "{:<52} {:>10.3} {:>10}",
                "  primitives to 2049²", t_raster, ""
            );
            println!(
                "{:<52} {:>10.3} {:>10}",
                "  total",
                t_init + t_erode + t_raster,
                "15"
            );
        }
        if want("raster") {
            // The same eroded graph made into a 4097² heightfield.
            let big = recipe.apply_override("size=(4097,4097)").unwrap();
            let mut w = kept;
            let grid = big.grid().unwrap();
            w.height = orogen_core::Heightfield::filled(grid, 0.0);
            w.uplift = orogen_core::ScalarMap::filled(grid, 0.0);
            // Node positions are in metres; the 4097² grid at 50 m spans the same 204.8 km.
            let big = big.apply_override("cell_size=50.0").unwrap();
            let grid = big.grid().unwrap();
            w.height = orogen_core::Heightfield::filled(grid, 0.0);
            let (t, cpu) = (Instant::now(), cpu_secs());
            finish_world(&big, &mut w).unwrap();
            let (wall, cpu) = (secs(t), cpu_secs() - cpu);
            println!(
                "{:<52} {:>10.3} {:>10}",
                format!("primitives to 4097², {nodes} nodes (with hydrology maps)"),
                wall,
                "5"
            );
            println!(
                "{:<52} {:>10.3} {:>10}",
                "  CPU seconds, all threads", cpu, ""
            );
            black_box(&w);
        }
    }
}
