//! A terrain's files, as Terrain3D's data import and export: a heightmap file read in as
//! the terrain (`load_heightmap`), and the terrain written out with `orogen bake`'s
//! writer (`save_maps`) or for Terrain3D and HTerrain (`save_for_terrain3d`,
//! `save_for_hterrain`).

use godot::prelude::*;
use orogen_core::bake::ground_weights::Ground;
use orogen_core::field::{CellSize, Grid, Heightfield};
use orogen_core::io::heightmap::{Format as MapFormat, HeightmapSource};
use orogen_core::World;

use super::TerrainWorld;
use crate::convert;
use crate::data::TerrainData;

#[godot_api(secondary)]
impl TerrainWorld {
    /// Replaces the terrain by a heightmap file (EXR or 16-bit PNG; see the recipe's
    /// `Heightmap`), keeping the current cell size (or the recipe's, `(dx, dy)` included)
    /// unless the file is an EXR that records one (Orogen's do). `nodata` marks the file's missing cells as the recipe's
    /// `nodata` does (a value as stored, or `NAN` for float files whose holes are NaN; the
    /// default, `INF`, means none): they are outlets held at the lowest valid height, are
    /// not drawn, and make the `nodata` map. Returns "" or the error.
    #[func]
    pub fn load_heightmap(
        &mut self,
        path: GString,
        #[opt(default = f64::INFINITY)] nodata: f64,
    ) -> GString {
        let nodata = (nodata != f64::INFINITY).then_some(nodata as f32);
        match self.read_heightmap(&path.to_string(), nodata) {
            Ok(world) => match TerrainData::from_world(&world) {
                Ok(data) => {
                    self.set_data(Some(data));
                    GString::new()
                }
                Err(e) => GString::from(e.as_str()),
            },
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// Writes the current heights and maps into `dir` with the same writer and file names
    /// as `orogen bake` (`height.exr`, `height.png`, `height.r16`, `preview.png`, maps).
    /// Returns "" or the error.
    #[func]
    pub fn save_maps(&self, dir: GString) -> GString {
        let world = match self.full_world() {
            Ok(w) => w,
            Err(e) => return GString::from(e.as_str()),
        };
        let dir = convert::globalize(&dir.to_string());
        match orogen_core::bake::write_maps(&world, &dir) {
            Ok(_) => GString::new(),
            Err(e) => GString::from(e.to_string().as_str()),
        }
    }

    /// Writes the terrain for Terrain3D into `dir` (replacing the folder in one step, as
    /// `save_maps` does): `region_size²` tiles `height_X_Z.exr` (f32 metres),
    /// `control_X_Z.exr` (per sample base texture, overlay and blend from the ground weights
    /// the shader shows, the painted ground included; texture ids 0 rock … 7 snow; holes
    /// past the edge), `color_X_Z.png` (layered
    /// terrains), `README.txt` with the import steps and `export.json` (tile positions).
    /// `region_size` is one of Terrain3D's: 64, 128, 256, 512, 1024, 2048. Returns "" or
    /// the error, which names `region-size` for a size Terrain3D has not.
    #[func]
    pub fn save_for_terrain3d(&self, dir: GString, region_size: i64) -> GString {
        let world = match self.full_world() {
            Ok(w) => w,
            Err(e) => return GString::from(e.as_str()),
        };
        let Ok(region_size) = usize::try_from(region_size) else {
            let e = orogen_core::OrogenError::invalid(
                "region-size",
                format!("{region_size} is not a Terrain3D region size (64 to 2048)"),
            );
            return GString::from(e.to_string().as_str());
        };
        let dir = convert::globalize(&dir.to_string());
        let (params, paint) = self.ground_for_export(world.grid());
        let ground = Ground {
            params,
            paint: paint.as_ref(),
        };
        match orogen_core::bake::export_terrain3d::write_terrain3d_with(
            &world,
            &dir,
            region_size,
            &ground,
        ) {
            Ok(_) => GString::new(),
            Err(e) => GString::from(e.to_string().as_str()),
        }
    }

    /// Writes the terrain for HTerrain into `dir` (replacing the folder in one step):
    /// `height.exr` (f32 metres), `splat.png` (CLASSIC4: grass, rock, snow, bare ground) and
    /// `splat16_0.png`, `splat16_1.png` (MULTISPLAT16: the eight ground layers), weights
    /// from the ground the shader shows (painted ground included) summing to 255, on the
    /// smallest 2ⁿ+1 square that holds the terrain (its samples unchanged, the rest
    /// repeating the edge), `color.png` (layered terrains), `README.txt` with the import
    /// steps and `export.json`. Returns "" or the error.
    #[func]
    pub fn save_for_hterrain(&self, dir: GString) -> GString {
        let world = match self.full_world() {
            Ok(w) => w,
            Err(e) => return GString::from(e.as_str()),
        };
        let dir = convert::globalize(&dir.to_string());
        let (params, paint) = self.ground_for_export(world.grid());
        let ground = Ground {
            params,
            paint: paint.as_ref(),
        };
        match orogen_core::bake::export_hterrain::write_hterrain_with(&world, &dir, &ground) {
            Ok(_) => GString::new(),
            Err(e) => GString::from(e.to_string().as_str()),
        }
    }
}

impl TerrainWorld {
    /// The heightmap file at `path` as a world (see `load_heightmap`).
    fn read_heightmap(&self, path: &str, nodata: Option<f32>) -> Result<World, String> {
        let file = convert::globalize(path);
        let file_str = file.to_string_lossy().to_string();
        let (dx, dy) = self
            .world
            .as_ref()
            .map(|w| (w.grid().dx(), w.grid().dy()))
            .or_else(|| {
                self.recipe
                    .as_ref()
                    .and_then(|r| r.bind().parsed().ok())
                    .map(|r| (r.cell_size.dx(), r.cell_size.dy()))
            })
            .unwrap_or((1.0, 1.0));
        let mut src = HeightmapSource {
            path: file_str.clone(),
            nodata,
            ..Default::default()
        };
        src.validate("path").map_err(|e| e.to_string())?;
        let base = file.parent().map(|p| p.to_path_buf()).unwrap_or_default();
        let (format, samples) = src.read_samples(&base).map_err(|e| e.to_string())?;
        let recorded = if format == MapFormat::Exr {
            orogen_core::io::exr::recorded_cell_size(&file).map_err(|e| e.to_string())?
        } else {
            None
        };
        let (dx, dy) = recorded.unwrap_or((dx, dy));
        src.cell_size = Some(CellSize::Rect(dx, dy));
        let grid = Grid::with_cells(samples.width(), samples.height(), dx, dy)
            .map_err(|e| e.to_string())?;
        let (height, mask): (Heightfield, _) = src
            .load_with_nodata(grid, &base)
            .map_err(|e| e.to_string())?;
        let mut world = World::new(height, 0);
        if let Some(mask) = mask {
            world.set_nodata(mask);
        }
        Ok(world)
    }
}
