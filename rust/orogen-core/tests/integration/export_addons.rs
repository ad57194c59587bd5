//! The Terrain3D and HTerrain exports: the sizes and formats those addons' importers take
//! (Terrain3D: region tiles 64..2048, FORMAT_RF heights and control; HTerrain: a 2ⁿ+1
//! square, a one-channel f32 EXR, an RGBA8 splat summing to 255), read back from the files
//! and compared with the world's heights bit for bit.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use ::exr::prelude::{FlatSamples, ReadChannels, ReadLayers};
use orogen_core::bake::{export_hterrain, export_terrain3d, write_bake_target, Target};
use orogen_core::field::{Grid, Heightfield, ScalarMap};
use orogen_core::world::names;
use orogen_core::{MapData, Recipe, World};

/// A bumpy tilted world of `w × h` samples, 10 m cells, with a drainage map; heights
/// carry full f32 mantissas so a rounding anywhere would show.
fn world(w: usize, h: usize) -> World {
    let grid = Grid::new(w, h, 10.0).unwrap();
    let data: Vec<f32> = (0..grid.len())
        .map(|i| {
            let (x, y) = grid.coords(i);
            (x as f32 * 0.37).sin() * 41.3 + (y as f32 * 0.23).cos() * 17.7 + x as f32 * 1.9
                - y as f32 * 0.61
                + 1e-3 * (i % 7) as f32
        })
        .collect();
    let mut world = World::new(Heightfield::from_vec(grid, data, "h").unwrap(), 1);
    let drainage = (0..grid.len())
        .map(|i| 100.0 * (1.0 + (i % w) as f32).powi(3))
        .collect();
    world.maps.insert(
        names::DRAINAGE.into(),
        MapData::Scalar(ScalarMap::from_vec(grid, drainage, "d").unwrap()),
    );
    world
}

/// Reads an EXR, asserting it has exactly one channel, `R`, of 32-bit floats.
fn read_f32_exr(path: &Path) -> (usize, usize, Vec<f32>) {
    let image = ::exr::image::read::read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .from_file(path)
        .unwrap();
    let layer = image.layer_data;
    let channels = &layer.channel_data.list;
    assert_eq!(channels.len(), 1, "{}: one channel", path.display());
    assert_eq!(channels[0].name.to_string(), "R", "{}", path.display());
    let FlatSamples::F32(data) = &channels[0].sample_data else {
        panic!("{}: not 32-bit float", path.display());
    };
    (layer.size.width(), layer.size.height(), data.clone())
}

/// Reads a PNG, asserting it is RGBA8.
fn read_rgba_png(path: &Path) -> (usize, usize, Vec<[u8; 4]>) {
    let img = image::open(path).unwrap();
    assert!(
        matches!(img, image::DynamicImage::ImageRgba8(_)),
        "{}: {:?}",
        path.display(),
        img.color()
    );
    let img = img.into_rgba8();
    let (w, h) = img.dimensions();
    (w as usize, h as usize, img.pixels().map(|p| p.0).collect())
}

fn names_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("export.json")).unwrap()).unwrap()
}

/// Checks a Terrain3D export of `world` at `r` against the world, tile by tile.
fn check_terrain3d(world: &World, dir: &Path, r: usize, tiles: (usize, usize)) {
    let grid = world.grid();
    let (w, h) = (grid.width, grid.height);
    let m = manifest(dir);
    assert_eq!(m["tiles"], serde_json::json!([tiles.0, tiles.1]));
    assert_eq!(m["region_size"], r);
    assert_eq!(m["vertex_spacing"], 10.0);
    assert_eq!(m["tile_list"].as_array().unwrap().len(), tiles.0 * tiles.1);
    let mut expected: BTreeSet<String> = ["README.txt", "export.json"].map(String::from).into();
    for z in 0..tiles.1 {
        for x in 0..tiles.0 {
            let hname = format!("height_{x}_{z}.exr");
            let cname = format!("control_{x}_{z}.exr");
            let (tw, th, heights) = read_f32_exr(&dir.join(&hname));
            assert_eq!((tw, th), (r, r), "{hname}");
            let (cw, ch, control) = read_f32_exr(&dir.join(&cname));
            assert_eq!((cw, ch), (r, r), "{cname}");
            for j in 0..r {
                for i in 0..r {
                    let (sx, sz) = (x * r + i, z * r + j);
                    let inside = sx < w && sz < h;
                    let src = *world.height.get(sx.min(w - 1), sz.min(h - 1));
                    let got = heights[j * r + i];
                    assert_eq!(got.to_bits(), src.to_bits(), "{hname} ({i}, {j})");
                    let bits = control[j * r + i].to_bits();
                    let want = if inside {
                        export_terrain3d::CONTROL_AUTOSHADER
                    } else {
                        export_terrain3d::CONTROL_AUTOSHADER | export_terrain3d::CONTROL_HOLE
                    };
                    assert_eq!(bits, want, "{cname} ({i}, {j})");
                }
            }
            expected.insert(hname);
            expected.insert(cname);
        }
    }
    assert_eq!(names_in(dir), expected);
}

