//! The full-body solve's stages (see the [module docs](super)): goals blended, the body by
//! Levenberg–Marquardt on the pelvis and spine, the limbs by the two-bone closed form, the head.

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};

use super::rig::{BodyRig, Limb};
use super::{BodyConfig, RootMode};
use crate::analytic::enforce_limits_into;
use crate::analytic::two_bone::{self, Pole, TwoBoneChain, TwoBoneOutput, TwoBoneSettings};
use crate::report::residuals;
use crate::{IkTask, SolveReport, SolveStatus};

/// Groups of spine joints that bend on their own (the joints are split evenly into them).
pub(crate) const SPINE_GROUPS: usize = 4;
/// Unknowns of the body stage: pelvis translation (3), pelvis rotation (3), and a bend (3)
/// per spine group.
const UNKNOWNS: usize = 6 + 3 * SPINE_GROUPS;
/// The most residuals: four limbs (1 each), hips, chest and head positions (3 each), hips
/// and chest rotations (3 each).
const RESIDUALS: usize = 19;
/// The fraction of a limb's length its goal must come within (a straight limb is the closed
/// form's singular pose).
const REACH: f64 = 0.9995;
/// How far the pelvis moves (metres) and turns (radians) for a unit of the body stage's
/// unknowns at stiffness 1, against a radian of spine bend: a body leans and bends before it
/// steps its pelvis aside.
const PELVIS_METRES: f64 = 0.2;
const PELVIS_RADIANS: f64 = 0.5;
/// The share of the task's position tolerance the body stage's residuals must come within
/// (as a root of its cost, m) to count as met: a third, so that the hips, chest and head
/// goals, which no closed form meets after it, are met with room: 3e-5 m at the default
/// tolerance. On the `body` bench's frames that takes 1.8 iterations on average (at most
/// 2.3e-5 m off), where a fixed 1e-5 m took 2.4 (7.8e-6 m).
const MET_SHARE: f64 = 0.3;
/// Bisection steps when the body's move is scaled back to keep the feet (a 1/1024 share of
/// the move at the last).
const BACK_OFF_STEPS: usize = 10;
/// The smallest relative gain of an iteration for the body stage to go on.
const MIN_GAIN: f64 = 1e-3;

/// The body stage's Jacobian, row-major: a residual's row is contiguous.
type Jacobian = [[f64; UNKNOWNS]; RESIDUALS];

/// What the body stage pulls on: the role of an effector and its blended goal.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Role {
    Hips,
    Chest,
    Head,
    /// Index into `BodyRig::limbs()` order: left arm, right arm, left leg, right leg.
    Limb(usize),
}

#[derive(Clone, Copy, Debug)]
struct Target {
    role: Role,
    position: Option<DVec3>,
    orientation: Option<DQuat>,
    /// `sqrt(weight) · pull`.
    strength: f64,
    /// A full pull (1): the effector holds the body back rather than follow it (a pinned
    /// foot).
    pinned: bool,
}

/// A spine joint as one evaluation of the body stage has it: its local rotation, and its
/// model frame and rotation (walked once from the hips, for every path that passes it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpineJoint {
    local: DQuat,
    frame: DAffine3,
    rotation: DQuat,
}

impl Default for SpineJoint {
    fn default() -> Self {
        Self {
            local: DQuat::IDENTITY,
            frame: DAffine3::IDENTITY,
            rotation: DQuat::IDENTITY,
        }
    }
}

/// The body stage's view of one evaluation: the pelvis and spine moved by `u`.
struct Body<'a> {
    skeleton: &'a Skeleton,
    rig: &'a BodyRig,
    start: &'a LocalPose,
    /// The hips' model frame and rotation the unknowns move from (the start, then each
    /// accepted step: the descent linearises about where it stands).
    hips: DAffine3,
    hips_rotation: DQuat,
    /// Each spine joint's local rotation and model origin and rotation there.
    spine_local: Vec<DQuat>,
    spine_origins: Vec<DVec3>,
    spine_rotations: Vec<DQuat>,
    /// Per unknown block, metres or radians per unit (the stiffnesses' inverses; 0 pins).
    scales: [f64; 3],
    /// The limbs found, in [`BodyRig::limbs`] order (the first `n` slots).
    limbs: [Option<&'a Limb>; 4],
    /// Per limb, its reach times [`REACH`].
    reaches: [f64; 4],
}

