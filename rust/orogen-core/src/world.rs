//! The world a recipe works on: the terrain (surface and layers), uplift, the simulation
//! state beside it, and the named maps the stages produced for export.
//!
//! Map names are the same everywhere: in the core, in the CLI's file names
//! (`<name>.exr` / `<name>.png`) and in Godot's `TerrainWorld.get_map(name)`.

use std::collections::BTreeMap;

use crate::error::{OrogenError, Result};
use crate::field::{Field, Grid, Heightfield, LabelMap, MaskMap, ScalarMap};
use crate::mesh::NodeGraph;
use crate::stages::strata::WorldMaterial;
use crate::state::{Layers, SimState, TerrainMut};

/// Names of the maps Orogen produces. Stages must use these constants.
/// A material the wind moves this freely or more (wind resistance below this) is loose
/// ground, as sand (0.1) and soil (0.3) are; shale (0.5) and the rocks are firm.
pub const LOOSE_WIND_RESISTANCE: f32 = 0.5;

pub mod names {
    /// Terrain heights, metres.
    pub const HEIGHT: &str = "height";
    /// Tectonic uplift rate, m/yr.
    pub const UPLIFT: &str = "uplift";
    /// Drainage area (m²) or, with precipitation, discharge (m³/yr).
    pub const DRAINAGE: &str = "drainage";
    /// Depression-free water surface, metres.
    pub const WATER_SURFACE: &str = "water_surface";
    /// Water surface minus terrain, metres.
    pub const LAKE_DEPTH: &str = "lake_depth";
    /// Mask: 1 where discharge passes the river threshold.
    pub const RIVERS: &str = "rivers";
    /// Label: one id per outlet basin.
    pub const BASINS: &str = "basins";
    /// Index (8-bit) of the exposed material, in the world's material order.
    pub const MATERIAL: &str = "material";
    /// RGBA weights of the four most common exposed materials (a splat map), blended into
    /// the material beneath where the exposed layer is thinner than [`super::SURFACE_BLEND_M`].
    pub const SPLAT: &str = "splat";
    /// sRGB colour of the exposed material per cell (alpha 255), blended towards the
    /// material beneath where the exposed layer is thinner than
    /// [`super::SURFACE_BLEND_M`]: a ready-made albedo for renderers.
    pub const SURFACE_COLOUR: &str = "surface_colour";
    /// Depth of loose ground at the surface, metres: layer 0 (the deposits) and the
    /// layers of loose materials under it down to the first firm one
    /// ([`super::LOOSE_WIND_RESISTANCE`]).
    pub const SEDIMENT_DEPTH: &str = "sediment_depth";
    /// Where the bedrock surface lies in the strata's column, 0 (below the column's foot)
    /// to 1 (its top), for beds of one thickness everywhere: see [`super::StrataLook`].
    pub const STRATA_POSITION: &str = "strata_position";
    /// The strata's column, bottom up, as one row of sRGB colours: sampled at
    /// `strata_position` it gives the colour of the bed the surface cuts.
    pub const STRATA_COLUMN: &str = "strata_column";
    /// Net change of the surface over the run, metres (negative where eroded).
    pub const EROSION: &str = "erosion";
    /// Water depth over the surface, metres (a hydraulic run's simulation state).
    pub const WATER_DEPTH: &str = "water_depth";
    /// Prefix of each material's thickness map, `layer_<name>`, metres.
    pub const LAYER_PREFIX: &str = "layer_";
    /// Mask: 1 where the heightmap had no data (its `nodata` cells, outlets held at a
    /// fixed base level); written only when the terrain has such cells.
    pub const NODATA: &str = "nodata";
}

/// A DEM's nodata cells: outlets held at a fixed height by every stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Nodata {
    /// One entry per cell, true = nodata.
    pub mask: std::sync::Arc<[bool]>,
    /// The height they are held at, metres (the heightmap's lowest valid height).
    pub height: f32,
}

/// Thickness, metres, below which an exposed layer's colour fades into the colour of the
/// material beneath it in [`World::surface_colours`] (so thin beds and fresh sediment do not
/// switch colour cell by cell).
pub const SURFACE_BLEND_M: f32 = 1.0;

/// Texels of the `strata_column` map.
pub const STRATA_COLUMN_TEXELS: usize = 2048;

/// Share of the strata column, at its foot, that shows the bottom material.
const STRATA_FOOT: f32 = 1.0 / 64.0;

/// What the layer maps take from the whole map ([`World::layer_totals`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerTotals {
    /// Cells exposing each material, by name in world order.
    pub exposed: Vec<u64>,
    /// Each bed's full thickness (the most any cell holds), metres; 0 for layer 0.
    pub full: Vec<f32>,
}

/// Beds drawn as bands at the renderer's own resolution, not cell by cell: where every bed
/// has one thickness everywhere (however dipped or folded), the bed at a point of the
/// surface follows from how far the bedrock there stands above the column's foot, so a
/// renderer that interpolates [`StrataLook::position`] between cells and looks it up in
/// [`StrataLook::column`] draws each bed's edge as a smooth line across the cells (the
/// ledges of a canyon wall) instead of a cell-sized colour blotch.
#[derive(Clone, Debug, PartialEq)]
pub struct StrataLook {
    /// Per cell: the bedrock surface's place in the column, `(H + foot) / (total + foot)`,
    /// with `H` the beds' thickness left above the bottom material (sediment not counted)
    /// and `foot` a sliver of bottom material below the column.
    pub position: Vec<f32>,
    /// [`STRATA_COLUMN_TEXELS`] sRGB colours (alpha 255): texel `t` is the colour at
    /// position `(t + 0.5) / texels`, the bottom material below the foot.
    pub column: Vec<[u8; 4]>,
}

