//! Godot's `FastNoiseLite` resource, reproduced bit for bit: the `FastNoiseLite` noise basis.
//!
//! Godot 4.6 (`modules/noise/fastnoise_lite.cpp`) wraps FastNoise Lite 1.1.0 (Jordan Peck,
//! MIT; `thirdparty/misc/FastNoiseLite.h`). `get_noise_2d(x, y)` adds `offset.x`/`offset.y`
//! in `real_t` (f32 in Godot's standard builds), domain-warps the point with a second
//! FastNoise Lite object if `domain_warp_enabled`, and returns `GetNoise(x, y)` evaluated in
//! f32. The `fastnoise-lite` crate is the library's official Rust port; built for f32
//! coordinates (not its `f64` feature) it gives the same bits as Godot 4.6.3 for every noise
//! type, fractal type and domain-warp setting (checked by `tests/godot/run.sh`, see
//! `godot_project/tests/run_tests.gd`, `test_fastnoiselite_matches_godot`).
//!
//! Cell `(x, y)` (column, row) reads Godot's `get_noise_2d(x, y)` at the pixel indices, as
//! Godot's `Noise.get_image(width, height)` does, or at metres `(x·dx, y·dy)` with
//! `coordinates: Metres`; the height is `offset + amplitude · value` (see
//! [`NoiseParams`](crate::generators::noise::NoiseParams)).
//! The recipe seed is not used: Godot's `seed` is.
//!
//! The 2D fractal loops step the FastNoise Lite seed with `seed + 1` per octave, which the C++
//! wraps at `i32::MAX`; the workspace turns the crate's overflow checks off in debug builds so
//! that Godot's full seed range works there too (`Cargo.toml`, `[profile.dev.package]`).

use crate::math;
use std::sync::atomic::{AtomicBool, Ordering};

use fastnoise_lite as fnl;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_range, OrogenError, Result};
use crate::field::{Grid, Rect};
use crate::generators::faults::{FaultSet, Faults};

/// Largest octave count accepted (Godot's inspector offers 1..=10).
pub const MAX_FNL_OCTAVES: i32 = 32;
/// Largest noise-space coordinate accepted: FastNoise Lite floors coordinates into `i32`.
const MAX_FNL_COORD: f64 = (1u64 << 30) as f64;

/// `FastNoiseLite.noise_type` (Godot's `TYPE_*` constants, inspector names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FnlNoiseType {
    /// `TYPE_SIMPLEX`: OpenSimplex2.
    Simplex,
    /// `TYPE_SIMPLEX_SMOOTH`: OpenSimplex2S (Godot's default).
    #[default]
    SimplexSmooth,
    /// `TYPE_CELLULAR`: Worley noise, see the `cellular_*` fields.
    Cellular,
    /// `TYPE_PERLIN`.
    Perlin,
    /// `TYPE_VALUE_CUBIC`.
    ValueCubic,
    /// `TYPE_VALUE`.
    Value,
}

/// `FastNoiseLite.fractal_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FnlFractalType {
    /// `FRACTAL_NONE`: one octave.
    None,
    /// `FRACTAL_FBM` (Godot's default).
    #[default]
    Fbm,
    /// `FRACTAL_RIDGED`.
    Ridged,
    /// `FRACTAL_PING_PONG`.
    PingPong,
}

/// `FastNoiseLite.cellular_distance_function`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FnlCellularDistance {
    /// `DISTANCE_EUCLIDEAN` (Godot's default).
    #[default]
    Euclidean,
    /// `DISTANCE_EUCLIDEAN_SQUARED`.
    EuclideanSquared,
    /// `DISTANCE_MANHATTAN`.
    Manhattan,
    /// `DISTANCE_HYBRID`.
    Hybrid,
}

/// `FastNoiseLite.cellular_return_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FnlCellularReturn {
    /// `RETURN_CELL_VALUE`.
    CellValue,
    /// `RETURN_DISTANCE` (Godot's default).
    #[default]
    Distance,
    /// `RETURN_DISTANCE2`.
    Distance2,
    /// `RETURN_DISTANCE2_ADD`.
    Distance2Add,
    /// `RETURN_DISTANCE2_SUB`.
    Distance2Sub,
    /// `RETURN_DISTANCE2_MUL`.
    Distance2Mul,
    /// `RETURN_DISTANCE2_DIV`.
    Distance2Div,
}