impl Body<'_> {
    /// Whether unknown `k` moves anything: the pelvis when free, a spine group with joints.
    fn moves(&self, k: usize) -> bool {
        let groups = self.rig.spine.len().min(SPINE_GROUPS);
        self.scales[(k / 3).min(2)] != 0.0 && (k < 6 || (k - 6) / 3 < groups)
    }

    /// The spine group of spine joint `k` and its share of the group's bend.
    fn group(&self, k: usize) -> (usize, f64) {
        self.rig.spine_groups[k]
    }

    /// Moves the state the unknowns start from to where some `u` takes it (`u` is then zero
    /// again): the hips, the spine's local rotations, and the spine's model frames.
    /// `(hips, rotation)` and `spine` are [`frames`](Self::frames) of `u`, as the residuals
    /// of `u` left them.
    fn fold(&mut self, (hips, rotation): (DAffine3, DQuat), spine: &[SpineJoint]) {
        self.hips = hips;
        self.hips_rotation = rotation;
        for (k, joint) in spine.iter().enumerate() {
            self.spine_local[k] = joint.local;
            self.spine_origins[k] = joint.frame.translation;
            self.spine_rotations[k] = joint.rotation;
        }
    }

    /// The Jacobian of the residuals `r` (for `u` = 0) by the unknowns: each point's motion
    /// under the pelvis's move and turn (about its origin) and each spine joint's turn about
    /// its own origin, shared within its group; rotation residuals turn with the frames.
    fn jacobian(&self, targets: &[Target], spine: &[SpineJoint], r: &[f64; RESIDUALS]) -> Jacobian {
        let mut j = [[0.0; UNKNOWNS]; RESIDUALS];
        let hips = (self.hips, self.hips_rotation);
        let origin = self.hips.translation;
        // Columns of a point `p` whose path passes the first `m` spine joints, for a row
        // functional `row(v)` of the point's velocity `v`.
        let point = |j: &mut Jacobian, row: usize, p: DVec3, m: usize, weights: DVec3| {
            for i in 0..3 {
                let e = DVec3::AXES[i];
                j[row][i] += self.scales[0] * weights.dot(e);
                j[row][3 + i] += self.scales[1] * weights.dot(e.cross(p - origin));
                for k in 0..m {
                    let (group, share) = self.group(k);
                    let v = e.cross(p - self.spine_origins[k]) * share * self.scales[2];
                    j[row][6 + 3 * group + i] += weights.dot(v);
                }
            }
        };
        let spine_before = |path: &[JointId]| {
            path.iter()
                .take_while(|p| self.rig.spine_slot[p.index()].is_some())
                .count()
        };
        for t in targets {
            match t.role {
                Role::Limb(k) => {
                    let (Some(goal), Some(limb)) =
                        (t.position, self.limbs.get(k).copied().flatten())
                    else {
                        continue;
                    };
                    if r[k] <= 0.0 {
                        continue;
                    }
                    let start = self.walk(hips, spine, &limb.path).0.translation;
                    let away = (goal - start).normalize_or_zero();
                    point(
                        &mut j,
                        k,
                        start,
                        spine_before(&limb.path),
                        -away * t.strength,
                    );
                }
                Role::Hips => {
                    for i in 0..3 {
                        if t.position.is_some() {
                            j[4 + i][i] = self.scales[0] * t.strength;
                        }
                        if t.orientation.is_some() {
                            j[7 + i][3 + i] = self.scales[1] * t.strength;
                        }
                    }
                }
                Role::Chest | Role::Head => {
                    let (path, at) = match t.role {
                        Role::Chest => (self.rig.chest.as_ref().map(|c| &c.1), 10),
                        _ => (self.rig.head.as_ref().map(|h| &h.1), 16),
                    };
                    let Some(path) = path else { continue };
                    let m = spine_before(path);
                    if t.position.is_some() {
                        let p = self.walk(hips, spine, path).0.translation;
                        for i in 0..3 {
                            point(&mut j, at + i, p, m, DVec3::AXES[i] * t.strength);
                        }
                    }
                    if let (Some(_), Role::Chest) = (t.orientation, t.role) {
                        for i in 0..3 {
                            j[13 + i][3 + i] = self.scales[1] * t.strength;
                            for k in 0..m {
                                let (group, share) = self.group(k);
                                j[13 + i][6 + 3 * group + i] += self.scales[2] * share * t.strength;
                            }
                        }
                    }
                }
            }
        }
        // The unknowns held still (a pinned pelvis, a spine group without joints) have no
        // column.
        for k in (0..UNKNOWNS).filter(|&k| !self.moves(k)) {
            for row in &mut j {
                row[k] = 0.0;
            }
        }
        j
    }

    /// The hips' model frame and rotation and the local rotation of each spine joint for
    /// unknowns `u`: the hips turned about their own origin, then moved; the spine's bend
    /// shared equally by its joints, each put onto its limit.
    fn frames(&self, u: &[f64; UNKNOWNS], spine: &mut [SpineJoint]) -> (DAffine3, DQuat) {
        let t = DVec3::new(u[0], u[1], u[2]) * self.scales[0];
        let r = DVec3::new(u[3], u[4], u[5]) * self.scales[1];
        let turn = DQuat::from_scaled_axis(r);
        let origin = self.hips.translation;
        let hips = DAffine3::from_translation(origin + t)
            * DAffine3::from_quat(turn)
            * DAffine3::from_translation(-origin)
            * self.hips;
        let hips_rotation = (turn * self.hips_rotation).normalize();
        let (mut frame, mut model_rotation) = (hips, hips_rotation);
        for (k, joint) in spine.iter_mut().enumerate() {
            let j = self.rig.spine[k];
            // Joint k bends with group k·G/n, whose bend its joints share equally.
            let (group, share) = self.group(k);
            let at = 6 + 3 * group;
            let b = DVec3::new(u[at], u[at + 1], u[at + 2]) * self.scales[2];
            let axis = self.spine_rotations[k].conjugate() * b;
            let turned = (self.spine_local[k] * DQuat::from_scaled_axis(axis * share)).normalize();
            // Onto the joint's limit: the descent sees the spine as it can bend.
            let mut local = self.start[j];
            local.rotation = onto_limit(self.skeleton, j, turned);
            frame *= local.to_affine();
            model_rotation *= local.rotation;
            *joint = SpineJoint {
                local: local.rotation,
                frame,
                rotation: model_rotation,
            };
        }
        (hips, hips_rotation)
    }

    /// The model frame and rotation at the end of `path` (from the hips, exclusive) given the
    /// hips' frame and rotation and the spine as [`frames`](Self::frames) placed it: from the
    /// last spine joint the path passes, the rest of the path as the input has it.
    fn walk(
        &self,
        (mut frame, mut rotation): (DAffine3, DQuat),
        spine: &[SpineJoint],
        path: &[JointId],
    ) -> (DAffine3, DQuat) {
        let m = path
            .iter()
            .take_while(|p| self.rig.spine_slot[p.index()].is_some())
            .count();
        if let Some(last) = m.checked_sub(1).map(|k| &spine[k]) {
            (frame, rotation) = (last.frame, last.rotation);
        }
        for &j in &path[m..] {
            let local = self.start[j];
            frame *= local.to_affine();
            rotation *= local.rotation;
        }
        (frame, rotation)
    }

    /// The residuals of `targets` for unknowns `u` into `out`; the hips' frame and rotation
    /// and the spine (`spine`) there, as [`frames`](Self::frames) gives them.
    fn residuals(
        &self,
        u: &[f64; UNKNOWNS],
        targets: &[Target],
        spine: &mut [SpineJoint],
        out: &mut [f64; RESIDUALS],
    ) -> (DAffine3, DQuat) {
        let hips = self.frames(u, spine);
        *out = [0.0; RESIDUALS];
        for t in targets {
            match t.role {
                Role::Limb(k) => {
                    let (Some(goal), Some(limb)) =
                        (t.position, self.limbs.get(k).copied().flatten())
                    else {
                        continue;
                    };
                    let start = self.walk(hips, spine, &limb.path).0.translation;
                    let beyond = (goal - start).length() - self.reaches[k];
                    out[k] = t.strength * beyond.max(0.0);
                }
                Role::Hips => {
                    let at = 4;
                    if let Some(p) = t.position {
                        put(out, at, (hips.0.translation - p) * t.strength);
                    }
                    if let Some(q) = t.orientation {
                        put(out, at + 3, rotation_error(q, hips.1) * t.strength);
                    }
                }
                Role::Chest => {
                    let Some((_, path)) = &self.rig.chest else {
                        continue;
                    };
                    let (frame, rotation) = self.walk(hips, spine, path);
                    let at = 10;
                    if let Some(p) = t.position {
                        put(out, at, (frame.translation - p) * t.strength);
                    }
                    if let Some(q) = t.orientation {
                        put(out, at + 3, rotation_error(q, rotation) * t.strength);
                    }
                }
                Role::Head => {
                    let (Some((_, path)), Some(p)) = (&self.rig.head, t.position) else {
                        continue;
                    };
                    let frame = self.walk(hips, spine, path).0;
                    put(out, 16, (frame.translation - p) * t.strength);
                }
            }
        }
        hips
    }
}

/// The body stage's damped least-squares step `δ = −(JᵀJ + μI)⁻¹ Jᵀr`, taken in its row form
/// `δ = −Jᵀ (JJᵀ + μI)⁻¹ r` (the same step) over the rows that are not zero (a limb inside its
/// reach, an effector absent): a task has fewer such rows than the body has unknowns (six
/// 6-D effectors give 9 against 18), so the Cholesky is of the smaller matrix. Hand-written
/// and of fixed size: a general 18×18 one spent most of its time on zeros.
struct Normal<'a> {
    jacobian: &'a Jacobian,
    /// The non-zero rows of `J` (the first `m`) and their residuals.
    rows: [usize; RESIDUALS],
    r: [f64; RESIDUALS],
    /// `JJᵀ` on them (lower triangle and diagonal).
    jjt: [[f64; RESIDUALS]; RESIDUALS],
    m: usize,
}

/// `a · b` with four running sums (independent chains of additions, not one long one).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            sums[k] += x[k] * y[k];
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
}

impl<'a> Normal<'a> {
    /// The step's equations for `jacobian` and `r`.
    fn new(jacobian: &'a Jacobian, r: &[f64; RESIDUALS]) -> Self {
        let mut normal = Self {
            jacobian,
            rows: [0; RESIDUALS],
            r: [0.0; RESIDUALS],
            jjt: [[0.0; RESIDUALS]; RESIDUALS],
            m: 0,
        };
        for (i, (row, &ri)) in jacobian.iter().zip(r).enumerate() {
            if row.iter().any(|&x| x != 0.0) {
                normal.rows[normal.m] = i;
                normal.r[normal.m] = ri;
                normal.m += 1;
            }
        }
        for i in 0..normal.m {
            let row = &jacobian[normal.rows[i]];
            for k in 0..=i {
                normal.jjt[i][k] = dot(row, &jacobian[normal.rows[k]]);
            }
        }
        normal
    }

