//! The soak runner: many random cases (skeleton, task, start pose), every solver kind on each,
//! and counts of everything a solver must never do.
//!
//! Each case is drawn from `(seed, task index)` alone ([`draw::case`]), so any failure is
//! reproduced by running one index (`soak --seed S --start I --tasks 1 --show`), whatever
//! the thread count. The cases:
//! - skeletons: 8% the built-in humanoid (effectors on one to six of its hips, head, hands
//!   and feet, no base: the full-body solver's tasks), else chains and trees of 2–60 joints
//!   (smaller ones more often), one limit family
//!   per skeleton (free, locked, hinge, swing–twist, Euler ranges, MMD, or mixed per joint;
//!   some ranges exclude the rest rotation, some hinges are full circles), zero-length and
//!   1e-7 m bones, rest rotations up to π, the root under one of the conformance suite's
//!   parent transforms (translated, rotated, uniform / non-uniform scale, mirrored) and now
//!   and then a scaled inner joint; 8% are a six-hinge robot leg the `leg6` closed form
//!   accepts. The root is always free: with a base joint the driver moves the root to keep
//!   the base in place, which is placement, not a joint rotation.
//! - tasks: 1–4 effectors (mostly leaves) with position and/or orientation goals, a random
//!   base joint half of the time, goals from forward kinematics of a random legal pose
//!   (reachable), three reaches away (unreachable), a mix, or bad input (NaN/inf components,
//!   a zero or non-unit quaternion, 1e300 values, bad weights, tolerances or joints). About
//!   30% of the tasks fit the closed forms: one effector with 2–5 ancestors, no base.
//! - start poses: the rest pose or a random pose, each projected onto the limits.
//!
//! Every solver kind runs on every case from the same start ([`solvers`]): `none`, the three
//! CCD variants, Levenberg–Marquardt, FABRIK, the four Jacobian methods, and the closed forms
//! `two_bone`, `limb7`, `aim` and `leg6`, and the full-body solver `body` (which answer
//! `invalid_input` when the task does not fit them). Counted per solver ([`Counts`]):
//! - `panics`: the solve panicked (caught per solve);
//! - `non_finite`: a NaN or infinite pose, or a NaN residual;
//! - `limit_violations`: a joint the solver turned ends outside its limit by more than
//!   [`LIMIT_TOLERANCE`]; for `none`, which returns the start pose, any joint (its row counts
//!   start poses the limit projection left outside a limit);
//! - `fk_mismatch`: the report's residuals differ from [`ikarus_solve::measure`] on the
//!   returned pose (for `aim`, from the line-of-sight miss and angle it documents), or FK
//!   says every goal is met but the status says otherwise;
//! - `false_converged`: `converged` while FK says a goal is missed, or on a non-finite pose;
//! - `false_unreachable`: `unreachable` while another iterative solver converged (FK-checked)
//!   on the same case. Only the iterative family is compared: those solvers all move the same
//!   joints (the driver's path), while a closed form moves only its chain, and its
//!   `unreachable` (the closed form or an enforced limit says so) is not compared;
//! - `base_moved`: the base joint's model position changed, or its model frame when every
//!   scale between the root and the base is uniform and positive (with a non-uniform scale or
//!   a mirror above the base, a rigid move of the root cannot restore the base's sheared
//!   frame, so only the position is held);
//! - `missed_invalid`: a task with a NaN/inf/zero/non-unit value or an unknown joint was not
//!   answered with `invalid_input`;
//! - `invalid_moved`: an `invalid_input` answer changed the pose;
//! - `prepared_differs` (closed forms `two_bone` and `limb7`): the same task prepared once and
//!   solved with [`ikarus_solve::PreparedTask::solve_in`] on the start pose and its model
//!   pose, or with [`ikarus_solve::PreparedTask::solve_many_in`] for nine copies of the
//!   character at once (SIMD lanes and a remainder), gives another pose or report than the
//!   one-shot solve, or leaves a model pose that is not the forward kinematics of its pose.
//!
//! ## What explains the numbers
//!
//! - Budgets: 64 sweeps and 8 restarts for CCD, FABRIK and the Jacobian transpose and DLS; 32
//!   sweeps for pinv and SDLS (one SVD per sweep); LM 64 sweeps with its 40 restarts.
//! - Earlier runs found: NaN poses reported `converged`, as `report::residuals` used `f64::max`,
//!   which drops NaN (a NaN residual now counts as infinite).
//! - MMD joints 2.1e-8 to 3e-8 rad off their limit: a half turn whose `w` rounded just below 0
//!   failed `contains` (`w` within the tolerance of 0 is now a half turn).
//! - FABRIK moved the base: its requests, products of model rotations, grew non-unit (tenfold a
//!   sweep) and scaled the base's frame; the driver now writes rotations at unit length.
//! - Weights of 1e300 overflowed the normal equations (above 1e12, `MAX_WEIGHT`, is now
//!   `invalid_input`); aim with the target at the eye gave a NaN angle.

