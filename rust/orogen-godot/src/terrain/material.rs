//! The terrain's material, as Terrain3D's: the `ShaderMaterial` of `terrain.gdshader` and
//! everything it is given. The height texture and its uniforms, the level of detail, the
//! maps it shades with (drainage, lakes as drawn, rivers, river channel and flow, nodata),
//! a layered terrain's surface colour, a hydraulic run's water, the sea level and the
//! brush circle. Textures are updated in place when their size and format still fit.

use godot::classes::image::Format;
use godot::classes::{Image, ImageTexture, Shader, ShaderMaterial};
use godot::prelude::*;
use orogen_core::bake::ground_weights::GroundParams;
use orogen_core::field::Grid;
use orogen_core::world::names;
use orogen_core::{MapData, World};

use crate::clipmap::Layout;
use crate::convert;

/// The terrain shader (also at `addons/orogen/runtime/terrain.gdshader`).
pub(super) const SHADER: &str = include_str!("../../../../addons/orogen/runtime/terrain.gdshader");

/// The painted ground's two RGBA8 planes: layers 0–3 and 4–7, one pixel per cell.
pub type GroundPlanes = (Vec<[u8; 4]>, Vec<[u8; 4]>);

/// The shader material and the textures bound to it.
#[derive(Default)]
pub struct TerrainMaterial {
    /// None until the terrain is first shown ([`TerrainMaterial::create`]).
    shader_material: Option<Gd<ShaderMaterial>>,
    height_texture: Option<Gd<ImageTexture>>,
    /// The maps bound by [`TerrainMaterial::bind_map`], kept alive with their uniform.
    map_textures: Vec<(&'static str, Gd<ImageTexture>)>,
    /// The surface colour of a layered terrain (RGBA8, mipmapped), updated in place.
    colour_texture: Option<Gd<ImageTexture>>,
    /// A hydraulic run's water depth (RF), updated in place.
    water_texture: Option<Gd<ImageTexture>>,
    /// The painted map the brushes show (RF), updated in place.
    overlay_texture: Option<Gd<ImageTexture>>,
    /// The heights' range the shader and the mesh's bounds were last given, metres.
    height_range: (f32, f32),
    /// The painted ground's two RGBA8 planes (layers 0–3, 4–7), updated in place.
    ground_paint_textures: [Option<Gd<ImageTexture>>; 2],
}

impl TerrainMaterial {
    /// Makes the shader material (the terrain's mesh is drawn with it).
    pub fn create(&mut self) -> Gd<ShaderMaterial> {
        let mut shader = Shader::new_gd();
        shader.set_code(SHADER);
        let mut material = ShaderMaterial::new_gd();
        material.set_shader(&shader);
        if let Err(e) = super::ground::bind(&mut material, super::ground::built_in()) {
            godot_error!("TerrainWorld: {e}");
        }
        self.shader_material = Some(material.clone());
        material
    }

    /// The shader material, or None before the terrain was first shown.
    pub fn get(&self) -> Option<Gd<ShaderMaterial>> {
        self.shader_material.clone()
    }

    /// Sets a uniform (nothing before the material is made).
    fn set(&mut self, uniform: &str, value: &Variant) {
        if let Some(m) = &mut self.shader_material {
            m.set_shader_parameter(uniform, value);
        }
    }

    /// The clipmap's `R` and top level.
    pub fn set_lod(&mut self, layout: Layout) {
        self.set("lod_radius", &(layout.radius as f32).to_variant());
        self.set("lod_top", &(layout.top as f32).to_variant());
    }

    /// The LOD centre, in cell coordinates.
    pub fn set_lod_centre(&mut self, centre: [f32; 2]) {
        self.set(
            "lod_centre",
            &Vector2::new(centre[0], centre[1]).to_variant(),
        );
    }

    /// Uploads the height texture `img` of `grid` (in place when its size is unchanged),
    /// `size_m` metres across, heights `lo` to `hi`.
    pub fn show_heights(&mut self, grid: Grid, img: &Gd<Image>, size_m: Vector2, lo: f32, hi: f32) {
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
        let cs = Vector2::new(grid.dx(), grid.dy());
        self.height_range = (lo, hi);
        if let Some(m) = &mut self.shader_material {
            if let Some(t) = &self.height_texture {
                m.set_shader_parameter("heights", &t.to_variant());
            }
            m.set_shader_parameter("cells", &Vector2i::new(size.0, size.1).to_variant());
            m.set_shader_parameter("size_m", &size_m.to_variant());
            m.set_shader_parameter("cell_size", &cs.to_variant());
            m.set_shader_parameter("height_min", &lo.to_variant());
            m.set_shader_parameter("height_max", &hi.to_variant());
        }
    }

