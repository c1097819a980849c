//! The TRAC-IK benchmark protocol on the 7-DOF iiwa-like arm of
//! [`ikarus_testdata::rigs::iiwa`] (re-exported here): `base` fixed, `flange` the effector.

use glam::DVec3;
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::{Goal, IkTask, Tolerance};

pub use ikarus_testdata::rigs::iiwa::{AXES, LIMITS_DEG, joints, samples, set_q, skeleton};

/// The protocol's task: the flange to `target`, position only, tolerance 1e-5 m.
///
/// # Panics
/// When `skeleton` is not [`skeleton()`].
pub fn task(skeleton: &Skeleton, target: DVec3) -> IkTask {
    let flange = skeleton.joint("flange").expect("iiwa flange");
    IkTask::from_goal(flange, Goal::from_position(target))
        .with_tolerance(Tolerance::new(1e-5, 1e-3))
}

/// The jitter path: frame `k` of 1,000, a smooth closed loop in front of the arm that stays
/// inside the joint limits (the azimuth swings ±80°, so joint 1 never has to cross its ±170°
/// stops), radius 0.45–0.6 m, height 0.5–0.9 m.
pub fn jitter_target(k: usize) -> DVec3 {
    let t = k as f64 / 1000.0 * std::f64::consts::TAU;
    let azimuth = 80f64.to_radians() * t.sin();
    let radius = 0.525 + 0.075 * (2.0 * t).cos();
    DVec3::new(
        radius * azimuth.cos(),
        radius * azimuth.sin(),
        0.7 + 0.2 * (3.0 * t).sin(),
    )
}

/// The position protocol's figures (see [`position_protocol`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProtocolFigures {
    /// Fraction of targets within 1 mm.
    pub within_mm: f64,
    /// Fraction within 1e-5 m with every joint inside its limits.
    pub within_1e5: f64,
    /// Median and 99th percentile wall time per solve, microseconds.
    pub median_us: f64,
    /// 99th percentile wall time per solve, microseconds.
    pub p99_us: f64,
    /// Median sweeps per solve.
    pub median_sweeps: u32,
}

impl std::fmt::Display for ProtocolFigures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.2}% within 1 mm, {:.2}% within 1e-5 m, median {:.1} us, p99 {:.1} us, median {} sweeps",
            100.0 * self.within_mm,
            100.0 * self.within_1e5,
            self.median_us,
            self.p99_us,
            self.median_sweeps
        )
    }
}

/// The TRAC-IK protocol with position goals on this arm: 10,000 targets (seed 42), each
/// solved by `solve` from the rest pose (the middle of the symmetric limits), judged by FK.
///
/// # Panics
/// Never for a solver that keeps the pose's size.
pub fn position_protocol(
    mut solve: impl FnMut(&Skeleton, &IkTask, &mut LocalPose) -> ikarus_solve::SolveReport,
) -> ProtocolFigures {
    let s = skeleton();
    let flange = s.joint("flange").expect("iiwa flange");
    let samples = samples(&s, 10_000, 42);
    let mut model = ModelPose::new(&s);
    let mut times = Vec::with_capacity(samples.len());
    let mut sweeps = Vec::with_capacity(samples.len());
    let (mut mm, mut fine) = (0, 0);
    for (_, target) in &samples {
        let t = task(&s, *target);
        let mut pose = s.rest_pose();
        let start = std::time::Instant::now();
        let report = solve(&s, &t, &mut pose);
        times.push(start.elapsed().as_nanos() as f64 / 1e3);
        sweeps.push(report.iterations);
        fk::forward_kinematics(&s, &pose, &mut model);
        let error = (model.position(flange) - *target).length();
        mm += usize::from(error < 1e-3);
        fine += usize::from(error < 1e-5 && s.limit_violation(&pose).is_none());
    }
    times.sort_by(f64::total_cmp);
    sweeps.sort_unstable();
    let n = times.len();
    ProtocolFigures {
        within_mm: mm as f64 / n as f64,
        within_1e5: fine as f64 / n as f64,
        median_us: times[n / 2],
        p99_us: times[n * 99 / 100],
        median_sweeps: sweeps[n / 2],
    }
}

/// The jitter run: 1,000 frames along [`jitter_target`], each solve warm-started from the
/// previous frame's pose. Returns the largest frame-to-frame rotation of any joint (radians)
/// and the worst position residual (metres).
pub fn jitter(
    mut solve: impl FnMut(&Skeleton, &IkTask, &mut LocalPose) -> ikarus_solve::SolveReport,
) -> (f64, f64) {
    let s = skeleton();
    let arm = joints(&s);
    let mut pose = s.rest_pose();
    let (mut largest, mut worst_error): (f64, f64) = (0.0, 0.0);
    for k in 0..1000 {
        let previous = pose.clone();
        let report = solve(&s, &task(&s, jitter_target(k)), &mut pose);
        worst_error = worst_error.max(report.position_error);
        if k > 0 {
            for &j in &arm {
                largest = largest.max(previous[j].rotation.angle_between(pose[j].rotation));
            }
        }
    }
    (largest, worst_error)
}
