//! The TRAC-IK protocol (6-D targets, 1e-5 m / 1e-5 rad, joints within limits, seeded from
//! the middle of the limits) on the shared URDF robots, as a correctness test of
//! Levenberg–Marquardt through `solve_threaded`: success is judged by forward kinematics of the
//! returned `q`, independently of the solver's report. Times are measured by
//! `benches/trac_ik.rs`, not here.

use ikarus_bench::trac_ik::{self, ROBOTS, Robot};
use ikarus_solve::SolverConfig;
use ikarus_solve::threaded::BatchTarget;

#[test]
fn levenberg_marquardt_solves_the_trac_ik_protocol_on_every_robot() {
    let config: SolverConfig = ikarus_bench::trac_ik_lm_config();
    for (file, base, tip) in ROBOTS {
        let Some(robot) = Robot::load(file, base, tip) else {
            return;
        };
        let samples = robot.samples(1000, 42);
        let targets: Vec<BatchTarget> = samples.iter().map(|(_, t)| t.clone()).collect();
        let results = robot.solve(&targets, &config, 2);
        let mut ok = 0;
        for (target, result) in targets.iter().zip(&results) {
            let success = trac_ik::succeeded(&robot, target, result);
            // The report agrees with forward kinematics of the returned q.
            assert_eq!(success, trac_ik::converged(result), "{file}: {result:?}");
            let (_, r) = robot.assert_checked(file, target, result);
            assert!(
                (r - result.rotation_error).abs() < 1e-9,
                "{file}: {r:e} vs {:e}",
                result.rotation_error
            );
            ok += usize::from(success);
        }
        assert!(ok >= 998, "{file}: {ok} of 1000 solved");
    }
}
