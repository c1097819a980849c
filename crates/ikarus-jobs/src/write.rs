//! A motion written by the output's extension: what `ikarus convert`, `ikarus retarget` and
//! Python's `write` do.

use std::path::Path;

use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::rig::Rig;
use ikarus_core::{Motion, Skeleton};
use ikarus_formats::bvh::{Bvh, BvhLayout};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};
use ikarus_formats::mmd::vmd::{FRAMES_PER_SECOND, Vmd};

use crate::JobError;

/// The extensions [`write_motion`] takes.
pub const OUTPUTS: &str = ".bvh, .glb, .vmd or .vrma";

/// How [`write_motion`] writes, per format.
#[derive(Clone, Debug)]
pub struct WriteOptions<'a> {
    /// `.bvh`: the channel layout (a BVH source's own); used when it has the skeleton's joint
    /// count, else one is made for the motion.
    pub layout: Option<BvhLayout>,
    /// `.glb`: an existing glTF/GLB/VRM file whose skin is the skeleton (the skeleton read from
    /// it); the output is that file with the motion added as an animation (mesh, materials and
    /// VRM data kept). Default: a new GLB of the skeleton, its skin and the animation.
    pub into: Option<&'a Path>,
    /// `.glb`: the animation's name. Default `"motion"`.
    pub animation: &'a str,
    /// `.vmd`: the PMX/PMD file the skeleton was read from. Each IK chain's goal bone is moved
    /// onto its effector, so MMD's own IK finds the limbs where the motion puts them.
    pub model: Option<&'a Path>,
    /// `.vmd`: the scale the skeleton was read with (lengths are divided by it). Default 1.
    pub scale: f64,
    /// `.vrma`: the skeleton's humanoid map. Default: recognised from joint names.
    pub humanoid: Option<HumanoidMap>,
    /// `.vrma`: bone overrides as JSON (`{"leftHand": "joint name", ...}`, VRM 1.0 bone names,
    /// what `--map` files hold) over [`WriteOptions::humanoid`].
    pub map_json: Option<&'a str>,
}

impl Default for WriteOptions<'_> {
    fn default() -> Self {
        Self {
            layout: None,
            into: None,
            animation: "motion",
            model: None,
            scale: 1.0,
            humanoid: None,
            map_json: None,
        }
    }
}

/// Writes `motion` on `skeleton` to `path`, the format by extension: `.bvh`, `.glb` (new, or
/// added into [`WriteOptions::into`]), `.vmd` (for [`WriteOptions::model`]) or `.vrma` (the
/// humanoid bones through [`WriteOptions::humanoid`] and [`WriteOptions::map_json`]).
///
/// # Errors
/// Another extension; a motion of another skeleton; options that do not apply to the
/// extension (`into` for anything but `.glb`, `model` for anything but `.vmd`, a map for
/// anything but `.vrma`); a `.vmd` without its model or for a model with other bones; an
/// `into` file whose skin is not the skeleton; an incomplete humanoid map for `.vrma`; a
/// failed write.
pub fn write_motion(
    path: &Path,
    skeleton: &Skeleton,
    motion: &Motion,
    options: &WriteOptions<'_>,
) -> Result<(), JobError> {
    let extension = crate::extension(path);
    let extension = extension.as_deref();
    if motion.joint_count() != skeleton.len() {
        return Err(JobError::Motion {
            path: path.to_owned(),
            source: ikarus_core::MotionError::JointCount {
                expected: skeleton.len(),
                found: motion.joint_count(),
            },
        });
    }
    let not_applicable = |what| {
        Err(JobError::NotApplicable {
            path: path.to_owned(),
            what,
        })
    };
    if options.into.is_some() && extension != Some("glb") {
        return not_applicable("a motion is added into a glTF/VRM file only as a .glb output");
    }
    if options.model.is_some() && extension != Some("vmd") {
        return not_applicable("a model is given for a .vmd output only");
    }
    if (options.map_json.is_some() || options.humanoid.is_some()) && extension != Some("vrma") {
        return not_applicable("a humanoid bone map is given for a .vrma output only");
    }
    let write_error = |message: String| JobError::Write {
        path: path.to_owned(),
        message,
    };
    let bytes = match extension {
        Some("bvh") => {
            let layout = options
                .layout
                .clone()
                .filter(|l| l.joints.len() == skeleton.len())
                .unwrap_or_else(|| BvhLayout::for_motion(skeleton, Some(motion)));
            let bvh = Bvh::from_motion(skeleton, motion, layout)
                .map_err(|e| write_error(e.to_string()))?;
            bvh.write(path)?;
            return Ok(());
        }
        Some("glb") => match options.into {
            Some(into) => added_into(into, skeleton, motion, options.animation)?,
            None => ikarus_formats::gltf::write_glb(skeleton, Some(motion), options.animation),
        },
        Some("vmd") => {
            let model = options.model.ok_or_else(|| JobError::NeedsModel {
                path: path.to_owned(),
            })?;
            for_model(path, model, options.scale, skeleton, motion)?
        }
        Some("vrma") => {
            let map = options
                .humanoid
                .clone()
                .unwrap_or_else(|| HumanoidMap::recognise(skeleton));
            let map = match options.map_json {
                Some(json) => ikarus_formats::gltf::vrm::bone_map_from_json(json, skeleton, map)
                    .map_err(|m| write_error(format!("bone map: {m}")))?,
                None => map,
            };
            ikarus_formats::gltf::vrma::write_humanoid_vrma(skeleton, &map, motion)
                .map_err(|e| write_error(e.to_string()))?
        }
        _ => {
            return Err(JobError::UnknownOutput {
                path: path.to_owned(),
                expected: OUTPUTS,
            });
        }
    };
    std::fs::write(path, bytes).map_err(|source| {
        JobError::Format(ikarus_formats::FormatError::Io {
            path: path.to_owned(),
            source,
        })
    })
}

