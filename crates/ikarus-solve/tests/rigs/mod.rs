//! The random inputs and parent transforms of the closed-form solvers' tests (two-bone, aim):
//! one generator and the six parent transforms every check is repeated under (translated,
//! rotated, uniformly and non-uniformly scaled, mirrored), as ozz-animation's IK tests do.

#![allow(dead_code)]

use glam::{DQuat, DVec3};
use ikarus_core::Transform;

pub use ikarus_testdata::Rng;

/// Test draws on [`Rng`] beyond plain numbers.
pub trait Draw {
    fn in_ball(&mut self) -> DVec3;

    fn direction(&mut self) -> DVec3;

    fn rotation(&mut self) -> DQuat;
}

impl Draw for Rng {
    fn in_ball(&mut self) -> DVec3 {
        loop {
            let v = DVec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            if v.length_squared() <= 1.0 && v.length_squared() > 1e-6 {
                return v;
            }
        }
    }

    fn direction(&mut self) -> DVec3 {
        self.in_ball().normalize()
    }

    fn rotation(&mut self) -> DQuat {
        loop {
            let q = DQuat::from_xyzw(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            let l2 = q.length_squared();
            if l2 <= 1.0 && l2 > 1e-6 {
                return q.normalize();
            }
        }
    }
}

/// The six transforms the root of the test rigs carries.
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
