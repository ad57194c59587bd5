//! What a terrain shows beyond its border (`TerrainWorld.edge`): orogen-core's
//! `bake::skirt` as a mesh, drawn with `addons/orogen/runtime/skirt.gdshader`.

use godot::classes::{MeshInstance3D, ShaderMaterial};
use godot::prelude::*;
use orogen_core::bake::skirt::Skirt;

use super::mesh_node::{array_mesh, MeshNode};

/// The skirt shader (also at `addons/orogen/runtime/skirt.gdshader`).
const SKIRT_SHADER: &str = include_str!("../../../../addons/orogen/runtime/skirt.gdshader");

/// What `TerrainWorld` draws beyond its border.
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[godot(via = i64)]
pub enum TerrainEdge {
    /// A coast when the sea is on, else land going on to the horizon.
    #[default]
    Auto = 0,
    /// Nothing: the map ends at its border.
    None = 1,
    /// Low-detail land to the horizon.
    Skirt = 2,
    /// The land falls into the sea (the sea plane is drawn too).
    Coast = 3,
}

impl TerrainEdge {
    /// The core's edge for a terrain whose sea is `sea_on`.
    pub fn resolve(self, sea_on: bool) -> orogen_core::bake::skirt::Edge {
        use orogen_core::bake::skirt::Edge;
        match self {
            TerrainEdge::Auto if sea_on => Edge::Coast,
            TerrainEdge::Auto | TerrainEdge::Skirt => Edge::Skirt,
            TerrainEdge::None => Edge::None,
            TerrainEdge::Coast => Edge::Coast,
        }
    }
}

/// The skirt's mesh, an internal child of the terrain while its edge draws one.
pub struct SkirtMesh(MeshNode);

impl Default for SkirtMesh {
    fn default() -> Self {
        SkirtMesh(MeshNode::new("Skirt", SKIRT_SHADER))
    }
}

impl SkirtMesh {
    /// Shows `skirt` with the ground textures of `terrain_material` (the terrain's shader
    /// material), or removes the mesh when it is empty. A mesh node made now is returned,
    /// for the terrain to add as its child.
    pub fn update(
        &mut self,
        skirt: &Skirt,
        terrain_material: Option<&Gd<ShaderMaterial>>,
        sea_level: f32,
    ) -> Option<Gd<MeshInstance3D>> {
        if skirt.indices.is_empty() {
            self.0.remove();
            return None;
        }
        let mesh = array_mesh(&skirt.positions, &skirt.normals, None, &skirt.indices);
        let made = self.0.show(&mesh);
        if let Some(mut m) = self.0.material() {
            if let Some(t) = terrain_material {
                for name in ["ground_albedo", "has_ground", "snowline_m", "shore_m"] {
                    m.set_shader_parameter(name, &t.get_shader_parameter(name));
                }
            }
            m.set_shader_parameter("sea_level", &sea_level.to_variant());
        }
        made
    }
}
