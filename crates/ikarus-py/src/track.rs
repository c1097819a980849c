//! `track`: an avatar posed from VR trackers (`ikarus_anim::track`, what `ikarus track` runs).

use std::path::Path;

use ikarus_anim::retarget::Character;
use ikarus_anim::track::{Points, TrackConfig};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::trackers::{Track, TrackerPose, Trackers};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrays::{check_shape, f64_array};
use crate::model::Motion;
use crate::retarget::Given;
use crate::{no_panic, value_error};

/// The recording as given: a file (JSON or CSV), or a dict of `(frames, 7)` arrays.
///
/// Kept as one function of about 150 lines: each accepted input (a file, or a dict of arrays)
/// converted and checked in one place, so every error names its tracker and row.
fn recording(trackers: &Bound<'_, PyAny>, fps: Option<f64>) -> PyResult<Trackers> {
    if let Ok(path) = trackers.extract::<String>() {
        if fps.is_some() {
            return Err(PyValueError::new_err(
                "fps: the file gives its own frame rate",
            ));
        }
        return ikarus_formats::trackers::read(Path::new(&path)).map_err(value_error);
    }
    let Ok(dict) = trackers.cast::<PyDict>() else {
        return Err(PyValueError::new_err(
            "trackers: expected a file name or a dict {\"head\": array (frames, 7), ...}",
        ));
    };
    let Some(fps) = fps else {
        return Err(PyValueError::new_err("fps: needed with a dict of arrays"));
    };
    let mut tracks = Vec::with_capacity(dict.len());
    for (key, value) in dict.iter() {
        let name: String = key
            .extract()
            .map_err(|_| PyValueError::new_err("trackers: keys must be VRM bone names"))?;
        let bone = HumanoidBone::from_vrm_name(&name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "trackers: `{name}` is not a VRM humanoid bone name (e.g. `head`, `leftHand`)"
            ))
        })?;
        let label = format!("trackers[{name:?}]");
        let array = f64_array(&value, &label)?;
        let view = array.as_array();
        // NaN marks a lost sample: only the shape is checked.
        check_shape(&view, &label, &[None, Some(7)])?;
        let samples = view
            .outer_iter()
            .map(|row| {
                let mut r = [0.0; 7];
                for (v, x) in r.iter_mut().zip(row.iter()) {
                    *v = *x;
                }
                TrackerPose::from_row(r)
            })
            .collect();
        tracks.push(Track {
            bone,
            samples,
            offset: None,
        });
    }
    Ok(Trackers { fps, tracks })
}

/// Poses `skeleton` from `trackers` and returns `(motion, report)`.
///
/// `trackers`: a recording file (`.json` / `.csv`, the format `ikarus track` reads) or a dict
/// `{"head": array (frames, 7), "leftHand": ..., ...}` of rows `[x, y, z, qx, qy, qz, qw]`
/// (world, metres, +Y up; NaN rows are lost samples) with `fps`. `skeleton`: the avatar (a
/// file or a Skeleton). `points`: 3, 4 or 6 (default every tracker given).
/// `calibration_frame`: the frame where the user stands in the avatar's reference pose.
/// `floor`: the floor's height. The report: `frames`, `scale`, `arm_scale`, `held` (per
/// frame, the trackers held over), `stepping` (per frame, `[left, right]`), `status` and
/// `position_error` per frame. The GIL is released while solving.
///
/// # Errors
/// `ValueError` naming the argument, or with the file's or `ikarus_anim`'s message.
#[pyfunction]
#[pyo3(signature = (trackers, skeleton, points = None, fps = None, calibration_frame = 0, floor = 0.0))]
pub fn track<'py>(
    py: Python<'py>,
    trackers: &Bound<'py, PyAny>,
    skeleton: &Bound<'py, PyAny>,
    points: Option<usize>,
    fps: Option<f64>,
    calibration_frame: usize,
    floor: f64,
) -> PyResult<(Motion, Bound<'py, PyDict>)> {
    let recording = recording(trackers, fps)?;
    let avatar = Given::name_or_skeleton(skeleton, "skeleton: expected a file name or a Skeleton")?;
    let points = match points {
        None => None,
        Some(n) => Some(
            Points::from_count(n)
                .ok_or_else(|| PyValueError::new_err(format!("points: 3, 4 or 6, got {n}")))?,
        ),
    };
    let config = TrackConfig {
        points,
        calibration_frame,
        floor,
        ..TrackConfig::default()
    };
    let tracked = py.detach(|| {
        no_panic(|| {
            let avatar = avatar.open("skeleton", None, None)?;
            let character = Character {
                skeleton: &avatar.skeleton,
                map: &avatar.map,
            };
            ikarus_anim::track::track(character, &recording, &config, None).map_err(value_error)
        })
    })?;
    let report = PyDict::new(py);
    report.set_item("frames", tracked.motion.len())?;
    report.set_item("scale", tracked.calibration.scale)?;
    report.set_item("arm_scale", tracked.calibration.arm_scale)?;
    report.set_item(
        "held",
        tracked
            .reports
            .iter()
            .map(|r| r.held.iter().map(|b| b.vrm_name()).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
    )?;
    report.set_item(
        "stepping",
        tracked
            .reports
            .iter()
            .map(|r| r.stepping)
            .collect::<Vec<_>>(),
    )?;
    report.set_item(
        "status",
        tracked
            .reports
            .iter()
            .map(|r| crate::robot::status_name(r.solve.status))
            .collect::<Vec<_>>(),
    )?;
    report.set_item(
        "position_error",
        tracked
            .reports
            .iter()
            .map(|r| r.solve.position_error)
            .collect::<Vec<_>>(),
    )?;
    Ok((
        Motion {
            inner: tracked.motion,
            layout: None,
        },
        report,
    ))
}
