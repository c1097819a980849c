//! Retargeting: a captured, animated or MMD motion onto any humanoid, with feet
//! that stay planted and never go through the floor.
//!
//! - [`align`]: rest-pose alignment through the two humanoid maps, root mapping.
//! - [`contacts`]: contacts detected in the source (height and speed, hysteresis).
//! - [`repair`]: the two-bone leg IK that holds contacts, lowers the hips, keeps the ground.
//! - [`hold`]: a planted foot followed from the last frame where the closed forms lose it.
//! - [`metrics`]: the evaluation numbers, measured by forward kinematics on any output.
//!
//! [`retarget`] runs one clip:
//! 1. every source frame's FK; the root mapping's scale is the ratio of leg lengths (upper
//!    plus lower leg at rest); the source floor is chosen so that the source's feet at their
//!    ground level (the 5th percentile of the lower ankle's height) land at the target's rest
//!    ankle height;
//! 2. every frame copied with [`Alignment::pose`];
//! 3. contacts detected on the source's points mapped onto the target's scale; each contact's
//!    anchor is the mean of the copied target point over the contact, lifted above the floor;
//! 4. per frame the leg goals ([`repair::LimbGoal::for_foot`]) and the leg repair, whose
//!    stages [`stages`] lists in order with their settings ([`LegRepair`] in
//!    [`RetargetConfig::legs`]): the hips lowered by the largest drop any leg needs, spread
//!    so it never pops; toe bends planned over the clip; each leg solved by the two-bone
//!    closed form, again with its goal moved by what forward kinematics still finds off,
//!    with a knee swivel search for an ankle its limit holds; a planted foot the closed form
//!    loses followed from the last frame ([`hold::hold_foot`]); toe tips lifted. Hand
//!    contacts are held the same way on the arms;
//! 5. heels eased: where joint limits lift a held heel off its anchor within a frame or two,
//!    its anchor moves ahead of and after those frames at a bounded speed
//!    ([`repair::ease_move`]) along the sphere of the foot's length about the held ball, and
//!    step 4 runs again on the frames that changed; each frame keeps the eased solve unless it
//!    leaves a heel or ball lower under the floor. The heel then rises over several frames
//!    instead of jumping across the floor in one.
//!
//! The passes are methods of one private `Clip` (module `passes`), each step one method.
//!
//! [`plant_feet`] runs steps 3–5 alone on a motion's own skeleton (the foot-contact cleanup
//! of motion capture): contacts from its own feet, the floor from its own ground level.
//!
//! Space conventions: model space of each skeleton, metres on the target; "up" and the floor
//! are the target's body frame ([`align::body_from_model`]); the floor is at height 0 in it, or
//! at the lowest rest joint when that is lower (a skeleton whose root is at the hips).

pub mod align;
pub mod contacts;
pub mod hold;
pub mod metrics;
mod passes;
pub mod repair;
pub mod stages;
mod target_rest;

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::rig::Rig;
use ikarus_core::{JointId, ModelPose, Motion, Skeleton, fk};

pub use align::{AlignError, AlignMode, Alignment, RootMapping};
pub use contacts::{Channel, Contact, ContactConfig};
pub use metrics::{Metrics, measure};
pub use stages::{LegRepair, LegStage};

/// A character: a skeleton with its humanoid map.
#[derive(Clone, Copy, Debug)]
pub struct Character<'a> {
    /// The skeleton.
    pub skeleton: &'a Skeleton,
    /// Its humanoid bones.
    pub map: &'a HumanoidMap,
}

/// Options of [`retarget`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetargetConfig {
    /// Rest-pose alignment or plain rotation copying. Default [`AlignMode::RestAligned`].
    pub mode: AlignMode,
    /// Contact detection and IK repair; `None` copies rotations and root only (with the
    /// ground still kept when `ground` is set). Default `Some(ContactConfig::default())`.
    pub contacts: Option<ContactConfig>,
    /// Keep the feet above the floor with the leg IK. Default true.
    pub ground: bool,
    /// The leg repair's stages and their settings (see [`stages`]). Default all on.
    pub legs: LegRepair,
}

impl Default for RetargetConfig {
    fn default() -> Self {
        Self {
            mode: AlignMode::RestAligned,
            contacts: Some(ContactConfig::default()),
            ground: true,
            legs: LegRepair::default(),
        }
    }
}

impl RetargetConfig {
    /// Plain rotation copying with the same root mapping, no contacts, no ground: the
    /// baseline of the evaluation (what a VRM animation player or a bone-name retarget does).
    pub fn plain_copy() -> Self {
        Self {
            mode: AlignMode::PlainCopy,
            contacts: None,
            ground: false,
            legs: LegRepair::default(),
        }
    }
}

