//! Two-bone IK as a [`SolverConfig`](crate::SolverConfig) kind: the task engine
//! ([`solve_task`], the prepared `TwoBoneTask`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Two-bone IK as a [`SolverConfig`](crate::SolverConfig) kind: `{"kind": "two_bone", "pole":
/// [x, y, z], "twist_angle": 0, "soften": 1, "weight": 1}`. The chain is the task's single
/// effector (end), its parent (mid) and grandparent (start).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TwoBoneConfig {
    /// Pole vector, model space; `None` (default) keeps the current bend plane (the pole is
    /// recovered from the pose, or taken from the hinge when the limb is straight).
    pub pole: Option<[f64; 3]>,
    /// Hint position, model space, instead of a pole vector (Unity's hint). Default `None`.
    pub hint: Option<[f64; 3]>,
    /// The mid joint's hinge axis in its rest frame when it has no hinge limit; `None`
    /// (default) reads the hinge limit, or takes the current bend's normal.
    pub mid_axis: Option<[f64; 3]>,
    /// See [`TwoBoneSettings::twist_angle`]. Default 0.
    pub twist_angle: f64,
    /// See [`TwoBoneSettings::soften`]. Default 1.
    pub soften: f64,
    /// See [`TwoBoneSettings::weight`]. Default 1.
    pub weight: f64,
}

impl Default for TwoBoneConfig {
    fn default() -> Self {
        let settings = TwoBoneSettings::default();
        Self {
            pole: None,
            hint: None,
            mid_axis: None,
            twist_angle: settings.twist_angle,
            soften: settings.soften,
            weight: settings.weight,
        }
    }
}

/// Solves `task` (one effector with a position goal; an orientation goal is given to the end
/// joint after the chain is placed) by two-bone IK. Limits of the three joints are enforced
/// after the closed form; the report is measured by FK.
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &TwoBoneConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    analytic::solve_task(
        TwoBoneTask::new(skeleton, task, config),
        skeleton,
        task,
        pose,
    )
}

/// A two-bone task's shape compiled once (the engine of [`solve_task`] and of a
/// [`PreparedTask`](crate::PreparedTask)): the chain validated, the frames it reads listed.
#[derive(Clone, Debug)]
pub(crate) struct TwoBoneTask {
    /// Start, mid, end.
    pub(super) joints: [JointId; 3],
    /// The strict ancestors of the start joint and then the start → end path, root first:
    /// every model frame the solve reads.
    pub(super) path: Vec<JointId>,
    /// Where the start → end part of `path` begins.
    pub(super) chain_from: usize,
    /// The chain, when its hinge axis does not depend on the pose (configured, or the mid
    /// joint's hinge limit); otherwise taken from the current bend at each solve.
    pub(super) chain: Option<TwoBoneChain>,
    pub(super) config: TwoBoneConfig,
}

impl TwoBoneTask {
    /// Validates the task's shape (one effector with two ancestors, no base) and the chain.
    pub(crate) fn new(
        skeleton: &Skeleton,
        task: &IkTask,
        config: &TwoBoneConfig,
    ) -> Result<Self, FitError> {
        let (_, joints) = analytic::chain_of::<3>(skeleton, task, "two_bone")?;
        let [start, mid, end] = joints;
        let axis = match (config.mid_axis, skeleton.limit(mid)) {
            (Some(axis), _) => Some(DVec3::from_array(axis)),
            (None, JointLimit::Hinge(hinge)) => Some(hinge.axis),
            (None, _) => None,
        };
        let chain = axis
            .map(|axis| TwoBoneChain::new(skeleton, start, mid, end, axis))
            .transpose()?;
        let (path, chain_from) = analytic::frames_path(skeleton, start, end);
        Ok(Self {
            joints,
            path,
            chain_from,
            chain,
            config: *config,
        })
    }
}

impl ChainEngine for TwoBoneTask {
    /// The chain's joints, start first.
    fn chain(&self) -> &[JointId] {
        &self.path[self.chain_from..]
    }

    /// Computes into `model` the frames [`solve`](Self::solve) reads: the start joint's
    /// ancestors and the chain, from `pose`.
    fn update_frames(&self, skeleton: &Skeleton, pose: &LocalPose, model: &mut ModelPose) {
        fk::update_joints(skeleton, pose, model, &self.path);
    }

    /// Solves `task` (the shape given to [`new`](Self::new), its goals now) on `pose`, with
    /// `model` holding the frames of the start joint's ancestors and of the chain
    /// ([`update_frames`](Self::update_frames), or the caller's forward kinematics of `pose`);
    /// afterwards `model` holds the chain's new frames (the rest of its subtree is stale).
    fn solve_chain(
        &mut self,
        skeleton: &Skeleton,
        task: &IkTask,
        pose: &mut LocalPose,
        model: &mut ModelPose,
    ) -> SolveReport {
        let config = &self.config;
        let effector = task.effectors[0];
        let Some(target) = effector.goal.position else {
            return SolveReport::invalid("`two_bone` needs a position goal");
        };
        let [start, mid, end] = self.joints;
        let (s, m, e) = (
            model.position(start),
            model.position(mid),
            model.position(end),
        );
        let chain = if let Some(chain) = self.chain {
            chain
        } else {
            let bend = (m - s).cross(e - m);
            let current = model.rotation(mid).inverse() * bend;
            let axis = skeleton.rest(mid).rotation.inverse() * (pose[mid].rotation * current);
            match TwoBoneChain::new(skeleton, start, mid, end, axis) {
                Ok(chain) => chain,
                Err(error) => return SolveReport::invalid(error.to_string()),
            }
        };
        let pole = match (config.hint, config.pole) {
            (Some(hint), _) => Pole::Hint(DVec3::from_array(hint)),
            (None, Some(pole)) => Pole::Vector(DVec3::from_array(pole)),
            (None, None) => Pole::Vector(recover_pole(s, m, e).unwrap_or_else(|| {
                // Straight: the mid joint moves against the end's flexion direction.
                let axis_model = model.rotation(mid)
                    * (pose[mid].rotation.inverse() * skeleton.rest(mid).rotation * chain.mid_axis);
                -axis_model.cross(e - m)
            })),
        };
        let settings = TwoBoneSettings {
            twist_angle: config.twist_angle,
            soften: config.soften,
            weight: config.weight,
        };
        let before = self.joints.map(|j| pose[j]);
        let output = solve(&chain.input(skeleton, pose, model, target, pole), &settings);
        output.apply_to(&chain, pose);
        let chain_path = &self.path[self.chain_from..];
        if let Some(orientation) = effector.goal.orientation {
            // The end's parent first, then the end with its new rotation: each joint once.
            let (above, last) = chain_path.split_at(chain_path.len() - 1);
            fk::update_joints(skeleton, pose, model, above);
            let parent = skeleton
                .parent(end)
                .map_or(DQuat::IDENTITY, |p| model.rotation(p));
            pose[end].rotation = (parent.conjugate() * orientation).normalize();
            fk::update_joints(skeleton, pose, model, last);
        } else {
            fk::update_joints(skeleton, pose, model, chain_path);
        }
        if !self.joints.iter().all(|&j| pose[j].is_finite()) {
            for (&j, saved) in self.joints.iter().zip(before) {
                pose[j] = saved;
            }
            fk::update_joints(skeleton, pose, model, chain_path);
            return SolveReport::invalid("two_bone produced a non-finite pose");
        }
        analytic::finish_in(
            skeleton,
            task,
            (&self.joints, chain_path),
            output.reached,
            pose,
            model,
        )
    }
}
