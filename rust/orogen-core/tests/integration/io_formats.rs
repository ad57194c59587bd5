//! Map file formats: round trips, heightmap loading, and clear errors on bad files.

use std::path::Path;

use orogen_core::field::{Grid, LabelMap, MaskMap, ScalarMap};
use orogen_core::io::heightmap::{Fit, Format, HeightmapSource};
use orogen_core::io::{exr, png16, raw, read_gray_image};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A non-square map of random heights in `[lo, hi]`.
fn random_map(w: usize, h: usize, cell: f32, lo: f32, hi: f32, seed: u64) -> ScalarMap {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let grid = Grid::new(w, h, cell).unwrap();
    let data = (0..grid.len()).map(|_| rng.random_range(lo..=hi)).collect();
    ScalarMap::from_vec(grid, data, "test").unwrap()
}

fn err_text<T: std::fmt::Debug>(r: orogen_core::Result<T>) -> String {
    r.expect_err("expected an error").to_string()
}

#[test]
fn exr_round_trip_is_bit_exact_with_cell_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.exr");
    let mut map = random_map(37, 23, 12.5, -500.0, 4000.0, 1);
    map.data[0] = f32::MIN_POSITIVE; // a denormal-adjacent value survives too
    exr::write_exr(&path, &map).unwrap();
    let back = exr::read_exr(&path).unwrap();
    assert_eq!(back.grid, map.grid);
    let same = map
        .data
        .iter()
        .zip(&back.data)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same, "EXR float values changed in a round trip");
}

/// `recorded_cell_size` reads (dx, dy) from an Orogen EXR's header, and `None` from one
/// another program wrote without it (Godot's `Image.save_exr`), whose cells the caller
/// must then size.
#[test]
fn exr_recorded_cell_size_is_none_for_foreign_files() {
    use ::exr::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let square = dir.path().join("square.exr");
    exr::write_exr(&square, &random_map(5, 4, 12.5, 0.0, 1.0, 4)).unwrap();
    assert_eq!(
        exr::recorded_cell_size(&square).unwrap(),
        Some((12.5, 12.5))
    );
    let rect = dir.path().join("rect.exr");
    let mut map = random_map(5, 4, 1.0, 0.0, 1.0, 5);
    map.grid = Grid::with_cells(5, 4, 74.6, 92.5).unwrap();
    exr::write_exr(&rect, &map).unwrap();
    assert_eq!(exr::recorded_cell_size(&rect).unwrap(), Some((74.6, 92.5)));
    let foreign = dir.path().join("foreign.exr");
    let channel = SpecificChannels::build()
        .with_channel("R")
        .with_pixel_fn(|p: Vec2<usize>| (p.x() as f32,));
    Image::from_channels((5, 4), channel)
        .write()
        .to_file(&foreign)
        .unwrap();
    assert_eq!(exr::recorded_cell_size(&foreign).unwrap(), None);
    assert_eq!(exr::read_exr(&foreign).unwrap().grid.cell_size, 1.0);
}

#[test]
fn exr_header_is_what_godot_loads_as_rf() {
    // Godot's `Image.load_exr` (tinyexr) needs a channel named `R`; a single f32 `R`
    // channel loads as FORMAT_RF. tinyexr reads ZIP-compressed increasing scan lines.
    use ::exr::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.exr");
    exr::write_exr(&path, &random_map(20, 9, 1.0, 0.0, 1.0, 2)).unwrap();
    let meta = ::exr::meta::MetaData::read_from_file(&path, true).unwrap();
    assert_eq!(meta.headers.len(), 1);
    let header = &meta.headers[0];
    let channels = &header.channels.list;
    assert_eq!(channels.len(), 1);
    assert_eq!(channels[0].name, Text::from("R"));
    assert_eq!(channels[0].sample_type, SampleType::F32);
    assert_eq!(header.compression, Compression::ZIP16);
    assert_eq!(header.line_order, LineOrder::Increasing);
    assert!(matches!(
        header.blocks,
        ::exr::meta::BlockDescription::ScanLines
    ));
    assert_eq!(
        (header.layer_size.width(), header.layer_size.height()),
        (20, 9)
    );
}

#[test]
fn png16_round_trip_is_within_quantisation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.png");
    let map = random_map(41, 17, 1.0, 120.0, 2600.0, 3);
    let (lo, hi) = png16::write_png16(&path, &map).unwrap();
    assert_eq!((lo, hi), map.min_max());
    let back = read_gray_image(&path).unwrap();
    assert_eq!((back.width(), back.height()), (41, 17));
    let step = (hi - lo) / 65535.0;
    for (a, t) in map.data.iter().zip(&back.data) {
        let b = lo + t * (hi - lo);
        assert!((a - b).abs() <= 0.5 * step + 1e-3, "{a} came back as {b}");
    }
    // The extremes land on black and white exactly.
    let min_i = map.data.iter().position(|&v| v == lo).unwrap();
    let max_i = map.data.iter().position(|&v| v == hi).unwrap();
    assert_eq!(back.data[min_i], 0.0);
    assert_eq!(back.data[max_i], 1.0);
}

