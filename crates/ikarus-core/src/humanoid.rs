//! The built-in default humanoid, addressed as `builtin:humanoid` by the CLI and viewer.
//!
//! 26 joints named with VRM 1.0 humanoid bone names, metres, T-pose, facing +Z with its left side
//! on +X (the VRM 1.0 orientation), hips 0.95 m above the ground, head joint at 1.52 m. Every rest
//! rotation is identity, so each joint's rest frame is aligned with model space and the limits
//! below read directly in model axes. Elbows, knees, toes and finger bases are hinges; spine,
//! neck, head, shoulders, hips, hands, feet and eyes are swing–twist ellipses with anatomically
//! plausible per-direction ranges (rough textbook ranges of motion, split over the spine segments).

use glam::DVec3;

use crate::{HingeLimit, JointLimit, Skeleton, SkeletonBuilder, SwingTwistLimit, Transform};

/// The name by which tools address this skeleton.
pub const BUILTIN_HUMANOID: &str = "builtin:humanoid";

fn deg(d: f64) -> f64 {
    d.to_radians()
}

fn hinge(axis: DVec3, min: f64, max: f64) -> JointLimit {
    JointLimit::Hinge(HingeLimit {
        axis,
        min: deg(min),
        max: deg(max),
    })
}

/// Swing–twist limit with angles in degrees: `u` about `swing_axis`, `v` about
/// `twist_axis × swing_axis`.
fn swing(
    twist_axis: DVec3,
    swing_axis: DVec3,
    u: (f64, f64),
    v: (f64, f64),
    twist: (f64, f64),
) -> JointLimit {
    JointLimit::SwingTwist(SwingTwistLimit {
        twist_axis,
        swing_axis,
        swing_u: (deg(u.0), deg(u.1)),
        swing_v: (deg(v.0), deg(v.1)),
        twist: (deg(twist.0), deg(twist.1)),
    })
}

