//! The planet in a recipe: a region of a simulated [`Planet`] as a grid's uplift or
//! initial terrain ([`PlanetSource`]), and the whole planet as equirectangular maps for
//! the bake ([`equirect_maps`]).
//!
//! A region is an azimuthal equidistant projection centred on `(lat, lon)`, north up: the
//! grid's columns run east, its rows south, and `width_km` of the planet's surface spans
//! the grid's width (the height follows the grid's aspect). Distances and bearings from
//! the centre are exact, so a region is continuous across the antimeridian and may hold a
//! pole.

use crate::math;
use glam::DVec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_finite, check_range, OrogenError, Result};
use crate::field::{Grid, LabelMap, ScalarMap};
use crate::planet::Planet;

/// Salt mixed into the recipe seed for the planet's random choices.
pub const PLANET_SEED: u64 = 0x0000_706c_616e_6574; // "planet"

/// Which of the planet's values a [`PlanetSource`] takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlanetValue {
    /// Uplift rate from collisions and subductions, m/yr (the default).
    #[default]
    Uplift,
    /// Elevation above sea level, m.
    Elevation,
    /// Crust age, years.
    Age,
}

/// A part of the planet's surface: centre and width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanetRegion {
    /// Latitude of the centre, degrees, −90 ..= 90 (north positive).
    pub lat: f64,
    /// Longitude of the centre, degrees, −360 ..= 360 (east positive).
    pub lon: f64,
    /// Width of the region on the planet's surface, km (> 0, at most half the
    /// circumference). The grid's width spans it.
    pub width_km: f64,
}

/// A grid map taken from a region of the recipe's planet:
/// `Planet(region: (lat: 10.0, lon: 175.0, width_km: 400.0), value: Uplift, scale: 1.0)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanetSource {
    /// Where on the planet.
    pub region: PlanetRegion,
    /// Which value. Default `Uplift` for a scalar map (`uplift`), `Elevation` for the
    /// `terrain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<PlanetValue>,
    /// Factor on the value (e.g. to exaggerate uplift). Default 1.
    #[serde(default = "one")]
    pub scale: f32,
    /// When > 0, the region's centre moves to the point of greatest uplift within this
    /// many km of `(lat, lon)` (e.g. 20000 for the strongest collision on the planet).
    /// Default 0: the centre is `(lat, lon)`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seek_uplift_km: f64,
}

