//! Finds the shared real-world test data (`../shared/data` beside the repository, or the
//! directory named by `IKARUS_SHARED_DATA`).
//!
//! In CI (`CI` set to anything but `false`/`0`) missing data is a test failure; on a developer's
//! machine the test says clearly that it was skipped and returns.

use std::path::PathBuf;

/// The data directory if it exists.
pub fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("IKARUS_SHARED_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
        PathBuf::from,
    );
    dir.is_dir().then_some(dir)
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The sub-directory `sub` of the data directory (e.g. `"bvh"`).
///
/// # Panics
/// In CI when the data is missing, so that a missing checkout cannot pass silently.
pub fn require(sub: &str, test: &str) -> Option<PathBuf> {
    match data_dir().map(|d| d.join(sub)).filter(|d| d.is_dir()) {
        Some(dir) => Some(dir),
        None if in_ci() => panic!(
            "{test}: shared test data `{sub}` not found (expected ../shared/data beside the repository or IKARUS_SHARED_DATA); CI requires it"
        ),
        None => {
            eprintln!(
                "SKIPPED {test}: shared test data `{sub}` not found (../shared/data or IKARUS_SHARED_DATA)"
            );
            None
        }
    }
}

/// Every file in `sub` with the given extension, sorted by name.
///
/// # Panics
/// As [`require`], and when the directory cannot be listed.
pub fn files(sub: &str, extension: &str, test: &str) -> Vec<PathBuf> {
    let Some(dir) = require(sub, test) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("shared data directory is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case(extension))
        })
        .collect();
    files.sort();
    files
}

/// A small deterministic random source for tests (splitmix64): the same numbers on every
/// machine, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next value, uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        #[allow(clippy::cast_precision_loss)] // 53 bits kept by the division's rounding
        let value = (z ^ (z >> 31)) as f64 / 18_446_744_073_709_551_616.0;
        value
    }

    /// The next value, uniform in `[-1, 1)`.
    pub fn signed(&mut self) -> f64 {
        2.0 * self.uniform() - 1.0
    }
}
