//! What a solver reports, and the residuals measured by forward kinematics.

use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use serde::{Deserialize, Serialize};

use crate::{IkTask, Tolerance};

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SolveStatus {
    /// Every goal is met within the task's tolerances.
    Converged,
    /// The iteration budget ran out before every goal was met; the pose is the best found.
    MaxIterations,
    /// A goal is out of reach (too far, or excluded by limits); the pose is the closest found.
    Unreachable,
    /// The task was rejected (NaN/inf goal, unknown joint, ...); the pose is untouched.
    InvalidInput,
}

/// The outcome of a solve. Residuals are measured by forward kinematics on the returned pose.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SolveReport {
    /// How it ended.
    pub status: SolveStatus,
    /// Largest effector position error (model space, the skeleton's length unit); infinite
    /// (`null` in JSON) for invalid input.
    pub position_error: f64,
    /// Largest effector orientation error in radians (0 when no orientation goal).
    pub rotation_error: f64,
    /// Iterations the solver used, over all restarts.
    pub iterations: u32,
    /// Random restarts the solver used (0 when it never restarted).
    #[serde(default)]
    pub restarts: u32,
    /// True when a joint limit was active (binding) in the returned pose.
    pub limits_active: bool,
    /// Names of the joints whose limit ended active: the solver pushed against it and the
    /// joint rests on its boundary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active_limits: Vec<String>,
    /// Why the input was rejected, for [`SolveStatus::InvalidInput`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The swivel angle used, radians (7-DOF limb solver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swivel: Option<f64>,
    /// The feasible swivel intervals `[start, end]`, radians, counter-clockwise from start
    /// (7-DOF limb solver, when computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feasible_swivels: Option<Vec<[f64; 2]>>,
    /// Which solver ran, when the configuration chose it (`auto`: the closed form's name —
    /// `srs_arm`, `leg`, `spherical_wrist_arm` — or `lm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<String>,
}

impl SolveReport {
    /// A report for a rejected task; `message` (an error or a sentence) says why.
    pub fn invalid(message: impl std::fmt::Display) -> Self {
        Self {
            status: SolveStatus::InvalidInput,
            position_error: f64::INFINITY,
            rotation_error: f64::INFINITY,
            iterations: 0,
            restarts: 0,
            limits_active: false,
            active_limits: Vec::new(),
            message: Some(message.to_string()),
            swivel: None,
            feasible_swivels: None,
            ran: None,
        }
    }

    /// A report from measured residuals: converged when both are within the task's tolerances,
    /// otherwise `MaxIterations` (callers that can prove unreachability say `Unreachable`).
    pub fn from_residuals(
        task: &IkTask,
        position_error: f64,
        rotation_error: f64,
        iterations: u32,
        limits_active: bool,
    ) -> Self {
        Self::from_tolerance(
            task.tolerance,
            position_error,
            rotation_error,
            iterations,
            limits_active,
        )
    }

    /// [`from_residuals`](Self::from_residuals) given the task's tolerance only.
    pub(crate) fn from_tolerance(
        tolerance: Tolerance,
        position_error: f64,
        rotation_error: f64,
        iterations: u32,
        limits_active: bool,
    ) -> Self {
        let converged =
            position_error <= tolerance.position && rotation_error <= tolerance.rotation;
        Self {
            status: if converged {
                SolveStatus::Converged
            } else {
                SolveStatus::MaxIterations
            },
            position_error,
            rotation_error,
            iterations,
            restarts: 0,
            limits_active,
            active_limits: Vec::new(),
            message: None,
            swivel: None,
            feasible_swivels: None,
            ran: None,
        }
    }

    /// True for [`SolveStatus::Converged`].
    pub fn converged(&self) -> bool {
        self.status == SolveStatus::Converged
    }
}

/// Largest position and orientation errors of the task's effectors (weight > 0) for `pose`,
/// by forward kinematics.
pub fn measure(skeleton: &Skeleton, task: &IkTask, pose: &LocalPose) -> (f64, f64) {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    residuals(task, &model)
}

/// Largest position and orientation errors of the task's effectors (weight > 0) in `model`.
pub(crate) fn residuals(task: &IkTask, model: &ModelPose) -> (f64, f64) {
    let mut position_error: f64 = 0.0;
    let mut rotation_error: f64 = 0.0;
    // A NaN error (a NaN pose) counts as infinitely far: `f64::max` would drop it and call
    // the pose converged.
    let worst = |so_far: f64, error: f64| {
        if error.is_nan() {
            f64::INFINITY
        } else {
            so_far.max(error)
        }
    };
    for e in task.effectors.iter().filter(|e| e.weight > 0.0) {
        if let Some(p) = e.goal.position {
            position_error = worst(position_error, (model.position(e.joint) - p).length());
        }
        if let Some(q) = e.goal.orientation {
            let r = model.rotation(e.joint);
            let d = (r.conjugate() * q).normalize();
            rotation_error = worst(rotation_error, 2.0 * d.xyz().length().atan2(d.w.abs()));
        }
    }
    (position_error, rotation_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Goal, SolverConfig, solve};
    use glam::{DQuat, DVec3};
    use ikarus_core::humanoid::builtin_humanoid;

    #[test]
    fn none_solver_reports_fk_residuals_and_rejects_nan() {
        let s = builtin_humanoid();
        let hand = s.joint("leftHand").unwrap();
        let mut pose = s.rest_pose();
        let mut task = IkTask::from_goal(
            hand,
            Goal::from_position_orientation(
                DVec3::new(0.70, 1.38, 0.3),
                DQuat::from_rotation_y(0.5),
            ),
        );
        let report = solve(&s, &task, &SolverConfig::None, &mut pose);
        assert_eq!(report.status, SolveStatus::MaxIterations);
        assert!((report.position_error - 0.3).abs() < 1e-12);
        assert!((report.rotation_error - 0.5).abs() < 1e-12);
        task.effectors[0].goal.position = Some(DVec3::new(0.70, 1.38, 0.0));
        task.effectors[0].goal.orientation = None;
        assert!(solve(&s, &task, &SolverConfig::None, &mut pose).converged());
        task.effectors[0].goal.position = Some(DVec3::new(f64::NAN, 0.0, 0.0));
        let report = solve(&s, &task, &SolverConfig::None, &mut pose);
        assert_eq!(report.status, SolveStatus::InvalidInput);
        assert_eq!(pose, s.rest_pose());
        let config: SolverConfig = serde_json::from_str(r#"{"kind":"none"}"#).unwrap();
        assert_eq!(config, SolverConfig::None);
        assert!(serde_json::from_str::<SolverConfig>(r#"{"kind":"magic"}"#).is_err());
    }

    #[test]
    fn a_base_that_is_an_effector_is_invalid_input_for_every_solver() {
        let s = builtin_humanoid();
        let hand = s.joint("leftHand").unwrap();
        let task =
            IkTask::from_goal(hand, Goal::from_position(DVec3::new(0.6, 1.2, 0.2))).with_base(hand);
        for kind in ["ccd", "lm", "fabrik", "jacobian", "limb7", "two_bone"] {
            let config: SolverConfig =
                serde_json::from_str(&format!(r#"{{"kind":"{kind}"}}"#)).unwrap();
            let mut pose = s.rest_pose();
            let report = solve(&s, &task, &config, &mut pose);
            assert_eq!(report.status, SolveStatus::InvalidInput, "{kind}");
            assert_eq!(report.iterations, 0);
            let message = report.message.unwrap();
            assert!(
                message.contains("`leftHand` is the base joint"),
                "{message}"
            );
            assert_eq!(pose, s.rest_pose());
        }
    }
}
