//! Procedural noise terrain: fBm, ridged and multifractal sums, per-octave rotation,
//! domain warping, anisotropy and faulting.
//!
//! Galin et al. 2019 §3.1.3: fractional Brownian motion t(p) = Σ aᵢ·n(φᵢ·p) with
//! aᵢ = a₀·persistenceⁱ and φᵢ = φ₀·lacunarityⁱ; ridge noise r = 1 − |n|; multifractal
//! sums t_{k+1} = α(t_k)·a_{k+1}·n(φ_{k+1}·p) + t_k; per-octave affine maps n(Rᵢ·p + vᵢ)
//! against grid artefacts; warping n∘ω(p) by low-frequency noise offsets.
//!
//! Every cell is sampled at its centre in metres, `(x·dx, y·dy)` (`dx = dy = cell_size`
//! for square cells), so one recipe at another `cell_size` covers another extent with the
//! same features in metres.
//! Octave seeds, rotations and offsets come from a `ChaCha8Rng` of the recipe seed; rows
//! are filled in parallel, each cell on its own, so the bytes do not depend on threads.
//! Within a row the cells go in batches of 8 or 16 lanes (`eval_points`), compiled for the
//! best SIMD level of the CPU; each lane runs the one-cell operations in the same order,
//! so the bytes do not depend on the level either.

use crate::math;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{check_finite, check_positive, check_range, OrogenError, Result};
use crate::field::{Grid, Heightfield, Rect, ScalarMap};
use crate::generators::fastnoise::{self, FastNoiseLiteParams};
pub use crate::generators::faults::MAX_HEIGHT;
use crate::generators::faults::{FaultSet, Faults};
use crate::generators::perlin::{Level, Perlin};
use crate::schema::{FieldInfo, FieldKind};

/// Largest accepted octave count.
pub const MAX_OCTAVES: u32 = 32;
/// Largest accepted lacunarity (32 octaves at 16 already reach 16³¹ times the base frequency).
pub const MAX_LACUNARITY: f32 = 16.0;
/// Largest noise-space coordinate accepted; beyond it f64 loses the fraction that noise needs.
const MAX_NOISE_COORD: f64 = 1.0e12;

// ChaCha8 streams of the recipe seed, one per random choice, so that adding warp or
// faults never changes the octaves.
const STREAM_OCTAVES: u64 = 1;
const STREAM_WARP: u64 = 2;

/// How octaves combine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum NoiseKind {
    /// Fractional Brownian motion Σ aᵢ·nᵢ: rolling hills. Heights within `offset ± A`,
    /// A = Σ amplitude·persistenceⁱ.
    #[default]
    Fbm,
    /// Ridge noise Σ aᵢ·(1 − |nᵢ|): crest lines of young mountains. Heights within
    /// `[offset, offset + A]`.
    Ridged,
    /// Multifractal sum of noise: each octave after the first is weighted by
    /// α = 1 + t/Aₖ (clamped to [0, 2]) of the normalised sum so far, smoothing lows and
    /// roughening highs. Heights within `offset ± (a₀ + 2·Σᵢ≥₁ aᵢ)`.
    Multifractal,
    /// Multifractal sum of ridge noise, α = 2·t/Aₖ (clamped to [0, 2]): smooth plains,
    /// ridged ranges. Heights within `[offset, offset + a₀ + 2·Σᵢ≥₁ aᵢ]`.
    RidgedMultifractal,
}

/// The smooth noise function n summed by the octaves; each returns values in [−1, 1].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum NoiseBasis {
    /// Gradient (Perlin) noise.
    #[default]
    Perlin,
    /// OpenSimplex noise: fewer axis-aligned artefacts than Perlin.
    OpenSimplex,
    /// SuperSimplex noise: smoother than OpenSimplex, a little slower.
    SuperSimplex,
    /// Godot's `FastNoiseLite` resource, bit for bit, in place of the whole octave sum:
    /// heights `offset + amplitude · get_noise_2d(x, y)` (see [`fastnoise`]).
    FastNoiseLite(FastNoiseLiteParams),
}

/// Domain warping: positions are displaced by low-frequency noise before the octaves
/// are sampled (Galin 2019 §3.1.3, "Warping").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Warp {
    /// Largest displacement, metres (≥ 0). Default 2000.
    pub strength: f32,
    /// Feature size of the warping noise, metres (> 0). Default 40000.
    pub wavelength: f32,
    /// Octaves of the warping noise, 1..=8 (each half the wavelength and amplitude of the
    /// one before). Default 2.
    pub octaves: u32,
}

impl Default for Warp {
    fn default() -> Self {
        Warp {
            strength: 2000.0,
            wavelength: 40_000.0,
            octaves: 2,
        }
    }
}

impl Warp {
    /// Checks ranges; `field` prefixes error names (e.g. `terrain.Noise.warp`).
    pub fn validate(&self, field: &str) -> Result<()> {
        check_range(
            &format!("{field}.strength"),
            self.strength as f64,
            0.0,
            f64::MAX,
        )?;
        check_positive(&format!("{field}.wavelength"), self.wavelength as f64)?;
        check_count(&format!("{field}.octaves"), self.octaves, 8)
    }
}

/// Noise terrain parameters. RON: `Noise(kind: Ridged, octaves: 8, wavelength: 20000.0,
/// amplitude: 800.0, warp: (strength: 1500.0), faults: (count: 50))`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NoiseParams {
    /// How octaves combine: `Fbm`, `Ridged`, `Multifractal` or `RidgedMultifractal`.
    /// Default `Fbm`.
    pub kind: NoiseKind,
    /// Noise function summed by the octaves: `Perlin`, `OpenSimplex` or `SuperSimplex`; or
    /// `FastNoiseLite(...)`, Godot's resource verbatim, which replaces the octave sum (kind,
    /// octaves, wavelength, lacunarity, persistence, rotate_octaves unused; warp, stretch
    /// refused; amplitude, offset and faults apply). Default `Perlin`.
    pub basis: NoiseBasis,
    /// Number of octaves, 1..=32. Default 8.
    pub octaves: u32,
    /// Feature size (period of the noise lattice) of the first octave, metres (> 0).
    /// Default 20000.
    pub wavelength: f32,
    /// Frequency ratio between successive octaves, dimensionless, in (0, 16]. Default 2.
    pub lacunarity: f32,
    /// Amplitude ratio between successive octaves (gain), dimensionless, in [0, 1].
    /// Default 0.5.
    pub persistence: f32,
    /// Amplitude of the first octave, metres, within ±1e7. Default 500.
    pub amplitude: f32,
    /// Height added to every cell, metres, within ±1e7. Default 0.
    pub offset: f32,
    /// Give each octave a random rotation and offset against grid-aligned artefacts.
    /// Default true.
    pub rotate_octaves: bool,
    /// Anisotropy: features are `stretch` times longer along `stretch_angle` than across
    /// it, dimensionless, in [0.05, 20]. Default 1 (isotropic).
    pub stretch: f32,
    /// Direction of the stretch, degrees from east (x) towards south (y). Default 0.
    pub stretch_angle: f32,
    /// Domain warping by low-frequency noise. Default none.
    pub warp: Option<Warp>,
    /// Faulting by random lines or circles, added to the noise. Default none.
    pub faults: Option<Faults>,
}

