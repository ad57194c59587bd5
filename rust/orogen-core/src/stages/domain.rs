//! Where the stages run: the recipe's grid itself, or a graph of random points over it
//! (Cordonnier et al. 2016 §3) that is turned into the grid's heightfield at the end.
//!
//! Recipe syntax: `domain: Graph(spacing: 500.0)`,
//! `domain: Graph(spacing: 250.0, surface: Phong(alpha: 0.75))`. Default `Grid`.

use std::ops::Add;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Depth, metres, given to a lake's pixels whose ground the primitives lowered to the
/// water level.
const FLAT_LAKE_DEPTH: f32 = 0.01;
/// How far, metres, the ground drawn may stand above a lake's interpolated level and still
/// count as that lake's flat floor (the level rounded through f32 and the interpolation).
const FLAT_LAKE_TOLERANCE: f32 = 1e-3;

use crate::error::{check_positive, check_range, fmt_num, OrogenError, Result};
use crate::field::{Field, Grid, ScalarMap};
use crate::flow::hydrology::{Hydrology, Params as HydrologyProcess};
use crate::flow::router::SinkMode;
use crate::mesh::points::{poisson_disc_cancellable, poisson_disc_max_points};
use crate::mesh::Delaunay;
use crate::neighbourhood::{Neighbourhood, OutletParams};
use crate::rasterise::{
    extract_rivers, gaussian, phong, primitives, PrimitiveParams, RiverParams, StreamSurface,
};
use crate::stages::source::GRAPH_SEED;
use crate::state::Layers;
use crate::world::{names, sample_at, GraphNodes, GraphState, MapData, World};

/// Bytes one graph node takes while the stages run and the heightfield is made: positions,
/// links, areas, triangles, heights, uplift, the routing and the solver's buffers
/// (measured with `/usr/bin/time`: 219 MB more peak for 487k more nodes, 450 B each, at
/// 163k and 650k nodes; rounded up).
pub const BYTES_PER_NODE: u64 = 500;

/// Most nodes a Graph domain may have, counted by [`GraphDomain::max_nodes`]' upper bound
/// (a sampled graph has about 55 % of it): the triangulation cannot be cancelled, and at
/// this bound it takes a few seconds.
pub const MAX_GRAPH_NODES: f64 = 6e6;

/// Where the stages run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Domain {
    /// On the recipe's grid, cell by cell.
    #[default]
    Grid,
    /// On a graph of Poisson-disc points over the grid's rectangle, linked by their
    /// Delaunay triangulation, each node standing for its Voronoi cell; made into the
    /// grid's heightfield when the stages are done. Runs `StreamPower`, `Thermal`,
    /// `Hydrology` and `TimeLoop`s of them.
    Graph(GraphDomain),
}

impl Domain {
    /// True for the default grid domain (not written into a recipe).
    pub fn is_grid(&self) -> bool {
        matches!(self, Domain::Grid)
    }
}

/// How the eroded graph becomes the heightfield (Cordonnier 2016 §7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Surface {
    /// Gaussian kernels on the nodes, normalised: smooth and fast. `sigma`: kernel width,
    /// metres (> 0); 0 takes the node spacing.
    Gaussian {
        #[serde(default)]
        sigma: f64,
    },
    /// The Delaunay mesh, Phong-tessellated: a smooth surface through every node. `alpha`
    /// in [0, 1]: 0 is the flat triangles, default 0.75.
    Phong {
        #[serde(default = "default_alpha")]
        alpha: f32,
    },
    /// River, valley, ridge and lake primitives combined by a construction tree, evaluated
    /// per pixel: sharp ridges, carved channels, flat lakes, at any resolution.
    Primitives(PrimitiveParams),
}

fn default_alpha() -> f32 {
    phong::DEFAULT_ALPHA
}

impl Default for Surface {
    fn default() -> Self {
        Surface::Primitives(PrimitiveParams::default())
    }
}

