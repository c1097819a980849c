//! The shared iteration driver: one loop for every iterative solver.
//!
//! A solver supplies an [`IterativeStep`]: one sweep over the [`JointPath`] that asks the
//! [`Iteration`] context to turn joints. The driver owns everything else, the same way for every
//! solver:
//! - the loop: at most [`IterationSettings::max_iterations`] sweeps, stopping as soon as every
//!   goal is within the task's tolerances or when a sweep moves no joint by more than
//!   [`IterationSettings::min_step`] (nothing moves any more);
//! - for steps that converge linearly (CCD), a pattern move after each improving sweep that
//!   continues the sweep's change while that lowers the residual
//!   ([`IterationSettings::pattern_factor`]);
//! - every joint update: the per-step angle clamp, the rotation kept at unit length (a
//!   request's rounding drift is removed, so no step can scale a joint's frame), the joint
//!   limit projection ([`JointLimit::project`](ikarus_core::JointLimit::project)) and the
//!   partial forward kinematics; with a base joint on the far side of the root, the inverse
//!   rotation and the root move that keeps the base in place (seed 004, the IK overview:
//!   `M = M_base · M'_base⁻¹`);
//! - stopping on a diverged pose (a NaN residual counts as infinite, see `report`);
//! - the best pose seen (the returned pose is never worse than the start or any sweep), the
//!   blend toward the input pose, and the [`SolveReport`] measured by forward kinematics.

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::{HingeLimit, JointId, JointLimit, LocalPose, ModelPose, Skeleton, fk};

use crate::clock::Deadline;
use crate::iterative::path::{JointPath, PathJoint, Side};
pub use crate::iterative::settings::IterationSettings;
use crate::report::residuals;
use crate::{FitError, IkTask, SolveReport, SolveStatus};

/// Buffers of the driver, sized for one skeleton and reused across solves: with a warm
/// workspace a solve allocates nothing (except the names of active limits in the report).
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    model: Option<ModelPose>,
    input: Vec<ikarus_core::Transform>,
    pattern: PatternMove,
    best: Vec<ikarus_core::Transform>,
    /// `active` as it was when `best` was recorded.
    best_active: Vec<bool>,
    active: Vec<bool>,
    /// Hinge angle per joint as last set by `rotate_hinge` (NaN: unknown, read the pose).
    hinge_angles: Vec<f64>,
    path: JointPath,
}

impl Workspace {
    /// An empty workspace; it sizes itself on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the inputs, builds the path, sizes the buffers for `skeleton` and keeps the
    /// input pose.
    fn start(
        &mut self,
        skeleton: &Skeleton,
        task: &IkTask,
        settings: &IterationSettings,
        pose: &LocalPose,
    ) -> Result<(), FitError> {
        check_inputs(skeleton, task, settings, pose)?;
        self.path.rebuild(skeleton, task)?;
        let n = skeleton.len();
        self.reset(n, pose);
        let model = self.model.get_or_insert_with(|| ModelPose::new(skeleton));
        if model.len() != n {
            *model = ModelPose::new(skeleton);
        }
        Ok(())
    }

    /// Clears the per-solve buffers for `n` joints and keeps the input pose.
    fn reset(&mut self, n: usize, pose: &LocalPose) {
        self.active.clear();
        self.active.resize(n, false);
        self.hinge_angles.clear();
        self.hinge_angles.resize(n, f64::NAN);
        self.input.clear();
        self.input.extend_from_slice(pose.transforms());
    }
}

/// The state of the pattern moves of one solve (see [`IterationSettings::pattern_factor`]).
#[derive(Clone, Debug, Default)]
struct PatternMove {
    /// The largest factor; 0 when the solve makes no pattern moves.
    cap: f64,
    /// The local pose before the sweep.
    before: Vec<ikarus_core::Transform>,
    /// The local pose after the sweep and its `active` flags, restored when the move fails.
    after: Vec<ikarus_core::Transform>,
    after_active: Vec<bool>,
}

impl PatternMove {
    /// Ready for a solve by a step that does (`offered`) or does not take pattern moves.
    fn start(&mut self, settings: &IterationSettings, offered: bool) {
        self.cap = if offered {
            settings.pattern_factor
        } else {
            0.0
        };
    }

    fn enabled(&self) -> bool {
        self.cap > 0.0
    }
}

