//! Rest-pose alignment: per-bone rotation offsets from the two rest poses through the humanoid
//! map, so that each target bone turns the way its source bone turns and points where it
//! points, whatever the two rest poses are (T-pose or A-pose, bone rolls, facing).
//!
//! ## Method
//!
//! Each character gets a *body frame* from its rest pose: up is model +Y, left from the right
//! hip joint to the left one made horizontal, forward `left × up` ([`body_from_model`]). In that frame, a source bone's change from its rest is
//! `D(b) = C_s · S(b) · S_rest(b)⁻¹ · C_s⁻¹` (`S` model rotations, `C_s` the source's
//! `body_from_model`). The target bone's model rotation is
//! `T(b) = C_t⁻¹ · D(b) · A(b) · C_t · T_rest(b)`, where the alignment `A(b)` is the shortest
//! rotation taking the target's rest direction of the bone (towards its next bone mapped on
//! both sides) onto the source's, both in body frames. With `A = I` this is plain rotation
//! copying through the normalised humanoid (what a VRM animation player does); with `A` the
//! target's bones point where the source's point.
//!
//! Rest poses here are *reference* poses ([`reference()`]): the rest itself when it is
//! upright, else the rest straightened into a T-pose ([`straighten`]) with the limbs' twists
//! read from the clip (files such as the Bandai Namco BVH lay every bone along one axis). For
//! the upper and lower legs and arms, `A(b)` also turns about the bone so that the target's
//! knee or elbow hinge (from its limit, or the T-pose's) lies on the source clip's mean bend
//! axis: a source whose rest has palms forward and a target with palms down still bend their
//! elbows the same way (the target's hinge limits then hold without fighting the copy).
//!
//! A mapped bone copies the change of the last joint of its segment (the parent of its next
//! mapped bone), so twist bones between (MMD's 腕捩 and 手捩) count for the bone they twist.
//!
//! Bones only one side has:
//! - a target bone on the torso chain (hips, spine, chest, upper chest, neck, head) that the
//!   source lacks takes a slerp of its neighbours' changes, so extra spine joints share the
//!   bend;
//! - any other target bone the source lacks (shoulders, toes, fingers, eyes) turns rigidly
//!   with its nearest mapped ancestor;
//! - a source bone the target lacks is simply not read: the target's next bone copies its own
//!   source bone's model-space change, which includes the missing one's;
//! - joints the map does not name (twist bones, MMD's helper bones, end joints) keep their
//!   rest local transforms.
//!
//! The root is placed by the pelvis point (the midpoint of the two upper-leg joints), mapped
//! by [`RootMapping`]: body-frame horizontal position scaled by the leg-length ratio, height
//! above the floor scaled by the same ratio, so a source whose "hips" bone is not at the
//! pelvis (MMD's センター) places the target correctly.

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, Skeleton, fk};

/// Which rotations the target gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlignMode {
    /// Rest-pose alignment: target bones point where the source's point (see module docs).
    #[default]
    RestAligned,
    /// Plain rotation copying: each bone's model-space change from its rest is copied, the
    /// rest poses' differences (A-pose vs T-pose) stay. The baseline.
    PlainCopy,
}

/// The torso chain, root first (the first six of [`HumanoidBone::BODY`]): bones the source
/// lacks here interpolate their neighbours.
const TORSO: &[HumanoidBone] = HumanoidBone::BODY.split_at(6).0;

/// The four limbs (upper, lower, end bone) and where a T-pose has each one's bend axis (the
/// body's frame: legs bend about +X, the left arm about −Y, the right arm about +Y).
const LIMB_BEND_AXES: [([HumanoidBone; 3], DVec3); 4] = {
    use HumanoidBone as B;
    [
        ([B::LeftUpperLeg, B::LeftLowerLeg, B::LeftFoot], DVec3::X),
        ([B::RightUpperLeg, B::RightLowerLeg, B::RightFoot], DVec3::X),
        (
            [B::LeftUpperArm, B::LeftLowerArm, B::LeftHand],
            DVec3::NEG_Y,
        ),
        ([B::RightUpperArm, B::RightLowerArm, B::RightHand], DVec3::Y),
    ]
};

