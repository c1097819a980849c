//! `retarget` over the protocol with MMD sources and targets: a VMD played on its model (sent
//! with it, or the loaded one) onto a humanoid, and a motion onto a loaded PMX/PMD model,
//! played through the model's own IK. The server's replies are checked against the library
//! run here ([`ikarus_jobs::MmdPlayer`], [`ikarus_anim::retarget`]) and against FK of the
//! replies' own poses.

use glam::DVec3;
use ikarus_anim::retarget::{self, Character, RetargetConfig, Retargeted};
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{ModelPose, fk};
use ikarus_core::{Motion, Skeleton};
use ikarus_jobs::{IkMode, MmdPlayer};
use ikarus_viewer::Catalog;
use serde_json::{Value, json};

mod common;
use common::{
    Socket, base64_file, connect, connect_builtin, of, refused, retarget_text, send, until, vec3,
};

/// The shared `mmd` and `bvh` data directories; `None` (the test skips) without them.
fn mmd_and_bvh(test: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    Some((
        ikarus_testdata::require("mmd", test)?,
        ikarus_testdata::require("bvh", test)?,
    ))
}

/// Every frame's `pose` reply of the loaded motion, in order.
async fn all_frames(socket: &mut Socket, count: usize) -> Vec<Value> {
    let mut poses = Vec::with_capacity(count);
    for index in 0..count {
        send(socket, &json!({"type": "frame", "index": index})).await;
        let pose = until(socket, "pose").await.pop().unwrap();
        assert_eq!(pose["frame"], index);
        poses.push(pose);
    }
    poses
}

/// Largest per-frame move (metres) of a contact's joint between consecutive frames of each
/// contact, by the replies' positions, and how many frame steps were measured.
fn contact_slide(result: &Retargeted, poses: &[Value]) -> (f64, usize) {
    let mut worst = 0.0_f64;
    let mut steps = 0;
    for contact in &result.contacts {
        let (_, joint) = result
            .feet
            .joints
            .iter()
            .find(|(c, _)| *c == contact.channel)
            .unwrap();
        for f in contact.start..contact.end {
            let a = vec3(&poses[f]["positions"][joint.index()]);
            let b = vec3(&poses[f + 1]["positions"][joint.index()]);
            worst = worst.max(a.distance(b));
            steps += 1;
        }
    }
    (worst, steps)
}

/// The library's retarget of `motion` (on `source`, its map recognised from the names) onto
/// `target` (its map `to_map`), default configuration: what the server runs.
fn library_retarget(
    source: &Skeleton,
    motion: &Motion,
    target: &Skeleton,
    to_map: &HumanoidMap,
) -> Retargeted {
    let from_map = HumanoidMap::recognise(source);
    retarget::retarget(
        Character {
            skeleton: source,
            map: &from_map,
        },
        motion,
        Character {
            skeleton: target,
            map: to_map,
        },
        &RetargetConfig::default(),
    )
    .unwrap()
}

