//! Prepared tasks: a task's shape checked once, then solved every frame with new goals and a
//! typed report, without JSON.

use std::ffi::c_char;
use std::path::Path;
use std::sync::Arc;

use ikarus_core::Skeleton;
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_jobs::task::load_posture_model;
use ikarus_solve::{PreparedTask, SolveReport, SolveStatus};

use crate::error::{
    Failure, IkarusError, IkarusStatus, free_handle, guard, guard_value, mut_arg, ref_arg,
    same_joints, str_arg,
};
use crate::pose::IkarusPose;
use crate::skeleton::IkarusSkeleton;
use crate::solve::parse_task;

/// Every goal met within the task's tolerances.
pub const IKARUS_SOLVE_CONVERGED: i32 = 0;
/// The iteration budget ran out; the pose is the best found.
pub const IKARUS_SOLVE_MAX_ITERATIONS: i32 = 1;
/// A goal is out of reach (too far, or excluded by limits); the pose is the closest found.
pub const IKARUS_SOLVE_UNREACHABLE: i32 = 2;
/// The goals were rejected (NaN or infinite); the pose is untouched.
pub const IKARUS_SOLVE_INVALID_INPUT: i32 = 3;

/// What a solve reports, measured by forward kinematics on the returned pose.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IkarusReport {
    /// How it ended: `IKARUS_SOLVE_CONVERGED`, `_MAX_ITERATIONS`, `_UNREACHABLE` or
    /// `_INVALID_INPUT`.
    pub status: i32,
    /// Largest effector position error, metres (model space); infinite for invalid input.
    pub position_error: f64,
    /// Largest effector orientation error, radians (0 without orientation goals).
    pub rotation_error: f64,
    /// Iterations the solver used, over all restarts (0 for the closed forms).
    pub iterations: u32,
    /// True when a joint limit was active (binding) in the returned pose.
    pub limits_active: bool,
}

impl From<&SolveReport> for IkarusReport {
    fn from(report: &SolveReport) -> Self {
        Self {
            status: match report.status {
                SolveStatus::Converged => IKARUS_SOLVE_CONVERGED,
                SolveStatus::MaxIterations => IKARUS_SOLVE_MAX_ITERATIONS,
                SolveStatus::Unreachable => IKARUS_SOLVE_UNREACHABLE,
                _ => IKARUS_SOLVE_INVALID_INPUT,
            },
            position_error: report.position_error,
            rotation_error: report.rotation_error,
            iterations: report.iterations,
            limits_active: report.limits_active,
        }
    }
}

/// A task's shape (effector joints and weights, base, tolerances, solver) prepared once for
/// a skeleton; per frame only the goals and the pose go in, and a warm closed-form or
/// iterative task solves without allocating. Created by `ikarus_prepared_new`, freed by
/// `ikarus_prepared_free`. It keeps its skeleton alive. One thread at a time.
pub struct IkarusPrepared {
    /// Declared before `skeleton`, so dropped first, while the skeleton it borrows lives.
    task: PreparedTask<'static>,
    /// Owns the skeleton `task` borrows; never replaced while `task` lives.
    skeleton: Arc<Skeleton>,
}

impl IkarusPrepared {
    /// The skeleton the task was prepared for.
    pub(crate) fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The prepared task.
    pub(crate) fn task(&self) -> &PreparedTask<'static> {
        &self.task
    }

    /// The prepared task, to set goals and solve.
    pub(crate) fn task_mut(&mut self) -> &mut PreparedTask<'static> {
        &mut self.task
    }
}

