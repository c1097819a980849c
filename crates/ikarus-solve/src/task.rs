//! What a solver is asked to do.

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, Skeleton};
use serde::{Deserialize, Serialize};

/// Where an effector should be, in model space. Either part may be absent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Goal {
    /// Target position of the effector joint's origin, model space.
    pub position: Option<DVec3>,
    /// Target orientation of the effector joint, model space.
    pub orientation: Option<DQuat>,
}

impl Goal {
    /// A position goal only (model space): the orientation is free.
    #[must_use]
    pub const fn from_position(position: DVec3) -> Self {
        Self {
            position: Some(position),
            orientation: None,
        }
    }

    /// A 6-D goal: a position and an orientation, both model space.
    #[must_use]
    pub const fn from_position_orientation(position: DVec3, orientation: DQuat) -> Self {
        Self {
            position: Some(position),
            orientation: Some(orientation),
        }
    }

    /// The 6-D goal of `joint`'s frame in `model`: its position and rotation there (a held-out
    /// frame's, an animation's).
    #[must_use]
    pub fn from_frame(model: &ikarus_core::ModelPose, joint: JointId) -> Self {
        Self::from_position_orientation(model.position(joint), model.rotation(joint))
    }
}

/// The largest effector weight a task accepts. Weights are relative importances (1 is
/// normal); least-squares solvers square them, and a weight near `f64::MAX`'s square root would
/// overflow every step (the soak runner found 1e300 doing so).
pub const MAX_WEIGHT: f64 = 1e12;

/// A joint with a goal and a weight relative to the other effectors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Effector {
    /// The joint to move.
    pub joint: JointId,
    /// Where it should go.
    pub goal: Goal,
    /// Relative importance when goals conflict (1 = normal; 0 ignores the effector; at most
    /// [`MAX_WEIGHT`]).
    pub weight: f64,
}

impl Effector {
    /// `joint` to `goal` at the normal weight, 1.
    #[must_use]
    pub const fn new(joint: JointId, goal: Goal) -> Self {
        Self {
            joint,
            goal,
            weight: 1.0,
        }
    }
}

/// When a residual counts as reached.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tolerance {
    /// Largest position error that counts as reached, in the skeleton's length unit
    /// (metres for built-in and scaled skeletons). Default 1e-4.
    pub position: f64,
    /// Largest orientation error that counts as reached, radians. Default 1e-3.
    pub rotation: f64,
}

impl Tolerance {
    /// The thresholds `position` (length unit) and `rotation` (radians).
    #[must_use]
    pub const fn new(position: f64, rotation: f64) -> Self {
        Self { position, rotation }
    }
}

impl Default for Tolerance {
    fn default() -> Self {
        Self {
            position: 1e-4,
            rotation: 1e-3,
        }
    }
}

/// An IK problem: effectors with goals, an optional base (support) joint that stays fixed, and
/// the tolerances that decide convergence.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IkTask {
    /// The effectors.
    pub effectors: Vec<Effector>,
    /// The joint that stays fixed in model space while the rest moves; `None` keeps the root
    /// fixed.
    pub base: Option<JointId>,
    /// Convergence thresholds.
    pub tolerance: Tolerance,
}

impl IkTask {
    /// A task of these effectors, the root fixed, the default [`Tolerance`].
    #[must_use]
    pub fn from_effectors(effectors: Vec<Effector>) -> Self {
        Self {
            effectors,
            ..Self::default()
        }
    }

    /// A task of one effector, `joint` to `goal` at weight 1, the root fixed, the default
    /// [`Tolerance`].
    #[must_use]
    pub fn from_goal(joint: JointId, goal: Goal) -> Self {
        Self::from_effectors(vec![Effector::new(joint, goal)])
    }

    /// A task of 6-D effectors at weight 1: each joint to its model-space position and
    /// rotation; the root fixed, the default [`Tolerance`].
    #[must_use]
    pub fn from_poses(poses: impl IntoIterator<Item = (JointId, DVec3, DQuat)>) -> Self {
        Self::from_effectors(
            poses
                .into_iter()
                .map(|(joint, p, q)| Effector::new(joint, Goal::from_position_orientation(p, q)))
                .collect(),
        )
    }

    /// This task with `base` fixed in model space instead of the root.
    #[must_use]
    pub fn with_base(mut self, base: JointId) -> Self {
        self.base = Some(base);
        self
    }

