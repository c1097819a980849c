//! The Jacobian family (seed 004, IK overview; Buss, *Introduction to Inverse Kinematics with
//! Jacobian Transpose, Pseudoinverse and Damped Least Squares methods*, 2004; Buss & Kim,
//! *Selectively Damped Least Squares for Inverse Kinematics*, 2005): every sweep linearises the
//! goals at the current pose, `J Δq ≈ e` ([`Dofs`]: rows per position/orientation goal, weighted
//! per effector; columns per joint degree of freedom), and turns the joints by one step:
//!
//! - **transpose**: `Δq = α Jᵀ e` with Buss's step length `α = ⟨e, JJᵀe⟩ / ⟨JJᵀe, JJᵀe⟩`.
//!   Cheap, never singular, slow to finish (many sweeps near the goal).
//! - **pinv**: `Δq = J⁺ e` by SVD ([`RowSvd`]), singular values below 1e-8 of the largest
//!   dropped. Quadratic-like convergence away from singularities, large steps near them (the
//!   step clamp [`JacobianConfig::max_step`] keeps them bounded).
//! - **dls**: damped least squares `Δq = Jᵀ(JJᵀ + λ²I)⁻¹e = Σ σ/(σ²+λ²) u vᵀ e` (by Cholesky
//!   of `JJᵀ + λ²I` with constant damping, by the SVD when adaptive). Stable
//!   through singularities at the price of slower convergence where `σ ≈ λ`; with
//!   [`JacobianConfig::singular_region`] `ε > 0` the damping is adaptive,
//!   `λ² = damping² (1 − (σ_min/ε)²)` inside `σ_min < ε` and 0 outside (Chiaverini 1997), so
//!   it behaves like the pseudo-inverse away from singularities.
//! - **sdls**: selectively damped least squares (Buss & Kim): each singular direction's step
//!   is clamped to `γ_i = min(1, N_i/M_i) γ_max` where `N_i` is the size of the goal-space
//!   direction and `M_i` the goal motion its joint step would cause; no damping constant.
//!
//! Common to all methods:
//! - **weighted pseudo-inverse** (seed 004, IK overview): per-joint weights `W` by joint name,
//!   `J_W⁺ = W⁻¹Jᵀ(JW⁻¹Jᵀ)⁻¹`, computed as `W^{-1/2} (J W^{-1/2})⁺`; a weight above 1 makes a
//!   joint move less, below 1 more. Every method runs on `J W^{-1/2}`.
//! - **null-space objective**: `Δq = J⁺e + (I − J⁺J) Δq'` where `Δq' = gain · d` pulls toward
//!   the rest pose, toward the middle of hinge ranges, or along a user-given per-joint motion
//!   ([`NullSpaceConfig`]). It does not change the goals to first order. A sweep applies the
//!   null-space motion first and then the primary step from the pose it left (two Jacobians
//!   per sweep), so the second-order drift of the secondary motion is corrected within the
//!   sweep instead of holding the residual above the tolerance.
//! - **joints on their limit**: a hinge resting on a bound whose step pushes outward loses its
//!   column, and any other limited joint that cannot turn even 1e-6 rad in its step's
//!   direction loses that direction (its three columns are projected onto the directions
//!   left); the step is then solved again (at most twice), so the other joints take over
//!   instead of the step being lost in the projection onto the limit.
//! - the whole step is scaled so no entry exceeds [`JacobianConfig::max_step`] (Buss & Kim's
//!   `ClampMaxAbs`), then applied through the driver (limits, base joint, best pose, report).
//!
//! Limits, the loop, restarts and the report come from the shared [`driver`](super::driver).
//! Position rows are in the skeleton's length unit and orientation rows in radians; scale the
//! effector weights to balance them.

use std::collections::BTreeMap;

use glam::{DMat3, DQuat, DVec3};
use ikarus_core::{LocalPose, Skeleton};
use serde::{Deserialize, Serialize};

use crate::iterative::dofs::{DofKind, Dofs, rotation_vector};
use crate::iterative::driver::{Iteration, IterationSettings, IterativeStep, Workspace};
use crate::iterative::path::Side;
use crate::linalg::svd::RowSvd;
use crate::{IkTask, ParameterError, SolveReport};

