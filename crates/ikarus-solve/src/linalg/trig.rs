//! Trigonometry the hot paths share (`limb7`, `robot::srs`, `robot::lm`), and its lane-wise
//! versions for the prepared batch.

use crate::linalg::lanes::{Lanes, Mask};

/// π/2 in three parts for [`sin_cos`]'s reduction, the first two of 33 significant bits (so
/// `k ·` them is exact for the `k` it takes).
const PI_2_A: f64 = 1.570_796_326_734_125_6;
const PI_2_B: f64 = 6.077_100_506_303_966e-11;
const PI_2_C: f64 = 2.022_266_248_795_950_6e-21;

/// Rounds to the nearest integer by `(x + SHIFT) − SHIFT` (`f64::round` is a library call on
/// baseline x86-64).
pub(crate) const SHIFT: f64 = 6_755_399_441_055_744.0;

/// `atan(k/8)`, `k = 0..=8`, [`atan2`]'s table.
const ATAN_EIGHTHS: [f64; 9] = [
    0.0,
    0.124_354_994_546_761_44,
    0.244_978_663_126_864_14,
    0.358_770_670_270_572_25,
    0.463_647_609_000_806_1,
    0.558_599_315_343_562_4,
    0.643_501_108_793_284_4,
    0.718_829_999_621_624_5,
    std::f64::consts::FRAC_PI_4,
];

/// `(sin x, cos x)` by Taylor polynomials on `|r| ≤ π/4` after removing whole quarter
/// turns (`r = x − kπ/2`, π/2 in three parts); within 2 ulp of the library's for `|x| < 1e4`,
/// beyond which it defers to it (and for NaN). About twice as fast as the C library's
/// `sincos` here (which saves and restores the rounding mode): the limb solvers' and the
/// robot LM's forward pass's only transcendental.
#[allow(clippy::inline_always)] // compiled inside `limb7`'s instruction-set dispatch too
#[inline(always)]
pub(crate) fn sin_cos(x: f64) -> (f64, f64) {
    if x.abs() >= 1e4 || x.is_nan() {
        return x.sin_cos();
    }
    let k = (x * std::f64::consts::FRAC_2_PI + SHIFT) - SHIFT;
    let r = ((x - k * PI_2_A) - k * PI_2_B) - k * PI_2_C;
    let z = r * r;
    let (z2, z4) = (z * z, (z * z) * (z * z));
    // 1/3!, 1/5!, … 1/15! and 1/2!, 1/4!, … 1/16!, alternating signs, by Estrin's scheme
    // (pairs of terms, then pairs of pairs, in powers `z`, `z²`, `z⁴`): three multiply-add
    // levels on the dependency chain instead of Horner's seven or eight, for callers that
    // evaluate several angles at once (the robot LM's forward pass).
    let sin = r + r
        * z
        * ((-1.0 / 6.0 + z * (1.0 / 120.0))
            + z2 * (-1.0 / 5040.0 + z * (1.0 / 362_880.0))
            + z4 * ((-1.0 / 39_916_800.0 + z * (1.0 / 6_227_020_800.0))
                + z2 * (-1.0 / 1_307_674_368_000.0)));
    let cos = 1.0
        + z * ((-0.5 + z * (1.0 / 24.0))
            + z2 * (-1.0 / 720.0 + z * (1.0 / 40_320.0))
            + z4 * ((-1.0 / 3_628_800.0 + z * (1.0 / 479_001_600.0))
                + z2 * (-1.0 / 87_178_291_200.0 + z * (1.0 / 20_922_789_888_000.0))));
    // The quarter turns by bits, not a four-way branch (the quadrant of a joint's trial angle
    // is data the branch predictor misses): an odd `k` swaps the pair; the first's sign flips
    // for `k mod 4 ∈ {2, 3}`, the second's for `{1, 2}` (two's complement: the low bits are
    // `k mod 4` for negative `k` too).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // |k| < 1e4
    let k = k as i64 as u64;
    let swap = (k & 1).wrapping_neg();
    let (s, c) = (sin.to_bits(), cos.to_bits());
    let first = (s & !swap) | (c & swap);
    let second = (c & !swap) | (s & swap);
    (
        f64::from_bits(first ^ ((k >> 1) & 1) << 63),
        f64::from_bits(second ^ ((k ^ (k >> 1)) & 1) << 63),
    )
}