/// One solver's sweep over the path.
pub trait IterativeStep {
    /// Called once before the first sweep (after the path is built and the start pose
    /// projected onto the limits), e.g. to precompute per-joint weights.
    fn prepare(&mut self, _ctx: &mut Iteration<'_>) {}

    /// One sweep: turn path joints through `ctx`.
    fn sweep(&mut self, ctx: &mut Iteration<'_>);

    /// True when the driver may follow an improving sweep with a pattern move (see
    /// [`IterationSettings::pattern_factor`]): for steps whose sweeps converge linearly and
    /// repeat nearly the same change (coordinate descent). Default false.
    fn pattern_moves(&self) -> bool {
        false
    }
}

/// What a step sees and changes during one sweep.
pub struct Iteration<'a> {
    skeleton: &'a Skeleton,
    task: &'a IkTask,
    settings: &'a IterationSettings,
    pose: &'a mut LocalPose,
    model: &'a mut ModelPose,
    path: &'a JointPath,
    active: &'a mut [bool],
    hinge_angles: &'a mut [f64],
    /// Where the base joint must stay, model space.
    base_target: Option<(JointId, DAffine3, DQuat)>,
    largest_step: f64,
    /// During a sweep: effector-side updates carry only the effectors.
    lazy: bool,
    /// Some joints' model transforms are out of date.
    stale: bool,
}

impl Iteration<'_> {
    /// The skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        self.skeleton
    }

    /// The task.
    pub fn task(&self) -> &IkTask {
        self.task
    }

    /// The path joints, tip first.
    pub fn path(&self) -> &JointPath {
        self.path
    }

    /// The current model pose (kept up to date after every joint update).
    pub fn model(&self) -> &ModelPose {
        self.model
    }

    /// The current local pose.
    pub fn pose(&self) -> &LocalPose {
        self.pose
    }

    /// Turns path joint `pj` so that its effector side turns by `model_rotation` (a rotation
    /// in model space about the joint's origin). The driver clamps the angle to
    /// [`IterationSettings::max_step_angle`], inverts it for a base-side joint (and moves the
    /// root to keep the base fixed), projects the joint onto its limit and updates forward
    /// kinematics. Returns the model-space rotation the effector side actually made.
    pub fn rotate(&mut self, pj: PathJoint, model_rotation: DQuat) -> DQuat {
        let r = clamp_angle(model_rotation, self.settings.max_step_angle);
        let parent = self
            .skeleton
            .parent(pj.joint)
            .map_or(DQuat::IDENTITY, |p| self.model.rotation(p));
        let r_joint = match pj.side {
            Side::Effector => r,
            Side::Base => r.conjugate(),
        };
        let old = self.pose[pj.joint].rotation;
        let requested = (parent.conjugate() * r_joint * parent * old).normalize();
        let applied = self.set_rotation(pj, requested);
        let change = parent * applied * old.conjugate() * parent.conjugate();
        match pj.side {
            Side::Effector => change,
            Side::Base => change.conjugate(),
        }
    }

    /// Turns the hinge path joint `pj` (whose limit is `hinge`) so its effector side turns by
    /// `angle` radians about the hinge axis. Unlike [`Iteration::rotate`] followed by the
    /// projection, the joint moves along its range and stops at the bound it runs into, the
    /// way a real hinge does, so a warm-started solve never jumps across the forbidden arc.
    /// Returns the angle actually turned (effector side).
    pub fn rotate_hinge(&mut self, pj: PathJoint, hinge: &HingeLimit, angle: f64) -> f64 {
        let step = angle.clamp(-self.settings.max_step_angle, self.settings.max_step_angle);
        let step = match pj.side {
            Side::Effector => step,
            Side::Base => -step,
        };
        let current = self.hinge_angle(pj, hinge);
        let turned = self.set_hinge_angle(pj, hinge, current + step) - current;
        match pj.side {
            Side::Effector => turned,
            Side::Base => -turned,
        }
    }

    /// The joint's own angle about its hinge axis relative to rest (the quantity `hinge`'s
    /// `[min, max]` bounds), radians. For a [`Side::Base`] joint the effector side turns by
    /// minus this angle's changes.
    pub fn hinge_angle(&self, pj: PathJoint, hinge: &HingeLimit) -> f64 {
        let joint = pj.joint;
        let cached = self.hinge_angles[joint.index()];
        if cached.is_nan() {
            let rest = self.skeleton.rest(joint).rotation;
            hinge.angle(rest.conjugate() * self.pose[joint].rotation)
        } else {
            cached
        }
    }

    /// Sets the hinge path joint `pj` (whose limit is `hinge`) to `angle` radians about its
    /// axis relative to rest, clamped to the range (no per-step clamp), updates forward
    /// kinematics like [`Iteration::rotate_hinge`] and returns the angle set. Used by solvers
    /// that keep hinge angles inside boxes themselves or undo a trial step.
    pub fn set_hinge_angle(&mut self, pj: PathJoint, hinge: &HingeLimit, angle: f64) -> f64 {
        let (new_angle, old) = self.write_hinge(pj, hinge, angle);
        self.refresh(pj, &old);
        new_angle
    }

    /// As [`Iteration::set_hinge_angle`], but for an effector-side joint forward kinematics
    /// is deferred: nothing in the model moves, not even the effectors, until
    /// [`Iteration::update_model`] (which the caller must run before reading the model; the
    /// driver runs it after the sweep). Setting several hinges this way and updating once
    /// costs one forward kinematics pass instead of one partial update per joint, the fast
    /// path of solvers that move every joint at once (Levenberg–Marquardt). A base-side
    /// joint is updated at once, as by [`Iteration::set_hinge_angle`].
    pub fn set_hinge_angle_deferred(
        &mut self,
        pj: PathJoint,
        hinge: &HingeLimit,
        angle: f64,
    ) -> f64 {
        let (new_angle, old) = self.write_hinge(pj, hinge, angle);
        match pj.side {
            Side::Effector => self.stale = true,
            Side::Base => self.refresh(pj, &old),
        }
        new_angle
    }

    /// Clamps `angle` to the hinge's range and writes it into the pose (no forward
    /// kinematics); returns the angle set and the joint's previous local transform.
    fn write_hinge(
        &mut self,
        pj: PathJoint,
        hinge: &HingeLimit,
        angle: f64,
    ) -> (f64, ikarus_core::Transform) {
        let joint = pj.joint;
        let current = self.hinge_angle(pj, hinge);
        let new_angle = if hinge.is_full_circle() {
            angle
        } else {
            angle.clamp(hinge.min, hinge.max)
        };
        self.active[joint.index()] = new_angle != angle;
        self.hinge_angles[joint.index()] = new_angle;
        self.largest_step = self.largest_step.max((new_angle - current).abs());
        let old = self.pose[joint];
        let rest = self.skeleton.rest(joint).rotation;
        self.pose[joint].rotation =
            (rest * DQuat::from_axis_angle(hinge.axis, new_angle)).normalize();
        (new_angle, old)
    }

    /// Declares that this sweep left the pose where it started (a trial step was undone):
    /// the driver treats the sweep as one that moved nothing, so it restarts (or stops) at
    /// once instead of waiting out the stall window.
    pub fn settle(&mut self) {
        self.largest_step = 0.0;
    }

    /// Brings every joint's model transform up to date. During a sweep an effector-side
    /// update only carries the effectors along (the other joints go stale until the sweep
    /// ends); a step that wants fresh joint positions mid-sweep (e.g. to rebuild a Jacobian
    /// after a trial step) calls this first. Costs one forward kinematics pass when stale.
    pub fn update_model(&mut self) {
        if self.stale {
            fk::forward_kinematics(self.skeleton, self.pose, self.model);
            self.stale = false;
        }
    }

    /// Sets path joint `pj`'s local rotation (parent space) to the projection of `requested`
    /// onto its limit, updates forward kinematics (and the root, for a base-side joint), and
    /// returns the rotation applied. Records whether the limit was binding. The per-step clamp
    /// does not apply here.
    pub fn set_rotation(&mut self, pj: PathJoint, requested: DQuat) -> DQuat {
        let old = self.pose[pj.joint];
        let new = self.write_rotation(pj, requested);
        self.refresh(pj, &old);
        new
    }

    /// As [`Iteration::set_rotation`], but for an effector-side joint forward kinematics is
    /// deferred: the rotation is projected onto the limit and written, nothing in the model
    /// moves (not even the effectors) until [`Iteration::update_model`], which the caller must
    /// run before reading the model (the driver runs it after the sweep). A step that places
    /// points by the rotations it applied (FABRIK) sets every joint this way and pays one
    /// forward kinematics pass per sweep instead of one partial update per joint. A base-side
    /// joint is updated at once, as by [`Iteration::set_rotation`].
    pub fn set_rotation_deferred(&mut self, pj: PathJoint, requested: DQuat) -> DQuat {
        match pj.side {
            Side::Effector => {
                self.stale = true;
                self.write_rotation(pj, requested)
            }
            Side::Base => self.set_rotation(pj, requested),
        }
    }

    /// Projects `requested` onto `pj`'s limit and writes it into the pose (no forward
    /// kinematics); returns the rotation set, always a unit quaternion (see [`unit`]).
    #[inline]
    fn write_rotation(&mut self, pj: PathJoint, requested: DQuat) -> DQuat {
        let requested = unit(requested);
        let joint = pj.joint;
        if !requested.is_finite() {
            // A diverged step (NaN, or a zero quaternion) changes nothing: a limit's
            // projection of NaN is no legal rotation (soak seed 1, task 10050).
            return self.pose[joint].rotation;
        }
        let limit = self.skeleton.limit(joint);
        let new = if limit.is_free() {
            self.active[joint.index()] = false;
            requested
        } else {
            let rest = self.skeleton.rest(joint).rotation;
            let delta = rest.conjugate() * requested;
            let projected = limit.project(delta);
            self.active[joint.index()] = projected != delta;
            if projected == delta {
                requested
            } else {
                (rest * projected).normalize()
            }
        };
        self.hinge_angles[joint.index()] = f64::NAN;
        let old = self.pose[joint].rotation;
        // Chord length, the angle to first order (no trigonometry in the inner loop).
        let chord = if old.dot(new) < 0.0 {
            old + new
        } else {
            old - new
        };
        // (The square root only when the largest step grows.)
        let chord_squared = 4.0 * chord.length_squared();
        if chord_squared > self.largest_step * self.largest_step {
            self.largest_step = chord_squared.sqrt();
        }
        self.pose[joint].rotation = new;
        new
    }

    /// Tries the pattern move from `pattern.before` to the current pose after a sweep that
    /// shrank the residual score by `ratio` (see [`IterationSettings::pattern_factor`]), on an
    /// up-to-date model: keeps it (model up to date, returns the residuals) when `better`
    /// accepts its residuals, else restores the pose after the sweep. Either way the sweep's
    /// own largest step stays the one that decides whether anything still moves.
    fn try_pattern_move(
        &mut self,
        pattern: &mut PatternMove,
        ratio: f64,
        better: impl Fn((f64, f64)) -> bool,
    ) -> Option<(f64, f64)> {
        let largest = self.largest_step;
        refill(&mut pattern.after, self.pose.transforms());
        refill(&mut pattern.after_active, self.active);
        let factor = (ratio / (1.0 - ratio)).min(pattern.cap);
        self.pattern_move(&pattern.before, factor);
        let trial = residuals(self.task, self.model);
        let kept = better(trial);
        if kept {
            self.update_model();
        } else {
            self.undo_pattern_move(&pattern.after, &pattern.after_active);
        }
        self.largest_step = largest;
        kept.then_some(trial)
    }

    /// The pattern move (see [`IterationSettings::pattern_factor`]): every path joint, at its
    /// rotation after the sweep, turns on by `factor` times its change from `before` (the
    /// local transforms before the sweep), then onto its limit, on an up-to-date model.
    /// Effector-side paths: like a sweep it carries only the effectors along (the model is
    /// stale afterwards: [`Iteration::update_model`] to keep the move,
    /// [`Iteration::undo_pattern_move`] to drop it). Paths through the root: every joint is
    /// written first, then one pass moves the root so the base stays put and updates the
    /// whole model (base-side joints move the root, which carries everything).
    fn pattern_move(&mut self, before: &[ikarus_core::Transform], factor: f64) {
        let through_root = self.through_root();
        self.lazy = true;
        for &pj in self.path.joints() {
            let j = pj.joint;
            let old = before[j.index()].rotation;
            let written = self.pose[j];
            if let JointLimit::Hinge(hinge) = *self.skeleton.limit(j) {
                let from = hinge.angle(self.skeleton.rest(j).rotation.conjugate() * old);
                let to = self.hinge_angle(pj, &hinge);
                // The change the short way round (a full-circle hinge may cross ±π).
                let change = wrap_angle(to - from);
                self.write_hinge(pj, &hinge, to + factor * change);
                if !through_root {
                    self.refresh(pj, &written);
                }
                continue;
            }
            // The change in the rest frame, without the directions the limit locks entirely
            // (their rounding noise would grow by `factor` at every move).
            let rest = self.skeleton.rest(j).rotation;
            let delta = rest.conjugate() * self.pose[j].rotation;
            let change = delta * (rest.conjugate() * old).conjugate();
            let change = if change.w < 0.0 { -change } else { change };
            let change = self.skeleton.limit(j).unlocked_part(change);
            let more = DQuat::from_scaled_axis(change.to_scaled_axis() * factor);
            // A move past π comes out with w < 0: the same turn, kept in the usual sign.
            let moved = (more * delta).normalize();
            let moved = if moved.w < 0.0 { -moved } else { moved };
            self.write_rotation(pj, (rest * moved).normalize());
            if !through_root {
                self.refresh(pj, &written);
            }
        }
        self.lazy = false;
        if through_root {
            self.keep_base();
        }
    }

    /// True when the path has base-side joints, whose changes move the root (see
    /// [`Iteration::keep_base`]).
    fn through_root(&self) -> bool {
        self.base_target.is_some() && self.path.joints().iter().any(|pj| pj.side == Side::Base)
    }

    /// Drops a pattern move: back to the local pose `after` and its `active` flags, and the
    /// effectors (the only joints the move carried; on a path through the root, every joint
    /// of the tree) back to where `after` puts them.
    fn undo_pattern_move(&mut self, after: &[ikarus_core::Transform], active: &[bool]) {
        self.pose.transforms_mut().copy_from_slice(after);
        self.active.copy_from_slice(active);
        for &pj in self.path.joints() {
            self.hinge_angles[pj.joint.index()] = f64::NAN;
        }
        if self.through_root()
            && let Some(root) = self.path.root()
        {
            fk::update_subtree(self.skeleton, self.pose, self.model, root);
            self.stale = false;
            return;
        }
        // An effector below another effector is recomputed with that one's subtree.
        let effectors = &self.task.effectors;
        for e in effectors {
            let covered = effectors
                .iter()
                .any(|a| a.joint != e.joint && self.skeleton.is_ancestor_or_self(a.joint, e.joint));
            if !covered {
                fk::update_subtree(self.skeleton, self.pose, self.model, e.joint);
            }
        }
        self.stale = false;
    }

    /// Restores `best`, then moves every path joint at random: a bounded hinge to an angle
    /// drawn uniformly from its whole range (TRAC-IK's random restart; a hinge's range is its
    /// natural scale, and uniform draws never pile joints up on their stops the way projected
    /// random rotations do), a full-circle hinge by up to `angle` radians either way, any
    /// other joint by a random rotation of up to `angle` projected onto its limit.
    fn kick(&mut self, best: &[ikarus_core::Transform], rng: &mut SplitMix, angle: f64) {
        self.pose.transforms_mut().copy_from_slice(best);
        self.hinge_angles.fill(f64::NAN);
        fk::forward_kinematics(self.skeleton, self.pose, self.model);
        for &pj in self.path.joints() {
            if let JointLimit::Hinge(hinge) = *self.skeleton.limit(pj.joint) {
                let current = self.hinge_angle(pj, &hinge);
                let (low, high) = if hinge.is_full_circle() {
                    (current - angle, current + angle)
                } else {
                    (hinge.min, hinge.max)
                };
                self.set_hinge_angle_deferred(pj, &hinge, low + (high - low) * rng.next_f64());
                continue;
            }
            let turn = DQuat::IDENTITY.slerp(rng.rotation(), angle / std::f64::consts::PI);
            let rotation = self.pose[pj.joint].rotation * turn;
            self.set_rotation_deferred(pj, rotation);
        }
        self.update_model();
    }

    /// Forward kinematics after a change at `pj` (whose local transform was `old`), and the
    /// root move for base-side joints. During a sweep an effector-side change only carries the
    /// effectors along (see [`fk::carry_descendant`]): the step works from the tip toward the
    /// root and never reads the joints in between, which the driver recomputes after the sweep.
    fn refresh(&mut self, pj: PathJoint, old: &ikarus_core::Transform) {
        if self.lazy && pj.side == Side::Effector {
            let effectors = &self.task.effectors;
            for (i, e) in effectors.iter().enumerate() {
                let first = effectors[..i].iter().all(|f| f.joint != e.joint);
                if first && self.skeleton.is_ancestor_or_self(pj.joint, e.joint) {
                    fk::carry_descendant(
                        self.skeleton,
                        self.pose,
                        self.model,
                        pj.joint,
                        old,
                        e.joint,
                    );
                }
            }
            self.stale = true;
            return;
        }
        self.stale = false;
        match pj.side {
            Side::Base => self.keep_base(),
            Side::Effector => fk::update_subtree(self.skeleton, self.pose, self.model, pj.joint),
        }
    }

    /// Forward kinematics of the path's tree, then the root moved so the base joint is back
    /// where it started (seed 004, the IK overview: `M = M_base · M'_base⁻¹`), then forward
    /// kinematics again: the whole tree up to date. Does nothing without a base.
    fn keep_base(&mut self) {
        let (Some((base, target, target_rotation)), Some(root)) =
            (self.base_target, self.path.root())
        else {
            return;
        };
        fk::update_subtree(self.skeleton, self.pose, self.model, root);
        let rotation = (target_rotation * self.model.rotation(base).conjugate()).normalize();
        let translation = target.translation - rotation * self.model.position(base);
        let root_local = &mut self.pose[root];
        root_local.rotation = (rotation * root_local.rotation).normalize();
        root_local.translation = rotation * root_local.translation + translation;
        fk::update_subtree(self.skeleton, self.pose, self.model, root);
        self.stale = false;
    }
}

