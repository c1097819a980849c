//! `Skeleton`, `Pose`, `Motion`, `read`, `write` and `fk`: the model of `ikarus-core` and the
//! files of `ikarus-formats` as numpy arrays.

use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use ikarus_core::{
    JointLimit, LocalPose, ModelPose, RawJoint, SkeletonBuilder, Transform, fk as core_fk,
};
use ikarus_formats::bvh::BvhLayout;
use ikarus_jobs::{IkMode, ReadOptions, WriteOptions, read_source, write_motion};
use numpy::PyArrayDyn;
use numpy::ndarray::ArrayViewD;
use pyo3::exceptions::{PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde::{Deserialize, Serialize};

use crate::arrays::{expect_shape, f64_array, to_numpy};
use crate::{no_panic, value_error};

/// A float64 numpy array.
type Array<'py> = Bound<'py, PyArrayDyn<f64>>;

/// An immutable skeleton: joint names, parents (depth first, parents before children), rest
/// transforms (local, parent space) and joint limits.
#[pyclass(module = "ikarus._ikarus", frozen)]
#[derive(Clone)]
pub struct Skeleton {
    /// The Rust skeleton.
    pub inner: Arc<ikarus_core::Skeleton>,
}

/// One joint as pickled.
#[derive(Serialize, Deserialize)]
struct JointState {
    name: String,
    parent: Option<String>,
    rest: Transform,
    limit: JointLimit,
}

impl Skeleton {
    /// Wraps a Rust skeleton.
    pub fn new(skeleton: ikarus_core::Skeleton) -> Self {
        Self {
            inner: Arc::new(skeleton),
        }
    }

    fn state(&self) -> PyResult<String> {
        let s = &self.inner;
        let joints: Vec<JointState> = s
            .joints()
            .map(|j| JointState {
                name: s.name(j).to_owned(),
                parent: s.parent(j).map(|p| s.name(p).to_owned()),
                rest: *s.rest(j),
                limit: s.limit(j).clone(),
            })
            .collect();
        serde_json::to_string(&joints).map_err(value_error)
    }
}

#[pymethods]
impl Skeleton {
    /// Opens `source` (`builtin:humanoid` or a .bvh, .urdf, .gltf, .glb, .vrm, .vrma, .pmx or
    /// .pmd file) and keeps its skeleton; lengths times `scale`.
    #[staticmethod]
    #[pyo3(signature = (source, scale = 1.0))]
    fn open(py: Python<'_>, source: &str, scale: f64) -> PyResult<Self> {
        let document =
            py.detach(|| no_panic(|| ikarus_formats::open(source, scale).map_err(value_error)))?;
        Ok(Self::new(document.skeleton))
    }

    /// Rebuilds a skeleton from [`Skeleton::__reduce__`]'s state.
    #[staticmethod]
    fn _from_state(state: &str) -> PyResult<Self> {
        let joints: Vec<JointState> = serde_json::from_str(state).map_err(value_error)?;
        let mut builder = SkeletonBuilder::new();
        for j in joints {
            builder.push(RawJoint {
                name: j.name,
                parent: j.parent,
                rest: j.rest,
                limit: j.limit,
            });
        }
        Ok(Self::new(builder.build().map_err(value_error)?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let state = slf.get().state()?;
        let rebuild = slf.get_type().getattr("_from_state")?;
        PyTuple::new(
            slf.py(),
            [
                rebuild.into_any(),
                PyTuple::new(slf.py(), [state])?.into_any(),
            ],
        )
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Skeleton({} joints, root {:?})",
            self.inner.len(),
            self.inner.names().first().map_or("", String::as_str)
        )
    }

    /// Joint names, in joint order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner.names().to_vec()
    }

    /// Parent index of every joint, -1 for a root (int64, shape `(J,)`).
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<i64>> {
        let s = &self.inner;
        let parents: Vec<i64> = s
            .joints()
            .map(|j| s.parent(j).map_or(-1, |p| i64::from(p.index() as u32)))
            .collect();
        numpy::PyArray1::from_vec(py, parents)
    }

    /// The index of joint `name`.
    fn joint(&self, name: &str) -> PyResult<usize> {
        self.inner
            .try_joint(name)
            .map(ikarus_core::JointId::index)
            .map_err(value_error)
    }

    /// Rest translations, local (parent space), metres, `(J, 3)`.
    #[getter]
    fn rest_translations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        transforms_array(py, self.inner.rest_transforms(), Part::Translation)
    }

    /// Rest rotations, local, `[x, y, z, w]`, `(J, 4)`.
    #[getter]
    fn rest_rotations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        transforms_array(py, self.inner.rest_transforms(), Part::Rotation)
    }

    /// Rest scales, local, `(J, 3)`.
    #[getter]
    fn rest_scales<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        transforms_array(py, self.inner.rest_transforms(), Part::Scale)
    }

    /// Every joint's limit as the JSON of `ikarus_core::JointLimit` (a list of dicts).
    #[getter]
    fn limits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(self.inner.limits()).map_err(value_error)?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The rest pose.
    fn rest_pose(&self) -> Pose {
        Pose {
            inner: self.inner.rest_pose(),
        }
    }
}