/// How a sweep turns the linearised goals into a joint step (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JacobianMethod {
    /// `α Jᵀ e` with Buss's optimal step length.
    Transpose,
    /// `J⁺ e` by SVD.
    Pinv,
    /// Damped least squares.
    #[default]
    Dls,
    /// Selectively damped least squares (Buss & Kim 2005).
    Sdls,
}

/// The secondary objective projected into the Jacobian's null space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NullSpaceObjective {
    /// No secondary motion.
    #[default]
    None,
    /// Toward the rest pose (every path joint toward its rest rotation).
    Rest,
    /// Hinges toward the middle of their range, other limited joints toward rest (their
    /// ranges hold the rest rotation), free joints not at all.
    LimitCenter,
    /// Along [`NullSpaceConfig::gradient`].
    Gradient,
}

/// The null-space term `(I − J⁺J) Δq'` (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NullSpaceConfig {
    /// What `Δq'` pulls toward. Default none.
    pub objective: NullSpaceObjective,
    /// Fraction of the way toward the objective per sweep (for `gradient`: the factor on the
    /// given motion). Small values drift slowly; 1 jumps to the objective's pose within the
    /// null space in one sweep. Default 0.1.
    pub gain: f64,
    /// For `gradient`: per joint name, the desired motion per sweep: for a hinge `[angle, _,
    /// _]` (radians, the joint's own angle), otherwise a model-space rotation vector of the
    /// joint's effector side. Joints not named get none.
    pub gradient: BTreeMap<String, [f64; 3]>,
}

impl Default for NullSpaceConfig {
    fn default() -> Self {
        Self {
            objective: NullSpaceObjective::None,
            gain: 0.1,
            gradient: BTreeMap::new(),
        }
    }
}

/// Jacobian solver parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JacobianConfig {
    /// The step rule. Default `dls`.
    pub method: JacobianMethod,
    /// The damping λ of `dls` (in goal units: metres for positions). Larger values are
    /// steadier near singularities and slower everywhere; 0 is the pseudo-inverse. With
    /// `singular_region > 0`, the largest damping (reached at a singularity). Default 0.05.
    pub damping: f64,
    /// `dls` only: when positive, the damping is adaptive (see the module docs): zero while
    /// the smallest singular value stays above this, rising to `damping` at a singularity.
    /// Default 0 (constant damping).
    pub singular_region: f64,
    /// Largest joint step per sweep, radians: the whole step is scaled down so no entry
    /// exceeds it (also `sdls`'s `γ_max`). Small values are smoother and slower. Default π/4.
    pub max_step: f64,
    /// Per-joint weights `W` by joint name (default 1 each): larger values make the joint
    /// move less. Must be positive and finite; unknown names are rejected.
    pub weights: BTreeMap<String, f64>,
    /// The secondary objective in the null space.
    pub null_space: NullSpaceConfig,
    /// The shared loop's parameters.
    pub iteration: IterationSettings,
}

impl Default for JacobianConfig {
    fn default() -> Self {
        Self {
            method: JacobianMethod::Dls,
            damping: 0.05,
            singular_region: 0.0,
            max_step: std::f64::consts::FRAC_PI_4,
            weights: BTreeMap::new(),
            null_space: NullSpaceConfig::default(),
            iteration: IterationSettings::default(),
        }
    }
}

impl JacobianConfig {
    /// The default configuration with `method` and a sweep budget.
    pub fn new(method: JacobianMethod, max_iterations: u32) -> Self {
        Self {
            method,
            iteration: IterationSettings {
                max_iterations,
                ..IterationSettings::default()
            },
            ..Self::default()
        }
    }

