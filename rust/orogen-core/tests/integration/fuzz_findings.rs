//! Issue #39's fuzz findings, one reproducer each: every one failed (a panic, a non-finite
//! map written with success, bytes that changed run to run, ...) before its fix.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::runner::run_recipe;
use orogen_core::Recipe;

/// Runs `ron`; the error message, or None when it succeeded.
fn run_error(ron: &str) -> Option<String> {
    let recipe = match Recipe::from_ron_str(ron, "test") {
        Ok(r) => r,
        Err(e) => return Some(e.to_string()),
    };
    if let Err(e) = recipe.validate() {
        return Some(e.to_string());
    }
    let cancel = AtomicBool::new(false);
    run_recipe(&recipe, Path::new("."), &cancel, &mut |_| {})
        .err()
        .map(|e| e.to_string())
}

/// #39.1: `Gaussian(sigma: 1e-30)` on a graph made more bins than a usize holds, and the
/// rasteriser indexed past its bins (a panic, exit 101).
#[test]
fn a_tiny_gaussian_sigma_is_refused_by_name() {
    let msg = run_error(
        "(size: (65, 65), cell_size: 100.0, seed: 1, \
         domain: Graph(spacing: 600.0, surface: Gaussian(sigma: 1e-30)), \
         terrain: Noise(kind: Fbm, octaves: 3, wavelength: 3000.0, amplitude: 50.0), \
         stages: [StreamPower(iterations: 2)])",
    )
    .expect("the recipe is refused");
    assert!(msg.contains("surface.sigma"), "{msg}");
    // Fuzzing the bake (#39, second run): the sigma was written out in 32 digits.
    assert!(msg.contains("1e-30 m is too small"), "{msg}");
}

/// #39, fuzzing the bake: a Graph domain's spacing and sigma were written out in full in
/// their errors (`0.000…001 m`, 30 zeros), against the rule that a number beyond
/// 1e-4..1e7 is given in exponent form.
#[test]
fn graph_domain_errors_give_extreme_numbers_in_exponent_form() {
    let recipe = |spacing: &str| {
        format!(
            "(size: (33, 33), cell_size: 100.0, seed: 1, domain: Graph(spacing: {spacing}), \
             terrain: Flat(0.0), stages: [StreamPower(iterations: 2)])"
        )
    };
    let msg = run_error(&recipe("1e-30")).expect("refused");
    assert!(
        msg.contains("domain.Graph.spacing") && msg.contains("1e-30 m over 3200 × 3200 m"),
        "{msg}"
    );
    let msg = run_error(&recipe("1e30")).expect("refused");
    assert!(
        msg.contains("1e30 m leaves no node inside the 3200 × 3200 m domain"),
        "{msg}"
    );
}

/// #39.6: non-square cells wrote their two cell-size attributes in a random order, so the
/// same map gave different EXR bytes run to run.
#[test]
fn a_non_square_exr_is_the_same_bytes_every_time() {
    use orogen_core::field::{Field, Grid};
    use orogen_core::io::exr::{recorded_cell_size, write_exr};
    let grid = Grid::with_cells(9, 7, 30.0, 20.0).unwrap();
    let map = Field::from_vec(grid, (0..63).map(|i| i as f32 * 0.5).collect(), "test").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut first: Option<Vec<u8>> = None;
    for k in 0..12 {
        let path = dir.path().join(format!("m{k}.exr"));
        write_exr(&path, &map).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        match &first {
            None => first = Some(bytes),
            Some(f) => assert!(f == &bytes, "write {k} differs from the first"),
        }
        assert_eq!(recorded_cell_size(&path).unwrap(), Some((30.0, 20.0)));
    }
}

