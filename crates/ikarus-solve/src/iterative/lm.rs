//! Levenberg–Marquardt: nonlinear least squares on the goals' residual (the nonlinear
//! optimisation of seed 004, IK overview), with hinge ranges as boxes, the analytic
//! Jacobian of [`dofs`](crate::iterative::dofs) and random restarts, the way TRAC-IK solves
//! robot arms.
//!
//! One sweep is one accepted step. With the weighted residual `e` and Jacobian `J` of the
//! current pose, the step `h` solves `(JᵀJ + λ·D) h = Jᵀe` with `D` the diagonal of `JᵀJ`
//! (Marquardt's scaling, floored so that a column with no effect still gets damping). The
//! step is tried; if it lowers `½|e|²` it is kept and `λ` shrinks by Nielsen's rule
//! (`λ·max(1/3, 1 − (2ρ − 1)³)`, `ρ` the ratio of actual to predicted decrease), otherwise it
//! is undone and `λ` grows (×2, ×4, ×8, ...) until a step is accepted or
//! [`LmConfig::max_tries`] is spent.
//!
//! **Boxes.** Hinge columns never leave their ranges: a hinge already on a bound whose step
//! points outward is held fixed and the system is solved again without it (an active set);
//! any other step across a bound stops at the bound. Ball-like joints move by their
//! rotation-vector columns and the driver projects them onto their limits; where a goal needs
//! such a joint on its limit this is a projected step and converges linearly, not
//! quadratically (the humanoid's spine and shoulders: a few hundred sweeps for 1e-6).
//!
//! **Restarts.** When a start stalls (a local minimum, or a limit holding the chain away from
//! the goal) the shared driver restarts from the best pose with random joint rotations
//! ([`IterationSettings::restarts`], [`IterationSettings::stall_window`]), and with
//! [`IterationSettings::time_budget_us`] it keeps restarting until solved or out of time; the
//! report's `restarts` says how many were used. The returned pose is the best over all starts.
//!
//! The linear algebra is [nalgebra](https://nalgebra.org)'s Cholesky factorisation: on stack
//! matrices for up to 8 columns, on buffers kept in [`LmWorkspace`] beyond; a warm solve
//! allocates nothing.

use glam::DQuat;
use ikarus_core::{LocalPose, Skeleton};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};
use serde::{Deserialize, Serialize};

use crate::iterative::dofs::{DofKind, Dofs};
use crate::iterative::driver::{Iteration, IterationSettings, IterativeStep, Workspace};
use crate::iterative::path::Side;
use crate::{IkTask, ParameterError, SolveReport};

/// Levenberg–Marquardt parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LmConfig {
    /// Initial damping `λ` relative to the diagonal of `JᵀJ`. Small values start with nearly
    /// Gauss–Newton steps (fast near a solution), large ones with short gradient steps (safe
    /// far from one). Default 1e-2.
    pub lambda: f64,
    /// Most damping increases tried within one sweep before giving up on it (the driver then
    /// sees no motion and restarts). Default 12.
    pub max_tries: u32,
    /// The shared loop's parameters. Default: 500 sweeps, 40 restarts after a stall window of
    /// 3 sweeps (Levenberg–Marquardt either converges fast or sits in a local minimum: a short
    /// window restarts early; on the TRAC-IK protocol it halves the p99 against 8 sweeps). Goals that need ball-like joints on their limits converge linearly (see the
    /// module docs) and may use most of the sweeps. In task files, fields left out of
    /// `"iteration"` keep these defaults.
    #[serde(deserialize_with = "lm_iteration")]
    pub iteration: IterationSettings,
}

/// `"iteration"` on top of Levenberg–Marquardt's own defaults (not the generic ones).
fn lm_iteration<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<IterationSettings, D::Error> {
    IterationSettings::deserialize_onto(deserializer, LmConfig::default().iteration)
}

impl Default for LmConfig {
    fn default() -> Self {
        Self {
            lambda: 1e-2,
            max_tries: 12,
            iteration: IterationSettings {
                max_iterations: 500,
                restarts: 40,
                stall_window: 3,
                ..IterationSettings::default()
            },
        }
    }
}

