//! The closed form's inner steps: the 6-D solve and the seed's level solve without their input\n//! checks, the second root, the climb along the knee circle, the hip and ankle angle\n//! decompositions and the limits' fit.

#[allow(clippy::wildcard_imports)]
use super::*;

#[allow(clippy::inline_always)] // inlined into `solve_pose`'s instruction-set dispatch
#[inline(always)]
pub(super) fn solve_pose_unchecked(
    params: &Leg6Params,
    position: DVec3,
    rotation: DQuat,
) -> Leg6Output {
    let foot = DMat3::from_quat(rotation);
    let roll_joint = position - foot * params.sole;
    // Ankle roll joint → hip centre, foot frame.
    let r = foot.transpose() * (params.hip - roll_joint);
    let lateral = params.lateral_offset();
    let rho2 = r.y * r.y + r.z * r.z;
    let h2 = rho2 - lateral * lateral;
    let lateral_ok = h2 >= -LATERAL_TOLERANCE * rho2;
    let h = h2.max(0.0).sqrt();
    let first = climb(params, &foot, r, lateral, h, rho2);
    let best = if first.is_clean() || h == 0.0 {
        first
    } else {
        other_root(params, &foot, r, lateral, h, rho2, first)
    };
    Leg6Output::new(best.angles, best.in_reach && lateral_ok, best.limited)
}

/// The root with the hip below the ankle (in the ankle pitch joint's frame), kept when it does
/// better than `first`.
#[inline(never)]
fn other_root(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
    first: Candidate,
) -> Candidate {
    let second = climb(params, foot, r, lateral, -h, rho2);
    let score = |c: &Candidate| u8::from(c.in_reach) * 2 + u8::from(c.is_clean());
    if score(&second) > score(&first) {
        second
    } else {
        first
    }
}

/// Ankle roll, knee, ankle pitch and hip for one root `h` of the roll equation
/// (`rho2 = r_y² + r_z²`): first optimistically, with the lower joints' limits checked only
/// at the end, so that no angle waits for another; when a lower joint turns out to be outside
/// its limit, again joint by joint with clamping.
#[inline]
fn climb(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
) -> Candidate {
    let optimistic = climb_with::<false>(params, foot, r, lateral, h, rho2);
    if optimistic.lower_outside {
        climb_clamped(params, foot, r, lateral, h, rho2)
    } else {
        optimistic
    }
}

#[inline(never)]
fn climb_clamped(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
) -> Candidate {
    climb_with::<true>(params, foot, r, lateral, h, rho2)
}

