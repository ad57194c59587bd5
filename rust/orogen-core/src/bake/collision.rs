//! A terrain's collision as a physics engine takes it (Godot's `HeightMapShape3D`): one
//! uniform spacing, heights stored divided by it, and the terrain cut into regions so that
//! each is a quick update.
//!
//! A shape has one spacing and a non-uniformly scaled one is not supported, so the
//! collision of a non-square grid (a DEM in geographic coordinates) is resampled to square
//! cells of the smaller spacing; its edge may fall up to half a cell short of the drawn
//! terrain's.

use crate::field::Heightfield;

/// Samples per side of a collision region, less one: regions share their edge samples.
/// A 1025² terrain gets 16 regions, each a quick `set_map_data`.
pub const COLLISION_REGION_QUADS: usize = 256;

/// One `HeightMapShape3D` of the collision: `width × depth` samples (heights divided by the
/// spacing) centred `centre` samples (x, z) from the terrain's centre.
#[derive(Debug, Default)]
pub struct CollisionRegion {
    /// Samples along x.
    pub width: usize,
    /// Samples along z.
    pub depth: usize,
    /// The region's centre from the terrain's centre, in samples (x, z).
    pub centre: (f32, f32),
    /// Row-major heights, divided by the spacing.
    pub heights: Vec<f32>,
}

/// The collision samples of `height` (see [`collision_samples`]) as regions of at most
/// `COLLISION_REGION_QUADS + 1` samples a side, and their spacing, metres.
pub fn collision_regions(height: &Heightfield) -> (f32, Vec<CollisionRegion>) {
    let c = collision_samples(height);
    // First sample and sample count of each region along an axis of `n ≥ 2` samples.
    let starts = |n: usize| -> Vec<(usize, usize)> {
        (0..n.saturating_sub(1))
            .step_by(COLLISION_REGION_QUADS)
            .map(|s| (s, COLLISION_REGION_QUADS.min(n - 1 - s) + 1))
            .collect()
    };
    let mut regions = Vec::new();
    for &(j0, d) in &starts(c.depth) {
        for &(i0, w) in &starts(c.width) {
            let mut heights = Vec::with_capacity(w * d);
            for j in j0..j0 + d {
                heights.extend_from_slice(&c.heights[j * c.width + i0..j * c.width + i0 + w]);
            }
            regions.push(CollisionRegion {
                width: w,
                depth: d,
                centre: (
                    i0 as f32 + (w - 1) as f32 * 0.5 - (c.width - 1) as f32 * 0.5,
                    j0 as f32 + (d - 1) as f32 * 0.5 - (c.depth - 1) as f32 * 0.5,
                ),
                heights,
            });
        }
    }
    (c.spacing, regions)
}

/// The samples of the terrain's `HeightMapShape3D`, which puts sample `(i, j)` at
/// `(i - (w-1)/2, h, j - (d-1)/2)` and is scaled uniformly by `spacing`: heights are stored
/// divided by it.
struct CollisionSamples {
    width: usize,
    depth: usize,
    spacing: f32,
    heights: Vec<f32>,
}

