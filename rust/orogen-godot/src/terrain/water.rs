//! The lakes' water surface: a mesh of its own (orogen-core's `bake::lake_surface`) drawn
//! with `addons/orogen/runtime/water.gdshader`, so the shoreline is where water and ground
//! meet, within a cell, and the terrain under a lake keeps its true heights.

use godot::classes::{ArrayMesh, MeshInstance3D};
use godot::prelude::*;
use orogen_core::bake::lake_display::{drawn_lakes_of, LAKE_DEPTH_MIN};
use orogen_core::bake::lake_surface::{lake_surface, LakeSurface};
use orogen_core::World;

use super::mesh_node::{array_mesh, MeshNode};

/// The water shader (also at `addons/orogen/runtime/water.gdshader`).
const WATER_SHADER: &str = include_str!("../../../../addons/orogen/runtime/water.gdshader");

/// The lakes' water mesh, an internal child of the terrain while it has lakes, and the sea
/// level it is drawn above (metres, the terrain's; far under any ground when there is no
/// sea).
pub struct LakeWater(MeshNode, f32);

impl Default for LakeWater {
    fn default() -> Self {
        LakeWater(MeshNode::new("Lakes", WATER_SHADER), NO_SEA)
    }
}

/// The sea level while there is no sea.
pub const NO_SEA: f32 = -1.0e9;

impl LakeWater {
    /// Shows `surface` (the lakes' water mesh: [`surface_of`]), or removes the mesh when
    /// there is none or it is empty. A mesh node made now is returned, for the terrain to add
    /// as its child.
    pub fn update(&mut self, surface: Option<&LakeSurface>) -> Option<Gd<MeshInstance3D>> {
        let Some(surface) = surface.filter(|s| !s.indices.is_empty()) else {
            self.0.remove();
            return None;
        };
        let made = self.0.show(&mesh_of(surface));
        self.set_sea_level(self.1);
        made
    }

    /// Draws no lake at or under the sea `level` (metres; [`NO_SEA`] for none): the sea
    /// covers it. (Drawn, such a lake's water lay over the sea, both being transparent: the
    /// pits along `large`'s drowned border showed as a pale band through the sea.)
    pub fn set_sea_level(&mut self, level: f32) {
        self.1 = level;
        if let Some(mut m) = self.0.material() {
            m.set_shader_parameter("sea_level", &level.to_variant());
        }
    }
}

/// The water surface of `world`'s lakes as drawn (`bake::lake_display`: lakes of a few
/// cells left out), from its `lake_depth` map; None without one.
pub fn surface_of(world: &World) -> Option<LakeSurface> {
    let depth = drawn_lakes_of(world)?;
    Some(lake_surface(
        world.grid(),
        &world.height.data,
        &depth,
        LAKE_DEPTH_MIN,
    ))
}

fn mesh_of(surface: &LakeSurface) -> Gd<ArrayMesh> {
    // UV.x: the water's depth (level minus ground), interpolated across each triangle.
    let uvs: Vec<[f32; 2]> = surface
        .positions
        .iter()
        .zip(&surface.ground)
        .map(|(p, g)| [p[1] - g, 0.0])
        .collect();
    let normals = vec![[0.0, 1.0, 0.0]; surface.positions.len()];
    array_mesh(&surface.positions, &normals, Some(&uvs), &surface.indices)
}
