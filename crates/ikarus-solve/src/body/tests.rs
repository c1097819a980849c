//! The full-body solver on the built-in humanoid; every number by forward kinematics.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};

use super::*;
use crate::{Effector, Goal, SolveStatus, SolverConfig, solve};

fn joint(skeleton: &Skeleton, name: &str) -> JointId {
    skeleton.joint(name).unwrap()
}

fn model_of(skeleton: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    model
}

/// A 6-D effector on `name` at its frame in `model`.
fn held(skeleton: &Skeleton, model: &ModelPose, name: &str) -> Effector {
    let j = joint(skeleton, name);
    Effector::new(j, Goal::from_frame(model, j))
}

fn body(config: BodyConfig) -> SolverConfig {
    SolverConfig::Body(config)
}

/// A crouch with the arms down and bent: the hips 12 cm lower and turned, knees and elbows
/// bent about their hinges.
fn crouch(skeleton: &Skeleton) -> LocalPose {
    let mut pose = skeleton.rest_pose();
    let hips = joint(skeleton, "hips");
    pose[hips].translation.y -= 0.12;
    pose[hips].rotation = DQuat::from_rotation_y(0.2);
    for side in ["left", "right"] {
        pose[joint(skeleton, &format!("{side}UpperLeg"))].rotation = DQuat::from_rotation_x(-0.5);
        pose[joint(skeleton, &format!("{side}LowerLeg"))].rotation = DQuat::from_rotation_x(0.9);
        pose[joint(skeleton, &format!("{side}Foot"))].rotation = DQuat::from_rotation_x(-0.3);
    }
    pose[joint(skeleton, "leftUpperArm")].rotation = DQuat::from_rotation_z(-1.0);
    pose[joint(skeleton, "rightUpperArm")].rotation = DQuat::from_rotation_z(1.0);
    pose[joint(skeleton, "leftLowerArm")].rotation = DQuat::from_rotation_y(-0.7);
    pose[joint(skeleton, "rightLowerArm")].rotation = DQuat::from_rotation_y(0.7);
    assert!(skeleton.limit_violation(&pose).is_none());
    pose
}

/// The effectors on `names` held 6-D at `truth`'s frames, solved from the rest pose: the
/// task, the solved pose's report and model frames.
fn solved_from_rest(
    skeleton: &Skeleton,
    truth: &ModelPose,
    names: &[&str],
) -> (IkTask, SolveReport, ModelPose, LocalPose) {
    let task = IkTask {
        effectors: names.iter().map(|n| held(skeleton, truth, n)).collect(),
        ..IkTask::default()
    };
    let mut pose = skeleton.rest_pose();
    let report = solve(skeleton, &task, &body(BodyConfig::default()), &mut pose);
    (task, report, model_of(skeleton, &pose), pose)
}

/// Every goal of `task` met by `model` (1e-4 m, 1e-3 rad) and `pose` inside every limit.
fn assert_met(skeleton: &Skeleton, task: &IkTask, model: &ModelPose, pose: &LocalPose) {
    for e in &task.effectors {
        let (p, q) = (e.goal.position.unwrap(), e.goal.orientation.unwrap());
        let name = skeleton.name(e.joint);
        assert!(model.position(e.joint).distance(p) < 1e-4, "{name}");
        assert!(model.rotation(e.joint).angle_between(q) < 1e-3, "{name}");
    }
    assert!(skeleton.limit_violation(pose).is_none());
}

#[test]
fn goals_from_a_legal_pose_are_met_exactly() {
    let skeleton = builtin_humanoid();
    let truth = model_of(&skeleton, &crouch(&skeleton));
    let names = ["hips", "leftHand", "rightHand", "leftFoot", "rightFoot"];
    let (task, report, model, pose) = solved_from_rest(&skeleton, &truth, &names);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    assert_met(&skeleton, &task, &model, &pose);
}

