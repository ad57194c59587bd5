//! Lakes on five real DEMs (`tests/data/dems/`, crops of SRTM and lidar grids, see its
//! README): the GPU's `Hydrology` stage and router against the CPU's, with `Carve` and
//! `Fill { epsilon: 0 }`. Real DEMs have wide flats and whole-metre ties, which random
//! terrains rarely give.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use orogen_core::flow::{OutletParams, SinkMode};
use orogen_core::runner::{run_recipe_on, RunOutput};
use orogen_core::world::{names, MapData, World};
use orogen_core::Recipe;
use orogen_gpu::{GpuBackend, NO_ADAPTER_HELP};

use crate::common::{bits, ctx, Case};
use crate::lakes::route_both;

const DEMS: [&str; 5] = [
    "big_tujunga",
    "boulder",
    "spring_creek",
    "west_bijou_escarpment",
    "dem_10m",
];

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dems")
}

/// A fixture's sidecar: height = offset + sample · scale, and the cell size (x, y) in m.
struct Sidecar {
    offset: f64,
    scale: f64,
    cell: (f32, f32),
}

fn sidecar(name: &str) -> Sidecar {
    let path = folder().join(format!("{name}.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let field = |key: &str| -> Vec<f64> {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("{path:?}: no {key}"));
        line.split_whitespace()
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let cell = field("cell_size");
    Sidecar {
        offset: field("offset")[0],
        scale: field("scale")[0],
        cell: (cell[0] as f32, cell[1] as f32),
    }
}

/// The DEM as a recipe's `Heightmap` terrain (the user's path: a 16-bit PNG whose
/// 0..=65535 spans `height_range`) and one `Hydrology` stage.
fn recipe(name: &str, device: &str, lakes: &str) -> Recipe {
    let s = sidecar(name);
    let png = folder().join(format!("{name}.png"));
    let (w, h) = png_size(&png);
    let text = format!(
        "(size: ({w}, {h}), cell_size: ({}, {}), seed: 1, device: {device}, river_curves: None,
          terrain: Heightmap(path: \"{name}.png\", height_range: ({}, {}), cell_size: ({}, {})),
          stages: [Hydrology(lakes: {lakes})])",
        s.cell.0,
        s.cell.1,
        s.offset,
        s.offset + 65535.0 * s.scale,
        s.cell.0,
        s.cell.1,
    );
    let r = Recipe::from_ron_str(&text, name).unwrap();
    r.validate().unwrap();
    r
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

fn run(r: &Recipe, gpu: Option<&GpuBackend>) -> RunOutput {
    let never = AtomicBool::new(false);
    let accel = gpu.map(|g| g as &dyn orogen_core::stages::Accelerator);
    run_recipe_on(r, &folder(), &never, &mut |_| {}, accel, "").unwrap()
}

fn scalar<'a>(w: &'a World, name: &str) -> &'a [f32] {
    match &w.maps[name] {
        MapData::Scalar(m) => &m.data,
        _ => panic!("{name} is not a scalar map"),
    }
}

fn labels<'a>(w: &'a World, name: &str) -> &'a [u32] {
    match &w.maps[name] {
        MapData::Labels(m) => &m.data,
        _ => panic!("{name} is not a label map"),
    }
}

/// The fill volume, m³: the sum of water surface − terrain over the cells, in f64.
fn fill_volume(w: &World) -> f64 {
    let area = w.height.grid.cell_area() as f64;
    scalar(w, names::WATER_SURFACE)
        .iter()
        .zip(&w.height.data)
        .map(|(&s, &h)| (s as f64 - h as f64).max(0.0))
        .sum::<f64>()
        * area
}

