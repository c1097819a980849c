//! glTF / GLB / VRM against the real files in ../shared/data/gltf (counts pinned by hand from
//! each file's JSON and accessors), interpolation formulas, round trips and malformed input.

#![allow(clippy::disallowed_methods)] // tests read the shared data files

use std::path::PathBuf;

use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone as B;
use ikarus_core::{ModelPose, fk};
use ikarus_formats::gltf::{GltfError, GltfFile, GltfSkeleton, SkeletonSource, vrma, write_glb};
use ikarus_testdata::assert::{largest_fk_gap, largest_joint_distance};

fn data(name: &str, test: &str) -> Option<PathBuf> {
    ikarus_testdata::require("gltf", test).map(|d| d.join(name))
}

/// `name` from the shared glTF data, read, with its skeleton (`SkeletonSource::Auto`); `None`
/// without the shared data.
fn read_skinned(name: &str, test: &str) -> Option<(GltfFile, GltfSkeleton)> {
    let file = GltfFile::read(&data(name, test)?).unwrap();
    let skeleton = file.skeleton(&SkeletonSource::Auto).unwrap();
    Some((file, skeleton))
}

fn all_files(test: &str) -> Vec<PathBuf> {
    let Some(dir) = ikarus_testdata::require("gltf", test) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// (file, joints per skin, animation durations from the input accessors' `max`, humanoid bones).
type Pin = (
    &'static str,
    &'static [usize],
    &'static [f64],
    Option<usize>,
);
const PINNED: &[Pin] = &[
    ("CesiumMan.glb", &[19], &[2.0], None),
    (
        "Fox.glb",
        &[24],
        &[
            3.416_666_746_139_526_4,
            0.708_333_313_465_118_4,
            1.158_333_301_544_189_5,
        ],
        None,
    ),
    ("Godette_vrm_v4.vrm", &[68], &[], Some(45)),
    (
        "RiggedSimple_blender_reexport.glb",
        &[4],
        &[6.666_666_666_666_667],
        None,
    ),
    ("SimpleSkin.gltf", &[2], &[5.5], None),
    (
        "VRMC_materials_mtoon_UV_Animation_Test.vrm",
        &[],
        &[],
        Some(53),
    ),
    (
        "VRMC_vrm_expressions_isBinary_Overridden.vrm",
        &[],
        &[],
        Some(22),
    ),
    ("assimp_quad_skin.glb", &[10], &[], None),
    ("cryptovoxels.vrm", &[57], &[], Some(43)),
    ("three-vrm_test.vrma", &[], &[3.0], Some(51)),
];

#[test]
fn every_file_loads_with_the_pinned_counts() {
    let files = all_files("every_file_loads_with_the_pinned_counts");
    if files.is_empty() {
        return;
    }
    assert_eq!(files.len(), PINNED.len());
    for &(name, skins, durations, humanoid) in PINNED {
        let path = files.iter().find(|p| p.ends_with(name)).unwrap();
        let file = GltfFile::read(path).unwrap();
        let joints: Vec<usize> = file.skins().iter().map(|s| s.1).collect();
        assert_eq!(joints, skins, "{name}");
        let found = file.animations().unwrap();
        assert_eq!(found.len(), durations.len(), "{name}");
        for ((_, d), expected) in found.iter().zip(durations) {
            assert!(
                (d - expected).abs() < 1e-6,
                "{name}: duration {d} vs {expected}"
            );
        }
        let h = file.vrm_humanoid().unwrap().map(|h| h.bones.len());
        // VRMA's map has 51 bones by node, two of which (`happy`, `lookAt` expressions) are not bones.
        assert_eq!(h, humanoid, "{name}");
        let document = ikarus_formats::open(path.to_str().unwrap(), 1.0).unwrap();
        let skeleton = file.skeleton(&SkeletonSource::Auto).unwrap();
        // Every skin joint is a skeleton joint.
        if let Some(skin) = skeleton.skin {
            for node in &file.json().skins[skin].joints {
                assert!(skeleton.node_joints[node.value()].is_some(), "{name}");
            }
            assert!(skeleton.skeleton.len() >= skins[skin]);
        }
        assert_eq!(document.skeleton.len(), skeleton.skeleton.len());
        if let Some(motion) = &document.motion {
            assert!((motion.duration() - durations[0]).abs() < 1e-6, "{name}");
            assert!(
                motion
                    .frames()
                    .iter()
                    .all(ikarus_core::LocalPose::is_finite)
            );
        }
    }
}

#[test]
fn skeleton_joint_counts_are_pinned() {
    // Skin joints plus nodes between them (Fox: `_rootJoint` is the skin's own top; CesiumMan:
    // the `Z_UP` and `Armature` nodes above it are folded into the root).
    for (name, joints, root) in [
        ("CesiumMan.glb", 19, "Skeleton_torso_joint_1"),
        ("Fox.glb", 24, "_rootJoint"),
        ("Godette_vrm_v4.vrm", 68, "Armature_rootJoint"),
        ("cryptovoxels.vrm", 57, "Hips"),
    ] {
        let Some((_, skeleton)) = read_skinned(name, "skeleton_joint_counts_are_pinned") else {
            return;
        };
        assert_eq!(skeleton.skeleton.len(), joints, "{name}");
        let roots: Vec<&str> = skeleton
            .skeleton
            .roots()
            .map(|r| skeleton.skeleton.name(r))
            .collect();
        assert_eq!(roots, [root], "{name}");
    }
}

#[test]
fn sampling_hits_the_keyframes_and_slerps_between() {
    let Some((file, skeleton)) =
        read_skinned("Fox.glb", "sampling_hits_the_keyframes_and_slerps_between")
    else {
        return;
    };
    let clip = file
        .clip(file.animation_index("Walk").unwrap(), &skeleton)
        .unwrap();
    assert_eq!(clip.channels.len(), 21);
    let mut pose = skeleton.skeleton.rest_pose();
    for channel in &clip.channels {
        let j = channel.joint.index();
        let w = channel.target.width();
        for (k, &t) in channel.times.iter().enumerate() {
            clip.sample(&skeleton, t, &mut pose);
            let local = skeleton.to_node_local(j, &pose.transforms()[j]);
            let key = &channel.values[k * w..(k + 1) * w];
            let got: Vec<f64> = match channel.target.gltf_path() {
                "rotation" => {
                    let q = DQuat::from_slice(key);
                    let sign = if local.rotation.dot(q) < 0.0 {
                        -1.0
                    } else {
                        1.0
                    };
                    (local.rotation * sign).to_array().to_vec()
                }
                "translation" => local.translation.to_array().to_vec(),
                _ => local.scale.to_array().to_vec(),
            };
            for (a, b) in got.iter().zip(key) {
                assert!((a - b).abs() < 1e-9, "key {k} of joint {j}: {a} vs {b}");
            }
            // Halfway to the next key: slerp / lerp of the two keys.
            if k + 1 < channel.times.len() && channel.target.gltf_path() == "rotation" {
                let mid = 0.5 * (t + channel.times[k + 1]);
                clip.sample(&skeleton, mid, &mut pose);
                let local = skeleton.to_node_local(j, &pose.transforms()[j]);
                let a = DQuat::from_slice(key);
                let b = DQuat::from_slice(&channel.values[(k + 1) * w..(k + 2) * w]);
                let expected = a.slerp(b, 0.5);
                assert!(local.rotation.dot(expected).abs() > 1.0 - 1e-12);
            }
        }
    }
}

/// A one-node glTF whose translation is CUBICSPLINE and rotation STEP, keys at 0, 1, 3 s.
fn spline_file() -> Vec<u8> {
    use base64::Engine as _;
    let times = [0.0f32, 1.0, 3.0];
    // Per key: in-tangent, value, out-tangent (VEC3).
    let spline: [[f32; 3]; 9] = [
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, 2.0, 0.0],
        [0.5, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [-1.0, 0.0, 2.0],
        [0.0, 1.0, 0.0],
        [2.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
    ];
    let rotations: [[f32; 4]; 3] = [
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 0.6, 0.0, 0.8],
        [0.6, 0.0, 0.0, 0.8],
    ];
    let mut bytes = Vec::new();
    for v in times
        .iter()
        .chain(spline.iter().flatten())
        .chain(rotations.iter().flatten())
    {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    serde_json::json!({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "a", "children": [1]}, {"name": "b", "translation": [0, 1, 0]}],
        "buffers": [{"uri": uri, "byteLength": bytes.len()}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 12},
            {"buffer": 0, "byteOffset": 12, "byteLength": 108},
            {"buffer": 0, "byteOffset": 120, "byteLength": 48},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0], "max": [3]},
            {"bufferView": 1, "componentType": 5126, "count": 9, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"},
        ],
        "animations": [{"samplers": [
            {"input": 0, "output": 1, "interpolation": "CUBICSPLINE"},
            {"input": 0, "output": 2, "interpolation": "STEP"},
        ], "channels": [
            {"sampler": 0, "target": {"node": 1, "path": "translation"}},
            {"sampler": 1, "target": {"node": 1, "path": "rotation"}},
        ]}],
    })
    .to_string()
    .into_bytes()
}