/// [`climb`] with (`CLAMP`) or without clamping the lower joints on the way up; without, a
/// lower joint outside its limit gives `lower_outside`.
///
/// The common path divides instead of normalizing: when the lateral offset is within reach
/// `(r_y, r_z)` and `(−W, h)` both have length `ρ`, and when the knee is within reach the two
/// ankle pitch vectors both have length `|w|`, so their dot and cross products are cosine and
/// sine times a length known early. Clamped or out-of-reach cases normalize.
///
/// Kept as one function of about 160 lines: the closed form is one straight-line computation (roll,
/// knee, pitches, hip) whose intermediate lengths are reused across the steps; split, they would be
/// passed around or recomputed.
#[allow(clippy::too_many_lines)] // one straight-line computation, split only by its comments
#[allow(clippy::inline_always)] // measured: 131-134 ns per pose solve without, 108-118 with
#[inline(always)]
fn climb_with<const CLAMP: bool>(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
) -> Candidate {
    let limits = &params.limits;
    let mut limited = [false; 6];
    let (mut roll, mut knee, mut ankle_pitch) = (0.0, 0.0, 0.0);

    // Ankle roll: turn (r_y, r_z) onto (−W, h).
    let (sin0, cos0) = (h * r.y + lateral * r.z, h * r.z - lateral * r.y);
    let exact_roll = rho2 > f64::MIN_POSITIVE && rho2 >= lateral * lateral;
    let (mut sin_roll, mut cos_roll) = if exact_roll {
        let inv = rho2.recip();
        (sin0 * inv, cos0 * inv)
    } else {
        unit2(sin0, cos0)
    };
    if CLAMP {
        let (lo, hi) = (limits.min.ankle_roll, limits.max.ankle_roll);
        (roll, limited[5], (sin_roll, cos_roll)) = fit_pair((sin_roll, cos_roll), lo, hi);
    }

    // Hip centre → ankle pitch joint in the ankle pitch joint's XZ plane; the rolled height
    // of the hip is h itself when the roll is exact.
    let wx = -r.x - params.ankle.x;
    let uz = if exact_roll && !limited[5] {
        -h
    } else {
        -(r.y * sin_roll + r.z * cos_roll)
    };
    let wz = uz - params.ankle.z;

    // Knee: |w|² = |t|² + |s|² + 2|t||s| cos(k − δ), bent to the positive side.
    let (tx, tz, sx, sz) = (
        params.thigh.x,
        params.thigh.z,
        params.shank.x,
        params.shank.z,
    );
    let tt = tx * tx + tz * tz;
    let ss = sx * sx + sz * sz;
    // |w|²; with the exact roll wz = −h − ankle.z and h² = h2 is known before h, so |w|² is one
    // multiply-add after the square root.
    let az = params.ankle.z;
    let ww = if exact_roll && !limited[5] {
        let h2 = rho2 - lateral * lateral;
        (wx * wx + h2 + az * az) + h * (2.0 * az)
    } else {
        wx * wx + wz * wz
    };
    let inv_ww = ww.recip();
    let (lt, ls) = (tt.sqrt(), ss.sqrt());
    let ts = lt * ls;
    let mut exact_pitch = ts > 0.0 && ww > f64::MIN_POSITIVE;
    let (mut sin_knee, mut cos_knee, in_plane) = if ts > 0.0 {
        let inv = ts.recip();
        let cos = (ww - tt - ss) * 0.5 * inv;
        let in_plane = cos.abs() <= 1.0 + REACH_TOLERANCE;
        exact_pitch &= cos.abs() <= 1.0;
        let cos = cos.clamp(-1.0, 1.0);
        let sin = triangle_sine(lt, ls, ww) * inv;
        let (cos_d, sin_d) = ((sx * tx + sz * tz) * inv, (sz * tx - sx * tz) * inv);
        (
            sin_d * cos + cos_d * sin,
            cos_d * cos - sin_d * sin,
            in_plane,
        )
    } else {
        (0.0, 1.0, single_link_reach(params, tt + ss, ww))
    };
    if CLAMP {
        let (lo, hi) = (limits.min.knee, limits.max.knee);
        (knee, limited[3], (sin_knee, cos_knee)) = fit_pair((sin_knee, cos_knee), lo, hi);
    }

    // Ankle pitch: turns v = Ry(−knee)·thigh + shank onto w (counterclockwise in (z, x)).
    let vx = tx * cos_knee - tz * sin_knee + sx;
    let vz = tx * sin_knee + tz * cos_knee + sz;
    let (sin0, cos0) = (wz * vx - wx * vz, wz * vz + wx * vx);
    let (mut sin_pitch, mut cos_pitch) = if exact_pitch && !limited[3] {
        (sin0 * inv_ww, cos0 * inv_ww)
    } else {
        unit2(sin0, cos0)
    };
    if CLAMP {
        let (lo, hi) = (limits.min.ankle_pitch, limits.max.ankle_pitch);
        (ankle_pitch, limited[4], (sin_pitch, cos_pitch)) =
            fit_pair((sin_pitch, cos_pitch), lo, hi);
    }

    // Hip: R_hip = R_foot · Rx(−roll) · Ry(−(knee + ankle pitch)); the first product does
    // not wait for the knee.
    let rolled = DMat3::from_cols(
        foot.x_axis,
        foot.y_axis * cos_roll - foot.z_axis * sin_roll,
        foot.y_axis * sin_roll + foot.z_axis * cos_roll,
    );
    let cq = cos_knee * cos_pitch - sin_knee * sin_pitch;
    let sq = sin_knee * cos_pitch + cos_knee * sin_pitch;
    let (hip_sin, hip_cos) = hip_pairs(&rolled, cq, sq, params.hip_order);

    // All six angles at once (the lower three again when clamping: cold).
    let [a_roll, a_knee, a_pitch, hip_x, hip_y, hip_z] = angles(
        [
            sin_roll, sin_knee, sin_pitch, hip_sin[0], hip_sin[1], hip_sin[2],
        ],
        [
            cos_roll, cos_knee, cos_pitch, hip_cos[0], hip_cos[1], hip_cos[2],
        ],
    );
    if !CLAMP {
        let (lo, hi) = (&limits.min, &limits.max);
        let (roll_out, knee_out, pitch_out);
        (roll, roll_out) = fit(a_roll, lo.ankle_roll, hi.ankle_roll);
        (knee, knee_out) = fit(a_knee, lo.knee, hi.knee);
        (ankle_pitch, pitch_out) = fit(a_pitch, lo.ankle_pitch, hi.ankle_pitch);
        if roll_out | knee_out | pitch_out {
            return Candidate::LOWER_OUTSIDE;
        }
    }
    let ([yaw, hip_roll, hip_pitch], hip_limited) = hip_angles([hip_x, hip_y, hip_z], params);
    limited[0] = hip_limited[0];
    limited[1] = hip_limited[1];
    limited[2] = hip_limited[2];

    Candidate {
        angles: Leg6Angles {
            hip_yaw: yaw,
            hip_roll,
            hip_pitch,
            knee,
            ankle_pitch,
            ankle_roll: roll,
        },
        in_reach: in_plane,
        limited,
        lower_outside: false,
    }
}

