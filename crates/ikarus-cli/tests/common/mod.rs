//! Running the `ikarus` binary from the end-to-end tests.

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
