//! A terrain's painted maps: uplift and precipitation (m/yr), one value per cell, with a
//! revision counter a live run watches and the stroke a brush is painting. The brushes
//! and the rest of the painting API are in `paint.rs`.

use std::sync::Arc;

use godot::classes::Image;
use godot::prelude::*;
use orogen_core::field::ScalarMap;

use crate::convert;

/// The maps a brush paints, in slot order.
pub const MAPS: [&str; 2] = ["uplift", "precipitation"];

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
    /// the per-map properties (`uplift_paint`, …) read null so they are not embedded too.
    pub(super) hidden_for_save: bool,
    /// The revision written to (or read from) the `paint_data` file, if any.
    pub(super) saved_revision: Option<u64>,
}

impl PaintMaps {
    /// The slot of map `name`, or an error naming it.
    pub fn slot(name: &str) -> Result<usize, String> {
        MAPS.iter().position(|m| *m == name).ok_or_else(|| {
            format!("no paintable map `{name}`: the maps are `uplift` and `precipitation`")
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

    /// Every painted map by name (every slot of [`MAPS`] that is painted).
    pub fn to_dictionary(&self) -> VarDictionary {
        let mut out = VarDictionary::new();
        for (slot, name) in MAPS.iter().enumerate() {
            if let Some(img) = self.image_now(slot) {
                out.set(&GString::from(*name).to_variant(), &img.to_variant());
            }
        }
        out
    }
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
