//! The Hydrology stage: the maps it writes, its recipe syntax and its errors.

// Node-indexed parallel arrays read most clearly with index loops.
#![allow(clippy::needless_range_loop)]

use std::collections::HashSet;

use crate::support::{on_threads, HYDROLOGY_MAPS};
use orogen_core::flow::{OutletParams, Side, SinkMode};
use orogen_core::recipe::{ScalarSource, Stage};
use orogen_core::stages::hydrology::{compute_maps, HydrologyParams};
use orogen_core::world::names;
use orogen_core::{Grid, Heightfield, MapData, Recipe, World};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn pitted_world(seed: u64) -> World {
    let grid = Grid::new(48, 40, 50.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data: Vec<f32> = (0..grid.len())
        .map(|i| {
            let (x, y) = grid.coords(i);
            // A bowl open to the south plus noise: lakes, one big valley.
            let bowl = (x as f32 - 24.0).abs() * 2.0 + (40.0 - y as f32) * 0.5;
            bowl + rng.random_range(0.0..15.0)
        })
        .collect();
    World::new(Heightfield::from_vec(grid, data, "test").unwrap(), seed)
}

fn scalar<'a>(world: &'a World, name: &str) -> &'a [f32] {
    match world.maps.get(name) {
        Some(MapData::Scalar(m)) => &m.data,
        other => panic!("{name}: expected a scalar map, got {other:?}"),
    }
}

#[test]
fn maps_are_consistent_and_heights_untouched() {
    for seed in 0..10 {
        for lakes in [SinkMode::Carve, SinkMode::Fill { epsilon: 0.01 }] {
            let mut world = pitted_world(seed);
            let before = world.height.data.clone();
            let params = HydrologyParams {
                lakes,
                river_threshold: 20.0 * 2500.0,
                outlets: OutletParams {
                    borders: vec![Side::South, Side::West],
                    sea_level: None,
                },
                ..Default::default()
            };
            compute_maps(&mut world, &params).unwrap();
            assert_eq!(world.height.data, before, "heights must not change");
            let grid = world.grid();
            let n = grid.len();
            let drainage = scalar(&world, names::DRAINAGE).to_vec();
            let surface = scalar(&world, names::WATER_SURFACE).to_vec();
            let depth = scalar(&world, names::LAKE_DEPTH).to_vec();
            let Some(MapData::Mask(rivers)) = world.maps.get(names::RIVERS) else {
                panic!("rivers mask missing")
            };
            let Some(MapData::Labels(basins)) = world.maps.get(names::BASINS) else {
                panic!("basins labels missing")
            };
            // Lake depth is water surface minus terrain, never negative; some lakes exist.
            let mut wet = 0;
            for i in 0..n {
                assert!(surface[i] >= before[i]);
                assert_eq!(depth[i], surface[i] - before[i]);
                wet += usize::from(depth[i] > 0.0);
            }
            assert!(wet > 0, "seed {seed}: a pitted terrain has lakes");
            // Rivers are exactly the cells over the threshold.
            for i in 0..n {
                assert_eq!(
                    rivers.data[i],
                    u8::from(drainage[i] >= params.river_threshold)
                );
            }
            // Basins: one label per outlet on the open borders, all of the domain drained there.
            let labels: HashSet<u32> = basins.data.iter().copied().collect();
            let outlets: Vec<usize> = (0..n)
                .filter(|&i| {
                    let (x, y) = grid.coords(i);
                    x == 0 || y + 1 == grid.height
                })
                .collect();
            assert_eq!(labels.len(), outlets.len(), "seed {seed}");
            let total: f64 = outlets.iter().map(|&i| drainage[i] as f64).sum();
            let area = n as f64 * grid.cell_area() as f64;
            assert!((total - area).abs() <= area * 1e-6, "{total} vs {area}");
            // Each outlet's basin holds as many cells as its drainage area counts.
            for &o in &outlets {
                let cells = basins.data.iter().filter(|&&b| b == basins.data[o]).count();
                assert_eq!(cells as f32 * grid.cell_area(), drainage[o], "seed {seed}");
            }
        }
    }
}

