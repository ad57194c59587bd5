//! The primitive-based heightfield (Cordonnier et al. 2016 §7, third rendering method;
//! Génevaux et al. 2013 construction tree): the stream graph turned into terrain, valley,
//! lake and river primitives, combined per pixel.
//!
//! The construction tree, evaluated at each point `p` (the fixed composition
//! `Carve(Replace(Blend(Blend(base, ridges), valleys) + detail, lakes), rivers)`):
//!
//! 1. **base** `B(p)`: over the Delaunay triangle holding `p` (outside the hull: the
//!    nearest point of the nearest triangle), the corners' tangent planes (least-squares
//!    node gradients) mixed by the barycentric weights, ¾ planes and ¼ flat triangle (a
//!    Phong-like patch: through the node heights, continuous across edges).
//! 2. **ridges**, along the divides between basins (Cordonnier et al. 2016 §7). A node is
//!    a *channel* node when its discharge is at least `ridge_threshold` × the largest; a
//!    *junction* has two channel donors or more. Each node is labelled by the reach it
//!    drains into: the first channel node down its receivers that is an outlet or drains
//!    into a junction (one pass in stream order, receivers first; a cycle is an error), so
//!    the branches above a junction differ and the two sides of one reach agree; a node
//!    that reaches no such channel node (its outlet is no channel node) takes one shared
//!    label. A *divide
//!    edge* is a Delaunay edge whose nodes have different labels and that is not a stream
//!    link (a link into a junction joins two labels but runs down a valley). Its ridge is
//!    the Voronoi edge between the circumcentres of the two triangles beside it (a hull
//!    edge: from its triangle's circumcentre to its col; a circumcentre farther than the
//!    triangle's longest edge from its centroid is pulled back to that distance). The
//!    *col* of divide edge `i–j` is where the hillslope cones `h + s·|q − p|` of its nodes
//!    meet on the link (`s` the slope to the receiver, at most 100), at least as high as
//!    either node; the crest at a Voronoi vertex is the mean col of its triangle's divide
//!    edges, linear along the segment. The profile is `R = crest − s_r·d`, `s_r` the mean
//!    slope of the two nodes, `d` the distance to the segment, with weight 1 up to half a
//!    mean link length and fading smoothly to 0 at one. **Blend**: the upper envelope
//!    `r = max(0, max over ridges of weight·(R − B))`, eased in over its first
//!    `0.1·relief` metres and at most the local relief, scaled by `ridges` and faded out
//!    over channel nodes (the interpolated channel indicator from ¼ to ¾) and lakes: `T =
//!    B + r`. So valley floors are untouched (between two channel nodes `r` is 0).
//!    Where this differs from the first design, and why: crests at the Voronoi vertices
//!    from the cones there made every vertex a peak (dotted bumps along each divide) and
//!    the ridges meeting at a vertex disagree on its height; the mean col is one height
//!    per vertex. A reach of half a link made narrow walls on a rounded base; one link
//!    lets the flanks run down into the hillslopes. The valleys' ease depth (½ relief)
//!    flattened low ridges, hence 0.1. Only channel nodes start a label: a hillslope node
//!    draining straight into a junction or off the domain would be a basin of its own,
//!    ringed by ridges (a knob).
//! 3. **valleys**, one per stream-tree link `i → receiver`: a cone rising from the link
//!    (height interpolated along it) with slope `s`, the steepest rise along a graph link
//!    from either end. Its weight is 1 up to half its radius (`valley_radius` × the ends' mean link
//!    length) and fades smoothly to 0 at the radius.
//!    **Blend**: with `c = min(0, min over links of weight·(cone − T))`, a lower envelope
//!    (where two valley sides meet they make a crease), `T + ease(c)`: the cut eases in
//!    over its first `½·relief` metres (quadratic, C1), so a cone that barely dips under
//!    the base leaves no pit-shaped crease.
//! 4. **detail**: gradient noise (3 octaves) of amplitude `detail` × the local relief (the
//!    largest height step from a node to its neighbours, interpolated), deterministic from
//!    the seed, faded to 0 inside river channels and lakes.
//! 5. **lakes** (**Replace**): where the nodes' water level is above their height, the
//!    surface is raised to the lake level `L`: `h + wλ·max(0, L − h)`, `wλ` = 1 where the
//!    interpolated lake indicator reaches ½ (fading to 0 at the shore's non-lake nodes), so
//!    lakes are flat.
//! 6. **rivers** (**Carve**): along each river segment a parabolic channel: floor `f` at
//!    the centre line, rising by `depth_ratio·w` at the banks `|d| = w/2` and on outside;
//!    weight 1 inside the channel, fading smoothly to 0 at `w/2 + bank_ratio·w`; inner
//!    weight 1 within `w/4` of the centre line, 0 from `w/2`. With `C` the lowest channel
//!    shape over the segments in reach, `W` and `I` the largest weights:
//!    `h + W·min(0, C − h) + I·max(0, C − h)` (the channel's inner half replaces the
//!    ground, so the centre line reads the floor). The floor is the river's bed
//!    or the ground under it (the tree without ridges and detail), whichever is lower,
//!    less the channel depth (no depth inside lakes), made non-increasing downstream from
//!    the mouth up, and a tributary's mouth takes the floor of the river it joins. Where
//!    the floor lies below the ground beside it (the smoothed river strays off its
//!    valley's link), the bank widens to keep the walls to a mean slope of 0.5.

use glam::DVec2;
use rayon::prelude::*;

use super::bins::BinLists;
use super::rivers::{check_surface, stream_order, River};
use super::StreamSurface;
use crate::error::{check_range, OrogenError, Result};
use crate::field::Grid;
use crate::mesh::graph::alloc;

/// Shape of the primitives. Lengths are relative to the channel width or the node spacing.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PrimitiveParams {
    /// Channel depth at the centre line over channel width (metres per metre). Default 0.1.
    pub depth_ratio: f32,
    /// Width of the bank over which a channel blends into the valley, over channel width.
    /// In `[0.1, 10]`. Default 1.
    pub bank_ratio: f32,
    /// Reach of a valley primitive around its stream link, in the mean length of the
    /// links at its ends. In `[0.25, 4]`. Default 1.
    pub valley_radius: f32,
    /// Noise amplitude over local relief (0 for none). In `[0, 1]`. Default 0.05.
    pub detail: f32,
    /// Longest noise wavelength, metres; 0 means twice the mean node spacing. Default 0.
    pub detail_wavelength: f32,
    /// Strength of the ridge primitives along the basin divides: 1 raises the crests to
    /// the meeting of the hillslopes, 0 draws no ridge. In `[0, 1]`. Default 1.
    pub ridges: f32,
    /// Discharge from which a node is a channel node, as a fraction of the largest
    /// discharge: the basins whose divides get ridges are those of the channel reaches
    /// between confluences, and the ridges fade out over channel nodes. In `[1e-6, 1]`.
    /// Default 0.01, the rivers' default threshold (1 % of the largest discharge).
    pub ridge_threshold: f32,
}

