//! The stream graph as a sum of Gaussian kernels (Cordonnier et al. 2016 §7, second
//! rendering method): the height at a point is `Σ wᵢ·hᵢ / Σ wᵢ` over the nodes within
//! `3σ`, `wᵢ = exp(−dᵢ² / 2σ²)`. Smoother than the mesh and fast: the live view while a
//! graph erodes.

use crate::math;
use rayon::prelude::*;

use super::bins::BinLists;
use super::rivers::check_surface;
use super::StreamSurface;
use crate::error::{check_positive, OrogenError, Result};
use crate::field::Grid;
use crate::mesh::NodeGraph;
use crate::state::buffer;

/// The kernel-weighted mean of the node heights of `s` at every pixel of `grid` (pixel
/// `(x, y)` at `(x·dx, y·dy)` metres), kernel width `sigma` metres (> 0; about the node
/// spacing keeps ridges and valleys, larger smooths them away). A pixel with no node
/// within `3σ` takes its nearest node's height. Deterministic whatever the thread count
/// (each pixel sums its nodes in one fixed order).
pub fn gaussian(s: &StreamSurface, grid: Grid, sigma: f64) -> Result<Vec<f32>> {
    check_surface(s)?;
    gaussian_heights(s.graph, s.heights, grid, sigma)
}

/// [`gaussian`] of any per-node `heights` over `graph` (the live view while a graph erodes:
/// no routing needed).
pub fn gaussian_heights(
    graph: &NodeGraph,
    heights: &[f32],
    grid: Grid,
    sigma: f64,
) -> Result<Vec<f32>> {
    check_positive("sigma", sigma)?;
    if heights.len() != graph.len() {
        return Err(OrogenError::invalid(
            "heights",
            format!(
                "one value per node expected ({}), got {}",
                graph.len(),
                heights.len()
            ),
        ));
    }
    let radius = 3.0 * sigma;
    let pos = graph.positions();
    let (mut xmax, mut ymax) = (0.0f64, 0.0f64);
    for p in pos {
        if p.x < 0.0 || p.y < 0.0 {
            return Err(OrogenError::invalid(
                "positions",
                format!("nodes lie at x, y ≥ 0 on a raster, got ({}, {})", p.x, p.y),
            ));
        }
        xmax = xmax.max(p.x);
        ymax = ymax.max(p.y);
    }
    // Bins of one radius: a pixel's nodes are in its bin's 3×3 block. Counted in f64 first:
    // a tiny sigma makes more bins than a usize holds (the cast saturated, the + 1 wrapped
    // to 0 bins and the binning indexed past its end; fuzz finding #39.1).
    let (bwf, bhf) = ((xmax / radius).floor() + 1.0, (ymax / radius).floor() + 1.0);
    // (NaN does not fit either.)
    let fits = (bwf * bhf)
        .partial_cmp(&((1u64 << 28) as f64))
        .is_some_and(|o| o.is_le());
    if !fits {
        return Err(OrogenError::invalid(
            "sigma",
            format!(
                "{sigma} m is too small for nodes spread over {xmax:.0} × {ymax:.0} m (at most 2^28 bins of 3σ)"
            ),
        ));
    }
    let (bw, bh) = (bwf as usize, bhf as usize);
    let bins = bw * bh;
    let bin_of = |x: f64, y: f64| {
        let (bx, by) = ((x / radius) as usize, (y / radius) as usize);
        (bx.min(bw - 1), by.min(bh - 1))
    };
    let nodes = BinLists::build(bins, pos.len(), "nodes by bin", |i, add| {
        let (bx, by) = bin_of(pos[i].x, pos[i].y);
        add(by * bw + bx);
    })?;

    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    let inv = -0.5 / (sigma * sigma);
    let r2 = radius * radius;
    let mut out: Vec<f32> = buffer(grid.len(), 0.0, "Gaussian surface")?;
    out.par_chunks_mut(grid.width)
        .enumerate()
        .for_each(|(y, row)| {
            let py = y as f64 * dy;
            for (x, o) in row.iter_mut().enumerate() {
                let px = x as f64 * dx;
                let (bx, by) = bin_of(px.min(xmax), py.min(ymax));
                let (mut sw, mut swh) = (0.0f64, 0.0f64);
                let (mut near, mut near_d) = (0u32, f64::INFINITY);
                for cy in by.saturating_sub(1)..(by + 2).min(bh) {
                    for cx in bx.saturating_sub(1)..(bx + 2).min(bw) {
                        for &i in nodes.bin(cy * bw + cx) {
                            let p = pos[i as usize];
                            let d2 = (p.x - px).powi(2) + (p.y - py).powi(2);
                            if d2 < near_d {
                                near_d = d2;
                                near = i;
                            }
                            if d2 < r2 {
                                let w = math::exp(d2 * inv);
                                sw += w;
                                swh += w * heights[i as usize] as f64;
                            }
                        }
                    }
                }
                *o = if sw > 0.0 {
                    (swh / sw) as f32
                } else if near_d.is_finite() {
                    heights[near as usize]
                } else {
                    f32::NAN
                };
            }
        });
    if out.iter().any(|v| v.is_nan()) {
        return Err(OrogenError::invalid(
            "sigma",
            format!("{sigma} m: some pixels have no node within 3σ or its bins"),
        ));
    }
    Ok(out)
}