/// The humanoid parent of a bone (VRM 1.0's hierarchy), `None` for the hips.
pub fn humanoid_parent(bone: HumanoidBone) -> Option<HumanoidBone> {
    use HumanoidBone as B;
    let all = HumanoidBone::ALL;
    let i = bone.index();
    Some(match bone {
        B::Hips => return None,
        B::Spine | B::LeftUpperLeg | B::RightUpperLeg => B::Hips,
        B::Chest => B::Spine,
        B::UpperChest => B::Chest,
        B::Neck | B::LeftShoulder | B::RightShoulder => B::UpperChest,
        B::Head => B::Neck,
        B::LeftEye | B::RightEye | B::Jaw => B::Head,
        B::LeftUpperArm => B::LeftShoulder,
        B::RightUpperArm => B::RightShoulder,
        B::LeftThumbMetacarpal
        | B::LeftIndexProximal
        | B::LeftMiddleProximal
        | B::LeftRingProximal
        | B::LeftLittleProximal => B::LeftHand,
        B::RightThumbMetacarpal
        | B::RightIndexProximal
        | B::RightMiddleProximal
        | B::RightRingProximal
        | B::RightLittleProximal => B::RightHand,
        // Limbs and finger segments: the previous bone in `ALL`.
        _ => all[i - 1],
    })
}

/// The humanoid child a bone's direction points to, `None` at the ends.
fn humanoid_child(bone: HumanoidBone) -> Option<HumanoidBone> {
    use HumanoidBone as B;
    Some(match bone {
        B::Hips | B::Head | B::Jaw | B::LeftEye | B::RightEye | B::LeftToes | B::RightToes => {
            return None;
        }
        B::LeftHand => B::LeftMiddleProximal,
        B::RightHand => B::RightMiddleProximal,
        B::LeftThumbDistal
        | B::LeftIndexDistal
        | B::LeftMiddleDistal
        | B::LeftRingDistal
        | B::LeftLittleDistal
        | B::RightThumbDistal
        | B::RightIndexDistal
        | B::RightMiddleDistal
        | B::RightRingDistal
        | B::RightLittleDistal => return None,
        B::LeftShoulder => B::LeftUpperArm,
        B::RightShoulder => B::RightUpperArm,
        other => HumanoidBone::ALL[other.index() + 1],
    })
}

/// The rotation from a character's model space into its body frame (+X its left, +Y up, +Z
/// forward): up is model +Y (every format converts to +Y up at its boundary), left the
/// direction from the right upper-leg joint to the left one at rest, made horizontal, so
/// the frame is a turn about +Y. `None` when the map lacks those bones or they are stacked
/// vertically.
pub fn body_from_model(map: &HumanoidMap, rest: &ModelPose) -> Option<DQuat> {
    let at = |b: HumanoidBone| map.joint(b).map(|j| rest.position(j));
    let left = at(HumanoidBone::LeftUpperLeg)? - at(HumanoidBone::RightUpperLeg)?;
    let left = DVec3::new(left.x, 0.0, left.z).try_normalize()?;
    // The turn about +Y taking `left` onto +X.
    Some(DQuat::from_rotation_y(left.z.atan2(left.x)))
}

/// Where a source point goes on the target: body-frame horizontal position scaled by
/// `scale`, height above `source_floor` scaled by `scale` and put above `target_floor`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMapping {
    /// Target leg length over source leg length (upper plus lower leg, rest pose).
    pub scale: f64,
    /// The source's floor height in its body frame (source units).
    pub source_floor: f64,
    /// The target's floor height in its body frame (metres).
    pub target_floor: f64,
    /// The source's `body_from_model`.
    pub source_body: DQuat,
    /// The target's `body_from_model`.
    pub target_body: DQuat,
}

impl RootMapping {
    /// A source model-space point mapped into the target's model space.
    pub fn map_point(&self, source_model: DVec3) -> DVec3 {
        let b = self.source_body * source_model;
        let mapped = DVec3::new(
            b.x * self.scale,
            self.target_floor + (b.y - self.source_floor) * self.scale,
            b.z * self.scale,
        );
        self.target_body.conjugate() * mapped
    }
}

/// One target joint that a humanoid bone drives.
#[derive(Clone, Copy, Debug)]
struct Driven {
    joint: JointId,
    /// Where its body-frame change comes from.
    from: Change,
    /// `A(b) · C_t · T_rest(b)`: what the change multiplies.
    offset: DQuat,
}

