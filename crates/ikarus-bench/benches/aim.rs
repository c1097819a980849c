//! Aim IK on the CMU head of real captured poses from `cmu_01_01_jump_cgspeed.bvh`: the line of
//! sight starts between the eyes (an offset from the `Head` joint) and the up axis follows a
//! pole. One pure solve, a batch of 1024 varied problems, the skeleton-level `solve_chain`
//! (FK + solve + apply) and the spine → neck → head `solve_chain_multi` for context.
//!
//! ## What explains the numbers
//!
//! - At first (142 ns): a shortest arc, then a roll about the joint→target line, each normalized,
//!   then multiplied: four square roots and two divisions in series.
//! - Aim and roll as one rotation between two orthogonal frames (as two-bone IK does), whose scale
//!   factors are independent square roots: 61 ns.
//! - Scaling joint space by `|det|` instead of dividing the adjugate by the determinant removed the
//!   division at the head of the dependency chain: 56 ns.
//! - Same run (EPYC-2, load ≈ 2.5, 2026-11-21): `solve_slice_1024_cmu_frames` 56.6 µs,
//!   `solve_chain_cmu_head_with_fk` 480 ns, `solve_chain_multi_…` 1.08 µs.

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::bench_from_pose;
use ikarus_bench::closed_form::{FrameProblems, bench_closed_form};
use ikarus_core::ModelPose;
use ikarus_core::glam::DVec3;
use ikarus_solve::aim::{
    AimChain, AimSettings, MultiAimChain, Pole, solve, solve_chain, solve_chain_multi, solve_slice,
};
use ikarus_testdata::{Draw, Rng};
use std::hint::black_box;

fn bench_aim(c: &mut Criterion) {
    let document = ikarus_bench::cmu_jump_in_metres();
    let skeleton = &document.skeleton;
    let [spine, neck, head] =
        ["Spine1", "Neck", "Head"].map(|n| skeleton.joint(n).expect("CMU names"));
    // Eyes about 9 cm up and 9 cm forward of the head joint (CMU faces +Z at rest).
    let eye = AimChain::new(
        skeleton,
        head,
        DVec3::Z,
        DVec3::Y,
        DVec3::new(0.0, 0.09, 0.09),
    )
    .expect("valid eye");
    let multi = MultiAimChain::new(skeleton, &[(spine, 0.3), (neck, 0.5), (head, 1.0)], eye)
        .expect("valid chain");

    // One problem per captured frame (every 7th, cycling): a target 0.5–3 m from the head in a
    // random direction, a random pole.
    let mut rng = Rng(2026);
    let problems = FrameProblems::new(&document, |pose, model| {
        let target = model.position(head) + rng.direction() * (0.5 + 2.5 * rng.unit());
        let input = eye.input(skeleton, pose, model, target, Pole::Vector(rng.direction()));
        Some((eye, input))
    });
    let settings = AimSettings::default();

    let mut group = c.benchmark_group("aim");
    // Frame 1000's head (the FK bench's pose): the pure function on the model transform, the
    // batch, then the skeleton level (full FK of the 38-joint CMU skeleton, solve, apply).
    let (pose_1000, _, input_1000) = problems.on_frame_1000();
    assert!(solve(&input_1000, &settings).reached);
    let rows = ["solve_cmu_head_offset_pole", "solve_chain_cmu_head_with_fk"];
    let functions = (solve, solve_slice, solve_chain);
    bench_closed_form(&mut group, &problems, rows, functions);

    // The spine, neck and head sharing the turn, at the skeleton level.
    let target = input_1000.target;
    let pole = input_1000.pole;
    let mut model = ModelPose::new(skeleton);
    bench_from_pose(
        &mut group,
        "solve_chain_multi_cmu_spine_neck_head_with_fk",
        &pose_1000,
        |pose| {
            solve_chain_multi(
                skeleton,
                &multi,
                black_box(target),
                pole,
                &settings,
                pose,
                &mut model,
            )
        },
    );
    group.finish();
}

criterion_group!(benches, bench_aim);
criterion_main!(benches);
