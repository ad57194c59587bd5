//! The eight ground layers' weights per cell (rock, cliff, scree, soil, grass, dry grass,
//! sand, snow: [`GROUND_MATERIALS`]), computed on the CPU with the same formulas and
//! constants as the terrain shader (`addons/orogen/runtime/terrain.gdshader`, its "ground
//! weights" block): slope, curvature, wetness (log drainage), sediment depth, altitude against
//! the snowline with the slope's aspect, the sea's shore, and small patches of value noise
//! that break up the borders. The constants below are the shader's `GW_*` constants; the test
//! `the_shader_has_these_constants` reads the shader and checks every one.
//!
//! Then, as the shader does: the weights are normalised to sum to 1, the painted ground
//! ([`GroundPaint`]) is laid over them, and the two strongest layers are kept, each less the
//! third's weight (so the pair changes without a seam). Those two, normalised, are the weights
//! the terrain shows and the exports write ([`GroundWeights`]): Terrain3D's control map takes
//! them as base, overlay and blend, HTerrain's splat maps as channel weights.
//!
//! The CPU samples one point per cell, where the shader samples one per pixel: the stencils
//! are one cell wide (the shader widens them where a pixel covers more than a cell) and the
//! patches' finest octave is faded out as the shader fades it for a pixel one cell wide.

use crate::math;
use rayon::prelude::*;

use crate::edit::ground_paint::{GroundPaint, LAYERS};
use crate::error::{OrogenError, Result};
use crate::field::Grid;
use crate::world::{names, MapData, World};

pub use crate::generators::ground::GROUND_MATERIALS;

/// Layer indices ([`GROUND_MATERIALS`]).
pub const ROCK: usize = 0;
pub const CLIFF: usize = 1;
pub const SCREE: usize = 2;
pub const SOIL: usize = 3;
pub const GRASS: usize = 4;
pub const DRY_GRASS: usize = 5;
pub const SAND: usize = 6;
pub const SNOW: usize = 7;

// The shader's `GW_*` constants (terrain.gdshader). Pairs are smoothstep edges.
/// Patches: the noise's longest wavelength, in cells.
pub const GW_PATCH_CELLS: f32 = 6.0;
/// Degrees of slope the patches shift the slope by.
pub const GW_PATCH_SLOPE_DEG: f32 = 8.0;
/// Metres of altitude the patches shift "high ground" by.
pub const GW_PATCH_HEIGHT_M: f32 = 120.0;
/// "High ground" fades in from this far below the snowline to this far below, metres.
pub const GW_HIGH_BELOW_SNOWLINE_M: [f32; 2] = [900.0, 200.0];
/// Degrees high ground adds to the slope (bare rock comes lower up there).
pub const GW_HIGH_SLOPE_DEG: f32 = 6.0;
/// Aspect counts from these slopes, degrees.
pub const GW_SHADE_SLOPE_DEG: [f32; 2] = [3.0, 12.0];
pub const GW_CLIFF_DEG: [f32; 2] = [46.0, 56.0];
pub const GW_ROCK_DEG: [f32; 2] = [32.0, 42.0];
/// Rock on ridges and spurs: weight, convexity (1/m) and slope edges, and its share low down.
pub const GW_RIDGE_ROCK: f32 = 0.6;
pub const GW_RIDGE_CURV: [f32; 2] = [0.02, 0.08];
pub const GW_RIDGE_ROCK_DEG: [f32; 2] = [24.0, 36.0];
pub const GW_RIDGE_ROCK_LOW: f32 = 0.3;
pub const GW_SCREE_FROM_DEG: [f32; 2] = [28.0, 34.0];
pub const GW_SCREE_TO_DEG: [f32; 2] = [40.0, 46.0];
pub const GW_SCREE_CURV: [f32; 2] = [-0.01, 0.03];
pub const GW_SCREE_LOW: f32 = 0.5;
/// Fell-field: metres under the snowline over which plants thin out over stony ground (from
/// the first to the second), how much of the plants goes, and the scree it leaves.
pub const GW_FELL_BELOW_SNOWLINE_M: [f32; 2] = [450.0, 50.0];
pub const GW_FELL_THIN: f32 = 0.75;
pub const GW_FELL_SCREE: f32 = 0.6;
/// The fell-field's edge also moves with noise of a fixed size in metres (wavelengths from
/// the first down to an eighth of it, faded under a few pixels or cells), up and down by
/// about the second: on coarse cells the patches alone drew it as a smooth contour.
pub const GW_FELL_FINE: [f32; 2] = [400.0, 180.0];
/// Soil everywhere, more on mid slopes and where sediment lies deep.
pub const GW_SOIL_BASE: f32 = 0.15;
pub const GW_SOIL_SLOPE: f32 = 0.0;
pub const GW_SOIL_FROM_DEG: [f32; 2] = [26.0, 32.0];
pub const GW_SOIL_TO_DEG: [f32; 2] = [34.0, 40.0];
pub const GW_SOIL_SEDIMENT_M: [f32; 2] = [0.2, 2.0];
/// Moisture from wetness (log drainage, 0–1), the patches and the shade.
pub const GW_MOIST: [f32; 2] = [0.1, 0.6];
pub const GW_MOIST_PATCHES: f32 = 0.3;
pub const GW_MOIST_SHADE: f32 = 0.1;
/// Wetness where the terrain has no drainage map (noise alone, no run): middling, so the
/// patches, the shade and the curvature mix grass and dry grass, rather than dry grass
/// everywhere as a wetness of 0 (no drainage at all) would.
pub const GW_WETNESS_UNKNOWN: f32 = 0.35;
/// Plants hold on slopes up to these.
pub const GW_PLANTS_DEG: [f32; 2] = [30.0, 38.0];
/// Grass: base and moisture gain; its share up high and low down.
pub const GW_GRASS_MOIST: [f32; 2] = [0.4, 1.2];
pub const GW_GRASS_ALPINE: [f32; 2] = [0.2, 0.8];
/// Dry grass: base, convexity edges, sunny-side gain, share up high and low down.
pub const GW_DRY_BASE: f32 = 0.4;
pub const GW_DRY_CURV: [f32; 2] = [0.0, 0.04];
pub const GW_DRY_SUN: f32 = 0.4;
pub const GW_DRY_ALPINE: [f32; 2] = [0.5, 0.5];
/// Sand on flat ground, along the wettest drainage and by the shore.
pub const GW_SAND_DEG: [f32; 2] = [6.0, 14.0];
pub const GW_SAND_WET: [f32; 2] = [0.8, 0.95];
/// Loose sediment (a layered run's, metres) takes the plants' place as sand: none from
/// 2 cm, all from half a metre (the depth from which the shader's grain is the sand's).
pub const GW_LOOSE_M: [f32; 2] = [0.02, 0.5];
/// Nothing grows under the sea: the plants' weight goes to sand below sea level, fading in
/// over this many metres down.
pub const GW_SUBMERGED_M: f32 = 2.0;
/// Snow: metres the patches raise the snowline by, metres over which it fades in, degrees
/// below the steepest it holds on over which it fades out, and its weight.
pub const GW_SNOW_PATCH_M: f32 = 60.0;
pub const GW_SNOW_FADE_M: f32 = 120.0;
pub const GW_SNOW_SLOPE_FADE_DEG: f32 = 14.0;
pub const GW_SNOW_GAIN: f32 = 4.0;

