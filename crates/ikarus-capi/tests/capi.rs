//! The C functions called from Rust: null pointers, bad input with its code and message, real
//! solves checked by forward kinematics, a shared BVH file.

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

use ikarus_capi::*;

/// Takes the error out of `err`: its code and message, freed.
fn take_error(err: *mut IkarusError) -> (IkarusStatus, String) {
    assert!(!err.is_null(), "an error was expected");
    // SAFETY: a live error just returned by the library.
    let (code, message) = unsafe {
        (
            ikarus_error_code(err),
            CStr::from_ptr(ikarus_error_message(err))
                .to_string_lossy()
                .into_owned(),
        )
    };
    // SAFETY: freed once, not used afterwards.
    unsafe { ikarus_error_free(err) };
    (code, message)
}

fn open(path: &str) -> *mut IkarusSkeleton {
    let path = CString::new(path).unwrap();
    let mut err = null_mut();
    // SAFETY: valid string and error storage.
    let skel = unsafe { ikarus_skeleton_open(path.as_ptr(), &raw mut err) };
    assert!(err.is_null(), "{:?}", take_error(err));
    assert!(!skel.is_null());
    skel
}

/// `ikarus_skeleton_open` of `path`, which must fail: the error's code and message.
fn open_error(path: &str) -> (IkarusStatus, String) {
    let path = CString::new(path).unwrap();
    let mut err = null_mut();
    // SAFETY: valid string and error storage.
    let skel = unsafe { ikarus_skeleton_open(path.as_ptr(), &raw mut err) };
    assert!(skel.is_null());
    take_error(err)
}

/// The built-in humanoid and a rest pose of it; [`free_both`] frees them.
fn humanoid_at_rest() -> (*mut IkarusSkeleton, *mut IkarusPose) {
    let skel = open("builtin:humanoid");
    // SAFETY: live skeleton.
    let pose = unsafe { ikarus_pose_rest(skel) };
    (skel, pose)
}

/// Frees `pose` and `skel`, both live and used no more.
fn free_both(skel: *mut IkarusSkeleton, pose: *mut IkarusPose) {
    // SAFETY: live handles, freed once (the caller's promise).
    unsafe {
        ikarus_pose_free(pose);
        ikarus_skeleton_free(skel);
    }
}

fn world_positions(skel: *const IkarusSkeleton, pose: *const IkarusPose) -> Vec<[f64; 3]> {
    // SAFETY: live handles.
    let joints = unsafe { ikarus_skeleton_joint_count(skel) };
    let mut xyz = vec![0.0; 3 * joints];
    // SAFETY: live handles, a buffer of the length given.
    let status =
        unsafe { ikarus_pose_world_positions(skel, pose, xyz.as_mut_ptr(), xyz.len(), null_mut()) };
    assert_eq!(status, IKARUS_OK);
    xyz.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect()
}

