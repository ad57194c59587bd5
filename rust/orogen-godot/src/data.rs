//! `TerrainData`: a terrain's heights and maps as Godot images (what Bake saves as `.res`,
//! and what the editor saves beside a scene); `TerrainPaint`: a terrain's painted maps.

use godot::classes::{IResource, Image, Resource};
use godot::prelude::*;
use orogen_core::field::Heightfield;
use orogen_core::world::names;
use orogen_core::{MapData, World};

use crate::convert;

/// A generated terrain: its heights, cell size and maps, as a resource (saved as `.res`).
///
/// Heights (`FORMAT_RF`, metres), cell size (metres) and named maps (`name → Image`;
/// scalars `FORMAT_RF`, masks and the material index `FORMAT_L8`, labels `FORMAT_RGB8`,
/// splat and surface colour `FORMAT_RGBA8`). A hydraulic run's `water_depth` is always among
/// the maps, whether or not the recipe's `outputs` name it.
#[derive(GodotClass)]
#[class(tool, base = Resource)]
pub struct TerrainData {
    /// Terrain heights, metres, one `FORMAT_RF` pixel per cell (x east, y = +z south).
    #[export]
    pub heights: Option<Gd<Image>>,
    /// Distance between neighbouring cells along x (east-west), metres.
    #[export]
    pub cell_size: f32,
    /// Distance between neighbouring rows along z (north-south), metres, for non-square
    /// cells (a DEM in geographic coordinates); 0 means square cells of `cell_size`.
    #[export]
    pub cell_size_y: f32,
    /// Every other map the run produced, by name (see `get_map_names`).
    #[export]
    pub maps: VarDictionary,
    /// The run's river curves (a Graph domain's rivers, or a grid's smoothed ones), one
    /// dictionary per reach from source to mouth: `curve` (`Curve3D`, points in metres: x
    /// east, y the bed height, z south), `width` (`PackedFloat32Array`, metres per point),
    /// `discharge` (per point, m² or m³/yr) and `order` (Strahler, int). Empty when the
    /// run traced none.
    #[export]
    pub rivers: Array<VarDictionary>,
    /// A Graph domain's nodes once eroded, for overlays: one point per node in the
    /// terrain's centred metres (x east, y its height, z south). Empty for a grid run.
    #[export]
    pub graph_nodes: PackedVector3Array,
    /// The drainage of each of `graph_nodes` (m², or m³/yr with precipitation).
    #[export]
    pub graph_drainage: PackedFloat32Array,
    base: Base<Resource>,
}

#[godot_api]
impl IResource for TerrainData {
    fn init(base: Base<Resource>) -> Self {
        TerrainData {
            heights: None,
            cell_size: 1.0,
            cell_size_y: 0.0,
            maps: VarDictionary::new(),
            rivers: Array::new(),
            graph_nodes: PackedVector3Array::new(),
            graph_drainage: PackedFloat32Array::new(),
            base,
        }
    }
}

#[godot_api]
impl TerrainData {
    /// Width of the height map in cells (0 when there is none).
    #[func]
    pub fn get_width(&self) -> i32 {
        self.heights.as_ref().map_or(0, |i| i.get_width())
    }

    /// Depth (rows) of the height map in cells (0 when there is none).
    #[func]
    pub fn get_depth(&self) -> i32 {
        self.heights.as_ref().map_or(0, |i| i.get_height())
    }
}

impl TerrainData {
    /// A resource holding `world`'s heights and maps.
    pub fn from_world(world: &World) -> Result<Gd<TerrainData>, String> {
        let grid = world.grid();
        let heights = convert::scalar_image(grid, &world.height.data)?;
        let mut maps = VarDictionary::new();
        let mut set = |name: &str, img: Gd<Image>| {
            maps.set(&GString::from(name).to_variant(), &img.to_variant());
        };
        set(
            names::UPLIFT,
            convert::scalar_image(grid, &world.uplift.data)?,
        );
        for (name, map) in &world.maps {
            set(name, convert::map_image(map)?);
        }
        // A hydraulic run's water is kept even when the recipe's `outputs` do not ask for
        // it, so the terrain still shows it when set from this resource (undo, a saved .res).
        if let (Some(water), false) = (
            &world.sim.water_depth,
            world.maps.contains_key(names::WATER_DEPTH),
        ) {
            set(names::WATER_DEPTH, convert::scalar_image(grid, water)?);
        }
        Ok(TerrainData::assemble(heights, maps, world))
    }

