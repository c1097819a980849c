//! VRM animations (`.vrma`, `VRMC_vrm_animation` 1.0): read onto the normalised humanoid,
//! write from it.
//!
//! A VRMA holds a humanoid of its own (nodes with rest transforms, mapped by the extension's
//! `humanoid.humanBones`) and animations on those nodes. Reading builds a skeleton from the
//! humanoid's nodes, samples the animation on it and converts to the normalised humanoid
//! ([`NormalizedHumanoid`]), which any avatar's map can then take. Writing stores a normalised
//! motion with identity rest rotations, so reading it back gives the same values (to `f32`).
//! Expression and look-at tracks are not read or written.

use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap, NormalizedHumanoid};
use ikarus_core::{LocalPose, Motion, Skeleton};
use serde_json::json;

use super::{Clip, GltfError, GltfFile, GltfSkeleton, SkeletonSource, container, write};

/// A VRM animation read onto its own humanoid.
#[derive(Clone, Debug)]
pub struct Vrma {
    /// The skeleton of the file's humanoid nodes (and the nodes between them).
    pub skeleton: GltfSkeleton,
    /// The file's humanoid map on that skeleton.
    pub humanoid: HumanoidMap,
    /// The normalised view of that skeleton.
    pub normalized: NormalizedHumanoid,
    /// The first animation's channels on `skeleton`.
    pub clip: Clip,
}

impl Vrma {
    /// Reads the humanoid and the first animation of a parsed `.vrma`.
    ///
    /// # Errors
    /// [`GltfError::NoSkeleton`] without a `VRMC_vrm_animation` humanoid or an animation.
    pub fn from_file(file: &GltfFile) -> Result<Self, GltfError> {
        let humanoid = file
            .vrm_humanoid()?
            .filter(|h| h.version == super::vrm::VrmVersion::Animation && !h.bones.is_empty())
            .ok_or_else(|| GltfError::NoSkeleton {
                reason: "no VRMC_vrm_animation humanoid".into(),
            })?;
        let nodes = humanoid.bones.iter().map(|&(_, n)| n).collect();
        let skeleton = file.skeleton(&SkeletonSource::Nodes(nodes))?;
        let map = humanoid.map(&skeleton);
        let normalized = NormalizedHumanoid::new(&skeleton.skeleton, &map).ok_or_else(|| {
            GltfError::NoSkeleton {
                reason: "the humanoid bones do not form a skeleton".into(),
            }
        })?;
        if file.json().animations.is_empty() {
            return Err(GltfError::NoSkeleton {
                reason: "the VRMA has no animation".into(),
            });
        }
        let clip = file.clip(0, &skeleton)?;
        Ok(Self {
            skeleton,
            humanoid: map,
            normalized,
            clip,
        })
    }

    /// The normalised pose at `time` seconds into `out` (sized for the normalised skeleton).
    pub fn sample_normalized(&self, time: f64, out: &mut LocalPose) {
        let mut pose = self.skeleton.skeleton.rest_pose();
        self.clip.sample(&self.skeleton, time, &mut pose);
        self.normalized
            .to_normalized(&self.skeleton.skeleton, &pose, out);
    }

    /// The animation on the normalised skeleton, at `fps` (or one frame per key when the keys
    /// are evenly spaced, else 30).
    ///
    /// # Errors
    /// As [`Clip::to_motion`].
    pub fn normalized_motion(&self, fps: Option<f64>) -> Result<Motion, GltfError> {
        let source = self.clip.to_motion(&self.skeleton, fps)?;
        let skeleton = self.normalized.skeleton();
        let mut motion = Motion::for_skeleton(skeleton, source.frame_time())
            .map_err(|e| GltfError::invalid("animations[0]", e.to_string()))?;
        let mut out = skeleton.rest_pose();
        for frame in source.frames() {
            self.normalized
                .to_normalized(&self.skeleton.skeleton, frame, &mut out);
            motion
                .push(out.clone())
                .map_err(|e| GltfError::invalid("animations[0]", e.to_string()))?;
        }
        Ok(motion)
    }
}

/// A `.vrma` file of a motion of any humanoid: each frame carried onto the normalised humanoid
/// of `skeleton` and `map` ([`NormalizedHumanoid::to_normalized`]), then [`write_vrma`]. What
/// `ikarus retarget --format vrma` and the Python `ikarus.write("….vrma", …)` write.
///
/// # Errors
/// [`GltfError::NoSkeleton`] when the map lacks a required bone or the mapped bones do not form
/// a skeleton (map the hips and the bones between them), or [`GltfError::Invalid`] for a
/// motion of another skeleton.
pub fn write_humanoid_vrma(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    motion: &Motion,
) -> Result<Vec<u8>, GltfError> {
    if !map.is_complete() {
        return Err(GltfError::NoSkeleton {
            reason: format!(
                "VRMA needs a humanoid: no joint recognised as {:?}",
                map.missing_required()
                    .map(HumanoidBone::vrm_name)
                    .collect::<Vec<_>>()
            ),
        });
    }
    let normalized =
        NormalizedHumanoid::new(skeleton, map).ok_or_else(|| GltfError::NoSkeleton {
            reason: "the humanoid bones do not form a skeleton".into(),
        })?;
    if motion.joint_count() != skeleton.len() {
        return Err(GltfError::invalid(
            "animations[0]",
            format!(
                "the motion has {} joints, the skeleton {}",
                motion.joint_count(),
                skeleton.len()
            ),
        ));
    }
    let n = normalized.skeleton();
    let mut clip = Motion::for_skeleton(n, motion.frame_time())
        .map_err(|e| GltfError::invalid("animations[0]", e.to_string()))?;
    let mut pose = n.rest_pose();
    for frame in motion.frames() {
        normalized.to_normalized(skeleton, frame, &mut pose);
        clip.push(pose.clone())
            .map_err(|e| GltfError::invalid("animations[0]", e.to_string()))?;
    }
    Ok(write_vrma(n, &clip))
}

/// A `.vrma` file of a motion on a normalised humanoid skeleton (joints named by VRM 1.0 bone
/// names, identity rest rotations, such as [`NormalizedHumanoid::skeleton`]): one node per
/// joint, the `VRMC_vrm_animation` humanoid naming the joints that are humanoid bones, and one
/// LINEAR animation.
pub fn write_vrma(skeleton: &Skeleton, motion: &Motion) -> Vec<u8> {
    let bones: serde_json::Map<String, serde_json::Value> = skeleton
        .joints()
        .filter(|&j| HumanoidBone::from_vrm_name(skeleton.name(j)).is_some())
        .map(|j| (skeleton.name(j).to_owned(), json!({"node": j.index()})))
        .collect();
    let extensions = json!({
        "VRMC_vrm_animation": {"specVersion": "1.0", "humanoid": {"humanBones": bones}},
    });
    let (json, bin) = write::skeleton_json(skeleton, Some(motion), "vrma", |_| {}, extensions);
    let text = serde_json::to_vec(&json).unwrap_or_default();
    container::glb(&text, &bin)
}
