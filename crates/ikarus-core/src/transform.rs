//! Local translation–rotation–scale transforms.

use glam::{DAffine3, DMat3, DQuat, DVec3};

/// A joint's local transform relative to its parent (`parent_from_joint`) as translation,
/// rotation and scale, applied scale first, then rotation, then translation.
///
/// This is state (poses store it); the derived model-space transform is a [`DAffine3`] in
/// [`ModelPose`](crate::ModelPose).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Transform {
    /// Translation in the parent's space, metres.
    pub translation: DVec3,
    /// Rotation relative to the parent, a unit quaternion.
    pub rotation: DQuat,
    /// Scale along the joint's own axes (1 = unscaled).
    pub scale: DVec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Self = Self {
        translation: DVec3::ZERO,
        rotation: DQuat::IDENTITY,
        scale: DVec3::ONE,
    };

    /// A pure translation.
    pub const fn from_translation(translation: DVec3) -> Self {
        Self {
            translation,
            rotation: DQuat::IDENTITY,
            scale: DVec3::ONE,
        }
    }

    /// A pure rotation.
    pub const fn from_rotation(rotation: DQuat) -> Self {
        Self {
            translation: DVec3::ZERO,
            rotation,
            scale: DVec3::ONE,
        }
    }

    /// Translation and rotation with unit scale.
    pub const fn from_translation_rotation(translation: DVec3, rotation: DQuat) -> Self {
        Self {
            translation,
            rotation,
            scale: DVec3::ONE,
        }
    }

    /// Returns a copy with the rotation replaced.
    #[must_use]
    pub const fn with_rotation(mut self, rotation: DQuat) -> Self {
        self.rotation = rotation;
        self
    }

    /// Returns a copy with the translation replaced.
    #[must_use]
    pub const fn with_translation(mut self, translation: DVec3) -> Self {
        self.translation = translation;
        self
    }

    /// The transform as an affine matrix (`parent_from_joint`).
    #[inline]
    pub fn to_affine(&self) -> DAffine3 {
        let r = DMat3::from_quat(self.rotation);
        if self.scale == DVec3::ONE {
            DAffine3::from_mat3_translation(r, self.translation)
        } else {
            DAffine3::from_mat3_translation(
                DMat3::from_cols(
                    r.x_axis * self.scale.x,
                    r.y_axis * self.scale.y,
                    r.z_axis * self.scale.z,
                ),
                self.translation,
            )
        }
    }

    /// Maps a point from the joint's space to the parent's space.
    pub fn transform_point(&self, point: DVec3) -> DVec3 {
        self.translation + self.rotation * (self.scale * point)
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }

    /// Interpolates translation and scale linearly and rotation by shortest-path slerp;
    /// `t = 0` gives `self`, `t = 1` gives `other`.
    #[must_use]
    pub fn interpolate(&self, other: &Self, t: f64) -> Self {
        Self {
            translation: self.translation.lerp(other.translation, t),
            rotation: self.rotation.slerp(other.rotation, t),
            scale: self.scale.lerp(other.scale, t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_matches_point_transform() {
        let t = Transform {
            translation: DVec3::new(1.0, -2.0, 0.5),
            rotation: DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
            scale: DVec3::new(2.0, 0.5, -1.0),
        };
        let p = DVec3::new(0.3, -0.4, 1.1);
        let a = t.to_affine().transform_point3(p);
        let b = t.transform_point(p);
        assert!((a - b).length() < 1e-12, "{a} vs {b}");
    }
}