#[test]
fn terrain3d_tiles_on_a_non_multiple_grid_and_on_1025() {
    let root = tempfile::tempdir().unwrap();
    for ((w, h), r, tiles) in [
        ((300, 200), 64, (5, 4)),
        ((300, 200), 256, (2, 1)),
        ((1025, 1025), 64, (17, 17)),
        ((1025, 1025), 256, (5, 5)),
    ] {
        let world = world(w, h);
        let dir = root.path().join(format!("t3d_{w}_{r}"));
        let files = export_terrain3d::write_terrain3d(&world, &dir, r).unwrap();
        assert_eq!(files.len(), 2 * tiles.0 * tiles.1 + 2);
        check_terrain3d(&world, &dir, r, tiles);
        // Region locations are centred so every one is within Terrain3D's -16..15.
        let m = manifest(&dir);
        for t in m["tile_list"].as_array().unwrap() {
            for c in t["region_location"].as_array().unwrap() {
                let c = c.as_i64().unwrap();
                assert!((-16..16).contains(&c), "{t}");
            }
        }
    }
}

#[test]
fn terrain3d_refuses_bad_region_sizes_naming_region_size() {
    let grid = Grid::new(300, 200, 10.0).unwrap();
    for bad in [63, 100, 4096, 0, 32, 65] {
        let e = export_terrain3d::layout(grid, bad).unwrap_err().to_string();
        assert!(
            e.contains("region-size") && e.contains(&bad.to_string()),
            "{e}"
        );
        let e = export_terrain3d::check_region_size(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("region-size"), "{e}");
    }
    for good in export_terrain3d::REGION_SIZES {
        export_terrain3d::layout(grid, good).unwrap();
    }
    // 4097 samples at 64 make 65 regions a side; Terrain3D holds 32.
    let big = Grid::new(4097, 4097, 10.0).unwrap();
    let e = export_terrain3d::layout(big, 64).unwrap_err().to_string();
    assert!(e.contains("region-size") && e.contains("256"), "{e}");
    assert_eq!(export_terrain3d::layout(big, 256).unwrap().tiles, (17, 17));
    // One vertex spacing: non-square cells are refused, naming the cell size.
    let skew = Grid::with_cells(300, 200, 10.0, 20.0).unwrap();
    let e = export_terrain3d::layout(skew, 64).unwrap_err().to_string();
    assert!(e.contains("cell_size"), "{e}");
    // Nothing is written for a refused size.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("out");
    assert!(export_terrain3d::write_terrain3d(&world(300, 200), &dir, 100).is_err());
    assert!(!dir.exists());
}

#[test]
fn hterrain_sizes_are_2n_plus_1_and_heights_are_orogens() {
    assert_eq!(export_hterrain::resolution(33, 33).unwrap(), 65);
    assert_eq!(export_hterrain::resolution(300, 200).unwrap(), 513);
    assert_eq!(export_hterrain::resolution(1024, 1024).unwrap(), 1025);
    assert_eq!(export_hterrain::resolution(1025, 1025).unwrap(), 1025);
    assert_eq!(export_hterrain::resolution(1026, 7).unwrap(), 2049);
    assert_eq!(export_hterrain::resolution(4097, 4097).unwrap(), 4097);
    let e = export_hterrain::resolution(4098, 10)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`size`") && e.contains("4098"), "{e}");

    let root = tempfile::tempdir().unwrap();
    for ((w, h), n) in [((300, 200), 513), ((1025, 1025), 1025)] {
        let world = world(w, h);
        let dir = root.path().join(format!("ht_{w}"));
        export_hterrain::write_hterrain(&world, &dir).unwrap();
        assert_eq!(
            names_in(&dir),
            ["README.txt", "export.json", "height.exr", "splat.png"]
                .map(String::from)
                .into()
        );
        let (ew, eh, heights) = read_f32_exr(&dir.join("height.exr"));
        assert_eq!((ew, eh), (n, n));
        assert!((n - 1).is_power_of_two());
        for y in 0..n {
            for x in 0..n {
                let src = *world.height.get(x.min(w - 1), y.min(h - 1));
                assert_eq!(heights[y * n + x].to_bits(), src.to_bits(), "({x}, {y})");
            }
        }
        let (sw, sh, splat) = read_rgba_png(&dir.join("splat.png"));
        assert_eq!((sw, sh), (n, n));
        for (i, p) in splat.iter().enumerate() {
            let sum: u32 = p.iter().map(|&v| v as u32).sum();
            assert_eq!(sum, 255, "splat pixel {i}: {p:?}");
        }
        // Slope, height and drainage all show: every channel is used somewhere.
        for c in 0..4 {
            assert!(splat.iter().any(|p| p[c] > 128), "channel {c} unused");
        }
        let m = manifest(&dir);
        assert_eq!(m["resolution"], n);
        assert_eq!(m["size"], serde_json::json!([w, h]));
        assert_eq!(
            m["splat_channels"],
            serde_json::json!(["grass", "rock", "snow", "wet"])
        );
    }
}

