//! Where a recipe's inputs come from: the initial terrain ([`TerrainSource`]) and scalar
//! maps ([`ScalarSource`]: constant, grayscale image, noise) for uplift, erodibility and
//! precipitation, resolved here into plain per-node values for the processes.
//!
//! Images of any size are resampled bilinearly (corner-aligned) to the grid; image and
//! noise values are normalised to `[0, 1]` and then mapped linearly onto `[min, max]`
//! (`min > max` is allowed and inverts the map).

use std::sync::atomic::AtomicBool;

use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_finite, check_range, OrogenError, Result};
use crate::field::{Grid, Heightfield, Rect, ScalarMap};
use crate::generators::noise::NoiseParams;
use crate::io::heightmap::HeightmapSource;
use crate::stages::planet::PlanetSource;

/// Salt mixed into the recipe seed for the uplift's noise, so it differs from the terrain's.
pub const UPLIFT_SEED: u64 = 0x7570_6c69_6674;
/// Seed of the noise that moves the uplift's fade at the borders in and out (`uplift_fade_ragged`).
pub const COAST_SEED: u64 = 0x0063_6f61_7374; // "coast"
/// Salt mixed into the recipe seed for a noise erodibility map.
pub const ERODIBILITY_SEED: u64 = 0x6572_6f64_6962_696c;
/// Salt mixed into the recipe seed for a noise precipitation map (every stage's).
pub const PRECIPITATION_SEED: u64 = 0x7261_696e_6661_6c6c;
/// Salt mixed into the recipe seed for a noise talus.
pub const THERMAL_SEED: u64 = 0x0074_6865_726d_616c; // "thermal"
/// Random stream of the Graph domain's Poisson-disc nodes.
pub const GRAPH_SEED: u64 = 0x0067_7261_7068; // "graph"

/// Where the initial heights come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum TerrainSource {
    /// Every cell at this height, metres.
    Flat(f32),
    /// Procedural noise terrain (fBm, ridged, multifractal, warping, faults).
    Noise(NoiseParams),
    /// A heightmap image or raw file the user already has.
    Heightmap(HeightmapSource),
    /// An inclined plane, optionally roughened by noise: `Plane(height: 20.0, slope: (0.1,
    /// 0.0), noise: (wavelength: 6.0, amplitude: 0.05))`.
    Plane(PlaneParams),
    /// A region of the recipe's planet, by default its elevation in metres:
    /// `Planet(region: (lat: 10.0, lon: 175.0, width_km: 400.0), value: Elevation)`.
    Planet(PlanetSource),
}

/// Steepest gradient a [`TerrainSource::Plane`] may have along each axis, m/m (84°).
pub const MAX_PLANE_SLOPE: f32 = 10.0;

/// An inclined plane: `height` at the map centre, rising `slope.0` metres per metre
/// eastwards (+x, columns) and `slope.1` per metre southwards (+y, rows), plus `noise` if
/// given (e.g. the small roughness from which rills grow).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneParams {
    /// Height at the centre of the map, metres, within ±1e7. Default 0.
    #[serde(default)]
    pub height: f32,
    /// Gradient `(dh/dx, dh/dy)`, m/m, each within ±10: `(0.1, 0.0)` rises 1 m per 10 m
    /// eastwards, so water runs west.
    pub slope: (f32, f32),
    /// Noise added to the plane (its `offset` too). Default none: an exact plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseParams>,
}

impl PlaneParams {
    /// Checks values; `field` names the plane (`terrain.Plane`).
    pub fn validate(&self, field: &str) -> Result<()> {
        let m = crate::generators::noise::MAX_HEIGHT as f64;
        check_range(&format!("{field}.height"), self.height as f64, -m, m)?;
        let s = MAX_PLANE_SLOPE as f64;
        check_range(&format!("{field}.slope.0"), self.slope.0 as f64, -s, s)?;
        check_range(&format!("{field}.slope.1"), self.slope.1 as f64, -s, s)?;
        if let Some(n) = &self.noise {
            n.validate(&format!("{field}.noise"))?;
        }
        Ok(())
    }