impl LmConfig {
    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`ParameterError`] naming the bad parameter.
    pub fn validate(&self) -> Result<(), ParameterError> {
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(ParameterError::OutOfRange {
                name: "lambda",
                value: self.lambda,
                range: "positive and finite",
            });
        }
        if self.max_tries == 0 {
            return Err(ParameterError::Zero { name: "max_tries" });
        }
        self.iteration.validate()
    }
}

/// Reusable buffers for [`solve_with`].
#[derive(Clone, Debug, Default)]
pub struct LmWorkspace {
    driver: Workspace,
    buffers: Buffers,
}

/// The step's own buffers.
#[derive(Clone, Debug, Default)]
struct Buffers {
    dofs: Dofs,
    /// Jacobian, row-major `rows × columns`.
    j: Vec<f64>,
    /// Residual of the current pose and of a trial pose.
    e: Vec<f64>,
    trial: Vec<f64>,
    /// Normal matrix `JᵀJ`, the damped system, and right-hand side / step.
    normal: DMatrix<f64>,
    system: DMatrix<f64>,
    gradient: DVector<f64>,
    step: DVector<f64>,
    /// Columns held on their bound for this step.
    fixed: Vec<bool>,
    saved: Vec<DQuat>,
    /// Hinge values at the start of the sweep (the all-hinge fast path).
    values: Vec<f64>,
    /// The outward step a held column asked for.
    pushed: Vec<f64>,
}

impl LmWorkspace {
    /// An empty workspace; it sizes itself on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Solves `task` by Levenberg–Marquardt, allocating a workspace. `pose` is the start pose on
/// entry and the best pose found on exit.
pub fn solve(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &LmConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    solve_with(skeleton, task, config, &mut LmWorkspace::new(), pose)
}

/// Solves `task` by Levenberg–Marquardt with reusable buffers (no allocation once warm).
pub fn solve_with(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &LmConfig,
    workspace: &mut LmWorkspace,
    pose: &mut LocalPose,
) -> SolveReport {
    if let Err(reason) = config.validate() {
        return SolveReport::invalid(reason);
    }
    let mut lm = LmStep {
        config,
        b: &mut workspace.buffers,
        hinges_only: false,
        lambda: config.lambda,
        nu: 2.0,
    };
    workspace
        .driver
        .run(skeleton, task, &config.iteration, pose, &mut lm)
}

struct LmStep<'a> {
    config: &'a LmConfig,
    b: &'a mut Buffers,
    /// Every column is a hinge: trial steps set all angles, then run one forward kinematics.
    hinges_only: bool,
    lambda: f64,
    nu: f64,
}

/// Solves `system · x = rhs` in place by nalgebra's Cholesky factorisation on a stack matrix
/// of size `N` (robot arms: 6 or 7 columns), several times faster than the heap-sized one.
fn solve_fixed<const N: usize>(system: &DMatrix<f64>, rhs: &mut DVector<f64>) -> bool {
    let matrix = SMatrix::<f64, N, N>::from_column_slice(system.as_slice());
    let Some(factor) = matrix.cholesky() else {
        return false;
    };
    let mut x = SVector::<f64, N>::from_column_slice(rhs.as_slice());
    factor.solve_mut(&mut x);
    rhs.as_mut_slice().copy_from_slice(x.as_slice());
    true
}

fn cost(e: &[f64]) -> f64 {
    0.5 * e.iter().map(|x| x * x).sum::<f64>()
}

