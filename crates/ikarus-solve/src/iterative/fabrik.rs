//! FABRIK, forward and backward reaching IK (Aristidou & Lasenby 2011; seed 004's particle IK):
//! joints are points moved along lines toward the targets and back, and the posture is
//! recovered from the points ([`recover`](crate::recover)).
//!
//! One sweep of the shared [`driver`] is one FABRIK iteration on the path's joint
//! points, held in a workspace in the *anchor frame* (the frame of the joint every path hangs
//! from: the root without a base joint, the base when it is an ancestor of every effector;
//! model space when the path runs through the root to a base on the far side):
//! - **backward** (effectors to anchor): each effector point goes to its target; each joint
//!   point goes to the point at bone length from each of its already moved children, on the
//!   line toward its old place. A joint with several such children (a *sub-base*, e.g. the
//!   chest under both hands) goes to the centroid of their proposals, weighted by the
//!   effectors' weights (the paper's multiple end effectors);
//! - **forward** (anchor to effectors): each path joint turns its bone (its own frame, or for a
//!   base-side joint its parent's) to point at the children's backward points: the shortest
//!   arc on top of the current rotation for one child (the twist is kept), the best proper
//!   rotation for several (a sub-base turns rigidly, Horn's method), and an orientation goal
//!   turns the effector's own frame. The rotation goes through the driver, which projects it
//!   onto the joint's limit (a hinge turns about its axis along its range, a swing–twist cone
//!   clamps its swing), and the children are placed by the rotation actually applied: the
//!   constraints act inside the pass, not after it.
//!   In the backward pass a limited child joint bounds the bone toward it the same way, in
//!   reverse: the bone turns only as far as the child's limit allows against the child's own
//!   backward segment.
//! - **hinges** turn about their own axis only, by the angle that brings the points the turn
//!   carries down the chain (the next joint's point and every point below it, the joints in between
//!   as the pose holds them) closest to their backward places, in the least-squares sense
//!   (FABRIK-with-hinges hybrids: the backward pass gives every joint a desired point, the forward
//!   pass turns each hinge by its best angle). A point on the axis has no lever and counts for
//!   nothing, so a roll hinge (its bone along its axis, robot arms' joints 1, 3, 5, 7) is turned by
//!   the joints that bend below it and the effector, and joints sharing one point (robot shoulders
//!   and wrists) are turned by the points past them, one after the other down the chain within the
//!   same pass. When the chain ends at a locked effector with an orientation goal (a robot's tool
//!   frame, which no joint of its own can turn), the goal joins every hinge's fit as the effector
//!   frame's three axes at the reach's lever. The segment above a hinge (elbows, knees) also turns
//!   so the hinge's axis stands on the plane of the points, and points bent against the hinge's
//!   range are mirrored across the line to the tip (a knee the passes bent forward bends back), so
//!   a straight limb resting on its stop unfolds the way its range allows.
//! - **base joint** ([`IkTask::base`]): base-side joints turn their parent's segment about
//!   themselves, the base point stays put, and the driver moves the root to keep it there.
//!
//! - **cost**: joints are written through
//!   [`Iteration::set_rotation_deferred`](crate::iterative::driver::Iteration::set_rotation_deferred)
//!   (except hinges, which move along their range), so a sweep pays one forward kinematics
//!   pass, not one partial update per joint; the points and frames the forward pass leaves are
//!   the next sweep's (read again from the pose only after a restart). A free chain (one
//!   effector with a position goal, every path joint on its effector side without limits,
//!   no step clamp) runs the same passes on contiguous per-link buffers; on the paper's
//!   10-point chain a sweep costs under a microsecond (see `BENCHMARKS.md`). On a free chain
//!   the joint points follow textbook point FABRIK sweep for sweep (tested).
//!
//! When it is weak: on hinge chains (robot arms) the passes converge linearly near the goal,
//! alternating sides of it: on the position-only TRAC-IK protocol (panda, iiwa 7 and 14, UR5) the
//! median solve takes 20–70 sweeps and some targets a few hundred, hence the default budget of 500
//! ([`FabrikConfig::DEFAULT_MAX_ITERATIONS`]); Levenberg–Marquardt needs about ten and is the
//! better choice there when speed matters. With a tool-frame orientation goal as well, tight
//! tolerances (1e-5 m and rad) are met on about half to three quarters of such targets within the
//! budget. A hinge that carries several branches, or is itself an effector with an orientation
//! goal, is turned by the hinge angle of the best rotation of its segment instead. Narrow limits
//! along the path (a humanoid spine) can stall the passes short of the target: the passes spread
//! the turn over every joint and do not move a blocked joint's share elsewhere; the report then
//! says `max_iterations`.
//!
//! Not converging (iteration budget, unreachable targets: the chain then stretches toward
//! them), limits, blend and the report are the driver's, measured by forward kinematics.
//! Bones are taken as rigid: scales inside the anchor frame must be uniform (scaled or
//! mirrored anchor frames, such as a scaled root, are fine).

use glam::{DAffine3, DQuat, DVec3, DVec4};
use ikarus_core::{HingeLimit, JointId, JointLimit, LocalPose, Skeleton};
use serde::{Deserialize, Serialize};

use crate::iterative::driver::{self, Iteration, IterationSettings, IterativeStep, Workspace};
use crate::iterative::path::{PathJoint, Side};
use crate::recover::RotationFit;
use crate::{IkTask, SolveReport};

