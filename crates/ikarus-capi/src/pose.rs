//! Poses: one local transform per joint, read and written over flat `double` arrays.

use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};

use crate::IkarusSkeleton;
use crate::error::{
    Failure, IkarusError, IkarusStatus, free_handle, guard, guard_value, in_slice, mut_arg,
    out_slice, ref_arg, same_joints,
};

/// Doubles per joint in `ikarus_pose_get_local` / `ikarus_pose_set_local`: translation
/// `x, y, z` then rotation `x, y, z, w` (`parent_from_joint`).
pub const IKARUS_LOCAL_STRIDE: usize = 7;

/// A pose: each joint's transform relative to its parent (`parent_from_joint`), for one
/// skeleton. Mutable state: the solvers write it. Created by `ikarus_pose_rest`,
/// `ikarus_pose_frame` or `ikarus_pose_clone`, freed by `ikarus_pose_free`.
pub struct IkarusPose {
    pub(crate) pose: LocalPose,
}

/// Checks that `pose` belongs to a skeleton with `skel`'s joint count.
pub(crate) fn check_pose(skel: &IkarusSkeleton, pose: &IkarusPose) -> Result<(), Failure> {
    same_joints(
        ("the pose", pose.pose.len()),
        ("the skeleton", skel.skeleton.len()),
        "use a pose made from this skeleton",
    )
}

/// Writes `pose`'s local transforms into `out` in the layout of `ikarus_pose_get_local`.
pub(crate) fn write_local(pose: &LocalPose, out: &mut [f64]) {
    for (values, t) in out
        .chunks_exact_mut(IKARUS_LOCAL_STRIDE)
        .zip(pose.transforms())
    {
        values[..3].copy_from_slice(&t.translation.to_array());
        values[3..].copy_from_slice(&t.rotation.to_array());
    }
}

/// Sets `pose`'s local translations and rotations from `read_local`'s values; scales are kept.
pub(crate) fn apply_local(pose: &mut LocalPose, values: Vec<(DVec3, DQuat)>) {
    for (t, (translation, rotation)) in pose.transforms_mut().iter_mut().zip(values) {
        t.translation = translation;
        t.rotation = rotation;
    }
}

/// Reads local translations and normalised rotations in the layout of
/// `ikarus_pose_set_local`, one per whole stride of `values`.
pub(crate) fn read_local(values: &[f64]) -> Result<Vec<(DVec3, DQuat)>, Failure> {
    values
        .chunks_exact(IKARUS_LOCAL_STRIDE)
        .enumerate()
        .map(|(joint, v)| {
            let translation = DVec3::new(v[0], v[1], v[2]);
            let rotation = DQuat::from_xyzw(v[3], v[4], v[5], v[6]);
            let length = rotation.length();
            if translation.is_finite() && rotation.is_finite() && length >= 1e-12 {
                Ok((translation, rotation / length))
            } else {
                Err(Failure::invalid(format!(
                    "joint {joint}: translation and rotation must be finite and the quaternion non-zero"
                )))
            }
        })
        .collect()
}

pub(crate) fn into_handle(pose: LocalPose) -> *mut IkarusPose {
    Box::into_raw(Box::new(IkarusPose { pose }))
}

/// A new pose holding the skeleton's rest pose, owned by the caller (free it with
/// `ikarus_pose_free`); NULL for a NULL skeleton.
///
/// # Safety
/// `skel` is NULL or a live skeleton.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_rest(skel: *const IkarusSkeleton) -> *mut IkarusPose {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { skel.as_ref() }.map_or(std::ptr::null_mut(), |s| {
        into_handle(s.skeleton.rest_pose())
    })
}

/// A new pose holding frame `frame` of the motion the skeleton's file held, owned by the
/// caller; NULL with `*err` set when the frame does not exist (`IKARUS_ERR_INVALID`, the
/// message gives the range). Frame 0 of a skeleton without motion is its rest pose.
///
/// # Safety
/// `skel` is NULL or a live skeleton; `err` is NULL or points to writable storage for one
/// `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_frame(
    skel: *const IkarusSkeleton,
    frame: usize,
    err: *mut *mut IkarusError,
) -> *mut IkarusPose {
    guard_value(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let skel = unsafe { ref_arg(skel, "skel") }?;
        let pose = match &skel.motion {
            Some(motion) if !motion.is_empty() => {
                motion.frame(frame).cloned().ok_or_else(|| {
                    Failure::invalid(format!(
                        "frame {frame} does not exist; the motion has frames 0 to {}",
                        motion.len() - 1
                    ))
                })?
            }
            _ if frame == 0 => skel.skeleton.rest_pose(),
            _ => {
                return Err(Failure::invalid(format!(
                    "frame {frame} does not exist; this skeleton has only its rest pose (frame 0)"
                )));
            }
        };
        Ok(into_handle(pose))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// A new copy of `pose`, owned by the caller; NULL for NULL.
///
/// # Safety
/// `pose` is NULL or a live pose.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_clone(pose: *const IkarusPose) -> *mut IkarusPose {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { pose.as_ref() }.map_or(std::ptr::null_mut(), |p| into_handle(p.pose.clone()))
}

/// Frees a pose. NULL is ignored.
///
/// # Safety
/// `pose` is NULL or a pose returned by this library, not yet freed; it is invalid after
/// this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_free(pose: *mut IkarusPose) {
    // SAFETY: NULL or made by `into_handle` and not yet freed, by this function's contract.
    unsafe { free_handle(pose) };
}

