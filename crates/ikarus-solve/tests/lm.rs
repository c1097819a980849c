//! Levenberg–Marquardt: goals from random legal poses are met (checked by forward
//! kinematics), hinge boxes hold, restarts are counted, bad input gets a status, the time
//! budget stops a solve, and a warm workspace gives the same answer as a fresh one.

mod common;

use common::{
    LEFT_ARM, Rng, assert_legal, humanoid_joints, humanoid_left_hand, joints, model, pose_task,
    position_task, random_pose,
};
use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{SkeletonBuilder, Transform};
use ikarus_solve::lm::{self, LmConfig, LmWorkspace};
use ikarus_solve::{Effector, Goal, IkTask, SolveStatus, SolverConfig, Tolerance, measure, solve};
use ikarus_testdata::limits::hinge;

/// The humanoid's left hand to 6-D goals made by random legal arm poses.
#[test]
fn humanoid_hand_reaches_six_d_goals_from_random_legal_poses() {
    let (s, arm, hand) = humanoid_left_hand(&LEFT_ARM);
    let mut rng = Rng(11);
    let mut workspace = LmWorkspace::new();
    let mut config = LmConfig::default();
    config.iteration.max_iterations = 1000;
    let mut converged = 0;
    for _ in 0..200 {
        let goal_pose = random_pose(&s, &arm, &mut rng, 1.2);
        let m = model(&s, &goal_pose);
        let task = pose_task(&m, hand).with_tolerance(Tolerance::new(1e-6, 1e-6));
        let mut pose = s.rest_pose();
        let report = lm::solve_with(&s, &task, &config, &mut workspace, &mut pose);
        assert_legal(&s, &pose);
        let (p, r) = measure(&s, &task, &pose);
        assert_eq!((p, r), (report.position_error, report.rotation_error));
        if report.status == SolveStatus::Converged {
            assert!(p <= 1e-6 && r <= 1e-6);
            converged += 1;
        }
    }
    // Measured: 199 of 200 (goals with spine and shoulder joints on their limits converge
    // linearly; see the lm module docs).
    assert!(converged >= 198, "{converged} of 200");
}

/// Both hands and the head at once, with the hips as the base joint (the path runs through
/// the root), goals from one random legal whole-body pose.
#[test]
fn several_effectors_through_the_root_meet_their_goals() {
    let (s, moving) = humanoid_joints(&[
        "spine",
        "chest",
        "upperChest",
        "neck",
        "head",
        "leftShoulder",
        "leftUpperArm",
        "leftLowerArm",
        "leftHand",
        "rightShoulder",
        "rightUpperArm",
        "rightLowerArm",
        "rightHand",
        "rightUpperLeg",
        "rightLowerLeg",
        "rightFoot",
    ]);
    let effectors = joints(&s, &["leftHand", "rightHand", "head"]);
    let base = s.joint("rightFoot").unwrap();
    let mut rng = Rng(5);
    let mut solved = 0;
    for _ in 0..40 {
        let goal_pose = random_pose(&s, &moving, &mut rng, 0.6);
        let start = s.rest_pose();
        // Goals relative to the planted right foot: express the goal pose with the foot where
        // the start pose has it.
        let (mg, ms) = (model(&s, &goal_pose), model(&s, &start));
        let align = ms[base] * mg[base].inverse();
        let task = IkTask::from_effectors(
            effectors
                .iter()
                .map(|&e| {
                    Effector::new(
                        e,
                        Goal::from_position(align.transform_point3(mg.position(e))),
                    )
                })
                .collect(),
        )
        .with_base(base);
        let mut pose = start.clone();
        let mut config = LmConfig::default();
        config.iteration.max_iterations = 1000;
        let report = solve(&s, &task, &SolverConfig::Lm(config), &mut pose);
        assert_legal(&s, &pose);
        let after = model(&s, &pose);
        assert!((after.position(base) - ms.position(base)).length() < 1e-9);
        assert!(after.rotation(base).angle_between(ms.rotation(base)) < 1e-6);
        solved += usize::from(report.status == SolveStatus::Converged);
    }
    // Measured: 39 of 40.
    assert!(solved >= 38, "{solved} of 40");
}

