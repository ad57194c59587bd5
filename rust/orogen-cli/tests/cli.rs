//! Runs the built `orogen` binary: bake outputs, determinism across thread counts,
//! overrides, and a clear message plus exit code for each kind of bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{files_of, orogen, stderr};

const SMALL: &str = "size=(65,65)";

/// Runs a bake that must succeed; returns the output folder.
fn bake_ok(dir: &Path, out: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["bake", "--out", out, "--set", SMALL];
    args.extend_from_slice(extra);
    let o = orogen(dir, &args);
    assert!(o.status.success(), "bake failed: {}", stderr(&o));
    dir.join(out)
}

/// Asserts a failing run: exit code 2, `error: ` message containing every `needle`.
fn assert_bad_input(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(err.starts_with("error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bake_writes_every_expected_file_and_bake_json_matches_the_heights() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bake_ok(tmp.path(), "out", &[]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bake.json")).unwrap()).unwrap();
    let mut expected: Vec<String> = [
        "bake.json",
        "height.exr",
        "height.png",
        "height.r16",
        "preview.png",
    ]
    .map(String::from)
    .to_vec();
    // Whatever maps the stages produced are written by name too.
    for name in json["maps"].as_array().unwrap() {
        let name = name.as_str().unwrap();
        let exr = format!("{name}.exr");
        let png = format!("{name}.png");
        assert!(
            out.join(&exr).exists() || out.join(&png).exists(),
            "map {name} was not written"
        );
        expected.push(if out.join(&exr).exists() { exr } else { png });
    }
    // The grid's rivers as curves (issue #37), named by their own key.
    if json.get("rivers").is_some() {
        assert_eq!(json["rivers"], "rivers.json");
        expected.push("rivers.json".into());
    }
    expected.sort();
    assert_eq!(files_of(&out), expected);

    assert_eq!(json["size"], serde_json::json!([65, 65]));
    let heights = orogen_core::io::exr::read_exr(&out.join("height.exr")).unwrap();
    assert_eq!((heights.width(), heights.height()), (65, 65));
    let (lo, hi) = heights.min_max();
    assert_eq!(json["height_min"].as_f64().unwrap() as f32, lo);
    assert_eq!(json["height_max"].as_f64().unwrap() as f32, hi);
    let recipe = orogen_core::Recipe::default_recipe();
    assert_eq!(json["seed"], recipe.seed);
    // The initial terrain, the stages, and the river curves when there are rivers.
    assert_eq!(
        json["stages"].as_array().unwrap().len(),
        recipe.stages.len() + 1 + usize::from(json.get("rivers").is_some())
    );
    assert_eq!(
        std::fs::metadata(out.join("height.r16")).unwrap().len(),
        2 * 65 * 65
    );
}

#[test]
fn the_default_bake_writes_its_rivers_as_curves_in_rivers_json() {
    // Issue #37: a grid bake's rivers as smooth curves, in the Graph domain's format.
    let tmp = tempfile::tempdir().unwrap();
    let out = bake_ok(tmp.path(), "out", &["--set", "size=(129,129)"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bake.json")).unwrap()).unwrap();
    assert_eq!(json["rivers"], "rivers.json", "bake.json lists rivers.json");
    let stages: Vec<&str> = json["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages.last(), Some(&"river curves"));
    let rivers: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("rivers.json")).unwrap()).unwrap();
    let rivers = rivers["rivers"].as_array().unwrap();
    assert!(!rivers.is_empty());
    for r in rivers {
        let points = r["points"].as_array().unwrap();
        assert!(points.len() >= 2);
        assert_eq!(r["discharge"].as_array().unwrap().len(), points.len());
        assert_eq!(r["width"].as_array().unwrap().len(), points.len());
        assert!(r["order"].as_u64().unwrap() >= 1);
        let beds: Vec<f64> = points.iter().map(|p| p[2].as_f64().unwrap()).collect();
        assert!(beds.windows(2).all(|w| w[1] <= w[0]), "a bed rises");
    }
    // Turned off: no rivers.json, and the earlier one goes with the earlier bake.
    let out = bake_ok(
        tmp.path(),
        "out",
        &["--set", "size=(129,129)", "--set", "river_curves=None"],
    );
    assert!(!out.join("rivers.json").exists());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bake.json")).unwrap()).unwrap();
    assert!(json.get("rivers").is_none());
}

#[test]
fn same_recipe_and_seed_give_identical_bytes_for_any_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let one = bake_ok(tmp.path(), "t1", &["--threads", "1"]);
    let four = bake_ok(tmp.path(), "t4", &["--threads", "4"]);
    let names = files_of(&one);
    assert_eq!(names, files_of(&four));
    for name in names.iter().filter(|n| *n != "bake.json") {
        let a = std::fs::read(one.join(name)).unwrap();
        let b = std::fs::read(four.join(name)).unwrap();
        assert!(a == b, "{name} differs between --threads 1 and --threads 4");
    }
}

#[test]
fn a_different_seed_changes_the_terrain() {
    let tmp = tempfile::tempdir().unwrap();
    let a = bake_ok(tmp.path(), "a", &["--set", "stages=[]"]);
    let b = bake_ok(tmp.path(), "b", &["--set", "stages=[]", "--set", "seed=7"]);
    let ha = std::fs::read(a.join("height.exr")).unwrap();
    let hb = std::fs::read(b.join("height.exr")).unwrap();
    assert_ne!(ha, hb);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("bake.json")).unwrap()).unwrap();
    assert_eq!(json["seed"], 7);
}

