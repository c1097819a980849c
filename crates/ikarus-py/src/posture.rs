//! Example-based IK from Python: `PostureModel` (a learned posture model,
//! `ikarus_solve::example_based::PostureModel`) and `learn` (`ikarus_anim::posture::learn_from_motions`,
//! what `ikarus learn` runs).

use std::sync::Arc;

use ikarus_anim::posture::{self, LearnError};
use ikarus_solve::example_based::PostureModel as RustModel;
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::model::{Skeleton, skeleton_motion_pair};
use crate::{no_panic, value_error};

/// A posture model: probabilistic PCA on joint rotations (Karcher means, rotation vectors about
/// them), learned by [`learn`] or read from an `ikarus learn` file; the example-based solver's
/// prior (`solve(..., solver={"kind": "example", "model": model})`).
#[pyclass(module = "ikarus._ikarus", frozen)]
#[derive(Clone)]
pub struct PostureModel {
    /// The Rust model.
    pub inner: Arc<RustModel>,
}

impl PostureModel {
    /// Reads the model file `path` (the JSON `ikarus learn` writes).
    ///
    /// # Errors
    /// `ValueError` "`path`: cannot read the posture model: …" or "`path`: not a posture model:
    /// …" (with the JSON's line and column), as `ikarus solve` reports them.
    pub fn read(path: &str) -> PyResult<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| value_error(format!("{path}: cannot read the posture model: {e}")))?;
        let model = RustModel::from_json(&text)
            .map_err(|e| value_error(format!("{path}: not a posture model: {e}")))?;
        Ok(Self {
            inner: Arc::new(model),
        })
    }
}

#[pymethods]
impl PostureModel {
    /// The model in JSON text (what [`PostureModel::to_json`] wrote; `ikarus learn`'s files).
    ///
    /// # Errors
    /// `ValueError` with the JSON's line and column or what is inconsistent.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        let model = RustModel::from_json(text).map_err(value_error)?;
        Ok(Self {
            inner: Arc::new(model),
        })
    }

    /// Reads the model file `path` (the JSON `ikarus learn` writes).
    #[staticmethod]
    fn load(py: Python<'_>, path: &str) -> PyResult<Self> {
        py.detach(|| no_panic(|| Self::read(path)))
    }

    /// The model as JSON text (the file format `ikarus learn` writes and `ikarus solve` reads;
    /// floats round-trip bit for bit).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// Writes [`PostureModel::to_json`] to `path`.
    fn save(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        let text = self.inner.to_json();
        py.detach(|| std::fs::write(path, text).map_err(|e| value_error(format!("{path}: {e}"))))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let args = PyTuple::new(py, [slf.get().inner.to_json()])?;
        PyTuple::new(py, [slf.get_type().getattr("from_json")?, args.into_any()])
    }

    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }

    fn __repr__(&self) -> String {
        format!(
            "PostureModel({} joints, {} dims, {} frames)",
            self.inner.joints().len(),
            self.inner.dims(),
            self.inner.frames()
        )
    }

    /// The modelled joints' names (the joints below the hips).
    #[getter]
    fn joints(&self) -> Vec<String> {
        self.inner.joints().to_vec()
    }

    /// Latent dimensions K.
    #[getter]
    fn dims(&self) -> usize {
        self.inner.dims()
    }

    /// The K kept principal variances, largest first, rad² `(K,)`.
    #[getter]
    fn variances<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.variances())
    }

    /// The isotropic noise variance σ² of the dimensions not kept, rad².
    #[getter]
    fn noise(&self) -> f64 {
        self.inner.noise()
    }

    /// The rest height of the skeleton learned on (the solver's length scale), metres.
    #[getter]
    fn scale(&self) -> f64 {
        self.inner.scale()
    }

    /// Frames learned from.
    #[getter]
    fn frames(&self) -> usize {
        self.inner.frames()
    }

    /// Each modelled joint's mean rotation, local, `[x, y, z, w]`, `(joints, 4)`.
    #[getter]
    fn mean_rotations<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArrayDyn<f64>> {
        let data: Vec<f64> = self
            .inner
            .mean_rotations()
            .iter()
            .flat_map(glam::DQuat::to_array)
            .collect();
        crate::arrays::to_numpy(py, &[self.inner.mean_rotations().len(), 4], &data)
    }
}

/// One entry of `learn`'s `motions`: a file or a `(Skeleton, Motion)` pair.
enum Source {
    Path(String),
    Pair(Arc<ikarus_core::Skeleton>, ikarus_core::Motion),
}

