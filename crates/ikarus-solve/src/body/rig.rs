//! The body a full-body solve works on: a skeleton's humanoid bones found once.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, JointLimit, ModelPose, Skeleton, fk};

use super::BodyConfig;
use super::descent::SPINE_GROUPS;

/// One arm or leg: upper bone start, mid joint, end joint, its bend goal if any, and the
/// joints from the hips (exclusive) down to its start, root first.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Limb {
    pub(crate) bones: [HumanoidBone; 3],
    pub(crate) joints: [JointId; 3],
    pub(crate) bend_goal: Option<DVec3>,
    pub(crate) path: Vec<JointId>,
    /// The mid joint's flexion axis in its rest frame: its hinge limit's axis, else the
    /// humanoid convention at rest (knees about the body's left, the left elbow about its
    /// down, the right elbow about its up).
    pub(crate) axis: DVec3,
    /// The bend axis of the mid joint (its rest frame) for a straight limb, from the
    /// configuration's preferred angle.
    pub(crate) preferred: Option<DVec3>,
    /// The arm's shoulder (clavicle) joint, when mapped above the upper arm.
    pub(crate) clavicle: Option<JointId>,
    /// The joints from the upper bone start down to the end joint's parent, root first.
    pub(crate) inner: Vec<JointId>,
}

/// A skeleton's body for the full-body solver: the hips, the spine joints that share a bend,
/// the chest, neck and head, and the limbs, found through its humanoid map.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyRig {
    pub(crate) hips: JointId,
    /// The joints between the hips and the head (the neck included) that bend with the
    /// body stage, root first.
    pub(crate) spine: Vec<JointId>,
    /// Per spine joint, its group (joint `k` of `n` bends with group `k·G/n` of the body
    /// stage's `G`) and its share of the group's bend (1 / the group's joints).
    pub(crate) spine_groups: Vec<(usize, f64)>,
    /// Per joint of the skeleton, its place in `spine`, if any.
    pub(crate) spine_slot: Vec<Option<usize>>,
    /// The joint a chest effector may name (upper chest, chest or spine: the highest mapped)
    /// and its path from the hips.
    pub(crate) chest: Option<(JointId, Vec<JointId>)>,
    pub(crate) neck: Option<JointId>,
    /// The head and its path from the hips.
    pub(crate) head: Option<(JointId, Vec<JointId>)>,
    /// Left and right arm.
    pub(crate) arms: [Option<Limb>; 2],
    /// Left and right leg.
    pub(crate) legs: [Option<Limb>; 2],
    /// Every joint but those below a limb's end (fingers, toes), parents first: what the
    /// placed body's forward kinematics computes before the limbs, which bring their own
    /// subtrees along.
    pub(crate) above_ends: Vec<JointId>,
    /// Every joint a solve may change, parents first (see [`driven`](Self::driven)).
    pub(crate) driven: Vec<JointId>,
}

/// Why a skeleton or a configuration does not fit the full-body solver.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BodyRigError {
    /// The skeleton's joint names give no hips: the body solver needs a humanoid.
    #[error("the body solver needs a humanoid: no joint of the skeleton is recognised as the hips")]
    NoHips,
    /// A configuration names a bone that is not a VRM humanoid bone.
    #[error(
        "body solver: `{setting}` names `{name}`, which is not a VRM humanoid bone name (e.g. `leftHand`)"
    )]
    UnknownBone {
        /// `pull`, `blend` or `bend_goals`.
        setting: &'static str,
        /// The name given.
        name: String,
    },
    /// A bend goal is not a finite point.
    #[error("body solver: the bend goal of `{name}` is not finite")]
    BendGoal {
        /// The bone's VRM name.
        name: String,
    },
    /// An effector is on a bone the body solver does not drive.
    #[error(
        "the body solver drives effectors on the hips, chest, head, hands and feet; `{joint}` is none of them"
    )]
    Effector {
        /// The effector's joint.
        joint: String,
    },
    /// The task has a base joint: the body solver moves the pelvis itself.
    #[error("the body solver moves the pelvis itself: give no base joint")]
    Base,
    /// A preferred angle is on a bone that is not an elbow or knee (a lower arm or leg), is
    /// not finite, or turns by no angle (it has no axis).
    #[error(
        "body solver: the preferred angle of `{name}` must be a finite, non-zero turn of a lower arm or leg"
    )]
    PreferredAngle {
        /// The bone's VRM name.
        name: String,
    },
    /// A stiffness is not a positive finite number.
    #[error("body solver: `{setting}` must be a positive finite number, got {value}")]
    Stiffness {
        /// `pelvis_stiffness` or `spine_stiffness`.
        setting: &'static str,
        /// The value given.
        value: f64,
    },
}

