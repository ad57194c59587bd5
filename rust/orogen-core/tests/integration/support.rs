//! Helpers shared by the integration tests' modules.

/// Runs `f` on a fresh rayon pool of `threads` threads: the tests that a result has the same
/// bytes whatever the thread count.
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
        .install(f)
}

/// The maps the hydrology pass writes.
pub const HYDROLOGY_MAPS: [&str; 5] = [
    orogen_core::world::names::DRAINAGE,
    orogen_core::world::names::WATER_SURFACE,
    orogen_core::world::names::LAKE_DEPTH,
    orogen_core::world::names::RIVERS,
    orogen_core::world::names::BASINS,
];

/// `n` random layer thicknesses, metres: none with probability 0.2, otherwise uniform in
/// `0..max`.
pub fn random_thickness(rng: &mut impl rand::Rng, n: usize, max: f32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            if rng.random_bool(0.2) {
                0.0
            } else {
                rng.random_range(0.0..max)
            }
        })
        .collect()
}

/// Runs a recipe from the current folder, uncancelled, to its world.
pub fn run_world(r: &orogen_core::Recipe) -> orogen_core::World {
    orogen_core::runner::run_recipe(
        r,
        std::path::Path::new("."),
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap()
    .world
}

/// Least-squares fit of ln S against ln A over the nodes draining at least `min_area` m²
/// (slopes to each node's receiver, which must be positive): (exponent, intercept, count).
pub fn slope_area_fit(
    graph: &orogen_core::flow::FlowGraph,
    drainage: &[f32],
    h: &[f32],
    min_area: f64,
) -> (f64, f64, usize) {
    let (mut sx, mut sy, mut sxx, mut sxy, mut c) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..h.len() {
        let r = graph.receivers[i] as usize;
        if r == i || f64::from(drainage[i]) < min_area {
            continue;
        }
        let s = (f64::from(h[i]) - f64::from(h[r])) / f64::from(graph.dist[i]);
        assert!(s > 0.0, "node {i}: slope {s}");
        let (x, y) = (f64::from(drainage[i]).ln(), s.ln());
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        c += 1.0;
    }
    let slope = (c * sxy - sx * sy) / (c * sxx - sx * sx);
    let intercept = ((sy - slope * sx) / c).exp();
    (slope, intercept, c as usize)
}
