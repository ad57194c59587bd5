//! `TerrainWorld`: a terrain in the scene, drawn the way Terrain3D draws one (a geometry
//! clipmap built once, centred on the camera and displaced on the GPU from a 32-bit float
//! height texture), with a `HeightMapShape3D` collision kept in step with the heights, and
//! height/normal/map queries.
//!
//! As Terrain3D composes `Terrain3D` of components, this node (its properties, signals and
//! queries) composes:
//! - [`mesher`]: the clipmap mesh and its level-of-detail centre;
//! - [`material`]: the shader material, its textures and uniforms;
//! - [`sea`]: the sea plane;
//! - [`collision`]: the collision body, a `HeightMapShape3D` per region;
//! - [`paint_maps`]: the painted uplift and precipitation, and the painted ground;
//! - [`data_file`]: the data and painted maps written beside the scene when the editor
//!   saves it (`<scene>.terrain.res`, `<scene>.paint.res`), so the scene only refers to them.
//!
//! Four files add to the node from above (they use it, it does not use them): [`apply`]
//! (a simulator's result applied a slice per frame), [`paint`] (the painting API),
//! [`paint_ground`] (painting the ground layers) and
//! [`files`] (heightmap import, `save_maps` and the Terrain3D and HTerrain exports).
//! `generate()` is declared with the simulator it starts (`simulator/generate.rs`).
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

use godot::classes::image::Format;
use godot::classes::node::InternalMode;
use godot::classes::notify::Node3DNotification;
use godot::classes::{
    Camera3D, EditorInterface, Engine, INode3D, Image, MeshInstance3D, Node3D, ShaderMaterial,
    Texture2DArray,
};
use godot::prelude::*;
use orogen_core::bake::collision::{collision_regions, CollisionRegion};
use orogen_core::bake::lake_surface::LakeSurface;
use orogen_core::bake::skirt::Skirt;
use orogen_core::field::Grid;
use orogen_core::world::names;
use orogen_core::World;

use crate::clipmap;
use crate::convert;
use crate::data::{TerrainData, TerrainPaint};
use crate::prepared::{slim, Target};
use crate::recipe::TerrainRecipe;
use collision::Collision;
use edge::{SkirtMesh, TerrainEdge};
use material::TerrainMaterial;
use mesher::{cell_coords, extent, Mesher};
use paint_maps::PaintMaps;
use sea::Sea;
use water::LakeWater;

pub mod apply;
pub mod collision;
pub mod data_file;
pub mod edge;
pub mod edge_skirt;
pub mod files;
pub mod ground;
pub mod height_stroke;
pub mod material;
pub mod mesh_node;
pub mod mesher;
pub mod paint;
pub mod paint_ground;
pub mod paint_maps;
pub mod sculpt;
pub mod sea;
pub mod water;

