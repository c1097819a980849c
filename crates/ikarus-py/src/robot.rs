//! Robots: `JointChain` (a URDF serial chain addressed by joint vectors `q`) and
//! `solve_batch` (many targets of one chain on the package's rayon pool, off the GIL).

use std::sync::Arc;

use ikarus_core::{ModelPose, fk as core_fk};
use ikarus_formats::urdf::Urdf;
use ikarus_solve::threaded::{BatchResult as RustBatchResult, BatchTarget};
use ikarus_solve::{SolverConfig, Tolerance};
use numpy::{PyArray1, PyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rayon::prelude::*;

use crate::arrays::{expect_shape, f64_array, rows, shape_text, to_numpy};
use crate::model::Skeleton;
use crate::posture::PostureModel;
use crate::{no_panic, pool, value_error};

/// A serial chain of a URDF robot from a base link to a tip link: one `q` entry per actuated
/// joint, base to tip (radians for revolute joints, metres for prismatic ones).
#[pyclass(module = "ikarus._ikarus", frozen)]
#[derive(Clone)]
pub struct JointChain {
    /// The robot's skeleton (one joint per link).
    pub skeleton: Arc<ikarus_core::Skeleton>,
    /// The chain.
    pub chain: Arc<ikarus_core::chain::JointChain>,
    /// The URDF text (kept for pickling: the chain is rebuilt from it).
    text: Arc<str>,
    base_link: String,
    tip_link: String,
}

impl JointChain {
    fn from_text(text: &str, base_link: &str, tip_link: &str, name: &str) -> PyResult<Self> {
        let robot = Urdf::parse(text).map_err(|e| value_error(format!("{name}:{e}")))?;
        let chain = robot
            .chain(base_link, tip_link)
            .map_err(|e| value_error(format!("{name}: {e}")))?;
        Ok(Self {
            skeleton: Arc::new(robot.skeleton),
            chain: Arc::new(chain),
            text: text.into(),
            base_link: base_link.to_owned(),
            tip_link: tip_link.to_owned(),
        })
    }
}

#[pymethods]
impl JointChain {
    /// The chain of the URDF file `path` from link `base_link` to link `tip_link`.
    #[staticmethod]
    fn from_urdf(path: &str, base_link: &str, tip_link: &str) -> PyResult<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|e| value_error(format!("{path}: {e}")))?;
        Self::from_text(&text, base_link, tip_link, path)
    }

    /// The chain of URDF `text` (what pickling stores).
    #[staticmethod]
    fn from_urdf_string(text: &str, base_link: &str, tip_link: &str) -> PyResult<Self> {
        Self::from_text(text, base_link, tip_link, "<urdf>")
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let c = slf.get();
        let args =
            (c.text.as_ref(), c.base_link.as_str(), c.tip_link.as_str()).into_pyobject(py)?;
        PyTuple::new(
            py,
            [slf.get_type().getattr("from_urdf_string")?, args.into_any()],
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "JointChain({} → {}, {} dof)",
            self.base_link,
            self.tip_link,
            self.chain.dof()
        )
    }

    /// Degrees of freedom (length of `q`).
    #[getter]
    fn dof(&self) -> usize {
        self.chain.dof()
    }

    /// The actuated joints' names, base to tip.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.chain.names().map(str::to_owned).collect()
    }

    /// Lower limits `(dof,)` (`-inf` when unbounded).
    #[getter]
    fn lower<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.chain.lower())
    }

    /// Upper limits `(dof,)` (`inf` when unbounded).
    #[getter]
    fn upper<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.chain.upper())
    }

    /// The middle of the limits, the default seed.
    #[getter]
    fn middle<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.chain.middle())
    }

    /// The robot's skeleton (one joint per link, the URDF's own +Z-up frames).
    #[getter]
    fn skeleton(&self) -> Skeleton {
        Skeleton {
            inner: Arc::clone(&self.skeleton),
        }
    }

    /// Base link name.
    #[getter]
    fn base_link(&self) -> &str {
        &self.base_link
    }

    /// Tip link name.
    #[getter]
    fn tip_link(&self) -> &str {
        &self.tip_link
    }

    /// Forward kinematics of joint vectors `q` `(N, dof)` or `(dof,)`: the tip frame in the
    /// base link's frame as position + quaternion `[x, y, z, w]`, `(N, 7)` or `(7,)`.
    fn fk<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let q = f64_array(q, "q")?;
        let view = q.as_array();
        let single = view.ndim() == 1;
        if single {
            expect_shape(&view, "q", &[Some(self.chain.dof())])?;
        } else {
            expect_shape(&view, "q", &[None, Some(self.chain.dof())])?;
        }
        let qs: Vec<Vec<f64>> = if single {
            vec![view.iter().copied().collect()]
        } else {
            rows(&view)
        };
        let (skeleton, chain) = (&self.skeleton, &self.chain);
        let frames = py.detach(|| {
            no_panic(|| {
                let mut pose = skeleton.rest_pose();
                let mut model = ModelPose::new(skeleton);
                let mut out = Vec::with_capacity(qs.len() * 7);
                for q in &qs {
                    chain
                        .set_q(skeleton, q, &mut pose)
                        .map_err(|e| value_error(format!("q: {e}")))?;
                    core_fk::forward_kinematics(skeleton, &pose, &mut model);
                    let (_, rotation, translation) =
                        chain.tip_in_base(&model).to_scale_rotation_translation();
                    out.extend_from_slice(&translation.to_array());
                    out.extend_from_slice(&rotation.normalize().to_array());
                }
                Ok(out)
            })
        })?;
        let shape: &[usize] = if single { &[7] } else { &[qs.len(), 7] };
        Ok(to_numpy(py, shape, &frames))
    }
}

