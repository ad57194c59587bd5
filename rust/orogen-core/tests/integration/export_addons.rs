//! The Terrain3D and HTerrain exports: the sizes and formats those addons' importers take
//! (Terrain3D: region tiles 64..2048, FORMAT_RF heights and control; HTerrain: a 2ⁿ+1
//! square, a one-channel f32 EXR, an RGBA8 splat summing to 255), read back from the files
//! and compared with the world's heights bit for bit.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use ::exr::prelude::{FlatSamples, ReadChannels, ReadLayers};
use orogen_core::bake::ground_weights::{ground_weights, Ground};
use orogen_core::bake::{export_hterrain, export_terrain3d, write_bake_target, Target};
use orogen_core::edit::{GroundBrush, GroundPaint, GroundTool};
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
    let weights = ground_weights(world, &Ground::default()).unwrap();
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
                    // The ground weights' pair of the sample (the edge's past the edge),
                    // autoshader off, a hole past the edge.
                    let pair = weights.pairs[sz.min(h - 1) * w + sx.min(w - 1)];
                    let mut want = export_terrain3d::control_bits(pair);
                    if !inside {
                        want |= export_terrain3d::CONTROL_HOLE;
                    }
                    assert_eq!(bits, want, "{cname} ({i}, {j})");
                    assert_eq!(bits & export_terrain3d::CONTROL_AUTOSHADER, 0);
                    let (base, overlay, blend) = export_terrain3d::decode_control(bits);
                    assert!(
                        base < 8 && overlay < 8,
                        "{cname} ({i}, {j}): {base} {overlay}"
                    );
                    assert_eq!(base, pair.first as u32);
                    assert_eq!(blend, (pair.blend * 255.0).round() as u32);
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
            [
                "README.txt",
                "export.json",
                "height.exr",
                "splat.png",
                "splat16_0.png",
                "splat16_1.png"
            ]
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
        // Slopes and drainage show: grass and rock are each the main channel somewhere, and
        // bare ground (soil's share everywhere, no band of its own between grass and rock
        // since it drew an outline round every rock patch) has a share; snow lies nowhere
        // below the snowline (1,800 m by default).
        for c in [0, 1] {
            assert!(splat.iter().any(|p| p[c] > 128), "channel {c} unused");
        }
        assert!(splat.iter().any(|p| p[3] > 16), "channel 3 unused");
        for y in 0..n {
            for x in 0..n {
                let hgt = *world.height.get(x.min(w - 1), y.min(h - 1));
                if splat[y * n + x][2] > 0 {
                    assert!(hgt >= 1800.0, "snow at ({x}, {y}), {hgt} m");
                }
            }
        }
        // The eight layers: summing to 255, and folding to the four within rounding.
        let (_, _, s0) = read_rgba_png(&dir.join("splat16_0.png"));
        let (_, _, s1) = read_rgba_png(&dir.join("splat16_1.png"));
        for i in 0..n * n {
            let l: Vec<i32> = s0[i]
                .iter()
                .chain(s1[i].iter())
                .map(|&v| v as i32)
                .collect();
            assert_eq!(l.iter().sum::<i32>(), 255, "splat16 pixel {i}: {l:?}");
            let folded = [l[4] + l[5], l[0] + l[1] + l[2], l[7], l[3] + l[6]];
            for c in 0..4 {
                assert!(
                    (folded[c] - splat[i][c] as i32).abs() <= 2,
                    "{i}: {l:?} {:?}",
                    splat[i]
                );
            }
        }
        let m = manifest(&dir);
        assert_eq!(m["resolution"], n);
        assert_eq!(m["size"], serde_json::json!([w, h]));
        assert_eq!(
            m["splat_channels"],
            serde_json::json!(["grass", "rock", "snow", "ground"])
        );
    }
}