fn joint(skel: *const IkarusSkeleton, name: &str) -> usize {
    let name = CString::new(name).unwrap();
    // SAFETY: live skeleton, valid string.
    let index = unsafe { ikarus_skeleton_joint_index(skel, name.as_ptr()) };
    usize::try_from(index).expect("joint exists")
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Solves `task` with `ikarus_solve_json`: the status, the report's JSON, the error if any.
fn solve_json(
    skel: *const IkarusSkeleton,
    task: &str,
    pose: *mut IkarusPose,
) -> (IkarusStatus, Option<serde_json::Value>, Option<String>) {
    let task = CString::new(task).unwrap();
    let (mut report, mut err): (*mut c_char, *mut IkarusError) = (null_mut(), null_mut());
    // SAFETY: live handles, valid string, writable out-pointers.
    let status =
        unsafe { ikarus_solve_json(skel, task.as_ptr(), pose, &raw mut report, &raw mut err) };
    let json = (!report.is_null()).then(|| {
        // SAFETY: a live string returned by the library, freed once.
        let text = unsafe { CStr::from_ptr(report) }
            .to_str()
            .unwrap()
            .to_owned();
        // SAFETY: as above.
        unsafe { ikarus_string_free(report) };
        serde_json::from_str(&text).unwrap()
    });
    let error = (!err.is_null()).then(|| take_error(err).1);
    (status, json, error)
}

#[test]
fn null_arguments_are_reported_not_dereferenced() {
    let mut err = null_mut();
    // SAFETY: NULL arguments are part of the contract.
    unsafe {
        assert!(ikarus_skeleton_open(null(), &raw mut err).is_null());
        let (code, message) = take_error(err);
        assert_eq!(code, IKARUS_ERR_NULL);
        assert!(message.contains("path"), "{message}");
        assert_eq!(ikarus_skeleton_joint_count(null()), 0);
        assert_eq!(ikarus_skeleton_joint_index(null(), c"hips".as_ptr()), -1);
        assert!(ikarus_pose_rest(null()).is_null());
        assert!(ikarus_skeleton_joint_name(null(), 0).is_null());
        let status = ikarus_solve_json(null(), c"{}".as_ptr(), null_mut(), null_mut(), null_mut());
        assert_eq!(status, IKARUS_ERR_NULL);
        let status = ikarus_pose_world_positions(null(), null(), null_mut(), 0, &raw mut err);
        assert_eq!(status, IKARUS_ERR_NULL);
        assert_eq!(take_error(err).0, IKARUS_ERR_NULL);
        // Freeing NULL is a no-op.
        ikarus_skeleton_free(null_mut());
        ikarus_pose_free(null_mut());
        ikarus_prepared_free(null_mut());
        ikarus_error_free(null_mut());
        ikarus_string_free(null_mut());
        assert_eq!(ikarus_error_code(null()), IKARUS_ERR_NULL);
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let (code, message) = open_error("/nonexistent/dir/walk.bvh");
    assert_eq!(code, IKARUS_ERR_IO, "{message}");
    assert!(message.contains("/nonexistent/dir/walk.bvh"), "{message}");
    // Without an error pointer the code still says what happened.
    let mut err = null_mut();
    // SAFETY: valid string; a negative scale is an argument error.
    let skel =
        unsafe { ikarus_skeleton_open_scaled(c"builtin:humanoid".as_ptr(), -1.0, &raw mut err) };
    assert!(skel.is_null());
    assert_eq!(take_error(err).0, IKARUS_ERR_INVALID);
}

#[test]
fn bad_task_json_gives_parse_and_invalid_errors() {
    let (skel, pose) = humanoid_at_rest();
    let (status, report, error) = solve_json(skel, r#"{"effectors": [}"#, pose);
    assert_eq!(status, IKARUS_ERR_PARSE);
    assert!(report.is_none());
    let message = error.unwrap();
    assert!(
        message.contains("line 1 column"),
        "line and column: {message}"
    );
    let (status, _, error) = solve_json(
        skel,
        r#"{"effectors": [{"joint": "noSuchBone", "position": [0, 1, 0]}]}"#,
        pose,
    );
    assert_eq!(status, IKARUS_ERR_INVALID);
    assert!(error.unwrap().contains("noSuchBone"));
    // A task the solver rejects (the base is the effector): the report says why, the pose
    // is untouched.
    let before = world_positions(skel, pose);
    let (status, report, error) = solve_json(
        skel,
        r#"{"solver": {"kind": "ccd"}, "base": "leftHand", "effectors": [{"joint": "leftHand", "position": [0.4, 1, 0]}]}"#,
        pose,
    );
    assert_eq!(status, IKARUS_ERR_INVALID, "{error:?}");
    let report = report.unwrap();
    assert_eq!(report["report"]["status"], "invalid_input");
    assert_eq!(report["report"]["message"].as_str(), error.as_deref());
    assert_eq!(world_positions(skel, pose), before);
    // A scale on a skeleton already loaded.
    let (status, _, error) = solve_json(skel, r#"{"scale": 0.01, "effectors": []}"#, pose);
    assert_eq!(status, IKARUS_ERR_INVALID);
    assert!(error.unwrap().contains("ikarus_skeleton_open_scaled"));
    // A pose of another skeleton.
    let mut err = null_mut();
    // SAFETY: live handles; a one-joint buffer is too small.
    unsafe {
        let mut one = [0.0; 3];
        let status = ikarus_pose_world_positions(skel, pose, one.as_mut_ptr(), 3, &raw mut err);
        assert_eq!(status, IKARUS_ERR_INVALID);
        assert!(take_error(err).1.contains("doubles"));
    }
    free_both(skel, pose);
}

#[test]
fn a_reach_on_the_builtin_humanoid_meets_its_goal_by_fk() {
    let (skel, pose) = humanoid_at_rest();
    let hand = joint(skel, "leftHand");
    let target = [0.45, 1.15, 0.25];
    let task = format!(
        r#"{{"skeleton": "builtin:humanoid", "solver": {{"kind": "lm"}}, "base": "hips",
            "effectors": [{{"joint": "leftHand", "position": [{}, {}, {}]}}]}}"#,
        target[0], target[1], target[2]
    );
    let (status, report, error) = solve_json(skel, &task, pose);
    assert_eq!(status, IKARUS_OK, "{error:?}");
    let report = report.unwrap();
    assert_eq!(report["report"]["status"], "converged", "{report}");
    assert_eq!(report["report"]["solver"], "lm");
    let positions = world_positions(skel, pose);
    assert!(distance(positions[hand], target) < 1e-4, "{positions:?}");
    // The report's joints are the pose's FK.
    let joints = report["joints"].as_array().unwrap();
    assert_eq!(joints.len(), positions.len());
    assert_eq!(joints[hand]["name"], "leftHand");
    let reported: Vec<f64> = joints[hand]["position"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(distance([reported[0], reported[1], reported[2]], positions[hand]) < 1e-12);
    free_both(skel, pose);
}

#[test]
fn the_full_body_solver_through_json() {
    let (skel, pose) = humanoid_at_rest();
    let rest = world_positions(skel, pose);
    let ends = [
        "hips",
        "head",
        "leftHand",
        "rightHand",
        "leftFoot",
        "rightFoot",
    ];
    let mut goals = Vec::new();
    let (hand, hips) = (joint(skel, "leftHand"), joint(skel, "hips"));
    let mut targets = Vec::new();
    for name in ends {
        let mut p = rest[joint(skel, name)];
        match name {
            // Crouch a little and reach forward and down with the left hand.
            "hips" | "head" => p[1] -= 0.08,
            "leftHand" => p = [p[0] - 0.2, p[1] - 0.3, p[2] + 0.3],
            _ => {}
        }
        targets.push((joint(skel, name), p));
        goals.push(format!(
            r#"{{"joint": "{name}", "position": [{}, {}, {}]}}"#,
            p[0], p[1], p[2]
        ));
    }
    let task = format!(
        r#"{{"solver": {{"kind": "body"}}, "tolerance": {{"position": 1e-3, "rotation": 1e-2}}, "effectors": [{}]}}"#,
        goals.join(", ")
    );
    let (status, report, error) = solve_json(skel, &task, pose);
    assert_eq!(status, IKARUS_OK, "{error:?}");
    let report = report.unwrap();
    assert_eq!(report["report"]["solver"], "body");
    assert_eq!(report["report"]["status"], "converged", "{report}");
    let positions = world_positions(skel, pose);
    for (j, target) in targets {
        assert!(distance(positions[j], target) < 1e-3, "joint {j}");
    }
    assert!(positions[hips][1] < rest[hips][1] - 0.07);
    assert!(distance(positions[hand], rest[hand]) > 0.3);
    free_both(skel, pose);
}

#[test]
fn a_prepared_two_bone_arm_follows_goals_frame_after_frame() {
    let skel = open("builtin:humanoid");
    let task = cr#"{"solver": {"kind": "two_bone"}, "effectors": [{"joint": "leftHand", "position": [0.4, 1.2, 0.2]}]}"#;
    let mut err = null_mut();
    // SAFETY: live skeleton, valid string and error storage.
    let prepared = unsafe { ikarus_prepared_new(skel, task.as_ptr(), &raw mut err) };
    assert!(err.is_null(), "{:?}", take_error(err));
    // SAFETY: live skeleton.
    let pose = unsafe { ikarus_pose_rest(skel) };
    // The prepared task keeps its skeleton alive and the pose is plain data, so the handle
    // may go; a second humanoid measures the results.
    let probe = open("builtin:humanoid");
    let hand = joint(probe, "leftHand");
    // SAFETY: freed once, not used afterwards.
    unsafe { ikarus_skeleton_free(skel) };
    // SAFETY: live prepared task.
    assert_eq!(unsafe { ikarus_prepared_effector_count(prepared) }, 1);
    for frame in 0..5 {
        let target = [0.4, 1.1 + 0.03 * f64::from(frame), 0.25];
        let mut report = IkarusReport::default();
        // SAFETY: live handles, 3 readable doubles, writable report.
        unsafe {
            let status = ikarus_prepared_set_goal(prepared, 0, target.as_ptr(), null(), null_mut());
            assert_eq!(status, IKARUS_OK);
            let status = ikarus_prepared_solve(prepared, pose, &raw mut report, null_mut());
            assert_eq!(status, IKARUS_OK);
        }
        assert_eq!(report.status, IKARUS_SOLVE_CONVERGED, "{report:?}");
        assert!(report.position_error < 1e-4);
        let positions = world_positions(probe, pose);
        assert!(distance(positions[hand], target) < 1e-4, "frame {frame}");
    }
    // A NaN goal: rejected by the solve, the report filled, the pose untouched.
    let before = world_positions(probe, pose);
    let mut report = IkarusReport::default();
    // SAFETY: live handles, 3 readable doubles, writable report and error storage.
    unsafe {
        let nan = [f64::NAN, 1.0, 0.0];
        ikarus_prepared_set_goal(prepared, 0, nan.as_ptr(), null(), null_mut());
        let status = ikarus_prepared_solve(prepared, pose, &raw mut report, &raw mut err);
        assert_eq!(status, IKARUS_ERR_INVALID);
        take_error(err);
    }
    assert_eq!(report.status, IKARUS_SOLVE_INVALID_INPUT);
    assert_eq!(world_positions(probe, pose), before);
    // Out-of-range effector, solver that does not fit.
    // SAFETY: live handles and valid strings.
    unsafe {
        let status = ikarus_prepared_set_goal(prepared, 3, null(), null(), &raw mut err);
        assert_eq!(status, IKARUS_ERR_INVALID);
        assert!(take_error(err).1.contains("effector 3"));
        let two = cr#"{"solver": {"kind": "two_bone"}, "effectors": [{"joint": "leftHand", "position": [0, 1, 0]}, {"joint": "rightHand", "position": [0, 1, 0]}]}"#;
        assert!(ikarus_prepared_new(probe, two.as_ptr(), &raw mut err).is_null());
        assert_eq!(take_error(err).0, IKARUS_ERR_INVALID);
        ikarus_prepared_free(prepared);
        ikarus_pose_free(pose);
        ikarus_skeleton_free(probe);
    }
}

#[test]
fn local_transforms_round_trip_through_flat_arrays() {
    let (skel, pose) = humanoid_at_rest();
    // SAFETY: live handles, buffers of the lengths given.
    unsafe {
        let joints = ikarus_pose_joint_count(pose);
        assert_eq!(joints, ikarus_skeleton_joint_count(skel));
        let mut values = vec![0.0; IKARUS_LOCAL_STRIDE * joints];
        assert_eq!(
            ikarus_pose_get_local(pose, values.as_mut_ptr(), values.len(), null_mut()),
            IKARUS_OK
        );
        // Bend the left elbow 90 degrees about its local z (an unnormalised quaternion).
        let elbow = joint(skel, "leftLowerArm");
        let s = 2f64.sqrt() / 2.0;
        values[elbow * 7 + 3..elbow * 7 + 7].copy_from_slice(&[0.0, 0.0, 2.0 * s, 2.0 * s]);
        assert_eq!(
            ikarus_pose_set_local(pose, values.as_ptr(), values.len(), null_mut()),
            IKARUS_OK
        );
        let mut back = vec![0.0; values.len()];
        ikarus_pose_get_local(pose, back.as_mut_ptr(), back.len(), null_mut());
        assert!((back[elbow * 7 + 6] - s).abs() < 1e-15, "normalised");
        let clone = ikarus_pose_clone(pose);
        let (a, b) = (world_positions(skel, pose), world_positions(skel, clone));
        assert_eq!(a, b);
        let hand = joint(skel, "leftHand");
        assert!(distance(a[hand], world_positions(skel, ikarus_pose_rest(skel))[hand]) > 0.1);
        // Non-finite values are rejected and nothing is written.
        values[2] = f64::NAN;
        let mut err = null_mut();
        let status = ikarus_pose_set_local(pose, values.as_ptr(), values.len(), &raw mut err);
        assert_eq!(status, IKARUS_ERR_INVALID);
        assert!(take_error(err).1.contains("joint 0"));
        assert_eq!(world_positions(skel, pose), a);
        ikarus_pose_free(clone);
    }
    free_both(skel, pose);
}

#[test]
fn a_shared_bvh_opens_like_ikarus_formats() {
    let test = "a_shared_bvh_opens_like_ikarus_formats";
    let Some(path) = ikarus_testdata::require_file("bvh", "cmu_01_01_jump_cgspeed.bvh", test)
    else {
        return;
    };
    let document = ikarus_formats::open(path.to_str().unwrap(), 1.0).unwrap();
    let skel = open(path.to_str().unwrap());
    // SAFETY: live skeleton.
    unsafe {
        assert_eq!(ikarus_skeleton_joint_count(skel), document.skeleton.len());
        let motion = document.motion.as_ref().unwrap();
        assert_eq!(ikarus_skeleton_frame_count(skel), motion.len());
        for j in document.skeleton.joints() {
            let name = CStr::from_ptr(ikarus_skeleton_joint_name(skel, j.index()));
            assert_eq!(name.to_str().unwrap(), document.skeleton.name(j));
            let parent = ikarus_skeleton_joint_parent(skel, j.index());
            assert_eq!(
                parent,
                document
                    .skeleton
                    .parent(j)
                    .map_or(-1, |p| i32::try_from(p.index()).unwrap())
            );
        }
        let last = motion.len() - 1;
        let frame = ikarus_pose_frame(skel, last, null_mut());
        assert!(!frame.is_null());
        let mut err = null_mut();
        assert!(ikarus_pose_frame(skel, last + 1, &raw mut err).is_null());
        let (code, message) = take_error(err);
        assert_eq!(code, IKARUS_ERR_INVALID);
        assert!(message.contains(&format!("0 to {last}")), "{message}");
        ikarus_pose_free(frame);
        ikarus_skeleton_free(skel);
    }
}

#[test]
fn a_malformed_file_is_a_parse_error_naming_it() {
    let dir = std::env::temp_dir().join(format!("ikarus-capi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.bvh");
    std::fs::write(&path, "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n").unwrap();
    let (code, message) = open_error(path.to_str().unwrap());
    assert_eq!(code, IKARUS_ERR_PARSE, "{message}");
    assert!(message.contains("broken.bvh"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crowd_solves_like_one_character_at_a_time() {
    let skel = open("builtin:humanoid");
    let hand = joint(skel, "leftHand");
    let task = cr#"{"solver": {"kind": "two_bone"}, "effectors": [{"joint": "leftHand", "position": [0.4, 1.2, 0.2]}]}"#;
    let count = 10;
    // SAFETY: live handles, buffers of the lengths given, writable reports.
    unsafe {
        let prepared = ikarus_prepared_new(skel, task.as_ptr(), null_mut());
        let crowd = ikarus_crowd_new(skel, count, null_mut());
        assert_eq!(ikarus_crowd_count(crowd), count);
        let joints = ikarus_skeleton_joint_count(skel);
        let targets: Vec<f64> = (0..count)
            .flat_map(|i| {
                let t = i as f64 / count as f64;
                [0.35 + 0.1 * t, 1.0 + 0.3 * t, 0.3 - 0.2 * t]
            })
            .collect();
        let mut reports = vec![IkarusReport::default(); count];
        let status = ikarus_prepared_solve_crowd(
            prepared,
            crowd,
            targets.as_ptr(),
            targets.len(),
            null(),
            reports.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(status, IKARUS_OK);
        let mut xyz = vec![0.0; count * joints * 3];
        let status = ikarus_crowd_world_positions(crowd, xyz.as_mut_ptr(), xyz.len(), null_mut());
        assert_eq!(status, IKARUS_OK);
        let mut locals = vec![0.0; count * joints * IKARUS_LOCAL_STRIDE];
        ikarus_crowd_get_local(crowd, locals.as_mut_ptr(), locals.len(), null_mut());
        for i in 0..count {
            assert_eq!(reports[i].status, IKARUS_SOLVE_CONVERGED, "{i}");
            let at = &xyz[3 * (i * joints + hand)..][..3];
            let target = &targets[3 * i..][..3];
            assert!(distance(at.try_into().unwrap(), target.try_into().unwrap()) < 1e-4);
            // One character at a time gives the same pose.
            let pose = ikarus_pose_rest(skel);
            ikarus_prepared_set_goal(prepared, 0, target.as_ptr(), null(), null_mut());
            let mut report = IkarusReport::default();
            ikarus_prepared_solve(prepared, pose, &raw mut report, null_mut());
            let mut one = vec![0.0; joints * IKARUS_LOCAL_STRIDE];
            ikarus_pose_get_local(pose, one.as_mut_ptr(), one.len(), null_mut());
            assert_eq!(one, locals[i * one.len()..][..one.len()], "character {i}");
            assert_eq!(report, reports[i]);
            ikarus_pose_free(pose);
        }
        // Poses go back in; too short a goal buffer is refused.
        assert_eq!(
            ikarus_crowd_set_local(crowd, locals.as_ptr(), locals.len(), null_mut()),
            IKARUS_OK
        );
        let mut err = null_mut();
        let status = ikarus_prepared_solve_crowd(
            prepared,
            crowd,
            targets.as_ptr(),
            3,
            null(),
            null_mut(),
            &raw mut err,
        );
        assert_eq!(status, IKARUS_ERR_INVALID);
        assert!(take_error(err).1.contains("positions"));
        ikarus_crowd_free(crowd);
        ikarus_prepared_free(prepared);
        ikarus_skeleton_free(skel);
    }
}

#[test]
fn three_trackers_drive_the_humanoid() {
    let skel = open("builtin:humanoid");
    let names = ["head", "leftHand", "rightHand"];
    // The calibration frame: the devices exactly on the bones of the rest pose.
    // SAFETY: live handles, buffers of the lengths given.
    unsafe {
        let rest = ikarus_pose_rest(skel);
        let positions = world_positions(skel, rest);
        let joints = ikarus_skeleton_joint_count(skel);
        let mut world = vec![0.0; joints * IKARUS_LOCAL_STRIDE];
        let status =
            ikarus_pose_world_transforms(skel, rest, world.as_mut_ptr(), world.len(), null_mut());
        assert_eq!(status, IKARUS_OK);
        let mut calibration = Vec::new();
        for name in names {
            let j = joint(skel, name);
            assert_eq!(world[j * 7..j * 7 + 3], positions[j]);
            calibration.extend_from_slice(&world[j * 7..j * 7 + 7]);
        }
        let mut err = null_mut();
        let tracker = ikarus_tracker_new(
            skel,
            3,
            60.0,
            calibration.as_ptr(),
            calibration.len(),
            0.0,
            &raw mut err,
        );
        assert!(err.is_null(), "{:?}", take_error(err));
        // The avatar's head height over the user's: near 1 for devices on its own bones (the
        // avatar's floor is its soles', the user's the floor at 0).
        let scale = ikarus_tracker_scale(tracker);
        assert!((scale - 1.0).abs() < 0.05, "{scale}");
        let pose = ikarus_tracker_start_pose(tracker);
        // The left hand's device moves forward and down over half a second.
        let hand = joint(skel, "leftHand");
        let mut samples = calibration.clone();
        let mut report = IkarusReport::default();
        let mut held = 0;
        for frame in 1..=30 {
            let t = f64::from(frame) / 30.0;
            samples[7] = calibration[7] - 0.15 * t;
            samples[8] = calibration[8] - 0.25 * t;
            samples[9] = calibration[9] + 0.3 * t;
            let status = ikarus_tracker_solve_frame(
                tracker,
                samples.as_ptr(),
                samples.len(),
                pose,
                &raw mut report,
                &raw mut held,
                null_mut(),
            );
            assert_eq!(status, IKARUS_OK);
            assert_eq!(held, 0);
        }
        let at = world_positions(skel, pose)[hand];
        let target = [samples[7], samples[8], samples[9]];
        // The goals (the samples scaled to the avatar) are met; the hand followed its device.
        assert!(report.position_error < 1e-3, "{report:?}");
        assert!(distance(at, target) < 0.03, "{at:?} vs {target:?}");
        assert!(distance(at, positions[hand]) > 0.35, "{at:?}");
        // A lost sample (NaN) is held.
        samples[14] = f64::NAN;
        ikarus_tracker_solve_frame(
            tracker,
            samples.as_ptr(),
            samples.len(),
            pose,
            null_mut(),
            &raw mut held,
            null_mut(),
        );
        assert_eq!(held, 1);
        // Bad arguments.
        let status = ikarus_tracker_solve_frame(
            tracker,
            samples.as_ptr(),
            7,
            pose,
            null_mut(),
            null_mut(),
            &raw mut err,
        );
        assert_eq!(status, IKARUS_ERR_INVALID);
        assert!(take_error(err).1.contains("3 trackers"));
        let none = ikarus_tracker_new(skel, 5, 60.0, calibration.as_ptr(), 21, 0.0, &raw mut err);
        assert!(none.is_null());
        assert!(take_error(err).1.contains("3, 4 or 6"));
        ikarus_pose_free(pose);
        ikarus_pose_free(rest);
        ikarus_tracker_free(tracker);
        ikarus_skeleton_free(skel);
    }
}

/// A plane at height `*user` for `ikarus_ground_clip`.
unsafe extern "C" fn raised_floor(
    user: *mut std::ffi::c_void,
    _x: f64,
    _z: f64,
    height: *mut f64,
    normal: *mut f64,
) -> bool {
    // SAFETY: `user` is the `f64` the test passes; `height` and `normal` are the library's
    // writable storage for one and three doubles.
    unsafe {
        *height = *user.cast::<f64>();
        std::slice::from_raw_parts_mut(normal, 3).copy_from_slice(&[0.0, 1.0, 0.0]);
    }
    true
}

/// `ikarus_ground_clip` on `clip` (`frames` poses of `skel`): on `terrain` JSON, or on the
/// sampler's floor at `height` without it. The status, the grounded clip, the error.
fn ground(
    skel: *const IkarusSkeleton,
    clip: &[f64],
    frames: usize,
    terrain: Option<&std::ffi::CStr>,
    mut height: f64,
) -> (IkarusStatus, Vec<f64>, Option<(IkarusStatus, String)>) {
    let mut out = vec![0.0; clip.len()];
    let (mut unreached, mut err) = (99, null_mut());
    // SAFETY: a live skeleton, buffers of the lengths given, a sampler as documented with its
    // `f64`, writable out-pointers.
    let status = unsafe {
        ikarus_ground_clip(
            skel,
            30.0,
            frames,
            clip.as_ptr(),
            clip.len(),
            terrain.map_or(null(), std::ffi::CStr::as_ptr),
            Some(raised_floor),
            (&raw mut height).cast(),
            out.as_mut_ptr(),
            &raw mut unreached,
            &raw mut err,
        )
    };
    if status == IKARUS_OK {
        assert_eq!(unreached, 0);
    }
    (status, out, (!err.is_null()).then(|| take_error(err)))
}

#[test]
fn a_standing_clip_is_grounded_on_raised_floors() {
    let skel = open("builtin:humanoid");
    // SAFETY: live handles, buffers of the lengths given.
    unsafe {
        let rest = ikarus_pose_rest(skel);
        let joints = ikarus_skeleton_joint_count(skel);
        let per = joints * IKARUS_LOCAL_STRIDE;
        let mut frame = vec![0.0; per];
        ikarus_pose_get_local(rest, frame.as_mut_ptr(), per, null_mut());
        let frames = 20;
        let clip: Vec<f64> = frame.iter().copied().cycle().take(per * frames).collect();
        let feet = [joint(skel, "leftFoot"), joint(skel, "rightFoot")];
        let grounded_feet = |out: &[f64]| {
            let pose = ikarus_pose_rest(skel);
            ikarus_pose_set_local(pose, out[per * 10..].as_ptr(), per, null_mut());
            let at = world_positions(skel, pose);
            ikarus_pose_free(pose);
            feet.map(|f| at[f][1])
        };
        // A plane 10 cm up as terrain JSON: the standing feet stand 10 cm higher than on the
        // floor at 0 given by the sampler.
        let plane = cr#"{"plane": {"point": [0, 0.1, 0], "normal": [0, 1, 0]}}"#;
        let (status, raised, error) = ground(skel, &clip, frames, Some(plane), 0.0);
        assert_eq!(status, IKARUS_OK, "{error:?}");
        let (status, level, _) = ground(skel, &clip, frames, None, 0.0);
        assert_eq!(status, IKARUS_OK);
        let (raised_feet, level_feet) = (grounded_feet(&raised), grounded_feet(&level));
        for (r, l) in raised_feet.iter().zip(level_feet) {
            assert!((r - l - 0.1).abs() < 1e-3, "{raised_feet:?} {level_feet:?}");
        }
        // The same floor through the sampler gives the same clip.
        assert_eq!(ground(skel, &clip, frames, None, 0.1).1, raised);
        // In place: the output may be the input.
        let mut in_place = clip.clone();
        let mut height = 0.1_f64;
        let status = ikarus_ground_clip(
            skel,
            30.0,
            frames,
            in_place.as_ptr(),
            in_place.len(),
            null(),
            Some(raised_floor),
            (&raw mut height).cast(),
            in_place.as_mut_ptr(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(status, IKARUS_OK);
        assert_eq!(in_place, raised);
        // Bad terrain JSON; a clip too short.
        let (status, _, error) = ground(skel, &clip, frames, Some(c"{\"plane\": {}}"), 0.0);
        assert_eq!(status, IKARUS_ERR_PARSE);
        assert!(error.unwrap().1.contains("terrain_json"));
        let (status, _, error) = ground(skel, &clip[..per], frames, None, 0.0);
        assert_eq!(status, IKARUS_ERR_INVALID);
        assert!(error.unwrap().1.contains("20 frames"));
        ikarus_pose_free(rest);
        ikarus_skeleton_free(skel);
    }
}
