//! The CCD step at one link (see the [module docs](super)): the ideal rotation capped at the
//! unit angle, plane mode, and the Euler-angle clamp.

use std::f64::consts::PI;

use glam::{DQuat, DVec3, EulerRot};
use ikarus_core::{EulerLimit, ModelPose};

use super::{COS_SMALLEST_TURN, ChainPlan, LinkStep, PlaneRange, State};

/// One link's step; false when it changed nothing.
pub(super) fn step(
    chain: &ChainPlan,
    k: usize,
    iteration: u32,
    goal: DVec3,
    exact: bool,
    state: &mut State,
    model: &ModelPose,
) -> bool {
    let link = &chain.links[k];
    let origin = model.position(link.joint);
    let joint_from_model = model.rotation(link.joint).inverse();
    let to_effector = joint_from_model * (model.position(chain.effector) - origin);
    let to_goal = joint_from_model * (goal - origin);
    let j = link.joint.index();
    let mut own = state.ik_rotation[j] * state.anim_rotation[j];
    if step_in_link(
        chain,
        k,
        iteration,
        to_effector,
        to_goal,
        exact,
        &mut own,
        &mut state.steps[k],
    ) {
        state.ik_rotation[j] = (own * state.anim_rotation[j].inverse()).normalize();
        return true;
    }
    false
}

/// One link's step from the effector and goal seen in the link's own frame; false when it
/// changed nothing.
#[allow(clippy::too_many_arguments)]
// Kept as one function of about 100 lines, inlined into the local loop: its result then
// stays in registers (151 k instead of 172 k instructions per frame, 27.8 instead of 33.0 µs
// per compatible frame).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn step_in_link(
    chain: &ChainPlan,
    k: usize,
    iteration: u32,
    to_effector: DVec3,
    to_goal: DVec3,
    exact: bool,
    own: &mut DQuat,
    carried: &mut LinkStep,
) -> bool {
    let link = &chain.links[k];
    // Unnormalised directions `a`, `b`: every test below is scale-free (`a·b` against
    // `|a||b|` times a cosine), and the shortest arc is `(a × b, |a||b| + a·b)` normalised;
    // one square root instead of two normalisations, and no division.
    let lengths = (to_effector.length_squared() * to_goal.length_squared()).sqrt();
    if lengths <= 1e-300 || !lengths.is_finite() {
        return false;
    }
    let dot = to_effector.dot(to_goal);
    let axis = to_effector.cross(to_goal);
    // The unit angle is MMD's per-step budget; exact mode steps the whole way (its limits
    // still apply), so long chains with small unit angles are not starved.
    let (unit_angle, cos_unit_angle) = if exact {
        (PI, -1.0)
    } else {
        (chain.unit_angle, chain.cos_unit_angle)
    };
    if let (Some(plane), Some(limit)) = (link.plane, link.limit) {
        let axis_vector = DVec3::AXES[plane];
        // Turning the effector direction `a` by ±θ about `u` gives
        // `a∥ + cos θ·a⊥ ± sin θ·(u × a)`, so `+θ` brings it nearer the goal `b` exactly when
        // `(u × a)·b = u·(a × b) > 0` (θ in (0, π]): MMD compares the two dot products, the
        // same test.
        let plus_is_nearer = axis[plane] > 0.0;
        if let (Some(range), true) = (link.plane_range, iteration > 0) {
            let (cos, sin) = plane_step_by_half_angles(
                &range,
                carried.plane_half,
                plus_is_nearer,
                (dot, lengths, axis.length_squared()),
                cos_unit_angle,
                if exact {
                    (1.0, 0.0)
                } else {
                    chain.half_unit_sin_cos
                },
            );
            carried.plane_half = (cos, sin);
            let axis = axis_vector * sin;
            *own = DQuat::from_xyzw(axis.x, axis.y, axis.z, cos);
            return true;
        }
        let angle = (dot / lengths).clamp(-1.0, 1.0).acos().min(unit_angle);
        let mut next = carried.plane + if plus_is_nearer { angle } else { -angle };
        let (lo, hi) = (limit.min[plane], limit.max[plane]);
        if iteration == 0 && (next < lo || next > hi) {
            // Starting outside the range: try the mirrored bend first (MMD's knee rule).
            if -next > lo && -next < hi {
                next = -next;
            } else {
                let middle = 0.5 * (lo + hi);
                if (middle - next).abs() > (middle + next).abs() {
                    next = -next;
                }
            }
        }
        let next = next.clamp(lo, hi);
        carried.plane = next;
        let (sin, cos) = (0.5 * next).sin_cos();
        carried.plane_half = (cos, sin);
        let axis = axis_vector * sin;
        *own = DQuat::from_xyzw(axis.x, axis.y, axis.z, cos);
        return true;
    }
    // MMD skips turns under 1e-3 degrees, which leaves about 1e-5 of the lever arm as
    // residual; exact mode turns down to rounding.
    if !exact && dot > COS_SMALLEST_TURN * lengths {
        return false;
    }
    if axis.length_squared() < 1e-30 * lengths * lengths {
        return false;
    }
    let turn = if exact || dot >= cos_unit_angle * lengths {
        // Within the unit angle: the shortest arc from `a` to `b`.
        DQuat::from_xyzw(axis.x, axis.y, axis.z, lengths + dot).normalize()
    } else {
        // Capped at the unit angle (hair and neckties, 0.12 rad, mostly are): its half-angle
        // sine and cosine were computed once.
        let (sin, cos) = chain.half_unit_sin_cos;
        let axis = axis.normalize() * sin;
        DQuat::from_xyzw(axis.x, axis.y, axis.z, cos)
    };
    let mut rotation = *own * turn;
    if let Some(limit) = link.limit {
        let (clamped, angles) = clamp_euler(rotation, &limit, carried.previous, unit_angle);
        rotation = clamped;
        carried.previous = angles;
    }
    *own = rotation;
    true
}

