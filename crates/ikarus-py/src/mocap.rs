//! `mocap`: a clip of 3-D keypoints → a motion of a skeleton (`ikarus_anim::mocap`).

use glam::DVec3;
use ikarus_anim::mocap::{
    BoneLengths, KeypointClip, Layout, MocapConfig, OneEuro, UpAxis, solve_positions,
};
use ikarus_anim::retarget::ContactConfig;
use ikarus_core::humanoid_map::HumanoidMap;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrays::{check_shape, expect_shape, f64_array, to_numpy};
use crate::model::{Motion, Skeleton};
use crate::{no_panic, value_error};

/// Solves keypoints `points` `(F, K, 3)` (NaN marks a missing point) of `layout` (`h36m`,
/// `coco`, `halpe26`, `mediapipe`, `smpl22`, `smpl24`, ... or a list of the skeleton's own
/// joint names) onto `skeleton` (its humanoid bones recognised from joint names).
///
/// `fps` the clip's rate; `confidence` `(F, K)` in `[0, 1]`; `up` the file's up axis (`"y"`,
/// `"z"`, `"-y"`; default the layout's usual one); `units` metres per file unit;
/// `bone_lengths` `"fit"`, `"keep"` or `"per_frame"`; `filter` the One-Euro filter;
/// `min_confidence` below which a point counts as missing; `contacts` the foot-contact cleanup
/// (planted feet held still and above the clip's floor). Returns `(skeleton, motion, report)`:
/// the (resized) skeleton, one pose per frame, and a dict measured by forward kinematics
/// (`frames`, `used`, `unused`, `filled`, `mean_error`, `max_error`, `scale`, `contacts`,
/// `contacts_unreached`).
///
/// # Errors
/// `ValueError` naming a bad argument, or with `ikarus_anim`'s `MocapError` message.
///
/// Kept as one function of about 110 lines: each Python argument converted and checked in the
/// signature's order (each error names its argument), then one call.
#[pyfunction]
#[pyo3(signature = (skeleton, points, layout, fps = 30.0, confidence = None, up = None, units = 1.0, bone_lengths = "fit", filter = false, min_confidence = 0.3, contacts = false))]
#[allow(clippy::too_many_arguments)] // the Python signature: keyword arguments with defaults
#[allow(clippy::fn_params_excessive_bools)]
pub fn mocap<'py>(
    py: Python<'py>,
    skeleton: &Skeleton,
    points: &Bound<'py, PyAny>,
    layout: &Bound<'py, PyAny>,
    fps: f64,
    confidence: Option<&Bound<'py, PyAny>>,
    up: Option<&str>,
    units: f64,
    bone_lengths: &str,
    filter: bool,
    min_confidence: f64,
    contacts: bool,
) -> PyResult<(Skeleton, Motion, Bound<'py, PyDict>)> {
    let layout = if let Ok(name) = layout.extract::<String>() {
        Layout::from_name(&name).map_err(|e| PyValueError::new_err(format!("layout: {e}")))?
    } else {
        Layout::Skeleton(layout.extract::<Vec<String>>().map_err(|_| {
            PyValueError::new_err("layout: expected a layout name or a list of joint names")
        })?)
    };
    let points = f64_array(points, "points")?;
    let view = points.as_array();
    check_shape(&view, "points", &[None, Some(layout.len()), Some(3)])?;
    let frames = view.shape()[0];
    let confidence = confidence.map(|c| f64_array(c, "confidence")).transpose()?;
    let confidence: Option<Vec<f64>> = match &confidence {
        Some(c) => {
            let c = c.as_array();
            expect_shape(&c, "confidence", &[Some(frames), Some(layout.len())])?;
            Some(c.iter().copied().collect())
        }
        None => None,
    };
    let up = match up {
        None => layout.usual_up(),
        Some("y") => UpAxis::Y,
        Some("z") => UpAxis::Z,
        Some("-y") => UpAxis::NegY,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "up: `{other}` (expected y, z or -y)"
            )));
        }
    };
    if !(units.is_finite() && units > 0.0) {
        return Err(PyValueError::new_err(format!(
            "units: {units} is not positive"
        )));
    }
    if !(fps.is_finite() && fps > 0.0) {
        return Err(PyValueError::new_err(format!(
            "fps: {fps} is not a positive rate"
        )));
    }
    let bone_lengths = match bone_lengths {
        "fit" => BoneLengths::Fit,
        "keep" => BoneLengths::Keep,
        "per_frame" | "per-frame" => BoneLengths::PerFrame,
        other => {
            return Err(PyValueError::new_err(format!(
                "bone_lengths: `{other}` (expected fit, keep or per_frame)"
            )));
        }
    };
    let points: Vec<DVec3> = view
        .as_standard_layout()
        .as_slice()
        .unwrap_or_default()
        .chunks_exact(3)
        .map(|p| up.to_y_up(DVec3::new(p[0], p[1], p[2]) * units))
        .collect();
    drop(view);
    let config = MocapConfig {
        bone_lengths,
        filter: filter.then(OneEuro::default),
        min_confidence,
        contacts: contacts.then(ContactConfig::default),
    };
    let target = &skeleton.inner;
    let result = py.detach(|| {
        no_panic(|| {
            let map = HumanoidMap::recognise(target);
            let clip = KeypointClip {
                layout: &layout,
                frame_time: 1.0 / fps,
                points: &points,
                confidence: confidence.as_deref(),
            };
            solve_positions(target, &map, &clip, &config).map_err(value_error)
        })
    })?;
    let report = PyDict::new(py);
    let r = &result.report;
    report.set_item("frames", r.frames)?;
    report.set_item("used", r.used)?;
    report.set_item("unused", r.unused.clone())?;
    report.set_item("filled", r.filled)?;
    report.set_item("mean_error", r.mean_error)?;
    report.set_item("max_error", r.max_error)?;
    report.set_item("scale", r.scale)?;
    report.set_item("contacts", r.contacts)?;
    report.set_item("contacts_unreached", r.contacts_unreached)?;
    Ok((
        Skeleton::new(result.skeleton),
        Motion {
            inner: result.motion,
            layout: None,
        },
        report,
    ))
}

/// Reads a keypoint file as `ikarus mocap` does (`.json`, `.csv` or `.npy`; see
/// `ikarus_formats::keypoints`). Returns a dict: `points` `(F, K, 3)` float64 in the file's own
/// units and axes (NaN where missing), `confidence` `(F, K)` or `None`, and the file's `layout`,
/// `fps` and `names` (each `None` when the file has none) — ready for [`mocap`].
///
/// # Errors
/// `ValueError` with the file name and the position of what is malformed.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts the path by value
pub fn read_keypoints(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let file =
        py.detach(|| no_panic(|| ikarus_formats::keypoints::read(&path).map_err(value_error)))?;
    let (frames, count) = (file.frames(), file.points_per_frame);
    let flat: Vec<f64> = file.points.iter().flat_map(DVec3::to_array).collect();
    let out = PyDict::new(py);
    out.set_item("points", to_numpy(py, &[frames, count, 3], &flat))?;
    out.set_item(
        "confidence",
        file.confidence
            .as_ref()
            .map(|c| to_numpy(py, &[frames, count], c)),
    )?;
    out.set_item("layout", file.layout)?;
    out.set_item("fps", file.fps)?;
    out.set_item("names", file.names)?;
    Ok(out)
}