fn one() -> f32 {
    1.0
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl PlanetSource {
    /// Checks values; errors name `{field}.region.lat` and so on.
    pub fn validate(&self, field: &str) -> Result<()> {
        let r = &self.region;
        check_range(&format!("{field}.region.lat"), r.lat, -90.0, 90.0)?;
        check_range(&format!("{field}.region.lon"), r.lon, -360.0, 360.0)?;
        check_finite(&format!("{field}.region.width_km"), r.width_km)?;
        if r.width_km <= 0.0 {
            return Err(OrogenError::invalid(
                format!("{field}.region.width_km"),
                format!("must be > 0, got {}", r.width_km),
            ));
        }
        check_finite(&format!("{field}.scale"), self.scale as f64)?;
        check_range(
            &format!("{field}.seek_uplift_km"),
            self.seek_uplift_km,
            0.0,
            1e6,
        )?;
        Ok(())
    }

    /// [`PlanetSource::validate`], and the region fits on a planet of `radius_m`: its
    /// width at most half the circumference.
    pub fn validate_on(&self, field: &str, radius_m: f64) -> Result<()> {
        self.validate(field)?;
        let half = std::f64::consts::PI * radius_m / 1000.0;
        if self.region.width_km > half {
            return Err(OrogenError::invalid(
                format!("{field}.region.width_km"),
                format!(
                    "is {} km; a region spans at most half the planet's circumference ({half:.0} \
                     km)",
                    self.region.width_km
                ),
            ));
        }
        Ok(())
    }

    /// The region's centre as a unit vector, after `seek_uplift_km`.
    pub fn centre(&self, planet: &Planet) -> [f64; 3] {
        let c = Planet::direction(self.region.lat, self.region.lon);
        if self.seek_uplift_km <= 0.0 {
            return c;
        }
        let radius_km = planet.params().radius_m / 1000.0;
        let reach = (self.seek_uplift_km / radius_km).min(std::f64::consts::PI);
        let cos_reach = math::cos(reach);
        // Greatest uplift, then lowest index: the same point on any thread count.
        let mut best: Option<(f32, usize)> = None;
        for (i, (p, &u)) in planet.positions().iter().zip(planet.uplifts()).enumerate() {
            if DVec3::from(*p).dot(DVec3::from(c)) + 1e-12 < cos_reach || !u.is_finite() {
                continue;
            }
            if best.is_none_or(|(b, _)| u > b) {
                best = Some((u, i));
            }
        }
        match best {
            Some((_, i)) => DVec3::from(planet.positions()[i]).normalize().to_array(),
            None => c,
        }
    }

    /// The region over `grid`: each cell's value (`value`, else `default`) at its place on
    /// the planet, times `scale`. The planet's values are linear over its triangles, whose
    /// creases would print into an eroded terrain, so the map is smoothed with a Gaussian
    /// (three box passes) of σ half the planet's point spacing, sampled with a margin so
    /// the edges are smoothed like the middle.
    pub fn sample(&self, planet: &Planet, grid: Grid, default: PlanetValue) -> Result<ScalarMap> {
        self.validate_on("source.Planet", planet.params().radius_m)?;
        let centre = self.centre(planet);
        let (east, north) = tangent_frame(centre);
        let (w, h) = (grid.width, grid.height);
        let radius_m = planet.params().radius_m;
        // Metres on the planet per cell: the grid's width spans width_km.
        let step = self.region.width_km * 1000.0 / (w.max(2) - 1) as f64;
        let step_y = step * grid.dy() as f64 / grid.dx() as f64;
        let spacing = (4.0 * std::f64::consts::PI / planet.len().max(1) as f64).sqrt() * radius_m;
        // Box radius per axis for three passes giving σ = spacing / 2, and the margin
        // they reach into (at most half the grid's side).
        let radius = |cell: f64, side: usize| -> (usize, usize) {
            let sigma = 0.5 * spacing / cell;
            let r = (((4.0 * sigma * sigma + 1.0).sqrt() - 1.0) / 2.0).round() as usize;
            let pad = (3 * r).min(side / 2);
            (pad / 3, pad)
        };
        let (rx, px) = radius(step, w);
        let (ry, py) = radius(step_y, h);
        let (pw, ph) = (w + 2 * px, h + 2 * py);
        let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
        let value = self.value.unwrap_or(default);
        let mut data = vec![0f64; pw * ph];
        data.par_chunks_mut(pw.max(1))
            .enumerate()
            .for_each(|(y, row)| {
                let n = -((y as f64 - py as f64) - cy) * step_y;
                for (x, v) in row.iter_mut().enumerate() {
                    let e = ((x as f64 - px as f64) - cx) * step;
                    let s = planet.sample(azimuthal(centre, east, north, e, n, radius_m));
                    *v = match value {
                        PlanetValue::Uplift => s.uplift as f64,
                        PlanetValue::Elevation => s.elevation as f64,
                        PlanetValue::Age => s.age as f64,
                    };
                }
            });
        for _ in 0..3 {
            box_rows(&mut data, pw, rx);
            box_columns(&mut data, pw, ph, ry);
        }
        let scale = self.scale as f64;
        let mut out = vec![0f32; w * h];
        out.par_chunks_mut(w.max(1))
            .enumerate()
            .for_each(|(y, row)| {
                let src = &data[(y + py) * pw + px..][..w];
                for (o, &v) in row.iter_mut().zip(src) {
                    *o = (v * scale) as f32;
                }
            });
        Ok(ScalarMap { grid, data: out })
    }
}

/// Box mean of width 2r + 1 along each row, edges clamped.
fn box_rows(data: &mut [f64], w: usize, r: usize) {
    if r == 0 || w == 0 {
        return;
    }
    data.par_chunks_mut(w).for_each(|row| {
        let src = row.to_vec();
        box_line(&src, row, r);
    });
}

/// Box mean of width 2r + 1 down each column, edges clamped.
fn box_columns(data: &mut [f64], w: usize, h: usize, r: usize) {
    if r == 0 || w == 0 {
        return;
    }
    // Transpose in, blur rows, transpose out: simple and the same on any thread count.
    let mut t = vec![0f64; w * h];
    t.par_chunks_mut(h).enumerate().for_each(|(x, col)| {
        for (y, v) in col.iter_mut().enumerate() {
            *v = data[y * w + x];
        }
    });
    box_rows(&mut t, h, r);
    data.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, v) in row.iter_mut().enumerate() {
            *v = t[x * h + y];
        }
    });
}

