//! `TerrainWorld`: draws a terrain the way Terrain3D does (a geometry clipmap built once,
//! centred on the camera and displaced on the GPU from a 32-bit float height texture; see
//! `clipmap`), keeps a `HeightMapShape3D` collision in step with the heights, and answers
//! height/normal/map queries.
//!
//! Coordinates: local x = east, z = south (image rows), y = up; 1 unit = 1 metre; the
//! terrain is centred on the origin, so cell `(i, j)` lies at
//! `((i - (w-1)/2) · dx, h, (j - (d-1)/2) · dy)`, where `dx = dy = cell_size` for square
//! cells and `(dx, dy)` for a non-square grid (a DEM in geographic coordinates). The
//! collision of a non-square grid is resampled to square cells of the smaller spacing
//! (`HeightMapShape3D` has one spacing, and a non-uniformly scaled shape is not supported);
//! its edge may fall up to half a cell short of the drawn terrain's.
//!
//! Nodata cells (a `nodata` mask among the maps: a DEM's holes) are not drawn.

use godot::classes::base_material_3d::Transparency;
use godot::classes::image::Format;
use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::node::InternalMode;
use godot::classes::{
    ArrayMesh, Camera3D, CollisionShape3D, EditorInterface, Engine, HeightMapShape3D, INode3D,
    Image, ImageTexture, MeshInstance3D, Node3D, PlaneMesh, Shader, ShaderMaterial,
    StandardMaterial3D, StaticBody3D,
};
use godot::prelude::*;
use orogen_core::bake::collision::{collision_regions, CollisionRegion};
use orogen_core::bake::lake_display::drawn_lakes;
use orogen_core::field::{CellSize, Grid, Heightfield};
use orogen_core::io::heightmap::{Format as MapFormat, HeightmapSource};
use orogen_core::world::names;
use orogen_core::{MapData, World};

use crate::clipmap::{self, Layout};
use crate::convert;
use crate::data::TerrainData;
use crate::prepared::{slim, Prepared};
use crate::recipe::TerrainRecipe;
use crate::simulator::ErosionSimulator;

/// The terrain shader (also at `addons/orogen/runtime/terrain.gdshader`).
const SHADER: &str = include_str!("../../../addons/orogen/runtime/terrain.gdshader");

/// A terrain in the scene: display, collision and queries over a `TerrainData`.
#[derive(GodotClass)]
#[class(tool, base = Node3D)]
pub struct TerrainWorld {
    /// The recipe `generate()` runs (and an `ErosionSimulator` without its own recipe).
    #[export]
    #[var(set = set_recipe)]
    recipe: Option<Gd<TerrainRecipe>>,
    /// The current terrain; setting it rebuilds display and collision.
    #[export]
    #[var(set = set_data)]
    pub(crate) data: Option<Gd<TerrainData>>,
    /// Whether a `StaticBody3D` with a `HeightMapShape3D` follows the heights.
    #[export]
    #[var(set = set_collision_enabled)]
    collision_enabled: bool,
    /// Level of detail: quads from the camera to the edge of each clipmap level (even, 8 to
    /// 192). Level 0 draws every cell within about this many cells of the camera; each
    /// coarser level doubles the step. A terrain up to 513² cells (or up to about twice
    /// this many cells across) is drawn whole at full detail.
    #[export]
    #[var(set = set_lod_radius)]
    lod_radius: i32,
    /// A sea: a flat water plane at `sea_level` reaching past the horizon, with the terrain
    /// under it drawn as sea floor and sand along its shores.
    #[export]
    #[var(set = set_sea_enabled)]
    sea_enabled: bool,
    /// The sea's surface, metres (in the terrain's heights).
    #[export]
    #[var(set = set_sea_level)]
    sea_level: f32,
    /// Painted uplift, m/yr, one value per cell (`FORMAT_RF`); null: the recipe's `uplift`.
    /// The dock's brushes paint it; it is saved with the scene.
    #[export]
    #[var(get = get_uplift_paint, set = set_uplift_paint)]
    uplift_paint: PhantomVar<Option<Gd<Image>>>,
    /// Painted precipitation, m/yr (≥ 0), one value per cell (`FORMAT_RF`); null: the
    /// recipe's. Runs use it for every `StreamPower` stage.
    #[export]
    #[var(get = get_precipitation_paint, set = set_precipitation_paint)]
    precipitation_paint: PhantomVar<Option<Gd<Image>>>,

