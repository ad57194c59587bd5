//! Tiled runs over strata (issue #41): the tiles' heights, layers and excesses against the
//! whole map's [`LayeredThermal`] step and [`Thermal`] step on layers (a `Material` talus
//! included), bit for bit.

use orogen_core::eroders::layered_thermal::{LayeredThermal, Params};
use orogen_core::eroders::thermal::{self, TalusAngle, Thermal};
use orogen_core::flow::RasterGrid;
use orogen_core::state::{Layers, MaterialProps, TerrainMut};
use orogen_core::tiles::{
    gather_map, run_threads, Comm, TileLayeredThermal, TileLayout, TileThermal, ROOT,
};
use orogen_core::Grid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::tiles::terrain;

fn material(talus_deg: f32, thermal_susceptibility: f32) -> MaterialProps {
    MaterialProps {
        talus_deg,
        thermal_susceptibility,
        ..Default::default()
    }
}

/// Sand (empty but in patches), two beds of random thickness, bedrock: soft beds that
/// empty and expose the harder ones within the run.
fn layered(grid: Grid, seed: u64) -> (Vec<f32>, Layers, Vec<MaterialProps>) {
    let heights = terrain(grid, seed, 60.0, 0.0);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 7);
    let n = grid.len();
    let mut thick = |lo: f32, hi: f32, p: f64| -> Vec<f32> {
        (0..n)
            .map(|_| {
                if rng.random_bool(p) {
                    rng.random_range(lo..hi)
                } else {
                    0.0
                }
            })
            .collect()
    };
    let layers = vec![
        ("sand".to_string(), thick(0.0, 0.5, 0.3)),
        ("shale".to_string(), thick(0.1, 2.0, 0.8)),
        ("sandstone".to_string(), thick(0.5, 8.0, 0.9)),
    ];
    let materials = vec![
        material(30.0, 1.0),
        material(25.0, 0.8),
        material(45.0, 0.4),
        material(60.0, 0.1),
    ];
    (heights, Layers::new(layers, n).unwrap(), materials)
}

/// The tiles' heights and layers (gathered whole) after `steps` steps, and the excess of
/// each step.
fn run_tiled(
    l: &TileLayout,
    p: &Params,
    (heights, layers, materials): &(Vec<f32>, Layers, Vec<MaterialProps>),
    steps: usize,
) -> (Vec<f32>, Vec<Vec<f32>>, Vec<f32>) {
    let out = run_threads(l.count(), |comm| {
        let rank = comm.rank();
        let h = l.cut(rank, heights, "h")?;
        let parts = (layers.names().iter().enumerate())
            .map(|(k, name)| Ok((name.clone(), l.cut(rank, layers.thickness(k), "t")?)))
            .collect::<orogen_core::Result<Vec<_>>>()?;
        let own = Layers::new(parts, h.len())?;
        let mut tile = TileLayeredThermal::new(l, rank, p, 9, &h, &own, materials, "lt")?;
        let excess = (0..steps)
            .map(|_| tile.step(comm))
            .collect::<orogen_core::Result<Vec<f32>>>()?;
        let heights = gather_map(comm, l, ROOT, 100, &tile.heights(), "heights")?;
        let got = tile.layers()?;
        let mut whole = Vec::new();
        for k in 0..got.len() {
            whole.push(gather_map(
                comm,
                l,
                ROOT,
                101 + k as u32,
                got.thickness(k),
                "t",
            )?);
        }
        Ok((heights, whole, excess))
    })
    .unwrap();
    let (h, layers, excess) = out.into_iter().next().unwrap();
    (
        h.unwrap(),
        layers.into_iter().map(Option::unwrap).collect(),
        excess,
    )
}

