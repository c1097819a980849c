//! What goes wrong, and what each solver reports per frame.

use bevy::prelude::*;
use ikarus_solve::{SolveReport, SolveStatus};

/// Why a character or a solver cannot run; each variant says how to fix it. Held in
/// [`IkarusStatus::Error`](crate::IkarusStatus::Error) or [`IkReport::error`].
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum IkarusError {
    /// The scene's joints do not form a skeleton ikarus accepts (duplicate names are made
    /// unique, so this is a cycle or more than `MAX_JOINTS` joints).
    #[error("the character's joints do not form a skeleton: {0}")]
    Skeleton(String),
    /// A joint (or the root) carries a non-uniform scale, which the solvers cannot keep:
    /// bake it into the mesh, or scale the joint uniformly.
    #[error("joint `{joint}` has a non-uniform scale {scale:?}; ikarus needs uniform scales")]
    NonUniformScale {
        /// The joint's name.
        joint: String,
        /// Its scale.
        scale: [f32; 3],
    },
    /// A bone the solver needs is not found by the humanoid map: name it in
    /// [`IkarusCharacter::bones`](crate::IkarusCharacter::bones).
    #[error(
        "no joint of the character is recognised as `{bone}`; map it in IkarusCharacter::bones"
    )]
    MissingBone {
        /// The bone's VRM name.
        bone: &'static str,
    },
    /// A joint named by the game is not in the character.
    #[error("the character has no joint named `{name}`")]
    UnknownJoint {
        /// The name given.
        name: String,
    },
    /// An entity named as a character is not one (it has no
    /// [`IkarusCharacter`](crate::IkarusCharacter), or its scene has not spawned yet).
    #[error("entity {0} is not a character with a built skeleton (yet)")]
    NotACharacter(Entity),
    /// A target, pole or tracker entity is gone or has no `Transform`.
    #[error("target entity {0} does not exist or has no Transform")]
    MissingTarget(Entity),
    /// A target, pole or tracker is not finite (a NaN from the game): the frame is skipped.
    #[error("target entity {0} has a non-finite transform; the joints keep their animation")]
    NonFiniteTarget(Entity),
    /// The animated pose read from the joints is not finite.
    #[error("the character's animated joints are not finite; nothing was solved")]
    NonFinitePose,
    /// A solver refused its setup (chain, body, settings); the message says which part.
    #[error("{0}")]
    Setup(String),
    /// A solve was refused (the goals were invalid); the joints keep their animation.
    #[error("solve refused: {0}")]
    Solve(String),
}

/// The last frame's outcome of one solver (a limb, a full body, a tracked body), measured by
/// forward kinematics on the solved pose; on the same entity as the solver's component.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct IkReport {
    /// Converged, unreachable, … (`None` before the first solve).
    pub status: Option<SolveStatus>,
    /// Largest effector position error, model space (world units).
    pub position_error: f64,
    /// Largest effector orientation error, radians.
    pub rotation_error: f64,
    /// Whether a joint limit held a joint back.
    pub limits_active: bool,
    /// Iterations the solver used (0 for the closed forms).
    pub iterations: u32,
    /// Frames solved so far.
    pub frames: u64,
    /// Why the last frame was not solved, if it was not.
    pub error: Option<IkarusError>,
}

impl IkReport {
    /// True when the last frame converged.
    pub fn converged(&self) -> bool {
        self.error.is_none() && self.status == Some(SolveStatus::Converged)
    }

    /// Takes a solver's report (its residuals and status), clearing the error.
    pub(crate) fn set_report(&mut self, report: &SolveReport) {
        self.set_solved(
            report.status,
            [report.position_error, report.rotation_error],
            report.limits_active,
        );
        self.iterations = report.iterations;
    }

    /// Records a solved frame: its status, `[position, rotation]` errors and whether a limit
    /// held a joint; clears the error.
    pub(crate) fn set_solved(&mut self, status: SolveStatus, errors: [f64; 2], limited: bool) {
        self.status = Some(status);
        [self.position_error, self.rotation_error] = errors;
        self.limits_active = limited;
        self.iterations = 0;
        self.frames += 1;
        if self.error.is_some() {
            self.error = None;
        }
    }

    /// Records a frame not solved, and why (the previous error is kept when it is the same,
    /// so a steady failure allocates nothing more).
    pub(crate) fn set_error(&mut self, error: IkarusError) {
        self.status = None;
        if self.error.as_ref() != Some(&error) {
            self.error = Some(error);
        }
    }
}
