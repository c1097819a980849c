//! Scenes for the plugin's tests and benches: a shared VRM character read by
//! `ikarus_formats`, spawned as joint entities (`Name`, `Transform`, `ChildOf`) the way
//! Bevy's glTF loader spawns a scene's nodes, at any scale.
#![allow(dead_code)] // each test file uses a part

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use ikarus_bevy::prelude::*;
use ikarus_core::glam::DVec3;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{JointId, ModelPose, Skeleton, fk};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};

/// A character read from the shared data: its skeleton (metres, facing +Z) and its VRM's
/// declared humanoid map.
pub struct Model {
    pub skeleton: Skeleton,
    pub map: HumanoidMap,
}

impl Model {
    /// The rest pose's model frames.
    pub fn rest(&self) -> ModelPose {
        let mut model = ModelPose::new(&self.skeleton);
        fk::forward_kinematics(&self.skeleton, &self.skeleton.rest_pose(), &mut model);
        model
    }

    /// The joint of `bone`.
    pub fn joint(&self, bone: HumanoidBone) -> JointId {
        self.map.joint(bone).expect("the VRM maps the bone")
    }

    /// The character component naming the VRM's declared bones (Bevy's glTF loader does
    /// not read the VRM extension; a game passes its map this way).
    pub fn character(&self) -> IkarusCharacter {
        let mut character = IkarusCharacter::default();
        for (bone, joint) in self.map.iter() {
            character = character.with_bone(bone, self.skeleton.name(joint));
        }
        character
    }
}

/// Godette (VRM 0.x, 68 joints) from `../shared/data/gltf`; `None` (skipped) without the
/// data, a failure under `CI=true`.
pub fn godette(test: &str) -> Option<Model> {
    let dir = ikarus_testdata::require("gltf", test)?;
    let gltf = GltfFile::read(&dir.join("Godette_vrm_v4.vrm")).expect("Godette reads");
    let skin = gltf
        .skeleton(&SkeletonSource::Auto)
        .expect("Godette has a skin");
    let map = gltf
        .vrm_humanoid()
        .expect("VRM extension reads")
        .expect("Godette is a VRM")
        .map(&skin);
    Some(Model {
        skeleton: skin.skeleton,
        map,
    })
}

/// An app with the plugin, transforms and a fixed 1/60 s frame.
pub fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        bevy::transform::TransformPlugin,
        IkarusPlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )));
    app
}

/// Spawns `model` under a new root entity at `root`: one entity per joint with its name and
/// rest transform, children under their parents. With `armature`, the joints hang below an
/// extra `Armature` node of that uniform scale and their translations are divided by it (the
/// Mixamo convention: 0.01 with centimetre joints), so the world positions are the same.
/// Returns the root and the joint entities by joint index.
pub fn spawn(
    world: &mut World,
    model: &Model,
    root: Transform,
    armature: Option<f32>,
) -> (Entity, Vec<Entity>) {
    let root = world.spawn((root, model.character())).id();
    let top = match armature {
        Some(scale) => world
            .spawn((
                Name::new("Armature"),
                Transform::from_scale(Vec3::splat(scale)),
                ChildOf(root),
            ))
            .id(),
        None => root,
    };
    let unit = armature.map_or(1.0, f64::from);
    let skeleton = &model.skeleton;
    let mut joints: Vec<Entity> = Vec::with_capacity(skeleton.len());
    for joint in skeleton.joints() {
        let rest = skeleton.rest(joint);
        // Below the armature every translation is in its units (centimetres for 0.01).
        let t = rest.translation / unit;
        let transform = Transform {
            translation: Vec3::new(t.x as f32, t.y as f32, t.z as f32),
            rotation: Quat::from_xyzw(
                rest.rotation.x as f32,
                rest.rotation.y as f32,
                rest.rotation.z as f32,
                rest.rotation.w as f32,
            )
            .normalize(),
            scale: Vec3::ONE,
        };
        let parent = skeleton.parent(joint).map_or(top, |p| joints[p.index()]);
        let entity = world
            .spawn((
                Name::new(skeleton.name(joint).to_owned()),
                transform,
                ChildOf(parent),
            ))
            .id();
        joints.push(entity);
    }
    (root, joints)
}

/// An entity's world position after the frame's transform propagation (f32 → f64): the
/// independent forward kinematics every test checks against.
pub fn world_position(app: &App, entity: Entity) -> DVec3 {
    let t = app
        .world()
        .get::<GlobalTransform>(entity)
        .expect("a transform")
        .translation();
    DVec3::new(f64::from(t.x), f64::from(t.y), f64::from(t.z))
}

/// Spawns a target entity at a world position.
pub fn target(world: &mut World, at: DVec3) -> Entity {
    world
        .spawn(Transform::from_xyz(at.x as f32, at.y as f32, at.z as f32))
        .id()
}

/// Moves an entity to a world position.
pub fn move_to(app: &mut App, entity: Entity, at: DVec3) {
    app.world_mut()
        .get_mut::<Transform>(entity)
        .unwrap()
        .translation = Vec3::new(at.x as f32, at.y as f32, at.z as f32);
}

/// Bevy's f32 vector as ikarus's f64 one (Bevy's glam is another version than ikarus's).
pub fn dv(v: Vec3) -> DVec3 {
    DVec3::new(f64::from(v.x), f64::from(v.y), f64::from(v.z))
}

/// Bevy's f32 quaternion as ikarus's f64 one.
pub fn dq(q: Quat) -> ikarus_core::glam::DQuat {
    ikarus_core::glam::DQuat::from_xyzw(
        f64::from(q.x),
        f64::from(q.y),
        f64::from(q.z),
        f64::from(q.w),
    )
}
