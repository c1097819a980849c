//! The plugin and its system sets.

use bevy::prelude::*;
use bevy::transform::TransformSystems;

use crate::{body, character, limb, tracked};

/// The plugin's systems, in `PostUpdate`, in this order, after animation and before
/// `TransformSystems::Propagate`. Order a game's systems against them: a system that moves
/// targets after animation goes `.before(IkarusSystems::Read)`; one that reads the solved
/// pose (before propagation) `.after(IkarusSystems::Write)`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IkarusSystems {
    /// Characters' skeletons built when their scenes spawn; solvers prepared when their
    /// components appear or change.
    Build,
    /// Characters' joints and roots read (f32 → f64, world → model space).
    Read,
    /// Tracked bodies, then full bodies with grounding, then limbs, on each character's pose;
    /// each reads its targets, poles and trackers just before it solves.
    Solve,
    /// Solved joints written back (f64 → f32), only those that changed.
    Write,
}

/// The ikarus plugin: add it with a game's other plugins; it needs `Time` (from
/// `MinimalPlugins` or `DefaultPlugins`) and Bevy's transforms.
#[derive(Clone, Copy, Debug, Default)]
pub struct IkarusPlugin;

impl Plugin for IkarusPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<character::Skeletons>();
        app.configure_sets(
            PostUpdate,
            (
                IkarusSystems::Build,
                IkarusSystems::Read,
                IkarusSystems::Solve,
                IkarusSystems::Write,
            )
                .chain()
                .before(TransformSystems::Propagate),
        );
        #[cfg(feature = "animation")]
        app.configure_sets(
            PostUpdate,
            IkarusSystems::Build.after(bevy::app::AnimationSystems),
        );
        app.add_systems(
            PostUpdate,
            (
                (
                    character::build_characters,
                    (
                        limb::prepare_limbs,
                        body::prepare_bodies,
                        tracked::prepare_tracked,
                    ),
                )
                    .chain()
                    .in_set(IkarusSystems::Build),
                character::read_characters.in_set(IkarusSystems::Read),
                (
                    tracked::solve_tracked,
                    body::solve_bodies,
                    limb::solve_limbs,
                )
                    .chain()
                    .in_set(IkarusSystems::Solve),
                character::write_characters.in_set(IkarusSystems::Write),
            ),
        );
    }
}
