//! Aim as a [`SolverConfig`](crate::SolverConfig) kind ([`solve_task`]).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Aim as a [`SolverConfig`](crate::SolverConfig) kind: the task's single effector is the joint
/// that turns, its position goal the point to look at: `{"kind": "aim", "forward": [0, 0, 1],
/// "up": [0, 1, 0], "offset": [0, 0, 0], "pole": [0, 1, 0], "twist_angle": 0, "weight": 1,
/// "max_angle": 3.14159}`. The report's `position_error` is the distance from the target to the
/// line of sight and `rotation_error` the angle between the line of sight and the direction to
/// the target, both measured by FK on the result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AimConfig {
    /// The line of sight in the joint's local frame. Default +Z (the humanoid's face).
    pub forward: [f64; 3],
    /// The joint's up axis in its local frame. Default +Y.
    pub up: [f64; 3],
    /// Where the eye sits relative to the joint, local frame, metres. Default none.
    pub offset: [f64; 3],
    /// Model-space direction the up axis faces. Default +Y.
    pub pole: [f64; 3],
    /// See [`AimSettings::twist_angle`]. Default 0.
    pub twist_angle: f64,
    /// See [`AimSettings::weight`]. Default 1.
    pub weight: f64,
    /// See [`AimSettings::max_angle`]. Default π (no cone).
    pub max_angle: f64,
}

impl Default for AimConfig {
    fn default() -> Self {
        let settings = AimSettings::default();
        Self {
            forward: [0.0, 0.0, 1.0],
            up: [0.0, 1.0, 0.0],
            offset: [0.0; 3],
            pole: [0.0, 1.0, 0.0],
            twist_angle: settings.twist_angle,
            weight: settings.weight,
            max_angle: settings.max_angle,
        }
    }
}

/// Solves `task` (one effector: the aiming joint, its position goal the target) by aim IK, the
/// joint's limit enforced.
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &AimConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    let (effector, [joint]) = match analytic::chain_of::<1>(skeleton, task, "aim") {
        Ok(chain) => chain,
        Err(message) => return SolveReport::invalid(message),
    };
    let Some(target) = effector.goal.position else {
        return SolveReport::invalid("`aim` needs a position goal (the point to look at)");
    };
    let chain = match AimChain::new(
        skeleton,
        joint,
        DVec3::from_array(config.forward),
        DVec3::from_array(config.up),
        DVec3::from_array(config.offset),
    ) {
        Ok(chain) => chain,
        Err(error) => return SolveReport::invalid(error.to_string()),
    };
    let settings = AimSettings {
        twist_angle: config.twist_angle,
        weight: config.weight,
        max_angle: config.max_angle,
    };
    let before = pose.clone();
    let mut model = ModelPose::new(skeleton);
    let pole = Pole::Vector(DVec3::from_array(config.pole));
    let output = solve_chain(skeleton, &chain, target, pole, &settings, pose, &mut model);
    if !pose.is_finite() {
        *pose = before;
        return SolveReport::invalid("aim produced a non-finite pose");
    }
    // Line-of-sight miss, measured on the FK of the result.
    fk::forward_kinematics(skeleton, pose, &mut model);
    let m = model[joint];
    let eye = m.transform_point3(chain.offset);
    let sight = m.transform_vector3(chain.forward).normalize_or_zero();
    let to_target = target - eye;
    let along = to_target.dot(sight);
    let miss = (to_target - along * sight).length();
    // A target at the eye is seen from any direction (angle_between would give NaN).
    let angle = if to_target == DVec3::ZERO || sight == DVec3::ZERO {
        0.0
    } else {
        to_target.angle_between(sight)
    };
    let mut report = SolveReport::from_residuals(task, miss, angle, 1, output.limited);
    if !report.converged() && (!output.reached || output.limited) {
        report.status = crate::SolveStatus::Unreachable;
    }
    if output.limited {
        report.active_limits = vec![skeleton.name(joint).to_owned()];
    }
    report
}