/// FABRIK parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FabrikConfig {
    /// The shared loop's parameters (one sweep = one backward and one forward pass). Default:
    /// [`IterationSettings::default`] with [`FabrikConfig::DEFAULT_MAX_ITERATIONS`] sweeps.
    /// (Serialized configurations that spell out `iteration` without `max_iterations` get the
    /// shared loop's default of 64: write the budget with the other loop parameters.)
    pub iteration: IterationSettings,
}

impl Default for FabrikConfig {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_ITERATIONS)
    }
}

impl FabrikConfig {
    /// The default sweep budget, 500: hinge chains (robot arms) converge linearly near the
    /// goal and some targets take a few hundred sweeps to 1e-5 m; free chains and reachable
    /// humanoid targets stop long before (the loop ends at the tolerance or when nothing
    /// moves).
    pub const DEFAULT_MAX_ITERATIONS: u32 = 500;

    /// A configuration with the given iteration budget, other loop parameters at their
    /// defaults.
    pub fn new(max_iterations: u32) -> Self {
        Self {
            iteration: IterationSettings {
                max_iterations,
                ..IterationSettings::default()
            },
        }
    }
}

/// Reusable buffers for [`solve_with`].
#[derive(Clone, Debug, Default)]
pub struct FabrikWorkspace {
    driver: Workspace,
    plan: Plan,
    chain: Chain,
}

impl FabrikWorkspace {
    /// An empty workspace; it sizes itself on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Solves `task` by FABRIK, allocating a workspace. `pose` is the start pose on entry and the
/// best pose found on exit.
pub fn solve(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &FabrikConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    solve_with(skeleton, task, config, &mut FabrikWorkspace::new(), pose)
}

/// Solves `task` by FABRIK with reusable buffers (no allocation once warm).
pub fn solve_with(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &FabrikConfig,
    workspace: &mut FabrikWorkspace,
    pose: &mut LocalPose,
) -> SolveReport {
    let mut step = FabrikStep {
        max_step_angle: config.iteration.max_step_angle,
        plan: &mut workspace.plan,
        chain: &mut workspace.chain,
    };
    driver::run(
        skeleton,
        task,
        &config.iteration,
        &mut workspace.driver,
        pose,
        &mut step,
    )
}

/// The frame the points are held in.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Anchor {
    /// Model space (the path runs through the root, which moves).
    #[default]
    Model,
    /// The frame of this joint, which no path joint moves.
    Joint(JointId),
}

/// A path joint and the points its turn moves.
#[derive(Clone, Copy, Debug)]
struct Pivot {
    pj: PathJoint,
    /// The joint's parent (every path joint has one).
    parent: JointId,
    /// `attached[start..end]`.
    start: u32,
    end: u32,
    hinge: Option<HingeLimit>,
    rest: DQuat,
    /// An effector at this joint with an orientation goal: its index.
    orientation: Option<u16>,
    /// The bend plane of a hinge child (see [`Bend`]).
    bend: Option<Bend>,
}

/// An effector-side pivot whose only attached child `hinge` is a hinge joint carrying one
/// point `tip`: the pivot also turns so that the hinge's axis (`axis`, in the pivot's frame)
/// stands on the plane of the pivot, the hinge and the tip's backward points, on the side
/// (`sign`) whose bend the hinge's range allows. Without it FABRIK bends a straight limb
/// within whatever plane the pass happens to leave, and a one-sided hinge (elbow, knee) sticks
/// at its stop.
#[derive(Clone, Copy, Debug)]
struct Bend {
    hinge: JointId,
    tip: JointId,
    axis: DVec3,
    sign: f64,
}

/// A point carried by a pivot's segment, at `offset` from the pivot in that segment's frame.
#[derive(Clone, Copy, Debug)]
struct Attached {
    joint: JointId,
    offset: DVec3,
    /// `|offset|`.
    length: f64,
}

/// What one solve needs, built by `prepare`; per-joint buffers indexed by joint.
#[derive(Clone, Debug, Default)]
struct Plan {
    /// Path joints from the anchor outward (the path reversed).
    pivots: Vec<Pivot>,
    attached: Vec<Attached>,
    anchor: Anchor,
    /// Total bone length of the tree, the lever arm of orientation goals.
    reach: f64,
    /// Per joint: bit 1 effector-side path joint, 2 base-side, 4 effector with a position.
    role: Vec<u8>,
    /// Per joint: the point's place (anchor frame), updated by the forward pass.
    position: Vec<DVec3>,
    /// Per joint: the point's place after the backward pass.
    reached: Vec<DVec3>,
    /// Per joint: weighted sum of backward proposals (xyz) and their weight (w).
    sum: Vec<DVec4>,
    /// Per joint: the frame's rotation (anchor frame).
    rotation: Vec<DQuat>,
    /// Per joint: the index of its effector-side pivot, `u32::MAX` for none.
    pivot_of: Vec<u32>,
    /// Per pivot: the joint's limit.
    limits: Vec<JointLimit>,
    /// Per pivot: the local rotation the last forward pass left in the pose.
    written: Vec<DQuat>,
    /// The points and frames are those of the pose the last sweep left (see `load`).
    fresh: bool,
    /// The anchor frame's inverse model transform and its model rotation, as last loaded.
    anchor_from_model: DAffine3,
    anchor_rotation: DQuat,
}

const EFFECTOR_SIDE: u8 = 1;
const BASE_SIDE: u8 = 2;
const TARGET: u8 = 4;

