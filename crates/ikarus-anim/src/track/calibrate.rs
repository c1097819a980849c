//! Calibration from one frame of the user standing in the avatar's reference pose: the scale
//! from the user's height and arm span, and each tracker's offset to its bone.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::trackers::TrackerPose;
use ikarus_core::{JointId, ModelPose};

use super::TrackError;
use crate::retarget::Character;

/// What calibration measured: the trackers' scale to the avatar and each tracker's offset to
/// its bone.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Avatar units per tracker unit: the avatar's head height above its floor over the
    /// user's.
    pub scale: f64,
    /// The hands' reach about the head scaled by this beyond `scale`: the avatar's arm span
    /// over the user's, over `scale` (1 when the user has the avatar's proportions).
    pub arm_scale: f64,
    /// The user's head height above the floor (tracker units).
    pub user_height: f64,
    /// The user's hand-to-hand distance in the calibration frame (tracker units).
    pub arm_span: f64,
    /// The trackers' world point positions are scaled about: the floor under the user's head
    /// in the calibration frame.
    pub origin: DVec3,
    /// The floor's height (the same in the trackers' and the avatar's world).
    pub floor: f64,
    /// Per tracker, where its bone sits in the device's frame (`device_from_bone`, avatar
    /// units).
    pub offsets: Vec<(HumanoidBone, TrackerPose)>,
}

impl Calibration {
    /// A tracker's sample taken to the avatar's world: its position scaled about
    /// [`origin`](Self::origin), a hand's reach about `head` (the head tracker's sample
    /// already taken to the avatar's world) scaled by [`arm_scale`](Self::arm_scale); the
    /// rotation as it is.
    pub fn to_avatar(
        &self,
        bone: HumanoidBone,
        sample: TrackerPose,
        head: Option<DVec3>,
    ) -> TrackerPose {
        let mut position = self.origin + (sample.position - self.origin) * self.scale;
        if let (true, Some(head)) = (is_hand(bone), head) {
            position = head + (position - head) * self.arm_scale;
        }
        TrackerPose {
            position,
            rotation: sample.rotation,
        }
    }

    /// The bone's goal from its tracker's sample in the avatar's world: the sample composed
    /// with the tracker's offset (the sample itself without one).
    pub fn bone_goal(&self, bone: HumanoidBone, avatar_sample: TrackerPose) -> TrackerPose {
        match self.offsets.iter().find(|(b, _)| *b == bone) {
            Some(&(_, offset)) => avatar_sample.compose(offset),
            None => avatar_sample,
        }
    }
}

fn is_hand(bone: HumanoidBone) -> bool {
    matches!(bone, HumanoidBone::LeftHand | HumanoidBone::RightHand)
}

/// The avatar's joint a tracker on `bone` drives: the bone's own, except that a tracker on
/// the spine, chest or upper chest drives the highest of them the avatar maps (the body
/// solver's chest).
pub(crate) fn avatar_joint(map: &HumanoidMap, bone: HumanoidBone) -> Option<JointId> {
    use HumanoidBone as B;
    match bone {
        B::Spine | B::Chest | B::UpperChest => [B::UpperChest, B::Chest, B::Spine]
            .iter()
            .find_map(|&b| map.joint(b)),
        _ => map.joint(bone),
    }
}

/// The avatar's reference pose's measures used by calibration and the solve.
pub(crate) struct Reference {
    pub(crate) model: ModelPose,
    /// Height of the reference's lowest joint.
    pub(crate) floor: f64,
    /// The way the reference faces (horizontal, unit): across its hands to the front.
    pub(crate) forward: DVec3,
}

impl Reference {
    pub(crate) fn new(character: Character<'_>) -> Result<Self, TrackError> {
        if !character.skeleton.has_extent() {
            return Err(TrackError::Calibration(
                "the avatar carries no shape: every joint of its rest pose is at one place (all its bones have zero length)".into(),
            ));
        }
        let (_, model) = crate::retarget::align::reference(character.skeleton, character.map, None);
        let floor = model.positions().map(|p| p.y).fold(f64::INFINITY, f64::min);
        let at = |b: HumanoidBone| {
            character
                .map
                .joint(b)
                .map(|j| model.position(j))
                .ok_or(TrackError::AvatarBone(b.vrm_name()))
        };
        // Faced as calibration measures the user: across the hands (across the hips when
        // the reference holds the hands together).
        let left = (at(HumanoidBone::LeftHand)? - at(HumanoidBone::RightHand)?)
            .reject_from(DVec3::Y)
            .try_normalize()
            .or_else(|| {
                let hips =
                    at(HumanoidBone::LeftUpperLeg).ok()? - at(HumanoidBone::RightUpperLeg).ok()?;
                hips.reject_from(DVec3::Y).try_normalize()
            })
            .ok_or_else(|| TrackError::Calibration("the avatar's hips have no width".into()))?;
        Ok(Self {
            model,
            floor,
            forward: left.cross(DVec3::Y),
        })
    }
}

/// The signed angle about +Y from `from` to `to` (horizontal vectors).
pub(crate) fn yaw_between(from: DVec3, to: DVec3) -> f64 {
    from.cross(to).y.atan2(from.dot(to))
}

