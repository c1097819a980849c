//! Full-body IK for characters (`{"kind": "body"}`): one solve for the pelvis, the spine, the
//! head and the four limbs of any skeleton with a humanoid map, with a pull per effector
//! (how far the body follows it), bend goals for elbows and knees, and a blend of the IK
//! over the animated input pose.
//!
//! # Method, and why
//! A character's whole-body problem has two very different parts: a few body degrees of
//! freedom (where the pelvis is, how it turns, how the spine bends) that every effector
//! pulls on, and four limbs that each have an exact closed form once their shoulder or hip is
//! placed. The literature's full-body solvers split the same way — Final IK's FBBIK solves a
//! body of a few "mid-body" points then the limbs by their own solvers, Unreal's PBIK moves a
//! root and chains by position-based dynamics — and so does this one:
//!
//! 1. **Goals blended** over the animated input: each effector's goal moves from where the
//!    input pose has the bone towards the goal by its blend weight ([`BodyConfig::blend`]).
//! 2. **The body** by a small Levenberg–Marquardt on up to 18 unknowns — the pelvis's
//!    translation and rotation and a bend for each of up to four groups of spine joints,
//!    shared by the joints of a group (first tried: one bend shared by the whole spine, which
//!    left held-out mocap frames 1.0 cm MPJPE off against 0.5 cm now;
//!    [`BodyConfig::spine_stiffness`] and [`BodyConfig::pelvis_stiffness`] scale how much of a
//!    move the spine and the pelvis take) — against: each hand and foot goal no farther from
//!    its shoulder or hip than the limb's reach (a one-sided residual weighted by the
//!    effector's pull: a pinned foot holds the pelvis back, a hand past reach draws it), the
//!    hips, chest and head goals themselves, and a placed head's rotation goal by how far it
//!    lies past the head's own limit (the spine and neck then take that part of the turn; the
//!    head stage turns a placed head by itself). The damped step is taken in its row form,
//!    `−Jᵀ(JJᵀ + μI)⁻¹r`, over the residuals that are not zero (9 for six 6-D effectors, at
//!    most 19), by a fixed-size Cholesky; the stage stops within a third of the task's
//!    position tolerance (one to three iterations on the `body` bench's frames). The
//!    damping keeps the body where the input had it unless an effector needs it to move. A
//!    position-based pass (FABRIK over the whole body) was the alternative: it cannot weigh a
//!    pinned foot against a pulling hand other than by order.
//! 3. **The limbs exactly**: each hand and foot with a goal by the two-bone closed form
//!    (the 7-DOF limb without its swivel search; the elbow or knee on the side of its bend
//!    goal, else of its current bend, so consecutive frames never flip; a limb too straight
//!    to show a bend bends about its hinge, else its preferred angle
//!    ([`BodyConfig::preferred_angles`]), else the humanoid convention), the hand or foot then
//!    turned to its goal rotation, every joint put back onto its limit.
//! 4. **The head**: a head rotation goal turned half by the neck and the rest by the head
//!    (by the head alone when the head also has a position goal, which the neck would move).
//!
//! Bone lengths are the posed input's (the model frames of the input pose), not only the rest
//! pose's. No state is kept between frames beyond the pose the caller passes back.
//!
//! Effectors on the hips, chest (or spine / upper chest), head, hands and feet are accepted;
//! any other joint is refused with a message naming it.

mod descent;
mod limb;
mod rig;
mod stage;

use std::collections::BTreeMap;

use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{LocalPose, Skeleton};
use serde::{Deserialize, Serialize};

use crate::{IkTask, SolveReport};

pub use rig::{BodyRig, BodyRigError};
pub use stage::BodyScratch;

/// How the pelvis may move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootMode {
    /// The pelvis moves and turns as the effectors pull it (Unreal's "free"). Default.
    #[default]
    Free,
    /// The pelvis stays where the input has it; only the spine bends (Unreal's "pinned").
    Pinned,
}