/// One produced map.
#[derive(Clone, Debug, PartialEq)]
pub enum MapData {
    Scalar(ScalarMap),
    Mask(MaskMap),
    Labels(LabelMap),
    /// Small indices (e.g. the exposed material), written as 8-bit gray values as they are.
    Index(MaskMap),
    /// Four 8-bit weights per cell (a splat map), written as RGBA PNG.
    Rgba(Field<[u8; 4]>),
    /// Two floats per cell (e.g. velocity x, y), written as a two-channel EXR.
    Vector(Field<[f32; 2]>),
}

impl MapData {
    /// The grid the map lies on.
    pub fn grid(&self) -> Grid {
        match self {
            MapData::Scalar(m) => m.grid,
            MapData::Mask(m) => m.grid,
            MapData::Labels(m) => m.grid,
            MapData::Index(m) => m.grid,
            MapData::Rgba(m) => m.grid,
            MapData::Vector(m) => m.grid,
        }
    }
}

/// The random-point stream graph a `domain: Graph(..)` recipe erodes (Cordonnier et al.
/// 2016 §3), with its node values. The stages that run on a graph step these; the
/// heightfield is made from them when the stages are done.
#[derive(Clone, Debug)]
pub struct GraphState {
    /// Nodes, Delaunay links and Voronoi areas. Its own outlet mask is empty: a stage lays
    /// its open borders over it ([`GraphState::with_borders`]).
    pub graph: std::sync::Arc<NodeGraph>,
    /// The Delaunay triangles, counter-clockwise node indices.
    pub triangles: std::sync::Arc<[[u32; 3]]>,
    /// Node heights, metres.
    pub heights: Vec<f32>,
    /// Node uplift rates, m/yr.
    pub uplift: Vec<f32>,
    /// No layers: a graph terrain is one material.
    pub layers: Layers,
}

impl GraphState {
    /// The graph with the nodes on the rectangle's open `borders` as outlets: the sides
    /// lie at `x = 0` (West), `x = width` (East), `y = 0` (North) and `y = height`
    /// (South), metres, as the raster's rows and columns do.
    pub fn with_borders(
        &self,
        borders: &[crate::neighbourhood::Side],
        width: f64,
        height: f64,
    ) -> crate::neighbourhood::WithOutlets<std::sync::Arc<NodeGraph>> {
        use crate::neighbourhood::Side;
        let open = |s: Side| borders.contains(&s);
        let mask = self
            .graph
            .positions()
            .iter()
            .map(|p| {
                (open(Side::West) && p.x <= 0.0)
                    || (open(Side::East) && p.x >= width)
                    || (open(Side::North) && p.y <= 0.0)
                    || (open(Side::South) && p.y >= height)
            })
            .collect();
        crate::neighbourhood::WithOutlets::new(self.graph.clone(), mask).expect("one flag per node")
    }
}

/// Heights plus named maps; what a recipe run produces.
#[derive(Clone, Debug)]
pub struct World {
    /// Terrain surface heights, metres: bedrock plus [`World::layers`].
    pub height: Heightfield,
    /// The material layers over bedrock (none for a one-material terrain).
    pub layers: Layers,
    /// The materials, one per layer top down, then the bottom one (empty for a
    /// one-material terrain).
    pub materials: Vec<WorldMaterial>,
    /// Simulation state (water, sediment, fluxes, velocity): not exported unless the
    /// recipe's `outputs` name it.
    pub sim: SimState,
    /// Uplift rate, m/yr (zero when the recipe has none).
    pub uplift: ScalarMap,
    /// Maps produced by stages, by name (see [`names`]).
    pub maps: BTreeMap<String, MapData>,
    /// The recipe's seed, for stages that draw random numbers.
    pub seed: u64,
    /// The heightmap's nodata cells, if it has any: outlets for routing, held at their
    /// height after every step of every stage.
    pub nodata: Option<Nodata>,
    /// On a Graph domain, the stream graph the stages erode; `height` is then the
    /// heightfield made from it (the initial terrain until the stages are done).
    pub graph: Option<Box<GraphState>>,
    /// A Graph domain's rivers, once its heightfield is made, or a grid's river curves
    /// (the recipe's `river_curves`) once the stages are done: reaches of the stream tree
    /// as polylines with discharge, width and Strahler order (`rivers.json`).
    pub rivers: Option<Vec<crate::rasterise::River>>,
    /// On a grid, the receiver of each cell along the stream tree (lakes resolved; an
    /// outlet receives itself) of the routing that made the hydrology maps: the river
    /// curves follow it. Set with the hydrology maps.
    pub stream_receivers: Option<std::sync::Arc<[u32]>>,
    /// A Graph domain's nodes once eroded, for overlays: position and height (x, y, h,
    /// metres) and drainage (m², or m³/yr with precipitation) of each node.
    pub graph_nodes: Option<GraphNodes>,
    /// The recipe's planet once simulated (a `planet` section, or a `Planet` source),
    /// written as the `planet_*` equirectangular maps.
    pub planet: Option<std::sync::Arc<crate::planet::Planet>>,
    /// What the stages measured since the runner last took it, by name, summed over their
    /// steps: `wind_blown_off_m3` (material the wind carried off the map, m³),
    /// `hydraulic_water_lost_m3` and `hydraulic_sediment_lost_m3` (through open borders).
    /// The runner moves each stage's figures into its entry of `bake.json`'s `stages`.
    pub figures: BTreeMap<&'static str, f64>,
}

