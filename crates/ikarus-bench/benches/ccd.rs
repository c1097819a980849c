//! CCD on the TRAC-IK protocol (position only) with the iiwa-like arm, and the jitter of a
//! warm-started solve following a smoothly moving target.
//!
//! Besides criterion's timing of representative solves, the protocol pass prints success
//! rates at 1 mm and 1e-5 m and the median and p99 of per-solve wall times over all 10,000
//! targets (single thread), then the jitter figure.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::{iiwa, trac_ik_ccd_config};
use ikarus_core::{ModelPose, fk};
use ikarus_solve::ccd::{self, CcdWorkspace};
use ikarus_solve::{CcdConfig, IkTask};

fn protocol(config: &CcdConfig, label: &str) {
    let s = iiwa::skeleton();
    let flange = s.joint("flange").expect("iiwa flange");
    let samples = iiwa::samples(&s, 10_000, 42);
    let mut workspace = CcdWorkspace::new();
    let mut model = ModelPose::new(&s);
    let mut times = Vec::with_capacity(samples.len());
    let (mut mm, mut fine) = (0, 0);
    for (_, target) in &samples {
        let t = iiwa::task(&s, *target);
        let mut pose = s.rest_pose();
        let start = Instant::now();
        let report = ccd::solve_with(&s, &t, config, &mut workspace, &mut pose);
        times.push(start.elapsed().as_nanos());
        black_box(report);
        fk::forward_kinematics(&s, &pose, &mut model);
        let error = (model.position(flange) - *target).length();
        mm += usize::from(error < 1e-3);
        fine += usize::from(error < 1e-5);
    }
    times.sort_unstable();
    let n = times.len();
    println!(
        "trac_ik/{label}: {:.2}% within 1 mm, {:.2}% within 1e-5 m, median {:.1} us, p99 {:.1} us",
        100.0 * mm as f64 / n as f64,
        100.0 * fine as f64 / n as f64,
        times[n / 2] as f64 / 1e3,
        times[n * 99 / 100] as f64 / 1e3,
    );
}

fn jitter(config: &CcdConfig) {
    let s = iiwa::skeleton();
    let joints = iiwa::joints(&s);
    let mut workspace = CcdWorkspace::new();
    let mut pose = s.rest_pose();
    let mut largest: f64 = 0.0;
    let mut worst_error: f64 = 0.0;
    for k in 0..1000 {
        let previous = pose.clone();
        let report = ccd::solve_with(
            &s,
            &iiwa::task(&s, iiwa::jitter_target(k)),
            config,
            &mut workspace,
            &mut pose,
        );
        worst_error = worst_error.max(report.position_error);
        if k > 0 {
            for &j in &joints {
                let turned = previous[j].rotation.angle_between(pose[j].rotation);
                if std::env::var("IKARUS_DEBUG").is_ok() && turned > 0.2 {
                    println!(
                        "frame {k} joint {} turned {turned:.3} iterations {} restarts {}",
                        s.name(j),
                        report.iterations,
                        report.restarts
                    );
                }
                largest = largest.max(turned);
            }
        }
    }
    println!(
        "jitter/ccd: largest frame-to-frame joint rotation {:.4} rad ({:.2} deg) over 1000 frames, worst residual {worst_error:.1e} m",
        largest,
        largest.to_degrees()
    );
}

fn bench_ccd(c: &mut Criterion) {
    let config = trac_ik_ccd_config();
    protocol(&config, "ccd_classic_limits");
    let mut interactive = config;
    interactive.iteration.restarts = 0;
    jitter(&interactive);

    let s = iiwa::skeleton();
    let samples = iiwa::samples(&s, 100, 7);
    let mut workspace = CcdWorkspace::new();
    let tasks: Vec<IkTask> = samples.iter().map(|(_, t)| iiwa::task(&s, *t)).collect();
    let mut group = c.benchmark_group("ccd");
    group.bench_function("iiwa_100_targets_per_solve_mean", |b| {
        let mut k = 0;
        b.iter(|| {
            let mut pose = s.rest_pose();
            k = (k + 1) % tasks.len();
            black_box(ccd::solve_with(
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

criterion_group!(benches, bench_ccd);
criterion_main!(benches);
