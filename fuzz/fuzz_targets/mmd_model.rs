//! The invariant the PMD and PMX fuzz targets share: whatever parses builds (or refuses with a
//! message) without panicking, and a built model's mesh and rig are consistent with its
//! skeleton.

use ikarus_formats::mmd::{MmdError, MmdModel};

/// Checks a parse result as above.
///
/// # Panics
/// When a built mesh or rig is inconsistent with its skeleton.
pub fn check(parsed: Result<MmdModel, MmdError>) {
    let Ok(model) = parsed else {
        return;
    };
    if let Ok(built) = model.build() {
        built
            .mesh
            .validate(built.skeleton.len())
            .expect("a built mesh is consistent");
        built
            .rig
            .validate(&built.skeleton)
            .expect("a built rig is consistent");
    }
}
