//! One connection's state and how each request changes it. No I/O: text in, replies out.

use std::sync::Arc;
use std::time::Instant;

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, Skeleton, fk};

use ikarus_formats::bvh::BvhLayout;
use ikarus_formats::mmd::vmd::Vmd;
use ikarus_solve::{Effector, Goal, IkTask, SolverConfig};

use crate::catalog::{Catalog, Loaded};
use crate::error::{LoadError, RequestError};

mod ground;
mod playback;
mod retarget;
mod track;
use crate::mmd::MmdPlayback;
use crate::protocol::{
    EffectorInfo, JointInfo, MotionInfo, PoseInfo, Reply, ReportInfo, Request, SkeletonInfo,
    SourceFormat,
};

/// The weight of a foot the body solver pins: against a hand's 1, a pinned foot holds the
/// pelvis back a hundred times harder than a hand far past its reach draws it (the feet stay,
/// the hand falls short), as a character stands.
const PINNED_FOOT_WEIGHT: f64 = 100.0;

/// Whether `solver` starts a humanoid with both feet pinned: the full-body solver, and
/// example-based IK (whose learned postures otherwise move a foot not dragged yet along with a
/// dragged hand).
fn pins_feet(solver: &SolverConfig) -> bool {
    matches!(solver, SolverConfig::Body(_) | SolverConfig::Example(_))
}

/// Undo steps kept per connection.
const UNDO_LIMIT: usize = 256;

/// What undo and redo restore.
#[derive(Clone, Debug)]
struct Snapshot {
    pose: LocalPose,
    effectors: Vec<Effector>,
    base: Option<JointId>,
    /// The MMD animated pose (IK bones moved by drags), for MMD models.
    animated: Option<LocalPose>,
}

/// A file the page uploaded with a request: its name and its contents as text or base64.
#[derive(Clone, Debug)]
pub(crate) struct Upload {
    /// The file's name (its extension picks the format).
    pub name: String,
    /// Its text (`.bvh`; for `track` also `.json`, `.csv`).
    pub text: Option<String>,
    /// Its bytes in base64.
    pub base64: Option<String>,
}

impl Upload {
    /// The file's bytes, from its text or its base64 (exactly one of them), checked against
    /// the upload limit; `request` names the request in the error.
    fn bytes(&self, request: &'static str) -> Result<Vec<u8>, RequestError> {
        crate::catalog::upload_bytes(
            request,
            &self.name,
            self.text.as_ref(),
            self.base64.as_ref(),
        )
    }
}

/// Everything one page connection owns; another connection never sees it.
pub struct Session {
    catalog: Arc<Catalog>,
    pub(crate) loaded: Loaded,
    pub(crate) pose: LocalPose,
    pub(crate) model: ModelPose,
    task: IkTask,
    solver: SolverConfig,
    /// True once the page chose a solver; until then each load picks the default for its
    /// skeleton ([`default_solver`]).
    solver_chosen: bool,
    undo: Vec<Snapshot>,
    redo: Vec<Snapshot>,
    /// The joint of the drag in progress (consecutive drags share one undo step).
    dragging: Option<JointId>,
    /// The pose and task the last solve started from, for `trace`.
    last_start: Option<(LocalPose, IkTask, SolverConfig, u32)>,
    pub(crate) keys: Vec<LocalPose>,
    /// MMD models: the rig's evaluation and the bound VMD.
    pub(crate) mmd: Option<MmdPlayback>,
    /// After a `retarget`: the source and contacts drawn with each frame of its motion.
    pub(crate) overlay: Option<retarget::RetargetOverlay>,
    /// After a `ground`: the motion as it was before, which a later `ground` starts from.
    pub(crate) ungrounded: Option<Motion>,
    /// True while the effectors are only the feet [`pin_feet`](Self::pin_feet) placed: a
    /// change to another solver releases them.
    feet_pinned: bool,
}

/// A request's replies, or why it was refused (its text goes back as [`Reply::Error`]).
pub(crate) type Outcome = Result<Vec<Reply>, RequestError>;

