//! MMD readers against the shared files (../shared/data/mmd): counts and positions pinned by
//! hand from the files' own bytes (read with a separate script), VMD round trips, and
//! malformed input.

#![allow(clippy::disallowed_methods)] // tests read the shared data files

use glam::{DQuat, DVec3};
use ikarus_core::{ModelPose, fk};
use ikarus_formats::mmd::vmd::{Bezier, BoundMotion, Vmd};
use ikarus_formats::mmd::{MmdError, pmd, pmx};
use ikarus_formats::{read_mmd_model, read_vmd};

/// `a` and `b` are the same rotation (either sign) to `tolerance` per component.
fn same_rotation(a: DQuat, b: DQuat, tolerance: f64) -> bool {
    (a - b).length().min((a + b).length()) < tolerance
}

fn dir(test: &str) -> Option<std::path::PathBuf> {
    ikarus_testdata::require("mmd", test)
}

#[test]
fn every_model_parses_builds_and_skins_back_to_its_bind_pose() {
    let mut seen = 0;
    for extension in ["pmx", "pmd"] {
        for path in ikarus_testdata::files("mmd", extension, "every_model_parses") {
            let model = read_mmd_model(&path, 1.0).unwrap_or_else(|e| panic!("{e}"));
            let built = model
                .build()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(built.skeleton.len(), model.bones.len());
            assert_eq!(built.rig.order.len(), model.bones.len());
            // Every bone's model position after FK of the rest pose is the file's position.
            let mut frames = ModelPose::new(&built.skeleton);
            fk::forward_kinematics(&built.skeleton, &built.skeleton.rest_pose(), &mut frames);
            for (b, bone) in model.bones.iter().enumerate() {
                let at = frames.position(built.joint_of_bone[b]);
                assert!(
                    at.distance(bone.position) < 1e-12,
                    "{}: {}",
                    path.display(),
                    bone.name
                );
            }
            // Skinning at rest reproduces the bind pose.
            let mesh = &built.mesh;
            mesh.validate(built.skeleton.len()).unwrap();
            for v in (0..mesh.vertex_count()).step_by(97) {
                let rest = DVec3::from(mesh.positions[v].map(f64::from));
                assert!(mesh.skinned_position(v, frames.transforms()).distance(rest) < 1e-6);
            }
            seen += 1;
        }
    }
    if ikarus_testdata::data_dir().is_some() {
        assert_eq!(seen, 5, "the five shared models");
    }
}

#[test]
fn miku_pmd_matches_its_bytes() {
    let Some(dir) = dir("miku_pmd_matches_its_bytes") else {
        return;
    };
    let model = read_mmd_model(&dir.join("Miku_Hatsune_Ver2.pmd"), 1.0).unwrap();
    assert_eq!(model.name, "初音ミク");
    assert_eq!(model.english_name, "Miku Hatsune");
    assert_eq!(
        (
            model.vertices.len(),
            model.indices.len(),
            model.materials.len(),
            model.bones.len()
        ),
        (12354, 68883, 17, 140)
    );
    // センター at (0, 8, 0) units; 左ひざ (bone 41) at (0.673676, 5.927077, −0.053481): metres,
    // Z flipped.
    assert_eq!(model.bones[0].name, "センター");
    assert!(model.bones[0].position.distance(DVec3::new(0.0, 0.64, 0.0)) < 1e-7);
    let knee = &model.bones[41];
    assert_eq!(knee.name, "左ひざ");
    let expected = DVec3::new(0.673_676_0, 5.927_077, 0.053_481) * 0.08;
    assert!(
        knee.position.distance(expected) < 1e-7,
        "{:?}",
        knee.position
    );
    assert_eq!(knee.parent, Some(40));
    // Seven IK chains; the legs: 40 loops, control weight 0.5 → unit angle 2 rad, knee first.
    assert_eq!(model.ik.len(), 7);
    let built = model.build().unwrap();
    let leg = built.rig.ik.iter().find(|c| c.name == "左足ＩＫ").unwrap();
    assert_eq!((leg.iterations, leg.unit_angle), (40, 2.0));
    let names: Vec<&str> = leg
        .links
        .iter()
        .map(|l| built.skeleton.name(l.joint))
        .collect();
    assert_eq!(names, ["左ひざ", "左足"]);
    // PMD knees get X in [0.5°, 180°] (right-handed), the other link none.
    let limit = leg.links[0].limit.unwrap();
    assert!((limit.min[0] - 0.5_f64.to_radians()).abs() < 1e-12);
    assert_eq!(limit.max, [std::f64::consts::PI, 0.0, 0.0]);
    assert!(leg.links[1].limit.is_none());
    assert_eq!(built.skeleton.name(leg.effector), "左足首");
    // Every material is opaque: none is drawn double-sided.
    assert!(
        model
            .materials
            .iter()
            .all(|m| !m.double_sided && m.diffuse[3] == 1.0)
    );
}

