//! Blending poses and motions against independent ground truth: the inputs themselves at
//! weights 0 and 1, symmetry, masks, the crossfade's weight curve against the rest-to-rest cubic
//! of seed 002, minimum-acceleration trajectories, and planar forward kinematics of a blended
//! hinge chain by trigonometry.

use ikarus_core::blend::{
    Crossfade, JointMask, RotationBlend, blend_motions, blend_poses, crossfade,
};
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::trajectory::Profile;
use ikarus_core::{LocalPose, ModelPose, Motion, MotionError, SkeletonBuilder, Transform, fk};

const BLENDS: [RotationBlend; 2] = [RotationBlend::Slerp, RotationBlend::Nlerp];

/// A humanoid posture: every joint turned about its own axis by an angle from `seed`, the
/// root moved.
fn humanoid_pose(seed: f64) -> LocalPose {
    let skeleton = builtin_humanoid();
    let mut pose = skeleton.rest_pose();
    for (j, t) in pose.transforms_mut().iter_mut().enumerate() {
        let k = j as f64 + seed;
        let axis = DVec3::new(k.sin(), (1.3 * k).cos(), 0.5 + 0.1 * k).normalize();
        t.rotation *= DQuat::from_axis_angle(axis, 0.8 * (2.1 * k).sin());
    }
    pose.transforms_mut()[0].translation += DVec3::new(seed, 0.1 * seed, -seed);
    pose.transforms_mut()[0].scale = DVec3::splat(1.0 + 0.1 * seed);
    pose
}

fn blended(
    a: &LocalPose,
    b: &LocalPose,
    w: f64,
    mask: Option<&JointMask>,
    r: RotationBlend,
) -> LocalPose {
    let mut out = a.clone();
    blend_poses(a, b, w, mask, r, &mut out).unwrap();
    out
}

/// Largest difference between two poses, rotations compared as rotations (q ≡ −q).
fn gap(a: &LocalPose, b: &LocalPose) -> f64 {
    a.transforms()
        .iter()
        .zip(b.transforms())
        .map(|(x, y)| {
            let r = (x.rotation - y.rotation)
                .length()
                .min((x.rotation + y.rotation).length());
            r.max((x.translation - y.translation).length())
                .max((x.scale - y.scale).length())
        })
        .fold(0.0, f64::max)
}

#[test]
fn weights_zero_and_one_reproduce_the_inputs_exactly() {
    let (a, b) = (humanoid_pose(0.3), humanoid_pose(1.7));
    let skeleton = builtin_humanoid();
    let half = JointMask::uniform(&skeleton, 0.5);
    for r in BLENDS {
        assert_eq!(blended(&a, &b, 0.0, None, r), a);
        assert_eq!(blended(&a, &b, 1.0, None, r), b);
        assert_eq!(blended(&a, &b, -3.0, None, r), a);
        assert_eq!(blended(&a, &b, 7.0, None, r), b);
        assert_eq!(blended(&a, &b, 0.0, Some(&half), r), a);
        let mask = JointMask::uniform(&skeleton, 1.0);
        assert_eq!(blended(&a, &b, 1.0, Some(&mask), r), b);
    }
}

#[test]
fn a_pose_blended_with_itself_is_itself() {
    let a = humanoid_pose(0.9);
    for r in BLENDS {
        for w in [0.1, 0.25, 0.5, 0.77] {
            assert!(gap(&blended(&a, &a, w, None, r), &a) < 1e-15);
        }
    }
}

#[test]
fn blends_are_symmetric() {
    let (a, b) = (humanoid_pose(0.3), humanoid_pose(1.7));
    for r in BLENDS {
        for w in [0.1, 0.25, 0.5, 0.77] {
            let g = gap(
                &blended(&a, &b, w, None, r),
                &blended(&b, &a, 1.0 - w, None, r),
            );
            assert!(g < 1e-12, "{r:?} {w}: {g:e}");
        }
    }
}

