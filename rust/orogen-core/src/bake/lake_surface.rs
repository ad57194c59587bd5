//! Lakes as a renderer draws them: the water surface as a mesh of its own over the cells,
//! so the terrain keeps its true heights under it and the shore is where the two surfaces
//! cross, within a cell, rather than a step or a wall round the lake's cells.
//!
//! Every lake cell is a vertex at its water level (ground + depth). The surface then goes
//! on over a ring of [`RING`] cells round the lake at the level of the lake beside it, so
//! it dips under the rising bank and the depth test cuts the shore at the sub-cell line
//! where water level minus ground is zero. Where that ring's ground lies below the level
//! (a lake's outlet, where the ground falls away), the surface stops at the lake's last
//! cells: a ramp down to the lower ground would stand above the terrain's triangles on a
//! steep drop, a wall of water. Each vertex also carries the ground height, so a shader can
//! fade the water in by depth and draw foam at the shore.

use crate::field::Grid;

/// Cells round a lake that its surface extends over (under the bank).
pub const RING: usize = 2;

/// The lakes' water surface (see the module): triangles over grid cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LakeSurface {
    /// Vertices in the terrain's local metres: x east and z south from the grid's middle,
    /// y the water level.
    pub positions: Vec<[f32; 3]>,
    /// The ground height under each vertex, metres.
    pub ground: Vec<f32>,
    /// Triangles, three vertex indices each, wound clockwise seen from above (Godot's front
    /// faces).
    pub indices: Vec<u32>,
}

