//! What the closed forms' crowd batches share — [`PreparedTask::solve_many_in`]: the same limb
//! of many characters at once, in `two_bone/many.rs` and `limb7/many.rs`: the scalar path a
//! single character takes, the layout of a chain solved in lanes, and writing it back to its
//! character.
//!
//! [`PreparedTask::solve_many_in`]: crate::PreparedTask::solve_many_in

#![allow(clippy::inline_always)] // the lane code must be compiled inside the dispatched function

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton};
use pulp::{Simd, bytemuck};

use crate::analytic::{self, ChainEngine, solve_in};
use crate::linalg::lanes::{InsideTest, Lanes, Mask, Quat, Vec3};
use crate::{Goal, IkTask, SolveReport, SolveStatus, Tolerance};

/// What every lane path needs of a three-joint chain (top, mid, end), compiled once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChainLanes {
    /// The top joint's parent.
    pub parent: JointId,
    /// Top, mid, end.
    pub joints: [JointId; 3],
    /// Their rest rotations.
    pub rest: [DQuat; 3],
    /// Their limits' cheap inside tests.
    pub tests: [InsideTest; 3],
}

impl ChainLanes {
    /// The chain `joints` of a one-effector `task`, when the lanes can take it: the joints are
    /// the effector and its parent and grandparent (`path`, the chain's path, is `joints`), the
    /// effector's weight is positive, the top joint has a parent, and the limits are of the
    /// kinds the lanes test (free, hinge, swing–twist).
    pub(crate) fn new(
        skeleton: &Skeleton,
        task: &IkTask,
        joints: [JointId; 3],
        path: &[JointId],
    ) -> Option<Self> {
        if task.effectors[0].weight <= 0.0 || path != joints {
            return None;
        }
        let [Some(a), Some(b), Some(c)] = joints.map(|j| InsideTest::new(skeleton.limit(j))) else {
            return None;
        };
        Some(Self {
            parent: skeleton.parent(joints[0])?,
            joints,
            rest: joints.map(|j| skeleton.rest(j).rotation),
            tests: [a, b, c],
        })
    }
}

/// Runs `batch` on the best instruction set of this machine.
pub(crate) fn run<E, L>(batch: Batch<'_, E, L>)
where
    for<'a> Batch<'a, E, L>: pulp::WithSimd<Output = ()>,
{
    pulp::Arch::new().dispatch(batch);
}

/// A batch: the same limb of many characters, `goals[i]` for `poses[i]` with `models[i]` its
/// forward kinematics, the report into `reports[i]`; `lanes` is what the engine's lane path
/// needs (each engine's `many.rs` runs the batch as a [`pulp::WithSimd`] operation).
pub(crate) struct Batch<'a, E, L> {
    /// The lane path's compiled shape.
    pub lanes: &'a L,
    /// The skeleton of every character.
    pub skeleton: &'a Skeleton,
    /// The closed form, for the characters the lanes leave.
    pub engine: &'a mut E,
    /// The prepared task (its goal is set per character the scalar path solves).
    pub task: &'a mut IkTask,
    /// One goal per character.
    pub goals: &'a [Goal],
    /// The characters' poses.
    pub poses: &'a mut [LocalPose],
    /// Their model poses.
    pub models: &'a mut [ModelPose],
    /// The reports.
    pub reports: &'a mut [SolveReport],
}

impl<E: ChainEngine, L> Batch<'_, E, L> {
    /// Character `i` by the scalar path: its goal set as the task's and checked, then
    /// [`solve_in`].
    #[inline(never)] // the rare path, out of the lane code's registers
    pub(crate) fn scalar(&mut self, i: usize) {
        #[cfg(test)]
        tests::SCALAR_SOLVES.with(|count| count.set(count.get() + 1));
        let (skeleton, task) = (self.skeleton, &mut *self.task);
        task.effectors[0].goal = self.goals[i];
        let (pose, model) = (&mut self.poses[i], &mut self.models[i]);
        self.reports[i] = match task.validate_goals(skeleton) {
            Ok(()) => solve_in(self.engine, skeleton, task, pose, model),
            Err(reason) => SolveReport::invalid(reason.to_string()),
        };
    }
}

/// Values a chain solved in lanes leaves per character ([`SolvedChain::store`]): three local
/// and three model rotations (24), the mid and end joints' model positions (6), `reached`
/// (1), the position error (1), and the rotation error's `|xyz|` and `|w|` (2).
pub(crate) const SOLVED: usize = 34;

/// A three-joint chain solved in lanes, as the scalar path would leave it.
pub(crate) struct SolvedChain<S: Simd> {
    /// The new local rotations, root-most joint first.
    pub locals: [Quat<S>; 3],
    /// The joints' new model rotations.
    pub rotations: [Quat<S>; 3],
    /// The mid joint's new model position.
    pub mid_at: Vec3<S>,
    /// The end joint's new model position.
    pub end_at: Vec3<S>,
    /// Whether the closed form reached the target.
    pub reached: Mask<S>,
    /// The end's distance from the position goal.
    pub position_error: Lanes<S>,
    /// The end's rotation to the orientation goal, normalized (its angle is taken per
    /// character, as `residuals` takes it).
    pub difference: Quat<S>,
}

