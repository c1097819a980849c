//! Steady-state frames allocate nothing in the plugin's code: a counting global allocator
//! over frames after warm-up, against the same app without the plugin's components (what
//! Bevy itself allocates per frame, if anything).
//!
//! The full-body path calls `BodyRig::solve_with` with the buffers the component keeps
//! (`BodyScratch`): the body solver's own count, measured directly on the same tasks, is 0,
//! and a body frame with grounding allocates nothing at all (the strict test).
//!
//! Measured on Bevy's single-threaded executor only: with the `multi_threaded` feature Bevy's
//! own executor allocates a varying number of times per frame (its tasks), with or without
//! the plugin, so there is no zero to check against.
#![cfg(not(feature = "multi_threaded"))]
#![allow(unsafe_code)] // a global allocator is an `unsafe impl`

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use bevy::prelude::*;
use common::{app, godette, spawn, target};
use ikarus_bevy::prelude::*;
use ikarus_core::glam::DVec3;

/// Counts the allocations of the thread that turned `COUNTING` on (Bevy without its
/// `multi_threaded` feature runs every system on the thread calling `App::update`); the test
/// harness's other threads (printing another test's result) are not counted.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counter is atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as `GlobalAlloc::realloc` requires, from the caller.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Serialises the tests of this file (the counter is global).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`ONE_AT_A_TIME`] (also after another test failed holding it) until dropped.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Allocations during `f`.
fn count(f: impl FnOnce()) -> usize {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.set(true);
    f();
    COUNTING.set(false);
    ALLOCATIONS.load(Ordering::SeqCst)
}

const WARM_UP: usize = 10;
const FRAMES: usize = 100;

/// Moves each target a little every frame (the game's part, before the plugin reads them).
#[derive(Component)]
struct Wobble(Vec3);

fn wobble(time: Res<Time>, mut targets: Query<(&Wobble, &mut Transform)>) {
    let t = time.elapsed_secs();
    for (Wobble(home), mut transform) in &mut targets {
        transform.translation = *home + Vec3::new(0.03 * t.sin(), 0.02 * (2.0 * t).cos(), 0.0);
    }
}

/// Allocations over `FRAMES` frames after warm-up of an app with Godette and the components
/// `add` puts on it; and of the same app without them.
fn frames_with(
    test: &str,
    add: impl Fn(&mut World, Entity, &common::Model) -> usize,
) -> Option<(usize, usize)> {
    let model = godette(test)?;
    let mut counts = [0, 0];
    for (k, with) in [true, false].into_iter().enumerate() {
        let mut app = app();
        app.add_systems(Update, wobble);
        let (character, _) = spawn(app.world_mut(), &model, Transform::default(), None);
        if with {
            add(app.world_mut(), character, &model);
        } else {
            app.world_mut()
                .entity_mut(character)
                .remove::<IkarusCharacter>();
        }
        for _ in 0..WARM_UP {
            app.update();
        }
        counts[k] = count(|| {
            for _ in 0..FRAMES {
                app.update();
            }
        });
    }
    Some((counts[0], counts[1]))
}

/// A wobbling target at the rest position of `bone`, offset.
fn wobbling(world: &mut World, model: &common::Model, bone: HumanoidBone, offset: DVec3) -> Entity {
    let p = model.rest().position(model.joint(bone)) + offset;
    let entity = target(world, p);
    let home = Vec3::new(p.x as f32, p.y as f32, p.z as f32);
    world.entity_mut(entity).insert(Wobble(home));
    entity
}

#[test]
fn limb_frames_allocate_nothing() {
    let _serial = one_at_a_time();
    let Some((with, without)) = frames_with("limb allocations", |world, character, model| {
        let left = wobbling(
            world,
            model,
            HumanoidBone::LeftHand,
            DVec3::new(-0.1, -0.2, 0.25),
        );
        let pole = target(world, DVec3::new(0.3, 1.0, -0.5));
        world.spawn(LimbIk::new(character, LimbEnd::LeftHand, left).with_pole(pole));
        let right = wobbling(
            world,
            model,
            HumanoidBone::RightHand,
            DVec3::new(0.1, -0.2, 0.25),
        );
        world.spawn(
            LimbIk::new(character, LimbEnd::RightHand, right).with_solver(LimbSolver::Limb7 {
                elbow_range: [0.0, 2.6],
                swivel: ikarus_bevy::SwivelPolicy::KeepCurrent,
            }),
        );
        let foot = wobbling(
            world,
            model,
            HumanoidBone::LeftFoot,
            DVec3::new(0.0, 0.1, 0.1),
        );
        world.spawn(LimbIk::new(character, LimbEnd::LeftFoot, foot));
        0
    }) else {
        return;
    };
    println!("limbs: {with} allocations over {FRAMES} frames with the plugin, {without} without");
    assert_eq!(with, without, "the plugin's limb frames allocate");
}