impl Default for PrimitiveParams {
    fn default() -> Self {
        PrimitiveParams {
            depth_ratio: 0.1,
            bank_ratio: 1.0,
            valley_radius: 1.0,
            detail: 0.05,
            detail_wavelength: 0.0,
            ridges: 1.0,
            ridge_threshold: 0.01,
        }
    }
}

impl PrimitiveParams {
    /// Checks ranges; `field` prefixes error names.
    pub fn validate(&self, field: &str) -> Result<()> {
        check_range(
            &format!("{field}.depth_ratio"),
            self.depth_ratio as f64,
            0.0,
            10.0,
        )?;
        check_range(
            &format!("{field}.bank_ratio"),
            self.bank_ratio as f64,
            0.1,
            10.0,
        )?;
        check_range(
            &format!("{field}.valley_radius"),
            self.valley_radius as f64,
            0.25,
            4.0,
        )?;
        check_range(&format!("{field}.detail"), self.detail as f64, 0.0, 1.0)?;
        check_range(
            &format!("{field}.detail_wavelength"),
            self.detail_wavelength as f64,
            0.0,
            1e7,
        )?;
        check_range(&format!("{field}.ridges"), self.ridges as f64, 0.0, 1.0)?;
        check_range(
            &format!("{field}.ridge_threshold"),
            self.ridge_threshold as f64,
            1e-6,
            1.0,
        )?;
        Ok(())
    }
}

/// A uniform grid of square bins, each listing the items overlapping it.
struct Bins {
    origin: DVec2,
    size: f64,
    nx: usize,
    ny: usize,
    lists: BinLists,
}

impl Bins {
    /// Bins over `[lo, hi]` of about `size` metres, filled with the items whose boxes
    /// (`boxes(k) = (min, max)`) overlap them and that `keep(k, bin centre, bin half
    /// diagonal)` keeps.
    fn build(
        lo: DVec2,
        hi: DVec2,
        size: f64,
        count: usize,
        what: &str,
        boxes: impl Fn(usize) -> (DVec2, DVec2) + Sync,
        keep: impl Fn(usize, DVec2, f64) -> bool + Sync,
    ) -> Result<Bins> {
        let ext = (hi - lo).max(DVec2::splat(1e-9));
        let mut size = size.max(1e-9);
        // At most 2^22 bins.
        while (ext.x / size).ceil() * (ext.y / size).ceil() > (1u64 << 22) as f64 {
            size *= 2.0;
        }
        let nx = ((ext.x / size).ceil() as usize).max(1);
        let ny = ((ext.y / size).ceil() as usize).max(1);
        let mut bins = Bins {
            origin: lo,
            size,
            nx,
            ny,
            lists: BinLists::default(),
        };
        let half_diagonal = size * std::f64::consts::FRAC_1_SQRT_2;
        bins.lists = BinLists::build(nx * ny, count, what, |k, add| {
            let (a, b) = boxes(k);
            let (x0, y0) = bins.cell(a);
            let (x1, y1) = bins.cell(b);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    if keep(k, bins.centre(x, y), half_diagonal) {
                        add(y * nx + x);
                    }
                }
            }
        })?;
        Ok(bins)
    }

    /// [`Bins::build`] for `count` segments that reach a radius around them: `seg(k)` is
    /// item `k`'s ends and radius.
    fn segments(
        lo: DVec2,
        hi: DVec2,
        size: f64,
        count: usize,
        what: &str,
        seg: impl Fn(usize) -> (DVec2, DVec2, f64) + Sync,
    ) -> Result<Bins> {
        Bins::build(
            lo,
            hi,
            size,
            count,
            what,
            |k| {
                let (a, b, r) = seg(k);
                let e = DVec2::splat(r);
                (a.min(b) - e, a.max(b) + e)
            },
            |k, c, half_diagonal| {
                let (a, b, r) = seg(k);
                segment_distance(c, a, b).0 < r + half_diagonal
            },
        )
    }

    /// Sorts each bin's items by `key` (ties by index).
    fn sort_by(&mut self, key: impl Fn(u32) -> f64 + Sync) {
        self.lists.sort_each_by(key);
    }

    /// Centre of bin `(x, y)`.
    #[inline]
    fn centre(&self, x: usize, y: usize) -> DVec2 {
        self.origin + DVec2::new(x as f64 + 0.5, y as f64 + 0.5) * self.size
    }

    /// The bin holding `p`, clamped to the grid.
    #[inline]
    fn cell(&self, p: DVec2) -> (usize, usize) {
        let f = (p - self.origin) / self.size;
        // Casts saturate (NaN to 0), and truncation is the floor for x ≥ 0.
        let x = (f.x.max(0.0) as usize).min(self.nx - 1);
        let y = (f.y.max(0.0) as usize).min(self.ny - 1);
        (x, y)
    }

    #[inline]
    fn at(&self, x: usize, y: usize) -> &[u32] {
        self.lists.bin(y * self.nx + x)
    }

    #[inline]
    fn items(&self, p: DVec2) -> &[u32] {
        let (x, y) = self.cell(p);
        self.at(x, y)
    }
}

/// A stream link as a valley primitive.
#[derive(Clone, Copy)]
struct Valley {
    a: DVec2,
    b: DVec2,
    za: f64,
    zb: f64,
    slope: f64,
    radius: f64,
    /// `min(za, zb)`.
    low: f64,
}

/// A stretch of a basin divide (a Voronoi edge between two nodes of different basins) as
/// a ridge primitive: crest `za → zb` along `a → b`, flanks falling at `slope`.
#[derive(Clone, Copy)]
struct Ridge {
    a: DVec2,
    b: DVec2,
    za: f64,
    zb: f64,
    slope: f64,
    radius: f64,
    /// `max(za, zb)`.
    top: f64,
    /// The two nodes the divide passes between.
    nodes: [u32; 2],
}

/// A river segment as a channel primitive.
#[derive(Clone, Copy)]
struct Channel {
    a: DVec2,
    b: DVec2,
    floor: [f64; 2],
    depth: [f64; 2],
    half: [f64; 2],
    bank: [f64; 2],
}

/// Where `p` stands in the triangulation: the interpolated node values there.
#[derive(Clone, Copy)]
struct Located {
    base: f64,
    relief: f64,
    lake_weight: f64,
    lake_core: f64,
    lake_level: f64,
    /// Interpolated channel indicator (1 between channel nodes).
    channel: f64,
}