/// The water surface of the lakes whose depth (metres, 0 outside lakes) is `depth` over the
/// heights `height` of `grid`. Cells with a depth of at most `min_depth` are dry.
pub fn lake_surface(grid: Grid, height: &[f32], depth: &[f32], min_depth: f32) -> LakeSurface {
    let (w, h) = (grid.width, grid.height);
    let n = w * h;
    assert_eq!(height.len(), n, "lake_surface: height has the grid's size");
    assert_eq!(depth.len(), n, "lake_surface: depth has the grid's size");
    let mut level = vec![f32::NAN; n];
    for i in 0..n {
        if depth[i] > min_depth && height[i].is_finite() && depth[i].is_finite() {
            level[i] = height[i] + depth[i];
        }
    }
    let mut out = LakeSurface::default();
    if level.iter().all(|l| l.is_nan()) {
        return out;
    }
    // The ring: each pass gives a dry cell the highest level among its 8 neighbours that
    // have one (the lake beside it).
    for _ in 0..RING {
        let before = level.clone();
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                if !before[i].is_nan() {
                    continue;
                }
                let mut best = f32::NAN;
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        let (xx, yy) = (x as i64 + dx, y as i64 + dy);
                        if xx < 0 || yy < 0 || xx >= w as i64 || yy >= h as i64 {
                            continue;
                        }
                        let l = before[yy as usize * w + xx as usize];
                        if !l.is_nan() && (best.is_nan() || l > best) {
                            best = l;
                        }
                    }
                }
                // A ring cell over higher ground keeps the lake's level (it dips under the
                // bank); one over lower ground stays dry and ends the surface.
                if !best.is_nan() && height[i].is_finite() && height[i] >= best {
                    level[i] = best;
                }
            }
        }
    }
    let (dx, dy) = (grid.dx(), grid.dy());
    let (cx, cy) = ((w - 1) as f32 * 0.5, (h - 1) as f32 * 0.5);
    let mut index = vec![u32::MAX; n];
    let mut vertex = |i: usize, out: &mut LakeSurface| -> u32 {
        if index[i] == u32::MAX {
            index[i] = out.positions.len() as u32;
            let (x, y) = (i % w, i / w);
            out.positions
                .push([(x as f32 - cx) * dx, level[i], (y as f32 - cy) * dy]);
            out.ground.push(height[i]);
        }
        index[i]
    };
    for y in 0..h.saturating_sub(1) {
        for x in 0..w.saturating_sub(1) {
            let a = y * w + x;
            let (b, c, d) = (a + 1, a + w, a + w + 1);
            if [a, b, c, d].iter().any(|&k| level[k].is_nan()) {
                continue;
            }
            // A quad that touches no lake cell lies wholly in the ring: under the ground
            // or at the level of a lake next to it, and nothing of it would show.
            if [a, b, c, d].iter().all(|&k| depth[k] <= min_depth) {
                continue;
            }
            let (ia, ib, ic, id) = (
                vertex(a, &mut out),
                vertex(b, &mut out),
                vertex(c, &mut out),
                vertex(d, &mut out),
            );
            // Clockwise seen from above (+y) with z pointing south: a, b, c and b, d, c.
            out.indices.extend_from_slice(&[ia, ib, ic, ib, id, ic]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bowl(w: usize, h: usize) -> (Grid, Vec<f32>) {
        let grid = Grid::new(w, h, 10.0).unwrap();
        let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
        let height = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32 - cx, (i / w) as f32 - cy);
                (x * x + y * y).sqrt() * 2.0
            })
            .collect();
        (grid, height)
    }

    #[test]
    fn no_lakes_no_mesh() {
        let (grid, height) = bowl(16, 16);
        let s = lake_surface(grid, &height, &vec![0.0; 256], 0.05);
        assert!(s.positions.is_empty() && s.indices.is_empty());
    }

    #[test]
    fn a_lake_is_flat_and_dips_under_its_banks() {
        let (grid, height) = bowl(32, 32);
        // Filled to 9 m: every cell below 9 m is lake.
        let depth: Vec<f32> = height.iter().map(|&z| (9.0 - z).max(0.0)).collect();
        let s = lake_surface(grid, &height, &depth, 0.05);
        assert!(!s.indices.is_empty());
        for (p, g) in s.positions.iter().zip(&s.ground) {
            // Every vertex is at the lake's level: the ring rises with the bank, so it
            // stays at 9 m and lies under the ground there.
            assert!((p[1] - 9.0).abs() < 1e-4, "vertex at {p:?}");
            assert!(*g > 9.0 - 1e-4 || depth_at(&s, p, &height, grid) > 0.0);
        }
        // The surface covers every lake cell's quad: the shore lies inside the mesh.
        let wet = depth.iter().filter(|&&d| d > 0.05).count();
        assert!(
            s.positions.len() > wet,
            "{} vertices, {wet} wet cells",
            s.positions.len()
        );
        // Triangles are Godot front faces seen from above: clockwise, so the y of
        // (b − a) × (c − a) is negative.
        for t in s.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|k| s.positions[t[k] as usize]);
            let (u, v) = ([b[0] - a[0], b[2] - a[2]], [c[0] - a[0], c[2] - a[2]]);
            assert!(u[1] * v[0] - u[0] * v[1] < 0.0, "triangle {t:?} faces down");
        }
    }

    fn depth_at(_s: &LakeSurface, p: &[f32; 3], height: &[f32], grid: Grid) -> f32 {
        let x = (p[0] / grid.dx() + (grid.width - 1) as f32 * 0.5).round() as usize;
        let y = (p[2] / grid.dy() + (grid.height - 1) as f32 * 0.5).round() as usize;
        p[1] - height[y * grid.width + x]
    }

    #[test]
    fn the_surface_stays_under_lower_ground_at_an_outlet() {
        // A lake at 5 m in a trough whose east end falls away to 0 m.
        let grid = Grid::new(12, 5, 10.0).unwrap();
        let height: Vec<f32> = (0..60)
            .map(|i| {
                let (x, y) = (i % 12, i / 12);
                if y == 0 || y == 4 {
                    20.0
                } else if x < 8 {
                    2.0
                } else {
                    5.0 - (x - 7) as f32 * 2.0
                }
            })
            .collect();
        let depth: Vec<f32> = (0..60)
            .map(|i| {
                let (x, y) = (i % 12, i / 12);
                if (1..4).contains(&y) && x < 8 {
                    3.0
                } else {
                    0.0
                }
            })
            .collect();
        let s = lake_surface(grid, &height, &depth, 0.05);
        assert!(!s.indices.is_empty());
        for (p, g) in s.positions.iter().zip(&s.ground) {
            // Every vertex is at the lake's level (5 m), over the lake's bed (2 m) or under
            // a bank; none stands over the falling ground past the outlet.
            assert!((p[1] - 5.0).abs() < 1e-4, "vertex {p:?}");
            assert!(*g == 2.0 || *g >= 5.0, "vertex {p:?} over ground {g}");
        }
        // The lake's cells are all covered: its east end (x = 7) is a vertex.
        assert!(s
            .positions
            .iter()
            .any(|p| (p[0] - (7.0 - 5.5) * 10.0).abs() < 1e-3));
    }
}