/// With a zero-length thigh or shank, whether the hip → ankle pitch distance `√ww` equals the
/// one link's length `√ll`, within the rounding of the positions it was computed from.
#[inline(never)]
fn single_link_reach(params: &Leg6Params, ll: f64, ww: f64) -> bool {
    let scale = ll.sqrt() + params.hip.length() + params.ankle.length() + params.sole.length();
    (ww.sqrt() - ll.sqrt()).abs() <= REACH_TOLERANCE * scale
}

/// `a b sin γ` for the triangle with sides `a`, `b` and `√cc` (γ between `a` and `b`), as
/// `√((cc − (a − b)²)((a + b)² − cc)) / 2`, 0 outside the triangle inequality. Unlike
/// `√(1 − cos²)` it is exactly 0 for a fully folded pair of equal links, where the direction
/// of the fold is undefined and `√(rounding)` would move the end by nanometres.
#[inline]
fn triangle_sine(a: f64, b: f64, cc: f64) -> f64 {
    let (d, s) = (a - b, a + b);
    ((cc - d * d).max(0.0) * (s * s - cc).max(0.0)).sqrt() * 0.5
}

/// `(sin, cos)` of the angle of the vector `(cos·n, sin·n)`; `(0, 1)` for a zero vector.
#[inline]
fn unit2(sin: f64, cos: f64) -> (f64, f64) {
    let n2 = sin * sin + cos * cos;
    if n2 > f64::MIN_POSITIVE {
        let inv = n2.sqrt().recip();
        (sin * inv, cos * inv)
    } else {
        (0.0, 1.0)
    }
}

/// The hip rotation `rolled · Ry(−q)` (thigh to leg frame, `(cq, sq)` the cosine and sine
/// of `q`) decomposed in the leg's hip order, as (sine, cosine) pairs by axis (roll, pitch,
/// yaw), for [`angles`].
#[allow(clippy::inline_always)] // inside `solve_pose`'s dispatched code
#[inline(always)]
pub(super) fn hip_pairs(rolled: &DMat3, cq: f64, sq: f64, order: HipOrder) -> ([f64; 3], [f64; 3]) {
    match order {
        HipOrder::YawRollPitch => decompose::<2, 0, 1>(rolled, cq, sq),
        HipOrder::YawPitchRoll => decompose::<2, 1, 0>(rolled, cq, sq),
        HipOrder::RollYawPitch => decompose::<0, 2, 1>(rolled, cq, sq),
        HipOrder::RollPitchYaw => decompose::<0, 1, 2>(rolled, cq, sq),
        HipOrder::PitchYawRoll => decompose::<1, 2, 0>(rolled, cq, sq),
        HipOrder::PitchRollYaw => decompose::<1, 0, 2>(rolled, cq, sq),
    }
}

