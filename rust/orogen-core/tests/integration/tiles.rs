//! Tiled runs (issue #41, first phase): the tiling, the threaded communicator, and the
//! tiled stream-power step against the whole map's (receivers, drainage, heights), the tiled
//! thermal step against the whole map's bytes.

use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::eroders::thermal::{self, HeightTalus, NoiseTalus, TalusAngle, Thermal};
use orogen_core::flow::{accumulate_f64, FlowRouter, OutletParams, RasterGrid, Side, SinkMode};
use orogen_core::tiles::{
    gather_map, run_threads, ChainSolve, Comm, StepStats, TileInputs, TileLayout, TileStreamPower,
    TileThermal, ROOT,
};
use orogen_core::{Grid, OrogenError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::support::on_threads;

/// A terrain that drains to its borders (a dome, 4 m per cell from the nearest border)
/// under `noise` metres of white noise; with `step` > 0, heights rounded to multiples of
/// it (flats and tied slopes everywhere).
pub(super) fn terrain(grid: Grid, seed: u64, noise: f32, step: f32) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (w, h) = (grid.width, grid.height);
    (0..grid.len())
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let border = x.min(y).min(w - 1 - x).min(h - 1 - y) as f32;
            let v = 4.0 * border + rng.random_range(0.0..noise);
            if step > 0.0 {
                (v / step).round() * step
            } else {
                v
            }
        })
        .collect()
}

/// [`terrain`] with valleys 23 cells apart running north-south: converging trees, long
/// rivers crossing tile edges.
pub(super) fn valleys(grid: Grid, seed: u64, noise: f32) -> Vec<f32> {
    let tau = std::f32::consts::TAU;
    terrain(grid, seed, noise, 0.0)
        .iter()
        .enumerate()
        .map(|(i, h)| h + 40.0 * (1.0 - ((i % grid.width) as f32 * tau / 23.0).cos()))
        .collect()
}

fn layout(w: usize, h: usize, nx: usize, ny: usize) -> TileLayout {
    TileLayout::new(Grid::new(w, h, 100.0).unwrap(), nx, ny).unwrap()
}

fn params() -> Params {
    Params {
        m: 0.5,
        n: 1.0,
        lakes: SinkMode::None,
    }
}

/// Per-node k, uplift and (optionally) precipitation, varying over the map.
pub(super) fn inputs(grid: Grid, seed: u64, rain: bool) -> Inputs {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let n = grid.len();
    Inputs {
        k: (0..n).map(|_| rng.random_range(1e-5..3e-5)).collect(),
        uplift: (0..n).map(|_| rng.random_range(5e-4..2e-3)).collect(),
        precipitation: rain.then(|| (0..n).map(|_| rng.random_range(0.5..2.0)).collect()),
    }
}

/// The tiled run's result maps at the root, after `steps` steps of `dt` years.
struct Tiled {
    heights: Vec<f32>,
    receivers: Vec<u32>,
    sums: Vec<f64>,
    stats: Vec<StepStats>,
}

fn run_tiled(
    layout: &TileLayout,
    outlets: &OutletParams,
    params: &Params,
    heights: &[f32],
    inputs: &Inputs,
    steps: usize,
    dt: f64,
) -> Result<Tiled, OrogenError> {
    run_tiled_with(
        layout,
        outlets,
        params,
        heights,
        inputs,
        steps,
        dt,
        ChainSolve::Exact,
    )
}

#[allow(clippy::too_many_arguments)]
fn run_tiled_with(
    layout: &TileLayout,
    outlets: &OutletParams,
    params: &Params,
    heights: &[f32],
    inputs: &Inputs,
    steps: usize,
    dt: f64,
    chain: ChainSolve,
) -> Result<Tiled, OrogenError> {
    let results = run_threads(layout.count(), |comm| {
        let rank = comm.rank();
        let tile_inputs = TileInputs::cut(layout, rank, heights, inputs)?;
        let mut tile = TileStreamPower::new(layout, rank, outlets, params, tile_inputs, "sp")?;
        tile.set_chain(chain);
        let mut stats = StepStats::default();
        if steps == 0 {
            tile.route(comm)?;
        }
        for _ in 0..steps {
            stats = tile.step(comm, dt)?;
        }
        let h = gather_map(comm, layout, ROOT, 100, &tile.heights(), "heights")?;
        let r = gather_map(comm, layout, ROOT, 101, tile.receivers(), "receivers")?;
        let s = gather_map(comm, layout, ROOT, 102, tile.drainage_sums(), "drainage")?;
        Ok((h, r, s, stats))
    })?;
    let stats = results.iter().map(|r| r.3).collect();
    let (h, r, s, _) = results.into_iter().next().expect("a root");
    Ok(Tiled {
        heights: h.expect("the root has the map"),
        receivers: r.expect("the root has the map"),
        sums: s.expect("the root has the map"),
        stats,
    })
}