impl BodyRig {
    /// Finds the body of `skeleton` through the humanoid map its joint names give, and checks
    /// `config` against it.
    ///
    /// # Errors
    /// No hips; a setting naming an unknown bone; a bend goal not finite; a stiffness not
    /// positive.
    pub fn new(skeleton: &Skeleton, config: &BodyConfig) -> Result<Self, BodyRigError> {
        Self::from_map(skeleton, &HumanoidMap::recognise(skeleton), config)
    }

    /// [`new`](Self::new) with a given humanoid map (a VRM's, or one with overrides).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    ///
    /// Kept as one function of about 170 lines: each part of the rig (hips, body axes, spine,
    /// limbs, head) is found from the map and the rest frames the parts before set up.
    #[allow(clippy::too_many_lines)] // the body's parts found in order, each a few lines
    pub fn from_map(
        skeleton: &Skeleton,
        map: &HumanoidMap,
        config: &BodyConfig,
    ) -> Result<Self, BodyRigError> {
        check_config(config)?;
        let hips = map.joint(HumanoidBone::Hips).ok_or(BodyRigError::NoHips)?;
        let mut rest = ModelPose::new(skeleton);
        fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
        let at = |b: HumanoidBone| map.joint(b).map(|j| rest.position(j));
        let up = at(HumanoidBone::Head)
            .map_or(DVec3::Y, |h| h - rest.position(hips))
            .try_normalize()
            .unwrap_or(DVec3::Y);
        let left = match (
            at(HumanoidBone::LeftUpperLeg),
            at(HumanoidBone::RightUpperLeg),
        ) {
            (Some(l), Some(r)) => (l - r).reject_from(up).try_normalize(),
            _ => None,
        }
        .unwrap_or(DVec3::X);
        let below_hips = |joint: JointId| -> Option<Vec<JointId>> {
            if joint == hips || !skeleton.is_ancestor_or_self(hips, joint) {
                return None;
            }
            let mut path = skeleton.chain(hips, joint)?;
            path.remove(0);
            Some(path)
        };
        let neck = map
            .joint(HumanoidBone::Neck)
            .filter(|&j| below_hips(j).is_some());
        let head = map
            .joint(HumanoidBone::Head)
            .and_then(|j| below_hips(j).map(|p| (j, p)));
        let chest = [
            HumanoidBone::UpperChest,
            HumanoidBone::Chest,
            HumanoidBone::Spine,
        ]
        .into_iter()
        .find_map(|b| map.joint(b))
        .and_then(|j| below_hips(j).map(|p| (j, p)));
        // The spine: from the hips up to (not including) the head, the neck included; else
        // up to the neck; else the chest's path.
        let spine = match (&head, neck, &chest) {
            (Some((_, path)), _, _) => Some(path[..path.len() - 1].to_vec()),
            (None, Some(n), _) => below_hips(n),
            (None, None, Some((_, path))) => Some(path.clone()),
            _ => None,
        }
        .unwrap_or_default();
        let limb = |bones: [HumanoidBone; 3]| -> Result<Option<Limb>, BodyRigError> {
            let (Some(a), Some(b), Some(c)) = (
                map.joint(bones[0]),
                map.joint(bones[1]),
                map.joint(bones[2]),
            ) else {
                return Ok(None);
            };
            if !(skeleton.is_ancestor_or_self(a, b) && skeleton.is_ancestor_or_self(b, c))
                || a == b
                || b == c
            {
                return Ok(None);
            }
            let Some(path) = below_hips(a) else {
                return Ok(None);
            };
            let bend_goal = match config.bend_goals.get(bones[1].vrm_name()) {
                Some(p) => {
                    let p = DVec3::from_array(*p);
                    if !p.is_finite() {
                        return Err(BodyRigError::BendGoal {
                            name: bones[1].vrm_name().to_owned(),
                        });
                    }
                    Some(p)
                }
                None => None,
            };
            let convention = match bones[1] {
                HumanoidBone::LeftLowerArm => -up,
                HumanoidBone::RightLowerArm => up,
                _ => left,
            };
            let axis = match skeleton.limit(b) {
                JointLimit::Hinge(h) => h.axis,
                _ => rest.rotation(b).conjugate() * convention,
            };
            // Checked with the configuration: a preferred angle here has an axis.
            let preferred = config
                .preferred_angles
                .get(bones[1].vrm_name())
                .and_then(|&angles| preferred_axis(bones[1].vrm_name(), angles));
            let clavicle = match bones[0] {
                HumanoidBone::LeftUpperArm => map.joint(HumanoidBone::LeftShoulder),
                HumanoidBone::RightUpperArm => map.joint(HumanoidBone::RightShoulder),
                _ => None,
            }
            .filter(|&j| j != a && skeleton.is_ancestor_or_self(j, a) && path.contains(&j));
            let Some(mut inner) = skeleton.chain(a, c) else {
                return Ok(None);
            };
            inner.pop();
            Ok(Some(Limb {
                inner,
                bones,
                joints: [a, b, c],
                bend_goal,
                path,
                axis,
                preferred,
                clavicle,
            }))
        };
        let mut spine_slot = vec![None; skeleton.len()];
        for (k, j) in spine.iter().enumerate() {
            spine_slot[j.index()] = Some(k);
        }
        let n = spine.len();
        let spine_groups = (0..n)
            .map(|k| {
                let group = k * SPINE_GROUPS / n;
                let members = (0..n).filter(|&i| i * SPINE_GROUPS / n == group).count();
                #[allow(clippy::cast_precision_loss)] // a handful of joints
                (group, 1.0 / members as f64)
            })
            .collect();
        let arms = [limb(HumanoidBone::ARMS[0])?, limb(HumanoidBone::ARMS[1])?];
        let legs = [limb(HumanoidBone::LEGS[0])?, limb(HumanoidBone::LEGS[1])?];
        let ends: Vec<JointId> = arms
            .iter()
            .chain(&legs)
            .flatten()
            .map(|l| l.joints[2])
            .collect();
        let above_ends = skeleton
            .joints()
            .filter(|&j| {
                !ends
                    .iter()
                    .any(|&e| e != j && skeleton.is_ancestor_or_self(e, j))
            })
            .collect();
        let mut driven = vec![hips];
        driven.extend(&spine);
        driven.extend(neck);
        driven.extend(head.as_ref().map(|(h, _)| *h));
        for limb in arms.iter().chain(&legs).flatten() {
            driven.extend(limb.clavicle);
            driven.extend(&limb.inner);
            driven.push(limb.joints[2]);
        }
        driven.sort_unstable();
        driven.dedup();
        Ok(Self {
            hips,
            spine,
            spine_groups,
            spine_slot,
            chest,
            neck,
            head,
            arms,
            legs,
            above_ends,
            driven,
        })
    }