/// Largest `| |q|² − 1 |` a written rotation keeps as it is: a product of a few unit
/// quaternions (about 50 rounding units).
const UNIT_TOLERANCE: f64 = 1e-14;

/// `q` scaled to unit length, unless it is within [`UNIT_TOLERANCE`] of it (then unchanged,
/// so a solver's unit request is granted bit for bit).
///
/// Every rotation written into the pose goes through here. A step's request is a product of
/// rotations read from the model, which forward kinematics multiplies without normalizing; a
/// step that builds the next sweep's requests from the pose (FABRIK's frames) multiplies the
/// norm error sweep after sweep (tenfold per sweep on 13-joint paths). A local rotation off
/// unit length scales its joint's frame: on a base-side joint no rigid move of the root can
/// restore the base's model frame (soak finding: the base kept its position, its frame off by
/// 0.3 in matrix entries), and effector-side bones change length.
#[inline]
fn unit(q: DQuat) -> DQuat {
    let norm_squared = q.length_squared();
    if (norm_squared - 1.0).abs() <= UNIT_TOLERANCE {
        q
    } else {
        q * norm_squared.sqrt().recip()
    }
}

fn clamp_angle(q: DQuat, max_angle: f64) -> DQuat {
    let q = if q.w < 0.0 { -q } else { q };
    if max_angle >= std::f64::consts::PI {
        // No rotation turns by more than π (the default: no clamp, no trigonometry).
        return q;
    }
    let angle = 2.0 * q.xyz().length().atan2(q.w);
    if angle <= max_angle || angle == 0.0 {
        return q;
    }
    DQuat::IDENTITY.slerp(q, max_angle / angle)
}