/// A body-frame change of rotation read from the source.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// The change of this source joint.
    Joint(JointId),
    /// Slerp between two source joints' changes by `t`.
    Between(JointId, JointId, f64),
}

/// Rest-pose alignment of one source onto one target, computed once (see the module docs).
#[derive(Clone, Debug)]
pub struct Alignment {
    mode: AlignMode,
    driven: Vec<Driven>,
    /// `S_rest(s)⁻¹ · C_s⁻¹`-free form: per source joint, `S_rest⁻¹` (model space).
    source_rest_inverse: Vec<DQuat>,
    /// The target's reference pose (local): what joints the map does not name keep.
    target_reference: LocalPose,
    source_body: DQuat,
    target_body: DQuat,
    target_hips: JointId,
    target_hips_legs: [JointId; 2],
    source_hips_legs: [JointId; 2],
}

/// Why an alignment cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AlignError {
    /// A character's map lacks the bones the body frame needs. Give a map (`--map`) naming
    /// the hips, both upper legs and the head, neck or spine.
    #[error("the {side}'s humanoid map lacks hips, upper legs or head: no body frame")]
    NoBodyFrame {
        /// `source` or `target`.
        side: &'static str,
    },
}

impl Alignment {
    /// The alignment of `source` onto `target` (both reference poses read through their
    /// maps, see [`reference()`]; `source_motion` fixes the twists of a source whose rest is
    /// not upright).
    ///
    /// # Errors
    /// [`AlignError::NoBodyFrame`] when a map lacks the hips, upper legs or head/neck/spine.
    pub fn new(
        source: &Skeleton,
        source_map: &HumanoidMap,
        target: &Skeleton,
        target_map: &HumanoidMap,
        mode: AlignMode,
        source_motion: Option<&Motion>,
    ) -> Result<Self, AlignError> {
        let (_, source_rest) = reference(source, source_map, source_motion);
        let (target_reference, target_rest) = reference(target, target_map, None);
        let source_body = body_from_model(source_map, &source_rest)
            .ok_or(AlignError::NoBodyFrame { side: "source" })?;
        let target_body = body_from_model(target_map, &target_rest)
            .ok_or(AlignError::NoBodyFrame { side: "target" })?;
        let legs = |map: &HumanoidMap| {
            map.joint(HumanoidBone::LeftUpperLeg)
                .zip(map.joint(HumanoidBone::RightUpperLeg))
                .map(|(l, r)| [l, r])
        };
        let side = |side| AlignError::NoBodyFrame { side };
        let source_hips_legs = legs(source_map).ok_or(side("source"))?;
        let target_hips_legs = legs(target_map).ok_or(side("target"))?;
        let target_hips = target_map.joint(HumanoidBone::Hips).ok_or(side("target"))?;
        // The knee and elbow bend axes: the source's from its clip, the target's from its
        // hinge limits or the T-pose's.
        let bends = match (mode, source_motion) {
            (AlignMode::RestAligned, Some(motion)) => bend_axes(
                source,
                source_map,
                &source_rest,
                motion,
                target,
                target_map,
                &target_rest,
            ),
            _ => Vec::new(),
        };
        // Alignment per bone, in `ALL` order (parents first), in body frames.
        let mut aligned = vec![DQuat::IDENTITY; HumanoidBone::ALL.len()];
        for &bone in HumanoidBone::ALL {
            let inherited = humanoid_parent(bone).map_or(DQuat::IDENTITY, |p| aligned[p.index()]);
            aligned[bone.index()] = if mode == AlignMode::PlainCopy || bone == HumanoidBone::Hips {
                DQuat::IDENTITY
            } else {
                direction_pair(bone, source_map, &source_rest, target_map, &target_rest).map_or(
                    inherited,
                    |(s, t)| {
                        let s = source_body * s;
                        let swing = DQuat::from_rotation_arc(target_body * t, s);
                        // The twist about the bone that puts the target's bend axis on the
                        // source's.
                        let twist = bends.iter().find(|b| b.0 == bone).and_then(|&(_, sa, ta)| {
                            let now = (swing * (target_body * ta))
                                .reject_from(s)
                                .try_normalize()?;
                            let goal = (source_body * sa).reject_from(s).try_normalize()?;
                            let angle = now.cross(goal).dot(s).atan2(now.dot(goal));
                            Some(DQuat::from_axis_angle(s, angle))
                        });
                        (twist.unwrap_or(DQuat::IDENTITY) * swing).normalize()
                    },
                )
            };
        }
        let mut driven = Vec::new();
        for (bone, joint) in target_map.iter() {
            let Some(from) = change_of(bone, source, source_map) else {
                continue;
            };
            let offset = aligned[bone.index()] * target_body * target_rest.rotation(joint);
            driven.push(Driven {
                joint,
                from,
                offset: offset.normalize(),
            });
        }
        driven.sort_by_key(|d| d.joint);
        driven.dedup_by_key(|d| d.joint);
        let source_rest_inverse = source
            .joints()
            .map(|j| source_rest.rotation(j).conjugate())
            .collect();
        Ok(Self {
            mode,
            driven,
            source_rest_inverse,
            target_reference,
            source_body,
            target_body,
            target_hips,
            target_hips_legs,
            source_hips_legs,
        })
    }

