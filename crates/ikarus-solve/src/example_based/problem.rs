//! One solve's state and steps: the model bound to the skeleton, the latent search, the\n//! refinement in the prior's metric and the exact finish.

#[allow(clippy::wildcard_imports)]
use super::*;

/// One solve's state: the model bound to the skeleton, the residual rows and the buffers.
pub(super) struct Problem<'a> {
    /// The candidate [`run`](Self::run) did not keep when a trusted start was also solved
    /// afresh (both short of the goals): the finish tries it too.
    pub(super) other: Option<LocalPose>,
    /// The isotropic variance added to the refinement's metric (`C + β I`): the share
    /// [`ExampleConfig::start_isotropy`] of the model's mean variance for a trusted start's
    /// refinement, 0 otherwise.
    pub(super) isotropy: f64,
    /// How near the goals the start is: `exp(−(2d/R)²)` for its RMS effector distance `d` and
    /// the trust radius `R`.
    pub(super) nearness: f64,
    pub(super) skeleton: &'a Skeleton,
    pub(super) task: &'a IkTask,
    pub(super) model: &'a PostureModel,
    pub(super) joints: Vec<JointId>,
    pub(super) config: &'a ExampleConfig,
    /// Model-space length of one radian of orientation error.
    pub(super) rotation_length: f64,
    /// Per residual row: the effector index and whether it is an orientation row.
    pub(super) rows: usize,
    pub(super) fk: ModelPose,
    pub(super) residual: Vec<f64>,
    /// `rows × 3J`, row-major.
    pub(super) jacobian: Vec<f64>,
    pub(super) active: Vec<bool>,
    /// Refinement: joints held because a step pushed them into their limit.
    pub(super) clamped: Vec<bool>,
    /// Scratch: joints the last [`apply`](Self::apply) projected.
    pub(super) projected: Vec<bool>,
    /// The base joint held in place (a task base other than the root): the root moves so the
    /// base keeps its start transform, and the Jacobian is taken by finite differences.
    pub(super) base: Option<BaseHold>,
    /// Scratch pose of the finite differences.
    pub(super) scratch: LocalPose,
    /// The root moved by the solve (`move_root`): its start transform.
    pub(super) free_root: Option<FreeRoot>,
    /// Unknowns: the posture vector (`3J`) and, with a free root, its translation and rotation
    /// vector relative to the start (6 more).
    pub(super) n: usize,
}

/// A root moved by the solve: `translation = start + t`, `rotation = exp(ω) · start`.
pub(super) struct FreeRoot {
    pub(super) root: JointId,
    pub(super) translation: DVec3,
    pub(super) rotation: DQuat,
    /// Prior standard deviations: metres of translation, radians of rotation.
    pub(super) sigma: [f64; 2],
}

/// A base joint's start transform, kept by moving its root.
pub(super) struct BaseHold {
    pub(super) base: JointId,
    pub(super) root: JointId,
    pub(super) rotation: DQuat,
    pub(super) position: DVec3,
}

impl<'a> Problem<'a> {
    pub(super) fn new(
        skeleton: &'a Skeleton,
        task: &'a IkTask,
        model: &'a PostureModel,
        joints: Vec<JointId>,
        config: &'a ExampleConfig,
        start: &LocalPose,
    ) -> Self {
        let rows = task
            .effectors
            .iter()
            .filter(|e| e.weight > 0.0)
            .map(|e| {
                3 * (usize::from(e.goal.position.is_some())
                    + usize::from(e.goal.orientation.is_some()))
            })
            .sum();
        let free_root = joints.first().filter(|_| config.move_root).map(|&j| {
            let root = skeleton.path_to_root(j).last().unwrap_or(j);
            FreeRoot {
                root,
                translation: start[root].translation,
                rotation: start[root].rotation,
                sigma: [
                    config.root_translation_noise * model.scale(),
                    config.root_rotation_noise,
                ],
            }
        });
        let n = model.len() + if free_root.is_some() { 6 } else { 0 };
        let joint_count = joints.len();
        let mut fk = ModelPose::new(skeleton);
        let base = task
            .base
            .filter(|&b| skeleton.parent(b).is_some())
            .map(|base| {
                fk::forward_kinematics(skeleton, start, &mut fk);
                BaseHold {
                    base,
                    root: skeleton.path_to_root(base).last().unwrap_or(base),
                    rotation: fk.rotation(base),
                    position: fk.position(base),
                }
            });
        Self {
            skeleton,
            task,
            model,
            joints,
            config,
            rotation_length: ROTATION_LENGTH * model.scale(),
            rows,
            fk,
            residual: vec![0.0; rows],
            jacobian: vec![0.0; rows * n],
            active: vec![false; joint_count],
            clamped: vec![false; joint_count],
            projected: vec![false; joint_count],
            base,
            scratch: start.clone(),
            other: None,
            isotropy: 0.0,
            nearness: 0.0,
            free_root,
            n,
        }
    }

