//! The fast path of a free chain ([`Chain`]) and the driver's step ([`FabrikStep`]).

#[allow(clippy::wildcard_imports)]
use super::*;

/// The fast path of the commonest case, a free chain: one effector with a position goal only,
/// every path joint on its effector side, without limits, carrying the next one (the last
/// carries the effector), no per-step clamp. The same passes as the general plan on
/// contiguous buffers indexed by link, without the general plan's per-joint bookkeeping.
#[derive(Clone, Debug, Default)]
pub(super) struct Chain {
    /// The links from the anchor outward; empty when the task is no free chain.
    pub(super) links: Vec<Link>,
    /// The anchor joint (the first link's parent) and the effector.
    pub(super) anchor: Option<JointId>,
    pub(super) effector: Option<JointId>,
    /// `points[i]`: link `i`'s joint, `points[links.len()]`: the effector (anchor frame), as
    /// the forward pass leaves them.
    pub(super) points: Vec<DVec3>,
    /// The same after the backward pass.
    pub(super) reached: Vec<DVec3>,
    /// `frames[i]`: the rotation (anchor frame) of link `i`'s parent segment;
    /// `frames[i + 1]`: link `i`'s segment.
    pub(super) frames: Vec<DQuat>,
    /// Per link: the local rotation the last forward pass left in the pose.
    pub(super) written: Vec<DQuat>,
    /// The points and frames are those of the pose the last sweep left.
    pub(super) fresh: bool,
    /// The target, anchor frame.
    pub(super) target: DVec3,
}

/// One link of a [`Chain`]: a joint and its bone to the next point.
#[derive(Clone, Copy, Debug)]
pub(super) struct Link {
    pub(super) pj: PathJoint,
    /// The bone in the joint's frame, and its length.
    pub(super) offset: DVec3,
    pub(super) length: f64,
}

impl Chain {
    /// Reads the chain from the general plan when it has the fast path's shape; otherwise
    /// leaves it empty.
    pub(super) fn build(&mut self, plan: &Plan, task: &IkTask) {
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
    pub(super) fn sweep(&mut self, ctx: &mut Iteration<'_>) {
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

pub(super) struct FabrikStep<'a> {
    pub(super) max_step_angle: f64,
    pub(super) plan: &'a mut Plan,
    pub(super) chain: &'a mut Chain,
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
    pub(super) fn forward(
        &mut self,
        ctx: &mut Iteration<'_>,
        index: usize,
        anchor_rotation: DQuat,
    ) {
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
