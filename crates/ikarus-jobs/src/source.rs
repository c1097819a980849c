//! Any motion source as a skeleton and a motion: the files [`ikarus_formats::open_animation`]
//! reads, and VMD motions played on their PMX/PMD model with IK ([`MmdPlayer`]).

use std::path::Path;

use ikarus_anim::mmd::IkMode;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::rig::Rig;
use ikarus_core::{Motion, Skeleton};
use ikarus_formats::bvh::BvhLayout;

use crate::{JobError, MmdPlayer, positive};

/// How [`read_source`] reads.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions<'a> {
    /// Multiply lengths by this factor (0.01: centimetres to metres). Default 1.
    pub scale: f64,
    /// Resample to this many frames per second (slerp between frames; VMD motions are
    /// evaluated with IK at every sampled frame instead). Default: the file's own rate.
    pub fps: Option<f64>,
    /// The glTF animation to read, by name. Default: the first.
    pub animation: Option<&'a str>,
    /// For a `.vmd` source: the PMX/PMD model it plays on.
    pub model: Option<&'a Path>,
    /// For a PMX/PMD source: a `.vmd` motion played on it.
    pub motion: Option<&'a Path>,
    /// MMD IK for VMD motions: compatible (MMD's budget, default) or exact.
    pub mode: IkMode,
}

impl Default for ReadOptions<'_> {
    fn default() -> Self {
        Self {
            scale: 1.0,
            fps: None,
            animation: None,
            model: None,
            motion: None,
            mode: IkMode::Compatible,
        }
    }
}

/// A source read: skeleton, motion and what writers and retargeting need from its file.
#[derive(Clone, Debug)]
pub struct Source {
    /// The skeleton (a VMD's: its model's).
    pub skeleton: Skeleton,
    /// The motion; `None` for a file without one (the built-in humanoid, a URDF, a model
    /// without a VMD).
    pub motion: Option<Motion>,
    /// A BVH source's channel layout.
    pub layout: Option<BvhLayout>,
    /// An MMD model's rig (inheritance and IK chains).
    pub rig: Option<Rig>,
    /// The file the skeleton came from (a VMD's model), which declares or implies its
    /// humanoid map ([`Source::humanoid_map`]).
    pub skeleton_file: String,
    /// A VMD's keyed bones that its model lacks (ignored).
    pub unmatched: Vec<String>,
}

impl Source {
    /// The humanoid map of the skeleton: the one a VRM/VRMA file declares, else recognised
    /// from joint names ([`ikarus_formats::humanoid_map`]).
    ///
    /// # Errors
    /// The file's declared map cannot be read.
    pub fn humanoid_map(&self) -> Result<HumanoidMap, JobError> {
        Ok(ikarus_formats::humanoid_map(
            &self.skeleton_file,
            &self.skeleton,
        )?)
    }
}

/// Reads `source` (`builtin:humanoid` or a file, by extension): [`read_source_with_progress`]
/// without progress.
///
/// # Errors
/// As [`read_source_with_progress`].
pub fn read_source(source: &str, options: &ReadOptions<'_>) -> Result<Source, JobError> {
    read_source_with_progress(source, options, |_, _| {})
}

/// Reads `source`: a `.vmd` played on `options.model`, a `.pmx`/`.pmd` with `options.motion`
/// played on it, or any file [`ikarus_formats::open_animation`] reads; lengths times
/// `options.scale`, resampled to `options.fps`. `progress(done, total)` is called after each
/// frame a VMD evaluates.
///
/// # Errors
/// A VMD without its model, a model or motion given where it does not apply, a scale or
/// frame rate that is not finite and positive, and every reading error (file, line, column).
pub fn read_source_with_progress(
    source: &str,
    options: &ReadOptions<'_>,
    progress: impl FnMut(usize, usize),
) -> Result<Source, JobError> {
    let scale = positive("scale", options.scale)?;
    if let Some(fps) = options.fps {
        positive("fps", fps)?;
    }
    let path = Path::new(source);
    let vmd_on_model = if crate::is_vmd(path) {
        if options.motion.is_some() {
            return Err(JobError::NotApplicable {
                path: path.to_owned(),
                what: "a motion plays on a .pmx/.pmd model, not on a .vmd",
            });
        }
        let model = options.model.ok_or_else(|| JobError::NeedsModel {
            path: path.to_owned(),
        })?;
        Some((model, path))
    } else {
        if options.model.is_some() {
            return Err(JobError::NotApplicable {
                path: path.to_owned(),
                what: "a model is given for a .vmd source only",
            });
        }
        options.motion.map(|motion| (path, motion))
    };
    if let Some((model, vmd)) = vmd_on_model {
        let mut player = MmdPlayer::open(model, vmd, scale, options.mode)?;
        let motion = player.motion(options.fps, progress)?;
        return Ok(Source {
            motion: Some(motion),
            layout: None,
            rig: Some(player.built.rig),
            skeleton_file: model.to_string_lossy().into_owned(),
            unmatched: player.unmatched,
            skeleton: player.built.skeleton,
        });
    }
    let document = ikarus_formats::open_animation(source, scale, options.animation)?;
    let motion = match (document.motion, options.fps) {
        (Some(motion), Some(fps)) => {
            Some(
                motion
                    .resampled(1.0 / fps)
                    .map_err(|source| JobError::Motion {
                        path: path.to_owned(),
                        source,
                    })?,
            )
        }
        (motion, _) => motion,
    };
    Ok(Source {
        skeleton: document.skeleton,
        motion,
        layout: document.layout,
        rig: document.rig,
        skeleton_file: source.to_owned(),
        unmatched: Vec::new(),
    })
}