/// `FastNoiseLite.domain_warp_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FnlDomainWarpType {
    /// `DOMAIN_WARP_SIMPLEX` (Godot's default).
    #[default]
    Simplex,
    /// `DOMAIN_WARP_SIMPLEX_REDUCED`.
    SimplexReduced,
    /// `DOMAIN_WARP_BASIC_GRID`.
    BasicGrid,
}

/// `FastNoiseLite.domain_warp_fractal_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FnlDomainWarpFractal {
    /// `DOMAIN_WARP_FRACTAL_NONE`.
    None,
    /// `DOMAIN_WARP_FRACTAL_PROGRESSIVE` (Godot's default).
    #[default]
    Progressive,
    /// `DOMAIN_WARP_FRACTAL_INDEPENDENT`.
    Independent,
}

/// Where cell `(x, y)` (column, row) samples Godot's `get_noise_2d`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum FnlCoordinates {
    /// `get_noise_2d(x, y)` at the cell's indices, as `get_image(width, height)` samples its
    /// pixels: the same picture at any `cell_size`. Default.
    #[default]
    Pixels,
    /// `get_noise_2d(x·dx, y·dy)` in metres (rounded to f32 as Godot's `real_t`), as a game
    /// sampling world positions in metres would: `frequency` is then in cycles per metre.
    Metres,
}

/// A Godot `FastNoiseLite` resource, field for field: copy the values from the inspector (or
/// the `.tres`) and Orogen reads the same noise. Every field defaults to Godot 4.6's default.
/// RON: `basis: FastNoiseLite(noise_type: Perlin, seed: 7, frequency: 0.02, fractal_octaves: 6)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FastNoiseLiteParams {
    /// `Simplex`, `SimplexSmooth`, `Cellular`, `Perlin`, `ValueCubic` or `Value`.
    /// Default `SimplexSmooth`.
    pub noise_type: FnlNoiseType,
    /// Godot's `seed` (a 32-bit int; the recipe seed is not used). Default 0.
    pub seed: i32,
    /// Cycles per pixel (per metre with `coordinates: Metres`), within ±1e3. Default 0.01.
    pub frequency: f32,
    /// Godot's `offset` (x, y, z), added to the sample point in pixels (metres with
    /// `coordinates: Metres`); z does not enter 2D noise. Each within ±1e9. Default (0, 0, 0).
    pub offset: (f32, f32, f32),
    /// `None`, `Fbm`, `Ridged` or `PingPong`. Default `Fbm`.
    pub fractal_type: FnlFractalType,
    /// Octaves, 1..=32 (Godot's inspector: 1..=10). Default 5.
    pub fractal_octaves: i32,
    /// Frequency ratio between octaves, within ±16. Default 2.
    pub fractal_lacunarity: f32,
    /// Amplitude ratio between octaves, within ±16. Default 0.5.
    pub fractal_gain: f32,
    /// Weight of each octave by the one before, in [0, 1] (keeps values in [−1, 1]).
    /// Default 0.
    pub fractal_weighted_strength: f32,
    /// Strength of `PingPong`, within ±1e3. Default 2.
    pub fractal_ping_pong_strength: f32,
    /// `Euclidean`, `EuclideanSquared`, `Manhattan` or `Hybrid`. Default `Euclidean`.
    pub cellular_distance_function: FnlCellularDistance,
    /// `CellValue`, `Distance`, `Distance2`, `Distance2Add`, `Distance2Sub`, `Distance2Mul` or
    /// `Distance2Div`. Default `Distance`.
    pub cellular_return_type: FnlCellularReturn,
    /// How far a cell's point may move from its grid position, in cells, within ±16 (above 1
    /// shows artefacts). Default 1.
    pub cellular_jitter: f32,
    /// Domain warp by a second FastNoise Lite (Godot's `domain_warp_*`). Default false.
    pub domain_warp_enabled: bool,
    /// `Simplex`, `SimplexReduced` or `BasicGrid`. Default `Simplex`.
    pub domain_warp_type: FnlDomainWarpType,
    /// Largest displacement, pixels (metres with `coordinates: Metres`), within ±1e6.
    /// Default 30.
    pub domain_warp_amplitude: f32,
    /// Frequency of the warp noise, within ±1e3. Default 0.05.
    pub domain_warp_frequency: f32,
    /// `None`, `Progressive` or `Independent`. Default `Progressive`.
    pub domain_warp_fractal_type: FnlDomainWarpFractal,
    /// Warp octaves, 1..=32. Default 5.
    pub domain_warp_fractal_octaves: i32,
    /// Warp frequency ratio between octaves, within ±16. Default 6.
    pub domain_warp_fractal_lacunarity: f32,
    /// Warp amplitude ratio between octaves, within ±16. Default 0.5.
    pub domain_warp_fractal_gain: f32,
    /// Sample at the cells' indices (`Pixels`, as `get_image`) or in metres (`Metres`).
    /// Default `Pixels`.
    pub coordinates: FnlCoordinates,
}

