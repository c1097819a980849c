//! Aim on a skeleton's joints: [`AimChain`] (one joint) and [`MultiAimChain`] (a chain sharing\n//! the turn) validated once, [`solve_chain`] and [`solve_chain_multi`] on a pose.

#[allow(clippy::wildcard_imports)]
use super::*;

/// One joint of a [`Skeleton`] with its line of sight, validated once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimChain {
    /// The joint to turn (head, eye, neck).
    pub joint: JointId,
    /// Unit axis that should point at the target, in the joint's local frame (the frame its
    /// children's offsets are in, own scale included); it turns with the joint.
    pub forward: DVec3,
    /// Unit axis kept facing the pole, in the joint's local frame; not parallel to `forward`.
    pub up: DVec3,
    /// Where the line of sight starts, in the joint's local frame (metres): e.g. the point
    /// between the eyes for a head joint.
    pub offset: DVec3,
}

impl AimChain {
    /// A joint with its line of sight: `forward` and `up` (any non-zero length, not parallel)
    /// and the eye `offset`, all in the joint's local frame.
    ///
    /// # Errors
    /// A joint not in the skeleton, a zero or non-finite axis, parallel axes or a non-finite
    /// offset.
    pub fn new(
        skeleton: &Skeleton,
        joint: JointId,
        forward: DVec3,
        up: DVec3,
        offset: DVec3,
    ) -> Result<Self, AimChainError> {
        if joint.index() >= skeleton.len() {
            return Err(AimChainError::UnknownJoint { joint });
        }
        let name = || skeleton.name(joint).to_owned();
        for axis in [forward, up] {
            if !axis.length_squared().is_normal() {
                return Err(AimChainError::BadAxis {
                    joint: name(),
                    axis,
                });
            }
        }
        let (forward, up) = (forward.normalize(), up.normalize());
        if forward.cross(up).length_squared() <= 1e-12 {
            return Err(AimChainError::ParallelAxes {
                joint: name(),
                forward,
                up,
            });
        }
        if !offset.is_finite() {
            return Err(AimChainError::BadOffset {
                joint: name(),
                offset,
            });
        }
        Ok(Self {
            joint,
            forward,
            up,
            offset,
        })
    }

    /// The model-space problem for the current pose: the joint's transform from `model`
    /// (which must hold the FK of `pose`) with the joint's own local scale removed (so that a
    /// correction post-multiplied onto the local rotation acts exactly as the solver assumes),
    /// the axes and offset carried into that frame, and the cone centred on the rest pose's
    /// forward axis.
    ///
    /// # Panics
    /// When the joint is not in `pose` or `model`.
    pub fn input(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
        model: &ModelPose,
        target: DVec3,
        pole: Pole,
    ) -> AimInput {
        let local = &pose[self.joint];
        let scale = local.scale;
        let forward = scale * self.forward;
        let rest_to_current = local.rotation.inverse() * skeleton.rest(self.joint).rotation;
        AimInput {
            joint: unscaled(model[self.joint], scale),
            target,
            pole,
            forward,
            up: scale * self.up,
            offset: scale * self.offset,
            cone_axis: Some(rest_to_current * forward),
        }
    }
}

/// What a skeleton-level aim did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AimStatus {
    /// True when the final pose puts the target on the line of sight (see
    /// [`AimOutput::reached`]).
    pub reached: bool,
    /// True when a limit (the settings' cone or a joint's [`JointLimit`](ikarus_core::JointLimit))
    /// changed some joint's rotation.
    pub limited: bool,
}

