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

/// A joint's limit in degrees, as written in the table below.
enum Spec {
    Free,
    /// Hinge about the axis, range in degrees.
    Hinge(DVec3, f64, f64),
    /// Swing–twist: twist axis, swing axis, `u`, `v` and twist ranges in degrees.
    Swing(DVec3, DVec3, (f64, f64), (f64, f64), (f64, f64)),
}

const X: DVec3 = DVec3::X;
const Y: DVec3 = DVec3::Y;
const Z: DVec3 = DVec3::Z;
const NEG_X: DVec3 = DVec3::NEG_X;
const NEG_Y: DVec3 = DVec3::NEG_Y;
const NEG_Z: DVec3 = DVec3::NEG_Z;

/// Name, parent, rest offset from the parent (metres) and limit of every joint.
///
/// Spine segments: positive about +X bends forward, about twist × X = −Z leans left.
/// Eyes look along +Z: positive about +X looks down, about +Y looks left.
/// Left arm along +X: swing about +Y negative swings forward, about +Z positive raises; the
/// right arm along −X is the mirror image (about +Y positive swings forward, about −Z positive
/// raises). Legs along −Y: about +X negative swings forward (flexion), about twist × X = +Z
/// positive moves the leg towards +X. Feet: about +X negative lifts the toes (dorsiflexion,
/// 30°: the weight-bearing range a squat with the heels down needs; 20° is the unloaded
/// one), positive points them (plantarflexion, 45°).
#[rustfmt::skip]
const JOINTS: [(&str, Option<&str>, [f64; 3], Spec); 26] = [
    ("hips", None, [0.0, 0.95, 0.0], Spec::Free),
    ("spine", Some("hips"), [0.0, 0.10, 0.0], Spec::Swing(Y, X, (-20.0, 40.0), (-25.0, 25.0), (-20.0, 20.0))),
    ("chest", Some("spine"), [0.0, 0.12, 0.0], Spec::Swing(Y, X, (-15.0, 25.0), (-15.0, 15.0), (-20.0, 20.0))),
    ("upperChest", Some("chest"), [0.0, 0.12, 0.0], Spec::Swing(Y, X, (-10.0, 15.0), (-10.0, 10.0), (-15.0, 15.0))),
    ("neck", Some("upperChest"), [0.0, 0.13, 0.0], Spec::Swing(Y, X, (-40.0, 50.0), (-35.0, 35.0), (-50.0, 50.0))),
    ("head", Some("neck"), [0.0, 0.10, 0.0], Spec::Swing(Y, X, (-30.0, 40.0), (-30.0, 30.0), (-40.0, 40.0))),
    ("leftEye", Some("head"), [0.032, 0.07, 0.08], Spec::Swing(Z, X, (-25.0, 30.0), (-35.0, 35.0), (0.0, 0.0))),
    ("rightEye", Some("head"), [-0.032, 0.07, 0.08], Spec::Swing(Z, X, (-25.0, 30.0), (-35.0, 35.0), (0.0, 0.0))),
    ("leftShoulder", Some("upperChest"), [0.03, 0.09, 0.0], Spec::Swing(X, Y, (-20.0, 15.0), (-10.0, 30.0), (-10.0, 10.0))),
    ("leftUpperArm", Some("leftShoulder"), [0.14, 0.0, 0.0], Spec::Swing(X, Y, (-110.0, 40.0), (-85.0, 90.0), (-90.0, 90.0))),
    ("leftLowerArm", Some("leftUpperArm"), [0.28, 0.0, 0.0], Spec::Hinge(NEG_Y, 0.0, 150.0)),
    ("leftHand", Some("leftLowerArm"), [0.25, 0.0, 0.0], Spec::Swing(X, Y, (-20.0, 35.0), (-80.0, 70.0), (-20.0, 20.0))),
    ("leftMiddleProximal", Some("leftHand"), [0.09, 0.0, 0.0], Spec::Hinge(NEG_Z, -10.0, 90.0)),
    ("rightShoulder", Some("upperChest"), [-0.03, 0.09, 0.0], Spec::Swing(NEG_X, Y, (-15.0, 20.0), (-10.0, 30.0), (-10.0, 10.0))),
    ("rightUpperArm", Some("rightShoulder"), [-0.14, 0.0, 0.0], Spec::Swing(NEG_X, Y, (-40.0, 110.0), (-85.0, 90.0), (-90.0, 90.0))),
    ("rightLowerArm", Some("rightUpperArm"), [-0.28, 0.0, 0.0], Spec::Hinge(Y, 0.0, 150.0)),
    ("rightHand", Some("rightLowerArm"), [-0.25, 0.0, 0.0], Spec::Swing(NEG_X, Y, (-35.0, 20.0), (-80.0, 70.0), (-20.0, 20.0))),
    ("rightMiddleProximal", Some("rightHand"), [-0.09, 0.0, 0.0], Spec::Hinge(Z, -10.0, 90.0)),
    ("leftUpperLeg", Some("hips"), [0.09, -0.06, 0.0], Spec::Swing(NEG_Y, X, (-120.0, 30.0), (-20.0, 45.0), (-40.0, 40.0))),
    ("leftLowerLeg", Some("leftUpperLeg"), [0.0, -0.42, 0.0], Spec::Hinge(X, 0.0, 150.0)),
    ("leftFoot", Some("leftLowerLeg"), [0.0, -0.40, 0.0], Spec::Swing(Y, X, (-30.0, 45.0), (-20.0, 20.0), (-15.0, 15.0))),
    ("leftToes", Some("leftFoot"), [0.0, -0.05, 0.13], Spec::Hinge(X, -50.0, 30.0)),
    ("rightUpperLeg", Some("hips"), [-0.09, -0.06, 0.0], Spec::Swing(NEG_Y, X, (-120.0, 30.0), (-45.0, 20.0), (-40.0, 40.0))),
    ("rightLowerLeg", Some("rightUpperLeg"), [0.0, -0.42, 0.0], Spec::Hinge(X, 0.0, 150.0)),
    ("rightFoot", Some("rightLowerLeg"), [0.0, -0.40, 0.0], Spec::Swing(Y, X, (-30.0, 45.0), (-20.0, 20.0), (-15.0, 15.0))),
    ("rightToes", Some("rightFoot"), [0.0, -0.05, 0.13], Spec::Hinge(X, -50.0, 30.0)),
];

