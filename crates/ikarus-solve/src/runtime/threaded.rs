//! Many targets for one serial chain, in parallel: the engine of `ikarus batch` and of the
//! TRAC-IK protocol benchmark.
//!
//! Targets are tip frames in the chain's base frame (`base_from_tip`, as robot IK is posed);
//! seeds and solutions are joint vectors `q` ([`JointChain`]). Every solve starts from the
//! skeleton's rest pose with the seed written in, runs the configured solver through
//! [`solve_with`](crate::solve_with) (one workspace per thread) and reads `q` back from the
//! returned pose — except Levenberg–Marquardt on a chain of 1 to 8 hinges (and `blend` 1),
//! which runs on `q` itself ([`robot::lm`](crate::robot::lm): the same method, parameters and
//! restarts without the pose bookkeeping). Either way the reported errors are forward
//! kinematics of the returned `q`. Results keep the input order whatever the number of
//! threads.

#![allow(clippy::disallowed_methods)] // threads and timing, behind the `threads` feature

use std::time::Instant;

use glam::{DQuat, DVec3};
use ikarus_core::chain::JointChain;
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use serde::{Deserialize, Serialize};

use crate::robot::lm::{self, ChainGoal};
use crate::robot::{AutoConfig, ClosedForm, Screws};
use crate::{Effector, Goal, IkTask, SolveStatus, SolverConfig, SolverWorkspace, Tolerance};

/// One target: where the tip should be, in the base's frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchTarget {
    /// Tip position in the base frame, metres.
    pub position: [f64; 3],
    /// Tip orientation in the base frame, `[x, y, z, w]`; position only when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<[f64; 4]>,
    /// Start joint vector; the middle of the limits when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<Vec<f64>>,
}

/// The outcome of one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchResult {
    /// The joint vector found (the seed, unchanged, for invalid input).
    pub q: Vec<f64>,
    /// How the solve ended.
    pub status: SolveStatus,
    /// Tip position error by forward kinematics, metres (`null` for invalid input).
    pub position_error: f64,
    /// Tip orientation error by forward kinematics, radians (0 without an orientation goal).
    pub rotation_error: f64,
    /// Iterations over all restarts.
    pub iterations: u32,
    /// Random restarts used.
    pub restarts: u32,
    /// True when `q` is within the chain's limits (to 1e-9).
    pub within_limits: bool,
    /// Wall time of the solve alone (no setup), nanoseconds.
    pub time_ns: u64,
    /// Why the target was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The solver that ran: the configured kind, or for `auto` the closed form's name
    /// (`srs_arm`, `leg`, `spherical_wrist_arm`) or `lm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<String>,
}

/// Solves every target with `config` on `threads` threads (at least 1) and returns the results
/// in input order. `tolerance` decides convergence (TRAC-IK's protocol uses 1e-5 m and 1e-5 rad).
pub fn solve_threaded(
    skeleton: &Skeleton,
    chain: &JointChain,
    targets: &[BatchTarget],
    config: &SolverConfig,
    tolerance: Tolerance,
    threads: usize,
) -> Vec<BatchResult> {
    let threads = threads.clamp(1, targets.len().max(1));
    if threads == 1 {
        let mut runner = Runner::new(skeleton, chain);
        return targets
            .iter()
            .map(|t| runner.solve(t, config, tolerance))
            .collect();
    }
    let chunk = targets.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = targets
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut runner = Runner::new(skeleton, chain);
                    part.iter()
                        .map(|t| runner.solve(t, config, tolerance))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a batch thread panicked"))
            .collect()
    })
}

/// One thread's buffers.
struct Runner<'a> {
    skeleton: &'a Skeleton,
    chain: &'a JointChain,
    rest: LocalPose,
    model: ModelPose,
    task: IkTask,
    workspace: SolverWorkspace,
    /// For `auto`: the chain's closed form, detected on first use (`None` before, `Some(None)`
    /// when the chain has none).
    #[allow(clippy::option_option)] // "not yet detected" differs from "detected: none"
    auto: Option<Option<ClosedForm>>,
    /// For Levenberg–Marquardt: the chain as screws when every joint turns and there are at
    /// most [`lm::MAX_JOINTS`] (read on first use, as `auto`).
    #[allow(clippy::option_option)]
    screws: Option<Option<Screws>>,
}