/// A Graph domain's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GraphDomain {
    /// Least distance between two nodes, metres (> 0, at most half the shorter side of
    /// the grid's rectangle). A node stands for about 1.3·spacing² of terrain. Default 500.
    pub spacing: f64,
    /// How the eroded graph becomes the heightfield: `Primitives(..)`, `Phong(alpha: ..)` or
    /// `Gaussian(sigma: ..)`. Default `Primitives()`.
    pub surface: Surface,
    /// Which nodes are rivers, how wide, how smooth: `(threshold: m², width_coeff: a,
    /// smoothing: levels)`; the `rivers` map, `rivers.json` and the primitives' channels.
    /// Default: threshold 1 % of the largest drainage, w = 0.004·A^0.5 m, 2 levels.
    pub rivers: RiverParams,
}

impl Default for GraphDomain {
    fn default() -> Self {
        GraphDomain {
            spacing: 500.0,
            surface: Surface::default(),
            rivers: RiverParams::default(),
        }
    }
}

/// The extent of `grid`'s rectangle, metres: cell centres from `(0, 0)` to this.
pub fn extent(grid: Grid) -> (f64, f64) {
    (
        (grid.width.saturating_sub(1)) as f64 * grid.dx() as f64,
        (grid.height.saturating_sub(1)) as f64 * grid.dy() as f64,
    )
}

impl GraphDomain {
    /// Checks the values against `grid`; `field` prefixes error names (`domain.Graph`).
    pub fn validate(&self, field: &str, grid: Grid) -> Result<()> {
        let spacing = format!("{field}.spacing");
        check_positive(&spacing, self.spacing)?;
        let (w, h) = extent(grid);
        if w <= 0.0 || h <= 0.0 {
            return Err(OrogenError::invalid(
                "size",
                format!(
                    "a Graph domain needs an area: the {}×{} grid spans {w} × {h} m",
                    grid.width, grid.height
                ),
            ));
        }
        if self.spacing > 0.5 * w.min(h) {
            return Err(OrogenError::invalid(
                spacing,
                format!(
                    "{} m leaves no node inside the {} × {} m domain; at most {} m",
                    fmt_num(self.spacing),
                    fmt_num(w),
                    fmt_num(h),
                    fmt_num(0.5 * w.min(h))
                ),
            ));
        }
        let nodes = poisson_disc_max_points(w, h, self.spacing);
        if nodes.is_nan() || nodes > MAX_GRAPH_NODES {
            return Err(OrogenError::invalid(
                spacing,
                format!(
                    "{} m over {} × {} m makes up to {nodes:.3e} nodes; at most \
                     {MAX_GRAPH_NODES:.0e} (a spacing of at least {:.1} m)",
                    fmt_num(self.spacing),
                    fmt_num(w),
                    fmt_num(h),
                    self.spacing * (nodes / MAX_GRAPH_NODES).sqrt()
                ),
            ));
        }
        match &self.surface {
            Surface::Gaussian { sigma } => {
                let name = format!("{field}.surface.sigma");
                check_range(&name, *sigma, 0.0, 1e7)?;
                // The rasteriser bins the nodes by squares of 3σ (at most 2^28 of them).
                let bins =
                    (w / (3.0 * sigma)).floor().add(1.0) * (h / (3.0 * sigma)).floor().add(1.0);
                let fits = bins
                    .partial_cmp(&((1u64 << 28) as f64))
                    .is_some_and(|o| o.is_le());
                if *sigma > 0.0 && !fits {
                    return Err(OrogenError::invalid(
                        name,
                        format!(
                            "{} m is too small for a {} × {} m domain: at least {} m (or 0 \
                             for the node spacing)",
                            fmt_num(*sigma),
                            fmt_num(w),
                            fmt_num(h),
                            fmt_num((w * h / (1u64 << 28) as f64).sqrt() / 3.0 * 1.01)
                        ),
                    ));
                }
            }
            Surface::Phong { alpha } => {
                check_range(&format!("{field}.surface.alpha"), *alpha as f64, 0.0, 1.0)?
            }
            Surface::Primitives(p) => {
                let name = format!("{field}.surface.Primitives");
                p.validate(&name)?;
                // The detail noise's finest octave is a quarter of its wavelength; below a
                // cell it only aliases, and a tiny one overflowed the noise's lattice
                // (NaN or -inf written with exit 0: fuzz finding #39.2).
                let cell = grid.dx().min(grid.dy()) as f64;
                let wl = p.detail_wavelength as f64;
                if wl > 0.0 && wl < cell {
                    return Err(OrogenError::invalid(
                        format!("{name}.detail_wavelength"),
                        format!(
                            "{} m is shorter than a cell ({cell} m): at least {cell} m, or 0 \
                             for twice the node spacing",
                            crate::error::fmt_num(wl)
                        ),
                    ));
                }
            }
        }
        self.rivers.validate(&format!("{field}.rivers"))
    }

