//! `ground`: a humanoid motion made to stand on uneven ground (`ikarus_anim::ground`, what
//! `ikarus ground` runs).

use std::path::Path;

use ikarus_anim::ground::{GroundConfig, ground_motion};
use ikarus_anim::retarget::Character;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_jobs::Terrain;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::model::{Motion, skeleton_motion_pair};
use crate::{no_panic, value_error};

/// Grounds `motion` on `terrain` and returns `(motion, report)`: the motion on the same
/// skeleton and a dict (`frames`, `contacts` per foot `[[start, end], ...]`,
/// `pelvis_offsets` m per frame, `floor` m, `unreached` frames, `shifts`: per frame the left
/// and right foot's horizontal move off a step's edge `[[x, y, z], [x, y, z]]`, m).
///
/// `motion`: a `(Skeleton, Motion)` pair (what `read` returns; the humanoid map recognised
/// from joint names) in metres. `terrain`: a terrain file name (JSON) or a dict
/// `{"heightfield": {"origin": [x0, z0], "cell": c, "heights": [[...]]}}` /
/// `{"plane": {"point": [x, y, z], "normal": [x, y, z]}}`. `time_constant`: seconds of the
/// pelvis's smoothing. The GIL is released while grounding.
///
/// # Errors
/// `ValueError` naming the argument, or with the terrain's or `ikarus_anim`'s message.
#[pyfunction]
#[pyo3(signature = (motion, terrain, time_constant = 0.1))]
pub fn ground<'py>(
    py: Python<'py>,
    motion: &Bound<'py, PyAny>,
    terrain: &Bound<'py, PyAny>,
    time_constant: f64,
) -> PyResult<(Motion, Bound<'py, PyDict>)> {
    let Some((skeleton, Some(clip))) = skeleton_motion_pair(motion) else {
        return Err(PyValueError::new_err(
            "motion: expected a (Skeleton, Motion) pair",
        ));
    };
    let terrain = if let Ok(path) = terrain.extract::<String>() {
        Terrain::read(Path::new(&path)).map_err(value_error)?
    } else if terrain.cast::<PyDict>().is_ok() {
        let text: String = py
            .import("json")?
            .call_method1("dumps", (terrain,))?
            .extract()?;
        Terrain::from_json(&text, "terrain").map_err(value_error)?
    } else {
        return Err(PyValueError::new_err(
            "terrain: expected a file name or a dict",
        ));
    };
    let config = GroundConfig {
        time_constant,
        ..GroundConfig::default()
    };
    let grounded = py.detach(|| {
        no_panic(|| {
            let map = HumanoidMap::recognise(&skeleton);
            let character = Character {
                skeleton: &skeleton,
                map: &map,
            };
            ground_motion(character, &clip, &terrain, &config).map_err(value_error)
        })
    })?;
    let report = PyDict::new(py);
    report.set_item("frames", grounded.motion.len())?;
    report.set_item(
        "contacts",
        grounded
            .contacts
            .iter()
            .map(|c| c.iter().map(|&(a, b)| [a, b]).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
    )?;
    report.set_item("pelvis_offsets", grounded.pelvis_offsets.clone())?;
    report.set_item("floor", grounded.floor)?;
    report.set_item("unreached", grounded.unreached)?;
    report.set_item(
        "shifts",
        grounded
            .shifts
            .iter()
            .map(|feet| feet.map(|v| v.to_array()))
            .collect::<Vec<_>>(),
    )?;
    Ok((
        Motion {
            inner: grounded.motion,
            layout: None,
        },
        report,
    ))
}
