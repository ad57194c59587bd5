//! The lakes' water surface: a mesh of its own (orogen-core's `bake::lake_surface`) drawn
//! with `addons/orogen/runtime/water.gdshader`, so the shoreline is where water and ground
//! meet, within a cell, and the terrain under a lake keeps its true heights.

use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::node::InternalMode;
use godot::classes::{ArrayMesh, MeshInstance3D, Node3D, Shader, ShaderMaterial};
use godot::prelude::*;
use orogen_core::bake::lake_surface::LakeSurface;

/// The water shader (also at `addons/orogen/runtime/water.gdshader`).
const WATER_SHADER: &str = include_str!("../../../addons/orogen/runtime/water.gdshader");

/// Shows `surface` in `slot` (a child of `parent` made on first use), or removes the mesh
/// when there is no water.
pub fn show_lakes(
    parent: &mut Gd<Node3D>,
    slot: &mut Option<Gd<MeshInstance3D>>,
    surface: Option<&LakeSurface>,
) {
    let Some(surface) = surface.filter(|s| !s.indices.is_empty()) else {
        if let Some(mut mi) = slot.take() {
            mi.queue_free();
        }
        return;
    };
    let mi = slot.get_or_insert_with(|| {
        let mut shader = Shader::new_gd();
        shader.set_code(WATER_SHADER);
        let mut material = ShaderMaterial::new_gd();
        material.set_shader(&shader);
        let mut mi = MeshInstance3D::new_alloc();
        mi.set_name("Lakes");
        mi.set_material_override(&material);
        parent.add_child_ex(&mi).internal(InternalMode::BACK).done();
        mi
    });
    let verts: PackedVector3Array = surface
        .positions
        .iter()
        .map(|p| Vector3::new(p[0], p[1], p[2]))
        .collect();
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
    mi.set_mesh(&mesh);
}