    /// Both stages; returns the iterations used and whether a limit was active at the end.
    pub(super) fn run(&mut self, pose: &mut LocalPose) -> (u32, bool) {
        let mut x = vec![0.0; self.n];
        let mut work = pose.clone();
        self.encode(&work, &mut x);
        let mut best = pose.clone();
        let mut best_cost = self.cost(&work);
        let mut iterations = 0;
        if self.rows == 0 {
            return (0, false);
        }
        // The start is trusted when its effectors are within `start_radius` of the goals (root
        // mean square over the weighted effectors).
        #[allow(clippy::cast_precision_loss)] // a handful of effectors
        let effectors = self
            .task
            .effectors
            .iter()
            .filter(|e| e.weight > 0.0)
            .count() as f64;
        let radius = self.config.start_radius * self.model.scale();
        let trusted = best_cost <= radius * radius * effectors;
        // How near: `exp(−(2d/R)²)` for the start's RMS effector distance `d` and the trust
        // radius `R` (a half at 0.42 R).
        let reach = radius * radius * effectors;
        self.nearness = if reach > 0.0 {
            (-4.0 * best_cost / reach).exp()
        } else {
            1.0
        };
        let start = (x.clone(), best_cost);
        iterations += self.stages(trusted, &mut x, &mut work, (&mut best, &mut best_cost));
        // A trusted start the stages left short of the goals (a posture far outside the
        // model, where its part off the model leads astray): the goals from afresh too, the
        // closer kept.
        self.cost(&best);
        if trusted && !self.reached(self.task.tolerance) {
            let (mut afresh, mut afresh_cost) = (pose.clone(), start.1);
            let (mut x, mut work) = (start.0, pose.clone());
            iterations += self.stages(false, &mut x, &mut work, (&mut afresh, &mut afresh_cost));
            if afresh_cost < best_cost {
                self.other = Some(std::mem::replace(&mut best, afresh));
            } else {
                self.other = Some(afresh);
            }
        }
        pose.clone_from(&best);
        self.mark_active(pose);
        (iterations, self.active.iter().any(|&a| a))
    }

    /// The latent stage (from `x`, the start's unknowns; `trusted`: see the module docs) and
    /// the refinement, from `work` (the start pose on entry); `best` and its cost are the best
    /// pose seen (the start's on entry). Returns the iterations.
    fn stages(
        &mut self,
        trusted: bool,
        x: &mut [f64],
        work: &mut LocalPose,
        (best, best_cost): (&mut LocalPose, &mut f64),
    ) -> u32 {
        let (mut iterations, latent_cost) = self.latent(x, trusted, work);
        if latent_cost < *best_cost {
            *best_cost = latent_cost;
            best.clone_from(work);
        }
        if self.config.refine {
            self.encode(work, x);
            // From a trusted start the step may also leave the model's directions.
            #[allow(clippy::cast_precision_loss)] // a few hundred coordinates
            let mean_variance =
                self.model.variances().iter().sum::<f64>() / self.model.len() as f64;
            self.isotropy = if trusted {
                self.config.start_isotropy * self.nearness * mean_variance
            } else {
                0.0
            };
            iterations += self.refine(x, work, best, best_cost);
        }
        iterations
    }