/// `out[i]` = mean of `src[i - r ..= i + r]`, indices clamped to the line.
fn box_line(src: &[f64], out: &mut [f64], r: usize) {
    let n = src.len();
    let at = |i: isize| src[i.clamp(0, n as isize - 1) as usize];
    let mut sum: f64 = (-(r as isize)..=r as isize).map(at).sum();
    let width = (2 * r + 1) as f64;
    for (i, o) in out.iter_mut().enumerate() {
        *o = sum / width;
        let i = i as isize;
        sum += at(i + r as isize + 1) - at(i - r as isize);
    }
}

/// East and north unit vectors at `c` (at a pole, east is +y and north points away from
/// +x, so a polar region is still well defined).
fn tangent_frame(c: [f64; 3]) -> ([f64; 3], [f64; 3]) {
    let c = DVec3::from(c);
    let mut east = DVec3::Z.cross(c);
    if east.length_squared() < 1e-24 {
        east = DVec3::Y;
    }
    let east = east.normalize();
    let north = c.cross(east).normalize();
    (east.to_array(), north.to_array())
}

/// The direction `e` metres east and `n` metres north of `c` along the surface
/// (azimuthal equidistant projection).
fn azimuthal(c: [f64; 3], east: [f64; 3], north: [f64; 3], e: f64, n: f64, r: f64) -> [f64; 3] {
    let d = (e * e + n * n).sqrt();
    if d == 0.0 {
        return c;
    }
    let (s, co) = math::sin_cos(d / r);
    let along = DVec3::from(east) * (e / d) + DVec3::from(north) * (n / d);
    (DVec3::from(c) * co + along * s).to_array()
}

/// The whole planet in equirectangular maps of `width` × `width / 2` pixels (pixel
/// centres at latitude 90 − (y + ½)·180/H and longitude −180 + (x + ½)·360/W).
pub struct EquirectMaps {
    /// Elevation, m.
    pub height: ScalarMap,
    /// Crust age, years.
    pub age: ScalarMap,
    /// Uplift rate, m/yr.
    pub uplift: ScalarMap,
    /// Plate index per pixel.
    pub plates: LabelMap,
}

/// Width of the baked equirectangular maps for a planet of `points` points: the power of
/// two nearest above √(8·points) (about two pixels per point at the equator), 256–8192;
/// 1024 × 512 for 60,000 points.
pub fn map_width(points: usize) -> usize {
    ((8.0 * points as f64).sqrt().ceil() as usize)
        .next_power_of_two()
        .clamp(256, 8192)
}

