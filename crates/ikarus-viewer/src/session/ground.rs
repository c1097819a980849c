//! `ground`: the loaded humanoid's motion grounded on a terrain ([`ikarus_anim::ground`]), a
//! preset laid along its travel or a terrain file, and the terrain's heights to draw.

use glam::DVec3;
use ikarus_anim::ground::{Ground, GroundConfig, Heightfield, ground_motion};
use ikarus_anim::retarget::Character;
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{ModelPose, fk};
use ikarus_jobs::terrain::{Terrain, TerrainPreset};

use super::{Outcome, Session};
use crate::error::RequestError;
use crate::protocol::{GroundingInfo, Reply, SourceFormat, TerrainInfo};

/// Samples a side of the grid a plane is drawn with.
const PLANE_SAMPLES: usize = 2;

impl Session {
    /// Grounds the motion as it was before any grounding on `preset` or the terrain file
    /// `name` (`text`), or puts it back on its own floor with neither; replies with the
    /// motion (its `grounding` measured), the terrain to draw and the first frame.
    pub(crate) fn ground(
        &mut self,
        preset: Option<TerrainPreset>,
        name: Option<&str>,
        text: Option<&String>,
        base64: Option<&String>,
    ) -> Outcome {
        let model_name = self.loaded.name.clone();
        let nothing = || RequestError::NothingToGround {
            model: model_name.clone(),
        };
        if self.loaded.format == SourceFormat::Mmd {
            return Err(nothing());
        }
        let map = self.loaded.humanoid.clone().ok_or_else(nothing)?;
        let source = match (&self.ungrounded, &self.loaded.document.motion) {
            (Some(m), _) | (None, Some(m)) => m.clone(),
            (None, None) => return Err(nothing()),
        };
        let hips = map.joint(HumanoidBone::Hips).ok_or_else(nothing)?;
        // Grounding and its terrains work in metres: a clip in centimetres (most BVH) or
        // millimetres is grounded as metres and brought back.
        let unit = length_unit(&self.loaded.document.skeleton, &map);
        let skeleton = self.loaded.document.skeleton.scaled(1.0 / unit);
        let mut metres = source.clone();
        metres.scale_lengths(1.0 / unit);
        let terrain = match (preset, name) {
            (None, None) if text.is_none() && base64.is_none() => None,
            (Some(preset), None) if text.is_none() && base64.is_none() => {
                let mut model = ModelPose::new(&skeleton);
                let path: Vec<_> = metres
                    .frames()
                    .iter()
                    .map(|pose| {
                        fk::forward_kinematics(&skeleton, pose, &mut model);
                        model.position(hips)
                    })
                    .collect();
                Some(Terrain::Heightfield(
                    preset.heightfield(&path).ok_or_else(nothing)?,
                ))
            }
            (None, Some(name)) => {
                let bytes = crate::catalog::upload_bytes("ground", name, text, base64)?;
                let extension = std::path::Path::new(name)
                    .extension()
                    .and_then(|e| e.to_str())
                    .map(str::to_ascii_lowercase);
                Some(if matches!(extension.as_deref(), Some("glb" | "gltf")) {
                    Terrain::from_gltf(&bytes, None, name)?
                } else {
                    Terrain::from_json(&String::from_utf8_lossy(&bytes), name)?
                })
            }
            _ => return Err(RequestError::GroundArguments),
        };
        let (motion, grounding, info) = match &terrain {
            None => (source.clone(), None, None),
            Some(terrain) => {
                let character = Character {
                    skeleton: &skeleton,
                    map: &map,
                };
                let grounded = ground_motion(character, &metres, terrain, &GroundConfig::default())
                    .map_err(|source| RequestError::Ground {
                        model: model_name.clone(),
                        source,
                    })?;
                let offsets = &grounded.pelvis_offsets;
                let grounding = GroundingInfo {
                    contacts: grounded.contacts.iter().map(Vec::len).sum(),
                    unreached: grounded.unreached,
                    pelvis_range: [
                        offsets.iter().copied().fold(0.0, f64::min),
                        offsets.iter().copied().fold(0.0, f64::max),
                    ],
                };
                let mut info = terrain_info(terrain, &grounded.motion, &skeleton, hips);
                info.origin = info.origin.map(|v| v * unit);
                info.cell *= unit;
                for h in info.heights.iter_mut().flatten() {
                    *h *= unit;
                }
                let mut motion = grounded.motion;
                motion.scale_lengths(unit);
                (motion, Some(grounding), Some(info))
            }
        };
        let layout = self.loaded.document.layout.clone();
        self.set_motion(motion, layout);
        self.ungrounded = terrain.is_some().then_some(source);
        self.keys.clear();
        let mut motion_info = self.motion_info().ok_or_else(nothing)?;
        motion_info.grounding = grounding;
        let mut replies = vec![Reply::Motion(motion_info), Reply::Terrain { terrain: info }];
        replies.extend(self.show_frame(0)?);
        Ok(replies)
    }
}

