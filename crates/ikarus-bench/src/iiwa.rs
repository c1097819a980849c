//! The TRAC-IK benchmark protocol on a 7-DOF arm like the KUKA LBR iiwa: link lengths
//! 0.36 / 0.42 / 0.40 / 0.126 m, hinge axes z, y, z, −y, z, y, z, limits ±170 / ±120 / ±170 /
//! ±120 / ±170 / ±120 / ±175°. The chain is built +Z up as the robot's own frame (IK does not
//! care which way is up); the root `base` is fixed and `flange` is the effector.

use glam::{DQuat, DVec3};
use ikarus_core::{
    HingeLimit, JointId, JointLimit, LocalPose, ModelPose, Skeleton, SkeletonBuilder, Transform, fk,
};
use ikarus_solve::{Effector, Goal, IkTask, Tolerance};
use ikarus_testdata::Rng;

/// Hinge axes of joints 1..7 in their rest frames.
pub const AXES: [DVec3; 7] = [
    DVec3::Z,
    DVec3::Y,
    DVec3::Z,
    DVec3::NEG_Y,
    DVec3::Z,
    DVec3::Y,
    DVec3::Z,
];

/// Joint limits (±, degrees) of joints 1..7.
pub const LIMITS_DEG: [f64; 7] = [170.0, 120.0, 170.0, 120.0, 170.0, 120.0, 175.0];

/// Offsets along +Z of joints 1..7 and the flange from their parents, metres.
const OFFSETS: [f64; 8] = [0.0, 0.36, 0.0, 0.42, 0.0, 0.40, 0.0, 0.126];

/// The arm: `base`, `j1`..`j7` (hinges with limits), `flange`.
///
/// # Panics
/// Never (the chain is valid by construction).
pub fn skeleton() -> Skeleton {
    let mut b = SkeletonBuilder::new();
    b.joint("base", None, Transform::IDENTITY);
    let mut parent = "base".to_owned();
    for i in 0..7 {
        let name = format!("j{}", i + 1);
        let limit = LIMITS_DEG[i].to_radians();
        b.limited_joint(
            &name,
            Some(&parent),
            Transform::from_translation(DVec3::Z * OFFSETS[i]),
            JointLimit::Hinge(HingeLimit {
                axis: AXES[i],
                min: -limit,
                max: limit,
            }),
        );
        parent = name;
    }
    b.joint(
        "flange",
        Some(&parent),
        Transform::from_translation(DVec3::Z * OFFSETS[7]),
    );
    b.build().expect("the iiwa chain is valid")
}

/// The seven hinge joints, base to tip.
pub fn joints(skeleton: &Skeleton) -> [JointId; 7] {
    std::array::from_fn(|i| skeleton.joint(&format!("j{}", i + 1)).expect("iiwa joint"))
}

/// Writes the joint vector `q` (radians) into `pose`.
pub fn set_q(skeleton: &Skeleton, q: &[f64; 7], pose: &mut LocalPose) {
    for (i, j) in joints(skeleton).into_iter().enumerate() {
        pose[j].rotation = DQuat::from_axis_angle(AXES[i], q[i]);
    }
}

/// The protocol's task: the flange to `target`, position only, tolerance 1e-5 m.
///
/// # Panics
/// When `skeleton` is not [`skeleton()`].
pub fn task(skeleton: &Skeleton, target: DVec3) -> IkTask {
    IkTask {
        effectors: vec![Effector {
            joint: skeleton.joint("flange").expect("iiwa flange"),
            goal: Goal {
                position: Some(target),
                orientation: None,
            },
            weight: 1.0,
        }],
        base: None,
        tolerance: Tolerance {
            position: 1e-5,
            rotation: 1e-3,
        },
    }
}

/// `count` joint vectors uniform inside the limits (seed `seed`) and the flange positions FK
/// maps them to.
pub fn samples(skeleton: &Skeleton, count: usize, seed: u64) -> Vec<([f64; 7], DVec3)> {
    let mut rng = Rng(seed);
    let flange = skeleton.joint("flange").expect("iiwa flange");
    let mut pose = skeleton.rest_pose();
    let mut model = ModelPose::new(skeleton);
    (0..count)
        .map(|_| {
            let q: [f64; 7] = std::array::from_fn(|i| {
                let limit = LIMITS_DEG[i].to_radians();
                -limit + 2.0 * limit * rng.unit()
            });
            set_q(skeleton, &q, &mut pose);
            fk::forward_kinematics(skeleton, &pose, &mut model);
            (q, model.position(flange))
        })
        .collect()
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