    /// The step `δ` for damping `mu` (0 for the unknowns held still, whose columns are
    /// zero); `None` when the damped matrix is not positive definite.
    fn step(&self, mu: f64) -> Option<[f64; UNKNOWNS]> {
        let m = self.m;
        // L·Lᵀ = JJᵀ + μI, L lower and row-major (`l[q][k]`, k ≤ q).
        let mut l = [[0.0; RESIDUALS]; RESIDUALS];
        let mut inverse = [0.0; RESIDUALS];
        for p in 0..m {
            let (done, below) = l[..m].split_at_mut(p + 1);
            let row = &mut done[p];
            let d = self.jjt[p][p] + mu - dot(&row[..p], &row[..p]);
            if d.is_nan() || d <= 0.0 {
                return None;
            }
            row[p] = d.sqrt();
            inverse[p] = 1.0 / row[p];
            for (q, lq) in below.iter_mut().enumerate() {
                lq[p] = (self.jjt[p + 1 + q][p] - dot(&row[..p], &lq[..p])) * inverse[p];
            }
        }
        // L y = r, Lᵀ z = y, δ = −Jᵀ z.
        let mut z = [0.0; RESIDUALS];
        for p in 0..m {
            z[p] = (self.r[p] - dot(&l[p][..p], &z[..p])) * inverse[p];
        }
        for p in (0..m).rev() {
            let mut sum = z[p];
            for k in p + 1..m {
                sum -= l[k][p] * z[k];
            }
            z[p] = sum * inverse[p];
        }
        let mut step = [0.0; UNKNOWNS];
        for (&i, &zi) in self.rows[..m].iter().zip(&z) {
            for (x, &j) in step.iter_mut().zip(&self.jacobian[i]) {
                *x -= j * zi;
            }
        }
        step.iter().all(|x| x.is_finite()).then_some(step)
    }
}

/// How far `local` (joint `j`'s local rotation) is past the joint's limit, radians: 0 where
/// the limit's `contains` (its cheap test first, 1e-9 rad of tolerance) holds it.
fn past_limit(skeleton: &Skeleton, j: JointId, local: DQuat) -> f64 {
    let delta = skeleton.rest(j).rotation.conjugate() * local;
    skeleton.limit(j).excess(delta)
}

/// `local` (joint `j`'s local rotation) if its limit holds it, else projected onto the limit.
fn onto_limit(skeleton: &Skeleton, j: JointId, local: DQuat) -> DQuat {
    let rest = skeleton.rest(j).rotation;
    let limit = skeleton.limit(j);
    let delta = rest.conjugate() * local;
    if limit.contains(delta) {
        local
    } else {
        (rest * limit.project(delta)).normalize()
    }
}

/// `buffer`'s allocation, taken out of it, holding `items`.
fn refill<T>(buffer: &mut Vec<T>, items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = std::mem::take(buffer);
    v.clear();
    v.extend(items);
    v
}

fn put(out: &mut [f64; RESIDUALS], at: usize, v: DVec3) {
    out[at..at + 3].copy_from_slice(&v.to_array());
}

/// The rotation vector taking `goal` to `current` (radians; 1 m per radian in the residuals).
fn rotation_error(goal: DQuat, current: DQuat) -> DVec3 {
    let d = (goal.conjugate() * current).normalize();
    let d = if d.w < 0.0 { -d } else { d };
    goal * d.to_scaled_axis()
}

