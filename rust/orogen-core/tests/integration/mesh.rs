//! Irregular node graphs: Delaunay triangulation, Voronoi areas, the graph they make, and
//! the flow router walking it.

use crate::support::on_threads;
use glam::DVec2;
use orogen_core::flow::{accumulate, FlowRouter, Neighbourhood, SinkMode};
use orogen_core::mesh::points::{domain_area, jittered_grid};
use orogen_core::mesh::{delaunay_graph, Delaunay, NodeGraph};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` points uniform in a `size × size` square.
fn uniform_points(rng: &mut ChaCha8Rng, n: usize, size: f64) -> Vec<DVec2> {
    (0..n)
        .map(|_| DVec2::new(rng.random::<f64>() * size, rng.random::<f64>() * size))
        .collect()
}

/// Up to `n` distinct points with integer coordinates in `[0, side)²`: many collinear and
/// cocircular, and every predicate below exact in f64.
fn lattice_points(rng: &mut ChaCha8Rng, n: usize, side: u32) -> Vec<DVec2> {
    let mut seen = std::collections::HashSet::new();
    let mut pts = Vec::new();
    for _ in 0..n {
        let (x, y) = (rng.random_range(0..side), rng.random_range(0..side));
        if seen.insert((x, y)) {
            pts.push(DVec2::new(x as f64, y as f64));
        }
    }
    pts
}

/// Point set `k` of a mixed sequence: uniform reals, integer lattice points, clustered
/// reals, points at a large offset from the origin.
fn point_set(rng: &mut ChaCha8Rng, k: usize) -> Vec<DVec2> {
    let n = rng.random_range(50..=200);
    match k % 4 {
        0 => uniform_points(rng, n, 1000.0),
        1 => lattice_points(rng, n, 16),
        2 => {
            // Clusters of tight points: short edges beside long ones.
            let centres = uniform_points(rng, 5, 1000.0);
            (0..n)
                .map(|i| centres[i % 5] + (uniform_points(rng, 1, 2.0)[0] - DVec2::ONE))
                .collect()
        }
        _ => uniform_points(rng, n, 50.0)
            .into_iter()
            .map(|p| p + DVec2::new(3.0e5, -7.0e5))
            .collect(),
    }
}

/// Strict convex hull (monotone chain), counter-clockwise, independent of the crate.
fn convex_hull(points: &[DVec2]) -> Vec<DVec2> {
    let mut p: Vec<DVec2> = points.to_vec();
    p.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    let mut lower: Vec<DVec2> = Vec::new();
    for &q in &p {
        while lower.len() >= 2
            && (lower[lower.len() - 1] - lower[lower.len() - 2])
                .perp_dot(q - lower[lower.len() - 2])
                <= 0.0
        {
            lower.pop();
        }
        lower.push(q);
    }
    let mut upper: Vec<DVec2> = Vec::new();
    for &q in p.iter().rev() {
        while upper.len() >= 2
            && (upper[upper.len() - 1] - upper[upper.len() - 2])
                .perp_dot(q - upper[upper.len() - 2])
                <= 0.0
        {
            upper.pop();
        }
        upper.push(q);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// Shoelace area of a polygon, positive counter-clockwise.
fn polygon_area(poly: &[DVec2]) -> f64 {
    let o = poly[0];
    let m = poly.len();
    0.5 * (0..m)
        .map(|k| (poly[k] - o).perp_dot(poly[(k + 1) % m] - o))
        .sum::<f64>()
}

/// Brute force: the hull cut by the bisector half-plane of every other point.
fn brute_force_cell_area(points: &[DVec2], hull: &[DVec2], v: usize) -> f64 {
    let o = points[v];
    let mut poly: Vec<DVec2> = hull.iter().map(|&h| h - o).collect();
    for (u, &pu) in points.iter().enumerate() {
        if u == v {
            continue;
        }
        let w = pu - o;
        let c = 0.5 * w.length_squared();
        let mut out = Vec::new();
        for k in 0..poly.len() {
            let (p, q) = (poly[k], poly[(k + 1) % poly.len()]);
            let (fp, fq) = (p.dot(w) - c, q.dot(w) - c);
            if fp <= 0.0 {
                out.push(p);
            }
            if (fp <= 0.0) != (fq <= 0.0) {
                out.push(p + (q - p) * (fp / (fp - fq)));
            }
        }
        poly = out;
        if poly.len() < 3 {
            return 0.0;
        }
    }
    polygon_area(&poly)
}

/// Node indices on an edge used by only one triangle: the hull, found topologically.
fn boundary_nodes(n: usize, triangles: &[[u32; 3]]) -> Vec<bool> {
    let mut count = std::collections::HashMap::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *count.entry((a.min(b), a.max(b))).or_insert(0u32) += 1;
        }
    }
    let mut mask = vec![false; n];
    for ((a, b), c) in count {
        assert!(c == 1 || c == 2, "edge ({a}, {b}) in {c} triangles");
        if c == 1 {
            mask[a as usize] = true;
            mask[b as usize] = true;
        }
    }
    mask
}

/// Everything in a graph, as bytes.
fn graph_bytes(g: &NodeGraph) -> Vec<u8> {
    let mut b = Vec::new();
    for p in g.positions() {
        b.extend(p.x.to_le_bytes());
        b.extend(p.y.to_le_bytes());
    }
    for &o in g.offsets() {
        b.extend((o as u64).to_le_bytes());
    }
    for i in 0..g.len() {
        for (&j, &d) in g.neighbours(i).iter().zip(g.link_lengths(i)) {
            b.extend(j.to_le_bytes());
            b.extend(d.to_le_bytes());
        }
        b.extend(g.area(i).to_le_bytes());
        b.push(u8::from(g.open_boundary()[i]));
    }
    b
}

#[test]
fn every_circumcircle_is_empty_on_10000_random_sets() {
    let mut rng = ChaCha8Rng::seed_from_u64(2016);
    let mut triangles_checked = 0usize;
    for k in 0..10_000 {
        let pts = point_set(&mut rng, k);
        let dt = Delaunay::new(&pts).unwrap_or_else(|e| panic!("set {k}: {e}"));
        let n = pts.len();
        // Euler: a triangulation of n points with h on the hull has 2n − 2 − h triangles.
        assert_eq!(
            dt.triangles().len(),
            2 * n - 2 - dt.hull().len(),
            "set {k}: triangle count"
        );
        let mut used = vec![false; n];
        for t in dt.triangles() {
            let [a, b, c] = t.map(|i| pts[i as usize]);
            assert!(
                (b - a).perp_dot(c - a) > 0.0,
                "set {k}: triangle {t:?} not CCW"
            );
            for &i in t {
                used[i as usize] = true;
            }
            for (j, &d) in pts.iter().enumerate() {
                if t.contains(&(j as u32)) {
                    continue;
                }
                let (ad, bd, cd) = (a - d, b - d, c - d);
                let (al, bl, cl) = (
                    ad.length_squared(),
                    bd.length_squared(),
                    cd.length_squared(),
                );
                let det = al * bd.perp_dot(cd) + bl * cd.perp_dot(ad) + cl * ad.perp_dot(bd);
                let scale = al * (bd.x * cd.y).abs().max((bd.y * cd.x).abs())
                    + bl * (cd.x * ad.y).abs().max((cd.y * ad.x).abs())
                    + cl * (ad.x * bd.y).abs().max((ad.y * bd.x).abs());
                assert!(
                    det <= 1e-10 * scale,
                    "set {k}: point {j} strictly inside the circumcircle of {t:?} \
                     (det {det:e}, scale {scale:e})"
                );
            }
            triangles_checked += 1;
        }
        assert!(
            used.iter().all(|&u| u),
            "set {k}: a point is in no triangle"
        );
    }
    assert!(triangles_checked > 1_500_000, "{triangles_checked}");
}

#[test]
fn voronoi_areas_sum_to_the_hull_area_and_are_positive() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for k in 0..400 {
        let pts = point_set(&mut rng, k);
        let dt = Delaunay::new(&pts).unwrap();
        let hull_area = polygon_area(&convex_hull(&pts));
        assert!(
            (dt.hull_area() - hull_area).abs() <= 1e-9 * hull_area,
            "set {k}: hull area {} vs {hull_area}",
            dt.hull_area()
        );
        let areas = dt.voronoi_areas().unwrap();
        assert!(
            areas.iter().all(|&a| a > 0.0),
            "set {k}: an area is not > 0"
        );
        let sum: f64 = areas.iter().sum();
        assert!(
            (sum - hull_area).abs() <= 1e-6 * hull_area,
            "set {k}: areas sum to {sum}, hull {hull_area}"
        );
        let g = dt.to_graph().unwrap();
        assert!((g.total_area() - hull_area).abs() <= 1e-6 * hull_area);
    }
    for (nx, ny, jitter, seed) in [
        (2, 2, 0.0, 0),
        (3, 7, 0.3, 1),
        (40, 30, 0.0, 2),
        (40, 30, 0.2, 3),
        (64, 64, 0.45, 4),
        (200, 150, 0.4, 5),
    ] {
        let spacing = 25.0;
        let pts = jittered_grid(nx, ny, spacing, jitter, seed).unwrap();
        let dt = Delaunay::new(&pts).unwrap();
        let domain = domain_area(nx, ny, spacing);
        assert!(
            (dt.hull_area() - domain).abs() <= 1e-12 * domain,
            "{nx}×{ny}: hull area {} is not the rectangle's {domain}",
            dt.hull_area()
        );
        let areas = dt.voronoi_areas().unwrap();
        assert!(areas.iter().all(|&a| a > 0.0));
        let sum: f64 = areas.iter().sum();
        assert!(
            (sum - domain).abs() <= 1e-6 * domain,
            "{nx}×{ny} jitter {jitter}: areas sum to {sum}, domain {domain}"
        );
        let g = dt.to_graph().unwrap();
        assert!((g.total_area() - domain).abs() <= 1e-6 * domain);
    }
}

#[test]
fn voronoi_areas_match_brute_force_cells() {
    // Each cell against the hull cut by the bisectors of all other points.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut sets: Vec<Vec<DVec2>> = (0..200).map(|k| point_set(&mut rng, k)).collect();
    // Points along a hull side, and a circumcentre (0, 14) outside the hull on that side's
    // line beyond its end: the cell of (2, 13) must be clipped.
    sets.push(
        [
            (0, 0),
            (0, 1),
            (0, 6),
            (0, 11),
            (2, 15),
            (15, 15),
            (15, 0),
            (2, 13),
            (1, 12),
            (2, 11),
            (3, 13),
            (8, 8),
        ]
        .map(|(x, y)| DVec2::new(x as f64, y as f64))
        .to_vec(),
    );
    sets.push(jittered_grid(12, 9, 10.0, 0.45, 9).unwrap());
    // Very obtuse hull triangles: points just inside a long hull side.
    let mut flat = vec![
        DVec2::new(0.0, 0.0),
        DVec2::new(100.0, 0.0),
        DVec2::new(50.0, 60.0),
    ];
    flat.extend((1..10).map(|i| DVec2::new(i as f64 * 10.0, 0.3 + 0.05 * (i % 3) as f64)));
    sets.push(flat);
    for (k, pts) in sets.iter().enumerate() {
        let dt = Delaunay::new(pts).unwrap();
        let areas = dt.voronoi_areas().unwrap();
        let hull = convex_hull(pts);
        let scale = polygon_area(&hull);
        for (v, &a) in areas.iter().enumerate() {
            let want = brute_force_cell_area(pts, &hull, v);
            assert!(
                (a - want).abs() <= 1e-9 * scale,
                "set {k}, node {v}: area {a}, brute force {want}"
            );
        }
    }
}

#[test]
fn regular_grid_cells_are_squares_halves_and_quarters() {
    let (nx, ny, s) = (9, 7, 10.0);
    let g = delaunay_graph(&jittered_grid(nx, ny, s, 0.0, 0).unwrap()).unwrap();
    for j in 0..ny {
        for i in 0..nx {
            let edges = usize::from(i == 0 || i + 1 == nx) + usize::from(j == 0 || j + 1 == ny);
            let want = (s * s) as f32 / (1 << edges) as f32;
            let a = g.area(j * nx + i);
            assert!((a - want).abs() <= 1e-4 * want, "({i}, {j}): {a} vs {want}");
            assert_eq!(g.open_boundary()[j * nx + i], edges > 0, "({i}, {j})");
        }
    }
}

#[test]
fn adjacency_is_symmetric_with_euclidean_lengths_and_hull_nodes_open() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut sets: Vec<Vec<DVec2>> = (0..100).map(|k| point_set(&mut rng, k)).collect();
    sets.push(jittered_grid(50, 40, 30.0, 0.35, 1).unwrap());
    for (k, pts) in sets.iter().enumerate() {
        let dt = Delaunay::new(pts).unwrap();
        let g = dt.to_graph().unwrap();
        let n = pts.len();
        assert_eq!(g.len(), n);
        assert_eq!(Neighbourhood::len(&g), n);
        assert_eq!(g.positions(), &pts[..]);

        // Links are exactly the triangle edges.
        let mut tri_edges = std::collections::BTreeSet::new();
        for t in dt.triangles() {
            for c in 0..3 {
                let (a, b) = (t[c], t[(c + 1) % 3]);
                tri_edges.insert((a.min(b), a.max(b)));
            }
        }
        assert_eq!(g.edge_count(), tri_edges.len(), "set {k}");

        for i in 0..n {
            let nb = g.neighbours(i);
            assert!(
                nb.windows(2).all(|w| w[0] < w[1]),
                "set {k}: row {i} not sorted"
            );
            let mut walked = Vec::new();
            g.for_each_neighbour(i, |j, d| walked.push((j, d)));
            assert_eq!(walked.len(), nb.len());
            for (&(j, d), (&j2, &d2)) in walked.iter().zip(nb.iter().zip(g.link_lengths(i))) {
                assert_eq!((j, d.to_bits()), (j2, d2.to_bits()));
                let j = j as usize;
                assert!(tri_edges.contains(&(i.min(j) as u32, i.max(j) as u32)));
                assert_eq!(d, pts[i].distance(pts[j]) as f32, "set {k}: link {i}-{j}");
                // The reverse link exists with the same length.
                let back = g
                    .neighbours(j)
                    .binary_search(&(i as u32))
                    .expect("symmetric");
                assert_eq!(g.link_lengths(j)[back].to_bits(), d.to_bits());
            }
            assert_eq!(g.node_area(i), g.area(i));
            assert_eq!(g.is_outlet(i), g.open_boundary()[i]);
        }

        // Open boundary = nodes on single-triangle edges = nodes on the hull.
        let topo = boundary_nodes(n, dt.triangles());
        assert_eq!(g.open_boundary(), &topo[..], "set {k}");
        let hull = convex_hull(pts);
        let scale = hull.iter().fold(0.0f64, |m, h| m.max(h.distance(hull[0])));
        for (i, &p) in pts.iter().enumerate() {
            // Distance from p to the hull boundary.
            let dist = (0..hull.len())
                .map(|e| {
                    let (a, b) = (hull[e], hull[(e + 1) % hull.len()]);
                    let t = ((p - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
                    p.distance(a + (b - a) * t)
                })
                .fold(f64::INFINITY, f64::min);
            let is_corner = hull.contains(&p);
            if is_corner {
                assert!(g.is_outlet(i), "set {k}: hull corner {i} not open");
            }
            if g.is_outlet(i) {
                assert!(dist <= 1e-9 * scale, "set {k}: open node {i} off the hull");
            } else if k % 4 == 1 || k == sets.len() - 1 {
                // Exact coordinates: a point on a hull side is always a hull node.
                let on_side = (0..hull.len()).any(|e| {
                    let (a, b) = (hull[e], hull[(e + 1) % hull.len()]);
                    let t = (p - a).dot(b - a);
                    (b - a).perp_dot(p - a) == 0.0 && t >= 0.0 && t <= (b - a).length_squared()
                });
                assert!(!on_side, "set {k}: node {i} on the hull but not open");
            }
        }
    }
}

#[test]
fn bad_input_is_an_error_naming_the_problem() {
    let msg = |r: orogen_core::Result<Delaunay>| r.expect_err("an error").to_string();
    for n in 0..3 {
        let pts: Vec<DVec2> = (0..n)
            .map(|i| DVec2::new(i as f64, (i * i) as f64))
            .collect();
        let m = msg(Delaunay::new(&pts));
        assert!(m.contains("at least 3 points"), "{m}");
    }
    let line: Vec<DVec2> = (0..10)
        .map(|i| DVec2::new(i as f64, 2.0 * i as f64 + 1.0))
        .collect();
    assert!(msg(Delaunay::new(&line)).contains("one line"));
    let vertical: Vec<DVec2> = (0..5).map(|i| DVec2::new(3.0, i as f64)).collect();
    assert!(msg(Delaunay::new(&vertical)).contains("one line"));

    let mut pts = vec![
        DVec2::new(0.0, 0.0),
        DVec2::new(1.0, 0.0),
        DVec2::new(0.0, 1.0),
        DVec2::new(1.0, 1.0),
    ];
    pts[2].y = f64::NAN;
    let m = msg(Delaunay::new(&pts));
    assert!(m.contains("points[2]") && m.contains("finite"), "{m}");
    pts[2] = DVec2::new(f64::INFINITY, 0.0);
    assert!(msg(Delaunay::new(&pts)).contains("points[2]"));
    pts[2] = DVec2::new(1e-300, 0.5);
    assert!(msg(Delaunay::new(&pts)).contains("out of range"));
    pts[2] = DVec2::new(1.0, 0.0);
    let m = msg(Delaunay::new(&pts));
    assert!(m.contains("points[2]") && m.contains("points[1]"), "{m}");
    assert!(delaunay_graph(&pts).is_err());

    // Graph construction.
    let pos = vec![DVec2::ZERO, DVec2::X, DVec2::Y];
    let err = |r: orogen_core::Result<NodeGraph>| r.expect_err("an error").to_string();
    assert!(err(NodeGraph::from_edges(vec![], &[], vec![])).contains("at least one node"));
    assert!(err(NodeGraph::from_edges(pos.clone(), &[[0, 3]], vec![1.0; 3])).contains("edges[0]"));
    assert!(err(NodeGraph::from_edges(pos.clone(), &[[1, 1]], vec![1.0; 3])).contains("itself"));
    assert!(err(NodeGraph::from_edges(pos.clone(), &[[0, 1]], vec![1.0; 2])).contains("areas"));
    assert!(err(NodeGraph::from_edges(
        pos.clone(),
        &[[0, 1]],
        vec![1.0, 0.0, 1.0]
    ))
    .contains("areas[1]"));
    let same = vec![DVec2::ZERO, DVec2::ZERO, DVec2::Y];
    assert!(err(NodeGraph::from_edges(same, &[[0, 1]], vec![1.0; 3])).contains("distance"));
    let mut g = NodeGraph::from_edges(pos, &[[0, 1], [1, 0], [1, 2]], vec![1.0; 3]).unwrap();
    assert_eq!(g.edge_count(), 2);
    assert!(g.set_open_boundary(&[true]).is_err());
    g.set_open_boundary(&[true, false, false]).unwrap();
    assert!(g.is_outlet(0) && !g.is_outlet(2));

    // Point generator.
    assert!(jittered_grid(1, 5, 1.0, 0.1, 0).is_err());
    assert!(jittered_grid(5, 5, 0.0, 0.1, 0).is_err());
    assert!(jittered_grid(5, 5, 1.0, 0.5, 0).is_err());
    assert!(jittered_grid(5, 5, 1.0, f64::NAN, 0).is_err());
}

#[test]
fn same_seed_gives_the_same_graph_bytes() {
    let build = |seed| delaunay_graph(&jittered_grid(60, 45, 12.5, 0.4, seed).unwrap()).unwrap();
    let (a, b, c) = (build(7), build(7), build(8));
    assert_eq!(graph_bytes(&a), graph_bytes(&b));
    assert_ne!(graph_bytes(&a), graph_bytes(&c));
    let random = |seed| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        delaunay_graph(&uniform_points(&mut rng, 3000, 5000.0)).unwrap()
    };
    assert_eq!(graph_bytes(&random(1)), graph_bytes(&random(1)));
    assert_ne!(graph_bytes(&random(1)), graph_bytes(&random(2)));
}

#[test]
fn jittered_grid_keeps_boundary_points_on_the_rectangle() {
    let (nx, ny, s) = (17, 11, 4.0);
    let pts = jittered_grid(nx, ny, s, 0.49, 42).unwrap();
    assert_eq!(pts.len(), nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let p = pts[j * nx + i];
            let site = DVec2::new(i as f64 * s, j as f64 * s);
            assert!((p - site).abs().max_element() < 0.49 * s + 1e-12);
            if i == 0 || i + 1 == nx {
                assert_eq!(p.x, site.x);
            }
            if j == 0 || j + 1 == ny {
                assert_eq!(p.y, site.y);
            }
        }
    }
    assert_eq!(domain_area(nx, ny, s), 16.0 * 10.0 * 16.0);
    assert_ne!(pts, jittered_grid(nx, ny, s, 0.49, 43).unwrap());
}

/// Routes random heights with carving over `graph` and checks receivers and chains.
fn check_routing(graph: NodeGraph, seed: u64) {
    let n = graph.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut heights: Vec<f32> = (0..n).map(|_| rng.random::<f32>() * 100.0).collect();
    let mut router = FlowRouter::with_neighbourhood(graph.clone(), None).unwrap();
    let flow = router.route(&mut heights, SinkMode::Carve).unwrap().clone();
    for (i, &r) in flow.receivers.iter().enumerate() {
        let r = r as usize;
        if r == i {
            assert!(graph.is_outlet(i), "node {i} is a pit after carving");
        } else {
            let k = graph
                .neighbours(i)
                .binary_search(&(r as u32))
                .unwrap_or_else(|_| panic!("receiver {r} of {i} is not a neighbour"));
            assert_eq!(flow.dist[i], graph.link_lengths(i)[k]);
        }
        if graph.is_outlet(i) {
            assert_eq!(r, i, "open node {i} drains elsewhere");
        }
    }
    for start in 0..n {
        let mut i = start;
        for _ in 0..=n {
            let r = flow.receivers[i] as usize;
            if r == i {
                break;
            }
            i = r;
        }
        assert!(
            graph.is_outlet(i),
            "chain from {start} ends at {i}, not open"
        );
    }
    // Every node's area reaches an outlet.
    let mut drained = vec![0.0f32; n];
    accumulate(&flow, graph.areas(), &mut drained);
    let out: f64 = (0..n)
        .filter(|&i| graph.is_outlet(i))
        .map(|i| drained[i] as f64)
        .sum();
    assert!((out - graph.total_area()).abs() <= 1e-4 * graph.total_area());
}

#[test]
fn flow_router_routes_over_a_delaunay_graph() {
    check_routing(
        delaunay_graph(&jittered_grid(80, 60, 50.0, 0.4, 3).unwrap()).unwrap(),
        1,
    );
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    check_routing(
        delaunay_graph(&uniform_points(&mut rng, 5000, 1.0e4)).unwrap(),
        2,
    );
}

/// Canonical triangles: each rotated to start at its smallest index, then sorted.
fn canonical(tris: &[[u32; 3]]) -> Vec<[u32; 3]> {
    let mut out: Vec<[u32; 3]> = tris
        .iter()
        .map(|t| {
            let k = (0..3).min_by_key(|&k| t[k]).unwrap();
            [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
        })
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn strips_give_the_one_triangulation_of_poisson_points_on_any_thread_count() {
    use orogen_core::mesh::points::poisson_disc;
    // 4 strips of about 100k points, and a smaller set that takes the single path.
    for (side, seed) in [(64_000.0, 3u64), (20_000.0, 4)] {
        let pts = poisson_disc(side, side * 0.8, 100.0, seed).unwrap();
        let whole = Delaunay::new(&pts).unwrap();
        let run = |threads: usize| on_threads(threads, || Delaunay::try_strips(&pts, 400.0));
        let (one, four) = (run(1), run(4));
        if pts.len() < 200_000 {
            assert!(
                one.is_none(),
                "{} points take the single triangulation",
                pts.len()
            );
            continue;
        }
        let (one, four) = (
            one.expect("the strips give the whole triangulation")
                .unwrap(),
            four.expect("the strips give the whole triangulation")
                .unwrap(),
        );
        assert_eq!(
            one.triangles(),
            four.triangles(),
            "thread count changed the strips"
        );
        assert_eq!(one.hull(), four.hull());
        assert_eq!(
            canonical(one.triangles()),
            canonical(whole.triangles()),
            "{} points: the strips' triangles are the triangulation's",
            pts.len()
        );
        assert_eq!(one.hull(), whole.hull(), "the same hull, in the same order");
    }
    // A margin too small for the empty circles: triangles go missing, and the count
    // check falls back to one triangulation, which is still right.
    let pts = poisson_disc(64_000.0, 51_200.0, 100.0, 5).unwrap();
    assert!(
        Delaunay::try_strips(&pts, 30.0).is_none(),
        "a 30 m margin loses triangles"
    );
    let thin = Delaunay::new_in_strips(&pts, 30.0).unwrap();
    assert_eq!(
        canonical(thin.triangles()),
        canonical(Delaunay::new(&pts).unwrap().triangles())
    );
}
