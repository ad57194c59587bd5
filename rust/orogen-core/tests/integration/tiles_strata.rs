//! Tiled runs over strata (issue #41): `StreamPower` (its `k` from the exposed material,
//! the eroded thickness taken from the top layers down) and the pipe model (dissolving
//! down the layers by dissolubility, depositing into layer 0) tiled 2×2, 3×3 and 7×1 give
//! the whole map's heights and every layer bit for bit, with beds that empty in the run.

use orogen_core::eroders::hydraulic::{Borders, CapacityLaw, Hydraulic, Rain, Source};
use orogen_core::eroders::stream_power::{Inputs, Params, StreamPower};
use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::state::{Layers, MaterialProps, SimState, TerrainMut};
use orogen_core::tiles::{
    gather_map, run_threads, Comm, TileHydraulic, TileInputs, TileLayout, TileStreamPower,
    TileWater, ROOT,
};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::support::on_threads;
use super::tiles::{inputs, terrain, valleys};

const TILINGS: [(usize, usize); 3] = [(2, 2), (3, 3), (7, 1)];

/// Three layers over bedrock, each in patches (`p` of the cells) of a random thickness up
/// to `scale` × (1, 4, 10) metres: thin soft beds that empty and expose harder ones.
fn strata(grid: Grid, seed: u64, scale: f32) -> Layers {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x57a7a);
    let n = grid.len();
    let mut thick = |hi: f32, p: f64| -> Vec<f32> {
        (0..n)
            .map(|_| {
                if rng.random_bool(p) {
                    rng.random_range(0.0..hi)
                } else {
                    0.0
                }
            })
            .collect()
    };
    let layers = vec![
        ("sand".to_string(), thick(scale, 0.4)),
        ("shale".to_string(), thick(4.0 * scale, 0.8)),
        ("sandstone".to_string(), thick(10.0 * scale, 0.9)),
    ];
    Layers::new(layers, n).unwrap()
}

fn materials() -> Vec<MaterialProps> {
    let m = |erodibility: f32, dissolubility: f32| MaterialProps {
        erodibility,
        dissolubility,
        ..Default::default()
    };
    vec![m(3.0, 1.0), m(1.5, 0.6), m(0.3, 0.2), m(0.6, 0.1)]
}

/// The first cell where `a` and `b` differ in any bit.
fn differ(a: &[f32], b: &[f32]) -> Option<usize> {
    assert_eq!(a.len(), b.len());
    (a.iter().zip(b)).position(|(x, y)| x.to_bits() != y.to_bits())
}

/// Every layer's thickness, whole.
fn thicknesses(l: &Layers) -> Vec<Vec<f32>> {
    (0..l.len()).map(|k| l.thickness(k).to_vec()).collect()
}

/// Tile `rank`'s part of `layers`.
fn cut_layers(l: &TileLayout, rank: usize, layers: &Layers) -> orogen_core::Result<Layers> {
    let parts = (layers.names().iter().enumerate())
        .map(|(k, name)| Ok((name.clone(), l.cut(rank, layers.thickness(k), "t")?)))
        .collect::<orogen_core::Result<Vec<_>>>()?;
    Layers::new(parts, l.tile(rank).interior.len())
}

/// Every layer of a tile, gathered whole at the root (tags from `tag`).
fn gather_layers<C: Comm>(
    comm: &mut C,
    l: &TileLayout,
    tag: u32,
    layers: &Layers,
) -> orogen_core::Result<Vec<Option<Vec<f32>>>> {
    (0..layers.len())
        .map(|k| gather_map(comm, l, ROOT, tag + k as u32, layers.thickness(k), "t"))
        .collect()
}

/// Cells where layer `k` had material and has none left.
fn emptied(before: &Layers, after: &[Vec<f32>], k: usize) -> usize {
    (before.thickness(k).iter().zip(&after[k]))
        .filter(|(a, b)| **a > 0.0 && **b == 0.0)
        .count()
}

