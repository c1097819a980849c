//! Rigs and chains built in code that several crates test and bench.

pub mod iiwa;

use glam::DVec3;
use ikarus_core::{JointLimit, Skeleton, SkeletonBuilder, Transform};

/// A serial chain: a fixed root `base`, the joints `j0` … `j{n-1}` and `tip`. Joint `i` sits
/// `offset(i)` from its parent with the limit `limit(i)`; `tip` sits `tip_offset` from the
/// last joint. No rest rotations.
pub fn chain(
    n: usize,
    offset: impl Fn(usize) -> DVec3,
    limit: impl Fn(usize) -> JointLimit,
    tip_offset: DVec3,
) -> Skeleton {
    let mut b = SkeletonBuilder::new();
    b.joint("base", None, Transform::IDENTITY);
    let mut previous = "base".to_owned();
    for i in 0..n {
        let name = format!("j{i}");
        b.limited_joint(
            &name,
            Some(&previous),
            Transform::from_translation(offset(i)),
            limit(i),
        );
        previous = name;
    }
    b.joint(
        "tip",
        Some(&previous),
        Transform::from_translation(tip_offset),
    );
    b.build()
        .expect("unique names, parents first: a valid skeleton")
}