impl Default for NoiseParams {
    fn default() -> Self {
        NoiseParams {
            kind: NoiseKind::Fbm,
            basis: NoiseBasis::Perlin,
            octaves: 8,
            wavelength: 20_000.0,
            lacunarity: 2.0,
            persistence: 0.5,
            amplitude: 500.0,
            offset: 0.0,
            rotate_octaves: true,
            stretch: 1.0,
            stretch_angle: 0.0,
            warp: None,
            faults: None,
        }
    }
}

/// The octave combinations a [`NoiseParams::kind`] can name, for editors.
pub const NOISE_KINDS: &[&str] = &["Fbm", "Ridged", "Multifractal", "RidgedMultifractal"];

/// The plain noise functions a [`NoiseParams::basis`] can name, for editors
/// (`FastNoiseLite(..)` takes a Godot resource and is edited as RON).
pub const NOISE_BASES: &[&str] = &["Perlin", "OpenSimplex", "SuperSimplex"];

/// The number fields of [`NoiseParams`], in recipe order, for editors (`kind` and `basis`
/// are [`NOISE_KINDS`] and [`NOISE_BASES`]; `warp` and `faults` are nested blocks).
pub const NOISE_FIELDS: &[FieldInfo] = &[
    FieldInfo::new(
        "amplitude",
        "m",
        0.0,
        5000.0,
        FieldKind::Number,
        "Height of the first octave, metres, within ±1e7: how high the hills and ranges rise.",
    ),
    FieldInfo::new(
        "wavelength",
        "m",
        10.0,
        200_000.0,
        FieldKind::Number,
        "Feature size of the first octave, metres (> 0): the distance between the big hills.",
    ),
    FieldInfo::new(
        "octaves",
        "",
        1.0,
        32.0,
        FieldKind::Integer,
        "Number of octaves, 1 to 32: each adds finer detail.",
    ),
    FieldInfo::new(
        "lacunarity",
        "",
        1.0,
        4.0,
        FieldKind::Number,
        "Frequency ratio between successive octaves, in (0, 16]: 2 halves each octave's features.",
    ),
    FieldInfo::new(
        "persistence",
        "",
        0.0,
        1.0,
        FieldKind::Number,
        "Amplitude ratio between successive octaves, 0 to 1: higher keeps more fine detail.",
    ),
    FieldInfo::new(
        "offset",
        "m",
        -5000.0,
        5000.0,
        FieldKind::Number,
        "Height added everywhere, metres, within ±1e7.",
    ),
    FieldInfo::new(
        "stretch",
        "",
        0.05,
        20.0,
        FieldKind::Number,
        "Features are this many times longer along the stretch direction than across it, 0.05 to 20 (1: no stretch).",
    ),
    FieldInfo::new(
        "stretch_angle",
        "deg",
        0.0,
        180.0,
        FieldKind::Number,
        "Direction of the stretch, degrees from east towards south.",
    ),
];

fn check_count(field: &str, value: u32, max: u32) -> Result<()> {
    if value == 0 || value > max {
        return Err(OrogenError::invalid(
            field,
            format!("must be between 1 and {max}, got {value}"),
        ));
    }
    Ok(())
}

impl NoiseParams {
    /// Checks ranges; `field` prefixes error names (e.g. `terrain.Noise`).
    pub fn validate(&self, field: &str) -> Result<()> {
        check_count(&format!("{field}.octaves"), self.octaves, MAX_OCTAVES)?;
        check_positive(&format!("{field}.wavelength"), self.wavelength as f64)?;
        check_positive(&format!("{field}.lacunarity"), self.lacunarity as f64)?;
        check_range(
            &format!("{field}.lacunarity"),
            self.lacunarity as f64,
            0.0,
            MAX_LACUNARITY as f64,
        )?;
        check_range(
            &format!("{field}.persistence"),
            self.persistence as f64,
            0.0,
            1.0,
        )?;
        let m = MAX_HEIGHT as f64;
        check_range(&format!("{field}.amplitude"), self.amplitude as f64, -m, m)?;
        check_range(&format!("{field}.offset"), self.offset as f64, -m, m)?;
        check_range(&format!("{field}.stretch"), self.stretch as f64, 0.05, 20.0)?;
        check_finite(&format!("{field}.stretch_angle"), self.stretch_angle as f64)?;
        if let Some(w) = &self.warp {
            w.validate(&format!("{field}.warp"))?;
        }
        if let Some(f) = &self.faults {
            f.validate(&format!("{field}.faults"))?;
        }
        if let NoiseBasis::FastNoiseLite(f) = &self.basis {
            f.validate(&format!("{field}.basis.FastNoiseLite"))?;
            for (set, name, instead) in [
                (self.kind != NoiseKind::Fbm, "kind", "use its fractal_type"),
                (self.warp.is_some(), "warp", "use its domain_warp_enabled"),
                (self.stretch != 1.0, "stretch", "leave stretch at 1"),
            ] {
                if set {
                    return Err(fastnoise::not_applicable(field, name, instead));
                }
            }
        }
        Ok(())
    }