/// The outcome of [`solve_batch`]: one entry per target, in input order.
#[pyclass(module = "ikarus._ikarus", frozen)]
pub struct BatchResult {
    dof: usize,
    results: Vec<RustBatchResult>,
}

/// The JSON name of a status (`converged`, `max_iterations`, `unreachable`, `invalid_input`).
pub fn status_name(status: ikarus_solve::SolveStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[pymethods]
impl BatchResult {
    /// Rebuilds a result from the JSON `[{"q": .., "status": .., ...}]` of `ikarus batch`
    /// (non-finite errors as `null`); what pickling stores.
    #[staticmethod]
    fn from_json(dof: usize, text: &str) -> PyResult<Self> {
        let values: Vec<serde_json::Value> = serde_json::from_str(text).map_err(value_error)?;
        let results = values
            .into_iter()
            .map(|mut v| {
                // JSON has no infinity: `null` errors are the infinite ones of invalid input.
                let null = |v: &serde_json::Value, key: &str| {
                    v.get(key).is_some_and(serde_json::Value::is_null)
                };
                let (position_null, rotation_null) =
                    (null(&v, "position_error"), null(&v, "rotation_error"));
                for (key, is_null) in [
                    ("position_error", position_null),
                    ("rotation_error", rotation_null),
                ] {
                    if is_null {
                        v[key] = serde_json::json!(0.0);
                    }
                }
                serde_json::from_value::<RustBatchResult>(v).map(|mut r| {
                    if position_null {
                        r.position_error = f64::INFINITY;
                    }
                    if rotation_null {
                        r.rotation_error = f64::INFINITY;
                    }
                    r
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(value_error)?;
        Ok(Self { dof, results })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let r = slf.get();
        let text = serde_json::to_string(&r.results).map_err(value_error)?;
        let args = (r.dof, text).into_pyobject(py)?;
        PyTuple::new(py, [slf.get_type().getattr("from_json")?, args.into_any()])
    }

    fn __len__(&self) -> usize {
        self.results.len()
    }

    fn __repr__(&self) -> String {
        let converged = self
            .results
            .iter()
            .filter(|r| r.status == ikarus_solve::SolveStatus::Converged)
            .count();
        format!(
            "BatchResult({} targets, {converged} converged)",
            self.results.len()
        )
    }

    /// Joint vectors found, `(N, dof)` (the seed, unchanged, for invalid input).
    #[getter]
    fn q<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<f64>> {
        let data: Vec<f64> = self
            .results
            .iter()
            .flat_map(|r| r.q.iter().copied())
            .collect();
        to_numpy(py, &[self.results.len(), self.dof], &data)
    }

    /// Status per target, as in the JSON report.
    #[getter]
    fn status(&self) -> Vec<String> {
        self.results.iter().map(|r| status_name(r.status)).collect()
    }

    /// Tip position error by forward kinematics, metres (`inf` for invalid input).
    #[getter]
    fn position_error<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_iter(py, self.results.iter().map(|r| r.position_error))
    }

    /// Tip rotation error by forward kinematics, radians (0 without an orientation goal).
    #[getter]
    fn rotation_error<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_iter(py, self.results.iter().map(|r| r.rotation_error))
    }

    /// Wall time of each solve alone, nanoseconds.
    #[getter]
    fn time_ns<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_iter(py, self.results.iter().map(|r| r.time_ns))
    }

    /// Iterations over all restarts.
    #[getter]
    fn iterations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_iter(py, self.results.iter().map(|r| r.iterations))
    }

    /// Random restarts used.
    #[getter]
    fn restarts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_iter(py, self.results.iter().map(|r| r.restarts))
    }

    /// True where `q` is within the chain's limits (to 1e-9).
    #[getter]
    fn within_limits<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        PyArray1::from_iter(py, self.results.iter().map(|r| r.within_limits))
    }

    /// Why each rejected target was rejected (`None` for the others).
    #[getter]
    fn message(&self) -> Vec<Option<String>> {
        self.results.iter().map(|r| r.message.clone()).collect()
    }

    /// The solver that ran per target.
    #[getter]
    fn solver(&self) -> Vec<Option<String>> {
        self.results.iter().map(|r| r.solver.clone()).collect()
    }

    /// The results as the JSON of `ikarus batch`'s `results` (non-finite errors as `null`).
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.results).map_err(value_error)
    }
}

