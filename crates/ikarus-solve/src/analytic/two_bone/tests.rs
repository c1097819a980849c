//! The kernel's unit tests.

use super::*;

#[test]
fn right_angle_arm_reaches_a_target_on_the_pole_side() {
    // Upper arm along +X (1 m), forearm along +X (1 m), hinge about +Z: flexing swings the
    // forearm towards +Y.
    let input = TwoBoneInput {
        start_joint: DAffine3::IDENTITY,
        mid_joint: DAffine3::from_translation(DVec3::X),
        end_joint: DAffine3::from_translation(DVec3::X * 2.0),
        target: DVec3::new(1.0, 1.0, 0.0),
        pole: Pole::Vector(DVec3::new(1.0, -1.0, 0.0)),
        mid_axis: DVec3::Z,
    };
    let out = solve(&input, &TwoBoneSettings::default());
    assert!(out.reached);
    let (axis, angle) = out.mid_correction.to_axis_angle();
    assert!(
        (angle - std::f64::consts::FRAC_PI_2).abs() < 1e-12,
        "{angle}"
    );
    assert!((axis - DVec3::Z).length() < 1e-12, "{axis}");
    // Mid goes to (1, 0, 0): already on the pole's side of the line y = x.
    let mid = out.start_correction * DVec3::X;
    assert!((mid - DVec3::X).length() < 1e-12, "{mid}");
    let end = mid + out.start_correction * (out.mid_correction * DVec3::X);
    assert!((end - input.target).length() < 1e-12, "{end}");
}

#[test]
fn dispatched_solve_gives_the_bits_of_the_baseline_build() {
    // `solve` runs the closed form compiled for the best instruction set of this machine;
    // called directly here it is the baseline (SSE2) build. Same bits expected.
    let mut rng = crate::test_rng::Xorshift(0x9e37_79b9_7f4a_7c15_u64);
    let mut next = || rng.signed();
    let mut vector = || DVec3::new(next(), next(), next());
    for i in 0..5000 {
        let input = TwoBoneInput {
            start_joint: DAffine3::from_mat3_translation(
                DMat3::from_cols(vector(), vector(), vector()),
                vector(),
            ),
            mid_joint: DAffine3::from_mat3_translation(
                DMat3::from_cols(vector(), vector(), vector()),
                vector(),
            ),
            end_joint: DAffine3::from_translation(vector()),
            target: vector() * 2.0,
            pole: if i % 2 == 0 {
                Pole::Vector(vector())
            } else {
                Pole::Hint(vector())
            },
            mid_axis: vector(),
        };
        let settings = TwoBoneSettings {
            twist_angle: [0.0, 0.7][i % 2],
            soften: [1.0, 0.9, 1.0][i % 3],
            weight: [1.0, 1.0, 1.0, 0.5][i % 4],
        };
        let baseline = solve_unchecked(&input, &settings);
        let baseline =
            if baseline.start_correction.is_finite() && baseline.mid_correction.is_finite() {
                baseline
            } else {
                TwoBoneOutput::IDENTITY
            };
        assert_eq!(solve(&input, &settings), baseline, "{input:?} {settings:?}");
    }
}

#[test]
fn recover_pole_is_the_normal_part_of_the_mid_offset() {
    let pole = recover_pole(DVec3::ZERO, DVec3::new(1.0, 1.0, 0.0), DVec3::X * 2.0);
    assert_eq!(pole, Some(DVec3::Y));
    assert_eq!(recover_pole(DVec3::ZERO, DVec3::X, DVec3::X * 2.0), None);
    assert_eq!(recover_pole(DVec3::ZERO, DVec3::X, DVec3::ZERO), None);
}