#[test]
fn cubic_spline_and_step_follow_the_specification() {
    let file = GltfFile::parse(&spline_file(), None).unwrap();
    let skeleton = file.skeleton(&SkeletonSource::AllNodes).unwrap();
    let clip = file.clip(0, &skeleton).unwrap();
    let b = skeleton.skeleton.joint("b").unwrap();
    let mut pose = skeleton.skeleton.rest_pose();
    // Between keys 1 (t=1) and 2 (t=3): Δt = 2, v1 = (1,1,1), b1 = (-1,0,2), a2 = (0,1,0), v2 = (2,0,0).
    for s in [0.0, 0.25, 0.5, 0.9] {
        let t = 1.0 + 2.0 * s;
        clip.sample(&skeleton, t, &mut pose);
        let (s2, s3) = (s * s, s * s * s);
        let v1 = DVec3::new(1.0, 1.0, 1.0);
        let b1 = DVec3::new(-1.0, 0.0, 2.0);
        let a2 = DVec3::new(0.0, 1.0, 0.0);
        let v2 = DVec3::new(2.0, 0.0, 0.0);
        let expected = (2.0 * s3 - 3.0 * s2 + 1.0) * v1
            + (s3 - 2.0 * s2 + s) * 2.0 * b1
            + (-2.0 * s3 + 3.0 * s2) * v2
            + (s3 - s2) * 2.0 * a2;
        assert!((pose[b].translation - expected).length() < 1e-12, "t={t}");
        // STEP: the earlier key until the next.
        let expected_rotation = if t < 3.0 {
            DQuat::from_xyzw(0.0, 0.6, 0.0, 0.8)
        } else {
            DQuat::from_xyzw(0.6, 0.0, 0.0, 0.8)
        };
        assert!(
            (pose[b].rotation - expected_rotation).length() < 1e-7,
            "t={t}"
        );
    }
    // Clamped outside the keys; first segment uses Δt = 1.
    clip.sample(&skeleton, -1.0, &mut pose);
    assert_eq!(pose[b].translation, DVec3::ZERO);
    clip.sample(&skeleton, 10.0, &mut pose);
    assert_eq!(pose[b].translation, DVec3::new(2.0, 0.0, 0.0));
    clip.sample(&skeleton, 0.5, &mut pose);
    let expected =
        0.5 * DVec3::ZERO + 0.125 * DVec3::new(1.0, 2.0, 0.0) + 0.5 * DVec3::new(1.0, 1.0, 1.0)
            - 0.125 * DVec3::new(0.5, 0.0, 1.0);
    assert!((pose[b].translation - expected).length() < 1e-12);
}