impl Workspace {
    /// Runs `step` on `task` with the shared loop (see the module docs). `pose` is the start pose
    /// on entry and the best pose found on exit.
    ///
    /// Kept as one function of about 120 lines: the sweeps, restarts, stall test and best-pose
    /// bookkeeping every iterative solver shares read in one place; what differs per solver is in
    /// its [`IterativeStep`].
    #[allow(clippy::too_many_lines)] // one loop, read in one place (above)
    pub fn run<S: IterativeStep>(
        &mut self,
        skeleton: &Skeleton,
        task: &IkTask,
        settings: &IterationSettings,
        pose: &mut LocalPose,
        step: &mut S,
    ) -> SolveReport {
        let workspace = self;
        if let Err(reason) = workspace.start(skeleton, task, settings, pose) {
            return SolveReport::invalid(reason);
        }
        let model = workspace.model.as_mut().expect("sized by start");
        fk::forward_kinematics(skeleton, pose, model);
        let base_target = task.base.map(|b| (b, model[b], model.rotation(b)));
        let mut ctx = Iteration {
            skeleton,
            task,
            settings,
            pose,
            model,
            path: &workspace.path,
            active: &mut workspace.active,
            hinge_angles: &mut workspace.hinge_angles,
            base_target,
            largest_step: 0.0,
            lazy: false,
            stale: false,
        };
        // Start from a legal pose: every path joint on its limit (one forward kinematics pass).
        for &pj in ctx.path.joints() {
            let rotation = ctx.pose[pj.joint].rotation;
            ctx.set_rotation_deferred(pj, rotation);
        }
        ctx.update_model();
        let score = |(p, r): (f64, f64)| {
            p / task.tolerance.position.max(1e-300) + r / task.tolerance.rotation.max(1e-300)
        };
        let converged =
            |(p, r): (f64, f64)| p <= task.tolerance.position && r <= task.tolerance.rotation;
        let mut current = residuals(task, ctx.model);
        let (mut best_score, mut best_converged) = (score(current), converged(current));
        refill(&mut workspace.best, ctx.pose.transforms());
        refill(&mut workspace.best_active, ctx.active);
        step.prepare(&mut ctx);
        let offered = step.pattern_moves();
        workspace.pattern.start(settings, offered);
        let mut iterations = 0;
        let mut restarts = 0;
        let mut rng = SplitMix(settings.seed);
        // Best score at the start of the current stall window, and the sweep that opened it.
        let mut window = (best_score, 0);
        let deadline = settings.deadline();
        while iterations < settings.max_iterations && !converged(current) && !ctx.path.is_empty() {
            // Out of time, or diverged (a NaN or overflowing pose, say from goals near f64::MAX,
            // that a restart did not cure): the best pose so far is returned.
            if deadline.is_some_and(Deadline::passed) || !score(current).is_finite() {
                break;
            }
            ctx.largest_step = 0.0;
            let before_score = score(current);
            if workspace.pattern.enabled() {
                refill(&mut workspace.pattern.before, ctx.pose.transforms());
            }
            ctx.lazy = true;
            step.sweep(&mut ctx);
            ctx.lazy = false;
            if ctx.stale {
                fk::forward_kinematics(skeleton, ctx.pose, ctx.model);
                ctx.stale = false;
            }
            iterations += 1;
            current = residuals(task, ctx.model);
            let mut s = score(current);
            // After an improving sweep, the pattern move while it improves further.
            if workspace.pattern.enabled()
                && s < before_score
                && !converged(current)
                && let Some(trial) =
                    ctx.try_pattern_move(&mut workspace.pattern, s / before_score, |r| score(r) < s)
            {
                current = trial;
                s = score(trial);
            }
            // Converged first (a converged pose may score higher), then the lower score.
            if (converged(current), -s) > (best_converged, -best_score) {
                (best_score, best_converged) = (s, converged(current));
                workspace.best.copy_from_slice(ctx.pose.transforms());
                workspace.best_active.copy_from_slice(ctx.active);
            }
            let still = ctx.largest_step < settings.min_step;
            // Stalled: over the window the score shrank by less than 10%.
            let stalled = restarts < settings.restarts
                && iterations - window.1 >= settings.stall_window
                && s > 0.9 * window.0;
            if iterations - window.1 >= settings.stall_window {
                window = (s, iterations);
            }
            if still || stalled {
                if restarts == settings.restarts {
                    break;
                }
                // Start again from the best pose kicked by random rotations, small first (enough
                // to unfold a straight chain), then larger, the last ones uniform.
                restarts += 1;
                let kick = (0.25 * f64::from(1u32 << restarts.min(4))).min(std::f64::consts::PI);
                ctx.kick(&workspace.best, &mut rng, kick);
                current = residuals(task, ctx.model);
                window = (score(current), iterations);
            }
        }
        pose.transforms_mut().copy_from_slice(&workspace.best);
        if settings.blend < 1.0 {
            blend(skeleton, workspace, task, pose, settings.blend);
        }
        let mut report = finish(skeleton, task, workspace, pose, iterations);
        report.restarts = restarts;
        report
    }
}

