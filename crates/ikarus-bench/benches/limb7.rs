//! The analytic 7-DOF limb (seed 000, Tolani–Goswami–Badler) on the built-in humanoid's left arm:
//! one solve from position + orientation + swivel, a batch of 1024, and the feasible-swivel search;
//! then the same arm (seed layout, humanoid bone lengths) through the `k` crate's Jacobian IK on
//! the same 6-D targets, for scale. The success rates of both are printed before the timings.
//!
//! ## What explains the numbers
//!
//! - 198 ns at first (axis–angle hinge, `acos` on the critical path, normalisations after every
//!   product) → 129 ns: the hinge by the law of cosines as cos/sin, one shared square root.
//! - → 108 ns: branches chosen on `cos δ`, so the `acos` that only feeds the reported elbow angle
//!   left the critical path.
//! - → 96 ns: the wrist's parent rotation is `shoulder · (c·A + s·B)` with `A`, `B` precomputed
//!   (the product is bilinear): one product instead of three, `wrist_for` 15.6 → 8.6 ns.
//! - → 91.5 ns: the run-time instruction set (pulp), bit for bit with the baseline build, once the
//!   helpers were `#[inline(always)]` (out of line it was slower, 99 → 102 ns).
//! - Still on the path: `acos` for the reported angle, five square roots, five divisions,
//!   `DQuat::from_mat3` and the wrist's product. Leg6's table `atan2` instead of `acos`: 140 ns.
//! - Same run (EPYC-2, load 1.3–1.4, 2026-11-21): `solve_position` 62.9 ns, `wrist_for` 8.6 ns,
//!   `solve_slice` of 1024 94.6 µs, `feasible_swivels` 78.8 µs.

use ikarus_testdata::Rng;
use std::f64::consts::PI;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_solve::limb7::{
    Limb7, Limb7Chain, Limb7Error, Limb7Geometry, Limb7Limits, Limb7Solution, solve_slice,
};
use k::nalgebra as na;
use k::prelude::*;

const BATCH: usize = 1024;
/// Humanoid upper and lower arm lengths, metres.
const UPPER: f64 = 0.28;
const LOWER: f64 = 0.25;

/// Shoulder XYZ, elbow about +Y, wrist ZYX: the seed's limb as seven revolute joints in `k`.
fn k_arm() -> k::SerialChain<f64> {
    let joint = |name: &str, axis: na::Unit<na::Vector3<f64>>, z: f64| -> k::Node<f64> {
        k::NodeBuilder::new()
            .name(name)
            .joint_type(k::JointType::Rotational { axis })
            .translation(na::Translation3::new(0.0, 0.0, z))
            .finalize()
            .into()
    };
    let j0 = joint("shoulder_x", na::Vector3::x_axis(), 0.0);
    let j1 = joint("shoulder_y", na::Vector3::y_axis(), 0.0);
    let j2 = joint("shoulder_z", na::Vector3::z_axis(), 0.0);
    let j3 = joint("elbow", na::Vector3::y_axis(), UPPER);
    let j4 = joint("wrist_z", na::Vector3::z_axis(), LOWER);
    let j5 = joint("wrist_y", na::Vector3::y_axis(), 0.0);
    let j6 = joint("wrist_x", na::Vector3::x_axis(), 0.0);
    k::connect![j0 => j1 => j2 => j3 => j4 => j5 => j6];
    k::SerialChain::new_unchecked(k::Chain::from_root(j0))
}

/// 6-D targets from random joint vectors (elbow bent 0.2..2.6 rad), made by `k`'s own FK.
fn k_targets(arm: &k::SerialChain<f64>, rng: &mut Rng, n: usize) -> Vec<na::Isometry3<f64>> {
    (0..n)
        .map(|_| {
            let q: Vec<f64> = (0..7)
                .map(|i| {
                    if i == 3 {
                        rng.range(0.2, 2.6)
                    } else {
                        rng.range(-PI, PI)
                    }
                })
                .collect();
            arm.set_joint_positions_unchecked(&q);
            arm.update_transforms();
            arm.end_transform()
        })
        .collect()
}

fn to_glam(target: &na::Isometry3<f64>) -> (DVec3, DQuat) {
    let t = target.translation.vector;
    let q = target.rotation.quaternion();
    (
        DVec3::new(t.x, t.y, t.z),
        DQuat::from_xyzw(q.i, q.j, q.k, q.w).normalize(),
    )
}

/// The humanoid's left arm as a limb, its limits, and goals from random legal poses.
fn humanoid_problems() -> (Limb7, Vec<(DVec3, DQuat, f64)>) {
    let skeleton = builtin_humanoid();
    let [s, e, w] =
        ["leftUpperArm", "leftLowerArm", "leftHand"].map(|n| skeleton.joint(n).expect("humanoid"));
    let chain = Limb7Chain::new(&skeleton, s, e, w).expect("arm chain");
    let limb = chain
        .limb(&skeleton, &skeleton.rest_pose())
        .expect("arm limb");
    let mut rng = Rng(2026);
    let problems = (0..BATCH)
        .map(|_| {
            let axis = DVec3::from_array(rng.in_cube()).normalize_or(DVec3::X);
            let q = skeleton
                .limit(s)
                .project(DQuat::from_axis_angle(axis, rng.range(0.0, 1.5)));
            let theta = rng.range(0.2, 2.5);
            let wrist = skeleton
                .limit(w)
                .project(DQuat::from_rotation_z(rng.range(-0.5, 0.5)));
            let (_, target, orientation) = limb.forward(
                skeleton.rest(s).rotation * q,
                theta,
                skeleton.rest(w).rotation * wrist,
            );
            (target, orientation, rng.range(-PI, PI))
        })
        .collect();
    (limb, problems)
}

