//! Lakes as a renderer draws them: the lake depth map without the one- and two-cell pits
//! along rivers, which would bead every channel, and without the pools a river's channel
//! holds, which the river draws.

use crate::field::Grid;
use crate::world::{names, MapData, World};

/// Lakes smaller than this many cells are not drawn (the one- and two-cell pits along
/// rivers would bead every channel).
const MIN_DRAWN_LAKE_CELLS: usize = 4;

/// Water this deep or shallower is no lake, metres (as the shader's first shore level).
pub const LAKE_DEPTH_MIN: f32 = 0.05;

/// [`drawn_lakes`] of `world`'s `lake_depth` map with its `rivers` mask (when both are on
/// the world's grid); None without a lake depth map.
pub fn drawn_lakes_of(world: &World) -> Option<Vec<f32>> {
    let grid = world.grid();
    let depth = match world.maps.get(names::LAKE_DEPTH) {
        Some(MapData::Scalar(m)) if m.grid == grid => &m.data,
        _ => return None,
    };
    let rivers = match world.maps.get(names::RIVERS) {
        Some(MapData::Mask(m)) if m.grid == grid => Some(m.data.as_slice()),
        _ => None,
    };
    Some(drawn_lakes(grid, depth, rivers))
}

/// The lake depth map as drawn: lakes (4-connected cells deeper than `LAKE_DEPTH_MIN`) set
/// to 0 where they have fewer than `MIN_DRAWN_LAKE_CELLS` cells, or, with a `rivers` mask,
/// where every cell lies within a cell of a river cell (a pool the channel holds, as the
/// pits a carving router leaves down a steep canyon: drawn as flat water they were steps
/// of boxes down the canyon; the river's band draws them). The map itself is not changed.
pub fn drawn_lakes(grid: Grid, depth: &[f32], rivers: Option<&[u8]>) -> Vec<f32> {
    let rivers = rivers.filter(|r| r.len() == depth.len());
    let near_river = |i: usize| -> bool {
        let Some(r) = rivers else { return false };
        let (x, y) = ((i % grid.width) as i64, (i / grid.width) as i64);
        (-1..=1).any(|dy| {
            (-1..=1).any(|dx| {
                let (xx, yy) = (x + dx, y + dy);
                xx >= 0
                    && yy >= 0
                    && xx < grid.width as i64
                    && yy < grid.height as i64
                    && r[yy as usize * grid.width + xx as usize] != 0
            })
        })
    };
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
        if component.len() < MIN_DRAWN_LAKE_CELLS
            || (rivers.is_some() && component.iter().all(|&i| near_river(i)))
        {
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
        let drawn = drawn_lakes(grid, &depth, None);
        #[rustfmt::skip]
        let want = [
            0.0, 0.0, 0.0, 0.0, 1.0, 1.5,
            0.0, 0.0, 0.0, 0.0, 1.0, 0.7,
            0.0, 0.0, 0.0, 0.0, 0.0, 0.01,
        ];
        assert_eq!(drawn, want);
    }

    #[test]
    fn pools_a_river_holds_are_not_drawn_and_lakes_it_crosses_are() {
        // A river along row 3 of a 12×9 grid. A pool three cells wide and five long on it
        // goes (every cell within a cell of the river); a 5×5 lake it crosses stays, and so
        // does the pool without a river mask.
        let grid = Grid::new(12, 9, 1.0).unwrap();
        let (w, n) = (grid.width, grid.width * grid.height);
        let mut rivers = vec![0u8; n];
        for x in 0..w {
            rivers[3 * w + x] = 1;
        }
        let mut depth = vec![0.0f32; n];
        for y in 2..5 {
            for x in 0..5 {
                depth[y * w + x] = 1.0;
            }
        }
        for y in 1..6 {
            for x in 7..12 {
                depth[y * w + x] = 2.0;
            }
        }
        let drawn = drawn_lakes(grid, &depth, Some(&rivers));
        for i in 0..n {
            let want = if i % w >= 7 { depth[i] } else { 0.0 };
            assert_eq!(drawn[i], want, "cell ({}, {})", i % w, i / w);
        }
        assert_eq!(drawn_lakes(grid, &depth, None), depth);
        // A river mask of the wrong size is ignored.
        assert_eq!(drawn_lakes(grid, &depth, Some(&rivers[1..])), depth);
    }
}