    /// [`NoiseParams::validate`], and that the finest octave fits `grid`'s extent; errors
    /// name `{field}.wavelength` (the recipe checks every noise of a recipe so, with its
    /// full path: a tiny wavelength anywhere was reported as `noise.octaves`, fuzz finding
    /// #39.8).
    pub fn validate_on(&self, field: &str, grid: Grid) -> Result<()> {
        self.validate(field)?;
        if matches!(self.basis, NoiseBasis::FastNoiseLite(_)) {
            return Ok(());
        }
        let (ex, ey) = (
            grid.width as f64 * grid.dx() as f64,
            grid.height as f64 * grid.dy() as f64,
        );
        check_reach(&Sampler::new(self, 0), self, field, ex, ey)
    }

    /// Amplitude of octave `i`, metres.
    fn octave_amplitude(&self, i: u32) -> f64 {
        self.amplitude as f64 * (self.persistence as f64).powi(i as i32)
    }

    /// The range the octave sum stays in, metres, before faults: `(low, high)`.
    /// See [`NoiseKind`] for each kind's formula.
    pub fn bounds(&self) -> (f64, f64) {
        let a0 = self.octave_amplitude(0).abs();
        let rest: f64 = (1..self.octaves)
            .map(|i| self.octave_amplitude(i).abs())
            .sum();
        let (lo, hi) = match self.kind {
            NoiseKind::Fbm => (-(a0 + rest), a0 + rest),
            NoiseKind::Ridged => (0.0, a0 + rest),
            NoiseKind::Multifractal => (-(a0 + 2.0 * rest), a0 + 2.0 * rest),
            NoiseKind::RidgedMultifractal => (0.0, a0 + 2.0 * rest),
        };
        // A negative amplitude flips the range.
        let (lo, hi) = if self.amplitude < 0.0 {
            (-hi, -lo)
        } else {
            (lo, hi)
        };
        (lo + self.offset as f64, hi + self.offset as f64)
    }
}

/// One of the noise functions, seeded.
#[derive(Clone)]
enum Basis {
    Perlin(Perlin),
    OpenSimplex(noise::OpenSimplex),
    SuperSimplex(noise::SuperSimplex),
}

impl Basis {
    fn new(kind: NoiseBasis, seed: u32) -> Self {
        match kind {
            NoiseBasis::Perlin => Basis::Perlin(Perlin::new(seed)),
            NoiseBasis::OpenSimplex => Basis::OpenSimplex(noise::OpenSimplex::new(seed)),
            NoiseBasis::SuperSimplex => Basis::SuperSimplex(noise::SuperSimplex::new(seed)),
            // Never sampled: `generate_cancellable` hands this basis to `fastnoise` first.
            NoiseBasis::FastNoiseLite(_) => Basis::Perlin(Perlin::new(seed)),
        }
    }

    /// n(u, v) in [−1, 1] (clamped: some bases overshoot by rounding).
    #[inline]
    fn get(&self, u: f64, v: f64) -> f64 {
        use noise::NoiseFn;
        let n = match self {
            // Out of line, so that this stays small enough to inline where the other
            // bases are called one point at a time (Perlin goes through `get_lanes`).
            Basis::Perlin(b) => return b.get_one(u, v),
            Basis::OpenSimplex(b) => b.get([u, v]),
            Basis::SuperSimplex(b) => b.get([u, v]),
        };
        n.clamp(-1.0, 1.0)
    }
}

/// One octave: n(freq·R·p + offset) times its amplitude.
#[derive(Clone)]
struct Octave {
    basis: Basis,
    /// Cycles per metre.
    freq: f64,
    /// Metres.
    amp: f64,
    /// freq·cos and freq·sin of the octave's rotation.
    fcos: f64,
    fsin: f64,
    du: f64,
    dv: f64,
}

impl Octave {
    /// n(freq·R·p + offset) at each lane's point `(x[i], y[i])`, without the amplitude.
    /// Perlin runs all lanes at once (it vectorises); the other bases one after the other,
    /// each point handed over as it is computed (as fast as before batching).
    #[inline(always)]
    fn sample_lanes<const N: usize>(&self, x: &[f64; N], y: &[f64; N], out: &mut [f64; N]) {
        let (c, s) = (self.fcos, self.fsin);
        if let Basis::Perlin(b) = &self.basis {
            let (mut u, mut v) = ([0.0; N], [0.0; N]);
            for i in 0..N {
                u[i] = (c * x[i] - s * y[i]) + self.du;
                v[i] = (s * x[i] + c * y[i]) + self.dv;
            }
            b.get_lanes(&u, &v, out);
        } else {
            for i in 0..N {
                let u = (c * x[i] - s * y[i]) + self.du;
                let v = (s * x[i] + c * y[i]) + self.dv;
                out[i] = self.basis.get(u, v);
            }
        }
    }
}

/// A geometric series of octaves: frequencies `base_freq·lacunarityⁱ` (cycles per metre),
/// amplitudes `amp·persistenceⁱ`.
struct OctaveSeries {
    basis: NoiseBasis,
    count: u32,
    base_freq: f64,
    lacunarity: f64,
    amp: f64,
    persistence: f64,
    rotate: bool,
}

/// Draws the octaves of `series` (seeds, rotations, offsets) from `rng`.
fn draw_octaves(rng: &mut ChaCha8Rng, series: &OctaveSeries) -> Vec<Octave> {
    let OctaveSeries {
        basis,
        count,
        base_freq,
        lacunarity,
        amp,
        persistence,
        rotate,
    } = *series;
    (0..count)
        .map(|i| {
            let seed: u32 = rng.random();
            let angle: f64 = rng.random_range(0.0..std::f64::consts::TAU);
            let du: f64 = rng.random_range(-4096.0..4096.0);
            let dv: f64 = rng.random_range(-4096.0..4096.0);
            let (sin, cos, du, dv) = if rotate {
                let (s, c) = math::sin_cos(angle);
                (s, c, du, dv)
            } else {
                (0.0, 1.0, 0.0, 0.0)
            };
            let freq = base_freq * lacunarity.powi(i as i32);
            Octave {
                basis: Basis::new(basis, seed),
                freq,
                amp: amp * persistence.powi(i as i32),
                fcos: freq * cos,
                fsin: freq * sin,
                du,
                dv,
            }
        })
        .collect()
}

