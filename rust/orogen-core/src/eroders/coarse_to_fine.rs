//! Coarse-to-fine scheduling for grid erosion, over plain data: the pyramid of grids, the
//! split of a run's iterations over them, and moving heights and inputs between levels.
//!
//! Cordonnier et al. 2016 (large-scale terrain from uplift and fluvial erosion): erode on a
//! coarse grid until the relief is close to steady state, upsample and add the fine detail
//! back, then carry on at the finer grids, which only have to cut their own small valleys.
//!
//! Level `l` of a `w × h` grid has a node every `f = 2^l` fine nodes: `⌈(w−1)/f⌉ + 1` by
//! `⌈(h−1)/f⌉ + 1` nodes of `f·dx × f·dy` metres, node `(i, j)` standing on fine node
//! `(i·f, j·f)` (the last row or column may stand just past the fine grid). Heights and
//! inputs go down by full weighting (a separable tent of half-width `f`, renormalised at the
//! borders); a level hands its heights to the next, twice as fine, by cubics along the
//! smoother of two directions at each new node ([`prolong_directional`]), and a live view
//! shows a coarse level by separable Catmull-Rom cubics ([`prolong`]). Every output value
//! is computed on its own from its inputs, so the bytes never depend on the thread count.

use rayon::prelude::*;

use crate::error::{OrogenError, Result};
use crate::field::Grid;

/// Fewest nodes along either side of the coarsest grid: fewer cannot hold a river network.
pub const MIN_COARSE_NODES: usize = 17;

/// One grid of the pyramid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// The grid, `factor` times coarser than the finest.
    pub grid: Grid,
    /// Fine nodes per node of this grid along each axis (a power of two; 1 is the finest).
    pub factor: usize,
    /// Iterations run at this level.
    pub iterations: u32,
}

/// The grid `factor` times coarser than `fine`.
pub fn coarse_grid(fine: Grid, factor: usize) -> Result<Grid> {
    let side = |n: usize| (n - 1).div_ceil(factor) + 1;
    Grid::with_cells(
        side(fine.width),
        side(fine.height),
        fine.dx() * factor as f32,
        fine.dy() * factor as f32,
    )
}

/// How close to its steady state a finer level brings the slopes it resolves first: the
/// departure left, as a fraction of the one handed over.
pub const SETTLE: f64 = 1e-3;

/// Steps a finer level needs for the smallest catchments it resolves — a node draining only
/// its own cell, on a divide — to settle to within [`SETTLE`] of their steady state.
///
/// Why a finer level must run this long (issue #39): at steady state a node stands
/// `(u / (k·A^m))^(1/n)·dist` above its receiver, and on a divide `A` is the node's own cell,
/// so a grid `f` times coarser grows lower hillslopes (a strip of `j` cells drains
/// `j·f²·dx²`, not the finer grid's `j·f·dx²`): handed over, every divide stands too low,
/// and the relief with it (−9 % at two levels, −13 % at three, on the default recipe at
/// 1025² of 50 m with 10 steps per finer level). The finer level regrows them only at the
/// rate its implicit step allows: a divide node's departure from steady state shrinks by
/// `1/(1 + F)` a step, `F = k·a^m·dt/dist^n` (`a` the cell area × `rain`, `dist` the longer
/// cell side; exact for `n = 1`, the linearised rate otherwise), so it needs
/// `ln(1/SETTLE) / ln(1 + F)` steps; the slopes below it, fed by the divide, settle no
/// sooner. `k` is the mean positive erodibility (`None`: nothing erodes, nothing to wait
/// for), `rain` the mean precipitation (1 without).
pub fn settle_steps(fine: Grid, k: Option<f64>, rain: f64, m: f64, n: f64, dt: f64) -> u32 {
    let Some(k) = k.filter(|k| *k > 0.0) else {
        return 0;
    };
    let a = fine.dx() as f64 * fine.dy() as f64 * rain;
    let dist = fine.dx().max(fine.dy()) as f64;
    let f = k * crate::math::powf(a, m) * dt / crate::math::powf(dist, n);
    if !f.is_finite() || f <= 0.0 {
        return 0;
    }
    let steps = crate::math::ln(1.0 / SETTLE) / crate::math::ln(1.0 + f);
    steps.ceil().min(u32::MAX as f64) as u32
}