impl LmStep<'_> {
    /// `normal = JᵀJ`, `gradient = Jᵀe` from the current pose.
    fn linearise(&mut self, ctx: &Iteration<'_>) {
        let (rows, n) = (self.b.dofs.rows(), self.b.dofs.columns());
        self.b.dofs.residual(ctx, &mut self.b.e);
        self.b.dofs.jacobian(ctx, &mut self.b.j);
        // J is row-major: row r is `j[r·n..(r+1)·n]`. JᵀJ and Jᵀe as sums of rank-one
        // updates over the rows, into nalgebra's column-major storage.
        let normal = self.b.normal.as_mut_slice();
        normal.fill(0.0);
        let gradient = self.b.gradient.as_mut_slice();
        gradient.fill(0.0);
        for (row, &e) in self.b.j[..rows * n].chunks_exact(n).zip(self.b.e.iter()) {
            for (b, &jb) in row.iter().enumerate() {
                gradient[b] += jb * e;
                let column = &mut normal[b * n..(b + 1) * n];
                for (slot, &ja) in column.iter_mut().zip(row) {
                    *slot += ja * jb;
                }
            }
        }
    }

    /// Solves the damped system for `step`, holding `fixed` columns at zero. False when the
    /// factorisation fails (not positive definite: only with non-finite input).
    fn solve_damped(&mut self) -> bool {
        let n = self.b.dofs.columns();
        let floor = 1e-9 * (0..n).map(|a| self.b.normal[(a, a)]).fold(1e-12, f64::max);
        self.b.system.copy_from(&self.b.normal);
        self.b.step.copy_from(&self.b.gradient);
        for a in 0..n {
            let d = self.b.normal[(a, a)].max(floor);
            self.b.system[(a, a)] += self.lambda * d;
        }
        for a in (0..n).filter(|&a| self.b.fixed[a]) {
            for b in 0..n {
                self.b.system[(a, b)] = 0.0;
                self.b.system[(b, a)] = 0.0;
            }
            self.b.system[(a, a)] = 1.0;
            self.b.step[a] = 0.0;
        }
        let solved = match n {
            1 => solve_fixed::<1>(&self.b.system, &mut self.b.step),
            2 => solve_fixed::<2>(&self.b.system, &mut self.b.step),
            3 => solve_fixed::<3>(&self.b.system, &mut self.b.step),
            4 => solve_fixed::<4>(&self.b.system, &mut self.b.step),
            5 => solve_fixed::<5>(&self.b.system, &mut self.b.step),
            6 => solve_fixed::<6>(&self.b.system, &mut self.b.step),
            7 => solve_fixed::<7>(&self.b.system, &mut self.b.step),
            8 => solve_fixed::<8>(&self.b.system, &mut self.b.step),
            _ => {
                let matrix = std::mem::replace(&mut self.b.system, DMatrix::zeros(0, 0));
                if let Some(factor) = nalgebra::linalg::Cholesky::new(matrix) {
                    factor.solve_mut(&mut self.b.step);
                    self.b.system = factor.unpack();
                    true
                } else {
                    self.b.system = DMatrix::zeros(n, n);
                    false
                }
            }
        };
        solved && self.b.step.iter().all(|x| x.is_finite())
    }

    /// Holds hinge columns that sit on a bound and whose step points outward; true when any
    /// new column was held (the system must be solved again).
    fn hold_outward(&mut self, ctx: &Iteration<'_>) -> bool {
        let mut changed = false;
        for c in 0..self.b.dofs.columns() {
            if self.b.fixed[c] || !matches!(self.b.dofs.dofs()[c].kind, DofKind::Hinge(_)) {
                continue;
            }
            let (Some(value), Some((low, high))) =
                (self.b.dofs.hinge_value(ctx, c), self.b.dofs.hinge_bounds(c))
            else {
                continue;
            };
            let s = self.b.step[c];
            if (s > 0.0 && value >= high - 1e-12) || (s < 0.0 && value <= low + 1e-12) {
                self.b.fixed[c] = true;
                self.b.pushed[c] = s;
                changed = true;
            }
        }
        changed
    }

    /// Remembers the pose at the start of the sweep.
    fn save(&mut self, ctx: &Iteration<'_>) {
        if self.hinges_only {
            for c in 0..self.b.dofs.columns() {
                self.b.values[c] = self.b.dofs.hinge_value(ctx, c).unwrap_or(0.0);
            }
        } else {
            Dofs::save(ctx, &mut self.b.saved);
        }
    }

    /// Sets every hinge column to `value(c)` and runs forward kinematics once.
    fn set_hinges(&self, ctx: &mut Iteration<'_>, value: impl Fn(usize) -> f64) {
        for (c, dof) in self.b.dofs.dofs().iter().enumerate() {
            if let DofKind::Hinge(hinge) = dof.kind {
                let sign = match dof.joint.side {
                    Side::Effector => 1.0,
                    Side::Base => -1.0,
                };
                ctx.set_hinge_angle_deferred(dof.joint, &hinge, sign * value(c));
            }
        }
        ctx.update_model();
    }

    /// Takes the trial step from the saved pose; no hinge step exceeds
    /// [`IterationSettings::max_step_angle`] (the whole step shrinks to fit).
    fn apply(&mut self, ctx: &mut Iteration<'_>) {
        let largest = self.b.step.amax();
        let limit = self.config.iteration.max_step_angle;
        if largest > limit {
            self.b.step *= limit / largest;
        }
        if self.hinges_only {
            // A held column asks for its outward push again: the hinge clamps it to the same
            // stop and the driver records the limit as active.
            let (values, step, fixed, pushed) =
                (&self.b.values, &self.b.step, &self.b.fixed, &self.b.pushed);
            self.set_hinges(ctx, |c| {
                values[c] + if fixed[c] { pushed[c] } else { step[c] }
            });
        } else {
            self.b.dofs.apply(ctx, self.b.step.as_slice());
            ctx.update_model();
        }
    }

    /// Puts the saved pose back.
    fn restore(&mut self, ctx: &mut Iteration<'_>) {
        if self.hinges_only {
            let values = &self.b.values;
            self.set_hinges(ctx, |c| values[c]);
        } else {
            Dofs::restore(ctx, &self.b.saved);
        }
    }

    /// Predicted decrease of `½|e|²` for the current step: `½ hᵀ(λ D h + g)`.
    fn predicted(&self) -> f64 {
        let n = self.b.dofs.columns();
        let floor = 1e-9 * (0..n).map(|a| self.b.normal[(a, a)]).fold(1e-12, f64::max);
        0.5 * (0..n)
            .map(|a| {
                let h = self.b.step[a];
                h * (self.lambda * self.b.normal[(a, a)].max(floor) * h + self.b.gradient[a])
            })
            .sum::<f64>()
    }
}

