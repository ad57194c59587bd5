//! Painting a `TerrainWorld`'s ground materials by hand (issue 38): per cell a painted weight
//! for each of the eight ground layers (`orogen_core::edit::ground_paint`), laid over the
//! simulation's weights: where painted with strength `s`, the ground is
//! `mix(automatic, painted layer, s)`. The shader reads it as two textures
//! (`ground_paint_a`, `_b`), so a dab shows at once; the Terrain3D and HTerrain exports
//! (`files.rs`) compute the same weights on the CPU with it.
//!
//! Strokes go through the common painting calls with the map name `ground`
//! (`begin_paint`, `paint_dab` with the layer as `value`, `end_paint`, `clear_paint`);
//! undo takes the whole map as bytes (`get_ground_paint_bytes`, `set_ground_paint_bytes`).

use godot::classes::image::Format;
use godot::classes::Image;
use godot::prelude::*;
use orogen_core::bake::ground_weights::GroundParams;
use orogen_core::edit::ground_paint::LAYERS;
use orogen_core::edit::{GroundBrush, GroundPaint, GroundStroke, GroundTool};
use orogen_core::generators::ground::GROUND_MATERIALS;

use super::paint_maps::GROUND;
use super::TerrainWorld;

/// The shader's `debug_view = 2` colours of the layers (terrain.gdshader's `ids`), for the
/// dock's thumbnail of the paint.
const LAYER_COLOURS: [[f32; 3]; LAYERS] = [
    [0.4, 0.4, 0.4],
    [0.45, 0.25, 0.1],
    [0.5, 0.3, 0.6],
    [0.8, 0.45, 0.1],
    [0.1, 0.7, 0.1],
    [0.8, 0.8, 0.2],
    [1.0, 0.95, 0.6],
    [1.0, 1.0, 1.0],
];

#[godot_api(secondary)]
impl TerrainWorld {
    /// The ground layers, in the order `paint_dab("ground", …)` numbers them and the
    /// exports' texture slots: rock, cliff, scree, soil, grass, dry_grass, sand, snow.
    #[func]
    pub fn get_ground_layer_names() -> PackedStringArray {
        GROUND_MATERIALS.iter().map(|m| GString::from(*m)).collect()
    }

    /// The painted ground as bytes, 8 per cell row by row (the painted weight 0–255 of each
    /// layer, summing to at most 255); empty when nothing is painted. For undo.
    #[func]
    pub fn get_ground_paint_bytes(&self) -> PackedByteArray {
        self.paint.ground().map_or_else(PackedByteArray::new, |g| {
            PackedByteArray::from(g.to_bytes().as_slice())
        })
    }

    /// Sets the painted ground to `bytes` (as `get_ground_paint_bytes` gave them; empty clears it).
    /// Returns "" or the error (a wrong length, or a cell whose weights sum past 255).
    #[func]
    pub fn set_ground_paint_bytes(&mut self, bytes: PackedByteArray) -> GString {
        let result = (|| -> Result<(), String> {
            if bytes.is_empty() {
                self.set_ground(None);
                return Ok(());
            }
            let grid = match self.paint.ground() {
                Some(g) => g.grid,
                None => self.paint_grid()?,
            };
            let paint =
                GroundPaint::from_bytes(grid, bytes.as_slice()).map_err(|e| e.to_string())?;
            self.set_ground(Some(paint));
            Ok(())
        })();
        self.paint_result(&GString::from(GROUND), result)
    }
}

impl TerrainWorld {
    /// Sets the painted ground and shows it.
    pub(super) fn set_ground(&mut self, paint: Option<GroundPaint>) {
        self.paint.set_ground(paint);
        self.show_ground_paint();
    }