impl Plan {
    fn build(&mut self, skeleton: &Skeleton, task: &IkTask, pose: &LocalPose, path: &[PathJoint]) {
        let n = skeleton.len();
        self.role.clear();
        self.role.resize(n, 0);
        for buffer in [&mut self.position, &mut self.reached] {
            buffer.clear();
            buffer.resize(n, DVec3::ZERO);
        }
        self.sum.clear();
        self.sum.resize(n, DVec4::ZERO);
        self.rotation.clear();
        self.rotation.resize(n, DQuat::IDENTITY);
        for pj in path {
            self.role[pj.joint.index()] |= match pj.side {
                Side::Effector => EFFECTOR_SIDE,
                Side::Base => BASE_SIDE,
            };
        }
        for e in &task.effectors {
            if e.goal.position.is_some() && e.weight > 0.0 {
                self.role[e.joint.index()] |= TARGET;
            }
        }
        self.pivots.clear();
        self.attached.clear();
        self.limits.clear();
        self.pivot_of.clear();
        self.pivot_of.resize(n, u32::MAX);
        self.reach = 0.0;
        for &pj in path.iter().rev() {
            let k = pj.joint;
            let parent = skeleton
                .parent(k)
                .expect("path joints lie below a common ancestor");
            let start = self.attached.len() as u32;
            self.attach(skeleton, pose, pj, parent);
            let orientation = task
                .effectors
                .iter()
                .position(|e| e.joint == k && e.goal.orientation.is_some() && e.weight > 0.0)
                .filter(|_| pj.side == Side::Effector)
                .map(|i| i as u16);
            let end = self.attached.len() as u32;
            if pj.side == Side::Effector {
                self.pivot_of[k.index()] = self.pivots.len() as u32;
            }
            self.limits.push(skeleton.limit(k).clone());
            self.pivots.push(Pivot {
                pj,
                parent,
                start,
                end,
                hinge: match skeleton.limit(k) {
                    JointLimit::Hinge(h) => Some(*h),
                    _ => None,
                },
                rest: skeleton.rest(k).rotation,
                orientation,
                bend: None,
            });
        }
        for index in 0..self.pivots.len() {
            self.pivots[index].bend = self.bend(index);
        }
        self.written.clear();
        self.written.resize(self.pivots.len(), DQuat::IDENTITY);
        self.fresh = false;
        self.reach = self.attached.iter().map(|a| a.length).sum();
        let base_side = path.iter().any(|p| p.side == Side::Base);
        let common = task.base.or_else(|| {
            let first = task.effectors.first()?.joint;
            skeleton.path_to_root(first).last()
        });
        self.anchor = match common {
            Some(c)
                if !base_side
                    && task
                        .effectors
                        .iter()
                        .all(|e| skeleton.is_ancestor_or_self(c, e.joint)) =>
            {
                Anchor::Joint(c)
            }
            _ => Anchor::Model,
        };
    }

    /// The points `pj`'s turn carries: an effector-side joint carries its children on the
    /// tree; a base-side joint carries its parent's segment (the parent's origin when it is on
    /// the tree, and the parent's other children on the tree).
    fn attach(&mut self, skeleton: &Skeleton, pose: &LocalPose, pj: PathJoint, parent: JointId) {
        let k = pj.joint;
        let role = |j: JointId| self.role[j.index()];
        match pj.side {
            Side::Effector => {
                let scale = pose[k].scale;
                for c in skeleton.children(k) {
                    if role(c) & (EFFECTOR_SIDE | TARGET) != 0 {
                        let offset = scale * pose[c].translation;
                        self.attached.push(Attached {
                            joint: c,
                            offset,
                            length: offset.length(),
                        });
                    }
                }
            }
            Side::Base => {
                let scale = pose[parent].scale;
                let at = pose[k].translation;
                if role(parent) & (BASE_SIDE | TARGET) != 0 {
                    let offset = -(scale * at);
                    self.attached.push(Attached {
                        joint: parent,
                        offset,
                        length: offset.length(),
                    });
                }
                for d in skeleton.children(parent) {
                    if d != k && role(d) & (EFFECTOR_SIDE | TARGET) != 0 {
                        let offset = scale * (pose[d].translation - at);
                        self.attached.push(Attached {
                            joint: d,
                            offset,
                            length: offset.length(),
                        });
                    }
                }
            }
        }
    }

    /// The bend plane pivot `index` steers, when its one attached child is a hinge with one
    /// attached point.
    fn bend(&self, index: usize) -> Option<Bend> {
        let p = &self.pivots[index];
        if p.pj.side != Side::Effector || p.end - p.start != 1 {
            return None;
        }
        let hinge_joint = self.attached[p.start as usize].joint;
        let child = self
            .pivots
            .get(self.pivot_of[hinge_joint.index()] as usize)?;
        let hinge = child.hinge?;
        if child.end - child.start != 1 {
            return None;
        }
        let tip = self.attached[child.start as usize];
        // In the pivot's frame: the hinge's axis, the bone to the hinge, and the bone from the
        // hinge to the tip at the middle of the range.
        let axis = (child.rest * hinge.axis).normalize();
        let upper = self.attached[p.start as usize].offset;
        let middle = 0.5 * (hinge.min + hinge.max);
        let lower = child.rest * (DQuat::from_axis_angle(hinge.axis, middle) * tip.offset);
        let normal = upper.cross(lower).dot(axis);
        if hinge.is_full_circle() || normal.abs() <= 1e-9 * upper.length() * lower.length() {
            return None;
        }
        Some(Bend {
            hinge: hinge_joint,
            tip: tip.joint,
            axis,
            sign: normal.signum(),
        })
    }

