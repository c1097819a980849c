//! The viewer's drag keeps example-based IK's gain: on the built-in humanoid playing a real
//! walk (retargeted through the protocol), a user shows a frame and drags both hands and both
//! feet, one after the other, to where they are 1/15 s later (relative to the hips, which the
//! drag does not move). Each drag solves from the pose on screen, as in the viewer. The
//! posture the drags end on is compared, joint by joint and relative to the hips, with the
//! posture of that later frame, for the example-based solver and for the plain solvers on the
//! same drags: as the viewer starts each solver, with the four limbs pinned first, and with
//! every limb free until dragged. A second test: pinned feet follow the frame on screen.

use glam::DVec3;
use ikarus_viewer::Catalog;
use serde_json::{Value, json};

mod common;
use common::{Socket, connect, joint_index, of, retarget_text, send, until, vec3};

/// The joints' positions of a `pose` reply.
fn positions(pose: &Value) -> Vec<DVec3> {
    pose["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(vec3)
        .collect()
}

/// Sends `request` and returns the `pose` reply it ends with.
async fn pose_after(socket: &mut Socket, request: &Value) -> Value {
    send(socket, request).await;
    until(socket, "pose").await.pop().unwrap()
}

/// The built-in humanoid playing the shared CMU walk (retargeted through the protocol): the
/// socket, the skeleton reply and the motion's frame count; `None` without the shared data.
async fn walk_on_the_humanoid() -> Option<(Socket, Value, usize)> {
    let walk = ikarus_testdata::require_file("bvh", "cmu_02_01_walk_cgspeed_crlf.bvh", "drag")?;
    let (mut socket, greeting) = connect(Catalog::open(&[]).unwrap()).await;
    let skeleton = of(&greeting, "skeleton").clone();
    let replies = retarget_text(&mut socket, "walk.bvh", &walk).await;
    let frames = of(&replies, "motion")["frames"].as_u64().unwrap() as usize;
    Some((socket, skeleton, frames))
}

/// What is pinned before the drags.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Start {
    /// As the viewer starts each solver (the example-based solver pins the feet, the plain
    /// solvers nothing).
    AsTheViewerDoes,
    /// Every dragged limb pinned where it is first (`set_effector` without a position).
    Pinned,
    /// Nothing: pinned feet released first (each limb free until dragged).
    Free,
}

/// Shows frame `from`, pins or frees the limbs as `start` says, drags `dragged` to their
/// places in frame `to` (relative to the hips) one after the other, and returns the mean
/// distance over all joints between the final posture and frame `to`'s, both relative to
/// their hips, and the last drag's report.
async fn drag_towards(
    socket: &mut Socket,
    (from, to): (usize, usize),
    (dragged, start_with): (&[(&str, usize)], Start),
    hips: usize,
) -> (f64, Value) {
    pose_after(socket, &json!({"type": "reset"})).await;
    let truth = positions(&pose_after(socket, &json!({"type": "frame", "index": to})).await);
    let start = positions(&pose_after(socket, &json!({"type": "frame", "index": from})).await);
    for &(name, _) in dragged {
        match start_with {
            Start::Pinned => {
                pose_after(socket, &json!({"type": "set_effector", "joint": name})).await;
            }
            Start::Free if name.ends_with("Foot") => {
                pose_after(socket, &json!({"type": "remove_effector", "joint": name})).await;
            }
            _ => {}
        }
    }
    let mut last = Value::Null;
    for &(name, joint) in dragged {
        let goal = truth[joint] - truth[hips] + start[hips];
        last = pose_after(
            socket,
            &json!({"type": "drag", "joint": name, "position": goal.to_array()}),
        )
        .await;
    }
    let solved = positions(&last);
    let error = solved
        .iter()
        .zip(&truth)
        .map(|(p, t)| ((*p - solved[hips]) - (*t - truth[hips])).length())
        .sum::<f64>()
        / solved.len() as f64;
    (error, last["report"].clone())
}

