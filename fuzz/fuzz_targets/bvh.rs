//! Fuzz target for the BVH reader: never panics; whatever parses converts to poses, writes,
//! and parses again with the same hierarchy.
#![no_main]

use ikarus_formats::bvh::{Bvh, BvhReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(bvh) = Bvh::parse(data, &BvhReadOptions::default()) else {
        return;
    };
    let Ok(motion) = bvh.to_motion() else {
        return;
    };
    let text = Bvh::from_motion(&bvh.skeleton, &motion, bvh.layout.clone())
        .expect("a parsed layout fits its skeleton")
        .to_bvh_string();
    let again =
        Bvh::parse(text.as_bytes(), &BvhReadOptions::default()).expect("written BVH parses");
    // Names are written as single tokens (`token_names`), several roots under one shared
    // root (`shared_root`), the hierarchy otherwise as it was.
    let expected: Vec<String> = ikarus_formats::bvh::shared_root(&bvh.skeleton)
        .into_iter()
        .chain(ikarus_formats::bvh::token_names(&bvh.skeleton))
        .collect();
    assert_eq!(again.skeleton.names(), expected);
    assert_eq!(again.frame_count, bvh.frame_count);
});
