//! The open border's ring when the stages are done (issue #37: no walls at the map's edge).
//!
//! An open border's cells are outlets: `StreamPower` holds them at their start heights (the
//! base level) and `Hydraulic` holds their beds (so its outflow cannot dig a trench without
//! end). The ground inside erodes on, so the ring ends up standing over it: a one-cell rim
//! round the map and a dam across every channel that reaches the edge. `large`'s sea showed
//! the rim as a straight pale line of shallows along the map's border (border cells at +5 to
//! +17 m over ground at -18 m inside), and `rills` as a wall at the end of every rill (its
//! beds 1.2 m under the held border row).
//!
//! [`settle`] lowers each cell of the ring on an open side to the ground just inside it
//! where the ring stands higher (never raises one), so channels run out of the map and the
//! edge continues the ground inside. The hydrology maps stay true: an outlet holds no lake,
//! so a lowered cell's water surface is its new height and its lake depth 0. Nodata cells
//! keep their fixed height.

use crate::eroders::hydraulic::Borders;
use crate::error::Result;
use crate::neighbourhood::raster::Side;
use crate::stages::list::{Process, Stage};
use crate::world::{names, MapData, World};

/// The sides a recipe's stages hold as outlets: a `StreamPower`'s `outlets.borders`, and
/// every side under a `Hydraulic` with `borders: Open` (in a `TimeLoop` too), indexed
/// North, South, East, West.
pub fn held_sides(stages: &[Stage]) -> [bool; 4] {
    let mut sides = [false; 4];
    let mut stream_power = |borders: &[Side]| {
        for s in borders {
            sides[side_index(*s)] = true;
        }
    };
    let mut hydraulic_open = false;
    for stage in stages {
        match stage {
            Stage::StreamPower(p) => stream_power(&p.outlets.borders),
            Stage::Hydraulic(p) => hydraulic_open |= p.borders == Borders::Open,
            Stage::TimeLoop(l) => {
                for p in &l.processes {
                    match p {
                        Process::StreamPower(p) => stream_power(&p.outlets.borders),
                        Process::Hydraulic(p) => hydraulic_open |= p.borders == Borders::Open,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if hydraulic_open {
        sides = [true; 4];
    }
    sides
}

fn side_index(s: Side) -> usize {
    match s {
        Side::North => 0,
        Side::South => 1,
        Side::East => 2,
        Side::West => 3,
    }
}

/// Lowers the ring of cells on the `sides` (North, South, East, West) that stand over the
/// ground just inside them (the cell one step in, diagonally at a corner) to that ground's
/// height, on a grid world of at least 3 × 3 cells (a Graph domain, or a smaller grid, is
/// left as it is), and puts the water surface of every ring cell on those sides back on
/// the ground (an outlet holds no lake). Returns how many cells it lowered.
pub fn settle(world: &mut World, sides: [bool; 4]) -> Result<usize> {
    if world.graph.is_some() || !sides.iter().any(|&s| s) {
        return Ok(0);
    }
    let grid = world.grid();
    let (w, h) = (grid.width, grid.height);
    let keep = world.nodata_mask();
    let mut heights = world.height.data.clone();
    let lowered = settle_window(&mut heights, [0, 0, w, h], (w, h), sides, keep.as_deref());
    if lowered > 0 {
        world.terrain_mut().set_surface(&heights);
    }
    // (`heights` is the surface now: `set_surface` sets it exactly.)
    let mut fixed = Vec::new();
    if let Some(MapData::Scalar(m)) = world.maps.get_mut(names::WATER_SURFACE) {
        if m.grid == grid {
            fixed = settle_maps(&mut m.data, None, &heights, [0, 0, w, h], (w, h), sides);
        }
    }
    if let Some(MapData::Scalar(m)) = world.maps.get_mut(names::LAKE_DEPTH) {
        if m.grid == grid {
            for &i in &fixed {
                m.data[i] = 0.0;
            }
        }
    }
    Ok(lowered)
}

/// Whether the cell `(x, y)` of a `width`×`height` map lies on one of the `sides`.
fn on_ring(x: usize, y: usize, (width, height): (usize, usize), sides: [bool; 4]) -> bool {
    let [north, south, east, west] = sides;
    (y == 0 && north) || (y + 1 == height && south) || (x + 1 == width && east) || (x == 0 && west)
}

/// [`settle`]'s heights over the window `[x0, y0, w, h]` of a `width`×`height` map (a tile
/// of a tiled run: its own cells, row by row; the ground just inside a ring cell lies in
/// the same tile unless the tile is one cell across, where the cell is kept). `keep` (the
/// window's nodata mask) keeps cells. Returns how many cells it lowered.
pub fn settle_window(
    heights: &mut [f32],
    [x0, y0, w, h]: [usize; 4],
    (width, height): (usize, usize),
    sides: [bool; 4],
    keep: Option<&[bool]>,
) -> usize {
    if width < 3 || height < 3 || !sides.iter().any(|&s| s) {
        return 0;
    }
    let mut lowered = 0;
    for y in y0..y0 + h {
        for x in x0..x0 + w {
            if !on_ring(x, y, (width, height), sides) {
                continue;
            }
            let (ix, iy) = (x.clamp(1, width - 2), y.clamp(1, height - 2));
            if !(x0..x0 + w).contains(&ix) || !(y0..y0 + h).contains(&iy) {
                continue;
            }
            let i = (y - y0) * w + (x - x0);
            let inner = (iy - y0) * w + (ix - x0);
            if keep.is_some_and(|k| k[i] || k[inner]) {
                continue;
            }
            // (Read from the ring cell's inner neighbour, which is never itself a ring cell
            // of a map 3 cells across or more, so the order of the walk does not matter.)
            let ground = heights[inner];
            if ground < heights[i] {
                heights[i] = ground;
                lowered += 1;
            }
        }
    }
    lowered
}

/// Puts the water surface of the ring cells of `sides` in the window back on the ground
/// where it lies over it (an outlet holds no lake), and their lake depth to 0; returns
/// those cells (indices in the window).
pub fn settle_maps(
    water_surface: &mut [f32],
    mut lake_depth: Option<&mut [f32]>,
    heights: &[f32],
    [x0, y0, w, h]: [usize; 4],
    map: (usize, usize),
    sides: [bool; 4],
) -> Vec<usize> {
    let mut fixed = Vec::new();
    for y in y0..y0 + h {
        for x in x0..x0 + w {
            if !on_ring(x, y, map, sides) {
                continue;
            }
            let i = (y - y0) * w + (x - x0);
            if water_surface[i] > heights[i] {
                water_surface[i] = heights[i];
                if let Some(d) = lake_depth.as_deref_mut() {
                    d[i] = 0.0;
                }
                fixed.push(i);
            }
        }
    }
    fixed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rim: every ring cell 5 m over its inner neighbour on the open sides, some ring
    /// cells below it; the water surface over the ring where it was lowered.
    #[test]
    fn the_ring_comes_down_to_the_ground_inside_it_and_no_further() {
        let (w, h) = (9usize, 7usize);
        let ground = |x: usize, y: usize| (x * 3 + y * 5) as f32 * 0.1;
        let mut heights: Vec<f32> = (0..w * h).map(|i| ground(i % w, i / w)).collect();
        for y in 0..h {
            for x in 0..w {
                if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                    let (ix, iy) = (x.clamp(1, w - 2), y.clamp(1, h - 2));
                    // Above the ground inside on even cells, below it on odd ones.
                    let d = if (x + y) % 2 == 0 { 5.0 } else { -1.0 };
                    heights[y * w + x] = ground(ix, iy) + d;
                }
            }
        }
        // North and West held (a StreamPower's outlets), South and East not.
        let sides = [true, false, false, true];
        let mut settled = heights.clone();
        let n = settle_window(&mut settled, [0, 0, w, h], (w, h), sides, None);
        let mut expected = 0;
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let (ix, iy) = (x.clamp(1, w - 2), y.clamp(1, h - 2));
                let inner = heights[iy * w + ix];
                if (y == 0 || x == 0) && heights[i] > inner {
                    assert_eq!(settled[i], inner, "({x}, {y})");
                    expected += 1;
                } else {
                    assert_eq!(settled[i], heights[i], "({x}, {y}) moved");
                }
            }
        }
        assert_eq!(n, expected);
        assert!(n > 0);
        // Settling again changes nothing.
        let again = settled.clone();
        assert_eq!(
            settle_window(&mut settled, [0, 0, w, h], (w, h), sides, None),
            0
        );
        assert_eq!(settled, again);
        // Tiles of 5 × 4 and the rest settle to the whole map's bytes.
        let mut tiled = heights.clone();
        for (x0, y0, tw, th) in [(0, 0, 5, 4), (5, 0, 4, 4), (0, 4, 5, 3), (5, 4, 4, 3)] {
            let mut tile: Vec<f32> = (0..tw * th)
                .map(|i| heights[(y0 + i / tw) * w + x0 + i % tw])
                .collect();
            settle_window(&mut tile, [x0, y0, tw, th], (w, h), sides, None);
            for (i, v) in tile.into_iter().enumerate() {
                tiled[(y0 + i / tw) * w + x0 + i % tw] = v;
            }
        }
        assert_eq!(tiled, settled);
        // The water surface of a lowered outlet is its ground, with no lake.
        let mut surface: Vec<f32> = heights.clone();
        let mut depth = vec![0.0f32; w * h];
        settle_maps(
            &mut surface,
            Some(&mut depth),
            &settled,
            [0, 0, w, h],
            (w, h),
            sides,
        );
        assert_eq!(surface, settled);
        assert!(depth.iter().all(|&d| d == 0.0));
    }

    #[test]
    fn the_held_sides_come_from_stream_power_outlets_and_an_open_hydraulic() {
        let r = |stages: &str| {
            crate::Recipe::from_ron_str(&format!("(size: (9, 9), cell_size: 10.0, seed: 1, terrain: Flat(0.0), stages: [{stages}])"), "t")
                .unwrap()
                .stages
        };
        assert_eq!(held_sides(&r("Hydrology()")), [false; 4]);
        assert_eq!(held_sides(&r("StreamPower()")), [true; 4]);
        assert_eq!(
            held_sides(&r("StreamPower(outlets: (borders: [South, West]))")),
            [false, true, false, true]
        );
        assert_eq!(held_sides(&r("Hydraulic(borders: Closed)")), [false; 4]);
        assert_eq!(
            held_sides(&r(
                "TimeLoop(processes: [Thermal(), Hydraulic(borders: Open)])"
            )),
            [true; 4]
        );
    }
}
