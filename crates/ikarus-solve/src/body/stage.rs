//! The full-body solve's stages (see the [module docs](super)): goals blended, the body by
//! Levenberg–Marquardt on the pelvis and spine, the limbs by the two-bone closed form, the head.

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};

use super::descent::{
    Body, Normal, PELVIS_METRES, PELVIS_RADIANS, REACH, RESIDUALS, Role, SpineJoint, Target,
    UNKNOWNS, cost, onto_limit,
};
use super::limb::solve_limb;
use super::rig::BodyRig;
use super::{BodyConfig, RootMode};
use crate::analytic::enforce_limits_into;
use crate::report::residuals;
use crate::{IkTask, SolveReport, SolveStatus};

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

/// `buffer`'s allocation, taken out of it, holding `items`.
fn refill<T>(buffer: &mut Vec<T>, items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = std::mem::take(buffer);
    v.clear();
    v.extend(items);
    v
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
    ///
    /// Kept as one function of about 290 lines: the numbered stages share one set of borrowed
    /// buffers (the scratch's, destructured once); the stages that stand alone ([`Body`],
    /// [`solve_limb`], [`turn_head`](Self::turn_head)) are in functions of their own.
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
#[cfg(test)]
mod tests {
    use super::super::limb::{swivel, twisted};
    use super::*;
    use crate::analytic::two_bone::{self, Pole, TwoBoneChain, TwoBoneSettings};
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