pub mod draw;

use std::fmt::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::jacobian::{JacobianConfig, JacobianMethod};
use ikarus_solve::{
    CcdConfig, CcdDamping, CcdVariant, Goal, IkTask, PreparedTask, SolveReport, SolveStatus,
    SolverConfig, SolverWorkspace, measure, solve_with,
};
use serde::Serialize;

pub use draw::{Case, GoalKind, case};

/// A joint counts as outside its limit when its violation exceeds this, radians.
pub const LIMIT_TOLERANCE: f64 = 1e-9;

/// Largest base drift accepted, relative to `1 + |base position|` (as the conformance suite).
const BASE_TOLERANCE: f64 = 1e-9;

/// Failure examples kept per solver and category (the lowest task indices).
const EXAMPLES: usize = 5;

/// Sweep budget of Levenberg–Marquardt in the soak (its default, 500 sweeps with 40
/// restarts, is meant for hard single solves; on 60-joint unreachable goals it dominates the
/// run).
pub const LM_MAX_ITERATIONS: u32 = 64;

/// Sweep budget of the SVD-based Jacobian methods (`pinv`, `sdls`): one SVD per sweep makes
/// them the slowest solvers of the soak. The other iterative solvers keep the default 64
/// sweeps (all keep the default 8 restarts).
pub const SVD_MAX_ITERATIONS: u32 = 32;

/// Every solver kind the soak runs, with its label.
pub fn solvers() -> Vec<(&'static str, SolverConfig)> {
    let ccd = |variant, damping| SolverConfig::Ccd(CcdConfig::new(variant, damping, 64));
    let jacobian = |method, sweeps| SolverConfig::Jacobian(JacobianConfig::new(method, sweeps));
    let mut lm = ikarus_solve::lm::LmConfig::default();
    lm.iteration.max_iterations = LM_MAX_ITERATIONS;
    vec![
        ("none", SolverConfig::None),
        ("ccd", ccd(CcdVariant::Classic, CcdDamping::None)),
        ("ccd/length", ccd(CcdVariant::Classic, CcdDamping::Length)),
        ("ccd/mmd", ccd(CcdVariant::Mmd, CcdDamping::None)),
        ("lm", SolverConfig::Lm(lm)),
        (
            "fabrik",
            SolverConfig::Fabrik(ikarus_solve::fabrik::FabrikConfig::new(64)),
        ),
        (
            "jacobian/transpose",
            jacobian(JacobianMethod::Transpose, 64),
        ),
        (
            "jacobian/pinv",
            jacobian(JacobianMethod::Pinv, SVD_MAX_ITERATIONS),
        ),
        ("jacobian/dls", jacobian(JacobianMethod::Dls, 64)),
        (
            "jacobian/sdls",
            jacobian(JacobianMethod::Sdls, SVD_MAX_ITERATIONS),
        ),
        (
            "two_bone",
            SolverConfig::TwoBone(ikarus_solve::two_bone::TwoBoneConfig::default()),
        ),
        (
            "limb7",
            SolverConfig::Limb7(ikarus_solve::limb7::Limb7Config::default()),
        ),
        (
            "aim",
            SolverConfig::Aim(ikarus_solve::aim::AimConfig::default()),
        ),
        (
            "leg6",
            SolverConfig::Leg6(ikarus_solve::leg6::Leg6Config::default()),
        ),
        (
            "body",
            SolverConfig::Body(ikarus_solve::body::BodyConfig::default()),
        ),
    ]
}