    /// The data's heights (with uplift, nodata and a Graph domain's rivers) as plain Rust,
    /// for queries; its maps live only in `data` (see [`slim`]).
    pub(crate) world: Option<World>,
    /// The finite lowest and highest height of `world`, found at the first ray pick after
    /// the world changed ([`TerrainWorld::set_world`] forgets it).
    pub(crate) height_range: std::cell::Cell<Option<(f32, f32)>>,
    mesh_instance: Option<Gd<MeshInstance3D>>,
    /// The clipmap layout the mesh was built for, its vertex and index counts.
    lod: Option<(Layout, usize, usize)>,
    /// The grid the LOD follows the camera over, and the centre last sent to the shader.
    lod_grid: Option<Grid>,
    lod_centre: [f32; 2],
    pub(crate) material: Option<Gd<ShaderMaterial>>,
    height_texture: Option<Gd<ImageTexture>>,
    map_textures: Vec<(&'static str, Gd<ImageTexture>)>,
    /// The surface colour of a layered terrain (RGBA8, mipmapped), updated in place.
    colour_texture: Option<Gd<ImageTexture>>,
    /// A hydraulic run's water depth (RF), updated in place.
    water_texture: Option<Gd<ImageTexture>>,
    body: Option<Gd<StaticBody3D>>,
    /// The collision's regions (`HeightMapShape3D` each), in `collision_regions` order.
    shapes: Vec<Gd<CollisionShape3D>>,
    /// Painted uplift and precipitation (see `paint`).
    pub(crate) paint: crate::paint::PaintMaps,
    /// The sea plane while `sea_enabled`.
    sea: Option<Gd<MeshInstance3D>>,
    base: Base<Node3D>,
}

#[godot_api]
impl INode3D for TerrainWorld {
    fn init(base: Base<Node3D>) -> Self {
        TerrainWorld {
            recipe: None,
            data: None,
            collision_enabled: true,
            lod_radius: clipmap::DEFAULT_RADIUS as i32,
            sea_enabled: false,
            sea_level: 0.0,
            sea: None,
            uplift_paint: PhantomVar::default(),
            precipitation_paint: PhantomVar::default(),
            world: None,
            height_range: std::cell::Cell::new(None),
            mesh_instance: None,
            lod: None,
            lod_grid: None,
            lod_centre: [f32::NAN; 2],
            material: None,
            height_texture: None,
            map_textures: Vec::new(),
            colour_texture: None,
            water_texture: None,
            body: None,
            shapes: Vec::new(),
            paint: Default::default(),
            base,
        }
    }

    fn ready(&mut self) {
        self.rebuild();
        self.update_sea();
        // Build the display mesh for the recipe's size now (scene load), not in the middle of
        // a run's live updates.
        if self.world.is_none() {
            if let Some(r) = self.recipe.as_ref().and_then(|r| r.bind().parsed().ok()) {
                if let Ok(grid) = r.grid() {
                    self.prepare_mesh(grid);
                }
            }
        }
    }

    fn process(&mut self, _delta: f64) {
        self.follow_camera();
    }
}

#[godot_api]
impl TerrainWorld {
    /// A painted map changed (`uplift` or `precipitation`): a dab, an undo, an import or
    /// a clear.
    #[signal]
    pub(crate) fn paint_changed(map: GString);

    #[func]
    fn get_uplift_paint(&self) -> Option<Gd<Image>> {
        self.get_paint_image("uplift".into())
    }

    #[func]
    fn set_uplift_paint(&mut self, img: Option<Gd<Image>>) {
        self.set_paint_image(0, img);
    }

    #[func]
    fn get_precipitation_paint(&self) -> Option<Gd<Image>> {
        self.get_paint_image("precipitation".into())
    }

    #[func]
    fn set_precipitation_paint(&mut self, img: Option<Gd<Image>>) {
        self.set_paint_image(1, img);
    }

    /// Emitted after `data` changed and display and collision were rebuilt.
    #[signal]
    fn data_changed();
    /// Emitted after `recipe` was replaced by another resource (or null). Edits inside the
    /// recipe are the recipe's own `changed` signal.
    #[signal]
    fn recipe_changed();

    /// Replaces the recipe; emits `recipe_changed` when it is a different resource.
    #[func]
    pub fn set_recipe(&mut self, recipe: Option<Gd<TerrainRecipe>>) {
        if recipe != self.recipe {
            self.recipe = recipe;
            self.signals().recipe_changed().emit();
        }
    }

    /// Sets the terrain and rebuilds display and collision (what undo/redo calls).
    #[func]
    pub fn set_data(&mut self, data: Option<Gd<TerrainData>>) {
        self.data = data;
        self.rebuild();
        self.signals().data_changed().emit();
    }

    /// Turns the collision body on or off.
    #[func]
    pub fn set_collision_enabled(&mut self, enabled: bool) {
        self.collision_enabled = enabled;
        self.rebuild_collision();
    }

    #[func]
    pub fn set_sea_enabled(&mut self, enabled: bool) {
        self.sea_enabled = enabled;
        self.update_sea();
    }

    #[func]
    pub fn set_sea_level(&mut self, level: f32) {
        if level.is_finite() {
            self.sea_level = level;
        } else {
            godot_error!("TerrainWorld: sea_level must be finite, got {level}");
        }
        self.update_sea();
    }

    /// The sea plane (an internal child), or null while `sea_enabled` is off.
    #[func]
    pub fn get_sea_mesh(&self) -> Option<Gd<MeshInstance3D>> {
        self.sea.clone()
    }

    /// Sets the clipmap's `R` (see `lod_radius`) and rebuilds the mesh when it changes.
    #[func]
    pub fn set_lod_radius(&mut self, radius: i32) {
        self.lod_radius = radius.clamp(clipmap::MIN_RADIUS as i32, clipmap::MAX_RADIUS as i32);
        if let Some(grid) = self.lod_grid {
            self.prepare_mesh(grid);
        }
    }

