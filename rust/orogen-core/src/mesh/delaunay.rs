//! Delaunay triangulation of points in the plane, their Voronoi cell areas clipped to the
//! convex hull, and the [`NodeGraph`] they make (Delaunay edges, Voronoi areas, hull nodes
//! open).
//!
//! The triangulation is `spade`'s, whose orientation and in-circle tests are exact, so
//! lattice points (many cocircular and collinear) triangulate correctly.
//!
//! Voronoi areas: a node whose every incident triangle has its circumcentre inside the hull
//! has as cell the polygon of those circumcentres (closed along the hull through the
//! midpoints of its hull edges when it is a hull node); its area is the sum, over incident
//! triangles `(v, p, q)` with circumcentre `O`, of the signed area of the quadrilateral
//! `(v, mid(v, p), O, mid(v, q))`. Any other node (its cell crosses the hull) has its
//! cell built directly: the hull polygon cut by the bisector half-plane of each Delaunay
//! neighbour. The cells partition the hull, so the areas add up to the hull area.

use glam::DVec2;
use rayon::prelude::*;
use spade::{DelaunayTriangulation, Point2, Triangulation};

use super::graph::{alloc, NodeGraph};
use crate::error::{OrogenError, Result};

/// A point handed to spade with its index in the input (also the planet's hull).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Indexed {
    pub(crate) at: Point2<f64>,
    pub(crate) index: u32,
}

impl spade::HasPosition for Indexed {
    type Scalar = f64;
    fn position(&self) -> Point2<f64> {
        self.at
    }
}

/// Points with their Delaunay triangles and convex hull.
#[derive(Clone, Debug)]
pub struct Delaunay {
    /// The input points, metres.
    points: Vec<DVec2>,
    /// Triangles as point indices, counter-clockwise (positive area, y up).
    triangles: Vec<[u32; 3]>,
    /// Hull points, counter-clockwise, starting at the lowest `(x, y)` point; collinear
    /// points along a hull side are included.
    hull: Vec<u32>,
}

impl Delaunay {
    /// The triangulation of a copy of `points` (an error naming it if memory runs out).
    fn owning(points: &[DVec2], triangles: Vec<[u32; 3]>, hull: Vec<u32>) -> Result<Self> {
        let mut own: Vec<DVec2> = alloc(points.len(), "triangulation points")?;
        own.extend_from_slice(points);
        Ok(Delaunay {
            points: own,
            triangles,
            hull,
        })
    }

    /// The Delaunay triangulation of `points` (metres).
    ///
    /// Errors, naming the fault, for fewer than 3 points, `u32::MAX` or more, a coordinate
    /// that is NaN, infinite or outside spade's range (nonzero below 2⁻¹⁴² or above 2²⁰¹ in
    /// magnitude), two points at the same position, or all points on one line.
    pub fn new(points: &[DVec2]) -> Result<Self> {
        let n = points.len();
        if n < 3 {
            return Err(OrogenError::invalid(
                "points",
                format!("a triangulation needs at least 3 points, got {n}"),
            ));
        }
        if n >= u32::MAX as usize {
            return Err(OrogenError::invalid(
                "points",
                format!("{n} points, at most {} allowed", u32::MAX - 1),
            ));
        }
        for (i, p) in points.iter().enumerate() {
            if !p.is_finite() {
                return Err(OrogenError::invalid(
                    format!("points[{i}]"),
                    format!("coordinates must be finite, got ({}, {})", p.x, p.y),
                ));
            }
            if spade::validate_coordinate(p.x).is_err() || spade::validate_coordinate(p.y).is_err()
            {
                return Err(OrogenError::invalid(
                    format!("points[{i}]"),
                    format!(
                        "coordinates ({}, {}) out of range: each must be 0 or between {:e} \
                         and {:e} in magnitude",
                        p.x,
                        p.y,
                        spade::MIN_ALLOWED_VALUE,
                        spade::MAX_ALLOWED_VALUE
                    ),
                ));
            }
        }

        let mut input: Vec<Indexed> = alloc(n, "triangulation input")?;
        input.extend(points.iter().enumerate().map(|(i, p)| Indexed {
            at: Point2::new(p.x, p.y),
            index: i as u32,
        }));
        // The unstable bulk load (half the time of the stable one at 1M points) reorders
        // the vertices; each carries its input index.
        let tri = DelaunayTriangulation::<Indexed>::bulk_load(input).map_err(|e| {
            OrogenError::invalid("points", format!("triangulation rejected the points: {e}"))
        })?;
        if tri.num_vertices() < n {
            return Err(duplicate_error(points));
        }
        if tri.all_vertices_on_line() || tri.num_inner_faces() == 0 {
            return Err(OrogenError::invalid(
                "points",
                format!("all {n} points lie on one line: there is no triangle"),
            ));
        }
        for v in tri.vertices() {
            let (p, i) = (v.position(), v.data().index as usize);
            if p.x != points[i].x || p.y != points[i].y {
                return Err(OrogenError::Numerical {
                    field: "points".into(),
                    reason: format!("triangulation moved point {i}"),
                });
            }
        }

        let mut triangles: Vec<[u32; 3]> = alloc(tri.num_inner_faces(), "triangles")?;
        triangles.extend(
            tri.inner_faces()
                .map(|f| f.vertices().map(|v| v.data().index)),
        );

        let mut hull: Vec<u32> = alloc(tri.convex_hull_size(), "convex hull")?;
        hull.extend(tri.convex_hull().map(|e| e.from().data().index));
        if ring_area(points, &hull) < 0.0 {
            hull.reverse();
        }
        let start = (0..hull.len())
            .min_by(|&a, &b| {
                let (pa, pb) = (points[hull[a] as usize], points[hull[b] as usize]);
                pa.x.total_cmp(&pb.x).then(pa.y.total_cmp(&pb.y))
            })
            .unwrap_or(0);
        hull.rotate_left(start);

        Delaunay::owning(points, triangles, hull)
    }

