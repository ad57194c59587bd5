//! "Save for Terrain3D": the world cut into Terrain3D regions, one set of files per region,
//! in the formats Terrain3D's importer reads (Terrain3D docs `import_export.md`,
//! `controlmap_format.md`; `Terrain3DData::import_images`, `Terrain3DRegion`).
//!
//! - `height_X_Z.exr`: 32-bit float, one channel (`R`, which Godot loads as `FORMAT_RF`,
//!   Terrain3D's height format), metres as Orogen has them (import scale 1, offset 0).
//! - `control_X_Z.exr`: Terrain3D's control map (`FORMAT_RF` whose 32 bits are a bit field,
//!   `controlmap_format.md`: base texture id `<< 27`, overlay id `<< 22`, blend 0–255
//!   `<< 14`, hole `1 << 2`, autoshader `1`): Orogen's ground weights
//!   ([`super::ground_weights`], the terrain shader's, with the painted ground over them) as
//!   base = the layer shown most, overlay = the second, blend = the second's share; texture
//!   ids are the eight ground layers in [`GROUND_MATERIALS`] order (rock 0 … snow 7), so the
//!   user sets up eight texture slots in that order. The autoshader is off; the padding
//!   beyond the terrain's edge is a hole.
//! - `color_X_Z.png`: RGBA8 colour map, only for a layered terrain: its `surface_colour`
//!   with alpha 128 (Terrain3D reads alpha as a roughness modifier; 0.5 leaves it as is).
//!
//! Every tile is `region_size²` samples; tile `(X, Z)` starts at sample
//! `(X·region_size, Z·region_size)`. Tiles at the far edges are padded by repeating the
//! edge samples and marked as holes. Terrain3D holds at most 32 × 32 regions
//! (`Terrain3DData::REGION_MAP_SIZE`) centred on the origin, so the tile grid is placed
//! with tile `(0, 0)` at region location `origin` (both within -16..15).

use std::path::{Path, PathBuf};

use crate::error::{OrogenError, Result};
use crate::field::{Field, Grid, Rect, ScalarMap};
use crate::world::World;

use super::export::{manifest_and_readme, surface_colour, window};
use super::ground_weights::{
    drainage_log_max, pairs_in, Ground, GroundInputs, Pair, GROUND_MATERIALS,
};
use super::write::{write_all_or_nothing, write_into, Encoder};

/// Terrain3D's region sizes (`Terrain3D::RegionSize`).
pub const REGION_SIZES: [usize; 6] = [64, 128, 256, 512, 1024, 2048];
/// Terrain3D's default region size.
pub const DEFAULT_REGION_SIZE: usize = 256;
/// Regions per side Terrain3D holds (`Terrain3DData::REGION_MAP_SIZE`).
pub const MAX_REGIONS_PER_SIDE: usize = 32;
/// Control map: autoshader on (`x & 0x1`).
pub const CONTROL_AUTOSHADER: u32 = 1;
/// Control map: hole (`(x & 0x1) << 2`).
pub const CONTROL_HOLE: u32 = 1 << 2;
/// Control map: where the base texture id, overlay id and blend sit (`controlmap_format.md`).
pub const CONTROL_BASE_SHIFT: u32 = 27;
pub const CONTROL_OVERLAY_SHIFT: u32 = 22;
pub const CONTROL_BLEND_SHIFT: u32 = 14;

/// The control-map bits of a cell showing `pair`: base, overlay and blend, autoshader off.
pub fn control_bits(pair: Pair) -> u32 {
    let blend = (pair.blend.clamp(0.0, 1.0) * 255.0).round() as u32;
    ((pair.first as u32 & 0x1F) << CONTROL_BASE_SHIFT)
        | ((pair.second as u32 & 0x1F) << CONTROL_OVERLAY_SHIFT)
        | ((blend & 0xFF) << CONTROL_BLEND_SHIFT)
}

/// The base texture id, overlay id and blend (0–255) of control-map `bits`.
pub fn decode_control(bits: u32) -> (u32, u32, u32) {
    (
        (bits >> CONTROL_BASE_SHIFT) & 0x1F,
        (bits >> CONTROL_OVERLAY_SHIFT) & 0x1F,
        (bits >> CONTROL_BLEND_SHIFT) & 0xFF,
    )
}
/// Colour map alpha that leaves the texture roughness unchanged (0.5).
pub const NEUTRAL_ROUGHNESS: u8 = 128;
/// Terrain3D clamps `vertex_spacing` to this range (`Terrain3D::set_vertex_spacing`).
pub const VERTEX_SPACING_RANGE: (f32, f32) = (0.25, 100.0);

