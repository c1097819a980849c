//! Two-bone IK on the CMU left arm (`LeftArm` → `LeftForeArm` → `LeftHand`) of real captured poses
//! from `cmu_01_01_jump_cgspeed.bvh`: one pure solve, a batch of 1024 varied problems, and the
//! skeleton-level `solve_chain` (FK + solve + apply) for context.
//!
//! ## What explains the numbers
//!
//! - `solve` runs as a `pulp::WithSimd` operation, compiled for AVX-512/AVX2, picked at run time;
//!   same operations in the same order, no FMA, so the baseline build's bits (63–64 → 55–58 ns).
//! - The batch runs the common path on 8 problems per AVX-512 register (4 with AVX2: 33.5 µs per
//!   1024); a solve is ≈ 10 ns gathering the inputs into lanes plus ≈ 16 ns of kernel.
//! - A single call cannot reach 40 ns: ~650 instructions (210 multiplications, two pipes: ≥ 105
//!   cycles) and a chain through three square roots and three divisions (≈ 160 cycles ≈ 42 ns).
//! - The skeleton-level `two_bone/solve_chain_cmu_left_arm_with_fk` (FK of 38 joints, solve,
//!   apply): 524 ns (EPYC-2, load 1.1, 2026-11-21; the headline rows are in BENCHMARKS.md).

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::closed_form::{FrameProblems, bench_closed_form};
use ikarus_solve::two_bone::{Pole, TwoBoneChain, solve, solve_chain, solve_slice};
use ikarus_testdata::{Draw, Rng};

fn bench_two_bone(c: &mut Criterion) {
    let document = ikarus_bench::cmu_jump_in_metres();
    let skeleton = &document.skeleton;
    let [start, mid, end] =
        ["LeftArm", "LeftForeArm", "LeftHand"].map(|n| skeleton.joint(n).expect("CMU names"));

    // One problem per captured frame (cycling), each with the elbow's bend axis of its frame,
    // a reachable target and a random pole.
    let mut rng = Rng(2026);
    let problems = FrameProblems::new(&document, |pose, model| {
        let (s, m, e) = (
            model.position(start),
            model.position(mid),
            model.position(end),
        );
        let bend = (m - s).cross(e - m).try_normalize()?;
        let axis_local = model.rotation(mid).inverse() * bend;
        let axis_rest = skeleton.rest(mid).rotation.inverse() * (pose[mid].rotation * axis_local);
        let chain = TwoBoneChain::new(skeleton, start, mid, end, axis_rest).expect("valid chain");
        let (l1, l2) = ((m - s).length(), (e - m).length());
        let reach = (l1 - l2).abs() + rng.unit() * (l1 + l2 - (l1 - l2).abs());
        let target = s + rng.direction() * reach;
        let input = chain.input(skeleton, pose, model, target, Pole::Vector(rng.direction()));
        Some((chain, input))
    });

    let mut group = c.benchmark_group("two_bone");
    // Frame 1000's arm (the FK bench's pose): the pure function on model transforms, the
    // batch, then the skeleton level (full FK of the 38-joint CMU skeleton, solve, apply).
    let rows = ["solve_cmu_left_arm", "solve_chain_cmu_left_arm_with_fk"];
    let functions = (solve, solve_slice, solve_chain);
    bench_closed_form(&mut group, &problems, rows, functions);
    group.finish();
}

criterion_group!(benches, bench_two_bone);
criterion_main!(benches);