fn cost(r: &[f64; RESIDUALS]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// The buffers of a body solve (Pinocchio's "data" beside the rig's "model"), sized once for
/// a skeleton and its rig: a solve through [`BodyRig::solve_with`] allocates nothing but the
/// names of the limits it reports active.
#[derive(Clone, Debug)]
pub struct BodyScratch {
    model: ModelPose,
    original: LocalPose,
    blended: IkTask,
    targets: Vec<Target>,
    spine: Vec<SpineJoint>,
    spine_trial: Vec<SpineJoint>,
    spine_local: Vec<DQuat>,
    spine_origins: Vec<DVec3>,
    spine_rotations: Vec<DQuat>,
}

impl BodyScratch {
    /// The model frames (forward kinematics) of the pose the last solve through these buffers
    /// returned, when it was not refused as invalid input: a caller that needs them (a game
    /// engine writing world transforms) copies them instead of running FK again.
    #[must_use]
    pub fn model(&self) -> &ModelPose {
        &self.model
    }

    /// Exchanges the model frames of the last solve with `model` (no copy): `model` then
    /// holds [`model`](Self::model)'s frames, and these buffers `model`'s old ones, which the
    /// next solve overwrites. For a caller keeping its own FK of the solved pose; `model`
    /// must be of the same skeleton (else the next solve sizes these buffers again).
    pub fn swap_model(&mut self, model: &mut ModelPose) {
        std::mem::swap(&mut self.model, model);
    }

    /// Buffers for solving `rig` on `skeleton` (tasks of up to seven effectors need no
    /// more; more effectors grow them once).
    #[must_use]
    pub fn new(skeleton: &Skeleton, rig: &BodyRig) -> Self {
        let n = rig.spine.len();
        Self {
            model: ModelPose::new(skeleton),
            original: skeleton.rest_pose(),
            blended: IkTask {
                effectors: Vec::with_capacity(7),
                ..IkTask::default()
            },
            targets: Vec::with_capacity(7),
            spine: Vec::with_capacity(n),
            spine_trial: Vec::with_capacity(n),
            spine_local: Vec::with_capacity(n),
            spine_origins: Vec::with_capacity(n),
            spine_rotations: Vec::with_capacity(n),
        }
    }
}

impl BodyRig {
    /// Solves `task` on `pose` (the animated input on entry, the solved pose on exit): see the
    /// [module docs](super). Invalid tasks and effectors on bones the body solver does not
    /// drive give an `invalid_input` report and leave the pose untouched. The report is
    /// measured by FK against the goals as blended. Allocates its buffers: a caller solving
    /// every frame keeps a [`BodyScratch`] and calls [`solve_with`](Self::solve_with).
    pub fn solve(
        &self,
        skeleton: &Skeleton,
        task: &IkTask,
        config: &BodyConfig,
        pose: &mut LocalPose,
    ) -> SolveReport {
        let mut scratch = BodyScratch::new(skeleton, self);
        self.solve_with(skeleton, task, config, pose, &mut scratch)
    }

    /// [`solve`](Self::solve) with the caller's buffers: the same pose and report to the
    /// bit, and no allocation but the names of active limits in the report. A `scratch` made
    /// for another skeleton is made again.
    pub fn solve_with(
        &self,
        skeleton: &Skeleton,
        task: &IkTask,
        config: &BodyConfig,
        pose: &mut LocalPose,
        scratch: &mut BodyScratch,
    ) -> SolveReport {
        self.solve_from(skeleton, task, config, pose, scratch, false)
    }

    /// [`solve_with`](Self::solve_with) for a caller that keeps the model frames of `pose`
    /// (a game computes them for its grounder or its skinning): `model` must be the forward
    /// kinematics of `pose` on entry, and is that of the solved pose on return (of the pose
    /// as it came when the task is refused). The solve starts from it instead of running
    /// forward kinematics again; the same pose and report as
    /// [`solve_with`](Self::solve_with), bit for bit (tested).
    pub fn solve_in(
        &self,
        skeleton: &Skeleton,
        task: &IkTask,
        config: &BodyConfig,
        pose: &mut LocalPose,
        model: &mut ModelPose,
        scratch: &mut BodyScratch,
    ) -> SolveReport {
        if model.len() != skeleton.len() {
            // Not this skeleton's frames: solved as `solve_with`, the frames made anew.
            let report = self.solve_with(skeleton, task, config, pose, scratch);
            *model = scratch.model.clone();
            return report;
        }
        if scratch.model.len() != skeleton.len() || scratch.original.len() != skeleton.len() {
            *scratch = BodyScratch::new(skeleton, self);
        }
        // The caller's frames are the solve's starting frames, and the solved frames go back
        // to the caller: two exchanges, no copy.
        scratch.swap_model(model);
        let report = self.solve_from(skeleton, task, config, pose, scratch, true);
        scratch.swap_model(model);
        report
    }

    /// The solve; `model_current`: the scratch's model frames are already the forward
    /// kinematics of `pose`.
    #[allow(clippy::too_many_lines)] // the four stages in order, each a few lines
    fn solve_from(
        &self,
        skeleton: &Skeleton,
        task: &IkTask,
        config: &BodyConfig,
        pose: &mut LocalPose,
        scratch: &mut BodyScratch,
        model_current: bool,
    ) -> SolveReport {
        if let Err(reason) = task.validate(skeleton) {
            return SolveReport::invalid(reason);
        }
        if task.base.is_some() {
            return SolveReport::invalid(super::BodyRigError::Base);
        }
        if scratch.model.len() != skeleton.len() || scratch.original.len() != skeleton.len() {
            *scratch = BodyScratch::new(skeleton, self);
        }
        let BodyScratch {
            model,
            original,
            blended,
            targets,
            spine: scratch_spine,
            spine_trial: scratch_trial,
            spine_local,
            spine_origins,
            spine_rotations,
        } = scratch;
        let mut limbs = [None; 4];
        for (slot, limb) in limbs.iter_mut().zip(self.limbs()) {
            *slot = Some(limb);
        }
        if !model_current {
            fk::forward_kinematics(skeleton, pose, model);
        }

        // 1. Goals blended over the input.
        blended.effectors.clear();
        blended.effectors.extend_from_slice(&task.effectors);
        blended.base = task.base;
        blended.tolerance = task.tolerance;
        targets.clear();
        for e in &mut blended.effectors {
            let Some((role, bone)) = self.role_of(e.joint) else {
                return SolveReport::invalid(super::BodyRigError::Effector {
                    joint: skeleton.name(e.joint).to_owned(),
                });
            };
            // A full weight keeps the goal to the bit (the report is measured against it).
            let w = config.blend_of(bone);
            if w < 1.0 {
                e.goal.position = e.goal.position.map(|p| model.position(e.joint).lerp(p, w));
                e.goal.orientation = e
                    .goal
                    .orientation
                    .map(|q| model.rotation(e.joint).slerp(q, w).normalize());
            }
            if e.weight > 0.0 {
                targets.push(Target {
                    role,
                    position: e.goal.position,
                    orientation: e.goal.orientation,
                    strength: e.weight.sqrt() * config.pull_of(bone),
                    pinned: config.pull_of(bone) >= 1.0,
                });
            }
        }
        let (targets, blended, model) = (&targets[..], &*blended, model);

        // 2. The body.
        let parent = skeleton
            .parent(self.hips)
            .map_or(DAffine3::IDENTITY, |p| model[p]);
        let free = f64::from(u8::from(config.root == RootMode::Free));
        original.transforms_mut().copy_from_slice(pose.transforms());
        let mut body = Body {
            skeleton,
            rig: self,
            start: original,
            hips: model[self.hips],
            hips_rotation: model.rotation(self.hips),
            spine_local: refill(spine_local, self.spine.iter().map(|&j| pose[j].rotation)),
            spine_origins: refill(spine_origins, self.spine.iter().map(|&j| model.position(j))),
            spine_rotations: refill(
                spine_rotations,
                self.spine.iter().map(|&j| model.rotation(j)),
            ),
            scales: [
                PELVIS_METRES * free / config.pelvis_stiffness,
                PELVIS_RADIANS * free / config.pelvis_stiffness,
                if self.spine.is_empty() {
                    0.0
                } else {
                    1.0 / config.spine_stiffness
                },
            ],
            reaches: limbs.map(|l| {
                l.map_or(0.0, |l| {
                    let [a, b, c] = l.joints;
                    REACH
                        * (model.position(b).distance(model.position(a))
                            + model.position(c).distance(model.position(b)))
                })
            }),
            limbs,
        };
        let mut spine = refill(
            scratch_spine,
            self.spine.iter().map(|_| SpineJoint::default()),
        );
        let mut u = [0.0; UNKNOWNS];
        // A hips goal places the pelvis outright: the descent starts there.
        if let Some(hips) = targets
            .iter()
            .find(|t| matches!(t.role, Role::Hips) && t.strength > 0.0)
            .filter(|_| body.moves(0))
        {
            if let Some(p) = hips.position {
                let t = (p - body.hips.translation) / body.scales[0];
                u[..3].copy_from_slice(&t.to_array());
            }
            if let Some(q) = hips.orientation {
                let turn = (q * body.hips_rotation.conjugate()).normalize();
                let turn = if turn.w < 0.0 { -turn } else { turn };
                let r = turn.to_scaled_axis() / body.scales[1];
                u[3..6].copy_from_slice(&r.to_array());
            }
        }
        // `spine` and `placed` hold the body at the accepted `u`, `trial_spine` at a trial.
        let mut trial_spine = refill(
            scratch_trial,
            self.spine.iter().map(|_| SpineJoint::default()),
        );
        let mut r = [0.0; RESIDUALS];
        let mut placed = body.residuals(&u, targets, &mut spine, &mut r);
        let mut c = cost(&r);
        let mut mu = 1e-4;
        let mut iterations = 0;
        let met = (MET_SHARE * task.tolerance.position).powi(2);
        for _ in 0..config.iterations {
            if c < met {
                break;
            }
            iterations += 1;
            // Linearised where the descent stands: the unknowns are zero there.
            body.fold(placed, &spine);
            let jacobian = body.jacobian(targets, &spine, &r);
            let normal = Normal::new(&jacobian, &r);
            let mut improved = false;
            for _ in 0..10 {
                let Some(step) = normal.step(mu) else {
                    mu *= 10.0;
                    continue;
                };
                let trial = step;
                let mut trial_r = [0.0; RESIDUALS];
                let trial_placed = body.residuals(&trial, targets, &mut trial_spine, &mut trial_r);
                let trial_c = cost(&trial_r);
                if trial_c < c && trial.iter().all(|x| x.is_finite()) {
                    improved = c - trial_c > MIN_GAIN * c;
                    (r, c, placed) = (trial_r, trial_c, trial_placed);
                    std::mem::swap(&mut spine, &mut trial_spine);
                    mu = (mu / 10.0).max(1e-12);
                    break;
                }
                mu *= 4.0;
            }
            if !improved {
                break;
            }
        }
        // 3. The limbs, exactly, over the body as placed. With `hold_pinned_feet`, when the
        // body's move leaves a pinned foot (full pull) short of a goal it reaches from the
        // input body (a hip turned past its limit: the body stage does not see the legs'
        // limits), the move is scaled back by bisection to the most that keeps every pinned
        // foot on its goal. A foot of a smaller pull follows the body instead.
        let parent_rotation = skeleton
            .parent(self.hips)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p));
        let original = &*original;
        let mut active: Vec<String> = Vec::new();
        // The body as the descent placed it, in the hips' and spine's local terms.
        let (hips, hips_rotation) = placed;
        let placed_hips = ikarus_core::Transform {
            translation: parent.inverse().transform_point3(hips.translation),
            rotation: (parent_rotation.conjugate() * hips_rotation).normalize(),
            ..original[self.hips]
        };
        let mut place = |t: f64, pose: &mut LocalPose, model: &mut ModelPose| {
            pose.transforms_mut().copy_from_slice(original.transforms());
            if t == 1.0 {
                pose[self.hips] = placed_hips;
                for (k, &j) in self.spine.iter().enumerate() {
                    pose[j].rotation = spine[k].local;
                }
            } else {
                // A share `t` of the move from the input body.
                let from = original[self.hips];
                pose[self.hips].translation = from.translation.lerp(placed_hips.translation, t);
                pose[self.hips].rotation = from.rotation.slerp(placed_hips.rotation, t).normalize();
                for (k, &j) in self.spine.iter().enumerate() {
                    let between = original[j].rotation.slerp(spine[k].local, t).normalize();
                    pose[j].rotation = onto_limit(skeleton, j, between);
                }
            }
            // The joints below the limbs' ends come with each limb's own update.
            fk::update_joints(skeleton, pose, model, &self.above_ends);
            let axes = self.body_axes(model);
            active.clear();
            let (mut reached, mut feet) = (true, 0.0_f64);
            for (k, limb) in limbs.iter().flatten().enumerate() {
                let Some(target) = targets
                    .iter()
                    .find(|t| matches!(t.role, Role::Limb(i) if i == k))
                else {
                    fk::update_subtree(skeleton, pose, model, limb.joints[2]);
                    continue;
                };
                reached &= solve_limb(skeleton, (limb, axes), target, pose, model, &mut active);
                if let (Some(goal), HumanoidBone::LeftFoot | HumanoidBone::RightFoot, true) =
                    (target.position, limb.bones[2], target.pinned)
                {
                    feet = feet.max(model.position(limb.joints[2]).distance(goal));
                }
            }
            (reached, feet)
        };
        let (mut reached, feet) = place(1.0, pose, model);
        let tolerance = task.tolerance.position;
        if config.hold_pinned_feet && feet > tolerance && place(0.0, pose, model).1 <= tolerance {
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..BACK_OFF_STEPS {
                let mid = 0.5 * (lo + hi);
                if place(mid, pose, model).1 <= tolerance {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            reached = place(lo, pose, model).0;
        } else if config.hold_pinned_feet && feet > tolerance {
            // Nothing to gain: the body as the descent placed it.
            reached = place(1.0, pose, model).0;
        }
        // The buffers go back for the next solve.
        (*spine_local, *spine_origins, *spine_rotations) =
            (body.spine_local, body.spine_origins, body.spine_rotations);
        (*scratch_spine, *scratch_trial) = (spine, trial_spine);

        // 4. The head.
        let head_target = targets.iter().find(|t| matches!(t.role, Role::Head));
        if let (Some((head, _)), Some(goal)) = (&self.head, head_target.and_then(|t| t.orientation))
        {
            // The neck shares the turn only when it does not move a placed head.
            let neck_share = if head_target.is_some_and(|t| t.position.is_some()) {
                0.0
            } else {
                0.5
            };
            self.turn_head(
                skeleton,
                (*head, neck_share),
                goal,
                pose,
                model,
                &mut active,
            );
        }

        if !pose.is_finite() {
            pose.transforms_mut().copy_from_slice(original.transforms());
            fk::forward_kinematics(skeleton, pose, model);
        }
        let (position_error, rotation_error) = residuals(blended, model);
        let mut report = SolveReport::from_residuals(
            blended,
            position_error,
            rotation_error,
            iterations,
            !active.is_empty(),
        );
        if !report.converged() && (!reached || !active.is_empty()) {
            report.status = SolveStatus::Unreachable;
        }
        report.active_limits = active;
        report
    }

    /// The body's up (hips to head) and left (right hip to left hip, square to up) in model
    /// space as `model` poses it; +Y and +X where those joints are missing.
    fn body_axes(&self, model: &ModelPose) -> (DVec3, DVec3) {
        let up = self
            .head
            .as_ref()
            .and_then(|(h, _)| (model.position(*h) - model.position(self.hips)).try_normalize())
            .unwrap_or(DVec3::Y);
        let left = match &self.legs {
            [Some(l), Some(r)] => (model.position(l.joints[0]) - model.position(r.joints[0]))
                .reject_from(up)
                .try_normalize(),
            _ => None,
        }
        .unwrap_or(DVec3::X);
        (up, left)
    }

    /// The role and humanoid bone of an effector joint, if the body solver drives it.
    pub(crate) fn role_of(&self, joint: JointId) -> Option<(Role, HumanoidBone)> {
        if joint == self.hips {
            return Some((Role::Hips, HumanoidBone::Hips));
        }
        if self.head.as_ref().is_some_and(|(h, _)| *h == joint) {
            return Some((Role::Head, HumanoidBone::Head));
        }
        if self.chest.as_ref().is_some_and(|(c, _)| *c == joint) {
            return Some((Role::Chest, HumanoidBone::Chest));
        }
        self.limbs()
            .enumerate()
            .find(|(_, l)| l.joints[2] == joint)
            .map(|(k, l)| (Role::Limb(k), l.bones[2]))
    }

    /// The head turned to `goal`: `neck_share` of the turn by the neck (when mapped), the rest
    /// by the head; both put onto their limits.
    fn turn_head(
        &self,
        skeleton: &Skeleton,
        (head, neck_share): (JointId, f64),
        goal: DQuat,
        pose: &mut LocalPose,
        model: &mut ModelPose,
        active: &mut Vec<String>,
    ) {
        let parent_rotation = |model: &ModelPose, j: JointId| {
            skeleton
                .parent(j)
                .map_or(DQuat::IDENTITY, |p| model.rotation(p))
        };
        if let Some(neck) = self.neck.filter(|_| neck_share > 0.0) {
            let turn = (goal * model.rotation(head).conjugate()).normalize();
            let half = DQuat::IDENTITY.slerp(turn, neck_share);
            let wanted = (half * model.rotation(neck)).normalize();
            pose[neck].rotation = (parent_rotation(model, neck).conjugate() * wanted).normalize();
            enforce_limits_into(skeleton, &[neck], pose, active);
            fk::update_subtree(skeleton, pose, model, neck);
        }
        pose[head].rotation = (parent_rotation(model, head).conjugate() * goal).normalize();
        enforce_limits_into(skeleton, &[head], pose, active);
        fk::update_subtree(skeleton, pose, model, self.neck.unwrap_or(head));
    }
}

/// One limb onto its target by the two-bone closed form, the end turned to its goal
/// rotation, the three joints put onto their limits; whether the closed form reached.
#[allow(clippy::too_many_arguments)] // the solve's state, passed down once
fn solve_limb(
    skeleton: &Skeleton,
    (limb, body_axes): (&Limb, (DVec3, DVec3)),
    target: &Target,
    pose: &mut LocalPose,
    model: &mut ModelPose,
    active: &mut Vec<String>,
) -> bool {
    let [a, b, c] = limb.joints;
    let mut reached = true;
    let mut checked = [false; 3];
    if let Some(goal) = target.position {
        if let Some(clavicle) = limb.clavicle {
            reach_with_clavicle(skeleton, limb, clavicle, goal, pose, model, active);
        }
        let (s, m, e) = (model.position(a), model.position(b), model.position(c));
        // The elbow or knee keeps the side of its current bend where the bend is clear;
        // a limb too straight to show one bends about its flexion axis as it is turned
        // now, so consecutive frames never flip.
        let rest_to_model =
            model.rotation(b) * pose[b].rotation.conjugate() * skeleton.rest(b).rotation;
        let clear = (m - s).reject_from(e - s).length() > 0.01 * m.distance(s);
        // A hinge bends about its axis; a free mid joint about the normal of its current
        // bend where it is clear (an axis off that normal would narrow the limb's reach),
        // else about the humanoid's convention in the body as it stands now (knees about
        // its left, the left elbow about its down, the right about its up).
        let bend_normal = (m - s).cross(e - m).try_normalize();
        let (up, left) = body_axes;
        let convention = match limb.bones[1] {
            HumanoidBone::LeftLowerArm => -up,
            HumanoidBone::RightLowerArm => up,
            _ => left,
        };
        let axis = match (skeleton.limit(b), clear, bend_normal) {
            (ikarus_core::JointLimit::Hinge(_), _, _) => limb.axis,
            (_, true, Some(n)) => rest_to_model.conjugate() * n,
            // Straight: the preferred angle's axis, else the convention.
            _ => limb
                .preferred
                .unwrap_or_else(|| rest_to_model.conjugate() * convention),
        };
        let axis_model = rest_to_model * axis;
        let side = limb
            .bend_goal
            .map(|p| p - s)
            .or_else(|| clear.then(|| two_bone::recover_pole(s, m, e)).flatten())
            .unwrap_or_else(|| (goal - s).cross(axis_model));
        let pole = limb.bend_goal.map_or(Pole::Vector(side), Pole::Hint);
        if let Ok(chain) = TwoBoneChain::new(skeleton, a, b, c, axis) {
            // `model` is the FK of `pose` here (the body placed, the clavicle turned), so
            // the chain's input is read from it directly.
            let input = chain.input(skeleton, pose, model, goal, pole);
            // The swivel, the limb solved there when the search already has it, and whether
            // the search found the limb's joints inside their limits there.
            let (twist_angle, solved, inside) = match (target.orientation, limb.bend_goal) {
                (Some(rotation), None) => swivel(skeleton, limb, &input, rotation, pose, model),
                (None, None) => free_swivel(skeleton, limb, &input, pose, model.rotation(a)),
                _ => (0.0, None, [false; 3]),
            };
            checked = inside;
            let output = solved.unwrap_or_else(|| {
                let settings = TwoBoneSettings {
                    twist_angle,
                    ..TwoBoneSettings::default()
                };
                two_bone::solve(&input, &settings)
            });
            output.apply_to(&chain, pose);
            reached = output.reached;
            if target.orientation.is_some() {
                // The end's parent frame, for the end's goal rotation below.
                fk::update_joints(skeleton, pose, model, &limb.inner);
            }
        }
    }
    if let Some(goal) = target.orientation {
        let parent = skeleton
            .parent(c)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p));
        let local = (parent.conjugate() * goal).normalize();
        if local.is_finite() {
            pose[c].rotation = local;
        }
    }
    // The joints a search found inside their limits are not tested again.
    let mut joints = [a; 3];
    let mut n = 0;
    for (j, inside) in [a, b, c].into_iter().zip(checked) {
        if !inside {
            joints[n] = j;
            n += 1;
        }
    }
    enforce_limits_into(skeleton, &joints[..n], pose, active);
    fk::update_subtree(skeleton, pose, model, a);
    reached
}

