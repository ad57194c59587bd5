//! The regular grid as a neighbourhood: 8 neighbours at their true distances.

use crate::math;
use std::sync::Arc;

use glam::DVec2;
use rayon::prelude::*;

use super::{descend_generic, descend_node, Neighbourhood};
use crate::field::Grid;

/// A side of a rectangular grid (north is `y = 0`, west is `x = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Side {
    North,
    South,
    East,
    West,
}

/// A regular grid with its 8 neighbours at their true distances (`dx`, `dy`,
/// `√(dx² + dy²)`; `cell_size` and `√2·cell_size` for square cells).
#[derive(Clone, Debug, PartialEq)]
pub struct RasterGrid {
    grid: Grid,
    /// Open sides, indexed North, South, East, West.
    open: [bool; 4],
    /// Cells that are outlets wherever they are (a DEM's nodata), one entry per cell.
    outlet_mask: Option<Arc<[bool]>>,
    /// Index offsets and distances of the 8 neighbours, in [`OFFSETS`] order.
    offsets: [isize; 8],
    pub(crate) distances: [f32; 8],
    /// `1 / width`, to split an index into `(x, y)` without an integer division.
    inv_width: f64,
}

/// Neighbour offsets `(dx, dy)` in walking order: row above, same row, row below (the
/// Moore neighbourhood, also walked in this order by layered thermal erosion).
pub(crate) const OFFSETS: [(isize, isize); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// For each of [`OFFSETS`]: 1 for a diagonal neighbour, 0 for an orthogonal one (an index
/// into `[orthogonal, diagonal]` distances).
pub(crate) const DIAGONAL: [usize; 8] = [1, 0, 1, 0, 0, 1, 0, 1];

/// Rows `y − 1`, `y`, `y + 1` of the row-major `v`, `w` wide (`0 < y`, `y + 1` a row).
#[inline(always)]
pub(crate) fn rows3(v: &[f32], y: usize, w: usize) -> [&[f32]; 3] {
    [
        &v[(y - 1) * w..y * w],
        &v[y * w..(y + 1) * w],
        &v[(y + 1) * w..(y + 2) * w],
    ]
}

/// The values of column `x`'s eight neighbours in rows `u` (above), `c` and `d` (below),
/// in [`OFFSETS`] order. Interior loops gather them into this array before walking it, so
/// the walk unrolls and the loop over columns vectorises.
#[inline(always)]
pub(crate) fn ring8(u: &[f32], c: &[f32], d: &[f32], x: usize) -> [f32; 8] {
    [
        u[x - 1],
        u[x],
        u[x + 1],
        c[x - 1],
        c[x + 1],
        d[x - 1],
        d[x],
        d[x + 1],
    ]
}

impl RasterGrid {
    /// The grid with the given sides open to outflow.
    pub fn new(grid: Grid, open_sides: &[Side]) -> Self {
        let mut open = [false; 4];
        for side in open_sides {
            open[*side as usize] = true;
        }
        let diagonal = if grid.is_square() {
            grid.cell_size * std::f32::consts::SQRT_2
        } else {
            math::hypot(grid.dx() as f64, grid.dy() as f64) as f32
        };
        RasterGrid {
            grid,
            open,
            outlet_mask: None,
            inv_width: 1.0 / grid.width as f64,
            offsets: OFFSETS.map(|(dx, dy)| dy * grid.width as isize + dx),
            distances: OFFSETS.map(|(dx, dy)| match (dx != 0, dy != 0) {
                (true, true) => diagonal,
                (true, false) => grid.dx(),
                _ => grid.dy(),
            }),
        }
    }

    /// The same grid where every cell marked in `mask` (one entry per cell) is also an
    /// outlet, e.g. a DEM's nodata cells. `None` (or a mask of another length) leaves it
    /// as it is.
    pub fn with_outlet_mask(mut self, mask: Option<Arc<[bool]>>) -> Self {
        self.outlet_mask = mask.filter(|m| m.len() == self.grid.len());
        self
    }

    #[inline(always)]
    fn masked(&self, node: usize) -> bool {
        self.outlet_mask.as_ref().is_some_and(|m| m[node])
    }

    /// `(x, y)` of `node`. Exact: for indices below 2^29 the product stays over 1/(2w) away
    /// from the next integer, far beyond f64 rounding.
    #[inline(always)]
    pub fn coords(&self, node: usize) -> (usize, usize) {
        let y = ((node as f64 + 0.5) * self.inv_width) as u32 as usize;
        (node - y * self.grid.width, y)
    }

    /// Index offsets of the 8 neighbours, in [`OFFSETS`] order.
    pub(crate) fn offsets(&self) -> [isize; 8] {
        self.offsets
    }

    /// The grid shape.
    pub fn grid(&self) -> Grid {
        self.grid
    }

    /// True when `side` is open.
    pub fn is_open(&self, side: Side) -> bool {
        self.open[side as usize]
    }

    /// Per node, bit `k` set when its neighbour at `OFFSETS[k]` drains into it: its donors,
    /// in increasing index order (offsets are increasing for a width of 3 or more), from
    /// every node's [`RasterGrid::link_code`]. Needs both sides ≥ 3. Parallel by row, a
    /// byte a node.
    pub(crate) fn donor_masks(&self, codes: &[u8], masks: &mut [u8]) {
        let (w, h) = (self.grid.width, self.grid.height);
        let n = w * h;
        debug_assert!(w >= 3 && h >= 3 && codes.len() == n && masks.len() == n);
        let offsets = self.offsets;
        // Neighbour `k` (at `OFFSETS[k]`) is a donor when its link is `7 − k`, the step back.
        // An index offset that wraps across a row end reaches a node that is not a
        // neighbour, so never a donor: border nodes only need the range check.
        let scalar = |i: usize| -> u8 {
            let mut m = 0u8;
            for (k, &o) in offsets.iter().enumerate() {
                let j = i as isize + o;
                if j >= 0 && (j as usize) < n && codes[j as usize] as usize == 7 - k {
                    m |= 1 << k;
                }
            }
            m
        };
        masks.par_chunks_mut(w).enumerate().for_each(|(y, ms)| {
            let row = y * w;
            if y == 0 || y + 1 == h {
                for (x, m) in ms.iter_mut().enumerate() {
                    *m = scalar(row + x);
                }
                return;
            }
            ms[0] = scalar(row);
            ms[w - 1] = scalar(row + w - 1);
            let inner = &mut ms[1..w - 1];
            inner.fill(0);
            for (k, &o) in offsets.iter().enumerate() {
                let start = (row as isize + 1 + o) as usize;
                let there = &codes[start..start + w - 2];
                let back = (7 - k) as u8;
                for (m, &c) in inner.iter_mut().zip(there) {
                    *m |= u8::from(c == back) << k;
                }
            }
        });
    }

    /// For each donor mask of [`RasterGrid::donor_masks`], the index offsets of its donors
    /// in increasing order (as wrapping `u32`; unused entries 0).
    pub(crate) fn donor_table(&self) -> Vec<[u32; 8]> {
        (0..256usize)
            .map(|m| {
                let mut row = [0u32; 8];
                let mut p = 0;
                for (k, &o) in self.offsets.iter().enumerate() {
                    if m & (1 << k) != 0 {
                        row[p] = o as i32 as u32;
                        p += 1;
                    }
                }
                row
            })
            .collect()
    }
}

impl Neighbourhood for RasterGrid {
    #[inline]
    fn len(&self) -> usize {
        self.grid.len()
    }

    #[inline(always)]
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, mut f: F) {
        let w = self.grid.width;
        let h = self.grid.height;
        let (x, y) = self.coords(node);
        // Which of the 8 neighbours exist, as bits in OFFSETS order.
        let mask: u32 = if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
            0xFF
        } else {
            let mut m = 0;
            for (k, (dx, dy)) in OFFSETS.iter().enumerate() {
                let (nx, ny) = (x as isize + dx, y as isize + dy);
                if nx >= 0 && ny >= 0 && nx < w as isize && ny < h as isize {
                    m |= 1 << k;
                }
            }
            m
        };
        // One call site for `f`, so callers' closures inline.
        for k in 0..8 {
            if mask & (1 << k) != 0 {
                f((node as isize + self.offsets[k]) as u32, self.distances[k]);
            }
        }
    }

    #[inline(always)]
    fn is_outlet(&self, node: usize) -> bool {
        let w = self.grid.width;
        let (x, y) = self.coords(node);
        self.masked(node)
            || (self.open[Side::North as usize] && y == 0)
            || (self.open[Side::South as usize] && y + 1 == self.grid.height)
            || (self.open[Side::East as usize] && x + 1 == w)
            || (self.open[Side::West as usize] && x == 0)
    }

    #[inline]
    fn node_area(&self, _node: usize) -> f32 {
        self.grid.cell_area()
    }

    #[inline]
    fn position(&self, node: usize) -> DVec2 {
        let (x, y) = self.coords(node);
        DVec2::new(
            x as f64 * self.grid.dx() as f64,
            y as f64 * self.grid.dy() as f64,
        )
    }

    /// The shortest link that exists: `min(dx, dy)` when both directions have neighbours.
    fn shortest_link(&self) -> Option<f32> {
        let (w, h) = (self.grid.width, self.grid.height);
        match (w > 1, h > 1) {
            (true, true) => Some(self.grid.dx().min(self.grid.dy())),
            (true, false) => Some(self.grid.dx()),
            (false, true) => Some(self.grid.dy()),
            (false, false) => None,
        }
    }

    fn as_raster(&self) -> Option<&RasterGrid> {
        Some(self)
    }

    /// Row by row: interior cells of a row are swept one direction at a time (in
    /// increasing neighbour index, strict `>`, so ties go to the lowest index as in the
    /// generic walk), a loop the compiler vectorises; ring cells take the generic path.
    fn steepest_receivers(
        &self,
        heights: &[f32],
        sea: f32,
        receivers: &mut [u32],
        dist: &mut [f32],
        keep: bool,
    ) {
        self.steepest_receivers_coded(heights, sea, receivers, dist, None, keep);
    }
}

