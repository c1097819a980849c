//! The 7-DOF limb on a skeleton's chain: [`Limb7Chain`] validated once, [`solve_chain`] on a\n//! pose.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A shoulder → elbow → wrist chain of a [`Skeleton`] solved as a 7-DOF limb. The elbow must
/// carry a [`JointLimit::Hinge`] (its axis and range are the limb's); joints between shoulder
/// and elbow or elbow and wrist are kept fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct Limb7Chain {
    /// The shoulder (hip) joint.
    pub shoulder: JointId,
    /// The elbow (knee) joint.
    pub elbow: JointId,
    /// The wrist (ankle) joint.
    pub wrist: JointId,
    /// Unit elbow hinge axis in the elbow's rest frame; positive angles flex.
    pub elbow_axis: DVec3,
    /// The elbow's range `[min, max]`, radians.
    pub elbow_range: [f64; 2],
    /// Swivel reference in the limb frame (the shoulder's parent frame); by default the way
    /// the elbow moves as the wrist approaches the shoulder in the rest pose.
    pub swivel_reference: DVec3,
}

/// A goal for [`solve_chain`], in model space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb7Goal {
    /// Where the wrist should be, model space, metres.
    pub position: DVec3,
    /// The wrist's model-space orientation, if it is to be solved too.
    pub orientation: Option<DQuat>,
}

/// What [`solve_chain`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct Limb7Report {
    /// The wrist reached the goal (position, and orientation when given) with every limb joint
    /// inside its limit.
    pub reached: bool,
    /// The target lies within the shoulder–wrist distances the elbow's range allows (the
    /// position is reachable for some swivel unless the shoulder limit forbids every one).
    pub in_reach: bool,
    /// The swivel used, radians.
    pub swivel: f64,
    /// The feasible swivel intervals (computed for the feasible policies and whenever the
    /// chosen swivel left a joint outside its limit).
    pub feasible: Option<Vec<SwivelInterval>>,
    /// Joints whose limit had to be enforced after the analytic solve (names).
    pub limited: Vec<String>,
}

/// Why a chain or a goal is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Limb7ChainError {
    /// A joint id is not in the skeleton.
    #[error("joint {joint} is not in the skeleton")]
    UnknownJoint {
        /// The id.
        joint: JointId,
    },
    /// The joints are not ordered shoulder → elbow → wrist down one branch. Pass them in that
    /// order (e.g. upper arm, lower arm, hand).
    #[error(
        "`{ancestor}` is not a proper ancestor of `{joint}`; pass shoulder, elbow, wrist down one branch"
    )]
    NotAChain {
        /// The joint that should be the ancestor.
        ancestor: String,
        /// The joint that should descend from it.
        joint: String,
    },
    /// The elbow has no hinge limit. Give it a `JointLimit::Hinge`, or solve with a two-bone or
    /// CCD solver.
    #[error("`{joint}` has no hinge limit; a 7-DOF limb needs a hinge elbow")]
    NoHinge {
        /// The elbow.
        joint: String,
    },
    /// The limb's geometry is unusable in this pose.
    #[error("limb `{joint}`: {source}")]
    Geometry {
        /// The shoulder.
        joint: String,
        /// Why.
        source: Limb7Error,
    },
}

impl Limb7Chain {
    /// A chain whose elbow axis and range are the elbow's [`JointLimit::Hinge`] (the built-in
    /// humanoid's elbows and knees), with the default swivel reference (see the field).
    ///
    /// # Errors
    /// Unknown joints, joints not in order down one branch, an elbow without a hinge limit, or
    /// a rest pose with zero-length bones.
    pub fn new(
        skeleton: &Skeleton,
        shoulder: JointId,
        elbow: JointId,
        wrist: JointId,
    ) -> Result<Self, Limb7ChainError> {
        if elbow.index() >= skeleton.len() {
            return Err(Limb7ChainError::UnknownJoint { joint: elbow });
        }
        let JointLimit::Hinge(hinge) = skeleton.limit(elbow) else {
            return Err(Limb7ChainError::NoHinge {
                joint: skeleton.name(elbow).to_owned(),
            });
        };
        Self::with_hinge(
            skeleton,
            [shoulder, elbow, wrist],
            hinge.axis,
            [hinge.min, hinge.max],
        )
    }

