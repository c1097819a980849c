//! The leg on a skeleton's chain: [`Leg6Joints`] by role, [`Leg6Chain`] validated once,\n//! [`solve_chain`] on a pose.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The six joints of a leg in a [`Skeleton`], by role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leg6Joints {
    /// The hip joint turning about the leg's up axis.
    pub hip_yaw: JointId,
    /// The hip joint turning about the leg's forward axis.
    pub hip_roll: JointId,
    /// The hip joint turning about the leg's lateral axis.
    pub hip_pitch: JointId,
    /// The knee, a child of the last hip joint.
    pub knee: JointId,
    /// The ankle pitch joint, a child of the knee.
    pub ankle_pitch: JointId,
    /// The ankle roll joint (the foot), a child of the ankle pitch joint.
    pub ankle_roll: JointId,
}

impl Leg6Joints {
    /// The ids in [`Leg6Angles::to_array`] order.
    pub const fn to_array(&self) -> [JointId; 6] {
        [
            self.hip_yaw,
            self.hip_roll,
            self.hip_pitch,
            self.knee,
            self.ankle_pitch,
            self.ankle_roll,
        ]
    }

    /// Looks the six joints up by name, in [`Leg6Angles::to_array`] order.
    ///
    /// # Errors
    /// [`Leg6ChainError::UnknownName`] for a name the skeleton does not have.
    pub fn from_names(skeleton: &Skeleton, names: [&str; 6]) -> Result<Self, Leg6ChainError> {
        let mut ids = [JointId::from_index(0); 6];
        for (id, name) in ids.iter_mut().zip(names) {
            *id = skeleton
                .joint(name)
                .ok_or_else(|| Leg6ChainError::UnknownName {
                    name: name.to_owned(),
                })?;
        }
        Ok(Self::from_array(ids))
    }

    /// From the ids in [`Leg6Angles::to_array`] order.
    pub const fn from_array(ids: [JointId; 6]) -> Self {
        let [hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll] = ids;
        Self {
            hip_yaw,
            hip_roll,
            hip_pitch,
            knee,
            ankle_pitch,
            ankle_roll,
        }
    }
}

/// Six hinge joints of a [`Skeleton`] bound to the closed form, validated once: the leg frame
/// and [`Leg6Params`] are derived from the rest pose and the joints' [`JointLimit::Hinge`]
/// axes and ranges.
///
/// The rest pose is the zero pose: each joint's angle is its rotation about its hinge axis
/// relative to its rest rotation (the [`JointLimit`] convention). The leg frame's y axis is
/// the knee axis, oriented so that the knee's larger range side bends it; z is the hip yaw axis
/// pointing from the foot to the hip; x = y × z. Axes given as the opposite of the leg frame's
/// are handled by flipping the angle's sign (and the range).
#[derive(Clone, Debug, PartialEq)]
pub struct Leg6Chain {
    joints: [JointId; 6],
    first: JointId,
    pelvis: Option<JointId>,
    axes: [DVec3; 6],
    rest: [DQuat; 6],
    pelvis_from_leg: DQuat,
    foot_from_leg: DQuat,
    sole: DVec3,
    params: Leg6Params,
}

