//! Closed forms on real robots (`../shared/data/urdf`): shape detection, every branch, the
//! TRAC-IK protocol slice (1,000 targets; the full 10,000 are in `ikarus-bench`), legs, and
//! `auto`. Ground truth is forward kinematics of the skeleton through the URDF's
//! `JointChain`, independent of the solvers' own product-of-exponentials model.

use ikarus_core::Skeleton;
use ikarus_core::glam::{DAffine3, DQuat, DVec3};
use ikarus_solve::limb7::SwivelPolicy;
use ikarus_solve::robot::{AutoConfig, ClosedForm, RobotOutcome, Screws};
use ikarus_solve::threaded::{BatchTarget, solve_threaded};
use ikarus_solve::{SolveStatus, SolverConfig, Tolerance};

mod common;
use common::{Rng, Robot, load_robot as load, pose_of};

impl Robot {
    fn skeleton(&self) -> &Skeleton {
        &self.urdf.skeleton
    }

    /// `n` random legal joint vectors (`random_q`, drawn from `Rng(seed)`), and `form` solving
    /// for each one's tip pose from the middle of the limits, keeping the swivel: `check` gets
    /// the vector, the outcome, the solved `q` and its position and rotation errors.
    fn solve_randoms(
        &self,
        form: &ClosedForm,
        seed: u64,
        n: usize,
        mut check: impl FnMut(&[f64], &RobotOutcome, &[f64], (f64, f64)),
    ) {
        let start = self.chain.middle();
        let mut rng = Rng(seed);
        let mut q = vec![0.0; start.len()];
        for _ in 0..n {
            let sample = self.random_q(&mut rng);
            let target = self.tip(&sample);
            let (position, rotation) = pose_of(&target);
            let outcome = form.solve(
                position,
                rotation,
                &start,
                SwivelPolicy::KeepCurrent,
                &mut q,
            );
            check(&sample, &outcome, &q, self.errors(&q, &target));
        }
    }

    /// Position and rotation errors of `q` against `target`.
    fn errors(&self, q: &[f64], target: &DAffine3) -> (f64, f64) {
        let frame = self.tip(q);
        let (_, r, t) = frame.to_scale_rotation_translation();
        let (_, rt, tt) = target.to_scale_rotation_translation();
        let d = r.normalize() * rt.normalize().conjugate();
        ((t - tt).length(), 2.0 * d.xyz().length().atan2(d.w.abs()))
    }
}

const IIWAS: [(&str, &str, &str); 2] = [
    ("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee"),
    ("iiwa14_no_collision.urdf", "base", "iiwa_link_ee"),
];

/// The legs that match the humanoid robot leg's shape (`g1_29dof`'s do not: see
/// `detection_names_each_shape`).
const LEGS: [(&str, &str, &str); 4] = [
    ("simple_humanoid.urdf", "BODY", "l_ankle"),
    ("simple_humanoid.urdf", "BODY", "r_ankle"),
    ("talos_reduced.urdf", "base_link", "left_sole_link"),
    ("talos_reduced.urdf", "base_link", "right_sole_link"),
];

fn detect(robot: &Robot) -> Result<ClosedForm, String> {
    ClosedForm::detect(robot.skeleton(), &robot.chain).map_err(|e| e.to_string())
}

/// The chain `base` → `tip` of `file` and the closed form detected on it (which must be a
/// `shape`); `None` without the shared data.
fn load_closed_form(file: &str, base: &str, tip: &str, shape: &str) -> Option<(Robot, ClosedForm)> {
    let robot = load(file, base, tip)?;
    let form = detect(&robot).expect(shape);
    Some((robot, form))
}

