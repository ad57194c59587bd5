//! A mesh the terrain owns beside its clipmap (the lakes' water, the skirt): one internal
//! child `MeshInstance3D` with a shader of its own, made on first use and freed when empty,
//! and the `ArrayMesh` of plain vertex lists.

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::mesh::{ArrayCustomFormat, ArrayFormat, ArrayType, PrimitiveType};
use godot::classes::{ArrayMesh, MeshInstance3D, Shader, ShaderMaterial};
use godot::obj::EngineBitfield;
use godot::prelude::*;
use std::borrow::Cow;

/// A child mesh node drawn with one shader.
pub struct MeshNode {
    name: &'static str,
    shader: Cow<'static, str>,
    node: Option<Gd<MeshInstance3D>>,
}

impl MeshNode {
    pub const fn new(name: &'static str, shader: &'static str) -> Self {
        MeshNode {
            name,
            shader: Cow::Borrowed(shader),
            node: None,
        }
    }

    /// [`MeshNode::new`] with shader code made at run time.
    pub fn with_code(name: &'static str, shader: String) -> Self {
        MeshNode {
            name,
            shader: Cow::Owned(shader),
            node: None,
        }
    }

    /// Frees the node, if any.
    pub fn remove(&mut self) {
        if let Some(mut mi) = self.node.take() {
            mi.queue_free();
        }
    }

    /// Shows `mesh`, making the node on first use: then it is returned, for the terrain to
    /// add as its child.
    pub fn show(&mut self, mesh: &Gd<ArrayMesh>) -> Option<Gd<MeshInstance3D>> {
        let made = if self.node.is_none() {
            let mut shader = Shader::new_gd();
            shader.set_code(self.shader.as_ref());
            let mut material = ShaderMaterial::new_gd();
            material.set_shader(&shader);
            let mut mi = MeshInstance3D::new_alloc();
            mi.set_name(self.name);
            mi.set_material_override(&material);
            // No shadows: the lakes' water and the skirt go on a little under the ground (the
            // lakes' ring under the bank, the skirt's first ring under the border), and from
            // there their shadow leaked onto the ground just above them: a dark band with
            // stepped edges round every lake (the ring ends at cell edges).
            mi.set_cast_shadows_setting(ShadowCastingSetting::OFF);
            self.node = Some(mi.clone());
            Some(mi)
        } else {
            None
        };
        if let Some(mi) = &mut self.node {
            mi.set_mesh(mesh);
        }
        made
    }

    /// The node's shader material, once made.
    pub fn material(&self) -> Option<Gd<ShaderMaterial>> {
        self.node
            .as_ref()?
            .get_material_override()?
            .try_cast::<ShaderMaterial>()
            .ok()
    }
}

/// Triangles from vertex positions, normals, optional UVs and indices.
pub fn array_mesh(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    uvs: Option<&[[f32; 2]]>,
    indices: &[u32],
) -> Gd<ArrayMesh> {
    array_mesh_with(positions, normals, uvs, &[], indices)
}

/// [`array_mesh`] with up to four custom attributes, `CUSTOM0` on, four floats a vertex
/// each (`RGBA_FLOAT`); one whose length is not the vertices' is left out, and so are the
/// ones after it.
pub fn array_mesh_with(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    uvs: Option<&[[f32; 2]]>,
    custom: &[&[[f32; 4]]],
    indices: &[u32],
) -> Gd<ArrayMesh> {
    // Each array is made in Rust and handed over in one copy (collecting into a packed
    // array pushed its elements one call at a time: 15 ms for a 1025² terrain's skirt).
    let v3 = |p: &[[f32; 3]]| -> PackedVector3Array {
        let v: Vec<Vector3> = p.iter().map(|p| Vector3::new(p[0], p[1], p[2])).collect();
        PackedVector3Array::from(v.as_slice())
    };
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    arrays.set(
        ArrayType::VERTEX.ord() as usize,
        &v3(positions).to_variant(),
    );
    arrays.set(ArrayType::NORMAL.ord() as usize, &v3(normals).to_variant());
    if let Some(uvs) = uvs {
        let uvs: Vec<Vector2> = uvs.iter().map(|u| Vector2::new(u[0], u[1])).collect();
        let uvs = PackedVector2Array::from(uvs.as_slice());
        arrays.set(ArrayType::TEX_UV.ord() as usize, &uvs.to_variant());
    }
    let mut flags = 0u64;
    let slots = [
        ArrayType::CUSTOM0,
        ArrayType::CUSTOM1,
        ArrayType::CUSTOM2,
        ArrayType::CUSTOM3,
    ];
    for (k, (values, slot)) in custom.iter().zip(slots).enumerate() {
        if values.len() != positions.len() {
            break;
        }
        let floats: Vec<f32> = values.iter().flatten().copied().collect();
        let floats = PackedFloat32Array::from(floats.as_slice());
        arrays.set(slot.ord() as usize, &floats.to_variant());
        flags |= (ArrayCustomFormat::RGBA_FLOAT.ord() as u64)
            << (ArrayFormat::CUSTOM0_SHIFT.ord() + k as u64 * ArrayFormat::CUSTOM_BITS.ord());
    }
    let indices: Vec<i32> = indices.iter().map(|&i| i as i32).collect();
    let indices = PackedInt32Array::from(indices.as_slice());
    arrays.set(ArrayType::INDEX.ord() as usize, &indices.to_variant());
    let mut mesh = ArrayMesh::new_gd();
    mesh.add_surface_from_arrays_ex(PrimitiveType::TRIANGLES, &arrays)
        .flags(ArrayFormat::from_ord(flags))
        .done();
    mesh
}
