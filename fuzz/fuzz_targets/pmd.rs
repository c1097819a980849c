//! Fuzz target for the PMD reader: never panics; whatever parses builds (or refuses with a
//! message) without panicking, and a built mesh is consistent with its skeleton.
#![no_main]

mod mmd_model;

use ikarus_formats::mmd::pmd;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mmd_model::check(pmd::parse(data, 1.0)));