/// A terrain in the scene: it draws a `TerrainData`, collides with it and answers queries on it.
///
/// Give it a `recipe` (a `TerrainRecipe`) and call `generate()` to erode a terrain at run time
/// (`await` the returned simulator's `finished`), or press **Generate** in the Orogen dock in
/// the editor; `data` then holds the heights and maps. It draws a level-of-detail clipmap
/// (`lod_radius`) displaced from a 32-bit height texture, with eight ground materials weighted
/// by slope, curvature, wetness and altitude (a layered terrain shows its exposed material's
/// colour), rivers and lakes, an optional sea (`sea_enabled`, `sea_level`) and land or coast
/// beyond the border (`edge`), and follows the heights with `HeightMapShape3D` collision
/// (`collision_enabled`).
///
/// Queries: `get_height`, `get_normal`, `get_map`, `get_map_names`, `get_rivers`,
/// `intersect_ray`. Files: `load_heightmap`, `save_maps` (the files of `orogen bake`),
/// `save_for_terrain3d`, `save_for_hterrain`. Painting uplift and rain: `uplift_paint`,
/// `precipitation_paint`, `begin_paint`, `paint_dab`, `end_paint`, and `paint_changed`.
#[derive(GodotClass)]
#[class(tool, base = Node3D)]
pub struct TerrainWorld {
    /// The recipe `generate()` runs (and an `ErosionSimulator` without its own recipe).
    #[export]
    #[var(set = set_recipe)]
    recipe: Option<Gd<TerrainRecipe>>,
    /// The current terrain; setting it rebuilds display and collision. When the editor saves
    /// the scene, data not yet in a file of its own is written beside it
    /// (`<scene>.terrain.res`) and the scene refers to that file.
    #[export]
    #[var(set = set_data)]
    data: Option<Gd<TerrainData>>,
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
    /// What lies beyond the map's border: `Auto` (a coast into the sea when `sea_enabled`,
    /// else land going on to the horizon), `None` (the map ends at its border), `Skirt`
    /// (low-detail land to the horizon) or `Coast` (the land falls into the sea, which is
    /// then drawn too).
    #[export]
    #[var(set = set_edge)]
    edge: TerrainEdge,
    /// Your own ground albedo textures: a `Texture2DArray` of eight layers (rock, cliff,
    /// scree, soil, grass, dry grass, sand, snow), sRGB albedo with height in alpha, as
    /// Terrain3D's. Null: Orogen's own (`addons/orogen/runtime/textures/`).
    #[export]
    #[var(set = set_ground_albedo)]
    ground_albedo: Option<Gd<Texture2DArray>>,
    /// Your own ground normal maps: eight layers, tangent-space normal with roughness in
    /// alpha. Null: Orogen's own.
    #[export]
    #[var(set = set_ground_normal)]
    ground_normal: Option<Gd<Texture2DArray>>,
    /// Painted uplift, m/yr, one value per cell (`FORMAT_RF`); null: the recipe's `uplift`.
    /// The dock's brushes paint it; it is saved beside the scene, in `paint_data`.
    #[export]
    #[var(get = get_uplift_paint, set = set_uplift_paint)]
    uplift_paint: PhantomVar<Option<Gd<Image>>>,
    /// Painted precipitation, m/yr (≥ 0), one value per cell (`FORMAT_RF`); null: the
    /// recipe's. Runs use it for every `StreamPower` stage.
    #[export]
    #[var(get = get_precipitation_paint, set = set_precipitation_paint)]
    precipitation_paint: PhantomVar<Option<Gd<Image>>>,
    /// Every painted map as the editor saved it beside the scene (`<scene>.paint.res`,
    /// written when the scene is saved, so the painted maps are not embedded in it).
    /// Setting it (a scene loading) sets each painted map it holds.
    #[export]
    #[var(set = set_paint_data)]
    paint_data: Option<Gd<TerrainPaint>>,
    /// Whether a scene saved before it had a path embedded the terrain, to be saved again.
    save_again: bool,
    /// Painted ground: per cell the painted weight of each of the eight ground layers, laid
    /// over the simulation's (an `RGBA8` image twice the terrain's width: pixel `(2x, y)`
    /// holds rock, cliff, scree, soil and `(2x + 1, y)` grass, dry grass, sand, snow, each
    /// cell's eight summing to at most 255); null: the simulation's weights everywhere. The
    /// dock's Ground brush paints it; the editor saves it in `paint_data` beside the scene,
    /// and the Terrain3D and HTerrain exports write it.
    #[export]
    #[var(get = get_ground_paint_image, set = set_ground_paint_image)]
    ground_paint: PhantomVar<Option<Gd<Image>>>,

    /// The data's heights (with uplift, nodata and a Graph domain's rivers) as plain Rust,
    /// for queries; its maps live only in `data` (see [`slim`]).
    world: Option<World>,
    /// The finite lowest and highest height of `world`, found at the first ray pick after
    /// the world changed ([`TerrainWorld::set_world`] forgets it).
    height_range: std::cell::Cell<Option<(f32, f32)>>,
    mesher: Mesher,
    material: TerrainMaterial,
    collision: Collision,
    /// Painted uplift and precipitation (see `paint`).
    paint: PaintMaps,
    /// The painted map the terrain is coloured by (its slot), while a brush paints it.
    overlay: Option<usize>,
    /// The sculpting or erosion stroke going on (see `sculpt`).
    sculpt: height_stroke::HeightStroke,
    /// The sea plane while `sea_enabled`.
    sea: Sea,
    /// The lakes' water surface.
    lake_water: LakeWater,
    /// The land or coast beyond the border (`edge`).
    skirt: SkirtMesh,
    /// Cells of the coarse preview shown instead of the data, (0, 0) for none.
    preview_cells: Vector2i,
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
            uplift_paint: PhantomVar::default(),
            precipitation_paint: PhantomVar::default(),
            paint_data: None,
            save_again: false,
            ground_paint: PhantomVar::default(),
            world: None,
            height_range: std::cell::Cell::new(None),
            mesher: Mesher::default(),
            material: TerrainMaterial::default(),
            collision: Collision::default(),
            paint: PaintMaps::default(),
            overlay: None,
            sculpt: height_stroke::HeightStroke::default(),
            sea: Sea::default(),
            edge: TerrainEdge::Auto,
            ground_albedo: None,
            ground_normal: None,
            lake_water: LakeWater::default(),
            skirt: SkirtMesh::default(),
            preview_cells: Vector2i::ZERO,
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
        // A save that failed before its post-save notification leaves the maps hidden.
        self.paint.hidden_for_save = false;
        self.follow_camera();
        if self.is_eroding() {
            self.finish_erosion_step(false);
        }
    }

    fn on_notification(&mut self, what: Node3DNotification) {
        match what {
            Node3DNotification::EDITOR_PRE_SAVE => self.before_scene_save(),
            Node3DNotification::EDITOR_POST_SAVE => self.after_scene_save(),
            _ => {}
        }
    }
}

