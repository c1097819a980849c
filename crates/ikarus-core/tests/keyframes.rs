//! Keyframe interpolation (slerp, squad) against independent ground truth: the keys themselves,
//! glam's slerp, Shoemake's textbook squad and Catmull–Rom computed directly here, and
//! finite-difference angular velocities.

use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::keyframes::{Interpolation, Keyframes};
use ikarus_core::trajectory::TrajectoryError;
use ikarus_core::{LocalPose, Transform};

/// Two joints: a translated, scaled root and a rotating child.
fn pose(x: f64, axis: DVec3, angle: f64, child_angle: f64, scale: f64) -> LocalPose {
    LocalPose::from_transforms(vec![
        Transform {
            translation: DVec3::new(x, 0.5 * x * x, -x),
            rotation: DQuat::from_axis_angle(axis.normalize(), angle),
            scale: DVec3::new(scale, 1.0, 1.0 / scale),
        },
        Transform {
            translation: DVec3::new(0.0, 1.0, 0.0),
            rotation: DQuat::from_rotation_z(child_angle),
            scale: DVec3::ONE,
        },
    ])
}

fn keys(times: &[f64]) -> Vec<(f64, LocalPose)> {
    let shapes = [
        (0.0, DVec3::new(1.0, 0.2, 0.0), 0.1, -0.3, 1.0),
        (0.7, DVec3::new(0.3, 1.0, 0.2), 1.1, 0.4, 1.2),
        (0.2, DVec3::new(-0.4, 0.5, 1.0), 2.0, 1.3, 0.9),
        (1.5, DVec3::new(0.0, 0.3, 1.0), 0.6, 0.2, 1.1),
        (-0.4, DVec3::new(1.0, -1.0, 0.5), 1.7, -0.8, 1.0),
    ];
    times
        .iter()
        .zip(shapes)
        .map(|(&t, (x, axis, a, c, s))| (t, pose(x, axis, a, c, s)))
        .collect()
}

fn sample(frames: &Keyframes, time: f64) -> LocalPose {
    let mut out = LocalPose::from_transforms(vec![Transform::IDENTITY; frames.joint_count()]);
    frames.sample(time, &mut out);
    out
}

/// Rotation vector of `from⁻¹ to`.
fn rotation_vector(from: DQuat, to: DQuat) -> DVec3 {
    let mut d = from.conjugate() * to;
    if d.w < 0.0 {
        d = -d;
    }
    d.to_scaled_axis()
}

/// Body-frame angular velocity of joint `j` at `t`, from one side, by the second-order
/// one-sided difference of rotation vectors relative to the posture at `t`.
fn angular_velocity(frames: &Keyframes, j: usize, t: f64, side: f64) -> DVec3 {
    let h = 1e-5 * side;
    let q0 = sample(frames, t).transforms()[j].rotation;
    let r1 = rotation_vector(q0, sample(frames, t + h).transforms()[j].rotation);
    let r2 = rotation_vector(q0, sample(frames, t + 2.0 * h).transforms()[j].rotation);
    (4.0 * r1 - r2) / (2.0 * h)
}

fn translation_velocity(frames: &Keyframes, t: f64, side: f64) -> DVec3 {
    let h = 1e-5 * side;
    let p = |t: f64| sample(frames, t).transforms()[0].translation;
    (4.0 * p(t + h) - 3.0 * p(t) - p(t + 2.0 * h)) / (2.0 * h)
}

const NON_UNIFORM: [f64; 5] = [0.0, 0.3, 1.1, 1.4, 2.5];

#[test]
fn passes_exactly_through_every_key() {
    for interpolation in [Interpolation::Slerp, Interpolation::Squad] {
        let keys = keys(&NON_UNIFORM);
        let frames = Keyframes::new(&keys, interpolation).unwrap();
        for (t, key) in &keys {
            let got = sample(&frames, *t);
            for (a, b) in got.transforms().iter().zip(key.transforms()) {
                assert_eq!(a.translation, b.translation, "{interpolation:?} at {t}");
                assert_eq!(a.scale, b.scale);
                assert!(a.rotation == b.rotation || a.rotation == -b.rotation);
            }
        }
        // Clamped outside the keys.
        assert_eq!(sample(&frames, -1.0), sample(&frames, 0.0));
        assert_eq!(sample(&frames, 9.0), sample(&frames, 2.5));
        assert_eq!(sample(&frames, f64::NAN), sample(&frames, 0.0));
    }
}

