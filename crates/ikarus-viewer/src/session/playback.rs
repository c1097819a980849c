//! Motion requests: show a frame, capture key postures, generate a trajectory, export BVH.

use ikarus_core::humanoid_map::{HumanoidMap, NormalizedHumanoid};
use ikarus_core::trajectory::{Parameterisation, PoseTrajectory, Profile, ViaVelocity};
use ikarus_core::{JointId, Motion, MotionError};
use ikarus_formats::bvh::{Bvh, BvhLayout};
use ikarus_formats::gltf::GltfFile;
use ikarus_formats::gltf::vrma::Vrma;

use super::{Outcome, Session, motion_info};
use crate::error::{LoadError, RequestError};
use crate::protocol::Reply;

/// Most frames a generated motion may have.
const MAX_GENERATED_FRAMES: usize = 100_000;

/// Most key postures a session keeps.
const MAX_KEYS: usize = 1024;

impl Session {
    /// Shows frame `index` of the loaded motion (playback: not an undo step).
    pub(crate) fn show_frame(&mut self, index: usize) -> Outcome {
        if let Some(mmd) = &mut self.mmd {
            let frames = mmd
                .motion_info()
                .ok_or_else(|| RequestError::NoMotion {
                    model: self.loaded.name.clone(),
                })?
                .frames;
            if index >= frames {
                return Err(RequestError::FrameOutOfRange {
                    index,
                    last: frames - 1,
                });
            }
            let skeleton = &self.loaded.document.skeleton;
            mmd.sample(skeleton, index as f64);
            mmd.evaluate(skeleton, &mut self.pose, &mut self.model);
            self.repin_feet();
            return Ok(vec![self.pose_reply(None, Some(index))]);
        }
        let motion =
            self.loaded
                .document
                .motion
                .as_ref()
                .ok_or_else(|| RequestError::NoMotion {
                    model: self.loaded.name.clone(),
                })?;
        let frame = motion
            .frame(index)
            .ok_or_else(|| RequestError::FrameOutOfRange {
                index,
                last: motion.len().saturating_sub(1),
            })?;
        let frame = frame.clone();
        self.pose = frame;
        self.repin_feet();
        Ok(vec![self.pose_reply(None, Some(index))])
    }

    /// Appends the current pose to the keys.
    pub(crate) fn capture_key(&mut self) -> Outcome {
        if self.keys.len() >= MAX_KEYS {
            return Err(RequestError::TooManyKeys { limit: MAX_KEYS });
        }
        self.keys.push(self.pose.clone());
        Ok(vec![Reply::Keys {
            count: self.keys.len(),
        }])
    }

    /// Builds the trajectory through the keys (evenly spaced in time, rest to rest, rotation
    /// vectors) and makes it the loaded motion.
    pub(crate) fn generate(&mut self, duration: f64, fps: f64, profile: Profile) -> Outcome {
        if !(duration.is_finite() && duration > 0.0 && fps.is_finite() && fps > 0.0) {
            return Err(RequestError::InvalidTiming { duration, fps });
        }
        let frame_count = (duration * fps).round() as usize + 1;
        if frame_count > MAX_GENERATED_FRAMES {
            return Err(RequestError::TooManyFrames {
                frames: frame_count,
                limit: MAX_GENERATED_FRAMES,
            });
        }
        let last = self.keys.len().saturating_sub(1).max(1) as f64;
        let keys: Vec<_> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, pose)| (duration * i as f64 / last, pose.clone()))
            .collect();
        if keys.len() < 2 {
            return Err(RequestError::TooFewKeys { count: keys.len() });
        }
        let trajectory = PoseTrajectory::new(
            &keys,
            profile,
            ViaVelocity::Continuous,
            Parameterisation::RotationVector,
        )?;
        let mut motion = Motion::for_skeleton(self.skeleton(), 1.0 / fps)?;
        let mut pose = self.skeleton().rest_pose();
        for frame in 0..frame_count {
            trajectory.sample(frame as f64 / fps, &mut pose);
            motion.push(pose.clone())?;
        }
        let info = motion_info(&motion);
        let layout = self.loaded.document.layout.clone();
        self.set_motion(motion, layout);
        let mut replies = vec![Reply::Motion(info)];
        replies.extend(self.show_frame(0)?);
        Ok(replies)
    }

    /// The loaded motion, or the current pose as a one-frame motion, as BVH text (the
    /// source's channel layout when it had one).
    pub(crate) fn export_bvh(&mut self) -> Outcome {
        let mmd_motion = self.mmd_frames()?;
        let document = &self.loaded.document;
        let motion = if let Some(motion) = mmd_motion {
            motion
        } else if let Some(motion) = &document.motion {
            motion.clone()
        } else {
            let mut motion = Motion::for_skeleton(&document.skeleton, 1.0 / 30.0)?;
            motion.push(self.pose.clone())?;
            motion
        };
        let layout = document
            .layout
            .clone()
            .unwrap_or_else(|| BvhLayout::for_motion(&document.skeleton, Some(&motion)));
        let bvh = Bvh::from_motion(&document.skeleton, &motion, layout)?;
        let stem = self.loaded.name.trim_start_matches("builtin:");
        let stem = stem.rsplit(['/', '\\']).next().unwrap_or(stem);
        let stem = stem.rsplit_once('.').map_or(stem, |(stem, _)| stem);
        Ok(vec![Reply::Bvh {
            name: format!("{stem}.ikarus.bvh"),
            text: bvh.to_bvh_string(),
        }])
    }
}