/// Solves the chain on a pose: forward kinematics into `model` (a workspace sized for the
/// skeleton), [`solve`] on the joint's transform, the correction post-multiplied onto `pose`
/// and projected onto the joint's [`JointLimit`](ikarus_core::JointLimit), and `model` updated
/// from the joint down so that it holds the FK of the new pose. Returns the correction
/// actually applied (after the limit), with `limited` set when the cone or the joint limit
/// changed it and `reached` cleared when that moved the aim off the target.
///
/// # Panics
/// When `pose` or `model` was sized for another skeleton, or the chain belongs to another
/// skeleton.
pub fn solve_chain(
    skeleton: &Skeleton,
    chain: &AimChain,
    target: DVec3,
    pole: Pole,
    settings: &AimSettings,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> AimOutput {
    fk::forward_kinematics(skeleton, pose, model);
    let input = chain.input(skeleton, pose, model, target, pole);
    let output = apply_limited(skeleton, chain.joint, &input, solve(&input, settings), pose);
    fk::update_subtree(skeleton, pose, model, chain.joint);
    output
}

/// Post-multiplies `output.correction` onto `joint`'s rotation, projects it onto the joint's
/// limit and returns the correction actually applied with updated flags.
fn apply_limited(
    skeleton: &Skeleton,
    joint: JointId,
    input: &AimInput,
    output: AimOutput,
    pose: &mut LocalPose,
) -> AimOutput {
    if output.correction == DQuat::IDENTITY {
        return output; // nothing to do (weight 0, invalid input): leave the pose as it is
    }
    let local = pose[joint].rotation;
    let wanted = (local * output.correction).normalize();
    let limit = skeleton.limit(joint);
    if limit.is_free() {
        pose[joint].rotation = wanted;
        return output;
    }
    let rest = skeleton.rest(joint).rotation;
    let delta = rest.inverse() * wanted;
    let projected = limit.project(delta);
    if projected == delta {
        pose[joint].rotation = wanted;
        return output;
    }
    let clamped = (rest * projected).normalize();
    pose[joint].rotation = clamped;
    let correction = local.inverse() * clamped;
    AimOutput {
        correction,
        reached: output.reached && miss_angle(input, correction) <= AIM_TOLERANCE,
        limited: true,
    }
}

/// The angle (radians) between the line of sight after `correction` and the direction from
/// the eye to the target, in joint space; π for invalid input.
fn miss_angle(input: &AimInput, correction: DQuat) -> f64 {
    let joint_from_model = input.joint.inverse();
    let t = joint_from_model.transform_point3(input.target);
    let sight = correction * input.forward;
    let to_target = t - correction * input.offset;
    let angle = sight.cross(to_target).length().atan2(sight.dot(to_target));
    if angle.is_nan() { PI } else { angle }
}

/// Several joints of one branch sharing a line of sight (ozz's look-at sample): e.g. spine,
/// neck and head, each taking a share of the turn, the eye fixed to the head. Validated once;
/// holds its joint list, so solving allocates nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiAimChain {
    joints: Vec<JointId>,
    weights: Vec<f64>,
    eye: AimChain,
}

impl MultiAimChain {
    /// A chain of `(joint, weight)` pairs ordered from the root down (e.g. spine, neck,
    /// head), each joint a proper ancestor of the next, and the line of sight `eye`, fixed to
    /// the last joint or to a descendant of it (an eye joint below the head, say).
    ///
    /// Joints are solved in that order, each turning by its weight (in `[0, 1]`) of what is
    /// left to turn: with weights `(0.3, 0.5, 1)` the spine takes 30 % of the turn, the neck
    /// half of the rest and the head all that remains. Give the last joint weight 1 for the
    /// line of sight to end exactly on the target.
    ///
    /// # Errors
    /// No joints, a joint not in the skeleton, joints out of root-to-tip order, an eye not
    /// below the last joint, or a weight outside `[0, 1]`.
    pub fn new(
        skeleton: &Skeleton,
        joints: &[(JointId, f64)],
        eye: AimChain,
    ) -> Result<Self, AimChainError> {
        let Some(&(last, _)) = joints.last() else {
            return Err(AimChainError::Empty);
        };
        for &joint in joints.iter().map(|(j, _)| j).chain([&eye.joint]) {
            if joint.index() >= skeleton.len() {
                return Err(AimChainError::UnknownJoint { joint });
            }
        }
        for pair in joints.windows(2) {
            let (ancestor, joint) = (pair[0].0, pair[1].0);
            if ancestor == joint || !skeleton.is_ancestor_or_self(ancestor, joint) {
                return Err(AimChainError::NotAChain {
                    ancestor: skeleton.name(ancestor).to_owned(),
                    joint: skeleton.name(joint).to_owned(),
                });
            }
        }
        if !skeleton.is_ancestor_or_self(last, eye.joint) {
            return Err(AimChainError::NotAChain {
                ancestor: skeleton.name(last).to_owned(),
                joint: skeleton.name(eye.joint).to_owned(),
            });
        }
        if let Some(&(joint, weight)) = joints.iter().find(|(_, w)| !(0.0..=1.0).contains(w)) {
            return Err(AimChainError::BadWeight {
                joint: skeleton.name(joint).to_owned(),
                weight,
            });
        }
        Ok(Self {
            joints: joints.iter().map(|&(j, _)| j).collect(),
            weights: joints.iter().map(|&(_, w)| w).collect(),
            eye,
        })
    }

    /// The joints, from the root down.
    pub fn joints(&self) -> &[JointId] {
        &self.joints
    }

    /// Each joint's weight, in the order of [`joints`](Self::joints).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The line of sight.
    pub fn eye(&self) -> &AimChain {
        &self.eye
    }

