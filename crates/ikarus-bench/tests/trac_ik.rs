//! The TRAC-IK protocol (position only) on the iiwa-like arm, as a correctness test: limited
//! CCD must put at least 99% of 10,000 reachable targets within 1 mm, every pose legal. The
//! times are measured by `benches/ccd.rs`, not here.

use ikarus_bench::iiwa;
use ikarus_core::{LocalPose, ModelPose, fk};
use ikarus_solve::ccd::{self, CcdWorkspace};

#[test]
fn limited_ccd_solves_99_percent_within_1_mm() {
    let s = iiwa::skeleton();
    let flange = s.joint("flange").unwrap();
    let samples = iiwa::samples(&s, 10_000, 42);
    let config = ikarus_bench::trac_ik_ccd_config();
    let mut workspace = CcdWorkspace::new();
    let mut model = ModelPose::new(&s);
    let (mut within_mm, mut within_1e5) = (0, 0);
    let mut iterations = Vec::new();
    for (_, target) in &samples {
        let mut pose: LocalPose = s.rest_pose();
        let t = iiwa::task(&s, *target);
        let report = ccd::solve_with(&s, &t, &config, &mut workspace, &mut pose);
        fk::forward_kinematics(&s, &pose, &mut model);
        let error = (model.position(flange) - *target).length();
        assert_eq!(error, report.position_error);
        assert_eq!(s.limit_violation(&pose), None);
        if error >= 1e-3 && std::env::var("IKARUS_DEBUG").is_ok() {
            eprintln!(
                "{:?} err {error:.2e} it {} restarts {}",
                report.status, report.iterations, report.restarts
            );
        }
        within_mm += usize::from(error < 1e-3);
        within_1e5 += usize::from(error < 1e-5);
        iterations.push(report.iterations);
    }
    iterations.sort_unstable();
    eprintln!(
        "within 1 mm: {within_mm}/10000, within 1e-5 m: {within_1e5}/10000, median iterations {}, p99 {}",
        iterations[5000], iterations[9900]
    );
    assert!(within_mm >= 9_900, "{within_mm}/10000 within 1 mm");
}