/// The levels of a `levels`-deep schedule over `fine`, coarsest first: each finer level
/// runs `max(1, round(iterations·refine), settle)` iterations, `settle` (from
/// [`settle_steps`]) capped so that the coarsest keeps at least half the iterations; the
/// coarsest runs the rest. `field` names the schedule in errors.
pub fn plan(
    fine: Grid,
    levels: u32,
    refine: f32,
    iterations: u32,
    settle: u32,
    field: &str,
) -> Result<Vec<Level>> {
    let levels = levels.max(1) as usize;
    let top = 1usize << (levels - 1);
    let coarsest = coarse_grid(fine, top)?;
    if levels > 1 && coarsest.width.min(coarsest.height) < MIN_COARSE_NODES {
        return Err(OrogenError::invalid(
            format!("{field}.levels"),
            format!(
                "{levels} levels make the {}×{} grid a {}×{} one; its coarsest grid needs at \
                 least {MIN_COARSE_NODES} nodes a side, so use fewer levels",
                fine.width, fine.height, coarsest.width, coarsest.height
            ),
        ));
    }
    let by_refine = ((iterations as f64 * refine as f64).round() as u32).max(1);
    let settle_cap = if levels > 1 {
        iterations / (2 * (levels as u32 - 1))
    } else {
        0
    };
    let per_finer = by_refine.max(settle.min(settle_cap));
    let finer_total = per_finer as u64 * (levels as u64 - 1);
    if levels > 1 && finer_total >= iterations as u64 {
        return Err(OrogenError::invalid(
            format!("{field}.refine"),
            format!(
                "{per_finer} iterations at each of {} finer levels leave none of the stage's \
                 {iterations} for the coarsest; lower refine or levels, or raise iterations",
                levels - 1
            ),
        ));
    }
    (0..levels)
        .rev()
        .map(|l| {
            let factor = 1usize << l;
            Ok(Level {
                grid: coarse_grid(fine, factor)?,
                factor,
                iterations: if l == levels - 1 {
                    iterations - finer_total as u32
                } else {
                    per_finer
                },
            })
        })
        .collect()
}

/// Tent weights of half-width `f` around fine index `centre`, clipped to `0..n`.
fn tent(centre: usize, f: usize, n: usize) -> impl Iterator<Item = (usize, f64)> {
    let lo = centre.saturating_sub(f - 1);
    let hi = (centre + f - 1).min(n - 1);
    (lo..=hi.max(lo)).filter(move |&i| i < n).map(move |i| {
        let d = i.abs_diff(centre);
        (i, (f - d) as f64)
    })
}

/// `data` over `fine` averaged down to the grid `factor` times coarser (`coarse`), by full
/// weighting: the separable tent of half-width `factor` around each coarse node's fine
/// position, renormalised where it is clipped by the border.
pub fn restrict(data: &[f32], fine: Grid, coarse: Grid, factor: usize) -> Vec<f32> {
    debug_assert_eq!(data.len(), fine.len());
    let (w, h) = (fine.width, fine.height);
    if factor == 1 {
        return data.to_vec();
    }
    // Along x first: one row of coarse columns per fine row.
    let mut rows = vec![0.0f64; coarse.width * h];
    rows.par_chunks_mut(coarse.width)
        .zip(data.par_chunks(w))
        .for_each(|(out, row)| {
            for (i, o) in out.iter_mut().enumerate() {
                let centre = i * factor;
                let (mut s, mut ws) = (0.0, 0.0);
                for (x, wt) in tent(centre, factor, w) {
                    s += row[x] as f64 * wt;
                    ws += wt;
                }
                *o = s / ws;
            }
        });
    // Then along y.
    let mut out = vec![0.0f32; coarse.len()];
    out.par_chunks_mut(coarse.width)
        .enumerate()
        .for_each(|(j, line)| {
            let centre = j * factor;
            for (i, o) in line.iter_mut().enumerate() {
                let (mut s, mut ws) = (0.0, 0.0);
                for (y, wt) in tent(centre, factor, h) {
                    s += rows[y * coarse.width + i] * wt;
                    ws += wt;
                }
                *o = (s / ws) as f32;
            }
        });
    out
}

