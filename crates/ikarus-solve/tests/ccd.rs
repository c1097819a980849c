//! CCD against forward-kinematics ground truth: reachable targets made by FK of legal poses,
//! the seed variants (MMD limits, length damping, base joint through the root, against
//! Levenberg–Marquardt on long paths), the defaults, bad input.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{JointLimit, LocalPose, MmdLimit, Skeleton, SkeletonBuilder, Transform};
use ikarus_testdata::limits::hinge;
mod common;

use common::{
    Draw, Rng, assert_legal, cmu_jump, count_converged, humanoid_hand_to_hand, humanoid_joints,
    humanoid_left_hand, joint_array, joints, model, pose_task, position_task, positions_task,
    random_pose, reach_targets,
};
use ikarus_solve::{
    CcdConfig, CcdDamping, CcdVariant, IkTask, SolveReport, SolveStatus, SolverConfig,
    SolverWorkspace, Tolerance, ccd, measure, solve_with,
};

/// CCD from the rest pose under `cfg`; the result is checked legal.
fn solve_legal(s: &Skeleton, task: &IkTask, cfg: &CcdConfig) -> (LocalPose, SolveReport) {
    let mut pose = s.rest_pose();
    let report = ccd::solve(s, task, cfg, &mut pose);
    assert_legal(s, &pose);
    (pose, report)
}

/// Classic undamped CCD from the rest pose, at most `iterations` sweeps; checked legal.
fn classic(s: &Skeleton, task: &IkTask, iterations: u32) -> (LocalPose, SolveReport) {
    solve_legal(
        s,
        task,
        &CcdConfig::new(CcdVariant::Classic, CcdDamping::None, iterations),
    )
}

#[test]
fn classic_reaches_targets_made_by_fk_of_legal_arm_poses() {
    let (s, arm, hand) = humanoid_left_hand(&["leftShoulder", "leftUpperArm", "leftLowerArm"]);
    let converged = count_converged(7, 200, |rng| {
        let truth = random_pose(&s, &arm, rng, 1.5);
        let target = model(&s, &truth).position(hand);
        let task = position_task(hand, target);
        let (pose, report) = classic(&s, &task, 200);
        let (measured, _) = measure(&s, &task, &pose);
        assert_eq!(report.position_error, measured);
        assert_eq!(report.converged(), measured <= task.tolerance.position);
        report.converged()
    });
    assert!(converged >= 190, "{converged}/200 converged");
}

#[test]
fn position_and_orientation_goals_are_met() {
    let (s, arm, hand) = humanoid_left_hand(&["leftUpperArm", "leftLowerArm", "leftHand"]);
    let mut rng = Rng(11);
    let mut converged = 0;
    for _ in 0..100 {
        let truth = random_pose(&s, &arm, &mut rng, 1.2);
        let m = model(&s, &truth);
        let task = pose_task(&m, hand);
        let (pose, report) = classic(&s, &task, 500);
        let (p, r) = measure(&s, &task, &pose);
        assert_eq!((report.position_error, report.rotation_error), (p, r));
        if report.converged() {
            assert!(p <= 1e-4 && r <= 1e-3);
            converged += 1;
        }
    }
    assert!(converged >= 98, "{converged}/100 converged");
}

/// A leg like MMD's: thigh (free), knee limited to bending about x in [0.5°, 180°] with y and z
/// locked, ankle effector.
fn mmd_leg() -> Skeleton {
    let mut b = SkeletonBuilder::new();
    b.joint(
        "hip",
        None,
        Transform::from_translation(DVec3::new(0.0, 1.0, 0.0)),
    )
    .joint("thigh", Some("hip"), Transform::IDENTITY)
    .limited_joint(
        "knee",
        Some("thigh"),
        Transform::from_translation(DVec3::new(0.0, -0.45, 0.0)),
        JointLimit::Mmd(MmdLimit {
            min: DVec3::new(0.5f64.to_radians(), 0.0, 0.0),
            max: DVec3::new(std::f64::consts::PI, 0.0, 0.0),
        }),
    )
    .joint(
        "ankle",
        Some("knee"),
        Transform::from_translation(DVec3::new(0.0, -0.42, 0.0)),
    );
    b.build().unwrap()
}

