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
//!
//! **What is asserted** ([`parity_with_mmd_anim_runtime`], every model × motion, every
//! frame; a few seconds in a debug build): per bone, median ≤ 1e-4 units and max ≤ 0.05
//! units, except where one of two explanations, each pinned by its own check, applies:
//! - *Unconverged chains.* Hair, neckties and knees that end their budget short of the goal
//!   leave a last iterate that depends on rounding: the runtime itself moves by as much when
//!   its input rotations turn by 1e-6 rad. Where its result moves more than 1e-4 units so,
//!   the difference must stay within twice that spread (median and 95th percentile).
//! - *The runtime's stale effector.* Within one evaluation the runtime starts a chain from
//!   where its layer's world pass left the effector, before earlier chains moved it (the
//!   toe chains after the legs); bones behind such chains are compared with the runtime
//!   played chain by chain ([`stage`]) and [`toe_chains_differ_by_the_stale_effector`] pins
//!   the explanation.
//!
//! [`parity_every_pair_report`] (ignored) prints the per-class table.

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
    /// Per bone: whether its position depends on a chain whose effector an earlier chain
    /// moves ([`stale_effector_bones`]).
    stale: Vec<bool>,
    /// Per bone (file order), the distance per frame to the runtime, MMD units.
    distances: Vec<Vec<f64>>,
    /// The same to the runtime played chain by chain ([`stage`]).
    staged: Vec<Vec<f64>>,
    /// The runtime played chain by chain against itself with every input rotation turned
    /// by 1e-6 rad (the larger move of two turns about different axes): how far its own
    /// result moves for a change at the level of rounding.
    sensitivity: Vec<Vec<f64>>,
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