/// How a world is cut into Terrain3D regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub region_size: usize,
    /// Tiles across (x) and down (z).
    pub tiles: (usize, usize),
    /// Terrain3D region location of tile `(0, 0)`; tile `(X, Z)` is region
    /// `(origin.0 + X, origin.1 + Z)`, imported at sample `(location · region_size)`.
    pub origin: (i32, i32),
}

/// Checks `region_size` is one of Terrain3D's region sizes; the error names `region-size`.
pub fn check_region_size(region_size: usize) -> Result<()> {
    if REGION_SIZES.contains(&region_size) {
        return Ok(());
    }
    Err(OrogenError::invalid(
        "region-size",
        format!(
            "{region_size} is not a Terrain3D region size; use a power of two from 64 to 2048 \
             ({})",
            REGION_SIZES.map(|s| s.to_string()).join(", ")
        ),
    ))
}

/// The tile layout of `grid` at `region_size`. Errors name `region-size` (not one of
/// Terrain3D's, or more than 32 regions a side, with the smallest size that fits) and
/// `cell_size` (Terrain3D has one vertex spacing; non-square cells do not fit it).
pub fn layout(grid: Grid, region_size: usize) -> Result<Layout> {
    check_region_size(region_size)?;
    if !grid.is_square() {
        return Err(OrogenError::invalid(
            "cell_size",
            format!(
                "Terrain3D has one vertex spacing for x and z; this world's cells are {} x {} m; \
                 bake with square cells, or save for HTerrain (its map_scale has x and z)",
                grid.dx(),
                grid.dy()
            ),
        ));
    }
    let tiles = (
        grid.width.div_ceil(region_size),
        grid.height.div_ceil(region_size),
    );
    if tiles.0.max(tiles.1) > MAX_REGIONS_PER_SIDE {
        let side = grid.width.max(grid.height);
        let fits = REGION_SIZES
            .iter()
            .find(|&&s| side.div_ceil(s) <= MAX_REGIONS_PER_SIDE);
        let hint = match fits {
            Some(s) => format!("use --region-size {s} or larger"),
            None => "no Terrain3D region size holds it; bake a smaller size".to_string(),
        };
        return Err(OrogenError::invalid(
            "region-size",
            format!(
                "{region_size} cuts this {}x{} world into {}x{} regions, but Terrain3D holds \
                 at most {MAX_REGIONS_PER_SIDE} a side; {hint}",
                grid.width, grid.height, tiles.0, tiles.1
            ),
        ));
    }
    let origin = (-((tiles.0 / 2) as i32), -((tiles.1 / 2) as i32));
    Ok(Layout {
        region_size,
        tiles,
        origin,
    })
}

/// File name of tile `(x, z)` of `kind` (`height`, `control`, `color`) with extension `ext`.
pub fn tile_name(kind: &str, x: usize, z: usize, ext: &str) -> String {
    format!("{kind}_{x}_{z}.{ext}")
}

/// Writes the Terrain3D export of `world` into `dir` in one step (the folder is replaced
/// whole, as `orogen bake` does; see [`super`]): the tiles, `README.txt` and
/// `export.json`, the ground from the shader's default uniforms without paint. Returns the
/// paths written.
pub fn write_terrain3d(world: &World, dir: &Path, region_size: usize) -> Result<Vec<PathBuf>> {
    write_terrain3d_with(world, dir, region_size, &Ground::default())
}

/// [`write_terrain3d`] with the ground from `ground` (a terrain's uniforms and paint).
pub fn write_terrain3d_with(
    world: &World,
    dir: &Path,
    region_size: usize,
    ground: &Ground<'_>,
) -> Result<Vec<PathBuf>> {
    let files = files(world, dir, region_size, ground, None)?;
    write_all_or_nothing(dir, files)
}