/// The whole map's layered stream power after `steps` steps: heights and layers.
fn whole_stream_power(
    grid: Grid,
    p: &Params,
    heights: &[f32],
    layers: &Layers,
    inputs: &Inputs,
    steps: usize,
    dt: f64,
) -> (Vec<f32>, Vec<Vec<f32>>) {
    let o = OutletParams::default();
    let mut sp = StreamPower::on_grid(grid, &o, p, inputs.clone(), false, "sp").unwrap();
    let factors = materials().iter().map(|m| m.erodibility).collect();
    sp.set_material_erodibility(factors).unwrap();
    let (mut h, mut l) = (heights.to_vec(), layers.clone());
    for _ in 0..steps {
        sp.step(&mut TerrainMut::new(&mut h, &mut l), dt).unwrap();
    }
    (h, thicknesses(&l))
}

#[allow(clippy::too_many_arguments)]
fn tiled_stream_power(
    l: &TileLayout,
    p: &Params,
    heights: &[f32],
    layers: &Layers,
    inputs: &Inputs,
    steps: usize,
    dt: f64,
) -> (Vec<f32>, Vec<Vec<f32>>) {
    let out = run_threads(l.count(), |comm| {
        let rank = comm.rank();
        let cut = TileInputs::cut(l, rank, heights, inputs)?;
        let o = OutletParams::default();
        let mut tile = TileStreamPower::new(l, rank, &o, p, cut, "sp")?;
        tile.set_material_erodibility(materials().iter().map(|m| m.erodibility).collect())?;
        let mut own = cut_layers(l, rank, layers)?;
        for _ in 0..steps {
            tile.step_layered(comm, dt, &mut own)?;
        }
        let h = gather_map(comm, l, ROOT, 100, &tile.heights(), "heights")?;
        Ok((h, gather_layers(comm, l, 110, &own)?))
    })
    .unwrap();
    let (h, layers) = out.into_iter().next().unwrap();
    (h.unwrap(), layers.into_iter().map(Option::unwrap).collect())
}

#[test]
fn tiled_stream_power_over_strata_gives_the_whole_maps_heights_and_layers() {
    let (dt, steps) = (1000.0, 15);
    let grid = Grid::new(97, 83, 100.0).unwrap();
    for (seed, lakes, n) in [
        (51, SinkMode::Carve, 1.0),
        (52, SinkMode::Carve, 2.0),
        (53, SinkMode::Fill { epsilon: 0.01 }, 1.0),
        (54, SinkMode::None, 1.5),
    ] {
        let heights = match lakes {
            SinkMode::None => valleys(grid, seed, 5.0),
            _ => terrain(grid, seed, 40.0, 2.0),
        };
        let mut inputs = inputs(grid, seed, true);
        if n != 1.0 {
            // Slopes below 1: a larger k for n > 1 to erode.
            inputs.k.iter_mut().for_each(|k| *k *= 300.0);
        }
        let layers = strata(grid, seed, 1.0);
        let p = Params { m: 0.5, n, lakes };
        let what = format!("{lakes:?} n = {n}");
        let (want_h, want_l) = whole_stream_power(grid, &p, &heights, &layers, &inputs, steps, dt);
        // The beds matter: soft ones emptied, exposing harder ones (another k) in the run.
        let (sand, shale) = (emptied(&layers, &want_l, 0), emptied(&layers, &want_l, 1));
        assert!(
            sand > 200 && shale > 50,
            "{what}: {sand} sand, {shale} shale"
        );
        for (nx, ny) in TILINGS {
            let l = TileLayout::new(grid, nx, ny).unwrap();
            let (h, got) = tiled_stream_power(&l, &p, &heights, &layers, &inputs, steps, dt);
            assert_eq!(differ(&h, &want_h), None, "{what} {nx}x{ny}: heights");
            for (k, (a, b)) in got.iter().zip(&want_l).enumerate() {
                assert_eq!(differ(a, b), None, "{what} {nx}x{ny}: layer {k}");
            }
        }
    }
}

fn hydraulic_params() -> orogen_core::eroders::hydraulic::Params {
    // Drops hashed per whole-map cell, a source across tile edges, open borders, friction
    // and the stream-power capacity: fast water that dissolves.
    orogen_core::eroders::hydraulic::Params {
        rain: Rain::Drops {
            power: 0.3,
            volume_m3: 2.0,
        },
        sources: vec![Source {
            x_m: 180.0,
            y_m: 140.0,
            radius_m: 35.0,
            rate_m3_per_s: 40.0,
            every_step: true,
        }],
        borders: Borders::Open,
        chezy: Some(30.0),
        capacity_law: CapacityLaw::StreamPower,
        capacity: 0.5,
        dissolve: 0.5,
        ..Default::default()
    }
}

