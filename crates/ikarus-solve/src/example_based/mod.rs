//! Example-based IK (seed 004, IK overview): effector goals met by the most likely posture of a
//! learned [`PostureModel`], then refined so the goals are met exactly.
//!
//! 1. **Latent stage.** Levenberg–Marquardt on the latent point `z` minimising
//!    `Σ ‖w_e r_e‖² / s² + ‖z‖²`: the effector residuals against a goal noise `s` (a fraction of
//!    the model's length scale), plus the prior's negative log-likelihood. It starts from the
//!    start pose's latent point `z₀` (its PPCA posterior mean; the model's mean for the mean
//!    pose). A start near the goals ([`ExampleConfig::start_radius`]: a drag, or a per-frame
//!    solve from the last frame) is trusted: the posture is the start's own plus its move in
//!    the model, `x = μ + W z + (x₀ − μ − W z₀)` (the start's part off the model's subspace
//!    kept), and `‖z − z₀‖² / τ²` joins the cost ([`ExampleConfig::start_spread`] τ). A start
//!    far from the goals (the mean, a T-pose, a posture from elsewhere in the clip) is
//!    replaced by the model's most likely posture for the goals. A trusted start the stages
//!    leave short of the goals is solved afresh as well, and the closer result kept (the
//!    finish below tries the other too when the kept one stays short). From a trusted start
//!    the start stands for the prior: the model's pull towards its mean is dropped
//!    ([`ExampleConfig::start_prior`]), a model with a motion part moves the latent point as
//!    its examples move between frames ([`PostureModel::with_motion`],
//!    [`ExampleConfig::motion_spread`]), and the refinement's metric gains an isotropic part
//!    ([`ExampleConfig::start_isotropy`], fading as `exp(−(2d/R)²)` with the start's distance
//!    `d` from the goals against the trust radius `R`), so a performer the model did not learn
//!    is changed where the goals ask, not along the learned directions everywhere. Measured
//!    on held-out frames (`ikarus-bench`'s naturalness protocol, two to six effectors): from
//!    the held-out frame 1/15 s earlier 7.0–9.2 mm MPJPE against the best plain solver's
//!    10.8–23.6 mm, and on clips of performers the model did not learn 10.7 against 10.2 mm
//!    (25.6 before these three); from the clip's first frame, afresh is best (17–22 mm;
//!    trusting that start instead, 50–100 mm).
//!    The root stays where it is, as with every solver without a base, unless
//!    [`ExampleConfig::move_root`] adds its translation and rotation to the unknowns (with
//!    Gaussian priors of their own).
//! 2. **Refinement** (optional, default on). Damped least squares on the whole posture vector
//!    with the prior covariance `C = W Wᵀ + σ² I` as the metric: each step
//!    `Δx = C Jᵀ (J C Jᵀ + λ I)⁻¹ (−r)` is the smallest change *in the model's Mahalanobis
//!    distance* that removes the linearised residual, so the pose moves along the directions the
//!    examples move in and the goals are met exactly when they can be. Hinges turn only about
//!    their axis (their columns and steps projected onto it); a joint resting on its limit whose
//!    share of the step points out of it is held for that step when the free step fails.
//! 3. **Finish** (default on): when limits still stop the refinement short, Levenberg–Marquardt
//!    from its pose, kept when it lands closer; still short, damped least squares from the
//!    start pose, kept when closer (on clips of performers the model did not learn, from the
//!    clip's first frame: reached 87% → 99%, MPJPE 71.1 → 66.8 mm).
//!
//! Joint limits are projected after every step (the model may have learned from postures a
//! skeleton's limits forbid). The Jacobian is analytic: a joint's rotation is
//! `m_j · exp(x_j)`, and `exp(x + δ) = exp(x) · exp(J_r(x) δ)` with `J_r` the right Jacobian of
//! SO(3), so column `c` of joint `j` turns about the model-space axis `R_j J_r(x_j) e_c`. With a
//! base joint other than the root, the root moves to keep the base where it was and the
//! Jacobian is taken by finite differences through that move.

mod model;

use std::sync::{Arc, OnceLock};

use glam::{DMat3, DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, fk};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

pub use model::{FORMAT, ModelError, ModelParts, PostureModel, VERSION};

use crate::iterative::dofs::rotation_vector;
use crate::{IkTask, SolveReport, SolveStatus, measure};

mod problem;
#[allow(clippy::wildcard_imports)]
use problem::*;
#[cfg(test)]
mod tests;

/// The name of the model shipped for the built-in humanoid.
pub const BUILTIN_HUMANOID: &str = "builtin:humanoid";

/// Which posture model to use: a name (`builtin:humanoid` or a file path) in task files, and the
/// model itself once the caller has loaded it (`ikarus_formats::posture` reads both; the solver
/// never touches files).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRef {
    name: String,
    model: Option<Arc<PostureModel>>,
}

