//! Opening a skeleton (and its motion, if any) from a path or a built-in name.

use std::path::Path;

use ikarus_core::humanoid::{BUILTIN_HUMANOID, builtin_humanoid};
use ikarus_core::{Motion, Skeleton};

use crate::FormatError;
use crate::bvh::{Bvh, BvhLayout, BvhReadOptions};
use crate::mesh::SkinnedMesh;

/// A skeleton with its motion and, for BVH sources, the channel layout to write it back with.
#[derive(Clone, Debug)]
pub struct Document {
    /// The skeleton.
    pub skeleton: Skeleton,
    /// The motion; `None` for a skeleton without frames (the built-in humanoid).
    pub motion: Option<Motion>,
    /// How the skeleton's channels were laid out in the source file; `None` when it had none.
    pub layout: Option<BvhLayout>,
    /// The character's skinned mesh, for formats that carry one (PMX/PMD, glTF/VRM).
    pub mesh: Option<SkinnedMesh>,
}

impl Document {
    /// The BVH layout of the source, or the default layout for the skeleton and motion.
    pub fn layout_or_default(&self) -> BvhLayout {
        self.layout
            .clone()
            .unwrap_or_else(|| BvhLayout::for_motion(&self.skeleton, self.motion.as_ref()))
    }
}

/// Opens `source`: `builtin:humanoid`, or a file whose extension names its format (`.bvh`,
/// `.urdf`: the robot's link tree in its own +Z-up frames; `.gltf`, `.glb`, `.vrm`: the skin
/// with the most joints, its first animation and its skinned mesh; `.vrma`: the skeleton of the
/// animation's own humanoid nodes and its animation). See [`open_animation`] to pick a glTF
/// animation by name.
/// Lengths are multiplied by `scale` (1 keeps the file's unit).
///
/// # Errors
/// [`FormatError`] naming the file and, for parse errors, line and column.
pub fn open(source: &str, scale: f64) -> Result<Document, FormatError> {
    if source == BUILTIN_HUMANOID {
        return Ok(open_builtin(scale));
    }
    open_animation(source, scale, None)
}

/// [`open`], with the glTF animation called `animation` instead of the first (`None`: the
/// first). Other formats ignore `animation`.
///
/// # Errors
/// As [`open`]; [`FormatError::Gltf`] when no animation has that name.
pub fn open_animation(
    source: &str,
    scale: f64,
    animation: Option<&str>,
) -> Result<Document, FormatError> {
    if source == BUILTIN_HUMANOID {
        return Ok(open_builtin(scale));
    }
    let path = Path::new(source);
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("bvh") => {
            let bvh = Bvh::read(path, &BvhReadOptions { scale })?;
            let motion = bvh.to_motion().map_err(|source| FormatError::Bvh {
                path: path.to_owned(),
                source,
            })?;
            Ok(Document {
                motion: Some(motion),
                layout: Some(bvh.layout.clone()),
                mesh: None,
                skeleton: bvh.skeleton,
            })
        }
        Some("urdf") => {
            let text = std::fs::read_to_string(path).map_err(|source| FormatError::Io {
                path: path.to_owned(),
                source,
            })?;
            let robot = crate::urdf::Urdf::parse(&text).map_err(|source| FormatError::Urdf {
                path: path.to_owned(),
                source,
            })?;
            Ok(Document {
                skeleton: robot.skeleton.scaled(scale),
                motion: None,
                layout: None,
                mesh: None,
            })
        }
        Some("gltf" | "glb" | "vrm" | "vrma") => crate::gltf::open_document(path, scale, animation),
        _ => Err(FormatError::UnknownFormat {
            path: path.to_owned(),
        }),
    }
}

fn open_builtin(scale: f64) -> Document {
    Document {
        skeleton: builtin_humanoid().scaled(scale),
        motion: None,
        layout: None,
        mesh: None,
    }
}
