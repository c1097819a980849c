//! The exact feasible swivel intervals of S-R-S robot arms (`SrsArm::feasible_swivels`)
//! against a dense brute-force scan: at every scanned swivel, the arm's branches are checked
//! by forward kinematics of the skeleton (through the URDF's `JointChain`) and by the joint
//! limits. Swivels inside an interval must have a legal branch that reaches the target,
//! swivels outside must have none; intervals narrower than the old sampling step
//! (2π / 128) are searched for on purpose.

use std::f64::consts::{PI, TAU};

use ikarus_core::glam::DAffine3;
use ikarus_solve::limb7::SwivelInterval;
use ikarus_solve::robot::{ClosedForm, SrsArm};

mod common;
use common::{Rng, Robot, load_robot as load, pose_of};

/// Swivels this close to an interval's end are not judged (the ends are roots of
/// trigonometric equations, exact to rounding; near a double root to about √ε).
const MARGIN: f64 = 1e-7;

/// The old sampling step: intervals narrower than this could be missed.
const OLD_STEP: f64 = TAU / 128.0;

/// True when some branch at `swivel` lies inside the limits and reaches `target` by FK.
fn legal_by_fk(robot: &Robot, arm: &SrsArm, target: &DAffine3, swivel: f64) -> bool {
    let (position, rotation) = pose_of(target);
    let (solutions, _) = arm.solutions(position, rotation, swivel, &[0.0; 7]);
    solutions.iter().any(|q| {
        if !robot.chain.within_limits(q, 0.0) {
            return false;
        }
        let (p, r) = pose_of(&robot.tip(q));
        let d = r * rotation.conjugate();
        (p - position).length() < 1e-9 && 2.0 * d.xyz().length().atan2(d.w.abs()) < 1e-9
    })
}

/// Angular distance from `swivel` to the nearest end of any interval.
fn to_nearest_end(intervals: &[SwivelInterval], swivel: f64) -> f64 {
    intervals
        .iter()
        .filter(|i| !i.is_full())
        .flat_map(|i| [i.start, i.end])
        .map(|e| {
            let d = (swivel - e).rem_euclid(TAU);
            d.min(TAU - d)
        })
        .fold(f64::INFINITY, f64::min)
}

/// Checks `intervals` against a scan of `samples` swivels around the circle and 32 inside
/// each interval; returns how many scanned swivels were judged.
fn check(
    robot: &Robot,
    arm: &SrsArm,
    target: &DAffine3,
    intervals: &[SwivelInterval],
    samples: usize,
) -> usize {
    let mut swivels: Vec<f64> = (0..samples)
        .map(|i| -PI + TAU * (i as f64 + 0.5) / samples as f64)
        .collect();
    for interval in intervals {
        let width = interval.width();
        swivels.extend((0..32).map(|k| interval.start + width * (f64::from(k) + 0.5) / 32.0));
    }
    let mut judged = 0;
    for swivel in swivels {
        if to_nearest_end(intervals, swivel) < MARGIN {
            continue;
        }
        let inside = intervals.iter().any(|i| i.contains(swivel));
        assert_eq!(
            legal_by_fk(robot, arm, target, swivel),
            inside,
            "swivel {swivel} (inside: {inside}) in {intervals:?}"
        );
        judged += 1;
    }
    judged
}

fn arm_of(robot: &Robot) -> SrsArm {
    match ClosedForm::detect(&robot.urdf.skeleton, &robot.chain) {
        Ok(ClosedForm::SrsArm(arm)) => arm,
        other => panic!("not an S-R-S arm: {other:?}"),
    }
}

/// Random legal joint vectors → targets: each target's intervals hold its own swivel and
/// agree with the scan; then, among many more targets, every interval narrower than the old
/// sampling step is scanned (densely inside) too.
fn intervals_agree_with_the_scan(file: &str, base: &str, tip_link: &str, min_narrow: usize) {
    let Some(robot) = load(file, base, tip_link) else {
        return;
    };
    let arm = arm_of(&robot);
    let (lower, upper) = (robot.chain.lower().to_vec(), robot.chain.upper().to_vec());
    let mut rng = Rng(19);
    let mut narrow = 0;
    for n in 0..3000 {
        let q: Vec<f64> = lower
            .iter()
            .zip(&upper)
            .map(|(&l, &u)| rng.range(l, u))
            .collect();
        let target = robot.tip(&q);
        let (position, rotation) = pose_of(&target);
        let intervals = arm.feasible_swivels(position, rotation);
        let mut own = [0.0; 7];
        own.copy_from_slice(&q);
        let swivel = arm.swivel_of(&own);
        assert!(
            intervals.iter().any(|i| i.contains(swivel))
                || to_nearest_end(&intervals, swivel) < MARGIN,
            "{file}: the sampled q's swivel {swivel} is in none of {intervals:?}"
        );
        let has_narrow = intervals.iter().any(|i| i.width() < OLD_STEP);
        if n < 60 || has_narrow {
            let judged = check(&robot, &arm, &target, &intervals, 2048);
            assert!(judged > 2000, "{file}: only {judged} swivels judged");
        }
        narrow += usize::from(has_narrow);
    }
    println!("{file}: {narrow} targets with an interval narrower than 2π/128");
    assert!(
        narrow >= min_narrow,
        "{file}: {narrow} narrow intervals found"
    );
}

#[test]
fn iiwa_intervals_agree_with_a_dense_scan() {
    intervals_agree_with_the_scan("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee", 0);
}

#[test]
fn humanoid_arm_intervals_agree_with_a_dense_scan() {
    intervals_agree_with_the_scan("simple_humanoid.urdf", "torso", "l_wrist", 1);
}
