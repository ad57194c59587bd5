//! Rivers off the grid's eight directions (issue #37): the regular grid's stream tree
//! turned into smooth river curves, carved into the heights with banks, and drawn as a
//! sub-cell channel field.
//!
//! On the grid every cell drains to one of its eight neighbours (D8), so a river that
//! follows its cells runs in 45° staircases. Here the river cells (the `rivers` mask of the
//! hydrology maps) and their receivers make the same Strahler reaches as a graph's
//! ([`super::rivers`], Cordonnier et al. 2016 §7: rivers from the stream graph's elevation
//! and drainage), but each node's position is first smoothed along its river:
//!
//! 1. **Chains.** Every river node's *main donor* is its river donor of largest discharge
//!    (the lowest index on a tie). A chain starts at a source and runs down while each
//!    node is its receiver's main donor; it ends at the outlet or at the junction where it
//!    joins a larger river (that node belongs to the river it joins).
//! 2. **Positions.** Along each chain the cell centres are averaged with a tent of
//!    half-width [`RiverCurveParams::window`] nodes (weights `h + 1 − |o|`), shrunk near the
//!    ends so that the source, the outlet and the junction stay put; a chain that joins a
//!    river ends at that river's smoothed position of the junction (rivers are smoothed
//!    downstream first), so tributaries meet their river exactly.
//! 3. **Curves.** Each Strahler reach keeps its ends, its junctions and about every
//!    [`RiverCurveParams::spacing`]-th node in between as control points of a centripetal
//!    Catmull-Rom curve (`2^smoothing` segments per span).
//! 4. **Beds.** A node's bed is its water surface (the lake level in a lake), lowered to
//!    the lowest bed of its river donors, so it never rises downstream; along a curve the
//!    bed and discharge are interpolated between the nodes the curve passes, and held to
//!    a running minimum. Widths are `width_coeff · discharge^0.5` as on a graph.
//!
//! [`carve`] cuts the curves into a height map as Génevaux et al. 2013's river primitive
//! does (Cordonnier et al. 2016 §7): a flat floor at the bed, at least
//! [`RiverCurveParams::min_half_width`] cells to each side so that the channel shows on
//! the grid, and banks blending back to the ground over `bank_ratio` channel widths (at
//! least one cell). It only ever lowers ground. [`channel_field`] is the signed half width
//! minus distance to the nearest curve, per cell, for a renderer to draw water with
//! smooth banks.
//!
//! Every function gives the same result whatever the thread count: the carve and the
//! channel field visit the cells near each segment in turn, each cell keeping a minimum or
//! maximum over the segments, which no order changes.

use crate::math;
use serde::{Deserialize, Serialize};

use super::rivers::{
    catmull_rom, lerp, mirror, reaches, strahler_orders, stream_order, River, MAX_SMOOTHING,
};
use crate::error::{check_range, OrogenError, Result};
use crate::field::{Grid, Rect};
use crate::state::buffer;

/// Largest accepted [`RiverCurveParams::window`] and [`RiverCurveParams::spacing`], cells.
pub const MAX_WINDOW: u32 = 32;

/// How a grid's rivers become curves and how they are carved (the recipe's
/// `river_curves`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RiverCurveParams {
    /// Half-width of the moving average over node positions along each river, in nodes
    /// (cells), 0..=32; 0 keeps the cell centres. Default 3.
    pub window: u32,
    /// Cells between the curve's control points, 1..=32 (junctions and reach ends are
    /// always control points). Default 3.
    pub spacing: u32,
    /// Centripetal Catmull-Rom subdivision levels: each span between control points
    /// becomes `2^smoothing` segments, 0..=6. Default 2.
    pub smoothing: u32,
    /// `a` in the channel width `w = a·Q^0.5`, metres per square root of the drainage
    /// unit (m², or m³/yr with precipitation), 0..=1000. Default 0.004 (as the Graph
    /// domain's rivers: a 100 km² basin is 40 m wide).
    pub width_coeff: f32,
    /// Carve the curves into the heights (`false`: only `rivers.json`). Default true.
    pub carve: bool,
    /// Smallest half width of the carved floor, cells, 0..=16: narrower channels are
    /// carved (and drawn by [`channel_field`]) this wide so they show on the grid.
    /// Default 0.75.
    pub min_half_width: f32,
    /// Bank width as a multiple of the channel width (at least one cell), 0..=100: over
    /// it the carve fades from the floor back to the ground. Default 1.
    pub bank_ratio: f32,
}

impl Default for RiverCurveParams {
    fn default() -> Self {
        RiverCurveParams {
            window: 3,
            spacing: 3,
            smoothing: 2,
            width_coeff: 0.004,
            carve: true,
            min_half_width: 0.75,
            bank_ratio: 1.0,
        }
    }
}

impl RiverCurveParams {
    /// Checks ranges; `field` prefixes error names (`river_curves.spacing`).
    pub fn validate(&self, field: &str) -> Result<()> {
        let count = |name: &str, v: u32, lo: u32, hi: u32| {
            if v < lo || v > hi {
                return Err(OrogenError::invalid(
                    format!("{field}.{name}"),
                    format!("must be in {lo}..={hi}, got {v}"),
                ));
            }
            Ok(())
        };
        count("window", self.window, 0, MAX_WINDOW)?;
        count("spacing", self.spacing, 1, MAX_WINDOW)?;
        count("smoothing", self.smoothing, 0, MAX_SMOOTHING)?;
        check_range(
            &format!("{field}.width_coeff"),
            self.width_coeff as f64,
            0.0,
            1e3,
        )?;
        check_range(
            &format!("{field}.min_half_width"),
            self.min_half_width as f64,
            0.0,
            16.0,
        )?;
        check_range(
            &format!("{field}.bank_ratio"),
            self.bank_ratio as f64,
            0.0,
            100.0,
        )
    }
}

/// One river cell for [`grid_rivers_sparse`]: its index in the grid (row-major), its
/// receiver along the stream tree (itself at an outlet), its discharge (drainage, m² or
/// m³/yr) and its water surface (metres: the lake level in a lake, the ground elsewhere).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RiverCell {
    pub cell: u32,
    pub receiver: u32,
    pub discharge: f32,
    pub surface: f32,
}

