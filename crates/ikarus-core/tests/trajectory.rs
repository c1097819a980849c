//! Trajectories between postures (seed 002, trajectories) against independent ground truth:
//! boundary conditions, continuity at via points, the seed's closed forms, and a numerical
//! minimisation of the discretised cost.

use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::trajectory::{
    Curve, Parameterisation, PoseTrajectory, Profile, TrajectoryError, ViaVelocity,
};

const EPS: f64 = 1e-9;

fn curve(times: &[f64], values: &[f64], a: f64, c: f64) -> Curve {
    Curve::new(
        times,
        values,
        a,
        c,
        Profile::MinimumAcceleration,
        ViaVelocity::Continuous,
    )
    .unwrap()
}

/// No via point: the seed's θ(t) = θ₀ + α t²(3T − 2t)/T³, at rest at both ends.
#[test]
fn rest_to_rest_is_the_seed_cubic() {
    let (theta0, alpha, duration) = (0.3, 1.7, 2.5);
    let c = curve(&[0.0, duration], &[theta0, theta0 + alpha], 0.0, 0.0);
    for i in 0..=100 {
        let t = duration * f64::from(i) / 100.0;
        let seed = theta0 + alpha * t * t * (3.0 * duration - 2.0 * t) / duration.powi(3);
        assert!((c.evaluate(t).0 - seed).abs() < EPS);
    }
    let (_, v0, _) = c.evaluate(0.0);
    let (p1, v1, _) = c.evaluate(duration);
    assert!(v0.abs() < EPS && v1.abs() < EPS && (p1 - theta0 - alpha).abs() < EPS);
}

/// Via points: positions hit, velocity and acceleration continuous at every via point, end
/// velocities as given; the derivatives are checked against finite differences.
#[test]
fn via_points_are_hit_with_continuous_velocity_and_acceleration() {
    let times = [0.0, 0.4, 1.1, 1.5, 2.6];
    let values = [0.0, 1.2, -0.3, 0.5, 2.0];
    let c = curve(&times, &values, 0.2, -0.4);
    for (t, y) in times.iter().zip(values) {
        assert!((c.evaluate(*t).0 - y).abs() < EPS);
    }
    assert!((c.evaluate(0.0).1 - 0.2).abs() < EPS);
    assert!((c.evaluate(2.6).1 + 0.4).abs() < EPS);
    for &t in &times[1..4] {
        let (before, after) = (c.evaluate(t - 1e-9), c.evaluate(t + 1e-9));
        assert!((before.1 - after.1).abs() < 1e-6, "velocity jumps at {t}");
        assert!(
            (before.2 - after.2).abs() < 1e-6,
            "acceleration jumps at {t}"
        );
    }
    let h = 1e-5;
    for i in 1..100 {
        let t = 2.6 * f64::from(i) / 100.0;
        let (p, v, a) = c.evaluate(t);
        let (pm, pp) = (c.evaluate(t - h).0, c.evaluate(t + h).0);
        assert!(((pp - pm) / (2.0 * h) - v).abs() < 1e-6);
        assert!(((pp - 2.0 * p + pm) / (h * h) - a).abs() < 1e-3);
    }
}

