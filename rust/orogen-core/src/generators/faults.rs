//! Faulting: random lines (or circles) raise one side and lower the other.
//!
//! Galin et al. 2019 §3.1.2: the faulting method, generalised to circles. Fault `i` of
//! `count` moves the raised side up and the other side down by
//! `offset·(count − i)/count`, so early faults shape the land and late ones add detail.
//! Lines pass through a random point of the extent at a random angle; circles have a random
//! centre in the extent and a radius between 5 % and 50 % of the extent's longer side.

use crate::math;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};

/// Largest accepted fault count (each fault costs one pass over the grid).
pub const MAX_FAULTS: u32 = 10_000;
/// Largest |amplitude| and |offset| accepted by the generators, metres (keeps every sum
/// finite in f32).
pub const MAX_HEIGHT: f32 = 1.0e7;
/// ChaCha8 stream of the recipe seed for the faults (the noise uses 1 and 2).
pub(crate) const STREAM_FAULTS: u64 = 3;

/// Faulting parameters (`faults: (count: 100, offset: 20.0)` in a `Noise` terrain).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    /// Number of faults, 1..=10000. Default 100.
    pub count: u32,
    /// Half the height step of the first fault, metres; later faults shrink
    /// linearly towards `offset/count`; within ±1e7. Default 20.
    pub offset: f32,
    /// Circles instead of straight lines (inside raised). Default false.
    pub circles: bool,
    /// Width of the smooth ramp across a fault, metres (≥ 0; 0 is a sharp step).
    /// Default 0.
    pub width: f32,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            count: 100,
            offset: 20.0,
            circles: false,
            width: 0.0,
        }
    }
}

impl Faults {
    /// Checks ranges; `field` prefixes error names (e.g. `terrain.Noise.faults`).
    pub fn validate(&self, field: &str) -> Result<()> {
        if self.count == 0 || self.count > MAX_FAULTS {
            return Err(OrogenError::invalid(
                format!("{field}.count"),
                format!("must be between 1 and {MAX_FAULTS}, got {}", self.count),
            ));
        }
        let m = MAX_HEIGHT as f64;
        check_range(&format!("{field}.offset"), self.offset as f64, -m, m)?;
        check_range(&format!("{field}.width"), self.width as f64, 0.0, f64::MAX)
    }
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Signed distance = (p − c)·n.
    Line { cx: f64, cy: f64, nx: f64, ny: f64 },
    /// Signed distance = r − |p − c| (positive inside).
    Circle { cx: f64, cy: f64, r: f64 },
}

/// The faults drawn for one extent, ready to evaluate.
#[derive(Clone, Debug)]
pub struct FaultSet {
    faults: Vec<(Shape, f64)>,
    half_width: f64,
}

impl FaultSet {
    /// Draws the faults of `params` over an extent of `ex`×`ey` metres from `seed`.
    pub fn draw(params: &Faults, ex: f64, ey: f64, seed: u64) -> FaultSet {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(STREAM_FAULTS);
        let n = params.count as f64;
        let faults = (0..params.count)
            .map(|i| {
                let cx = rng.random::<f64>() * ex;
                let cy = rng.random::<f64>() * ey;
                let shape = if params.circles {
                    let r = ex.max(ey) * (0.05 + 0.45 * rng.random::<f64>());
                    Shape::Circle { cx, cy, r }
                } else {
                    let a = rng.random::<f64>() * std::f64::consts::TAU;
                    Shape::Line {
                        cx,
                        cy,
                        nx: math::cos(a),
                        ny: math::sin(a),
                    }
                };
                (shape, params.offset as f64 * (n - i as f64) / n)
            })
            .collect();
        FaultSet {
            faults,
            half_width: params.width as f64 * 0.5,
        }
    }

    /// Sum of every fault's displacement at `(x, y)` metres.
    #[inline]
    pub fn displacement(&self, x: f64, y: f64) -> f64 {
        let mut sum = 0.0;
        for &(shape, d) in &self.faults {
            let s = match shape {
                Shape::Line { cx, cy, nx, ny } => (x - cx) * nx + (y - cy) * ny,
                Shape::Circle { cx, cy, r } => r - math::hypot(x - cx, y - cy),
            };
            sum += d * side(s, self.half_width);
        }
        sum
    }
}

/// −1 below the fault, +1 above, a smoothstep ramp of half-width `hw` between.
#[inline]
fn side(s: f64, hw: f64) -> f64 {
    if hw <= 0.0 {
        if s >= 0.0 {
            1.0
        } else {
            -1.0
        }
    } else {
        let t = ((s / hw + 1.0) * 0.5).clamp(0.0, 1.0);
        2.0 * t * t * (3.0 - 2.0 * t) - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_bounded_by_their_offsets_and_not_flat() {
        let p = Faults {
            count: 40,
            offset: 10.0,
            ..Default::default()
        };
        let set = FaultSet::draw(&p, 10_000.0, 10_000.0, 1);
        // Σ offset·(n − i)/n over i = offset·(n + 1)/2.
        let bound = 10.0 * 41.0 / 2.0;
        let mut lo = f64::MAX;
        let mut hi = f64::MIN;
        for y in 0..50 {
            for x in 0..50 {
                let d = set.displacement(x as f64 * 200.0, y as f64 * 200.0);
                assert!(d.abs() <= bound + 1e-9);
                lo = lo.min(d);
                hi = hi.max(d);
            }
        }
        assert!(hi - lo > 10.0, "{lo}..{hi}");
    }

    #[test]
    fn a_single_line_fault_is_a_step_of_twice_its_offset() {
        let p = Faults {
            count: 1,
            offset: 5.0,
            ..Default::default()
        };
        let set = FaultSet::draw(&p, 1000.0, 1000.0, 9);
        let mut values: Vec<f64> = (0..20)
            .flat_map(|y| (0..20).map(move |x| (x as f64 * 50.0, y as f64 * 50.0)))
            .map(|(x, y)| set.displacement(x, y))
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        assert!(
            values.iter().all(|v| (v.abs() - 5.0).abs() < 1e-12),
            "{values:?}"
        );
    }

    #[test]
    fn ramp_is_continuous_and_monotone() {
        let mut prev = side(-10.0, 2.0);
        assert_eq!(prev, -1.0);
        for i in -100..=100 {
            let v = side(i as f64 * 0.05, 2.0);
            assert!(v >= prev && (v - prev) < 0.1);
            prev = v;
        }
        assert_eq!(prev, 1.0);
    }
}
