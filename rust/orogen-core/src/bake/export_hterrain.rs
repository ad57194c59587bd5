//! "Save for HTerrain": the maps HTerrain's import dialog takes (`HTerrainData._import_heightmap`,
//! `_import_map`, `get_adjusted_map_size` in Zylann's godot_heightmap_plugin).
//!
//! HTerrain's maps are square, 2ⁿ+1 samples a side, 65 to 4097. Its importer crops any other
//! size to `min(2^⌈log2(w−1)⌉+1, 2^⌈log2(h−1)⌉+1)` and fills what the crop adds with
//! zeros; an export that lost terrain or grew a cliff to 0 would not be what a user expects.
//! So the export keeps every sample where it is: the world goes into the top-left corner of
//! the smallest 2ⁿ+1 square that holds it (at least 65), and the samples past its right and
//! bottom edges repeat the edge (a flat skirt). A world that is already 2ⁿ+1 square is written
//! as it is. Nothing is resampled, so every height equals Orogen's bit for bit. A world over
//! 4097 a side is refused.
//!
//! - `height.exr`: 32-bit float, one channel (`R`; Godot loads it as `FORMAT_RF`, HTerrain's
//!   height format), metres: HTerrain imports EXR heights as they are (the dialog's min/max
//!   only apply to PNG and RAW).
//! - `splat.png`: RGBA8, four weights summing to 255 per pixel (HTerrain's CLASSIC4 shader
//!   blends its four ground textures by them; [`super::export::splat_weights`]).
//! - `color.png`: RGBA8 colour map, only for a layered terrain (its surface colour).

use std::path::{Path, PathBuf};

use crate::error::{OrogenError, Result};
use crate::field::{Field, Grid, ScalarMap};
use crate::world::World;

use super::export::{add_manifest_and_readme, splat_weights, surface_colour, window};
use super::write::{write_all_or_nothing, Encoder};

/// HTerrain's smallest and largest resolutions (`HTerrainData.MIN_RESOLUTION`, `MAX_RESOLUTION`).
pub const MIN_RESOLUTION: usize = 65;
pub const MAX_RESOLUTION: usize = 4097;

/// The side of the HTerrain map a `width × height` world is written into: the smallest
/// 2ⁿ+1 (at least 65) that holds both. Errors name `size` past 4097.
pub fn resolution(width: usize, height: usize) -> Result<usize> {
    let side = width.max(height);
    if side > MAX_RESOLUTION {
        return Err(OrogenError::invalid(
            "size",
            format!(
                "HTerrain holds at most {MAX_RESOLUTION} x {MAX_RESOLUTION} samples; this world \
                 is {width} x {height}; bake a smaller size, or save for Terrain3D"
            ),
        ));
    }
    let n = (side.max(2) - 1).next_power_of_two() + 1;
    Ok(n.max(MIN_RESOLUTION))
}

/// Writes the HTerrain export of `world` into `dir` in one step (the folder is replaced
/// whole, as `orogen bake` does): `height.exr`, `splat.png`, `color.png` (layered terrains),
/// `README.txt`, `export.json`. Returns the paths written.
pub fn write_hterrain(world: &World, dir: &Path) -> Result<Vec<PathBuf>> {
    let files = files(world, dir, None)?;
    write_all_or_nothing(dir, files)
}