/// The unit quaternion turning by `angle` (radians) about unit `axis`
/// (`DQuat::from_axis_angle` with [`sin_cos`]).
#[allow(clippy::inline_always)] // hot: the swivel of a seed
#[inline(always)]
pub(crate) fn axis_angle(axis: glam::DVec3, angle: f64) -> glam::DQuat {
    let (sin, cos) = sin_cos(0.5 * angle);
    let v = axis * sin;
    glam::DQuat::from_xyzw(v.x, v.y, v.z, cos)
}

/// `atan2(y, x)` (radians in `[-π, π]`, the quadrant from the signs) within 2 ulp of the
/// library's: `t = min/max(|x|, |y|)` in `[0, 1]`, then `atan t = atan c + atan u` with `c`
/// the nearest eighth and `u = (t − c)/(1 + t·c)`, `|u| ≤ 1/16`, whose odd series is cut after
/// `u¹³` (the first term left out is below 1e-18 of `u`); the octant and quadrant restored
/// from `|y| > |x|` and the signs. Non-finite inputs and `(0, 0)` go to the library. About
/// half the time of glibc's `atan2` here, the closed forms' most frequent transcendental.
#[allow(clippy::inline_always)] // hot: inlined into the closed forms' angle splits
#[inline(always)]
pub(crate) fn atan2(y: f64, x: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    let big = ax.max(ay);
    // A NaN makes the sum NaN, which fails the comparison (`max` would drop it).
    if !(big > 0.0 && ax + ay < f64::INFINITY) {
        return y.atan2(x);
    }
    let t = ax.min(ay) / big;
    let eighths = (t * 8.0 + SHIFT) - SHIFT;
    let c = eighths * 0.125;
    let u = (t - c) / (1.0 + t * c);
    let u2 = u * u;
    let series = u + u
        * u2
        * (-1.0 / 3.0
            + u2 * (1.0 / 5.0
                + u2 * (-1.0 / 7.0 + u2 * (1.0 / 9.0 + u2 * (-1.0 / 11.0 + u2 * (1.0 / 13.0))))));
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 ≤ eighths ≤ 8
    let mut angle = ATAN_EIGHTHS[eighths as usize] + series;
    if ay > ax {
        angle = std::f64::consts::FRAC_PI_2 - angle;
    }
    if x < 0.0 {
        angle = std::f64::consts::PI - angle;
    }
    angle.copysign(y)
}