    /// Checks the parameters against `skeleton`.
    ///
    /// # Errors
    /// [`ParameterError`] naming the bad parameter.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), ParameterError> {
        let finite = |name: &'static str, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(ParameterError::OutOfRange {
                    name,
                    value,
                    range: "finite and >= 0",
                })
            }
        };
        finite("damping", self.damping)?;
        finite("singular_region", self.singular_region)?;
        finite("null_space.gain", self.null_space.gain)?;
        if !(self.max_step.is_finite() && self.max_step > 0.0) {
            return Err(ParameterError::OutOfRange {
                name: "max_step",
                value: self.max_step,
                range: "positive",
            });
        }
        for (name, &w) in &self.weights {
            if skeleton.joint(name).is_none() {
                return Err(ParameterError::UnknownJoint {
                    parameter: "weights",
                    joint: name.clone(),
                });
            }
            if !(w.is_finite() && w > 0.0) {
                return Err(ParameterError::Weight {
                    joint: name.clone(),
                    weight: w,
                });
            }
        }
        for (name, g) in &self.null_space.gradient {
            if skeleton.joint(name).is_none() {
                return Err(ParameterError::UnknownJoint {
                    parameter: "null_space.gradient",
                    joint: name.clone(),
                });
            }
            if !g.iter().all(|x| x.is_finite()) {
                return Err(ParameterError::Gradient {
                    joint: name.clone(),
                });
            }
        }
        self.iteration.validate()
    }
}

/// Reusable buffers for [`solve_with`].
#[derive(Clone, Debug, Default)]
pub struct JacobianWorkspace {
    driver: Workspace,
    dofs: Dofs,
    buffers: Buffers,
}

impl JacobianWorkspace {
    /// An empty workspace; it sizes itself on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

#[derive(Clone, Debug, Default)]
struct Buffers {
    /// Residual, `rows`.
    e: Vec<f64>,
    /// Jacobian times `W^{-1/2}`, row-major `rows × columns`.
    j: Vec<f64>,
    /// Step (in the weighted variables, then in joint units), `columns`.
    dq: Vec<f64>,
    /// Null-space motion, `columns`.
    z: Vec<f64>,
    /// Per column `W^{-1/2}`.
    inv_sqrt_w: Vec<f64>,
    /// Per column: removed for this sweep (hinge at a bound pushed outward).
    removed: Vec<bool>,
    /// At the first column of each rotation joint: the projector onto the directions it may
    /// still turn in this sweep (identity unless its limit blocked a direction).
    allowed: Vec<DMat3>,
    /// `sdls`: per column, `Σ_blocks |J block column|`.
    column_norms: Vec<f64>,
    /// `dls` adaptive: the singular values, sorted.
    sorted: Vec<f64>,
    /// `dls` constant: `JJᵀ + λ²I` and its Cholesky factor, row-major `rows × rows`.
    gram: Vec<f64>,
    /// `dls` constant: `(JJᵀ + λ²I)⁻¹ e`, `rows`.
    y: Vec<f64>,
    svd: RowSvd,
}

/// Solves `task` with the Jacobian method of `config`, allocating a workspace. `pose` is the
/// start pose on entry and the best pose found on exit.
pub fn solve(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &JacobianConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    solve_with(skeleton, task, config, &mut JacobianWorkspace::new(), pose)
}

/// Solves `task` with reusable buffers (no allocation once warm).
pub fn solve_with(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &JacobianConfig,
    workspace: &mut JacobianWorkspace,
    pose: &mut LocalPose,
) -> SolveReport {
    if let Err(reason) = config.validate(skeleton) {
        return SolveReport::invalid(reason);
    }
    let mut step = JacobianStep {
        config,
        dofs: &mut workspace.dofs,
        b: &mut workspace.buffers,
    };
    workspace
        .driver
        .run(skeleton, task, &config.iteration, pose, &mut step)
}

struct JacobianStep<'a> {
    config: &'a JacobianConfig,
    dofs: &'a mut Dofs,
    b: &'a mut Buffers,
}

