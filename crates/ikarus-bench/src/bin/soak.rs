//! `soak --tasks N --seed S [--threads T] [--start I] [--report FILE.json] [--show]`: runs
//! every solver kind on N random cases (see `ikarus_bench::soak`), prints a table of failure
//! counts and statuses per solver, writes the JSON report, and exits with status 1 when any
//! failure count is above zero. `--start I --tasks 1 --show` reproduces one case and prints
//! it with every solver's report.
//!
//! Statuses of the 1,000,000-task run in BENCHMARKS.md (`--seed 1 --tasks 1000000 --threads 2`,
//! EPYC-2, 2026-11-24, before the humanoid cases and `body`):
//!
//! | solver | converged | max_iterations | unreachable | invalid_input |
//! |---|---:|---:|---:|---:|
//! | ccd classic | 362,409 | 356,653 | 117,263 | 163,675 |
//! | lm | 473,567 | 245,495 | 117,263 | 163,675 |
//! | fabrik | 268,278 | 450,784 | 117,263 | 163,675 |
//! | jacobian pinv | 476,042 | 243,020 | 117,263 | 163,675 |
//! | jacobian dls | 473,333 | 245,729 | 117,263 | 163,675 |
//! | two_bone | 38,029 | 3,327 | 223,991 | 734,653 |
//! | limb7 | 32,728 | 6,425 | 150,065 | 810,782 |
//! | aim | 161,781 | 1,105 | 224,019 | 613,095 |
//! | leg6 | 17,387 | 102 | 41,910 | 940,601 |

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use ikarus_bench::soak::{self, SoakOptions};

/// Soak every ikarus solver on random skeletons and tasks.
#[derive(Parser)]
struct Args {
    /// Number of tasks.
    #[arg(long, default_value_t = 10_000)]
    tasks: u64,
    /// The run's seed (every case is drawn from the seed and its task index).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// First task index.
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Where to write the JSON report.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Print each case (skeleton, task, start pose) and every solver's report.
    #[arg(long)]
    show: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.show {
        show(&args);
    }
    // Solver panics are counted per solve; the default hook would print each one.
    soak::quiet_solver_panics();
    let options = SoakOptions {
        seed: args.seed,
        start: args.start,
        tasks: args.tasks,
        threads: args.threads,
    };
    let step = (args.tasks / 100).max(1000);
    let report = soak::run(&options, &|done| {
        if done.is_multiple_of(step) {
            eprint!("\r{done} / {} tasks", args.tasks);
            let _ = std::io::stderr().flush();
        }
    });
    eprintln!();
    println!(
        "soak: seed {}, tasks {}..{}, {} threads, {:.1} s",
        report.seed,
        report.start,
        report.start + report.tasks,
        report.threads,
        report.seconds
    );
    print!("{}", report.table());
    for e in &report.examples {
        println!(
            "  {} {} task {}: {}",
            e.solver, e.category, e.task, e.detail
        );
    }
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    let failures = report.total_failures();
    if failures > 0 {
        println!("{failures} failures");
        std::process::exit(1);
    }
    Ok(())
}

/// Prints the cases of the run and every solver's outcome on them.
fn show(args: &Args) {
    let mut workspace = ikarus_solve::SolverWorkspace::new();
    for index in args.start..args.start + args.tasks {
        let case = soak::case(args.seed, index);
        println!(
            "task {index}: {} ({:?} goals, bad input {:?})",
            case.shape, case.goals, case.bad_input
        );
        let s = &case.skeleton;
        for j in s.joints() {
            let parent = s.parent(j).map_or("-", |p| s.name(p));
            println!(
                "  {} <- {parent}: rest {:?}, limit {:?}, start rotation {:?}",
                s.name(j),
                s.rest(j),
                s.limit(j),
                case.start[j].rotation
            );
        }
        println!("  task {:?}", case.task);
        for (label, config) in soak::solvers() {
            let outcome = soak::solve_case(&case, &config, &mut workspace);
            match outcome.report {
                Ok(r) => println!(
                    "  {label}: {:?} p {:e} r {:e} it {} restarts {} limits {:?} {}",
                    r.status,
                    r.position_error,
                    r.rotation_error,
                    r.iterations,
                    r.restarts,
                    r.active_limits,
                    r.message.unwrap_or_default()
                ),
                Err(message) => println!("  {label}: PANIC {message}"),
            }
        }
    }
}
