//! The six-joint leg as a [`SolverConfig`](crate::SolverConfig) kind ([`solve_task`]).

#[allow(clippy::wildcard_imports)]
use super::*;

/// The six-joint leg as a [`SolverConfig`](crate::SolverConfig) kind: `{"kind": "leg6"}`. The
/// task's single effector is the ankle roll joint; it and its five nearest ancestors (hip yaw,
/// hip roll, hip pitch, knee, ankle pitch — in any hip order) must be hinges. With an
/// orientation goal the general 6-D form runs; without one the seed's form keeps the sole
/// level (yaw 0 in the leg frame, i.e. facing the pelvis's forward).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Leg6Config {}

/// Solves `task` (one effector, the ankle roll joint, with a position goal and optionally an
/// orientation goal) by the closed-form leg; limits from the joints' hinge ranges.
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    _config: &Leg6Config,
    pose: &mut LocalPose,
) -> SolveReport {
    let (effector, joints) = match analytic::chain_of::<6>(skeleton, task, "leg6") {
        Ok(chain) => chain,
        Err(message) => return SolveReport::invalid(message),
    };
    let Some(position) = effector.goal.position else {
        return SolveReport::invalid("`leg6` needs a position goal");
    };
    // Roles of the three hip joints from their axes at rest (any hip order): the pitch axis
    // is the knee's, the roll axis the ankle roll's, the yaw axis the remaining one.
    let [h0, h1, h2, knee, ankle_pitch, ankle_roll] = joints;
    let mut rest_model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest_model);
    let axis = |joint: JointId| match skeleton.limit(joint) {
        JointLimit::Hinge(hinge) => Some(rest_model.rotation(joint) * hinge.axis),
        _ => None,
    };
    let (Some(knee_axis), Some(roll_axis)) = (axis(knee), axis(ankle_roll)) else {
        return SolveReport::invalid("`leg6` needs hinge limits on the knee and ankle joints");
    };
    let parallel = |joint: JointId, to: DVec3| axis(joint).map_or(0.0, |a| a.dot(to).abs());
    let hips = [h0, h1, h2];
    let pick = |to: DVec3| {
        hips.into_iter()
            .max_by(|a, b| parallel(*a, to).total_cmp(&parallel(*b, to)))
            .unwrap_or(h0)
    };
    let (hip_pitch, hip_roll) = (pick(knee_axis), pick(roll_axis));
    let hip_yaw = hips
        .into_iter()
        .find(|&j| j != hip_pitch && j != hip_roll)
        .unwrap_or(h0);
    let leg = Leg6Joints::from_array([hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll]);
    let chain = match Leg6Chain::new(skeleton, &leg, DVec3::ZERO) {
        Ok(chain) => chain,
        Err(error) => return SolveReport::invalid(error.to_string()),
    };
    let target = match effector.goal.orientation {
        Some(rotation) => Leg6Target::Pose { position, rotation },
        None => Leg6Target::Level { position, yaw: 0.0 },
    };
    let before = pose.clone();
    let mut model = ModelPose::new(skeleton);
    let output = solve_chain(skeleton, &chain, &target, pose, &mut model);
    if output.status == Leg6Status::InvalidInput || !pose.is_finite() {
        *pose = before;
        return SolveReport::invalid("leg6 rejected the goal (non-finite or degenerate)");
    }
    analytic::finish(skeleton, task, &joints, output.reached, pose)
}
