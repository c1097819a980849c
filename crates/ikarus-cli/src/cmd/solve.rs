//! `ikarus solve`: the one entry point every solver plugs into.
//!
//! TASK: `{"skeleton": "builtin:humanoid" | "path.bvh", "frame": N, "scale": S,
//! "solver": {"kind": "...", ...}, "base": "Joint", "tolerance": {"position": .., "rotation": ..},
//! "effectors": [{"joint": "leftHand", "position": [x,y,z], "orientation": [x,y,z,w], "weight": 1}]}`.
//! Relative skeleton paths are resolved against the task file's directory.
//!
//! Solver kinds: `{"kind": "none"}`; `{"kind": "ccd", "variant": "classic" | "mmd",
//! "damping": "none" | "length", "iteration": {"max_iterations": 128, "max_step_angle": 3.14,
//! "min_step": 1e-12, "restarts": 8, "stall_window": 16, "seed": 0, "pattern_factor": 16,
//! "blend": 1}}` (every field optional); `{"kind": "jacobian", "method": "transpose" | "pinv" | "dls" | "sdls",
//! "damping": 0.05, "singular_region": 0, "max_step": 0.785, "weights": {"spine": 4},
//! "null_space": {"objective": "none" | "rest" | "limit_center" | "gradient", "gain": 0.1,
//! "gradient": {"Joint": [x,y,z]}}, "iteration": {...}}` (every field optional; seed 004's
//! Jacobian family, weighted pseudo-inverse and null-space objective). The `base` joint stays
//! fixed; the path from it to the effectors may run through the root, which then moves. The
//! report adds `restarts` and `active_limits` (joints pushing against their limits).
//! `{"kind": "fabrik", "iteration": {...}}` (FABRIK, seed 004's particle IK: same loop
//! parameters; several effectors share sub-bases, the posture is recovered from the joint
//! points) takes the same tasks. `{"kind": "lm", "lambda": 1e-2, "max_tries": 12,
//! "iteration": {...}}` (Levenberg–Marquardt: hinge ranges as boxes, random restarts, and
//! `"time_budget_us"` in `iteration` to restart until solved or out of time) takes them too.
//!
//! Closed-form kinds solve one effector (no base) with the chain made of it and its ancestors:
//! `{"kind": "two_bone", "pole": [x,y,z], "hint": [x,y,z], "mid_axis": [x,y,z], "twist_angle": 0,
//! "soften": 1, "weight": 1}` (effector, parent, grandparent; without pole or hint the current
//! bend plane is kept) and `{"kind": "limb7", "swivel": "keep_current" | "middle_of_feasible" |
//! {"fixed": RAD} | {"nearest_feasible": RAD}, "elbow_axis": [x,y,z]}` (wrist, elbow,
//! shoulder: seed 000's 7-DOF limb; the report adds `swivel` and `feasible_swivels`), and
//! `{"kind": "aim", "forward": [0,0,1], "up": [0,1,0], "offset": [x,y,z], "pole": [0,1,0],
//! "twist_angle": 0, "weight": 1, "max_angle": 3.14}` (the effector joint looks at its position
//! goal; the report's residuals are the line-of-sight miss in metres and radians), and
//! `{"kind": "leg6"}` (seed 003's robot leg: the effector is the ankle roll joint, its five
//! ancestors hinges; without an orientation goal the sole stays level).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use glam::{DQuat, DVec3};
use ikarus_core::{ModelPose, Skeleton, fk};
use ikarus_solve::{Effector, Goal, IkTask, SolveReport, SolverConfig, Tolerance};
use serde::{Deserialize, Serialize};

use crate::load;

