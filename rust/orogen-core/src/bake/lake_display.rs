//! Lakes as a renderer draws them: the lake depth map without the one- and two-cell pits
//! along rivers, which would bead every channel.

use crate::field::Grid;

/// Lakes smaller than this many cells are not drawn (the one- and two-cell pits along
/// rivers would bead every channel).
const MIN_DRAWN_LAKE_CELLS: usize = 4;

/// Water this deep or shallower is no lake, metres (as the shader's first shore level).
pub const LAKE_DEPTH_MIN: f32 = 0.05;

/// The lake depth map as drawn: lakes (4-connected cells deeper than `LAKE_DEPTH_MIN`) of
/// fewer than `MIN_DRAWN_LAKE_CELLS` cells set to 0. The map itself is not changed.
pub fn drawn_lakes(grid: Grid, depth: &[f32]) -> Vec<f32> {
    let (w, h) = (grid.width, grid.height);
    let mut out = depth.to_vec();
    let mut seen = vec![false; depth.len()];
    let mut stack = Vec::new();
    let mut component = Vec::new();
    for start in 0..depth.len() {
        if seen[start] || depth[start] <= LAKE_DEPTH_MIN {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        component.clear();
        while let Some(i) = stack.pop() {
            component.push(i);
            let (x, y) = (i % w, i / w);
            let neighbours = [
                (x > 0).then(|| i - 1),
                (x + 1 < w).then(|| i + 1),
                (y > 0).then(|| i - w),
                (y + 1 < h).then(|| i + w),
            ];
            for j in neighbours.into_iter().flatten() {
                if !seen[j] && depth[j] > LAKE_DEPTH_MIN {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if component.len() < MIN_DRAWN_LAKE_CELLS {
            for &i in &component {
                out[i] = 0.0;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lakes_of_a_few_cells_are_not_drawn() {
        // A one-cell pit, a two-cell pit and a 2×2 lake on a 6×3 grid.
        let grid = Grid::new(6, 3, 1.0).unwrap();
        #[rustfmt::skip]
        let depth = [
            2.0, 0.0, 0.0, 0.0, 1.0, 1.5,
            0.0, 0.0, 0.5, 0.0, 1.0, 0.7,
            0.0, 0.0, 0.5, 0.0, 0.0, 0.01,
        ];
        let drawn = drawn_lakes(grid, &depth);
        #[rustfmt::skip]
        let want = [
            0.0, 0.0, 0.0, 0.0, 1.0, 1.5,
            0.0, 0.0, 0.0, 0.0, 1.0, 0.7,
            0.0, 0.0, 0.0, 0.0, 0.0, 0.01,
        ];
        assert_eq!(drawn, want);
    }
}