/// Every `GW_*` constant by name, as the shader declares them (`const float` or `const vec2`).
pub const SHADER_CONSTANTS: &[(&str, &[f32])] = &[
    ("GW_PATCH_CELLS", &[GW_PATCH_CELLS]),
    ("GW_PATCH_SLOPE_DEG", &[GW_PATCH_SLOPE_DEG]),
    ("GW_PATCH_HEIGHT_M", &[GW_PATCH_HEIGHT_M]),
    ("GW_HIGH_BELOW_SNOWLINE_M", &GW_HIGH_BELOW_SNOWLINE_M),
    ("GW_HIGH_SLOPE_DEG", &[GW_HIGH_SLOPE_DEG]),
    ("GW_SHADE_SLOPE_DEG", &GW_SHADE_SLOPE_DEG),
    ("GW_CLIFF_DEG", &GW_CLIFF_DEG),
    ("GW_ROCK_DEG", &GW_ROCK_DEG),
    ("GW_RIDGE_ROCK", &[GW_RIDGE_ROCK]),
    ("GW_RIDGE_CURV", &GW_RIDGE_CURV),
    ("GW_RIDGE_ROCK_DEG", &GW_RIDGE_ROCK_DEG),
    ("GW_RIDGE_ROCK_LOW", &[GW_RIDGE_ROCK_LOW]),
    ("GW_SCREE_FROM_DEG", &GW_SCREE_FROM_DEG),
    ("GW_SCREE_TO_DEG", &GW_SCREE_TO_DEG),
    ("GW_SCREE_CURV", &GW_SCREE_CURV),
    ("GW_SCREE_LOW", &[GW_SCREE_LOW]),
    ("GW_FELL_BELOW_SNOWLINE_M", &GW_FELL_BELOW_SNOWLINE_M),
    ("GW_FELL_THIN", &[GW_FELL_THIN]),
    ("GW_FELL_SCREE", &[GW_FELL_SCREE]),
    ("GW_FELL_FINE", &GW_FELL_FINE),
    ("GW_SOIL_BASE", &[GW_SOIL_BASE]),
    ("GW_SOIL_SLOPE", &[GW_SOIL_SLOPE]),
    ("GW_SOIL_FROM_DEG", &GW_SOIL_FROM_DEG),
    ("GW_SOIL_TO_DEG", &GW_SOIL_TO_DEG),
    ("GW_SOIL_SEDIMENT_M", &GW_SOIL_SEDIMENT_M),
    ("GW_MOIST", &GW_MOIST),
    ("GW_MOIST_PATCHES", &[GW_MOIST_PATCHES]),
    ("GW_MOIST_SHADE", &[GW_MOIST_SHADE]),
    ("GW_WETNESS_UNKNOWN", &[GW_WETNESS_UNKNOWN]),
    ("GW_PLANTS_DEG", &GW_PLANTS_DEG),
    ("GW_GRASS_MOIST", &GW_GRASS_MOIST),
    ("GW_GRASS_ALPINE", &GW_GRASS_ALPINE),
    ("GW_DRY_BASE", &[GW_DRY_BASE]),
    ("GW_DRY_CURV", &GW_DRY_CURV),
    ("GW_DRY_SUN", &[GW_DRY_SUN]),
    ("GW_DRY_ALPINE", &GW_DRY_ALPINE),
    ("GW_SAND_DEG", &GW_SAND_DEG),
    ("GW_SAND_WET", &GW_SAND_WET),
    ("GW_LOOSE_M", &GW_LOOSE_M),
    ("GW_SUBMERGED_M", &[GW_SUBMERGED_M]),
    ("GW_SNOW_PATCH_M", &[GW_SNOW_PATCH_M]),
    ("GW_SNOW_FADE_M", &[GW_SNOW_FADE_M]),
    ("GW_SNOW_SLOPE_FADE_DEG", &[GW_SNOW_SLOPE_FADE_DEG]),
    ("GW_SNOW_GAIN", &[GW_SNOW_GAIN]),
];

