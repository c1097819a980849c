//! # ikarus-core
//!
//! The model layer of ikarus: an immutable [`Skeleton`] (hierarchy, names, rest pose, joint
//! limits), per-frame state ([`LocalPose`], [`ModelPose`]), [`Motion`] clips, forward kinematics
//! ([`fk`]), a rig's evaluation rules (inheritance, declared IK chains: [`rig`]), smooth motion ([`trajectory`], [`keyframes`], [`blend`]), serial chains with a
//! joint-vector interface ([`chain`]), the built-in default humanoid ([`humanoid`]), the
//! humanoid bone map that recognises bones in every naming scheme ([`humanoid_map`]) and
//! tracker recordings ([`trackers`]).
//!
//! ## Conventions
//!
//! - **Right-handed, +Y up, metres, radians.** A humanoid faces +Z; its left side is +X (as in VRM 1.0).
//!   File formats convert at their boundary (BVH units vary, MMD is left-handed with 1 unit =
//!   0.08 m, URDF is +Z up) — nothing in this crate knows about them.
//! - **Column vectors.** A transform applies to a point as `a_from_b * p_b = p_a`, so products read
//!   right to left: `model_from_joint = model_from_parent * parent_from_joint`.
//! - **`a_from_b` naming.** A transform named `a_from_b` maps coordinates in space `b` to space `a`.
//!   "Local" is a joint's transform relative to its parent (`parent_from_joint`), "model" is
//!   relative to the skeleton's root space (the space the roots' parents would live in), "world"
//!   is model space placed in a scene by a caller-owned `world_from_model`.
//! - **Quaternions `[x, y, z, w]`**, unit length, as glam's [`DQuat`](glam::DQuat). Rotations are
//!   stored as quaternions; Euler angles exist only where a format demands them.
//! - **f64 inside** (`DVec3`, `DQuat`, `DAffine3`); f32 only at rendering edges.
//! - **Joints are flat and ordered parents-before-children, depth first.** A [`JointId`] is an index
//!   into every per-joint array; the descendants of a joint are the contiguous range
//!   [`Skeleton::subtree`], so forward kinematics is one loop and a partial update is a sub-range.
//!
//! ## Example
//!
//! ```
//! use ikarus_core::{fk, humanoid, ModelPose};
//!
//! let skeleton = humanoid::builtin_humanoid();
//! let pose = skeleton.rest_pose();
//! let mut model = ModelPose::new(&skeleton);
//! fk::forward_kinematics(&skeleton, &pose, &mut model);
//! let hand = skeleton.joint("leftHand").unwrap();
//! assert!(model.position(hand).x > 0.5); // T-pose: the left hand is far out on +X
//! ```

#![warn(missing_docs)]

pub mod blend;
pub mod chain;
pub mod fk;
pub mod humanoid;
pub mod humanoid_map;
pub mod keyframes;
mod limit;
mod motion;
mod pose;
pub mod rig;
mod skeleton;
pub mod trackers;
pub mod trajectory;
mod transform;

pub use glam;
pub use limit::{
    APPROX_ATAN_COEFFICIENTS, EulerLimit, EulerOrder, HingeLimit, INSIDE_MARGIN, JointLimit,
    LimitError, MmdLimit, SwingTwistLimit, swing_twist,
};
pub use motion::{Motion, MotionError};
pub use pose::{LocalPose, ModelPose};
pub use skeleton::{JointId, MAX_JOINTS, RawJoint, Skeleton, SkeletonBuilder, SkeletonError};
pub use transform::Transform;