/// The skeleton's length unit in metres' terms: 1 for metres, 100 for centimetres, 1000 for
/// millimetres — the power of ten nearest its legs' length over 0.85 m (an adult's).
fn length_unit(
    skeleton: &ikarus_core::Skeleton,
    map: &ikarus_core::humanoid_map::HumanoidMap,
) -> f64 {
    let mut rest = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
    let leg = HumanoidBone::LEGS[0].map(|b| map.joint(b).map(|j| rest.position(j)));
    let length = match leg {
        [Some(hip), Some(knee), Some(ankle)] => hip.distance(knee) + knee.distance(ankle),
        _ => return 1.0,
    };
    if !(length.is_finite() && length > 0.0) {
        return 1.0;
    }
    #[allow(clippy::cast_possible_truncation)] // a handful of decades
    let decades = (length / 0.85).log10().round() as i32;
    10f64.powi(decades)
}

/// The heights to draw: a heightfield's own grid; a plane sampled over the motion's hips
/// path with the presets' margin.
fn terrain_info(
    terrain: &Terrain,
    motion: &ikarus_core::Motion,
    skeleton: &ikarus_core::Skeleton,
    hips: ikarus_core::JointId,
) -> TerrainInfo {
    let grid = |h: &Heightfield| TerrainInfo {
        origin: h.origin,
        cell: h.cell,
        heights: h.heights.clone(),
    };
    match terrain {
        Terrain::Heightfield(h) => grid(h),
        // A mesh is drawn as the heights of a grid sampled under it (none: its lowest point).
        Terrain::Mesh(mesh) => {
            let (lo, hi) = mesh.triangles().iter().flatten().fold(
                (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
                |(lo, hi), p| (lo.min(*p), hi.max(*p)),
            );
            let cell = ((hi.x - lo.x).max(hi.z - lo.z) / 255.0).max(1e-6);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ≤ 256
            let count = |span: f64| ((span / cell).ceil() as usize + 1).min(256);
            #[allow(clippy::cast_precision_loss)] // sample indices
            let heights = (0..count(hi.z - lo.z))
                .map(|i| {
                    (0..count(hi.x - lo.x))
                        .map(|j| {
                            let (x, z) = (lo.x + j as f64 * cell, lo.z + i as f64 * cell);
                            mesh.sample(x, z).map_or(lo.y, |(h, _)| h)
                        })
                        .collect()
                })
                .collect();
            TerrainInfo {
                origin: [lo.x, lo.z],
                cell,
                heights,
            }
        }
        Terrain::Plane(plane) => {
            let mut model = ModelPose::new(skeleton);
            let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
            for pose in motion.frames() {
                fk::forward_kinematics(skeleton, pose, &mut model);
                let p = model.position(hips);
                (lo, hi) = (
                    [lo[0].min(p.x), lo[1].min(p.z)],
                    [hi[0].max(p.x), hi[1].max(p.z)],
                );
            }
            let margin = 1.5;
            let cell = (hi[0] - lo[0]).max(hi[1] - lo[1]) + 2.0 * margin;
            let origin = [lo[0] - margin, lo[1] - margin];
            #[allow(clippy::cast_precision_loss)] // two samples
            let heights = (0..PLANE_SAMPLES)
                .map(|i| {
                    (0..PLANE_SAMPLES)
                        .map(|j| {
                            let (x, z) = (origin[0] + j as f64 * cell, origin[1] + i as f64 * cell);
                            plane.sample(x, z).map_or(0.0, |(h, _)| h)
                        })
                        .collect()
                })
                .collect();
            TerrainInfo {
                origin,
                cell,
                heights,
            }
        }
    }
}