/// Catmull-Rom weights of the four nodes around fraction `t` in [0, 1).
fn cubic_weights(t: f32) -> [f32; 4] {
    let (t2, t3) = (t * t, t * t * t);
    [
        0.5 * (-t3 + 2.0 * t2 - t),
        0.5 * (3.0 * t3 - 5.0 * t2 + 2.0),
        0.5 * (-3.0 * t3 + 4.0 * t2 + t),
        0.5 * (t3 - t2),
    ]
}

/// The four coarse indices around `i` (`i−1 ..= i+2`), clamped to `0..n`.
fn taps(i: usize, n: usize) -> [usize; 4] {
    let c = |k: isize| (i as isize + k).clamp(0, n as isize - 1) as usize;
    [c(-1), c(0), c(1), c(2)]
}

/// `data` over `coarse` interpolated up to `fine`, `ratio` times finer (fine node `x`
/// stands at coarse coordinate `x / ratio`), by separable Catmull-Rom cubics: the surface
/// passes through every coarse node with a continuous slope. Bilinear interpolation would
/// leave a crease along every coarse row and column, which hill shading shows as hatching
/// and which the finer level's water follows in straight lines.
pub fn prolong(data: &[f32], coarse: Grid, fine: Grid, ratio: usize) -> Vec<f32> {
    debug_assert_eq!(data.len(), coarse.len());
    let (cw, ch) = (coarse.width, coarse.height);
    let axis = |n_fine: usize, n_coarse: usize| -> Vec<([usize; 4], [f32; 4])> {
        (0..n_fine)
            .map(|x| {
                let i = (x / ratio).min(n_coarse - 1);
                let t = (x - i * ratio) as f32 / ratio as f32;
                (taps(i, n_coarse), cubic_weights(t))
            })
            .collect()
    };
    let xs = axis(fine.width, cw);
    let ys = axis(fine.height, ch);
    let mut out = vec![0.0f32; fine.len()];
    out.par_chunks_mut(fine.width)
        .zip(ys.par_iter())
        .for_each(|(line, (yi, yw))| {
            // The four coarse rows blended along y, then each fine node along x.
            let row: Vec<f32> = (0..cw)
                .map(|i| {
                    (0..4)
                        .map(|k| data[yi[k] * cw + i] * yw[k])
                        .fold(0.0, |a, b| a + b)
                })
                .collect();
            for (o, (xi, xw)) in line.iter_mut().zip(&xs) {
                *o = (0..4).map(|k| row[xi[k]] * xw[k]).fold(0.0, |a, b| a + b);
            }
        });
    out
}

/// The Catmull-Rom midpoint of four values equally spaced along a line, and how far the
/// line bends there: the summed second differences `|a − 2b + c| + |b − 2c + d|` (0 on a
/// straight ramp, large across a valley floor or a ridge crest).
fn midpoint(a: f32, b: f32, c: f32, d: f32) -> (f32, f32) {
    let value = (9.0 * (b + c) - (a + d)) / 16.0;
    let bend = (a - 2.0 * b + c).abs() + (b - 2.0 * c + d).abs();
    (value, bend)
}