/// Everything needed to evaluate the noise at a point, built once per grid.
struct Sampler {
    kind: NoiseKind,
    octaves: Vec<Octave>,
    /// Σ |aᵢ| for i ≤ k, per octave k (normaliser of the multifractal weight).
    partial_sums: Vec<f64>,
    /// Two warp fields (x and y displacement) and their strength, metres.
    warp: Option<(Vec<Octave>, Vec<Octave>, f64)>,
    /// Rotation into the stretch frame and the inverse stretch.
    stretch: Option<(f64, f64, f64)>,
    offset: f64,
}

impl Sampler {
    fn new(p: &NoiseParams, seed: u64) -> Sampler {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(STREAM_OCTAVES);
        let octaves = draw_octaves(
            &mut rng,
            &OctaveSeries {
                basis: p.basis,
                count: p.octaves,
                base_freq: 1.0 / p.wavelength as f64,
                lacunarity: p.lacunarity as f64,
                amp: p.amplitude as f64,
                persistence: p.persistence as f64,
                rotate: p.rotate_octaves,
            },
        );
        let mut acc = 0.0;
        let partial_sums = octaves
            .iter()
            .map(|o| {
                acc += o.amp.abs();
                acc
            })
            .collect();
        let warp = p.warp.as_ref().filter(|w| w.strength > 0.0).map(|w| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(STREAM_WARP);
            let f = 1.0 / w.wavelength as f64;
            // Amplitudes normalised so the displacement stays within ±strength.
            let norm: f64 = (0..w.octaves).map(|i| 0.5f64.powi(i as i32)).sum();
            let series = OctaveSeries {
                basis: p.basis,
                count: w.octaves,
                base_freq: f,
                lacunarity: 2.0,
                amp: 1.0 / norm,
                persistence: 0.5,
                rotate: true,
            };
            let wx = draw_octaves(&mut rng, &series);
            let wy = draw_octaves(&mut rng, &series);
            (wx, wy, w.strength as f64)
        });
        let stretch = (p.stretch != 1.0).then(|| {
            let (s, c) = math::sin_cos((p.stretch_angle as f64).to_radians());
            (c, s, 1.0 / p.stretch as f64)
        });
        Sampler {
            kind: p.kind,
            octaves,
            partial_sums,
            warp,
            stretch,
            offset: p.offset as f64,
        }
    }

    /// Largest noise-space coordinate reached over an extent of `ex`×`ey` metres.
    fn max_coord(&self, ex: f64, ey: f64) -> f64 {
        let warp = self.warp.as_ref().map_or(0.0, |w| w.2);
        let stretch = self.stretch.map_or(1.0, |s| s.2.max(1.0));
        let reach = (math::hypot(ex, ey) + warp) * stretch;
        let mut worst: f64 = 0.0;
        for o in self
            .octaves
            .iter()
            .chain(self.warp.iter().flat_map(|w| w.0.iter()))
        {
            worst = worst.max(reach * o.freq + o.du.abs().max(o.dv.abs()));
        }
        worst
    }

    /// Heights at the points `(x[i], y[i])` in metres, before faults. Each lane goes
    /// through the same operations in the same order whatever `N`, so a point's height
    /// does not depend on the batch it is in.
    #[inline(always)]
    fn heights<const N: usize>(&self, x: &[f64; N], y: &[f64; N]) -> [f64; N] {
        let (mut x, mut y) = (*x, *y);
        let mut n = [0.0; N];
        if let Some((wx, wy, strength)) = &self.warp {
            let (mut dx, mut dy) = ([0.0; N], [0.0; N]);
            for o in wx {
                o.sample_lanes(&x, &y, &mut n);
                for i in 0..N {
                    dx[i] += o.amp * n[i];
                }
            }
            for o in wy {
                o.sample_lanes(&x, &y, &mut n);
                for i in 0..N {
                    dy[i] += o.amp * n[i];
                }
            }
            for i in 0..N {
                x[i] += strength * dx[i];
                y[i] += strength * dy[i];
            }
        }
        if let Some((c, s, inv)) = self.stretch {
            for i in 0..N {
                // Into the stretch frame, shrink the along-axis coordinate, back out.
                let along = (c * x[i] + s * y[i]) * inv;
                let across = -s * x[i] + c * y[i];
                x[i] = c * along - s * across;
                y[i] = s * along + c * across;
            }
        }
        let mut t = [0.0; N];
        match self.kind {
            NoiseKind::Fbm => {
                for o in &self.octaves {
                    o.sample_lanes(&x, &y, &mut n);
                    for i in 0..N {
                        t[i] += o.amp * n[i];
                    }
                }
            }
            NoiseKind::Ridged => {
                for o in &self.octaves {
                    o.sample_lanes(&x, &y, &mut n);
                    for i in 0..N {
                        t[i] += o.amp * (1.0 - n[i].abs());
                    }
                }
            }
            NoiseKind::Multifractal | NoiseKind::RidgedMultifractal => {
                let ridged = self.kind == NoiseKind::RidgedMultifractal;
                for (k, o) in self.octaves.iter().enumerate() {
                    o.sample_lanes(&x, &y, &mut n);
                    let norm = if k == 0 {
                        0.0
                    } else {
                        self.partial_sums[k - 1]
                    };
                    for i in 0..N {
                        let b = if ridged { 1.0 - n[i].abs() } else { n[i] };
                        let alpha = if k == 0 {
                            1.0
                        } else {
                            let u = if norm > 0.0 { t[i] / norm } else { 0.0 };
                            // Galin 2019 §3.1.3: α(t_k) weights the next octave by the sum
                            // so far.
                            if ridged {
                                (2.0 * u).clamp(0.0, 2.0)
                            } else {
                                (1.0 + u).clamp(0.0, 2.0)
                            }
                        };
                        t[i] += alpha * o.amp * b;
                    }
                }
            }
        }
        for v in &mut t {
            *v += self.offset;
        }
        t
    }
}

/// Heights (before faults) at the points `(xs[i], ys[i])` into `out`, `N` points at a time;
/// the last batch is padded with zeros and its padding dropped.
#[inline(always)]
fn eval_points<const N: usize>(sampler: &Sampler, xs: &[f64], ys: &[f64], out: &mut [f64]) {
    for ((xs, ys), out) in xs.chunks(N).zip(ys.chunks(N)).zip(out.chunks_mut(N)) {
        let m = xs.len();
        let (mut x, mut y) = ([0.0; N], [0.0; N]);
        x[..m].copy_from_slice(xs);
        y[..m].copy_from_slice(ys);
        out.copy_from_slice(&sampler.heights(&x, &y)[..m]);
    }
}