#[test]
fn precipitation_scales_discharge() {
    let mut dry = pitted_world(3);
    let mut wet = dry.clone();
    compute_maps(&mut dry, &HydrologyParams::default()).unwrap();
    let params = HydrologyParams {
        precipitation: Some(ScalarSource::Constant(0.5)),
        ..Default::default()
    };
    compute_maps(&mut wet, &params).unwrap();
    let (a, q) = (scalar(&dry, names::DRAINAGE), scalar(&wet, names::DRAINAGE));
    for i in 0..a.len() {
        // Halving a sum of equal terms is exact in binary floating point.
        assert_eq!(q[i], a[i] * 0.5);
    }
}

#[test]
fn sea_level_turns_low_cells_into_outlets() {
    let mut world = pitted_world(5);
    let sea = 20.0;
    let params = HydrologyParams {
        outlets: OutletParams {
            borders: vec![],
            sea_level: Some(sea),
        },
        ..Default::default()
    };
    compute_maps(&mut world, &params).unwrap();
    let depth = scalar(&world, names::LAKE_DEPTH);
    let Some(MapData::Labels(basins)) = world.maps.get(names::BASINS) else {
        panic!("basins labels missing")
    };
    let mut seen = HashSet::new();
    let mut sea_cells = 0;
    for (i, &z) in world.height.data.iter().enumerate() {
        if z <= sea {
            // Every sea cell is an outlet: no lake on it, and a basin of its own.
            sea_cells += 1;
            assert_eq!(depth[i], 0.0);
            assert!(
                seen.insert(basins.data[i]),
                "two sea cells share basin {}",
                basins.data[i]
            );
        }
    }
    assert!(sea_cells > 0);
    // With every border closed, every basin is a sea cell's.
    assert_eq!(basins.data.iter().copied().collect::<HashSet<_>>(), seen);
}

#[test]
fn recipe_syntax_parses_and_validates() {
    let text = r#"(
        size: (32, 32), cell_size: 10.0, seed: 1, terrain: Flat(0.0),
        stages: [
            Hydrology(lakes: Carve, river_threshold: 2e6),
            Hydrology(outlets: (borders: [South, East], sea_level: 0.0),
                      lakes: Fill(epsilon: 0.01), precipitation: Constant(1.2), epsilon: 0.001),
            Hydrology(lakes: None),
            Hydrology(),
        ],
    )"#;
    let recipe = Recipe::from_ron_str(text, "test").unwrap();
    recipe.validate().unwrap();
    let Stage::Hydrology(p) = &recipe.stages[1] else {
        panic!()
    };
    assert_eq!(p.lakes, SinkMode::Fill { epsilon: 0.01 });
    assert_eq!(p.outlets.borders, vec![Side::South, Side::East]);
    assert_eq!(p.outlets.sea_level, Some(0.0));
    let Stage::Hydrology(p) = &recipe.stages[2] else {
        panic!()
    };
    assert_eq!(p.lakes, SinkMode::None);
    let Stage::Hydrology(p) = &recipe.stages[0] else {
        panic!()
    };
    assert_eq!(p.river_threshold, 2e6);
    // Round trip through the writer.
    let again = Recipe::from_ron_str(&recipe.to_ron_string(), "again").unwrap();
    assert_eq!(again, recipe);
}

#[test]
fn bad_parameters_name_their_field() {
    let cases: Vec<(HydrologyParams, &str)> = vec![
        (
            HydrologyParams {
                outlets: OutletParams {
                    sea_level: Some(f32::NAN),
                    ..Default::default()
                },
                ..Default::default()
            },
            "stages[0].Hydrology.outlets.sea_level",
        ),
        (
            HydrologyParams {
                river_threshold: -1.0,
                ..Default::default()
            },
            "stages[0].Hydrology.river_threshold",
        ),
        (
            HydrologyParams {
                epsilon: f32::INFINITY,
                ..Default::default()
            },
            "stages[0].Hydrology.epsilon",
        ),
        (
            HydrologyParams {
                lakes: SinkMode::Fill { epsilon: -0.5 },
                ..Default::default()
            },
            "stages[0].Hydrology.lakes.Fill.epsilon",
        ),
        (
            HydrologyParams {
                precipitation: Some(ScalarSource::Constant(f32::NAN)),
                ..Default::default()
            },
            "stages[0].Hydrology.precipitation",
        ),
    ];
    for (params, field) in cases {
        let err = Stage::Hydrology(params)
            .validate("stages[0]")
            .unwrap_err()
            .to_string();
        assert!(err.contains(field), "expected `{field}` in: {err}");
    }
    // Negative precipitation values are caught when the map is resolved.
    let mut world = pitted_world(1);
    let params = HydrologyParams {
        precipitation: Some(ScalarSource::Constant(-1.0)),
        ..Default::default()
    };
    let err = compute_maps(&mut world, &params).unwrap_err().to_string();
    assert!(err.contains("precipitation"), "{err}");
}