type Water = (Vec<f32>, Vec<f32>, Vec<f32>, Vec<Vec<f32>>);

/// The whole map's pipe model over strata, stages of `stages` steps (the state and layers
/// carried over): heights, water, sediment, layers.
fn whole_hydraulic(grid: Grid, heights: &[f32], layers: &Layers, stages: &[usize]) -> Water {
    let (mut h, mut l) = (heights.to_vec(), layers.clone());
    let mut sim = SimState::default();
    for &steps in stages {
        let mut hy = Hydraulic::new(grid, hydraulic_params(), 77).unwrap();
        for _ in 0..steps {
            let mut t = TerrainMut::new(&mut h, &mut l);
            hy.step(&mut t, &mut sim, &materials()).unwrap();
        }
    }
    let (w, s) = (sim.water_depth.unwrap(), sim.sediment.unwrap());
    (h, w, s, thicknesses(&l))
}

fn tiled_hydraulic(l: &TileLayout, heights: &[f32], layers: &Layers, stages: &[usize]) -> Water {
    let out = run_threads(l.count(), |comm| {
        let rank = comm.rank();
        let mut h = l.cut(rank, heights, "h")?;
        let mut own = cut_layers(l, rank, layers)?;
        let mut state: Option<TileWater> = None;
        let p = hydraulic_params();
        for &steps in stages {
            let mut tile = TileHydraulic::new(l, rank, &p, 77, &h, state.as_ref(), "hy")?;
            tile.set_layers(own, &materials(), "hy")?;
            for _ in 0..steps {
                tile.step(comm)?;
            }
            h = tile.heights();
            state = Some(tile.state());
            own = tile.layers()?;
        }
        let s = state.unwrap();
        Ok((
            gather_map(comm, l, ROOT, 100, &h, "h")?,
            gather_map(comm, l, ROOT, 101, &s.water, "water")?,
            gather_map(comm, l, ROOT, 102, &s.sediment, "sediment")?,
            gather_layers(comm, l, 110, &own)?,
        ))
    })
    .unwrap();
    let (h, w, s, layers) = out.into_iter().next().unwrap();
    let layers = layers.into_iter().map(Option::unwrap).collect();
    (h.unwrap(), w.unwrap(), s.unwrap(), layers)
}

#[test]
fn tiled_hydraulic_over_strata_gives_the_whole_maps_heights_and_layers() {
    let grid = Grid::new(37, 29, 10.0).unwrap();
    let heights = terrain(grid, 5, 8.0, 0.0);
    let layers = strata(grid, 5, 0.02);
    let stages = [30, 9];
    let want = whole_hydraulic(grid, &heights, &layers, &stages);
    let (sand, shale) = (emptied(&layers, &want.3, 0), emptied(&layers, &want.3, 1));
    assert!(
        sand > 20 && shale > 10,
        "{sand} sand, {shale} shale emptied"
    );
    let grew = (layers.thickness(0).iter().zip(&want.3[0]))
        .filter(|(a, b)| b > a)
        .count();
    assert!(grew > 20, "{grew} cells gained sand");
    for (nx, ny) in TILINGS {
        let l = TileLayout::new(grid, nx, ny).unwrap();
        for threads in [1, 3] {
            let got = on_threads(threads, || tiled_hydraulic(&l, &heights, &layers, &stages));
            let at = format!("{nx}x{ny} on {threads} threads");
            assert_eq!(differ(&got.0, &want.0), None, "{at}: heights");
            assert_eq!(differ(&got.1, &want.1), None, "{at}: water");
            assert_eq!(differ(&got.2, &want.2), None, "{at}: sediment");
            for (k, (a, b)) in got.3.iter().zip(&want.3).enumerate() {
                assert_eq!(differ(a, b), None, "{at}: layer {k}");
            }
        }
    }
}
