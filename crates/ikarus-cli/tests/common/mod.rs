//! Running the `ikarus` binary from the end-to-end tests.

#![allow(dead_code)] // each test binary uses some of the helpers

use std::process::{Command, Output};

/// Runs `ikarus` with `args`.
pub fn ikarus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ikarus"))
        .args(args)
        .output()
        .expect("the ikarus binary runs")
}

/// Runs `ikarus`, asserts success, returns its standard output.
pub fn ok(args: &[&str]) -> String {
    let out = ikarus(args);
    assert!(
        out.status.success(),
        "ikarus {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `ikarus`, asserts it fails with a one-line error, returns standard error.
pub fn fails(args: &[&str]) -> String {
    let out = ikarus(args);
    assert!(!out.status.success(), "ikarus {args:?} should fail");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.trim().lines().count(), 1, "one-line error: {stderr}");
    stderr
}

/// A fresh directory for one test's files.
pub fn temp_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ikarus-cli-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The shared data file `<kind>/<file>` as a path string; `None` without the shared data (the
/// test then skips: see [`ikarus_testdata::require`], which names `test`).
pub fn data_file(kind: &str, test: &str, file: &str) -> Option<String> {
    let dir = ikarus_testdata::require(kind, test)?;
    Some(dir.join(file).to_str().unwrap().to_owned())
}

/// The `"joints"` of `ikarus fk --json` output: each joint's name and model-space position.
pub fn json_positions(json: &serde_json::Value) -> Vec<(String, glam::DVec3)> {
    json["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let p: Vec<f64> = j["position"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            (
                j["name"].as_str().unwrap().to_owned(),
                glam::DVec3::new(p[0], p[1], p[2]),
            )
        })
        .collect()
}
