//! The stream graph's Delaunay mesh, Phong-tessellated and rasterised (Cordonnier et al.
//! 2016 §7, first rendering method; Boubekeur & Alexa 2008, "Phong Tessellation").
//!
//! A point of a triangle with barycentric weights `(u, v, w)` sits at the linear point
//! `p = u·P₀ + v·P₁ + w·P₂`, pulled towards the tangent planes of the three corners:
//! `p* = (1 − α)·p + α·Σ uᵢ·πᵢ(p)`, `πᵢ(q) = q − ((q − Pᵢ)·nᵢ)·nᵢ`, with `nᵢ` the
//! corner's normal (the area-weighted mean of its triangles' normals). The raster takes
//! `p*`'s height at the pixel's `(x, y)` (Phong's sideways shift, a fraction of a node
//! spacing on steep slopes, is not followed). `α = 0` is linear interpolation, which
//! [`linear`] gives for any per-node value (drainage, lake levels).

use glam::DVec3;
use rayon::prelude::*;

use super::bins::BinLists;
use super::rivers::check_surface;
use super::StreamSurface;
use crate::error::{check_range, OrogenError, Result};
use crate::field::Grid;
use crate::state::buffer;

/// Rows of pixels per band: triangles are binned by band, bands filled in parallel.
const BAND_ROWS: usize = 16;

/// Phong tessellation's shape factor α in `[0, 1]`: 0 is the flat mesh, Boubekeur & Alexa
/// recommend 3/4.
pub const DEFAULT_ALPHA: f32 = 0.75;

/// Each node's normal: the area-weighted mean of its triangles' normals (z up).
fn vertex_normals(s: &StreamSurface) -> Vec<DVec3> {
    let pos = |i: u32| {
        let p = s.graph.position(i as usize);
        DVec3::new(p.x, p.y, s.heights[i as usize] as f64)
    };
    let mut n = vec![DVec3::ZERO; s.heights.len()];
    for t in s.triangles {
        let (a, b, c) = (pos(t[0]), pos(t[1]), pos(t[2]));
        // Twice the area times the unit normal; counter-clockwise triangles point up.
        let f = (b - a).cross(c - a);
        for &v in t {
            n[v as usize] += f;
        }
    }
    n.iter_mut()
        .for_each(|v| *v = v.try_normalize().unwrap_or(DVec3::Z));
    n
}

/// Calls `shade(triangle, (u, v, w), x, y)` for every pixel centre of `grid` inside a
/// triangle of `s` (pixel `(x, y)` at `(x·dx, y·dy)` metres) and writes what it returns;
/// a pixel on a shared edge takes the later triangle's value. Pixels no triangle covers
/// (none when the mesh covers the grid's rectangle) take their nearest covered
/// neighbour's value along the row, then the column. Deterministic whatever the thread
/// count: each band of rows is filled by one thread, in triangle order.
pub(crate) fn fill_triangles<T: Copy + Send + Sync>(
    s: &StreamSurface,
    grid: Grid,
    blank: T,
    shade: impl Fn(usize, [f64; 3], f64, f64) -> T + Sync,
) -> Result<Vec<T>> {
    let ([], out) =
        fill_planes::<T, T, 0>(s, grid, [], blank, |k, b, x, y| ([], shade(k, b, x, y)))?;
    Ok(out)
}

