//! The grounded game frame the `body` bench and `tests/grounded.rs` share: the built-in
//! humanoid's crouch (`ikarus_testdata::motions`) on ±4 cm bumps, the hips and feet from the
//! grounder, the head and hands where the animation has them, lowered with the pelvis.

use glam::{DQuat, DVec3};
use ikarus_anim::ground::{FrameGoals, Heightfield};
use ikarus_core::JointId;
use ikarus_solve::Goal;

/// The ±4 cm bumps, `cells` × `cells` samples 10 cm apart from (`origin`, `origin`) in x and z.
///
/// # Panics
/// Never for `cells` ≥ 2 (a valid grid).
#[must_use]
pub fn bumps(cells: u32, origin: f64) -> Heightfield {
    let heights = (0..cells)
        .map(|i| {
            (0..cells)
                .map(|j| 0.04 * (0.9 * f64::from(j)).sin() * (0.7 * f64::from(i)).cos())
                .collect()
        })
        .collect();
    Heightfield::new([origin, origin], 0.1, heights).expect("a valid grid")
}

/// The goal of one of the crouch's six ends (`joint` at `position`, `rotation`, moved by
/// `shift`): the grounder's for the hips and the ankles (`joints`), else where the animation
/// has it, lowered with the pelvis.
#[must_use]
pub fn goal(
    grounded: &FrameGoals,
    (hips, ankles): (JointId, [JointId; 2]),
    (joint, position, rotation): (JointId, DVec3, DQuat),
    shift: DVec3,
) -> Goal {
    if joint == hips {
        grounded.hips
    } else if joint == ankles[0] {
        grounded.feet[0]
    } else if joint == ankles[1] {
        grounded.feet[1]
    } else {
        let moved = position + shift + DVec3::Y * grounded.pelvis_offset;
        Goal::from_position_orientation(moved, rotation)
    }
}
