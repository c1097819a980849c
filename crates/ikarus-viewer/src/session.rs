//! One connection's state and how each request changes it. No I/O: text in, replies out.

use std::sync::Arc;
use std::time::Instant;

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, Skeleton, fk};
use ikarus_formats::Document;
use ikarus_formats::bvh::BvhLayout;
use ikarus_solve::{Effector, Goal, IkTask, SolverConfig};

use crate::catalog::Catalog;
use crate::protocol::{
    EffectorInfo, JointInfo, MotionInfo, PoseInfo, Reply, ReportInfo, Request, SkeletonInfo,
    SourceFormat,
};

/// Undo steps kept per connection.
const UNDO_LIMIT: usize = 256;

/// What undo and redo restore.
#[derive(Clone, Debug)]
struct Snapshot {
    pose: LocalPose,
    effectors: Vec<Effector>,
    base: Option<JointId>,
}

/// The skeleton a session works on, with its motion and BVH layout.
#[derive(Clone, Debug)]
pub(crate) struct Loaded {
    pub name: String,
    pub format: SourceFormat,
    pub document: Document,
}

/// Everything one page connection owns; another connection never sees it.
pub struct Session {
    catalog: Arc<Catalog>,
    pub(crate) loaded: Loaded,
    pub(crate) pose: LocalPose,
    model: ModelPose,
    task: IkTask,
    solver: SolverConfig,
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    /// The joint of the drag in progress (consecutive drags share one undo step).
    dragging: Option<JointId>,
    /// The pose and task the last solve started from, for `trace`.
    last_start: Option<(LocalPose, IkTask, u32)>,
    pub(crate) keys: Vec<LocalPose>,
}

/// A failed request: the message goes back as [`Reply::Error`].
pub(crate) type Outcome = Result<Vec<Reply>, String>;

