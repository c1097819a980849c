//! Motions built in code that several crates test and bench.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};

/// Frame `k` of `frames` of a crouch on a humanoid with VRM joint names (the built-in one):
/// the hips down and turned, knees, ankles, arms and elbows bent by amounts that go round once
/// over the clip, every joint inside its limits (asserted).
///
/// # Panics
/// When the skeleton lacks a VRM-named limb joint, or a pose leaves a limit.
pub fn crouch(skeleton: &Skeleton, k: usize, frames: usize) -> LocalPose {
    #[allow(clippy::cast_precision_loss)] // frame numbers
    let phase = std::f64::consts::TAU * k as f64 / frames as f64;
    let (s, c) = phase.sin_cos();
    let joint = |n: &str| skeleton.joint(n).expect("VRM name");
    let mut pose = skeleton.rest_pose();
    pose[joint("hips")].translation.y -= 0.08 + 0.05 * s;
    pose[joint("hips")].rotation = DQuat::from_rotation_y(0.2 * c);
    for side in ["left", "right"] {
        pose[joint(&format!("{side}UpperLeg"))].rotation = DQuat::from_rotation_x(-0.4 - 0.2 * s);
        pose[joint(&format!("{side}LowerLeg"))].rotation = DQuat::from_rotation_x(0.7 + 0.4 * s);
        pose[joint(&format!("{side}Foot"))].rotation = DQuat::from_rotation_x(-0.3 - 0.2 * s);
    }
    pose[joint("leftUpperArm")].rotation = DQuat::from_rotation_z(-0.8 - 0.3 * c);
    pose[joint("rightUpperArm")].rotation = DQuat::from_rotation_z(0.8 + 0.3 * s);
    pose[joint("leftLowerArm")].rotation = DQuat::from_rotation_y(-0.6 - 0.3 * s);
    pose[joint("rightLowerArm")].rotation = DQuat::from_rotation_y(0.6 + 0.3 * c);
    pose[joint("spine")].rotation = DQuat::from_rotation_x(0.1 * s);
    assert!(skeleton.limit_violation(&pose).is_none());
    pose
}

/// Per frame of [`crouch`], the model-space position and rotation of the hips, head, hands and
/// feet ([`HumanoidBone::BODY_ENDS`]): a full-body solver's six 6-D goals.
///
/// # Panics
/// As [`crouch`].
pub fn crouch_body_ends(skeleton: &Skeleton, frames: usize) -> Vec<[(JointId, DVec3, DQuat); 6]> {
    let mut model = ModelPose::new(skeleton);
    (0..frames)
        .map(|k| {
            fk::forward_kinematics(skeleton, &crouch(skeleton, k, frames), &mut model);
            HumanoidBone::BODY_ENDS.map(|b| {
                let j = skeleton.joint(b.vrm_name()).expect("VRM name");
                (j, model.position(j), model.rotation(j))
            })
        })
        .collect()
}
