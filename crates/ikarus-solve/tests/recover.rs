//! Posture from joint points against forward kinematics: recover a known pose from its own FK
//! joint positions (the built-in humanoid, a real CMU skeleton, a scaled and mirrored root) and
//! compare positions and rotations; degenerate and bad points give a status, never a NaN.

mod common;

use common::{Draw, Rng, cmu_jump, model};
use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{JointId, LocalPose, Skeleton, SkeletonBuilder, Transform};
use ikarus_solve::recover::{
    RecoverConfig, RecoverError, RecoverReport, RootPlacement, recover_posture,
};
use ikarus_testdata::assert::rotation_angle;

/// Every joint turned at random (limits ignored: recovery does not read them), the root moved.
fn random_pose(s: &Skeleton, rng: &mut Rng) -> LocalPose {
    let mut pose = s.rest_pose();
    for j in s.joints() {
        pose[j].rotation = s.rest(j).rotation * rng.rotation_up_to(1.4);
    }
    let root = s.roots().next().unwrap();
    pose[root].translation += DVec3::new(rng.range(-1.0, 1.0), rng.range(-0.5, 0.5), 0.3);
    pose
}

fn points(s: &Skeleton, pose: &LocalPose) -> Vec<DVec3> {
    model(s, pose).positions().collect()
}

/// Recovers `truth` from its joint points twice: from `reference` (positions must match, and
/// rotations up to the twist about each bone) and from the truth itself (everything matches).
fn check_round_trip(s: &Skeleton, truth: &LocalPose, reference: &LocalPose, config: RecoverConfig) {
    let p = points(s, truth);
    let mut pose = s.rest_pose();
    let report = recover_posture(s, reference, &p, &config, &mut pose).unwrap();
    assert!(pose.is_finite());
    assert!(report.position_error < 1e-9, "{report:?}");
    let measured = points(s, &pose);
    for (a, b) in measured.iter().zip(&p) {
        assert!((*a - *b).length() < 1e-9, "{a} vs {b}");
    }
    // Rotations composed from the root, without scale: exact under scaled or mirrored roots.
    let chain = |pose: &LocalPose, j: JointId| {
        s.path_to_root(j)
            .fold(DQuat::IDENTITY, |q, a| pose[a].rotation * q)
    };
    for j in s.joints() {
        let children: Vec<JointId> = s.children(j).collect();
        if report.degenerate.contains(&j) || children.is_empty() {
            continue;
        }
        let difference = chain(truth, j).conjugate() * chain(&pose, j);
        if children.len() == 1 {
            // Only a twist about the bone: the bone's direction is the same.
            let bone = (truth[j].scale * truth[children[0]].translation).normalize();
            assert!(
                (difference * bone - bone).length() < 1e-9,
                "{}: not a twist",
                s.name(j)
            );
        } else {
            let angle = rotation_angle(difference, DQuat::IDENTITY);
            assert!(angle < 1e-9, "{}: off by {angle} rad", s.name(j));
        }
    }
    // From the truth as reference every rotation (twists and leaves included) comes back.
    let report = recover_posture(s, truth, &p, &config, &mut pose).unwrap();
    assert!(report.position_error < 1e-9);
    for j in s.joints() {
        let angle = rotation_angle(pose[j].rotation, truth[j].rotation);
        assert!(angle < 1e-9, "{}: off by {angle} rad", s.name(j));
        assert!((pose[j].translation - truth[j].translation).length() < 1e-9);
    }
}

#[test]
fn humanoid_poses_come_back_from_their_joint_points() {
    let s = builtin_humanoid();
    let mut rng = Rng(4);
    for k in 0..50 {
        let truth = random_pose(&s, &mut rng);
        let root = if k % 2 == 0 {
            RootPlacement::FromChildren
        } else {
            RootPlacement::FromPoint
        };
        check_round_trip(&s, &truth, &s.rest_pose(), RecoverConfig { root });
    }
}

#[test]
fn multi_child_joints_are_fully_determined_and_one_child_joints_keep_the_reference_twist() {
    let s = builtin_humanoid();
    let mut rng = Rng(9);
    let truth = random_pose(&s, &mut rng);
    let reference = s.rest_pose();
    let mut pose = s.rest_pose();
    let report = recover_posture(
        &s,
        &reference,
        &points(&s, &truth),
        &RecoverConfig::default(),
        &mut pose,
    )
    .unwrap();
    assert!(report.degenerate.is_empty(), "{report:?}");
    // hips (spine and both legs), upperChest (neck and shoulders), head (eyes): exact.
    for name in ["hips", "upperChest", "head"] {
        let j = s.joint(name).unwrap();
        let (got, want) = (model(&s, &pose).rotation(j), model(&s, &truth).rotation(j));
        assert!(rotation_angle(got, want) < 1e-9, "{name}");
    }
    // The lower arm (one child) keeps the rest twist: the smallest rotation from the input.
    let forearm = s.joint("leftLowerArm").unwrap();
    let elbow_to_wrist = model(&s, &pose).position(s.joint("leftHand").unwrap())
        - model(&s, &pose).position(forearm);
    let twist_free = DQuat::from_rotation_arc(
        (model(&s, &pose).rotation(s.joint("leftUpperArm").unwrap()) * DVec3::X).normalize(),
        elbow_to_wrist.normalize(),
    ) * model(&s, &pose).rotation(s.joint("leftUpperArm").unwrap());
    assert!(rotation_angle(model(&s, &pose).rotation(forearm), twist_free) < 1e-9);
}