impl IterativeStep for JacobianStep<'_> {
    fn prepare(&mut self, ctx: &mut Iteration<'_>) {
        self.dofs.rebuild(ctx.skeleton(), ctx.task(), ctx.path());
        let (m, n) = (self.dofs.rows(), self.dofs.columns());
        let b = &mut *self.b;
        b.e.resize(m, 0.0);
        b.j.resize(m * n, 0.0);
        b.dq.resize(n, 0.0);
        b.z.resize(n, 0.0);
        b.removed.resize(n, false);
        b.allowed.resize(n, DMat3::IDENTITY);
        b.column_norms.resize(n, 0.0);
        b.svd.reset();
        b.inv_sqrt_w.clear();
        b.inv_sqrt_w.resize(n, 1.0);
        for (name, &w) in &self.config.weights {
            let Some(joint) = ctx.skeleton().joint(name) else {
                continue;
            };
            for (c, dof) in self.dofs.dofs().iter().enumerate() {
                if dof.joint.joint == joint {
                    b.inv_sqrt_w[c] = 1.0 / w.sqrt();
                }
            }
        }
    }

    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        let (m, n) = (self.dofs.rows(), self.dofs.columns());
        if n == 0 || m == 0 {
            return;
        }
        self.b.removed.fill(false);
        self.b.allowed.fill(DMat3::IDENTITY);
        if self.null_space_wanted() {
            // The secondary motion first, then the primary step from the pose it left, so the
            // goals' residual after the sweep carries no second-order error of the null-space
            // motion (the driver judges convergence after the sweep).
            self.dofs.jacobian(ctx, &mut self.b.j);
            self.weigh_columns(m, n);
            self.b.svd.decompose_warm(&self.b.j, m, n);
            self.b.dq.fill(0.0);
            self.add_null_space(ctx);
            self.unweigh_and_apply(ctx);
            ctx.update_model();
        }
        self.dofs.residual(ctx, &mut self.b.e);
        // At most two extra solves with blocked directions removed.
        for _ in 0..3 {
            self.dofs.jacobian(ctx, &mut self.b.j);
            self.weigh_columns(m, n);
            self.step(m, n);
            for (dq, s) in self.b.dq.iter_mut().zip(&self.b.inv_sqrt_w) {
                *dq *= s;
            }
            if !self.remove_blocked_joints(ctx) {
                break;
            }
        }
        clamp_max_abs(&mut self.b.dq, self.config.max_step);
        self.dofs.apply(ctx, &self.b.dq);
    }
}

