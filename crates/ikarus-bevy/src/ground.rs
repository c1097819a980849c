//! The ground a game's characters stand on, and grounding them on it every frame.

use bevy::prelude::*;
use ikarus_anim::ground::{FrameGroundConfig, Ground, Heightfield, Plane};
use ikarus_core::glam::{DAffine3, DVec3};

use crate::error::IkReport;

/// The world's ground for [`Grounding`] and tracked bodies' steps, in world space (+Y up,
/// world units). Without this resource the ground is the plane y = 0. A game with physics
/// can replace it every frame from its own system (a heightfield patch around each
/// character), or answer from a closure.
#[derive(Resource)]
pub enum IkarusGround {
    /// A plane.
    Plane(Plane),
    /// Heights on a grid, bilinear between samples.
    Heightfield(Heightfield),
    /// The game's own answer: height and normal (any length, pointing up) under world
    /// `(x, z)`, `None` where there is no ground (the foot keeps its animation).
    Fn(Box<dyn Fn(f64, f64) -> Option<(f64, DVec3)> + Send + Sync>),
}

impl IkarusGround {
    /// The ground from a closure answering height and normal at world `(x, z)`.
    pub fn from_fn(f: impl Fn(f64, f64) -> Option<(f64, DVec3)> + Send + Sync + 'static) -> Self {
        Self::Fn(Box::new(f))
    }
}

impl Default for IkarusGround {
    /// The plane y = 0.
    fn default() -> Self {
        Self::Plane(Plane {
            point: DVec3::ZERO,
            normal: DVec3::Y,
        })
    }
}

impl Ground for IkarusGround {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        match self {
            IkarusGround::Plane(p) => p.sample(x, z),
            IkarusGround::Heightfield(h) => h.sample(x, z),
            IkarusGround::Fn(f) => {
                let (h, n) = f(x, z)?;
                let n = n.try_normalize()?;
                (h.is_finite() && n.y > 0.0).then_some((h, n))
            }
        }
    }
}

/// The world's ground seen from a character's model space: a vertical line of the model is
/// one of the world (exact while the character's root stands upright, its up the world's).
pub(crate) struct ModelGround<'a> {
    pub(crate) ground: &'a dyn Ground,
    pub(crate) world_from_model: DAffine3,
    pub(crate) model_from_world: DAffine3,
}

impl Ground for ModelGround<'_> {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        let world = self
            .world_from_model
            .transform_point3(DVec3::new(x, 0.0, z));
        let (height, normal) = self.ground.sample(world.x, world.z)?;
        let point = self
            .model_from_world
            .transform_point3(DVec3::new(world.x, height, world.z));
        let normal = self.model_from_world.transform_vector3(normal);
        (point.is_finite() && normal.is_finite()).then_some((point.y, normal))
    }
}

/// Grounds a character every frame (Final IK's Grounder): each foot lifted or lowered onto
/// the [`IkarusGround`] under it, keeping the animation's sole offset, turned to the
/// ground's normal when planted, the pelvis lowered by the lower foot through a damped
/// spring; the full-body solver places pelvis and feet. Put it on the character's entity
/// (with or without [`FullBodyIk`](crate::FullBodyIk): the feet the full body's effectors do
/// not drive are grounded). The outcome is the character's [`IkReport`].
#[derive(Component, Clone, Debug, Default, PartialEq)]
#[require(IkReport)]
pub struct Grounding {
    /// The grounder's settings: the animation's floor height in model space, contact height,
    /// spring time constant, largest foot tilt.
    pub config: FrameGroundConfig,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turned_character_sees_the_world_slope_in_its_own_frame() {
        // A slope rising along world +X; a character turned 90° about +Y (its +Z is world +X)
        // standing at world (2, 0, 0): in its frame the slope rises along +Z.
        let slope = Plane::slope(0.2);
        let world_from_model = DAffine3::from_rotation_translation(
            ikarus_core::glam::DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
            DVec3::new(2.0, 0.0, 0.0),
        );
        let ground = ModelGround {
            ground: &slope,
            world_from_model,
            model_from_world: world_from_model.inverse(),
        };
        let (h0, n) = ground.sample(0.0, 0.0).unwrap();
        let (h1, _) = ground.sample(0.0, 1.0).unwrap();
        assert!((h0 - 2.0 * 0.2f64.tan()).abs() < 1e-12);
        assert!((h1 - h0 - 0.2f64.tan()).abs() < 1e-12);
        assert!(n.z < 0.0 && n.x.abs() < 1e-12);
        let f = IkarusGround::from_fn(|_, _| Some((0.5, DVec3::new(0.0, 2.0, 0.0))));
        assert_eq!(f.sample(1.0, 1.0), Some((0.5, DVec3::Y)));
    }
}