/// Upper body from `b`, everything else from `a`: joints outside the mask are `a`'s bit for
/// bit, joints inside are `b`'s at weight 1 and the half-way blend at weight 0.5.
#[test]
fn masks_leave_unmasked_joints_untouched() {
    let skeleton = builtin_humanoid();
    let (a, b) = (humanoid_pose(0.3), humanoid_pose(1.7));
    let spine = skeleton.joint("spine").unwrap();
    let mask = JointMask::uniform(&skeleton, 0.0).with_subtree(&skeleton, spine, 1.0);
    let upper = skeleton.subtree(spine);
    assert!(upper.len() > 10 && upper.len() < skeleton.len());
    for r in BLENDS {
        let full = blended(&a, &b, 1.0, Some(&mask), r);
        let half = blended(&a, &b, 0.5, Some(&mask), r);
        let unmasked_half = blended(&a, &b, 0.5, None, r);
        for j in 0..skeleton.len() {
            let (got, got_half) = (full.transforms()[j], half.transforms()[j]);
            if upper.contains(&j) {
                assert_eq!(got, b.transforms()[j]);
                assert_eq!(got_half, unmasked_half.transforms()[j]);
            } else {
                assert_eq!(got, a.transforms()[j]);
                assert_eq!(got_half, a.transforms()[j]);
            }
        }
    }
    assert_eq!(
        JointMask::from_weights(vec![0.0, 1.5]),
        Err(MotionError::InvalidWeight { weight: 1.5 })
    );
    let mut out = a.clone();
    let short = JointMask::from_weights(vec![1.0; 3]).unwrap();
    assert!(matches!(
        blend_poses(&a, &b, 0.5, Some(&short), RotationBlend::Slerp, &mut out),
        Err(MotionError::JointCount { found: 3, .. })
    ));
    assert!(blend_poses(&a, &b, f64::NAN, None, RotationBlend::Slerp, &mut out).is_err());
}

/// A planar chain of hinges about Z with bones along X: the slerp blend turns every hinge by
/// the blended angle, so the joints sit where planar trigonometry puts them; each bone's
/// direction lies between its directions in the two inputs, for nlerp too.
#[test]
fn blended_hinge_chain_lies_between_its_inputs() {
    let lengths = [0.0, 0.5, 0.4, 0.3];
    let mut builder = SkeletonBuilder::new();
    let names = ["j0", "j1", "j2", "tip"];
    builder.joint(names[0], None, Transform::IDENTITY);
    for i in 1..4 {
        let rest = Transform::from_translation(DVec3::X * lengths[i]);
        builder.joint(names[i], Some(names[i - 1]), rest);
    }
    let skeleton = builder.build().unwrap();
    let posed = |angles: [f64; 3]| {
        let mut pose = skeleton.rest_pose();
        for (t, a) in pose.transforms_mut().iter_mut().zip(angles) {
            t.rotation = DQuat::from_rotation_z(a);
        }
        pose
    };
    let (angles_a, angles_b) = ([0.3, -1.2, 0.9], [1.4, 0.5, -0.7]);
    let (a, b) = (posed(angles_a), posed(angles_b));
    let directions = |pose: &LocalPose| {
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, pose, &mut model);
        let p: Vec<DVec3> = model.positions().collect();
        (
            p.clone(),
            (1..4)
                .map(|i| (p[i] - p[i - 1]).y.atan2((p[i] - p[i - 1]).x))
                .collect::<Vec<_>>(),
        )
    };
    let (_, dir_a) = directions(&a);
    let (_, dir_b) = directions(&b);
    for r in BLENDS {
        for w in [0.1, 0.3, 0.5, 0.8] {
            let (points, dirs) = directions(&blended(&a, &b, w, None, r));
            for i in 0..3 {
                let (lo, hi) = (dir_a[i].min(dir_b[i]), dir_a[i].max(dir_b[i]));
                assert!(dirs[i] > lo && dirs[i] < hi, "{r:?} {w} bone {i}");
            }
            if r == RotationBlend::Slerp {
                let mut cumulative = 0.0;
                let mut expected = DVec3::ZERO;
                for i in 0..3 {
                    cumulative += (1.0 - w) * angles_a[i] + w * angles_b[i];
                    expected +=
                        lengths[i + 1] * DVec3::new(cumulative.cos(), cumulative.sin(), 0.0);
                    assert!((points[i + 1] - expected).length() < 1e-12, "{w} joint {i}");
                }
            }
        }
    }
}

/// `frames` humanoid poses `humanoid_pose(start + step · k)` as a clip at `frame_time`.
fn humanoid_clip(frame_time: f64, frames: u32, start: f64, step: f64) -> Motion {
    clip(
        frame_time,
        (0..frames)
            .map(|k| humanoid_pose(start + step * f64::from(k)))
            .collect(),
    )
}

fn clip(frame_time: f64, poses: Vec<LocalPose>) -> Motion {
    let mut m = Motion::new(frame_time, poses[0].len()).unwrap();
    for p in poses {
        m.push(p).unwrap();
    }
    m
}