/// [`sin_cos`] on every lane, by the same operations (the quarter turns by selects instead of
/// bits): `(sin, cos)` and the lanes it does not cover (`|x| ≥ 1e4` or NaN, which the scalar
/// function hands to the library), one bit each.
#[allow(clippy::inline_always)] // compiled inside the dispatched lane code
#[inline(always)]
pub(crate) fn sin_cos_lanes<S: pulp::Simd>(x: Lanes<S>) -> (Lanes<S>, Lanes<S>, Mask<S>) {
    let shift = x.constant(SHIFT);
    let covered = x.abs().lt(x.constant(1e4));
    let k = (x * x.constant(std::f64::consts::FRAC_2_PI) + shift) - shift;
    let r = ((x - k * x.constant(PI_2_A)) - k * x.constant(PI_2_B)) - k * x.constant(PI_2_C);
    let z = r * r;
    let (z2, z4) = (z * z, (z * z) * (z * z));
    let sin = r + r
        * z
        * ((x.constant(-1.0 / 6.0) + z * x.constant(1.0 / 120.0))
            + z2 * (x.constant(-1.0 / 5040.0) + z * x.constant(1.0 / 362_880.0))
            + z4 * ((x.constant(-1.0 / 39_916_800.0) + z * x.constant(1.0 / 6_227_020_800.0))
                + z2 * x.constant(-1.0 / 1_307_674_368_000.0)));
    let cos = x.constant(1.0)
        + z * ((x.constant(-0.5) + z * x.constant(1.0 / 24.0))
            + z2 * (x.constant(-1.0 / 720.0) + z * x.constant(1.0 / 40_320.0))
            + z4 * ((x.constant(-1.0 / 3_628_800.0) + z * x.constant(1.0 / 479_001_600.0))
                + z2 * (x.constant(-1.0 / 87_178_291_200.0)
                    + z * x.constant(1.0 / 20_922_789_888_000.0))));
    // `k mod 4` in [0, 4) (as the low bits of the two's complement `k`): `k − 4⌊k/4⌋`.
    let quarter = k * x.constant(0.25);
    let nearest = (quarter + shift) - shift;
    let floor = nearest
        .gt(quarter)
        .select(nearest - x.constant(1.0), nearest);
    let turns = k - x.constant(4.0) * floor;
    let odd = turns.eq(x.constant(1.0)) | turns.eq(x.constant(3.0));
    let (first, second) = (odd.select(cos, sin), odd.select(sin, cos));
    let first = turns.ge(x.constant(2.0)).select(-first, first);
    let second = (turns.eq(x.constant(1.0)) | turns.eq(x.constant(2.0))).select(-second, second);
    (first, second, !covered)
}

/// [`atan2`] on every lane, by the same operations (the table of eighths by selects): the
/// angle and the lanes it does not cover (a non-finite input or `(0, 0)`, which the scalar
/// function hands to the library), one bit each.
#[allow(clippy::inline_always)] // compiled inside the dispatched lane code
#[inline(always)]
pub(crate) fn atan2_lanes<S: pulp::Simd>(y: Lanes<S>, x: Lanes<S>) -> (Lanes<S>, Mask<S>) {
    let shift = x.constant(SHIFT);
    let (ax, ay) = (x.abs(), y.abs());
    let y_bigger = ay.gt(ax);
    let big = y_bigger.select(ay, ax);
    let small = y_bigger.select(ax, ay);
    let covered = big.gt(x.constant(0.0)) & (ax + ay).lt(x.constant(f64::INFINITY));
    let t = small / big;
    let eighths = (t * x.constant(8.0) + shift) - shift;
    let near = eighths * x.constant(0.125);
    let u = (t - near) / (x.constant(1.0) + t * near);
    let u2 = u * u;
    let series = u + u
        * u2
        * (x.constant(-1.0 / 3.0)
            + u2 * (x.constant(1.0 / 5.0)
                + u2 * (x.constant(-1.0 / 7.0)
                    + u2 * (x.constant(1.0 / 9.0)
                        + u2 * (x.constant(-1.0 / 11.0) + u2 * x.constant(1.0 / 13.0))))));
    let mut table = x.constant(ATAN_EIGHTHS[0]);
    let mut k = 1;
    while k < ATAN_EIGHTHS.len() {
        table = eighths
            .eq(x.constant(k as f64))
            .select(x.constant(ATAN_EIGHTHS[k]), table);
        k += 1;
    }
    let mut angle = table + series;
    angle = y_bigger.select(x.constant(std::f64::consts::FRAC_PI_2) - angle, angle);
    angle = x
        .lt(x.constant(0.0))
        .select(x.constant(std::f64::consts::PI) - angle, angle);
    (angle.copysign(y), !covered)
}

#[cfg(test)]
mod tests {
    use super::{atan2, atan2_lanes, sin_cos, sin_cos_lanes};

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

