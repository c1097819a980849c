//! Parity with an independent MMD runtime: `mmd-anim-runtime` 0.5.3 (crates.io), evaluated
//! bone by bone against [`MmdEvaluator`] in compatible mode on the shared models and motions,
//! every frame.
//!
//! **How the two are fed.** Both read the same files through ikarus's readers: the runtime
//! has no file reader of its own (its sibling crate's PMD loader takes PMD's absolute bone
//! heads for parent offsets, so it is not used). Its model is the v1 descriptor built from
//! [`MmdModel`] converted back to MMD's frame and units (positions `(x, y, −z) / 0.08`,
//! quaternions `(−x, −y, z, w)`, link limits back to left-handed ranges); PMD knees get the
//! limit ikarus gives them (X in `[−180°, −0.5°]` left-handed), the one MMD applies to bones
//! named ひざ. Each frame, both get the same animated local pose (ikarus's VMD sampling, so
//! interpolation is not under test here) and the motion's IK switches; the runtime solves
//! with its defaults (tolerance 1e-4 units). Frames are played in order, as a player does
//! (the runtime keeps some IK state from frame to frame).
//!
//! **What is compared.** Each bone's model-space position, ours converted to MMD units in
//! MMD's left-handed frame, per frame; per bone the median and the maximum over the frames.
//! Bones are grouped by class: IK links, IK goals and effectors, inherited (付与) bones, and
//! the rest (plain FK, which includes bones below IK links).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use glam_reference::{Quat as RefQuat, Vec3A};
use ikarus_anim::mmd::{MmdEvaluator, MmdSettings};
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose};
use ikarus_formats::mmd::vmd::BoundMotion;
use ikarus_formats::mmd::{BoneFlags, METRES_PER_UNIT, MmdModel, ModelFormat};
use ikarus_formats::{read_mmd_model, read_vmd};
use mmd_anim_runtime::{
    BoneIndex, HostPoseView, IkAngleLimit, RuntimeAppendTransformDescriptorV1,
    RuntimeBoneDescriptorV1, RuntimeIkLinkDescriptorV1, RuntimeIkSolverDescriptorV1,
    RuntimeInstance, RuntimeModelDescriptorV1, compile_runtime_model_descriptor_v1,
};

const MODELS: [&str; 5] = [
    "Miku_Hatsune_Ver2.pmd",
    "Gene.pmx",
    "yw_test_model.pmx",
    "yw_test_basic_bone.pmx",
    "yw_test_semi_basic_bone.pmx",
];
const MOTIONS: [&str; 3] = ["kishimen.vmd", "gene_stand.vmd", "arm.vmd"];

/// A bone's class, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Link,
    GoalOrEffector,
    Inherited,
    Fk,
}

/// One model × motion compared.
struct Compared {
    names: Vec<String>,
    classes: Vec<Class>,
    /// Per bone (file order), the distance per frame to the runtime, MMD units.
    distances: Vec<Vec<f64>>,
    /// The same to the runtime played chain by chain ([`staged`]).
    staged: Vec<Vec<f64>>,
}

/// ikarus model space (right-handed metres) → MMD (left-handed units).
fn to_mmd(p: DVec3) -> DVec3 {
    DVec3::new(p.x, p.y, -p.z) / METRES_PER_UNIT
}

fn vec3a(p: DVec3) -> Vec3A {
    Vec3A::new(p.x as f32, p.y as f32, p.z as f32)
}

fn quat_to_mmd(q: DQuat) -> RefQuat {
    RefQuat::from_xyzw(-q.x as f32, -q.y as f32, q.z as f32, q.w as f32).normalize()
}

