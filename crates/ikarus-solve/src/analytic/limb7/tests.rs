//! Unit tests of the closed form.

use super::{DQuat, DVec3, Limb7, Limb7Geometry};

#[test]
fn dispatched_solve_pose_gives_the_bits_of_the_baseline_build() {
    // `solve_pose` runs the closed form compiled for the best instruction set of this
    // machine; called directly here it is the baseline (SSE2) build. Same bits expected.
    let mut geometry = Limb7Geometry::seed(0.28, 0.25);
    geometry.elbow_frame = DQuat::from_rotation_x(0.3);
    geometry.lower = DVec3::new(0.02, -0.25, 0.01);
    let limb = Limb7::new(geometry).expect("valid limb");
    let mut rng = crate::test_rng::Xorshift(0x9e37_79b9_7f4a_7c15_u64);
    let mut next = || rng.signed();
    for i in 0..5000 {
        let target = DVec3::new(next(), next(), next()) * 0.6;
        let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::Z);
        let goal = DQuat::from_axis_angle(axis, next() * 3.0);
        let swivel = next() * 4.0;
        let hint = (i % 2 == 0).then(|| next() * 3.0);
        let dispatched = limb
            .solve_pose(target, goal, swivel, hint)
            .expect("finite input");
        let mut baseline = limb.solve_unchecked(target, swivel, hint);
        baseline.wrist = Some(limb.wrist_for(&baseline, goal));
        assert_eq!(dispatched, baseline, "{target} {goal} {swivel} {hint:?}");
    }
}