/// The primitives of a stream surface, ready to be evaluated at any point
/// ([`PrimitiveSurface::height`]); [`primitives`] evaluates it per pixel.
pub struct PrimitiveSurface {
    pos: Vec<DVec2>,
    heights: Vec<f64>,
    gradient: Vec<DVec2>,
    relief: Vec<f64>,
    lake: Vec<f64>,
    triangles: Vec<[u32; 3]>,
    tri_lake_level: Vec<f64>,
    /// Triangles well shaped enough to be taken as a hint ([`PrimitiveSurface::triangle_at`]).
    tri_hint_ok: Vec<bool>,
    tri_bins: Bins,
    valleys: Vec<Valley>,
    valley_bins: Bins,
    /// 1 for a channel node (discharge from the ridge threshold), else 0.
    channel_node: Vec<f64>,
    ridges: Vec<Ridge>,
    ridge_bins: Bins,
    ridge_strength: f64,
    channels: Vec<Channel>,
    channel_bins: Bins,
    detail: f64,
    wavelength: f64,
    seed: u64,
}

/// How far inside a hinted triangle, in barycentric weight, a point must lie for the
/// triangle to be taken without searching its bin. Far above the weights' rounding error
/// in a well-shaped triangle (about 1e-13), so a hit is the triangle the search finds.
const HINT_MARGIN: f64 = 1e-6;

/// A triangle hint that names no triangle.
const NO_HINT: u32 = u32::MAX;

/// Mean slope of a channel's banks where it cuts below the ground beside it (rise over
/// run, about 27°).
const WALL_SLOPE: f64 = 0.5;

/// Depth, over local relief, over which a valley cut eases in.
const VALLEY_EASE: f64 = 0.5;

/// Reach of a ridge primitive around its segment, in the mean link length of its nodes.
const RIDGE_RADIUS: f64 = 1.0;

/// Height, over local relief, over which a ridge rise eases in.
const RIDGE_EASE: f64 = 0.1;

/// Share of the tangent planes in the base surface (Phong tessellation's shape factor,
/// Boubekeur & Alexa 2008): 0 gives flat triangles.
const PHONG: f64 = 0.75;

#[inline]
fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The gradients of [`gradient_noise`]: the four diagonals and the four axes, scaled so
/// that each has length √2.
const GRADIENTS: [[f64; 2]; 8] = [
    [1.0, 1.0],
    [1.0, -1.0],
    [-1.0, 1.0],
    [-1.0, -1.0],
    [std::f64::consts::SQRT_2, 0.0],
    [-std::f64::consts::SQRT_2, 0.0],
    [0.0, std::f64::consts::SQRT_2],
    [0.0, -std::f64::consts::SQRT_2],
];

/// `x.floor()` as an integer, without a libm call; `x` must be within ±2⁶².
#[inline]
fn fast_floor(x: f64) -> i64 {
    let i = x as i64;
    i - ((i as f64) > x) as i64
}

