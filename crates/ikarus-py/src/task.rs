//! `solve`: one IK task on a skeleton, with the JSON task format's names (`ikarus solve`), and
//! its `Report`.

use std::time::Instant;

use glam::{DQuat, DVec3};
use ikarus_solve::{Effector, Goal, IkTask, SolveReport, SolverConfig, Tolerance};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde::Deserialize;

use crate::model::{Pose, Skeleton};
use crate::no_panic;
use crate::robot::{solver_config, status_name};

/// One effector as the task format writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EffectorSpec {
    joint: String,
    position: Option<[f64; 3]>,
    orientation: Option<[f64; 4]>,
    weight: Option<f64>,
}

/// What a solve reported, measured by forward kinematics.
#[pyclass(module = "ikarus._ikarus", frozen, get_all)]
#[derive(Clone)]
pub struct Report {
    /// `converged`, `max_iterations`, `unreachable` or `invalid_input`.
    pub status: String,
    /// Largest effector position error, metres.
    pub position_error: f64,
    /// Largest effector rotation error, radians.
    pub rotation_error: f64,
    /// Iterations over all restarts.
    pub iterations: u32,
    /// Random restarts used.
    pub restarts: u32,
    /// True when a joint ended against its limit.
    pub limits_active: bool,
    /// Joints pushing against their limits.
    pub active_limits: Vec<String>,
    /// Why the input was rejected.
    pub message: Option<String>,
    /// The solver kind, or the closed form `auto` ran.
    pub solver: String,
    /// Wall time of the solve call, nanoseconds.
    pub time_ns: u64,
}

impl Report {
    fn new(report: SolveReport, config: &SolverConfig, time_ns: u64) -> Self {
        Self {
            status: status_name(report.status),
            position_error: report.position_error,
            rotation_error: report.rotation_error,
            iterations: report.iterations,
            restarts: report.restarts,
            limits_active: report.limits_active,
            active_limits: report.active_limits,
            message: report.message,
            solver: report.ran.unwrap_or_else(|| config.kind().to_owned()),
            time_ns,
        }
    }
}

#[pymethods]
impl Report {
    /// True when every effector reached its goal within the tolerance.
    #[getter]
    fn converged(&self) -> bool {
        self.status == "converged"
    }

    /// The report as a dict (non-finite errors stay floats).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("status", &self.status)?;
        d.set_item("position_error", self.position_error)?;
        d.set_item("rotation_error", self.rotation_error)?;
        d.set_item("iterations", self.iterations)?;
        d.set_item("restarts", self.restarts)?;
        d.set_item("limits_active", self.limits_active)?;
        d.set_item("active_limits", self.active_limits.clone())?;
        d.set_item("message", self.message.clone())?;
        d.set_item("solver", &self.solver)?;
        d.set_item("time_ns", self.time_ns)?;
        Ok(d)
    }

    /// Rebuilds a report from [`Report::to_dict`]'s dict (what pickling stores).
    #[staticmethod]
    fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<Self> {
        let get = |key: &str| {
            d.get_item(key)?
                .ok_or_else(|| PyValueError::new_err(format!("report: missing `{key}`")))
        };
        Ok(Self {
            status: get("status")?.extract()?,
            position_error: get("position_error")?.extract()?,
            rotation_error: get("rotation_error")?.extract()?,
            iterations: get("iterations")?.extract()?,
            restarts: get("restarts")?.extract()?,
            limits_active: get("limits_active")?.extract()?,
            active_limits: get("active_limits")?.extract()?,
            message: get("message")?.extract()?,
            solver: get("solver")?.extract()?,
            time_ns: get("time_ns")?.extract()?,
        })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let args = PyTuple::new(py, [slf.get().to_dict(py)?])?;
        PyTuple::new(py, [slf.get_type().getattr("from_dict")?, args.into_any()])
    }

    fn __repr__(&self) -> String {
        format!(
            "Report(status={:?}, position_error={:e}, rotation_error={:e}, iterations={}, solver={:?})",
            self.status, self.position_error, self.rotation_error, self.iterations, self.solver
        )
    }
}

/// Solves one IK task on `skeleton` from `pose` (default the rest pose) and returns the new
/// pose and its [`Report`].
///
/// `effectors` is a list of dicts with the task format's names (`joint`, `position`
/// `[x, y, z]` and/or `orientation` `[x, y, z, w]` in model space, `weight`); `solver` a kind,
/// `kind/method` or a dict (`{"kind": "lm", "iteration": {...}}`, default `none`); `base` the
/// joint that stays fixed; `tolerance` a dict `{"position": m, "rotation": rad}` or one number
/// for both. The GIL is released while solving.
///
/// # Errors
/// `ValueError` naming a bad argument (unknown joint, malformed effector or solver); a task
/// the solver rejects is an `invalid_input` report, not an error.
#[pyfunction]
#[pyo3(signature = (skeleton, effectors, pose = None, solver = None, base = None, tolerance = None))]
pub fn solve(
    py: Python<'_>,
    skeleton: &Skeleton,
    effectors: &Bound<'_, PyAny>,
    pose: Option<&Pose>,
    solver: Option<&Bound<'_, PyAny>>,
    base: Option<&str>,
    tolerance: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Pose, Report)> {
    let s = &skeleton.inner;
    let json = py.import("json")?;
    let text: String = json.call_method1("dumps", (effectors,))?.extract()?;
    let specs: Vec<EffectorSpec> = serde_json::from_str(&text)
        .map_err(|e| PyValueError::new_err(format!("effectors: {e}")))?;
    let config = match solver {
        Some(solver) if !solver.is_none() => solver_config(solver)?,
        _ => SolverConfig::None,
    };
    let tolerance = match tolerance {
        Some(t) if t.extract::<f64>().is_ok() => {
            let t: f64 = t.extract()?;
            Tolerance {
                position: t,
                rotation: t,
            }
        }
        Some(t) if !t.is_none() => {
            let text: String = json.call_method1("dumps", (t,))?.extract()?;
            serde_json::from_str(&text)
                .map_err(|e| PyValueError::new_err(format!("tolerance: {e}")))?
        }
        _ => Tolerance::default(),
    };
    let base = base
        .map(|name| s.try_joint(name))
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("base: {e}")))?;
    let effectors = specs
        .iter()
        .map(|e| {
            Ok(Effector {
                joint: s
                    .try_joint(&e.joint)
                    .map_err(|err| PyValueError::new_err(format!("effectors: {err}")))?,
                goal: Goal {
                    position: e.position.map(DVec3::from_array),
                    orientation: e.orientation.map(DQuat::from_array),
                },
                weight: e.weight.unwrap_or(1.0),
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let task = IkTask {
        effectors,
        base,
        tolerance,
    };
    let mut pose = pose.map_or_else(|| s.rest_pose(), |p| p.inner.clone());
    if pose.len() != s.len() {
        return Err(PyValueError::new_err(format!(
            "pose: {} joints, the skeleton has {}",
            pose.len(),
            s.len()
        )));
    }
    let report = py.detach(|| {
        no_panic(|| {
            let start = Instant::now();
            let report = ikarus_solve::solve(s, &task, &config, &mut pose);
            let time_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            Ok(Report::new(report, &config, time_ns))
        })
    })?;
    Ok((Pose { inner: pose }, report))
}