#[test]
fn detection_names_each_shape() {
    for (file, base, tip) in IIWAS {
        let Some(robot) = load(file, base, tip) else {
            return;
        };
        assert_eq!(detect(&robot).map(|f| f.name()), Ok("srs_arm"), "{file}");
    }
    for (file, base, tip) in LEGS {
        let Some(robot) = load(file, base, tip) else {
            return;
        };
        assert_eq!(detect(&robot).map(|f| f.name()), Ok("leg"), "{file} {tip}");
    }
    let Some(arm) = load("simple_humanoid.urdf", "torso", "l_wrist") else {
        return;
    };
    assert_eq!(detect(&arm).map(|f| f.name()), Ok("srs_arm"));
    // No closed form, with the reason for each shape.
    let none = [
        (
            "panda.urdf",
            "panda_link0",
            "panda_link8",
            "no spherical wrist",
        ),
        (
            "ur5_robot.urdf",
            "base_link",
            "ee_link",
            "no spherical wrist",
        ),
        (
            "universalUR5e.urdf",
            "base_link",
            "tool0",
            "no spherical wrist",
        ),
        (
            "g1_29dof.urdf",
            "pelvis",
            "left_ankle_roll_link",
            "no spherical hip",
        ),
        (
            "talos_reduced.urdf",
            "torso_2_link",
            "arm_left_7_link",
            "no spherical shoulder",
        ),
    ];
    for (file, base, tip, reason) in none {
        let Some(robot) = load(file, base, tip) else {
            return;
        };
        let error = detect(&robot).expect_err(file);
        println!("{file}: {error}");
        assert!(error.contains(reason), "{file}: {error}");
    }
}

#[test]
fn every_branch_reaches_the_target_and_one_is_the_sampled_pose() {
    for (file, base, tip) in IIWAS {
        let Some(robot) = load(file, base, tip) else {
            return;
        };
        let Ok(ClosedForm::SrsArm(arm)) = detect(&robot) else {
            panic!("{file}: not an S-R-S arm");
        };
        let mut rng = Rng(7);
        for _ in 0..200 {
            let q = robot.random_q(&mut rng);
            let target = robot.tip(&q);
            let (position, rotation) = pose_of(&target);
            let mut seed = [0.0; 7];
            seed.copy_from_slice(&q);
            let swivel = arm.swivel_of(&seed);
            let (solutions, reached) = arm.solutions(position, rotation, swivel, &[0.0; 7]);
            assert!(reached, "{file}");
            assert_eq!(solutions.len(), 8, "{file}: {solutions:?}");
            for s in &solutions {
                let (p, r) = robot.errors(s, &target);
                assert!(
                    p < 1e-9 && r < 1e-9,
                    "{file}: branch {s:?} misses by {p:e} m, {r:e} rad"
                );
            }
            let nearest = solutions
                .iter()
                .map(|s| {
                    s.iter()
                        .zip(&q)
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0, f64::max)
                })
                .fold(f64::INFINITY, f64::min);
            assert!(
                nearest < 1e-6,
                "{file}: the sampled q is no branch ({nearest:e})"
            );
        }
    }
}

/// The TRAC-IK protocol on a 1,000-target slice: random legal joint vectors → 6-D tip
/// targets; start at the middle of the limits; success = 1e-5 m and 1e-5 rad with every joint
/// legal, judged by forward kinematics of the returned `q`.
#[test]
fn iiwa_closed_form_solves_the_trac_ik_slice() {
    for (file, base, tip) in IIWAS {
        let Some((robot, form)) = load_closed_form(file, base, tip, "S-R-S") else {
            return;
        };
        let mut solved = 0;
        robot.solve_randoms(&form, 42, 1000, |_, outcome, q, (p, r)| {
            let legal = robot.chain.within_limits(q, 1e-9);
            assert!(legal, "{file}: {q:?} outside the limits");
            let ok = p < 1e-5 && r < 1e-5;
            // The solver's flag agrees with forward kinematics.
            assert_eq!(
                ok, outcome.reached,
                "{file}: {p:e} m {r:e} rad, {outcome:?}"
            );
            solved += usize::from(ok);
        });
        assert!(solved >= 999, "{file}: {solved} of 1000");
    }
}

