//! Characters over the protocol: an MMD model with a VMD evaluated with its IK (frames, the IK
//! switch, dragging an IK bone), a VRM avatar with its mesh and humanoid names, binary uploads.

use base64::Engine as _;
use ikarus_viewer::Catalog;
use serde_json::{Value, json};

mod common;
use common::{
    Socket, connect, connect_builtin, joint_index, of, retarget_text, send, until, upload,
};

async fn ask(socket: &mut Socket, request: &Value, kind: &str) -> Value {
    send(socket, request).await;
    until(socket, kind).await.pop().unwrap()
}

fn position(pose: &Value, i: usize) -> [f64; 3] {
    serde_json::from_value(pose["positions"][i].clone()).unwrap()
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

fn decoded(text: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(text.as_str().unwrap())
        .unwrap()
}

#[tokio::test]
async fn mmd_model_plays_its_vmd_with_ik_and_ik_bones_drag_live() {
    let Some(dir) = ikarus_testdata::require("mmd", "mmd_model_plays") else {
        return;
    };
    let model = dir.join("Miku_Hatsune_Ver2.pmd");
    let mut catalog = Catalog::open(&[model.display().to_string()]).unwrap();
    catalog
        .attach_motion(&dir.join("kishimen.vmd").display().to_string())
        .unwrap();
    let (mut socket, greeting) = connect(catalog).await;
    let skeleton = of(&greeting, "skeleton");
    assert_eq!(skeleton["format"], "mmd");
    assert_eq!(skeleton["joints"].as_array().unwrap().len(), 140);
    let vmd = ikarus_formats::read_vmd(&dir.join("kishimen.vmd"), 1.0).unwrap();
    let frames = vmd.last_frame() + 1;
    assert_eq!(
        skeleton["motion"]["frames"], frames,
        "{}",
        skeleton["motion"]
    );
    let chains = skeleton["ik_chains"].as_array().unwrap();
    assert_eq!(chains.len(), 7);
    let leg = chains.iter().find(|c| c["name"] == "左足ＩＫ").unwrap();
    assert_eq!(leg["effector"], "左足首");
    // The mesh: 12354 vertices in each buffer, 22961 triangles, 17 materials.
    let mesh = of(&greeting, "mesh");
    assert_eq!(mesh["vertices"], 12354);
    assert_eq!(decoded(&mesh["positions"]).len(), 12354 * 12);
    assert_eq!(decoded(&mesh["joints"]).len(), 12354 * 8);
    assert_eq!(decoded(&mesh["indices"]).len(), 22961 * 3 * 4);
    assert_eq!(mesh["materials"].as_array().unwrap().len(), 17);
    assert_eq!(mesh["inverse_bind"].as_array().unwrap().len(), 140);

    let goal = joint_index(skeleton, "左足ＩＫ");
    let ankle = joint_index(skeleton, "左足首");
    let mut previous: Option<[f64; 3]> = None;
    for frame in [0, 150, 300] {
        let pose = ask(
            &mut socket,
            &json!({"type": "frame", "index": frame}),
            "pose",
        )
        .await;
        assert_eq!(pose["frame"], frame);
        let chain = &pose["ik"]["chains"][chains.iter().position(|c| c == leg).unwrap()];
        let measured = distance(position(&pose, ankle), position(&pose, goal));
        // The reported residual is the FK distance between the reply's own positions.
        assert!((chain["distance"].as_f64().unwrap() - measured).abs() < 1e-9);
        assert!(
            measured < 0.01,
            "frame {frame}: ankle {measured} m from its IK bone"
        );
        if let Some(p) = previous {
            assert!(
                distance(p, position(&pose, ankle)) > 0.01,
                "frame {frame} moved the ankle"
            );
        }
        previous = Some(position(&pose, ankle));
    }
    // IK off: the ankle leaves its IK bone (the motion keys the IK bones, not the legs).
    let off = ask(
        &mut socket,
        &json!({"type": "ik", "enabled": false}),
        "pose",
    )
    .await;
    assert_eq!(off["ik"]["enabled"], false);
    let apart = distance(position(&off, ankle), position(&off, goal));
    assert!(apart > 0.01, "IK off: ankle {apart} m from its IK bone");
    let on = ask(&mut socket, &json!({"type": "ik", "enabled": true}), "pose").await;
    assert!(distance(position(&on, ankle), position(&on, goal)) < 0.01);

    // Dragging the IK bone: it goes exactly where it is dragged, the ankle follows.
    let start = position(&on, goal);
    let target = [start[0] + 0.05, start[1] + 0.1, start[2] + 0.05];
    let pose = ask(
        &mut socket,
        &json!({"type": "drag", "joint": "左足ＩＫ", "position": target}),
        "pose",
    )
    .await;
    assert!(distance(position(&pose, goal), target) < 1e-9);
    let reached = distance(position(&pose, ankle), target);
    assert!(
        reached < 0.01,
        "the ankle is {reached} m from the dragged IK bone"
    );
    // Undo puts the IK bone back.
    let undone = ask(&mut socket, &json!({"type": "undo"}), "pose").await;
    assert!(distance(position(&undone, goal), start) < 1e-9);
    // The motion with IK as BVH: every frame.
    let bvh = ask(&mut socket, &json!({"type": "export_bvh"}), "bvh").await;
    assert!(
        bvh["text"]
            .as_str()
            .unwrap()
            .contains(&format!("Frames: {frames}"))
    );
}

#[tokio::test]
async fn vrm_upload_has_its_mesh_humanoid_names_and_takes_a_vrma() {
    let Some(dir) = ikarus_testdata::require("gltf", "vrm_upload") else {
        return;
    };
    let mut socket = connect_builtin().await;
    let replies = upload(&mut socket, &dir.join("Godette_vrm_v4.vrm"), "Godette.vrm").await;
    let skeleton = of(&replies, "skeleton");
    assert_eq!(skeleton["format"], "gltf");
    assert_eq!(skeleton["joints"].as_array().unwrap().len(), 68);
    let humanoid = skeleton["humanoid"].as_array().unwrap();
    let hand = humanoid.iter().position(|b| b == "leftHand").unwrap();
    assert_eq!(skeleton["joints"][hand]["name"], "hand.l_Armature");
    assert_eq!(humanoid.iter().filter(|b| !b.is_null()).count(), 45);
    let mesh = of(&replies, "mesh");
    let vertices = mesh["vertices"].as_u64().unwrap() as usize;
    assert_eq!(decoded(&mesh["weights"]).len(), vertices * 16);
    let textured = mesh["materials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["texture"]
                .as_str()
                .is_some_and(|t| t.starts_with("data:image/"))
        })
        .count();
    assert!(
        textured > 0,
        "the VRM's embedded textures come as data URLs"
    );
    // The page culls back faces except where the file says both sides: Godette's logo.
    let double: Vec<&str> = mesh["materials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["double_sided"] == true)
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(double, ["GodotLogo"]);

    // A VRMA applied to the avatar: a motion, frames that move the hands.
    let replies = upload(&mut socket, &dir.join("three-vrm_test.vrma"), "test.vrma").await;
    let frames = of(&replies, "motion")["frames"].as_u64().unwrap();
    assert!(frames > 2);
    let first = ask(&mut socket, &json!({"type": "frame", "index": 0}), "pose").await;
    // The test animation turns the right upper arm only (and back by its last key).
    let right = humanoid.iter().position(|b| b == "rightHand").unwrap();
    let shoulder = humanoid.iter().position(|b| b == "rightUpperArm").unwrap();
    let mut most: f64 = 0.0;
    for frame in 1..frames {
        let pose = ask(
            &mut socket,
            &json!({"type": "frame", "index": frame}),
            "pose",
        )
        .await;
        most = most.max(distance(position(&first, right), position(&pose, right)));
        // Only the right arm moves.
        assert!(distance(position(&first, hand), position(&pose, hand)) < 1e-9);
        assert!(distance(position(&first, shoulder), position(&pose, shoulder)) < 1e-9);
    }
    println!("vrma: {frames} frames, the right hand moves up to {most} m");
    assert!(most > 0.05);
}

/// A BVH retargeted onto the built-in humanoid: the motion replaces the loaded one, every
/// frame's pose carries the source beside the target and the held contacts, and a planted
/// heel's marker sits on the target's foot joint.
#[tokio::test]
async fn a_bvh_retargets_onto_the_humanoid_with_the_source_beside_it() {
    let Some(dir) = ikarus_testdata::require("bvh", "viewer retarget") else {
        return;
    };
    let (mut socket, greeting) = connect(Catalog::open(&[]).unwrap()).await;
    let skeleton = of(&greeting, "skeleton");
    let humanoid = skeleton["humanoid"].as_array().unwrap();
    let feet = ["leftFoot", "rightFoot"].map(|b| humanoid.iter().position(|h| h == b).unwrap());
    let walk = dir.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let replies = retarget_text(&mut socket, "walk.bvh", &walk).await;
    assert_eq!(of(&replies, "motion")["frames"], 344);
    let first = of(&replies, "pose");
    let overlay = &first["overlay"];
    let joints = overlay["source"].as_array().unwrap().len();
    assert!(joints > 20, "the CMU skeleton's joints");
    assert_eq!(overlay["parents"].as_array().unwrap().len(), joints);
    let mut held = 0;
    for frame in (0..344).step_by(8) {
        let pose = ask(
            &mut socket,
            &json!({"type": "frame", "index": frame}),
            "pose",
        )
        .await;
        for contact in pose["overlay"]["contacts"].as_array().unwrap() {
            let at = [0, 1, 2].map(|k| contact[k].as_f64().unwrap());
            // Heel anchors are on a foot joint; ball anchors a foot length ahead of it.
            let nearest = feet
                .iter()
                .map(|&f| distance(position(&pose, f), at))
                .fold(f64::INFINITY, f64::min);
            assert!(
                nearest < 0.2,
                "frame {frame}: contact {nearest} m from the feet"
            );
            if nearest < 1e-3 {
                held += 1;
            }
        }
    }
    assert!(held > 0, "some heel held exactly on its anchor");
    // Another load drops the overlay.
    let pose = ask(
        &mut socket,
        &json!({"type": "load", "source": "builtin:humanoid"}),
        "pose",
    )
    .await;
    assert!(pose.get("overlay").is_none());
}
