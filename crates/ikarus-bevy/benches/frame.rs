//! Per-frame cost of the plugin for 1, 100 and 1,000 characters with a full-body rig, against
//! calling the body solver directly on the same tasks.
//!
//! Each character is Godette (68 joints, `../shared/data/gltf/Godette_vrm_v4.vrm`) spawned as
//! joint entities on a grid, with a [`FullBodyIk`] pulling both hands and holding both feet,
//! the hand targets moving every frame. `plugin/N` is one `App::update` with `MinimalPlugins`
//! and the plugin (its read, solve and write; no transform propagation, which a game pays
//! with or without IK); `direct_each/N` is, per character, the animated pose copied into the
//! working pose and `BodyRig::solve_with` (its buffers kept from frame to frame, as the plugin
//! keeps them) on that character's own rig and task with the goals the
//! plugin reads (rounded to f32 where the character stands) — the same work the plugin asks
//! of the solver, since nothing animates the joints and the plugin starts every frame from
//! the last animated input (the rest here). What the plugin adds is the difference.
//! `bevy_only/N` is the same world and schedule without the plugin (Bevy's own frame).
//! `direct/N` is one rig and task for all, every character at the origin: the solver's best
//! case. One thread (Bevy's single-threaded executor: no `multi_threaded` feature).
//!
//! `plugin/0` and `bevy_only/0` are the same apps with no character: the plugin's fixed cost.
//!
//! ## What explains the numbers (2026-11-28, Intel Xeon, 2 cores, KVM)
//!
//! - At one character the plugin costs its fixed 0.71 µs (nine systems and a command flush,
//!   whatever they find) and 1.5 µs of glue (the 20 body joints and the root read, four
//!   targets composed, 19 joints written and compared) against a 5.2 µs solve: +40%. By
//!   callgrind on 2,000 frames of one character: 5.3k instructions a frame fixed, 11.3k of
//!   glue, 75.4k in the solve (the direct call's count to the instruction). What is left is
//!   Bevy's cost per system and per `Query::get` (about 50 instructions an entity).
//! - At 1,000 characters the frame is memory-bound (each phase walks every character's data):
//!   runs differ by up to ±15%.
//! - The glue went from 18.5k instructions to 11.3k, and the 1,000-character frame from
//!   11.4 to 9.5 ms, by: writing only the joints a solver may change (`BodyRig::driven`, 19 of
//!   68) and those left solved last frame; reading only the joints the solvers use and their
//!   ancestors (20 of 68; `IkarusCharacter::read_all_joints` reads all); swapping the solve's
//!   model frames into the rig instead of copying them; composing targets in f64 from their
//!   `Transform`s (no f32 matrix and its decomposition) inside the solve systems; leaving
//!   effector pulls equal to the default out of the config's map.
//! - Before that, `direct_each` went through the allocating `BodyRig::solve`, which flattered
//!   the plugin.
//!
//! `cargo bench -p ikarus-bevy --bench frame`

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

use bevy::prelude::*;
use common::{Model, godette, spawn, target};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ikarus_bevy::prelude::*;
use ikarus_core::glam::DVec3;
use ikarus_core::{LocalPose, Skeleton};
use ikarus_solve::body::{BodyConfig, BodyRig, BodyScratch};
use ikarus_solve::{Effector, Goal, IkTask};

/// Where character `i` of `n` stands (a grid 1.5 m apart).
fn place(i: usize, n: usize) -> DVec3 {
    let side = (n as f64).sqrt().ceil() as usize;
    DVec3::new((i % side) as f64 * 1.5, 0.0, (i / side) as f64 * 1.5)
}

/// The hands' offsets from their rest positions at frame `frame` (model space).
fn hand_offsets(frame: u64) -> [DVec3; 2] {
    let t = frame as f64 / 60.0;
    let wobble = DVec3::new(0.05 * t.sin(), 0.04 * (2.0 * t).cos(), 0.05 * t.cos());
    [
        DVec3::new(-0.15, -0.35, 0.3) + wobble,
        DVec3::new(0.15, -0.35, 0.3) - wobble,
    ]
}

const HANDS: [HumanoidBone; 2] = [HumanoidBone::LeftHand, HumanoidBone::RightHand];
const FEET: [HumanoidBone; 2] = [HumanoidBone::LeftFoot, HumanoidBone::RightFoot];

/// A hand target of the game: its home (the rest hand of its character, world) and side.
#[derive(Component)]
struct HandTarget(Vec3, usize);

#[derive(Resource, Default)]
struct Frame(u64);

fn move_hands(mut frame: ResMut<Frame>, mut targets: Query<(&HandTarget, &mut Transform)>) {
    frame.0 += 1;
    let offsets = hand_offsets(frame.0);
    for (HandTarget(home, side), mut transform) in &mut targets {
        let o = offsets[*side];
        transform.translation = *home + Vec3::new(o.x as f32, o.y as f32, o.z as f32);
    }
}