#[test]
fn gene_pmx_matches_its_bytes() {
    let Some(dir) = dir("gene_pmx_matches_its_bytes") else {
        return;
    };
    let model = read_mmd_model(&dir.join("Gene.pmx"), 1.0).unwrap();
    assert_eq!(model.bones.len(), 224);
    assert_eq!(model.vertices.len(), 28646);
    assert_eq!(
        (model.morph_count, model.rigid_body_count, model.joint_count),
        (184, 87, 92)
    );
    // Drawing flag bit 0 (double-sided) is set on one of the 13 materials (read by hand).
    let double: Vec<&str> = model
        .materials
        .iter()
        .filter(|m| m.double_sided)
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!((model.materials.len(), double), (13, vec!["イライラ"]));
    let built = model.build().unwrap();
    assert_eq!(built.rig.ik.len(), 6);
    assert_eq!(built.rig.after_physics, 38);
    assert!(
        built
            .mesh
            .materials
            .iter()
            .filter(|m| m.double_sided)
            .count()
            == 1
    );
    // The knee limit −165°..10° about X (left-handed) becomes −10°..165° (right-handed).
    let leg = built.rig.ik.iter().find(|c| c.name == "左足ＩＫ").unwrap();
    let limit = leg.links[0].limit.unwrap();
    assert!(
        (limit.min[0] - (-10f64).to_radians()).abs() < 1e-6,
        "{limit:?}"
    );
    assert!(
        (limit.max[0] - 165f64.to_radians()).abs() < 1e-6,
        "{limit:?}"
    );
    // Inheritance: 左目 follows 両目 by 0.15.
    let eye = built.skeleton.joint("左目").unwrap();
    let inherit = built.rig.inherit[eye.index()].unwrap();
    assert!((inherit.ratio - 0.15).abs() < 1e-6);
    assert_eq!(built.skeleton.name(inherit.source), "両目");
}