    /// [`PlaneParams::validate`], and the plane stays within ±1e7 m over `grid` (a steep
    /// plane over a wide grid would not); the error names `{field}.slope`.
    pub fn validate_on(&self, field: &str, grid: Grid) -> Result<()> {
        self.validate(field)?;
        let half_x = (grid.width as f64 - 1.0) / 2.0 * grid.dx() as f64;
        let half_y = (grid.height as f64 - 1.0) / 2.0 * grid.dy() as f64;
        let rise = (self.slope.0 as f64).abs() * half_x + (self.slope.1 as f64).abs() * half_y;
        let reach = (self.height as f64).abs() + rise;
        let m = crate::generators::noise::MAX_HEIGHT as f64;
        if reach > m {
            return Err(OrogenError::invalid(
                format!("{field}.slope"),
                format!(
                    "reaches {reach:.3e} m at a corner of this {}x{} grid; heights stay within \
                     ±{m:e} m",
                    grid.width, grid.height
                ),
            ));
        }
        Ok(())
    }

    /// The cells of `window` of [`PlaneParams::build`]'s plane over `grid`, the same values
    /// bit for bit (each cell at its whole-map position).
    fn build_window(
        &self,
        grid: Grid,
        window: Rect,
        seed: u64,
        cancel: &AtomicBool,
    ) -> Result<Vec<f32>> {
        self.validate_on("terrain.Plane", grid)?;
        let mut data = match &self.noise {
            Some(n) => crate::generators::noise::generate_window(n, grid, window, seed, cancel)?,
            None => vec![0.0; window.len()],
        };
        let (w, h) = (grid.width, grid.height);
        let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
        let (sx, sy) = (
            self.slope.0 as f64 * grid.dx() as f64,
            self.slope.1 as f64 * grid.dy() as f64,
        );
        let base = self.height as f64;
        data.par_chunks_mut(window.w.max(1))
            .enumerate()
            .for_each(|(y, row)| {
                let row_h = base + sy * ((window.y0 + y) as f64 - cy);
                for (x, v) in (window.x0..).zip(row.iter_mut()) {
                    *v = (*v as f64 + row_h + sx * (x as f64 - cx)) as f32;
                }
            });
        Ok(data)
    }

    /// The plane over `grid`; `seed` drives the noise: [`PlaneParams::build_window`] over
    /// the whole grid.
    fn build(&self, grid: Grid, seed: u64, cancel: &AtomicBool) -> Result<Heightfield> {
        let whole = Rect {
            x0: 0,
            y0: 0,
            w: grid.width,
            h: grid.height,
        };
        let data = self.build_window(grid, whole, seed, cancel)?;
        Ok(Heightfield { grid, data })
    }
}

impl TerrainSource {
    /// Checks values; `field` names the source (`terrain`).
    pub fn validate(&self, field: &str) -> Result<()> {
        match self {
            TerrainSource::Flat(h) => check_finite(&format!("{field}.Flat"), *h as f64),
            TerrainSource::Noise(n) => n.validate(&format!("{field}.Noise")),
            TerrainSource::Heightmap(h) => h.validate(&format!("{field}.Heightmap")),
            TerrainSource::Plane(p) => p.validate(&format!("{field}.Plane")),
            TerrainSource::Planet(p) => p.validate(&format!("{field}.Planet")),
        }
    }

    /// The planet region this terrain takes, if it is one.
    pub fn planet(&self) -> Option<&PlanetSource> {
        match self {
            TerrainSource::Planet(p) => Some(p),
            _ => None,
        }
    }

    /// The initial heights over `grid` (a heightmap may bring its own size); `seed` drives
    /// noise, relative paths resolve against `base_dir`.
    pub fn build(&self, grid: Grid, seed: u64, base_dir: &Path) -> Result<Heightfield> {
        Ok(self.build_with_nodata(grid, seed, base_dir)?.0)
    }

    /// [`TerrainSource::build`], and the heightmap's nodata mask when it has nodata cells
    /// (see [`HeightmapSource::load_with_nodata`]).
    pub fn build_with_nodata(
        &self,
        grid: Grid,
        seed: u64,
        base_dir: &Path,
    ) -> Result<(Heightfield, Option<Vec<bool>>)> {
        self.build_cancellable(grid, seed, base_dir, &AtomicBool::new(false))
    }

