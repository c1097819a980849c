//! # ikarus-jobs
//!
//! File-level jobs that need both [`ikarus_formats`] (files ↔ core types) and [`ikarus_anim`]
//! (jobs over whole motions), so that the `ikarus` command, the Python package and any other
//! front end run one library path instead of each its own copy:
//!
//! - [`mmd`]: [`MmdPlayer`], a VMD motion played on its PMX/PMD model with the model's own IK
//!   (inheritance, then every declared IK chain by [`ikarus_anim::mmd::MmdEvaluator`]), in
//!   compatible or exact mode, sampled at any frame rate.
//! - [`source`]: [`read_source`], any motion source as a skeleton and a motion: every format
//!   [`ikarus_formats::open_animation`] reads, and VMD motions played on their model.
//! - [`write`](mod@write): [`write_motion`], a motion written by the output's extension (`.bvh`, `.glb`
//!   — new or added into an existing glTF/GLB/VRM —, `.vmd` for its model, `.vrma` with a
//!   humanoid map) and [`vmd_bytes`].
//! - [`convert`](mod@convert): [`convert()`](fn@convert), read, rescale, resample, write: `ikarus convert`.
//! - [`task`]: [`TaskFile`], the task file of `ikarus solve` (goals by joint name, the solver
//!   as JSON) and [`solve_task`], shared by the command line and the C API.
//!
//! The crate sits above both libraries (core ← formats, core ← solve ← anim; both ← jobs ←
//! cli, py) because neither may see the other: formats never solve, anim never reads files.
//! It prints nothing; callers show progress through a callback and report warnings
//! (such as a VMD's keyed bones the model lacks) that the results carry.
//!
//! Conventions are the toolkit's: right-handed, +Y up, metres, radians, quaternions
//! `[x, y, z, w]`.

#![warn(missing_docs)]

pub mod convert;
pub mod mmd;
pub mod source;
pub mod task;
pub mod terrain;
pub mod write;

use std::path::{Path, PathBuf};

pub use convert::{ConvertOptions, Converted, convert};
pub use mmd::MmdPlayer;
pub use source::{ReadOptions, Source, read_source};
pub use task::{SolveOutput, TaskError, TaskFile, solve_task};
pub use terrain::{Terrain, TerrainError};
pub use write::{VmdBytesError, WriteOptions, vmd_bytes, write_motion};

pub use ikarus_anim::mmd::IkMode;

/// An error of a file-level job: the file and what is wrong with it, or which argument is out
/// of range.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// A file could not be read or parsed (its own message: file, line and column).
    #[error(transparent)]
    Format(#[from] ikarus_formats::FormatError),
    /// A PMX/PMD model parsed but cannot be built or evaluated (a bone loop, a broken IK
    /// chain). Fix the model in an MMD editor.
    #[error("{}: {source}", path.display())]
    Model {
        /// The model file.
        path: PathBuf,
        /// What is wrong.
        source: ikarus_formats::mmd::MmdBuildError,
    },
    /// A VMD motion was given without the PMX/PMD model it plays on. Pass the model
    /// (`--model` on the command line, `model=` in Python).
    #[error("{}: a .vmd motion plays on its .pmx or .pmd model: give the model", path.display())]
    NeedsModel {
        /// The VMD file.
        path: PathBuf,
    },
    /// The file a VMD should play on is not a .pmx or .pmd model.
    #[error("{}: a VMD motion plays on a .pmx or .pmd model", path.display())]
    NotAModel {
        /// The file given as the model.
        path: PathBuf,
    },
    /// A model or motion file was given where it does not apply (a model for a source that is
    /// not a VMD, a VMD for a source that is not a model).
    #[error("{}: {what}", path.display())]
    NotApplicable {
        /// The source.
        path: PathBuf,
        /// What does not apply, and what to do instead.
        what: &'static str,
    },
    /// A scale or frame rate that is not a finite positive number.
    #[error("{name} {value}: expected a finite positive number")]
    NotPositive {
        /// The argument (`scale`, `fps`).
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The output's extension names no format this job writes.
    #[error("{}: unknown output format (expected {expected})", path.display())]
    UnknownOutput {
        /// The output file.
        path: PathBuf,
        /// The extensions it takes.
        expected: &'static str,
    },
    /// A file to write for (a `.vmd`'s model) or into (a `.glb`'s avatar) does not hold the
    /// skeleton being written: read the skeleton from that file.
    #[error("{}: {what} (read the skeleton from this file)", path.display())]
    NotTheSkeleton {
        /// The model or avatar file.
        path: PathBuf,
        /// What differs.
        what: String,
    },
    /// The motion is not a motion of the skeleton, or cannot be resampled.
    #[error("{}: {source}", path.display())]
    Motion {
        /// The source or output file.
        path: PathBuf,
        /// What is wrong.
        source: ikarus_core::MotionError,
    },
    /// The motion could not be written as VMD for the model.
    #[error("{}: {source}", path.display())]
    Vmd {
        /// The output file.
        path: PathBuf,
        /// What failed.
        source: crate::write::VmdBytesError,
    },
    /// The output could not be built or written (the writer's message).
    #[error("{}: {message}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// `value` when it is a finite positive number, else [`JobError::NotPositive`].
fn positive(name: &'static str, value: f64) -> Result<f64, JobError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(JobError::NotPositive { name, value })
    }
}

/// The PMX/PMD file `model` read with `scale` and built: its name and its skeleton and rig.
fn load_mmd_model(
    model: &Path,
    scale: f64,
) -> Result<(String, ikarus_formats::mmd::Built), JobError> {
    if !is_mmd_model(model) {
        return Err(JobError::NotAModel {
            path: model.to_owned(),
        });
    }
    let scale = positive("scale", scale)?;
    let parsed = ikarus_formats::read_mmd_model(model, scale)?;
    let built = parsed.build().map_err(|source| JobError::Model {
        path: model.to_owned(),
        source,
    })?;
    Ok((parsed.name, built))
}

/// The lower-case extension of `path`.
fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// True for a `.pmx` or `.pmd` path.
pub fn is_mmd_model(path: &Path) -> bool {
    matches!(extension(path).as_deref(), Some("pmx" | "pmd"))
}

/// True for a `.vmd` path.
pub fn is_vmd(path: &Path) -> bool {
    extension(path).as_deref() == Some("vmd")
}
