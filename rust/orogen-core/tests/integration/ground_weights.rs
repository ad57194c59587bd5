//! The ground weights computed on the CPU (`bake::ground_weights`, the terrain shader's
//! formulas): on terrains built so the answer is known.

use orogen_core::bake::ground_weights::{
    automatic_weights, ground_weights, Ground, GroundInputs, GroundParams, CLIFF, GRASS, ROCK,
    SAND, SNOW, SOIL,
};
use orogen_core::edit::{GroundBrush, GroundPaint, GroundTool};
use orogen_core::field::{Grid, Heightfield, ScalarMap};
use orogen_core::world::names;
use orogen_core::{MapData, World};

fn world_of(w: usize, h: usize, cell: f32, f: impl Fn(f32, f32) -> f32) -> World {
    let grid = Grid::new(w, h, cell).unwrap();
    let data = (0..grid.len())
        .map(|i| f((i % w) as f32 * cell, (i / w) as f32 * cell))
        .collect();
    World::new(Heightfield::from_vec(grid, data, "h").unwrap(), 1)
}

fn dominant(w: &[f32; 8]) -> usize {
    (0..8).max_by(|&a, &b| w[a].total_cmp(&w[b])).unwrap()
}

/// Share of the interior cells (two cells from the border) whose dominant layer is in `layers`.
fn share(world: &World, ground: &Ground<'_>, layers: &[usize]) -> f32 {
    let wts = ground_weights(world, ground).unwrap();
    let g = wts.grid;
    let (mut hit, mut n) = (0, 0);
    for y in 2..g.height - 2 {
        for x in 2..g.width - 2 {
            n += 1;
            if layers.contains(&dominant(&wts.data[y * g.width + x])) {
                hit += 1;
            }
        }
    }
    hit as f32 / n as f32
}

#[test]
fn weights_are_non_negative_and_sum_to_one_and_so_do_the_automatic_ones() {
    let world = world_of(90, 70, 10.0, |x, y| {
        1500.0 + 300.0 * (x * 0.013).sin() * (y * 0.021).cos() + 0.9 * x
    });
    let wts = ground_weights(&world, &Ground::default()).unwrap();
    let auto = automatic_weights(&GroundInputs::of(&world), &GroundParams::default());
    for (i, (w, a)) in wts.data.iter().zip(&auto).enumerate() {
        for v in [w, a] {
            assert!(v.iter().all(|&x| x >= 0.0 && x.is_finite()), "{i}: {v:?}");
            assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{i}: {v:?}");
        }
        assert!(w.iter().filter(|&&x| x > 0.0).count() <= 2, "{i}: {w:?}");
    }
    // The bumps reach several layers.
    let mut seen = [false; 8];
    for w in &wts.data {
        seen[dominant(w)] = true;
    }
    assert!(seen.iter().filter(|&&s| s).count() >= 3, "{seen:?}");
}

#[test]
fn a_steep_face_is_rock_or_cliff_and_a_flat_high_plain_is_snow() {
    // 60° at 200 m: rock and cliff.
    let steep = world_of(40, 40, 10.0, |x, _| 200.0 + x * 60f32.to_radians().tan());
    let s = share(&steep, &Ground::default(), &[ROCK, CLIFF]);
    assert!(s > 0.95, "steep face: {s} rock or cliff");
    // Flat, 1000 m above the snowline: snow.
    let high = world_of(40, 40, 10.0, |_, _| 2800.0);
    let s = share(&high, &Ground::default(), &[SNOW]);
    assert_eq!(s, 1.0, "high plain: {s} snow");
    // The same plain 1000 m below the snowline: never snow.
    let low = world_of(40, 40, 10.0, |_, _| 800.0);
    assert_eq!(share(&low, &Ground::default(), &[SNOW]), 0.0);
    // A lower snowline in the parameters brings the snow down to it.
    let params = GroundParams {
        snowline_m: 500.0,
        ..GroundParams::default()
    };
    let g = Ground {
        params,
        paint: None,
    };
    assert_eq!(share(&low, &g, &[SNOW]), 1.0);
}