/// What a compatible-mode step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MmdStep {
    /// The link turned.
    Turned,
    /// The link was left alone (the two directions are parallel, or a distance is zero).
    Skipped,
    /// The effector and goal directions from the link agree (MMD's directional convergence):
    /// the chain stops.
    Converged,
}

/// The largest middle Euler angle MMD's decomposition keeps (88°, the literal of MMD's
/// `BoneTransform_CcdIk` as mmd-anim-runtime and babylon-mmd carry it).
const MIDDLE_ANGLE_CAP: f64 = 88.0 * PI / 180.0;

/// MMD's CCD step at link `k` (compatible mode; see the [module docs](super)), from the
/// effector and goal seen from the link's origin in its parent's frame: the turn is built
/// there, capped at the unit angle times `k + 1`, and applied on the left of `own`
/// (`ik · animated`). A limited
/// link's result is decomposed into Euler angles in the order its limit calls for
/// ([`mmd_euler_order`]) and clamped; in the first half of the budget (`reflect`), an angle
/// past a bound is reflected back into the range when it fits, and a link limited to one
/// axis turns about that axis only.
pub(super) fn mmd_step(
    chain: &ChainPlan,
    k: usize,
    reflect: bool,
    a: DVec3,
    b: DVec3,
    own: &mut DQuat,
) -> MmdStep {
    let link = &chain.links[k];
    let (a_length, b_length) = (a.length(), b.length());
    if a_length <= 1e-12 || b_length <= 1e-12 || !(a_length * b_length).is_finite() {
        return MmdStep::Skipped;
    }
    let (a, b) = (a / a_length, b / b_length);
    // MMD stops the whole chain when the two directions agree (|â − b̂|² < 1e-7).
    if (a - b).length_squared() < 1e-7 {
        return MmdStep::Converged;
    }
    let cross = a.cross(b);
    if cross.length_squared() < 1e-10 {
        return MmdStep::Skipped; // Opposite directions: no axis.
    }
    // MMD takes the angle as the arc cosine of a single-precision dot product: near 1 its
    // steps are 0, 3.45e-4, 4.88e-4, … rad (`acos(1 − n·2⁻²⁴)`), so a residual under
    // 3.45e-4 rad turns nothing. The dot product is rounded to f32 here for the same steps;
    // the turn's half-angle sine and cosine come from it without trigonometry (capped at
    // the unit angle times `k + 1`, precomputed).
    let cos = f64::from((a.dot(b) as f32).clamp(-1.0, 1.0));
    let (half_sin, half_cos) = if cos < link.mmd_cap.cos {
        link.mmd_cap.half_sin_cos
    } else {
        ((0.5 * (1.0 - cos)).sqrt(), (0.5 * (1.0 + cos)).sqrt())
    };
    let turn = |axis: DVec3| {
        let axis = axis * half_sin;
        DQuat::from_xyzw(axis.x, axis.y, axis.z, half_cos)
    };
    let Some(limit) = link.limit else {
        *own = (turn(cross.normalize()) * *own).normalize();
        return MmdStep::Turned;
    };
    let axis = match link.plane {
        Some(plane) if reflect => {
            let u = DVec3::AXES[plane];
            if cross.dot(u) < 0.0 { -u } else { u }
        }
        _ => cross.normalize(),
    };
    let candidate = turn(axis) * *own;
    *own = mmd_clamp(candidate, &limit, reflect);
    MmdStep::Turned
}