impl Session {
    /// A session on the catalog's first document.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        let loaded = catalog.initial();
        let skeleton = &loaded.document.skeleton;
        Self {
            pose: skeleton.rest_pose(),
            model: ModelPose::new(skeleton),
            task: IkTask::default(),
            solver: SolverConfig::Ccd(ikarus_solve::CcdConfig::default()),
            undo: Vec::new(),
            redo: Vec::new(),
            dragging: None,
            last_start: None,
            keys: Vec::new(),
            catalog,
            loaded,
        }
    }

    /// The replies sent when the connection opens: welcome, skeleton, pose.
    pub fn greeting(&mut self) -> Vec<Reply> {
        vec![
            Reply::Welcome {
                solvers: crate::catalog::solver_choices(),
                sources: self.catalog.sources(),
                max_upload: crate::MAX_UPLOAD_BYTES,
            },
            Reply::Skeleton(self.skeleton_info()),
            self.pose_reply(None, None),
        ]
    }

    /// Handles one text message. Never panics on bad input: anything wrong is one
    /// [`Reply::Error`] and leaves the state as it was.
    pub fn handle_text(&mut self, text: &str) -> Vec<Reply> {
        if text.len() > crate::MAX_UPLOAD_BYTES + 4096 {
            return vec![error(format!(
                "message of {} bytes is larger than the {} byte limit",
                text.len(),
                crate::MAX_UPLOAD_BYTES
            ))];
        }
        let request = match serde_json::from_str::<Request>(text) {
            Ok(request) => request,
            Err(e) => return vec![error(format!("bad message: {e}"))],
        };
        self.handle(request)
            .unwrap_or_else(|message| vec![error(message)])
    }

    /// Handles one parsed request.
    pub(crate) fn handle(&mut self, request: Request) -> Outcome {
        if !matches!(request, Request::Drag { .. }) {
            self.dragging = None;
        }
        match request {
            Request::Load { source, name, text } => self.load(source, name, text),
            Request::SetEffector {
                joint,
                position,
                orientation,
            } => self.set_effector(&joint, position, orientation),
            Request::RemoveEffector { joint } => self.remove_effector(&joint),
            Request::SetBase { joint } => self.set_base(joint.as_deref()),
            Request::Drag {
                joint,
                position,
                orientation,
            } => self.drag(&joint, position, orientation),
            Request::Solver { config } => {
                check_budget(&config)?;
                self.solver = config;
                self.solve_and_reply()
            }
            Request::Trace => Ok(vec![self.trace()]),
            Request::Undo => self.step_history(true),
            Request::Redo => self.step_history(false),
            Request::Reset => {
                self.remember();
                self.pose = self.skeleton().rest_pose();
                self.task.effectors.clear();
                self.task.base = None;
                Ok(vec![self.pose_reply(None, None)])
            }
            Request::Frame { index } => self.show_frame(index),
            Request::CaptureKey => self.capture_key(),
            Request::ClearKeys => {
                self.keys.clear();
                Ok(vec![Reply::Keys { count: 0 }])
            }
            Request::Generate {
                duration,
                fps,
                profile,
            } => self.generate(duration, fps.unwrap_or(30.0), profile),
            Request::ExportBvh => self.export_bvh(),
        }
    }

    pub(crate) fn skeleton(&self) -> &Skeleton {
        &self.loaded.document.skeleton
    }

    fn joint(&self, name: &str) -> Result<JointId, String> {
        self.skeleton().joint(name).ok_or_else(|| {
            format!(
                "unknown joint `{name}` in {} (it has {} joints)",
                self.loaded.name,
                self.skeleton().len()
            )
        })
    }

    fn load(
        &mut self,
        source: Option<String>,
        name: Option<String>,
        text: Option<String>,
    ) -> Outcome {
        let loaded = match (source, name, text) {
            (Some(source), None, None) => self.catalog.open_source(&source)?,
            (None, Some(name), Some(text)) => crate::catalog::parse_upload(&name, &text)?,
            _ => return Err("load takes either `source` or `name` and `text`".to_owned()),
        };
        self.model = ModelPose::new(&loaded.document.skeleton);
        self.pose = match loaded.document.motion.as_ref().and_then(|m| m.frame(0)) {
            Some(frame) => frame.clone(),
            None => loaded.document.skeleton.rest_pose(),
        };
        self.loaded = loaded;
        self.task = IkTask::default();
        self.undo.clear();
        self.redo.clear();
        self.keys.clear();
        self.last_start = None;
        Ok(vec![
            Reply::Skeleton(self.skeleton_info()),
            Reply::Keys { count: 0 },
            self.pose_reply(None, None),
        ])
    }

    fn set_effector(
        &mut self,
        joint: &str,
        position: Option<[f64; 3]>,
        orientation: Option<[f64; 4]>,
    ) -> Outcome {
        let joint = self.joint(joint)?;
        fk::forward_kinematics(&self.loaded.document.skeleton, &self.pose, &mut self.model);
        let goal = Goal {
            position: Some(position.map_or_else(|| self.model.position(joint), DVec3::from_array)),
            orientation: orientation.map(DQuat::from_array),
        };
        check_goal(&goal)?;
        self.remember();
        self.put_effector(joint, goal);
        self.solve_and_reply()
    }

    fn remove_effector(&mut self, joint: &str) -> Outcome {
        let joint = self.joint(joint)?;
        self.remember();
        self.task.effectors.retain(|e| e.joint != joint);
        Ok(vec![self.pose_reply(None, None)])
    }

    fn set_base(&mut self, joint: Option<&str>) -> Outcome {
        let base = joint.map(|name| self.joint(name)).transpose()?;
        self.remember();
        self.task.base = base;
        self.solve_and_reply()
    }

    fn drag(&mut self, joint: &str, position: [f64; 3], orientation: Option<[f64; 4]>) -> Outcome {
        let joint = self.joint(joint)?;
        let existing = self.task.effectors.iter().find(|e| e.joint == joint);
        let goal = Goal {
            position: Some(DVec3::from_array(position)),
            orientation: orientation
                .map(DQuat::from_array)
                .or_else(|| existing.and_then(|e| e.goal.orientation)),
        };
        check_goal(&goal)?;
        if self.dragging != Some(joint) {
            self.remember();
            self.dragging = Some(joint);
        }
        self.put_effector(joint, goal);
        self.solve_and_reply()
    }

    fn put_effector(&mut self, joint: JointId, goal: Goal) {
        match self.task.effectors.iter_mut().find(|e| e.joint == joint) {
            Some(effector) => effector.goal = goal,
            None => self.task.effectors.push(Effector {
                joint,
                goal,
                weight: 1.0,
            }),
        }
    }

    /// Solves the current task from the current pose (when there are effectors) and replies
    /// with the pose and report.
    fn solve_and_reply(&mut self) -> Outcome {
        if self.task.effectors.is_empty() {
            return Ok(vec![self.pose_reply(None, None)]);
        }
        let start_pose = self.pose.clone();
        let start = Instant::now();
        let report = ikarus_solve::solve(
            &self.loaded.document.skeleton,
            &self.task,
            &self.solver,
            &mut self.pose,
        );
        let time_us = start.elapsed().as_secs_f64() * 1e6;
        if !self.pose.is_finite() {
            // Never show (or keep) a NaN pose, whatever a solver returned.
            self.pose = start_pose;
            return Err(format!(
                "{} returned a non-finite pose; kept the previous pose",
                self.solver.kind()
            ));
        }
        self.last_start = Some((start_pose, self.task.clone(), report.iterations));
        let report = ReportInfo {
            solver: self.solver.kind(),
            report,
            time_us,
        };
        Ok(vec![self.pose_reply(Some(report), None)])
    }

    /// Re-runs the last solve with iteration budgets 1, 2, ... (iterative solvers; a closed
    /// form gives one point) and measures each result by FK.
    fn trace(&self) -> Reply {
        let Some((start_pose, task, iterations)) = &self.last_start else {
            return Reply::Trace {
                position_errors: Vec::new(),
                rotation_errors: Vec::new(),
            };
        };
        let config = serde_json::to_value(&self.solver).unwrap_or_default();
        let budgets = if config.pointer("/iteration/max_iterations").is_some() {
            (*iterations).clamp(1, 64)
        } else {
            1
        };
        let (mut position_errors, mut rotation_errors) = (Vec::new(), Vec::new());
        for budget in 1..=budgets {
            let mut limited = config.clone();
            if let Some(max) = limited.pointer_mut("/iteration/max_iterations") {
                *max = budget.into();
            }
            let Ok(limited) = serde_json::from_value::<SolverConfig>(limited) else {
                break;
            };
            let mut pose = start_pose.clone();
            let report = ikarus_solve::solve(self.skeleton(), task, &limited, &mut pose);
            position_errors.push(report.position_error);
            rotation_errors.push(report.rotation_error);
        }
        Reply::Trace {
            position_errors,
            rotation_errors,
        }
    }

    /// Pushes the current state on the undo stack and clears redo.
    pub(crate) fn remember(&mut self) {
        if self.undo.len() == UNDO_LIMIT {
            self.undo.remove(0);
        }
        self.undo.push(self.snapshot());
        self.redo.clear();
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            pose: self.pose.clone(),
            effectors: self.task.effectors.clone(),
            base: self.task.base,
        }
    }

    fn step_history(&mut self, undo: bool) -> Outcome {
        let (from, to) = if undo {
            (&mut self.undo, &mut self.redo)
        } else {
            (&mut self.redo, &mut self.undo)
        };
        let Some(snapshot) = from.pop() else {
            return Err(format!("nothing to {}", if undo { "undo" } else { "redo" }));
        };
        to.push(Snapshot {
            pose: std::mem::replace(&mut self.pose, snapshot.pose),
            effectors: std::mem::replace(&mut self.task.effectors, snapshot.effectors),
            base: std::mem::replace(&mut self.task.base, snapshot.base),
        });
        Ok(vec![self.pose_reply(None, None)])
    }

    pub(crate) fn skeleton_info(&self) -> SkeletonInfo {
        let skeleton = self.skeleton();
        SkeletonInfo {
            name: self.loaded.name.clone(),
            format: self.loaded.format,
            up: self.loaded.format.up(),
            joints: skeleton
                .joints()
                .map(|j| JointInfo {
                    name: skeleton.name(j).to_owned(),
                    parent: skeleton.parent(j).map(JointId::index),
                    rest_translation: skeleton.rest(j).translation.to_array(),
                    rest_rotation: skeleton.rest(j).rotation.to_array(),
                    limit: skeleton.limit(j).clone(),
                })
                .collect(),
            motion: self.loaded.document.motion.as_ref().map(motion_info),
        }
    }

    /// The pose reply for the current state.
    pub(crate) fn pose_reply(&mut self, report: Option<ReportInfo>, frame: Option<usize>) -> Reply {
        let skeleton = &self.loaded.document.skeleton;
        fk::forward_kinematics(skeleton, &self.pose, &mut self.model);
        let name = |j: JointId| skeleton.name(j).to_owned();
        Reply::Pose(Box::new(PoseInfo {
            positions: self.model.positions().map(|p| p.to_array()).collect(),
            rotations: skeleton
                .joints()
                .map(|j| self.model.rotation(j).to_array())
                .collect(),
            effectors: self
                .task
                .effectors
                .iter()
                .map(|e| EffectorInfo {
                    joint: name(e.joint),
                    position: e.goal.position.map(|p| p.to_array()),
                    orientation: e.goal.orientation.map(|q| q.to_array()),
                })
                .collect(),
            base: self.task.base.map(name),
            report,
            frame,
            can_undo: !self.undo.is_empty(),
            can_redo: !self.redo.is_empty(),
        }))
    }

    pub(crate) fn set_motion(&mut self, motion: Motion, layout: Option<BvhLayout>) {
        self.loaded.document.motion = Some(motion);
        self.loaded.document.layout = layout;
    }
}