    #[test]
    fn atan2_matches_the_library() {
        let mut worst_ulps: f64 = 0.0;
        let mut state = 1u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            #[allow(clippy::cast_precision_loss)]
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            2.0 * unit - 1.0
        };
        for i in 0..400_000 {
            let scale = 10f64.powi(i % 13 - 6);
            let (y, x) = (next() * scale, next());
            for (y, x) in [(y, x), (x, y), (-y, x), (y, -x)] {
                let (a, a0) = (atan2(y, x), y.atan2(x));
                let ulp = f64::EPSILON * a0.abs().max(f64::MIN_POSITIVE);
                worst_ulps = worst_ulps.max((a - a0).abs() / ulp);
            }
        }
        assert!(worst_ulps <= 2.0, "worst difference {worst_ulps} ulp");
        // Axes, zeros, infinities and NaN as the library has them.
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1e-310,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for y in special {
            for x in special {
                assert_eq!(
                    atan2(y, x).to_bits(),
                    y.atan2(x).to_bits(),
                    "atan2({y}, {x})"
                );
            }
        }
        assert!(atan2(f64::NAN, 1.0).is_nan() && atan2(1.0, f64::NAN).is_nan());
    }

    fn lanes_match<S: pulp::Simd>(simd: S) {
        use crate::linalg::lanes::Lanes;
        let width = S::F64_LANES;
        let mut state = 7u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            #[allow(clippy::cast_precision_loss)]
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            2.0 * unit - 1.0
        };
        let mut values: Vec<f64> = (0..20_000)
            .map(|i| next() * 10f64.powi(i % 9 - 4))
            .collect();
        values.extend([
            0.0,
            -0.0,
            1e4,
            -1e4,
            9999.9,
            f64::NAN,
            f64::INFINITY,
            1e-300,
        ]);
        values.extend((-16..=16).map(|k| f64::from(k) * std::f64::consts::FRAC_PI_4));
        values.extend((0..=16).map(|k| f64::from(k) / 16.0));
        while !values.len().is_multiple_of(width) {
            values.push(0.5);
        }
        let register = |chunk: &[f64]| {
            let mut r = [simd.splat_f64s(0.0)];
            let flat: &mut [f64] = pulp::bytemuck::cast_slice_mut(r.as_mut_slice());
            flat.copy_from_slice(chunk);
            Lanes::new(simd, r[0])
        };
        let lane = |v: Lanes<S>, i: usize| {
            let r = [v.value()];
            let flat: &[f64] = pulp::bytemuck::cast_slice(r.as_slice());
            flat[i]
        };
        for (chunk, other) in values.chunks(width).zip(values.chunks(width).rev()) {
            let (s, c, leave) = sin_cos_lanes(register(chunk));
            let (angle, leave2) = atan2_lanes(register(chunk), register(other));
            for i in 0..width {
                let (x, y) = (chunk[i], other[i]);
                if leave.bits() & (1 << i) == 0 {
                    let (s0, c0) = sin_cos(x);
                    assert_eq!(
                        (lane(s, i).to_bits(), lane(c, i).to_bits()),
                        (s0.to_bits(), c0.to_bits()),
                        "{simd:?} sin_cos({x})"
                    );
                } else {
                    assert!(x.abs() >= 1e4 || x.is_nan(), "{x}");
                }
                if leave2.bits() & (1 << i) == 0 {
                    assert_eq!(
                        lane(angle, i).to_bits(),
                        atan2(x, y).to_bits(),
                        "{simd:?} atan2({x}, {y})"
                    );
                } else {
                    let (big, sum) = (x.abs().max(y.abs()), x.abs() + y.abs());
                    assert!(big == 0.0 || !sum.is_finite() || big.is_nan(), "{x} {y}");
                }
            }
        }
    }

    #[test]
    fn lane_versions_give_the_bits_of_the_scalar_ones() {
        lanes_match(pulp::Scalar::new());
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(simd) = pulp::x86::V3::try_new() {
                lanes_match(simd);
            }
            if let Some(simd) = pulp::x86::V4::try_new() {
                lanes_match(simd);
            }
        }
    }
}
