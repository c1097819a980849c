//! Prepared tasks against the one-shot `solve`: the same pose and report bit for bit, frame
//! after frame, for every solver kind (the one-shot path is the independent baseline: full FK,
//! a fresh workspace, the chain rebuilt); the limb cache follows bones that change; a warm
//! prepared closed form allocates nothing.

mod common;

use common::{Draw, Rng, model};
use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{JointId, Skeleton};
use ikarus_solve::{
    FitError, Goal, IkTask, ParameterError, PrepareError, PreparedTask, SolveReport, SolveStatus,
    SolverConfig, solve,
};

fn config(json: &str) -> SolverConfig {
    serde_json::from_str(json).unwrap()
}

/// Goals around the effector's rest frame: `reach` metres and up to 0.8 rad away.
fn random_goal(rng: &mut Rng, skeleton: &Skeleton, joint: JointId, orientation: bool) -> Goal {
    let rest = model(skeleton, &skeleton.rest_pose());
    let offset = DVec3::new(
        rng.range(-0.25, 0.25),
        rng.range(-0.3, 0.2),
        rng.range(-0.1, 0.35),
    );
    Goal {
        position: Some(rest.position(joint) + offset),
        orientation: orientation.then(|| rng.rotation_up_to(0.8) * rest.rotation(joint)),
    }
}

