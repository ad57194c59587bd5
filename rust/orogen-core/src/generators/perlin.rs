//! Seeded 2D gradient noise written so that a batch of points vectorises, and the levels of
//! SIMD a CPU offers, picked at run time.
//!
//! Perlin 2002, "Improving noise" (SIGGRAPH): a pseudo-random gradient at each lattice
//! point, dotted with the offset to the point, blended by the quintic fade
//! 6t⁵ − 15t⁴ + 10t³. The gradient comes from a hash of the lattice point and the octave's
//! seed (drawn from the recipe's ChaCha stream) instead of a permutation table, so a batch
//! needs no table look-ups; it is one of eight directions of length √2: the four diagonals
//! (±1, ±1) and (±√2, 0), (0, ±√2). With gradients of length g, 2D gradient noise stays
//! within ±g·√(1/2) (the bound is reached at a cell centre with every diagonal pointing at
//! it), so the values lie in [−1, 1].
//!
//! Exactness: the batch runs the steps of [`Perlin::get`] on each lane, and every step is
//! an IEEE operation that rounds the same on every instruction set (`+ − ×`, `floor`,
//! conversions, comparisons, integer arithmetic; never `mul_add`, which Rust does not form
//! from `a * b + c` on its own). The lattice index and the fraction are split in f64, the
//! gradients and the blend run in f32 (twice the lanes per register).

/// 1.5·2⁵²: adding it to an integer-valued f64 of magnitude below 2⁵¹ puts the integer,
/// plus 2⁵¹, in the low bits of the mantissa, so its low 32 bits are the integer mod 2³².
const MAGIC: f64 = 6_755_399_441_055_744.0;
/// Odd constants spreading lattice x and y over 32 bits before they are combined.
const PRIME_X: u32 = 0x9e37_79b1;
const PRIME_Y: u32 = 0x85eb_ca77;
/// Multipliers of the final mix (the `lowbias32` hash, C. Wellons 2018).
const MIX_1: u32 = 0x7feb_352d;
const MIX_2: u32 = 0x846c_a68b;
const SIGN: u32 = 0x8000_0000;
const SQRT_2: f32 = std::f32::consts::SQRT_2;

/// One seeded 2D gradient noise function with values in [−1, 1].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Perlin {
    seed: u32,
}

/// The low 32 bits of an integer-valued `f` (|f| < 2⁵¹), wrapping.
#[inline(always)]
fn wrap_u32(f: f64) -> u32 {
    (f + MAGIC).to_bits() as u32
}