impl Session {
    /// A session on the catalog's first document.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        let loaded = catalog.initial();
        let skeleton = &loaded.document.skeleton;
        let mut session = Self {
            pose: skeleton.rest_pose(),
            model: ModelPose::new(skeleton),
            task: IkTask::default(),
            solver: default_solver(&loaded),
            solver_chosen: false,
            undo: Vec::new(),
            redo: Vec::new(),
            dragging: None,
            last_start: None,
            keys: Vec::new(),
            mmd: None,
            overlay: None,
            ungrounded: None,
            feet_pinned: false,
            loaded: loaded.clone(),
            catalog,
        };
        // A rig that does not compile leaves the start document without MMD evaluation (the
        // greeting cannot fail); loading it again reports why.
        let _ = session.install(loaded);
        session
    }

    /// The replies sent when the connection opens: welcome, skeleton, mesh (if any), pose.
    pub fn greeting(&mut self) -> Vec<Reply> {
        let mut replies = vec![
            Reply::Welcome {
                solvers: crate::catalog::solver_choices(),
                sources: self.catalog.sources(),
                max_upload: crate::MAX_UPLOAD_BYTES,
            },
            Reply::Skeleton(self.skeleton_info()),
        ];
        replies.extend(self.mesh_reply());
        replies.push(self.pose_reply(None, None));
        replies
    }

    /// The mesh reply of the loaded document, if it has a mesh.
    fn mesh_reply(&self) -> Option<Reply> {
        let mesh = self.loaded.document.mesh.as_ref()?;
        Some(Reply::Mesh(Box::new(crate::mesh::mesh_info(
            mesh,
            self.loaded.path.as_deref(),
        ))))
    }

    /// Handles one text message. Never panics on bad input: anything wrong is one
    /// [`Reply::Error`] and leaves the state as it was.
    pub fn handle_text(&mut self, text: &str) -> Vec<Reply> {
        self.handle_message(text)
            .unwrap_or_else(|e| vec![error(e.to_string())])
    }

    /// Parses one text message and handles it.
    fn handle_message(&mut self, text: &str) -> Outcome {
        // Binary uploads come as base64: four characters per three bytes.
        if text.len() > crate::MAX_UPLOAD_BYTES / 3 * 4 + 4096 {
            return Err(RequestError::MessageTooLarge {
                bytes: text.len(),
                limit: crate::MAX_UPLOAD_BYTES,
            });
        }
        let request = serde_json::from_str::<Request>(text).map_err(RequestError::BadMessage)?;
        self.handle(request)
    }

    /// Handles one parsed request: its replies, or why it was refused (the state is then as
    /// it was).
    ///
    /// # Errors
    /// A [`RequestError`] naming the joint, file or argument at fault; its text is what
    /// [`Session::handle_text`] sends as [`Reply::Error`].
    pub fn handle(&mut self, request: Request) -> Result<Vec<Reply>, RequestError> {
        if !matches!(request, Request::Drag { .. }) {
            self.dragging = None;
        }
        match request {
            Request::Load {
                source,
                name,
                text,
                base64,
            } => self.load(source, name, text, base64),
            Request::Ik { enabled } => self.set_ik(enabled),
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
                self.solver_chosen = true;
                // Feet the body or example solver pinned go with it; those start with them.
                if self.feet_pinned && !pins_feet(&self.solver) {
                    self.task.effectors.clear();
                    self.feet_pinned = false;
                }
                self.pin_feet();
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
                self.feet_pinned = false;
                if let Some(mmd) = &mut self.mmd {
                    mmd.sample(&self.loaded.document.skeleton, 0.0);
                    mmd.evaluate(
                        &self.loaded.document.skeleton,
                        &mut self.pose,
                        &mut self.model,
                    );
                }
                self.pin_feet();
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
            Request::Track {
                name,
                text,
                base64,
                points,
            } => self.track(&Upload { name, text, base64 }, points),
            Request::Ground {
                preset,
                name,
                text,
                base64,
            } => self.ground(preset, name.as_deref(), text.as_ref(), base64.as_ref()),
            Request::Retarget {
                name,
                text,
                base64,
                model_name,
                model_base64,
            } => self.retarget(&retarget::MotionUpload {
                file: Upload { name, text, base64 },
                model_name,
                model_base64,
            }),
        }
    }

    pub(crate) fn skeleton(&self) -> &Skeleton {
        &self.loaded.document.skeleton
    }

    /// The loaded humanoid's bone map, for a request that poses it from upload `name`;
    /// `NoHumanoidTarget` when the loaded skeleton has none.
    fn humanoid_target(&self, name: &str) -> Result<HumanoidMap, RequestError> {
        self.loaded
            .humanoid
            .clone()
            .ok_or_else(|| RequestError::NoHumanoidTarget {
                name: name.to_owned(),
                model: self.loaded.name.clone(),
            })
    }

    fn joint(&self, name: &str) -> Result<JointId, RequestError> {
        self.skeleton()
            .joint(name)
            .ok_or_else(|| RequestError::UnknownJoint {
                joint: name.to_owned(),
                model: self.loaded.name.clone(),
                joints: self.skeleton().len(),
            })
    }

    fn load(
        &mut self,
        source: Option<String>,
        name: Option<String>,
        text: Option<String>,
        base64: Option<String>,
    ) -> Outcome {
        let loaded = match (source, name, text, base64) {
            (Some(source), None, None, None) => Some(self.catalog.open_source(&source)?),
            (None, Some(name), Some(text), None) => self.upload(&name, text.as_bytes())?,
            (None, Some(name), None, Some(base64)) => {
                self.upload(&name, &crate::catalog::decode_upload(&name, &base64)?)?
            }
            _ => {
                return Err(RequestError::Arguments {
                    request: "load",
                    expected: "either `source`, or `name` with `text` or `base64`",
                });
            }
        };
        let Some(loaded) = loaded else {
            // A motion applied to the loaded skeleton.
            let info = self.motion_info().ok_or(RequestError::MotionNotBound)?;
            let mut replies = vec![Reply::Motion(info)];
            replies.extend(self.show_frame(0)?);
            return Ok(replies);
        };
        self.install(loaded)?;
        let mut replies = vec![Reply::Skeleton(self.skeleton_info())];
        replies.extend(self.mesh_reply());
        replies.push(Reply::Keys { count: 0 });
        replies.push(self.pose_reply(None, None));
        Ok(replies)
    }

    /// An uploaded file: a new document, or `None` when it was a motion (`.vmd`, `.vrma` on a
    /// humanoid) applied to the loaded one.
    fn upload(&mut self, name: &str, bytes: &[u8]) -> Result<Option<Loaded>, RequestError> {
        let extension = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        crate::catalog::check_upload_size(name, bytes)?;
        if extension == "vmd" {
            self.apply_vmd(name, bytes)?;
            return Ok(None);
        }
        if extension == "vrma"
            && self.loaded.format != SourceFormat::Mmd
            && let Some(map) = self.loaded.humanoid.clone()
        {
            self.apply_vrma(name, bytes, &map)?;
            return Ok(None);
        }
        Ok(Some(crate::catalog::parse_upload(name, bytes)?))
    }

    /// Binds a VMD to the loaded MMD model.
    fn apply_vmd(&mut self, name: &str, bytes: &[u8]) -> Result<(), RequestError> {
        let Some(mmd) = &mut self.mmd else {
            return Err(RequestError::VmdNeedsMmdModel {
                name: name.to_owned(),
                model: self.loaded.name.clone(),
            });
        };
        let vmd = Vmd::parse(bytes, 1.0).map_err(|source| LoadError::Mmd {
            name: name.to_owned(),
            source,
        })?;
        let (_, unmatched) = mmd.set_motion(&vmd, &self.loaded.document.skeleton);
        if unmatched.len() == vmd.keyed_bones().len() && !unmatched.is_empty() {
            return Err(RequestError::NoKeyedBones {
                name: name.to_owned(),
                keyed: unmatched.len(),
                model: self.loaded.name.clone(),
            });
        }
        self.loaded.vmd = Some(vmd);
        self.overlay = None;
        self.keys.clear();
        Ok(())
    }

    /// Makes `loaded` the session's document: pose at its first frame (MMD: evaluated with
    /// IK), no effectors, no history.
    fn install(&mut self, loaded: Loaded) -> Result<(), LoadError> {
        let skeleton = &loaded.document.skeleton;
        let mut mmd = match &loaded.document.rig {
            Some(rig) => {
                Some(
                    MmdPlayback::new(skeleton, rig).map_err(|source| LoadError::Rig {
                        name: loaded.name.clone(),
                        source,
                    })?,
                )
            }
            None => None,
        };
        self.model = ModelPose::new(skeleton);
        self.pose = match loaded.document.motion.as_ref().and_then(|m| m.frame(0)) {
            Some(frame) => frame.clone(),
            None => skeleton.rest_pose(),
        };
        if let Some(mmd) = &mut mmd {
            if let Some(vmd) = &loaded.vmd {
                mmd.set_motion(vmd, skeleton);
            }
            mmd.sample(skeleton, 0.0);
            mmd.evaluate(skeleton, &mut self.pose, &mut self.model);
        }
        self.mmd = mmd;
        // The default solver for this skeleton, unless the page chose one that still applies.
        let fits = |config: &SolverConfig| match config {
            SolverConfig::Example(example) => example
                .model
                .model()
                .is_some_and(|m| m.bind(skeleton).is_ok()),
            SolverConfig::Body(_) => matches!(default_solver(&loaded), SolverConfig::Body(_)),
            _ => true,
        };
        if !self.solver_chosen || !fits(&self.solver) {
            self.solver = default_solver(&loaded);
            self.solver_chosen = false;
        }
        self.overlay = None;
        self.loaded = loaded;
        self.task = IkTask::default();
        self.undo.clear();
        self.redo.clear();
        self.keys.clear();
        self.last_start = None;
        self.feet_pinned = false;
        self.ungrounded = None;
        self.pin_feet();
        Ok(())
    }

    /// The loaded motion's size: the bound VMD for MMD models, else the document's motion.
    pub(crate) fn motion_info(&self) -> Option<MotionInfo> {
        match &self.mmd {
            Some(mmd) => mmd.motion_info(),
            None => self.loaded.document.motion.as_ref().map(motion_info),
        }
    }

    /// Switches the MMD IK on or off and re-evaluates.
    fn set_ik(&mut self, enabled: bool) -> Outcome {
        let Some(mmd) = &mut self.mmd else {
            return Err(RequestError::NoIkChains {
                model: self.loaded.name.clone(),
            });
        };
        mmd.ik_enabled = enabled;
        mmd.evaluate(
            &self.loaded.document.skeleton,
            &mut self.pose,
            &mut self.model,
        );
        Ok(vec![self.pose_reply(None, None)])
    }

    /// Moves an MMD IK bone to `position` and re-evaluates the rig (the MMD IK runs).
    fn drag_mmd_goal(&mut self, joint: JointId, position: DVec3) -> Outcome {
        if !position.is_finite() {
            return Err(RequestError::NonFinitePosition { position });
        }
        if self.dragging != Some(joint) {
            self.remember();
            self.dragging = Some(joint);
        }
        let skeleton = &self.loaded.document.skeleton;
        let Some(mmd) = &mut self.mmd else {
            return Err(RequestError::NoMmdRig);
        };
        mmd.move_goal(skeleton, joint, position);
        mmd.evaluate(skeleton, &mut self.pose, &mut self.model);
        Ok(vec![self.pose_reply(None, None)])
    }

    /// True when `joint` is the IK bone of one of the MMD rig's chains.
    fn is_mmd_goal(&self, joint: JointId) -> bool {
        self.mmd
            .as_ref()
            .is_some_and(|m| m.chain_of_goal(joint).is_some())
    }

    fn set_effector(
        &mut self,
        joint: &str,
        position: Option<[f64; 3]>,
        orientation: Option<[f64; 4]>,
    ) -> Outcome {
        let joint = self.joint(joint)?;
        fk::forward_kinematics(&self.loaded.document.skeleton, &self.pose, &mut self.model);
        if self.is_mmd_goal(joint) {
            // Its position is the chain's target already; a drag moves it.
            let position = position.map_or_else(|| self.model.position(joint), DVec3::from_array);
            self.dragging = None;
            return self.drag_mmd_goal(joint, position);
        }
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
        self.feet_pinned = false;
        Ok(vec![self.pose_reply(None, None)])
    }

    fn set_base(&mut self, joint: Option<&str>) -> Outcome {
        let base = joint.map(|name| self.joint(name)).transpose()?;
        self.remember();
        self.task.base = base;
        // A base anchors the body: feet that were only pinned are released.
        if base.is_some() && self.feet_pinned {
            self.task.effectors.clear();
            self.feet_pinned = false;
        }
        self.solve_and_reply()
    }

    fn drag(&mut self, joint: &str, position: [f64; 3], orientation: Option<[f64; 4]>) -> Outcome {
        let joint = self.joint(joint)?;
        if self.is_mmd_goal(joint) {
            return self.drag_mmd_goal(joint, DVec3::from_array(position));
        }
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
        self.feet_pinned = false;
        match self.task.effectors.iter_mut().find(|e| e.joint == joint) {
            Some(effector) => effector.goal = goal,
            None => self.task.effectors.push(Effector {
                joint,
                goal,
                weight: 1.0,
            }),
        }
    }

    /// The task and solver a solve runs: the session's, except that under the full-body
    /// solver an effector on an elbow or a knee (lower arm or leg) is that limb's bend goal.
    fn effective_task(&self) -> (IkTask, SolverConfig) {
        let (SolverConfig::Body(body), Some(map)) = (&self.solver, &self.loaded.humanoid) else {
            return (self.task.clone(), self.solver.clone());
        };
        let mut body = body.clone();
        let mut task = self.task.clone();
        task.effectors.retain(|e| {
            let bend = [
                HumanoidBone::LeftLowerArm,
                HumanoidBone::RightLowerArm,
                HumanoidBone::LeftLowerLeg,
                HumanoidBone::RightLowerLeg,
            ]
            .into_iter()
            .find(|&b| map.joint(b) == Some(e.joint));
            match (bend, e.goal.position) {
                (Some(bone), Some(p)) => {
                    body.bend_goals
                        .insert(bone.vrm_name().to_owned(), p.to_array());
                    false
                }
                _ => true,
            }
        });
        (task, SolverConfig::Body(body))
    }

    /// Pinned feet that are still only pinned (no drag since) moved to where the feet stand
    /// in the current pose (a frame shown, a motion loaded).
    pub(crate) fn repin_feet(&mut self) {
        if self.feet_pinned {
            self.task.effectors.clear();
            self.feet_pinned = false;
            self.pin_feet();
        }
    }

    /// Under the full-body or example-based solver with no effectors yet: both feet pinned
    /// where they stand, so that a dragged hand moves the body over planted feet, as a
    /// character stands. They are effectors like any other: drag them, or release them.
    pub(crate) fn pin_feet(&mut self) {
        let (true, Some(map), true) = (
            pins_feet(&self.solver),
            &self.loaded.humanoid,
            self.task.effectors.is_empty(),
        ) else {
            return;
        };
        let feet: Vec<JointId> = [HumanoidBone::LeftFoot, HumanoidBone::RightFoot]
            .into_iter()
            .filter_map(|b| map.joint(b))
            .collect();
        fk::forward_kinematics(&self.loaded.document.skeleton, &self.pose, &mut self.model);
        // The body solver holds them against the pelvis's pull (position and rotation,
        // weight [`PINNED_FOOT_WEIGHT`]); example-based IK, whose root stays, by position at
        // the weight of any effector (a dragged foot then takes the drag's goal alone).
        let body = matches!(self.solver, SolverConfig::Body(_));
        for joint in feet {
            let (goal, weight) = if body {
                (Goal::from_frame(&self.model, joint), PINNED_FOOT_WEIGHT)
            } else {
                (Goal::from_position(self.model.position(joint)), 1.0)
            };
            self.task.effectors.push(Effector {
                joint,
                goal,
                weight,
            });
        }
        self.feet_pinned = true;
    }

    /// Solves the current task from the current pose (when there are effectors) and replies
    /// with the pose and report.
    fn solve_and_reply(&mut self) -> Outcome {
        if self.task.effectors.is_empty() {
            return Ok(vec![self.pose_reply(None, None)]);
        }
        let start_pose = self.pose.clone();
        let (task, config) = self.effective_task();
        let start = Instant::now();
        let report = ikarus_solve::solve(
            &self.loaded.document.skeleton,
            &task,
            &config,
            &mut self.pose,
        );
        let time_us = start.elapsed().as_secs_f64() * 1e6;
        if !self.pose.is_finite() {
            // Never show (or keep) a NaN pose, whatever a solver returned.
            self.pose = start_pose;
            return Err(RequestError::NonFinitePose {
                solver: self.solver.kind(),
            });
        }
        self.last_start = Some((start_pose, task, config, report.iterations));
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
        let Some((start_pose, task, config, iterations)) = &self.last_start else {
            return Reply::Trace {
                position_errors: Vec::new(),
                rotation_errors: Vec::new(),
            };
        };
        let config = serde_json::to_value(config).unwrap_or_default();
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
            animated: self.mmd.as_ref().map(|m| m.animated.clone()),
        }
    }

    fn step_history(&mut self, undo: bool) -> Outcome {
        let (from, to) = if undo {
            (&mut self.undo, &mut self.redo)
        } else {
            (&mut self.redo, &mut self.undo)
        };
        let Some(snapshot) = from.pop() else {
            return Err(if undo {
                RequestError::NothingToUndo
            } else {
                RequestError::NothingToRedo
            });
        };
        let animated = match (&mut self.mmd, snapshot.animated) {
            (Some(mmd), Some(animated)) => Some(std::mem::replace(&mut mmd.animated, animated)),
            _ => None,
        };
        to.push(Snapshot {
            pose: std::mem::replace(&mut self.pose, snapshot.pose),
            effectors: std::mem::replace(&mut self.task.effectors, snapshot.effectors),
            base: std::mem::replace(&mut self.task.base, snapshot.base),
            animated,
        });
        // Whether the restored effectors are only pinned feet is not known: they stay.
        self.feet_pinned = false;
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
            motion: self.motion_info(),
            humanoid: skeleton
                .joints()
                .map(|j| {
                    let map = self.loaded.humanoid.as_ref()?;
                    Some(map.bone_of(j)?.vrm_name())
                })
                .collect(),
            solver: self.solver.kind(),
            ik_chains: self
                .loaded
                .document
                .rig
                .as_ref()
                .map(|rig| MmdPlayback::chain_infos(skeleton, rig))
                .unwrap_or_default(),
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
            ik: self.mmd.as_ref().map(MmdPlayback::ik_info),
            overlay: frame.and_then(|f| self.overlay.as_ref()?.at(f)),
        }))
    }

    /// Makes `motion` the loaded one (a retarget's overlay is dropped when another motion
    /// replaces it: `retarget.rs` sets its overlay after calling this).
    pub(crate) fn set_motion(&mut self, motion: Motion, layout: Option<BvhLayout>) {
        self.overlay = None;
        self.ungrounded = None;
        self.loaded.document.motion = Some(motion);
        self.loaded.document.layout = layout;
    }
}

