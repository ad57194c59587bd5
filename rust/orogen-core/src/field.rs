//! The grid shape and the maps laid on it.
//!
//! Every map is row-major: cell `(x, y)` is at index `y * width + x`, `x` growing east
//! and `y` growing south (image order). Heights are metres, `cell_size` is metres.

use crate::error::{OrogenError, Result};

/// Largest accepted side, in cells (a 16385² terrain is 1 GiB of f32 heights).
pub const MAX_SIDE: usize = 16385;

/// The shape of a regular grid: cell counts and spacing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// Cells along x (columns).
    pub width: usize,
    /// Cells along y (rows).
    pub height: usize,
    /// Distance between neighbouring cell centres, metres.
    pub cell_size: f32,
}

impl Grid {
    /// A validated grid: each side in `1..=MAX_SIDE`, `cell_size` finite and > 0.
    pub fn new(width: usize, height: usize, cell_size: f32) -> Result<Self> {
        for (field, side) in [("size.0 (width)", width), ("size.1 (height)", height)] {
            if side == 0 || side > MAX_SIDE {
                return Err(OrogenError::invalid(
                    field,
                    format!("must be between 1 and {MAX_SIDE} cells, got {side}"),
                ));
            }
        }
        crate::error::check_positive("cell_size", cell_size as f64)?;
        Ok(Grid {
            width,
            height,
            cell_size,
        })
    }

    /// Number of cells.
    #[inline]
    pub fn len(&self) -> usize {
        self.width * self.height
    }

    /// True when the grid has no cell (never for a validated grid).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row-major index of `(x, y)`.
    #[inline]
    pub fn index(&self, x: usize, y: usize) -> usize {
        y * self.width + x
    }

    /// `(x, y)` of a row-major index.
    #[inline]
    pub fn coords(&self, i: usize) -> (usize, usize) {
        (i % self.width, i / self.width)
    }

    /// Area of one cell, m².
    #[inline]
    pub fn cell_area(&self) -> f32 {
        self.cell_size * self.cell_size
    }

    /// True for cells on the outer ring.
    #[inline]
    pub fn is_border(&self, x: usize, y: usize) -> bool {
        x == 0 || y == 0 || x + 1 == self.width || y + 1 == self.height
    }
}

/// Smallest and largest finite value of `data`, `(0, 0)` when none is finite.
pub fn finite_min_max(data: &[f32]) -> (f32, f32) {
    let mut lo = f32::INFINITY;
    let mut hi = f32::NEG_INFINITY;
    for &v in data {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if lo > hi {
        (0.0, 0.0)
    } else {
        (lo, hi)
    }
}

/// A map of `T` over a [`Grid`], row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Field<T> {
    pub grid: Grid,
    pub data: Vec<T>,
}

/// Heights in metres.
pub type Heightfield = Field<f32>;
/// Any scalar quantity (uplift m/yr, drainage m², depth m, …).
pub type ScalarMap = Field<f32>;
/// 0/1 (or 0/255) masks such as rivers.
pub type MaskMap = Field<u8>;
/// Integer labels such as basin ids.
pub type LabelMap = Field<u32>;

impl<T: Clone> Field<T> {
    /// A map with every cell set to `value`.
    pub fn filled(grid: Grid, value: T) -> Self {
        Field {
            grid,
            data: vec![value; grid.len()],
        }
    }
}

impl<T> Field<T> {
    /// Wraps `data`, checking its length against the grid.
    pub fn from_vec(grid: Grid, data: Vec<T>, what: &str) -> Result<Self> {
        if data.len() != grid.len() {
            return Err(OrogenError::invalid(
                what,
                format!(
                    "has {} values, the {}x{} grid needs {}",
                    data.len(),
                    grid.width,
                    grid.height,
                    grid.len()
                ),
            ));
        }
        Ok(Field { grid, data })
    }

    /// Width in cells.
    #[inline]
    pub fn width(&self) -> usize {
        self.grid.width
    }

    /// Height in cells.
    #[inline]
    pub fn height(&self) -> usize {
        self.grid.height
    }

    /// The value at `(x, y)`.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> &T {
        &self.data[self.grid.index(x, y)]
    }

    /// Mutable value at `(x, y)`.
    #[inline]
    pub fn get_mut(&mut self, x: usize, y: usize) -> &mut T {
        let i = self.grid.index(x, y);
        &mut self.data[i]
    }
}

impl Field<f32> {
    /// Smallest and largest finite value (`(0, 0)` when none is finite).
    pub fn min_max(&self) -> (f32, f32) {
        finite_min_max(&self.data)
    }

    /// Bilinear sample at continuous cell coordinates, clamped to the grid.
    pub fn sample_bilinear(&self, fx: f32, fy: f32) -> f32 {
        let w = self.grid.width;
        let h = self.grid.height;
        let fx = fx.clamp(0.0, (w - 1) as f32);
        let fy = fy.clamp(0.0, (h - 1) as f32);
        let x0 = fx.floor() as usize;
        let y0 = fy.floor() as usize;
        let x1 = (x0 + 1).min(w - 1);
        let y1 = (y0 + 1).min(h - 1);
        let tx = fx - x0 as f32;
        let ty = fy - y0 as f32;
        let a = self.data[y0 * w + x0] * (1.0 - tx) + self.data[y0 * w + x1] * tx;
        let b = self.data[y1 * w + x0] * (1.0 - tx) + self.data[y1 * w + x1] * tx;
        a * (1.0 - ty) + b * ty
    }

    /// Bilinear resample to another grid shape (corner-aligned). Identity when shapes match.
    pub fn resampled(&self, target: Grid) -> Field<f32> {
        if target.width == self.grid.width && target.height == self.grid.height {
            return Field {
                grid: target,
                data: self.data.clone(),
            };
        }
        let sx = if target.width > 1 {
            (self.grid.width - 1) as f32 / (target.width - 1) as f32
        } else {
            0.0
        };
        let sy = if target.height > 1 {
            (self.grid.height - 1) as f32 / (target.height - 1) as f32
        } else {
            0.0
        };
        let mut data = Vec::with_capacity(target.len());
        for y in 0..target.height {
            for x in 0..target.width {
                data.push(self.sample_bilinear(x as f32 * sx, y as f32 * sy));
            }
        }
        Field { grid: target, data }
    }
}
