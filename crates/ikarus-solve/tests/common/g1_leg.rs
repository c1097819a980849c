//! The Unitree G1-proportioned left leg the six-joint leg tests and benches share
//! (`tests/leg6.rs`, `ikarus-bench`'s `benches/leg6.rs`, which includes this file).

// Joint origins and limits are copied from the URDF file digit for digit (0.5236 is the file's
// value, not π/6), so that they can be checked against it.
#![allow(clippy::unreadable_literal, clippy::approx_constant, dead_code)]

use ikarus_core::glam::{DQuat, DVec3};
use ikarus_solve::leg6::{HipOrder, Leg6Limits, Leg6Params};

/// The zero-pose points of the Unitree G1 left leg from `g1_29dof.urdf` (x forward, y left,
/// z up: the leg frame): hip centre, knee, ankle pitch, ankle roll, sole.
///
/// Joint origins (parent link → child link):
/// - `left_hip_pitch_joint`: xyz (0, 0.064452, −0.1027), axis y, [−2.5307, 2.8798]
/// - `left_hip_roll_joint`: xyz (0, 0.052, −0.030465), rpy (0, −0.1749, 0), axis x,
///   [−0.5236, 2.9671]
/// - `left_hip_yaw_joint`: xyz (0.025001, 0, −0.12412), axis z, [−2.7576, 2.7576]
/// - `left_knee_joint`: xyz (−0.078273, 0.0021489, −0.17734), rpy (0, 0.1749, 0), axis y,
///   [−0.087267, 2.8798]
/// - `left_ankle_pitch_joint`: xyz (0, −9.4445e−5, −0.30001), axis y, [−0.87267, 0.5236]
/// - `left_ankle_roll_joint`: xyz (0, 0, −0.017558), axis x, [−0.2618, 0.2618]
/// - `left_ankle_roll_link` collision spheres (radius 0.005) at z = −0.03, x = −0.05 (heel)
///   and x = 0.12 (toe): the sole 0.035 m below the ankle roll axis.
///
/// The G1's hip has no closed form: its roll and yaw axes meet 3.6 cm off the pitch axis and
/// are pitched by 0.1749 rad. The leg used here keeps the G1's pitch axis, hip order, knee,
/// shank, ankle offsets, sole and limits, and moves the roll and yaw axes (untilted) through the
/// pitch axis at the roll joint's lateral position. Knee, ankle and foot points are the G1's
/// own zero-pose positions (the two 0.1749 rad tilts cancel at the knee).
pub fn g1_points() -> [DVec3; 5] {
    let pitch = DVec3::new(0.0, 0.064452, -0.1027);
    let roll = pitch + DVec3::new(0.0, 0.052, -0.030465);
    let tilt = DQuat::from_rotation_y(-0.1749);
    let yaw = roll + tilt * DVec3::new(0.025001, 0.0, -0.12412);
    let knee = yaw + tilt * DVec3::new(-0.078273, 0.0021489, -0.17734);
    let ankle_pitch = knee + DVec3::new(0.0, -9.4445e-5, -0.30001);
    let ankle_roll = ankle_pitch + DVec3::new(0.0, 0.0, -0.017558);
    let hip = DVec3::new(pitch.x, roll.y, pitch.z);
    [
        hip,
        knee,
        ankle_pitch,
        ankle_roll,
        DVec3::new(0.0, 0.0, -0.035),
    ]
}

/// The G1 leg's joint ranges in [`Leg6Angles`](ikarus_solve::leg6::Leg6Angles) order (hip yaw,
/// hip roll, hip pitch, knee, ankle pitch, ankle roll), radians.
pub const G1_RANGES: [(f64, f64); 6] = [
    (-2.7576, 2.7576),
    (-0.5236, 2.9671),
    (-2.5307, 2.8798),
    (-0.087_267, 2.8798),
    (-0.87267, 0.5236),
    (-0.2618, 0.2618),
];

/// The limits of [`G1_RANGES`].
pub fn g1_limits() -> Leg6Limits {
    Leg6Limits::from_ranges(G1_RANGES)
}

/// The G1-proportioned leg of [`g1_points`] and [`g1_limits`], heel 5 cm behind and toe 12 cm
/// ahead of the sole point.
pub fn g1_leg() -> Leg6Params {
    let [hip, knee, ankle_pitch, ankle_roll, sole] = g1_points();
    Leg6Params {
        hip,
        thigh: knee - hip,
        shank: ankle_pitch - knee,
        ankle: ankle_roll - ankle_pitch,
        sole,
        heel: 0.05,
        toe: 0.12,
        hip_order: HipOrder::PitchRollYaw,
        limits: g1_limits(),
    }
}
