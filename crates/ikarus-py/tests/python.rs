//! The Python package's tests, run from `cargo test --workspace`.
//!
//! 1. Computes reference results with the Rust crates directly (batch solves of TRAC-IK
//!    protocol targets, chain FK, a BVH's FK and its BVH text, IK tasks on the built-in
//!    humanoid, a keypoint clip, posture models, an example-based solve, retargets and a VMD,
//!    a VMD played on its model with IK, conversions and an animation added into a VRM)
//!    and writes them as JSON (shortest round-trip floats, so Python
//!    reads the same bits).
//! 2. Builds the package with maturin into the Python environment (`IKARUS_PYTHON`, default
//!    `target/py-venv/bin/python`, which `.ci/run` creates from `requirements-test.txt`), in the
//!    workspace's own target directory.
//! 3. Runs pytest on `crates/ikarus-py/tests`, which compares every call with the references
//!    (bit for bit where the same Rust code runs).
//!
//! Without that Python environment the test says `SKIPPED`; in CI (`CI` set) it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::{DQuat, DVec3};
use ikarus_bench::trac_ik::Robot;
use ikarus_core::{ModelPose, fk};
use ikarus_formats::bvh::Bvh;
use ikarus_solve::threaded::{BatchTarget, solve_threaded};
use ikarus_solve::{Effector, Goal, IkTask, SolverConfig, Tolerance};
use serde_json::{Value, json};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// The Python interpreter of the test environment, or `None` (SKIPPED; a panic in CI).
fn python() -> Option<PathBuf> {
    let python = std::env::var_os("IKARUS_PYTHON")
        .map_or_else(|| target_dir().join("py-venv/bin/python"), PathBuf::from);
    let ready = Command::new(&python)
        .args(["-c", "import maturin, numpy, pytest, dask.distributed, bvh"])
        .status()
        .is_ok_and(|s| s.success());
    if ready {
        return Some(python);
    }
    let message = format!(
        "python package tests: no Python with maturin, numpy, pytest, dask and bvh at {} (set \
         IKARUS_PYTHON, or: python3 -m venv target/py-venv && target/py-venv/bin/pip install \
         -r crates/ikarus-py/requirements-test.txt)",
        python.display()
    );
    assert!(!in_ci(), "{message}; CI requires it");
    eprintln!("SKIPPED {message}");
    None
}

fn batch_json(results: &[ikarus_solve::threaded::BatchResult]) -> Value {
    serde_json::to_value(results).expect("results serialize")
}

/// `solve_threaded` on each target alone: the package's contract (a row's result does not depend
/// on the rows before it), through the same Rust call.
fn each_alone(
    robot: &Robot,
    targets: &[BatchTarget],
    config: &SolverConfig,
    tolerance: Tolerance,
) -> Vec<ikarus_solve::threaded::BatchResult> {
    targets
        .iter()
        .flat_map(|t| {
            solve_threaded(
                robot.skeleton(),
                &robot.chain,
                std::slice::from_ref(t),
                config,
                tolerance,
                1,
            )
        })
        .collect()
}

/// TRAC-IK protocol targets on the KUKA iiwa 7 and LM's results on them, three ways.
fn robot_reference() -> Option<Value> {
    let robot = Robot::load("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee")?;
    let samples = robot.samples(200, 42);
    let config = SolverConfig::Lm(ikarus_solve::lm::LmConfig::default());
    let tolerance = Tolerance {
        position: 1e-5,
        rotation: 1e-5,
    };
    let targets: Vec<BatchTarget> = samples.iter().map(|(_, t)| t.clone()).collect();
    let full = each_alone(&robot, &targets, &config, tolerance);
    // The package splits a batch into chunks at will: that is only sound because a run of
    // many targets in one workspace gives each the result it gets alone.
    let together = solve_threaded(
        robot.skeleton(),
        &robot.chain,
        &targets,
        &config,
        tolerance,
        1,
    );
    for (i, (a, b)) in full.iter().zip(&together).enumerate() {
        assert_eq!(
            (&a.q, a.status, a.iterations),
            (&b.q, b.status, b.iterations),
            "target {i}"
        );
    }
    // Position only, seeded from the true joint vectors shifted by 0.1 rad.
    let positions: Vec<BatchTarget> = samples
        .iter()
        .take(50)
        .map(|(q, t)| BatchTarget {
            position: t.position,
            orientation: None,
            seed: Some(q.iter().map(|v| v + 0.1).collect()),
        })
        .collect();
    let positional = each_alone(&robot, &positions, &config, tolerance);
    let ccd = each_alone(
        &robot,
        &targets[..30],
        &serde_json::from_value(
            json!({"kind": "jacobian", "method": "dls", "iteration": {"max_iterations": 200}}),
        )
        .expect("solver config"),
        tolerance,
    );
    let urdf = ikarus_testdata::require("urdf", "python reference")?.join("kukaIiwa7.urdf");
    Some(json!({
        "urdf": urdf,
        "base": "iiwa_link_0",
        "tip": "iiwa_link_ee",
        "q_true": samples.iter().map(|(q, _)| q.clone()).collect::<Vec<_>>(),
        "targets": targets.iter().map(|t| {
            let o = t.orientation.expect("6-D target");
            [t.position[0], t.position[1], t.position[2], o[0], o[1], o[2], o[3]]
        }).collect::<Vec<_>>(),
        "lm": batch_json(&full),
        "position_seeds": positions.iter().map(|t| t.seed.clone()).collect::<Vec<_>>(),
        "position_lm": batch_json(&positional),
        "dls_30": batch_json(&ccd),
    }))
}

