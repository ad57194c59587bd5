//! Point sets to build graphs on.

use glam::DVec2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::graph::alloc;
use crate::error::{check_positive, OrogenError, Result};

/// `nx × ny` points on a square lattice of `spacing` metres, each moved by a uniform random
/// offset of up to `jitter_fraction · spacing` metres in x and in y, deterministic from
/// `seed`. Point `(i, j)` has index `j · nx + i` and starts at `(i · spacing, j · spacing)`.
///
/// Points on the left and right columns keep their x, those on the top and bottom rows keep
/// their y (corners do not move), so with `jitter_fraction < 0.5` the convex hull is the
/// rectangle `[0, (nx − 1)·spacing] × [0, (ny − 1)·spacing]`, of area [`domain_area`], and
/// every point stays strictly nearer its own lattice site than any other's.
///
/// Errors when `nx` or `ny` is below 2, `nx · ny` reaches `u32::MAX`, `spacing` is not
/// finite and > 0, `jitter_fraction` is not in `[0, 0.5)`, or memory runs out.
pub fn jittered_grid(
    nx: usize,
    ny: usize,
    spacing: f64,
    jitter_fraction: f64,
    seed: u64,
) -> Result<Vec<DVec2>> {
    if nx < 2 || ny < 2 {
        return Err(OrogenError::invalid(
            "nx, ny",
            format!("a jittered grid needs at least 2×2 points, got {nx}×{ny}"),
        ));
    }
    let n = nx
        .checked_mul(ny)
        .filter(|&n| n < u32::MAX as usize)
        .ok_or_else(|| {
            OrogenError::invalid(
                "nx, ny",
                format!("{nx}×{ny} points, at most {} allowed", u32::MAX - 1),
            )
        })?;
    check_positive("spacing", spacing)?;
    if !(jitter_fraction.is_finite() && (0.0..0.5).contains(&jitter_fraction)) {
        return Err(OrogenError::invalid(
            "jitter_fraction",
            format!("must be within [0, 0.5), got {jitter_fraction}"),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut points: Vec<DVec2> = alloc(n, "jittered grid points")?;
    for j in 0..ny {
        for i in 0..nx {
            // Two draws per point, always, so a point's offset depends only on its index.
            let jx = (2.0 * rng.random::<f64>() - 1.0) * jitter_fraction;
            let jy = (2.0 * rng.random::<f64>() - 1.0) * jitter_fraction;
            let jx = if i == 0 || i + 1 == nx { 0.0 } else { jx };
            let jy = if j == 0 || j + 1 == ny { 0.0 } else { jy };
            points.push(DVec2::new(
                (i as f64 + jx) * spacing,
                (j as f64 + jy) * spacing,
            ));
        }
    }
    Ok(points)
}

/// Area of the rectangle a [`jittered_grid`] of `nx × ny` points at `spacing` metres spans,
/// m²: `(nx − 1)(ny − 1)·spacing²` (0 when `nx` or `ny` is below 2).
pub fn domain_area(nx: usize, ny: usize, spacing: f64) -> f64 {
    if nx < 2 || ny < 2 {
        return 0.0;
    }
    (nx - 1) as f64 * (ny - 1) as f64 * spacing * spacing
}

/// Most points [`poisson_disc`] can return for a `width × height` m rectangle at `spacing`
/// m: discs of radius `spacing / 2` around the points do not overlap and lie within the
/// rectangle grown by `spacing / 2`, and no packing of equal discs covers more than
/// π/√12 of the plane, so `n ≤ (W + s)(H + s) / (s²·√3/2)`. Counted in f64 so a size that
/// would not fit in memory is refused before anything is allocated.
pub fn poisson_disc_max_points(width: f64, height: f64, spacing: f64) -> f64 {
    (width + spacing) * (height + spacing) / (spacing * spacing * 3f64.sqrt() / 2.0)
}

/// Candidates tried around each active point before it retires ([`poisson_disc`]).
const POISSON_TRIES: usize = 30;

/// Poisson-disc points in the rectangle `[0, width] × [0, height]` metres, no two closer
/// than `spacing` metres, deterministic from `seed` (Bridson 2007, "Fast Poisson disk
/// sampling in arbitrary dimensions": candidates uniform in the annulus from `spacing` to
/// twice it, the oldest active point first).
///
/// The rectangle's sides are sampled first, at the largest even step not below `spacing`
/// (corners included), so the convex hull of the points is the rectangle itself and its
/// area is `width · height`. The points come out in row-major order of cells of
/// `spacing/√2` (near in the plane, near in memory).
///
/// Errors when `width` or `height` is not finite and > 0, `spacing` is not finite and > 0
/// or exceeds half the shorter side (no point inside), when [`poisson_disc_max_points`]
/// reaches `u32::MAX`, or when memory runs out.
pub fn poisson_disc(width: f64, height: f64, spacing: f64, seed: u64) -> Result<Vec<DVec2>> {
    check_positive("width", width)?;
    check_positive("height", height)?;
    check_positive("spacing", spacing)?;
    if spacing > 0.5 * width.min(height) {
        return Err(OrogenError::invalid(
            "spacing",
            format!(
                "{spacing} m leaves no node inside the {width} × {height} m domain; at most \
                 half the shorter side ({} m)",
                0.5 * width.min(height)
            ),
        ));
    }
    let max = poisson_disc_max_points(width, height, spacing);
    if max.is_nan() || max >= (u32::MAX - 1) as f64 {
        return Err(OrogenError::invalid(
            "spacing",
            format!(
                "{spacing} m over {width} × {height} m makes up to {max:.3e} nodes, more than \
                 the {} a graph holds",
                u32::MAX - 1
            ),
        ));
    }
    // Cells of spacing/√2 hold at most one point each.
    let cell = spacing / std::f64::consts::SQRT_2;
    let gw = (width / cell).floor() as usize + 1;
    let gh = (height / cell).floor() as usize + 1;
    let cells = gw
        .checked_mul(gh)
        .ok_or_else(|| OrogenError::invalid("spacing", "too many background cells"))?;
    let mut grid: Vec<u32> = alloc(cells, "Poisson background grid")?;
    grid.resize(cells, u32::MAX);
    let mut points: Vec<DVec2> = alloc((max as usize).min(1 << 20), "Poisson points")?;
    let cell_of = |p: DVec2| -> usize {
        let cx = ((p.x / cell) as usize).min(gw - 1);
        let cy = ((p.y / cell) as usize).min(gh - 1);
        cy * gw + cx
    };

    // The sides, counter-clockwise from (0, 0): steps of length/⌊length/spacing⌋ ≥ spacing.
    let steps = |len: f64| ((len / spacing).floor() as usize).max(1);
    let (sx, sy) = (steps(width), steps(height));
    let corners = [
        DVec2::ZERO,
        DVec2::new(width, 0.0),
        DVec2::new(width, height),
        DVec2::new(0.0, height),
    ];
    for (side, n) in [sx, sy, sx, sy].into_iter().enumerate() {
        let (a, b) = (corners[side], corners[(side + 1) % 4]);
        for k in 0..n {
            let t = k as f64 / n as f64;
            let p = if k == 0 { a } else { a + (b - a) * t };
            let c = cell_of(p);
            // Side points are ≥ spacing apart, so each has its own cell.
            debug_assert_eq!(grid[c], u32::MAX);
            grid[c] = points.len() as u32;
            points.push(p);
        }
    }

    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // The oldest active point goes first: the front sweeps the domain like a wave, so the
    // grid cells it reads stay in cache (a random pick, as in Bridson's paper, reads all
    // over memory and runs 3× slower for the same density).
    let mut active: std::collections::VecDeque<u32> = (0..points.len() as u32).collect();
    let r2 = spacing * spacing;
    while let Some(&front) = active.front() {
        let p = points[front as usize];
        let mut placed = false;
        for _ in 0..POISSON_TRIES {
            // Uniform in the annulus [r, 2r] (by area), at a uniform angle: candidates on
            // one circle at even turns (Roberts) pack faster but in patches of a hexagonal
            // lattice, whose six directions the flow then prefers.
            let t: f64 = rng.random();
            let rho = spacing * (1.0 + 3.0 * t).sqrt();
            let q = p + rho * DVec2::from_angle(rng.random::<f64>() * std::f64::consts::TAU);
            // Strictly inside: the sides are already sampled.
            if !(q.x > 0.0 && q.x < width && q.y > 0.0 && q.y < height) {
                continue;
            }
            let cx = ((q.x / cell) as usize).min(gw - 1);
            let cy = ((q.y / cell) as usize).min(gh - 1);
            let mut free = true;
            'search: for y in cy.saturating_sub(2)..(cy + 3).min(gh) {
                let row = &grid[y * gw..(y + 1) * gw];
                for &o in &row[cx.saturating_sub(2)..(cx + 3).min(gw)] {
                    if o != u32::MAX && points[o as usize].distance_squared(q) < r2 {
                        free = false;
                        break 'search;
                    }
                }
            }
            if free {
                grid[cy * gw + cx] = points.len() as u32;
                if points.len() == points.capacity() {
                    points.try_reserve(points.len()).map_err(|_| {
                        OrogenError::invalid("spacing", "cannot allocate the Poisson points")
                    })?;
                }
                active.push_back(points.len() as u32);
                points.push(q);
                placed = true;
                break;
            }
        }
        if !placed {
            active.pop_front();
        }
    }
    drop(active);
    // Row-major order of the background cells: neighbours in the plane are near in memory,
    // which the flow routing over the graph reads faster.
    let mut ordered: Vec<DVec2> = alloc(points.len(), "Poisson points")?;
    ordered.extend(
        grid.iter()
            .filter(|&&o| o != u32::MAX)
            .map(|&o| points[o as usize]),
    );
    Ok(ordered)
}
