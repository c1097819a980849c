//! FABRIK, forward and backward reaching IK (Aristidou & Lasenby 2011; the IK overview's particle
//! IK): joints are points moved along lines toward the targets and back, and the posture is
//! recovered from the points ([`recover`](crate::recover)).
//!
//! One sweep of the shared [`driver`](crate::driver) is one FABRIK iteration on the path's joint
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

use crate::iterative::driver::{Iteration, IterationSettings, IterativeStep, Workspace};
use crate::iterative::path::{PathJoint, Side};
use crate::recover::RotationFit;
use crate::{IkTask, SolveReport};

mod plan;
#[allow(clippy::wildcard_imports)]
use plan::*;
mod step;
#[allow(clippy::wildcard_imports)]
use step::*;

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
    workspace
        .driver
        .run(skeleton, task, &config.iteration, pose, &mut step)
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