impl JacobianStep<'_> {
    /// `Δq ← W^{-1/2} Δq`, clamped, applied.
    fn unweigh_and_apply(&mut self, ctx: &mut Iteration<'_>) {
        for (dq, s) in self.b.dq.iter_mut().zip(&self.b.inv_sqrt_w) {
            *dq *= s;
        }
        clamp_max_abs(&mut self.b.dq, self.config.max_step);
        self.dofs.apply(ctx, &self.b.dq);
    }

    fn null_space_wanted(&self) -> bool {
        self.config.null_space.objective != NullSpaceObjective::None
            && self.config.null_space.gain > 0.0
    }

    /// `J ← J W^{-1/2}`, with removed columns zeroed and blocked directions of rotation
    /// joints projected out.
    fn weigh_columns(&mut self, m: usize, n: usize) {
        let b = &mut *self.b;
        for r in 0..m {
            let row = &mut b.j[r * n..(r + 1) * n];
            for (c, x) in row.iter_mut().enumerate() {
                *x = if b.removed[c] {
                    0.0
                } else {
                    *x * b.inv_sqrt_w[c]
                };
            }
            let mut c = 0;
            while c < n {
                let (_, count) = self.dofs.joint_columns(self.dofs.dofs()[c].path_index);
                if count == 3 && b.allowed[c] != DMat3::IDENTITY {
                    let v = b.allowed[c] * DVec3::new(row[c], row[c + 1], row[c + 2]);
                    row[c..c + 3].copy_from_slice(&v.to_array());
                }
                c += count;
            }
        }
    }

    /// The primary step in the weighted variables into `dq`.
    fn step(&mut self, m: usize, n: usize) {
        let b = &mut *self.b;
        if self.config.method == JacobianMethod::Transpose {
            transpose_step(&b.j, &b.e, m, n, &mut b.dq);
            return;
        }
        match self.config.method {
            JacobianMethod::Dls
                if self.config.singular_region <= 0.0 && self.config.damping > 0.0 =>
            {
                // Constant damping: JJᵀ + λ²I is positive definite, Cholesky suffices.
                let lambda2 = self.config.damping * self.config.damping;
                dls_by_cholesky(&b.j, &b.e, m, n, lambda2, &mut b.gram, &mut b.y, &mut b.dq);
            }
            JacobianMethod::Dls => {
                b.svd.decompose_warm(&b.j, m, n);
                let lambda2 = self.damping2(m, n);
                let b = &mut *self.b;
                b.svd.solve(&b.e, |s| s / (s * s + lambda2), &mut b.dq);
            }
            JacobianMethod::Sdls => {
                b.svd.decompose_warm(&b.j, m, n);
                let cutoff = 1e-8 * b.svd.largest();
                self.sdls(m, n, cutoff);
            }
            JacobianMethod::Pinv | JacobianMethod::Transpose => {
                b.svd.decompose_warm(&b.j, m, n);
                let cutoff = 1e-8 * b.svd.largest();
                b.svd
                    .solve(&b.e, |s| if s > cutoff { 1.0 / s } else { 0.0 }, &mut b.dq);
            }
        }
    }

    /// λ² of damped least squares (adaptive inside the singular region).
    fn damping2(&mut self, m: usize, n: usize) -> f64 {
        let lambda2 = self.config.damping * self.config.damping;
        let region = self.config.singular_region;
        if region <= 0.0 {
            return lambda2;
        }
        // The smallest of the min(m, n) largest singular values (beyond those, zeros by rank).
        let b = &mut *self.b;
        b.sorted.clear();
        b.sorted
            .extend((0..b.svd.rows()).map(|i| b.svd.singular_value(i)));
        b.sorted.sort_unstable_by(|x, y| y.total_cmp(x));
        let smallest = b.sorted[m.min(n) - 1];
        if smallest >= region {
            0.0
        } else {
            lambda2 * (1.0 - (smallest / region).powi(2))
        }
    }

    /// Buss & Kim's selectively damped step into `dq`.
    fn sdls(&mut self, m: usize, n: usize, cutoff: f64) {
        let gamma_max = self.config.max_step;
        let blocks = self.dofs.blocks();
        let b = &mut *self.b;
        // ρ_j = Σ_l |J_{l,j}| over the 3-row blocks l.
        for c in 0..n {
            b.column_norms[c] = blocks
                .iter()
                .map(|blk| {
                    let at = |r: usize| b.j[(blk.row + r) * n + c];
                    DVec3::new(at(0), at(1), at(2)).length()
                })
                .sum();
        }
        b.dq.fill(0.0);
        for i in 0..m {
            let sigma = b.svd.singular_value(i);
            if sigma <= cutoff || sigma == 0.0 {
                continue;
            }
            let alpha: f64 = (0..m).map(|k| b.svd.left(k, i) * b.e[k]).sum();
            // N_i: the goal-space direction's size, summed per block.
            let big_n: f64 = blocks
                .iter()
                .map(|blk| {
                    let at = |r: usize| b.svd.left(blk.row + r, i);
                    DVec3::new(at(0), at(1), at(2)).length()
                })
                .sum();
            // M_i = σ⁻¹ Σ_j |u_ji| ρ_j with u_i = (σ u_i) / σ.
            let right = b.svd.scaled_right(i);
            let big_m: f64 = right
                .iter()
                .zip(&b.column_norms)
                .map(|(x, rho)| (x / sigma).abs() * rho)
                .sum::<f64>()
                / sigma;
            let gamma = if big_m > 0.0 {
                (big_n / big_m).min(1.0) * gamma_max
            } else {
                gamma_max
            };
            // φ_i = σ⁻¹ α u_i, clamped to γ_i.
            let scale = alpha / (sigma * sigma);
            let largest = right.iter().fold(0.0_f64, |a, x| a.max((scale * x).abs()));
            let shrink = if largest > gamma {
                gamma / largest
            } else {
                1.0
            };
            for (dq, x) in b.dq.iter_mut().zip(right) {
                *dq += shrink * scale * x;
            }
        }
        clamp_max_abs(&mut b.dq, gamma_max);
    }

    /// Adds `(I − J⁺J) W^{1/2} Δq'` to the weighted step (the SVD of the weighted `J` is
    /// current).
    fn add_null_space(&mut self, ctx: &Iteration<'_>) {
        let ns = &self.config.null_space;
        let b = &mut *self.b;
        b.z.fill(0.0);
        let (skeleton, model, pose) = (ctx.skeleton(), ctx.model(), ctx.pose());
        let dofs = self.dofs.dofs();
        let mut c = 0;
        while c < dofs.len() {
            let dof = dofs[c];
            let pj = dof.joint;
            let sign = match pj.side {
                Side::Effector => 1.0,
                Side::Base => -1.0,
            };
            let parent = skeleton
                .parent(pj.joint)
                .map_or(DQuat::IDENTITY, |p| model.rotation(p));
            let toward_rest = || {
                let rest = skeleton.rest(pj.joint).rotation;
                sign * (parent * rotation_vector(rest * pose[pj.joint].rotation.conjugate()))
            };
            match dof.kind {
                DofKind::Hinge(h) => {
                    let angle = ctx.hinge_angle(pj, &h);
                    let wanted = match ns.objective {
                        NullSpaceObjective::Rest => -angle,
                        NullSpaceObjective::LimitCenter if !h.is_full_circle() => {
                            0.5 * (h.min + h.max) - angle
                        }
                        NullSpaceObjective::Gradient => ns
                            .gradient
                            .get(skeleton.name(pj.joint))
                            .map_or(0.0, |g| g[0]),
                        _ => 0.0,
                    };
                    b.z[c] = ns.gain * sign * wanted;
                    c += 1;
                }
                DofKind::Rotation(_) => {
                    let limited = !skeleton.limit(pj.joint).is_free();
                    let wanted = match ns.objective {
                        NullSpaceObjective::Rest => toward_rest(),
                        NullSpaceObjective::LimitCenter if limited => toward_rest(),
                        NullSpaceObjective::Gradient => ns
                            .gradient
                            .get(skeleton.name(pj.joint))
                            .map_or(DVec3::ZERO, |&g| DVec3::from_array(g)),
                        _ => DVec3::ZERO,
                    };
                    let w = wanted * ns.gain;
                    b.z[c..c + 3].copy_from_slice(&w.to_array());
                    c += 3;
                }
            }
        }
        for ((z, s), removed) in b.z.iter_mut().zip(&b.inv_sqrt_w).zip(&b.removed) {
            // W^{1/2} z; removed columns do not move.
            *z = if *removed { 0.0 } else { *z / s };
        }
        let mut c = 0;
        while c < dofs.len() {
            let (_, count) = self.dofs.joint_columns(dofs[c].path_index);
            if count == 3 && b.allowed[c] != DMat3::IDENTITY {
                let v = b.allowed[c] * DVec3::new(b.z[c], b.z[c + 1], b.z[c + 2]);
                b.z[c..c + 3].copy_from_slice(&v.to_array());
            }
            c += count;
        }
        let cutoff = 1e-8 * b.svd.largest();
        b.svd.project_to_null_space(&mut b.z, cutoff);
        for (dq, z) in b.dq.iter_mut().zip(&b.z) {
            *dq += z;
        }
    }

    /// Marks the columns of joints that rest on their limit and whose step pushes further
    /// out (a hinge at a bound, or a limited joint that cannot turn even 1e-6 rad in its
    /// step's direction); true when any new one was marked (the step is then solved again
    /// without them).
    fn remove_blocked_joints(&mut self, ctx: &Iteration<'_>) -> bool {
        let mut any = false;
        let (skeleton, model, pose) = (ctx.skeleton(), ctx.model(), ctx.pose());
        let dofs = self.dofs.dofs();
        let mut c = 0;
        while c < dofs.len() {
            let dof = dofs[c];
            let width = match dof.kind {
                DofKind::Hinge(_) => 1,
                DofKind::Rotation(_) => 3,
            };
            if self.b.removed[c] {
                c += width;
                continue;
            }
            let step = match dof.kind {
                DofKind::Hinge(_) => DVec3::ZERO,
                DofKind::Rotation(_) => {
                    DVec3::new(self.b.dq[c], self.b.dq[c + 1], self.b.dq[c + 2])
                }
            };
            let blocked = match dof.kind {
                DofKind::Hinge(_) => {
                    let value = self.dofs.hinge_value(ctx, c).unwrap_or(0.0);
                    let (low, high) = self.dofs.hinge_bounds(c).unwrap_or((0.0, 0.0));
                    let dq = self.b.dq[c];
                    (value <= low + 1e-9 && dq < 0.0) || (value >= high - 1e-9 && dq > 0.0)
                }
                DofKind::Rotation(_) => {
                    let w = step;
                    let limit = skeleton.limit(dof.joint.joint);
                    if limit.is_free() || w == DVec3::ZERO {
                        false
                    } else {
                        let joint = dof.joint.joint;
                        let parent = skeleton
                            .parent(joint)
                            .map_or(DQuat::IDENTITY, |p| model.rotation(p));
                        let tiny = w * (1e-6 / w.length());
                        let turn = match dof.joint.side {
                            Side::Effector => DQuat::from_scaled_axis(tiny),
                            Side::Base => DQuat::from_scaled_axis(-tiny),
                        };
                        let local = parent.conjugate() * turn * parent * pose[joint].rotation;
                        let delta = skeleton.rest(joint).rotation.conjugate() * local;
                        !limit.contains(delta)
                    }
                }
            };
            if blocked {
                if width == 1 {
                    self.b.removed[c] = true;
                } else {
                    // Take the step's direction out of the joint's allowed directions.
                    let allowed = self.b.allowed[c];
                    let d = allowed * step;
                    if d.length_squared() > 0.0 {
                        let d = d.normalize();
                        self.b.allowed[c] = allowed - DMat3::from_cols(d * d.x, d * d.y, d * d.z);
                    }
                }
                any = true;
            }
            c += width;
        }
        any
    }
}

