//! # ikarus-anim
//!
//! Jobs over whole motions that use solvers: the MMD evaluation ([`mmd`]): a rig's
//! inheritance (付与) and its own IK chains played per frame, the way `MikuMikuDance` plays a VMD
//! on a PMX/PMD model; motion capture → posture ([`mocap`]): keypoints or segment orientations
//! to a skeleton's rotations; retargeting ([`retarget`]): any humanoid motion onto any
//! humanoid with rest-pose alignment, contacts held by the leg IK and the ground kept;
//! grounding ([`ground`]): a clip made to stand on slopes, stairs and bumps; tracking
//! ([`track`]): a character posed from VR trackers (head and hands, hips, feet). Formats hand this crate core types ([`Skeleton`](ikarus_core::Skeleton),
//! [`Rig`](ikarus_core::rig::Rig), [`LocalPose`](ikarus_core::LocalPose)); it never reads files.

#![warn(missing_docs)]

pub mod ground;
pub mod mmd;
pub mod mocap;
pub mod posture;
pub mod retarget;
pub mod track;