impl Default for ModelRef {
    fn default() -> Self {
        Self::named(BUILTIN_HUMANOID)
    }
}

impl ModelRef {
    /// A reference by name, not loaded yet.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            model: None,
        }
    }

    /// A loaded model under `name`.
    pub fn loaded(name: &str, model: Arc<PostureModel>) -> Self {
        Self {
            name: name.to_owned(),
            model: Some(model),
        }
    }

    /// The name (`builtin:humanoid` or a path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model: the loaded one, or the built-in humanoid's for its name.
    pub fn model(&self) -> Option<&PostureModel> {
        match &self.model {
            Some(model) => Some(model),
            None if self.name == BUILTIN_HUMANOID => builtin_humanoid(),
            None => None,
        }
    }

    /// True when the name must be loaded by the caller (not built in, not loaded yet).
    pub fn needs_loading(&self) -> bool {
        self.model.is_none() && self.name != BUILTIN_HUMANOID
    }

    /// Attaches the loaded model.
    pub fn set_model(&mut self, model: Arc<PostureModel>) {
        self.model = Some(model);
    }
}

impl Serialize for ModelRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for ModelRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(Self::named(&name))
    }
}

/// The posture model shipped for the built-in humanoid (`data/humanoid_posture.json`, learned
/// from CMU motions; `data/README.md` gives the command that regenerates it).
pub fn builtin_humanoid() -> Option<&'static PostureModel> {
    static MODEL: OnceLock<Option<PostureModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            PostureModel::from_json(include_str!("../../data/humanoid_posture.json")).ok()
        })
        .as_ref()
}

/// Parameters of the example-based solver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExampleConfig {
    /// The posture model. Default `builtin:humanoid`.
    pub model: ModelRef,
    /// The goal noise `s` of the latent stage as a fraction of the model's length scale (its
    /// skeleton's rest height). Small values trust the goals over the prior (the latent pose
    /// reaches further, less naturally); large values keep it near the mean. Default 0.01.
    pub goal_noise: f64,
    /// Latent-stage iterations. Default 30.
    pub latent_iterations: u32,
    /// Run the refinement that meets the goals exactly. Default true.
    pub refine: bool,
    /// Refinement iterations. Default 60.
    pub refine_iterations: u32,
    /// When the refinement stops short of the goals (limits in the way), finish with
    /// Levenberg–Marquardt from its pose — the regular solver, started at the learned posture —
    /// and, still short, with damped least squares from the start pose; keep whichever is
    /// closest. Default true.
    pub finish_with_lm: bool,
    /// Also move the root (the skeleton root above the modelled joints): its translation and
    /// rotation relative to the start join the unknowns of both stages, with Gaussian priors of
    /// `root_translation_noise` (fraction of the model's length scale) and
    /// `root_rotation_noise` (radians), so goals far from the body move the body. Default false
    /// (the root stays, as with every solver without a base). Not together with a base joint.
    pub move_root: bool,
    /// Standard deviation of the root's translation, fraction of the length scale. Default 0.1.
    pub root_translation_noise: f64,
    /// Standard deviation of the root's rotation, radians. Default 0.3.
    pub root_rotation_noise: f64,
    /// How near the goals a start pose must be to be trusted (see the module docs): the root
    /// mean square over the effectors of the weighted distance from where the start has each
    /// effector to its goal, as a fraction of the model's length scale. Default 0.15 (25.5 cm
    /// for a 1.7 m figure): a per-frame solve's last frame is within it, a T-pose or the mean
    /// usually not. Larger trusts farther starts (the result stays nearer the start); 0 never
    /// trusts the start (every solve from the model's most likely posture for the goals).
    pub start_radius: f64,
    /// The spread `τ` of a trusted start's latent point, in the model's latent units (one is
    /// the spread of the whole training set). Default 0.3. Smaller keeps the pose nearer the
    /// start (a plain minimal change in the model's metric); larger lets the model's prior
    /// pull it further.
    pub start_spread: f64,
    /// The weight of the model's posture prior (`‖z‖²`, towards its mean) in the latent stage
    /// from a trusted start; afresh it is 1. Default 0: the start stands for the prior (a
    /// performer the model did not learn is not pulled towards the learned mean).
    pub start_prior: f64,
    /// From a trusted start, the refinement's metric is `C + β I` with β this fraction of the
    /// model's mean variance per coordinate, so the step may also leave the model's directions
    /// (as a plain solver's does) where the start is a posture the model does not hold.
    /// Default 0.3; 0 keeps the model's metric alone.
    pub start_isotropy: f64,
    /// With a model that has a motion part ([`PostureModel::with_motion`]), a trusted start's
    /// latent point moves with the examples' own frame-to-frame covariance scaled by this
    /// spread squared (in place of [`start_spread`](Self::start_spread)). Default 0.6 (less
    /// than the examples' own change between frames 1/15 s apart).
    pub motion_spread: f64,
}

