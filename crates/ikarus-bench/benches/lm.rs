//! Levenberg–Marquardt on the iiwa-like arm (`ikarus_bench::iiwa`): the TRAC-IK protocol with
//! position goals (10,000 targets, seed 42, start at the middle of the limits, 1e-5 m), the
//! jitter of a warm-started solve following a smoothly moving target, and criterion's time per
//! solve. The 6-D protocol on the real URDF robots is `benches/trac_ik.rs`.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::iiwa;
use ikarus_core::{ModelPose, fk};
use ikarus_solve::IkTask;
use ikarus_solve::lm::{self, LmConfig, LmWorkspace};

fn protocol(config: &LmConfig) {
    let s = iiwa::skeleton();
    let flange = s.joint("flange").expect("iiwa flange");
    let samples = iiwa::samples(&s, 10_000, 42);
    let mut workspace = LmWorkspace::new();
    let mut model = ModelPose::new(&s);
    let mut times = Vec::with_capacity(samples.len());
    let mut sweeps = Vec::with_capacity(samples.len());
    let mut fine = 0;
    for (_, target) in &samples {
        let t = iiwa::task(&s, *target);
        let mut pose = s.rest_pose();
        let start = Instant::now();
        let report = lm::solve_with(&s, &t, config, &mut workspace, &mut pose);
        times.push(start.elapsed().as_nanos());
        sweeps.push(report.iterations);
        fk::forward_kinematics(&s, &pose, &mut model);
        let error = (model.position(flange) - *target).length();
        fine += usize::from(error < 1e-5 && s.limit_violation(&pose).is_none());
    }
    times.sort_unstable();
    sweeps.sort_unstable();
    let n = times.len();
    println!(
        "lm/iiwa position: {:.2}% within 1e-5 m, median {:.1} us, p99 {:.1} us, median sweeps {}",
        100.0 * fine as f64 / n as f64,
        times[n / 2] as f64 / 1e3,
        times[n * 99 / 100] as f64 / 1e3,
        sweeps[n / 2]
    );
}

fn jitter(config: &LmConfig) {
    let s = iiwa::skeleton();
    let joints = iiwa::joints(&s);
    let mut workspace = LmWorkspace::new();
    let mut pose = s.rest_pose();
    let (mut largest, mut worst_error): (f64, f64) = (0.0, 0.0);
    for k in 0..1000 {
        let previous = pose.clone();
        let task = iiwa::task(&s, iiwa::jitter_target(k));
        let report = lm::solve_with(&s, &task, config, &mut workspace, &mut pose);
        worst_error = worst_error.max(report.position_error);
        if k > 0 {
            for &j in &joints {
                largest = largest.max(previous[j].rotation.angle_between(pose[j].rotation));
            }
        }
    }
    println!(
        "jitter/lm: largest frame-to-frame joint rotation {largest:.4} rad ({:.2} deg) over 1000 frames, worst residual {worst_error:.1e} m",
        largest.to_degrees()
    );
}

fn bench_lm(c: &mut Criterion) {
    let config = LmConfig::default();
    protocol(&config);
    let mut interactive = config;
    interactive.iteration.restarts = 0;
    jitter(&interactive);

    let s = iiwa::skeleton();
    let tasks: Vec<IkTask> = iiwa::samples(&s, 100, 7)
        .iter()
        .map(|(_, t)| iiwa::task(&s, *t))
        .collect();
    let mut workspace = LmWorkspace::new();
    let mut group = c.benchmark_group("lm");
    group.bench_function("iiwa_100_targets_per_solve_mean", |b| {
        let mut k = 0;
        b.iter(|| {
            let mut pose = s.rest_pose();
            k = (k + 1) % tasks.len();
            black_box(lm::solve_with(
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

criterion_group!(benches, bench_lm);
criterion_main!(benches);