/// The swivel (a two-bone `twist_angle`, radians about the start→goal line) for a limb whose
/// end also has a rotation goal: the one that leaves the end joint's local rotation nearest
/// to what it is now, and every joint of the limb inside its limit — a wrist or ankle keeps
/// its own turn and the elbow or knee swings to where it fits, as the 7-DOF limb's swivel
/// (seed 000, 7-DOF limb) does; 0 when nothing beats the current side.
fn swivel(
    skeleton: &Skeleton,
    limb: &Limb,
    input: &two_bone::TwoBoneInput,
    rotation: DQuat,
    pose: &LocalPose,
    model: &ModelPose,
) -> (f64, Option<TwoBoneOutput>, [bool; 3]) {
    let [a, b, c] = limb.joints;
    let end_parent = skeleton.parent(c).unwrap_or(b);
    // Frames between the start and the mid joint, and the mid joint and the end's parent,
    // stay as they are.
    let start_to_mid = model.rotation(a).conjugate() * model.rotation(b);
    let mid_to_parent = model.rotation(b).conjugate() * model.rotation(end_parent);
    let violation = |j: JointId, local: DQuat| past_limit(skeleton, j, local);
    // The limb solved at swivel 0; every other swivel turns it rigidly (`twisted`), so the
    // mid joint's local rotation, and how far it is past its limit, are the same at every
    // swivel.
    let at_zero = two_bone::solve(input, &TwoBoneSettings::default());
    let mid_past = violation(b, pose[b].rotation * at_zero.mid_correction);
    // The wrist's or ankle's turn from its own, and how far the limb's joints are past their
    // limits (radians each).
    let parts = |twist_angle: f64| {
        let out = twisted(input, &at_zero, model.rotation(a), twist_angle);
        let start = model.rotation(a) * out.start_correction;
        let mid = start * start_to_mid * out.mid_correction;
        let local = ((mid * mid_to_parent).conjugate() * rotation).normalize();
        (
            local.angle_between(pose[c].rotation),
            violation(a, pose[a].rotation * out.start_correction) + mid_past,
            violation(c, local),
            out,
        )
    };
    // Inside the limits first (a radian past a limit outweighs any turn), then the turn.
    let cost = |twist_angle: f64| {
        let (turn, limb, end, _) = parts(twist_angle);
        turn + 1000.0 * (limb + end)
    };
    // The swivel that turns the wrist or ankle least, in closed form: the twist turns the
    // solved limb rigidly about the start→goal line `n` (the two-bone solve's model-space
    // twist), so the end joint's local rotation at swivel φ is `P⁻¹ R(−φ) G` with `P` the
    // end's parent frame at φ = 0 and `G` the goal; its angle from the current `C` is the
    // angle of `R(−φ) Q` with `Q = G C⁻¹ P⁻¹` (an angle is unchanged by conjugation),
    // whose scalar part `cos(φ/2) Q_w + sin(φ/2) n·Q_v` is largest at
    // `φ = 2 atan2(n·Q_v, Q_w)`. When every joint there is inside its limit (within the
    // limits' 1e-9 rad: a joint the closed form leaves on its limit measures ~1e-16 past
    // it), that is the answer (the usual case: one solve instead of a search), and the
    // limits need no test after it.
    let least_turn = {
        let out = at_zero;
        let mid = model.rotation(a) * out.start_correction * start_to_mid * out.mid_correction;
        let q = (rotation * pose[c].rotation.conjugate() * (mid * mid_to_parent).conjugate())
            .normalize();
        let q = if q.w < 0.0 { -q } else { q };
        let n = (input.target - input.start_joint.translation).normalize_or_zero();
        2.0 * n.dot(q.xyz()).atan2(q.w)
    };
    if least_turn.is_finite() {
        let (_, limb, end, out) = parts(least_turn);
        if limb + end == 0.0 {
            return (least_turn, Some(out), [true; 3]);
        }
    }
    // Else, from the current side first (tracking: the last frame's swivel is nearly
    // right), a pattern search down to 0.2°; the whole circle only when that ends in the
    // upper or mid joint past its limit or a wrist turned by more than half a radian. A goal
    // rotation past the end joint's own limit at every swivel (a sole tilted to a slope
    // further than the ankle bends) is met as nearly as the descent finds, without the
    // circle: there is nothing inside the limits for it to find.
    let descend = |best: (f64, f64), step: f64| pattern_search(&cost, best, step, 4e-3);
    let mut best = descend((cost(0.0), 0.0), 0.125);
    let (turn, limb, _, _) = parts(best.1);
    if turn > 0.5 || limb > 0.0 {
        let step = std::f64::consts::TAU / 24.0;
        let mut scan = best;
        for k in 0..24 {
            let angle = f64::from(k) * step - std::f64::consts::PI;
            let c = cost(angle);
            if c < scan.0 {
                scan = (c, angle);
            }
        }
        if scan.1 != best.1 {
            best = descend(scan, step / 2.0);
        }
    }
    (
        if best.1.is_finite() { best.1 } else { 0.0 },
        None,
        [false; 3],
    )
}

