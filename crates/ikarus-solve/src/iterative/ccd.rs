//! Cyclic coordinate descent (CCD): each path joint in turn, tip to base, turns so the
//! effectors best meet their goals (seed 004, IK overview; Wang & Chen 1991).
//!
//! - **Classic**: at each joint the rotation that best aligns the joint-to-effector vectors
//!   with the joint-to-target vectors (and, for orientation goals, the effector's axes with
//!   the goal's axes), over all effectors the joint moves ([`Alignment`]).
//!   A hinge joint turns about its axis by the best angle for that axis.
//! - **MMD** (seed 001, MMD CCD): the *ideal* rotation (the free-axis alignment, hinges included)
//!   is projected onto the joint's limit; what the limit refused (the *residual*, with the
//!   components of fully locked axes zeroed so the chain does not oscillate) is added to the
//!   next joint's ideal rotation.
//! - **Length damping** (seed 002, length-damped CCD): joint `i`'s rotation is scaled by
//!   `w_i = (bone lengths from joint i to the effector) / (whole chain length)`, so joints near
//!   the root move more and the tip does not do all the work.
//! - **Any base joint** (seed 004, IK overview): with [`IkTask::base`] set, the path may run
//!   through the root; the driver turns base-side joints the other way and moves the root so the
//!   base stays put.
//!
//! Limits, step clamp, convergence and the report come from the shared [`driver`](super::driver).
//!
//! **Pattern moves.** CCD converges linearly, and slowly where the chain must fold (a limb
//! that starts straight: the pivots lie on one line, so no joint sees the distance error as a
//! turn) or slide along its limits. Its sweeps then repeat nearly the same change, so the
//! driver follows every improving sweep with a pattern move (Hooke–Jeeves): each path joint
//! continues that sweep's change by `r / (1 − r)` times, `r` being the sweep's own residual
//! ratio (the rest of a geometric series), kept only when it lowers the residual
//! ([`IterationSettings::pattern_factor`] caps the factor, default 16). The per-joint rules
//! above are untouched (the MMD variant stays MMD CCD's); the move lies between sweeps. On the
//! built-in humanoid's left hand (60 targets 5–25 cm from rest, no base, defaults;
//! `ikarus_bench::humanoid`) classic CCD reached 39 of the 54 targets Levenberg–Marquardt
//! reaches, the MMD variant 39, at a median of 38 sweeps; with the moves 53, 53 (length
//! damping) and 54, at a median of 4–6 sweeps. Limits were not the cause: with the
//! swing–twist limits removed the chain crawled the same way.
//!
//! **Paths through the root.** With a base joint the pattern move continues the base-side
//! joints' changes too, and the root then moves once so the base stays put. On the same
//! targets with `base: rightHand` (the path runs from the left hand over the chest to the
//! right hand, which stays fixed) LM converges on 26 of 60. Without the moves CCD's
//! coordinate steps crawl along the long path: classic, length-damped and MMD CCD reached 11,
//! 6 and 16 in 64 sweeps, and no more than 24 each with 512 or 2,048 sweeps (the step order
//! reversed, a 0.3 rad step clamp or other restart counts did not help). With the moves they
//! reach 24, 25 and 24 in 64 sweeps, and 25 each (96%) in the default budget of 128 sweeps,
//! converging in 13–19 sweeps on average. A solve that does not converge spends the whole
//! budget (the stall test restarts it at most 8 times, 16 sweeps apart), so the budget
//! bounds its cost: here about three times that of a 64-sweep failure without the moves
//! (twice the sweeps, each followed by its move).

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton};
use serde::{Deserialize, Serialize};

use crate::iterative::driver::{Iteration, IterationSettings, IterativeStep, Workspace};
use crate::iterative::path::Side;
use crate::linalg::align::Alignment;
use crate::{IkTask, SolveReport};

/// Which CCD rule turns each joint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CcdVariant {
    /// Best rotation per joint, hinges about their axis, then the limit.
    #[default]
    Classic,
    /// Seed 001 (MMD CCD): ideal rotation, limit, residual carried to the next joint.
    Mmd,
}

/// How each joint's rotation is scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CcdDamping {
    /// Every joint takes its full rotation.
    #[default]
    None,
    /// Seed 002 (damped CCD): weight by the remaining chain length (see the module docs).
    Length,
}

/// CCD parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CcdConfig {
    /// The per-joint rule. Default classic.
    pub variant: CcdVariant,
    /// Per-joint damping. Default none.
    pub damping: CcdDamping,
    /// The shared loop's parameters. Default: 128 sweeps (see the module docs: paths through
    /// the root need more than 64), the other fields at [`IterationSettings`]' defaults.
    /// Solves that converge stop early; the budget bounds the cost of those that do not. In
    /// task files, fields left out of `"iteration"` keep these defaults.
    #[serde(deserialize_with = "ccd_iteration")]
    pub iteration: IterationSettings,
}

/// `"iteration"` on top of CCD's own defaults (not the generic ones).
fn ccd_iteration<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<IterationSettings, D::Error> {
    IterationSettings::deserialize_onto(deserializer, CcdConfig::default().iteration)
}

impl Default for CcdConfig {
    fn default() -> Self {
        Self {
            variant: CcdVariant::default(),
            damping: CcdDamping::default(),
            iteration: IterationSettings {
                max_iterations: 128,
                ..IterationSettings::default()
            },
        }
    }
}

impl CcdConfig {
    /// A configuration with the given rule, damping and sweep budget, other loop parameters
    /// at their defaults.
    pub fn new(variant: CcdVariant, damping: CcdDamping, max_iterations: u32) -> Self {
        Self {
            variant,
            damping,
            iteration: IterationSettings {
                max_iterations,
                ..Self::default().iteration
            },
        }
    }
}

