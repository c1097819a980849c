//! The TRAC-IK benchmark protocol on the shared URDF robots: joint vectors uniform inside the
//! limits (fixed seed), mapped through forward kinematics to 6-D tip targets in the base
//! frame; every solve seeded from the middle of the limits; success = position error < 1e-5 m
//! and rotation error < 1e-5 rad with all joints inside their limits.

use glam::{DAffine3, DQuat};
use ikarus_core::chain::JointChain;
use ikarus_core::{ModelPose, Skeleton, fk};
use ikarus_formats::urdf::Urdf;
use ikarus_solve::threaded::{BatchResult, BatchTarget, solve_threaded};
use ikarus_solve::{SolveStatus, SolverConfig, Tolerance};

use ikarus_testdata::Rng;

/// The protocol's robots: file in `../shared/data/urdf`, base link, tip link.
pub const ROBOTS: [(&str, &str, &str); 4] = [
    ("panda.urdf", "panda_link0", "panda_link8"),
    ("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee"),
    ("iiwa14_no_collision.urdf", "base", "iiwa_link_ee"),
    ("ur5_robot.urdf", "base_link", "ee_link"),
];

/// The protocol's success thresholds: 1e-5 m and 1e-5 rad.
pub const TOLERANCE: Tolerance = Tolerance {
    position: 1e-5,
    rotation: 1e-5,
};

/// A loaded robot and its benchmark chain.
#[derive(Clone, Debug)]
pub struct Robot {
    /// The file name.
    pub file: &'static str,
    /// The robot.
    pub urdf: Urdf,
    /// Its chain from base to tip link.
    pub chain: JointChain,
}

impl Robot {
    /// Loads `file` from the shared data, or `None` (SKIPPED, or a panic in CI) when missing.
    ///
    /// # Panics
    /// When the file does not load or the links are missing.
    pub fn load(file: &'static str, base: &str, tip: &str) -> Option<Self> {
        let dir = ikarus_testdata::require("urdf", file)?;
        let text = std::fs::read_to_string(dir.join(file)).expect("readable URDF");
        let urdf = Urdf::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let chain = urdf.chain(base, tip).expect("benchmark chain");
        Some(Self { file, urdf, chain })
    }