    /// The level-of-detail mesh: `radius` (R), `levels`, `vertices` and `triangles` it holds
    /// (every vertex is submitted each frame; zero-area triangles included), `full_detail`
    /// (whether it draws every cell of the terrain) and `centre` (the LOD centre in cell
    /// coordinates). Empty before the terrain is first shown.
    #[func]
    pub fn get_lod_info(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        if let Some((layout, vertices, indices)) = self.lod {
            d.set("radius", layout.radius as i64);
            d.set("levels", layout.top as i64 + 1);
            d.set("vertices", vertices as i64);
            d.set("triangles", (indices / 3) as i64);
            d.set("full_detail", layout.fixed);
            d.set(
                "centre",
                Vector2::new(self.lod_centre[0], self.lod_centre[1]),
            );
        }
        d
    }

    /// Moves the level-of-detail centre to the camera now (it follows the active camera
    /// every frame; the editor's 3D viewport camera in the editor).
    #[func]
    pub fn follow_camera(&mut self) {
        let Some(camera) = self.active_camera() else {
            return;
        };
        if !self.base().is_inside_tree() || !camera.is_inside_tree() {
            return;
        }
        let local = self.base().to_local(camera.get_global_position());
        self.set_lod_centre_local(local);
    }

    /// Terrain height (metres) at local `x`, `z`, bilinear between cells, clamped to the
    /// edge outside the terrain; 0 without data.
    #[func]
    pub fn get_height(&self, x: f32, z: f32) -> f32 {
        match &self.world {
            Some(w) => {
                let (fx, fy) = cell_coords(w.grid(), x, z);
                w.height.sample_bilinear(fx, fy)
            }
            None => 0.0,
        }
    }

    /// Unit surface normal at local `x`, `z` (central differences of the bilinear height,
    /// one cell apart); straight up without data.
    #[func]
    pub fn get_normal(&self, x: f32, z: f32) -> Vector3 {
        let Some(w) = &self.world else {
            return Vector3::UP;
        };
        let (fx, fy) = cell_coords(w.grid(), x, z);
        let h = &w.height;
        let (cx, cz) = (w.grid().dx(), w.grid().dy());
        // (-∂h/∂x, 1, -∂h/∂z) scaled by 2·dx·dz.
        let dx = h.sample_bilinear(fx - 1.0, fy) - h.sample_bilinear(fx + 1.0, fy);
        let dz = h.sample_bilinear(fx, fy - 1.0) - h.sample_bilinear(fx, fy + 1.0);
        Vector3::new(dx * cz, 2.0 * cx * cz, dz * cx).normalized()
    }

    /// The map called `name` from the current data (`height` included), or null.
    #[func]
    pub fn get_map(&self, name: GString) -> Option<Gd<Image>> {
        let data = self.data.as_ref()?;
        let d = data.bind();
        if name == names::HEIGHT {
            return d.heights.clone();
        }
        d.maps.get(&name.to_variant())?.try_to::<Gd<Image>>().ok()
    }

    /// A Graph domain's rivers (see `TerrainData.rivers`): per reach a dictionary with a
    /// `Curve3D` in this node's local metres, its `width`s, `discharge`s and Strahler
    /// `order`, so a game can place water along them. Empty for a grid run or no data.
    #[func]
    pub fn get_rivers(&self) -> Array<VarDictionary> {
        self.data
            .as_ref()
            .map_or_else(Array::new, |d| d.bind().rivers.clone())
    }

    /// The names `get_map` answers: `height` then every map of the data.
    #[func]
    pub fn get_map_names(&self) -> PackedStringArray {
        let mut out = PackedStringArray::new();
        if let Some(data) = &self.data {
            let d = data.bind();
            if d.heights.is_some() {
                out.push(names::HEIGHT);
            }
            for key in d.maps.keys_array().iter_shared() {
                out.push(&GString::from(key.to_string().as_str()));
            }
        }
        out
    }

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
    /// `control_X_Z.exr` (autoshader on, holes past the edge), `color_X_Z.png` (layered
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
        match orogen_core::bake::export_terrain3d::write_terrain3d(&world, &dir, region_size) {
            Ok(_) => GString::new(),
            Err(e) => GString::from(e.to_string().as_str()),
        }
    }

