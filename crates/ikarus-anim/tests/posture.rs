//! Posture models learned from the shared CMU walk: the PCA against a covariance computed here
//! from the frames, the Karcher mean against a constructed mean, postures carried onto the
//! built-in humanoid against the source's bone directions, and feature interpolation.

use glam::{DQuat, DVec3};
use ikarus_anim::posture::{
    self, FeatureInterpolator, HumanoidTransfer, LearnError, karcher_mean, mean_joint_error,
};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::dofs::rotation_vector;

fn walk() -> Option<(Skeleton, Vec<LocalPose>)> {
    let dir = ikarus_testdata::require("bvh", "posture")?;
    let path = dir.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let document = ikarus_formats::open(path.to_str()?, 0.056_444).expect("walk parses");
    let frames = document.motion?.frames().to_vec();
    Some((document.skeleton, frames))
}

/// The walk and a model of `dims` dimensions learned on all its frames.
fn walk_model(
    dims: usize,
) -> Option<(
    Skeleton,
    Vec<LocalPose>,
    ikarus_solve::example_based::PostureModel,
)> {
    let (skeleton, frames) = walk()?;
    let joints = posture::modelled_joints(&skeleton, Some(&HumanoidMap::recognise(&skeleton)));
    let model = posture::learn(&skeleton, &joints, &frames, dims).unwrap();
    Some((skeleton, frames, model))
}

#[test]
fn karcher_mean_of_rotations_spread_around_a_known_mean() {
    let mean = DQuat::from_euler(glam::EulerRot::YXZ, 0.7, -0.4, 1.1);
    // Pairs m·exp(±v): their Karcher mean is m exactly.
    let spread = [
        DVec3::new(0.3, 0.1, -0.2),
        DVec3::new(-0.1, 0.5, 0.05),
        DVec3::new(0.02, -0.3, 0.4),
    ];
    let rotations: Vec<DQuat> = spread
        .iter()
        .flat_map(|&v| {
            [
                mean * DQuat::from_scaled_axis(v),
                mean * DQuat::from_scaled_axis(-v),
            ]
        })
        .collect();
    let found = karcher_mean(&rotations);
    assert!(found.dot(mean).abs() > 1.0 - 1e-12, "{found} vs {mean}");
}

#[test]
fn pca_matches_the_covariance_of_the_frames() {
    let Some((skeleton, frames)) = walk() else {
        return;
    };
    let joints = posture::modelled_joints(&skeleton, Some(&HumanoidMap::recognise(&skeleton)));
    let n = 3 * joints.len();
    // Every direction kept: W Wᵀ + σ² I is then the sample covariance itself.
    let model = posture::learn(&skeleton, &joints, &frames, n).unwrap();
    assert_eq!(model.dims(), n);
    // The covariance of the frames' rotation vectors about the model's means, computed here.
    let vectors: Vec<Vec<f64>> = frames
        .iter()
        .map(|f| {
            joints
                .iter()
                .zip(model.mean_rotations())
                .flat_map(|(&j, m)| rotation_vector(m.conjugate() * f[j].rotation).to_array())
                .collect()
        })
        .collect();
    let count = vectors.len() as f64;
    let mean: Vec<f64> = (0..n)
        .map(|c| vectors.iter().map(|v| v[c]).sum::<f64>() / count)
        .collect();
    for (c, (m, o)) in mean.iter().zip(model.offset()).enumerate() {
        assert!((m - o).abs() < 1e-12, "offset {c}: {m} vs {o}");
    }
    let mut worst: f64 = 0.0;
    for a in 0..n {
        for b in 0..n {
            let sample = vectors
                .iter()
                .map(|v| (v[a] - mean[a]) * (v[b] - mean[b]))
                .sum::<f64>()
                / count;
            let modelled = (0..n)
                .map(|k| model.basis(a, k) * model.basis(b, k))
                .sum::<f64>()
                + if a == b { model.noise() } else { 0.0 };
            worst = worst.max((sample - modelled).abs());
        }
    }
    // Up to the noise floor (1e-9 of the total variance) that keeps C invertible.
    assert!(worst < 1e-8, "largest covariance difference {worst}");
    // The means are Karcher means: the offset is (near) zero.
    assert!(model.offset().iter().all(|o| o.abs() < 1e-9));
}