    /// The source's `body_from_model`.
    pub fn source_body(&self) -> DQuat {
        self.source_body
    }

    /// The target's `body_from_model`.
    pub fn target_body(&self) -> DQuat {
        self.target_body
    }

    /// The source's pelvis point (midpoint of the upper-leg joints) in model space.
    pub fn source_pelvis(&self, source_model: &ModelPose) -> DVec3 {
        (source_model.position(self.source_hips_legs[0])
            + source_model.position(self.source_hips_legs[1]))
            * 0.5
    }

    /// The target pose for one source frame: `out` gets the target's rest with every driven
    /// joint turned (see the module docs; with [`AlignMode::RestAligned`] each then projected
    /// onto its limit) and the hips placed so that the pelvis point lands
    /// where `root` maps the source's; `target_model` gets its forward kinematics.
    /// `source_model` holds the FK of the source frame.
    pub fn pose(
        &self,
        target: &Skeleton,
        source_model: &ModelPose,
        root: &RootMapping,
        out: &mut LocalPose,
        target_model: &mut ModelPose,
    ) {
        out.transforms_mut()
            .copy_from_slice(self.target_reference.transforms());
        let target_from_body = self.target_body.conjugate();
        let change = |j: JointId| {
            self.source_body
                * source_model.rotation(j)
                * self.source_rest_inverse[j.index()]
                * self.source_body.conjugate()
        };
        // One pass, parents first (driven joints are sorted): the model rotation of every
        // joint as the local rotations are set, then one forward kinematics.
        let mut rotations: Vec<DQuat> = Vec::with_capacity(target.len());
        let mut driven = self.driven.iter().peekable();
        for joint in target.joints() {
            let parent = target
                .parent(joint)
                .map_or(DQuat::IDENTITY, |p| rotations[p.index()]);
            if let Some(d) = driven.next_if(|d| d.joint == joint) {
                let body_change = match d.from {
                    Change::Joint(j) => change(j),
                    Change::Between(a, b, t) => change(a).slerp(change(b), t),
                };
                let wanted = (target_from_body * body_change * d.offset).normalize();
                let local = (parent.conjugate() * wanted).normalize();
                out[joint].rotation = if local.is_finite() {
                    local
                } else {
                    target.rest(joint).rotation
                };
                if self.mode == AlignMode::RestAligned {
                    super::repair::project(target, out, joint);
                }
            }
            rotations.push((parent * out[joint].rotation).normalize());
        }
        fk::forward_kinematics(target, out, target_model);
        // The pelvis point.
        let pelvis = (target_model.position(self.target_hips_legs[0])
            + target_model.position(self.target_hips_legs[1]))
            * 0.5;
        let wanted = root.map_point(self.source_pelvis(source_model));
        let shift = wanted - pelvis;
        if shift.is_finite() {
            let parent = target
                .parent(self.target_hips)
                .map_or(DAffine3::IDENTITY, |p| target_model[p]);
            out[self.target_hips].translation += parent.inverse().transform_vector3(shift);
            fk::update_subtree(target, out, target_model, self.target_hips);
        }
    }
}