/// The eroded graph's nodes as an overlay draws them ([`World::graph_nodes`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphNodes {
    /// x, y (metres, from the grid's first cell) and height (metres) of each node.
    pub points: Vec<[f32; 3]>,
    /// Drainage of each node: m², or m³/yr with precipitation.
    pub drainage: Vec<f32>,
}

impl World {
    /// Adds `value` to the figure `name` ([`World::figures`]).
    pub fn add_figure(&mut self, name: &'static str, value: f64) {
        *self.figures.entry(name).or_insert(0.0) += value;
    }

    /// A world over `height` with zero uplift and no maps.
    pub fn new(height: Heightfield, seed: u64) -> Self {
        let uplift = ScalarMap::filled(height.grid, 0.0);
        World {
            height,
            layers: Layers::none(),
            materials: Vec::new(),
            sim: SimState::default(),
            uplift,
            maps: BTreeMap::new(),
            seed,
            nodata: None,
            graph: None,
            rivers: None,
            stream_receivers: None,
            graph_nodes: None,
            planet: None,
            figures: BTreeMap::new(),
        }
    }

    /// Sets the nodata cells (true = nodata, one per cell; ignored when none is set or the
    /// length differs): they are held at their current height and exported as the
    /// `nodata` map.
    pub fn set_nodata(&mut self, mask: Vec<bool>) {
        let Some(first) = mask.iter().position(|&b| b) else {
            return;
        };
        if mask.len() != self.grid().len() {
            return;
        }
        let grid = self.grid();
        self.maps.insert(
            names::NODATA.into(),
            MapData::Mask(Field {
                grid,
                data: mask.iter().map(|&b| u8::from(b)).collect(),
            }),
        );
        self.nodata = Some(Nodata {
            height: self.height.data[first],
            mask: mask.into(),
        });
    }

    /// The nodata mask, if the terrain has nodata cells.
    pub fn nodata_mask(&self) -> Option<std::sync::Arc<[bool]>> {
        self.nodata.as_ref().map(|n| n.mask.clone())
    }

    /// Puts every nodata cell back to its fixed height (a base level: what a stage moved
    /// into it has left the map), with no layer over its bottom material, so the surface
    /// stays bedrock plus layers there too. Called after every step of every stage.
    pub fn hold_nodata(&mut self) {
        let Some(nd) = &self.nodata else {
            return;
        };
        for (h, &m) in self.height.data.iter_mut().zip(nd.mask.iter()) {
            if m {
                *h = nd.height;
            }
        }
        for layer in self.layers.thickness_all_mut() {
            for (t, &m) in layer.iter_mut().zip(nd.mask.iter()) {
                if m {
                    *t = 0.0;
                }
            }
        }
    }

    /// The grid shared by every map.
    pub fn grid(&self) -> Grid {
        self.height.grid
    }

