//! What lies beyond a terrain's edge, so a finite map is never a slab floating in the sea
//! or against the sky: a ring mesh from just inside the map's border out to the horizon.
//!
//! - [`Edge::Skirt`]: the land goes on, low in detail. The border's heights are carried
//!   outwards, smoothed along the border more the farther out they lie, going on at the
//!   ground's slope across the border and easing flat over [`EASE_CELLS`], then relaxed
//!   towards the border's mean height, with rolling ground as rough as the border less its
//!   tilt, coming in over a quarter map width and falling away with distance. The two
//!   inner rings take the terrain's own normals ([`terrain_normal`]), so the shading runs
//!   on across the seam.
//! - [`Edge::Coast`]: the land falls into the sea: from the border's heights down to
//!   [`COAST_DEPTH_M`] below sea level over [`COAST_RUN`] times the drop (9.5° on average,
//!   at most half the map's extent), leaving the border at the ground's own fall across it
//!   (up to three times the mean) and easing onto flat sea floor (a cubic Hermite
//!   profile); the sea plane covers it. (It fell fastest at the border over twice the
//!   drop, 27° on average and 45° at the border: the map's sides read as walls.)
//!
//! With a [`Look`], the skirt continues the terrain's own look too: the ground layers'
//! weights the terrain shows along its border (`ground_weights`, the terrain shader's
//! formulas) and, for a layered terrain, its surface colour are carried outwards as the
//! heights are (smoothed along the border more the farther out, relaxed towards the whole
//! map's mean look, so the land to the horizon looks like the map on average rather than
//! like its border alone), one set per vertex ([`Skirt::weights`], [`Skirt::colours`]).
//!
//! The innermost ring lies [`OVERLAP_CELLS`] cells inside the border and a little under the
//! ground, so the seam is hidden under the terrain from every side.

use crate::bake::ground_weights::{
    drainage_log_max, shown_weights_at, smoothstep, Ground, GroundInputs,
};
use crate::bake::rolling::rolling;
use crate::bake::skirt_rivers;
use crate::edit::ground_paint::LAYERS;
use crate::field::Grid;
use crate::math;
use crate::world::{names, MapData, World, STRATA_COLUMN_TEXELS};

/// How a terrain's edge is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    /// Nothing beyond the border.
    None,
    /// Low-detail land to the horizon.
    Skirt,
    /// A coast falling into the sea.
    Coast,
}

/// Cells inside the border where the skirt starts (under the terrain).
pub const OVERLAP_CELLS: f32 = 2.0;

/// How far under the terrain the overlapping ring lies, metres (at most half a cell).
pub const UNDER_M: f32 = 2.0;

/// Depth of the sea floor beyond a coast, metres below sea level.
pub const COAST_DEPTH_M: f32 = 150.0;

/// A coast's run over its drop (from the border to the sea floor): 6, a mean slope of 9.5°.
pub const COAST_RUN: f32 = 6.0;

/// The skirt's outer edge, in map extents from the border.
pub const REACH_EXTENTS: f32 = 200.0;

/// Cells beyond the border over which the skirt's heights blur along it more slowly than
/// its look, so the border's grooves run on and fade.
pub const NOTCH_CELLS: f32 = 16.0;

/// The largest ratio between the distances of two rings beyond where the rivers end
/// (the rings grow geometrically to the horizon).
pub const FAR_RATIO: f32 = 1.6;

/// Cells inside the border over which the ground's fall across the border is measured
/// (and samples along the border over which it is smoothed).
pub const GRADIENT_CELLS: f32 = 8.0;

/// Cells beyond the border over which a land skirt carries the border's slope on before it
/// eases flat (at most a quarter of the map's extent).
pub const EASE_CELLS: f32 = 16.0;

/// A skirt mesh in the terrain's local metres (x east, z south from the map's middle),
/// triangles wound clockwise seen from above (Godot's front faces).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skirt {
    pub positions: Vec<[f32; 3]>,
    pub normals: Vec<[f32; 3]>,
    pub indices: Vec<u32>,
    /// Per vertex, the ground layers' weights (summing to 1), with a [`Look`]; else empty.
    pub weights: Vec<[f32; LAYERS]>,
    /// Per vertex, a layered terrain's surface colour (sRGB, 0–1; alpha: how loose the
    /// ground is, as [`shown_colours`]), with a
    /// [`Look`] that has colours; else empty.
    pub colours: Vec<[f32; 4]>,
    /// How rough the terrain is along its border: the median slope (rise per metre) of its
    /// land within [`RELIEF_BAND_CELLS`] of the border ([`border_slope`]). The shader draws
    /// bumps with this median slope into the skirt's lighting, finer than its mesh: a
    /// smooth skirt lit evenly showed as a pale frame round a map of shaded hills. (The
    /// median, not the mean: a mesa's cliffs would make the plain beyond it all bumps.)
    pub relief_slope: f32,
    /// Rings of vertices, `positions.len() / rings` round each: under the terrain, on its
    /// border, then outwards.
    pub rings: usize,
    /// Per vertex, the channel value of the rivers that leave the map and run on over the
    /// skirt (half width minus distance, metres, as the terrain's `river_channel`) and how
    /// much their water shows (0 to 1; [`skirt_rivers::At`]), with a [`Look`] that has
    /// rivers of which some leave the map; else empty.
    pub channel: Vec<[f32; 2]>,
}

/// Cells inside the border over which [`Skirt::relief_slope`] is measured.
pub const RELIEF_BAND_CELLS: usize = 16;

/// The median slope (rise per metre, central differences) of the cells within
/// [`RELIEF_BAND_CELLS`] of the border (the border's own cells left out, where the
/// differences are one-sided) that stand above `sea_level` (the sea hides the rest); 0
/// when there is none.
pub fn border_slope(grid: Grid, height: &[f32], sea_level: f32) -> f32 {
    let (w, h) = (grid.width, grid.height);
    if w < 3 || h < 3 || height.len() != w * h {
        return 0.0;
    }
    let (dx, dy) = (grid.dx(), grid.dy());
    let band = RELIEF_BAND_CELLS.min(w / 2).min(h / 2).max(2);
    let mut slopes = Vec::new();
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let from_border = x.min(y).min(w - 1 - x).min(h - 1 - y);
            let above = height[y * w + x] > sea_level; // false for NaN too
            if from_border >= band || !above {
                continue;
            }
            let gx = (height[y * w + x + 1] - height[y * w + x - 1]) / (2.0 * dx);
            let gy = (height[(y + 1) * w + x] - height[(y - 1) * w + x]) / (2.0 * dy);
            let g = (gx * gx + gy * gy).sqrt();
            if g.is_finite() {
                slopes.push(g);
            }
        }
    }
    if slopes.is_empty() {
        return 0.0;
    }
    let mid = slopes.len() / 2;
    *slopes.select_nth_unstable_by(mid, f32::total_cmp).1
}

/// What the skirt carries outwards besides the heights: what the terrain's look is made of.
#[derive(Clone, Copy, Debug)]
pub struct Look<'a> {
    /// The maps the ground weights read, on the skirt's grid.
    pub inputs: GroundInputs<'a>,
    /// The shader's ground uniforms and the painted ground.
    pub ground: Ground<'a>,
    /// A layered terrain's surface colour per cell (sRGB), as the terrain shows it
    /// (`World::surface_colours`, the `surface_colour` map); None for one material.
    pub colours: Option<&'a [[u8; 4]]>,
    /// The terrain's river curves (`World::rivers`, metres from its first cell) and the
    /// smallest half width it draws them with, metres: those leaving the map run on over
    /// the skirt ([`skirt_rivers`](super::skirt_rivers), [`Skirt::channel`]).
    pub rivers: Option<(&'a [crate::rasterise::River], f32)>,
}

