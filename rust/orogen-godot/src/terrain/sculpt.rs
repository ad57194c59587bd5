//! Sculpting a `TerrainWorld`'s heights in strokes, as Terrain3D's editor does: raise,
//! lower, flatten, smooth and set dabs, and the erosion brush (stream power and thermal
//! erosion only under the brush, stepped on a thread of its own). A stroke is
//! `begin_sculpt` or `begin_erosion`, dabs, then `end_sculpt`, which gives the stroke's
//! bounding rectangle with the heights there before and after, for one undo step that
//! `set_height_region` replays. Each dab updates the queried heights, the data's height
//! image and the height texture; the collision and the skirt follow at the stroke's end.

use godot::classes::image::Format;
use godot::prelude::*;
use orogen_core::edit::{ErosionBrush, ErosionBrushParams, SculptMode};
use orogen_core::field::Grid;

use super::height_stroke::HeightStroke;
use super::TerrainWorld;
use crate::convert;

fn union(a: Option<[usize; 4]>, b: [usize; 4]) -> [usize; 4] {
    match a {
        None => b,
        Some(a) => [
            a[0].min(b[0]),
            a[1].min(b[1]),
            a[2].max(b[2]),
            a[3].max(b[3]),
        ],
    }
}

fn rect2i(r: [usize; 4]) -> Rect2i {
    Rect2i::new(
        Vector2i::new(r[0] as i32, r[1] as i32),
        Vector2i::new((r[2] - r[0]) as i32, (r[3] - r[1]) as i32),
    )
}

fn region(values: &[f32], width: usize, r: [usize; 4]) -> Vec<f32> {
    let mut out = Vec::with_capacity((r[2] - r[0]) * (r[3] - r[1]));
    for y in r[1]..r[3] {
        out.extend_from_slice(&values[y * width + r[0]..y * width + r[2]]);
    }
    out
}

#[godot_api(secondary)]
impl TerrainWorld {
    /// Starts a sculpting stroke with the terrain as it is; `position` (global) is where
    /// it begins (`flatten` flattens to the height there). Returns "" or the error.
    #[func]
    pub fn begin_sculpt(&mut self, position: Vector3) -> GString {
        self.finish_erosion_step(true);
        let local = self.base().to_local(position);
        let flatten_to = self.get_height(local.x, local.z);
        let Some(world) = &self.world else {
            return "the terrain has no heights to sculpt: generate it first".into();
        };
        self.sculpt = HeightStroke {
            base: Some(world.height.data.clone()),
            flatten_to,
            ..Default::default()
        };
        GString::new()
    }