/// Whole-map heights after `steps` steps.
fn whole_map(
    grid: Grid,
    outlets: &OutletParams,
    params: &Params,
    heights: &[f32],
    inputs: &Inputs,
    steps: usize,
    dt: f64,
) -> Vec<f32> {
    let mut sp = StreamPower::on_grid(grid, outlets, params, inputs.clone(), false, "sp").unwrap();
    let mut h = heights.to_vec();
    for _ in 0..steps {
        sp.step_heights(&mut h, dt).unwrap();
    }
    h
}

#[test]
fn tiles_cover_the_grid_once_with_their_halos() {
    for (w, h, nx, ny) in [
        (97, 83, 3, 3),
        (64, 64, 4, 4),
        (10, 7, 5, 3),
        (130, 9, 1, 4),
    ] {
        let l = layout(w, h, nx, ny);
        let mut owner = vec![usize::MAX; w * h];
        for rank in 0..l.count() {
            let t = l.tile(rank);
            let r = t.interior;
            // Sizes differ by at most one cell.
            assert!(r.w == w / nx || r.w == w / nx + 1, "{w}/{nx}: {r:?}");
            assert!(r.h == h / ny || r.h == h / ny + 1, "{h}/{ny}: {r:?}");
            for y in r.y0..r.y0 + r.h {
                for x in r.x0..r.x0 + r.w {
                    assert_eq!(owner[y * w + x], usize::MAX, "({x}, {y}) in two tiles");
                    owner[y * w + x] = rank;
                    assert_eq!(l.rank_of(x, y), rank);
                }
            }
            // The halo: every cell within one step of the interior, inside the grid.
            for y in 0..h {
                for x in 0..w {
                    let near =
                        (x + 1 >= r.x0 && x <= r.x0 + r.w) && (y + 1 >= r.y0 && y <= r.y0 + r.h);
                    assert_eq!(
                        t.halo.contains(x, y),
                        near,
                        "tile {rank} halo at ({x}, {y})"
                    );
                }
            }
        }
        assert!(owner.iter().all(|&o| o != usize::MAX));
        let map: Vec<u32> = (0..(w * h) as u32).collect();
        let parts: Vec<Vec<u32>> = (0..l.count())
            .map(|r| l.cut(r, &map, "m").unwrap())
            .collect();
        assert_eq!(l.assemble(&parts, "m").unwrap(), map);
    }
}

#[test]
fn bad_tilings_are_errors_naming_the_field() {
    let grid = Grid::new(20, 9, 1.0).unwrap();
    let e = TileLayout::new(grid, 0, 1).unwrap_err().to_string();
    assert!(e.contains("tiles.x"), "{e}");
    let e = TileLayout::new(grid, 2, 5).unwrap_err().to_string();
    assert!(e.contains("tiles.y") && e.contains("1 to 4 tiles"), "{e}");
    let e = TileLayout::parse(grid, "4by4", "--tiles")
        .unwrap_err()
        .to_string();
    assert!(e.contains("--tiles") && e.contains("4by4"), "{e}");
    assert_eq!(
        TileLayout::parse(grid, "5x3", "--tiles").unwrap().shape(),
        (5, 3)
    );
    let l = TileLayout::new(grid, 2, 2).unwrap();
    let e = l.cut(0, &[0.0f32; 10], "heights").unwrap_err().to_string();
    assert!(e.contains("heights") && e.contains("10 values"), "{e}");
}

