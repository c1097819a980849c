//! Keypoint files: round trips through JSON, CSV and `.npy`, hand-written float32 arrays, and
//! malformed input rejected with the frame or line named, never a panic.

use glam::DVec3;
use ikarus_formats::keypoints::{
    KeypointError, KeypointFile, parse_csv, parse_json, parse_npy, parse_segments_json, to_csv,
    to_json, to_npy,
};
use proptest::prelude::*;

fn sample(confidence: bool) -> KeypointFile {
    let (frames, points) = (5, 4);
    let mut p = Vec::new();
    for f in 0..frames {
        for k in 0..points {
            p.push(DVec3::new(
                f64::from(f) * 0.1 + f64::from(k),
                -0.25 * f64::from(k),
                1.0 / (1.0 + f64::from(f + k)),
            ));
        }
    }
    p[6] = DVec3::NAN;
    KeypointFile {
        layout: Some("h36m".into()),
        fps: Some(50.0),
        names: Some((0..points).map(|k| format!("p{k}")).collect()),
        points_per_frame: points as usize,
        points: p,
        confidence: confidence.then(|| (0..20).map(|i| f64::from(i) / 20.0).collect()),
    }
}

fn same(a: &KeypointFile, b: &KeypointFile) {
    assert_eq!(a.points_per_frame, b.points_per_frame);
    assert_eq!(a.points.len(), b.points.len());
    for (p, q) in a.points.iter().zip(&b.points) {
        if p.is_finite() {
            assert_eq!(p, q);
        } else {
            assert!(!q.is_finite());
        }
    }
}

#[test]
fn json_csv_and_npy_round_trip() {
    for confidence in [false, true] {
        let file = sample(confidence);
        let json = parse_json(&to_json(&file)).unwrap();
        same(&file, &json);
        assert_eq!(json.layout.as_deref(), Some("h36m"));
        assert_eq!(json.fps, Some(50.0));
        assert_eq!(json.names, file.names);
        assert_eq!(json.confidence.is_some(), confidence);
        let csv = parse_csv(&to_csv(&file)).unwrap();
        same(&file, &csv);
        assert_eq!(csv.names, file.names);
        assert_eq!(csv.confidence.is_some(), confidence);
        let npy = parse_npy(&to_npy(&file)).unwrap();
        same(&file, &npy);
        if confidence {
            assert_eq!(npy.confidence, file.confidence);
        }
    }
}

/// A float32 `.npy` as `numpy.save` writes it (version 1.0, header padded to 64 bytes).
fn npy_f32(shape: &str, values: &[f32], descr: &str) -> Vec<u8> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[test]
fn float32_npy_reads_and_bad_arrays_are_named() {
    let values: Vec<f32> = (0..24).map(|i| i as f32 * 0.5).collect();
    let file = parse_npy(&npy_f32("(2, 4, 3)", &values, "<f4")).unwrap();
    assert_eq!(file.frames(), 2);
    assert_eq!(file.points[5], DVec3::new(7.5, 8.0, 8.5));
    let with_confidence = parse_npy(&npy_f32("(2, 3, 4)", &values, "<f4")).unwrap();
    assert_eq!(with_confidence.confidence.as_ref().unwrap()[1], 3.5);
    let message = |r: Result<KeypointFile, KeypointError>| r.unwrap_err().to_string();
    assert!(message(parse_npy(&npy_f32("(2, 4, 3)", &values, "<i4"))).contains("dtype"));
    assert!(message(parse_npy(&npy_f32("(2, 4, 2)", &values[..16], "<f4"))).contains("last axis"));
    assert!(message(parse_npy(&npy_f32("(3, 4, 3)", &values, "<f4"))).contains("needs 36 values"));
    assert!(message(parse_npy(&npy_f32("(24,)", &values, "<f4"))).contains("expected (frames"));
    assert!(message(parse_npy(b"PK\x03\x04 not numpy")).contains("magic"));
    let truncated = npy_f32("(2, 4, 3)", &values, "<f4");
    assert!(parse_npy(&truncated[..40]).is_err());
}

#[test]
fn malformed_text_names_frame_and_line() {
    let e = parse_json(r#"{"frames": [[[0,0,0],[1,1,1]], [[0,0,0]]]}"#).unwrap_err();
    assert_eq!(
        e,
        KeypointError::Frame {
            frame: 1,
            message: "1 points, the first frame has 2".into()
        }
    );
    let e = parse_json(r#"{"frames": [[[0,0,"x"]]]}"#).unwrap_err();
    assert!(matches!(e, KeypointError::Frame { frame: 0, .. }), "{e}");
    assert_eq!(
        parse_json(r#"{"frames": []}"#).unwrap_err(),
        KeypointError::Empty
    );
    assert!(matches!(parse_json("[1, 2]"), Err(KeypointError::Json(_))));
    let e = parse_csv("1,2,3,4,5,6\n1,2,3\n").unwrap_err();
    assert!(matches!(e, KeypointError::Csv { line: 2, .. }), "{e}");
    let e = parse_csv("1,2,3\n1,two,3\n").unwrap_err();
    assert!(e.to_string().contains("`two`"), "{e}");
    assert!(parse_csv("1,2,3,4\n").is_err());
    assert_eq!(parse_csv("").unwrap_err(), KeypointError::Empty);
    let missing = parse_csv("1,,3\nnan,2,3\n").unwrap();
    assert!(!missing.points[0].is_finite() && !missing.points[1].is_finite());
}

#[test]
fn segment_orientations_parse_and_check() {
    let file = parse_segments_json(
        r#"{"fps": 60, "segments": ["hips", "spine"], "calibration_frame": 1,
            "frames": [[[0,0,0,1],[0,0,0,2]], [[0,0,0,1],[0,1,0,0]]],
            "root_positions": [[0,1,0],[0,1,0.1]]}"#,
    )
    .unwrap();
    assert_eq!(file.segments, ["hips", "spine"]);
    assert_eq!(file.orientations.len(), 4);
    assert!((file.orientations[1].length() - 1.0).abs() < 1e-12);
    assert_eq!(file.calibration_frame, 1);
    assert!(parse_segments_json(r#"{"segments": ["a"], "frames": [[[0,0,0,0]]]}"#).is_err());
    assert!(
        parse_segments_json(r#"{"segments": ["a"], "frames": [[[0,0,0,1],[0,0,0,1]]]}"#).is_err()
    );
}

proptest! {
    #[test]
    fn readers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_npy(&bytes);
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_csv(&text);
        let _ = parse_json(&text);
        let _ = parse_segments_json(&text);
        let mut npy = b"\x93NUMPY\x01\x00\x40\x00".to_vec();
        npy.extend_from_slice(&bytes);
        let _ = parse_npy(&npy);
    }
}