    /// The most nodes the graph over `grid` can have (an upper bound, known before
    /// anything is allocated).
    pub fn max_nodes(&self, grid: Grid) -> f64 {
        let (w, h) = extent(grid);
        poisson_disc_max_points(w, h, self.spacing)
    }

    /// Samples the graph over `world`'s grid and moves the world onto it: the initial
    /// terrain and uplift are sampled at the nodes.
    pub fn build(&self, world: &mut World, seed: u64, cancel: &AtomicBool) -> Result<()> {
        let grid = world.grid();
        self.validate("domain.Graph", grid)?;
        let (w, h) = extent(grid);
        let name = |e: OrogenError| match e {
            OrogenError::InvalidParameter { field, reason } => OrogenError::InvalidParameter {
                field: format!("domain.Graph.{field}"),
                reason,
            },
            e => e,
        };
        let points = poisson_disc_cancellable(w, h, self.spacing, seed, cancel).map_err(name)?;
        if cancel.load(Ordering::Relaxed) {
            return Err(OrogenError::Cancelled);
        }
        // Poisson-disc empty circles are under 2 spacings across (a maximal set; Bridson's
        // nearly so): strips 6 spacings apart triangulate in parallel.
        let delaunay = Delaunay::new_in_strips(&points, 6.0 * self.spacing).map_err(name)?;
        drop(points);
        let mut graph = delaunay.to_graph().map_err(name)?;
        // Stages lay their own open borders over the graph.
        graph.set_open_boundary(&vec![false; graph.len()])?;
        let heights = sample_at(&world.height, graph.positions());
        let uplift = sample_at(&world.uplift, graph.positions());
        let (_, triangles, _) = delaunay.into_parts();
        world.graph = Some(Box::new(GraphState {
            graph: Arc::new(graph),
            triangles: triangles.into(),
            heights,
            uplift,
            layers: Layers::none(),
        }));
        Ok(())
    }