/// The shader's uniforms the weights depend on (its defaults; TerrainWorld passes the
/// values its material has).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundParams {
    /// The lowest altitude snow reaches (on the most shaded, north-facing faces), metres.
    pub snowline_m: f32,
    /// How much higher snow starts on sunny (south-facing) faces, metres.
    pub snowline_aspect_m: f32,
    /// Steeper than this, no snow, degrees.
    pub snow_max_slope_deg: f32,
    /// Sand this far above sea level, metres.
    pub shore_m: f32,
    /// The sea level, metres (-1e9: no sea).
    pub sea_level: f32,
}

impl Default for GroundParams {
    fn default() -> Self {
        GroundParams {
            snowline_m: 1800.0,
            snowline_aspect_m: 300.0,
            snow_max_slope_deg: 52.0,
            shore_m: 2.0,
            sea_level: -1.0e9,
        }
    }
}

impl GroundParams {
    /// Checks every value is finite; errors name the field.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("snowline_m", self.snowline_m),
            ("snowline_aspect_m", self.snowline_aspect_m),
            ("snow_max_slope_deg", self.snow_max_slope_deg),
            ("shore_m", self.shore_m),
            ("sea_level", self.sea_level),
        ] {
            if !v.is_finite() {
                return Err(OrogenError::invalid(
                    name,
                    format!("must be finite, got {v}"),
                ));
            }
        }
        Ok(())
    }
}

/// What decides a world's ground: the shader's uniforms and the painted ground, if any.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ground<'a> {
    pub params: GroundParams,
    pub paint: Option<&'a GroundPaint>,
}

/// The ground weights of a world, per cell: at most two layers non-zero, summing to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct GroundWeights {
    pub grid: Grid,
    pub data: Vec<[f32; LAYERS]>,
    /// Per cell the layer shown most, the second (equal to the first where only one
    /// shows) and the second's share, 0–1: Terrain3D's base, overlay and blend.
    pub pairs: Vec<Pair>,
}

/// The two layers a cell shows and the second's share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    pub first: u8,
    pub second: u8,
    pub blend: f32,
}

/// The maps the weights read, as plain data.
#[derive(Clone, Copy, Debug)]
pub struct GroundInputs<'a> {
    pub grid: Grid,
    pub heights: &'a [f32],
    /// Drainage (any units; wetness is its log over the log of its largest value).
    pub drainage: Option<&'a [f32]>,
    /// Loose sediment depth, metres (a layered run's).
    pub sediment: Option<&'a [f32]>,
}

impl<'a> GroundInputs<'a> {
    /// The heights, drainage and sediment depth of `world`.
    pub fn of(world: &'a World) -> Self {
        let scalar = |name: &str| match world.maps.get(name) {
            Some(MapData::Scalar(m)) if m.data.len() == world.height.data.len() => {
                Some(m.data.as_slice())
            }
            _ => None,
        };
        GroundInputs {
            grid: world.grid(),
            heights: &world.height.data,
            drainage: scalar(names::DRAINAGE),
            sediment: scalar(names::SEDIMENT_DEPTH),
        }
    }
}

/// The ground weights of `world` with `ground`'s uniforms and paint. Errors name
/// `ground` (paint of another size) or the uniform that is not finite.
pub fn ground_weights(world: &World, ground: &Ground<'_>) -> Result<GroundWeights> {
    weights_of(&GroundInputs::of(world), ground)
}

/// [`ground_weights`] over plain maps.
pub fn weights_of(inputs: &GroundInputs<'_>, ground: &Ground<'_>) -> Result<GroundWeights> {
    ground.params.validate()?;
    let grid = inputs.grid;
    if let Some(p) = ground.paint {
        if p.grid.width != grid.width || p.grid.height != grid.height {
            return Err(OrogenError::invalid(
                "ground",
                format!(
                    "the painted ground is {}×{} but the terrain is {}×{}",
                    p.grid.width, p.grid.height, grid.width, grid.height
                ),
            ));
        }
    }
    let auto = automatic_weights(inputs, &ground.params);
    let (data, pairs): (Vec<_>, Vec<_>) = auto
        .into_par_iter()
        .enumerate()
        .map(|(i, w)| {
            let w = match ground.paint {
                Some(p) => p.over(i, w),
                None => w,
            };
            let pair = strongest_pair(&w);
            let mut shown = [0.0; LAYERS];
            shown[pair.first as usize] += 1.0 - pair.blend;
            shown[pair.second as usize] += pair.blend;
            (shown, pair)
        })
        .unzip();
    Ok(GroundWeights { grid, data, pairs })
}

/// The two strongest of `w`, each less the third's weight, as the shader picks them
/// (same order of comparisons, so ties fall the same way).
pub fn strongest_pair(w: &[f32; LAYERS]) -> Pair {
    let (mut i1, mut i2) = (0usize, 1usize);
    if w[i2] > w[i1] {
        (i1, i2) = (1, 0);
    }
    let mut w3 = 0.0f32;
    for (i, &wi) in w.iter().enumerate().skip(2) {
        if wi > w[i1] {
            w3 = w[i2];
            i2 = i1;
            i1 = i;
        } else if wi > w[i2] {
            w3 = w[i2];
            i2 = i;
        } else {
            w3 = w3.max(wi);
        }
    }
    let a1 = (w[i1] - w3).max(1.0e-4);
    let a2 = (w[i2] - w3).max(0.0);
    let blend = a2 / (a1 + a2);
    if blend <= 0.0 {
        return Pair {
            first: i1 as u8,
            second: i1 as u8,
            blend: 0.0,
        };
    }
    Pair {
        first: i1 as u8,
        second: i2 as u8,
        blend,
    }
}