/// Blend of two midpoints by how straight their lines are: each weighs by the inverse of
/// its bend, so the direction along which the heights run straightest counts most, and
/// equal bends give the mean. The weights vary continuously with the heights, so the
/// blend leaves no crease.
fn blend((v1, b1): (f32, f32), (v2, b2): (f32, f32)) -> f32 {
    let eps = 1e-3 * (b1 + b2) + 1e-12;
    let (w1, w2) = (1.0 / (b1 + eps), 1.0 / (b2 + eps));
    (w1 * v1 + w2 * v2) / (w1 + w2)
}

/// `data` over `coarse` interpolated to `fine`, twice as fine (fine node `x` at coarse
/// coordinate `x / 2`; the coarse grid may reach just past the fine one), by direction:
/// coarse nodes are kept; a cell's centre blends the cubic midpoints along its two
/// diagonals, an edge's middle the cubic along the edge and the one across it through the
/// cell centres beside it, each weighted by how straight the heights run along it
/// ([`blend`]; taps clamped at the borders). Issue #39: separable cubics interpolate a
/// valley along a diagonal with a bump at every cell centre (the centre takes a share of
/// each wall node beside the floor), and the finer level's rivers then leave diagonal
/// valleys by axis steps: on the default recipe at 513² of 50 m, three levels left 37.7 %
/// of the channel steps diagonal against the fine run's 46.4 %, and 7 % less channel
/// length. Along the floor the heights run straight, across it they bend, so the floor
/// carries the centre. Linear functions are kept exactly away from the borders.
pub fn prolong_directional(data: &[f32], coarse: Grid, fine: Grid) -> Vec<f32> {
    debug_assert_eq!(data.len(), coarse.len());
    debug_assert!((fine.width - 1).div_ceil(2) < coarse.width);
    debug_assert!((fine.height - 1).div_ceil(2) < coarse.height);
    let (cw, ch) = (coarse.width as isize, coarse.height as isize);
    let c = |i: isize, j: isize| data[(j.clamp(0, ch - 1) * cw + i.clamp(0, cw - 1)) as usize];
    // The centre of the cell whose low corner is coarse node (i, j).
    let centre = |i: isize, j: isize| {
        blend(
            midpoint(c(i - 1, j - 1), c(i, j), c(i + 1, j + 1), c(i + 2, j + 2)),
            midpoint(c(i + 2, j - 1), c(i + 1, j), c(i, j + 1), c(i - 1, j + 2)),
        )
    };
    let w = fine.width;
    let mut out = vec![0.0f32; fine.len()];
    out.par_chunks_mut(w).enumerate().for_each(|(y, line)| {
        for (x, o) in line.iter_mut().enumerate() {
            let (i, j) = ((x / 2) as isize, (y / 2) as isize);
            *o = match (x % 2, y % 2) {
                (0, 0) => c(i, j),
                (1, 1) => centre(i, j),
                // Between (i, j) and (i + 1, j): along the row, or down through the centres.
                (1, 0) => blend(
                    midpoint(c(i - 1, j), c(i, j), c(i + 1, j), c(i + 2, j)),
                    midpoint(
                        centre(i, j - 2),
                        centre(i, j - 1),
                        centre(i, j),
                        centre(i, j + 1),
                    ),
                ),
                // Between (i, j) and (i, j + 1): along the column, or across the centres.
                _ => blend(
                    midpoint(c(i, j - 1), c(i, j), c(i, j + 1), c(i, j + 2)),
                    midpoint(
                        centre(i - 2, j),
                        centre(i - 1, j),
                        centre(i, j),
                        centre(i + 1, j),
                    ),
                ),
            };
        }
    });
    out
}

