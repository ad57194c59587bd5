//! Painting a `TerrainWorld`'s uplift and precipitation (FastFlow's authoring loop,
//! seed 002), the terrain's editing side as Terrain3D's editor is: brush dabs in strokes,
//! undo's whole-map get and set, import, save and clear, picking the terrain under a ray,
//! and the brush circle in the shader. The maps themselves are in `paint_maps.rs`; the
//! painted ground (`ground`, layers rather than values) is in `paint_ground.rs`, and the
//! calls here that take a map's name take `ground` too where it says so.
//!
//! A painted map replaces the recipe's `uplift` (m/yr), or every `StreamPower` stage's
//! `precipitation` (m/yr), in the runs of an `ErosionSimulator` on this terrain and in a
//! live run while it is painted. Saved (`save_paint`) it is a 32-bit float EXR, which a
//! recipe takes as `Image(path: "uplift.exr", min: 0.0, max: 1.0)` and bakes to the same
//! bytes.

use godot::classes::Image;
use godot::prelude::*;
use orogen_core::edit::{Brush, BrushMode};
use orogen_core::field::{Grid, ScalarMap};
use orogen_core::recipe::ScalarSource;
use orogen_core::stages::source::{PRECIPITATION_SEED, UPLIFT_SEED};

use super::paint_maps::{check_values, PaintMaps, DEFAULT_PRECIPITATION, GROUND, MAPS};
use super::TerrainWorld;
use crate::convert;

#[godot_api(secondary)]
impl TerrainWorld {
    /// The maps a brush paints: `uplift` (m/yr), `precipitation` (m/yr) and `ground` (the
    /// ground layers, see `paint_dab`).
    #[func]
    pub fn get_paint_map_names() -> PackedStringArray {
        MAPS.iter()
            .chain(std::iter::once(&GROUND))
            .map(|m| GString::from(*m))
            .collect()
    }

    /// Whether map `name` is painted (else runs take the recipe's; for `ground`, the
    /// simulation's weights show everywhere).
    #[func]
    pub fn has_paint(&self, name: GString) -> bool {
        if is_ground(&name) {
            return self.paint.ground().is_some();
        }
        PaintMaps::slot(&name.to_string()).is_ok_and(|s| self.paint.get(s).is_some())
    }

    /// A counter that changes whenever a painted map (the ground included) does.
    #[func]
    pub fn get_paint_revision(&self) -> i64 {
        (self.paint.revision() + self.paint.ground_revision()) as i64
    }