    /// Writes the terrain for HTerrain into `dir` (replacing the folder in one step):
    /// `height.exr` (f32 metres) and `splat.png` (RGBA8, weights summing to 255) on the
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
        match orogen_core::bake::export_hterrain::write_hterrain(&world, &dir) {
            Ok(_) => GString::new(),
            Err(e) => GString::from(e.to_string().as_str()),
        }
    }

    /// The `ShaderMaterial` the terrain is drawn with (its uniforms: `sea_level`, colours,
    /// `has_surface_colour`, …), or null before the terrain was first shown.
    #[func]
    pub fn get_terrain_material(&self) -> Option<Gd<ShaderMaterial>> {
        self.material.clone()
    }

    /// Starts an `ErosionSimulator` child on this terrain's recipe (at the end of the
    /// frame, so the caller can connect its signals first) and returns it; the result is
    /// applied to this terrain when it finishes. Await its `finished` (or `failed`).
    #[func]
    pub fn generate(&mut self) -> Gd<ErosionSimulator> {
        let mut sim = ErosionSimulator::new_alloc();
        sim.set_name("OrogenGenerate");
        {
            let mut s = sim.bind_mut();
            s.set_terrain_path(NodePath::from(".."));
            s.set_recipe_resource(self.recipe.clone());
        }
        self.base_mut()
            .add_child_ex(&sim)
            .force_readable_name(true)
            .internal(InternalMode::BACK)
            .done();
        sim.bind_mut().free_when_done = true;
        sim.call_deferred("start", &[]);
        sim
    }
}

/// Continuous cell coordinates of local position `(x, z)`.
fn cell_coords(grid: Grid, x: f32, z: f32) -> (f32, f32) {
    (
        x / grid.dx() + (grid.width as f32 - 1.0) * 0.5,
        z / grid.dy() + (grid.height as f32 - 1.0) * 0.5,
    )
}

impl TerrainWorld {
    /// The terrain's recipe resource.
    pub fn recipe_resource(&self) -> Option<Gd<TerrainRecipe>> {
        self.recipe.clone()
    }

    /// Shows a simulator's live snapshot without touching data or collision: `heights`
    /// (whose range is `range` metres), the water depth of a hydraulic run and the surface
    /// colours of a layered terrain (each `None` turns its drawing off).
    pub fn preview(
        &mut self,
        grid: Grid,
        heights: &[f32],
        range: (f32, f32),
        water: Option<&[f32]>,
        colours: Option<&[[u8; 4]]>,
    ) {
        let Ok(img) = convert::scalar_image(grid, heights) else {
            return;
        };
        self.show_heights(grid, &img, range.0, range.1);
        self.show_water(water.map(|w| (grid, w)));
        self.show_colours(colours.map(|c| (grid, c)));
    }

    /// Whether the terrain keeps a collision body.
    pub fn collision_on(&self) -> bool {
        self.collision_enabled
    }

    /// Starts applying a simulator's result: `data` whose decoded form is `prepared`'s
    /// world. [`TerrainWorld::apply_slice`] then does it a piece per call.
    pub fn begin_apply(&mut self, data: Gd<TerrainData>, prepared: Prepared) -> ApplyJob {
        let Prepared {
            world,
            range,
            drainage_log_max,
            lakes,
            river_display,
            collision,
            ..
        } = prepared;
        ApplyJob {
            data,
            world: Some(world),
            range,
            drainage_log_max,
            lakes,
            river_display,
            collision,
            flow: None,
            next: 0,
        }
    }

    /// Does the next piece of `job` (about a texture upload or a collision region, a few
    /// milliseconds at 1025²): first the data and heights, then each map's texture, then
    /// the collision a region at a time; emits `data_changed` with the last. Returns true
    /// once done.
    pub fn apply_slice(&mut self, job: &mut ApplyJob) -> bool {
        const MAPS: usize = 8;
        let step = job.next;
        job.next += 1;
        let data = job.data.clone();
        match step {
            0 => {
                let world = job.world.take();
                let grid = world.as_ref().map(|w| w.grid());
                self.data = Some(data.clone());
                self.set_world(world);
                let heights = data.bind().heights.clone();
                if let (Some(grid), Some(img)) = (grid, heights) {
                    self.show_heights(grid, &img, job.range.0, job.range.1);
                }
                if let Some(m) = &mut self.material {
                    m.set_shader_parameter("drainage_log_max", &job.drainage_log_max.to_variant());
                }
                self.map_textures.clear();
            }
            1..MAPS => {
                let d = data.bind();
                let map = |name: &str| {
                    d.maps
                        .get(&GString::from(name).to_variant())
                        .and_then(|v| v.try_to::<Gd<Image>>().ok())
                };
                match step {
                    1 => self.bind_map("drainage", "has_drainage", map(names::DRAINAGE)),
                    2 => {
                        let img = job.lakes.take().and_then(|b| b.to_image().ok());
                        self.bind_map("lake_depth", "has_lake_depth", img);
                    }
                    3 => {
                        self.bind_map("rivers", "has_rivers", map(names::RIVERS));
                        let (channel, flow) = match job.river_display.take() {
                            Some((c, f)) => (c.to_image().ok(), f.to_image().ok()),
                            None => (None, None),
                        };
                        self.bind_map("river_channel", "has_river_channel", channel);
                        job.flow = flow;
                    }
                    7 => self.bind_map("flow_map", "has_flow_map", job.flow.take()),
                    4 => self.bind_map("nodata", "has_nodata", map(names::NODATA)),
                    5 => {
                        let img =
                            map(names::SURFACE_COLOUR).filter(|i| i.get_format() == Format::RGBA8);
                        let img = img.map(|i| {
                            let mut copy = Image::new_gd();
                            copy.copy_from(&i);
                            copy.generate_mipmaps();
                            copy
                        });
                        self.show_colour_image(img);
                    }
                    _ => {
                        let img = map(names::WATER_DEPTH).filter(|i| i.get_format() == Format::RF);
                        self.show_water_image(img);
                    }
                }
            }
            _ => {
                let region = step - MAPS;
                let usable = self.collision_enabled
                    && self
                        .world
                        .as_ref()
                        .is_some_and(|w| w.grid().width >= 2 && w.grid().height >= 2);
                if !usable {
                    self.remove_collision();
                } else {
                    if job.collision.is_none() {
                        // Collision was off when the run started: build the regions now.
                        job.collision = self.world.as_ref().map(|w| collision_regions(&w.height));
                    }
                    if let Some((spacing, regions)) = &mut job.collision {
                        if region < regions.len() {
                            let r = std::mem::take(&mut regions[region]);
                            self.set_collision_region(region, regions.len(), *spacing, &r);
                            return false;
                        }
                    }
                }
                self.signals().data_changed().emit();
                return true;
            }
        }
        false
    }

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