/// The glTF/GLB/VRM file `into` with `motion` added as the animation `name`; its skin must be
/// `skeleton`.
fn added_into(
    into: &Path,
    skeleton: &Skeleton,
    motion: &Motion,
    name: &str,
) -> Result<Vec<u8>, JobError> {
    let file = GltfFile::read(into)?;
    let gltf_error = |source| ikarus_formats::FormatError::Gltf {
        path: into.to_owned(),
        source,
    };
    let skin = file.skeleton(&SkeletonSource::Auto).map_err(gltf_error)?;
    if skin.skeleton.names() != skeleton.names() {
        return Err(JobError::NotTheSkeleton {
            path: into.to_owned(),
            what: "its skin's joints are not the skeleton's".to_owned(),
        });
    }
    Ok(file.with_motion(&skin, motion, name).map_err(gltf_error)?)
}

/// The VMD bytes of `motion` for the PMX/PMD file `model` (read with `scale`), which must be
/// the skeleton's; errors name `path`, the output.
fn for_model(
    path: &Path,
    model: &Path,
    scale: f64,
    skeleton: &Skeleton,
    motion: &Motion,
) -> Result<Vec<u8>, JobError> {
    let (name, built) = crate::load_mmd_model(model, scale)?;
    if built.skeleton.names() != skeleton.names() {
        return Err(JobError::NotTheSkeleton {
            path: model.to_owned(),
            what: "the model's bones are not the skeleton's joints".to_owned(),
        });
    }
    vmd_bytes(skeleton, &built.rig, &name, motion, scale).map_err(|source| JobError::Vmd {
        path: path.to_owned(),
        source,
    })
}

/// `motion` on an MMD model (`skeleton` and `rig` built from it, `model_name` its name) as VMD
/// bytes, lengths divided by `scale`: every joint keyed at every frame, and the IK of every
/// chain switched off at frame 0 ([`Vmd::switch_ik_off`]), so MMD plays the limbs exactly as
/// keyed (its IK re-solving the legs within its own budget put ankles up to 2.7 cm off on the
/// Miku PMD). Each goal bone is also moved onto its effector
/// ([`ikarus_anim::retarget::follow_ik_goals`]), so switching the IK back on in MMD keeps
/// the limbs nearly where they are. VMD plays at 30 frames per
/// second: a motion at another rate is resampled to it first (a 120 fps capture would
/// otherwise play four times slower).
///
/// # Errors
/// [`VmdBytesError`]: the motion does not resample to 30 fps, or a joint name Shift-JIS cannot
/// hold.
pub fn vmd_bytes(
    skeleton: &Skeleton,
    rig: &Rig,
    model_name: &str,
    motion: &Motion,
    scale: f64,
) -> Result<Vec<u8>, VmdBytesError> {
    // VMD frame `i` is `i / 30` s: a motion at another rate is resampled first.
    let vmd_frame_time = 1.0 / FRAMES_PER_SECOND;
    let mut clip = if (motion.frame_time() - vmd_frame_time).abs() > 1e-9 * vmd_frame_time {
        motion
            .resampled(vmd_frame_time)
            .map_err(VmdBytesError::Resample)?
    } else {
        motion.clone()
    };
    ikarus_anim::retarget::follow_ik_goals(skeleton, rig, &mut clip);
    let mut vmd = Vmd::from_frames(skeleton, clip.frames(), model_name)?;
    let goals: Vec<&str> = rig.ik.iter().map(|c| skeleton.name(c.goal)).collect();
    vmd.switch_ik_off(&goals)?;
    Ok(vmd.write(scale)?)
}

/// Why [`vmd_bytes`] cannot write a motion.
#[derive(Debug, thiserror::Error)]
pub enum VmdBytesError {
    /// The motion could not be resampled to VMD's 30 frames per second.
    #[error("resampling to 30 fps: {0}")]
    Resample(ikarus_core::MotionError),
    /// A name or count VMD cannot hold.
    #[error(transparent)]
    Vmd(#[from] ikarus_formats::mmd::vmd::VmdWriteError),
}