    /// A resource of `heights` and `maps` (images made from `world`), with `world`'s cell
    /// size and a Graph domain's rivers and nodes.
    pub fn assemble(heights: Gd<Image>, maps: VarDictionary, world: &World) -> Gd<TerrainData> {
        let grid = world.grid();
        let all = world.rivers.as_deref().unwrap_or(&[]);
        let rivers = rivers_array(all, grid, 0..all.len());
        TerrainData::assemble_with(heights, maps, world, rivers)
    }

    /// [`TerrainData::assemble`] with the rivers already made (a slice at a time).
    pub fn assemble_with(
        heights: Gd<Image>,
        maps: VarDictionary,
        world: &World,
        rivers: Array<VarDictionary>,
    ) -> Gd<TerrainData> {
        let grid = world.grid();
        let mut data = TerrainData::new_gd();
        {
            let mut d = data.bind_mut();
            d.heights = Some(heights);
            d.cell_size = grid.dx();
            d.cell_size_y = if grid.dy() == grid.dx() {
                0.0
            } else {
                grid.dy()
            };
            d.maps = maps;
            d.rivers = rivers;
            if let Some(nodes) = &world.graph_nodes {
                let half_x = (grid.width as f32 - 1.0) * 0.5 * grid.dx();
                let half_z = (grid.height as f32 - 1.0) * 0.5 * grid.dy();
                d.graph_nodes = nodes
                    .points
                    .iter()
                    .map(|p| Vector3::new(p[0] - half_x, p[2], p[1] - half_z))
                    .collect();
                d.graph_drainage = PackedFloat32Array::from(nodes.drainage.as_slice());
            }
        }
        data
    }

    /// Distance between rows, metres: `cell_size_y`, or `cell_size` when that is 0.
    pub fn dy(&self) -> f32 {
        if self.cell_size_y == 0.0 {
            self.cell_size
        } else {
            self.cell_size_y
        }
    }

    /// The world these images describe (heights, uplift, every readable map, and the
    /// nodata cells of a `nodata` mask).
    pub fn to_world(&self) -> Result<World, String> {
        let img = self.heights.as_ref().ok_or("TerrainData has no heights")?;
        let grid = convert::image_grid(img, self.cell_size, self.dy(), "TerrainData.heights")?;
        let height = Heightfield::from_vec(grid, convert::image_f32(img), "TerrainData.heights")
            .map_err(|e| e.to_string())?;
        let mut world = World::new(height, 0);
        for (key, value) in self.maps.iter_shared() {
            let name = key.to_string();
            let Ok(img) = value.try_to::<Gd<Image>>() else {
                return Err(format!("TerrainData.maps[`{name}`] is not an Image"));
            };
            match convert::image_map(&img, grid, &name)? {
                MapData::Scalar(m) if name == names::UPLIFT => world.uplift = m,
                MapData::Mask(m) if name == names::NODATA => {
                    world.set_nodata(m.data.iter().map(|&v| v != 0).collect())
                }
                map => {
                    world.maps.insert(name, map);
                }
            }
        }
        // (Without them a scene loaded or an undo drew its rivers from the grid's cells,
        // and none ran on over the skirt.)
        if !self.rivers.is_empty() {
            world.rivers = Some(rivers_from_array(&self.rivers, grid)?);
        }
        Ok(world)
    }
}

/// A `TerrainWorld`'s painted maps by name (`uplift`, `precipitation`, and any other map a
/// brush paints): `FORMAT_RF` images, one value per cell. The editor writes it beside the
/// scene (`<scene>.paint.res`) when the scene is saved, so the scene holds only a reference.
#[derive(GodotClass)]
#[class(tool, init, base = Resource)]
pub struct TerrainPaint {
    /// Painted map name → `Image` (`FORMAT_RF`).
    #[export]
    pub maps: VarDictionary,
    base: Base<Resource>,
}

