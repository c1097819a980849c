//! # ikarus-formats
//!
//! Reading and writing files at the boundary of ikarus. Every format converts to the core's
//! conventions here (right-handed, +Y up, radians, quaternions; lengths in the file's unit times
//! an optional scale) and nowhere else.
//!
//! - [`bvh`]: Biovision hierarchy + motion, read and write, any channel layout.
//! - [`urdf`]: URDF robots (urdf-rs): the link tree as a skeleton, serial chains with a `q`
//!   interface.
//! - [`mmd`]: `MikuMikuDance` PMX/PMD models and VMD motions (left-handed, 0.08 m per unit,
//!   converted at load and on export).
//! - [`gltf`]: glTF 2.0 / GLB, VRM 0.x and 1.0 avatars, VRM animations (`.vrma`): skins as
//!   skeletons, animations as motions, skinned meshes, the VRM humanoid map; write back.
//! - [`keypoints`]: 3-D keypoints (JSON, CSV, `NumPy` `.npy`) and segment orientations (JSON)
//!   for motion capture.
//! - [`trackers`]: VR tracker recordings (head, hands, hips, feet), JSON and CSV.
//! - [`mesh`]: the skinned triangle mesh every character format hands to the viewer.
//! - [`open`]: one entry point for CLI and viewer: a path or `builtin:humanoid`.
//!
//! Parsers never panic on malformed input and never allocate from a count they have not checked
//! against the input's size; errors name the file, line and column and what was expected.

#![warn(missing_docs)]

pub mod bvh;
mod document;
mod error;
pub mod gltf;
pub mod keypoints;
pub mod mesh;
pub mod mmd;
pub mod trackers;
pub mod urdf;

pub use document::{Document, open_bytes};
#[cfg(feature = "fs")]
pub use document::{humanoid_map, open, open_animation, read_mmd_model, read_vmd};
pub use error::FormatError;

/// The README's library example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