#[test]
fn fewer_dimensions_keep_the_largest_variance_and_reconstruct_the_frames() {
    let Some((skeleton, frames, small)) = walk_model(8) else {
        return;
    };
    let variances = small.variances();
    assert!(variances.windows(2).all(|w| w[0] >= w[1]));
    // The columns of W are orthogonal.
    for a in 0..8 {
        for b in 0..a {
            let dot: f64 = (0..small.len())
                .map(|r| small.basis(r, a) * small.basis(r, b))
                .sum();
            assert!(dot.abs() < 1e-9, "columns {a}, {b}: {dot}");
        }
    }
    // Eight dimensions rebuild the walk's frames within a few centimetres (MPJPE by FK), far
    // better than the mean posture does.
    let bound = small.bind(&skeleton).unwrap();
    let (mut rebuilt, mut mean_only) = (0.0, 0.0);
    for frame in frames.iter().step_by(10) {
        let mut x = vec![0.0; small.len()];
        small.encode(frame, &bound, &mut x);
        // Least squares z (the columns are orthogonal).
        let z: Vec<f64> = (0..8)
            .map(|k| {
                let (num, den) = (0..small.len()).fold((0.0, 0.0), |(n, d), r| {
                    (
                        n + small.basis(r, k) * (x[r] - small.offset()[r]),
                        d + small.basis(r, k).powi(2),
                    )
                });
                num / den
            })
            .collect();
        let mut y = vec![0.0; small.len()];
        small.posture(&z, &mut y);
        let mut pose = frame.clone();
        small.decode(&y, &bound, &mut pose);
        rebuilt += mean_joint_error(&skeleton, &pose, frame);
        let mut mean = frame.clone();
        small.decode(small.offset(), &bound, &mut mean);
        mean_only += mean_joint_error(&skeleton, &mean, frame);
    }
    assert!(rebuilt < 0.2 * mean_only, "{rebuilt} vs {mean_only}");
}

#[test]
fn learning_rejects_what_it_cannot_use() {
    let skeleton = builtin_humanoid();
    let joints = posture::modelled_joints(&skeleton, Some(&HumanoidMap::recognise(&skeleton)));
    let rest = skeleton.rest_pose();
    assert_eq!(
        posture::learn(&skeleton, &joints, std::slice::from_ref(&rest), 4),
        Err(LearnError::TooFewFrames(1))
    );
    assert_eq!(
        posture::learn(&skeleton, &[], &[rest.clone(), rest.clone()], 4),
        Err(LearnError::NoJoints)
    );
    let mut bad = rest.clone();
    bad[joints[3]].rotation = DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0);
    assert!(matches!(
        posture::learn(&skeleton, &joints, &[rest, bad], 4),
        Err(LearnError::BadFrame { frame: 1, .. })
    ));
}

