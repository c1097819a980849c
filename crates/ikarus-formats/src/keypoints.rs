//! Keypoint files: 3-D joint positions per frame from pose estimators and capture systems, and
//! segment orientations from inertial suits.
//!
//! - **JSON**: `{"layout": "h36m", "fps": 50, "names": [...], "frames": [[[x, y, z], ...], ...]}`;
//!   a point may carry a confidence as a fourth number, and `null` marks a missing point.
//!   `layout`, `fps` and `names` are optional.
//! - **CSV**: one row per frame, `x, y, z` per point (or `x, y, z, c` when a header row names
//!   confidence columns `*_c`, `*_conf`, `*_confidence`, `*_score` or `*_visibility`); an
//!   optional header row gives the point names (`nose_x, nose_y, nose_z, ...`); empty cells
//!   and `nan` mark missing values.
//! - **`NumPy` `.npy`**: a C-order `float32` or `float64` array, frames × points × 3, or × 4
//!   with confidence.
//! - **Segment orientations (JSON)**: `{"fps": 60, "segments": ["hips", ...], "frames":
//!   [[[x, y, z, w], ...], ...], "root_positions": [[x, y, z], ...], "calibration_frame": 0}`.
//!
//! Values stay in the file's units and axes; the caller converts them. Readers never panic,
//! check every count against the input's size, and name the frame of a bad value.

#[cfg(feature = "fs")]
use std::path::Path;

use glam::{DQuat, DVec3};
use serde_json::Value;

#[cfg(feature = "fs")]
use crate::FormatError;

/// Keypoints read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct KeypointFile {
    /// The layout the file names, if any.
    pub layout: Option<String>,
    /// Frames per second, if the file says.
    pub fps: Option<f64>,
    /// Point names, if the file gives them.
    pub names: Option<Vec<String>>,
    /// Points per frame.
    pub points_per_frame: usize,
    /// Frame-major points in the file's units; NaN marks a missing point.
    pub points: Vec<DVec3>,
    /// Confidence per point (same indexing), when the file has it.
    pub confidence: Option<Vec<f64>>,
}

impl KeypointFile {
    /// A file with no points yet, the readers' start.
    fn empty(layout: Option<String>, fps: Option<f64>, names: Option<Vec<String>>) -> Self {
        Self {
            layout,
            fps,
            names,
            points_per_frame: 0,
            points: Vec::new(),
            confidence: None,
        }
    }

    /// Number of frames.
    pub fn frames(&self) -> usize {
        self.points
            .len()
            .checked_div(self.points_per_frame)
            .unwrap_or(0)
    }
}

/// Segment orientations read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentFile {
    /// Frames per second, if the file says.
    pub fps: Option<f64>,
    /// Segment names (humanoid bone names such as `leftUpperArm`, or joint names).
    pub segments: Vec<String>,
    /// Frame-major orientations, `world_from_sensor`.
    pub orientations: Vec<DQuat>,
    /// The root's position per frame, if given.
    pub root_positions: Option<Vec<DVec3>>,
    /// The frame in which the subject holds the rest pose (default 0).
    pub calibration_frame: usize,
}