/// The files of the export, `bake_json` (if any) among them as `bake.json`.
pub(crate) fn files<'a>(
    world: &'a World,
    dir: &Path,
    region_size: usize,
    ground: &Ground<'_>,
    bake_json: Option<String>,
) -> Result<Vec<(String, Encoder<'a>)>> {
    let grid = world.grid();
    let lay = layout(grid, region_size)?;
    let inputs = GroundInputs::of(world);
    let log_max = drainage_log_max(&inputs);
    let whole = Rect {
        x0: 0,
        y0: 0,
        w: grid.width,
        h: grid.height,
    };
    let colour = surface_colour(world);
    let mut files: Vec<(String, Encoder<'_>)> = Vec::new();
    for z in 0..lay.tiles.1 {
        for x in 0..lay.tiles.0 {
            let win = RegionWindow {
                rect: whole,
                heights: &world.height.data,
                drainage: inputs.drainage,
                sediment: inputs.sediment,
                colour,
            };
            files.extend(region_files(grid, lay, (x, z), win, ground, log_max)?);
        }
    }
    super::export::add_bake_json(&mut files, bake_json);
    let names = files.iter().map(|(n, _)| n.clone()).collect();
    let tail = tail_files(
        grid,
        lay,
        world.height.min_max(),
        colour.is_some(),
        dir,
        names,
    )?;
    files.extend(tail);
    Ok(files)
}

/// The maps region files read, over `rect` (whole-map cells): at least the region's cells
/// inside the world and the one-cell ring around them inside the world
/// ([`region_window`]). `drainage` and `sediment` as [`GroundInputs`] has them; `colour`
/// a layered terrain's surface colour.
#[derive(Clone, Copy, Debug)]
pub struct RegionWindow<'a> {
    pub rect: Rect,
    pub heights: &'a [f32],
    pub drainage: Option<&'a [f32]>,
    pub sediment: Option<&'a [f32]>,
    pub colour: Option<&'a [[u8; 4]]>,
}

/// The cells of region `(x, z)` inside the world of `grid`.
pub fn region_cells(grid: Grid, lay: Layout, (x, z): (usize, usize)) -> Rect {
    let r = lay.region_size;
    let (x0, y0) = (x * r, z * r);
    Rect {
        x0,
        y0,
        w: (grid.width - x0).min(r),
        h: (grid.height - y0).min(r),
    }
}

/// The cells region `(x, z)`'s files read: its cells and the one-cell ring of the ground
/// weights' stencils (slope, curvature, wetness, sediment), clipped to the world.
pub fn region_window(grid: Grid, lay: Layout, at: (usize, usize)) -> Rect {
    let c = region_cells(grid, lay, at);
    let (x0, y0) = (c.x0.saturating_sub(1), c.y0.saturating_sub(1));
    let x1 = (c.x0 + c.w + 1).min(grid.width);
    let y1 = (c.y0 + c.h + 1).min(grid.height);
    Rect {
        x0,
        y0,
        w: x1 - x0,
        h: y1 - y0,
    }
}

