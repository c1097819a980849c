//! Skeletons: opened from a file or `builtin:humanoid`, queried by joint name and index.

use std::ffi::{CString, c_char};
use std::sync::Arc;

use ikarus_core::{JointId, Motion, Skeleton};

use crate::error::{Failure, IkarusError, free_handle, guard_value, ref_arg, str_arg};

/// A skeleton (joint names, hierarchy, rest pose, limits) and the motion of the file it came
/// from, if any. Immutable; created by `ikarus_skeleton_open`, freed by
/// `ikarus_skeleton_free`. Prepared tasks keep their own reference, so a skeleton may be
/// freed before them.
pub struct IkarusSkeleton {
    pub(crate) skeleton: Arc<Skeleton>,
    pub(crate) motion: Option<Motion>,
    names: Vec<CString>,
}

impl IkarusSkeleton {
    pub(crate) fn new(skeleton: Skeleton, motion: Option<Motion>) -> Self {
        let names = skeleton
            .names()
            .iter()
            .map(|n| CString::new(n.replace('\0', "?")).unwrap_or_default())
            .collect();
        Self {
            skeleton: Arc::new(skeleton),
            motion,
            names,
        }
    }

    /// The joint at `index` if the skeleton has it.
    pub(crate) fn joint_at(&self, index: usize) -> Option<JointId> {
        (index < self.skeleton.len()).then(|| JointId::from_index(index))
    }
}

/// Opens a skeleton: `"builtin:humanoid"` or a `.bvh`, `.urdf`, `.pmx`/`.pmd`,
/// `.gltf`/`.glb`/`.vrm`/`.vrma` file (UTF-8 path), in metres. Returns a new skeleton owned
/// by the caller (free it with `ikarus_skeleton_free`), or NULL on failure with `*err` set
/// (`IKARUS_ERR_IO` for a missing file, `IKARUS_ERR_PARSE` for a malformed one; the message
/// names the file and, for parse errors, the line and column).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `err` is NULL or points to writable storage
/// for one `IkarusError*` (set to NULL on success, to a new error on failure).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_open(
    path: *const c_char,
    err: *mut *mut IkarusError,
) -> *mut IkarusSkeleton {
    // SAFETY: the caller's contract is this function's.
    unsafe { ikarus_skeleton_open_scaled(path, 1.0, err) }
}

/// `ikarus_skeleton_open` with every length multiplied by `scale` (a finite positive factor,
/// e.g. 0.01 for a centimetre BVH).
///
/// # Safety
/// As `ikarus_skeleton_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_open_scaled(
    path: *const c_char,
    scale: f64,
    err: *mut *mut IkarusError,
) -> *mut IkarusSkeleton {
    guard_value(err, || {
        // SAFETY: NULL or NUL-terminated, by this function's contract.
        let path = unsafe { str_arg(path, "path") }?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Failure::invalid(format!(
                "scale {scale}: expected a finite positive factor"
            )));
        }
        let document = ikarus_formats::open(path, scale)?;
        let handle = IkarusSkeleton::new(document.skeleton, document.motion);
        Ok(Box::into_raw(Box::new(handle)))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a skeleton. NULL is ignored. Poses made from it stay valid (they are plain data);
/// prepared tasks keep the skeleton alive until they are freed.
///
/// # Safety
/// `skel` is NULL or a skeleton returned by this library, not yet freed; it is invalid after
/// this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_free(skel: *mut IkarusSkeleton) {
    // SAFETY: NULL or made by `ikarus_skeleton_open_scaled` and not yet freed, by this
    // function's contract.
    unsafe { free_handle(skel) };
}

/// The number of joints (0 for NULL). Joints are indexed 0..count, parents before children.
///
/// # Safety
/// `skel` is NULL or a live skeleton.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_joint_count(skel: *const IkarusSkeleton) -> usize {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { skel.as_ref() }.map_or(0, |s| s.skeleton.len())
}

/// The index of the joint called `name` (exact, case-sensitive), or -1 when the skeleton has
/// no such joint or an argument is NULL or not UTF-8.
///
/// # Safety
/// `skel` is NULL or a live skeleton; `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_joint_index(
    skel: *const IkarusSkeleton,
    name: *const c_char,
) -> i32 {
    guard_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or live, by this function's contract.
        let skel = unsafe { ref_arg(skel, "skel") }?;
        // SAFETY: NULL or NUL-terminated, by this function's contract.
        let name = unsafe { str_arg(name, "name") }?;
        Ok(skel
            .skeleton
            .joint(name)
            .map_or(-1, |j| i32::try_from(j.index()).unwrap_or(-1)))
    })
    .unwrap_or(-1)
}

/// The name of joint `index`, borrowed from the skeleton (valid until it is freed; never
/// freed by the caller), or NULL for a NULL skeleton or an index out of range.
///
/// # Safety
/// `skel` is NULL or a live skeleton.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_joint_name(
    skel: *const IkarusSkeleton,
    index: usize,
) -> *const c_char {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { skel.as_ref() }
        .and_then(|s| s.names.get(index))
        .map_or(std::ptr::null(), |n| n.as_ptr())
}

/// The index of the parent of joint `index` (always below `index`), or -1 for a root, a NULL
/// skeleton or an index out of range.
///
/// # Safety
/// `skel` is NULL or a live skeleton.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_joint_parent(
    skel: *const IkarusSkeleton,
    index: usize,
) -> i32 {
    // SAFETY: NULL or live, by this function's contract.
    let Some(skel) = (unsafe { skel.as_ref() }) else {
        return -1;
    };
    skel.joint_at(index)
        .and_then(|j| skel.skeleton.parent(j))
        .map_or(-1, |p| i32::try_from(p.index()).unwrap_or(-1))
}

/// The number of frames of the motion the skeleton's file held (0 for a skeleton without
/// motion, such as `builtin:humanoid`, and for NULL). `ikarus_pose_frame` reads them.
///
/// # Safety
/// `skel` is NULL or a live skeleton.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_skeleton_frame_count(skel: *const IkarusSkeleton) -> usize {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { skel.as_ref() }
        .and_then(|s| s.motion.as_ref())
        .map_or(0, Motion::len)
}