pub(crate) fn motion_info(motion: &Motion) -> MotionInfo {
    MotionInfo {
        frames: motion.len(),
        frame_time: motion.frame_time(),
        tracking: None,
        grounding: None,
    }
}

pub(crate) fn error(message: String) -> Reply {
    Reply::Error { message }
}

/// The solver a document starts with: the full-body solver for a humanoid with hips, head,
/// hands and feet (not an MMD model, whose drags go through its own IK bones); else
/// example-based IK on the shipped posture model when the model fits the skeleton; CCD
/// otherwise.
pub(crate) fn default_solver(loaded: &Loaded) -> SolverConfig {
    let skeleton = &loaded.document.skeleton;
    let body = loaded.format != SourceFormat::Mmd
        && loaded.humanoid.as_ref().is_some_and(|map| {
            HumanoidBone::BODY_ENDS
                .iter()
                .all(|&b| map.joint(b).is_some())
        });
    let fits =
        ikarus_solve::example_based::builtin_humanoid().is_some_and(|m| m.bind(skeleton).is_ok());
    if body {
        // A pinned foot holds when a hand is dragged far past its reach.
        SolverConfig::Body(ikarus_solve::body::BodyConfig {
            hold_pinned_feet: true,
            ..ikarus_solve::body::BodyConfig::default()
        })
    } else if fits {
        SolverConfig::Example(ikarus_solve::example_based::ExampleConfig::default())
    } else {
        SolverConfig::Ccd(ikarus_solve::CcdConfig::default())
    }
}

