//! Water as a renderer draws it (issue #13): river channels whose width follows discharge,
//! and a flow map from the receivers so the water can be drawn moving downstream.
//!
//! - **Channel field:** for every cell, the largest `half width − distance` (metres) over the
//!   river links near it, a link being a river cell's segment to its receiver. Positive
//!   inside a channel, zero on its banks; filtered bilinearly and cut at 0 it draws smooth
//!   channels, diagonal ones included, with no staircase of cells.
//! - **Width:** hydraulic geometry, `w = WIDTH_COEFF · Q^0.5` (Leopold & Maddock 1953) with
//!   `Q` in m³/s from the drainage map read as m³/yr (area in m² under 1 m/yr of rain, or a
//!   discharge under the recipe's precipitation), and never narrower than one cell, so every
//!   river stays visible.
//! - **Flow map:** the unit vector from each cell to its receiver (steepest descent on the
//!   water surface, so lakes, which are flat there, stand still), averaged over the 3 × 3
//!   cells around it among those that flow, so D8's 45° turns blend.

use crate::field::Grid;

/// Channel width per square root of discharge, m per (m³/s)^0.5 (Leopold & Maddock's `a`
/// lies between about 2 and 8 for rivers).
pub const WIDTH_COEFF: f32 = 4.0;

const SECONDS_PER_YEAR: f32 = 3.156e7;

/// At most this many cells of half width are drawn (wider rivers are capped).
const MAX_HALF_WIDTH_CELLS: f32 = 6.0;

/// The channel field and flow map of a grid (see the module).
pub struct WaterDisplay {
    /// Half width minus distance to the nearest river link, metres (positive inside), at
    /// least minus one cell.
    pub channel: Vec<f32>,
    /// Downstream direction per cell, (east, south) unit vector or zero where still.
    pub flow: Vec<[f32; 2]>,
}

/// D8 offsets (dx, dy).
const D8: [(i64, i64); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
];

/// The receiver of each cell: its steepest-descent neighbour on `surface`, or itself.
pub fn receivers(grid: Grid, surface: &[f32]) -> Vec<usize> {
    let (w, h) = (grid.width as i64, grid.height as i64);
    let (dx, dy) = (grid.dx(), grid.dy());
    (0..grid.len())
        .map(|n| {
            let (x, y) = ((n as i64) % w, (n as i64) / w);
            let mut best = (0.0f32, n);
            for (ox, oy) in D8 {
                let (nx, ny) = (x + ox, y + oy);
                if nx < 0 || ny < 0 || nx >= w || ny >= h {
                    continue;
                }
                let m = (ny * w + nx) as usize;
                let dist = ((ox as f32 * dx).powi(2) + (oy as f32 * dy).powi(2)).sqrt();
                let slope = (surface[n] - surface[m]) / dist;
                if slope > best.0 {
                    best = (slope, m);
                }
            }
            best.1
        })
        .collect()
}

/// Where each river runs through its cells, metres: a river cell's centre averaged with
/// its receiver's and its main donor's (the river cell draining into it with the largest
/// drainage), weights 1 : 2 : 1, so D8's zig-zags (east, south-east, east, …) become the
/// straight line they stand for; other cells at their centres.
pub fn river_centres(
    grid: Grid,
    recv: &[usize],
    drainage: &[f32],
    rivers: &[u8],
) -> Vec<(f32, f32)> {
    let (w, dx, dy) = (grid.width, grid.dx(), grid.dy());
    let pos = |i: usize| ((i % w) as f32 * dx, (i / w) as f32 * dy);
    let is_river = |i: usize| rivers.get(i).is_some_and(|&m| m != 0);
    let mut donor: Vec<Option<usize>> = vec![None; grid.len()];
    for (i, &r) in recv.iter().enumerate() {
        if r != i && is_river(i) && is_river(r) {
            let better = donor[r].is_none_or(|d| drainage.get(i) > drainage.get(d));
            if better {
                donor[r] = Some(i);
            }
        }
    }
    (0..grid.len())
        .map(|i| {
            let p = pos(i);
            if !is_river(i) {
                return p;
            }
            let up = donor[i].map_or(p, pos);
            let down = if is_river(recv[i]) { pos(recv[i]) } else { p };
            (
                0.25 * (up.0 + 2.0 * p.0 + down.0),
                0.25 * (up.1 + 2.0 * p.1 + down.1),
            )
        })
        .collect()
}