/// The border samples' look: per channel (the eight weights, then the colour's four when
/// there are colours), one value per sample round the border.
fn border_look(grid: Grid, ring: &[([f32; 2], [f32; 2])], look: &Look<'_>) -> Vec<Vec<f32>> {
    let (w, h) = (grid.width, grid.height);
    let log_max = drainage_log_max(&look.inputs);
    let colours = look.colours.filter(|c| c.len() == w * h);
    let channels = LAYERS + if colours.is_some() { 4 } else { 0 };
    let mut out = vec![Vec::with_capacity(ring.len()); channels];
    for (p, _) in ring {
        // Bilinear between the (up to four) cells round the point.
        let x = p[0].clamp(0.0, (w - 1) as f32);
        let y = p[1].clamp(0.0, (h - 1) as f32);
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
        let (tx, ty) = (x - x0 as f32, y - y0 as f32);
        let mut v = vec![0.0f32; channels];
        for (cx, cy, wt) in [
            (x0, y0, (1.0 - tx) * (1.0 - ty)),
            (x1, y0, tx * (1.0 - ty)),
            (x0, y1, (1.0 - tx) * ty),
            (x1, y1, tx * ty),
        ] {
            if wt <= 0.0 {
                continue;
            }
            let g = shown_weights_at(&look.inputs, &look.ground, log_max, cx, cy);
            for (k, gk) in g.iter().enumerate() {
                v[k] += wt * gk;
            }
            if let Some(c) = colours {
                for k in 0..4 {
                    v[LAYERS + k] += wt * f32::from(c[cy * w + cx][k]) / 255.0;
                }
            }
        }
        for (k, vk) in v.into_iter().enumerate() {
            out[k].push(if vk.is_finite() { vk } else { 0.0 });
        }
    }
    out
}

/// The map's mean look, per channel as [`border_look`] has them: the shown weights (and
/// colours) averaged over the cells of a lattice of at most about 128 × 128 (every cell of a
/// map that small) that lie no higher than `below` metres, the ground at the skirt's
/// altitudes (a painted range's snow and rock carried out over the low plain drew white
/// blotches to the horizon). All of the lattice's cells if fewer than 1 % of them do.
fn map_look_means(grid: Grid, look: &Look<'_>, below: f32) -> Vec<f32> {
    let (w, h) = (grid.width, grid.height);
    let log_max = drainage_log_max(&look.inputs);
    let colours = look.colours.filter(|c| c.len() == w * h);
    let channels = LAYERS + if colours.is_some() { 4 } else { 0 };
    let stride = w.max(h).div_ceil(128).max(1);
    let lattice = w.div_ceil(stride) * h.div_ceil(stride);
    let heights = look.inputs.heights;
    let low = (0..h)
        .step_by(stride)
        .flat_map(|y| (0..w).step_by(stride).map(move |x| y * w + x))
        .filter(|&i| heights[i] <= below)
        .count();
    let limit = if low * 100 >= lattice {
        below
    } else {
        f32::INFINITY
    };
    let mut sum = vec![0.0f64; channels];
    let mut count = 0usize;
    for y in (0..h).step_by(stride) {
        for x in (0..w).step_by(stride) {
            let at = heights[y * w + x];
            if at.is_nan() || at > limit {
                continue;
            }
            let g = shown_weights_at(&look.inputs, &look.ground, log_max, x, y);
            if g.iter().any(|v| !v.is_finite()) {
                continue;
            }
            for (k, gk) in g.iter().enumerate() {
                sum[k] += f64::from(*gk);
            }
            if let Some(c) = colours {
                for k in 0..4 {
                    sum[LAYERS + k] += f64::from(c[y * w + x][k]) / 255.0;
                }
            }
            count += 1;
        }
    }
    sum.iter()
        .map(|v| (v / count.max(1) as f64) as f32)
        .collect()
}

/// The skirt's points round the border ([`border`]): one per border cell (up to 4,096 round
/// the map), so the first ring meets the terrain's own border vertices.
pub(crate) fn border_ring(grid: Grid) -> Vec<([f32; 2], [f32; 2])> {
    let perimeter = 2 * (grid.width - 1 + grid.height - 1);
    border(grid, perimeter.clamp(8, 4096))
}

/// Points round the border, counter-clockwise seen from above, as (cell x, cell y) and the
/// outward direction; about `samples` of them.
fn border(grid: Grid, samples: usize) -> Vec<([f32; 2], [f32; 2])> {
    let (w, h) = ((grid.width - 1) as f32, (grid.height - 1) as f32);
    let per = (w + h) * 2.0 / samples.max(8) as f32;
    let mut out = Vec::new();
    // The first point of each side is a corner: it moves out along both sides' normals, so
    // the rings close round the corners.
    let mut side = |from: [f32; 2], to: [f32; 2], normal: [f32; 2], before: [f32; 2]| {
        let len = ((to[0] - from[0]).abs() + (to[1] - from[1]).abs()).max(1.0);
        let n = (len / per).ceil().max(1.0) as usize;
        for k in 0..n {
            let t = k as f32 / n as f32;
            let dir = if k == 0 {
                [normal[0] + before[0], normal[1] + before[1]]
            } else {
                normal
            };
            out.push((
                [
                    from[0] + (to[0] - from[0]) * t,
                    from[1] + (to[1] - from[1]) * t,
                ],
                dir,
            ));
        }
    };
    // With z (cell y) pointing south, counter-clockwise from above runs north edge west,
    // west edge south, south edge east, east edge north.
    side([w, 0.0], [0.0, 0.0], [0.0, -1.0], [1.0, 0.0]);
    side([0.0, 0.0], [0.0, h], [-1.0, 0.0], [0.0, -1.0]);
    side([0.0, h], [w, h], [0.0, 1.0], [-1.0, 0.0]);
    side([w, h], [w, 0.0], [1.0, 0.0], [0.0, 1.0]);
    out
}

/// The range of `heights` (one per ring sample) about the plane through the ring's points
/// that fits them best (least squares), 0 when the points span no plane.
fn detrended_range(ring: &[([f32; 2], [f32; 2])], heights: &[f32]) -> f32 {
    let n = ring.len().min(heights.len());
    if n == 0 {
        return 0.0;
    }
    // Centred sums in f64: h ≈ a + b·x + c·y.
    let (mut mx, mut my, mut mh) = (0.0f64, 0.0f64, 0.0f64);
    for ((p, _), &h) in ring.iter().zip(heights) {
        mx += f64::from(p[0]);
        my += f64::from(p[1]);
        mh += f64::from(h);
    }
    let nf = n as f64;
    (mx, my, mh) = (mx / nf, my / nf, mh / nf);
    let (mut sxx, mut sxy, mut syy, mut sxh, mut syh) = (0.0f64, 0.0, 0.0, 0.0, 0.0);
    for ((p, _), &h) in ring.iter().zip(heights) {
        let (x, y, h) = (
            f64::from(p[0]) - mx,
            f64::from(p[1]) - my,
            f64::from(h) - mh,
        );
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
        sxh += x * h;
        syh += y * h;
    }
    let det = sxx * syy - sxy * sxy;
    let (b, c) = if det.abs() > 1e-9 * (sxx * syy).max(1e-30) {
        ((sxh * syy - syh * sxy) / det, (syh * sxx - sxh * sxy) / det)
    } else {
        (0.0, 0.0)
    };
    let (lo, hi) = ring
        .iter()
        .zip(heights)
        .map(|((p, _), &h)| {
            f64::from(h) - mh - b * (f64::from(p[0]) - mx) - c * (f64::from(p[1]) - my)
        })
        .fold((f64::MAX, f64::MIN), |(a, z), r| (a.min(r), z.max(r)));
    if hi >= lo {
        (hi - lo) as f32
    } else {
        0.0
    }
}