/// The Euler order MMD decomposes a limited link in, from its limit: Y-X-Z when the X range
/// lies inside ±90°, else Z-Y-X when the Y range does, else X-Z-Y (the middle axis is the one
/// whose range keeps it off the gimbal lock). The test is symmetric, so it reads the same in
/// ikarus's mirrored frame.
pub(super) fn mmd_euler_order(limit: &EulerLimit) -> EulerRot {
    let inside = |k: usize| limit.min[k] > -0.5 * PI && limit.max[k] < 0.5 * PI;
    if inside(0) {
        EulerRot::YXZ
    } else if inside(1) {
        EulerRot::ZYX
    } else {
        EulerRot::XZY
    }
}

/// `rotation` decomposed in the limit's MMD order (middle angle capped at 88°), each angle
/// clamped to its range — reflected back into it first when `reflect` and the reflection
/// fits — and rebuilt. An axis whose range is `[0, 0]` always clamps to 0 (its reflection
/// leaves the range), so its angle is neither computed nor rebuilt; the first and last
/// angles are `atan2` of two entries both scaled by the middle angle's cosine, which is
/// positive under the cap, so the scale is left out.
pub(super) fn mmd_clamp(rotation: DQuat, limit: &EulerLimit, reflect: bool) -> DQuat {
    let m = glam::DMat3::from_quat(rotation);
    // `r(i, j)`: row i, column j.
    let r = |i: usize, j: usize| m.col(j)[i];
    let free = |k: usize| limit.min[k] != 0.0 || limit.max[k] != 0.0;
    let middle = |entry: f64| {
        (-entry)
            .clamp(-1.0, 1.0)
            .asin()
            .clamp(-MIDDLE_ANGLE_CAP, MIDDLE_ANGLE_CAP)
    };
    // The angles about X, Y and Z, and the order they multiply in.
    let mut angles = [0.0; 3];
    let axes = match mmd_euler_order(limit) {
        EulerRot::YXZ => {
            // R = Ry · Rx · Rz.
            if free(0) {
                angles[0] = middle(r(1, 2));
            }
            if free(1) {
                angles[1] = r(0, 2).atan2(r(2, 2));
            }
            if free(2) {
                angles[2] = r(1, 0).atan2(r(1, 1));
            }
            [1, 0, 2]
        }
        EulerRot::ZYX => {
            // R = Rz · Ry · Rx.
            if free(1) {
                angles[1] = middle(r(2, 0));
            }
            if free(0) {
                angles[0] = r(2, 1).atan2(r(2, 2));
            }
            if free(2) {
                angles[2] = r(1, 0).atan2(r(0, 0));
            }
            [2, 1, 0]
        }
        _ => {
            // R = Rx · Rz · Ry.
            if free(2) {
                angles[2] = middle(r(0, 1));
            }
            if free(0) {
                angles[0] = r(2, 1).atan2(r(1, 1));
            }
            if free(1) {
                angles[1] = r(0, 2).atan2(r(0, 0));
            }
            [0, 2, 1]
        }
    };
    let mut rebuilt = DQuat::IDENTITY;
    for axis in axes.into_iter().filter(|&k| free(k)) {
        let (lo, hi) = (limit.min[axis], limit.max[axis]);
        let mut v = angles[axis];
        if v < lo {
            let reflected = 2.0 * lo - v;
            v = if reflect && reflected <= hi {
                reflected
            } else {
                lo
            };
        }
        if v > hi {
            let reflected = 2.0 * hi - v;
            v = if reflect && reflected >= lo {
                reflected
            } else {
                hi
            };
        }
        rebuilt *= DQuat::from_axis_angle(DVec3::AXES[axis], v);
    }
    rebuilt
}