impl Leg6Chain {
    /// Binds the six joints, with the sole point at `sole` in the ankle roll joint's frame
    /// (metres; zero makes the ankle roll joint's origin the point targets place).
    ///
    /// # Errors
    /// An unknown joint, joints that are not one parent → child chain (three hip joints in any
    /// order, knee, ankle pitch, ankle roll), a joint without a hinge limit or with a rest
    /// scale, axes that do not match the roles (within [`CHAIN_TOLERANCE`]), hip axes that do
    /// not meet in one point, or a non-finite sole.
    ///
    /// Kept as one function of about 150 lines: the chain's checks in the order the errors document
    /// them, each using the joints and frames the one before established.
    #[allow(clippy::too_many_lines)] // one validation after another
    pub fn new(
        skeleton: &Skeleton,
        joints: &Leg6Joints,
        sole: DVec3,
    ) -> Result<Self, Leg6ChainError> {
        let ids = joints.to_array();
        for joint in ids {
            if joint.index() >= skeleton.len() {
                return Err(Leg6ChainError::UnknownJoint { joint });
            }
        }
        let name = |j: JointId| skeleton.name(j).to_owned();
        if !sole.is_finite() {
            return Err(Leg6ChainError::BadSole { sole });
        }

        // Hierarchy: hip, hip, hip, knee, ankle pitch, ankle roll, each the next one's parent.
        let is_hip = |j: Option<JointId>| j.is_some_and(|j| ids[..3].contains(&j));
        let not_child = |joint: JointId| Leg6ChainError::NotAChain { joint: name(joint) };
        for (child, parent) in [(ids[5], ids[4]), (ids[4], ids[3])] {
            if skeleton.parent(child) != Some(parent) {
                return Err(not_child(child));
            }
        }
        let h3 = skeleton
            .parent(ids[3])
            .filter(|_| is_hip(skeleton.parent(ids[3])));
        let h3 = h3.ok_or_else(|| not_child(ids[3]))?;
        let h2 = skeleton
            .parent(h3)
            .filter(|&p| is_hip(Some(p)) && p != h3)
            .ok_or_else(|| not_child(h3))?;
        let h1 = skeleton
            .parent(h2)
            .filter(|&p| is_hip(Some(p)) && p != h2 && p != h3)
            .ok_or_else(|| not_child(h2))?;
        let order_ids = [h1, h2, h3, ids[3], ids[4], ids[5]];

        // Hinges and rest frames relative to the pelvis (the first hip joint's parent).
        let mut hinge = [(DVec3::ZERO, 0.0, 0.0); 6]; // (axis, min, max) by role
        for (role, &joint) in ids.iter().enumerate() {
            let JointLimit::Hinge(h) = skeleton.limit(joint) else {
                return Err(Leg6ChainError::NoHinge { joint: name(joint) });
            };
            if skeleton.rest(joint).scale != DVec3::ONE {
                return Err(Leg6ChainError::Scaled { joint: name(joint) });
            }
            hinge[role] = (h.axis, h.min, h.max);
        }
        let mut rotation = DQuat::IDENTITY;
        let mut position = DVec3::ZERO;
        let mut rest_frame = [(DVec3::ZERO, DQuat::IDENTITY); 6]; // by role
        for joint in order_ids {
            let rest = skeleton.rest(joint);
            position += rotation * rest.translation;
            rotation = (rotation * rest.rotation).normalize();
            let role = ids.iter().position(|&j| j == joint).unwrap_or(0);
            rest_frame[role] = (position, rotation);
        }
        let axis_in_pelvis = |role: usize| rest_frame[role].1 * hinge[role].0;

        // Leg frame: y bends the knee, z points from the foot to the hip, x = y × z.
        let (_, knee_min, knee_max) = hinge[3];
        let flex = if knee_max >= -knee_min { 1.0 } else { -1.0 };
        let y = axis_in_pelvis(3) * flex;
        let yaw_axis = axis_in_pelvis(0);
        let misaligned = |role: usize, expected: DVec3| Leg6ChainError::Misaligned {
            joint: name(ids[role]),
            role: Leg6Angles::NAMES[role],
            axis: axis_in_pelvis(role),
            expected,
        };
        if yaw_axis.dot(y).abs() > CHAIN_TOLERANCE {
            return Err(misaligned(0, DVec3::ZERO));
        }
        let up = rest_frame[0].0.lerp(rest_frame[2].0, 0.5) - rest_frame[5].0;
        let z = (yaw_axis - y * yaw_axis.dot(y)).normalize() * yaw_axis.dot(up).signum();
        let x = y.cross(z);
        let pelvis_from_leg = DQuat::from_mat3(&DMat3::from_cols(x, y, z)).normalize();
        let leg_axis = [z, x, y, y, y, x];
        let mut axes = [DVec3::ZERO; 6];
        let mut ranges = [(0.0, 0.0); 6];
        for role in 0..6 {
            let along = axis_in_pelvis(role).dot(leg_axis[role]);
            if axis_in_pelvis(role).cross(leg_axis[role]).length() > CHAIN_TOLERANCE {
                return Err(misaligned(role, leg_axis[role]));
            }
            let (axis, min, max) = hinge[role];
            (axes[role], ranges[role]) = if along > 0.0 {
                (axis, (min, max))
            } else {
                (-axis, (-max, -min))
            };
        }

        // Points in the leg frame; the hip centre is where the three hip axes meet.
        let leg_from_pelvis = pelvis_from_leg.inverse();
        let at = |role: usize| leg_from_pelvis * rest_frame[role].0;
        let (yaw_at, roll_at, pitch_at) = (at(0), at(1), at(2));
        let hip = DVec3::new(
            0.5 * (yaw_at.x + pitch_at.x),
            0.5 * (yaw_at.y + roll_at.y),
            0.5 * (roll_at.z + pitch_at.z),
        );
        let thigh = at(3) - hip;
        let shank = at(4) - at(3);
        let size = thigh.length() + shank.length() + hip.length();
        let gap = (yaw_at.x - pitch_at.x)
            .abs()
            .max((yaw_at.y - roll_at.y).abs())
            .max((roll_at.z - pitch_at.z).abs());
        if gap > CHAIN_TOLERANCE * size.max(1.0) {
            return Err(Leg6ChainError::NotSpherical { gap });
        }
        let foot_rest = rest_frame[5].1;
        // Roles 0, 1, 2 (yaw, roll, pitch) turn about leg axes 2, 0, 1.
        let role_axis = |j: JointId| match ids.iter().position(|&k| k == j) {
            Some(0) => 2,
            Some(1) => 0,
            _ => 1,
        };
        let hip_order = HipOrder::from_axes([h1, h2, h3].map(role_axis)).unwrap_or_default();
        let params = Leg6Params {
            hip,
            thigh,
            shank,
            ankle: at(5) - at(4),
            sole: leg_from_pelvis * (foot_rest * sole),
            heel: 0.0,
            toe: 0.0,
            hip_order,
            limits: Leg6Limits::from_ranges(ranges),
        };
        Ok(Self {
            joints: ids,
            first: h1,
            pelvis: skeleton.parent(h1),
            axes,
            rest: ids.map(|j| skeleton.rest(j).rotation),
            pelvis_from_leg,
            foot_from_leg: (foot_rest.inverse() * pelvis_from_leg).normalize(),
            sole,
            params,
        })
    }