/// The rings' distances beyond the border, metres: a cell apart, or a fifth of the
/// distance, out to where the rivers leaving the map end ([`skirt_rivers::run_m`];
/// their meanders need rings that close), then growing geometrically by at most
/// [`FAR_RATIO`] out to [`REACH_EXTENTS`] map extents.
fn ring_distances(cell: f32, extent: f32) -> Vec<f32> {
    let (near, far) = (skirt_rivers::run_m(cell, extent), REACH_EXTENTS * extent);
    let mut out = Vec::new();
    let mut d = cell;
    while d < near {
        out.push(d);
        d += cell.max(0.2 * d);
    }
    let n = (math::ln(far / d) / math::ln(FAR_RATIO)).ceil().max(1.0) as usize;
    let ratio = math::powf(far / d, 1.0 / n as f32);
    for _ in 0..=n {
        out.push(d);
        d *= ratio;
    }
    out
}

/// Bilinear height at cell coordinates (clamped to the grid).
fn sample(grid: Grid, height: &[f32], x: f32, y: f32) -> f32 {
    let x = x.clamp(0.0, (grid.width - 1) as f32);
    let y = y.clamp(0.0, (grid.height - 1) as f32);
    let (x0, y0) = (x.floor() as usize, y.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(grid.width - 1), (y0 + 1).min(grid.height - 1));
    let (tx, ty) = (x - x0 as f32, y - y0 as f32);
    let at = |x: usize, y: usize| height[y * grid.width + x];
    let a = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * tx;
    let b = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * tx;
    a + (b - a) * ty
}

/// `values` round a ring, each the mean of the `2k + 1` samples centred on it (`k` at most
/// `(len − 1) / 2`): a moving mean over the ring's prefix sums, O(len) whatever `k` (a window
/// summed sample by sample took 1.7 s on the main thread at 1025²).
fn ring_mean(values: &[f32], k: usize) -> Vec<f32> {
    let m = values.len();
    let k = k.min(m.saturating_sub(1) / 2);
    let mut prefix = Vec::with_capacity(m + 1);
    prefix.push(0.0f64);
    for v in values {
        prefix.push(prefix[prefix.len() - 1] + f64::from(*v));
    }
    // Sum of samples `a..b` round the ring (a < m, a ≤ b ≤ a + m).
    let span = |a: usize, b: usize| -> f64 {
        if b <= m {
            prefix[b] - prefix[a]
        } else {
            prefix[m] - prefix[a] + prefix[b - m]
        }
    };
    (0..m)
        .map(|i| {
            let a = (i + m - k) % m;
            (span(a, a + 2 * k + 1) / (2 * k + 1) as f64) as f32
        })
        .collect()
}

/// The colour per cell (sRGB) a layered terrain shows from afar, for the skirt to carry
/// out: its surface colour, and where its beds are drawn as bands (the `strata_position` and
/// `strata_column` maps) the bed at the bedrock surface, covered as loose sediment thickens
/// to a metre, as the terrain shader draws them (its `has_strata` branch, on average ground).
/// (The surface colour alone is the sediment's where beds are drawn: the skirt of `strata`
/// was a pale sand plain round a red-brown map.) The alpha is how loose the ground is
/// (0 bare rock to 255 under half a metre of loose ground, the shader's `loose`), so the
/// skirt draws sand's grain or rock's as the map does. None for a terrain of one material.
pub fn shown_colours(world: &World) -> Option<Vec<[u8; 4]>> {
    let grid = world.grid();
    let n = grid.width * grid.height;
    // The maps a finished run or saved data holds, else the layers they are made from.
    let mut surface = match world.maps.get(names::SURFACE_COLOUR) {
        Some(MapData::Rgba(m)) if m.data.len() == n => m.data.clone(),
        _ => world.surface_colours().filter(|c| c.len() == n)?,
    };
    let loose_depth = match world.maps.get(names::SEDIMENT_DEPTH) {
        Some(MapData::Scalar(s)) if s.data.len() == n => s.data.clone(),
        _ => world.loose_depth(),
    };
    let loose = |i: usize| {
        let d = loose_depth.get(i).copied().unwrap_or(0.0).max(0.0);
        (smoothstep(0.02, 0.5, d) * 255.0).round() as u8
    };
    for (i, c) in surface.iter_mut().enumerate() {
        c[3] = loose(i);
    }
    let beds = match (
        world.maps.get(names::STRATA_POSITION),
        world.maps.get(names::STRATA_COLUMN),
        world.maps.get(names::SEDIMENT_DEPTH),
    ) {
        (Some(MapData::Scalar(p)), Some(MapData::Rgba(c)), Some(MapData::Scalar(s))) => {
            Some((p.data.clone(), c.data.clone(), s.data.clone()))
        }
        _ => world.strata_look().map(|look| {
            (
                look.position,
                look.column,
                world.layers.thickness(0).to_vec(),
            )
        }),
    };
    let Some((position, column, sediment)) =
        beds.filter(|(p, c, s)| p.len() == n && s.len() == n && c.len() == STRATA_COLUMN_TEXELS)
    else {
        return Some(surface);
    };
    let texels = column.len();
    Some(
        (0..n)
            .map(|i| {
                let t = (position[i].clamp(0.0, 1.0) * texels as f32) as usize;
                let band = column[t.min(texels - 1)];
                let cover = smoothstep(0.4, 0.6, smoothstep(0.0, 1.0, sediment[i].max(0.0)));
                let mut c = [0u8; 4];
                for k in 0..3 {
                    let v = band[k] as f32 + (surface[i][k] as f32 - band[k] as f32) * cover;
                    c[k] = v.round().clamp(0.0, 255.0) as u8;
                }
                c[3] = loose(i);
                c
            })
            .collect(),
    )
}

/// The skirt of a terrain with heights `height` on `grid` for `edge` (empty for
/// [`Edge::None`]); `sea_level` in metres places a coast's sea floor.
pub fn skirt(grid: Grid, height: &[f32], edge: Edge, sea_level: f32) -> Skirt {
    skirt_with(grid, height, edge, sea_level, None)
}