#[test]
fn maps_are_the_same_bytes_with_one_and_four_threads() {
    let run = |threads: usize| {
        on_threads(threads, || {
            let grid = Grid::new(300, 220, 20.0).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let data: Vec<f32> = (0..grid.len())
                .map(|i| (i % 300) as f32 * 0.1 + rng.random_range(0.0..30.0))
                .collect();
            let mut out = Vec::new();
            for lakes in [SinkMode::Carve, SinkMode::Fill { epsilon: 0.05 }] {
                let mut world =
                    World::new(Heightfield::from_vec(grid, data.clone(), "t").unwrap(), 3);
                let params = HydrologyParams {
                    lakes,
                    epsilon: 0.01,
                    ..Default::default()
                };
                compute_maps(&mut world, &params).unwrap();
                out.push(world.maps);
            }
            out
        })
    };
    assert!(
        run(1) == run(4),
        "hydrology maps differ between 1 and 4 threads"
    );
}

#[test]
fn stage_runs_through_the_runner_and_honours_cancel() {
    use std::sync::atomic::AtomicBool;
    let stages = vec![Stage::Hydrology(HydrologyParams::default())];
    let mut world = pitted_world(2);
    let before = world.height.data.clone();
    let mut steps = 0;
    let cancel = AtomicBool::new(false);
    orogen_core::runner::run_stages(
        &mut world,
        &stages,
        std::path::Path::new("."),
        &cancel,
        &mut |e| {
            if let orogen_core::Event::Step { world, .. } = e {
                steps += 1;
                assert!(world.maps.contains_key(names::DRAINAGE));
            }
        },
    )
    .unwrap();
    assert_eq!(steps, 1);
    assert_eq!(world.height.data, before);
    for name in HYDROLOGY_MAPS {
        assert_eq!(world.maps[name].grid(), world.grid(), "{name}");
    }
    let cancelled = AtomicBool::new(true);
    let err = orogen_core::runner::run_stages(
        &mut world,
        &stages,
        std::path::Path::new("."),
        &cancelled,
        &mut |_| {},
    );
    assert!(matches!(err, Err(orogen_core::OrogenError::Cancelled)));
}

/// The basins a GPU's maps get (from the receivers alone, no stack) are the router's:
/// on random pitted terrains with every lake mode, a sea and one open side.
#[test]
fn basins_from_the_receivers_alone_are_the_routers() {
    use orogen_core::flow::accumulate::{basin_labels, basin_labels_from_receivers};
    use orogen_core::flow::{FlowRouter, Neighbourhood, RasterGrid};
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    for case in 0..12u64 {
        let (w, h) = (rng.random_range(20..90), rng.random_range(20..70));
        let grid = Grid::new(w, h, 10.0).unwrap();
        let heights: Vec<f32> = (0..w * h).map(|_| rng.random_range(0.0..30.0f32)).collect();
        let borders = if case % 3 == 0 {
            vec![Side::South]
        } else {
            vec![Side::North, Side::South, Side::East, Side::West]
        };
        let sea = (case % 4 == 1).then_some(3.0f32);
        let mode = [
            SinkMode::None,
            SinkMode::Carve,
            SinkMode::Fill { epsilon: 0.0 },
        ][case as usize % 3];
        let outlets = OutletParams {
            borders: borders.clone(),
            sea_level: sea,
        };
        let mut router = FlowRouter::new(grid, &outlets).unwrap();
        let mut routed = heights.clone();
        let graph = router.route(&mut routed, mode).unwrap();
        let mut want = vec![0; w * h];
        let count = basin_labels(graph, &mut want);
        let nb = RasterGrid::new(grid, &borders);
        let mut got = vec![0; w * h];
        let n = basin_labels_from_receivers(
            &graph.receivers,
            |i| nb.is_outlet(i) || sea.is_some_and(|s| heights[i] <= s),
            &mut got,
        );
        assert_eq!(n, count, "case {case}: label count");
        assert_eq!(got, want, "case {case} ({mode:?}, sea {sea:?})");
    }
}
