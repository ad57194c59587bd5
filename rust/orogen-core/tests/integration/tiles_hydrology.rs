//! The `Hydrology` stage's maps made per tile (issue #41): every map (drainage, water
//! surface, lake depth, rivers, basins) and the routed receivers have the whole map's
//! bytes, with every lake mode, a water-surface slope, rain and a sea, on several tilings
//! and thread counts.

use orogen_core::flow::hydrology::{Hydrology, HydrologyMaps, Params};
use orogen_core::flow::{OutletParams, RasterGrid, Side, SinkMode};
use orogen_core::tiles::{gather_map, run_threads, Comm, TileLayout, TileStreamPower, ROOT};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::support::on_threads;
use super::tiles::terrain;

/// The tiles' maps and receivers, gathered whole at the root.
fn tiled(
    layout: &TileLayout,
    outlets: &OutletParams,
    params: &Params,
    heights: &[f32],
    rain: Option<&[f32]>,
) -> (HydrologyMaps, Vec<u32>) {
    let mut out = run_threads(layout.count(), |comm| {
        let rank = comm.rank();
        let h = layout.cut(rank, heights, "heights")?;
        let r = match rain {
            Some(r) => Some(layout.cut(rank, r, "rain")?),
            None => None,
        };
        let mut tile =
            TileStreamPower::router(layout, rank, outlets, params.lakes, h, r, "Hydrology")?;
        let m = tile.hydrology(comm, params)?;
        Ok((
            gather_map(comm, layout, ROOT, 100, &m.drainage, "drainage")?,
            gather_map(comm, layout, ROOT, 101, &m.water_surface, "surface")?,
            gather_map(comm, layout, ROOT, 102, &m.lake_depth, "depth")?,
            gather_map(comm, layout, ROOT, 103, &m.rivers, "rivers")?,
            gather_map(comm, layout, ROOT, 104, &m.basins, "basins")?,
            gather_map(comm, layout, ROOT, 105, tile.receivers(), "receivers")?,
        ))
    })
    .unwrap();
    let (d, w, l, r, b, rcv) = out.swap_remove(ROOT);
    let maps = HydrologyMaps {
        drainage: d.unwrap(),
        water_surface: w.unwrap(),
        lake_depth: l.unwrap(),
        rivers: r.unwrap(),
        basins: b.unwrap(),
    };
    (maps, rcv.unwrap())
}

fn whole(
    grid: Grid,
    outlets: &OutletParams,
    params: &Params,
    heights: &[f32],
    rain: Option<&[f32]>,
) -> (HydrologyMaps, Vec<u32>) {
    let nb = RasterGrid::new(grid, &outlets.borders);
    let mut h = Hydrology::new(nb, outlets.sea_level, *params, rain, "Hydrology").unwrap();
    let maps = h.compute(heights).unwrap();
    (maps, h.flow().receivers.clone())
}

/// The first cell where two f32 maps differ in their bits.
fn first_diff(a: &[f32], b: &[f32]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x.to_bits() != y.to_bits())
}

#[test]
fn tiled_hydrology_maps_are_the_whole_maps_bytes() {
    let coast = OutletParams {
        borders: vec![Side::North, Side::West],
        sea_level: Some(30.0),
    };
    let lakes = [
        SinkMode::None,
        SinkMode::Carve,
        SinkMode::Fill { epsilon: 0.0 },
        SinkMode::Fill { epsilon: 0.01 },
    ];
    // 24 tiled runs of about 0.1 s in the test profile.
    for (w, h, seed, step, rain, outlets, tilings, epsilon) in [
        (
            97,
            83,
            51,
            5.0,
            true,
            OutletParams::default(),
            [(2, 2), (5, 2), (1, 3)],
            0.0,
        ),
        (
            130,
            101,
            52,
            0.0,
            false,
            coast,
            [(3, 3), (4, 4), (2, 1)],
            0.005,
        ),
    ] {
        let grid = Grid::new(w, h, 100.0).unwrap();
        let heights = terrain(grid, seed, 40.0, step);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let rain: Option<Vec<f32>> = rain.then(|| {
            (0..grid.len())
                .map(|_| rng.random_range(0.5..2.0))
                .collect()
        });
        for lakes in lakes {
            let params = Params {
                lakes,
                river_threshold: 1e5,
                epsilon,
            };
            let (want, want_r) = whole(grid, &outlets, &params, &heights, rain.as_deref());
            let rivers = want.rivers.iter().filter(|&&r| r == 1).count();
            let basins = want.basins.iter().max().copied().unwrap_or(0) + 1;
            let lake_cells = want.lake_depth.iter().filter(|&&d| d > 0.0).count();
            // The cases hold rivers, lakes and many basins (both kinds of roots with None).
            assert!(
                rivers > 20 && basins > 50,
                "{rivers} river cells, {basins} basins"
            );
            if lakes != SinkMode::None {
                assert!(lake_cells > 100, "{lakes:?}: {lake_cells} lake cells");
            }
            for (nx, ny) in tilings {
                let what = format!("{w}x{h} {lakes:?} {nx}x{ny}");
                let layout = TileLayout::new(grid, nx, ny).unwrap();
                let (got, got_r) = tiled(&layout, &outlets, &params, &heights, rain.as_deref());
                assert_eq!(
                    first_diff(&got.drainage, &want.drainage),
                    None,
                    "{what}: drainage"
                );
                let surface = first_diff(&got.water_surface, &want.water_surface);
                assert_eq!(surface, None, "{what}: water surface");
                let depth = first_diff(&got.lake_depth, &want.lake_depth);
                assert_eq!(depth, None, "{what}: lake depth");
                assert!(got.rivers == want.rivers, "{what}: rivers");
                let bad = got
                    .basins
                    .iter()
                    .zip(&want.basins)
                    .position(|(a, b)| a != b);
                assert_eq!(bad, None, "{what}: basins");
                let bad = got_r.iter().zip(&want_r).position(|(a, b)| a != b);
                assert_eq!(bad, None, "{what}: receivers");
            }
        }
    }
}

#[test]
fn tiled_hydrology_gives_the_same_bytes_on_any_thread_count() {
    let grid = Grid::new(70, 61, 100.0).unwrap();
    let heights = terrain(grid, 53, 40.0, 2.0);
    let layout = TileLayout::new(grid, 3, 2).unwrap();
    let params = Params {
        lakes: SinkMode::Fill { epsilon: 0.01 },
        river_threshold: 1e5,
        epsilon: 0.002,
    };
    let outlets = OutletParams::default();
    let run = |threads| {
        on_threads(threads, || {
            tiled(&layout, &outlets, &params, &heights, None)
        })
    };
    let (one, one_r) = run(1);
    for threads in [2, 5] {
        let (other, other_r) = run(threads);
        assert!(one == other && one_r == other_r, "{threads} threads");
    }
}
