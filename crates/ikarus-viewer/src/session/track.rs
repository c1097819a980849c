//! `track`: the loaded humanoid posed from trackers ([`ikarus_anim::track`]): a recording
//! played onto it, or a motion retargeted onto it whose own bones give the trackers, that
//! motion (the truth) drawn beside the result and the trackers marked.

use glam::DVec3;
use ikarus_anim::retarget::{self, Character, RetargetConfig};
use ikarus_anim::track::{self, Points, TrackConfig};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::trackers::Trackers;
use ikarus_core::{JointId, ModelPose, Motion, fk};

use super::retarget::{RetargetOverlay, uploaded_source};
use super::{Outcome, Session, Upload};
use crate::error::RequestError;
use crate::protocol::{Reply, SourceFormat, TrackingInfo};

impl Session {
    /// Poses the loaded humanoid from the uploaded trackers (or a motion's own bones); the
    /// result becomes the loaded motion, with the truth and the trackers as its overlay.
    #[allow(clippy::too_many_lines)] // the upload, the trackers, the solve, the replies: in order
    pub(crate) fn track(&mut self, upload: &Upload, points: Option<usize>) -> Outcome {
        let name = upload.name.as_str();
        let points = points
            .map(|n| Points::from_count(n).ok_or(RequestError::Points(n)))
            .transpose()?;
        let bytes = upload.bytes("track")?;
        if self.loaded.format == SourceFormat::Mmd {
            return Err(RequestError::TrackOntoMmd {
                model: self.loaded.name.clone(),
            });
        }
        let map = self.humanoid_target(name)?;
        let skeleton = self.loaded.document.skeleton.clone();
        let avatar = Character {
            skeleton: &skeleton,
            map: &map,
        };
        let track_error = |source| RequestError::Track {
            name: name.to_owned(),
            target: self.loaded.name.clone(),
            source,
        };
        let extension = std::path::Path::new(name)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        // The trackers, and for a motion the truth (retargeted onto the avatar, floor at 0).
        let (trackers, truth): (Trackers, Option<Vec<ModelPose>>) =
            if matches!(extension.as_deref(), Some("json" | "csv")) {
                let text = String::from_utf8_lossy(&bytes);
                let trackers = if extension.as_deref() == Some("csv") {
                    ikarus_formats::trackers::from_csv(&text, name)?
                } else {
                    ikarus_formats::trackers::from_json(&text, name)?
                };
                (trackers, None)
            } else {
                let source = uploaded_source(name, &bytes)?;
                let from = Character {
                    skeleton: &source.skeleton,
                    map: &source.map,
                };
                let truth =
                    retarget::retarget(from, &source.motion, avatar, &RetargetConfig::default())
                        .map_err(|source| RequestError::Retarget {
                            name: name.to_owned(),
                            target: self.loaded.name.clone(),
                            source,
                        })?
                        .motion;
                let bones = points.unwrap_or(Points::Six).bones();
                let trackers =
                    track::derive_trackers(avatar, &truth, bones).map_err(track_error)?;
                (
                    trackers,
                    Some(truth_models(avatar, &truth).map_err(track_error)?),
                )
            };
        let config = TrackConfig {
            points: points.or(truth.as_ref().map(|_| Points::Six)),
            ..TrackConfig::default()
        };
        let tracked = track::track(avatar, &trackers, &config, None).map_err(track_error)?;
        let used = track::used_bones(&trackers, &config).map_err(track_error)?;
        let overlay = overlay(avatar, &tracked.motion, &trackers, &used, truth.as_deref());
        let tracking = TrackingInfo {
            points: used.len(),
            scale: tracked.calibration.scale,
            steps: tracked.steps(),
            held_frames: tracked.held_frames(),
            unconverged: tracked.unconverged(),
            mpjpe: truth.as_deref().map(|t| mpjpe(avatar, &tracked.motion, t)),
        };
        self.set_motion(tracked.motion, None);
        self.overlay = Some(overlay);
        self.keys.clear();
        let mut info = self.motion_info().ok_or(RequestError::MotionNotBound)?;
        info.tracking = Some(tracking);
        let mut replies = vec![Reply::Motion(info)];
        replies.extend(self.show_frame(0)?);
        Ok(replies)
    }
}

