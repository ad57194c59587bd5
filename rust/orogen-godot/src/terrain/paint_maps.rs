//! A terrain's painted maps: uplift and precipitation (m/yr), one value per cell, with a
//! revision counter a live run watches and the stroke a brush is painting; and the painted
//! ground (`ground`: per cell a painted weight for each of the eight ground layers, laid over
//! the simulation's weights in the shader and the exports; `orogen_core::edit::ground_paint`),
//! with a revision of its own (runs do not read it). The brushes and the rest of the
//! painting API are in `paint.rs` and `paint_ground.rs`.

use std::sync::Arc;

use godot::classes::image::Format;
use godot::classes::Image;
use godot::prelude::*;
use orogen_core::edit::ground_paint::LAYERS;
use orogen_core::edit::{GroundPaint, GroundStroke};
use orogen_core::field::{Grid, ScalarMap};

use crate::convert;

/// The maps a brush paints, in slot order.
pub const MAPS: [&str; 2] = ["uplift", "precipitation"];

/// The painted ground's name among the maps (`get_paint_map_names`).
pub const GROUND: &str = "ground";

/// Precipitation where a recipe has none, m/yr: with it discharge equals drainage area,
/// so painting rain starts from the erosion the recipe had.
pub const DEFAULT_PRECIPITATION: f32 = 1.0;

/// The painted maps of a terrain (None: the recipe's) and a counter bumped by every change.
#[derive(Default)]
pub struct PaintMaps {
    maps: [Option<ScalarMap>; 2],
    revision: u64,
    /// The stroke going on: its map's slot and values when it began (`begin_paint`).
    pub(super) stroke: Option<(usize, Vec<f32>)>,
    /// While the editor writes the scene, the maps are in the `paint_data` file beside it:
    /// the per-map properties (`uplift_paint`, …, `ground_paint`) read null so they are not
    /// embedded too.
    pub(super) hidden_for_save: bool,
    /// The revisions ([`Self::revisions`]) written to (or read from) the `paint_data` file,
    /// if any.
    pub(super) saved_revision: Option<(u64, u64)>,
    /// The painted ground (None: the simulation's weights everywhere).
    ground: Option<GroundPaint>,
    ground_revision: u64,
    /// A ground stroke going on (`begin_paint("ground")`).
    pub(super) ground_stroke: Option<GroundStroke>,
}

impl PaintMaps {
    /// The slot of map `name`, or an error naming it.
    pub fn slot(name: &str) -> Result<usize, String> {
        MAPS.iter().position(|m| *m == name).ok_or_else(|| {
            if name == GROUND {
                "`ground` is painted with layers, not values: use get_ground_paint and \
                 set_ground_paint_bytes; import and save take `uplift` or `precipitation`"
                    .to_string()
            } else {
                format!(
                    "no paintable map `{name}`: the maps are `uplift`, `precipitation` and \
                     `ground`"
                )
            }
        })
    }

    pub fn get(&self, slot: usize) -> Option<&ScalarMap> {
        self.maps[slot].as_ref()
    }

    /// Sets (or with None clears) a map; bumps the revision.
    pub fn set(&mut self, slot: usize, map: Option<ScalarMap>) {
        self.maps[slot] = map;
        self.revision += 1;
        self.stroke = None;
    }

