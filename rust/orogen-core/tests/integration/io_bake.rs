//! Baking a world to a folder: every map by its name, bake.json, all-or-nothing
//! writes, and the preview renderer.

use std::path::Path;

use orogen_core::bake::{self, preview};
use orogen_core::field::{Grid, Heightfield, LabelMap, MaskMap, ScalarMap};
use orogen_core::io::{exr, png16, read_gray_image};
use orogen_core::world::names;
use orogen_core::{MapData, Recipe, World};

/// A tilted, bumpy world with one map of each kind.
fn sample_world(w: usize, h: usize) -> World {
    let grid = Grid::new(w, h, 25.0).unwrap();
    let data = (0..grid.len())
        .map(|i| {
            let (x, y) = grid.coords(i);
            (x as f32 * 0.7).sin() * 30.0 + y as f32 * 4.0 + x as f32 * 2.0
        })
        .collect();
    let mut world = World::new(Heightfield::from_vec(grid, data, "h").unwrap(), 42);
    let drainage: Vec<f32> = (0..grid.len()).map(|i| i as f32 * 625.0).collect();
    world.maps.insert(
        names::DRAINAGE.into(),
        MapData::Scalar(ScalarMap::from_vec(grid, drainage, "d").unwrap()),
    );
    let rivers: Vec<u8> = (0..grid.len()).map(|i| (i % w == 3) as u8).collect();
    world.maps.insert(
        names::RIVERS.into(),
        MapData::Mask(MaskMap::from_vec(grid, rivers, "r").unwrap()),
    );
    let basins: Vec<u32> = (0..grid.len()).map(|i| (i % w / 4) as u32).collect();
    world.maps.insert(
        names::BASINS.into(),
        MapData::Labels(LabelMap::from_vec(grid, basins, "b").unwrap()),
    );
    world
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn write_maps_writes_every_map_by_name_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested/out"); // created on demand
    let world = sample_world(24, 15);
    let written = bake::write_maps(&world, &out).unwrap();
    let expected = [
        "basins.png",
        "drainage.exr",
        "height.exr",
        "height.png",
        "height.r16",
        "preview.png",
        "rivers.png",
    ];
    assert_eq!(names_in(&out), expected);
    assert_eq!(written.len(), expected.len());
    assert!(written.iter().all(|p| p.exists()));

    let h = exr::read_exr(&out.join("height.exr")).unwrap();
    assert_eq!(h.data, world.height.data);
    assert_eq!(h.grid, world.grid());
    let MapData::Scalar(d) = &world.maps[names::DRAINAGE] else {
        unreachable!()
    };
    assert_eq!(
        exr::read_exr(&out.join("drainage.exr")).unwrap().data,
        d.data
    );
    let MapData::Mask(r) = &world.maps[names::RIVERS] else {
        unreachable!()
    };
    let rb = read_gray_image(&out.join("rivers.png")).unwrap();
    assert!(r.data.iter().zip(&rb.data).all(|(a, b)| (*a as f32) == *b));
    let MapData::Labels(b) = &world.maps[names::BASINS] else {
        unreachable!()
    };
    let img = image::open(out.join("basins.png")).unwrap().to_rgb8();
    assert_eq!(
        img.get_pixel(9, 2).0,
        png16::label_colour(b.data[2 * 24 + 9])
    );
    let r16 = std::fs::read(out.join("height.r16")).unwrap();
    assert_eq!(r16.len(), 2 * 24 * 15);
    let p = image::open(out.join("preview.png")).unwrap();
    assert_eq!((p.width(), p.height()), (24, 15));
}

