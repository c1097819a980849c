//! The naturalness protocol as a test: on every group the example-based solver's
//! MPJPE is at least 30% below the best plain solver's, every solver's returned pose keeps the
//! limits, and the example solver reaches its effectors within 1 mm.

use ikarus_bench::natural::{Protocol, score};

#[test]
fn example_based_ik_lands_nearer_real_postures_than_every_plain_solver() {
    if ikarus_testdata::require("bvh", "natural").is_none() {
        return;
    }
    let protocol = Protocol::load();
    for (g, group) in protocol.groups.iter().enumerate() {
        let cases: Vec<_> = protocol.cases.iter().filter(|c| c.group == g).collect();
        assert!(cases.len() >= 18, "{}: {} cases", group.name, cases.len());
        let mut best_plain = f64::INFINITY;
        let mut example = None;
        for (name, config) in protocol.solvers(g) {
            let s = score(&group.skeleton, &cases, &config);
            println!(
                "{} {name}: MPJPE {:.1} mm, reached {:.0}%, off limits {:.0}%",
                group.name,
                s.mpjpe * 1e3,
                s.reached * 100.0,
                s.violations * 100.0
            );
            assert_eq!(
                s.violations, 0.0,
                "{} {name} left a joint limit",
                group.name
            );
            if name == "example" {
                example = Some(s);
            } else {
                best_plain = best_plain.min(s.mpjpe);
            }
        }
        let example = example.expect("the example solver is in the list");
        assert!(
            example.mpjpe <= 0.7 * best_plain,
            "{}: example {:.1} mm vs best plain {:.1} mm",
            group.name,
            example.mpjpe * 1e3,
            best_plain * 1e3
        );
        assert!(
            example.reached >= 0.99,
            "{}: reached {}",
            group.name,
            example.reached
        );
    }
}