#[test]
fn legs_solve_every_legal_target() {
    for (file, base, tip) in LEGS {
        let Some((robot, form)) = load_closed_form(file, base, tip, "leg") else {
            return;
        };
        robot.solve_randoms(&form, 11, 1000, |sample, outcome, q, (p, r)| {
            assert!(
                outcome.reached && p < 1e-9 && r < 1e-9 && robot.chain.within_limits(q, 1e-9),
                "{file} {tip}: {sample:?} → {q:?}: {p:e} m, {r:e} rad, {outcome:?}"
            );
        });
    }
}

#[test]
fn out_of_reach_is_reported_and_legal() {
    let (file, base, tip) = IIWAS[0];
    let Some((robot, form)) = load_closed_form(file, base, tip, "S-R-S") else {
        return;
    };
    let mut q = vec![0.0; 7];
    let outcome = form.solve(
        DVec3::new(3.0, 0.0, 0.5),
        DQuat::IDENTITY,
        &robot.chain.middle(),
        SwivelPolicy::KeepCurrent,
        &mut q,
    );
    assert!(!outcome.reached);
    assert!(robot.chain.within_limits(&q, 0.0));
}

#[test]
fn reversed_screws_are_the_inverse_chain() {
    let Some(robot) = load("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee") else {
        return;
    };
    let screws = Screws::from_chain(robot.skeleton(), &robot.chain).expect("revolute");
    let reversed = screws.reversed();
    let mut rng = Rng(3);
    for _ in 0..20 {
        let q = robot.random_q(&mut rng);
        let back: Vec<f64> = q.iter().rev().map(|v| -v).collect();
        let forward = screws.forward(&q);
        assert!(forward.abs_diff_eq(robot.tip(&q), 1e-12));
        let inverse = reversed.forward(&back) * forward;
        assert!(inverse.abs_diff_eq(DAffine3::IDENTITY, 1e-12));
    }
}

#[test]
fn auto_runs_the_closed_form_on_iiwa_and_lm_on_ur5() {
    let tolerance = Tolerance {
        position: 1e-5,
        rotation: 1e-5,
    };
    let config = SolverConfig::Auto(AutoConfig::default());
    for (file, base, tip, ran) in [
        ("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee", "srs_arm"),
        ("ur5_robot.urdf", "base_link", "ee_link", "lm"),
    ] {
        let Some(robot) = load(file, base, tip) else {
            return;
        };
        let mut rng = Rng(5);
        let targets: Vec<BatchTarget> = (0..50)
            .map(|_| {
                let (position, rotation) = pose_of(&robot.tip(&robot.random_q(&mut rng)));
                BatchTarget {
                    position: position.to_array(),
                    orientation: Some(rotation.to_array()),
                    seed: None,
                }
            })
            .collect();
        let results = solve_threaded(
            robot.skeleton(),
            &robot.chain,
            &targets,
            &config,
            tolerance,
            1,
        );
        for (target, result) in targets.iter().zip(&results) {
            assert_eq!(result.solver.as_deref(), Some(ran), "{file}");
            let goal = DAffine3::from_rotation_translation(
                DQuat::from_array(target.orientation.expect("6-D")),
                DVec3::from_array(target.position),
            );
            let (p, r) = robot.errors(&result.q, &goal);
            assert!((p - result.position_error).abs() < 1e-12, "{file}");
            assert!((r - result.rotation_error).abs() < 1e-9, "{file}");
            assert_eq!(
                result.status == SolveStatus::Converged,
                p < 1e-5 && r < 1e-5 && result.within_limits,
                "{file}: {result:?}"
            );
        }
        let solved = results
            .iter()
            .filter(|r| r.status == SolveStatus::Converged)
            .count();
        assert!(solved >= 49, "{file}: {solved} of 50");
    }
}
