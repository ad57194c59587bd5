//! The hydrology of a terrain, as a process: route water once and derive drainage, the
//! depression-free water surface, lake depth, rivers and basins. Heights are not changed.
//!
//! FastFlow (Jain et al. 2024): discharge accumulates node area × precipitation;
//! Algorithm 6 gives the water surface over the routed (and, with `Fill`, filled) heights.

use crate::error::{check_range, OrogenError, Result};
use crate::flow::accumulate::{accumulate_f64, basin_labels, water_surface};
use crate::flow::router::{buffer, FlowRouter, SinkMode, MAX_EPSILON};
use crate::neighbourhood::Neighbourhood;

/// Hydrology parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// How closed depressions drain: `Carve`, `Fill(epsilon)` or `None`. Default `Carve`.
    pub lakes: SinkMode,
    /// A node is a river where drainage is at least this, m² (m³/yr with precipitation).
    /// Default 1e6.
    pub river_threshold: f32,
    /// Slope of the water surface, metres per node, rising upstream from each lake's pass
    /// (FastFlow Algorithm 6's ε), ≥ 0. Default 0 (flat lakes).
    pub epsilon: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            lakes: SinkMode::Carve,
            river_threshold: 1e6,
            epsilon: 0.0,
        }
    }
}

impl Params {
    /// Checks ranges; `field` prefixes error names.
    pub fn validate(&self, field: &str) -> Result<()> {
        self.lakes.validate(&format!("{field}.lakes"))?;
        check_range(
            &format!("{field}.river_threshold"),
            self.river_threshold as f64,
            0.0,
            f32::MAX as f64,
        )?;
        check_range(
            &format!("{field}.epsilon"),
            self.epsilon as f64,
            0.0,
            MAX_EPSILON as f64,
        )
    }
}

/// The lake depth (water surface less ground, never below 0) and the river mask (drainage
/// at least `river_threshold`) of a routed surface: what every router's maps end with.
pub fn lakes_and_rivers(
    water_surface: &[f32],
    heights: &[f32],
    drainage: &[f32],
    river_threshold: f32,
) -> (Vec<f32>, Vec<u8>) {
    let lake_depth = water_surface
        .iter()
        .zip(heights)
        .map(|(w, z)| (w - z).max(0.0))
        .collect();
    let rivers = drainage
        .iter()
        .map(|&q| u8::from(q >= river_threshold))
        .collect();
    (lake_depth, rivers)
}

/// The maps one [`Hydrology::compute`] gives, one value per node.
#[derive(Clone, Debug, PartialEq)]
pub struct HydrologyMaps {
    /// Drainage area (m²) or, with precipitation, discharge (m³/yr).
    pub drainage: Vec<f32>,
    /// Depression-free water surface, metres.
    pub water_surface: Vec<f32>,
    /// Water surface minus terrain, metres.
    pub lake_depth: Vec<f32>,
    /// 1 where drainage passes the river threshold.
    pub rivers: Vec<u8>,
    /// One id per outlet basin, numbered in stack order of the roots.
    pub basins: Vec<u32>,
}

/// Routes water over a neighbourhood; buffers are kept between calls.
pub struct Hydrology<N: Neighbourhood> {
    router: FlowRouter<N>,
    params: Params,
    /// Node area × precipitation, in f64 like the sums (drainage is summed in f64).
    weights: Vec<f64>,
}

impl<N: Neighbourhood> Hydrology<N> {
    /// Hydrology over `nb` (its outlet mask, plus nodes at or below `sea_level`), with
    /// optional precipitation per node (m/yr, finite and ≥ 0). `field` prefixes errors.
    pub fn new(
        nb: N,
        sea_level: Option<f32>,
        params: Params,
        precipitation: Option<&[f32]>,
        field: &str,
    ) -> Result<Self> {
        params.validate(field)?;
        let n = nb.len();
        let mut weights = buffer(n, 0.0f64, "hydrology weights")?;
        for (i, w) in weights.iter_mut().enumerate() {
            *w = nb.node_area(i) as f64;
        }
        if let Some(rain) = precipitation {
            if rain.len() != n {
                return Err(OrogenError::invalid(
                    format!("{field}.precipitation"),
                    format!("has {} values, the terrain has {n} nodes", rain.len()),
                ));
            }
            if let Some(i) = rain.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(OrogenError::invalid(
                    format!("{field}.precipitation"),
                    format!(
                        "must be finite and >= 0 m/yr everywhere, got {} at node {i}",
                        rain[i]
                    ),
                ));
            }
            for (w, &r) in weights.iter_mut().zip(rain) {
                *w *= r as f64;
            }
        }
        Ok(Hydrology {
            router: FlowRouter::with_neighbourhood(nb, sea_level)?,
            params,
            weights,
        })
    }

    /// The routing of the last [`Hydrology::compute`]: receivers (lakes resolved) and stack.
    pub fn flow(&self) -> &crate::flow::graph::FlowGraph {
        self.router.graph()
    }

    /// The hydrology maps of `heights` (metres; not changed: `Fill` raises a copy).
    pub fn compute(&mut self, heights: &[f32]) -> Result<HydrologyMaps> {
        let n = heights.len();
        let mut routed = heights.to_vec();
        self.router.route(&mut routed, self.params.lakes)?;
        let graph = self.router.graph();
        // Summed in f64, rounded once to the f32 map.
        let mut sums = vec![0.0f64; n];
        accumulate_f64(graph, &self.weights, &mut sums);
        let drainage: Vec<f32> = sums.iter().map(|&a| a as f32).collect();
        // FastFlow Algorithm 6 over the routed surface (the fill, if any, is kept).
        let mut surface = vec![0.0f32; n];
        water_surface(graph, &routed, self.params.epsilon, &mut surface);
        let (lake_depth, rivers) =
            lakes_and_rivers(&surface, heights, &drainage, self.params.river_threshold);
        let mut basins = vec![0u32; n];
        basin_labels(graph, &mut basins);
        Ok(HydrologyMaps {
            drainage,
            water_surface: surface,
            lake_depth,
            rivers,
            basins,
        })
    }
}
