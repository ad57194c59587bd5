//! How a grid is cut into tiles: `nx × ny` rectangles of near-equal size, each with the
//! one-cell halo of neighbouring cells its stencils read.

use crate::error::{OrogenError, Result};
use crate::field::Grid;

pub use crate::field::Rect;

/// One tile: its rank (row-major over the tiles), its column and row among the tiles, the
/// cells it owns (`interior`) and those plus its one-cell halo, clipped to the grid (`halo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub rank: usize,
    pub col: usize,
    pub row: usize,
    pub interior: Rect,
    pub halo: Rect,
}

/// A grid cut into `nx × ny` tiles; tile column `c` holds columns `c·W/nx .. (c+1)·W/nx`
/// (integer division), rows likewise, so sizes differ by at most one cell.
#[derive(Clone, Debug, PartialEq)]
pub struct TileLayout {
    grid: Grid,
    xs: Vec<usize>,
    ys: Vec<usize>,
}

impl TileLayout {
    /// `nx × ny` tiles over `grid`: each count at least 1 and each tile at least 2 cells
    /// on a side (so no flow path can cross a tile in one step).
    pub fn new(grid: Grid, nx: usize, ny: usize) -> Result<Self> {
        for (field, count, side) in [("tiles.x", nx, grid.width), ("tiles.y", ny, grid.height)] {
            if count == 0 || count * 2 > side {
                return Err(OrogenError::invalid(
                    field,
                    format!(
                        "{count} tiles across {side} cells: each tile needs at least 2 cells \
                         (1 to {} tiles)",
                        side / 2
                    ),
                ));
            }
        }
        let cuts = |count: usize, side: usize| (0..=count).map(|k| k * side / count).collect();
        Ok(TileLayout {
            grid,
            xs: cuts(nx, grid.width),
            ys: cuts(ny, grid.height),
        })
    }

    /// Parses `"4x4"` (columns × rows) into a layout over `grid`; errors name `field`.
    pub fn parse(grid: Grid, spec: &str, field: &str) -> Result<Self> {
        let bad =
            || OrogenError::invalid(field, format!("`{spec}` is not COLUMNSxROWS (e.g. 4x4)"));
        let (a, b) = spec.split_once(['x', 'X']).ok_or_else(bad)?;
        let nx = a.trim().parse().map_err(|_| bad())?;
        let ny = b.trim().parse().map_err(|_| bad())?;
        TileLayout::new(grid, nx, ny)
    }

    /// The whole grid.
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// Tiles across (columns) and down (rows).
    pub fn shape(&self) -> (usize, usize) {
        (self.xs.len() - 1, self.ys.len() - 1)
    }

    /// Number of tiles (one rank each).
    pub fn count(&self) -> usize {
        let (nx, ny) = self.shape();
        nx * ny
    }

    /// Tile `rank` (row-major: rank = row·nx + col). Panics past [`TileLayout::count`].
    pub fn tile(&self, rank: usize) -> Tile {
        let (nx, _) = self.shape();
        Tile {
            rank,
            col: rank % nx,
            row: rank / nx,
            interior: self.interior(rank),
            halo: self.extended(rank, 1),
        }
    }

    /// The cells tile `rank` owns.
    fn interior(&self, rank: usize) -> Rect {
        let (nx, _) = self.shape();
        let (col, row) = (rank % nx, rank / nx);
        Rect {
            x0: self.xs[col],
            y0: self.ys[row],
            w: self.xs[col + 1] - self.xs[col],
            h: self.ys[row + 1] - self.ys[row],
        }
    }

    /// Tile `rank`'s interior grown by `radius` cells on every side, clipped to the grid:
    /// the cells a stencil of that radius reads.
    pub fn extended(&self, rank: usize, radius: usize) -> Rect {
        let r = self.interior(rank);
        let (x0, y0) = (r.x0.saturating_sub(radius), r.y0.saturating_sub(radius));
        let x1 = (r.x0 + r.w + radius).min(self.grid.width);
        let y1 = (r.y0 + r.h + radius).min(self.grid.height);
        Rect {
            x0,
            y0,
            w: x1 - x0,
            h: y1 - y0,
        }
    }