/// The simulation's weights per cell, normalised to sum to 1 (before paint and before the
/// pair is picked): the shader's formulas at each cell centre.
pub fn automatic_weights(inputs: &GroundInputs<'_>, params: &GroundParams) -> Vec<[f32; LAYERS]> {
    let grid = inputs.grid;
    let (w, h) = (grid.width, grid.height);
    let log_max = drainage_log_max(inputs);
    (0..grid.len())
        .into_par_iter()
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            cell_weights(inputs, params, log_max, x, y, w, h, (0, 0, w, h))
        })
        .collect()
}

/// [`weights_of`]'s pairs over the cells of `inner` (whole-map coordinates) of a map
/// `whole` cells wide and high, from `inputs` over `window` only (`inputs.grid` is the
/// window's size): `window` must hold `inner` and the one-cell ring around it inside the
/// map, as the slope, curvature, wetness and sediment stencils read it. `log_max` is
/// [`drainage_log_max`] of the whole map's inputs; `ground.paint`, if any, is the whole
/// map's. Gives the whole map's pairs bit for bit (one region of a Terrain3D export
/// written by the rank holding its cells, issue #41). Errors name `ground`.
pub fn pairs_in(
    inputs: &GroundInputs<'_>,
    ground: &Ground<'_>,
    log_max: f32,
    window: crate::field::Rect,
    whole: (usize, usize),
    inner: crate::field::Rect,
) -> Result<Vec<Pair>> {
    ground.params.validate()?;
    let (ww, wh) = (inputs.grid.width, inputs.grid.height);
    let ring = |a: usize, lo: usize| a.saturating_sub(1).max(lo);
    let fits = window.w == ww
        && window.h == wh
        && inputs.heights.len() == ww * wh
        && ring(inner.x0, 0) >= window.x0
        && ring(inner.y0, 0) >= window.y0
        && (inner.x0 + inner.w + 1).min(whole.0) <= window.x0 + window.w
        && (inner.y0 + inner.h + 1).min(whole.1) <= window.y0 + window.h
        && window.x0 + window.w <= whole.0
        && window.y0 + window.h <= whole.1;
    if !fits {
        return Err(OrogenError::invalid(
            "ground",
            format!("the window {window:?} does not hold the cells {inner:?} and their ring"),
        ));
    }
    if let Some(p) = ground.paint {
        if p.grid.width != whole.0 || p.grid.height != whole.1 {
            return Err(OrogenError::invalid(
                "ground",
                format!(
                    "the painted ground is {}×{} but the terrain is {}×{}",
                    p.grid.width, p.grid.height, whole.0, whole.1
                ),
            ));
        }
    }
    let place = (window.x0, window.y0, whole.0, whole.1);
    Ok((0..inner.len())
        .into_par_iter()
        .map(|i| {
            let (gx, gy) = (inner.x0 + i % inner.w, inner.y0 + i / inner.w);
            let (x, y) = ((gx - window.x0) as f32, (gy - window.y0) as f32);
            let w = cell_weights(inputs, &ground.params, log_max, x, y, ww, wh, place);
            let w = match ground.paint {
                Some(p) => p.over(gy * whole.0 + gx, w),
                None => w,
            };
            strongest_pair(&w)
        })
        .collect())
}

/// ln(1 + the largest drainage) of `inputs`, the wetness's scale (1 without drainage).
pub fn drainage_log_max(inputs: &GroundInputs<'_>) -> f32 {
    inputs.drainage.map_or(1.0, |d| {
        math::ln(1.0 + crate::field::finite_min_max(d).1.max(0.0))
    })
}

/// The weights the terrain shows at cell `(x, y)` (at most two layers, summing to 1), as
/// [`weights_of`] gives them for that cell, without computing the others: for what needs a
/// few cells' ground (the skirt samples the border). `log_max` is
/// [`drainage_log_max`] of `inputs`; `paint` must be on `inputs`' grid (else it is left out).
pub fn shown_weights_at(
    inputs: &GroundInputs<'_>,
    ground: &Ground<'_>,
    log_max: f32,
    x: usize,
    y: usize,
) -> [f32; LAYERS] {
    let grid = inputs.grid;
    let (w, h) = (grid.width, grid.height);
    let auto = cell_weights(
        inputs,
        &ground.params,
        log_max,
        x as f32,
        y as f32,
        w,
        h,
        (0, 0, w, h),
    );
    let w = match ground.paint {
        Some(p) if p.grid.width == w && p.grid.height == h => p.over(y * w + x, auto),
        _ => auto,
    };
    let pair = strongest_pair(&w);
    let mut shown = [0.0; LAYERS];
    shown[pair.first as usize] += 1.0 - pair.blend;
    shown[pair.second as usize] += pair.blend;
    shown
}

