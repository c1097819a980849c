//! The builder rejects every class of invalid input and names the offending joint.
#![allow(clippy::match_same_arms)] // one arm per corruption class, even where two check the same field

use glam::{DQuat, DVec3};
use ikarus_core::{JointLimit, MAX_JOINTS, RawJoint, SkeletonBuilder, SkeletonError, Transform};
use ikarus_testdata::limits::hinge;
use proptest::prelude::*;

fn chain(n: usize) -> Vec<RawJoint> {
    (0..n)
        .map(|i| RawJoint {
            name: format!("j{i}"),
            parent: (i > 0).then(|| format!("j{}", i - 1)),
            rest: Transform::from_translation(DVec3::new(0.0, 0.1, 0.0)),
            limit: JointLimit::Free,
        })
        .collect()
}

fn build(joints: Vec<RawJoint>) -> Result<ikarus_core::Skeleton, SkeletonError> {
    let mut b = SkeletonBuilder::new();
    for j in joints {
        b.push(j);
    }
    b.build()
}

#[derive(Clone, Copy, Debug)]
enum Corruption {
    DuplicateName,
    UnknownParent,
    SelfParent,
    Cycle,
    NanTranslation,
    InfScale,
    NanRotation,
    NonUnitRotation,
    EmptyName,
    BadLimit,
}

proptest! {
    #[test]
    fn every_invalid_class_is_rejected_naming_the_joint(
        n in 2usize..30,
        pick in any::<prop::sample::Index>(),
        corruption in prop::sample::select(vec![
            Corruption::DuplicateName, Corruption::UnknownParent, Corruption::SelfParent,
            Corruption::Cycle, Corruption::NanTranslation, Corruption::InfScale,
            Corruption::NanRotation, Corruption::NonUnitRotation, Corruption::EmptyName,
            Corruption::BadLimit,
        ]),
    ) {
        let mut joints = chain(n);
        prop_assert!(build(joints.clone()).is_ok());
        let k = 1 + pick.index(n - 1);
        let name = joints[k].name.clone();
        match corruption {
            Corruption::DuplicateName => joints[k].name = joints[k - 1].name.clone(),
            Corruption::UnknownParent => joints[k].parent = Some("nobody".into()),
            Corruption::SelfParent => joints[k].parent = Some(name.clone()),
            Corruption::Cycle => joints[0].parent = Some(name.clone()),
            Corruption::NanTranslation => joints[k].rest.translation.y = f64::NAN,
            Corruption::InfScale => joints[k].rest.scale.x = f64::INFINITY,
            Corruption::NanRotation => joints[k].rest.rotation = DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0),
            Corruption::NonUnitRotation => joints[k].rest.rotation = DQuat::from_xyzw(0.0, 0.0, 0.0, 2.0),
            Corruption::EmptyName => {
                joints[k].name.clear();
                if k + 1 < n { joints[k + 1].parent = Some(String::new()); }
            }
            Corruption::BadLimit => joints[k].limit = hinge(DVec3::ZERO, 0.0, 1.0),
        }
        let err = build(joints).unwrap_err();
        let ok = match (&err, corruption) {
            (SkeletonError::DuplicateName { name: dup }, Corruption::DuplicateName) => dup == &format!("j{}", k - 1),
            (SkeletonError::UnknownParent { joint, parent }, Corruption::UnknownParent) => joint == &name && parent == "nobody",
            (SkeletonError::Cycle { joint }, Corruption::SelfParent) => joint == &name,
            // With j0 re-parented, every joint hangs on the cycle; the first one is reported.
            (SkeletonError::Cycle { joint }, Corruption::Cycle) => joint == "j0",
            (SkeletonError::NonFinite { joint, field }, Corruption::NanTranslation) => joint == &name && *field == "translation",
            (SkeletonError::NonFinite { joint, field }, Corruption::InfScale) => joint == &name && *field == "scale",
            (SkeletonError::NonFinite { joint, field }, Corruption::NanRotation) => joint == &name && *field == "rotation",
            (SkeletonError::NonUnitRotation { joint, length }, Corruption::NonUnitRotation) => joint == &name && *length == 2.0,
            (SkeletonError::EmptyName { index }, Corruption::EmptyName) => *index == k,
            (SkeletonError::InvalidLimit { joint, .. }, Corruption::BadLimit) => joint == &name,
            _ => false,
        };
        prop_assert!(ok, "{corruption:?} at {k} gave {err:?}");
        prop_assert!(!err.to_string().is_empty());
    }
}

#[test]
fn empty_and_oversized_skeletons_are_rejected() {
    assert_eq!(build(vec![]).unwrap_err(), SkeletonError::Empty);
    let err = build(chain(MAX_JOINTS + 1)).unwrap_err();
    assert!(matches!(err, SkeletonError::TooManyJoints { count, .. } if count == MAX_JOINTS + 1));
}

#[test]
fn forests_are_allowed_and_deep_chains_do_not_recurse() {
    let mut joints = chain(50_000);
    joints.push(RawJoint {
        name: "second_root".into(),
        parent: None,
        rest: Transform::IDENTITY,
        limit: JointLimit::Locked,
    });
    let s = build(joints).unwrap();
    assert_eq!(s.roots().count(), 2);
    assert_eq!(s.depth(s.joint("j49999").unwrap()), 49_999);
    assert!(s.try_joint("nope").is_err());
}