impl IterativeStep for LmStep<'_> {
    fn prepare(&mut self, ctx: &mut Iteration<'_>) {
        self.b.dofs.rebuild(ctx.skeleton(), ctx.task(), ctx.path());
        let (rows, n) = (self.b.dofs.rows(), self.b.dofs.columns());
        self.b.j.resize(rows * n, 0.0);
        self.b.e.resize(rows, 0.0);
        self.b.trial.resize(rows, 0.0);
        if self.b.normal.shape() != (n, n) {
            self.b.normal = DMatrix::zeros(n, n);
            self.b.system = DMatrix::zeros(n, n);
            self.b.gradient = DVector::zeros(n);
            self.b.step = DVector::zeros(n);
        }
        self.b.fixed.resize(n, false);
        self.b.saved.resize(ctx.path().len(), DQuat::IDENTITY);
        self.b.values.resize(n, 0.0);
        self.b.pushed.resize(n, 0.0);
        self.hinges_only = self
            .b
            .dofs
            .dofs()
            .iter()
            .all(|d| matches!(d.kind, DofKind::Hinge(_)));
        self.lambda = self.config.lambda;
        self.nu = 2.0;
    }

    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        let n = self.b.dofs.columns();
        if n == 0 {
            return;
        }
        self.linearise(ctx);
        let before = cost(&self.b.e);
        if before == 0.0 {
            return;
        }
        self.save(ctx);
        for _ in 0..self.config.max_tries {
            self.b.fixed.fill(false);
            if !self.solve_damped() {
                return;
            }
            if self.hold_outward(ctx) && !self.solve_damped() {
                return;
            }
            if self.b.step.iter().all(|&h| h == 0.0) {
                // Every free direction is held on a stop: nothing can improve this start.
                break;
            }
            self.apply(ctx);
            let predicted = self.predicted();
            self.b.dofs.residual(ctx, &mut self.b.trial);
            let after = cost(&self.b.trial);
            if after < before {
                let rho = if predicted > 0.0 {
                    (before - after) / predicted
                } else {
                    1.0
                };
                self.lambda *= (1.0 - (2.0 * rho - 1.0).powi(3)).max(1.0 / 3.0);
                self.lambda = self.lambda.max(1e-12);
                self.nu = 2.0;
                return;
            }
            self.restore(ctx);
            self.lambda = (self.lambda * self.nu).min(1e12);
            self.nu *= 2.0;
        }
        // No step lowered the cost: a (local) minimum for this start. Tell the driver nothing
        // moved (it restarts) and reset the damping for the new start.
        ctx.settle();
        self.lambda = self.config.lambda;
        self.nu = 2.0;
    }
}
