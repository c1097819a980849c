//! Per-frame state: local poses (the input of forward kinematics) and model poses (its output).

use std::ops::{Index, IndexMut};

use glam::{DAffine3, DMat3, DQuat, DVec3};

use crate::{JointId, Skeleton, Transform};

/// Every joint's transform relative to its parent (`parent_from_joint`), indexed by [`JointId`].
///
/// The root's translation is the figure's position in model space.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LocalPose {
    transforms: Vec<Transform>,
}

impl LocalPose {
    /// The skeleton's rest pose (same as [`Skeleton::rest_pose`]).
    pub fn new(skeleton: &Skeleton) -> Self {
        skeleton.rest_pose()
    }

    /// A pose from one transform per joint, in the skeleton's joint order.
    pub fn from_transforms(transforms: Vec<Transform>) -> Self {
        Self { transforms }
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.transforms.len()
    }

    /// True when the pose has no joints.
    pub fn is_empty(&self) -> bool {
        self.transforms.is_empty()
    }

    /// The transforms, indexed by joint.
    pub fn transforms(&self) -> &[Transform] {
        &self.transforms
    }

    /// The transforms, mutable.
    pub fn transforms_mut(&mut self) -> &mut [Transform] {
        &mut self.transforms
    }

    /// True when every transform is finite.
    pub fn is_finite(&self) -> bool {
        self.transforms.iter().all(Transform::is_finite)
    }

    /// Writes the interpolation between `a` and `b` at `t` into `self` (see
    /// [`Transform::interpolate`]). All three poses must have the same length.
    pub fn set_interpolated(&mut self, a: &Self, b: &Self, t: f64) {
        assert!(
            a.len() == self.len() && b.len() == self.len(),
            "poses of different skeletons"
        );
        for ((out, a), b) in self
            .transforms
            .iter_mut()
            .zip(&a.transforms)
            .zip(&b.transforms)
        {
            *out = a.interpolate(b, t);
        }
    }
}

impl Index<JointId> for LocalPose {
    type Output = Transform;
    #[inline]
    fn index(&self, joint: JointId) -> &Transform {
        &self.transforms[joint.index()]
    }
}

impl IndexMut<JointId> for LocalPose {
    #[inline]
    fn index_mut(&mut self, joint: JointId) -> &mut Transform {
        &mut self.transforms[joint.index()]
    }
}

/// Every joint's transform in model space (`model_from_joint`), the output of
/// [`fk::forward_kinematics`](crate::fk::forward_kinematics).
///
/// Besides the affine transforms it keeps each joint's model-space rotation as a quaternion
/// (the product of the local rotations from the root), so solvers read orientations without
/// decomposing matrices. Where a scale other than 1 lies on the path from the root, the rotation
/// is extracted from the matrix instead.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPose {
    pub(crate) model_from_joint: Vec<DAffine3>,
    /// Model-space rotation per joint; exact where `rigid`.
    pub(crate) rotations: Vec<DQuat>,
    /// True when every transform from the root to the joint has unit scale.
    pub(crate) rigid: Vec<bool>,
}

impl ModelPose {
    /// Makes this pose a copy of `other` without allocating (a solver's model frames handed
    /// to a caller's buffer).
    ///
    /// # Panics
    /// When the two were sized for different skeletons.
    pub fn copy_from(&mut self, other: &Self) {
        assert_eq!(
            self.len(),
            other.len(),
            "model pose is for a different skeleton"
        );
        self.model_from_joint
            .copy_from_slice(&other.model_from_joint);
        self.rotations.copy_from_slice(&other.rotations);
        self.rigid.copy_from_slice(&other.rigid);
    }

    /// A pose of identity transforms sized for the skeleton (run forward kinematics to fill it).
    pub fn new(skeleton: &Skeleton) -> Self {
        Self {
            model_from_joint: vec![DAffine3::IDENTITY; skeleton.len()],
            rotations: vec![DQuat::IDENTITY; skeleton.len()],
            rigid: vec![true; skeleton.len()],
        }
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.model_from_joint.len()
    }

    /// True when the pose has no joints.
    pub fn is_empty(&self) -> bool {
        self.model_from_joint.is_empty()
    }

    /// The joint's origin in model space.
    #[inline]
    pub fn position(&self, joint: JointId) -> DVec3 {
        self.model_from_joint[joint.index()].translation
    }

    /// The joint's orientation in model space (scale, mirroring and shear removed).
    #[inline]
    pub fn rotation(&self, joint: JointId) -> DQuat {
        let i = joint.index();
        if self.rigid[i] {
            return self.rotations[i];
        }
        let (_, rotation, _) = self.model_from_joint[i].to_scale_rotation_translation();
        rotation.normalize()
    }

    /// True when every transform from the root to `joint` has unit scale: the joint's frame
    /// is then a rotation and a translation, and [`rotation`](Self::rotation) is exact.
    #[inline]
    pub fn is_rigid(&self, joint: JointId) -> bool {
        self.rigid[joint.index()]
    }

    /// Sets the frame of a joint whose parent is rigid ([`is_rigid`](Self::is_rigid)) and
    /// whose local scale is one, as forward kinematics computes it: `rotation` (the parent's
    /// model rotation times the local rotation) and `translation` (the local translation
    /// through the parent's frame). For a solver that computed them itself, several joints
    /// at once; [`fk::update_joints`](crate::fk::update_joints) is the checked way.
    #[inline]
    pub fn set_rigid(&mut self, joint: JointId, rotation: DQuat, translation: DVec3) {
        let i = joint.index();
        self.model_from_joint[i] =
            DAffine3::from_mat3_translation(DMat3::from_quat(rotation), translation);
        self.rotations[i] = rotation;
        self.rigid[i] = true;
    }

    /// All `model_from_joint` transforms, indexed by joint.
    pub fn transforms(&self) -> &[DAffine3] {
        &self.model_from_joint
    }

    /// Every joint's model-space position, indexed by joint.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = DVec3> + '_ {
        self.model_from_joint.iter().map(|m| m.translation)
    }
}

impl Index<JointId> for ModelPose {
    type Output = DAffine3;
    #[inline]
    fn index(&self, joint: JointId) -> &DAffine3 {
        &self.model_from_joint[joint.index()]
    }
}