fn bench_limb7(c: &mut Criterion) {
    let (limb, problems) = humanoid_problems();
    let mut group = c.benchmark_group("limb7");
    let mut i = 0;
    group.bench_function("solve_pose humanoid arm", |b| {
        b.iter(|| {
            let (target, orientation, swivel) = problems[i % BATCH];
            i += 1;
            black_box(limb.solve_pose(black_box(target), orientation, swivel, None))
        });
    });
    let mut i = 0;
    group.bench_function("solve_position humanoid arm", |b| {
        b.iter(|| {
            let (target, _, swivel) = problems[i % BATCH];
            i += 1;
            black_box(limb.solve_position(black_box(target), swivel, None))
        });
    });
    let solved: Vec<Limb7Solution> = problems
        .iter()
        .map(|p| limb.solve_position(p.0, p.2, None).expect("finite"))
        .collect();
    let mut i = 0;
    group.bench_function("wrist_for humanoid arm", |b| {
        b.iter(|| {
            let s = &solved[i % BATCH];
            let q = problems[i % BATCH].1;
            i += 1;
            black_box(limb.wrist_for(black_box(s), q))
        });
    });
    let limbs = vec![limb; BATCH];
    let targets: Vec<DVec3> = problems.iter().map(|p| p.0).collect();
    let orientations: Vec<DQuat> = problems.iter().map(|p| p.1).collect();
    let swivels: Vec<f64> = problems.iter().map(|p| p.2).collect();
    let mut out: Vec<Result<Limb7Solution, Limb7Error>> = vec![Err(Limb7Error::NonFinite); BATCH];
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("solve_slice 1024", |b| {
        b.iter(|| {
            solve_slice(
                &limbs,
                &targets,
                &orientations,
                &swivels,
                black_box(&mut out),
            );
        });
    });
    group.throughput(Throughput::Elements(1));
    let skeleton = builtin_humanoid();
    let [s, w] = ["leftUpperArm", "leftHand"].map(|n| skeleton.joint(n).expect("humanoid"));
    let limits = Limb7Limits {
        shoulder: skeleton.limit(s),
        shoulder_rest: skeleton.rest(s).rotation,
        wrist: skeleton.limit(w),
        wrist_rest: skeleton.rest(w).rotation,
    };
    let mut i = 0;
    group.bench_function("feasible_swivels humanoid arm", |b| {
        b.iter(|| {
            let (target, orientation, _) = problems[i % BATCH];
            i += 1;
            black_box(limb.feasible_swivels(target, Some(orientation), &limits, None, &[]))
        });
    });
    group.finish();
}

fn bench_against_k(c: &mut Criterion) {
    let arm = k_arm();
    let mut rng = Rng(7);
    let targets = k_targets(&arm, &mut rng, BATCH);
    let start = [0.3, -0.2, 0.1, 1.2, 0.1, 0.2, -0.1];
    // Success rates first (position < 1e-6 m and rotation < 1e-6 rad, measured by k's FK).
    let solver = k::JacobianIkSolver::new(1e-6, 1e-6, 0.5, 100);
    let limb = Limb7::new(Limb7Geometry {
        elbow_range: [0.0, PI],
        ..Limb7Geometry::seed(UPPER, LOWER)
    })
    .expect("seed limb");
    let (mut k_ok, mut limb_ok) = (0, 0);
    for target in &targets {
        arm.set_joint_positions_unchecked(&start);
        if solver.solve(&arm, target).is_ok() {
            k_ok += 1;
        }
        let (p, q) = to_glam(target);
        if let Ok(s) = limb.solve_pose(p, q, 0.0, None) {
            let (_, wrist, rotation) =
                limb.forward(s.shoulder, s.elbow_angle, s.wrist.unwrap_or_default());
            if s.reached && (wrist - p).length() < 1e-6 && rotation.angle_between(q) < 1e-6 {
                limb_ok += 1;
            }
        }
    }
    println!(
        "same 7-DOF arm, {BATCH} reachable 6-D targets: limb7 solves {limb_ok}, k::JacobianIkSolver \
         (1e-6 m / 1e-6 rad, 100 tries, start {start:?}) solves {k_ok}"
    );
    let mut group = c.benchmark_group("limb7 vs k");
    let mut i = 0;
    group.bench_function("limb7 solve_pose", |b| {
        b.iter(|| {
            let (p, q) = to_glam(&targets[i % BATCH]);
            i += 1;
            black_box(limb.solve_pose(black_box(p), q, 0.0, None))
        });
    });
    let mut i = 0;
    group.bench_function("k JacobianIkSolver", |b| {
        b.iter(|| {
            arm.set_joint_positions_unchecked(&start);
            let target = &targets[i % BATCH];
            i += 1;
            black_box(solver.solve(&arm, black_box(target)).is_ok())
        });
    });
    group.finish();
}

criterion_group!(benches, bench_limb7, bench_against_k);
criterion_main!(benches);
