//! Writing a world's maps to a folder: the one code path shared by `orogen bake` and
//! Godot's `TerrainWorld.save_maps(dir)`.
//!
//! Files: `height.exr` (f32 metres), `height.png` (16-bit, min..max), `height.r16`
//! (R16, min..max), `preview.png` (shaded relief) and every map of `world.maps` by its
//! name: scalars as `<name>.exr`, masks as `<name>.png` (0/255), labels as `<name>.png`
//! (one colour per label). `bake.json` records the recipe and the run.
//!
//! All files are first written into a staging folder beside `dir`; only when every one
//! of them is complete does it replace `dir`, in one step ([`folder`]). A failed or
//! interrupted bake leaves the previous outputs whole, and a finished one leaves no file
//! of an earlier bake beside its own (files the earlier bake did not write are kept).
//!
//! Beside the writer, what an engine needs to show a world, computed here so the binding
//! only copies it: [`water_display`] (river channels, flow map), [`lake_display`] (the
//! lakes worth drawing) and [`collision`] (height-map collision regions).

use std::path::{Path, PathBuf};

pub mod collision;
mod export;
pub mod export_hterrain;
pub mod export_terrain3d;
pub mod folder;
pub mod ground_weights;
pub mod lake_display;
pub mod lake_surface;
pub mod preview;
pub mod rolling;
pub mod skirt;
pub mod skirt_rivers;
pub mod textures;
pub mod tiled;
pub mod water_display;
mod write;

use write::{write_all_or_nothing, Encoder};

use crate::error::{OrogenError, Result};
use crate::recipe::Recipe;
use crate::runner::StageTiming;
use crate::world::{names, MapData, World};

/// The file a bake writes its rivers to (when it has any, see [`World::rivers`]).
pub const RIVERS_JSON: &str = "rivers.json";

/// Largest side of `preview.png`, pixels; bigger worlds are shown at a coarser stride.
pub const PREVIEW_MAX_SIDE: usize = 4096;

/// Creates `dir` (and its parents) if missing; the error names the folder.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(OrogenError::bad_file(dir, "is not a folder"));
    }
    std::fs::create_dir_all(dir).map_err(|e| OrogenError::io("cannot create output folder", dir, e))
}

/// Checks a map name is a plain file stem (no separators, not `.`/`..`).
fn check_map_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', ':'])
        || name.starts_with('.');
    if bad {
        return Err(OrogenError::invalid(
            format!("maps[{name:?}]"),
            "is not usable as a file name",
        ));
    }
    Ok(())
}

/// Writes `height.exr`, `height.png`, `height.r16`, `preview.png` and every map of
/// `world.maps` (`<name>.exr` for scalars, `<name>.png` for masks and labels) into
/// `dir`, creating it if needed, in one step (see the module doc). Returns the paths
/// written, in that order.
pub fn write_maps(world: &World, dir: &Path) -> Result<Vec<PathBuf>> {
    check_finite_maps(world)?;
    write_folder(world, dir, None)
}

/// Fails, before anything is written, when a float map to write holds NaN or inf: the
/// heights and every scalar and vector map, the layer maps included (the runner checks
/// them too, naming the recipe fields; this is the writer's own guard, so no caller can
/// write a non-finite map with success: fuzz finding #39.2). The error names the file.
fn check_finite_maps(world: &World) -> Result<()> {
    let grid = world.grid();
    let fail = |file: String, i: usize, v: f32| {
        let (x, y) = (i % grid.width.max(1), i / grid.width.max(1));
        Err(OrogenError::Numerical {
            field: file,
            reason: format!("has {v} at cell ({x}, {y}); a map with NaN or inf is not written"),
        })
    };
    if let Some(i) = world.height.data.iter().position(|v| !v.is_finite()) {
        return fail(format!("{}.exr", names::HEIGHT), i, world.height.data[i]);
    }
    for (name, map) in &world.maps {
        let found = match map {
            MapData::Scalar(m) => m
                .data
                .iter()
                .position(|v| !v.is_finite())
                .map(|i| (i, m.data[i])),
            MapData::Vector(m) => m
                .data
                .iter()
                .flatten()
                .position(|v| !v.is_finite())
                .map(|i| (i / 2, m.data[i / 2][i % 2])),
            _ => None,
        };
        if let Some((i, v)) = found {
            return fail(format!("{name}.exr"), i, v);
        }
    }
    Ok(())
}

/// [`write_maps`] plus `bake.json` (see [`bake_json`]), all in one step: what
/// `orogen bake` writes. Returns the paths written, `bake.json` last.
pub fn write_bake(
    dir: &Path,
    recipe: &Recipe,
    world: &World,
    timings: &[StageTiming],
    recipe_path: Option<&Path>,
) -> Result<Vec<PathBuf>> {
    write_bake_target(dir, Target::Maps, recipe, world, timings, recipe_path)
}