/// What is wrong with a keypoint file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeypointError {
    /// The file is not valid JSON or lacks `frames`.
    #[error("{0}")]
    Json(String),
    /// A CSV row is malformed.
    #[error("line {line}: {message}")]
    Csv {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The `.npy` header or data is not a supported array (C-order float32/float64,
    /// frames × points × 3 or 4).
    #[error("{0}")]
    Npy(String),
    /// A frame does not fit the others (point count, numbers).
    #[error("frame {frame}: {message}")]
    Frame {
        /// 0-based frame.
        frame: usize,
        /// What is wrong.
        message: String,
    },
    /// No frames.
    #[error("the file has no frames")]
    Empty,
}

/// Reads keypoints from `path` by extension (`.json`, `.csv`, `.npy`).
///
/// # Errors
/// [`FormatError::Io`] when unreadable, [`FormatError::Keypoints`] naming the file and frame
/// or line when malformed, [`FormatError::UnknownFormat`] for other extensions.
#[cfg(feature = "fs")]
#[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
pub fn read(path: &Path) -> Result<KeypointFile, FormatError> {
    let bytes = std::fs::read(path).map_err(|source| FormatError::Io {
        path: path.to_owned(),
        source,
    })?;
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let result = match extension.as_deref() {
        Some("json") => parse_json(&String::from_utf8_lossy(&bytes)),
        Some("csv") => parse_csv(&String::from_utf8_lossy(&bytes)),
        Some("npy") => parse_npy(&bytes),
        _ => {
            return Err(FormatError::UnknownFormat {
                path: path.to_owned(),
            });
        }
    };
    result.map_err(|source| FormatError::Keypoints {
        path: path.to_owned(),
        source,
    })
}

/// Reads segment orientations from a JSON file.
///
/// # Errors
/// As [`read`].
#[cfg(feature = "fs")]
#[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
pub fn read_segments(path: &Path) -> Result<SegmentFile, FormatError> {
    let text = std::fs::read_to_string(path).map_err(|source| FormatError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_segments_json(&text).map_err(|source| FormatError::Keypoints {
        path: path.to_owned(),
        source,
    })
}

/// True when a JSON text is a segment-orientation file (it has `segments`).
pub fn is_segment_json(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .is_some_and(|v| v.get("segments").is_some())
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Null => Some(f64::NAN),
        other => other.as_f64(),
    }
}

/// Parses the JSON keypoint format.
///
/// # Errors
/// [`KeypointError`] naming the frame of a malformed point.
pub fn parse_json(text: &str) -> Result<KeypointFile, KeypointError> {
    let root: Value = serde_json::from_str(text).map_err(|e| KeypointError::Json(e.to_string()))?;
    let frames = root
        .get("frames")
        .and_then(Value::as_array)
        .ok_or_else(|| KeypointError::Json("expected an object with a `frames` array".into()))?;
    let layout = root
        .get("layout")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let fps = root.get("fps").and_then(Value::as_f64);
    let names = root.get("names").and_then(Value::as_array).map(|a| {
        a.iter()
            .map(|n| n.as_str().unwrap_or_default().to_owned())
            .collect()
    });
    let mut out = KeypointFile::empty(layout, fps, names);
    let mut confidence = Vec::new();
    let mut any_confidence = false;
    for (f, frame) in frames.iter().enumerate() {
        let bad = |message: String| KeypointError::Frame { frame: f, message };
        let frame = frame
            .as_array()
            .ok_or_else(|| bad("expected an array of points".into()))?;
        if f == 0 {
            out.points_per_frame = frame.len();
        } else if frame.len() != out.points_per_frame {
            return Err(bad(format!(
                "{} points, the first frame has {}",
                frame.len(),
                out.points_per_frame
            )));
        }
        for (k, point) in frame.iter().enumerate() {
            if point.is_null() {
                out.points.push(DVec3::NAN);
                confidence.push(0.0);
                continue;
            }
            let values = point
                .as_array()
                .filter(|a| a.len() == 3 || a.len() == 4)
                .ok_or_else(|| bad(format!("point {k}: expected [x, y, z] or [x, y, z, c]")))?;
            let v: Vec<f64> = values
                .iter()
                .map(number)
                .collect::<Option<_>>()
                .ok_or_else(|| bad(format!("point {k}: expected numbers")))?;
            out.points.push(DVec3::new(v[0], v[1], v[2]));
            confidence.push(v.get(3).copied().unwrap_or(1.0));
            any_confidence |= v.len() == 4;
        }
    }
    if out.points.is_empty() {
        return Err(KeypointError::Empty);
    }
    out.confidence = any_confidence.then_some(confidence);
    Ok(out)
}

/// Parses the segment-orientation JSON format.
///
/// # Errors
/// [`KeypointError`] naming the frame of a malformed orientation.
pub fn parse_segments_json(text: &str) -> Result<SegmentFile, KeypointError> {
    let root: Value = serde_json::from_str(text).map_err(|e| KeypointError::Json(e.to_string()))?;
    let segments: Vec<String> = root
        .get("segments")
        .and_then(Value::as_array)
        .ok_or_else(|| KeypointError::Json("expected a `segments` array of names".into()))?
        .iter()
        .map(|n| n.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(|| KeypointError::Json("`segments` must hold names".into()))?;
    let frames = root
        .get("frames")
        .and_then(Value::as_array)
        .ok_or_else(|| KeypointError::Json("expected a `frames` array".into()))?;
    let mut orientations = Vec::with_capacity(frames.len().min(1 << 20) * segments.len());
    for (f, frame) in frames.iter().enumerate() {
        let bad = |message: String| KeypointError::Frame { frame: f, message };
        let frame = frame
            .as_array()
            .filter(|a| a.len() == segments.len())
            .ok_or_else(|| bad(format!("expected {} quaternions", segments.len())))?;
        for (k, q) in frame.iter().enumerate() {
            let v: Vec<f64> = q
                .as_array()
                .filter(|a| a.len() == 4)
                .and_then(|a| a.iter().map(Value::as_f64).collect())
                .ok_or_else(|| bad(format!("segment {k}: expected [x, y, z, w]")))?;
            let q = DQuat::from_xyzw(v[0], v[1], v[2], v[3]);
            if !(q.is_finite() && q.length() > 1e-9) {
                return Err(bad(format!("segment {k}: not a rotation")));
            }
            orientations.push(q.normalize());
        }
    }
    if orientations.is_empty() {
        return Err(KeypointError::Empty);
    }
    let root_positions = match root.get("root_positions").and_then(Value::as_array) {
        None => None,
        Some(list) => {
            if list.len() != frames.len() {
                return Err(KeypointError::Json(format!(
                    "{} root positions for {} frames",
                    list.len(),
                    frames.len()
                )));
            }
            let mut out = Vec::with_capacity(list.len());
            for (f, p) in list.iter().enumerate() {
                let v: Vec<f64> = p
                    .as_array()
                    .filter(|a| a.len() == 3)
                    .and_then(|a| a.iter().map(Value::as_f64).collect())
                    .ok_or_else(|| KeypointError::Frame {
                        frame: f,
                        message: "root position: expected [x, y, z]".into(),
                    })?;
                out.push(DVec3::new(v[0], v[1], v[2]));
            }
            Some(out)
        }
    };
    let calibration_frame = root
        .get("calibration_frame")
        .and_then(Value::as_u64)
        .map_or(0, |f| usize::try_from(f).unwrap_or(usize::MAX));
    if calibration_frame >= frames.len() {
        return Err(KeypointError::Json(format!(
            "calibration_frame {calibration_frame} is not one of the {} frames",
            frames.len()
        )));
    }
    Ok(SegmentFile {
        fps: root.get("fps").and_then(Value::as_f64),
        segments,
        orientations,
        root_positions,
        calibration_frame,
    })
}

/// The names and values per point of a CSV header row; `None` when the row is numbers.
fn csv_header(i: usize, first: &str) -> Result<Option<(Vec<String>, usize)>, KeypointError> {
    let cells: Vec<&str> = first.split(',').map(str::trim).collect();
    let numeric = cells
        .iter()
        .all(|c| c.is_empty() || c.eq_ignore_ascii_case("nan") || c.parse::<f64>().is_ok());
    if numeric {
        return Ok(None);
    }
    let per_point = if cells.iter().any(|c| is_confidence_column(c)) {
        4
    } else {
        3
    };
    if !cells.len().is_multiple_of(per_point) {
        return Err(KeypointError::Csv {
            line: i + 1,
            message: format!(
                "{} header columns is not a whole number of points of {per_point}",
                cells.len()
            ),
        });
    }
    let names = cells
        .chunks(per_point)
        .map(|c| {
            let n = c[0];
            n.strip_suffix("_x")
                .or_else(|| n.strip_suffix(".x"))
                .or_else(|| n.strip_suffix("_X"))
                .unwrap_or(n)
                .to_owned()
        })
        .collect();
    Ok(Some((names, per_point)))
}

fn is_confidence_column(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    ["_c", "_conf", "_confidence", "_score", "_visibility"]
        .iter()
        .any(|s| name.ends_with(s))
}

/// Parses the CSV keypoint format.
///
/// # Errors
/// [`KeypointError::Csv`] naming the line of a malformed row.
pub fn parse_csv(text: &str) -> Result<KeypointFile, KeypointError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let mut rows: Vec<(usize, &str)> = Vec::new();
    let (names, per_point) = match lines.next() {
        Some((i, first)) => {
            let header = csv_header(i, first)?;
            if header.is_none() {
                rows.push((i, first));
            }
            header.map_or((None, 3), |(n, p)| (Some(n), p))
        }
        None => (None, 3),
    };
    rows.extend(lines);
    let mut out = KeypointFile::empty(None, None, names);
    let mut confidence = Vec::new();
    let mut columns = None;
    for (frame, (i, row)) in rows.iter().enumerate() {
        let bad = |message: String| KeypointError::Csv {
            line: i + 1,
            message: format!("frame {frame}: {message}"),
        };
        let mut values = Vec::new();
        for cell in row.split(',').map(str::trim) {
            if cell.is_empty() || cell.eq_ignore_ascii_case("nan") {
                values.push(f64::NAN);
            } else {
                values.push(
                    cell.parse::<f64>()
                        .map_err(|_| bad(format!("`{cell}` is not a number")))?,
                );
            }
        }
        match columns {
            None => {
                if values.len() % per_point != 0 {
                    return Err(bad(format!(
                        "{} values is not a whole number of points of {per_point}",
                        values.len()
                    )));
                }
                columns = Some(values.len());
            }
            Some(c) if c != values.len() => {
                return Err(bad(format!(
                    "{} values, the first row has {c}",
                    values.len()
                )));
            }
            Some(_) => {}
        }
        for p in values.chunks_exact(per_point) {
            out.points.push(DVec3::new(p[0], p[1], p[2]));
            confidence.push(p.get(3).copied().unwrap_or(1.0));
        }
    }
    out.points_per_frame = columns.unwrap_or(0) / per_point;
    if out.points.is_empty() || out.points_per_frame == 0 {
        return Err(KeypointError::Empty);
    }
    if let Some(n) = &out.names
        && n.len() != out.points_per_frame
    {
        return Err(KeypointError::Csv {
            line: 1,
            message: format!("{} names for {} points", n.len(), out.points_per_frame),
        });
    }
    out.confidence = (per_point == 4).then_some(confidence);
    Ok(out)
}

/// The header of a `.npy` file: value size, byte order, shape and where the data starts.
fn npy_header(bytes: &[u8]) -> Result<(usize, bool, Vec<usize>, usize), KeypointError> {
    let err = |m: &str| KeypointError::Npy(m.to_owned());
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(err("not a .npy file (missing the \\x93NUMPY magic)"));
    }
    let (header_len, start) = match bytes[6] {
        1 => (
            usize::from(u16::from_le_bytes([bytes[8], bytes[9]])),
            10_usize,
        ),
        2 | 3 => {
            let b = bytes
                .get(8..12)
                .ok_or_else(|| err("truncated header length"))?;
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (usize::try_from(n).map_err(|_| err("header too long"))?, 12)
        }
        v => return Err(KeypointError::Npy(format!("unsupported .npy version {v}"))),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| err("header runs past the end of the file"))?;
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| err("header is not text"))?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest)
    };
    let descr = field("descr")
        .and_then(|r| r.strip_prefix('\''))
        .and_then(|r| r.split('\'').next())
        .ok_or_else(|| err("header has no 'descr'"))?;
    let (size, little) = match descr {
        "<f4" | "|f4" | "=f4" => (4, true),
        ">f4" => (4, false),
        "<f8" | "|f8" | "=f8" => (8, true),
        ">f8" => (8, false),
        other => {
            return Err(KeypointError::Npy(format!(
                "dtype `{other}`: expected float32 or float64 (`<f4`, `<f8`)"
            )));
        }
    };
    if field("fortran_order").is_some_and(|r| r.starts_with("True")) {
        return Err(err(
            "Fortran-order arrays are not supported; save with C order",
        ));
    }
    let shape_text = field("shape")
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| err("header has no 'shape'"))?;
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| err("shape is not a tuple of integers"))?;
    Ok((size, little, shape, end))
}

