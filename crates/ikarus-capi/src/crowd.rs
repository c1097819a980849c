//! Crowds: many characters of one skeleton, their poses moved in and out as flat `double`
//! arrays, one prepared task solved for all of them at once (SIMD lanes for the closed forms).

use std::sync::Arc;

use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::{Goal, SolveReport};

use crate::error::{
    IkarusError, IkarusStatus, free_handle, guard, guard_value, in_slice, mut_arg, out_slice,
    ref_arg, same_joints,
};
use crate::pose::{IKARUS_LOCAL_STRIDE, apply_local, read_local, write_local};
use crate::prepared::{IkarusPrepared, IkarusReport};
use crate::skeleton::IkarusSkeleton;

/// Many characters of one skeleton: each one's pose and its forward kinematics, kept current.
/// Created by `ikarus_crowd_new`, freed by `ikarus_crowd_free`; it keeps its skeleton alive.
/// One thread at a time.
pub struct IkarusCrowd {
    skeleton: Arc<Skeleton>,
    poses: Vec<LocalPose>,
    models: Vec<ModelPose>,
    /// Scratch of `ikarus_prepared_solve_crowd`, sized once per shape.
    goals: Vec<Goal>,
    reports: Vec<SolveReport>,
}

/// A new crowd of `count` characters of `skel`, each in the rest pose, owned by the caller
/// (free it with `ikarus_crowd_free`); NULL for a NULL skeleton (`*err` set).
///
/// # Safety
/// `skel` is NULL or a live skeleton; `err` is NULL or points to writable storage for one
/// `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_crowd_new(
    skel: *const IkarusSkeleton,
    count: usize,
    err: *mut *mut IkarusError,
) -> *mut IkarusCrowd {
    guard_value(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let skel = unsafe { ref_arg(skel, "skel") }?;
        let skeleton = Arc::clone(&skel.skeleton);
        let rest = skeleton.rest_pose();
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &rest, &mut model);
        let crowd = IkarusCrowd {
            poses: vec![rest; count],
            models: vec![model; count],
            goals: Vec::new(),
            reports: Vec::new(),
            skeleton,
        };
        Ok(Box::into_raw(Box::new(crowd)))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a crowd. NULL is ignored.
///
/// # Safety
/// `crowd` is NULL or a crowd returned by this library, not yet freed; it is invalid after
/// this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_crowd_free(crowd: *mut IkarusCrowd) {
    // SAFETY: NULL or made by `ikarus_crowd_new` and not yet freed, by this function's
    // contract.
    unsafe { free_handle(crowd) };
}

/// The number of characters of a crowd (0 for NULL).
///
/// # Safety
/// `crowd` is NULL or a live crowd.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_crowd_count(crowd: *const IkarusCrowd) -> usize {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { crowd.as_ref() }.map_or(0, |c| c.poses.len())
}

/// Writes every character's local transforms into `out`: character after character, each in
/// the layout of `ikarus_pose_get_local` (`count * joint_count * 7` doubles; `out_len` is the
/// buffer's length in doubles).
///
/// # Safety
/// `crowd` is NULL or a live crowd; `out` is NULL or points to `out_len` writable doubles;
/// `err` is NULL or points to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_crowd_get_local(
    crowd: *const IkarusCrowd,
    out: *mut f64,
    out_len: usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let crowd = unsafe { ref_arg(crowd, "crowd") }?;
        let per = IKARUS_LOCAL_STRIDE * crowd.skeleton.len();
        // SAFETY: NULL or `out_len` writable doubles, by this function's contract.
        let out = unsafe { out_slice(out, out_len, per * crowd.poses.len(), "out") }?;
        for (values, pose) in out.chunks_exact_mut(per).zip(&crowd.poses) {
            write_local(pose, values);
        }
        Ok(())
    })
}

/// Sets every character's local transforms from `values` (the layout of
/// `ikarus_crowd_get_local`) and updates their forward kinematics. Nothing is written when a
/// value is not finite or a quaternion is zero (`IKARUS_ERR_INVALID`).
///
/// # Safety
/// `crowd` is NULL or a live crowd not used elsewhere during the call; `values` is NULL or
/// points to `values_len` readable doubles; `err` is NULL or points to writable storage for
/// one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_crowd_set_local(
    crowd: *mut IkarusCrowd,
    values: *const f64,
    values_len: usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let crowd = unsafe { mut_arg(crowd, "crowd") }?;
        let per = IKARUS_LOCAL_STRIDE * crowd.skeleton.len();
        // SAFETY: NULL or `values_len` readable doubles, by this function's contract.
        let values =
            unsafe { in_slice(values, values_len, per * crowd.poses.len(), "values", "") }?;
        let parsed = values
            .chunks_exact(per)
            .take(crowd.poses.len())
            .map(read_local)
            .collect::<Result<Vec<_>, _>>()?;
        let skeleton = &*crowd.skeleton;
        for ((pose, model), transforms) in crowd.poses.iter_mut().zip(&mut crowd.models).zip(parsed)
        {
            apply_local(pose, transforms);
            fk::forward_kinematics(skeleton, pose, model);
        }
        Ok(())
    })
}