impl<'a> Runner<'a> {
    fn new(skeleton: &'a Skeleton, chain: &'a JointChain) -> Self {
        let base = chain.base();
        let task = IkTask {
            effectors: vec![Effector {
                joint: chain.tip(),
                goal: Goal::default(),
                weight: 1.0,
            }],
            base: skeleton.parent(base).map(|_| base),
            tolerance: Tolerance::default(),
        };
        Self {
            skeleton,
            chain,
            rest: skeleton.rest_pose(),
            model: ModelPose::new(skeleton),
            task,
            workspace: SolverWorkspace::new(),
            auto: None,
            screws: None,
        }
    }

    fn solve(
        &mut self,
        target: &BatchTarget,
        config: &SolverConfig,
        tolerance: Tolerance,
    ) -> BatchResult {
        let (skeleton, chain) = (self.skeleton, self.chain);
        let seed = target.seed.clone().unwrap_or_else(|| chain.middle());
        let mut pose = self.rest.clone();
        let invalid = |q: Vec<f64>, message: String| BatchResult {
            q,
            status: SolveStatus::InvalidInput,
            position_error: f64::INFINITY,
            rotation_error: f64::INFINITY,
            iterations: 0,
            restarts: 0,
            within_limits: false,
            time_ns: 0,
            message: Some(message),
            solver: None,
        };
        if let Err(message) = chain.set_q(skeleton, &seed, &mut pose) {
            return invalid(seed, format!("seed: {message}"));
        }
        fk::forward_kinematics(skeleton, &pose, &mut self.model);
        let base = self.model[chain.base()];
        let (_, base_rotation, _) = base.to_scale_rotation_translation();
        let orientation = match target.orientation.map(DQuat::from_array) {
            Some(o) if o.is_finite() && (o.length() - 1.0).abs() < 1e-6 => {
                Some(base_rotation * o.normalize())
            }
            Some(_) => return invalid(seed, "orientation is not a unit quaternion".into()),
            None => None,
        };
        self.task.effectors[0].goal = Goal {
            position: Some(base.transform_point3(DVec3::from_array(target.position))),
            orientation,
        };
        self.task.tolerance = tolerance;
        let fallback;
        let mut config = config;
        if let SolverConfig::Auto(auto) = config {
            let form = self
                .auto
                .take()
                .unwrap_or_else(|| ClosedForm::detect(skeleton, chain).ok());
            let result = match (&form, target.orientation) {
                (Some(form), Some(o)) => {
                    Some(self.closed_form(form, auto, target, o, &seed, tolerance))
                }
                _ => None,
            };
            self.auto = Some(form);
            if let Some(result) = result {
                return result;
            }
            fallback = SolverConfig::Lm(auto.fallback);
            config = &fallback;
        }
        if let SolverConfig::Lm(lm_config) = config
            && lm_config.iteration.blend >= 1.0
        {
            let screws = self.screws.take().unwrap_or_else(|| {
                Screws::from_chain(skeleton, chain)
                    .ok()
                    .filter(|s| s.joints.len() <= lm::MAX_JOINTS)
            });
            let result = screws
                .as_ref()
                .and_then(|s| self.chain_lm(s, lm_config, target, &seed, tolerance));
            self.screws = Some(screws);
            if let Some(result) = result {
                return result;
            }
        }
        let start = Instant::now();
        let report =
            crate::solve_with(skeleton, &self.task, config, &mut self.workspace, &mut pose);
        let time_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        if report.status == SolveStatus::InvalidInput {
            return invalid(seed, report.message.unwrap_or_default());
        }
        let mut q = vec![0.0; chain.dof()];
        chain.q_from_pose(skeleton, &pose, &mut q);
        BatchResult {
            within_limits: chain.within_limits(&q, 1e-9),
            q,
            status: report.status,
            position_error: report.position_error,
            rotation_error: report.rotation_error,
            iterations: report.iterations,
            restarts: report.restarts,
            time_ns,
            message: None,
            solver: Some(report.ran.unwrap_or_else(|| config.kind().into())),
        }
    }

