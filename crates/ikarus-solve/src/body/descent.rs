//! The body stage of the full-body solve (see the [module docs](super)): a small
//! Levenberg–Marquardt on the pelvis and spine, its residuals, Jacobian and damped step.

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, Skeleton};

use super::rig::{BodyRig, Limb};

/// Groups of spine joints that bend on their own (the joints are split evenly into them).
pub(crate) const SPINE_GROUPS: usize = 4;
/// Unknowns of the body stage: pelvis translation (3), pelvis rotation (3), and a bend (3)
/// per spine group.
pub(super) const UNKNOWNS: usize = 6 + 3 * SPINE_GROUPS;
/// The most residuals: four limbs (1 each), hips, chest and head positions (3 each), hips
/// and chest rotations (3 each), and the head's turn past its limit (3, [`HEAD_TURN`]).
pub(super) const RESIDUALS: usize = 22;
/// The first of the rows of a placed head's rotation goal: how far the head's parent frame
/// must turn for the head alone to meet the goal inside its limit (zero while it can). The
/// head stage turns a head with a position goal by itself (a neck turning with it would move
/// it off its place), so without these rows a head tracker's turn beyond the head's own range
/// (a look over the shoulder, a bow) was cut at the limit, the head up to 53° off its goal on
/// a walk retargeted onto the built-in humanoid; with them the spine and neck take the rest.
pub(super) const HEAD_TURN: usize = 19;
/// The fraction of a limb's length its goal must come within (a straight limb is the closed
/// form's singular pose).
pub(super) const REACH: f64 = 0.9995;
/// How far the pelvis moves (metres) and turns (radians) for a unit of the body stage's
/// unknowns at stiffness 1, against a radian of spine bend: a body leans and bends before it
/// steps its pelvis aside.
pub(super) const PELVIS_METRES: f64 = 0.2;
pub(super) const PELVIS_RADIANS: f64 = 0.5;

/// The body stage's Jacobian, row-major: a residual's row is contiguous.
pub(super) type Jacobian = [[f64; UNKNOWNS]; RESIDUALS];

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
pub(super) struct Target {
    pub(super) role: Role,
    pub(super) position: Option<DVec3>,
    pub(super) orientation: Option<DQuat>,
    /// `sqrt(weight) · pull`.
    pub(super) strength: f64,
    /// A full pull (1): the effector holds the body back rather than follow it (a pinned
    /// foot).
    pub(super) pinned: bool,
}

/// A spine joint as one evaluation of the body stage has it: its local rotation, and its
/// model frame and rotation (walked once from the hips, for every path that passes it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpineJoint {
    pub(super) local: DQuat,
    pub(super) frame: DAffine3,
    pub(super) rotation: DQuat,
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
pub(super) struct Body<'a> {
    pub(super) skeleton: &'a Skeleton,
    pub(super) rig: &'a BodyRig,
    pub(super) start: &'a LocalPose,
    /// The hips' model frame and rotation the unknowns move from (the start, then each
    /// accepted step: the descent linearises about where it stands).
    pub(super) hips: DAffine3,
    pub(super) hips_rotation: DQuat,
    /// Each spine joint's local rotation and model origin and rotation there.
    pub(super) spine_local: Vec<DQuat>,
    pub(super) spine_origins: Vec<DVec3>,
    pub(super) spine_rotations: Vec<DQuat>,
    /// Per unknown block, metres or radians per unit (the stiffnesses' inverses; 0 pins).
    pub(super) scales: [f64; 3],
    /// The limbs found, in [`BodyRig::limbs`] order (the first `n` slots).
    pub(super) limbs: [Option<&'a Limb>; 4],
    /// Per limb, its reach times [`REACH`].
    pub(super) reaches: [f64; 4],
}