#[test]
fn mmd_variant_bends_the_knee_the_legal_way_and_converges() {
    let s = mmd_leg();
    let [thigh, knee, ankle] = joint_array(&s, ["thigh", "knee", "ankle"]);
    let mut rng = Rng(3);
    let mut converged = 0;
    for _ in 0..200 {
        let mut truth = s.rest_pose();
        truth[thigh].rotation = rng.rotation_up_to(1.0);
        truth[knee].rotation = DQuat::from_rotation_x(rng.range(0.2, 2.5));
        let target = model(&s, &truth).position(ankle);
        let task = position_task(ankle, target);
        let (pose, report) = solve_legal(
            &s,
            &task,
            &CcdConfig::new(CcdVariant::Mmd, CcdDamping::None, 200),
        );
        // The knee only ever turns about x, positively.
        let q = pose[knee].rotation;
        assert!(q.y.abs() < 1e-12 && q.z.abs() < 1e-12 && q.x >= 0.0, "{q}");
        converged += usize::from(report.converged());
    }
    assert!(converged >= 190, "{converged}/200 converged");
}

#[test]
fn length_damping_scales_the_first_step_by_the_remaining_length() {
    // Three bones of 0.3, 0.2, 0.1 m along +X; the tip joint (last bone, 0.1 of 0.6 m) gets
    // w = 0.1 / 0.6 of its undamped first rotation.
    let mut b = SkeletonBuilder::new();
    b.joint("root", None, Transform::IDENTITY)
        .joint("a", Some("root"), Transform::IDENTITY)
        .joint("b", Some("a"), Transform::from_translation(DVec3::X * 0.3))
        .joint("c", Some("b"), Transform::from_translation(DVec3::X * 0.2))
        .joint(
            "tip",
            Some("c"),
            Transform::from_translation(DVec3::X * 0.1),
        );
    let s = b.build().unwrap();
    let (c, tip) = (s.joint("c").unwrap(), s.joint("tip").unwrap());
    let task = position_task(tip, DVec3::new(0.4, 0.3, 0.1));
    let mut turned = [0.0; 2];
    for (i, damping) in [CcdDamping::None, CcdDamping::Length]
        .into_iter()
        .enumerate()
    {
        let mut pose = s.rest_pose();
        let mut cfg = CcdConfig::new(CcdVariant::Classic, damping, 1);
        cfg.iteration.max_iterations = 1;
        // Only the first joint's step matters: read it from a one-joint task on `c`'s turn.
        let mut only_c = task.clone();
        only_c.base = None;
        let _ = ccd::solve(&s, &only_c, &cfg, &mut pose);
        turned[i] = pose[c].rotation.angle_between(DQuat::IDENTITY);
    }
    assert!(turned[0] > 0.1);
    assert!(
        (turned[1] / turned[0] - 0.1 / 0.6).abs() < 1e-9,
        "{turned:?}"
    );
}