/// True for the solvers run by the shared driver (they move the same joints).
fn iterative(config: &SolverConfig) -> bool {
    matches!(
        config,
        SolverConfig::Ccd(_)
            | SolverConfig::Lm(_)
            | SolverConfig::Fabrik(_)
            | SolverConfig::Jacobian(_)
    )
}

/// What a soak run covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoakOptions {
    /// The run's seed.
    pub seed: u64,
    /// First task index.
    pub start: u64,
    /// Number of tasks (indices `start .. start + tasks`).
    pub tasks: u64,
    /// Worker threads (each with its own [`SolverWorkspace`]); at least 1.
    pub threads: usize,
}

/// The failure categories, in table order.
pub const CATEGORIES: [&str; 10] = [
    "panics",
    "non_finite",
    "limit_violations",
    "fk_mismatch",
    "false_converged",
    "false_unreachable",
    "base_moved",
    "missed_invalid",
    "invalid_moved",
    "prepared_differs",
];

/// Counts of one solver over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Solves run.
    pub solves: u64,
    /// Failures per category, in [`CATEGORIES`] order.
    pub failures: [u64; CATEGORIES.len()],
    /// Statuses: `converged`, `max_iterations`, `unreachable`, `invalid_input`.
    pub statuses: [u64; 4],
    /// Wall time spent in this solver's solves, seconds (diagnostic: the machine is shared).
    pub seconds: f64,
}

impl Counts {
    /// Total failures over all categories.
    pub fn total_failures(&self) -> u64 {
        self.failures.iter().sum()
    }

    fn add(&mut self, other: &Self) {
        self.solves += other.solves;
        for (a, b) in self.failures.iter_mut().zip(other.failures) {
            *a += b;
        }
        for (a, b) in self.statuses.iter_mut().zip(other.statuses) {
            *a += b;
        }
        self.seconds += other.seconds;
    }
}

/// One failure, with what reproduces it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Example {
    /// Solver label.
    pub solver: &'static str,
    /// Category name (one of [`CATEGORIES`]).
    pub category: &'static str,
    /// Task index (the run's seed is in the report).
    pub task: u64,
    /// The case's shape and goals, and what went wrong.
    pub detail: String,
}

/// The outcome of a soak run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SoakReport {
    /// The run's seed.
    pub seed: u64,
    /// First task index.
    pub start: u64,
    /// Tasks run.
    pub tasks: u64,
    /// Threads used.
    pub threads: usize,
    /// Wall time of the whole run, seconds.
    pub seconds: f64,
    /// Failure category names, the order of [`Counts::failures`].
    pub categories: Vec<&'static str>,
    /// Per solver label, in [`solvers`] order.
    pub solvers: Vec<(&'static str, Counts)>,
    /// Up to five examples (lowest task indices) per solver and category.
    pub examples: Vec<Example>,
}

impl SoakReport {
    /// Failures over every solver and category.
    pub fn total_failures(&self) -> u64 {
        self.solvers.iter().map(|(_, c)| c.total_failures()).sum()
    }