#[test]
fn gltf_animation_round_trips_through_a_motion() {
    for name in [
        "Fox.glb",
        "SimpleSkin.gltf",
        "CesiumMan.glb",
        "RiggedSimple_blender_reexport.glb",
    ] {
        let Some((file, skeleton)) =
            read_skinned(name, "gltf_animation_round_trips_through_a_motion")
        else {
            return;
        };
        let motion = file
            .clip(0, &skeleton)
            .unwrap()
            .to_motion(&skeleton, Some(30.0))
            .unwrap();
        let bytes = file.with_motion(&skeleton, &motion, "edited").unwrap();
        let again = GltfFile::parse(&bytes, None).unwrap();
        // The rest of the file is kept: same nodes, skins, meshes, one more animation.
        assert_eq!(again.json().nodes.len(), file.json().nodes.len());
        assert_eq!(again.json().meshes.len(), file.json().meshes.len());
        assert_eq!(
            again.json().animations.len(),
            file.json().animations.len() + 1
        );
        let skeleton2 = again.skeleton(&SkeletonSource::Auto).unwrap();
        let index = again.animation_index("edited").unwrap();
        let motion2 = again
            .clip(index, &skeleton2)
            .unwrap()
            .to_motion(&skeleton2, Some(30.0))
            .unwrap();
        assert_eq!(motion2.len(), motion.len(), "{name}");
        let mut worst = 0.0_f64;
        for (a, b) in motion.frames().iter().zip(motion2.frames()) {
            for (x, y) in a.transforms().iter().zip(b.transforms()) {
                worst = worst.max((x.translation - y.translation).length());
                worst = worst.max(1.0 - x.rotation.dot(y.rotation).abs());
            }
        }
        // f32 storage: relative 6e-8 on values of up to ~100 units.
        assert!(worst < 2e-5, "{name}: {worst}");
    }
}

