//! What a terrain shows beyond its border (`TerrainWorld.edge`): orogen-core's
//! `bake::skirt` as a mesh, drawn with `addons/orogen/runtime/skirt.gdshader`.

use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::{ArrayMesh, MeshInstance3D, Shader, ShaderMaterial};
use godot::prelude::*;
use orogen_core::bake::skirt::Skirt;

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
#[derive(Default)]
pub struct SkirtMesh {
    mesh: Option<Gd<MeshInstance3D>>,
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
            if let Some(mut mi) = self.mesh.take() {
                mi.queue_free();
            }
            return None;
        }
        let made = if self.mesh.is_none() {
            let mut shader = Shader::new_gd();
            shader.set_code(SKIRT_SHADER);
            let mut material = ShaderMaterial::new_gd();
            material.set_shader(&shader);
            let mut mi = MeshInstance3D::new_alloc();
            mi.set_name("Skirt");
            mi.set_material_override(&material);
            self.mesh = Some(mi.clone());
            Some(mi)
        } else {
            None
        };
        let Some(mi) = &mut self.mesh else {
            return made;
        };
        if let Some(mut m) = mi
            .get_material_override()
            .and_then(|m| m.try_cast::<ShaderMaterial>().ok())
        {
            if let Some(t) = terrain_material {
                for name in ["ground_albedo", "has_ground", "snowline_m", "shore_m"] {
                    m.set_shader_parameter(name, &t.get_shader_parameter(name));
                }
            }
            m.set_shader_parameter("sea_level", &sea_level.to_variant());
        }
        let verts: PackedVector3Array = skirt
            .positions
            .iter()
            .map(|p| Vector3::new(p[0], p[1], p[2]))
            .collect();
        let normals: PackedVector3Array = skirt
            .normals
            .iter()
            .map(|n| Vector3::new(n[0], n[1], n[2]))
            .collect();
        let indices: PackedInt32Array = skirt.indices.iter().map(|&i| i as i32).collect();
        let mut arrays = VarArray::new();
        arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
        arrays.set(ArrayType::VERTEX.ord() as usize, &verts.to_variant());
        arrays.set(ArrayType::NORMAL.ord() as usize, &normals.to_variant());
        arrays.set(ArrayType::INDEX.ord() as usize, &indices.to_variant());
        let mut mesh = ArrayMesh::new_gd();
        mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
        mi.set_mesh(&mesh);
        made
    }
}