/// The app of `n` characters; `with_plugin: false` is the same world and schedule without the
/// plugin and its components (what Bevy costs by itself per frame).
fn plugin_app(model: &Model, n: usize, with_plugin: bool) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins);
    if with_plugin {
        app.add_plugins(IkarusPlugin);
    }
    app.init_resource::<Frame>().add_systems(Update, move_hands);
    let rest = model.rest();
    for i in 0..n {
        let at = place(i, n);
        let root = Transform::from_xyz(at.x as f32, 0.0, at.z as f32);
        let (character, _) = spawn(app.world_mut(), model, root, None);
        let mut body = FullBodyIk::default();
        for (side, bone) in HANDS.into_iter().enumerate() {
            let home = at + rest.position(model.joint(bone));
            let entity = target(app.world_mut(), home);
            let home = Vec3::new(home.x as f32, home.y as f32, home.z as f32);
            app.world_mut()
                .entity_mut(entity)
                .insert(HandTarget(home, side));
            body = body.with(BodyEffector::new(bone, entity));
        }
        for bone in FEET {
            let entity = target(app.world_mut(), at + rest.position(model.joint(bone)));
            body = body.with(BodyEffector::new(bone, entity));
        }
        if with_plugin {
            app.world_mut().entity_mut(character).insert(body);
        } else {
            app.world_mut()
                .entity_mut(character)
                .remove::<IkarusCharacter>();
        }
    }
    // Warm: skeletons built, solvers prepared, poses settled.
    for _ in 0..5 {
        app.update();
    }
    app
}

/// `pose` as a Bevy scene holds it: every translation and rotation rounded to f32 (the
/// plugin's input: the joints' `Transform`s).
fn f32_rounded(pose: &LocalPose) -> LocalPose {
    let mut pose = pose.clone();
    for t in pose.transforms_mut() {
        t.translation = t.translation.as_vec3().as_dvec3();
        t.rotation = t.rotation.as_quat().as_dquat();
    }
    pose
}

/// A model-space goal `p` of a character standing at `at` as the plugin reads it: from a
/// target entity's f32 world `Transform` (rounded at the world position: 1000 characters on
/// a 47 m grid have their goals a few µm off their exact values, which the solver then meets).
fn f32_rounded_point(p: DVec3, at: DVec3) -> DVec3 {
    (at + p).as_vec3().as_dvec3() - at
}

/// The same tasks solved directly: per character a pose, the rig and the task.
struct Direct {
    skeleton: Skeleton,
    rig: BodyRig,
    scratch: BodyScratch,
    config: BodyConfig,
    task: IkTask,
    homes: [DVec3; 2],
    /// Where the character stands in the world (its goals are rounded there).
    at: DVec3,
    /// The animated input (the rest) and each character's working pose.
    input: LocalPose,
    poses: Vec<LocalPose>,
    frame: u64,
}

impl Direct {
    fn new(model: &Model, n: usize, at: DVec3) -> Self {
        let rest = model.rest();
        let config = BodyConfig::default();
        let rig = BodyRig::from_map(&model.skeleton, &model.map, &config).unwrap();
        let effectors = HANDS
            .into_iter()
            .chain(FEET)
            .map(|bone| {
                let joint = model.joint(bone);
                Effector::new(
                    joint,
                    Goal::from_position(f32_rounded_point(rest.position(joint), at)),
                )
            })
            .collect();
        let mut direct = Self {
            skeleton: model.skeleton.clone(),
            scratch: BodyScratch::new(&model.skeleton, &rig),
            rig,
            config,
            task: IkTask::from_effectors(effectors),
            homes: HANDS.map(|b| rest.position(model.joint(b))),
            at,
            input: f32_rounded(&model.skeleton.rest_pose()),
            poses: vec![model.skeleton.rest_pose(); n],
            frame: 0,
        };
        for _ in 0..5 {
            direct.frame();
        }
        direct
    }

    fn frame(&mut self) {
        self.frame += 1;
        let offsets = hand_offsets(self.frame);
        for ((effector, home), offset) in
            self.task.effectors.iter_mut().zip(self.homes).zip(offsets)
        {
            effector.goal.position = Some(f32_rounded_point(home + offset, self.at));
        }
        for pose in &mut self.poses {
            pose.transforms_mut()
                .copy_from_slice(self.input.transforms());
            black_box(self.rig.solve_with(
                &self.skeleton,
                &self.task,
                &self.config,
                pose,
                &mut self.scratch,
            ));
        }
    }
}

fn frame(c: &mut Criterion) {
    let Some(model) = godette("bench frame") else {
        return;
    };
    let mut group = c.benchmark_group("body_frame");
    group.sample_size(10);
    // The plugin's fixed cost: its systems with no character.
    for (name, with_plugin) in [("plugin", true), ("bevy_only", false)] {
        let mut app = plugin_app(&model, 0, with_plugin);
        group.bench_with_input(BenchmarkId::new(name, 0), &0, |b, _| {
            b.iter(|| app.update());
        });
    }
    for n in [1, 100, 1000] {
        let mut app = plugin_app(&model, n, true);
        group.bench_with_input(BenchmarkId::new("plugin", n), &n, |b, _| {
            b.iter(|| app.update());
        });
        drop(app);
        let mut app = plugin_app(&model, n, false);
        group.bench_with_input(BenchmarkId::new("bevy_only", n), &n, |b, _| {
            b.iter(|| app.update());
        });
        drop(app);
        let mut direct = Direct::new(&model, n, DVec3::ZERO);
        group.bench_with_input(BenchmarkId::new("direct", n), &n, |b, _| {
            b.iter(|| direct.frame());
        });
        drop(direct);
        // The same tasks as the plugin's: each character with its own rig and task, its goals
        // rounded where it stands, as the plugin reads them from its targets.
        let mut each: Vec<Direct> = (0..n)
            .map(|i| Direct::new(&model, 1, place(i, n)))
            .collect();
        group.bench_with_input(BenchmarkId::new("direct_each", n), &n, |b, _| {
            b.iter(|| each.iter_mut().for_each(Direct::frame));
        });
    }
    group.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