/// `learn_from_motions` on whole motions: on the motion's own skeleton it is `learn` on every
/// `every`-th frame (moved onto the limits); carried onto the humanoid it is `learn` on the
/// transferred frames; and it names the motion it cannot use.
#[test]
fn learning_from_motions_is_learn_on_the_picked_and_carried_frames() {
    let Some((source, frames)) = walk() else {
        return;
    };
    let mut motion = ikarus_core::Motion::for_skeleton(&source, 1.0 / 120.0).unwrap();
    for f in &frames {
        motion.push(f.clone()).unwrap();
    }
    let source_map = HumanoidMap::recognise(&source);
    let joints = posture::modelled_joints(&source, Some(&source_map));
    let picked: Vec<LocalPose> = frames
        .iter()
        .step_by(3)
        .map(|f| {
            let mut f = f.clone();
            source.project_to_limits(&mut f);
            f
        })
        .collect();
    let learned = posture::learn_from_motions(&source, &[(&source, &motion)], 6, 3).unwrap();
    // Picked frames 1/40 s apart: the motion part compares frames three apart (1/15 s).
    let expected = posture::learn(&source, &joints, &picked, 6).unwrap();
    let expected = posture::learn_motion(expected, &source, &[&picked], 3).unwrap();
    assert_eq!(learned.model, expected);
    assert_eq!(learned.model.frames(), frames.len().div_ceil(3));

    let target = builtin_humanoid();
    let target_map = HumanoidMap::recognise(&target);
    let transfer = HumanoidTransfer::new(&source, &source_map, &target, &target_map).unwrap();
    let carried: Vec<LocalPose> = frames
        .iter()
        .step_by(5)
        .map(|f| {
            let mut out = target.rest_pose();
            transfer.apply(&source, f, &target, &mut out);
            target.project_to_limits(&mut out);
            out
        })
        .collect();
    let target_joints = posture::modelled_joints(&target, Some(&target_map));
    let onto = posture::learn_from_motions(&target, &[(&source, &motion)], 10, 5).unwrap();
    // 1/24 s apart: two apart is the nearest to 1/15 s.
    let expected = posture::learn(&target, &target_joints, &carried, 10).unwrap();
    let expected = posture::learn_motion(expected, &target, &[&carried], 2).unwrap();
    assert_eq!(onto.model, expected);

    let empty = ikarus_core::Motion::for_skeleton(&source, 1.0 / 120.0).unwrap();
    assert_eq!(
        posture::learn_from_motions(&source, &[(&source, &motion), (&source, &empty)], 6, 1)
            .unwrap_err(),
        LearnError::EmptyMotion { motion: 1 }
    );
    let mut builder = ikarus_core::SkeletonBuilder::new();
    for (name, parent) in [("base", None), ("link", Some("base"))] {
        builder.push(ikarus_core::RawJoint {
            name: name.to_owned(),
            parent: parent.map(str::to_owned),
            rest: ikarus_core::Transform::IDENTITY,
            limit: ikarus_core::JointLimit::default(),
        });
    }
    let robot = builder.build().unwrap();
    let mut still = ikarus_core::Motion::for_skeleton(&robot, 0.1).unwrap();
    still.push(robot.rest_pose()).unwrap();
    assert_eq!(
        posture::learn_from_motions(&target, &[(&robot, &still)], 6, 1).unwrap_err(),
        LearnError::Unmatched {
            motion: 0,
            matched: 0
        }
    );
    assert_eq!(
        posture::learn_from_motions(&source, &[(&source, &motion)], 0, 1).unwrap_err(),
        LearnError::NoDims
    );
    assert_eq!(
        posture::learn_from_motions(&source, &[(&source, &motion)], 6, 0).unwrap_err(),
        LearnError::NoStep
    );
}