    /// The cells of `window` of [`TerrainSource::build`] over `grid` (row-major over the
    /// window), the same values bit for bit, for a tiled run's tile (issue #41): noise and
    /// planes are evaluated at the window's whole-map positions only. A heightmap is read
    /// whole and cut (its file holds the whole map anyway); a heightmap with nodata cells
    /// and a planet are refused, naming `terrain`.
    pub fn build_window(
        &self,
        grid: Grid,
        window: Rect,
        seed: u64,
        base_dir: &Path,
        cancel: &AtomicBool,
    ) -> Result<Vec<f32>> {
        crate::generators::noise::check_window(grid, window)?;
        match self {
            TerrainSource::Flat(h) => Ok(vec![*h; window.len()]),
            TerrainSource::Noise(params) => {
                crate::generators::noise::generate_window(params, grid, window, seed, cancel)
            }
            TerrainSource::Plane(p) => p.build_window(grid, window, seed, cancel),
            TerrainSource::Heightmap(src) => {
                // Not position-local (the file is the whole map, resampled to the grid):
                // built whole, then cut.
                let (field, nodata) = src.load_with_nodata(grid, base_dir)?;
                if nodata.is_some() {
                    return Err(OrogenError::invalid(
                        "terrain",
                        "a terrain with nodata cells is not tiled yet",
                    ));
                }
                if field.grid.width != grid.width || field.grid.height != grid.height {
                    return Err(OrogenError::invalid(
                        "terrain.Heightmap",
                        format!(
                            "is {}x{}, the tiled grid {}x{}",
                            field.grid.width, field.grid.height, grid.width, grid.height
                        ),
                    ));
                }
                Ok(cut_window(&field.data, grid, window))
            }
            TerrainSource::Planet(_) => Err(OrogenError::invalid(
                "terrain.Planet",
                "a planet is not tiled",
            )),
        }
    }

    /// [`TerrainSource::build_with_nodata`], giving up with [`OrogenError::Cancelled`]
    /// soon after `cancel` is set while noise is generated.
    pub fn build_cancellable(
        &self,
        grid: Grid,
        seed: u64,
        base_dir: &Path,
        cancel: &AtomicBool,
    ) -> Result<(Heightfield, Option<Vec<bool>>)> {
        match self {
            TerrainSource::Flat(h) => Ok((Heightfield::filled(grid, *h), None)),
            TerrainSource::Noise(params) => Ok((
                crate::generators::noise::generate_cancellable(params, grid, seed, cancel)?,
                None,
            )),
            TerrainSource::Heightmap(src) => src.load_with_nodata(grid, base_dir),
            TerrainSource::Plane(p) => Ok((p.build(grid, seed, cancel)?, None)),
            TerrainSource::Planet(_) => Err(OrogenError::invalid(
                "terrain.Planet",
                "needs the recipe's planet: build it with `runner::initial_world`",
            )),
        }
    }
}

/// A scalar map given as a constant, a grayscale image or noise; used for uplift,
/// erodibility and precipitation. Images of any size are resampled to the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum ScalarSource {
    /// The same value everywhere.
    Constant(f32),
    /// An 8- or 16-bit grayscale PNG: black maps to `min`, white to `max`. A 32-bit float
    /// EXR (`.exr`) maps its value `v` to `min + v·(max − min)`.
    Image { path: String, min: f32, max: f32 },
    /// Noise normalised over the grid to `[0, 1]`, then mapped to `[min, max]`.
    Noise {
        noise: NoiseParams,
        min: f32,
        max: f32,
    },
    /// A region of the recipe's planet (its `planet` section, or a default planet):
    /// `Planet(region: (lat: 10.0, lon: 175.0, width_km: 400.0))` gives its uplift rate,
    /// m/yr. Only the recipe's `uplift` can take it.
    Planet(PlanetSource),
    /// Values held in memory, one per cell of their own grid (resampled to the run's
    /// grid like an image): a map painted in the Godot editor. Never in a recipe file;
    /// saved, such a map is an `Image` (a 32-bit float EXR with `min: 0, max: 1`).
    #[serde(skip)]
    Values(std::sync::Arc<ScalarMap>),
}