/// #39.4: `planet.steps` took any u32 (4,294,967,295 steps looked like a hang), and a
/// planet run reported no progress.
#[test]
fn planet_steps_are_bounded_and_the_planet_reports_progress() {
    let msg = run_error(
        "(size: (33, 33), cell_size: 1000.0, seed: 1, \
         terrain: Flat(0.0), planet: (points: 2000, steps: 4294967295), stages: [])",
    )
    .expect("refused");
    assert!(
        msg.contains("planet.steps") && msg.contains("100000"),
        "{msg}"
    );

    let recipe = Recipe::from_ron_str(
        "(size: (33, 33), cell_size: 1000.0, seed: 1, \
         terrain: Flat(0.0), planet: (points: 2000, steps: 6), stages: [])",
        "test",
    )
    .unwrap();
    let mut seen = Vec::new();
    run_recipe(&recipe, Path::new("."), &AtomicBool::new(false), &mut |e| {
        if let orogen_core::runner::Event::Setup { name, fraction } = e {
            seen.push((name.to_string(), fraction));
        }
    })
    .unwrap();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(seen.iter().all(|(n, _)| n == "planet"));
    assert!(
        seen.windows(2).all(|w| w[0].1 < w[1].1) && seen[5].1 == 1.0,
        "{seen:?}"
    );
}

/// #39.2: `Primitives(detail_wavelength: 1e-30)` on `graph` overflowed the detail noise's
/// lattice and wrote NaN or -inf with exit 0; a wavelength under a cell is refused by name.
#[test]
fn a_detail_wavelength_under_a_cell_is_refused_by_name() {
    let recipe = |wl: &str| {
        format!(
            "(size: (65, 65), cell_size: 100.0, seed: 1, \
             domain: Graph(spacing: 600.0, surface: Primitives(detail_wavelength: {wl})), \
             terrain: Noise(kind: Fbm, octaves: 3, wavelength: 3000.0, amplitude: 50.0), \
             stages: [StreamPower(iterations: 2)])"
        )
    };
    let msg = run_error(&recipe("1e-30")).expect("refused");
    assert!(
        msg.contains("domain.Graph.surface.Primitives.detail_wavelength") && msg.contains("100"),
        "{msg}"
    );
    assert!(run_error(&recipe("99.0")).is_some());
    // One cell is enough, and 0 is the default.
    assert_eq!(run_error(&recipe("100.0")), None);
    assert_eq!(run_error(&recipe("0.0")), None);
}

/// #39.2: a strata thickness of `Constant(1e38)` with `repeat: 10` summed to inf in
/// `layer_shale.exr` (each layer finite, the material's total not); the strata's depth is
/// bounded and the error names the layer.
#[test]
fn strata_too_deep_for_floats_are_refused_by_name() {
    let recipe = |thickness: &str, repeat: u32| {
        format!(
            "(size: (33, 33), cell_size: 100.0, seed: 1, terrain: Flat(0.0), \
             strata: (layers: [(material: \"sandstone\", thickness: Constant(10.0)), \
             (material: \"shale\", thickness: {thickness})], repeat: {repeat}), \
             stages: [LayeredThermal(iterations: 1)])"
        )
    };
    let msg = run_error(&recipe("Constant(1e38)", 10)).expect("refused");
    assert!(
        msg.contains("strata.layers[1].thickness") && msg.contains("1e7"),
        "{msg}"
    );
    let msg = run_error(&recipe(
        "Noise(noise: (wavelength: 500.0), min: 0.0, max: 3e38)",
        1,
    ))
    .expect("refused");
    assert!(msg.contains("strata.layers[1].thickness"), "{msg}");
    // #39.8: min above max was taken.
    let msg = run_error(&recipe(
        "Noise(noise: (wavelength: 500.0), min: 20.0, max: 5.0)",
        1,
    ))
    .expect("refused");
    assert!(
        msg.contains("strata.layers[1].thickness.Noise") && msg.contains("above max"),
        "{msg}"
    );
    assert_eq!(run_error(&recipe("Constant(400000.0)", 10)), None);
}