/// The hip's (yaw, roll, pitch) from the first decomposition's angles by axis (roll, pitch,
/// yaw): the decomposition inside the limits when there is one, and which angles were
/// clamped.
#[allow(clippy::inline_always)] // inside `solve_pose`'s dispatched code
#[inline(always)]
fn hip_angles(first: [f64; 3], params: &Leg6Params) -> ([f64; 3], [bool; 3]) {
    let (lo, hi) = (&params.limits.min, &params.limits.max);
    let (yaw, yaw_out) = fit(first[2], lo.hip_yaw, hi.hip_yaw);
    let (roll, roll_out) = fit(first[0], lo.hip_roll, hi.hip_roll);
    let (pitch, pitch_out) = fit(first[1], lo.hip_pitch, hi.hip_pitch);
    if yaw_out | roll_out | pitch_out {
        hip_angles_limited(first, params)
    } else {
        ([yaw, roll, pitch], [false; 3])
    }
}

/// [`hip_angles`] when the first decomposition (angles by axis: roll, pitch, yaw) leaves a
/// limit: the other decomposition when it is closer to the limits, then clamped.
#[inline(never)]
fn hip_angles_limited(first: [f64; 3], params: &Leg6Params) -> ([f64; 3], [bool; 3]) {
    let axes = params.hip_order.axes();
    let (lo, hi) = (params.limits.min, params.limits.max);
    let range = |axis: usize| match axis {
        0 => (lo.hip_roll, hi.hip_roll),
        1 => (lo.hip_pitch, hi.hip_pitch),
        _ => (lo.hip_yaw, hi.hip_yaw),
    };
    // The same rotation as (q1 + π, π − q2, q3 + π) in joint order.
    let [q1, q2, q3] = axes.map(|axis| first[axis]);
    let second_in_order = [wrap(q1 + PI), wrap(PI - q2), wrap(q3 + PI)];
    let mut second = [0.0; 3];
    for (angle, axis) in second_in_order.into_iter().zip(axes) {
        second[axis] = angle;
    }
    let outside = |q: [f64; 3]| -> f64 { (0..3).map(|axis| excess(q[axis], range(axis))).sum() };
    let chosen = if outside(second) < outside(first) {
        second
    } else {
        first
    };
    let mut angles = [0.0; 3];
    let mut limited = [false; 3];
    for axis in 0..3 {
        let (min, max) = range(axis);
        (angles[axis], limited[axis]) = fit(chosen[axis], min, max);
    }
    // Axes 2, 0, 1 are yaw, roll, pitch.
    (
        [angles[2], angles[0], angles[1]],
        [limited[2], limited[0], limited[1]],
    )
}

