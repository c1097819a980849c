//! The conformance suite every iterative solver runs: chains of 2..30 joints, each limit kind,
//! reachable and unreachable targets, under six parent transforms (identity, translated,
//! rotated, uniform scale, non-uniform scale, mirrored), with and without a base joint in the
//! middle of the chain; and the built-in humanoid with a base on the far side of the root
//! (the left hand reaching, the right hand the base), every CCD variant also at its defaults.
//! It fails if any joint ends outside its limit, any output is NaN, the report's residuals
//! differ from forward kinematics, convergence is claimed when FK says no, or the base joint
//! moves.
//!
//! A new iterative solver adds its configurations to `solvers()`.

mod common;

use std::f64::consts::PI;

use common::{Draw, Rng, model};
use glam::{DQuat, DVec3};
use ikarus_core::{
    EulerLimit, EulerOrder, HingeLimit, JointId, JointLimit, MmdLimit, Skeleton, SkeletonBuilder,
    SwingTwistLimit, Transform,
};
use ikarus_solve::jacobian::{JacobianConfig, JacobianMethod};
use ikarus_solve::{
    CcdConfig, CcdDamping, CcdVariant, Goal, IkTask, SolveStatus, SolverConfig, measure, solve,
};
use ikarus_testdata::limits::LIMIT_KINDS;

fn solvers() -> Vec<(&'static str, SolverConfig)> {
    let ccd = |variant, damping| SolverConfig::Ccd(CcdConfig::new(variant, damping, 48));
    let jacobian = |method| SolverConfig::Jacobian(JacobianConfig::new(method, 48));
    vec![
        ("ccd", ccd(CcdVariant::Classic, CcdDamping::None)),
        ("ccd/length", ccd(CcdVariant::Classic, CcdDamping::Length)),
        ("ccd/mmd", ccd(CcdVariant::Mmd, CcdDamping::None)),
        (
            "lm",
            SolverConfig::Lm(ikarus_solve::lm::LmConfig::default()),
        ),
        (
            "fabrik",
            SolverConfig::Fabrik(ikarus_solve::fabrik::FabrikConfig::new(48)),
        ),
        ("jacobian/transpose", jacobian(JacobianMethod::Transpose)),
        ("jacobian/pinv", jacobian(JacobianMethod::Pinv)),
        ("jacobian/dls", jacobian(JacobianMethod::Dls)),
        ("jacobian/sdls", jacobian(JacobianMethod::Sdls)),
    ]
}

fn parents() -> [(&'static str, Transform); 6] {
    let t = |translation: DVec3, rotation: DQuat, scale: DVec3| Transform {
        translation,
        rotation,
        scale,
    };
    let tilt = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 2.1);
    [
        ("identity", Transform::IDENTITY),
        (
            "translated",
            t(DVec3::new(3.0, -1.0, 2.0), DQuat::IDENTITY, DVec3::ONE),
        ),
        ("rotated", t(DVec3::ZERO, tilt, DVec3::ONE)),
        ("uniform scale", t(DVec3::ZERO, tilt, DVec3::splat(2.5))),
        (
            "non-uniform scale",
            t(DVec3::ZERO, tilt, DVec3::new(1.0, 2.0, 0.5)),
        ),
        (
            "mirrored",
            t(DVec3::new(0.5, 0.0, 0.0), tilt, DVec3::new(-1.0, 1.0, 1.0)),
        ),
    ]
}