    /// A chain with an explicit elbow axis (elbow rest frame) and range (radians), for
    /// skeletons without limits such as BVH files; the default swivel reference.
    ///
    /// # Errors
    /// Unknown joints, joints not in order down one branch, a bad axis or range, or a rest pose
    /// with zero-length bones.
    pub fn with_hinge(
        skeleton: &Skeleton,
        [shoulder, elbow, wrist]: [JointId; 3],
        elbow_axis: DVec3,
        elbow_range: [f64; 2],
    ) -> Result<Self, Limb7ChainError> {
        for joint in [shoulder, elbow, wrist] {
            if joint.index() >= skeleton.len() {
                return Err(Limb7ChainError::UnknownJoint { joint });
            }
        }
        for (ancestor, joint) in [(shoulder, elbow), (elbow, wrist)] {
            if ancestor == joint || !skeleton.is_ancestor_or_self(ancestor, joint) {
                return Err(Limb7ChainError::NotAChain {
                    ancestor: skeleton.name(ancestor).to_owned(),
                    joint: skeleton.name(joint).to_owned(),
                });
            }
        }
        let mut chain = Self {
            shoulder,
            elbow,
            wrist,
            elbow_axis,
            elbow_range,
            swivel_reference: DVec3::X,
        };
        // The seed's reference: the way the elbow moves as the wrist approaches, at rest.
        let rest = skeleton.rest_pose();
        let limb = chain.limb(skeleton, &rest)?;
        chain.elbow_axis = limb.axis;
        let shoulder_rest = rest[shoulder].rotation;
        let g = limb.geometry;
        let w = g.upper + limb.hinge_in_shoulder(limb.bent_angle()) * limb.b0;
        let offset = unit(w).map_or(DVec3::ZERO, |w_hat| g.upper - g.upper.dot(w_hat) * w_hat);
        // Keep the part normal to the rest upper bone (the seed's vA is normal to its limb).
        let a_hat = g.upper / g.upper.length();
        let normal = offset - offset.dot(a_hat) * a_hat;
        chain.swivel_reference = unit(shoulder_rest * normal)
            .unwrap_or_else(|| (shoulder_rest * a_hat).any_orthonormal_vector());
        Ok(chain)
    }

    /// The limb of this chain in `pose` (bone offsets and fixed joints read from the pose; the
    /// elbow's rest rotation and hinge from the skeleton).
    ///
    /// # Errors
    /// Zero-length bones or non-finite transforms in `pose`.
    pub fn limb(&self, skeleton: &Skeleton, pose: &LocalPose) -> Result<Limb7, Limb7ChainError> {
        // shoulder frame → elbow's parent frame, then the elbow's translation and rest rotation.
        let to_elbow = between(skeleton, pose, self.shoulder, self.elbow);
        let (_, frame, upper) = to_elbow.to_scale_rotation_translation();
        let elbow_frame = (frame * skeleton.rest(self.elbow).rotation).normalize();
        let to_wrist = between(skeleton, pose, self.elbow, self.wrist);
        let (_, wrist_frame, lower) = to_wrist.to_scale_rotation_translation();
        Limb7::new(Limb7Geometry {
            upper,
            elbow_frame,
            elbow_axis: self.elbow_axis,
            elbow_range: self.elbow_range,
            lower,
            wrist_frame: wrist_frame.normalize(),
            swivel_reference: self.swivel_reference,
        })
        .map_err(|source| Limb7ChainError::Geometry {
            joint: skeleton.name(self.shoulder).to_owned(),
            source,
        })
    }

    /// `model_from_limb`: the shoulder's parent transform moved to the shoulder (model must
    /// hold the FK of `pose`).
    pub fn model_from_limb(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
        model: &ModelPose,
    ) -> DAffine3 {
        let local = DAffine3::from_translation(pose[self.shoulder].translation);
        skeleton
            .parent(self.shoulder)
            .map_or(local, |p| model[p] * local)
    }

    /// The limb-frame rotation of the limb frame's parent (model rotation of the shoulder's
    /// parent).
    fn model_rotation_of_limb(&self, skeleton: &Skeleton, model: &ModelPose) -> DQuat {
        skeleton
            .parent(self.shoulder)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p))
    }

    /// The current pose's swivel (model must hold the FK of `pose`).
    ///
    /// # Errors
    /// As [`limb`](Self::limb).
    pub fn current_swivel(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
    ) -> Result<f64, Limb7ChainError> {
        let limb = self.limb(skeleton, pose)?;
        Ok(limb.swivel_from_pose(
            pose[self.shoulder].rotation,
            self.elbow_angle(skeleton, pose),
        ))
    }

    /// The elbow's current hinge angle (the twist about the axis), moved into the range when a
    /// whole turn allows.
    pub fn elbow_angle(&self, skeleton: &Skeleton, pose: &LocalPose) -> f64 {
        let delta = skeleton.rest(self.elbow).rotation.conjugate() * pose[self.elbow].rotation;
        let angle = 2.0 * delta.xyz().dot(self.elbow_axis).atan2(delta.w);
        let [lo, hi] = self.elbow_range;
        into_range(angle, lo, hi).unwrap_or(angle)
    }
}

