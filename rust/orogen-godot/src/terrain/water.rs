//! The lakes' water surface: a mesh of its own (orogen-core's `bake::lake_surface`) drawn
//! with `addons/orogen/runtime/water.gdshader`, so the shoreline is where water and ground
//! meet, within a cell, and the terrain under a lake keeps its true heights.

use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::{ArrayMesh, MeshInstance3D, Shader, ShaderMaterial};
use godot::prelude::*;
use orogen_core::bake::lake_display::{drawn_lakes, LAKE_DEPTH_MIN};
use orogen_core::bake::lake_surface::{lake_surface, LakeSurface};
use orogen_core::world::names;
use orogen_core::{MapData, World};

/// The water shader (also at `addons/orogen/runtime/water.gdshader`).
const WATER_SHADER: &str = include_str!("../../../../addons/orogen/runtime/water.gdshader");

/// The lakes' water mesh, an internal child of the terrain while it has lakes.
#[derive(Default)]
pub struct LakeWater {
    mesh: Option<Gd<MeshInstance3D>>,
}

impl LakeWater {
    /// Shows the lakes of `world` (lakes as drawn: `bake::lake_display`), or removes the
    /// mesh when there are none. A mesh node made now is returned, for the terrain to add
    /// as its child.
    pub fn update(&mut self, world: Option<&World>) -> Option<Gd<MeshInstance3D>> {
        let surface = world.and_then(|w| match w.maps.get(names::LAKE_DEPTH) {
            Some(MapData::Scalar(m)) if m.grid == w.grid() => {
                let depth = drawn_lakes(m.grid, &m.data);
                Some(lake_surface(m.grid, &w.height.data, &depth, LAKE_DEPTH_MIN))
            }
            _ => None,
        });
        let Some(surface) = surface.filter(|s| !s.indices.is_empty()) else {
            if let Some(mut mi) = self.mesh.take() {
                mi.queue_free();
            }
            return None;
        };
        let made = if self.mesh.is_none() {
            let mut shader = Shader::new_gd();
            shader.set_code(WATER_SHADER);
            let mut material = ShaderMaterial::new_gd();
            material.set_shader(&shader);
            let mut mi = MeshInstance3D::new_alloc();
            mi.set_name("Lakes");
            mi.set_material_override(&material);
            self.mesh = Some(mi.clone());
            Some(mi)
        } else {
            None
        };
        if let Some(mi) = &mut self.mesh {
            mi.set_mesh(&mesh_of(&surface));
        }
        made
    }
}

fn mesh_of(surface: &LakeSurface) -> Gd<ArrayMesh> {
    let verts: PackedVector3Array = surface
        .positions
        .iter()
        .map(|p| Vector3::new(p[0], p[1], p[2]))
        .collect();
    // UV.x: the water's depth (level minus ground), interpolated across each triangle.
    let uvs: PackedVector2Array = surface
        .positions
        .iter()
        .zip(&surface.ground)
        .map(|(p, g)| Vector2::new(p[1] - g, 0.0))
        .collect();
    let normals: PackedVector3Array = surface.positions.iter().map(|_| Vector3::UP).collect();
    let indices: PackedInt32Array = surface.indices.iter().map(|&i| i as i32).collect();
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    arrays.set(ArrayType::VERTEX.ord() as usize, &verts.to_variant());
    arrays.set(ArrayType::NORMAL.ord() as usize, &normals.to_variant());
    arrays.set(ArrayType::TEX_UV.ord() as usize, &uvs.to_variant());
    arrays.set(ArrayType::INDEX.ord() as usize, &indices.to_variant());
    let mut mesh = ArrayMesh::new_gd();
    mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
    mesh
}
