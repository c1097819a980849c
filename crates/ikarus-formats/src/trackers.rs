//! Tracker recordings (VR headset, controllers, body trackers), JSON and CSV. Metres, +Y up,
//! right-handed; each sample is a bone's world position and world rotation
//! `[x, y, z, qx, qy, qz, qw]` in the target skeleton's world; bones are named by their VRM
//! humanoid names.
//!
//! - **JSON**: `{"fps": 60, "trackers": {"head": [[x, y, z, qx, qy, qz, qw], ...],
//!   "leftHand": [...], ...}, "offsets": {"head": [x, y, z, qx, qy, qz, qw]}}`. A lost sample is
//!   `null`. `offsets` (optional) gives, per tracker, where its bone sits in the device's frame
//!   (`device_from_bone`); calibration measures the others.
//! - **CSV**: a header `time,head.x,head.y,head.z,head.qx,head.qy,head.qz,head.qw,leftHand.x,…`
//!   (seven columns per tracker, any order of trackers), then one row per frame; `time` in
//!   seconds, evenly spaced (the frame rate is read from it). An empty cell is a lost sample.
//!   CSV has no offsets.

use std::collections::BTreeMap;
#[cfg(feature = "fs")]
use std::path::Path;

use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::trackers::{Track, TrackerPose, Trackers};
use serde::{Deserialize, Serialize};

/// Why a tracker file cannot be read; each names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrackerFileError {
    /// The file cannot be read.
    #[error("{name}: {source}")]
    Io {
        /// The file.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// Malformed JSON, or JSON of another shape.
    #[error(
        "{name}: line {line}, column {column}: {message}; expected {{\"fps\": 60, \"trackers\": {{\"head\": [[x, y, z, qx, qy, qz, qw], ...], ...}}}}"
    )]
    Json {
        /// The file.
        name: String,
        /// Where (1-based).
        line: usize,
        /// Where (1-based).
        column: usize,
        /// What serde found.
        message: String,
    },
    /// Malformed CSV.
    #[error("{name}: line {line}: {message}")]
    Csv {
        /// The file.
        name: String,
        /// Where (1-based).
        line: usize,
        /// What was expected.
        message: String,
    },
    /// A name that is not a VRM humanoid bone.
    #[error("{name}: `{bone}` is not a VRM humanoid bone name (e.g. `head`, `leftHand`, `hips`)")]
    Bone {
        /// The file.
        name: String,
        /// The name given.
        bone: String,
    },
    /// The recording's shape is wrong (frame rate, ragged tracks, no tracker).
    #[error("{name}: {message}")]
    Shape {
        /// The file.
        name: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct TrackerJson {
    fps: f64,
    trackers: BTreeMap<String, Vec<Option<[f64; 7]>>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    offsets: BTreeMap<String, [f64; 7]>,
}

/// Reads a tracker file: CSV when its name ends in `.csv`, else JSON.
///
/// # Errors
/// [`TrackerFileError`] naming the file: unreadable, malformed (with line and column), a name
/// that is no VRM bone, or a bad shape.
#[cfg(feature = "fs")]
#[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
pub fn read(path: &Path) -> Result<Trackers, TrackerFileError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TrackerFileError::Io {
        name: name.clone(),
        source,
    })?;
    let csv = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if csv {
        from_csv(&text, &name)
    } else {
        from_json(&text, &name)
    }
}

fn bone_of(bone: &str, name: &str) -> Result<HumanoidBone, TrackerFileError> {
    HumanoidBone::from_vrm_name(bone).ok_or_else(|| TrackerFileError::Bone {
        name: name.to_owned(),
        bone: bone.to_owned(),
    })
}

fn shape(name: &str, message: String) -> TrackerFileError {
    TrackerFileError::Shape {
        name: name.to_owned(),
        message,
    }
}

/// Checks what every recording must have: a frame rate, a tracker, tracks of one length.
fn checked(trackers: Trackers, name: &str) -> Result<Trackers, TrackerFileError> {
    if !(trackers.fps.is_finite() && trackers.fps > 0.0) {
        return Err(shape(
            name,
            format!("fps must be a positive number, got {}", trackers.fps),
        ));
    }
    let Some(first) = trackers.tracks.first() else {
        return Err(shape(name, "no tracker in the recording".into()));
    };
    if let Some(t) = trackers
        .tracks
        .iter()
        .find(|t| t.samples.len() != first.samples.len())
    {
        return Err(shape(
            name,
            format!(
                "`{}` has {} samples where `{}` has {}; every tracker needs one per frame",
                t.bone.vrm_name(),
                t.samples.len(),
                first.bone.vrm_name(),
                first.samples.len()
            ),
        ));
    }
    Ok(trackers)
}