/// #39.2: the writer checks every float map it writes (the heights and each scalar and
/// vector map, layer maps included) and writes nothing when one is not finite.
#[test]
fn a_non_finite_map_is_never_written() {
    use orogen_core::field::{Field, Grid};
    use orogen_core::world::{MapData, World};
    let grid = Grid::new(5, 4, 10.0).unwrap();
    let height = Field::from_vec(grid, vec![1.0; 20], "test").unwrap();
    let mut bad = vec![0.5f32; 20];
    bad[7] = f32::INFINITY;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut world = World::new(height.clone(), 1);
    world.maps.insert(
        "layer_shale".into(),
        MapData::Scalar(Field::from_vec(grid, bad, "test").unwrap()),
    );
    let msg = orogen_core::bake::write_maps(&world, &out)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("layer_shale.exr") && msg.contains("inf") && msg.contains("(2, 1)"),
        "{msg}"
    );
    assert!(!out.exists(), "nothing written");
    let mut world = World::new(height, 1);
    world.height.data[19] = f32::NAN;
    let msg = orogen_core::bake::write_maps(&world, &out)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("height.exr") && msg.contains("NaN"), "{msg}");
    assert!(!out.exists(), "nothing written");
}

/// #39.7: `--set 'stages[0].lakes=Fill()'` and `domain.surface=Gaussian()` were refused
/// (an empty list is not a struct variant to serde) though the same text is valid in a
/// recipe file.
#[test]
fn set_takes_a_struct_variant_of_defaults() {
    use orogen_core::flow::router::SinkMode;
    use orogen_core::recipe::Stage;
    let r = Recipe::default_recipe()
        .apply_override("stages[0].lakes=Fill()")
        .unwrap();
    let Stage::StreamPower(p) = &r.stages[0] else {
        panic!("stage 0 is stream power")
    };
    let from_file = Recipe::from_ron_str(
        "(size: (33, 33), cell_size: 100.0, seed: 1, terrain: Flat(0.0), \
         stages: [StreamPower(lakes: Fill())])",
        "test",
    )
    .unwrap();
    let Stage::StreamPower(q) = &from_file.stages[0] else {
        panic!("stream power")
    };
    assert!(matches!(p.lakes, SinkMode::Fill { .. }), "{:?}", p.lakes);
    assert_eq!(p.lakes, q.lakes);
    let g = Recipe::built_in("graph")
        .unwrap()
        .apply_override("domain.surface=Gaussian()")
        .unwrap();
    assert!(
        matches!(
            &g.domain,
            orogen_core::recipe::Domain::Graph(d)
                if matches!(d.surface, orogen_core::stages::domain::Surface::Gaussian { sigma } if sigma == 0.0)
        ),
        "{:?}",
        g.domain
    );
    // A bare name where the variant has fields says how to write it.
    let msg = Recipe::default_recipe()
        .apply_override("stages[0].lakes=Fill")
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("stages[0].lakes") && msg.contains("`Fill()`"),
        "{msg}"
    );
}

/// #39.8: messages that named the wrong field, or a value in 309 digits.
#[test]
fn messages_name_the_field_at_fault() {
    let base = Recipe::default_recipe()
        .apply_override("size=(33,33)")
        .unwrap();
    let refused = |set: &str| -> String {
        let r = match base.apply_override(set) {
            Ok(r) => r,
            Err(e) => return e.to_string(),
        };
        r.validate().expect_err(set).to_string()
    };
    // A tiny wavelength, anywhere, is that noise's wavelength (was `noise.octaves`).
    let msg = refused("terrain.wavelength=1e-30");
    assert!(msg.contains("`terrain.Noise.wavelength`"), "{msg}");
    let msg = refused("uplift=Noise(noise: (wavelength: 1e-30), min: 0.0, max: 0.001)");
    assert!(msg.contains("`uplift.Noise.noise.wavelength`"), "{msg}");
    let msg = refused("stages[0].k=Noise(noise: (wavelength: 1e-30), min: 0.0, max: 1e-5)");
    assert!(
        msg.contains("`stages[0].StreamPower.k.Noise.noise.wavelength`"),
        "{msg}"
    );
    // Ranges `orogen materials` lists are the ranges enforced.
    let strata = |s: &str| {
        refused(&format!(
            "strata=(layers: [(material: \"shale\", thickness: Constant(5.0))], {s})"
        ))
    };
    let msg = strata("top: Some(1e30)");
    assert!(
        msg.contains("`strata.top`") && msg.contains("1e30"),
        "{msg}"
    );
    let msg = strata("strike_deg: -1.0");
    assert!(msg.contains("`strata.strike_deg`"), "{msg}");
    let msg = refused(
        "materials=[(name: \"shale\", talus_deg: 30.0, thermal_susceptibility: 0.5, \
         dissolubility: 0.5, wind_resistance: 0.5, erodibility: 10.0001, colour: (1, 2, 3))]",
    );
    assert!(msg.contains("`materials[0].erodibility`"), "{msg}");
    // f64::MAX in exponent form, not 309 digits.
    let msg = refused("cell_size=1.7976931348623157e308");
    assert!(msg.contains("cell_size") && msg.len() < 200, "{msg}");
    // One byte of --max-memory is one byte, not "1 MiB".
    assert_eq!(orogen_core::runner::gib(1), "1 B");
    assert_eq!(orogen_core::runner::gib(1 << 20), "1 MiB");
}

