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

/// Loads the posture model an example-based solver names (`builtin:humanoid` is built in; a
/// file path is read relative to `dir`), so the solver finds it attached. Other solvers pass
/// through unchanged.
///
/// # Errors
/// The file cannot be read, or is not a posture model (with its line and column).
pub fn posture_model(config: &mut ikarus_solve::SolverConfig, dir: &std::path::Path) -> Result<()> {
    let ikarus_solve::SolverConfig::Example(example) = config else {
        return Ok(());
    };
    if !example.model.needs_loading() {
        return Ok(());
    }
    let name = std::path::Path::new(example.model.name());
    let path = if name.is_absolute() || name.exists() {
        name.to_path_buf()
    } else {
        dir.join(name)
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read the posture model", path.display()))?;
    let model = ikarus_solve::example_based::PostureModel::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: not a posture model: {e}", path.display()))?;
    example.model.set_model(std::sync::Arc::new(model));
    Ok(())
}
