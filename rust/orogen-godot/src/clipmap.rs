//! The terrain's level-of-detail mesh: a geometry clipmap (Losasso & Hoppe 2004, "Geometry
//! clipmaps: terrain rendering using nested regular grids"; Asirikuy 2005, GPU Gems 2 ch. 2),
//! built once and placed by the vertex shader (`addons/orogen/runtime/terrain.gdshader`).
//!
//! Level `L` is a grid of `2R × 2R` quads of `s = 2^L` cells, centred on the LOD centre (the
//! camera, in cell coordinates) snapped to `2s`: its origin is `o = 2s·floor(c / 2s)` and its
//! vertex `k` (integers in `[-R, R]²`) lies at cell `o + k·s`. Level 0 is whole; each coarser
//! level has a hole where the finer level lies. The finer level's origin is `o + δ·s` with
//! `δ = floor(c/s) - 2·floor(c/2s)` in {0, 1} per axis, so the hole is the quads
//! `[δ - R/2, δ + R/2 - 1]`: the quads whose index is `-R/2` or `R/2` on an axis belong to
//! the ring or to the hole depending on `δ` ("flip" quads, with their own vertices, collapsed
//! to a point by the shader when they are in the hole).
//!
//! Crack-free borders: vertices odd in the coarser level's grid are morphed towards the
//! coarser level's surface (Losasso & Hoppe §2.3), fully (`α = 1`) on each level's outer
//! edge and not at all (`α = 0`) on its inner edge, so the heights along the border are
//! the coarser level's. Zero-area triangles along each level's outer edge (both windings)
//! close the T-junctions there, so rounding cannot open a one-pixel gap either.
//!
//! The mesh stores per vertex: `VERTEX = (kx, L, kz)`, and for flip quads `UV = (qx, qz)`
//! (the quad's lower corner) with `UV2.x = 1`. [`place`] mirrors the shader's `vertex()`
//! for the tests.

/// Quads from a level's centre to its edge (`R`) by default: level 0 draws every cell within
/// about 128 cells of the camera.
pub const DEFAULT_RADIUS: u32 = 128;

/// Smallest `R` the morph zone allows (it spans `R/2 + 1` to `R - 2` quads).
pub const MIN_RADIUS: u32 = 8;

/// Largest `R`: the mesh stays under 1.5M vertices up to 65537² cells (1.18M there).
pub const MAX_RADIUS: u32 = 192;

/// Terrains up to `2 · WHOLE_RADIUS - 4` cells across (513² included) are drawn whole, one
/// vertex per cell (about 267k vertices at 513²), when that `R` is larger than the LOD's.
pub const WHOLE_RADIUS: u32 = 260;

/// A level-of-detail layout: `R` and the coarsest level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Quads from a level's centre to its edge (even, at least `MIN_RADIUS`).
    pub radius: u32,
    /// The coarsest level (0: one level, every cell).
    pub top: u32,
    /// Whether the centre stays at the terrain's middle (a terrain level 0 covers whole).
    pub fixed: bool,
}

impl Layout {
    /// The layout for a terrain of `width × depth` cells with `radius` quads per level
    /// half-width: see `with_whole`, with `WHOLE_RADIUS`.
    pub fn for_terrain(width: usize, depth: usize, radius: u32) -> Layout {
        Layout::with_whole(width, depth, radius, WHOLE_RADIUS)
    }

    /// The layout for a terrain of `width × depth` cells with `radius` quads per level
    /// half-width: a terrain one level of `max(radius, whole)` covers from its middle is one
    /// level of every cell (its `R` just large enough); otherwise as few levels as cover the
    /// terrain from any centre on it: `(R - 2)·2^top ≥ cells - 1`.
    pub fn with_whole(width: usize, depth: usize, radius: u32, whole: u32) -> Layout {
        let radius = (radius.clamp(MIN_RADIUS, MAX_RADIUS) + 1) & !1;
        let extent = (width.max(depth).max(2) - 1) as u64;
        if extent + 4 <= 2 * radius.max(whole) as u64 {
            let r = (((extent + 4).div_ceil(2) as u32).max(MIN_RADIUS) + 1) & !1;
            return Layout {
                radius: r,
                top: 0,
                fixed: true,
            };
        }
        let mut top = 0;
        while ((radius as u64 - 2) << top) < extent {
            top += 1;
        }
        Layout {
            radius,
            top,
            fixed: false,
        }
    }

