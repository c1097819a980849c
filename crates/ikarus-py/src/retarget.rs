//! `retarget`: a humanoid motion onto another humanoid with planted feet
//! (`ikarus_anim::retarget`, what `ikarus retarget` runs), with its metrics.

use std::path::Path;
use std::sync::Arc;

use ikarus_anim::retarget::{Character, ContactConfig, RetargetConfig, measure};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_formats::bvh::BvhLayout;
use ikarus_jobs::{ReadOptions, read_source};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::model::{Motion, Skeleton, bone_map_json, skeleton_motion_pair};
use crate::{no_panic, value_error};

/// A character as given: a source name, or objects (their map recognised from joint names).
pub(crate) enum Given {
    Source(String),
    Objects(Arc<ikarus_core::Skeleton>, Option<ikarus_core::Motion>),
}

/// A character opened: skeleton, motion (sources), BVH layout (BVH files) and humanoid map.
pub(crate) struct Opened {
    pub(crate) skeleton: Arc<ikarus_core::Skeleton>,
    pub(crate) motion: Option<ikarus_core::Motion>,
    pub(crate) layout: Option<BvhLayout>,
    pub(crate) map: HumanoidMap,
}

impl Given {
    /// A target character: a source name, or a `Skeleton`; else `ValueError(refusal)`.
    pub(crate) fn name_or_skeleton(
        obj: &Bound<'_, PyAny>,
        refusal: &'static str,
    ) -> PyResult<Self> {
        if let Ok(path) = obj.extract::<String>() {
            Ok(Self::Source(path))
        } else if let Ok(skeleton) = obj.cast::<Skeleton>() {
            Ok(Self::Objects(Arc::clone(&skeleton.get().inner), None))
        } else {
            Err(PyValueError::new_err(refusal))
        }
    }

    /// What errors call it: the file name, or `name` (the argument).
    pub(crate) fn label(&self, name: &str) -> String {
        match self {
            Self::Source(path) => path.clone(),
            Self::Objects(..) => name.to_owned(),
        }
    }

    /// Opens the file (`ikarus_jobs::read_source`: a `.vmd` plays on `model` with its IK); the
    /// humanoid map is the one a VRM/VRMA file declares or recognised (a VMD's: its model's),
    /// then `overrides` (JSON); it must be complete.
    pub(crate) fn open(
        self,
        name: &str,
        overrides: Option<&str>,
        model: Option<&str>,
    ) -> PyResult<Opened> {
        let label = self.label(name);
        let (skeleton, motion, layout, map) = match self {
            Self::Source(source) => {
                let options = ReadOptions {
                    model: model.map(Path::new),
                    ..ReadOptions::default()
                };
                let read = read_source(&source, &options).map_err(value_error)?;
                let map = read.humanoid_map().map_err(value_error)?;
                (Arc::new(read.skeleton), read.motion, read.layout, map)
            }
            Self::Objects(skeleton, motion) => {
                let map = HumanoidMap::recognise(&skeleton);
                (skeleton, motion, None, map)
            }
        };
        let map = match overrides {
            Some(json) => ikarus_formats::gltf::vrm::bone_map_from_json(json, &skeleton, map)
                .map_err(|m| value_error(format!("{label}: bone map: {m}")))?,
            None => map,
        };
        if !map.is_complete() {
            return Err(value_error(format!(
                "{label}: the humanoid map lacks {:?}; give a bone map",
                map.missing_required()
                    .map(HumanoidBone::vrm_name)
                    .collect::<Vec<_>>()
            )));
        }
        Ok(Opened {
            skeleton,
            motion,
            layout,
            map,
        })
    }
}