/// The runtime's descriptor of `model`, in MMD's frame and units.
fn descriptor(model: &MmdModel) -> RuntimeModelDescriptorV1 {
    let bones = model
        .bones
        .iter()
        .map(|bone| {
            let mut d = RuntimeBoneDescriptorV1::new(
                bone.parent.map(|p| BoneIndex(p as u32)),
                vec3a(to_mmd(bone.position)),
            );
            d.transform_order = bone.deform_layer;
            d.transform_after_physics = bone.flags.has(BoneFlags::AFTER_PHYSICS);
            d.fixed_axis = bone
                .fixed_axis
                .map(|a| vec3a(DVec3::new(a.x, a.y, -a.z)).normalize());
            d
        })
        .collect();
    let ik_solvers = model
        .ik
        .iter()
        .map(|chain| {
            let links = chain
                .links
                .iter()
                .map(|link| {
                    let mut d = RuntimeIkLinkDescriptorV1::new(BoneIndex(link.bone as u32));
                    let knee = model.format == ModelFormat::Pmd
                        && model.bones[link.bone].name.contains("ひざ");
                    d.angle_limit = match link.limit {
                        // Right-handed (min, max) → left-handed: X and Y negate and swap.
                        Some((min, max)) => Some(IkAngleLimit::new(
                            Vec3A::new(-max.x as f32, -max.y as f32, min.z as f32),
                            Vec3A::new(-min.x as f32, -min.y as f32, max.z as f32),
                        )),
                        None if knee => Some(IkAngleLimit::new(
                            Vec3A::new(-std::f32::consts::PI, 0.0, 0.0),
                            Vec3A::new(-0.5f32.to_radians(), 0.0, 0.0),
                        )),
                        None => None,
                    };
                    d
                })
                .collect();
            let mut d = RuntimeIkSolverDescriptorV1::new(
                BoneIndex(chain.bone as u32),
                BoneIndex(chain.target as u32),
                links,
            );
            d.iteration_count = chain.iterations.max(1);
            d.limit_angle = chain.unit_angle as f32;
            d
        })
        .collect();
    let append_transforms = model
        .bones
        .iter()
        .enumerate()
        .filter_map(|(i, bone)| {
            let rotation = bone.flags.has(BoneFlags::INHERIT_ROTATION);
            let translation = bone.flags.has(BoneFlags::INHERIT_TRANSLATION);
            let inherit = bone.inherit.filter(|_| rotation || translation)?;
            if inherit.source >= model.bones.len() || inherit.source == i {
                return None;
            }
            let mut d = RuntimeAppendTransformDescriptorV1::new(
                BoneIndex(i as u32),
                BoneIndex(inherit.source as u32),
                inherit.ratio as f32,
            );
            d.affect_rotation = rotation;
            d.affect_translation = translation;
            d.local = bone.flags.has(BoneFlags::INHERIT_LOCAL);
            Some(d)
        })
        .collect();
    RuntimeModelDescriptorV1 {
        bones,
        ik_solvers,
        append_transforms,
        ..RuntimeModelDescriptorV1::default()
    }
}

fn classes(model: &MmdModel) -> Vec<Class> {
    let mut classes = vec![Class::Fk; model.bones.len()];
    for (i, bone) in model.bones.iter().enumerate() {
        if bone.inherit.is_some()
            && (bone.flags.has(BoneFlags::INHERIT_ROTATION)
                || bone.flags.has(BoneFlags::INHERIT_TRANSLATION))
        {
            classes[i] = Class::Inherited;
        }
    }
    for chain in &model.ik {
        for b in [chain.bone, chain.target] {
            classes[b] = classes[b].min(Class::GoalOrEffector);
        }
        for link in &chain.links {
            classes[link.bone] = Class::Link;
        }
    }
    classes
}

/// Plays `motion_file` on `model_file` in both runtimes; `None` without the shared data.
fn compare(model_file: &str, motion_file: &str, settings: MmdSettings) -> Option<Compared> {
    let dir = ikarus_testdata::require("mmd", "mmd parity")?;
    compare_in(&dir, model_file, motion_file, settings).into()
}