#[test]
fn bvh_to_glb_to_bvh_keeps_fk() {
    use ikarus_formats::bvh::{Bvh, BvhReadOptions};
    let files = ikarus_testdata::files("bvh", "bvh", "bvh_to_glb_to_bvh_keeps_fk");
    for path in files {
        // Metres, so that f32 storage keeps about 1e-7 m.
        let bvh = Bvh::read(&path, &BvhReadOptions { scale: 0.01 }).unwrap();
        let motion = bvh.to_motion().unwrap();
        let glb = write_glb(&bvh.skeleton, Some(&motion), "take");
        let file = GltfFile::parse(&glb, None).unwrap();
        let skeleton = file.skeleton(&SkeletonSource::Auto).unwrap();
        assert_eq!(skeleton.skeleton.names(), bvh.skeleton.names());
        let back = file
            .clip(0, &skeleton)
            .unwrap()
            .to_motion(&skeleton, None)
            .unwrap();
        assert_eq!(back.len(), motion.len(), "{}", path.display());
        assert!((back.frame_time() - motion.frame_time()).abs() < 1e-7 * motion.frame_time());
        let written = Bvh::from_motion(&skeleton.skeleton, &back, bvh.layout.clone())
            .unwrap()
            .to_bvh_string();
        let reread = Bvh::parse(written.as_bytes(), &BvhReadOptions::default()).unwrap();
        let reread_motion = reread.to_motion().unwrap();
        let worst = largest_fk_gap(
            (&bvh.skeleton, &motion),
            (&reread.skeleton, &reread_motion),
            largest_joint_distance,
        );
        // f32 keys in the GLB (rotations rounded with their parents' rounding fed back, key
        // times hit exactly) and the BVH text's decimals: the FK must agree to 1e-6 m.
        assert!(worst < 1e-6, "{}: FK differs by {worst} m", path.display());
        eprintln!("{}: worst FK difference {worst:e} m", path.display());
    }
}

