//! A 7-DOF arm like the KUKA LBR iiwa (the arm of the TRAC-IK benchmark protocol): link lengths
//! 0.36 / 0.42 / 0.40 / 0.126 m, hinge axes z, y, z, −y, z, y, z, limits ±170 / ±120 / ±170 /
//! ±120 / ±170 / ±120 / ±175°. The chain is built +Z up as the robot's own frame (IK does not
//! care which way is up); the root `base` is fixed and `flange` is the effector.

use glam::{DQuat, DVec3};
use ikarus_core::{
    HingeLimit, JointId, JointLimit, LocalPose, ModelPose, Skeleton, SkeletonBuilder, Transform, fk,
};

use crate::Rng;

/// Hinge axes of joints 1..7 in their rest frames.
pub const AXES: [DVec3; 7] = [
    DVec3::Z,
    DVec3::Y,
    DVec3::Z,
    DVec3::NEG_Y,
    DVec3::Z,
    DVec3::Y,
    DVec3::Z,
];

/// Joint limits (±, degrees) of joints 1..7.
pub const LIMITS_DEG: [f64; 7] = [170.0, 120.0, 170.0, 120.0, 170.0, 120.0, 175.0];

/// Offsets along +Z of joints 1..7 and the flange from their parents, metres.
const OFFSETS: [f64; 8] = [0.0, 0.36, 0.0, 0.42, 0.0, 0.40, 0.0, 0.126];

/// The arm: `base`, `j1`..`j7` (hinges with limits), `flange`.
///
/// # Panics
/// Never (the chain is valid by construction).
pub fn skeleton() -> Skeleton {
    let mut b = SkeletonBuilder::new();
    b.joint("base", None, Transform::IDENTITY);
    let mut parent = "base".to_owned();
    for i in 0..7 {
        let name = format!("j{}", i + 1);
        let limit = LIMITS_DEG[i].to_radians();
        b.limited_joint(
            &name,
            Some(&parent),
            Transform::from_translation(DVec3::Z * OFFSETS[i]),
            JointLimit::Hinge(HingeLimit {
                axis: AXES[i],
                min: -limit,
                max: limit,
            }),
        );
        parent = name;
    }
    b.joint(
        "flange",
        Some(&parent),
        Transform::from_translation(DVec3::Z * OFFSETS[7]),
    );
    b.build().expect("the iiwa chain is valid")
}

/// The seven hinge joints, base to tip.
pub fn joints(skeleton: &Skeleton) -> [JointId; 7] {
    std::array::from_fn(|i| skeleton.joint(&format!("j{}", i + 1)).expect("iiwa joint"))
}

/// Writes the joint vector `q` (radians) into `pose`.
pub fn set_q(skeleton: &Skeleton, q: &[f64; 7], pose: &mut LocalPose) {
    for (i, j) in joints(skeleton).into_iter().enumerate() {
        pose[j].rotation = DQuat::from_axis_angle(AXES[i], q[i]);
    }
}

/// `count` joint vectors uniform inside the limits (seed `seed`) and the flange positions FK
/// maps them to.
pub fn samples(skeleton: &Skeleton, count: usize, seed: u64) -> Vec<([f64; 7], DVec3)> {
    let mut rng = Rng(seed);
    let flange = skeleton.joint("flange").expect("iiwa flange");
    let mut pose = skeleton.rest_pose();
    let mut model = ModelPose::new(skeleton);
    (0..count)
        .map(|_| {
            let q: [f64; 7] = std::array::from_fn(|i| {
                let limit = LIMITS_DEG[i].to_radians();
                -limit + 2.0 * limit * rng.unit()
            });
            set_q(skeleton, &q, &mut pose);
            fk::forward_kinematics(skeleton, &pose, &mut model);
            (q, model.position(flange))
        })
        .collect()
}