/// Tait–Bryan angles with `m = R_I(q1) · R_J(q2) · R_K(q3)`, `q2` in `[−π/2, π/2]`, as
/// (sine, cosine) pairs up to a positive scale, by axis (roll about x, pitch about y, yaw
/// about z). The first angle comes from the last column, the others from `R_I(−q1) · m`, so
/// they stay consistent at gimbal lock (where `q1` is 0).
///
/// `m = rolled · Ry(−q)` is read entry by entry: seven of its nine entries are needed.
#[inline]
fn decompose<const I: usize, const J: usize, const K: usize>(
    rolled: &DMat3,
    cq: f64,
    sq: f64,
) -> ([f64; 3], [f64; 3]) {
    // +1 for cyclic orders (xyz, yzx, zxy), −1 for the others.
    let e = if (I + 1) % 3 == J { 1.0 } else { -1.0 };
    let f = rolled.to_cols_array_2d();
    // Columns of Ry(−q): (cq, 0, sq), (0, 1, 0), (−sq, 0, cq).
    let at = |row: usize, col: usize| match col {
        0 => f[0][row] * cq + f[2][row] * sq,
        1 => f[1][row],
        _ => f[2][row] * cq - f[0][row] * sq,
    };
    // (sin q1, cos q1) times cos q2 ≥ 0; at gimbal lock (cos q2 = 0) q1 is taken as 0.
    let (mut s1, mut c1) = (-e * at(J, K), at(K, K));
    let n2 = s1 * s1 + c1 * c1;
    if n2 <= 1e-300 {
        (s1, c1) = (0.0, 1.0);
    }
    // Row J of R_I(−q1) · m (times cos q2); its row K has cos q2 on the diagonal.
    let m_jj = c1 * at(J, J) + e * s1 * at(K, J);
    let m_ji = c1 * at(J, I) + e * s1 * at(K, I);
    let (mut sin, mut cos) = ([0.0; 3], [0.0; 3]);
    (sin[I], cos[I]) = (s1, c1);
    (sin[J], cos[J]) = (e * at(I, K), n2.sqrt());
    (sin[K], cos[K]) = (e * m_ji, m_jj);
    (sin, cos)
}

/// `atan2(sin, cos)` in `(−π, π]`, for any scale of `(cos, sin)`; 0 for `(0, 0)`.
#[inline]
pub(super) fn angle(sin: f64, cos: f64) -> f64 {
    let [a] = angles([sin], [cos]);
    a
}

/// `atan2(sin[i], cos[i])` in `(−π, π]` for each `i`, for any scale of `(cos, sin)`; 0 for
/// `(0, 0)`.
///
/// Written out rather than calling libm (19 ns per call here, half of a solve) and without
/// branches, so that the six angles of a solve share SSE2 instructions: the ratio
/// `q = min/max` of the absolute values is reduced to `t = (q − c)/(1 + q c)` around the
/// nearest `c = k/16`, so `|t| ≤ 1/32` and `atan q = atan(k/16) + t − t³/3 + … − t¹¹/11` (the
/// next term is below 1e-19 relative); then the octant is restored. Within 2 ulp of the
/// correctly rounded angle (checked against `f64::atan2` in the tests below).
#[inline(always)]
#[allow(clippy::inline_always)] // the point is to inline the whole loop where it is used
pub(super) fn angles<const N: usize>(sin: [f64; N], cos: [f64; N]) -> [f64; N] {
    /// `atan(k/16)` for `k = 0..=16`, correctly rounded (exact rational arithmetic), padded
    /// to 32 so that a 5-bit index needs no bounds check.
    const ATAN_SIXTEENTHS: [f64; 32] = [
        0.0,
        0.062_418_809_995_957_35,
        0.124_354_994_546_761_44,
        0.185_347_949_995_694_76,
        0.244_978_663_126_864_14,
        0.302_884_868_374_971_4,
        0.358_770_670_270_572_25,
        0.412_410_441_597_387_3,
        0.463_647_609_000_806_1,
        0.512_389_460_310_737_7,
        0.558_599_315_343_562_4,
        0.602_287_346_134_964_2,
        0.643_501_108_793_284_4,
        0.682_316_554_874_748_1,
        0.718_829_999_621_624_5,
        0.753_151_280_962_194_4,
        std::f64::consts::FRAC_PI_4,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ];
    /// Adding 2⁵² rounds to an integer, which is then the low bits of the sum: no
    /// float-to-integer conversion, and no libm `round` (a call without SSE4.1).
    const ROUND: f64 = 4_503_599_627_370_496.0;
    let mut out = [0.0; N];
    for i in 0..N {
        let (s, c) = (sin[i], cos[i]);
        let (ax, ay) = (c.abs(), s.abs());
        let swap = ay > ax;
        let num = if swap { ax } else { ay };
        let den = if swap { ay } else { ax };
        // Nearest sixteenth k/16 of q = num/den (NaN gives any k and stays NaN).
        let rounded = num / den * 16.0 + ROUND;
        let k = (rounded.to_bits() & 31) as usize;
        let sixteenth = (rounded - ROUND) * 0.0625;
        let t = (num - sixteenth * den) / (den + sixteenth * num);
        // 1 − z/3 + z²/5 − z³/7 + z⁴/9 − z⁵/11 by Estrin's scheme.
        let z = t * t;
        let z2 = z * z;
        let series = (1.0 - z * (1.0 / 3.0))
            + z2 * (1.0 / 5.0 - z * (1.0 / 7.0))
            + z2 * z2 * (1.0 / 9.0 - z * (1.0 / 11.0));
        let mut a = ATAN_SIXTEENTHS[k] + t * series;
        a = if swap {
            std::f64::consts::FRAC_PI_2 - a
        } else {
            a
        };
        a = if c < 0.0 { PI - a } else { a };
        a = if s < 0.0 { -a } else { a };
        out[i] = if den == 0.0 { 0.0 } else { a };
    }
    out
}

