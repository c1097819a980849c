//! CCD on the TRAC-IK protocol (position only) with the iiwa-like arm, the jitter of a
//! warm-started solve following a smoothly moving target, and the humanoid reach protocol
//! ([`ikarus_bench::humanoid`]: the left hand to 60 targets, every CCD variant at its defaults
//! beside Levenberg–Marquardt).
//!
//! Besides criterion's timing of representative solves, the protocol pass prints success
//! rates at 1 mm and 1e-5 m and the median and p99 of per-solve wall times over all 10,000
//! targets (single thread), then the jitter figure, then the humanoid counts. The
//! `ccd_humanoid` group measures the median solve over the 60 humanoid targets: one criterion
//! iteration times every target's solve and counts their median.
//!
//! ## What explains the numbers
//!
//! - Pattern moves: after a sweep lowers the score from `s₀` to `s₁`, every path joint continues
//!   that sweep's change by `r / (1 − r)` (`r = s₁ / s₀`, capped at 16), kept if the score falls.
//! - The median iiwa solve takes 6 sweeps (22 without them); a sweep with its pattern move costs
//!   more, so the time falls less than the sweeps.
//! - The humanoid's straight arm needs them: its pivots lie on one line, so plain sweeps repeat
//!   nearly the same change (error × 0.88 a sweep).
//! - Effector carry: after each joint turn only the effectors move along, with one full FK per
//!   sweep, so a sweep is O(n), not O(n²); hinge angles are cached, not read back by `atan2`.
//! - The p99 (0.32 ms) is hard targets near the workspace boundary that use the whole 1,000-sweep
//!   budget and restarts.
//! - Jitter (0.045 rad; 0.037 with `pattern_factor: 0`): steps shrink when the joint-to-effector
//!   vectors lie within 5% of the hinge axis; without that damping joint 5 swung 154° in a frame.
//! - The humanoid medians (21.0 / 16.6 / 25.9 µs) were measured at CCD's former 64-sweep
//!   default, which the converging solves never reach.

use std::time::{Duration, Instant};

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::humanoid::{self, Figures};
use ikarus_bench::{bench_cycling, iiwa, trac_ik_ccd_config};
use ikarus_solve::ccd::{self, CcdWorkspace};
use ikarus_solve::{CcdConfig, IkTask, SolverWorkspace};

fn protocol(config: &CcdConfig, label: &str, workspace: &mut CcdWorkspace) {
    let figures =
        iiwa::position_protocol(|s, t, pose| ccd::solve_with(s, t, config, workspace, pose));
    println!("trac_ik/{label}: {figures}");
}

fn jitter(config: &CcdConfig, workspace: &mut CcdWorkspace) {
    common::print_jitter("ccd", |s, t, pose| {
        ccd::solve_with(s, t, config, workspace, pose)
    });
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

/// The humanoid reach protocol: counts and `Instant` medians printed, then criterion's median
/// solve per solver.
fn bench_humanoid(c: &mut Criterion) {
    let s = humanoid::skeleton();
    let targets = humanoid::targets(&s, humanoid::TARGETS, humanoid::SEED);
    let tasks: Vec<IkTask> = targets.iter().map(|&t| humanoid::task(&s, t)).collect();
    let mut workspace = SolverWorkspace::new();
    let solvers = humanoid::solvers();
    let reference = humanoid::run(&s, &targets, &solvers[0].1, &mut workspace);
    for (name, config) in &solvers {
        let outcomes = humanoid::run(&s, &targets, config, &mut workspace);
        println!(
            "ccd_humanoid/{name}: {}",
            Figures::of(&outcomes, &reference)
        );
    }
    let mut group = c.benchmark_group("ccd_humanoid");
    group.sample_size(30);
    for (name, config) in &solvers {
        group.bench_function(format!("{name}_median_of_60"), |b| {
            let mut times = vec![0.0; tasks.len()];
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    for (task, time) in tasks.iter().zip(&mut times) {
                        let mut pose = s.rest_pose();
                        let start = Instant::now();
                        std::hint::black_box(ikarus_solve::solve_with(
                            &s,
                            task,
                            config,
                            &mut workspace,
                            &mut pose,
                        ));
                        *time = start.elapsed().as_secs_f64();
                    }
                    times.sort_by(f64::total_cmp);
                    total += Duration::from_secs_f64(humanoid::median(&times));
                }
                total
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_ccd, bench_humanoid);
criterion_main!(benches);
