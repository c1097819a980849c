//! The full-body solver per frame: the built-in humanoid, six 6-D effectors (hips, head,
//! hands, feet) on a crouching, reaching motion of 32 frames, each frame solved from the
//! last one's result (as a game or a tracker runs it), through `solve` with
//! `{"kind": "body"}` and through a `PreparedTask`; Levenberg–Marquardt (default settings) on
//! the same tasks beside it. `body_grounded` is a game's frame: the animation's pose in, its
//! FK, `FrameGrounder` on a ±4 cm bumpy heightfield, the six goals, the prepared solve starting
//! from the grounder's frames (`PreparedTask::solve_in`); a quarter of its frames (half before
//! the grounder foresaw the shin) ask the right ankle past its limit, and the knee's swivel is
//! then searched for the nearest fit.
//!
//! ## What explains the numbers
//!
//! - Instructions per frame (93,600 prepared) come from callgrind, which the machine's load does
//!   not change: `valgrind --tool=callgrind` on the bench binary with
//!   `--profile-time 3 body_frame/body_prepared`, inclusive instructions of
//!   the body solve (`solve_from`) over its call count (callgrind counts each byte of a `rep stos`
//!   zeroing as one; `perf` shows those at about 1% of the time).
//! - 566 µs at first. Then: the pelvis placed by a hips goal before the descent; the descent
//!   stopped at 10 µm (3 iterations, not 10); an analytic Jacobian (checked against central
//!   differences) instead of 18 forward differences.
//! - 58 → 22 µs prepared: the limb swivel in closed form — the twist that turns the wrist or ankle
//!   least, `φ = 2 atan2(n·Q_v, Q_w)`, checked against a scan of 20,001 swivels — with the pattern
//!   search kept only for a swivel whose joints would leave their limits, and the solve's buffers
//!   (`BodyScratch`) kept by the prepared task.
//! - 22 → 8.8 µs prepared (199,800 → 97,200 instructions), measured step by step with `perf`:
//!   the limbs' two-bone solve read from the model pose in hand instead of a full FK per limb
//!   (−9%); the damped step as `−Jᵀ(JJᵀ + μI)⁻¹r` over the non-zero rows by a fixed-size
//!   Cholesky (9×9 for six effectors) instead of nalgebra's 18×18 `JᵀJ` (−20%); the accepted
//!   evaluation kept for the next linearisation and the spine walked once per evaluation
//!   (−14%); the body stage met within a third of the task's tolerance instead of 10 µm (1.8
//!   iterations a frame, was 2.4; −12%); the swivel searches handing back the solve they end on
//!   and limits tested by their cheap inside test before an exact violation
//!   (`JointLimit::excess`), joints a search found inside not tested again (−17%).
//! - Tried and dropped: a right-looking Cholesky (8% slower than the dot-product form here);
//!   a swivel search skipped when only the end joint cannot fit (8 µs grounded instead of 13,
//!   but 0.004 rad worse soles on the bumps, and one frame a fit the search finds missed).
//! - Where the time goes now (`perf`): limit tests 12%, the body stage's residuals 9%, the
//!   two-bone solves 8%, FK 6–10%, the step's equations and Cholesky 15%.
//! - `body_grounded` (13.1 → 11.9 µs): half its frames ask the right ankle past its limit (a
//!   deep crouch on bumps), and the knee's swivel is then searched for the nearest fit; each
//!   swivel the search tries is now the swivel-0 solve turned rigidly about the goal line (one
//!   quaternion product, checked against the two-bone solve) instead of a solve. The grounder
//!   itself is 12,000 instructions.
//! - 11.4 → 9.2 µs grounded, 8.5 → 7.9 µs prepared (97,200 → 93,600 instructions): the
//!   swing–twist limits' cheap inside test (22% of the grounded frame in `perf`, 41 calls a
//!   frame) without normalising the twist and swing (only ratios of their components matter:
//!   one square root and two divisions instead of two and eight; −1.4 µs); the pattern search
//!   reusing the cost of the point a step leaves behind (−0.6 µs; 17 costs a search before);
//!   the grounded frame's model pose handed to the solve (`solve_in`: one FK fewer).
//! - 9.2 → 10.4–11.1 µs grounded: the grounder bending the toes over an edge (78d58f1, two
//!   bisections; cut from 16/24 to 12/18 steps, 11.1 → 10.4). Prepared 7.9 → 8.4 µs over the
//!   restructure's shared limb goals and the free elbows' roll.
//! - 10.50 → 9.12 µs grounded, 8.37 → 7.72 µs prepared (back to back, Xeon, 2026-11-28): each
//!   swivel the search tries evaluated in closed form from the swivel-0 solve — the start
//!   joint's correction `R(S⁻¹n, φ) C₀`, the end joint's local rotation `P₀⁻¹ R(n, −φ) G` —
//!   one sine and cosine and four quaternion products instead of the limb's frames composed
//!   again; the least-turn swivel's check tests the end joint first and skips the turn's
//!   `acos`. In `perf` before: the swivel search 28% of the frame (87% of its calls settled
//!   by the least-turn swivel, the rest 14 costs each), limit tests 18%, the grounder 27%.
//! - 9.1 → 9.4 µs grounded, 7.9 → 8.2 µs prepared (Xeon, 2026-11-28, each step back to back
//!   within ±2%): hinged toes bend about their hinge, so on the bumps they bend now (before,
//!   bent about the level axis across them on a foot turned to the slope, they left the hinge
//!   at once and never bent) and their clearing bisection runs, while their room is the
//!   hinge's range in closed form (no limit bisection); a placed head's turn past its own limit
//!   is three more rows of the body stage (22, was 19). In `perf` after: the swivel search's
//!   limit tests 23% of the grounded frame, the heightfield's samples 8%.
//! - `body_crowd/grounded_1000` (2026-11-28, Xeon, quiet): 9.18 ms for 1,000 characters, each
//!   with its own grounder, pose and frames, through one `solve_many_in`: the single frame's
//!   9.0 µs a thousand times (no SIMD lanes for the body solve yet; the aim is ≤ 5 ms).
//! - 9.4 → 9.0 µs grounded: the grounder holds the ankle's limit against the shin the solve
//!   will leave (foreseen from the last frame's pelvis offset and lifts), not the animated one:
//!   unconverged frames 48 → 22 of 96, so fewer swivel searches; the soles 7.9 → 1.5 mm at
//!   worst under the bumps.
//! - 9.28 → 9.07 µs grounded (evening of 2026-11-28, the commit before measured back to back;
//!   the machine about 3% slower than for the 9.0 above): the grounder asks the terrain only
//!   for heights where it needs no normal (`Ground::height`; the heightfield's samples were 9%
//!   of the frame in `perf`), while it gained the knees' fold bound on the pelvis.
//! - `body_grounded_settled` (14.5 µs, same evening): the grounded frame with the grounder's
//!   settle rounds after the solve (`FrameGrounder::settle`): 45 extra solves in 96 frames
//!   take the soles from 1.47 to 0.10 mm under the bumps at worst (`tests/grounded.rs`).

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{DQuat, DVec3};
use ikarus_anim::ground::{FrameGroundConfig, FrameGrounder};
use ikarus_anim::retarget::Character;
use ikarus_bench::grounded;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::body::BodyConfig;
use ikarus_solve::lm::LmConfig;
use ikarus_solve::{Goal, IkTask, PreparedTask, SolverConfig, solve};
use ikarus_testdata::motions;
use std::hint::black_box;

