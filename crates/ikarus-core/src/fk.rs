//! Forward kinematics: local poses to model space in one pass over the flat joint array.

use glam::{DAffine3, DMat3, DQuat, DVec3};

use crate::{JointId, LocalPose, ModelPose, Skeleton, Transform};

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

/// The model pose of every frame of a clip (`frames`, local poses of `skeleton`).
///
/// # Panics
/// When a frame was sized for a different skeleton.
pub fn model_frames(skeleton: &Skeleton, frames: &[LocalPose]) -> Vec<ModelPose> {
    let mut model = ModelPose::new(skeleton);
    frames
        .iter()
        .map(|pose| {
            forward_kinematics(skeleton, pose, &mut model);
            model.clone()
        })
        .collect()
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

/// Recomputes `model_from_joint` for the listed joints only, in the order given: each joint's
/// parent must be listed before it or already be up to date in `model`. The partial update
/// of a prepared task, which needs the model frames of one chain's ancestors and nothing
/// else: pass the chain's path from the root, root first
/// ([`Skeleton::path_to_root`] reversed, computed once).
///
/// # Panics
/// When `local` or `model` was sized for a different skeleton, or a joint is not in it.
pub fn update_joints(
    skeleton: &Skeleton,
    local: &LocalPose,
    model: &mut ModelPose,
    joints: &[JointId],
) {
    update_indices(skeleton, local, model, joints.iter().map(|j| j.index()));
}

/// After `joint`'s local transform changed from `old` to `local[joint]`, moves `descendant`
/// (the joint itself or one in its subtree) rigidly along with it, without recomputing the
/// joints in between — the cheap update an iterative solver uses for its effectors while it
/// works from the tip toward the root. Every other joint of the subtree (and `joint` itself,
/// unless it is the descendant) is left stale: run [`forward_kinematics`] or
/// [`update_subtree`] before reading them. Call it once per distinct descendant.
///
/// # Panics
/// When the poses were sized for a different skeleton.
pub fn carry_descendant(
    skeleton: &Skeleton,
    local: &LocalPose,
    model: &mut ModelPose,
    joint: JointId,
    old: &Transform,
    descendant: JointId,
) {
    let new = &local[joint];
    let parent = skeleton.parent(joint).map(JointId::index);
    let parent_rotation = parent.map_or(DQuat::IDENTITY, |p| model.rotations[p]);
    // The change of the joint's model rotation, as a model-space rotation.
    let turn =
        parent_rotation * new.rotation * old.rotation.conjugate() * parent_rotation.conjugate();
    let d = descendant.index();
    model.rotations[d] = turn * model.rotations[d];
    let parent_rigid = parent.is_none_or(|p| model.rigid[p]);
    if parent_rigid && new.scale == old.scale && new.translation == old.translation {
        let pivot = parent.map_or(new.translation, |p| {
            model.model_from_joint[p].transform_point3(new.translation)
        });
        let m = &mut model.model_from_joint[d];
        let matrix = if model.rigid[d] {
            DMat3::from_quat(model.rotations[d])
        } else {
            DMat3::from_quat(turn) * m.matrix3
        };
        *m = DAffine3::from_mat3_translation(matrix, pivot + turn * (m.translation - pivot));
    } else {
        let parent_affine = parent.map_or(DAffine3::IDENTITY, |p| model.model_from_joint[p]);
        let motion =
            parent_affine * new.to_affine() * old.to_affine().inverse() * parent_affine.inverse();
        model.model_from_joint[d] = motion * model.model_from_joint[d];
    }
}

/// Recomputes `model_from_joint` for the joints whose indices are in `range`, in index order:
/// the parents of those joints that are outside the range must be up to date in `model` (a
/// joint's descendants follow it in index order, so `skeleton.subtree(j)` and its tails are
/// such ranges).
///
/// # Panics
/// When `local` or `model` was sized for a different skeleton, or `range` goes past its end.
pub fn update_range(
    skeleton: &Skeleton,
    local: &LocalPose,
    model: &mut ModelPose,
    range: std::ops::Range<usize>,
) {
    update_indices(skeleton, local, model, range);
}

#[inline]
fn update_indices(
    skeleton: &Skeleton,
    local: &LocalPose,
    model: &mut ModelPose,
    indices: impl Iterator<Item = usize>,
) {
    let n = skeleton.len();
    assert_eq!(local.len(), n, "local pose is for a different skeleton");
    assert_eq!(model.len(), n, "model pose is for a different skeleton");
    let parents = &skeleton.parent_indices()[..n];
    let locals = &local.transforms()[..n];
    let matrices = &mut model.model_from_joint[..n];
    let rotations = &mut model.rotations[..n];
    let rigid = &mut model.rigid[..n];
    for i in indices {
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

    /// `a` (root) → `b` → `c`, and `a` → `d`.
    fn branched() -> crate::Skeleton {
        let mut b = SkeletonBuilder::new();
        b.joint("a", None, Transform::from_translation(DVec3::Y))
            .joint("b", Some("a"), Transform::from_translation(DVec3::X))
            .joint("c", Some("b"), Transform::from_translation(DVec3::X))
            .joint("d", Some("a"), Transform::from_translation(DVec3::Z));
        b.build().unwrap()
    }

    #[test]
    fn partial_update_matches_full() {
        let s = branched();
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

    #[test]
    fn path_update_matches_full_fk_on_the_path_only() {
        let s = branched();
        let mut pose = s.rest_pose();
        for (j, angle) in s.joints().zip([0.3, -0.7, 1.1, 0.4]) {
            pose[j].rotation =
                DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -1.0).normalize(), angle);
            pose[j].scale = DVec3::new(1.0, 1.5, 0.5) * (1.0 + angle.abs());
        }
        let mut full = ModelPose::new(&s);
        forward_kinematics(&s, &pose, &mut full);
        let mut model = ModelPose::new(&s);
        let path: Vec<JointId> = ["a", "b", "c"].map(|n| s.joint(n).unwrap()).to_vec();
        update_joints(&s, &pose, &mut model, &path);
        for &j in &path {
            assert_eq!(model[j], full[j]);
            assert_eq!(model.rotation(j), full.rotation(j));
        }
        // `d` is not on the path: untouched.
        assert_eq!(model.position(s.joint("d").unwrap()), DVec3::ZERO);
    }

    #[test]
    fn carried_descendant_matches_full_fk_rigid_and_scaled() {
        for root_scale in [
            DVec3::ONE,
            DVec3::new(1.0, 2.0, 0.5),
            DVec3::new(-1.0, 1.0, 1.0),
        ] {
            let mut b = SkeletonBuilder::new();
            b.joint(
                "a",
                None,
                Transform {
                    translation: DVec3::Y,
                    rotation: DQuat::from_rotation_z(0.4),
                    scale: root_scale,
                },
            )
            .joint("b", Some("a"), Transform::from_translation(DVec3::X))
            .joint(
                "c",
                Some("b"),
                Transform::from_translation(DVec3::new(0.3, 1.0, 0.2)),
            )
            .joint("d", Some("c"), Transform::from_translation(DVec3::Z));
            let s = b.build().unwrap();
            let (bj, dj) = (s.joint("b").unwrap(), s.joint("d").unwrap());
            let mut pose = s.rest_pose();
            pose[s.joint("c").unwrap()].rotation = DQuat::from_rotation_x(0.7);
            let mut model = ModelPose::new(&s);
            forward_kinematics(&s, &pose, &mut model);
            let old = pose[bj];
            pose[bj].rotation = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 1.1);
            carry_descendant(&s, &pose, &mut model, bj, &old, dj);
            let mut full = ModelPose::new(&s);
            forward_kinematics(&s, &pose, &mut full);
            assert!(model[dj].abs_diff_eq(full[dj], 1e-12), "{root_scale}");
            let dot = model.rotations[dj.index()].dot(full.rotations[dj.index()]);
            assert!((dot.abs() - 1.0).abs() < 1e-12, "{dot}");
        }
    }
}
