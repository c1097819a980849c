//! Unit tests of the solver's steps.

use super::*;
use crate::{Effector, Goal};

#[test]
fn jacobian_matches_finite_differences() {
    let skeleton = ikarus_core::humanoid::builtin_humanoid();
    let model = builtin_humanoid().expect("shipped model");
    let joints = model.bind(&skeleton).unwrap();
    let n = model.len();
    // A posture away from the mean (every coordinate moved), unprojected.
    let x: Vec<f64> = (0..n)
        .map(|i| model.offset()[i] + 0.3 * ((i as f64) * 0.7).sin())
        .collect();
    let mut pose = skeleton.rest_pose();
    model.decode(&x, &joints, &mut pose);
    let mut world = ModelPose::new(&skeleton);
    fk::forward_kinematics(&skeleton, &pose, &mut world);
    let effector = |name: &str, orient: bool| {
        let joint = skeleton.joint(name).unwrap();
        Effector {
            joint,
            goal: Goal {
                position: Some(world.position(joint) + DVec3::new(0.1, -0.05, 0.02)),
                // At the current orientation: the error's derivative is the axis exactly.
                orientation: orient.then(|| world.rotation(joint)),
            },
            weight: 1.5,
        }
    };
    let task = IkTask {
        effectors: vec![
            effector("leftHand", true),
            effector("rightFoot", false),
            effector("head", true),
        ],
        ..IkTask::default()
    };
    let config = ExampleConfig::default();
    let mut problem = Problem::new(&skeleton, &task, model, joints.clone(), &config, &pose);
    fk::forward_kinematics(&skeleton, &pose, &mut problem.fk);
    problem.fill_jacobian(&x);
    let analytic = problem.jacobian.clone();
    let rows = problem.rows;
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    // Hinges turn only about their axis: their columns are checked along that direction.
    let direction = |c: usize| -> Vec<f64> {
        let k = c / 3;
        let v = DVec3::new(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
        let mut e = vec![0.0; n];
        match hinge_direction(skeleton.limit(joints[k]), v) {
            Some(d) => {
                let unit = DVec3::AXES[c % 3];
                e[3 * k..3 * k + 3].copy_from_slice(&(d * d.dot(unit)).to_array());
            }
            None => e[c] = 1.0,
        }
        e
    };
    for c in 0..n {
        let e = direction(c);
        let mut residual_at = |dx: f64| {
            let mut xs = x.clone();
            for (xi, ei) in xs.iter_mut().zip(&e) {
                *xi += dx * ei;
            }
            let mut p = skeleton.rest_pose();
            model.decode(&xs, &joints, &mut p);
            fk::forward_kinematics(&skeleton, &p, &mut problem.fk);
            problem.fill_residual();
            problem.residual.clone()
        };
        let (plus, minus) = (residual_at(h), residual_at(-h));
        for r in 0..rows {
            let numeric = (plus[r] - minus[r]) / (2.0 * h);
            worst = worst.max((numeric - analytic[r * n + c]).abs());
        }
    }
    assert!(worst < 1e-6, "largest difference {worst}");
}

#[test]
fn free_root_columns_match_finite_differences() {
    let skeleton = ikarus_core::humanoid::builtin_humanoid();
    let model = builtin_humanoid().expect("shipped model");
    let joints = model.bind(&skeleton).unwrap();
    let mut pose = skeleton.rest_pose();
    model.decode(model.offset(), &joints, &mut pose);
    let mut world = ModelPose::new(&skeleton);
    fk::forward_kinematics(&skeleton, &pose, &mut world);
    let effector = |name: &str| {
        let joint = skeleton.joint(name).unwrap();
        Effector {
            joint,
            goal: Goal {
                position: Some(world.position(joint) + DVec3::new(0.1, 0.2, -0.1)),
                // Orientation rows are exact only at zero error (see the joint test); the
                // root turn below would leave one, so positions only here.
                orientation: None,
            },
            weight: 0.7,
        }
    };
    let task = IkTask {
        effectors: vec![effector("leftHand"), effector("rightFoot")],
        ..IkTask::default()
    };
    let config = ExampleConfig {
        move_root: true,
        ..ExampleConfig::default()
    };
    let mut problem = Problem::new(&skeleton, &task, model, joints, &config, &pose);
    let (n, m) = (problem.n, model.len());
    assert_eq!(n, m + 6);
    let mut x = vec![0.0; n];
    problem.encode(&pose, &mut x);
    // A root already moved and turned.
    x[m..].copy_from_slice(&[0.05, -0.02, 0.1, 0.2, -0.3, 0.1]);
    let mut at = pose.clone();
    problem.decode(&x, &mut at);
    fk::forward_kinematics(&skeleton, &at, &mut problem.fk);
    problem.fill_jacobian(&x);
    let analytic = problem.jacobian.clone();
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for c in m..n {
        let mut residual_at = |dx: f64| {
            let mut xs = x.clone();
            xs[c] += dx;
            let mut p = pose.clone();
            problem.decode(&xs, &mut p);
            fk::forward_kinematics(&skeleton, &p, &mut problem.fk);
            problem.fill_residual();
            problem.residual.clone()
        };
        let (plus, minus) = (residual_at(h), residual_at(-h));
        for r in 0..problem.rows {
            let numeric = (plus[r] - minus[r]) / (2.0 * h);
            worst = worst.max((numeric - analytic[r * n + c]).abs());
        }
    }
    assert!(worst < 1e-6, "largest difference {worst}");
}

#[test]
fn right_jacobian_matches_finite_differences() {
    let v = DVec3::new(0.4, -0.7, 0.3);
    let jr = right_jacobian(v);
    let h = 1e-6;
    for c in 0..3 {
        let mut d = DVec3::ZERO;
        d[c] = h;
        let q0 = DQuat::from_scaled_axis(v);
        let q1 = DQuat::from_scaled_axis(v + d);
        let numeric = rotation_vector(q0.conjugate() * q1) / h;
        assert!(
            (numeric - jr.col(c)).length() < 1e-5,
            "{c}: {numeric} vs {}",
            jr.col(c)
        );
    }
}

#[test]
fn a_motion_part_is_checked_and_kept_by_the_file() {
    let model = builtin_humanoid().expect("shipped model").clone();
    let k = model.dims();
    let identity: Vec<f64> = (0..k * k)
        .map(|i| if i % (k + 1) == 0 { 0.04 } else { 0.0 })
        .collect();
    assert!(matches!(
        model.clone().with_motion(vec![1.0; k]),
        Err(ModelError::Size { what: "motion", .. })
    ));
    let mut skewed = identity.clone();
    skewed[1] = 0.01;
    assert!(matches!(
        model.clone().with_motion(skewed),
        Err(ModelError::Value { what: "motion", .. })
    ));
    let mut flat = identity.clone();
    flat[0] = 0.0;
    assert!(model.clone().with_motion(flat).is_err());
    let moving = model.clone().with_motion(identity).unwrap();
    assert_eq!(moving.motion().map(<[f64]>::len), Some(k * k));
    let text = moving.to_json();
    assert_eq!(PostureModel::from_json(&text).unwrap(), moving);
    // A row of another length is refused by name.
    let short = text.replacen("0.04,", "", 1);
    let error = PostureModel::from_json(&short).unwrap_err().to_string();
    assert!(error.contains("motion row"), "{error}");
    // A model without one writes no motion key.
    assert!(!model.to_json().contains("motion"));
}

#[test]
fn trusted_start_settings_out_of_range_are_refused() {
    let skeleton = ikarus_core::humanoid::builtin_humanoid();
    let hand = skeleton.joint("leftHand").unwrap();
    let task = IkTask {
        effectors: vec![Effector {
            joint: hand,
            goal: Goal::from_position(DVec3::new(0.4, 1.2, 0.3)),
            weight: 1.0,
        }],
        ..IkTask::default()
    };
    for config in [
        ExampleConfig {
            start_isotropy: -0.1,
            ..ExampleConfig::default()
        },
        ExampleConfig {
            start_prior: f64::NAN,
            ..ExampleConfig::default()
        },
        ExampleConfig {
            motion_spread: 0.0,
            ..ExampleConfig::default()
        },
    ] {
        let mut pose = skeleton.rest_pose();
        let report = solve_task(&skeleton, &task, &config, &mut pose);
        assert_eq!(report.status, SolveStatus::InvalidInput, "{config:?}");
        assert_eq!(pose, skeleton.rest_pose());
    }
}