#[test]
fn bake_json_records_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let world = sample_world(10, 7);
    let recipe = Recipe::default_recipe().apply_override("seed=42").unwrap();
    let timings = vec![orogen_core::runner::StageTiming {
        stage: "Thermal".into(),
        seconds: 0.25,
        figures: Default::default(),
        device: "cpu".into(),
    }];
    let files = bake::write_bake(
        dir.path(),
        &recipe,
        &world,
        &timings,
        Some(Path::new("r.ron")),
    )
    .unwrap();
    let path = files.last().unwrap();
    assert!(path.ends_with("bake.json"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (lo, hi) = world.height.min_max();
    assert_eq!(json["size"], serde_json::json!([10, 7]));
    assert_eq!(json["seed"], 42);
    assert_eq!(json["cell_size"].as_f64().unwrap() as f32, 25.0);
    assert_eq!(json["height_min"].as_f64().unwrap() as f32, lo);
    assert_eq!(json["height_max"].as_f64().unwrap() as f32, hi);
    assert_eq!(json["stages"][0]["stage"], "Thermal");
    assert_eq!(json["stages"][0]["seconds"], 0.25);
    assert_eq!(json["orogen_version"], orogen_core::VERSION);
    assert_eq!(json["recipe_path"], "r.ron");
    let ron = json["recipe_ron"].as_str().unwrap();
    assert_eq!(Recipe::from_ron_str(ron, "bake.json").unwrap(), recipe);
    assert_eq!(json["recipe"]["seed"], 42);
}

#[test]
fn a_failed_bake_leaves_the_previous_outputs_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let first = sample_world(12, 12);
    bake::write_maps(&first, out).unwrap();
    let before = std::fs::read(out.join("height.exr")).unwrap();

    // A folder where preview.png goes makes the second bake fail part-way.
    std::fs::remove_file(out.join("preview.png")).unwrap();
    std::fs::create_dir(out.join("preview.png")).unwrap();
    let mut second = sample_world(12, 12);
    second.height.data.iter_mut().for_each(|h| *h += 100.0);
    let e = bake::write_maps(&second, out).unwrap_err().to_string();
    assert!(e.contains("preview.png"), "{e}");

    assert_eq!(std::fs::read(out.join("height.exr")).unwrap(), before);
    // No temporary file is left behind.
    assert!(
        names_in(out).iter().all(|n| !n.starts_with('.')),
        "{:?}",
        names_in(out)
    );
}

#[test]
fn an_output_folder_under_a_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let target = file.join("out");
    let e = bake::write_maps(&sample_world(4, 4), &target)
        .unwrap_err()
        .to_string();
    assert!(e.contains("plain/out") || e.contains("plain\\out"), "{e}");
}

#[test]
fn hillshade_uses_the_real_cell_size_and_lights_from_the_north_west() {
    // A plane rising to the south-east faces north-west: lit. Its mirror is darker.
    let plane = |cell: f32, sign: f32| {
        let grid = Grid::new(9, 9, cell).unwrap();
        let data = (0..grid.len())
            .map(|i| {
                let (x, y) = grid.coords(i);
                sign * (x + y) as f32 * 10.0
            })
            .collect();
        Heightfield::from_vec(grid, data, "p").unwrap()
    };
    let centre = 4 * 9 + 4;
    let facing_nw = preview::hillshade(&plane(10.0, 1.0))[centre];
    let facing_se = preview::hillshade(&plane(10.0, -1.0))[centre];
    let flat = preview::hillshade(&plane(10.0, 0.0))[centre];
    assert!(
        facing_nw > flat && flat > facing_se,
        "{facing_nw} {flat} {facing_se}"
    );
    // Same heights over 100× wider cells: almost flat.
    let gentle = preview::hillshade(&plane(1000.0, -1.0))[centre];
    assert!((gentle - flat).abs() < 0.02, "{gentle} vs {flat}");
    assert!((flat - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-5);
}

#[test]
fn preview_tints_low_green_high_white_and_water_blue() {
    let grid = Grid::new(16, 16, 10.0).unwrap();
    // Flat terraces: west half at 0 m, east half at 1000 m (flat inside each half).
    let data = (0..grid.len())
        .map(|i| if grid.coords(i).0 < 8 { 0.0 } else { 1000.0 })
        .collect();
    let mut world = World::new(Heightfield::from_vec(grid, data, "h").unwrap(), 1);
    let img = preview::render_preview(&world);
    let low = img.get_pixel(2, 8).0;
    let high = img.get_pixel(13, 8).0;
    assert!(
        low[1] > low[0] && low[1] > low[2],
        "low ground is green: {low:?}"
    );
    assert!(high.iter().all(|&c| c > 200), "peaks are white: {high:?}");

    let mut depth = ScalarMap::filled(grid, 0.0);
    *depth.get_mut(2, 8) = 3.0;
    world
        .maps
        .insert(names::LAKE_DEPTH.into(), MapData::Scalar(depth));
    let wet = preview::render_preview(&world);
    let lake = wet.get_pixel(2, 8).0;
    assert!(
        lake[2] > lake[0] && lake[2] > lake[1],
        "lakes are blue: {lake:?}"
    );
    assert_eq!(
        wet.get_pixel(3, 8),
        img.get_pixel(3, 8),
        "dry cells unchanged"
    );

    // Capped size keeps the aspect ratio.
    let small = preview::render_preview_max(&world, 5);
    assert!(small.width() <= 5 && small.height() <= 5);
}