/// The report of the returned pose: residuals by FK, active limits, unreachable when proven.
fn finish(
    skeleton: &Skeleton,
    task: &IkTask,
    workspace: &mut Workspace,
    pose: &LocalPose,
    iterations: u32,
) -> SolveReport {
    let model = workspace.model.as_mut().expect("sized by run");
    fk::forward_kinematics(skeleton, pose, model);
    let (position_error, rotation_error) = residuals(task, model);
    let mut report =
        SolveReport::from_residuals(task, position_error, rotation_error, iterations, false);
    let path = &workspace.path;
    // Active: the joint's last update asked for more than its limit allows.
    for pj in path.joints() {
        if workspace.best_active[pj.joint.index()] {
            report
                .active_limits
                .push(skeleton.name(pj.joint).to_owned());
        }
    }
    report.limits_active = !report.active_limits.is_empty();
    if report.status == SolveStatus::MaxIterations
        && out_of_reach(skeleton, task, pose, model, path)
    {
        report.status = SolveStatus::Unreachable;
    }
    report
}

/// Interpolates every path joint (and the root, when the base moved it) between the input
/// pose and the solution, then re-applies limits and the base constraint.
fn blend(skeleton: &Skeleton, workspace: &Workspace, task: &IkTask, pose: &mut LocalPose, t: f64) {
    let root = task.base.and(workspace.path.root());
    let joints = workspace.path.joints().iter().map(|p| p.joint).chain(root);
    for j in joints {
        let input = workspace.input[j.index()];
        let solved = pose[j];
        pose[j] = input.interpolate(&solved, t);
        let rest = skeleton.rest(j).rotation;
        let projected = skeleton
            .limit(j)
            .project(rest.conjugate() * pose[j].rotation);
        pose[j].rotation = (rest * projected).normalize();
    }
}