    /// This task with these convergence thresholds.
    #[must_use]
    pub fn with_tolerance(mut self, tolerance: Tolerance) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Checks joints exist in `skeleton`, the base is not an effector, goals and weights are
    /// finite, and orientations are unit quaternions.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), TaskError> {
        if self.effectors.is_empty() {
            return Err(TaskError::NoEffectors);
        }
        let joint_ok = |j: JointId| j.index() < skeleton.len();
        if let Some(base) = self.base.filter(|&b| !joint_ok(b)) {
            return Err(TaskError::UnknownJoint { joint: base });
        }
        for e in &self.effectors {
            if !joint_ok(e.joint) {
                return Err(TaskError::UnknownJoint { joint: e.joint });
            }
            // Allocated only for the error: a valid task allocates nothing.
            let name = || skeleton.name(e.joint).to_owned();
            if self.base == Some(e.joint) {
                return Err(TaskError::BaseIsEffector { joint: name() });
            }
            e.goal.validate(name)?;
            if !(e.weight.is_finite() && (0.0..=MAX_WEIGHT).contains(&e.weight)) {
                return Err(TaskError::NonFinite {
                    joint: name(),
                    what: "weight",
                });
            }
        }
        let valid = |t: f64| t.is_finite() && t >= 0.0;
        if !(valid(self.tolerance.position) && valid(self.tolerance.rotation)) {
            return Err(TaskError::BadTolerance);
        }
        Ok(())
    }
}

impl IkTask {
    /// The goals' part of [`validate`](Self::validate), for a task whose joints, weights and
    /// tolerances were checked before (a prepared task's goals are all that change).
    pub(crate) fn validate_goals(&self, skeleton: &Skeleton) -> Result<(), TaskError> {
        for e in &self.effectors {
            e.goal.validate(|| skeleton.name(e.joint).to_owned())?;
        }
        Ok(())
    }
}

impl Goal {
    /// At least a position or an orientation, finite, the orientation a unit quaternion;
    /// `name` names the effector's joint in the error (allocated only then).
    pub(crate) fn validate(&self, name: impl Fn() -> String) -> Result<(), TaskError> {
        if self.position.is_none() && self.orientation.is_none() {
            return Err(TaskError::EmptyGoal { joint: name() });
        }
        if self.position.is_some_and(|p| !p.is_finite()) {
            return Err(TaskError::NonFinite {
                joint: name(),
                what: "position",
            });
        }
        if let Some(q) = self.orientation {
            if !q.is_finite() {
                return Err(TaskError::NonFinite {
                    joint: name(),
                    what: "orientation",
                });
            }
            if (q.length() - 1.0).abs() > 1e-6 {
                return Err(TaskError::NonUnitOrientation {
                    joint: name(),
                    length: q.length(),
                });
            }
        }
        Ok(())
    }
}

/// What is wrong with a task.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The task has no effectors. Add at least one.
    #[error("the task has no effectors")]
    NoEffectors,
    /// A joint id is not in the skeleton. Look joints up by name on the same skeleton.
    #[error("joint {joint} is not in the skeleton")]
    UnknownJoint {
        /// The id.
        joint: JointId,
    },
    /// An effector has neither a position nor an orientation goal.
    #[error("effector `{joint}` has neither a position nor an orientation goal")]
    EmptyGoal {
        /// The effector's joint.
        joint: String,
    },
    /// A goal or weight is NaN or infinite (or a weight is negative or above [`MAX_WEIGHT`]).
    #[error("effector `{joint}` has a non-finite or out-of-range {what} (weights: 0 to 1e12)")]
    NonFinite {
        /// The effector's joint.
        joint: String,
        /// `position`, `orientation` or `weight`.
        what: &'static str,
    },
    /// An orientation goal is not a unit quaternion. Normalize it.
    #[error("effector `{joint}` orientation has length {length}; use a unit quaternion")]
    NonUnitOrientation {
        /// The effector's joint.
        joint: String,
        /// Its length.
        length: f64,
    },
    /// An effector and the base joint are in different trees of a forest; pick a base in the
    /// effector's tree.
    #[error("effector `{effector}` and base `{base}` are not connected")]
    Disconnected {
        /// The effector's joint.
        effector: String,
        /// The base joint.
        base: String,
    },
    /// The base joint is also an effector: the base stays where it is, so its goal can never
    /// be worked towards. Pick the base further up (or down) the skeleton.
    #[error("effector `{joint}` is the base joint, which stays fixed; pick another base")]
    BaseIsEffector {
        /// The joint.
        joint: String,
    },
    /// More than 65,536 effectors.
    #[error("a task holds at most 65,536 effectors")]
    TooManyEffectors,
    /// A tolerance is negative or not finite.
    #[error("tolerances must be finite and non-negative")]
    BadTolerance,
}