impl<S: Simd> SolvedChain<S> {
    /// Into the first [`SOLVED`] registers of `computed`.
    #[inline(always)]
    pub(crate) fn store(&self, computed: &mut [S::f64s]) {
        let mut index = 0;
        while index < 6 {
            let q = if index < 3 {
                self.locals[index]
            } else {
                self.rotations[index - 3]
            };
            q.store(computed, 4 * index);
            index += 1;
        }
        self.mid_at.store(computed, 24);
        self.end_at.store(computed, 27);
        let one = self.position_error.constant(1.0);
        computed[30] = self.reached.select(one, one.constant(0.0)).value();
        computed[31] = self.position_error.value();
        computed[32] = self.difference.xyz().length().value();
        computed[33] = self.difference.w.abs().value();
    }
}

/// Lane `lane` of a [`SolvedChain`] stored in `computed` into its character: the three local
/// rotations into `pose`, the chain's frames into `model` (the root-most joint keeps its
/// position) and the rest of the chain's subtree brought along, and the report the scalar
/// path gives (one iteration, no limit active: the lanes solve only where none is).
#[inline(always)]
pub(crate) fn write_back<S: Simd>(
    (joints, skeleton, tolerance): ([JointId; 3], &Skeleton, Tolerance),
    (computed, lane, orientation): (&[S::f64s], usize, bool),
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> SolveReport {
    let width = S::F64_LANES;
    let flat: &[f64] = bytemuck::cast_slice(computed);
    let value = |field: usize| flat[field * width + lane];
    let quat = |index: usize| {
        DQuat::from_xyzw(
            value(4 * index),
            value(4 * index + 1),
            value(4 * index + 2),
            value(4 * index + 3),
        )
    };
    let [top, mid, end] = joints;
    for (index, joint) in joints.into_iter().enumerate() {
        pose[joint].rotation = quat(index);
    }
    let top_at = model.position(top);
    model.set_rigid(top, quat(3), top_at);
    model.set_rigid(mid, quat(4), DVec3::new(value(24), value(25), value(26)));
    model.set_rigid(end, quat(5), DVec3::new(value(27), value(28), value(29)));
    analytic::update_around_chain(skeleton, pose, model, &joints);
    let reached = value(30) != 0.0;
    let rotation_error = if orientation {
        2.0 * value(32).atan2(value(33))
    } else {
        0.0
    };
    let mut report = SolveReport::from_tolerance(tolerance, value(31), rotation_error, 1, false);
    if !report.converged() && !reached {
        report.status = SolveStatus::Unreachable;
    }
    report
}

/// What the batches' tests share: a crowd and the check against `solve_in`.
#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_rng::Xorshift;
    use crate::{Effector, PreparedTask, SolverConfig};
    use ikarus_core::fk;
    use ikarus_core::humanoid::builtin_humanoid;

    thread_local! {
        /// Characters solved by the scalar path on this thread.
        pub(crate) static SCALAR_SOLVES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// How many characters the crowd has: not a whole number of chunks.
    const CHARACTERS: usize = 61;

    /// The characters of [`crowd`] the lanes are not meant to solve: out of reach, the end
    /// turned past its limits, other bone lengths, not finite.
    pub(crate) const SPECIAL: usize = 19;

    /// A crowd of built-in humanoids placed and turned apart, the limb `names` (top, mid,
    /// end) posed by `pose_limb` (random legal poses, the mid joint bent), and per character
    /// a goal for the end: mostly the FK of another such pose, some without an orientation
    /// (`c % 13 == 3`), out of reach (5), turned past the end's limits (7), not finite
    /// (character 11); some characters have a longer end bone (9) or a scaled top joint (12).
    pub(crate) fn crowd(
        seed: u64,
        names: [&str; 3],
        pose_limb: impl Fn(&Skeleton, [JointId; 3], &mut LocalPose, &mut dyn FnMut() -> f64),
    ) -> (Skeleton, Vec<LocalPose>, Vec<Goal>) {
        let skeleton = builtin_humanoid();
        let mut rng = Xorshift(seed);
        let mut next = || rng.signed();
        let limb = names.map(|name| skeleton.joint(name).unwrap());
        let [top, _, end] = limb;
        let hips = skeleton.joint("hips").unwrap();
        let mut model = ModelPose::new(&skeleton);
        let mut poses = Vec::new();
        let mut goals = Vec::new();
        for c in 0..CHARACTERS {
            let mut pose = skeleton.rest_pose();
            pose[hips].translation = DVec3::new(next() * 5.0, 0.9 + 0.1 * next(), next() * 5.0);
            pose[hips].rotation = DQuat::from_rotation_y(3.0 * next());
            pose_limb(&skeleton, limb, &mut pose, &mut next);
            let mut source = pose.clone();
            pose_limb(&skeleton, limb, &mut source, &mut next);
            fk::forward_kinematics(&skeleton, &source, &mut model);
            let mut goal = Goal {
                position: Some(model.position(end)),
                orientation: Some(model.rotation(end)),
            };
            let past = DQuat::from_axis_angle(DVec3::new(0.6, 0.8, 0.0), 1.5 + next());
            match c % 13 {
                3 => goal.orientation = None,
                5 => goal.position = Some(model.position(end) + DVec3::new(0.0, -2.0, 0.0)),
                7 => goal.orientation = Some(model.rotation(end) * past),
                9 => pose[end].translation *= 1.1,
                11 if c == 11 => goal.position = Some(DVec3::new(f64::NAN, 0.0, 0.0)),
                12 => pose[top].scale = DVec3::new(1.2, 1.0, 1.0),
                _ => {}
            }
            poses.push(pose);
            goals.push(goal);
        }
        (skeleton, poses, goals)
    }

    /// Three frames of the crowd, each from the poses the last one left, through the batch
    /// on `simd` (the engine and lane path `make` builds for the task) and, character by
    /// character, through a `PreparedTask` of `config` with `solve_in`: the same reports,
    /// poses and model poses, bit for bit; at most `bound(frame)` characters by the scalar
    /// path; at least half of the crowd converged.
    pub(crate) fn check_frames<S: Simd, E: ChainEngine, L>(
        simd: S,
        (skeleton, mut poses, goals): (Skeleton, Vec<LocalPose>, Vec<Goal>),
        (end, config): (&str, &str),
        make: impl Fn(&Skeleton, &IkTask) -> (E, L),
        bound: impl Fn(usize) -> usize,
    ) where
        for<'a> Batch<'a, E, L>: pulp::WithSimd<Output = ()>,
    {
        let label = format!("{simd:?} {config}");
        let shape = IkTask {
            effectors: vec![Effector {
                joint: skeleton.joint(end).unwrap(),
                goal: goals[0],
                weight: 1.0,
            }],
            ..IkTask::default()
        };
        let config: SolverConfig = serde_json::from_str(config).unwrap();
        let mut scalar = PreparedTask::new(&skeleton, &shape, &config).unwrap();
        // One engine for the three frames (limb7 keeps its limb between them).
        let (mut engine, lanes) = make(&skeleton, &shape);
        let mut models: Vec<ModelPose> = poses
            .iter()
            .map(|pose| {
                let mut model = ModelPose::new(&skeleton);
                fk::forward_kinematics(&skeleton, pose, &mut model);
                model
            })
            .collect();
        for frame in 0..3 {
            let mut expected_poses = poses.clone();
            let mut expected_models = models.clone();
            let expected: Vec<SolveReport> = expected_poses
                .iter_mut()
                .zip(&mut expected_models)
                .zip(&goals)
                .map(|((pose, model), goal)| {
                    *scalar.goal_mut(0) = *goal;
                    scalar.solve_in(pose, model)
                })
                .collect();
            let mut reports = vec![SolveReport::invalid(String::new()); poses.len()];
            SCALAR_SOLVES.with(|count| count.set(0));
            simd.vectorize(Batch {
                lanes: &lanes,
                skeleton: &skeleton,
                engine: &mut engine,
                task: &mut shape.clone(),
                goals: &goals,
                poses: &mut poses,
                models: &mut models,
                reports: &mut reports,
            });
            let scalar_solves = SCALAR_SOLVES.with(std::cell::Cell::get);
            for i in 0..poses.len() {
                let at = format!("{label} frame {frame} character {i}");
                assert_eq!(reports[i], expected[i], "{at}");
                assert_eq!(poses[i], expected_poses[i], "{at}");
                assert_eq!(models[i], expected_models[i], "{at}");
            }
            assert!(
                scalar_solves <= bound(frame),
                "{label} frame {frame}: {scalar_solves} of {} by the scalar path",
                poses.len()
            );
            let converged = reports.iter().filter(|r| r.converged()).count();
            assert!(converged >= poses.len() / 2, "{label}: {converged}");
        }
    }

    /// A batch test, run on one instruction set for one crowd.
    pub(crate) trait Run {
        /// The test on `simd` for the crowd drawn from `seed`.
        fn run<S: Simd>(&self, simd: S, seed: u64);
    }

    /// `test` on three crowds, on the baseline and on every instruction set this machine has.
    pub(crate) fn on_every_instruction_set(test: &impl Run) {
        for seed in [1, 2, 3] {
            test.run(pulp::Scalar::new(), seed);
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(simd) = pulp::x86::V3::try_new() {
                    test.run(simd, seed);
                }
                if let Some(simd) = pulp::x86::V4::try_new() {
                    test.run(simd, seed);
                }
            }
        }
    }
}