/// MMD's iteration budget for a chain: its loop count, raised to `⌊4π / unit angle⌋` (at most
/// 360) — the correction measured on MMD 9.32 (a chain authored with one loop and
/// a 0.5 rad unit angle runs 25), as mmd-anim-runtime reproduces it.
pub(super) fn mmd_budget(iterations: u32, unit_angle: f64) -> u32 {
    let unit = unit_angle as f32;
    let minimum = if unit.is_finite() && unit > 0.0 {
        (4.0 * std::f32::consts::PI / unit).min(360.0) as u32
    } else {
        0
    };
    iterations.max(minimum).max(1)
}

/// A plane-mode step after the first iteration, with the link's angle `θ` held as the cosine
/// and sine of `θ / 2` (`(c, s)`, θ inside its range): the same rule as the general plane
/// step — turn by ± the angle `α` between the effector and goal directions, capped at the
/// unit angle, then clamp to the range — without trigonometry. `α` and the room left to the
/// bound ahead (`hi − θ` or `θ − lo`) both lie in `[0, π]` (the range spans at most π), where
/// the cosine decreases: the step passes the bound exactly when `cos α` is the smaller, and
/// `cos(hi − θ)` comes from `cos θ = c² − s²`, `sin θ = 2cs`. Otherwise the new half angle is
/// `θ/2 ± α/2` by the addition formulas, with `cos(α/2)` and `sin(α/2)` from `a·b`, `|a||b|`
/// and `|a × b|²` (each from the side without cancellation). `arc` is `(a·b, |a||b|,
/// |a × b|²)`; `unit_half` the unit angle's half-angle `(sin, cos)`. Returns the new `(c, s)`.
fn plane_step_by_half_angles(
    range: &PlaneRange,
    (c, s): (f64, f64),
    plus: bool,
    (dot, lengths, cross_squared): (f64, f64, f64),
    cos_unit_angle: f64,
    unit_half: (f64, f64),
) -> (f64, f64) {
    // `cos α` times |a||b|, and the half-angle cosine and sine of α.
    let (cos_step, half_cos, half_sin) = if dot < cos_unit_angle * lengths {
        (cos_unit_angle * lengths, unit_half.1, unit_half.0)
    } else if dot >= 0.0 {
        let sum = lengths + dot;
        (
            dot,
            (sum / (2.0 * lengths)).sqrt(),
            (cross_squared / (2.0 * lengths * sum)).sqrt(),
        )
    } else {
        let difference = lengths - dot;
        (
            dot,
            (cross_squared / (2.0 * lengths * difference)).sqrt(),
            (difference / (2.0 * lengths)).sqrt(),
        )
    };
    let (cos_theta, sin_theta) = (c * c - s * s, 2.0 * c * s);
    if plus {
        let (cos_hi, sin_hi) = range.hi_full;
        let cos_room = cos_hi * cos_theta + sin_hi * sin_theta;
        if cos_step < cos_room * lengths {
            return range.hi_half;
        }
        (c * half_cos - s * half_sin, s * half_cos + c * half_sin)
    } else {
        let (cos_lo, sin_lo) = range.lo_full;
        let cos_room = cos_theta * cos_lo + sin_theta * sin_lo;
        if cos_step < cos_room * lengths {
            return range.lo_half;
        }
        (c * half_cos + s * half_sin, s * half_cos - c * half_sin)
    }
}