    /// The LOD centre for a camera at cell coordinates `camera` on a terrain of `cells`:
    /// the camera clamped to the terrain, or the terrain's middle for a fixed layout.
    pub fn centre(&self, camera: [f32; 2], cells: [usize; 2]) -> [f32; 2] {
        let last = [(cells[0].max(1) - 1) as f32, (cells[1].max(1) - 1) as f32];
        if self.fixed {
            return [last[0] * 0.5, last[1] * 0.5];
        }
        let clamp = |v: f32, hi: f32| if v.is_finite() { v.clamp(0.0, hi) } else { 0.0 };
        [clamp(camera[0], last[0]), clamp(camera[1], last[1])]
    }
}

/// The mesh of a layout, as the arrays `ArrayMesh` takes.
pub struct Mesh {
    /// `(kx, level, kz)`.
    pub vertices: Vec<[f32; 3]>,
    /// A flip quad's lower corner `(qx, qz)`; `(0, 0)` otherwise.
    pub quads: Vec<[f32; 2]>,
    /// `(1, 0)` for a flip quad's vertex, `(0, 0)` otherwise.
    pub flags: Vec<[f32; 2]>,
    /// Triangles, clockwise seen from above (Godot's front faces).
    pub indices: Vec<i32>,
}

/// How a quad index on one axis of a ring relates to the hole.
#[derive(Clone, Copy, PartialEq)]
enum Band {
    /// Never in the hole.
    Out,
    /// In the hole for one `δ`: `-R/2` or `R/2`.
    Edge,
    /// Always in the hole.
    In,
}

fn band(q: i32, r: i32) -> Band {
    let h = r / 2;
    if q < -h || q > h {
        Band::Out
    } else if q == -h || q == h {
        Band::Edge
    } else {
        Band::In
    }
}

/// Builds the clipmap mesh of `layout`.
pub fn build(layout: Layout) -> Mesh {
    let r = layout.radius as i32;
    let side = (2 * r + 1) as usize;
    let mut mesh = Mesh {
        vertices: Vec::new(),
        quads: Vec::new(),
        flags: Vec::new(),
        indices: Vec::new(),
    };
    let mut shared = vec![-1i32; side * side];
    for level in 0..=layout.top {
        let lf = level as f32;
        shared.fill(-1);
        let mut vertex = |mesh: &mut Mesh, kx: i32, kz: i32| -> i32 {
            let slot = &mut shared[(kz + r) as usize * side + (kx + r) as usize];
            if *slot < 0 {
                *slot = mesh.vertices.len() as i32;
                mesh.vertices.push([kx as f32, lf, kz as f32]);
                mesh.quads.push([0.0, 0.0]);
                mesh.flags.push([0.0, 0.0]);
            }
            *slot
        };
        for qz in -r..r {
            for qx in -r..r {
                let (bx, bz) = (band(qx, r), band(qz, r));
                let fixed = level == 0 || bx == Band::Out || bz == Band::Out;
                let corners = [(qx, qz), (qx + 1, qz), (qx, qz + 1), (qx + 1, qz + 1)];
                let ids: [i32; 4] = if fixed {
                    corners.map(|(kx, kz)| vertex(&mut mesh, kx, kz))
                } else if bx == Band::In && bz == Band::In {
                    continue; // always under the finer level
                } else {
                    corners.map(|(kx, kz)| {
                        mesh.vertices.push([kx as f32, lf, kz as f32]);
                        mesh.quads.push([qx as f32, qz as f32]);
                        mesh.flags.push([1.0, 0.0]);
                        mesh.vertices.len() as i32 - 1
                    })
                };
                let [a, b, c, d] = ids;
                mesh.indices.extend_from_slice(&[a, b, c, b, d, c]);
            }
        }
        if level < layout.top {
            // Zero-area triangles (a, m, b) along the outer edge, both windings: they close
            // the T-junction at each odd vertex m against the coarser level's edge a–b.
            for k in (-r..r).step_by(2) {
                for (p, q, t) in [
                    ((k, -r), (k + 1, -r), (k + 2, -r)),
                    ((k, r), (k + 1, r), (k + 2, r)),
                    ((-r, k), (-r, k + 1), (-r, k + 2)),
                    ((r, k), (r, k + 1), (r, k + 2)),
                ] {
                    let (a, m, b) = (
                        vertex(&mut mesh, p.0, p.1),
                        vertex(&mut mesh, q.0, q.1),
                        vertex(&mut mesh, t.0, t.1),
                    );
                    mesh.indices.extend_from_slice(&[a, m, b, a, b, m]);
                }
            }
        }
    }
    mesh
}