/// The truth's frames by FK, moved as `derive_trackers` moves them (its floor to y = 0), with
/// the calibration frame (the reference pose) first so that frame `f` matches the result's.
fn truth_models(
    avatar: Character<'_>,
    truth: &Motion,
) -> Result<Vec<ModelPose>, ikarus_anim::track::TrackError> {
    let skeleton = avatar.skeleton;
    let (_, reference) = retarget::align::reference(skeleton, avatar.map, None);
    let models: Vec<ModelPose> = fk::model_frames(skeleton, truth.frames());
    let floor = track::floor_of(avatar, &reference, &models)?;
    let down = DVec3::new(0.0, -floor, 0.0);
    let shifted = |m: &ModelPose| -> ModelPose {
        let mut out = m.clone();
        for i in 0..skeleton.len() {
            let j = JointId::from_index(i);
            out.set_rigid(j, m.rotation(j), m.position(j) + down);
        }
        out
    };
    let lowest = reference
        .positions()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    // Under the first frame's head, as `derive_trackers` stands it.
    let head = avatar
        .map
        .joint(HumanoidBone::Head)
        .ok_or(ikarus_anim::track::TrackError::AvatarBone("head"))?;
    let first = models
        .first()
        .map_or(reference.position(head), |m| m.position(head));
    let stand = DVec3::new(
        first.x - reference.position(head).x,
        -lowest,
        first.z - reference.position(head).z,
    );
    let mut standing = reference.clone();
    for i in 0..skeleton.len() {
        let j = JointId::from_index(i);
        standing.set_rigid(j, reference.rotation(j), reference.position(j) + stand);
    }
    Ok(std::iter::once(standing)
        .chain(models.iter().map(shifted))
        .collect())
}

/// The mean distance of the avatar's body bones from the truth over the frames after the
/// calibration frame.
fn mpjpe(avatar: Character<'_>, motion: &Motion, truth: &[ModelPose]) -> f64 {
    let skeleton = avatar.skeleton;
    let body: Vec<JointId> = HumanoidBone::BODY
        .iter()
        .filter_map(|&b| avatar.map.joint(b))
        .collect();
    let mut model = ModelPose::new(skeleton);
    let mut sum = 0.0;
    let mut frames = 0_u32;
    for (pose, t) in motion.frames().iter().zip(truth).skip(1) {
        fk::forward_kinematics(skeleton, pose, &mut model);
        #[allow(clippy::cast_precision_loss)] // joint counts
        let e = body
            .iter()
            .map(|&j| model.position(j).distance(t.position(j)))
            .sum::<f64>()
            / body.len().max(1) as f64;
        sum += e;
        frames += 1;
    }
    sum / f64::from(frames.max(1))
}

/// Per frame: the truth's joints a body height to the avatar's right (none for a
/// recording), and the used trackers' positions as markers.
fn overlay(
    avatar: Character<'_>,
    motion: &Motion,
    trackers: &Trackers,
    used: &[HumanoidBone],
    truth: Option<&[ModelPose]>,
) -> RetargetOverlay {
    let skeleton = avatar.skeleton;
    let mut rest = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
    let height = rest
        .positions()
        .map(|p| p.y)
        .fold(f64::NEG_INFINITY, f64::max)
        - rest.positions().map(|p| p.y).fold(f64::INFINITY, f64::min);
    // Clear of the avatar even in its T-pose (the calibration frame): arm span ≈ height.
    let aside = DVec3::NEG_X * height.max(0.1) * 1.1;
    let frames = (0..motion.len())
        .map(|f| {
            truth
                .and_then(|t| t.get(f))
                .map(|m| m.positions().map(|p| (p + aside).to_array()).collect())
                .unwrap_or_default()
        })
        .collect();
    let contacts = (0..motion.len())
        .map(|f| {
            trackers
                .tracks
                .iter()
                .filter(|t| used.contains(&t.bone))
                .filter_map(|t| t.samples.get(f))
                .filter(|s| s.is_valid())
                .map(|s| s.position.to_array())
                .collect()
        })
        .collect();
    RetargetOverlay {
        parents: if truth.is_some() {
            skeleton
                .joints()
                .map(|j| skeleton.parent(j).map(JointId::index))
                .collect()
        } else {
            Vec::new()
        },
        frames,
        contacts,
    }
}