/// [`skirt`], carrying `look` (the terrain's ground weights and surface colours) outwards
/// too when given ([`Skirt::weights`], [`Skirt::colours`]). A look on another grid than
/// `grid` is left out.
pub fn skirt_with(
    grid: Grid,
    height: &[f32],
    edge: Edge,
    sea_level: f32,
    look: Option<&Look<'_>>,
) -> Skirt {
    let mut out = Skirt::default();
    if edge == Edge::None || grid.width < 2 || grid.height < 2 {
        return out;
    }
    // The sea hides the ground under it only where the edge is a coast.
    let hidden_under = if edge == Edge::Coast {
        sea_level
    } else {
        f32::NEG_INFINITY
    };
    out.relief_slope = border_slope(grid, height, hidden_under);
    let (dx, dy) = (grid.dx(), grid.dy());
    let extent = ((grid.width - 1) as f32 * dx).max((grid.height - 1) as f32 * dy);
    let ring = border_ring(grid);
    let m = ring.len();
    let edge_h: Vec<f32> = ring
        .iter()
        .map(|(p, _)| sample(grid, height, p[0], p[1]))
        .collect();
    let finite: Vec<f32> = edge_h.iter().copied().filter(|h| h.is_finite()).collect();
    let mean = if finite.is_empty() {
        0.0
    } else {
        finite.iter().sum::<f32>() / finite.len() as f32
    };
    let edge_h: Vec<f32> = edge_h
        .iter()
        .map(|h| if h.is_finite() { *h } else { mean })
        .collect();
    // The rolling ground is as rough as the border, less its tilt: the height range round
    // the border about the plane that fits it best. (A tilted plane cut by rills a metre
    // deep gets bumps of a quarter metre, not a quarter of the whole slope's fall.)
    let relief = detrended_range(&ring, &edge_h);
    // The ground's fall across the border, per metre outwards (> 0 rising outwards):
    // from GRADIENT_CELLS inside the border out to it, at most 1 (45°); each ring smooths it
    // along the border as it smooths the heights (over GRADIENT_CELLS samples at least).
    // The skirt goes on at this slope and eases flat over `ease_m`, so at the foot of a
    // slope the land beyond keeps falling instead of climbing back to the border's mean in
    // a step above the terrain, and a dune's face crossing the border runs on a little and
    // blurs away instead of running to the horizon.
    let gradient: Vec<f32> = {
        let (w1, h1) = ((grid.width - 1) as f32, (grid.height - 1) as f32);
        let raw: Vec<f32> = ring
            .iter()
            .zip(&edge_h)
            .map(|((p, nrm), &at)| {
                let len = (nrm[0] * nrm[0] + nrm[1] * nrm[1]).sqrt().max(1e-6);
                let (ux, uy) = (nrm[0] / len, nrm[1] / len);
                let qx = (p[0] - ux * GRADIENT_CELLS).clamp(0.0, w1);
                let qy = (p[1] - uy * GRADIENT_CELLS).clamp(0.0, h1);
                let run = (((p[0] - qx) * dx).powi(2) + ((p[1] - qy) * dy).powi(2)).sqrt();
                let inside = sample(grid, height, qx, qy);
                if run > 0.0 && inside.is_finite() {
                    ((at - inside) / run).clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            })
            .collect();
        raw
    };
    let ease_m = (EASE_CELLS * dx.max(dy)).min(0.25 * extent);
    // The border profile smoothed along the border over a window of `k` samples each side.
    let smoothed = |k: usize| ring_mean(&edge_h, k);
    // The look round the border, each channel's mean, and what each ring carries.
    let look = look.filter(|l| {
        l.inputs.grid.width == grid.width
            && l.inputs.grid.height == grid.height
            && l.inputs.heights.len() == grid.len()
    });
    let channels = look.map_or(Vec::new(), |l| border_look(grid, &ring, l));
    // (The skirt's ground lies at the border's heights; the mean look is the map's at them.)
    let border_top = edge_h.iter().fold(f32::MIN, |a, &b| a.max(b));
    let channel_means: Vec<f32> = look.map_or(Vec::new(), |l| {
        map_look_means(grid, l, border_top + 0.1 * relief.max(0.0))
    });
    let (cx, cz) = (
        (grid.width - 1) as f32 * 0.5 * dx,
        (grid.height - 1) as f32 * 0.5 * dy,
    );
    // Ring distances outwards from the border, metres: the first under the terrain, then
    // growing geometrically from a cell out to REACH_EXTENTS map widths.
    let cell = dx.max(dy);
    let far = extent * REACH_EXTENTS;
    let mut dists = vec![-OVERLAP_CELLS * cell, 0.0];
    dists.extend(ring_distances(cell, extent));
    for (r, &d) in dists.iter().enumerate() {
        let k = ((d.max(0.0) / extent) * m as f32 * 0.25).min(m as f32 / 2.0 - 1.0) as usize;
        // The heights blur more slowly over the first NOTCH_CELLS: grooves the border cuts
        // (rills, gullies) run on a few cells and fade instead of ending on a line (rills'
        // front edge): k grows with the square of the distance there.
        let near = (d.max(0.0) / (NOTCH_CELLS * cell)).min(1.0);
        let profile = smoothed((k as f32 * near) as usize);
        let slope_out = if d > 0.0 {
            ring_mean(&gradient, k.max(GRADIENT_CELLS as usize))
        } else {
            Vec::new()
        };
        // The look blurs along the border three times as fast as the heights and reaches
        // the whole map's mean a quarter of a map width out (the border's own mean drew the
        // land round `rills` as dry grass: its upslope border is the driest ground of a
        // map green inside; round `strata`, sand), so a border of alternating ground
        // (rills and the ridges between them) fades within a few cells instead of running
        // on as stripes (t = 0 and k = 0 on and inside the border: its own values).
        let t_look = (d.max(0.0) / (0.25 * extent)).min(1.0);
        let k_look = (3 * k).min(m / 2 - 1);
        let carried: Vec<Vec<f32>> = channels
            .iter()
            .zip(&channel_means)
            .map(|(c, &mean)| {
                let mut v = ring_mean(c, k_look);
                for x in &mut v {
                    *x += (mean - *x) * t_look;
                }
                v
            })
            .collect();
        if !carried.is_empty() {
            for i in 0..m {
                let mut w = [0.0f32; LAYERS];
                for (l, wl) in w.iter_mut().enumerate() {
                    *wl = carried[l][i];
                }
                out.weights.push(w);
                if carried.len() == LAYERS + 4 {
                    let c = [0, 1, 2, 3].map(|k| carried[LAYERS + k][i]);
                    out.colours.push(c);
                }
            }
        }
        for i in 0..m {
            let (p, nrm) = ring[i];
            // Inside the border the ring is the border shrunk by OVERLAP_CELLS (clamped, so
            // its corners do not fold); outside, moved out along the normal.
            let (x, z) = if d < 0.0 {
                // (A map narrower than twice the overlap shrinks to its middle.)
                let (w, h) = ((grid.width - 1) as f32, (grid.height - 1) as f32);
                let (ox, oz) = (OVERLAP_CELLS.min(w * 0.5), OVERLAP_CELLS.min(h * 0.5));
                let px = p[0].clamp(ox, w - ox);
                let pz = p[1].clamp(oz, h - oz);
                (px * dx - cx, pz * dy - cz)
            } else {
                (p[0] * dx - cx + nrm[0] * d, p[1] * dy - cz + nrm[1] * d)
            };
            let y = if d <= 0.0 {
                // Under the terrain's own edge: the sample lowered a little.
                let inside = sample(grid, height, (x + cx) / dx, (z + cz) / dy);
                // Ring 0 lies under the ground (by at most half a cell, so it stays under the
                // terrain's own slope); ring 1 is the border itself.
                let at = if r == 0 { inside } else { edge_h[i] };
                let under = if r == 0 { UNDER_M.min(0.5 * cell) } else { 0.0 };
                (if at.is_finite() { at } else { mean }) - under
            } else {
                match edge {
                    Edge::Coast => {
                        // The land leaves the border at the ground's own fall across it (at
                        // most three times the mean, none where the ground rises outwards)
                        // and eases onto the sea floor, a cubic Hermite from the border to
                        // the floor over COAST_RUN times the drop; monotone for a start
                        // slope up to three times the mean. The bumps, t²(1 − t)², vanish
                        // at both ends and stay under what the profile fell: a border under
                        // the sea raises no islands.
                        let floor = sea_level - COAST_DEPTH_M;
                        let top = profile[i].max(floor);
                        let drop = top - floor;
                        let reach = (drop * COAST_RUN).min(0.5 * extent).max(cell);
                        let t = (d / reach).min(1.0);
                        let fall_rate = (-slope_out[i]).max(0.0);
                        let m = if drop > 0.0 {
                            (fall_rate * reach / drop).min(3.0)
                        } else {
                            0.0
                        };
                        let (t2, t3) = (t * t, t * t * t);
                        let f = (2.0 * t3 - 3.0 * t2 + 1.0) - m * (t3 - 2.0 * t2 + t);
                        let bump = 0.5 * t2 * (1.0 - t) * (1.0 - t);
                        floor + drop * f + drop * bump * rolling(x, z, 0.05 * extent, 7)
                    }
                    _ => {
                        // The border's slope across it carried on and eased flat (its
                        // integral: g·L·(1 − e^(−d/L))), then relaxed towards the
                        // border's mean; the rolling ground comes in gently (none at the
                        // border, full a quarter map out), so the first rings continue the
                        // terrain's own surface.
                        let on = profile[i]
                            + slope_out[i] * ease_m * (1.0 - math::exp(-d / ease_m.max(1e-6)));
                        // (Quadratic, so it does not tilt the first rings.)
                        let t = (d / (2.0 * extent)).min(1.0).powi(2);
                        let base = on + (mean - on) * t;
                        let ramp = (d / (0.25 * extent)).min(1.0);
                        let amp = 0.25
                            * relief
                            * (1.0 - (d / far).min(1.0)).powi(2)
                            * ramp
                            * ramp
                            * (3.0 - 2.0 * ramp);
                        base + amp * rolling(x, z, 0.2 * extent + 0.1 * d, 11)
                    }
                }
            };
            out.positions.push([x, y, z]);
        }
    }
    // Rivers leaving the map run on, each in the notch it cut in the border.
    let flows = look
        .and_then(|l| l.rivers)
        .map_or(Vec::new(), |(rivers, min_half)| {
            skirt_rivers::outflows(grid, &ring, &edge_h, rivers, min_half)
        });
    if !flows.is_empty() {
        let floor = -4.0 * cell;
        out.channel = vec![[floor, 0.0]; out.positions.len()];
        for (r, &d) in dists.iter().enumerate().filter(|(_, &d)| d >= 0.0) {
            for k in r * m..(r + 1) * m {
                let p = &mut out.positions[k];
                let at = skirt_rivers::at(&flows, [p[0], p[2]], floor);
                out.channel[k] = [at.channel, at.fade];
                if d > 0.0 {
                    p[1] -= at.carve;
                }
            }
        }
    }
    let rings = dists.len();
    out.rings = rings;
    for r in 0..rings - 1 {
        for i in 0..m {
            let a = (r * m + i) as u32;
            let b = (r * m + (i + 1) % m) as u32;
            let c = a + m as u32;
            let d = b + m as u32;
            // Clockwise seen from above (Godot's front faces): the ring runs
            // counter-clockwise, outwards is to its right.
            out.indices.extend_from_slice(&[a, b, c, b, d, c]);
        }
    }
    // Normals: the sum of each vertex's triangles' normals, but for the two inner rings
    // (under the terrain and on its border), which take the terrain's own normal there as
    // its shader computes it (so the shading runs on across the seam without a crease);
    // the hidden triangles under the terrain count for no one.
    let mut normals = vec![[0.0f32; 3]; out.positions.len()];
    for t in out.indices[6 * m..].chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|k| out.positions[t[k] as usize]);
        let u = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let v = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        for &k in t {
            for j in 0..3 {
                normals[k as usize][j] += n[j];
            }
        }
    }
    for (k, n) in normals.iter_mut().enumerate().take(2 * m) {
        let p = out.positions[k];
        if let Some(t) = terrain_normal(grid, height, (p[0] + cx) / dx, (p[2] + cz) / dy) {
            *n = t;
        }
    }
    out.normals = normals
        .into_iter()
        .map(|n| {
            let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt().max(1e-12);
            [n[0] / l, n[1] / l, n[2] / l]
        })
        .collect();
    out
}

