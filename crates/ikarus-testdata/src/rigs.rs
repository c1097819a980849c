//! Rigs and chains built in code that several crates test and bench.

pub mod iiwa;

use glam::DVec3;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointLimit, Skeleton, SkeletonBuilder, Transform};

use crate::assert::model_of;

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

/// The rest length of `skeleton`'s left leg, upper leg to lower leg to foot, in its units: what
/// the tests scale a clip by to give it a known leg length.
///
/// # Panics
/// When `map` has no left upper leg, lower leg or foot.
pub fn left_leg_length(skeleton: &Skeleton, map: &HumanoidMap) -> f64 {
    let rest = model_of(skeleton, &skeleton.rest_pose());
    let at = |bone| {
        let joint = map.joint(bone).unwrap_or_else(|| panic!("no {bone:?}"));
        rest.position(joint)
    };
    at(HumanoidBone::LeftUpperLeg).distance(at(HumanoidBone::LeftLowerLeg))
        + at(HumanoidBone::LeftLowerLeg).distance(at(HumanoidBone::LeftFoot))
}

/// The body size of `skeleton` at rest: hips to head plus hips to left foot, in its units;
/// `None` when `map` lacks one of these bones.
pub fn body_size(skeleton: &Skeleton, map: &HumanoidMap) -> Option<f64> {
    let rest = model_of(skeleton, &skeleton.rest_pose());
    let at = |bone| map.joint(bone).map(|j| rest.position(j));
    let (hips, head, foot) = (
        at(HumanoidBone::Hips)?,
        at(HumanoidBone::Head)?,
        at(HumanoidBone::LeftFoot)?,
    );
    Some((head - hips).length() + (hips - foot).length())
}
