//! The viewer's WebSocket protocol against a running server on an ephemeral port, with a real
//! WebSocket client.

use futures_util::SinkExt;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{ModelPose, fk};
use ikarus_formats::bvh::{Bvh, BvhReadOptions};
use ikarus_formats::urdf::Urdf;
use ikarus_viewer::Catalog;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

mod common;
use common::{Socket, joint_index, next, next_error};

/// A server on 127.0.0.1 with a free port and an empty catalog, serving until the test's
/// runtime ends.
async fn start() -> String {
    common::start(Catalog::open(&[]).unwrap()).await
}

/// A client after the greeting (welcome, skeleton, pose), which it returns.
async fn connect(url: &str) -> (Socket, Vec<Value>) {
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut greeting = Vec::new();
    for _ in 0..3 {
        greeting.push(next(&mut socket).await);
    }
    (socket, greeting)
}

/// Sends `request` and returns the reply of type `until` (collecting the ones before it).
async fn ask(socket: &mut Socket, request: &Value, until: &str) -> Value {
    send_text(socket, request.to_string()).await;
    reply_of(socket, until).await
}

/// Resets the pose, then picks the solver `config` (JSON, as the page sends it).
async fn reset_with_solver(socket: &mut Socket, config: Value) {
    ask(socket, &json!({"type": "reset"}), "pose").await;
    ask(socket, &json!({"type": "solver", "config": config}), "pose").await;
}

/// Drags `joint` to `position` (model space) and returns the pose reply.
async fn drag(socket: &mut Socket, joint: &str, position: [f64; 3]) -> Value {
    ask(
        socket,
        &json!({"type": "drag", "joint": joint, "position": position}),
        "pose",
    )
    .await
}

/// Uploads `text` as the file `name` and returns the next reply (the error, for a bad file).
async fn load(socket: &mut Socket, name: &str, text: &str) -> Value {
    send_text(
        socket,
        json!({"type": "load", "name": name, "text": text}).to_string(),
    )
    .await;
    next(socket).await
}

async fn send_text(socket: &mut Socket, text: String) {
    socket.send(Message::Text(text.into())).await.unwrap();
}

async fn reply_of(socket: &mut Socket, until: &str) -> Value {
    loop {
        let reply = next(socket).await;
        if reply["type"] == until || reply["type"] == "error" {
            assert_eq!(reply["type"], until, "{reply}");
            return reply;
        }
    }
}

fn vec3(value: &Value) -> [f64; 3] {
    serde_json::from_value(value.clone()).unwrap()
}

