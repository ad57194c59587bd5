//! `device: Cpu | Gpu | Auto` and `--device` (issue #42), run on whatever Vulkan adapter
//! the machine has (Mesa's lavapipe where there is no GPU, as orogen-gpu's tests):
//! StreamPower on the GPU within 1e-3 of the CPU, the same bytes twice, `bake.json`
//! saying what ran each stage, `--device cpu` giving the CPU's bytes exactly, and the
//! errors (a stage the GPU does not run, no adapter) naming what is at fault.
#![cfg(feature = "gpu")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{orogen, stderr, OROGEN};

/// Runs `orogen` in `dir` with `args`, a software adapter (lavapipe) allowed under `Auto`
/// (`OROGEN_GPU_SOFTWARE=1`), as on a machine with a GPU.
fn orogen_gpu(dir: &Path, args: &[&str]) -> Output {
    Command::new(OROGEN)
        .current_dir(dir)
        .args(args)
        .env("OROGEN_GPU_SOFTWARE", "1")
        .output()
        .expect("the orogen binary runs")
}

/// A small pit-rich grid: thermal, 20 stream-power steps with lakes carved, then a
/// `TimeLoop` of both (the heights kept on the GPU between them); `river_curves: None` so
/// the heights are the processes' own. `DEVICE` is replaced by a `device:` line or nothing.
const RECIPE: &str = "(
    size: (48, 40),
    cell_size: 100.0,
    seed: 3,
    terrain: Noise(amplitude: 50.0, wavelength: 1500.0),
    uplift: Constant(0.001),
    DEVICE
    stages: [
        Thermal(iterations: 2),
        StreamPower(iterations: 20, dt: 10000.0, k: Constant(2e-4), lakes: Carve),
        TimeLoop(iterations: 4, processes: [
            StreamPower(dt: 10000.0, k: Constant(2e-4), lakes: Carve),
            Thermal(talus: Constant(25.0)),
        ]),
    ],
    river_curves: None,
)";

/// Writes `RECIPE` with `device` (e.g. `device: Gpu,`) and `extra` replacing the stream
/// power's `lakes: Carve` (extra fields of that stage) into `dir/name`.
fn write_recipe(dir: &Path, name: &str, device: &str, extra: &str) -> PathBuf {
    let text = RECIPE
        .replace("DEVICE", device)
        .replace("lakes: Carve", &format!("lakes: Carve{extra}"));
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Bakes `recipe` into `dir/out` with `args`; asserts success.
fn bake(dir: &Path, recipe: &str, out: &str, args: &[&str]) -> PathBuf {
    let mut all = vec!["bake", recipe, "--out", out, "--quiet"];
    all.extend_from_slice(args);
    let o = orogen_gpu(dir, &all);
    assert!(o.status.success(), "bake failed: {}", stderr(&o));
    dir.join(out)
}

fn heights(out: &Path) -> Vec<f32> {
    orogen_core::io::exr::read_exr(&out.join("height.exr"))
        .unwrap()
        .data
}

fn bake_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("bake.json")).unwrap()).unwrap()
}