/// A layered terrain's splat (its four most exposed materials) and surface colour go to
/// both addons; weights sum to 255 even where its two materials are outside the four.
#[test]
fn layered_terrain_exports_its_materials_and_colour() {
    let mut recipe = Recipe::built_in("strata").unwrap();
    recipe = recipe.apply_override("size=(80,70)").unwrap();
    let out = orogen_core::run_recipe(
        &recipe,
        Path::new("."),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let mut world = out.world;
    let grid = world.grid();
    // A cell whose materials are both outside the four (all-zero weights) goes to the first.
    if let Some(MapData::Rgba(s)) = world.maps.get_mut(names::SPLAT) {
        s.data[5] = [0, 0, 0, 0];
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ht");
    export_hterrain::write_hterrain(&world, &dir).unwrap();
    let (n, _, splat) = read_rgba_png(&dir.join("splat.png"));
    assert_eq!(n, 129);
    let Some(MapData::Rgba(src)) = world.maps.get(names::SPLAT) else {
        panic!("a layered world has a splat map")
    };
    for y in 0..grid.height {
        for x in 0..grid.width {
            let p = splat[y * n + x];
            assert_eq!(p.iter().map(|&v| v as u32).sum::<u32>(), 255);
            let s = *src.get(x, y);
            if s.iter().map(|&v| v as u32).sum::<u32>() == 255 {
                assert_eq!(p, s, "({x}, {y})");
            }
        }
    }
    assert_eq!(splat[5], [255, 0, 0, 0]);
    let names = manifest(&dir)["splat_channels"].clone();
    assert!(
        names.as_array().unwrap().iter().any(|m| m == "sandstone"),
        "{names}"
    );
    let Some(MapData::Rgba(colour)) = world.maps.get(names::SURFACE_COLOUR) else {
        panic!("a layered world has a surface colour")
    };
    let (_, _, hc) = read_rgba_png(&dir.join("color.png"));
    assert_eq!(hc[3 * n + 7], *colour.get(7, 3));

    let dir = root.path().join("t3d");
    export_terrain3d::write_terrain3d(&world, &dir, 64).unwrap();
    let (cw, ch, tc) = read_rgba_png(&dir.join("color_1_1.png"));
    assert_eq!((cw, ch), (64, 64));
    let [r, g, b, _] = *colour.get(64 + 5, 64 + 2);
    assert_eq!(
        tc[2 * 64 + 5],
        [r, g, b, export_terrain3d::NEUTRAL_ROUGHNESS]
    );
}

/// An export replaces the folder like a bake: the earlier export's tiles go (another
/// region size writes other names), the user's files stay.
#[test]
fn a_second_export_replaces_the_first_and_keeps_user_files() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("out");
    let world = world(300, 200);
    export_terrain3d::write_terrain3d(&world, &dir, 64).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    export_terrain3d::write_terrain3d(&world, &dir, 256).unwrap();
    let names = names_in(&dir);
    assert!(names.contains("notes.txt"));
    assert!(!names.contains("height_4_3.exr"), "{names:?}");
    assert_eq!(names.len(), 2 * 2 + 3);
    // Then HTerrain in the same folder: no Terrain3D tile is left.
    let recipe = Recipe::default_recipe();
    write_bake_target(&dir, Target::HTerrain, &recipe, &world, &[], None).unwrap();
    assert_eq!(
        names_in(&dir),
        [
            "README.txt",
            "bake.json",
            "export.json",
            "height.exr",
            "notes.txt",
            "splat.png"
        ]
        .map(String::from)
        .into()
    );
}

/// Same world, same bytes.
#[test]
fn exports_are_deterministic() {
    let root = tempfile::tempdir().unwrap();
    let world = world(130, 70);
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    export_hterrain::write_hterrain(&world, &a).unwrap();
    export_hterrain::write_hterrain(&world, &b).unwrap();
    for f in ["height.exr", "splat.png", "export.json"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap()
        );
    }
}
