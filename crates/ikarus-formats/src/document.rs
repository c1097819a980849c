//! Opening a skeleton (and its motion, if any) from a path or a built-in name.

use std::path::Path;

#[cfg(feature = "fs")]
use ikarus_core::humanoid::{BUILTIN_HUMANOID, builtin_humanoid};
#[cfg(feature = "fs")]
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::rig::Rig;
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
    /// The rig's evaluation rules (inheritance, declared IK chains), for formats that carry
    /// them (PMX/PMD).
    pub rig: Option<Rig>,
}

impl Document {
    /// A skeleton alone: no motion, layout, mesh or rig.
    fn from_skeleton(skeleton: Skeleton) -> Self {
        Self {
            skeleton,
            motion: None,
            layout: None,
            mesh: None,
            rig: None,
        }
    }

    /// A BVH file's skeleton and layout with `motion`, its frames.
    fn from_bvh(bvh: Bvh, motion: Motion) -> Self {
        Self {
            motion: Some(motion),
            layout: Some(bvh.layout),
            ..Self::from_skeleton(bvh.skeleton)
        }
    }

    /// An MMD model (read from `path`) built into a skeleton, its mesh and its rig.
    fn from_mmd(path: &Path, model: &crate::mmd::MmdModel) -> Result<Self, FormatError> {
        let built = model.build().map_err(|source| FormatError::Model {
            path: path.to_owned(),
            source,
        })?;
        Ok(Self {
            mesh: Some(built.mesh),
            rig: Some(built.rig),
            ..Self::from_skeleton(built.skeleton)
        })
    }

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
#[cfg(feature = "fs")]
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
#[cfg(feature = "fs")]
#[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
pub fn open_animation(
    source: &str,
    scale: f64,
    animation: Option<&str>,
) -> Result<Document, FormatError> {
    if source == BUILTIN_HUMANOID {
        return Ok(open_builtin(scale));
    }
    let path = Path::new(source);
    let extension = lowercase_extension(path);
    match extension.as_deref() {
        Some("bvh") => {
            let bvh = Bvh::read(path, &BvhReadOptions { scale })?;
            let motion = bvh.to_motion().map_err(|source| FormatError::Bvh {
                path: path.to_owned(),
                source,
            })?;
            Ok(Document::from_bvh(bvh, motion))
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
            Ok(Document::from_skeleton(robot.skeleton.scaled(scale)))
        }
        Some("pmx" | "pmd") => {
            let model = read_mmd_model(path, scale)?;
            Document::from_mmd(path, &model)
        }
        Some("vmd") => Err(FormatError::Invalid {
            path: path.to_owned(),
            message: "a VMD motion needs its model: open the .pmx/.pmd and pass the motion with \
                      `--motion`"
                .to_owned(),
        }),
        Some("gltf" | "glb" | "vrm" | "vrma") => crate::gltf::open_document(path, scale, animation),
        _ => Err(FormatError::UnknownFormat {
            path: path.to_owned(),
        }),
    }
}

/// [`open`] for a file's contents already in memory (an upload): `name`'s extension picks the
/// format (`.bvh`, `.urdf`, `.pmx`, `.pmd`, `.gltf`, `.glb`, `.vrm`, `.vrma`). A `.gltf` must
/// embed its buffers (there is no directory to read them from).
///
/// # Errors
/// [`FormatError`] naming `name` and, for parse errors, line and column or byte offset.
pub fn open_bytes(name: &str, bytes: &[u8], scale: f64) -> Result<Document, FormatError> {
    let path = Path::new(name);
    let extension = lowercase_extension(path);
    let invalid = |message: String| FormatError::Invalid {
        path: path.to_owned(),
        message,
    };
    match extension.as_deref() {
        Some("bvh") => {
            let located = |source| FormatError::Bvh {
                path: path.to_owned(),
                source,
            };
            let bvh = Bvh::parse(bytes, &BvhReadOptions { scale }).map_err(located)?;
            let motion = bvh.to_motion().map_err(located)?;
            Ok(Document::from_bvh(bvh, motion))
        }
        Some("urdf") => {
            let text =
                std::str::from_utf8(bytes).map_err(|e| invalid(format!("not UTF-8 text: {e}")))?;
            let robot = crate::urdf::Urdf::parse(text).map_err(|source| FormatError::Urdf {
                path: path.to_owned(),
                source,
            })?;
            Ok(Document::from_skeleton(robot.skeleton.scaled(scale)))
        }
        Some(kind @ ("pmx" | "pmd")) => {
            let model = parse_mmd(path, bytes, kind == "pmd", scale)?;
            Document::from_mmd(path, &model)
        }
        Some(kind @ ("gltf" | "glb" | "vrm" | "vrma")) => {
            let gltf_error = |source| FormatError::Gltf {
                path: path.to_owned(),
                source,
            };
            let file = crate::gltf::GltfFile::parse(bytes, None).map_err(gltf_error)?;
            crate::gltf::document_from_file(&file, kind == "vrma", scale, None).map_err(gltf_error)
        }
        Some("vmd") => Err(invalid(
            "a VMD motion needs its model: open the .pmx/.pmd first".to_owned(),
        )),
        _ => Err(FormatError::UnknownFormat {
            path: path.to_owned(),
        }),
    }
}

/// The humanoid map of `skeleton`, the skeleton [`open`] gave for `source`: the map a `.vrm`
/// (or VRM-extended `.gltf`/`.glb`) or `.vrma` file declares, else the bones recognised from
/// joint names ([`HumanoidMap::recognise`]; `builtin:humanoid`, BVH, PMX/PMD, plain glTF).
/// What `ikarus retarget` and the Python `ikarus.retarget` start from before any JSON overrides
/// ([`crate::gltf::vrm::bone_map_from_json`]).
///
/// # Errors
/// [`FormatError::Io`] or [`FormatError::Gltf`] when the glTF file cannot be read again.
#[cfg(feature = "fs")]
pub fn humanoid_map(source: &str, skeleton: &Skeleton) -> Result<HumanoidMap, FormatError> {
    let path = Path::new(source);
    let extension = lowercase_extension(path);
    let declared = match extension.as_deref() {
        Some(kind @ ("gltf" | "glb" | "vrm" | "vrma")) if source != BUILTIN_HUMANOID => {
            let gltf_error = |source| FormatError::Gltf {
                path: path.to_owned(),
                source,
            };
            let file = crate::gltf::GltfFile::read(path)?;
            let skin = if kind == "vrma" {
                crate::gltf::vrma::Vrma::from_file(&file)
                    .map_err(gltf_error)?
                    .skeleton
            } else {
                file.skeleton(&crate::gltf::SkeletonSource::Auto)
                    .map_err(gltf_error)?
            };
            file.vrm_humanoid()
                .ok()
                .flatten()
                .map(|h| h.map(&skin))
                .filter(|m| !m.is_empty())
        }
        _ => None,
    };
    Ok(declared.unwrap_or_else(|| HumanoidMap::recognise(skeleton)))
}

/// Reads a PMX or PMD model (by extension); lengths in metres times `scale`.
///
/// # Errors
/// [`FormatError::Io`] or [`FormatError::Mmd`] with the byte offset.
#[cfg(feature = "fs")]
pub fn read_mmd_model(path: &Path, scale: f64) -> Result<crate::mmd::MmdModel, FormatError> {
    let bytes = read_file(path)?;
    let is_pmd = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pmd"));
    parse_mmd(path, &bytes, is_pmd, scale)
}

/// Parses PMD (`is_pmd`) or PMX bytes read from `path`; errors name `path`.
fn parse_mmd(
    path: &Path,
    bytes: &[u8],
    is_pmd: bool,
    scale: f64,
) -> Result<crate::mmd::MmdModel, FormatError> {
    let parsed = if is_pmd {
        crate::mmd::pmd::parse(bytes, scale)
    } else {
        crate::mmd::pmx::parse(bytes, scale)
    };
    parsed.map_err(|source| FormatError::Mmd {
        path: path.to_owned(),
        source,
    })
}

/// The extension of `path` in lower case; `None` when it has none or it is not UTF-8.
fn lowercase_extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// Reads a VMD motion; lengths in metres times `scale`.
///
/// # Errors
/// [`FormatError::Io`] or [`FormatError::Mmd`] with the byte offset.
#[cfg(feature = "fs")]
pub fn read_vmd(path: &Path, scale: f64) -> Result<crate::mmd::vmd::Vmd, FormatError> {
    let bytes = read_file(path)?;
    crate::mmd::vmd::Vmd::parse(&bytes, scale).map_err(|source| FormatError::Mmd {
        path: path.to_owned(),
        source,
    })
}

#[cfg(feature = "fs")]
fn open_builtin(scale: f64) -> Document {
    Document::from_skeleton(builtin_humanoid().scaled(scale))
}

/// The file's bytes, or [`FormatError::Io`] naming it.
#[cfg(feature = "fs")]
#[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
fn read_file(path: &Path) -> Result<Vec<u8>, FormatError> {
    std::fs::read(path).map_err(|source| FormatError::Io {
        path: path.to_owned(),
        source,
    })
}