/// [`eval_points`] one point at a time: the scalar reference of the batched levels.
fn eval_scalar(sampler: &Sampler, xs: &[f64], ys: &[f64], out: &mut [f64]) {
    eval_points::<1>(sampler, xs, ys, out)
}

/// [`eval_points`] eight at a time, baseline instructions.
fn eval_lanes(sampler: &Sampler, xs: &[f64], ys: &[f64], out: &mut [f64]) {
    eval_points::<8>(sampler, xs, ys, out)
}

/// [`eval_points`] sixteen at a time compiled for AVX2 (two registers a value: more work
/// in flight than eight, about 8 % faster): the same source as [`eval_lanes`], and no FMA
/// (Rust never fuses `a * b + c` by itself), so the bits do not change.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn eval_avx2(sampler: &Sampler, xs: &[f64], ys: &[f64], out: &mut [f64]) {
    eval_points::<16>(sampler, xs, ys, out)
}

/// [`eval_points`] sixteen at a time compiled for AVX-512, as [`eval_avx2`].
///
/// # Safety
/// The CPU must have AVX-512 F, VL, DQ and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn eval_avx512(sampler: &Sampler, xs: &[f64], ys: &[f64], out: &mut [f64]) {
    eval_points::<16>(sampler, xs, ys, out)
}

/// Heights (before faults) at the points `(xs[i], ys[i])` into `out`, at `level` (in
/// baseline batches if this CPU cannot run it).
fn eval_at(level: Level, sampler: &Sampler, xs: &[f64], ys: &[f64], out: &mut [f64]) {
    assert!(xs.len() == ys.len() && xs.len() == out.len());
    if !level.supported() {
        return eval_lanes(sampler, xs, ys, out);
    }
    match level {
        Level::Scalar => eval_scalar(sampler, xs, ys, out),
        Level::Lanes => eval_lanes(sampler, xs, ys, out),
        // SAFETY: the CPU has AVX2, checked above.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { eval_avx2(sampler, xs, ys, out) },
        // SAFETY: the CPU has these AVX-512 subsets, checked above.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { eval_avx512(sampler, xs, ys, out) },
    }
}

/// Generates a heightfield (metres) from `params` over `grid`, deterministic in `seed`.
pub fn generate(params: &NoiseParams, grid: Grid, seed: u64) -> Result<Heightfield> {
    generate_cancellable(params, grid, seed, &AtomicBool::new(false))
}

/// Fails when `sampler`'s finest octave reaches noise coordinates beyond
/// [`MAX_NOISE_COORD`] over an `ex` × `ey` m extent; names `{field}.wavelength`.
fn check_reach(
    sampler: &Sampler,
    params: &NoiseParams,
    field: &str,
    ex: f64,
    ey: f64,
) -> Result<()> {
    let reach = sampler.max_coord(ex, ey);
    if reach.is_nan() || reach > MAX_NOISE_COORD {
        return Err(OrogenError::invalid(
            format!("{field}.wavelength"),
            format!(
                "{} m is too short for {} octaves (lacunarity {}) over a {ex} m x {ey} m \
                 extent: noise coordinates reach {reach:.3e}, limit {MAX_NOISE_COORD:.0e}; raise \
                 the wavelength, or lower octaves or lacunarity",
                crate::error::fmt_num(params.wavelength as f64),
                params.octaves,
                params.lacunarity
            ),
        ));
    }
    Ok(())
}

/// [`generate`], giving up with [`OrogenError::Cancelled`] soon after `cancel` is set (each
/// row looks at it before it starts), so a large terrain does not hold up a cancelled run.
pub fn generate_cancellable(
    params: &NoiseParams,
    grid: Grid,
    seed: u64,
    cancel: &AtomicBool,
) -> Result<Heightfield> {
    generate_at(params, grid, seed, cancel, Level::best())
}

/// [`generate_cancellable`] with the points evaluated at `level`.
fn generate_at(
    params: &NoiseParams,
    grid: Grid,
    seed: u64,
    cancel: &AtomicBool,
    level: Level,
) -> Result<Heightfield> {
    let data = generate_window_at(params, grid, grid.rect(), seed, cancel, level)?;
    Heightfield::from_vec(grid, data, "noise")
}

/// The cells of `window` of the noise over `grid` (row-major over the window), bit for bit
/// the same values as [`generate`] over the whole grid gives there: every point is
/// evaluated at its whole-map position, with the whole map's extent for the reach check
/// and the faults. A tiled run (issue #41) makes only its tile this way.
pub fn generate_window(
    params: &NoiseParams,
    grid: Grid,
    window: Rect,
    seed: u64,
    cancel: &AtomicBool,
) -> Result<Vec<f32>> {
    generate_window_at(params, grid, window, seed, cancel, Level::best())
}

fn generate_window_at(
    params: &NoiseParams,
    grid: Grid,
    window: Rect,
    seed: u64,
    cancel: &AtomicBool,
    level: Level,
) -> Result<Vec<f32>> {
    params.validate("noise")?;
    check_window(grid, window)?;
    if let NoiseBasis::FastNoiseLite(f) = &params.basis {
        let (amp, off) = (params.amplitude as f64, params.offset as f64);
        return fastnoise::generate_window(
            f,
            amp,
            off,
            params.faults.as_ref(),
            grid,
            window,
            seed,
            cancel,
        );
    }
    let sampler = Sampler::new(params, seed);
    // Cells are `dx × dy` metres (equal for square cells).
    let (csx, csy) = (grid.dx() as f64, grid.dy() as f64);
    let (ex, ey) = (grid.width as f64 * csx, grid.height as f64 * csy);
    check_reach(&sampler, params, "noise", ex, ey)?;
    let faults = params
        .faults
        .as_ref()
        .map(|f| FaultSet::draw(f, ex, ey, seed));
    let mut data = crate::state::buffer(window.len(), 0.0f32, "noise height")?;
    data.par_chunks_mut(window.w.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            let py = (window.y0 + y) as f64 * csy;
            let xs: Vec<f64> = (0..row.len())
                .map(|x| (window.x0 + x) as f64 * csx)
                .collect();
            let ys = vec![py; row.len()];
            let mut hs = vec![0.0; row.len()];
            eval_at(level, &sampler, &xs, &ys, &mut hs);
            for ((out, &h), &px) in row.iter_mut().zip(&hs).zip(&xs) {
                let mut h = h;
                if let Some(f) = &faults {
                    h += f.displacement(px, py);
                }
                *out = h as f32;
            }
        });
    if cancel.load(Ordering::Relaxed) {
        return Err(OrogenError::Cancelled);
    }
    Ok(data)
}

