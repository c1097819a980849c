//! Retargeting (issue 18): a captured, animated or MMD motion onto any humanoid, with feet
//! that stay planted and never go through the floor.
//!
//! - [`align`]: rest-pose alignment through the two humanoid maps, root mapping.
//! - [`contacts`]: contacts detected in the source (height and speed, hysteresis).
//! - [`repair`]: the two-bone leg IK that holds contacts, lowers the hips, keeps the ground.
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
//! 4. per frame the leg goals ([`repair::LimbGoal::for_foot`]), the hips lowered by the
//!    largest drop any leg needs ([`repair::hip_drop`]), spread over the blend window before
//!    and after so it never pops, and the legs solved ([`repair::solve_limb`]), again with the
//!    goal moved by what FK still finds off while joint limits hold the leg back (best of up to
//!    12 tries); hand contacts the same way on the arms;
//! 5. heels eased: where joint limits lift a held heel off its anchor within a frame or two
//!    (an ankle that cannot keep the foot flat for any knee swivel), its anchor moves ahead of
//!    and after those frames by at most `HEEL_EASE_SPEED` a second ([`repair::ease_move`]),
//!    along the sphere of the foot's length about the held ball, and step 4 runs again; each
//!    frame keeps the eased solve unless it leaves a heel or ball lower under the floor. The
//!    heel then rises over several frames instead of jumping across the floor in one.
//!
//! [`plant_feet`] runs steps 3–5 alone on a motion's own skeleton (the foot-contact cleanup
//! of motion capture): contacts from its own feet, the floor from its own ground level.
//!
//! Space conventions: model space of each skeleton, metres on the target; "up" and the floor
//! are the target's body frame ([`align::body_from_model`]); the floor is at height 0 in it, or
//! at the lowest rest joint when that is lower (a skeleton whose root is at the hips).

pub mod align;
pub mod contacts;
pub mod metrics;
pub mod repair;

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::rig::Rig;
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, Skeleton, fk};

pub use align::{AlignError, AlignMode, Alignment, RootMapping};
pub use contacts::{Channel, Contact, ContactConfig};
pub use metrics::{Metrics, measure};
use repair::{Limb, LimbGoal};

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
}