/// The code of the link from a node to itself (see [`RasterGrid::link_code`]).
pub const SELF_LINK: u8 = 8;

/// Link code by `(dy + 1)·3 + dx + 1`: the neighbours' [`OFFSETS`] indices, 8 the node.
const CODE_OF_STEP: [u8; 9] = [0, 1, 2, 3, SELF_LINK, 4, 5, 6, 7];

/// For each interior cell of a row (`here`, its neighbours' heights `there` in [`OFFSETS`]
/// order at distances `dists`), the direction of the largest slope to a lower neighbour in
/// `dir` (`u32::MAX`: none lower). One direction at a time, in increasing neighbour index
/// with strict `>`, so ties go to the lowest index as in the generic walk; branch-free (bit
/// select, max), so the loop vectorises. Slopes are finite, so `max` picks `s` exactly when
/// `s > best`. Cells go [`LANES`] at a time with all 8 directions, the best slopes and
/// directions held in registers and each direction written once.
#[inline(always)]
fn steepest_lanes(here: &[f32], there: [&[f32]; 8], dists: [f32; 8], dir: &mut [u32]) {
    let m = here.len().min(dir.len());
    let there = there.map(|t| &t[..m]);
    let full = m - m % LANES;
    for o in (0..full).step_by(LANES) {
        let h: &[f32; LANES] = here[o..o + LANES].try_into().expect("a whole block");
        let t =
            there.map(|t| -> &[f32; LANES] { t[o..o + LANES].try_into().expect("a whole block") });
        let out: &mut [u32; LANES] = (&mut dir[o..o + LANES]).try_into().expect("a whole block");
        *out = steepest_block(h, t, dists);
    }
    for x in full..m {
        let h = [here[x]];
        let t = there.map(|t| [t[x]]);
        dir[x] = steepest_block(&h, t.each_ref(), dists)[0];
    }
}

