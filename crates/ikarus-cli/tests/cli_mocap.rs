//! `ikarus mocap` end to end: the CMU walk's joints as Human3.6M points (millimetres, +Z up)
//! in a JSON and a `.npy` file, solved onto the walk's own skeleton file, written as BVH, read
//! back and compared with the points by forward kinematics.

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::DVec3;
use ikarus_anim::mocap::{Binding, KeypointClip, Layout, MocapConfig, UpAxis, solve_positions};
use ikarus_anim::retarget::ContactConfig;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_formats::keypoints::{to_json, to_npy};
use ikarus_testdata::assert::{largest_fk_gap, largest_joint_distance};

/// Keypoints by forward kinematics and Human3.6M keypoint files, shared with `ikarus-anim`'s
/// motion-capture tests.
#[path = "../../ikarus-anim/tests/common/mocap.rs"]
mod mocap;

use mocap::{h36m_file, keypoints};

/// `ikarus mocap --layout h36m --units mm --up z`: the arguments of the points written here.
fn h36m_mm_z() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ikarus"));
    command.args(["mocap", "--layout", "h36m", "--units", "mm", "--up", "z"]);
    command
}

/// Runs `command`, asserts it succeeded, returns its standard output.
fn succeed(command: &mut Command) -> String {
    let run = command.output().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stdout).into_owned()
}

/// The mean distance (metres) of `binding`'s 17 keypoints, by FK of each of `frames`, from
/// the frame's 17 points of `truth`.
fn mean_keypoint_error(
    skeleton: &Skeleton,
    binding: &Binding,
    frames: &[LocalPose],
    truth: &[DVec3],
) -> f64 {
    let mut model = ModelPose::new(skeleton);
    let mut frame = vec![DVec3::ZERO; 17];
    let (mut sum, mut n) = (0.0, 0.0);
    for (pose, want) in frames.iter().zip(truth.chunks_exact(17)) {
        fk::forward_kinematics(skeleton, pose, &mut model);
        binding.keypoints(&model, &mut frame);
        for (got, want) in frame.iter().zip(want) {
            sum += (*got - *want).length();
            n += 1.0;
        }
    }
    sum / n
}