/// The feet held where they stand, the left hand 30 cm past its reach to the side.
fn reach_task(skeleton: &Skeleton) -> (IkTask, LocalPose) {
    let pose = skeleton.rest_pose();
    let model = model_of(skeleton, &pose);
    let hand = joint(skeleton, "leftHand");
    let mut effectors = vec![
        held(skeleton, &model, "leftFoot"),
        held(skeleton, &model, "rightFoot"),
    ];
    effectors.push(Effector {
        joint: hand,
        goal: Goal {
            position: Some(model.position(hand) + DVec3::new(0.3, 0.0, 0.0)),
            orientation: None,
        },
        weight: 1.0,
    });
    (
        IkTask {
            effectors,
            ..IkTask::default()
        },
        pose,
    )
}

#[test]
fn a_hand_past_reach_draws_the_pelvis_and_spine_and_the_feet_hold() {
    let skeleton = builtin_humanoid();
    let (task, start) = reach_task(&skeleton);
    let mut pose = start.clone();
    let report = solve(&skeleton, &task, &body(BodyConfig::default()), &mut pose);
    let model = model_of(&skeleton, &pose);
    let before = model_of(&skeleton, &start);
    let hips = joint(&skeleton, "hips");
    let moved = model.position(hips).distance(before.position(hips));
    let chest = joint(&skeleton, "upperChest");
    let bent = model.rotation(chest).angle_between(before.rotation(chest));
    println!("{report:?}; hips moved {moved:.3} m, upper chest turned {bent:.3} rad");
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    assert!(moved > 0.01, "the pelvis stayed");
    assert!(bent > 0.05, "the spine stayed");
    for foot in &task.effectors[..2] {
        let (p, q) = (foot.goal.position.unwrap(), foot.goal.orientation.unwrap());
        assert!(model.position(foot.joint).distance(p) < 1e-3);
        assert!(model.rotation(foot.joint).angle_between(q) < 1e-3);
    }
    assert!(skeleton.limit_violation(&pose).is_none());
}

#[test]
fn a_hand_far_past_reach_never_takes_a_pinned_foot_off_its_goal() {
    // Goals 0.7 to 1.5 m past the arm's reach, forward and out, with `hold_pinned_feet`: the
    // body stage alone would turn the pelvis past what the left hip's limit lets the leg
    // follow (measured without it: the left foot 16.5 cm off its goal at 1 m past); the move
    // is scaled back until both feet are on their goals, by FK.
    let skeleton = builtin_humanoid();
    let (mut task, start) = reach_task(&skeleton);
    let before = model_of(&skeleton, &start);
    let (shoulder, hand) = (
        joint(&skeleton, "leftUpperArm"),
        joint(&skeleton, "leftHand"),
    );
    let arm = before.position(hand).distance(before.position(shoulder));
    let out = DVec3::new(0.6, -0.2, 0.8).normalize();
    for past in [0.7, 1.0, 1.5] {
        task.effectors[2].goal.position = Some(before.position(shoulder) + out * (arm + past));
        let mut pose = start.clone();
        let config = BodyConfig {
            hold_pinned_feet: true,
            ..BodyConfig::default()
        };
        let report = solve(&skeleton, &task, &body(config), &mut pose);
        let model = model_of(&skeleton, &pose);
        for foot in &task.effectors[..2] {
            let off = model
                .position(foot.joint)
                .distance(foot.goal.position.unwrap());
            assert!(off < 1e-4, "{past} m past: a foot {off} m off; {report:?}");
        }
        assert_eq!(report.status, SolveStatus::Unreachable, "{report:?}");
        let hips = joint(&skeleton, "hips");
        assert!(model.position(hips).distance(before.position(hips)) > 0.01);
        assert!(skeleton.limit_violation(&pose).is_none());
    }
}

#[test]
fn a_reachable_hand_swivels_its_elbow_inside_the_limits() {
    // From the T-pose, a hand goal in front of the chest and lower (the viewer's first drag):
    // the current side of the bend turns the upper arm past its limit (measured before the
    // swivel for position goals: unreachable, the hand 3 cm off its goal); a swivel inside
    // the limits reaches it exactly.
    let skeleton = builtin_humanoid();
    let (mut task, start) = reach_task(&skeleton);
    task.effectors[2].goal.position = Some(DVec3::new(0.457, 1.173, 0.021));
    let mut pose = start.clone();
    let report = solve(&skeleton, &task, &body(BodyConfig::default()), &mut pose);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    assert!(!report.limits_active, "{report:?}");
    let model = model_of(&skeleton, &pose);
    let hand = joint(&skeleton, "leftHand");
    assert!(
        model
            .position(hand)
            .distance(DVec3::new(0.457, 1.173, 0.021))
            < 1e-4
    );
    assert!(skeleton.limit_violation(&pose).is_none());
}

