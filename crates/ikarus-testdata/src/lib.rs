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

/// A small deterministic random source for tests and benches (splitmix64): the same numbers
/// on every machine, no dependency. The one copy of it outside the solvers' own restarts
/// (`ikarus_solve`'s driver, which cannot depend on test data).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next value, uniform in `[0, 1)` on the grid of 2⁻⁵³ (the top 53 bits).
    pub fn unit(&mut self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // 53 bits: exact
        let value = (self.next_u64() >> 11) as f64 / 9_007_199_254_740_992.0;
        value
    }

    /// The next value, uniform in `[lo, hi)`: `lo + (hi − lo) · unit()`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// The next value, uniform in `[0, 1]`: all 64 bits divided by 2⁶⁴ (rounded to the
    /// nearest double, so 1 itself once in about 2⁵⁴ draws). Another stream than
    /// [`unit`](Self::unit) from the same state; kept for the tests written against it.
    pub fn uniform(&mut self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // 53 bits kept by the division's rounding
        let value = self.next_u64() as f64 / 18_446_744_073_709_551_616.0;
        value
    }

    /// The next value, uniform in `[-1, 1]` (from [`uniform`](Self::uniform)).
    pub fn signed(&mut self) -> f64 {
        2.0 * self.uniform() - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn rng_is_splitmix64() {
        // The published splitmix64 outputs for state 0 (Vigna's reference implementation).
        let mut rng = Rng(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
        // `unit` keeps the top 53 bits, `uniform` all 64 (rounded), from the same state.
        let (mut a, mut b) = (Rng(0), Rng(0));
        // (0xE220A8397B1DCDAF >> 11) / 2^53 and 0xE220A8397B1DCDAF / 2^64, by Python.
        assert_eq!(a.unit(), 0.883_310_808_213_642_6);
        assert_eq!(b.uniform(), 0.883_310_808_213_642_7);
        assert_eq!(Rng(0).range(2.0, 4.0), 2.0 + 2.0 * 0.883_310_808_213_642_6);
    }
}
