//! The errors of the solvers' inputs, named by what is wrong: a parameter out of its range
//! ([`ParameterError`]) or a task that does not fit a solver ([`FitError`]). A solve reports
//! them as `invalid_input` with their message; [`PreparedTask::new`](crate::PreparedTask::new)
//! returns them.

use crate::TaskError;
use crate::analytic::limb7::Limb7ChainError;
use crate::analytic::two_bone::TwoBoneChainError;

/// A solver parameter out of its range. The message names the parameter and its value.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParameterError {
    /// A number outside its range: `{name} {value} must be {range}`.
    #[error("{name} {value} must be {range}")]
    OutOfRange {
        /// The parameter (`max_step_angle`, `lambda`, `damping`, …).
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must be (`positive and finite`, `finite and >= 0`, `in [0, 1]`).
        range: &'static str,
    },
    /// A parameter that needs a cargo feature this build of `ikarus-solve` lacks.
    #[error("{name} needs ikarus-solve's `{feature}` feature, which this build lacks")]
    NeedsFeature {
        /// The parameter (`time_budget_us`).
        name: &'static str,
        /// The feature (`clock`).
        feature: &'static str,
    },
    /// A count that must be at least 1 is 0.
    #[error("{name} must be at least 1")]
    Zero {
        /// The parameter (`stall_window`, `max_tries`).
        name: &'static str,
    },
    /// A per-joint parameter names a joint the skeleton lacks.
    #[error("{parameter}: no joint `{joint}` in the skeleton")]
    UnknownJoint {
        /// The parameter (`weights`, `null_space.gradient`).
        parameter: &'static str,
        /// The joint name given.
        joint: String,
    },
    /// A joint's weight is not positive and finite.
    #[error("weights: `{joint}` has weight {weight}; use a positive one")]
    Weight {
        /// The joint.
        joint: String,
        /// Its weight.
        weight: f64,
    },
    /// A joint's null-space gradient has a NaN or infinite component.
    #[error("null_space.gradient: `{joint}` is not finite")]
    Gradient {
        /// The joint.
        joint: String,
    },
}

/// Why a solver cannot run a task: its shape, its chain or the solver's parameters.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FitError {
    /// The task itself is invalid.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// A closed form was given another number of effectors than one.
    #[error("`{solver}` solves one effector, the task has {count}; use ccd for several")]
    Effectors {
        /// The solver's kind.
        solver: &'static str,
        /// Effectors in the task.
        count: usize,
    },
    /// A closed form was given a base joint.
    #[error(
        "`{solver}` keeps the chain's parent fixed and takes no base joint; use ccd for a base"
    )]
    Base {
        /// The solver's kind.
        solver: &'static str,
    },
    /// The effector has fewer ancestors than the closed form's chain needs.
    #[error("`{solver}` needs {needed} ancestors above `{joint}`")]
    Ancestors {
        /// The solver's kind.
        solver: &'static str,
        /// Ancestors needed.
        needed: usize,
        /// The effector joint.
        joint: String,
    },
    /// The two-bone chain does not fit the closed form.
    #[error(transparent)]
    TwoBone(#[from] TwoBoneChainError),
    /// The 7-DOF limb's chain does not fit the closed form.
    #[error(transparent)]
    Limb7(#[from] Limb7ChainError),
    /// A parameter is out of range.
    #[error(transparent)]
    Parameter(#[from] ParameterError),
    /// The skeleton or the settings do not fit the full-body solver.
    #[error(transparent)]
    Body(#[from] crate::body::BodyRigError),
    /// The start pose has NaN or infinite values, or another joint count than the skeleton.
    #[error("the start pose is not a finite pose of this skeleton")]
    StartPose,
}
