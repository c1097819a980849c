//! Unit tests of the kernel.

use super::*;

#[test]
fn looks_left_with_a_quarter_turn_about_up() {
    let input = AimInput {
        target: DVec3::new(2.0, 0.0, 0.0),
        ..AimInput::default()
    };
    let out = solve(&input, &AimSettings::default());
    assert!(out.reached && !out.limited);
    let expected = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    assert!(out.correction.abs_diff_eq(expected, 1e-15), "{out:?}");
}

#[test]
fn eyes_ahead_of_the_joint_aim_exactly() {
    // Eye 1 m ahead and 1 m up, target 3 m straight up: the head tips back until the
    // eye's forward ray crosses the target.
    let input = AimInput {
        target: DVec3::new(0.0, 3.0, 0.0),
        offset: DVec3::new(0.0, 1.0, 1.0),
        ..AimInput::default()
    };
    let out = solve(&input, &AimSettings::default());
    assert!(out.reached);
    let eye = out.correction * input.offset;
    let sight = out.correction * input.forward;
    assert!(sight.cross(input.target - eye).length() < 1e-14);
    assert!(sight.dot(input.target - eye) > 0.0);
}

#[test]
fn opposite_directions_turn_half_way_round() {
    let q = arc(DVec3::Z * 2.0, -DVec3::Z, 4.0);
    assert!((q * DVec3::Z + DVec3::Z).length() < 1e-15);
}
