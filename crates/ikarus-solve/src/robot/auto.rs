//! `SolverConfig::Auto` on an [`IkTask`]: the task's chain read as a robot chain (hinges
//! between the base — the task's, or the root — and the effector), its closed form when it has
//! one and the goal is 6-D, Levenberg–Marquardt otherwise. The report's `ran` names which.

use glam::{DQuat, DVec3};
use ikarus_core::chain::{ChainDof, ChainMotion, JointChain};
use ikarus_core::{JointLimit, LocalPose, ModelPose, Skeleton, fk};

use super::{AutoConfig, ClosedForm};
use crate::analytic::limb7::SwivelPolicy;
use crate::iterative::lm;
use crate::{IkTask, SolveReport, analytic};

/// Runs `auto` on a task (see the module docs).
pub(crate) fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &AutoConfig,
    workspace: &mut lm::LmWorkspace,
    pose: &mut LocalPose,
) -> SolveReport {
    if let Some(report) = closed_form(skeleton, task, config, pose) {
        return report;
    }
    let mut report = lm::solve_with(skeleton, task, &config.fallback, workspace, pose);
    report.ran = Some("lm".into());
    report
}

/// The closed form's report, or `None` when the task or its chain has none.
fn closed_form(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &AutoConfig,
    pose: &mut LocalPose,
) -> Option<SolveReport> {
    let [effector] = task.effectors.as_slice() else {
        return None;
    };
    let (Some(position), Some(orientation)) = (effector.goal.position, effector.goal.orientation)
    else {
        return None;
    };
    let chain = task_chain(skeleton, task.base, effector.joint)?;
    let form = ClosedForm::detect(skeleton, &chain).ok()?;
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    let base = model[chain.base()];
    let base_from_model = base.inverse();
    let (_, base_rotation, _) = base.to_scale_rotation_translation();
    let target_position: DVec3 = base_from_model.transform_point3(position);
    let target_rotation: DQuat = base_rotation.normalize().conjugate() * orientation;
    let mut seed = vec![0.0; chain.dof()];
    chain.q_from_pose(skeleton, pose, &mut seed);
    let mut q = seed.clone();
    let outcome = form.solve(
        target_position,
        target_rotation,
        &seed,
        config.swivel,
        &mut q,
    );
    chain.set_q(skeleton, &q, pose).ok()?;
    let joints: Vec<_> = chain.joints().collect();
    let mut report = analytic::finish(skeleton, task, &joints, outcome.reached, pose);
    report.swivel = outcome.swivel;
    // A swivel the caller steers (the viewer's slider) comes with the swivels it may take;
    // other policies do not pay for the interval search.
    if let (ClosedForm::SrsArm(arm), SwivelPolicy::NearestFeasible(_) | SwivelPolicy::Fixed(_)) =
        (&form, config.swivel)
    {
        let intervals = arm.feasible_swivels(target_position, target_rotation);
        report.feasible_swivels = Some(intervals.iter().map(|i| [i.start, i.end]).collect());
    }
    report.ran = Some(form.name().into());
    Some(report)
}

/// The hinges from `base` (the root when `None`) down to `tip` as a [`JointChain`]; `None` when
/// a joint on the way is neither a hinge nor locked.
fn task_chain(
    skeleton: &Skeleton,
    base: Option<ikarus_core::JointId>,
    tip: ikarus_core::JointId,
) -> Option<JointChain> {
    let base = base.or_else(|| skeleton.path_to_root(tip).last())?;
    let links = skeleton.chain(base, tip)?;
    let mut dofs = Vec::new();
    for &joint in links.iter().skip(1) {
        match skeleton.limit(joint) {
            JointLimit::Hinge(hinge) => {
                let full = hinge.is_full_circle();
                dofs.push(ChainDof {
                    joint,
                    name: skeleton.name(joint).to_owned(),
                    motion: ChainMotion::Revolute {
                        axis: hinge.axis,
                        offset: 0.0,
                    },
                    lower: if full { f64::NEG_INFINITY } else { hinge.min },
                    upper: if full { f64::INFINITY } else { hinge.max },
                });
            }
            JointLimit::Locked => {}
            _ => return None,
        }
    }
    JointChain::new(skeleton, base, tip, dofs).ok()
}