const FRAMES: usize = 32;

fn tasks(skeleton: &Skeleton) -> Vec<IkTask> {
    motions::crouch_body_ends(skeleton, FRAMES)
        .into_iter()
        .map(IkTask::from_poses)
        .collect()
}

fn bench(c: &mut Criterion) {
    let skeleton = builtin_humanoid();
    let tasks = tasks(&skeleton);
    for (name, config) in [
        ("body", SolverConfig::Body(BodyConfig::default())),
        ("lm", SolverConfig::Lm(LmConfig::default())),
    ] {
        let mut pose = motions::crouch(&skeleton, FRAMES - 1, FRAMES);
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
    let mut pose = motions::crouch(&skeleton, FRAMES - 1, FRAMES);
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

/// The crouch's animated frames, its six ends per frame, and the body task prepared for them.
#[allow(clippy::type_complexity)] // three parts of one fixture
fn crouch_frames(
    skeleton: &Skeleton,
) -> (
    Vec<LocalPose>,
    Vec<[(JointId, DVec3, DQuat); 6]>,
    PreparedTask<'_>,
) {
    let animated = (0..FRAMES)
        .map(|k| motions::crouch(skeleton, k, FRAMES))
        .collect();
    let ends = motions::crouch_body_ends(skeleton, FRAMES);
    let task = IkTask::from_poses(ends[0]);
    let config = SolverConfig::Body(BodyConfig::default());
    let prepared = PreparedTask::new(skeleton, &task, &config).expect("a body task");
    (animated, ends, prepared)
}

/// A game's grounded frame: the animation's pose (the crouch) taken as the input, its forward
/// kinematics, the [`FrameGrounder`]'s hips and feet goals on a bumpy heightfield (±4 cm,
/// 10 cm cells), the head and hands where the animation has them, lowered with the pelvis,
/// and the prepared body solve: everything a frame costs but the animation itself. The deep
/// crouch on bumps takes the right ankle past its limit in a quarter of the frames (22 of 96
/// in `tests/grounded.rs`; reported `unreachable`, the sole as near the slope as
/// the ankle bends). Hands reaching past their
/// arms' length instead draw the pelvis against its goal, a compromise the body stage
/// reaches in 5–8 iterations (`body_prepared` measures a reach).
fn bench_grounded(c: &mut Criterion) {
    let skeleton = builtin_humanoid();
    let map = HumanoidMap::recognise(&skeleton);
    let mut grounder = FrameGrounder::new(
        Character {
            skeleton: &skeleton,
            map: &map,
        },
        &FrameGroundConfig::default(),
    )
    .expect("the built-in humanoid has feet");
    let ground = grounded::bumps(40, -2.0);
    let (animated_frames, ends, mut prepared) = crouch_frames(&skeleton);
    let (hips, ankles) = (grounder.hips(), grounder.ankles());
    let mut model = ModelPose::new(&skeleton);
    let mut pose = animated_frames[0].clone();
    let mut k = 0;
    let report = std::env::var("BODY_REPORT").is_ok();
    c.bench_function("body_frame/body_grounded", |b| {
        b.iter(|| {
            let frame = k % FRAMES;
            pose.transforms_mut()
                .copy_from_slice(animated_frames[frame].transforms());
            fk::forward_kinematics(&skeleton, &pose, &mut model);
            let frame_goals = grounder.goals(&model, &ground, 1.0 / 60.0);
            for (goal, &end) in prepared.goals_mut().zip(&ends[frame]) {
                *goal = grounded::goal(&frame_goals, (hips, ankles), end, DVec3::ZERO);
            }
            k += 1;
            // The model frames made for the grounder are the solve's starting frames.
            let r = prepared.solve_in(&mut pose, &mut model);
            if report && (1000..1000 + FRAMES).contains(&k) {
                println!("grounded: {r:?}");
            }
            black_box(r)
        });
    });
    // The same with the grounder's settle rounds after the solve (`FrameGrounder::settle`,
    // at most 8): a foot the ankle's limit left tilted into the bumps raised and solved again.
    grounder.reset();
    let mut animated = ModelPose::new(&skeleton);
    c.bench_function("body_frame/body_grounded_settled", |b| {
        b.iter(|| {
            let frame = k % FRAMES;
            pose.transforms_mut()
                .copy_from_slice(animated_frames[frame].transforms());
            fk::forward_kinematics(&skeleton, &pose, &mut model);
            animated.copy_from(&model);
            let mut frame_goals = grounder.goals(&model, &ground, 1.0 / 60.0);
            for (goal, &end) in prepared.goals_mut().zip(&ends[frame]) {
                *goal = grounded::goal(&frame_goals, (hips, ankles), end, DVec3::ZERO);
            }
            k += 1;
            let mut r = prepared.solve_in(&mut pose, &mut model);
            for _ in 0..8 {
                if !grounder.settle((&animated, &model), &ground, &mut frame_goals) {
                    break;
                }
                for (goal, &end) in prepared.goals_mut().zip(&ends[frame]) {
                    *goal = grounded::goal(&frame_goals, (hips, ankles), end, DVec3::ZERO);
                }
                r = prepared.solve_in(&mut pose, &mut model);
            }
            black_box(r)
        });
    });
}

/// 1,000 characters a frame through the crowd API, as a game runs a crowd: each its own
/// grounder (its pelvis spring), pose and model frames, standing on a 32 × 32 grid 0.6 m apart
/// on the same ±4 cm bumps (a 20 m heightfield), each at its own phase of the crouch; per
/// frame every character's FK and grounder goals, then one `PreparedTask::solve_many_in` over
/// all of them. The body solve is not batched in SIMD lanes: `solve_many_in` solves the
/// characters one after another, so this measures the single-character frame at a crowd's
/// memory footprint.
fn bench_crowd(c: &mut Criterion) {
    const CHARACTERS: usize = 1000;
    let skeleton = builtin_humanoid();
    let map = HumanoidMap::recognise(&skeleton);
    let character = Character {
        skeleton: &skeleton,
        map: &map,
    };
    let ground = grounded::bumps(200, -1.0);
    let (animated, ends, mut prepared) = crouch_frames(&skeleton);
    let root = skeleton.roots().next().expect("a root");
    let places: Vec<DVec3> = (0..CHARACTERS)
        .map(|i| DVec3::new(0.6 * (i % 32) as f64, 0.0, 0.6 * (i / 32) as f64))
        .collect();
    let mut grounders: Vec<FrameGrounder> = (0..CHARACTERS)
        .map(|_| FrameGrounder::new(character, &FrameGroundConfig::default()).expect("feet"))
        .collect();
    let (hips, ankles) = (grounders[0].hips(), grounders[0].ankles());
    let effectors = ends[0].len();
    let mut poses: Vec<_> = (0..CHARACTERS).map(|_| animated[0].clone()).collect();
    let mut models: Vec<_> = (0..CHARACTERS).map(|_| ModelPose::new(&skeleton)).collect();
    let mut reports = vec![ikarus_solve::SolveReport::invalid("not solved yet"); CHARACTERS];
    let mut goals = vec![Goal::default(); CHARACTERS * effectors];
    let mut k = 0;
    let mut frame = |k: usize| {
        for i in 0..CHARACTERS {
            let phase = (k + i) % FRAMES;
            let pose = &mut poses[i];
            pose.transforms_mut()
                .copy_from_slice(animated[phase].transforms());
            pose[root].translation += places[i];
            fk::forward_kinematics(&skeleton, pose, &mut models[i]);
            let frame_goals = grounders[i].goals(&models[i], &ground, 1.0 / 60.0);
            for (goal, &end) in goals[i * effectors..(i + 1) * effectors]
                .iter_mut()
                .zip(&ends[phase])
            {
                *goal = grounded::goal(&frame_goals, (hips, ankles), end, places[i]);
            }
        }
        prepared.solve_many_in(&goals, &mut poses, &mut models, &mut reports);
        black_box(reports[k % CHARACTERS].status)
    };
    let mut group = c.benchmark_group("body_crowd");
    group.sample_size(10);
    group.bench_function("grounded_1000", |b| {
        b.iter(|| {
            k += 1;
            frame(k)
        });
    });
    group.finish();
}

criterion_group!(benches, bench, bench_grounded, bench_crowd);
criterion_main!(benches);