#[test]
fn vrma_read_write_read_is_lossless() {
    let Some(path) = data("three-vrm_test.vrma", "vrma_read_write_read_is_lossless") else {
        return;
    };
    let file = GltfFile::read(&path).unwrap();
    let first = vrma::Vrma::from_file(&file).unwrap();
    assert!(first.humanoid.is_complete());
    let motion = first.normalized_motion(None).unwrap();
    assert_eq!(motion.len(), 7, "7 evenly spaced keys over 3 s");
    let bytes = vrma::write_vrma(first.normalized.skeleton(), &motion);
    let second = vrma::Vrma::from_file(&GltfFile::parse(&bytes, None).unwrap()).unwrap();
    assert_eq!(second.humanoid.len(), first.humanoid.len());
    let motion2 = second.normalized_motion(None).unwrap();
    assert_eq!(motion2.len(), motion.len());
    assert_eq!(
        second.normalized.skeleton().names(),
        first.normalized.skeleton().names()
    );
    for (a, b) in motion.frames().iter().zip(motion2.frames()) {
        for (x, y) in a.transforms().iter().zip(b.transforms()) {
            assert!((x.translation - y.translation).length() < 1e-6);
            assert!(x.rotation.dot(y.rotation).abs() > 1.0 - 1e-12);
        }
    }
    // And the animation moves: the right upper arm turns by 90° at its peak.
    let arm = first.normalized.skeleton().joint("rightUpperArm").unwrap();
    let angle = motion
        .frames()
        .iter()
        .map(|f| f[arm].rotation.angle_between(DQuat::IDENTITY))
        .fold(0.0, f64::max);
    assert!(
        (angle - std::f64::consts::FRAC_PI_2).abs() < 1e-3,
        "{angle}"
    );
}

#[test]
fn skinned_mesh_at_rest_is_the_bind_pose() {
    // cryptovoxels' node rest pose is not its bind pose (SOURCES.md: rest rotations not
    // normalised); its skinned rest mesh moves by up to 7.8 mm, pinned separately.
    for (name, vertices, tolerance) in [
        ("Godette_vrm_v4.vrm", 8067, 1e-5),
        ("cryptovoxels.vrm", 2727, 5.3e-3),
        ("Fox.glb", 1728, 1e-5),
        ("CesiumMan.glb", 3273, 1e-5),
    ] {
        let Some((file, skeleton)) = read_skinned(name, "skinned_mesh_at_rest_is_the_bind_pose")
        else {
            return;
        };
        let mesh = file.mesh(&skeleton).unwrap().unwrap();
        assert_eq!(mesh.vertex_count(), vertices, "{name}");
        mesh.validate(skeleton.skeleton.len()).unwrap();
        let mut model = ModelPose::new(&skeleton.skeleton);
        fk::forward_kinematics(
            &skeleton.skeleton,
            &skeleton.skeleton.rest_pose(),
            &mut model,
        );
        let size = mesh
            .positions
            .iter()
            .map(|p| DVec3::from(p.map(f64::from)).length())
            .fold(0.0, f64::max);
        let mut worst = 0.0_f64;
        for v in 0..mesh.vertex_count() {
            let rest = DVec3::from(mesh.positions[v].map(f64::from));
            worst = worst.max((mesh.skinned_position(v, model.transforms()) - rest).length());
        }
        eprintln!("{name}: skinned rest vs bind positions: worst {worst:e} of size {size}");
        assert!(worst < tolerance * size, "{name}: {worst} of {size}");
        assert!(!mesh.materials.is_empty());
        if name == "Godette_vrm_v4.vrm" {
            // glTF `doubleSided`: only the logo (read from the file's JSON by hand).
            let double: Vec<(&str, bool)> = mesh
                .materials
                .iter()
                .map(|m| (m.name.as_str(), m.double_sided))
                .collect();
            assert_eq!(
                double,
                [
                    ("Face", false),
                    ("Body", false),
                    ("GodotLogo", true),
                    ("Backpack", false)
                ]
            );
        }
    }
}

