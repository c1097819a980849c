//! Opening skeleton arguments (`builtin:humanoid` or a file) and picking a frame.

use anyhow::{Context, Result, bail};
use ikarus_core::LocalPose;
use ikarus_formats::Document;

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
