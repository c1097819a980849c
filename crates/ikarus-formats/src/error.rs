//! Errors of file-level operations.

use std::path::PathBuf;

use crate::bvh::BvhError;
use crate::gltf::GltfError;
use crate::mmd::MmdError;
use crate::urdf::UrdfError;

/// An error reading or writing a file, naming the file (and line and column where they apply).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is not valid BVH.
    #[error("{}:{source}", path.display())]
    Bvh {
        /// The file.
        path: PathBuf,
        /// What is wrong and where (`line:column: message`).
        source: BvhError,
    },
    /// The file is not a valid URDF robot.
    #[error("{}:{source}", path.display())]
    Urdf {
        /// The file.
        path: PathBuf,
        /// What is wrong and where (`line:column: message`).
        source: UrdfError,
    },
    /// The file is not a valid PMX, PMD or VMD file.
    #[error("{}: {source}", path.display())]
    Mmd {
        /// The file.
        path: PathBuf,
        /// What is wrong and at which byte.
        source: MmdError,
    },
    /// The file parsed but describes something ikarus cannot build (a bone loop, a motion
    /// without a model).
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A PMX/PMD model parsed but does not build (see
    /// [`MmdBuildError`](crate::mmd::MmdBuildError)).
    #[error("{}: {source}", path.display())]
    Model {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: crate::mmd::MmdBuildError,
    },
    /// The file is not valid glTF / GLB / VRM / VRMA.
    #[error("{}: {source}", path.display())]
    Gltf {
        /// The file.
        path: PathBuf,
        /// What is wrong and where (byte offset, JSON line:column or JSON path).
        source: GltfError,
    },
    /// The file is not a valid keypoint or segment-orientation file.
    #[error("{}: {source}", path.display())]
    Keypoints {
        /// The file.
        path: PathBuf,
        /// What is wrong and in which frame or line.
        source: crate::keypoints::KeypointError,
    },
    /// The file's extension names no format ikarus reads.
    #[error("{}: unknown file format (expected .bvh, .urdf, .pmx, .pmd, .gltf, .glb, .vrm, .vrma or `builtin:humanoid`)", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
}