/// Why a clip cannot be retargeted.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RetargetError {
    /// The rest poses give no body frame (see [`AlignError`]).
    #[error(transparent)]
    Align(#[from] AlignError),
    /// A character's map lacks a leg bone. Map both upper legs, lower legs and feet.
    #[error("the {side}'s humanoid map lacks `{bone}`: map it (`--map`)")]
    MissingBone {
        /// `source` or `target`.
        side: &'static str,
        /// The bone's VRM name.
        bone: &'static str,
    },
    /// The motion was made for another skeleton.
    #[error("the motion has {found} joints, the source skeleton {expected}")]
    MotionMismatch {
        /// The source skeleton's joint count.
        expected: usize,
        /// The motion's joint count.
        found: usize,
    },
    /// The motion has no frames.
    #[error("the motion has no frames")]
    Empty,
    /// A frame holds a non-finite number, or a rotation that is no rotation (a quaternion
    /// far from unit length, such as zero). One such frame would change the whole clip (its
    /// ground level, rest reference and contacts): fix or drop the frame.
    #[error("frame {frame}, joint `{joint}`: {what}")]
    BadFrame {
        /// The frame's index.
        frame: usize,
        /// The joint's name.
        joint: String,
        /// What is wrong.
        what: &'static str,
    },
    /// The motion's frame time is not a positive finite number of seconds. Resample it.
    #[error("frame time {0} s: expected a positive finite number")]
    FrameTime(f64),
    /// A skeleton's bones all have zero length: its rest pose has every joint at one place,
    /// and carries no shape to measure.
    #[error(
        "the {side} skeleton carries no shape: every joint of its rest pose is at one place (all its bones have zero length)"
    )]
    NoShape {
        /// `source` or `target`.
        side: &'static str,
    },
}

/// The target's contact points and floor, what [`metrics::measure`] reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Feet {
    /// Per channel, the target joint followed (heel = foot, ball = toes, hand).
    pub joints: Vec<(Channel, JointId)>,
    /// Per channel joint, its rest height above the floor (metres).
    pub clearance: Vec<(JointId, f64)>,
    /// Per leg with toes: the toes joint, the toe tip in its frame and the tip's rest height.
    pub toe_tips: Vec<(JointId, DVec3, f64)>,
    /// The target's `body_from_model`.
    pub target_body: DQuat,
    /// The floor's height in the target's body frame.
    pub floor: f64,
}

/// A retargeted clip.
#[derive(Clone, Debug)]
pub struct Retargeted {
    /// The motion on the target skeleton (the source's frame time).
    pub motion: Motion,
    /// The contacts detected in the source, with the target's anchors.
    pub contacts: Vec<Contact>,
    /// The root mapping used.
    pub root: RootMapping,
    /// The target's contact points and floor.
    pub feet: Feet,
    /// Per frame, the largest contact weight of each side's legs (for [`metrics::measure`]
    /// to leave contacts out of the direction error).
    pub leg_weights: Vec<[f64; 2]>,
    /// Frames where a leg goal was out of reach even after lowering the hips.
    pub unreached: usize,
    /// Largest hip drop applied (metres).
    pub max_hip_drop: f64,
}

fn limb_joints(
    map: &HumanoidMap,
    side: &'static str,
    bones: [HumanoidBone; 3],
) -> Result<[JointId; 3], RetargetError> {
    let get = |b: HumanoidBone| {
        map.joint(b).ok_or(RetargetError::MissingBone {
            side,
            bone: b.vrm_name(),
        })
    };
    Ok([get(bones[0])?, get(bones[1])?, get(bones[2])?])
}

/// Upper plus lower leg at rest, averaged over both legs.
fn leg_length(rest: &ModelPose, legs: &[[JointId; 3]; 2]) -> f64 {
    legs.iter()
        .map(|[a, b, c]| {
            (rest.position(*b) - rest.position(*a)).length()
                + (rest.position(*c) - rest.position(*b)).length()
        })
        .sum::<f64>()
        / 2.0
}

/// Retargets `motion` (frames of `source`) onto `target` (see the module docs).
///
/// # Errors
/// [`RetargetError`] when a map lacks the hips, legs or feet, or the motion does not fit.
pub fn retarget(
    source: Character<'_>,
    motion: &Motion,
    target: Character<'_>,
    config: &RetargetConfig,
) -> Result<Retargeted, RetargetError> {
    check_clip(source, motion)?;
    if !target.skeleton.has_extent() {
        return Err(RetargetError::NoShape { side: "target" });
    }
    let alignment = Alignment::new(
        source.skeleton,
        source.map,
        target.skeleton,
        target.map,
        config.mode,
        Some(motion),
    )?;
    run(source, motion, target, config, Some(&alignment))
}

