//! `ikarus solve`: the one entry point every solver plugs into.
//!
//! TASK: `{"skeleton": "builtin:humanoid" | "path.bvh", "frame": N, "scale": S,
//! "solver": {"kind": "...", ...}, "base": "Joint", "tolerance": {"position": .., "rotation": ..},
//! "effectors": [{"joint": "leftHand", "position": [x,y,z], "orientation": [x,y,z,w], "weight": 1}]}`.
//! Relative skeleton paths are resolved against the task file's directory. The task file and
//! the solve itself are [`ikarus_jobs::task`]'s (shared with the C API).
//!
//! Solver kinds: `{"kind": "none"}`; `{"kind": "ccd", "variant": "classic" | "mmd",
//! "damping": "none" | "length", "iteration": {"max_iterations": 128, "max_step_angle": 3.14,
//! "min_step": 1e-12, "restarts": 8, "stall_window": 16, "seed": 0, "pattern_factor": 16,
//! "blend": 1}}` (every field optional); `{"kind": "jacobian", "method": "transpose" | "pinv" | "dls" | "sdls",
//! "damping": 0.05, "singular_region": 0, "max_step": 0.785, "weights": {"spine": 4},
//! "null_space": {"objective": "none" | "rest" | "limit_center" | "gradient", "gain": 0.1,
//! "gradient": {"Joint": [x,y,z]}}, "iteration": {...}}` (every field optional; the IK
//! overview's Jacobian family, weighted pseudo-inverse and null-space objective). The `base` joint
//! stays fixed; the path from it to the effectors may run through the root, which then moves. The
//! report adds `restarts` and `active_limits` (joints pushing against their limits).
//! `{"kind": "fabrik", "iteration": {...}}` (FABRIK, the IK overview's particle IK: same loop
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
//! shoulder: seed 000, 7-DOF limb; the report adds `swivel` and `feasible_swivels`), and
//! `{"kind": "aim", "forward": [0,0,1], "up": [0,1,0], "offset": [x,y,z], "pole": [0,1,0],
//! "twist_angle": 0, "weight": 1, "max_angle": 3.14}` (the effector joint looks at its position
//! goal; the report's residuals are the line-of-sight miss in metres and radians), and
//! `{"kind": "leg6"}` (seed 003, humanoid robot leg: the effector is the ankle roll joint, its
//! five ancestors hinges; without an orientation goal the sole stays level).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use ikarus_jobs::task::{SolveOutput, TaskFile};

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

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    let text = std::fs::read_to_string(&args.task)
        .with_context(|| format!("{}: cannot read the task file", args.task.display()))?;
    let task_file: TaskFile = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{}:{}:{}: {e}", args.task.display(), e.line(), e.column()))?;
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

/// Loads the skeleton and start pose the task names, solves, and builds the output.
///
/// # Errors
/// No skeleton named, unknown joints, unreadable skeletons, missing frames.
pub fn solve_file(task_file: &TaskFile, task_dir: &Path) -> Result<SolveOutput> {
    let skeleton = task_file.skeleton.as_deref().ok_or_else(|| {
        anyhow!("missing field `skeleton`: name `builtin:humanoid` or a skeleton file")
    })?;
    let source = resolve(skeleton, task_dir);
    let document = load::open(&source, task_file.scale)?;
    let mut pose = match task_file.frame {
        Some(frame) => load::frame_pose(&document, frame)?,
        None => document.skeleton.rest_pose(),
    };
    Ok(ikarus_jobs::solve_task(
        &document.skeleton,
        task_file,
        task_dir,
        &mut pose,
    )?)
}

fn resolve(skeleton: &str, task_dir: &Path) -> String {
    let path = Path::new(skeleton);
    if skeleton.starts_with("builtin:") || path.is_absolute() || path.exists() {
        skeleton.to_owned()
    } else {
        task_dir.join(path).to_string_lossy().into_owned()
    }
}