/// One hinge held at a constant angle per clip: the crossfade's angle is
/// `θa + w(t)(θb − θa)` with `w` the trajectories' rest-to-rest cubic (or the quintic), before the
/// fade `a`'s frames and after it `b`'s, exactly.
#[test]
fn crossfade_follows_its_weight_curve_and_ends_on_the_clips() {
    let hinge = |angle: f64| {
        LocalPose::from_transforms(vec![Transform::from_rotation(DQuat::from_rotation_z(
            angle,
        ))])
    };
    let (theta_a, theta_b) = (0.2, 1.3);
    let dt = 0.01;
    let a = clip(dt, vec![hinge(theta_a); 101]);
    let b = clip(dt, vec![hinge(theta_b); 151]);
    for profile in [Profile::MinimumAcceleration, Profile::MinimumJerk] {
        let fade = Crossfade {
            start: 0.4,
            duration: 0.5,
            profile,
        };
        let out = crossfade(&a, &b, &fade, RotationBlend::Slerp).unwrap();
        assert_eq!(out.len(), 40 + 150 + 1);
        for (k, frame) in out.frames().iter().enumerate() {
            let t = k as f64 * dt;
            let s = ((t - 0.4) / 0.5).clamp(0.0, 1.0);
            let w = match profile {
                Profile::MinimumAcceleration => theta_curve(s),
                Profile::MinimumJerk => s * s * s * (10.0 - 15.0 * s + 6.0 * s * s),
            };
            let angle = 2.0
                * frame.transforms()[0]
                    .rotation
                    .z
                    .atan2(frame.transforms()[0].rotation.w);
            assert!(
                (angle - (theta_a + w * (theta_b - theta_a))).abs() < 1e-12,
                "{t}"
            );
        }
    }
}

/// Seed 002's `θ(t) = θ₀ + α t²(3T − 2t)/T³` with `θ₀ = 0`, `α = 1`, `T = 1`.
fn theta_curve(s: f64) -> f64 {
    s * s * (3.0 - 2.0 * s)
}

/// Two moving humanoid clips: the crossfade starts on `a`'s first frame and ends on `b`'s last,
/// equals `a` before the fade and `b` after it, and no step between frames exceeds the bound
/// from the clips' own speeds plus the weight's speed times their distance.
#[test]
fn crossfade_of_moving_clips_is_continuous() {
    let dt = 1.0 / 60.0;
    let a = humanoid_clip(dt, 61, 0.0, 0.01);
    let b = humanoid_clip(dt, 91, 2.0, 0.012);
    let fade = Crossfade {
        start: 0.5,
        duration: 0.4,
        profile: Profile::MinimumAcceleration,
    };
    let out = crossfade(&a, &b, &fade, RotationBlend::Slerp).unwrap();
    assert_eq!(out.len(), 30 + 90 + 1);
    assert_eq!(out.frames()[0], a.frames()[0]);
    assert_eq!(out.frames()[out.len() - 1], b.frames()[90]);
    for k in 0..30 {
        assert_eq!(out.frames()[k], a.frames()[k]);
    }
    for k in 54..out.len() {
        assert_eq!(out.frames()[k], b.frames()[k - 30], "{k}");
    }
    let max_step = |m: &Motion| {
        m.frames()
            .windows(2)
            .map(|w| gap(&w[0], &w[1]))
            .fold(0.0, f64::max)
    };
    let distance = (0..out.len())
        .map(|k| {
            let (mut pa, mut pb) = (a.frames()[0].clone(), b.frames()[0].clone());
            a.sample(k as f64 * dt, &mut pa);
            b.sample(k as f64 * dt - 0.5, &mut pb);
            gap(&pa, &pb)
        })
        .fold(0.0, f64::max);
    // Smoothstep's largest slope is 1.5 per fade length.
    let bound = max_step(&a) + max_step(&b) + 1.5 * dt / 0.4 * distance;
    let step = max_step(&out);
    assert!(step <= bound * 1.001, "{step} > {bound}");
    assert!(
        crossfade(
            &a,
            &b,
            &Crossfade {
                start: -1.0,
                ..fade
            },
            RotationBlend::Slerp
        )
        .is_err()
    );
    let empty = Motion::new(dt, a.joint_count()).unwrap();
    assert_eq!(
        crossfade(&a, &empty, &fade, RotationBlend::Slerp),
        Err(MotionError::Empty)
    );
}

/// A constant-weight blend of two clips of different lengths lasts as long as the longer, each
/// frame being the blend of the clips' frames at that time.
#[test]
fn blended_motions_blend_frame_by_frame() {
    let dt = 0.02;
    let a = humanoid_clip(dt, 21, 0.0, 0.02);
    let b = humanoid_clip(dt, 31, 1.0, 0.02);
    let out = blend_motions(&a, &b, 0.3, None, RotationBlend::Nlerp).unwrap();
    assert_eq!(out.len(), 31);
    for k in 0..31 {
        let fa = &a.frames()[k.min(20)];
        let expected = blended(fa, &b.frames()[k], 0.3, None, RotationBlend::Nlerp);
        assert!(gap(&out.frames()[k], &expected) < 1e-12);
    }
}