/// The swivel for a limb with a position goal only: 0 (the current side of the bend) when
/// the upper and mid joints stay inside their limits there; else, of 48 swivels round the
/// circle and then a finer look about the best, the one that leaves them least past their
/// limits, the nearest to 0 among equals — so that a reachable hand is reached inside the
/// limits rather than pulled off its goal by the limits' projection.
fn free_swivel(
    skeleton: &Skeleton,
    limb: &Limb,
    input: &two_bone::TwoBoneInput,
    pose: &LocalPose,
    model_start: DQuat,
) -> (f64, Option<TwoBoneOutput>, [bool; 3]) {
    let [a, b, _] = limb.joints;
    // As in `swivel`: the limb solved once, turned rigidly for every other swivel.
    let solved = two_bone::solve(input, &TwoBoneSettings::default());
    let mid_past = past_limit(skeleton, b, pose[b].rotation * solved.mid_correction);
    let past = |twist_angle: f64| {
        let out = twisted(input, &solved, model_start, twist_angle);
        (
            past_limit(skeleton, a, pose[a].rotation * out.start_correction) + mid_past,
            out,
        )
    };
    let (at_zero, out) = past(0.0);
    if at_zero == 0.0 {
        // The end joint keeps its rotation, which may be past its own limit.
        return (0.0, Some(out), [true, true, false]);
    }
    let cost = |angle: f64| past(angle).0 + 1e-3 * angle.abs();
    let step = std::f64::consts::TAU / 48.0;
    let mut best = (cost(0.0), 0.0);
    for k in 1..48 {
        let angle = f64::from(k) * step - std::f64::consts::PI;
        let c = cost(angle);
        if c < best.0 {
            best = (c, angle);
        }
    }
    let best = pattern_search(&cost, best, step / 2.0, 1e-3);
    if best.1.is_finite() && past(best.1).0 < at_zero {
        (best.1, None, [false; 3])
    } else {
        (0.0, Some(out), [false; 3])
    }
}

