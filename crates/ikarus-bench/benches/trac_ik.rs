//! The TRAC-IK benchmark protocol on panda, kukaIiwa7, iiwa14 and ur5 (`../shared/data/urdf`):
//! 10,000 joint vectors uniform inside the limits (seed 42) mapped through forward kinematics
//! to 6-D targets; every solve seeded from the middle of the limits; success = position error
//! < 1e-5 m and rotation error < 1e-5 rad with every joint inside its limits, judged by forward
//! kinematics of the returned `q`. Single thread, through `solve_threaded` (as `ikarus batch`).
//!
//! The protocol pass prints, per robot and solver, the success rate, median, p99 and mean of
//! the per-solve wall times; the `k` crate's `JacobianIkSolver` runs the same targets (made by
//! its own forward kinematics of the same joint vectors) in the same run. Criterion then times
//! the mean per solve over 100 targets per robot.
//!
//! `IKARUS_TRAC_IK_TARGETS=N` runs N targets instead of 10,000 (quick looks);
//! `IKARUS_TRAC_IK_NO_PEER=1` leaves `k` out (profiling ikarus alone);
//! `IKARUS_TRAC_IK_POSITION_ONLY=1` drops the targets' orientations (3-D targets, success =
//! position error < 1e-5 m with every joint inside its limits; the lines add the share within
//! 1 mm) and leaves `k` out (its solver has no position-only mode).
//!
//! ## What explains the numbers
//!
//! - LM is the joint-vector solver `solve_threaded` runs on hinge chains. Panda's profile, share of
//!   instructions (of time): forward pass 35% (41%), `LDLᵀ` 24% (20%), `JᵀJ` and `Jᵀe` 18% (8%),
//!   damped system and active-set rounds 20% (20%).
//! - The p99 is restarts: before the restart rules, 2.5% of panda's targets needed 6 or more and
//!   took 21.5% of the time; most failed starts ended with a joint on a bound.
//! - A sweep leaving a joint on a bound with the score within 10% ends a start; every other restart
//!   draws from the middle 70% of each range (after such a start, only the joints on a bound).
//! - `LDLᵀ`, not Cholesky: no square roots (the sqrt + division chain was a fifth of the time); its
//!   loops and `JᵀJ`'s triangle written out per index (loop counting was a third of `LDLᵀ`).
//! - `sin_cos` picks its quadrant by bits, not a branch (6% of instructions, 12% of the time), and
//!   runs its polynomials by Estrin's scheme.
//! - AVX2, not AVX-512: dispatched to AVX-512 (pulp's first choice) the same code ran 25–38% slower
//!   than the baseline build on this machine.
//! - The best `q` is the converged one first, then the lower score: by score alone a converged `q`
//!   lost to one just over the position tolerance with a far smaller rotation error.
//! - No untimed warm-up here; `benches/robot.rs` has one (1,000 targets) because its first pass
//!   ran 20–40% slow right after the bench started.
//! - `k` fails every UR5 target: the middle of the UR5's ±2π limits is `q = 0`, a singular
//!   stretched pose, where its solver stops with `InverseMatrixError`.
//! - CCD and FABRIK are animation solvers: on 6-D goals at 1e-5 rad they converge linearly and
//!   mostly run out of their 500 sweeps.
//! - Position only (`IKARUS_TRAC_IK_POSITION_ONLY=1 IKARUS_TRAC_IK_SOLVERS=lm,ccd,fabrik`, EPYC-2,
//!   load 6.7–7.6, 2026-11-23): within 1 mm FABRIK 99.07–99.82%, CCD 99.23–99.95%, LM 100.00%;
//!   medians FABRIK 58.5–161 µs, CCD 15.3–34.8 µs, LM 12.0–15.8 µs.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::trac_ik::{self, Figures, ROBOTS, Robot, figures_of_times};
use ikarus_solve::fabrik::FabrikConfig;
use ikarus_solve::jacobian::{JacobianConfig, JacobianMethod};
use ikarus_solve::threaded::{BatchResult, BatchTarget, solve_threaded};
use ikarus_solve::{CcdConfig, SolverConfig};
use k::nalgebra as na;
use k::prelude::*;

const SEED: u64 = 42;

/// Every iterative solver on the same targets: Levenberg–Marquardt with the protocol's restart
/// budget, the Jacobian family as `benches/jacobian.rs` sets it up (500 sweeps, 8 restarts),
/// CCD with its defaults and the same budget, FABRIK with its defaults (500 sweeps). `IKARUS_TRAC_IK_SOLVERS=lm,dls`
/// picks some.
fn solvers() -> Vec<(&'static str, SolverConfig)> {
    let jacobian = |method| {
        let mut config = JacobianConfig::new(method, 500);
        config.iteration.restarts = 8;
        SolverConfig::Jacobian(config)
    };
    let mut ccd = CcdConfig::default();
    ccd.iteration.max_iterations = 500;
    let all = vec![
        ("lm", ikarus_bench::trac_ik_lm_config()),
        ("jacobian_dls", jacobian(JacobianMethod::Dls)),
        ("jacobian_pinv", jacobian(JacobianMethod::Pinv)),
        ("jacobian_sdls", jacobian(JacobianMethod::Sdls)),
        ("ccd", SolverConfig::Ccd(ccd)),
        ("fabrik", SolverConfig::Fabrik(FabrikConfig::default())),
    ];
    match std::env::var("IKARUS_TRAC_IK_SOLVERS") {
        Ok(names) => all
            .into_iter()
            .filter(|(n, _)| names.split(',').any(|w| n.contains(w)))
            .collect(),
        Err(_) => all,
    }
}

