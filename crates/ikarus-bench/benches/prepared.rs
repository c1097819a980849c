//! Prepared tasks at game scale: 1,000 built-in humanoids, each with its own pose
//! and root placement, and four limbs solved per frame — limb7 arms (hand position and
//! orientation, default swivel policy) and two-bone legs (foot position and orientation) —
//! through four [`PreparedTask`]s shared by all characters, as one thread of a game would run
//! them. The same frame with classic CCD (default settings) on the same four effectors; the
//! one-shot `solve` on the closed forms for contrast; the closed forms through `solve_in`
//! (each character keeps its model pose) and `solve_many_in` (each limb of every character at
//! once, in SIMD lanes); and the kernels alone
//! (`two_bone::solve`, `Limb7::solve_pose`) on the same limbs, for the per-limb ratio.
//!
//! The goals move every frame (FK of a legal limb motion: arms bent in front of the body, feet
//! lifting and landing, so every goal is reachable); the benchmark cycles through 16
//! precomputed frames.
//!
//! `solve_many_in` gives every character `solve_in`'s pose, model pose and report bit for bit.
//!
//! ## What explains the numbers
//!
//! - Why lanes pay: per character the scalar path is a serial chain of dependent products (FK,
//!   swing–twist tests, residual) of ~4,500 instructions; lanes run 8 such chains side by side.
//! - Left per character in the lanes: the gather/scatter of ~40 values, the limb7 elbow angle
//!   (`atan2`, `sin_cos`), the rotation error's `atan2` and the subtree's FK (toes, fingers).
//! - Through `solve` a limb takes 5,040 instructions (arm 5,650, leg 4,170) against the kernels'
//!   727, 6.9×, and the wall-time ratio follows; `solve_in` takes 4,532.
//! - 6.3% of arm solves (0.4% of legs', not broken down) go scalar: every arm one is a shoulder on
//!   its limit's boundary (goals from poses projected onto limits), where the exact test decides.
//! - The lanes use the one `Limb7` the task keeps (other bone lengths go scalar); two-bone with a
//!   pole, hint, softening or blending, and limb7 with another swivel policy, run one by one.
//! - `solve_in` and the skinning bench keep 1,000 model poses (3.4 MB) and swing by 25% from run
//!   to run: memory traffic that `solve`'s one scratch model does not have.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::limb7::Limb7Chain;
use ikarus_solve::two_bone::{Pole, TwoBoneChain, TwoBoneSettings};
use ikarus_solve::{Goal, IkTask, PreparedTask, SolveReport, SolverConfig, solve};
use std::hint::black_box;

const CHARACTERS: usize = 1000;
const FRAMES: usize = 16;
const LIMBS: [&str; 4] = ["leftHand", "rightHand", "leftFoot", "rightFoot"];

/// Per frame, per character, per limb: the goal (model space).
struct Scene {
    skeleton: Skeleton,
    joints: [JointId; 4],
    poses: Vec<LocalPose>,
    goals: Vec<Vec<[Goal; 4]>>,
}

fn scene() -> Scene {
    let skeleton = builtin_humanoid();
    let joints = LIMBS.map(|n| skeleton.joint(n).expect("VRM name"));
    let hips = skeleton.joint("hips").expect("VRM name");
    let mut poses = Vec::with_capacity(CHARACTERS);
    for c in 0..CHARACTERS {
        let mut pose = skeleton.rest_pose();
        let place = DVec3::new((c % 40) as f64 * 1.5, 0.0, (c / 40) as f64 * 1.5);
        let turn = DQuat::from_rotation_y(c as f64 * 0.37);
        pose[hips].translation = place + DVec3::new(0.0, 0.95 - 0.03 * (c % 3) as f64, 0.0);
        pose[hips].rotation = turn;
        poses.push(pose);
    }
    // Goals made by FK of a legal, moving limb pose (so every goal is reachable): arms bent in
    // front of the body, feet lifting and landing.
    let limb_joints = |names: [&str; 3]| names.map(|n| skeleton.joint(n).expect("VRM name"));
    let arms = [
        limb_joints(["leftUpperArm", "leftLowerArm", "leftHand"]),
        limb_joints(["rightUpperArm", "rightLowerArm", "rightHand"]),
    ];
    let legs = [
        limb_joints(["leftUpperLeg", "leftLowerLeg", "leftFoot"]),
        limb_joints(["rightUpperLeg", "rightLowerLeg", "rightFoot"]),
    ];
    let legal = |j: JointId, q: DQuat| skeleton.rest(j).rotation * skeleton.limit(j).project(q);
    let mut model = ModelPose::new(&skeleton);
    let goals = (0..FRAMES)
        .map(|f| {
            let phase = f as f64 / FRAMES as f64 * std::f64::consts::TAU;
            poses
                .iter()
                .enumerate()
                .map(|(c, pose)| {
                    let t = phase + c as f64 * 0.1;
                    let mut source = pose.clone();
                    for (side, [s, e, w]) in [(1.0, arms[0]), (-1.0, arms[1])] {
                        source[s].rotation = legal(
                            s,
                            DQuat::from_rotation_z(-side * (0.9 + 0.2 * t.sin()))
                                * DQuat::from_rotation_y(side * (0.5 + 0.2 * t.cos())),
                        );
                        source[e].rotation =
                            legal(e, DQuat::from_rotation_y(-side * (0.9 + 0.3 * t.sin())));
                        source[w].rotation = legal(w, DQuat::from_rotation_z(0.2 * t.cos()));
                    }
                    for (shift, [s, e, w]) in [(0.0, legs[0]), (std::f64::consts::PI, legs[1])] {
                        let lift = 0.5 + 0.5 * (t + shift).sin();
                        source[s].rotation = legal(s, DQuat::from_rotation_x(-0.6 * lift));
                        source[e].rotation = legal(e, DQuat::from_rotation_x(1.0 * lift));
                        source[w].rotation = legal(w, DQuat::from_rotation_x(-0.3 * lift));
                    }
                    fk::forward_kinematics(&skeleton, &source, &mut model);
                    joints.map(|j| Goal {
                        position: Some(model.position(j)),
                        orientation: Some(model.rotation(j)),
                    })
                })
                .collect()
        })
        .collect();
    Scene {
        skeleton,
        joints,
        poses,
        goals,
    }
}