    /// Sets the world the queries answer from, forgetting the height range of the last.
    fn set_world(&mut self, world: Option<World>) {
        self.world = world;
        self.height_range.set(None);
    }

    /// Decodes the data, then rebuilds display and collision.
    fn rebuild(&mut self) {
        let world = self.data.as_ref().and_then(|data| {
            data.bind()
                .to_world()
                .map_err(|e| godot_error!("TerrainWorld: {e}"))
                .ok()
        });
        self.set_world(world);
        self.rebuild_display();
        self.rebuild_collision();
    }

    fn ensure_display_nodes(&mut self) {
        if self.mesh_instance.is_some() {
            return;
        }
        let mut shader = Shader::new_gd();
        shader.set_code(SHADER);
        let mut material = ShaderMaterial::new_gd();
        material.set_shader(&shader);
        let mut mi = MeshInstance3D::new_alloc();
        mi.set_name("TerrainMesh");
        mi.set_material_override(&material);
        self.base_mut()
            .add_child_ex(&mi)
            .internal(InternalMode::FRONT)
            .done();
        self.mesh_instance = Some(mi);
        self.material = Some(material);
    }

    fn rebuild_display(&mut self) {
        let Some(world) = self.world.take() else {
            if let Some(mi) = &mut self.mesh_instance {
                mi.set_visible(false);
            }
            return;
        };
        let grid = world.grid();
        let heights = self.data.as_ref().and_then(|d| d.bind().heights.clone());
        let (lo, hi) = world.height.min_max();
        match heights {
            Some(img) if img.get_format() == Format::RF => self.show_heights(grid, &img, lo, hi),
            _ => {
                if let Ok(img) = convert::scalar_image(grid, &world.height.data) {
                    self.show_heights(grid, &img, lo, hi);
                }
            }
        }
        self.show_maps(&world);
        self.set_world(Some(slim(world)));
    }

    /// Makes sure the display mesh (the clipmap) fits `grid`: rebuilt only when its layout
    /// changes, its uniforms set, and the LOD centre placed on the camera.
    pub fn prepare_mesh(&mut self, grid: Grid) {
        self.ensure_display_nodes();
        let layout = Layout::for_terrain(grid.width, grid.height, self.lod_radius as u32);
        if self.lod.map(|l| l.0) != Some(layout) {
            let mesh = clipmap::build(layout);
            let counts = (mesh.vertices.len(), mesh.indices.len());
            let mesh = clipmap_mesh(&mesh);
            if let Some(mi) = &mut self.mesh_instance {
                mi.set_mesh(&mesh);
            }
            self.lod = Some((layout, counts.0, counts.1));
        }
        if let Some(m) = &mut self.material {
            m.set_shader_parameter("lod_radius", &(layout.radius as f32).to_variant());
            m.set_shader_parameter("lod_top", &(layout.top as f32).to_variant());
        }
        let moved = self.lod_grid != Some(grid);
        self.lod_grid = Some(grid);
        if moved {
            // The terrain's middle until a camera is found.
            self.lod_centre = [f32::NAN; 2];
            self.set_lod_centre_local(Vector3::ZERO);
        }
        self.follow_camera();
    }

    /// The camera the LOD follows: the editor's 3D viewport camera in the editor, else the
    /// viewport's current camera.
    fn active_camera(&self) -> Option<Gd<Camera3D>> {
        if Engine::singleton().is_editor_hint() {
            if let Some(cam) = EditorInterface::singleton()
                .get_editor_viewport_3d()
                .and_then(|v| v.get_camera_3d())
            {
                return Some(cam);
            }
        }
        if !self.base().is_inside_tree() {
            return None;
        }
        self.base().get_viewport()?.get_camera_3d()
    }