#[test]
fn r16_round_trip_is_within_quantisation_and_little_endian() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.r16");
    let map = random_map(33, 65, 1.0, -10.0, 10.0, 4);
    let (lo, hi) = raw::write_r16(&path, &map).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), 2 * 33 * 65);
    // First sample, decoded by hand as little-endian.
    let first = u16::from_le_bytes([bytes[0], bytes[1]]) as f32 / 65535.0;
    let expect = (map.data[0] - lo) / (hi - lo);
    assert!((first - expect).abs() <= 0.5 / 65535.0 + 1e-6);
    let back = raw::read_r16(&path, 33, 65).unwrap();
    let step = (hi - lo) / 65535.0;
    for (a, t) in map.data.iter().zip(&back.data) {
        assert!((a - (lo + t * (hi - lo))).abs() <= 0.5 * step + 1e-4);
    }
}

#[test]
fn raw_f32_round_trip_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.raw");
    let map = random_map(19, 31, 1.0, -1e4, 1e4, 5);
    raw::write_raw_f32(&path, &map).unwrap();
    let back = raw::read_raw_f32(&path, 19, 31).unwrap();
    assert_eq!(back.data, map.data);
}

#[test]
fn mask_png_is_0_or_255_and_labels_png_uses_the_palette() {
    let dir = tempfile::tempdir().unwrap();
    let grid = Grid::new(16, 9, 1.0).unwrap();
    let mask =
        MaskMap::from_vec(grid, (0..grid.len()).map(|i| (i % 3) as u8).collect(), "m").unwrap();
    let mpath = dir.path().join("rivers.png");
    png16::write_mask_png(&mpath, &mask).unwrap();
    let back = read_gray_image(&mpath).unwrap();
    for (m, v) in mask.data.iter().zip(&back.data) {
        assert_eq!(*v, if *m == 0 { 0.0 } else { 1.0 });
    }

    let labels =
        LabelMap::from_vec(grid, (0..grid.len() as u32).map(|i| i / 7).collect(), "l").unwrap();
    let lpath = dir.path().join("basins.png");
    png16::write_labels_png(&lpath, &labels).unwrap();
    let img = image::open(&lpath).unwrap().to_rgb8();
    for (i, l) in labels.data.iter().enumerate() {
        let (x, y) = grid.coords(i);
        assert_eq!(img.get_pixel(x as u32, y as u32).0, png16::label_colour(*l));
    }
}

#[test]
fn label_palette_separates_neighbouring_ids() {
    // Adjacent basins usually have consecutive ids: their colours must differ clearly.
    for l in 0..100_000u32 {
        let a = png16::label_colour(l);
        let b = png16::label_colour(l + 1);
        let d: i32 = (0..3).map(|c| (a[c] as i32 - b[c] as i32).abs()).sum();
        assert!(d >= 60, "labels {l} and {} look alike: {a:?} {b:?}", l + 1);
        assert!(a.iter().all(|&c| c >= 40), "label {l} is too dark: {a:?}");
    }
    assert_eq!(png16::label_colour(17), png16::label_colour(17));
}

fn source(path: &Path) -> HeightmapSource {
    HeightmapSource {
        path: path.display().to_string(),
        ..Default::default()
    }
}

#[test]
fn non_square_png_loads_at_its_own_size_with_height_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dem.png");
    let map = random_map(300, 173, 1.0, 0.0, 1.0, 6);
    png16::write_png16(&path, &map).unwrap();
    let mut src = source(&path);
    src.height_range = (100.0, 2100.0);
    src.cell_size = Some(30.0.into());
    src.validate("terrain.Heightmap").unwrap();
    let recipe_grid = Grid::new(513, 513, 100.0).unwrap();
    let h = src.load(recipe_grid, dir.path()).unwrap();
    assert_eq!((h.width(), h.height()), (300, 173));
    assert_eq!(h.grid.cell_size, 30.0);
    let (lo, hi) = h.min_max();
    assert!(
        (lo - 100.0).abs() < 1e-3 && (hi - 2100.0).abs() < 1e-3,
        "{lo}..{hi}"
    );

    // Resample: the recipe's size, corners kept.
    src.fit = Fit::Resample;
    src.cell_size = None;
    let r = src.load(recipe_grid, dir.path()).unwrap();
    assert_eq!((r.width(), r.height(), r.grid.cell_size), (513, 513, 100.0));
    assert_eq!(*r.get(0, 0), *h.get(0, 0));
    assert!((r.get(512, 512) - h.get(299, 172)).abs() < 1e-3);
}

