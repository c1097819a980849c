//! Prepared tasks: a task's shape (skeleton, effector joints and weights, base, tolerances,
//! solver configuration) checked and compiled once into a reusable object that owns its
//! workspace, for callers that solve the same kind of task every frame — every limb of every
//! character of a game.
//!
//! Per frame only the goals ([`PreparedTask::goal_mut`]) and the pose go in. A warm prepared
//! `two_bone`, `limb7`, `ccd`, `lm`, `fabrik` or `jacobian` task allocates nothing (except
//! the names of joints whose limits had to be enforced, and the feasible swivel intervals when
//! a limb7 policy computes them, both in the report):
//! - the closed forms `two_bone` and `limb7` compute the model frames of their chain's
//!   ancestors and of the chain only (not the whole skeleton), measure the residual from
//!   them, and limb7 keeps its limb geometry while the bones it was built from do not change;
//! - the iterative solvers (`ccd`, `lm`, `fabrik`, `jacobian`) run with the task's own
//!   [`SolverWorkspace`];
//! - `none`, `aim` and `leg6` run their one-shot form (which still allocates a model pose per
//!   solve: not yet prepared).
//!
//! [`PreparedTask::solve_in`] also takes the caller's model pose (the forward kinematics of
//! the pose, which a game keeps for skinning): the closed forms read the chain's ancestors
//! from it and leave it current, recomputing only the chain and its subtree.
//!
//! [`PreparedTask::solve_many_in`] solves the task for many characters of the skeleton at
//! once — the same limb of every character of a game, each with its own goal, pose and model
//! pose. The closed forms run it in SIMD lanes (the chain's frames, the closed form, the
//! limits' cheap inside test and the residual, 4 or 8 characters at a time), by the
//! operations of `solve_in` in its order, so every character gets `solve_in`'s pose and report
//! bit for bit (tested); characters that need a special case take the scalar path.
//!
//! [`solve`](crate::solve) is the one-shot convenience: it prepares and solves once, and gives
//! the same pose and report bit for bit (tested).
//!
//! ```
//! use ikarus_core::{glam::DVec3, humanoid::builtin_humanoid};
//! use ikarus_solve::{Effector, Goal, IkTask, PreparedTask, SolverConfig};
//!
//! let skeleton = builtin_humanoid();
//! let hand = skeleton.joint("leftHand").unwrap();
//! let shape = IkTask {
//!     effectors: vec![Effector {
//!         joint: hand,
//!         goal: Goal { position: Some(DVec3::new(0.55, 1.2, 0.2)), orientation: None },
//!         weight: 1.0,
//!     }],
//!     ..IkTask::default()
//! };
//! let config: SolverConfig = serde_json::from_str(r#"{"kind": "limb7"}"#).unwrap();
//! let mut arm = PreparedTask::new(&skeleton, &shape, &config).unwrap();
//! let mut pose = skeleton.rest_pose();
//! for frame in 0..3 {
//!     arm.goal_mut(0).position = Some(DVec3::new(0.55, 1.2 + 0.02 * f64::from(frame), 0.2));
//!     let report = arm.solve(&mut pose);
//!     assert!(report.converged());
//! }
//! ```

use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};

use crate::analytic::crowd;
use crate::analytic::limb7::{Limb7Lanes, Limb7Task};
use crate::analytic::two_bone::{TwoBoneLanes, TwoBoneTask};
use crate::analytic::{self, ChainEngine};
use crate::body::{BodyConfig, BodyRig, BodyScratch};
use crate::{
    FitError, Goal, IkTask, SolveReport, SolverConfig, SolverWorkspace, TaskError, solve_with,
};

/// A task's shape compiled once for a skeleton; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct PreparedTask<'s> {
    skeleton: &'s Skeleton,
    task: IkTask,
    config: SolverConfig,
    engine: Engine,
    /// Scratch model frames of the closed forms (only their chain's frames are computed).
    model: ModelPose,
}

/// What runs a prepared task.
#[derive(Clone, Debug)]
enum Engine {
    /// Closed-form two-bone IK on the chain's frames only, and its lane path for
    /// [`PreparedTask::solve_many_in`] when the shape has one.
    TwoBone(Box<TwoBoneTask>, Option<Box<TwoBoneLanes>>),
    /// The closed-form 7-DOF limb on the chain's frames only, its limb kept between solves,
    /// and its lane path for [`PreparedTask::solve_many_in`] when the shape has one.
    Limb7(Box<Limb7Task>, Option<Box<Limb7Lanes>>),
    /// The full-body solver with the skeleton's body found once.
    Body(Box<(BodyRig, BodyConfig, BodyScratch)>),
    /// [`solve_with`] on the task's own buffers.
    General(Box<SolverWorkspace>),
}

