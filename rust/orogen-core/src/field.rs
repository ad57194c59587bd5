//! The grid shape and the maps laid on it.
//!
//! Every map is row-major: cell `(x, y)` is at index `y * width + x`, `x` growing east
//! and `y` growing south (image order). Heights are metres, `cell_size` is metres: one
//! number for square cells, or `(dx, dy)` for the non-square cells of geographic DEMs.

use crate::error::{OrogenError, Result};

/// Largest accepted side, in cells (a 16385² terrain is 1 GiB of f32 heights).
pub const MAX_SIDE: usize = 16385;

/// Largest accepted `cell_size`, metres.
pub const MAX_CELL_SIZE: f64 = 1e5;

/// A rectangle of cells: columns `x0..x0 + w`, rows `y0..y0 + h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x0: usize,
    pub y0: usize,
    pub w: usize,
    pub h: usize,
}

impl Rect {
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.w * self.h
    }

    /// True when the rectangle has no cell.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `(x, y)` lies inside.
    #[inline]
    pub fn contains(&self, x: usize, y: usize) -> bool {
        x >= self.x0 && y >= self.y0 && x < self.x0 + self.w && y < self.y0 + self.h
    }

    /// Row-major index of `(x, y)` inside the rectangle (which must contain it).
    #[inline]
    pub fn index(&self, x: usize, y: usize) -> usize {
        (y - self.y0) * self.w + (x - self.x0)
    }

    /// The cells both rectangles hold, if any.
    pub fn intersect(&self, o: &Rect) -> Option<Rect> {
        let (x0, y0) = (self.x0.max(o.x0), self.y0.max(o.y0));
        let x1 = (self.x0 + self.w).min(o.x0 + o.w);
        let y1 = (self.y0 + self.h).min(o.y0 + o.h);
        (x1 > x0 && y1 > y0).then(|| Rect {
            x0,
            y0,
            w: x1 - x0,
            h: y1 - y0,
        })
    }

    /// True for a cell on the rectangle's own border ring (which it must contain).
    #[inline]
    pub fn on_ring(&self, x: usize, y: usize) -> bool {
        x == self.x0 || y == self.y0 || x + 1 == self.x0 + self.w || y + 1 == self.y0 + self.h
    }
}

/// The shape of a regular grid: cell counts and spacing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// Cells along x (columns).
    pub width: usize,
    /// Cells along y (rows).
    pub height: usize,
    /// Distance between neighbouring cell centres along x (east-west), metres: `dx`.
    pub cell_size: f32,
    /// Distance between neighbouring cell centres along y (north-south), metres: `dy`;
    /// equal to `cell_size` on a square grid. Processes that only handle square cells
    /// refuse a grid where they differ ([`Grid::require_square`]).
    pub cell_size_y: f32,
}

impl Grid {
    /// The whole grid as a [`Rect`].
    pub fn rect(&self) -> Rect {
        Rect {
            x0: 0,
            y0: 0,
            w: self.width,
            h: self.height,
        }
    }

    /// A validated grid of square cells: each side in `1..=MAX_SIDE`, `cell_size` finite
    /// and > 0.
    pub fn new(width: usize, height: usize, cell_size: f32) -> Result<Self> {
        Grid::with_cells(width, height, cell_size, cell_size)
    }

    /// A validated grid of `dx × dy` metre cells (each finite and > 0).
    pub fn with_cells(width: usize, height: usize, dx: f32, dy: f32) -> Result<Self> {
        for (field, side) in [("size.0 (width)", width), ("size.1 (height)", height)] {
            if side == 0 || side > MAX_SIDE {
                return Err(OrogenError::invalid(
                    field,
                    format!("must be between 1 and {MAX_SIDE} cells, got {side}"),
                ));
            }
        }
        if dx == dy {
            crate::error::check_positive("cell_size", dx as f64)?;
        } else {
            crate::error::check_positive("cell_size.0 (dx)", dx as f64)?;
            crate::error::check_positive("cell_size.1 (dy)", dy as f64)?;
        }
        Ok(Grid {
            width,
            height,
            cell_size: dx,
            cell_size_y: dy,
        })
    }

    /// Cell spacing along x, metres.
    #[inline]
    pub fn dx(&self) -> f32 {
        self.cell_size
    }

    /// Cell spacing along y, metres.
    #[inline]
    pub fn dy(&self) -> f32 {
        self.cell_size_y
    }

    /// True when `dx == dy`.
    #[inline]
    pub fn is_square(&self) -> bool {
        self.cell_size == self.cell_size_y
    }

    /// The same shape with `other`'s cell spacing.
    pub fn with_spacing_of(self, other: Grid) -> Grid {
        Grid {
            cell_size: other.cell_size,
            cell_size_y: other.cell_size_y,
            ..self
        }
    }

