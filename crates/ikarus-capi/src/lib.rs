//! # ikarus-capi
//!
//! The C ABI of ikarus, for game-engine plugins (Unity and .NET through P/Invoke, Unreal,
//! Godot `GDExtension`) and any language with a C FFI. Built as `libikarus_capi.so` /
//! `ikarus_capi.dll` / `libikarus_capi.dylib` (cdylib) and `libikarus_capi.a` (staticlib);
//! the header `ikarus.h` is generated from this crate by cbindgen on every build, into
//! `<target>/<profile>/include/ikarus.h` beside the libraries.
//!
//! ## Conventions
//!
//! Right-handed, +Y up, metres, radians, quaternions `[x, y, z, w]`, all `double`. Joints
//! are indexed `0..joint_count`, parents before children. "World" positions are model space
//! (the skeleton's root frame).
//!
//! ## Handles and ownership
//!
//! - Opaque handles: [`IkarusSkeleton`] (immutable), [`IkarusPose`] (mutable state, one
//!   local transform per joint), [`IkarusPrepared`] (a task's shape prepared once),
//!   [`IkarusCrowd`] (many characters' poses, solved together over flat arrays),
//!   [`IkarusTracker`] (an avatar driven by VR trackers), [`IkarusError`]. Each is created by one library function, owned by the caller, and freed
//!   by its `ikarus_*_free` (NULL is always accepted there).
//! - Strings the library returns are either borrowed from a handle (joint names, error
//!   messages: never freed by the caller) or new (report JSON: freed with
//!   [`ikarus_string_free`]); each function says which.
//! - Pointers passed in (strings, buffers, handles) are borrowed for the call only.
//! - A skeleton may be freed while poses made from it live (they are plain data) and while
//!   prepared tasks live (they keep their own reference).
//! - Handles are not synchronised: use one from one thread at a time. Different handles may
//!   be used on different threads at once.
//!
//! ## Errors
//!
//! Every fallible function returns an [`IkarusStatus`] ([`IKARUS_OK`] or an `IKARUS_ERR_*`
//! code) or NULL, and takes a last `IkarusError** err` argument: NULL when the caller does
//! not want details; otherwise `*err` is set to NULL on success and to a new error on
//! failure, whose [`ikarus_error_message`] says what went wrong (file, line and column,
//! unknown joint, which argument was NULL) and which the caller frees with
//! [`ikarus_error_free`]. NULL handles are reported as [`IKARUS_ERR_NULL`], never
//! dereferenced. No panic crosses the boundary: each function catches them and returns
//! [`IKARUS_ERR_PANIC`].

#![warn(missing_docs)]

pub mod crowd;
pub mod error;
pub mod ground;
pub mod pose;
pub mod prepared;
pub mod skeleton;
pub mod solve;
pub mod tracker;

pub use crowd::{
    IkarusCrowd, ikarus_crowd_count, ikarus_crowd_free, ikarus_crowd_get_local, ikarus_crowd_new,
    ikarus_crowd_set_local, ikarus_crowd_world_positions, ikarus_prepared_solve_crowd,
};
pub use error::{
    IKARUS_ERR_INVALID, IKARUS_ERR_IO, IKARUS_ERR_NULL, IKARUS_ERR_PANIC, IKARUS_ERR_PARSE,
    IKARUS_ERR_UTF8, IKARUS_OK, IkarusError, IkarusStatus, ikarus_error_code, ikarus_error_free,
    ikarus_error_message, ikarus_string_free,
};
pub use ground::{IkarusGroundSampler, ikarus_ground_clip};
pub use pose::{
    IKARUS_LOCAL_STRIDE, IkarusPose, ikarus_pose_clone, ikarus_pose_frame, ikarus_pose_free,
    ikarus_pose_get_local, ikarus_pose_joint_count, ikarus_pose_rest, ikarus_pose_set_local,
    ikarus_pose_world_positions, ikarus_pose_world_transforms,
};
pub use prepared::{
    IKARUS_SOLVE_CONVERGED, IKARUS_SOLVE_INVALID_INPUT, IKARUS_SOLVE_MAX_ITERATIONS,
    IKARUS_SOLVE_UNREACHABLE, IkarusPrepared, IkarusReport, ikarus_prepared_effector_count,
    ikarus_prepared_free, ikarus_prepared_new, ikarus_prepared_set_goal, ikarus_prepared_solve,
};
pub use skeleton::{
    IkarusSkeleton, ikarus_skeleton_frame_count, ikarus_skeleton_free, ikarus_skeleton_joint_count,
    ikarus_skeleton_joint_index, ikarus_skeleton_joint_name, ikarus_skeleton_joint_parent,
    ikarus_skeleton_open, ikarus_skeleton_open_scaled,
};
pub use solve::ikarus_solve_json;
pub use tracker::{
    IKARUS_TRACKER_STRIDE, IkarusTracker, ikarus_tracker_forget_samples, ikarus_tracker_free,
    ikarus_tracker_new, ikarus_tracker_scale, ikarus_tracker_solve_frame,
    ikarus_tracker_start_pose,
};

/// The library's version, `"MAJOR.MINOR.PATCH"` (static: never freed).
#[unsafe(no_mangle)]
pub extern "C" fn ikarus_version() -> *const std::ffi::c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