/// Parses a JSON recording (see the module docs); `name` names it in errors.
///
/// # Errors
/// As [`read`].
pub fn from_json(text: &str, name: &str) -> Result<Trackers, TrackerFileError> {
    let file: TrackerJson = serde_json::from_str(text).map_err(|e| TrackerFileError::Json {
        name: name.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let lost = TrackerPose {
        position: glam::DVec3::NAN,
        rotation: glam::DQuat::from_xyzw(f64::NAN, f64::NAN, f64::NAN, f64::NAN),
    };
    let mut tracks = Vec::with_capacity(file.trackers.len());
    for (bone, rows) in file.trackers {
        let bone_id = bone_of(&bone, name)?;
        let offset = file.offsets.get(&bone).copied().map(TrackerPose::from_row);
        tracks.push(Track {
            bone: bone_id,
            samples: rows
                .into_iter()
                .map(|r| r.map_or(lost, TrackerPose::from_row))
                .collect(),
            offset,
        });
    }
    if let Some(bone) = file
        .offsets
        .keys()
        .find(|b| !tracks.iter().any(|t| t.bone.vrm_name() == b.as_str()))
    {
        return Err(shape(
            name,
            format!("an offset for `{bone}`, which has no tracker"),
        ));
    }
    checked(
        Trackers {
            fps: file.fps,
            tracks,
        },
        name,
    )
}

/// Writes a recording as JSON (see the module docs): lost samples as `null`.
pub fn to_json(trackers: &Trackers) -> String {
    let file = TrackerJson {
        fps: trackers.fps,
        trackers: trackers
            .tracks
            .iter()
            .map(|t| {
                (
                    t.bone.vrm_name().to_owned(),
                    t.samples
                        .iter()
                        .map(|s| {
                            let row = s.to_row();
                            row.iter().all(|v| v.is_finite()).then_some(row)
                        })
                        .collect(),
                )
            })
            .collect(),
        offsets: trackers
            .tracks
            .iter()
            .filter_map(|t| t.offset.map(|o| (t.bone.vrm_name().to_owned(), o.to_row())))
            .collect(),
    };
    // Plain data: serialising cannot fail.
    serde_json::to_string(&file).unwrap_or_default()
}

/// The components of a CSV column after `bone.`.
const COMPONENTS: [&str; 7] = ["x", "y", "z", "qx", "qy", "qz", "qw"];

/// Parses a CSV recording (see the module docs); `name` names it in errors.
///
/// # Errors
/// As [`read`].
///
/// Kept as one function of about 130 lines: the header's columns and then each row, with every
/// error naming its line; the two parts share the column table.
#[allow(clippy::too_many_lines)] // header, rows, frame rate: in order, each a few lines
pub fn from_csv(text: &str, name: &str) -> Result<Trackers, TrackerFileError> {
    let csv_error = |line: usize, message: String| TrackerFileError::Csv {
        name: name.to_owned(),
        line,
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Err(csv_error(
            1,
            "empty file; expected a header `time,head.x,…`".into(),
        ));
    };
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    if columns.first() != Some(&"time") {
        return Err(csv_error(
            header_line + 1,
            "the first column must be `time`".into(),
        ));
    }
    // Per tracker, the column of each of its seven components.
    let mut slots: Vec<(HumanoidBone, [Option<usize>; 7])> = Vec::new();
    for (c, column) in columns.iter().enumerate().skip(1) {
        let Some((bone, component)) = column.rsplit_once('.') else {
            return Err(csv_error(
                header_line + 1,
                format!("column `{column}`: expected `bone.x` … `bone.qw`"),
            ));
        };
        let Some(k) = COMPONENTS.iter().position(|&p| p == component) else {
            return Err(csv_error(
                header_line + 1,
                format!("column `{column}`: `{component}` is none of x, y, z, qx, qy, qz, qw"),
            ));
        };
        let bone = bone_of(bone, name)?;
        let at = if let Some(at) = slots.iter().position(|(b, _)| *b == bone) {
            at
        } else {
            slots.push((bone, [None; 7]));
            slots.len() - 1
        };
        if slots[at].1[k].replace(c).is_some() {
            return Err(csv_error(
                header_line + 1,
                format!("column `{column}` twice"),
            ));
        }
    }
    if let Some((bone, missing)) = slots
        .iter()
        .find_map(|(b, cols)| cols.iter().position(Option::is_none).map(|k| (b, k)))
    {
        return Err(csv_error(
            header_line + 1,
            format!("no column `{}.{}`", bone.vrm_name(), COMPONENTS[missing]),
        ));
    }
    let mut times = Vec::new();
    let mut samples: Vec<Vec<TrackerPose>> = vec![Vec::new(); slots.len()];
    for (l, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != columns.len() {
            return Err(csv_error(
                l + 1,
                format!(
                    "{} cells where the header has {}",
                    cells.len(),
                    columns.len()
                ),
            ));
        }
        let number = |c: usize| -> Result<f64, TrackerFileError> {
            if cells[c].is_empty() {
                return Ok(f64::NAN);
            }
            cells[c].parse::<f64>().map_err(|_| {
                csv_error(
                    l + 1,
                    format!("column `{}`: `{}` is not a number", columns[c], cells[c]),
                )
            })
        };
        let time = number(0)?;
        if !time.is_finite() {
            return Err(csv_error(l + 1, "`time` must be a number".into()));
        }
        times.push(time);
        for ((_, cols), out) in slots.iter().zip(&mut samples) {
            let mut row = [0.0; 7];
            for (v, c) in row.iter_mut().zip(cols) {
                // Every component has its column (checked above).
                *v = number(c.unwrap_or(0))?;
            }
            out.push(TrackerPose::from_row(row));
        }
    }
    let fps = match times.as_slice() {
        [a, b, ..] if b > a => 1.0 / (b - a),
        [_] => {
            return Err(shape(
                name,
                "one frame: the frame rate cannot be read from `time`".into(),
            ));
        }
        [] => return Err(shape(name, "no frame".into())),
        _ => return Err(shape(name, "`time` must increase".into())),
    };
    if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
        return Err(shape(
            name,
            format!("`time` does not increase at frame {}", k + 1),
        ));
    }
    checked(
        Trackers {
            fps,
            tracks: slots
                .into_iter()
                .zip(samples)
                .map(|((bone, _), samples)| Track {
                    bone,
                    samples,
                    offset: None,
                })
                .collect(),
        },
        name,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_with_lost_samples_and_offsets() {
        let text = r#"{"fps": 90, "trackers": {"head": [[0, 1.6, 0, 0, 0, 0, 1], null],
            "leftHand": [[0.5, 1.4, 0.1, 0, 0, 0, 1], [0.5, 1.4, 0.2, 0, 0, 0.6, 0.8]]},
            "offsets": {"head": [0, -0.1, 0.05, 0, 0, 0, 1]}}"#;
        let t = from_json(text, "t.json").unwrap();
        assert_eq!(t.fps, 90.0);
        assert_eq!(t.len(), 2);
        let head = t.track(HumanoidBone::Head).unwrap();
        assert!(!head.samples[1].is_valid());
        assert_eq!(head.offset.unwrap().position.y, -0.1);
        let hand = t.track(HumanoidBone::LeftHand).unwrap();
        assert_eq!(hand.samples[1].rotation.z, 0.6);
        let back = from_json(&to_json(&t), "back").unwrap();
        assert_eq!(back.tracks.len(), 2);
        assert_eq!(
            back.track(HumanoidBone::LeftHand),
            t.track(HumanoidBone::LeftHand)
        );
        assert!(!back.track(HumanoidBone::Head).unwrap().samples[1].is_valid());
    }

    #[test]
    fn csv_reads_the_frame_rate_and_empty_cells() {
        let text = "time,head.x,head.y,head.z,head.qx,head.qy,head.qz,head.qw\n\
                    0,0,1.6,0,0,0,0,1\n\
                    0.0125,,,,,,,\n\
                    0.025,0,1.6,0.01,0,0,0,1\n";
        let t = from_csv(text, "t.csv").unwrap();
        assert!((t.fps - 80.0).abs() < 1e-9);
        assert_eq!(t.len(), 3);
        assert!(!t.tracks[0].samples[1].is_valid());
        assert_eq!(t.tracks[0].samples[2].position.z, 0.01);
    }

    #[test]
    fn malformed_files_say_where_and_what() {
        // Each file is refused with a message holding the given text.
        let json = |text: &str, says: &str| {
            let e = from_json(text, "a.json").unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        };
        let csv = |text: &str, says: &str| {
            let e = from_csv(text, "b.csv").unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        };
        let e = from_json(
            "{\"fps\": 60, \"trackers\": {\"head\": [[0, 1]]}}",
            "a.json",
        );
        let e = e.unwrap_err().to_string();
        assert!(e.starts_with("a.json: line 1, column"), "{e}");
        json(
            "{\"fps\": 60, \"trackers\": {\"nose\": []}}",
            "`nose` is not a VRM",
        );
        json(
            "{\"fps\": 60, \"trackers\": {\"head\": [[0,0,0,0,0,0,1]], \"leftHand\": []}}",
            "one per frame",
        );
        json("{\"fps\": 0, \"trackers\": {\"head\": []}}", "fps");
        csv("time,head.x\n0,1\n", "line 1: no column `head.y`");
        let header = "time,head.x,head.y,head.z,head.qx,head.qy,head.qz,head.qw\n";
        csv(
            &format!("{header}0,0,1,0,0,0,0,1\n0.1,0,x,0,0,0,0,1\n"),
            "b.csv: line 3: column `head.y`: `x` is not a number",
        );
        csv(&format!("{header}0,0,1,0,0,0,0,1\n"), "one frame");
    }
}
