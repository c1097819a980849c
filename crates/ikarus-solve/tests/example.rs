//! The example-based solver: the model file format, goals met on postures the model finds
//! likely (ground truth by FK of a sampled posture), limits kept, bad input reported.

mod common;

use std::sync::Arc;

use common::{Rng, assert_legal, count_converged, model};
use glam::DQuat;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{LocalPose, Skeleton};
use ikarus_solve::example_based::{self, ExampleConfig, ModelRef, PostureModel};
use ikarus_solve::{
    Effector, Goal, IkTask, SolveReport, SolveStatus, SolverConfig, measure, solve,
};

fn builtin_model() -> &'static PostureModel {
    example_based::builtin_humanoid().expect("the shipped model parses")
}

/// A standard normal sample (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u = rng.unit().max(1e-12);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.unit()).cos()
}

/// A posture the model finds likely (latent point drawn from its prior, shrunk by `spread`),
/// moved onto the limits.
fn sampled_pose(skeleton: &Skeleton, m: &PostureModel, rng: &mut Rng, spread: f64) -> LocalPose {
    let joints = m.bind(skeleton).unwrap();
    let z: Vec<f64> = (0..m.dims()).map(|_| normal(rng) * spread).collect();
    let mut x = vec![0.0; m.len()];
    m.posture(&z, &mut x);
    let mut pose = skeleton.rest_pose();
    m.decode(&x, &joints, &mut pose);
    skeleton.project_to_limits(&mut pose);
    pose
}

/// The model's mean posture on the skeleton, legal.
/// `solve` under `config` from `start`: the pose, checked legal, and the report.
fn solve_legal(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &SolverConfig,
    start: &LocalPose,
) -> (LocalPose, SolveReport) {
    let mut pose = start.clone();
    let report = solve(skeleton, task, config, &mut pose);
    assert_legal(skeleton, &pose);
    (pose, report)
}

/// The built-in humanoid, the built-in posture model and the model's mean pose on it.
fn humanoid_at_mean() -> (Skeleton, &'static PostureModel, LocalPose) {
    let skeleton = builtin_humanoid();
    let m = builtin_model();
    let start = mean_pose(&skeleton, m);
    (skeleton, m, start)
}

fn mean_pose(skeleton: &Skeleton, m: &PostureModel) -> LocalPose {
    let joints = m.bind(skeleton).unwrap();
    let mut pose = skeleton.rest_pose();
    m.decode(m.offset(), &joints, &mut pose);
    skeleton.project_to_limits(&mut pose);
    pose
}

fn goals_of(skeleton: &Skeleton, pose: &LocalPose, names: &[&str], orient: bool) -> IkTask {
    let world = model(skeleton, pose);
    IkTask {
        effectors: names
            .iter()
            .map(|n| {
                let joint = skeleton.joint(n).unwrap();
                Effector {
                    joint,
                    goal: Goal {
                        position: Some(world.position(joint)),
                        orientation: orient.then(|| world.rotation(joint)),
                    },
                    weight: 1.0,
                }
            })
            .collect(),
        ..IkTask::default()
    }
}

#[test]
fn model_file_round_trips_and_is_checked_on_load() {
    let m = builtin_model();
    let text = m.to_json();
    assert!(text.starts_with("{\n  \"format\": \"ikarus-posture-model\",\n  \"version\": 1,"));
    assert_eq!(&PostureModel::from_json(&text).unwrap(), m);
    assert_eq!(
        text,
        include_str!("../data/humanoid_posture.json"),
        "the shipped file is what the model writes"
    );

    let other_version = text.replacen("\"version\": 1", "\"version\": 2", 1);
    let e = PostureModel::from_json(&other_version).unwrap_err();
    assert!(e.to_string().contains("version 2"), "{e}");

    // One basis row fewer than 3 × joints.
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["basis"].as_array_mut().unwrap().pop();
    let e = PostureModel::from_json(&value.to_string()).unwrap_err();
    assert!(e.to_string().contains("basis"), "{e}");

    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["noise"] = serde_json::json!(-1.0);
    let e = PostureModel::from_json(&value.to_string()).unwrap_err();
    assert!(e.to_string().contains("noise"), "{e}");

    let e =
        PostureModel::from_json("{\n  \"format\": \"ikarus-posture-model\",\n  oops").unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
}