/// `angle` wrapped to `(−π, π]`.
fn wrap(angle: f64) -> f64 {
    let wrapped = (angle + PI).rem_euclid(2.0 * PI) - PI;
    if wrapped <= -PI {
        wrapped + 2.0 * PI
    } else {
        wrapped
    }
}

/// The X-Y-Z Euler angles of `rotation` nearest `previous` (of its two decompositions), each
/// clamped to the limit and moved at most `unit_angle` from `previous`; returns the rebuilt
/// rotation and the angles.
pub(super) fn clamp_euler(
    rotation: DQuat,
    limit: &EulerLimit,
    previous: DVec3,
    unit_angle: f64,
) -> (DQuat, DVec3) {
    let (a, b, c) = rotation.to_euler(EulerRot::XYZ);
    let first = DVec3::new(a, b, c);
    let second = DVec3::new(wrap(a + PI), wrap(PI - b), wrap(c + PI));
    let distance = |v: DVec3| (0..3).map(|k| wrap(v[k] - previous[k]).abs()).sum::<f64>();
    let mut angles = if distance(second) < distance(first) {
        second
    } else {
        first
    };
    for k in 0..3 {
        let clamped = angles[k].clamp(limit.min[k], limit.max[k]);
        angles[k] = previous[k] + (clamped - previous[k]).clamp(-unit_angle, unit_angle);
    }
    (
        DQuat::from_euler(EulerRot::XYZ, angles.x, angles.y, angles.z),
        angles,
    )
}