    /// Writes the unknowns `x` into `pose`: the posture, and the root when it is free.
    pub(super) fn decode(&self, x: &[f64], pose: &mut LocalPose) {
        let m = self.model.len();
        self.model.decode(&x[..m], &self.joints, pose);
        if let Some(free) = &self.free_root {
            let root = &mut pose[free.root];
            root.translation = free.translation + DVec3::new(x[m], x[m + 1], x[m + 2]);
            let turn = DQuat::from_scaled_axis(DVec3::new(x[m + 3], x[m + 4], x[m + 5]));
            root.rotation = (turn * free.rotation).normalize();
        }
    }

    /// Reads the unknowns of `pose` (the inverse of [`decode`](Self::decode)).
    pub(super) fn encode(&self, pose: &LocalPose, x: &mut [f64]) {
        let m = self.model.len();
        self.model.encode(pose, &self.joints, &mut x[..m]);
        if let Some(free) = &self.free_root {
            let root = &pose[free.root];
            x[m..m + 3].copy_from_slice(&(root.translation - free.translation).to_array());
            let turn = rotation_vector(root.rotation * free.rotation.conjugate());
            x[m + 3..m + 6].copy_from_slice(&turn.to_array());
        }
    }

    /// The weighted squared residual of `pose`.
    pub(super) fn cost(&mut self, pose: &LocalPose) -> f64 {
        fk::forward_kinematics(self.skeleton, pose, &mut self.fk);
        self.fill_residual();
        let c: f64 = self.residual.iter().map(|r| r * r).sum();
        if c.is_finite() { c } else { f64::INFINITY }
    }

    /// Residual rows from `self.fk`: weighted `current − goal` positions, and weighted
    /// orientation errors (model-space rotation vectors) times the rotation length.
    pub(super) fn fill_residual(&mut self) {
        let mut row = 0;
        for e in self.task.effectors.iter().filter(|e| e.weight > 0.0) {
            if let Some(goal) = e.goal.position {
                let d = (self.fk.position(e.joint) - goal) * e.weight;
                self.residual[row..row + 3].copy_from_slice(&d.to_array());
                row += 3;
            }
            if let Some(goal) = e.goal.orientation {
                let d = rotation_vector(self.fk.rotation(e.joint) * goal.conjugate())
                    * (e.weight * self.rotation_length);
                self.residual[row..row + 3].copy_from_slice(&d.to_array());
                row += 3;
            }
        }
    }