/// The river curves of a grid: `receivers` (each cell's receiver along the stream tree
/// with lakes resolved; an outlet receives itself), `discharge` (drainage, m² or m³/yr),
/// `rivers` (non-zero for river cells) and `surface` (the water surface, metres: the lake
/// level in lakes, the ground elsewhere), one value per cell of `grid`. Points are in
/// metres from the first cell's centre (x east, y south), as a Graph domain's. Sorted by
/// mouth cell then start cell. Errors naming the slice for wrong lengths, receivers out of
/// range or in a cycle, and non-finite values.
///
/// The curves read only the river cells, every cell downstream of a river cell made one
/// (a river flows on to its outlet): this is [`grid_rivers_sparse`] over
/// [`river_cells`].
pub fn grid_rivers(
    grid: Grid,
    receivers: &[u32],
    discharge: &[f32],
    rivers: &[u8],
    surface: &[f32],
    p: &RiverCurveParams,
) -> Result<Vec<River>> {
    p.validate("river_curves")?;
    let cells = river_cells(grid, receivers, discharge, rivers, surface)?;
    grid_rivers_sparse(grid, cells, p)
}

/// The cells [`grid_rivers`] reads (see [`grid_rivers_sparse`]): the cells of `rivers`
/// and every cell downstream of them, in index order. Errors as [`grid_rivers`].
pub fn river_cells(
    grid: Grid,
    receivers: &[u32],
    discharge: &[f32],
    rivers: &[u8],
    surface: &[f32],
) -> Result<Vec<RiverCell>> {
    let n = grid.len();
    for (field, len) in [
        ("receivers", receivers.len()),
        ("discharge", discharge.len()),
        ("rivers", rivers.len()),
        ("surface", surface.len()),
    ] {
        if len != n {
            return Err(OrogenError::invalid(
                field,
                format!("one value per cell expected ({n}), got {len}"),
            ));
        }
    }
    if let Some(i) = receivers.iter().position(|&r| r as usize >= n) {
        return Err(OrogenError::invalid(
            format!("receivers[{i}]"),
            format!("{} names a cell beyond the {n} cells", receivers[i]),
        ));
    }
    for (field, values) in [("discharge", discharge), ("surface", surface)] {
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(OrogenError::invalid(
                format!("{field}[{i}]"),
                format!("must be finite, got {}", values[i]),
            ));
        }
    }
    // A river flows on to its outlet: donors come after their receivers in the stack.
    let stack = stream_order(receivers)?;
    let mut river: Vec<bool> = rivers.iter().map(|&m| m != 0).collect();
    for &c in stack.iter().rev() {
        let c = c as usize;
        if river[c] {
            river[receivers[c] as usize] = true;
        }
    }
    drop(stack);
    Ok((0..n)
        .filter(|&i| river[i])
        .map(|i| RiverCell {
            cell: i as u32,
            receiver: receivers[i],
            discharge: discharge[i],
            surface: surface[i],
        })
        .collect())
}

/// The river curves of [`grid_rivers`] from the river cells alone, in any order: every
/// cell downstream of a river cell must be one of `cells` (as [`river_cells`] gives
/// them), so that a tiled bake sends only its river cells to the rank that draws the
/// curves. The same curves, bit for bit, as [`grid_rivers`] over the whole maps: the
/// whole map's stream order restricted to the river cells is the river cells' own (a
/// breadth-first walk from the outlets, donors in index order), and nothing else of the
/// map is read. Errors naming `cells[k]` for a cell or receiver beyond the grid, a cell
/// given twice, a receiver that is not a river cell, a cycle, or non-finite values.
pub fn grid_rivers_sparse(
    grid: Grid,
    mut cells: Vec<RiverCell>,
    p: &RiverCurveParams,
) -> Result<Vec<River>> {
    // Cordonnier et al. 2016 §7: rivers from the stream graph's elevation and drainage.
    p.validate("river_curves")?;
    cells.sort_unstable_by_key(|c| c.cell);
    let n = grid.len();
    for (k, c) in cells.iter().enumerate() {
        if c.cell as usize >= n || c.receiver as usize >= n {
            return Err(OrogenError::invalid(
                format!("cells[{k}]"),
                format!(
                    "cell {} or its receiver {} lies beyond the {n} cells",
                    c.cell, c.receiver
                ),
            ));
        }
        if k > 0 && cells[k - 1].cell == c.cell {
            return Err(OrogenError::invalid(
                format!("cells[{k}]"),
                format!("cell {} is given twice", c.cell),
            ));
        }
        if !(c.discharge.is_finite() && c.surface.is_finite()) {
            return Err(OrogenError::invalid(
                format!("cells[{k}]"),
                format!(
                    "discharge {} and surface {} must be finite",
                    c.discharge, c.surface
                ),
            ));
        }
    }
    // The cells' receivers as positions in `cells` (index order is kept, so every order
    // and tie below is the whole map's).
    let local = |cell: u32| cells.binary_search_by_key(&cell, |c| c.cell).ok();
    let mut receivers: Vec<u32> = buffer(cells.len(), 0, "river receivers")?;
    for (k, c) in cells.iter().enumerate() {
        let Some(r) = local(c.receiver) else {
            return Err(OrogenError::invalid(
                format!("cells[{k}]"),
                format!(
                    "the receiver {} of river cell {} is not a river cell (every cell \
                     downstream of a river cell is one)",
                    c.receiver, c.cell
                ),
            ));
        };
        receivers[k] = r as u32;
    }
    let discharge: Vec<f32> = cells.iter().map(|c| c.discharge).collect();
    let surface: Vec<f32> = cells.iter().map(|c| c.surface).collect();
    let index: Vec<u32> = cells.iter().map(|c| c.cell).collect();
    drop(cells);
    trace(grid, &index, &receivers, &discharge, &surface, p)
}