/// The files of the export, `bake_json` (if any) among them as `bake.json`.
pub(crate) fn files<'a>(
    world: &'a World,
    dir: &Path,
    bake_json: Option<String>,
) -> Result<Vec<(String, Encoder<'a>)>> {
    let grid = world.grid();
    let (w, h) = (grid.width, grid.height);
    let n = resolution(w, h)?;
    let out_grid = Grid::with_cells(n, n, grid.dx(), grid.dy())?;
    let (splat, channels) = splat_weights(world);
    let colour = surface_colour(world);
    let heights = &world.height.data;
    let mut files: Vec<(String, Encoder<'_>)> = vec![
        (
            "height.exr".into(),
            Box::new(move |out, path| {
                let map = ScalarMap {
                    grid: out_grid,
                    data: window(heights, w, h, (0, 0), (n, n)),
                };
                crate::io::exr::encode_exr(&map, out, path)
            }),
        ),
        (
            "splat.png".into(),
            Box::new(move |out, path| {
                let map = Field {
                    grid: out_grid,
                    data: window(&splat, w, h, (0, 0), (n, n)),
                };
                crate::io::png16::encode_rgba_png(&map, out, path)
            }),
        ),
    ];
    if let Some(colour) = colour {
        files.push((
            "color.png".into(),
            Box::new(move |out, path| {
                let map = Field {
                    grid: out_grid,
                    data: window(colour, w, h, (0, 0), (n, n)),
                };
                crate::io::png16::encode_rgba_png(&map, out, path)
            }),
        ));
    }
    let (lo, hi) = world.height.min_max();
    let mut manifest = serde_json::Map::new();
    manifest.insert("target".into(), "hterrain".into());
    manifest.insert("orogen_version".into(), crate::VERSION.into());
    manifest.insert("size".into(), serde_json::json!([w, h]));
    manifest.insert("resolution".into(), n.into());
    manifest.insert(
        "map_scale".into(),
        serde_json::json!([grid.dx(), 1.0, grid.dy()]),
    );
    manifest.insert("height_min".into(), lo.into());
    manifest.insert("height_max".into(), hi.into());
    manifest.insert("splat_channels".into(), serde_json::json!(channels));
    let readme = readme(grid, n, (lo, hi), &channels, colour.is_some());
    super::export::add_bake_json(&mut files, bake_json);
    add_manifest_and_readme(&mut files, dir, manifest, readme)?;
    Ok(files)
}

fn readme(
    grid: Grid,
    n: usize,
    (lo, hi): (f32, f32),
    channels: &[String; 4],
    colour: bool,
) -> String {
    let (w, h) = (grid.width, grid.height);
    let size_line = if (w, h) == (n, n) {
        format!("The world is {n} x {n} samples, a size HTerrain takes as it is.")
    } else {
        format!(
            "The world is {w} x {h} samples; HTerrain needs a 2^n+1 square, so it sits in the\n\
             top-left {w} x {h} of a {n} x {n} map and the samples past its right and bottom\n\
             edges repeat the edge (nothing is resampled: every height is Orogen's)."
        )
    };
    let colour_file = if colour {
        "color.png    colour map, RGBA8: the surface colour of the exposed material.\n"
    } else {
        ""
    };
    format!(
        "Orogen export for HTerrain
==========================

{size_line}
Heights {lo:.2} .. {hi:.2} m. Cells are {dx} x {dy} m: set the HTerrain node's
Map Scale to ({dx}, 1, {dy}).

Files
-----
height.exr   heights, 32-bit float, one channel, metres (imported as they are).
splat.png    splat map, RGBA8, the four weights of a pixel sum to 255:
             R {c0}, G {c1}, B {c2}, A {c3}
             (HTerrain's CLASSIC4 shader: put matching ground textures in slots 0..3).
{colour_file}export.json  the same, for scripts.

Import (HTerrain's import dialog)
---------------------------------
1. Add an HTerrain node, give it a new HTerrainData (Data Directory: an empty folder),
   set Map Scale as above.
2. With the node selected: Terrain menu (top of the 3D viewport) > Import maps.
3. Heightmap: height.exr (Min/Max height are ignored for EXR). Splatmap: splat.png.{colour_pick}
4. Click Import, then save the scene.

From a script: data._edit_import_maps({{
    HTerrainData.CHANNEL_HEIGHT: {{\"path\": \"<this folder>/height.exr\", \"min_height\": 0,
        \"max_height\": 0, \"big_endian\": false, \"bit_depth\": 32}},
    HTerrainData.CHANNEL_SPLAT: {{\"path\": \"<this folder>/splat.png\"}}}})
",
        dx = grid.dx(),
        dy = grid.dy(),
        c0 = channels[0],
        c1 = channels[1],
        c2 = channels[2],
        c3 = channels[3],
        colour_pick = if colour { " Colormap: color.png." } else { "" },
    )
}