impl Default for RetargetConfig {
    fn default() -> Self {
        Self {
            mode: AlignMode::RestAligned,
            contacts: Some(ContactConfig::default()),
            ground: true,
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
    /// The motion's frame time is not a positive finite number of seconds. Resample it.
    #[error("frame time {0} s: expected a positive finite number")]
    FrameTime(f64),
}

/// How many of a leg's attempts in a frame may search the knee's swivel for an ankle its limit
/// holds ([`repair::fit_end_by_swivel`]; about 0.3 ms each when no swivel fits).
const SWIVEL_ATTEMPTS: usize = 3;

/// How fast (metres per second across the floor) a held heel may move from frame to frame
/// once its limits made it leave its anchor ([`repair::ease_move`]): 0.15 m/s, 5 mm a frame
/// at 30 fps.
const HEEL_EASE_SPEED: f64 = 0.15;

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

const LEGS: [[HumanoidBone; 3]; 2] = [
    [
        HumanoidBone::LeftUpperLeg,
        HumanoidBone::LeftLowerLeg,
        HumanoidBone::LeftFoot,
    ],
    [
        HumanoidBone::RightUpperLeg,
        HumanoidBone::RightLowerLeg,
        HumanoidBone::RightFoot,
    ],
];
const ARMS: [[HumanoidBone; 3]; 2] = [
    [
        HumanoidBone::LeftUpperArm,
        HumanoidBone::LeftLowerArm,
        HumanoidBone::LeftHand,
    ],
    [
        HumanoidBone::RightUpperArm,
        HumanoidBone::RightLowerArm,
        HumanoidBone::RightHand,
    ],
];
const TOES: [HumanoidBone; 2] = [HumanoidBone::LeftToes, HumanoidBone::RightToes];

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
    check(source, motion)?;
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
    check(character, motion)?;
    run(character, motion, character, config, None)
}

fn check(source: Character<'_>, motion: &Motion) -> Result<(), RetargetError> {
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
    Ok(())
}

/// The clip's passes; without an alignment the source is the target and its frames are
/// kept (see [`plant_feet`]).
#[allow(clippy::too_many_lines)] // the clip's passes in order
fn run(
    source: Character<'_>,
    motion: &Motion,
    target: Character<'_>,
    config: &RetargetConfig,
    alignment: Option<&Alignment>,
) -> Result<Retargeted, RetargetError> {
    let source_legs = [
        limb_joints(source.map, "source", LEGS[0])?,
        limb_joints(source.map, "source", LEGS[1])?,
    ];
    let target_legs = [
        limb_joints(target.map, "target", LEGS[0])?,
        limb_joints(target.map, "target", LEGS[1])?,
    ];
    let (_, source_rest) = align::reference(source.skeleton, source.map, Some(motion));
    let (_, target_rest) = align::reference(target.skeleton, target.map, None);
    let (source_body, target_body) = if let Some(a) = alignment {
        (a.source_body(), a.target_body())
    } else {
        let body = align::body_from_model(target.map, &target_rest)
            .ok_or(AlignError::NoBodyFrame { side: "target" })?;
        (body, body)
    };
    let up = target_body.conjugate() * DVec3::Y;
    let height = |p: DVec3| (target_body * p).y;
    let rest_floor = target_rest.positions().map(height).fold(0.0_f64, f64::min);
    let clearance = |j: JointId| height(target_rest.position(j)) - rest_floor;

    // Pass 1: source FK.
    let frames = motion.len();
    let mut source_model = ModelPose::new(source.skeleton);
    let mut source_frames: Vec<ModelPose> = Vec::with_capacity(frames);
    for pose in motion.frames() {
        fk::forward_kinematics(source.skeleton, pose, &mut source_model);
        source_frames.push(source_model.clone());
    }
    let scale = {
        let s = leg_length(&source_rest, &source_legs);
        let t = leg_length(&target_rest, &target_legs);
        if s > 1e-9 && t.is_finite() {
            t / s
        } else {
            1.0
        }
    };
    let lowest_ankle: Vec<f64> = source_frames
        .iter()
        .map(|m| {
            (source_body * m.position(source_legs[0][2]))
                .y
                .min((source_body * m.position(source_legs[1][2])).y)
        })
        .collect();
    let target_ankle = 0.5 * (clearance(target_legs[0][2]) + clearance(target_legs[1][2]));
    // The ground the target stands on: its rest's floor, or the clip's own.
    let (floor, root) = if alignment.is_some() {
        let root = RootMapping {
            scale,
            source_floor: contacts::low_level(&lowest_ankle) - target_ankle / scale,
            target_floor: rest_floor,
            source_body,
            target_body,
        };
        (rest_floor, root)
    } else {
        let floor = contacts::low_level(&lowest_ankle) - target_ankle;
        let root = RootMapping {
            scale: 1.0,
            source_floor: floor,
            target_floor: floor,
            source_body,
            target_body,
        };
        (floor, root)
    };

    // Pass 2: rotations copied, root placed (or the frames kept).
    let mut target_model = ModelPose::new(target.skeleton);
    let mut poses: Vec<LocalPose> = Vec::with_capacity(frames);
    let mut models: Vec<ModelPose> = Vec::with_capacity(frames);
    let mut pose = target.skeleton.rest_pose();
    for (m, frame) in source_frames.iter().zip(motion.frames()) {
        if let Some(alignment) = alignment {
            alignment.pose(target.skeleton, m, &root, &mut pose, &mut target_model);
            poses.push(pose.clone());
            models.push(target_model.clone());
        } else {
            poses.push(frame.clone());
            models.push(m.clone());
        }
    }

    // Channels: (channel, source joint, target joint).
    let mut channels: Vec<(Channel, JointId, JointId)> = Vec::new();
    for side in 0..2 {
        let (heel, ball) = if side == 0 {
            (Channel::LeftHeel, Channel::LeftBall)
        } else {
            (Channel::RightHeel, Channel::RightBall)
        };
        channels.push((heel, source_legs[side][2], target_legs[side][2]));
        if let (Some(s), Some(t)) = (source.map.joint(TOES[side]), target.map.joint(TOES[side])) {
            channels.push((ball, s, t));
        }
    }
    let target_arms = [
        limb_joints(target.map, "target", ARMS[0]).ok(),
        limb_joints(target.map, "target", ARMS[1]).ok(),
    ];
    let wants_hands = config.contacts.is_some_and(|c| c.hands);
    if wants_hands {
        for (side, channel) in [(0, Channel::LeftHand), (1, Channel::RightHand)] {
            if let (Some(s), Some(t)) = (source.map.joint(ARMS[side][2]), target_arms[side]) {
                channels.push((channel, s, t[2]));
            }
        }
    }

    // Pass 3: contacts on the mapped source points, anchors from the copied target.
    let mut found: Vec<Contact> = Vec::new();
    if let Some(cfg) = &config.contacts {
        let tracks: Vec<Vec<DVec3>> = channels
            .iter()
            .map(|&(_, s, _)| {
                source_frames
                    .iter()
                    .map(|m| root.map_point(m.position(s)))
                    .collect()
            })
            .collect();
        for (k, &(channel, _, joint)) in channels.iter().enumerate() {
            let track = &tracks[k];
            let speeds = contacts::speeds(track, motion.frame_time());
            let intervals = if channel.is_hand() {
                contacts::detect_hand(&speeds, motion.frame_time(), cfg)
            } else {
                // Ground level over both sides' same point.
                let pooled: Vec<f64> = channels
                    .iter()
                    .zip(&tracks)
                    .filter(|((c, _, _), _)| same_kind(*c, channel))
                    .flat_map(|(_, t)| t.iter().map(|&p| height(p)))
                    .collect();
                let ground = contacts::low_level(&pooled);
                let heights: Vec<f64> = track.iter().map(|&p| height(p) - ground).collect();
                contacts::detect_foot(&heights, &speeds, motion.frame_time(), cfg)
            };
            for (start, end) in intervals {
                let sum: DVec3 = models[start..=end].iter().map(|m| m.position(joint)).sum();
                #[allow(clippy::cast_precision_loss)] // frame counts
                let mut anchor = sum / (end + 1 - start) as f64;
                if !channel.is_hand() {
                    let lift = floor + clearance(joint) - height(anchor);
                    if lift > 0.0 {
                        anchor += up * lift;
                    }
                }
                found.push(Contact {
                    channel,
                    start,
                    end,
                    anchor,
                });
            }
        }
    }
    // A ball anchor a foot length from the heel anchor it overlaps most, so a foot planted
    // at both ends is held exactly.
    for k in 0..found.len() {
        let c = found[k];
        let (side, is_ball) = match c.channel {
            Channel::LeftBall => (0, true),
            Channel::RightBall => (1, true),
            _ => (0, false),
        };
        let (Some(toes), true) = (target.map.joint(TOES[side]), is_ball) else {
            continue;
        };
        let heel_channel = if side == 0 {
            Channel::LeftHeel
        } else {
            Channel::RightHeel
        };
        let overlap = |h: &Contact| (c.end.min(h.end) + 1).saturating_sub(c.start.max(h.start));
        let heel = found
            .iter()
            .filter(|h| h.channel == heel_channel && overlap(h) > 0)
            .max_by_key(|h| overlap(h));
        if let Some(heel) = heel {
            let foot =
                (target_rest.position(toes) - target_rest.position(target_legs[side][2])).length();
            if let Some(direction) = (c.anchor - heel.anchor).try_normalize() {
                found[k].anchor = heel.anchor + direction * foot;
            }
        }
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small, positive
    let blend = config.contacts.map_or(0, |c| {
        (c.blend_seconds / motion.frame_time()).round().max(1.0) as usize
    });
    let weights: Vec<Vec<Option<(f64, DVec3)>>> = Channel::ALL
        .iter()
        .map(|&c| contacts::weights(&found, c, frames, blend))
        .collect();

    // Limbs.
    let limb = |[a, b, c]: [JointId; 3], toes: Option<JointId>, bend: DVec3, front: DVec3| {
        let reach = (target_rest.position(b) - target_rest.position(a)).length()
            + (target_rest.position(c) - target_rest.position(b)).length();
        Limb {
            start: a,
            mid: b,
            end: c,
            toes,
            reach,
            end_clearance: clearance(c),
            toes_clearance: toes.map_or(0.0, clearance),
            toe_tip: toes.map(|t| {
                let tip = target
                    .skeleton
                    .children(t)
                    .next()
                    .map(|child| target_rest.position(child))
                    .filter(|p| (*p - target_rest.position(t)).length() > 1e-6)
                    .unwrap_or_else(|| {
                        let foot = target_rest.position(t) - target_rest.position(c);
                        let forward = (foot - up * foot.dot(up)).normalize_or_zero();
                        target_rest.position(t) + forward * 0.5 * foot.length()
                    });
                let local = target_rest.rotation(t).conjugate() * (tip - target_rest.position(t));
                (local, (height(tip) - rest_floor).max(0.0))
            }),
            toe_axis: toes.map_or(DVec3::X, |t| {
                repair::hinge_axis(target.skeleton.limit(t)).unwrap_or_else(|| {
                    target_rest.rotation(t).conjugate() * (target_body.conjugate() * bend)
                })
            }),
            bend_in_start: target_rest.rotation(a).conjugate() * (target_body.conjugate() * bend),
            front_in_start: target_rest.rotation(a).conjugate() * (target_body.conjugate() * front),
        }
    };
    let legs = [
        limb(
            target_legs[0],
            target.map.joint(TOES[0]),
            DVec3::X,
            DVec3::Z,
        ),
        limb(
            target_legs[1],
            target.map.joint(TOES[1]),
            DVec3::X,
            DVec3::Z,
        ),
    ];
    // Elbows bend about the body's down (left arm) / up (right arm) at a T-pose.
    let arms = [
        target_arms[0].map(|a| limb(a, None, -DVec3::Y, DVec3::NEG_Z)),
        target_arms[1].map(|a| limb(a, None, DVec3::Y, DVec3::NEG_Z)),
    ];

    // Heels the limbs' limits lift off their anchors move at most `HEEL_EASE_SPEED`: passes 4
    // and 5 again with those heels' anchors moved ahead of (and after) the frames that need
    // it, along the sphere of the foot's length about the ball's anchor.
    let repair_heels = config.contacts.is_some();
    let foot_lengths = legs.map(|l| {
        l.toes
            .map(|t| (target_rest.position(t) - target_rest.position(l.end)).length())
    });
    // Passes 4 and 5 for a table of contact weights (run again with heels eased, below).
    // `again`: the frames to solve (the others are copied from the earlier pass given).
    let solve_clip = |weights: &[Vec<Option<(f64, DVec3)>>],
                      again: Option<(&[bool], &Solved)>|
     -> Result<Solved, RetargetError> {
        let weight = |c: Channel, f: usize| {
            let i = Channel::ALL.iter().position(|&x| x == c).unwrap_or(0);
            weights[i][f]
        };
        // Pass 4: goals and hip drops. First the toe bends the tips need, planned over the clip
        // (bends that change smoothly), then the goals with those bends.
        let repair = config.contacts.is_some() || config.ground;
        let mut goals: Vec<[LimbGoal; 2]> = Vec::with_capacity(frames);
        let mut drops: Vec<f64> = Vec::with_capacity(frames);
        let mut leg_weights = Vec::with_capacity(frames);
        let foot_goal = |f: usize, side: usize, model: &ModelPose, plan: Option<f64>| {
            let (heel, ball) = if side == 0 {
                (Channel::LeftHeel, Channel::LeftBall)
            } else {
                (Channel::RightHeel, Channel::RightBall)
            };
            LimbGoal::for_foot(
                &legs[side],
                model,
                (weight(heel, f), weight(ball, f)),
                (up, floor),
                config.ground,
                (
                    plan,
                    repair::toe_range(target.skeleton, &legs[side], &poses[f]),
                ),
            )
        };
        let toe_plans = [0, 1].map(|side| {
            let needs: Vec<f64> = models
                .iter()
                .enumerate()
                .map(|(f, model)| foot_goal(f, side, model, None).toe_bend)
                .collect();
            let ranges: Vec<(f64, f64)> = poses
                .iter()
                .map(|pose| repair::toe_range(target.skeleton, &legs[side], pose))
                .collect();
            let step = repair::MAX_TOE_BEND_SPEED * motion.frame_time();
            repair::plan_toe_bends(&needs, &ranges, step)
        });
        for (f, model) in models.iter().enumerate() {
            let side_goal = |side: usize| foot_goal(f, side, model, Some(toe_plans[side][f]));
            let pair = [side_goal(0), side_goal(1)];
            let drop = (0..2)
                .map(|s| {
                    repair::hip_drop(
                        model.position(legs[s].start),
                        pair[s].end,
                        legs[s].reach * 0.999,
                        up,
                    )
                })
                .fold(0.0, f64::max);
            let side_weight = |heel: Channel, ball: Channel| {
                weight(heel, f)
                    .map_or(0.0, |w| w.0)
                    .max(weight(ball, f).map_or(0.0, |w| w.0))
            };
            leg_weights.push([
                side_weight(Channel::LeftHeel, Channel::LeftBall),
                side_weight(Channel::RightHeel, Channel::RightBall),
            ]);
            goals.push(pair);
            drops.push(if repair { drop } else { 0.0 });
        }
        let drops = spread(&drops, blend.max(3));
        let max_hip_drop = drops.iter().copied().fold(0.0, f64::max);

        // Pass 5: the IK.
        let hips = target.map.joint(HumanoidBone::Hips);
        let mut out = Motion::for_skeleton(target.skeleton, motion.frame_time())
            .map_err(|_| RetargetError::FrameTime(motion.frame_time()))?;
        let mut missed_frames: Vec<bool> = Vec::with_capacity(frames);
        let mut leg_states = legs.map(|l| repair::LimbState::new(&l));
        // Legs whose knee is a hinge: the 7-DOF limb for ankles their limits hold.
        let leg_chains = legs.map(|l| {
            ikarus_solve::limb7::Limb7Chain::new(target.skeleton, l.start, l.mid, l.end).ok()
        });
        let mut arm_states = arms.map(|a| {
            a.map_or(
                repair::LimbState {
                    pole_in_start: DVec3::Z,
                    axis_in_start: DVec3::X,
                },
                |a| repair::LimbState::new(&a),
            )
        });
        let mut ankles: Vec<[DVec3; 2]> = Vec::with_capacity(frames);
        let mut depths: Vec<f64> = Vec::with_capacity(frames);
        let mut states_before = Vec::with_capacity(frames);
        for (f, (pose, model)) in poses.iter().zip(&models).enumerate() {
            if let Some((redo, earlier)) = again {
                let same_toes = (0..2).all(|s| toe_plans[s][f] == earlier.toe_plans[s][f]);
                if !redo[f] && same_toes {
                    // Nothing moved here: the earlier pass's frame as it was.
                    states_before.push(earlier.states_before[f]);
                    missed_frames.push(earlier.missed[f]);
                    ankles.push(earlier.ankles[f]);
                    depths.push(earlier.depths[f]);
                    let _ = out.push(earlier.motion.frames()[f].clone());
                    continue;
                }
                (leg_states, arm_states) = earlier.states_before[f];
            }
            states_before.push((leg_states, arm_states));
            let (mut pose, mut model) = (pose.clone(), model.clone());
            if repair {
                if let Some(h) = hips
                    && drops[f] > 0.0
                {
                    let parent = target
                        .skeleton
                        .parent(h)
                        .map_or(glam::DAffine3::IDENTITY, |p| model[p]);
                    pose[h].translation -= parent.inverse().transform_vector3(up * drops[f]);
                    fk::update_subtree(target.skeleton, &pose, &mut model, h);
                }
                let mut missed = false;
                for side in 0..2 {
                    let mut goal = goals[f][side];
                    let leg = &legs[side];
                    // A leg with nothing to do (no contact weight, no lift, hips in place, no toe
                    // tip below the floor) keeps its copied pose: the two-bone solve would still turn its plane to the
                    // carried pole.
                    if drops[f] == 0.0
                        && goal.ball.is_none()
                        && goal.end.distance(model.position(leg.end)) <= 1e-12
                        && goal.toe_bend == 0.0
                        && !(config.ground && repair::depth(leg, &model, up, floor) > 0.0)
                    {
                        continue;
                    }
                    let mut reached = false;
                    let joints = [leg.start, leg.mid, leg.end];
                    // The toes as copied: each attempt bends them from there.
                    let copied_toes = leg.toes.map(|t| pose[t].rotation);
                    let mut best: Option<(f64, [DQuat; 3], Option<DQuat>, bool)> = None;
                    // Limits may have turned the foot or held the leg: move the ankle goal by what
                    // FK still finds off (the ball's miss, the depth below the floor) and solve
                    // again, keeping the best attempt.
                    for attempt in 0..12 {
                        reached = repair::solve_limb(
                            target.skeleton,
                            leg,
                            &goal,
                            &mut leg_states[side],
                            &mut pose,
                            &mut model,
                        );
                        // The ankle's limit held the foot: turn the knee to a swivel where it fits
                        // (on the first attempt, and on the next ones while that helps: a search
                        // that finds no better swivel costs about 0.3 ms).
                        if let (true, Some(chain)) = (attempt < SWIVEL_ATTEMPTS, &leg_chains[side])
                            && let Some(swivel_reached) = repair::fit_end_by_swivel(
                                target.skeleton,
                                (leg, chain),
                                &goal,
                                &mut pose,
                                &mut model,
                            )
                        {
                            reached = swivel_reached;
                        }
                        let mut lift = 0.0;
                        if config.ground {
                            if let (Some(t), Some(copied)) = (leg.toes, copied_toes) {
                                pose[t].rotation = copied;
                                fk::update_subtree(target.skeleton, &pose, &mut model, t);
                            }
                            repair::bend_toes(
                                target.skeleton,
                                leg,
                                goal.toe_bend,
                                &mut pose,
                                &mut model,
                            );
                            lift = repair::depth(leg, &model, up, floor);
                        }
                        // What the toes' limit leaves below the floor lifts the foot.
                        let mut shift = up * lift;
                        if let (Some(ball), Some(toes)) = (goal.ball, leg.toes) {
                            shift += ball - model.position(toes);
                        }
                        let error = shift.length();
                        if best.is_none_or(|b| error < b.0) {
                            let toes = leg.toes.map(|t| pose[t].rotation);
                            best = Some((error, joints.map(|j| pose[j].rotation), toes, reached));
                        }
                        if error <= 1e-6 {
                            break;
                        }
                        goal.end += shift;
                    }
                    if let Some((_, rotations, toes, was_reached)) = best {
                        for (j, r) in joints.iter().zip(rotations) {
                            pose[*j].rotation = r;
                        }
                        if let (Some(t), Some(r)) = (leg.toes, toes) {
                            pose[t].rotation = r;
                        }
                        reached = was_reached;
                        fk::update_subtree(target.skeleton, &pose, &mut model, leg.start);
                    }
                    missed |= !reached;
                }
                for (side, channel) in [(0, Channel::LeftHand), (1, Channel::RightHand)] {
                    if let (Some(arm), Some((w, anchor))) = (&arms[side], weight(channel, f)) {
                        let goal = LimbGoal {
                            end: model.position(arm.end).lerp(anchor, w),
                            end_rotation: model.rotation(arm.end),
                            ball: None,
                            toe_bend: 0.0,
                        };
                        missed |= !repair::solve_limb(
                            target.skeleton,
                            arm,
                            &goal,
                            &mut arm_states[side],
                            &mut pose,
                            &mut model,
                        );
                    }
                }
                missed_frames.push(missed);
            } else {
                missed_frames.push(false);
            }
            if !pose.is_finite() {
                pose = target.skeleton.rest_pose();
            }
            ankles.push(legs.map(|l| model.position(l.end)));
            // Heels and balls only (toe tips the toes' limits may leave low are not compared).
            depths.push(
                legs.iter()
                    .flat_map(|l| {
                        let ball = l.toes.map_or(0.0, |t| {
                            floor + l.toes_clearance - model.position(t).dot(up)
                        });
                        [
                            floor + l.end_clearance - model.position(l.end).dot(up),
                            ball,
                        ]
                    })
                    .fold(0.0, f64::max),
            );
            // The motion was sized for this skeleton.
            let _ = out.push(pose);
        }
        Ok(Solved {
            motion: out,
            leg_weights,
            missed: missed_frames,
            max_hip_drop,
            ankles,
            depths,
            toe_plans,
            states_before,
        })
    };
    let mut solved = solve_clip(&weights, None)?;
    if repair_heels {
        let step = HEEL_EASE_SPEED * motion.frame_time();
        let heels = [Channel::LeftHeel, Channel::RightHeel];
        let mut eased = weights.clone();
        let mut changed = false;
        for contact in found.iter().filter(|c| heels.contains(&c.channel)) {
            let side = usize::from(contact.channel == Channel::RightHeel);
            let ball = if side == 0 {
                Channel::LeftBall
            } else {
                Channel::RightBall
            };
            let [i, b] = [contact.channel, ball]
                .map(|c| Channel::ALL.iter().position(|&x| x == c).unwrap_or(0));
            let frames_in = contact.start..=contact.end;
            let moves: Vec<DVec3> = frames_in
                .clone()
                .map(|f| (solved.ankles[f][side] - contact.anchor).reject_from(up))
                .collect();
            for (k, f) in frames_in.enumerate() {
                let Some((w, _)) = eased[i][f] else { continue };
                let Some(target_move) = repair::ease_move(&moves, k, step) else {
                    continue;
                };
                // On the sphere of the foot's length about the ball's anchor when the
                // ball is held: the heel rises as it comes forward instead of sinking.
                let mut anchor = contact.anchor + target_move;
                if let (Some((_, ball_at)), Some(length)) = (eased[b][f], foot_lengths[side]) {
                    let across = (anchor - ball_at).reject_from(up).length();
                    if across < length {
                        let height = ball_at.dot(up) + (length * length - across * across).sqrt();
                        anchor += up * (height - anchor.dot(up)).max(0.0);
                    }
                }
                eased[i][f] = Some((w, anchor));
                changed = true;
            }
        }
        if changed {
            let redo: Vec<bool> = (0..frames)
                .map(|f| (0..eased.len()).any(|i| eased[i][f] != weights[i][f]))
                .collect();
            // Per frame, the eased solve unless it leaves a heel or ball below the floor where
            // the last did not (its leg could not hold the moved heel and the ball together).
            let again = solve_clip(&eased, Some((&redo, &solved)))?;
            let mut merged = Motion::for_skeleton(target.skeleton, motion.frame_time())
                .map_err(|_| RetargetError::FrameTime(motion.frame_time()))?;
            for f in 0..frames {
                let take = again.depths[f] <= solved.depths[f].max(0.0) + 1e-6;
                let from = if take { &again } else { &solved };
                // The motions were sized for this skeleton.
                let _ = merged.push(from.motion.frames()[f].clone());
                if take {
                    solved.missed[f] = again.missed[f];
                    solved.ankles[f] = again.ankles[f];
                    solved.depths[f] = again.depths[f];
                }
            }
            solved.motion = merged;
            solved.max_hip_drop = solved.max_hip_drop.max(again.max_hip_drop);
        }
    }
    let Solved {
        motion: out,
        leg_weights,
        missed,
        max_hip_drop,
        ..
    } = solved;
    let unreached = missed.iter().filter(|&&m| m).count();
    let feet = Feet {
        joints: channels.iter().map(|&(c, _, t)| (c, t)).collect(),
        clearance: channels
            .iter()
            .map(|&(_, _, t)| (t, clearance(t)))
            .collect(),
        toe_tips: legs
            .iter()
            .filter_map(|l| l.toes.zip(l.toe_tip).map(|(t, (tip, c))| (t, tip, c)))
            .collect(),
        target_body,
        floor,
    };
    Ok(Retargeted {
        motion: out,
        contacts: found,
        root,
        feet,
        leg_weights,
        unreached,
        max_hip_drop,
    })
}

/// What passes 4 and 5 give for one table of contact weights.
struct Solved {
    motion: Motion,
    leg_weights: Vec<[f64; 2]>,
    /// Per frame, whether a limb missed its goal.
    missed: Vec<bool>,
    max_hip_drop: f64,
    /// Each frame's ankles (left, right) after the IK.
    ankles: Vec<[DVec3; 2]>,
    /// Each frame's deepest heel or ball below the floor plus its rest height.
    depths: Vec<f64>,
    /// The toe bends planned, per leg and frame.
    toe_plans: [Vec<f64>; 2],
    /// The limbs' states (legs, arms) each frame started from.
    states_before: Vec<([repair::LimbState; 2], [repair::LimbState; 2])>,
}

/// Heels pool with heels, balls with balls.
fn same_kind(a: Channel, b: Channel) -> bool {
    let kind = |c: Channel| match c {
        Channel::LeftHeel | Channel::RightHeel => 0,
        Channel::LeftBall | Channel::RightBall => 1,
        _ => 2,
    };
    kind(a) == kind(b)
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
