//! Unit tests of the closed form's steps.

use super::*;

#[test]
fn decompose_recomposes_every_order() {
    let m = DMat3::from_quat(DQuat::from_axis_angle(
        DVec3::new(0.3, -0.5, 0.8).normalize(),
        1.3,
    ));
    for order in HipOrder::ALL {
        let (sin, cos) = hip_pairs(&m, 1.0, 0.0, order);
        let by_axis = angles(sin, cos);
        assert!((-PI / 2.0..=PI / 2.0).contains(&by_axis[order.axes()[1]]));
        let back = DMat3::from_quat(order.rotation(by_axis[2], by_axis[0], by_axis[1]));
        assert!(back.abs_diff_eq(m, 1e-14), "{order:?}");
    }
}

#[test]
fn angle_matches_std_atan2() {
    let mut rng = crate::test_rng::Xorshift(0x1234_5678_9abc_def0_u64);
    let mut next = || rng.signed();
    let mut worst: f64 = 0.0;
    for i in 0..1_000_000 {
        let scale = 10f64.powi(i % 40 - 20);
        let (y, x) = (next() * scale, next() * scale);
        let (ours, std) = (angle(y, x), y.atan2(x));
        let ulp = f64::EPSILON * std.abs().max(f64::MIN_POSITIVE);
        worst = worst.max((ours - std).abs() / ulp);
    }
    eprintln!("angle vs f64::atan2: worst {worst} ulp");
    assert!(worst <= 2.0, "{worst} ulp");
    for (y, x, want) in [
        (0.0, 0.0, 0.0),
        (-0.0, -1.0, PI),
        (0.0, -1.0, PI),
        (1.0, 0.0, PI / 2.0),
        (-1.0, 0.0, -PI / 2.0),
        (1.0, 1.0, PI / 4.0),
        (-1.0, -1.0, -3.0 * PI / 4.0),
        (1e-300, 1.0, 1e-300),
    ] {
        assert_eq!(angle(y, x), want, "{y} {x}");
    }
    assert!(angle(f64::NAN, 1.0).is_nan());
}

#[test]
fn dispatched_solve_gives_the_bits_of_the_baseline_build() {
    // `solve_pose` runs the closed form compiled for the best instruction set of this
    // machine; called directly here it is the baseline (SSE2) build. Same bits expected.
    let mut params = Leg6Params::new(DVec3::new(0.0, -0.1, 0.0), 0.4, 0.38, 0.05)
        .with_hip_order(HipOrder::YawRollPitch);
    params.thigh = DVec3::new(0.01, 0.0, -0.4);
    params.ankle = DVec3::new(0.0, 0.0, -0.02);
    let mut rng = crate::test_rng::Xorshift(0x9e37_79b9_7f4a_7c15_u64);
    let mut next = || rng.signed();
    for order in HipOrder::ALL {
        let params = params.with_hip_order(order);
        for _ in 0..2000 {
            let position = DVec3::new(next() * 0.3, -0.1 + next() * 0.3, -0.6 + next() * 0.3);
            let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::Z);
            let rotation = DQuat::from_axis_angle(axis, next() * 1.5);
            let dispatched = solve_pose(&params, position, rotation);
            let baseline =
                finite_or_invalid(solve_pose_unchecked(&params, position, rotation), &params);
            assert_eq!(dispatched, baseline, "{order:?} {position} {rotation}");
        }
    }
}

#[test]
fn fit_wraps_before_clamping() {
    assert_eq!(fit(3.0, -4.0, -3.0), (3.0 - TAU, false));
    assert_eq!(fit(0.5, -0.2, 0.2), (0.2, true));
    assert_eq!(fit(-3.0, -0.2, 3.0), (3.0, true)); // nearer around the circle
    assert_eq!(fit(1.0, f64::NEG_INFINITY, f64::INFINITY), (1.0, false));
}
