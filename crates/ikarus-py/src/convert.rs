//! `convert`: one file to another, as `ikarus convert` does (`ikarus_jobs::convert`, the same
//! library call).

use std::path::Path;

use ikarus_jobs::ConvertOptions;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::model::{bone_map_json, read_options};
use crate::{no_panic, value_error};

/// Converts `source` to `destination` by their extensions, as `ikarus convert` does, and returns
/// a dict `{"joints", "frames", "frame_rate", "unmatched", "renamed", "bvh_root"}`
/// (`unmatched`: a VMD's keyed bones its model lacks; `renamed`: for a .bvh, the `(name, name
/// in the file)` of joints whose names BVH cannot hold as they are; `bvh_root`: for a .bvh of a
/// skeleton with several roots, the channel-less ROOT written above them, else `None`).
/// Sources: `builtin:humanoid` (one rest frame), .bvh, .gltf, .glb, .vrm,
/// .vrma, .pmx/.pmd (with `motion`, a VMD played with IK) or .vmd (played on `model`);
/// outputs: .bvh, .glb (new, or added `into` a glTF/VRM whose skin is the source's skeleton),
/// .vmd (MMD sources: for their model) or .vrma (the humanoid the source declares or its names
/// give, `map` overriding bones). `scale`, `fps`, `animation`, `mode` as in `read`. The GIL is
/// released while converting.
///
/// # Errors
/// `ValueError` with the message `ikarus convert` prints: unknown extensions, unreadable
/// files (file, line, column), options that do not apply, a non-positive `scale` / `fps`.
#[pyfunction]
#[pyo3(signature = (source, destination, scale = 1.0, fps = None, animation = None, model = None, motion = None, mode = "compatible", into = None, map = None))]
#[allow(clippy::too_many_arguments)] // the Python signature: keyword arguments with defaults
pub fn convert<'py>(
    py: Python<'py>,
    source: &str,
    destination: &str,
    scale: f64,
    fps: Option<f64>,
    animation: Option<&str>,
    model: Option<&str>,
    motion: Option<&str>,
    mode: &str,
    into: Option<&str>,
    map: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let map = bone_map_json(map, "map")?;
    let options = ConvertOptions {
        read: read_options(scale, fps, animation, model, motion, mode)?,
        into: into.map(Path::new),
        map_json: map.as_deref(),
    };
    let converted = py.detach(|| {
        no_panic(|| {
            ikarus_jobs::convert(source, Path::new(destination), &options, |_, _| {})
                .map_err(value_error)
        })
    })?;
    let summary = PyDict::new(py);
    summary.set_item("joints", converted.joints)?;
    summary.set_item("frames", converted.frames)?;
    summary.set_item("frame_rate", converted.frame_rate)?;
    summary.set_item("unmatched", converted.unmatched)?;
    summary.set_item("renamed", converted.renamed)?;
    summary.set_item("bvh_root", converted.bvh_root)?;
    Ok(summary)
}