/// Writes every character's joints' world (model-space) positions into `out_xyz`: character
/// after character, `x, y, z` per joint (`count * joint_count * 3` doubles).
///
/// # Safety
/// `crowd` is NULL or a live crowd; `out_xyz` is NULL or points to `out_len` writable
/// doubles; `err` is NULL or points to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_crowd_world_positions(
    crowd: *const IkarusCrowd,
    out_xyz: *mut f64,
    out_len: usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let crowd = unsafe { ref_arg(crowd, "crowd") }?;
        let needed = 3 * crowd.skeleton.len() * crowd.poses.len();
        // SAFETY: NULL or `out_len` writable doubles, by this function's contract.
        let out = unsafe { out_slice(out_xyz, out_len, needed, "out_xyz") }?;
        let positions = crowd.models.iter().flat_map(ModelPose::positions);
        for (xyz, p) in out.chunks_exact_mut(3).zip(positions) {
            xyz.copy_from_slice(&p.to_array());
        }
        Ok(())
    })
}

/// Solves `prepared` for every character of `crowd`, each with its own goals: for character
/// `i` and effector `e` (in the prepared task's order), the position goal is
/// `positions[3 * (i * effectors + e) ..][..3]` and, when `orientations` is not NULL, the
/// orientation goal `orientations[4 * (i * effectors + e) ..][..4]` (`x, y, z, w`), model
/// space; NULL `orientations` means position goals only. `reports` (NULL, or `count`
/// writable reports) receives each character's report. Two-bone and limb7 tasks run several
/// characters at a time in SIMD lanes; each gets what `ikarus_prepared_solve` would give it.
/// Characters whose goals are rejected keep their pose and report `IKARUS_SOLVE_INVALID_INPUT`
/// (the call still returns `IKARUS_OK`). The prepared task's own goals hold one character's
/// afterwards.
///
/// # Safety
/// `prepared` and `crowd` are NULL or live handles not used elsewhere during the call;
/// `positions` is NULL or points to `positions_len` readable doubles, `orientations` NULL or
/// to `4 * count * effectors` readable doubles, `reports` NULL or to `count` writable
/// `IkarusReport`s; `err` is NULL or points to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_prepared_solve_crowd(
    prepared: *mut IkarusPrepared,
    crowd: *mut IkarusCrowd,
    positions: *const f64,
    positions_len: usize,
    orientations: *const f64,
    reports: *mut IkarusReport,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let prepared = unsafe { mut_arg(prepared, "prepared") }?;
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let crowd = unsafe { mut_arg(crowd, "crowd") }?;
        same_joints(
            ("the crowd's skeleton", crowd.skeleton.len()),
            ("the prepared task's", prepared.skeleton().len()),
            "make the crowd from that skeleton",
        )?;
        let count = crowd.poses.len();
        let effectors = prepared.task().task().effectors.len();
        let goals = count * effectors;
        // SAFETY: NULL or `positions_len` readable doubles, by this function's contract.
        let positions = unsafe { in_slice(positions, positions_len, 3 * goals, "positions", "") }?;
        let orientations = if orientations.is_null() {
            None
        } else {
            // SAFETY: not NULL; `4 * count * effectors` readable doubles by this function's
            // contract.
            Some(unsafe { std::slice::from_raw_parts(orientations, 4 * goals) })
        };
        crowd.goals.clear();
        crowd.goals.extend((0..goals).map(|g| Goal {
            position: Some(DVec3::from_slice(&positions[3 * g..3 * g + 3])),
            orientation: orientations.map(|q| DQuat::from_slice(&q[4 * g..4 * g + 4])),
        }));
        crowd
            .reports
            .resize_with(count, || SolveReport::invalid("not solved"));
        prepared.task_mut().solve_many_in(
            &crowd.goals,
            &mut crowd.poses,
            &mut crowd.models,
            &mut crowd.reports,
        );
        if !reports.is_null() {
            // SAFETY: not NULL; `count` writable reports by this function's contract.
            let out = unsafe { std::slice::from_raw_parts_mut(reports, count) };
            for (out, report) in out.iter_mut().zip(&crowd.reports) {
                *out = IkarusReport::from(report);
            }
        }
        Ok(())
    })
}
