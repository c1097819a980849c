//! `retarget`: an uploaded motion onto the loaded humanoid ([`ikarus_anim::retarget`]), with
//! the source drawn beside it and the held contacts marked. Sources: every format the page
//! opens with a motion, and VMD motions played with IK on their model
//! ([`ikarus_jobs::MmdPlayer`]). Targets: any loaded humanoid, PMX/PMD models included (the
//! result then plays from the VMD `ikarus retarget` would write, through the model's own IK).

use glam::DVec3;
use ikarus_anim::retarget::{self, Character, RetargetConfig};
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{ModelPose, Motion, Skeleton, fk};
use ikarus_formats::mmd::vmd::{FRAMES_PER_SECOND, Vmd};
use ikarus_jobs::{IkMode, MmdPlayer};

use super::{Outcome, Session, Upload};
use crate::catalog::{check_upload_size, decode_upload};
use crate::error::{LoadError, RequestError};
use crate::protocol::{OverlayInfo, Reply, SourceFormat};

/// A `retarget` request's upload: the motion file and, for a `.vmd`, the model it plays on.
#[derive(Clone, Debug)]
pub(crate) struct MotionUpload {
    /// The motion file (text for `.bvh`).
    pub file: Upload,
    /// For a `.vmd`: the PMX/PMD model's file name.
    pub model_name: Option<String>,
    /// For a `.vmd`: the model's bytes in base64.
    pub model_base64: Option<String>,
}

/// A source motion ready to retarget: its skeleton, humanoid map and frames.
pub(crate) struct SourceMotion {
    pub(crate) skeleton: Skeleton,
    pub(crate) map: HumanoidMap,
    pub(crate) motion: Motion,
}

/// What a retargeted motion shows beside the target, per frame.
#[derive(Clone, Debug)]
pub(crate) struct RetargetOverlay {
    /// The source's parent indices.
    pub(crate) parents: Vec<Option<usize>>,
    /// Per frame, the source's joints (mapped, moved aside).
    pub(crate) frames: Vec<Vec<[f64; 3]>>,
    /// Per frame, the anchors of the contacts held (after a `track`: the trackers).
    pub(crate) contacts: Vec<Vec<[f64; 3]>>,
}

impl RetargetOverlay {
    /// The overlay of frame `index`, if the motion has it.
    pub(crate) fn at(&self, index: usize) -> Option<OverlayInfo> {
        Some(OverlayInfo {
            source: self.frames.get(index)?.clone(),
            parents: self.parents.clone(),
            contacts: self.contacts.get(index)?.clone(),
        })
    }
}

impl Session {
    /// Retargets the uploaded motion onto the loaded humanoid; the result becomes the loaded
    /// motion (for a PMX/PMD target, a VMD bound to the model) and the overlay is kept for the
    /// `pose` replies of its frames.
    pub(crate) fn retarget(&mut self, upload: &MotionUpload) -> Outcome {
        let name = upload.file.name.as_str();
        let bytes = upload.file.bytes("retarget")?;
        let target_map = self.humanoid_target(name)?;
        let onto_mmd = self.loaded.format == SourceFormat::Mmd;
        let source = if ikarus_jobs::is_vmd(std::path::Path::new(name)) {
            self.played_vmd(upload, &bytes)?
        } else {
            if upload.model_name.is_some() || upload.model_base64.is_some() {
                return Err(RequestError::ModelWithoutVmd {
                    name: name.to_owned(),
                });
            }
            uploaded_source(name, &bytes)?
        };
        // An MMD target plays a VMD: 30 frames per second (a file's rounded 0.0333333 s is
        // taken as 1/30 s).
        let at_30 = (source.motion.frame_time() * FRAMES_PER_SECOND - 1.0).abs() < 1e-4;
        let motion = if onto_mmd && !at_30 {
            source
                .motion
                .resampled(1.0 / FRAMES_PER_SECOND)
                .map_err(|source| RequestError::Resample {
                    name: name.to_owned(),
                    source,
                })?
        } else {
            source.motion
        };
        let skeleton = &source.skeleton;
        let target = &self.loaded.document.skeleton;
        let from = Character {
            skeleton,
            map: &source.map,
        };
        let to = Character {
            skeleton: target,
            map: &target_map,
        };
        let result = retarget::retarget(from, &motion, to, &RetargetConfig::default()).map_err(
            |source| RequestError::Retarget {
                name: name.to_owned(),
                target: self.loaded.name.clone(),
                source,
            },
        )?;
        let overlay = overlay(skeleton, &motion, target, &result);
        if onto_mmd {
            self.bind_retargeted(name, &result.motion)?;
        } else {
            self.set_motion(result.motion, None);
        }
        self.overlay = Some(overlay);
        self.keys.clear();
        let info = self.motion_info().ok_or(RequestError::MotionNotBound)?;
        let mut replies = vec![Reply::Motion(info)];
        replies.extend(self.show_frame(0)?);
        Ok(replies)
    }