/// The reply's report names `kind`, says converged, and its position error is the distance
/// (by the reply's own positions) from joint `index` to `target`, below 1e-4 m.
fn assert_converged_at(pose: &Value, kind: &str, index: usize, target: [f64; 3]) {
    let report = &pose["report"];
    assert_eq!(report["solver"], kind);
    assert_eq!(report["status"], "converged", "{kind}: {report}");
    let reached = distance(vec3(&pose["positions"][index]), target);
    assert!(
        reached < 1e-4,
        "{kind}: joint {index} is {reached} m from the target"
    );
    assert!((report["position_error"].as_f64().unwrap() - reached).abs() < 1e-9);
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Every bone keeps its rest length in the reply's positions (an FK check independent of the
/// server's report).
fn assert_bone_lengths(skeleton: &Value, pose: &Value) {
    for (j, joint) in skeleton["joints"].as_array().unwrap().iter().enumerate() {
        let Some(parent) = joint["parent"].as_u64() else {
            continue;
        };
        let rest = vec3(&joint["rest_translation"]);
        let length = distance(rest, [0.0; 3]);
        let p = vec3(&pose["positions"][j]);
        let q = vec3(&pose["positions"][parent as usize]);
        assert!(
            (distance(p, q) - length).abs() < 1e-9,
            "bone {}",
            joint["name"]
        );
    }
}

#[tokio::test]
async fn greeting_lists_solvers_and_draws_the_humanoid() {
    let url = start().await;
    let (_socket, greeting) = connect(&url).await;
    assert_eq!(greeting[0]["type"], "welcome");
    let kinds: Vec<&str> = greeting[0]["solvers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    for kind in ["none", "ccd", "two_bone", "limb7", "aim", "leg6"] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    let ccd = &greeting[0]["solvers"][kinds.iter().position(|k| *k == "ccd").unwrap()];
    assert_eq!(ccd["config"]["iteration"]["max_iterations"], 128);
    assert_eq!(greeting[1]["type"], "skeleton");
    assert_eq!(
        greeting[1]["joints"].as_array().unwrap().len(),
        builtin_humanoid().len()
    );
    let elbow = joint_index(&greeting[1], "leftLowerArm");
    assert_eq!(greeting[1]["joints"][elbow]["limit"]["kind"], "hinge");
    // The greeting's pose is the rest pose, by an FK of our own.
    let skeleton = builtin_humanoid();
    let mut model = ModelPose::new(&skeleton);
    fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut model);
    for (j, p) in model.positions().enumerate() {
        assert!(distance(vec3(&greeting[2]["positions"][j]), p.to_array()) < 1e-12);
    }
}

#[tokio::test]
async fn drag_solves_with_ccd_and_limb7_to_the_target() {
    let url = start().await;
    let (mut socket, greeting) = connect(&url).await;
    let hand = joint_index(&greeting[1], "leftHand");
    let target = [0.45, 1.15, 0.25];
    for (kind, config) in [
        ("ccd", json!({"kind": "ccd"})),
        (
            "limb7",
            json!({"kind": "limb7", "swivel": "middle_of_feasible"}),
        ),
    ] {
        reset_with_solver(&mut socket, config).await;
        let pose = drag(&mut socket, "leftHand", target).await;
        assert_converged_at(&pose, kind, hand, target);
        let report = &pose["report"];
        assert!(report["time_us"].as_f64().unwrap() > 0.0);
        assert_eq!(pose["effectors"][0]["joint"], "leftHand");
        assert_bone_lengths(&greeting[1], &pose);
        if kind == "limb7" {
            assert!(report["feasible_swivels"].is_array(), "{report}");
        }
    }
}

#[tokio::test]
async fn orientation_goals_pinned_effectors_and_the_trace() {
    let url = start().await;
    let (mut socket, greeting) = connect(&url).await;
    let hand = joint_index(&greeting[1], "leftHand");
    // An orientation goal (the rotate gizmo's drag): met by the analytic limb, and the reply's
    // model-space rotation of the hand is the goal.
    reset_with_solver(
        &mut socket,
        json!({"kind": "limb7", "swivel": "middle_of_feasible"}),
    )
    .await;
    // First the position alone; then the hand's own rotation turned 0.1 rad about its bone
    // axis (local +X) as the goal.
    let reached = drag(&mut socket, "leftHand", [0.5, 1.2, 0.2]).await;
    let q0: [f64; 4] = serde_json::from_value(reached["rotations"][hand].clone()).unwrap();
    let q0 = glam::DQuat::from_array(q0);
    let goal = (q0 * glam::DQuat::from_rotation_x(0.1)).to_array();
    let pose = ask(
        &mut socket,
        &json!({"type": "drag", "joint": "leftHand", "position": [0.5, 1.2, 0.2], "orientation": goal}),
        "pose",
    )
    .await;
    assert_eq!(pose["report"]["status"], "converged", "{}", pose["report"]);
    let q: [f64; 4] = serde_json::from_value(pose["rotations"][hand].clone()).unwrap();
    let dot: f64 = q.iter().zip(goal).map(|(a, b)| a * b).sum();
    assert!(dot.abs() > 1.0 - 1e-6, "hand rotation {q:?}, goal {goal:?}");
    assert_eq!(pose["effectors"][0]["orientation"], json!(goal));
    // Several pinned effectors: the right hand pinned where it is, the left dragged; CCD meets
    // both, and the report's residual is the larger of the two, by FK.
    reset_with_solver(&mut socket, json!({"kind": "ccd"})).await;
    let right = joint_index(&greeting[1], "rightHand");
    let pinned = ask(
        &mut socket,
        &json!({"type": "set_effector", "joint": "rightHand"}),
        "pose",
    )
    .await;
    let right_at = vec3(&pinned["positions"][right]);
    let target = [0.35, 1.05, 0.3];
    let both = drag(&mut socket, "leftHand", target).await;
    assert_eq!(both["effectors"].as_array().unwrap().len(), 2);
    assert_eq!(both["report"]["status"], "converged", "{}", both["report"]);
    let misses = [
        distance(vec3(&both["positions"][hand]), target),
        distance(vec3(&both["positions"][right]), right_at),
    ];
    assert!(misses[0] < 1e-4 && misses[1] < 1e-4, "{misses:?}");
    let largest = misses[0].max(misses[1]);
    assert!((both["report"]["position_error"].as_f64().unwrap() - largest).abs() < 1e-9);
    // The residual per iteration ends at the solve's own residual.
    ask(
        &mut socket,
        &json!({"type": "solver", "config": {"kind": "ccd"}}),
        "pose",
    )
    .await;
    ask(&mut socket, &json!({"type": "reset"}), "pose").await;
    let pose = drag(&mut socket, "leftHand", [0.3, 1.0, 0.3]).await;
    let trace = ask(&mut socket, &json!({"type": "trace"}), "trace").await;
    let errors = trace["position_errors"].as_array().unwrap();
    assert_eq!(
        errors.len() as u64,
        pose["report"]["iterations"].as_u64().unwrap().clamp(1, 64)
    );
    assert_eq!(errors.last().unwrap(), &pose["report"]["position_error"]);
}

#[tokio::test]
async fn bad_messages_get_errors_and_the_connection_keeps_serving() {
    let url = start().await;
    let (mut socket, _) = connect(&url).await;
    let bad = [
        "not json".to_owned(),
        json!({"type": "fly"}).to_string(),
        json!({"type": "drag", "joint": "tail", "position": [0, 1, 0]}).to_string(),
        r#"{"type":"drag","joint":"leftHand","position":[NaN,1,0]}"#.to_owned(),
        r#"{"type":"drag","joint":"leftHand","position":[1e999,1,0]}"#.to_owned(),
        json!({"type": "drag", "joint": "leftHand", "position": [0, 1, 0], "orientation": [0, 0, 0, 2]}).to_string(),
        json!({"type": "solver", "config": {"kind": "magic"}}).to_string(),
        json!({"type": "solver", "config": {"kind": "ccd", "iteration": {"max_iterations": 4_000_000_000_u64}}}).to_string(),
        json!({"type": "frame", "index": 3}).to_string(),
        json!({"type": "undo"}).to_string(),
        json!({"type": "generate", "duration": 1.0}).to_string(),
        json!({"type": "load", "source": "/etc/passwd"}).to_string(),
        json!({"type": "load", "name": "broken.bvh", "text": "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0\n"}).to_string(),
    ];
    for text in bad {
        send_text(&mut socket, text.clone()).await;
        let reply = next(&mut socket).await;
        assert_eq!(reply["type"], "error", "{text} -> {reply}");
        assert!(!reply["message"].as_str().unwrap().is_empty());
    }
    send_text(&mut socket, json!({"type": "load", "name": "broken.bvh", "text": "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0\n"}).to_string()).await;
    let reply = next_error(&mut socket).await;
    assert!(reply.starts_with("broken.bvh:5:"), "{reply}");
    // An upload over the limit: an error, and the same connection still solves.
    let oversized = "x".repeat(ikarus_viewer::MAX_UPLOAD_BYTES + 1);
    let reply = load(&mut socket, "big.bvh", &oversized).await;
    assert_eq!(reply["type"], "error");
    assert!(
        reply["message"].as_str().unwrap().contains("limit"),
        "{reply}"
    );
    let pose = drag(&mut socket, "leftHand", [0.45, 1.15, 0.25]).await;
    assert_eq!(pose["report"]["status"], "converged");
}

#[tokio::test]
async fn clients_have_their_own_state() {
    let url = start().await;
    let (mut a, greeting) = connect(&url).await;
    let (mut b, _) = connect(&url).await;
    let hand = joint_index(&greeting[1], "leftHand");
    // A base needs a joint-space solver (the full-body one, the humanoid's default, moves
    // the pelvis itself): example-based IK, whose path from the base runs through the root.
    ask(
        &mut a,
        &json!({"type": "solver", "config": {"kind": "example"}}),
        "pose",
    )
    .await;
    ask(
        &mut a,
        &json!({"type": "set_base", "joint": "rightFoot"}),
        "pose",
    )
    .await;
    let moved = ask(
        &mut a,
        &json!({"type": "drag", "joint": "leftHand", "position": [0.2, 0.9, 0.4]}),
        "pose",
    )
    .await;
    assert_eq!(moved["base"], "rightFoot");
    // The path from the right foot runs through the root: the foot stays, the hand arrives.
    let foot = joint_index(&greeting[1], "rightFoot");
    let stayed = distance(
        vec3(&moved["positions"][foot]),
        vec3(&greeting[2]["positions"][foot]),
    );
    assert!(stayed < 1e-9, "base moved {stayed} m");
    let hips = joint_index(&greeting[1], "hips");
    assert!(
        distance(
            vec3(&moved["positions"][hips]),
            vec3(&greeting[2]["positions"][hips])
        ) > 1e-3
    );
    let reached = distance(vec3(&moved["positions"][hand]), [0.2, 0.9, 0.4]);
    assert!((reached - moved["report"]["position_error"].as_f64().unwrap()).abs() < 1e-9);
    assert_eq!(
        moved["report"]["status"], "converged",
        "{}",
        moved["report"]
    );
    send_text(&mut a, "garbage".to_owned()).await;
    assert_eq!(next(&mut a).await["type"], "error");
    // B: nothing to undo, no base, and its hand still where the rest pose has it.
    send_text(&mut b, json!({"type": "undo"}).to_string()).await;
    assert_eq!(next(&mut b).await["type"], "error");
    let pinned = ask(
        &mut b,
        &json!({"type": "set_effector", "joint": "leftHand"}),
        "pose",
    )
    .await;
    assert_eq!(pinned["base"], Value::Null);
    // B runs the humanoid's default, the full-body solver, which pinned both feet.
    let effectors = pinned["effectors"].as_array().unwrap();
    let named: Vec<&str> = effectors
        .iter()
        .map(|e| e["joint"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["leftFoot", "rightFoot", "leftHand"]);
    assert_eq!(effectors[2]["position"], greeting[2]["positions"][hand]);
    let held = distance(
        vec3(&pinned["positions"][hand]),
        vec3(&greeting[2]["positions"][hand]),
    );
    assert!(held < 1e-9, "the hand moved {held} m");
    assert_eq!(pinned["report"]["solver"], "body");
    assert_eq!(pinned["report"]["status"], "converged");
    // A's state survived B's requests; undo brings back the pose before the drag.
    let undone = ask(&mut a, &json!({"type": "undo"}), "pose").await;
    assert_eq!(undone["positions"], greeting[2]["positions"]);
    let redone = ask(&mut a, &json!({"type": "redo"}), "pose").await;
    assert_eq!(redone["positions"], moved["positions"]);
}

#[tokio::test]
async fn motion_upload_keys_generate_and_export() {
    let Some(dir) = ikarus_testdata::require("bvh", "motion_upload_keys_generate_and_export")
    else {
        return;
    };
    let path = dir.join("pfnn_hierarchy_30fps_crlf.bvh");
    let text = std::fs::read_to_string(&path).unwrap();
    let source = Bvh::parse(text.as_bytes(), &BvhReadOptions::default()).unwrap();
    let url = start().await;
    let (mut socket, _) = connect(&url).await;
    let skeleton = ask(
        &mut socket,
        &json!({"type": "load", "name": "walk.bvh", "text": text}),
        "skeleton",
    )
    .await;
    reply_of(&mut socket, "pose").await;
    assert_eq!(
        skeleton["joints"].as_array().unwrap().len(),
        source.skeleton.len()
    );
    assert_eq!(
        skeleton["motion"]["frames"].as_u64().unwrap() as usize,
        source.frame_count
    );
    // Frame 5 by the server equals frame 5 by our own FK.
    let frame = ask(&mut socket, &json!({"type": "frame", "index": 5}), "pose").await;
    assert_eq!(frame["frame"], 5);
    let mut local = source.skeleton.rest_pose();
    assert!(source.frame_pose(5, &mut local));
    let mut model = ModelPose::new(&source.skeleton);
    fk::forward_kinematics(&source.skeleton, &local, &mut model);
    for (j, p) in model.positions().enumerate() {
        assert!(distance(vec3(&frame["positions"][j]), p.to_array()) < 1e-9);
    }
    for index in [0, 10, 20] {
        ask(
            &mut socket,
            &json!({"type": "frame", "index": index}),
            "pose",
        )
        .await;
        let keys = ask(&mut socket, &json!({"type": "capture_key"}), "keys").await;
        assert_eq!(keys["count"], index / 10 + 1);
    }
    let motion = ask(
        &mut socket,
        &json!({"type": "generate", "duration": 2.0, "fps": 30}),
        "motion",
    )
    .await;
    assert_eq!(motion["frames"], 61);
    // The generated motion passes through the middle key at t = 1 s (frame 30).
    let middle = ask(&mut socket, &json!({"type": "frame", "index": 30}), "pose").await;
    assert!(source.frame_pose(10, &mut local));
    fk::forward_kinematics(&source.skeleton, &local, &mut model);
    for (j, p) in model.positions().enumerate() {
        assert!(distance(vec3(&middle["positions"][j]), p.to_array()) < 1e-6);
    }
    let bvh = ask(&mut socket, &json!({"type": "export_bvh"}), "bvh").await;
    let back = Bvh::parse(
        bvh["text"].as_str().unwrap().as_bytes(),
        &BvhReadOptions::default(),
    )
    .unwrap();
    assert_eq!(back.frame_count, 61);
    assert_eq!(back.skeleton.len(), source.skeleton.len());
}

/// The panda arm uploaded as URDF: shown +Z up, its link8 dragged to a target with LM and with
/// CCD. The reply's rotations, turned back into local rotations and run through our own FK of
/// the robot parsed here, give the reply's positions; every joint is inside its limit.
#[tokio::test]
async fn urdf_upload_solves_with_lm_and_ccd() {
    let Some((robot, mut socket, info, _)) =
        upload_urdf("urdf_upload_solves_with_lm_and_ccd", "panda.urdf").await
    else {
        return;
    };
    assert_eq!(info["format"], "urdf");
    assert_eq!(info["up"], json!([0.0, 0.0, 1.0]));
    assert_eq!(
        info["joints"].as_array().unwrap().len(),
        robot.skeleton.len()
    );
    assert_eq!(robot.skeleton.len(), 13);
    let tip = joint_index(&info, "panda_link8");
    let target = [0.45, 0.15, 0.55];
    for kind in ["lm", "ccd"] {
        reset_with_solver(&mut socket, json!({"kind": kind})).await;
        ask(
            &mut socket,
            &json!({"type": "set_effector", "joint": "panda_link8"}),
            "pose",
        )
        .await;
        let pose = drag(&mut socket, "panda_link8", target).await;
        assert_converged_at(&pose, kind, tip, target);
        assert_bone_lengths(&info, &pose);
        assert_fk_and_limits(&robot, &pose, kind);
    }
}

/// A fresh session with the shared URDF `file` uploaded: the robot as parsed here, the socket,
/// the `skeleton` reply and the first `pose` reply; `None` without the shared data.
async fn upload_urdf(test: &str, file: &str) -> Option<(Urdf, Socket, Value, Value)> {
    let dir = ikarus_testdata::require("urdf", test)?;
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let robot = Urdf::parse(&text).unwrap();
    let url = start().await;
    let (mut socket, _) = connect(&url).await;
    let info = ask(
        &mut socket,
        &json!({"type": "load", "name": file, "text": text}),
        "skeleton",
    )
    .await;
    let pose = reply_of(&mut socket, "pose").await;
    Some((robot, socket, info, pose))
}

/// Local rotations from the reply's model rotations, our FK of them, and the robot's limits.
fn assert_fk_and_limits(robot: &Urdf, pose: &Value, kind: &str) {
    let skeleton = &robot.skeleton;
    let rotation = |j: usize| {
        let q: [f64; 4] = serde_json::from_value(pose["rotations"][j].clone()).unwrap();
        glam::DQuat::from_array(q)
    };
    let mut local = skeleton.rest_pose();
    for j in skeleton.joints() {
        let parent = skeleton
            .parent(j)
            .map_or(glam::DQuat::IDENTITY, |p| rotation(p.index()));
        local.transforms_mut()[j.index()].rotation = parent.conjugate() * rotation(j.index());
    }
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &local, &mut model);
    for (j, p) in model.positions().enumerate() {
        let miss = distance(vec3(&pose["positions"][j]), p.to_array());
        assert!(miss < 1e-9, "{kind}: joint {j} is {miss} m off our FK");
    }
    if let Some((joint, by)) = skeleton.limit_violation(&local) {
        assert!(
            by < 1e-9,
            "{kind}: {} outside its limit by {by} rad",
            skeleton.name(joint)
        );
    }
}

#[tokio::test]
async fn malformed_urdf_names_the_line() {
    let url = start().await;
    let (mut socket, _) = connect(&url).await;
    let text = "<robot name=\"r\">\n  <link name=\"a\"/>\n  <joint name=\"j\" type=\"revolute\">\n    <parent link=\"a\"/>\n    <child link=\"nowhere\"/>\n  </joint>\n</robot>\n";
    let reply = load(&mut socket, "bad.urdf", text).await;
    assert_eq!(reply["type"], "error");
    let message = reply["message"].as_str().unwrap();
    assert!(message.starts_with("bad.urdf:"), "{message}");
    let line: u32 = message.split(':').nth(1).unwrap().parse().unwrap();
    assert!((3..=5).contains(&line), "{message}");
    // Not XML at all: the line of the syntax error.
    let reply = load(
        &mut socket,
        "bad.urdf",
        "<robot name=\"r\">\n<link name=\"a\">\n</robot>",
    )
    .await;
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .starts_with("bad.urdf:3:"),
        "{reply}"
    );
    // The humanoid is still loaded and solves.
    let pose = drag(&mut socket, "leftHand", [0.45, 1.15, 0.25]).await;
    assert_eq!(pose["report"]["status"], "converged");
}