/// The collision samples of `height`: its own cells when they are square; otherwise a
/// square grid of the smaller spacing over the same extent (rounded to whole cells, so its
/// edge may fall up to half a cell short or long), sampled bilinearly, centred like it.
fn collision_samples(height: &Heightfield) -> CollisionSamples {
    let grid = height.grid;
    let (dx, dy) = (grid.dx(), grid.dy());
    if dx == dy {
        return CollisionSamples {
            width: grid.width,
            depth: grid.height,
            spacing: dx,
            heights: height.data.iter().map(|&h| h / dx).collect(),
        };
    }
    let s = dx.min(dy);
    let count =
        |cells: usize, d: f32| ((cells - 1) as f64 * d as f64 / s as f64).round() as usize + 1;
    let (w, d) = (count(grid.width, dx), count(grid.height, dy));
    let mut heights = Vec::with_capacity(w * d);
    for j in 0..d {
        let z = (j as f32 - (d - 1) as f32 * 0.5) * s;
        let fy = z / dy + (grid.height - 1) as f32 * 0.5;
        for i in 0..w {
            let x = (i as f32 - (w - 1) as f32 * 0.5) * s;
            let fx = x / dx + (grid.width - 1) as f32 * 0.5;
            heights.push(height.sample_bilinear(fx, fy) / s);
        }
    }
    CollisionSamples {
        width: w,
        depth: d,
        spacing: s,
        heights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Grid;
    use crate::math;

    /// A plane over non-square cells: the collision samples lie on the same plane wherever
    /// they fall inside the terrain, cover its extent to half a sample, and square cells
    /// are passed through.
    #[test]
    fn collision_of_non_square_cells_is_the_same_surface() {
        let (a, b) = (0.3f32, -0.7f32);
        for (w, h, dx, dy) in [
            (11, 7, 3.0f32, 5.0f32),
            (9, 13, 92.5, 74.6),
            (5, 5, 2.0, 2.0),
        ] {
            let grid = Grid::with_cells(w, h, dx, dy).unwrap();
            let data = (0..grid.len())
                .map(|n| {
                    let (i, j) = grid.coords(n);
                    let x = (i as f32 - (w - 1) as f32 * 0.5) * dx;
                    let z = (j as f32 - (h - 1) as f32 * 0.5) * dy;
                    a * x + b * z + 100.0
                })
                .collect();
            let field = Heightfield::from_vec(grid, data, "plane").unwrap();
            let c = collision_samples(&field);
            assert_eq!(c.spacing, dx.min(dy));
            assert_eq!(c.heights.len(), c.width * c.depth);
            let (ex, ez) = ((w - 1) as f32 * dx, (h - 1) as f32 * dy);
            let (cx, cz) = (
                (c.width - 1) as f32 * c.spacing,
                (c.depth - 1) as f32 * c.spacing,
            );
            assert!(
                (ex - cx).abs() <= 0.5 * c.spacing + 1e-3,
                "x extent {ex} vs {cx}"
            );
            assert!(
                (ez - cz).abs() <= 0.5 * c.spacing + 1e-3,
                "z extent {ez} vs {cz}"
            );
            for j in 0..c.depth {
                for i in 0..c.width {
                    let x = (i as f32 - (c.width - 1) as f32 * 0.5) * c.spacing;
                    let z = (j as f32 - (c.depth - 1) as f32 * 0.5) * c.spacing;
                    if x.abs() > ex * 0.5 || z.abs() > ez * 0.5 {
                        continue; // past the edge: clamped, not on the plane
                    }
                    let got = c.heights[j * c.width + i] * c.spacing;
                    let want = a * x + b * z + 100.0;
                    assert!((got - want).abs() < 1e-3, "({i}, {j}): {got} vs {want}");
                }
            }
            if dx == dy {
                assert_eq!((c.width, c.depth), (w, h));
            }
        }
    }

    /// Every collision sample, at its position in the terrain's centred frame, equals the
    /// region samples that land there; regions are at most `COLLISION_REGION_QUADS + 1` a
    /// side, share their edge samples, and hold every quad exactly once.
    #[test]
    fn collision_regions_tile_the_samples_exactly() {
        for (w, h) in [(2, 2), (3, 700), (257, 257), (258, 513), (1025, 300)] {
            let grid = Grid::new(w, h, 2.0).unwrap();
            let data = (0..grid.len())
                .map(|n| math::sin(n as f32 * 0.37) * 50.0)
                .collect();
            let field = Heightfield::from_vec(grid, data, "noise").unwrap();
            let whole = collision_samples(&field);
            let (spacing, regions) = collision_regions(&field);
            assert_eq!(spacing, whole.spacing);
            let mut quads = vec![0u32; (w - 1) * (h - 1)];
            for r in &regions {
                assert!(r.width >= 2 && r.depth >= 2);
                assert!(
                    r.width <= COLLISION_REGION_QUADS + 1 && r.depth <= COLLISION_REGION_QUADS + 1
                );
                assert_eq!(r.heights.len(), r.width * r.depth);
                for j in 0..r.depth {
                    for i in 0..r.width {
                        // The sample's position from the terrain's centre, in samples.
                        let x = r.centre.0 + i as f32 - (r.width - 1) as f32 * 0.5;
                        let z = r.centre.1 + j as f32 - (r.depth - 1) as f32 * 0.5;
                        let gi = x + (w - 1) as f32 * 0.5;
                        let gj = z + (h - 1) as f32 * 0.5;
                        assert!(
                            gi.fract() == 0.0 && gj.fract() == 0.0,
                            "{w}x{h}: off-grid sample"
                        );
                        let n = gj as usize * w + gi as usize;
                        assert_eq!(r.heights[j * r.width + i], whole.heights[n]);
                        if i + 1 < r.width && j + 1 < r.depth {
                            quads[gj as usize * (w - 1) + gi as usize] += 1;
                        }
                    }
                }
            }
            assert!(
                quads.iter().all(|&k| k == 1),
                "{w}x{h}: a quad not in exactly one region"
            );
        }
    }
}