    /// A `.vmd` upload played with IK ([`MmdPlayer`], MMD's compatible mode, 30 fps) on the
    /// model sent with it, else on the loaded PMX/PMD model.
    fn played_vmd(
        &self,
        upload: &MotionUpload,
        bytes: &[u8],
    ) -> Result<SourceMotion, RequestError> {
        let name = upload.file.name.as_str();
        let vmd = Vmd::parse(bytes, 1.0).map_err(|source| LoadError::Mmd {
            name: name.to_owned(),
            source,
        })?;
        let (built, model_name, model) = match (&upload.model_name, &upload.model_base64) {
            (Some(model), Some(base64)) => {
                let model_bytes = decode_upload(model, base64)?;
                check_upload_size(model, &model_bytes)?;
                if !ikarus_jobs::is_mmd_model(std::path::Path::new(model)) {
                    return Err(RequestError::NotMmdModel {
                        model: model.clone(),
                    });
                }
                let parsed = crate::catalog::parse_mmd_model(model, &model_bytes)?;
                let built = parsed.build().map_err(|source| LoadError::Model {
                    name: model.clone(),
                    source,
                })?;
                (built, parsed.name, model.clone())
            }
            (None, None) => {
                let loaded = self.loaded.mmd_model.as_ref().ok_or_else(|| {
                    RequestError::RetargetVmdNeedsModel {
                        name: name.to_owned(),
                        model: self.loaded.name.clone(),
                    }
                })?;
                (
                    loaded.built.clone(),
                    loaded.name.clone(),
                    self.loaded.name.clone(),
                )
            }
            _ => return Err(RequestError::IncompleteModel),
        };
        let mut player =
            MmdPlayer::new(built, model_name, &vmd, IkMode::Compatible).map_err(|source| {
                LoadError::Rig {
                    name: model.clone(),
                    source,
                }
            })?;
        let keyed = vmd.keyed_bones().len();
        if keyed > 0 && player.unmatched.len() == keyed {
            return Err(RequestError::NoKeyedBones {
                name: name.to_owned(),
                keyed,
                model,
            });
        }
        let motion = player
            .motion(None, |_, _| {})
            .map_err(|source| RequestError::Play {
                name: name.to_owned(),
                source: Box::new(source),
            })?;
        let skeleton = player.built.skeleton;
        let map = HumanoidMap::recognise(&skeleton);
        if map.is_empty() {
            return Err(RequestError::NoHumanoidSource { name: model });
        }
        Ok(SourceMotion {
            skeleton,
            map,
            motion,
        })
    }

    /// Binds the motion retargeted onto the loaded MMD model as the VMD written for it
    /// ([`ikarus_jobs::vmd_bytes`]: IK bones on their effectors, f32 keys), read back: the
    /// viewer then plays what MMD would, through the model's IK.
    fn bind_retargeted(&mut self, name: &str, motion: &Motion) -> Result<(), RequestError> {
        let skeleton = &self.loaded.document.skeleton;
        let (Some(model), Some(rig), Some(mmd)) = (
            self.loaded.mmd_model.as_ref(),
            self.loaded.document.rig.as_ref(),
            self.mmd.as_mut(),
        ) else {
            return Err(RequestError::NoRigToPlayOn {
                model: self.loaded.name.clone(),
            });
        };
        let bytes =
            ikarus_jobs::vmd_bytes(skeleton, rig, &model.name, motion, 1.0).map_err(|source| {
                RequestError::WriteVmd {
                    name: name.to_owned(),
                    target: self.loaded.name.clone(),
                    source,
                }
            })?;
        let vmd = Vmd::parse(&bytes, 1.0).map_err(|source| RequestError::ReadWrittenVmd {
            name: name.to_owned(),
            source,
        })?;
        mmd.set_motion(&vmd, skeleton);
        self.loaded.vmd = Some(vmd);
        Ok(())
    }
}

/// An uploaded motion file (BVH, glTF/GLB/VRM with an animation, VRMA).
pub(crate) fn uploaded_source(name: &str, bytes: &[u8]) -> Result<SourceMotion, RequestError> {
    let source = crate::catalog::parse_upload(name, bytes)?;
    let map = source
        .humanoid
        .ok_or_else(|| RequestError::NoHumanoidSource {
            name: name.to_owned(),
        })?;
    let motion = source
        .document
        .motion
        .ok_or_else(|| RequestError::NoMotionToRetarget {
            name: name.to_owned(),
        })?;
    Ok(SourceMotion {
        skeleton: source.document.skeleton,
        map,
        motion,
    })
}

/// The source's joints per frame (mapped onto the target's scale and floor, moved aside by
/// a leg length and a half to the target's right) and the contacts held at each frame.
fn overlay(
    skeleton: &Skeleton,
    motion: &Motion,
    target: &Skeleton,
    result: &retarget::Retargeted,
) -> RetargetOverlay {
    let up = result.feet.target_body.conjugate() * DVec3::Y;
    let right = result.feet.target_body.conjugate() * DVec3::NEG_X;
    let mut rest = ModelPose::new(target);
    fk::forward_kinematics(target, &target.rest_pose(), &mut rest);
    let height = rest
        .positions()
        .map(|p| p.dot(up))
        .fold(f64::NEG_INFINITY, f64::max)
        - result.feet.floor;
    let aside = right * height.max(0.1) * 0.6;
    let mut model = ModelPose::new(skeleton);
    let frames = motion
        .frames()
        .iter()
        .map(|pose| {
            fk::forward_kinematics(skeleton, pose, &mut model);
            model
                .positions()
                .map(|p| (result.root.map_point(p) + aside).to_array())
                .collect()
        })
        .collect();
    let contacts = (0..result.motion.len())
        .map(|f| {
            result
                .contacts
                .iter()
                .filter(|c| (c.start..=c.end).contains(&f))
                .map(|c| c.anchor.to_array())
                .collect()
        })
        .collect();
    RetargetOverlay {
        parents: skeleton
            .joints()
            .map(|j| skeleton.parent(j).map(ikarus_core::JointId::index))
            .collect(),
        frames,
        contacts,
    }
}
