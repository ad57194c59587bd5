//! The tiled stream-power step (issue #41) against the whole map's: bytes exchanged per
//! step (in total and per tile), the step's time, and how far the tiled heights end from
//! the whole map's. Tiles run on threads of one process (`tiles::run_threads`), one per
//! tile. `cargo bench -p orogen-core --bench tiles [-- SIZE TILES...]`, e.g.
//! `-- 1025 2x2 4x4` (the default).

use std::time::Instant;

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::tiles::{
    gather_map, run_threads, ChainSolve, Comm, TileInputs, TileLayout, TileStreamPower, ROOT,
};
use orogen_core::{math, Grid};

/// Steps timed (after one untimed step).
const STEPS: usize = 5;
const DT: f64 = 1000.0;

/// A dome (0.5 m per cell from the nearest border) under 10 m of hashed noise and valleys
/// 40 cells apart: rivers that run across tile edges.
fn initial_terrain(size: usize) -> Vec<f32> {
    (0..size * size)
        .map(|i| {
            let mut x = (i as u64)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(0x0E05);
            x ^= x >> 30;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^= x >> 27;
            let noise = ((x >> 40) as f64 / (1u64 << 24) as f64) as f32;
            let (cx, cy) = (i % size, i / size);
            let border = cx.min(cy).min(size - 1 - cx).min(size - 1 - cy) as f32;
            let valley = 1.0 - math::cos(cx as f64 * std::f64::consts::TAU / 40.0) as f32;
            0.5 * border + 10.0 * noise + 20.0 * valley
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let size = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1025usize);
    let mut tilings: Vec<String> = args.iter().skip(1).cloned().collect();
    if tilings.is_empty() {
        tilings = vec!["2x2".into(), "4x4".into()];
    }
    let grid = Grid::new(size, size, 100.0).expect("a grid");
    let heights = initial_terrain(size);
    let n = grid.len();
    let inputs = Inputs {
        k: vec![2e-5; n],
        uplift: vec![1e-3; n],
        precipitation: None,
    };
    let outlets = OutletParams::default();
    println!(
        "Tiled stream power (n = 1) at {size}², {} rayon threads, {} cores",
        rayon::current_num_threads(),
        std::thread::available_parallelism().map_or(0, |c| c.get())
    );
    for lakes in [
        SinkMode::None,
        SinkMode::Carve,
        SinkMode::Fill { epsilon: 0.0 },
    ] {
        let params = Params {
            m: 0.5,
            n: 1.0,
            lakes,
        };
        // The affine chain for lakes: None only (it does not depend on the lakes).
        let chains: &[ChainSolve] = match lakes {
            SinkMode::None => &[ChainSolve::Exact, ChainSolve::Affine],
            _ => &[ChainSolve::Exact],
        };
        bench(grid, &heights, &inputs, &outlets, &params, &tilings, chains);
    }
}

/// The whole map's step and each tiling's with `params`.
fn bench(
    grid: Grid,
    heights: &[f32],
    inputs: &Inputs,
    outlets: &OutletParams,
    params: &Params,
    tilings: &[String],
    chains: &[ChainSolve],
) {
    // The whole map: one untimed step, then STEPS timed.
    let mut sp = StreamPower::on_grid(grid, outlets, params, inputs.clone(), false, "sp")
        .expect("stream power");
    let mut whole = heights.to_vec();
    sp.step_heights(&mut whole, DT).expect("a step");
    let t = Instant::now();
    for _ in 0..STEPS {
        sp.step_heights(&mut whole, DT).expect("a step");
    }
    let whole_ms = t.elapsed().as_secs_f64() * 1e3 / STEPS as f64;
    println!(
        "lakes: {:?}; whole map: {whole_ms:.1} ms per step",
        params.lakes
    );

    for (spec, &chain) in tilings
        .iter()
        .flat_map(|s| chains.iter().map(move |c| (s, c)))
    {
        let layout = TileLayout::parse(grid, spec, "tiles").expect("a tiling");
        let results = run_threads(layout.count(), |comm| {
            let rank = comm.rank();
            let ti = TileInputs::cut(&layout, rank, heights, inputs)?;
            let mut tile = TileStreamPower::new(&layout, rank, outlets, params, ti, "sp")?;
            tile.set_chain(chain);
            tile.step(comm, DT)?;
            // Every rank starts the timed steps together.
            comm.gather(ROOT, 90, Vec::new())?;
            comm.scatter(ROOT, 91, vec![Vec::new(); comm.size()])?;
            let t = Instant::now();
            let mut bytes = 0;
            let (mut exits, mut rounds, mut passes) = (0, 0, 0);
            for _ in 0..STEPS {
                let s = tile.step(comm, DT)?;
                bytes += s.bytes_sent;
                exits = s.exits;
                passes = s.passes;
                rounds = rounds.max(s.rounds);
            }
            let ms = t.elapsed().as_secs_f64() * 1e3 / STEPS as f64;
            let h = gather_map(comm, &layout, ROOT, 92, &tile.heights(), "heights")?;
            Ok((ms, bytes / STEPS as u64, exits, h, rounds, passes))
        })
        .expect("the tiled run");
        let ms = results.iter().map(|r| r.0).fold(0.0, f64::max);
        let per_tile: Vec<u64> = results.iter().map(|r| r.1).collect();
        let total: u64 = per_tile.iter().sum();
        let exits: usize = results.iter().map(|r| r.2).sum();
        let rounds = results[0].4;
        let lakes: usize = results.iter().map(|r| r.5).sum();
        let tiled = results[0].3.as_ref().expect("the root's map");
        let diff = tiled
            .iter()
            .zip(&whole)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        let (lo, hi) = (
            per_tile.iter().min().unwrap(),
            per_tile.iter().max().unwrap(),
        );
        let tile = layout.tile(0).interior;
        println!(
            "{spec} {chain:?} chain ({rounds} rounds): {ms:.1} ms per step ({:.2}× the whole map); {:.1} KiB sent per step in all \
             ({:.1} to {:.1} KiB per tile of about {}x{}, {exits} cells draining across tile \
             edges, {lakes} lakes); after {} steps at most {diff:e} m from the whole map",
            ms / whole_ms,
            total as f64 / 1024.0,
            *lo as f64 / 1024.0,
            *hi as f64 / 1024.0,
            tile.w,
            tile.h,
            STEPS + 1,
        );
    }
}