/// [`fill_triangles`] into `N` rasters of `T` and one of `U` at once (the triangles
/// binned and the pixels walked once): `shade` gives a pixel's values, `blank` and
/// `blank_extra` the initial ones. A zero-sized `U` (`()`) costs nothing.
pub(crate) fn fill_planes<T: Copy + Send + Sync, U: Copy + Send + Sync, const N: usize>(
    s: &StreamSurface,
    grid: Grid,
    blank: [T; N],
    blank_extra: U,
    shade: impl Fn(usize, [f64; 3], f64, f64) -> ([T; N], U) + Sync,
) -> Result<([Vec<T>; N], Vec<U>)> {
    check_surface(s)?;
    let (w, h) = (grid.width, grid.height);
    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    let bands = h.div_ceil(BAND_ROWS);
    // Triangles by band, in triangle order.
    let binned = BinLists::build(bands, s.triangles.len(), "triangles by band", |k, add| {
        let ys = s.triangles[k].map(|v| s.graph.position(v as usize).y / dy);
        let lo = ys
            .iter()
            .cloned()
            .fold(f64::INFINITY, f64::min)
            .ceil()
            .max(0.0) as usize;
        let hi = ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max).floor();
        if hi < 0.0 {
            return;
        }
        let hi = (hi as usize).min(h - 1);
        if lo <= hi {
            for b in lo / BAND_ROWS..=hi / BAND_ROWS {
                add(b);
            }
        }
    })?;

    let mut outs: Vec<Vec<T>> = Vec::with_capacity(N);
    for &b in &blank {
        outs.push(buffer(grid.len(), b, "rasterised values")?);
    }
    let mut extra: Vec<U> = buffer(grid.len(), blank_extra, "rasterised values")?;
    let mut covered: Vec<bool> = buffer(grid.len(), false, "rasterised pixels")?;
    // Each band's rows of every raster.
    let band_rows: Vec<[&mut [T]; N]> = {
        let mut chunks: Vec<_> = outs
            .iter_mut()
            .map(|o| o.chunks_mut(BAND_ROWS * w))
            .collect();
        (0..bands)
            .map(|_| std::array::from_fn(|i| chunks[i].next().unwrap_or_default()))
            .collect()
    };
    band_rows
        .into_par_iter()
        .zip(extra.par_chunks_mut(BAND_ROWS * w))
        .zip(covered.par_chunks_mut(BAND_ROWS * w))
        .enumerate()
        .for_each(|(b, ((mut rows, extra), seen))| {
            let y0 = b * BAND_ROWS;
            let y1 = y0 + seen.len() / w;
            for &k in binned.bin(b) {
                let t = &s.triangles[k as usize];
                let [a, bb, c] = t.map(|v| s.graph.position(v as usize));
                let det = (bb - a).perp_dot(c - a);
                if det.abs() < 1e-300 {
                    continue;
                }
                let tol = 1e-9;
                let ylo = (a.y.min(bb.y).min(c.y) / dy).ceil().max(y0 as f64) as usize;
                let yhi = ((a.y.max(bb.y).max(c.y) / dy).floor()).min((y1 - 1) as f64);
                if yhi < ylo as f64 {
                    continue;
                }
                let xlo = (a.x.min(bb.x).min(c.x) / dx).ceil().max(0.0) as usize;
                let xhi = ((a.x.max(bb.x).max(c.x) / dx).floor()).min((w - 1) as f64);
                if xhi < xlo as f64 {
                    continue;
                }
                for y in ylo..=yhi as usize {
                    let py = y as f64 * dy;
                    for x in xlo..=xhi as usize {
                        let p = glam::DVec2::new(x as f64 * dx, py);
                        let v = (p - a).perp_dot(c - a) / det;
                        let u2 = (bb - a).perp_dot(p - a) / det;
                        let u0 = 1.0 - v - u2;
                        if u0 >= -tol && v >= -tol && u2 >= -tol {
                            let bary = [u0.max(0.0), v.max(0.0), u2.max(0.0)];
                            let sum = bary[0] + bary[1] + bary[2];
                            let bary = bary.map(|q| q / sum);
                            let i = (y - y0) * w + x;
                            let (value, e) = shade(k as usize, bary, p.x, p.y);
                            for (row, v) in rows.iter_mut().zip(value) {
                                row[i] = v;
                            }
                            extra[i] = e;
                            seen[i] = true;
                        }
                    }
                }
            }
        });
    // Pixels left uncovered (rounding at the rectangle's edge): the nearest covered value
    // along the row, then along the column.
    if covered.iter().any(|c| !c) {
        for (r, seen) in covered.chunks_mut(w).enumerate() {
            let mut filled = seen.to_vec();
            for out in outs.iter_mut() {
                filled.copy_from_slice(seen);
                fill_gaps(&mut out[r * w..(r + 1) * w], &mut filled);
            }
            filled.copy_from_slice(seen);
            fill_gaps(&mut extra[r * w..(r + 1) * w], &mut filled);
            seen.copy_from_slice(&filled);
        }
        for x in 0..w {
            let seen: Vec<bool> = (0..h).map(|y| covered[y * w + x]).collect();
            let mut filled = seen.clone();
            for out in outs.iter_mut() {
                let mut col: Vec<T> = (0..h).map(|y| out[y * w + x]).collect();
                filled.copy_from_slice(&seen);
                fill_gaps(&mut col, &mut filled);
                for y in 0..h {
                    out[y * w + x] = col[y];
                }
            }
            let mut col: Vec<U> = (0..h).map(|y| extra[y * w + x]).collect();
            filled.copy_from_slice(&seen);
            fill_gaps(&mut col, &mut filled);
            for y in 0..h {
                extra[y * w + x] = col[y];
            }
            for y in 0..h {
                covered[y * w + x] = filled[y];
            }
        }
        if covered.iter().any(|c| !c) {
            return Err(OrogenError::invalid(
                "triangles",
                "the mesh covers no pixel of the grid",
            ));
        }
    }
    let outs = outs
        .try_into()
        .unwrap_or_else(|_| unreachable!("one raster per plane"));
    Ok((outs, extra))
}