    /// One sculpting dab at `position` (global; x and z count): `mode` is `raise`,
    /// `lower`, `flatten`, `smooth` or `set`; `radius` metres; `strength` and `falloff`
    /// 0–1; `value` metres (the height raised or lowered at full strength, or the height
    /// `set` gives). Within a stroke a cell changes at most as much as one dab would
    /// change it. Returns "" or the error, naming the field at fault.
    #[func]
    #[allow(clippy::too_many_arguments)]
    pub fn sculpt_dab(
        &mut self,
        position: Vector3,
        mode: GString,
        radius: f32,
        strength: f32,
        falloff: f32,
        value: f32,
    ) -> GString {
        let local = self.base().to_local(position);
        let result = (|| -> Result<Option<[usize; 4]>, String> {
            let flatten_to = self.sculpt.flatten_to;
            let mode =
                SculptMode::parse(&mode.to_string(), flatten_to).map_err(|e| e.to_string())?;
            let brush = mode.brush(radius, strength, falloff, value);
            let world = self
                .world
                .as_mut()
                .ok_or("the terrain has no heights to sculpt")?;
            let grid = world.grid();
            let centre = centre_of(grid, local);
            let done = match &self.sculpt.base {
                Some(base) if base.len() == world.height.data.len() => {
                    brush.stroke_dab(&mut world.height, centre, base)
                }
                _ => brush.dab(&mut world.height, centre),
            };
            done.map_err(|e| e.to_string())
        })();
        match result {
            Ok(Some(rect)) => {
                self.sculpt.rect = Some(union(self.sculpt.rect, rect));
                self.show_height_rect(rect);
                GString::new()
            }
            Ok(None) => GString::new(),
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// Starts an erosion-brush stroke: stream power (`k`, m^(1−2m)/yr; `years` a step)
    /// and `thermal_sweeps` thermal sweeps, over the whole map's flow (with the painted
    /// precipitation when there is one), kept only under the brush. Returns "" or the error.
    #[func]
    pub fn begin_erosion(
        &mut self,
        position: Vector3,
        k: f32,
        years: f32,
        thermal_sweeps: i32,
    ) -> GString {
        let err = self.begin_sculpt(position);
        if !err.is_empty() {
            return err;
        }
        let result = (|| -> Result<(), String> {
            let world = self.world.as_ref().ok_or("the terrain has no heights")?;
            let grid = world.grid();
            let params = ErosionBrushParams {
                k,
                years: years as f64,
                thermal_sweeps: thermal_sweeps.max(0) as u32,
                ..Default::default()
            };
            let rain = self
                .paint_maps()
                .get(1)
                .filter(|m| m.grid == grid)
                .map(|m| m.data.clone());
            let heights = world.height.data.clone();
            let brush =
                ErosionBrush::new(grid, &params, rain, &heights).map_err(|e| e.to_string())?;
            self.sculpt.erosion = Some((brush, heights));
            Ok(())
        })();
        match result {
            Ok(()) => GString::new(),
            Err(e) => {
                self.sculpt = HeightStroke::default();
                GString::from(e.as_str())
            }
        }
    }

    /// One erosion dab at `position` (global): a step under a brush of `radius` metres,
    /// `strength` (0–1, the share of the step's erosion kept at full weight) and
    /// `falloff`. The step runs on its own thread; a dab asked for while one runs is kept
    /// (the latest only) and runs next. Returns "" or the error.
    #[func]
    pub fn erosion_dab(
        &mut self,
        position: Vector3,
        radius: f32,
        strength: f32,
        falloff: f32,
    ) -> GString {
        let local = self.base().to_local(position);
        let result = (|| -> Result<(), String> {
            let grid = self
                .world
                .as_ref()
                .map(|w| w.grid())
                .ok_or("the terrain has no heights")?;
            if self.sculpt.erosion.is_none() && self.sculpt.running.is_none() {
                return Err("erosion_dab: no erosion stroke; call begin_erosion first".into());
            }
            let brush = SculptMode::Raise.brush(radius, strength, falloff, 1.0);
            let (mask, rect) = brush
                .mask(grid, centre_of(grid, local))
                .map_err(|e| e.to_string())?;
            if let Some(rect) = rect {
                self.sculpt.pending = Some((mask, rect));
                self.finish_erosion_step(false);
            }
            Ok(())
        })();
        match result {
            Ok(()) => GString::from(self.sculpt.error.as_str()),
            Err(e) => GString::from(e.as_str()),
        }
    }

    /// Whether an erosion step is running or waiting.
    #[func]
    pub fn is_eroding(&self) -> bool {
        self.sculpt.running.is_some() || self.sculpt.pending.is_some()
    }

    /// Erosion steps done in the current (or last) stroke.
    #[func]
    pub fn get_erosion_steps(&self) -> i32 {
        self.sculpt.steps as i32
    }

    /// The last erosion step's drainage, row by row (m², or m³/yr with painted rain);
    /// empty before the first.
    #[func]
    pub fn get_erosion_drainage(&self) -> PackedFloat32Array {
        PackedFloat32Array::from(self.sculpt.drainage.as_slice())
    }

    /// Ends the stroke (waiting for an erosion step still running, and running the last
    /// dab asked for): rebuilds the collision and the skirt, and returns `rect` (Rect2i,
    /// cells) with the heights there `before` and `after` (PackedFloat32Array, row by
    /// row) for undo, and `error` ("" or the last error); empty when nothing changed.
    #[func]
    pub fn end_sculpt(&mut self) -> VarDictionary {
        self.finish_erosion_step(true);
        if self.sculpt.pending.is_some() {
            self.start_erosion_step();
            self.finish_erosion_step(true);
        }
        let stroke = std::mem::take(&mut self.sculpt);
        self.sculpt.drainage = stroke.drainage;
        self.sculpt.steps = stroke.steps;
        let mut out = VarDictionary::new();
        let (Some(base), Some(rect), Some(world)) = (stroke.base, stroke.rect, &self.world) else {
            return out;
        };
        let width = world.grid().width;
        let before = region(&base, width, rect);
        let after = region(&world.height.data, width, rect);
        self.follow_heights(rect);
        if before == after {
            return out;
        }
        out.set("rect", &rect2i(rect).to_variant());
        out.set(
            "before",
            &PackedFloat32Array::from(before.as_slice()).to_variant(),
        );
        out.set(
            "after",
            &PackedFloat32Array::from(after.as_slice()).to_variant(),
        );
        out.set("error", &GString::from(stroke.error.as_str()).to_variant());
        out
    }

    /// The terrain's extent, metres (x, z): its data's, else its recipe's; zero without
    /// either. The editor's brushes start at a twentieth of the larger.
    #[func]
    pub fn get_extent(&self) -> Vector2 {
        if let Some(w) = &self.world {
            return super::mesher::extent(w.grid());
        }
        self.recipe_resource()
            .and_then(|r| r.bind().parsed().ok())
            .and_then(|p| p.grid().ok())
            .map_or(Vector2::ZERO, super::mesher::extent)
    }

    /// Colours the terrain by painted map `name` (`uplift` or `precipitation`) over its
    /// ground, as the brushes paint it, or by nothing (""): uplift blue (sinking) through
    /// white to red, rain from dry brown to blue. Returns "" or the error.
    #[func]
    pub fn set_overlay(&mut self, name: GString) -> GString {
        if name.is_empty() {
            self.overlay = None;
        } else {
            match super::paint_maps::PaintMaps::slot(&name.to_string()) {
                Ok(slot) => self.overlay = Some(slot),
                Err(e) => return GString::from(e.as_str()),
            }
        }
        self.refresh_overlay();
        GString::new()
    }

    /// The painted map the terrain is coloured by ("" when none).
    #[func]
    pub fn get_overlay(&self) -> GString {
        self.overlay.map_or(GString::new(), |s| {
            GString::from(super::paint_maps::MAPS[s])
        })
    }

    /// Sets the heights in `rect` (cells) to `values` (row by row, as `end_sculpt` gave
    /// them): what undo and redo of a stroke call. Returns "" or the error.
    #[func]
    pub fn set_height_region(&mut self, rect: Rect2i, values: PackedFloat32Array) -> GString {
        let result = (|| -> Result<[usize; 4], String> {
            let world = self.world.as_mut().ok_or("the terrain has no heights")?;
            let grid = world.grid();
            let (x0, y0) = (rect.position.x, rect.position.y);
            let (x1, y1) = (x0 + rect.size.x, y0 + rect.size.y);
            if x0 < 0
                || y0 < 0
                || x1 > grid.width as i32
                || y1 > grid.height as i32
                || x1 < x0
                || y1 < y0
            {
                return Err(format!(
                    "set_height_region: rect {rect} is not within the {}×{} terrain",
                    grid.width, grid.height
                ));
            }
            let r = [x0 as usize, y0 as usize, x1 as usize, y1 as usize];
            let n = (r[2] - r[0]) * (r[3] - r[1]);
            if values.len() != n {
                return Err(format!(
                    "set_height_region: {} values for a {}×{} rect",
                    values.len(),
                    rect.size.x,
                    rect.size.y
                ));
            }
            if let Some(v) = values.as_slice().iter().find(|v| !v.is_finite()) {
                return Err(format!("set_height_region: height {v} is not finite"));
            }
            let w = grid.width;
            let cols = r[2] - r[0];
            for (k, y) in (r[1]..r[3]).enumerate() {
                world.height.data[y * w + r[0]..y * w + r[2]]
                    .copy_from_slice(&values.as_slice()[k * cols..(k + 1) * cols]);
            }
            Ok(r)
        })();
        match result {
            Ok(r) => {
                self.show_height_rect(r);
                self.follow_heights(r);
                GString::new()
            }
            Err(e) => GString::from(e.as_str()),
        }
    }
}

/// A local position's place on the grid in metres from the first cell.
fn centre_of(grid: Grid, local: Vector3) -> [f32; 2] {
    [
        local.x + (grid.width as f32 - 1.0) * 0.5 * grid.dx(),
        local.z + (grid.height as f32 - 1.0) * 0.5 * grid.dy(),
    ]
}

impl TerrainWorld {
    /// Polls the erosion step (from `process`): applies a finished one and starts the dab
    /// waiting. With `wait`, waits for a running step.
    pub(super) fn finish_erosion_step(&mut self, wait: bool) {
        if let Some(handle) = self.sculpt.running.take() {
            if !wait && !handle.is_finished() {
                self.sculpt.running = Some(handle);
                return;
            }
            match handle.join() {
                Ok((brush, heights, rect, result)) => {
                    if let Err(e) = result {
                        self.sculpt.error = e;
                    }
                    if let (Some(r), Some(world)) = (rect, self.world.as_mut()) {
                        if heights.len() == world.height.data.len() {
                            let w = world.grid().width;
                            for y in r[1]..r[3] {
                                world.height.data[y * w + r[0]..y * w + r[2]]
                                    .copy_from_slice(&heights[y * w + r[0]..y * w + r[2]]);
                            }
                        }
                        self.sculpt.rect = Some(union(self.sculpt.rect, r));
                        self.show_height_rect(r);
                    }
                    self.sculpt.drainage.clear();
                    self.sculpt.drainage.extend_from_slice(brush.drainage());
                    self.sculpt.steps += 1;
                    self.sculpt.erosion = Some((brush, heights));
                }
                Err(_) => self.sculpt.error = "the erosion step's thread panicked".into(),
            }
        }
        if !wait && self.sculpt.pending.is_some() {
            self.start_erosion_step();
        }
    }

    /// After a stroke changed the cells in `r`: the collision regions over them, and the
    /// skirt when they reach the border (it reads the height texture back: slow at 1025²).
    fn follow_heights(&mut self, r: [usize; 4]) {
        use orogen_core::bake::collision::{collision_regions, COLLISION_REGION_QUADS};
        let Some(world) = &self.world else {
            return;
        };
        let grid = world.grid();
        let usable = self.collision_enabled && grid.width >= 2 && grid.height >= 2;
        let (spacing, regions) = collision_regions(&world.height);
        let across = (grid.width - 1).div_ceil(COLLISION_REGION_QUADS);
        if !usable || !grid.is_square() || self.collision.shape_count() != regions.len() {
            self.rebuild_collision();
        } else {
            // Region k covers samples from (i0, j0) = (kx, ky) · QUADS, QUADS + 1 a side.
            for (k, reg) in regions.iter().enumerate() {
                let (i0, j0) = (
                    (k % across) * COLLISION_REGION_QUADS,
                    (k / across) * COLLISION_REGION_QUADS,
                );
                let hit = i0 < r[2] && r[0] < i0 + reg.width && j0 < r[3] && r[1] < j0 + reg.depth;
                if hit {
                    self.collision.set_region(k, regions.len(), spacing, reg);
                }
            }
        }
        if r[0] == 0 || r[1] == 0 || r[2] >= grid.width || r[3] >= grid.height {
            self.update_skirt();
        }
    }

    /// Starts the waiting dab's step on a thread, when none runs.
    fn start_erosion_step(&mut self) {
        if self.sculpt.running.is_some() {
            return;
        }
        let (Some((mask, rect)), Some((mut brush, mut heights))) =
            (self.sculpt.pending.take(), self.sculpt.erosion.take())
        else {
            return;
        };
        self.sculpt.running = Some(std::thread::spawn(move || {
            let result = brush
                .step(&mut heights, &mask, rect)
                .map(|_| ())
                .map_err(|e| e.to_string());
            (brush, heights, Some(rect), result)
        }));
    }

    /// Shows the heights changed in `rect` (cells, ends exclusive): writes them into the
    /// data's height image, uploads the height texture and widens the height range.
    fn show_height_rect(&mut self, r: [usize; 4]) {
        let Some(world) = &self.world else {
            return;
        };
        let grid = world.grid();
        let values = region(&world.height.data, grid.width, r);
        let (w, h) = (r[2] - r[0], r[3] - r[1]);
        if w == 0 || h == 0 {
            return;
        }
        let (mut lo, mut hi) = orogen_core::field::finite_min_max(&values);
        if let Some((a, b)) = self.height_range.get() {
            lo = lo.min(a);
            hi = hi.max(b);
            self.height_range.set(Some((lo, hi)));
        }
        let img = self.data.as_ref().and_then(|d| d.bind().heights.clone());
        let img = match img {
            Some(mut img)
                if img.get_format() == Format::RF
                    && img.get_width() as usize == grid.width
                    && img.get_height() as usize == grid.height =>
            {
                let Ok(patch_grid) = Grid::new(w, h, 1.0) else {
                    return;
                };
                let Ok(patch) = convert::scalar_image(patch_grid, &values) else {
                    return;
                };
                img.blit_rect(
                    &patch,
                    Rect2i::new(Vector2i::ZERO, Vector2i::new(w as i32, h as i32)),
                    Vector2i::new(r[0] as i32, r[1] as i32),
                );
                img
            }
            _ => {
                let Ok(img) = convert::scalar_image(grid, &world.height.data) else {
                    return;
                };
                if let Some(d) = &mut self.data {
                    d.bind_mut().heights = Some(img.clone());
                }
                img
            }
        };
        let (old_lo, old_hi) = self.material.height_range();
        self.show_heights(grid, &img, lo.min(old_lo), hi.max(old_hi));
    }

    /// Binds the overlay's painted map to the shader (or turns it off): its values, the
    /// ramp (1 uplift, 2 precipitation) and its range. Unpainted, the map the brushes
    /// would start from is not made; nothing is drawn until it is painted.
    pub(super) fn refresh_overlay(&mut self) {
        let map = self.overlay.and_then(|s| self.paint.get(s).map(|m| (s, m)));
        match map {
            Some((slot, m)) => {
                let (lo, hi) = orogen_core::field::finite_min_max(&m.data);
                let img = convert::scalar_image(m.grid, &m.data).ok();
                self.material
                    .show_overlay(img, slot as i32 + 1, lo.min(0.0), hi.max(lo + 1e-9));
            }
            None => self.material.show_overlay(None, 0, 0.0, 1.0),
        }
    }
}
