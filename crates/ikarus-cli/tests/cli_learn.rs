//! `ikarus learn` and `ikarus solve` with `{"kind": "example", "model": FILE}`: a model learned
//! from the shared CMU walk onto the built-in humanoid, used from a task file beside it; goals
//! checked against `ikarus fk` of the output; bad model files reported with file and line.

mod common;

use common::{data_file, fails, ok, temp_dir};
use serde_json::Value;

#[test]
fn a_learned_model_solves_a_task_file() {
    let Some(walk) = data_file("bvh", "cli_learn", "cmu_02_01_walk_cgspeed_crlf.bvh") else {
        return;
    };
    let dir = temp_dir("learn");
    let model = dir.join("walk.json");
    let printed = ok(&[
        "learn",
        &walk,
        "--skeleton",
        "builtin:humanoid",
        "--dims",
        "6",
        "--every",
        "2",
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(
        printed.contains("172 frames, 25 joints, 6 dims"),
        "{printed}"
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(file["format"], "ikarus-posture-model");
    assert_eq!(file["version"], 1);
    assert_eq!(file["variances"].as_array().unwrap().len(), 6);
    assert_eq!(file["basis"].as_array().unwrap().len(), 75);

    // A task beside the model names it relatively.
    let task = dir.join("task.json");
    std::fs::write(
        &task,
        r#"{"skeleton": "builtin:humanoid", "solver": {"kind": "example", "model": "walk.json"},
        "effectors": [{"joint": "leftHand", "position": [0.35, 0.95, 0.12]},
                      {"joint": "rightFoot", "position": [-0.09, 0.1, 0.1]}]}"#,
    )
    .unwrap();
    let out: Value = serde_json::from_str(&ok(&["solve", task.to_str().unwrap()])).unwrap();
    assert_eq!(out["report"]["solver"], "example");
    assert_eq!(out["report"]["status"], "converged", "{}", out["report"]);
    let position = |name: &str| -> Vec<f64> {
        let joint = out["joints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["name"] == name)
            .unwrap();
        joint["position"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    for (name, goal) in [
        ("leftHand", [0.35, 0.95, 0.12]),
        ("rightFoot", [-0.09, 0.1, 0.1]),
    ] {
        let p = position(name);
        let d = (0..3).map(|i| (p[i] - goal[i]).powi(2)).sum::<f64>().sqrt();
        assert!(d <= 1e-4, "{name} is {d} m from its goal");
    }
    // The built-in model needs no file.
    std::fs::write(
        &task,
        r#"{"skeleton": "builtin:humanoid", "solver": {"kind": "example"},
        "effectors": [{"joint": "leftHand", "position": [0.35, 0.95, 0.12]}]}"#,
    )
    .unwrap();
    let out: Value = serde_json::from_str(&ok(&["solve", task.to_str().unwrap()])).unwrap();
    assert_eq!(out["report"]["status"], "converged");
}

#[test]
fn bad_models_and_motions_are_reported() {
    let dir = temp_dir("learn-bad");
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        "{\n  \"format\": \"ikarus-posture-model\",\n  \"version\": 1,\n  oops\n}",
    )
    .unwrap();
    let task = dir.join("task.json");
    std::fs::write(
        &task,
        r#"{"skeleton": "builtin:humanoid", "solver": {"kind": "example", "model": "broken.json"},
        "effectors": [{"joint": "leftHand", "position": [0.35, 0.95, 0.12]}]}"#,
    )
    .unwrap();
    let message = fails(&["solve", task.to_str().unwrap()]);
    assert!(
        message.contains("broken.json") && message.contains("line 4"),
        "{message}"
    );
    let missing = fails(&[
        "learn",
        "builtin:humanoid",
        "--out",
        dir.join("m.json").to_str().unwrap(),
    ]);
    assert!(missing.contains("no motion frames"), "{missing}");
}