/// Solves the chain on a pose: FK into `model`, the limb's goal in its frame, the swivel from
/// `policy`, the closed form, limits enforced (a joint left outside its limit by the chosen
/// swivel is projected and named in the report), the rotations written into `pose` and `model`
/// updated (it holds the FK of the result).
///
/// # Errors
/// A non-finite goal or unusable geometry; `pose` is left untouched.
///
/// # Panics
/// When `pose` or `model` was sized for another skeleton.
pub fn solve_chain(
    skeleton: &Skeleton,
    chain: &Limb7Chain,
    goal: &Limb7Goal,
    policy: SwivelPolicy,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> Result<Limb7Report, Limb7ChainError> {
    fk::forward_kinematics(skeleton, pose, model);
    let limb = chain.limb(skeleton, pose)?;
    let report = solve_chain_in(skeleton, chain, &limb, goal, policy, pose, model)?;
    fk::update_subtree(skeleton, pose, model, chain.shoulder);
    Ok(report)
}

/// [`solve_chain`] with the chain's `limb` for this pose given (`chain.limb(skeleton, pose)`,
/// which a prepared task keeps while the bones do not change) and `model` holding the FK of
/// the shoulder's strict ancestors only. Writes the three rotations into `pose` and leaves
/// `model` as it was.
pub(crate) fn solve_chain_in(
    skeleton: &Skeleton,
    chain: &Limb7Chain,
    limb: &Limb7,
    goal: &Limb7Goal,
    policy: SwivelPolicy,
    pose: &mut LocalPose,
    model: &ModelPose,
) -> Result<Limb7Report, Limb7ChainError> {
    let geometry_error = |source| Limb7ChainError::Geometry {
        joint: skeleton.name(chain.shoulder).to_owned(),
        source,
    };
    if !goal.position.is_finite() || goal.orientation.is_some_and(|q| unit_quat(q).is_none()) {
        return Err(geometry_error(Limb7Error::NonFinite));
    }
    let model_from_limb = chain.model_from_limb(skeleton, pose, model);
    if model_from_limb.matrix3.determinant().abs() < 1e-300 {
        return Err(geometry_error(Limb7Error::NonFinite));
    }
    let target = model_from_limb.inverse().transform_point3(goal.position);
    let parent_rotation = chain.model_rotation_of_limb(skeleton, model);
    let orientation = goal
        .orientation
        .and_then(unit_quat)
        .map(|q| parent_rotation.conjugate() * q);
    let hint = chain.elbow_angle(skeleton, pose);
    let current = limb.swivel_from_pose(pose[chain.shoulder].rotation, hint);
    let limits = Limb7Limits {
        shoulder: skeleton.limit(chain.shoulder),
        shoulder_rest: skeleton.rest(chain.shoulder).rotation,
        wrist: skeleton.limit(chain.wrist),
        wrist_rest: skeleton.rest(chain.wrist).rotation,
    };
    let (mut solution, known_legal, mut feasible) = limb
        .choose_solution(policy, target, orientation, &limits, hint, current)
        .map_err(geometry_error)?;
    if let Some(goal) = orientation {
        solution.wrist = Some(limb.wrist_for(&solution, goal));
    }
    // Write, enforcing limits.
    let mut limited = Vec::new();
    let mut set = |joint: JointId, rotation: DQuat, known_legal: bool, pose: &mut LocalPose| {
        let rest = skeleton.rest(joint).rotation;
        let limit = skeleton.limit(joint);
        let delta = rest.conjugate() * rotation;
        let legal = if known_legal || limit.contains(delta) {
            rotation
        } else {
            limited.push(skeleton.name(joint).to_owned());
            (rest * limit.project(delta)).normalize()
        };
        pose[joint] = Transform {
            rotation: legal,
            ..pose[joint]
        };
    };
    set(chain.shoulder, solution.shoulder, known_legal, pose);
    set(
        chain.elbow,
        skeleton.rest(chain.elbow).rotation * solution.elbow_hinge,
        false,
        pose,
    );
    // Without an orientation goal the wrist keeps its rotation, which must be legal too.
    let wrist = solution.wrist.unwrap_or(pose[chain.wrist].rotation);
    set(
        chain.wrist,
        wrist,
        known_legal && solution.wrist.is_some(),
        pose,
    );
    if !limited.is_empty() && feasible.is_none() {
        let wishes = [solution.swivel, current];
        feasible = Some(
            limb.feasible_swivels(target, orientation, &limits, Some(hint), &wishes)
                .map_err(geometry_error)?,
        );
    }
    Ok(Limb7Report {
        reached: solution.reached && limited.is_empty(),
        in_reach: solution.reached,
        swivel: solution.swivel,
        feasible,
        limited,
    })
}
