//! The full-body solver per frame: the built-in humanoid, six 6-D effectors (hips, head,
//! hands, feet) on a crouching, reaching motion of 32 frames, each frame solved from the
//! last one's result (as a game or a tracker runs it), through `solve` with
//! `{"kind": "body"}` and through a `PreparedTask`; Levenberg–Marquardt (default settings) on
//! the same tasks beside it.

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_core::glam::DQuat;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::body::BodyConfig;
use ikarus_solve::lm::LmConfig;
use ikarus_solve::{Effector, Goal, IkTask, PreparedTask, SolverConfig, solve};
use std::hint::black_box;

const FRAMES: usize = 32;
/// Frame `k` of the motion: the hips down and turned, knees, arms and elbows bent by amounts
/// that go round once over the clip (every joint inside its limits).
fn frame(skeleton: &Skeleton, k: usize) -> LocalPose {
    let phase = std::f64::consts::TAU * k as f64 / FRAMES as f64;
    let (s, c) = phase.sin_cos();
    let joint = |n: &str| skeleton.joint(n).expect("VRM name");
    let mut pose = skeleton.rest_pose();
    pose[joint("hips")].translation.y -= 0.08 + 0.05 * s;
    pose[joint("hips")].rotation = DQuat::from_rotation_y(0.2 * c);
    for side in ["left", "right"] {
        pose[joint(&format!("{side}UpperLeg"))].rotation = DQuat::from_rotation_x(-0.4 - 0.2 * s);
        pose[joint(&format!("{side}LowerLeg"))].rotation = DQuat::from_rotation_x(0.7 + 0.4 * s);
        pose[joint(&format!("{side}Foot"))].rotation = DQuat::from_rotation_x(-0.3 - 0.2 * s);
    }
    pose[joint("leftUpperArm")].rotation = DQuat::from_rotation_z(-0.8 - 0.3 * c);
    pose[joint("rightUpperArm")].rotation = DQuat::from_rotation_z(0.8 + 0.3 * s);
    pose[joint("leftLowerArm")].rotation = DQuat::from_rotation_y(-0.6 - 0.3 * s);
    pose[joint("rightLowerArm")].rotation = DQuat::from_rotation_y(0.6 + 0.3 * c);
    pose[joint("spine")].rotation = DQuat::from_rotation_x(0.1 * s);
    assert!(skeleton.limit_violation(&pose).is_none());
    pose
}

fn tasks(skeleton: &Skeleton) -> Vec<IkTask> {
    let mut model = ModelPose::new(skeleton);
    (0..FRAMES)
        .map(|k| {
            fk::forward_kinematics(skeleton, &frame(skeleton, k), &mut model);
            IkTask::from_effectors(
                HumanoidBone::BODY_ENDS
                    .iter()
                    .map(|b| {
                        let j = skeleton.joint(b.vrm_name()).expect("VRM name");
                        Effector::new(j, Goal::from_frame(&model, j))
                    })
                    .collect(),
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let skeleton = builtin_humanoid();
    let tasks = tasks(&skeleton);
    for (name, config) in [
        ("body", SolverConfig::Body(BodyConfig::default())),
        ("lm", SolverConfig::Lm(LmConfig::default())),
    ] {
        let mut pose = frame(&skeleton, FRAMES - 1);
        if std::env::var("BODY_REPORT").is_ok() {
            let mut p = pose.clone();
            for task in &tasks {
                println!("{name}: {:?}", solve(&skeleton, task, &config, &mut p));
            }
        }
        let mut k = 0;
        c.bench_function(&format!("body_frame/{name}"), |b| {
            b.iter(|| {
                let report = solve(&skeleton, &tasks[k % FRAMES], &config, &mut pose);
                k += 1;
                black_box(report)
            });
        });
    }
    // As a game runs it: the task prepared once (the body found once), the goals set each
    // frame.
    let config = SolverConfig::Body(BodyConfig::default());
    let mut prepared = PreparedTask::new(&skeleton, &tasks[0], &config).expect("a body task");
    let mut pose = frame(&skeleton, FRAMES - 1);
    let mut k = 0;
    c.bench_function("body_frame/body_prepared", |b| {
        b.iter(|| {
            for (goal, e) in prepared.goals_mut().zip(&tasks[k % FRAMES].effectors) {
                *goal = e.goal;
            }
            k += 1;
            black_box(prepared.solve(&mut pose))
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