/// An open wind reports what it blew off the map: printed after the bake and in bake.json's
/// stage entry (`figures`), the same value; a closed one reports none left (issue #39).
#[test]
fn bake_reports_the_sand_the_wind_blew_off_the_map() {
    let tmp = tempfile::tempdir().unwrap();
    for borders in ["Open", "Closed"] {
        let recipe = format!(
            "(size: (48, 40), cell_size: 2.0, seed: 3,
              terrain: Noise(kind: Fbm, octaves: 3, wavelength: 30.0, amplitude: 0.5),
              materials: [(name: \"rock\", wind_resistance: 1.0)],
              strata: (layers: [(material: \"sand\", thickness: Constant(1.0))],
                       bottom: \"rock\", sediment: \"sand\"),
              stages: [Wind(iterations: 20, borders: {borders})])"
        );
        std::fs::write(tmp.path().join("wind.ron"), recipe).unwrap();
        let o = orogen(tmp.path(), &["bake", "wind.ron", "--out", borders]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        let printed: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix("Wind: wind_blown_off_m3 "))
            .unwrap_or_else(|| panic!("no figure in:\n{out}"))
            .parse()
            .unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join(borders).join("bake.json")).unwrap(),
        )
        .unwrap();
        let stage = json["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["stage"] == "Wind")
            .unwrap();
        let recorded = stage["figures"]["wind_blown_off_m3"].as_f64().unwrap();
        assert!(
            (printed - recorded).abs() <= 1e-6 * recorded.max(1.0),
            "{printed} vs {recorded}"
        );
        if borders == "Open" {
            assert!(recorded > 1.0, "{borders}: {recorded} m³ blown off");
        } else {
            assert!(recorded < 1e-3, "{borders}: {recorded} m³ blown off");
        }
    }
}

#[test]
fn bake_reads_a_recipe_file_with_paths_relative_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("recipes");
    std::fs::create_dir(&sub).unwrap();
    let dem = image::ImageBuffer::from_fn(40, 23, |x, y| image::Luma([(x * 1000 + y * 50) as u16]));
    dem.save(sub.join("dem.png")).unwrap();
    std::fs::write(
        sub.join("r.ron"),
        "(size: (65, 65), cell_size: 10.0, seed: 1,\n \
         terrain: Heightmap(path: \"dem.png\", height_range: (0.0, 300.0)))",
    )
    .unwrap();
    let o = orogen(tmp.path(), &["bake", "recipes/r.ron", "--out", "o"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = orogen_core::io::exr::read_exr(&tmp.path().join("o/height.exr")).unwrap();
    assert_eq!(
        (h.width(), h.height()),
        (40, 23),
        "the world takes the image size"
    );
    assert_eq!(h.grid.cell_size, 10.0);
}

#[test]
fn recipe_default_prints_the_embedded_recipe() {
    let tmp = tempfile::tempdir().unwrap();
    let o = orogen(tmp.path(), &["recipe", "default"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let parsed = orogen_core::Recipe::from_ron_str(&text, "stdout").unwrap();
    assert_eq!(parsed, orogen_core::Recipe::default_recipe());
}

#[test]
fn info_describes_png_exr_and_raw_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bake_ok(tmp.path(), "out", &["--set", "stages=[]"]);
    let run = |args: &[&str]| {
        let o = orogen(&out, args);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let png = run(&["info", "height.png"]);
    assert!(
        png.contains("PNG 16-bit grayscale") && png.contains("65 x 65"),
        "{png}"
    );
    assert!(png.contains("0 .. 65535"), "{png}");
    let exr = run(&["info", "height.exr"]);
    assert!(exr.contains("EXR") && exr.contains("65 x 65"), "{exr}");
    let r16 = run(&["info", "height.r16", "--size", "65,65"]);
    assert!(r16.contains("R16") && r16.contains("0 .. 65535"), "{r16}");
    let o = orogen(&out, &["info", "height.r16"]);
    assert_bad_input(&o, &["--size"]);
    let o = orogen(&out, &["info", "height.r16", "--size", "64,65"]);
    assert_bad_input(&o, &["8450", "8320"]);
}

#[test]
fn malformed_recipe_reports_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.ron"),
        "(\n    size: (65, 65),\n    cell_size: 10.0\n    seed: 1,\n)",
    )
    .unwrap();
    let o = orogen(tmp.path(), &["bake", "bad.ron"]);
    assert_bad_input(&o, &["bad.ron", "line 4", "column"]);
}

#[test]
fn unknown_and_mistyped_fields_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let base = "size: (65, 65), seed: 1, terrain: Flat(0.0)";
    std::fs::write(
        tmp.path().join("unknown.ron"),
        format!("({base}, cell_size: 1.0, colour: 3)"),
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("typo.ron"),
        format!("({base}, cell_size: \"ten\")"),
    )
    .unwrap();
    assert_bad_input(&orogen(tmp.path(), &["bake", "unknown.ron"]), &["colour"]);
    assert_bad_input(
        &orogen(tmp.path(), &["bake", "typo.ron"]),
        &["cell_size", "line 1"],
    );
    assert_bad_input(&orogen(tmp.path(), &["bake", "--set", "sead=7"]), &["sead"]);
    assert_bad_input(
        &orogen(tmp.path(), &["bake", "--set", "seed=\"x\""]),
        &["seed"],
    );
}

#[test]
fn out_of_range_values_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert_bad_input(
        &orogen(d, &["bake", "--set", "size=(0,65)"]),
        &["size", "0"],
    );
    assert_bad_input(
        &orogen(d, &["bake", "--set", "size=(65,16386)"]),
        &["size", "16386"],
    );
    assert_bad_input(
        &orogen(d, &["bake", "--set", "cell_size=0"]),
        &["cell_size"],
    );
    assert_bad_input(
        &orogen(d, &["bake", "--set", "cell_size=-2.5"]),
        &["cell_size"],
    );
    // RON reads `NaN` and `inf` as floats; validation rejects them.
    for bad in ["NaN", "inf"] {
        std::fs::write(
            d.join("nan.ron"),
            format!("(size: (65, 65), cell_size: {bad}, seed: 1, terrain: Flat(0.0))"),
        )
        .unwrap();
        assert_bad_input(&orogen(d, &["bake", "nan.ron"]), &["cell_size", "finite"]);
    }
    assert_bad_input(&orogen(d, &["bake", "--threads", "0"]), &["--threads"]);
    assert_bad_input(&orogen(d, &["bake", "missing.ron"]), &["missing.ron"]);
}

#[test]
fn bad_images_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    image::RgbImage::from_pixel(8, 8, image::Rgb([200, 10, 10]))
        .save(d.join("colour.png"))
        .unwrap();
    for (file, needle) in [
        ("nothere.png", "nothere.png"),
        ("colour.png", "is not grayscale"),
    ] {
        std::fs::write(
            d.join("r.ron"),
            format!(
                "(size: (65, 65), cell_size: 1.0, seed: 1, terrain: Heightmap(path: \"{file}\"))"
            ),
        )
        .unwrap();
        assert_bad_input(&orogen(d, &["bake", "r.ron"]), &[needle, file]);
    }
}

#[test]
fn an_unwritable_output_folder_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("plain"), b"a file").unwrap();
    let o = orogen(tmp.path(), &["bake", "--set", SMALL, "--out", "plain/out"]);
    assert_bad_input(&o, &["plain/out"]);
}