/// The reach of [`reach_task`] on the built-in humanoid, solved from its start with the left
/// hand's entry in one of the config's per-bone weight maps (`pull`, `blend`) set to 0: the
/// skeleton, the start, the solved pose and the report.
fn reach_with_left_hand_at_zero(
    weights: fn(&mut BodyConfig) -> &mut std::collections::BTreeMap<String, f64>,
) -> (Skeleton, LocalPose, LocalPose, SolveReport) {
    let skeleton = builtin_humanoid();
    let (task, start) = reach_task(&skeleton);
    let mut config = BodyConfig::default();
    weights(&mut config).insert("leftHand".into(), 0.0);
    let mut pose = start.clone();
    let report = solve(&skeleton, &task, &body(config), &mut pose);
    (skeleton, start, pose, report)
}

#[test]
fn without_pull_the_body_stays_and_the_hand_falls_short() {
    let (skeleton, start, pose, report) = reach_with_left_hand_at_zero(|c| &mut c.pull);
    assert_eq!(report.status, SolveStatus::Unreachable, "{report:?}");
    let hips = joint(&skeleton, "hips");
    let spine = joint(&skeleton, "spine");
    assert!(pose[hips].translation.distance(start[hips].translation) < 1e-3);
    assert!(pose[spine].rotation.angle_between(start[spine].rotation) < 1e-6);
    assert!(
        (report.position_error - 0.3).abs() < 2e-3,
        "{}",
        report.position_error
    );
}

#[test]
fn a_blend_of_zero_keeps_the_input() {
    let (skeleton, start, pose, report) = reach_with_left_hand_at_zero(|c| &mut c.blend);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    let hand = joint(&skeleton, "leftHand");
    let (a, b) = (model_of(&skeleton, &pose), model_of(&skeleton, &start));
    assert!(a.position(hand).distance(b.position(hand)) < 1e-4);
}

#[test]
fn bad_input_is_refused_and_the_pose_kept() {
    let skeleton = builtin_humanoid();
    let (task, start) = reach_task(&skeleton);
    let run = |task: &IkTask, config: BodyConfig| {
        let mut pose = start.clone();
        let report = solve(&skeleton, task, &body(config), &mut pose);
        assert_eq!(pose, start);
        report
    };
    let mut nan = task.clone();
    nan.effectors[2].goal.position = Some(DVec3::NAN);
    assert_eq!(
        run(&nan, BodyConfig::default()).status,
        SolveStatus::InvalidInput
    );
    let mut elbow = task.clone();
    elbow.effectors[2].joint = joint(&skeleton, "leftLowerArm");
    let report = run(&elbow, BodyConfig::default());
    assert_eq!(report.status, SolveStatus::InvalidInput);
    assert!(report.message.unwrap().contains("leftLowerArm"));
    let mut config = BodyConfig::default();
    config.pull.insert("leftHnad".into(), 1.0);
    let report = run(&task, config);
    assert!(report.message.unwrap().contains("leftHnad"));
    let config = BodyConfig {
        spine_stiffness: f64::NAN,
        ..BodyConfig::default()
    };
    assert_eq!(run(&task, config).status, SolveStatus::InvalidInput);
    // A chain without a humanoid's names.
    let mut builder = ikarus_core::SkeletonBuilder::new();
    builder
        .joint("a", None, ikarus_core::Transform::IDENTITY)
        .joint(
            "b",
            Some("a"),
            ikarus_core::Transform::from_translation(DVec3::Y),
        );
    let chain = builder.build().unwrap();
    let mut pose = chain.rest_pose();
    let task = IkTask {
        effectors: vec![Effector {
            joint: joint(&chain, "b"),
            goal: Goal {
                position: Some(DVec3::X),
                orientation: None,
            },
            weight: 1.0,
        }],
        ..IkTask::default()
    };
    let report = solve(&chain, &task, &body(BodyConfig::default()), &mut pose);
    assert_eq!(report.status, SolveStatus::InvalidInput);
}

