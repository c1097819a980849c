//! The humanoid reach protocol ([`ikarus_bench::humanoid`]) as a correctness test: at their
//! defaults, classic CCD, classic CCD with length damping and MMD-style CCD each bring the left
//! hand within tolerance of at least 95% of the targets Levenberg–Marquardt reaches, judged by
//! forward kinematics, every returned pose inside the joint limits. The times are measured by
//! `benches/ccd.rs`, not here.

use ikarus_bench::humanoid::{self, Figures};
use ikarus_solve::SolverWorkspace;

#[test]
fn every_ccd_variant_reaches_95_percent_of_what_lm_reaches_within_limits() {
    let s = humanoid::skeleton();
    let targets = humanoid::targets(&s, humanoid::TARGETS, humanoid::SEED);
    let mut workspace = SolverWorkspace::new();
    let solvers = humanoid::solvers();
    let reference = humanoid::run(&s, &targets, &solvers[0].1, &mut workspace);
    let reached = reference.iter().filter(|o| o.converged).count();
    // Some targets lie beyond the outstretched arm; most do not.
    assert!(reached >= 45, "LM reached only {reached}/60");
    for (name, config) in &solvers {
        let outcomes = humanoid::run(&s, &targets, config, &mut workspace);
        for o in &outcomes {
            assert!(o.legal, "{name}: a joint outside its limit");
            assert!(o.error.is_finite(), "{name}: {o:?}");
            // The report's residual is the forward-kinematics one.
            assert!((o.error - o.reported_error).abs() < 1e-12, "{name}: {o:?}");
        }
        let figures = Figures::of(&outcomes, &reference);
        eprintln!("{name}: {figures}");
        assert!(
            20 * figures.converged_of_reference >= 19 * figures.reference,
            "{name}: {figures}"
        );
    }
}