/// Arguments of `ikarus solve`.
#[derive(clap::Args)]
pub struct Args {
    /// Task file (JSON).
    task: PathBuf,
    /// Write the result here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The task file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    /// `builtin:humanoid` or a skeleton file.
    pub skeleton: String,
    /// Start pose: this frame of the skeleton file's motion (default: rest pose).
    pub frame: Option<usize>,
    /// Length scale applied when loading the skeleton.
    pub scale: Option<f64>,
    /// Solver and parameters.
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
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EffectorSpec {
    /// Joint name.
    pub joint: String,
    /// Target position `[x, y, z]`.
    pub position: Option<[f64; 3]>,
    /// Target orientation `[x, y, z, w]`.
    pub orientation: Option<[f64; 4]>,
    /// Weight (default 1).
    pub weight: Option<f64>,
}

/// The result file.
#[derive(Serialize)]
pub struct Output {
    /// The solver's report plus its kind and wall time.
    pub report: ReportOut,
    /// Every joint after solving.
    pub joints: Vec<JointOut>,
}

/// Report as written.
#[derive(Serialize)]
pub struct ReportOut {
    /// Solver kind.
    pub solver: &'static str,
    /// The report.
    #[serde(flatten)]
    pub report: SolveReport,
    /// Wall time of the solve call in nanoseconds.
    pub time_ns: u128,
}

/// One joint as written.
#[derive(Serialize)]
pub struct JointOut {
    /// Name.
    pub name: String,
    /// World (model-space) position.
    pub position: [f64; 3],
    /// Local rotation `[x, y, z, w]`.
    pub rotation: [f64; 4],
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    let text = std::fs::read_to_string(&args.task)
        .with_context(|| format!("{}: cannot read the task file", args.task.display()))?;
    let task_file: TaskFile = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}:{}:{}: {e}", args.task.display(), e.line(), e.column()))?;
    let output = solve_file(&task_file, args.task.parent().unwrap_or(Path::new(".")))
        .with_context(|| args.task.display().to_string())?;
    let json = serde_json::to_string_pretty(&output)?;
    match &args.out {
        Some(path) => std::fs::write(path, json + "\n")
            .with_context(|| format!("{}: cannot write", path.display()))?,
        None => println!("{json}"),
    }
    Ok(())
}

/// Loads the skeleton and start pose, solves, and builds the output.
///
/// # Errors
/// Unknown joints, unreadable skeletons, missing frames.
pub fn solve_file(task_file: &TaskFile, task_dir: &Path) -> Result<Output> {
    let source = resolve(&task_file.skeleton, task_dir);
    let document = load::open(&source, task_file.scale)?;
    let skeleton = &document.skeleton;
    let mut pose = match task_file.frame {
        Some(frame) => load::frame_pose(&document, frame)?,
        None => skeleton.rest_pose(),
    };
    let task = build_task(skeleton, task_file)?;
    let mut solver = task_file.solver.clone();
    load::posture_model(&mut solver, task_dir)?;
    let start = Instant::now();
    let report = ikarus_solve::solve(skeleton, &task, &solver, &mut pose);
    let time_ns = start.elapsed().as_nanos();
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &pose, &mut model);
    Ok(Output {
        report: ReportOut {
            solver: task_file.solver.kind(),
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
    })
}

fn resolve(skeleton: &str, task_dir: &Path) -> String {
    let path = Path::new(skeleton);
    if skeleton.starts_with("builtin:") || path.is_absolute() || path.exists() {
        skeleton.to_owned()
    } else {
        task_dir.join(path).to_string_lossy().into_owned()
    }
}

/// Resolves joint names into an [`IkTask`].
///
/// # Errors
/// A joint name the skeleton does not have.
pub fn build_task(skeleton: &Skeleton, task_file: &TaskFile) -> Result<IkTask> {
    let base = task_file
        .base
        .as_deref()
        .map(|name| skeleton.try_joint(name))
        .transpose()?;
    let effectors = task_file
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
        .collect::<Result<Vec<_>>>()?;
    Ok(IkTask {
        effectors,
        base,
        tolerance: task_file.tolerance,
    })
}