/// An animated local transform (ikarus) → the runtime's offset from rest and rotation.
fn local_to_mmd(local: ikarus_core::Transform, rest: DVec3) -> (Vec3A, RefQuat) {
    let offset = local.translation - rest;
    (
        vec3a(DVec3::new(offset.x, offset.y, -offset.z) / METRES_PER_UNIT),
        quat_to_mmd(local.rotation),
    )
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

/// The bones whose position depends on a chain whose effector lies below a link of a chain
/// solved before it (the toe chains after the legs): strictly below one of its links, or
/// inheriting from such a bone or from a link, or below one that does.
fn stale_effector_bones(model: &MmdModel, chain_order: &[usize]) -> Vec<bool> {
    let n = model.bones.len();
    let below = |bone: usize, ancestor: usize| {
        let mut current = model.bones[bone].parent;
        for _ in 0..n {
            match current {
                Some(p) if p == ancestor => return true,
                Some(p) => current = model.bones[p].parent,
                None => return false,
            }
        }
        false
    };
    let mut stale_links = Vec::new();
    for (i, &later) in chain_order.iter().enumerate() {
        let effector = model.ik[later].target;
        let moved = chain_order[..i]
            .iter()
            .any(|&c| model.ik[c].links.iter().any(|l| below(effector, l.bone)));
        if moved {
            stale_links.extend(model.ik[later].links.iter().map(|l| l.bone));
        }
    }
    let mut stale: Vec<bool> = (0..n)
        .map(|b| stale_links.iter().any(|&l| below(b, l)))
        .collect();
    loop {
        let mut changed = false;
        for b in 0..n {
            if stale[b] {
                continue;
            }
            let bone = &model.bones[b];
            let from_parent = bone.parent.is_some_and(|p| p < n && stale[p]);
            let from_source = bone.inherit.is_some_and(|h| {
                h.source < n && (stale[h.source] || stale_links.contains(&h.source))
            });
            if from_parent || from_source {
                stale[b] = true;
                changed = true;
            }
        }
        if !changed {
            return stale;
        }
    }
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
    let mut staged_reference = RuntimeInstance::new(Arc::clone(&arena));
    // Two copies nudged about different axes: the runtime's spread is the larger of their
    // moves, frame by frame.
    let mut perturbed = [
        RuntimeInstance::new(Arc::clone(&arena)),
        RuntimeInstance::new(arena),
    ];
    let nudges = [
        RefQuat::from_axis_angle(glam_reference::Vec3::new(0.6, 0.0, 0.8), 1e-6),
        RefQuat::from_axis_angle(glam_reference::Vec3::new(0.0, 0.8, -0.6), 1e-6),
    ];
    let mut nudged = vec![RefQuat::IDENTITY; model.bones.len()];
    let chain_order = solve_order(&model);
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
    let mut distances = vec![Vec::new(); n];
    let mut staged = vec![Vec::new(); n];
    let mut sensitivity = vec![Vec::new(); n];
    for frame in 0..=motion.last_frame() {
        let frame = f64::from(frame);
        motion.sample(skeleton, frame, &mut animated);
        let enabled: Vec<bool> = chain_names
            .iter()
            .map(|name| motion.ik_enabled(name, frame))
            .collect();
        ours.evaluate(skeleton, &animated, &enabled, &mut out, &mut frames);

        for (b, &j) in built.joint_of_bone.iter().enumerate() {
            (offsets[b], rotations[b]) = local_to_mmd(animated.transforms()[j.index()], rest[b]);
        }
        let ik_enabled: Vec<u8> = reference_ik_names
            .iter()
            .map(|name| u8::from(motion.ik_enabled(name, frame)))
            .collect();
        play(&mut reference, &offsets, &rotations, &ik_enabled);
        stage(
            &mut staged_reference,
            &chain_order,
            &offsets,
            &rotations,
            &ik_enabled,
        );
        for (runtime, nudge) in perturbed.iter_mut().zip(nudges) {
            for (q, r) in nudged.iter_mut().zip(&rotations) {
                *q = (nudge * *r).normalize();
            }
            stage(runtime, &chain_order, &offsets, &nudged, &ik_enabled);
        }
        for (b, &j) in built.joint_of_bone.iter().enumerate() {
            let a = staged_reference.world_matrices()[b].w_axis;
            let spread = perturbed
                .iter()
                .map(|runtime| (a - runtime.world_matrices()[b].w_axis).truncate().length())
                .fold(0.0f32, f32::max);
            sensitivity[b].push(f64::from(spread));
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
        stale: stale_effector_bones(&model, &chain_order),
        classes: classes(&model),
        distances,
        staged,
        sensitivity,
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
    let mut rotations = rotations.to_vec();
    let mut only = vec![0u8; enabled.len()];
    play(runtime, offsets, &rotations, &only);
    for &c in chain_order.iter().filter(|&&c| enabled[c] != 0) {
        only.fill(0);
        only[c] = 1;
        play(runtime, offsets, &rotations, &only);
        rotations.copy_from_slice(runtime.pose().local_rotations());
    }
}

/// One evaluation of the runtime from a local pose (MMD frame and units) and IK switches.
fn play(runtime: &mut RuntimeInstance, offsets: &[Vec3A], rotations: &[RefQuat], enabled: &[u8]) {
    let scales = vec![Vec3A::ONE; offsets.len()];
    let morphs = vec![0.0f32; runtime.pose().morph_weights().len()];
    runtime
        .apply_host_pose(&HostPoseView {
            local_position_offsets: offsets,
            local_rotations: rotations,
            local_scales: &scales,
            morph_weights: &morphs,
            ik_enabled: enabled,
        })
        .unwrap();
    runtime.evaluate_current_pose();
}

/// The order the runtime solves chains in: after-physics last, then the IK bone's deform
/// layer, then bone order.
fn solve_order(model: &MmdModel) -> Vec<usize> {
    let mut order: Vec<usize> = (0..model.ik.len()).collect();
    order.sort_by_key(|&c| {
        let bone = &model.bones[model.ik[c].bone];
        (
            bone.flags.has(BoneFlags::AFTER_PHYSICS),
            bone.deform_layer,
            model.ik[c].bone,
        )
    });
    order
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

/// Per class: bones, the largest per-bone median and max against the runtime in one pass and
/// played chain by chain, and the bones past the parity bounds.
fn report(model: &str, motion: &str, c: &Compared) {
    println!("{model} × {motion} ({} frames)", c.distances[0].len());
    let mut classes: Vec<Class> = c.classes.clone();
    classes.sort();
    classes.dedup();
    for class in classes {
        let bones: Vec<usize> = (0..c.names.len())
            .filter(|&b| c.classes[b] == class)
            .collect();
        let worst = |d: &[Vec<f64>]| {
            bones.iter().fold((0.0f64, 0.0f64), |(m, x), &b| {
                (m.max(median(&d[b])), x.max(max(&d[b])))
            })
        };
        let ((m1, x1), (m2, x2)) = (worst(&c.distances), worst(&c.staged));
        println!(
            "  {class:?}: {} bones; one pass median ≤ {m1:.1e}, max {x1:.1e}; chain by chain \
             median ≤ {m2:.1e}, max {x2:.1e}",
            bones.len()
        );
    }
    let mut worst: Vec<(f64, f64, usize)> = c
        .distances
        .iter()
        .enumerate()
        .map(|(b, d)| (max(d), median(d), b))
        .filter(|&(m, med, _)| m > MAX_BOUND || med > MEDIAN_BOUND)
        .collect();
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (m, med, b) in worst.iter().take(8) {
        println!(
            "    {} [{:?}{}] one pass median {med:.1e} max {m:.1e}; chain by chain median \
             {:.1e} max {:.1e}; runtime's spread median {:.1e} max {:.1e}",
            c.names[*b],
            c.classes[*b],
            if c.stale[*b] { ", stale" } else { "" },
            median(&c.staged[*b]),
            max(&c.staged[*b]),
            median(&c.sensitivity[*b]),
            max(&c.sensitivity[*b]),
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

/// The `q`-quantile (0..=1) of `values`.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
        .get(((sorted.len().saturating_sub(1)) as f64 * q).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

/// Median ≤ 1e-4 units and max ≤ 0.05 units, the parity asked of every bone.
const MEDIAN_BOUND: f64 = 1e-4;
const MAX_BOUND: f64 = 0.05;

/// Checks one bone's distances; returns a message when they fail.
///
/// Where the runtime's own result is reproducible (it moves by at most 1e-4 units when its
/// input rotations turn by 1e-6 rad), the parity bounds apply. Where it is not (chains that
/// end their budget unconverged: hair, neckties, knees of nearly straight or overreaching
/// legs — their last iterate depends on rounding), no implementation in other arithmetic can
/// meet 1e-4, and the difference must stay within twice the runtime's own spread (median and
/// 95th percentile) plus the bounds' floor.
fn check(distances: &[f64], sensitivity: &[f64]) -> Result<(), String> {
    let (median_d, max_d) = (median(distances), max(distances));
    if max(sensitivity) <= MEDIAN_BOUND {
        return if median_d <= MEDIAN_BOUND && max_d <= MAX_BOUND {
            Ok(())
        } else {
            Err(format!("median {median_d:.2e}, max {max_d:.2e}"))
        };
    }
    let (median_s, p95_s) = (median(sensitivity), quantile(sensitivity, 0.95));
    let p95_d = quantile(distances, 0.95);
    if median_d <= 2.0 * median_s + MEDIAN_BOUND && p95_d <= 2.0 * p95_s + 1e-3 {
        Ok(())
    } else {
        Err(format!(
            "median {median_d:.2e} / p95 {p95_d:.2e} against the runtime's own spread \
             median {median_s:.2e} / p95 {p95_s:.2e}"
        ))
    }
}

/// Compatible mode against mmd-anim-runtime on every shared model × motion, every frame.
#[test]
fn parity_with_mmd_anim_runtime() {
    let mut failures = Vec::new();
    for model in MODELS {
        for motion in MOTIONS {
            let Some(c) = compare(model, motion, MmdSettings::default()) else {
                return;
            };
            for b in 0..c.names.len() {
                // Bones behind a chain whose effector an earlier chain moved are compared with
                // the runtime played chain by chain (see `toe_chains_differ_by_the_stale_effector`).
                let distances = if c.stale[b] {
                    &c.staged[b]
                } else {
                    &c.distances[b]
                };
                let result = check(distances, &c.sensitivity[b]);
                if let Err(message) = result {
                    failures.push(format!(
                        "{model} × {motion}: {} [{:?}{}]: {message}",
                        c.names[b],
                        c.classes[b],
                        if c.stale[b] { ", stale" } else { "" }
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The runtime keeps a chain's effector where its layer's world pass left it when an earlier
/// chain moves it (its `compute_ik_link_change_update_bones` skips other chains' effectors:
/// a toe chain then starts from the toe's place before the leg chain ran). No MMD capture
/// backs that rule in its tests, and babylon-mmd refreshes the effector before each chain
/// (`IkSolver.solve` updates the target's world matrix first); ikarus follows babylon-mmd.
/// Pinned: the toe bones below the ankle differ from the runtime by centimetres of MMD units
/// at the median, and agree once the runtime plays its chains one by one, each from a fresh
/// world pass.
#[test]
fn toe_chains_differ_by_the_stale_effector() {
    for (model, motion, bone) in [
        ("Gene.pmx", "kishimen.vmd", "左つま先先"),
        ("Gene.pmx", "kishimen.vmd", "右つま先EX"),
        ("yw_test_model.pmx", "kishimen.vmd", "左足先EX"),
        ("yw_test_model.pmx", "kishimen.vmd", "右足先EX"),
    ] {
        let Some(c) = compare(model, motion, MmdSettings::default()) else {
            return;
        };
        let b = c.names.iter().position(|n| n == bone).unwrap();
        assert!(
            c.stale[b],
            "{model}: {bone} is behind a chain an earlier one moves"
        );
        let single_pass = median(&c.distances[b]);
        assert!(
            single_pass > 5e-3,
            "{model}: {bone} median {single_pass:.2e}"
        );
        check(&c.staged[b], &c.sensitivity[b]).unwrap_or_else(|message| {
            panic!("{model}: {bone} against the chain-by-chain runtime: {message}")
        });
        println!(
            "{model} × {motion}: {bone} median {single_pass:.2e} against one pass, {:.2e} \
             chain by chain",
            median(&c.staged[b])
        );
    }
}
