//! Opening skeleton arguments (`builtin:humanoid` or a file) and picking a frame.

use anyhow::{Context, Result, bail};
use ikarus_anim::retarget::Character;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{LocalPose, Motion, Skeleton};
use ikarus_formats::Document;
use ikarus_formats::bvh::BvhLayout;

/// Opens a skeleton argument with an optional length scale.
pub fn open(source: &str, scale: Option<f64>) -> Result<Document> {
    let scale = scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        bail!("--scale {scale}: expected a finite positive factor");
    }
    Ok(ikarus_formats::open(source, scale)?)
}

/// The local pose at `frame`: that frame of the document's motion, or the rest pose for
/// frame 0 of a document without motion.
pub fn frame_pose(document: &Document, frame: usize) -> Result<LocalPose> {
    match &document.motion {
        Some(motion) if !motion.is_empty() => motion.frame(frame).cloned().with_context(|| {
            format!(
                "frame {frame} does not exist; the motion has frames 0 to {}",
                motion.len() - 1
            )
        }),
        _ if frame == 0 => Ok(document.skeleton.rest_pose()),
        _ => bail!("frame {frame} does not exist; this skeleton has only its rest pose (frame 0)"),
    }
}

/// [`open`] with a glTF animation chosen by name (`None`: the first).
pub fn open_animation(
    source: &str,
    scale: Option<f64>,
    animation: Option<&str>,
) -> Result<Document> {
    let scale = scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        bail!("--scale {scale}: expected a finite positive factor");
    }
    Ok(ikarus_formats::open_animation(source, scale, animation)?)
}

/// A humanoid's motion read from a file (BVH, glTF/GLB/VRM with an animation, VRMA), for the
/// subcommands that move a humanoid through it.
pub struct HumanoidMotion {
    /// The skeleton, lengths as scaled on reading.
    pub skeleton: Skeleton,
    /// The motion.
    pub motion: Motion,
    /// A BVH source's channel layout.
    pub layout: Option<BvhLayout>,
    /// The skeleton's humanoid map: declared by the file or recognised from joint names.
    pub map: HumanoidMap,
}

impl HumanoidMotion {
    /// Opens `name` with lengths times `scale`; a file without a motion is refused as
    /// "`name`: no animation to `purpose`".
    pub fn open(name: &str, scale: f64, purpose: &str) -> Result<Self> {
        let document = ikarus_formats::open(name, scale)?;
        let motion = document
            .motion
            .with_context(|| format!("{name}: no animation to {purpose}"))?;
        let map = ikarus_formats::humanoid_map(name, &document.skeleton)?;
        Ok(Self {
            skeleton: document.skeleton,
            motion,
            layout: document.layout,
            map,
        })
    }

    /// The skeleton with its humanoid map.
    pub fn character(&self) -> Character<'_> {
        Character {
            skeleton: &self.skeleton,
            map: &self.map,
        }
    }
}