#[test]
fn vrm_avatars_face_plus_z_with_their_left_on_plus_x() {
    for name in [
        "Godette_vrm_v4.vrm",
        "cryptovoxels.vrm",
        "VRMC_vrm_expressions_isBinary_Overridden.vrm",
        "VRMC_materials_mtoon_UV_Animation_Test.vrm",
    ] {
        let Some((file, skeleton)) =
            read_skinned(name, "vrm_avatars_face_plus_z_with_their_left_on_plus_x")
        else {
            return;
        };
        let map = file.vrm_humanoid().unwrap().unwrap().map(&skeleton);
        assert!(
            map.is_complete(),
            "{name}: missing {:?}",
            map.missing_required().collect::<Vec<_>>()
        );
        let mut model = ModelPose::new(&skeleton.skeleton);
        fk::forward_kinematics(
            &skeleton.skeleton,
            &skeleton.skeleton.rest_pose(),
            &mut model,
        );
        let p = |b| model.position(map.joint(b).unwrap());
        assert!(
            p(B::LeftHand).x > p(B::Hips).x + 0.3,
            "{name}: left hand at {}",
            p(B::LeftHand)
        );
        assert!(p(B::RightHand).x < p(B::Hips).x - 0.3, "{name}");
        // The feet point forward (+Z) from the ankles: toes ahead of the feet.
        if let (Some(toes), Some(foot)) = (map.joint(B::LeftToes), map.joint(B::LeftFoot)) {
            assert!(
                model.position(toes).z > model.position(foot).z,
                "{name}: toes behind the foot"
            );
        }
        // Normalised view: identity rest rotations, converting rest gives identity, and back.
        let normalized =
            ikarus_core::humanoid_map::NormalizedHumanoid::new(&skeleton.skeleton, &map).unwrap();
        let mut n_pose = normalized.skeleton().rest_pose();
        normalized.to_normalized(
            &skeleton.skeleton,
            &skeleton.skeleton.rest_pose(),
            &mut n_pose,
        );
        for t in n_pose.transforms() {
            assert!(t.rotation.dot(DQuat::IDENTITY).abs() > 1.0 - 1e-12);
        }
        // A normalised pose applied to the avatar and read back is the same pose.
        let arm = normalized.skeleton().joint("leftUpperArm").unwrap();
        n_pose[arm].rotation = DQuat::from_rotation_z(-1.2);
        let mut source = skeleton.skeleton.rest_pose();
        normalized.from_normalized(&skeleton.skeleton, &n_pose, &mut source);
        let mut back = normalized.skeleton().rest_pose();
        normalized.to_normalized(&skeleton.skeleton, &source, &mut back);
        for (a, b) in n_pose.transforms().iter().zip(back.transforms()) {
            assert!(a.rotation.dot(b.rotation).abs() > 1.0 - 1e-12, "{name}");
            assert!((a.translation - b.translation).length() < 1e-9, "{name}");
        }
        // -1.2 rad about Z lowers the left arm: the hand drops.
        let shoulder_y = p(B::LeftUpperArm).y;
        fk::forward_kinematics(&skeleton.skeleton, &source, &mut model);
        assert!(
            model.position(map.joint(B::LeftHand).unwrap()).y < shoulder_y - 0.2,
            "{name}"
        );
    }
}

/// The error reading the first skin's inverse bind matrices of the GLB of `json` and `bin`
/// (which parses).
fn inverse_binds_error(json: &serde_json::Value, bin: &[u8]) -> String {
    let file = GltfFile::parse(&glb_of(json, bin), None).unwrap();
    file.inverse_binds(0).unwrap_err().to_string()
}

fn glb_of(json: &serde_json::Value, bin: &[u8]) -> Vec<u8> {
    let mut text = serde_json::to_vec(json).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + text.len() + 8 + bin.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out
}