impl Default for FastNoiseLiteParams {
    /// Godot 4.6's defaults (`modules/noise/fastnoise_lite.h`).
    fn default() -> Self {
        FastNoiseLiteParams {
            noise_type: FnlNoiseType::SimplexSmooth,
            seed: 0,
            frequency: 0.01,
            offset: (0.0, 0.0, 0.0),
            fractal_type: FnlFractalType::Fbm,
            fractal_octaves: 5,
            fractal_lacunarity: 2.0,
            fractal_gain: 0.5,
            fractal_weighted_strength: 0.0,
            fractal_ping_pong_strength: 2.0,
            cellular_distance_function: FnlCellularDistance::Euclidean,
            cellular_return_type: FnlCellularReturn::Distance,
            cellular_jitter: 1.0,
            domain_warp_enabled: false,
            domain_warp_type: FnlDomainWarpType::Simplex,
            domain_warp_amplitude: 30.0,
            domain_warp_frequency: 0.05,
            domain_warp_fractal_type: FnlDomainWarpFractal::Progressive,
            domain_warp_fractal_octaves: 5,
            domain_warp_fractal_lacunarity: 6.0,
            domain_warp_fractal_gain: 0.5,
            coordinates: FnlCoordinates::Pixels,
        }
    }
}

fn check_octaves(field: &str, value: i32) -> Result<()> {
    if !(1..=MAX_FNL_OCTAVES).contains(&value) {
        return Err(OrogenError::invalid(
            field,
            format!("must be between 1 and {MAX_FNL_OCTAVES}, got {value}"),
        ));
    }
    Ok(())
}

impl FastNoiseLiteParams {
    /// Checks ranges; `field` prefixes error names (`terrain.Noise.basis.FastNoiseLite`).
    pub fn validate(&self, field: &str) -> Result<()> {
        let f = |name: &str| format!("{field}.{name}");
        check_range(&f("frequency"), self.frequency as f64, -1e3, 1e3)?;
        for (name, v) in [
            ("offset.0", self.offset.0),
            ("offset.1", self.offset.1),
            ("offset.2", self.offset.2),
        ] {
            check_range(&f(name), v as f64, -1e9, 1e9)?;
        }
        check_octaves(&f("fractal_octaves"), self.fractal_octaves)?;
        check_range(
            &f("fractal_lacunarity"),
            self.fractal_lacunarity as f64,
            -16.0,
            16.0,
        )?;
        check_range(&f("fractal_gain"), self.fractal_gain as f64, -16.0, 16.0)?;
        check_range(
            &f("fractal_weighted_strength"),
            self.fractal_weighted_strength as f64,
            0.0,
            1.0,
        )?;
        check_range(
            &f("fractal_ping_pong_strength"),
            self.fractal_ping_pong_strength as f64,
            -1e3,
            1e3,
        )?;
        check_range(
            &f("cellular_jitter"),
            self.cellular_jitter as f64,
            -16.0,
            16.0,
        )?;
        check_range(
            &f("domain_warp_amplitude"),
            self.domain_warp_amplitude as f64,
            -1e6,
            1e6,
        )?;
        check_range(
            &f("domain_warp_frequency"),
            self.domain_warp_frequency as f64,
            -1e3,
            1e3,
        )?;
        check_octaves(
            &f("domain_warp_fractal_octaves"),
            self.domain_warp_fractal_octaves,
        )?;
        check_range(
            &f("domain_warp_fractal_lacunarity"),
            self.domain_warp_fractal_lacunarity as f64,
            -16.0,
            16.0,
        )?;
        check_range(
            &f("domain_warp_fractal_gain"),
            self.domain_warp_fractal_gain as f64,
            -16.0,
            16.0,
        )
    }

