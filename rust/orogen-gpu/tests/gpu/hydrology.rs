//! A `Hydrology` stage routed on the GPU (`device: Gpu`): each of its maps against the CPU
//! stage's on pit-rich random terrains, and the same bytes run after run.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use orogen_core::runner::{run_recipe_on, RunOutput};
use orogen_core::world::{names, MapData, World};
use orogen_core::Recipe;
use orogen_gpu::{GpuBackend, NO_ADAPTER_HELP};

fn backend() -> GpuBackend {
    GpuBackend::new().unwrap_or_else(|e| panic!("{e}: {NO_ADAPTER_HELP}"))
}

/// A terrain of noise over `size` cells of 100 m (short wavelengths, so pits everywhere)
/// and one `Hydrology` stage.
fn recipe(device: &str, size: (u32, u32), seed: u64, terrain: &str, hydrology: &str) -> Recipe {
    let text = format!(
        "(size: ({}, {}), cell_size: 100.0, seed: {seed}, terrain: {terrain},
          device: {device}, stages: [Hydrology({hydrology})], river_curves: None)",
        size.0, size.1
    );
    let r = Recipe::from_ron_str(&text, "<test>").unwrap();
    r.validate().unwrap();
    r
}

fn run(r: &Recipe, gpu: Option<&GpuBackend>) -> RunOutput {
    let never = AtomicBool::new(false);
    let accel = gpu.map(|g| g as &dyn orogen_core::stages::Accelerator);
    run_recipe_on(r, Path::new("."), &never, &mut |_| {}, accel, "").unwrap()
}

fn scalar<'a>(w: &'a World, name: &str) -> &'a [f32] {
    match &w.maps[name] {
        MapData::Scalar(m) => &m.data,
        _ => panic!("{name} is not a scalar map"),
    }
}

fn mask<'a>(w: &'a World, name: &str) -> &'a [u8] {
    match &w.maps[name] {
        MapData::Mask(m) => &m.data,
        _ => panic!("{name} is not a mask"),
    }
}

fn labels<'a>(w: &'a World, name: &str) -> &'a [u32] {
    match &w.maps[name] {
        MapData::Labels(m) => &m.data,
        _ => panic!("{name} is not a label map"),
    }
}

/// The largest difference of `a` from `b`, relative to `b`'s largest magnitude, and how
/// many values differ in their bits.
fn apart(a: &[f32], b: &[f32]) -> (f64, usize) {
    let scale = b.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-30) as f64;
    let worst = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x as f64 - *y as f64).abs())
        .fold(0.0, f64::max);
    let differ = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count();
    (worst / scale, differ)
}

/// Everything a hydrology stage writes, as bytes: what "the same bytes" compares.
fn map_bytes(w: &World) -> Vec<u8> {
    let mut out = Vec::new();
    for name in [names::DRAINAGE, names::WATER_SURFACE, names::LAKE_DEPTH] {
        out.extend(scalar(w, name).iter().flat_map(|v| v.to_le_bytes()));
    }
    out.extend_from_slice(mask(w, names::RIVERS));
    out.extend(
        labels(w, names::BASINS)
            .iter()
            .flat_map(|v| v.to_le_bytes()),
    );
    out.extend(
        w.stream_receivers
            .as_deref()
            .unwrap()
            .iter()
            .flat_map(|v| v.to_le_bytes()),
    );
    out
}

#[test]
fn the_gpu_hydrology_maps_are_the_cpu_stages() {
    let gpu = backend();
    let noise = "Noise(amplitude: 60.0, wavelength: 700.0)";
    let hills = "Noise(amplitude: 200.0, wavelength: 3000.0)";
    let cases: [(_, _, _, &str, f32); 8] = [
        ((67, 45), 3, noise, "lakes: Carve", 0.0),
        ((131, 97), 7, noise, "lakes: Carve, precipitation: Noise(noise: (wavelength: 900.0), min: 0.2, max: 2.0)", 0.0),
        ((96, 80), 11, noise, "lakes: Fill(epsilon: 0.0), river_threshold: 5e5", 0.0),
        ((96, 80), 12, hills, "lakes: Fill(epsilon: 0.001)", 1e-5),
        ((80, 64), 13, noise, "lakes: None", 0.0),
        ((80, 64), 14, noise, "lakes: Carve, epsilon: 0.01", 1e-5),
        ((90, 70), 15, noise, "outlets: (borders: [South], sea_level: 10.0), lakes: Carve, precipitation: Constant(0.7)", 0.0),
        ((257, 193), 16, noise, "lakes: Carve", 0.0),
    ];
    for (size, seed, terrain, stage, tolerance) in cases {
        let what = format!("{size:?} seed {seed}, {stage}");
        let cpu = run(&recipe("Cpu", size, seed, terrain, stage), None).world;
        let on_gpu = recipe("Gpu", size, seed, terrain, stage);
        let out = run(&on_gpu, Some(&gpu));
        assert!(
            out.timings[1].device.starts_with("gpu: "),
            "{what}: {:?}",
            out.timings
        );
        let g = &out.world;
        let lakes = scalar(&cpu, names::LAKE_DEPTH)
            .iter()
            .filter(|&&d| d > 0.0)
            .count();
        let n = cpu.height.data.len();
        // Pit-rich: lake cells in every case but `None`, which keeps its pits (and the
        // sea's, which floods most of them: it is there for the sea's outlets).
        let least = if stage.contains("sea") { 1 } else { n / 50 };
        assert!(
            stage.contains("None") || lakes >= least,
            "{what}: {lakes} lake cells of {n}"
        );
        assert_eq!(
            g.stream_receivers, cpu.stream_receivers,
            "{what}: receivers"
        );
        assert_eq!(
            labels(g, names::BASINS),
            labels(&cpu, names::BASINS),
            "{what}: basins"
        );
        let (d, dn) = apart(scalar(g, names::DRAINAGE), scalar(&cpu, names::DRAINAGE));
        // Drainage: the GPU's exact fixed-point sums, the CPU's f64 sums, each rounded
        // once to f32.
        assert!(d <= 1e-6, "{what}: drainage {d:e} apart ({dn} differ)");
        for name in [names::WATER_SURFACE, names::LAKE_DEPTH] {
            let (w, wn) = apart(scalar(g, name), scalar(&cpu, name));
            if tolerance == 0.0 {
                assert_eq!(wn, 0, "{what}: {name} {w:e} apart");
            } else {
                assert!(
                    w <= tolerance as f64,
                    "{what}: {name} {w:e} apart ({wn} differ)"
                );
            }
        }
        let rivers = |w: &World| mask(w, names::RIVERS).to_vec();
        if dn == 0 {
            assert_eq!(rivers(g), rivers(&cpu), "{what}: rivers");
        }
        eprintln!(
            "{what}: {lakes} lake cells; drainage {dn} of {n} differ ({d:e}); surface {:?}",
            apart(
                scalar(g, names::WATER_SURFACE),
                scalar(&cpu, names::WATER_SURFACE)
            )
        );
        // The same bytes run after run.
        let again = run(&on_gpu, Some(&gpu)).world;
        assert!(
            map_bytes(&again) == map_bytes(g),
            "{what}: not the same bytes twice"
        );
    }
}