impl Body<'_> {
    /// Whether unknown `k` moves anything: the pelvis when free, a spine group with joints.
    pub(super) fn moves(&self, k: usize) -> bool {
        let groups = self.rig.spine.len().min(SPINE_GROUPS);
        self.scales[(k / 3).min(2)] != 0.0 && (k < 6 || (k - 6) / 3 < groups)
    }

    /// The spine group of spine joint `k` and its share of the group's bend.
    pub(super) fn group(&self, k: usize) -> (usize, f64) {
        self.rig.spine_groups[k]
    }

    /// Moves the state the unknowns start from to where some `u` takes it (`u` is then zero
    /// again): the hips, the spine's local rotations, and the spine's model frames.
    /// `(hips, rotation)` and `spine` are [`frames`](Self::frames) of `u`, as the residuals
    /// of `u` left them.
    pub(super) fn fold(&mut self, (hips, rotation): (DAffine3, DQuat), spine: &[SpineJoint]) {
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
    pub(super) fn jacobian(
        &self,
        targets: &[Target],
        spine: &[SpineJoint],
        r: &[f64; RESIDUALS],
    ) -> Jacobian {
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
                    let Some((goal, limb)) = self.limb_goal(t, k) else {
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
                    // The chest's rotation, and a placed head's turn past its limit while it
                    // lasts: the frame turns with the pelvis and the spine below.
                    let turn_rows = match t.role {
                        Role::Chest => t.orientation.map(|_| 13),
                        _ => r[HEAD_TURN..HEAD_TURN + 3]
                            .iter()
                            .any(|&x| x != 0.0)
                            .then_some(HEAD_TURN),
                    };
                    if let Some(at) = turn_rows {
                        for i in 0..3 {
                            j[at + i][3 + i] = self.scales[1] * t.strength;
                            for k in 0..m {
                                let (group, share) = self.group(k);
                                j[at + i][6 + 3 * group + i] += self.scales[2] * share * t.strength;
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
    pub(super) fn frames(
        &self,
        u: &[f64; UNKNOWNS],
        spine: &mut [SpineJoint],
    ) -> (DAffine3, DQuat) {
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

    /// A limb target's goal and limb `k`, when it has both.
    fn limb_goal(&self, t: &Target, k: usize) -> Option<(DVec3, &Limb)> {
        Some((t.position?, self.limbs.get(k).copied().flatten()?))
    }

    /// The model frame and rotation at the end of `path` (from the hips, exclusive) given the
    /// hips' frame and rotation and the spine as [`frames`](Self::frames) placed it: from the
    /// last spine joint the path passes, the rest of the path as the input has it.
    pub(super) fn walk(
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
    pub(super) fn residuals(
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
                    let Some((goal, limb)) = self.limb_goal(t, k) else {
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
                    let (Some((head, path)), Some(p)) = (&self.rig.head, t.position) else {
                        continue;
                    };
                    let (frame, rotation) = self.walk(hips, spine, path);
                    put(out, 16, (frame.translation - p) * t.strength);
                    if let Some(q) = t.orientation {
                        let parent = rotation * self.start[*head].rotation.conjugate();
                        if let Some(wanted) = parent_within_reach(self.skeleton, *head, parent, q) {
                            put(out, HEAD_TURN, rotation_error(wanted, parent) * t.strength);
                        }
                    }
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
pub(super) struct Normal<'a> {
    pub(super) jacobian: &'a Jacobian,
    /// The non-zero rows of `J` (the first `m`) and their residuals.
    pub(super) rows: [usize; RESIDUALS],
    pub(super) r: [f64; RESIDUALS],
    /// `JJᵀ` on them (lower triangle and diagonal).
    pub(super) jjt: [[f64; RESIDUALS]; RESIDUALS],
    pub(super) m: usize,
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
    pub(super) fn new(jacobian: &'a Jacobian, r: &[f64; RESIDUALS]) -> Self {
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
    pub(super) fn step(&self, mu: f64) -> Option<[f64; UNKNOWNS]> {
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

/// `local` (joint `j`'s local rotation) if its limit holds it, else projected onto the limit.
pub(super) fn onto_limit(skeleton: &Skeleton, j: JointId, local: DQuat) -> DQuat {
    let rest = skeleton.rest(j).rotation;
    let limit = skeleton.limit(j);
    let delta = rest.conjugate() * local;
    if limit.contains(delta) {
        local
    } else {
        (rest * limit.project(delta)).normalize()
    }
}

pub(super) fn put(out: &mut [f64; RESIDUALS], at: usize, v: DVec3) {
    out[at..at + 3].copy_from_slice(&v.to_array());
}

/// The rotation vector taking `goal` to `current` (radians; 1 m per radian in the residuals).
/// The model rotation the head's parent frame (now `parent`) must have for the head alone to
/// turn to `goal` inside its limit: the head's local rotation for the goal projected onto the
/// limit, the parent turned by what the projection took off. `None` while the head reaches the
/// goal by itself.
fn parent_within_reach(
    skeleton: &Skeleton,
    head: JointId,
    parent: DQuat,
    goal: DQuat,
) -> Option<DQuat> {
    let rest = skeleton.rest(head).rotation;
    let delta = rest.conjugate() * (parent.conjugate() * goal).normalize();
    let limit = skeleton.limit(head);
    if limit.excess(delta) == 0.0 {
        return None;
    }
    Some((goal * (rest * limit.project(delta)).conjugate()).normalize())
}

pub(super) fn rotation_error(goal: DQuat, current: DQuat) -> DVec3 {
    let d = (goal.conjugate() * current).normalize();
    let d = if d.w < 0.0 { -d } else { d };
    goal * d.to_scaled_axis()
}

pub(super) fn cost(r: &[f64; RESIDUALS]) -> f64 {
    r.iter().map(|x| x * x).sum()
}