/// FK of the first frames of a BVH, and its BVH text as written back.
fn bvh_reference() -> Option<Value> {
    let dir = ikarus_testdata::require("bvh", "python reference")?;
    let path = dir.join("pfnn_hierarchy_30fps_crlf.bvh");
    let document = ikarus_formats::open(path.to_str()?, 1.0).expect("BVH opens");
    let skeleton = &document.skeleton;
    let motion = document.motion.as_ref().expect("BVH motion");
    let mut model = ModelPose::new(skeleton);
    let (mut positions, mut rotations) = (Vec::new(), Vec::new());
    for frame in motion.frames().iter().take(5) {
        fk::forward_kinematics(skeleton, frame, &mut model);
        positions.push(
            skeleton
                .joints()
                .map(|j| model.position(j).to_array())
                .collect::<Vec<_>>(),
        );
        rotations.push(
            skeleton
                .joints()
                .map(|j| model.rotation(j).to_array())
                .collect::<Vec<_>>(),
        );
    }
    let text = Bvh::from_motion(skeleton, motion, document.layout_or_default())
        .expect("BVH writes")
        .to_bvh_string();
    // Keypoints: every joint's model position over 20 frames, solved back onto the skeleton.
    let names = skeleton.names().to_vec();
    let layout = ikarus_anim::mocap::Layout::Skeleton(names.clone());
    let mut points = Vec::new();
    for frame in motion.frames().iter().take(20) {
        fk::forward_kinematics(skeleton, frame, &mut model);
        points.extend(skeleton.joints().map(|j| model.position(j)));
    }
    let map = ikarus_core::humanoid_map::HumanoidMap::recognise(skeleton);
    let clip = ikarus_anim::mocap::KeypointClip {
        layout: &layout,
        frame_time: motion.frame_time(),
        points: &points,
        confidence: None,
    };
    let solved = ikarus_anim::mocap::solve_positions(
        skeleton,
        &map,
        &clip,
        &ikarus_anim::mocap::MocapConfig::default(),
    )
    .expect("mocap solves");
    let planted = ikarus_anim::mocap::solve_positions(
        skeleton,
        &map,
        &clip,
        &ikarus_anim::mocap::MocapConfig {
            contacts: Some(ikarus_anim::retarget::ContactConfig::default()),
            ..ikarus_anim::mocap::MocapConfig::default()
        },
    )
    .expect("mocap with contacts solves");
    Some(json!({
        "path": path,
        "frames": motion.len(),
        "joints": skeleton.len(),
        "names": names,
        "fk_positions": positions,
        "fk_rotations": rotations,
        "bvh_text": text,
        "mocap_points": points.iter().map(DVec3::to_array).collect::<Vec<_>>(),
        "mocap_fps": motion.frame_rate(),
        "mocap_rotations": solved.motion.frames().iter()
            .map(|f| f.transforms().iter().map(|t| t.rotation.to_array()).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        "mocap_rest_translations": solved.skeleton.rest_transforms().iter().map(|t| t.translation.to_array()).collect::<Vec<_>>(),
        "mocap_mean_error": solved.report.mean_error,
        "mocap_contacts_rotations": planted.motion.frames().iter()
            .map(|f| f.transforms().iter().map(|t| t.rotation.to_array()).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        "mocap_contacts": planted.report.contacts,
    }))
}

/// IK tasks on the built-in humanoid, solved by `ikarus_solve::solve`.
fn solve_reference() -> Value {
    let skeleton = ikarus_core::humanoid::builtin_humanoid();
    let tasks = [
        json!({"effectors": [{"joint": "leftHand", "position": [0.5, 1.2, 0.3]}], "solver": {"kind": "lm"}}),
        json!({"effectors": [{"joint": "leftHand", "position": [0.4, 1.3, 0.2], "orientation": [0.0, 0.0, 0.0, 1.0]},
                             {"joint": "rightFoot", "position": [-0.1, 0.1, 0.2], "weight": 0.5}],
               "solver": {"kind": "ccd", "iteration": {"max_iterations": 40}}, "base": "hips"}),
        json!({"effectors": [{"joint": "rightHand", "position": [-0.6, 1.0, 0.2]}],
               "solver": {"kind": "jacobian", "method": "dls"}, "tolerance": {"position": 1e-3, "rotation": 1e-3}}),
        json!({"effectors": [{"joint": "leftHand", "position": [0.5, 1.2, 0.3]}], "solver": {"kind": "fabrik"}}),
        // The full-body solver: a hand past its reach, the feet held.
        json!({"effectors": [{"joint": "leftHand", "position": [1.0, 1.38, 0.0]},
                             {"joint": "leftFoot", "position": [0.09, 0.07, 0.0], "orientation": [0.0, 0.0, 0.0, 1.0]},
                             {"joint": "rightFoot", "position": [-0.09, 0.07, 0.0], "orientation": [0.0, 0.0, 0.0, 1.0]}],
               "solver": {"kind": "body", "pull": {"leftHand": 1.0}}}),
    ];
    let results: Vec<Value> = tasks
        .iter()
        .map(|task| {
            let effectors = task["effectors"]
                .as_array()
                .expect("effectors")
                .iter()
                .map(|e| Effector {
                    joint: skeleton.joint(e["joint"].as_str().expect("name")).expect("joint"),
                    goal: Goal {
                        position: serde_json::from_value::<Option<[f64; 3]>>(e["position"].clone())
                            .expect("position")
                            .map(DVec3::from_array),
                        orientation: serde_json::from_value::<Option<[f64; 4]>>(e["orientation"].clone())
                            .expect("orientation")
                            .map(DQuat::from_array),
                    },
                    weight: e["weight"].as_f64().unwrap_or(1.0),
                })
                .collect();
            let ik = IkTask {
                effectors,
                base: task["base"].as_str().map(|b| skeleton.joint(b).expect("base")),
                tolerance: serde_json::from_value(task["tolerance"].clone()).unwrap_or_default(),
            };
            let config: SolverConfig = serde_json::from_value(task["solver"].clone()).expect("solver");
            let mut pose = skeleton.rest_pose();
            let report = ikarus_solve::solve(&skeleton, &ik, &config, &mut pose);
            json!({
                "task": task,
                "report": report,
                "rotations": pose.transforms().iter().map(|t| t.rotation.to_array()).collect::<Vec<_>>(),
                "translations": pose.transforms().iter().map(|t| t.translation.to_array()).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!(results)
}

/// A VRM file read as glTF, its skin and the humanoid map it declares (read as the CLI test
/// reads it).
fn declared_vrm(
    path: &std::path::Path,
) -> (
    ikarus_formats::gltf::GltfFile,
    ikarus_formats::gltf::GltfSkeleton,
    ikarus_core::humanoid_map::HumanoidMap,
) {
    let file = ikarus_formats::gltf::GltfFile::read(path).expect("VRM reads");
    let skin = file
        .skeleton(&ikarus_formats::gltf::SkeletonSource::Auto)
        .expect("VRM skin");
    let map = file
        .vrm_humanoid()
        .expect("VRM humanoid")
        .expect("declared")
        .map(&skin);
    (file, skin, map)
}

/// Per frame, `part` of each joint's local transform.
fn per_frame<T>(
    motion: &ikarus_core::Motion,
    part: impl Fn(&ikarus_core::Transform) -> T,
) -> Vec<Vec<T>> {
    motion
        .frames()
        .iter()
        .map(|f| f.transforms().iter().map(&part).collect())
        .collect()
}

fn rotations_of(motion: &ikarus_core::Motion) -> Vec<Vec<[f64; 4]>> {
    per_frame(motion, |t| t.rotation.to_array())
}

fn translations_of(motion: &ikarus_core::Motion) -> Vec<Vec<[f64; 3]>> {
    per_frame(motion, |t| t.translation.to_array())
}

/// Writes `bytes` as `name` in `out_dir` (for the Python tests to read) and returns its path;
/// panics with `what` when that fails.
fn write_out(out_dir: &Path, name: &str, bytes: impl AsRef<[u8]>, what: &str) -> PathBuf {
    let path = out_dir.join(name);
    std::fs::write(&path, bytes).expect(what);
    path
}

/// Example-based IK with the library call `ikarus learn` runs: posture models
/// learned from shared BVH walks (on their own skeleton, and carried onto the built-in
/// humanoid) and an example-based solve with the latter.
fn posture_reference() -> Option<Value> {
    use ikarus_anim::posture::learn_from_motions;

    let bvh = ikarus_testdata::require("bvh", "python reference")?;
    let walk_path = bvh.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let pfnn_path = bvh.join("pfnn_hierarchy_30fps_crlf.bvh");
    let open =
        |p: &Path| ikarus_formats::open(p.to_str().expect("UTF-8 path"), 1.0).expect("opens");
    let walk = open(&walk_path);
    let pfnn = open(&pfnn_path);
    let walk_motion = walk.motion.as_ref().expect("walk motion");
    let pfnn_motion = pfnn.motion.as_ref().expect("pfnn motion");
    let own = learn_from_motions(&walk.skeleton, &[(&walk.skeleton, walk_motion)], 8, 2)
        .expect("learns on its own skeleton");
    let humanoid = ikarus_core::humanoid::builtin_humanoid();
    let carried = learn_from_motions(
        &humanoid,
        &[(&walk.skeleton, walk_motion), (&pfnn.skeleton, pfnn_motion)],
        12,
        3,
    )
    .expect("learns carried onto the humanoid");
    let mut config: SolverConfig =
        serde_json::from_value(json!({"kind": "example"})).expect("example config");
    if let SolverConfig::Example(example) = &mut config {
        example
            .model
            .set_model(std::sync::Arc::new(carried.model.clone()));
    }
    let task = IkTask {
        effectors: vec![Effector {
            joint: humanoid.joint("leftHand").expect("leftHand"),
            goal: Goal {
                position: Some(DVec3::new(0.35, 0.95, 0.12)),
                orientation: None,
            },
            weight: 1.0,
        }],
        base: None,
        tolerance: Tolerance::default(),
    };
    let mut pose = humanoid.rest_pose();
    let report = ikarus_solve::solve(&humanoid, &task, &config, &mut pose);
    Some(json!({
        "walk": walk_path,
        "pfnn": pfnn_path,
        "own_model": own.model.to_json(),
        "carried_model": carried.model.to_json(),
        "carried_projected": carried.projected,
        "example_report": report,
        "example_rotations": pose.transforms().iter().map(|t| t.rotation.to_array()).collect::<Vec<_>>(),
    }))
}

/// The walk retargeted onto the built-in humanoid (objects), onto a VRM (its declared map)
/// and onto a PMX model, written as the VMD the package must write byte for byte; the calls
/// `ikarus retarget` makes.
fn retarget_reference(out_dir: &Path) -> Option<Value> {
    use ikarus_anim::retarget::{Character, RetargetConfig, measure, retarget};
    use ikarus_core::humanoid_map::HumanoidMap;

    let bvh = ikarus_testdata::require("bvh", "python reference")?;
    let gltf = ikarus_testdata::require("gltf", "python reference")?;
    let mmd = ikarus_testdata::require("mmd", "python reference")?;
    let open =
        |p: &Path| ikarus_formats::open(p.to_str().expect("UTF-8 path"), 1.0).expect("opens");
    let walk_path = bvh.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let walk = open(&walk_path);
    let walk_motion = walk.motion.as_ref().expect("walk motion");
    let humanoid = ikarus_core::humanoid::builtin_humanoid();
    // Retargeting, as the package calls it: the walk's map recognised from names, the
    // humanoid's too; default configuration (contacts held, ground kept).
    let walk_map = HumanoidMap::recognise(&walk.skeleton);
    let from = Character {
        skeleton: &walk.skeleton,
        map: &walk_map,
    };
    let humanoid_map = HumanoidMap::recognise(&humanoid);
    let to = Character {
        skeleton: &humanoid,
        map: &humanoid_map,
    };
    let onto_humanoid = retarget(from, walk_motion, to, &RetargetConfig::default())
        .expect("retargets onto the humanoid");
    let metrics = measure(
        from,
        walk_motion,
        onto_humanoid.root.source_body,
        to,
        &onto_humanoid.motion,
        &onto_humanoid.contacts,
        &onto_humanoid.feet,
        &onto_humanoid.leg_weights,
    );
    // Onto a VRM: its declared map, read here as the CLI test reads it.
    let avatar_path = gltf.join("Godette_vrm_v4.vrm");
    let avatar = open(&avatar_path);
    let (_, _, avatar_map) = declared_vrm(&avatar_path);
    let onto_avatar = retarget(
        from,
        walk_motion,
        Character {
            skeleton: &avatar.skeleton,
            map: &avatar_map,
        },
        &RetargetConfig::default(),
    )
    .expect("retargets onto the VRM");
    // Onto a PMX without contacts, written as VMD the way `ikarus retarget` writes it.
    let pmx_path = mmd.join("yw_test_model.pmx");
    let pmx = ikarus_formats::read_mmd_model(&pmx_path, 1.0).expect("PMX reads");
    let built = pmx.build().expect("PMX builds");
    let pmx_map = HumanoidMap::recognise(&built.skeleton);
    let onto_pmx = retarget(
        from,
        walk_motion,
        Character {
            skeleton: &built.skeleton,
            map: &pmx_map,
        },
        &RetargetConfig {
            contacts: None,
            ..RetargetConfig::default()
        },
    )
    .expect("retargets onto the PMX");
    let pmx_rotations = rotations_of(&onto_pmx.motion);
    // The VMD `ikarus retarget` writes (the same library call the package makes).
    let vmd = ikarus_jobs::vmd_bytes(
        &built.skeleton,
        &built.rig,
        &pmx.name,
        &onto_pmx.motion,
        1.0,
    )
    .expect("VMD bytes");
    let vmd_path = write_out(out_dir, "walk_on_pmx.vmd", vmd, "VMD written");
    Some(json!({
        "walk": walk_path,
        "avatar": avatar_path,
        "pmx": pmx_path,
        "humanoid_rotations": rotations_of(&onto_humanoid.motion),
        "humanoid_translations": translations_of(&onto_humanoid.motion),
        "humanoid_contacts": onto_humanoid.contacts.len(),
        "humanoid_unreached": onto_humanoid.unreached,
        "humanoid_max_hip_drop": onto_humanoid.max_hip_drop,
        "humanoid_slide_max": metrics.slide_max,
        "humanoid_penetration": metrics.penetration,
        "avatar_rotations": rotations_of(&onto_avatar.motion),
        "pmx_rotations": pmx_rotations,
        "vmd": vmd_path,
    }))
}

/// Frames `0..count` of a VMD played on its model with IK, sampled at VMD frames `i · step`,
/// by the formats' sampler and the anim crate's evaluator directly (the loop the CLI ran before
/// it moved into `ikarus_jobs::MmdPlayer`, so the package must reproduce it bit for bit).
fn play_vmd(
    model: &Path,
    vmd: &Path,
    mode: ikarus_anim::mmd::IkMode,
    step: f64,
) -> (
    ikarus_formats::mmd::Built,
    String,
    Vec<ikarus_core::LocalPose>,
) {
    use ikarus_anim::mmd::{MmdEvaluator, MmdSettings};
    use ikarus_formats::mmd::vmd::BoundMotion;

    let parsed = ikarus_formats::read_mmd_model(model, 1.0).expect("model reads");
    let built = parsed.build().expect("model builds");
    let keys = ikarus_formats::read_vmd(vmd, 1.0).expect("VMD reads");
    let bound = BoundMotion::new(&keys, &built.skeleton);
    let settings = MmdSettings {
        mode,
        ..MmdSettings::default()
    };
    let mut evaluator =
        MmdEvaluator::new(&built.skeleton, &built.rig, settings).expect("IK chains");
    let names = evaluator.chain_names().to_vec();
    let last = keys.bones.iter().map(|k| k.frame).max().expect("keys");
    let count = (f64::from(last) / step + 1e-9).floor() as usize + 1;
    let mut animated = built.skeleton.rest_pose();
    let mut model_frames = ModelPose::new(&built.skeleton);
    let mut frames = Vec::with_capacity(count);
    for i in 0..count {
        let frame = i as f64 * step;
        bound.sample(&built.skeleton, frame, &mut animated);
        let enabled: Vec<bool> = names.iter().map(|n| bound.ik_enabled(n, frame)).collect();
        let mut out = built.skeleton.rest_pose();
        evaluator.evaluate(
            &built.skeleton,
            &animated,
            &enabled,
            &mut out,
            &mut model_frames,
        );
        frames.push(out);
    }
    (built, parsed.name, frames)
}

/// Picked frames' local rotations and translations and model-space positions.
fn picked(
    skeleton: &ikarus_core::Skeleton,
    frames: &[ikarus_core::LocalPose],
    pick: &[usize],
) -> Value {
    let mut model = ModelPose::new(skeleton);
    let positions: Vec<Vec<[f64; 3]>> = pick
        .iter()
        .map(|&f| {
            fk::forward_kinematics(skeleton, &frames[f], &mut model);
            skeleton
                .joints()
                .map(|j| model.position(j).to_array())
                .collect()
        })
        .collect();
    json!({
        "frames": pick,
        "count": frames.len(),
        "rotations": pick.iter().map(|&f| frames[f].transforms().iter().map(|t| t.rotation.to_array()).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "translations": pick.iter().map(|&f| frames[f].transforms().iter().map(|t| t.translation.to_array()).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "positions": positions,
    })
}

/// VMD motions as sources (kishimen.vmd on the Miku PMD, as the CLI's MMD tests play it): the
/// frames at 30 and 60 fps in both IK modes, the VMD the package must write for them and the
/// dance retargeted onto the built-in humanoid (what `ikarus retarget --model` does).
fn mmd_reference(out_dir: &Path) -> Option<Value> {
    use ikarus_anim::mmd::IkMode;
    use ikarus_anim::retarget::{Character, RetargetConfig, retarget};
    use ikarus_core::humanoid_map::HumanoidMap;

    let mmd = ikarus_testdata::require("mmd", "python reference")?;
    let model = mmd.join("Miku_Hatsune_Ver2.pmd");
    let vmd = mmd.join("kishimen.vmd");
    let (built, name, frames) = play_vmd(&model, &vmd, IkMode::Compatible, 1.0);
    let skeleton = &built.skeleton;
    let (_, _, exact) = play_vmd(&model, &vmd, IkMode::Exact, 1.0);
    let (_, _, at_60) = play_vmd(&model, &vmd, IkMode::Compatible, 0.5);
    // A PMX model with its own motion, exact IK (as the anim crate's MMD tests play it).
    let gene = mmd.join("Gene.pmx");
    let gene_vmd = mmd.join("gene_stand.vmd");
    let (gene_built, _, gene_frames) = play_vmd(&gene, &gene_vmd, IkMode::Exact, 1.0);
    let gene_last = gene_frames.len() - 1;
    let last = frames.len() - 1;
    let n60 = at_60.len() - 1;
    // The VMD written for the model (the library call `ikarus convert` makes).
    let mut clip = ikarus_core::Motion::for_skeleton(skeleton, 1.0 / 30.0).expect("clip");
    for f in &frames {
        clip.push(f.clone()).expect("frame");
    }
    let vmd_bytes =
        ikarus_jobs::vmd_bytes(skeleton, &built.rig, &name, &clip, 1.0).expect("VMD bytes");
    let vmd_out = write_out(out_dir, "kishimen_on_miku.vmd", vmd_bytes, "VMD written");
    // Onto the built-in humanoid with contacts, maps recognised from names.
    let humanoid = ikarus_core::humanoid::builtin_humanoid();
    let (miku_map, humanoid_map) = (
        HumanoidMap::recognise(skeleton),
        HumanoidMap::recognise(&humanoid),
    );
    let danced = retarget(
        Character {
            skeleton,
            map: &miku_map,
        },
        &clip,
        Character {
            skeleton: &humanoid,
            map: &humanoid_map,
        },
        &RetargetConfig::default(),
    )
    .expect("retargets the dance");
    Some(json!({
        "model": model,
        "vmd": vmd,
        "names": skeleton.names(),
        "compatible": picked(skeleton, &frames, &[0, 100, 377, last]),
        "exact": picked(skeleton, &exact, &[0, 100, 377, last]),
        "fps60": picked(skeleton, &at_60, &[0, 1, 201, n60]),
        "vmd_written": vmd_out,
        "dance_rotations": rotations_of(&danced.motion),
        "dance_translations": translations_of(&danced.motion),
        "dance_contacts": danced.contacts.len(),
        "pmx_model": gene,
        "pmx_vmd": gene_vmd,
        "pmx_exact": picked(&gene_built.skeleton, &gene_frames, &[0, gene_last / 2, gene_last]),
        "pmx_lacks": mmd.join("yw_test_model.pmx"),
    }))
}

/// A walk converted to 30 fps and metres as `ikarus convert --fps 30 --scale` writes it, and the
/// walk retargeted onto a VRM (as in the retarget reference) added into the VRM file.
fn convert_reference(out_dir: &Path) -> Option<Value> {
    use ikarus_anim::retarget::{Character, RetargetConfig, retarget};
    use ikarus_core::humanoid_map::HumanoidMap;

    let bvh = ikarus_testdata::require("bvh", "python reference")?;
    let gltf = ikarus_testdata::require("gltf", "python reference")?;
    let walk_path = bvh.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let walk = ikarus_formats::open(walk_path.to_str()?, 0.056_444).expect("walk opens");
    let walk30 = walk
        .motion
        .as_ref()
        .expect("walk motion")
        .resampled(1.0 / 30.0)
        .expect("resamples");
    let walk_text = Bvh::from_motion(&walk.skeleton, &walk30, walk.layout_or_default())
        .expect("BVH writes")
        .to_bvh_string();
    // The walk retargeted onto the VRM (as the retarget reference) added into the VRM file.
    let avatar_path = gltf.join("Godette_vrm_v4.vrm");
    let avatar = ikarus_formats::open(avatar_path.to_str()?, 1.0).expect("VRM opens");
    let (file, skin, avatar_map) = declared_vrm(&avatar_path);
    let walk1 = ikarus_formats::open(walk_path.to_str()?, 1.0).expect("walk opens");
    let walk_map = HumanoidMap::recognise(&walk1.skeleton);
    let onto_avatar = retarget(
        Character {
            skeleton: &walk1.skeleton,
            map: &walk_map,
        },
        walk1.motion.as_ref().expect("walk motion"),
        Character {
            skeleton: &avatar.skeleton,
            map: &avatar_map,
        },
        &RetargetConfig::default(),
    )
    .expect("retargets onto the VRM");
    let into_bytes = file
        .with_motion(&skin, &onto_avatar.motion, "motion")
        .expect("animation added");
    let into_out = write_out(out_dir, "walk_into_avatar.glb", into_bytes, "GLB written");
    Some(json!({
        "walk": walk_path,
        "walk30_bvh": walk_text,
        "avatar": avatar_path,
        "into_glb": into_out,
    }))
}

#[test]
fn python_package_matches_rust() {
    let Some(python) = python() else {
        return;
    };
    let out_dir = target_dir().join("ikarus-py-test");
    std::fs::create_dir_all(&out_dir).expect("test directory");
    let reference = json!({
        "robot": robot_reference(),
        "bvh": bvh_reference(),
        "solve": solve_reference(),
        "posture": posture_reference(),
        "retarget": retarget_reference(&out_dir),
        "mmd": mmd_reference(&out_dir),
        "convert": convert_reference(&out_dir),
    });
    let reference_path = write_out(
        &out_dir,
        "reference.json",
        reference.to_string(),
        "reference written",
    );

    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let venv = python
        .parent()
        .and_then(Path::parent)
        .expect("the interpreter lives in <venv>/bin");
    let built = Command::new(&python)
        .args(["-m", "maturin", "develop", "--quiet", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .env("VIRTUAL_ENV", venv)
        .env("CARGO_TARGET_DIR", target_dir())
        .status()
        .expect("maturin runs");
    assert!(built.success(), "maturin develop failed");

    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(crate_dir.join("tests"))
        .env("IKARUS_PY_REFERENCE", &reference_path)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    if let Some(data) = ikarus_testdata::data_dir() {
        pytest.env("IKARUS_SHARED_DATA", data);
    }
    let status = pytest.status().expect("pytest runs");
    assert!(status.success(), "pytest failed: {status}");
}