/// Retargets `source` onto `target` and returns `(skeleton, motion, report)`: the target
/// skeleton, the motion on it (the source's frame time) and a dict of what the retarget did
/// and its metrics measured by forward kinematics (`frames`, `contacts`, `unreached`,
/// `max_hip_drop` m, `slide_max` / `slide_mean` m, `penetration` / `toe_penetration` m,
/// `direction_mean` / `direction_max` rad, `max_step` m, `limit_violation` rad, `finite`).
///
/// `source`: a file name (BVH, glTF/GLB/VRM with an animation, VRMA, or VMD played with IK on
/// `source_model`, a PMX/PMD, as `ikarus retarget --model` plays it) or a `(Skeleton, Motion)`
/// pair (what `read` returns). `target`: `builtin:humanoid`, a file name (BVH,
/// glTF/GLB/VRM, PMX/PMD) or a `Skeleton`. Humanoid maps are the ones VRM/VRMA files declare,
/// else recognised from joint names; `map` / `source_map` override bones (`{"leftHand":
/// "joint name", ...}`, VRM 1.0 bone names). `contacts`: detect contacts and hold them with the
/// leg IK (else copy rotations and the root only); `hands`: also hold hands that stay still;
/// `ground`: keep the feet above the floor. The GIL is released while retargeting.
///
/// # Errors
/// `ValueError` naming the argument, or with the format's or `ikarus_anim`'s message.
#[pyfunction]
#[pyo3(signature = (source, target, contacts = true, hands = false, ground = true, map = None, source_map = None, source_model = None))]
#[allow(clippy::too_many_arguments)] // the Python signature: keyword arguments with defaults
#[allow(clippy::fn_params_excessive_bools)]
pub fn retarget<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    target: &Bound<'py, PyAny>,
    contacts: bool,
    hands: bool,
    ground: bool,
    map: Option<&Bound<'py, PyAny>>,
    source_map: Option<&Bound<'py, PyAny>>,
    source_model: Option<&str>,
) -> PyResult<(Skeleton, Motion, Bound<'py, PyDict>)> {
    let from = if let Ok(path) = source.extract::<String>() {
        Given::Source(path)
    } else if let Some((skeleton, motion)) = skeleton_motion_pair(source) {
        if source_model.is_some() {
            return Err(PyValueError::new_err(
                "source_model: given for a .vmd source file only",
            ));
        }
        Given::Objects(skeleton, motion)
    } else {
        return Err(PyValueError::new_err(
            "source: expected a file name or a (Skeleton, Motion) pair",
        ));
    };
    let to = Given::name_or_skeleton(target, "target: expected a source name or a Skeleton")?;
    let source_map = bone_map_json(source_map, "source_map")?;
    let map = bone_map_json(map, "map")?;
    let config = RetargetConfig {
        contacts: contacts.then(|| ContactConfig {
            hands,
            ..ContactConfig::default()
        }),
        ground,
        ..RetargetConfig::default()
    };
    let (to, result, metrics) = py.detach(|| {
        no_panic(|| {
            let from_label = from.label("source");
            let from = from.open("source", source_map.as_deref(), source_model)?;
            let to = to.open("target", map.as_deref(), None)?;
            let motion = from
                .motion
                .as_ref()
                .ok_or_else(|| value_error(format!("{from_label}: no animation to retarget")))?;
            let source = Character {
                skeleton: &from.skeleton,
                map: &from.map,
            };
            let target = Character {
                skeleton: &to.skeleton,
                map: &to.map,
            };
            let result = ikarus_anim::retarget::retarget(source, motion, target, &config)
                .map_err(|e| value_error(format!("{from_label}: {e}")))?;
            let metrics = measure(
                source,
                motion,
                result.root.source_body,
                target,
                &result.motion,
                &result.contacts,
                &result.feet,
                &result.leg_weights,
            );
            Ok((to, result, metrics))
        })
    })?;
    let report = PyDict::new(py);
    report.set_item("frames", result.motion.len())?;
    report.set_item("contacts", result.contacts.len())?;
    report.set_item("unreached", result.unreached)?;
    report.set_item("max_hip_drop", result.max_hip_drop)?;
    report.set_item("contact_pairs", metrics.contact_pairs)?;
    report.set_item("slide_max", metrics.slide_max)?;
    report.set_item("slide_mean", metrics.slide_mean)?;
    report.set_item("penetration", metrics.penetration)?;
    report.set_item("toe_penetration", metrics.toe_penetration)?;
    report.set_item("direction_mean", metrics.direction_mean)?;
    report.set_item("direction_max", metrics.direction_max)?;
    report.set_item("max_step", metrics.max_step)?;
    report.set_item("limit_violation", metrics.limit_violation)?;
    report.set_item("finite", metrics.finite)?;
    Ok((
        Skeleton { inner: to.skeleton },
        Motion {
            inner: result.motion,
            layout: to.layout,
        },
        report,
    ))
}
