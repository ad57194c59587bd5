//! What the orogen-gpu tests share: the GPU context, inputs, bit patterns, running to a
//! steady state, and the slope–area fit.
#![allow(dead_code)] // (each test file uses some of these)

use orogen_core::eroders::stream_power::Inputs;
use orogen_core::flow::OutletParams;
use orogen_core::Grid;
use orogen_gpu::{GpuContext, GpuStreamPower};

/// The GPU context; without a Vulkan adapter the test fails, saying how to get lavapipe.
pub fn ctx() -> GpuContext {
    GpuContext::new().unwrap_or_else(|e| {
        panic!(
            "{e}\nThe orogen-gpu tests need a Vulkan adapter: run scripts/install-vulkan.sh \
             (apt-get install mesa-vulkan-drivers libvulkan1) for Mesa's lavapipe"
        )
    })
}

/// Uniform erodibility `k` and uplift `u` over `n` nodes, no precipitation.
pub fn inputs(n: usize, k: f32, u: f32) -> Inputs {
    Inputs {
        k: vec![k; n],
        uplift: vec![u; n],
        precipitation: None,
    }
}

/// The bit patterns of `v`, to compare floats exactly.
pub fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Steps `gpu` (its heights set to `start`) by `dt` until no height moves 2 mm in a step:
/// the step count and the heights then. Fails after 3,000 steps.
pub fn run_to_steady(gpu: &mut GpuStreamPower, start: &[f32], dt: f64) -> (usize, Vec<f32>) {
    gpu.set_heights(start).unwrap();
    let mut before = start.to_vec();
    let mut steps = 0;
    loop {
        gpu.step(dt).unwrap();
        steps += 1;
        let now = gpu.heights().unwrap();
        let change = now
            .iter()
            .zip(&before)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        before = now;
        if change < 2e-3 {
            return (steps, before);
        }
        assert!(
            steps < 3000,
            "no steady state after {steps} steps (change {change} m)"
        );
    }
}

/// Least-squares fit of ln S against ln A over nodes draining more than `threshold` m²
/// (slope to the receiver over the link length): (exponent, exp(intercept), node count).
pub fn slope_area_fit(
    grid: Grid,
    h: &[f32],
    rcv: &[u32],
    area: &[f64],
    threshold: f64,
) -> (f64, f64, usize) {
    let (mut sx, mut sy, mut sxx, mut sxy, mut cnt) = (0.0, 0.0, 0.0, 0.0, 0usize);
    for i in 0..h.len() {
        let r = rcv[i] as usize;
        if r == i || area[i] < threshold {
            continue;
        }
        let (xi, yi) = ((i % grid.width) as f64, (i / grid.width) as f64);
        let (xr, yr) = ((r % grid.width) as f64, (r / grid.width) as f64);
        let dist = ((xi - xr) * grid.dx() as f64).hypot((yi - yr) * grid.dy() as f64);
        let s = (h[i] as f64 - h[r] as f64) / dist;
        assert!(s > 0.0, "channel node {i} not above its receiver");
        let (x, y) = (area[i].ln(), s.ln());
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        cnt += 1;
    }
    let c = cnt as f64;
    let b = (c * sxy - sx * sy) / (c * sxx - sx * sx);
    let a = (sy - b * sx) / c;
    (b, a.exp(), cnt)
}

/// One test terrain: a grid, its outlets and heights.
pub struct Case {
    pub name: &'static str,
    pub grid: Grid,
    pub outlets: OutletParams,
    pub heights: Vec<f32>,
}

impl Case {
    /// `name` on `grid` with `outlets`, heights `f(x, y)`.
    pub fn new(
        name: &'static str,
        grid: Grid,
        outlets: OutletParams,
        f: &mut dyn FnMut(usize, usize) -> f32,
    ) -> Case {
        let heights = (0..grid.len())
            .map(|i| f(i % grid.width, i / grid.width))
            .collect();
        Case {
            name,
            grid,
            outlets,
            heights,
        }
    }
}