/// A character's reference pose, local and model: its rest pose when that is upright (the
/// head above the pelvis, the hip joints side by side), else the rest straightened into a
/// T-pose ([`straighten`]), for files whose rest lays every bone along one axis (the
/// Bandai Namco BVH files).
///
/// With `motion` (frames of `skeleton`), the straightened limbs also get their twist from it:
/// each upper and lower leg and arm is turned about its own direction so that the mean bend
/// axis of its knee or elbow over the clip lies along the body's left (knees) or down / up
/// (left / right elbows), as in a T-pose; without it the twists stay as the rest had them.
pub fn reference(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    motion: Option<&Motion>,
) -> (LocalPose, ModelPose) {
    let rest = skeleton.rest_pose();
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &rest, &mut model);
    if is_upright(map, &model) {
        return (rest, model);
    }
    let mut pose = rest;
    straighten(skeleton, map, &mut pose, &mut model);
    if let Some(motion) = motion {
        untwist_limbs(skeleton, map, motion, &mut pose, &mut model);
    }
    (pose, model)
}

/// True when the head (or neck, spine) is above the pelvis within 35° of +Y and the hip
/// joints' spread is mostly horizontal.
fn is_upright(map: &HumanoidMap, model: &ModelPose) -> bool {
    let at = |b: HumanoidBone| map.joint(b).map(|j| model.position(j));
    let (Some(l), Some(r)) = (
        at(HumanoidBone::LeftUpperLeg),
        at(HumanoidBone::RightUpperLeg),
    ) else {
        return true;
    };
    let Some(top) = at(HumanoidBone::Head)
        .or_else(|| at(HumanoidBone::Neck))
        .or_else(|| at(HumanoidBone::Spine))
    else {
        return true;
    };
    let up = (top - (l + r) * 0.5).normalize_or_zero();
    let spread = (l - r).normalize_or_zero();
    up.y > 0.82 && spread.y.abs() < 0.5
}

/// The T-pose direction of a bone towards its next bone, body frame (+X left, +Y up, +Z
/// forward); `None` for bones without one.
fn t_pose_direction(bone: HumanoidBone) -> Option<DVec3> {
    use HumanoidBone as B;
    let name = bone.vrm_name();
    let side = if name.starts_with("left") {
        1.0
    } else if name.starts_with("right") {
        -1.0
    } else {
        0.0
    };
    Some(match bone {
        B::Spine | B::Chest | B::UpperChest | B::Neck => DVec3::Y,
        B::LeftUpperLeg | B::LeftLowerLeg | B::RightUpperLeg | B::RightLowerLeg => DVec3::NEG_Y,
        B::LeftFoot | B::RightFoot => DVec3::new(0.0, -0.4, 1.0).normalize(),
        B::LeftThumbMetacarpal
        | B::LeftThumbProximal
        | B::LeftThumbDistal
        | B::RightThumbMetacarpal
        | B::RightThumbProximal
        | B::RightThumbDistal => DVec3::new(side, 0.0, 1.0).normalize(),
        _ if side != 0.0 && humanoid_child(bone).is_some() => DVec3::X * side,
        _ => return None,
    })
}

/// Turns `pose` into a T-pose facing +Z: the hips turned so that the spine points up and the
/// hip joints lie along +X, then every mapped bone swung (parents first) so that it points
/// along its T-pose direction (spine and neck up, legs down, feet forward and down, arms, hands and fingers out to their side, thumbs out and forward). Twists are left as they were. `model` holds the FK of
/// `pose` before and after.
pub fn straighten(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) {
    let turn = |pose: &mut LocalPose, model: &mut ModelPose, joint: JointId, by: DQuat| {
        let parent = skeleton
            .parent(joint)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p));
        let wanted = by * model.rotation(joint);
        let local = (parent.conjugate() * wanted).normalize();
        if local.is_finite() {
            pose[joint].rotation = local;
            fk::update_subtree(skeleton, pose, model, joint);
        }
    };
    let at = |model: &ModelPose, b: HumanoidBone| map.joint(b).map(|j| model.position(j));
    if let (Some(hips), Some(l), Some(r)) = (
        map.joint(HumanoidBone::Hips),
        at(model, HumanoidBone::LeftUpperLeg),
        at(model, HumanoidBone::RightUpperLeg),
    ) {
        let top = at(model, HumanoidBone::Spine)
            .or_else(|| at(model, HumanoidBone::Neck))
            .or_else(|| at(model, HumanoidBone::Head));
        if let Some(top) = top {
            let up = (top - model.position(hips)).normalize_or_zero();
            let left = (l - r).reject_from(up).normalize_or_zero();
            let forward = left.cross(up);
            let model_from_frame = glam::DMat3::from_cols(left, up, forward);
            let by = DQuat::from_mat3(&model_from_frame).normalize().conjugate();
            if by.is_finite() {
                turn(pose, model, hips, by);
            }
        }
    }
    for &bone in HumanoidBone::ALL {
        let (Some(joint), Some(direction)) = (map.joint(bone), t_pose_direction(bone)) else {
            continue;
        };
        let mut child = humanoid_child(bone);
        while let Some(c) = child {
            if let Some(cj) = map.joint(c) {
                let current = model.position(cj) - model.position(joint);
                if let Some(current) = current.try_normalize() {
                    turn(
                        pose,
                        model,
                        joint,
                        DQuat::from_rotation_arc(current, direction),
                    );
                }
                break;
            }
            child = humanoid_child(c);
        }
    }
}

