//! Closed-form six-joint leg IK on the Unitree G1-proportioned leg of `tests/leg6.rs`
//! (dimensions and limits from `g1_29dof.urdf`, hip made spherical) and on a seed-003 leg
//! (yaw–roll–pitch hip, 3 cm lateral offset): one pure solve per form, batches of 1024 varied
//! targets, and the skeleton-level `solve_chain` (FK + solve + write + subtree update).
//!
//! ## What explains the numbers
//!
//! - `solve_pose` took 223 ns at first, half of it libm's `atan2` (six calls, ≈ 19 ns each); a
//!   table-based `atan2` (within 2 ulp) now runs the six angles together so that SSE2 pairs them.
//! - An optimistic pass checks the lower joints' limits only at the end; the joint-by-joint
//!   clamping pass runs only when one is out.
//! - At 105 ns it was ~960 instructions and a chain of three square roots, products and two
//!   divisions per angle; the run-time instruction set (pulp) then gave 88.3 ns.
//! - The seed form (level sole) needs no hip decomposition: its yaw is the input.
//! - The batch is slower per solve than a single call: varied targets defeat branch prediction,
//!   as G1 hip rolls past π/2 take the hip's second decomposition.
//! - FK of the solution meets 100,008 random 6-D targets (9 legs, all six hip orders) within
//!   1.8e-15 m and 3.8e-15 rad; level targets within 6.8e-16 m; the two forms agree to 3.4e-11 rad.
//! - Same run (EPYC-2, idle, 2026-11-21): `solve_contact_g1_heel` 146.1 ns,
//!   `solve_slice_1024_g1_poses` 112.8 µs, `solve_chain_g1_with_fk` 310 ns.

// Joint origins and limits are copied from the URDF files digit for digit (0.5236 is the file's
// value, not π/6), so that they can be checked against them.
#![allow(clippy::unreadable_literal, clippy::approx_constant)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::{HingeLimit, JointLimit, ModelPose, SkeletonBuilder, Transform, fk};
use ikarus_solve::leg6::{
    Contact, Leg6Angles, Leg6Chain, Leg6Joints, Leg6Limits, Leg6Output, Leg6Params, Leg6Target,
    Y_UP_FROM_LEG, forward, solve_chain, solve_contact, solve_level, solve_pose, solve_slice,
};
use ikarus_testdata::Rng;
use std::hint::black_box;

/// The G1-proportioned leg, shared with `ikarus-solve`'s `tests/leg6.rs`.
#[path = "../../ikarus-solve/tests/common/g1_leg.rs"]
mod g1_leg;

use g1_leg::{G1_RANGES, g1_leg, g1_points};

const BATCH: usize = 1024;

/// Test draws on [`Rng`] beyond plain numbers.
trait Draw {
    fn angles(&mut self, limits: &Leg6Limits) -> Leg6Angles;
}

impl Draw for Rng {
    fn angles(&mut self, limits: &Leg6Limits) -> Leg6Angles {
        let (lo, hi) = (limits.min.to_array(), limits.max.to_array());
        let mut a = [0.0; 6];
        for i in 0..6 {
            let lo = if i == 3 { lo[i].max(0.0) } else { lo[i] };
            a[i] = lo + (hi[i] - lo) * self.unit();
        }
        Leg6Angles::from_array(a)
    }
}

fn seed_leg() -> Leg6Params {
    Leg6Params {
        thigh: DVec3::new(0.0, 0.03, -0.32),
        ..Leg6Params::new(DVec3::new(0.0, 0.07, -0.09), 0.32, 0.3, 0.06)
    }
    .with_limits(Leg6Limits::from_ranges([
        (-1.0, 1.0),
        (-0.6, 0.6),
        (-1.4, 0.6),
        (0.0, 2.6),
        (-1.2, 1.0),
        (-0.6, 0.6),
    ]))
}

/// A level-sole target of the seed leg: ankle roll = −hip roll, pitches summing to 0.
fn level_target(rng: &mut Rng, params: &Leg6Params) -> (DVec3, f64) {
    loop {
        let mut a = rng.angles(&params.limits);
        a.ankle_pitch = -(a.hip_pitch + a.knee);
        a.ankle_roll = -a.hip_roll;
        if params.limits.contains(&a) {
            return (forward(params, &a).translation, a.hip_yaw);
        }
    }
}

/// The G1-proportioned leg as a +Y-up skeleton under a `pelvis` root.
fn g1_skeleton() -> ikarus_core::Skeleton {
    let [hip, knee, ankle_pitch, ankle_roll, _] = g1_points();
    let m = Y_UP_FROM_LEG;
    let mut builder = SkeletonBuilder::new();
    builder.joint(
        "pelvis",
        None,
        Transform::from_translation(DVec3::new(0.0, 0.79, 0.0)),
    );
    let joints = [
        ("hip_pitch", hip, DVec3::Y, G1_RANGES[2]),
        ("hip_roll", DVec3::ZERO, DVec3::X, G1_RANGES[1]),
        ("hip_yaw", DVec3::ZERO, DVec3::Z, G1_RANGES[0]),
        ("knee", knee - hip, DVec3::Y, G1_RANGES[3]),
        ("ankle_pitch", ankle_pitch - knee, DVec3::Y, G1_RANGES[4]),
        (
            "ankle_roll",
            ankle_roll - ankle_pitch,
            DVec3::X,
            G1_RANGES[5],
        ),
    ];
    let mut parent = "pelvis";
    for (name, origin, axis, (min, max)) in joints {
        builder.limited_joint(
            name,
            Some(parent),
            Transform::from_translation(m * origin),
            JointLimit::Hinge(HingeLimit {
                axis: m * axis,
                min,
                max,
            }),
        );
        parent = name;
    }
    builder.build().expect("valid G1 leg")
}

