//! The six transforms the root of a test rig carries (identity, translated, rotated, uniformly
//! and non-uniformly scaled, mirrored): every closed-form check is repeated under each, as
//! ozz-animation's IK tests do.

use glam::{DQuat, DVec3};
use ikarus_core::{SkeletonBuilder, Transform};

/// The six parent transforms with their names: `identity`, `translated`, `rotated`,
/// `uniform_scale`, `non_uniform_scale`, `mirrored` (the last three also rotated and moved).
pub fn parent_transforms() -> [(&'static str, Transform); 6] {
    let rotation = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 2.1);
    [
        ("identity", Transform::IDENTITY),
        (
            "translated",
            Transform::from_translation(DVec3::new(0.3, -1.2, 2.5)),
        ),
        ("rotated", Transform::from_rotation(rotation)),
        (
            "uniform_scale",
            Transform {
                translation: DVec3::new(-0.4, 0.2, 0.1),
                rotation,
                scale: DVec3::splat(2.5),
            },
        ),
        (
            "non_uniform_scale",
            Transform {
                translation: DVec3::new(0.2, 0.9, -0.4),
                rotation,
                scale: DVec3::new(1.8, 0.55, 1.25),
            },
        ),
        (
            "mirrored",
            Transform {
                translation: DVec3::new(1.0, 0.5, -2.0),
                rotation,
                scale: DVec3::new(-1.0, 1.0, 1.0),
            },
        ),
    ]
}

/// A skeleton builder holding one joint, `root`, that carries `parent`: the rigs of the
/// closed-form checks hang below it.
pub fn rooted(parent: Transform) -> SkeletonBuilder {
    let mut builder = SkeletonBuilder::new();
    builder.joint("root", None, parent);
    builder
}

/// One `#[test]` per parent transform: `$check(name, parent, seed)` under
/// [`parent_transforms`]`()[i]` with seed `i + 1`, as tests named in that order (identity,
/// translated, rotated, uniform scale, non-uniform scale, mirrored).
///
/// ```ignore
/// ikarus_testdata::test_under_each_parent!(reaches_random_targets:
///     reaches_identity, reaches_translated, reaches_rotated,
///     reaches_uniform_scale, reaches_non_uniform_scale, reaches_mirrored);
/// ```
#[macro_export]
macro_rules! test_under_each_parent {
    ($check:path: $identity:ident, $translated:ident, $rotated:ident, $uniform_scale:ident,
     $non_uniform_scale:ident, $mirrored:ident $(,)?) => {
        $crate::test_under_each_parent!(@one $check, 0, $identity);
        $crate::test_under_each_parent!(@one $check, 1, $translated);
        $crate::test_under_each_parent!(@one $check, 2, $rotated);
        $crate::test_under_each_parent!(@one $check, 3, $uniform_scale);
        $crate::test_under_each_parent!(@one $check, 4, $non_uniform_scale);
        $crate::test_under_each_parent!(@one $check, 5, $mirrored);
    };
    (@one $check:path, $index:literal, $test:ident) => {
        #[test]
        fn $test() {
            let (name, parent) = $crate::transforms::parent_transforms()[$index];
            $check(name, parent, $index + 1);
        }
    };
}