#[test]
fn heightmap_formats_from_extension_and_relative_to_base_dir() {
    let dir = tempfile::tempdir().unwrap();
    let map = random_map(21, 13, 1.0, 5.0, 50.0, 7);
    exr::write_exr(&dir.path().join("a.exr"), &map).unwrap();
    raw::write_raw_f32(&dir.path().join("a.f32"), &map).unwrap();
    let (lo, hi) = raw::write_r16(&dir.path().join("a.r16"), &map).unwrap();
    let grid = Grid::new(9, 9, 2.0).unwrap();

    let exr_src = HeightmapSource {
        path: "a.exr".into(),
        scale: 2.0,
        ..Default::default()
    };
    let h = exr_src.load(grid, dir.path()).unwrap();
    assert_eq!(h.data, map.data.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    assert_eq!(h.grid.cell_size, 2.0, "the recipe's cell size applies");

    let f32_src = HeightmapSource {
        path: "a.f32".into(),
        raw_size: Some((21, 13)),
        ..Default::default()
    };
    assert_eq!(f32_src.resolved_format("t").unwrap(), Format::RawF32);
    assert_eq!(f32_src.load(grid, dir.path()).unwrap().data, map.data);

    let r16_src = HeightmapSource {
        path: "a.r16".into(),
        raw_size: Some((21, 13)),
        height_range: (lo, hi),
        ..Default::default()
    };
    let h = r16_src.load(grid, dir.path()).unwrap();
    for (a, b) in map.data.iter().zip(&h.data) {
        assert!((a - b).abs() <= (hi - lo) / 65535.0, "{a} vs {b}");
    }
}

#[test]
fn recipe_with_heightmap_builds_a_world_of_the_image_size() {
    let dir = tempfile::tempdir().unwrap();
    png16::write_png16(
        &dir.path().join("dem.png"),
        &random_map(40, 25, 1.0, 0.0, 1.0, 8),
    )
    .unwrap();
    let text = r#"(size: (65, 65), cell_size: 10.0, seed: 3,
        terrain: Heightmap(path: "dem.png", height_range: (0.0, 500.0)))"#;
    let recipe = orogen_core::Recipe::from_ron_str(text, "test").unwrap();
    recipe.validate().unwrap();
    let world = orogen_core::runner::initial_world(&recipe, dir.path()).unwrap();
    assert_eq!((world.grid().width, world.grid().height), (40, 25));
    assert_eq!(world.uplift.grid, world.grid());
}

#[test]
fn raw_with_wrong_byte_count_names_expected_and_actual() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.r16");
    std::fs::write(&path, vec![0u8; 2 * 64 * 64 + 1]).unwrap();
    let e = err_text(raw::read_r16(&path, 64, 64));
    assert!(
        e.contains("8193") && e.contains("8192") && e.contains("h.r16"),
        "{e}"
    );
    let e = err_text(raw::read_raw_f32(&path, 64, 64));
    assert!(e.contains("8193") && e.contains("16384"), "{e}");
}

#[test]
fn colour_png_is_rejected_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("colour.png");
    image::RgbImage::from_pixel(8, 8, image::Rgb([10, 200, 30]))
        .save(&path)
        .unwrap();
    let e = err_text(read_gray_image(&path));
    assert!(
        e.contains("is not grayscale") && e.contains("colour.png"),
        "{e}"
    );
    let e = err_text(source(&path).load(Grid::new(8, 8, 1.0).unwrap(), dir.path()));
    assert!(e.contains("is not grayscale"), "{e}");
}

#[test]
fn missing_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["gone.png", "gone.exr"] {
        let path = dir.path().join(name);
        let e = err_text(source(&path).load(Grid::new(8, 8, 1.0).unwrap(), dir.path()));
        assert!(e.contains(name), "{e}");
    }
    let e = err_text(raw::read_r16(&dir.path().join("gone.r16"), 4, 4));
    assert!(e.contains("gone.r16"), "{e}");
}

#[test]
fn nan_in_float_files_is_an_error_naming_the_cell() {
    let dir = tempfile::tempdir().unwrap();
    let mut map = random_map(10, 6, 1.0, 0.0, 1.0, 9);
    map.data[2 * 10 + 7] = f32::NAN;
    let exr_path = dir.path().join("nan.exr");
    exr::write_exr(&exr_path, &map).unwrap();
    let e = err_text(exr::read_exr(&exr_path));
    assert!(e.contains("nan.exr") && e.contains("(7, 2)"), "{e}");
    let raw_path = dir.path().join("nan.raw");
    raw::write_raw_f32(&raw_path, &map).unwrap();
    let e = err_text(raw::read_raw_f32(&raw_path, 10, 6));
    assert!(e.contains("nan.raw") && e.contains("(7, 2)"), "{e}");
}