/// Per limb bone (upper and lower legs and arms) mapped on both sides: the source's mean bend
/// axis of the limb's knee or elbow over `motion` and the target's, both model space at the
/// reference poses. The source's comes from the frames bent by more than about 20°, measured
/// in the frame of the joint whose change the bone copies; the target's from the mid joint's
/// one-axis limit, else the T-pose's (left for knees, down / up for the left / right elbow).
fn bend_axes(
    source: &Skeleton,
    source_map: &HumanoidMap,
    source_rest: &ModelPose,
    motion: &Motion,
    target: &Skeleton,
    target_map: &HumanoidMap,
    target_rest: &ModelPose,
) -> Vec<(HumanoidBone, DVec3, DVec3)> {
    let target_body = body_from_model(target_map, target_rest).unwrap_or(DQuat::IDENTITY);
    let mut out = Vec::new();
    let mut frame = ModelPose::new(source);
    for (bones, t_pose) in LIMB_BEND_AXES {
        let joints = bones.map(|b| source_map.joint(b));
        let [Some(a), Some(b), Some(c)] = joints else {
            continue;
        };
        let Some(target_mid) = target_map.joint(bones[1]) else {
            continue;
        };
        let target_axis = match super::repair::hinge_axis(target.limit(target_mid)) {
            Some(axis) => target_rest.rotation(target_mid) * axis,
            None => target_body.conjugate() * t_pose,
        };
        let ends = [
            segment_end(bones[0], a, source, source_map),
            segment_end(bones[1], b, source, source_map),
        ];
        let mut sums = [DVec3::ZERO; 2];
        for local in motion.frames() {
            fk::forward_kinematics(source, local, &mut frame);
            let (pa, pb, pc) = (frame.position(a), frame.position(b), frame.position(c));
            let (upper, lower) = (pb - pa, pc - pb);
            let normal = upper.cross(lower);
            if normal.length() > 0.34 * upper.length() * lower.length() {
                let n = normal.normalize();
                for (sum, &end) in sums.iter_mut().zip(&ends) {
                    *sum += frame.rotation(end).conjugate() * n;
                }
            }
        }
        for ((sum, end), bone) in sums.iter().zip(ends).zip(bones) {
            if let Some(axis) = sum.try_normalize() {
                out.push((bone, source_rest.rotation(end) * axis, target_axis));
            }
        }
    }
    out
}

