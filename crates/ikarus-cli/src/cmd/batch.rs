//! `ikarus batch`: many IK targets for one URDF chain, in parallel.
//!
//! `ikarus batch --urdf FILE --from LINK --to LINK --targets T.json --solver NAME
//! [--budget-us N] [--threads N] [--tolerance E] --out R.json`
//!
//! T.json: `{"targets": [{"position": [x,y,z], "orientation": [x,y,z,w], "seed": [q...]}]}`
//! (orientation and seed optional; the tip frame in the `--from` link's frame; the seed defaults
//! to the middle of the limits). R.json: `{"results": [{"q": [...], "status": "...",
//! "position_error": .., "rotation_error": .., "iterations": .., "restarts": ..,
//! "within_limits": .., "time_ns": ..}]}` in input order, plus a `summary`.
//!
//! NAME is a solver kind with its defaults (`ccd`, `lm`, `jacobian`, `fabrik`, ...), a kind and
//! method (`jacobian/sdls`), or a whole solver object as JSON (`{"kind": "lm", ...}`). `auto`
//! runs the chain's closed form when it has one (S-R-S arm, six-joint leg, spherical-wrist 6R;
//! 6-D targets) and LM otherwise; each result's `solver` and the summary's `ran` say which.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use ikarus_formats::urdf::Urdf;
use ikarus_solve::threaded::{BatchResult, BatchTarget, solve_threaded};
use ikarus_solve::{SolveStatus, SolverConfig, Tolerance};
use serde::{Deserialize, Serialize};

/// Arguments of `ikarus batch`.
#[derive(clap::Args)]
pub struct Args {
    /// The robot (URDF).
    #[arg(long)]
    urdf: PathBuf,
    /// Base link of the chain.
    #[arg(long)]
    from: String,
    /// Tip link of the chain.
    #[arg(long)]
    to: String,
    /// Targets (JSON).
    #[arg(long)]
    targets: PathBuf,
    /// Solver: a kind (`lm`), kind/method (`jacobian/dls`) or a JSON object.
    #[arg(long, default_value = "lm")]
    solver: String,
    /// Time budget per target, microseconds (solvers with restarts stop restarting after it).
    #[arg(long)]
    budget_us: Option<f64>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Success threshold for position (metres) and rotation (radians) errors.
    #[arg(long, default_value_t = 1e-5)]
    tolerance: f64,
    /// Results (JSON).
    #[arg(long)]
    out: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetsFile {
    targets: Vec<BatchTarget>,
}

#[derive(Serialize)]
struct ResultsFile<'a> {
    solver: &'a SolverConfig,
    summary: Summary,
    results: &'a [BatchResult],
}

/// Rates and times over the batch.
#[derive(Serialize)]
struct Summary {
    targets: usize,
    /// Converged with every joint inside its limits.
    succeeded: usize,
    success_rate: f64,
    median_time_ns: u64,
    p99_time_ns: u64,
    /// Targets per solver that ran (`auto` picks a closed form or `lm`).
    ran: std::collections::BTreeMap<String, usize>,
}

/// Parses `--solver`.
///
/// # Errors
/// When the name or JSON names no solver.
pub fn solver_config(name: &str) -> Result<SolverConfig> {
    let json = if name.trim_start().starts_with('{') {
        name.to_owned()
    } else if let Some((kind, method)) = name.split_once('/') {
        format!(r#"{{"kind": "{kind}", "method": "{method}"}}"#)
    } else {
        format!(r#"{{"kind": "{name}"}}"#)
    };
    serde_json::from_str(&json).with_context(|| format!("--solver `{name}`"))
}

/// Runs `ikarus batch`.
///
/// # Errors
/// Unreadable or invalid files, unknown links, an unknown solver.
pub fn run(args: &Args) -> Result<()> {
    let text = std::fs::read_to_string(&args.urdf)
        .with_context(|| format!("reading {}", args.urdf.display()))?;
    let robot = Urdf::parse(&text).map_err(|e| anyhow::anyhow!("{}:{e}", args.urdf.display()))?;
    let chain = robot
        .chain(&args.from, &args.to)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.urdf.display()))?;
    let targets_text = std::fs::read_to_string(&args.targets)
        .with_context(|| format!("reading {}", args.targets.display()))?;
    let targets: TargetsFile = serde_json::from_str(&targets_text).with_context(|| {
        format!(
            "{}: expected {{\"targets\": [...]}}",
            args.targets.display()
        )
    })?;
    let mut solver = solver_config(&args.solver)?;
    if let Some(budget) = args.budget_us {
        if !(budget.is_finite() && budget > 0.0) {
            bail!("--budget-us {budget} must be positive");
        }
        match solver.iteration_mut() {
            Some(iteration) => iteration.time_budget_us = Some(budget),
            None => bail!("solver `{}` has no iteration budget", solver.kind()),
        }
    }
    if !(args.tolerance.is_finite() && args.tolerance > 0.0) {
        bail!("--tolerance {} must be positive", args.tolerance);
    }
    let tolerance = Tolerance {
        position: args.tolerance,
        rotation: args.tolerance,
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    let results = solve_threaded(
        &robot.skeleton,
        &chain,
        &targets.targets,
        &solver,
        tolerance,
        threads,
    );
    let summary = summarize(&results);
    let file = ResultsFile {
        solver: &solver,
        summary,
        results: &results,
    };
    let json = serde_json::to_string(&file)?;
    std::fs::write(&args.out, json).with_context(|| format!("writing {}", args.out.display()))?;
    let s = &file.summary;
    let ran: Vec<String> = s.ran.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    println!(
        "{} targets ({}), {} succeeded ({:.2}%), median {:.1} us, p99 {:.1} us -> {}",
        s.targets,
        ran.join(", "),
        s.succeeded,
        100.0 * s.success_rate,
        s.median_time_ns as f64 / 1e3,
        s.p99_time_ns as f64 / 1e3,
        args.out.display()
    );
    Ok(())
}

fn summarize(results: &[BatchResult]) -> Summary {
    let succeeded = results
        .iter()
        .filter(|r| r.status == SolveStatus::Converged && r.within_limits)
        .count();
    let mut times: Vec<u64> = results.iter().map(|r| r.time_ns).collect();
    times.sort_unstable();
    let at = |p: usize| times.get((times.len() * p / 100).min(times.len().saturating_sub(1)));
    Summary {
        targets: results.len(),
        succeeded,
        success_rate: if results.is_empty() {
            0.0
        } else {
            succeeded as f64 / results.len() as f64
        },
        median_time_ns: at(50).copied().unwrap_or(0),
        p99_time_ns: at(99).copied().unwrap_or(0),
        ran: results
            .iter()
            .fold(std::collections::BTreeMap::new(), |mut ran, r| {
                *ran.entry(r.solver.clone().unwrap_or_default()).or_insert(0) += 1;
                ran
            }),
    }
}