    /// Sets the LOD centre for a camera at local position `local` (clamped to the terrain;
    /// the terrain's middle for a terrain drawn whole), if it moved.
    fn set_lod_centre_local(&mut self, local: Vector3) {
        let (Some(grid), Some((layout, _, _))) = (self.lod_grid, self.lod) else {
            return;
        };
        let (fx, fz) = cell_coords(grid, local.x, local.z);
        let centre = layout.centre([fx, fz], [grid.width, grid.height]);
        if centre == self.lod_centre {
            return;
        }
        self.lod_centre = centre;
        if let Some(m) = &mut self.material {
            m.set_shader_parameter(
                "lod_centre",
                &Vector2::new(centre[0], centre[1]).to_variant(),
            );
        }
    }

    /// Uploads the height texture (in place when the size is unchanged), sizes the mesh
    /// and its bounds.
    fn show_heights(&mut self, grid: Grid, img: &Gd<Image>, lo: f32, hi: f32) {
        self.ensure_display_nodes();
        let size = (img.get_width(), img.get_height());
        let reuse = self.height_texture.as_ref().is_some_and(|t| {
            (t.get_width(), t.get_height()) == size && t.get_format() == Format::RF
        });
        if reuse {
            if let Some(t) = &mut self.height_texture {
                t.update(img);
            }
        } else {
            self.height_texture = ImageTexture::create_from_image(img);
        }
        self.prepare_mesh(grid);
        let cs = Vector2::new(grid.dx(), grid.dy());
        let size_m = Vector2::new(
            (grid.width.max(2) - 1) as f32 * cs.x,
            (grid.height.max(2) - 1) as f32 * cs.y,
        );
        if let Some(m) = &mut self.material {
            if let Some(t) = &self.height_texture {
                m.set_shader_parameter("heights", &t.to_variant());
            }
            m.set_shader_parameter("cells", &Vector2i::new(size.0, size.1).to_variant());
            m.set_shader_parameter("size_m", &size_m.to_variant());
            m.set_shader_parameter("cell_size", &cs.to_variant());
            m.set_shader_parameter("height_min", &lo.to_variant());
            m.set_shader_parameter("height_max", &hi.to_variant());
        }
        if let Some(mi) = &mut self.mesh_instance {
            // The mesh's own bounds are the flat unit square; the displaced terrain's are set
            // here so it is never culled wrongly.
            let pad = 1.0 + (hi - lo) * 0.01;
            mi.set_custom_aabb(Aabb::new(
                Vector3::new(-size_m.x * 0.5, lo - pad, -size_m.y * 0.5),
                Vector3::new(size_m.x, hi - lo + 2.0 * pad, size_m.y),
            ));
            mi.set_visible(true);
        }
        if self.sea_enabled {
            self.update_sea();
        }
    }

    /// Binds the maps the shader uses: the hydrology maps (drainage, lake depth, rivers), the
    /// surface colour and a hydraulic run's water depth.
    fn show_maps(&mut self, world: &World) {
        if self.material.is_none() {
            return;
        }
        self.map_textures.clear();
        let scalar = |name: &str| match world.maps.get(name) {
            Some(MapData::Scalar(m)) => Some(m),
            _ => None,
        };
        let drainage = scalar(names::DRAINAGE);
        let log_max = drainage.map_or(1.0, |m| (1.0 + m.min_max().1.max(0.0)).ln());
        if let Some(m) = &mut self.material {
            m.set_shader_parameter("drainage_log_max", &log_max.to_variant());
        }
        let img = drainage.and_then(|m| convert::scalar_image(m.grid, &m.data).ok());
        self.bind_map("drainage", "has_drainage", img);
        let lakes = scalar(names::LAKE_DEPTH)
            .and_then(|m| convert::scalar_image(m.grid, &drawn_lakes(m.grid, &m.data)).ok());
        self.bind_map("lake_depth", "has_lake_depth", lakes);
        let rivers = world
            .maps
            .get(names::RIVERS)
            .and_then(|m| convert::map_image(m).ok());
        self.bind_map("rivers", "has_rivers", rivers);
        let (channel, flow) = match convert::ImageBytes::river_display(world) {
            Some((c, f)) => (c.to_image().ok(), f.to_image().ok()),
            None => (None, None),
        };
        self.bind_map("river_channel", "has_river_channel", channel);
        self.bind_map("flow_map", "has_flow_map", flow);
        let nodata = match world.maps.get(names::NODATA) {
            Some(m @ MapData::Mask(_)) => convert::map_image(m).ok(),
            _ => None,
        };
        self.bind_map("nodata", "has_nodata", nodata);
        let colours = match world.maps.get(names::SURFACE_COLOUR) {
            Some(MapData::Rgba(m)) => Some((m.grid, m.data.as_slice())),
            _ => None,
        };
        self.show_colours(colours);
        // A hydraulic run's water: the exported map, or the simulation state of a result.
        let water = match world.maps.get(names::WATER_DEPTH) {
            Some(MapData::Scalar(m)) => Some((m.grid, m.data.as_slice())),
            _ => world.sim.water_depth.as_deref().map(|w| (world.grid(), w)),
        };
        self.show_water(water);
    }