    /// The heights' range last shown, metres (lowest, highest).
    pub fn height_range(&self) -> (f32, f32) {
        self.height_range
    }

    /// Colours the ground by a painted map (`img`, RF) with ramp `mode` (1 uplift, 2
    /// precipitation) over `lo` to `hi`, or turns the overlay off (`None` or mode 0).
    pub fn show_overlay(&mut self, img: Option<Gd<Image>>, mode: i32, lo: f32, hi: f32) {
        let img = img.filter(|_| mode > 0);
        let on = img.is_some();
        if let Some(material) = &mut self.shader_material {
            bind_texture(
                material,
                &mut self.overlay_texture,
                "overlay_map",
                "has_overlay",
                img,
            );
        }
        self.set("overlay_mode", &(if on { mode } else { 0 }).to_variant());
        self.set("overlay_min", &lo.to_variant());
        self.set("overlay_max", &hi.to_variant());
    }

    /// The height texture's image (its heights as `RF`), or None before the first.
    pub fn height_image(&self) -> Option<Gd<Image>> {
        self.height_texture.as_ref().and_then(|t| t.get_image())
    }

    /// ln(1 + largest drainage), for the drainage shading.
    pub fn set_drainage_log_max(&mut self, log_max: f32) {
        self.set("drainage_log_max", &log_max.to_variant());
    }

    /// Forgets the textures of the maps bound with [`TerrainMaterial::bind_map`] (their
    /// uniforms keep them until bound again).
    pub fn clear_maps(&mut self) {
        self.map_textures.clear();
    }

    /// Binds the maps the shader uses: the hydrology maps (drainage, lake depth, rivers), the
    /// surface colour and a hydraulic run's water depth.
    pub fn show_maps(&mut self, world: &World) {
        if self.shader_material.is_none() {
            return;
        }
        self.map_textures.clear();
        let scalar = |name: &str| match world.maps.get(name) {
            Some(MapData::Scalar(m)) => Some(m),
            _ => None,
        };
        let drainage = scalar(names::DRAINAGE);
        let log_max = drainage.map_or(1.0, |m| (1.0 + m.min_max().1.max(0.0)).ln());
        self.set_drainage_log_max(log_max);
        let img = drainage.and_then(|m| convert::scalar_image(m.grid, &m.data).ok());
        self.bind_map("drainage", "has_drainage", img);
        let sediment =
            scalar(names::SEDIMENT_DEPTH).and_then(|m| convert::scalar_image(m.grid, &m.data).ok());
        self.bind_map("sediment_depth", "has_sediment", sediment);
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
        let position = scalar(names::STRATA_POSITION)
            .and_then(|m| convert::scalar_image(m.grid, &m.data).ok());
        let column = match world.maps.get(names::STRATA_COLUMN) {
            Some(MapData::Rgba(m)) => convert::colour_image(m.grid, &m.data).ok(),
            _ => None,
        };
        self.show_strata_images(position, column);
        // A hydraulic run's water: the exported map, or the simulation state of a result.
        let water = match world.maps.get(names::WATER_DEPTH) {
            Some(MapData::Scalar(m)) => Some((m.grid, m.data.as_slice())),
            _ => world.sim.water_depth.as_deref().map(|w| (world.grid(), w)),
        };
        self.show_water(water);
    }

