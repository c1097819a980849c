//! A VMD motion played on its PMX/PMD model with the model's own IK: what `ikarus fk`,
//! `convert` and `retarget` (`--motion` / `--model`), the viewer's exports and Python's
//! `read(..., model=)` evaluate.

use std::path::{Path, PathBuf};

use ikarus_anim::mmd::{IkMode, MmdEvaluator, MmdSettings};
use ikarus_core::rig::RigError;
use ikarus_core::{LocalPose, ModelPose, Motion, Skeleton};
use ikarus_formats::mmd::Built;
use ikarus_formats::mmd::vmd::{BoundMotion, FRAMES_PER_SECOND, Vmd};

use crate::{JobError, positive};

/// A model with a VMD motion bound to it, ready to evaluate frames: each frame sampled from
/// the VMD's keys (Bézier curves), then inheritance and the model's IK chains in MMD's order
/// ([`MmdEvaluator`]), with the IK switches the VMD keys.
pub struct MmdPlayer {
    /// The model's skeleton, rig and mesh.
    pub built: Built,
    /// The model's name (what a VMD written for it names).
    pub model_name: String,
    /// Keyed bones of the VMD that the model lacks (ignored when playing).
    pub unmatched: Vec<String>,
    /// The motion's last keyed bone frame (VMD frames are 1/30 s).
    pub last_frame: u32,
    /// The model file (empty for a player made by [`MmdPlayer::new`]); errors name it.
    pub model_path: PathBuf,
    motion: BoundMotion,
    evaluator: MmdEvaluator,
    animated: LocalPose,
    model_frames: ModelPose,
}

impl MmdPlayer {
    /// Loads `model` (.pmx/.pmd) and `motion` (.vmd), lengths times `scale` (the formats'
    /// 0.08 m per MMD unit first), IK in `mode`.
    ///
    /// # Errors
    /// `model` is not a .pmx/.pmd file, `scale` is not finite and positive, a file cannot be
    /// read or parsed, the model cannot be built or its IK chains evaluated.
    pub fn open(model: &Path, motion: &Path, scale: f64, mode: IkMode) -> Result<Self, JobError> {
        let (name, built) = crate::load_mmd_model(model, scale)?;
        let vmd = ikarus_formats::read_vmd(motion, scale)?;
        let mut player = Self::new(built, name, &vmd, mode).map_err(|rig| JobError::Model {
            path: model.to_owned(),
            source: rig.into(),
        })?;
        model.clone_into(&mut player.model_path);
        Ok(player)
    }

    /// A player for a model already built (`built`, named `model_name`; from bytes, say) and a
    /// parsed `vmd` read with the same scale.
    ///
    /// # Errors
    /// The model's rig does not fit its skeleton ([`RigError`]).
    pub fn new(
        built: Built,
        model_name: String,
        vmd: &Vmd,
        mode: IkMode,
    ) -> Result<Self, RigError> {
        let bound = BoundMotion::new(vmd, &built.skeleton);
        let settings = MmdSettings {
            mode,
            ..MmdSettings::default()
        };
        let evaluator = MmdEvaluator::new(&built.skeleton, &built.rig, settings)?;
        Ok(Self {
            animated: built.skeleton.rest_pose(),
            model_frames: ModelPose::new(&built.skeleton),
            model_name,
            unmatched: bound.unmatched.clone(),
            last_frame: vmd.bones.iter().map(|k| k.frame).max().unwrap_or(0),
            model_path: PathBuf::new(),
            built,
            motion: bound,
            evaluator,
        })
    }

    /// The model's skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        &self.built.skeleton
    }

    /// Evaluates VMD frame `frame` (fractions interpolate the keys) with IK into `out` (local,
    /// parent space); returns the model-space frames.
    pub fn evaluate(&mut self, frame: f64, out: &mut LocalPose) -> &ModelPose {
        let skeleton = &self.built.skeleton;
        self.motion.sample(skeleton, frame, &mut self.animated);
        let enabled: Vec<bool> = self
            .evaluator
            .chain_names()
            .iter()
            .map(|n| self.motion.ik_enabled(n, frame))
            .collect();
        self.evaluator.evaluate(
            skeleton,
            &self.animated,
            &enabled,
            out,
            &mut self.model_frames,
        );
        &self.model_frames
    }

    /// How many frames [`MmdPlayer::motion`] makes at `fps` (default 30, the VMD's own): every
    /// `1/fps` seconds from frame 0 up to the last keyed frame.
    ///
    /// # Errors
    /// `fps` is not finite and positive.
    pub fn frame_count(&self, fps: Option<f64>) -> Result<usize, JobError> {
        let Some(fps) = fps else {
            return Ok(self.last_frame as usize + 1);
        };
        let fps = positive("fps", fps)?;
        // A hair of slack so that the last keyed frame counts when fps divides it exactly.
        Ok((f64::from(self.last_frame) * fps / FRAMES_PER_SECOND + 1e-9).floor() as usize + 1)
    }

    /// The motion with IK applied at `fps` frames per second (default 30: VMD frames
    /// `0..=last_frame` exactly; otherwise the keys are sampled at `i · 30 / fps` and IK runs
    /// on every sampled frame, as MMD plays at a higher rate). `progress(done, total)` is
    /// called after every frame.
    ///
    /// # Errors
    /// `fps` is not finite and positive.
    pub fn motion(
        &mut self,
        fps: Option<f64>,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Motion, JobError> {
        let count = self.frame_count(fps)?;
        let step = fps.map_or(1.0, |fps| FRAMES_PER_SECOND / fps);
        let frame_time = step / FRAMES_PER_SECOND;
        let path = self.model_path.clone();
        let motion_error = |source| JobError::Motion {
            path: path.clone(),
            source,
        };
        let mut motion = Motion::for_skeleton(self.skeleton(), frame_time).map_err(motion_error)?;
        let mut out = self.skeleton().rest_pose();
        for i in 0..count {
            self.evaluate(i as f64 * step, &mut out);
            motion.push(out.clone()).map_err(motion_error)?;
            progress(i + 1, count);
        }
        Ok(motion)
    }
}
