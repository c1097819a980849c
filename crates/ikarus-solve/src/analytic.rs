//! What the closed-form solvers share when they run as a [`SolverConfig`](crate::SolverConfig)
//! kind on an [`IkTask`]: one effector whose ancestors form the chain, limits enforced after the
//! closed form, and a report measured by forward kinematics.

use ikarus_core::{JointId, LocalPose, Skeleton};

use crate::report::{SolveReport, SolveStatus};
use crate::{Effector, IkTask, measure};

/// The task's single effector and its `N − 1` nearest ancestors, root-most first (e.g. upper
/// arm, lower arm, hand), or why the task does not fit a closed-form solver of `kind`.
pub(crate) fn chain_of<const N: usize>(
    skeleton: &Skeleton,
    task: &IkTask,
    kind: &str,
) -> Result<(Effector, [JointId; N]), String> {
    let [effector] = task.effectors.as_slice() else {
        return Err(format!(
            "`{kind}` solves one effector, the task has {}; use ccd for several",
            task.effectors.len()
        ));
    };
    if task.base.is_some() {
        return Err(format!(
            "`{kind}` keeps the chain's parent fixed and takes no base joint; use ccd for a base"
        ));
    }
    let mut joints = [effector.joint; N];
    for i in (0..N - 1).rev() {
        joints[i] = skeleton.parent(joints[i + 1]).ok_or_else(|| {
            format!(
                "`{kind}` needs {} ancestors above `{}`",
                N - 1,
                skeleton.name(effector.joint)
            )
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
    let mut active = Vec::new();
    for &joint in joints {
        let rest = skeleton.rest(joint).rotation;
        let limit = skeleton.limit(joint);
        let delta = rest.conjugate() * pose[joint].rotation;
        if !limit.contains(delta) {
            pose[joint].rotation = (rest * limit.project(delta)).normalize();
            active.push(skeleton.name(joint).to_owned());
        }
    }
    let (position_error, rotation_error) = measure(skeleton, task, pose);
    let mut report =
        SolveReport::from_residuals(task, position_error, rotation_error, 1, !active.is_empty());
    if !report.converged() && (!reached || !active.is_empty()) {
        report.status = SolveStatus::Unreachable;
    }
    report.active_limits = active;
    report
}