#[test]
fn the_shipped_model_fits_the_builtin_humanoid() {
    let skeleton = builtin_humanoid();
    let m = builtin_model();
    let joints = m.bind(&skeleton).unwrap();
    assert_eq!(joints.len(), m.joints().len());
    assert_eq!(m.dims(), 12);
    assert!(m.frames() > 500);
    // Encoding a decoded posture gives it back.
    let mut rng = Rng(3);
    let z: Vec<f64> = (0..m.dims()).map(|_| normal(&mut rng)).collect();
    let mut x = vec![0.0; m.len()];
    m.posture(&z, &mut x);
    let mut pose = skeleton.rest_pose();
    m.decode(&x, &joints, &mut pose);
    let mut back = vec![0.0; m.len()];
    m.encode(&pose, &joints, &mut back);
    for (a, b) in x.iter().zip(&back) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
}

#[test]
fn goals_of_likely_postures_are_met_from_the_mean_inside_the_limits() {
    let (skeleton, m, start) = humanoid_at_mean();
    let config = SolverConfig::Example(ExampleConfig::default());
    let mut rng = Rng(17);
    let sets: [&[&str]; 3] = [
        &["leftHand", "rightHand"],
        &["leftHand", "rightHand", "head"],
        &["leftHand", "rightHand", "leftFoot", "rightFoot"],
    ];
    let (mut converged, mut total) = (0, 0);
    for _ in 0..20 {
        let truth = sampled_pose(&skeleton, m, &mut rng, 1.0);
        for names in sets {
            let task = goals_of(&skeleton, &truth, names, false);
            let (pose, report) = solve_legal(&skeleton, &task, &config, &start);
            // The report's residual is the FK residual of the returned pose.
            let (position_error, _) = measure(&skeleton, &task, &pose);
            assert_eq!(report.position_error, position_error);
            assert_eq!(
                report.converged(),
                position_error <= task.tolerance.position
            );
            total += 1;
            converged += usize::from(report.converged());
        }
    }
    assert!(
        converged * 100 >= total * 95,
        "{converged} of {total} converged"
    );
}

#[test]
fn orientation_goals_are_met_too() {
    let (skeleton, m, start) = humanoid_at_mean();
    let config = SolverConfig::Example(ExampleConfig::default());
    let converged = count_converged(5, 10, |rng| {
        let truth = sampled_pose(&skeleton, m, rng, 0.7);
        let task = goals_of(&skeleton, &truth, &["leftHand", "head"], true);
        let (pose, report) = solve_legal(&skeleton, &task, &config, &start);
        let (p, r) = measure(&skeleton, &task, &pose);
        assert_eq!((report.position_error, report.rotation_error), (p, r));
        report.converged()
    });
    assert!(converged >= 9, "{converged} of 10 converged");
}

#[test]
fn the_latent_stage_alone_lands_near_the_sampled_posture() {
    // Without refinement the pose stays on the model's manifold: from goals on all four
    // limbs, the joints come back close to the sampled posture (MPJPE well under the mean's).
    let skeleton = builtin_humanoid();
    let m = builtin_model();
    let config = SolverConfig::Example(ExampleConfig {
        refine: false,
        ..ExampleConfig::default()
    });
    let start = mean_pose(&skeleton, m);
    let mut rng = Rng(29);
    let mpjpe = |a: &LocalPose, b: &LocalPose| {
        let (ma, mb) = (model(&skeleton, a), model(&skeleton, b));
        ma.positions()
            .zip(mb.positions())
            .map(|(p, q)| p.distance(q))
            .sum::<f64>()
            / skeleton.len() as f64
    };
    let (mut solved, mut from_mean) = (0.0, 0.0);
    for _ in 0..10 {
        let truth = sampled_pose(&skeleton, m, &mut rng, 1.0);
        let task = goals_of(
            &skeleton,
            &truth,
            &["leftHand", "rightHand", "leftFoot", "rightFoot", "head"],
            false,
        );
        let mut pose = start.clone();
        let report = solve(&skeleton, &task, &config, &mut pose);
        assert!(report.iterations > 0);
        solved += mpjpe(&pose, &truth);
        from_mean += mpjpe(&start, &truth);
    }
    assert!(solved < 0.35 * from_mean, "{solved} vs {from_mean}");
}