#[test]
fn kishimen_vmd_matches_its_bytes_and_samples_its_keys() {
    let Some(dir) = dir("kishimen_vmd_matches_its_bytes") else {
        return;
    };
    let vmd = read_vmd(&dir.join("kishimen.vmd"), 1.0).unwrap();
    assert_eq!(vmd.bones.len(), 3655);
    assert_eq!(vmd.morphs.len(), 256);
    assert_eq!(vmd.keyed_bones().len(), 122);
    let first = &vmd.bones[0];
    assert_eq!((first.name.as_str(), first.frame), ("センター", 0));
    // (0, −0.32, 0) units and (0, −0.247404, 0, 0.968912) left-handed.
    assert!(first.translation.distance(DVec3::new(0.0, -0.0256, 0.0)) < 1e-8);
    let rotation = DQuat::from_xyzw(0.0, 0.247_403_8, 0.0, 0.968_912_005);
    assert!(
        (first.rotation - rotation).length() < 1e-7,
        "{:?}",
        first.rotation
    );
    // Sampling at a key returns the key; between keys, the later key's curves.
    let model = read_mmd_model(&dir.join("Miku_Hatsune_Ver2.pmd"), 1.0).unwrap();
    let built = model.build().unwrap();
    let bound = BoundMotion::new(&vmd, &built.skeleton);
    assert!(bound.unmatched.is_empty(), "{:?}", bound.unmatched);
    let center = built.skeleton.joint("センター").unwrap();
    let mut keys: Vec<_> = vmd.bones.iter().filter(|k| k.name == "センター").collect();
    keys.sort_by_key(|k| k.frame);
    let mut pose = built.skeleton.rest_pose();
    let rest = built.skeleton.rest(center).translation;
    for pair in keys.windows(2).take(20) {
        let (a, b) = (pair[0], pair[1]);
        bound.sample(&built.skeleton, f64::from(a.frame), &mut pose);
        let local = pose.transforms()[center.index()];
        assert!(local.translation.distance(rest + a.translation) < 1e-12);
        assert!(same_rotation(local.rotation, a.rotation.normalize(), 1e-12));
        if b.frame > a.frame + 1 {
            let frame = f64::from(a.frame) + 0.37 * f64::from(b.frame - a.frame);
            bound.sample(&built.skeleton, frame, &mut pose);
            let local = pose.transforms()[center.index()];
            let s = Bezier::from_interpolation(&b.interpolation, 1).y_at(0.37);
            let y = a.translation.y + (b.translation.y - a.translation.y) * s;
            assert!((local.translation.y - rest.y - y).abs() < 1e-12);
            let r = Bezier::from_interpolation(&b.interpolation, 3).y_at(0.37);
            let expected = a.rotation.normalize().slerp(b.rotation.normalize(), r);
            assert!(same_rotation(local.rotation, expected, 1e-12));
        }
    }
}

