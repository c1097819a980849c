//! `ikarus info`, `fk` and `convert` on the shared MMD files, end to end.

use ikarus_core::{ModelPose, fk};
use ikarus_formats::bvh::{Bvh, BvhReadOptions};
use serde_json::Value;

mod common;

use common::{data_file, ikarus, json_positions, ok};

#[test]
fn info_lists_ik_chains_and_keyed_bones() {
    let Some(dir) = ikarus_testdata::require("mmd", "info_lists_ik_chains") else {
        return;
    };
    let model = dir.join("Miku_Hatsune_Ver2.pmd");
    let info: Value =
        serde_json::from_str(&ok(&["info", model.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(info["bones"], 140);
    let chains = info["ik_chains"].as_array().unwrap();
    assert_eq!(chains.len(), 7);
    let leg = chains.iter().find(|c| c["ik_bone"] == "左足ＩＫ").unwrap();
    assert_eq!(leg["target"], "左足首");
    assert_eq!(leg["iterations"], 40);
    assert_eq!(leg["links"][0]["bone"], "左ひざ");
    let min = leg["links"][0]["limit"]["min_degrees"][0].as_f64().unwrap();
    assert!((min - 0.5).abs() < 1e-9);
    let motion = dir.join("kishimen.vmd");
    let info: Value =
        serde_json::from_str(&ok(&["info", motion.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(info["bone_keys"], 3655);
    assert_eq!(info["keyed_bones"].as_array().unwrap().len(), 122);
}

#[test]
fn fk_with_motion_matches_the_converted_bvh() {
    let Some(dir) = ikarus_testdata::require("mmd", "fk_with_motion_matches_the_converted_bvh")
    else {
        return;
    };
    let model = dir.join("Miku_Hatsune_Ver2.pmd");
    let motion = dir.join("kishimen.vmd");
    let out = std::env::temp_dir().join(format!("ikarus-cli-mmd-{}.bvh", std::process::id()));
    let (model, motion, path) = (
        model.to_str().unwrap(),
        motion.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    ok(&["convert", model, "--motion", motion, path]);
    let bvh = Bvh::parse(&std::fs::read(&out).unwrap(), &BvhReadOptions::default()).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(bvh.frame_count, 630);
    for frame in [0usize, 100, 377, 629] {
        let json: Value = serde_json::from_str(&ok(&[
            "fk",
            model,
            "--motion",
            motion,
            "--frame",
            &frame.to_string(),
            "--json",
        ]))
        .unwrap();
        let mut pose = bvh.skeleton.rest_pose();
        assert!(bvh.frame_pose(frame, &mut pose));
        let mut frames = ModelPose::new(&bvh.skeleton);
        fk::forward_kinematics(&bvh.skeleton, &pose, &mut frames);
        for (name, p) in json_positions(&json) {
            let at = frames.position(bvh.skeleton.joint(&name).unwrap());
            let d = ((at.x - p.x).powi(2) + (at.y - p.y).powi(2) + (at.z - p.z).powi(2)).sqrt();
            assert!(d < 1e-6, "frame {frame} {name}: {d}");
        }
    }
    // Without a model the motion is refused with a message, not a panic.
    let refused = ikarus(&["fk", path, "--motion", motion]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains(".pmx or .pmd"));
}

#[test]
fn a_reader_closing_the_pipe_early_is_not_a_crash() {
    use std::process::{Command, Stdio};
    // `ikarus fk MODEL | head -0`: the reader is gone before the first line, so every one of
    // the 140 lines `fk` prints meets a closed pipe.
    let Some(model) = data_file(
        "mmd",
        "a_reader_closing_the_pipe_early",
        "Miku_Hatsune_Ver2.pmd",
    ) else {
        return;
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_ikarus"))
        .args(["fk", &model])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "status {:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn convert_a_vmd_with_its_model_is_the_model_with_the_motion() {
    let Some(dir) = ikarus_testdata::require("mmd", "convert_a_vmd_with_its_model") else {
        return;
    };
    let model = dir.join("Miku_Hatsune_Ver2.pmd");
    let motion = dir.join("kishimen.vmd");
    let out = common::temp_dir("vmd-model");
    let (a, b, c) = (out.join("a.bvh"), out.join("b.bvh"), out.join("c.vmd"));
    let (model, motion) = (model.to_str().unwrap(), motion.to_str().unwrap());
    ok(&["convert", model, "--motion", motion, a.to_str().unwrap()]);
    ok(&["convert", motion, "--model", model, b.to_str().unwrap()]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // At 10 fps every third VMD frame: the 30 fps BVH's frames 0, 3, 6, ...
    let slow = out.join("slow.bvh");
    ok(&[
        "convert",
        motion,
        "--model",
        model,
        slow.to_str().unwrap(),
        "--fps",
        "10",
    ]);
    let all = Bvh::parse(&std::fs::read(&a).unwrap(), &BvhReadOptions::default()).unwrap();
    let every_third =
        Bvh::parse(&std::fs::read(&slow).unwrap(), &BvhReadOptions::default()).unwrap();
    assert_eq!(every_third.frame_count, 210);
    assert!((every_third.frame_time - 0.1).abs() < 1e-12);
    for k in [0usize, 33, 209] {
        let (mut p, mut q) = (all.skeleton.rest_pose(), all.skeleton.rest_pose());
        assert!(all.frame_pose(3 * k, &mut p) && every_third.frame_pose(k, &mut q));
        assert_eq!(p, q, "frame {k}");
    }
    // A baked VMD for the model: 630 keyed frames of every bone.
    ok(&["convert", motion, "--model", model, c.to_str().unwrap()]);
    let baked = ikarus_formats::read_vmd(&c, 1.0).unwrap();
    assert_eq!(baked.last_frame(), 629);
    assert_eq!(baked.bones.len(), 630 * 140);
    let err = common::fails(&["convert", motion, out.join("d.bvh").to_str().unwrap()]);
    assert!(
        err.contains("kishimen.vmd: a .vmd motion plays on its .pmx or .pmd model"),
        "{err}"
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn convert_into_adds_the_animation_to_the_file() {
    let Some(input) = data_file("gltf", "convert_into_adds_the_animation", "CesiumMan.glb") else {
        return;
    };
    let out = common::temp_dir("into").join("cesium_twice.glb");
    let input_name = &input;
    ok(&[
        "convert",
        input_name,
        out.to_str().unwrap(),
        "--into",
        input_name,
    ]);
    // The file's own animation and the added one ("motion") give the same poses to f32.
    let own = ikarus_formats::open(input_name, 1.0).unwrap();
    let added = ikarus_formats::open_animation(out.to_str().unwrap(), 1.0, Some("motion")).unwrap();
    assert_eq!(own.skeleton.names(), added.skeleton.names());
    let (own, added) = (own.motion.unwrap(), added.motion.unwrap());
    assert_eq!(own.len(), added.len());
    for (a, b) in own.frames().iter().zip(added.frames()) {
        for (s, t) in a.transforms().iter().zip(b.transforms()) {
            assert!(s.rotation.dot(t.rotation).abs() > 1.0 - 1e-6);
            assert!((s.translation - t.translation).length() < 1e-5);
        }
    }
    let err = common::fails(&["convert", input_name, "x.bvh", "--into", input_name]);
    assert!(err.contains("only as a .glb output"), "{err}");
}