/// [`grid_rivers_sparse`] over its river cells: `index` their grid cells (ascending),
/// `receivers` positions in `index`, closed downstream.
fn trace(
    grid: Grid,
    index: &[u32],
    receivers: &[u32],
    discharge: &[f32],
    surface: &[f32],
    p: &RiverCurveParams,
) -> Result<Vec<River>> {
    let n = index.len();
    let stack = stream_order(receivers).map_err(|_| {
        OrogenError::invalid(
            "cells",
            "the receivers of the river cells hold a cycle (some never reach an outlet)",
        )
    })?;
    let order = strahler_orders(receivers, vec![true; n], &stack)?;
    // Beds: the water surface, lowered to the lowest river donor's bed.
    let mut bed = surface.to_vec();
    for &c in stack.iter().rev() {
        let c = c as usize;
        let r = receivers[c] as usize;
        if order[c] > 0 && r != c && bed[c] < bed[r] {
            bed[r] = bed[c];
        }
    }

    // Main donors and river donor counts (junctions have two or more).
    const NONE: u32 = u32::MAX;
    let mut main: Vec<u32> = buffer(n, NONE, "river main donors")?;
    let mut donors: Vec<u8> = buffer(n, 0, "river donor counts")?;
    for i in 0..n {
        let r = receivers[i] as usize;
        if order[i] == 0 || r == i {
            continue;
        }
        donors[r] = donors[r].saturating_add(1);
        let m = main[r];
        if m == NONE || discharge[i] > discharge[m as usize] {
            main[r] = i as u32;
        }
    }

    // Chains from each source, smoothed downstream first: sorted by where they end in the
    // stack (a chain ending at an outlet before those joining it there).
    let mut rank: Vec<u32> = buffer(n, 0, "stream ranks")?;
    for (k, &c) in stack.iter().enumerate() {
        rank[c as usize] = k as u32;
    }
    drop(stack);
    let mut chains: Vec<(u32, bool, Vec<u32>)> = Vec::new();
    for head in 0..n {
        if order[head] == 0 || donors[head] > 0 {
            continue;
        }
        let mut nodes = vec![head as u32];
        let mut c = head;
        let mut joins = false;
        loop {
            let r = receivers[c] as usize;
            if r == c {
                break;
            }
            nodes.push(r as u32);
            if main[r] != c as u32 {
                joins = true;
                break;
            }
            c = r;
        }
        if nodes.len() >= 2 {
            chains.push((rank[*nodes.last().unwrap_or(&0) as usize], joins, nodes));
        }
    }
    drop(rank);
    chains.sort_unstable_by_key(|c| (c.0, c.1, c.2[0]));

    // Smoothed positions, river cells only (slot per river cell).
    let mut slot: Vec<u32> = buffer(n, NONE, "river slots")?;
    let mut count = 0u32;
    for (s, &o) in slot.iter_mut().zip(&order) {
        if o > 0 {
            *s = count;
            count += 1;
        }
    }
    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    let w = grid.width;
    let centre = |i: u32| {
        let i = index[i as usize] as usize;
        [(i % w) as f64 * dx, (i / w) as f64 * dy]
    };
    let mut pos: Vec<[f64; 2]> = buffer(count as usize, [0.0; 2], "river positions")?;
    let h = p.window as usize;
    let mut raw: Vec<[f64; 2]> = Vec::new();
    for (_, joins, nodes) in &chains {
        let m = nodes.len();
        raw.clear();
        raw.extend(nodes.iter().map(|&i| centre(i)));
        if *joins {
            // The river it joins has been smoothed: end on it.
            raw[m - 1] = pos[slot[nodes[m - 1] as usize] as usize];
        }
        let own = if *joins { m - 1 } else { m };
        for j in 0..own {
            let hj = h.min(j).min(m - 1 - j);
            let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
            for o in 0..=2 * hj {
                let wgt = (hj + 1 - o.abs_diff(hj)) as f64;
                let q = raw[j + o - hj];
                sx += wgt * q[0];
                sy += wgt * q[1];
                sw += wgt;
            }
            pos[slot[nodes[j] as usize] as usize] = [sx / sw, sy / sw];
        }
    }
    drop(chains);

    // Curves through every reach's control points.
    let levels = 1usize << p.smoothing;
    let spacing = p.spacing as usize;
    let reaches = reaches(receivers, &order)?;
    let mut out: Vec<River> = Vec::with_capacity(reaches.len());
    let mut kept: Vec<usize> = Vec::new();
    for nodes in reaches {
        let m = nodes.len();
        kept.clear();
        kept.push(0);
        let mut a = 0;
        for b in 1..m {
            let forced = b == m - 1 || donors[nodes[b] as usize] >= 2;
            if !forced {
                continue;
            }
            let g = b - a;
            let spans = ((g as f64 / spacing as f64).round() as usize).max(1);
            for s in 1..spans {
                kept.push(a + (s * g + spans / 2) / spans);
            }
            kept.push(b);
            a = b;
        }
        let ctrl: Vec<[f64; 2]> = kept
            .iter()
            .map(|&j| pos[slot[nodes[j] as usize] as usize])
            .collect();
        // Bed and discharge at a fractional node index along the reach.
        let at = |f: f64| {
            let j = (f.floor() as usize).min(m - 1);
            let t = f - j as f64;
            let (a, b) = (nodes[j] as usize, nodes[(j + 1).min(m - 1)] as usize);
            (
                lerp(bed[a] as f64, bed[b] as f64, t),
                lerp(discharge[a] as f64, discharge[b] as f64, t),
            )
        };
        let k = ctrl.len();
        let count = (k - 1) * levels + 1;
        let mut points = Vec::with_capacity(count);
        let mut q = Vec::with_capacity(count);
        let mut low = f64::INFINITY;
        let mut push = |xy: [f64; 2], f: f64| {
            let (z, d) = at(f);
            low = low.min(z);
            points.push([xy[0], xy[1], low]);
            q.push(d as f32);
        };
        for s in 0..k - 1 {
            let p0 = if s == 0 {
                mirror(ctrl[1], ctrl[0])
            } else {
                ctrl[s - 1]
            };
            let p3 = if s + 2 < k {
                ctrl[s + 2]
            } else {
                mirror(ctrl[k - 2], ctrl[k - 1])
            };
            for j in 0..levels {
                let t = j as f64 / levels as f64;
                let xy = if j == 0 {
                    ctrl[s]
                } else {
                    catmull_rom(p0, ctrl[s], ctrl[s + 1], p3, t)
                };
                push(xy, lerp(kept[s] as f64, kept[s + 1] as f64, t));
            }
        }
        push(ctrl[k - 1], (m - 1) as f64);
        let width = q
            .iter()
            .map(|&d| p.width_coeff * d.max(0.0).sqrt())
            .collect();
        out.push(River {
            points,
            discharge: q,
            width,
            order: order[nodes[0] as usize],
        });
    }
    Ok(out)
}