/// The channel field and flow map of the `rivers` cells (non-zero), with widths from
/// `drainage` (m³/yr, see the module) and receivers on `surface` (the water surface, or the
/// heights).
pub fn water_display(grid: Grid, surface: &[f32], drainage: &[f32], rivers: &[u8]) -> WaterDisplay {
    let n = grid.len();
    let (w, h) = (grid.width, grid.height);
    let (dx, dy) = (grid.dx(), grid.dy());
    let cell = dx.max(dy);
    let recv = receivers(grid, surface);
    let half_width = |i: usize| {
        let q = drainage.get(i).copied().unwrap_or(0.0).max(0.0) / SECONDS_PER_YEAR;
        (0.5 * WIDTH_COEFF * q.sqrt()).clamp(0.5 * cell, MAX_HALF_WIDTH_CELLS * cell)
    };
    // Clamped below at one cell outside the banks (all a renderer's bank needs).
    let mut channel = vec![-cell; n];
    let pos = |i: usize| ((i % w) as f32 * dx, (i / w) as f32 * dy);
    let centre = river_centres(grid, &recv, drainage, rivers);
    for (i, &r) in recv.iter().enumerate() {
        if rivers.get(i).is_none_or(|&m| m == 0) {
            continue;
        }
        // The link from this cell to its receiver `r` (a point where it has none).
        let (a, b) = (centre[i], centre[r]);
        let (ha, hb) = (half_width(i), half_width(r).max(half_width(i)));
        let reach = ha.max(hb) + cell;
        let (x0, x1) = (a.0.min(b.0) - reach, a.0.max(b.0) + reach);
        let (y0, y1) = (a.1.min(b.1) - reach, a.1.max(b.1) + reach);
        let (i0, i1) = (
            ((x0 / dx).floor().max(0.0)) as usize,
            ((x1 / dx).ceil() as usize).min(w - 1),
        );
        let (j0, j1) = (
            ((y0 / dy).floor().max(0.0)) as usize,
            ((y1 / dy).ceil() as usize).min(h - 1),
        );
        let (ex, ey) = (b.0 - a.0, b.1 - a.1);
        let len2 = ex * ex + ey * ey;
        for j in j0..=j1 {
            for k in i0..=i1 {
                let p = (k as f32 * dx, j as f32 * dy);
                // The point of the link where half width minus distance is largest: with
                // the half width growing by k per metre along it, the stationary point of
                // the (concave) function lies k·d/√(1−k²) past the foot of the
                // perpendicular, d being the distance to the link's line.
                let t = if len2 > 0.0 {
                    let len = len2.sqrt();
                    let along = ((p.0 - a.0) * ex + (p.1 - a.1) * ey) / len;
                    let across = ((p.0 - a.0) * ey - (p.1 - a.1) * ex).abs() / len;
                    let k = (hb - ha) / len;
                    let past = if k >= 1.0 {
                        f32::INFINITY
                    } else {
                        k * across / (1.0 - k * k).sqrt()
                    };
                    ((along + past) / len).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let (qx, qy) = (a.0 + t * ex - p.0, a.1 + t * ey - p.1);
                let v = ha + t * (hb - ha) - (qx * qx + qy * qy).sqrt();
                let c = &mut channel[j * w + k];
                if v > *c {
                    *c = v;
                }
            }
        }
    }
    // Flow: unit vectors to the receivers, averaged over each cell's flowing 3 × 3.
    let unit: Vec<[f32; 2]> = (0..n)
        .map(|i| {
            let (a, b) = (pos(i), pos(recv[i]));
            let (ex, ey) = (b.0 - a.0, b.1 - a.1);
            let len = (ex * ex + ey * ey).sqrt();
            if len > 0.0 {
                [ex / len, ey / len]
            } else {
                [0.0, 0.0]
            }
        })
        .collect();
    let flow = (0..n)
        .map(|i| {
            if unit[i] == [0.0, 0.0] {
                return [0.0, 0.0];
            }
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let mut s = [0.0f32, 0.0f32];
            for oy in -1..=1 {
                for ox in -1..=1 {
                    let (nx, ny) = (x + ox, y + oy);
                    if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                        continue;
                    }
                    let u = unit[(ny as usize) * w + nx as usize];
                    s[0] += u[0];
                    s[1] += u[1];
                }
            }
            let len = (s[0] * s[0] + s[1] * s[1]).sqrt();
            if len > 1e-6 {
                [s[0] / len, s[1] / len]
            } else {
                unit[i]
            }
        })
        .collect();
    WaterDisplay { channel, flow }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A straight diagonal river on a tilted plane: the channel is positive along the whole
    /// diagonal (no gaps at the cell corners a staircase would leave), its half width is
    /// the hydraulic geometry's, and the flow points down the diagonal.
    #[test]
    fn a_diagonal_river_is_one_unbroken_channel_of_its_width() {
        let grid = Grid::new(32, 32, 10.0).unwrap();
        let surface: Vec<f32> = (0..grid.len())
            .map(|i| 1000.0 - ((i % 32) + (i / 32)) as f32)
            .collect();
        let mut rivers = vec![0u8; grid.len()];
        for k in 0..32 {
            rivers[k * 32 + k] = 1;
        }
        // 1e15 m³/yr: about 3.2e7 m³/s, a half width capped at 6 cells; 1e9: ~32 m³/s,
        // half width 0.5 · 4 · 5.63 = 11.3 m.
        let drainage = vec![1.0e9f32; grid.len()];
        let d = water_display(grid, &surface, &drainage, &rivers);
        let hw = 0.5 * WIDTH_COEFF * (1.0e9f32 / SECONDS_PER_YEAR).sqrt();
        // (The first cell's link starts a quarter of the way to the next: smoothing.)
        for k in 1..31 {
            let on = d.channel[k * 32 + k];
            assert!((on - hw).abs() < 1e-3, "on the river: {on} vs {hw}");
            // The cell beside the diagonal is 7.07 m from it.
            let beside = d.channel[k * 32 + k + 1];
            let want = hw - 10.0 / 2f32.sqrt();
            assert!((beside - want).abs() < 1e-3, "beside: {beside} vs {want}");
            if (1..30).contains(&k) {
                let f = d.flow[k * 32 + k];
                let s = 1.0 / 2f32.sqrt();
                assert!(
                    (f[0] - s).abs() < 1e-5 && (f[1] - s).abs() < 1e-5,
                    "flow {f:?}"
                );
            }
        }
    }

    /// Brute force: the channel value of every cell is the best over all links, each
    /// measured directly; on random rivers over random surfaces.
    #[test]
    fn the_channel_field_matches_a_brute_force_over_all_links() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f32 / (1u64 << 53) as f32
        };
        for _ in 0..5 {
            let grid = Grid::with_cells(23, 17, 10.0, 7.0).unwrap();
            let surface: Vec<f32> = (0..grid.len()).map(|_| rnd() * 50.0).collect();
            let drainage: Vec<f32> = (0..grid.len()).map(|_| rnd() * 1e11).collect();
            let rivers: Vec<u8> = (0..grid.len()).map(|_| (rnd() < 0.1) as u8).collect();
            let d = water_display(grid, &surface, &drainage, &rivers);
            let recv = receivers(grid, &surface);
            let centre = river_centres(grid, &recv, &drainage, &rivers);
            let cell = 10.0f32;
            let hw = |i: usize| {
                (0.5 * WIDTH_COEFF * (drainage[i] / SECONDS_PER_YEAR).sqrt())
                    .clamp(0.5 * cell, MAX_HALF_WIDTH_CELLS * cell)
            };
            let pos = |i: usize| ((i % 23) as f32 * 10.0, (i / 23) as f32 * 7.0);
            for p in 0..grid.len() {
                let mut best = -cell;
                for i in (0..grid.len()).filter(|&i| rivers[i] != 0) {
                    let (a, b) = (centre[i], centre[recv[i]]);
                    let (ha, hb) = (hw(i), hw(recv[i]).max(hw(i)));
                    let q = pos(p);
                    // Closest point by dense sampling of the segment.
                    for s in 0..=2000 {
                        let t = s as f32 / 2000.0;
                        let (x, y) = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
                        let v = ha + t * (hb - ha) - ((x - q.0).powi(2) + (y - q.1).powi(2)).sqrt();
                        best = best.max(v);
                    }
                }
                assert!(
                    (d.channel[p] - best).abs() < 0.05,
                    "cell {p}: {} vs {best}",
                    d.channel[p]
                );
            }
        }
    }

    /// A river stepping east, south-east, east, … (slope 1/2 in cells): the smoothed centres
    /// of its inner cells lie on the straight line y = x/2 − 1/4, which the cell centres
    /// miss by a quarter cell either way.
    #[test]
    fn a_zig_zag_river_runs_straight() {
        let grid = Grid::new(24, 16, 10.0).unwrap();
        let mut surface = vec![1000.0f32; grid.len()];
        let mut rivers = vec![0u8; grid.len()];
        let path: Vec<(usize, usize)> = (0..20).map(|x| (x, x / 2)).collect();
        for (k, &(x, y)) in path.iter().enumerate() {
            surface[y * 24 + x] = 100.0 - k as f32;
            rivers[y * 24 + x] = 1;
        }
        let drainage: Vec<f32> = (0..grid.len()).map(|i| (i % 24) as f32 * 1e6).collect();
        let recv = receivers(grid, &surface);
        let centre = river_centres(grid, &recv, &drainage, &rivers);
        let mut raw_worst = 0.0f32;
        for &(x, y) in &path[1..19] {
            let (cx, cy) = centre[y * 24 + x];
            let line = |x: f32| (x / 2.0 - 2.5) * 1.0;
            assert!((cy - line(cx)).abs() < 1e-3, "({x}, {y}): ({cx}, {cy})");
            raw_worst = raw_worst.max((y as f32 * 10.0 - line(x as f32 * 10.0)).abs());
        }
        assert!(
            (raw_worst - 2.5).abs() < 1e-3,
            "cell centres miss by {raw_worst}"
        );
    }
}