#[test]
fn postures_carried_onto_the_humanoid_point_the_bones_the_same_way() {
    let Some((source, frames)) = walk() else {
        return;
    };
    let target = builtin_humanoid();
    let (source_map, target_map) = (
        HumanoidMap::recognise(&source),
        HumanoidMap::recognise(&target),
    );
    let transfer = HumanoidTransfer::new(&source, &source_map, &target, &target_map).unwrap();
    assert!(
        transfer.matched() >= 20,
        "{} bones matched",
        transfer.matched()
    );
    let bones = [
        (HumanoidBone::LeftUpperLeg, HumanoidBone::LeftLowerLeg),
        (HumanoidBone::RightLowerLeg, HumanoidBone::RightFoot),
        (HumanoidBone::LeftUpperArm, HumanoidBone::LeftLowerArm),
        (HumanoidBone::RightLowerArm, HumanoidBone::RightHand),
        (HumanoidBone::Spine, HumanoidBone::Neck),
    ];
    let direction =
        |s: &Skeleton, m: &HumanoidMap, pose: &LocalPose, (a, b): (HumanoidBone, HumanoidBone)| {
            let mut world = ModelPose::new(s);
            fk::forward_kinematics(s, pose, &mut world);
            (world.position(m.joint(b).unwrap()) - world.position(m.joint(a).unwrap())).normalize()
        };
    // How each bone's direction changes from rest to the frame is the same on both skeletons.
    let mut worst: f64 = 0.0;
    for frame in frames.iter().step_by(20) {
        let mut out = target.rest_pose();
        transfer.apply(&source, frame, &target, &mut out);
        for pair in bones {
            let turn = |s: &Skeleton, m: &HumanoidMap, p: &LocalPose| {
                DQuat::from_rotation_arc(
                    direction(s, m, &s.rest_pose(), pair),
                    direction(s, m, p, pair),
                )
            };
            let (a, b) = (
                turn(&source, &source_map, frame),
                turn(&target, &target_map, &out),
            );
            // Compare where each turn sends the same vector.
            let probe = direction(&source, &source_map, &source.rest_pose(), pair);
            worst = worst.max((a * probe).angle_between(b * probe).to_degrees());
        }
    }
    assert!(
        worst < 12.0,
        "largest bone direction difference {worst:.1}°"
    );
}

#[test]
fn interpolation_weights_and_postures() {
    let Some((skeleton, frames)) = walk() else {
        return;
    };
    let map = HumanoidMap::recognise(&skeleton);
    let joints = posture::modelled_joints(&skeleton, Some(&map));
    let (hips, foot) = (
        map.joint(HumanoidBone::Hips).unwrap(),
        map.joint(HumanoidBone::LeftFoot).unwrap(),
    );
    let other = map.joint(HumanoidBone::RightFoot).unwrap();
    // Feature: both feet relative to the hips, in the hips' frame.
    let feature = |pose: &LocalPose| {
        let mut world = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, pose, &mut world);
        let inv = world.rotation(hips).conjugate();
        let a = inv * (world.position(foot) - world.position(hips));
        let b = inv * (world.position(other) - world.position(hips));
        vec![a.x, a.y, a.z, b.x, b.y, b.z]
    };
    let (train, held): (Vec<_>, Vec<_>) = frames.iter().enumerate().partition(|(i, _)| i % 5 != 0);
    let examples: Vec<(Vec<f64>, LocalPose)> = train
        .iter()
        .map(|(_, f)| (feature(f), (*f).clone()))
        .collect();
    let interpolator = FeatureInterpolator::new(&skeleton, &joints, &examples, 4).unwrap();
    // An example's own feature gives that example alone, posture and all.
    let (f0, p0) = &examples[7];
    let mut pose = skeleton.rest_pose();
    assert_eq!(interpolator.interpolate(f0, &mut pose), vec![(7, 1.0)]);
    for &j in &joints {
        assert!(pose[j].rotation.dot(p0[j].rotation).abs() > 1.0 - 1e-12);
    }
    // Held-out frames: weights are a partition of one, and the blend lands much nearer the
    // frame than the nearest example's posture alone would on average.
    let (mut blended, mut mean) = (0.0, 0.0);
    let mean_pose = {
        let mut p = held[0].1.clone();
        let m = posture::learn(&skeleton, &joints, &frames, 1).unwrap();
        let bound = m.bind(&skeleton).unwrap();
        m.decode(m.offset(), &bound, &mut p);
        p
    };
    for (_, frame) in &held {
        let mut pose = (*frame).clone();
        let weights = interpolator.interpolate(&feature(frame), &mut pose);
        let sum: f64 = weights.iter().map(|w| w.1).sum();
        assert!((sum - 1.0).abs() < 1e-12 && weights.iter().all(|w| w.1 > 0.0));
        assert!(weights.len() <= 3, "k = 4 gives the 4th neighbour weight 0");
        blended += mean_joint_error(&skeleton, &pose, frame);
        let mut m = (*frame).clone();
        for &j in &joints {
            m[j] = mean_pose[j];
        }
        mean += mean_joint_error(&skeleton, &m, frame);
    }
    assert!(blended < 0.3 * mean, "{blended} vs {mean}");
    // Wrong feature lengths give no weights and leave the pose.
    assert!(interpolator.weights(&[1.0]).is_empty());
}