#[test]
fn a_wet_valley_floor_is_grass_or_soil() {
    // A flat floor 5 cells wide between 12° sides, at 400 m; the drainage gathers along it.
    let (w, h) = (61usize, 40usize);
    let mut world = world_of(w, h, 10.0, |x, _| {
        let d = ((x - 300.0).abs() - 25.0).max(0.0);
        400.0 + d * 12f32.to_radians().tan()
    });
    let grid = world.grid();
    let drainage = (0..grid.len())
        .map(|i| {
            let x = (i % w) as f32;
            if (x - 30.0).abs() <= 2.0 {
                1.0e6
            } else {
                100.0
            }
        })
        .collect();
    world.maps.insert(
        names::DRAINAGE.into(),
        MapData::Scalar(ScalarMap::from_vec(grid, drainage, "d").unwrap()),
    );
    let wts = ground_weights(&world, &Ground::default()).unwrap();
    let (mut wet, mut n) = (0, 0);
    for y in 2..h - 2 {
        for x in 29..=31 {
            n += 1;
            let d = dominant(&wts.data[y * w + x]);
            if d == GRASS || d == SOIL {
                wet += 1;
            }
        }
    }
    assert!(
        wet as f32 >= 0.9 * n as f32,
        "valley floor: {wet} of {n} grass or soil"
    );
}

#[test]
fn north_faces_hold_snow_lower_than_south_faces() {
    // An east-west ridge at 2150 m, 20° sides: the north side (y below the crest) faces
    // north (-z). Between 1900 and 2000 m the north face has snow, the south face less.
    let (w, h) = (30usize, 121usize);
    let k = 20f32.to_radians().tan();
    let world = world_of(w, h, 10.0, |_, y| 2150.0 - k * (y - 600.0).abs());
    let wts = ground_weights(&world, &Ground::default()).unwrap();
    let (mut north, mut south) = ((0.0f32, 0), (0.0f32, 0));
    for y in 2..h - 2 {
        for x in 2..w - 2 {
            let i = y * w + x;
            let hgt = world.height.data[i];
            if !(1900.0..2000.0).contains(&hgt) {
                continue;
            }
            let side = if y < 60 { &mut north } else { &mut south };
            side.0 += wts.data[i][SNOW];
            side.1 += 1;
        }
    }
    let (north, south) = (north.0 / north.1 as f32, south.0 / south.1 as f32);
    assert!(
        north > 0.7 && south < 0.3,
        "snow share north {north}, south {south}"
    );
}

#[test]
fn paint_takes_the_cells_it_covers_and_only_those() {
    let world = world_of(40, 40, 10.0, |_, _| 2800.0);
    let mut paint = GroundPaint::new(world.grid());
    GroundBrush {
        tool: GroundTool::Paint(SAND),
        radius: 80.0,
        strength: 1.0,
        falloff: 0.0,
    }
    .dab(&mut paint, [200.0, 200.0], None)
    .unwrap();
    let g = Ground {
        paint: Some(&paint),
        ..Ground::default()
    };
    let wts = ground_weights(&world, &g).unwrap();
    assert_eq!(wts.data[20 * 40 + 20][SAND], 1.0);
    assert_eq!(dominant(&wts.data[5 * 40 + 5]), SNOW);
    // Half strength: sand and snow share the cell.
    let mut half = GroundPaint::new(world.grid());
    GroundBrush {
        tool: GroundTool::Paint(SAND),
        radius: 80.0,
        strength: 0.5,
        falloff: 0.0,
    }
    .dab(&mut half, [200.0, 200.0], None)
    .unwrap();
    let g = Ground {
        paint: Some(&half),
        ..Ground::default()
    };
    let w = ground_weights(&world, &g).unwrap().data[20 * 40 + 20];
    assert!(w[SAND] > 0.2 && w[SNOW] > 0.2, "{w:?}");
    // Paint of another size is refused naming the field.
    let other = GroundPaint::new(Grid::new(10, 10, 10.0).unwrap());
    let e = ground_weights(
        &world,
        &Ground {
            paint: Some(&other),
            ..Ground::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("ground") && e.contains("10×10"), "{e}");
}
