//! The two-bone closed form on a skeleton's chain: [`TwoBoneChain`] validated once,
//! [`solve_chain`] on a pose.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A start → mid → end chain of a [`Skeleton`] with the mid joint's hinge axis, validated
/// once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneChain {
    /// The start joint (shoulder, hip).
    pub start: JointId,
    /// The mid joint (elbow, knee), a descendant of `start`.
    pub mid: JointId,
    /// The end joint (wrist, ankle), a descendant of `mid`.
    pub end: JointId,
    /// Unit hinge axis of the mid joint in its **rest** frame (the frame of
    /// [`JointLimit`]s); positive rotation about it flexes the joint.
    pub mid_axis: DVec3,
}

impl TwoBoneChain {
    /// A chain with an explicit hinge axis (mid joint's rest frame, any non-zero length).
    /// Joints between start and mid or between mid and end are allowed and kept fixed.
    ///
    /// # Errors
    /// A joint not in the skeleton, joints not in start → mid → end order down the hierarchy,
    /// or a zero or non-finite axis.
    pub fn new(
        skeleton: &Skeleton,
        start: JointId,
        mid: JointId,
        end: JointId,
        mid_axis: DVec3,
    ) -> Result<Self, TwoBoneChainError> {
        for joint in [start, mid, end] {
            if joint.index() >= skeleton.len() {
                return Err(TwoBoneChainError::UnknownJoint { joint });
            }
        }
        for (ancestor, joint) in [(start, mid), (mid, end)] {
            if ancestor == joint || !skeleton.is_ancestor_or_self(ancestor, joint) {
                return Err(TwoBoneChainError::NotAChain {
                    ancestor: skeleton.name(ancestor).to_owned(),
                    joint: skeleton.name(joint).to_owned(),
                });
            }
        }
        let length2 = mid_axis.length_squared();
        if !length2.is_normal() {
            return Err(TwoBoneChainError::BadAxis {
                joint: skeleton.name(mid).to_owned(),
                axis: mid_axis,
            });
        }
        Ok(Self {
            start,
            mid,
            end,
            mid_axis: mid_axis / length2.sqrt(),
        })
    }

    /// A chain whose hinge axis is the mid joint's [`JointLimit::Hinge`] axis (elbows and
    /// knees of the built-in humanoid).
    ///
    /// # Errors
    /// As [`new`](Self::new), and when the mid joint has no hinge limit.
    pub fn from_hinge(
        skeleton: &Skeleton,
        start: JointId,
        mid: JointId,
        end: JointId,
    ) -> Result<Self, TwoBoneChainError> {
        if mid.index() >= skeleton.len() {
            return Err(TwoBoneChainError::UnknownJoint { joint: mid });
        }
        match skeleton.limit(mid) {
            JointLimit::Hinge(hinge) => Self::new(skeleton, start, mid, end, hinge.axis),
            _ => Err(TwoBoneChainError::NoHinge {
                joint: skeleton.name(mid).to_owned(),
            }),
        }
    }

    /// The model-space problem for the current pose: the joints' transforms from `model`
    /// (which must hold the FK of `pose`) with the start and mid joints' own local scale
    /// removed (so a correction post-multiplied onto the local rotation acts exactly as the
    /// solver assumes), and the hinge axis carried from the rest frame into the mid joint's
    /// current local frame.
    ///
    /// # Panics
    /// When the chain's joints are not in `pose` or `model`.
    pub fn input(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
        model: &ModelPose,
        target: DVec3,
        pole: Pole,
    ) -> TwoBoneInput {
        let unscaled = |joint: JointId| unscaled(model[joint], pose[joint].scale);
        let rest_to_current = pose[self.mid].rotation.inverse() * skeleton.rest(self.mid).rotation;
        TwoBoneInput {
            start_joint: unscaled(self.start),
            mid_joint: unscaled(self.mid),
            end_joint: model[self.end],
            target,
            pole,
            mid_axis: rest_to_current * self.mid_axis,
        }
    }
}

/// Solves the chain on a pose: forward kinematics into `model` (a workspace sized for the
/// skeleton), [`solve`] on the chain's transforms, the corrections post-multiplied onto
/// `pose`, and `model` updated from the start joint down so that it holds the FK of the
/// corrected pose. Returns `reached`.
///
/// # Panics
/// When `pose` or `model` was sized for another skeleton, or the chain belongs to another
/// skeleton.
pub fn solve_chain(
    skeleton: &Skeleton,
    chain: &TwoBoneChain,
    target: DVec3,
    pole: Pole,
    settings: &TwoBoneSettings,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> bool {
    fk::forward_kinematics(skeleton, pose, model);
    let input = chain.input(skeleton, pose, model, target, pole);
    let output = solve(&input, settings);
    output.apply_to(chain, pose);
    fk::update_subtree(skeleton, pose, model, chain.start);
    output.reached
}

/// Why a [`TwoBoneChain`] cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TwoBoneChainError {
    /// A joint id is not in the skeleton. Look joints up by name on the same skeleton.
    #[error("joint {joint} is not in the skeleton")]
    UnknownJoint {
        /// The id.
        joint: JointId,
    },
    /// The joints are not ordered start → mid → end down the hierarchy. Pass them in that
    /// order (e.g. upper arm, lower arm, hand).
    #[error(
        "`{ancestor}` is not a proper ancestor of `{joint}`; pass start, mid, end down one branch"
    )]
    NotAChain {
        /// The joint that should be the ancestor.
        ancestor: String,
        /// The joint that should descend from it.
        joint: String,
    },
    /// The hinge axis is zero or not finite. Give the mid joint's bending axis.
    #[error("hinge axis {axis} of `{joint}` is zero or not finite; give a non-zero bending axis")]
    BadAxis {
        /// The mid joint.
        joint: String,
        /// The axis given.
        axis: DVec3,
    },
    /// The mid joint has no hinge limit to take the axis from. Use [`TwoBoneChain::new`]
    /// with an explicit axis.
    #[error(
        "joint `{joint}` has no hinge limit to take the bending axis from; pass the axis explicitly"
    )]
    NoHinge {
        /// The mid joint.
        joint: String,
    },
}
