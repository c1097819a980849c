//! The humanoid reach protocol: the built-in humanoid's left hand to position
//! targets 5–25 cm from its rest position, no base joint (the path runs from the hand up to
//! the root, which stays fixed), every solver at its defaults, every solve from the rest pose.
//!
//! The targets are drawn deterministically (splitmix64): a direction uniform on the sphere and
//! a distance uniform in `[0.05, 0.25]` m. Some lie beyond the outstretched arm and are out of
//! reach for every solver; a CCD variant is judged on the targets Levenberg–Marquardt reaches.

use glam::DVec3;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::{
    CcdConfig, CcdDamping, CcdVariant, Goal, IkTask, SolverConfig, SolverWorkspace,
};

use ikarus_testdata::Rng;

/// The effector joint.
pub const EFFECTOR: &str = "leftHand";

/// Closest and farthest target distance from the hand's rest position, metres.
pub const DISTANCE: (f64, f64) = (0.05, 0.25);

/// Number of targets of the protocol.
pub const TARGETS: usize = 60;

/// Seed of the protocol's targets.
pub const SEED: u64 = 13;

/// The built-in humanoid.
pub fn skeleton() -> Skeleton {
    builtin_humanoid()
}

/// `count` targets (seed `seed`): the hand's rest position plus a direction uniform on the
/// sphere times a distance uniform in [`DISTANCE`], model space, metres.
///
/// # Panics
/// When `skeleton` has no [`EFFECTOR`] joint.
pub fn targets(skeleton: &Skeleton, count: usize, seed: u64) -> Vec<DVec3> {
    let hand = skeleton.joint(EFFECTOR).expect("humanoid left hand");
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut model);
    let rest = model.position(hand);
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            // Uniform direction: z uniform in [-1, 1], azimuth uniform.
            let z = 2.0 * rng.unit() - 1.0;
            let azimuth = std::f64::consts::TAU * rng.unit();
            let r = (1.0 - z * z).max(0.0).sqrt();
            let direction = DVec3::new(r * azimuth.cos(), r * azimuth.sin(), z);
            let distance = DISTANCE.0 + (DISTANCE.1 - DISTANCE.0) * rng.unit();
            rest + direction * distance
        })
        .collect()
}

/// The task: the left hand to `target`, position only, default tolerance (1e-4 m), no base.
///
/// # Panics
/// When `skeleton` has no [`EFFECTOR`] joint.
pub fn task(skeleton: &Skeleton, target: DVec3) -> IkTask {
    let hand = skeleton.joint(EFFECTOR).expect("humanoid left hand");
    IkTask::from_goal(hand, Goal::from_position(target))
}

/// The solvers of the protocol, each at its defaults: the reference (Levenberg–Marquardt)
/// first, then the three CCD variants (classic, classic with length damping, MMD).
pub fn solvers() -> [(&'static str, SolverConfig); 4] {
    let ccd = |variant, damping| {
        SolverConfig::Ccd(CcdConfig {
            variant,
            damping,
            ..CcdConfig::default()
        })
    };
    [
        (
            "lm",
            SolverConfig::Lm(ikarus_solve::lm::LmConfig::default()),
        ),
        ("ccd_classic", ccd(CcdVariant::Classic, CcdDamping::None)),
        (
            "ccd_classic_length",
            ccd(CcdVariant::Classic, CcdDamping::Length),
        ),
        ("ccd_mmd", ccd(CcdVariant::Mmd, CcdDamping::None)),
    ]
}

/// One solve of the protocol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Position error of the returned pose by forward kinematics, metres.
    pub error: f64,
    /// Position error the solver reported, metres.
    pub reported_error: f64,
    /// Within the task's tolerance by forward kinematics (and reported converged).
    pub converged: bool,
    /// Every joint of the returned pose inside its limit.
    pub legal: bool,
    /// Wall time of the solve, microseconds.
    pub time_us: f64,
    /// Sweeps the solve took (restarts included).
    pub iterations: u32,
}

/// Solves every target from the rest pose with `config`, judging each pose by forward
/// kinematics.
///
/// # Panics
/// When `skeleton` has no [`EFFECTOR`] joint.
pub fn run(
    skeleton: &Skeleton,
    targets: &[DVec3],
    config: &SolverConfig,
    workspace: &mut SolverWorkspace,
) -> Vec<Outcome> {
    let hand = skeleton.joint(EFFECTOR).expect("humanoid left hand");
    let mut model = ModelPose::new(skeleton);
    targets
        .iter()
        .map(|&target| {
            let t = task(skeleton, target);
            let mut pose: LocalPose = skeleton.rest_pose();
            let start = std::time::Instant::now();
            let report = ikarus_solve::solve_with(skeleton, &t, config, workspace, &mut pose);
            let time_us = start.elapsed().as_nanos() as f64 / 1e3;
            fk::forward_kinematics(skeleton, &pose, &mut model);
            let error = (model.position(hand) - target).length();
            Outcome {
                error,
                reported_error: report.position_error,
                converged: error <= t.tolerance.position && report.converged(),
                legal: skeleton.limit_violation(&pose).is_none(),
                time_us,
                iterations: report.iterations,
            }
        })
        .collect()
}

/// The figures of one solver against the reference's outcomes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Targets within tolerance.
    pub converged: usize,
    /// Targets within tolerance among those the reference reached.
    pub converged_of_reference: usize,
    /// Targets the reference reached.
    pub reference: usize,
    /// Targets in all.
    pub targets: usize,
    /// Every returned pose inside the limits.
    pub legal: bool,
    /// Median wall time per solve over all targets, microseconds.
    pub median_us: f64,
    /// Median sweeps per solve over all targets.
    pub median_sweeps: f64,
}

impl Figures {
    /// The figures of `outcomes` against `reference` (same targets, same order).
    ///
    /// # Panics
    /// When `outcomes` is empty.
    pub fn of(outcomes: &[Outcome], reference: &[Outcome]) -> Self {
        let mut times: Vec<f64> = outcomes.iter().map(|o| o.time_us).collect();
        times.sort_by(f64::total_cmp);
        let mut sweeps: Vec<f64> = outcomes.iter().map(|o| f64::from(o.iterations)).collect();
        sweeps.sort_by(f64::total_cmp);
        Self {
            converged: outcomes.iter().filter(|o| o.converged).count(),
            converged_of_reference: outcomes
                .iter()
                .zip(reference)
                .filter(|(o, r)| o.converged && r.converged)
                .count(),
            reference: reference.iter().filter(|r| r.converged).count(),
            targets: outcomes.len(),
            legal: outcomes.iter().all(|o| o.legal),
            median_us: median(&times),
            median_sweeps: median(&sweeps),
        }
    }
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} converged, {}/{} of the reference's, median {:.1} us, median {} sweeps{}",
            self.converged,
            self.targets,
            self.converged_of_reference,
            self.reference,
            self.median_us,
            self.median_sweeps,
            if self.legal { "" } else { ", LIMITS VIOLATED" }
        )
    }
}

/// The median of sorted `values` (mean of the middle two for an even count).
///
/// # Panics
/// When `values` is empty.
pub fn median(values: &[f64]) -> f64 {
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}