#[test]
fn malformed_files_name_the_place() {
    // Truncated GLB: the header's length is larger than the file.
    let glb = write_glb(&ikarus_core::humanoid::builtin_humanoid(), None, "x");
    match GltfFile::parse(&glb[..glb.len() - 10], None).unwrap_err() {
        GltfError::Container { offset: 8, .. } => {}
        e => panic!("{e}"),
    }
    // A chunk longer than the file.
    let mut bad = glb.clone();
    bad[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        GltfFile::parse(&bad, None).unwrap_err(),
        GltfError::Container { offset: 12, .. }
    ));
    let base = serde_json::json!({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "a", "children": [1]}, {"name": "b"}],
        "buffers": [{"byteLength": 64}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 64}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 1, "type": "MAT4"}],
        "skins": [{"joints": [0, 1], "inverseBindMatrices": 0}],
    });
    let bin = [0u8; 64];
    // The accessor holds one matrix for two joints, and it is all zeros.
    let err = inverse_binds_error(&base, &bin);
    assert!(err.contains("skins[0].inverseBindMatrices"), "{err}");
    let mut singular = base.clone();
    singular["skins"][0]["joints"] = serde_json::json!([0]);
    let err = inverse_binds_error(&singular, &bin);
    assert!(
        err.contains("skins[0].inverseBindMatrices[0]: matrix is not invertible"),
        "{err}"
    );
    // An accessor past its buffer view.
    let mut past = base.clone();
    past["accessors"][0]["count"] = serde_json::json!(2);
    let err = inverse_binds_error(&past, &bin);
    assert!(err.starts_with("accessors[0]: 2 elements"), "{err}");
    // A buffer view past its buffer.
    let mut view = base.clone();
    view["bufferViews"][0]["byteOffset"] = serde_json::json!(32);
    let err = inverse_binds_error(&view, &bin);
    assert!(err.starts_with("bufferViews[0]"), "{err}");
    // A bad index.
    let mut index = base.clone();
    index["skins"][0]["joints"] = serde_json::json!([0, 7]);
    let err = GltfFile::parse(&glb_of(&index, &bin), None).unwrap_err();
    assert!(err.to_string().starts_with("skins[0].joints[1]"), "{err}");
    // Cycles: a node that is its own child, and two nodes that are each other's.
    let mut cycle = base.clone();
    cycle["nodes"][1]["children"] = serde_json::json!([0]);
    let err = GltfFile::parse(&glb_of(&cycle, &bin), None).unwrap_err();
    assert!(err.to_string().contains("nodes["), "{err}");
    let mut own = base.clone();
    own["nodes"][1]["children"] = serde_json::json!([1]);
    let err = GltfFile::parse(&glb_of(&own, &bin), None).unwrap_err();
    assert!(err.to_string().contains("nodes[1].children[0]"), "{err}");
    // JSON syntax.
    assert!(matches!(
        GltfFile::parse(b"{\"asset\": ", None).unwrap_err(),
        GltfError::Json { line: 1, .. }
    ));
}

/// Every prefix and many single-byte corruptions of every sample file: errors, never panics;
/// whatever parses yields skeletons, clips and meshes without panicking either.
#[test]
fn truncated_and_mutated_samples_never_panic() {
    let files = all_files("truncated_and_mutated_samples_never_panic");
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let step = (bytes.len() / 97).max(1);
        let mut cases: Vec<Vec<u8>> = (0..bytes.len())
            .step_by(step)
            .map(|n| bytes[..n].to_vec())
            .collect();
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..200 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut m = bytes.clone();
            let at = (seed as usize) % m.len();
            m[at] = (seed >> 32) as u8;
            cases.push(m);
        }
        for case in cases {
            exercise(&case);
        }
    }
}

fn exercise(bytes: &[u8]) {
    let Ok(file) = GltfFile::parse(bytes, None) else {
        return;
    };
    let _ = file.animations();
    let _ = vrma::Vrma::from_file(&file);
    let Ok(skeleton) = file.skeleton(&SkeletonSource::Auto) else {
        return;
    };
    for i in 0..file.json().animations.len() {
        if let Ok(clip) = file.clip(i, &skeleton) {
            let mut pose = skeleton.skeleton.rest_pose();
            clip.sample(&skeleton, 0.37, &mut pose);
        }
    }
    if let Ok(Some(mesh)) = file.mesh(&skeleton) {
        mesh.validate(skeleton.skeleton.len()).unwrap();
    }
}