    /// Binds `img` (a new texture) to the shader's `uniform` and sets `flag`, or unbinds it
    /// and clears `flag` (`None`).
    fn bind_map(&mut self, uniform: &'static str, flag: &str, img: Option<Gd<Image>>) {
        let Some(material) = &mut self.material else {
            return;
        };
        self.map_textures.retain(|(u, _)| *u != uniform);
        match img.and_then(|i| ImageTexture::create_from_image(&i)) {
            Some(tex) => {
                material.set_shader_parameter(uniform, &tex.to_variant());
                material.set_shader_parameter(flag, &true.to_variant());
                self.map_textures.push((uniform, tex));
            }
            None => {
                material.set_shader_parameter(uniform, &Variant::nil());
                material.set_shader_parameter(flag, &false.to_variant());
            }
        }
    }

    /// Draws water `Some((grid, depth))` metres deep where it is deeper than the shader's
    /// `water_depth_min`, or no such water (`None`).
    fn show_water(&mut self, water: Option<(Grid, &[f32])>) {
        let img = water.and_then(|(grid, w)| convert::scalar_image(grid, w).ok());
        self.show_water_image(img);
    }

    /// [`TerrainWorld::show_water`] of an `RF` image.
    fn show_water_image(&mut self, img: Option<Gd<Image>>) {
        if let Some(material) = &mut self.material {
            bind_texture(
                material,
                &mut self.water_texture,
                "water_depth",
                "has_water_depth",
                img,
            );
        }
    }

    /// Colours the surface by material (`Some((grid, colours))`, one sRGB colour per cell)
    /// or by slope and height (`None`). The texture is updated in place when it fits.
    fn show_colours(&mut self, colours: Option<(Grid, &[[u8; 4]])>) {
        let img = colours.and_then(|(grid, c)| convert::colour_image(grid, c).ok());
        self.show_colour_image(img);
    }

    /// [`TerrainWorld::show_colours`] of a mipmapped `RGBA8` image.
    fn show_colour_image(&mut self, img: Option<Gd<Image>>) {
        if let Some(material) = &mut self.material {
            bind_texture(
                material,
                &mut self.colour_texture,
                "surface_colour",
                "has_surface_colour",
                img,
            );
        }
    }

    /// Makes, moves, sizes or removes the sea plane, and tells the shader where the sea is.
    fn update_sea(&mut self) {
        let level = if self.sea_enabled {
            self.sea_level
        } else {
            -1.0e9
        };
        if let Some(m) = &mut self.material {
            m.set_shader_parameter("sea_level", &level.to_variant());
        }
        if !self.sea_enabled {
            if let Some(mut sea) = self.sea.take() {
                sea.queue_free();
            }
            return;
        }
        // Twelve times the terrain across: past any far plane a view of it needs, so the
        // sea ends at the horizon, never at its own edge.
        let extent = self
            .lod_grid
            .map(|g| {
                ((g.width.max(2) - 1) as f32 * g.dx()).max((g.height.max(2) - 1) as f32 * g.dy())
            })
            .unwrap_or(25_600.0);
        if self.sea.is_none() {
            let mut material = StandardMaterial3D::new_gd();
            material.set_transparency(Transparency::ALPHA);
            material.set_albedo(Color::from_rgba(0.04, 0.13, 0.22, 0.92));
            material.set_specular(0.35);
            material.set_roughness(0.15);
            let mut plane = PlaneMesh::new_gd();
            plane.set_material(&material);
            let mut mi = MeshInstance3D::new_alloc();
            mi.set_name("Sea");
            mi.set_mesh(&plane);
            self.base_mut()
                .add_child_ex(&mi)
                .internal(InternalMode::BACK)
                .done();
            self.sea = Some(mi);
        }
        if let Some(mi) = &mut self.sea {
            if let Some(mut plane) = mi.get_mesh().and_then(|m| m.try_cast::<PlaneMesh>().ok()) {
                plane.set_size(Vector2::new(extent * 12.0, extent * 12.0));
            }
            mi.set_position(Vector3::new(0.0, self.sea_level, 0.0));
        }
    }

    /// The data decoded whole (maps included) with the Graph domain's rivers and nodes, the
    /// materials and the planet this terrain keeps, for `save_maps` and the exports.
    pub(crate) fn full_world(&self) -> Result<World, String> {
        let (Some(data), Some(kept)) = (&self.data, &self.world) else {
            return Err("TerrainWorld has no terrain data to save".into());
        };
        let mut world = data.bind().to_world()?;
        world.rivers = kept.rivers.clone();
        world.graph_nodes = kept.graph_nodes.clone();
        world.planet = kept.planet.clone();
        world.materials = kept.materials.clone();
        Ok(world)
    }

    /// Removes the collision body.
    fn remove_collision(&mut self) {
        if let Some(mut body) = self.body.take() {
            body.queue_free();
        }
        self.shapes.clear();
    }

    /// Rebuilds (or removes) the collision body from the current heights.
    fn rebuild_collision(&mut self) {
        let grid = self.world.as_ref().map(|w| w.grid());
        let usable = self.collision_enabled && grid.is_some_and(|g| g.width >= 2 && g.height >= 2);
        if !usable {
            self.remove_collision();
            return;
        }
        let Some(world) = &self.world else {
            return;
        };
        let (spacing, regions) = collision_regions(&world.height);
        for (k, r) in regions.iter().enumerate() {
            self.set_collision_region(k, regions.len(), spacing, r);
        }
    }