pub(crate) fn smoothstep(a: f32, b: f32, x: f32) -> f32 {
    let t = ((x - a) / (b - a)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn step2(e: [f32; 2], x: f32) -> f32 {
    smoothstep(e[0], e[1], x)
}

fn fetch(data: &[f32], w: usize, h: usize, x: i64, y: i64) -> f32 {
    let x = x.clamp(0, w as i64 - 1) as usize;
    let y = y.clamp(0, h as i64 - 1) as usize;
    data[y * w + x]
}

/// The shader's `bilinear`: cell centres at integers, clamped to the map.
fn bilinear(data: &[f32], w: usize, h: usize, cx: f32, cy: f32) -> f32 {
    let cx = cx.clamp(0.0, (w - 1) as f32);
    let cy = cy.clamp(0.0, (h - 1) as f32);
    let (fx, fy) = (cx.floor(), cy.floor());
    let (tx, ty) = (cx - fx, cy - fy);
    let (px, py) = (fx as i64, fy as i64);
    let f = |dx: i64, dy: i64| fetch(data, w, h, px + dx, py + dy);
    let a = f(0, 0) + (f(1, 0) - f(0, 0)) * tx;
    let b = f(0, 1) + (f(1, 1) - f(0, 1)) * tx;
    a + (b - a) * ty
}

/// The shader's `log_drainage`: ln(1 + drainage) interpolated bilinearly between the cells'
/// logs (the log of the interpolated drainage steps at every cell next to a river: a river
/// cell's drainage is thousands of times its neighbours').
fn log_drainage(data: &[f32], w: usize, h: usize, cx: f32, cy: f32) -> f32 {
    let cx = cx.clamp(0.0, (w - 1) as f32);
    let cy = cy.clamp(0.0, (h - 1) as f32);
    let (fx, fy) = (cx.floor(), cy.floor());
    let (tx, ty) = (cx - fx, cy - fy);
    let (px, py) = (fx as i64, fy as i64);
    let f = |dx: i64, dy: i64| math::ln(1.0 + fetch(data, w, h, px + dx, py + dy).max(0.0));
    let a = f(0, 0) + (f(1, 0) - f(0, 0)) * tx;
    let b = f(0, 1) + (f(1, 1) - f(0, 1)) * tx;
    a + (b - a) * ty
}

/// The shader's `filtered`: the mean of four bilinear samples at ± r.
fn filtered(data: &[f32], w: usize, h: usize, cx: f32, cy: f32, r: f32) -> f32 {
    0.25 * (bilinear(data, w, h, cx - r, cy - r)
        + bilinear(data, w, h, cx + r, cy - r)
        + bilinear(data, w, h, cx - r, cy + r)
        + bilinear(data, w, h, cx + r, cy + r))
}

fn fract(v: f32) -> f32 {
    v - v.floor()
}

/// The shader's `hash3`.
fn hash3(p: [f32; 3]) -> f32 {
    let mut p = p.map(|v| fract(v * 0.1031));
    let d = p[0] * (p[2] + 31.32) + p[1] * (p[1] + 31.32) + p[2] * (p[0] + 31.32);
    p = p.map(|v| v + d);
    fract((p[0] + p[1]) * p[2])
}

fn mix(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// The shader's `value_noise`, in [-1, 1].
fn value_noise(p: [f32; 3]) -> f32 {
    let i = p.map(f32::floor);
    let f = [p[0] - i[0], p[1] - i[1], p[2] - i[2]];
    let u = f.map(|f| f * f * f * (f * (f * 6.0 - 15.0) + 10.0));
    let hsh = |dx: f32, dy: f32, dz: f32| hash3([i[0] + dx, i[1] + dy, i[2] + dz]);
    let a = mix(
        mix(hsh(0., 0., 0.), hsh(1., 0., 0.), u[0]),
        mix(hsh(0., 1., 0.), hsh(1., 1., 0.), u[0]),
        u[1],
    );
    let b = mix(
        mix(hsh(0., 0., 1.), hsh(1., 0., 1.), u[0]),
        mix(hsh(0., 1., 1.), hsh(1., 1., 1.), u[0]),
        u[1],
    );
    2.0 * mix(a, b, u[2]) - 1.0
}

/// The shader's `detail_fbm`.
fn detail_fbm(p: [f32; 3], mut wavelength: f32, octaves: usize, pixel: f32) -> f32 {
    let (mut sum, mut amp) = (0.0, 0.5);
    for k in 0..octaves {
        let fade = smoothstep(2.0 * pixel, 4.0 * pixel, wavelength);
        let o = k as f32 * 17.3;
        sum += amp * fade * value_noise(p.map(|v| v / wavelength + o));
        wavelength *= 0.5;
        amp *= 0.55;
    }
    sum
}

/// One cell's weights (normalised), the shader's fragment at footprint 1. `(x, y)` is the
/// cell in `inputs` (`w × h`), which is the window at `(ox, oy)` of a map `ww × wh`: the
/// spans at the map's border and the patches' positions are the whole map's.
#[allow(clippy::too_many_arguments)]
fn cell_weights(
    inputs: &GroundInputs<'_>,
    params: &GroundParams,
    log_max: f32,
    x: f32,
    y: f32,
    w: usize,
    h: usize,
    (ox, oy, ww, wh): (usize, usize, usize, usize),
) -> [f32; LAYERS] {
    let hf = inputs.heights;
    let (dx, dy) = (inputs.grid.dx(), inputs.grid.dy());
    let hc = bilinear(hf, w, h, x, y);
    let hw = bilinear(hf, w, h, x - 1.0, y);
    let he = bilinear(hf, w, h, x + 1.0, y);
    let hn = bilinear(hf, w, h, x, y - 1.0);
    let hs = bilinear(hf, w, h, x, y + 1.0);
    // The spans sampled, one-sided at the border (as the shader has them).
    let (gx, gy) = (x + ox as f32, y + oy as f32);
    let sx = ((gx + 1.0).min((ww - 1) as f32) - (gx - 1.0).max(0.0)).max(1.0e-3);
    let sy = ((gy + 1.0).min((wh - 1) as f32) - (gy - 1.0).max(0.0)).max(1.0e-3);
    let n = [(hw - he) * sy * dy, sx * sy * dx * dy, (hn - hs) * sx * dx];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    let n = n.map(|v| v / len);
    let r = 0.5;
    let cell = dx.max(dy);
    let slope_deg = math::acos(n[1].clamp(0.0, 1.0)).to_degrees();
    let curv = (hw + he + hn + hs - 4.0 * hc) / (4.0 * cell);
    let d = match inputs.drainage {
        Some(dr) => {
            let ld = |cx: f32, cy: f32| log_drainage(dr, w, h, cx, cy);
            0.25 * (ld(x - r, y - r) + ld(x + r, y - r) + ld(x - r, y + r) + ld(x + r, y + r))
                / log_max.max(1.0e-6)
        }
        None => GW_WETNESS_UNKNOWN,
    };
    let sediment = inputs
        .sediment
        .map_or(0.0, |s| filtered(s, w, h, x, y, 0.5));
    let p = [gx * dx, hc, gy * dy];
    // One sample per cell: a "pixel" one cell wide.
    let patches = detail_fbm(p, GW_PATCH_CELLS * cell, 3, cell);

    let snowline = params.snowline_m;
    let mut s = slope_deg + GW_PATCH_SLOPE_DEG * patches;
    let high = smoothstep(
        snowline - GW_HIGH_BELOW_SNOWLINE_M[0],
        snowline - GW_HIGH_BELOW_SNOWLINE_M[1],
        hc + GW_PATCH_HEIGHT_M * patches,
    );
    s += GW_HIGH_SLOPE_DEG * high;
    let nxz = (n[0] * n[0] + n[2] * n[2]).sqrt();
    let shade = (-n[2] / nxz.max(1.0e-3)).clamp(-1.0, 1.0) * step2(GW_SHADE_SLOPE_DEG, slope_deg);
    let mut wt = [0.0f32; LAYERS];
    wt[CLIFF] = step2(GW_CLIFF_DEG, s);
    wt[ROCK] = step2(GW_ROCK_DEG, s) * (1.0 - wt[CLIFF])
        + GW_RIDGE_ROCK
            * step2(GW_RIDGE_CURV, -curv)
            * step2(GW_RIDGE_ROCK_DEG, s)
            * (GW_RIDGE_ROCK_LOW + high);
    wt[SCREE] = step2(GW_SCREE_FROM_DEG, s)
        * (1.0 - step2(GW_SCREE_TO_DEG, s))
        * step2(GW_SCREE_CURV, curv)
        * (GW_SCREE_LOW + high);
    wt[SOIL] = GW_SOIL_BASE
        + GW_SOIL_SLOPE * step2(GW_SOIL_FROM_DEG, s) * (1.0 - step2(GW_SOIL_TO_DEG, s))
        + step2(GW_SOIL_SEDIMENT_M, sediment);
    let moist = step2(
        GW_MOIST,
        d + GW_MOIST_PATCHES * patches + GW_MOIST_SHADE * shade,
    );
    // Fell-field: plants thin out over stony ground under the snowline.
    let fine = detail_fbm(p, GW_FELL_FINE[0], 4, cell);
    let fell = smoothstep(
        snowline - GW_FELL_BELOW_SNOWLINE_M[0],
        snowline - GW_FELL_BELOW_SNOWLINE_M[1],
        hc + GW_PATCH_HEIGHT_M * patches + GW_FELL_FINE[1] * fine,
    );
    wt[SCREE] += GW_FELL_SCREE * fell;
    let plants = (1.0 - step2(GW_PLANTS_DEG, s)) * (1.0 - GW_FELL_THIN * fell);
    let alpine = 1.0 - high;
    wt[GRASS] = plants
        * (GW_GRASS_MOIST[0] + GW_GRASS_MOIST[1] * moist)
        * (GW_GRASS_ALPINE[0] + GW_GRASS_ALPINE[1] * alpine);
    wt[DRY_GRASS] = plants
        * (1.0 - moist)
        * (GW_DRY_BASE + step2(GW_DRY_CURV, -curv) + GW_DRY_SUN * (-shade).max(0.0))
        * (GW_DRY_ALPINE[0] + GW_DRY_ALPINE[1] * alpine);
    let flat_ground = 1.0 - step2(GW_SAND_DEG, s);
    wt[SAND] = flat_ground
        * (step2(GW_SAND_WET, d)
            + (1.0 - smoothstep(0.0, params.shore_m, hc - params.sea_level + patches)));
    // Nothing grows on loose sediment: its plants are sand (a layered terrain's dunes were
    // exported as grass, drawn as sand).
    let loose = step2(GW_LOOSE_M, sediment);
    wt[SAND] += (wt[GRASS] + wt[DRY_GRASS]) * loose;
    wt[GRASS] *= 1.0 - loose;
    wt[DRY_GRASS] *= 1.0 - loose;
    let submerged = 1.0 - smoothstep(params.sea_level - GW_SUBMERGED_M, params.sea_level, hc);
    wt[SAND] += (wt[GRASS] + wt[DRY_GRASS]) * submerged;
    wt[GRASS] *= 1.0 - submerged;
    wt[DRY_GRASS] *= 1.0 - submerged;
    let snow_from = snowline
        + params.snowline_aspect_m * 0.5 * (1.0 - shade)
        + GW_SNOW_PATCH_M * patches.max(0.0);
    wt[SNOW] = smoothstep(snow_from, snow_from + GW_SNOW_FADE_M, hc)
        * (1.0
            - smoothstep(
                params.snow_max_slope_deg - GW_SNOW_SLOPE_FADE_DEG,
                params.snow_max_slope_deg,
                slope_deg,
            ))
        * GW_SNOW_GAIN;
    let total: f32 = wt.iter().sum();
    wt.map(|v| v / total.max(1.0e-6))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Rect;

    /// The shader file's `const float NAME = v;` and `const vec2 NAME = vec2(a, b);`.
    fn shader_constants() -> Vec<(String, Vec<f32>)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../addons/orogen/runtime/terrain.gdshader"
        );
        let text = std::fs::read_to_string(path).expect("the terrain shader");
        text.lines()
            .filter_map(|l| {
                let l = l.trim().strip_prefix("const ")?;
                let (_ty, rest) = l.split_once(' ')?;
                let (name, value) = rest.split_once('=')?;
                let value = value.trim().trim_end_matches(';');
                let value = value
                    .strip_prefix("vec2(")
                    .map_or(value, |v| v.trim_end_matches(')'));
                let nums = value
                    .split(',')
                    .map(|v| v.trim().parse::<f32>().expect(v))
                    .collect();
                Some((name.trim().to_string(), nums))
            })
            .collect()
    }

    #[test]
    fn the_shader_has_these_constants() {
        let shader = shader_constants();
        for (name, value) in SHADER_CONSTANTS {
            let found = shader.iter().find(|(n, _)| n == name);
            assert_eq!(
                found.map(|(_, v)| v.as_slice()),
                Some(*value),
                "{name}: terrain.gdshader has {found:?}"
            );
        }
        let gw = shader.iter().filter(|(n, _)| n.starts_with("GW_")).count();
        assert_eq!(gw, SHADER_CONSTANTS.len(), "the shader's GW_ constants");
    }

    #[test]
    fn pairs_over_a_window_are_the_whole_maps() {
        // A region's pairs from its window alone (the cells and their one-cell ring) are
        // the whole map's, bit for bit, wherever the window lies: at the map's edges (the
        // stencils' spans and clamps), inside (the patches at whole-map positions).
        let (w, h) = (37usize, 29usize);
        let mut state = 99u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let heights: Vec<f32> = (0..w * h).map(|_| 1500.0 * next()).collect();
        let drainage: Vec<f32> = (0..w * h).map(|_| math::exp(12.0 * next())).collect();
        let sediment: Vec<f32> = (0..w * h).map(|_| next()).collect();
        let grid = Grid::new(w, h, 30.0).unwrap();
        let whole = GroundInputs {
            grid,
            heights: &heights,
            drainage: Some(&drainage),
            sediment: Some(&sediment),
        };
        let ground = Ground::default();
        let want = weights_of(&whole, &ground).unwrap().pairs;
        let log_max = drainage_log_max(&whole);
        let cut = |v: &[f32], r: Rect| -> Vec<f32> {
            (r.y0..r.y0 + r.h)
                .flat_map(|y| (r.x0..r.x0 + r.w).map(move |x| (x, y)))
                .map(|(x, y)| v[y * w + x])
                .collect()
        };
        let rects = [
            (0, 0, 10, 10),
            (10, 7, 16, 11),
            (30, 20, 7, 9),
            (0, 0, w, h),
        ];
        for (x0, y0, rw, rh) in rects {
            let inner = Rect {
                x0,
                y0,
                w: rw,
                h: rh,
            };
            let (wx0, wy0) = (x0.saturating_sub(1), y0.saturating_sub(1));
            let window = Rect {
                x0: wx0,
                y0: wy0,
                w: (x0 + rw + 1).min(w) - wx0,
                h: (y0 + rh + 1).min(h) - wy0,
            };
            let (hw, dw, sw) = (
                cut(&heights, window),
                cut(&drainage, window),
                cut(&sediment, window),
            );
            let inputs = GroundInputs {
                grid: Grid::new(window.w, window.h, 30.0).unwrap(),
                heights: &hw,
                drainage: Some(&dw),
                sediment: Some(&sw),
            };
            let got = pairs_in(&inputs, &ground, log_max, window, (w, h), inner).unwrap();
            let want: Vec<Pair> = cut_pairs(&want, w, inner);
            let bits = |p: &[Pair]| {
                p.iter()
                    .map(|p| (p.first, p.second, p.blend.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&got), bits(&want), "{inner:?}");
            // A window short of the ring is refused, naming `ground`.
            if x0 > 0 {
                let short = Rect {
                    x0: window.x0 + 1,
                    w: window.w - 1,
                    ..window
                };
                let hs = cut(&heights, short);
                let inputs = GroundInputs {
                    grid: Grid::new(short.w, short.h, 30.0).unwrap(),
                    heights: &hs,
                    drainage: None,
                    sediment: None,
                };
                let e = pairs_in(&inputs, &ground, log_max, short, (w, h), inner).unwrap_err();
                assert!(e.to_string().contains("ground"), "{e}");
            }
        }
    }

    fn cut_pairs(p: &[Pair], w: usize, r: Rect) -> Vec<Pair> {
        (r.y0..r.y0 + r.h)
            .flat_map(|y| (r.x0..r.x0 + r.w).map(move |x| p[y * w + x]))
            .collect()
    }

    #[test]
    fn wetness_falls_off_smoothly_beside_a_river() {
        // A river column (drainage 1e6) on ground of drainage 1: across it the wetness must
        // fall as a ramp, never a step. The log of the interpolated drainage stayed within
        // ln(100) of the river's log up to 0.99 cells out and dropped to 0 at 1.0: the dark
        // square drawn beside every river cell.
        let (w, h) = (9usize, 5usize);
        let mut d = vec![1.0f32; w * h];
        for y in 0..h {
            d[y * w + 4] = 1.0e6;
        }
        let (lr, l1) = (math::ln(1.0 + 1.0e6), math::ln(2.0));
        let mut prev = log_drainage(&d, w, h, 4.0, 2.3);
        assert!((prev - lr).abs() < 1e-3 * lr);
        for k in 1..=300 {
            let x = 4.0 + k as f32 * 0.01;
            let v = log_drainage(&d, w, h, x, 2.3);
            assert!(
                (prev - v).abs() <= (lr - l1) * 0.01 * 1.001,
                "at x = {x}: {prev} then {v}"
            );
            prev = v;
        }
        assert!((prev - l1).abs() < 1e-5);
    }

    #[test]
    fn loose_sediment_is_sand_not_plants() {
        // Flat dry ground: plants everywhere; under a metre of loose sediment, sand.
        let grid = Grid::new(24, 24, 10.0).unwrap();
        let heights = vec![100.0f32; grid.len()];
        let bare = vec![0.0f32; grid.len()];
        let covered = vec![1.0f32; grid.len()];
        let params = GroundParams::default();
        let weights = |sediment: &[f32]| {
            automatic_weights(
                &GroundInputs {
                    grid,
                    heights: &heights,
                    drainage: None,
                    sediment: Some(sediment),
                },
                &params,
            )
        };
        for w in weights(&bare) {
            assert!(w[GRASS] + w[DRY_GRASS] > 0.5, "bare flat ground: {w:?}");
        }
        for w in weights(&covered) {
            assert_eq!(w[GRASS] + w[DRY_GRASS], 0.0, "{w:?}");
            assert!(w[SAND] > w[SOIL] && w[SAND] > 0.5, "covered ground: {w:?}");
        }
    }

    #[test]
    fn nothing_grows_under_the_sea() {
        // A steep hillside (20°, plants hold) running from 60 m under the sea to 60 m
        // above it: grass above the water, sand from GW_SUBMERGED_M down, on the same slope.
        let grid = Grid::new(64, 16, 10.0).unwrap();
        let rise = 10.0 * math::tan(20f32.to_radians());
        let heights: Vec<f32> = (0..grid.len())
            .map(|i| (i % 64) as f32 * rise - 32.0 * rise)
            .collect();
        let params = GroundParams {
            sea_level: 0.0,
            ..GroundParams::default()
        };
        let weights = automatic_weights(
            &GroundInputs {
                grid,
                heights: &heights,
                drainage: None,
                sediment: None,
            },
            &params,
        );
        for (i, w) in weights.iter().enumerate() {
            let (x, y) = (i % 64, i / 64);
            if !(2..62).contains(&x) || !(2..14).contains(&y) {
                continue;
            }
            let h = heights[i];
            if h < -GW_SUBMERGED_M {
                assert_eq!(w[GRASS] + w[DRY_GRASS], 0.0, "{h} m: {w:?}");
                assert!(w[SAND] > 0.5, "{h} m: {w:?}");
            } else if h > 10.0 {
                assert!(w[GRASS] + w[DRY_GRASS] > 0.5, "{h} m: {w:?}");
            }
        }
    }

    #[test]
    fn plants_thin_out_over_stony_ground_under_the_snowline() {
        // A gentle slope (5°) from 800 m under the default snowline up past it: meadow far
        // down, stony ground (scree) leading over the plants in the last 100 m.
        let grid = Grid::new(128, 8, 100.0).unwrap();
        let rise = 100.0 * math::tan(5f32.to_radians());
        let params = GroundParams::default();
        let base = params.snowline_m - 800.0;
        let heights: Vec<f32> = (0..grid.len())
            .map(|i| base + (i % 128) as f32 * rise)
            .collect();
        let weights = automatic_weights(
            &GroundInputs {
                grid,
                heights: &heights,
                drainage: None,
                sediment: None,
            },
            &params,
        );
        let share = |w: &[f32; LAYERS], k: &[usize]| {
            k.iter().map(|&l| w[l]).sum::<f32>() / w.iter().sum::<f32>().max(1e-6)
        };
        let mut saw = (false, false);
        for (i, w) in weights.iter().enumerate() {
            let (x, y) = (i % 128, i / 128);
            if !(2..126).contains(&x) || !(2..6).contains(&y) {
                continue;
            }
            let below = params.snowline_m - heights[i];
            let plants = share(w, &[GRASS, DRY_GRASS]);
            if below > GW_FELL_BELOW_SNOWLINE_M[0] + 100.0 {
                assert!(plants > 0.5, "{below} m under the snowline: {w:?}");
                saw.0 = true;
            } else if below < GW_FELL_BELOW_SNOWLINE_M[1] + 50.0 && below > 20.0 {
                assert!(
                    w[SCREE] > w[GRASS] && w[SCREE] > w[DRY_GRASS],
                    "{below} m: {w:?}"
                );
                saw.1 = true;
            }
        }
        assert!(saw.0 && saw.1, "the slope spans meadow and fell-field");
    }

    #[test]
    fn noise_matches_the_shader_lattice() {
        // At lattice points value noise is 2·hash − 1; hash3 is in [0, 1).
        for p in [[0.0, 0.0, 0.0], [3.0, 7.0, 1.0], [-5.0, 2.0, 17.0]] {
            let v = value_noise(p);
            assert!((v - (2.0 * hash3(p) - 1.0)).abs() < 1e-6);
            assert!((-1.0..=1.0).contains(&v));
        }
    }
}