/// What a bake writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// Orogen's own maps ([`write_maps`]).
    #[default]
    Maps,
    /// Region tiles for Terrain3D ([`export_terrain3d`]).
    Terrain3d { region_size: usize },
    /// A 2ⁿ+1 square height, splat and colour map for HTerrain ([`export_hterrain`]).
    HTerrain,
}

impl Target {
    /// Checks, before a run, that the world `grid` can be written for this target
    /// (region size, size limits, square cells); errors name the field.
    pub fn check(&self, grid: crate::field::Grid) -> Result<()> {
        match *self {
            Target::Maps => Ok(()),
            Target::Terrain3d { region_size } => {
                export_terrain3d::layout(grid, region_size).map(|_| ())
            }
            Target::HTerrain => export_hterrain::resolution(grid.width, grid.height).map(|_| ()),
        }
    }
}

/// [`write_bake`] for any [`Target`]: the target's files plus `bake.json`, in one step.
pub fn write_bake_target(
    dir: &Path,
    target: Target,
    recipe: &Recipe,
    world: &World,
    timings: &[StageTiming],
    recipe_path: Option<&Path>,
) -> Result<Vec<PathBuf>> {
    check_finite_maps(world)?;
    let text =
        bake_info(recipe, world, timings, recipe_path, target == Target::Maps).map_err(|e| {
            OrogenError::bad_file(
                dir.join("bake.json"),
                format!("cannot build bake.json: {e}"),
            )
        })?;
    match target {
        Target::Maps => write_folder(world, dir, Some(text)),
        Target::Terrain3d { region_size } => {
            let files = export_terrain3d::files(
                world,
                dir,
                region_size,
                &ground_weights::Ground::default(),
                Some(text),
            )?;
            write_all_or_nothing(dir, files)
        }
        Target::HTerrain => {
            let files =
                export_hterrain::files(world, dir, &ground_weights::Ground::default(), Some(text))?;
            write_all_or_nothing(dir, files)
        }
    }
}

fn write_folder(world: &World, dir: &Path, json: Option<String>) -> Result<Vec<PathBuf>> {
    let height = &world.height;
    let planet = match &world.planet {
        Some(p) => Some(crate::stages::planet::equirect_maps(
            p,
            crate::stages::planet::map_width(p.len()),
        )?),
        None => None,
    };
    let mut files: Vec<(String, Encoder<'_>)> = vec![
        (
            format!("{}.exr", names::HEIGHT),
            Box::new(move |out, path| crate::io::exr::encode_exr(height, out, path)),
        ),
        (
            format!("{}.png", names::HEIGHT),
            Box::new(move |out, path| {
                crate::io::png16::encode_png16(height, out, path).map(|_| ())
            }),
        ),
        (
            format!("{}.r16", names::HEIGHT),
            Box::new(move |out, path| crate::io::raw::encode_r16(height, out, path).map(|_| ())),
        ),
        (
            "preview.png".to_string(),
            Box::new(move |out, path| {
                let img = preview::render_preview_max(world, PREVIEW_MAX_SIDE);
                crate::io::png16::encode_rgb_png(&img, out, path)
            }),
        ),
    ];
    for (name, map) in &world.maps {
        check_map_name(name)?;
        let entry: (String, Encoder<'_>) = match map {
            MapData::Scalar(m) => (
                format!("{name}.exr"),
                Box::new(move |out, path| crate::io::exr::encode_exr(m, out, path)),
            ),
            MapData::Mask(m) => (
                format!("{name}.png"),
                Box::new(move |out, path| crate::io::png16::encode_mask_png(m, out, path)),
            ),
            MapData::Labels(m) => (
                format!("{name}.png"),
                Box::new(move |out, path| crate::io::png16::encode_labels_png(m, out, path)),
            ),
            MapData::Index(m) => (
                format!("{name}.png"),
                Box::new(move |out, path| crate::io::png16::encode_index_png(m, out, path)),
            ),
            MapData::Rgba(m) => (
                format!("{name}.png"),
                Box::new(move |out, path| crate::io::png16::encode_rgba_png(m, out, path)),
            ),
            MapData::Vector(m) => (
                format!("{name}.exr"),
                Box::new(move |out, path| crate::io::exr::encode_exr2(m, out, path)),
            ),
        };
        if files.iter().any(|(f, _)| *f == entry.0) {
            return Err(OrogenError::invalid(
                format!("maps[{name:?}]"),
                format!("would overwrite `{}` written earlier in this bake", entry.0),
            ));
        }
        files.push(entry);
    }
    if let Some(maps) = &planet {
        // The whole planet, equirectangular 2:1 (seed 004); `bake.json` lists them
        // (PLANET_FILES).
        for (name, map) in [
            (PLANET_FILES[0], &maps.height),
            (PLANET_FILES[1], &maps.age),
            (PLANET_FILES[2], &maps.uplift),
        ] {
            files.push((
                name.to_string(),
                Box::new(move |out, path| crate::io::exr::encode_exr(map, out, path)),
            ));
        }
        files.push((
            PLANET_FILES[3].to_string(),
            Box::new(move |out, path| crate::io::png16::encode_labels_png(&maps.plates, out, path)),
        ));
    }
    if let Some(rivers) = &world.rivers {
        // A Graph domain's rivers or a grid's river curves: polylines from source to
        // mouth, points in metres.
        files.push((
            RIVERS_JSON.to_string(),
            Box::new(move |out, path| {
                let text = rivers_json(rivers).map_err(|e| {
                    OrogenError::bad_file(path, format!("cannot build rivers.json: {e}"))
                })?;
                crate::io::write_all(out, text.as_bytes(), path)?;
                crate::io::write_all(out, b"\n", path)
            }),
        ));
    }
    if let Some(text) = json {
        files.push((
            "bake.json".to_string(),
            Box::new(move |out, path| {
                crate::io::write_all(out, text.as_bytes(), path)?;
                crate::io::write_all(out, b"\n", path)
            }),
        ));
    }
    write_all_or_nothing(dir, files)
}

