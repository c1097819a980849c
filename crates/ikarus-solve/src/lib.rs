//! # ikarus-solve
//!
//! Inverse kinematics on [`ikarus_core`] skeletons. Every solver reads an [`IkTask`] (effectors
//! with position and/or orientation goals in model space, an optional base joint), writes the
//! pose it found into a `&mut LocalPose`, and returns a [`SolveReport`] whose residuals are
//! recomputed by forward kinematics after solving — never the solver's own estimate.
//!
//! Runtime choice goes through one serde-tagged [`SolverConfig`] and [`solve`]; each solver
//! lives in its own module with its own config struct.

#![warn(missing_docs)]

pub mod aim;
pub mod align;
mod analytic;
pub mod ccd;
pub mod dofs;
pub mod driver;
mod frames;
pub mod jacobian;
pub mod leg6;
pub mod limb7;
pub mod path;
mod report;
pub mod svd;
mod task;
pub mod two_bone;

pub use ccd::{CcdConfig, CcdDamping, CcdVariant};
pub use driver::{IterationSettings, Workspace};
pub use report::{SolveReport, SolveStatus, measure};
pub use task::{Effector, Goal, IkTask, TaskError, Tolerance};

use ikarus_core::{LocalPose, Skeleton};
use serde::{Deserialize, Serialize};

/// Which solver to run and its parameters; the `kind` tag names it in task files
/// (`{"kind": "none"}`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum SolverConfig {
    /// Solves nothing: evaluates the start pose against the goals (0 iterations). Useful to
    /// measure where a pose stands, and the baseline every solver is compared with.
    #[default]
    None,
    /// Cyclic coordinate descent ([`ccd`]): `{"kind": "ccd", "variant": "classic" | "mmd",
    /// "damping": "none" | "length", "iteration": {"max_iterations": 64, ...}}`.
    Ccd(CcdConfig),
    /// Closed-form two-bone IK ([`two_bone`]) on the effector, its parent and grandparent:
    /// `{"kind": "two_bone", "pole": [x, y, z], "twist_angle": 0, "soften": 1, "weight": 1}`.
    TwoBone(two_bone::TwoBoneConfig),
    /// Analytic 7-DOF limb ([`limb7`], seed 000) on the effector (wrist), its parent (elbow)
    /// and grandparent (shoulder): `{"kind": "limb7", "swivel": "keep_current"}`.
    Limb7(limb7::Limb7Config),
    /// Aim / look-at ([`aim`]): the effector joint turns so its line of sight passes through
    /// the effector's position goal: `{"kind": "aim", "forward": [0, 0, 1], "up": [0, 1, 0]}`.
    Aim(aim::AimConfig),
    /// Closed-form six-joint robot leg ([`leg6`], seed 003): the effector is the ankle roll
    /// joint, its five ancestors the hip yaw, roll, pitch, knee and ankle pitch hinges:
    /// `{"kind": "leg6"}`.
    Leg6(leg6::Leg6Config),
    /// The Jacobian family ([`jacobian`]): `{"kind": "jacobian", "method": "transpose" |
    /// "pinv" | "dls" | "sdls", "damping": 0.05, "weights": {"spine": 4},
    /// "null_space": {"objective": "rest", "gain": 0.1}, "iteration": {...}}`.
    Jacobian(jacobian::JacobianConfig),
}

impl SolverConfig {
    /// The `kind` name of the solver.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Ccd(_) => "ccd",
            Self::TwoBone(_) => "two_bone",
            Self::Limb7(_) => "limb7",
            Self::Aim(_) => "aim",
            Self::Leg6(_) => "leg6",
            Self::Jacobian(_) => "jacobian",
        }
    }
}

/// Runs the configured solver on `pose` (the start pose on entry, the best pose found on exit).
///
/// Invalid goals (NaN or infinite) give [`SolveStatus::InvalidInput`] and leave the pose
/// untouched.
pub fn solve(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &SolverConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    if let Err(reason) = task.validate(skeleton) {
        return SolveReport::invalid(reason.to_string());
    }
    match config {
        SolverConfig::None => {
            let (position_error, rotation_error) = measure(skeleton, task, pose);
            SolveReport::from_residuals(task, position_error, rotation_error, 0, false)
        }
        SolverConfig::Ccd(config) => ccd::solve(skeleton, task, config, pose),
        SolverConfig::TwoBone(config) => two_bone::solve_task(skeleton, task, config, pose),
        SolverConfig::Limb7(config) => limb7::solve_task(skeleton, task, config, pose),
        SolverConfig::Aim(config) => aim::solve_task(skeleton, task, config, pose),
        SolverConfig::Leg6(config) => leg6::solve_task(skeleton, task, config, pose),
        SolverConfig::Jacobian(config) => jacobian::solve(skeleton, task, config, pose),
    }
}
