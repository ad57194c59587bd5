//! The node sets routing walks: anything with neighbours, distances, areas and an open boundary.
//!
//! Routing, lakes and accumulation are written once over [`Neighbourhood`], so the regular
//! grid ([`RasterGrid`]) and a later random-point stream graph (Cordonnier 2016 §4.1) share
//! them, as fastscapelib's grids share its flow operators.

use crate::field::Grid;

/// A set of nodes with neighbours: what flow routing needs to know about a grid or a graph.
pub trait Neighbourhood: Sync {
    /// Number of nodes (at most `u32::MAX - 1`).
    fn len(&self) -> usize;

    /// True when there is no node.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f(neighbour, distance)` for every neighbour of `node`, distance in metres,
    /// always in the same order.
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, f: F);

    /// True when `node` lies on an open boundary: water reaching it leaves the domain.
    fn is_open_boundary(&self, node: usize) -> bool;

    /// Horizontal area a node stands for, m² (a cell's area on a grid).
    fn node_area(&self, node: usize) -> f32;
}

/// A side of a rectangular grid (north is `y = 0`, west is `x = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Side {
    North,
    South,
    East,
    West,
}

/// A regular grid with its 8 neighbours at their true distances (`cell_size`, `√2·cell_size`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RasterGrid {
    grid: Grid,
    /// Open sides, indexed North, South, East, West.
    open: [bool; 4],
    diagonal: f32,
}

/// Neighbour offsets `(dx, dy)` in walking order: row above, same row, row below.
const OFFSETS: [(isize, isize); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

impl RasterGrid {
    /// The grid with the given sides open to outflow.
    pub fn new(grid: Grid, open_sides: &[Side]) -> Self {
        let mut open = [false; 4];
        for side in open_sides {
            open[*side as usize] = true;
        }
        RasterGrid {
            grid,
            open,
            diagonal: grid.cell_size * std::f32::consts::SQRT_2,
        }
    }

    /// The grid shape.
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// True when `side` is open.
    pub fn is_open(&self, side: Side) -> bool {
        self.open[side as usize]
    }

    #[inline]
    fn distance_of(&self, dx: isize, dy: isize) -> f32 {
        if dx != 0 && dy != 0 {
            self.diagonal
        } else {
            self.grid.cell_size
        }
    }
}

impl Neighbourhood for RasterGrid {
    #[inline]
    fn len(&self) -> usize {
        self.grid.len()
    }

    #[inline]
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, mut f: F) {
        let w = self.grid.width;
        let h = self.grid.height;
        let x = node % w;
        let y = node / w;
        if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
            // Interior: no bound checks.
            let c = self.grid.cell_size;
            let d = self.diagonal;
            let (n, wu) = (node, w);
            f((n - wu - 1) as u32, d);
            f((n - wu) as u32, c);
            f((n - wu + 1) as u32, d);
            f((n - 1) as u32, c);
            f((n + 1) as u32, c);
            f((n + wu - 1) as u32, d);
            f((n + wu) as u32, c);
            f((n + wu + 1) as u32, d);
            return;
        }
        for (dx, dy) in OFFSETS {
            let nx = x as isize + dx;
            let ny = y as isize + dy;
            if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                continue;
            }
            f(
                (ny as usize * w + nx as usize) as u32,
                self.distance_of(dx, dy),
            );
        }
    }

    #[inline]
    fn is_open_boundary(&self, node: usize) -> bool {
        let w = self.grid.width;
        let x = node % w;
        let y = node / w;
        (self.open[Side::North as usize] && y == 0)
            || (self.open[Side::South as usize] && y + 1 == self.grid.height)
            || (self.open[Side::East as usize] && x + 1 == w)
            || (self.open[Side::West as usize] && x == 0)
    }

    #[inline]
    fn node_area(&self, _node: usize) -> f32 {
        self.grid.cell_area()
    }
}
