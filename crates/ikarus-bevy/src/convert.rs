//! The boundary: Bevy's f32 transforms to ikarus's f64 and back, world to model space.

use bevy::math::{Quat, Vec3};
use bevy::prelude::{GlobalTransform, Transform};
use ikarus_core::glam::{DAffine3, DQuat, DVec3};

/// f32 → f64.
pub(crate) fn dvec3(v: Vec3) -> DVec3 {
    DVec3::new(f64::from(v.x), f64::from(v.y), f64::from(v.z))
}

/// f32 → f64.
pub(crate) fn dquat(q: Quat) -> DQuat {
    DQuat::from_xyzw(
        f64::from(q.x),
        f64::from(q.y),
        f64::from(q.z),
        f64::from(q.w),
    )
}

/// f64 → f32.
pub(crate) fn vec3(v: DVec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

/// f64 → f32.
pub(crate) fn quat(q: DQuat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32)
}

/// The uniform factor of a scale, or `None` when its components differ by more than 1e-4
/// relative (or it is not finite and positive).
pub(crate) fn uniform(scale: Vec3) -> Option<f64> {
    let (lo, hi) = (scale.min_element(), scale.max_element());
    (lo.is_finite() && lo > 0.0 && hi <= lo * (1.0 + 1e-4)).then(|| f64::from(scale.x))
}

/// A character root's world transform split at the boundary: `world_from_model` (rotation
/// and translation only) and the root's uniform world scale, or `None` when the scale is not
/// uniform or the transform not finite.
pub(crate) fn model_frame(root: &GlobalTransform) -> Option<(DAffine3, f64)> {
    let (scale, rotation, translation) = root.to_scale_rotation_translation();
    let factor = uniform(scale)?;
    let rotation = dquat(rotation).normalize();
    let translation = dvec3(translation);
    (rotation.is_finite() && translation.is_finite()).then(|| {
        (
            DAffine3::from_rotation_translation(rotation, translation),
            factor,
        )
    })
}

/// A world transform in model space: position and rotation (the target's own scale
/// ignored), or `None` when not finite.
pub(crate) fn to_model(
    world: &GlobalTransform,
    model_from_world: &DAffine3,
) -> Option<(DVec3, DQuat)> {
    let (_, rotation, translation) = world.to_scale_rotation_translation();
    let position = model_from_world.transform_point3(dvec3(translation));
    let (_, model_rotation, _) = model_from_world.to_scale_rotation_translation();
    let rotation = (model_rotation * dquat(rotation)).normalize();
    (position.is_finite() && rotation.is_finite()).then_some((position, rotation))
}

/// A joint's local Bevy transform as an ikarus local transform in model units: the
/// translation times `unit` (the scale of the joint's parent frame), the scale left out (it
/// is folded into the children's units).
pub(crate) fn to_local(transform: &Transform, unit: f64) -> ikarus_core::Transform {
    ikarus_core::Transform::from_translation_rotation(
        dvec3(transform.translation) * unit,
        dquat(transform.rotation),
    )
}

/// An ikarus local transform back into a joint's Bevy transform: the translation divided
/// by `unit`, the joint's own scale kept.
pub(crate) fn from_local(local: &ikarus_core::Transform, unit: f64, scale: Vec3) -> Transform {
    Transform {
        translation: vec3(local.translation / unit),
        rotation: quat(local.rotation),
        scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transform_survives_the_round_trip_to_the_bit() {
        let t = Transform {
            translation: Vec3::new(0.123_456_7, -7.654_321, 42.0),
            rotation: Quat::from_rotation_y(0.3) * Quat::from_rotation_x(-1.1),
            scale: Vec3::splat(0.01),
        };
        for unit in [1.0, 0.01, 100.0, 0.0254] {
            let back = from_local(&to_local(&t, unit), unit, t.scale);
            assert_eq!(back, t, "unit {unit}");
        }
    }

    #[test]
    fn a_scaled_root_splits_into_a_rigid_frame_and_a_factor() {
        let root = GlobalTransform::from(
            Transform::from_xyz(1.0, 2.0, 3.0)
                .with_rotation(Quat::from_rotation_y(1.0))
                .with_scale(Vec3::splat(0.01)),
        );
        let (frame, factor) = model_frame(&root).unwrap();
        assert!((factor - 0.01).abs() < 1e-9);
        assert!((frame.translation - DVec3::new(1.0, 2.0, 3.0)).length() < 1e-6);
        let stretched = GlobalTransform::from(Transform::from_scale(Vec3::new(1.0, 2.0, 1.0)));
        assert!(model_frame(&stretched).is_none());
    }
}