impl Source {
    fn extract(item: &Bound<'_, PyAny>, index: usize) -> PyResult<Self> {
        if let Ok(path) = item.extract::<String>() {
            return Ok(Self::Path(path));
        }
        if let Some((skeleton, motion)) = skeleton_motion_pair(item) {
            let motion = motion
                .ok_or_else(|| PyValueError::new_err(format!("motions[{index}]: has no motion")))?;
            return Ok(Self::Pair(skeleton, motion));
        }
        Err(PyValueError::new_err(format!(
            "motions[{index}]: expected a file name or a (Skeleton, Motion) pair"
        )))
    }

    /// How errors name this entry.
    fn label(&self, index: usize) -> String {
        match self {
            Self::Path(path) => path.clone(),
            Self::Pair(..) => format!("motions[{index}]"),
        }
    }
}

/// Learns a [`PostureModel`] of `skeleton` from `motions` (what `ikarus learn` runs,
/// `ikarus_anim::posture::learn_from_motions`).
///
/// `motions`: file names (BVH, glTF/GLB/VRM/VRMA with an animation) and/or `(Skeleton,
/// Motion)` pairs (what `read` returns). `skeleton`: the skeleton the model is for, a
/// `Skeleton` or a source (`builtin:humanoid`, a file); default the first motion's. Motions of
/// another skeleton are carried onto it bone by bone through both humanoid maps. `dims`:
/// latent dimensions; `every`: use every N-th frame. The GIL is released while learning.
///
/// # Errors
/// `ValueError` naming the motion (file name or `motions[i]`) that has no frames or whose
/// skeleton shares too few humanoid bones, or with the learner's message.
#[pyfunction]
#[pyo3(signature = (motions, skeleton = None, dims = 12, every = 1))]
pub fn learn(
    py: Python<'_>,
    motions: &Bound<'_, PyAny>,
    skeleton: Option<&Bound<'_, PyAny>>,
    dims: usize,
    every: usize,
) -> PyResult<PostureModel> {
    let items: Vec<Bound<'_, PyAny>> = motions
        .try_iter()
        .map_err(|_| PyValueError::new_err("motions: expected a list"))?
        .collect::<PyResult<_>>()?;
    if items.is_empty() {
        return Err(PyValueError::new_err("motions: give at least one motion"));
    }
    let sources = items
        .iter()
        .enumerate()
        .map(|(i, item)| Source::extract(item, i))
        .collect::<PyResult<Vec<_>>>()?;
    let target: Option<Result<Arc<ikarus_core::Skeleton>, String>> = match skeleton {
        Some(s) if !s.is_none() => Some(if let Ok(s) = s.cast::<Skeleton>() {
            Ok(Arc::clone(&s.get().inner))
        } else {
            Err(s.extract::<String>().map_err(|_| {
                PyValueError::new_err("skeleton: expected a Skeleton or a source name")
            })?)
        }),
        _ => None,
    };
    let model = py.detach(|| {
        no_panic(|| {
            let mut documents = Vec::with_capacity(sources.len());
            for source in &sources {
                documents.push(match source {
                    Source::Path(path) => {
                        let document = ikarus_formats::open(path, 1.0).map_err(value_error)?;
                        let motion = document.motion.ok_or_else(|| {
                            value_error(format!("{path}: has no motion frames to learn from"))
                        })?;
                        (Arc::new(document.skeleton), motion)
                    }
                    Source::Pair(s, m) => (Arc::clone(s), m.clone()),
                });
            }
            let target = match target {
                Some(Ok(skeleton)) => skeleton,
                Some(Err(source)) => Arc::new(
                    ikarus_formats::open(&source, 1.0)
                        .map_err(value_error)?
                        .skeleton,
                ),
                None => Arc::clone(&documents[0].0),
            };
            let pairs: Vec<_> = documents.iter().map(|(s, m)| (s.as_ref(), m)).collect();
            posture::learn_from_motions(&target, &pairs, dims, every).map_err(|e| match e {
                LearnError::EmptyMotion { motion } | LearnError::Unmatched { motion, .. } => {
                    value_error(format!("{}: {e}", sources[motion].label(motion)))
                }
                LearnError::NoDims => value_error(format!("dims: {e}")),
                LearnError::NoStep => value_error(format!("every: {e}")),
                e => value_error(e),
            })
        })
    })?;
    Ok(PostureModel {
        inner: Arc::new(model.model),
    })
}
