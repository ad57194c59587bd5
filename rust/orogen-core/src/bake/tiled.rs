//! A tiled bake's own files (issue #41): each rank writes its tile's maps into the one
//! staging folder of the bake ([`super::folder::stage`], made by rank 0 and shared), so no
//! rank holds a whole map; rank 0 then writes `bake.json`, which lists every tile and its
//! files, and puts the folder in place ([`super::folder::commit`]): all-new or all-old.
//!
//! Names: `{map}_r{row}_c{col}.exr` (row and column among the tiles, from 0), 32-bit float
//! EXR over the tile's own cells, or `.png` for a mask (`rivers`) or labels (`basins`),
//! encoded as the whole map's; `bake.json`'s `tiles` says where each tile lies in the
//! whole grid (`x0`, `y0`, `width`, `height` in cells).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{OrogenError, Result};
use crate::field::{Field, Grid, Rect, ScalarMap};
use crate::recipe::Recipe;
use crate::runner::StageTiming;
use crate::world::MapData;

/// The file of tile (`row`, `col`)'s map `map` (a 32-bit float EXR).
pub fn tile_file_name(map: &str, row: usize, col: usize) -> String {
    format!("{map}_r{row}_c{col}.exr")
}

/// One map of a tile, row-major over the tile's cells.
#[derive(Clone, Copy, Debug)]
pub enum TileMap<'a> {
    /// Values, as a 32-bit float EXR ([`tile_file_name`]).
    Scalar(&'a [f32]),
    /// 0 or 1, as a grey PNG (`{map}_rR_cC.png`), encoded as the whole map's `rivers.png`.
    Mask(&'a [u8]),
    /// Ids, as an RGB PNG with one colour per id, encoded as the whole map's `basins.png`.
    Labels(&'a [u32]),
    /// Small indices, as a grey PNG encoded as the whole map's (`material.png`).
    Index(&'a [u8]),
    /// sRGB colours, as an RGBA PNG encoded as the whole map's (`splat.png`).
    Rgba(&'a [[u8; 4]]),
    /// Vectors, as a two-channel 32-bit float EXR (`velocity`).
    Vector(&'a [[f32; 2]]),
}

impl TileMap<'_> {
    fn len(&self) -> usize {
        match self {
            TileMap::Scalar(v) => v.len(),
            TileMap::Mask(v) => v.len(),
            TileMap::Labels(v) => v.len(),
            TileMap::Index(v) => v.len(),
            TileMap::Rgba(v) => v.len(),
            TileMap::Vector(v) => v.len(),
        }
    }
}

/// One tile of a tiled bake, as `bake.json` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TileEntry {
    pub row: usize,
    pub col: usize,
    /// The tile's first column and row in the whole grid, cells.
    pub x0: usize,
    pub y0: usize,
    pub width: usize,
    pub height: usize,
    /// Its files, in the bake's folder.
    pub files: Vec<String>,
}

/// Writes the tile at `rect` (row `row`, column `col` among the tiles; `grid` the whole
/// grid, for the cell size) of each `(map, values)` into `staged` as
/// [`tile_file_name`]`(map, row, col)`; errors name the file in `shown` (the output folder
/// the user asked for). Returns the tile's entry for `bake.json`.
pub fn write_tile_maps(
    staged: &Path,
    shown: &Path,
    grid: Grid,
    rect: Rect,
    (row, col): (usize, usize),
    maps: &[(&str, TileMap)],
) -> Result<TileEntry> {
    let tile_grid = Grid::with_cells(rect.w, rect.h, grid.dx(), grid.dy())?;
    let mut files = Vec::with_capacity(maps.len());
    for &(name, map) in maps {
        let file = match map {
            TileMap::Scalar(_) | TileMap::Vector(_) => tile_file_name(name, row, col),
            _ => format!("{name}_r{row}_c{col}.png"),
        };
        let path = staged.join(&file);
        let shown = shown.join(&file);
        if map.len() != rect.len() {
            return Err(OrogenError::invalid(
                file,
                format!(
                    "{} values for the tile's {}x{} cells",
                    map.len(),
                    rect.w,
                    rect.h
                ),
            ));
        }
        if let TileMap::Scalar(values) = map {
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(OrogenError::Numerical {
                    field: file,
                    reason: format!(
                        "has {} at cell ({}, {}); a map with NaN or inf is not written",
                        values[i],
                        rect.x0 + i % rect.w,
                        rect.y0 + i / rect.w
                    ),
                });
            }
        }
        let f = File::create(&path).map_err(|e| OrogenError::io("cannot create", &shown, e))?;
        let mut w = BufWriter::new(f);
        match map {
            TileMap::Scalar(values) => {
                let m = ScalarMap {
                    grid: tile_grid,
                    data: values.to_vec(),
                };
                crate::io::exr::encode_exr(&m, &mut w, &shown)?
            }
            TileMap::Mask(values) => {
                let m = Field {
                    grid: tile_grid,
                    data: values.to_vec(),
                };
                crate::io::png16::encode_mask_png(&m, &mut w, &shown)?
            }
            TileMap::Labels(values) => {
                let m = Field {
                    grid: tile_grid,
                    data: values.to_vec(),
                };
                crate::io::png16::encode_labels_png(&m, &mut w, &shown)?
            }
            TileMap::Index(values) => {
                let m = Field {
                    grid: tile_grid,
                    data: values.to_vec(),
                };
                crate::io::png16::encode_index_png(&m, &mut w, &shown)?
            }
            TileMap::Rgba(values) => {
                let m = Field {
                    grid: tile_grid,
                    data: values.to_vec(),
                };
                crate::io::png16::encode_rgba_png(&m, &mut w, &shown)?
            }
            TileMap::Vector(values) => {
                if let Some(i) = values
                    .iter()
                    .position(|v| !(v[0].is_finite() && v[1].is_finite()))
                {
                    return Err(OrogenError::Numerical {
                        field: file,
                        reason: format!(
                            "has {:?} at cell ({}, {}); a map with NaN or inf is not written",
                            values[i],
                            rect.x0 + i % rect.w,
                            rect.y0 + i / rect.w
                        ),
                    });
                }
                let m = Field {
                    grid: tile_grid,
                    data: values.to_vec(),
                };
                crate::io::exr::encode_exr2(&m, &mut w, &shown)?
            }
        }
        let f = w
            .into_inner()
            .map_err(|e| OrogenError::io("cannot write", &shown, e.into_error()))?;
        f.sync_all()
            .map_err(|e| OrogenError::io("cannot write", &shown, e))?;
        files.push(file);
    }
    Ok(TileEntry {
        row,
        col,
        x0: rect.x0,
        y0: rect.y0,
        width: rect.w,
        height: rect.h,
        files,
    })
}

/// One of a tiled bake's tile maps from a map of the tile's world (`MapData` over the
/// tile's cells).
pub fn tile_map(map: &MapData) -> TileMap<'_> {
    match map {
        MapData::Scalar(m) => TileMap::Scalar(&m.data),
        MapData::Mask(m) => TileMap::Mask(&m.data),
        MapData::Labels(m) => TileMap::Labels(&m.data),
        MapData::Index(m) => TileMap::Index(&m.data),
        MapData::Rgba(m) => TileMap::Rgba(&m.data),
        MapData::Vector(m) => TileMap::Vector(&m.data),
    }
}

/// Writes one whole map of a tiled bake (rank 0's, small: the `strata_column` row) into
/// `staged` as the whole bake writes it (`{name}.png` or `.exr`); returns the file name.
pub fn write_whole_map(staged: &Path, shown: &Path, name: &str, map: &MapData) -> Result<String> {
    let file = match map {
        MapData::Scalar(_) | MapData::Vector(_) => format!("{name}.exr"),
        _ => format!("{name}.png"),
    };
    let path = staged.join(&file);
    let shown = shown.join(&file);
    let f = File::create(&path).map_err(|e| OrogenError::io("cannot create", &shown, e))?;
    let mut w = BufWriter::new(f);
    match map {
        MapData::Scalar(m) => crate::io::exr::encode_exr(m, &mut w, &shown)?,
        MapData::Vector(m) => crate::io::exr::encode_exr2(m, &mut w, &shown)?,
        MapData::Mask(m) => crate::io::png16::encode_mask_png(m, &mut w, &shown)?,
        MapData::Labels(m) => crate::io::png16::encode_labels_png(m, &mut w, &shown)?,
        MapData::Index(m) => crate::io::png16::encode_index_png(m, &mut w, &shown)?,
        MapData::Rgba(m) => crate::io::png16::encode_rgba_png(m, &mut w, &shown)?,
    }
    let f = w
        .into_inner()
        .map_err(|e| OrogenError::io("cannot write", &shown, e.into_error()))?;
    f.sync_all()
        .map_err(|e| OrogenError::io("cannot write", &shown, e))?;
    Ok(file)
}

/// What a tiled bake's `bake.json` holds: `bake.json`'s usual keys (no whole maps) and the
/// tiles.
#[derive(Serialize)]
struct TiledInfo<'a> {
    orogen_version: &'static str,
    recipe_path: Option<String>,
    seed: u64,
    size: (usize, usize),
    cell_size: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    cell_size_y: Option<f32>,
    height_min: f32,
    height_max: f32,
    device: crate::recipe::Device,
    stages: &'a [StageTiming],
    total_seconds: f64,
    /// Whole maps of the bake besides the tiles (rank 0's, small: `strata_column`).
    maps: &'a [&'a str],
    /// `rivers.json` when the bake drew river curves.
    #[serde(skip_serializing_if = "Option::is_none")]
    rivers: Option<&'static str>,
    tiles: TilesInfo<'a>,
    recipe: &'a Recipe,
    recipe_ron: String,
}

