//! A slice of the soak run (`soak --seed 1 --tasks N`): every solver kind on random
//! skeletons and tasks, and no panic, NaN, limit violation, report that FK contradicts, false
//! `converged` or `unreachable`, moved base, or accepted bad input (see `ikarus_bench::soak`).
//! The slice is the CI slice, 20,000 tasks (a few minutes in the test profile on two
//! cores); the full run is the `soak` binary (BENCHMARKS.md, "Soak").

use ikarus_bench::soak::{self, SoakOptions};

/// Tasks in the slice.
const TASKS: u64 = 20_000;

#[test]
fn every_solver_survives_a_soak_slice_without_a_failure() {
    let report = soak::run(
        &SoakOptions {
            seed: 1,
            start: 0,
            tasks: TASKS,
            threads: 2,
        },
        &|_| {},
    );
    // Every solver ran on every task, and the slice exercised each outcome.
    for (label, counts) in &report.solvers {
        assert_eq!(counts.solves, TASKS, "{label}");
        assert_eq!(
            counts.statuses.iter().sum::<u64>() + counts.failures[0],
            TASKS,
            "{label}"
        );
    }
    let status = |label: &str, k: usize| {
        report
            .solvers
            .iter()
            .find(|(l, _)| *l == label)
            .map_or(0, |(_, c)| c.statuses[k])
    };
    for label in ["lm", "two_bone", "limb7", "aim", "leg6"] {
        assert!(status(label, 0) > 0, "{label} never converged in the slice");
    }
    assert!(status("ccd", 2) > 0, "no unreachable task in the slice");
    assert!(status("ccd", 3) > 0, "no bad input in the slice");
    let examples: Vec<String> = report
        .examples
        .iter()
        .map(|e| format!("{} {} task {}: {}", e.solver, e.category, e.task, e.detail))
        .collect();
    assert_eq!(
        report.total_failures(),
        0,
        "soak failures (seed 1):\n{}{}",
        report.table(),
        examples.join("\n")
    );
}
