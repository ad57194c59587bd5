//! The terrain's mesh, as Terrain3D's mesher: one geometry clipmap (see [`crate::clipmap`])
//! built for the grid and `lod_radius`, displaced on the GPU from the height texture, with
//! its level-of-detail centre kept on the camera. The uniforms that tell the shader about
//! it are set by the material.

use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::{ArrayMesh, MeshInstance3D, ShaderMaterial};
use godot::prelude::*;
use orogen_core::field::Grid;

use crate::clipmap::{self, Layout};

/// The clipmap mesh of a terrain and where its detail is centred.
pub struct Mesher {
    /// The drawn mesh, an internal child of the terrain (see [`Mesher::new_instance`]).
    pub instance: Option<Gd<MeshInstance3D>>,
    /// The clipmap layout the mesh was built for, its vertex and index counts.
    lod: Option<(Layout, usize, usize)>,
    /// The grid the LOD follows the camera over, and the centre last sent to the shader.
    grid: Option<Grid>,
    centre: [f32; 2],
}

impl Default for Mesher {
    fn default() -> Self {
        Mesher {
            instance: None,
            lod: None,
            grid: None,
            centre: [f32::NAN; 2],
        }
    }
}

impl Mesher {
    /// A mesh instance drawn with `material`, for the terrain to add as its child.
    pub fn new_instance(material: &Gd<ShaderMaterial>) -> Gd<MeshInstance3D> {
        let mut mi = MeshInstance3D::new_alloc();
        mi.set_name("TerrainMesh");
        mi.set_material_override(material);
        mi
    }

    /// The grid the mesh was last fitted to.
    pub fn grid(&self) -> Option<Grid> {
        self.grid
    }

    /// Builds the clipmap for `grid` at `radius` when its layout changed; returns the layout.
    pub fn fit(&mut self, grid: Grid, radius: u32) -> Layout {
        let layout = Layout::for_terrain(grid.width, grid.height, radius);
        if self.lod.map(|l| l.0) != Some(layout) {
            let mesh = clipmap::build(layout);
            let counts = (mesh.vertices.len(), mesh.indices.len());
            let mesh = clipmap_mesh(&mesh);
            if let Some(mi) = &mut self.instance {
                mi.set_mesh(&mesh);
            }
            self.lod = Some((layout, counts.0, counts.1));
        }
        layout
    }

    /// Follows `grid` from now on; true when it is another grid than before (the centre is
    /// then forgotten, to be placed again).
    pub fn follow_grid(&mut self, grid: Grid) -> bool {
        let moved = self.grid != Some(grid);
        self.grid = Some(grid);
        if moved {
            self.centre = [f32::NAN; 2];
        }
        moved
    }

    /// The LOD centre for a camera at local position `local` (clamped to the terrain; the
    /// terrain's middle for a terrain drawn whole), when it moved; None when it did not or
    /// there is no mesh yet.
    pub fn move_centre(&mut self, local: Vector3) -> Option<[f32; 2]> {
        let (Some(grid), Some((layout, _, _))) = (self.grid, self.lod) else {
            return None;
        };
        let (fx, fz) = cell_coords(grid, local.x, local.z);
        let centre = layout.centre([fx, fz], [grid.width, grid.height]);
        if centre == self.centre {
            return None;
        }
        self.centre = centre;
        Some(centre)
    }

    /// Sets the mesh's bounds to the displaced terrain's (`size_m` across, heights `lo` to
    /// `hi`) and shows it.
    pub fn show(&mut self, size_m: Vector2, lo: f32, hi: f32) {
        if let Some(mi) = &mut self.instance {
            // The mesh's own bounds are the flat unit square; the displaced terrain's are set
            // here so it is never culled wrongly.
            let pad = 1.0 + (hi - lo) * 0.01;
            mi.set_custom_aabb(Aabb::new(
                Vector3::new(-size_m.x * 0.5, lo - pad, -size_m.y * 0.5),
                Vector3::new(size_m.x, hi - lo + 2.0 * pad, size_m.y),
            ));
            mi.set_visible(true);
        }
    }

    /// Hides the mesh (no terrain to draw).
    pub fn hide(&mut self) {
        if let Some(mi) = &mut self.instance {
            mi.set_visible(false);
        }
    }

    /// `TerrainWorld.get_lod_info()`: empty before the terrain is first shown.
    pub fn info(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        if let Some((layout, vertices, indices)) = self.lod {
            d.set("radius", layout.radius as i64);
            d.set("levels", layout.top as i64 + 1);
            d.set("vertices", vertices as i64);
            d.set("triangles", (indices / 3) as i64);
            d.set("full_detail", layout.fixed);
            d.set("centre", Vector2::new(self.centre[0], self.centre[1]));
        }
        d
    }
}

/// Continuous cell coordinates of local position `(x, z)`.
pub fn cell_coords(grid: Grid, x: f32, z: f32) -> (f32, f32) {
    (
        x / grid.dx() + (grid.width as f32 - 1.0) * 0.5,
        z / grid.dy() + (grid.height as f32 - 1.0) * 0.5,
    )
}

/// The terrain's extent in metres, (x, z), edge cell centre to edge cell centre.
pub fn extent(grid: Grid) -> Vector2 {
    Vector2::new(
        (grid.width.max(2) - 1) as f32 * grid.dx(),
        (grid.height.max(2) - 1) as f32 * grid.dy(),
    )
}

/// The clipmap as an `ArrayMesh`: `VERTEX = (kx, level, kz)`, flip quads' corner in `UV`
/// and their flag in `UV2` (see `clipmap`).
fn clipmap_mesh(m: &clipmap::Mesh) -> Gd<ArrayMesh> {
    let verts: Vec<Vector3> = m
        .vertices
        .iter()
        .map(|v| Vector3::new(v[0], v[1], v[2]))
        .collect();
    let uv: Vec<Vector2> = m.quads.iter().map(|q| Vector2::new(q[0], q[1])).collect();
    let uv2: Vec<Vector2> = m.flags.iter().map(|f| Vector2::new(f[0], f[1])).collect();
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    arrays.set(
        ArrayType::VERTEX.ord() as usize,
        &PackedVector3Array::from(verts.as_slice()).to_variant(),
    );
    arrays.set(
        ArrayType::TEX_UV.ord() as usize,
        &PackedVector2Array::from(uv.as_slice()).to_variant(),
    );
    arrays.set(
        ArrayType::TEX_UV2.ord() as usize,
        &PackedVector2Array::from(uv2.as_slice()).to_variant(),
    );
    arrays.set(
        ArrayType::INDEX.ord() as usize,
        &PackedInt32Array::from(m.indices.as_slice()).to_variant(),
    );
    let mut mesh = ArrayMesh::new_gd();
    mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
    mesh
}