/// kishimen.vmd sent with the Miku PMD it plays on, retargeted onto the cryptovoxels VRM:
/// the reply has the VMD's 630 frames at 30 fps; the overlay's source joints are the FK of
/// `ikarus_jobs`' playback of the VMD (mapped onto the target's floor and scale, moved aside
/// by one constant offset); the poses are the library's retarget by FK; planted feet move
/// less than 1 cm per frame during every contact.
#[tokio::test]
async fn a_vmd_sent_with_its_model_retargets_onto_a_vrm() {
    let Some(dir) = ikarus_testdata::require("mmd", "viewer retarget vmd") else {
        return;
    };
    let (model, vmd) = (dir.join("Miku_Hatsune_Ver2.pmd"), dir.join("kishimen.vmd"));
    let mut player = MmdPlayer::open(&model, &vmd, 1.0, IkMode::Compatible).unwrap();
    let frames = player.frame_count(None).unwrap();
    let played = player.motion(None, |_, _| {}).unwrap();
    let Some(gltf) = ikarus_testdata::require("gltf", "viewer retarget vmd") else {
        return;
    };
    let vrm = gltf.join("cryptovoxels.vrm").display().to_string();
    let target = ikarus_formats::open(&vrm, 1.0).unwrap().skeleton;
    let target_map = ikarus_formats::humanoid_map(&vrm, &target).unwrap();
    let result = library_retarget(player.skeleton(), &played, &target, &target_map);

    let (mut socket, greeting) = connect(Catalog::open(&[vrm]).unwrap()).await;
    assert_eq!(of(&greeting, "skeleton")["format"], "gltf");
    send(
        &mut socket,
        &json!({"type": "retarget", "name": "kishimen.vmd", "base64": base64_file(&vmd),
                "model_name": "Miku_Hatsune_Ver2.pmd", "model_base64": base64_file(&model)}),
    )
    .await;
    let replies = until(&mut socket, "pose").await;
    let motion = of(&replies, "motion");
    assert_eq!(motion["frames"], frames);
    assert_eq!(frames, 630);
    assert!((motion["frame_time"].as_f64().unwrap() - 1.0 / 30.0).abs() < 1e-12);

    let poses = all_frames(&mut socket, frames).await;
    // The overlay: the playback's FK through the root mapping, plus one offset aside.
    let source = player.skeleton();
    let mut model_pose = ModelPose::new(source);
    let mut aside: Option<DVec3> = None;
    let mut worst_overlay = 0.0_f64;
    for (f, pose) in played.frames().iter().enumerate() {
        fk::forward_kinematics(source, pose, &mut model_pose);
        let overlay = poses[f]["overlay"]["source"].as_array().unwrap();
        assert_eq!(overlay.len(), source.len());
        for (j, p) in model_pose.positions().enumerate() {
            let offset = vec3(&overlay[j]) - result.root.map_point(p);
            let aside = *aside.get_or_insert(offset);
            worst_overlay = worst_overlay.max(offset.distance(aside));
        }
    }
    let aside = aside.unwrap();
    assert!(worst_overlay < 1e-9, "overlay {worst_overlay} m off");
    assert!(aside.length() > 0.5, "the source stands aside ({aside})");
    // The poses: the library's retarget, by our FK.
    let mut target_pose = ModelPose::new(&target);
    let mut worst_pose = 0.0_f64;
    for (f, pose) in result.motion.frames().iter().enumerate() {
        fk::forward_kinematics(&target, pose, &mut target_pose);
        for (j, p) in target_pose.positions().enumerate() {
            worst_pose = worst_pose.max(vec3(&poses[f]["positions"][j]).distance(p));
        }
    }
    assert!(worst_pose < 1e-9, "poses {worst_pose} m off the library's");
    let (slide, steps) = contact_slide(&result, &poses);
    println!(
        "kishimen on Miku onto cryptovoxels: {frames} frames, {} contacts, {steps} contact steps, \
         worst slide {:.3} mm/frame, overlay aside {:.3} m",
        result.contacts.len(),
        slide * 1e3,
        aside.length()
    );
    assert!(
        steps > 100,
        "kishimen plants its feet ({steps} contact steps)"
    );
    assert!(slide < 0.01, "a planted foot moved {slide} m in a frame");
}

/// What a clip retargeted onto a loaded PMX/PMD model and played through its IK measures.
struct OntoMmd {
    socket: Socket,
    /// The library's retarget and the model's skeleton it is on.
    result: Retargeted,
    skeleton: Skeleton,
    frames: usize,
    contacts: usize,
    /// Largest leg IK chain residual (IK bone to ankle), by the replies' positions.
    worst_chain: f64,
    /// Largest distance of a played heel/ball joint from the library's retarget (our FK).
    worst_foot: f64,
    /// The same over the frames of that joint's contacts only.
    worst_foot_held: f64,
    /// Largest per-frame move of a planted point, and the frame steps measured.
    slide: f64,
    steps: usize,
}

impl OntoMmd {
    /// The played motion is the retarget: leg IK bones on the ankles and feet on the library's
    /// retarget within 0.1 mm, more than `min_steps` contact steps, planted points moving less
    /// than 1 cm a frame.
    fn assert_plays_the_retarget(&self, min_steps: usize) {
        assert!(
            self.worst_chain < 1e-4,
            "a leg chain ends {} m off",
            self.worst_chain
        );
        assert!(
            self.worst_foot < 1e-4,
            "a played foot is {} m off the retarget",
            self.worst_foot
        );
        assert!(
            self.steps > min_steps,
            "the walk plants its feet ({} steps)",
            self.steps
        );
        assert!(
            self.slide < 0.01,
            "a planted foot moved {} m in a frame",
            self.slide
        );
    }
}

/// The largest distance of a played heel/ball joint (the replies' positions) from the
/// library's retarget (our FK of its frames), over all frames and over the frames of that
/// joint's contacts.
fn feet_off(result: &Retargeted, skeleton: &Skeleton, poses: &[Value]) -> (f64, f64) {
    let mut model_pose = ModelPose::new(skeleton);
    let (mut worst, mut worst_held) = (0.0_f64, 0.0_f64);
    for (f, pose) in result.motion.frames().iter().enumerate() {
        fk::forward_kinematics(skeleton, pose, &mut model_pose);
        for &(channel, j) in &result.feet.joints {
            let off = vec3(&poses[f]["positions"][j.index()]).distance(model_pose.position(j));
            worst = worst.max(off);
            let held = result
                .contacts
                .iter()
                .any(|c| c.channel == channel && (c.start..=c.end).contains(&f));
            if held {
                worst_held = worst_held.max(off);
            }
        }
    }
    (worst, worst_held)
}