/// Which part of a transform an array holds.
#[derive(Clone, Copy)]
enum Part {
    Translation,
    Rotation,
    Scale,
}

impl Part {
    fn width(self) -> usize {
        match self {
            Self::Rotation => 4,
            Self::Translation | Self::Scale => 3,
        }
    }

    fn push(self, t: &Transform, out: &mut Vec<f64>) {
        match self {
            Self::Translation => out.extend_from_slice(&t.translation.to_array()),
            Self::Rotation => out.extend_from_slice(&t.rotation.to_array()),
            Self::Scale => out.extend_from_slice(&t.scale.to_array()),
        }
    }
}

fn transforms_array<'py>(
    py: Python<'py>,
    transforms: &[Transform],
    part: Part,
) -> Bound<'py, PyArrayDyn<f64>> {
    let mut data = Vec::with_capacity(transforms.len() * part.width());
    for t in transforms {
        part.push(t, &mut data);
    }
    to_numpy(py, &[transforms.len(), part.width()], &data)
}

fn frames_array<'py>(
    py: Python<'py>,
    frames: &[LocalPose],
    joints: usize,
    part: Part,
) -> Bound<'py, PyArrayDyn<f64>> {
    let mut data = Vec::with_capacity(frames.len() * joints * part.width());
    for frame in frames {
        for t in frame.transforms() {
            part.push(t, &mut data);
        }
    }
    to_numpy(py, &[frames.len(), joints, part.width()], &data)
}

/// Checks unit quaternions (to 1e-6) in an array whose last axis is 4.
fn require_unit_quaternions(array: &ArrayViewD<'_, f64>, name: &str) -> PyResult<()> {
    let flat: Vec<f64> = array.iter().copied().collect();
    for (i, q) in flat.chunks_exact(4).enumerate() {
        let length = DQuat::from_slice(q).length();
        if (length - 1.0).abs() > 1e-6 {
            return Err(PyValueError::new_err(format!(
                "{name}: quaternion {i} (row-major) has length {length}, expected 1"
            )));
        }
    }
    Ok(())
}

/// A local pose: one transform per joint, parent space.
#[pyclass(module = "ikarus._ikarus", frozen)]
#[derive(Clone)]
pub struct Pose {
    /// The Rust pose.
    pub inner: LocalPose,
}

