//! One task solved from the JSON of `ikarus solve`, the report written back as JSON.

use std::ffi::c_char;
use std::path::Path;

use ikarus_jobs::task::{TaskFile, solve_task};
use ikarus_solve::SolveStatus;

use crate::error::{
    Failure, IkarusError, IkarusStatus, c_string, guard, mut_arg, ref_arg, str_arg,
};
use crate::pose::{IkarusPose, check_pose};
use crate::skeleton::IkarusSkeleton;

/// Parses a task's JSON for a skeleton given by handle: its `scale` must be 1 (or absent),
/// since the skeleton is already loaded.
pub(crate) fn parse_task(task_json: &str) -> Result<TaskFile, Failure> {
    let task_file = TaskFile::from_json(task_json)?;
    match task_file.scale {
        Some(scale) if scale != 1.0 => Err(Failure::invalid(format!(
            "task scale {scale}: the skeleton is already loaded; open it with ikarus_skeleton_open_scaled instead"
        ))),
        _ => Ok(task_file),
    }
}

/// Solves one IK task on `pose` (the start pose on entry, the solved pose on exit).
///
/// `task_json` is the task format of `ikarus solve` (UTF-8): `solver` (`{"kind": "ccd"}`,
/// `"lm"`, `"two_bone"`, `"limb7"`, `"body"` for the full-body solver, `"example"`, …),
/// `base`, `tolerance` and `effectors` (`joint` by name, model-space `position` `[x, y, z]`
/// and `orientation` `[x, y, z, w]`, `weight`). The skeleton and start pose are the
/// arguments: a `skeleton` or `frame` field is ignored, and a `scale` other than 1 is
/// rejected. An example-based solver's `model` file is read relative to the current
/// directory.
///
/// When `report_json` is not NULL, `*report_json` receives a new string owned by the caller
/// (free it with `ikarus_string_free`): `{"report": {"solver", "status": "converged" |
/// "max_iterations" | "unreachable" | "invalid_input", "position_error", "rotation_error",
/// "iterations", "limits_active", "time_ns", …}, "joints": [{"name", "position" (world),
/// "rotation" (local)}]}`, as `ikarus solve` writes it. A solve that does not converge is
/// still `IKARUS_OK`: the report says how it ended. Errors: `IKARUS_ERR_PARSE` (bad JSON,
/// with line and column), `IKARUS_ERR_INVALID` (an unknown joint; a pose of another
/// skeleton; goals the solver rejects, such as NaN, when the pose is left untouched and the
/// report is still written); `*report_json` is NULL on the other errors.
///
/// # Safety
/// `skel` is NULL or a live skeleton; `pose` is NULL or a live pose not used elsewhere
/// during the call; `task_json` is NULL or a NUL-terminated string; `report_json` and `err`
/// are NULL or point to writable storage for one pointer each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_solve_json(
    skel: *const IkarusSkeleton,
    task_json: *const c_char,
    pose: *mut IkarusPose,
    report_json: *mut *mut c_char,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    if !report_json.is_null() {
        // SAFETY: not NULL; writable storage for one pointer by this function's contract.
        unsafe { report_json.write(std::ptr::null_mut()) };
    }
    guard(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let skel = unsafe { ref_arg(skel, "skel") }?;
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let pose = unsafe { mut_arg(pose, "pose") }?;
        // SAFETY: NULL or NUL-terminated, by this function's contract.
        let task_json = unsafe { str_arg(task_json, "task_json") }?;
        check_pose(skel, pose)?;
        let task_file = parse_task(task_json)?;
        let output = solve_task(&skel.skeleton, &task_file, Path::new("."), &mut pose.pose)?;
        if !report_json.is_null() {
            let json = serde_json::to_string(&output).map_err(|e| {
                Failure::invalid(format!("the report cannot be written as JSON: {e}"))
            })?;
            // SAFETY: not NULL; writable storage for one pointer by this function's contract.
            unsafe { report_json.write(c_string(&json)) };
        }
        let report = &output.report.report;
        if report.status == SolveStatus::InvalidInput {
            return Err(Failure::invalid(
                report
                    .message
                    .clone()
                    .unwrap_or_else(|| "the solver rejected the task".to_owned()),
            ));
        }
        Ok(())
    })
}