/// The angle in `(−π, π]` equal to `angle` modulo 2π.
#[inline]
pub(super) fn wrap(angle: f64) -> f64 {
    if angle > PI {
        angle - TAU
    } else if angle <= -PI {
        angle + TAU
    } else {
        angle
    }
}

/// How far (radians, around the circle) `angle` lies outside `range`; 0 inside.
fn excess(angle: f64, (min, max): (f64, f64)) -> f64 {
    let (fitted, clamped) = fit(angle, min, max);
    if clamped {
        let d = (fitted - angle).rem_euclid(TAU);
        d.min(TAU - d)
    } else {
        0.0
    }
}

/// [`fit`] of the angle of `(sin, cos)`: the fitted angle, whether the limit moved it, and its
/// sine and cosine (the given pair when it did not).
#[inline]
fn fit_pair((sin, cos): (f64, f64), min: f64, max: f64) -> (f64, bool, (f64, f64)) {
    let (fitted, limited) = fit(angle(sin, cos), min, max);
    (
        fitted,
        limited,
        if limited {
            fitted.sin_cos()
        } else {
            (sin, cos)
        },
    )
}

/// `angle`, or `angle ± 2π`, when inside `[min, max]`; otherwise the bound nearer around the
/// circle, and `true`.
#[inline]
pub(super) fn fit(angle: f64, min: f64, max: f64) -> (f64, bool) {
    if angle >= min && angle <= max {
        return (angle, false);
    }
    fit_outside(angle, min, max)
}

#[inline(never)]
fn fit_outside(angle: f64, min: f64, max: f64) -> (f64, bool) {
    for shifted in [angle - TAU, angle + TAU] {
        if shifted >= min && shifted <= max {
            return (shifted, false);
        }
    }
    let to_min = (min - angle).rem_euclid(TAU);
    let to_max = (angle - max).rem_euclid(TAU);
    if to_min <= to_max {
        (min, true)
    } else {
        (max, true)
    }
}