    /// The terrain as processes change it: surface and layers (on a Graph domain, the
    /// graph's node heights).
    pub fn terrain_mut(&mut self) -> TerrainMut<'_> {
        match &mut self.graph {
            Some(g) => TerrainMut::new(&mut g.heights, &mut g.layers),
            None => TerrainMut::new(&mut self.height.data, &mut self.layers),
        }
    }

    /// Heights of the nodes the stages step: the grid's cells, or the graph's nodes.
    pub fn node_heights(&self) -> &[f32] {
        match &self.graph {
            Some(g) => &g.heights,
            None => &self.height.data,
        }
    }

    /// Uplift rate of the nodes the stages step, m/yr.
    pub fn node_uplift(&self) -> &[f32] {
        match &self.graph {
            Some(g) => &g.uplift,
            None => &self.uplift.data,
        }
    }

    /// `map` (on this world's grid) at the nodes the stages step: the map itself on a grid,
    /// sampled bilinearly at each node's position on a graph.
    pub fn at_nodes(&self, map: ScalarMap) -> Vec<f32> {
        match &self.graph {
            None => map.data,
            Some(g) => sample_at(&map, g.graph.positions()),
        }
    }

    /// The neighbourhood a stage walks on a Graph domain, with the nodes on the open
    /// `borders` of the grid's rectangle as outlets; `None` on a grid.
    pub fn graph_with_borders(
        &self,
        borders: &[crate::neighbourhood::Side],
    ) -> Option<crate::neighbourhood::WithOutlets<std::sync::Arc<NodeGraph>>> {
        let grid = self.grid();
        self.graph.as_ref().map(|g| {
            g.with_borders(
                borders,
                (grid.width - 1) as f64 * grid.dx() as f64,
                (grid.height - 1) as f64 * grid.dy() as f64,
            )
        })
    }

    /// On a Graph domain, the grid's heights as the graph now stands: Gaussian kernels of
    /// the mean node spacing on the node heights (the fast surface, for live views; the
    /// final heightfield is made when the stages are done). `None` on a grid.
    pub fn graph_preview(&self) -> Option<Vec<f32>> {
        let g = self.graph.as_ref()?;
        let spacing = (g.graph.total_area() / g.graph.len().max(1) as f64).sqrt();
        crate::rasterise::gaussian::gaussian_heights(&g.graph, &g.heights, self.grid(), spacing)
            .ok()
    }

    /// Errs, naming `field`, when this world is a Graph domain: for stages that run on the
    /// grid only.
    pub fn require_grid(&self, field: &str) -> Result<()> {
        match self.graph {
            None => Ok(()),
            Some(_) => Err(OrogenError::invalid(
                field,
                "runs on a Grid domain only; a Graph domain takes StreamPower, Thermal, \
                 Hydrology and TimeLoops of them",
            )),
        }
    }

    /// The terrain and the simulation state beside it, both to change.
    pub fn terrain_and_sim(&mut self) -> (TerrainMut<'_>, &mut SimState) {
        (
            TerrainMut::new(&mut self.height.data, &mut self.layers),
            &mut self.sim,
        )
    }

    /// Copies the simulation-state field `name` (one of [`SimState::OUTPUTS`]) into the
    /// exported maps; `field` names the request in errors (e.g. `outputs[0]`).
    pub fn export_state(&mut self, name: &str, field: &str) -> Result<()> {
        let grid = self.grid();
        let missing = || {
            OrogenError::invalid(
                field,
                format!("`{name}` is not produced by any stage of this recipe"),
            )
        };
        let scalar = |data: Vec<f32>| MapData::Scalar(ScalarMap { grid, data });
        match name {
            "water_depth" => {
                let d = self.sim.water_depth.clone().ok_or_else(missing)?;
                self.maps.insert(name.into(), scalar(d));
            }
            "sediment" => {
                let d = self.sim.sediment.clone().ok_or_else(missing)?;
                self.maps.insert(name.into(), scalar(d));
            }
            "velocity" => {
                let v = self.sim.velocity.as_ref().ok_or_else(missing)?;
                let data = v.iter().map(|v| [v.x, v.y]).collect();
                self.maps
                    .insert(name.into(), MapData::Vector(Field { grid, data }));
            }
            _ => {
                return Err(OrogenError::invalid(
                    field,
                    format!(
                        "unknown output `{name}`; known: {}",
                        SimState::OUTPUTS.join(", ")
                    ),
                ))
            }
        }
        Ok(())
    }

    /// The colour of the surface per cell (sRGB, alpha 255): the exposed material's colour,
    /// blended towards the next material down (the next layer with thickness, or the bottom
    /// material) by how far the exposed layer is thinner than [`SURFACE_BLEND_M`]. `None`
    /// for a one-material terrain.
    pub fn surface_colours(&self) -> Option<Vec<[u8; 4]>> {
        if self.layers.is_empty() || self.materials.len() != self.layers.len() + 1 {
            return None;
        }
        let k = self.layers.len();
        let colour = |l: usize| self.materials[l].colour.map(|c| c as f32);
        let n = self.grid().len();
        let out = (0..n)
            .map(|i| {
                let mut layers = (0..k).filter(|&l| self.layers.thickness(l)[i] > 0.0);
                let top = layers.next().unwrap_or(k);
                if top == k {
                    let [r, g, b] = self.materials[k].colour;
                    return [r, g, b, 255];
                }
                let below = layers.next().unwrap_or(k);
                let w = (self.layers.thickness(top)[i] / SURFACE_BLEND_M).min(1.0);
                let (a, b) = (colour(top), colour(below));
                let mix = |c: usize| (b[c] + (a[c] - b[c]) * w).round().clamp(0.0, 255.0) as u8;
                [mix(0), mix(1), mix(2), 255]
            })
            .collect();
        Some(out)
    }

    /// The strata drawn as bands ([`StrataLook`]), or `None` for a one-material terrain, one
    /// without beds, or beds whose thickness varies from cell to cell (a cell below which a
    /// bed is thinner or thicker than that bed's thickest): those keep the per-cell
    /// [`World::surface_colours`].
    pub fn strata_look(&self) -> Option<StrataLook> {
        let full = self.layer_totals().full;
        if !self.beds_whole(&full) {
            return None;
        }
        self.strata_look_with(&full)
    }

    /// What the layer maps take from the whole map, for this world's cells: per material
    /// (by name, in world order) the cells exposing it, and each bed's full thickness (the
    /// most any cell holds; 0 for the sediment, layer 0). A tiled bake sums the counts and
    /// takes the largest thicknesses over its tiles (both exact in any order) and hands
    /// them to [`World::export_layers_with`].
    pub fn layer_totals(&self) -> LayerTotals {
        let k = self.layers.len();
        let names = Self::material_names(&self.materials);
        let mut exposed = vec![0u64; names.len()];
        for i in 0..self.grid().len() {
            let top = (0..k)
                .find(|&l| self.layers.thickness(l)[i] > 0.0)
                .unwrap_or(k);
            if let Some(j) = self
                .materials
                .get(top)
                .and_then(|m| names.iter().position(|n| *n == m.name))
            {
                exposed[j] += 1;
            }
        }
        let full = (0..k)
            .map(|l| {
                if l == 0 {
                    0.0
                } else {
                    self.layers
                        .thickness(l)
                        .iter()
                        .fold(0.0f32, |a, &b| a.max(b))
                }
            })
            .collect();
        LayerTotals { exposed, full }
    }

    /// Whether every bed below each cell's top bed is whole there (within 1e-3 of its
    /// `full` thickness, [`World::layer_totals`]): the strata can be drawn as bands. True
    /// for a world without beds (then [`World::strata_look`] is `None` anyway).
    pub fn beds_whole(&self, full: &[f32]) -> bool {
        let k = self.layers.len();
        if k < 2 || self.materials.len() != k + 1 || full.len() != k {
            return true;
        }
        let t = |l: usize| self.layers.thickness(l);
        (0..self.grid().len()).all(|i| {
            let top = (1..k).find(|&l| t(l)[i] > 0.0).unwrap_or(k);
            let mut whole = full.iter().enumerate().skip(top.saturating_add(1));
            !whole.any(|(l, &f)| (t(l)[i] - f).abs() > 1e-3 * f.max(1.0))
        })
    }

    /// [`World::strata_look`] with the beds' `full` thicknesses given (the whole map's, from
    /// [`World::layer_totals`]), the beds known to be whole ([`World::beds_whole`]).
    fn strata_look_with(&self, full: &[f32]) -> Option<StrataLook> {
        let k = self.layers.len();
        if k < 2 || self.materials.len() != k + 1 || full.len() != k {
            return None;
        }
        let n = self.grid().len();
        let t = |l: usize| self.layers.thickness(l);
        let total: f32 = full.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return None;
        }
        let mut position = vec![0.0f32; n];
        for (i, p) in position.iter_mut().enumerate() {
            let h: f32 = (1..k).map(|l| t(l)[i]).sum();
            *p = (h + STRATA_FOOT * total) / ((1.0 + STRATA_FOOT) * total);
        }
        let colour = |m: usize| {
            let [r, g, b] = self.materials[m].colour;
            [r, g, b, 255]
        };
        let column = (0..STRATA_COLUMN_TEXELS)
            .map(|texel| {
                let u = (texel as f32 + 0.5) / STRATA_COLUMN_TEXELS as f32;
                let h = u * (1.0 + STRATA_FOOT) * total - STRATA_FOOT * total;
                if h < 0.0 {
                    return colour(k);
                }
                // Bottom up: the bed whose span holds h.
                let mut below = 0.0f32;
                for l in (1..k).rev() {
                    below += full[l];
                    if h < below {
                        return colour(l);
                    }
                }
                colour(1 + (1..k).position(|l| full[l] > 0.0).unwrap_or(0))
            })
            .collect();
        Some(StrataLook { position, column })
    }

    /// Depth of loose ground per cell, metres: the deposits (layer 0) and, under them, every
    /// layer of a loose material ([`LOOSE_WIND_RESISTANCE`]) down to the first firm one.
    /// A sand sea's sand is loose ground whichever layer holds it: counted as deposits
    /// alone, the dunes' bare sand stratum drew the rock's cracks and grew grass (issue
    /// #37). Empty for a world of one material.
    pub fn loose_depth(&self) -> Vec<f32> {
        let k = self.layers.len();
        if k == 0 {
            return Vec::new();
        }
        let n = self.grid().len();
        let loose: Vec<bool> = (0..k)
            .map(|l| {
                l == 0
                    || self
                        .materials
                        .get(l)
                        .is_some_and(|m| m.props.wind_resistance < LOOSE_WIND_RESISTANCE)
            })
            .collect();
        (0..n)
            .map(|i| {
                let mut d = 0.0f32;
                for (l, &is_loose) in loose.iter().enumerate() {
                    let t = self.layers.thickness(l)[i];
                    if t <= 0.0 {
                        continue;
                    }
                    if !is_loose {
                        break;
                    }
                    d += t;
                }
                d
            })
            .collect()
    }

    /// The layered terrain's maps: the exposed material, a splat map of the four most
    /// common exposed materials, the surface colour, each material's total thickness and the
    /// sediment depth. Nothing for a one-material terrain.
    pub fn export_layers(&mut self) {
        let totals = self.layer_totals();
        let whole = self.beds_whole(&totals.full);
        self.export_layers_with(&totals, whole);
    }

    /// The material names of the world, each once, in world order.
    fn material_names(materials: &[WorldMaterial]) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for m in materials {
            if !names.contains(&m.name.as_str()) {
                names.push(&m.name);
            }
        }
        names
    }

    /// [`World::export_layers`] with the whole map's [`LayerTotals`] and whether its beds
    /// are whole ([`World::beds_whole`] over every cell) given: over one tile of a tiled
    /// bake, the tile's cells of the whole map's layer maps (the `strata_column` row is
    /// the whole map's).
    pub fn export_layers_with(&mut self, totals: &LayerTotals, beds_whole: bool) {
        if self.layers.is_empty() {
            return;
        }
        let grid = self.grid();
        let n = grid.len();
        let k = self.layers.len();
        let exposed: Vec<u8> = (0..n)
            .map(|i| {
                (0..k)
                    .find(|&l| self.layers.thickness(l)[i] > 0.0)
                    .unwrap_or(k) as u8
            })
            .collect();
        // Materials by name (a material may form several layers), in world order.
        let names = Self::material_names(&self.materials);
        let index_of = |layer: usize| {
            names
                .iter()
                .position(|n| *n == self.materials[layer].name)
                .expect("every layer's material is named")
        };
        let material: Vec<u8> = exposed
            .iter()
            .map(|&l| index_of(l as usize) as u8)
            .collect();
        // The four most exposed materials, most common first, ties by world order.
        let counts = &totals.exposed;
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
        let top4: Vec<usize> = order.into_iter().take(4).collect();
        // Weights blend like the surface colour: the exposed material's weight falls with
        // its thickness under SURFACE_BLEND_M and the material beneath takes the rest, so
        // importers draw soft transitions instead of cell-sized steps. A material outside the
        // four gives its share to the other one; weights sum to 255 wherever one of the two
        // is among the four.
        let splat: Vec<[u8; 4]> = (0..n)
            .map(|i| {
                let top = exposed[i] as usize;
                let below = (top + 1..k)
                    .find(|&l| self.layers.thickness(l)[i] > 0.0)
                    .unwrap_or(k);
                let wt = if top < k {
                    (self.layers.thickness(top)[i] / SURFACE_BLEND_M).min(1.0)
                } else {
                    1.0
                };
                let channel = |layer: usize| top4.iter().position(|&t| t == index_of(layer));
                let mut w = [0u8; 4];
                let a = (wt * 255.0).round() as u8;
                match (channel(top), channel(below)) {
                    (Some(ct), Some(cb)) => {
                        w[ct] = w[ct].saturating_add(a);
                        w[cb] = w[cb].saturating_add(255 - a);
                    }
                    (Some(c), None) | (None, Some(c)) => w[c] = 255,
                    (None, None) => {}
                }
                w
            })
            .collect();
        for (j, name) in names.iter().enumerate() {
            let mut total = vec![0.0f32; n];
            for l in (0..k).filter(|&l| index_of(l) == j) {
                for (t, v) in total.iter_mut().zip(self.layers.thickness(l)) {
                    *t += v;
                }
            }
            if index_of(k) != j || (0..k).any(|l| index_of(l) == j) {
                self.maps.insert(
                    format!("{}{name}", names::LAYER_PREFIX),
                    MapData::Scalar(ScalarMap { grid, data: total }),
                );
            }
        }
        let depth = self.loose_depth();
        self.maps.insert(
            names::SEDIMENT_DEPTH.into(),
            MapData::Scalar(ScalarMap { grid, data: depth }),
        );
        self.maps.insert(
            names::MATERIAL.into(),
            MapData::Index(Field {
                grid,
                data: material,
            }),
        );
        self.maps.insert(
            names::SPLAT.into(),
            MapData::Rgba(Field { grid, data: splat }),
        );
        if let Some(data) = self.surface_colours() {
            self.maps.insert(
                names::SURFACE_COLOUR.into(),
                MapData::Rgba(Field { grid, data }),
            );
        }
        let look = beds_whole
            .then(|| self.strata_look_with(&totals.full))
            .flatten();
        if let Some(look) = look {
            self.maps.insert(
                names::STRATA_POSITION.into(),
                MapData::Scalar(ScalarMap {
                    grid,
                    data: look.position,
                }),
            );
            let row = Grid {
                width: STRATA_COLUMN_TEXELS,
                height: 1,
                cell_size: 1.0,
                cell_size_y: 1.0,
            };
            self.maps.insert(
                names::STRATA_COLUMN.into(),
                MapData::Rgba(Field {
                    grid: row,
                    data: look.column,
                }),
            );
        }
    }

    /// The first value that is not finite among the heights, layer thicknesses, simulation
    /// state and float maps: `(what, cell, value)`, or `None` when all are finite.
    pub fn first_non_finite(&self) -> Option<(String, usize, f32)> {
        fn find<'a>(
            what: &str,
            values: impl Iterator<Item = &'a f32>,
        ) -> Option<(String, usize, f32)> {
            values
                .enumerate()
                .find(|(_, v)| !v.is_finite())
                .map(|(i, &v)| (what.to_string(), i, v))
        }
        let mut found = find(names::HEIGHT, self.node_heights().iter());
        for (k, name) in self.layers.names().iter().enumerate() {
            found = found.or_else(|| {
                find(
                    &format!("{}{name}", names::LAYER_PREFIX),
                    self.layers.thickness(k).iter(),
                )
            });
        }
        let sim = &self.sim;
        if let Some(v) = &sim.water_depth {
            found = found.or_else(|| find(names::WATER_DEPTH, v.iter()));
        }
        if let Some(v) = &sim.sediment {
            found = found.or_else(|| find("sediment", v.iter()));
        }
        if let Some(v) = &sim.flux {
            found =
                found.or_else(|| find("flux", v.iter().flatten()).map(|(w, i, x)| (w, i / 4, x)));
        }
        if let Some(v) = &sim.velocity {
            found = found.or_else(|| {
                find("velocity", v.iter().flat_map(|v| [&v.x, &v.y])).map(|(w, i, x)| (w, i / 2, x))
            });
        }
        for (name, map) in &self.maps {
            found = found.or_else(|| match map {
                MapData::Scalar(m) => find(name, m.data.iter()),
                MapData::Vector(m) => {
                    find(name, m.data.iter().flatten()).map(|(w, i, x)| (w, i / 2, x))
                }
                _ => None,
            });
        }
        found
    }

    /// Every map by name, heights and uplift included.
    pub fn all_maps(&self) -> Vec<(String, MapData)> {
        let mut out = vec![
            (
                names::HEIGHT.to_string(),
                MapData::Scalar(self.height.clone()),
            ),
            (
                names::UPLIFT.to_string(),
                MapData::Scalar(self.uplift.clone()),
            ),
        ];
        out.extend(self.maps.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }
}