#[test]
fn bad_input_is_reported_and_leaves_the_pose() {
    let (skeleton, m, start) = humanoid_at_mean();
    let truth = sampled_pose(&skeleton, m, &mut Rng(1), 1.0);
    let task = goals_of(&skeleton, &truth, &["leftHand"], false);
    let check = |config: &SolverConfig, task: &IkTask, skeleton: &Skeleton, pose: &LocalPose| {
        let mut out = pose.clone();
        let report = solve(skeleton, task, config, &mut out);
        assert_eq!(report.status, SolveStatus::InvalidInput);
        assert_eq!(out.transforms(), pose.transforms());
        report.message.unwrap_or_default()
    };
    // A model named but not loaded.
    let config: SolverConfig =
        serde_json::from_str(r#"{"kind": "example", "model": "walks.json"}"#).unwrap();
    let SolverConfig::Example(c) = &config else {
        panic!()
    };
    assert!(c.model.needs_loading());
    assert!(check(&config, &task, &skeleton, &start).contains("walks.json"));
    // The built-in model on a skeleton without its joints.
    let other = ikarus_core::SkeletonBuilder::new()
        .joint("hips", None, ikarus_core::Transform::IDENTITY)
        .joint(
            "spine",
            Some("hips"),
            ikarus_core::Transform::from_translation(glam::DVec3::Y),
        )
        .build()
        .unwrap();
    let task_other = goals_of(&other, &other.rest_pose(), &["spine"], false);
    let builtin = SolverConfig::Example(ExampleConfig::default());
    let message = check(&builtin, &task_other, &other, &other.rest_pose());
    assert!(message.contains("chest"), "{message}");
    // NaN goals, a base, silly budgets.
    let mut nan = task.clone();
    nan.effectors[0].goal.position = Some(glam::DVec3::NAN);
    check(&builtin, &nan, &skeleton, &start);
    let greedy = SolverConfig::Example(ExampleConfig {
        refine_iterations: u32::MAX,
        ..ExampleConfig::default()
    });
    check(&greedy, &task, &skeleton, &start);
    let noisy = SolverConfig::Example(ExampleConfig {
        goal_noise: f64::NAN,
        ..ExampleConfig::default()
    });
    check(&noisy, &task, &skeleton, &start);
    for (radius, spread) in [
        (f64::NAN, 0.3),
        (-0.1, 0.3),
        (0.15, 0.0),
        (0.15, f64::INFINITY),
    ] {
        let start_terms = SolverConfig::Example(ExampleConfig {
            start_radius: radius,
            start_spread: spread,
            ..ExampleConfig::default()
        });
        let message = check(&start_terms, &task, &skeleton, &start);
        assert!(message.contains("start_"), "{message}");
    }
}

/// A start 2 cm from its goals (a drag, or the last frame of a per-frame solve) is trusted:
/// the solve moves it less than half as far as starting afresh (the model's most likely
/// posture for the goals, which drops the start's part off the model), and meets the goals
/// either way.
#[test]
fn a_start_near_the_goals_is_kept_near_when_trusted() {
    let (skeleton, m, _) = humanoid_at_mean();
    let mut rng = Rng(7);
    for _ in 0..5 {
        // A real posture is off the model's subspace: a likely one, every joint turned a little.
        let mut start = sampled_pose(&skeleton, m, &mut rng, 0.8);
        for j in skeleton.joints() {
            let axis = glam::DVec3::new(normal(&mut rng), normal(&mut rng), normal(&mut rng));
            let turn = DQuat::from_scaled_axis(axis.normalize_or_zero() * 0.15);
            start[j].rotation = (start[j].rotation * turn).normalize();
        }
        skeleton.project_to_limits(&mut start);
        let mut task = goals_of(
            &skeleton,
            &start,
            &["leftHand", "rightHand", "leftFoot"],
            false,
        );
        for e in &mut task.effectors {
            e.goal.position = e
                .goal
                .position
                .map(|p| p + glam::DVec3::new(0.02, 0.0, 0.0));
        }
        let moved = |radius: f64| {
            let config = SolverConfig::Example(ExampleConfig {
                start_radius: radius,
                ..ExampleConfig::default()
            });
            let (pose, report) = solve_legal(&skeleton, &task, &config, &start);
            assert_eq!(report.status, SolveStatus::Converged);
            mpjpe(&skeleton, &pose, &start)
        };
        let (trusted, afresh) = (moved(0.15), moved(0.0));
        assert!(
            trusted < 0.5 * afresh,
            "trusted moved {trusted} m, afresh {afresh} m"
        );
    }
}

/// Mean distance over the joints between two poses' model positions.
fn mpjpe(skeleton: &Skeleton, a: &LocalPose, b: &LocalPose) -> f64 {
    let (ma, mb) = (model(skeleton, a), model(skeleton, b));
    #[allow(clippy::cast_precision_loss)]
    let n = skeleton.len() as f64;
    skeleton
        .joints()
        .map(|j| ma.position(j).distance(mb.position(j)))
        .sum::<f64>()
        / n
}

#[test]
fn a_base_joint_stays_where_it_was_while_the_root_moves() {
    let (skeleton, m, start) = humanoid_at_mean();
    let foot = skeleton.joint("rightFoot").unwrap();
    let before = model(&skeleton, &start);
    let converged = count_converged(41, 5, |rng| {
        let truth = sampled_pose(&skeleton, m, rng, 0.8);
        let mut task = goals_of(&skeleton, &truth, &["leftHand"], false);
        // Lift the goal 10 cm: the hips must move to reach it.
        let goal = task.effectors[0].goal.position.unwrap() + glam::DVec3::new(0.0, 0.1, 0.05);
        task.effectors[0].goal.position = Some(goal);
        task.base = Some(foot);
        let (pose, report) = solve_legal(
            &skeleton,
            &task,
            &SolverConfig::Example(ExampleConfig::default()),
            &start,
        );
        let after = model(&skeleton, &pose);
        assert!(after.position(foot).distance(before.position(foot)) < 1e-9);
        assert!(after.rotation(foot).dot(before.rotation(foot)).abs() > 1.0 - 1e-12);
        let hips = skeleton.joint("hips").unwrap();
        assert!(after.position(hips).distance(before.position(hips)) > 1e-4);
        report.converged()
    });
    assert!(converged >= 4, "{converged} of 5");
}

#[test]
fn unreachable_goals_give_the_closest_pose_not_a_nan() {
    let (skeleton, _, start) = humanoid_at_mean();
    let mut task = goals_of(&skeleton, &start, &["leftHand"], false);
    task.effectors[0].goal.position = Some(glam::DVec3::new(5.0, 1.0, 0.0));
    let (pose, report) = solve_legal(
        &skeleton,
        &task,
        &SolverConfig::Example(ExampleConfig::default()),
        &start,
    );
    assert!(pose.is_finite());
    assert!(!report.converged());
    let (before, _) = measure(&skeleton, &task, &start);
    assert!(
        report.position_error < before,
        "{} vs {before}",
        report.position_error
    );
}

#[test]
fn a_loaded_model_is_used_and_serialises_by_name() {
    let m = Arc::new(builtin_model().clone());
    let config = SolverConfig::Example(ExampleConfig {
        model: ModelRef::loaded("mine.json", m),
        ..ExampleConfig::default()
    });
    let json = serde_json::to_value(&config).unwrap();
    assert_eq!(json["kind"], "example");
    assert_eq!(json["model"], "mine.json");
    let skeleton = builtin_humanoid();
    let start = mean_pose(&skeleton, builtin_model());
    let truth = sampled_pose(&skeleton, builtin_model(), &mut Rng(8), 0.5);
    let task = goals_of(&skeleton, &truth, &["rightHand", "leftFoot"], false);
    let mut pose = start;
    assert!(solve(&skeleton, &task, &config, &mut pose).converged());
    let _ = DQuat::IDENTITY;
}

#[test]
fn a_free_root_moves_the_body_to_goals_out_of_reach_from_where_it_stands() {
    let (skeleton, m, start) = humanoid_at_mean();
    let hips = skeleton.joint("hips").unwrap();
    let free = SolverConfig::Example(ExampleConfig {
        move_root: true,
        ..ExampleConfig::default()
    });
    let fixed = SolverConfig::Example(ExampleConfig::default());
    let mut rng = Rng(77);
    let (mut converged, mut fixed_converged) = (0, 0);
    for _ in 0..8 {
        // A likely posture, the whole body shifted and turned.
        let mut truth = sampled_pose(&skeleton, m, &mut rng, 0.7);
        truth[hips].translation += glam::DVec3::new(0.12, -0.06, 0.1);
        truth[hips].rotation = DQuat::from_rotation_y(0.25) * truth[hips].rotation;
        let task = goals_of(
            &skeleton,
            &truth,
            &["leftHand", "rightHand", "leftFoot", "rightFoot", "head"],
            false,
        );
        let (pose, report) = solve_legal(&skeleton, &task, &free, &start);
        let (p, _) = measure(&skeleton, &task, &pose);
        assert_eq!(report.position_error, p);
        if report.converged() {
            converged += 1;
            // The root went (nearly) where the truth's is.
            let moved = pose[hips].translation.distance(truth[hips].translation);
            assert!(moved < 0.05, "root {moved} m from the truth's");
        }
        let mut still = start.clone();
        let report = solve(&skeleton, &task, &fixed, &mut still);
        assert_eq!(still[hips].translation, start[hips].translation);
        fixed_converged += usize::from(report.converged());
    }
    assert!(
        converged >= 7,
        "{converged} of 8 converged with the root free"
    );
    assert!(
        fixed_converged < converged,
        "{fixed_converged} converged with the root fixed"
    );
    // A base joint and a free root both move the root: rejected.
    let mut task = goals_of(&skeleton, &start, &["leftHand"], false);
    task.base = skeleton.joint("leftFoot");
    let mut pose = start.clone();
    assert_eq!(
        solve(&skeleton, &task, &free, &mut pose).status,
        SolveStatus::InvalidInput
    );
}
