//! The sea: a flat water plane at `sea_level` reaching past the horizon (the shader draws
//! the terrain under it as sea floor, with sand along its shores).

use godot::classes::{MeshInstance3D, PlaneMesh, Shader, ShaderMaterial};
use godot::prelude::*;

/// The sea's shader (also at `addons/orogen/runtime/sea.gdshader`): colour and opacity by
/// the water's depth over the ground behind it.
const SEA_SHADER: &str = include_str!("../../../../addons/orogen/runtime/sea.gdshader");

/// The sea plane, an internal child of the terrain while `sea_enabled`.
#[derive(Default)]
pub struct Sea {
    plane: Option<Gd<MeshInstance3D>>,
    material: Option<Gd<ShaderMaterial>>,
}

impl Sea {
    /// The plane, or None while there is no sea.
    pub fn get(&self) -> Option<Gd<MeshInstance3D>> {
        self.plane.clone()
    }

    /// Removes the plane.
    pub fn remove(&mut self) {
        self.material = None;
        if let Some(mut sea) = self.plane.take() {
            sea.queue_free();
        }
    }

    /// Places the plane at `level` and sizes it for a terrain `extent` metres across (None:
    /// no terrain yet), making it if there is none: then it is returned, for the terrain
    /// to add as its child.
    pub fn update(&mut self, level: f32, extent: Option<Vector2>) -> Option<Gd<MeshInstance3D>> {
        // 460 times the terrain across (past the skirt's reach): past any far plane a view of it needs, so the
        // sea ends at the horizon, never at its own edge.
        let extent = extent.map(|e| e.x.max(e.y)).unwrap_or(25_600.0);
        let made = if self.plane.is_none() {
            let mut shader = Shader::new_gd();
            shader.set_code(SEA_SHADER);
            let mut material = ShaderMaterial::new_gd();
            material.set_shader(&shader);
            let mut plane = PlaneMesh::new_gd();
            plane.set_material(&material);
            self.material = Some(material);
            let mut mi = MeshInstance3D::new_alloc();
            mi.set_name("Sea");
            mi.set_mesh(&plane);
            self.plane = Some(mi.clone());
            Some(mi)
        } else {
            None
        };
        if let Some(mi) = &mut self.plane {
            if let Some(mut plane) = mi.get_mesh().and_then(|m| m.try_cast::<PlaneMesh>().ok()) {
                plane.set_size(Vector2::new(extent * 460.0, extent * 460.0));
            }
            mi.set_position(Vector3::new(0.0, level, 0.0));
        }
        made
    }

    /// Gives the sea the terrain's heights (its material's `heights`, `cells` and
    /// `cell_size`) and the sea `level`, so its depth is the water over the true ground, not
    /// over the level-of-detail mesh drawn far off.
    pub fn sync(&self, terrain: &Gd<ShaderMaterial>, level: f32) {
        let Some(mut m) = self.material.clone() else {
            return;
        };
        for name in ["heights", "cells", "cell_size"] {
            m.set_shader_parameter(name, &terrain.get_shader_parameter(name));
        }
        m.set_shader_parameter("sea_level", &level.to_variant());
    }
}