/// True when a position goal is farther from the path's fixed pivot than the chain can reach.
/// Only decided without a base joint and for uniformly scaled chains, where bone lengths do
/// not change with rotation.
fn out_of_reach(
    skeleton: &Skeleton,
    task: &IkTask,
    pose: &LocalPose,
    model: &ModelPose,
    path: &JointPath,
) -> bool {
    if task.base.is_some() {
        return false;
    }
    let uniform = |j: JointId| {
        skeleton.path_to_root(j).all(|a| {
            let s = pose[a].scale;
            s.x == s.y && s.y == s.z
        })
    };
    task.effectors.iter().enumerate().any(|(i, e)| {
        let Some(target) = e.goal.position else {
            return false;
        };
        if e.weight <= 0.0 || !uniform(e.joint) {
            return false;
        }
        // Joints that move this effector, tip first; the last one's parent side is fixed.
        let mut reach = 0.0;
        let mut previous: DVec3 = model.position(e.joint);
        let mut pivot = None;
        for (k, pj) in path.joints().iter().enumerate() {
            if path.affects(k).contains(&(i as u16)) {
                let p = model.position(pj.joint);
                reach += (previous - p).length();
                previous = p;
                pivot = Some(p);
            }
        }
        pivot.is_some_and(|p| (target - p).length() > reach + task.tolerance.position)
    })
}