/// Fails unless `window` lies inside `grid`.
pub(crate) fn check_window(grid: Grid, window: Rect) -> Result<()> {
    if window.x0 + window.w > grid.width || window.y0 + window.h > grid.height {
        return Err(OrogenError::invalid(
            "window",
            format!(
                "{}x{} cells at ({}, {}) reach past the {}x{} grid",
                window.w, window.h, window.x0, window.y0, grid.width, grid.height
            ),
        ));
    }
    Ok(())
}

/// Noise over `grid` normalised to `[0, 1]` (lowest cell 0, highest 1; a flat result is 0
/// everywhere). Used by `ScalarSource::Noise`; `amplitude` and `offset` do not matter.
pub fn generate_normalized(params: &NoiseParams, grid: Grid, seed: u64) -> Result<ScalarMap> {
    generate_normalized_cancellable(params, grid, seed, &AtomicBool::new(false))
}

/// [`generate_normalized`], giving up soon after `cancel` is set (see
/// [`generate_cancellable`]).
pub fn generate_normalized_cancellable(
    params: &NoiseParams,
    grid: Grid,
    seed: u64,
    cancel: &AtomicBool,
) -> Result<ScalarMap> {
    let mut map = generate_cancellable(params, grid, seed, cancel)?;
    let (lo, hi) = map.min_max();
    normalize_with(&mut map.data, lo, hi);
    Ok(map)
}