/// A layered terrain's surface colour goes to both addons, and its splat maps are the
/// ground weights like any terrain's.
#[test]
fn layered_terrain_exports_its_colour_and_ground_weights() {
    let mut recipe = Recipe::built_in("strata").unwrap();
    recipe = recipe.apply_override("size=(80,70)").unwrap();
    let out = orogen_core::run_recipe(
        &recipe,
        Path::new("."),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let world = out.world;
    let grid = world.grid();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ht");
    export_hterrain::write_hterrain(&world, &dir).unwrap();
    let (n, _, splat) = read_rgba_png(&dir.join("splat.png"));
    assert_eq!(n, 129);
    let weights = ground_weights(&world, &Ground::default()).unwrap();
    let (c4, _, _) = export_hterrain::splat_maps(&weights);
    for y in 0..grid.height {
        for x in 0..grid.width {
            assert_eq!(splat[y * n + x], c4[y * grid.width + x], "({x}, {y})");
        }
    }
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

/// Sand painted over a spot reaches both exports there, and nothing else changes.
#[test]
fn painted_ground_reaches_both_exports_and_nothing_else() {
    let world = world(130, 70);
    let grid = world.grid();
    let mut paint = GroundPaint::new(grid);
    let brush = GroundBrush {
        tool: GroundTool::Paint(6),
        radius: 60.0,
        strength: 1.0,
        falloff: 0.3,
    };
    let (cx, cy) = (40usize, 30usize);
    brush
        .dab(&mut paint, [cx as f32 * 10.0, cy as f32 * 10.0], None)
        .unwrap();
    let before = ground_weights(&world, &Ground::default()).unwrap();
    let centre = cy * grid.width + cx;
    assert_ne!(
        before.pairs[centre].first, 6,
        "the spot is not sand already"
    );
    let painted = Ground {
        paint: Some(&paint),
        ..Ground::default()
    };
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("t3d_a"), root.path().join("t3d_b"));
    export_terrain3d::write_terrain3d(&world, &a, 64).unwrap();
    export_terrain3d::write_terrain3d_with(&world, &b, 64, &painted).unwrap();
    let (_, _, ca) = read_f32_exr(&a.join("control_0_0.exr"));
    let (_, _, cb) = read_f32_exr(&b.join("control_0_0.exr"));
    let (base, _, blend) = export_terrain3d::decode_control(cb[cy * 64 + cx].to_bits());
    assert_eq!((base, blend), (6, 0), "sand alone at the stroke's centre");
    let mut changed = 0;
    for y in 0..64 {
        for x in 0..64 {
            let d = ((x as f32 - cx as f32).powi(2) + (y as f32 - cy as f32).powi(2)).sqrt();
            if ca[y * 64 + x].to_bits() != cb[y * 64 + x].to_bits() {
                changed += 1;
                assert!(d < 6.0, "({x}, {y}) changed {d} cells from the stroke");
            }
        }
    }
    assert!(changed > 50, "{changed} samples changed");

    let (a, b) = (root.path().join("ht_a"), root.path().join("ht_b"));
    export_hterrain::write_hterrain(&world, &a).unwrap();
    export_hterrain::write_hterrain_with(&world, &b, &painted).unwrap();
    let n = export_hterrain::resolution(130, 70).unwrap();
    let (_, _, sa) = read_rgba_png(&a.join("splat16_1.png"));
    let (_, _, sb) = read_rgba_png(&b.join("splat16_1.png"));
    assert_eq!(sb[cy * n + cx], [0, 0, 255, 0], "sand alone at the centre");
    assert_eq!(
        sa[5 * n + 120],
        sb[5 * n + 120],
        "far from the stroke: unchanged"
    );
    let (_, _, c4) = read_rgba_png(&b.join("splat.png"));
    assert_eq!(
        c4[cy * n + cx],
        [0, 0, 0, 255],
        "CLASSIC4: bare ground (sand)"
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
            "splat.png",
            "splat16_0.png",
            "splat16_1.png"
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
    for f in ["height.exr", "splat.png", "splat16_0.png", "export.json"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap()
        );
    }
}