/// Reusable buffers for [`solve_with`].
#[derive(Clone, Debug, Default)]
pub struct CcdWorkspace {
    driver: Workspace,
    weights: Vec<f64>,
}

impl CcdWorkspace {
    /// An empty workspace; it sizes itself on first use.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Solves `task` by CCD, allocating a workspace. `pose` is the start pose on entry and the best
/// pose found on exit.
pub fn solve(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &CcdConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    solve_with(skeleton, task, config, &mut CcdWorkspace::new(), pose)
}

/// Solves `task` by CCD with reusable buffers (no allocation once warm).
pub fn solve_with(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &CcdConfig,
    workspace: &mut CcdWorkspace,
    pose: &mut LocalPose,
) -> SolveReport {
    let mut step = CcdStep {
        config,
        weights: &mut workspace.weights,
        reach: 0.0,
    };
    workspace
        .driver
        .run(skeleton, task, &config.iteration, pose, &mut step)
}

struct CcdStep<'a> {
    config: &'a CcdConfig,
    /// Damping weight per path joint.
    weights: &'a mut Vec<f64>,
    /// Total path length, the lever arm for orientation goals at the effector's own joint.
    reach: f64,
}

/// Sum of model-space bone lengths from `from` up to (not including) its ancestor `to`.
fn length_up(skeleton: &Skeleton, model: &ModelPose, from: JointId, to: JointId) -> f64 {
    let mut length = 0.0;
    let mut joint = from;
    while joint != to {
        let Some(parent) = skeleton.parent(joint) else {
            break;
        };
        length += (model.position(joint) - model.position(parent)).length();
        joint = parent;
    }
    length
}

impl IterativeStep for CcdStep<'_> {
    fn pattern_moves(&self) -> bool {
        true
    }

    fn prepare(&mut self, ctx: &mut Iteration<'_>) {
        let (skeleton, model, path, task) = (ctx.skeleton(), ctx.model(), ctx.path(), ctx.task());
        self.weights.clear();
        self.weights.resize(path.len(), 1.0);
        self.reach = path
            .joints()
            .windows(2)
            .map(|w| (model.position(w[0].joint) - model.position(w[1].joint)).length())
            .sum();
        if self.config.damping == CcdDamping::None {
            return;
        }
        // w_k = (length from joint k to its effector) / (length of the effector's whole path).
        let remaining = |k: usize, e: JointId| -> f64 {
            let pj = path.joints()[k];
            match (pj.side, task.base) {
                (Side::Base, Some(base)) => {
                    let common = skeleton
                        .path_to_root(e)
                        .find(|&a| skeleton.is_ancestor_or_self(a, base))
                        .unwrap_or(pj.joint);
                    length_up(skeleton, model, e, common)
                        + length_up(skeleton, model, pj.joint, common)
                }
                _ => length_up(skeleton, model, e, pj.joint),
            }
        };
        for k in 0..path.len() {
            let Some(&first) = path.affects(k).first() else {
                continue;
            };
            let e = task.effectors[usize::from(first)].joint;
            let own = remaining(k, e);
            let total = (0..path.len())
                .filter(|&m| path.affects(m).contains(&first))
                .map(|m| remaining(m, e))
                .fold(0.0, f64::max);
            self.weights[k] = if own > 0.0 && total > 0.0 {
                own / total
            } else {
                1.0
            };
        }
    }

    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        let mmd = self.config.variant == CcdVariant::Mmd;
        let mut residual = DQuat::IDENTITY;
        for k in 0..ctx.path().len() {
            let pj = ctx.path().joints()[k];
            let (skeleton, model, task) = (ctx.skeleton(), ctx.model(), ctx.task());
            let pivot = model.position(pj.joint);
            let mut alignment = Alignment::new();
            for &i in ctx.path().affects(k) {
                let e = &task.effectors[usize::from(i)];
                let at = model.position(e.joint);
                if let Some(target) = e.goal.position {
                    alignment.add(at - pivot, target - pivot, e.weight);
                }
                if let Some(goal) = e.goal.orientation {
                    let lever = (at - pivot).length().max(self.reach).max(1e-9);
                    let current = model.rotation(e.joint);
                    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                        alignment.add(current * axis * lever, goal * axis * lever, e.weight);
                    }
                }
            }
            if let (JointLimit::Hinge(h), false) = (skeleton.limit(pj.joint), mmd) {
                // The best angle about the hinge's model-space axis, turned along its range.
                // The joint's own rotation about the axis leaves the axis where it is.
                let axis = (model.rotation(pj.joint) * h.axis).normalize();
                let angle = alignment.angle_about(axis) * self.weights[k];
                let h = *h;
                ctx.rotate_hinge(pj, &h, angle);
                continue;
            }
            let mut rotation = alignment.rotation();
            if mmd {
                rotation = (rotation * residual).normalize();
            }
            let weight = self.weights[k];
            if weight < 1.0 {
                rotation = DQuat::IDENTITY.slerp(rotation, weight);
            }
            let applied = ctx.rotate(pj, rotation);
            if mmd {
                // What the limit refused, in the joint's rest frame, minus locked axes.
                let (skeleton, model) = (ctx.skeleton(), ctx.model());
                let parent = skeleton
                    .parent(pj.joint)
                    .map_or(DQuat::IDENTITY, |p| model.rotation(p));
                let frame = parent * skeleton.rest(pj.joint).rotation;
                let refused = applied.conjugate() * rotation;
                let local = frame.conjugate() * refused * frame;
                let kept = skeleton.limit(pj.joint).unlocked_part(local);
                residual = (frame * kept * frame.conjugate()).normalize();
            }
        }
    }
}