#[godot_api]
impl TerrainWorld {
    /// A painted map changed (`uplift` or `precipitation`): a dab, an undo, an import or
    /// a clear.
    #[signal]
    pub(crate) fn paint_changed(map: GString);

    /// The painted uplift map (`uplift_paint`), or null when none is painted.
    #[func]
    fn get_uplift_paint(&self) -> Option<Gd<Image>> {
        self.paint.image(0)
    }

    /// Replaces the painted uplift map (`uplift_paint`) and emits `paint_changed("uplift")`.
    /// Null clears it; so does an image that does not fit the terrain, with an error naming it.
    #[func]
    fn set_uplift_paint(&mut self, img: Option<Gd<Image>>) {
        self.set_paint_image(0, img);
    }

    /// The painted precipitation map (`precipitation_paint`), or null when none is painted.
    #[func]
    fn set_paint_data(&mut self, res: Option<Gd<TerrainPaint>>) {
        self.apply_paint_data(res);
    }

    #[func]
    fn get_precipitation_paint(&self) -> Option<Gd<Image>> {
        self.paint.image(1)
    }

    /// Replaces the painted precipitation map (`precipitation_paint`) and emits
    /// `paint_changed("precipitation")`. Null clears it; so does an image that does not fit
    /// the terrain, with an error naming it.
    #[func]
    fn set_precipitation_paint(&mut self, img: Option<Gd<Image>>) {
        self.set_paint_image(1, img);
    }

    #[func]
    fn get_ground_paint_image(&self) -> Option<Gd<Image>> {
        self.paint.ground_image()
    }

    #[func]
    fn set_ground_paint_image(&mut self, img: Option<Gd<Image>>) {
        let (dx, dy) = self
            .world
            .as_ref()
            .map_or((1.0, 1.0), |w| (w.grid().dx(), w.grid().dy()));
        let paint = img.and_then(|img| {
            paint_maps::ground_from_image(&img, dx, dy)
                .map_err(|e| godot_error!("TerrainWorld: painted ground: {e}"))
                .ok()
        });
        self.set_ground(paint);
        self.signals().paint_changed().emit(paint_maps::GROUND);
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
        self.preview_cells = Vector2i::ZERO;
        self.rebuild();
        self.signals().data_changed().emit();
    }

    /// Shows `preview` (a quick coarse run's result) stretched over its own extent, without
    /// making it the terrain's data: `data` stays as it is, so the preview is never saved
    /// and no undo step records it; the next `set_data` (the full run) replaces it. Returns
    /// "" or the error.
    #[func]
    pub fn show_preview(&mut self, preview: Option<Gd<TerrainData>>) -> GString {
        let Some(preview) = preview else {
            return GString::from("show_preview: no preview data (null)");
        };
        let world = match preview.bind().to_world() {
            Ok(w) => w,
            Err(e) => return GString::from(format!("show_preview: {e}").as_str()),
        };
        let grid = world.grid();
        let range = world.height.min_max();
        self.preview(grid, &world.height.data, range, None, None, None);
        self.preview_cells = Vector2i::new(grid.width as i32, grid.height as i32);
        GString::new()
    }

    /// The cells `(width, height)` of the preview shown (`show_preview`), or (0, 0) when the
    /// terrain shows its data.
    #[func]
    pub fn get_preview_size(&self) -> Vector2i {
        self.preview_cells
    }

    /// Turns the collision body on or off.
    #[func]
    pub fn set_collision_enabled(&mut self, enabled: bool) {
        self.collision_enabled = enabled;
        self.rebuild_collision();
    }

    /// Shows or hides the sea (`sea_enabled`) and redraws what lies beyond the border.
    #[func]
    pub fn set_sea_enabled(&mut self, enabled: bool) {
        self.sea_enabled = enabled;
        self.update_sea();
        self.update_skirt();
    }

