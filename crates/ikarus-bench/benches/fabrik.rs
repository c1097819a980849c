//! FABRIK on the FABRIK paper's setup (Aristidou & Lasenby 2011): a chain of 10 turning joints
//! with equal unit links, no limits, random reachable targets, tolerance 0.01 (units of the
//! link length). Prints the mean iterations, the time per iteration and the median per solve,
//! then the jitter of a warm-started solve on the iiwa-like arm following the CCD bench's loop;
//! criterion times representative solves.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::DVec3;
use ikarus_bench::iiwa::SplitMix;
use ikarus_core::{Skeleton, SkeletonBuilder, Transform};
use ikarus_solve::fabrik::{self, FabrikConfig, FabrikWorkspace};
use ikarus_solve::{Effector, Goal, IkTask, IterationSettings, Tolerance};

const JOINTS: usize = 10;

/// A fixed `base`, then `j0` … `j9` (every one turning, `j0` at the base) and `tip`: ten unit
/// links along +Y.
fn chain() -> Skeleton {
    let mut b = SkeletonBuilder::new();
    b.joint("base", None, Transform::IDENTITY);
    let mut previous = "base".to_owned();
    for i in 0..JOINTS {
        let name = format!("j{i}");
        let offset = if i == 0 { DVec3::ZERO } else { DVec3::Y };
        b.joint(&name, Some(&previous), Transform::from_translation(offset));
        previous = name;
    }
    b.joint(
        "tip",
        Some(&previous),
        Transform::from_translation(DVec3::Y),
    );
    b.build().expect("a valid chain")
}

/// `count` targets uniform in the ball the chain reaches (radius 10 about the base; with equal
/// links every point of it is reachable), splitmix64 with `seed`.
fn targets(count: usize, seed: u64) -> Vec<DVec3> {
    let mut rng = SplitMix(seed);
    let reach = JOINTS as f64;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let p = DVec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) * 2.0 - DVec3::ONE;
        if p.length_squared() <= 1.0 {
            out.push(p * reach);
        }
    }
    out
}

fn task(skeleton: &Skeleton, target: DVec3) -> IkTask {
    IkTask {
        effectors: vec![Effector {
            joint: skeleton
                .joint("tip")
                .unwrap_or(ikarus_core::JointId::from_index(0)),
            goal: Goal {
                position: Some(target),
                orientation: None,
            },
            weight: 1.0,
        }],
        base: None,
        tolerance: Tolerance {
            position: 0.01,
            rotation: 1e-3,
        },
    }
}

/// The paper's solver: plain FABRIK, no restarts, budget large enough never to bind.
fn paper_config() -> FabrikConfig {
    FabrikConfig {
        iteration: IterationSettings {
            max_iterations: 1000,
            restarts: 0,
            ..IterationSettings::default()
        },
    }
}

fn paper_protocol() {
    let s = chain();
    let config = paper_config();
    let mut workspace = FabrikWorkspace::new();
    let (mut iterations, mut converged) = (0u64, 0usize);
    let (mut times, mut per_iteration, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    let samples = targets(10_000, 2011);
    for &target in &samples {
        let t = task(&s, target);
        let mut pose = s.rest_pose();
        let start = Instant::now();
        let report = fabrik::solve_with(&s, &t, &config, &mut workspace, &mut pose);
        let elapsed = start.elapsed().as_nanos();
        times.push(elapsed);
        per_iteration.push(elapsed as f64 / f64::from(report.iterations.max(1)));
        iterations += u64::from(report.iterations);
        counts.push(report.iterations);
        converged += usize::from(report.converged());
    }
    let total: u128 = times.iter().sum();
    times.sort_unstable();
    per_iteration.sort_unstable_by(f64::total_cmp);
    counts.sort_unstable();
    let n = samples.len();
    println!(
        "fabrik/paper_10_joints: {:.2}% converged to 0.01, mean {:.2} iterations (median {}, p99 {}), {:.0} ns per iteration over all solves (median solve {:.0} ns per iteration), median {:.2} us per solve, p99 {:.2} us",
        100.0 * converged as f64 / n as f64,
        iterations as f64 / n as f64,
        counts[n / 2],
        counts[n * 99 / 100],
        total as f64 / iterations as f64,
        per_iteration[n / 2],
        times[n / 2] as f64 / 1e3,
        times[n * 99 / 100] as f64 / 1e3,
    );
}

/// The built-in humanoid's left hand follows a smooth closed loop in front of the body (1,000
/// frames, 12–25 cm from its rest place), each frame warm-started from the previous solution,
/// limits on, restarts off. (The iiwa-like arm of the CCD bench is no FABRIK case: its
/// roll hinges turn about their own bones and pairs of its joints share a point, so the points
/// give those joints no lever.)
fn jitter() {
    let s = ikarus_core::humanoid::builtin_humanoid();
    let hand = s.joint("leftHand").expect("humanoid hand");
    let mut model = ikarus_core::ModelPose::new(&s);
    ikarus_core::fk::forward_kinematics(&s, &s.rest_pose(), &mut model);
    let rest = model.position(hand);
    let mut config = FabrikConfig::new(200);
    config.iteration.restarts = 0;
    let mut workspace = FabrikWorkspace::new();
    let mut pose = s.rest_pose();
    let (mut largest, mut worst): (f64, f64) = (0.0, 0.0);
    for k in 0..1000_u32 {
        let t = f64::from(k) / 1000.0 * std::f64::consts::TAU;
        let target = rest
            + DVec3::new(
                -0.15 + 0.05 * t.cos(),
                -0.1 + 0.08 * (2.0 * t).sin(),
                0.2 + 0.05 * t.sin(),
            );
        let previous = pose.clone();
        let mut goal = task(&s, target);
        goal.effectors[0].joint = hand;
        goal.tolerance.position = 1e-4;
        let report = fabrik::solve_with(&s, &goal, &config, &mut workspace, &mut pose);
        worst = worst.max(report.position_error);
        if k > 0 {
            for j in s.joints() {
                largest = largest.max(previous[j].rotation.angle_between(pose[j].rotation));
            }
        }
    }
    println!(
        "jitter/fabrik: humanoid hand loop, largest frame-to-frame joint rotation {largest:.4} rad ({:.2} deg) over 1000 frames, worst residual {worst:.1e} m",
        largest.to_degrees()
    );
}

fn bench_fabrik(c: &mut Criterion) {
    paper_protocol();
    jitter();
    let s = chain();
    let config = paper_config();
    let tasks: Vec<IkTask> = targets(100, 7).into_iter().map(|t| task(&s, t)).collect();
    let mut workspace = FabrikWorkspace::new();
    let mut group = c.benchmark_group("fabrik");
    group.bench_function("paper_10_joints_100_targets_per_solve_mean", |b| {
        let mut k = 0;
        b.iter(|| {
            let mut pose = s.rest_pose();
            k = (k + 1) % tasks.len();
            black_box(fabrik::solve_with(
                &s,
                &tasks[k],
                &config,
                &mut workspace,
                &mut pose,
            ))
        });
    });
    group.finish();
}

criterion_group!(benches, bench_fabrik);
criterion_main!(benches);
