//! `track` over the protocol: the built-in humanoid posed from trackers made from a walk
//! retargeted onto it (the truth drawn beside, the trackers marked, the body bones' distance
//! from the truth reported), a recording file played onto it (the server's poses checked by
//! FK against the recording's trackers), and bad requests refused naming the cause.

use ikarus_anim::retarget::Character;
use ikarus_anim::track::{self, Points};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use serde_json::json;

mod common;
use common::{connect_builtin, next, of, refused, send, until, vec3};

#[tokio::test]
async fn a_walk_and_a_recording_pose_the_humanoid() {
    let Some(walk) = common::walk("viewer track") else {
        return;
    };
    let mut socket = connect_builtin().await;

    // Trackers from the walk's own bones, 4 points.
    let text = std::fs::read_to_string(&walk).unwrap();
    send(
        &mut socket,
        &json!({"type": "track", "name": "walk.bvh", "text": text, "points": 4}),
    )
    .await;
    let replies = until(&mut socket, "pose").await;
    let motion = of(&replies, "motion");
    let tracking = &motion["tracking"];
    assert_eq!(tracking["points"], 4);
    assert_eq!(tracking["held_frames"], 0);
    let mpjpe = tracking["mpjpe"].as_f64().unwrap();
    // Measured 6.9 cm (the library's test: 4-point Bandai walk → built-in humanoid).
    assert!(mpjpe > 0.0 && mpjpe < 0.085, "{tracking}");
    let pose = of(&replies, "pose");
    let skeleton = builtin_humanoid();
    assert_eq!(
        pose["overlay"]["source"].as_array().unwrap().len(),
        skeleton.len()
    );
    assert_eq!(pose["overlay"]["contacts"].as_array().unwrap().len(), 4);

    // A recording: the walk's own trackers (6 points) as JSON, played onto the humanoid.
    let map = HumanoidMap::recognise(&skeleton);
    let document = ikarus_formats::open(walk.to_str().unwrap(), 0.01).unwrap();
    let source_map = HumanoidMap::recognise(&document.skeleton);
    let source = Character {
        skeleton: &document.skeleton,
        map: &source_map,
    };
    let trackers = track::derive_trackers(
        source,
        document.motion.as_ref().unwrap(),
        Points::Six.bones(),
    )
    .unwrap();
    let recording = ikarus_formats::trackers::to_json(&trackers);
    send(
        &mut socket,
        &json!({"type": "track", "name": "walk.json", "text": recording}),
    )
    .await;
    let replies = until(&mut socket, "pose").await;
    let motion = of(&replies, "motion");
    assert_eq!(motion["frames"], trackers.len());
    assert!(motion["tracking"]["mpjpe"].is_null());
    assert_eq!(motion["tracking"]["points"], 6);
    // Frame 5 by the server's own positions: the head where its tracker says, to the
    // calibration's scale (the Bandai performer is not the built-in humanoid's size).
    send(&mut socket, &json!({"type": "frame", "index": 5})).await;
    let pose = until(&mut socket, "pose").await.pop().unwrap();
    let markers = pose["overlay"]["contacts"].as_array().unwrap();
    assert_eq!(markers.len(), 6);
    assert_eq!(pose["overlay"]["source"].as_array().unwrap().len(), 0);
    let head = map.joint(HumanoidBone::Head).unwrap().index();
    let head_at = vec3(&pose["positions"][head]);
    let nearest = markers
        .iter()
        .map(|m| vec3(m).distance(head_at))
        .fold(f64::INFINITY, f64::min);
    let scale = motion["tracking"]["scale"].as_f64().unwrap();
    assert!(scale > 0.5 && scale < 2.0, "{scale}");
    // The head's marker is the raw tracker; the head is on the scaled one: within the scale's
    // stretch of the head's height.
    assert!(
        nearest < (1.0 - scale).abs() * 2.0 + 0.01,
        "head {nearest} m from its marker"
    );

    // Bad requests.
    let error = refused(&mut socket, &json!({"type": "track", "name": "walk.json", "text": "{\"fps\": 60,\n \"trackers\": {\"head\": [[0, 1]]}}"})).await;
    assert!(error.contains("walk.json: line 2"), "{error}");
    send(
        &mut socket,
        &json!({"type": "track", "name": "walk.json", "text": recording, "points": 5}),
    )
    .await;
    let error = next(&mut socket).await;
    assert!(
        error["message"].as_str().unwrap().contains("3, 4 or 6"),
        "{error}"
    );
}