/// `Δq = α Jᵀ e`, `α = ⟨e, JJᵀe⟩ / |JJᵀe|²` (0 when `JJᵀe = 0`).
fn transpose_step(j: &[f64], e: &[f64], m: usize, n: usize, dq: &mut [f64]) {
    dq[..n].fill(0.0);
    for r in 0..m {
        let row = &j[r * n..(r + 1) * n];
        for (d, x) in dq.iter_mut().zip(row) {
            *d += x * e[r];
        }
    }
    let (mut num, mut den) = (0.0, 0.0);
    for r in 0..m {
        let row = &j[r * n..(r + 1) * n];
        let jjte: f64 = row.iter().zip(dq.iter()).map(|(x, d)| x * d).sum();
        num += e[r] * jjte;
        den += jjte * jjte;
    }
    let alpha = if den > 0.0 { num / den } else { 0.0 };
    for d in dq.iter_mut() {
        *d *= alpha;
    }
}

/// Damped least squares by the normal equations: `Δq = Jᵀ y` with `(JJᵀ + λ²I) y = e`
/// solved by Cholesky (`λ² > 0` keeps the matrix positive definite).
#[allow(clippy::too_many_arguments)]
fn dls_by_cholesky(
    j: &[f64],
    e: &[f64],
    m: usize,
    n: usize,
    lambda2: f64,
    gram: &mut Vec<f64>,
    y: &mut Vec<f64>,
    dq: &mut [f64],
) {
    gram.clear();
    gram.resize(m * m, 0.0);
    for r in 0..m {
        for c in 0..=r {
            let dot: f64 = j[r * n..(r + 1) * n]
                .iter()
                .zip(&j[c * n..(c + 1) * n])
                .map(|(a, b)| a * b)
                .sum();
            gram[r * m + c] = dot;
        }
        gram[r * m + r] += lambda2;
    }
    // In place: the lower triangle becomes L with L Lᵀ = JJᵀ + λ²I.
    for r in 0..m {
        for c in 0..=r {
            let mut sum = gram[r * m + c];
            for k in 0..c {
                sum -= gram[r * m + k] * gram[c * m + k];
            }
            gram[r * m + c] = if r == c {
                sum.max(f64::MIN_POSITIVE).sqrt()
            } else {
                sum / gram[c * m + c]
            };
        }
    }
    y.clear();
    y.extend_from_slice(&e[..m]);
    for r in 0..m {
        let s: f64 = (0..r).map(|k| gram[r * m + k] * y[k]).sum();
        y[r] = (y[r] - s) / gram[r * m + r];
    }
    for r in (0..m).rev() {
        let s: f64 = (r + 1..m).map(|k| gram[k * m + r] * y[k]).sum();
        y[r] = (y[r] - s) / gram[r * m + r];
    }
    dq[..n].fill(0.0);
    for r in 0..m {
        for (d, x) in dq.iter_mut().zip(&j[r * n..(r + 1) * n]) {
            *d += x * y[r];
        }
    }
}

