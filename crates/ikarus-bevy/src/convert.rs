//! The boundary: Bevy's f32 transforms to ikarus's f64 and back, world to model space.

use bevy::ecs::system::SystemParam;
use bevy::math::{Quat, Vec3};
use bevy::prelude::{ChildOf, Entity, Query, Transform};
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

/// An entity's world frame composed in f64 from its own and its ancestors' `Transform`s:
/// the position exactly where Bevy's propagation puts it (each ancestor's scale applied to
/// the positions below it), the rotation the ancestors' rotations composed, the scale their
/// scales multiplied per axis. (For the frames the plugin reads, whose scales are uniform,
/// this is Bevy's `GlobalTransform` without its f32 matrix products.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WorldFrame {
    pub(crate) translation: DVec3,
    pub(crate) rotation: DQuat,
    pub(crate) scale: DVec3,
}

impl WorldFrame {
    /// A local `Transform` as a frame.
    pub(crate) fn of(t: &Transform) -> Self {
        Self {
            translation: dvec3(t.translation),
            rotation: dquat(t.rotation),
            scale: dvec3(t.scale),
        }
    }

    /// This frame seen from its parent's frame `parent` (the parent's world frame).
    pub(crate) fn under(self, parent: &Self) -> Self {
        Self {
            translation: parent.translation + parent.rotation * (parent.scale * self.translation),
            rotation: parent.rotation * self.rotation,
            scale: parent.scale * self.scale,
        }
    }
}

/// The world frames of entities (see [`WorldFrame`]), read through their `Transform`s and
/// `ChildOf`s.
#[derive(SystemParam)]
pub(crate) struct WorldFrames<'w, 's> {
    transforms: Query<'w, 's, &'static Transform>,
    parents: Query<'w, 's, &'static ChildOf>,
}

impl WorldFrames<'_, '_> {
    /// `entity`'s world frame, or `None` when it or an ancestor has no `Transform`.
    pub(crate) fn get(&self, entity: Entity) -> Option<WorldFrame> {
        let mut frame = WorldFrame::of(self.transforms.get(entity).ok()?);
        for ancestor in self.parents.iter_ancestors(entity) {
            frame = frame.under(&WorldFrame::of(self.transforms.get(ancestor).ok()?));
        }
        Some(frame)
    }
}

/// A character root's world frame split at the boundary: `world_from_model` (rotation and
/// translation only) and the root's uniform world scale, or `None` when the scale is not
/// uniform or the frame not finite.
pub(crate) fn model_frame(root: &WorldFrame) -> Option<(DAffine3, f64)> {
    let factor = uniform(vec3(root.scale))?;
    let rotation = root.rotation.normalize();
    (rotation.is_finite() && root.translation.is_finite()).then(|| {
        (
            DAffine3::from_rotation_translation(rotation, root.translation),
            factor,
        )
    })
}

/// A world frame in model space: position and rotation (the frame's scale ignored), or
/// `None` when not finite. `model_rotation` is `model_from_world`'s rotation.
pub(crate) fn to_model(
    world: &WorldFrame,
    model_from_world: &DAffine3,
    model_rotation: DQuat,
) -> Option<(DVec3, DQuat)> {
    let position = model_from_world.transform_point3(world.translation);
    let rotation = (model_rotation * world.rotation).normalize();
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
    use bevy::prelude::GlobalTransform;

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
        let root = WorldFrame::of(
            &Transform::from_xyz(1.0, 2.0, 3.0)
                .with_rotation(Quat::from_rotation_y(1.0))
                .with_scale(Vec3::splat(0.01)),
        );
        let (frame, factor) = model_frame(&root).unwrap();
        assert!((factor - 0.01).abs() < 1e-9);
        assert!((frame.translation - DVec3::new(1.0, 2.0, 3.0)).length() < 1e-6);
        let stretched = WorldFrame::of(&Transform::from_scale(Vec3::new(1.0, 2.0, 1.0)));
        assert!(model_frame(&stretched).is_none());
    }

    #[test]
    fn a_world_frame_is_where_bevy_propagates_it() {
        // Three levels with uniform scales (a scene root, a Mixamo-like 0.01 armature, a
        // joint), against Bevy's own f32 `GlobalTransform` product.
        let chain = [
            Transform::from_xyz(1.5, 0.2, -2.0)
                .with_rotation(Quat::from_rotation_y(0.7))
                .with_scale(Vec3::splat(1.3)),
            Transform::from_xyz(0.0, 0.1, 0.0)
                .with_rotation(Quat::from_rotation_x(-0.4))
                .with_scale(Vec3::splat(0.01)),
            Transform::from_xyz(12.0, 95.0, -3.0).with_rotation(Quat::from_rotation_z(0.9)),
        ];
        let mut ours = WorldFrame::of(&chain[2]);
        ours = ours.under(&WorldFrame::of(&chain[1]));
        ours = ours.under(&WorldFrame::of(&chain[0]));
        let bevy = GlobalTransform::from(chain[0]) * chain[1] * chain[2];
        let (scale, rotation, translation) = bevy.to_scale_rotation_translation();
        assert!((ours.translation - dvec3(translation)).length() < 1e-5);
        assert!(ours.rotation.angle_between(dquat(rotation)) < 1e-3);
        assert!((ours.scale - dvec3(scale)).length() < 1e-7);
    }
}
