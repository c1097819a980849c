//! Trigonometry the hot paths share (`limb7`, `robot::lm`).

/// `(sin x, cos x)` by Taylor polynomials on `|r| ≤ π/4` after removing whole quarter
/// turns (`r = x − kπ/2`, π/2 in three parts); within 2 ulp of the library's for `|x| < 1e4`,
/// beyond which it defers to it (and for NaN). About twice as fast as the C library's
/// `sincos` here (which saves and restores the rounding mode): the limb solvers' and the
/// robot LM's forward pass's only transcendental.
#[allow(clippy::inline_always)] // compiled inside `limb7`'s instruction-set dispatch too
#[inline(always)]
pub(crate) fn sin_cos(x: f64) -> (f64, f64) {
    // π/2 in three parts, the first two of 33 significant bits (so `k ·` them is exact).
    const PI_2_A: f64 = 1.570_796_326_734_125_6;
    const PI_2_B: f64 = 6.077_100_506_303_966e-11;
    const PI_2_C: f64 = 2.022_266_248_795_950_6e-21;
    // Round to nearest by the 1.5·2⁵² shift: `f64::round` is a library call on baseline x86-64.
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    if x.abs() >= 1e4 || x.is_nan() {
        return x.sin_cos();
    }
    let k = (x * std::f64::consts::FRAC_2_PI + SHIFT) - SHIFT;
    let r = ((x - k * PI_2_A) - k * PI_2_B) - k * PI_2_C;
    let r2 = r * r;
    // 1/3!, 1/5!, … 1/15! and 1/2!, 1/4!, … 1/16!, alternating signs.
    let sin = r + r
        * r2
        * (-1.0 / 6.0
            + r2 * (1.0 / 120.0
                + r2 * (-1.0 / 5040.0
                    + r2 * (1.0 / 362_880.0
                        + r2 * (-1.0 / 39_916_800.0
                            + r2 * (1.0 / 6_227_020_800.0 + r2 * (-1.0 / 1_307_674_368_000.0)))))));
    let cos = 1.0
        + r2 * (-0.5
            + r2 * (1.0 / 24.0
                + r2 * (-1.0 / 720.0
                    + r2 * (1.0 / 40_320.0
                        + r2 * (-1.0 / 3_628_800.0
                            + r2 * (1.0 / 479_001_600.0
                                + r2 * (-1.0 / 87_178_291_200.0
                                    + r2 * (1.0 / 20_922_789_888_000.0))))))));
    #[allow(clippy::cast_possible_truncation)] // |k| < 1e4
    match (k as i64).rem_euclid(4) {
        0 => (sin, cos),
        1 => (cos, -sin),
        2 => (-sin, -cos),
        _ => (-cos, sin),
    }
}

#[cfg(test)]
mod tests {
    use super::sin_cos;

    #[test]
    fn sin_cos_matches_the_library() {
        let mut worst: f64 = 0.0;
        for i in -200_000..=200_000 {
            for x in [f64::from(i) * 1e-4 * 3.7, f64::from(i) * 1.234_567e-4] {
                let (s, c) = sin_cos(x);
                let (s0, c0) = x.sin_cos();
                worst = worst.max((s - s0).abs()).max((c - c0).abs());
            }
        }
        for x in [
            0.0,
            -0.0,
            1e-300,
            std::f64::consts::PI,
            1e4 - 1e-9,
            -1e4 + 1e-9,
        ] {
            let (s, c) = sin_cos(x);
            let (s0, c0) = x.sin_cos();
            worst = worst.max((s - s0).abs()).max((c - c0).abs());
        }
        assert!(worst < 4e-16, "worst difference {worst:e}");
        // Beyond the reduction's range, and NaN: the library's.
        assert_eq!(sin_cos(2e4), 2e4_f64.sin_cos());
        assert!(sin_cos(f64::NAN).0.is_nan());
    }
}