/// Builds the built-in humanoid.
///
/// Sign conventions of the limits (angles about an axis follow the right-hand rule):
/// spine segments bend forward for positive angles about +X; the left arm lies along +X, so its
/// elbow flexes about −Y (the right elbow about +Y) and knees flex about +X.
pub fn builtin_humanoid() -> Skeleton {
    let mut b = SkeletonBuilder::new();
    let at = |x: f64, y: f64, z: f64| Transform::from_translation(DVec3::new(x, y, z));
    let (x, y, z) = (DVec3::X, DVec3::Y, DVec3::Z);

    b.joint("hips", None, at(0.0, 0.95, 0.0));
    b.limited_joint(
        "spine",
        Some("hips"),
        at(0.0, 0.10, 0.0),
        swing(y, x, (-20.0, 40.0), (-25.0, 25.0), (-20.0, 20.0)),
    );
    b.limited_joint(
        "chest",
        Some("spine"),
        at(0.0, 0.12, 0.0),
        swing(y, x, (-15.0, 25.0), (-15.0, 15.0), (-20.0, 20.0)),
    );
    b.limited_joint(
        "upperChest",
        Some("chest"),
        at(0.0, 0.12, 0.0),
        swing(y, x, (-10.0, 15.0), (-10.0, 10.0), (-15.0, 15.0)),
    );
    b.limited_joint(
        "neck",
        Some("upperChest"),
        at(0.0, 0.13, 0.0),
        swing(y, x, (-40.0, 50.0), (-35.0, 35.0), (-50.0, 50.0)),
    );
    b.limited_joint(
        "head",
        Some("neck"),
        at(0.0, 0.10, 0.0),
        swing(y, x, (-30.0, 40.0), (-30.0, 30.0), (-40.0, 40.0)),
    );
    // Eyes look along +Z: positive about +X looks down, positive about +Y looks to the left.
    b.limited_joint(
        "leftEye",
        Some("head"),
        at(0.032, 0.07, 0.08),
        swing(z, x, (-25.0, 30.0), (-35.0, 35.0), (0.0, 0.0)),
    );
    b.limited_joint(
        "rightEye",
        Some("head"),
        at(-0.032, 0.07, 0.08),
        swing(z, x, (-25.0, 30.0), (-35.0, 35.0), (0.0, 0.0)),
    );

    // Left arm along +X. Swing about +Y: negative swings forward; about +Z: positive raises.
    b.limited_joint(
        "leftShoulder",
        Some("upperChest"),
        at(0.03, 0.09, 0.0),
        swing(x, y, (-20.0, 15.0), (-10.0, 30.0), (-10.0, 10.0)),
    );
    b.limited_joint(
        "leftUpperArm",
        Some("leftShoulder"),
        at(0.14, 0.0, 0.0),
        swing(x, y, (-110.0, 40.0), (-85.0, 90.0), (-90.0, 90.0)),
    );
    b.limited_joint(
        "leftLowerArm",
        Some("leftUpperArm"),
        at(0.28, 0.0, 0.0),
        hinge(-y, 0.0, 150.0),
    );
    b.limited_joint(
        "leftHand",
        Some("leftLowerArm"),
        at(0.25, 0.0, 0.0),
        swing(x, y, (-20.0, 35.0), (-80.0, 70.0), (-20.0, 20.0)),
    );
    b.limited_joint(
        "leftMiddleProximal",
        Some("leftHand"),
        at(0.09, 0.0, 0.0),
        hinge(-z, -10.0, 90.0),
    );
    // Right arm along −X, mirrored: swing about +Y positive swings forward; about −Z positive raises.
    b.limited_joint(
        "rightShoulder",
        Some("upperChest"),
        at(-0.03, 0.09, 0.0),
        swing(-x, y, (-15.0, 20.0), (-10.0, 30.0), (-10.0, 10.0)),
    );
    b.limited_joint(
        "rightUpperArm",
        Some("rightShoulder"),
        at(-0.14, 0.0, 0.0),
        swing(-x, y, (-40.0, 110.0), (-85.0, 90.0), (-90.0, 90.0)),
    );
    b.limited_joint(
        "rightLowerArm",
        Some("rightUpperArm"),
        at(-0.28, 0.0, 0.0),
        hinge(y, 0.0, 150.0),
    );
    b.limited_joint(
        "rightHand",
        Some("rightLowerArm"),
        at(-0.25, 0.0, 0.0),
        swing(-x, y, (-35.0, 20.0), (-80.0, 70.0), (-20.0, 20.0)),
    );
    b.limited_joint(
        "rightMiddleProximal",
        Some("rightHand"),
        at(-0.09, 0.0, 0.0),
        hinge(z, -10.0, 90.0),
    );

    // Legs along −Y. Swing about +X: negative swings the leg forward (flexion);
    // about twist × X = +Z: positive moves the leg towards +X.
    b.limited_joint(
        "leftUpperLeg",
        Some("hips"),
        at(0.09, -0.06, 0.0),
        swing(-y, x, (-120.0, 30.0), (-20.0, 45.0), (-40.0, 40.0)),
    );
    b.limited_joint(
        "leftLowerLeg",
        Some("leftUpperLeg"),
        at(0.0, -0.42, 0.0),
        hinge(x, 0.0, 150.0),
    );
    b.limited_joint(
        "leftFoot",
        Some("leftLowerLeg"),
        at(0.0, -0.40, 0.0),
        swing(y, x, (-20.0, 45.0), (-20.0, 20.0), (-15.0, 15.0)),
    );
    b.limited_joint(
        "leftToes",
        Some("leftFoot"),
        at(0.0, -0.05, 0.13),
        hinge(x, -50.0, 30.0),
    );
    b.limited_joint(
        "rightUpperLeg",
        Some("hips"),
        at(-0.09, -0.06, 0.0),
        swing(-y, x, (-120.0, 30.0), (-45.0, 20.0), (-40.0, 40.0)),
    );
    b.limited_joint(
        "rightLowerLeg",
        Some("rightUpperLeg"),
        at(0.0, -0.42, 0.0),
        hinge(x, 0.0, 150.0),
    );
    b.limited_joint(
        "rightFoot",
        Some("rightLowerLeg"),
        at(0.0, -0.40, 0.0),
        swing(y, x, (-20.0, 45.0), (-20.0, 20.0), (-15.0, 15.0)),
    );
    b.limited_joint(
        "rightToes",
        Some("rightFoot"),
        at(0.0, -0.05, 0.13),
        hinge(x, -50.0, 30.0),
    );

    b.build()
        .expect("the built-in humanoid is a valid skeleton (covered by tests)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ModelPose, fk};
    use glam::DQuat;

    #[test]
    fn builtin_humanoid_is_a_t_pose_with_legal_rest() {
        let s = builtin_humanoid();
        assert_eq!(s.len(), 26);
        assert_eq!(s.roots().count(), 1);
        let mut model = ModelPose::new(&s);
        fk::forward_kinematics(&s, &s.rest_pose(), &mut model);
        let p = |n: &str| model.position(s.joint(n).unwrap());
        assert!((p("head").y - 1.52).abs() < 1e-12);
        assert!((p("leftHand") - DVec3::new(0.70, 1.38, 0.0)).length() < 1e-12);
        assert!((p("rightHand") - DVec3::new(-0.70, 1.38, 0.0)).length() < 1e-12);
        assert!((p("leftFoot").y - 0.07).abs() < 1e-12);
        assert!(p("leftToes").z > 0.1, "toes point forward (+Z)");
        for j in s.joints() {
            assert_eq!(s.limit(j).violation(DQuat::IDENTITY), 0.0, "{}", s.name(j));
        }
    }

    #[test]
    fn elbows_and_knees_flex_the_anatomical_way() {
        let s = builtin_humanoid();
        for (elbow, hand, sign) in [
            ("leftLowerArm", "leftHand", -1.0),
            ("rightLowerArm", "rightHand", 1.0),
        ] {
            let e = s.joint(elbow).unwrap();
            let JointLimit::Hinge(h) = s.limit(e) else {
                panic!("{elbow} is a hinge")
            };
            let mut pose = s.rest_pose();
            pose[e].rotation = DQuat::from_axis_angle(h.axis, deg(90.0));
            let mut model = ModelPose::new(&s);
            fk::forward_kinematics(&s, &pose, &mut model);
            let forearm = model.position(s.joint(hand).unwrap()) - model.position(e);
            assert!(
                forearm.z > 0.24,
                "{elbow}: forearm bends forward, got {forearm}"
            );
            assert_eq!(h.axis.y, sign);
        }
        let knee = s.joint("leftLowerLeg").unwrap();
        let JointLimit::Hinge(h) = s.limit(knee) else {
            panic!("knee is a hinge")
        };
        let mut pose = s.rest_pose();
        pose[knee].rotation = DQuat::from_axis_angle(h.axis, deg(90.0));
        let mut model = ModelPose::new(&s);
        fk::forward_kinematics(&s, &pose, &mut model);
        let shin = model.position(s.joint("leftFoot").unwrap()) - model.position(knee);
        assert!(shin.z < -0.39, "shin bends backward, got {shin}");
    }
}
