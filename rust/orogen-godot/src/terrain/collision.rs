//! The terrain's collision, as Terrain3D's: a `StaticBody3D` with one `HeightMapShape3D`
//! per region of the core's [`collision_regions`](orogen_core::bake::collision) (a
//! 1025² terrain has 16, each a quick update, so a result can be applied a region a frame).

use godot::classes::{CollisionShape3D, HeightMapShape3D, StaticBody3D};
use godot::prelude::*;
use orogen_core::bake::collision::CollisionRegion;

/// The collision body and its shapes, in region order.
#[derive(Default)]
pub struct Collision {
    body: Option<Gd<StaticBody3D>>,
    shapes: Vec<Gd<CollisionShape3D>>,
}

impl Collision {
    /// Removes the body.
    pub fn remove(&mut self) {
        if let Some(mut body) = self.body.take() {
            body.queue_free();
        }
        self.shapes.clear();
    }

    /// Makes the body if there is none, and then returns it for the terrain to add as its
    /// child.
    pub fn make_body(&mut self) -> Option<Gd<StaticBody3D>> {
        if self.body.is_some() {
            return None;
        }
        let mut body = StaticBody3D::new_alloc();
        body.set_name("TerrainCollision");
        self.body = Some(body.clone());
        Some(body)
    }

    /// How many shapes (regions) the body has.
    pub fn shape_count(&self) -> usize {
        self.shapes.len()
    }

    /// Sets region `k` of `count` (samples `spacing` metres apart), making the shapes when
    /// their count changes, at the first. Nothing without a body ([`Collision::make_body`]).
    pub fn set_region(&mut self, k: usize, count: usize, spacing: f32, r: &CollisionRegion) {
        let Some(body) = self.body.clone() else {
            return;
        };
        if k == 0 && self.shapes.len() != count {
            for mut old in self.shapes.drain(..) {
                old.queue_free();
            }
            for i in 0..count {
                let mut cshape = CollisionShape3D::new_alloc();
                cshape.set_name(&format!("Shape{i}"));
                cshape.set_shape(&HeightMapShape3D::new_gd());
                body.clone().add_child(&cshape);
                self.shapes.push(cshape);
            }
        }
        let Some(cshape) = self.shapes.get_mut(k) else {
            return;
        };
        let mut shape = cshape
            .get_shape()
            .and_then(|s| s.try_cast::<HeightMapShape3D>().ok())
            .unwrap_or_else(HeightMapShape3D::new_gd);
        shape.set_map_width(r.width as i32);
        shape.set_map_depth(r.depth as i32);
        shape.set_map_data(&PackedFloat32Array::from(r.heights.as_slice()));
        cshape.set_shape(&shape);
        cshape.set_transform(Transform3D::new(
            Basis::from_scale(Vector3::splat(spacing)),
            Vector3::new(r.centre.0 * spacing, 0.0, r.centre.1 * spacing),
        ));
    }
}
