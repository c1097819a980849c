//! The BVH round trip both `tests/bvh_robustness.rs` and the `bvh` fuzz target check (the
//! fuzz target includes this file by path).

use ikarus_formats::bvh::{Bvh, BvhReadOptions};

/// Whatever parses converts to poses, writes, and parses again with the same hierarchy (names
/// as single tokens, several roots under one shared root), layout and frame count.
///
/// # Panics
/// When the written text does not parse or the hierarchy comes back different.
pub fn check(data: &[u8]) {
    let Ok(bvh) = Bvh::parse(data, &BvhReadOptions::default()) else {
        return;
    };
    let Ok(motion) = bvh.to_motion() else {
        return;
    };
    let text = Bvh::from_motion(&bvh.skeleton, &motion, bvh.layout.clone())
        .expect("a parsed layout fits its skeleton")
        .to_bvh_string();
    let again = Bvh::parse(text.as_bytes(), &BvhReadOptions::default())
        .unwrap_or_else(|e| panic!("written BVH does not parse: {e}\n{text}"));
    // Names are written as single tokens (`token_names`), several roots under one shared
    // root (`shared_root`), the hierarchy otherwise as it was.
    let expected: Vec<String> = ikarus_formats::bvh::shared_root(&bvh.skeleton)
        .into_iter()
        .chain(ikarus_formats::bvh::token_names(&bvh.skeleton))
        .collect();
    assert_eq!(again.skeleton.names(), expected);
    let skip = usize::from(ikarus_formats::bvh::shared_root(&bvh.skeleton).is_some());
    assert_eq!(again.layout.joints[skip..], bvh.layout.joints[..]);
    assert_eq!(again.frame_count, bvh.frame_count);
}