/// Parses a `NumPy` `.npy` array (format versions 1–3), C order, little- or big-endian
/// `float32` / `float64`, shape `(frames, points, 3)` or `(frames, points, 4)`.
///
/// # Errors
/// [`KeypointError::Npy`] naming what does not fit.
pub fn parse_npy(bytes: &[u8]) -> Result<KeypointFile, KeypointError> {
    let err = |m: &str| KeypointError::Npy(m.to_owned());
    let (size, little, shape, end) = npy_header(bytes)?;
    let [frames, points, per_point] = shape[..] else {
        return Err(KeypointError::Npy(format!(
            "shape {shape:?}: expected (frames, points, 3) or (frames, points, 4)"
        )));
    };
    if per_point != 3 && per_point != 4 {
        return Err(KeypointError::Npy(format!(
            "shape {shape:?}: the last axis must be 3 (x, y, z) or 4 (x, y, z, confidence)"
        )));
    }
    let count = frames
        .checked_mul(points)
        .and_then(|n| n.checked_mul(per_point))
        .ok_or_else(|| err("shape overflows"))?;
    let data = &bytes[end..];
    if count.checked_mul(size) != Some(data.len()) {
        return Err(KeypointError::Npy(format!(
            "shape {shape:?} needs {count} values of {size} bytes, the file holds {} bytes of data",
            data.len()
        )));
    }
    if count == 0 {
        return Err(KeypointError::Empty);
    }
    let value = |i: usize| -> f64 {
        let b = &data[i * size..(i + 1) * size];
        if size == 4 {
            let a = [b[0], b[1], b[2], b[3]];
            f64::from(if little {
                f32::from_le_bytes(a)
            } else {
                f32::from_be_bytes(a)
            })
        } else {
            let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
            if little {
                f64::from_le_bytes(a)
            } else {
                f64::from_be_bytes(a)
            }
        }
    };
    let mut out = KeypointFile {
        points_per_frame: points,
        points: Vec::with_capacity(frames * points),
        ..KeypointFile::empty(None, None, None)
    };
    let mut confidence = Vec::new();
    for p in 0..frames * points {
        let i = p * per_point;
        out.points
            .push(DVec3::new(value(i), value(i + 1), value(i + 2)));
        if per_point == 4 {
            confidence.push(value(i + 3));
        }
    }
    out.confidence = (per_point == 4).then_some(confidence);
    Ok(out)
}