fn whole_map(
    grid: Grid,
    p: &Params,
    (heights, layers, materials): &(Vec<f32>, Layers, Vec<MaterialProps>),
    steps: usize,
) -> (Vec<f32>, Vec<Vec<f32>>, Vec<f32>) {
    let mut t = LayeredThermal::new(grid, *p, 9).unwrap();
    let (mut h, mut layers) = (heights.clone(), layers.clone());
    let excess = (0..steps)
        .map(|_| {
            let mut terrain = TerrainMut::new(&mut h, &mut layers);
            t.step(&mut terrain, materials).unwrap().max_excess
        })
        .collect();
    let whole = (0..layers.len())
        .map(|k| layers.thickness(k).to_vec())
        .collect();
    (h, whole, excess)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn tiled_layered_thermal_gives_the_whole_maps_bytes() {
    let grid = Grid::new(53, 41, 10.0).unwrap();
    let world = layered(grid, 21);
    let p = Params {
        rate: 0.8,
        randomness: 0.3,
        tolerance: 0.01,
    };
    let (want_h, want_l, excess) = whole_map(grid, &p, &world, 15);
    assert!(
        excess[0] > 1.0,
        "the terrain is over its talus ({excess:?})"
    );
    // Layers emptied and others exposed: the exposed material changes under the run.
    let emptied = (0..grid.len())
        .filter(|&i| world.1.thickness(1)[i] > 0.0 && want_l[1][i] == 0.0)
        .count();
    assert!(emptied > 10, "{emptied} cells lost their shale");
    for (nx, ny) in [(2, 2), (3, 3), (7, 1)] {
        let l = TileLayout::new(grid, nx, ny).unwrap();
        let (h, layers, got_excess) = run_tiled(&l, &p, &world, 15);
        assert_eq!(got_excess, excess, "{nx}x{ny}");
        assert!(bits(&h) == bits(&want_h), "{nx}x{ny}: heights differ");
        for (k, (a, b)) in layers.iter().zip(&want_l).enumerate() {
            assert!(bits(a) == bits(b), "{nx}x{ny}: layer {k} differs");
        }
    }
}

#[test]
fn tiled_layered_thermal_stops_with_the_whole_map_at_the_tolerance() {
    let grid = Grid::new(40, 36, 10.0).unwrap();
    let (mut heights, layers, materials) = layered(grid, 5);
    // Flat but for one spike in a corner tile: every tile stops with the whole map.
    heights.iter_mut().for_each(|h| *h = 0.0);
    heights[grid.index(4, 4)] = 60.0;
    let world = (heights, layers, materials);
    let p = Params {
        tolerance: 3.0,
        ..Params::default()
    };
    let (want_h, want_l, excess) = whole_map(grid, &p, &world, 30);
    assert!(
        excess[0] > 3.0 && *excess.last().unwrap() <= 3.0,
        "{excess:?}"
    );
    let l = TileLayout::new(grid, 3, 3).unwrap();
    let (h, layers, got_excess) = run_tiled(&l, &p, &world, 30);
    assert_eq!(got_excess, excess);
    assert!(bits(&h) == bits(&want_h));
    assert!(layers.iter().zip(&want_l).all(|(a, b)| bits(a) == bits(b)));
}

/// A `Thermal` stage on a layered terrain, tiled `l`: heights and layers after `steps`,
/// and each step's excess.
fn run_tiled_thermal(
    l: &TileLayout,
    p: &thermal::Params,
    (heights, layers, materials): &(Vec<f32>, Layers, Vec<MaterialProps>),
    tangents: &[f32],
    steps: usize,
) -> (Vec<f32>, Vec<Vec<f32>>, Vec<f32>) {
    let talus: Vec<f32> = materials.iter().map(|m| m.talus_deg).collect();
    let out = run_threads(l.count(), |comm| {
        let rank = comm.rank();
        let (h, t) = (l.cut(rank, heights, "h")?, l.cut(rank, tangents, "t")?);
        let parts = (layers.names().iter().enumerate())
            .map(|(k, name)| Ok((name.clone(), l.cut(rank, layers.thickness(k), "t")?)))
            .collect::<orogen_core::Result<Vec<_>>>()?;
        let mut tile = TileThermal::new(l, rank, p, &h, &t, "thermal")?;
        tile.set_layers(Layers::new(parts, h.len())?, &talus, "thermal")?;
        let excess = (0..steps)
            .map(|_| tile.step(comm))
            .collect::<orogen_core::Result<Vec<f32>>>()?;
        let heights = gather_map(comm, l, ROOT, 100, &tile.heights(), "heights")?;
        let got = tile.layers();
        let mut whole = Vec::new();
        for k in 0..got.len() {
            whole.push(gather_map(
                comm,
                l,
                ROOT,
                101 + k as u32,
                got.thickness(k),
                "t",
            )?);
        }
        Ok((heights, whole, excess))
    })
    .unwrap();
    let (h, layers, excess) = out.into_iter().next().unwrap();
    (
        h.unwrap(),
        layers.into_iter().map(Option::unwrap).collect(),
        excess,
    )
}

#[test]
fn tiled_thermal_on_strata_gives_the_whole_maps_bytes_with_a_material_talus() {
    let grid = Grid::new(49, 43, 10.0).unwrap();
    let world = layered(grid, 31);
    for talus in [TalusAngle::Material, TalusAngle::Constant(28.0)] {
        let p = thermal::Params {
            talus: talus.clone(),
            rate: 0.5,
            tolerance: 0.01,
        };
        let (heights, layers, materials) = &world;
        let mut whole =
            Thermal::new(RasterGrid::new(grid, &[]), p.clone(), 3, heights, "t").unwrap();
        let tangents = whole.tangents().to_vec();
        let deg: Vec<f32> = materials.iter().map(|m| m.talus_deg).collect();
        whole.set_material_talus(&deg);
        let (mut h, mut l) = (heights.clone(), layers.clone());
        let excess: Vec<f32> = (0..12)
            .map(|_| whole.step(&mut TerrainMut::new(&mut h, &mut l)))
            .collect();
        assert!(excess[0] > 1.0, "{talus:?}: {excess:?}");
        // The layers moved: some cells lost their top bed, others gained sand.
        let sand = (0..grid.len())
            .filter(|&i| l.thickness(0)[i] > layers.thickness(0)[i])
            .count();
        assert!(sand > 10, "{talus:?}: {sand} cells gained sand");
        for (nx, ny) in [(2, 2), (3, 3)] {
            let lay = TileLayout::new(grid, nx, ny).unwrap();
            let (got_h, got_l, got_excess) = run_tiled_thermal(&lay, &p, &world, &tangents, 12);
            assert_eq!(got_excess, excess, "{talus:?} {nx}x{ny}");
            assert!(bits(&got_h) == bits(&h), "{talus:?} {nx}x{ny}: heights");
            assert_eq!(got_l.len(), l.len());
            for (k, got) in got_l.iter().enumerate() {
                assert!(
                    bits(got) == bits(l.thickness(k)),
                    "{talus:?} {nx}x{ny}: layer {k}"
                );
            }
        }
    }
}