/// Seed 003 (humanoid robot leg, sole parallel to the ground) for the `YawRollPitch` order
/// (see the module docs for the steps).
pub(super) fn solve_level_unchecked(params: &Leg6Params, position: DVec3, yaw: f64) -> Leg6Output {
    let limits = &params.limits;
    let (sin_yaw, cos_yaw) = yaw.sin_cos();
    let turn = |v: DVec3, s: f64| DVec3::new(cos_yaw * v.x - s * v.y, s * v.x + cos_yaw * v.y, v.z);

    // HipJoint: θ_h = ψ_f − ψ_r. The ankle roll joint (the seed's Foot) relative to the hip
    // centre (LegRoot), in the hip yaw joint's frame.
    let foot_joint = position - turn(params.sole, sin_yaw);
    let d = turn(foot_joint - params.hip, -sin_yaw);

    // LegRoot and Foot: a − b tan θ_l = W / cos θ_l, the root with θ_l = 0 at a = W, as
    // (sin θ_l, cos θ_l) = (a h − b W, a W + b h) / (a² + b²).
    let w = params.lateral_offset();
    let (a, b) = (d.y, -d.z);
    let ab2 = a * a + b * b;
    let h2 = ab2 - w * w;
    let lateral_ok = h2 >= -LATERAL_TOLERANCE * ab2;
    let h = h2.max(0.0).sqrt();
    let (sin_l0, cos_l0) = (a * h - b * w, a * w + b * h);
    let exact = ab2 > f64::MIN_POSITIVE && h2 >= 0.0;
    let (sin_l, cos_l) = if exact {
        let inv = ab2.recip();
        (sin_l0 * inv, cos_l0 * inv)
    } else {
        unit2(sin_l0, cos_l0)
    };

    // UpperLeg, Knee, Ankle in LegRoot's XZ plane: P_u at the origin, P_a the ankle pitch
    // joint (the sole is level, so the ankle pitch joint's frame is LegRoot's). Rolled by
    // θ_l, the hip is h above the ankle roll joint.
    let x_a = d.x - params.ankle.x;
    let z_a = if exact {
        -h
    } else {
        -d.y * sin_l + d.z * cos_l
    } - params.ankle.z;
    let (tx, tz, sx, sz) = (
        params.thigh.x,
        params.thigh.z,
        params.shank.x,
        params.shank.z,
    );
    let l_uk2 = tx * tx + tz * tz;
    let l_ka2 = sx * sx + sz * sz;
    let l_ua2 = x_a * x_a + z_a * z_a;
    let (l_uk, l_ka) = (l_uk2.sqrt(), l_ka2.sqrt());
    // γ from L_ua² = L_uk² + L_ka² − 2 L_uk L_ka cos γ and α from
    // L_ka² = L_uk² + L_ua² − 2 L_uk L_ua cos α, with the triangle's sines (law of sines) so
    // that both carry the same rounding; as (sine, cosine) pairs up to a positive scale:
    // 2 L_uk L_ka × (sin γ, cos γ) and 2 L_uk L_ua × (sin α, cos α).
    let two_area = 2.0 * triangle_sine(l_uk, l_ka, l_ua2); // 2 L_uk L_ka sin γ (twice the area)
    let ((sin_g, cos_g), in_plane) = if l_uk * l_ka > 0.0 {
        let cos = l_uk2 + l_ka2 - l_ua2;
        let reach = cos.abs() <= (1.0 + REACH_TOLERANCE) * 2.0 * l_uk * l_ka;
        ((two_area, cos), reach)
    } else {
        ((0.0, -1.0), single_link_reach(params, l_uk2 + l_ka2, l_ua2))
    };
    let (sin_al, cos_al) = if l_uk * l_ka > 0.0 && l_ua2 > 0.0 {
        (two_area, l_uk2 + l_ua2 - l_ka2)
    } else {
        (0.0, 1.0)
    };
    // θ_l, γ, α; β the direction of P_u → P_a from the downward vertical (0 with the ankle
    // right below); the directions of the thigh and shank links in the zero pose (0 for
    // straight links). All at once (see `angles`).
    let [theta_l, gamma, alpha, beta, thigh_dir, shank_dir] = angles(
        [sin_l, sin_g, sin_al, x_a, -tx, -sx],
        [cos_l, cos_g, cos_al, -z_a, -tz, -sz],
    );
    let knee = wrap(PI - gamma - shank_dir + thigh_dir);
    let hip_pitch = wrap(-(alpha + beta) - thigh_dir);
    let ankle_pitch = wrap(-hip_pitch - knee);

    let mut limited = [false; 6];
    let mut angles = [yaw, theta_l, hip_pitch, knee, ankle_pitch, -theta_l];
    let lo = limits.min.to_array();
    let hi = limits.max.to_array();
    for i in 0..6 {
        (angles[i], limited[i]) = fit(angles[i], lo[i], hi[i]);
    }
    Leg6Output::new(
        Leg6Angles::from_array(angles),
        in_plane && lateral_ok,
        limited,
    )
}