    /// Makes the world's heightfield from its eroded graph, with the hydrology maps
    /// (drainage, water surface, lake depth, rivers, basins) of the graph's routing over
    /// `outlets` with `lakes`, interpolated onto the grid. Nothing happens on a grid.
    pub fn finish(&self, world: &mut World, outlets: &OutletParams, lakes: SinkMode) -> Result<()> {
        let Some(g) = world.graph.as_ref() else {
            return Ok(());
        };
        let grid = world.grid();
        let nb = world
            .graph_with_borders(&outlets.borders)
            .expect("a graph world");
        let process = HydrologyProcess {
            lakes,
            epsilon: 0.0,
            ..Default::default()
        };
        let mut hydrology = Hydrology::new(nb, outlets.sea_level, process, None, "domain.Graph")?;
        let maps = hydrology.compute(&g.heights)?;
        let surface = StreamSurface {
            graph: &g.graph,
            triangles: &g.triangles,
            heights: &g.heights,
            receivers: &hydrology.flow().receivers,
            discharge: &maps.drainage,
            water_level: &maps.water_surface,
        };
        let reaches = extract_rivers(&surface, &self.rivers)?;
        // The rasterisers name their own parameters (`sigma`); say where they sit.
        let surface_field = |e: OrogenError| match e {
            OrogenError::InvalidParameter { field, reason } if !field.starts_with("domain") => {
                OrogenError::InvalidParameter {
                    field: format!("domain.Graph.surface.{field}"),
                    reason,
                }
            }
            e => e,
        };
        let heights = match &self.surface {
            Surface::Gaussian { sigma } => gaussian::gaussian(
                &surface,
                grid,
                if *sigma > 0.0 { *sigma } else { self.spacing },
            )
            .map_err(surface_field)?,
            Surface::Phong { alpha } => phong::phong(&surface, grid, *alpha)?,
            Surface::Primitives(p) => {
                primitives(&surface, &reaches, grid, p, world.seed ^ GRAPH_SEED)?
            }
        };
        // The river threshold rivers.json used (1 % of the largest drainage for 0).
        let threshold = if self.rivers.threshold > 0.0 {
            self.rivers.threshold
        } else {
            0.01 * maps.drainage.iter().cloned().fold(0.0, f32::max)
        };
        // The three maps interpolated, and the basins of the nearest nodes, in one walk
        // over the triangles.
        // Each lake's level carried one node out onto its shore (the level of the highest
        // lake beside a dry node), so a triangle touching a lake interpolates the lake's
        // flat level, and the shore is where the ground drawn rises through it: a curve
        // across the pixels, not the outline of the lake's triangles.
        let level = lake_levels(&g.graph, &maps.water_surface, &maps.lake_depth);
        let ([drainage, mut water, wet], basins) = phong::linear_many_and_nearest(
            &surface,
            [&maps.drainage, &level, &maps.lake_depth],
            &maps.basins,
            grid,
        )?;
        // Lakes only where a node of the pixel's triangle is under water (the surface drawn
        // dips below the nodes' linear mesh along valleys; that is not a lake), and water
        // never below the ground drawn. The primitives lower ground above a lake's level to
        // the level in its core (lakes replace the ground, Génevaux et al. 2013), so there
        // the water is as high as the ground, to rounding: such a pixel gets a lake's depth
        // anyway, a centimetre, so maps and previews show the whole lake.
        let mut lake_depth = vec![0.0f32; water.len()];
        water
            .par_iter_mut()
            .zip(&mut lake_depth)
            .zip(heights.par_iter().zip(&wet))
            .for_each(|((w, d), (h, l))| {
                if *l > 0.0 && *w >= *h - FLAT_LAKE_TOLERANCE {
                    *w = w.max(*h);
                    *d = (*w - h).max(FLAT_LAKE_DEPTH);
                } else {
                    *w = *h;
                }
            });
        drop(wet);
        let rivers: Vec<u8> = drainage
            .par_iter()
            .map(|&d| u8::from(d >= threshold))
            .collect();
        let scalar = |data: Vec<f32>| MapData::Scalar(ScalarMap { grid, data });
        world.maps.insert(names::DRAINAGE.into(), scalar(drainage));
        world
            .maps
            .insert(names::WATER_SURFACE.into(), scalar(water));
        world
            .maps
            .insert(names::LAKE_DEPTH.into(), scalar(lake_depth));
        world.maps.insert(
            names::RIVERS.into(),
            MapData::Mask(Field { grid, data: rivers }),
        );
        world.maps.insert(
            names::BASINS.into(),
            MapData::Labels(Field { grid, data: basins }),
        );
        world.height.data = heights;
        world.rivers = Some(reaches);
        world.graph_nodes = Some(GraphNodes {
            points: g
                .graph
                .positions()
                .iter()
                .zip(&g.heights)
                .map(|(p, &h)| [p.x as f32, p.y as f32, h])
                .collect(),
            drainage: maps.drainage,
        });
        Ok(())
    }
}

/// Per node: a lake node's water level; a dry node beside a lake, the highest level among
/// the lakes beside it; any other node, its water surface (its ground).
fn lake_levels<N: Neighbourhood>(nb: &N, water: &[f32], lake_depth: &[f32]) -> Vec<f32> {
    (0..water.len())
        .into_par_iter()
        .map(|i| {
            if lake_depth[i] > 0.0 {
                return water[i];
            }
            let mut level = f32::NEG_INFINITY;
            nb.for_each_neighbour(i, |j, _| {
                if lake_depth[j as usize] > 0.0 {
                    level = level.max(water[j as usize]);
                }
            });
            if level.is_finite() {
                level
            } else {
                water[i]
            }
        })
        .collect()
}