#[pymethods]
impl Pose {
    /// A pose from local rotations `(J, 4)` `[x, y, z, w]` (unit), translations `(J, 3)`
    /// metres and optional scales `(J, 3)` (default 1).
    #[new]
    #[pyo3(signature = (rotations, translations, scales = None))]
    fn py_new(
        rotations: &Bound<'_, PyAny>,
        translations: &Bound<'_, PyAny>,
        scales: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let rotations = f64_array(rotations, "rotations")?;
        let rotations = rotations.as_array();
        expect_shape(&rotations, "rotations", &[None, Some(4)])?;
        require_unit_quaternions(&rotations, "rotations")?;
        let joints = rotations.shape()[0];
        let translations = f64_array(translations, "translations")?;
        let translations = translations.as_array();
        expect_shape(&translations, "translations", &[Some(joints), Some(3)])?;
        let scales = scales.map(|s| f64_array(s, "scales")).transpose()?;
        let scales = scales.as_ref().map(numpy::PyReadonlyArray::as_array);
        if let Some(s) = &scales {
            expect_shape(s, "scales", &[Some(joints), Some(3)])?;
        }
        let transforms = (0..joints)
            .map(|j| Transform {
                translation: DVec3::new(
                    translations[[j, 0]],
                    translations[[j, 1]],
                    translations[[j, 2]],
                ),
                rotation: DQuat::from_xyzw(
                    rotations[[j, 0]],
                    rotations[[j, 1]],
                    rotations[[j, 2]],
                    rotations[[j, 3]],
                ),
                scale: scales
                    .as_ref()
                    .map_or(DVec3::ONE, |s| DVec3::new(s[[j, 0]], s[[j, 1]], s[[j, 2]])),
            })
            .collect();
        Ok(Self {
            inner: LocalPose::from_transforms(transforms),
        })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let pose = slf.get();
        let args = PyTuple::new(
            py,
            [pose.rotations(py), pose.translations(py), pose.scales(py)],
        )?;
        PyTuple::new(py, [slf.get_type().into_any(), args.into_any()])
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!("Pose({} joints)", self.inner.len())
    }

    /// Local rotations `[x, y, z, w]`, `(J, 4)`.
    #[getter]
    fn rotations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        transforms_array(py, self.inner.transforms(), Part::Rotation)
    }

    /// Local translations, metres, `(J, 3)`.
    #[getter]
    fn translations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        transforms_array(py, self.inner.transforms(), Part::Translation)
    }

    /// Local scales, `(J, 3)`.
    #[getter]
    fn scales<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        transforms_array(py, self.inner.transforms(), Part::Scale)
    }
}

/// A motion: one local pose per frame, a fixed frame time. Read from a BVH it remembers the
/// file's channel layout, which `write` reuses (the layout is not pickled).
#[pyclass(module = "ikarus._ikarus", frozen)]
#[derive(Clone)]
pub struct Motion {
    /// The Rust motion.
    pub inner: ikarus_core::Motion,
    /// The BVH channel layout of the source file, if it was a BVH.
    pub layout: Option<BvhLayout>,
}

