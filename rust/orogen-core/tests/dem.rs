//! Real DEMs (issue #11): drainage summed in 64-bit, non-square cells, nodata outlets.

use orogen_core::flow::hydrology::{Hydrology, Params};
use orogen_core::flow::Neighbourhood;

/// A channel of `n` nodes in a line: node `i` neighbours `i - 1` and `i + 1`, node 0 is the
/// only outlet.
struct Channel {
    n: usize,
    area: f32,
}

impl Neighbourhood for Channel {
    fn len(&self) -> usize {
        self.n
    }
    fn for_each_neighbour<F: FnMut(u32, f32)>(&self, node: usize, mut f: F) {
        if node > 0 {
            f(node as u32 - 1, 1.0);
        }
        if node + 1 < self.n {
            f(node as u32 + 1, 1.0);
        }
    }
    fn is_outlet(&self, node: usize) -> bool {
        node == 0
    }
    fn node_area(&self, _node: usize) -> f32 {
        self.area
    }
    fn position(&self, node: usize) -> glam::DVec2 {
        glam::DVec2::new(node as f64, 0.0)
    }
}

#[test]
fn a_43499_cell_channel_drains_exactly_43499_cell_areas() {
    const N: usize = 43_499;
    // A 3″ geographic cell (74.6 m × 92.5 m): the area is not a short binary fraction.
    let area = 74.6f32 * 92.5f32;
    // The f32 running sum this replaces is off: the test can tell them apart.
    let naive = (0..N).fold(0.0f32, |s, _| s + area);
    let exact = (N as f64 * area as f64) as f32;
    assert_ne!(naive, exact, "pick an area whose f32 running sum drifts");
    let heights: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut hydrology = Hydrology::new(
        Channel { n: N, area },
        None,
        Params::default(),
        None,
        "channel",
    )
    .unwrap();
    let maps = hydrology.compute(&heights).unwrap();
    assert_eq!(maps.drainage[0], exact);
    // Every node drains all the nodes upstream of it, exactly.
    for i in [1, 1000, 20_000, N - 1] {
        assert_eq!(maps.drainage[i], ((N - i) as f64 * area as f64) as f32, "node {i}");
    }
}
