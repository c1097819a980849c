//! Levenberg–Marquardt on the iiwa-like arm (`ikarus_bench::iiwa`): the TRAC-IK protocol with
//! position goals (10,000 targets, seed 42, start at the middle of the limits, 1e-5 m), the
//! jitter of a warm-started solve following a smoothly moving target, and criterion's time per
//! solve. The 6-D protocol on the real URDF robots is `benches/trac_ik.rs`.
//!
//! ## What explains the numbers
//!
//! - This is the pose-based LM: profiled on the URDF robots, a sweep was ~1.4 µs, two thirds of it
//!   pose bookkeeping (quaternions in, angles out, FK), not the method.
//! - What made it fast: hinge-only chains write every trial angle, then run one FK; nalgebra's
//!   Cholesky on stack matrices up to 8 columns; the normal equations as rank-one updates on
//!   slices; a stall window of 3 sweeps.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::{bench_cycling, iiwa};
use ikarus_solve::IkTask;
use ikarus_solve::lm::{self, LmConfig, LmWorkspace};

fn bench_lm(c: &mut Criterion) {
    let config = LmConfig::default();
    let mut workspace = LmWorkspace::new();
    let figures =
        iiwa::position_protocol(|s, t, pose| lm::solve_with(s, t, &config, &mut workspace, pose));
    println!("lm/iiwa position: {figures}");
    let mut interactive = config;
    interactive.iteration.restarts = 0;
    common::print_jitter("lm", |s, t, pose| {
        lm::solve_with(s, t, &interactive, &mut workspace, pose)
    });

    let s = iiwa::skeleton();
    let tasks: Vec<IkTask> = iiwa::samples(&s, 100, 7)
        .iter()
        .map(|(_, t)| iiwa::task(&s, *t))
        .collect();
    let mut group = c.benchmark_group("lm");
    bench_cycling(
        &mut group,
        "iiwa_100_targets_per_solve_mean",
        &s,
        &tasks,
        |t, pose| lm::solve_with(&s, t, &config, &mut workspace, pose),
    );
    group.finish();
}

criterion_group!(benches, bench_lm);
criterion_main!(benches);