/// The text of `rivers.json`: `{"rivers": [{"points": [[x, y, z], …], "discharge": […],
/// "width": […], "order": n}, …]}`, points in metres (x east, y south, z the bed height).
pub fn rivers_json(rivers: &[crate::rasterise::River]) -> serde_json::Result<String> {
    #[derive(serde::Serialize)]
    struct File<'a> {
        rivers: &'a [crate::rasterise::River],
    }
    serde_json::to_string(&File { rivers })
}

/// The files of a bake whose world has a planet (its whole sphere, equirectangular).
pub const PLANET_FILES: [&str; 4] = [
    "planet_height.exr",
    "planet_age.exr",
    "planet_uplift.exr",
    "planet_plates.png",
];

/// What `bake.json` holds.
#[derive(serde::Serialize)]
struct BakeInfo<'a> {
    orogen_version: &'static str,
    recipe_path: Option<String>,
    seed: u64,
    size: (usize, usize),
    /// dx, metres.
    cell_size: f32,
    /// dy, metres, only for non-square cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    cell_size_y: Option<f32>,
    height_min: f32,
    height_max: f32,
    /// The recipe's `device` (after `--device`): `Cpu`, `Gpu` or `Auto`; each stage says
    /// what ran it.
    device: crate::recipe::Device,
    stages: &'a [StageTiming],
    total_seconds: f64,
    maps: Vec<&'a str>,
    /// `rivers.json` when the bake wrote one (a Graph domain's rivers, a grid's river
    /// curves).
    #[serde(skip_serializing_if = "Option::is_none")]
    rivers: Option<&'static str>,
    /// The planet's files when the world has a planet ([`PLANET_FILES`]), so a later bake
    /// into the folder knows them for its own (fuzz finding #39.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    planet: Option<[&'static str; 4]>,
    recipe: &'a Recipe,
    recipe_ron: String,
}

/// The text of `bake.json` (pretty JSON): version, recipe path, seed, size, cell size
/// (m; dx, with `cell_size_y` beside it for non-square cells), min/max height (m), the
/// device asked for, stage timings (s) with the device that ran each, map names,
/// `"rivers": "rivers.json"` when the bake has rivers, the recipe as JSON and as RON.
pub fn bake_json(
    recipe: &Recipe,
    world: &World,
    timings: &[StageTiming],
    recipe_path: Option<&Path>,
) -> serde_json::Result<String> {
    bake_info(recipe, world, timings, recipe_path, true)
}

/// [`bake_json`]; `with_rivers`: the bake writes `rivers.json` (Orogen's own maps, not an
/// export for Terrain3D or HTerrain).
fn bake_info(
    recipe: &Recipe,
    world: &World,
    timings: &[StageTiming],
    recipe_path: Option<&Path>,
    with_rivers: bool,
) -> serde_json::Result<String> {
    let grid = world.grid();
    let (lo, hi) = world.height.min_max();
    let info = BakeInfo {
        orogen_version: crate::VERSION,
        recipe_path: recipe_path.map(|p| p.display().to_string()),
        seed: recipe.seed,
        size: (grid.width, grid.height),
        cell_size: grid.cell_size,
        cell_size_y: (!grid.is_square()).then_some(grid.cell_size_y),
        height_min: lo,
        height_max: hi,
        device: recipe.device,
        stages: timings,
        total_seconds: timings.iter().map(|t| t.seconds).sum(),
        maps: world.maps.keys().map(|k| k.as_str()).collect(),
        rivers: (with_rivers && world.rivers.is_some()).then_some(RIVERS_JSON),
        planet: (with_rivers && world.planet.is_some()).then_some(PLANET_FILES),
        recipe,
        recipe_ron: recipe.to_ron_string(),
    };
    serde_json::to_string_pretty(&info)
}