    /// Uses your own ground albedo textures (`ground_albedo`; null: Orogen's own).
    #[func]
    pub fn set_ground_albedo(&mut self, textures: Option<Gd<Texture2DArray>>) {
        self.ground_albedo = textures;
        self.bind_ground();
    }

    /// Uses your own ground normal maps (`ground_normal`; null: Orogen's own).
    #[func]
    pub fn set_ground_normal(&mut self, textures: Option<Gd<Texture2DArray>>) {
        self.ground_normal = textures;
        self.bind_ground();
    }

    /// Sets what lies beyond the map's border (`edge`) and redraws it.
    #[func]
    pub fn set_edge(&mut self, edge: TerrainEdge) {
        self.edge = edge;
        self.update_sea();
        self.update_skirt();
    }

    /// Sets the sea's surface, metres (`sea_level`); a value that is not finite is refused
    /// with an error naming it, and the level stays as it was.
    #[func]
    pub fn set_sea_level(&mut self, level: f32) {
        if level.is_finite() {
            self.sea_level = level;
        } else {
            godot_error!("TerrainWorld: sea_level must be finite, got {level}");
        }
        self.update_sea();
        self.update_skirt();
    }

    /// The sea plane (an internal child), or null while `sea_enabled` is off.
    #[func]
    pub fn get_sea_mesh(&self) -> Option<Gd<MeshInstance3D>> {
        self.sea.get()
    }

    /// Sets the clipmap's `R` (see `lod_radius`) and rebuilds the mesh when it changes.
    #[func]
    pub fn set_lod_radius(&mut self, radius: i32) {
        self.lod_radius = radius.clamp(clipmap::MIN_RADIUS as i32, clipmap::MAX_RADIUS as i32);
        if let Some(grid) = self.mesher.grid() {
            self.prepare_mesh(grid);
        }
    }

    /// The level-of-detail mesh: `radius` (R), `levels`, `vertices` and `triangles` it holds
    /// (every vertex is submitted each frame; zero-area triangles included), `full_detail`
    /// (whether it draws every cell of the terrain) and `centre` (the LOD centre in cell
    /// coordinates). Empty before the terrain is first shown.
    #[func]
    pub fn get_lod_info(&self) -> VarDictionary {
        self.mesher.info()
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

    /// The `ShaderMaterial` the terrain is drawn with (its uniforms: `sea_level`, colours,
    /// `has_surface_colour`, …), or null before the terrain was first shown.
    #[func]
    pub fn get_terrain_material(&self) -> Option<Gd<ShaderMaterial>> {
        self.material.get()
    }
}

impl TerrainWorld {
    /// The terrain's recipe resource.
    pub fn recipe_resource(&self) -> Option<Gd<TerrainRecipe>> {
        self.recipe.clone()
    }

    /// Shows a simulator's live snapshot without touching data or collision: `heights`
    /// (whose range is `range` metres), the water depth of a hydraulic run and the surface
    /// colours of a layered terrain and its beds as bands (each `None` turns its drawing off).
    pub fn preview(
        &mut self,
        grid: Grid,
        heights: &[f32],
        range: (f32, f32),
        water: Option<&[f32]>,
        colours: Option<&[[u8; 4]]>,
        strata: Option<&(orogen_core::world::StrataLook, Vec<f32>)>,
    ) {
        let Ok(img) = convert::scalar_image(grid, heights) else {
            return;
        };
        self.show_heights(grid, &img, range.0, range.1);
        self.material.show_water(water.map(|w| (grid, w)));
        self.material.show_colours(colours.map(|c| (grid, c)));
        self.material.show_strata(grid, strata);
    }

    /// Whether the terrain keeps a collision body.
    pub fn collision_on(&self) -> bool {
        self.collision_enabled
    }

    /// What a run's result is prepared for on its worker: collision regions while collision
    /// is on, and the skirt for the edge and sea level as they are now.
    pub fn prepare_target(&self) -> Target {
        Target {
            collision: self.collision_enabled,
            edge: Some((self.edge.resolve(self.sea_enabled), self.sea_level)),
            ground: self.material.ground_params(),
        }
    }

    /// The painted maps.
    pub fn paint_maps(&self) -> &PaintMaps {
        &self.paint
    }

    /// The terrain as a live run starts from it: its data decoded, without the maps of
    /// the run that made it (the live run writes its own); None without data.
    pub fn live_world(&self) -> Result<Option<World>, String> {
        if self.data.is_none() {
            return Ok(None);
        }
        let mut world = self.full_world()?;
        world.maps.clear();
        Ok(Some(world))
    }