#[test]
fn sampling_in_any_order_gives_the_same_poses_and_glams_slerp() {
    let Some(dir) = dir("sampling_in_any_order") else {
        return;
    };
    let vmd = read_vmd(&dir.join("kishimen.vmd"), 1.0).unwrap();
    let built = read_mmd_model(&dir.join("Miku_Hatsune_Ver2.pmd"), 1.0)
        .unwrap()
        .build()
        .unwrap();
    let skeleton = &built.skeleton;
    // The binding remembers where the last sample fell (a hint for forward playback):
    // forward, backward and jumping samples, warm or fresh, agree bit for bit. Half frames
    // from before the first key to past the last.
    let frames: Vec<f64> = (0..1300).map(|i| f64::from(i) * 0.5 - 10.0).collect();
    let forward = BoundMotion::new(&vmd, skeleton);
    let mut pose = skeleton.rest_pose();
    let poses: Vec<_> = frames
        .iter()
        .map(|&f| {
            forward.sample(skeleton, f, &mut pose);
            pose.clone()
        })
        .collect();
    for (i, &f) in frames.iter().enumerate().rev() {
        forward.sample(skeleton, f, &mut pose);
        assert_eq!(pose, poses[i], "backward at {f}");
    }
    let jumping = BoundMotion::new(&vmd, skeleton);
    for step in 0..frames.len() {
        let i = (step * 389) % frames.len();
        jumping.sample(skeleton, frames[i], &mut pose);
        assert_eq!(pose, poses[i], "jumping to {}", frames[i]);
    }
    // Every keyed bone between every two keys: glam's slerp of the two keys at the later
    // key's rotation curve (the binding computes each segment's angle once).
    let mut checked = 0;
    for name in vmd.keyed_bones() {
        let joint = skeleton.joint(name).unwrap();
        let mut keys: Vec<_> = vmd.bones.iter().filter(|k| k.name == name).collect();
        keys.sort_by_key(|k| k.frame);
        keys.dedup_by(|later, earlier| {
            let same = later.frame == earlier.frame;
            if same {
                *earlier = *later; // The file's last key at a frame wins.
            }
            same
        });
        for pair in keys.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let frame = f64::from(a.frame) + 0.37 * f64::from(b.frame - a.frame);
            forward.sample(skeleton, frame, &mut pose);
            let r = Bezier::from_interpolation(&b.interpolation, 3).y_at(0.37);
            let expected = a.rotation.normalize().slerp(b.rotation.normalize(), r);
            let rotation = pose.transforms()[joint.index()].rotation;
            assert!(
                same_rotation(rotation, expected, 1e-12),
                "{name} at {frame}: {rotation:?}, glam {expected:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 3000, "{checked}");
}

#[test]
fn bezier_matches_its_definition() {
    // Control points (x1, y1) = (0.2, 0.9), (x2, y2) = (0.6, 0.1) as bytes.
    let mut bytes = [0u8; 64];
    let to_byte = |v: f64| (v * 127.0).round() as u8;
    bytes[0] = to_byte(0.2);
    bytes[4] = to_byte(0.9);
    bytes[8] = to_byte(0.6);
    bytes[12] = to_byte(0.1);
    let curve = Bezier::from_interpolation(&bytes, 0);
    let cubic = |a: f64, b: f64, t: f64| {
        3.0 * (1.0 - t).powi(2) * t * a + 3.0 * (1.0 - t) * t * t * b + t.powi(3)
    };
    for i in 0..=20 {
        let t = f64::from(i) / 20.0;
        let x = cubic(curve.p1[0], curve.p2[0], t);
        let y = cubic(curve.p1[1], curve.p2[1], t);
        assert!((curve.y_at(x) - y).abs() < 1e-9, "t = {t}");
    }
}

#[test]
fn vmd_write_read_is_lossless() {
    for path in ikarus_testdata::files("mmd", "vmd", "vmd_write_read_is_lossless") {
        let bytes = std::fs::read(&path).unwrap();
        let vmd = Vmd::parse(&bytes, 1.0).unwrap();
        let written = vmd.write(1.0).unwrap();
        let again = Vmd::parse(&written, 1.0).unwrap();
        assert!(vmd == again, "{}", path.display());
        // The sections are byte-identical to the file's (a file may end before its last
        // empty sections; the writer writes them all).
        let (header, end) = (30 + 20, written.len().min(bytes.len()));
        assert!(
            written[header..end] == bytes[header..end],
            "{}",
            path.display()
        );
        assert!(written[end..].iter().all(|&b| b == 0));
    }
}

#[test]
fn motion_frames_round_trip_through_vmd() {
    let Some(dir) = dir("motion_frames_round_trip_through_vmd") else {
        return;
    };
    let model = read_mmd_model(&dir.join("yw_test_basic_bone.pmx"), 1.0).unwrap();
    let built = model.build().unwrap();
    let vmd = read_vmd(&dir.join("kishimen.vmd"), 1.0).unwrap();
    let bound = BoundMotion::new(&vmd, &built.skeleton);
    let frames: Vec<_> = (0..40)
        .map(|f| {
            let mut pose = built.skeleton.rest_pose();
            bound.sample(&built.skeleton, f64::from(f) * 3.5, &mut pose);
            pose
        })
        .collect();
    let out = Vmd::from_frames(&built.skeleton, &frames, &model.name).unwrap();
    let back = Vmd::parse(&out.write(1.0).unwrap(), 1.0).unwrap();
    let rebound = BoundMotion::new(&back, &built.skeleton);
    assert!(rebound.unmatched.is_empty());
    let mut pose = built.skeleton.rest_pose();
    for (f, expected) in frames.iter().enumerate() {
        rebound.sample(&built.skeleton, f as f64, &mut pose);
        for (a, b) in pose.transforms().iter().zip(expected.transforms()) {
            assert!(a.translation.distance(b.translation) < 1e-6);
            assert!(a.rotation.angle_between(b.rotation) < 1e-6);
        }
    }
}

fn expect_error(result: Result<impl std::fmt::Debug, MmdError>, len: usize) -> MmdError {
    let error = result.expect_err("malformed input must be an error");
    assert!(error.offset <= len, "offset {} past {len}", error.offset);
    assert!(!error.message.is_empty());
    error
}

#[test]
fn truncated_files_are_errors_with_offsets() {
    let Some(dir) = dir("truncated_files_are_errors_with_offsets") else {
        return;
    };
    for name in ["Miku_Hatsune_Ver2.pmd", "yw_test_model.pmx", "kishimen.vmd"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        // A PMD may end after its IK/morph sections and a VMD after any section, so only cuts
        // inside a required section must fail; none may panic.
        let step = (bytes.len() / 300).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            let part = &bytes[..cut];
            let result = match name.rsplit('.').next() {
                Some("pmd") => pmd::parse(part, 1.0).map(|_| ()),
                Some("pmx") => pmx::parse(part, 1.0).map(|_| ()),
                _ => Vmd::parse(part, 1.0).map(|_| ()),
            };
            if let Err(error) = result {
                assert!(error.offset <= cut);
            } else {
                assert!(name != "yw_test_model.pmx", "{name} cut at {cut} parsed");
            }
        }
    }
}

#[test]
fn counts_past_the_file_indices_past_their_tables_and_bad_text_are_errors() {
    let Some(dir) = dir("counts_past_the_file") else {
        return;
    };
    let pmd_bytes = std::fs::read(dir.join("Miku_Hatsune_Ver2.pmd")).unwrap();
    // The vertex count (offset 283) made huge: refused before any allocation.
    let mut huge = pmd_bytes.clone();
    huge[283..287].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let error = expect_error(pmd::parse(&huge, 1.0), huge.len());
    assert_eq!(error.offset, 287);
    assert!(error.message.contains("vertices"), "{error}");
    // The first face index (after 12354 vertices) pointing past the vertices.
    let mut bad_face = pmd_bytes.clone();
    let face = 287 + 38 * 12354 + 4;
    bad_face[face..face + 2].copy_from_slice(&60000u16.to_le_bytes());
    let error = expect_error(pmd::parse(&bad_face, 1.0), bad_face.len());
    assert_eq!(error.offset, face);
    // A bone parent loop (センター's parent set to 左ひざ, a descendant): the model parses, the
    // skeleton refuses it.
    let bones = face - 4 + 4 + 2 * 68883 + 4 + 70 * 17 + 2;
    let mut cyclic = pmd_bytes.clone();
    cyclic[bones + 20..bones + 22].copy_from_slice(&41u16.to_le_bytes());
    let model = pmd::parse(&cyclic, 1.0).unwrap();
    let error = model.build().expect_err("a parent loop must not build");
    assert!(
        matches!(
            error,
            ikarus_formats::mmd::MmdBuildError::Skeleton(ikarus_core::SkeletonError::Cycle { .. })
        ),
        "{error}"
    );
    // A PMX model name that is not UTF-16 (a lone high surrogate).
    let mut pmx_bytes = std::fs::read(dir.join("yw_test_model.pmx")).unwrap();
    let name_at = 4 + 4 + 1 + 8 + 4;
    pmx_bytes[name_at..name_at + 2].copy_from_slice(&[0x00, 0xd8]);
    let error = expect_error(pmx::parse(&pmx_bytes, 1.0), pmx_bytes.len());
    assert_eq!(error.offset, name_at);
    assert!(error.message.contains("UTF-16"), "{error}");
    // A VMD whose bone count exceeds the file.
    let mut vmd_bytes = std::fs::read(dir.join("kishimen.vmd")).unwrap();
    vmd_bytes[50..54].copy_from_slice(&1_000_000u32.to_le_bytes());
    let error = expect_error(Vmd::parse(&vmd_bytes, 1.0), vmd_bytes.len());
    assert!(error.message.contains("bone keys"), "{error}");
}

#[test]
fn pmd_and_standard_bone_pmx_share_their_skeleton() {
    let Some(dir) = dir("pmd_and_standard_bone_pmx_share_their_skeleton") else {
        return;
    };
    let pmd_model = read_mmd_model(&dir.join("Miku_Hatsune_Ver2.pmd"), 1.0).unwrap();
    let pmx_model = read_mmd_model(&dir.join("yw_test_basic_bone.pmx"), 1.0).unwrap();
    let index = pmx_model.bone_index();
    let shared: Vec<_> = pmd_model
        .bones
        .iter()
        .filter_map(|b| {
            index
                .get(b.name.as_str())
                .map(|&i| (b, &pmx_model.bones[i]))
        })
        .collect();
    assert_eq!(shared.len(), 78);
    // Equal to the files' float precision (the PMX was converted from the PMD's numbers).
    for (a, b) in shared {
        assert!(a.position.distance(b.position) < 1e-6, "{}", a.name);
    }
}

#[test]
fn mesh_triangles_wind_counter_clockwise_around_their_normals() {
    for extension in ["pmx", "pmd"] {
        for path in ikarus_testdata::files("mmd", extension, "mesh_triangles_wind") {
            let built = read_mmd_model(&path, 1.0).unwrap().build().unwrap();
            let mesh = &built.mesh;
            if mesh.indices.is_empty() {
                continue;
            }
            let point = |i: u32| DVec3::from(mesh.positions[i as usize].map(f64::from));
            let normal = |i: u32| DVec3::from(mesh.normals[i as usize].map(f64::from));
            let agree = mesh
                .indices
                .chunks_exact(3)
                .filter(|t| {
                    let face = (point(t[1]) - point(t[0])).cross(point(t[2]) - point(t[0]));
                    face.dot(normal(t[0]) + normal(t[1]) + normal(t[2])) > 0.0
                })
                .count();
            let total = mesh.triangle_count();
            // A few triangles of real models have normals that disagree with their faces.
            assert!(
                agree * 100 >= total * 99,
                "{}: {agree} of {total}",
                path.display()
            );
        }
    }
}

#[test]
fn vmd_names_that_collide_in_15_bytes_are_refused_and_cut_names_still_bind() {
    use ikarus_core::{JointLimit, RawJoint, SkeletonBuilder, Transform};
    use ikarus_formats::mmd::vmd::VmdWriteError;
    // Eight full-width characters are 16 Shift-JIS bytes: the first two names share their
    // first 15 bytes (7 characters and the first byte of the 8th is cut), the third differs
    // early and is only cut.
    let build = |names: &[&str]| {
        let mut builder = SkeletonBuilder::new();
        for (i, name) in names.iter().enumerate() {
            builder.push(RawJoint {
                name: (*name).to_owned(),
                parent: (i > 0).then(|| names[0].to_owned()),
                rest: Transform::from_translation(ikarus_core::glam::DVec3::new(
                    0.0, i as f64, 0.0,
                )),
                limit: JointLimit::Free,
            });
        }
        builder.build().unwrap()
    };
    let skeleton = build(&["センター", "左腕捩れ補助ボーン１", "左腕捩れ補助ボーン２"]);
    let error = Vmd::from_frames(&skeleton, &[skeleton.rest_pose()], "model").unwrap_err();
    assert!(
        matches!(&error, VmdWriteError::NameCollision { first, second }
            if first == "左腕捩れ補助ボーン１" && second == "左腕捩れ補助ボーン２"),
        "{error}"
    );
    assert!(error.to_string().contains("rename one"), "{error}");
    // A long name that stays unique is written cut, and binds back to its bone the way MMD
    // matches it (by the cut bytes).
    let skeleton = build(&["センター", "左腕捩れ補助ボーン１", "右足"]);
    let mut pose = skeleton.rest_pose();
    pose.transforms_mut()[1].rotation = ikarus_core::glam::DQuat::from_rotation_z(0.4);
    let vmd = Vmd::from_frames(&skeleton, &[pose.clone()], "model").unwrap();
    let back = Vmd::parse(&vmd.write(1.0).unwrap(), 1.0).unwrap();
    let bound = BoundMotion::new(&back, &skeleton);
    assert!(bound.unmatched.is_empty());
    let mut sampled = skeleton.rest_pose();
    bound.sample(&skeleton, 0.0, &mut sampled);
    assert!(
        sampled.transforms()[1]
            .rotation
            .angle_between(pose.transforms()[1].rotation)
            < 1e-6
    );
}