/// Builds the built-in humanoid.
pub fn builtin_humanoid() -> Skeleton {
    let mut builder = SkeletonBuilder::new();
    for (name, parent, offset, spec) in &JOINTS {
        let limit = match *spec {
            Spec::Free => JointLimit::Free,
            Spec::Hinge(axis, min, max) => hinge(axis, min, max),
            Spec::Swing(t, s, u, v, twist) => swing(t, s, u, v, twist),
        };
        builder.limited_joint(
            name,
            *parent,
            Transform::from_translation(DVec3::from_array(*offset)),
            limit,
        );
    }
    builder
        .build()
        .expect("the built-in humanoid is a valid skeleton (covered by tests)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ModelPose, fk};
    use glam::DQuat;

    /// The hinge `joint` bent 90° about its axis from rest: its limit and the model-space vector
    /// from it to `child`.
    fn bent_90(s: &Skeleton, joint: &str, child: &str) -> (HingeLimit, DVec3) {
        let j = s.joint(joint).unwrap();
        let JointLimit::Hinge(h) = s.limit(j) else {
            panic!("{joint} is a hinge")
        };
        let mut pose = s.rest_pose();
        pose[j].rotation = DQuat::from_axis_angle(h.axis, deg(90.0));
        let mut model = ModelPose::new(s);
        fk::forward_kinematics(s, &pose, &mut model);
        (
            *h,
            model.position(s.joint(child).unwrap()) - model.position(j),
        )
    }

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
            let (h, forearm) = bent_90(&s, elbow, hand);
            assert!(
                forearm.z > 0.24,
                "{elbow}: forearm bends forward, got {forearm}"
            );
            assert_eq!(h.axis.y, sign);
        }
        let (_, shin) = bent_90(&s, "leftLowerLeg", "leftFoot");
        assert!(shin.z < -0.39, "shin bends backward, got {shin}");
    }
}
