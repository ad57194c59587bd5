//! Tiled pipe model (issue #41): a tile's `Hydraulic` step over its halo gives the whole
//! map's bytes (heights, water, sediment, fluxes, velocity) and the whole map's sums of the
//! water and sediment lost at open borders, over 2×2 and 3×3 tiles and 1 or 3 threads.

use orogen_core::eroders::hydraulic::{
    border_sums, Borders, CapacityLaw, Hydraulic, Params, Rain, Source,
};
use orogen_core::state::{Layers, MaterialProps, SimState, TerrainMut};
use orogen_core::tiles::{
    gather_map, run_threads, Comm, TileHydraulic, TileLayout, TileWater, ROOT,
};
use orogen_core::Grid;

use super::support::on_threads;
use super::tiles::terrain;

/// The whole map after stages of `steps` each (a new process per stage, the state carried
/// over): heights, state, and the lost water and sediment summed per stage as the stage
/// sums its figures.
fn whole(
    grid: Grid,
    p: &Params,
    seed: u64,
    heights: &[f32],
    stages: &[usize],
) -> (Vec<f32>, SimState, Vec<(f64, f64)>) {
    let mut h = heights.to_vec();
    let mut sim = SimState::default();
    let mut lost = Vec::new();
    for &steps in stages {
        let mut hy = Hydraulic::new(grid, p.clone(), seed).unwrap();
        let (mut water, mut sed) = (0.0f64, 0.0f64);
        for _ in 0..steps {
            let mut layers = Layers::none();
            let mut t = TerrainMut::new(&mut h, &mut layers);
            let r = hy
                .step(&mut t, &mut sim, &[MaterialProps::default()])
                .unwrap();
            water += r.water_lost_m3;
            sed += r.sediment_lost_m3;
            // The border sums from each cell's losses are the step's own.
            let flux = sim.flux.as_deref().unwrap();
            let (w, s) = border_sums(grid.width, grid.height, p.dt, grid.cell_area(), |x, y| {
                let has = [x > 0, x + 1 < grid.width, y > 0, y + 1 < grid.height];
                hy.border_losses(flux, y * grid.width + x, has)
            });
            assert_eq!(
                (w.to_bits(), s.to_bits()),
                (r.water_lost_m3.to_bits(), r.sediment_lost_m3.to_bits())
            );
        }
        lost.push((water, sed));
    }
    (h, sim, lost)
}

type Tiled = (Vec<f32>, TileWater, Vec<(f64, f64)>);

/// The same stages tiled over `l`, gathered at the root.
fn tiled(l: &TileLayout, p: &Params, seed: u64, heights: &[f32], stages: &[usize]) -> Tiled {
    let out = run_threads(l.count(), |comm| {
        let rank = comm.rank();
        let mut h = l.cut(rank, heights, "h")?;
        let mut state: Option<TileWater> = None;
        let mut lost = Vec::new();
        for &steps in stages {
            let mut tile = TileHydraulic::new(l, rank, p, seed, &h, state.as_ref(), "hy")?;
            for _ in 0..steps {
                tile.step(comm)?;
            }
            lost.push(tile.lost(comm)?);
            h = tile.heights();
            state = Some(tile.state());
        }
        let s = state.unwrap();
        let vel: Vec<[f32; 2]> = s.velocity.iter().map(|v| [v.x, v.y]).collect();
        Ok((
            gather_map(comm, l, ROOT, 100, &h, "h")?,
            gather_map(comm, l, ROOT, 101, &s.water, "water")?,
            gather_map(comm, l, ROOT, 102, &s.sediment, "sediment")?,
            gather_map(comm, l, ROOT, 103, &s.flux, "flux")?,
            gather_map(comm, l, ROOT, 104, &vel, "velocity")?,
            lost,
        ))
    })
    .unwrap();
    let (h, w, s, f, v, lost) = out.into_iter().next().unwrap();
    let state = TileWater {
        water: w.unwrap(),
        sediment: s.unwrap(),
        flux: f.unwrap(),
        velocity: v
            .unwrap()
            .iter()
            .map(|v| glam::Vec2::new(v[0], v[1]))
            .collect(),
    };
    (
        h.unwrap(),
        state,
        lost.into_iter().map(Option::unwrap).collect(),
    )
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn tiled_hydraulic_gives_the_whole_maps_bytes() {
    let grid = Grid::new(37, 29, 10.0).unwrap();
    let heights = terrain(grid, 5, 8.0, 0.0);
    let seed = 77;
    let plain = Params {
        rain: Rain::Uniform { rate_m_per_s: 0.02 },
        ..Params::default()
    };
    // Drops hashed per whole-map cell, a disc source and a point source crossing tile
    // edges, open borders (water and sediment lost, summed as the whole map sums them),
    // friction and the stream-power capacity.
    let busy = Params {
        rain: Rain::Drops {
            power: 0.3,
            volume_m3: 2.0,
        },
        sources: vec![
            Source {
                x_m: 180.0,
                y_m: 140.0,
                radius_m: 35.0,
                rate_m3_per_s: 40.0,
                every_step: true,
            },
            Source {
                x_m: 60.0,
                y_m: 200.0,
                radius_m: 0.0,
                rate_m3_per_s: 300.0,
                every_step: false,
            },
        ],
        borders: Borders::Open,
        chezy: Some(30.0),
        capacity_law: CapacityLaw::StreamPower,
        capacity: 0.5,
        ..Params::default()
    };
    for (case, p) in [("plain", plain), ("busy", busy)] {
        // 70 steps: the edge losses go to the root in two flushes (every 64 steps).
        let stages = [70, 9];
        let (h, sim, lost) = whole(grid, &p, seed, &heights, &stages);
        assert_ne!(bits(&h), bits(&heights), "{case}: nothing eroded");
        if p.borders == Borders::Open {
            assert!(lost[0].0 > 0.0 && lost[1].1 > 0.0, "{case}: {lost:?}");
        }
        for (nx, ny) in [(2, 2), (3, 3)] {
            let l = TileLayout::new(grid, nx, ny).unwrap();
            for threads in [1, 3] {
                let (th, ts, tlost) =
                    on_threads(threads, || tiled(&l, &p, seed, &heights, &stages));
                let at = format!("{case} {nx}x{ny} on {threads} threads");
                assert_eq!(bits(&th), bits(&h), "{at}: heights");
                assert_eq!(
                    bits(&ts.water),
                    bits(sim.water_depth.as_ref().unwrap()),
                    "{at}"
                );
                assert_eq!(
                    bits(&ts.sediment),
                    bits(sim.sediment.as_ref().unwrap()),
                    "{at}"
                );
                let flat = |f: &[[f32; 4]]| bits(&f.concat());
                assert_eq!(
                    flat(&ts.flux),
                    flat(sim.flux.as_ref().unwrap()),
                    "{at}: flux"
                );
                let vel =
                    |v: &[glam::Vec2]| bits(&v.iter().flat_map(|v| [v.x, v.y]).collect::<Vec<_>>());
                assert_eq!(
                    vel(&ts.velocity),
                    vel(sim.velocity.as_ref().unwrap()),
                    "{at}"
                );
                let b = |l: &[(f64, f64)]| {
                    l.iter()
                        .map(|p| (p.0.to_bits(), p.1.to_bits()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(b(&tlost), b(&lost), "{at}: lost water and sediment");
            }
        }
    }
}