#[test]
fn a_failed_bake_leaves_existing_outputs_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bake_ok(tmp.path(), "out", &["--set", "stages=[]"]);
    let before = std::fs::read(out.join("height.exr")).unwrap();

    // Fails before any write: a missing image.
    std::fs::write(
        tmp.path().join("r.ron"),
        "(size: (65, 65), cell_size: 1.0, seed: 1, terrain: Heightmap(path: \"gone.exr\"))",
    )
    .unwrap();
    let o = orogen(tmp.path(), &["bake", "r.ron", "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "a missing file is bad input");
    // Named with its field before the run starts.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("terrain.Heightmap.path") && err.contains("gone.exr"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("height.exr")).unwrap(), before);

    // A folder sits where preview.png goes: refused before the run (a bake swaps the
    // whole folder and does not move folders inside it).
    std::fs::remove_file(out.join("preview.png")).unwrap();
    std::fs::create_dir(out.join("preview.png")).unwrap();
    let o = orogen(
        tmp.path(),
        &[
            "bake",
            "--out",
            "out",
            "--set",
            SMALL,
            "--set",
            "stages=[]",
            "--set",
            "seed=9",
        ],
    );
    assert_bad_input(&o, &["preview.png", "folder inside the output folder"]);
    assert_eq!(std::fs::read(out.join("height.exr")).unwrap(), before);
    assert!(files_of(&out).iter().all(|n| !n.starts_with('.')));
}

#[test]
fn progress_without_a_terminal_is_plain_lines_per_stage() {
    let tmp = tempfile::tempdir().unwrap();
    let o = orogen(tmp.path(), &["bake", "--out", "o", "--set", SMALL]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let recipe = orogen_core::Recipe::default_recipe();
    let n = recipe.stages.len();
    for (i, stage) in recipe.stages.iter().enumerate() {
        let head = format!("[{}/{}] {}", i + 1, n, stage.name());
        assert!(err.contains(&format!("{head} started")), "{err}");
        assert!(err.contains(&format!("{head} done in")), "{err}");
    }
    // No terminal control codes (bars) when stderr is not a terminal.
    assert!(!err.contains('\u{1b}'), "{err:?}");
    let summary = String::from_utf8(o.stdout).unwrap();
    assert!(
        summary.contains("height.exr") && summary.contains("65x65"),
        "{summary}"
    );
}

#[test]
fn every_built_in_recipe_prints_parses_and_bakes_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let list = orogen(tmp.path(), &["recipe"]);
    assert!(list.status.success());
    let list = String::from_utf8(list.stdout).unwrap();
    let names: Vec<&str> = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        names.contains(&"default") && names.contains(&"coupled"),
        "{list}"
    );
    for name in names {
        let o = orogen(tmp.path(), &["recipe", name]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let r = orogen_core::Recipe::from_ron_str(&text, name).unwrap();
        r.validate().unwrap();
        // Baked by name (no such file here), small and short; a planet small too.
        let out = format!("out-{name}");
        let mut args = vec!["bake", name, "--out", &out, "--set", "size=(65,65)"];
        if r.planet.is_some() {
            args.extend(["--set", "planet.points=3000", "--set", "planet.steps=10"]);
        }
        let o = orogen(tmp.path(), &args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(tmp.path().join(&out).join("height.exr").exists());
        if r.planet.is_some() {
            assert!(tmp.path().join(&out).join("planet_height.exr").exists());
            // bake.json lists the planet's files, so a later bake there replaces them
            // (fuzz finding #39.5).
            let json = std::fs::read_to_string(tmp.path().join(&out).join("bake.json")).unwrap();
            let json: serde_json::Value = serde_json::from_str(&json).unwrap();
            let listed: Vec<&str> = json["planet"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            for f in orogen_core::bake::PLANET_FILES {
                assert!(
                    listed.contains(&f),
                    "{name}: bake.json lists {f}: {listed:?}"
                );
                assert!(tmp.path().join(&out).join(f).exists(), "{name}: {f}");
            }
        }
    }
    assert_bad_input(
        &orogen(tmp.path(), &["recipe", "nope"]),
        &["nope", "coupled"],
    );
}

#[test]
fn materials_lists_the_built_in_ones_and_every_field_with_its_unit() {
    let tmp = tempfile::tempdir().unwrap();
    let o = orogen(tmp.path(), &["materials"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    for m in orogen_core::stages::strata::built_in_materials() {
        assert!(text.contains(&m.name), "{} missing from:\n{text}", m.name);
    }
    use orogen_core::stages::strata::{MATERIAL_FIELDS, STRATA_FIELDS, STRATUM_FIELDS};
    for f in MATERIAL_FIELDS
        .iter()
        .chain(STRATA_FIELDS)
        .chain(STRATUM_FIELDS)
    {
        let line = text
            .lines()
            .find(|l| {
                l.trim_start().starts_with(&format!("{} ", f.param.name)) && l.contains(f.param.doc)
            })
            .unwrap_or_else(|| panic!("no line for {}:\n{text}", f.param.name));
        assert!(line.contains(f.param.unit), "{line}");
    }
}

#[test]
fn an_overflowing_stage_fails_and_keeps_the_earlier_bake() {
    // Hardening issue #11: precipitation 1e35 on one cell made drainage.exr +inf with
    // exit 0. Now the stage fails, naming itself and the field, and nothing is replaced.
    let dir = tempfile::tempdir().unwrap();
    let out = bake_ok(dir.path(), "out", &[]);
    let before = std::fs::read(out.join("height.exr")).unwrap();
    let o = orogen(
        dir.path(),
        &[
            "bake",
            "--out",
            "out",
            "--set",
            SMALL,
            "--set",
            "stages=[Hydrology(precipitation: Constant(1e35))]",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    for n in [
        "stages[0].Hydrology",
        "inf",
        "`drainage`",
        "`precipitation`",
    ] {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
    assert_eq!(std::fs::read(out.join("height.exr")).unwrap(), before);
    assert!(!files_of(&out).iter().any(|f| f.contains("tmp")));
}

#[test]
fn a_bake_replaces_the_folder_whole_and_keeps_the_users_files() {
    // Hardening issue #11: outputs are all new or all old. The folder is swapped in one
    // step; maps of the earlier bake the new recipe does not make go with it, and files
    // the bake did not write (a user's notes, Godot's .import files) stay.
    let dir = tempfile::tempdir().unwrap();
    let out = bake_ok(dir.path(), "out", &["--set", "seed=1"]);
    assert!(out.join("rivers.png").exists());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("height.png.import"), "godot").unwrap();
    let out = bake_ok(
        dir.path(),
        "out",
        &[
            "--set",
            "seed=2",
            "--set",
            "stages=[Thermal(iterations: 2)]",
        ],
    );
    assert_eq!(
        files_of(&out),
        [
            "bake.json",
            "height.exr",
            "height.png",
            "height.png.import",
            "height.r16",
            "notes.txt",
            "preview.png"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    let json = std::fs::read_to_string(out.join("bake.json")).unwrap();
    assert!(json.contains("\"seed\": 2"), "{json}");
    // No staging or aside folder is left beside it.
    assert_eq!(files_of(dir.path()), ["out"]);
}

#[test]
fn a_folder_inside_the_output_folder_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("out/height.exr")).unwrap();
    let o = orogen(dir.path(), &["bake", "--out", "out", "--set", SMALL]);
    assert_bad_input(&o, &["height.exr", "folder inside the output folder"]);
    assert!(!stderr(&o).contains("started"), "{}", stderr(&o));
}

#[test]
fn sigterm_cancels_like_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let out = bake_ok(dir.path(), "out", &["--set", "stages=[]"]);
    let before = std::fs::read(out.join("height.exr")).unwrap();
    // A bake far too long to finish: it must stop at the signal.
    let mut child = Command::new(env!("CARGO_BIN_EXE_orogen"))
        .current_dir(dir.path())
        .args([
            "bake",
            "--out",
            "out",
            "--set",
            "size=(257,257)",
            "--set",
            "stages=[Hydraulic(iterations: 1000000)]",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    // Wait until the stage has started, so the signal handler is installed.
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("Hydraulic started") {
        use std::io::Read;
        let n = err.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the bake ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    let kill = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    use std::io::Read;
    err.read_to_string(&mut rest).unwrap();
    let all = format!("{}{rest}", String::from_utf8_lossy(&seen));
    assert!(
        all.contains("cancelling") && all.contains("cancelled"),
        "{all}"
    );
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert_eq!(std::fs::read(out.join("height.exr")).unwrap(), before);
    assert_eq!(files_of(dir.path()), ["out"]);
}

#[test]
fn pipes_devices_and_huge_files_are_refused_as_inputs() {
    // Hardening issue #11: a FIFO as the recipe or heightmap blocked forever, and
    // /dev/zero as the recipe read 2 GB before failing.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.ron");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let o = orogen(dir.path(), &["bake", "pipe.ron", "--out", "o"]);
    assert_bad_input(&o, &["pipe.ron", "not a regular file"]);
    let o = orogen(dir.path(), &["bake", "/dev/zero", "--out", "o"]);
    assert_bad_input(&o, &["/dev/zero", "not a regular file"]);
    let o = orogen(
        dir.path(),
        &[
            "bake",
            "--out",
            "o",
            "--set",
            "terrain=Heightmap(path: \"pipe.ron\", format: Some(Exr))",
        ],
    );
    assert_bad_input(&o, &["pipe.ron", "not a regular file"]);
    let o = orogen(dir.path(), &["info", "pipe.ron"]);
    assert_ne!(o.status.code(), Some(0));
    // A recipe file over 16 MiB (sparse, so it costs no disk).
    let big = std::fs::File::create(dir.path().join("big.ron")).unwrap();
    big.set_len(17 << 20).unwrap();
    let o = orogen(dir.path(), &["bake", "big.ron", "--out", "o"]);
    assert_bad_input(&o, &["big.ron", "at most 16 MiB"]);
}

#[test]
fn threads_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["0", "257", "65536"] {
        let o = orogen(
            dir.path(),
            &["bake", "--out", "o", "--set", SMALL, "--threads", n],
        );
        assert_bad_input(&o, &["--threads", "between 1 and 256", n]);
    }
}

#[test]
fn a_bake_too_big_for_memory_is_refused_before_it_starts() {
    // Hardening issue #11: under `ulimit -v 4000000` a 16385² bake aborted with
    // "memory allocation of 1073872900 bytes failed" (exit 134).
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(format!(
            "ulimit -v 4000000 && exec {} bake --set 'size=(16385,16385)' --set 'terrain=Flat(0.0)'",
            env!("CARGO_BIN_EXE_orogen")
        ))
        .output()
        .unwrap();
    assert_bad_input(&o, &["`size`", "16385x16385", "GiB", "ulimit -v"]);
    assert!(!dir.path().join("out").exists());
    // --max-memory sets a lower bound of one's own.
    let o = orogen(dir.path(), &["bake", "--set", SMALL, "--max-memory", "4M"]);
    assert_bad_input(&o, &["`size`", "65x65", "--max-memory"]);
    let o = orogen(dir.path(), &["bake", "--set", SMALL, "--max-memory", "4X"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    bake_ok(dir.path(), "out", &["--max-memory", "1G"]);
}

#[test]
fn huge_cells_and_tiny_n_are_refused_naming_their_field() {
    // Hardening issue #11: `cell_size=1e38` blamed `noise.octaves`, and n = 0.0001 passed
    // validation and then failed in the solver with advice to lower dt or k.
    let dir = tempfile::tempdir().unwrap();
    let o = orogen(dir.path(), &["bake", "--set", "cell_size=1e38"]);
    assert_bad_input(&o, &["`cell_size`", "at most 100000 m"]);
    let o = orogen(
        dir.path(),
        &["bake", "--set", SMALL, "--set", "stages[0].n=0.0001"],
    );
    assert_bad_input(&o, &["stages[0].StreamPower.n", "0.1"]);
    bake_ok(dir.path(), "out", &["--set", "stages[0].n=0.1"]);
}

#[test]
fn set_takes_ron_enum_values_options_and_named_structs() {
    // Hardening issue #11: these are docs/export.md's examples of `--set` with RON values.
    let tmp = tempfile::tempdir().unwrap();
    let out = bake_ok(
        tmp.path(),
        "out",
        &[
            "--set",
            "uplift=Constant(0.001)",
            "--set",
            "stages[0].lakes=Fill(epsilon: 0.1)",
            "--set",
            "stages[0].tolerance=0.5",
            "--set",
            "stages[0].tolerance=None",
            "--set",
            "stages[0].iterations=2",
            "--set",
            "terrain.faults=(count: 3, offset: 5.0)",
        ],
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bake.json")).unwrap()).unwrap();
    let recipe = &json["recipe"];
    assert_eq!(recipe["uplift"], serde_json::json!({ "Constant": 0.001 }));
    let stage = &recipe["stages"][0]["StreamPower"];
    assert_eq!(
        stage["lakes"],
        serde_json::json!({ "Fill": { "epsilon": 0.1 } })
    );
    assert_eq!(stage["tolerance"], serde_json::Value::Null);
    assert_eq!(stage["iterations"], 2);
    assert_eq!(recipe["terrain"]["Noise"]["faults"]["count"], 3);
}

#[test]
fn a_tuple_for_a_struct_is_refused_naming_the_field() {
    // Hardening issue #11: `(129,129)` used to set the faults' count and offset by position.
    let tmp = tempfile::tempdir().unwrap();
    let o = orogen(
        tmp.path(),
        &["bake", "--out", "o", "--set", "terrain.faults=(129,129)"],
    );
    assert_bad_input(&o, &["`terrain.faults`", "named fields", "(count: 129, …)"]);
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn huge_names_give_a_short_error_line() {
    // Hardening issue #11: a 10 MB identifier gave a 10 MB error line.
    let tmp = tempfile::tempdir().unwrap();
    let huge = "x".repeat(10 << 20);
    let base = "size: (65, 65), cell_size: 1.0, seed: 1";
    let recipes = [
        (
            "field.ron",
            format!("({base}, terrain: Flat(0.0), {huge}: 1)"),
        ),
        ("variant.ron", format!("({base}, terrain: {huge}(0.0))")),
        (
            "value.ron",
            format!("({base}, terrain: Flat(0.0), seed: {huge})"),
        ),
        (
            "path.ron",
            format!("({base}, terrain: Heightmap(path: \"{huge}.png\"))"),
        ),
    ];
    for (name, text) in &recipes {
        std::fs::write(tmp.path().join(name), text).unwrap();
        let o = orogen(tmp.path(), &["bake", name, "--out", "o"]);
        assert_ne!(o.status.code(), Some(0), "{name}");
        let err = stderr(&o);
        // A few hundred bytes, not the 10 MB name: field.ron's line lists the recipe's
        // top-level fields (309 bytes with `device`, issue #42; 299 before it).
        assert!(
            err.len() < 400,
            "{name}: {} bytes: {}",
            err.len(),
            err.chars().take(400).collect::<String>()
        );
        // The value is not quoted (the message says what was expected instead).
        match *name {
            "value.ron" => {}
            // The path as resolved against the recipe's folder.
            "path.ron" => assert!(err.contains(" bytes)"), "{name}: {err}"),
            _ => assert!(
                err.contains(&format!("({} bytes)", 10 << 20)),
                "{name}: {err}"
            ),
        }
    }
    // A command-line argument is at most 128 KiB on Linux.
    let long = "y".repeat(100_000);
    for set in [format!("{long}=1"), format!("seed={long}")] {
        let o = orogen(tmp.path(), &["bake", "--out", "o", "--set", &set]);
        let err = stderr(&o);
        assert_bad_input(&o, &["(100000 bytes)"]);
        // The unknown field's message lists the recipe's fifteen fields (359 bytes with
        // `uplift_fade_ragged`; 337 before it).
        assert!(
            err.len() < 380,
            "{} bytes: {}",
            err.len(),
            err.chars().take(400).collect::<String>()
        );
    }
}

#[test]
fn non_square_cells_bake_from_set_and_bad_pairs_exit_2_naming_cell_size() {
    // Issue #11, real DEMs: a 3″ geographic grid has 74.6 m × 92.5 m cells.
    let dir = tempfile::tempdir().unwrap();
    let out = bake_ok(dir.path(), "out", &["--set", "cell_size=(74.6,92.5)"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bake.json")).unwrap()).unwrap();
    let f32_of = |key: &str| json[key].as_f64().map(|v| v as f32);
    assert_eq!(f32_of("cell_size"), Some(74.6), "{json}");
    assert_eq!(f32_of("cell_size_y"), Some(92.5), "{json}");
    let h = orogen_core::io::exr::read_exr(&out.join("height.exr")).unwrap();
    assert_eq!((h.grid.dx(), h.grid.dy()), (74.6, 92.5));
    // `orogen info` shows both sides.
    let o = orogen(dir.path(), &["info", "out/height.exr"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("cell size: 74.6 x 92.5 m"), "{text}");
    for bad in ["(-1.0,92.5)", "(74.6,0)", "(NaN,92.5)", "(0.0,0.0)"] {
        let o = orogen(
            dir.path(),
            &["bake", "--set", SMALL, "--set", &format!("cell_size={bad}")],
        );
        assert_bad_input(&o, &["cell_size"]);
    }
}

/// Reads a one-channel f32 EXR's samples with the core reader.
fn exr_samples(path: &Path) -> (usize, usize, Vec<u32>) {
    let map = orogen_core::io::exr::read_exr(path).unwrap();
    (
        map.width(),
        map.height(),
        map.data.iter().map(|v| v.to_bits()).collect(),
    )
}

#[test]
fn bake_targets_for_terrain3d_and_hterrain_hold_the_same_heights() {
    let tmp = tempfile::tempdir().unwrap();
    let maps = bake_ok(tmp.path(), "maps", &[]);
    let (w, h, heights) = exr_samples(&maps.join("height.exr"));
    assert_eq!((w, h), (65, 65));

    let t3d = bake_ok(
        tmp.path(),
        "t3d",
        &["--target", "terrain3d", "--region-size", "64"],
    );
    let names = files_of(&t3d);
    for f in [
        "README.txt",
        "bake.json",
        "export.json",
        "height_1_1.exr",
        "control_1_1.exr",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} missing: {names:?}");
    }
    assert_eq!(names.iter().filter(|n| n.starts_with("height_")).count(), 4);
    for (tx, tz) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let (tw, th, tile) = exr_samples(&t3d.join(format!("height_{tx}_{tz}.exr")));
        assert_eq!((tw, th), (64, 64));
        for j in 0..64 {
            for i in 0..64 {
                let (x, y) = ((tx * 64 + i).min(64), (tz * 64 + j).min(64));
                assert_eq!(tile[j * 64 + i], heights[y * 65 + x]);
            }
        }
    }

    let ht = bake_ok(tmp.path(), "ht", &["--target", "hterrain"]);
    let (n, _, hh) = exr_samples(&ht.join("height.exr"));
    assert_eq!(n, 65);
    assert_eq!(hh, heights);
    let readme = std::fs::read_to_string(ht.join("README.txt")).unwrap();
    assert!(readme.contains("Import maps"), "{readme}");
}

#[test]
fn bad_region_sizes_and_targets_are_refused_naming_the_value() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["63", "100", "4096", "0"] {
        let o = orogen(
            tmp.path(),
            &[
                "bake",
                "--out",
                "o",
                "--set",
                SMALL,
                "--target",
                "terrain3d",
                "--region-size",
                bad,
            ],
        );
        assert_bad_input(&o, &["region-size", bad]);
    }
    let o = orogen(
        tmp.path(),
        &[
            "bake",
            "--out",
            "o",
            "--set",
            SMALL,
            "--target",
            "hterrain",
            "--region-size",
            "64",
        ],
    );
    assert_bad_input(&o, &["--region-size", "terrain3d"]);
    let o = orogen(tmp.path(), &["bake", "--out", "o", "--target", "unity"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unity"), "{}", stderr(&o));
    // Too many regions for Terrain3D, and too big for HTerrain: refused before the run.
    let o = orogen(
        tmp.path(),
        &[
            "bake",
            "--out",
            "o",
            "--set",
            "size=(4097,4097)",
            "--target",
            "terrain3d",
            "--region-size",
            "64",
        ],
    );
    assert_bad_input(&o, &["region-size", "256"]);
    let o = orogen(
        tmp.path(),
        &[
            "bake",
            "--out",
            "o",
            "--set",
            "size=(4100,300)",
            "--target",
            "hterrain",
        ],
    );
    assert_bad_input(&o, &["size", "4097"]);
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn fuzz_findings_39_fail_before_writing_and_keep_the_earlier_bake() {
    // Issue #39's fuzz findings 2, 3 and 7 through the CLI: a map that would overflow is
    // refused before the run, naming the recipe field, and the earlier bake and the user's
    // files stay; a heightmap's own size counts against --max-memory; `Fill()` is taken.
    let dir = tempfile::tempdir().unwrap();
    let out = bake_ok(dir.path(), "out", &["--set", "stages=[]"]);
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let before = std::fs::read(out.join("height.exr")).unwrap();
    let keeps = |o: &Output, needles: &[&str]| {
        assert_bad_input(o, needles);
        assert_eq!(std::fs::read(out.join("height.exr")).unwrap(), before);
        assert_eq!(
            std::fs::read_to_string(out.join("notes.txt")).unwrap(),
            "mine"
        );
        assert_eq!(files_of(dir.path()), ["dem", "out"]);
    };
    bake_ok(
        dir.path(),
        "dem",
        &["--set", "size=(257,257)", "--set", "stages=[]"],
    );
    let o = orogen(
        dir.path(),
        &[
            "bake",
            "graph",
            "--out",
            "out",
            "--set",
            SMALL,
            "--set",
            "domain.surface=Primitives(detail_wavelength: 1e-30)",
        ],
    );
    keeps(
        &o,
        &["domain.Graph.surface.Primitives.detail_wavelength", "1e-30"],
    );
    let o = orogen(
        dir.path(),
        &[
            "bake",
            "strata",
            "--out",
            "out",
            "--set",
            SMALL,
            "--set",
            "strata.layers[1].thickness=Constant(1e38)",
            "--set",
            "strata.repeat=10",
        ],
    );
    keeps(&o, &["strata.layers[1].thickness", "1e38"]);
    // The recipe says 65x65, the file brings 257x257 (the estimate took the recipe's).
    let o = orogen(
        dir.path(),
        &[
            "bake",
            "--out",
            "out",
            "--set",
            SMALL,
            "--set",
            "terrain=Heightmap(path: \"dem/height.png\")",
            "--max-memory",
            "70M",
        ],
    );
    keeps(&o, &["terrain.Heightmap.path", "257x257", "--max-memory"]);
    let o = orogen(
        dir.path(),
        &[
            "bake",
            "--out",
            "out",
            "--set",
            SMALL,
            "--set",
            "stages=[StreamPower(iterations: 2, lakes: Fill())]",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let json = std::fs::read_to_string(out.join("bake.json")).unwrap();
    assert!(json.contains("\"Fill\""), "{json}");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
}

/// `orogen --version` prints the workspace's version (`[workspace.package]` in the root
/// `Cargo.toml`), the one `scripts/package.sh` names the packages after.
#[test]
fn version_is_the_workspaces() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let manifest = std::fs::read_to_string(manifest).unwrap();
    let table = manifest
        .split("[workspace.package]")
        .nth(1)
        .expect("the root Cargo.toml has a [workspace.package] table");
    let version = table
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.trim().strip_prefix("version = "))
        .expect("[workspace.package] has a version")
        .trim_matches('"');
    let tmp = tempfile::tempdir().unwrap();
    let o = orogen(tmp.path(), &["--version"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(printed.trim_end(), format!("orogen {version}"));
}

/// tests/mpi/tiled.ron: a 97×83 recipe whose stages all tile (StreamPower with lakes:
/// None, then Thermal).
fn tiled_recipe() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mpi/tiled.ron")
}

/// bake.json without what differs between runs of one bake: timings, where each stage ran
/// (the tiling) and the bytes the tiles exchanged.
fn bake_json_without_timings(dir: &Path) -> serde_json::Value {
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("bake.json")).unwrap()).unwrap();
    let o = json.as_object_mut().unwrap();
    o.remove("total_seconds");
    for stage in o["stages"].as_array_mut().unwrap() {
        let s = stage.as_object_mut().unwrap();
        s.remove("seconds");
        s.remove("device");
        if let Some(f) = s.get_mut("figures").and_then(|f| f.as_object_mut()) {
            f.retain(|k, _| !k.starts_with("tiles_"));
            if f.is_empty() {
                s.remove("figures");
            }
        }
    }
    json
}

/// Bakes `args` (a recipe and its `--set`s) whole and tiled 2×2 and 3×3 over threads with
/// `--merge` in `dir`, and asserts every tiled folder holds the whole bake's files with the
/// same bytes (bake.json without its timings). Returns the tiled bakes' bake.json.
fn assert_tiled_bakes_equal_the_whole(
    dir: &Path,
    case: &str,
    args: &[&str],
) -> Vec<serde_json::Value> {
    let bake = |out: &str, extra: &[&str]| {
        let mut v = vec!["bake", "--out", out, "-q"];
        v.extend_from_slice(args);
        v.extend_from_slice(extra);
        let o = orogen(dir, &v);
        assert!(o.status.success(), "{case} {extra:?}: {}", stderr(&o));
        dir.join(out)
    };
    let whole = bake(&format!("{case}-whole"), &[]);
    let names = files_of(&whole);
    assert!(names.contains(&"drainage.exr".to_string()), "{names:?}");
    let mut jsons = Vec::new();
    for tiles in ["2x2", "3x3"] {
        let dir = bake(
            &format!("{case}-tiles-{tiles}"),
            &["--tiles", tiles, "--merge"],
        );
        assert_eq!(files_of(&dir), names, "{case} --tiles {tiles}");
        for name in names.iter().filter(|n| *n != "bake.json") {
            let (a, b) = (
                std::fs::read(whole.join(name)).unwrap(),
                std::fs::read(dir.join(name)).unwrap(),
            );
            assert!(
                a == b,
                "{case} --tiles {tiles}: {name} differs from the whole map's"
            );
        }
        assert_eq!(
            bake_json_without_timings(&dir),
            bake_json_without_timings(&whole),
            "{case} --tiles {tiles}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("bake.json")).unwrap()).unwrap();
        let sp = &json["stages"][1];
        assert_eq!(
            sp["device"],
            format!(
                "cpu, tiles {tiles} over threads ({} ranks)",
                if tiles == "2x2" { 4 } else { 9 }
            )
        );
        assert!(sp["figures"]["tiles_bytes_per_step"].as_f64().unwrap() > 0.0);
        jsons.push(json);
    }
    jsons
}

#[test]
fn tiled_bakes_over_threads_write_the_whole_map_bakes_bytes() {
    // Test profile: about 4 s for the twelve bakes. Lakes carved and filled and n = 2 cross
    // the tiles too (orogen_core::tiles: Barnes 2016's basin graph, the exact chain).
    let tmp = tempfile::tempdir().unwrap();
    let recipe = tiled_recipe();
    let recipe = recipe.to_str().unwrap();
    // CoarseToFine: the coarse levels run whole at rank 0, the finest level tiled.
    let coarse = "stages[0].schedule=CoarseToFine(levels: 2)";
    let coarse3 = "stages[0].schedule=CoarseToFine(levels: 3, refine: 0.2)";
    for (case, sets) in [
        ("plain", &[][..]),
        ("carve", &["stages[0].lakes=Carve"][..]),
        ("fill", &["stages[0].lakes=Fill()"][..]),
        ("n2", &["stages[0].n=2.0"][..]),
        ("coarse", &[coarse][..]),
        ("coarse3", &[coarse3, "stages[0].lakes=Carve"][..]),
        // Stops early (80 m: within the 30 steps; 50 m would run them all).
        ("tolerance", &["stages[0].tolerance=Some(80.0)"][..]),
        (
            "coarse-tol",
            &[coarse, "stages[0].tolerance=Some(80.0)"][..],
        ),
    ] {
        let mut args = vec![recipe];
        for set in sets {
            args.extend(["--set", set]);
        }
        assert_tiled_bakes_equal_the_whole(tmp.path(), case, &args);
    }
}

#[test]
fn tiled_hydraulic_bakes_write_the_whole_map_bakes_bytes() {
    // Issue #41: tests/mpi/hydraulic.ron (the pipe model with rain drops, a source across
    // tile edges, open borders and a second stage carrying the water) tiled 2x2 and 3x3:
    // heights, erosion, water depth, sediment, velocity and bake.json's lost water and
    // sediment are the whole bake's bytes.
    let tmp = tempfile::tempdir().unwrap();
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mpi/hydraulic.ron");
    let jsons =
        assert_tiled_bakes_equal_the_whole(tmp.path(), "pipes", &[recipe.to_str().unwrap()]);
    let whole: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("pipes-whole/bake.json")).unwrap(),
    )
    .unwrap();
    let lost = &whole["stages"][2]["figures"];
    assert!(
        lost["hydraulic_water_lost_m3"].as_f64().unwrap() > 0.0,
        "{lost}"
    );
    assert!(
        lost["hydraulic_sediment_lost_m3"].as_f64().unwrap() > 0.0,
        "{lost}"
    );
    for json in jsons {
        assert_eq!(
            json["stages"][2]["figures"]["hydraulic_water_lost_m3"],
            lost["hydraulic_water_lost_m3"]
        );
    }
    for name in ["water_depth.exr", "sediment.exr", "velocity.exr"] {
        assert!(tmp.path().join("pipes-whole").join(name).exists(), "{name}");
    }
}

#[test]
fn the_default_recipe_bakes_tiled_to_the_whole_maps_bytes() {
    // Issue #41: `orogen recipe default` (StreamPower, Thermal, Hydrology with its river
    // curves), at 97×83: its Hydrology maps are made per tile and gathered by rank 0, which
    // draws the river curves.
    let tmp = tempfile::tempdir().unwrap();
    let jsons =
        assert_tiled_bakes_equal_the_whole(tmp.path(), "default", &["--set", "size=(97,83)"]);
    for json in jsons {
        let stages = json["stages"].as_array().unwrap();
        assert_eq!(stages[3]["stage"], "Hydrology", "{stages:?}");
        let device = stages[3]["device"].as_str().unwrap();
        assert!(device.starts_with("cpu, tiles "), "{device}");
    }
    // Rain on the Hydrology stage (a noise map, made per tile at the tiles' positions with
    // the whole map's range) and a water-surface slope over filled lakes.
    let rain = "stages[2].precipitation=Some(Noise(noise: (kind: Fbm, octaves: 3, wavelength: \
                5000.0), min: 0.5, max: 2.0))";
    let args = [
        "--set",
        "size=(97,83)",
        "--set",
        rain,
        "--set",
        "stages[2].lakes=Fill(epsilon: 0.01)",
        "--set",
        "stages[2].epsilon=0.002",
    ];
    assert_tiled_bakes_equal_the_whole(tmp.path(), "rain", &args);
    // Rivers to compare: some cells are rivers, most are not.
    let rivers =
        orogen_core::io::read_gray_image(&tmp.path().join("default-whole/rivers.png")).unwrap();
    let wet = rivers.data.iter().filter(|&&v| v > 0.5).count();
    assert!(wet > 0 && wet < rivers.data.len() / 2, "{wet} river cells");
}

#[test]
fn a_heightmap_terrain_bakes_tiled_to_the_whole_maps_bytes() {
    // Issue #41: a Heightmap terrain is read whole by every rank and cut to its tile: the
    // tiled bakes (2x2 and 3x3, --merge) write the whole bake's bytes. One of another size
    // than the grid (the whole bake resamples it) is refused, naming the field.
    let tmp = tempfile::tempdir().unwrap();
    let recipe = tiled_recipe();
    let recipe = recipe.to_str().unwrap();
    let o = orogen(tmp.path(), &["bake", recipe, "--out", "source", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dem = tmp.path().join("source/height.exr");
    let terrain = format!(
        "terrain=Heightmap(path: \"{}\", height_range: (0.0, 400.0))",
        dem.display()
    );
    assert_tiled_bakes_equal_the_whole(tmp.path(), "dem", &[recipe, "--set", &terrain]);
    let other = [recipe, "--set", &terrain, "--set", "size=(71,64)"];
    let bake = ["bake", "--out", "o", "--tiles", "2x2", "--merge"];
    let o = orogen(tmp.path(), &[&bake[..], &other].concat());
    assert_bad_input(&o, &["`terrain.Heightmap`", "97x83", "71x64"]);
}

/// The whole map from a tiled bake's tiles of `map` (`{map}_rR_cC.exr`, placed by
/// bake.json's `tiles`).
fn assemble_tiles(dir: &Path, map: &str) -> Vec<f32> {
    assemble_tiles_of(dir, map, "exr", |p| {
        orogen_core::io::exr::read_exr(p).unwrap()
    })
}

/// [`assemble_tiles`] of `{map}_rR_cC.{ext}`, each tile read by `read`.
fn assemble_tiles_of(
    dir: &Path,
    map: &str,
    ext: &str,
    read: impl Fn(&Path) -> orogen_core::field::ScalarMap,
) -> Vec<f32> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("bake.json")).unwrap()).unwrap();
    let (w, h) = (
        json["size"][0].as_u64().unwrap() as usize,
        json["size"][1].as_u64().unwrap() as usize,
    );
    let mut out = vec![f32::NAN; w * h];
    for t in json["tiles"]["tiles"].as_array().unwrap() {
        let at = |k: &str| t[k].as_u64().unwrap() as usize;
        let (row, col) = (at("row"), at("col"));
        let file = format!("{map}_r{row}_c{col}.{ext}");
        assert!(
            t["files"].as_array().unwrap().iter().any(|f| f == &file),
            "{file} not listed: {t}"
        );
        let tile = read(&dir.join(&file));
        assert_eq!(
            (tile.grid.width, tile.grid.height),
            (at("width"), at("height"))
        );
        for (y, r) in tile.data.chunks_exact(at("width")).enumerate() {
            let start = (at("y0") + y) * w + at("x0");
            out[start..start + r.len()].copy_from_slice(r);
        }
    }
    out
}

#[test]
fn a_tiled_bake_without_merge_writes_tiles_that_assemble_to_the_whole_maps() {
    // Issue #41: no rank holds a whole map; each writes its tiles. Their values, put
    // together, are the whole bake's heights and erosion bit for bit, for 2x2 and 3x3
    // tiles; a later bake into the folder drops the tiles with the earlier bake.
    let tmp = tempfile::tempdir().unwrap();
    let recipe = tiled_recipe();
    let recipe = recipe.to_str().unwrap();
    let bake = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "bake",
            recipe,
            "--out",
            out,
            "-q",
            "--set",
            "stages[0].hydrology=false",
        ];
        args.extend_from_slice(extra);
        let o = orogen(tmp.path(), &args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        tmp.path().join(out)
    };
    let whole = bake("whole", &[]);
    let read = |m: &str| orogen_core::io::exr::read_exr(&whole.join(m)).unwrap().data;
    let (height, erosion) = (read("height.exr"), read("erosion.exr"));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (tiles, count) in [("2x2", 4), ("3x3", 9)] {
        let dir = bake(&format!("tiles-{tiles}"), &["--tiles", tiles]);
        let mut names = files_of(&dir);
        names.retain(|n| n != "bake.json");
        assert_eq!(names.len(), 2 * count, "{names:?}");
        assert_eq!(
            bits(&assemble_tiles(&dir, "height")),
            bits(&height),
            "{tiles}"
        );
        assert_eq!(
            bits(&assemble_tiles(&dir, "erosion")),
            bits(&erosion),
            "{tiles}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("bake.json")).unwrap()).unwrap();
        let (lo, hi) = (
            json["height_min"].as_f64().unwrap() as f32,
            json["height_max"].as_f64().unwrap() as f32,
        );
        let want = orogen_core::field::finite_min_max(&height);
        assert_eq!((lo, hi), want, "{tiles}");
    }
    // Without --merge the memory check is of the tiles the process holds (over threads,
    // all of them, with their halos), naming `--tiles`; with --merge the whole map's.
    let small = ["--tiles", "2x2", "--max-memory", "100000"];
    let mut args = vec!["bake", recipe, "--out", "small", "-q"];
    args.extend_from_slice(&["--set", "stages[0].hydrology=false"]);
    args.extend_from_slice(&small);
    let o = orogen(tmp.path(), &args);
    assert_bad_input(&o, &["`--tiles`", "4 tiles on threads of one process hold"]);
    args.push("--merge");
    assert_bad_input(&orogen(tmp.path(), &args), &["`size`"]);
    // The same folder baked again with --merge: the whole maps, no tile left over.
    let dir = bake("tiles-2x2", &["--tiles", "2x2", "--merge"]);
    assert_eq!(files_of(&dir), files_of(&whole));
}

#[test]
fn a_tiled_bake_without_merge_writes_the_hydrology_maps_per_tile() {
    // Issue #41: the default recipe (its Hydrology stage; the river curves, drawn over the
    // whole map, turned off) tiles without --merge: each rank routes its own tile (lakes
    // carved across tiles). The tiles of drainage, water surface and lake depth (EXR) and of
    // rivers and basins (PNG, as the whole map's) put together are the whole bake's, bit
    // for bit and pixel for pixel.
    let tmp = tempfile::tempdir().unwrap();
    let bake = |out: &str, extra: &[&str]| {
        let mut args = vec!["bake", "--out", out, "-q", "--set", "size=(97,83)"];
        args.extend_from_slice(&["--set", "river_curves=None"]);
        args.extend_from_slice(extra);
        let o = orogen(tmp.path(), &args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        tmp.path().join(out)
    };
    let whole = bake("whole", &[]);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let gray = |p: &Path| orogen_core::io::read_gray_image(p).unwrap();
    // An RGB PNG's pixels as 0xRRGGBB (exact in f32).
    let rgb = |p: &Path| {
        let img = image::open(p).unwrap().to_rgb8();
        let grid = orogen_core::Grid::new(img.width() as usize, img.height() as usize, 1.0);
        let data = img.pixels().map(|q| {
            let [r, g, b] = q.0;
            (u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b)) as f32
        });
        orogen_core::field::ScalarMap {
            grid: grid.unwrap(),
            data: data.collect(),
        }
    };
    let rivers = gray(&whole.join("rivers.png")).data;
    let wet = rivers.iter().filter(|&&v| v > 0.5).count();
    assert!(wet > 50 && wet < rivers.len() / 2, "{wet} river cells");
    let depth = orogen_core::io::exr::read_exr(&whole.join("lake_depth.exr")).unwrap();
    let lakes = depth.data.iter().filter(|&&d| d > 0.0).count();
    assert!(lakes > 0, "no lake cell to compare");
    for tiles in ["2x2", "3x1"] {
        let dir = bake(&format!("tiles-{tiles}"), &["--tiles", tiles]);
        for map in ["height", "drainage", "water_surface", "lake_depth"] {
            let want = orogen_core::io::exr::read_exr(&whole.join(format!("{map}.exr"))).unwrap();
            let got = assemble_tiles(&dir, map);
            assert!(bits(&got) == bits(&want.data), "{tiles}: {map}");
        }
        let want = gray(&whole.join("rivers.png")).data;
        let got = assemble_tiles_of(&dir, "rivers", "png", gray);
        assert!(bits(&got) == bits(&want), "{tiles}: rivers");
        let want = rgb(&whole.join("basins.png")).data;
        let got = assemble_tiles_of(&dir, "basins", "png", rgb);
        assert!(bits(&got) == bits(&want), "{tiles}: basins");
    }
}

#[test]
fn a_tiled_bake_without_merge_draws_and_carves_the_river_curves() {
    // Issue #41: the default recipe's river curves without --merge: each rank sends rank 0
    // its river cells only, rank 0 traces the curves (rivers.json, the whole bake's bytes)
    // and sends each tile the curves that reach it, which it carves. The tiles of the
    // carved heights put together are the whole bake's, bit for bit, 2x2 and 3x3.
    let tmp = tempfile::tempdir().unwrap();
    let bake = |out: &str, extra: &[&str]| {
        let mut args = vec!["bake", "--out", out, "-q", "--set", "size=(97,83)"];
        args.extend_from_slice(extra);
        let o = orogen(tmp.path(), &args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        tmp.path().join(out)
    };
    let whole = bake("whole", &[]);
    let read = |dir: &Path, m: &str| {
        orogen_core::io::exr::read_exr(&dir.join(format!("{m}.exr")))
            .unwrap()
            .data
    };
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // The carve changes the heights: comparing them tests it.
    let flat = bake("no-carve", &["--set", "river_curves=Some((carve: false))"]);
    let carved = bits(&read(&whole, "height"))
        .iter()
        .zip(bits(&read(&flat, "height")))
        .filter(|(a, b)| **a != *b)
        .count();
    assert!(carved > 50, "{carved} cells carved");
    let curves = std::fs::read(whole.join("rivers.json")).unwrap();
    for tiles in ["2x2", "3x3"] {
        let dir = bake(&format!("tiles-{tiles}"), &["--tiles", tiles]);
        for map in ["height", "drainage", "water_surface", "lake_depth"] {
            let got = assemble_tiles(&dir, map);
            assert!(bits(&got) == bits(&read(&whole, map)), "{tiles}: {map}");
        }
        assert_eq!(
            std::fs::read(dir.join("rivers.json")).unwrap(),
            curves,
            "{tiles}: rivers.json"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("bake.json")).unwrap()).unwrap();
        assert_eq!(json["rivers"], "rivers.json", "{tiles}");
        let last = json["stages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["stage"], "river curves", "{tiles}");
        let cells = last["figures"]["tiles_river_cell_bytes"].as_f64().unwrap();
        // 16 B per river cell: a few per cent of the 97×83 cells.
        assert!(cells > 0.0 && cells < 0.2 * 16.0 * 97.0 * 83.0, "{cells}");
    }
    // A later bake into the folder drops rivers.json with the tiles (bake.json names it).
    let dir = bake(
        "tiles-2x2",
        &["--tiles", "2x2", "--set", "river_curves=None"],
    );
    assert!(!dir.join("rivers.json").exists());
}

#[test]
fn tiled_bakes_refuse_a_bad_tiling_or_a_stage_that_does_not_tile() {
    let tmp = tempfile::tempdir().unwrap();
    let recipe = tiled_recipe();
    let recipe = recipe.to_str().unwrap();
    let bake = |extra: &[&str]| {
        let mut args = vec!["bake", recipe, "--out", "out", "-q"];
        args.extend_from_slice(extra);
        orogen(tmp.path(), &args)
    };
    for (tiles, needle) in [
        ("0x2", "tiles.x: 0 tiles across 97 cells"),
        ("2", "`2` is not COLUMNSxROWS"),
        ("axb", "is not COLUMNSxROWS"),
        ("2x50", "tiles.y: 50 tiles across 83 cells"),
    ] {
        assert_bad_input(&bake(&["--tiles", tiles]), &["--tiles", needle]);
    }
    let strata = "strata=(layers: [(material: \"shale\", thickness: Constant(1.0))])";
    let refusals = [
        (
            // As the whole-map stage refuses it.
            &[strata, "stages[0].schedule=CoarseToFine(levels: 2)"][..],
            "`stages[0].StreamPower.schedule`: CoarseToFine needs a terrain without strata",
        ),
        (
            &["stages=[Wind()]"][..],
            "`stages[0].Wind`: this stage is not tiled yet",
        ),
    ];
    for (sets, needle) in refusals {
        let mut args = vec!["--tiles", "2x2", "--merge"];
        for set in sets {
            args.extend(["--set", set]);
        }
        assert_bad_input(&bake(&args), &[needle]);
    }
    // A closed map's outlet is a whole-map choice.
    assert_bad_input(
        &bake(&[
            "--tiles",
            "2x2",
            "--merge",
            "--set",
            "stages=[Hydrology(outlets: (borders: []))]",
        ]),
        &["`stages[0].Hydrology.outlets.borders`"],
    );
    // Without --merge, what needs a whole map at rank 0 is refused, naming its field.
    // HTerrain's maps are whole-map files (Terrain3D's regions are written per rank).
    let hterrain = [
        "--tiles",
        "2x2",
        "--set",
        "stages[0].hydrology=false",
        "--target",
        "hterrain",
    ];
    assert_bad_input(&bake(&hterrain), &["--target", "--merge"]);
    assert!(
        !tmp.path().join("out").exists(),
        "a refused bake writes nothing"
    );
}

/// The stream-power stage whose `dt` the stability check judges: `k` and precipitation
/// near the f32 limit, m = 5, n = 10 (the term `k·(N·A·P)^m·dt·(R/link)^n` is about
/// 1e296·dt on 33² cells of 1 m).
fn overflowing_stream_power(dt: &str) -> String {
    format!(
        "stages=[StreamPower(iterations: 2, dt: {dt}, m: 5.0, n: 10.0, k: Constant(3e38), \
         precipitation: Constant(3e38))]"
    )
}

#[test]
fn tiled_bakes_refuse_what_the_whole_map_refuses_with_the_same_error() {
    // Issue #41: the whole-map stages' run-time checks run on the tiles through the same
    // functions: a recipe the whole map refuses is refused tiled (2x2 over threads), with
    // the same exit code and error line, and what it accepts, the tiles accept.
    let tmp = tempfile::tempdir().unwrap();
    let run = |sets: &[&str], extra: &[&str]| {
        let mut args = vec!["bake", "--out", "out", "-q", "--set", "size=(33,33)"];
        args.extend(["--set", "cell_size=1.0", "--set", "river_curves=None"]);
        for set in sets {
            args.extend(["--set", set]);
        }
        args.extend_from_slice(extra);
        orogen(tmp.path(), &args)
    };
    let tiled = ["--tiles", "2x2", "--merge"];
    let too_large = overflowing_stream_power("1e9");
    // 1.1e299 over plain ground: under the limit; ten times that over strata.
    let under = overflowing_stream_power("1000.0");
    let soft = "materials=[(name: \"soft\", erodibility: 10.0)]";
    let strata = "strata=(layers: [(material: \"soft\", thickness: Constant(5.0))])";
    let refused: [(&[&str], &str); 4] = [
        // StreamPower's stability check over plain ground.
        (
            &[&too_large],
            "`stages[0].StreamPower.dt`: k·A^m·dt/dist^n reaches",
        ),
        // The same dt accepted over plain ground (below) but refused over strata, where
        // `k` is scaled by the largest material factor.
        (
            &[&under, soft, strata],
            "`stages[0].StreamPower.dt`: k·A^m·dt/dist^n reaches",
        ),
        // The pipe model's stability limit and its sources on the map, checked before
        // any work (an earlier stage's steps are not run).
        (
            &["stages=[Thermal(iterations: 1), Hydraulic(dt: 50.0)]"],
            "`stages[1].Hydraulic.dt`: must be below the pipe model's stability limit",
        ),
        (
            &[
                "stages=[Hydraulic(sources: [(x_m: -1e6, y_m: 0.0, radius_m: 10.0, \
               rate_m3_per_s: 1.0, every_step: true)])]",
            ],
            "`stages[0].Hydraulic.sources[0]`: centre",
        ),
    ];
    for (sets, needle) in refused {
        let whole = run(sets, &[]);
        assert_bad_input(&whole, &[needle]);
        let tiles = run(sets, &tiled);
        assert_bad_input(&tiles, &[needle]);
        assert_eq!(stderr(&tiles), stderr(&whole), "{sets:?}");
    }
    let out = tmp.path().join("out");
    assert!(
        !out.exists() || files_of(&out).is_empty(),
        "a refused bake writes nothing"
    );
    // A dt of 1e9 years with the default `k`: far under the limit, both run.
    for extra in [&[][..], &tiled[..]] {
        let o = run(&["stages=[StreamPower(iterations: 2, dt: 1e9)]"], extra);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        std::fs::remove_dir_all(tmp.path().join("out")).unwrap();
    }
}

#[test]
fn a_tiled_bake_without_merge_writes_the_terrain3d_regions_of_the_whole_export() {
    // Issue #41: without --merge each Terrain3D region is written by one rank from the
    // cells of its window (the region and the ground weights' ring) sent by their owners.
    // Region size 64 does not divide the tiles, so regions straddle tile edges (and the
    // world's edge, padded). Every file but bake.json is the whole bake's and the --merge
    // bake's byte for byte: the default recipe (hydrology, river curves) and a layered one
    // (surface colour, sediment depth).
    let tmp = tempfile::tempdir().unwrap();
    let layered = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mpi/layered.ron");
    let layered = layered.to_str().unwrap();
    let cases: [(&str, Vec<&str>); 2] = [
        ("default", vec!["--set", "size=(97,83)"]),
        ("layered", vec![layered]),
    ];
    for (case, recipe) in cases {
        let bake = |out: &str, extra: &[&str]| {
            let mut args = vec!["bake", "--out", out, "-q"];
            args.extend_from_slice(&recipe);
            args.extend_from_slice(&["--target", "terrain3d", "--region-size", "64"]);
            args.extend_from_slice(extra);
            let o = orogen(tmp.path(), &args);
            assert!(o.status.success(), "{case} {extra:?}: {}", stderr(&o));
            tmp.path().join(out)
        };
        let whole = bake(&format!("{case}-whole"), &[]);
        let names = files_of(&whole);
        assert!(names.contains(&"control_1_1.exr".to_string()), "{names:?}");
        assert_eq!(
            names.contains(&"color_1_1.png".to_string()),
            case == "layered",
            "{names:?}"
        );
        let runs: [&[&str]; 3] = [
            &["--tiles", "2x2", "--merge"],
            &["--tiles", "2x2"],
            &["--tiles", "3x3"],
        ];
        for extra in runs {
            let dir = bake(&format!("{case}-{}", extra.join("")), extra);
            assert_eq!(files_of(&dir), names, "{case} {extra:?}");
            for name in names.iter().filter(|n| *n != "bake.json") {
                assert!(
                    std::fs::read(whole.join(name)).unwrap()
                        == std::fs::read(dir.join(name)).unwrap(),
                    "{case} {extra:?}: {name} differs from the whole export's"
                );
            }
        }
    }
}

#[test]
fn a_tiled_layered_bake_without_merge_writes_the_layer_maps_per_tile() {
    // Issue #41: tests/mpi/layered.ron (with its river curves, carved into the layers per
    // tile) without --merge: every rank writes its tiles of the layer maps (layer_*.exr,
    // sediment_depth.exr, material.png, splat.png, surface_colour.png, made per cell with
    // the whole map's counts of exposed materials), which put together are the whole
    // bake's values and pixels, 2x2 and 3x3. With beds of one thickness, strata_position
    // per tile and strata_column.png (one row for the whole map, from rank 0) too.
    let tmp = tempfile::tempdir().unwrap();
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mpi/layered.ron");
    let recipe = recipe.to_str().unwrap();
    let bake = |out: &str, extra: &[&str]| {
        let mut args = vec!["bake", recipe, "--out", out, "-q"];
        args.extend_from_slice(extra);
        let o = orogen(tmp.path(), &args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        tmp.path().join(out)
    };
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // One channel of a PNG, as values (exact in f32).
    let channel = |c: usize| {
        move |p: &Path| {
            let img = image::open(p).unwrap().to_rgba16();
            let grid = orogen_core::Grid::new(img.width() as usize, img.height() as usize, 1.0);
            orogen_core::field::ScalarMap {
                grid: grid.unwrap(),
                data: img.pixels().map(|q| q.0[c] as f32).collect(),
            }
        }
    };
    let banded = "strata=(layers: [(material: \"sandstone\", thickness: Constant(4.0)), \
                  (material: \"shale\", thickness: Constant(3.0))], repeat: 4, bottom: \
                  \"granite\", dip_deg: 8.0)";
    for (case, sets) in [("noise", &[][..]), ("banded", &["--set", banded][..])] {
        let whole = bake(&format!("{case}-whole"), sets);
        let names = files_of(&whole);
        let exr: Vec<String> = names
            .iter()
            .filter_map(|n| n.strip_suffix(".exr"))
            .map(String::from)
            .collect();
        let png = ["material", "splat", "surface_colour", "rivers"];
        for want in ["layer_shale", "sediment_depth", "erosion", "height"] {
            assert!(exr.iter().any(|n| n == want), "{case}: {want} in {exr:?}");
        }
        for tiles in ["2x2", "3x3"] {
            let mut args = sets.to_vec();
            args.extend(["--tiles", tiles]);
            let dir = bake(&format!("{case}-{tiles}"), &args);
            for map in &exr {
                let want = orogen_core::io::exr::read_exr(&whole.join(format!("{map}.exr")));
                let got = assemble_tiles(&dir, map);
                assert!(
                    bits(&got) == bits(&want.unwrap().data),
                    "{case} {tiles}: {map}"
                );
            }
            for map in png {
                for c in 0..4 {
                    let want = channel(c)(&whole.join(format!("{map}.png"))).data;
                    let got = assemble_tiles_of(&dir, map, "png", channel(c));
                    assert!(
                        bits(&got) == bits(&want),
                        "{case} {tiles}: {map} channel {c}"
                    );
                }
            }
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("bake.json")).unwrap())
                    .unwrap();
            if case == "banded" {
                assert!(exr.iter().any(|n| n == "strata_position"), "{exr:?}");
                assert_eq!(
                    std::fs::read(dir.join("strata_column.png")).unwrap(),
                    std::fs::read(whole.join("strata_column.png")).unwrap(),
                    "{tiles}: strata_column.png"
                );
                assert_eq!(json["maps"], serde_json::json!(["strata_column"]));
            } else {
                assert!(!names.iter().any(|n| n.starts_with("strata_")), "{names:?}");
                assert_eq!(json["maps"], serde_json::json!([]));
            }
            assert_eq!(
                std::fs::read(dir.join("rivers.json")).unwrap(),
                std::fs::read(whole.join("rivers.json")).unwrap(),
                "{case} {tiles}: rivers.json"
            );
        }
    }
}

#[test]
fn a_tiled_hydraulic_bake_without_merge_writes_its_outputs_per_tile() {
    // Issue #41: the pipe model's outputs (water_depth, sediment; velocity a two-channel
    // EXR) are per cell: without --merge each rank writes its tiles of them, which put
    // together are the whole bake's bits (tests/mpi/hydraulic.ron, 2x2 and 3x3). An output
    // no stage makes is refused naming it, as the whole bake refuses it.
    let tmp = tempfile::tempdir().unwrap();
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mpi/hydraulic.ron");
    let recipe = recipe.to_str().unwrap();
    let bake = |out: &str, extra: &[&str]| {
        let mut args = vec!["bake", recipe, "--out", out, "-q"];
        args.extend_from_slice(extra);
        orogen(tmp.path(), &args)
    };
    let o = bake("whole", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = tmp.path().join("whole");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for tiles in ["2x2", "3x3"] {
        let o = bake(tiles, &["--tiles", tiles]);
        assert!(o.status.success(), "{}", stderr(&o));
        let dir = tmp.path().join(tiles);
        for map in ["height", "erosion", "water_depth", "sediment"] {
            let want = orogen_core::io::exr::read_exr(&whole.join(format!("{map}.exr")));
            let got = assemble_tiles(&dir, map);
            assert!(bits(&got) == bits(&want.unwrap().data), "{tiles}: {map}");
        }
        // Velocity, a two-channel EXR: its first channel (x) as read_exr reads it.
        let want = orogen_core::io::exr::read_exr(&whole.join("velocity.exr")).unwrap();
        let got = assemble_tiles(&dir, "velocity");
        assert!(bits(&got) == bits(&want.data), "{tiles}: velocity");
    }
    let o = bake("none", &["--tiles", "2x2", "--set", "stages=[Thermal()]"]);
    assert_bad_input(&o, &["outputs[1]", "water_depth", "not produced"]);
}

#[test]
fn tiled_layered_bakes_write_the_whole_map_bakes_bytes() {
    // Issue #41: tests/mpi/layered.ron (strata with a dip, a warp and a noise thickness;
    // Thermal with a Material talus, LayeredThermal, Hydrology) tiled 2x2 and 3x3 with
    // --merge: heights, erosion, drainage, the layer maps and surface colour are the whole
    // bake's bytes (without --merge: `a_tiled_layered_bake_without_merge_writes_...`).
    let tmp = tempfile::tempdir().unwrap();
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mpi/layered.ron");
    let recipe = recipe.to_str().unwrap();
    assert_tiled_bakes_equal_the_whole(tmp.path(), "layered", &[recipe]);
    let names = files_of(&tmp.path().join("layered-whole"));
    assert!(
        names.iter().filter(|n| n.contains("layer")).count() > 0,
        "the bake has layer maps: {names:?}"
    );
}

#[test]
fn tiled_bakes_that_erode_strata_write_the_whole_map_bakes_bytes() {
    // Issue #41: tests/mpi/layered_erosion.ron (StreamPower with k from the exposed
    // material, lakes carved; the pipe model dissolving down the layers; StreamPower with
    // n = 2 and lakes filled) tiled 2x2 and 3x3 with --merge: heights, erosion, water,
    // sediment, drainage, the layer maps and surface colour are the whole bake's bytes.
    let tmp = tempfile::tempdir().unwrap();
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mpi/layered_erosion.ron");
    let recipe = recipe.to_str().unwrap();
    assert_tiled_bakes_equal_the_whole(tmp.path(), "eroded", &[recipe]);
    // The erosion moved the layers: the weights of the exposed materials differ from the
    // strata's own (the same recipe without its stages but a Hydrology).
    let o = orogen(
        tmp.path(),
        &[
            "bake",
            recipe,
            "--out",
            "uneroded",
            "-q",
            "--set",
            "stages=[Hydrology()]",
            "--set",
            "outputs=[]",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let layer_maps: Vec<String> = files_of(&tmp.path().join("eroded-whole"))
        .into_iter()
        .filter(|n| n.contains("layer"))
        .collect();
    assert!(!layer_maps.is_empty(), "the bake has layer maps");
    let moved = layer_maps.iter().any(|n| {
        let read = |dir: &str| std::fs::read(tmp.path().join(dir).join(n)).unwrap();
        read("eroded-whole") != read("uneroded")
    });
    assert!(moved, "the erosion changed the layer maps {layer_maps:?}");
}