/// A two-hinge planar arm whose elbow may not bend past 0.5 rad: a target that needs more is
/// approached with the elbow exactly on its stop, reported as an active limit.
#[test]
fn hinge_boxes_hold_and_the_binding_stop_is_reported() {
    let mut b = SkeletonBuilder::new();
    let hinge = |min, max| hinge(DVec3::Z, min, max);
    b.joint("base", None, Transform::IDENTITY);
    b.limited_joint(
        "shoulder",
        Some("base"),
        Transform::IDENTITY,
        hinge(-3.0, 3.0),
    );
    b.limited_joint(
        "elbow",
        Some("shoulder"),
        Transform::from_translation(DVec3::X),
        hinge(0.0, 0.5),
    );
    b.joint("hand", Some("elbow"), Transform::from_translation(DVec3::X));
    let s = b.build().unwrap();
    let hand = s.joint("hand").unwrap();
    let elbow = s.joint("elbow").unwrap();
    // Needs an elbow angle of about 2 rad: out of the box.
    let target = DVec3::new(0.3, 0.9, 0.0);
    let mut pose = s.rest_pose();
    let report = solve(
        &s,
        &position_task(hand, target),
        &SolverConfig::Lm(LmConfig::default()),
        &mut pose,
    );
    assert_legal(&s, &pose);
    assert_ne!(report.status, SolveStatus::Converged);
    let angle = 2.0 * pose[elbow].rotation.z.atan2(pose[elbow].rotation.w);
    assert!((angle - 0.5).abs() < 1e-9, "elbow at {angle}");
    assert!(report.active_limits.contains(&"elbow".to_owned()));
    // The best legal answer: the elbow on its stop, the shoulder aiming the hand as close as
    // it can; the hand then lies on the circle of radius |1 + e^{0.5i}| about the shoulder.
    let reach = (DVec3::X + DQuat::from_rotation_z(0.5) * DVec3::X).length();
    let m = model(&s, &pose);
    assert!((m.position(hand).length() - reach).abs() < 1e-9);
    let closest = (target.length() - reach).abs();
    assert!(
        (report.position_error - closest).abs() < 1e-6,
        "{report:?} vs {closest}"
    );
}

#[test]
fn unreachable_and_invalid_input_get_a_status_and_never_nan() {
    let s = builtin_humanoid();
    let hand = s.joint("leftHand").unwrap();
    let mut pose = s.rest_pose();
    let far = position_task(hand, DVec3::new(5.0, 1.4, 0.0));
    let report = solve(&s, &far, &SolverConfig::Lm(LmConfig::default()), &mut pose);
    assert_eq!(report.status, SolveStatus::Unreachable);
    assert!(pose.is_finite());
    assert_legal(&s, &pose);
    let start = measure(&s, &far, &s.rest_pose()).0;
    assert!(report.position_error <= start);

    for bad in [f64::NAN, f64::INFINITY] {
        let mut pose = s.rest_pose();
        let task = position_task(hand, DVec3::new(bad, 1.0, 0.0));
        let report = solve(&s, &task, &SolverConfig::Lm(LmConfig::default()), &mut pose);
        assert_eq!(report.status, SolveStatus::InvalidInput);
        assert_eq!(pose, s.rest_pose());
    }
    let config = LmConfig {
        lambda: 0.0,
        ..LmConfig::default()
    };
    let mut pose = s.rest_pose();
    let report = lm::solve(&s, &position_task(hand, DVec3::Y), &config, &mut pose);
    assert_eq!(report.status, SolveStatus::InvalidInput);
    assert!(report.message.unwrap().contains("lambda"));
}

/// A target out of reach makes the solve stall and restart until its budget is spent: with
/// 1,000 sweeps and 100 restarts allowed, the restarts are counted; a 1 µs time budget stops
/// it after its first sweep.
#[test]
fn restarts_are_counted_and_the_time_budget_stops_the_solve() {
    let s = builtin_humanoid();
    let hand = s.joint("leftHand").unwrap();
    let far = position_task(hand, DVec3::new(0.0, 3.0, 2.0));
    let mut config = LmConfig::default();
    config.iteration.max_iterations = 1000;
    config.iteration.restarts = 100;
    let mut pose = s.rest_pose();
    let report = lm::solve(&s, &far, &config, &mut pose);
    assert!(report.restarts > 10, "{report:?}");
    assert!(report.iterations > 100, "{report:?}");
    config.iteration.time_budget_us = Some(1.0);
    let mut pose = s.rest_pose();
    let budgeted = lm::solve(&s, &far, &config, &mut pose);
    assert!(budgeted.iterations <= 1, "{budgeted:?}");
    assert!(pose.is_finite());
}