    /// Whether every effector of `task` is on a bone this body drives, and the task has no
    /// base.
    ///
    /// # Errors
    /// The first effector on another joint; a base joint.
    pub fn check_task(
        &self,
        skeleton: &Skeleton,
        task: &crate::IkTask,
    ) -> Result<(), BodyRigError> {
        if task.base.is_some() {
            return Err(BodyRigError::Base);
        }
        match task
            .effectors
            .iter()
            .find(|e| self.role_of(e.joint).is_none())
        {
            Some(e) => Err(BodyRigError::Effector {
                joint: skeleton.name(e.joint).to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// Sets (or, with `None`, clears) the bend goal of the limb whose mid bone is `bone`
    /// (`leftLowerArm`, `rightLowerLeg`, …): a model-space point its elbow or knee turns
    /// towards, as [`BodyConfig::bend_goals`] gives at construction; for goals that move
    /// every frame (an elbow tracker) without building the rig again.
    ///
    /// # Errors
    /// [`BodyRigError::BendGoal`] for a point that is not finite (the goal is unchanged);
    /// [`BodyRigError::UnknownBone`] when no limb of this body has `bone` as its mid bone.
    pub fn set_bend_goal(
        &mut self,
        bone: HumanoidBone,
        goal: Option<DVec3>,
    ) -> Result<(), BodyRigError> {
        if goal.is_some_and(|p| !p.is_finite()) {
            return Err(BodyRigError::BendGoal {
                name: bone.vrm_name().to_owned(),
            });
        }
        let limb = self
            .arms
            .iter_mut()
            .chain(&mut self.legs)
            .flatten()
            .find(|l| l.bones[1] == bone)
            .ok_or_else(|| BodyRigError::UnknownBone {
                setting: "bend_goals",
                name: bone.vrm_name().to_owned(),
            })?;
        limb.bend_goal = goal;
        Ok(())
    }

    /// Every joint a solve may change (in joint order, parents first): the hips, the spine
    /// and neck, the head, the clavicles, and each limb's joints from its upper bone to its
    /// end. A solve leaves every other joint's local transform as it came, to the bit (the
    /// fingers and toes ride along in the model frames); a caller writing the solved pose
    /// back into an engine writes only these.
    #[must_use]
    pub fn driven(&self) -> &[JointId] {
        &self.driven
    }

    /// The limbs (arms, then legs) that were found.
    pub(crate) fn limbs(&self) -> impl Iterator<Item = &Limb> {
        self.arms.iter().chain(&self.legs).flatten()
    }
}

/// The bend axis a preferred angle gives the mid joint of the limb whose lower bone is
/// `name` (`leftLowerArm`, …): the axis of its intrinsic XYZ Euler turn, or `None` when the
/// bone is no lower arm or leg, or the turn is not finite or is no turn.
fn preferred_axis(name: &str, [x, y, z]: [f64; 3]) -> Option<DVec3> {
    use HumanoidBone as B;
    let bone = HumanoidBone::from_vrm_name(name)?;
    if !matches!(
        bone,
        B::LeftLowerArm | B::RightLowerArm | B::LeftLowerLeg | B::RightLowerLeg
    ) {
        return None;
    }
    let (axis, angle) = DQuat::from_euler(glam::EulerRot::XYZ, x, y, z).to_axis_angle();
    (angle.is_finite() && angle > 1e-9 && axis.is_finite()).then_some(axis)
}

/// The names and numbers of `config` that need no skeleton to check.
fn check_config(config: &BodyConfig) -> Result<(), BodyRigError> {
    for (setting, names) in [
        ("pull", config.pull.keys().collect::<Vec<_>>()),
        ("blend", config.blend.keys().collect()),
        ("bend_goals", config.bend_goals.keys().collect()),
        ("preferred_angles", config.preferred_angles.keys().collect()),
    ] {
        if let Some(name) = names
            .into_iter()
            .find(|n| HumanoidBone::from_vrm_name(n).is_none())
        {
            return Err(BodyRigError::UnknownBone {
                setting,
                name: name.clone(),
            });
        }
    }
    for (name, &angles) in &config.preferred_angles {
        if preferred_axis(name, angles).is_none() {
            return Err(BodyRigError::PreferredAngle { name: name.clone() });
        }
    }
    for (setting, value) in [
        ("pelvis_stiffness", config.pelvis_stiffness),
        ("spine_stiffness", config.spine_stiffness),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(BodyRigError::Stiffness { setting, value });
        }
    }
    Ok(())
}