/// The detail a level adds back when it takes over from the coarser one: its own start
/// heights minus what the coarser level's start heights interpolate to (by
/// [`prolong_directional`], as the heights are handed over).
pub fn detail(start: &[f32], grid: Grid, coarser_start: &[f32], coarser: Grid) -> Vec<f32> {
    let mut d = prolong_directional(coarser_start, coarser, grid);
    d.par_iter_mut()
        .zip(start.par_iter())
        .for_each(|(d, &s)| *d = s - *d);
    d
}

/// Roughness the coarser grid could not hold, added where a level takes over:
/// `strength × |∇h|·spacing × noise`, the slope of the interpolated heights `up` (over
/// `grid`) times the coarser grid's node spacing `spacing` (metres) — the relief within one
/// coarse cell — times `noise` in about [−1, 1]. Planar facets between coarse nodes would
/// otherwise drain in parallel lines that the finer level cuts into straight, evenly
/// spaced gullies; the noise gives the water hollows to gather in. The stage draws `noise`
/// at the wavelengths the coarser grid cannot hold (its Nyquist wavelength, two spacings,
/// and one spacing, the finer grid's).
pub fn roughen(up: &mut [f32], grid: Grid, spacing: f32, noise: &[f32], strength: f32) {
    let (w, h) = (grid.width, grid.height);
    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    let src = up.to_vec();
    let scale = strength as f64 * spacing as f64;
    up.par_chunks_mut(w).enumerate().for_each(|(y, line)| {
        let (ya, yb) = (y.saturating_sub(1), (y + 1).min(h - 1));
        for (x, v) in line.iter_mut().enumerate() {
            let (xa, xb) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let gx = (src[y * w + xb] - src[y * w + xa]) as f64 / ((xb - xa).max(1) as f64 * dx);
            let gy = (src[yb * w + x] - src[ya * w + x]) as f64 / ((yb - ya).max(1) as f64 * dy);
            let relief = (gx * gx + gy * gy).sqrt() * scale;
            *v = (*v as f64 + relief * noise[y * w + x] as f64) as f32;
        }
    });
}

