//! Fuzz target for the BVH reader: never panics; whatever parses converts to poses, writes,
//! and parses again with the same hierarchy (the check `tests/bvh_robustness.rs` runs).
#![no_main]

#[path = "../../crates/ikarus-formats/tests/common/bvh_round_trip.rs"]
mod bvh_round_trip;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bvh_round_trip::check(data));