#[test]
fn two_keys_give_slerp_and_lerp() {
    let keys = keys(&[0.5, 2.0]);
    let (a, b) = (&keys[0].1, &keys[1].1);
    for interpolation in [Interpolation::Slerp, Interpolation::Squad] {
        let frames = Keyframes::new(&keys, interpolation).unwrap();
        for i in 0..=20 {
            let u = f64::from(i) / 20.0;
            let got = sample(&frames, 0.5 + 1.5 * u);
            for j in 0..2 {
                let (p, q, g) = (a.transforms()[j], b.transforms()[j], got.transforms()[j]);
                let slerp = p.rotation.slerp(q.rotation, u);
                assert!(
                    (g.rotation - slerp).length() < 1e-12 || (g.rotation + slerp).length() < 1e-12,
                    "{interpolation:?} u {u}: {} vs {slerp}",
                    g.rotation
                );
                assert!((g.translation - p.translation.lerp(q.translation, u)).length() < 1e-12);
                assert!((g.scale - p.scale.lerp(q.scale, u)).length() < 1e-12);
            }
        }
    }
}

/// Squad's angular velocity (and the translation's velocity) agrees from both sides of every
/// interior key at non-uniform times; slerp's jumps.
#[test]
fn squad_velocity_is_continuous_at_interior_keys_where_slerp_jumps() {
    let keys = keys(&NON_UNIFORM);
    let squad = Keyframes::new(&keys, Interpolation::Squad).unwrap();
    let slerp = Keyframes::new(&keys, Interpolation::Slerp).unwrap();
    for &t in &NON_UNIFORM[1..4] {
        for j in 0..2 {
            let (before, after) = (
                angular_velocity(&squad, j, t, -1.0),
                angular_velocity(&squad, j, t, 1.0),
            );
            let relative = (before - after).length() / before.length().max(after.length());
            assert!(
                relative < 1e-6,
                "squad joint {j} at {t}: {before} vs {after}"
            );
            let (before, after) = (
                angular_velocity(&slerp, j, t, -1.0),
                angular_velocity(&slerp, j, t, 1.0),
            );
            let relative = (before - after).length() / before.length().max(after.length());
            assert!(
                relative > 0.05,
                "slerp joint {j} at {t}: {before} vs {after}"
            );
        }
        let (before, after) = (
            translation_velocity(&squad, t, -1.0),
            translation_velocity(&squad, t, 1.0),
        );
        assert!(
            (before - after).length() < 1e-6 * before.length(),
            "{before} {after}"
        );
    }
}

#[test]
fn unit_quaternions_everywhere() {
    let keys = keys(&NON_UNIFORM);
    for interpolation in [Interpolation::Slerp, Interpolation::Squad] {
        let frames = Keyframes::new(&keys, interpolation).unwrap();
        for i in 0..=1000 {
            let got = sample(&frames, 2.5 * f64::from(i) / 1000.0);
            for t in got.transforms() {
                assert!((t.rotation.length() - 1.0).abs() < 1e-14);
                assert!(t.is_finite());
            }
        }
    }
}

/// Keys `q` and `−q` are the same rotation: no spin between them, and a key written with the
/// other sign does not change the curve.
#[test]
fn hemisphere_flips_do_not_spin() {
    let q = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 2.5);
    let one = |q: DQuat| LocalPose::from_transforms(vec![Transform::from_rotation(q)]);
    let flat = Keyframes::new(
        &[(0.0, one(q)), (1.0, one(-q)), (2.0, one(q)), (3.0, one(-q))],
        Interpolation::Squad,
    )
    .unwrap();
    for i in 0..=300 {
        let r = sample(&flat, f64::from(i) / 100.0).transforms()[0].rotation;
        assert!(r.dot(q).abs() > 1.0 - 1e-14, "spins at {i}: {r}");
    }
    let keys = keys(&NON_UNIFORM);
    let mut flipped = keys.clone();
    for (k, (_, pose)) in flipped.iter_mut().enumerate() {
        if k % 2 == 1 {
            for t in pose.transforms_mut() {
                t.rotation = -t.rotation;
            }
        }
    }
    let a = Keyframes::new(&keys, Interpolation::Squad).unwrap();
    let b = Keyframes::new(&flipped, Interpolation::Squad).unwrap();
    for i in 0..=100 {
        let t = 2.5 * f64::from(i) / 100.0;
        let (p, q) = (sample(&a, t), sample(&b, t));
        for (x, y) in p.transforms().iter().zip(q.transforms()) {
            assert!(x.rotation.dot(y.rotation).abs() > 1.0 - 1e-14);
        }
    }
}