impl Default for ScalarSource {
    fn default() -> Self {
        ScalarSource::Constant(0.0)
    }
}

impl ScalarSource {
    /// Checks the source's values; `field` names it in errors.
    pub fn validate(&self, field: &str) -> Result<()> {
        match self {
            ScalarSource::Constant(v) => check_finite(field, *v as f64),
            ScalarSource::Image { path, min, max } => {
                if path.is_empty() {
                    return Err(OrogenError::invalid(format!("{field}.path"), "is empty"));
                }
                check_finite(&format!("{field}.min"), *min as f64)?;
                check_finite(&format!("{field}.max"), *max as f64)
            }
            ScalarSource::Noise { noise, min, max } => {
                noise.validate(&format!("{field}.noise"))?;
                check_finite(&format!("{field}.min"), *min as f64)?;
                check_finite(&format!("{field}.max"), *max as f64)
            }
            ScalarSource::Planet(p) => p.validate(&format!("{field}.Planet")),
            ScalarSource::Values(map) => match map.data.iter().position(|v| !v.is_finite()) {
                Some(i) => Err(OrogenError::invalid(
                    field,
                    format!(
                        "the painted map has {} at cell ({}, {})",
                        map.data[i],
                        i % map.grid.width.max(1),
                        i / map.grid.width.max(1)
                    ),
                )),
                None => Ok(()),
            },
        }
    }

    /// The planet region this source takes, if it is one.
    pub fn planet(&self) -> Option<&PlanetSource> {
        match self {
            ScalarSource::Planet(p) => Some(p),
            _ => None,
        }
    }