/// Maps `data` from `[lo, hi]` (the whole map's lowest and highest value) onto `[0, 1]`;
/// all 0 when the span is not positive and finite.
pub(crate) fn normalize_with(data: &mut [f32], lo: f32, hi: f32) {
    let span = hi - lo;
    if !span.is_finite() || span <= 0.0 {
        data.iter_mut().for_each(|v| *v = 0.0);
        return;
    }
    let (lo, inv) = (lo as f64, 1.0 / span as f64);
    data.par_iter_mut()
        .for_each(|v| *v = (((*v as f64) - lo) * inv).clamp(0.0, 1.0) as f32);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(n: usize, cs: f32) -> Grid {
        Grid::new(n, n, cs).unwrap()
    }

    fn params(kind: NoiseKind) -> NoiseParams {
        NoiseParams {
            kind,
            octaves: 6,
            wavelength: 3000.0,
            amplitude: 300.0,
            persistence: 0.6,
            offset: 50.0,
            ..Default::default()
        }
    }

    /// The bound Σ |amplitude·persistenceⁱ|, computed independently of the module.
    fn amp_sum(p: &NoiseParams, from: u32) -> f64 {
        (from..p.octaves)
            .map(|i| (p.amplitude as f64 * (p.persistence as f64).powi(i as i32)).abs())
            .sum()
    }

    #[test]
    fn fbm_stays_within_the_sum_of_amplitudes_and_uses_most_of_it() {
        for basis in [
            NoiseBasis::Perlin,
            NoiseBasis::OpenSimplex,
            NoiseBasis::SuperSimplex,
        ] {
            let p = NoiseParams {
                basis,
                ..params(NoiseKind::Fbm)
            };
            let h = generate(&p, grid(96, 150.0), 11).unwrap();
            let a = amp_sum(&p, 0);
            let (lo, hi) = h.min_max();
            assert!(
                lo as f64 >= 50.0 - a - 1e-3 && hi as f64 <= 50.0 + a + 1e-3,
                "{basis:?}"
            );
            // Not flat: the first octave alone spans a good part of ±a0.
            assert!(
                (hi - lo) as f64 > 0.3 * p.amplitude as f64,
                "{basis:?}: {lo}..{hi}"
            );
        }
    }

    #[test]
    fn ridged_noise_stays_in_its_range() {
        let p = params(NoiseKind::Ridged);
        let h = generate(&p, grid(96, 150.0), 5).unwrap();
        let a = amp_sum(&p, 0);
        for &v in &h.data {
            assert!(
                (v as f64) >= 50.0 - 1e-3 && (v as f64) <= 50.0 + a + 1e-3,
                "{v}"
            );
        }
    }

    #[test]
    fn multifractal_sums_stay_in_their_ranges() {
        for kind in [NoiseKind::Multifractal, NoiseKind::RidgedMultifractal] {
            let p = params(kind);
            let h = generate(&p, grid(96, 150.0), 9).unwrap();
            let b = amp_sum(&p, 0) + amp_sum(&p, 1);
            let lo_bound = if kind == NoiseKind::Multifractal {
                50.0 - b
            } else {
                50.0
            };
            let (lo, hi) = h.min_max();
            assert!(
                lo as f64 >= lo_bound - 1e-3 && hi as f64 <= 50.0 + b + 1e-3,
                "{kind:?}"
            );
            assert!(hi > lo, "{kind:?} is flat");
        }
    }

    #[test]
    fn multifractal_is_smoother_in_lows_than_highs() {
        // The octaves after the first are damped where the sum so far is low: the
        // cell-to-cell roughness in the lowest quarter is below that of the highest quarter.
        let p = NoiseParams {
            octaves: 8,
            persistence: 0.7,
            ..params(NoiseKind::Multifractal)
        };
        let g = grid(200, 100.0);
        let h = generate(&p, g, 3).unwrap();
        let mut sorted = h.data.clone();
        sorted.sort_by(f32::total_cmp);
        let q1 = sorted[sorted.len() / 4];
        let q3 = sorted[3 * sorted.len() / 4];
        let (mut lows, mut nl, mut highs, mut nh) = (0.0f64, 0, 0.0f64, 0);
        for y in 0..g.height {
            for x in 0..g.width - 1 {
                let (a, b) = (*h.get(x, y), *h.get(x + 1, y));
                let d = (a - b).abs() as f64;
                if a.max(b) < q1 {
                    lows += d;
                    nl += 1;
                } else if a.min(b) > q3 {
                    highs += d;
                    nh += 1;
                }
            }
        }
        assert!(nl > 0 && nh > 0);
        assert!(lows / (nl as f64) < highs / (nh as f64));
    }

    #[test]
    fn same_seed_same_bytes_whatever_the_thread_count() {
        let p = NoiseParams {
            kind: NoiseKind::RidgedMultifractal,
            warp: Some(Warp::default()),
            faults: Some(Faults {
                count: 20,
                circles: true,
                ..Default::default()
            }),
            stretch: 2.5,
            stretch_angle: 30.0,
            ..Default::default()
        };
        let g = Grid::new(131, 77, 90.0).unwrap();
        let run = |n: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
                .install(|| generate(&p, g, 42).unwrap())
        };
        let a = run(1);
        let b = run(4);
        let bits = |h: &Heightfield| h.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
    }

    /// A random recipe of every kind and basis, with or without rotation, stretch, warp and
    /// faults.
    fn random_params(rng: &mut ChaCha8Rng) -> NoiseParams {
        let kinds = [
            NoiseKind::Fbm,
            NoiseKind::Ridged,
            NoiseKind::Multifractal,
            NoiseKind::RidgedMultifractal,
        ];
        let bases = [
            NoiseBasis::Perlin,
            NoiseBasis::Perlin,
            NoiseBasis::OpenSimplex,
            NoiseBasis::SuperSimplex,
        ];
        NoiseParams {
            kind: kinds[rng.random_range(0..4)],
            basis: bases[rng.random_range(0..4)],
            octaves: rng.random_range(1..=10),
            wavelength: rng.random_range(50.0..50_000.0),
            lacunarity: rng.random_range(1.2..3.5),
            persistence: rng.random_range(0.0..=1.0),
            amplitude: rng.random_range(-2000.0..2000.0),
            offset: rng.random_range(-500.0..500.0),
            rotate_octaves: rng.random_bool(0.7),
            stretch: if rng.random_bool(0.5) {
                rng.random_range(0.05..20.0)
            } else {
                1.0
            },
            stretch_angle: rng.random_range(-360.0..360.0),
            warp: rng.random_bool(0.5).then(|| Warp {
                strength: rng.random_range(0.0..5000.0),
                wavelength: rng.random_range(100.0..50_000.0),
                octaves: rng.random_range(1..=8),
            }),
            faults: rng.random_bool(0.3).then(|| Faults {
                count: rng.random_range(1..30),
                circles: rng.random_bool(0.5),
                width: rng.random_range(0.0..300.0),
                ..Default::default()
            }),
        }
    }

    fn bits(h: &[f64]) -> Vec<u64> {
        h.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn every_simd_level_matches_the_scalar_path_bit_for_bit_at_random_points() {
        let levels = Level::available();
        eprintln!("levels on this machine: {levels:?}");
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for case in 0..400 {
            let p = random_params(&mut rng);
            p.validate("t").unwrap();
            let sampler = Sampler::new(&p, rng.random());
            // Points up to 10⁵ wavelengths out, fewer where the finest octave would pass
            // MAX_NOISE_COORD there (`generate` refuses such extents).
            let extent = p.wavelength as f64 * 1e5;
            let reach = sampler.max_coord(extent, extent);
            let extent = if reach > MAX_NOISE_COORD {
                extent * MAX_NOISE_COORD / reach
            } else {
                extent
            };
            // Not a multiple of any batch width: the last batch is padded.
            let count = rng.random_range(1..300);
            let xs: Vec<f64> = (0..count).map(|_| rng.random_range(0.0..extent)).collect();
            let ys: Vec<f64> = (0..count).map(|_| rng.random_range(0.0..extent)).collect();
            let mut reference = vec![0.0; count];
            eval_at(Level::Scalar, &sampler, &xs, &ys, &mut reference);
            assert!(reference.iter().all(|h| h.is_finite()));
            for &level in &levels {
                let mut out = vec![0.0; count];
                eval_at(level, &sampler, &xs, &ys, &mut out);
                assert_eq!(bits(&out), bits(&reference), "case {case} {level:?} {p:?}");
            }
        }
    }

    #[test]
    fn every_simd_level_and_thread_count_gives_the_same_grid() {
        let levels = Level::available();
        let kinds = [
            NoiseKind::Fbm,
            NoiseKind::Ridged,
            NoiseKind::Multifractal,
            NoiseKind::RidgedMultifractal,
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(34);
        let mut cases: Vec<NoiseParams> = kinds
            .iter()
            .map(|&kind| NoiseParams {
                kind,
                warp: Some(Warp::default()),
                stretch: 3.0,
                stretch_angle: 20.0,
                faults: Some(Faults::default()),
                ..Default::default()
            })
            .collect();
        cases.extend((0..12).map(|_| random_params(&mut rng)));
        let grids = [
            Grid::new(37, 29, 70.0).unwrap(),
            Grid::new(1, 5, 300.0).unwrap(),
        ];
        let f32_bits = |h: &Heightfield| h.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for (c, p) in cases.iter().enumerate() {
            for g in grids {
                let run = |threads: usize, level: Level| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| generate_at(p, g, 5, &AtomicBool::new(false), level))
                        .unwrap()
                };
                let reference = f32_bits(&run(1, Level::Scalar));
                for &level in &levels {
                    for threads in [1, 3] {
                        let h = run(threads, level);
                        assert_eq!(f32_bits(&h), reference, "case {c} {level:?} {threads}");
                    }
                }
                // The public entry point runs the best level.
                assert_eq!(f32_bits(&generate(p, g, 5).unwrap()), reference);
            }
        }
    }

    #[test]
    fn different_seeds_differ() {
        let p = NoiseParams::default();
        let g = grid(64, 200.0);
        let a = generate(&p, g, 1).unwrap();
        let b = generate(&p, g, 2).unwrap();
        let differing = a.data.iter().zip(&b.data).filter(|(x, y)| x != y).count();
        assert!(differing > a.data.len() * 9 / 10, "{differing}");
    }

    #[test]
    fn sampling_is_in_metres_so_a_finer_grid_matches_at_shared_points() {
        // A grid at half the cell size holds every point of the coarse grid at (2x, 2y).
        let p = NoiseParams {
            warp: Some(Warp::default()),
            ..Default::default()
        };
        let coarse = generate(&p, grid(40, 200.0), 7).unwrap();
        let fine = generate(&p, grid(79, 100.0), 7).unwrap();
        for y in 0..40 {
            for x in 0..40 {
                assert_eq!(coarse.get(x, y), fine.get(2 * x, 2 * y), "({x},{y})");
            }
        }
    }

    #[test]
    fn stretch_makes_features_longer_along_its_axis() {
        // Stretched along x: neighbours along x differ less than neighbours along y.
        let p = NoiseParams {
            stretch: 6.0,
            stretch_angle: 0.0,
            octaves: 3,
            wavelength: 2000.0,
            ..Default::default()
        };
        let g = grid(128, 100.0);
        let h = generate(&p, g, 4).unwrap();
        let (mut dx, mut dy) = (0.0f64, 0.0f64);
        for y in 0..g.height - 1 {
            for x in 0..g.width - 1 {
                dx += (h.get(x + 1, y) - h.get(x, y)).abs() as f64;
                dy += (h.get(x, y + 1) - h.get(x, y)).abs() as f64;
            }
        }
        assert!(dx * 2.0 < dy, "dx {dx} dy {dy}");
    }

    #[test]
    fn warp_changes_the_terrain_but_not_its_bound() {
        let p = params(NoiseKind::Fbm);
        let w = NoiseParams {
            warp: Some(Warp {
                strength: 3000.0,
                wavelength: 8000.0,
                octaves: 3,
            }),
            ..p.clone()
        };
        let g = grid(80, 150.0);
        let a = generate(&p, g, 8).unwrap();
        let b = generate(&w, g, 8).unwrap();
        assert_ne!(a.data, b.data);
        let bound = amp_sum(&p, 0);
        let (lo, hi) = b.min_max();
        assert!(lo as f64 >= 50.0 - bound - 1e-3 && hi as f64 <= 50.0 + bound + 1e-3);
    }

    #[test]
    fn normalized_spans_zero_to_one() {
        let m = generate_normalized(&NoiseParams::default(), grid(50, 300.0), 3).unwrap();
        let (lo, hi) = m.min_max();
        assert_eq!((lo, hi), (0.0, 1.0));
        let flat = NoiseParams {
            amplitude: 0.0,
            ..Default::default()
        };
        let m = generate_normalized(&flat, grid(10, 300.0), 3).unwrap();
        assert!(m.data.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn invalid_params_name_their_field() {
        let cases: Vec<(NoiseParams, &str)> = vec![
            (
                NoiseParams {
                    octaves: 0,
                    ..Default::default()
                },
                "t.octaves",
            ),
            (
                NoiseParams {
                    octaves: 33,
                    ..Default::default()
                },
                "t.octaves",
            ),
            (
                NoiseParams {
                    wavelength: 0.0,
                    ..Default::default()
                },
                "t.wavelength",
            ),
            (
                NoiseParams {
                    wavelength: f32::NAN,
                    ..Default::default()
                },
                "t.wavelength",
            ),
            (
                NoiseParams {
                    lacunarity: 0.0,
                    ..Default::default()
                },
                "t.lacunarity",
            ),
            (
                NoiseParams {
                    lacunarity: -2.0,
                    ..Default::default()
                },
                "t.lacunarity",
            ),
            (
                NoiseParams {
                    lacunarity: 17.0,
                    ..Default::default()
                },
                "t.lacunarity",
            ),
            (
                NoiseParams {
                    persistence: f32::NAN,
                    ..Default::default()
                },
                "t.persistence",
            ),
            (
                NoiseParams {
                    persistence: 1.5,
                    ..Default::default()
                },
                "t.persistence",
            ),
            (
                NoiseParams {
                    amplitude: f32::INFINITY,
                    ..Default::default()
                },
                "t.amplitude",
            ),
            (
                NoiseParams {
                    amplitude: 1.0e9,
                    ..Default::default()
                },
                "t.amplitude",
            ),
            (
                NoiseParams {
                    offset: f32::NAN,
                    ..Default::default()
                },
                "t.offset",
            ),
            (
                NoiseParams {
                    stretch: 0.0,
                    ..Default::default()
                },
                "t.stretch",
            ),
            (
                NoiseParams {
                    warp: Some(Warp {
                        wavelength: -1.0,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                "t.warp.wavelength",
            ),
            (
                NoiseParams {
                    warp: Some(Warp {
                        octaves: 0,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                "t.warp.octaves",
            ),
            (
                NoiseParams {
                    faults: Some(Faults {
                        offset: f32::NAN,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                "t.faults.offset",
            ),
        ];
        for (p, field) in cases {
            match p.validate("t") {
                Err(OrogenError::InvalidParameter { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: expected an error, got {other:?}"),
            }
        }
        assert!(NoiseParams::default().validate("t").is_ok());
    }

    #[test]
    fn too_fine_octaves_for_the_extent_are_an_error_not_a_panic() {
        let p = NoiseParams {
            octaves: 32,
            lacunarity: 16.0,
            wavelength: 1.0,
            ..Default::default()
        };
        assert!(matches!(
            generate(&p, grid(8, 1000.0), 1),
            Err(OrogenError::InvalidParameter { .. })
        ));
    }

    #[test]
    fn recipe_syntax_parses() {
        let text = "(size: (9, 9), cell_size: 100.0, seed: 3, terrain: Noise(kind: Ridged, \
                    octaves: 6, warp: (strength: 500.0), faults: (count: 5, circles: true)), \
                    uplift: Noise(noise: (wavelength: 5000.0), min: 0.0, max: 0.002))";
        let r = crate::recipe::Recipe::from_ron_str(text, "test").unwrap();
        r.validate().unwrap();
        match &r.terrain {
            crate::stages::source::TerrainSource::Noise(n) => {
                assert_eq!(n.kind, NoiseKind::Ridged);
                assert_eq!(n.warp.as_ref().unwrap().strength, 500.0);
                assert_eq!(n.faults.as_ref().unwrap().count, 5);
            }
            other => panic!("{other:?}"),
        }
    }
}
