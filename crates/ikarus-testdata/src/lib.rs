//! The fixtures every ikarus test, bench and runner shares, so that each is written once:
//!
//! - the shared real-world test data (`../shared/data` beside the repository, or the directory
//!   named by `IKARUS_SHARED_DATA`): [`data_dir`], [`require`], [`require_file`],
//!   [`require_all`], [`files`]; the retargeting evaluation's clips, [`RETARGET_BVH_CLIPS`].
//!   In CI (`CI` set to anything but `false`/`0`) missing data is a test failure; on a
//!   developer's machine the test says clearly that it was skipped and returns;
//! - one deterministic random generator, [`Rng`], and its geometric draws, [`Draw`];
//! - the six parent transforms every closed-form check is repeated under
//!   ([`transforms`]), as ozz-animation's IK tests do;
//! - the rigs and chains several crates test and bench ([`rigs`]), the limit families
//!   ([`limits`]), motions built in code ([`motions`]);
//! - measures and assertions on poses and rotations ([`mod@assert`]).
//!
//! It depends on `ikarus-core` and glam only (the solver, format and animation crates
//! dev-depend on it); fixtures that need their types stay in those crates' `tests/common`.

use std::path::PathBuf;

pub mod assert;
pub mod limits;
pub mod motions;
pub mod rigs;
pub mod rng;
pub mod transforms;

pub use rng::{Draw, Rng};

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

/// The file `name` of the sub-directory `sub` (e.g. `"bvh"`, `"walk.bvh"`), as [`require`]
/// finds the directory.
///
/// # Panics
/// As [`require`].
pub fn require_file(sub: &str, name: &str, test: &str) -> Option<PathBuf> {
    require(sub, test).map(|dir| dir.join(name))
}

/// The sub-directories `subs` of the data directory, all or none: each is looked up (and
/// reported when missing) as by [`require`].
///
/// # Panics
/// As [`require`].
pub fn require_all<const N: usize>(subs: [&str; N], test: &str) -> Option<[PathBuf; N]> {
    let found = subs.map(|sub| require(sub, test));
    if found.iter().any(Option::is_none) {
        return None;
    }
    Some(found.map(|dir| dir.expect("checked above")))
}

/// The BVH clips of the retargeting evaluation (its tests and its bench), in the shared `bvh`
/// directory: `(short name for tables, file name)`. The evaluation's fifth clip is kishimen.vmd
/// played with IK on `Miku_Hatsune_Ver2.pmd`.
pub const RETARGET_BVH_CLIPS: [(&str, &str); 4] = [
    ("cmu walk", "cmu_02_01_walk_cgspeed_crlf.bvh"),
    ("cmu jump", "cmu_01_01_jump_cgspeed.bvh"),
    ("bandai walk", "bandainamco_ds1_walk_normal_002.bvh"),
    ("bandai run", "bandainamco_ds1_run_normal_001.bvh"),
];

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