#[test]
fn small_goal_steps_give_small_pose_steps() {
    // The left hand's goal goes round a circle of 35 cm about the shoulder's front in 1 cm
    // steps, in and out of reach; each frame starts from the last one's result. A joint
    // turning by more than a few degrees for a centimetre is a flip or a pop.
    let skeleton = builtin_humanoid();
    let (mut task, mut pose) = reach_task(&skeleton);
    let config = body(BodyConfig::default());
    let centre = DVec3::new(0.45, 1.3, 0.25);
    let mut largest = 0.0_f64;
    for k in 0..220 {
        let angle = f64::from(k) * 0.01 / 0.35;
        let goal = centre + DVec3::new(angle.cos(), angle.sin(), 0.0) * 0.35;
        task.effectors[2].goal.position = Some(goal);
        let last = pose.clone();
        let report = solve(&skeleton, &task, &config, &mut pose);
        assert!(pose.is_finite() && report.position_error.is_finite());
        // Frame 0 jumps from the rest pose to the circle.
        for j in skeleton.joints().filter(|_| k > 0) {
            largest = largest.max(pose[j].rotation.angle_between(last[j].rotation));
        }
    }
    println!(
        "largest joint turn in a frame: {:.2}°",
        largest.to_degrees()
    );
    assert!(largest < 4f64.to_radians(), "{}", largest.to_degrees());
}

#[test]
fn the_head_turns_to_its_goal_the_neck_taking_half() {
    let skeleton = builtin_humanoid();
    let start = skeleton.rest_pose();
    let model = model_of(&skeleton, &start);
    let head = joint(&skeleton, "head");
    let goal = DQuat::from_rotation_y(0.6) * model.rotation(head);
    let task = IkTask {
        effectors: vec![Effector {
            joint: head,
            goal: Goal {
                position: None,
                orientation: Some(goal),
            },
            weight: 1.0,
        }],
        ..IkTask::default()
    };
    let mut pose = start.clone();
    let report = solve(&skeleton, &task, &body(BodyConfig::default()), &mut pose);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    let neck = joint(&skeleton, "neck");
    let turned = pose[neck].rotation.angle_between(start[neck].rotation);
    assert!((turned - 0.3).abs() < 1e-6, "{turned}");
}

#[test]
fn a_placed_head_turned_past_its_own_range_is_met_by_the_neck_and_spine() {
    // A legal pose whose head looks 75° to the side of the chest (the neck turned 40° of
    // its ±50°, the head 35° of its ±40°): hips, head, hands and feet held 6-D from the rest
    // pose. The head has a position goal, so the head stage turns it by itself; before the
    // body stage saw a head's turn past its range, the head stopped at its 40° and missed
    // its goal by 35°. Now the spine and neck take the rest: every goal met, every joint
    // inside its limit, checked by FK.
    let skeleton = builtin_humanoid();
    let mut truth = crouch(&skeleton);
    truth[joint(&skeleton, "neck")].rotation = DQuat::from_rotation_y(40f64.to_radians());
    truth[joint(&skeleton, "head")].rotation = DQuat::from_rotation_y(35f64.to_radians());
    assert!(skeleton.limit_violation(&truth).is_none());
    let truth = model_of(&skeleton, &truth);
    let names = HumanoidBone::BODY_ENDS.map(HumanoidBone::vrm_name);
    let (task, report, model, pose) = solved_from_rest(&skeleton, &truth, &names);
    let head = joint(&skeleton, "head");
    let off = model.rotation(head).angle_between(truth.rotation(head));
    assert_eq!(
        report.status,
        SolveStatus::Converged,
        "{report:?}, head {:.2}° off",
        off.to_degrees()
    );
    assert_met(&skeleton, &task, &model, &pose);
}