    /// The noise object `get_noise_2d` evaluates (Godot's `_noise`).
    fn noise(&self) -> fnl::FastNoiseLite {
        let mut n = fnl::FastNoiseLite::with_seed(self.seed);
        n.set_noise_type(Some(match self.noise_type {
            FnlNoiseType::Simplex => fnl::NoiseType::OpenSimplex2,
            FnlNoiseType::SimplexSmooth => fnl::NoiseType::OpenSimplex2S,
            FnlNoiseType::Cellular => fnl::NoiseType::Cellular,
            FnlNoiseType::Perlin => fnl::NoiseType::Perlin,
            FnlNoiseType::ValueCubic => fnl::NoiseType::ValueCubic,
            FnlNoiseType::Value => fnl::NoiseType::Value,
        }));
        n.set_frequency(Some(self.frequency));
        n.set_fractal_type(Some(match self.fractal_type {
            FnlFractalType::None => fnl::FractalType::None,
            FnlFractalType::Fbm => fnl::FractalType::FBm,
            FnlFractalType::Ridged => fnl::FractalType::Ridged,
            FnlFractalType::PingPong => fnl::FractalType::PingPong,
        }));
        n.set_fractal_octaves(Some(self.fractal_octaves));
        n.set_fractal_lacunarity(Some(self.fractal_lacunarity));
        n.set_fractal_gain(Some(self.fractal_gain));
        n.set_fractal_weighted_strength(Some(self.fractal_weighted_strength));
        n.set_fractal_ping_pong_strength(Some(self.fractal_ping_pong_strength));
        n.set_cellular_distance_function(Some(match self.cellular_distance_function {
            FnlCellularDistance::Euclidean => fnl::CellularDistanceFunction::Euclidean,
            FnlCellularDistance::EuclideanSquared => fnl::CellularDistanceFunction::EuclideanSq,
            FnlCellularDistance::Manhattan => fnl::CellularDistanceFunction::Manhattan,
            FnlCellularDistance::Hybrid => fnl::CellularDistanceFunction::Hybrid,
        }));
        n.set_cellular_return_type(Some(match self.cellular_return_type {
            FnlCellularReturn::CellValue => fnl::CellularReturnType::CellValue,
            FnlCellularReturn::Distance => fnl::CellularReturnType::Distance,
            FnlCellularReturn::Distance2 => fnl::CellularReturnType::Distance2,
            FnlCellularReturn::Distance2Add => fnl::CellularReturnType::Distance2Add,
            FnlCellularReturn::Distance2Sub => fnl::CellularReturnType::Distance2Sub,
            FnlCellularReturn::Distance2Mul => fnl::CellularReturnType::Distance2Mul,
            FnlCellularReturn::Distance2Div => fnl::CellularReturnType::Distance2Div,
        }));
        n.set_cellular_jitter(Some(self.cellular_jitter));
        n
    }

    /// The domain-warp object (Godot's `_domain_warp_noise`), if warping is on.
    fn warp(&self) -> Option<fnl::FastNoiseLite> {
        if !self.domain_warp_enabled {
            return None;
        }
        let mut w = fnl::FastNoiseLite::with_seed(self.seed);
        w.set_domain_warp_type(Some(match self.domain_warp_type {
            FnlDomainWarpType::Simplex => fnl::DomainWarpType::OpenSimplex2,
            FnlDomainWarpType::SimplexReduced => fnl::DomainWarpType::OpenSimplex2Reduced,
            FnlDomainWarpType::BasicGrid => fnl::DomainWarpType::BasicGrid,
        }));
        w.set_domain_warp_amp(Some(self.domain_warp_amplitude));
        w.set_frequency(Some(self.domain_warp_frequency));
        w.set_fractal_type(Some(match self.domain_warp_fractal_type {
            FnlDomainWarpFractal::None => fnl::FractalType::None,
            FnlDomainWarpFractal::Progressive => fnl::FractalType::DomainWarpProgressive,
            FnlDomainWarpFractal::Independent => fnl::FractalType::DomainWarpIndependent,
        }));
        w.set_fractal_octaves(Some(self.domain_warp_fractal_octaves));
        w.set_fractal_lacunarity(Some(self.domain_warp_fractal_lacunarity));
        w.set_fractal_gain(Some(self.domain_warp_fractal_gain));
        Some(w)
    }

