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
//! - `splat.png`: RGBA8, four weights summing to 255 per pixel, for HTerrain's default
//!   CLASSIC4 shader (four ground textures), which its import dialog loads in one step:
//!   Orogen's eight ground weights ([`super::ground_weights`], what the terrain shader shows,
//!   hand-painted ground included) folded to four: R grass (grass, dry grass), G rock
//!   (rock, cliff, scree), B snow, A bare ground (soil, sand).
//! - `splat16_0.png`, `splat16_1.png`: the eight weights unfolded, four per RGBA8 map
//!   (rock, cliff, scree, soil; grass, dry grass, sand, snow), all eight summing to 255, for
//!   HTerrain's MULTISPLAT16 shader with Orogen's eight textures in slots 0–7 (its import
//!   dialog takes one splat map, so the README gives the script that loads both).
//!
//! Both, because a user of HTerrain starts on CLASSIC4 (its default, one import) and the
//! fold loses little there (the pairs it merges look alike from afar), while one who wants
//! the ground the Orogen shader shows (dry grass apart from grass, scree and cliffs apart
//! from rock) switches to MULTISPLAT16 and gets the same eight layers.
//! - `color.png`: RGBA8 colour map, only for a layered terrain (its surface colour).

use std::path::{Path, PathBuf};

use crate::error::{OrogenError, Result};
use crate::field::{Field, Grid, ScalarMap};
use crate::world::World;

use super::export::{add_manifest_and_readme, surface_colour, weights_255, window};
use super::ground_weights::{ground_weights, Ground, GroundWeights, GROUND_MATERIALS};
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

/// The CLASSIC4 channels of `splat.png` and the ground layers each one sums.
pub const CLASSIC4: [(&str, &[usize]); 4] = [
    ("grass", &[4, 5]),
    ("rock", &[0, 1, 2]),
    ("snow", &[7]),
    ("ground", &[3, 6]),
];

/// Writes the HTerrain export of `world` into `dir` in one step (the folder is replaced
/// whole, as `orogen bake` does): `height.exr`, `splat.png`, `splat16_0.png`,
/// `splat16_1.png`, `color.png` (layered terrains), `README.txt`, `export.json`, the ground
/// from the shader's default uniforms without paint. Returns the paths written.
pub fn write_hterrain(world: &World, dir: &Path) -> Result<Vec<PathBuf>> {
    write_hterrain_with(world, dir, &Ground::default())
}

/// [`write_hterrain`] with the ground from `ground` (a terrain's uniforms and paint).
pub fn write_hterrain_with(world: &World, dir: &Path, ground: &Ground<'_>) -> Result<Vec<PathBuf>> {
    let files = files(world, dir, ground, None)?;
    write_all_or_nothing(dir, files)
}

/// `splat.png`, `splat16_0.png` and `splat16_1.png`, one RGBA8 pixel per cell.
pub type SplatMaps = (Vec<[u8; 4]>, Vec<[u8; 4]>, Vec<[u8; 4]>);

/// The CLASSIC4 splat (four weights summing to 255) and the two MULTISPLAT16 maps (eight
/// weights summing to 255) of `weights`.
pub fn splat_maps(weights: &GroundWeights) -> SplatMaps {
    let n = weights.data.len();
    let (mut c4, mut s0, mut s1) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for w in &weights.data {
        c4.push(weights_255(
            CLASSIC4.map(|(_, layers)| layers.iter().map(|&l| w[l]).sum()),
        ));
        let b = weights_255(*w);
        s0.push([b[0], b[1], b[2], b[3]]);
        s1.push([b[4], b[5], b[6], b[7]]);
    }
    (c4, s0, s1)
}

/// The files of the export, `bake_json` (if any) among them as `bake.json`.
pub(crate) fn files<'a>(
    world: &'a World,
    dir: &Path,
    ground: &Ground<'_>,
    bake_json: Option<String>,
) -> Result<Vec<(String, Encoder<'a>)>> {
    let grid = world.grid();
    let (w, h) = (grid.width, grid.height);
    let n = resolution(w, h)?;
    let out_grid = Grid::with_cells(n, n, grid.dx(), grid.dy())?;
    let (splat, splat16_0, splat16_1) = splat_maps(&ground_weights(world, ground)?);
    let channels: [String; 4] = CLASSIC4.map(|(name, _)| name.to_string());
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
    for (k, data) in [splat16_0, splat16_1].into_iter().enumerate() {
        files.push((
            format!("splat16_{k}.png"),
            Box::new(move |out, path| {
                let map = Field {
                    grid: out_grid,
                    data: window(&data, w, h, (0, 0), (n, n)),
                };
                crate::io::png16::encode_rgba_png(&map, out, path)
            }),
        ));
    }
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
    manifest.insert(
        "splat16_channels".into(),
        serde_json::json!(GROUND_MATERIALS),
    );
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
             They are Orogen's eight ground layers (what its terrain shows, hand-painted
             ground included) folded to four: grass = grass + dry grass, rock = rock +
             cliff + scree, ground = soil + sand.
splat16_0.png, splat16_1.png
             the eight layers unfolded, for HTerrain's MULTISPLAT16 shader (Shader Type
             MultiSplat16 on the HTerrain node): texture slots 0..7 in this order:
             0 rock, 1 cliff, 2 scree, 3 soil (splat16_0 R, G, B, A),
             4 grass, 5 dry grass, 6 sand, 7 snow (splat16_1 R, G, B, A);
             all eight weights of a pixel sum to 255. Orogen's own textures are in
             addons/orogen/runtime/textures/ (<name>_albedo_height.png and
             <name>_normal_roughness.png; HTerrain's texture set editor takes them).
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

For MULTISPLAT16, then load the two eight-layer maps (it reads four splat maps; the
last two stay empty):
    while data.get_map_count(HTerrainData.CHANNEL_SPLAT) < 4:
        data._edit_add_map(HTerrainData.CHANNEL_SPLAT)
    for i in 4:
        var img := Image.load_from_file(\"<this folder>/splat16_%d.png\" % i) if i < 2 \\
                else Image.create({n}, {n}, false, Image.FORMAT_RGBA8)
        data.get_image(HTerrainData.CHANNEL_SPLAT, i).copy_from(img)
        data.notify_region_change(Rect2i(0, 0, {n}, {n}), HTerrainData.CHANNEL_SPLAT, i)
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