fn compare_in(dir: &Path, model_file: &str, motion_file: &str, settings: MmdSettings) -> Compared {
    let model = read_mmd_model(&dir.join(model_file), 1.0).unwrap();
    let built = model.build().unwrap();
    let skeleton = &built.skeleton;
    let vmd = read_vmd(&dir.join(motion_file), 1.0).unwrap();
    let motion = BoundMotion::new(&vmd, skeleton);

    let mut ours = MmdEvaluator::new(skeleton, &built.rig, settings).unwrap();
    let chain_names = ours.chain_names().to_vec();
    let arena = compile_runtime_model_descriptor_v1(&descriptor(&model)).unwrap();
    let arena = Arc::new(arena);
    let mut reference = RuntimeInstance::new(Arc::clone(&arena));
    let mut staged_reference = RuntimeInstance::new(arena);
    // The order the runtime solves chains in: after-physics last, then the IK bone's deform
    // layer, then bone order.
    let mut chain_order: Vec<usize> = (0..model.ik.len()).collect();
    chain_order.sort_by_key(|&c| {
        let bone = &model.bones[model.ik[c].bone];
        (
            bone.flags.has(BoneFlags::AFTER_PHYSICS),
            bone.deform_layer,
            model.ik[c].bone,
        )
    });
    let reference_ik_names: Vec<&str> = model
        .ik
        .iter()
        .map(|c| model.bones[c.bone].name.as_str())
        .collect();

    let n = model.bones.len();
    let rest: Vec<DVec3> = built
        .joint_of_bone
        .iter()
        .map(|&j| skeleton.rest(j).translation)
        .collect();
    let mut animated = skeleton.rest_pose();
    let mut out: LocalPose = skeleton.rest_pose();
    let mut frames = ModelPose::new(skeleton);
    let mut offsets = vec![Vec3A::ZERO; n];
    let mut rotations = vec![RefQuat::IDENTITY; n];
    let scales = vec![Vec3A::ONE; n];
    let morphs = vec![0.0f32; reference.pose().morph_weights().len()];
    let mut distances = vec![Vec::new(); n];
    let mut staged = vec![Vec::new(); n];
    for frame in 0..=motion.last_frame() {
        let frame = f64::from(frame);
        motion.sample(skeleton, frame, &mut animated);
        let enabled: Vec<bool> = chain_names
            .iter()
            .map(|name| motion.ik_enabled(name, frame))
            .collect();
        ours.evaluate(skeleton, &animated, &enabled, &mut out, &mut frames);

        for (b, &j) in built.joint_of_bone.iter().enumerate() {
            let local = animated.transforms()[j.index()];
            let offset = local.translation - rest[b];
            offsets[b] = vec3a(DVec3::new(offset.x, offset.y, -offset.z) / METRES_PER_UNIT);
            rotations[b] = quat_to_mmd(local.rotation);
        }
        let ik_enabled: Vec<u8> = reference_ik_names
            .iter()
            .map(|name| u8::from(motion.ik_enabled(name, frame)))
            .collect();
        reference
            .apply_host_pose(&HostPoseView {
                local_position_offsets: &offsets,
                local_rotations: &rotations,
                local_scales: &scales,
                morph_weights: &morphs,
                ik_enabled: &ik_enabled,
            })
            .unwrap();
        reference.evaluate_current_pose();
        stage(
            &mut staged_reference,
            &chain_order,
            &offsets,
            &rotations,
            &ik_enabled,
        );
        for (b, &j) in built.joint_of_bone.iter().enumerate() {
            let ours = to_mmd(frames.position(j));
            for (runtime, out) in [
                (&reference, &mut distances),
                (&staged_reference, &mut staged),
            ] {
                let theirs = runtime.world_matrices()[b].w_axis;
                let theirs = DVec3::new(
                    f64::from(theirs.x),
                    f64::from(theirs.y),
                    f64::from(theirs.z),
                );
                out[b].push(ours.distance(theirs));
            }
        }
    }
    Compared {
        names: model.bones.iter().map(|b| b.name.clone()).collect(),
        classes: classes(&model),
        distances,
        staged,
    }
}

/// The runtime played chain by chain: one evaluation per enabled chain (in the runtime's
/// order) with only that chain on, each from the local rotations the previous one left.
/// Every chain then starts from a world pass that includes the chains before it; in one
/// evaluation the runtime keeps another chain's effector where its layer's world pass left
/// it, before the chains that move it (see `toe_chains_differ_by_the_stale_effector`).
fn stage(
    runtime: &mut RuntimeInstance,
    chain_order: &[usize],
    offsets: &[Vec3A],
    rotations: &[RefQuat],
    enabled: &[u8],
) {
    let scales = vec![Vec3A::ONE; offsets.len()];
    let morphs = vec![0.0f32; runtime.pose().morph_weights().len()];
    let mut rotations = rotations.to_vec();
    let mut only = vec![0u8; enabled.len()];
    let mut ran = false;
    for &c in chain_order.iter().filter(|&&c| enabled[c] != 0) {
        only.fill(0);
        only[c] = 1;
        runtime
            .apply_host_pose(&HostPoseView {
                local_position_offsets: offsets,
                local_rotations: &rotations,
                local_scales: &scales,
                morph_weights: &morphs,
                ik_enabled: &only,
            })
            .unwrap();
        runtime.evaluate_current_pose();
        rotations.copy_from_slice(runtime.pose().local_rotations());
        ran = true;
    }
    if !ran {
        only.fill(0);
        runtime
            .apply_host_pose(&HostPoseView {
                local_position_offsets: offsets,
                local_rotations: &rotations,
                local_scales: &scales,
                morph_weights: &morphs,
                ik_enabled: &only,
            })
            .unwrap();
        runtime.evaluate_current_pose();
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return 0.0;
    }
    let m = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[m]
    } else {
        0.5 * (sorted[m - 1] + sorted[m])
    }
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

