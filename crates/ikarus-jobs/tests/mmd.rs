//! `MmdPlayer` and `read_source` on the shared MMD files: frame counts and rates, resampling
//! that lands on VMD frames reproduces them, and the errors that name the file or argument.

use std::path::{Path, PathBuf};

use ikarus_jobs::{IkMode, JobError, MmdPlayer, ReadOptions, read_source};

fn files() -> Option<(PathBuf, PathBuf)> {
    let dir = ikarus_testdata::require("mmd", "ikarus-jobs mmd")?;
    Some((dir.join("Miku_Hatsune_Ver2.pmd"), dir.join("kishimen.vmd")))
}

#[test]
fn frames_at_any_rate_sample_the_same_keys() {
    let Some((model, vmd)) = files() else {
        return;
    };
    let mut player = MmdPlayer::open(&model, &vmd, 1.0, IkMode::Compatible).unwrap();
    assert_eq!(
        player.last_frame, 629,
        "kishimen keys its bones over 630 frames"
    );
    assert_eq!(player.frame_count(None).unwrap(), 630);
    assert_eq!(player.frame_count(Some(60.0)).unwrap(), 1259);
    assert_eq!(player.frame_count(Some(10.0)).unwrap(), 210);
    let mut calls = 0;
    let at_30 = player.motion(None, |done, total| {
        calls += 1;
        assert_eq!((done, total), (calls, 630));
    });
    let at_30 = at_30.unwrap();
    assert_eq!(calls, 630);
    assert_eq!(at_30.frame_time(), 1.0 / 30.0);
    // 10 fps samples every third VMD frame: the evaluation holds no state between frames,
    // so those frames are the 30 fps ones bit for bit.
    let at_10 = player.motion(Some(10.0), |_, _| {}).unwrap();
    assert_eq!(at_10.frame_time(), 0.1);
    for (i, frame) in at_10.frames().iter().enumerate() {
        assert_eq!(frame, &at_30.frames()[3 * i], "frame {i}");
    }
    // read_source gives the same motion, and the model's rig for writing a VMD back.
    let options = ReadOptions {
        model: Some(&model),
        ..ReadOptions::default()
    };
    let source = read_source(vmd.to_str().unwrap(), &options).unwrap();
    assert_eq!(source.motion.as_ref().unwrap().frames(), at_30.frames());
    assert!(source.rig.is_some_and(|rig| rig.ik.len() == 7));
    assert_eq!(Path::new(&source.skeleton_file), model);
}

#[test]
fn errors_name_the_file_or_argument() {
    let Some((model, vmd)) = files() else {
        return;
    };
    let vmd_name = vmd.to_str().unwrap();
    let message = |e: JobError| e.to_string();
    let err = read_source(vmd_name, &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, JobError::NeedsModel { .. }));
    assert!(
        message(err).ends_with(
            "kishimen.vmd: a .vmd motion plays on its .pmx or .pmd model: give the model"
        )
    );
    let err = MmdPlayer::open(&vmd, &vmd, 1.0, IkMode::Compatible)
        .err()
        .unwrap();
    assert!(message(err).ends_with("kishimen.vmd: a VMD motion plays on a .pmx or .pmd model"));
    let err = MmdPlayer::open(&model, &vmd, 0.0, IkMode::Compatible)
        .err()
        .unwrap();
    assert_eq!(message(err), "scale 0: expected a finite positive number");
    let player = MmdPlayer::open(&model, &vmd, 1.0, IkMode::Exact).unwrap();
    let err = player.frame_count(Some(f64::INFINITY)).unwrap_err();
    assert_eq!(message(err), "fps inf: expected a finite positive number");
    let with_model = ReadOptions {
        model: Some(&model),
        ..ReadOptions::default()
    };
    let err = read_source(model.to_str().unwrap(), &with_model).unwrap_err();
    assert!(message(err).ends_with("a model is given for a .vmd source only"));
}

/// `vmd_bytes` keys VMD frames at 30 per second whatever the motion's rate: the dance played at
/// 120 fps and written back has its last key at frame 629 (not 2516), and played back, VMD frame
/// 30 has the 120 fps motion's rotations of frame 120 (one second).
#[test]
fn vmd_bytes_keys_thirty_frames_a_second() {
    let Some((model, vmd)) = files() else {
        return;
    };
    let mut player = MmdPlayer::open(&model, &vmd, 1.0, IkMode::Compatible).unwrap();
    let fast = player.motion(Some(120.0), |_, _| {}).unwrap();
    assert_eq!(fast.len(), 2517);
    let built = &player.built;
    let bytes = ikarus_jobs::vmd_bytes(&built.skeleton, &built.rig, &player.model_name, &fast, 1.0)
        .unwrap();
    let written = ikarus_formats::mmd::vmd::Vmd::parse(&bytes, 1.0).unwrap();
    assert_eq!(written.bones.iter().map(|k| k.frame).max(), Some(629));
    // Played back: VMD frame 30 is the motion's frame 120, every joint's rotation.
    let rebound = ikarus_formats::mmd::vmd::BoundMotion::new(&written, &built.skeleton);
    let mut pose = built.skeleton.rest_pose();
    rebound.sample(&built.skeleton, 30.0, &mut pose);
    let worst = pose
        .transforms()
        .iter()
        .zip(fast.frames()[120].transforms())
        .map(|(a, b)| a.rotation.angle_between(b.rotation))
        .fold(0.0, f64::max);
    assert!(worst < 1e-6, "{worst} rad");
    // Every IK chain is switched off at frame 0, so MMD's evaluation (here ours) plays the legs
    // as keyed: the ankles at frame 30 are where the motion's frame 120 put them.
    let off = &written.properties[0];
    assert_eq!((off.frame, off.ik.len()), (0, 7));
    assert!(off.ik.iter().all(|(_, on)| !on));
    let mut replay = MmdPlayer::new(
        player.built.clone(),
        player.model_name.clone(),
        &written,
        IkMode::Compatible,
    )
    .unwrap();
    let mut out = built.skeleton.rest_pose();
    let played = replay.evaluate(30.0, &mut out).clone();
    let mut model = ikarus_core::ModelPose::new(&built.skeleton);
    ikarus_core::fk::forward_kinematics(&built.skeleton, &fast.frames()[120], &mut model);
    for ankle in ["左足首", "右足首"] {
        let j = built.skeleton.joint(ankle).unwrap();
        let miss = played.position(j).distance(model.position(j));
        assert!(miss < 1e-6, "{ankle}: {miss} m");
    }
}