    /// The table printed by the `soak` binary: one row per solver, failures then statuses.
    pub fn table(&self) -> String {
        // One short name per category (the length is checked against `CATEGORIES`).
        let short: [&str; CATEGORIES.len()] = [
            "panic", "nonfin", "limit", "fk", "f_conv", "f_unre", "base", "m_inv", "inv_mv", "prep",
        ];
        let mut out = format!("{:<19}{:>9}", "solver", "solves");
        for name in short {
            let _ = write!(out, "{name:>8}");
        }
        for name in ["conv", "max_it", "unreach", "invalid"] {
            let _ = write!(out, "{name:>9}");
        }
        out.push('\n');
        for (label, c) in &self.solvers {
            let _ = write!(out, "{label:<19}{:>9}", c.solves);
            for f in c.failures {
                let _ = write!(out, "{f:>8}");
            }
            for s in c.statuses {
                let _ = write!(out, "{s:>9}");
            }
            out.push('\n');
        }
        out
    }
}

/// Runs tasks `start .. start + tasks` on `threads` threads; `progress` is called with the
/// number of tasks finished so far (from the worker threads, about every 1,000 tasks).
pub fn run(options: &SoakOptions, progress: &(dyn Fn(u64) + Sync)) -> SoakReport {
    let threads = options.threads.max(1);
    let configs = solvers();
    let done = AtomicU64::new(0);
    let began = Instant::now();
    let partials: Vec<Partial> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (configs, done) = (&configs, &done);
                scope.spawn(move || {
                    let mut partial = Partial::new(configs.len());
                    let mut workspace = SolverWorkspace::new();
                    let mut index = options.start + t as u64;
                    while index < options.start + options.tasks {
                        run_case(options.seed, index, configs, &mut workspace, &mut partial);
                        let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if finished.is_multiple_of(1000) {
                            progress(finished);
                        }
                        index += threads as u64;
                    }
                    partial
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("soak workers catch solver panics"))
            .collect()
    });
    let mut total = Partial::new(configs.len());
    for p in partials {
        for (a, b) in total.counts.iter_mut().zip(&p.counts) {
            a.add(b);
        }
        total.examples.extend(p.examples);
    }
    total
        .examples
        .sort_by_key(|e| (e.solver, e.category, e.task));
    let mut examples: Vec<Example> = Vec::new();
    for e in total.examples {
        let same = examples
            .iter()
            .filter(|x| x.solver == e.solver && x.category == e.category)
            .count();
        if same < EXAMPLES {
            examples.push(e);
        }
    }
    examples.sort_by_key(|e| (e.task, e.solver));
    SoakReport {
        seed: options.seed,
        start: options.start,
        tasks: options.tasks,
        threads,
        seconds: began.elapsed().as_secs_f64(),
        categories: CATEGORIES.to_vec(),
        solvers: configs
            .iter()
            .map(|(label, _)| *label)
            .zip(total.counts)
            .collect(),
        examples,
    }
}

/// One thread's counts and examples.
struct Partial {
    counts: Vec<Counts>,
    examples: Vec<Example>,
}

impl Partial {
    fn new(solvers: usize) -> Self {
        Self {
            counts: vec![Counts::default(); solvers],
            examples: Vec::new(),
        }
    }

    fn fail(
        &mut self,
        solver: usize,
        label: &'static str,
        category: usize,
        task: u64,
        detail: String,
    ) {
        self.counts[solver].failures[category] += 1;
        let kept = self
            .examples
            .iter()
            .filter(|e| e.solver == label && e.category == CATEGORIES[category])
            .count();
        if kept < EXAMPLES {
            self.examples.push(Example {
                solver: label,
                category: CATEGORIES[category],
                task,
                detail,
            });
        }
    }
}

thread_local! {
    /// True while this thread runs a solve inside [`solve_case`].
    static IN_SOLVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs a panic hook that stays silent for panics inside [`solve_case`] (they are
/// counted, with their message, in the report) and runs the previous hook for any other
/// panic (a bug of the runner itself).
pub fn quiet_solver_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_SOLVE.with(std::cell::Cell::get) {
            previous(info);
        }
    }));
}

