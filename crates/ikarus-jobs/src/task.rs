//! The task file of `ikarus solve` as a library: [`TaskFile`] (what to solve, by joint name),
//! [`TaskFile::to_task`] (names resolved on a skeleton), [`load_posture_model`] (the
//! example-based solver's model file attached) and [`solve_task`] (solve once, timed, into a
//! [`SolveOutput`]: the report and every joint). The command line reads the task from a file
//! and the skeleton it names; the C API takes the skeleton and start pose as arguments.
//!
//! ```json
//! {"skeleton": "builtin:humanoid", "frame": 0, "solver": {"kind": "none"}, "base": "hips",
//!  "tolerance": {"position": 1e-4, "rotation": 1e-3},
//!  "effectors": [{"joint": "leftHand", "position": [0.5, 1.2, 0.3], "orientation": [0, 0, 0, 1], "weight": 1.0}]}
//! ```
//!
//! Goals are in model space (metres, +Y up); orientations are quaternions `[x, y, z, w]`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose, Skeleton, SkeletonError, fk};
use ikarus_solve::{Effector, Goal, IkTask, SolveReport, SolverConfig, Tolerance};
use serde::{Deserialize, Serialize};

/// A task file: the skeleton and start pose to load (for `ikarus solve`), the solver and the
/// goals by joint name.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    /// `builtin:humanoid` or a skeleton file. `ikarus solve` requires it; callers that pass
    /// their own skeleton (the C API) ignore it.
    pub skeleton: Option<String>,
    /// Start pose: this frame of the skeleton file's motion (default: rest pose). Only where
    /// the skeleton is loaded from the file.
    pub frame: Option<usize>,
    /// Length scale applied when loading the skeleton (default 1).
    pub scale: Option<f64>,
    /// Solver and parameters (default `{"kind": "none"}`: measure only).
    #[serde(default)]
    pub solver: SolverConfig,
    /// Base (support) joint that stays fixed.
    pub base: Option<String>,
    /// Convergence thresholds.
    #[serde(default)]
    pub tolerance: Tolerance,
    /// Effectors and goals, model space.
    pub effectors: Vec<EffectorSpec>,
}

/// One effector in a task file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EffectorSpec {
    /// Joint name.
    pub joint: String,
    /// Target position `[x, y, z]`, model space.
    pub position: Option<[f64; 3]>,
    /// Target orientation `[x, y, z, w]`, model space.
    pub orientation: Option<[f64; 4]>,
    /// Weight (default 1).
    pub weight: Option<f64>,
}