/// The two-bone solve at swivel `angle` from the one at 0 (`at_zero`): the swivel turns the
/// solved limb rigidly about the start→goal line (the two-bone solve turns its pole about that
/// line and aligns the limb's frame to it), so the start joint's model rotation turns by
/// `angle` about the line and the mid joint's correction stays (tested against the solve).
/// `start` is the start joint's model rotation before the solve. One quaternion product in
/// place of a solve for each swivel a search tries.
fn twisted(
    input: &two_bone::TwoBoneInput,
    at_zero: &TwoBoneOutput,
    start: DQuat,
    angle: f64,
) -> TwoBoneOutput {
    if angle == 0.0 {
        return *at_zero;
    }
    let n = (input.target - input.start_joint.translation).normalize_or_zero();
    let turn = DQuat::from_axis_angle(n, angle);
    TwoBoneOutput {
        start_correction: (start.conjugate() * turn * start * at_zero.start_correction).normalize(),
        ..*at_zero
    }
}

/// A one-dimensional pattern search of `cost` from `best` (its cost, its argument): a step
/// each way, taken when it lowers the cost, else halved, until it is under `finest`. The
/// point a step leaves behind is the new point's neighbour on that side, its cost known.
fn pattern_search(
    cost: &impl Fn(f64) -> f64,
    mut best: (f64, f64),
    mut step: f64,
    finest: f64,
) -> (f64, f64) {
    // The cost one step to the left or right of `best`, when known.
    let mut known: (Option<f64>, Option<f64>) = (None, None);
    while step > finest {
        let left = known.0.unwrap_or_else(|| cost(best.1 - step));
        let right = known.1.unwrap_or_else(|| cost(best.1 + step));
        if left < best.0 && left <= right {
            known = (None, Some(best.0));
            best = (left, best.1 - step);
        } else if right < best.0 {
            known = (Some(best.0), None);
            best = (right, best.1 + step);
        } else {
            step *= 0.5;
            known = (None, None);
        }
    }
    best
}