#[test]
fn sizes_over_the_limit_are_errors_not_allocations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.png");
    image::GrayImage::new(16386, 1).save(&path).unwrap();
    let e = err_text(read_gray_image(&path));
    assert!(e.contains("16386") && e.contains("wide.png"), "{e}");

    let e = err_text(raw::read_r16(&dir.path().join("x.r16"), 16386, 16386));
    assert!(e.contains("16386"), "{e}");
    let src = HeightmapSource {
        path: "x.r16".into(),
        raw_size: Some((16386, 2)),
        ..Default::default()
    };
    let e = err_text(src.validate("terrain.Heightmap"));
    assert!(e.contains("terrain.Heightmap.raw_size"), "{e}");
}

#[test]
fn heightmap_validation_names_fields() {
    let base = HeightmapSource {
        path: "h.r16".into(),
        ..Default::default()
    };
    let e = err_text(base.validate("terrain.Heightmap"));
    assert!(e.contains("terrain.Heightmap.raw_size"), "{e}");
    let e = err_text(
        HeightmapSource {
            path: "h.tiff".into(),
            ..Default::default()
        }
        .validate("terrain.Heightmap"),
    );
    assert!(e.contains("terrain.Heightmap.format"), "{e}");
    let e = err_text(
        HeightmapSource {
            path: "h.png".into(),
            cell_size: Some(0.0.into()),
            ..Default::default()
        }
        .validate("terrain.Heightmap"),
    );
    assert!(e.contains("terrain.Heightmap.cell_size"), "{e}");
    let e = err_text(
        HeightmapSource {
            path: "h.png".into(),
            height_range: (0.0, f32::NAN),
            ..Default::default()
        }
        .validate("terrain.Heightmap"),
    );
    assert!(e.contains("terrain.Heightmap.height_range.1"), "{e}");
}

#[test]
fn heightmap_recipe_fields_parse_in_ron() {
    let text = r#"(size: (65, 65), cell_size: 10.0, seed: 3,
        terrain: Heightmap(path: "dem.r16", format: R16, raw_size: (65, 65),
                           height_range: (0.0, 800.0), cell_size: 5.0, fit: Resample))"#;
    let recipe = orogen_core::Recipe::from_ron_str(text, "test").unwrap();
    recipe.validate().unwrap();
    let back = orogen_core::Recipe::from_ron_str(&recipe.to_ron_string(), "again").unwrap();
    assert_eq!(back, recipe);
    let bad = r#"(size: (65, 65), cell_size: 10.0, seed: 3,
        terrain: Heightmap(path: "dem.png", hieght_range: (0.0, 1.0)))"#;
    let e = err_text(orogen_core::Recipe::from_ron_str(bad, "test"));
    assert!(e.contains("hieght_range"), "{e}");
}

/// `Recipe::check_files` names the field and the file of each missing file, at any depth
/// (the uplift, a heightmap terrain, a stage's erodibility), resolved against the base folder.
#[test]
fn recipe_check_files_names_a_missing_file_and_its_field() {
    use orogen_core::recipe::Recipe;
    let dir = tempfile::tempdir().unwrap();
    let base = Recipe::default_recipe();
    assert!(
        base.check_files(dir.path()).is_ok(),
        "a recipe without files passes"
    );

    let uplift = base
        .apply_override("uplift=Image(path: \"up.png\", min: 0.0, max: 0.001)")
        .unwrap();
    uplift
        .validate()
        .expect("a missing file still validates its values");
    let e = err_text(uplift.check_files(dir.path()));
    assert!(
        e.contains("uplift.Image.path") && e.contains("up.png"),
        "{e}"
    );
    assert!(e.contains("does not exist"), "{e}");
    std::fs::write(dir.path().join("up.png"), b"x").unwrap();
    assert!(
        uplift.check_files(dir.path()).is_ok(),
        "the file is found beside the recipe"
    );
    // A folder of that name is not a file.
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir(other.path().join("up.png")).unwrap();
    let e = err_text(uplift.check_files(other.path()));
    assert!(
        e.contains("uplift.Image.path") && e.contains("is not a regular file"),
        "{e}"
    );

    let terrain = base
        .apply_override("terrain=Heightmap(path: \"dem.exr\")")
        .unwrap();
    let e = err_text(terrain.check_files(dir.path()));
    assert!(
        e.contains("terrain.Heightmap.path") && e.contains("dem.exr"),
        "{e}"
    );

    let k = base
        .apply_override("stages[0].k=Image(path: \"/no/such/k.png\", min: 0.0, max: 1e-5)")
        .unwrap();
    let e = err_text(k.check_files(dir.path()));
    assert!(e.contains("stages[0].StreamPower.k.Image.path"), "{e}");
    assert!(
        e.contains("/no/such/k.png"),
        "an absolute path is kept: {e}"
    );
}