/// The result of one solve of a case.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The report, or the panic message.
    pub report: Result<SolveReport, String>,
    /// The returned pose.
    pub pose: LocalPose,
    /// Wall time of the solve.
    pub time: Duration,
}

/// Solves `case` with `config` from its start pose, catching a panic (the workspace is
/// replaced after one: its buffers may be half-written).
pub fn solve_case(case: &Case, config: &SolverConfig, workspace: &mut SolverWorkspace) -> Outcome {
    let mut pose = case.start.clone();
    let began = Instant::now();
    IN_SOLVE.with(|flag| flag.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| {
        solve_with(&case.skeleton, &case.task, config, workspace, &mut pose)
    }));
    IN_SOLVE.with(|flag| flag.set(false));
    let time = began.elapsed();
    let report = result.map_err(|payload| {
        *workspace = SolverWorkspace::new();
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_owned())
    });
    Outcome { report, pose, time }
}

fn run_case(
    seed: u64,
    index: u64,
    configs: &[(&'static str, SolverConfig)],
    workspace: &mut SolverWorkspace,
    partial: &mut Partial,
) {
    let case = case(seed, index);
    let describe = |what: &str| {
        let bad = case.bad_input.map_or(String::new(), |b| format!(" ({b})"));
        format!(
            "{}, {} effector(s), base {}, {:?} goals{bad}: {what}",
            case.shape,
            case.task.effectors.len(),
            if case.task.base.is_some() {
                "yes"
            } else {
                "no"
            },
            case.goals
        )
    };
    let mut unreachable_iterative = Vec::new();
    let mut converged_iterative = false;
    for (k, (label, config)) in configs.iter().enumerate() {
        let outcome = solve_case(&case, config, workspace);
        partial.counts[k].solves += 1;
        partial.counts[k].seconds += outcome.time.as_secs_f64();
        let report = match outcome.report {
            Ok(report) => report,
            Err(message) => {
                partial.fail(
                    k,
                    label,
                    0,
                    index,
                    describe(&format!("panicked: {message}")),
                );
                continue;
            }
        };
        let status = [
            SolveStatus::Converged,
            SolveStatus::MaxIterations,
            SolveStatus::Unreachable,
            SolveStatus::InvalidInput,
        ]
        .iter()
        .position(|&s| s == report.status)
        .expect("four statuses");
        partial.counts[k].statuses[status] += 1;
        let findings = check(&case, config, &report, &outcome.pose);
        for (category, what) in findings {
            partial.fail(k, label, category, index, describe(&what));
        }
        if matches!(config, SolverConfig::TwoBone(_) | SolverConfig::Limb7(_))
            && let Some(what) = prepared_differs(&case, config, &report, &outcome.pose)
        {
            partial.fail(k, label, 9, index, describe(&what));
        }
        if iterative(config) {
            match report.status {
                SolveStatus::Converged if outcome.pose.is_finite() => {
                    let (p, r) = measure(&case.skeleton, &case.task, &outcome.pose);
                    let tolerance = case.task.tolerance;
                    converged_iterative |= p <= tolerance.position && r <= tolerance.rotation;
                }
                SolveStatus::Unreachable => unreachable_iterative.push((k, *label, report)),
                _ => {}
            }
        }
    }
    if converged_iterative {
        for (k, label, report) in unreachable_iterative {
            let what = format!(
                "unreachable at ({}, {}) while another iterative solver converged",
                report.position_error, report.rotation_error
            );
            partial.fail(k, label, 5, index, describe(&what));
        }
    }
}

/// The failure categories (indices into [`CATEGORIES`]) of one solve, with what went wrong.
fn check(
    case: &Case,
    config: &SolverConfig,
    report: &SolveReport,
    pose: &LocalPose,
) -> Vec<(usize, String)> {
    let s = &case.skeleton;
    let task = &case.task;
    let mut found = Vec::new();
    if !pose.is_finite() || report.position_error.is_nan() || report.rotation_error.is_nan() {
        found.push((1, format!("non-finite output, report {report:?}")));
    }
    // `none` returns the start pose: its row counts start poses that the limit projection
    // left outside a limit. The other solvers answer for the joints they changed.
    let every_joint = matches!(config, SolverConfig::None);
    if let Some((joint, by)) = worst_violation(s, &case.start, pose, every_joint) {
        found.push((
            2,
            format!("{} outside its limit by {by:e} rad", s.name(joint)),
        ));
    }
    if report.status == SolveStatus::InvalidInput {
        if pose != &case.start {
            found.push((
                8,
                format!("invalid_input ({:?}) but the pose changed", report.message),
            ));
        }
        return found;
    }
    if case.expect_invalid {
        found.push((7, format!("accepted with status {:?}", report.status)));
    }
    if !pose.is_finite() {
        if report.converged() {
            found.push((4, "converged claimed on a non-finite pose".to_owned()));
        }
        return found;
    }
    let (p, r) = match config {
        SolverConfig::Aim(aim) => aim_measure(s, task, aim, pose),
        _ => measure(s, task, pose),
    };
    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
    let within = p <= task.tolerance.position && r <= task.tolerance.rotation;
    if !same(p, report.position_error) || !same(r, report.rotation_error) {
        found.push((
            3,
            format!(
                "report ({}, {}), FK ({p}, {r})",
                report.position_error, report.rotation_error
            ),
        ));
    } else if within && !report.converged() {
        found.push((
            3,
            format!("FK ({p}, {r}) within tolerance, status {:?}", report.status),
        ));
    }
    if report.converged() && !within {
        found.push((4, format!("converged claimed, FK ({p}, {r})")));
    }
    if let Some(base) = task.base {
        let before = model(s, &case.start)[base];
        let after = model(s, pose)[base];
        let shifted = (after.translation - before.translation).length();
        let turned = (after.matrix3 - before.matrix3)
            .abs()
            .to_cols_array()
            .iter()
            .sum::<f64>();
        // With a non-uniform scale or a mirror above the base, a rigid move of the root cannot
        // restore the base's sheared frame: only its position is held.
        let uniform = s.path_to_root(base).all(|a| {
            let k = pose[a].scale;
            k.x == k.y && k.y == k.z && k.x > 0.0
        });
        let drift = if uniform { shifted + turned } else { shifted };
        if drift > BASE_TOLERANCE * (1.0 + before.translation.length()) {
            found.push((
                6,
                format!(
                    "base {} moved by {shifted:e} (matrix entries by {turned:e})",
                    s.name(base),
                ),
            ));
        }
    }
    found
}

/// What differs when `case` is prepared once and solved with `solve_in` (the start pose's
/// model pose kept) from the one-shot `report` and `pose`; `None` when nothing does (or the
/// task does not prepare, which the one-shot solve answers as invalid input).
fn prepared_differs(
    case: &Case,
    config: &SolverConfig,
    report: &SolveReport,
    pose: &LocalPose,
) -> Option<String> {
    let s = &case.skeleton;
    let mut prepared = PreparedTask::new(s, &case.task, config).ok()?;
    let mut kept_pose = case.start.clone();
    let mut kept = model(s, &kept_pose);
    IN_SOLVE.with(|flag| flag.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| {
        prepared.solve_in(&mut kept_pose, &mut kept)
    }));
    IN_SOLVE.with(|flag| flag.set(false));
    let Ok(kept_report) = result else {
        return Some("solve_in panicked".to_owned());
    };
    // Bit for bit (NaN never compares equal: non-finite poses are counted elsewhere).
    let bits = |p: &LocalPose| {
        p.transforms()
            .iter()
            .flat_map(|t| {
                t.translation
                    .to_array()
                    .into_iter()
                    .chain(t.rotation.to_array())
                    .chain(t.scale.to_array())
            })
            .map(f64::to_bits)
            .collect::<Vec<u64>>()
    };
    if bits(&kept_pose) != bits(pose) {
        return Some("solve_in returned another pose".to_owned());
    }
    if format!("{kept_report:?}") != format!("{report:?}") {
        return Some(format!("solve_in reported {kept_report:?}"));
    }
    if pose.is_finite() && kept != model(s, &kept_pose) {
        return Some("solve_in left a model pose that is not the FK of its pose".to_owned());
    }
    // The same task for nine characters at once (a chunk of SIMD lanes and a remainder), the
    // limb7 limb kept from the solve above as a game's first frame leaves it.
    let count = 9;
    let goals: Vec<Goal> = (0..count)
        .flat_map(|_| case.task.effectors.iter().map(|e| e.goal))
        .collect();
    let mut poses = vec![case.start.clone(); count];
    let mut models = vec![model(s, &case.start); count];
    let mut reports = vec![SolveReport::invalid(String::new()); count];
    IN_SOLVE.with(|flag| flag.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| {
        prepared.solve_many_in(&goals, &mut poses, &mut models, &mut reports);
    }));
    IN_SOLVE.with(|flag| flag.set(false));
    if result.is_err() {
        return Some("solve_many_in panicked".to_owned());
    }
    for ((many_pose, many_model), many_report) in poses.iter().zip(&models).zip(&reports) {
        if bits(many_pose) != bits(pose) {
            return Some("solve_many_in returned another pose".to_owned());
        }
        if format!("{many_report:?}") != format!("{report:?}") {
            return Some(format!("solve_many_in reported {many_report:?}"));
        }
        if pose.is_finite() && *many_model != model(s, many_pose) {
            return Some("solve_many_in left a model pose that is not the FK of its pose".into());
        }
    }
    None
}