/// Shoemake's textbook squad at uniform key times, computed directly: `slerp` by the sine
/// formula, `log`/`exp` through glam's axis–angle, `sᵢ = qᵢ exp(−(log(qᵢ⁻¹qᵢ₊₁) +
/// log(qᵢ⁻¹qᵢ₋₁))/4)` with `s₀ = q₀`, `sₙ = qₙ`; translations by uniform Catmull–Rom with
/// reflected end points.
#[test]
fn squad_matches_the_textbook_formula_at_uniform_times() {
    fn slerp(p: DQuat, q: DQuat, t: f64) -> DQuat {
        let cos = p.dot(q).clamp(-1.0, 1.0);
        let theta = cos.acos();
        if theta < 1e-9 {
            return p;
        }
        (p * ((1.0 - t) * theta).sin() + q * (t * theta).sin()) * (1.0 / theta.sin())
    }
    fn log(q: DQuat) -> DVec3 {
        let (axis, angle) = q.to_axis_angle();
        axis * (angle / 2.0)
    }
    fn exp(v: DVec3) -> DQuat {
        let angle = v.length();
        if angle == 0.0 {
            return DQuat::IDENTITY;
        }
        DQuat::from_axis_angle(v / angle, 2.0 * angle)
    }
    let times = [0.0, 0.5, 1.0, 1.5, 2.0];
    let keys = keys(&times);
    let frames = Keyframes::new(&keys, Interpolation::Squad).unwrap();
    for j in 0..2 {
        let mut q: Vec<DQuat> = keys.iter().map(|k| k.1.transforms()[j].rotation).collect();
        for i in 1..q.len() {
            if q[i].dot(q[i - 1]) < 0.0 {
                q[i] = -q[i];
            }
        }
        let n = q.len() - 1;
        let s: Vec<DQuat> = (0..=n)
            .map(|i| {
                if i == 0 || i == n {
                    return q[i];
                }
                let inv = q[i].conjugate();
                q[i] * exp(-(log(inv * q[i + 1]) + log(inv * q[i - 1])) / 4.0)
            })
            .collect();
        let p: Vec<DVec3> = keys
            .iter()
            .map(|k| k.1.transforms()[j].translation)
            .collect();
        let mut worst: f64 = 0.0;
        for i in 0..n {
            let before = if i == 0 { 2.0 * p[0] - p[1] } else { p[i - 1] };
            let after = if i + 1 == n {
                2.0 * p[n] - p[n - 1]
            } else {
                p[i + 2]
            };
            for step in 0..=50 {
                let u = f64::from(step) / 50.0;
                let reference = slerp(
                    slerp(q[i], q[i + 1], u),
                    slerp(s[i], s[i + 1], u),
                    2.0 * u * (1.0 - u),
                );
                let catmull_rom = 0.5
                    * (2.0 * p[i]
                        + (p[i + 1] - before) * u
                        + (2.0 * before - 5.0 * p[i] + 4.0 * p[i + 1] - after) * u * u
                        + (-before + 3.0 * p[i] - 3.0 * p[i + 1] + after) * u * u * u);
                let got = sample(&frames, times[i] + 0.5 * u).transforms()[j];
                worst = worst.max((got.rotation - reference).length());
                worst = worst.max((got.translation - catmull_rom).length());
            }
        }
        assert!(worst < 1e-12, "joint {j}: {worst:e}");
    }
}

#[test]
fn bad_keys_are_errors() {
    let k = keys(&[0.0, 1.0, 2.0]);
    assert_eq!(
        Keyframes::new(&k[..1], Interpolation::Squad).unwrap_err(),
        TrajectoryError::TooFewKeys(1)
    );
    let mut same_time = k.clone();
    same_time[2].0 = 1.0;
    assert!(matches!(
        Keyframes::new(&same_time, Interpolation::Squad),
        Err(TrajectoryError::BadTime { index: 2, .. })
    ));
    let mut nan = k.clone();
    nan[1].1.transforms_mut()[1].rotation.x = f64::NAN;
    assert_eq!(
        Keyframes::new(&nan, Interpolation::Squad).unwrap_err(),
        TrajectoryError::NonFinite { index: 1 }
    );
    let mut short = k;
    short[2].1 = LocalPose::from_transforms(vec![Transform::IDENTITY]);
    assert!(matches!(
        Keyframes::new(&short, Interpolation::Slerp),
        Err(TrajectoryError::JointCount { index: 2, .. })
    ));
}