    /// [`ScalarSource::validate`], and every value the source can give must be ≥ 0.
    pub fn validate_non_negative(&self, field: &str) -> Result<()> {
        self.validate(field)?;
        match self {
            ScalarSource::Planet(_) => Err(OrogenError::invalid(
                format!("{field}.Planet"),
                "only the recipe's `uplift` (and `terrain`) can come from the planet",
            )),
            ScalarSource::Constant(v) if *v < 0.0 => Err(OrogenError::invalid(
                field,
                format!("must be >= 0, got {v}"),
            )),
            ScalarSource::Image { min, max, .. } | ScalarSource::Noise { min, max, .. }
                if *min < 0.0 || *max < 0.0 =>
            {
                Err(OrogenError::invalid(
                    field,
                    format!("range must be >= 0, got min {min}, max {max}"),
                ))
            }
            ScalarSource::Values(map) => match map.data.iter().find(|v| **v < 0.0) {
                Some(v) => Err(OrogenError::invalid(
                    field,
                    format!("the painted map must be >= 0, has {v}"),
                )),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The source as a map over `grid`. `seed` drives noise; relative image paths are
    /// resolved against `base_dir` (the recipe file's folder).
    pub fn resolve(&self, grid: Grid, seed: u64, base_dir: &Path) -> Result<ScalarMap> {
        resolve(self, grid, seed, base_dir)
    }

    /// [`ScalarSource::resolve`], giving up with [`OrogenError::Cancelled`] soon after
    /// `cancel` is set (noise looks at it row by row).
    pub fn resolve_cancellable(
        &self,
        grid: Grid,
        seed: u64,
        base_dir: &Path,
        cancel: &AtomicBool,
    ) -> Result<ScalarMap> {
        resolve_inner(self, grid, seed, base_dir, cancel)
    }
}

/// The factor by which a recipe's `uplift_fade_m` scales the uplift of cell `(x, y)` of
/// `grid`: a smoothstep from 0 on the border to 1 at `fade_m` metres inside (at most a
/// quarter of the map's shorter side, so a recipe shrunk in the dock keeps a range in its
/// middle), along each axis, the two multiplied (so the corners round off rather than
/// crease). 1 everywhere when `fade_m` is 0. Per cell, from the whole grid's coordinates,
/// so a tile of a tiled run gets the whole map's values.
pub fn border_fade(grid: Grid, x: usize, y: usize, fade_m: f32) -> f32 {
    border_fade_inset(grid, x, y, fade_m, 0.0)
}

/// [`border_fade`] with the smoothstep starting `inset_m` metres inside the border instead
/// of on it (0 up to there): where the inset is deep, the land starts further in, and the
/// sea at the borders reaches in as a bay.
pub fn border_fade_inset(grid: Grid, x: usize, y: usize, fade_m: f32, inset_m: f32) -> f32 {
    let fade_m = fade_m.min(0.25 * short_extent(grid));
    if fade_m <= 0.0 {
        return 1.0;
    }
    let along = |i: usize, n: usize, d: f32| {
        let from_border = i.min(n.saturating_sub(1).saturating_sub(i)) as f32 * d;
        let t = ((from_border - inset_m) / fade_m).clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    };
    along(x, grid.width, grid.cell_size) * along(y, grid.height, grid.cell_size_y)
}

/// The map's shorter side, metres.
fn short_extent(grid: Grid) -> f32 {
    let extent_x = grid.width.saturating_sub(1) as f32 * grid.cell_size;
    let extent_y = grid.height.saturating_sub(1) as f32 * grid.cell_size_y;
    extent_x.min(extent_y)
}

/// The recipe's fade of the uplift at the borders, one factor per cell of `window` of
/// `grid` (row-major over the window): [`border_fade_inset`] of `fade_m`, with an inset
/// that low-frequency noise moves between 0 and `ragged` × the fade (at most 0.15 of the
/// map's shorter side; the noise's wavelength is 1.3 times that deepest bay), so the coast
/// has bays between headlands instead of following the square. `ragged` 0:
/// [`border_fade`]'s even fade. The noise is sampled at whole-map positions, so a tile
/// gets the whole map's values.
pub fn border_fade_window(
    grid: Grid,
    window: Rect,
    fade: BorderFade,
    seed: u64,
    cancel: &AtomicBool,
) -> Result<Vec<f32>> {
    let inset = if fade.ragged > 0.0 && fade.fade_m > 0.0 {
        let fade_m = fade.fade_m.min(0.25 * short_extent(grid));
        let deepest = (fade.ragged * fade_m).min(0.15 * short_extent(grid));
        let params = NoiseParams {
            octaves: 3,
            wavelength: (1.3 * deepest).max(grid.cell_size.max(grid.cell_size_y)),
            amplitude: 1.0,
            ..NoiseParams::default()
        };
        let noise = crate::generators::noise::generate_window(&params, grid, window, seed, cancel)?;
        // Where the noise is low the fade starts on the border (headlands); elsewhere bays
        // reach in, smoothly. An octave sum rarely reaches its bound: from −0.6 of its half
        // (no inset) to its half (the deepest bay).
        let half = 0.5 * params.bounds().1 as f32;
        Some(
            noise
                .into_iter()
                .map(|n| {
                    let t = ((n / half + 0.6) / 1.6).clamp(0.0, 1.0);
                    deepest * t * t * (3.0 - 2.0 * t)
                })
                .collect::<Vec<f32>>(),
        )
    } else {
        None
    };
    Ok((0..window.len())
        .into_par_iter()
        .map(|i| {
            let (x, y) = (window.x0 + i % window.w, window.y0 + i / window.w);
            let inset_m = inset.as_ref().map_or(0.0, |v| v[i]);
            border_fade_inset(grid, x, y, fade.fade_m, inset_m)
        })
        .collect())
}

/// A recipe's `uplift_fade_m` and `uplift_fade_ragged`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BorderFade {
    /// Metres over which the uplift rises from 0 to the recipe's own.
    pub fade_m: f32,
    /// How far the fade's start moves inland with noise, a share of `fade_m`, in [0, 3].
    pub ragged: f32,
}

/// Scales `map` (a resolved uplift) by [`border_fade_window`] over the whole map: the range
/// rises from lowlands (or a coast) at the map's borders rather than from walls at the
/// borders held at base level.
pub fn fade_at_borders(
    map: &mut ScalarMap,
    fade: BorderFade,
    seed: u64,
    cancel: &AtomicBool,
) -> Result<()> {
    if fade.fade_m <= 0.0 {
        return Ok(());
    }
    let grid = map.grid;
    let whole = Rect {
        x0: 0,
        y0: 0,
        w: grid.width,
        h: grid.height,
    };
    let factors = border_fade_window(grid, whole, fade, seed, cancel)?;
    map.data
        .par_iter_mut()
        .zip(factors.par_iter())
        .for_each(|(v, f)| *v *= f);
    Ok(())
}

/// The rows of `window` of a whole map over `grid`, row-major over the window.
fn cut_window(data: &[f32], grid: Grid, window: Rect) -> Vec<f32> {
    let mut out = Vec::with_capacity(window.len());
    for y in window.y0..window.y0 + window.h {
        let at = y * grid.width + window.x0;
        out.extend_from_slice(&data[at..at + window.w]);
    }
    out
}

impl ScalarSource {
    /// The cells of `window` of [`ScalarSource::resolve`] over `grid` (row-major over the
    /// window), the same values bit for bit, for a tiled run's tile (issue #41). Noise is
    /// evaluated at the window's whole-map positions only; its normalisation needs the
    /// whole map's lowest and highest value, which `min_max` turns from this window's
    /// (with `(inf, -inf)` for an empty one) into the whole map's: every tile calls it
    /// together, e.g. a reduction over the ranks (it is called for noise only, so every
    /// rank of one recipe calls it the same number of times). Images and painted maps are
    /// resampled at the window's cells only (the image itself is read whole).
    pub fn resolve_window(
        &self,
        grid: Grid,
        window: Rect,
        seed: u64,
        base_dir: &Path,
        cancel: &AtomicBool,
        min_max: &mut dyn FnMut(f32, f32) -> Result<(f32, f32)>,
    ) -> Result<Vec<f32>> {
        self.validate("source")?;
        crate::generators::noise::check_window(grid, window)?;
        match self {
            ScalarSource::Constant(v) => Ok(vec![*v; window.len()]),
            ScalarSource::Image { path, min, max } => {
                let mut data = read_image_source(base_dir, path)?.resampled_window(grid, window);
                map_slice_to_range(&mut data, *min, *max);
                Ok(data)
            }
            ScalarSource::Noise { noise, min, max } => {
                let mut data =
                    crate::generators::noise::generate_window(noise, grid, window, seed, cancel)?;
                // `ScalarMap::min_max` (finite values; (0, 0) without any) over the window,
                // then over the whole map.
                let (lo, hi) = data
                    .iter()
                    .filter(|v| v.is_finite())
                    .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                        (lo.min(v), hi.max(v))
                    });
                let (lo, hi) = match min_max(lo, hi)? {
                    (lo, hi) if lo > hi => (0.0, 0.0),
                    both => both,
                };
                crate::generators::noise::normalize_with(&mut data, lo, hi);
                map_slice_to_range(&mut data, *min, *max);
                Ok(data)
            }
            ScalarSource::Planet(_) => Err(OrogenError::invalid(
                "source.Planet",
                "only the recipe's `uplift` (and `terrain`) can come from the planet",
            )),
            ScalarSource::Values(map) => Ok(map.resampled_window(grid, window)),
        }
    }
}