/// The terrain's normal at cell coordinates (`x`, `y`) as the terrain shader computes it up
/// close: differences of bilinear heights a cell either side, one-sided at the border (over
/// the span actually sampled); None where a height is not finite.
pub fn terrain_normal(grid: Grid, height: &[f32], x: f32, y: f32) -> Option<[f32; 3]> {
    let (w1, h1) = ((grid.width - 1) as f32, (grid.height - 1) as f32);
    let (x, y) = (x.clamp(0.0, w1), y.clamp(0.0, h1));
    let (xl, xr) = ((x - 1.0).max(0.0), (x + 1.0).min(w1));
    let (yn, ys) = ((y - 1.0).max(0.0), (y + 1.0).min(h1));
    let slope = |a: f32, b: f32, run: f32| if run > 0.0 { (b - a) / run } else { 0.0 };
    let gx = slope(
        sample(grid, height, xl, y),
        sample(grid, height, xr, y),
        (xr - xl) * grid.dx(),
    );
    let gz = slope(
        sample(grid, height, x, yn),
        sample(grid, height, x, ys),
        (ys - yn) * grid.dy(),
    );
    let l = (gx * gx + 1.0 + gz * gz).sqrt();
    (gx.is_finite() && gz.is_finite()).then(|| [-gx / l, 1.0 / l, -gz / l])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terrain() -> (Grid, Vec<f32>) {
        let grid = Grid::new(65, 49, 50.0).unwrap();
        let h = (0..65 * 49)
            .map(|i| {
                let (x, y) = ((i % 65) as f32, (i / 65) as f32);
                300.0 + 200.0 * math::sin(x / 9.0) * math::cos(y / 7.0)
            })
            .collect();
        (grid, h)
    }

    /// `border_slope`: a tilted plane's is its tilt; ridges of known slope give theirs
    /// (a sawtooth rising and falling 1 in 2 across x, within the band), and a few cliffs
    /// do not change it; ground under the sea is left out for a coast, not for a land
    /// skirt; a flat map has none.
    #[test]
    fn the_skirts_relief_is_the_borders_slope() {
        let grid = Grid::new(101, 81, 20.0).unwrap();
        let plane: Vec<f32> = (0..101 * 81)
            .map(|i| 0.3 * 20.0 * (i / 101) as f32)
            .collect();
        let s = border_slope(grid, &plane, f32::NEG_INFINITY);
        assert!((s - 0.3).abs() < 1e-4, "{s}");
        // A sawtooth of period 8 cells, rising and falling 40 m over 4 cells of 20 m: every
        // central difference away from its corners is ±0.5 per metre, at its corners 0.
        let tooth = |x: usize| {
            let k = (x % 8) as f32;
            40.0 * if k <= 4.0 { k / 4.0 } else { (8.0 - k) / 4.0 }
        };
        let saw: Vec<f32> = (0..101 * 81).map(|i| tooth(i % 101)).collect();
        let s = border_slope(grid, &saw, f32::NEG_INFINITY);
        // Three of every four columns at 0.5, one (the corners) at 0.
        assert!((s - 0.5).abs() < 1e-4, "{s}");
        // Cliffs 200 m high in one column of every sixteen leave the median as it was.
        let cliffs: Vec<f32> = (0..101 * 81)
            .map(|i| tooth(i % 101) + if (i % 101) % 16 == 9 { 200.0 } else { 0.0 })
            .collect();
        let c = border_slope(grid, &cliffs, f32::NEG_INFINITY);
        assert!((c - 0.5).abs() < 1e-4, "{c}");
        // Under a sea over the sawtooth's lower half, only its upper half counts: its
        // slopes are still 0.5 (the corners at the bottom drop out).
        let s_sea = border_slope(grid, &saw, 20.0);
        assert!((s_sea - 0.5).abs() < 1e-4, "{s_sea}");
        assert_eq!(border_slope(grid, &saw, 1.0e9), 0.0, "all under the sea");
        assert_eq!(border_slope(grid, &vec![5.0; 101 * 81], 0.0), 0.0);
        // The skirt carries it: a coast hides what the sea covers, a land skirt does not.
        let land = skirt(grid, &saw, Edge::Skirt, 1.0e9);
        assert!(
            (land.relief_slope - s).abs() < 1e-6,
            "{}",
            land.relief_slope
        );
        let coast = skirt(grid, &saw, Edge::Coast, 1.0e9);
        assert_eq!(coast.relief_slope, 0.0);
    }

    /// Where beds are drawn as bands, the skirt carries the bed showing at the bedrock
    /// surface, covered by loose sediment from half a metre to a metre thick; without the
    /// beds, the surface colour as it is; one material, nothing. The alpha says how loose
    /// the ground is: 0 bare, 255 under half a metre of loose ground.
    #[test]
    fn a_layered_terrain_shows_its_beds_through_thin_sediment() {
        use crate::field::Field;
        let grid = Grid::new(4, 1, 10.0).unwrap();
        let mut world = World::new(Field::from_vec(grid, vec![0.0; 4], "h").unwrap(), 1);
        assert!(shown_colours(&world).is_none());
        let sand = [220, 200, 150, 255];
        world.maps.insert(
            names::SURFACE_COLOUR.into(),
            MapData::Rgba(Field::from_vec(grid, vec![sand; 4], "c").unwrap()),
        );
        let bare_sand = [220, 200, 150, 0];
        assert_eq!(shown_colours(&world), Some(vec![bare_sand; 4]));
        // Two beds: red below the column's middle, grey above it.
        let column: Vec<[u8; 4]> = (0..STRATA_COLUMN_TEXELS)
            .map(|t| {
                if t < STRATA_COLUMN_TEXELS / 2 {
                    [200, 60, 40, 255]
                } else {
                    [90, 90, 90, 255]
                }
            })
            .collect();
        let row = Grid {
            width: STRATA_COLUMN_TEXELS,
            height: 1,
            cell_size: 1.0,
            cell_size_y: 1.0,
        };
        world.maps.insert(
            names::STRATA_COLUMN.into(),
            MapData::Rgba(Field::from_vec(row, column, "column").unwrap()),
        );
        world.maps.insert(
            names::STRATA_POSITION.into(),
            MapData::Scalar(Field::from_vec(grid, vec![0.25, 0.75, 0.25, 0.25], "p").unwrap()),
        );
        world.maps.insert(
            names::SEDIMENT_DEPTH.into(),
            MapData::Scalar(Field::from_vec(grid, vec![0.0, 0.0, 0.5, 2.0], "s").unwrap()),
        );
        let shown = shown_colours(&world).unwrap();
        assert_eq!(shown[0], [200, 60, 40, 0], "bare red bed");
        assert_eq!(shown[1], [90, 90, 90, 0], "bare grey bed");
        assert_eq!(shown[2][3], 255, "half a metre of loose ground");
        // Half a metre: half covered (smoothstep(0.4, 0.6, 0.5) = 0.5).
        let red = [200.0f32, 60.0, 40.0];
        for k in 0..3 {
            let half = 0.5 * (red[k] + f32::from(sand[k]));
            assert!(
                (f32::from(shown[2][k]) - half).abs() <= 1.0,
                "{:?}",
                shown[2]
            );
        }
        assert_eq!(shown[3], sand, "buried under two metres of sand");
    }

    #[test]
    fn the_skirt_meets_the_border_and_reaches_the_horizon() {
        let (grid, h) = terrain();
        let s = skirt(grid, &h, Edge::Skirt, 0.0);
        let m = s.positions.len() / s.rings;
        let (hx, hz) = (32.0 * 50.0, 24.0 * 50.0);
        for i in 0..m {
            // Ring 0 under the terrain inside the border, ring 1 on the border just under it.
            let p0 = s.positions[i];
            assert!(
                p0[0].abs() < hx && p0[2].abs() < hz,
                "ring 0 outside: {p0:?}"
            );
            let p1 = s.positions[m + i];
            let cx = p1[0] / 50.0 + 32.0;
            let cz = p1[2] / 50.0 + 24.0;
            let want = sample(grid, &h, cx, cz);
            assert!((p1[1] - want).abs() < 1e-3, "{p1:?} against {want}");
            // The last ring lies far out.
            let pl = s.positions[(s.rings - 1) * m + i];
            assert!(pl[0].abs().max(pl[2].abs()) > 30.0 * 64.0 * 50.0);
        }
        // Triangles face up (those of the shrunk inner ring's corners may have no area).
        for t in s.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|k| s.positions[t[k] as usize]);
            // Clockwise from above: y of (c − a) × (b − a).
            let ny = (c[2] - a[2]) * (b[0] - a[0]) - (c[0] - a[0]) * (b[2] - a[2]);
            assert!(ny >= 0.0, "triangle faces down: {a:?} {b:?} {c:?}");
            if t.iter().all(|&k| k as usize >= m) {
                assert!(ny > 0.0, "triangle without area: {a:?} {b:?} {c:?}");
            }
        }
        assert!(s.positions.iter().all(|p| p.iter().all(|v| v.is_finite())));
        assert!(s.normals.iter().all(|n| n[1] > 0.0), "a normal points down");
    }

    #[test]
    fn the_look_meets_the_border_and_tends_to_the_maps_mean_far_out() {
        use crate::bake::ground_weights::GroundParams;
        let (grid, h) = terrain();
        // Drainage growing southwards (wetter ground), and a snowline at the relief's top
        // (the fell-field's stony ground on the high half, meadow low down), so the border
        // shows several layers. (At 380 m, inside the relief, the fell-field covered it all
        // and the border looked like the whole map.)
        let drainage: Vec<f32> = (0..grid.len()).map(|i| (i / 65) as f32 * 20.0).collect();
        let colours: Vec<[u8; 4]> = (0..grid.len())
            .map(|i| [(i % 65 * 3) as u8, (i / 65 * 5) as u8, 100, 255])
            .collect();
        let inputs = GroundInputs {
            grid,
            heights: &h,
            drainage: Some(&drainage),
            sediment: None,
        };
        let ground = Ground {
            params: GroundParams {
                snowline_m: 500.0,
                ..GroundParams::default()
            },
            paint: None,
        };
        let look = Look {
            inputs,
            ground,
            colours: Some(&colours),
            rivers: None,
        };
        let s = skirt_with(grid, &h, Edge::Skirt, 0.0, Some(&look));
        let rings = s.rings;
        let m = s.positions.len() / rings;
        assert_eq!(s.weights.len(), s.positions.len());
        assert_eq!(s.colours.len(), s.positions.len());
        let log_max = drainage_log_max(&inputs);
        let mut layers_seen = [false; LAYERS];
        for i in 0..m {
            // Ring 1 lies on the border, one sample per border cell: the cell's own look.
            let p = s.positions[m + i];
            let (cx, cz) = (p[0] / 50.0 + 32.0, p[2] / 50.0 + 24.0);
            let (x, y) = (cx.round() as usize, cz.round() as usize);
            assert!((cx - x as f32).abs() < 1e-3 && (cz - y as f32).abs() < 1e-3);
            let want = shown_weights_at(&inputs, &ground, log_max, x, y);
            let got = s.weights[m + i];
            for l in 0..LAYERS {
                assert!(
                    (got[l] - want[l]).abs() < 1e-4,
                    "ring 1 at cell ({x}, {y}), layer {l}: {got:?} against {want:?}"
                );
                layers_seen[l] |= want[l] > 0.5;
            }
            let c = colours[y * 65 + x].map(|v| f32::from(v) / 255.0);
            for (got, want) in s.colours[m + i].iter().zip(c) {
                assert!((got - want).abs() < 1e-4, "colour at ({x}, {y})");
            }
        }
        assert!(
            layers_seen.iter().filter(|&&b| b).count() >= 2,
            "the border shows one layer only: the test proves nothing"
        );
        // Every vertex's weights sum to 1.
        assert!(s
            .weights
            .iter()
            .all(|w| (w.iter().sum::<f32>() - 1.0).abs() < 1e-3));
        // Far out, each channel is the whole map's mean (every cell of this small map); on
        // the way, the spread along a ring shrinks.
        let map_mean = |k: usize| {
            let sum: f32 = (0..grid.len())
                .map(|i| {
                    if k < LAYERS {
                        shown_weights_at(&inputs, &ground, log_max, i % 65, i / 65)[k]
                    } else {
                        f32::from(colours[i][k - LAYERS]) / 255.0
                    }
                })
                .sum();
            sum / grid.len() as f32
        };
        let spread = |r: usize, l: usize| {
            let v: Vec<f32> = (0..m).map(|i| s.weights[r * m + i][l]).collect();
            v.iter().fold(f32::MIN, |a, &b| a.max(b)) - v.iter().fold(f32::MAX, |a, &b| a.min(b))
        };
        let mut unlike_border = 0.0f32;
        for l in 0..LAYERS {
            let mean = map_mean(l);
            let border = (0..m).map(|i| s.weights[m + i][l]).sum::<f32>() / m as f32;
            unlike_border = unlike_border.max((mean - border).abs());
            for i in 0..m {
                let far = s.weights[(rings - 1) * m + i][l];
                assert!(
                    (far - mean).abs() < 1e-4,
                    "layer {l}: {far} far out, the map's mean {mean}"
                );
            }
            if spread(1, l) > 0.1 {
                assert!(
                    spread(rings / 2, l) < 0.5 * spread(1, l),
                    "layer {l} not smoothed"
                );
            }
        }
        assert!(
            unlike_border > 0.05,
            "the border looks like the whole map: the test proves nothing"
        );
        assert!((s.colours[(rings - 1) * m][0] - map_mean(LAYERS)).abs() < 1e-4);
        // Without a look, nothing is carried.
        let plain = skirt(grid, &h, Edge::Skirt, 0.0);
        assert!(plain.weights.is_empty() && plain.colours.is_empty());
        assert_eq!(plain.positions, s.positions);
    }

    /// A snowy peak in the middle of a low map: the skirt's ground lies at the border's
    /// heights, so far out it carries the look of the map's low ground, not the peak's snow.
    #[test]
    fn the_skirt_does_not_carry_a_peaks_snow_out_over_the_plain() {
        use crate::bake::ground_weights::GroundParams;
        let grid = Grid::new(65, 49, 50.0).unwrap();
        let h: Vec<f32> = (0..grid.len())
            .map(|i| {
                let (x, y) = ((i % 65) as f32 - 32.0, (i / 65) as f32 - 24.0);
                100.0 + 600.0 * math::exp(-(x * x + y * y) / 400.0)
            })
            .collect();
        let inputs = GroundInputs {
            grid,
            heights: &h,
            drainage: None,
            sediment: None,
        };
        let ground = Ground {
            params: GroundParams {
                snowline_m: 300.0,
                ..GroundParams::default()
            },
            paint: None,
        };
        let log_max = drainage_log_max(&inputs);
        let snow_everywhere = (0..grid.len())
            .map(|i| shown_weights_at(&inputs, &ground, log_max, i % 65, i / 65)[7])
            .sum::<f32>()
            / grid.len() as f32;
        assert!(
            snow_everywhere > 0.02,
            "the peak holds little snow ({snow_everywhere}): the test proves nothing"
        );
        let look = Look {
            inputs,
            ground,
            colours: None,
            rivers: None,
        };
        let s = skirt_with(grid, &h, Edge::Skirt, 0.0, Some(&look));
        let rings = s.rings;
        let m = s.positions.len() / rings;
        for i in 0..m {
            let far = s.weights[(rings - 1) * m + i][7];
            assert!(far < 1e-4, "snow {far} carried out to the horizon");
        }
    }

    /// The rills scene's fault: a plane falling southwards, cut by troughs everywhere but on
    /// its (held) border cells. Beyond the foot of the slope the skirt must keep falling from
    /// the border, not climb towards the border's mean or roll in bumps as high as the whole
    /// slope's fall (which drew it as a wall above the terrain), and its border normals must
    /// be the terrain's own there.
    #[test]
    fn beyond_the_foot_of_a_slope_the_skirt_keeps_falling_from_the_border() {
        let n = 65;
        let grid = Grid::new(n, n, 1.0).unwrap();
        let h: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, y) = (i % n, i / n);
                let border = x == 0 || y == 0 || x == n - 1 || y == n - 1;
                let trough = if !border && x % 8 == 4 { 0.8 } else { 0.0 };
                20.0 - 0.1 * y as f32 - trough
            })
            .collect();
        let s = skirt(grid, &h, Edge::Skirt, 0.0);
        let m = s.positions.len() / s.rings;
        let foot = 20.0 - 0.1 * (n - 1) as f32;
        let mut checked = 0;
        for i in 0..m {
            let p1 = s.positions[m + i];
            // The south border, away from the corners and from the troughs' columns (where
            // the held border cell is a lip over the trough, so the terrain's one-sided
            // normal there leans inwards).
            let column = (p1[0] + 32.0).round() as usize;
            if (p1[2] - 32.0).abs() > 1e-3 || p1[0].abs() > 24.0 || column % 8 == 4 {
                continue;
            }
            checked += 1;
            assert!(
                (p1[1] - foot).abs() < 1e-4,
                "ring 1 at {p1:?}, border {foot}"
            );
            // Falling over the first eight metres out (then it eases flat).
            let mut last = p1[1];
            for r in 2..8 {
                let p = s.positions[r * m + i];
                assert!(
                    p[1] < last,
                    "ring {r} at {p:?} climbs from {last} (border {foot})"
                );
                last = p[1];
            }
            // The slope across the seam: the terrain's (0.1 falling outwards; the troughs,
            // one column in eight, take an eighth of a 0.8 m trough over 8 cells off the
            // fall measured inside) on both sides.
            let p2 = s.positions[2 * m + i];
            let fall = (p1[1] - p2[1]) / (p2[2] - p1[2]);
            assert!((fall - 0.1).abs() < 0.025, "the skirt falls {fall} a metre");
            let x = p1[0] + 32.0;
            let want = terrain_normal(grid, &h, x, 64.0).unwrap();
            let got = s.normals[m + i];
            for k in 0..3 {
                assert!(
                    (got[k] - want[k]).abs() < 1e-5,
                    "normal {got:?} against {want:?}"
                );
            }
            assert!(
                (want[2] - 0.1 / 1.01f32.sqrt()).abs() < 1e-3,
                "the border normal is not the one-sided slope: {want:?}"
            );
        }
        assert!(checked > 35, "only {checked} samples on the south border");
    }

    #[test]
    fn the_ring_mean_is_the_window_summed_sample_by_sample() {
        let values: Vec<f32> = (0..37).map(|i| ((i * 7919) % 101) as f32 - 50.0).collect();
        let m = values.len();
        for k in [0, 1, 5, 17, 18] {
            let fast = ring_mean(&values, k);
            for (i, got) in fast.iter().enumerate() {
                let want = (0..=2 * k)
                    .map(|j| values[(i + m + j - k) % m])
                    .sum::<f32>()
                    / (2 * k + 1) as f32;
                assert!(
                    (got - want).abs() < 1e-4,
                    "k {k}, sample {i}: {got} against {want}"
                );
            }
        }
    }

    /// Grooves the border cuts (rills six cells apart, 2 m deep, down to the south border)
    /// run on over the first rings and fade by NOTCH_CELLS out: blurred away within a few
    /// cells, rills ended on a line along the map's edge.
    #[test]
    fn the_borders_grooves_run_on_a_few_cells_and_fade() {
        let grid = Grid::new(65, 49, 50.0).unwrap();
        let h: Vec<f32> = (0..grid.len())
            .map(|i| 100.0 + math::cos((i % 65) as f32 * std::f32::consts::TAU / 6.0))
            .collect();
        let s = skirt(grid, &h, Edge::Skirt, 0.0);
        let m = s.positions.len() / s.rings;
        let (hx, hz) = (1600.0f32, 1200.0f32);
        // Per ring: how far out it lies (cells) and its grooves' depth along the south side
        // away from the corners (the mean departure from a seven-sample mean, which leaves
        // out the skirt's slow rolling ground).
        let grooves = |r: usize| {
            let side: Vec<f32> = (r * m..(r + 1) * m)
                .map(|k| s.positions[k])
                .filter(|p| p[2] >= hz - 1e-3 && p[0].abs() < hx - 500.0)
                .map(|p| p[1])
                .collect();
            let smooth = ring_mean(&side, 3);
            let depth = side.iter().zip(&smooth).skip(3).take(side.len() - 6);
            let n = side.len() - 6;
            let out = s.positions[r * m..(r + 1) * m]
                .iter()
                .map(|p| p[2] - hz)
                .fold(f32::MIN, f32::max);
            (
                out / 50.0,
                depth.map(|(a, b)| (a - b).abs()).sum::<f32>() / n as f32,
            )
        };
        let (_, border) = grooves(1);
        assert!(border > 0.5, "the border's grooves: {border}");
        for r in 2..s.rings {
            let (out, depth) = grooves(r);
            if (2.0..=4.0).contains(&out) {
                assert!(depth > 0.5 * border, "{out} cells out: {depth} of {border}");
            }
            if out >= 24.0 {
                assert!(depth < 0.1 * border, "{out} cells out: {depth} of {border}");
            }
        }
    }

    #[test]
    fn tiny_maps_get_a_finite_skirt() {
        for (w, h) in [(2, 2), (2, 5), (3, 3), (4, 7)] {
            let grid = Grid::new(w, h, 10.0).unwrap();
            let heights: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
            for edge in [Edge::Skirt, Edge::Coast] {
                let s = skirt(grid, &heights, edge, 0.0);
                assert!(!s.indices.is_empty(), "{w}×{h} {edge:?}");
                assert!(s.positions.iter().flatten().all(|v| v.is_finite()));
                assert!(s.normals.iter().flatten().all(|v| v.is_finite()));
            }
        }
    }

    #[test]
    fn a_coast_falls_below_the_sea_and_a_skirt_stays_near_the_land() {
        let (grid, h) = terrain();
        let coast = skirt(grid, &h, Edge::Coast, 100.0);
        let land = skirt(grid, &h, Edge::Skirt, 100.0);
        let m = coast.positions.len() / coast.rings;
        let outer = &coast.positions[(coast.rings - 1) * m..];
        assert!(outer
            .iter()
            .all(|p| (p[1] - (100.0 - COAST_DEPTH_M)).abs() < 1e-3));
        let outer = &land.positions[(land.rings - 1) * m..];
        assert!(
            outer.iter().all(|p| p[1] > 50.0 && p[1] < 550.0),
            "skirt leaves the land's range"
        );
        assert!(skirt(grid, &h, Edge::None, 0.0).positions.is_empty());
    }

    /// The `large` and `main` demos' fault: the coast fell fastest at the border, over
    /// twice its drop and at most 4 % of the map, so on a map of 50 m cells the land beyond
    /// the border dropped hundreds of metres over a few cells (80°) and the map's sides read
    /// as walls into the sea. Now no step out from the border is steeper than the mean
    /// slope's three times (or the ground's own fall across the border), and the coast
    /// reaches the sea floor over COAST_RUN times its drop.
    #[test]
    fn a_coast_falls_to_the_sea_without_walls() {
        let (grid, h) = terrain();
        let sea = 100.0;
        let coast = skirt(grid, &h, Edge::Coast, sea);
        let m = coast.positions.len() / coast.rings;
        let floor = sea - COAST_DEPTH_M;
        let mut steepest = 0.0f32;
        let mut widest = 0.0f32;
        for i in 0..m {
            let top = coast.positions[m + i][1];
            for r in 1..coast.rings - 1 {
                let (a, b) = (coast.positions[r * m + i], coast.positions[(r + 1) * m + i]);
                let run = ((b[0] - a[0]).powi(2) + (b[2] - a[2]).powi(2)).sqrt();
                steepest = steepest.max((a[1] - b[1]) / run);
                if b[1] > floor + 1e-3 {
                    let out = (b[0] - coast.positions[m + i][0])
                        .abs()
                        .max((b[2] - coast.positions[m + i][2]).abs());
                    widest = widest.max(out / (top - floor).max(1e-3));
                }
            }
        }
        assert!(
            steepest < 0.6,
            "the coast falls {steepest} a metre somewhere (a wall)"
        );
        assert!(
            widest > 0.5 * COAST_RUN,
            "the coast reaches the floor within {widest} times its drop"
        );
    }

    #[test]
    fn a_coast_never_rises_above_its_border_and_a_drowned_border_raises_no_islands() {
        let (grid, h) = terrain();
        let lo = h.iter().cloned().fold(f32::INFINITY, f32::min);
        let hi = h.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        for sea in [lo + 0.5 * (hi - lo), hi + 1.0] {
            let coast = skirt(grid, &h, Edge::Coast, sea);
            let m = coast.positions.len() / coast.rings;
            // Ring 1 is the border itself; beyond it the coast stays under the border's
            // highest point, bumps included, and under the sea when the whole border is.
            let top = coast.positions[m..2 * m]
                .iter()
                .map(|p| p[1])
                .fold(f32::NEG_INFINITY, f32::max);
            for (k, p) in coast.positions[2 * m..].iter().enumerate() {
                assert!(
                    p[1] <= top + 1e-3,
                    "vertex {k}: {} over the border's {top}",
                    p[1]
                );
                if top < sea {
                    assert!(
                        p[1] < sea,
                        "vertex {k}: an island at {} off a drowned border",
                        p[1]
                    );
                }
            }
        }
    }
}