    pub fn get_mut(&mut self, slot: usize) -> Option<&mut ScalarMap> {
        self.revision += 1;
        self.maps[slot].as_mut()
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The maps a run takes (uplift, precipitation).
    pub fn shared(&self) -> (Option<Arc<ScalarMap>>, Option<Arc<ScalarMap>>) {
        (
            self.maps[0].clone().map(Arc::new),
            self.maps[1].clone().map(Arc::new),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.maps.iter().all(Option::is_none)
    }

    /// The painted ground, if any.
    pub fn ground(&self) -> Option<&GroundPaint> {
        self.ground.as_ref()
    }

    /// Sets (or with None clears) the painted ground; ends a ground stroke.
    pub fn set_ground(&mut self, ground: Option<GroundPaint>) {
        self.ground = ground;
        self.ground_revision += 1;
        self.ground_stroke = None;
    }

    /// The painted ground to change (its revision bumped).
    pub fn ground_mut(&mut self) -> Option<&mut GroundPaint> {
        self.ground_revision += 1;
        self.ground.as_mut()
    }

    /// The painted ground and its stroke, both to change (the revision bumped).
    pub fn ground_and_stroke(&mut self) -> (Option<&mut GroundPaint>, &mut Option<GroundStroke>) {
        self.ground_revision += 1;
        (self.ground.as_mut(), &mut self.ground_stroke)
    }

    /// Both counters: the maps' and the painted ground's (what the `paint_data` file was
    /// saved at).
    pub fn revisions(&self) -> (u64, u64) {
        (self.revision, self.ground_revision)
    }

    /// A counter bumped by every change of the painted ground.
    pub fn ground_revision(&self) -> u64 {
        self.ground_revision
    }

    /// The painted ground on `grid` (resampled if it was painted at another size).
    pub fn ground_on(&self, grid: Grid) -> Option<std::borrow::Cow<'_, GroundPaint>> {
        let g = self.ground.as_ref()?;
        if g.grid.width == grid.width && g.grid.height == grid.height {
            Some(std::borrow::Cow::Borrowed(g))
        } else {
            Some(std::borrow::Cow::Owned(g.resampled(grid)))
        }
    }

    /// The painted ground as the `ground_paint` property reads it ([`Self::ground_image_now`]),
    /// or None while the editor writes the scene (it is then in the `paint_data` file).
    pub fn ground_image(&self) -> Option<Gd<Image>> {
        if self.hidden_for_save {
            return None;
        }
        self.ground_image_now()
    }

    /// The painted ground as the scene saves it: an `RGBA8` image twice the terrain's width,
    /// cell `(x, y)` in pixels `(2x, y)` (layers 0–3: rock, cliff, scree, soil) and
    /// `(2x + 1, y)` (layers 4–7: grass, dry grass, sand, snow); None when not painted.
    pub fn ground_image_now(&self) -> Option<Gd<Image>> {
        let g = self.ground.as_ref()?;
        let bytes = PackedByteArray::from(g.to_bytes().as_slice());
        Image::create_from_data(
            2 * g.grid.width as i32,
            g.grid.height as i32,
            false,
            Format::RGBA8,
            &bytes,
        )
    }

    /// Map `slot` as the per-map property (`uplift_paint`, …) reads it: an image
    /// (`FORMAT_RF`, m/yr), or None when it is not painted or while the editor writes the
    /// scene (the maps are then in the `paint_data` file beside it).
    pub fn image(&self, slot: usize) -> Option<Gd<Image>> {
        if self.hidden_for_save {
            return None;
        }
        self.image_now(slot)
    }

    /// Map `slot` as an image (`FORMAT_RF`, m/yr), or None when it is not painted.
    pub fn image_now(&self, slot: usize) -> Option<Gd<Image>> {
        let map = self.get(slot)?;
        convert::scalar_image(map.grid, &map.data).ok()
    }

    /// Every painted map by name (every slot of [`MAPS`] that is painted, and [`GROUND`]).
    pub fn to_dictionary(&self) -> VarDictionary {
        let mut out = VarDictionary::new();
        for (slot, name) in MAPS.iter().enumerate() {
            if let Some(img) = self.image_now(slot) {
                out.set(&GString::from(*name).to_variant(), &img.to_variant());
            }
        }
        if let Some(img) = self.ground_image_now() {
            out.set(&GString::from(GROUND).to_variant(), &img.to_variant());
        }
        out
    }
}

/// The painted ground from its saved image ([`PaintMaps::ground_image`]), checked: an
/// `RGBA8` image of even width whose cells' weights sum to at most 255. `dx`, `dy`: the
/// terrain's cell size.
pub fn ground_from_image(img: &Gd<Image>, dx: f32, dy: f32) -> Result<GroundPaint, String> {
    let (w, h) = (img.get_width(), img.get_height());
    if img.get_format() != Format::RGBA8 || w % 2 != 0 {
        return Err(format!(
            "`ground_paint` must be an RGBA8 image twice the terrain's width, got {w}x{h} {:?}",
            img.get_format()
        ));
    }
    let grid = Grid::with_cells((w / 2) as usize, h as usize, dx, dy)
        .map_err(|e| format!("`ground_paint`: {e}"))?;
    let bytes = img.get_data();
    debug_assert_eq!(bytes.len(), grid.len() * LAYERS);
    GroundPaint::from_bytes(grid, bytes.as_slice()).map_err(|e| e.to_string())
}

/// Painted map `slot` from an image (the scene's saved property), its values checked.
pub fn map_from_image(slot: usize, img: &Gd<Image>) -> Result<ScalarMap, String> {
    let grid = convert::image_grid(img, 1.0, 1.0, MAPS[slot])?;
    let data = convert::image_f32(img);
    check_values(MAPS[slot], slot, &data)?;
    Ok(ScalarMap { grid, data })
}

/// Refuses values a run would refuse: not finite, or negative precipitation.
pub fn check_values(name: &str, slot: usize, data: &[f32]) -> Result<(), String> {
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(format!("`{name}` has {} at value {i}", data[i]));
    }
    if slot == 1 {
        if let Some(v) = data.iter().find(|v| **v < 0.0) {
            return Err(format!("`{name}` must be >= 0, has {v}"));
        }
    }
    Ok(())
}