#[pymethods]
impl Motion {
    /// A motion of `skeleton` from local rotations `(F, J, 4)` and either root translations
    /// `(F, 3)` (the other joints keep their rest translations) or every joint's translations
    /// `(F, J, 3)`; scales are the rest scales. `frame_time` in seconds.
    #[new]
    #[pyo3(signature = (skeleton, rotations, translations, frame_time))]
    fn py_new(
        skeleton: &Skeleton,
        rotations: &Bound<'_, PyAny>,
        translations: &Bound<'_, PyAny>,
        frame_time: f64,
    ) -> PyResult<Self> {
        let s = &skeleton.inner;
        let rotations = f64_array(rotations, "rotations")?;
        let rotations = rotations.as_array();
        expect_shape(&rotations, "rotations", &[None, Some(s.len()), Some(4)])?;
        require_unit_quaternions(&rotations, "rotations")?;
        let frames = rotations.shape()[0];
        let translations = f64_array(translations, "translations")?;
        let translations = translations.as_array();
        let per_joint = translations.ndim() == 3;
        if per_joint {
            expect_shape(
                &translations,
                "translations",
                &[Some(frames), Some(s.len()), Some(3)],
            )?;
        } else {
            expect_shape(&translations, "translations", &[Some(frames), Some(3)])?;
        }
        let mut motion = ikarus_core::Motion::for_skeleton(s, frame_time).map_err(value_error)?;
        for f in 0..frames {
            let mut pose = s.rest_pose();
            for (j, t) in pose.transforms_mut().iter_mut().enumerate() {
                t.rotation = DQuat::from_xyzw(
                    rotations[[f, j, 0]],
                    rotations[[f, j, 1]],
                    rotations[[f, j, 2]],
                    rotations[[f, j, 3]],
                );
                if per_joint {
                    t.translation = DVec3::new(
                        translations[[f, j, 0]],
                        translations[[f, j, 1]],
                        translations[[f, j, 2]],
                    );
                } else if j == 0 {
                    t.translation = DVec3::new(
                        translations[[f, 0]],
                        translations[[f, 1]],
                        translations[[f, 2]],
                    );
                }
            }
            motion.push(pose).map_err(value_error)?;
        }
        Ok(Self {
            inner: motion,
            layout: None,
        })
    }

    /// Rebuilds a motion from [`Motion::__reduce__`]'s arrays: rotations `(F, J, 4)`,
    /// translations `(F, J, 3)`, scales `(F, J, 3)`.
    #[staticmethod]
    fn _from_arrays(
        rotations: &Bound<'_, PyAny>,
        translations: &Bound<'_, PyAny>,
        scales: &Bound<'_, PyAny>,
        frame_time: f64,
    ) -> PyResult<Self> {
        let rotations = f64_array(rotations, "rotations")?;
        let rotations = rotations.as_array();
        expect_shape(&rotations, "rotations", &[None, None, Some(4)])?;
        let (frames, joints) = (rotations.shape()[0], rotations.shape()[1]);
        let translations = f64_array(translations, "translations")?;
        let translations = translations.as_array();
        expect_shape(
            &translations,
            "translations",
            &[Some(frames), Some(joints), Some(3)],
        )?;
        let scales = f64_array(scales, "scales")?;
        let scales = scales.as_array();
        expect_shape(&scales, "scales", &[Some(frames), Some(joints), Some(3)])?;
        let mut motion = ikarus_core::Motion::new(frame_time, joints).map_err(value_error)?;
        for f in 0..frames {
            let transforms = (0..joints)
                .map(|j| Transform {
                    translation: DVec3::new(
                        translations[[f, j, 0]],
                        translations[[f, j, 1]],
                        translations[[f, j, 2]],
                    ),
                    rotation: DQuat::from_xyzw(
                        rotations[[f, j, 0]],
                        rotations[[f, j, 1]],
                        rotations[[f, j, 2]],
                        rotations[[f, j, 3]],
                    ),
                    scale: DVec3::new(scales[[f, j, 0]], scales[[f, j, 1]], scales[[f, j, 2]]),
                })
                .collect();
            motion
                .push(LocalPose::from_transforms(transforms))
                .map_err(value_error)?;
        }
        Ok(Self {
            inner: motion,
            layout: None,
        })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let m = slf.get();
        let args = (
            m.rotations(py),
            m.translations(py),
            m.scales(py),
            m.inner.frame_time(),
        )
            .into_pyobject(py)?;
        PyTuple::new(
            py,
            [slf.get_type().getattr("_from_arrays")?, args.into_any()],
        )
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Motion({} frames, {} joints, {:.3} fps)",
            self.inner.len(),
            self.inner.joint_count(),
            self.inner.frame_rate()
        )
    }

    /// Seconds between frames.
    #[getter]
    fn frame_time(&self) -> f64 {
        self.inner.frame_time()
    }

    /// Frames per second.
    #[getter]
    fn frame_rate(&self) -> f64 {
        self.inner.frame_rate()
    }

    /// Local rotations `[x, y, z, w]`, `(F, J, 4)`.
    #[getter]
    fn rotations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        frames_array(
            py,
            self.inner.frames(),
            self.inner.joint_count(),
            Part::Rotation,
        )
    }

    /// Every joint's local translation, metres, `(F, J, 3)`.
    #[getter]
    fn translations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        frames_array(
            py,
            self.inner.frames(),
            self.inner.joint_count(),
            Part::Translation,
        )
    }

    /// The root joint's (joint 0's) local translation per frame, metres, `(F, 3)`.
    #[getter]
    fn root_translations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        let data: Vec<f64> = self
            .inner
            .frames()
            .iter()
            .flat_map(|f| {
                f.transforms()
                    .first()
                    .map_or([0.0; 3], |t| t.translation.to_array())
            })
            .collect();
        to_numpy(py, &[self.inner.len(), 3], &data)
    }

    /// Local scales, `(F, J, 3)`.
    #[getter]
    fn scales<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        frames_array(
            py,
            self.inner.frames(),
            self.inner.joint_count(),
            Part::Scale,
        )
    }

    /// Frame `index` as a pose.
    fn frame(&self, index: usize) -> PyResult<Pose> {
        self.inner
            .frame(index)
            .map(|p| Pose { inner: p.clone() })
            .ok_or_else(|| {
                PyValueError::new_err(format!("index: frame {index} of {}", self.inner.len()))
            })
    }

    /// The motion resampled to `fps` frames per second (slerp between frames).
    fn resampled(&self, fps: f64) -> PyResult<Self> {
        if !(fps.is_finite() && fps > 0.0) {
            return Err(PyValueError::new_err(format!(
                "fps: {fps} is not a positive rate"
            )));
        }
        Ok(Self {
            inner: self.inner.resampled(1.0 / fps).map_err(value_error)?,
            layout: self.layout.clone(),
        })
    }
}