/// Each stage's `device` in `bake.json`, in order (the initial terrain first).
fn devices(out: &Path) -> Vec<String> {
    bake_json(out)["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["device"].as_str().unwrap().to_string())
        .collect()
}

/// Every file of a bake but `bake.json` (which holds timings), as bytes.
fn map_bytes(out: &Path) -> Vec<(String, Vec<u8>)> {
    common::files_of(out)
        .into_iter()
        .filter(|f| f != "bake.json")
        .map(|f| {
            let bytes = std::fs::read(out.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

#[test]
fn gpu_bakes_within_1e3_of_the_cpu_repeats_its_bytes_and_says_what_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_recipe(dir, "cpu.ron", "", "");
    write_recipe(dir, "gpu.ron", "device: Gpu,", "");

    let cpu = bake(dir, "cpu.ron", "cpu", &[]);
    let gpu = bake(dir, "gpu.ron", "gpu", &[]);
    let again = bake(dir, "gpu.ron", "again", &[]);
    // `--device cpu` overrides the recipe's `Gpu`: the CPU's bytes exactly.
    let flag = bake(dir, "gpu.ron", "flag", &["--device", "cpu"]);
    // `--set device=Gpu` on the CPU recipe is the Gpu recipe.
    let set = bake(dir, "cpu.ron", "set", &["--set", "device=Gpu"]);

    let c = heights(&cpu);
    let g = heights(&gpu);
    assert_eq!(c.len(), 48 * 40);
    let mut worst = 0.0f32;
    for (i, (a, b)) in g.iter().zip(&c).enumerate() {
        let rel = (a - b).abs() / b.abs().max(1.0);
        worst = worst.max(rel);
        assert!(rel <= 1e-3, "node {i}: GPU {a} m, CPU {b} m");
    }
    eprintln!("GPU against CPU: worst relative difference {worst:e}");
    // The stage did change the terrain (the comparison is not of two start heights).
    let start = {
        let o = orogen(
            dir,
            &[
                "bake",
                "cpu.ron",
                "--out",
                "start",
                "--quiet",
                "--set",
                "stages=[]",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        heights(&dir.join("start"))
    };
    let moved = start
        .iter()
        .zip(&g)
        .filter(|(a, b)| (*a - *b).abs() > 1.0)
        .count();
    assert!(moved > c.len() / 2, "only {moved} nodes moved by over 1 m");

    assert_eq!(map_bytes(&gpu), map_bytes(&again), "Gpu twice differs");
    assert_eq!(map_bytes(&gpu), map_bytes(&set), "--set device=Gpu differs");
    assert_eq!(
        map_bytes(&cpu),
        map_bytes(&flag),
        "--device cpu is not the CPU's bytes"
    );

    let json = bake_json(&gpu);
    assert_eq!(json["device"], "Gpu");
    let ran = devices(&gpu);
    assert_eq!(ran.len(), 4, "{ran:?}");
    assert_eq!(ran[0], "cpu", "initial terrain: {ran:?}");
    assert!(ran[1].starts_with("gpu: "), "Thermal: {ran:?}");
    assert!(ran[2].starts_with("gpu: "), "StreamPower: {ran:?}");
    assert!(
        ran[3].starts_with("processes[0]: gpu: ") && ran[3].contains("; processes[1]: gpu: "),
        "TimeLoop: {ran:?}"
    );
    assert_eq!(bake_json(&flag)["device"], "Cpu");
    assert_eq!(devices(&flag), ["cpu", "cpu", "cpu", "cpu"]);
    assert_eq!(devices(&cpu), ["cpu", "cpu", "cpu", "cpu"]);
}

/// A pit-rich grid and one `Hydrology` stage (carved lakes, precipitation); `DEVICE` as in
/// `RECIPE`.
const HYDROLOGY: &str = "(
    size: (64, 48),
    cell_size: 100.0,
    seed: 9,
    terrain: Noise(amplitude: 60.0, wavelength: 700.0),
    DEVICE
    stages: [Hydrology(lakes: Carve, precipitation: Constant(0.8), river_threshold: 4e5)],
    river_curves: None,
)";

#[test]
fn hydrology_routed_on_the_gpu_bakes_the_cpus_maps_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (name, device) in [
        ("cpu.ron", ""),
        ("gpu.ron", "device: Gpu,"),
        ("auto.ron", "device: Auto,"),
    ] {
        std::fs::write(dir.join(name), HYDROLOGY.replace("DEVICE", device)).unwrap();
    }
    let cpu = bake(dir, "cpu.ron", "cpu", &[]);
    let gpu = bake(dir, "gpu.ron", "gpu", &[]);
    let auto = bake(dir, "auto.ron", "auto", &[]);
    assert_eq!(devices(&cpu), ["cpu", "cpu"]);
    for out in [&gpu, &auto] {
        let ran = devices(out);
        assert!(ran[1].starts_with("gpu: "), "Hydrology: {ran:?}");
    }
    let files = map_bytes(&cpu);
    let names: Vec<&str> = files.iter().map(|(f, _)| f.as_str()).collect();
    for map in [
        "drainage",
        "water_surface",
        "lake_depth",
        "rivers",
        "basins",
    ] {
        assert!(
            names.iter().any(|f| f.starts_with(map)),
            "{map} not in {names:?}"
        );
    }
    // Lakes there are, and every map is the CPU's to the byte.
    let depth = orogen_core::io::exr::read_exr(&cpu.join("lake_depth.exr"))
        .unwrap()
        .data;
    assert!(depth.iter().filter(|&&d| d > 0.0).count() > 100);
    assert_eq!(map_bytes(&gpu), files, "the GPU's maps are not the CPU's");
    assert_eq!(map_bytes(&auto), files, "Auto's maps are not the CPU's");
}

/// Asserts exit code 2 and an `error: ` line holding every needle.
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
fn a_stage_the_gpu_does_not_run_fails_under_gpu_and_runs_on_the_cpu_under_auto() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_recipe(dir, "cpu.ron", "", "");
    let out = bake(dir, "cpu.ron", "out", &[]);
    let before = map_bytes(&out);
    let json_before = std::fs::read(out.join("bake.json")).unwrap();

    // A closed domain: no open side.
    write_recipe(
        dir,
        "closed.ron",
        "device: Gpu,",
        ", outlets: (borders: [])",
    );
    let o = orogen(dir, &["bake", "closed.ron", "--out", "out"]);
    assert_bad_input(
        &o,
        &["stages[1].StreamPower", "outlets.borders", "device: Cpu"],
    );
    // A coarse-to-fine schedule.
    write_recipe(
        dir,
        "coarse.ron",
        "device: Gpu,",
        ", schedule: CoarseToFine(levels: 2)",
    );
    let o = orogen(dir, &["bake", "coarse.ron", "--out", "out"]);
    assert_bad_input(&o, &["stages[1].StreamPower", "CoarseToFine"]);
    // The earlier bake is untouched.
    assert_eq!(map_bytes(&out), before);
    assert_eq!(std::fs::read(out.join("bake.json")).unwrap(), json_before);

    // Auto runs the stage on the CPU and says why, the thermal stage on the GPU: within
    // 1e-3 of the CPU's heights.
    let closed_cpu = bake(dir, "closed.ron", "closed_cpu", &["--device", "cpu"]);
    let auto = bake(dir, "closed.ron", "auto", &["--device", "auto"]);
    for (a, c) in heights(&auto).iter().zip(&heights(&closed_cpu)) {
        assert!(
            (a - c).abs() <= 1e-3 * c.abs().max(1.0),
            "Auto {a} m, CPU {c} m"
        );
    }
    assert_eq!(bake_json(&auto)["device"], "Auto");
    let ran = devices(&auto);
    assert!(ran[1].starts_with("gpu: "), "{ran:?}");
    assert!(
        ran[2].starts_with("cpu (Auto: ") && ran[2].contains("outlets.borders"),
        "{ran:?}"
    );
    assert!(
        ran[3].starts_with("processes[0]: cpu (Auto: ") && ran[3].contains("processes[1]: gpu: "),
        "{ran:?}"
    );
    // Auto with a stage it runs: the GPU's bytes.
    write_recipe(dir, "gpu.ron", "device: Gpu,", "");
    let gpu = bake(dir, "gpu.ron", "gpu", &[]);
    let auto_gpu = bake(dir, "gpu.ron", "auto_gpu", &["--device", "auto"]);
    assert_eq!(map_bytes(&auto_gpu), map_bytes(&gpu));
    assert!(devices(&auto_gpu)[2].starts_with("gpu: "));
}

/// `Auto` passes over a software adapter (the CPU is faster than lavapipe) unless
/// `OROGEN_GPU_SOFTWARE=1` asks for it, and says so; a hardware adapter it takes.
#[test]
fn auto_passes_over_a_software_adapter() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_recipe(dir, "gpu.ron", "device: Gpu,", "");
    write_recipe(dir, "cpu.ron", "", "");
    let gpu = bake(dir, "gpu.ron", "gpu", &[]);
    let software = devices(&gpu)[2].contains(", Cpu)");
    let o = orogen(
        dir,
        &[
            "bake", "gpu.ron", "--out", "auto", "--quiet", "--device", "auto",
        ],
    );
    assert!(o.status.success(), "bake failed: {}", stderr(&o));
    let auto = dir.join("auto");
    let ran = devices(&auto);
    if software {
        let cpu = bake(dir, "cpu.ron", "cpu", &[]);
        assert_eq!(
            map_bytes(&auto),
            map_bytes(&cpu),
            "Auto on a software adapter is the CPU's bytes"
        );
        assert!(
            ran[2].starts_with("cpu (Auto: ")
                && ran[2].contains("software")
                && ran[2].contains("OROGEN_GPU_SOFTWARE"),
            "{ran:?}"
        );
    } else {
        assert_eq!(
            map_bytes(&auto),
            map_bytes(&gpu),
            "Auto on a hardware adapter is the GPU's bytes"
        );
        assert!(ran[2].starts_with("gpu: "), "{ran:?}");
    }
}

/// Runs `orogen` in `dir` with `args` and `OROGEN_GPU_DISABLE=1`: no adapter.
fn orogen_without_gpu(dir: &Path, args: &[&str]) -> Output {
    Command::new(OROGEN)
        .current_dir(dir)
        .args(args)
        .env("OROGEN_GPU_DISABLE", "1")
        .output()
        .expect("the orogen binary runs")
}

#[test]
fn gpu_without_an_adapter_names_device_and_auto_runs_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_recipe(dir, "gpu.ron", "device: Gpu,", "");
    write_recipe(dir, "cpu.ron", "", "");
    let cpu = bake(dir, "cpu.ron", "cpu", &[]);
    let before = map_bytes(&cpu);

    let o = orogen_without_gpu(dir, &["bake", "gpu.ron", "--out", "cpu"]);
    assert_bad_input(&o, &["`device`", "OROGEN_GPU_DISABLE"]);
    let o = orogen_without_gpu(dir, &["bake", "cpu.ron", "--out", "cpu", "--device", "gpu"]);
    assert_bad_input(&o, &["`device`"]);
    assert_eq!(map_bytes(&cpu), before);

    let o = orogen_without_gpu(
        dir,
        &["bake", "gpu.ron", "--out", "auto", "--device", "auto"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let auto = dir.join("auto");
    assert_eq!(
        map_bytes(&auto),
        before,
        "Auto without a GPU is the CPU's bytes"
    );
    let ran = devices(&auto);
    assert!(
        ran[2].starts_with("cpu (Auto: ") && ran[2].contains("OROGEN_GPU_DISABLE"),
        "{ran:?}"
    );
    // A recipe on the CPU never looks for a GPU.
    let o = orogen_without_gpu(
        dir,
        &["bake", "gpu.ron", "--out", "cpu2", "--device", "cpu"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_help_names_the_device_switch() {
    let o = orogen(Path::new("."), &["bake", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--device"), "{help}");
    assert!(help.contains("OROGEN_GPU_DISABLE"), "{help}");
}
