//! Levenberg–Marquardt on a robot chain's `q` (`robot::lm`) on the shared URDF arms without a
//! closed form (`../shared/data/urdf`: panda, ur5). Ground truth is forward kinematics of the
//! skeleton through the URDF's `JointChain`, independent of the solver's product of
//! exponentials; every returned `q` must lie inside the limits.

use ikarus_core::glam::{DAffine3, DQuat, DVec3};
use ikarus_solve::Tolerance;
use ikarus_solve::lm::LmConfig;
use ikarus_solve::robot::Screws;
use ikarus_solve::robot::lm::{self, ChainGoal};

const TOLERANCE: Tolerance = Tolerance {
    position: 1e-5,
    rotation: 1e-5,
};

mod common;
use common::{Rng, Robot, load_robot as load};

impl Robot {
    fn screws(&self) -> Screws {
        Screws::from_chain(&self.urdf.skeleton, &self.chain).expect("revolute chain")
    }
}

fn goal_of(frame: &DAffine3, with_orientation: bool) -> ChainGoal {
    let (_, rotation, translation) = frame.to_scale_rotation_translation();
    ChainGoal {
        position: translation,
        orientation: with_orientation.then(|| rotation.normalize()),
    }
}

/// Position and rotation errors of the tip at `q` against `goal`, by the skeleton's FK.
fn errors(robot: &Robot, q: &[f64], goal: &ChainGoal) -> (f64, f64) {
    let (_, r, t) = robot.tip(q).to_scale_rotation_translation();
    let rotation = goal.orientation.map_or(0.0, |o| {
        let d = r.normalize() * o.conjugate();
        2.0 * d.xyz().length().atan2(d.w.abs())
    });
    ((t - goal.position).length(), rotation)
}

const ARMS: [(&str, &str, &str); 2] = [
    ("panda.urdf", "panda_link0", "panda_link8"),
    ("ur5_robot.urdf", "base_link", "ee_link"),
];

fn protocol_config() -> LmConfig {
    let mut config = LmConfig::default();
    config.iteration.max_iterations = 2000;
    config.iteration.restarts = 200;
    config
}

#[test]
fn reaches_random_legal_poses_with_legal_joints() {
    for (file, base, tip) in ARMS {
        let Some(robot) = load(file, base, tip) else {
            return;
        };
        let screws = robot.screws();
        let config = protocol_config();
        let mut rng = Rng(7);
        for with_orientation in [true, false] {
            let mut solved = 0;
            for _ in 0..300 {
                let sample = robot.random_q(&mut rng);
                let goal = goal_of(&robot.tip(&sample), with_orientation);
                let mut q = robot.chain.middle();
                let outcome = lm::solve(&screws, &goal, &config, TOLERANCE, &mut q).unwrap();
                assert!(robot.chain.within_limits(&q, 0.0), "{file}: {q:?} outside");
                let (p, r) = errors(&robot, &q, &goal);
                // The solver's own forward pass agrees with the skeleton's to rounding.
                let fk_converged =
                    p <= TOLERANCE.position + 1e-12 && r <= TOLERANCE.rotation + 1e-12;
                assert_eq!(
                    outcome.converged, fk_converged,
                    "{file}: {p:e} m, {r:e} rad"
                );
                solved += usize::from(outcome.converged);
            }
            assert!(
                solved >= 299,
                "{file} (orientation {with_orientation}): {solved} of 300"
            );
        }
    }
}

#[test]
fn out_of_reach_goals_end_legal_and_not_converged() {
    let Some(robot) = load(ARMS[0].0, ARMS[0].1, ARMS[0].2) else {
        return;
    };
    let screws = robot.screws();
    let mut config = LmConfig::default();
    config.iteration.restarts = 3;
    let goal = ChainGoal {
        position: DVec3::new(3.0, 0.0, 0.5),
        orientation: Some(DQuat::IDENTITY),
    };
    let mut q = robot.chain.middle();
    let outcome = lm::solve(&screws, &goal, &config, TOLERANCE, &mut q).unwrap();
    assert!(!outcome.converged);
    assert!(outcome.out_of_reach);
    assert!(outcome.restarts <= 3);
    assert!(robot.chain.within_limits(&q, 0.0), "{q:?}");
    // The returned q is the best found: the tip points at the goal as far as the arm reaches.
    let (p, _) = errors(&robot, &q, &goal);
    let reach = robot.tip(&robot.chain.middle()).translation.length();
    assert!(p < 3.0 - 0.5 * reach, "{p}");
}

#[test]
fn bad_input_is_refused() {
    let Some(robot) = load(ARMS[1].0, ARMS[1].1, ARMS[1].2) else {
        return;
    };
    let screws = robot.screws();
    let config = LmConfig::default();
    let goal = ChainGoal {
        position: DVec3::new(0.3, 0.1, 0.4),
        orientation: None,
    };
    assert!(lm::solve(&screws, &goal, &config, TOLERANCE, &mut [0.0; 3]).is_err());
    let mut q = robot.chain.middle();
    q[2] = f64::NAN;
    assert!(lm::solve(&screws, &goal, &config, TOLERANCE, &mut q).is_err());
    let nan_goal = ChainGoal {
        position: DVec3::new(f64::NAN, 0.0, 0.0),
        orientation: None,
    };
    let mut q = robot.chain.middle();
    assert!(lm::solve(&screws, &nan_goal, &config, TOLERANCE, &mut q).is_err());
}

#[test]
fn joints_without_limits_come_back_within_half_a_turn_of_the_start() {
    let Some(robot) = load(ARMS[1].0, ARMS[1].1, ARMS[1].2) else {
        return;
    };
    let mut screws = robot.screws();
    screws.lower.fill(f64::NEG_INFINITY);
    screws.upper.fill(f64::INFINITY);
    let config = protocol_config();
    let mut rng = Rng(3);
    for _ in 0..200 {
        let sample = robot.random_q(&mut rng);
        let goal = goal_of(&robot.tip(&sample), true);
        let start = robot.chain.middle();
        let mut q = start.clone();
        let outcome = lm::solve(&screws, &goal, &config, TOLERANCE, &mut q).unwrap();
        assert!(outcome.converged);
        for (v, s) in q.iter().zip(&start) {
            assert!((v - s).abs() <= std::f64::consts::PI + 1e-12, "{q:?}");
        }
        // Whole turns change nothing: the skeleton's FK still reaches the goal.
        let (p, r) = errors(&robot, &q, &goal);
        assert!(p < 1e-5 + 1e-12 && r < 1e-5 + 1e-12, "{p:e} m, {r:e} rad");
    }
}
