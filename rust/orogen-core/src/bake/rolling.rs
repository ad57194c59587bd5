//! The smooth hash noise the skirt rolls its ground with and its rivers meander by.

/// A smooth hash noise in [-1, 1] over metres (value noise, three octaves).
pub fn rolling(x: f32, z: f32, wavelength: f32, seed: u32) -> f32 {
    let hash = |i: i64, j: i64, o: u32| {
        let mut h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ ((seed ^ o) as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        (h >> 11) as f32 / (1u64 << 53) as f32 * 2.0 - 1.0
    };
    let mut sum = 0.0;
    let mut amp = 1.0;
    let mut wl = wavelength;
    for o in 0..3 {
        let (u, v) = (x / wl, z / wl);
        let (i, j) = (u.floor(), v.floor());
        let (fu, fv) = (u - i, v - j);
        let (su, sv) = (fu * fu * (3.0 - 2.0 * fu), fv * fv * (3.0 - 2.0 * fv));
        let (i, j) = (i as i64, j as i64);
        let a = hash(i, j, o) + (hash(i + 1, j, o) - hash(i, j, o)) * su;
        let b = hash(i, j + 1, o) + (hash(i + 1, j + 1, o) - hash(i, j + 1, o)) * su;
        sum += amp * (a + (b - a) * sv);
        amp *= 0.5;
        wl *= 0.5;
    }
    sum / 1.75
}
