//! The transcendental functions the core uses, from one implementation on every platform.
//!
//! `f64::powf`, `exp`, `ln`, `sin`, `tan`, `atan2`, `hypot` & co. call the platform's C
//! library: glibc on Linux, the mingw/msvcrt maths on Windows, Apple's libm on macOS. Those
//! are free to round the last bit differently, and one differing bit in an erosion step
//! grows into a different world. Every such call in the core goes through this module
//! instead, which uses the `libm` crate (a Rust port of musl's maths) everywhere, so the same
//! recipe and seed give the same bytes on Linux, Windows and macOS. `rust/orogen-core/clippy.toml`
//! forbids the std methods in the core. `sqrt`, `abs`, `floor`, `round`, `mul_add` (with
//! hardware FMA off, a software fused multiply-add), `to_radians` and `powi` are exact or
//! plain arithmetic and stay as they are.
//!
//! Each function is generic over [`Float`] (`f32` uses libm's single-precision routines,
//! `f64` the double-precision ones), so a call reads like the method it replaces:
//! `x.powf(m)` becomes `math::powf(x, m)`.

/// `f32` or `f64`: the precision a function of this module works in.
pub trait Float: Copy {
    #[doc(hidden)]
    fn powf_(self, e: Self) -> Self;
    #[doc(hidden)]
    fn exp_(self) -> Self;
    #[doc(hidden)]
    fn ln_(self) -> Self;
    #[doc(hidden)]
    fn sin_(self) -> Self;
    #[doc(hidden)]
    fn cos_(self) -> Self;
    #[doc(hidden)]
    fn tan_(self) -> Self;
    #[doc(hidden)]
    fn acos_(self) -> Self;
    #[doc(hidden)]
    fn atan_(self) -> Self;
    #[doc(hidden)]
    fn atan2_(self, x: Self) -> Self;
    #[doc(hidden)]
    fn hypot_(self, y: Self) -> Self;
}

macro_rules! float {
    ($t:ty, $pow:ident, $exp:ident, $ln:ident, $sin:ident, $cos:ident, $tan:ident, $acos:ident,
     $atan:ident, $atan2:ident, $hypot:ident) => {
        impl Float for $t {
            fn powf_(self, e: Self) -> Self {
                libm::$pow(self, e)
            }
            fn exp_(self) -> Self {
                libm::$exp(self)
            }
            fn ln_(self) -> Self {
                libm::$ln(self)
            }
            fn sin_(self) -> Self {
                libm::$sin(self)
            }
            fn cos_(self) -> Self {
                libm::$cos(self)
            }
            fn tan_(self) -> Self {
                libm::$tan(self)
            }
            fn acos_(self) -> Self {
                libm::$acos(self)
            }
            fn atan_(self) -> Self {
                libm::$atan(self)
            }
            fn atan2_(self, x: Self) -> Self {
                libm::$atan2(self, x)
            }
            fn hypot_(self, y: Self) -> Self {
                libm::$hypot(self, y)
            }
        }
    };
}

float!(f32, powf, expf, logf, sinf, cosf, tanf, acosf, atanf, atan2f, hypotf);
float!(f64, pow, exp, log, sin, cos, tan, acos, atan, atan2, hypot);

/// `x` to the power `e` (`x.powf(e)`).
#[inline]
pub fn powf<T: Float>(x: T, e: T) -> T {
    x.powf_(e)
}

/// e to the power `x` (`x.exp()`).
#[inline]
pub fn exp<T: Float>(x: T) -> T {
    x.exp_()
}

/// The natural logarithm (`x.ln()`).
#[inline]
pub fn ln<T: Float>(x: T) -> T {
    x.ln_()
}

/// Sine of `x` radians (`x.sin()`).
#[inline]
pub fn sin<T: Float>(x: T) -> T {
    x.sin_()
}

/// Cosine of `x` radians (`x.cos()`).
#[inline]
pub fn cos<T: Float>(x: T) -> T {
    x.cos_()
}

/// Sine and cosine of `x` radians (`x.sin_cos()`).
#[inline]
pub fn sin_cos<T: Float>(x: T) -> (T, T) {
    (x.sin_(), x.cos_())
}

/// Tangent of `x` radians (`x.tan()`).
#[inline]
pub fn tan<T: Float>(x: T) -> T {
    x.tan_()
}

/// Arc cosine in radians (`x.acos()`).
#[inline]
pub fn acos<T: Float>(x: T) -> T {
    x.acos_()
}

/// Arc tangent in radians (`x.atan()`).
#[inline]
pub fn atan<T: Float>(x: T) -> T {
    x.atan_()
}

/// The angle of the point (`x`, `y`) in radians (`y.atan2(x)`).
#[inline]
pub fn atan2<T: Float>(y: T, x: T) -> T {
    y.atan2_(x)
}

/// √(x² + y²) without overflow (`x.hypot(y)`).
#[inline]
pub fn hypot<T: Float>(x: T, y: T) -> T {
    x.hypot_(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact cases bit for bit, and every function within one ulp of the platform's own
    /// (a swapped argument or a wrong function would be far off).
    #[test]
    #[allow(clippy::disallowed_methods)] // compared with the platform's maths
    fn gives_exact_values_and_the_std_value_within_one_ulp() {
        assert_eq!(powf(2.0_f64, 10.0), 1024.0);
        assert_eq!(powf(9.0_f32, 0.5), 3.0);
        assert_eq!(exp(0.0_f64), 1.0);
        assert_eq!(ln(1.0_f32), 0.0);
        assert_eq!(hypot(3.0_f64, 4.0), 5.0);
        assert_eq!(atan2(0.0_f64, -1.0), std::f64::consts::PI);
        assert_eq!(sin_cos(0.0_f32), (0.0, 1.0));
        // Within an ulp of the platform's own maths, which is what the replacement must be.
        for x in [0.1_f64, 0.7, 1.3, 2.9, 10.5, 123.456] {
            let ulp = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).abs();
            assert!(ulp(powf(x, 1.7), x.powf(1.7)) <= 1, "powf {x}");
            assert!(ulp(exp(x), x.exp()) <= 1, "exp {x}");
            assert!(ulp(ln(x), x.ln()) <= 1, "ln {x}");
            assert!(ulp(sin(x), x.sin()) <= 1, "sin {x}");
            assert!(ulp(cos(x), x.cos()) <= 1, "cos {x}");
            assert!(ulp(tan(x), x.tan()) <= 1, "tan {x}");
            assert!(ulp(atan(x), x.atan()) <= 1, "atan {x}");
            assert!(ulp(atan2(x, 0.3), x.atan2(0.3)) <= 1, "atan2 {x}");
            assert!(ulp(hypot(x, 0.3), x.hypot(0.3)) <= 1, "hypot {x}");
            assert!(ulp(acos(x / 200.0), (x / 200.0).acos()) <= 1, "acos {x}");
        }
    }
}
