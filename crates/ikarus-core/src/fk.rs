//! Forward kinematics: local poses to model space in one pass over the flat joint array.

use glam::{DAffine3, DMat3, DVec3};

use crate::{JointId, LocalPose, ModelPose, Skeleton};

const NO_PARENT: u32 = u32::MAX;

/// Computes `model_from_joint` for every joint from the local pose.
///
/// One loop in joint order: each joint's parent is already done, so every joint costs one
/// affine product. Allocates nothing.
///
/// # Panics
/// When `local` or `model` was sized for a different skeleton (a programming error).
pub fn forward_kinematics(skeleton: &Skeleton, local: &LocalPose, model: &mut ModelPose) {
    update_range(skeleton, local, model, 0..skeleton.len());
}

/// Recomputes `model_from_joint` for `joint` and its descendants only, assuming the rest of
/// `model` is up to date — the partial update a solver uses after changing one joint.
///
/// # Panics
/// When `local` or `model` was sized for a different skeleton.
pub fn update_subtree(
    skeleton: &Skeleton,
    local: &LocalPose,
    model: &mut ModelPose,
    joint: JointId,
) {
    update_range(skeleton, local, model, skeleton.subtree(joint));
}

fn update_range(
    skeleton: &Skeleton,
    local: &LocalPose,
    model: &mut ModelPose,
    range: std::ops::Range<usize>,
) {
    let n = skeleton.len();
    assert_eq!(local.len(), n, "local pose is for a different skeleton");
    assert_eq!(model.len(), n, "model pose is for a different skeleton");
    let parents = &skeleton.parent_indices()[..n];
    let locals = &local.transforms()[..n];
    let matrices = &mut model.model_from_joint[..n];
    let rotations = &mut model.rotations[..n];
    let rigid = &mut model.rigid[..n];
    for i in range {
        let l = &locals[i];
        let unit_scale = l.scale == DVec3::ONE;
        match parents[i] {
            NO_PARENT => {
                matrices[i] = l.to_affine();
                rotations[i] = l.rotation;
                rigid[i] = unit_scale;
            }
            p => {
                let p = p as usize;
                let rotation = rotations[p] * l.rotation;
                rotations[i] = rotation;
                let parent = matrices[p];
                if unit_scale && rigid[p] {
                    // Rigid path: the model rotation is the quaternion product, cheaper than
                    // a 3×3 matrix product.
                    matrices[i] = DAffine3::from_mat3_translation(
                        DMat3::from_quat(rotation),
                        parent.transform_point3(l.translation),
                    );
                    rigid[i] = true;
                } else {
                    matrices[i] = parent * l.to_affine();
                    rigid[i] = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SkeletonBuilder, Transform};
    use glam::{DQuat, DVec3};

    #[test]
    fn partial_update_matches_full() {
        let mut b = SkeletonBuilder::new();
        b.joint("a", None, Transform::from_translation(DVec3::Y))
            .joint("b", Some("a"), Transform::from_translation(DVec3::X))
            .joint("c", Some("b"), Transform::from_translation(DVec3::X))
            .joint("d", Some("a"), Transform::from_translation(DVec3::Z));
        let s = b.build().unwrap();
        let mut pose = s.rest_pose();
        let mut model = ModelPose::new(&s);
        forward_kinematics(&s, &pose, &mut model);
        let bj = s.joint("b").unwrap();
        pose[bj].rotation = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
        update_subtree(&s, &pose, &mut model, bj);
        let mut full = ModelPose::new(&s);
        forward_kinematics(&s, &pose, &mut full);
        assert_eq!(model, full);
        let c = model.position(s.joint("c").unwrap());
        assert!((c - DVec3::new(1.0, 2.0, 0.0)).length() < 1e-12, "{c}");
    }
}
