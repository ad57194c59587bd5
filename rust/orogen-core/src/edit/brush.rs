//! A round brush over a scalar map: add, subtract, smooth or set, with a soft edge.
//!
//! A dab at `centre` (metres from the first cell, x east, y down the rows) changes only
//! cells strictly within `radius` of it. Its weight is 1 out to `radius · (1 − falloff)`,
//! then falls to 0 at `radius` along a smoothstep.

use serde::{Deserialize, Serialize};

use crate::error::{OrogenError, Result};
use crate::field::ScalarMap;

/// What a dab does to the map.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BrushMode {
    /// `v += strength · value · w`.
    #[default]
    Add,
    /// `v -= strength · value · w`.
    Subtract,
    /// `v` moves towards the mean of its 3×3 neighbourhood by `strength · w`.
    Smooth,
    /// `v` moves towards `value` by `strength · w` (all the way where both are 1).
    Set,
}

impl BrushMode {
    /// The mode called `name` (`add`, `subtract`, `smooth`, `set`, any case).
    pub fn parse(name: &str) -> Result<BrushMode> {
        match name.to_ascii_lowercase().as_str() {
            "add" => Ok(BrushMode::Add),
            "subtract" => Ok(BrushMode::Subtract),
            "smooth" => Ok(BrushMode::Smooth),
            "set" => Ok(BrushMode::Set),
            _ => Err(OrogenError::invalid(
                "mode",
                format!("must be add, subtract, smooth or set, got `{name}`"),
            )),
        }
    }
}

/// A brush's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Brush {
    pub mode: BrushMode,
    /// Radius, metres (> 0).
    pub radius: f32,
    /// How much of the change one dab makes, 0–1.
    pub strength: f32,
    /// Fraction of the radius over which the weight falls to 0, 0–1 (0: a hard edge).
    pub falloff: f32,
    /// The amount added or subtracted at full weight, or the value `Set` paints, in the
    /// map's units.
    pub value: f32,
    /// Lowest value a dab leaves (precipitation: 0; uplift: none, `-inf`).
    pub floor: f32,
}

impl Default for Brush {
    fn default() -> Self {
        Brush {
            mode: BrushMode::Add,
            radius: 1000.0,
            strength: 0.5,
            falloff: 0.5,
            value: 1.0,
            floor: f32::NEG_INFINITY,
        }
    }
}

