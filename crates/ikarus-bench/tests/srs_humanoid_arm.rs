//! The S-R-S closed form on the left arm of `simple_humanoid.urdf` (`torso → l_wrist`) under
//! the TRAC-IK protocol: all 10,000 targets of `benches/robot.rs` (random legal joint vectors, seed 42 →
//! 6-D tip targets, every solve from the middle of the limits) must be solved, judged by
//! forward kinematics of the returned `q` with every joint legal. Each target comes from a
//! legal joint vector, so a swivel and a branch that fit the limits exist for every one:
//! `unreachable` would be wrong. Times are in `benches/robot.rs`.

use ikarus_bench::trac_ik::{self, Robot};
use ikarus_solve::SolverConfig;
use ikarus_solve::limb7::SwivelPolicy;
use ikarus_solve::robot::AutoConfig;
use ikarus_solve::threaded::BatchTarget;

#[test]
fn every_protocol_target_of_the_humanoid_arm_is_solved() {
    let Some(robot) = Robot::load("simple_humanoid.urdf", "torso", "l_wrist") else {
        return;
    };
    let samples = robot.samples(10_000, 42);
    let targets: Vec<BatchTarget> = samples.iter().map(|(_, t)| t.clone()).collect();
    let config = SolverConfig::Auto(AutoConfig {
        swivel: SwivelPolicy::KeepCurrent,
        ..AutoConfig::default()
    });
    let results = robot.solve(&targets, &config, 2);
    let mut failed = Vec::new();
    for (i, (target, result)) in targets.iter().zip(&results).enumerate() {
        assert_eq!(result.solver.as_deref(), Some("srs_arm"));
        let (p, r, legal) = robot.check(target, result);
        assert!(legal, "target {i}: q outside the limits: {result:?}");
        if !trac_ik::succeeded(&robot, target, result) {
            failed.push(format!(
                "target {i}: {p:.1e} m, {r:.1e} rad, {:?}",
                result.status
            ));
        }
    }
    assert!(failed.is_empty(), "{} failed: {failed:#?}", failed.len());
}
