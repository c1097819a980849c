//! Measures and assertions the tests judge solutions by: forward kinematics from scratch,
//! angles between rotations and about axes, legality of a pose.

use std::f64::consts::{PI, TAU};

use glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose, Motion, Skeleton, fk};

/// The model-space pose of `pose`, by forward kinematics from scratch.
pub fn model_of(skeleton: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    model
}

/// The largest `gap` between the model poses of two motions, frame by frame: forward
/// kinematics of frame `i` of `a`'s motion on `a`'s skeleton beside frame `i` of `b`'s on
/// `b`'s, as far as the shorter motion goes (0 when either is empty).
pub fn largest_fk_gap(
    a: (&Skeleton, &Motion),
    b: (&Skeleton, &Motion),
    mut gap: impl FnMut(&ModelPose, &ModelPose) -> f64,
) -> f64 {
    let (mut model_a, mut model_b) = (ModelPose::new(a.0), ModelPose::new(b.0));
    let mut largest = 0.0_f64;
    for (pose_a, pose_b) in a.1.frames().iter().zip(b.1.frames()) {
        fk::forward_kinematics(a.0, pose_a, &mut model_a);
        fk::forward_kinematics(b.0, pose_b, &mut model_b);
        largest = largest.max(gap(&model_a, &model_b));
    }
    largest
}

/// The largest distance between the same joint in two model poses (joints paired in order).
pub fn largest_joint_distance(a: &ModelPose, b: &ModelPose) -> f64 {
    a.positions()
        .zip(b.positions())
        .map(|(p, q)| p.distance(q))
        .fold(0.0, f64::max)
}

/// About the angle between two rotations, radians (exact to first order, and unlike
/// `angle_between` without the `acos` that loses half the digits near zero): twice the
/// shorter of `|a − b|` and `|a + b|`.
pub fn rotation_gap(a: DQuat, b: DQuat) -> f64 {
    2.0 * (a - b).length().min((a + b).length())
}

/// The angle of the rotation from `a` to `b`, radians in `[0, π]`, accurate near zero
/// (unlike `acos` of the dot product).
pub fn rotation_angle(a: DQuat, b: DQuat) -> f64 {
    let d = a.conjugate() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// Signed angle from `from` to `to` about `axis` (both normal to it), radians.
pub fn signed_angle(from: DVec3, to: DVec3, axis: DVec3) -> f64 {
    from.cross(to).dot(axis.normalize()).atan2(from.dot(to))
}

/// `angle` wrapped into `[-π, π)`.
pub fn wrap(angle: f64) -> f64 {
    (angle + PI).rem_euclid(TAU) - PI
}

/// The component of `v` normal to `axis` (any length, not zero).
pub fn normal_part(v: DVec3, axis: DVec3) -> DVec3 {
    v - axis * (v.dot(axis) / axis.length_squared())
}

/// Asserts that `pose` is finite and inside every joint limit of `skeleton`.
///
/// # Panics
/// When it is not, naming the joint and by how much it is outside.
pub fn assert_legal(skeleton: &Skeleton, pose: &LocalPose) {
    assert!(pose.is_finite());
    if let Some((j, by)) = skeleton.limit_violation(pose) {
        panic!("{} outside its limit by {by}", skeleton.name(j));
    }
}