pub(crate) fn motion_info(motion: &Motion) -> MotionInfo {
    MotionInfo {
        frames: motion.len(),
        frame_time: motion.frame_time(),
    }
}

pub(crate) fn error(message: String) -> Reply {
    Reply::Error { message }
}

/// Most iterations a configuration may ask for: keeps one request's solve (and its `trace`)
/// to a bounded time.
const MAX_ITERATIONS: u64 = 100_000;

/// Rejects iteration budgets over [`MAX_ITERATIONS`] (in any solver that has one).
fn check_budget(config: &SolverConfig) -> Result<(), String> {
    let value = serde_json::to_value(config).unwrap_or_default();
    match value
        .pointer("/iteration/max_iterations")
        .and_then(serde_json::Value::as_u64)
    {
        Some(n) if n > MAX_ITERATIONS => Err(format!(
            "iteration.max_iterations {n} is more than the viewer allows ({MAX_ITERATIONS})"
        )),
        _ => Ok(()),
    }
}

/// Rejects NaN/inf goals and non-unit orientations before they reach the state.
fn check_goal(goal: &Goal) -> Result<(), String> {
    if goal.position.is_some_and(|p| !p.is_finite()) {
        return Err("target position is not finite".to_owned());
    }
    if let Some(q) = goal.orientation
        && !(q.is_finite() && (q.length() - 1.0).abs() <= 1e-6)
    {
        return Err(format!("target orientation {q} is not a unit quaternion"));
    }
    Ok(())
}