/// Godette's full body: both hands and feet to wobbling targets, grounded.
fn body(world: &mut World, character: Entity, model: &common::Model) -> usize {
    let mut body = FullBodyIk::default();
    for (bone, offset) in [
        (HumanoidBone::LeftHand, DVec3::new(-0.1, -0.3, 0.3)),
        (HumanoidBone::RightHand, DVec3::new(0.1, -0.3, 0.3)),
    ] {
        let target = wobbling(world, model, bone, offset);
        body = body.with(BodyEffector::new(bone, target).with_rotation_weight(0.5));
    }
    world
        .entity_mut(character)
        .insert((body, Grounding::default()));
    0
}

/// Allocations of `FRAMES` direct calls of the body solver on Godette with the same kind of
/// task (both hands, hips and feet).
fn solver_allocations(model: &common::Model) -> usize {
    use ikarus_solve::body::{BodyConfig, BodyRig, BodyScratch};
    use ikarus_solve::{Effector, Goal, IkTask};
    let rest = model.rest();
    let config = BodyConfig::default();
    let rig = BodyRig::from_map(&model.skeleton, &model.map, &config).unwrap();
    let effector = |bone: HumanoidBone, offset: DVec3| {
        let joint = model.joint(bone);
        Effector::new(
            joint,
            Goal::from_position_orientation(rest.position(joint) + offset, rest.rotation(joint)),
        )
    };
    let mut task = IkTask::from_effectors(vec![
        effector(HumanoidBone::LeftHand, DVec3::new(-0.1, -0.3, 0.3)),
        effector(HumanoidBone::RightHand, DVec3::new(0.1, -0.3, 0.3)),
        effector(HumanoidBone::Hips, DVec3::ZERO),
        effector(HumanoidBone::LeftFoot, DVec3::ZERO),
        effector(HumanoidBone::RightFoot, DVec3::ZERO),
    ]);
    let mut pose = model.skeleton.rest_pose();
    let mut scratch = BodyScratch::new(&model.skeleton, &rig);
    for _ in 0..WARM_UP {
        rig.solve_with(&model.skeleton, &task, &config, &mut pose, &mut scratch);
    }
    count(|| {
        for k in 0..FRAMES {
            let dy = 0.01 * (k as f64 * 0.1).sin();
            task.effectors[0].goal.position = Some(
                rest.position(model.joint(HumanoidBone::LeftHand))
                    + DVec3::new(-0.1, -0.3 + dy, 0.3),
            );
            let _report = rig.solve_with(&model.skeleton, &task, &config, &mut pose, &mut scratch);
        }
    })
}

#[test]
fn body_frames_allocate_only_inside_the_body_solver() {
    let _serial = one_at_a_time();
    let Some((with, without)) = frames_with("body allocations", body) else {
        return;
    };
    let model = godette("body allocations").expect("read above");
    let solver = solver_allocations(&model);
    println!(
        "full body + grounding: {with} allocations over {FRAMES} frames with the plugin, \
         {without} without; the body solver alone: {solver} over {FRAMES} solves"
    );
    assert_eq!(
        with - without,
        solver,
        "the plugin's body frames allocate beyond the body solver's own"
    );
}

/// The strict form: the body solve keeps its buffers (`BodyScratch`), so a body frame with
/// grounding allocates nothing at all.
#[test]
fn body_frames_allocate_nothing() {
    let _serial = one_at_a_time();
    let Some((with, without)) = frames_with("body allocations", body) else {
        return;
    };
    println!("full body + grounding: {with} allocations with the plugin, {without} without");
    assert_eq!(with, without, "the plugin's body frames allocate");
}