/// What the shader needs besides the mesh (its `lod_*`, `cells` uniforms).
#[derive(Clone, Copy, Debug)]
pub struct Uniforms {
    pub centre: [f32; 2],
    pub radius: f32,
    pub top: f32,
    /// Cells along x and z.
    pub cells: [f32; 2],
}

/// The shader's `vertex()` placement of a mesh vertex: `Some((cell x, height, cell z))`, or
/// `None` for a flip quad's vertex collapsed into the hole. `height(x, z)` is the shader's
/// bilinear height at continuous cell coordinates. Mirrors terrain.gdshader line for line
/// (f32 arithmetic in the same order).
pub fn place(
    vertex: [f32; 3],
    quad: [f32; 2],
    flag: [f32; 2],
    u: &Uniforms,
    height: impl Fn(f32, f32) -> f32,
) -> Option<[f32; 3]> {
    let level = vertex[1];
    let s = (1u32 << level as u32) as f32;
    let k = [vertex[0], vertex[2]];
    let mut origin = [0.0f32; 2];
    let mut delta = [0.0f32; 2];
    for a in 0..2 {
        origin[a] = 2.0 * s * (u.centre[a] / (2.0 * s)).floor();
        delta[a] = (u.centre[a] / s).floor() - 2.0 * (u.centre[a] / (2.0 * s)).floor();
    }
    if flag[0] > 0.5 {
        let h = 0.5 * u.radius;
        let in_hole = |a: usize| quad[a] >= delta[a] - h && quad[a] <= delta[a] + h - 1.0;
        if in_hole(0) && in_hole(1) {
            return None;
        }
    }
    let last = [u.cells[0] - 1.0, u.cells[1] - 1.0];
    let at = |kx: f32, kz: f32| {
        [
            (origin[0] + kx * s).clamp(0.0, last[0]),
            (origin[1] + kz * s).clamp(0.0, last[1]),
        ]
    };
    let cell = at(k[0], k[1]);
    let dist = ((origin[0] + k[0] * s - u.centre[0]).abs() / s)
        .max((origin[1] + k[1] * s - u.centre[1]).abs() / s);
    let alpha = if level < u.top {
        ((dist - (0.5 * u.radius + 1.0)) / (0.5 * u.radius - 3.0)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut hgt = height(cell[0], cell[1]);
    let odd = [k[0].rem_euclid(2.0), k[1].rem_euclid(2.0)];
    if alpha > 0.0 && odd[0] + odd[1] > 0.0 {
        let (da, db) = if odd[0] > 0.5 && odd[1] > 0.5 {
            ([1.0, -1.0], [-1.0, 1.0])
        } else if odd[0] > 0.5 {
            ([1.0, 0.0], [-1.0, 0.0])
        } else {
            ([0.0, 1.0], [0.0, -1.0])
        };
        let ca = at(k[0] + da[0], k[1] + da[1]);
        let cb = at(k[0] + db[0], k[1] + db[1]);
        let coarse = 0.5 * (height(ca[0], ca[1]) + height(cb[0], cb[1]));
        hgt = hgt * (1.0 - alpha) + coarse * alpha;
    }
    Some([cell[0], hgt, cell[1]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A small deterministic generator (xorshift64*), so the tests need no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32) / (1u64 << 24) as f32
        }
    }

    /// A rough height: bilinear between values at integer cells, a 40 m wave along x plus
    /// up to 3 m of pseudo-random roughness per cell.
    fn terrain(x: f32, z: f32) -> f32 {
        let v = |i: i64, j: i64| {
            let mut h = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                ^ (j as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
            h ^= h >> 29;
            h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            (h >> 40) as f32 / (1u32 << 24) as f32 * 3.0 + (i as f32 * 0.05).sin() * 40.0
        };
        let (fx, fz) = (x.floor(), z.floor());
        let (tx, tz) = (x - fx, z - fz);
        let (i, j) = (fx as i64, fz as i64);
        let a = v(i, j) * (1.0 - tx) + v(i + 1, j) * tx;
        let b = v(i, j + 1) * (1.0 - tx) + v(i + 1, j + 1) * tx;
        a * (1.0 - tz) + b * tz
    }

    fn placed(mesh: &Mesh, u: &Uniforms) -> Vec<Option<[f32; 3]>> {
        (0..mesh.vertices.len())
            .map(|i| place(mesh.vertices[i], mesh.quads[i], mesh.flags[i], u, terrain))
            .collect()
    }

    fn uniforms(layout: Layout, centre: [f32; 2], cells: usize) -> Uniforms {
        Uniforms {
            centre,
            radius: layout.radius as f32,
            top: layout.top as f32,
            cells: [cells as f32; 2],
        }
    }

    /// Brute force: every point of the terrain lies in exactly one drawn triangle (no gap, no
    /// overlap between levels), for random centres, several `R`, and sizes.
    #[test]
    fn levels_tile_the_terrain_exactly_once() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for (radius, cells) in [(8u32, 97usize), (12, 301), (16, 129), (8, 24)] {
            let layout = Layout::with_whole(cells, cells, radius, 0);
            let mesh = build(layout);
            for _ in 0..12 {
                let cam = [
                    rng.next() * 1.4 * cells as f32 - 0.2 * cells as f32,
                    rng.next() * 1.4 * cells as f32 - 0.2 * cells as f32,
                ];
                let centre = layout.centre(cam, [cells, cells]);
                let u = uniforms(layout, centre, cells);
                let pos = placed(&mesh, &u);
                // Sample points off every grid line, 4 per cell.
                let n = cells - 1;
                let mut count = vec![0u8; 4 * n * n];
                for t in mesh.indices.chunks(3) {
                    let [Some(a), Some(b), Some(c)] = [0, 1, 2].map(|i| pos[t[i] as usize]) else {
                        continue;
                    };
                    let (ax, az, bx, bz, cx, cz) = (a[0], a[2], b[0], b[2], c[0], c[2]);
                    let area = (bx - ax) * (cz - az) - (bz - az) * (cx - ax);
                    if area == 0.0 {
                        continue;
                    }
                    let x0 = ax.min(bx).min(cx).floor().max(0.0) as usize;
                    let x1 = (ax.max(bx).max(cx).ceil() as usize).min(n);
                    let z0 = az.min(bz).min(cz).floor().max(0.0) as usize;
                    let z1 = (az.max(bz).max(cz).ceil() as usize).min(n);
                    for zi in z0..z1 {
                        for xi in x0..x1 {
                            for (sub, (ox, oz)) in [
                                (0.3217, 0.2071),
                                (0.7311, 0.4142),
                                (0.1732, 0.6180),
                                (0.6877, 0.8862),
                            ]
                            .into_iter()
                            .enumerate()
                            {
                                let (px, pz) = (xi as f32 + ox, zi as f32 + oz);
                                let e = |x0: f32, z0: f32, x1: f32, z1: f32| {
                                    (x1 - x0) * (pz - z0) - (z1 - z0) * (px - x0)
                                };
                                let (e0, e1, e2) =
                                    (e(ax, az, bx, bz), e(bx, bz, cx, cz), e(cx, cz, ax, az));
                                let inside = (e0 > 0.0 && e1 > 0.0 && e2 > 0.0)
                                    || (e0 < 0.0 && e1 < 0.0 && e2 < 0.0);
                                if inside {
                                    count[4 * (zi * n + xi) + sub] += 1;
                                }
                            }
                        }
                    }
                }
                let bad = count.iter().filter(|&&c| c != 1).count();
                assert_eq!(
                    bad, 0,
                    "R {radius}, {cells}² cells, centre {centre:?}: {bad} points not covered once"
                );
            }
        }
    }

    /// Every triangle edge is matched by the reverse edge of another triangle with
    /// bit-identical end points, except on the coarsest level's outer edge: no crack can open
    /// between levels (the zero-area triangles included). Along each level's outer edge the
    /// odd vertices lie on the coarser level's edge: the heights along LOD borders are equal.
    #[test]
    fn borders_between_levels_are_closed_and_heights_equal() {
        let mut rng = Rng(0x0bad_cafe_f00d_d00d);
        for (radius, cells) in [(8u32, 1025usize), (16, 4097), (10, 700)] {
            let layout = Layout::with_whole(cells, cells, radius, 0);
            assert!(layout.top >= 2, "several levels");
            let mesh = build(layout);
            for _ in 0..16 {
                // Away from the terrain's edge (no clamping), or anywhere.
                let cam = [
                    rng.next() * (cells - 1) as f32,
                    rng.next() * (cells - 1) as f32,
                ];
                let u = uniforms(layout, layout.centre(cam, [cells, cells]), cells);
                let pos = placed(&mesh, &u);
                let key = |p: [f32; 3]| p.map(f32::to_bits);
                let mut edges = HashSet::new();
                for t in mesh.indices.chunks(3) {
                    let [Some(a), Some(b), Some(c)] = [0, 1, 2].map(|i| pos[t[i] as usize]) else {
                        continue;
                    };
                    for (p, q) in [(a, b), (b, c), (c, a)] {
                        edges.insert((key(p), key(q)));
                    }
                }
                let top = 2f32.powi(layout.top as i32);
                let outer = 2.0 * top * (u.centre[0] / (2.0 * top)).floor();
                let outer_z = 2.0 * top * (u.centre[1] / (2.0 * top)).floor();
                let r = layout.radius as f32 * top;
                let last = (cells - 1) as f32;
                let on_rim = |p: [f32; 3]| {
                    let xs = [(outer - r).max(0.0), (outer + r).min(last)];
                    let zs = [(outer_z - r).max(0.0), (outer_z + r).min(last)];
                    xs.contains(&p[0]) || zs.contains(&p[2])
                };
                let mut open = 0;
                for &(p, q) in &edges {
                    if !edges.contains(&(q, p)) {
                        let (pf, qf) = (p.map(f32::from_bits), q.map(f32::from_bits));
                        let same_rim =
                            on_rim(pf) && on_rim(qf) && (pf[0] == qf[0] || pf[2] == qf[2]);
                        if !same_rim {
                            open += 1;
                        }
                    }
                }
                assert_eq!(open, 0, "centre {:?}: {open} unmatched edges", u.centre);
            }
        }
    }

    /// The heights along each level's outer edge are the coarser level's: every odd vertex
    /// there lies on the straight edge between its even neighbours (the coarser level's
    /// vertices, placed by the coarser level), and its inner edge is not morphed.
    #[test]
    fn outer_edges_are_fully_morphed() {
        let mut rng = Rng(42);
        for radius in [8u32, 12, 128] {
            let cells = 4097;
            let layout = Layout::with_whole(cells, cells, radius, 0);
            for _ in 0..40 {
                let cam = [rng.next() * 4096.0, rng.next() * 4096.0];
                let u = uniforms(layout, layout.centre(cam, [cells, cells]), cells);
                let r = layout.radius as i32;
                for level in 0..layout.top {
                    let lf = level as f32;
                    let at = |kx: i32, kz: i32| {
                        place([kx as f32, lf, kz as f32], [0.0; 2], [0.0; 2], &u, terrain).unwrap()
                    };
                    for k in (-r..r).step_by(2) {
                        for (a, m, b) in [
                            (at(k, -r), at(k + 1, -r), at(k + 2, -r)),
                            (at(-r, k), at(-r, k + 1), at(-r, k + 2)),
                            (at(k, r), at(k + 1, r), at(k + 2, r)),
                            (at(r, k), at(r, k + 1), at(r, k + 2)),
                        ] {
                            if a == b {
                                continue; // clamped beyond the terrain's edge
                            }
                            let want = 0.5 * (a[1] + b[1]);
                            assert!(
                                (m[1] - want).abs() <= 1e-4 * want.abs().max(1.0),
                                "level {level}, centre {:?}: {} vs {want}",
                                u.centre,
                                m[1]
                            );
                        }
                    }
                }
            }
        }
    }

    /// The drawn surface's height at each of `points` (cell coordinates): interpolated in
    /// the one triangle that contains it (none: NaN).
    fn surface(mesh: &Mesh, u: &Uniforms, points: &[[f32; 2]]) -> Vec<f32> {
        let pos = placed(mesh, u);
        let mut out = vec![f32::NAN; points.len()];
        for t in mesh.indices.chunks(3) {
            let [Some(a), Some(b), Some(c)] = [0, 1, 2].map(|i| pos[t[i] as usize]) else {
                continue;
            };
            let det = (b[0] - a[0]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[0] - a[0]);
            if det == 0.0 {
                continue;
            }
            for (p, h) in points.iter().zip(out.iter_mut()) {
                let wb = ((p[0] - a[0]) * (c[2] - a[2]) - (p[1] - a[2]) * (c[0] - a[0])) / det;
                let wc = ((b[0] - a[0]) * (p[1] - a[2]) - (b[2] - a[2]) * (p[0] - a[0])) / det;
                if wb > 0.0 && wc > 0.0 && wb + wc < 1.0 {
                    *h = a[1] + wb * (b[1] - a[1]) + wc * (c[1] - a[1]);
                }
            }
        }
        out
    }

    /// No popping: as the centre crosses a level's snapping step (where the levels' grids
    /// jump by two quads), the drawn surface moves by no more than the tiny step would move
    /// it anyway, because the region a level hands over is fully morphed to the coarser one.
    #[test]
    fn surface_does_not_pop_when_levels_move() {
        let mut rng = Rng(7);
        // 2^n + 1 cells: every level's grid ends on the terrain's edge (elsewhere a coarse
        // quad clamped at the far edge is cut differently from the finer level's, and the
        // hand-over there moves the surface by a few centimetres).
        let cells = 513;
        let layout = Layout::with_whole(cells, cells, 10, 0);
        let mesh = build(layout);
        let points: Vec<[f32; 2]> = (0..3000)
            .map(|_| [rng.next() * 512.0, rng.next() * 512.0])
            .collect();
        for _ in 0..8 {
            let level = (rng.next() * (layout.top + 1) as f32) as i32;
            let step = 2f32.powi(level + 1);
            let snap = step * (rng.next() * 500.0 / step).floor().max(1.0);
            let z = rng.next() * 512.0;
            let eps = 1e-3;
            let before = surface(&mesh, &uniforms(layout, [snap - eps, z], cells), &points);
            let after = surface(&mesh, &uniforms(layout, [snap + eps, z], cells), &points);
            let mut worst = 0.0f32;
            for (b, a) in before.iter().zip(&after) {
                assert!(b.is_finite() && a.is_finite(), "a point is not drawn");
                worst = worst.max((b - a).abs());
            }
            assert!(
                worst < 0.05,
                "centre x crossing {snap} (level {level}): moved {worst} m"
            );
        }
    }

    /// The largest `R` stays within the 1.5M budget up to 65537² cells.
    #[test]
    fn largest_radius_within_budget() {
        let layout = Layout::for_terrain(65537, 65537, u32::MAX);
        assert_eq!((layout.radius, layout.top), (MAX_RADIUS, 9));
        assert!(build(layout).vertices.len() <= 1_500_000);
    }

    /// Vertex counts stay within the 1.5M budget for every terrain size up to 16385²;
    /// terrains up to 513² are drawn whole, larger ones through the LOD; a whole terrain's
    /// single level covers it.
    #[test]
    fn vertex_budget() {
        for cells in [2usize, 65, 257, 513, 600, 1025, 2049, 4097, 8193, 16385] {
            let layout = Layout::for_terrain(cells, cells, DEFAULT_RADIUS);
            let mesh = build(layout);
            assert!(
                mesh.vertices.len() <= 1_500_000,
                "{cells}²: {} vertices",
                mesh.vertices.len()
            );
            assert_eq!(layout.fixed, cells <= 513, "{cells}²");
            if layout.fixed {
                let c = layout.centre([0.0, 0.0], [cells, cells]);
                let s = 2.0 * (c[0] / 2.0).floor();
                let r = layout.radius as f32;
                assert!(s - r <= 0.0 && s + r >= (cells - 1) as f32, "{cells}²");
            } else {
                assert_eq!(layout.radius, DEFAULT_RADIUS);
            }
        }
    }
}
