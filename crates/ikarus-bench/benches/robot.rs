//! Closed forms on real robots (`ikarus_solve::robot`) under the TRAC-IK protocol: 10,000 joint
//! vectors uniform inside the limits (seed 42) → 6-D tip targets; every solve from the middle
//! of the limits; success = 1e-5 m and 1e-5 rad with every joint inside its limits, judged by
//! forward kinematics of the returned `q` (`trac_ik::succeeded`). Single thread.
//!
//! The protocol pass runs `SolverConfig::Auto` through `solve_threaded` (after an untimed
//! warm-up on the first 1,000 targets) and prints, per chain,
//! which solver ran, the success rate and the median, p99 and mean of the per-solve times
//! (the closed form's own call; LM's `solve_with` on chains without one). Criterion then
//! times `ClosedForm::solve` alone per target (cycling over the targets) and a whole batch of
//! the targets on one thread (throughput per core).
//!
//! `IKARUS_TRAC_IK_TARGETS=N` runs N targets instead of 10,000.
//!
//! Instructions per solve (BENCHMARKS.md; no machine changes them): callgrind on the bench
//! binary (`--bench 'kukaIiwa7.*closed_form_per_solve' --profile-time 1`): the
//! instructions of `ClosedForm::solve` over its call count.
//!
//! ## What explains the numbers
//!
//! - The iiwas' common path (83% of targets: a legal branch at the seed's swivel) is two
//!   `Limb7::solve_position` calls, four Euler splits (12 `atan2`) and the limit fit of 8 branches.
//! - Other targets use exact feasible-swivel intervals: each rotation entry is
//!   `a·sin ψ + b·cos ψ + c`, so limits meet at closed-form roots (at most 48), one test per piece.
//! - The exact intervals took kukaIiwa7's mean from 7.04 to 3.51 µs and its p99 from 60.3 to
//!   26.6 µs (probe).
//! - The 2π/128 sampled search missed the `simple_humanoid` arm's 23 targets with narrower feasible
//!   sets; it now runs only where the solution is not a rotation about the swivel axis.
//! - The first pass after the bench starts ran slower (1.30–1.46 µs against 0.90 µs a minute
//!   later, p99 and mean too: the machine, not the code), hence the warm-up.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_bench::trac_ik::{self, Robot};
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_solve::limb7::SwivelPolicy;
use ikarus_solve::robot::ClosedForm;
use ikarus_solve::threaded::{BatchTarget, solve_threaded};

const SEED: u64 = 42;

/// Targets solved untimed before each chain's protocol pass.
const WARM_UP: usize = 1_000;

fn bench_robot(c: &mut Criterion) {
    let config = ikarus_bench::trac_ik_auto_config();
    let mut loaded = Vec::new();
    for (file, base, tip) in ikarus_bench::ROBOT_CHAINS {
        let robot = Robot::load(file, base, tip).expect("benchmarks need ../shared/data/urdf");
        let targets: Vec<BatchTarget> = robot
            .samples(ikarus_bench::trac_ik::target_count(), SEED)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        // An untimed warm-up on the first targets (caches, page faults, branch predictors),
        // as criterion warms up before it measures: the first chain's timed pass otherwise
        // ran 20–40 % slower than the same pass a minute later.
        let warm_up = &targets[..targets.len().min(WARM_UP)];
        black_box(solve_threaded(
            robot.skeleton(),
            &robot.chain,
            warm_up,
            &config,
            trac_ik::TOLERANCE,
            1,
        ));
        let results = robot.solve(&targets, &config, 1);
        let f = trac_ik::figures(&robot, &targets, &results);
        let ran = results
            .first()
            .and_then(|r| r.solver.clone())
            .unwrap_or_default();
        let failed = targets.len()
            - targets
                .iter()
                .zip(&results)
                .filter(|(t, r)| trac_ik::succeeded(&robot, t, r))
                .count();
        println!(
            "robot/{file}/{tip}/auto ({ran}): {:.2}% solved ({failed} failed), median {:.3} us, \
             p99 {:.3} us, mean {:.3} us",
            100.0 * f.success_rate,
            f.median_us,
            f.p99_us,
            f.mean_us
        );
        if let Ok(form) = ClosedForm::detect(robot.skeleton(), &robot.chain) {
            loaded.push((robot, targets, form));
        }
    }
    let mut group = c.benchmark_group("robot");
    for (robot, targets, form) in &loaded {
        let name = format!(
            "{}/{}",
            robot.file,
            robot.skeleton().name(robot.chain.tip())
        );
        let goals: Vec<(DVec3, DQuat)> = targets
            .iter()
            .map(|t| {
                (
                    DVec3::from_array(t.position),
                    DQuat::from_array(t.orientation.expect("6-D")),
                )
            })
            .collect();
        let seed = robot.chain.middle();
        let mut q = vec![0.0; seed.len()];
        let mut k = 0;
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("{name}/closed_form_per_solve"), |b| {
            b.iter(|| {
                k = (k + 1) % goals.len();
                let (position, rotation) = goals[k];
                black_box(form.solve(position, rotation, &seed, SwivelPolicy::KeepCurrent, &mut q))
            });
        });
        let batch = &targets[..targets.len().min(1000)];
        group.throughput(Throughput::Elements(batch.len() as u64));
        group.bench_function(format!("{name}/batch_1000_one_thread"), |b| {
            b.iter(|| {
                black_box(solve_threaded(
                    robot.skeleton(),
                    &robot.chain,
                    batch,
                    &config,
                    trac_ik::TOLERANCE,
                    1,
                ))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_robot);
criterion_main!(benches);