    /// The rank of the tile holding cell `(x, y)`.
    pub fn rank_of(&self, x: usize, y: usize) -> usize {
        let col = self.xs.partition_point(|&c| c <= x) - 1;
        let row = self.ys.partition_point(|&c| c <= y) - 1;
        row * (self.xs.len() - 1) + col
    }

    /// Tile `rank`'s part of a whole map (row-major over the grid), row-major over its
    /// interior. Errors name `what` when the map is not one value per cell.
    pub fn cut<T: Copy>(&self, rank: usize, map: &[T], what: &str) -> Result<Vec<T>> {
        if map.len() != self.grid.len() {
            return Err(OrogenError::invalid(
                what,
                format!(
                    "has {} values, the {}x{} grid has {}",
                    map.len(),
                    self.grid.width,
                    self.grid.height,
                    self.grid.len()
                ),
            ));
        }
        let r = self.tile(rank).interior;
        let w = self.grid.width;
        let mut out = Vec::with_capacity(r.len());
        for y in r.y0..r.y0 + r.h {
            out.extend_from_slice(&map[y * w + r.x0..y * w + r.x0 + r.w]);
        }
        Ok(out)
    }

    /// The whole map from every tile's part (in rank order, each row-major over its
    /// interior). Errors name `what` when a part has the wrong length.
    pub fn assemble<T: Copy + Default>(&self, parts: &[Vec<T>], what: &str) -> Result<Vec<T>> {
        if parts.len() != self.count() {
            return Err(OrogenError::invalid(
                what,
                format!("{} tile parts for {} tiles", parts.len(), self.count()),
            ));
        }
        let w = self.grid.width;
        let mut out = vec![T::default(); self.grid.len()];
        for (rank, part) in parts.iter().enumerate() {
            let r = self.tile(rank).interior;
            if part.len() != r.len() {
                return Err(OrogenError::invalid(
                    what,
                    format!(
                        "tile {rank} sent {} values for its {}x{} cells",
                        part.len(),
                        r.w,
                        r.h
                    ),
                ));
            }
            for (y, row) in (r.y0..r.y0 + r.h).zip(part.chunks_exact(r.w)) {
                out[y * w + r.x0..y * w + r.x0 + r.w].copy_from_slice(row);
            }
        }
        Ok(out)
    }
}

/// Copies `v` (row-major over `interior`) into `out` (row-major over `rect`, which holds it):
/// a tile's own cells laid into its window grown by a halo.
pub fn spread<T: Copy>(rect: &Rect, interior: Rect, v: &[T], out: &mut [T]) {
    for (y, row) in (interior.y0..).zip(v.chunks_exact(interior.w)) {
        let at = rect.index(interior.x0, y);
        out[at..at + interior.w].copy_from_slice(row);
    }
}

/// Checks that a tile's `what` has one value per cell of its `interior`; the error names
/// `field`, `what` and the tile's `rank`.
pub fn check_tile_len(
    field: &str,
    what: &str,
    rank: usize,
    interior: Rect,
    len: usize,
) -> Result<()> {
    if len != interior.len() {
        return Err(OrogenError::invalid(
            format!("{field} {what} (tile {rank})"),
            format!("{len} values for {}x{} cells", interior.w, interior.h),
        ));
    }
    Ok(())
}

/// The cells of `interior` out of `v` (row-major over `rect`, which holds it): [`spread`]'s
/// inverse, a tile's own cells from its window grown by a halo.
pub fn cut<T: Copy>(rect: &Rect, interior: Rect, v: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(interior.len());
    for y in interior.y0..interior.y0 + interior.h {
        let at = rect.index(interior.x0, y);
        out.extend_from_slice(&v[at..at + interior.w]);
    }
    out
}