impl Brush {
    /// Checks the settings; errors name the field.
    pub fn validate(&self) -> Result<()> {
        let finite_pos = |name: &str, v: f32| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(OrogenError::invalid(name, format!("must be > 0, got {v}")))
            }
        };
        finite_pos("radius", self.radius)?;
        for (name, v) in [("strength", self.strength), ("falloff", self.falloff)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(OrogenError::invalid(
                    name,
                    format!("must be in [0, 1], got {v}"),
                ));
            }
        }
        if !self.value.is_finite() {
            return Err(OrogenError::invalid(
                "value",
                format!("must be finite, got {}", self.value),
            ));
        }
        if self.floor.is_nan() {
            return Err(OrogenError::invalid("floor", "is NaN"));
        }
        Ok(())
    }

    /// The dab's weight at distance `d` metres from its centre.
    pub fn weight(&self, d: f32) -> f32 {
        if d >= self.radius {
            return 0.0;
        }
        let inner = self.radius * (1.0 - self.falloff);
        if d <= inner {
            return 1.0;
        }
        let t = (self.radius - d) / (self.radius - inner);
        t * t * (3.0 - 2.0 * t)
    }

    /// One dab centred at `centre` (metres from the first cell). Returns the cells it
    /// may have changed as `(x0, y0, x1, y1)`, ends exclusive (None: the dab misses the
    /// map). Dabs add up: see [`Brush::stroke_dab`] for a stroke that does not.
    pub fn dab(&self, map: &mut ScalarMap, centre: [f32; 2]) -> Result<Option<[usize; 4]>> {
        self.dab_over(map, centre, None)
    }

    /// One dab of a stroke that began with the map as `base` (same size): add, subtract
    /// and set change a cell at most as much as one dab would change `base` there, however
    /// many of the stroke's dabs overlap it, so a stroke's effect does not depend on how
    /// densely it is dabbed (smoothing still adds up).
    pub fn stroke_dab(
        &self,
        map: &mut ScalarMap,
        centre: [f32; 2],
        base: &[f32],
    ) -> Result<Option<[usize; 4]>> {
        if base.len() != map.data.len() {
            return Err(OrogenError::invalid(
                "base",
                format!("has {} values for a map of {}", base.len(), map.data.len()),
            ));
        }
        self.dab_over(map, centre, Some(base))
    }

    fn dab_over(
        &self,
        map: &mut ScalarMap,
        centre: [f32; 2],
        base: Option<&[f32]>,
    ) -> Result<Option<[usize; 4]>> {
        self.validate()?;
        if !(centre[0].is_finite() && centre[1].is_finite()) {
            return Err(OrogenError::invalid(
                "centre",
                format!("must be finite, got {centre:?}"),
            ));
        }
        let grid = map.grid;
        let (dx, dy) = (grid.dx(), grid.dy());
        let (w, h) = (grid.width as i64, grid.height as i64);
        let lo = |c: f32, s: f32| ((c - self.radius) / s).floor() as i64;
        let hi = |c: f32, s: f32| ((c + self.radius) / s).ceil() as i64 + 1;
        let x0 = lo(centre[0], dx).clamp(0, w);
        let x1 = hi(centre[0], dx).clamp(0, w);
        let y0 = lo(centre[1], dy).clamp(0, h);
        let y1 = hi(centre[1], dy).clamp(0, h);
        if x0 >= x1 || y0 >= y1 {
            return Ok(None);
        }
        let (x0, x1, y0, y1) = (x0 as usize, x1 as usize, y0 as usize, y1 as usize);
        // Smoothing reads the values before the dab.
        let before = (self.mode == BrushMode::Smooth).then(|| map.data.clone());
        let width = grid.width;
        for y in y0..y1 {
            for x in x0..x1 {
                let d = ((x as f32 * dx - centre[0]).powi(2) + (y as f32 * dy - centre[1]).powi(2))
                    .sqrt();
                let wgt = self.weight(d) * self.strength;
                if wgt <= 0.0 {
                    continue;
                }
                let i = y * width + x;
                let v = map.data[i];
                // Within a stroke: what this dab alone would make of the stroke's start.
                let b = base.map_or(v, |b| b[i]);
                let new = match self.mode {
                    BrushMode::Add => v.max(b + self.value * wgt),
                    BrushMode::Subtract => v.min(b - self.value * wgt),
                    BrushMode::Set => {
                        let t = b + (self.value - b) * wgt;
                        if (t - self.value).abs() < (v - self.value).abs() {
                            t
                        } else {
                            v
                        }
                    }
                    BrushMode::Smooth => {
                        let src = before.as_deref().unwrap_or(&map.data);
                        let (mut sum, mut n) = (0.0f32, 0.0f32);
                        for ny in y.saturating_sub(1)..(y + 2).min(grid.height) {
                            for nx in x.saturating_sub(1)..(x + 2).min(width) {
                                sum += src[ny * width + nx];
                                n += 1.0;
                            }
                        }
                        v + (sum / n - v) * wgt
                    }
                };
                map.data[i] = new.max(self.floor);
            }
        }
        Ok(Some([x0, y0, x1, y1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Grid;
    use rand::{Rng, SeedableRng};

    fn map(w: usize, h: usize, cell: f32, v: f32) -> ScalarMap {
        ScalarMap::filled(Grid::new(w, h, cell).unwrap(), v)
    }

    #[test]
    fn a_dab_changes_only_cells_within_its_radius() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..200 {
            let cell = rng.random_range(1.0..100.0f32);
            let mut m = map(rng.random_range(1..60), rng.random_range(1..60), cell, 0.0);
            for v in &mut m.data {
                *v = rng.random_range(-1.0..1.0);
            }
            let brush = Brush {
                mode: [
                    BrushMode::Add,
                    BrushMode::Subtract,
                    BrushMode::Smooth,
                    BrushMode::Set,
                ][rng.random_range(0..4)],
                radius: cell * rng.random_range(0.3..20.0f32),
                strength: rng.random_range(0.01..1.0),
                falloff: rng.random_range(0.0..1.0),
                value: rng.random_range(0.5..2.0),
                floor: f32::NEG_INFINITY,
            };
            let centre = [
                rng.random_range(-10.0..70.0) * cell,
                rng.random_range(-10.0..70.0) * cell,
            ];
            let before = m.clone();
            let rect = brush.dab(&mut m, centre).unwrap();
            let mut inside_changed = 0;
            for y in 0..m.grid.height {
                for x in 0..m.grid.width {
                    let i = y * m.grid.width + x;
                    let d = ((x as f32 * cell - centre[0]).powi(2)
                        + (y as f32 * cell - centre[1]).powi(2))
                    .sqrt();
                    if d >= brush.radius {
                        assert_eq!(m.data[i].to_bits(), before.data[i].to_bits(), "{brush:?}");
                    } else if m.data[i] != before.data[i] {
                        inside_changed += 1;
                        let [x0, y0, x1, y1] = rect.unwrap();
                        assert!((x0..x1).contains(&x) && (y0..y1).contains(&y));
                    }
                }
            }
            // Add, subtract and set change the cells a dab covers at full weight.
            let full = (0..m.data.len()).any(|i| {
                let (x, y) = (i % m.grid.width, i / m.grid.width);
                let d = ((x as f32 * cell - centre[0]).powi(2)
                    + (y as f32 * cell - centre[1]).powi(2))
                .sqrt();
                d <= brush.radius * (1.0 - brush.falloff) * 0.99
            });
            if full && brush.mode != BrushMode::Smooth {
                assert!(inside_changed > 0, "{brush:?} at {centre:?}");
            }
        }
    }

    #[test]
    fn set_at_full_strength_reaches_the_value_inside_the_hard_core() {
        let mut m = map(41, 41, 10.0, 3.0);
        let brush = Brush {
            mode: BrushMode::Set,
            radius: 100.0,
            strength: 1.0,
            falloff: 0.5,
            value: -2.0,
            ..Default::default()
        };
        brush.dab(&mut m, [200.0, 200.0]).unwrap();
        for y in 0..41 {
            for x in 0..41 {
                let d = (((x as f32 - 20.0) * 10.0).powi(2) + ((y as f32 - 20.0) * 10.0).powi(2))
                    .sqrt();
                let v = m.data[y * 41 + x];
                if d <= 50.0 {
                    assert_eq!(v, -2.0);
                } else if d < 100.0 {
                    assert!(v > -2.0 && v < 3.0, "{v} at {d}");
                } else {
                    assert_eq!(v, 3.0);
                }
            }
        }
    }

    #[test]
    fn add_then_subtract_restores_and_the_floor_holds() {
        let mut m = map(30, 20, 5.0, 0.25);
        let add = Brush {
            radius: 40.0,
            value: 0.5,
            ..Default::default()
        };
        add.dab(&mut m, [70.0, 50.0]).unwrap();
        assert!(m.data.iter().any(|&v| v > 0.25));
        let sub = Brush {
            mode: BrushMode::Subtract,
            ..add
        };
        sub.dab(&mut m, [70.0, 50.0]).unwrap();
        assert!(m.data.iter().all(|&v| (v - 0.25).abs() < 1e-6));
        let dig = Brush {
            mode: BrushMode::Subtract,
            value: 10.0,
            strength: 1.0,
            floor: 0.0,
            ..add
        };
        dig.dab(&mut m, [70.0, 50.0]).unwrap();
        assert!(m.data.iter().all(|&v| v >= 0.0));
        assert_eq!(m.data[10 * 30 + 14], 0.0);
    }

    #[test]
    fn a_stroke_adds_at_most_one_dab_however_dense() {
        let base = map(60, 20, 10.0, 1.0);
        let brush = Brush {
            radius: 50.0,
            strength: 0.5,
            value: 2.0,
            ..Default::default()
        };
        // One dab per cell along a line: every cell on it ends at 1 + 0.5 · 2 = 2.
        let mut m = base.clone();
        for x in 5..55 {
            brush
                .stroke_dab(&mut m, [x as f32 * 10.0, 100.0], &base.data)
                .unwrap();
        }
        for x in 10..50 {
            assert!(
                (m.data[10 * 60 + x] - 2.0).abs() < 1e-6,
                "{}",
                m.data[10 * 60 + x]
            );
        }
        assert!(m.data.iter().all(|&v| (1.0..=2.0 + 1e-6).contains(&v)));
        // Dabs that add up instead climb far higher.
        let mut free = base.clone();
        for x in 5..55 {
            brush.dab(&mut free, [x as f32 * 10.0, 100.0]).unwrap();
        }
        assert!(free.data[10 * 60 + 30] > 4.0);
        // Set within a stroke never overshoots towards or past its value.
        let set = Brush {
            mode: BrushMode::Set,
            value: 0.0,
            ..brush
        };
        let mut s = base.clone();
        for x in 5..55 {
            set.stroke_dab(&mut s, [x as f32 * 10.0, 100.0], &base.data)
                .unwrap();
        }
        assert!((s.data[10 * 60 + 30] - 0.5).abs() < 1e-6);
    }

    #[test]
    fn smoothing_keeps_a_constant_map_and_its_mean_flattens_a_spike() {
        let mut m = map(21, 21, 1.0, 2.0);
        let smooth = Brush {
            mode: BrushMode::Smooth,
            radius: 30.0,
            strength: 1.0,
            falloff: 0.0,
            ..Default::default()
        };
        smooth.dab(&mut m, [10.0, 10.0]).unwrap();
        assert!(m.data.iter().all(|&v| v == 2.0));
        m.data[10 * 21 + 10] = 11.0;
        smooth.dab(&mut m, [10.0, 10.0]).unwrap();
        // The spike's 9 excess is shared by its 3×3 block: 1 each.
        assert!((m.data[10 * 21 + 10] - 3.0).abs() < 1e-5);
        assert!((m.data[9 * 21 + 9] - 3.0).abs() < 1e-5);
        assert_eq!(m.data[8 * 21 + 8], 2.0);
    }

    #[test]
    fn bad_settings_name_their_field() {
        let mut m = map(4, 4, 1.0, 0.0);
        let e = Brush {
            radius: 0.0,
            ..Default::default()
        }
        .dab(&mut m, [0.0, 0.0])
        .unwrap_err();
        assert!(e.to_string().contains("radius"), "{e}");
        let e = Brush {
            strength: 2.0,
            ..Default::default()
        }
        .dab(&mut m, [0.0, 0.0])
        .unwrap_err();
        assert!(e.to_string().contains("strength"), "{e}");
        let e = Brush::default().dab(&mut m, [f32::NAN, 0.0]).unwrap_err();
        assert!(e.to_string().contains("centre"), "{e}");
        assert!(BrushMode::parse("blur").is_err());
        assert_eq!(BrushMode::parse("Smooth").unwrap(), BrushMode::Smooth);
    }
}
