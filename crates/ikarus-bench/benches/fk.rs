//! Forward kinematics of the CMU skeleton at a real captured pose: frame 1000 of
//! `cmu_01_01_jump_cgspeed.bvh`.
//!
//! ## What explains the numbers
//!
//! - Every joint gets its full model-space transform: an affine matrix and a rotation quaternion.
//! - The first version multiplied 3×3 matrices at every joint (304 ns for the 31 joints); keeping
//!   model rotations as quaternions, with the quaternion product on rigid paths, made it 248 ns.

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::{bvh_path, without_end_sites};
use ikarus_core::{LocalPose, ModelPose, fk};
use ikarus_formats::bvh::{Bvh, BvhReadOptions};
use std::hint::black_box;

fn bench_fk(c: &mut Criterion) {
    let bvh = Bvh::read(
        &bvh_path("cmu_01_01_jump_cgspeed.bvh"),
        &BvhReadOptions::default(),
    )
    .expect("CMU jump file parses");
    let mut with_end_sites = bvh.skeleton.rest_pose();
    bvh.frame_pose(1000, &mut with_end_sites);

    // 31 joints: the same frame without the End Site leaves.
    let skeleton = without_end_sites(&bvh);
    let mut pose = LocalPose::new(&skeleton);
    for j in skeleton.joints() {
        let source = bvh.skeleton.joint(skeleton.name(j)).expect("same names");
        pose[j] = with_end_sites[source];
    }
    let mut model = ModelPose::new(&skeleton);
    let mut group = c.benchmark_group("fk");
    group.bench_function("cmu_31_joints_full_pose", |b| {
        b.iter(|| fk::forward_kinematics(&skeleton, black_box(&pose), &mut model));
    });

    let mut model38 = ModelPose::new(&bvh.skeleton);
    group.bench_function("cmu_38_joints_with_end_sites", |b| {
        b.iter(|| fk::forward_kinematics(&bvh.skeleton, black_box(&with_end_sites), &mut model38));
    });

    let shoulder = skeleton.joint("LeftShoulder").expect("CMU names");
    fk::forward_kinematics(&skeleton, &pose, &mut model);
    group.bench_function("cmu_partial_from_left_shoulder", |b| {
        b.iter(|| fk::update_subtree(&skeleton, black_box(&pose), &mut model, shoulder));
    });
    group.finish();
}

criterion_group!(benches, bench_fk);
criterion_main!(benches);
