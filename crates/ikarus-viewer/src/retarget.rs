//! `retarget`: an uploaded motion onto the loaded humanoid ([`ikarus_anim::retarget`]), with
//! the source drawn beside it and the held contacts marked.

use glam::DVec3;
use ikarus_anim::retarget::{self, Character, RetargetConfig};
use ikarus_core::{ModelPose, fk};

use crate::protocol::{OverlayInfo, Reply, SourceFormat};
use crate::session::{Outcome, Session};

/// What a retargeted motion shows beside the target, per frame.
#[derive(Clone, Debug)]
pub(crate) struct RetargetOverlay {
    /// The source's parent indices.
    parents: Vec<Option<usize>>,
    /// Per frame, the source's joints (mapped, moved aside).
    frames: Vec<Vec<[f64; 3]>>,
    /// Per frame, the anchors of the contacts held.
    contacts: Vec<Vec<[f64; 3]>>,
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
    /// Retargets the uploaded motion `name` onto the loaded humanoid; the result becomes the
    /// loaded motion and the overlay is kept for the `pose` replies of its frames.
    pub(crate) fn retarget(
        &mut self,
        name: &str,
        text: Option<String>,
        base64: Option<String>,
    ) -> Outcome {
        let bytes = match (text, base64) {
            (Some(text), None) => text.into_bytes(),
            (None, Some(base64)) => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(base64.trim())
                    .map_err(|e| format!("{name}: the upload is not valid base64: {e}"))?
            }
            _ => return Err("retarget takes `name` with `text` or `base64`".to_owned()),
        };
        if self.loaded.format == SourceFormat::Mmd {
            return Err(format!(
                "{name}: retargeting onto an MMD model is done by `ikarus retarget … --to {} --out \
                 motion.vmd`; load that VMD here",
                self.loaded.name
            ));
        }
        let target_map = self.loaded.humanoid.clone().ok_or_else(|| {
            format!(
                "{name}: {} has no humanoid bones to retarget onto",
                self.loaded.name
            )
        })?;
        let source = crate::catalog::parse_upload(name, &bytes)?;
        let motion = source
            .document
            .motion
            .as_ref()
            .ok_or_else(|| format!("{name}: no motion to retarget"))?;
        let source_map = source
            .humanoid
            .clone()
            .ok_or_else(|| format!("{name}: no humanoid bones recognised"))?;
        let skeleton = &source.document.skeleton;
        let target = &self.loaded.document.skeleton;
        let from = Character {
            skeleton,
            map: &source_map,
        };
        let to = Character {
            skeleton: target,
            map: &target_map,
        };
        let result = retarget::retarget(from, motion, to, &RetargetConfig::default())
            .map_err(|e| format!("{name} onto {}: {e}", self.loaded.name))?;
        // Aside by one leg length and a half, to the target's right.
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
        let overlay = RetargetOverlay {
            parents: skeleton
                .joints()
                .map(|j| skeleton.parent(j).map(ikarus_core::JointId::index))
                .collect(),
            frames,
            contacts,
        };
        self.set_motion(result.motion, None);
        self.overlay = Some(overlay);
        self.keys.clear();
        let info = self.motion_info().ok_or("the motion did not bind")?;
        let mut replies = vec![Reply::Motion(info)];
        replies.extend(self.show_frame(0)?);
        Ok(replies)
    }
}