    /// Adds the bend-plane pair of `bend` (see [`Bend`]) to the fit of its pivot at `at`,
    /// whose segment now has the rotation `reference`; mirrors the hinge's backward point first
    /// when the points bend the way the hinge's range forbids.
    fn add_bend(&mut self, bend: Bend, at: DVec3, reference: DQuat, fit: &mut RotationFit) {
        let (mut hinge, tip) = (
            self.reached[bend.hinge.index()],
            self.reached[bend.tip.index()],
        );
        let mut normal = (hinge - at).cross(tip - hinge);
        if normal.dot(reference * bend.axis) * bend.sign < 0.0 {
            // The points bend the way the range forbids (a knee bent forward): mirror the
            // hinge's point across the line to the tip, which bends it the allowed way
            // without twisting this segment half a turn.
            let line = (tip - at).normalize_or_zero();
            let offset = hinge - at;
            hinge = at + 2.0 * line * line.dot(offset) - offset;
            self.reached[bend.hinge.index()] = hinge;
            normal = -normal;
        }
        let weight = self.sum[bend.tip.index()].w;
        let scale = (hinge - at).length() * (tip - hinge).length();
        if normal.length() > 1e-6 * scale && weight > 0.0 {
            let lever = (hinge - at).length();
            fit.add(
                bend.axis * lever,
                normal.normalize() * bend.sign * lever,
                weight,
            );
        }
    }

    /// Reads the points and frames of the current pose into the anchor frame, and the targets.
    /// Returns the anchor frame's model rotation (for orientation goals).
    fn load(&mut self, ctx: &Iteration<'_>) -> DQuat {
        let model = ctx.model();
        // Below a fixed anchor, the forward pass placed every point and frame by the rotations
        // it wrote: while the pose still holds them (no restart in between), they stand, and
        // so does the anchor (no path joint moves it).
        let fresh = self.fresh
            && self.anchor != Anchor::Model
            && self
                .pivots
                .iter()
                .zip(&self.written)
                .all(|(p, &w)| ctx.pose()[p.pj.joint].rotation == w);
        if !fresh {
            (self.anchor_from_model, self.anchor_rotation) = match self.anchor {
                Anchor::Joint(c) => {
                    self.rotation[c.index()] = DQuat::IDENTITY;
                    (model[c].inverse(), model.rotation(c))
                }
                Anchor::Model => (DAffine3::IDENTITY, DQuat::IDENTITY),
            };
        }
        let (anchor_from_model, anchor_rotation) = (self.anchor_from_model, self.anchor_rotation);
        for p in &self.pivots {
            let k = p.pj.joint;
            self.sum[k.index()] = DVec4::ZERO;
            if fresh {
                continue;
            }
            self.position[k.index()] = anchor_from_model.transform_point3(model.position(k));
            if self.anchor == Anchor::Model {
                self.rotation[k.index()] = model.rotation(k);
                self.rotation[p.parent.index()] = model.rotation(p.parent);
            } else if p.pj.side == Side::Effector {
                // Parents come first: the frame from the anchor down.
                self.rotation[k.index()] = self.rotation[p.parent.index()] * ctx.pose()[k].rotation;
            }
        }
        for a in &self.attached {
            let j = a.joint;
            if !fresh {
                self.position[j.index()] = anchor_from_model.transform_point3(model.position(j));
            }
            self.sum[j.index()] = DVec4::ZERO;
        }
        for e in &ctx.task().effectors {
            if let (Some(target), true) = (e.goal.position, e.weight > 0.0) {
                let target = anchor_from_model.transform_point3(target);
                self.sum[e.joint.index()] += (target * e.weight).extend(e.weight);
            }
        }
        anchor_rotation
    }

    /// Effectors to anchor: every point moved toward its children's new places. Where a child
    /// is a limited path joint, the bone toward it turns only as far as the child's limit
    /// allows relative to the child's own backward segment (the constraint in reverse).
    fn backward(&mut self, task: &IkTask, anchor_rotation: DQuat) {
        for index in (0..self.pivots.len()).rev() {
            let p = self.pivots[index];
            let k = p.pj.joint.index();
            for a in &self.attached[p.start as usize..p.end as usize] {
                let j = a.joint.index();
                let sum = self.sum[j];
                if sum.w <= 0.0 {
                    continue;
                }
                // (A weight of 1, the common case, needs no division.)
                let reached = if sum.w == 1.0 {
                    sum.truncate()
                } else {
                    sum.truncate() / sum.w
                };
                self.reached[j] = reached;
                let (at, child) = (self.position[k], self.position[j]);
                let bone = if p.pj.side == Side::Effector && self.is_limited(a.joint) {
                    // The bone k → a as the segment of k would carry it, within a's limit.
                    let mut direction = reached - at;
                    if direction.length_squared() < 1e-24 {
                        direction = child - at;
                    }
                    let segment =
                        crate::recover::shortest_arc_on(self.rotation[k], a.offset, direction);
                    let segment = self.constrain(a.joint, reached, segment, task, anchor_rotation);
                    segment * a.offset
                } else if let Some(bone) = bone_toward(reached, at, child, a.length) {
                    bone
                } else if p.pj.side == Side::Effector {
                    self.rotation[k] * a.offset
                } else {
                    DVec3::ZERO
                };
                let proposal = reached - bone;
                self.sum[k] += (proposal * sum.w).extend(sum.w);
            }
        }
    }