/// An `Image` source's file at its own size: a grayscale PNG as 0 to 1, or a 32-bit float
/// EXR (a painted map saved from Godot) with its values exactly (with `min: 0, max: 1`
/// they are used as they are).
fn read_image_source(base_dir: &Path, path: &str) -> Result<ScalarMap> {
    let full = crate::io::resolve_path(base_dir, path);
    let is_exr = full
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("exr"));
    if is_exr {
        crate::io::exr::read_exr(&full)
    } else {
        crate::io::read_gray_image(&full)
    }
}

/// The source as a map over `grid`. `seed` drives noise; relative image paths are
/// resolved against `base_dir` (the recipe file's folder). Validates the source first,
/// so an invalid value is an error naming its field under `source`.
pub fn resolve(source: &ScalarSource, grid: Grid, seed: u64, base_dir: &Path) -> Result<ScalarMap> {
    resolve_inner(source, grid, seed, base_dir, &AtomicBool::new(false))
}

fn resolve_inner(
    source: &ScalarSource,
    grid: Grid,
    seed: u64,
    base_dir: &Path,
    cancel: &AtomicBool,
) -> Result<ScalarMap> {
    source.validate("source")?;
    match source {
        ScalarSource::Constant(v) => Ok(ScalarMap::filled(grid, *v)),
        ScalarSource::Image { path, min, max } => {
            let mut map = read_image_source(base_dir, path)?.resampled(grid);
            map.grid = grid;
            map_to_range(&mut map, *min, *max);
            Ok(map)
        }
        ScalarSource::Noise { noise, min, max } => {
            let mut map = crate::generators::noise::generate_normalized_cancellable(
                noise, grid, seed, cancel,
            )?;
            map_to_range(&mut map, *min, *max);
            Ok(map)
        }
        ScalarSource::Planet(_) => Err(OrogenError::invalid(
            "source.Planet",
            "only the recipe's `uplift` (and `terrain`) can come from the planet",
        )),
        ScalarSource::Values(map) => {
            let mut out = map.resampled(grid);
            out.grid = grid;
            Ok(out)
        }
    }
}