/// Foot-contact cleanup of a motion on its own skeleton (motion capture output, a hand-made
/// clip): contacts are detected on the motion's own feet, and planted feet are held still
/// with the same leg IK, hip drop and ground as [`retarget`] uses, without moving anything
/// else. The floor is the clip's own: the ground level of the lower ankle (5th percentile of
/// its height) less the ankle's rest height. Joints are not otherwise changed: no alignment,
/// no root mapping (`config.mode` is ignored).
///
/// # Errors
/// [`RetargetError`] when the map lacks the hips, legs or feet, or the motion does not fit.
pub fn plant_feet(
    character: Character<'_>,
    motion: &Motion,
    config: &RetargetConfig,
) -> Result<Retargeted, RetargetError> {
    check_clip(character, motion)?;
    run(character, motion, character, config, None)
}

/// Whether `motion` is a clip of `source`'s skeleton (one with a shape) with finite frames
/// and a frame time.
pub(crate) fn check_clip(source: Character<'_>, motion: &Motion) -> Result<(), RetargetError> {
    if !source.skeleton.has_extent() {
        return Err(RetargetError::NoShape { side: "source" });
    }
    if motion.joint_count() != source.skeleton.len() {
        return Err(RetargetError::MotionMismatch {
            expected: source.skeleton.len(),
            found: motion.joint_count(),
        });
    }
    if motion.is_empty() {
        return Err(RetargetError::Empty);
    }
    if !(motion.frame_time().is_finite() && motion.frame_time() > 0.0) {
        return Err(RetargetError::FrameTime(motion.frame_time()));
    }
    for (frame, pose) in motion.frames().iter().enumerate() {
        for joint in source.skeleton.joints() {
            let t = pose[joint];
            let what = if !(t.translation.is_finite() && t.scale.is_finite()) {
                "non-finite translation or scale"
            } else if !t.rotation.is_finite() {
                "non-finite rotation"
            } else if !(0.5..=2.0).contains(&t.rotation.length()) {
                "the rotation is not a rotation (quaternion length far from 1)"
            } else {
                continue;
            };
            return Err(RetargetError::BadFrame {
                frame,
                joint: source.skeleton.name(joint).to_owned(),
                what,
            });
        }
    }
    Ok(())
}

/// One clip's passes in order (see the module docs and [`passes`]); without an alignment the
/// source is the target and its frames are kept (see [`plant_feet`]).
fn run(
    source: Character<'_>,
    motion: &Motion,
    target: Character<'_>,
    config: &RetargetConfig,
    alignment: Option<&Alignment>,
) -> Result<Retargeted, RetargetError> {
    let clip = passes::Clip::new(source, motion, target, config, alignment)?;
    let channels = clip.channels(source);
    let found = clip.contacts(&channels);
    let weights = clip.weights(&found);
    let mut solved = clip.solve(&weights, None)?;
    if let (Some(_), Some(ease)) = (config.contacts, config.legs.heel_ease)
        && let Some(eased) = clip.ease_heels(&found, &weights, &solved, &ease)
    {
        solved = clip.merge(&weights, &eased, solved, &ease)?;
    }
    Ok(clip.finish(&channels, found, solved))
}

/// A drop held over a window: each frame takes the largest `d · w(distance)` of the frames
/// within `window`, with `w` the blend ease, so the hips go down before they need to and come
/// back up after, never in a jump.
fn spread(drops: &[f64], window: usize) -> Vec<f64> {
    let n = drops.len();
    (0..n)
        .map(|f| {
            let from = f.saturating_sub(window);
            let to = (f + window).min(n.saturating_sub(1));
            (from..=to)
                .map(|g| drops[g] * contacts::blend_weight(f.abs_diff(g), window))
                .fold(0.0, f64::max)
        })
        .collect()
}

/// For an MMD target: every IK chain's goal bone moved onto its effector's position in each
/// frame, so that a player evaluating the rig's IK (MMD itself) finds the legs where the
/// retarget put them. Goal bones are translated only (their parents must not be moved by the
/// chains they drive, as in every MMD model).
pub fn follow_ik_goals(skeleton: &Skeleton, rig: &Rig, motion: &mut Motion) {
    let mut model = ModelPose::new(skeleton);
    let mut goals: Vec<(JointId, JointId)> = rig.ik.iter().map(|c| (c.goal, c.effector)).collect();
    goals.sort_by_key(|g| g.0);
    for pose in motion.frames_mut() {
        fk::forward_kinematics(skeleton, pose, &mut model);
        for &(goal, effector) in &goals {
            let wanted = model.position(effector);
            let parent = skeleton
                .parent(goal)
                .map_or(glam::DAffine3::IDENTITY, |p| model[p]);
            let local = parent.inverse().transform_point3(wanted);
            if local.is_finite() {
                pose[goal].translation = local;
                fk::update_subtree(skeleton, pose, &mut model, goal);
            }
        }
    }
}