/// One straight piece of a curve, as the carve and the channel field read it.
struct Segment {
    a: [f64; 2],
    b: [f64; 2],
    /// Bed at each end, metres.
    z: [f64; 2],
    /// Floor half width at each end, metres.
    half: [f64; 2],
    /// Bank width at each end, metres.
    bank: [f64; 2],
}

impl Segment {
    /// The closest point's parameter (0 at `a`, 1 at `b`) and distance to `q`.
    #[inline]
    fn closest(&self, q: [f64; 2]) -> (f64, f64) {
        let (ex, ey) = (self.b[0] - self.a[0], self.b[1] - self.a[1]);
        let len2 = ex * ex + ey * ey;
        let t = if len2 > 0.0 {
            (((q[0] - self.a[0]) * ex + (q[1] - self.a[1]) * ey) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (px, py) = (self.a[0] + t * ex - q[0], self.a[1] + t * ey - q[1]);
        (t, math::hypot(px, py))
    }

    /// How far from the segment [`carve`] may cut: floor and bank, metres.
    fn reach(&self) -> f64 {
        (self.half[0] + self.bank[0]).max(self.half[1] + self.bank[1])
    }
}

/// The segments of `rivers` with their floors and banks (see the module), checked.
fn segments(grid: Grid, rivers: &[River], p: &RiverCurveParams) -> Result<Vec<Segment>> {
    p.validate("river_curves")?;
    let cell = grid.dx().max(grid.dy()) as f64;
    let min_half = p.min_half_width as f64 * cell;
    let half = |w: f32| (0.5 * w as f64).max(min_half);
    let bank = |w: f32| (p.bank_ratio as f64 * w as f64).max(cell);
    let mut out = Vec::new();
    for (k, r) in rivers.iter().enumerate() {
        let m = r.points.len();
        if r.width.len() != m {
            return Err(OrogenError::invalid(
                format!("rivers[{k}].width"),
                format!("one width per point expected ({m}), got {}", r.width.len()),
            ));
        }
        let bad = r.points.iter().flatten().any(|v| !v.is_finite())
            || r.width.iter().any(|w| !(w.is_finite() && *w >= 0.0));
        if bad {
            return Err(OrogenError::invalid(
                format!("rivers[{k}]"),
                "points and widths must be finite, widths ≥ 0",
            ));
        }
        for i in 0..m.saturating_sub(1) {
            let (qa, qb) = (r.points[i], r.points[i + 1]);
            let (wa, wb) = (r.width[i], r.width[i + 1]);
            out.push(Segment {
                a: [qa[0], qa[1]],
                b: [qb[0], qb[1]],
                z: [qa[2], qb[2]],
                half: [half(wa), half(wb)],
                bank: [bank(wa), bank(wb)],
            });
        }
    }
    Ok(out)
}

/// Calls `visit(cell, centre, segment)` for every cell of `window` within
/// `reach(segment)` metres of each segment's bounding box, segment by segment (`cell` the
/// grid's index). The callers combine by minimum or maximum, which is independent of the
/// order: the result is the same on any thread count and over any cut of the grid into
/// windows, and the work grows with the rivers' length, not the grid's area.
fn per_segment(
    grid: Grid,
    window: Rect,
    segs: &[Segment],
    reach: impl Fn(&Segment) -> f64,
    mut visit: impl FnMut(usize, [f64; 2], &Segment),
) {
    let w = grid.width;
    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    for s in segs {
        let Some(((x0, x1), (y0, y1))) = cells_near(grid, window, s, reach(s)) else {
            continue;
        };
        for y in y0..=y1 {
            for x in x0..=x1 {
                visit(y * w + x, [x as f64 * dx, y as f64 * dy], s);
            }
        }
    }
}

/// The columns and rows of `window` within `r` metres of `s`'s bounding box, or `None`.
fn cells_near(
    grid: Grid,
    window: Rect,
    s: &Segment,
    r: f64,
) -> Option<((usize, usize), (usize, usize))> {
    if window.is_empty() {
        return None;
    }
    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    let cells = |lo: f64, hi: f64, d: f64, from: usize, n: usize| {
        let a = (((lo - r) / d).floor().max(0.0) as usize).max(from);
        let b = (((hi + r) / d).ceil().max(0.0) as usize).min(from + n - 1);
        (a <= b).then_some((a, b))
    };
    let x = cells(
        s.a[0].min(s.b[0]),
        s.a[0].max(s.b[0]),
        dx,
        window.x0,
        window.w,
    )?;
    let y = cells(
        s.a[1].min(s.b[1]),
        s.a[1].max(s.b[1]),
        dy,
        window.y0,
        window.h,
    )?;
    Some((x, y))
}

/// The whole of `grid` as a window.
fn whole(grid: Grid) -> Rect {
    Rect {
        x0: 0,
        y0: 0,
        w: grid.width,
        h: grid.height,
    }
}

/// Carves `rivers` into `heights` (one per cell of `grid`, metres), Génevaux et al. 2013's
/// river primitive after Cordonnier et al. 2016 §7: within the floor's half width
/// (`width / 2`, at least `min_half_width` cells) the ground comes down to the bed; over
/// the bank (`bank_ratio · width`, at least one cell) beyond it, a smoothstep weight `s`
/// fades the cut out: `h − s·max(0, h − bed)`. Each cell takes the lowest result over the
/// segments near it, so the ground is never raised and the order of the rivers does not
/// matter. Cells where `keep` is true are left as they are. Returns how many cells were
/// lowered.
pub fn carve(
    grid: Grid,
    heights: &mut [f32],
    rivers: &[River],
    p: &RiverCurveParams,
    keep: Option<&[bool]>,
) -> Result<usize> {
    carve_window(grid, whole(grid), heights, rivers, p, keep)
}

/// [`carve`] over the cells of `window` alone: `heights` (and `keep`) hold the window's
/// cells, row by row. Each cell's cut reads only its own height and the segments near it,
/// so carving every window of a cut of the grid gives [`carve`]'s heights bit for bit
/// (what a tiled bake's ranks do, each with the curves that reach its tile).
pub fn carve_window(
    grid: Grid,
    window: Rect,
    heights: &mut [f32],
    rivers: &[River],
    p: &RiverCurveParams,
    keep: Option<&[bool]>,
) -> Result<usize> {
    let fits = window.x0 + window.w <= grid.width && window.y0 + window.h <= grid.height;
    if !fits || heights.len() != window.len() {
        return Err(OrogenError::invalid(
            "heights",
            format!(
                "one value per cell of the {}x{} window at ({}, {}) of the {}x{} grid \
                 expected ({}), got {}",
                window.w,
                window.h,
                window.x0,
                window.y0,
                grid.width,
                grid.height,
                window.len(),
                heights.len()
            ),
        ));
    }
    let segs = segments(grid, rivers, p)?;
    let before = heights.to_vec();
    let w = grid.width;
    per_segment(
        grid,
        window,
        &segs,
        |s| s.reach(),
        |i, q, s| {
            let i = (i / w - window.y0) * window.w + (i % w - window.x0);
            if keep.is_some_and(|k| k.get(i) == Some(&true)) {
                return;
            }
            let h = before[i] as f64;
            let (t, d) = s.closest(q);
            let half = lerp(s.half[0], s.half[1], t);
            let bank = lerp(s.bank[0], s.bank[1], t);
            let z = lerp(s.z[0], s.z[1], t);
            if d >= half + bank || z >= h {
                return;
            }
            let wgt = if d <= half {
                1.0
            } else {
                let u = 1.0 - (d - half) / bank;
                u * u * (3.0 - 2.0 * u)
            };
            let cut = (h - wgt * (h - z)) as f32;
            if cut < heights[i] {
                heights[i] = cut;
            }
        },
    );
    Ok(heights.iter().zip(&before).filter(|(a, b)| a != b).count())
}

/// The runs of `river` whose segments [`carve_window`] over `window` reads (their carve
/// reach, floor and bank, meets the window), each as a river of its own points (so each
/// segment's ends, widths and beds are the whole curve's): carving `window` with them
/// gives what carving it with `river` does. Empty when no segment comes near. A tiled
/// bake sends each tile only these.
pub fn clip_to_window(
    grid: Grid,
    window: Rect,
    river: &River,
    p: &RiverCurveParams,
) -> Result<Vec<River>> {
    let segs = segments(grid, std::slice::from_ref(river), p)?;
    let near: Vec<bool> = segs
        .iter()
        .map(|s| cells_near(grid, window, s, s.reach()).is_some())
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < near.len() {
        if !near[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < near.len() && near[j + 1] {
            j += 1;
        }
        // Segments i..=j: points i..=j + 1.
        out.push(River {
            points: river.points[i..=j + 1].to_vec(),
            discharge: river.discharge[i..=j + 1].to_vec(),
            width: river.width[i..=j + 1].to_vec(),
            order: river.order,
        });
        i = j + 1;
    }
    Ok(out)
}

/// Cells over which a drawn river widens from its source ([`channel_field`]).
pub const HEAD_CELLS: f64 = 4.0;

/// A drawn river's width at its source, as a share of its width [`HEAD_CELLS`] on.
pub const HEAD_SHARE: f64 = 0.3;

/// Narrows the floor of `segs` (a reach's from its source) towards the source: to
/// [`HEAD_SHARE`] there, easing up to the full width `length` metres on.
fn taper_head(segs: &mut [Segment], length: f64) {
    let share = |s: f64| {
        let x = (s / length).clamp(0.0, 1.0);
        HEAD_SHARE + (1.0 - HEAD_SHARE) * x * x * (3.0 - 2.0 * x)
    };
    let mut along = 0.0;
    for seg in segs {
        if along >= length {
            break;
        }
        let len = ((seg.b[0] - seg.a[0]).powi(2) + (seg.b[1] - seg.a[1]).powi(2)).sqrt();
        seg.half[0] *= share(along);
        along += len;
        seg.half[1] *= share(along);
    }
}

/// The channel field of `rivers` on `grid`, one value per cell, metres: the floor's half
/// width (`width / 2`, at least `min_half_width` cells, as [`carve`] cuts it) at the
/// nearest point of a segment minus the distance to that point, the largest over the
/// segments; positive inside a channel, 0 on its edge, and at least minus one cell (cells
/// farther away hold −1 cell). Filtered bilinearly and cut at 0 it draws the water of the
/// curves with sub-cell smooth banks (what `bake::water_display`'s channel does from the
/// D8 links). A reach from a source (order 1) narrows over its first [`HEAD_CELLS`] to
/// [`HEAD_SHARE`] of its width at the source, so drawn rivers begin in a point rather
/// than at their full width (at least 1.5 cells: on coarse cells a blunt stub).
pub fn channel_field(grid: Grid, rivers: &[River], p: &RiverCurveParams) -> Result<Vec<f32>> {
    let mut segs = segments(grid, rivers, p)?;
    let cell = grid.dx().max(grid.dy()) as f64;
    let mut first = 0;
    for r in rivers {
        let n = r.points.len().saturating_sub(1);
        if r.order == 1 {
            taper_head(&mut segs[first..first + n], HEAD_CELLS * cell);
        }
        first += n;
    }
    let mut out: Vec<f32> = buffer(grid.len(), -cell as f32, "river channel field")?;
    per_segment(
        grid,
        whole(grid),
        &segs,
        |s| s.half[0].max(s.half[1]) + cell,
        |i, q, s| {
            let (t, d) = s.closest(q);
            let v = (lerp(s.half[0], s.half[1], t) - d) as f32;
            if v > out[i] {
                out[i] = v;
            }
        },
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dense tracing as it was before the sparse entry point (issue #41), kept as
    /// the reference the sparse one must equal bit for bit.
    fn reference(
        grid: Grid,
        receivers: &[u32],
        discharge: &[f32],
        rivers: &[u8],
        surface: &[f32],
        p: &RiverCurveParams,
    ) -> Result<Vec<River>> {
        // Cordonnier et al. 2016 §7: rivers from the stream graph's elevation and drainage.
        p.validate("river_curves")?;
        let n = grid.len();
        for (field, len) in [
            ("receivers", receivers.len()),
            ("discharge", discharge.len()),
            ("rivers", rivers.len()),
            ("surface", surface.len()),
        ] {
            if len != n {
                return Err(OrogenError::invalid(
                    field,
                    format!("one value per cell expected ({n}), got {len}"),
                ));
            }
        }
        if let Some(i) = receivers.iter().position(|&r| r as usize >= n) {
            return Err(OrogenError::invalid(
                format!("receivers[{i}]"),
                format!("{} names a cell beyond the {n} cells", receivers[i]),
            ));
        }
        for (field, values) in [("discharge", discharge), ("surface", surface)] {
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(OrogenError::invalid(
                    format!("{field}[{i}]"),
                    format!("must be finite, got {}", values[i]),
                ));
            }
        }
        let stack = stream_order(receivers)?;
        let order = strahler_orders(receivers, rivers.iter().map(|&m| m != 0).collect(), &stack)?;

        // Beds: the water surface, lowered to the lowest river donor's bed.
        let mut bed = surface.to_vec();
        for &c in stack.iter().rev() {
            let c = c as usize;
            let r = receivers[c] as usize;
            if order[c] > 0 && r != c && bed[c] < bed[r] {
                bed[r] = bed[c];
            }
        }

        // Main donors and river donor counts (junctions have two or more).
        const NONE: u32 = u32::MAX;
        let mut main: Vec<u32> = buffer(n, NONE, "river main donors")?;
        let mut donors: Vec<u8> = buffer(n, 0, "river donor counts")?;
        for i in 0..n {
            let r = receivers[i] as usize;
            if order[i] == 0 || r == i {
                continue;
            }
            donors[r] = donors[r].saturating_add(1);
            let m = main[r];
            if m == NONE || discharge[i] > discharge[m as usize] {
                main[r] = i as u32;
            }
        }

        // Chains from each source, smoothed downstream first: sorted by where they end in the
        // stack (a chain ending at an outlet before those joining it there).
        let mut rank: Vec<u32> = buffer(n, 0, "stream ranks")?;
        for (k, &c) in stack.iter().enumerate() {
            rank[c as usize] = k as u32;
        }
        drop(stack);
        let mut chains: Vec<(u32, bool, Vec<u32>)> = Vec::new();
        for head in 0..n {
            if order[head] == 0 || donors[head] > 0 {
                continue;
            }
            let mut nodes = vec![head as u32];
            let mut c = head;
            let mut joins = false;
            loop {
                let r = receivers[c] as usize;
                if r == c {
                    break;
                }
                nodes.push(r as u32);
                if main[r] != c as u32 {
                    joins = true;
                    break;
                }
                c = r;
            }
            if nodes.len() >= 2 {
                chains.push((rank[*nodes.last().unwrap_or(&0) as usize], joins, nodes));
            }
        }
        drop(rank);
        chains.sort_unstable_by_key(|c| (c.0, c.1, c.2[0]));

        // Smoothed positions, river cells only (slot per river cell).
        let mut slot: Vec<u32> = buffer(n, NONE, "river slots")?;
        let mut count = 0u32;
        for (s, &o) in slot.iter_mut().zip(&order) {
            if o > 0 {
                *s = count;
                count += 1;
            }
        }
        let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
        let w = grid.width;
        let centre = |i: u32| [(i as usize % w) as f64 * dx, (i as usize / w) as f64 * dy];
        let mut pos: Vec<[f64; 2]> = buffer(count as usize, [0.0; 2], "river positions")?;
        let h = p.window as usize;
        let mut raw: Vec<[f64; 2]> = Vec::new();
        for (_, joins, nodes) in &chains {
            let m = nodes.len();
            raw.clear();
            raw.extend(nodes.iter().map(|&i| centre(i)));
            if *joins {
                // The river it joins has been smoothed: end on it.
                raw[m - 1] = pos[slot[nodes[m - 1] as usize] as usize];
            }
            let own = if *joins { m - 1 } else { m };
            for j in 0..own {
                let hj = h.min(j).min(m - 1 - j);
                let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
                for o in 0..=2 * hj {
                    let wgt = (hj + 1 - o.abs_diff(hj)) as f64;
                    let q = raw[j + o - hj];
                    sx += wgt * q[0];
                    sy += wgt * q[1];
                    sw += wgt;
                }
                pos[slot[nodes[j] as usize] as usize] = [sx / sw, sy / sw];
            }
        }
        drop(chains);

        // Curves through every reach's control points.
        let levels = 1usize << p.smoothing;
        let spacing = p.spacing as usize;
        let reaches = reaches(receivers, &order)?;
        let mut out: Vec<River> = Vec::with_capacity(reaches.len());
        let mut kept: Vec<usize> = Vec::new();
        for nodes in reaches {
            let m = nodes.len();
            kept.clear();
            kept.push(0);
            let mut a = 0;
            for b in 1..m {
                let forced = b == m - 1 || donors[nodes[b] as usize] >= 2;
                if !forced {
                    continue;
                }
                let g = b - a;
                let spans = ((g as f64 / spacing as f64).round() as usize).max(1);
                for s in 1..spans {
                    kept.push(a + (s * g + spans / 2) / spans);
                }
                kept.push(b);
                a = b;
            }
            let ctrl: Vec<[f64; 2]> = kept
                .iter()
                .map(|&j| pos[slot[nodes[j] as usize] as usize])
                .collect();
            // Bed and discharge at a fractional node index along the reach.
            let at = |f: f64| {
                let j = (f.floor() as usize).min(m - 1);
                let t = f - j as f64;
                let (a, b) = (nodes[j] as usize, nodes[(j + 1).min(m - 1)] as usize);
                (
                    lerp(bed[a] as f64, bed[b] as f64, t),
                    lerp(discharge[a] as f64, discharge[b] as f64, t),
                )
            };
            let k = ctrl.len();
            let count = (k - 1) * levels + 1;
            let mut points = Vec::with_capacity(count);
            let mut q = Vec::with_capacity(count);
            let mut low = f64::INFINITY;
            let mut push = |xy: [f64; 2], f: f64| {
                let (z, d) = at(f);
                low = low.min(z);
                points.push([xy[0], xy[1], low]);
                q.push(d as f32);
            };
            for s in 0..k - 1 {
                let p0 = if s == 0 {
                    mirror(ctrl[1], ctrl[0])
                } else {
                    ctrl[s - 1]
                };
                let p3 = if s + 2 < k {
                    ctrl[s + 2]
                } else {
                    mirror(ctrl[k - 2], ctrl[k - 1])
                };
                for j in 0..levels {
                    let t = j as f64 / levels as f64;
                    let xy = if j == 0 {
                        ctrl[s]
                    } else {
                        catmull_rom(p0, ctrl[s], ctrl[s + 1], p3, t)
                    };
                    push(xy, lerp(kept[s] as f64, kept[s + 1] as f64, t));
                }
            }
            push(ctrl[k - 1], (m - 1) as f64);
            let width = q
                .iter()
                .map(|&d| p.width_coeff * d.max(0.0).sqrt())
                .collect();
            out.push(River {
                points,
                discharge: q,
                width,
                order: order[nodes[0] as usize],
            });
        }
        Ok(out)
    }

    /// Random stream forests (receivers to a neighbour or to the cell itself, acyclic by
    /// a random order of the cells), random masks with random discharge and surface, and
    /// random parameters: the curves of the whole maps, of the river cells alone given in
    /// any order, and of the reference are the same bits.
    #[test]
    fn the_sparse_tracing_equals_the_dense_on_random_inputs() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
        let mut drawn = 0;
        for case in 0..60 {
            let (w, h) = (rng.random_range(2..40), rng.random_range(2..40));
            let grid = Grid::new(w, h, rng.random_range(1.0..50.0)).unwrap();
            let n = grid.len();
            // A random potential: each cell drains to its lowest neighbour below it, or
            // to itself (an outlet).
            let z: Vec<f32> = (0..n).map(|_| rng.random_range(0.0..100.0)).collect();
            let recv: Vec<u32> = (0..n)
                .map(|i| {
                    let (x, y) = ((i % w) as i64, (i / w) as i64);
                    let mut best = i;
                    for &(ox, oy) in &crate::neighbourhood::raster::OFFSETS {
                        let (a, b) = (x + ox as i64, y + oy as i64);
                        if a < 0 || b < 0 || a >= w as i64 || b >= h as i64 {
                            continue;
                        }
                        let j = (b * w as i64 + a) as usize;
                        if z[j] < z[best] {
                            best = j;
                        }
                    }
                    best as u32
                })
                .collect();
            let share = rng.random_range(0.0..1.0);
            let mask: Vec<u8> = (0..n).map(|_| u8::from(rng.random_bool(share))).collect();
            // Ties in discharge now and then (the main donor's tie-break).
            let q: Vec<f32> = (0..n)
                .map(|_| rng.random_range(0..20) as f32 * 1e4)
                .collect();
            let surface: Vec<f32> = (0..n).map(|i| z[i] + rng.random_range(0.0..2.0)).collect();
            let p = RiverCurveParams {
                window: rng.random_range(0..6),
                spacing: rng.random_range(1..6),
                smoothing: rng.random_range(0..4),
                ..Default::default()
            };
            let want = reference(grid, &recv, &q, &mask, &surface, &p).unwrap();
            let dense = grid_rivers(grid, &recv, &q, &mask, &surface, &p).unwrap();
            let mut cells = river_cells(grid, &recv, &q, &mask, &surface).unwrap();
            // Any order: as the ranks of a tiled bake send them.
            for k in (1..cells.len()).rev() {
                cells.swap(k, rng.random_range(0..=k));
            }
            let sparse = grid_rivers_sparse(grid, cells, &p).unwrap();
            let bits = |r: &[River]| {
                r.iter()
                    .map(|r| {
                        let pts: Vec<[u64; 3]> =
                            r.points.iter().map(|p| p.map(f64::to_bits)).collect();
                        let q: Vec<u32> = r.discharge.iter().map(|v| v.to_bits()).collect();
                        let w: Vec<u32> = r.width.iter().map(|v| v.to_bits()).collect();
                        (pts, q, w, r.order)
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&dense), bits(&want), "case {case}: dense");
            assert_eq!(bits(&sparse), bits(&want), "case {case}: sparse");
            drawn += want.len();
        }
        assert!(drawn > 100, "{drawn} rivers drawn");
    }

    /// The sparse entry point refuses what it cannot trace, naming the cell.
    #[test]
    fn the_sparse_tracing_refuses_an_open_or_bad_river() {
        let grid = Grid::new(4, 3, 10.0).unwrap();
        let cell = |cell, receiver| RiverCell {
            cell,
            receiver,
            discharge: 1.0,
            surface: 0.0,
        };
        let p = RiverCurveParams::default();
        let err =
            |cells: Vec<RiverCell>| grid_rivers_sparse(grid, cells, &p).unwrap_err().to_string();
        // Cell 1's receiver, 2, is not given.
        assert!(err(vec![cell(0, 1), cell(1, 2)]).contains("receiver 2 of river cell 1"));
        assert!(err(vec![cell(0, 0), cell(0, 0)]).contains("given twice"));
        assert!(err(vec![cell(12, 12)]).contains("beyond the 12 cells"));
        assert!(err(vec![cell(0, 1), cell(1, 0)]).contains("cycle"));
        let mut bad = cell(0, 0);
        bad.surface = f32::NAN;
        assert!(err(vec![bad]).contains("finite"));
    }

    /// Carving every window of a cut of the grid, each with only the curves that reach
    /// it, gives the whole carve's bits.
    #[test]
    fn carving_windows_equals_the_whole_carve() {
        let grid = Grid::new(61, 47, 10.0).unwrap();
        let n = grid.len();
        // A river bending across the grid, on a sloping plane.
        let ground: Vec<f32> = (0..n)
            .map(|i| 100.0 + (i % 61) as f32 * 0.7 + math::sin((i / 61) as f32 * 0.3) * 5.0)
            .collect();
        let points: Vec<[f64; 3]> = (0..60)
            .map(|k| {
                let x = k as f64 * 10.0;
                [
                    x,
                    230.0 + 120.0 * math::sin(x / 150.0),
                    95.0 + k as f64 * 0.5,
                ]
            })
            .collect();
        let river = River {
            discharge: vec![4e7; 60],
            width: (0..60).map(|k| 5.0 + k as f32).collect(),
            points,
            order: 2,
        };
        let p = RiverCurveParams::default();
        let mut whole_map = ground.clone();
        let changed = carve(grid, &mut whole_map, std::slice::from_ref(&river), &p, None).unwrap();
        assert!(changed > 200, "{changed} cells carved");
        for (cols, rows) in [(2, 2), (3, 3), (4, 1)] {
            let mut tiled = ground.clone();
            let mut skipped = 0;
            for r in 0..rows {
                for c in 0..cols {
                    let (x0, x1) = (c * 61 / cols, (c + 1) * 61 / cols);
                    let (y0, y1) = (r * 47 / rows, (r + 1) * 47 / rows);
                    let window = Rect {
                        x0,
                        y0,
                        w: x1 - x0,
                        h: y1 - y0,
                    };
                    let mut tile: Vec<f32> = (y0..y1)
                        .flat_map(|y| tiled[y * 61 + x0..y * 61 + x1].to_vec())
                        .collect();
                    let near = clip_to_window(grid, window, &river, &p).unwrap();
                    skipped += usize::from(near.is_empty());
                    carve_window(grid, window, &mut tile, &near, &p, None).unwrap();
                    for (y, row) in tile.chunks_exact(window.w).enumerate() {
                        let at = (y0 + y) * 61 + x0;
                        tiled[at..at + window.w].copy_from_slice(row);
                    }
                }
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&tiled), bits(&whole_map), "{cols}x{rows}");
            if (cols, rows) == (3, 3) {
                assert!(skipped > 0, "every 3x3 tile is near the river");
            }
        }
    }

    /// A river on a tilted plane stepping east, east, south-east (slope 1/3 in cells): the
    /// curve runs near the straight line the steps stand for, not along 0° and 45°.
    /// A straight reach along row 10 from a source at column 5: its drawn channel is
    /// HEAD_SHARE of its half width at the source, the whole of it from HEAD_CELLS on; the
    /// same reach below a junction (order 2) is drawn at its full width from its start.
    #[test]
    fn a_river_from_a_source_is_drawn_narrowing_to_its_source() {
        let grid = Grid::new(40, 21, 10.0).unwrap();
        let reach = |order: u32| River {
            points: (5..=35).map(|x| [x as f64 * 10.0, 100.0, 0.0]).collect(),
            discharge: vec![1.0; 31],
            width: vec![30.0; 31],
            order,
        };
        let p = RiverCurveParams::default();
        let at = |f: &[f32], x: usize| f64::from(f[10 * 40 + x]);
        let head = channel_field(grid, &[reach(1)], &p).unwrap();
        let below = channel_field(grid, &[reach(2)], &p).unwrap();
        assert!(
            (at(&head, 5) - HEAD_SHARE * 15.0).abs() < 1e-4,
            "{}",
            at(&head, 5)
        );
        assert!((at(&below, 5) - 15.0).abs() < 1e-4);
        for x in 6..9 {
            assert!(at(&head, x) > at(&head, x - 1) && at(&head, x) < 15.0);
        }
        for x in 9..=35 {
            assert!(
                (at(&head, x) - 15.0).abs() < 1e-4,
                "column {x}: {}",
                at(&head, x)
            );
        }
    }

    #[test]
    fn a_staircase_becomes_a_straight_river() {
        let grid = Grid::new(64, 32, 10.0).unwrap();
        let n = grid.len();
        let mut recv: Vec<u32> = (0..n as u32).collect();
        let mut rivers = vec![0u8; n];
        let path: Vec<(usize, usize)> = (0..60).map(|x| (x, x / 3)).collect();
        for w in path.windows(2) {
            let (a, b) = (w[0].1 * 64 + w[0].0, w[1].1 * 64 + w[1].0);
            recv[a] = b as u32;
            rivers[a] = 1;
        }
        let last = path[59].1 * 64 + path[59].0;
        rivers[last] = 1;
        let q: Vec<f32> = (0..n).map(|i| 1e6 + (i % 64) as f32 * 1e5).collect();
        let surface: Vec<f32> = (0..n).map(|i| 1000.0 - (i % 64) as f32).collect();
        let r = grid_rivers(grid, &recv, &q, &rivers, &surface, &Default::default()).unwrap();
        assert_eq!(r.len(), 1);
        let pts = &r[0].points;
        assert_eq!(pts[0][..2], [0.0, 0.0]);
        assert_eq!(pts.last().unwrap()[..2], [590.0, 190.0]);
        let angle = math::atan(1.0f64 / 3.0);
        let mut off = 0.0;
        for w in pts.windows(2) {
            assert!(w[1][2] <= w[0][2], "the bed rises");
            let (ex, ey) = (w[1][0] - w[0][0], w[1][1] - w[0][1]);
            // Away from the ends, every segment runs within 12° of the line's direction.
            if w[0][0] > 60.0 && w[0][0] < 530.0 {
                let a = math::atan2(ey, ex);
                assert!((a - angle).abs() < 12f64.to_radians(), "{a} at {:?}", w[0]);
                off += 1.0;
            }
        }
        assert!(off > 20.0);
    }
}