    /// The Jacobian of the residual rows with respect to `x` at `self.fk` (see the module docs).
    pub(super) fn fill_jacobian(&mut self, x: &[f64]) {
        if self.base.is_some() {
            self.fill_jacobian_numeric(x);
            return;
        }
        let n = self.n;
        self.jacobian.fill(0.0);
        self.fill_root_columns(x);
        for (k, &joint) in self.joints.iter().enumerate() {
            if self.clamped[k] {
                continue;
            }
            let v = DVec3::new(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
            let mut axes = DMat3::from_quat(self.fk.rotation(joint)) * right_jacobian(v);
            if let Some(d) = hinge_direction(self.skeleton.limit(joint), v) {
                // Only turning about the hinge: columns times the projector d dᵀ.
                axes *= DMat3::from_cols(d * d.x, d * d.y, d * d.z);
            }
            let origin = self.fk.position(joint);
            let mut row = 0;
            for e in self.task.effectors.iter().filter(|e| e.weight > 0.0) {
                let moves = self.skeleton.is_ancestor_or_self(joint, e.joint);
                if e.goal.position.is_some() {
                    if moves {
                        let arm = self.fk.position(e.joint) - origin;
                        for c in 0..3 {
                            let d = axes.col(c).cross(arm) * e.weight;
                            for (i, value) in d.to_array().into_iter().enumerate() {
                                self.jacobian[(row + i) * n + 3 * k + c] = value;
                            }
                        }
                    }
                    row += 3;
                }
                if e.goal.orientation.is_some() {
                    if moves {
                        for c in 0..3 {
                            let d = axes.col(c) * (e.weight * self.rotation_length);
                            for (i, value) in d.to_array().into_iter().enumerate() {
                                self.jacobian[(row + i) * n + 3 * k + c] = value;
                            }
                        }
                    }
                    row += 3;
                }
            }
        }
    }

    /// The free root's six columns (translation, then rotation vector `ω` with
    /// `exp(ω + δ) = exp(J_l(ω) δ) · exp(ω)`, `J_l(ω) = J_r(ω)ᵀ`).
    pub(super) fn fill_root_columns(&mut self, x: &[f64]) {
        let Some(free) = &self.free_root else { return };
        let (n, m) = (self.n, self.model.len());
        let omega = DVec3::new(x[m + 3], x[m + 4], x[m + 5]);
        let axes = right_jacobian(omega).transpose();
        let origin = self.fk.position(free.root);
        let mut row = 0;
        for e in self.task.effectors.iter().filter(|e| e.weight > 0.0) {
            if e.goal.position.is_some() {
                let arm = self.fk.position(e.joint) - origin;
                for c in 0..3 {
                    self.jacobian[(row + c) * n + m + c] = e.weight;
                    let d = axes.col(c).cross(arm) * e.weight;
                    for (i, value) in d.to_array().into_iter().enumerate() {
                        self.jacobian[(row + i) * n + m + 3 + c] = value;
                    }
                }
                row += 3;
            }
            if e.goal.orientation.is_some() {
                for c in 0..3 {
                    let d = axes.col(c) * (e.weight * self.rotation_length);
                    for (i, value) in d.to_array().into_iter().enumerate() {
                        self.jacobian[(row + i) * n + m + 3 + c] = value;
                    }
                }
                row += 3;
            }
        }
    }

    /// Writes posture `x` into `pose` with every modelled joint projected onto its limit, and
    /// marks in `self.projected` the joints the projection moved.
    pub(super) fn apply(&mut self, x: &[f64], pose: &mut LocalPose) {
        self.decode(x, pose);
        for (k, &joint) in self.joints.iter().enumerate() {
            let rest = self.skeleton.rest(joint).rotation;
            let delta = rest.conjugate() * pose[joint].rotation;
            let legal = self.skeleton.limit(joint).project(delta);
            self.projected[k] = delta.dot(legal).abs() < 1.0 - 1e-12;
            pose[joint].rotation = (rest * legal).normalize();
        }
        self.hold_base(pose);
    }

    /// Moves the root so the held base joint keeps its start transform (no-op without one).
    pub(super) fn hold_base(&mut self, pose: &mut LocalPose) {
        let Some(hold) = &self.base else { return };
        fk::forward_kinematics(self.skeleton, pose, &mut self.fk);
        let turn = hold.rotation * self.fk.rotation(hold.base).conjugate();
        let shift = hold.position - turn * self.fk.position(hold.base);
        let root = &mut pose[hold.root];
        root.rotation = (turn * root.rotation).normalize();
        root.translation = turn * root.translation + shift;
    }

    /// The Jacobian by forward differences through [`decode`](PostureModel::decode) and
    /// [`hold_base`](Self::hold_base) (hinges along their axis, as the analytic one); leaves
    /// `self.fk` and the residual as they were.
    pub(super) fn fill_jacobian_numeric(&mut self, x: &[f64]) {
        const H: f64 = 1e-7;
        let n = self.n;
        let (saved_fk, saved_residual) = (self.fk.clone(), self.residual.clone());
        let mut pose = std::mem::replace(&mut self.scratch, LocalPose::from_transforms(Vec::new()));
        let mut xs = x.to_vec();
        let place = |this: &mut Self, xs: &[f64], pose: &mut LocalPose| {
            this.model.decode(xs, &this.joints, pose);
            this.hold_base(pose);
            fk::forward_kinematics(this.skeleton, pose, &mut this.fk);
            this.fill_residual();
        };
        place(self, x, &mut pose);
        let base_residual = self.residual.clone();
        self.jacobian.fill(0.0);
        for c in 0..n {
            let k = c / 3;
            if self.clamped[k] {
                continue;
            }
            let v = DVec3::new(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
            let direction = match hinge_direction(self.skeleton.limit(self.joints[k]), v) {
                Some(d) => d * d.dot(DVec3::AXES[c % 3]),
                None => DVec3::AXES[c % 3],
            };
            for (i, d) in direction.to_array().into_iter().enumerate() {
                xs[3 * k + i] = x[3 * k + i] + H * d;
            }
            place(self, &xs, &mut pose);
            for (r, (now, was)) in self.residual.iter().zip(&base_residual).enumerate() {
                self.jacobian[r * n + c] = (now - was) / H;
            }
            xs[3 * k..3 * k + 3].copy_from_slice(&x[3 * k..3 * k + 3]);
        }
        self.scratch = pose;
        self.fk = saved_fk;
        self.residual = saved_residual;
    }

    /// The latent stage from the start pose's latent point (`trusted`: kept near it, with the
    /// start's part off the model carried; see the module docs); leaves its pose in `pose` and
    /// returns the iterations and the pose's weighted squared residual.
    pub(super) fn latent(
        &mut self,
        x_start: &[f64],
        trusted: bool,
        pose: &mut LocalPose,
    ) -> (u32, f64) {
        let (n, m) = (self.n, self.model.len());
        let k = self.model.dims();
        // Unknowns: the latent point, then the free root's six (priors 1/σ² each).
        let extra = n - m;
        let unknowns = k + extra;
        // From a trusted start the start's own terms stand for the prior; the posture prior
        // keeps the weight `start_prior`.
        let own_weight = if trusted {
            self.config.start_prior
        } else {
            1.0
        };
        let precision: Vec<f64> = (0..unknowns)
            .map(|i| match (&self.free_root, i.checked_sub(k)) {
                (Some(free), Some(r)) => free.sigma[r / 3].powi(-2),
                _ => own_weight,
            })
            .collect();
        let s2 = (self.config.goal_noise * self.model.scale()).powi(2);
        let mut z = self.model.latent_of(x_start);
        z.extend_from_slice(&x_start[m..]);
        // A trusted start: its latent point `z₀` with its precision (the motion part's, else
        // 1/τ²), and its part off the model's subspace (`offset`, zero otherwise) carried by
        // every posture.
        let z_start = z[..k].to_vec();
        let (start_precision, offset) = self.start_terms(x_start, &z_start, trusted);
        // `(z − z₀)ᵀ P (z − z₀)` and `P (z − z₀)`.
        let toward_start = |z: &[f64]| {
            let d = DVector::from_iterator(k, (0..k).map(|i| z[i] - z_start[i]));
            let pd = &start_precision * &d;
            (d.dot(&pd), pd)
        };
        let mut x = vec![0.0; n];
        let mut trial = pose.clone();
        let prior = |z: &[f64]| {
            let own: f64 = z.iter().zip(&precision).map(|(v, p)| v * v * p).sum();
            own + toward_start(z).0
        };
        let objective = |cost: f64, z: &[f64]| cost / s2 + prior(z);
        let place = |this: &Self, z: &[f64], x: &mut [f64]| {
            this.model.posture(&z[..k], &mut x[..m]);
            for (v, o) in x[..m].iter_mut().zip(&offset) {
                *v += o;
            }
            x[m..].copy_from_slice(&z[k..]);
        };
        place(self, &z, &mut x);
        self.apply(&x, pose);
        let start_cost = self.cost(pose);
        let mut value = objective(start_cost, &z);
        let mut lambda = 1e-3;
        let mut iterations = 0;
        let mut jz = DMatrix::<f64>::zeros(self.rows, unknowns);
        while iterations < self.config.latent_iterations && unknowns > 0 {
            iterations += 1;
            // `self.fk` holds `pose`'s FK (from the last accepted cost).
            place(self, &z, &mut x);
            self.fill_jacobian(&x);
            for r in 0..self.rows {
                for a in 0..k {
                    jz[(r, a)] = (0..m)
                        .map(|c| self.jacobian[r * n + c] * self.model.basis(c, a))
                        .sum();
                }
                for a in 0..extra {
                    jz[(r, k + a)] = self.jacobian[r * n + m + a];
                }
            }
            let r = DVector::from_column_slice(&self.residual);
            // The start's term acts on the latent point only (its `k` entries).
            let moved = toward_start(&z).1;
            let prior_gradient = DVector::from_iterator(
                unknowns,
                (0..unknowns).map(|i| z[i] * precision[i] + moved.get(i).copied().unwrap_or(0.0)),
            );
            let gradient = jz.transpose() * &r / s2 + prior_gradient;
            let mut hessian = jz.transpose() * &jz / s2
                + DMatrix::from_diagonal(&DVector::from_vec(precision.clone()));
            let mut block = hessian.view_mut((0, 0), (k, k));
            block += &start_precision;
            let mut improved = false;
            for _ in 0..8 {
                let damped = &hessian + DMatrix::<f64>::identity(unknowns, unknowns) * lambda;
                let Some(chol) = damped.cholesky() else {
                    lambda *= 10.0;
                    continue;
                };
                let step = chol.solve(&(-&gradient));
                let z_trial: Vec<f64> = z.iter().zip(step.iter()).map(|(a, b)| a + b).collect();
                place(self, &z_trial, &mut x);
                self.apply(&x, &mut trial);
                let trial_cost = self.cost(&trial);
                let trial_value = objective(trial_cost, &z_trial);
                if trial_value < value {
                    let small = step.norm() < 1e-7;
                    z = z_trial;
                    value = trial_value;
                    pose.clone_from(&trial);
                    lambda = (lambda * 0.3).max(1e-9);
                    improved = !small;
                    break;
                }
                lambda *= 10.0;
            }
            if !improved {
                break;
            }
        }
        // Leave `self.fk` on the returned pose.
        (iterations, self.cost(pose))
    }

    /// A start's terms in the latent stage: the precision of its latent point `z_start` (the
    /// inverse of the model's motion part over [`ExampleConfig::motion_spread`]², else
    /// `I / τ²`) and its part off the model's subspace, `x_start − μ − W z_start`; zeros when
    /// it is not `trusted`.
    fn start_terms(
        &self,
        x_start: &[f64],
        z_start: &[f64],
        trusted: bool,
    ) -> (DMatrix<f64>, Vec<f64>) {
        let (m, k) = (self.model.len(), self.model.dims());
        let mut offset = vec![0.0; m];
        if !trusted {
            return (DMatrix::zeros(k, k), offset);
        }
        self.model.posture(z_start, &mut offset);
        for (o, s) in offset.iter_mut().zip(&x_start[..m]) {
            *o = s - *o;
        }
        let motion = self.model.motion().and_then(|covariance| {
            DMatrix::from_row_slice(k, k, covariance)
                .try_inverse()
                .map(|p| p / self.config.motion_spread.powi(2))
        });
        let precision =
            motion.unwrap_or_else(|| DMatrix::identity(k, k) / self.config.start_spread.powi(2));
        (precision, offset)
    }

    /// The refinement from posture `x` (the latent stage's pose, in `pose`); updates the best
    /// pose and returns the iterations.
    ///
    /// Limits are an active set per iteration: a joint whose share of the step would leave its
    /// limit is held for that iteration and the step recomputed without it (up to three
    /// rounds), so the step slides the other joints instead of pushing into a bound.
    pub(super) fn refine(
        &mut self,
        x: &mut [f64],
        pose: &mut LocalPose,
        best: &mut LocalPose,
        best_cost: &mut f64,
    ) -> u32 {
        let n = self.n;
        let tolerance = self.task.tolerance;
        let mut cost = self.cost(pose);
        let mut trial = pose.clone();
        let mut step = vec![0.0; n];
        let mut x_trial = vec![0.0; n];
        let mut buffers = StepBuffers::default();
        let mut lambda_scale = 1e-3;
        let mut iterations = 0;
        while iterations < self.config.refine_iterations {
            if self.reached(tolerance) {
                break;
            }
            iterations += 1;
            self.reset_holds();
            let mut improved = false;
            'damping: for _ in 0..8 {
                // First the step with every joint free (the projection stops joints on their
                // boundaries), then, if that does not help, with the joints that rest on a
                // boundary and push out of it held.
                for held in [false, true] {
                    if held {
                        let mut any = false;
                        for _round in 0..3 {
                            if !self.hold_joints_leaving_limits(x, &step) {
                                break;
                            }
                            any = true;
                            if !self.step(x, lambda_scale, &mut buffers, &mut step) {
                                break;
                            }
                        }
                        if !any {
                            continue;
                        }
                    } else if !self.step(x, lambda_scale, &mut buffers, &mut step) {
                        break;
                    }
                    let largest = step
                        .chunks(3)
                        .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
                        .fold(0.0, f64::max);
                    let shrink = if largest > MAX_JOINT_STEP {
                        MAX_JOINT_STEP / largest
                    } else {
                        1.0
                    };
                    for ((out, &xc), &d) in x_trial.iter_mut().zip(x.iter()).zip(&step) {
                        *out = xc + d * shrink;
                    }
                    self.apply(&x_trial, &mut trial);
                    let trial_cost = self.cost(&trial);
                    // Restore `self.fk` for the next Jacobian.
                    self.cost(pose);
                    if trial_cost < cost {
                        cost = trial_cost;
                        pose.clone_from(&trial);
                        // Re-read the projected posture so limits hold in `x` too.
                        self.encode(pose, x);
                        lambda_scale = (lambda_scale * 0.3).max(1e-9);
                        improved = true;
                        break 'damping;
                    }
                }
                self.reset_holds();
                lambda_scale *= 10.0;
            }
            // Leave `self.fk` and the residual on the accepted pose.
            self.cost(pose);
            if cost < *best_cost {
                *best_cost = cost;
                best.clone_from(pose);
            }
            if !improved {
                break;
            }
        }
        iterations
    }

    /// The refinement step `Δx = C Jᵀ (J C Jᵀ + λ I)⁻¹ (−r)` at `self.fk` with the held joints'
    /// columns and components removed; false when the damped system is singular.
    pub(super) fn step(
        &mut self,
        x: &[f64],
        lambda_scale: f64,
        buffers: &mut StepBuffers,
        step: &mut [f64],
    ) -> bool {
        let (n, posture) = (self.n, self.model.len());
        let rows = self.rows;
        self.fill_jacobian(x);
        buffers.cjt.resize(rows * n, 0.0);
        for r in 0..rows {
            let (row, out) = (
                &self.jacobian[r * n..(r + 1) * n],
                &mut buffers.cjt[r * n..(r + 1) * n],
            );
            self.model
                .covariance_times(&row[..posture], &mut buffers.scratch, &mut out[..posture]);
            if self.isotropy > 0.0 {
                for (o, v) in out[..posture].iter_mut().zip(&row[..posture]) {
                    *o += self.isotropy * v;
                }
            }
            // The free root's prior: independent, σ² per coordinate.
            if let Some(free) = &self.free_root {
                for (i, (o, v)) in out[posture..].iter_mut().zip(&row[posture..]).enumerate() {
                    *o = free.sigma[i / 3].powi(2) * v;
                }
            }
        }
        let mut m = DMatrix::<f64>::zeros(rows, rows);
        for a in 0..rows {
            for b in 0..rows {
                m[(a, b)] = (0..n)
                    .map(|c| self.jacobian[a * n + c] * buffers.cjt[b * n + c])
                    .sum();
            }
        }
        #[allow(clippy::cast_precision_loss)] // a handful of rows
        let trace = (0..rows).map(|a| m[(a, a)]).sum::<f64>() / rows as f64;
        let lambda = lambda_scale * trace.max(1e-30);
        let damped = m + DMatrix::<f64>::identity(rows, rows) * lambda;
        let Some(chol) = damped.cholesky() else {
            step.fill(0.0);
            return false;
        };
        let y = chol.solve(&(-DVector::from_column_slice(&self.residual)));
        for (c, out) in step.iter_mut().enumerate() {
            *out = if c < posture && self.clamped[c / 3] {
                0.0
            } else {
                (0..rows).map(|a| buffers.cjt[a * n + c] * y[a]).sum()
            };
        }
        for (k, &joint) in self.joints.iter().enumerate() {
            let v = DVec3::new(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
            if let Some(d) = hinge_direction(self.skeleton.limit(joint), v) {
                let block = DVec3::new(step[3 * k], step[3 * k + 1], step[3 * k + 2]);
                step[3 * k..3 * k + 3].copy_from_slice(&(d * d.dot(block)).to_array());
            }
        }
        true
    }

    /// Releases every hold but the locked joints'.
    pub(super) fn reset_holds(&mut self) {
        for (held, &joint) in self.clamped.iter_mut().zip(&self.joints) {
            *held = matches!(self.skeleton.limit(joint), JointLimit::Locked);
        }
    }

    /// Holds the joints that rest on their limit and whose part of `step` points out of it
    /// (a hundredth of the step already leaves the limit); true when any was newly held.
    /// Joints inside their limit keep their step: the projection stops them on the boundary.
    pub(super) fn hold_joints_leaving_limits(&mut self, x: &[f64], step: &[f64]) -> bool {
        let mut newly = false;
        for (k, &joint) in self.joints.iter().enumerate() {
            if self.clamped[k] {
                continue;
            }
            let limit = self.skeleton.limit(joint);
            if limit.is_free() {
                continue;
            }
            let v = DVec3::new(
                x[3 * k] + 0.01 * step[3 * k],
                x[3 * k + 1] + 0.01 * step[3 * k + 1],
                x[3 * k + 2] + 0.01 * step[3 * k + 2],
            );
            let rotation = self.model.mean_rotations()[k] * DQuat::from_scaled_axis(v);
            let delta = self.skeleton.rest(joint).rotation.conjugate() * rotation;
            if !limit.contains(delta) {
                self.clamped[k] = true;
                newly = true;
            }
        }
        newly
    }

    /// Every effector within the task's tolerances at `self.fk`.
    pub(super) fn reached(&self, tolerance: crate::Tolerance) -> bool {
        self.task
            .effectors
            .iter()
            .filter(|e| e.weight > 0.0)
            .all(|e| {
                let position = e
                    .goal
                    .position
                    .is_none_or(|g| self.fk.position(e.joint).distance(g) <= tolerance.position);
                let orientation = e.goal.orientation.is_none_or(|g| {
                    rotation_vector(self.fk.rotation(e.joint) * g.conjugate()).length()
                        <= tolerance.rotation
                });
                position && orientation
            })
    }

    /// Marks the joints whose limit binds in `pose`: the unprojected posture pointing out of it.
    pub(super) fn mark_active(&mut self, pose: &LocalPose) {
        let n = self.model.len();
        let mut x = vec![0.0; n];
        self.model.encode(pose, &self.joints, &mut x);
        for (k, &joint) in self.joints.iter().enumerate() {
            let rest = self.skeleton.rest(joint).rotation;
            let delta = rest.conjugate() * pose[joint].rotation;
            let limit = self.skeleton.limit(joint);
            // On the boundary: a small step further from rest leaves the limit.
            let further = DQuat::from_scaled_axis(rotation_vector(delta) * 0.01) * delta;
            self.active[k] = !limit.is_free() && limit.violation(further) > 0.0;
        }
    }

    /// The names of the joints marked active.
    pub(super) fn active_limit_names(&self) -> Vec<String> {
        self.joints
            .iter()
            .zip(&self.active)
            .filter(|&(_, &a)| a)
            .map(|(&j, _)| self.skeleton.name(j).to_owned())
            .collect()
    }
}

/// For a hinge, the unit direction in posture coordinates (at rotation vector `v`) that turns
/// the joint about its axis: `J_r(v)⁻¹ a`, normalised (`exp(v + ε d) = exp(v) · rot(a, ε')`).
pub(super) fn hinge_direction(limit: &JointLimit, v: DVec3) -> Option<DVec3> {
    let JointLimit::Hinge(hinge) = limit else {
        return None;
    };
    let jr = right_jacobian(v);
    let d = if jr.determinant().abs() > 1e-9 {
        jr.inverse() * hinge.axis
    } else {
        hinge.axis
    };
    d.try_normalize()
}

/// The refinement step's buffers.
#[derive(Default)]
pub(super) struct StepBuffers {
    /// `C Jᵀ`, one `3J` column per residual row.
    pub(super) cjt: Vec<f64>,
    pub(super) scratch: Vec<f64>,
}

/// The right Jacobian of SO(3) at rotation vector `v`: `exp(v + δ) ≈ exp(v) · exp(J_r(v) δ)`.
pub(super) fn right_jacobian(v: DVec3) -> DMat3 {
    let theta = v.length();
    let k = DMat3::from_cols(
        DVec3::new(0.0, v.z, -v.y),
        DVec3::new(-v.z, 0.0, v.x),
        DVec3::new(v.y, -v.x, 0.0),
    );
    let (a, b) = if theta < 1e-6 {
        (0.5, 1.0 / 6.0)
    } else {
        let t2 = theta * theta;
        (
            (1.0 - theta.cos()) / t2,
            (theta - theta.sin()) / (t2 * theta),
        )
    };
    DMat3::IDENTITY - k * a + k * k * b
}
