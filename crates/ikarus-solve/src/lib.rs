//! # ikarus-solve
//!
//! Inverse kinematics on [`ikarus_core`] skeletons. Every solver reads an [`IkTask`] (effectors
//! with position and/or orientation goals in model space, an optional base joint), writes the
//! pose it found into a `&mut LocalPose`, and returns a [`SolveReport`] whose residuals are
//! recomputed by forward kinematics after solving — never the solver's own estimate.
//!
//! Runtime choice goes through one serde-tagged [`SolverConfig`] and [`solve`]; each solver
//! lives in its own module with its own config struct.
//!
//! ## Layout
//!
//! The source is in folders by layer; the public modules are re-exported here flat:
//! - `analytic/`: the closed forms [`two_bone`], [`limb7`] (seed 000, 7-DOF analytic limb),
//!   [`leg6`] (seed 003, humanoid robot leg) and [`aim`], each a folder with its pure kernel,
//!   SIMD lanes, chain adapter, task engine and crowd batch, and the task runner they share;
//! - `iterative/`: the shared iteration [`driver`] with its [`path`] and [`dofs`], and the
//!   solvers on it: [`ccd`], [`fabrik`], [`jacobian`], [`lm`];
//! - [`robot`]: URDF chains' closed forms and the joint-vector Levenberg–Marquardt;
//! - [`example_based`]: the learned posture model and its solver (seed 004, IK overview);
//! - `runtime/`: three ways to solve many tasks — [`PreparedTask`] (one task compiled once,
//!   per frame, and [`PreparedTask::solve_many_in`] for a crowd of characters in SIMD lanes)
//!   and [`threaded`] (many targets of one chain over threads); a kernel's `solve_slice` is
//!   the third, many problems of one closed form in a slice;
//! - `linalg/`: [`svd`], rotation [`align`]ment, frames, SIMD lanes, trigonometry;
//! - `config.rs`: [`SolverConfig`] and [`solve`]; [`recover`]: posture from joint points.

#![warn(missing_docs)]

mod analytic;
pub mod body;
mod clock;
mod config;
mod error;
pub mod example_based;
mod iterative;
mod linalg;
pub mod recover;
mod report;
pub mod robot;
mod runtime;
mod task;
#[cfg(test)]
mod test_rng;

pub use analytic::{aim, leg6, limb7, two_bone};
pub use config::{SolverConfig, SolverWorkspace, solve, solve_with};
pub use iterative::{ccd, dofs, driver, fabrik, jacobian, lm, path};
pub use linalg::{align, svd};
pub use runtime::prepared;
#[cfg(feature = "threads")]
pub use runtime::threaded;

pub use ccd::{CcdConfig, CcdDamping, CcdVariant};
pub use driver::{IterationSettings, Workspace};
pub use error::{FitError, ParameterError};
pub use prepared::{PrepareError, PreparedTask};
pub use report::{SolveReport, SolveStatus, measure};
pub use task::{Effector, Goal, IkTask, MAX_WEIGHT, TaskError, Tolerance};