/// Maps values in `[0, 1]` linearly onto `[min, max]`, in place.
fn map_to_range(map: &mut ScalarMap, min: f32, max: f32) {
    map_slice_to_range(&mut map.data, min, max);
}

fn map_slice_to_range(data: &mut [f32], min: f32, max: f32) {
    let (lo, span) = (min as f64, max as f64 - min as f64);
    data.par_iter_mut()
        .for_each(|v| *v = (lo + span * (*v as f64)) as f32);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::OrogenError;

    fn grid(w: usize, h: usize) -> Grid {
        Grid::new(w, h, 50.0).unwrap()
    }

    #[test]
    fn constant_fills_the_grid() {
        let m = resolve(&ScalarSource::Constant(0.25), grid(7, 5), 1, Path::new(".")).unwrap();
        assert_eq!(m.grid, grid(7, 5));
        assert!(m.data.iter().all(|&v| v == 0.25));
    }

    #[test]
    fn noise_spans_min_to_max_and_follows_the_seed() {
        let src = ScalarSource::Noise {
            noise: NoiseParams {
                wavelength: 500.0,
                ..Default::default()
            },
            min: 0.001,
            max: 0.003,
        };
        let g = grid(40, 30);
        let a = resolve(&src, g, 5, Path::new(".")).unwrap();
        let (lo, hi) = a.min_max();
        assert!(
            (lo - 0.001).abs() < 1e-9 && (hi - 0.003).abs() < 1e-9,
            "{lo} {hi}"
        );
        let b = resolve(&src, g, 6, Path::new(".")).unwrap();
        assert_ne!(a.data, b.data);
        assert_eq!(a.data, resolve(&src, g, 5, Path::new(".")).unwrap().data);
    }

    #[test]
    fn image_is_resampled_and_mapped_with_a_relative_path() {
        let dir = tempfile::tempdir().unwrap();
        // A 16-bit horizontal ramp 0..65535 over 5 columns, 3 rows.
        let mut img = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::new(5, 3);
        for (x, _, p) in img.enumerate_pixels_mut() {
            p.0[0] = (x * 65535 / 4) as u16;
        }
        img.save(dir.path().join("ramp.png")).unwrap();
        let src = ScalarSource::Image {
            path: "ramp.png".into(),
            min: 10.0,
            max: 20.0,
        };
        let g = grid(9, 4);
        let m = resolve(&src, g, 0, dir.path()).unwrap();
        assert_eq!(m.grid, g);
        // Corner-aligned bilinear resampling of a linear ramp is the same ramp.
        for y in 0..4 {
            for x in 0..9 {
                let want = 10.0 + 10.0 * x as f32 / 8.0;
                assert!(
                    (m.get(x, y) - want).abs() < 1e-3,
                    "({x},{y}) {}",
                    m.get(x, y)
                );
            }
        }
    }

    #[test]
    fn a_window_of_any_source_is_the_whole_maps_cells_bit_for_bit() {
        // Issue #41: a tile makes only its own cells of the start world.
        let opts = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let g = Grid::with_cells(37, 29, 90.0, 110.0).unwrap();
        let windows = [
            g.rect(),
            Rect {
                x0: 5,
                y0: 3,
                w: 11,
                h: 7,
            },
            Rect {
                x0: 36,
                y0: 28,
                w: 1,
                h: 1,
            },
            Rect {
                x0: 20,
                y0: 0,
                w: 17,
                h: 29,
            },
        ];
        let cut = |data: &[f32], r: Rect| cut_window(data, g, r);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let never = AtomicBool::new(false);
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "Noise((kind: Ridged, octaves: 5, wavelength: 800.0, amplitude: 30.0, \
             warp: (strength: 200.0, wavelength: 3000.0), faults: (count: 20, width: 50.0), \
             stretch: 2.0, stretch_angle: 30.0))",
            "Plane((height: 5.0, slope: (0.1, -0.05), noise: (wavelength: 500.0, amplitude: 2.0)))",
            "Noise((amplitude: 50.0, basis: FastNoiseLite((noise_type: Perlin, seed: 7, \
             frequency: 0.02, fractal_octaves: 4))))",
            "Flat(3.5)",
        ] {
            let src: TerrainSource = opts.from_str(text).unwrap();
            let whole = src.build(g, 11, dir.path()).unwrap();
            for r in windows {
                let part = src.build_window(g, r, 11, dir.path(), &never).unwrap();
                assert_eq!(bits(&part), bits(&cut(&whole.data, r)), "{text} {r:?}");
            }
        }
        // An image (resampled from 5x3), and noise normalised over the whole map: the
        // window's range is widened to the whole map's by `min_max`.
        let mut img = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::new(5, 3);
        for (x, y, p) in img.enumerate_pixels_mut() {
            p.0[0] = ((x * 7 + y * 13) * 1000) as u16;
        }
        img.save(dir.path().join("map.png")).unwrap();
        for src in [
            ScalarSource::Image {
                path: "map.png".into(),
                min: 2.0,
                max: -1.0,
            },
            ScalarSource::Noise {
                noise: NoiseParams {
                    wavelength: 700.0,
                    ..Default::default()
                },
                min: 0.001,
                max: 0.003,
            },
            ScalarSource::Constant(0.25),
        ] {
            let whole = resolve(&src, g, 5, dir.path()).unwrap();
            let raw = crate::generators::noise::generate(
                &NoiseParams {
                    wavelength: 700.0,
                    ..Default::default()
                },
                g,
                5,
            )
            .unwrap();
            let range = raw.min_max();
            for r in windows {
                let mut calls = 0;
                let part = src
                    .resolve_window(g, r, 5, dir.path(), &never, &mut |lo, hi| {
                        calls += 1;
                        assert!(lo >= range.0 && hi <= range.1);
                        Ok(range)
                    })
                    .unwrap();
                assert_eq!(bits(&part), bits(&cut(&whole.data, r)), "{src:?} {r:?}");
                let noise = matches!(src, ScalarSource::Noise { .. });
                assert_eq!(calls, noise as usize);
            }
        }
        // A window past the grid is an error, not a panic.
        let past = Rect {
            x0: 30,
            y0: 0,
            w: 8,
            h: 2,
        };
        assert!(TerrainSource::Flat(0.0)
            .build_window(g, past, 1, dir.path(), &never)
            .is_err());
    }

    #[test]
    fn missing_image_names_the_file() {
        let src = ScalarSource::Image {
            path: "no_such_map.png".into(),
            min: 0.0,
            max: 1.0,
        };
        let err = resolve(&src, grid(4, 4), 0, Path::new("/nonexistent-dir")).unwrap_err();
        assert!(err.to_string().contains("no_such_map.png"), "{err}");
    }

    #[test]
    fn invalid_values_are_errors_naming_the_field() {
        let src = ScalarSource::Noise {
            noise: NoiseParams::default(),
            min: f32::NAN,
            max: 1.0,
        };
        match resolve(&src, grid(4, 4), 0, Path::new(".")) {
            Err(OrogenError::InvalidParameter { field, .. }) => assert_eq!(field, "source.min"),
            other => panic!("{other:?}"),
        }
    }
}