    /// The rotation (anchor frame) pivot `p` at `at`, whose segment now has the rotation
    /// `reference`, wants: the best turn of its attached points toward their backward places,
    /// with its bend plane and its effector's orientation goal.
    fn segment(
        &mut self,
        task: &IkTask,
        p: Pivot,
        at: DVec3,
        reference: DQuat,
        anchor_rotation: DQuat,
    ) -> DQuat {
        let attached = &self.attached[p.start as usize..p.end as usize];
        if let ([a], None, None) = (attached, p.bend, p.orientation) {
            // One point (a chain): the shortest arc, without the fit's bookkeeping.
            return if self.sum[a.joint.index()].w > 0.0 {
                crate::recover::shortest_arc_on_with_length(
                    reference,
                    a.offset,
                    a.length,
                    self.reached[a.joint.index()] - at,
                )
            } else {
                reference
            };
        }
        let mut fit = RotationFit::new();
        if let Some(bend) = p.bend {
            self.add_bend(bend, at, reference, &mut fit);
        }
        for a in &self.attached[p.start as usize..p.end as usize] {
            let weight = self.sum[a.joint.index()].w;
            if weight > 0.0 {
                fit.add(a.offset, self.reached[a.joint.index()] - at, weight);
            }
        }
        if let Some(i) = p.orientation {
            let e = &task.effectors[usize::from(i)];
            if let Some(goal) = e.goal.orientation {
                let goal = anchor_rotation.conjugate() * goal;
                let lever = self.reach.max(1e-9);
                for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                    fit.add(axis * lever, goal * axis * lever, e.weight);
                }
            }
        }
        if fit.pairs() == 0 {
            reference
        } else {
            fit.solve(reference).rotation
        }
    }

    /// The forward step of pivot `index` when it is a link: an effector-side joint that is no
    /// hinge, carries one point and has no bend plane, no orientation goal and no step clamp
    /// ([`link_turn`], then [`place`]). Returns false, doing nothing, when the point has no
    /// weight (the general step keeps the segment as it is).
    fn forward_link(&mut self, ctx: &mut Iteration<'_>, index: usize) -> bool {
        let p = &self.pivots[index];
        let (pj, parent, a) = (p.pj, p.parent, self.attached[p.start as usize]);
        let (k, j) = (pj.joint.index(), a.joint.index());
        if self.sum[j].w <= 0.0 {
            return false;
        }
        let (at, reached, frame) = (
            self.position[k],
            self.reached[j],
            self.rotation[parent.index()],
        );
        let current = ctx.pose()[pj.joint].rotation;
        let (body, requested) = link_turn(frame, current, a.offset, a.length, at, reached);
        let applied = ctx.set_rotation_deferred(pj, requested);
        self.written[index] = applied;
        let body = if applied == requested {
            body
        } else {
            frame * applied
        };
        self.rotation[k] = body;
        self.position[j] = place(at, body, a.offset, a.length, reached, applied == requested);
        true
    }

    /// The turn of hinge pivot `index` (effector side, one attached point with a backward
    /// place) about `axis` (anchor frame, through the pivot), whose segment now has the
    /// rotation `reference`: the angle that brings the points the turn carries down the chain
    /// (the attached point and every point below it, with the joints in between as the pose
    /// holds them) closest to their backward places, in the least-squares sense. A point on
    /// the axis has no lever and counts for nothing, so a roll hinge (its bone along its axis)
    /// is turned by the joints that bend below it and the effector, and a joint sharing its
    /// point with the next one by the points past both. 0 when every point lies on the axis.
    fn hinge_turn(
        &self,
        task: &IkTask,
        pose: &LocalPose,
        index: usize,
        axis: DVec3,
        reference: DQuat,
    ) -> f64 {
        let p = &self.pivots[index];
        let at = self.position[p.pj.joint.index()];
        let first = self.attached[p.start as usize];
        let (mut joint, mut rotation) = (first.joint, reference);
        let mut from = reference * first.offset;
        // Points nearer the axis than this carry only rounding noise.
        let threshold = 1e-9 * self.reach;
        let (mut sine, mut cosine) = (0.0, 0.0);
        let mut lever = false;
        loop {
            let weight = self.sum[joint.index()].w;
            if (from - axis * axis.dot(from)).length_squared() > threshold * threshold {
                let to = self.reached[joint.index()] - at;
                sine += weight * axis.dot(from.cross(to));
                cosine += weight * (from.dot(to) - axis.dot(from) * axis.dot(to));
                lever = true;
            }
            // The next point down, while the chain does not branch.
            let Some(q) = self.pivots.get(self.pivot_of[joint.index()] as usize) else {
                break;
            };
            if q.end - q.start != 1 {
                if let (0, Some(i), JointLimit::Locked) = (
                    q.end - q.start,
                    q.orientation,
                    &self.limits[self.pivot_of[joint.index()] as usize],
                ) {
                    // The chain ends at a locked effector with an orientation goal (a robot's
                    // tool frame): its frame turns with this segment too, as three axes at the
                    // reach's lever (as in `segment`).
                    let e = &task.effectors[usize::from(i)];
                    if let Some(goal) = e.goal.orientation {
                        let goal = self.anchor_rotation.conjugate() * goal;
                        let frame = rotation * pose[joint].rotation;
                        let lever_arm = self.reach.max(1e-9);
                        for k in [DVec3::X, DVec3::Y, DVec3::Z] {
                            let (from, to) = (frame * k * lever_arm, goal * k * lever_arm);
                            sine += e.weight * axis.dot(from.cross(to));
                            cosine += e.weight * (from.dot(to) - axis.dot(from) * axis.dot(to));
                            lever = true;
                        }
                    }
                }
                break;
            }
            let next = self.attached[q.start as usize];
            if self.sum[next.joint.index()].w <= 0.0 {
                break;
            }
            rotation *= pose[joint].rotation;
            from += rotation * next.offset;
            joint = next.joint;
        }
        if lever && (sine != 0.0 || cosine != 0.0) {
            sine.atan2(cosine)
        } else {
            0.0
        }
    }

    /// True when `joint` is an effector-side path joint with a limit.
    fn is_limited(&self, joint: JointId) -> bool {
        let index = self.pivot_of[joint.index()];
        index != u32::MAX && !self.limits[index as usize].is_free()
    }

    /// The segment rotation of a pivot whose child `a` (reached at `reached`) is a limited
    /// effector-side path joint: `segment`, or the nearest one the child's limit allows given
    /// the child's own backward segment.
    fn constrain(
        &self,
        a: JointId,
        reached: DVec3,
        segment: DQuat,
        task: &IkTask,
        anchor_rotation: DQuat,
    ) -> DQuat {
        let index = self.pivot_of[a.index()];
        let child = &self.pivots[index as usize];
        let mut fit = RotationFit::new();
        for b in &self.attached[child.start as usize..child.end as usize] {
            let weight = self.sum[b.joint.index()].w;
            if weight > 0.0 {
                fit.add(b.offset, self.reached[b.joint.index()] - reached, weight);
            }
        }
        if let Some(goal) = child.orientation.and_then(|i| {
            let e = &task.effectors[usize::from(i)];
            e.goal.orientation.map(|g| (g, e.weight))
        }) {
            let (orientation, weight) = goal;
            let orientation = anchor_rotation.conjugate() * orientation;
            let lever = self.reach.max(1e-9);
            for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                fit.add(axis * lever, orientation * axis * lever, weight);
            }
        }
        if fit.pairs() == 0 {
            return segment;
        }
        let child_segment = fit.solve(self.rotation[a.index()]).rotation;
        let local = segment.conjugate() * child_segment;
        let mut delta = child.rest.conjugate() * local;
        if let (JointLimit::Hinge(h), false) = (&self.limits[index as usize], child.hinge.is_none())
        {
            // A bend to the side the range forbids (a knee bent forward): the mirrored bend,
            // when legal, instead of the straight stop, so the passes can unfold it.
            let angle = h.angle(delta);
            if !(h.min..=h.max).contains(&angle) && (h.min..=h.max).contains(&-angle) {
                delta = DQuat::from_axis_angle(h.axis, -angle);
            }
        }
        let projected = self.limits[index as usize].project(delta);
        if projected == delta {
            return segment;
        }
        (child_segment * (child.rest * projected).conjugate()).normalize()
    }
}