/// `map` sampled bilinearly at `positions` (metres; cell `(x, y)` stands at
/// `(x·dx, y·dy)`), clamped to the map's edges.
pub fn sample_at(map: &ScalarMap, positions: &[glam::DVec2]) -> Vec<f32> {
    let (dx, dy) = (map.grid.dx() as f64, map.grid.dy() as f64);
    positions
        .iter()
        .map(|p| map.sample_bilinear((p.x / dx) as f32, (p.y / dy) as f32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::MaterialProps;

    fn material(name: &str, colour: [u8; 3]) -> WorldMaterial {
        WorldMaterial {
            name: name.into(),
            colour,
            props: MaterialProps::default(),
        }
    }

    /// The loose ground's depth counts the deposits and the loose layers under them, down
    /// to the first firm layer: a sand sea whose deposits the wind stripped is still sand.
    #[test]
    fn loose_ground_is_the_deposits_and_the_loose_layers_under_them() {
        let grid = Grid::new(4, 1, 1.0).unwrap();
        let mut w = World::new(Heightfield::filled(grid, 10.0), 0);
        let with_wind = |name: &str, wind_resistance: f32| WorldMaterial {
            props: MaterialProps {
                wind_resistance,
                ..MaterialProps::default()
            },
            ..material(name, [0, 0, 0])
        };
        // Cells: deposits over sand over shale over sand; bare sand over shale; bare
        // shale over sand; nothing but granite.
        w.layers = Layers::new(
            vec![
                ("deposits".into(), vec![0.25, 0.0, 0.0, 0.0]),
                ("sand".into(), vec![3.0, 2.0, 0.0, 0.0]),
                ("shale".into(), vec![1.0, 1.0, 4.0, 0.0]),
                ("sand2".into(), vec![2.0, 2.0, 2.0, 0.0]),
            ],
            4,
        )
        .unwrap();
        w.materials = vec![
            with_wind("deposits", 0.1),
            with_wind("sand", 0.1),
            with_wind("shale", 0.5),
            with_wind("sand2", 0.1),
            with_wind("granite", 0.95),
        ];
        w.export_layers();
        let Some(MapData::Scalar(m)) = w.maps.get(names::SEDIMENT_DEPTH) else {
            panic!("no sediment_depth map")
        };
        assert_eq!(m.data, vec![3.25, 2.0, 0.0, 0.0]);
    }

    #[test]
    fn surface_colour_is_the_exposed_material_fading_into_the_one_beneath() {
        let grid = Grid::new(4, 1, 1.0).unwrap();
        let mut w = World::new(Heightfield::filled(grid, 10.0), 0);
        assert_eq!(w.surface_colours(), None, "one material: no colours");
        // Cells: sand 0.5 m over shale; shale 5 m; shale 0.25 m over granite; granite.
        w.layers = Layers::new(
            vec![
                ("sand".into(), vec![0.5, 0.0, 0.0, 0.0]),
                ("shale".into(), vec![3.0, 5.0, 0.25, 0.0]),
            ],
            4,
        )
        .unwrap();
        w.materials = vec![
            material("sand", [200, 100, 0]),
            material("shale", [100, 100, 100]),
            material("granite", [0, 50, 200]),
        ];
        let c = w.surface_colours().unwrap();
        assert_eq!(
            c[0],
            [150, 100, 50, 255],
            "half a metre of sand: half way to shale"
        );
        assert_eq!(c[1], [100, 100, 100, 255], "thick shale: shale");
        assert_eq!(
            c[2],
            [25, 63, 175, 255],
            "a quarter metre of shale over granite"
        );
        assert_eq!(c[3], [0, 50, 200, 255], "bare granite");
        w.export_layers();
        assert!(matches!(
            w.maps.get(names::SURFACE_COLOUR),
            Some(MapData::Rgba(m)) if m.data == c
        ));
    }

    #[test]
    fn splat_weights_fade_like_the_surface_colour() {
        // Cells: sand 0.5 m over shale; shale 5 m; shale 0.25 m over granite; granite.
        let grid = Grid::new(4, 1, 1.0).unwrap();
        let mut w = World::new(Heightfield::filled(grid, 10.0), 0);
        w.layers = Layers::new(
            vec![
                ("sand".into(), vec![0.5, 0.0, 0.0, 0.0]),
                ("shale".into(), vec![3.0, 5.0, 0.25, 0.0]),
            ],
            4,
        )
        .unwrap();
        w.materials = vec![
            material("sand", [200, 100, 0]),
            material("shale", [100, 100, 100]),
            material("granite", [0, 50, 200]),
        ];
        w.export_layers();
        let Some(MapData::Rgba(splat)) = w.maps.get(names::SPLAT) else {
            panic!("splat is RGBA")
        };
        // Channels: materials by how often they are exposed (shale 2, sand 1, granite 1),
        // ties in world order: shale, sand, granite.
        assert_eq!(splat.data[0], [127, 128, 0, 0], "half sand, half shale");
        assert_eq!(splat.data[1], [255, 0, 0, 0], "thick shale");
        assert_eq!(
            splat.data[2],
            [64, 0, 191, 0],
            "a quarter shale over granite"
        );
        assert_eq!(splat.data[3], [0, 0, 255, 0], "bare granite");
        for wts in &splat.data {
            assert_eq!(wts.iter().map(|&v| v as u32).sum::<u32>(), 255);
        }
    }

    /// Beds 3, 2, 3 and 2 m thick (shale, sandstone, shale, sandstone top down) over granite,
    /// cut to every depth, under some sand.
    fn cut_beds(n: usize) -> World {
        let beds = [3.0f32, 2.0, 3.0, 2.0];
        let total: f32 = beds.iter().sum();
        let grid = Grid::new(n, 1, 1.0).unwrap();
        let mut w = World::new(Heightfield::filled(grid, 10.0), 0);
        let mut layers = vec![(
            "sand".to_string(),
            (0..n).map(|i| if i % 3 == 0 { 0.4 } else { 0.0 }).collect(),
        )];
        let mut top = 0.0;
        for (b, &th) in beds.iter().enumerate() {
            let name = if b % 2 == 0 { "shale" } else { "sandstone" };
            // Cell i is cut down to depth (i / (n - 1)) * (total + 1) below the column's top.
            let cut: Vec<f32> = (0..n)
                .map(|i| {
                    let depth = i as f32 / (n - 1) as f32 * (total + 1.0);
                    (top + th - depth.max(top)).clamp(0.0, th)
                })
                .collect();
            layers.push((name.to_string(), cut));
            top += th;
        }
        w.layers = Layers::new(layers, n).unwrap();
        w.materials = vec![
            material("sand", [200, 180, 120]),
            material("shale", [100, 100, 100]),
            material("sandstone", [200, 120, 60]),
            material("shale", [100, 100, 100]),
            material("sandstone", [200, 120, 60]),
            material("granite", [0, 50, 200]),
        ];
        w
    }

    #[test]
    fn strata_bands_give_each_cell_the_colour_of_its_exposed_bed() {
        let n = 201;
        let mut w = cut_beds(n);
        let look = w.strata_look().expect("beds of one thickness everywhere");
        assert_eq!(look.column.len(), STRATA_COLUMN_TEXELS);
        // The top of the column is the top bed, its foot the bottom material.
        assert_eq!(look.column[STRATA_COLUMN_TEXELS - 1], [100, 100, 100, 255]);
        assert_eq!(look.column[0], [0, 50, 200, 255]);
        // Positions fall from 1 (uncut) as the cut deepens, to the foot where all is gone.
        assert!((look.position[0] - 1.0).abs() < 1e-6);
        for p in look.position.windows(2) {
            assert!(p[1] <= p[0] + 1e-6, "deeper cuts stand lower in the column");
        }
        let foot = STRATA_FOOT / (1.0 + STRATA_FOOT);
        assert!((look.position[n - 1] - foot).abs() < 1e-6);
        // The column at a cell's position (a texel below it) is its exposed bed, wherever
        // that bed is more than two texels thick there.
        let texel_m = 10.0 * (1.0 + STRATA_FOOT) / STRATA_COLUMN_TEXELS as f32;
        let colours = w.surface_colours().unwrap();
        let mut checked = 0;
        for (i, colour) in colours.iter().enumerate() {
            let bed = (1..5).find(|&l| w.layers.thickness(l)[i] > 0.0);
            let Some(bed) = bed else { continue };
            if w.layers.thickness(bed)[i] < 2.0 * texel_m {
                continue;
            }
            let texel = (look.position[i] * STRATA_COLUMN_TEXELS as f32 - 1.5) as usize;
            let [r, g, b] = w.materials[bed].colour;
            assert_eq!(look.column[texel], [r, g, b, 255], "cell {i}");
            if i % 3 != 0 && w.layers.thickness(bed)[i] >= SURFACE_BLEND_M {
                assert_eq!(
                    *colour,
                    [r, g, b, 255],
                    "the per-cell colour agrees, cell {i}"
                );
            }
            checked += 1;
        }
        assert!(checked > 150, "checked {checked} cells");
        // The bake writes them as maps: the position per cell, the column as one row.
        w.export_layers();
        assert!(matches!(
            w.maps.get(names::STRATA_POSITION),
            Some(MapData::Scalar(m)) if m.data == look.position
        ));
        assert!(matches!(
            w.maps.get(names::STRATA_COLUMN),
            Some(MapData::Rgba(m)) if m.data == look.column && m.grid.height == 1
        ));
    }

    #[test]
    fn beds_whose_thickness_varies_keep_the_per_cell_colours() {
        let mut w = cut_beds(50);
        // The lowest bed is thinner in one cell where it lies whole under the others.
        let mut layers: Vec<(String, Vec<f32>)> = (0..w.layers.len())
            .map(|l| (w.layers.names()[l].clone(), w.layers.thickness(l).to_vec()))
            .collect();
        layers[4].1[5] = 1.5;
        w.layers = Layers::new(layers, 50).unwrap();
        assert_eq!(w.strata_look(), None);
        w.export_layers();
        assert!(!w.maps.contains_key(names::STRATA_POSITION));
        assert!(w.maps.contains_key(names::SURFACE_COLOUR));
        // One material: nothing to draw.
        let grid = Grid::new(4, 1, 1.0).unwrap();
        assert_eq!(
            World::new(Heightfield::filled(grid, 1.0), 0).strata_look(),
            None
        );
    }
}