#[test]
fn a_closed_domain_is_refused_under_gpu_and_routed_on_the_cpu_under_auto() {
    let gpu = backend();
    let noise = "Noise(amplitude: 60.0, wavelength: 700.0)";
    let stage = "outlets: (borders: [])";
    let never = AtomicBool::new(false);
    let r = recipe("Gpu", (40, 32), 2, noise, stage);
    let e = run_recipe_on(&r, Path::new("."), &never, &mut |_| {}, Some(&gpu), "")
        .err()
        .expect("a closed domain under Gpu");
    assert!(
        e.to_string()
            .contains("stages[0].Hydrology.outlets.borders"),
        "{e}"
    );
    // Refused before any work, as the other GPU stages are.
    let early = orogen_core::runner::check_devices(
        &r,
        orogen_core::stages::Devices {
            device: orogen_core::stages::Device::Gpu,
            accelerator: Some(&gpu),
            missing: "",
        },
    )
    .expect_err("check_devices refuses it");
    assert!(
        early
            .to_string()
            .contains("stages[0].Hydrology.outlets.borders"),
        "{early}"
    );
    let auto = run(&recipe("Auto", (40, 32), 2, noise, stage), Some(&gpu));
    assert!(
        auto.timings[1].device.starts_with("cpu (Auto: "),
        "{:?}",
        auto.timings
    );
    let cpu = run(&recipe("Cpu", (40, 32), 2, noise, stage), None).world;
    assert!(map_bytes(&auto.world) == map_bytes(&cpu));
}

#[test]
fn a_gpu_stream_powers_own_maps_are_routed_on_the_gpu_as_the_cpu_would() {
    use orogen_core::stages::hydrology::{compute_maps, HydrologyParams};
    let gpu = crate::common::Counted::new(true);
    let text = "(size: (72, 56), cell_size: 100.0, seed: 4,
          terrain: Noise(amplitude: 60.0, wavelength: 700.0), uplift: Constant(0.001),
          device: Gpu, river_curves: None,
          stages: [StreamPower(iterations: 3, dt: 10000.0, k: Constant(2e-4), lakes: Carve,
                               precipitation: Constant(0.9), hydrology: true)])";
    let r = Recipe::from_ron_str(text, "<test>").unwrap();
    let never = AtomicBool::new(false);
    let out = run_recipe_on(&r, Path::new("."), &never, &mut |_| {}, Some(&gpu), "").unwrap();
    assert!(
        out.timings[1].device.starts_with("gpu: "),
        "{:?}",
        out.timings
    );
    // The steps and the maps' routing ran on the GPU (equal maps would also come from
    // the CPU's routing, which the stage falls back to where the GPU cannot route).
    use crate::common::Tally;
    let t = &gpu.tally;
    assert_eq!(
        (
            Tally::get(&t.steps),
            Tally::get(&t.mappers),
            Tally::get(&t.maps)
        ),
        (3, 1, 1)
    );
    let g = out.world;
    // The CPU's Hydrology over the GPU's final heights, with the stage's routing.
    let mut cpu = g.clone();
    cpu.maps.clear();
    cpu.stream_receivers = None;
    let params = HydrologyParams {
        precipitation: Some(orogen_core::stages::source::ScalarSource::Constant(0.9)),
        ..HydrologyParams::default()
    };
    compute_maps(&mut cpu, &params).unwrap();
    let lakes = scalar(&cpu, names::LAKE_DEPTH)
        .iter()
        .filter(|&&d| d > 0.0)
        .count();
    assert!(lakes > 0, "no lake left after 3 steps");
    assert!(
        map_bytes(&g) == map_bytes(&cpu),
        "the stage's maps are not the CPU's"
    );
}