    /// The same chain with heel and toe distances from the sole point along the foot's
    /// forward axis (metres), for [`Leg6Target::Contact`].
    #[must_use]
    pub fn with_heel_toe(mut self, heel: f64, toe: f64) -> Self {
        self.params.heel = heel;
        self.params.toe = toe;
        self
    }

    /// The leg's geometry and limits in its leg frame, as the pure solvers take them.
    pub fn params(&self) -> &Leg6Params {
        &self.params
    }

    /// The six joints in [`Leg6Angles::to_array`] order.
    pub fn joints(&self) -> [JointId; 6] {
        self.joints
    }

    /// The leg frame's orientation in the pelvis joint's frame (the first hip joint's parent;
    /// model space when the hip is a root).
    pub fn pelvis_from_leg(&self) -> DQuat {
        self.pelvis_from_leg
    }

    /// The leg frame in model space for a pose whose FK is `model` (`model_from_leg`).
    ///
    /// # Panics
    /// When `model` belongs to another skeleton.
    pub fn model_from_leg(&self, model: &ModelPose) -> DAffine3 {
        match self.pelvis {
            Some(pelvis) => DAffine3::from_rotation_translation(
                model.rotation(pelvis) * self.pelvis_from_leg,
                model.position(pelvis),
            ),
            None => DAffine3::from_quat(self.pelvis_from_leg),
        }
    }

    /// The sole point in model space (the point targets place) for a pose whose FK is `model`.
    ///
    /// # Panics
    /// When `model` belongs to another skeleton.
    pub fn sole_position(&self, model: &ModelPose) -> DVec3 {
        model[self.joints[5]].transform_point3(self.sole)
    }

    /// The joint angles of `pose` (each joint's rotation about its hinge axis relative to its
    /// rest rotation, in the leg frame's sign convention), in `(−π, π]`.
    ///
    /// # Panics
    /// When `pose` belongs to another skeleton.
    pub fn angles(&self, pose: &LocalPose) -> Leg6Angles {
        let mut angles = [0.0; 6];
        for (i, angle) in angles.iter_mut().enumerate() {
            let delta = self.rest[i].inverse() * pose[self.joints[i]].rotation;
            *angle = wrap(2.0 * delta.xyz().dot(self.axes[i]).atan2(delta.w));
        }
        Leg6Angles::from_array(angles)
    }

    /// Writes the angles into `pose`: each joint's local rotation becomes its rest rotation
    /// turned by its angle about its hinge axis. Translations and scales are kept.
    ///
    /// # Panics
    /// When `pose` belongs to another skeleton.
    pub fn set_angles(&self, angles: &Leg6Angles, pose: &mut LocalPose) {
        for (i, angle) in angles.to_array().into_iter().enumerate() {
            pose[self.joints[i]].rotation =
                self.rest[i] * DQuat::from_axis_angle(self.axes[i], angle);
        }
    }

