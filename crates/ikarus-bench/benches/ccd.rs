//! CCD on the TRAC-IK protocol (position only) with the iiwa-like arm, and the jitter of a
//! warm-started solve following a smoothly moving target.
//!
//! Besides criterion's timing of representative solves, the protocol pass prints success
//! rates at 1 mm and 1e-5 m and the median and p99 of per-solve wall times over all 10,000
//! targets (single thread), then the jitter figure.

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::{bench_cycling, iiwa, trac_ik_ccd_config};
use ikarus_solve::ccd::{self, CcdWorkspace};
use ikarus_solve::{CcdConfig, IkTask};

fn protocol(config: &CcdConfig, label: &str, workspace: &mut CcdWorkspace) {
    let figures =
        iiwa::position_protocol(|s, t, pose| ccd::solve_with(s, t, config, workspace, pose));
    println!("trac_ik/{label}: {figures}");
}

fn jitter(config: &CcdConfig, workspace: &mut CcdWorkspace) {
    let (largest, worst) =
        iiwa::jitter(|s, t, pose| ccd::solve_with(s, t, config, workspace, pose));
    println!(
        "jitter/ccd: largest frame-to-frame joint rotation {largest:.4} rad ({:.2} deg) over 1000 frames, worst residual {worst:.1e} m",
        largest.to_degrees()
    );
}

fn bench_ccd(c: &mut Criterion) {
    let config = trac_ik_ccd_config();
    let mut workspace = CcdWorkspace::new();
    protocol(&config, "ccd_classic_limits", &mut workspace);
    let mut interactive = config;
    interactive.iteration.restarts = 0;
    jitter(&interactive, &mut workspace);

    let s = iiwa::skeleton();
    let samples = iiwa::samples(&s, 100, 7);
    let tasks: Vec<IkTask> = samples.iter().map(|(_, t)| iiwa::task(&s, *t)).collect();
    let mut group = c.benchmark_group("ccd");
    bench_cycling(
        &mut group,
        "iiwa_100_targets_per_solve_mean",
        &s,
        &tasks,
        |t, pose| ccd::solve_with(&s, t, &config, &mut workspace, pose),
    );
    group.finish();
}

criterion_group!(benches, bench_ccd);
criterion_main!(benches);