/// The fast path of the commonest case, a free chain: one effector with a position goal only,
/// every path joint on its effector side, without limits, carrying the next one (the last
/// carries the effector), no per-step clamp. The same passes as the general plan on
/// contiguous buffers indexed by link, without the general plan's per-joint bookkeeping.
#[derive(Clone, Debug, Default)]
struct Chain {
    /// The links from the anchor outward; empty when the task is no free chain.
    links: Vec<Link>,
    /// The anchor joint (the first link's parent) and the effector.
    anchor: Option<JointId>,
    effector: Option<JointId>,
    /// `points[i]`: link `i`'s joint, `points[links.len()]`: the effector (anchor frame), as
    /// the forward pass leaves them.
    points: Vec<DVec3>,
    /// The same after the backward pass.
    reached: Vec<DVec3>,
    /// `frames[i]`: the rotation (anchor frame) of link `i`'s parent segment;
    /// `frames[i + 1]`: link `i`'s segment.
    frames: Vec<DQuat>,
    /// Per link: the local rotation the last forward pass left in the pose.
    written: Vec<DQuat>,
    /// The points and frames are those of the pose the last sweep left.
    fresh: bool,
    /// The target, anchor frame.
    target: DVec3,
}

/// One link of a [`Chain`]: a joint and its bone to the next point.
#[derive(Clone, Copy, Debug)]
struct Link {
    pj: PathJoint,
    /// The bone in the joint's frame, and its length.
    offset: DVec3,
    length: f64,
}