/// #39, fuzzing the bake: `--set 'terrain=Heightmap(path: "dem.exr", nodata: NaN)'` (or
/// `Some(NaN)`) was refused as "not a finite number", though the same text is valid in a
/// recipe file and `terrain.nodata=NaN` alone was taken; NaN anywhere else is still refused.
#[test]
fn set_takes_a_nan_nodata_inside_a_heightmap() {
    use orogen_core::recipe::TerrainSource;
    for value in ["NaN", "Some(NaN)", "nan"] {
        let r = Recipe::default_recipe()
            .apply_override(&format!(
                "terrain=Heightmap(path: \"dem.exr\", nodata: {value})"
            ))
            .unwrap_or_else(|e| panic!("{value}: {e}"));
        let TerrainSource::Heightmap(h) = &r.terrain else {
            panic!("not a heightmap");
        };
        assert!(h.nodata.is_some_and(f32::is_nan), "{value}: {:?}", h.nodata);
        let file = Recipe::from_ron_str(&r.to_ron_string(), "round trip").unwrap();
        let TerrainSource::Heightmap(h) = &file.terrain else {
            panic!("not a heightmap");
        };
        assert!(h.nodata.is_some_and(f32::is_nan));
    }
    let e = Recipe::default_recipe()
        .apply_override("terrain=Heightmap(path: \"dem.exr\", scale: NaN)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a finite number"), "{e}");
    let e = Recipe::default_recipe()
        .apply_override("seed=NaN")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a finite number"), "{e}");
}

/// #39, second fuzzing run (the `recipe` target): a heightmap path holding newlines was
/// quoted as it was, so the validation error ran over 21 lines; user text in an error now
/// has its control characters escaped (`\n`), the message one line whatever the input.
#[test]
fn a_path_with_newlines_gives_a_one_line_error() {
    let ron = "(size: (32, 65), cell_size: 50.0, seed: 1, \
               terrain: Heightmap(path: \"dem.r the other.\\n(\\n    size: (513, 513),\\n\\te1r\"), \
               stages: [Hydrology()])";
    let recipe = Recipe::from_ron_str(ron, "test").unwrap();
    let msg = recipe.validate().unwrap_err().to_string();
    assert!(!msg.contains('\n') && !msg.contains('\t'), "{msg}");
    assert!(
        msg.contains("terrain.Heightmap.format") && msg.contains("dem.r the other.\\n(\\n"),
        "{msg}"
    );
    // A short path too, and a path in the folder check.
    let recipe = Recipe::from_ron_str(
        "(size: (33, 33), cell_size: 50.0, seed: 1, terrain: Heightmap(path: \"a\\nb.exr\"))",
        "test",
    )
    .unwrap();
    let msg = recipe.check_files(Path::new(".")).unwrap_err().to_string();
    assert!(!msg.contains('\n') && msg.contains("a\\nb.exr"), "{msg}");
    assert_eq!(orogen_core::error::shorten("x\ry"), "x\\ry");
    // A backtick in the path ended its quoting early, leaving the newlines after it raw.
    let recipe = Recipe::from_ron_str(
        "(size: (33, 33), cell_size: 50.0, seed: 1, \
         terrain: Heightmap(path: \"dem6ex`**13, 513),\n    cell_size: 100.0,\n\"))",
        "test",
    )
    .unwrap();
    let msg = recipe.validate().unwrap_err().to_string();
    assert!(!msg.contains('\n') && msg.contains("513),\\n"), "{msg}");
}