    /// `Ok` for square cells; otherwise an error naming `cell_size` and `who` (the stage
    /// or process, e.g. `stages[1].Thermal`) that only handles square cells.
    pub fn require_square(&self, who: &str) -> Result<()> {
        if self.is_square() {
            return Ok(());
        }
        Err(OrogenError::invalid(
            "cell_size",
            format!(
                "`{who}` needs square cells, got ({}, {}) m; use one number for cell_size \
                 (e.g. resample the DEM to square cells), or leave `{who}` out",
                self.cell_size, self.cell_size_y
            ),
        ))
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

    /// Area of one cell, m²: `dx·dy`.
    #[inline]
    pub fn cell_area(&self) -> f32 {
        self.cell_size * self.cell_size_y
    }

    /// True for cells on the outer ring.
    #[inline]
    pub fn is_border(&self, x: usize, y: usize) -> bool {
        x == 0 || y == 0 || x + 1 == self.width || y + 1 == self.height
    }
}

/// A recipe's cell spacing: one number (square cells, metres) or `(dx, dy)` metres, e.g.
/// `cell_size: 30.0` or `cell_size: (74.6, 92.5)` for a 3″ geographic grid. A square
/// spacing is written back as one number, so existing recipes read and write as before.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CellSize {
    /// Square cells, metres.
    Square(f32),
    /// `(dx, dy)`, metres: east-west, then north-south.
    Rect(f32, f32),
}

impl Default for CellSize {
    fn default() -> Self {
        CellSize::Square(1.0)
    }
}

impl From<f32> for CellSize {
    fn from(v: f32) -> Self {
        CellSize::Square(v)
    }
}

impl CellSize {
    /// Spacing along x, metres.
    pub fn dx(&self) -> f32 {
        match *self {
            CellSize::Square(c) | CellSize::Rect(c, _) => c,
        }
    }

    /// Spacing along y, metres.
    pub fn dy(&self) -> f32 {
        match *self {
            CellSize::Square(c) | CellSize::Rect(_, c) => c,
        }
    }

    /// Checks each spacing is finite, > 0 and at most `max` metres; `field` names it
    /// (`cell_size`, `terrain.Heightmap.cell_size`).
    pub fn validate(&self, field: &str, max: f64) -> Result<()> {
        let parts: Vec<(String, f32)> = match *self {
            CellSize::Square(c) => vec![(field.to_string(), c)],
            CellSize::Rect(dx, dy) => vec![
                (format!("{field}.0 (dx)"), dx),
                (format!("{field}.1 (dy)"), dy),
            ],
        };
        for (name, v) in parts {
            crate::error::check_positive(&name, v as f64)?;
            if v as f64 > max {
                return Err(OrogenError::invalid(
                    name,
                    format!("must be at most {max} m, got {v}"),
                ));
            }
        }
        Ok(())
    }

    /// A grid of `width × height` cells of this spacing.
    pub fn grid(&self, width: usize, height: usize) -> Result<Grid> {
        Grid::with_cells(width, height, self.dx(), self.dy())
    }
}

impl serde::Serialize for CellSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match *self {
            CellSize::Square(c) => s.serialize_f32(c),
            CellSize::Rect(dx, dy) => serde::Serialize::serialize(&(dx, dy), s),
        }
    }
}

impl<'de> serde::Deserialize<'de> for CellSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CellSize;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a number of metres (e.g. 30.0) or a pair (dx, dy) such as (74.6, 92.5)",
                )
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<CellSize, E> {
                Ok(CellSize::Square(v as f32))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<CellSize, E> {
                Ok(CellSize::Square(v as f32))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<CellSize, E> {
                Ok(CellSize::Square(v as f32))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<CellSize, A::Error> {
                use serde::de::Error;
                let dx: f32 = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let dy: f32 = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(1, &self))?;
                if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(A::Error::invalid_length(3, &self));
                }
                Ok(CellSize::Rect(dx, dy))
            }
        }
        d.deserialize_any(V)
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

    /// The cells of `window` of [`Field::resampled`] to `target` (row-major over the
    /// window), the same values bit for bit (a tiled run's tile, issue #41).
    pub fn resampled_window(&self, target: Grid, window: Rect) -> Vec<f32> {
        let same = target.width == self.grid.width && target.height == self.grid.height;
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
        let mut data = Vec::with_capacity(window.len());
        for y in window.y0..window.y0 + window.h {
            if same {
                let at = y * self.grid.width + window.x0;
                data.extend_from_slice(&self.data[at..at + window.w]);
                continue;
            }
            for x in window.x0..window.x0 + window.w {
                data.push(self.sample_bilinear(x as f32 * sx, y as f32 * sy));
            }
        }
        data
    }

    /// Bilinear resample to another grid shape (corner-aligned). Identity when shapes match.
    pub fn resampled(&self, target: Grid) -> Field<f32> {
        let whole = Rect {
            x0: 0,
            y0: 0,
            w: target.width,
            h: target.height,
        };
        Field {
            grid: target,
            data: self.resampled_window(target, whole),
        }
    }
}