/// Prepares the task `task_json` (the format of `ikarus_solve_json`; its goals are the
/// initial goals) for `skel`. Returns a new prepared task owned by the caller (free it with
/// `ikarus_prepared_free`), or NULL with `*err` set: `IKARUS_ERR_PARSE` for bad JSON,
/// `IKARUS_ERR_INVALID` for an unknown joint or a solver that does not fit the task (a closed
/// form given several effectors, a body task on a skeleton that is not a humanoid).
///
/// # Safety
/// `skel` is NULL or a live skeleton; `task_json` is NULL or a NUL-terminated string; `err`
/// is NULL or points to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_prepared_new(
    skel: *const IkarusSkeleton,
    task_json: *const c_char,
    err: *mut *mut IkarusError,
) -> *mut IkarusPrepared {
    guard_value(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let skel = unsafe { ref_arg(skel, "skel") }?;
        // SAFETY: NULL or NUL-terminated, by this function's contract.
        let task_json = unsafe { str_arg(task_json, "task_json") }?;
        let task_file = parse_task(task_json)?;
        let skeleton = Arc::clone(&skel.skeleton);
        // SAFETY: the skeleton lives on the heap behind `skeleton`, which the returned
        // handle keeps (and never replaces) until after `task` is dropped, and a `Skeleton`
        // is never mutated; so the reference stays valid for as long as `task` exists.
        let borrowed: &'static Skeleton = unsafe { &*Arc::as_ptr(&skeleton) };
        let task = task_file.to_task(borrowed)?;
        let mut solver = task_file.solver.clone();
        load_posture_model(&mut solver, Path::new("."))?;
        let task = PreparedTask::new(borrowed, &task, &solver)
            .map_err(|e| Failure::invalid(e.to_string()))?;
        Ok(Box::into_raw(Box::new(IkarusPrepared { task, skeleton })))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a prepared task. NULL is ignored.
///
/// # Safety
/// `prepared` is NULL or a prepared task returned by this library, not yet freed; it is
/// invalid after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_prepared_free(prepared: *mut IkarusPrepared) {
    // SAFETY: NULL or made by `ikarus_prepared_new` and not yet freed, by this function's
    // contract.
    unsafe { free_handle(prepared) };
}

/// The number of effectors (goals) of a prepared task, in the order of its task's
/// `effectors` (0 for NULL).
///
/// # Safety
/// `prepared` is NULL or a live prepared task.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_prepared_effector_count(prepared: *const IkarusPrepared) -> usize {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { prepared.as_ref() }.map_or(0, |p| p.task.task().effectors.len())
}

/// Sets the goal of effector `index` for the next solves: `position` is NULL (no position
/// goal) or 3 doubles `x, y, z`, `orientation` NULL (no orientation goal) or 4 doubles `x, y,
/// z, w`, both in model space. Non-finite goals are accepted here and rejected by the solve.
///
/// # Safety
/// `prepared` is NULL or a live prepared task not used elsewhere during the call; `position`
/// and `orientation` are NULL or point to 3 and 4 readable doubles; `err` is NULL or points
/// to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_prepared_set_goal(
    prepared: *mut IkarusPrepared,
    index: usize,
    position: *const f64,
    orientation: *const f64,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let prepared = unsafe { mut_arg(prepared, "prepared") }?;
        let count = prepared.task.task().effectors.len();
        if index >= count {
            return Err(Failure::invalid(format!(
                "effector {index} does not exist; the task has {count}"
            )));
        }
        // SAFETY: NULL or 3 readable doubles, by this function's contract.
        let position = unsafe { position.cast::<[f64; 3]>().as_ref() };
        // SAFETY: NULL or 4 readable doubles, by this function's contract.
        let orientation = unsafe { orientation.cast::<[f64; 4]>().as_ref() };
        let goal = prepared.task.goal_mut(index);
        goal.position = position.map(|p| DVec3::from_array(*p));
        goal.orientation = orientation.map(|q| DQuat::from_array(*q));
        Ok(())
    })
}

/// Solves the prepared task with its current goals on `pose` (the start pose on entry, the
/// solved pose on exit) and fills `*report` when `report` is not NULL. A solve that does not
/// converge is still `IKARUS_OK` (see `report->status`); goals the solver rejects give
/// `IKARUS_ERR_INVALID` with the report filled and the pose untouched.
///
/// # Safety
/// `prepared` and `pose` are NULL or live handles not used elsewhere during the call;
/// `report` is NULL or points to a writable `IkarusReport`; `err` is NULL or points to
/// writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_prepared_solve(
    prepared: *mut IkarusPrepared,
    pose: *mut IkarusPose,
    report: *mut IkarusReport,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let prepared = unsafe { mut_arg(prepared, "prepared") }?;
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let pose = unsafe { mut_arg(pose, "pose") }?;
        same_joints(
            ("the pose", pose.pose.len()),
            ("the prepared task's skeleton", prepared.skeleton.len()),
            "use a pose made from that skeleton",
        )?;
        let solved = prepared.task.solve(&mut pose.pose);
        // SAFETY: NULL or a writable report, by this function's contract.
        if let Some(out) = unsafe { report.as_mut() } {
            *out = IkarusReport::from(&solved);
        }
        if solved.status == SolveStatus::InvalidInput {
            return Err(Failure::invalid(
                solved
                    .message
                    .unwrap_or_else(|| "the solver rejected the goals".to_owned()),
            ));
        }
        Ok(())
    })
}