fn limit(kind: &str, index: usize, rng: &mut Rng) -> JointLimit {
    let axis = DVec3::from_array(rng.in_cube()).normalize();
    match kind {
        "free" => JointLimit::Free,
        "locked" => ikarus_testdata::limits::locked_every_third(index),
        "hinge" => JointLimit::Hinge(HingeLimit {
            axis,
            min: rng.range(-2.5, 0.0),
            max: rng.range(0.2, 2.5),
        }),
        "swing_twist" => JointLimit::SwingTwist(SwingTwistLimit {
            twist_axis: axis,
            swing_axis: axis.any_orthonormal_vector(),
            swing_u: (rng.range(-1.2, -0.1), rng.range(0.1, 1.2)),
            swing_v: (rng.range(-1.2, -0.1), rng.range(0.1, 1.2)),
            twist: (rng.range(-1.0, 0.0), rng.range(0.0, 1.0)),
        }),
        "euler" => JointLimit::Euler(EulerLimit {
            order: [EulerOrder::Xyz, EulerOrder::Zxy, EulerOrder::Yzx][index % 3],
            min: [
                rng.range(-2.0, 0.0),
                rng.range(-2.0, 0.0),
                rng.range(-0.6, 0.0),
            ],
            max: [
                rng.range(0.0, 2.0),
                rng.range(0.0, 2.0),
                rng.range(0.0, 0.6),
            ],
        }),
        "mmd" => {
            // Knee-like joints (one bending axis, the others locked) alternate with free ones.
            if index.is_multiple_of(2) {
                JointLimit::Mmd(MmdLimit {
                    min: DVec3::new(0.0, 0.0, 0.0),
                    max: DVec3::new(rng.range(1.0, PI), 0.0, 0.0),
                })
            } else {
                JointLimit::Mmd(MmdLimit {
                    min: DVec3::splat(-PI),
                    max: DVec3::splat(PI),
                })
            }
        }
        _ => {
            let kinds = ["free", "hinge", "swing_twist", "euler", "mmd", "locked"];
            limit(kinds[index % kinds.len()], index, rng)
        }
    }
}

/// `parent` → `j0` … `j{n-1}` → `tip`, random bones of 0.05–0.3 m and random rest rotations.
fn chain(n: usize, kind: &str, parent: Transform, rng: &mut Rng) -> Skeleton {
    let mut b = SkeletonBuilder::new();
    b.joint("parent", None, parent);
    let mut previous = "parent".to_owned();
    for i in 0..n {
        let name = format!("j{i}");
        let offset = if i == 0 {
            DVec3::ZERO
        } else {
            let d = DVec3::new(
                rng.range(-1.0, 1.0),
                rng.range(0.2, 1.0),
                rng.range(-1.0, 1.0),
            );
            d.normalize() * rng.range(0.05, 0.3)
        };
        let rest = Transform {
            translation: offset,
            rotation: rng.rotation_up_to(0.6),
            scale: DVec3::ONE,
        };
        b.limited_joint(&name, Some(&previous), rest, limit(kind, i, rng));
        previous = name;
    }
    let d = DVec3::new(rng.range(-0.3, 0.3), 1.0, rng.range(-0.3, 0.3)).normalize();
    b.joint(
        "tip",
        Some(&previous),
        Transform::from_translation(d * rng.range(0.05, 0.3)),
    );
    b.build().expect("conformance chains are valid")
}

struct Failure(String);

fn check(
    label: &str,
    scenario: &str,
    s: &Skeleton,
    task: &IkTask,
    config: &SolverConfig,
    start: &ikarus_core::LocalPose,
) -> Result<SolveStatus, Failure> {
    let fail = |what: String| Failure(format!("{label} on {scenario}: {what}"));
    let mut pose = start.clone();
    let base_before = task.base.map(|b| model(s, &pose)[b]);
    let report = solve(s, task, config, &mut pose);
    if !pose.is_finite() || !report.position_error.is_finite() || !report.rotation_error.is_finite()
    {
        return Err(fail(format!("non-finite output, report {report:?}")));
    }
    if let Some((j, by)) = s.limit_violation(&pose) {
        return Err(fail(format!("{} outside its limit by {by} rad", s.name(j))));
    }
    let (p, r) = measure(s, task, &pose);
    if (p, r) != (report.position_error, report.rotation_error) {
        return Err(fail(format!(
            "report says {report:?}, FK measures ({p}, {r})"
        )));
    }
    if report.converged() && !(p <= task.tolerance.position && r <= task.tolerance.rotation) {
        return Err(fail(format!("claims convergence at ({p}, {r})")));
    }
    if let (Some(b), Some(before)) = (task.base, base_before) {
        let after = model(s, &pose)[b];
        let moved = (after.translation - before.translation).length()
            + (after.matrix3 - before.matrix3)
                .abs()
                .to_cols_array()
                .iter()
                .sum::<f64>();
        if moved > 1e-9 * (1.0 + before.translation.length()) {
            return Err(fail(format!("base joint moved by {moved}")));
        }
    }
    Ok(report.status)
}