/// Reads `source` (`builtin:humanoid`, .bvh, .urdf, .gltf, .glb, .vrm, .vrma, .pmx, .pmd, or a
/// .vmd played on `model`): `(Skeleton, Motion or None)`; lengths times `scale`; `animation`
/// picks a glTF animation by name (default the first); `model` is the PMX/PMD a `.vmd` plays
/// on, `motion` a `.vmd` played on a PMX/PMD `source` (either way with the model's IK in `mode`,
/// `"compatible"` or `"exact"`); `fps` resamples (a VMD is evaluated with IK at every sampled
/// frame). The call is `ikarus_jobs::read_source`, as in `ikarus convert` and `ikarus retarget`.
/// A VMD's keyed bones that the model lacks are ignored with a `UserWarning` naming them.
///
/// # Errors
/// `ValueError` with the format's message (file, line and column), for a `.vmd` without its
/// model, a `model` / `motion` that does not apply, an unknown `mode`, or a `scale` / `fps`
/// that is not finite and positive.
#[pyfunction]
#[pyo3(signature = (source, scale = 1.0, animation = None, model = None, motion = None, mode = "compatible", fps = None))]
#[allow(clippy::too_many_arguments)] // the Python signature: keyword arguments with defaults
pub fn read(
    py: Python<'_>,
    source: &str,
    scale: f64,
    animation: Option<&str>,
    model: Option<&str>,
    motion: Option<&str>,
    mode: &str,
    fps: Option<f64>,
) -> PyResult<(Skeleton, Option<Motion>)> {
    let options = read_options(scale, fps, animation, model, motion, mode)?;
    let read = py.detach(|| no_panic(|| read_source(source, &options).map_err(value_error)))?;
    if !read.unmatched.is_empty() {
        let message = format!(
            "{source}: {} keyed bones are not in {} and are ignored: {}",
            read.unmatched.len(),
            read.skeleton_file,
            read.unmatched.join(", ")
        );
        let message = std::ffi::CString::new(message).map_err(value_error)?;
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &message, 1)?;
    }
    let motion = read.motion.map(|m| Motion {
        inner: m,
        layout: read.layout.clone(),
    });
    Ok((Skeleton::new(read.skeleton), motion))
}