/// A KUKA iiwa uploaded as URDF runs `auto`'s S-R-S closed form on 6-D drags, and the swivel
/// slider's value (`nearest_feasible`) is the swivel the reply reports, inside the feasible
/// intervals the reply carries; two slider values give two elbow positions, both on target.
#[tokio::test]
async fn urdf_arm_runs_its_closed_form_with_the_swivel_slider() {
    let Some((robot, mut socket, info, rest)) =
        upload_urdf("urdf_arm_closed_form_swivel", "kukaIiwa7.urdf").await
    else {
        return;
    };
    let tip = joint_index(&info, "iiwa_link_7");
    let elbow = joint_index(&info, "iiwa_link_4");
    // A reachable 6-D goal: the rest flange moved 20 cm sideways and 25 cm down, same turn.
    let start = vec3(&rest["positions"][tip]);
    let target = [start[0] + 0.2, start[1] + 0.1, start[2] - 0.25];
    let orientation = rest["rotations"][tip].clone();
    let mut elbows = Vec::new();
    for wish in [0.6, -0.6] {
        let config = json!({"kind": "auto", "swivel": {"nearest_feasible": wish}});
        reset_with_solver(&mut socket, config).await;
        let pose = ask(
            &mut socket,
            &json!({"type": "drag", "joint": "iiwa_link_7", "position": target, "orientation": orientation}),
            "pose",
        )
        .await;
        let report = &pose["report"];
        assert_eq!(report["ran"], "srs_arm", "{report}");
        assert_eq!(report["status"], "converged", "{report}");
        assert!(distance(vec3(&pose["positions"][tip]), target) < 1e-6);
        let swivel = report["swivel"].as_f64().unwrap();
        let intervals: Vec<[f64; 2]> =
            serde_json::from_value(report["feasible_swivels"].clone()).unwrap();
        assert!(!intervals.is_empty());
        let inside = |s: f64| {
            intervals.iter().any(|&[a, b]| {
                let tau = std::f64::consts::TAU;
                b - a >= tau - 1e-9 || (s - a).rem_euclid(tau) <= (b - a).rem_euclid(tau) + 1e-9
            })
        };
        assert!(inside(swivel), "swivel {swivel} outside {intervals:?}");
        if inside(wish) {
            assert!((swivel - wish).abs() < 1e-9, "wished {wish}, got {swivel}");
        }
        assert_fk_and_limits(&robot, &pose, "auto");
        elbows.push(vec3(&pose["positions"][elbow]));
    }
    assert!(
        distance(elbows[0], elbows[1]) > 0.05,
        "the slider moves the elbow"
    );
}