#[test]
fn mocap_keypoint_files_to_bvh() {
    let Some(dir) = ikarus_testdata::require("bvh", "mocap_keypoint_files_to_bvh") else {
        return;
    };
    let source = dir.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let doc = ikarus_formats::open(source.to_str().unwrap(), 0.056).unwrap();
    let motion = doc.motion.unwrap();
    let layout = Layout::H36m;
    let map = HumanoidMap::recognise(&doc.skeleton);
    let binding = Binding::new(&doc.skeleton, &map, &layout, &[true; 17]);
    let truth = keypoints(&doc.skeleton, &motion, &binding);
    let file = h36m_file(&truth, motion.frame_rate());
    let tmp = std::env::temp_dir().join(format!("ikarus-cli-mocap-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("walk.json"), to_json(&file)).unwrap();
    std::fs::write(tmp.join("walk.npy"), to_npy(&file)).unwrap();
    let out_dir = tmp.join("out");
    succeed(
        h36m_mm_z()
            .arg("--to")
            .arg(&source)
            .arg("--out-dir")
            .arg(&out_dir)
            .arg(tmp.join("walk.json"))
            .arg(tmp.join("walk.npy")),
    );
    for name in ["walk.json.bvh", "walk.npy.bvh"] {
        let path: PathBuf = out_dir.join(name);
        let back = ikarus_formats::open(path.to_str().unwrap(), 1.0).unwrap();
        let solved = back.motion.unwrap();
        assert_eq!(solved.len(), motion.len());
        let map = HumanoidMap::recognise(&back.skeleton);
        let binding = Binding::new(&back.skeleton, &map, &layout, &[true; 17]);
        let mean = mean_keypoint_error(&back.skeleton, &binding, solved.frames(), &truth);
        println!("{name}: MPJPE {:.2} mm through the BVH file", mean * 1e3);
        assert!(mean < 5e-3, "{name}: {mean}");
    }
    assert_eq!(
        UpAxis::Z.to_y_up(DVec3::new(1.0, -3.0, 2.0)),
        DVec3::new(1.0, 2.0, 3.0)
    );

    contacts_match_the_library(&tmp, &layout, &truth, motion.frame_time());
    other_formats_match_the_bvh(&tmp);
    onto_avatars(&tmp, &truth);

    // A layout that does not fit the file: a clear error naming the file.
    let run = Command::new(env!("CARGO_BIN_EXE_ikarus"))
        .args(["mocap", "--layout", "mediapipe"])
        .arg(tmp.join("walk.npy"))
        .arg("--out")
        .arg(tmp.join("bad.bvh"))
        .output()
        .unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("walk.npy") && stderr.contains("17 points a frame"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `--contacts` onto the built-in humanoid: the CLI's BVH carries the library's cleaned motion
/// (FK of both agree to BVH precision) and says what it held.
fn contacts_match_the_library(tmp: &Path, layout: &Layout, truth: &[DVec3], frame_time: f64) {
    let stdout = succeed(
        h36m_mm_z()
            .arg("--contacts")
            .arg(tmp.join("walk.json"))
            .arg("--out")
            .arg(tmp.join("walk-contacts.bvh")),
    );
    assert!(stdout.contains("foot contacts held"), "{stdout}");
    let target = ikarus_core::humanoid::builtin_humanoid();
    let target_map = HumanoidMap::recognise(&target);
    let clip = KeypointClip {
        layout,
        frame_time,
        points: truth,
        confidence: None,
    };
    let config = MocapConfig {
        contacts: Some(ContactConfig::default()),
        ..MocapConfig::default()
    };
    let library = solve_positions(&target, &target_map, &clip, &config).unwrap();
    assert!(library.report.contacts > 0);
    let written =
        ikarus_formats::open(tmp.join("walk-contacts.bvh").to_str().unwrap(), 1.0).unwrap();
    let written_motion = written.motion.unwrap();
    assert_eq!(written_motion.len(), library.motion.len());
    let worst = largest_fk_gap(
        (&library.skeleton, &library.motion),
        (&written.skeleton, &written_motion),
        largest_joint_distance,
    );
    assert!(worst < 1e-4, "CLI and library differ by {worst} m");
}

/// `--out x.glb` and `--out-dir D --format vrma` onto the built-in humanoid: read back, the
/// humanoid joints' FK matches the BVH output's (the same solve) within glTF's `f32` storage.
fn other_formats_match_the_bvh(tmp: &Path) {
    let mocap = |extra: &[&str]| {
        succeed(h36m_mm_z().arg(tmp.join("walk.json")).args(extra));
    };
    let bvh = tmp.join("builtin.bvh");
    let glb = tmp.join("builtin.glb");
    mocap(&["--out", bvh.to_str().unwrap()]);
    // `ikarus mocap IN OUT.bvh`: the trailing path is the output, as `--out` names it.
    let trailing = tmp.join("trailing.bvh");
    mocap(&[trailing.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(&trailing).unwrap(),
        std::fs::read(&bvh).unwrap()
    );
    mocap(&["--out", glb.to_str().unwrap()]);
    mocap(&[
        "--out-dir",
        tmp.join("vrma").to_str().unwrap(),
        "--format",
        "vrma",
    ]);
    let vrma = tmp.join("vrma").join("walk.vrma");
    let reference = ikarus_formats::open(bvh.to_str().unwrap(), 1.0).unwrap();
    let reference_motion = reference.motion.unwrap();
    let reference_map = HumanoidMap::recognise(&reference.skeleton);
    for path in [glb, vrma] {
        let doc = ikarus_formats::open(path.to_str().unwrap(), 1.0).unwrap();
        let motion = doc.motion.unwrap();
        assert_eq!(motion.len(), reference_motion.len(), "{}", path.display());
        let map = ikarus_formats::humanoid_map(path.to_str().unwrap(), &doc.skeleton).unwrap();
        let mut compared = 0;
        let worst = largest_fk_gap(
            (&reference.skeleton, &reference_motion),
            (&doc.skeleton, &motion),
            |a, b| {
                let mut worst = 0.0_f64;
                for (bone, j) in reference_map.iter() {
                    if let Some(k) = map.joint(bone) {
                        worst = worst.max((a.position(j) - b.position(k)).length());
                        compared += 1;
                    }
                }
                worst
            },
        );
        println!(
            "{}: humanoid joints within {worst:e} m of the BVH's",
            path.display()
        );
        assert!(
            compared > 20 * motion.len(),
            "{}: {compared} joints",
            path.display()
        );
        assert!(worst < 1e-4, "{}: {worst} m", path.display());
    }
}

/// `--to` a VRM (its declared humanoid bones) and an MMD model (Japanese bone names): every
/// H36M point is used and, by FK of the written BVH, lands within 10 cm of the input on average
/// (bone lengths are fitted; the rest is where the avatar's joints sit against the capture's
/// points: 23 mm on cryptovoxels, 48 mm on Godette, 81 mm on Miku, whose hips bone センター sits
/// at the waist while the pelvis point is between the hip joints).
fn onto_avatars(tmp: &Path, truth: &[DVec3]) {
    let (Some(gltf), Some(mmd)) = (
        ikarus_testdata::require("gltf", "onto_avatars"),
        ikarus_testdata::require("mmd", "onto_avatars"),
    ) else {
        return;
    };
    let layout = Layout::H36m;
    for target in [
        gltf.join("Godette_vrm_v4.vrm"),
        gltf.join("cryptovoxels.vrm"),
        mmd.join("Miku_Hatsune_Ver2.pmd"),
    ] {
        let out = tmp.join("avatar.bvh");
        let stdout = succeed(
            h36m_mm_z()
                .arg("--to")
                .arg(&target)
                .arg(tmp.join("walk.json"))
                .arg("--out")
                .arg(&out),
        );
        assert!(
            stdout.contains("17/17 points used"),
            "{}: {stdout}",
            target.display()
        );
        // The output has the target's joints in the target's order (their names as BVH
        // tokens: cryptovoxels.vrm's have spaces; Miku's three roots under one shared root):
        // its map applies, moved to the written joints.
        let avatar = ikarus_formats::open(target.to_str().unwrap(), 1.0).unwrap();
        let avatar_map =
            ikarus_formats::humanoid_map(target.to_str().unwrap(), &avatar.skeleton).unwrap();
        let written = ikarus_formats::open(out.to_str().unwrap(), 1.0).unwrap();
        let shared = ikarus_formats::bvh::shared_root(&avatar.skeleton);
        let tokens = ikarus_formats::bvh::token_names(&avatar.skeleton);
        let expected: Vec<String> = shared
            .iter()
            .cloned()
            .chain(tokens.iter().cloned())
            .collect();
        assert_eq!(written.skeleton.names(), expected);
        let mut map = ikarus_core::humanoid_map::HumanoidMap::empty(avatar_map.scheme());
        for (bone, joint) in avatar_map.iter() {
            map.set(bone, written.skeleton.joint(&tokens[joint.index()]));
        }
        let binding = Binding::new(&written.skeleton, &map, &layout, &[true; 17]);
        let frames = written.motion.unwrap();
        let mean = mean_keypoint_error(&written.skeleton, &binding, frames.frames(), truth);
        println!("onto {}: MPJPE {:.1} mm", target.display(), mean * 1e3);
        assert!(mean < 0.1, "{}: MPJPE {mean}", target.display());
    }
}