    /// A model-space target seen in the leg frame of the pose whose FK is `model`. Positions
    /// are model-space points; a `Pose`'s rotation is the ankle roll joint's model-space
    /// rotation (what [`ModelPose::rotation`] reports); `Level` and `Contact` yaw and pitch are
    /// relative to the pelvis (the seed's upright pelvis).
    ///
    /// # Panics
    /// When `model` belongs to another skeleton.
    pub fn leg_target(&self, model: &ModelPose, target: &Leg6Target) -> Leg6Target {
        let (model_from_pelvis, origin) = match self.pelvis {
            Some(pelvis) => (model.rotation(pelvis), model.position(pelvis)),
            None => (DQuat::IDENTITY, DVec3::ZERO),
        };
        let leg_from_model = (model_from_pelvis * self.pelvis_from_leg).inverse();
        let point = |p: DVec3| leg_from_model * (p - origin);
        match *target {
            Leg6Target::Pose { position, rotation } => Leg6Target::Pose {
                position: point(position),
                rotation: leg_from_model * rotation * self.foot_from_leg,
            },
            Leg6Target::Level { position, yaw } => Leg6Target::Level {
                position: point(position),
                yaw,
            },
            Leg6Target::Contact {
                contact,
                point: p,
                yaw,
                pitch,
            } => Leg6Target::Contact {
                contact,
                point: point(p),
                yaw,
                pitch,
            },
        }
    }
}

/// Solves the leg on a pose: forward kinematics into `model` (a workspace sized for the
/// skeleton), the model-space `target` seen in the leg frame ([`Leg6Chain::leg_target`]),
/// [`solve`], the angles written into `pose` ([`Leg6Chain::set_angles`]) and `model` updated
/// from the first hip joint down so that it holds the FK of the new pose. Invalid input leaves
/// `pose` untouched.
///
/// # Panics
/// When `pose` or `model` was sized for another skeleton, or the chain belongs to another
/// skeleton.
pub fn solve_chain(
    skeleton: &Skeleton,
    chain: &Leg6Chain,
    target: &Leg6Target,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> Leg6Output {
    fk::forward_kinematics(skeleton, pose, model);
    let leg_target = chain.leg_target(model, target);
    let output = solve(&chain.params, &leg_target);
    if output.status != Leg6Status::InvalidInput {
        chain.set_angles(&output.angles, pose);
        fk::update_subtree(skeleton, pose, model, chain.first);
    }
    output
}

/// Why a [`Leg6Chain`] cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Leg6ChainError {
    /// A joint id is not in the skeleton. Look joints up by name on the same skeleton.
    #[error("joint {joint} is not in the skeleton")]
    UnknownJoint {
        /// The id.
        joint: JointId,
    },
    /// A joint name is not in the skeleton. Check the spelling against the skeleton's names.
    #[error("no joint is called `{name}`")]
    UnknownName {
        /// The name.
        name: String,
    },
    /// The joints do not form one parent → child chain. Pass the three hip joints (in any
    /// order down the hierarchy), then the knee, ankle pitch and ankle roll, each the child of
    /// the one before.
    #[error(
        "`{joint}` is not the child of the previous leg joint; the six joints must be three hip joints, knee, ankle pitch and ankle roll, each the parent of the next"
    )]
    NotAChain {
        /// The joint whose parent is not the previous leg joint.
        joint: String,
    },
    /// A joint has no hinge limit to take its axis from. Give every leg joint a
    /// [`JointLimit::Hinge`] (a full-circle range for a free one).
    #[error("joint `{joint}` has no hinge limit to take its axis from; give it a hinge limit")]
    NoHinge {
        /// The joint.
        joint: String,
    },
    /// A joint's rest transform is scaled. Bake the scale into the rest translations.
    #[error("joint `{joint}` has a rest scale; the leg must be rigid")]
    Scaled {
        /// The joint.
        joint: String,
    },
    /// A hinge axis does not match its role: hip yaw along the up axis (perpendicular to the
    /// knee axis), hip and ankle roll along forward, hip and ankle pitch parallel to the knee.
    /// Check which joint has which role, or fix the axes in the rest pose.
    #[error(
        "hinge axis of `{joint}` ({role}) is {axis} in the pelvis frame, expected ± {expected} (zero: perpendicular to the knee axis)"
    )]
    Misaligned {
        /// The joint.
        joint: String,
        /// Its role.
        role: &'static str,
        /// Its axis in the pelvis frame at rest.
        axis: DVec3,
        /// The leg-frame axis it should lie along (zero: any axis perpendicular to the knee's).
        expected: DVec3,
    },
    /// The three hip axes do not meet in one point (by `gap` metres), so the leg has no closed
    /// form. Move the hip joints so that their axes meet (an approximation of the real leg).
    #[error(
        "the hip axes miss each other by {gap} m; the closed form needs them to meet in one point"
    )]
    NotSpherical {
        /// The largest distance between the axes, metres.
        gap: f64,
    },
    /// The sole offset is not finite.
    #[error("sole offset {sole} is not finite")]
    BadSole {
        /// The offset given.
        sole: DVec3,
    },
}