#[test]
fn every_iterative_solver_keeps_limits_reports_honestly_and_never_nans() {
    let mut rng = Rng(2024);
    let mut failures = Vec::new();
    let mut converged_reachable = 0;
    let mut reachable_runs = 0;
    let mut runs = 0;
    for n in [2, 3, 5, 8, 13, 21, 30] {
        for kind in LIMIT_KINDS {
            for (parent_name, parent) in parents() {
                let s = chain(n, kind, parent, &mut rng);
                let movers: Vec<JointId> =
                    (0..n).map(|i| s.joint(&format!("j{i}")).unwrap()).collect();
                let tip = s.joint("tip").unwrap();
                let truth = common::random_pose(&s, &movers, &mut rng, 1.0);
                let reachable = model(&s, &truth).position(tip);
                let rest_model = model(&s, &s.rest_pose());
                let root = rest_model.position(movers[0]);
                let reach: f64 = (0..n)
                    .map(|i| {
                        let next = if i + 1 < n { movers[i + 1] } else { tip };
                        (rest_model.position(next) - rest_model.position(movers[i])).length()
                    })
                    .sum();
                let far = root + DVec3::new(1.0, 0.7, -0.4).normalize() * reach * 3.0;
                for (target_name, target) in [("reachable", reachable), ("unreachable", far)] {
                    for base in [None, Some(movers[n / 2])] {
                        let task = IkTask {
                            base,
                            ..IkTask::from_goal(tip, Goal::from_position(target))
                        };
                        let scenario = format!(
                            "{n} joints, {kind} limits, {parent_name} parent, {target_name} target, base {}",
                            base.map_or("none".to_owned(), |b| s.name(b).to_owned())
                        );
                        for (label, config) in solvers() {
                            runs += 1;
                            match check(label, &scenario, &s, &task, &config, &s.rest_pose()) {
                                Ok(status) => {
                                    if target_name == "unreachable"
                                        && status == SolveStatus::Converged
                                    {
                                        failures.push(format!("{label} on {scenario}: converged on an unreachable target"));
                                    }
                                    if target_name == "reachable" && base.is_none() {
                                        reachable_runs += 1;
                                        converged_reachable +=
                                            usize::from(status == SolveStatus::Converged);
                                    }
                                }
                                Err(Failure(message)) => failures.push(message),
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    eprintln!(
        "conformance: {runs} runs; {converged_reachable}/{reachable_runs} reachable targets (no base) converged"
    );
    assert_eq!(runs, 7 * 7 * 6 * 2 * 2 * solvers().len());
}

#[test]
fn every_iterative_solver_keeps_the_humanoid_s_right_hand_as_base_through_the_root() {
    let (s, hand, base) = common::humanoid_hand_to_hand();
    let mut configs = solvers();
    for json in [
        r#"{"kind": "ccd"}"#,
        r#"{"kind": "ccd", "damping": "length"}"#,
        r#"{"kind": "ccd", "variant": "mmd"}"#,
    ] {
        configs.push((json, serde_json::from_str(json).unwrap()));
    }
    let mut failures = Vec::new();
    let targets = common::reach_targets(&s, hand, 60, 13);
    for (i, &target) in targets.iter().enumerate() {
        let task = IkTask::from_goal(hand, Goal::from_position(target)).with_base(base);
        let scenario = format!("humanoid, leftHand to target {i}, base rightHand");
        for (label, config) in &configs {
            if let Err(Failure(message)) =
                check(label, &scenario, &s, &task, config, &s.rest_pose())
            {
                failures.push(message);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} runs failed:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}