/// Why a task's shape cannot be prepared.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// The task itself is invalid (unknown joints, the base an effector, bad goals or
    /// tolerances): fix the task.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// The solver does not fit the task (a closed form given several effectors or a base,
    /// a chain without the joints or hinge it needs) or its parameters are out of range.
    #[error(transparent)]
    Solver(#[from] FitError),
}

impl<'s> PreparedTask<'s> {
    /// Checks `task` and `config` once and compiles the task's shape. The goals in `task` are
    /// the initial goals; change them with [`goals_mut`](Self::goals_mut) before each
    /// [`solve`](Self::solve).
    ///
    /// # Errors
    /// [`PrepareError`] saying what does not fit.
    pub fn new(
        skeleton: &'s Skeleton,
        task: &IkTask,
        config: &SolverConfig,
    ) -> Result<Self, PrepareError> {
        task.validate(skeleton)?;
        let engine = match config {
            SolverConfig::TwoBone(c) => {
                let engine = TwoBoneTask::new(skeleton, task, c).map_err(PrepareError::Solver)?;
                let lanes = TwoBoneLanes::new(&engine, skeleton, task).map(Box::new);
                Engine::TwoBone(Box::new(engine), lanes)
            }
            SolverConfig::Limb7(c) => {
                let engine = Limb7Task::new(skeleton, task, c).map_err(PrepareError::Solver)?;
                let lanes = Limb7Lanes::new(&engine, skeleton, task).map(Box::new);
                Engine::Limb7(Box::new(engine), lanes)
            }
            SolverConfig::Body(c) => {
                let rig = BodyRig::new(skeleton, c).map_err(|e| PrepareError::Solver(e.into()))?;
                rig.check_task(skeleton, task)
                    .map_err(|e| PrepareError::Solver(e.into()))?;
                let scratch = BodyScratch::new(skeleton, &rig);
                Engine::Body(Box::new((rig, c.clone(), scratch)))
            }
            _ => {
                if let Some(settings) = config.clone().iteration_mut() {
                    settings
                        .validate()
                        .map_err(|e| PrepareError::Solver(e.into()))?;
                }
                Engine::General(Box::default())
            }
        };
        Ok(Self {
            skeleton,
            task: task.clone(),
            config: config.clone(),
            engine,
            model: ModelPose::new(skeleton),
        })
    }

