//! `ikarus convert` as a library call: a source read ([`crate::read_source`]), rescaled and
//! resampled, written by the output's extension ([`write_motion`]).

use std::path::Path;

use ikarus_core::Motion;

use crate::source::read_source_with_progress;
use crate::{JobError, ReadOptions, WriteOptions, write_motion};

/// What [`convert`] does besides reading and writing: the reading options, then the writing
/// options that apply to the output's format.
#[derive(Clone, Debug, Default)]
pub struct ConvertOptions<'a> {
    /// Scale, frame rate, glTF animation, VMD model / motion and IK mode.
    pub read: ReadOptions<'a>,
    /// `.glb`: add the motion into this glTF/GLB/VRM (its skin must be the source's skeleton).
    pub into: Option<&'a Path>,
    /// `.vrma`: humanoid bone overrides as JSON (`{"leftHand": "joint name", ...}`) over the
    /// source's declared or recognised map.
    pub map_json: Option<&'a str>,
}

/// What [`convert`] wrote.
#[derive(Clone, Debug)]
pub struct Converted {
    /// Joints of the skeleton.
    pub joints: usize,
    /// Frames written.
    pub frames: usize,
    /// Frames per second written.
    pub frame_rate: f64,
    /// A VMD's keyed bones that its model lacks (ignored).
    pub unmatched: Vec<String>,
    /// For a `.bvh` output, the joints whose names were made single tokens, as (name, name in
    /// the file) ([`ikarus_formats::bvh::token_names`]).
    pub renamed: Vec<(String, String)>,
    /// For a `.bvh` output of a skeleton with several roots, the channel-less `ROOT` written
    /// above them ([`ikarus_formats::bvh::shared_root`]).
    pub bvh_root: Option<String>,
}

/// Converts `input` (`builtin:humanoid` or a file; a skeleton without motion is written as one
/// rest-pose frame at 30 fps) to `output` (`.bvh`, `.glb`, `.vmd` or `.vrma`): what
/// `ikarus convert` runs. A `.vmd` output is written for the MMD model the skeleton comes from
/// (the input model, or a VMD input's `model`). `progress(done, total)` follows a VMD's
/// evaluation.
///
/// # Errors
/// Every error of [`read_source_with_progress`] and [`write_motion`]; a `.vmd` output for a
/// source that is not an MMD model.
pub fn convert(
    input: &str,
    output: &Path,
    options: &ConvertOptions<'_>,
    progress: impl FnMut(usize, usize),
) -> Result<Converted, JobError> {
    let extension = crate::extension(output);
    if !matches!(extension.as_deref(), Some("bvh" | "glb" | "vmd" | "vrma")) {
        return Err(JobError::UnknownOutput {
            path: output.to_owned(),
            expected: crate::write::OUTPUTS,
        });
    }
    let source = read_source_with_progress(input, &options.read, progress)?;
    if extension.as_deref() == Some("vmd") && source.rig.is_none() {
        return Err(JobError::NotApplicable {
            path: output.to_owned(),
            what: "a .vmd is written for an MMD model: convert a .pmx/.pmd (with its motion) or \
                   a .vmd (with its model)",
        });
    }
    let motion = if let Some(motion) = &source.motion {
        motion.clone()
    } else {
        rest_motion(&source.skeleton).map_err(|source| JobError::Motion {
            path: input.into(),
            source,
        })?
    };
    let is_vrma = extension.as_deref() == Some("vrma");
    let mmd_model = Path::new(&source.skeleton_file);
    let write = WriteOptions {
        layout: source.layout.clone(),
        into: options.into,
        model: (extension.as_deref() == Some("vmd")).then_some(mmd_model),
        scale: options.read.scale,
        humanoid: if is_vrma {
            Some(source.humanoid_map()?)
        } else {
            None
        },
        map_json: options.map_json,
        ..WriteOptions::default()
    };
    write_motion(output, &source.skeleton, &motion, &write)?;
    Ok(Converted {
        joints: source.skeleton.len(),
        frames: motion.len(),
        frame_rate: motion.frame_rate(),
        unmatched: source.unmatched,
        renamed: if extension.as_deref() == Some("bvh") {
            ikarus_formats::bvh::renamed_joints(&source.skeleton)
        } else {
            Vec::new()
        },
        bvh_root: if extension.as_deref() == Some("bvh") {
            ikarus_formats::bvh::shared_root(&source.skeleton)
        } else {
            None
        },
    })
}

/// One rest-pose frame at 30 fps: what a skeleton without motion is written as.
fn rest_motion(skeleton: &ikarus_core::Skeleton) -> Result<Motion, ikarus_core::MotionError> {
    let mut motion = Motion::for_skeleton(skeleton, 1.0 / 30.0)?;
    motion.push(skeleton.rest_pose())?;
    Ok(motion)
}