#[test]
fn gather_and_scatter_keep_rank_order() {
    let out = run_threads(5, |comm| {
        let me = comm.rank() as u8;
        let all = comm.gather(2, 7, vec![me, me])?;
        let parts = all.iter().map(|m| vec![m[0] * 10]).collect();
        let back = comm.scatter(2, 8, parts)?;
        Ok((all, back, comm.bytes_sent()))
    })
    .unwrap();
    assert_eq!(out[2].0, (0..5u8).map(|r| vec![r, r]).collect::<Vec<_>>());
    for (rank, (all, back, bytes)) in out.iter().enumerate() {
        assert_eq!(back, &vec![rank as u8 * 10]);
        if rank != 2 {
            assert!(all.is_empty());
            assert_eq!(*bytes, 2, "rank {rank} sent its two bytes");
        } else {
            assert_eq!(*bytes, 4, "the root sent one byte to each other rank");
        }
    }
}

#[test]
fn a_failing_rank_stops_the_others_with_its_error() {
    let e = run_threads(4, |comm| {
        if comm.rank() == 3 {
            return Err(OrogenError::invalid("tile 3", "broke on purpose"));
        }
        // Everyone else waits for rank 3, which never sends.
        comm.recv(3, 1).map(|_| ())
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("tile 3") && e.contains("broke on purpose"),
        "{e}"
    );
    // A panic too ends the waits, with an error naming the rank.
    let e = run_threads(3, |comm| {
        if comm.rank() == 1 {
            panic!("rank 1 panics on purpose");
        }
        comm.recv(1, 1).map(|_| ())
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("rank 1"), "{e}");
}

#[test]
fn tiled_receivers_equal_the_whole_map_with_ties() {
    let all = OutletParams::default();
    let coast = OutletParams {
        borders: vec![Side::North, Side::West],
        sea_level: Some(30.0),
    };
    for (w, h) in [(97, 83), (64, 64)] {
        let grid = Grid::new(w, h, 100.0).unwrap();
        for (seed, step) in [(1, 0.0), (2, 1.0), (3, 5.0)] {
            let heights = terrain(grid, seed, 40.0, step);
            let inputs = inputs(grid, seed, false);
            for outlets in [&all, &coast] {
                let mut router = FlowRouter::new(grid, outlets).unwrap();
                router.steepest_descent(&heights).unwrap();
                let want = &router.graph().receivers;
                for (nx, ny) in [(2, 2), (3, 3), (4, 4), (1, 3)] {
                    let l = TileLayout::new(grid, nx, ny).unwrap();
                    let got = run_tiled(&l, outlets, &params(), &heights, &inputs, 0, 1.0)
                        .unwrap()
                        .receivers;
                    let bad = got.iter().zip(want).position(|(a, b)| a != b);
                    assert_eq!(bad, None, "{w}x{h} seed {seed} {nx}x{ny} {outlets:?}");
                }
            }
        }
    }
}

/// The worst relative difference between tiled and whole-map drainage sums.
fn drainage_error(
    grid: Grid,
    outlets: &OutletParams,
    heights: &[f32],
    inputs: &Inputs,
    l: &TileLayout,
) -> f64 {
    let got = run_tiled(l, outlets, &params(), heights, inputs, 1, 1.0)
        .unwrap()
        .sums;
    let mut router = FlowRouter::new(grid, outlets).unwrap();
    let mut h = heights.to_vec();
    let graph = router.route(&mut h, SinkMode::None).unwrap();
    let area = grid.cell_area() as f64;
    let weights: Vec<f64> = match &inputs.precipitation {
        Some(p) => p.iter().map(|&r| area * r as f64).collect(),
        None => vec![area; grid.len()],
    };
    let mut want = vec![0.0; grid.len()];
    accumulate_f64(graph, &weights, &mut want);
    got.iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs() / b.abs())
        .fold(0.0, f64::max)
}

#[test]
fn tiled_drainage_equals_the_whole_map_to_1e_12() {
    // Sums in another order than the whole map's stack: equal to rounding, measured
    // at most a few 1e-16 relative; 1e-12 leaves room. (Cells of 97.3 m and random rain,
    // so that the f64 sums round: sums of whole cell areas would be exact in any order.)
    let grid = Grid::new(97, 83, 97.3).unwrap();
    let mut worst = 0.0f64;
    for (seed, rain, noise) in [(4, false, 20.0), (5, true, 20.0), (13, true, 1.0)] {
        let heights = valleys(grid, seed, noise);
        let inputs = inputs(grid, seed, rain);
        for (nx, ny) in [(2, 2), (3, 3), (4, 4), (5, 2)] {
            let l = TileLayout::new(grid, nx, ny).unwrap();
            let e = drainage_error(grid, &OutletParams::default(), &heights, &inputs, &l);
            assert!(e <= 1e-12, "seed {seed} {nx}x{ny}: relative error {e:e}");
            worst = worst.max(e);
        }
    }
    println!("tiled drainage: worst relative difference {worst:e}");
}

#[test]
fn tiled_stream_power_equals_the_whole_map_after_20_steps_exact_or_to_1e_4() {
    let dt = 1000.0;
    let coast = OutletParams {
        borders: vec![Side::South, Side::East],
        sea_level: Some(20.0),
    };
    let mut worst = 0.0f32;
    for (w, h, seed, rain, outlets) in [
        (97, 83, 6, false, OutletParams::default()),
        (64, 64, 7, true, OutletParams::default()),
        (130, 101, 14, false, OutletParams::default()),
        (97, 83, 8, false, coast),
    ] {
        let grid = Grid::new(w, h, 100.0).unwrap();
        let heights = match seed {
            7 | 14 => valleys(grid, seed, 5.0),
            _ => terrain(grid, seed, 30.0, 0.0),
        };
        let inputs = inputs(grid, seed, rain);
        let want = whole_map(grid, &outlets, &params(), &heights, &inputs, 20, dt);
        let moved = want
            .iter()
            .zip(&heights)
            .filter(|(a, b)| (*a - *b).abs() > 1.0)
            .count();
        assert!(
            moved > grid.len() / 2,
            "the steps change most heights ({moved})"
        );
        for (nx, ny) in [(2, 2), (3, 3), (4, 4)] {
            let l = TileLayout::new(grid, nx, ny).unwrap();
            let (p, o) = (&params(), &outlets);
            let exact = run_tiled(&l, o, p, &heights, &inputs, 20, dt).unwrap();
            let bad = exact
                .heights
                .iter()
                .zip(&want)
                .position(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(bad, None, "{w}x{h} {nx}x{ny}, exact chain");
            let got =
                run_tiled_with(&l, o, p, &heights, &inputs, 20, dt, ChainSolve::Affine).unwrap();
            let (i, d) = got
                .heights
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .enumerate()
                .fold((0, 0.0f32), |m, (i, d)| if d > m.1 { (i, d) } else { m });
            assert!(d <= 1e-4, "{w}x{h} {nx}x{ny}: cell {i} is {d} m off");
            worst = worst.max(d);
        }
    }
    println!("tiled stream power, affine chain: worst height difference {worst} m after 20 steps");
}

#[test]
fn tiled_steps_give_the_same_bytes_on_any_thread_count() {
    let grid = Grid::new(70, 61, 100.0).unwrap();
    let heights = terrain(grid, 9, 30.0, 0.0);
    let inputs = inputs(grid, 9, true);
    let l = TileLayout::new(grid, 3, 2).unwrap();
    let outlets = OutletParams::default();
    let run = |threads| {
        on_threads(threads, || {
            run_tiled(&l, &outlets, &params(), &heights, &inputs, 5, 1000.0).unwrap()
        })
    };
    let p = thermal::Params::default();
    let tangents = Thermal::new(RasterGrid::new(grid, &[]), p.clone(), 3, &heights, "t")
        .unwrap()
        .tangents()
        .to_vec();
    let run_thermal = |threads| {
        on_threads(threads, || {
            run_tiled_thermal(&l, &p, &heights, &tangents, 5).0
        })
    };
    let one = run(1);
    let one_thermal = run_thermal(1);
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    for threads in [2, 7] {
        let other = run(threads);
        assert!(same(&one.heights, &other.heights), "{threads} threads");
        assert_eq!(one.receivers, other.receivers, "{threads} threads");
        assert!(
            same(&one_thermal, &run_thermal(threads)),
            "thermal, {threads} threads"
        );
    }
}

#[test]
fn bytes_exchanged_grow_with_the_tile_perimeter_not_the_area() {
    let bytes = |side: usize, lakes: SinkMode| -> u64 {
        let grid = Grid::new(side, side, 100.0).unwrap();
        let heights = terrain(grid, 10, 30.0, 0.0);
        let inputs = inputs(grid, 10, false);
        let l = TileLayout::new(grid, 3, 3).unwrap();
        let p = Params { lakes, ..params() };
        let t = run_tiled(
            &l,
            &OutletParams::default(),
            &p,
            &heights,
            &inputs,
            2,
            1000.0,
        );
        t.unwrap().stats.iter().map(|s| s.bytes_sent).sum()
    };
    for lakes in [
        SinkMode::None,
        SinkMode::Carve,
        SinkMode::Fill { epsilon: 0.0 },
    ] {
        let (small, large) = (bytes(48, lakes), bytes(96, lakes));
        let ratio = large as f64 / small as f64;
        // Twice the side: twice the perimeter (ratio 2), four times the area (ratio 4).
        assert!(
            (1.6..2.6).contains(&ratio),
            "{lakes:?}: {small} B then {large} B: ratio {ratio}"
        );
    }
}

#[test]
fn what_is_not_tiled_yet_is_refused_naming_the_field() {
    let grid = Grid::new(20, 20, 100.0).unwrap();
    let l = TileLayout::new(grid, 2, 2).unwrap();
    let heights = terrain(grid, 11, 5.0, 0.0);
    let inputs = inputs(grid, 11, false);
    let tile = |outlets: &OutletParams, p: Params| {
        let ti = TileInputs::cut(&l, 0, &heights, &inputs).unwrap();
        TileStreamPower::new(&l, 0, outlets, &p, ti, "stages[0].StreamPower")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let all = OutletParams::default();
    let bad_fill = Params {
        lakes: SinkMode::Fill { epsilon: -1.0 },
        ..params()
    };
    assert!(tile(&all, bad_fill).contains("stages[0].StreamPower.lakes.Fill.epsilon"));
    // n ≠ 1 tiles (with the exact chain).
    assert_eq!(tile(&all, Params { n: 2.0, ..params() }), "");
    let closed = OutletParams {
        borders: vec![],
        sea_level: None,
    };
    assert!(tile(&closed, params()).contains("outlets.borders"));
    let mut nan = heights.clone();
    nan[0] = f32::NAN;
    let e = TileInputs::cut(&l, 0, &nan, &inputs)
        .and_then(|ti| TileStreamPower::new(&l, 0, &all, &params(), ti, "sp"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("heights (tile 0)"), "{e}");
}

/// Tiled thermal heights after `steps` steps, and the whole map's excesses per step.
fn run_tiled_thermal(
    l: &TileLayout,
    p: &thermal::Params,
    heights: &[f32],
    tangents: &[f32],
    steps: usize,
) -> (Vec<f32>, Vec<f32>) {
    let out = run_threads(l.count(), |comm| {
        let rank = comm.rank();
        let (h, t) = (l.cut(rank, heights, "h")?, l.cut(rank, tangents, "t")?);
        let mut tile = TileThermal::new(l, rank, p, &h, &t, "thermal")?;
        let excess = (0..steps)
            .map(|_| tile.step(comm))
            .collect::<Result<Vec<f32>, _>>()?;
        Ok((
            gather_map(comm, l, ROOT, 100, &tile.heights(), "heights")?,
            excess,
        ))
    })
    .unwrap();
    let (h, excess) = out.into_iter().next().unwrap();
    (h.unwrap(), excess)
}

#[test]
fn tiled_thermal_gives_the_whole_maps_bytes() {
    let talus = [
        TalusAngle::Constant(30.0),
        TalusAngle::Height(HeightTalus {
            below_deg: 20.0,
            above_deg: 45.0,
            height: 60.0,
        }),
        TalusAngle::Noise(NoiseTalus {
            wavelength: 800.0,
            ..NoiseTalus::default()
        }),
    ];
    for (k, talus) in talus.into_iter().enumerate() {
        let p = thermal::Params {
            talus,
            rate: 0.5,
            tolerance: 0.01,
        };
        let grid = Grid::new(61, 47, 10.0).unwrap();
        let heights = terrain(grid, 12 + k as u64, 60.0, 0.0);
        let mut whole =
            Thermal::new(RasterGrid::new(grid, &[]), p.clone(), 3, &heights, "t").unwrap();
        let tangents = whole.tangents().to_vec();
        let mut want = heights.clone();
        let excess: Vec<f32> = (0..12).map(|_| whole.step_heights(&mut want)).collect();
        assert!(
            excess[0] > 1.0,
            "the terrain is over its talus ({})",
            excess[0]
        );
        for (nx, ny) in [(2, 2), (3, 3), (4, 4), (7, 1)] {
            let l = TileLayout::new(grid, nx, ny).unwrap();
            let (got, got_excess) = run_tiled_thermal(&l, &p, &heights, &tangents, 12);
            assert_eq!(got_excess, excess, "talus {k}, {nx}x{ny}");
            let same = got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "talus {k}, {nx}x{ny}: heights differ");
        }
    }
}

#[test]
fn tiled_thermal_stops_with_the_whole_map_at_the_tolerance() {
    // A flat map but for one spike: once the spike settles, every tile stops on the same
    // step as the whole map, even those that never saw any excess.
    let grid = Grid::new(40, 40, 10.0).unwrap();
    let mut heights = vec![0.0f32; grid.len()];
    heights[grid.index(5, 5)] = 50.0;
    let p = thermal::Params {
        tolerance: 2.0,
        ..thermal::Params::default()
    };
    let mut whole = Thermal::new(RasterGrid::new(grid, &[]), p.clone(), 3, &heights, "t").unwrap();
    let tangents = whole.tangents().to_vec();
    let mut want = heights.clone();
    let excess: Vec<f32> = (0..30).map(|_| whole.step_heights(&mut want)).collect();
    assert!(
        excess.last().unwrap() <= &2.0 && excess[0] > 2.0,
        "{excess:?}"
    );
    let l = TileLayout::new(grid, 3, 3).unwrap();
    let (got, got_excess) = run_tiled_thermal(&l, &p, &heights, &tangents, 30);
    assert_eq!(got_excess, excess);
    assert!(got
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn tiled_stream_power_on_high_ground_is_exact_or_one_f32_step_off() {
    // With the affine chain the root solves the crossings in f64 from composed maps, where
    // the whole map rounds to f32 at every node: a cell below a crossing can end one f32
    // step away, 1.2e-4 m between 1024 and 2048 m (measured: 1 cell of 13,130 at 1500 m,
    // 4x4). The exact chain gives the whole map's bytes.
    let mut differ = 0;
    for offset in [1500.0f32, 3000.0] {
        let grid = Grid::new(130, 101, 100.0).unwrap();
        let heights: Vec<f32> = valleys(grid, 21, 5.0).iter().map(|h| h + offset).collect();
        let inputs = inputs(grid, 21, false);
        let outlets = OutletParams::default();
        let want = whole_map(grid, &outlets, &params(), &heights, &inputs, 20, 1000.0);
        for (nx, ny) in [(2, 2), (4, 4)] {
            let l = TileLayout::new(grid, nx, ny).unwrap();
            let (p, o) = (&params(), &outlets);
            let exact = run_tiled(&l, o, p, &heights, &inputs, 20, 1000.0).unwrap();
            assert!(exact
                .heights
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
            let affine = ChainSolve::Affine;
            let got = run_tiled_with(&l, o, p, &heights, &inputs, 20, 1000.0, affine).unwrap();
            for (i, (a, b)) in got.heights.iter().zip(&want).enumerate() {
                let step = f32::from_bits(b.to_bits() + 1) - b;
                assert!(
                    (a - b).abs() <= step,
                    "{offset} m, {nx}x{ny}: cell {i} {a} vs {b}"
                );
                differ += usize::from(a != b);
            }
        }
    }
    assert!(differ <= 13, "{differ} of 4 × 13,130 cells differ");
}

/// Whole-map heights and receivers after `steps` steps.
fn whole_map_routed(
    grid: Grid,
    outlets: &OutletParams,
    params: &Params,
    heights: &[f32],
    inputs: &Inputs,
    steps: usize,
    dt: f64,
) -> (Vec<f32>, Vec<u32>) {
    let mut sp = StreamPower::on_grid(grid, outlets, params, inputs.clone(), false, "sp").unwrap();
    let mut h = heights.to_vec();
    for _ in 0..steps {
        sp.step_heights(&mut h, dt).unwrap();
    }
    (h, sp.graph().receivers.clone())
}

/// The lake modes tiled: carve, fill flat and fill with a slope.
const LAKES: [SinkMode; 3] = [
    SinkMode::Carve,
    SinkMode::Fill { epsilon: 0.0 },
    SinkMode::Fill { epsilon: 0.01 },
];

#[test]
fn tiled_lakes_give_the_whole_maps_receivers_and_bytes_after_20_steps() {
    // Pit-rich terrains (40 m of noise over a dome of 4 m per cell), some rounded to 5 m
    // (flats and tied passes everywhere), with rain, per-cell k and uplift, and a sea.
    let dt = 1000.0;
    let coast = OutletParams {
        borders: vec![Side::North, Side::West],
        sea_level: Some(30.0),
    };
    // About 0.5 s a tiled run in the test profile: 15 runs.
    let (first, second): (&[(usize, usize)], &[_]) = (&[(2, 2), (4, 4), (5, 2)], &[(3, 3), (4, 4)]);
    for (w, h, seed, step, rain, outlets, tilings) in [
        (97, 83, 31, 5.0, true, OutletParams::default(), first),
        (130, 101, 32, 0.0, false, coast, second),
    ] {
        let grid = Grid::new(w, h, 100.0).unwrap();
        let heights = terrain(grid, seed, 40.0, step);
        let inputs = inputs(grid, seed, rain);
        for lakes in LAKES {
            let p = Params { lakes, ..params() };
            let (want, want_r) = whole_map_routed(grid, &outlets, &p, &heights, &inputs, 20, dt);
            for &(nx, ny) in tilings {
                let l = TileLayout::new(grid, nx, ny).unwrap();
                let got = run_tiled(&l, &outlets, &p, &heights, &inputs, 20, dt).unwrap();
                let what = format!("{w}x{h} {lakes:?} {nx}x{ny}");
                let lakes_found: usize = got.stats.iter().map(|s| s.passes).sum();
                assert!(
                    lakes_found > 20,
                    "{what}: {lakes_found} lakes in the last step"
                );
                let bad = got.receivers.iter().zip(&want_r).position(|(a, b)| a != b);
                assert_eq!(bad, None, "{what}: receivers");
                let bad = got
                    .heights
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a.to_bits() != b.to_bits());
                assert_eq!(bad, None, "{what}: heights");
            }
        }
    }
}

#[test]
fn tiled_lakes_give_the_same_bytes_on_any_thread_count() {
    let grid = Grid::new(70, 61, 100.0).unwrap();
    let heights = terrain(grid, 33, 40.0, 2.0);
    let inputs = inputs(grid, 33, true);
    let l = TileLayout::new(grid, 3, 2).unwrap();
    let outlets = OutletParams::default();
    for lakes in [SinkMode::Carve, SinkMode::Fill { epsilon: 0.01 }] {
        let p = Params { lakes, ..params() };
        let run = |threads| {
            on_threads(threads, || {
                run_tiled(&l, &outlets, &p, &heights, &inputs, 5, 1000.0).unwrap()
            })
        };
        let one = run(1);
        for threads in [2, 7] {
            let other = run(threads);
            let same = one
                .heights
                .iter()
                .zip(&other.heights)
                .all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same, "{lakes:?}, {threads} threads");
            assert_eq!(
                one.receivers, other.receivers,
                "{lakes:?}, {threads} threads"
            );
        }
    }
}

#[test]
fn tiled_stream_power_with_n_other_than_1_gives_the_whole_maps_bytes() {
    // The per-node Newton solve needs the receiver's new height, as for n = 1: the exact
    // chain gives the whole map's bytes. k raised so that n = 2 erodes (slopes below 1).
    let dt = 1000.0;
    let grid = Grid::new(97, 83, 100.0).unwrap();
    for (seed, lakes, n) in [
        (41, SinkMode::None, 2.0),
        (42, SinkMode::Carve, 2.0),
        (43, SinkMode::Fill { epsilon: 0.0 }, 1.5),
    ] {
        let heights = match lakes {
            SinkMode::None => valleys(grid, seed, 5.0),
            _ => terrain(grid, seed, 40.0, 2.0),
        };
        let mut inputs = inputs(grid, seed, true);
        inputs.k.iter_mut().for_each(|k| *k *= 300.0);
        let p = Params {
            lakes,
            n,
            ..params()
        };
        let (want, want_r) = whole_map_routed(
            grid,
            &OutletParams::default(),
            &p,
            &heights,
            &inputs,
            20,
            dt,
        );
        let (linear, _) = whole_map_routed(
            grid,
            &OutletParams::default(),
            &Params { n: 1.0, ..p },
            &heights,
            &inputs,
            20,
            dt,
        );
        let differ = want
            .iter()
            .zip(&linear)
            .filter(|(a, b)| (*a - *b).abs() > 0.1)
            .count();
        assert!(
            differ > grid.len() / 4,
            "n = {n} changes the result ({differ} cells)"
        );
        for (nx, ny) in [(2, 2), (3, 3), (4, 4)] {
            let l = TileLayout::new(grid, nx, ny).unwrap();
            let o = OutletParams::default();
            let got = run_tiled(&l, &o, &p, &heights, &inputs, 20, dt).unwrap();
            let what = format!("n = {n} {lakes:?} {nx}x{ny}");
            assert_eq!(got.receivers, want_r, "{what}: receivers");
            let bad = got
                .heights
                .iter()
                .zip(&want)
                .position(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(bad, None, "{what}: heights");
        }
        // The affine chain is for n = 1 only.
        let l = TileLayout::new(grid, 2, 2).unwrap();
        let o = OutletParams::default();
        let e = run_tiled_with(&l, &o, &p, &heights, &inputs, 1, dt, ChainSolve::Affine)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("sp.n") && e.contains("affine"), "{e}");
    }
}

#[test]
fn the_tiled_dt_check_refuses_exactly_what_the_whole_map_refuses() {
    // Issue #41: `TileStreamPower::check_dt` is the whole map's `StreamPower::check_dt`
    // (one function) over the whole map's largest k and water, reduced over the tiles. On
    // random k and precipitation near the f32 limit (m = 5, n = 10: the erosion term reaches
    // f64's 1e300 within the range of dt), the precipitation random or uniform, with and
    // without strata's factors on k, the tiles (2x2 and 3x2 over threads) accept and refuse
    // the same dts as the whole map, with the same error, on both sides of the limit the
    // whole map's check draws.
    let grid = Grid::new(20, 16, 1.0).unwrap();
    let params = Params {
        m: 5.0,
        n: 10.0,
        lakes: SinkMode::None,
    };
    let outlets = OutletParams::default();
    for seed in 0..4u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = grid.len();
        let inputs = Inputs {
            k: (0..n).map(|_| rng.random_range(1e37..3e38)).collect(),
            uplift: vec![0.0; n],
            // Random, or uniform (its total the same in any order); without precipitation
            // k·(N·A)^5 stays far under the limit.
            precipitation: Some(if seed % 2 == 0 {
                (0..n).map(|_| rng.random_range(1e37..3e38)).collect()
            } else {
                vec![2e38; n]
            }),
        };
        let heights = terrain(grid, seed, 1.0, 0.0);
        // Over strata: one layer and bedrock, k scaled up to 7 times.
        let factors = (seed >= 2).then(|| vec![0.5f32, 7.0]);
        let whole = |dt: f64| -> Result<(), String> {
            let mut s = StreamPower::on_grid(grid, &outlets, &params, inputs.clone(), false, "sp")
                .map_err(|e| e.to_string())?;
            if let Some(f) = &factors {
                s.set_material_erodibility(f.clone()).unwrap();
            }
            s.check_dt(dt).map_err(|e| e.to_string())
        };
        // The whole map's limit, bisected in log space.
        let (mut lo, mut hi) = (1e-3f64, 1e9f64);
        assert!(
            whole(lo).is_ok() && whole(hi).is_err(),
            "seed {seed}: no limit"
        );
        for _ in 0..80 {
            let mid = (lo * hi).sqrt();
            if whole(mid).is_ok() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        for (nx, ny) in [(2, 2), (3, 2)] {
            let layout = TileLayout::new(grid, nx, ny).unwrap();
            for dt in [
                1.0,
                lo * (1.0 - 1e-9),
                hi * (1.0 + 1e-9),
                1e9,
                0.0,
                -5.0,
                2e9,
            ] {
                let want = whole(dt);
                let got = run_threads(layout.count(), |comm| {
                    let rank = comm.rank();
                    let cut = TileInputs::cut(&layout, rank, &heights, &inputs)?;
                    let mut tile =
                        TileStreamPower::new(&layout, rank, &outlets, &params, cut, "sp")?;
                    if let Some(f) = &factors {
                        tile.set_material_erodibility(f.clone())?;
                    }
                    tile.check_dt(comm, dt)
                })
                .map(|_| ())
                .map_err(|e| e.to_string());
                assert_eq!(got, want, "seed {seed}, {nx}x{ny}, dt {dt}");
            }
            assert!(whole(lo * (1.0 - 1e-9)).is_ok() && whole(hi * (1.0 + 1e-9)).is_err());
        }
    }
}
