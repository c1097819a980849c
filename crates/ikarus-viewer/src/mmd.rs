//! MMD playback in a session: the VMD sampled at a frame, then the model's rig (inheritance and
//! declared IK chains) evaluated by [`ikarus_anim::mmd::MmdEvaluator`]. Dragging an IK bone moves
//! its translation in the animated pose and re-evaluates, so the MMD IK runs live.

use glam::DVec3;
use ikarus_anim::mmd::{MmdEvaluator, MmdSettings};
use ikarus_core::rig::Rig;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};
use ikarus_formats::mmd::vmd::{BoundMotion, FRAMES_PER_SECOND, Vmd};

use crate::protocol::{ChainInfo, IkChainInfo, IkInfo, MotionInfo};

/// A model's rig ready to evaluate, with the motion bound to it (if any).
#[derive(Clone, Debug)]
pub(crate) struct MmdPlayback {
    evaluator: MmdEvaluator,
    /// Per chain: its goal (IK bone) joint.
    goals: Vec<JointId>,
    /// Per chain: its name.
    names: Vec<String>,
    motion: Option<BoundMotion>,
    /// The sampled (or edited) local pose before inheritance and IK.
    pub animated: LocalPose,
    /// IK on or off for every chain.
    pub ik_enabled: bool,
    enabled: Vec<bool>,
    /// The frame `animated` was sampled at.
    frame: f64,
    animated_model: ModelPose,
    outcomes: Vec<ChainInfo>,
}

impl MmdPlayback {
    /// Compiles `rig` for `skeleton`, at the rest pose, IK on.
    pub fn new(skeleton: &Skeleton, rig: &Rig) -> Result<Self, ikarus_core::rig::RigError> {
        let evaluator = MmdEvaluator::new(skeleton, rig, MmdSettings::default())?;
        Ok(Self {
            names: evaluator.chain_names().to_vec(),
            goals: rig.ik.iter().map(|c| c.goal).collect(),
            enabled: vec![true; rig.ik.len()],
            evaluator,
            motion: None,
            animated: skeleton.rest_pose(),
            ik_enabled: true,
            frame: 0.0,
            animated_model: ModelPose::new(skeleton),
            outcomes: Vec::new(),
        })
    }

    /// The chains as the skeleton reply lists them.
    pub fn chain_infos(skeleton: &Skeleton, rig: &Rig) -> Vec<IkChainInfo> {
        let name = |j: JointId| skeleton.name(j).to_owned();
        rig.ik
            .iter()
            .map(|c| IkChainInfo {
                name: c.name.clone(),
                goal: name(c.goal),
                effector: name(c.effector),
                links: c.links.iter().map(|l| name(l.joint)).collect(),
            })
            .collect()
    }

    /// Binds `vmd` to the model; returns the motion's size and the keyed bones the model lacks.
    pub fn set_motion(&mut self, vmd: &Vmd, skeleton: &Skeleton) -> (MotionInfo, Vec<String>) {
        let bound = BoundMotion::new(vmd, skeleton);
        let info = MotionInfo {
            frames: bound.last_frame() as usize + 1,
            frame_time: 1.0 / FRAMES_PER_SECOND,
            tracking: None,
            grounding: None,
        };
        let unmatched = bound.unmatched.clone();
        self.motion = Some(bound);
        (info, unmatched)
    }

    /// The bound motion's size, if one is bound.
    pub fn motion_info(&self) -> Option<MotionInfo> {
        self.motion.as_ref().map(|m| MotionInfo {
            frames: m.last_frame() as usize + 1,
            frame_time: 1.0 / FRAMES_PER_SECOND,
            tracking: None,
            grounding: None,
        })
    }

    /// Samples the motion at `frame` into the animated pose (the rest pose without a motion).
    pub fn sample(&mut self, skeleton: &Skeleton, frame: f64) {
        self.frame = frame;
        match &self.motion {
            Some(motion) => motion.sample(skeleton, frame, &mut self.animated),
            None => self
                .animated
                .transforms_mut()
                .copy_from_slice(skeleton.rest_transforms()),
        }
    }

    /// The chain index whose IK bone is `joint`.
    pub fn chain_of_goal(&self, joint: JointId) -> Option<usize> {
        self.goals.iter().position(|&g| g == joint)
    }

    /// Moves IK bone `joint` so that its model-space position is `position` (its translation in
    /// the animated pose; the parent's model frame from FK of the animated pose).
    pub fn move_goal(&mut self, skeleton: &Skeleton, joint: JointId, position: DVec3) {
        fk::forward_kinematics(skeleton, &self.animated, &mut self.animated_model);
        let parent_from_model = skeleton
            .parent(joint)
            .map_or(glam::DAffine3::IDENTITY, |p| {
                self.animated_model[p].inverse()
            });
        self.animated.transforms_mut()[joint.index()].translation =
            parent_from_model.transform_point3(position);
    }

    /// Evaluates the animated pose through the rig into `out` (and `model`).
    pub fn evaluate(&mut self, skeleton: &Skeleton, out: &mut LocalPose, model: &mut ModelPose) {
        for (on, name) in self.enabled.iter_mut().zip(&self.names) {
            *on = self.ik_enabled
                && self
                    .motion
                    .as_ref()
                    .is_none_or(|m| m.ik_enabled(name, self.frame));
        }
        let outcomes = self
            .evaluator
            .evaluate(skeleton, &self.animated, &self.enabled, out, model);
        self.outcomes = outcomes
            .iter()
            .zip(&self.names)
            .map(|(o, name)| ChainInfo {
                name: name.clone(),
                enabled: o.enabled,
                distance: o.distance,
                iterations: o.iterations,
                limited: o.limited,
            })
            .collect();
    }

    /// Frames `0..count` evaluated (the IK switch applies); the animated pose, its frame and
    /// the outcomes on screen are kept.
    pub fn all_frames(&mut self, skeleton: &Skeleton, count: usize) -> Vec<LocalPose> {
        let (animated, frame, outcomes) =
            (self.animated.clone(), self.frame, self.outcomes.clone());
        let mut pose = skeleton.rest_pose();
        let mut model = ModelPose::new(skeleton);
        let mut frames = Vec::with_capacity(count);
        for index in 0..count {
            self.sample(skeleton, index as f64);
            self.evaluate(skeleton, &mut pose, &mut model);
            frames.push(pose.clone());
        }
        (self.animated, self.frame, self.outcomes) = (animated, frame, outcomes);
        frames
    }

    /// The IK state of the last evaluation.
    pub fn ik_info(&self) -> IkInfo {
        IkInfo {
            enabled: self.ik_enabled,
            chains: self.outcomes.clone(),
        }
    }
}