/// The files of region `(x, z)` (height, control, colour if `win` has it) from `win`:
/// the same bytes whether `win` is the whole map or the region's window. `log_max` is
/// [`drainage_log_max`] of the whole map.
pub(crate) fn region_files<'a>(
    grid: Grid,
    lay: Layout,
    (x, z): (usize, usize),
    win: RegionWindow<'a>,
    ground: &Ground<'_>,
    log_max: f32,
) -> Result<Vec<(String, Encoder<'a>)>> {
    let (w, h) = (grid.width, grid.height);
    let r = lay.region_size;
    let rect = win.rect;
    let len = rect.len();
    let bad = |what: &str| {
        OrogenError::invalid(
            "region",
            format!("region ({x}, {z}): the window's {what} do not cover {rect:?}"),
        )
    };
    if win.heights.len() != len {
        return Err(bad("heights"));
    }
    if win.drainage.is_some_and(|d| d.len() != len) {
        return Err(bad("drainage"));
    }
    if win.sediment.is_some_and(|d| d.len() != len) {
        return Err(bad("sediment depths"));
    }
    if win.colour.is_some_and(|d| d.len() != len) {
        return Err(bad("colours"));
    }
    let cells = region_cells(grid, lay, (x, z));
    let inputs = GroundInputs {
        grid: Grid::new(rect.w, rect.h, grid.cell_size)?,
        heights: win.heights,
        drainage: win.drainage,
        sediment: win.sediment,
    };
    let pairs = pairs_in(&inputs, ground, log_max, rect, (w, h), cells)?;
    let control: Vec<u32> = pairs.into_iter().map(control_bits).collect();
    // Padded past the world's edge by repeating the edge (the cells' window is the world's
    // edge there).
    let at = (x * r, z * r);
    let local = (at.0 - rect.x0, at.1 - rect.y0);
    let tile_grid = Grid::new(r, r, grid.cell_size)?;
    let mut files: Vec<(String, Encoder<'a>)> = Vec::new();
    let heights = win.heights;
    files.push((
        tile_name("height", x, z, "exr"),
        Box::new(move |out, path| {
            let tile = ScalarMap {
                grid: tile_grid,
                data: window(heights, rect.w, rect.h, local, (r, r)),
            };
            crate::io::exr::encode_exr(&tile, out, path)
        }),
    ));
    files.push((
        tile_name("control", x, z, "exr"),
        Box::new(move |out, path| {
            let padded = window(&control, cells.w, cells.h, (0, 0), (r, r));
            let data = (0..r * r)
                .map(|i| {
                    let (sx, sz) = (at.0 + i % r, at.1 + i / r);
                    let bits = if sx < w && sz < h {
                        padded[i]
                    } else {
                        padded[i] | CONTROL_HOLE
                    };
                    f32::from_bits(bits)
                })
                .collect();
            let tile = ScalarMap {
                grid: tile_grid,
                data,
            };
            crate::io::exr::encode_exr(&tile, out, path)
        }),
    ));
    if let Some(colour) = win.colour {
        files.push((
            tile_name("color", x, z, "png"),
            Box::new(move |out, path| {
                let data = window(colour, rect.w, rect.h, local, (r, r))
                    .into_iter()
                    .map(|[r, g, b, _]| [r, g, b, NEUTRAL_ROUGHNESS])
                    .collect();
                let tile = Field {
                    grid: tile_grid,
                    data,
                };
                crate::io::png16::encode_rgba_png(&tile, out, path)
            }),
        ));
    }
    Ok(files)
}

/// The file names of every region, in the export's order.
pub fn region_names(lay: Layout, colour: bool) -> Vec<String> {
    let mut names = Vec::new();
    for z in 0..lay.tiles.1 {
        for x in 0..lay.tiles.0 {
            names.push(tile_name("height", x, z, "exr"));
            names.push(tile_name("control", x, z, "exr"));
            if colour {
                names.push(tile_name("color", x, z, "png"));
            }
        }
    }
    names
}

/// `README.txt` and `export.json` (listing `names`, the files before them, and the
/// regions), for a world of `grid` with heights `lo..hi`.
fn tail_files(
    grid: Grid,
    lay: Layout,
    (lo, hi): (f32, f32),
    colour: bool,
    dir: &Path,
    names: Vec<String>,
) -> Result<Vec<(String, Encoder<'static>)>> {
    let (w, h) = (grid.width, grid.height);
    let r = lay.region_size;
    let mut tiles_json = Vec::new();
    for z in 0..lay.tiles.1 {
        for x in 0..lay.tiles.0 {
            let at = (x * r, z * r);
            let loc = (lay.origin.0 + x as i32, lay.origin.1 + z as i32);
            tiles_json.push(serde_json::json!({
                "tile": [x, z],
                "region_location": [loc.0, loc.1],
                "import_position": [loc.0 * r as i32, loc.1 * r as i32],
                "samples": [at.0, at.1, (w - at.0).min(r), (h - at.1).min(r)],
                "height": tile_name("height", x, z, "exr"),
                "control": tile_name("control", x, z, "exr"),
                "color": colour.then(|| tile_name("color", x, z, "png")),
            }));
        }
    }
    let mut manifest = serde_json::Map::new();
    manifest.insert("target".into(), "terrain3d".into());
    manifest.insert("orogen_version".into(), crate::VERSION.into());
    manifest.insert("size".into(), serde_json::json!([w, h]));
    manifest.insert("region_size".into(), r.into());
    manifest.insert("vertex_spacing".into(), grid.cell_size.into());
    manifest.insert("height_min".into(), lo.into());
    manifest.insert("height_max".into(), hi.into());
    manifest.insert(
        "tiles".into(),
        serde_json::json!([lay.tiles.0, lay.tiles.1]),
    );
    manifest.insert(
        "origin_region".into(),
        serde_json::json!([lay.origin.0, lay.origin.1]),
    );
    manifest.insert("tile_list".into(), serde_json::Value::Array(tiles_json));
    manifest.insert("texture_ids".into(), serde_json::json!(GROUND_MATERIALS));
    let readme = readme(grid, lay, (lo, hi), colour);
    manifest_and_readme(names, dir, manifest, readme)
}

/// Writes region `(x, z)`'s files from `win` into the folder `staged` (errors name the
/// file in `shown`, the folder the user asked for): one rank's part of a tiled bake's
/// Terrain3D export (issue #41), the same bytes as the whole-map export's. Returns the
/// file names.
#[allow(clippy::too_many_arguments)]
pub fn write_region(
    staged: &Path,
    shown: &Path,
    grid: Grid,
    region_size: usize,
    at: (usize, usize),
    win: RegionWindow<'_>,
    ground: &Ground<'_>,
    log_max: f32,
) -> Result<Vec<String>> {
    let lay = layout(grid, region_size)?;
    let files = region_files(grid, lay, at, win, ground, log_max)?;
    write_into(staged, shown, files)
}

/// Writes the export's `README.txt` and `export.json` into `staged` for a world of `grid`
/// with heights `lo..hi` whose regions (with a colour map if `colour`) and `bake.json`
/// are written beside them: rank 0's part of a tiled bake's Terrain3D export. Returns the
/// file names.
pub fn write_tail(
    staged: &Path,
    shown: &Path,
    grid: Grid,
    region_size: usize,
    lo_hi: (f32, f32),
    colour: bool,
) -> Result<Vec<String>> {
    let lay = layout(grid, region_size)?;
    let mut names = region_names(lay, colour);
    names.push("bake.json".into());
    let files = tail_files(grid, lay, lo_hi, colour, shown, names)?;
    write_into(staged, shown, files)
}

fn readme(grid: Grid, lay: Layout, (lo, hi): (f32, f32), colour: bool) -> String {
    let r = lay.region_size;
    let (tx, tz) = lay.tiles;
    let spacing = grid.cell_size;
    let (smin, smax) = VERTEX_SPACING_RANGE;
    let spacing_note = if spacing < smin || spacing > smax {
        format!(
            "\nNOTE: Terrain3D clamps vertex_spacing to {smin}..{smax}; this world's {spacing} m \
             cells do not fit, so the terrain will not have its true width (heights stay in \
             metres).\n"
        )
    } else {
        String::new()
    };
    let colour_line = if colour {
        "color_X_Z.png    colour map, RGBA8: the surface colour of the exposed material\n                 \
         (alpha 128 = roughness unchanged).\n"
    } else {
        "(no colour map: this terrain has one material, and Terrain3D's default white\n \
         colour map leaves your textures as they are.)\n"
    };
    format!(
        "Orogen export for Terrain3D
===========================

World: {w} x {h} samples, vertex spacing {spacing} m, heights {lo:.2} .. {hi:.2} m.
Region size {r}: {tx} x {tz} tiles, each {r} x {r} samples.
Tile X_Z holds samples [X*{r}, X*{r}+{r}) x [Z*{r}, Z*{r}+{r}); it is Terrain3D region
({ox}+X, {oz}+Z), imported at position ((({ox})+X)*{r}, (({oz})+Z)*{r}) (export.json lists them all).
Samples past the world's edge repeat the edge and are holes in the control map.
{spacing_note}
Files
-----
height_X_Z.exr   heights, 32-bit float, one channel, metres (import scale 1, offset 0).
control_X_Z.exr  control map (Terrain3D's bit field in FORMAT_RF): per sample the base
                 texture, the overlay texture and their blend, from Orogen's ground
                 weights (what its terrain shader shows, hand-painted ground included);
                 autoshader off; hole for the padding. The texture ids are Orogen's
                 eight ground layers, so set up eight texture slots in this order:
                   0 rock, 1 cliff, 2 scree, 3 soil, 4 grass, 5 dry grass, 6 sand, 7 snow
                 (Orogen's own textures are in addons/orogen/runtime/textures/:
                 <name>_albedo_height.png, albedo with height in alpha, and
                 <name>_normal_roughness.png, normal with roughness in alpha, which is
                 Terrain3D's packing; dry grass is dry_grass_*).
{colour_line}export.json      the same, for scripts.

Import
------
1. Select your Terrain3D node; set Regions > Region Size to {r} and
   Mesh > Vertex Spacing to {spacing}.
2. Run this from an EditorScript (File > New Script, extends EditorScript, then
   File > Run), with the Terrain3D node selected, then save the data directory
   (Terrain3D > Data Directory):

   var dir := \"<this folder>\"
   var t3d: Terrain3D = EditorInterface.get_selection().get_selected_nodes()[0]
   var info: Dictionary = JSON.parse_string(FileAccess.get_file_as_string(dir + \"/export.json\"))
   for tile in info.tile_list:
       var images: Array[Image] = [
           Image.load_from_file(dir + \"/\" + tile.height),
           Image.load_from_file(dir + \"/\" + tile.control),
           Image.load_from_file(dir + \"/\" + tile.color) if tile.color else null]
       var p: Array = tile.import_position
       t3d.data.import_images(images, Vector3(p[0], 0, p[1]) * t3d.vertex_spacing)

   Or, one tile at a time with Terrain3D's importer (addons/terrain_3d/tools/importer.tscn):
   pick height_X_Z.exr, control_X_Z.exr{colour_pick} as the files, set Import
   Position to the tile's import_position, Import Scale 1, Height Offset 0, Run Import.
",
        w = grid.width,
        h = grid.height,
        ox = lay.origin.0,
        oz = lay.origin.1,
        colour_pick = if colour { " and color_X_Z.png" } else { "" },
    )
}