/// The number of joints of a pose (0 for NULL).
///
/// # Safety
/// `pose` is NULL or a live pose.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_joint_count(pose: *const IkarusPose) -> usize {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { pose.as_ref() }.map_or(0, |p| p.pose.len())
}

/// What the world-frame writers share: the arguments checked, the skeleton, `pose`'s model
/// frames on it (forward kinematics) and the caller's buffer of `stride` doubles per joint.
///
/// # Safety
/// `skel`, `pose` are NULL or live handles; `out.0` is NULL or points to `out.1` writable
/// doubles used by nothing else during `'a`.
unsafe fn world_out<'a>(
    skel: *const IkarusSkeleton,
    pose: *const IkarusPose,
    (out, out_len): (*mut f64, usize),
    stride: usize,
    argument: &str,
) -> Result<(&'a Skeleton, ModelPose, &'a mut [f64]), Failure> {
    // SAFETY: NULL or live, by this function's contract.
    let skel: &'a IkarusSkeleton = unsafe { ref_arg(skel, "skel") }?;
    // SAFETY: NULL or live, by this function's contract.
    let pose = unsafe { ref_arg(pose, "pose") }?;
    check_pose(skel, pose)?;
    let skeleton = &*skel.skeleton;
    // SAFETY: NULL or `out_len` writable doubles, by this function's contract.
    let out = unsafe { out_slice(out, out_len, stride * skeleton.len(), argument) }?;
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &pose.pose, &mut model);
    Ok((skeleton, model, out))
}

/// Writes each joint's world (model-space) position, by forward kinematics of `pose` on
/// `skel`, into `out_xyz`: `x, y, z` per joint in joint order, `3 * joint_count` doubles
/// (`out_len` is the buffer's length in doubles, at least that).
///
/// # Safety
/// `skel`, `pose` are NULL or live handles; `out_xyz` is NULL or points to `out_len`
/// writable doubles; `err` is NULL or points to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_world_positions(
    skel: *const IkarusSkeleton,
    pose: *const IkarusPose,
    out_xyz: *mut f64,
    out_len: usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: the arguments as this function's contract states them.
        let (_, model, out) = unsafe { world_out(skel, pose, (out_xyz, out_len), 3, "out_xyz") }?;
        for (xyz, p) in out.chunks_exact_mut(3).zip(model.positions()) {
            xyz.copy_from_slice(&p.to_array());
        }
        Ok(())
    })
}

/// Writes each joint's world (model-space) transform, by forward kinematics of `pose` on
/// `skel`, into `out`: `IKARUS_LOCAL_STRIDE` (7) doubles per joint in joint order, position
/// `x, y, z` then rotation `x, y, z, w` (`out_len` at least `7 * joint_count`). This is also
/// the layout of a tracker sample placed on a bone.
///
/// # Safety
/// `skel`, `pose` are NULL or live handles; `out` is NULL or points to `out_len` writable
/// doubles; `err` is NULL or points to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_world_transforms(
    skel: *const IkarusSkeleton,
    pose: *const IkarusPose,
    out: *mut f64,
    out_len: usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: the arguments as this function's contract states them.
        let (skeleton, model, out) =
            unsafe { world_out(skel, pose, (out, out_len), IKARUS_LOCAL_STRIDE, "out") }?;
        for (values, j) in out
            .chunks_exact_mut(IKARUS_LOCAL_STRIDE)
            .zip(skeleton.joints())
        {
            values[..3].copy_from_slice(&model.position(j).to_array());
            values[3..].copy_from_slice(&model.rotation(j).to_array());
        }
        Ok(())
    })
}

/// Writes each joint's local transform into `out`: `IKARUS_LOCAL_STRIDE` (7) doubles per
/// joint in joint order, translation `x, y, z` then rotation quaternion `x, y, z, w`, relative
/// to the parent (`out_len`, the buffer's length in doubles, at least `7 * joint_count`).
/// Joint scales are not included.
///
/// # Safety
/// `pose` is NULL or a live pose; `out` is NULL or points to `out_len` writable doubles;
/// `err` is NULL or points to writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_get_local(
    pose: *const IkarusPose,
    out: *mut f64,
    out_len: usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let pose = unsafe { ref_arg(pose, "pose") }?;
        let needed = IKARUS_LOCAL_STRIDE * pose.pose.len();
        // SAFETY: NULL or `out_len` writable doubles, by this function's contract.
        let out = unsafe { out_slice(out, out_len, needed, "out") }?;
        write_local(&pose.pose, out);
        Ok(())
    })
}

/// Sets each joint's local translation and rotation from `values` (the layout of
/// `ikarus_pose_get_local`, `values_len` doubles, at least `7 * joint_count`). Rotations are
/// normalised. Nothing is written when a value is not finite or a quaternion is zero
/// (`IKARUS_ERR_INVALID`, naming the joint index). Joint scales are kept.
///
/// # Safety
/// `pose` is NULL or a live pose not used elsewhere during the call; `values` is NULL or
/// points to `values_len` readable doubles; `err` is NULL or points to writable storage for
/// one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_pose_set_local(
    pose: *mut IkarusPose,
    values: *const f64,
    values_len: usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let pose = unsafe { mut_arg(pose, "pose") }?;
        let needed = IKARUS_LOCAL_STRIDE * pose.pose.len();
        // SAFETY: NULL or `values_len` readable doubles, by this function's contract.
        let values = unsafe { in_slice(values, values_len, needed, "values", "") }?;
        apply_local(&mut pose.pose, read_local(&values[..needed])?);
        Ok(())
    })
}