    /// [`Delaunay::new`] for a large, evenly spread point set (Poisson-disc nodes), in
    /// parallel: the bounding box is cut into vertical strips, each strip's points plus
    /// those within `margin` metres of it are triangulated on their own, and each strip
    /// keeps the triangles whose circumcentre lies in it and whose circumcircle, within
    /// the bounding box, lies inside its widened strip — those circles hold no point at
    /// all, so the triangles are the global triangulation's. The triangles are counted
    /// against 2n − h − 2 (h: points on the hull); when any is missing (a circumcircle
    /// wider than the margin, or a degenerate input) the whole set is triangulated at once
    /// instead. Same result on any thread count: the strips depend on the points only.
    ///
    /// `margin` should exceed the largest empty circle's diameter: for a maximal
    /// Poisson-disc set of spacing r (empty circles under 2r), 4r or more.
    pub fn new_in_strips(points: &[DVec2], margin: f64) -> Result<Self> {
        match Self::try_strips(points, margin) {
            Some(d) => d,
            None => Self::new(points),
        }
    }

    /// The strips of [`Delaunay::new_in_strips`] alone: `None` when they do not give the
    /// whole triangulation (too few points for strips, a margin too small, a duplicate),
    /// where that falls back to [`Delaunay::new`].
    pub fn try_strips(points: &[DVec2], margin: f64) -> Option<Result<Self>> {
        let n = points.len();
        let strips = (n / STRIP_POINTS).min(MAX_STRIPS);
        if strips < 2 || !(margin.is_finite() && margin > 0.0) {
            return None;
        }
        if points.iter().any(|p| !p.is_finite()) {
            return None;
        }
        let (lo, hi) = points.iter().fold(
            (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        let step = (hi.x - lo.x) / strips as f64;
        if step.is_nan() || step <= 2.0 * margin {
            return None;
        }
        let edge = |i: usize| lo.x + step * i as f64;
        let parts: Vec<Option<StripPart>> = (0..strips)
            .into_par_iter()
            .map(|i| strip(points, i, strips, edge, margin, lo, hi))
            .collect();
        let mut count = 0usize;
        let mut hull_points: Vec<u32> = Vec::new();
        for part in &parts {
            let Some((tris, hull)) = part else {
                return None;
            };
            count += tris.len();
            hull_points.extend_from_slice(hull);
        }
        hull_points.sort_unstable();
        hull_points.dedup();
        let hull = convex_ring(points, &hull_points);
        if hull.len() < 3 || count + hull.len() + 2 != 2 * n {
            return None;
        }
        Some(Self::join(points, parts, count, hull))
    }

    fn join(
        points: &[DVec2],
        parts: Vec<Option<StripPart>>,
        count: usize,
        hull: Vec<u32>,
    ) -> Result<Self> {
        let mut triangles: Vec<[u32; 3]> = alloc(count, "triangles")?;
        for (tris, _) in parts.into_iter().flatten() {
            triangles.extend_from_slice(&tris);
        }
        Delaunay::owning(points, triangles, hull)
    }

    /// The points, metres.
    pub fn points(&self) -> &[DVec2] {
        &self.points
    }

    /// The triangles as point indices, counter-clockwise (x right, y up).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The points, triangles and hull, taken apart.
    pub fn into_parts(self) -> (Vec<DVec2>, Vec<[u32; 3]>, Vec<u32>) {
        (self.points, self.triangles, self.hull)
    }

    /// The convex hull as point indices, counter-clockwise from the point of lowest
    /// `(x, y)`, with every point that lies on a hull side.
    pub fn hull(&self) -> &[u32] {
        &self.hull
    }

    /// Per point, true when it lies on the convex hull.
    pub fn hull_mask(&self) -> Result<Vec<bool>> {
        let mut mask: Vec<bool> = alloc(self.points.len(), "hull mask")?;
        mask.resize(self.points.len(), false);
        for &h in &self.hull {
            mask[h as usize] = true;
        }
        Ok(mask)
    }

    /// Area of the convex hull, m² (shoelace over [`Delaunay::hull`]).
    pub fn hull_area(&self) -> f64 {
        ring_area(&self.points, &self.hull)
    }

    /// Area of each point's Voronoi cell clipped to the convex hull, m², in point order.
    /// Every area is > 0 and they add up to [`Delaunay::hull_area`] up to rounding.
    ///
    /// Errors when memory runs out, or (degenerate input beyond rounding) a cell comes out
    /// with an area that is not finite and > 0, naming the point.
    pub fn voronoi_areas(&self) -> Result<Vec<f64>> {
        let n = self.points.len();
        let pts = &self.points;
        let hull = HullTest::new(pts, &self.hull)?;

        let mut centres: Vec<DVec2> = alloc(self.triangles.len(), "circumcentres")?;
        centres.par_extend(
            self.triangles
                .par_iter()
                .map(|t| circumcentre(pts[t[0] as usize], pts[t[1] as usize], pts[t[2] as usize])),
        );
        let mut inside: Vec<bool> = alloc(self.triangles.len(), "circumcentre flags")?;
        inside.par_extend(centres.par_iter().map(|&c| hull.contains(c)));

        // Per node: the summed corner pieces, and whether its cell must be clipped.
        let mut areas: Vec<f64> = alloc(n, "Voronoi areas")?;
        areas.resize(n, 0.0);
        let mut clip: Vec<bool> = alloc(n, "Voronoi clip flags")?;
        clip.resize(n, false);
        for (k, t) in self.triangles.iter().enumerate() {
            let o = centres[k];
            for c in 0..3 {
                let (v, p, q) = (
                    t[c] as usize,
                    t[(c + 1) % 3] as usize,
                    t[(c + 2) % 3] as usize,
                );
                let (pv, ov, qv) = (pts[p] - pts[v], o - pts[v], pts[q] - pts[v]);
                areas[v] += 0.25 * (pv.perp_dot(ov) + ov.perp_dot(qv));
                if !inside[k] {
                    clip[v] = true;
                }
            }
        }
        drop(centres);
        drop(inside);

        let mut clipped: Vec<usize> = alloc(clip.iter().filter(|&&c| c).count(), "clip list")?;
        clipped.extend((0..n).filter(|&i| clip[i]));
        if !clipped.is_empty() {
            let neighbours = self.neighbour_lists()?;
            let mut cut: Vec<f64> = alloc(clipped.len(), "clipped Voronoi areas")?;
            cut.par_extend(clipped.par_iter().map_init(
                || (Vec::new(), Vec::new(), Vec::new()),
                |(poly, scratch, nbrs), &v| {
                    clipped_cell_area(pts, &self.hull, &neighbours, v, poly, scratch, nbrs)
                },
            ));
            for (&v, &a) in clipped.iter().zip(&cut) {
                areas[v] = a;
            }
        }

        if let Some(i) = areas.iter().position(|a| !(a.is_finite() && *a > 0.0)) {
            return Err(OrogenError::Numerical {
                field: format!("points[{i}]"),
                reason: format!(
                    "Voronoi cell area came out as {} m² (points too close to degenerate)",
                    areas[i]
                ),
            });
        }
        Ok(areas)
    }

    /// The graph of the triangulation: one node per point (same index and position),
    /// Delaunay edges as links, Voronoi cell areas clipped to the hull as node areas (m², as
    /// f32), and the hull points as the open boundary.
    ///
    /// Errors as [`Delaunay::voronoi_areas`] and [`NodeGraph::from_edges`] do.
    pub fn to_graph(&self) -> Result<NodeGraph> {
        let areas64 = self.voronoi_areas()?;
        let mut areas: Vec<f32> = alloc(areas64.len(), "node areas")?;
        areas.extend(areas64.iter().map(|&a| a as f32));
        drop(areas64);
        let mut edges: Vec<[u32; 2]> = alloc(self.triangles.len() * 3, "triangle edges")?;
        for t in &self.triangles {
            edges.extend([[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]]);
        }
        let mut positions: Vec<DVec2> = alloc(self.points.len(), "node positions")?;
        positions.extend_from_slice(&self.points);
        let mut graph = NodeGraph::from_edges(positions, &edges, areas)?;
        graph.set_open_boundary(&self.hull_mask()?)?;
        Ok(graph)
    }

    /// Neighbour lists from the triangles, as compressed rows (may repeat a neighbour).
    fn neighbour_lists(&self) -> Result<Rows> {
        let n = self.points.len();
        let mut offsets: Vec<usize> = alloc(n + 1, "triangle corner offsets")?;
        offsets.resize(n + 1, 0);
        for t in &self.triangles {
            for &v in t {
                offsets[v as usize + 1] += 2;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut items: Vec<u32> = alloc(offsets[n], "triangle corners")?;
        items.resize(offsets[n], 0);
        let mut fill: Vec<usize> = alloc(n + 1, "triangle corner cursors")?;
        fill.extend_from_slice(&offsets);
        for t in &self.triangles {
            for c in 0..3 {
                let v = t[c] as usize;
                items[fill[v]] = t[(c + 1) % 3];
                items[fill[v] + 1] = t[(c + 2) % 3];
                fill[v] += 2;
            }
        }
        Ok(Rows { offsets, items })
    }
}

/// The graph of the Delaunay triangulation of `points` (metres): see [`Delaunay::new`] and
/// [`Delaunay::to_graph`].
pub fn delaunay_graph(points: &[DVec2]) -> Result<NodeGraph> {
    Delaunay::new(points)?.to_graph()
}

/// Compressed rows of node indices.
struct Rows {
    offsets: Vec<usize>,
    items: Vec<u32>,
}

/// The error for a point set with two points at one position, naming both.
fn duplicate_error(points: &[DVec2]) -> OrogenError {
    let Ok(mut order) = alloc::<usize>(points.len(), "duplicate search") else {
        return OrogenError::invalid("points", "two points share a position");
    };
    order.extend(0..points.len());
    order.sort_by(|&a, &b| {
        let (pa, pb) = (points[a], points[b]);
        pa.x.partial_cmp(&pb.x)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(pa.y.partial_cmp(&pb.y).unwrap_or(std::cmp::Ordering::Equal))
            .then(a.cmp(&b))
    });
    for w in order.windows(2) {
        let (a, b) = (w[0], w[1]);
        if points[a] == points[b] {
            return OrogenError::invalid(
                format!("points[{b}]"),
                format!(
                    "same position as points[{a}]: ({}, {})",
                    points[a].x, points[a].y
                ),
            );
        }
    }
    OrogenError::invalid("points", "two points share a position")
}

/// Signed area of the polygon through `points[ring[..]]`, m² (positive counter-clockwise).
fn ring_area(points: &[DVec2], ring: &[u32]) -> f64 {
    let Some(&first) = ring.first() else {
        return 0.0;
    };
    let o = points[first as usize];
    let mut twice = 0.0;
    for k in 0..ring.len() {
        let a = points[ring[k] as usize] - o;
        let b = points[ring[(k + 1) % ring.len()] as usize] - o;
        twice += a.perp_dot(b);
    }
    0.5 * twice
}

/// Circumcentre of triangle `abc` (not finite when the three points are collinear).
fn circumcentre(a: DVec2, b: DVec2, c: DVec2) -> DVec2 {
    let (b, c) = (b - a, c - a);
    let (bl, cl) = (b.length_squared(), c.length_squared());
    let d = 2.0 * b.perp_dot(c);
    a + DVec2::new(c.y * bl - b.y * cl, b.x * cl - c.x * bl) / d
}

/// Point-in-hull test in `O(log h)`: a fan from the hull's first corner (its lowest
/// `(x, y)` point, so strictly convex).
struct HullTest {
    ring: Vec<DVec2>,
    /// Points within this distance outside the hull count as inside, metres.
    tol: f64,
}

impl HullTest {
    fn new(points: &[DVec2], hull: &[u32]) -> Result<Self> {
        // Only the strictly convex corners: with points along a side, fan spokes from the
        // first corner would line up and a point beyond the side's end would pass.
        let turns = |a: DVec2, b: DVec2, c: DVec2| (b - a).perp_dot(c - b) > 0.0;
        let mut ring: Vec<DVec2> = alloc(hull.len(), "convex hull corners")?;
        for &h in hull {
            let p = points[h as usize];
            while ring.len() >= 2 && !turns(ring[ring.len() - 2], ring[ring.len() - 1], p) {
                ring.pop();
            }
            ring.push(p);
        }
        while ring.len() >= 3 && !turns(ring[ring.len() - 2], ring[ring.len() - 1], ring[0]) {
            ring.pop();
        }
        let (lo, hi) = ring.iter().fold(
            (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        Ok(HullTest {
            tol: 1e-9 * (hi - lo).length(),
            ring,
        })
    }

    /// True when `p` is inside the hull or within `tol` of it; false when not finite (or
    /// when rounding left fewer than 3 corners: every cell is then clipped).
    fn contains(&self, p: DVec2) -> bool {
        let r = &self.ring;
        let m = r.len();
        if !p.is_finite() || m < 3 {
            return false;
        }
        let a = r[0];
        let d = p - a;
        let e1 = r[1] - a;
        if e1.perp_dot(d) < -self.tol * e1.length() {
            return false;
        }
        let el = r[m - 1] - a;
        if el.perp_dot(d) > self.tol * el.length() {
            return false;
        }
        // Last fan spoke at or clockwise of p: spokes turn counter-clockwise with the index.
        let left_of = |i: usize| (r[i] - a).perp_dot(d) >= 0.0;
        let (mut lo, mut hi) = (1usize, m - 2);
        if !left_of(lo) {
            hi = lo;
        }
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if left_of(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let e = r[lo + 1] - r[lo];
        e.perp_dot(p - r[lo]) >= -self.tol * e.length()
    }
}

/// Area of node `v`'s Voronoi cell clipped to the hull, m²: the hull polygon cut by the
/// bisector half-plane of each neighbour (nearest first), in coordinates centred on `v`.
fn clipped_cell_area(
    pts: &[DVec2],
    hull: &[u32],
    neighbours: &Rows,
    v: usize,
    poly: &mut Vec<DVec2>,
    scratch: &mut Vec<DVec2>,
    nbrs: &mut Vec<u32>,
) -> f64 {
    let origin = pts[v];
    nbrs.clear();
    nbrs.extend_from_slice(&neighbours.items[neighbours.offsets[v]..neighbours.offsets[v + 1]]);
    nbrs.sort_unstable();
    nbrs.dedup();
    nbrs.sort_by(|&a, &b| {
        let (da, db) = (
            pts[a as usize].distance_squared(origin),
            pts[b as usize].distance_squared(origin),
        );
        da.total_cmp(&db).then(a.cmp(&b))
    });
    poly.clear();
    poly.extend(hull.iter().map(|&h| pts[h as usize] - origin));
    for &u in nbrs.iter() {
        let w = pts[u as usize] - origin;
        let c = 0.5 * w.length_squared();
        scratch.clear();
        let m = poly.len();
        for k in 0..m {
            let (p, q) = (poly[k], poly[(k + 1) % m]);
            let (fp, fq) = (p.dot(w) - c, q.dot(w) - c);
            if fp <= 0.0 {
                scratch.push(p);
            }
            if (fp <= 0.0) != (fq <= 0.0) {
                scratch.push(p + (q - p) * (fp / (fp - fq)));
            }
        }
        std::mem::swap(poly, scratch);
        if poly.len() < 3 {
            return 0.0;
        }
    }
    let m = poly.len();
    let twice: f64 = (0..m).map(|k| poly[k].perp_dot(poly[(k + 1) % m])).sum();
    0.5 * twice
}

/// One strip's triangles and the points of its own hull.
type StripPart = (Vec<[u32; 3]>, Vec<u32>);

/// Points per strip of [`Delaunay::new_in_strips`] (fewer points: one triangulation).
const STRIP_POINTS: usize = 100_000;
/// Most strips [`Delaunay::new_in_strips`] cuts.
const MAX_STRIPS: usize = 16;

/// Strip `i` of [`Delaunay::new_in_strips`]: its triangles (those whose circumcentre lies
/// in `[edge(i), edge(i + 1))`, the first and last strips open outwards, and whose
/// circumcircle within the box `lo..hi` stays inside the strip widened by `margin`), and
/// the points of its own triangulation's hull. `None` when spade refuses the points or
/// drops one (a duplicate): the caller then triangulates everything at once.
fn strip(
    points: &[DVec2],
    i: usize,
    strips: usize,
    edge: impl Fn(usize) -> f64,
    margin: f64,
    lo: DVec2,
    hi: DVec2,
) -> Option<StripPart> {
    let (a, b) = (edge(i), edge(i + 1));
    let (wa, wb) = (
        if i == 0 {
            f64::NEG_INFINITY
        } else {
            a - margin
        },
        if i + 1 == strips {
            f64::INFINITY
        } else {
            b + margin
        },
    );
    let input: Vec<Indexed> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.x >= wa && p.x < wb)
        .map(|(k, p)| Indexed {
            at: Point2::new(p.x, p.y),
            index: k as u32,
        })
        .collect();
    let local = input.len();
    let tri = DelaunayTriangulation::<Indexed>::bulk_load(input).ok()?;
    if tri.num_vertices() < local || tri.all_vertices_on_line() {
        return None;
    }
    // A little inside the widened strip, for the rounding of the circle.
    let slack = 1e-9 * (hi - lo).abs().max_element().max(1.0);
    let mut out = Vec::with_capacity(tri.num_inner_faces());
    for f in tri.inner_faces() {
        let t = f.vertices().map(|v| v.data().index);
        // The circumcircle from the corners in index order: every strip computes the
        // same bits, so a triangle near a strip edge has exactly one owner.
        let mut s = t;
        s.sort_unstable();
        let (p, q, r) = (
            points[s[0] as usize],
            points[s[1] as usize],
            points[s[2] as usize],
        );
        let c = circumcentre(p, q, r);
        if !c.x.is_finite() || !c.y.is_finite() {
            return None;
        }
        let owned = (i == 0 || c.x >= a) && (i + 1 == strips || c.x < b);
        if !owned {
            continue;
        }
        // The circle's x extent where it crosses the box's rows.
        let r2 = c
            .distance_squared(p)
            .max(c.distance_squared(q))
            .max(c.distance_squared(r));
        let dy = if c.y < lo.y {
            lo.y - c.y
        } else if c.y > hi.y {
            c.y - hi.y
        } else {
            0.0
        };
        let half = (r2 - dy * dy).max(0.0).sqrt() * (1.0 + 1e-12);
        if c.x - half > wa + slack && c.x + half < wb - slack {
            out.push(t);
        }
    }
    let hull = tri.convex_hull().map(|e| e.from().data().index).collect();
    Some((out, hull))
}

/// The convex hull of `subset` (indices into `points`), counter-clockwise from the point
/// of lowest `(x, y)`, with the points along its sides (Andrew's monotone chain, keeping
/// collinear points).
fn convex_ring(points: &[DVec2], subset: &[u32]) -> Vec<u32> {
    let mut order = subset.to_vec();
    order.sort_by(|&a, &b| {
        let (pa, pb) = (points[a as usize], points[b as usize]);
        pa.x.total_cmp(&pb.x).then(pa.y.total_cmp(&pb.y))
    });
    if order.len() < 3 {
        return order;
    }
    let cross = |o: u32, a: u32, b: u32| {
        let (o, a, b) = (points[o as usize], points[a as usize], points[b as usize]);
        (a - o).perp_dot(b - o)
    };
    let mut lower: Vec<u32> = Vec::new();
    for &p in &order {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], p) < 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<u32> = Vec::new();
    for &p in order.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], p) < 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    // Collinear points kept on both chains of a degenerate (flat) set would repeat.
    let mut seen = std::collections::HashSet::new();
    lower.retain(|p| seen.insert(*p));
    lower
}