/// A 64-bit mix (SplitMix64's finaliser).
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 2D gradient noise (Perlin's, quintic fade) in about `[-1, 1]`, lattice step 1, with
/// gradients hashed from the lattice point and `seed`: a pure function of its inputs.
#[inline]
fn gradient_noise(p: DVec2, seed: u64) -> f64 {
    let (ix, iy) = (fast_floor(p.x), fast_floor(p.y));
    let (x, y) = (p.x - ix as f64, p.y - iy as f64);
    let grad = |i: i64, j: i64, dx: f64, dy: f64| {
        let h = mix64(
            seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                ^ (j as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f),
        );
        // One of 8 gradients, from a table (no branch).
        let k = (h >> 61) as usize;
        GRADIENTS[k][0] * dx + GRADIENTS[k][1] * dy
    };
    let fade = |t: f64| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
    let (u, v) = (fade(x), fade(y));
    let n00 = grad(ix, iy, x, y);
    let n10 = grad(ix + 1, iy, x - 1.0, y);
    let n01 = grad(ix, iy + 1, x, y - 1.0);
    let n11 = grad(ix + 1, iy + 1, x - 1.0, y - 1.0);
    let a = n00 + (n10 - n00) * u;
    let b = n01 + (n11 - n01) * u;
    (a + (b - a) * v) * std::f64::consts::FRAC_1_SQRT_2
}

/// Distance from `p` to segment `a–b` and the parameter of the nearest point.
#[inline]
fn segment_distance(p: DVec2, a: DVec2, b: DVec2) -> (f64, f64) {
    let (d2, t) = segment_distance2(p, a, b);
    (d2.sqrt(), t)
}

/// [`segment_distance`] squared (no root: most segments are then found out of reach).
#[inline]
fn segment_distance2(p: DVec2, a: DVec2, b: DVec2) -> (f64, f64) {
    let ab = b - a;
    let l2 = ab.length_squared();
    let t = if l2 > 0.0 {
        ((p - a).dot(ab) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((p - (a + ab * t)).length_squared(), t)
}

impl PrimitiveSurface {
    /// The primitives of `s` with `rivers` (as [`super::rivers::extract_rivers`] gives),
    /// noise from `seed`. Errors naming the field for invalid parameters, per-node slices of
    /// the wrong length, out-of-range indices, non-finite values, no triangle, a river whose
    /// slices differ in length or hold non-finite values, or when memory runs out.
    pub fn new(
        s: &StreamSurface,
        rivers: &[River],
        p: &PrimitiveParams,
        seed: u64,
    ) -> Result<PrimitiveSurface> {
        p.validate("primitives")?;
        check_surface(s)?;
        if s.triangles.is_empty() {
            return Err(OrogenError::invalid(
                "triangles",
                "the primitives need the Delaunay triangles, got none",
            ));
        }
        for (k, r) in rivers.iter().enumerate() {
            let m = r.points.len();
            if r.discharge.len() != m || r.width.len() != m {
                return Err(OrogenError::invalid(
                    format!("rivers[{k}]"),
                    format!(
                        "points, discharge and width must have one entry per point, got {}, {} and {}",
                        m,
                        r.discharge.len(),
                        r.width.len()
                    ),
                ));
            }
            if r.points.iter().flatten().any(|v| !v.is_finite())
                || r.width.iter().any(|w| !(w.is_finite() && *w >= 0.0))
            {
                return Err(OrogenError::invalid(
                    format!("rivers[{k}]"),
                    "points must be finite and widths finite and ≥ 0",
                ));
            }
        }
        let g = s.graph;
        let n = g.len();
        let mut pos: Vec<DVec2> = alloc(n, "node positions")?;
        pos.extend_from_slice(g.positions());
        let mut heights: Vec<f64> = alloc(n, "node heights")?;
        heights.extend(s.heights.iter().map(|&h| h as f64));
        let mut relief: Vec<f64> = alloc(n, "node relief")?;
        let mut mean_link: Vec<f64> = alloc(n, "node link lengths")?;
        for i in 0..n {
            let nb = g.neighbours(i);
            let r = nb
                .iter()
                .map(|&j| (heights[j as usize] - heights[i]).abs())
                .fold(0.0, f64::max);
            relief.push(r);
            let l = g.link_lengths(i);
            mean_link.push(if l.is_empty() {
                0.0
            } else {
                l.iter().map(|&d| d as f64).sum::<f64>() / l.len() as f64
            });
        }
        // Least-squares gradient of each node from its neighbours (weights 1/d²).
        let mut gradient: Vec<DVec2> = alloc(n, "node gradients")?;
        for i in 0..n {
            let (mut sxx, mut sxy, mut syy, mut bx, mut by) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for &j in g.neighbours(i) {
                let d = pos[j as usize] - pos[i];
                let w = 1.0 / d.length_squared().max(1e-12);
                let dh = heights[j as usize] - heights[i];
                sxx += w * d.x * d.x;
                sxy += w * d.x * d.y;
                syy += w * d.y * d.y;
                bx += w * d.x * dh;
                by += w * d.y * dh;
            }
            let det = sxx * syy - sxy * sxy;
            gradient.push(if det.abs() > 1e-12 {
                DVec2::new((syy * bx - sxy * by) / det, (sxx * by - sxy * bx) / det)
            } else {
                DVec2::ZERO
            });
        }
        let mut lake: Vec<f64> = alloc(n, "lake nodes")?;
        lake.extend(
            s.water_level
                .iter()
                .zip(s.heights)
                .map(|(&w, &h)| if w > h { 1.0 } else { 0.0 }),
        );

        let (mut lo, mut hi) = (pos[0], pos[0]);
        for &q in &pos {
            lo = lo.min(q);
            hi = hi.max(q);
        }
        let spacing = (g.total_area() / n as f64).sqrt().max(1e-6);

        let mut triangles: Vec<[u32; 3]> = alloc(s.triangles.len(), "triangles")?;
        triangles.extend_from_slice(s.triangles);
        let mut tri_lake_level: Vec<f64> = alloc(triangles.len(), "triangle lake levels")?;
        tri_lake_level.extend(triangles.iter().map(|t| {
            t.iter()
                .filter(|&&v| lake[v as usize] > 0.0)
                .map(|&v| s.water_level[v as usize] as f64)
                .fold(f64::NEG_INFINITY, f64::max)
        }));
        // Well-shaped triangles (twice the area at least 1 % of the longest edge squared):
        // in them, barycentric weights are exact to far better than [`HINT_MARGIN`].
        let mut tri_hint_ok: Vec<bool> = alloc(triangles.len(), "triangle hints")?;
        tri_hint_ok.extend(triangles.iter().map(|t| {
            let [a, b, c] = t.map(|v| pos[v as usize]);
            let det = (b - a).perp_dot(c - a);
            let e2 = (b - a)
                .length_squared()
                .max((c - b).length_squared())
                .max((a - c).length_squared());
            det.abs() >= 0.01 * e2
        }));
        let tri_bins = Bins::build(
            lo,
            hi,
            0.5 * spacing,
            triangles.len(),
            "triangle bins",
            |k| {
                let t = triangles[k];
                let (a, b, c) = (pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
                (a.min(b).min(c), a.max(b).max(c))
            },
            |_, _, _| true,
        )?;

        // Valley primitives along the stream tree.
        let mut valleys: Vec<Valley> = alloc(n, "valley primitives")?;
        for i in 0..n {
            let r = s.receivers[i] as usize;
            if r == i {
                continue;
            }
            let (a, b) = (pos[i], pos[r]);
            let (za, zb) = (heights[i], heights[r]);
            // The steepest rise along a link from either end.
            let mut slope = 0.0f64;
            for end in [i, r] {
                for (&j, &d) in g.neighbours(end).iter().zip(g.link_lengths(end)) {
                    slope = slope.max((heights[j as usize] - heights[end]) / d as f64);
                }
            }
            let radius = p.valley_radius as f64 * 0.5 * (mean_link[i] + mean_link[r]);
            valleys.push(Valley {
                a,
                b,
                za,
                zb,
                slope: slope.min(100.0),
                radius: radius.max(1e-9),
                low: za.min(zb),
            });
        }
        let mut valley_bins =
            Bins::segments(lo, hi, 0.5 * spacing, valleys.len(), "valley bins", |k| {
                (valleys[k].a, valleys[k].b, valleys[k].radius)
            })?;
        valley_bins.sort_by(|k| valleys[k as usize].low);

        // Ridge primitives along the basin divides.
        let (channel_node, ridges) = ridges(s, &pos, &heights, &mean_link, &triangles, p)?;
        let mut ridge_bins =
            Bins::segments(lo, hi, 0.5 * spacing, ridges.len(), "ridge bins", |k| {
                (ridges[k].a, ridges[k].b, ridges[k].radius)
            })?;
        // Highest crest first, so the search stops at the first that cannot beat the rise.
        ridge_bins.sort_by(|k| -ridges[k as usize].top);

        let mut surface = PrimitiveSurface {
            pos,
            heights,
            gradient,
            relief,
            lake,
            triangles,
            tri_lake_level,
            tri_hint_ok,
            tri_bins,
            valleys,
            valley_bins,
            channel_node,
            ridges,
            ridge_bins,
            ridge_strength: p.ridges as f64,
            channels: Vec::new(),
            channel_bins: Bins::build(
                lo,
                hi,
                spacing,
                0,
                "channel bins",
                |_| (DVec2::ZERO, DVec2::ZERO),
                |_, _, _| true,
            )?,
            detail: p.detail as f64,
            wavelength: if p.detail_wavelength > 0.0 {
                p.detail_wavelength as f64
            } else {
                2.0 * spacing
            },
            seed,
        };
        surface.channels = surface.channels(rivers, p)?;
        let channels = &surface.channels;
        surface.channel_bins = Bins::build(
            lo,
            hi,
            spacing,
            channels.len(),
            "channel bins",
            |k| {
                let c = &channels[k];
                let e = DVec2::splat((c.half[0] + c.bank[0]).max(c.half[1] + c.bank[1]));
                (c.a.min(c.b) - e, c.a.max(c.b) + e)
            },
            |k, centre, r| {
                let c = &channels[k];
                let reach = (c.half[0] + c.bank[0]).max(c.half[1] + c.bank[1]);
                segment_distance(centre, c.a, c.b).0 < reach + r
            },
        )?;
        Ok(surface)
    }

    /// The channel segments of `rivers`, with floors non-increasing downstream.
    fn channels(&self, rivers: &[River], p: &PrimitiveParams) -> Result<Vec<Channel>> {
        let total: usize = rivers
            .iter()
            .map(|r| r.points.len().saturating_sub(1))
            .sum();
        let mut channels: Vec<Channel> = alloc(total, "channel primitives")?;
        // Rivers downstream first (higher orders first), so a tributary finds the floor of
        // the river it joins at its mouth.
        let mut by_order: Vec<usize> = (0..rivers.len()).collect();
        by_order.sort_by_key(|&k| (std::cmp::Reverse(rivers[k].order), k));
        let mut floors_at: std::collections::HashMap<(u64, u64), f64> =
            std::collections::HashMap::new();
        let mut floors: Vec<Vec<f64>> = vec![Vec::new(); rivers.len()];
        let mut grounds: Vec<Vec<f64>> = vec![Vec::new(); rivers.len()];
        for &k in &by_order {
            let r = &rivers[k];
            let m = r.points.len();
            let mut f: Vec<f64> = alloc(m, "channel floors")?;
            let mut g: Vec<f64> = alloc(m, "channel grounds")?;
            for (q, &w) in r.points.iter().zip(&r.width) {
                let at = DVec2::new(q[0], q[1]);
                let lw = self.locate_anywhere(at).lake_weight;
                // The bed is the river's height or the ground under it, whichever is
                // lower: the smoothed curve strays off the stream links, where valley
                // cones may already have cut below the links' heights, and a floor above
                // the ground would stand up as a wall along the centre line.
                let ground = self.evaluate(at, &mut NO_HINT.clone(), false) as f64;
                f.push(q[2].min(ground) - p.depth_ratio as f64 * w as f64 * (1.0 - lw));
                g.push(ground);
            }
            if let Some(last) = r.points.last() {
                if let Some(&down) = floors_at.get(&(last[0].to_bits(), last[1].to_bits())) {
                    f[m - 1] = f[m - 1].max(down);
                }
            }
            for i in (0..m.saturating_sub(1)).rev() {
                f[i] = f[i].max(f[i + 1]);
            }
            for (q, &fl) in r.points.iter().zip(&f) {
                floors_at
                    .entry((q[0].to_bits(), q[1].to_bits()))
                    .or_insert(fl);
            }
            floors[k] = f;
            grounds[k] = g;
        }
        for ((r, f), g) in rivers.iter().zip(&floors).zip(&grounds) {
            for i in 0..r.points.len().saturating_sub(1) {
                let (qa, qb) = (r.points[i], r.points[i + 1]);
                let wa = (r.width[i] as f64).max(1e-3);
                let wb = (r.width[i + 1] as f64).max(1e-3);
                let la = self.locate_anywhere(DVec2::new(qa[0], qa[1])).lake_weight;
                let lb = self.locate_anywhere(DVec2::new(qb[0], qb[1])).lake_weight;
                let dr = p.depth_ratio as f64;
                channels.push(Channel {
                    a: DVec2::new(qa[0], qa[1]),
                    b: DVec2::new(qb[0], qb[1]),
                    floor: [f[i], f[i + 1]],
                    depth: [dr * wa * (1.0 - la), dr * wb * (1.0 - lb)],
                    half: [0.5 * wa, 0.5 * wb],
                    // Where the channel cuts below the ground beside it (the smoothed
                    // curve strays off the valley's stream link), the bank widens so its
                    // walls keep to a mean slope of WALL_SLOPE: a small valley, not a slot.
                    bank: [
                        (p.bank_ratio as f64 * wa).max((g[i] - f[i]) / WALL_SLOPE),
                        (p.bank_ratio as f64 * wb).max((g[i + 1] - f[i + 1]) / WALL_SLOPE),
                    ],
                });
            }
        }
        Ok(channels)
    }

    /// Barycentric coordinates of `p` in triangle `k`.
    #[inline]
    fn barycentric(&self, k: usize, p: DVec2) -> [f64; 3] {
        let t = self.triangles[k];
        let (a, b, c) = (
            self.pos[t[0] as usize],
            self.pos[t[1] as usize],
            self.pos[t[2] as usize],
        );
        let det = (b - a).perp_dot(c - a);
        if det == 0.0 {
            return [-1.0, -1.0, -1.0];
        }
        let l1 = (p - a).perp_dot(c - a) / det;
        let l2 = (b - a).perp_dot(p - a) / det;
        [1.0 - l1 - l2, l1, l2]
    }

    /// The closest point of triangle `k` to `p`, as barycentric weights, and its distance.
    fn closest_in_triangle(&self, k: usize, p: DVec2) -> ([f64; 3], f64) {
        let t = self.triangles[k];
        let v = [
            self.pos[t[0] as usize],
            self.pos[t[1] as usize],
            self.pos[t[2] as usize],
        ];
        let w = self.barycentric(k, p);
        if w.iter().all(|&x| x >= 0.0) {
            return (w, 0.0);
        }
        let mut best = ([1.0, 0.0, 0.0], f64::INFINITY);
        for e in 0..3 {
            let (i, j) = (e, (e + 1) % 3);
            let (d, u) = segment_distance(p, v[i], v[j]);
            if d < best.1 {
                let mut bw = [0.0; 3];
                bw[i] = 1.0 - u;
                bw[j] = u;
                best = (bw, d);
            }
        }
        best
    }

    /// The triangle holding `p` (or nearest to it) and the barycentric weights there:
    /// the first in `p`'s bin holding it. `hint` is a triangle tried first (the last one
    /// found along a row; any value): when `p` lies inside it by more than
    /// [`HINT_MARGIN`] and it is well shaped, no other triangle can hold `p` (they do not
    /// overlap), so it is the one the bin search would find; updated to the triangle found.
    fn triangle_at(&self, p: DVec2, hint: &mut u32) -> (usize, [f64; 3]) {
        let h = *hint as usize;
        if self.tri_hint_ok.get(h) == Some(&true) {
            let w = self.barycentric(h, p);
            if w.iter().all(|&x| x > HINT_MARGIN) {
                return (h, w);
            }
        }
        for &k in self.tri_bins.items(p) {
            let w = self.barycentric(k as usize, p);
            if w.iter().all(|&x| x >= -1e-12) {
                *hint = k;
                return (k as usize, w);
            }
        }
        // Outside the hull (or in a bin gap): the nearest triangle, searching rings of bins.
        let b = &self.tri_bins;
        let f = (p - b.origin) / b.size;
        let (cx, cy) = (f.x.floor(), f.y.floor());
        // Chebyshev distance, in bins, from p's bin to the grid.
        let gap_x = (-cx).max(cx - (b.nx as f64 - 1.0)).max(0.0);
        let gap_y = (-cy).max(cy - (b.ny as f64 - 1.0)).max(0.0);
        let start = gap_x.max(gap_y) as i64;
        let max_ring = start + b.nx.max(b.ny) as i64 + 1;
        let mut best: Option<(usize, [f64; 3], f64)> = None;
        for ring in start..=max_ring {
            if let Some((_, _, d)) = best {
                if d <= (ring - 1).max(0) as f64 * b.size {
                    break;
                }
            }
            let (x0, x1) = (cx as i64 - ring, cx as i64 + ring);
            let (y0, y1) = (cy as i64 - ring, cy as i64 + ring);
            for y in y0.max(0)..=y1.min(b.ny as i64 - 1) {
                for x in x0.max(0)..=x1.min(b.nx as i64 - 1) {
                    if x != x0 && x != x1 && y != y0 && y != y1 {
                        continue;
                    }
                    for &k in b.at(x as usize, y as usize) {
                        let (w, d) = self.closest_in_triangle(k as usize, p);
                        let better = match best {
                            None => true,
                            Some((bk, _, bd)) => d < bd || (d == bd && (k as usize) < bk),
                        };
                        if better {
                            best = Some((k as usize, w, d));
                        }
                    }
                }
            }
        }
        match best {
            Some((k, w, _)) => (k, w),
            None => (0, [1.0, 0.0, 0.0]),
        }
    }

    /// [`PrimitiveSurface::locate`] without a hint.
    fn locate_anywhere(&self, p: DVec2) -> Located {
        let mut hint = NO_HINT;
        self.locate(p, &mut hint)
    }

    /// The node values interpolated at `p`.
    #[inline]
    fn locate(&self, p: DVec2, hint: &mut u32) -> Located {
        let (k, w) = self.triangle_at(p, hint);
        let t = self.triangles[k];
        let mut out = Located {
            base: 0.0,
            relief: 0.0,
            lake_weight: 0.0,
            lake_core: 0.0,
            lake_level: self.tri_lake_level[k],
            channel: 0.0,
        };
        let mut lambda = 0.0;
        for c in 0..3 {
            let v = t[c] as usize;
            // Each corner's tangent plane, mixed by the barycentric weights: a quadratic
            // patch through the nodes, continuous across edges, without flat facets.
            let plane = self.heights[v] + self.gradient[v].dot(p - self.pos[v]);
            out.base += w[c] * ((1.0 - PHONG) * self.heights[v] + PHONG * plane);
            out.relief += w[c] * self.relief[v];
            out.channel += w[c] * self.channel_node[v];
            lambda += w[c] * self.lake[v];
        }
        out.lake_weight = smoothstep(0.0, 0.5, lambda);
        out.lake_core = smoothstep(0.5, 1.0, lambda);
        out
    }

    /// Fractal gradient noise in about `[-1, 1]`, 3 octaves.
    #[inline]
    fn noise(&self, p: DVec2) -> f64 {
        let mut f = 1.0 / self.wavelength;
        let (mut amp, mut sum) = (1.0, 0.0);
        for _ in 0..3 {
            sum += amp * gradient_noise(p * f, self.seed);
            f *= 2.0;
            amp *= 0.5;
        }
        sum / 1.75
    }

    /// Channel `k` at `p`: its shape (height), its weight and its inner weight (1 within
    /// half the half-width, 0 from the bank), or `None` beyond its bank.
    #[inline]
    fn channel(&self, k: usize, p: DVec2) -> Option<(f64, f64, f64)> {
        let c = &self.channels[k];
        let (d, t) = segment_distance(p, c.a, c.b);
        let half = c.half[0] + (c.half[1] - c.half[0]) * t;
        let bank = c.bank[0] + (c.bank[1] - c.bank[0]) * t;
        if d >= half + bank {
            return None;
        }
        let floor = c.floor[0] + (c.floor[1] - c.floor[0]) * t;
        let depth = c.depth[0] + (c.depth[1] - c.depth[0]) * t;
        let r = d / half;
        let weight = 1.0 - smoothstep(half, half + bank, d);
        let inner = 1.0 - smoothstep(0.5 * half, half, d);
        Some((floor + depth * r * r, weight, inner))
    }

    /// How much the ridges raise the base at `p`: the upper envelope of the ridge
    /// profiles over the base, eased in, at most the local relief, faded out over channel
    /// nodes and lakes and scaled by the ridge strength.
    #[inline]
    fn ridge_rise(&self, p: DVec2, loc: &Located) -> f64 {
        let fade = self.ridge_strength
            * (1.0 - smoothstep(0.25, 0.75, loc.channel))
            * (1.0 - loc.lake_weight);
        if fade <= 0.0 {
            return 0.0;
        }
        let base = loc.base;
        let mut rise = 0.0f64;
        for &k in self.ridge_bins.items(p) {
            let r = &self.ridges[k as usize];
            // The profile is at most the crest's top, and the bin lists its ridges by
            // decreasing top: none of the rest can beat the rise so far.
            if r.top - base <= rise {
                break;
            }
            let (d2, t) = segment_distance2(p, r.a, r.b);
            if d2 >= r.radius * r.radius {
                continue;
            }
            // The profile here is at most `top − slope·d`: skip it (without a root) when
            // that cannot beat the rise so far.
            let room = r.top - base - rise;
            if room * room <= r.slope * r.slope * d2 {
                continue;
            }
            let d = d2.sqrt();
            let profile = r.za + (r.zb - r.za) * t - r.slope * d;
            let weight = 1.0 - smoothstep(0.5 * r.radius, r.radius, d);
            rise = rise.max(weight * (profile - base));
        }
        if rise <= 0.0 {
            return 0.0;
        }
        // Eased in like the valley cut (C1 where a ridge leaves the base), over a shorter
        // depth so that low ridges stay sharp.
        let k = RIDGE_EASE * loc.relief + 1e-9;
        let eased = if rise >= 0.5 * k {
            rise - 0.25 * k
        } else {
            rise * rise / k
        };
        fade * eased.min(loc.relief)
    }

    /// The basin divides the ridges follow: the two nodes of each ridge primitive's
    /// divide edge and its segment's ends (metres), in no particular order.
    pub fn ridges(&self) -> impl Iterator<Item = ([u32; 2], [DVec2; 2])> + '_ {
        self.ridges.iter().map(|r| (r.nodes, [r.a, r.b]))
    }

    /// The height of the terrain at `(x, y)` metres: the construction tree evaluated there.
    pub fn height(&self, x: f64, y: f64) -> f32 {
        let mut hint = NO_HINT;
        self.height_hinted(DVec2::new(x, y), &mut hint)
    }

    /// The water surface at `(x, y)` metres: a lake's level wherever the lake reaches
    /// (its weight is above 0) and the ground is below it, so the water is flat out to the
    /// shore, where the ground rises through the level; elsewhere the height.
    pub fn water_surface(&self, x: f64, y: f64) -> f32 {
        let p = DVec2::new(x, y);
        let mut hint = NO_HINT;
        let h = self.height_hinted(p, &mut hint);
        let loc = self.locate(p, &mut hint);
        if loc.lake_weight > 0.0 && loc.lake_level.is_finite() {
            h.max(loc.lake_level as f32)
        } else {
            h
        }
    }

    /// [`PrimitiveSurface::height`] at `p`, the triangle search starting from `hint` (see
    /// [`PrimitiveSurface::triangle_at`]): the same value whatever the hint.
    fn height_hinted(&self, p: DVec2, hint: &mut u32) -> f32 {
        self.evaluate(p, hint, true)
    }

    /// The construction tree at `p`; without `extras`, without the ridges and the noise
    /// detail (the ground the channel floors are fitted to, so they do not depend on either).
    fn evaluate(&self, p: DVec2, hint: &mut u32, extras: bool) -> f32 {
        let loc = self.locate(p, hint);
        // Blend(base, ridges): the upper envelope of the ridges over the base.
        let base = if extras {
            loc.base + self.ridge_rise(p, &loc)
        } else {
            loc.base
        };

        // Blend(base, valleys): the lower envelope of the valley cones.
        let mut cut = 0.0f64;
        for &k in self.valley_bins.items(p) {
            let v = &self.valleys[k as usize];
            // The cone is at least the link's lower end, so it cannot cut deeper than
            // `low − base`; the bin lists its links by increasing `low`, so none of the
            // rest can beat the deepest cut so far either.
            if v.low - base >= cut {
                break;
            }
            // Squared distance first: most links in a bin are beyond their radius.
            let (d2, t) = segment_distance2(p, v.a, v.b);
            if d2 >= v.radius * v.radius {
                continue;
            }
            let d = d2.sqrt();
            let cone = v.za + (v.zb - v.za) * t + v.slope * d;
            let weight = 1.0 - smoothstep(0.5 * v.radius, v.radius, d);
            cut = cut.min(weight * (cone - base));
        }
        // The cut eased in over its first `k` metres (C1 where the cones leave the base,
        // so no crease where a cone barely dips under the base).
        let k = VALLEY_EASE * loc.relief + 1e-9;
        let eased = if cut <= -0.5 * k {
            cut + 0.25 * k
        } else {
            -cut * cut / k
        };
        let mut h = base + eased;

        // The channels here: the lowest channel shape, how much the channels hold (1
        // inside a channel) and their inner weight (1 in a channel's inner half).
        let (mut shape, mut hold, mut inner) = (f64::INFINITY, 0.0f64, 0.0f64);
        for &k in self.channel_bins.items(p) {
            if let Some((sk, wk, ik)) = self.channel(k as usize, p) {
                shape = shape.min(sk);
                hold = hold.max(wk);
                inner = inner.max(ik);
            }
        }

        // Detail, faded out in channels and lakes.
        if extras && self.detail > 0.0 {
            let amp = self.detail * loc.relief * (1.0 - hold) * (1.0 - loc.lake_weight);
            if amp > 0.0 {
                h += amp * self.noise(p);
            }
        }

        // Replace: lakes (Génevaux et al. 2013 §5, the lake primitive). Between lake nodes
        // (interpolated indicator 1) the level replaces any ground above it, so the shore
        // is where the ground meets the water; the bed below the level stays the ground,
        // everywhere, and the water over it is the lake (the Graph domain's lake depth): a
        // lake is water of its own depth, and its shore is the curve where the ground
        // rises through the level, not the edge of the lake's triangles.
        if loc.lake_weight > 0.0 && loc.lake_level.is_finite() {
            let level = loc.lake_level;
            if h > level {
                let target = level + (1.0 - loc.lake_core) * (h - level);
                h += loc.lake_weight * (target - h);
            }
        }

        // Carve: rivers. Lowered towards the channel by its weight; in the channel's inner
        // half also raised to it, so the centre line is the channel floor (but not inside a
        // lake, whose bed lies under the river's level there).
        if hold > 0.0 {
            let raise = inner * (1.0 - loc.lake_core);
            h += hold * (shape - h).min(0.0) + raise * (shape - h).max(0.0);
        }
        h as f32
    }
}

/// Circumcentre of triangle `a b c`, kept within the longest edge of the centroid (a
/// sliver's circumcentre can lie far away; then it is pulled towards the centroid).
fn voronoi_vertex(a: DVec2, b: DVec2, c: DVec2) -> DVec2 {
    let (ab, ac) = (b - a, c - a);
    let d = 2.0 * ab.perp_dot(ac);
    let g = (a + b + c) / 3.0;
    let centre = a + DVec2::new(
        ac.y * ab.length_squared() - ab.y * ac.length_squared(),
        ab.x * ac.length_squared() - ac.x * ab.length_squared(),
    ) / d;
    let longest = ab.length().max(ac.length()).max((c - b).length());
    let off = centre - g;
    let len = off.length();
    if !len.is_finite() {
        g
    } else if len > longest {
        g + off * (longest / len)
    } else {
        centre
    }
}

/// The channel indicator of every node and the ridge primitives of `s` (Cordonnier et al.
/// 2016 §7, ridges along basin boundaries). A channel node drains at least
/// `ridge_threshold` × the largest discharge; a junction has two channel donors or more.
/// Every node is labelled by the reach it drains into: the first node down its receivers
/// that is an outlet or drains into a junction. A divide edge is a Delaunay edge whose
/// nodes have different labels and that is not a stream link; its ridge runs along the
/// Voronoi edge between its nodes, with the crest of the lowest hillslope cone
/// `h_k + s_k·|q − p_k|` of the triangle's nodes at each end (`s_k` the slope to the
/// receiver), linear in between.
fn ridges(
    s: &StreamSurface,
    pos: &[DVec2],
    heights: &[f64],
    mean_link: &[f64],
    triangles: &[[u32; 3]],
    p: &PrimitiveParams,
) -> Result<(Vec<f64>, Vec<Ridge>)> {
    let n = pos.len();
    let rec = s.receivers;
    let max_q = s.discharge.iter().fold(0.0f32, |a, &q| a.max(q));
    let threshold = p.ridge_threshold * max_q;
    let mut channel: Vec<f64> = alloc(n, "channel nodes")?;
    channel.extend(
        s.discharge
            .iter()
            .map(|&q| if q > 0.0 && q >= threshold { 1.0 } else { 0.0 }),
    );
    if p.ridges <= 0.0 {
        return Ok((channel, Vec::new()));
    }
    let mut donors: Vec<u8> = alloc(n, "channel donors")?;
    donors.resize(n, 0);
    for i in 0..n {
        let r = rec[i] as usize;
        if r != i && channel[i] > 0.0 {
            donors[r] = donors[r].saturating_add(1);
        }
    }
    // Receivers before donors, so a label is found in one step (errors on a cycle).
    let stack = stream_order(rec)?;
    let mut label: Vec<u32> = alloc(n, "basin labels")?;
    label.resize(n, 0);
    for &c in &stack {
        let c = c as usize;
        let r = rec[c] as usize;
        let head = channel[c] > 0.0 && (r == c || donors[r] >= 2);
        label[c] = if head {
            c as u32
        } else if r == c {
            // The outlets without a channel (hillslopes draining off the domain) share
            // one label: no ring of ridges around each.
            n as u32
        } else {
            label[r]
        };
    }
    drop(stack);
    let mut slope: Vec<f64> = alloc(n, "hillslope slopes")?;
    slope.extend((0..n).map(|i| {
        let r = rec[i] as usize;
        let d = pos[i].distance(pos[r]);
        if r == i || d <= 0.0 {
            0.0
        } else {
            ((heights[i] - heights[r]) / d).clamp(0.0, 100.0)
        }
    }));
    // Divide edges, each with the triangles beside it.
    let divide = |a: u32, b: u32| {
        label[a as usize] != label[b as usize] && rec[a as usize] != b && rec[b as usize] != a
    };
    let edges = |t: [u32; 3]| (0..3).map(move |e| (t[e], t[(e + 1) % 3]));
    let count = triangles
        .iter()
        .map(|&t| edges(t).filter(|&(a, b)| divide(a, b)).count())
        .sum();
    let mut sides: Vec<(u32, u32, u32)> = alloc(count, "divide edges")?;
    for (k, t) in triangles.iter().enumerate() {
        for (a, b) in edges(*t) {
            if divide(a, b) {
                sides.push((a.min(b), a.max(b), k as u32));
            }
        }
    }
    sides.sort_unstable();
    // The col of divide edge i–j: where the hillslope cones of i and j meet on the link
    // (nearer the higher node), at least as high as either node; its position and height.
    let col_at = |i: u32, j: u32| {
        let (i, j) = (i as usize, j as usize);
        let l = pos[i].distance(pos[j]);
        let (si, sj) = (slope[i], slope[j]);
        let top = heights[i].max(heights[j]);
        if si + sj <= 1e-12 || l <= 0.0 {
            return (0.5 * (pos[i] + pos[j]), top);
        }
        let x = ((heights[j] - heights[i] + sj * l) / (si + sj)).clamp(0.0, l);
        // Kept off the nodes.
        let u = (x / l).clamp(0.1, 0.9);
        let z = (heights[i] + si * x)
            .min(heights[j] + sj * (l - x))
            .max(top);
        (pos[i] + (pos[j] - pos[i]) * u, z)
    };
    let col = |i: u32, j: u32| col_at(i, j).1;
    // The Voronoi vertex of triangle k and its crest: the mean col of its divide edges.
    let vertex = |k: u32| {
        let t = triangles[k as usize];
        let v = voronoi_vertex(pos[t[0] as usize], pos[t[1] as usize], pos[t[2] as usize]);
        let (mut sum, mut count) = (0.0, 0.0);
        for (a, b) in edges(t) {
            if divide(a, b) {
                sum += col(a, b);
                count += 1.0;
            }
        }
        (v, sum / count)
    };
    let mut ridges: Vec<Ridge> = alloc(2 * sides.len(), "ridge primitives")?;
    let mut g = 0;
    while g < sides.len() {
        let (i, j, t0) = sides[g];
        let mut end = g + 1;
        while end < sides.len() && sides[end].0 == i && sides[end].1 == j {
            end += 1;
        }
        let (a, za) = vertex(t0);
        // Two segments, vertex → col → vertex; a hull edge's from its vertex to its col.
        let mut push = |a: DVec2, za: f64, b: DVec2, zb: f64| {
            ridges.push(Ridge {
                a,
                b,
                za,
                zb,
                slope: 0.5 * (slope[i as usize] + slope[j as usize]),
                radius: (RIDGE_RADIUS * 0.5 * (mean_link[i as usize] + mean_link[j as usize]))
                    .max(1e-9),
                top: za.max(zb),
                nodes: [i, j],
            })
        };
        let (b, zb) = if end - g >= 2 {
            vertex(sides[g + 1].2)
        } else {
            col_at(i, j)
        };
        push(a, za, b, zb);
        g = end;
    }
    Ok((channel, ridges))
}

/// The primitive-based heightfield of `s` with `rivers` on `grid` (Cordonnier 2016 §7):
/// `grid.len()` heights, metres, row-major (`y·width + x`), pixel `(x, y)` at
/// `(x·dx, y·dy)` metres. Evaluated per pixel in parallel over rows; every pixel depends
/// on its position only, so the bytes do not depend on the thread count. See
/// [`PrimitiveSurface::new`] for the errors.
pub fn primitives(
    s: &StreamSurface,
    rivers: &[River],
    grid: Grid,
    p: &PrimitiveParams,
    seed: u64,
) -> Result<Vec<f32>> {
    // Cordonnier et al. 2016 §7 (third rendering method), Génevaux et al. 2013 §4-5.
    if grid.width == 0
        || grid.height == 0
        || !(grid.dx().is_finite() && grid.dx() > 0.0 && grid.dy().is_finite() && grid.dy() > 0.0)
    {
        return Err(OrogenError::invalid(
            "grid",
            format!(
                "needs at least one pixel and finite cells > 0 m, got {}×{} of ({}, {}) m",
                grid.width,
                grid.height,
                grid.dx(),
                grid.dy()
            ),
        ));
    }
    let surface = PrimitiveSurface::new(s, rivers, p, seed)?;
    let mut out: Vec<f32> = alloc(grid.len(), "primitive heightfield")?;
    out.resize(grid.len(), 0.0);
    let (dx, dy) = (grid.dx() as f64, grid.dy() as f64);
    out.par_chunks_mut(grid.width)
        .enumerate()
        .for_each(|(y, row)| {
            // Neighbouring pixels mostly share a triangle: each starts from the last one's.
            let mut hint = NO_HINT;
            for (x, v) in row.iter_mut().enumerate() {
                *v = surface.height_hinted(DVec2::new(x as f64 * dx, y as f64 * dy), &mut hint);
            }
        });
    Ok(out)
}