/// The fade curve 6t⁵ − 15t⁴ + 10t³ (Perlin 2002 §3), in Horner form.
#[inline(always)]
fn fade(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// The gradient chosen by `seed` at the lattice point whose spread coordinates are `xp`
/// and `yp`, dotted with the offset `(dx, dy)` from that point.
#[inline(always)]
fn grad(seed: u32, xp: u32, yp: u32, dx: f32, dy: f32) -> f32 {
    let mut h = seed ^ xp ^ yp;
    h ^= h >> 16;
    h = h.wrapping_mul(MIX_1);
    h ^= h >> 15;
    h = h.wrapping_mul(MIX_2);
    // The top bits are the best mixed: bit 31 flips x, bit 30 flips y, bit 29 picks the
    // axis of an axis gradient, bit 28 picks a diagonal or an axis gradient.
    let sx = f32::from_bits(dx.to_bits() ^ (h & SIGN));
    let sy = f32::from_bits(dy.to_bits() ^ ((h << 1) & SIGN));
    let diagonal = sx + sy;
    let axis = SQRT_2 * if h & (1 << 29) != 0 { sx } else { sy };
    if h & (1 << 28) != 0 {
        axis
    } else {
        diagonal
    }
}

impl Perlin {
    pub(crate) fn new(seed: u32) -> Self {
        Perlin { seed }
    }

    /// n(u, v) in [−1, 1]; |u|, |v| must stay below 2⁵¹ (callers keep them below 10¹²).
    #[inline(always)]
    pub(crate) fn get(&self, u: f64, v: f64) -> f64 {
        let (ix, fx) = split(u);
        let (iy, fy) = split(v);
        self.cell(ix, iy, fx, fy) as f64
    }

    /// [`Perlin::get`], not inlined.
    #[inline(never)]
    pub(crate) fn get_one(&self, u: f64, v: f64) -> f64 {
        self.get(u, v)
    }

    /// The noise at fraction `(fx, fy)` of lattice cell `(ix, iy)` (wrapped to 32 bits).
    #[inline(always)]
    fn cell(&self, ix: u32, iy: u32, fx: f32, fy: f32) -> f32 {
        let x0 = ix.wrapping_mul(PRIME_X);
        let y0 = iy.wrapping_mul(PRIME_Y);
        let x1 = x0.wrapping_add(PRIME_X);
        let y1 = y0.wrapping_add(PRIME_Y);
        let seed = self.seed;
        let n00 = grad(seed, x0, y0, fx, fy);
        let n10 = grad(seed, x1, y0, fx - 1.0, fy);
        let n01 = grad(seed, x0, y1, fx, fy - 1.0);
        let n11 = grad(seed, x1, y1, fx - 1.0, fy - 1.0);
        let (sx, sy) = (fade(fx), fade(fy));
        let a = n00 + sx * (n10 - n00);
        let b = n01 + sx * (n11 - n01);
        (a + sy * (b - a)).clamp(-1.0, 1.0)
    }

    /// [`Perlin::get`] on each lane: `out[i] = n(u[i], v[i])`. The f64 split and the f32
    /// cell run as separate loops so that each is vectorised at its own width.
    #[inline(always)]
    pub(crate) fn get_lanes<const N: usize>(&self, u: &[f64; N], v: &[f64; N], out: &mut [f64; N]) {
        let (mut ix, mut iy, mut fx, mut fy) = ([0u32; N], [0u32; N], [0f32; N], [0f32; N]);
        for i in 0..N {
            (ix[i], fx[i]) = split(u[i]);
            (iy[i], fy[i]) = split(v[i]);
        }
        let mut n = [0f32; N];
        for i in 0..N {
            n[i] = self.cell(ix[i], iy[i], fx[i], fy[i]);
        }
        for i in 0..N {
            out[i] = n[i] as f64;
        }
    }
}

/// The lattice index of `u` wrapped to 32 bits and the fraction of `u` in its cell.
///
/// The split is in f64 and exact (`u − ⌊u⌋` is a multiple of u's last place below 1), so
/// the fraction keeps 2⁻¹³ of a cell at |u| = 10¹²; the f32 it is rounded to resolves it
/// far below a cell of any grid. A fraction just below 1 may round to 1.0: the noise is
/// continuous across the cell edge, so that is the value at the edge.
#[inline(always)]
fn split(u: f64) -> (u32, f32) {
    let iu = u.floor();
    (wrap_u32(iu), (u - iu) as f32)
}

/// How a batch of points is evaluated: one at a time, or many at a time compiled for the
/// baseline instruction set or, where the CPU has them, AVX2 or AVX-512. Every level gives
/// the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// One point at a time, baseline instructions.
    Scalar,
    /// Eight points at a time, baseline instructions (SSE2 on x86-64).
    Lanes,
    /// Sixteen points at a time in AVX2 registers.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Sixteen points at a time in AVX-512 registers.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Level {
    /// Every level this CPU can run, slowest first.
    pub(crate) fn available() -> Vec<Level> {
        #[allow(unused_mut)]
        let mut levels = vec![Level::Scalar, Level::Lanes];
        #[cfg(target_arch = "x86_64")]
        {
            if Level::Avx2.supported() {
                levels.push(Level::Avx2);
            }
            if Level::Avx512.supported() {
                levels.push(Level::Avx512);
            }
        }
        levels
    }

    /// Whether this CPU can run the level.
    pub(crate) fn supported(self) -> bool {
        match self {
            Level::Scalar | Level::Lanes => true,
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512bw")
            }
        }
    }

    /// The fastest level this CPU can run.
    pub(crate) fn best() -> Level {
        *Level::available()
            .last()
            .expect("Scalar is always available")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn values_stay_in_range_are_zero_on_the_lattice_and_use_the_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (mut sum, mut sq, mut hi, mut lo) = (0.0, 0.0, 0.0f64, 0.0f64);
        let count = 200_000;
        for _ in 0..count {
            let p = Perlin::new(rng.random());
            let (u, v) = (rng.random_range(-1e6..1e6), rng.random_range(-1e6..1e6));
            let n = p.get(u, v);
            assert!((-1.0..=1.0).contains(&n), "{n} at ({u}, {v})");
            (sum, sq, hi, lo) = (sum + n, sq + n * n, hi.max(n), lo.min(n));
            let (iu, iv) = (u.floor(), v.floor());
            assert_eq!(p.get(iu, iv), 0.0, "lattice point ({iu}, {iv})");
        }
        let mean = sum / count as f64;
        let sd = (sq / count as f64 - mean * mean).sqrt();
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((0.2..0.5).contains(&sd), "sd {sd}");
        assert!(hi > 0.8 && lo < -0.8, "{lo}..{hi}");
    }

    #[test]
    fn far_coordinates_keep_their_fraction() {
        // The lattice wraps every 2³² cells, so far from the origin the noise repeats what
        // it is near it, bit for bit, as long as the fraction survives the distance:
        // 10¹²-odd cells out, the same steps of 1/64 of a cell give the same values.
        let p = Perlin::new(0xdead_beef);
        let far = 4_294_967_296.0 * 232.0; // 9.96e11
        for k in 0..2000 {
            let (u, v) = (17.0 + k as f64 / 64.0, -3.0 + (k % 97) as f64 / 32.0);
            assert_eq!(
                p.get(u + far, v - far).to_bits(),
                p.get(u, v).to_bits(),
                "{k}"
            );
        }
        // And the values along that line change smoothly: no step of 1/64 is larger than
        // the steepest slope allows (|∂n/∂u| ≤ √2 + 1.875·4 < 9: gradient component plus
        // the fade's slope times the spread of two corner values).
        let mut prev = p.get(far, 0.3);
        for k in 1..640 {
            let n = p.get(far + k as f64 / 64.0, 0.3);
            let d = (n - prev).abs();
            assert!(d < 9.0 / 64.0, "step {d} at {k}");
            prev = n;
        }
    }

    #[test]
    fn batches_match_single_points() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for _ in 0..500 {
            let p = Perlin::new(rng.random());
            let u: [f64; 16] = std::array::from_fn(|_| rng.random_range(-1e9..1e9));
            let v: [f64; 16] = std::array::from_fn(|_| rng.random_range(-1e3..1e3));
            let mut out = [0.0; 16];
            p.get_lanes(&u, &v, &mut out);
            for i in 0..16 {
                assert_eq!(out[i].to_bits(), p.get(u[i], v[i]).to_bits());
            }
        }
    }
}
