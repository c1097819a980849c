//! Fuzz target for the PMX reader: never panics; whatever parses builds (or refuses with a
//! message) without panicking, and a built mesh is consistent with its skeleton.
#![no_main]

use ikarus_formats::mmd::pmx;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(model) = pmx::parse(data, 1.0) else {
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
});
