//! Sculpting heights with the round [`Brush`]: raise, lower, flatten (to the height where
//! the stroke began), smooth, and set (to a height in metres). Each is a brush mode over
//! the height map, so a stroke changes a cell at most as much as one dab would
//! ([`Brush::stroke_dab`]).

use crate::edit::brush::{Brush, BrushMode};
use crate::error::{OrogenError, Result};

/// What a sculpting dab does to the heights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SculptMode {
    /// Up by `strength · value` metres at full weight.
    Raise,
    /// Down by `strength · value` metres at full weight.
    Lower,
    /// Towards the given height, metres (where the stroke began), by `strength · weight`.
    Flatten(f32),
    /// Towards the mean of each cell's 3×3 neighbourhood.
    Smooth,
    /// Towards `value` metres, by `strength · weight`.
    Set,
}

impl SculptMode {
    /// The mode called `name` (`raise`, `lower`, `flatten`, `smooth`, `set`, any case);
    /// `flatten` flattens to `flatten_to` metres.
    pub fn parse(name: &str, flatten_to: f32) -> Result<SculptMode> {
        match name.to_ascii_lowercase().as_str() {
            "raise" => Ok(SculptMode::Raise),
            "lower" => Ok(SculptMode::Lower),
            "flatten" => Ok(SculptMode::Flatten(flatten_to)),
            "smooth" => Ok(SculptMode::Smooth),
            "set" => Ok(SculptMode::Set),
            _ => Err(OrogenError::invalid(
                "mode",
                format!("must be raise, lower, flatten, smooth or set, got `{name}`"),
            )),
        }
    }

    /// The brush that does it: `radius` metres, `strength` and `falloff` 0–1, `value`
    /// metres (the amount raised or lowered, or the height set).
    pub fn brush(self, radius: f32, strength: f32, falloff: f32, value: f32) -> Brush {
        let (mode, value) = match self {
            SculptMode::Raise => (BrushMode::Add, value),
            SculptMode::Lower => (BrushMode::Subtract, value),
            SculptMode::Flatten(h) => (BrushMode::Set, h),
            SculptMode::Smooth => (BrushMode::Smooth, value),
            SculptMode::Set => (BrushMode::Set, value),
        };
        Brush {
            mode,
            radius,
            strength,
            falloff,
            value,
            floor: f32::NEG_INFINITY,
        }
    }
}

impl Brush {
    /// The dab's weight times its strength at every cell of `grid` (0 outside the radius),
    /// and the cells where it is not 0 as `(x0, y0, x1, y1)` (ends exclusive; None: the dab
    /// misses the map). The erosion brush's mask.
    pub fn mask(
        &self,
        grid: crate::field::Grid,
        centre: [f32; 2],
    ) -> Result<(Vec<f32>, Option<[usize; 4]>)> {
        let mut m = crate::field::ScalarMap::filled(grid, 0.0);
        let b = Brush {
            mode: BrushMode::Add,
            value: 1.0,
            floor: f32::NEG_INFINITY,
            ..*self
        };
        let rect = b.dab(&mut m, centre)?;
        Ok((m.data, rect))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{Grid, ScalarMap};
    use crate::math;

    fn hills(w: usize, h: usize) -> ScalarMap {
        let mut m = ScalarMap::filled(Grid::new(w, h, 10.0).unwrap(), 0.0);
        for y in 0..h {
            for x in 0..w {
                m.data[y * w + x] =
                    50.0 + 20.0 * math::sin((x as f32) * 0.7) * math::cos((y as f32) * 0.45);
            }
        }
        m
    }

    #[test]
    fn raise_adds_strength_times_value_at_the_centre_and_nothing_outside() {
        let base = hills(41, 41);
        let mut m = base.clone();
        let brush = SculptMode::Raise.brush(100.0, 0.4, 0.5, 5.0);
        brush
            .stroke_dab(&mut m, [200.0, 200.0], &base.data)
            .unwrap();
        let c = 20 * 41 + 20;
        assert!((m.data[c] - (base.data[c] + 2.0)).abs() < 1e-4);
        for y in 0..41 {
            for x in 0..41 {
                let d = (((x as f32 - 20.0) * 10.0).powi(2) + ((y as f32 - 20.0) * 10.0).powi(2))
                    .sqrt();
                let i = y * 41 + x;
                if d >= 100.0 {
                    assert_eq!(m.data[i], base.data[i]);
                } else {
                    assert!(m.data[i] >= base.data[i]);
                }
            }
        }
        // Lower is its mirror.
        let mut l = base.clone();
        SculptMode::Lower
            .brush(100.0, 0.4, 0.5, 5.0)
            .stroke_dab(&mut l, [200.0, 200.0], &base.data)
            .unwrap();
        assert!((l.data[c] - (base.data[c] - 2.0)).abs() < 1e-4);
    }

    #[test]
    fn flatten_converges_to_the_target() {
        let mut m = hills(41, 41);
        let target = 55.0;
        let brush = SculptMode::Flatten(target).brush(120.0, 0.5, 0.2, 0.0);
        let core = |m: &ScalarMap| {
            let mut worst = 0.0f32;
            for y in 15..26 {
                for x in 15..26 {
                    worst = worst.max((m.data[y * 41 + x] - target).abs());
                }
            }
            worst
        };
        let mut last = core(&m);
        for _ in 0..12 {
            brush.dab(&mut m, [200.0, 200.0]).unwrap();
            let now = core(&m);
            assert!(now <= last + 1e-5);
            last = now;
        }
        assert!(last < 0.01, "{last}");
    }

    #[test]
    fn smooth_reduces_variance_and_roughly_keeps_the_mean() {
        let mut m = hills(41, 41);
        let stats = |m: &ScalarMap| {
            let v: Vec<f32> = (12..29)
                .flat_map(|y| (12..29).map(move |x| (x, y)))
                .map(|(x, y)| m.data[y * 41 + x])
                .collect();
            let mean = v.iter().sum::<f32>() / v.len() as f32;
            let var = v.iter().map(|a| (a - mean).powi(2)).sum::<f32>() / v.len() as f32;
            (mean, var)
        };
        let (mean0, var0) = stats(&m);
        let brush = SculptMode::Smooth.brush(150.0, 1.0, 0.0, 0.0);
        for _ in 0..3 {
            brush.dab(&mut m, [200.0, 200.0]).unwrap();
        }
        let (mean1, var1) = stats(&m);
        assert!(var1 < 0.5 * var0, "{var0} → {var1}");
        assert!((mean1 - mean0).abs() < 1.0, "{mean0} → {mean1}");
    }

    #[test]
    fn names_parse_and_a_mask_is_the_weight_times_the_strength() {
        assert_eq!(SculptMode::parse("Raise", 0.0).unwrap(), SculptMode::Raise);
        assert_eq!(
            SculptMode::parse("flatten", 3.0).unwrap(),
            SculptMode::Flatten(3.0)
        );
        let e = SculptMode::parse("dig", 0.0).unwrap_err();
        assert!(e.to_string().contains("mode"), "{e}");
        let grid = Grid::new(21, 21, 1.0).unwrap();
        let b = SculptMode::Smooth.brush(5.0, 0.5, 0.0, 0.0);
        let (mask, rect) = b.mask(grid, [10.0, 10.0]).unwrap();
        assert_eq!(mask[10 * 21 + 10], 0.5);
        assert_eq!(mask[0], 0.0);
        assert!(rect.is_some());
    }
}