    /// The model-space problem of `joint` (one of the chain's, or any ancestor of the eye)
    /// for the current pose: the eye's ray and up axis, read from `model` (which must hold
    /// the FK of `pose`), carried into the joint's frame without its own scale. The cone is
    /// centred on the ray's direction in the joint's rest rotation.
    ///
    /// # Panics
    /// When the joint is not in `pose` or `model`.
    pub fn input(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
        model: &ModelPose,
        joint: JointId,
        target: DVec3,
        pole: Pole,
    ) -> AimInput {
        if joint == self.eye.joint {
            return self.eye.input(skeleton, pose, model, target, pole);
        }
        let eye_from = model[self.eye.joint];
        let local = &pose[joint];
        let model_from_joint = unscaled(model[joint], local.scale);
        let joint_from_model = model_from_joint.inverse();
        let forward =
            joint_from_model.transform_vector3(eye_from.transform_vector3(self.eye.forward));
        let rest_to_current = local.rotation.inverse() * skeleton.rest(joint).rotation;
        AimInput {
            joint: model_from_joint,
            target,
            pole,
            forward,
            up: joint_from_model.transform_vector3(eye_from.transform_vector3(self.eye.up)),
            offset: joint_from_model.transform_point3(eye_from.transform_point3(self.eye.offset)),
            cone_axis: Some(rest_to_current * forward),
        }
    }
}

/// Solves a [`MultiAimChain`] on a pose: forward kinematics into `model`, then for each joint
/// from the root down, [`solve`] for the eye's current ray with weight `settings.weight ×`
/// the joint's weight, the correction applied and projected onto the joint's
/// [`JointLimit`](ikarus_core::JointLimit), and `model` updated from that joint down. On
/// return `model` holds the FK of the new pose. `settings.max_angle` bounds each joint's own
/// turn of the line of sight from its rest direction. Allocates nothing.
///
/// `reached` is the last joint's: true when the final pose puts the target on the line of
/// sight (the last weight and `settings.weight` are 1 and no limit moved the aim off it).
///
/// # Panics
/// When `pose` or `model` was sized for another skeleton, or the chain belongs to another
/// skeleton.
pub fn solve_chain_multi(
    skeleton: &Skeleton,
    chain: &MultiAimChain,
    target: DVec3,
    pole: Pole,
    settings: &AimSettings,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> AimStatus {
    fk::forward_kinematics(skeleton, pose, model);
    let mut status = AimStatus::default();
    for (&joint, &weight) in chain.joints.iter().zip(&chain.weights) {
        let input = chain.input(skeleton, pose, model, joint, target, pole);
        let joint_settings = AimSettings {
            weight: settings.weight * weight,
            ..*settings
        };
        let output = apply_limited(
            skeleton,
            joint,
            &input,
            solve(&input, &joint_settings),
            pose,
        );
        fk::update_subtree(skeleton, pose, model, joint);
        status.reached = output.reached;
        status.limited |= output.limited;
    }
    status
}

/// Why an [`AimChain`] or a [`MultiAimChain`] cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AimChainError {
    /// A joint id is not in the skeleton. Look joints up by name on the same skeleton.
    #[error("joint {joint} is not in the skeleton")]
    UnknownJoint {
        /// The id.
        joint: JointId,
    },
    /// A forward or up axis is zero or not finite. Give non-zero joint-local axes.
    #[error("axis {axis} of `{joint}` is zero or not finite; give a non-zero joint-local axis")]
    BadAxis {
        /// The joint.
        joint: String,
        /// The axis given.
        axis: DVec3,
    },
    /// The up axis is parallel to the forward axis, so it cannot say which way is up. Give an
    /// up axis across the line of sight (e.g. +Y for a head looking along +Z).
    #[error(
        "up axis {up} of `{joint}` is parallel to its forward axis {forward}; give an up axis across the line of sight"
    )]
    ParallelAxes {
        /// The joint.
        joint: String,
        /// The forward axis (normalized).
        forward: DVec3,
        /// The up axis (normalized).
        up: DVec3,
    },
    /// The eye offset is not finite. Give a finite joint-local position.
    #[error("eye offset {offset} of `{joint}` is not finite")]
    BadOffset {
        /// The joint.
        joint: String,
        /// The offset given.
        offset: DVec3,
    },
    /// A multi-joint chain has no joints. List at least one.
    #[error("an aim chain needs at least one joint")]
    Empty,
    /// The joints are not ordered from the root down one branch (or the eye is not below the
    /// last one). List them root first (e.g. spine, neck, head) and fix the eye to the last
    /// joint or a descendant of it.
    #[error(
        "`{ancestor}` is not a proper ancestor of `{joint}`; list the joints root first down one branch, the eye at or below the last"
    )]
    NotAChain {
        /// The joint that should be the ancestor.
        ancestor: String,
        /// The joint that should descend from it.
        joint: String,
    },
    /// A joint's weight is outside `[0, 1]` (or NaN). Give the share of the turn it takes.
    #[error("weight {weight} of `{joint}` is not in [0, 1]")]
    BadWeight {
        /// The joint.
        joint: String,
        /// The weight given.
        weight: f64,
    },
}