fn config(json: &str) -> SolverConfig {
    serde_json::from_str(json).expect("solver JSON")
}

/// The four prepared limbs: `arms` for the hands, `legs` for the feet.
fn limbs<'s>(scene: &'s Scene, arms: &SolverConfig, legs: &SolverConfig) -> Vec<PreparedTask<'s>> {
    (0..4)
        .map(|k| {
            let solver = if k < 2 { arms } else { legs };
            let shape = IkTask::from_goal(scene.joints[k], scene.goals[0][0][k]);
            PreparedTask::new(&scene.skeleton, &shape, solver).expect("the limbs fit")
        })
        .collect()
}

/// One frame of every character through the prepared limbs; the number converged.
fn frame(
    limbs: &mut [PreparedTask<'_>],
    scene: &Scene,
    poses: &mut [LocalPose],
    f: usize,
) -> usize {
    let mut converged = 0;
    for (pose, goals) in poses.iter_mut().zip(&scene.goals[f]) {
        for (limb, goal) in limbs.iter_mut().zip(goals) {
            *limb.goal_mut(0) = *goal;
            converged += usize::from(limb.solve(pose).converged());
        }
    }
    converged
}

fn bench_prepared(c: &mut Criterion) {
    let scene = scene();
    let mut group = c.benchmark_group("prepared");
    group.throughput(Throughput::Elements((CHARACTERS * 4) as u64));
    group.sample_size(20);

    let closed = (
        config(r#"{"kind": "limb7"}"#),
        config(r#"{"kind": "two_bone"}"#),
    );
    let ccd = config(r#"{"kind": "ccd"}"#);
    for (name, arms, legs) in [("closed_forms", &closed.0, &closed.1), ("ccd", &ccd, &ccd)] {
        let mut state = None;
        let mut f = 0;
        group.bench_function(format!("{name}_1000_characters_x4_limbs_per_frame"), |b| {
            // One warm-up pass over the frames (not timed; criterion calls this closure several
            // times), which also tells how many solves converge.
            let (limbs, poses) = state.get_or_insert_with(|| {
                let mut limbs = limbs(&scene, arms, legs);
                let mut poses = scene.poses.clone();
                let mut converged = 0;
                for f in 0..FRAMES {
                    converged += frame(&mut limbs, &scene, &mut poses, f);
                }
                eprintln!(
                    "prepared/{name}: {converged} of {} limb solves converged over {FRAMES} frames",
                    FRAMES * CHARACTERS * 4
                );
                (limbs, poses)
            });
            b.iter(|| {
                f = (f + 1) % FRAMES;
                black_box(frame(limbs, &scene, poses, f))
            });
        });
    }

    bench_solve_in(&mut group, &scene, &closed);

    // The one-shot `solve` on the same closed-form limbs, 100 characters (for contrast).
    let mut poses = scene.poses.clone();
    group.throughput(Throughput::Elements(400));
    bench_frames(
        &mut group,
        "closed_forms_one_shot_solve_100_characters_x4_limbs",
        |f| {
            let mut converged = 0;
            for (pose, goals) in poses.iter_mut().zip(&scene.goals[f]).take(100) {
                for (k, goal) in goals.iter().enumerate() {
                    let solver = if k < 2 { &closed.0 } else { &closed.1 };
                    let report = solve(
                        &scene.skeleton,
                        &IkTask::from_goal(scene.joints[k], *goal),
                        solver,
                        pose,
                    );
                    converged += usize::from(report.converged());
                }
            }
            converged
        },
    );
    group.finish();
    // The poses the prepared closed forms leave after a pass over the frames: the kernels
    // then solve frame 0's goals from them, as the prepared path does.
    let mut limbs = limbs(&scene, &closed.0, &closed.1);
    let mut poses = scene.poses.clone();
    for f in 0..FRAMES {
        frame(&mut limbs, &scene, &mut poses, f);
    }
    bench_kernels(c, &scene, &poses);
}

/// The closed-form frame through `solve_in` (each character keeps its model pose), and what
/// `solve` costs a game that needs the model poses afterwards (full FK per character).
fn bench_solve_in(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    scene: &Scene,
    closed: &(SolverConfig, SolverConfig),
) {
    // The same closed-form frame through `solve_in`: each character keeps its model pose (a
    // game's animation pass computes it for skinning); the limbs read their chains' ancestors
    // from it and recompute only the chain and its subtree.
    {
        let mut limbs = limbs(scene, &closed.0, &closed.1);
        let mut poses = scene.poses.clone();
        for f in 0..FRAMES {
            frame(&mut limbs, scene, &mut poses, f);
        }
        let mut models: Vec<ModelPose> = poses
            .iter()
            .map(|pose| {
                let mut model = ModelPose::new(&scene.skeleton);
                fk::forward_kinematics(&scene.skeleton, pose, &mut model);
                model
            })
            .collect();
        // What `solve` costs a game that skins after the IK: the same frame through `solve`,
        // then each character's model pose by full forward kinematics.
        let mut plain_limbs = self::limbs(scene, &closed.0, &closed.1);
        let mut plain_poses = poses.clone();
        let mut plain_models = models.clone();
        bench_frames(
            group,
            "closed_forms_then_fk_for_skinning_1000_characters_x4_limbs_per_frame",
            |f| {
                let mut converged = 0;
                for ((pose, model), goals) in plain_poses
                    .iter_mut()
                    .zip(&mut plain_models)
                    .zip(&scene.goals[f])
                {
                    for (limb, goal) in plain_limbs.iter_mut().zip(goals) {
                        *limb.goal_mut(0) = *goal;
                        converged += usize::from(limb.solve(pose).converged());
                    }
                    fk::forward_kinematics(&scene.skeleton, pose, model);
                }
                converged
            },
        );
        bench_solve_many_in(group, scene, closed, (&poses, &models));
        group.throughput(Throughput::Elements((CHARACTERS * 4) as u64));
        bench_frames(
            group,
            "closed_forms_solve_in_1000_characters_x4_limbs_per_frame",
            |f| {
                let mut converged = 0;
                for ((pose, model), goals) in poses.iter_mut().zip(&mut models).zip(&scene.goals[f])
                {
                    for (limb, goal) in limbs.iter_mut().zip(goals) {
                        *limb.goal_mut(0) = *goal;
                        converged += usize::from(limb.solve_in(pose, model).converged());
                    }
                }
                converged
            },
        );
    }
}

/// Criterion's time per frame of the scene as `<group>/<name>`: `frame(f)` runs frame `f`
/// (cycling through the scene's frames) and returns how many limb solves converged.
fn bench_frames(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    mut frame: impl FnMut(usize) -> usize,
) {
    let mut f = 0;
    group.bench_function(name, |b| {
        b.iter(|| {
            f = (f + 1) % FRAMES;
            black_box(frame(f))
        });
    });
}

/// The closed-form frame through `solve_many_in` (each limb of every character at once), and
/// each kind of limb alone, through `solve_many_in` and (the legs) through `solve_in`, for the
/// per-limb figures to hold against the kernels. `poses` and `models` are where the frames
/// start.
fn bench_solve_many_in(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    scene: &Scene,
    closed: &(SolverConfig, SolverConfig),
    (poses, models): (&[LocalPose], &[ModelPose]),
) {
    // The same frame through `solve_many_in`: each limb of every character at once.
    let mut many_limbs = limbs(scene, &closed.0, &closed.1);
    let mut many_poses = poses.to_vec();
    let mut many_models = models.to_vec();
    let mut goals = vec![Goal::default(); CHARACTERS];
    let mut reports = vec![SolveReport::invalid(String::new()); CHARACTERS];
    // Every limb of every character at once, then the arms alone (limb7) and the legs alone
    // (two-bone): limbs `0..2` are the arms, `2..4` the legs.
    for (name, range) in [
        (
            "closed_forms_solve_many_in_1000_characters_x4_limbs_per_frame",
            0..4,
        ),
        ("arms_solve_many_in_1000_characters_x2", 0..2),
        ("legs_solve_many_in_1000_characters_x2", 2..4),
    ] {
        group.throughput(Throughput::Elements((CHARACTERS * range.len()) as u64));
        bench_frames(group, name, |f| {
            let mut converged = 0;
            let limbs = many_limbs.iter_mut().enumerate();
            for (k, limb) in limbs.skip(range.start).take(range.len()) {
                for (goal, frame) in goals.iter_mut().zip(&scene.goals[f]) {
                    *goal = frame[k];
                }
                limb.solve_many_in(&goals, &mut many_poses, &mut many_models, &mut reports);
                converged += reports.iter().filter(|r| r.converged()).count();
            }
            converged
        });
    }
    // The legs through `solve_in` too: the per-limb figure to hold against the two-bone
    // kernel.
    bench_frames(group, "legs_solve_in_1000_characters_x2", |f| {
        let mut converged = 0;
        for ((pose, model), frame) in many_poses
            .iter_mut()
            .zip(&mut many_models)
            .zip(&scene.goals[f])
        {
            for (k, limb) in many_limbs.iter_mut().enumerate().skip(2) {
                *limb.goal_mut(0) = frame[k];
                converged += usize::from(limb.solve_in(pose, model).converged());
            }
        }
        converged
    });
    group.throughput(Throughput::Elements((CHARACTERS * 4) as u64));
}

/// The closed forms alone on the same limbs — every character's legs and arms of one frame,
/// from the poses the prepared pass left — the kernel time per limb the prepared path is
/// compared with. The kernels' inputs (limb frames, targets, current swivels) are computed
/// before timing; cycling through all 1,000 characters gives the kernels the same mix of
/// branches and the same cache traffic for their inputs as the prepared path.
fn bench_kernels(c: &mut Criterion, scene: &Scene, poses: &[LocalPose]) {
    let skeleton = &scene.skeleton;
    let mut model = ModelPose::new(skeleton);
    let parents = |j: JointId| {
        let mid = skeleton.parent(j).expect("limb");
        [skeleton.parent(mid).expect("limb"), mid, j]
    };
    let settings = TwoBoneSettings::default();
    let mut legs = Vec::with_capacity(2 * CHARACTERS);
    let mut arms = Vec::with_capacity(2 * CHARACTERS);
    for (pose, goals) in poses.iter().zip(&scene.goals[0]) {
        fk::forward_kinematics(skeleton, pose, &mut model);
        for (foot, goal) in scene.joints.iter().zip(goals).skip(2) {
            let [start, mid, end] = parents(*foot);
            let chain = TwoBoneChain::from_hinge(skeleton, start, mid, end).expect("knee hinge");
            let target = goal.position.expect("goal");
            legs.push(chain.input(skeleton, pose, &model, target, Pole::Vector(DVec3::Z)));
        }
        for (k, goal) in goals.iter().enumerate().take(2) {
            let [shoulder, elbow, wrist] = parents(scene.joints[k]);
            let chain = Limb7Chain::new(skeleton, shoulder, elbow, wrist).expect("elbow hinge");
            let limb = chain.limb(skeleton, pose).expect("limb");
            let limb_frame = chain.model_from_limb(skeleton, pose, &model);
            let target = limb_frame
                .inverse()
                .transform_point3(goal.position.expect("goal"));
            let orientation = goal.orientation.expect("goal");
            let swivel = chain.current_swivel(skeleton, pose).expect("swivel");
            arms.push((limb, target, orientation, swivel));
        }
    }
    let mut group = c.benchmark_group("prepared_kernels");
    group.throughput(Throughput::Elements(legs.len() as u64));
    group.bench_function("two_bone_solve_1000_characters_x2_legs", |b| {
        b.iter(|| {
            for input in &legs {
                black_box(ikarus_solve::two_bone::solve(black_box(input), &settings));
            }
        });
    });
    group.throughput(Throughput::Elements(arms.len() as u64));
    group.bench_function("limb7_solve_pose_1000_characters_x2_arms", |b| {
        b.iter(|| {
            for (limb, target, orientation, swivel) in &arms {
                let _ = black_box(limb.solve_pose(
                    black_box(*target),
                    *orientation,
                    black_box(*swivel),
                    Some(0.5),
                ));
            }
        });
    });
    group.finish();
}

criterion_group!(benches, bench_prepared);
criterion_main!(benches);