/// Calibrates from `frame` (the samples of one recording frame, the user standing in the
/// avatar's reference pose on the floor at height `floor`): the scale from the head's height
/// and the hands' span, and each tracker's offset to its bone, except those `given`
/// (`device_from_bone` in tracker units, from the recording) which are only scaled.
///
/// # Errors
/// [`TrackError::Calibration`] when the frame lacks a good head or hand sample, the head is
/// not above the floor or the hands are together; [`TrackError::AvatarBone`] when the avatar
/// lacks a tracked bone.
///
/// Kept as one function of about 120 lines: each check reads the measures taken just before it, and
/// the errors come in the order a user fixes them (floor, head, hands, span).
#[allow(clippy::too_many_lines)] // measures, placement, then each offset: in order
pub fn calibrate(
    character: Character<'_>,
    frame: &[(HumanoidBone, TrackerPose)],
    given: &[(HumanoidBone, TrackerPose)],
    floor: f64,
) -> Result<Calibration, TrackError> {
    if !floor.is_finite() {
        return Err(TrackError::Setting("floor"));
    }
    let reference = Reference::new(character)?;
    let map = character.map;
    let model = &reference.model;
    let sample = |bone: HumanoidBone| {
        frame
            .iter()
            .find(|(b, s)| *b == bone && s.is_valid())
            .map(|&(_, s)| s)
            .ok_or_else(|| {
                TrackError::Calibration(format!(
                    "the calibration frame has no good `{}` sample; head and both hands are needed",
                    bone.vrm_name()
                ))
            })
    };
    let joint =
        |bone: HumanoidBone| avatar_joint(map, bone).ok_or(TrackError::AvatarBone(bone.vrm_name()));
    let head = sample(HumanoidBone::Head)?;
    let hands = [
        sample(HumanoidBone::LeftHand)?,
        sample(HumanoidBone::RightHand)?,
    ];
    let avatar_head = model.position(joint(HumanoidBone::Head)?);
    let avatar_hands = [
        model.position(joint(HumanoidBone::LeftHand)?),
        model.position(joint(HumanoidBone::RightHand)?),
    ];
    let user_height = head.position.y - floor;
    let avatar_height = avatar_head.y - reference.floor;
    if !(user_height > 0.0 && user_height.is_finite()) {
        return Err(TrackError::Calibration(format!(
            "the head tracker is {user_height} above the floor at {floor}; stand on the floor"
        )));
    }
    let arm_span = hands[0].position.distance(hands[1].position);
    let avatar_span = avatar_hands[0].distance(avatar_hands[1]);
    if arm_span.is_nan() || arm_span <= 0.05 * user_height {
        return Err(TrackError::Calibration(format!(
            "the hands are {arm_span} apart; stand in the avatar's reference pose (arms out)"
        )));
    }
    let scale = avatar_height / user_height;
    let mut calibration = Calibration {
        scale,
        arm_scale: avatar_span / (arm_span * scale),
        user_height,
        arm_span,
        origin: DVec3::new(head.position.x, floor, head.position.z),
        floor,
        offsets: Vec::new(),
    };
    if !(calibration.arm_scale.is_finite() && scale.is_finite() && scale > 0.0) {
        return Err(TrackError::Calibration(
            "the avatar has no height or no arm span".into(),
        ));
    }
    // The avatar's reference placed under the user's head, facing where the hands say.
    let head_avatar = calibration
        .to_avatar(HumanoidBone::Head, head, None)
        .position;
    let [left, right] = hands.map(|h| {
        calibration
            .to_avatar(HumanoidBone::LeftHand, h, Some(head_avatar))
            .position
    });
    let user_forward = (left - right)
        .reject_from(DVec3::Y)
        .cross(DVec3::Y)
        .try_normalize()
        .ok_or_else(|| TrackError::Calibration("the hands are one above the other".into()))?;
    let turn = DQuat::from_rotation_y(yaw_between(reference.forward, user_forward));
    let placed_head = turn * avatar_head;
    let shift = DVec3::new(
        head_avatar.x - placed_head.x,
        floor - reference.floor,
        head_avatar.z - placed_head.z,
    );
    for &(bone, raw) in frame {
        if calibration.offsets.iter().any(|(b, _)| *b == bone) {
            continue;
        }
        let offset = if let Some(&(_, g)) = given.iter().find(|(b, _)| *b == bone) {
            TrackerPose {
                position: g.position * scale,
                rotation: g.rotation.normalize(),
            }
        } else {
            if !raw.is_valid() {
                return Err(TrackError::Calibration(format!(
                    "the calibration frame has no good `{}` sample and the recording gives no offset for it",
                    bone.vrm_name()
                )));
            }
            let j = joint(bone)?;
            let device = calibration.to_avatar(bone, raw, Some(head_avatar));
            let bone_pose = TrackerPose {
                position: turn * model.position(j) + shift,
                rotation: (turn * model.rotation(j)).normalize(),
            };
            TrackerPose {
                position: device.position,
                rotation: device.rotation.normalize(),
            }
            .inverse()
            .compose(bone_pose)
        };
        calibration.offsets.push((bone, offset));
    }
    Ok(calibration)
}