/// The [`ReadOptions`] of the Python `read` / `convert` keyword arguments (paths as strings, the
/// IK mode by name).
///
/// # Errors
/// As [`ik_mode`].
pub fn read_options<'a>(
    scale: f64,
    fps: Option<f64>,
    animation: Option<&'a str>,
    model: Option<&'a str>,
    motion: Option<&'a str>,
    mode: &str,
) -> PyResult<ReadOptions<'a>> {
    Ok(ReadOptions {
        scale,
        fps,
        animation,
        model: model.map(Path::new),
        motion: motion.map(Path::new),
        mode: ik_mode(mode)?,
    })
}

/// The MMD IK mode named `mode` (`"compatible"`, `"exact"`).
///
/// # Errors
/// `ValueError` naming `mode` for another name.
pub fn ik_mode(mode: &str) -> PyResult<IkMode> {
    match mode {
        "compatible" => Ok(IkMode::Compatible),
        "exact" => Ok(IkMode::Exact),
        _ => Err(PyValueError::new_err(format!(
            "mode: {mode:?}: expected \"compatible\" or \"exact\""
        ))),
    }
}

/// Writes `motion` on `skeleton` to `path`, the format by extension (`ikarus_jobs::write_motion`,
/// as `ikarus convert` writes): `.bvh` (the source's channel layout when the motion came from a
/// BVH of the same skeleton), `.glb` (a new file of the skeleton, its skin and the animation,
/// or the glTF/GLB/VRM file `into` — whose skin the skeleton was read from — with the motion
/// added as an animation, mesh and VRM data kept), `.vmd` (for the PMX/PMD file `model` the
/// skeleton was read from, with the same `scale`; each IK chain's goal bone is moved onto its
/// effector so MMD's own IK finds the legs where the motion puts them) or `.vrma` (the humanoid
/// bones, recognised from joint names or named by `map` — `{"hips": "joint name", ...}`, VRM 1.0
/// bone names over the recognised ones —, as a VRM animation).
///
/// # Errors
/// `ValueError` for another extension, a motion of another skeleton, a `.vmd` without its
/// model or for another model, an `into` file whose skin is not the skeleton, options for
/// another format, an incomplete humanoid map for `.vrma`, or a failed write.
#[pyfunction]
#[pyo3(signature = (path, skeleton, motion, model = None, scale = 1.0, into = None, map = None))]
#[allow(clippy::too_many_arguments)] // the Python signature: keyword arguments with defaults
pub fn write(
    py: Python<'_>,
    path: &str,
    skeleton: &Skeleton,
    motion: &Motion,
    model: Option<&str>,
    scale: f64,
    into: Option<&str>,
    map: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let s = &skeleton.inner;
    if motion.inner.joint_count() != s.len() {
        return Err(PyValueError::new_err(format!(
            "motion: {} joints, the skeleton has {}",
            motion.inner.joint_count(),
            s.len()
        )));
    }
    if !(scale.is_finite() && scale > 0.0) {
        return Err(PyValueError::new_err(format!(
            "scale: {scale} is not a positive factor"
        )));
    }
    let is_vmd = ikarus_jobs::is_vmd(Path::new(path));
    if is_vmd && model.is_none() {
        return Err(PyValueError::new_err(
            "model: a .vmd is written for a PMX/PMD model: pass model=\"MODEL.pmx\"",
        ));
    }
    let map = bone_map_json(map, "map")?;
    let options = WriteOptions {
        layout: motion.layout.clone(),
        into: into.map(Path::new),
        model: model.map(Path::new),
        scale,
        map_json: map.as_deref(),
        ..WriteOptions::default()
    };
    py.detach(|| {
        no_panic(|| write_motion(Path::new(path), s, &motion.inner, &options).map_err(value_error))
    })
}