impl Chain {
    /// Reads the chain from the general plan when it has the fast path's shape; otherwise
    /// leaves it empty.
    fn build(&mut self, plan: &Plan, task: &IkTask) {
        self.links.clear();
        self.fresh = false;
        let [effector] = task.effectors.as_slice() else {
            return;
        };
        let Anchor::Joint(anchor) = plan.anchor else {
            return;
        };
        let simple = effector.goal.position.is_some()
            && effector.goal.orientation.is_none()
            && effector.weight > 0.0
            && plan.pivots.first().is_some_and(|p| p.parent == anchor)
            && plan.pivots.iter().enumerate().all(|(i, p)| {
                let next = plan
                    .pivots
                    .get(i + 1)
                    .map_or(effector.joint, |q| q.pj.joint);
                p.pj.side == Side::Effector
                    && plan.limits[i].is_free()
                    && p.end - p.start == 1
                    && plan.attached[p.start as usize].joint == next
                    && p.bend.is_none()
                    && p.orientation.is_none()
            });
        if !simple {
            return;
        }
        for p in &plan.pivots {
            let a = plan.attached[p.start as usize];
            self.links.push(Link {
                pj: p.pj,
                offset: a.offset,
                length: a.length,
            });
        }
        let m = self.links.len();
        for buffer in [&mut self.points, &mut self.reached] {
            buffer.clear();
            buffer.resize(m + 1, DVec3::ZERO);
        }
        self.frames.clear();
        self.frames.resize(m + 1, DQuat::IDENTITY);
        self.written.clear();
        self.written.resize(m, DQuat::IDENTITY);
        (self.anchor, self.effector) = (Some(anchor), Some(effector.joint));
    }

    /// One sweep: the points and frames of the pose (unless the last sweep left them), the
    /// backward pass from the target, the forward pass from the anchor writing each joint's
    /// rotation (deferred: one forward kinematics pass after the sweep).
    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        let (Some(anchor), Some(effector)) = (self.anchor, self.effector) else {
            return;
        };
        let m = self.links.len();
        let fresh = self.fresh
            && self
                .links
                .iter()
                .zip(&self.written)
                .all(|(l, &w)| ctx.pose()[l.pj.joint].rotation == w);
        if !fresh {
            let model = ctx.model();
            let anchor_from_model = model[anchor].inverse();
            for (i, l) in self.links.iter().enumerate() {
                self.points[i] = anchor_from_model.transform_point3(model.position(l.pj.joint));
                self.frames[i + 1] = self.frames[i] * ctx.pose()[l.pj.joint].rotation;
            }
            self.points[m] = anchor_from_model.transform_point3(model.position(effector));
            let target = ctx.task().effectors[0].goal.position.unwrap_or_default();
            self.target = anchor_from_model.transform_point3(target);
        }
        // Backward: the effector to the target, every joint but the fixed first one toward
        // its old place.
        self.reached[m] = self.target;
        for i in (1..m).rev() {
            let l = self.links[i];
            let (reached, at) = (self.reached[i + 1], self.points[i]);
            let bone = bone_toward(reached, at, self.points[i + 1], l.length)
                .unwrap_or_else(|| self.frames[i + 1] * l.offset);
            self.reached[i] = reached - bone;
        }
        // Forward: each joint turns its bone toward the next backward point.
        for (i, l) in self.links.iter().enumerate() {
            let (at, reached, frame) = (self.points[i], self.reached[i + 1], self.frames[i]);
            let current = ctx.pose()[l.pj.joint].rotation;
            let (body, requested) = link_turn(frame, current, l.offset, l.length, at, reached);
            // Free joints: the driver writes the rotation as requested.
            self.written[i] = ctx.set_rotation_deferred(l.pj, requested);
            self.frames[i + 1] = body;
            self.points[i + 1] = place(at, body, l.offset, l.length, reached, true);
        }
        self.fresh = true;
    }
}

struct FabrikStep<'a> {
    max_step_angle: f64,
    plan: &'a mut Plan,
    chain: &'a mut Chain,
}

impl IterativeStep for FabrikStep<'_> {
    fn prepare(&mut self, ctx: &mut Iteration<'_>) {
        self.plan
            .build(ctx.skeleton(), ctx.task(), ctx.pose(), ctx.path().joints());
        self.chain.links.clear();
        if self.max_step_angle >= std::f64::consts::PI {
            self.chain.build(self.plan, ctx.task());
        }
    }

    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        if !self.chain.links.is_empty() {
            self.chain.sweep(ctx);
            return;
        }
        let anchor_rotation = self.plan.load(ctx);
        self.plan.backward(ctx.task(), anchor_rotation);
        for index in 0..self.plan.pivots.len() {
            self.forward(ctx, index, anchor_rotation);
        }
        self.plan.fresh = true;
    }
}