#[test]
fn a_prepared_body_task_solves_as_solve_does() {
    // The same frames through `PreparedTask` (the body found once) and through `solve`:
    // the same bits, frame after frame, each frame from the last one's result.
    let skeleton = builtin_humanoid();
    let (mut task, start) = reach_task(&skeleton);
    let config = body(BodyConfig::default());
    let mut prepared = crate::PreparedTask::new(&skeleton, &task, &config).unwrap();
    let (mut a, mut b) = (start.clone(), start);
    for k in 0..20 {
        let goal = DVec3::new(0.9 - 0.02 * f64::from(k), 1.2, 0.2);
        task.effectors[2].goal.position = Some(goal);
        prepared.goal_mut(2).position = Some(goal);
        let one = solve(&skeleton, &task, &config, &mut a);
        let two = prepared.solve(&mut b);
        assert_eq!(one, two);
        assert_eq!(a, b);
    }
    let mut bad = task.clone();
    bad.effectors[0].joint = joint(&skeleton, "leftLowerArm");
    assert!(crate::PreparedTask::new(&skeleton, &bad, &config).is_err());
}

#[test]
fn the_scratch_keeps_the_forward_kinematics_of_the_solved_pose() {
    // `BodyScratch::model` is handed to callers in place of their own FK: after every kind of
    // solve (reachable, far past reach with the back-off of `hold_pinned_feet`, a head turn),
    // it equals the FK of the returned pose to the bit.
    let skeleton = builtin_humanoid();
    let (mut task, start) = reach_task(&skeleton);
    let before = model_of(&skeleton, &start);
    let shoulder = joint(&skeleton, "leftUpperArm");
    let head = joint(&skeleton, "head");
    task.effectors.push(Effector::new(
        head,
        Goal {
            position: None,
            orientation: Some(DQuat::from_rotation_y(0.4) * before.rotation(head)),
        },
    ));
    for (past, hold) in [(-0.2, false), (0.3, false), (1.0, true)] {
        let arm = before
            .position(task.effectors[2].joint)
            .distance(before.position(shoulder));
        task.effectors[2].goal.position =
            Some(before.position(shoulder) + DVec3::new(0.6, -0.2, 0.8).normalize() * (arm + past));
        let config = BodyConfig {
            hold_pinned_feet: hold,
            ..BodyConfig::default()
        };
        let rig = BodyRig::new(&skeleton, &config).unwrap();
        let mut scratch = BodyScratch::new(&skeleton, &rig);
        let mut pose = start.clone();
        let report = rig.solve_with(&skeleton, &task, &config, &mut pose, &mut scratch);
        assert_ne!(report.status, SolveStatus::InvalidInput);
        assert_eq!(
            scratch.model(),
            &model_of(&skeleton, &pose),
            "{past} m past"
        );
    }
}