/// A bone map argument (a dict of VRM 1.0 bone names to joint names, or `None`) as the JSON
/// the formats read.
///
/// # Errors
/// `ValueError` naming the argument when it is not a dict.
pub fn bone_map_json(map: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<String>> {
    match map {
        Some(m) if !m.is_none() => {
            if m.cast::<PyDict>().is_err() {
                return Err(PyValueError::new_err(format!(
                    "{name}: expected a dict of VRM bone names to joint names"
                )));
            }
            let text = m.py().import("json")?.call_method1("dumps", (m,))?;
            Ok(Some(text.extract()?))
        }
        _ => Ok(None),
    }
}

/// Forward kinematics of a pose or a motion: model-space joint positions `(J, 3)` / `(F, J, 3)`
/// and rotations `(J, 4)` / `(F, J, 4)` `[x, y, z, w]`.
///
/// # Errors
/// `ValueError` when `pose` is not a `Pose` or `Motion` of `skeleton`.
#[pyfunction]
pub fn fk<'py>(
    py: Python<'py>,
    skeleton: &Skeleton,
    pose: &Bound<'py, PyAny>,
) -> PyResult<(Array<'py>, Array<'py>)> {
    let s = Arc::clone(&skeleton.inner);
    let (frames, shape_prefix): (Vec<LocalPose>, Vec<usize>) = if let Ok(p) = pose.cast::<Pose>() {
        (vec![p.get().inner.clone()], vec![])
    } else if let Ok(m) = pose.cast::<Motion>() {
        let m = m.get();
        (m.inner.frames().to_vec(), vec![m.inner.len()])
    } else {
        return Err(PyValueError::new_err(
            "pose: expected an ikarus Pose or Motion",
        ));
    };
    if let Some(f) = frames.iter().find(|f| f.len() != s.len()) {
        return Err(PyValueError::new_err(format!(
            "pose: {} joints, the skeleton has {}",
            f.len(),
            s.len()
        )));
    }
    let (positions, rotations) = py.detach(|| {
        let mut model = ModelPose::new(&s);
        let mut positions = Vec::with_capacity(frames.len() * s.len() * 3);
        let mut rotations = Vec::with_capacity(frames.len() * s.len() * 4);
        for frame in &frames {
            core_fk::forward_kinematics(&s, frame, &mut model);
            for j in s.joints() {
                positions.extend_from_slice(&model.position(j).to_array());
                rotations.extend_from_slice(&model.rotation(j).to_array());
            }
        }
        (positions, rotations)
    });
    let mut shape3 = shape_prefix.clone();
    shape3.extend([s.len(), 3]);
    let mut shape4 = shape_prefix;
    shape4.extend([s.len(), 4]);
    let positions = to_numpy(py, &shape3, &positions);
    let rotations = to_numpy(py, &shape4, &rotations);
    Ok((positions, rotations))
}

/// `obj` as a `(Skeleton, Motion)` pair (what [`read`] returns; the motion may be `None`), or
/// `None` when it is not one.
pub fn skeleton_motion_pair(
    obj: &Bound<'_, PyAny>,
) -> Option<(Arc<ikarus_core::Skeleton>, Option<ikarus_core::Motion>)> {
    let tuple = obj.cast::<PyTuple>().ok()?;
    if tuple.len() != 2 {
        return None;
    }
    let skeleton = Arc::clone(&tuple.get_item(0).ok()?.cast::<Skeleton>().ok()?.get().inner);
    let second = tuple.get_item(1).ok()?;
    let motion = if second.is_none() {
        None
    } else {
        Some(second.cast::<Motion>().ok()?.get().inner.clone())
    };
    Some((skeleton, motion))
}