#[tokio::test]
async fn dragging_hands_and_feet_from_the_frame_on_screen_keeps_the_learned_gain() {
    let Some((mut socket, skeleton, frames)) = walk_on_the_humanoid().await else {
        return;
    };
    let skeleton = &skeleton;
    let hips = joint_index(skeleton, "hips");
    let dragged: Vec<(&str, usize)> = ["leftHand", "rightHand", "leftFoot", "rightFoot"]
        .into_iter()
        .map(|name| (name, joint_index(skeleton, name)))
        .collect();
    // Frame pairs 1/15 s apart (the walk is at 120 fps) over the clip's middle, off the
    // every-fourth frames the shipped model learned from.
    let pairs: Vec<(usize, usize)> = (0..12)
        .map(|i| frames / 4 + i * frames / 24 + 1)
        .map(|k| (k, k + 8))
        .collect();
    // Measured ratios to the best plain solver: as the viewer does 0.53, pinned 0.53, free
    // 0.89. Free drags fall short of the aim (0.7): a limb not dragged yet moves with the
    // learned posture while another is dragged, which is why the viewer pins the feet.
    for (start_with, bound) in [
        (Start::AsTheViewerDoes, 0.7),
        (Start::Pinned, 0.7),
        (Start::Free, 0.95),
    ] {
        let mut means = Vec::new();
        for (label, config) in [
            ("example", json!({"kind": "example"})),
            ("ccd", json!({"kind": "ccd"})),
            (
                "ccd length-damped",
                json!({"kind": "ccd", "damping": "length"}),
            ),
            ("jacobian dls", json!({"kind": "jacobian"})),
            ("lm", json!({"kind": "lm"})),
        ] {
            pose_after(&mut socket, &json!({"type": "solver", "config": config})).await;
            let mut total = 0.0;
            let mut reached = 0;
            for &pair in &pairs {
                let (error, report) =
                    drag_towards(&mut socket, pair, (&dragged, start_with), hips).await;
                total += error;
                reached += usize::from(report["status"] == "converged");
            }
            let mean = total / pairs.len() as f64;
            println!(
                "{start_with:?}, {label}: mean joint error {:.1} mm, converged {reached}/{}",
                mean * 1e3,
                pairs.len()
            );
            if label == "example" {
                assert_eq!(reached, pairs.len(), "every drag reaches its goal");
            }
            means.push((label, mean));
        }
        let example = means[0].1;
        let (best_name, best) = means[1..]
            .iter()
            .copied()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        println!(
            "{start_with:?}: example {:.1} mm against {best_name} {:.1} mm, ratio {:.2}",
            example * 1e3,
            best * 1e3,
            example / best
        );
        assert!(
            example <= bound * best,
            "{start_with:?}: {example} vs {best_name} {best}"
        );
    }
}

/// The feet a solver pins stand where the frame on screen has them: a hand dragged after
/// showing a frame leaves them there (before, they were pinned where the rest pose had them
/// and the first drag pulled them back).
#[tokio::test]
async fn pinned_feet_follow_the_frame_on_screen() {
    let Some((mut socket, skeleton, _)) = walk_on_the_humanoid().await else {
        return;
    };
    let [hand, left, right] =
        ["leftHand", "leftFoot", "rightFoot"].map(|name| joint_index(&skeleton, name));
    for config in [json!({"kind": "body"}), json!({"kind": "example"})] {
        pose_after(&mut socket, &json!({"type": "solver", "config": config})).await;
        pose_after(&mut socket, &json!({"type": "reset"})).await;
        let shown =
            positions(&pose_after(&mut socket, &json!({"type": "frame", "index": 300})).await);
        let goal = shown[hand] + DVec3::new(0.0, 0.05, 0.05);
        let moved = pose_after(
            &mut socket,
            &json!({"type": "drag", "joint": "leftHand", "position": goal.to_array()}),
        )
        .await;
        let after = positions(&moved);
        assert!(
            after[hand].distance(goal) < 1e-3,
            "{config}: {}",
            moved["report"]
        );
        for foot in [left, right] {
            let slid = after[foot].distance(shown[foot]);
            assert!(slid < 1e-3, "{config}: a pinned foot moved {slid} m");
        }
    }
}