/// Most iterations a configuration may ask for: keeps one request's solve (and its `trace`)
/// to a bounded time.
const MAX_ITERATIONS: u64 = 100_000;

/// Rejects iteration budgets over [`MAX_ITERATIONS`] (in any solver that has one).
fn check_budget(config: &SolverConfig) -> Result<(), RequestError> {
    let value = serde_json::to_value(config).unwrap_or_default();
    match value
        .pointer("/iteration/max_iterations")
        .and_then(serde_json::Value::as_u64)
    {
        Some(requested) if requested > MAX_ITERATIONS => Err(RequestError::IterationBudget {
            requested,
            limit: MAX_ITERATIONS,
        }),
        _ => Ok(()),
    }
}

/// Rejects NaN/inf goals and non-unit orientations before they reach the state.
fn check_goal(goal: &Goal) -> Result<(), RequestError> {
    if let Some(position) = goal.position
        && !position.is_finite()
    {
        return Err(RequestError::NonFinitePosition { position });
    }
    if let Some(orientation) = goal.orientation
        && !(orientation.is_finite() && (orientation.length() - 1.0).abs() <= 1e-6)
    {
        return Err(RequestError::NonUnitOrientation { orientation });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session on the built-in humanoid.
    fn session() -> Session {
        Session::new(Arc::new(Catalog::open(&[]).unwrap()))
    }

    /// A request, a test of the error it is refused with, and the message the page gets.
    type Refusal = (&'static str, fn(&RequestError) -> bool, &'static str);

    /// The error `text` is refused with; checks that the page gets exactly its message.
    fn refused(session: &mut Session, text: &str) -> RequestError {
        let error = session.handle_message(text).unwrap_err();
        assert_eq!(
            session.handle_text(text),
            vec![Reply::Error {
                message: error.to_string()
            }],
            "{text}"
        );
        error
    }

    #[test]
    fn requests_are_refused_with_the_joint_or_argument_named() {
        let mut session = session();
        let joints = session.skeleton().len();
        let error = refused(
            &mut session,
            r#"{"type":"drag","joint":"tail","position":[0,1,0]}"#,
        );
        assert!(
            matches!(&error, RequestError::UnknownJoint { joint, model, joints: n }
                if joint == "tail" && model == "builtin:humanoid" && *n == joints),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!("unknown joint `tail` in builtin:humanoid (it has {joints} joints)")
        );
        let cases: [Refusal; 9] = [
            (
                r#"{"type":"drag","joint":"leftHand","position":[0,1,0],"orientation":[0,0,0,2]}"#,
                |e| {
                    matches!(e, RequestError::NonUnitOrientation { orientation }
                        if orientation.w == 2.0)
                },
                "target orientation [0, 0, 0, 2] is not a unit quaternion",
            ),
            (
                r#"{"type":"solver","config":{"kind":"ccd","iteration":{"max_iterations":4000000000}}}"#,
                |e| {
                    matches!(
                        e,
                        RequestError::IterationBudget {
                            requested: 4_000_000_000,
                            limit: MAX_ITERATIONS
                        }
                    )
                },
                "iteration.max_iterations 4000000000 is more than the viewer allows (100000)",
            ),
            (
                r#"{"type":"frame","index":3}"#,
                |e| matches!(e, RequestError::NoMotion { model } if model == "builtin:humanoid"),
                "builtin:humanoid has no motion to play",
            ),
            (
                r#"{"type":"undo"}"#,
                |e| matches!(e, RequestError::NothingToUndo),
                "nothing to undo",
            ),
            (
                r#"{"type":"generate","duration":1.0}"#,
                |e| matches!(e, RequestError::TooFewKeys { count: 0 }),
                "capture at least two key postures first (0 so far)",
            ),
            (
                r#"{"type":"generate","duration":-1.0}"#,
                |e| matches!(e, RequestError::InvalidTiming { duration, fps } if *duration == -1.0 && *fps == 30.0),
                "duration -1 s and fps 30 must be finite and positive",
            ),
            (
                r#"{"type":"ik","enabled":false}"#,
                |e| matches!(e, RequestError::NoIkChains { model } if model == "builtin:humanoid"),
                "builtin:humanoid has no IK chains of its own (the ik switch is for MMD models)",
            ),
            (
                r#"{"type":"load","name":"walk.bvh"}"#,
                |e| {
                    matches!(
                        e,
                        RequestError::Arguments {
                            request: "load",
                            ..
                        }
                    )
                },
                "load takes either `source`, or `name` with `text` or `base64`",
            ),
            (
                r#"{"type":"retarget","name":"walk.bvh","text":"HIERARCHY","model_name":"m.pmd","model_base64":""}"#,
                |e| matches!(e, RequestError::ModelWithoutVmd { name } if name == "walk.bvh"),
                "walk.bvh: `model_name` and `model_base64` go with a .vmd motion only",
            ),
        ];
        for (text, is_expected, message) in cases {
            let error = refused(&mut session, text);
            assert!(is_expected(&error), "{text} -> {error:?}");
            assert_eq!(error.to_string(), message, "{text}");
        }
        // JSON has no NaN, but a request built in Rust can carry one: the handler refuses it.
        let error = session
            .handle(Request::Drag {
                joint: "leftHand".to_owned(),
                position: [f64::NAN, 1.0, 0.0],
                orientation: None,
            })
            .unwrap_err();
        assert!(
            matches!(error, RequestError::NonFinitePosition { position } if position.x.is_nan()),
            "{error:?}"
        );
        assert_eq!(error.to_string(), "target position is not finite");
    }

    #[test]
    fn malformed_uploads_are_refused_with_the_file_named() {
        let mut session = session();
        let error = refused(&mut session, r#"{"type":"load","source":"/etc/passwd"}"#);
        assert!(
            matches!(&error, RequestError::Load(LoadError::UnknownSource { name, .. }) if name == "/etc/passwd"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "unknown source `/etc/passwd`; this server has builtin:humanoid"
        );
        let error = refused(
            &mut session,
            r#"{"type":"load","name":"broken.bvh","text":"HIERARCHY\nROOT Hips\n{\n OFFSET 0 0\n"}"#,
        );
        assert!(
            matches!(
                &error,
                RequestError::Load(LoadError::Format(ikarus_formats::FormatError::Bvh { .. }))
            ),
            "{error:?}"
        );
        assert!(error.to_string().starts_with("broken.bvh:5:"), "{error}");
        let error = refused(
            &mut session,
            r#"{"type":"load","name":"m.pmx","base64":"not base64!"}"#,
        );
        let RequestError::Load(LoadError::Base64 { name, source }) = &error else {
            panic!("{error:?}");
        };
        assert_eq!(name, "m.pmx");
        assert_eq!(
            error.to_string(),
            format!("m.pmx: the upload is not valid base64: {source}")
        );
        let error = refused(
            &mut session,
            r#"{"type":"load","name":"m.vmd","base64":""}"#,
        );
        assert!(
            matches!(&error, RequestError::VmdNeedsMmdModel { name, model }
                if name == "m.vmd" && model == "builtin:humanoid"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "m.vmd: a VMD motion plays on an MMD model; load a .pmx or .pmd first \
             (this is builtin:humanoid)"
        );
        // A truncated VMD retargeted: the file and the byte where reading stopped.
        let error = refused(
            &mut session,
            r#"{"type":"retarget","name":"k.vmd","base64":"Vm9jYWxvaWQ="}"#,
        );
        let RequestError::Load(LoadError::Mmd { name, source }) = &error else {
            panic!("{error:?}");
        };
        assert_eq!(name, "k.vmd");
        assert_eq!(error.to_string(), format!("k.vmd: {source}"));
        assert!(error.to_string().starts_with("k.vmd: byte 0: "), "{error}");
        let error = refused(&mut session, "not json");
        assert!(matches!(error, RequestError::BadMessage(_)), "{error:?}");
        assert!(error.to_string().starts_with("bad message: "), "{error}");
        // Refusals leave the session serving.
        let replies = session
            .handle_text(r#"{"type":"drag","joint":"leftHand","position":[0.45,1.15,0.25]}"#);
        assert!(
            matches!(replies.as_slice(), [Reply::Pose(_)]),
            "{replies:?}"
        );
    }
}