/// A solver configuration from a kind (`"lm"`), a kind and method (`"jacobian/dls"`) or a dict
/// with the JSON task format's names (`{"kind": "lm", "iteration": {"max_iterations": 100}}`).
/// The example solver's `model` is `builtin:humanoid`, a model file's path (read here, as
/// `ikarus solve` reads it) or a [`PostureModel`] object.
///
/// # Errors
/// `ValueError` naming `solver` with serde's message, or a model file that cannot be read.
pub fn solver_config(solver: &Bound<'_, PyAny>) -> PyResult<SolverConfig> {
    // A `PostureModel` object as the example solver's model: named in the JSON, attached after.
    let mut object_model = None;
    let json = if let Ok(name) = solver.extract::<String>() {
        if let Some((kind, method)) = name.split_once('/') {
            serde_json::json!({"kind": kind, "method": method}).to_string()
        } else {
            serde_json::json!({"kind": name}).to_string()
        }
    } else if let Ok(dict) = solver.cast::<PyDict>() {
        let dict = dict.copy()?;
        if let Some(model) = dict.get_item("model")?
            && let Ok(model) = model.cast::<PostureModel>()
        {
            object_model = Some(Arc::clone(&model.get().inner));
            dict.set_item("model", "<PostureModel>")?;
        }
        solver
            .py()
            .import("json")?
            .call_method1("dumps", (dict,))?
            .extract()?
    } else {
        return Err(PyValueError::new_err(
            "solver: expected a kind name or a dict",
        ));
    };
    let mut config: SolverConfig =
        serde_json::from_str(&json).map_err(|e| PyValueError::new_err(format!("solver: {e}")))?;
    if let SolverConfig::Example(example) = &mut config {
        if let Some(model) = object_model {
            example.model.set_model(model);
        } else if example.model.needs_loading() {
            let loaded = PostureModel::read(example.model.name())
                .map_err(|e| PyValueError::new_err(format!("solver: model: {e}")))?;
            example.model.set_model(loaded.inner);
        }
    }
    Ok(config)
}