#[test]
fn base_joint_through_the_root_stays_fixed_while_the_hand_reaches() {
    let s = builtin_humanoid();
    let [hand, foot, hips] = joint_array(&s, ["leftHand", "rightFoot", "hips"]);
    let rest = model(&s, &s.rest_pose());
    let converged = count_converged(5, 50, |rng| {
        // Reachable: a random legal pose of the leg, spine and arm, re-rooted so the foot is
        // where it is at rest.
        let movers = joints(
            &s,
            &[
                "rightUpperLeg",
                "rightLowerLeg",
                "rightFoot",
                "spine",
                "chest",
                "leftUpperArm",
                "leftLowerArm",
            ],
        );
        let mut truth = random_pose(&s, &movers, rng, 0.5);
        let m = model(&s, &truth);
        let fix = rest[foot] * m[foot].inverse();
        let (_, r, _) = fix.to_scale_rotation_translation();
        truth[hips].rotation = (r * truth[hips].rotation).normalize();
        truth[hips].translation = fix.transform_point3(truth[hips].translation);
        let target = model(&s, &truth).position(hand);
        let mut task = position_task(hand, target);
        task.base = Some(foot);
        task.tolerance = Tolerance {
            position: 1e-4,
            rotation: 1e-3,
        };
        let (pose, report) = classic(&s, &task, 300);
        let after = model(&s, &pose);
        assert!((after.position(foot) - rest.position(foot)).length() < 1e-9);
        let d = after.rotation(foot).conjugate() * rest.rotation(foot);
        let turned = 2.0 * d.xyz().length().atan2(d.w.abs());
        assert!(turned < 1e-9, "foot turned by {turned}");
        report.converged()
    });
    assert!(converged >= 45, "{converged}/50 converged");
    // The root really moves: reaching far down with the foot planted bends the body.
    let mut task = position_task(hand, rest.position(hand) + DVec3::new(0.0, -0.6, 0.3));
    task.base = Some(foot);
    let mut pose = s.rest_pose();
    let report = ccd::solve(&s, &task, &CcdConfig::default(), &mut pose);
    assert!(report.converged(), "{report:?}");
    assert!((pose[hips].translation - s.rest(hips).translation).length() > 0.05);
}

/// The left hand to 60 targets 5–25 cm from rest with `base: rightHand` (the path runs over
/// the chest, the root moves), every solve from the rest pose: at its defaults each CCD
/// variant converges on at least 95% as many targets as Levenberg–Marquardt at its defaults,
/// the right hand never moves (1e-9 m, 1e-9 rad), every pose is legal and every report's
/// residuals are the forward-kinematics ones. `--nocapture` prints the counts.
#[test]
fn base_through_the_root_reaches_95_percent_of_what_lm_reaches() {
    let (s, hand, base) = humanoid_hand_to_hand();
    let rest = model(&s, &s.rest_pose());
    let targets = reach_targets(&s, hand, 60, 13);
    let converged = |config: &SolverConfig| -> usize {
        let mut workspace = SolverWorkspace::new();
        let count = |&&target: &&DVec3| {
            let task = position_task(hand, target).with_base(base);
            let mut pose = s.rest_pose();
            let report = solve_with(&s, &task, config, &mut workspace, &mut pose);
            assert_legal(&s, &pose);
            let after = model(&s, &pose);
            let moved = (after.position(base) - rest.position(base)).length();
            let d = after.rotation(base).conjugate() * rest.rotation(base);
            let turned = 2.0 * d.xyz().length().atan2(d.w.abs());
            assert!(
                moved < 1e-9 && turned < 1e-9,
                "base moved {moved} m, {turned} rad"
            );
            let (p, r) = measure(&s, &task, &pose);
            assert_eq!((p, r), (report.position_error, report.rotation_error));
            report.converged()
        };
        targets.iter().filter(count).count()
    };
    let lm = converged(&SolverConfig::Lm(ikarus_solve::lm::LmConfig::default()));
    // Many targets lie beyond what the arms reach from the planted right hand.
    assert!(lm >= 20, "LM converged on {lm}/60");
    for json in [
        r#"{"kind": "ccd"}"#,
        r#"{"kind": "ccd", "damping": "length"}"#,
        r#"{"kind": "ccd", "variant": "mmd"}"#,
    ] {
        let ccd = converged(&serde_json::from_str(json).unwrap());
        eprintln!("base rightHand: {json} converged on {ccd}/60, LM on {lm}/60");
        assert!(20 * ccd >= 19 * lm, "{json}: {ccd}/60 against LM's {lm}/60");
    }
}