    /// Binds `img` (a new texture) to the shader's `uniform` and sets `flag`, or unbinds it
    /// and clears `flag` (`None`).
    pub fn bind_map(&mut self, uniform: &'static str, flag: &str, img: Option<Gd<Image>>) {
        let Some(material) = &mut self.shader_material else {
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
    pub fn show_water(&mut self, water: Option<(Grid, &[f32])>) {
        let img = water.and_then(|(grid, w)| convert::scalar_image(grid, w).ok());
        self.show_water_image(img);
    }

    /// [`TerrainMaterial::show_water`] of an `RF` image.
    pub fn show_water_image(&mut self, img: Option<Gd<Image>>) {
        if let Some(material) = &mut self.shader_material {
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
    pub fn show_colours(&mut self, colours: Option<(Grid, &[[u8; 4]])>) {
        let img = colours.and_then(|(grid, c)| convert::colour_image(grid, c).ok());
        self.show_colour_image(img);
    }

    /// [`TerrainMaterial::show_colours`] of a mipmapped `RGBA8` image.
    pub fn show_colour_image(&mut self, img: Option<Gd<Image>>) {
        if let Some(material) = &mut self.shader_material {
            bind_texture(
                material,
                &mut self.colour_texture,
                "surface_colour",
                "has_surface_colour",
                img,
            );
        }
    }

    /// Draws a layered terrain's beds as bands (`orogen_core::world::StrataLook`): each
    /// cell's place in the column (`RF`) and the column (`RGBA8`, mipmapped), or per cell
    /// by the surface colour (either `None`).
    pub fn show_strata_images(&mut self, position: Option<Gd<Image>>, column: Option<Gd<Image>>) {
        let (position, column) = match (position, column) {
            (Some(p), Some(c)) => (Some(p), Some(c)),
            _ => (None, None),
        };
        self.bind_map("strata_position", "has_strata", position);
        self.bind_map("strata_column", "has_strata", column);
    }

    /// [`TerrainMaterial::show_strata_images`] of a live snapshot's beds and sediment.
    pub fn show_strata(
        &mut self,
        grid: Grid,
        strata: Option<&(orogen_core::world::StrataLook, Vec<f32>)>,
    ) {
        let (position, column, sediment) = match strata {
            Some((look, sediment)) => {
                let row = Grid {
                    width: look.column.len(),
                    height: 1,
                    cell_size: 1.0,
                    cell_size_y: 1.0,
                };
                (
                    convert::scalar_image(grid, &look.position).ok(),
                    convert::colour_image(row, &look.column).ok(),
                    convert::scalar_image(grid, sediment).ok(),
                )
            }
            None => (None, None, None),
        };
        if strata.is_some() {
            self.bind_map("sediment_depth", "has_sediment", sediment);
        }
        self.show_strata_images(position, column);
    }

    /// Binds the painted ground (`Some((grid, (layers 0–3, layers 4–7)))`, RGBA8 weights
    /// per cell) to `ground_paint_a`, `_b`, or unbinds it (`None`).
    pub fn show_ground_paint(&mut self, planes: Option<(Grid, GroundPlanes)>) {
        let Some(material) = &mut self.shader_material else {
            return;
        };
        let images = planes.and_then(|(grid, (a, b))| {
            let img = |p: &[[u8; 4]]| {
                let bytes: Vec<u8> = p.iter().flatten().copied().collect();
                Image::create_from_data(
                    grid.width as i32,
                    grid.height as i32,
                    false,
                    Format::RGBA8,
                    &PackedByteArray::from(bytes.as_slice()),
                )
            };
            Some((img(&a)?, img(&b)?))
        });
        let (a, b) = match images {
            Some((a, b)) => (Some(a), Some(b)),
            None => (None, None),
        };
        let [ta, tb] = &mut self.ground_paint_textures;
        bind_texture(material, ta, "ground_paint_a", "has_ground_paint", a);
        bind_texture(material, tb, "ground_paint_b", "has_ground_paint", b);
    }

    /// The shader's uniforms the ground weights depend on (snowline, its aspect, the
    /// steepest snow, the shore and the sea level as the shader has them now), for the
    /// exports' CPU weights; the shader's defaults where a uniform was never set.
    pub fn ground_params(&self) -> GroundParams {
        let mut p = GroundParams::default();
        let Some(m) = &self.shader_material else {
            return p;
        };
        for (name, slot) in [
            ("snowline_m", &mut p.snowline_m),
            ("snowline_aspect_m", &mut p.snowline_aspect_m),
            ("snow_max_slope_deg", &mut p.snow_max_slope_deg),
            ("shore_m", &mut p.shore_m),
            ("sea_level", &mut p.sea_level),
        ] {
            if let Ok(v) = m.get_shader_parameter(name).try_to::<f32>() {
                if v.is_finite() {
                    *slot = v;
                }
            }
        }
        p
    }

    /// Where the shader draws the sea (sea floor and shore sand below and along it).
    pub fn set_sea_level(&mut self, level: f32) {
        self.set("sea_level", &level.to_variant());
    }

    /// The brush circle: shown or not, its centre (local x, z) and radius, metres.
    pub fn set_brush(&mut self, visible: bool, centre: Vector2, radius: f32) {
        self.set("brush_visible", &visible.to_variant());
        self.set("brush_centre", &centre.to_variant());
        self.set("brush_radius", &radius.max(0.0).to_variant());
    }
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