/// Scales `v` so no entry exceeds `limit` in magnitude.
fn clamp_max_abs(v: &mut [f64], limit: f64) {
    let largest = v.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    if largest > limit {
        let s = limit / largest;
        for x in v.iter_mut() {
            *x *= s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_round_trips_and_rejects_unknown_joints() {
        let skeleton = ikarus_core::humanoid::builtin_humanoid();
        let json = r#"{"method":"sdls","weights":{"spine":4.0},
            "null_space":{"objective":"rest","gain":0.2}}"#;
        let config: JacobianConfig = serde_json::from_str(json).unwrap();
        assert_eq!(config.method, JacobianMethod::Sdls);
        assert_eq!(config.null_space.objective, NullSpaceObjective::Rest);
        assert!(config.validate(&skeleton).is_ok());
        let back: JacobianConfig =
            serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
        assert_eq!(back, config);
        let bad: JacobianConfig = serde_json::from_str(r#"{"weights":{"tail":1}}"#).unwrap();
        assert_eq!(
            bad.validate(&skeleton),
            Err(ParameterError::UnknownJoint {
                parameter: "weights",
                joint: "tail".into()
            })
        );
        let bad: JacobianConfig = serde_json::from_str(r#"{"weights":{"spine":0}}"#).unwrap();
        assert!(bad.validate(&skeleton).is_err());
    }

    #[test]
    fn dls_by_cholesky_matches_the_svd_form() {
        let mut state = 9u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for (m, n) in [(3, 7), (6, 7), (12, 7), (6, 30)] {
            let j: Vec<f64> = (0..m * n).map(|_| next()).collect();
            let e: Vec<f64> = (0..m).map(|_| next()).collect();
            let lambda2 = 0.05 * 0.05;
            let (mut gram, mut y, mut by_cholesky) = (Vec::new(), Vec::new(), vec![0.0; n]);
            dls_by_cholesky(&j, &e, m, n, lambda2, &mut gram, &mut y, &mut by_cholesky);
            let mut svd = RowSvd::new();
            svd.decompose(&j, m, n);
            let mut by_svd = vec![0.0; n];
            svd.solve(&e, |s| s / (s * s + lambda2), &mut by_svd);
            let err = by_cholesky
                .iter()
                .zip(&by_svd)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-10, "{m}x{n}: {err:e}");
        }
    }

    #[test]
    fn transpose_step_length_is_optimal_along_the_gradient() {
        // For a linear model the residual |e − αJJᵀe| is smallest at Buss's α.
        let j = [1.0, 0.5, -0.2, 0.3, 2.0, 0.7];
        let e = [0.4, -0.8];
        let mut dq = [0.0; 3];
        transpose_step(&j, &e, 2, 3, &mut dq);
        let residual = |s: f64| -> f64 {
            (0..2)
                .map(|r| {
                    let jd: f64 = (0..3).map(|c| j[r * 3 + c] * dq[c] * s).sum();
                    (e[r] - jd).powi(2)
                })
                .sum()
        };
        assert!(residual(1.0) < residual(0.99) && residual(1.0) < residual(1.01));
    }
}