    /// The skeleton this task was prepared for.
    pub fn skeleton(&self) -> &'s Skeleton {
        self.skeleton
    }

    /// The task as it stands (its goals are the last ones set).
    pub fn task(&self) -> &IkTask {
        &self.task
    }

    /// The goal of effector `index` (in the order of the prepared task), to set before a
    /// solve.
    ///
    /// # Panics
    /// When the task has no effector `index`.
    pub fn goal_mut(&mut self, index: usize) -> &mut Goal {
        &mut self.task.effectors[index].goal
    }

    /// The goals, one per effector in the order of the prepared task, to set before a solve.
    /// The rest of the shape (joints, weights, base, tolerances) is fixed.
    pub fn goals_mut(&mut self) -> impl ExactSizeIterator<Item = &mut Goal> + '_ {
        self.task.effectors.iter_mut().map(|e| &mut e.goal)
    }

    /// Solves the task with its current goals on `pose` (the start pose on entry, the pose
    /// found on exit), exactly as [`solve`](crate::solve) would. Bad goals give
    /// [`SolveStatus::InvalidInput`](crate::SolveStatus::InvalidInput) and leave the pose
    /// untouched.
    ///
    /// # Panics
    /// When `pose` was sized for another skeleton.
    pub fn solve(&mut self, pose: &mut LocalPose) -> SolveReport {
        let (skeleton, task) = (self.skeleton, &self.task);
        // Only the goals can have changed since `new` checked the whole task.
        if let Err(reason) = task.validate_goals(skeleton) {
            return SolveReport::invalid(reason.to_string());
        }
        match &mut self.engine {
            Engine::TwoBone(engine, _) => {
                engine.update_frames(skeleton, pose, &mut self.model);
                engine.solve_chain(skeleton, task, pose, &mut self.model)
            }
            Engine::Limb7(engine, _) => {
                engine.update_frames(skeleton, pose, &mut self.model);
                engine.solve_chain(skeleton, task, pose, &mut self.model)
            }
            Engine::Body(body) => {
                let (rig, config, scratch) = &mut **body;
                rig.solve_with(skeleton, task, config, pose, scratch)
            }
            Engine::General(workspace) => solve_with(skeleton, task, &self.config, workspace, pose),
        }
    }

    /// [`solve`](Self::solve) for a caller that keeps the model pose of `pose` — a game's
    /// animation pass computes it anyway, for skinning: `model` must be the forward
    /// kinematics of `pose` on entry (at least of the chain and its ancestors), and is on
    /// return the forward kinematics of the new pose. The closed forms `two_bone` and `limb7`
    /// then read the chain's ancestors from `model` instead of computing them, and recompute
    /// only the chain and its subtree (what the solve moved); the full-body solver starts
    /// from `model` instead of its own forward kinematics; the other solvers run as
    /// [`solve`](Self::solve) does and then recompute the whole model pose. The same pose and
    /// report as [`solve`](Self::solve) (tested).
    ///
    /// # Panics
    /// When `pose` or `model` was sized for another skeleton.
    pub fn solve_in(&mut self, pose: &mut LocalPose, model: &mut ModelPose) -> SolveReport {
        let (skeleton, task) = (self.skeleton, &self.task);
        if let Err(reason) = task.validate_goals(skeleton) {
            return SolveReport::invalid(reason.to_string());
        }
        match &mut self.engine {
            // The chain's frames are new; the rest of its subtree is brought along.
            Engine::TwoBone(engine, _) => {
                analytic::solve_in(&mut **engine, skeleton, task, pose, model)
            }
            Engine::Limb7(engine, _) => {
                analytic::solve_in(&mut **engine, skeleton, task, pose, model)
            }
            // The body solve starts from the caller's frames and hands back its own.
            Engine::Body(body) => {
                let (rig, config, scratch) = &mut **body;
                rig.solve_in(skeleton, task, config, pose, model, scratch)
            }
            Engine::General(workspace) => {
                let report = solve_with(skeleton, task, &self.config, workspace, pose);
                fk::forward_kinematics(skeleton, pose, model);
                report
            }
        }
    }

    /// [`solve_in`](Self::solve_in) for many characters of the task's skeleton at once — the
    /// same limb of every character of a game, each with its own goal: `goals[i]` (one goal
    /// per effector, in the prepared task's order, character after character) on `poses[i]`,
    /// whose forward kinematics `models[i]` must hold on entry and holds on return, the
    /// report into `reports[i]`. Every character gets the pose, model pose and report
    /// [`solve_in`](Self::solve_in) would give it, bit for bit (tested).
    ///
    /// A `two_bone` task that keeps the bend plane (no pole or hint, no softening or
    /// blending) and a `limb7` task with the `keep_current` swivel, on joints whose limits
    /// are free, hinges or swing–twist, solve several characters at a time in SIMD lanes (4
    /// with AVX2, 8 with AVX-512, chosen at run time): the chain's frames, the closed form
    /// (for limb7 the current swivel too), the orientation goal, the limits' cheap inside
    /// test and the residual are computed lane-wise. Characters that need a special case — a
    /// limit to enforce (or, for limb7, a swivel to search), a straight limb, a target out
    /// of reach, a scaled joint, bones other than those of the limb the task keeps, an
    /// invalid goal — take the scalar path. Other tasks are solved one character after
    /// another. Afterwards the task's own goals ([`goal_mut`](Self::goal_mut)) hold one of
    /// the batch's: set them before the next [`solve`](Self::solve).
    ///
    /// # Panics
    /// When the slices' lengths do not match (`goals` has one entry per effector and
    /// character; `models` and `reports` one per pose), or a pose or model pose was sized
    /// for another skeleton.
    pub fn solve_many_in(
        &mut self,
        goals: &[Goal],
        poses: &mut [LocalPose],
        models: &mut [ModelPose],
        reports: &mut [SolveReport],
    ) {
        let effectors = self.task.effectors.len();
        assert_eq!(
            models.len(),
            poses.len(),
            "solve_many_in: one model pose per pose"
        );
        assert_eq!(
            reports.len(),
            poses.len(),
            "solve_many_in: one report per pose"
        );
        assert_eq!(
            goals.len(),
            poses.len() * effectors,
            "solve_many_in: one goal per effector and pose"
        );
        let skeleton = self.skeleton;
        // The closed forms with lanes: one crowd batch, the same fields for either engine.
        macro_rules! lanes_batch {
            ($engine:expr, $lanes:expr) => {
                crowd::run(crowd::Batch {
                    lanes: &**$lanes,
                    skeleton,
                    engine: &mut **$engine,
                    task: &mut self.task,
                    goals,
                    poses,
                    models,
                    reports,
                })
            };
        }
        match &mut self.engine {
            Engine::Limb7(engine, Some(lanes)) => lanes_batch!(engine, lanes),
            Engine::TwoBone(engine, Some(lanes)) => lanes_batch!(engine, lanes),
            _ => {
                for (((pose, model), report), goals) in poses
                    .iter_mut()
                    .zip(models.iter_mut())
                    .zip(reports.iter_mut())
                    .zip(goals.chunks_exact(effectors))
                {
                    for (effector, goal) in self.task.effectors.iter_mut().zip(goals) {
                        effector.goal = *goal;
                    }
                    *report = self.solve_in(pose, model);
                }
            }
        }
    }
}