/// [`steepest_lanes`] over one block of `L` cells, in registers.
#[inline(always)]
fn steepest_block<const L: usize>(
    here: &[f32; L],
    there: [&[f32; L]; 8],
    dists: [f32; 8],
) -> [u32; L] {
    let mut best = [0.0f32; L];
    let mut dir = [u32::MAX; L];
    for (k, (t, &dk)) in there.iter().zip(&dists).enumerate() {
        for j in 0..L {
            let s = (here[j] - t[j]) / dk;
            let mask = u32::from(s > best[j]).wrapping_neg();
            dir[j] = (dir[j] & !mask) | (k as u32 & mask);
            best[j] = best[j].max(s);
        }
    }
    dir
}

/// [`steepest_lanes`] compiled for AVX2 (8 lanes): the same IEEE operations (subtract,
/// divide, compare, max; no fused multiply-add), so the same directions.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn steepest_lanes_avx2(here: &[f32], there: [&[f32]; 8], dists: [f32; 8], dir: &mut [u32]) {
    steepest_lanes(here, there, dists, dir)
}

/// [`steepest_lanes`], with AVX2 where the CPU has it (also the tiled step's rows,
/// `tiles::stream_power`).
#[inline(always)]
pub(crate) fn steepest_row(here: &[f32], there: [&[f32]; 8], dists: [f32; 8], dir: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { steepest_lanes_avx2(here, there, dists, dir) };
    }
    steepest_lanes(here, there, dists, dir)
}