    /// Sets region `k` of `count` of the collision (creating the body, and the shapes when
    /// their count changes, on the first).
    fn set_collision_region(&mut self, k: usize, count: usize, spacing: f32, r: &CollisionRegion) {
        if self.body.is_none() {
            let mut body = StaticBody3D::new_alloc();
            body.set_name("TerrainCollision");
            self.base_mut()
                .add_child_ex(&body)
                .internal(InternalMode::FRONT)
                .done();
            self.body = Some(body);
        }
        let Some(body) = self.body.clone() else {
            return;
        };
        if k == 0 && self.shapes.len() != count {
            for mut old in self.shapes.drain(..) {
                old.queue_free();
            }
            for i in 0..count {
                let mut cshape = CollisionShape3D::new_alloc();
                cshape.set_name(&format!("Shape{i}"));
                cshape.set_shape(&HeightMapShape3D::new_gd());
                body.clone().add_child(&cshape);
                self.shapes.push(cshape);
            }
        }
        let Some(cshape) = self.shapes.get_mut(k) else {
            return;
        };
        let mut shape = cshape
            .get_shape()
            .and_then(|s| s.try_cast::<HeightMapShape3D>().ok())
            .unwrap_or_else(HeightMapShape3D::new_gd);
        shape.set_map_width(r.width as i32);
        shape.set_map_depth(r.depth as i32);
        shape.set_map_data(&PackedFloat32Array::from(r.heights.as_slice()));
        cshape.set_shape(&shape);
        cshape.set_transform(Transform3D::new(
            Basis::from_scale(Vector3::splat(spacing)),
            Vector3::new(r.centre.0 * spacing, 0.0, r.centre.1 * spacing),
        ));
    }
}

/// A simulator's result being applied to a terrain a slice at a time (see
/// [`TerrainWorld::apply_slice`]).
pub struct ApplyJob {
    data: Gd<TerrainData>,
    world: Option<World>,
    range: (f32, f32),
    drainage_log_max: f32,
    lakes: Option<convert::ImageBytes>,
    river_display: Option<(convert::ImageBytes, convert::ImageBytes)>,
    collision: Option<(f32, Vec<CollisionRegion>)>,
    /// The flow map's image, made with the channel's and bound a slice later.
    flow: Option<Gd<Image>>,
    next: usize,
}

/// Binds `img` to the shader's `uniform` and sets `flag`, reusing the texture in `slot` (an
/// in-place update) when its size and format match (a slot's images are all mipmapped or
/// all not); `None` unbinds it and clears
/// `flag`, keeping the texture for the next time.
fn bind_texture(
    material: &mut Gd<ShaderMaterial>,
    slot: &mut Option<Gd<ImageTexture>>,
    uniform: &str,
    flag: &str,
    img: Option<Gd<Image>>,
) {
    let Some(img) = img else {
        material.set_shader_parameter(uniform, &Variant::nil());
        material.set_shader_parameter(flag, &false.to_variant());
        return;
    };
    let fits = slot.as_ref().is_some_and(|t| {
        t.get_width() == img.get_width()
            && t.get_height() == img.get_height()
            && t.get_format() == img.get_format()
    });
    if fits {
        if let Some(t) = slot {
            t.update(&img);
        }
    } else {
        *slot = ImageTexture::create_from_image(&img);
    }
    match slot {
        Some(t) => {
            material.set_shader_parameter(uniform, &t.to_variant());
            material.set_shader_parameter(flag, &true.to_variant());
        }
        None => {
            material.set_shader_parameter(uniform, &Variant::nil());
            material.set_shader_parameter(flag, &false.to_variant());
        }
    }
}

/// The clipmap as an `ArrayMesh`: `VERTEX = (kx, level, kz)`, flip quads' corner in `UV`
/// and their flag in `UV2` (see `clipmap`).
fn clipmap_mesh(m: &clipmap::Mesh) -> Gd<ArrayMesh> {
    let verts: Vec<Vector3> = m
        .vertices
        .iter()
        .map(|v| Vector3::new(v[0], v[1], v[2]))
        .collect();
    let uv: Vec<Vector2> = m.quads.iter().map(|q| Vector2::new(q[0], q[1])).collect();
    let uv2: Vec<Vector2> = m.flags.iter().map(|f| Vector2::new(f[0], f[1])).collect();
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    arrays.set(
        ArrayType::VERTEX.ord() as usize,
        &PackedVector3Array::from(verts.as_slice()).to_variant(),
    );
    arrays.set(
        ArrayType::TEX_UV.ord() as usize,
        &PackedVector2Array::from(uv.as_slice()).to_variant(),
    );
    arrays.set(
        ArrayType::TEX_UV2.ord() as usize,
        &PackedVector2Array::from(uv2.as_slice()).to_variant(),
    );
    arrays.set(
        ArrayType::INDEX.ord() as usize,
        &PackedInt32Array::from(m.indices.as_slice()).to_variant(),
    );
    let mut mesh = ArrayMesh::new_gd();
    mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
    mesh
}
