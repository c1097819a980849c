//! `ikarus retarget` end to end: files written by the command, read back and checked by
//! forward kinematics against the library's result on the same inputs.

mod common;

use ikarus_anim::mmd::{MmdEvaluator, MmdSettings};
use ikarus_anim::retarget::{self, Character, RetargetConfig};
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{ModelPose, Motion, fk};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};
use ikarus_formats::mmd::vmd::BoundMotion;

fn temp(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ikarus-cli-retarget-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two BVH sources onto a VRM in one run: each GLB read back holds, frame for frame, the
/// library's retargeted motion (to f32), and its feet stay above the floor.
#[test]
fn bvh_sources_onto_a_vrm_as_glb() {
    let Some([bvh, gltf]) = ikarus_testdata::require_all(["bvh", "gltf"], "retarget cli") else {
        return;
    };
    let sources = [
        bvh.join("cmu_02_01_walk_cgspeed_crlf.bvh"),
        bvh.join("bandainamco_ds1_run_normal_001.bvh"),
    ];
    let avatar = gltf.join("Godette_vrm_v4.vrm");
    let out = temp("glb");
    let stdout = common::ok(&[
        "retarget",
        sources[0].to_str().unwrap(),
        sources[1].to_str().unwrap(),
        "--to",
        avatar.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    let file = GltfFile::read(&avatar).unwrap();
    let skin = file.skeleton(&SkeletonSource::Auto).unwrap();
    let map = file.vrm_humanoid().unwrap().unwrap().map(&skin);
    for source in &sources {
        let written = out.join(source.file_stem().unwrap()).with_extension("glb");
        let back = ikarus_formats::open(written.to_str().unwrap(), 1.0).unwrap();
        let read = back.motion.unwrap();
        let document = ikarus_formats::open(source.to_str().unwrap(), 1.0).unwrap();
        let source_map = HumanoidMap::recognise(&document.skeleton);
        let expected = retarget::retarget(
            Character {
                skeleton: &document.skeleton,
                map: &source_map,
            },
            document.motion.as_ref().unwrap(),
            Character {
                skeleton: &skin.skeleton,
                map: &map,
            },
            &RetargetConfig::default(),
        )
        .unwrap();
        assert_eq!(read.len(), expected.motion.len());
        // Joint positions by FK, read back against the library's (f32 keys).
        let mut a = ModelPose::new(&back.skeleton);
        let mut b = ModelPose::new(&skin.skeleton);
        let mut worst = 0.0_f64;
        for (r, e) in read.frames().iter().zip(expected.motion.frames()) {
            fk::forward_kinematics(&back.skeleton, r, &mut a);
            fk::forward_kinematics(&skin.skeleton, e, &mut b);
            for j in skin.skeleton.joints() {
                worst = worst.max((a.position(j) - b.position(j)).length());
            }
        }
        assert!(
            worst < 1e-4,
            "{}: read back {worst} m off",
            written.display()
        );
    }
}

/// kishimen.vmd played on Miku onto the PMX test model as a VMD: played back as MMD would
/// (the VMD's IK switches honoured: every chain off from frame 0, the legs baked), the ankles
/// land where the keys put them; and the chains are switched off in the file.
#[test]
fn vmd_onto_a_pmx_plays_back_with_ik() {
    let Some(dir) = ikarus_testdata::require("mmd", "retarget cli") else {
        return;
    };
    let out = temp("vmd").join("k.vmd");
    let target_path = dir.join("yw_test_model.pmx");
    common::ok(&[
        "retarget",
        dir.join("kishimen.vmd").to_str().unwrap(),
        "--model",
        dir.join("Miku_Hatsune_Ver2.pmd").to_str().unwrap(),
        "--to",
        target_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let built = ikarus_formats::read_mmd_model(&target_path, 1.0)
        .unwrap()
        .build()
        .unwrap();
    let vmd = ikarus_formats::read_vmd(&out, 1.0).unwrap();
    let bound = BoundMotion::new(&vmd, &built.skeleton);
    assert!(bound.unmatched.is_empty());
    let mut evaluator =
        MmdEvaluator::new(&built.skeleton, &built.rig, MmdSettings::default()).unwrap();
    let names = evaluator.chain_names().to_vec();
    let map = HumanoidMap::recognise(&built.skeleton);
    let ankles = [
        map.joint(ikarus_core::humanoid_map::HumanoidBone::LeftFoot)
            .unwrap(),
        map.joint(ikarus_core::humanoid_map::HumanoidBone::RightFoot)
            .unwrap(),
    ];
    let mut animated = built.skeleton.rest_pose();
    let mut played = built.skeleton.rest_pose();
    let mut model = ModelPose::new(&built.skeleton);
    let mut keyed = ModelPose::new(&built.skeleton);
    let mut keyed_motion = Motion::for_skeleton(&built.skeleton, 1.0 / 30.0).unwrap();
    let mut worst = 0.0_f64;
    for frame in 0..=bound.last_frame() {
        let frame = f64::from(frame);
        bound.sample(&built.skeleton, frame, &mut animated);
        keyed_motion.push(animated.clone()).unwrap();
        fk::forward_kinematics(&built.skeleton, &animated, &mut keyed);
        let enabled: Vec<bool> = names.iter().map(|n| bound.ik_enabled(n, frame)).collect();
        evaluator.evaluate(
            &built.skeleton,
            &animated,
            &enabled,
            &mut played,
            &mut model,
        );
        for &a in &ankles {
            worst = worst.max((model.position(a) - keyed.position(a)).length());
        }
    }
    // The chains are off, so the model's IK moves nothing: f32 keys only.
    assert!(
        names.iter().all(|n| !bound.ik_enabled(n, 0.0)),
        "the VMD switches every IK chain off"
    );
    assert!(worst < 1e-6, "ankles moved {worst} m by the model's IK");
    assert!(keyed_motion.len() > 600);
}

#[test]
fn a_vmd_without_its_model_is_refused() {
    let Some(dir) = ikarus_testdata::require("mmd", "retarget cli") else {
        return;
    };
    let out = common::ikarus(&[
        "retarget",
        dir.join("kishimen.vmd").to_str().unwrap(),
        "--to",
        "builtin:humanoid",
        "--out",
        temp("err").join("x.bvh").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--model"), "{stderr}");
}