/// Solves every target for `chain` and returns a [`BatchResult`] in input order.
///
/// `targets` `(N, 7)` (tip position + quaternion `[x, y, z, w]` in the base link's frame) or
/// `(N, 3)` (position only); `seeds` `(N, dof)` or `(dof,)` (default: the middle of the limits);
/// `solver` a kind, `kind/method` or a dict; `threads` defaults to one per core; `tolerance`
/// (metres and radians, default 1e-5) decides convergence; `budget_us` a time budget per target.
/// The GIL is released and the targets run on the package's own pool; every target is solved
/// independently from its own seed, so results do not depend on `threads`.
///
/// # Errors
/// `ValueError` naming a bad argument (shape, dtype, NaN, unknown solver); a rejected target
/// is not an error but an `invalid_input` status with its message.
///
/// Kept as one function of about 110 lines: each Python argument converted and checked in the
/// signature's order (each error names its argument), then one call.
#[pyfunction]
#[pyo3(signature = (chain, targets, seeds = None, solver = None, threads = None, tolerance = 1e-5, budget_us = None))]
#[allow(clippy::too_many_arguments)] // the Python signature: keyword arguments with defaults
pub fn solve_batch(
    py: Python<'_>,
    chain: &JointChain,
    targets: &Bound<'_, PyAny>,
    seeds: Option<&Bound<'_, PyAny>>,
    solver: Option<&Bound<'_, PyAny>>,
    threads: Option<usize>,
    tolerance: f64,
    budget_us: Option<f64>,
) -> PyResult<BatchResult> {
    let dof = chain.chain.dof();
    let targets = f64_array(targets, "targets")?;
    let view = targets.as_array();
    let width = match view.shape() {
        [_, w @ (3 | 7)] => *w,
        shape => {
            return Err(PyValueError::new_err(format!(
                "targets: expected shape (N, 7) or (N, 3), got {}",
                shape_text(shape)
            )));
        }
    };
    expect_shape(&view, "targets", &[None, Some(width)])?;
    let n = view.shape()[0];
    let seeds: Option<Vec<Vec<f64>>> = match seeds {
        None => None,
        Some(s) if s.is_none() => None,
        Some(s) => {
            let s = f64_array(s, "seeds")?;
            let s = s.as_array();
            if s.ndim() == 1 {
                expect_shape(&s, "seeds", &[Some(dof)])?;
                Some(vec![s.iter().copied().collect(); n])
            } else {
                expect_shape(&s, "seeds", &[Some(n), Some(dof)])?;
                Some(rows(&s))
            }
        }
    };
    let mut config = match solver {
        Some(s) if !s.is_none() => solver_config(s)?,
        _ => SolverConfig::Lm(ikarus_solve::lm::LmConfig::default()),
    };
    if let Some(budget) = budget_us {
        if !(budget.is_finite() && budget > 0.0) {
            return Err(PyValueError::new_err(format!(
                "budget_us: {budget} is not positive"
            )));
        }
        match config.iteration_mut() {
            Some(iteration) => iteration.time_budget_us = Some(budget),
            None => {
                return Err(PyValueError::new_err(format!(
                    "budget_us: solver `{}` has no iteration budget",
                    config.kind()
                )));
            }
        }
    }
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return Err(PyValueError::new_err(format!(
            "tolerance: {tolerance} is not positive"
        )));
    }
    let threads = match threads {
        Some(0) => return Err(PyValueError::new_err("threads: must be at least 1")),
        Some(t) => t,
        None => pool::default_threads(),
    };
    let batch: Vec<BatchTarget> = rows(&view)
        .into_iter()
        .enumerate()
        .map(|(i, row)| BatchTarget {
            position: [row[0], row[1], row[2]],
            orientation: (width == 7).then(|| [row[3], row[4], row[5], row[6]]),
            seed: seeds.as_ref().map(|s| s[i].clone()),
        })
        .collect();
    drop(targets);
    let tolerance = Tolerance {
        position: tolerance,
        rotation: tolerance,
    };
    let pool = pool::pool(threads)?;
    let (skeleton, rust_chain) = (&chain.skeleton, &chain.chain);
    let results = py.detach(|| {
        no_panic(|| {
            // Chunks small enough to balance the threads. Each target starts from its own seed
            // on a fresh pose and the solvers keep no state between solves in a workspace, so
            // the split changes no result (tests: threads 1/2/3, reversed rows, one row alone).
            let chunk = n.div_ceil(threads * 8).clamp(1, 64);
            if n <= chunk {
                // One chunk: solve on this thread, without the hand-off to the pool and back.
                return Ok(ikarus_solve::threaded::solve_threaded(
                    skeleton, rust_chain, &batch, &config, tolerance, 1,
                ));
            }
            let parts: Vec<Vec<RustBatchResult>> = pool.install(|| {
                batch
                    .par_chunks(chunk)
                    .map(|part| {
                        ikarus_solve::threaded::solve_threaded(
                            skeleton, rust_chain, part, &config, tolerance, 1,
                        )
                    })
                    .collect()
            });
            Ok(parts.into_iter().flatten().collect())
        })
    })?;
    Ok(BatchResult { dof, results })
}