/// The task, the settings and the start pose are usable.
fn check_inputs(
    skeleton: &Skeleton,
    task: &IkTask,
    settings: &IterationSettings,
    pose: &LocalPose,
) -> Result<(), FitError> {
    task.validate(skeleton)?;
    settings.validate()?;
    if pose.len() != skeleton.len() || !pose.is_finite() {
        return Err(FitError::StartPose);
    }
    Ok(())
}

/// Makes `buffer` a copy of `values`, reusing its allocation.
fn refill<T: Copy>(buffer: &mut Vec<T>, values: &[T]) {
    buffer.clear();
    buffer.extend_from_slice(values);
}

/// splitmix64: the deterministic generator of restart poses (and of `robot::lm`'s restart
/// draws).
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    /// The next value, uniform in `[0, 1)`.
    pub(crate) fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniformly distributed rotation (Shoemake's method).
    fn rotation(&mut self) -> DQuat {
        let (u1, u2, u3) = (self.next_f64(), self.next_f64(), self.next_f64());
        let tau = std::f64::consts::TAU;
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        DQuat::from_xyzw(
            a * (tau * u2).sin(),
            a * (tau * u2).cos(),
            b * (tau * u3).sin(),
            b * (tau * u3).cos(),
        )
    }
}

/// `angle` wrapped to `[-π, π]`.
fn wrap_angle(angle: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    angle - TAU * ((angle + PI) / TAU).floor()
}