/// The minimiser agrees with a numerical minimisation of the discretised cost Σ (second
/// differences)² on a fine grid with the keys and end velocities as constraints (a linear
/// least-squares problem solved here by Gauss–Seidel on its normal equations).
#[test]
fn agrees_with_numerical_minimisation_of_the_discretised_cost() {
    let times = [0.0, 0.5, 1.5, 2.0];
    let values = [0.0, 1.0, -0.5, 0.25];
    let c = curve(&times, &values, 0.0, 0.0);
    let n = 400; // grid intervals over [0, 2]
    let dt = 2.0 / n as f64;
    // Fixed grid values: the keys. Zero end velocities: mirrored ghost points y₋₁ = y₁ and
    // y_{n+1} = y_{n−1}, whose second differences enter with the trapezoid's weight ½.
    let mut fixed: Vec<Option<f64>> = vec![None; n + 1];
    for (&t, &v) in times.iter().zip(&values) {
        fixed[(t / dt).round() as usize] = Some(v);
    }
    let free: Vec<usize> = (0..=n).filter(|&i| fixed[i].is_none()).collect();
    let index = |i: usize| free.iter().position(|&f| f == i);
    // Normal equations of Σ_k (y_{k+1} − 2y_k + y_{k−1})², dense, by Gaussian elimination.
    let m = free.len();
    let mut a = vec![vec![0.0; m]; m];
    let mut b = vec![0.0; m];
    let half = 0.5f64.sqrt();
    for k in 0..=n {
        let stencil = match k {
            0 => [(0, -2.0 * half), (1, 2.0 * half), (1, 0.0)],
            k if k == n => [(n, -2.0 * half), (n - 1, 2.0 * half), (n - 1, 0.0)],
            k => [(k - 1, 1.0), (k, -2.0), (k + 1, 1.0)],
        };
        let constant: f64 = stencil
            .iter()
            .filter_map(|&(i, w)| fixed[i].map(|v| w * v))
            .sum();
        for &(i, wi) in &stencil {
            let Some(r) = index(i) else { continue };
            b[r] -= wi * constant;
            for &(j, wj) in &stencil {
                if let Some(c) = index(j) {
                    a[r][c] += wi * wj;
                }
            }
        }
    }
    for col in 0..m {
        let pivot = (col..m)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap();
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..m {
            let f = a[row][col] / a[col][col];
            if f != 0.0 {
                let pivot_row = a[col].clone();
                for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= f * p;
                }
                b[row] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; m];
    for row in (0..m).rev() {
        let tail: f64 = (row + 1..m).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    let y: Vec<f64> = (0..=n)
        .map(|i| fixed[i].unwrap_or_else(|| x[index(i).unwrap()]))
        .collect();
    let worst = (0..=n)
        .map(|i| (y[i] - c.evaluate(i as f64 * dt).0).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-4, "discretised minimiser differs by {worst}");
    // And the discrete cost of the spline is no larger than that of the seed-formula curve.
    let seed = Curve::new(
        &times,
        &values,
        0.0,
        0.0,
        Profile::MinimumAcceleration,
        ViaVelocity::SeedFormula,
    )
    .unwrap();
    let cost = |c: &Curve| {
        (0..4000)
            .map(|i| c.evaluate(2.0 * (f64::from(i) + 0.5) / 4000.0).2.powi(2))
            .sum::<f64>()
    };
    assert!(cost(&c) < cost(&seed));
}

/// The seed's one-via-point formulas: its printed second piece is the Hermite cubic with the
/// same b, and its printed b differs from the minimiser's (b = 4/3 vs 3/2 in the worked case),
/// leaving an acceleration jump the minimiser does not have.
#[test]
fn seed_via_formula_is_reproduced_and_its_acceleration_jump_shown() {
    let (s, t) = (1.0, 2.0);
    let seed = Curve::new(
        &[0.0, s, t],
        &[0.0, 1.0, 2.0],
        0.0,
        0.0,
        Profile::MinimumAcceleration,
        ViaVelocity::SeedFormula,
    )
    .unwrap();
    let b = seed.knot_velocities()[1];
    assert!((b - 4.0 / 3.0).abs() < EPS);
    let minimiser = curve(&[0.0, s, t], &[0.0, 1.0, 2.0], 0.0, 0.0);
    assert!((minimiser.knot_velocities()[1] - 1.5).abs() < EPS);
    let jump = seed.evaluate(s + 1e-9).2 - seed.evaluate(s - 1e-9).2;
    assert!((jump - 4.0 / 3.0).abs() < 1e-6, "{jump}");
    // The seed's printed θ(t) for S ≤ t ≤ T with γ = 0, α = β = 1, a = c = 0.
    let (alpha, beta, c) = (1.0, 1.0, 0.0);
    let h = t - s;
    for i in 0..=20 {
        let x = s + h * f64::from(i) / 20.0;
        let printed = alpha
            + 1.0 / (h * h)
                * (((b + c) - 2.0 * beta / h) * x.powi(3)
                    + (-b * (2.0 * t + s) - c * (t + 2.0 * s) + 3.0 * (t + s) / h * beta) * x * x
                    + (b * t * (t + 2.0 * s) + c * s * (2.0 * t + s) - 6.0 * beta * s * t / h) * x
                    + beta * s * s / h * (3.0 * t - s)
                    - s * t * (b * t + c * s));
        assert!((seed.evaluate(x).0 - printed).abs() < 1e-9, "t = {x}");
    }
}

#[test]
fn minimum_jerk_stops_at_every_key_with_zero_acceleration() {
    let c = Curve::new(
        &[0.0, 1.0, 3.0],
        &[0.0, 2.0, -1.0],
        0.0,
        0.0,
        Profile::MinimumJerk,
        ViaVelocity::Continuous,
    )
    .unwrap();
    for t in [0.0, 1.0, 3.0] {
        let (_, v, a) = c.evaluate(t);
        assert!(v.abs() < EPS && a.abs() < EPS);
    }
    let (p, _, _) = c.evaluate(0.5);
    assert!((p - 1.0).abs() < EPS, "symmetric halfway");
}

/// Whole postures of the built-in humanoid: keys reproduced exactly, rotations without Euler
/// folds (an elbow turning 170° stays on its axis), root translation included.
#[test]
fn pose_trajectories_pass_through_the_keys() {
    let skeleton = builtin_humanoid();
    let elbow = skeleton.joint("leftLowerArm").unwrap();
    let hips = skeleton.joint("hips").unwrap();
    let rest = skeleton.rest_pose();
    let mut mid = rest.clone();
    mid[elbow].rotation = DQuat::from_axis_angle(DVec3::NEG_Y, 1.2);
    mid[hips].translation += DVec3::new(0.0, -0.1, 0.3);
    let mut end = rest.clone();
    end[elbow].rotation = DQuat::from_axis_angle(DVec3::NEG_Y, 2.97);
    end[hips].translation += DVec3::new(0.2, 0.0, 0.6);
    let keys = vec![(0.0, rest.clone()), (0.7, mid.clone()), (2.0, end.clone())];
    for parameterisation in [Parameterisation::RotationVector, Parameterisation::Euler] {
        let trajectory = PoseTrajectory::new(
            &keys,
            Profile::MinimumAcceleration,
            ViaVelocity::Continuous,
            parameterisation,
        )
        .unwrap();
        assert!((trajectory.duration() - 2.0).abs() < EPS);
        let mut out = rest.clone();
        for (time, key) in &keys {
            trajectory.sample(*time, &mut out);
            for j in skeleton.joints() {
                assert!(out[j].rotation.angle_between(key[j].rotation) < 1e-9);
                assert!((out[j].translation - key[j].translation).length() < 1e-12);
            }
        }
        if parameterisation == Parameterisation::RotationVector {
            for i in 0..=50 {
                trajectory.sample(2.0 * f64::from(i) / 50.0, &mut out);
                let (axis, angle) = out[elbow].rotation.to_axis_angle();
                assert!(
                    angle < 1e-9 || axis.dot(DVec3::NEG_Y).abs() > 1.0 - 1e-9,
                    "left the hinge"
                );
            }
        }
    }
    assert_eq!(
        PoseTrajectory::new(
            &keys[..1],
            Profile::default(),
            ViaVelocity::default(),
            Parameterisation::default()
        )
        .unwrap_err(),
        TrajectoryError::TooFewKeys(1)
    );
    let backwards = vec![(1.0, rest.clone()), (0.5, end.clone())];
    assert!(matches!(
        PoseTrajectory::new(
            &backwards,
            Profile::default(),
            ViaVelocity::default(),
            Parameterisation::default()
        ),
        Err(TrajectoryError::BadTime { .. })
    ));
    let mut bad = rest.clone();
    bad[hips].translation.x = f64::NAN;
    assert!(matches!(
        PoseTrajectory::new(
            &[(0.0, rest), (1.0, bad)],
            Profile::default(),
            ViaVelocity::default(),
            Parameterisation::default()
        ),
        Err(TrajectoryError::NonFinite { index: 1 })
    ));
}