#[derive(Serialize)]
struct TilesInfo<'a> {
    columns: usize,
    rows: usize,
    tiles: &'a [TileEntry],
}

/// Writes `bake.json` of a tiled bake into `staged`: the whole grid, its lowest and highest
/// height `(lo, hi)`, the stages' timings, `columns × rows` tiles and each tile's entry,
/// the whole maps rank 0 wrote beside the tiles (`maps`) and, with `rivers`,
/// `"rivers": "rivers.json"` (so a later bake into the folder knows these files).
#[allow(clippy::too_many_arguments)]
pub fn write_tiled_bake_json(
    staged: &Path,
    shown: &Path,
    recipe: &Recipe,
    grid: Grid,
    (lo, hi): (f32, f32),
    timings: &[StageTiming],
    recipe_path: Option<&Path>,
    (columns, rows): (usize, usize),
    tiles: &[TileEntry],
    maps: &[&str],
    rivers: bool,
) -> Result<PathBuf> {
    let info = TiledInfo {
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
        maps,
        rivers: rivers.then_some(super::RIVERS_JSON),
        tiles: TilesInfo {
            columns,
            rows,
            tiles,
        },
        recipe,
        recipe_ron: recipe.to_ron_string(),
    };
    let shown = shown.join("bake.json");
    let mut text = serde_json::to_string_pretty(&info)
        .map_err(|e| OrogenError::bad_file(&shown, format!("cannot build bake.json: {e}")))?;
    text.push('\n');
    std::fs::write(staged.join("bake.json"), text)
        .map_err(|e| OrogenError::io("cannot write", &shown, e))?;
    Ok(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_reads_back_with_its_values_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let grid = Grid::new(7, 5, 10.0).unwrap();
        let rect = Rect {
            x0: 3,
            y0: 2,
            w: 4,
            h: 3,
        };
        let values: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 1.0).collect();
        let entry = write_tile_maps(
            dir.path(),
            Path::new("out"),
            grid,
            rect,
            (1, 1),
            &[("height", TileMap::Scalar(&values))],
        )
        .unwrap();
        assert_eq!(entry.files, ["height_r1_c1.exr"]);
        let back = crate::io::exr::read_exr(&dir.path().join("height_r1_c1.exr")).unwrap();
        assert_eq!((back.grid.width, back.grid.height), (4, 3));
        assert_eq!(back.data, values);
        // A non-finite value is refused, naming the file and the whole grid's cell.
        let mut bad = values.clone();
        bad[5] = f32::NAN;
        let e = write_tile_maps(
            dir.path(),
            Path::new("out"),
            grid,
            rect,
            (1, 1),
            &[("height", TileMap::Scalar(&bad))],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("height_r1_c1.exr") && e.contains("(4, 3)"),
            "{e}"
        );
    }
}