fn position_only() -> bool {
    std::env::var_os("IKARUS_TRAC_IK_POSITION_ONLY").is_some()
}

fn print(file: &str, solver: &str, f: &Figures) {
    println!(
        "trac_ik/{file}/{solver}: {:.2}% solved, median {:.1} us, p99 {:.1} us, mean {:.1} us",
        100.0 * f.success_rate,
        f.median_us,
        f.p99_us,
        f.mean_us
    );
}

/// The share of `results` whose tip is within 1 mm of its target, joints inside the limits,
/// judged by forward kinematics of the returned `q`.
fn within_1_mm(robot: &Robot, targets: &[BatchTarget], results: &[BatchResult]) -> f64 {
    let ok = targets
        .iter()
        .zip(results)
        .filter(|(t, r)| {
            let (position, _, legal) = robot.check(t, r);
            position < 1e-3 && legal
        })
        .count();
    ok as f64 / targets.len().max(1) as f64
}

/// The `k` crate on the same joint vectors: targets from its own FK, seeded from the middle.
fn k_protocol(robot: &Robot, samples: &[(Vec<f64>, BatchTarget)]) -> Option<Figures> {
    if std::env::var_os("IKARUS_TRAC_IK_NO_PEER").is_some() {
        return None;
    }
    let dir = ikarus_testdata::require("urdf", robot.file)?;
    let chain = k::Chain::<f64>::from_urdf_file(dir.join(robot.file)).ok()?;
    let tip_joint = robot.urdf.joint_of(robot.chain.tip())?.name.clone();
    let arm = k::SerialChain::from_end(chain.find(&tip_joint)?);
    if arm.dof() != robot.chain.dof() {
        println!(
            "trac_ik/{}/k: skipped, k sees {} joints",
            robot.file,
            arm.dof()
        );
        return None;
    }
    let solver = k::JacobianIkSolver::new(1e-5, 1e-5, 0.5, 100);
    let middle = robot.chain.middle();
    let mut times = Vec::with_capacity(samples.len());
    let mut ok = 0;
    for (q, _) in samples {
        arm.set_joint_positions_unchecked(q);
        arm.update_transforms();
        let target: na::Isometry3<f64> = arm.end_transform();
        arm.set_joint_positions_unchecked(&middle);
        arm.update_transforms();
        let start = Instant::now();
        let solved = solver.solve(&arm, &target);
        times.push(start.elapsed().as_nanos() as f64 / 1e3);
        arm.update_transforms();
        let reached = arm.end_transform();
        let position = (reached.translation.vector - target.translation.vector).norm();
        let rotation = reached.rotation.angle_to(&target.rotation);
        let within = robot.chain.within_limits(&arm.joint_positions(), 1e-9);
        ok += usize::from(solved.is_ok() && position < 1e-5 && rotation < 1e-5 && within);
    }
    Some(figures_of_times(ok, &mut times))
}

fn protocol() -> Vec<(Robot, Vec<BatchTarget>)> {
    let mut loaded = Vec::new();
    for (file, base, tip) in ROBOTS {
        let robot = Robot::load(file, base, tip).expect("benchmarks need ../shared/data/urdf");
        let samples = robot.samples(ikarus_bench::trac_ik::target_count(), SEED);
        let targets: Vec<BatchTarget> = samples
            .iter()
            .map(|(_, t)| BatchTarget {
                orientation: t.orientation.filter(|_| !position_only()),
                ..t.clone()
            })
            .collect();
        for (name, config) in solvers() {
            let results = robot.solve(&targets, &config, 1);
            print(file, name, &trac_ik::figures(&robot, &targets, &results));
            if position_only() {
                println!(
                    "trac_ik/{file}/{name}: {:.2}% within 1 mm",
                    100.0 * within_1_mm(&robot, &targets, &results)
                );
            }
        }
        let peer = if position_only() {
            None
        } else {
            k_protocol(&robot, &samples)
        };
        if let Some(f) = peer {
            print(file, "k_jacobian", &f);
        }
        loaded.push((robot, targets));
    }
    loaded
}

fn bench_trac_ik(c: &mut Criterion) {
    let loaded = protocol();
    let mut group = c.benchmark_group("trac_ik");
    for (robot, targets) in &loaded {
        for (name, config) in solvers().into_iter().filter(|(n, _)| *n == "lm") {
            let mut k = 0;
            let subset = &targets[..targets.len().min(100)];
            group.bench_function(format!("{}/{name}_mean_of_100", robot.file), |b| {
                b.iter(|| {
                    k = (k + 1) % subset.len();
                    black_box(solve_threaded(
                        robot.skeleton(),
                        &robot.chain,
                        &subset[k..=k],
                        &config,
                        trac_ik::TOLERANCE,
                        1,
                    ))
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_trac_ik);
criterion_main!(benches);
