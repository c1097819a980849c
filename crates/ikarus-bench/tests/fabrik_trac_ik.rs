//! The TRAC-IK protocol, position only, on the shared URDF robots, as a correctness test of
//! FABRIK at its default settings through `solve_threaded`: targets are tip positions made by
//! forward kinematics of joint vectors uniform inside the limits (seed 42), every solve is
//! seeded from the middle of the limits and asked for 1e-5 m; at least 95% must end within
//! 1 mm, every returned `q` inside its limits. Both are judged by forward kinematics of the
//! returned `q`, not by the solver's report. Times are measured by `benches/trac_ik.rs`.

use ikarus_bench::trac_ik::{self, ROBOTS, Robot};
use ikarus_solve::SolverConfig;
use ikarus_solve::fabrik::FabrikConfig;
use ikarus_solve::threaded::BatchTarget;

/// Targets per robot: enough for a rate to a percent, few enough for the test profile.
const TARGETS: usize = 200;

#[test]
fn fabrik_puts_95_percent_of_position_targets_within_1_mm_on_every_robot() {
    let config = SolverConfig::Fabrik(FabrikConfig::default());
    let mut short = Vec::new();
    for (file, base, tip) in ROBOTS {
        let Some(robot) = Robot::load(file, base, tip) else {
            return;
        };
        let targets: Vec<BatchTarget> = robot
            .samples(TARGETS, 42)
            .into_iter()
            .map(|(_, t)| BatchTarget {
                orientation: None,
                ..t
            })
            .collect();
        let results = robot.solve(&targets, &config, 1);
        let (mut within_mm, mut within_tolerance) = (0, 0);
        let mut errors = Vec::with_capacity(TARGETS);
        for (target, result) in targets.iter().zip(&results) {
            let (p, _) = robot.assert_checked(file, target, result);
            within_mm += usize::from(p < 1e-3);
            within_tolerance += usize::from(p < trac_ik::TOLERANCE.position);
            errors.push(p);
        }
        errors.sort_by(f64::total_cmp);
        eprintln!(
            "{file}: within 1 mm {within_mm}/{TARGETS}, within 1e-5 m {within_tolerance}/{TARGETS}, median miss {:.1e} m, worst {:.1e} m",
            errors[TARGETS / 2],
            errors[TARGETS - 1]
        );
        if within_mm * 100 < 95 * TARGETS {
            short.push(format!("{file}: {within_mm}/{TARGETS} within 1 mm"));
        }
    }
    assert!(short.is_empty(), "{short:?}");
}
