//! # ikarus-bevy
//!
//! The Bevy plugin of ikarus: a game's characters solved inside its frame — limbs (two-bone
//! and 7-DOF closed forms with a pole), full-body IK with effector entities, grounding on
//! uneven ground and bodies driven by VR trackers — on the joint entities a glTF or VRM scene
//! spawns, whatever naming scheme and scale the scene has.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use ikarus_bevy::prelude::*;
//!
//! fn setup(mut commands: Commands) {
//!     // The scene's root (with a glTF scene below it, spawned by Bevy's glTF loader).
//!     let character = commands.spawn((Transform::default(), IkarusCharacter::default())).id();
//!     let target = commands.spawn(Transform::from_xyz(0.4, 1.2, 0.3)).id();
//!     let pole = commands.spawn(Transform::from_xyz(0.3, 1.0, -0.5)).id();
//!     commands.spawn(LimbIk::new(character, LimbEnd::LeftHand, target).with_pole(pole));
//! }
//!
//! App::new()
//!     .add_plugins((MinimalPlugins, IkarusPlugin))
//!     .add_systems(Startup, setup)
//!     .run();
//! ```
//!
//! ## Conventions
//!
//! - **Spaces.** *World* is Bevy's. A character's *model space* is its root entity's frame
//!   (the entity with [`IkarusCharacter`]) without the root's scale: the root's world
//!   rotation and translation, lengths in world units. The ikarus [`Skeleton`] of a character
//!   lives there; targets, poles and trackers are given as entities in the world and taken
//!   to model space each frame.
//! - **Scale** is converted at the boundary: every scale on the way from the root down to a
//!   joint (the root's world scale, Mixamo's 0.01 on its armature, any other) is folded into
//!   the joints' translations when they are read, so the skeleton is in world units (metres
//!   when the world is), and taken back out when the solved pose is written. Scales must be
//!   uniform (a joint with a non-uniform scale is an [`IkarusError::NonUniformScale`]).
//! - **Numbers.** f64 inside ikarus; f32 only when Bevy's `Transform`s are read and written.
//! - **Frame.** Every system runs in `PostUpdate`, after animation (with the `animation`
//!   feature the plugin orders itself after Bevy's `AnimationSystems`; without it a game that
//!   animates orders [`IkarusSystems::Build`] after its animation) and before
//!   `TransformSystems::Propagate`, in the public [`IkarusSystems`] sets: [`Build`]
//!   (characters and solvers prepared when they appear or change), [`Read`] (joints and
//!   roots in), [`Solve`] (trackers, then full bodies with grounding, then limbs, each
//!   reading its targets just before it solves) and [`Write`] (joints out). Targets' world
//!   frames are composed from their `Transform`s and their ancestors' (in f64, not from
//!   last frame's `GlobalTransform`), so a target moved in `Update` is followed in the same
//!   frame.
//! - **What is read and written.** Each frame a character's joints that its solvers read or
//!   move, and their ancestors, are read (for a full body its 20 or so body joints, not the
//!   fingers, hair or face; [`IkarusCharacter::read_all_joints`] reads every joint); only
//!   the joints a solver may have changed, and those the last frame left solved, are
//!   written.
//! - **Threads.** With this crate's `multi_threaded` feature (Bevy's) full bodies are solved
//!   on the compute task pool's threads (`par_iter_mut` over the characters); without it, and
//!   for limbs and tracked bodies, in turn.
//! - **State.** Each character keeps its buffers (pose, model frames, tasks, tracker and
//!   grounding state) in its components, sized once: a steady frame allocates nothing in
//!   this crate's code (tested with a counting allocator, `tests/alloc.rs`).
//! - **Errors** never panic and never write a NaN: a bad target, a missing bone or a
//!   skeleton that is not a humanoid sets the [`IkarusStatus`] (characters) or the
//!   [`IkReport`] (each solver) to an error and leaves the joints as animated.
//!
//! [`Skeleton`]: ikarus_core::Skeleton
//! [`Build`]: IkarusSystems::Build
//! [`Read`]: IkarusSystems::Read
//! [`Solve`]: IkarusSystems::Solve
//! [`Write`]: IkarusSystems::Write

#![warn(missing_docs)]

mod body;
mod character;
mod convert;
mod error;
mod ground;
mod limb;
mod owned;
mod plugin;
mod tracked;

pub use body::{BodyEffector, FullBodyIk};
pub use character::{CharacterRig, IkarusCharacter, IkarusStatus};
pub use error::{IkReport, IkarusError};
pub use ground::{Grounding, IkarusGround};
pub use limb::{LimbEnd, LimbIk, LimbSolver};
pub use plugin::{IkarusPlugin, IkarusSystems};
pub use tracked::TrackedBody;

/// The ikarus types a game re-exports with the plugin's: humanoid bones, joint limits, the
/// ground shapes and the solver settings the components hold.
pub use ikarus_anim::ground::{FrameGroundConfig, Heightfield, Plane};
pub use ikarus_anim::track::TrackConfig;
pub use ikarus_core::JointLimit;
pub use ikarus_core::humanoid_map::HumanoidBone;
pub use ikarus_solve::body::BodyConfig;
pub use ikarus_solve::{SolveStatus, limb7::SwivelPolicy};

/// `use ikarus_bevy::prelude::*;` brings the plugin, its sets and its components.
pub mod prelude {
    pub use crate::{
        BodyEffector, CharacterRig, FullBodyIk, Grounding, HumanoidBone, IkReport, IkarusCharacter,
        IkarusGround, IkarusPlugin, IkarusStatus, IkarusSystems, LimbEnd, LimbIk, LimbSolver,
        TrackedBody,
    };
}