/// Samples `planet` into [`EquirectMaps`]; the maps' cell size is the equator's metres
/// per pixel.
pub fn equirect_maps(planet: &Planet, width: usize) -> Result<EquirectMaps> {
    let width = width.max(2);
    let height = width / 2;
    let cell = (2.0 * std::f64::consts::PI * planet.params().radius_m / width as f64) as f32;
    let grid = Grid::new(width, height, cell)?;
    let samples: Vec<_> = (0..width * height)
        .into_par_iter()
        .map(|i| {
            let (x, y) = (i % width, i / width);
            let lat = 90.0 - (y as f64 + 0.5) * 180.0 / height as f64;
            let lon = -180.0 + (x as f64 + 0.5) * 360.0 / width as f64;
            planet.sample(Planet::direction(lat, lon))
        })
        .collect();
    let pick = |f: fn(&crate::planet::PlanetSample) -> f32| ScalarMap {
        grid,
        data: samples.iter().map(f).collect(),
    };
    Ok(EquirectMaps {
        height: pick(|s| s.elevation),
        age: pick(|s| s.age),
        uplift: pick(|s| s.uplift),
        plates: LabelMap {
            grid,
            data: samples.iter().map(|s| s.plate).collect(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
        DVec3::from(a).dot(DVec3::from(b))
    }

    #[test]
    fn azimuthal_keeps_distance_and_bearing() {
        let r = 6.371e6;
        for &(lat, lon) in &[(0.0, 0.0), (45.0, 179.9), (-60.0, -120.0), (90.0, 0.0)] {
            let c = Planet::direction(lat, lon);
            let (e, n) = tangent_frame(c);
            assert!(dot(e, c).abs() < 1e-12 && dot(n, c).abs() < 1e-12 && dot(e, n).abs() < 1e-12);
            for &(de, dn) in &[(1e5, 0.0), (0.0, -3e5), (2e5, 2e5)] {
                let p = azimuthal(c, e, n, de, dn, r);
                let d = math::acos(dot(p, c).clamp(-1.0, 1.0)) * r;
                assert!((d - math::hypot(de, dn)).abs() < 1e-3, "distance {d}");
                assert!((dot(p, p) - 1.0).abs() < 1e-12);
            }
            // North of a non-polar centre is higher latitude.
            if lat < 89.0 {
                let p = azimuthal(c, e, n, 0.0, 1e5, r);
                assert!(p[2] > c[2]);
            }
        }
    }

    #[test]
    fn box_passes_keep_constants_and_lines() {
        let (w, h) = (40, 30);
        let mut data: Vec<f64> = (0..w * h).map(|i| 3.0 + 0.5 * (i % w) as f64).collect();
        for _ in 0..3 {
            box_rows(&mut data, w, 4);
            box_columns(&mut data, w, h, 4);
        }
        // A ramp along x is kept away from the clamped ends, and columns are untouched.
        for y in 0..h {
            for x in 12..w - 12 {
                let want = 3.0 + 0.5 * x as f64;
                assert!((data[y * w + x] - want).abs() < 1e-9, "{x},{y}");
            }
        }
        let mut one = vec![7.5; 17];
        let src = one.clone();
        box_line(&src, &mut one, 20);
        assert!(one.iter().all(|&v| (v - 7.5).abs() < 1e-12));
    }

    #[test]
    fn bad_regions_name_their_field() {
        let src = |lat: f64, lon: f64, width_km: f64| PlanetSource {
            region: PlanetRegion { lat, lon, width_km },
            value: None,
            scale: 1.0,
            seek_uplift_km: 0.0,
        };
        let field = |s: PlanetSource| match s.validate_on("uplift.Planet", 6.371e6) {
            Err(OrogenError::InvalidParameter { field, .. }) => field,
            other => panic!("expected an error, got {other:?}"),
        };
        assert_eq!(field(src(95.0, 0.0, 100.0)), "uplift.Planet.region.lat");
        assert_eq!(field(src(-90.5, 0.0, 100.0)), "uplift.Planet.region.lat");
        assert_eq!(field(src(0.0, f64::NAN, 100.0)), "uplift.Planet.region.lon");
        assert_eq!(field(src(0.0, 0.0, 0.0)), "uplift.Planet.region.width_km");
        assert_eq!(
            field(src(0.0, 0.0, 30000.0)),
            "uplift.Planet.region.width_km"
        );
        assert!(src(90.0, 0.0, 500.0).validate_on("u", 6.371e6).is_ok());
    }
}