/// The rivers of `TerrainData.rivers` (as [`rivers_array`] makes them) on `grid`; an error
/// names the first reach that is not as it makes them.
pub fn rivers_from_array(
    rivers: &Array<VarDictionary>,
    grid: orogen_core::Grid,
) -> Result<Vec<orogen_core::rasterise::River>, String> {
    let half_x = (grid.width as f64 - 1.0) * 0.5 * grid.dx() as f64;
    let half_z = (grid.height as f64 - 1.0) * 0.5 * grid.dy() as f64;
    let mut out = Vec::with_capacity(rivers.len());
    for (k, d) in rivers.iter_shared().enumerate() {
        let bad = |what: &str| format!("TerrainData.rivers[{k}]: {what}");
        let curve = d
            .get("curve")
            .and_then(|v| v.try_to::<Gd<godot::classes::Curve3D>>().ok())
            .ok_or_else(|| bad("no `curve` (Curve3D)"))?;
        let floats = |key: &str| {
            d.get(key)
                .and_then(|v| v.try_to::<PackedFloat32Array>().ok())
                .map(|a| a.to_vec())
                .ok_or_else(|| bad(&format!("no `{key}` (PackedFloat32Array)")))
        };
        let (width, discharge) = (floats("width")?, floats("discharge")?);
        let order = d
            .get("order")
            .and_then(|v| v.try_to::<i64>().ok())
            .unwrap_or(1);
        // The stored form, as `rivers_array` wrote it (per point its handles, then its
        // position): one call, not one per point.
        let stored = curve
            .get("_data")
            .try_to::<VarDictionary>()
            .ok()
            .and_then(|s| s.get("points"))
            .and_then(|v| v.try_to::<PackedVector3Array>().ok())
            .ok_or_else(|| bad("its curve has no points"))?;
        let points: Vec<[f64; 3]> = stored
            .as_slice()
            .chunks_exact(3)
            .map(|c| {
                let p = c[2];
                [p.x as f64 + half_x, p.z as f64 + half_z, p.y as f64]
            })
            .collect();
        if width.len() != points.len() || discharge.len() != points.len() {
            return Err(bad(&format!(
                "{} points but {} widths and {} discharges",
                points.len(),
                width.len(),
                discharge.len()
            )));
        }
        out.push(orogen_core::rasterise::River {
            points,
            discharge,
            width,
            order: order.clamp(1, u32::MAX as i64) as u32,
        });
    }
    Ok(out)
}

/// Rivers as `TerrainData.rivers` holds them: a `Curve3D` per reach (x east, y the bed
/// height, z south, metres, centred on the terrain as `TerrainWorld` draws it) with its
/// widths, discharges and Strahler order.
/// Only the reaches in `range` are made (a delivery makes them a slice at a time).
pub fn rivers_array(
    rivers: &[orogen_core::rasterise::River],
    grid: orogen_core::Grid,
    range: std::ops::Range<usize>,
) -> Array<VarDictionary> {
    let half_x = (grid.width as f64 - 1.0) * 0.5 * grid.dx() as f64;
    let half_z = (grid.height as f64 - 1.0) * 0.5 * grid.dy() as f64;
    let mut out = Array::new();
    for r in &rivers[range.start.min(rivers.len())..range.end.min(rivers.len())] {
        // The whole curve in one call through its stored form (`Curve3D._set_data`: per
        // point its in and out handles, then its position; and the tilts), where a call per
        // point (`add_point`) took 83 ms of a frame for a 1025² grid's 758 reaches.
        let mut points = PackedVector3Array::new();
        points.resize(r.points.len() * 3);
        {
            let slice = points.as_mut_slice();
            for (k, p) in r.points.iter().enumerate() {
                slice[k * 3 + 2] =
                    Vector3::new((p[0] - half_x) as f32, p[2] as f32, (p[1] - half_z) as f32);
            }
        }
        let mut stored = VarDictionary::new();
        stored.set("points", &points.to_variant());
        stored.set(
            "tilts",
            &PackedFloat32Array::from(vec![0.0f32; r.points.len()].as_slice()).to_variant(),
        );
        let mut curve = godot::classes::Curve3D::new_gd();
        curve.set("_data", &stored.to_variant());
        let mut d = VarDictionary::new();
        d.set("curve", &curve.to_variant());
        d.set(
            "width",
            &PackedFloat32Array::from(r.width.as_slice()).to_variant(),
        );
        d.set(
            "discharge",
            &PackedFloat32Array::from(r.discharge.as_slice()).to_variant(),
        );
        d.set("order", &(r.order as i64).to_variant());
        out.push(&d);
    }
    out
}
