//! The general plan: what moves (the anchor, pivots, bends, attached sub-bases) and the\n//! backward and forward passes over it.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The frame the points are held in.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) enum Anchor {
    /// Model space (the path runs through the root, which moves).
    #[default]
    Model,
    /// The frame of this joint, which no path joint moves.
    Joint(JointId),
}

/// A path joint and the points its turn moves.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pivot {
    pub(super) pj: PathJoint,
    /// The joint's parent (every path joint has one).
    pub(super) parent: JointId,
    /// `attached[start..end]`.
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) hinge: Option<HingeLimit>,
    pub(super) rest: DQuat,
    /// An effector at this joint with an orientation goal: its index.
    pub(super) orientation: Option<u16>,
    /// The bend plane of a hinge child (see [`Bend`]).
    pub(super) bend: Option<Bend>,
}

/// An effector-side pivot whose only attached child `hinge` is a hinge joint carrying one
/// point `tip`: the pivot also turns so that the hinge's axis (`axis`, in the pivot's frame)
/// stands on the plane of the pivot, the hinge and the tip's backward points, on the side
/// (`sign`) whose bend the hinge's range allows. Without it FABRIK bends a straight limb
/// within whatever plane the pass happens to leave, and a one-sided hinge (elbow, knee) sticks
/// at its stop.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bend {
    pub(super) hinge: JointId,
    pub(super) tip: JointId,
    pub(super) axis: DVec3,
    pub(super) sign: f64,
}

/// A point carried by a pivot's segment, at `offset` from the pivot in that segment's frame.
#[derive(Clone, Copy, Debug)]
pub(super) struct Attached {
    pub(super) joint: JointId,
    pub(super) offset: DVec3,
    /// `|offset|`.
    pub(super) length: f64,
}

/// What one solve needs, built by `prepare`; per-joint buffers indexed by joint.
#[derive(Clone, Debug, Default)]
pub(super) struct Plan {
    /// Path joints from the anchor outward (the path reversed).
    pub(super) pivots: Vec<Pivot>,
    pub(super) attached: Vec<Attached>,
    pub(super) anchor: Anchor,
    /// Total bone length of the tree, the lever arm of orientation goals.
    pub(super) reach: f64,
    /// Per joint: bit 1 effector-side path joint, 2 base-side, 4 effector with a position.
    pub(super) role: Vec<u8>,
    /// Per joint: the point's place (anchor frame), updated by the forward pass.
    pub(super) position: Vec<DVec3>,
    /// Per joint: the point's place after the backward pass.
    pub(super) reached: Vec<DVec3>,
    /// Per joint: weighted sum of backward proposals (xyz) and their weight (w).
    pub(super) sum: Vec<DVec4>,
    /// Per joint: the frame's rotation (anchor frame).
    pub(super) rotation: Vec<DQuat>,
    /// Per joint: the index of its effector-side pivot, `u32::MAX` for none.
    pub(super) pivot_of: Vec<u32>,
    /// Per pivot: the joint's limit.
    pub(super) limits: Vec<JointLimit>,
    /// Per pivot: the local rotation the last forward pass left in the pose.
    pub(super) written: Vec<DQuat>,
    /// The points and frames are those of the pose the last sweep left (see `load`).
    pub(super) fresh: bool,
    /// The anchor frame's inverse model transform and its model rotation, as last loaded.
    pub(super) anchor_from_model: DAffine3,
    pub(super) anchor_rotation: DQuat,
}

pub(super) const EFFECTOR_SIDE: u8 = 1;
pub(super) const BASE_SIDE: u8 = 2;
pub(super) const TARGET: u8 = 4;

impl Plan {
    pub(super) fn build(
        &mut self,
        skeleton: &Skeleton,
        task: &IkTask,
        pose: &LocalPose,
        path: &[PathJoint],
    ) {
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
    pub(super) fn attach(
        &mut self,
        skeleton: &Skeleton,
        pose: &LocalPose,
        pj: PathJoint,
        parent: JointId,
    ) {
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
    pub(super) fn bend(&self, index: usize) -> Option<Bend> {
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
    pub(super) fn add_bend(
        &mut self,
        bend: Bend,
        at: DVec3,
        reference: DQuat,
        fit: &mut RotationFit,
    ) {
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
    pub(super) fn load(&mut self, ctx: &Iteration<'_>) -> DQuat {
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
    pub(super) fn backward(&mut self, task: &IkTask, anchor_rotation: DQuat) {
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
    pub(super) fn segment(
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
    pub(super) fn forward_link(&mut self, ctx: &mut Iteration<'_>, index: usize) -> bool {
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
    pub(super) fn hinge_turn(
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
    pub(super) fn is_limited(&self, joint: JointId) -> bool {
        let index = self.pivot_of[joint.index()];
        index != u32::MAX && !self.limits[index as usize].is_free()
    }

    /// The segment rotation of a pivot whose child `a` (reached at `reached`) is a limited
    /// effector-side path joint: `segment`, or the nearest one the child's limit allows given
    /// the child's own backward segment.
    pub(super) fn constrain(
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
