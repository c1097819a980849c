//! What the closed-form solvers share when they run as a [`SolverConfig`](crate::SolverConfig)
//! kind on an [`IkTask`]: one effector whose ancestors form the chain, limits enforced after the
//! closed form, and a report measured by forward kinematics.

/// Defines `rotation_between_frames(from, to, scales) -> DQuat` in the calling module with the
/// attributes given: the rotation taking the orthogonal frame `from` onto `to`, given
/// `scales[i]` = `1 / (|from[i]| |to[i]|)`, i.e. `Σ to[i] from[i]ᵀ scales[i]` as a quaternion.
/// One definition, expanded in each solver so that each keeps its own inline attribute (a
/// shared function measured 10–35% slower in both).
macro_rules! rotation_between_frames {
    ($(#[$attribute:meta])*) => {
        /// The rotation taking the orthogonal frame `from` onto `to` (see the macro in
        /// `analytic`).
        $(#[$attribute])*
        fn rotation_between_frames(from: [DVec3; 3], to: [DVec3; 3], scales: [f64; 3]) -> DQuat {
            let [u, v, w] = [
                from[0] * scales[0],
                from[1] * scales[1],
                from[2] * scales[2],
            ];
            DQuat::from_mat3(&DMat3::from_cols(
                to[0] * u.x + to[1] * v.x + to[2] * w.x,
                to[0] * u.y + to[1] * v.y + to[2] * w.y,
                to[0] * u.z + to[1] * v.z + to[2] * w.z,
            ))
        }
    };
}

pub mod aim;
pub(crate) mod crowd;
pub mod leg6;
pub mod limb7;
pub mod two_bone;

use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};

use crate::report::{SolveReport, SolveStatus, residuals};
use crate::{Effector, FitError, IkTask};

/// The task's single effector and its `N − 1` nearest ancestors, root-most first (e.g. upper
/// arm, lower arm, hand), or why the task does not fit a closed-form solver of `kind`.
pub(crate) fn chain_of<const N: usize>(
    skeleton: &Skeleton,
    task: &IkTask,
    solver: &'static str,
) -> Result<(Effector, [JointId; N]), FitError> {
    let [effector] = task.effectors.as_slice() else {
        return Err(FitError::Effectors {
            solver,
            count: task.effectors.len(),
        });
    };
    if task.base.is_some() {
        return Err(FitError::Base { solver });
    }
    let mut joints = [effector.joint; N];
    for i in (0..N - 1).rev() {
        joints[i] = skeleton
            .parent(joints[i + 1])
            .ok_or_else(|| FitError::Ancestors {
                solver,
                needed: N - 1,
                joint: skeleton.name(effector.joint).to_owned(),
            })?;
    }
    Ok((*effector, joints))
}

/// Enforces the limits of `joints` (projection onto the legal set), then measures the task by
/// FK: converged within tolerance; otherwise unreachable, which the closed form proves when
/// `reached` is false and the limits prove when they had to be enforced.
pub(crate) fn finish(
    skeleton: &Skeleton,
    task: &IkTask,
    joints: &[JointId],
    reached: bool,
    pose: &mut LocalPose,
) -> SolveReport {
    let active = enforce_limits(skeleton, joints, pose);
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    report(task, reached, active, &model)
}

/// [`finish`] on a `model` that holds the FK of `pose` for the ancestors of `path[0]` and for
/// `path` (the chain's joints from its root-most joint down to the effector, root first),
/// which is all a closed form reads and writes. The residuals are read from it (the same
/// operations as a full FK, so the same bits); a limit enforced here updates `path`.
/// Allocates only the names of enforced limits.
pub(crate) fn finish_in(
    skeleton: &Skeleton,
    task: &IkTask,
    (joints, path): (&[JointId], &[JointId]),
    reached: bool,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> SolveReport {
    let active = enforce_limits(skeleton, joints, pose);
    if !active.is_empty() {
        fk::update_joints(skeleton, pose, model, path);
    }
    report(task, reached, active, model)
}

/// Recomputes the model frames of the subtree of `chain[0]` except the joints of `chain`
/// (a parent → child path, root first), which the caller has just computed: the side
/// branches and the descendants after a chain's frames.
pub(crate) fn update_around_chain(
    skeleton: &Skeleton,
    pose: &LocalPose,
    model: &mut ModelPose,
    chain: &[JointId],
) {
    let Some(&top) = chain.first() else { return };
    let subtree = skeleton.subtree(top);
    let mut from = top.index() + 1;
    for joint in &chain[1..] {
        fk::update_range(skeleton, pose, model, from..joint.index());
        from = joint.index() + 1;
    }
    fk::update_range(skeleton, pose, model, from..subtree.end);
}

/// Projects each of `joints` onto its limit; the names of those that had to be.
fn enforce_limits(skeleton: &Skeleton, joints: &[JointId], pose: &mut LocalPose) -> Vec<String> {
    let mut active = Vec::new();
    enforce_limits_into(skeleton, joints, pose, &mut active);
    active
}

/// Projects each of `joints` onto its limit, adding the names of those that had to be to
/// `active`.
pub(crate) fn enforce_limits_into(
    skeleton: &Skeleton,
    joints: &[JointId],
    pose: &mut LocalPose,
    active: &mut Vec<String>,
) {
    for &joint in joints {
        let rest = skeleton.rest(joint).rotation;
        let limit = skeleton.limit(joint);
        let delta = rest.conjugate() * pose[joint].rotation;
        if !limit.contains(delta) {
            pose[joint].rotation = (rest * limit.project(delta)).normalize();
            active.push(skeleton.name(joint).to_owned());
        }
    }
}

/// The report of a closed form: the residuals read from `model`; not converged is
/// `unreachable` when the closed form (`reached` false) or an enforced limit (`active`, the
/// names) proves it.
pub(crate) fn report(
    task: &IkTask,
    reached: bool,
    active: Vec<String>,
    model: &ModelPose,
) -> SolveReport {
    let (position_error, rotation_error) = residuals(task, model);
    let mut report =
        SolveReport::from_residuals(task, position_error, rotation_error, 1, !active.is_empty());
    if !report.converged() && (!reached || !active.is_empty()) {
        report.status = SolveStatus::Unreachable;
    }
    report.active_limits = active;
    report
}

/// The model frames a closed form on the chain `top` → `tip` reads, root first: the strict
/// ancestors of `top`, then the chain itself; and where the chain begins in that list.
pub(crate) fn frames_path(
    skeleton: &Skeleton,
    top: JointId,
    tip: JointId,
) -> (Vec<JointId>, usize) {
    let mut path: Vec<JointId> = skeleton.path_to_root(top).skip(1).collect();
    path.reverse();
    let chain_from = path.len();
    path.extend(skeleton.chain(top, tip).unwrap_or_default());
    (path, chain_from)
}

/// A closed form prepared for a task (`TwoBoneTask`, `Limb7Task`): it solves the task on the
/// chain's frames and names the chain.
pub(crate) trait ChainEngine {
    /// Solves `task` on `pose`, `model` holding the frames of the chain's ancestors; on return
    /// `model` holds the chain's new frames (the rest of its subtree is stale).
    fn solve_chain(
        &mut self,
        skeleton: &Skeleton,
        task: &IkTask,
        pose: &mut LocalPose,
        model: &mut ModelPose,
    ) -> SolveReport;

    /// The chain's joints, root-most first.
    fn chain(&self) -> &[JointId];

    /// Computes into `model` the frames [`solve_chain`](Self::solve_chain) reads, from `pose`.
    fn update_frames(&self, skeleton: &Skeleton, pose: &LocalPose, model: &mut ModelPose);
}

/// A closed form's `solve_task`: the task's shape compiled into its engine (or why it does not
/// fit, as an `invalid_input` report), the frames it reads computed, the chain solved and
/// measured. The one runner of every [`ChainEngine`]; a [`PreparedTask`](crate::PreparedTask)
/// keeps the engine instead.
pub(crate) fn solve_task<E: ChainEngine>(
    engine: Result<E, FitError>,
    skeleton: &Skeleton,
    task: &IkTask,
    pose: &mut LocalPose,
) -> SolveReport {
    match engine {
        Ok(mut engine) => {
            let mut model = ModelPose::new(skeleton);
            engine.update_frames(skeleton, pose, &mut model);
            engine.solve_chain(skeleton, task, pose, &mut model)
        }
        Err(message) => SolveReport::invalid(message),
    }
}

/// [`PreparedTask::solve_in`](crate::PreparedTask::solve_in) of a closed form whose goals were
/// checked: the chain solved, then the rest of its subtree brought along, so that `model`
/// stays the forward kinematics of `pose`.
pub(crate) fn solve_in<E: ChainEngine>(
    engine: &mut E,
    skeleton: &Skeleton,
    task: &IkTask,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> SolveReport {
    let report = engine.solve_chain(skeleton, task, pose, model);
    update_around_chain(skeleton, pose, model, engine.chain());
    report
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_outputs_are_the_identity() {
        let identity = [0.0, 0.0, 0.0, 1.0];
        let aim = super::aim::AimOutput::default();
        assert_eq!(aim, super::aim::AimOutput::IDENTITY);
        assert_eq!(aim.correction.to_array(), identity);
        let two_bone = super::two_bone::TwoBoneOutput::default();
        assert_eq!(two_bone, super::two_bone::TwoBoneOutput::IDENTITY);
        assert_eq!(two_bone.start_correction.to_array(), identity);
        assert_eq!(two_bone.mid_correction.to_array(), identity);
    }
}