#[test]
fn a_solve_changes_only_the_driven_joints() {
    // `BodyRig::driven` is what an engine writes back: every other joint leaves a solve to the
    // bit as it came, whatever the task (hands within and far past reach, 6-D goals, a head
    // turn, a moved chest and hips), and the driven ones are the body's, not its fingers.
    let skeleton = builtin_humanoid();
    let start = crouch(&skeleton);
    let before = model_of(&skeleton, &start);
    let rig = BodyRig::new(&skeleton, &BodyConfig::default()).unwrap();
    let driven = rig.driven();
    let names: Vec<&str> = driven.iter().map(|&j| skeleton.name(j)).collect();
    for name in [
        "hips",
        "neck",
        "head",
        "leftShoulder",
        "rightLowerArm",
        "leftFoot",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(
        skeleton.len() > driven.len(),
        "the humanoid's fingers or toes are not driven: {names:?}"
    );
    assert!(driven.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
    let mut changed = vec![false; skeleton.len()];
    for (k, reach) in [0.1, 0.5, 1.2].into_iter().enumerate() {
        let mut effectors: Vec<Effector> = ["leftFoot", "rightFoot", "rightHand"]
            .map(|n| held(&skeleton, &before, n))
            .to_vec();
        let hand = joint(&skeleton, "leftHand");
        let head = joint(&skeleton, "head");
        let chest = joint(&skeleton, "upperChest");
        let turn = DQuat::from_rotation_y(0.3 * (k as f64 + 1.0));
        effectors.push(Effector::new(
            hand,
            Goal {
                position: Some(before.position(hand) + DVec3::new(reach, 0.2, 0.3)),
                orientation: Some(turn * before.rotation(hand)),
            },
        ));
        effectors.push(Effector::new(
            head,
            Goal {
                position: None,
                orientation: Some(turn * before.rotation(head)),
            },
        ));
        effectors.push(Effector::new(
            chest,
            Goal::from_position(before.position(chest) + DVec3::new(0.0, -0.05, 0.04)),
        ));
        let task = IkTask::from_effectors(effectors);
        let mut pose = start.clone();
        let report = rig.solve(&skeleton, &task, &BodyConfig::default(), &mut pose);
        assert_ne!(report.status, SolveStatus::InvalidInput, "{report:?}");
        for j in skeleton.joints() {
            if pose[j] != start[j] {
                changed[j.index()] = true;
                assert!(
                    driven.contains(&j),
                    "{} changed but is not driven ({reach} m)",
                    skeleton.name(j)
                );
            }
        }
    }
    // Not a vacuous list: the solves moved the hips, the spine, a clavicle and both arms.
    for name in [
        "hips",
        "leftShoulder",
        "leftLowerArm",
        "rightUpperArm",
        "neck",
    ] {
        assert!(
            changed[joint(&skeleton, name).index()],
            "{name} never moved"
        );
    }
}

#[test]
fn a_swapped_model_holds_the_solve_and_the_next_solve_is_unchanged() {
    // `swap_model` hands the solve's frames over without a copy; the buffers then hold the
    // caller's old frames, which must not leak into the next solve.
    let skeleton = builtin_humanoid();
    let (task, start) = reach_task(&skeleton);
    let config = BodyConfig::default();
    let rig = BodyRig::new(&skeleton, &config).unwrap();
    let mut scratch = BodyScratch::new(&skeleton, &rig);
    let mut mine = model_of(&skeleton, &crouch(&skeleton));
    let mut first = start.clone();
    rig.solve_with(&skeleton, &task, &config, &mut first, &mut scratch);
    scratch.swap_model(&mut mine);
    assert_eq!(mine, model_of(&skeleton, &first));
    let mut second = start.clone();
    let report = rig.solve_with(&skeleton, &task, &config, &mut second, &mut scratch);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    assert_eq!(first, second);
    assert_eq!(scratch.model(), &mine);
}

#[test]
fn a_straight_leg_bends_about_its_preferred_angle() {
    // The humanoid without limits, legs straight at rest: the left foot's goal 25 cm higher
    // makes the knee bend. Without a preferred angle it bends by the convention (forward,
    // about the body's left); with one about the rest frame's Z it bends sideways (the knee
    // off the hip–ankle line along X); with one about X as the convention does. Every time
    // the foot is met, and the preferred angle is checked with the configuration.
    let skeleton = builtin_humanoid().without_limits();
    let start = skeleton.rest_pose();
    let before = model_of(&skeleton, &start);
    let (hip, knee, foot) = (
        joint(&skeleton, "leftUpperLeg"),
        joint(&skeleton, "leftLowerLeg"),
        joint(&skeleton, "leftFoot"),
    );
    let goal = before.position(foot) + DVec3::new(0.0, 0.25, 0.05);
    let task = IkTask::from_effectors(vec![
        Effector::new(foot, Goal::from_position(goal)),
        held(&skeleton, &before, "rightFoot"),
    ]);
    let offset = |preferred: Option<[f64; 3]>| {
        let mut config = BodyConfig::default();
        config.pull.insert("leftFoot".into(), 0.0);
        if let Some(angles) = preferred {
            config
                .preferred_angles
                .insert("leftLowerLeg".into(), angles);
        }
        let mut pose = start.clone();
        let report = solve(&skeleton, &task, &body(config), &mut pose);
        assert_eq!(
            report.status,
            SolveStatus::Converged,
            "{preferred:?}: {report:?}"
        );
        let model = model_of(&skeleton, &pose);
        assert!(model.position(foot).distance(goal) < 1e-4);
        let (h, k, f) = (
            model.position(hip),
            model.position(knee),
            model.position(foot),
        );
        (k - h).reject_from(f - h)
    };
    let plain = offset(None);
    assert!(plain.z.abs() > 5.0 * plain.x.abs(), "convention: {plain}");
    let sideways = offset(Some([0.0, 0.0, 0.4]));
    assert!(
        sideways.x.abs() > 5.0 * sideways.z.abs(),
        "about Z: {sideways}"
    );
    assert!(sideways.length() > 0.05, "{sideways}");
    let forward = offset(Some([0.4, 0.0, 0.0]));
    assert!(
        (forward.normalize() - plain.normalize()).length() < 1e-6
            || (forward.normalize() + plain.normalize()).length() < 1e-6,
        "about X: {forward} vs {plain}"
    );
    for (name, angles) in [
        ("leftHand", [0.0, 0.0, 0.4]),
        ("leftLowerLeg", [0.0; 3]),
        ("leftLowerLeg", [f64::NAN, 0.0, 0.0]),
    ] {
        let mut config = BodyConfig::default();
        config.preferred_angles.insert(name.into(), angles);
        assert!(
            matches!(
                BodyRig::new(&skeleton, &config),
                Err(BodyRigError::PreferredAngle { .. })
            ),
            "{name} {angles:?}"
        );
    }
    let mut config = BodyConfig::default();
    config
        .preferred_angles
        .insert("knee".into(), [0.3, 0.0, 0.0]);
    assert!(matches!(
        BodyRig::new(&skeleton, &config),
        Err(BodyRigError::UnknownBone { .. })
    ));
}

#[test]
fn a_free_elbow_takes_the_hands_roll_and_lands_where_the_pose_had_it() {
    // The humanoid without limits (free elbows, as motion-capture skeletons have them): an
    // arm lowered and bent, its forearm rolled 70° at the elbow, the wrist unturned (as a
    // skeleton that carries the forearm's roll in the elbow records it). Its hand's 6-D goal,
    // solved from the rest pose with the body held: the hand is met, the elbow lands where
    // the pose had it and the wrist keeps no roll about the forearm. (Before, the swivel that
    // turned the wrist least put the elbow on another side.)
    let skeleton = builtin_humanoid().without_limits();
    let [shoulder, elbow, hand] =
        ["leftUpperArm", "leftLowerArm", "leftHand"].map(|n| joint(&skeleton, n));
    let mut truth = skeleton.rest_pose();
    let turn = |j: JointId, q: DQuat| skeleton.rest(j).rotation * q;
    truth[shoulder].rotation = turn(
        shoulder,
        DQuat::from_rotation_z(-1.1) * DQuat::from_rotation_y(0.5),
    );
    let forearm = skeleton.rest(hand).translation.normalize();
    let bend_axis = forearm.cross(DVec3::Z).normalize();
    truth[elbow].rotation = turn(
        elbow,
        DQuat::from_axis_angle(bend_axis, 1.4) * DQuat::from_axis_angle(forearm, 1.2),
    );
    let want = model_of(&skeleton, &truth);
    let start = skeleton.rest_pose();
    let before = model_of(&skeleton, &start);
    let task = IkTask::from_effectors(vec![
        Effector::new(hand, Goal::from_frame(&want, hand)),
        held(&skeleton, &before, "hips"),
    ]);
    let mut config = BodyConfig::default();
    config.pull.insert("leftHand".into(), 0.0);
    let mut pose = start.clone();
    let report = solve(&skeleton, &task, &body(config), &mut pose);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    let model = model_of(&skeleton, &pose);
    assert!(model.position(hand).distance(want.position(hand)) < 1e-4);
    assert!(model.rotation(hand).angle_between(want.rotation(hand)) < 1e-3);
    // The elbow bent 80° off the shoulder–hand line: a wrong side is decimetres off.
    let off_line = |m: &ModelPose| {
        let (s, e, h) = (m.position(shoulder), m.position(elbow), m.position(hand));
        (e - s).reject_from(h - s).length()
    };
    assert!(off_line(&want) > 0.1, "{}", off_line(&want));
    let error = model.position(elbow).distance(want.position(elbow));
    assert!(error < 1e-3, "elbow {error} m off");
    // The wrist's rotation off its rest has no part about the forearm.
    let off_rest = pose[hand].rotation * skeleton.rest(hand).rotation.conjugate();
    assert!(off_rest.xyz().dot(forearm).abs() < 1e-9, "{off_rest}");
}
