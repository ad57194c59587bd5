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