/// True when the rotation's X-Y-Z angles (either decomposition inside the limit) touch a bound
/// of an axis that can turn.
pub(super) fn at_bound(rotation: DQuat, limit: &EulerLimit) -> bool {
    let (a, b, c) = rotation.to_euler(EulerRot::XYZ);
    let first = [a, b, c];
    let second = [wrap(a + PI), wrap(PI - b), wrap(c + PI)];
    let inside =
        |v: &[f64; 3]| (0..3).all(|k| v[k] >= limit.min[k] - 1e-9 && v[k] <= limit.max[k] + 1e-9);
    let angles = if inside(&first) || !inside(&second) {
        first
    } else {
        second
    };
    (0..3).any(|k| {
        limit.min[k] < limit.max[k]
            && ((angles[k] - limit.min[k]).abs() < 1e-6 || (angles[k] - limit.max[k]).abs() < 1e-6)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The budget: the loop count, raised to ⌊4π / unit⌋ up to 360 (MMD 9.32 ran 25 loops for
    /// one authored loop at 0.5 rad; hair and necktie at 0.12 rad run 104).
    #[test]
    fn mmd_budget_raises_the_loop_count() {
        assert_eq!(mmd_budget(1, 0.5), 25);
        assert_eq!(mmd_budget(26, 0.5), 26);
        assert_eq!(mmd_budget(8, 0.12), 104);
        assert_eq!(mmd_budget(40, 2.0), 40);
        assert_eq!(mmd_budget(3, 4.0), 3);
        assert_eq!(mmd_budget(1, 0.000_01), 360);
        assert_eq!(mmd_budget(720, 0.000_01), 720);
        assert_eq!(mmd_budget(0, 0.0), 1);
    }

    /// Inside an open limit the decomposition gives the rotation back, in each of MMD's three
    /// orders (middle angle under 88°).
    #[test]
    fn mmd_clamp_round_trips_inside_the_limit() {
        let mut seed = ikarus_testdata::Rng(5);
        for (min, max) in [
            ([-1.0, -3.0, -3.0], [1.0, 3.0, 3.0]), // X inside ±90°: Y-X-Z
            ([-3.0, -1.0, -3.0], [3.0, 1.0, 3.0]), // Y inside: Z-Y-X
            ([-3.0, -3.0, -1.0], [3.0, 3.0, 1.0]), // neither: X-Z-Y
        ] {
            let limit = EulerLimit {
                order: ikarus_core::EulerOrder::Xyz,
                min,
                max,
            };
            // Angles in the order's own product (glam's `from_euler` multiplies first ·
            // middle · last), each inside its range.
            let order = mmd_euler_order(&limit);
            for _ in 0..200 {
                let mut angle = || 0.9 * (2.0 * seed.uniform() - 1.0);
                let rotation = DQuat::from_euler(order, angle(), angle(), angle());
                let back = mmd_clamp(rotation, &limit, true);
                assert!(
                    back.dot(rotation).abs() > 1.0 - 1e-12,
                    "{rotation:?} → {back:?}"
                );
            }
        }
    }

    /// A knee (X in [0.5°, 180°], the rest locked) turned the wrong way: reflected back across
    /// the bound in the first half of the budget, clamped to it after.
    #[test]
    fn mmd_clamp_reflects_a_knee_in_the_first_half() {
        let lo = 0.5f64.to_radians();
        let limit = EulerLimit {
            order: ikarus_core::EulerOrder::Xyz,
            min: [lo, 0.0, 0.0],
            max: [PI, 0.0, 0.0],
        };
        let backwards = DQuat::from_rotation_x(-0.3);
        let reflected = mmd_clamp(backwards, &limit, true);
        let clamped = mmd_clamp(backwards, &limit, false);
        assert!(reflected.dot(DQuat::from_rotation_x(2.0 * lo + 0.3)).abs() > 1.0 - 1e-12);
        assert!(clamped.dot(DQuat::from_rotation_x(lo)).abs() > 1.0 - 1e-12);
        // A side turn on a locked axis is removed, not reflected (its reflection leaves the
        // zero-width range).
        let side = DQuat::from_rotation_x(0.5) * DQuat::from_rotation_z(0.2);
        let kept = mmd_clamp(side, &limit, true);
        assert!(kept.z.abs() < 1e-12 && kept.y.abs() < 1e-12, "{kept:?}");
    }

    /// The trigonometry-free plane step against the rule written with angles: turn by
    /// ± `min(acos(a·b / |a||b|), unit)`, clamp to the range — on knee-like and other ranges
    /// up to π wide, unit angles from small to uncapped, and directions from parallel to
    /// opposite.
    #[test]
    fn half_angle_plane_step_matches_the_angle_rule() {
        let mut seed = ikarus_testdata::Rng(7);
        let mut worst = 0.0f64;
        for case in 0..20_000 {
            let lo = -PI + 2.0 * PI * seed.uniform();
            let hi = (lo + PI * seed.uniform()).min(PI);
            let range = PlaneRange::new(lo, hi).unwrap();
            let theta = lo + (hi - lo) * seed.uniform();
            let unit = if case % 3 == 0 {
                PI
            } else {
                0.01 + 3.0 * seed.uniform()
            };
            let mut direction = || {
                DVec3::new(
                    seed.uniform() - 0.5,
                    seed.uniform() - 0.5,
                    seed.uniform() - 0.5,
                ) * (0.1 + 2.0 * seed.uniform())
            };
            let a = direction();
            let b = match case % 5 {
                0 => a * 1.7 + DVec3::splat(1e-9),  // nearly parallel
                1 => -a * 0.4 + DVec3::splat(1e-9), // nearly opposite
                _ => direction(),
            };
            let (dot, lengths) = (a.dot(b), (a.length_squared() * b.length_squared()).sqrt());
            let plus = a.cross(b).x > 0.0;
            let (sin_half_unit, cos_half_unit) = (0.5 * unit).sin_cos();
            let (c, s) = plane_step_by_half_angles(
                &range,
                ((0.5 * theta).cos(), (0.5 * theta).sin()),
                plus,
                (dot, lengths, a.cross(b).length_squared()),
                unit.cos(),
                (sin_half_unit, cos_half_unit),
            );
            let angle = (dot / lengths).clamp(-1.0, 1.0).acos().min(unit);
            let next = (theta + if plus { angle } else { -angle }).clamp(lo, hi);
            let error = (c - (0.5 * next).cos()).hypot(s - (0.5 * next).sin());
            // `acos` near ±1 loses half the digits (the half-angle form does not), so nearly
            // parallel or opposite directions agree to 1e-7 only.
            let bound = if case % 5 < 2 { 1e-7 } else { 1e-12 };
            if case % 5 >= 2 {
                worst = worst.max(error);
            }
            assert!(error < bound, "case {case}: {error:e}");
        }
        println!("largest difference for general directions {worst:e}");
    }
}