/// The motion part: the covariance of the latent point's change `lag` frames apart, against
/// one computed here from the closed-form posterior mean (the basis columns are orthogonal, so
/// `z_a = w_aᵀ(x − μ) / (|w_a|² + σ²)`), with no pair spanning two runs; the file keeps it
/// exactly; bad lags and runs too short are refused.
#[test]
fn the_motion_part_is_the_covariance_of_the_latent_change_between_frames() {
    let Some((skeleton, frames, model)) = walk_model(8) else {
        return;
    };
    let bound = model.bind(&skeleton).unwrap();
    let latent = |frame: &LocalPose| -> Vec<f64> {
        let mut x = vec![0.0; model.len()];
        model.encode(frame, &bound, &mut x);
        (0..8)
            .map(|a| {
                let (num, den) = (0..model.len()).fold((0.0, 0.0), |(n, d), r| {
                    let w = model.basis(r, a);
                    (n + w * (x[r] - model.offset()[r]), d + w * w)
                });
                num / (den + model.noise())
            })
            .collect()
    };
    let half = frames.len() / 2;
    let runs = [&frames[..half], &frames[half..]];
    let lag = 2;
    let mut expected = [[0.0; 8]; 8];
    let mut pairs = 0.0;
    for run in runs {
        let z: Vec<Vec<f64>> = run.iter().map(latent).collect();
        for (a, b) in z.iter().zip(z.iter().skip(lag)) {
            for i in 0..8 {
                for j in 0..8 {
                    expected[i][j] += (b[i] - a[i]) * (b[j] - a[j]);
                }
            }
            pairs += 1.0;
        }
    }
    let trace: f64 = (0..8).map(|i| expected[i][i] / pairs).sum();
    let learned = posture::learn_motion(model.clone(), &skeleton, &runs, lag).unwrap();
    let motion = learned.motion().expect("a motion part");
    for i in 0..8 {
        for j in 0..8 {
            let want = expected[i][j] / pairs + if i == j { 1e-6 * trace / 8.0 } else { 0.0 };
            let got = motion[i * 8 + j];
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1e-12),
                "({i}, {j}): {got} vs {want}"
            );
        }
    }
    // Frames two apart at 120 fps move far less than the walk's latent points spread.
    let all: Vec<Vec<f64>> = frames.iter().map(latent).collect();
    let spread: f64 = (0..8)
        .map(|i| {
            let mean = all.iter().map(|z| z[i]).sum::<f64>() / all.len() as f64;
            all.iter().map(|z| (z[i] - mean).powi(2)).sum::<f64>() / all.len() as f64
        })
        .sum();
    assert!(trace < 0.25 * spread, "{trace} vs {spread}");
    let text = learned.to_json();
    assert!(text.contains("\"motion\""));
    assert_eq!(
        ikarus_solve::example_based::PostureModel::from_json(&text).unwrap(),
        learned
    );
    assert_eq!(
        posture::learn_motion(model.clone(), &skeleton, &runs, 0).unwrap_err(),
        LearnError::NoStep
    );
    assert_eq!(
        posture::learn_motion(model, &skeleton, &[&frames[..3]], 2).unwrap_err(),
        LearnError::TooFewFrames(1)
    );
}