/// `data` over `grid` moved sideways (Galin et al. 2019, "Warping": the terrain read at
/// `ω(p)` instead of `p`, `ω` a displacement made of noise): node `(x, y)` takes the value
/// at `(x + ax·noise_x, y + ay·noise_y)`, in nodes, read by Catmull-Rom cubics and clamped
/// to the grid. Heights are moved, not made: a ramp stays a ramp away from the borders,
/// and the highest and lowest values stay to the cubics' overshoot. A coarse grid knows
/// that a river crosses its cell, not where: moved by a fraction of a coarse cell, the
/// finer level's rivers wind within their valleys instead of running on the coarse grid's
/// straight lines.
pub fn warp(
    data: &[f32],
    grid: Grid,
    noise_x: &[f32],
    noise_y: &[f32],
    ax: f32,
    ay: f32,
) -> Vec<f32> {
    let (w, h) = (grid.width, grid.height);
    debug_assert_eq!(data.len(), grid.len());
    let mut out = vec![0.0f32; grid.len()];
    out.par_chunks_mut(w).enumerate().for_each(|(y, line)| {
        for (x, o) in line.iter_mut().enumerate() {
            let i = y * w + x;
            let fx = (x as f32 + ax * noise_x[i]).clamp(0.0, (w - 1) as f32);
            let fy = (y as f32 + ay * noise_y[i]).clamp(0.0, (h - 1) as f32);
            let (ix, iy) = ((fx as usize).min(w - 1), (fy as usize).min(h - 1));
            let (xi, xw) = (taps(ix, w), cubic_weights(fx - ix as f32));
            let (yi, yw) = (taps(iy, h), cubic_weights(fy - iy as f32));
            let mut sum = 0.0f32;
            for (&row, &wy) in yi.iter().zip(&yw) {
                let line = &data[row * w..(row + 1) * w];
                sum += (0..4).map(|k| line[xi[k]] * xw[k]).fold(0.0, |a, b| a + b) * wy;
            }
            *o = sum;
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math;

    fn grid(w: usize, h: usize) -> Grid {
        Grid::with_cells(w, h, 10.0, 20.0).unwrap()
    }

    #[test]
    fn plan_splits_iterations_and_halves_grids() {
        let levels = plan(grid(1025, 513), 3, 0.1, 100, 0, "s").unwrap();
        let shapes: Vec<_> = levels
            .iter()
            .map(|l| (l.grid.width, l.grid.height, l.factor, l.iterations))
            .collect();
        assert_eq!(
            shapes,
            [(257, 129, 4, 80), (513, 257, 2, 10), (1025, 513, 1, 10)]
        );
        assert_eq!(levels[0].grid.dx(), 40.0);
        // Settling needs 30 steps per finer level: capped at 25, half the 100 left to the
        // coarsest; 20 steps take 20; below refine's 10, refine's.
        let iterations = |settle| -> Vec<u32> {
            plan(grid(1025, 513), 3, 0.1, 100, settle, "s")
                .unwrap()
                .iter()
                .map(|l| l.iterations)
                .collect()
        };
        assert_eq!(iterations(30), [50, 25, 25]);
        assert_eq!(iterations(20), [60, 20, 20]);
        assert_eq!(iterations(4), [80, 10, 10]);
        assert_eq!(levels[0].grid.dy(), 80.0);
        // A size that does not halve evenly: the coarse grid reaches just past it.
        let g = coarse_grid(grid(1000, 1000), 4).unwrap();
        assert_eq!((g.width, g.height), (251, 251));
        assert!((g.width - 1) * 4 >= 999);
    }

    #[test]
    fn plan_refuses_too_many_levels_or_no_coarse_iterations() {
        let e = plan(
            grid(129, 129),
            5,
            0.1,
            100,
            0,
            "stages[0].StreamPower.schedule",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("stages[0].StreamPower.schedule.levels"), "{e}");
        let e = plan(grid(513, 513), 3, 0.5, 100, 0, "s")
            .unwrap_err()
            .to_string();
        assert!(e.contains("s.refine"), "{e}");
        assert!(plan(grid(129, 129), 4, 0.1, 100, 0, "s").is_ok());
    }

    #[test]
    fn settling_takes_the_steps_a_divide_node_needs() {
        // The default recipe: k 5e-6, dt 5e4, m 0.5, n 1: F = k·dx·dt/dx = 0.25 at any cell
        // size, 0.8 of the departure left per step, 0.1 % after 31.
        for cell in [50.0, 100.0] {
            let g = Grid::with_cells(65, 65, cell, cell).unwrap();
            assert_eq!(settle_steps(g, Some(5e-6), 1.0, 0.5, 1.0, 5e4), 31);
        }
        // Ten times the step settles in far fewer steps; nothing erodes, nothing to wait for.
        let g = grid(65, 65);
        assert!(settle_steps(g, Some(5e-6), 1.0, 0.5, 1.0, 5e5) < 10);
        assert_eq!(settle_steps(g, None, 1.0, 0.5, 1.0, 5e4), 0);
        assert_eq!(settle_steps(g, Some(0.0), 1.0, 0.5, 1.0, 5e4), 0);
        assert_eq!(settle_steps(g, Some(5e-6), 0.0, 0.5, 1.0, 5e4), 0);
    }

    #[test]
    fn restriction_keeps_linear_ramps_and_the_mean_of_constants() {
        // Full weighting is exact on linear functions away from the borders, and keeps a
        // constant everywhere (the weights are renormalised where clipped).
        for &(w, h, f) in &[(65usize, 33usize, 2usize), (129, 65, 4), (100, 37, 8)] {
            let fine = grid(w, h);
            let coarse = coarse_grid(fine, f).unwrap();
            let ramp: Vec<f32> = (0..fine.len())
                .map(|i| {
                    let (x, y) = fine.coords(i);
                    3.0 * x as f32 - 2.0 * y as f32 + 7.0
                })
                .collect();
            let r = restrict(&ramp, fine, coarse, f);
            for j in 1..coarse.height - 1 {
                for i in 1..coarse.width - 1 {
                    let (x, y) = (i * f, j * f);
                    if x + f > w || y + f > h {
                        continue;
                    }
                    let want = 3.0 * x as f32 - 2.0 * y as f32 + 7.0;
                    let got = r[j * coarse.width + i];
                    assert!((got - want).abs() < 1e-3, "({i}, {j}): {got} vs {want}");
                }
            }
            let c = restrict(&vec![4.25; fine.len()], fine, coarse, f);
            assert!(c.iter().all(|&v| (v - 4.25).abs() < 1e-6));
        }
    }

    #[test]
    fn prolongation_hits_coarse_nodes_and_keeps_ramps() {
        let coarse = grid(17, 9);
        let fine = grid(65, 33);
        let data: Vec<f32> = (0..coarse.len())
            .map(|i| {
                let (x, y) = coarse.coords(i);
                0.5 * x as f32 + 1.5 * y as f32
            })
            .collect();
        let up = prolong(&data, coarse, fine, 4);
        for (i, &v) in up.iter().enumerate() {
            let (x, y) = fine.coords(i);
            if x % 4 == 0 && y % 4 == 0 {
                assert_eq!(v, data[coarse.index(x / 4, y / 4)]);
            }
            // Cubics reproduce a ramp wherever their four taps are not clamped.
            if (4..60).contains(&x) && (4..28).contains(&y) {
                let want = 0.5 * x as f32 / 4.0 + 1.5 * y as f32 / 4.0;
                assert!((v - want).abs() < 1e-4, "({x}, {y}): {v} vs {want}");
            }
        }
    }

    #[test]
    fn prolongation_has_no_creases() {
        // A coarse bump: the slope of the interpolated surface changes smoothly across
        // coarse nodes (Catmull-Rom is C1), where bilinear jumps.
        let coarse = grid(9, 9);
        let fine = grid(33, 33);
        let data: Vec<f32> = (0..coarse.len())
            .map(|i| {
                let (x, y) = coarse.coords(i);
                let r2 = (x as f32 - 4.0).powi(2) + (y as f32 - 4.0).powi(2);
                10.0 * math::exp(-r2 / 6.0)
            })
            .collect();
        let up = prolong(&data, coarse, fine, 4);
        let row = 14;
        let slope = |x: usize| up[row * 33 + x + 1] - up[row * 33 + x];
        let max_jump = (5..27)
            .map(|x| (slope(x) - slope(x - 1)).abs())
            .fold(0.0f32, f32::max);
        let max_slope = (4..28).map(|x| slope(x).abs()).fold(0.0f32, f32::max);
        assert!(max_jump < 0.35 * max_slope, "{max_jump} vs {max_slope}");
    }

    #[test]
    fn directional_prolongation_keeps_nodes_and_ramps() {
        // Sizes that halve evenly and one that does not (the coarse grid reaches past it).
        for (w, h) in [(65usize, 33usize), (64, 30)] {
            let fine = grid(w, h);
            let coarse = coarse_grid(fine, 2).unwrap();
            let ramp = |x: f32, y: f32| 0.75 * x - 2.5 * y + 40.0;
            let data: Vec<f32> = (0..coarse.len())
                .map(|i| {
                    let (x, y) = coarse.coords(i);
                    ramp(x as f32, y as f32)
                })
                .collect();
            let up = prolong_directional(&data, coarse, fine);
            assert_eq!(up.len(), fine.len());
            for (i, &v) in up.iter().enumerate() {
                let (x, y) = fine.coords(i);
                if x % 2 == 0 && y % 2 == 0 {
                    assert_eq!(v, data[coarse.index(x / 2, y / 2)]);
                }
                // Every cubic is exact on a ramp where its taps are not clamped.
                if (8..w - 9).contains(&x) && (8..h - 9).contains(&y) {
                    let want = ramp(x as f32 / 2.0, y as f32 / 2.0);
                    assert!((v - want).abs() < 1e-3, "({x}, {y}): {v} vs {want}");
                }
            }
        }
    }

    #[test]
    fn directional_prolongation_keeps_a_diagonal_valley_floor() {
        // A straight V valley along the diagonal, 10 m up per coarse node off its floor,
        // falling 1 m per node along it: the floor's fine nodes (on the diagonal) must fall
        // steadily, as they do along an axis. Separable cubics (prolong) put a bump of
        // metres at each cell centre of the floor, which the water then leaves sideways.
        let coarse = grid(17, 17);
        let fine = grid(33, 33);
        let valley = |x: f32, y: f32| 10.0 * (x - y).abs() - 0.5 * (x + y);
        let data: Vec<f32> = (0..coarse.len())
            .map(|i| {
                let (x, y) = coarse.coords(i);
                valley(x as f32, y as f32)
            })
            .collect();
        let bump = |up: &[f32]| {
            (4..28)
                .map(|k| (up[fine.index(k, k)] - valley(k as f32 / 2.0, k as f32 / 2.0)).abs())
                .fold(0.0f32, f32::max)
        };
        let directional = bump(&prolong_directional(&data, coarse, fine));
        let separable = bump(&prolong(&data, coarse, fine, 2));
        assert!(directional < 0.05, "{directional} m off the floor");
        assert!(
            separable > 1.0,
            "{separable} m: the separable bump this guards against"
        );
        // Along the floor each fine step falls: no pit for the water to leave by an axis.
        let up = prolong_directional(&data, coarse, fine);
        assert!((4..28).all(|k| up[fine.index(k + 1, k + 1)] < up[fine.index(k, k)]));
    }

    #[test]
    fn warping_moves_heights_without_making_new_ones() {
        let g = grid(40, 30);
        let ramp = |x: f32, y: f32| 2.0 * x + 0.5 * y;
        let data: Vec<f32> = (0..g.len())
            .map(|i| {
                let (x, y) = g.coords(i);
                ramp(x as f32, y as f32)
            })
            .collect();
        let nx: Vec<f32> = (0..g.len()).map(|i| math::sin(i as f32 * 0.7)).collect();
        let ny: Vec<f32> = (0..g.len()).map(|i| math::cos(i as f32 * 1.3)).collect();
        let out = warp(&data, g, &nx, &ny, 0.8, 0.6);
        for (i, &v) in out.iter().enumerate() {
            let (x, y) = g.coords(i);
            // Each node reads the ramp where its displacement points.
            if (3..36).contains(&x) && (3..26).contains(&y) {
                let want = ramp(x as f32 + 0.8 * nx[i], y as f32 + 0.6 * ny[i]);
                assert!((v - want).abs() < 1e-3, "({x}, {y}): {v} vs {want}");
            }
        }
        // No displacement, no change.
        let zero = vec![0.0; g.len()];
        assert_eq!(warp(&data, g, &zero, &zero, 0.8, 0.6), data);
    }

    #[test]
    fn detail_restores_the_start_heights() {
        // prolong(coarser start) + detail is the level's own start, to rounding.
        let fine = grid(129, 97);
        let coarse = coarse_grid(fine, 2).unwrap();
        let start: Vec<f32> = (0..fine.len())
            .map(|i| (math::sin(i as f32 * 0.37) * 10.0).round() / 4.0)
            .collect();
        let coarser = restrict(&start, fine, coarse, 2);
        let d = detail(&start, fine, &coarser, coarse);
        let back = prolong_directional(&coarser, coarse, fine);
        for i in 0..fine.len() {
            assert!((back[i] + d[i] - start[i]).abs() < 1e-5);
        }
    }
}