    /// The skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        &self.urdf.skeleton
    }

    /// `count` joint vectors uniform inside the limits (continuous joints in `[-π, π]`) from
    /// `seed`, and the tip frames they map to, as targets without seeds.
    ///
    /// # Panics
    /// Never for chains of finite limits.
    pub fn samples(&self, count: usize, seed: u64) -> Vec<(Vec<f64>, BatchTarget)> {
        let s = self.skeleton();
        let mut rng = Rng(seed);
        let mut pose = s.rest_pose();
        let mut model = ModelPose::new(s);
        (0..count)
            .map(|_| {
                let q: Vec<f64> = self
                    .chain
                    .lower()
                    .iter()
                    .zip(self.chain.upper())
                    .map(|(&l, &u)| {
                        let (l, u) = if l.is_finite() && u.is_finite() {
                            (l, u)
                        } else {
                            (-std::f64::consts::PI, std::f64::consts::PI)
                        };
                        l + (u - l) * rng.unit()
                    })
                    .collect();
                self.chain.set_q(s, &q, &mut pose).expect("finite q");
                fk::forward_kinematics(s, &pose, &mut model);
                let frame = self.chain.tip_in_base(&model);
                let (_, rotation, translation) = frame.to_scale_rotation_translation();
                let target = BatchTarget {
                    position: translation.to_array(),
                    orientation: Some(rotation.normalize().to_array()),
                    seed: None,
                };
                (q, target)
            })
            .collect()
    }

    /// Solves `targets` on the chain with `config` at the protocol's [`TOLERANCE`] on
    /// `threads` threads ([`solve_threaded`]).
    pub fn solve(
        &self,
        targets: &[BatchTarget],
        config: &SolverConfig,
        threads: usize,
    ) -> Vec<BatchResult> {
        solve_threaded(
            self.skeleton(),
            &self.chain,
            targets,
            config,
            TOLERANCE,
            threads,
        )
    }

    /// The tip frame of `q` in the base frame, by forward kinematics.
    ///
    /// # Panics
    /// When `q` does not fit the chain.
    pub fn tip(&self, q: &[f64]) -> DAffine3 {
        let s = self.skeleton();
        let mut pose = s.rest_pose();
        self.chain.set_q(s, q, &mut pose).expect("q fits the chain");
        let mut model = ModelPose::new(s);
        fk::forward_kinematics(s, &pose, &mut model);
        self.chain.tip_in_base(&model)
    }

    /// [`check`](Self::check), asserting that `q` is legal and the reported position error is
    /// the one forward kinematics measures (`file` names the robot in the messages): the
    /// position and rotation errors.
    ///
    /// # Panics
    /// When either does not hold.
    pub fn assert_checked(
        &self,
        file: &str,
        target: &BatchTarget,
        result: &BatchResult,
    ) -> (f64, f64) {
        let (p, r, legal) = self.check(target, result);
        assert!(legal, "{file}: q outside the limits: {result:?}");
        assert!(
            (p - result.position_error).abs() < 1e-12,
            "{file}: FK {p:e} vs reported {:e}",
            result.position_error
        );
        (p, r)
    }

    /// Checks a result independently of the solver's report: forward kinematics of its `q`
    /// against the target, and the limits. Returns (position error, rotation error, legal).
    pub fn check(&self, target: &BatchTarget, result: &BatchResult) -> (f64, f64, bool) {
        if result.q.len() != self.chain.dof() || result.q.iter().any(|v| !v.is_finite()) {
            return (f64::INFINITY, f64::INFINITY, false);
        }
        let frame = self.tip(&result.q);
        let (_, rotation, translation) = frame.to_scale_rotation_translation();
        let position_error = (translation - glam::DVec3::from_array(target.position)).length();
        // 2·atan2(|v|, |w|) of the difference: exact for tiny angles, where acos is not.
        let rotation_error = target.orientation.map_or(0.0, |o| {
            let d = rotation.normalize() * DQuat::from_array(o).conjugate();
            2.0 * d.xyz().length().atan2(d.w.abs())
        });
        (
            position_error,
            rotation_error,
            self.chain.within_limits(&result.q, 1e-9),
        )
    }
}

/// How many protocol targets a run solves: `IKARUS_TRAC_IK_TARGETS`, else the protocol's
/// 10,000.
pub fn target_count() -> usize {
    std::env::var("IKARUS_TRAC_IK_TARGETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// Protocol figures over one solver's results on one robot.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Successes / targets.
    pub success_rate: f64,
    /// Median solve time, microseconds.
    pub median_us: f64,
    /// 99th percentile solve time, microseconds.
    pub p99_us: f64,
    /// Mean solve time, microseconds.
    pub mean_us: f64,
}

/// Success per the protocol, judged by [`Robot::check`] (not by the report).
pub fn succeeded(robot: &Robot, target: &BatchTarget, result: &BatchResult) -> bool {
    let (p, r, legal) = robot.check(target, result);
    p < TOLERANCE.position && r < TOLERANCE.rotation && legal
}

/// Rates and times of `results` for `targets`; times are the results' own `time_ns`.
pub fn figures(robot: &Robot, targets: &[BatchTarget], results: &[BatchResult]) -> Figures {
    let ok = targets
        .iter()
        .zip(results)
        .filter(|(t, r)| succeeded(robot, t, r))
        .count();
    let mut times: Vec<f64> = results.iter().map(|r| r.time_ns as f64 / 1e3).collect();
    figures_of_times(ok, &mut times)
}

/// Figures from a success count and per-solve times in microseconds (sorted in place).
pub fn figures_of_times(ok: usize, times: &mut [f64]) -> Figures {
    times.sort_by(f64::total_cmp);
    let n = times.len().max(1);
    let at = |p: usize| times.get((times.len() * p / 100).min(n - 1)).copied();
    Figures {
        success_rate: ok as f64 / n as f64,
        median_us: at(50).unwrap_or(0.0),
        p99_us: at(99).unwrap_or(0.0),
        mean_us: times.iter().sum::<f64>() / n as f64,
    }
}

/// True for a converged status (the report's view, for cross-checking [`succeeded`]).
pub fn converged(result: &BatchResult) -> bool {
    result.status == SolveStatus::Converged
}