    /// A bound on the noise-space coordinates reached when sampling points within `reach`
    /// (pixels or metres) of the origin: FastNoise Lite floors them into `i32`.
    fn max_coord(&self, reach: f64) -> f64 {
        // The OpenSimplex skew scales coordinates by up to √3; lacunarity grows them per octave.
        let scale = |freq: f32, lac: f32, octaves: i32| {
            (freq as f64).abs() * (lac as f64).abs().max(1.0).powi(octaves - 1) * 3f64.sqrt()
        };
        let off = (self.offset.0 as f64)
            .abs()
            .max((self.offset.1 as f64).abs());
        let mut p = reach + off;
        let mut worst: f64 = 0.0;
        if self.domain_warp_enabled {
            worst = p * scale(
                self.domain_warp_frequency,
                self.domain_warp_fractal_lacunarity,
                self.domain_warp_fractal_octaves,
            );
            // Each warp octave moves the point by at most a few times the amplitude.
            let gain = (self.domain_warp_fractal_gain as f64).abs().max(1.0);
            let octaves = self.domain_warp_fractal_octaves as f64;
            p += 4.0
                * (self.domain_warp_amplitude as f64).abs()
                * octaves
                * math::powf(gain, octaves);
        }
        worst.max(
            p * scale(
                self.frequency,
                self.fractal_lacunarity,
                self.fractal_octaves,
            ),
        )
    }
}

/// The resource's `FastNoiseLite` objects as `get_noise_2d` uses them: the noise, the warp,
/// the offset.
struct Resource {
    noise: fnl::FastNoiseLite,
    warp: Option<fnl::FastNoiseLite>,
    offset: (f32, f32),
}

impl Resource {
    fn new(p: &FastNoiseLiteParams) -> Resource {
        Resource {
            noise: p.noise(),
            warp: p.warp(),
            offset: (p.offset.0, p.offset.1),
        }
    }

    /// `FastNoiseLite::get_noise_2d` (fastnoise_lite.cpp): the offset added in `real_t`
    /// (f32), the domain warp if enabled, then `GetNoise(x, y)`.
    #[inline]
    fn get_noise_2d(&self, x: f32, y: f32) -> f32 {
        let (mut x, mut y) = (x + self.offset.0, y + self.offset.1);
        if let Some(w) = &self.warp {
            (x, y) = w.domain_warp_2d(x, y);
        }
        self.noise.get_noise_2d(x, y)
    }
}

impl FastNoiseLiteParams {
    /// Godot's `get_noise_2d(x, y)` for this resource, bit for bit (builds the noise on every
    /// call: for spot checks; grids go through the `Noise` terrain).
    pub fn get_noise_2d(&self, x: f32, y: f32) -> f32 {
        Resource::new(self).get_noise_2d(x, y)
    }
}

/// The error for a `Noise` setting (`{field}.{name}`) that would reshape Godot's field, which
/// the FastNoiseLite basis reads as it is; `instead` says what to set in its place.
pub(crate) fn not_applicable(field: &str, name: &str, instead: &str) -> OrogenError {
    OrogenError::invalid(
        format!("{field}.{name}"),
        format!("does not apply to the FastNoiseLite basis, which reads Godot's noise as it is: {instead}"),
    )
}