/// Cells per block of [`steepest_lanes`].
const LANES: usize = 16;

/// [`RasterGrid::link_code`] on a grid `width` wide.
#[inline(always)]
fn link_code(width: isize, i: u32, r: u32) -> u8 {
    let step = r as isize - i as isize;
    let dy = (step > 1) as isize - (step < -1) as isize;
    let dx = step - dy * width;
    debug_assert!((-1..=1).contains(&dx), "{r} is no neighbour of {i}");
    CODE_OF_STEP[((dy + 1) * 3 + dx + 1) as usize]
}

impl RasterGrid {
    /// The code of the link from node `i` to `r`, a neighbour or `i` itself, on a grid at
    /// least 3 cells wide: the neighbour's index in [`OFFSETS`], or [`SELF_LINK`].
    #[inline(always)]
    pub fn link_code(&self, i: u32, r: u32) -> u8 {
        link_code(self.grid.width as isize, i, r)
    }

    /// [`Neighbourhood::steepest_receivers`], also writing each node's
    /// [`RasterGrid::link_code`] to `codes` when given.
    pub(crate) fn steepest_receivers_coded(
        &self,
        heights: &[f32],
        sea: f32,
        receivers: &mut [u32],
        dist: &mut [f32],
        codes: Option<&mut [u8]>,
        keep: bool,
    ) {
        let w = self.grid.width;
        let h = self.grid.height;
        if w < 3 || h < 3 {
            // No interior: the generic walk (and no codes: links need 3 × 3 cells).
            debug_assert!(codes.is_none(), "link codes need a grid of 3 × 3 cells");
            descend_generic(self, heights, sea, receivers, dist, keep);
            return;
        }
        let init = || vec![0u32; w];
        let rows = receivers.par_chunks_mut(w).zip(dist.par_chunks_mut(w));
        match codes {
            Some(codes) => rows.zip(codes.par_chunks_mut(w)).enumerate().for_each_init(
                init,
                |dir, (y, ((rs, ds), cs))| {
                    self.descend_row(heights, sea, keep, y, rs, ds, Some(cs), dir)
                },
            ),
            None => rows.enumerate().for_each_init(init, |dir, (y, (rs, ds))| {
                self.descend_row(heights, sea, keep, y, rs, ds, None, dir)
            }),
        }
    }