#[test]
fn a_warm_workspace_gives_the_same_answer_as_a_fresh_one() {
    let (s, arm, hand) = humanoid_left_hand(&LEFT_ARM);
    let mut rng = Rng(3);
    let mut warm = LmWorkspace::new();
    let config = LmConfig::default();
    for _ in 0..20 {
        let m = model(&s, &random_pose(&s, &arm, &mut rng, 1.0));
        let task = position_task(hand, m.position(hand));
        let (mut a, mut b) = (s.rest_pose(), s.rest_pose());
        let ra = lm::solve_with(&s, &task, &config, &mut warm, &mut a);
        let rb = lm::solve(&s, &task, &config, &mut b);
        assert_eq!(a, b);
        assert_eq!(ra.iterations, rb.iterations);
    }
}

/// A warm solve's allocations (task validation, the report) do not grow with the number of
/// sweeps: the all-hinge fast path (the iiwa-like chain) and the general path (the humanoid
/// arm's ball joints) allocate the same for 1 sweep as for 60.
#[test]
fn sweeps_allocate_nothing_once_warm() {
    let arm = ikarus_testdata::rigs::chain(
        7,
        |_| DVec3::Z * 0.3,
        |i| hinge(if i % 2 == 0 { DVec3::Z } else { DVec3::Y }, -2.9, 2.9),
        DVec3::Z * 0.1,
    );
    let humanoid = builtin_humanoid();
    for (s, tip) in [(&arm, "tip"), (&humanoid, "leftHand")] {
        let joint = s.joint(tip).unwrap();
        // Out of reach, with a zero tolerance: every sweep runs.
        let mut task = position_task(joint, DVec3::new(9.0, 9.0, 9.0));
        task.tolerance.position = 0.0;
        let mut workspace = LmWorkspace::new();
        let mut run = |sweeps: u32| {
            let mut config = LmConfig::default();
            config.iteration.max_iterations = sweeps;
            config.iteration.restarts = 0;
            config.iteration.min_step = 0.0;
            let mut pose = s.rest_pose();
            lm::solve_with(s, &task, &config, &mut workspace, &mut pose);
            let mut pose = s.rest_pose();
            let mut iterations = 0;
            let info = allocation_counter::measure(|| {
                iterations =
                    lm::solve_with(s, &task, &config, &mut workspace, &mut pose).iterations;
            });
            assert_eq!(iterations, sweeps);
            info.count_total
        };
        // The report's names of active limits may differ between the two (they are the only
        // allocations besides validation): the count must not grow with the sweeps.
        let (one, many) = (run(1), run(60));
        assert!(
            many <= one,
            "{tip}: {one} allocations with 1 sweep, {many} with 60"
        );
        assert!(one <= 3, "{tip}: {one} allocations");
    }
}

#[test]
fn a_partial_iteration_object_keeps_lm_defaults() {
    // A task file that sets only the budget must not reset the stall window and restarts to
    // the generic loop defaults (found from Python: 3 became 16).
    let config: ikarus_solve::SolverConfig =
        serde_json::from_str(r#"{"kind": "lm", "iteration": {"max_iterations": 100}}"#).unwrap();
    let ikarus_solve::SolverConfig::Lm(lm) = config else {
        panic!("lm")
    };
    let defaults = ikarus_solve::lm::LmConfig::default().iteration;
    assert_eq!(lm.iteration.max_iterations, 100);
    assert_eq!(lm.iteration.stall_window, defaults.stall_window);
    assert_eq!(lm.iteration.restarts, defaults.restarts);
    assert_eq!(lm.iteration.stall_window, 3);
    // Unknown fields are still refused.
    assert!(
        serde_json::from_str::<ikarus_solve::SolverConfig>(
            r#"{"kind": "lm", "iteration": {"max_iteration": 100}}"#
        )
        .is_err()
    );
    // Round trip: what serializes reads back the same.
    let text = serde_json::to_string(&ikarus_solve::SolverConfig::Lm(lm)).unwrap();
    assert_eq!(
        serde_json::from_str::<ikarus_solve::SolverConfig>(&text).unwrap(),
        ikarus_solve::SolverConfig::Lm(lm)
    );
}