/// Settings of the full-body solver: `{"kind": "body", "pull": {"leftHand": 1},
/// "blend": {"rightFoot": 0.5}, "bend_goals": {"leftLowerLeg": [0.1, 0.5, 1]}}`. Bones are
/// named by their VRM humanoid names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BodyConfig {
    /// How far the body follows each effector, 0..1 (VRM bone name → pull; default 1 for
    /// every effector): 0 leaves the body where it is and lets the limb do what it can, 1
    /// moves the pelvis and bends the spine until the goal is in the limb's reach, weighed
    /// against the other effectors' pulls.
    pub pull: BTreeMap<String, f64>,
    /// How much of each effector's goal is taken over the animated input pose, 0..1 (VRM
    /// bone name → weight; default 1): 0 keeps the bone where the input has it.
    pub blend: BTreeMap<String, f64>,
    /// Bend goals: a model-space point each elbow or knee turns towards (VRM name of the
    /// lower arm or leg → point). Without one a limb keeps the side of its current bend.
    pub bend_goals: BTreeMap<String, [f64; 3]>,
    /// Preferred angles (Unreal's): the way a straight arm or leg bends (VRM name of the
    /// lower arm or leg → the elbow's or knee's rotation from its rest, intrinsic X, Y, Z
    /// Euler angles in radians, in the joint's rest frame; only its axis is used). A limb too
    /// straight to show a bend of its own bends about that axis; one already bent keeps its
    /// side, and an elbow or knee with a hinge limit bends about the hinge. Without one a
    /// straight limb bends by the humanoid convention (knees forward, elbows back).
    pub preferred_angles: BTreeMap<String, [f64; 3]>,
    /// Whether the pelvis moves. Default [`RootMode::Free`].
    pub root: RootMode,
    /// Resistance of the pelvis to moving and turning, relative to the spine. Default 1;
    /// larger moves the pelvis less and bends the spine more.
    pub pelvis_stiffness: f64,
    /// Resistance of the spine to bending. Default 1; larger bends it less and moves the
    /// pelvis more.
    pub spine_stiffness: f64,
    /// Iterations of the body stage at most. Default 20.
    pub iterations: u32,
    /// Whether a foot of full pull holds against the body's move. The body stage does not
    /// see the legs' limits, so a hand far past its reach can turn the pelvis further than
    /// a hip's limit lets a pinned foot follow. True: the move is then scaled back (by
    /// bisection) until every such foot is on its goal, and the hand falls short instead —
    /// what a posing tool wants. Default false: the body stays where the descent placed it,
    /// so that consecutive frames (a tracker, a grounded clip) never jump between a full and
    /// a scaled-back move.
    pub hold_pinned_feet: bool,
}

impl Default for BodyConfig {
    fn default() -> Self {
        Self {
            pull: BTreeMap::new(),
            blend: BTreeMap::new(),
            bend_goals: BTreeMap::new(),
            preferred_angles: BTreeMap::new(),
            root: RootMode::Free,
            pelvis_stiffness: 1.0,
            spine_stiffness: 1.0,
            iterations: 20,
            hold_pinned_feet: false,
        }
    }
}

impl BodyConfig {
    /// The pull of the effector on `bone` (default 1), clamped to 0..1.
    pub(crate) fn pull_of(&self, bone: HumanoidBone) -> f64 {
        weight_in(&self.pull, bone)
    }

    /// The blend weight of the effector on `bone` (default 1), clamped to 0..1.
    pub(crate) fn blend_of(&self, bone: HumanoidBone) -> f64 {
        weight_in(&self.blend, bone)
    }
}

/// A 0..1 weight of `bone` in `map` (1 when absent; NaN counts as 0).
fn weight_in(map: &BTreeMap<String, f64>, bone: HumanoidBone) -> f64 {
    let w = map.get(bone.vrm_name()).copied().unwrap_or(1.0);
    if w.is_nan() { 0.0 } else { w.clamp(0.0, 1.0) }
}

/// Runs the full-body solver on `pose` (the animated input on entry, the solved pose on exit):
/// the skeleton's humanoid map recognised from its joint names, then
/// [`BodyRig::solve`].
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &BodyConfig,
    pose: &mut LocalPose,
) -> SolveReport {
    match BodyRig::new(skeleton, config) {
        Ok(rig) => rig.solve(skeleton, task, config, pose),
        Err(error) => SolveReport::invalid(error),
    }
}

#[cfg(test)]
mod tests;