    /// Starts painting map `name`: when it is not painted yet it starts as the values runs
    /// use now (the current terrain's uplift, the recipe's precipitation, or 1 m/yr).
    /// Returns "" or the error.
    /// Until `end_paint`, dabs on it form one stroke: a stroke raises (or lowers, or sets)
    /// a cell at most as much as one dab would, however densely it is dabbed.
    /// `ground` starts unpainted (the simulation's weights everywhere).
    #[func]
    pub fn begin_paint(&mut self, name: GString) -> GString {
        if is_ground(&name) {
            return match self.begin_ground_stroke() {
                Ok(()) => GString::new(),
                Err(e) => GString::from(e.as_str()),
            };
        }
        match self.ensure_paint(&name.to_string()) {
            Ok(slot) => {
                let base = self.paint.get(slot).map(|m| m.data.clone());
                self.paint.stroke = base.map(|b| (slot, b));
                GString::new()
            }
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// Ends the stroke `begin_paint` began (later dabs add up again).
    #[func]
    pub fn end_paint(&mut self) {
        self.paint.stroke = None;
        self.paint.ground_stroke = None;
    }

    /// One brush dab on map `name` at `position` (global; only x and z count), part of the
    /// stroke `begin_paint` began if there is one: `mode` is
    /// `add`, `subtract`, `smooth` or `set`; `radius` metres; `strength` and `falloff`
    /// 0–1; `value` the amount (or the value `set` paints) in the map's units, m/yr.
    /// Precipitation stays ≥ 0. Returns "" or the error (naming the field at fault).
    ///
    /// On `ground`: `add` or `set` paints layer `value` (0 rock, 1 cliff, 2 scree, 3 soil,
    /// 4 grass, 5 dry grass, 6 sand, 7 snow; `get_ground_layer_names`), moving the cells
    /// under the brush towards that layer alone by `strength` at the centre (1: all the
    /// way); `subtract` erases paint, back towards the simulation's weights. The shader
    /// shows it at once, and the Terrain3D and HTerrain exports write it.
    #[func]
    #[allow(clippy::too_many_arguments)]
    pub fn paint_dab(
        &mut self,
        name: GString,
        position: Vector3,
        mode: GString,
        radius: f32,
        strength: f32,
        falloff: f32,
        value: f32,
    ) -> GString {
        let name_s = name.to_string();
        if name_s == GROUND {
            let result = self.ground_dab(
                position,
                &mode.to_string(),
                radius,
                strength,
                falloff,
                value,
            );
            return self.paint_result(&name, result);
        }
        let result = (|| -> Result<(), String> {
            let mode = BrushMode::parse(&mode.to_string()).map_err(|e| e.to_string())?;
            let slot = self.ensure_paint(&name_s)?;
            let local = self.base().to_local(position);
            let brush = Brush {
                mode,
                radius,
                strength,
                falloff,
                value,
                floor: if slot == 1 { 0.0 } else { f32::NEG_INFINITY },
            };
            let stroke = self.paint.stroke.take();
            let map = self.paint.get_mut(slot).ok_or("the map was not made")?;
            let grid = map.grid;
            let centre = [
                local.x + (grid.width as f32 - 1.0) * 0.5 * grid.dx(),
                local.z + (grid.height as f32 - 1.0) * 0.5 * grid.dy(),
            ];
            let done = match &stroke {
                Some((s, base)) if *s == slot && base.len() == map.data.len() => {
                    brush.stroke_dab(map, centre, base)
                }
                _ => brush.dab(map, centre),
            };
            self.paint.stroke = stroke;
            done.map_err(|e| e.to_string())?;
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.refresh_overlay();
                self.signals().paint_changed().emit(&name);
                GString::new()
            }
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// Map `name`'s values, row by row (empty when it is not painted): for undo.
    #[func]
    pub fn get_paint_values(&self, name: GString) -> PackedFloat32Array {
        PaintMaps::slot(&name.to_string())
            .ok()
            .and_then(|s| self.paint.get(s))
            .map_or_else(PackedFloat32Array::new, |m| {
                PackedFloat32Array::from(m.data.as_slice())
            })
    }

    /// Sets map `name` to `values` (as `get_paint_values` gave them; empty clears it).
    /// Returns "" or the error (a wrong size or a value that is not finite).
    #[func]
    pub fn set_paint_values(&mut self, name: GString, values: PackedFloat32Array) -> GString {
        let result = (|| -> Result<(), String> {
            let slot = PaintMaps::slot(&name.to_string())?;
            if values.is_empty() {
                self.paint.set(slot, None);
                return Ok(());
            }
            let grid = match self.paint.get(slot) {
                Some(m) => m.grid,
                None => self.paint_grid()?,
            };
            let data = values.as_slice().to_vec();
            if data.len() != grid.len() {
                return Err(format!(
                    "values for `{name}`: {} numbers, but the terrain has {}×{} = {} cells",
                    data.len(),
                    grid.width,
                    grid.height,
                    grid.len()
                ));
            }
            check_values(&name.to_string(), slot, &data)?;
            self.paint.set(slot, Some(ScalarMap { grid, data }));
            Ok(())
        })();
        self.paint_result(&name, result)
    }

    /// Forgets map `name`'s paint: runs take the recipe's again (`ground`: the simulation's
    /// weights show again).
    #[func]
    pub fn clear_paint(&mut self, name: GString) {
        if is_ground(&name) {
            self.set_ground(None);
            self.signals().paint_changed().emit(&name);
            return;
        }
        if let Ok(slot) = PaintMaps::slot(&name.to_string()) {
            self.paint.set(slot, None);
            self.refresh_overlay();
            self.signals().paint_changed().emit(&name);
        }
    }

    /// Paints map `name` from an image: a grayscale PNG (black `min`, white `max`, m/yr)
    /// or a 32-bit float EXR (`min + v·(max − min)`), resampled to the terrain's grid.
    /// Returns "" or the error.
    #[func]
    pub fn import_paint(&mut self, name: GString, path: GString, min: f32, max: f32) -> GString {
        let result = (|| -> Result<(), String> {
            let slot = PaintMaps::slot(&name.to_string())?;
            let grid = self.paint_grid()?;
            let full = convert::globalize(&path.to_string());
            let source = ScalarSource::Image {
                path: full.display().to_string(),
                min,
                max,
            };
            let map = source
                .resolve(grid, 0, std::path::Path::new("."))
                .map_err(|e| e.to_string())?;
            check_values(&name.to_string(), slot, &map.data)?;
            self.paint.set(slot, Some(map));
            Ok(())
        })();
        self.paint_result(&name, result)
    }

    /// Writes map `name` as a one-channel 32-bit float EXR at `path`, which a recipe takes
    /// as `Image(path: ..., min: 0.0, max: 1.0)` (the CLI then bakes what this terrain
    /// runs). Returns "" or the error.
    #[func]
    pub fn save_paint(&self, name: GString, path: GString) -> GString {
        let result = (|| -> Result<(), String> {
            let slot = PaintMaps::slot(&name.to_string())?;
            let map = self
                .paint
                .get(slot)
                .ok_or_else(|| format!("`{name}` is not painted"))?;
            let full = convert::globalize(&path.to_string());
            orogen_core::io::exr::write_exr(&full, map).map_err(|e| e.to_string())
        })();
        match result {
            Ok(()) => GString::new(),
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// Map `name` as an image (`FORMAT_RF`, m/yr), or null when it is not painted.
    /// `ground`: an `RGB8` picture of the paint, each cell the colours of its painted layers
    /// (the shader's `debug_view = 2` colours) over black by the paint's strength.
    #[func]
    pub fn get_paint_image(&self, name: GString) -> Option<Gd<Image>> {
        if is_ground(&name) {
            return self.ground_preview();
        }
        let slot = PaintMaps::slot(&name.to_string()).ok()?;
        self.paint.image_now(slot)
    }

    /// Where the ray from `origin` along `direction` (global) first meets the terrain's
    /// heights, global; null when it misses. Marches a quarter cell at a time, then bisects.
    #[func]
    pub fn intersect_ray(&self, origin: Vector3, direction: Vector3) -> Variant {
        let Some(world) = &self.world else {
            return Variant::nil();
        };
        let xf = self.base().get_global_transform();
        let inv = xf.affine_inverse();
        let o = inv * origin;
        let d = (inv.basis * direction).normalized();
        let grid = world.grid();
        let half = Vector2::new(
            (grid.width as f32 - 1.0) * 0.5 * grid.dx(),
            (grid.height as f32 - 1.0) * 0.5 * grid.dy(),
        );
        let above = |p: Vector3| p.y - self.get_height(p.x, p.z);
        let inside = |p: Vector3| p.x.abs() <= half.x && p.z.abs() <= half.y;
        // Clip the ray to the terrain's box in x and z.
        let (mut t0, mut t1) = (0.0f32, f32::INFINITY);
        for (o, d, h) in [(o.x, d.x, half.x), (o.z, d.z, half.y)] {
            if d.abs() < 1e-9 {
                if o.abs() > h {
                    return Variant::nil();
                }
            } else {
                let (a, b) = ((-h - o) / d, (h - o) / d);
                t0 = t0.max(a.min(b));
                t1 = t1.min(a.max(b));
            }
        }
        // And to the heights' range in y (found once per world: a scan of every cell).
        let (lo, hi) = self.height_range.get().unwrap_or_else(|| {
            let range = orogen_core::field::finite_min_max(&world.height.data);
            self.height_range.set(Some(range));
            range
        });
        if d.y.abs() < 1e-9 {
            if o.y < lo - 1.0 || o.y > hi + 1.0 {
                return Variant::nil();
            }
        } else {
            let (a, b) = ((lo - 1.0 - o.y) / d.y, (hi + 1.0 - o.y) / d.y);
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
        if t0 > t1 || !t1.is_finite() {
            return Variant::nil();
        }
        let step = 0.25 * grid.dx().min(grid.dy());
        let mut t = t0;
        let mut prev = (t, above(o + d * t));
        if prev.1 < 0.0 {
            return Variant::nil(); // starts under the terrain
        }
        let max_steps = (((t1 - t0) / step).ceil() as usize).min(1 << 22);
        for _ in 0..max_steps {
            t = (t + step).min(t1);
            let p = o + d * t;
            let a = above(p);
            if a <= 0.0 && inside(p) {
                let (mut lo, mut hi) = (prev.0, t);
                for _ in 0..24 {
                    let mid = 0.5 * (lo + hi);
                    if above(o + d * mid) > 0.0 {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                return (xf * (o + d * hi)).to_variant();
            }
            prev = (t, a);
            if t >= t1 {
                break;
            }
        }
        Variant::nil()
    }

    /// Shows (or hides) the brush circle: centre `position` (global), `radius` metres.
    #[func]
    pub fn set_brush_indicator(&mut self, visible: bool, position: Vector3, radius: f32) {
        // A terrain out of the tree (its scene tab closed or switched) has no global frame.
        let local = if self.base().is_inside_tree() {
            self.base().to_local(position)
        } else {
            Vector3::ZERO
        };
        self.material
            .set_brush(visible, Vector2::new(local.x, local.z), radius);
    }
}

impl TerrainWorld {
    /// The grid painted maps are made on: the terrain's, else its recipe's.
    pub(super) fn paint_grid(&self) -> Result<Grid, String> {
        if let Some(w) = &self.world {
            return Ok(w.grid());
        }
        let recipe = self
            .recipe_resource()
            .ok_or("the terrain has neither data nor a recipe to paint over")?;
        let parsed = recipe.bind().parsed()?;
        parsed.grid().map_err(|e| e.to_string())
    }

    /// The slot of map `name`, made from what runs use now if it is not painted yet.
    fn ensure_paint(&mut self, name: &str) -> Result<usize, String> {
        let slot = PaintMaps::slot(name)?;
        let grid = self.paint_grid()?;
        if let Some(map) = self.paint.get(slot) {
            // A map loaded with the scene, or made for another size: onto this grid.
            if map.grid != grid {
                let mut map = map.resampled(grid);
                map.grid = grid;
                self.paint.set(slot, Some(map));
            }
            return Ok(slot);
        }
        let recipe = self
            .recipe_resource()
            .map(|r| {
                let r = r.bind();
                (r.parsed(), r.base_dir())
            })
            .and_then(|(p, dir)| p.ok().map(|p| (p, dir)));
        let map = if slot == 0 {
            match (&self.world, &recipe) {
                (Some(w), _) if w.uplift.grid.len() == grid.len() => w.uplift.clone(),
                (_, Some((r, dir))) if r.uplift.planet().is_none() => r
                    .uplift
                    .resolve(grid, r.seed ^ UPLIFT_SEED, dir)
                    .map_err(|e| e.to_string())?,
                (_, Some(_)) => {
                    return Err(
                        "the recipe's uplift comes from its planet: generate the terrain \
                         first, then paint over its uplift"
                            .into(),
                    )
                }
                _ => ScalarMap::filled(grid, 0.0),
            }
        } else {
            let source = recipe.as_ref().and_then(|(r, dir)| {
                r.stages
                    .iter()
                    .find_map(|s| s.stream_power())
                    .and_then(|p| p.precipitation.clone())
                    .map(|s| (s, r.seed, dir.clone()))
            });
            match source {
                Some((s, seed, dir)) => s
                    .resolve(grid, seed ^ PRECIPITATION_SEED, &dir)
                    .map_err(|e| e.to_string())?,
                None => ScalarMap::filled(grid, DEFAULT_PRECIPITATION),
            }
        };
        self.paint.set(slot, Some(map));
        Ok(slot)
    }

    pub(super) fn paint_result(&mut self, name: &GString, result: Result<(), String>) -> GString {
        match result {
            Ok(()) => {
                self.refresh_overlay();
                self.signals().paint_changed().emit(name);
                GString::new()
            }
            Err(e) => GString::from(e.as_str()),
        }
    }
}

/// Whether map `name` is the painted ground.
fn is_ground(name: &GString) -> bool {
    let name = name.to_string();
    name == GROUND
}