/// The joint farthest outside its limit, when one is beyond [`LIMIT_TOLERANCE`], among the
/// joints whose rotation differs from `start` (or all joints).
fn worst_violation(
    s: &Skeleton,
    start: &LocalPose,
    pose: &LocalPose,
    every_joint: bool,
) -> Option<(ikarus_core::JointId, f64)> {
    s.joints()
        .filter(|&j| every_joint || pose[j].rotation != start[j].rotation)
        .filter_map(|j| {
            let delta = s.rest(j).rotation.conjugate() * pose[j].rotation;
            let limit = s.limit(j);
            if limit.contains(delta) {
                return None;
            }
            let by = limit.violation(delta);
            (by.is_nan() || by > LIMIT_TOLERANCE).then_some((j, by))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

fn model(s: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut m = ModelPose::new(s);
    fk::forward_kinematics(s, pose, &mut m);
    m
}

/// The residuals `aim` documents: the target's distance from the line of sight and the angle
/// between the line of sight and the direction to the target (0 for a target at the eye),
/// by FK.
fn aim_measure(
    s: &Skeleton,
    task: &IkTask,
    config: &ikarus_solve::aim::AimConfig,
    pose: &LocalPose,
) -> (f64, f64) {
    let (Some(effector), Some(target)) = (
        task.effectors.first(),
        task.effectors.first().and_then(|e| e.goal.position),
    ) else {
        return (f64::NAN, f64::NAN);
    };
    let m = model(s, pose)[effector.joint];
    let forward = glam::DVec3::from_array(config.forward).normalize();
    let eye = m.transform_point3(glam::DVec3::from_array(config.offset));
    let sight = m.transform_vector3(forward).normalize_or_zero();
    let to_target = target - eye;
    let along = to_target.dot(sight);
    let angle = if to_target == glam::DVec3::ZERO || sight == glam::DVec3::ZERO {
        0.0
    } else {
        to_target.angle_between(sight)
    };
    ((to_target - along * sight).length(), angle)
}
