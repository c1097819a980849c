//! # ikarus-py
//!
//! The compiled half (`ikarus._ikarus`) of the `ikarus` Python package: thin bindings over
//! `ikarus-core`, `ikarus-solve`, `ikarus-formats`, `ikarus-anim` and `ikarus-jobs`. No logic
//! of its own: each call checks its arguments (shape, dtype, finiteness: a `ValueError` naming the argument),
//! calls the Rust crates and hands numpy arrays back. Rust errors become Python exceptions with
//! the same message; panics are caught at the boundary and raised as `RuntimeError`.
//!
//! Conventions are the toolkit's: right-handed, +Y up, metres, radians, quaternions
//! `[x, y, z, w]`, float64 everywhere.
//!
//! - [`model`]: `Skeleton`, `Pose`, `Motion`, `read`, `write`, `fk` (files through
//!   `ikarus-jobs`: VMD motions played on their model, `.glb` into an avatar).
//! - [`convert`](mod@convert): `convert`, the library call of `ikarus convert`.
//! - [`robot`]: `JointChain` (a URDF serial chain), `solve_batch` and its `BatchResult`.
//! - [`task`]: `solve` (one IK task, JSON task-format names) and its `Report`.
//! - [`mocap`]: keypoints → motion.
//! - [`posture`]: `PostureModel` and `learn` (example-based IK).
//! - [`retarget`]: a motion onto another humanoid.
//! - [`ground`](mod@ground): a humanoid motion on uneven ground.
//! - [`track`](mod@track): an avatar posed from VR trackers.
//! - [`pool`]: the package's own rayon pools (long calls release the GIL and run there).
//! - [`arrays`]: argument checks and numpy conversions.

#![warn(missing_docs)]

pub mod arrays;
pub mod convert;
pub mod ground;
pub mod mocap;
pub mod model;
pub mod pool;
pub mod posture;
pub mod retarget;
pub mod robot;
pub mod task;
pub mod track;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Runs `f`, turning a panic into a `RuntimeError` instead of letting it cross into Python.
///
/// # Errors
/// `RuntimeError` with the panic's message.
pub fn no_panic<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Err(PyRuntimeError::new_err(format!(
            "ikarus: internal error: {message}"
        )))
    })
}

/// A `ValueError` carrying a Rust error's message unchanged.
pub fn value_error(error: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// The compiled module `ikarus._ikarus`.
#[pymodule]
fn _ikarus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::Skeleton>()?;
    m.add_class::<model::Pose>()?;
    m.add_class::<model::Motion>()?;
    m.add_class::<robot::JointChain>()?;
    m.add_class::<robot::BatchResult>()?;
    m.add_class::<task::Report>()?;
    m.add_class::<posture::PostureModel>()?;
    m.add_function(wrap_pyfunction!(model::read, m)?)?;
    m.add_function(wrap_pyfunction!(model::write, m)?)?;
    m.add_function(wrap_pyfunction!(model::fk, m)?)?;
    m.add_function(wrap_pyfunction!(convert::convert, m)?)?;
    m.add_function(wrap_pyfunction!(robot::solve_batch, m)?)?;
    m.add_function(wrap_pyfunction!(task::solve, m)?)?;
    m.add_function(wrap_pyfunction!(mocap::mocap, m)?)?;
    m.add_function(wrap_pyfunction!(mocap::read_keypoints, m)?)?;
    m.add_function(wrap_pyfunction!(posture::learn, m)?)?;
    m.add_function(wrap_pyfunction!(retarget::retarget, m)?)?;
    m.add_function(wrap_pyfunction!(ground::ground, m)?)?;
    m.add_function(wrap_pyfunction!(track::track, m)?)?;
    m.add_function(wrap_pyfunction!(pool::pool_info, m)?)?;
    Ok(())
}
