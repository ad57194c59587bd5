//! What a `TerrainWorld` shows beyond its border: the skirt (`edge`) made and shown, from a
//! worker's skirt when one was made for the terrain's edge and sea level, else from the
//! height texture (the mesh node is `edge.rs`'s `SkirtMesh`, the shape orogen-core's
//! `bake::skirt`), and the sea plane (`sea.rs`).

use godot::classes::image::Format;
use godot::classes::node::InternalMode;
use godot::prelude::*;
use orogen_core::bake::ground_weights::{Ground, GroundInputs};
use orogen_core::bake::skirt::{shown_colours, skirt_with, Edge, Look, Skirt};
use orogen_core::World;

use super::mesher::extent;
use super::TerrainWorld;

impl TerrainWorld {
    /// Rebuilds the land or coast beyond the border (`edge`) from the height texture: when
    /// a terrain is shown or applied, or `edge` or the sea changes, not on every live
    /// preview (it reads the heights back and rebuilds the mesh).
    pub(crate) fn update_skirt(&mut self) {
        self.update_skirt_from(None);
    }

    /// [`Self::update_skirt`], taking `made` (a skirt made on a worker for an edge and sea
    /// level) when it was made for the terrain's edge and sea level now.
    pub(crate) fn update_skirt_from(&mut self, made: Option<(Edge, f32, Skirt)>) {
        let edge = self.edge.resolve(self.sea_enabled);
        if let Some((e, sea, skirt)) = made {
            if e == edge && sea == self.sea_level {
                self.show_skirt(&skirt);
                return;
            }
        }
        let heights = self.material.height_image();
        let skirt = match (self.mesher.grid(), heights) {
            (Some(grid), Some(img)) if img.get_format() == Format::RF => {
                let data = img.get_data();
                let heights: Vec<f32> = data
                    .as_slice()
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                if heights.len() == grid.width * grid.height {
                    orogen_core::bake::skirt::skirt(grid, &heights, edge, self.sea_level)
                } else {
                    Default::default()
                }
            }
            _ => Default::default(),
        };
        self.show_skirt(&skirt);
    }

    /// Rebuilds the land or coast beyond the border from `world` (the terrain's data with
    /// its maps), carrying its look outwards: the ground weights along the border (with the
    /// shader's uniforms and the painted ground) and a layered terrain's surface colour.
    pub(crate) fn update_skirt_of(&mut self, world: &World) {
        let edge = self.edge.resolve(self.sea_enabled);
        let grid = world.grid();
        let (params, paint) = self.ground_for_export(grid);
        let shown = shown_colours(world);
        let look = Look {
            inputs: GroundInputs::of(world),
            ground: Ground {
                params,
                paint: paint.as_ref(),
            },
            colours: shown.as_deref(),
            rivers: orogen_core::bake::skirt_rivers::of(world),
        };
        let skirt = skirt_with(grid, &world.height.data, edge, self.sea_level, Some(&look));
        self.show_skirt(&skirt);
    }

    pub(super) fn show_skirt(&mut self, skirt: &Skirt) {
        let material = self.material.get();
        // Sand along the sea only where there is a sea (as the terrain shader has it).
        let sea_on = self.sea_enabled
            || self.edge.resolve(self.sea_enabled) == orogen_core::bake::skirt::Edge::Coast;
        let sea = if sea_on { self.sea_level } else { -1.0e9 };
        if let Some(mi) = self.skirt.update(skirt, material.as_ref(), sea) {
            self.base_mut()
                .add_child_ex(&mi)
                .internal(InternalMode::BACK)
                .done();
        }
    }

    /// Makes, moves, sizes or removes the sea plane, and tells the shader where the sea is.
    pub(super) fn update_sea(&mut self) {
        let sea_on = self.sea_enabled
            || self.edge.resolve(self.sea_enabled) == orogen_core::bake::skirt::Edge::Coast;
        let level = if sea_on { self.sea_level } else { -1.0e9 };
        self.material.set_sea_level(level);
        self.lake_water.set_sea_level(level);
        if !sea_on {
            self.sea.remove();
            return;
        }
        let size = self.mesher.grid().map(extent);
        if let Some(plane) = self.sea.update(self.sea_level, size) {
            self.base_mut()
                .add_child_ex(&plane)
                .internal(InternalMode::BACK)
                .done();
        }
        if let Some(m) = self.material.get() {
            self.sea.sync(&m, self.sea_level);
        }
    }
}