#[test]
fn defaults_are_the_same_from_rust_and_from_task_files() {
    let defaults = CcdConfig::default();
    assert_eq!(defaults.iteration.max_iterations, 128);
    let read = |json: &str| match serde_json::from_str(json).unwrap() {
        SolverConfig::Ccd(config) => config,
        other => panic!("{json} read as {other:?}"),
    };
    assert_eq!(read(r#"{"kind": "ccd"}"#), defaults);
    assert_eq!(read(r#"{"kind": "ccd", "iteration": {}}"#), defaults);
    // A partial "iteration" keeps CCD's budget, not the shared loop default (64).
    let partial = read(r#"{"kind": "ccd", "iteration": {"restarts": 3}}"#);
    assert_eq!(partial.iteration.max_iterations, 128);
    assert_eq!(partial.iteration.restarts, 3);
    let budget = read(r#"{"kind": "ccd", "variant": "mmd", "iteration": {"max_iterations": 9}}"#);
    assert_eq!(budget, CcdConfig::new(CcdVariant::Mmd, CcdDamping::None, 9));
    assert_eq!(
        CcdConfig::new(CcdVariant::Classic, CcdDamping::None, 128),
        defaults
    );
    // Unknown fields are still refused, and what serializes reads back the same.
    assert!(
        serde_json::from_str::<SolverConfig>(r#"{"kind": "ccd", "iteration": {"sweeps": 9}}"#)
            .is_err()
    );
    let text = serde_json::to_string(&SolverConfig::Ccd(partial)).unwrap();
    assert_eq!(read(&text), partial);
}

#[test]
fn two_hands_at_once() {
    let (s, movers) = humanoid_joints(&[
        "spine",
        "leftUpperArm",
        "leftLowerArm",
        "rightUpperArm",
        "rightLowerArm",
    ]);
    let hands = [s.joint("leftHand").unwrap(), s.joint("rightHand").unwrap()];
    let converged = count_converged(9, 50, |rng| {
        let truth = random_pose(&s, &movers, rng, 0.7);
        let task =
            positions_task(&model(&s, &truth), &hands).with_tolerance(Tolerance::new(1e-3, 1e-3));
        let (_, report) = classic(&s, &task, 500);
        report.converged()
    });
    assert!(converged >= 40, "{converged}/50 converged");
}

#[test]
fn unreachable_and_invalid_targets() {
    let s = builtin_humanoid();
    let [hand, shoulder] = joint_array(&s, ["leftHand", "leftUpperArm"]);
    let rest = model(&s, &s.rest_pose());
    // 3 m out along the arm and up: the arm points at it, the report says unreachable.
    let target = rest.position(shoulder) + DVec3::new(2.0, 2.0, 1.0);
    let task = position_task(hand, target);
    let (mut pose, report) = solve_legal(&s, &task, &CcdConfig::default());
    assert_eq!(report.status, SolveStatus::Unreachable);
    let m = model(&s, &pose);
    let reach = (rest.position(hand) - rest.position(shoulder)).length();
    let best = (target - m.position(shoulder)).length() - reach;
    assert!(
        report.position_error < best + 0.05,
        "{} vs {best}",
        report.position_error
    );
    for bad in [f64::NAN, f64::INFINITY] {
        let task = position_task(hand, DVec3::new(bad, 1.0, 0.0));
        let mut pose = s.rest_pose();
        let report = ccd::solve(&s, &task, &CcdConfig::default(), &mut pose);
        assert_eq!(report.status, SolveStatus::InvalidInput);
        assert_eq!(pose, s.rest_pose());
    }
    let mut cfg = CcdConfig::default();
    cfg.iteration.blend = 2.0;
    let report = ccd::solve(&s, &position_task(hand, target), &cfg, &mut pose);
    assert_eq!(report.status, SolveStatus::InvalidInput);
}

#[test]
fn blend_zero_keeps_the_input_and_half_moves_part_way() {
    let s = builtin_humanoid();
    let hand = s.joint("leftHand").unwrap();
    let rest = model(&s, &s.rest_pose());
    let task = position_task(hand, rest.position(hand) + DVec3::new(-0.1, -0.2, 0.2));
    let mut cfg = CcdConfig::default();
    cfg.iteration.blend = 0.0;
    let mut pose = s.rest_pose();
    let report = ccd::solve(&s, &task, &cfg, &mut pose);
    assert!(!report.converged());
    assert!(
        pose.transforms()
            .iter()
            .zip(s.rest_pose().transforms())
            .all(|(a, b)| a.rotation.angle_between(b.rotation) < 1e-12)
    );
    cfg.iteration.blend = 0.5;
    let mut half = s.rest_pose();
    let report = ccd::solve(&s, &task, &cfg, &mut half);
    let error = report.position_error;
    assert!(error > 1e-3 && error < 0.3, "{error}");
}

#[test]
fn hinge_limits_hold_and_are_reported_active() {
    let mut b = SkeletonBuilder::new();
    b.joint("root", None, Transform::IDENTITY)
        .limited_joint(
            "a",
            Some("root"),
            Transform::IDENTITY,
            hinge(DVec3::Z, -0.3, 0.3),
        )
        .limited_joint(
            "b",
            Some("a"),
            Transform::from_translation(DVec3::X),
            hinge(DVec3::Z, 0.0, 0.5),
        )
        .joint("tip", Some("b"), Transform::from_translation(DVec3::X));
    let s = b.build().unwrap();
    let tip = s.joint("tip").unwrap();
    // Straight up is far outside the limits: best effort, both hinges at their upper bounds.
    let task = position_task(tip, DVec3::new(0.0, 2.0, 0.0));
    let (pose, report) = solve_legal(&s, &task, &CcdConfig::default());
    assert!(!report.converged());
    assert!(
        (pose[s.joint("a").unwrap()]
            .rotation
            .angle_between(DQuat::from_rotation_z(0.3)))
            < 1e-9
    );
    assert!(
        (pose[s.joint("b").unwrap()]
            .rotation
            .angle_between(DQuat::from_rotation_z(0.5)))
            < 1e-9
    );
    assert!(report.limits_active);
    assert_eq!(report.active_limits, vec!["b".to_owned(), "a".to_owned()]);
}

#[test]
fn real_cmu_skeleton_reaches_poses_of_its_own_motion() {
    let Some(doc) = cmu_jump(
        "real_cmu_skeleton_reaches_poses_of_its_own_motion",
        0.056_444,
    ) else {
        return;
    };
    let s = &doc.skeleton;
    let motion = doc.motion.as_ref().unwrap();
    let hand = s
        .joint("LeftHand")
        .expect("CMU skeletons name the left hand LeftHand");
    let mut converged = 0;
    let frames = motion.frames().len();
    for k in 0..40 {
        let truth = &motion.frames()[(k * 37) % frames];
        let target = model(s, truth).position(hand);
        // Start from another frame so the arm has to move.
        let mut pose = motion.frames()[(k * 37 + frames / 2) % frames].clone();
        // Keep the body where the truth has it: solve only the arm (the base is the spine).
        for j in s.joints() {
            if !s.is_ancestor_or_self(s.joint("LeftShoulder").unwrap(), j) {
                pose[j] = truth[j];
            }
        }
        let task = position_task(hand, target);
        let report = ccd::solve(
            s,
            &task,
            &CcdConfig::new(CcdVariant::Classic, CcdDamping::Length, 300),
            &mut pose,
        );
        assert!(pose.is_finite());
        let (measured, _) = measure(s, &task, &pose);
        assert_eq!(measured, report.position_error);
        converged += usize::from(report.converged());
    }
    assert!(converged >= 36, "{converged}/40 converged");
}