/// Heights `offset + amplitude · get_noise_2d(...)` over the cells of `window` of `grid`
/// (row-major over the window), each at its whole-map position, metres, plus `faults`
/// (drawn from the recipe `seed` over the whole map, in metres); `fnl` must be valid. A
/// tiled run's tile (issue #41) gets the whole map's values bit for bit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn generate_window(
    fnl: &FastNoiseLiteParams,
    amplitude: f64,
    offset: f64,
    faults: Option<&Faults>,
    grid: Grid,
    window: Rect,
    seed: u64,
    cancel: &AtomicBool,
) -> Result<Vec<f32>> {
    let field = "noise.basis.FastNoiseLite";
    let (sx, sy) = match fnl.coordinates {
        FnlCoordinates::Pixels => (1.0, 1.0),
        FnlCoordinates::Metres => (grid.dx() as f64, grid.dy() as f64),
    };
    let reach = (grid.width as f64 * sx).max(grid.height as f64 * sy);
    let coord = fnl.max_coord(reach);
    if coord.is_nan() || coord > MAX_FNL_COORD {
        return Err(OrogenError::invalid(
            format!("{field}.frequency"),
            format!(
                "noise coordinates reach {coord:.3e} over this grid (limit {MAX_FNL_COORD:.0e}): \
                 lower frequency, fractal_lacunarity, fractal_octaves or the domain warp"
            ),
        ));
    }
    let resource = Resource::new(fnl);
    let (csx, csy) = (grid.dx() as f64, grid.dy() as f64);
    let faults =
        faults.map(|f| FaultSet::draw(f, grid.width as f64 * csx, grid.height as f64 * csy, seed));
    let (amp, off) = (amplitude, offset);
    let mut data = crate::state::buffer(window.len(), 0.0f32, "noise height")?;
    data.par_chunks_mut(window.w.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            let y = window.y0 + y;
            let py = (y as f64 * sy) as f32;
            for (x, out) in (window.x0..).zip(row.iter_mut()) {
                let px = (x as f64 * sx) as f32;
                let mut h = off + amp * resource.get_noise_2d(px, py) as f64;
                if let Some(f) = &faults {
                    h += f.displacement(x as f64 * csx, y as f64 * csy);
                }
                *out = h as f32;
            }
        });
    if cancel.load(Ordering::Relaxed) {
        return Err(OrogenError::Cancelled);
    }
    if let Some(bad) = data.iter().find(|h| !h.is_finite()) {
        return Err(OrogenError::invalid(
            field,
            format!("gives a height of {bad} m: lower amplitude or cellular_jitter"),
        ));
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::noise::{generate, NoiseBasis, NoiseKind, NoiseParams};

    const POINTS: [(f32, f32); 6] = [
        (0.0, 0.0),
        (1.0, 2.0),
        (17.0, -5.0),
        (-123.25, 45.5),
        (1000.0, 777.0),
        (3.1, 2.7),
    ];

    /// The six resources of the reference script below, in its order.
    fn references() -> [FastNoiseLiteParams; 6] {
        let d = FastNoiseLiteParams::default();
        [
            d,
            FastNoiseLiteParams {
                noise_type: FnlNoiseType::Perlin,
                seed: 1337,
                frequency: 0.0123,
                fractal_type: FnlFractalType::Ridged,
                fractal_octaves: 6,
                fractal_lacunarity: 2.1,
                fractal_gain: 0.45,
                fractal_weighted_strength: 0.3,
                ..d
            },
            FastNoiseLiteParams {
                noise_type: FnlNoiseType::Cellular,
                seed: -7,
                frequency: 0.0123,
                fractal_octaves: 3,
                offset: (12.5, -3.25, 0.0),
                cellular_distance_function: FnlCellularDistance::Manhattan,
                cellular_return_type: FnlCellularReturn::Distance2Div,
                cellular_jitter: 0.8,
                ..d
            },
            FastNoiseLiteParams {
                noise_type: FnlNoiseType::ValueCubic,
                seed: i32::MAX,
                fractal_type: FnlFractalType::PingPong,
                fractal_octaves: 6,
                fractal_ping_pong_strength: 1.5,
                ..d
            },
            FastNoiseLiteParams {
                noise_type: FnlNoiseType::Simplex,
                seed: 99,
                domain_warp_enabled: true,
                domain_warp_type: FnlDomainWarpType::BasicGrid,
                domain_warp_fractal_type: FnlDomainWarpFractal::Independent,
                domain_warp_amplitude: 25.0,
                domain_warp_frequency: 0.037,
                domain_warp_fractal_octaves: 4,
                domain_warp_fractal_lacunarity: 3.5,
                domain_warp_fractal_gain: 0.6,
                ..d
            },
            FastNoiseLiteParams {
                noise_type: FnlNoiseType::Value,
                fractal_type: FnlFractalType::None,
                seed: 5,
                ..d
            },
        ]
    }

    /// The bits of Godot's `get_noise_2d` at [`POINTS`] for each of [`references`], printed
    /// once by Godot 4.6.3 (Debian's 4.6.3+ds-3 package, `scripts/godot --headless -s ref.gd`)
    /// running this script (the resources `b`..`f` set as in [`references`]):
    ///
    /// ```gdscript
    /// var pts: Array[Vector2] = [Vector2(0, 0), Vector2(1, 2), Vector2(17, -5),
    ///     Vector2(-123.25, 45.5), Vector2(1000, 777), Vector2(3.1, 2.7)]
    /// var b := FastNoiseLite.new()
    /// b.noise_type = FastNoiseLite.TYPE_PERLIN; b.seed = 1337; b.frequency = 0.0123
    /// b.fractal_type = FastNoiseLite.FRACTAL_RIDGED; b.fractal_octaves = 6
    /// b.fractal_lacunarity = 2.1; b.fractal_gain = 0.45; b.fractal_weighted_strength = 0.3
    /// var c := FastNoiseLite.new()
    /// c.noise_type = FastNoiseLite.TYPE_CELLULAR; c.seed = -7; c.frequency = 0.0123
    /// c.fractal_octaves = 3; c.offset = Vector3(12.5, -3.25, 0)
    /// c.cellular_distance_function = FastNoiseLite.DISTANCE_MANHATTAN
    /// c.cellular_return_type = FastNoiseLite.RETURN_DISTANCE2_DIV; c.cellular_jitter = 0.8
    /// var d := FastNoiseLite.new()
    /// d.noise_type = FastNoiseLite.TYPE_VALUE_CUBIC; d.seed = 2147483647
    /// d.fractal_type = FastNoiseLite.FRACTAL_PING_PONG; d.fractal_octaves = 6
    /// d.fractal_ping_pong_strength = 1.5
    /// var e := FastNoiseLite.new()
    /// e.noise_type = FastNoiseLite.TYPE_SIMPLEX; e.seed = 99; e.domain_warp_enabled = true
    /// e.domain_warp_type = FastNoiseLite.DOMAIN_WARP_BASIC_GRID
    /// e.domain_warp_fractal_type = FastNoiseLite.DOMAIN_WARP_FRACTAL_INDEPENDENT
    /// e.domain_warp_amplitude = 25.0; e.domain_warp_frequency = 0.037
    /// e.domain_warp_fractal_octaves = 4; e.domain_warp_fractal_lacunarity = 3.5
    /// e.domain_warp_fractal_gain = 0.6
    /// var f := FastNoiseLite.new()
    /// f.noise_type = FastNoiseLite.TYPE_VALUE; f.fractal_type = FastNoiseLite.FRACTAL_NONE
    /// f.seed = 5
    /// for n: FastNoiseLite in [FastNoiseLite.new(), b, c, d, e, f]:
    ///     var line := ""
    ///     for p in pts:
    ///         line += "0x%08x, " % PackedFloat32Array([n.get_noise_2d(p.x, p.y)]) \
    ///             .to_byte_array().decode_u32(0)
    ///     print(line)
    /// ```
    const GODOT_BITS: [[u32; 6]; 6] = [
        [
            0x10ae63e0, 0x3c98600a, 0xbe7ea08a, 0x3e11e57a, 0xbdf914f6, 0x3d524103,
        ],
        [
            0x3f7fffff, 0x3f5cacb6, 0x3f0ee4e1, 0x3f2acdd0, 0x3f421409, 0x3f44d571,
        ],
        [
            0xbebd2076, 0xbeb1e140, 0xbe50ddac, 0xbecdddc9, 0xbea16d1d, 0xbea0c3cc,
        ],
        [
            0xbee2228f, 0xbed74784, 0xbe9fe75f, 0x3d8951c5, 0x3e812a22, 0xbeda8efc,
        ],
        [
            0xbe6e6be4, 0xbee76e2e, 0x3e6ac3fb, 0xbd6dd2f4, 0x3efd66b4, 0xbea6a40f,
        ],
        [
            0x3b466782, 0x3b6e2d2e, 0xbd3bc238, 0x3ed30d7f, 0xbf696a29, 0x3b2d35d3,
        ],
    ];

    #[test]
    fn get_noise_2d_gives_godots_bits() {
        for (i, (p, want)) in references().iter().zip(GODOT_BITS).enumerate() {
            for ((x, y), bits) in POINTS.into_iter().zip(want) {
                let got = p.get_noise_2d(x, y);
                assert_eq!(
                    got.to_bits(),
                    bits,
                    "resource {i} at ({x}, {y}): {got} vs Godot's {}",
                    f32::from_bits(bits)
                );
            }
        }
    }

    fn noise_with(fnl: FastNoiseLiteParams, amplitude: f32, offset: f32) -> NoiseParams {
        NoiseParams {
            basis: NoiseBasis::FastNoiseLite(fnl),
            amplitude,
            offset,
            ..Default::default()
        }
    }

    #[test]
    fn grid_cells_read_get_noise_2d_at_pixels_or_metres() {
        let grid = Grid::new(37, 23, 30.0).unwrap();
        for fnl in references() {
            let h = generate(&noise_with(fnl, 1.0, 0.0), grid, 5).unwrap();
            let metres = FastNoiseLiteParams {
                coordinates: FnlCoordinates::Metres,
                frequency: fnl.frequency / 30.0,
                ..fnl
            };
            let hm = generate(&noise_with(metres, 250.0, -40.0), grid, 5).unwrap();
            for y in 0..grid.height {
                for x in 0..grid.width {
                    let n = fnl.get_noise_2d(x as f32, y as f32);
                    assert_eq!(h.get(x, y).to_bits(), n.to_bits(), "({x}, {y})");
                    let nm =
                        metres.get_noise_2d((x as f64 * 30.0) as f32, (y as f64 * 30.0) as f32);
                    let want = (-40.0 + 250.0 * nm as f64) as f32;
                    assert_eq!(hm.get(x, y).to_bits(), want.to_bits(), "({x}, {y}) m");
                }
            }
        }
    }

    #[test]
    fn the_recipe_seed_is_not_used_and_threads_do_not_matter() {
        let grid = Grid::new(64, 48, 10.0).unwrap();
        let p = noise_with(references()[1], 100.0, 0.0);
        let a = generate(&p, grid, 1).unwrap();
        assert_eq!(a.data, generate(&p, grid, 2).unwrap().data);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = one.install(|| generate(&p, grid, 1).unwrap());
        assert_eq!(a.data, b.data);
    }

    #[test]
    fn bad_values_are_errors_naming_the_field() {
        let grid = Grid::new(8, 8, 10.0).unwrap();
        let d = FastNoiseLiteParams::default();
        let cases: Vec<(NoiseParams, &str)> = vec![
            (
                noise_with(
                    FastNoiseLiteParams {
                        frequency: f32::NAN,
                        ..d
                    },
                    1.0,
                    0.0,
                ),
                "noise.basis.FastNoiseLite.frequency",
            ),
            (
                noise_with(
                    FastNoiseLiteParams {
                        fractal_octaves: 0,
                        ..d
                    },
                    1.0,
                    0.0,
                ),
                "noise.basis.FastNoiseLite.fractal_octaves",
            ),
            (
                noise_with(
                    FastNoiseLiteParams {
                        fractal_weighted_strength: 1.5,
                        ..d
                    },
                    1.0,
                    0.0,
                ),
                "noise.basis.FastNoiseLite.fractal_weighted_strength",
            ),
            (
                noise_with(
                    FastNoiseLiteParams {
                        domain_warp_fractal_octaves: 99,
                        ..d
                    },
                    1.0,
                    0.0,
                ),
                "noise.basis.FastNoiseLite.domain_warp_fractal_octaves",
            ),
            (
                // Valid on its own, but octave 32 at lacunarity 16 leaves i32 far behind.
                noise_with(
                    FastNoiseLiteParams {
                        fractal_octaves: 32,
                        fractal_lacunarity: 16.0,
                        ..d
                    },
                    1.0,
                    0.0,
                ),
                "noise.basis.FastNoiseLite.frequency",
            ),
            (
                NoiseParams {
                    kind: NoiseKind::Ridged,
                    ..noise_with(d, 1.0, 0.0)
                },
                "noise.kind",
            ),
            (
                NoiseParams {
                    warp: Some(Default::default()),
                    ..noise_with(d, 1.0, 0.0)
                },
                "noise.warp",
            ),
            (
                NoiseParams {
                    stretch: 2.0,
                    ..noise_with(d, 1.0, 0.0)
                },
                "noise.stretch",
            ),
        ];
        for (p, name) in cases {
            match generate(&p, grid, 0) {
                Err(OrogenError::InvalidParameter { field, .. }) => assert_eq!(field, name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn recipe_ron_takes_godots_names_and_defaults() {
        let ron = r#"(
            size: (16, 12),
            cell_size: 10.0,
            seed: 1,
            terrain: Noise(amplitude: 50.0, basis: FastNoiseLite(noise_type: Perlin, seed: 1337,
                frequency: 0.0123, fractal_type: Ridged, fractal_octaves: 6,
                fractal_lacunarity: 2.1, fractal_gain: 0.45, fractal_weighted_strength: 0.3,
                offset: (0.0, 0.0, 0.0))),
            stages: [],
        )"#;
        let recipe = crate::recipe::Recipe::from_ron_str(ron, "t").unwrap();
        recipe.validate().unwrap();
        match &recipe.terrain {
            crate::stages::source::TerrainSource::Noise(n) => {
                assert_eq!(n.basis, NoiseBasis::FastNoiseLite(references()[1]));
            }
            other => panic!("{other:?}"),
        }
        let none = crate::recipe::Recipe::from_ron_str(
            &ron.replace("fractal_type: Ridged", "fractal_type: None"),
            "t",
        )
        .unwrap();
        match &none.terrain {
            crate::stages::source::TerrainSource::Noise(n) => match n.basis {
                NoiseBasis::FastNoiseLite(f) => assert_eq!(f.fractal_type, FnlFractalType::None),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let bad = ron.replace("fractal_octaves: 6", "fractal_octaves: 0");
        let err = crate::recipe::Recipe::from_ron_str(&bad, "t")
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("terrain.Noise.basis.FastNoiseLite.fractal_octaves"),
            "{err}"
        );
    }
}