/// What is wrong with a task: its JSON, a joint it names, or the posture model it names.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The text is not a task file (line and column of the JSON, and what was expected). Fix
    /// the JSON: the fields are those of [`TaskFile`].
    #[error("task JSON: {message}")]
    Parse {
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// What serde found wrong, ending in its line and column.
        message: String,
    },
    /// The task names a joint the skeleton does not have. Use the skeleton's joint names.
    #[error(transparent)]
    Joint(#[from] SkeletonError),
    /// The example-based solver names a posture model file that cannot be read. Check the
    /// path (relative paths are resolved against the task's directory).
    #[error("{}: cannot read the posture model", path.display())]
    PostureModelRead {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// The posture model file is not a posture model (written by `ikarus learn`).
    #[error("{}: not a posture model: {message}", path.display())]
    PostureModelParse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
}

impl TaskFile {
    /// Parses a task file's JSON.
    ///
    /// # Errors
    /// [`TaskError::Parse`] with the line and column.
    pub fn from_json(text: &str) -> Result<Self, TaskError> {
        serde_json::from_str(text).map_err(|e| TaskError::Parse {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }

    /// Resolves joint names on `skeleton` into an [`IkTask`].
    ///
    /// # Errors
    /// [`TaskError::Joint`]: a joint name the skeleton does not have.
    pub fn to_task(&self, skeleton: &Skeleton) -> Result<IkTask, TaskError> {
        let base = self
            .base
            .as_deref()
            .map(|name| skeleton.try_joint(name))
            .transpose()?;
        let effectors = self
            .effectors
            .iter()
            .map(|e| {
                Ok(Effector {
                    joint: skeleton.try_joint(&e.joint)?,
                    goal: Goal {
                        position: e.position.map(DVec3::from_array),
                        orientation: e.orientation.map(DQuat::from_array),
                    },
                    weight: e.weight.unwrap_or(1.0),
                })
            })
            .collect::<Result<Vec<_>, TaskError>>()?;
        Ok(IkTask {
            effectors,
            base,
            tolerance: self.tolerance,
        })
    }
}

/// Loads the posture model an example-based solver names (`builtin:humanoid` is built in; a
/// relative file path is read relative to `dir` unless it exists as given), so the solver
/// finds it attached. Other solvers pass through unchanged.
///
/// # Errors
/// The file cannot be read, or is not a posture model (with its line and column).
pub fn load_posture_model(config: &mut SolverConfig, dir: &Path) -> Result<(), TaskError> {
    let SolverConfig::Example(example) = config else {
        return Ok(());
    };
    if !example.model.needs_loading() {
        return Ok(());
    }
    let name = Path::new(example.model.name());
    let path = if name.is_absolute() || name.exists() {
        name.to_path_buf()
    } else {
        dir.join(name)
    };
    let text = std::fs::read_to_string(&path).map_err(|source| TaskError::PostureModelRead {
        path: path.clone(),
        source,
    })?;
    let model = ikarus_solve::example_based::PostureModel::from_json(&text).map_err(|e| {
        TaskError::PostureModelParse {
            path: path.clone(),
            message: e.to_string(),
        }
    })?;
    example.model.set_model(std::sync::Arc::new(model));
    Ok(())
}

/// The result of a solved task, as `ikarus solve` writes it.
#[derive(Clone, Debug, Serialize)]
pub struct SolveOutput {
    /// The solver's report plus its kind and wall time.
    pub report: ReportOut,
    /// Every joint after solving, in the skeleton's order.
    pub joints: Vec<JointOut>,
}

/// The report as written.
#[derive(Clone, Debug, Serialize)]
pub struct ReportOut {
    /// Solver kind (`none`, `ccd`, `body`, …).
    pub solver: &'static str,
    /// The report.
    #[serde(flatten)]
    pub report: SolveReport,
    /// Wall time of the solve call in nanoseconds.
    pub time_ns: u128,
}

/// One joint as written.
#[derive(Clone, Debug, Serialize)]
pub struct JointOut {
    /// Name.
    pub name: String,
    /// World (model-space) position.
    pub position: [f64; 3],
    /// Local rotation `[x, y, z, w]` (`parent_from_joint`).
    pub rotation: [f64; 4],
}

impl SolveOutput {
    /// The output for `pose` (the solved pose) on `skeleton`: the report, and each joint's
    /// model-space position by forward kinematics and local rotation.
    pub fn new(
        skeleton: &Skeleton,
        solver: &'static str,
        report: SolveReport,
        time_ns: u128,
        pose: &LocalPose,
    ) -> Self {
        let mut model = ModelPose::new(skeleton);
        fk::forward_kinematics(skeleton, pose, &mut model);
        Self {
            report: ReportOut {
                solver,
                report,
                time_ns,
            },
            joints: skeleton
                .joints()
                .map(|j| JointOut {
                    name: skeleton.name(j).to_owned(),
                    position: model.position(j).to_array(),
                    rotation: pose[j].rotation.to_array(),
                })
                .collect(),
        }
    }
}

/// Solves `task_file` on `skeleton` starting from `pose` (the start pose on entry, the solved
/// pose on exit), timing the solve call: what `ikarus solve` does once it has the skeleton
/// and start pose. The example-based solver's model file is read relative to `dir`.
///
/// # Errors
/// An unknown joint name, an unreadable posture model.
pub fn solve_task(
    skeleton: &Skeleton,
    task_file: &TaskFile,
    dir: &Path,
    pose: &mut LocalPose,
) -> Result<SolveOutput, TaskError> {
    let task = task_file.to_task(skeleton)?;
    let mut solver = task_file.solver.clone();
    load_posture_model(&mut solver, dir)?;
    let start = Instant::now();
    let report = ikarus_solve::solve(skeleton, &task, &solver, pose);
    let time_ns = start.elapsed().as_nanos();
    Ok(SolveOutput::new(
        skeleton,
        task_file.solver.kind(),
        report,
        time_ns,
        pose,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ikarus_core::humanoid::builtin_humanoid;

    #[test]
    fn a_task_parses_resolves_and_solves_with_its_report() {
        let skeleton = builtin_humanoid();
        let task = TaskFile::from_json(
            r#"{"solver": {"kind": "two_bone"}, "effectors": [{"joint": "leftHand", "position": [0.4, 1.2, 0.2]}]}"#,
        )
        .unwrap();
        assert!(task.skeleton.is_none());
        let mut pose = skeleton.rest_pose();
        let output = solve_task(&skeleton, &task, Path::new("."), &mut pose).unwrap();
        assert_eq!(output.report.solver, "two_bone");
        assert!(output.report.report.converged());
        let hand = skeleton.joint("leftHand").unwrap();
        let at = DVec3::from_array(output.joints[hand.index()].position);
        assert!(at.distance(DVec3::new(0.4, 1.2, 0.2)) < 1e-4);
        assert_eq!(output.joints[hand.index()].name, "leftHand");

        let error = TaskFile::from_json(r#"{"effectors": [], "colour": 1}"#).unwrap_err();
        assert!(matches!(error, TaskError::Parse { line: 1, .. }), "{error}");
        assert!(error.to_string().contains("colour"), "{error}");
        let unknown = TaskFile::from_json(r#"{"effectors": [{"joint": "tail"}]}"#).unwrap();
        let error = unknown.to_task(&skeleton).unwrap_err();
        assert!(error.to_string().contains("tail"), "{error}");
        let missing = TaskFile::from_json(
            r#"{"solver": {"kind": "example", "model": "/nonexistent/model.json"}, "effectors": []}"#,
        )
        .unwrap();
        let error = solve_task(&skeleton, &missing, Path::new("."), &mut pose).unwrap_err();
        assert!(
            matches!(error, TaskError::PostureModelRead { .. }),
            "{error}"
        );
    }
}