/// Fills the runs not `seen` with the nearest seen value before them (after them at the
/// start), marking them seen.
fn fill_gaps<T: Copy>(v: &mut [T], seen: &mut [bool]) {
    let mut last = v.iter().zip(seen.iter()).find(|(_, &s)| s).map(|(x, _)| *x);
    for (x, s) in v.iter_mut().zip(seen.iter_mut()) {
        if *s {
            last = Some(*x);
        } else if let Some(l) = last {
            *x = l;
            *s = true;
        }
    }
}

/// Per-node `values` interpolated linearly over the Delaunay triangles onto `grid`.
pub fn linear(s: &StreamSurface, values: &[f32], grid: Grid) -> Result<Vec<f32>> {
    let [out] = linear_many(s, [values], grid)?;
    Ok(out)
}

/// [`linear`] of `N` per-node value slices at once (the triangles binned and the raster
/// walked once), the same bytes as `N` calls.
pub fn linear_many<const N: usize>(
    s: &StreamSurface,
    values: [&[f32]; N],
    grid: Grid,
) -> Result<[Vec<f32>; N]> {
    let (out, _) = linear_and_nearest(s, values, (), |_| (), grid)?;
    Ok(out)
}

/// [`linear_many`] of `values` and, in the same walk, per-node `labels` onto `grid`: each
/// pixel takes the label of the corner of its triangle it is nearest to (largest
/// barycentric weight, the first of equal ones).
pub fn linear_many_and_nearest<const N: usize>(
    s: &StreamSurface,
    values: [&[f32]; N],
    labels: &[u32],
    grid: Grid,
) -> Result<([Vec<f32>; N], Vec<u32>)> {
    if labels.len() != s.graph.len() {
        return Err(OrogenError::invalid(
            "labels",
            format!(
                "one label per node expected ({}), got {}",
                s.graph.len(),
                labels.len()
            ),
        ));
    }
    linear_and_nearest(s, values, 0, |v| labels[v], grid)
}

/// [`linear_many`] and `label(node)` of each pixel's nearest triangle corner.
fn linear_and_nearest<U: Copy + Send + Sync, const N: usize>(
    s: &StreamSurface,
    values: [&[f32]; N],
    blank: U,
    label: impl Fn(usize) -> U + Sync,
    grid: Grid,
) -> Result<([Vec<f32>; N], Vec<U>)> {
    for v in values {
        if v.len() != s.graph.len() {
            return Err(OrogenError::invalid(
                "values",
                format!(
                    "one value per node expected ({}), got {}",
                    s.graph.len(),
                    v.len()
                ),
            ));
        }
    }
    fill_planes(s, grid, [0.0; N], blank, |k, b, _, _| {
        let t = &s.triangles[k];
        let linear = values.map(|values| {
            (b[0] * values[t[0] as usize] as f64
                + b[1] * values[t[1] as usize] as f64
                + b[2] * values[t[2] as usize] as f64) as f32
        });
        let c = if b[0] >= b[1] && b[0] >= b[2] {
            0
        } else if b[1] >= b[2] {
            1
        } else {
            2
        };
        (linear, label(t[c] as usize))
    })
}

/// The node heights of `s`, Phong-tessellated with shape factor `alpha` (in `[0, 1]`)
/// and rasterised onto `grid`: a smooth surface through every node.
pub fn phong(s: &StreamSurface, grid: Grid, alpha: f32) -> Result<Vec<f32>> {
    check_range("alpha", alpha as f64, 0.0, 1.0)?;
    check_surface(s)?;
    let normals = vertex_normals(s);
    let alpha = alpha as f64;
    fill_triangles(s, grid, 0.0, |k, b, x, y| {
        let t = &s.triangles[k];
        let corner = |i: usize| {
            let v = t[i] as usize;
            let p = s.graph.position(v);
            (DVec3::new(p.x, p.y, s.heights[v] as f64), normals[v])
        };
        let c = [corner(0), corner(1), corner(2)];
        let z = b[0] * c[0].0.z + b[1] * c[1].0.z + b[2] * c[2].0.z;
        let p = DVec3::new(x, y, z);
        let mut proj = DVec3::ZERO;
        for (i, (pi, ni)) in c.iter().enumerate() {
            proj += b[i] * (p - (p - *pi).dot(*ni) * *ni);
        }
        ((1.0 - alpha) * z + alpha * proj.z) as f32
    })
}
