//! The TRAC-IK protocol on the shared URDF robots as a correctness test.

use ikarus_bench::trac_ik::{self, ROBOTS, Robot};
use ikarus_solve::SolverConfig;
use ikarus_solve::batch::solve_batch;

#[test]
fn explore() {
    for (file, base, tip) in ROBOTS {
        let Some(robot) = Robot::load(file, base, tip) else {
            return;
        };
        let samples = robot.samples(300, 42);
        let targets: Vec<_> = samples.iter().map(|(_, t)| t.clone()).collect();
        let config: SolverConfig = serde_json::from_str(
            r#"{"kind":"ccd","iteration":{"max_iterations":1000,"restarts":8}}"#,
        )
        .unwrap();
        let results = solve_batch(
            robot.skeleton(),
            &robot.chain,
            &targets,
            &config,
            trac_ik::TOLERANCE,
            2,
        );
        let f = trac_ik::figures(&robot, &targets, &results);
        let conv = results.iter().filter(|r| trac_ik::converged(r)).count();
        println!("{file}: {f:?} converged {conv}");
    }
}