impl FabrikStep<'_> {
    /// Anchor to effectors, one pivot: turn its segment toward the backward points, through
    /// the driver (limits), and place the points it carries.
    fn forward(&mut self, ctx: &mut Iteration<'_>, index: usize, anchor_rotation: DQuat) {
        let plan = &mut *self.plan;
        let p = plan.pivots[index];
        let link = p.pj.side == Side::Effector
            && p.end - p.start == 1
            && p.hinge.is_none()
            && p.bend.is_none()
            && p.orientation.is_none()
            && self.max_step_angle >= std::f64::consts::PI;
        if link && plan.forward_link(ctx, index) {
            return;
        }
        let k = p.pj.joint;
        let at = plan.position[k.index()];
        let current = ctx.pose()[k].rotation;
        // `frame`: the rotation the joint's local rotation is relative to (effector side: the
        // parent's frame; base side: the joint's own frame, which stays while its parent turns).
        let (frame, reference) = match p.pj.side {
            Side::Effector => {
                let frame = plan.rotation[p.parent.index()];
                (frame, frame * current)
            }
            Side::Base => {
                let frame = plan.rotation[k.index()];
                (frame, frame * current.conjugate())
            }
        };
        let body = plan.segment(ctx.task(), p, at, reference, anchor_rotation);
        let attached = &plan.attached[p.start as usize..p.end as usize];
        let requested = match p.pj.side {
            Side::Effector => frame.conjugate() * body,
            Side::Base => body.conjugate() * frame,
        };
        let applied = if let Some(hinge) = p.hinge {
            // The segment's best turn about the hinge's axis (anchor frame), and the same turn
            // of the joint (the opposite one on the base side, which rotate_hinge undoes).
            let axis = match p.pj.side {
                Side::Effector => frame * current * hinge.axis,
                Side::Base => frame * hinge.axis,
            };
            let single = attached.len() == 1 && plan.sum[attached[0].joint.index()].w > 0.0;
            let turn = if single && p.orientation.is_none() {
                plan.hinge_turn(ctx.task(), ctx.pose(), index, axis, reference)
            } else {
                let have = hinge.angle(p.rest.conjugate() * current);
                let want = hinge.angle(p.rest.conjugate() * requested);
                let turn = wrap_angle(want - have);
                match p.pj.side {
                    Side::Effector => turn,
                    Side::Base => -turn,
                }
            };
            ctx.rotate_hinge(p.pj, &hinge, turn);
            ctx.pose()[k].rotation
        } else {
            // The points below are placed by the rotation applied, so the model can wait for
            // the one forward kinematics pass after the sweep.
            ctx.set_rotation_deferred(p.pj, clamp_step(current, requested, self.max_step_angle))
        };
        plan.written[index] = applied;
        let body = match p.pj.side {
            Side::Effector => {
                // (When the wish was granted, the segment's rotation is the one wished for.)
                let body = if applied == requested {
                    body
                } else {
                    frame * applied
                };
                plan.rotation[k.index()] = body;
                body
            }
            Side::Base => {
                let body = frame * applied.conjugate();
                plan.rotation[p.parent.index()] = body;
                body
            }
        };
        for a in &plan.attached[p.start as usize..p.end as usize] {
            plan.position[a.joint.index()] = at + body * a.offset;
        }
    }
}

/// FABRIK's backward step for one bone: the bone (from a joint at `at` to its child, whose
/// new place is `reached` and old place `child`) of `length`, pointing from the line toward
/// the joint's old place to `reached`; the joint's new place is `reached` minus it. `None`
/// when no direction is left (the three points coincide).
fn bone_toward(reached: DVec3, at: DVec3, child: DVec3, length: f64) -> Option<DVec3> {
    let mut direction = reached - at;
    if direction.length_squared() < 1e-24 {
        direction = child - at;
    }
    let distance = direction.length();
    (distance > 0.0).then(|| direction * (length / distance))
}

/// FABRIK's forward step for a joint carrying one point, in rotations: the joint at `at`, its
/// parent's segment rotated by `frame` and its own local rotation `current` (both anchor
/// frame), turns its bone (`offset` in its segment's frame, `|offset| = length`) toward the
/// point's backward place `reached` by the shortest arc on top of `frame · current` (the
/// twist stays). Returns the segment's new rotation and the local rotation that gives it.
///
/// The inner loop of the solver: the arc is the quaternion (c, n + d) for the bone `b` as
/// the segment now carries it and `t = reached − at` (c = b × t, d = b · t, n = |b| |t|), whose
/// norm is √(2n(n + d)): no unit vectors; and the product of unit quaternions is
/// renormalised by one Newton step (no square root). Zero-length bones or directions and
/// half turns go through [`shortest_arc_on`](crate::recover::shortest_arc_on).
fn link_turn(
    frame: DQuat,
    current: DQuat,
    offset: DVec3,
    length: f64,
    at: DVec3,
    reached: DVec3,
) -> (DQuat, DQuat) {
    let to = reached - at;
    let n = length * to.length();
    let reference = frame * current;
    let bone = reference * offset;
    let d = bone.dot(to);
    let body = if n > 0.0 && n.is_finite() && d > (-1.0 + 1e-12) * n {
        let c = bone.cross(to);
        DQuat::from_xyzw(c.x, c.y, c.z, n + d) * reference * (2.0 * n * (n + d)).sqrt().recip()
    } else {
        crate::recover::shortest_arc_on_with_length(reference, offset, length, to)
    };
    let requested = frame.conjugate() * body;
    (body, requested * (1.5 - 0.5 * requested.length_squared()))
}

/// Where a link's point goes once its joint turned: on the line from `at` to its backward
/// place `reached` at `length` when the joint turned as [`link_turn`] asked (`granted`; the
/// same point as the rotation gives, without rotating), else where the segment's rotation
/// `body` carries `offset`.
fn place(
    at: DVec3,
    body: DQuat,
    offset: DVec3,
    length: f64,
    reached: DVec3,
    granted: bool,
) -> DVec3 {
    let to = reached - at;
    let distance = to.length();
    if granted && distance > 0.0 {
        at + to * (length / distance)
    } else {
        at + body * offset
    }
}

/// `requested`, or the rotation `max_angle` radians from `current` toward it.
fn clamp_step(current: DQuat, requested: DQuat, max_angle: f64) -> DQuat {
    if max_angle >= std::f64::consts::PI {
        return requested;
    }
    let d = requested * current.conjugate();
    let angle = 2.0 * d.xyz().length().atan2(d.w.abs());
    if angle <= max_angle {
        return requested;
    }
    current.slerp(requested, max_angle / angle).normalize()
}

/// `angle` wrapped into `(-π, π]`.
fn wrap_angle(angle: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    let wrapped = angle - tau * (angle / tau).round();
    if wrapped <= -std::f64::consts::PI {
        wrapped + tau
    } else {
        wrapped
    }
}