    /// Row `y` of [`RasterGrid::steepest_receivers_coded`] (`cs` its codes, if kept),
    /// `dir` a scratch row.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn descend_row(
        &self,
        heights: &[f32],
        sea: f32,
        keep: bool,
        y: usize,
        rs: &mut [u32],
        ds: &mut [f32],
        mut cs: Option<&mut [u8]>,
        dir: &mut [u32],
    ) {
        let (w, h) = (self.grid.width, self.grid.height);
        let row = y * w;
        // A ring cell's code from its receiver (the width in a local: a byte store could
        // alias `self`'s fields).
        let width = w as isize;
        let ring = |x: usize, rs: &mut [u32], ds: &mut [f32], cs: &mut Option<&mut [u8]>| {
            descend_node(self, heights, sea, row + x, &mut rs[x], &mut ds[x], keep);
            if let Some(cs) = cs {
                cs[x] = link_code(width, (row + x) as u32, rs[x]);
            }
        };
        if y == 0 || y + 1 == h {
            for x in 0..w {
                ring(x, rs, ds, &mut cs);
            }
            return;
        }
        let m = w - 2;
        let dir = &mut dir[..m];
        let there = self
            .offsets
            .map(|o| &heights[(row as isize + 1 + o) as usize..][..m]);
        steepest_row(&heights[row + 1..][..m], there, self.distances, dir);
        ring(0, rs, ds, &mut cs);
        ring(w - 1, rs, ds, &mut cs);
        let mask = self.outlet_mask.as_deref();
        if !keep {
            // Every cell gets a receiver: its steepest lower neighbour, or itself (sea,
            // outlet, or no lower neighbour). Without branches, from tables with the node
            // itself as entry `SELF_LINK`.
            let (mut step, mut dist) = ([0isize; 9], [0.0f32; 9]);
            step[..8].copy_from_slice(&self.offsets);
            dist[..8].copy_from_slice(&self.distances);
            let interior = 1..w - 1;
            let (rs, ds) = (&mut rs[interior.clone()], &mut ds[interior.clone()]);
            let hs = &heights[row + 1..row + w - 1];
            let mut cs = cs.map(|cs| &mut cs[interior]);
            for x in 0..rs.len() {
                let i = row + 1 + x;
                let own = (hs[x] <= sea) | mask.is_some_and(|m| m[i]) | (dir[x] == u32::MAX);
                let k = if own {
                    SELF_LINK as usize
                } else {
                    dir[x] as usize & 7
                };
                rs[x] = (i as isize + step[k]) as u32;
                ds[x] = dist[k];
                if let Some(cs) = &mut cs {
                    cs[x] = k as u8;
                }
            }
            return;
        }
        for x in 1..w - 1 {
            let i = row + x;
            let (r, d) = (&mut rs[x], &mut ds[x]);
            // The link code: set with the receiver, left as it is where `keep` keeps it.
            let code =
                if heights[i] <= sea || mask.is_some_and(|m| m[i]) || (keep && *r as usize == i) {
                    *r = i as u32;
                    *d = 0.0;
                    Some(SELF_LINK)
                } else {
                    let k = dir[x - 1];
                    if k != u32::MAX {
                        *r = (i as isize + self.offsets[k as usize]) as u32;
                        *d = self.distances[k as usize];
                        Some(k as u8)
                    } else if !keep {
                        *r = i as u32;
                        *d = 0.0;
                        Some(SELF_LINK)
                    } else {
                        None
                    }
                };
            if let (Some(cs), Some(code)) = (&mut cs, code) {
                cs[x] = code;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{steepest_lanes, steepest_row};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// The rule, one cell and one direction at a time: the first direction of the
    /// steepest slope to a lower neighbour, `u32::MAX` where none is lower.
    fn steepest_one_by_one(here: &[f32], there: [&[f32]; 8], dists: [f32; 8]) -> Vec<u32> {
        (0..here.len())
            .map(|x| {
                let (mut best, mut dir) = (0.0f32, u32::MAX);
                for k in 0..8 {
                    let s = (here[x] - there[k][x]) / dists[k];
                    if s > best {
                        (best, dir) = (s, k as u32);
                    }
                }
                dir
            })
            .collect()
    }

    /// The blocked row sweep, in its portable build and in the one the CPU gets (AVX2
    /// where it has it), gives the one-by-one rule's directions, over rows of every length
    /// around the block size and heights from a few values (ties, both zeros) or any.
    #[test]
    fn blocked_row_sweep_matches_the_rule_on_every_path() {
        let mut rng = StdRng::seed_from_u64(11);
        let few = [-1.0f32, -0.0, 0.0, 0.5, 1.0, 3.0];
        for trial in 0..400 {
            let m = rng.random_range(1..80);
            let pick = |rng: &mut StdRng| {
                if trial % 2 == 0 {
                    few[rng.random_range(0..few.len())]
                } else {
                    rng.random_range(-100.0..100.0)
                }
            };
            let here: Vec<f32> = (0..m).map(|_| pick(&mut rng)).collect();
            let there: Vec<Vec<f32>> = (0..8)
                .map(|_| (0..m).map(|_| pick(&mut rng)).collect())
                .collect();
            let there: [&[f32]; 8] = std::array::from_fn(|k| &there[k][..]);
            let cell = [1.0f32, 30.0, 100.0][trial % 3];
            let diag = cell * std::f32::consts::SQRT_2;
            let dists = [diag, cell, diag, cell, cell, diag, cell, diag];
            let want = steepest_one_by_one(&here, there, dists);
            let mut got = vec![7u32; m];
            steepest_lanes(&here, there, dists, &mut got);
            assert_eq!(got, want, "portable, trial {trial}, {m} cells");
            let mut got = vec![7u32; m];
            steepest_row(&here, there, dists, &mut got);
            assert_eq!(got, want, "dispatched, trial {trial}, {m} cells");
        }
    }
}
