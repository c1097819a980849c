//! Fuzz target for the keypoint readers (JSON, CSV, `.npy`, segment JSON): never panic; what
//! parses writes back and parses to the same point count.
#![no_main]

use ikarus_formats::keypoints::{
    parse_csv, parse_json, parse_npy, parse_segments_json, to_csv, to_json, to_npy,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = parse_npy(data) {
        let again = parse_npy(&to_npy(&file)).expect("written .npy parses");
        assert_eq!(again.points.len(), file.points.len());
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(file) = parse_json(&text) {
        let again = parse_json(&to_json(&file)).expect("written JSON parses");
        assert_eq!(again.points.len(), file.points.len());
    }
    if let Ok(file) = parse_csv(&text) {
        let _ = parse_csv(&to_csv(&file));
    }
    let _ = parse_segments_json(&text);
});