/// Per class: bones, the largest per-bone median, the largest per-bone max (and its bone).
fn report(model: &str, motion: &str, c: &Compared) {
    let mut per_class: BTreeMap<Class, (usize, f64, f64, String)> = BTreeMap::new();
    for (b, d) in c.distances.iter().enumerate() {
        let entry = per_class
            .entry(c.classes[b])
            .or_insert((0, 0.0, 0.0, String::new()));
        entry.0 += 1;
        entry.1 = entry.1.max(median(d));
        let m = max(d);
        if m > entry.2 {
            entry.2 = m;
            entry.3.clone_from(&c.names[b]);
        }
    }
    println!("{model} × {motion} ({} frames)", c.distances[0].len());
    let mut staged_worst: Vec<(f64, f64, usize)> = c
        .staged
        .iter()
        .enumerate()
        .map(|(b, d)| (max(d), median(d), b))
        .collect();
    staged_worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (m, med, b) in staged_worst.iter().take(4) {
        println!(
            "  staged: {} [{:?}] median {med:.2e} max {m:.2e}",
            c.names[*b], c.classes[*b]
        );
    }
    if let Ok(dump) = std::env::var("MMD_PARITY_DUMP") {
        for (b, d) in c.distances.iter().enumerate() {
            if c.names[b] == dump {
                let line: Vec<String> = d.iter().map(|x| format!("{x:.1e}")).collect();
                println!("  dump {dump}: {}", line.join(" "));
            }
        }
    }
    for (class, (count, med, mx, worst)) in &per_class {
        println!("  {class:?}: {count} bones, median ≤ {med:.2e}, max {mx:.2e} ({worst})");
    }
    let mut worst: Vec<(f64, f64, usize)> = c
        .distances
        .iter()
        .enumerate()
        .map(|(b, d)| (max(d), median(d), b))
        .filter(|&(m, med, _)| m > 0.05 || med > 1e-4)
        .collect();
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (m, med, b) in worst.iter().take(12) {
        let frame = c.distances[*b]
            .iter()
            .position(|&d| d == *m)
            .unwrap_or_default();
        println!(
            "    {} [{:?}] median {med:.2e} max {m:.2e} at frame {frame}",
            c.names[*b], c.classes[*b]
        );
    }
}

#[test]
#[ignore = "diagnostic: every model × motion, printed"]
fn parity_every_pair_report() {
    for model in MODELS {
        for motion in MOTIONS {
            let Some(c) = compare(model, motion, MmdSettings::default()) else {
                return;
            };
            report(model, motion, &c);
        }
    }
}

#[test]
#[ignore = "diagnostic"]
fn print_chains() {
    let dir = ikarus_testdata::require("mmd", "mmd parity").unwrap();
    for model_file in MODELS {
        let model = read_mmd_model(&dir.join(model_file), 1.0).unwrap();
        println!("{model_file}");
        for (i, b) in model.bones.iter().enumerate() {
            if b.name.contains("足") || b.name.contains("ひざ") || b.name.contains("つま先") {
                println!(
                    "    bone {i} {} parent {:?} layer {} ap {} inherit {:?} flags {:x}",
                    b.name,
                    b.parent.map(|p| model.bones[p].name.clone()),
                    b.deform_layer,
                    b.flags.has(BoneFlags::AFTER_PHYSICS),
                    b.inherit
                        .map(|h| (model.bones[h.source].name.clone(), h.ratio)),
                    b.flags.0
                );
            }
        }
        for chain in &model.ik {
            let links: Vec<String> = chain
                .links
                .iter()
                .map(|l| {
                    let b = &model.bones[l.bone];
                    format!(
                        "{}{}{}{}",
                        b.name,
                        if l.limit.is_some() {
                            format!("{:?}", l.limit.unwrap())
                        } else {
                            String::new()
                        },
                        if b.fixed_axis.is_some() { " fixed" } else { "" },
                        if b.inherit.is_some() {
                            format!(" inh<{}", model.bones[b.inherit.unwrap().source].name)
                        } else {
                            String::new()
                        }
                    )
                })
                .collect();
            println!(
                "  {} -> {} it {} unit {:.4} layer {} ap {}: {}",
                model.bones[chain.bone].name,
                model.bones[chain.target].name,
                chain.iterations,
                chain.unit_angle,
                model.bones[chain.bone].deform_layer,
                model.bones[chain.bone].flags.has(BoneFlags::AFTER_PHYSICS),
                links.join(", ")
            );
        }
    }
}