#[test]
fn the_gpu_hydrology_on_real_dems_has_the_cpus_lakes_and_fill_volume() {
    let gpu = GpuBackend::new().unwrap_or_else(|e| panic!("{e}: {NO_ADAPTER_HELP}"));
    let mut lake_cells = 0;
    for name in DEMS {
        for lakes in ["Carve", "Fill(epsilon: 0.0)"] {
            let what = format!("{name}, {lakes}");
            let cpu = run(&recipe(name, "Cpu", lakes), None).world;
            let out = run(&recipe(name, "Gpu", lakes), Some(&gpu));
            // Routed on the GPU, not on the CPU behind the accelerator's back.
            assert!(
                out.timings[1].device.starts_with("gpu: "),
                "{what}: {:?}",
                out.timings
            );
            let g = &out.world;
            assert_eq!(bits(&g.height.data), bits(&cpu.height.data), "{what}");
            let depth = |w: &World| -> Vec<bool> {
                scalar(w, names::LAKE_DEPTH)
                    .iter()
                    .map(|&d| d > 0.0)
                    .collect()
            };
            let wet = depth(&cpu).iter().filter(|&&b| b).count();
            lake_cells += wet;
            assert!(depth(g) == depth(&cpu), "{what}: lake cells");
            assert_eq!(
                g.stream_receivers, cpu.stream_receivers,
                "{what}: receivers"
            );
            assert_eq!(
                labels(g, names::BASINS),
                labels(&cpu, names::BASINS),
                "{what}"
            );
            for map in [names::WATER_SURFACE, names::LAKE_DEPTH] {
                assert_eq!(
                    bits(scalar(g, map)),
                    bits(scalar(&cpu, map)),
                    "{what}: {map}"
                );
            }
            let (vg, vc) = (fill_volume(g), fill_volume(&cpu));
            assert_eq!(
                vg.to_bits(),
                vc.to_bits(),
                "{what}: fill volume {vg} against {vc}"
            );
            let drain = |w: &World| scalar(w, names::DRAINAGE).to_vec();
            let (dg, dc) = (drain(g), drain(&cpu));
            let worst = dg
                .iter()
                .zip(&dc)
                .map(|(a, b)| ((a - b).abs() / b.abs().max(1e-30)) as f64)
                .fold(0.0, f64::max);
            assert!(worst <= 1e-6, "{what}: drainage {worst:e} apart");
            eprintln!(
                "{what}: {wet} lake cells of {}, fill volume {vc:.1} m³, drainage {worst:e} apart",
                cpu.height.data.len()
            );
        }
    }
    // Lakes to compare: the SRTM crops have hundreds of lake cells (a lidar DEM that was
    // conditioned may have none, only its depth-0 pits on flats).
    assert!(lake_cells >= 1000, "{lake_cells} lake cells in all");
}

/// The routers themselves on the DEMs' heights: receivers, link lengths, the lake count
/// and drainage (`route_both`), and with `Fill` the filled heights, bit for bit.
#[test]
fn the_gpu_router_on_real_dems_finds_the_cpus_lakes() {
    let ctx = ctx();
    for name in DEMS {
        let world = run(&recipe(name, "Cpu", "Carve"), None).world;
        let case = Case {
            name,
            grid: world.height.grid,
            outlets: OutletParams::default(),
            heights: world.height.data.clone(),
        };
        let (_, _, carved) = route_both(&ctx, &case, SinkMode::Carve);
        let (want, got, filled) = route_both(&ctx, &case, SinkMode::Fill { epsilon: 0.0 });
        assert_eq!(carved, filled, "{name}");
        assert!(carved >= 5, "{name}: {carved} lakes");
        assert_eq!(bits(&got), bits(&want), "{name}: filled heights");
        let raised = want
            .iter()
            .zip(&case.heights)
            .filter(|(a, b)| a > b)
            .count();
        let flats = {
            let mut v = case.heights.clone();
            v.sort_by(f32::total_cmp);
            v.windows(2).filter(|p| p[0] == p[1]).count()
        };
        eprintln!("{name}: {carved} lakes, {raised} cells filled, {flats} tied heights");
    }
}