fn json_number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The file as JSON text (missing points as `null`).
pub fn to_json(file: &KeypointFile) -> String {
    let n = file.points_per_frame.max(1);
    let frames: Vec<Value> = file
        .points
        .chunks(n)
        .enumerate()
        .map(|(f, frame)| {
            Value::Array(
                frame
                    .iter()
                    .enumerate()
                    .map(|(k, p)| {
                        if !p.is_finite() {
                            return Value::Null;
                        }
                        let mut v = vec![json_number(p.x), json_number(p.y), json_number(p.z)];
                        if let Some(c) = &file.confidence {
                            v.push(json_number(c[f * n + k]));
                        }
                        Value::Array(v)
                    })
                    .collect(),
            )
        })
        .collect();
    let mut root = serde_json::Map::new();
    if let Some(l) = &file.layout {
        root.insert("layout".into(), Value::String(l.clone()));
    }
    if let Some(fps) = file.fps {
        root.insert("fps".into(), json_number(fps));
    }
    if let Some(names) = &file.names {
        root.insert(
            "names".into(),
            Value::Array(names.iter().cloned().map(Value::String).collect()),
        );
    }
    root.insert("frames".into(), Value::Array(frames));
    Value::Object(root).to_string()
}

/// The file as CSV text (a header row when it has names; missing values as empty cells).
pub fn to_csv(file: &KeypointFile) -> String {
    use std::fmt::Write as _;
    let n = file.points_per_frame.max(1);
    let mut out = String::new();
    let confidence = file.confidence.as_ref();
    if let Some(names) = &file.names {
        let columns: Vec<String> = names
            .iter()
            .flat_map(|name| {
                let mut c = vec![
                    format!("{name}_x"),
                    format!("{name}_y"),
                    format!("{name}_z"),
                ];
                if confidence.is_some() {
                    c.push(format!("{name}_c"));
                }
                c
            })
            .collect();
        out.push_str(&columns.join(","));
        out.push('\n');
    }
    for (f, frame) in file.points.chunks(n).enumerate() {
        let mut cells = Vec::new();
        for (k, p) in frame.iter().enumerate() {
            for v in [p.x, p.y, p.z] {
                cells.push(if v.is_finite() {
                    format!("{v:?}")
                } else {
                    String::new()
                });
            }
            if let Some(c) = confidence {
                cells.push(format!("{:?}", c[f * n + k]));
            }
        }
        let _ = writeln!(out, "{}", cells.join(","));
    }
    out
}

/// The file as a little-endian `float64` `.npy` array (frames × points × 3, or × 4 with
/// confidence).
pub fn to_npy(file: &KeypointFile) -> Vec<u8> {
    let per_point = if file.confidence.is_some() { 4 } else { 3 };
    let mut header = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}, {per_point}), }}",
        file.frames(),
        file.points_per_frame
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(
        &u16::try_from(header.len())
            .unwrap_or(u16::MAX)
            .to_le_bytes(),
    );
    out.extend_from_slice(header.as_bytes());
    for (i, p) in file.points.iter().enumerate() {
        for v in [p.x, p.y, p.z] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        if let Some(c) = &file.confidence {
            out.extend_from_slice(&c[i].to_le_bytes());
        }
    }
    out
}