    /// Sets a painted map from an image (the scene's saved property); an image that is
    /// not usable is reported and leaves the map unpainted.
    fn set_paint_image(&mut self, slot: usize, img: Option<Gd<Image>>) {
        let name = paint_maps::MAPS[slot];
        let map = img.and_then(|img| {
            paint_maps::map_from_image(slot, &img)
                .map_err(|e| godot_error!("TerrainWorld: painted {name}: {e}"))
                .ok()
        });
        self.paint.set(slot, map);
        self.refresh_overlay();
        self.signals().paint_changed().emit(name);
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

    /// Makes the mesh and its material, once.
    fn ensure_display_nodes(&mut self) {
        if self.mesher.instance.is_some() {
            return;
        }
        let material = self.material.create();
        self.refresh_overlay();
        if self.ground_albedo.is_some() || self.ground_normal.is_some() {
            self.bind_ground();
        }
        self.show_ground_paint();
        let mi = Mesher::new_instance(&material);
        self.base_mut()
            .add_child_ex(&mi)
            .internal(InternalMode::FRONT)
            .done();
        self.mesher.instance = Some(mi);
    }

    fn rebuild_display(&mut self) {
        let Some(world) = self.world.take() else {
            self.mesher.hide();
            self.show_lake_water(None);
            self.show_skirt(&Skirt::default());
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
        self.update_skirt_of(&world);
        self.material.show_maps(&world);
        self.show_lake_water(water::surface_of(&world).as_ref());
        self.set_world(Some(slim(world)));
    }

    /// Makes sure the display mesh (the clipmap) fits `grid`: rebuilt only when its layout
    /// changes, its uniforms set, and the LOD centre placed on the camera.
    pub fn prepare_mesh(&mut self, grid: Grid) {
        self.ensure_display_nodes();
        let layout = self.mesher.fit(grid, self.lod_radius as u32);
        self.material.set_lod(layout);
        if self.mesher.follow_grid(grid) {
            // The terrain's middle until a camera is found.
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

    /// Sets the LOD centre for a camera at local position `local`, if it moved.
    fn set_lod_centre_local(&mut self, local: Vector3) {
        if let Some(centre) = self.mesher.move_centre(local) {
            self.material.set_lod_centre(centre);
        }
    }

    /// Uploads the height texture (in place when the size is unchanged), sizes the mesh
    /// and its bounds.
    fn show_heights(&mut self, grid: Grid, img: &Gd<Image>, lo: f32, hi: f32) {
        self.ensure_display_nodes();
        self.prepare_mesh(grid);
        let size_m = extent(grid);
        self.material.show_heights(grid, img, size_m, lo, hi);
        self.mesher.show(size_m, lo, hi);
        self.update_sea();
    }

    /// Shows the lakes' water surface (a mesh over the lakes as drawn), or none.
    pub(crate) fn show_lake_water(&mut self, surface: Option<&LakeSurface>) {
        if let Some(mi) = self.lake_water.update(surface) {
            self.base_mut()
                .add_child_ex(&mi)
                .internal(InternalMode::BACK)
                .done();
        }
    }

    /// Binds the ground textures (the user's arrays where set) to the material; a wrong
    /// array is reported by name and the built-in set is used.
    fn bind_ground(&mut self) {
        let Some(mut m) = self.material.get() else {
            return;
        };
        let chosen = ground::with_overrides(self.ground_albedo.clone(), self.ground_normal.clone());
        let textures = match chosen {
            Ok(t) => Ok(t),
            Err(e) => {
                godot_error!("TerrainWorld: {e}; using Orogen's own textures");
                ground::built_in()
            }
        };
        if let Err(e) = ground::bind(&mut m, textures) {
            godot_error!("TerrainWorld: {e}");
        }
        self.skirt.sync(&m);
    }

    /// The data decoded whole (maps included) with the Graph domain's rivers and nodes, the
    /// materials and the planet this terrain keeps, for `save_maps` and the exports.
    pub fn full_world(&self) -> Result<World, String> {
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

    /// Rebuilds (or removes) the collision body from the current heights.
    fn rebuild_collision(&mut self) {
        let grid = self.world.as_ref().map(|w| w.grid());
        let usable = self.collision_enabled && grid.is_some_and(|g| g.width >= 2 && g.height >= 2);
        if !usable {
            self.collision.remove();
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
        if let Some(body) = self.collision.make_body() {
            self.base_mut()
                .add_child_ex(&body)
                .internal(InternalMode::FRONT)
                .done();
        }
        self.collision.set_region(k, count, spacing, r);
    }
}