#[test]
fn prepared_tasks_give_the_one_shot_pose_and_report_frame_after_frame() {
    let skeleton = builtin_humanoid();
    let hand = skeleton.joint("leftHand").unwrap();
    let foot = skeleton.joint("rightFoot").unwrap();
    let kinds = [
        (r#"{"kind": "two_bone"}"#, foot),
        (
            r#"{"kind": "two_bone", "pole": [0, 0, 1], "soften": 0.9}"#,
            hand,
        ),
        (r#"{"kind": "two_bone", "mid_axis": [0, -1, 0]}"#, hand),
        (r#"{"kind": "limb7"}"#, hand),
        (r#"{"kind": "limb7"}"#, foot),
        (r#"{"kind": "limb7", "swivel": "middle_of_feasible"}"#, hand),
        (r#"{"kind": "limb7", "swivel": {"fixed": 0.4}}"#, hand),
        (r#"{"kind": "limb7", "elbow_axis": [0, -1, 0]}"#, hand),
        (r#"{"kind": "none"}"#, hand),
        (r#"{"kind": "ccd"}"#, hand),
        (r#"{"kind": "ccd", "variant": "mmd"}"#, foot),
        (r#"{"kind": "lm"}"#, hand),
        (r#"{"kind": "fabrik"}"#, hand),
        (r#"{"kind": "jacobian", "method": "dls"}"#, hand),
        (r#"{"kind": "body"}"#, hand),
        (r#"{"kind": "body"}"#, foot),
    ];
    let mut rng = Rng(42);
    let mut converged = 0;
    for (json, joint) in kinds {
        let solver = config(json);
        for orientation in [false, true] {
            let shape =
                IkTask::from_goal(joint, random_goal(&mut rng, &skeleton, joint, orientation));
            let mut prepared = PreparedTask::new(&skeleton, &shape, &solver).unwrap();
            let mut pose = skeleton.rest_pose();
            let mut reference = skeleton.rest_pose();
            // The same through `solve_in`, which keeps the caller's model pose.
            let mut kept = PreparedTask::new(&skeleton, &shape, &solver).unwrap();
            let mut kept_pose = skeleton.rest_pose();
            let mut kept_model = model(&skeleton, &kept_pose);
            for frame in 0..12 {
                let mut goal = random_goal(&mut rng, &skeleton, joint, orientation);
                if frame == 5 {
                    goal.position = Some(DVec3::new(f64::NAN, 0.0, 0.0));
                }
                *prepared.goal_mut(0) = goal;
                *kept.goal_mut(0) = goal;
                let report = prepared.solve(&mut pose);
                let expected = solve(&skeleton, prepared.task(), &solver, &mut reference);
                assert_eq!(report, expected, "{json} frame {frame}");
                assert_eq!(pose, reference, "{json} frame {frame}");
                let kept_report = kept.solve_in(&mut kept_pose, &mut kept_model);
                assert_eq!(kept_report, expected, "{json} frame {frame}: solve_in");
                assert_eq!(kept_pose, reference, "{json} frame {frame}: solve_in");
                // The model pose kept is the forward kinematics of the new pose, every joint.
                assert_eq!(
                    kept_model,
                    model(&skeleton, &kept_pose),
                    "{json} frame {frame}: model"
                );
                if frame == 5 {
                    assert_eq!(report.status, SolveStatus::InvalidInput);
                }
                converged += usize::from(report.converged());
            }
        }
    }
    // Not vacuous: most frames converge.
    assert!(converged > 60, "{converged}");
}

#[test]
fn limb7_rebuilds_its_limb_when_the_bones_change() {
    let skeleton = builtin_humanoid();
    let [arm, elbow, hand] =
        ["leftUpperArm", "leftLowerArm", "leftHand"].map(|n| skeleton.joint(n).unwrap());
    let solver = config(r#"{"kind": "limb7"}"#);
    let mut rng = Rng(7);
    let shape = IkTask::from_goal(hand, random_goal(&mut rng, &skeleton, hand, true));
    let mut prepared = PreparedTask::new(&skeleton, &shape, &solver).unwrap();
    let mut pose = skeleton.rest_pose();
    let mut reference = skeleton.rest_pose();
    for frame in 0..20 {
        // Bones that stretch and scale every few frames (a cartoon arm).
        if frame % 3 == 0 {
            let upper = skeleton.rest(elbow).translation * rng.range(0.8, 1.3);
            let lower = skeleton.rest(hand).translation * rng.range(0.9, 1.1);
            let scale = DVec3::splat(rng.range(0.9, 1.1));
            for p in [&mut pose, &mut reference] {
                p[elbow].translation = upper;
                p[hand].translation = lower;
                p[arm].scale = scale;
            }
        }
        let goal = random_goal(&mut rng, &skeleton, hand, true);
        *prepared.goal_mut(0) = goal;
        let report = prepared.solve(&mut pose);
        let expected = solve(&skeleton, prepared.task(), &solver, &mut reference);
        assert_eq!(report, expected, "frame {frame}");
        assert_eq!(pose, reference, "frame {frame}");
        if report.converged() {
            let reached = model(&skeleton, &pose).position(hand);
            assert!((reached - goal.position.unwrap()).length() < 1e-9);
        }
    }
}

#[test]
fn shapes_that_do_not_fit_are_refused_once() {
    let skeleton = builtin_humanoid();
    let hand = skeleton.joint("leftHand").unwrap();
    let goal = Goal {
        position: Some(DVec3::new(0.5, 1.2, 0.2)),
        orientation: None,
    };
    let with_base = IkTask {
        base: Some(skeleton.joint("hips").unwrap()),
        ..IkTask::from_goal(hand, goal)
    };
    for json in [r#"{"kind": "limb7"}"#, r#"{"kind": "two_bone"}"#] {
        let error = PreparedTask::new(&skeleton, &with_base, &config(json)).unwrap_err();
        assert!(
            matches!(error, PrepareError::Solver(FitError::Base { .. })),
            "{error}"
        );
    }
    let own_base = IkTask {
        base: Some(hand),
        ..IkTask::from_goal(hand, goal)
    };
    let error = PreparedTask::new(&skeleton, &own_base, &config(r#"{"kind": "ccd"}"#));
    assert!(matches!(error, Err(PrepareError::Task(_))));
    let bad_settings = config(r#"{"kind": "ccd", "iteration": {"blend": 2}}"#);
    let error = PreparedTask::new(&skeleton, &IkTask::from_goal(hand, goal), &bad_settings);
    assert!(
        matches!(
            error,
            Err(PrepareError::Solver(FitError::Parameter(
                ParameterError::OutOfRange { name: "blend", .. }
            )))
        ),
        "{error:?}"
    );
}

#[test]
fn warm_prepared_closed_forms_allocate_nothing() {
    let skeleton = builtin_humanoid();
    let hand = skeleton.joint("leftHand").unwrap();
    let foot = skeleton.joint("leftFoot").unwrap();
    let mut rng = Rng(3);
    for (json, joint, bend) in [
        (r#"{"kind": "limb7"}"#, hand, DVec3::new(-0.1, -0.1, 0.15)),
        (r#"{"kind": "two_bone"}"#, foot, DVec3::new(0.0, 0.15, 0.1)),
        (r#"{"kind": "ccd"}"#, hand, DVec3::new(-0.1, -0.1, 0.15)),
    ] {
        let goal = Goal {
            position: Some(model(&skeleton, &skeleton.rest_pose()).position(joint) + bend),
            orientation: Some(DQuat::IDENTITY),
        };
        let mut prepared =
            PreparedTask::new(&skeleton, &IkTask::from_goal(joint, goal), &config(json)).unwrap();
        let mut pose = skeleton.rest_pose();
        prepared.solve(&mut pose);
        let mut kept_model = model(&skeleton, &pose);
        let mut allocations = 0;
        let mut converged = 0;
        for step in 0..100 {
            // Small moves from a converged pose: no limit is hit, so the report holds no names.
            let mut goal = prepared.task().effectors[0].goal;
            goal.position = goal.position.map(|p| {
                p + DVec3::new(
                    rng.range(-0.01, 0.01),
                    rng.range(-0.01, 0.01),
                    rng.range(-0.01, 0.01),
                )
            });
            goal.orientation = None;
            *prepared.goal_mut(0) = goal;
            let mut report = None;
            // Every other step through `solve_in` (the caller's model pose kept).
            let info = allocation_counter::measure(|| {
                report = Some(if step % 2 == 0 {
                    prepared.solve(&mut pose)
                } else {
                    prepared.solve_in(&mut pose, &mut kept_model)
                });
            });
            if step % 2 == 0 {
                kept_model = model(&skeleton, &pose);
            }
            let report = report.unwrap();
            if report.active_limits.is_empty() {
                allocations += info.count_total;
            }
            converged += usize::from(report.converged());
        }
        assert_eq!(allocations, 0, "{json}");
        assert!(converged >= 90, "{json}: {converged}");
    }
}

#[test]
fn solve_in_keeps_side_branches_of_the_chain_current() {
    // A leg whose hip and knee carry other children (a thigh twist bone, a knee cap with its
    // own child) before and after the chain's next joint in index order: `solve_in` must
    // recompute them too (the soak found the first version leaving them stale).
    use ikarus_core::{SkeletonBuilder, Transform};
    let mut b = SkeletonBuilder::new();
    let at = |x: f64, y: f64, z: f64| Transform::from_translation(DVec3::new(x, y, z));
    b.joint("root", None, at(0.0, 1.0, 0.0))
        .joint("twist", Some("root"), at(0.05, -0.1, 0.0))
        .joint("hip", Some("root"), at(0.1, 0.0, 0.0))
        .joint("thigh_twist", Some("hip"), at(0.0, -0.2, 0.0))
        .joint("knee", Some("hip"), at(0.0, -0.45, 0.0))
        .joint("cap", Some("knee"), at(0.0, 0.0, 0.05))
        .joint("cap_tip", Some("cap"), at(0.0, 0.02, 0.02))
        .joint("ankle", Some("knee"), at(0.0, -0.42, 0.0))
        .joint("toe", Some("ankle"), at(0.0, -0.05, 0.12))
        .joint("shin_twist", Some("knee"), at(0.0, -0.2, 0.0));
    let skeleton = b.build().unwrap();
    let ankle = skeleton.joint("ankle").unwrap();
    let mut rng = Rng(11);
    // The leg is straight at rest: both solvers are given the knee's bending axis.
    for json in [
        r#"{"kind": "two_bone", "mid_axis": [1, 0, 0]}"#,
        r#"{"kind": "limb7", "elbow_axis": [1, 0, 0]}"#,
    ] {
        let rest = model(&skeleton, &skeleton.rest_pose());
        let goal = |rng: &mut Rng| Goal {
            position: Some(
                rest.position(ankle)
                    + DVec3::new(
                        rng.range(-0.2, 0.2),
                        rng.range(0.0, 0.3),
                        rng.range(-0.2, 0.2),
                    ),
            ),
            orientation: None,
        };
        let shape = IkTask::from_goal(ankle, goal(&mut rng));
        let mut prepared = PreparedTask::new(&skeleton, &shape, &config(json)).unwrap();
        let mut pose = skeleton.rest_pose();
        let mut kept = model(&skeleton, &pose);
        let mut moved = 0;
        for frame in 0..20 {
            *prepared.goal_mut(0) = goal(&mut rng);
            let before = kept.position(skeleton.joint("cap_tip").unwrap());
            let report = prepared.solve_in(&mut pose, &mut kept);
            assert_eq!(kept, model(&skeleton, &pose), "{json} frame {frame}");
            let after = kept.position(skeleton.joint("cap_tip").unwrap());
            moved += usize::from(report.converged() && before.distance(after) > 1e-3);
        }
        // Not vacuous: the side branches did move with the chain.
        assert!(moved >= 10, "{json}: {moved}");
    }
}

#[test]
fn solve_many_in_gives_every_character_its_solve_in_result() {
    // A crowd of 21 built-in humanoids (two chunks of 8 lanes and a remainder), each placed and
    // turned apart, frame after frame; every solver kind through `solve_many_in` against the
    // same task prepared separately and solved through `solve_in` character by character.
    let skeleton = builtin_humanoid();
    let hand = skeleton.joint("leftHand").unwrap();
    let foot = skeleton.joint("rightFoot").unwrap();
    let hips = skeleton.joint("hips").unwrap();
    let kinds = [
        (r#"{"kind": "two_bone"}"#, foot),
        (r#"{"kind": "two_bone"}"#, hand),
        (r#"{"kind": "two_bone", "pole": [0, 0, 1]}"#, hand),
        (r#"{"kind": "limb7"}"#, hand),
        (r#"{"kind": "limb7"}"#, foot),
        (r#"{"kind": "limb7", "swivel": "middle_of_feasible"}"#, hand),
        (r#"{"kind": "ccd"}"#, hand),
        (r#"{"kind": "lm"}"#, foot),
    ];
    let mut rng = Rng(77);
    let characters = 21;
    let mut converged = 0;
    for (json, joint) in kinds {
        let solver = config(json);
        let shape = IkTask::from_goal(joint, random_goal(&mut rng, &skeleton, joint, true));
        let mut many = PreparedTask::new(&skeleton, &shape, &solver).unwrap();
        let mut each = PreparedTask::new(&skeleton, &shape, &solver).unwrap();
        let mut poses: Vec<_> = (0..characters)
            .map(|c| {
                let mut pose = skeleton.rest_pose();
                pose[hips].translation += DVec3::new(float(c), 0.0, 0.5 * float(c % 3));
                pose[hips].rotation = DQuat::from_rotation_y(0.3 * float(c));
                pose
            })
            .collect();
        let mut models: Vec<_> = poses.iter().map(|p| model(&skeleton, p)).collect();
        let mut reports = vec![SolveReport::invalid(String::new()); characters];
        for frame in 0..4 {
            let goals: Vec<Goal> = (0..characters)
                .map(|c| {
                    // The goal relative to each character's own placement.
                    let mut goal = random_goal(&mut rng, &skeleton, joint, c % 4 != 1);
                    let hips_frame = models[c][hips] * skeleton.rest(hips).to_affine().inverse();
                    goal.position = goal.position.map(|p| hips_frame.transform_point3(p));
                    let turn = DQuat::from_rotation_y(0.3 * float(c));
                    goal.orientation = goal.orientation.map(|q| turn * q);
                    if frame == 2 && c == 5 {
                        goal.position = Some(DVec3::new(f64::NAN, 0.0, 0.0));
                    }
                    goal
                })
                .collect();
            let mut expected_poses = poses.clone();
            let mut expected_models = models.clone();
            let expected: Vec<SolveReport> = (0..characters)
                .map(|c| {
                    *each.goal_mut(0) = goals[c];
                    each.solve_in(&mut expected_poses[c], &mut expected_models[c])
                })
                .collect();
            many.solve_many_in(&goals, &mut poses, &mut models, &mut reports);
            for c in 0..characters {
                let at = format!("{json} frame {frame} character {c}");
                assert_eq!(reports[c], expected[c], "{at}");
                assert_eq!(poses[c], expected_poses[c], "{at}");
                assert_eq!(models[c], expected_models[c], "{at}");
                // Still the forward kinematics of the pose, every joint.
                assert_eq!(models[c], model(&skeleton, &poses[c]), "{at}");
                converged += usize::from(reports[c].converged());
            }
            if frame == 2 {
                assert_eq!(reports[5].status, SolveStatus::InvalidInput, "{json}");
            }
        }
    }
    // Not vacuous: a good share of the random goals (up to 0.8 rad of turn) converge.
    assert!(converged > kinds.len() * characters * 4 / 6, "{converged}");
}

#[test]
fn warm_solve_many_in_allocates_nothing() {
    let skeleton = builtin_humanoid();
    let hips = skeleton.joint("hips").unwrap();
    for (json, joint, bend) in [
        (
            r#"{"kind": "limb7"}"#,
            "leftHand",
            DVec3::new(-0.1, -0.1, 0.15),
        ),
        (
            r#"{"kind": "two_bone"}"#,
            "leftFoot",
            DVec3::new(0.0, 0.15, 0.1),
        ),
    ] {
        let joint = skeleton.joint(joint).unwrap();
        let characters = 19;
        let mut poses: Vec<_> = (0..characters)
            .map(|c| {
                let mut pose = skeleton.rest_pose();
                pose[hips].translation.x += float(c);
                pose
            })
            .collect();
        let mut models: Vec<_> = poses.iter().map(|p| model(&skeleton, p)).collect();
        let goal = |c: usize, step: f64| Goal {
            position: Some(models_rest(&skeleton, joint) + bend * step + DVec3::X * float(c)),
            orientation: None,
        };
        let shape = IkTask::from_goal(joint, goal(0, 1.0));
        let mut prepared = PreparedTask::new(&skeleton, &shape, &config(json)).unwrap();
        let mut reports = vec![SolveReport::invalid(String::new()); characters];
        let mut goals: Vec<Goal> = (0..characters).map(|c| goal(c, 1.0)).collect();
        // The first frame builds the limb the task keeps.
        prepared.solve_many_in(&goals, &mut poses, &mut models, &mut reports);
        let mut converged = 0;
        let mut allocations = 0;
        for step in 0..20 {
            for (c, g) in goals.iter_mut().enumerate() {
                *g = goal(c, 1.0 + 0.01 * f64::from(step));
            }
            let info = allocation_counter::measure(|| {
                prepared.solve_many_in(&goals, &mut poses, &mut models, &mut reports);
            });
            allocations += info.count_total;
            converged += reports.iter().filter(|r| r.converged()).count();
        }
        assert_eq!(allocations, 0, "{json}");
        assert_eq!(converged, 20 * characters, "{json}");
    }
}

/// The joint's position in the rest pose.
fn models_rest(skeleton: &Skeleton, joint: JointId) -> DVec3 {
    model(skeleton, &skeleton.rest_pose()).position(joint)
}

/// `n` as a float (small counts only).
fn float(n: usize) -> f64 {
    f64::from(u32::try_from(n).unwrap())
}