#[test]
fn scaled_and_mirrored_roots_recover_exactly() {
    let s = builtin_humanoid();
    let hips = s.joint("hips").unwrap();
    let mut rng = Rng(21);
    for scale in [
        DVec3::splat(2.5),
        DVec3::new(1.0, 2.0, 0.5),
        DVec3::new(-1.0, 1.0, 1.0),
    ] {
        let mut truth = random_pose(&s, &mut rng);
        truth[hips].scale = scale;
        let mut reference = s.rest_pose();
        reference[hips].scale = scale;
        // A non-uniform or mirrored root frame is not a rotation: place it from its point.
        let root = if scale.x == scale.y && scale.y == scale.z {
            RootPlacement::FromChildren
        } else {
            RootPlacement::FromPoint
        };
        check_round_trip(&s, &truth, &reference, RecoverConfig { root });
    }
}

#[test]
fn cmu_motion_frames_come_back_from_their_joint_points() {
    let Some(doc) = cmu_jump("cmu_motion_frames_come_back", 0.056_444) else {
        return;
    };
    let s = &doc.skeleton;
    let frames = doc.motion.as_ref().unwrap().frames();
    let hips = s.joint("Hips").unwrap();
    for k in (0..frames.len()).step_by(frames.len() / 12) {
        let truth = &frames[k];
        check_round_trip(s, truth, &s.rest_pose(), RecoverConfig::default());
        // The CMU hips' three children sit at its origin (zero offsets): the points say
        // nothing about its rotation, which comes from the reference, and that is reported.
        let mut pose = s.rest_pose();
        let report = recover_posture(
            s,
            &frames[(k + 40) % frames.len()],
            &points(s, truth),
            &RecoverConfig::default(),
            &mut pose,
        )
        .unwrap();
        assert!(report.degenerate.contains(&hips), "{report:?}");
        assert!(report.position_error < 1e-9);
    }
}

/// `root` with three children on one line, and a leaf at its parent's origin.
fn collinear_skeleton() -> Skeleton {
    let mut b = SkeletonBuilder::new();
    b.joint("root", None, Transform::IDENTITY);
    b.joint("hub", Some("root"), Transform::from_translation(DVec3::Y));
    for (name, x) in [("a", 0.2), ("b", 0.5), ("c", -0.3)] {
        b.joint(
            name,
            Some("hub"),
            Transform::from_translation(DVec3::new(x, 0.0, 0.0)),
        );
    }
    b.joint("zero", Some("a"), Transform::IDENTITY);
    b.build().unwrap()
}

#[test]
fn collinear_children_and_zero_length_bones_are_reported_not_nan() {
    let s = collinear_skeleton();
    let hub = s.joint("hub").unwrap();
    let a = s.joint("a").unwrap();
    let mut truth = s.rest_pose();
    truth[hub].rotation = DQuat::from_axis_angle(DVec3::new(0.3, 1.0, -0.2).normalize(), 1.1);
    let p = points(&s, &truth);
    let mut pose = s.rest_pose();
    let report =
        recover_posture(&s, &s.rest_pose(), &p, &RecoverConfig::default(), &mut pose).unwrap();
    assert!(pose.is_finite());
    assert!(report.position_error < 1e-12, "{report:?}");
    // The hub's twist about the children's line is not in the points; `a`'s only child has a
    // zero-length bone.
    assert_eq!(report.degenerate, vec![hub, a]);
    // Every point at one place: a finite pose and an honest error.
    let same = vec![DVec3::new(0.1, 0.2, 0.3); s.len()];
    let report = recover_posture(
        &s,
        &s.rest_pose(),
        &same,
        &RecoverConfig::default(),
        &mut pose,
    )
    .unwrap();
    assert!(pose.is_finite());
    assert!(report.position_error > 0.4, "{report:?}");
}

#[test]
fn bad_points_are_rejected_and_leave_the_pose_untouched() {
    let s = builtin_humanoid();
    let mut p = points(&s, &s.rest_pose());
    let mut pose = s.rest_pose();
    pose[s.joint("spine").unwrap()].rotation = DQuat::from_rotation_x(0.3);
    let before = pose.clone();
    let config = RecoverConfig::default();
    p[3] = DVec3::new(f64::NAN, 0.0, 0.0);
    let error = recover_posture(&s, &s.rest_pose(), &p, &config, &mut pose).unwrap_err();
    assert!(matches!(error, RecoverError::NonFinitePoint { ref joint } if joint == "upperChest"));
    p.pop();
    let error = recover_posture(&s, &s.rest_pose(), &p, &config, &mut pose).unwrap_err();
    assert_eq!(
        error,
        RecoverError::WrongLength {
            expected: 26,
            found: 25
        }
    );
    let mut bad = s.rest_pose();
    bad[JointId::from_index(0)].rotation = DQuat::from_xyzw(f64::INFINITY, 0.0, 0.0, 1.0);
    let p = points(&s, &s.rest_pose());
    let error = recover_posture(&s, &bad, &p, &config, &mut pose).unwrap_err();
    assert_eq!(error, RecoverError::NonFiniteReference);
    assert_eq!(pose, before);
    let _: RecoverReport = recover_posture(&s, &s.rest_pose(), &p, &config, &mut pose).unwrap();
}