    /// `auto` on a chain with a closed form: `q` straight from the closed form, the residuals
    /// by forward kinematics of `q`.
    fn closed_form(
        &mut self,
        form: &ClosedForm,
        auto: &AutoConfig,
        target: &BatchTarget,
        orientation: [f64; 4],
        seed: &[f64],
        tolerance: Tolerance,
    ) -> BatchResult {
        let chain = self.chain;
        let position = DVec3::from_array(target.position);
        let rotation = DQuat::from_array(orientation);
        let mut q = vec![0.0; chain.dof()];
        let start = Instant::now();
        let outcome = form.solve(position, rotation, seed, auto.swivel, &mut q);
        let time_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let (position_error, rotation_error) = self.measure(&q, position, Some(rotation));
        let within_limits = chain.within_limits(&q, 1e-9);
        let converged = within_limits
            && position_error <= tolerance.position
            && rotation_error <= tolerance.rotation;
        BatchResult {
            q,
            status: if converged {
                SolveStatus::Converged
            } else {
                SolveStatus::Unreachable
            },
            position_error,
            rotation_error,
            iterations: 1,
            restarts: 0,
            within_limits,
            time_ns,
            message: (!outcome.reached && converged)
                .then(|| "the closed form flagged the target; FK says it is reached".into()),
            solver: Some(form.name().into()),
        }
    }

    /// Levenberg–Marquardt on `q` itself ([`lm::solve`]), the residuals by forward kinematics
    /// of the returned `q`; `None` when the solver declines the input. A target not met is
    /// `unreachable` when the solver proves its position out of reach, else `max_iterations`.
    fn chain_lm(
        &mut self,
        screws: &Screws,
        config: &crate::iterative::lm::LmConfig,
        target: &BatchTarget,
        seed: &[f64],
        tolerance: Tolerance,
    ) -> Option<BatchResult> {
        let orientation = target.orientation.map(|o| DQuat::from_array(o).normalize());
        let goal = ChainGoal {
            position: DVec3::from_array(target.position),
            orientation,
        };
        let mut q = seed.to_vec();
        let start = Instant::now();
        let outcome = lm::solve(screws, &goal, config, tolerance, &mut q).ok()?;
        let time_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let (position_error, rotation_error) = self.measure(&q, goal.position, orientation);
        let within_limits = self.chain.within_limits(&q, 1e-9);
        let converged = within_limits
            && position_error <= tolerance.position
            && rotation_error <= tolerance.rotation;
        Some(BatchResult {
            q,
            status: if converged {
                SolveStatus::Converged
            } else if outcome.out_of_reach {
                SolveStatus::Unreachable
            } else {
                SolveStatus::MaxIterations
            },
            position_error,
            rotation_error,
            iterations: outcome.iterations,
            restarts: outcome.restarts,
            within_limits,
            time_ns,
            message: None,
            solver: Some("lm".into()),
        })
    }

    /// Position and rotation errors of the tip at `q` against a base-frame target, by the
    /// skeleton's forward kinematics (infinite when `q` does not fit the chain); the rotation
    /// error is 0 without an orientation.
    fn measure(&mut self, q: &[f64], position: DVec3, rotation: Option<DQuat>) -> (f64, f64) {
        let (skeleton, chain) = (self.skeleton, self.chain);
        let mut pose = self.rest.clone();
        if chain.set_q(skeleton, q, &mut pose).is_err() {
            return (f64::INFINITY, f64::INFINITY);
        }
        fk::forward_kinematics(skeleton, &pose, &mut self.model);
        let (_, r, t) = chain
            .tip_in_base(&self.model)
            .to_scale_rotation_translation();
        let rotation_error = rotation.map_or(0.0, |rotation| {
            let d = r.normalize() * rotation.normalize().conjugate();
            2.0 * d.xyz().length().atan2(d.w.abs())
        });
        ((t - position).length(), rotation_error)
    }
}