/// Turns each limb bone of a straightened pose about its own direction so that its joint's
/// mean bend axis over `motion` lies where a T-pose has it (see [`reference`]).
fn untwist_limbs(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    motion: &Motion,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) {
    let mut frame = ModelPose::new(skeleton);
    for (bones, wanted) in LIMB_BEND_AXES {
        let (Some(a), Some(b), Some(c)) = (
            map.joint(bones[0]),
            map.joint(bones[1]),
            map.joint(bones[2]),
        ) else {
            continue;
        };
        // The bend axis in each of the two bones' own frames, summed over bent frames.
        let mut in_a = DVec3::ZERO;
        let mut in_b = DVec3::ZERO;
        for local in motion.frames() {
            fk::forward_kinematics(skeleton, local, &mut frame);
            let (pa, pb, pc) = (frame.position(a), frame.position(b), frame.position(c));
            let upper = pb - pa;
            let lower = pc - pb;
            let normal = upper.cross(lower);
            // Bent by more than about 20°.
            if normal.length() > 0.34 * upper.length() * lower.length() {
                let n = normal.normalize();
                in_a += frame.rotation(a).conjugate() * n;
                in_b += frame.rotation(b).conjugate() * n;
            }
        }
        for (joint, child, axis) in [(a, b, in_a), (b, c, in_b)] {
            let Some(axis) = axis.try_normalize() else {
                continue;
            };
            let direction = (model.position(child) - model.position(joint)).normalize_or_zero();
            let now = (model.rotation(joint) * axis).reject_from(direction);
            let goal = wanted.reject_from(direction);
            let (Some(now), Some(goal)) = (now.try_normalize(), goal.try_normalize()) else {
                continue;
            };
            let angle = now.cross(goal).dot(direction).atan2(now.dot(goal));
            let by = DQuat::from_axis_angle(direction, angle);
            let parent = skeleton
                .parent(joint)
                .map_or(DQuat::IDENTITY, |p| model.rotation(p));
            let local = (parent.conjugate() * by * model.rotation(joint)).normalize();
            if local.is_finite() {
                pose[joint].rotation = local;
                fk::update_subtree(skeleton, pose, model, joint);
            }
        }
    }
}

/// The rest directions (source, target; model spaces) of `bone` towards its next bone mapped
/// on both sides; `None` when there is none or the bone is not mapped on both.
fn direction_pair(
    bone: HumanoidBone,
    source_map: &HumanoidMap,
    source_rest: &ModelPose,
    target_map: &HumanoidMap,
    target_rest: &ModelPose,
) -> Option<(DVec3, DVec3)> {
    let s0 = source_map.joint(bone)?;
    let t0 = target_map.joint(bone)?;
    let mut child = humanoid_child(bone);
    while let Some(c) = child {
        if let (Some(s1), Some(t1)) = (source_map.joint(c), target_map.joint(c)) {
            let s = (source_rest.position(s1) - source_rest.position(s0)).try_normalize()?;
            let t = (target_rest.position(t1) - target_rest.position(t0)).try_normalize()?;
            return Some((s, t));
        }
        child = humanoid_child(c);
    }
    None
}

/// The source joint whose change a mapped bone copies: the last joint of the bone's segment
/// (the parent of its next mapped bone's joint) when that is below the bone's own joint, so
/// that twist bones between (MMD's 腕捩 and 手捩, twist joints of game rigs) count for the
/// bone they twist; else the bone's own joint.
fn segment_end(
    bone: HumanoidBone,
    joint: JointId,
    source: &Skeleton,
    map: &HumanoidMap,
) -> JointId {
    if bone == HumanoidBone::Hips {
        return joint;
    }
    let mut child = humanoid_child(bone);
    while let Some(c) = child {
        if let Some(cj) = map.joint(c) {
            return match source.parent(cj) {
                Some(p) if p != joint && source.is_ancestor_or_self(joint, p) => p,
                _ => joint,
            };
        }
        child = humanoid_child(c);
    }
    joint
}

/// Where a target bone's change comes from in the source; `None` when no ancestor is mapped.
fn change_of(bone: HumanoidBone, source: &Skeleton, source_map: &HumanoidMap) -> Option<Change> {
    if let Some(j) = source_map.joint(bone) {
        return Some(Change::Joint(segment_end(bone, j, source, source_map)));
    }
    if let Some(i) = TORSO.iter().position(|&b| b == bone) {
        let below = TORSO[..i]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(k, &b)| source_map.joint(b).map(|j| (k, j)));
        let above = TORSO[i + 1..]
            .iter()
            .enumerate()
            .find_map(|(k, &b)| source_map.joint(b).map(|j| (i + 1 + k, j)));
        return match (below, above) {
            (Some((a, ja)), Some((b, jb))) => {
                #[allow(clippy::cast_precision_loss)] // indices below 6
                let t = (i - a) as f64 / (b - a) as f64;
                Some(Change::Between(ja, jb, t))
            }
            (Some((_, j)), None) | (None, Some((_, j))) => Some(Change::Joint(j)),
            (None, None) => None,
        };
    }
    // Rigid with the nearest ancestor the source can drive.
    humanoid_parent(bone).and_then(|p| change_of(p, source, source_map))
}