    /// Binds the painted ground to the shader (or unbinds it).
    pub(super) fn show_ground_paint(&mut self) {
        let grid = self.world.as_ref().map(|w| w.grid());
        let paint = match grid {
            Some(g) => self.paint.ground_on(g),
            None => self.paint.ground().map(std::borrow::Cow::Borrowed),
        };
        let planes = paint.map(|p| (p.grid, p.planes()));
        self.material.show_ground_paint(planes);
    }

    /// The shader's ground uniforms and the painted ground on the terrain's grid, for the
    /// exports.
    pub(super) fn ground_for_export(
        &self,
        grid: orogen_core::field::Grid,
    ) -> (GroundParams, Option<GroundPaint>) {
        let params = self.material.ground_params();
        let paint = self.paint.ground_on(grid).map(|p| p.into_owned());
        (params, paint)
    }

    /// Starts a ground stroke, making the painted ground (blank) if there is none, or
    /// fitting it to the terrain's grid.
    pub(super) fn begin_ground_stroke(&mut self) -> Result<(), String> {
        self.ensure_ground()?;
        let stroke = self.paint.ground().map(GroundStroke::begin);
        self.paint.ground_stroke = stroke;
        Ok(())
    }

    fn ensure_ground(&mut self) -> Result<(), String> {
        let grid = self.paint_grid()?;
        let fitted = match self.paint.ground() {
            Some(g) if g.grid == grid => return Ok(()),
            Some(g) => g.resampled(grid),
            None => GroundPaint::new(grid),
        };
        self.paint.set_ground(Some(fitted));
        Ok(())
    }

    /// One dab of `paint_dab("ground", …)`.
    pub(super) fn ground_dab(
        &mut self,
        position: Vector3,
        mode: &str,
        radius: f32,
        strength: f32,
        falloff: f32,
        value: f32,
    ) -> Result<(), String> {
        let tool = match mode.to_ascii_lowercase().as_str() {
            "add" | "set" => {
                let layer = value.round();
                if !(0.0..LAYERS as f32).contains(&layer) || (value - layer).abs() > 1e-3 {
                    return Err(format!(
                        "`value` {value} is not a ground layer: painting `ground` takes the \
                         layer as value, 0..7 ({})",
                        GROUND_MATERIALS.join(", ")
                    ));
                }
                GroundTool::Paint(layer as usize)
            }
            "subtract" => GroundTool::Erase,
            other => {
                return Err(format!(
                    "`mode` `{other}` does not paint `ground`: `add` or `set` paints the layer \
                     `value`, `subtract` erases"
                ))
            }
        };
        self.ensure_ground()?;
        let local = self.base().to_local(position);
        let brush = GroundBrush {
            tool,
            radius,
            strength,
            falloff,
        };
        let (paint, stroke) = self.paint.ground_and_stroke();
        let paint = paint.ok_or("the painted ground was not made")?;
        let grid = paint.grid;
        let centre = [
            local.x + (grid.width as f32 - 1.0) * 0.5 * grid.dx(),
            local.z + (grid.height as f32 - 1.0) * 0.5 * grid.dy(),
        ];
        brush
            .dab(paint, centre, stroke.as_mut())
            .map_err(|e| e.to_string())?;
        self.show_ground_paint();
        Ok(())
    }

    /// The dock's picture of the painted ground (`get_paint_image("ground")`).
    pub(super) fn ground_preview(&self) -> Option<Gd<Image>> {
        let g = self.paint.ground()?;
        let bytes: Vec<u8> = g
            .data
            .iter()
            .flat_map(|c| {
                let mut rgb = [0.0f32; 3];
                for (k, &v) in c.iter().enumerate() {
                    for (o, col) in rgb.iter_mut().zip(LAYER_COLOURS[k]) {
                        *o += v as f32 / 255.0 * col;
                    }
                }
                rgb.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)
            })
            .collect();
        Image::create_from_data(
            g.grid.width as i32,
            g.grid.height as i32,
            false,
            Format::RGB8,
            &PackedByteArray::from(bytes.as_slice()),
        )
    }
}