/// Loads `model`, retargets the BVH `clip` onto it over the protocol, and measures every
/// played frame against the library's retarget of the clip resampled to 30 fps.
async fn onto_mmd(model: &std::path::Path, clip: &std::path::Path) -> OntoMmd {
    let built = ikarus_formats::read_mmd_model(model, 1.0)
        .unwrap()
        .build()
        .unwrap();
    let document = ikarus_formats::open(clip.to_str().unwrap(), 1.0).unwrap();
    let motion = document.motion.unwrap();
    let at_30 = (motion.frame_time() * 30.0 - 1.0).abs() < 1e-4;
    let source_motion = if at_30 {
        motion
    } else {
        motion.resampled(1.0 / 30.0).unwrap()
    };
    let target_map = HumanoidMap::recognise(&built.skeleton);
    let result = library_retarget(
        &document.skeleton,
        &source_motion,
        &built.skeleton,
        &target_map,
    );
    let (mut socket, greeting) =
        connect(Catalog::open(&[model.display().to_string()]).unwrap()).await;
    let skeleton = of(&greeting, "skeleton");
    assert_eq!(skeleton["format"], "mmd");
    let replies = retarget_text(&mut socket, "clip.bvh", clip).await;
    let frames = of(&replies, "motion")["frames"].as_u64().unwrap() as usize;
    assert_eq!(frames, source_motion.len());
    assert_eq!(frames, result.motion.len());
    let poses = all_frames(&mut socket, frames).await;
    assert!(poses.iter().all(|p| p["overlay"]["source"].is_array()));
    // The leg chains (the feet's IK bones): each chain's residual, by the reply's FK.
    let chains = skeleton["ik_chains"].as_array().unwrap();
    let name_index = |name: &Value| {
        skeleton["joints"]
            .as_array()
            .unwrap()
            .iter()
            .position(|j| j["name"] == *name)
            .unwrap()
    };
    let legs: Vec<(usize, usize, usize)> = chains
        .iter()
        .enumerate()
        .filter(|(_, c)| c["name"].as_str().unwrap().ends_with("足ＩＫ"))
        .map(|(k, c)| (k, name_index(&c["goal"]), name_index(&c["effector"])))
        .collect();
    assert_eq!(legs.len(), 2, "{chains:?}");
    let mut worst_chain = 0.0_f64;
    for pose in &poses {
        for &(k, goal, effector) in &legs {
            let measured =
                vec3(&pose["positions"][effector]).distance(vec3(&pose["positions"][goal]));
            let reported = pose["ik"]["chains"][k]["distance"].as_f64().unwrap();
            assert!((measured - reported).abs() < 1e-9);
            worst_chain = worst_chain.max(measured);
        }
    }
    let (worst_foot, worst_foot_held) = feet_off(&result, &built.skeleton, &poses);
    let (slide, steps) = contact_slide(&result, &poses);
    let run = OntoMmd {
        socket,
        result,
        skeleton: built.skeleton,
        frames,
        contacts: 0,
        worst_chain,
        worst_foot,
        worst_foot_held,
        slide,
        steps,
    };
    let run = OntoMmd {
        contacts: run.result.contacts.len(),
        ..run
    };
    println!(
        "{} onto {}: {} frames at 30 fps, leg IK residual ≤ {:.3} mm, played feet ≤ {:.3} mm \
         from the retarget ({:.3} mm while held), {} contacts, {} contact steps, worst slide \
         {:.3} mm/frame",
        clip.file_name().unwrap().display(),
        model.file_name().unwrap().display(),
        run.frames,
        run.worst_chain * 1e3,
        run.worst_foot * 1e3,
        run.worst_foot_held * 1e3,
        run.contacts,
        run.steps,
        run.slide * 1e3
    );
    run
}

