//! Motion requests: show a frame, capture key postures, generate a trajectory, export BVH.

use ikarus_core::humanoid_map::{HumanoidMap, NormalizedHumanoid};
use ikarus_core::trajectory::{Parameterisation, PoseTrajectory, Profile, ViaVelocity};
use ikarus_core::{JointId, Motion};
use ikarus_formats::bvh::{Bvh, BvhLayout};
use ikarus_formats::gltf::GltfFile;
use ikarus_formats::gltf::vrma::Vrma;

use super::{Outcome, Session, motion_info};
use crate::protocol::Reply;

/// Most frames a generated motion may have.
const MAX_GENERATED_FRAMES: usize = 100_000;

impl Session {
    /// Shows frame `index` of the loaded motion (playback: not an undo step).
    pub(crate) fn show_frame(&mut self, index: usize) -> Outcome {
        if let Some(mmd) = &mut self.mmd {
            let frames = mmd
                .motion_info()
                .ok_or_else(|| format!("{} has no motion to play", self.loaded.name))?
                .frames;
            if index >= frames {
                return Err(format!(
                    "frame {index} does not exist; the motion has frames 0 to {}",
                    frames - 1
                ));
            }
            let skeleton = &self.loaded.document.skeleton;
            mmd.sample(skeleton, index as f64);
            mmd.evaluate(skeleton, &mut self.pose, &mut self.model);
            return Ok(vec![self.pose_reply(None, Some(index))]);
        }
        let motion = self
            .loaded
            .document
            .motion
            .as_ref()
            .ok_or_else(|| format!("{} has no motion to play", self.loaded.name))?;
        let frame = motion.frame(index).ok_or_else(|| {
            format!(
                "frame {index} does not exist; the motion has frames 0 to {}",
                motion.len().saturating_sub(1)
            )
        })?;
        let frame = frame.clone();
        self.pose = frame;
        Ok(vec![self.pose_reply(None, Some(index))])
    }

    /// Appends the current pose to the keys.
    pub(crate) fn capture_key(&mut self) -> Outcome {
        if self.keys.len() >= 1024 {
            return Err("at most 1024 key postures".to_owned());
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
            return Err(format!(
                "duration {duration} s and fps {fps} must be finite and positive"
            ));
        }
        let frame_count = (duration * fps).round() as usize + 1;
        if frame_count > MAX_GENERATED_FRAMES {
            return Err(format!(
                "{frame_count} frames is more than {MAX_GENERATED_FRAMES}; shorten the duration or lower fps"
            ));
        }
        let last = self.keys.len().saturating_sub(1).max(1) as f64;
        let keys: Vec<_> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, pose)| (duration * i as f64 / last, pose.clone()))
            .collect();
        if keys.len() < 2 {
            return Err(format!(
                "capture at least two key postures first ({} so far)",
                keys.len()
            ));
        }
        let trajectory = PoseTrajectory::new(
            &keys,
            profile,
            ViaVelocity::Continuous,
            Parameterisation::RotationVector,
        )
        .map_err(|e| e.to_string())?;
        let mut motion =
            Motion::for_skeleton(self.skeleton(), 1.0 / fps).map_err(|e| e.to_string())?;
        let mut pose = self.skeleton().rest_pose();
        for frame in 0..frame_count {
            trajectory.sample(frame as f64 / fps, &mut pose);
            motion.push(pose.clone()).map_err(|e| e.to_string())?;
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
            let mut motion =
                Motion::for_skeleton(&document.skeleton, 1.0 / 30.0).map_err(|e| e.to_string())?;
            motion.push(self.pose.clone()).map_err(|e| e.to_string())?;
            motion
        };
        let layout = document
            .layout
            .clone()
            .unwrap_or_else(|| BvhLayout::for_motion(&document.skeleton, Some(&motion)));
        let bvh =
            Bvh::from_motion(&document.skeleton, &motion, layout).map_err(|e| e.to_string())?;
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
    fn mmd_frames(&mut self) -> Result<Option<Motion>, String> {
        let Some(mmd) = &mut self.mmd else {
            return Ok(None);
        };
        let Some(info) = mmd.motion_info() else {
            return Ok(None);
        };
        let skeleton = &self.loaded.document.skeleton;
        let mut motion =
            Motion::for_skeleton(skeleton, info.frame_time).map_err(|e| e.to_string())?;
        for pose in mmd.all_frames(skeleton, info.frames) {
            motion.push(pose).map_err(|e| e.to_string())?;
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
    ) -> Result<(), String> {
        let located = |e: &dyn std::fmt::Display| format!("{name}: {e}");
        let file = GltfFile::parse(bytes, None).map_err(|e| located(&e))?;
        let vrma = Vrma::from_file(&file).map_err(|e| located(&e))?;
        let source = vrma.normalized_motion(None).map_err(|e| located(&e))?;
        let from = vrma.normalized.skeleton();
        let skeleton = &self.loaded.document.skeleton;
        let target = NormalizedHumanoid::new(skeleton, map).ok_or_else(|| {
            format!(
                "{name}: {} has no humanoid bones to play it on",
                self.loaded.name
            )
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
        let mut motion =
            Motion::for_skeleton(skeleton, source.frame_time()).map_err(|e| e.to_string())?;
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
            motion.push(out.clone()).map_err(|e| e.to_string())?;
        }
        self.set_motion(motion, None);
        self.keys.clear();
        Ok(())
    }
}