impl Default for ExampleConfig {
    fn default() -> Self {
        Self {
            model: ModelRef::default(),
            goal_noise: 0.01,
            latent_iterations: 30,
            refine: true,
            refine_iterations: 60,
            finish_with_lm: true,
            move_root: false,
            root_translation_noise: 0.1,
            root_rotation_noise: 0.3,
            start_radius: 0.15,
            start_spread: 0.3,
            start_prior: 0.0,
            start_isotropy: 0.3,
            motion_spread: 0.6,
        }
    }
}

/// Radians of orientation error weighed like this fraction of the model's length scale.
const ROTATION_LENGTH: f64 = 0.1;

/// Most iterations either stage may be given.
pub const MAX_ITERATIONS: u32 = 100_000;

/// Largest change of one joint's rotation vector per refinement step, radians.
const MAX_JOINT_STEP: f64 = 0.5;

/// Runs the example-based solver on `pose` (the start pose on entry, the best pose found on
/// exit). Invalid input — a model not loaded or not fitting the skeleton, a base other than the
/// root — is reported as [`SolveStatus::InvalidInput`] with the pose untouched.
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &ExampleConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    let Some(model) = config.model.model() else {
        return SolveReport::invalid(format!(
            "posture model {:?} is not loaded (load it with ikarus_formats::posture)",
            config.model.name()
        ));
    };
    let joints = match model.bind(skeleton) {
        Ok(joints) => joints,
        Err(message) => return SolveReport::invalid(message),
    };
    if !(config.goal_noise.is_finite() && config.goal_noise > 0.0) {
        return SolveReport::invalid("goal_noise must be finite and positive");
    }
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(config.start_radius.is_finite() && config.start_radius >= 0.0) {
        return SolveReport::invalid("start_radius must be finite and at least 0");
    }
    if !(positive(config.start_spread) && positive(config.motion_spread)) {
        return SolveReport::invalid("start_spread and motion_spread must be finite and positive");
    }
    let unit = |v: f64| v.is_finite() && v >= 0.0;
    if !(unit(config.start_prior) && unit(config.start_isotropy)) {
        return SolveReport::invalid(
            "start_prior and start_isotropy must be finite and at least 0",
        );
    }
    if !(positive(config.root_translation_noise) && positive(config.root_rotation_noise)) {
        return SolveReport::invalid(
            "root_translation_noise and root_rotation_noise must be finite and positive",
        );
    }
    if config.move_root && task.base.is_some_and(|b| skeleton.parent(b).is_some()) {
        return SolveReport::invalid(
            "move_root and a base joint both move the root: give one of them",
        );
    }
    if config.latent_iterations.max(config.refine_iterations) > MAX_ITERATIONS {
        return SolveReport::invalid(format!(
            "latent_iterations and refine_iterations must be at most {MAX_ITERATIONS}"
        ));
    }
    let start_pose = pose.clone();
    let mut problem = Problem::new(skeleton, task, model, joints, config, pose);
    let (mut iterations, mut limits_active) = problem.run(pose);
    problem.cost(pose);
    if config.refine && config.finish_with_lm && !problem.reached(task.tolerance) {
        let lm = crate::iterative::lm::LmConfig {
            max_tries: 1,
            ..crate::iterative::lm::LmConfig::default()
        };
        // From the kept pose, then (still short) from the candidate it was chosen over.
        let other = problem.other.take();
        for from in std::iter::once(pose.clone()).chain(other) {
            let mut finished = from;
            let report = crate::iterative::lm::solve(skeleton, task, &lm, &mut finished);
            iterations += report.iterations;
            if report.position_error.is_finite() && problem.cost(&finished) < problem.cost(pose) {
                pose.clone_from(&finished);
                limits_active = report.limits_active;
            }
            problem.cost(pose);
            if problem.reached(task.tolerance) {
                break;
            }
        }
        // Still short (a posture the model does not hold, limits in the way): damped least
        // squares from the start pose, the plain solver's answer, as the last candidate.
        if !problem.reached(task.tolerance) {
            let mut finished = start_pose;
            let report = crate::iterative::jacobian::solve(
                skeleton,
                task,
                &crate::iterative::jacobian::JacobianConfig::default(),
                &mut finished,
            );
            iterations += report.iterations;
            if report.position_error.is_finite() && problem.cost(&finished) < problem.cost(pose) {
                pose.clone_from(&finished);
                limits_active = report.limits_active;
            }
            problem.cost(pose);
        }
    }
    let (position_error, rotation_error) = measure(skeleton, task, pose);
    let mut report = SolveReport::from_residuals(
        task,
        position_error,
        rotation_error,
        iterations,
        limits_active,
    );
    report.active_limits = problem.active_limit_names();
    if !position_error.is_finite() {
        report.status = SolveStatus::MaxIterations;
    }
    report
}