impl Session {
    /// For an MMD model with a VMD: every frame evaluated with IK (as shown: the IK switch
    /// applies), as a motion at 30 fps.
    fn mmd_frames(&mut self) -> Result<Option<Motion>, MotionError> {
        let Some(mmd) = &mut self.mmd else {
            return Ok(None);
        };
        let Some(info) = mmd.motion_info() else {
            return Ok(None);
        };
        let skeleton = &self.loaded.document.skeleton;
        let mut motion = Motion::for_skeleton(skeleton, info.frame_time)?;
        for pose in mmd.all_frames(skeleton, info.frames) {
            motion.push(pose)?;
        }
        Ok(Some(motion))
    }

    /// Plays a VRM animation on the loaded humanoid: each frame's normalised pose, bone by bone
    /// (by VRM name), onto this skeleton's normalised view, then back to its joints. The hips
    /// path is scaled by the ratio of the two hips heights.
    pub(crate) fn apply_vrma(
        &mut self,
        name: &str,
        bytes: &[u8],
        map: &HumanoidMap,
    ) -> Result<(), RequestError> {
        let located = |source| LoadError::Gltf {
            name: name.to_owned(),
            source,
        };
        let file = GltfFile::parse(bytes, None).map_err(located)?;
        let vrma = Vrma::from_file(&file).map_err(located)?;
        let source = vrma.normalized_motion(None).map_err(located)?;
        let from = vrma.normalized.skeleton();
        let skeleton = &self.loaded.document.skeleton;
        let target = NormalizedHumanoid::new(skeleton, map).ok_or_else(|| {
            RequestError::NoHumanoidToPlayOn {
                name: name.to_owned(),
                model: self.loaded.name.clone(),
            }
        })?;
        let to = target.skeleton();
        // Per target bone, the source bone with the same name.
        let pairs: Vec<(JointId, Option<JointId>)> =
            to.joints().map(|j| (j, from.joint(to.name(j)))).collect();
        let height = |s: &ikarus_core::Skeleton| {
            s.joints()
                .find(|&j| s.parent(j).is_none())
                .map_or(1.0, |r| s.rest(r).translation.y)
        };
        let ratio = match (height(from), height(to)) {
            (a, b) if a.abs() > 1e-9 && b.is_finite() => b / a,
            _ => 1.0,
        };
        let mut motion = Motion::for_skeleton(skeleton, source.frame_time())?;
        let mut normalized = to.rest_pose();
        let mut out = skeleton.rest_pose();
        for frame in source.frames() {
            for &(j, s) in &pairs {
                let Some(s) = s else { continue };
                let mut local = *to.rest(j);
                local.rotation = frame[s].rotation;
                if to.parent(j).is_none() {
                    local.translation = frame[s].translation * ratio;
                }
                normalized[j] = local;
            }
            target.from_normalized(skeleton, &normalized, &mut out);
            motion.push(out.clone())?;
        }
        self.set_motion(motion, None);
        self.keys.clear();
        Ok(())
    }
}