/// A typical stance: knee bent 0.6 rad, foot turned and tilted a little.
const STANCE: [f64; 6] = [0.2, 0.1, -0.4, 0.6, -0.25, -0.08];

/// One pure solve of each form on a fixed target.
fn bench_single(c: &mut Criterion) {
    let g1 = g1_leg();
    let seed = seed_leg();
    let mut group = c.benchmark_group("leg6");
    let foot = forward(&g1, &Leg6Angles::from_array(STANCE));
    let (position, rotation) = (foot.translation, DQuat::from_mat3(&foot.matrix3));
    assert!(solve_pose(&g1, position, rotation).reached);
    group.bench_function("solve_pose_g1", |b| {
        b.iter(|| solve_pose(black_box(&g1), black_box(position), black_box(rotation)));
    });
    let level = forward(
        &seed,
        &Leg6Angles::from_array([0.2, 0.1, -0.4, 0.6, -0.2, -0.1]),
    )
    .translation;
    assert!(solve_level(&seed, level, 0.2).reached);
    group.bench_function("solve_level_seed", |b| {
        b.iter(|| solve_level(black_box(&seed), black_box(level), black_box(0.2)));
    });
    let level_as_pose = DQuat::from_rotation_z(0.2);
    group.bench_function("solve_pose_seed_level_target", |b| {
        b.iter(|| solve_pose(black_box(&seed), black_box(level), black_box(level_as_pose)));
    });
    let heel = position + rotation * DVec3::new(-g1.heel, 0.0, 0.0);
    assert!(solve_contact(&g1, Contact::Heel, heel, 0.2, -0.2).reached);
    group.bench_function("solve_contact_g1_heel", |b| {
        b.iter(|| {
            solve_contact(
                black_box(&g1),
                Contact::Heel,
                black_box(heel),
                black_box(0.2),
                black_box(-0.2),
            )
        });
    });
    group.finish();
}

/// Batches of 1024 varied targets: G1 poses from random angles inside the G1's limits (hip
/// rolls past π/2 take the hip's second decomposition), and level targets of the seed leg.
fn bench_batch(c: &mut Criterion) {
    let mut rng = Rng(2026);
    let g1 = g1_leg();
    let seed = seed_leg();
    let poses: Vec<Leg6Target> = (0..BATCH)
        .map(|_| {
            let foot = forward(&g1, &rng.angles(&g1.limits));
            Leg6Target::Pose {
                position: foot.translation,
                rotation: DQuat::from_mat3(&foot.matrix3),
            }
        })
        .collect();
    let levels: Vec<Leg6Target> = (0..BATCH)
        .map(|_| {
            let (position, yaw) = level_target(&mut rng, &seed);
            Leg6Target::Level { position, yaw }
        })
        .collect();
    let mut group = c.benchmark_group("leg6");
    let mut outputs = vec![Leg6Output::default(); BATCH];
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("solve_slice_1024_g1_poses", |b| {
        b.iter(|| solve_slice(black_box(&g1), black_box(&poses), &mut outputs));
    });
    group.bench_function("solve_slice_1024_seed_level", |b| {
        b.iter(|| solve_slice(black_box(&seed), black_box(&levels), &mut outputs));
    });
    group.finish();
}

/// Skeleton level: FK of the 7-joint leg, target into the leg frame, solve, write, update.
fn bench_chain(c: &mut Criterion) {
    let mut group = c.benchmark_group("leg6");
    let skeleton = g1_skeleton();
    let joints = Leg6Joints::from_names(&skeleton, Leg6Angles::NAMES).expect("leg joints");
    let chain = Leg6Chain::new(
        &skeleton,
        &joints,
        Y_UP_FROM_LEG * DVec3::new(0.0, 0.0, -0.035),
    )
    .expect("valid chain");
    let mut pose = skeleton.rest_pose();
    let mut model = ModelPose::new(&skeleton);
    chain.set_angles(&Leg6Angles::from_array(STANCE), &mut pose);
    fk::forward_kinematics(&skeleton, &pose, &mut model);
    let target = Leg6Target::Pose {
        position: chain.sole_position(&model),
        rotation: model.rotation(joints.ankle_roll),
    };
    let rest = skeleton.rest_pose();
    ikarus_bench::bench_from_pose(&mut group, "solve_chain_g1_with_fk", &rest, |pose| {
        solve_chain(&skeleton, &chain, black_box(&target), pose, &mut model)
    });
    group.finish();
}

criterion_group!(benches, bench_single, bench_batch, bench_chain);
criterion_main!(benches);
