//! The full-body solver and grounding over the protocol: the built-in humanoid starts with
//! the body solver and its feet pinned, a hand dragged past its reach draws the pelvis while
//! the feet hold (checked by the server's own poses: distances between reported joint
//! positions), an elbow effector is its arm's bend goal; a walk grounded on stairs stands on
//! them (each ankle above the terrain the server draws, sampled here bilinearly as the
//! library does) and goes back to its own floor bit for bit.

use glam::DVec3;
use ikarus_viewer::Catalog;
use serde_json::{Value, json};

mod common;
use common::{
    connect, connect_builtin, joint_index, load_text, next, of, refused, send, until, vec3,
};

/// Joint `j`'s position in a pose reply.
fn at(pose: &Value, j: usize) -> DVec3 {
    vec3(&pose["positions"][j])
}

#[tokio::test]
async fn a_hand_past_reach_draws_the_body_over_pinned_feet() {
    let (mut socket, greeting) = connect(Catalog::open(&[]).unwrap()).await;
    let skeleton = &greeting[1];
    assert_eq!(skeleton["solver"], "body");
    let start = &greeting[2];
    let named: Vec<&str> = start["effectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["joint"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["leftFoot", "rightFoot"]);
    let j = |name| joint_index(skeleton, name);
    let (shoulder, elbow, hand) = (j("leftUpperArm"), j("leftLowerArm"), j("leftHand"));
    let reach =
        at(start, shoulder).distance(at(start, elbow)) + at(start, elbow).distance(at(start, hand));
    // 30 cm past the arm's reach, forward and out from the shoulder.
    let out = (DVec3::new(0.6, -0.2, 0.8)).normalize();
    let goal = at(start, shoulder) + out * (reach + 0.3);
    // Dragged there in ten steps, each solve from the last one's pose, as the page drags.
    let mut pose = Value::Null;
    for k in 1..=10 {
        let step = at(start, hand).lerp(goal, f64::from(k) / 10.0);
        send(
            &mut socket,
            &json!({"type": "drag", "joint": "leftHand", "position": step.to_array()}),
        )
        .await;
        pose = until(&mut socket, "pose").await.pop().unwrap();
    }
    assert_eq!(pose["report"]["solver"], "body");
    let hips_moved = at(&pose, j("hips")).distance(at(start, j("hips")));
    assert!(hips_moved > 0.05, "the pelvis moved {hips_moved} m");
    for foot in ["leftFoot", "rightFoot"] {
        let held = at(&pose, j(foot)).distance(at(start, j(foot)));
        assert!(held < 1e-3, "{foot} moved {held} m");
    }
    let missed = at(&pose, hand).distance(goal);
    assert!(
        missed < 0.1,
        "the hand is {missed} m from its goal, 0.3 m past reach"
    );
    let error = pose["report"]["position_error"].as_f64().unwrap();
    assert!(
        (error - missed).abs() < 1e-9 || error >= missed - 1e-9,
        "{}",
        pose["report"]
    );

    // An elbow effector is the arm's bend goal: with the hand at a reachable point (the arm
    // bent), the elbow turns towards it, the hand stays.
    send(&mut socket, &json!({"type": "reset"})).await;
    until(&mut socket, "pose").await;
    let near = at(start, shoulder) + DVec3::new(0.15, -0.25, 0.3);
    send(
        &mut socket,
        &json!({"type": "drag", "joint": "leftHand", "position": near.to_array()}),
    )
    .await;
    let bent = until(&mut socket, "pose").await.pop().unwrap();
    assert_eq!(bent["report"]["status"], "converged", "{}", bent["report"]);
    let bend_goal = at(&bent, elbow) + DVec3::new(0.0, -0.3, 0.0);
    let before = at(&bent, elbow).distance(bend_goal);
    send(
        &mut socket,
        &json!({"type": "set_effector", "joint": "leftLowerArm", "position": bend_goal.to_array()}),
    )
    .await;
    let turned = until(&mut socket, "pose").await.pop().unwrap();
    assert_eq!(
        turned["report"]["status"], "converged",
        "{}",
        turned["report"]
    );
    let after = at(&turned, elbow).distance(bend_goal);
    assert!(
        after < before - 0.05,
        "elbow to its goal: {before} m, then {after} m"
    );
    assert!(at(&turned, hand).distance(near) < 1e-4);
}

/// The height of a `terrain` reply's grid under (x, z): bilinear, the nearest edge outside.
fn height(terrain: &Value, x: f64, z: f64) -> f64 {
    let origin = vec2(&terrain["origin"]);
    let cell = terrain["cell"].as_f64().unwrap();
    let heights: Vec<Vec<f64>> = serde_json::from_value(terrain["heights"].clone()).unwrap();
    let (rows, columns) = (heights.len(), heights[0].len());
    #[allow(clippy::cast_precision_loss)]
    let clamp = |v: f64, n: usize| v.clamp(0.0, (n - 1) as f64);
    let (u, v) = (
        clamp((x - origin[0]) / cell, columns),
        clamp((z - origin[1]) / cell, rows),
    );
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (j, i) = (
        (u.floor() as usize).min(columns.saturating_sub(2)),
        (v.floor() as usize).min(rows.saturating_sub(2)),
    );
    #[allow(clippy::cast_precision_loss)]
    let (fu, fv) = (u - j as f64, v - i as f64);
    let h = |i: usize, j: usize| heights[i.min(rows - 1)][j.min(columns - 1)];
    (h(i, j) * (1.0 - fu) + h(i, j + 1) * fu) * (1.0 - fv)
        + (h(i + 1, j) * (1.0 - fu) + h(i + 1, j + 1) * fu) * fv
}

fn vec2(value: &Value) -> [f64; 2] {
    serde_json::from_value(value.clone()).unwrap()
}

#[tokio::test]
async fn a_walk_stands_on_stairs_and_goes_back_to_its_floor() {
    let Some(text) = common::walk_text("viewer ground") else {
        return;
    };
    let mut socket = connect_builtin().await;
    let loaded = load_text(&mut socket, "walk.bvh", &text).await;
    let skeleton = of(&loaded, "skeleton").clone();
    let frames = skeleton["motion"]["frames"].as_u64().unwrap();
    let flat = of(&loaded, "pose").clone();

    send(&mut socket, &json!({"type": "ground", "preset": "stairs"})).await;
    let replies = until(&mut socket, "pose").await;
    let grounding = &of(&replies, "motion")["grounding"];
    assert_eq!(grounding["unreached"], 0, "{grounding}");
    assert!(grounding["contacts"].as_u64().unwrap() >= 2, "{grounding}");
    // The stairs rise ahead: the pelvis climbs.
    assert!(
        grounding["pelvis_range"][1].as_f64().unwrap() > 0.3,
        "{grounding}"
    );
    let terrain = of(&replies, "terrain")["terrain"].clone();
    assert!(terrain.is_object());
    // The walk's ankles, by their humanoid names.
    let humanoid = skeleton["humanoid"].as_array().unwrap();
    let ankles = ["leftFoot", "rightFoot"].map(|n| humanoid.iter().position(|h| h == n).unwrap());
    let mut lowest = f64::INFINITY;
    for frame in (0..frames).step_by(7) {
        send(&mut socket, &json!({"type": "frame", "index": frame})).await;
        let pose = next(&mut socket).await;
        assert_eq!(pose["type"], "pose", "{pose}");
        for &a in &ankles {
            let p = at(&pose, a);
            lowest = lowest.min(p.y - height(&terrain, p.x, p.z));
        }
    }
    // An ankle sits a few centimetres above its sole; never under the stairs.
    assert!(lowest > 0.0, "an ankle {lowest} m above the stairs");

    // Back on its own floor: the loaded motion's first frame, to the bit.
    send(&mut socket, &json!({"type": "ground"})).await;
    let replies = until(&mut socket, "pose").await;
    assert!(of(&replies, "motion").get("grounding").is_none());
    assert!(of(&replies, "terrain")["terrain"].is_null());
    assert_eq!(of(&replies, "pose")["positions"], flat["positions"]);

    // A GLB's triangles as the ground (the Fox's mesh, uploaded as the page does): the
    // motion is grounded on it and the mesh is drawn as heights sampled under it.
    if let Some(gltf) = ikarus_testdata::require("gltf", "viewer ground") {
        let fox = common::base64_file(&gltf.join("Fox.glb"));
        send(
            &mut socket,
            &json!({"type": "ground", "name": "Fox.glb", "base64": fox}),
        )
        .await;
        let replies = until(&mut socket, "pose").await;
        assert!(of(&replies, "motion")["grounding"].is_object());
        let drawn = &of(&replies, "terrain")["terrain"];
        assert!(drawn["heights"].as_array().unwrap().len() > 10, "{drawn}");
    }

    // Bad requests are refused naming the cause; the state stays.
    let error = refused(
        &mut socket,
        &json!({"type": "ground", "name": "t.json", "text": "{\"plane\": {\"point\": [0, 0]}}"}),
    )
    .await;
    assert!(error.starts_with("t.json: line 1"), "{error}");
    send(&mut socket, &json!({"type": "ground", "preset": "cliffs"})).await;
    assert_eq!(next(&mut socket).await["type"], "error");
}