/// The CMU walk (120 fps BVH) retargeted onto the loaded PMX test model: resampled to the
/// VMD's 30 fps (87 frames), played from the written VMD (its IK chains switched off at frame
/// 0, the IK bones on the feet). Every frame's leg IK bones are within 0.1 mm of the ankles,
/// the played feet are within 0.1 mm of the library's retarget, and the feet move less than
/// 1 cm per frame during every contact. Then kishimen.vmd played on the
/// loaded model itself (no model sent) retargets onto it: 630 frames.
#[tokio::test]
async fn a_walk_retargets_onto_a_loaded_pmx_and_plays_with_its_ik() {
    let Some((mmd, bvh)) = mmd_and_bvh("viewer retarget onto pmx") else {
        return;
    };
    let mut run = onto_mmd(
        &mmd.join("yw_test_model.pmx"),
        &bvh.join("cmu_02_01_walk_cgspeed_crlf.bvh"),
    )
    .await;
    assert_eq!(run.frames, 87, "344 frames at 120 fps");
    run.assert_plays_the_retarget(30);

    // A VMD on the loaded model itself: no model sent.
    send(
        &mut run.socket,
        &json!({"type": "retarget", "name": "kishimen.vmd",
                "base64": base64_file(&mmd.join("kishimen.vmd"))}),
    )
    .await;
    let replies = until(&mut run.socket, "pose").await;
    assert_eq!(of(&replies, "motion")["frames"], 630);
    assert!(of(&replies, "pose")["overlay"]["source"].is_array());
}

/// The Bandai Namco walk (30 fps) onto Miku (PMD: knees bend about X only, 0.5° to 180°).
/// The written VMD switches every IK chain off at frame 0 (the limbs are baked), so with the
/// viewer's IK switch on or off the played heels and balls are the library's retarget (VMD's
/// f32 keys: within 0.1 mm) and planted points move less than 1 cm per frame. (Before the
/// switch-off frame, the PMD's own leg IK re-solved the legs within MMD's budget and left
/// ankles up to 2.7 cm off.)
#[tokio::test]
async fn a_walk_onto_a_pmd_plays_the_retarget_with_the_ik_switch_on_and_off() {
    let Some((mmd, bvh)) = mmd_and_bvh("viewer retarget onto pmd") else {
        return;
    };
    let mut run = onto_mmd(
        &mmd.join("Miku_Hatsune_Ver2.pmd"),
        &bvh.join("bandainamco_ds1_walk_normal_002.bvh"),
    )
    .await;
    assert_eq!(run.frames, 31, "a 30 fps clip keeps its frames");
    // With IK on (the played motion's own switch-off frame keeps the limbs baked).
    run.assert_plays_the_retarget(10);
    send(&mut run.socket, &json!({"type": "ik", "enabled": false})).await;
    until(&mut run.socket, "pose").await;
    let poses = all_frames(&mut run.socket, run.frames).await;
    assert!(poses.iter().all(|p| p["ik"]["enabled"] == false));
    let (off, _) = feet_off(&run.result, &run.skeleton, &poses);
    let (slide, steps) = contact_slide(&run.result, &poses);
    println!(
        "IK off: played feet ≤ {:.4} mm from the retarget, worst slide {:.3} mm/frame over \
         {steps} contact steps",
        off * 1e3,
        slide * 1e3
    );
    assert!(off < 1e-4, "with IK off a foot is {off} m off the retarget");
    assert!(slide < 0.01, "a planted foot moved {slide} m in a frame");
}

/// `retarget` requests a VMD cannot be played for get errors that say what to send: a VMD
/// without a model onto a model that is not MMD, a model's name without its bytes, a model
/// with a motion that is not a VMD, a model that is not a PMX/PMD.
#[tokio::test]
async fn vmd_requests_without_a_playable_model_are_refused() {
    let Some(dir) = ikarus_testdata::require("mmd", "viewer retarget refusals") else {
        return;
    };
    let vmd = dir.join("kishimen.vmd");
    let mut socket = connect_builtin().await;
    // A VMD without a model onto the built-in humanoid, a model's name without its bytes, a
    // model with a motion that is not a VMD, and a model that is not a PMX/PMD.
    for (request, says) in [
        (
            json!({"type": "retarget", "name": "kishimen.vmd", "base64": base64_file(&vmd)}),
            "model_base64",
        ),
        (
            json!({"type": "retarget", "name": "kishimen.vmd", "base64": base64_file(&vmd),
                   "model_name": "Miku_Hatsune_Ver2.pmd"}),
            "go together",
        ),
        (
            json!({"type": "retarget", "name": "walk.bvh", "text": "HIERARCHY",
                   "model_name": "m.pmd", "model_base64": ""}),
            ".vmd motion only",
        ),
        (
            json!({"type": "retarget", "name": "kishimen.vmd", "base64": base64_file(&vmd),
                   "model_name": "m.glb", "model_base64": ""}),
            ".pmx or .pmd",
        ),
    ] {
        let error = refused(&mut socket, &request).await;
        assert!(error.contains(says), "{error}");
    }
    // The humanoid still takes a motion.
    let walk = ikarus_testdata::require("bvh", "viewer retarget refusals")
        .unwrap()
        .join("bandainamco_ds1_walk_normal_002.bvh");
    let replies = retarget_text(&mut socket, "walk.bvh", &walk).await;
    assert_eq!(of(&replies, "motion")["frames"], 31);
}