/// An arm whose goal is beyond its reach: the clavicle turns its upper arm's start towards
/// the goal, by the least angle that brings the goal within reach (or as far as its limit
/// lets it).
fn reach_with_clavicle(
    skeleton: &Skeleton,
    limb: &Limb,
    clavicle: JointId,
    goal: DVec3,
    pose: &mut LocalPose,
    model: &mut ModelPose,
    active: &mut Vec<String>,
) {
    let [a, b, c] = limb.joints;
    let reach = REACH
        * (model.position(b).distance(model.position(a))
            + model.position(c).distance(model.position(b)));
    let pivot = model.position(clavicle);
    let arm = model.position(a) - pivot;
    if (goal - model.position(a)).length() <= reach {
        return;
    }
    let Some(axis) = arm.cross(goal - pivot).try_normalize() else {
        return;
    };
    let full = arm.angle_between(goal - pivot);
    let off = |angle: f64| (goal - (pivot + DQuat::from_axis_angle(axis, angle) * arm)).length();
    // The distance falls as the angle grows to `full`: bisect for where it meets the reach.
    let (mut lo, mut hi) = (0.0, full);
    if off(hi) > reach {
        lo = hi;
    } else {
        for _ in 0..40 {
            let mid = 0.5 * (lo + hi);
            if off(mid) > reach { lo = mid } else { hi = mid }
        }
        lo = hi;
    }
    let turn = DQuat::from_axis_angle(axis, lo);
    let parent = skeleton
        .parent(clavicle)
        .map_or(DQuat::IDENTITY, |p| model.rotation(p));
    let wanted = (turn * model.rotation(clavicle)).normalize();
    pose[clavicle].rotation = (parent.conjugate() * wanted).normalize();
    enforce_limits_into(skeleton, &[clavicle], pose, active);
    fk::update_subtree(skeleton, pose, model, clavicle);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ikarus_core::humanoid::builtin_humanoid;

    /// The built-in humanoid, its body rig, the rest pose with `turns` (joint name → local
    /// rotation) and that pose's model frames.
    fn bent(turns: &[(&str, DQuat)]) -> (Skeleton, BodyRig, LocalPose, ModelPose) {
        let skeleton = builtin_humanoid();
        let rig = BodyRig::new(&skeleton, &BodyConfig::default()).unwrap();
        let mut pose = skeleton.rest_pose();
        for &(name, q) in turns {
            pose[skeleton.joint(name).unwrap()].rotation = q;
        }
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        (skeleton, rig, pose, model)
    }

    #[test]
    fn the_jacobian_is_the_residuals_derivative() {
        // Against central differences of the residuals themselves, on a bent pose of the
        // built-in humanoid with every kind of residual active: hands and feet past their
        // reach, the hips, chest and head placed, the hips and chest turned (rotation goals at
        // the current rotations, where the rotation rows are exact).
        let (skeleton, rig, pose, model) = bent(
            &[
                ("spine", 0.2),
                ("chest", -0.15),
                ("upperChest", 0.1),
                ("neck", 0.3),
            ]
            .map(|(name, turn)| {
                (
                    name,
                    DQuat::from_euler(glam::EulerRot::XYZ, turn, 0.5 * turn, -turn),
                )
            }),
        );
        let mut limbs = [None; 4];
        for (slot, limb) in limbs.iter_mut().zip(rig.limbs()) {
            *slot = Some(limb);
        }
        let at = |name: &str| model.position(skeleton.joint(name).unwrap());
        let turn_of = |name: &str| model.rotation(skeleton.joint(name).unwrap());
        let mut targets: Vec<Target> = ["leftHand", "rightHand", "leftFoot", "rightFoot"]
            .iter()
            .enumerate()
            .map(|(k, n)| Target {
                role: Role::Limb(k),
                position: Some(at(n) + DVec3::new(0.3, -0.2, 0.4)),
                orientation: None,
                strength: 1.0,
                pinned: true,
            })
            .collect();
        let chest = skeleton.name(rig.chest.as_ref().unwrap().0).to_owned();
        targets.push(Target {
            role: Role::Hips,
            position: Some(at("hips") + DVec3::new(0.05, 0.02, -0.03)),
            orientation: Some(turn_of("hips")),
            strength: 1.0,
            pinned: true,
        });
        targets.push(Target {
            role: Role::Chest,
            position: Some(at(&chest) + DVec3::new(-0.04, 0.0, 0.05)),
            orientation: Some(turn_of(&chest)),
            strength: 0.7,
            pinned: true,
        });
        targets.push(Target {
            role: Role::Head,
            position: Some(at("head") + DVec3::new(0.0, -0.05, 0.1)),
            orientation: None,
            strength: 1.0,
            pinned: true,
        });
        let body = Body {
            skeleton: &skeleton,
            rig: &rig,
            start: &pose,
            hips: model[rig.hips],
            hips_rotation: model.rotation(rig.hips),
            spine_local: rig.spine.iter().map(|&j| pose[j].rotation).collect(),
            spine_origins: rig.spine.iter().map(|&j| model.position(j)).collect(),
            spine_rotations: rig.spine.iter().map(|&j| model.rotation(j)).collect(),
            scales: [PELVIS_METRES, PELVIS_RADIANS, 1.0],
            reaches: [0.3; 4],
            limbs,
        };
        let mut spine = vec![SpineJoint::default(); rig.spine.len()];
        let zero = [0.0; UNKNOWNS];
        let mut r = [0.0; RESIDUALS];
        body.residuals(&zero, &targets, &mut spine, &mut r);
        assert!(
            r[..4].iter().all(|&d| d > 0.0),
            "every limb past its reach: {r:?}"
        );
        let analytic = body.jacobian(&targets, &spine, &r);
        let h = 1e-6;
        for k in (0..UNKNOWNS).filter(|&k| body.moves(k)) {
            let (mut plus, mut minus) = (zero, zero);
            plus[k] = h;
            minus[k] = -h;
            let (mut rp, mut rm) = ([0.0; RESIDUALS], [0.0; RESIDUALS]);
            body.residuals(&plus, &targets, &mut spine, &mut rp);
            body.residuals(&minus, &targets, &mut spine, &mut rm);
            for i in 0..RESIDUALS {
                let numeric = (rp[i] - rm[i]) / (2.0 * h);
                assert!(
                    (analytic[i][k] - numeric).abs() < 1e-6,
                    "row {i}, unknown {k}: {} vs {numeric}",
                    analytic[i][k]
                );
            }
        }
    }
    #[test]
    fn a_swivel_turns_the_solved_limb_rigidly_about_the_goal_line() {
        // What `twisted` relies on: the two-bone solve at swivel φ is its solve at 0 turned by
        // φ about the start→goal line in model space (the start joint's correction) and
        // unchanged below it (the mid joint's) — against the two-bone solve itself at 24
        // swivels round the circle, on both arms and legs of a bent humanoid.
        let (skeleton, rig, pose, model) = bent(&[
            ("leftUpperArm", DQuat::from_rotation_z(-0.9)),
            ("leftLowerArm", DQuat::from_rotation_y(-0.7)),
            ("rightUpperArm", DQuat::from_rotation_z(0.6)),
            ("rightLowerArm", DQuat::from_rotation_y(0.5)),
            ("leftUpperLeg", DQuat::from_rotation_x(-0.5)),
            ("leftLowerLeg", DQuat::from_rotation_x(0.9)),
            ("rightLowerLeg", DQuat::from_rotation_x(0.3)),
        ]);
        // Equal as rotations, to rounding (a quaternion and its negation are one rotation).
        let near = |p: DQuat, q: DQuat| (p - q).length().min((p + q).length()) < 1e-12;
        for limb in rig.limbs() {
            let [a, b, c] = limb.joints;
            let chain = TwoBoneChain::new(&skeleton, a, b, c, limb.axis).unwrap();
            let goal = model.position(c) + DVec3::new(0.05, 0.08, -0.06);
            let pole = Pole::Vector(
                two_bone::recover_pole(model.position(a), model.position(b), model.position(c))
                    .unwrap(),
            );
            let input = chain.input(&skeleton, &pose, &model, goal, pole);
            let at_zero = two_bone::solve(&input, &TwoBoneSettings::default());
            for k in 0..24 {
                let angle = -3.0 + 0.25 * f64::from(k);
                let solved = two_bone::solve(
                    &input,
                    &TwoBoneSettings {
                        twist_angle: angle,
                        ..TwoBoneSettings::default()
                    },
                );
                let turned = twisted(&input, &at_zero, model.rotation(a), angle);
                assert!(
                    near(solved.start_correction, turned.start_correction),
                    "{:?} at {angle}: {} vs {}",
                    limb.bones,
                    solved.start_correction,
                    turned.start_correction
                );
                assert!(near(solved.mid_correction, turned.mid_correction));
                assert_eq!(solved.reached, turned.reached);
            }
        }
    }

    #[test]
    fn the_swivel_in_closed_form_turns_the_hand_least() {
        // Against a scan of the swivel: the closed form's angle leaves the hand's local
        // rotation nearest to its current one, over a fine scan of every swivel (each from
        // a two-bone solve, the hand's local rotation from FK of the solved arm), on the
        // built-in humanoid's left arm bent, with hand goals turned various ways.
        let skeleton = builtin_humanoid();
        let rig = BodyRig::new(&skeleton, &BodyConfig::default()).unwrap();
        let limb = rig.limbs().next().unwrap();
        assert_eq!(limb.bones[2], HumanoidBone::LeftHand);
        let [a, b, c] = limb.joints;
        let mut pose = skeleton.rest_pose();
        pose[a].rotation = DQuat::from_rotation_z(-0.9);
        pose[b].rotation = DQuat::from_rotation_y(-0.7);
        pose[c].rotation = DQuat::from_rotation_x(0.1);
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let chain = TwoBoneChain::new(&skeleton, a, b, c, limb.axis).unwrap();
        let goal = model.position(c) + DVec3::new(0.05, 0.1, 0.08);
        let pole = Pole::Vector(
            two_bone::recover_pole(model.position(a), model.position(b), model.position(c))
                .unwrap(),
        );
        let input = chain.input(&skeleton, &pose, &model, goal, pole);
        for turn in [
            DQuat::from_rotation_y(0.3),
            DQuat::from_euler(glam::EulerRot::XYZ, 0.4, -0.2, 0.5),
            DQuat::from_rotation_x(-0.25),
        ] {
            let rotation = (turn * model.rotation(c)).normalize();
            let (found, _, _) = swivel(&skeleton, limb, &input, rotation, &pose, &model);
            let hand_turn = |twist_angle: f64| {
                let mut p = pose.clone();
                let mut m = model.clone();
                let settings = TwoBoneSettings {
                    twist_angle,
                    ..TwoBoneSettings::default()
                };
                assert!(two_bone::solve_chain(
                    &skeleton, &chain, goal, pole, &settings, &mut p, &mut m
                ));
                let parent = m.rotation(skeleton.parent(c).unwrap());
                (parent.conjugate() * rotation)
                    .normalize()
                    .angle_between(pose[c].rotation)
            };
            let (mut best, mut at) = (f64::INFINITY, 0.0);
            for k in 0..=20_000 {
                let angle = -std::f64::consts::PI + std::f64::consts::TAU * f64::from(k) / 20_000.0;
                let t = hand_turn(angle);
                if t < best {
                    (best, at) = (t, angle);
                }
            }
            assert!(
                (found - at).abs() < 5e-4,
                "closed form {found}, scan {at} (turns {} and {best})",
                hand_turn(found)
            );
            assert!(hand_turn(found) <= best + 1e-9);
        }
    }
}
