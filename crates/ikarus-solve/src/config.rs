//! [`SolverConfig`], the runtime choice of a solver, and [`solve`], its dispatch: the one place
//! that knows every solver kind. Leaf modules never import from here.

use ikarus_core::{LocalPose, Skeleton};
use serde::{Deserialize, Serialize};

use crate::analytic::{aim, leg6, limb7, two_bone};
use crate::iterative::{ccd, fabrik, jacobian, lm};
use crate::{
    CcdConfig, IkTask, IterationSettings, SolveReport, body, example_based, measure, robot,
};

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
    /// "damping": "none" | "length", "iteration": {"max_iterations": 128, ...}}`.
    Ccd(CcdConfig),
    /// Closed-form two-bone IK ([`two_bone`]) on the effector, its parent and grandparent:
    /// `{"kind": "two_bone", "pole": [x, y, z], "twist_angle": 0, "soften": 1, "weight": 1}`.
    TwoBone(two_bone::TwoBoneConfig),
    /// Analytic 7-DOF limb ([`limb7`], seed 000, 7-DOF limb) on the effector (wrist), its parent
    /// (elbow) and grandparent (shoulder): `{"kind": "limb7", "swivel": "keep_current"}`.
    Limb7(limb7::Limb7Config),
    /// Aim / look-at ([`aim`]): the effector joint turns so its line of sight passes through
    /// the effector's position goal: `{"kind": "aim", "forward": [0, 0, 1], "up": [0, 1, 0]}`.
    Aim(aim::AimConfig),
    /// Closed-form six-joint robot leg ([`leg6`], seed 003, humanoid robot leg): the effector is
    /// the ankle roll joint, its five ancestors the hip yaw, roll, pitch, knee and ankle pitch
    /// hinges: `{"kind": "leg6"}`.
    Leg6(leg6::Leg6Config),
    /// Levenberg–Marquardt ([`lm`]) with hinge ranges as boxes and random restarts:
    /// `{"kind": "lm", "lambda": 1e-2, "max_tries": 12, "iteration": {...}}`.
    Lm(lm::LmConfig),
    /// FABRIK ([`fabrik`], seed 004, IK overview: particle IK): joint points moved backward and
    /// forward, several effectors with sub-bases, the posture recovered from the points:
    /// `{"kind": "fabrik", "iteration": {"max_iterations": 64, ...}}`.
    Fabrik(fabrik::FabrikConfig),
    /// The Jacobian family ([`jacobian`]): `{"kind": "jacobian", "method": "transpose" |
    /// "pinv" | "dls" | "sdls", "damping": 0.05, "weights": {"spine": 4},
    /// "null_space": {"objective": "rest", "gain": 0.1}, "iteration": {...}}`.
    Jacobian(jacobian::JacobianConfig),
    /// The chain's closed form when it has one ([`robot`]: S-R-S arm, six-joint leg, 6R arm
    /// with a spherical wrist; 6-D goals), Levenberg–Marquardt otherwise; the report's `ran`
    /// says which: `{"kind": "auto", "swivel": "keep_current", "fallback": {...}}`.
    Auto(robot::AutoConfig),
    /// Example-based IK ([`example_based`], seed 004, IK overview): the most likely posture of a
    /// learned posture model that meets the goals, refined to meet them exactly:
    /// `{"kind": "example", "model": "builtin:humanoid", "goal_noise": 0.01, "refine": true}`.
    Example(example_based::ExampleConfig),
    /// Full-body IK for humanoids ([`body`]): the pelvis and spine by a small
    /// Levenberg–Marquardt, the limbs by their closed form, each effector with a pull and a
    /// blend over the animated input: `{"kind": "body", "pull": {"leftHand": 1},
    /// "blend": {"rightFoot": 0.5}, "bend_goals": {"leftLowerLeg": [0, 0.5, 1]}}`.
    Body(body::BodyConfig),
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
            Self::Fabrik(_) => "fabrik",
            Self::Lm(_) => "lm",
            Self::Jacobian(_) => "jacobian",
            Self::Auto(_) => "auto",
            Self::Example(_) => "example",
            Self::Body(_) => "body",
        }
    }

    /// The loop settings of an iterative solver (`None` for closed forms).
    pub fn iteration_mut(&mut self) -> Option<&mut IterationSettings> {
        match self {
            Self::Ccd(c) => Some(&mut c.iteration),
            Self::Lm(c) => Some(&mut c.iteration),
            Self::Fabrik(c) => Some(&mut c.iteration),
            Self::Jacobian(c) => Some(&mut c.iteration),
            Self::Auto(c) => Some(&mut c.fallback.iteration),
            Self::None
            | Self::TwoBone(_)
            | Self::Limb7(_)
            | Self::Aim(_)
            | Self::Leg6(_)
            | Self::Example(_)
            | Self::Body(_) => None,
        }
    }
}

/// The reusable buffers of every iterative solver, for [`solve_with`]: a caller that solves
/// many tasks (a batch, an interactive session, a character per frame) keeps one and solves
/// without allocating once it is warm.
#[derive(Clone, Debug, Default)]
pub struct SolverWorkspace {
    ccd: ccd::CcdWorkspace,
    lm: lm::LmWorkspace,
    fabrik: fabrik::FabrikWorkspace,
    jacobian: jacobian::JacobianWorkspace,
}

impl SolverWorkspace {
    /// Empty buffers; each solver sizes its own on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Runs the configured solver on `pose` (the start pose on entry, the best pose found on exit).
///
/// Invalid goals (NaN or infinite) give [`SolveStatus::InvalidInput`](crate::SolveStatus::InvalidInput) and leave the pose
/// untouched.
pub fn solve(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &SolverConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    solve_with(skeleton, task, config, &mut SolverWorkspace::new(), pose)
}

/// [`solve`] with reusable buffers.
pub fn solve_with(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &SolverConfig,
    workspace: &mut SolverWorkspace,
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
        SolverConfig::Ccd(config) => {
            ccd::solve_with(skeleton, task, config, &mut workspace.ccd, pose)
        }
        SolverConfig::TwoBone(config) => two_bone::solve_task(skeleton, task, config, pose),
        SolverConfig::Limb7(config) => limb7::solve_task(skeleton, task, config, pose),
        SolverConfig::Aim(config) => aim::solve_task(skeleton, task, config, pose),
        SolverConfig::Leg6(config) => leg6::solve_task(skeleton, task, config, pose),
        SolverConfig::Lm(config) => lm::solve_with(skeleton, task, config, &mut workspace.lm, pose),
        SolverConfig::Fabrik(config) => {
            fabrik::solve_with(skeleton, task, config, &mut workspace.fabrik, pose)
        }
        SolverConfig::Jacobian(config) => {
            jacobian::solve_with(skeleton, task, config, &mut workspace.jacobian, pose)
        }
        SolverConfig::Auto(config) => {
            robot::solve_task(skeleton, task, config, &mut workspace.lm, pose)
        }
        SolverConfig::Example(config) => example_based::solve_task(skeleton, task, config, pose),
        SolverConfig::Body(config) => body::solve_task(skeleton, task, config, pose),
    }
}
