//! A shared glTF/VRM character walking on uneven ground while reaching for a target you drag.
//!
//! `cargo run -p ikarus-bevy --example reach --features viewer [-- path/to/character.vrm]`
//!
//! The character (by default `Godette_vrm_v4.vrm` from `../shared/data/gltf`, found at run
//! time) is spawned by Bevy's glTF loader; its bones come from the VRM's humanoid map (read
//! with `ikarus_formats`, since Bevy's loader does not read the VRM extension). It is a
//! [`TrackedBody`]: a "headset" walks a circle over the bumpy [`IkarusGround`] and the legs
//! step on it; the right "controller" is the red ball, which you drag with the mouse; the left
//! hand swings along. The white balls are the trackers, the ground is the same heightfield
//! the feet stand on.

use std::path::PathBuf;

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::picking::events::{Drag, Pointer};
use bevy::prelude::*;
use ikarus_bevy::prelude::*;
use ikarus_bevy::{Heightfield, TrackConfig};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};

/// The bumpy ground: 6 cm bumps over a 16 m square, 10 cm grid.
fn terrain() -> Heightfield {
    let n = 161;
    let heights = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let (x, z) = (f64::from(j) * 0.1 - 8.0, f64::from(i) * 0.1 - 8.0);
                    0.06 * (x * 1.7).sin() * (z * 1.3).cos() + 0.03 * (0.6 * x + 0.9 * z).sin()
                })
                .collect()
        })
        .collect();
    Heightfield::new([-8.0, -8.0], 0.1, heights).expect("a regular grid")
}

/// The character file: the first argument, else Godette from the shared data.
fn character_file() -> PathBuf {
    std::env::args().nth(1).map_or_else(
        || {
            let data = std::env::var_os("IKARUS_SHARED_DATA").map_or_else(
                || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
                PathBuf::from,
            );
            data.join("gltf/Godette_vrm_v4.vrm")
        },
        PathBuf::from,
    )
}

/// The character's bones as the VRM declares them, by joint name.
fn vrm_bones(path: &std::path::Path) -> IkarusCharacter {
    let mut character = IkarusCharacter::default();
    let Ok(file) = GltfFile::read(path) else {
        return character;
    };
    let (Ok(skin), Ok(Some(humanoid))) =
        (file.skeleton(&SkeletonSource::Auto), file.vrm_humanoid())
    else {
        return character;
    };
    let map = humanoid.map(&skin);
    for (bone, joint) in map.iter() {
        character = character.with_bone(bone, skin.skeleton.name(joint));
    }
    character
}

/// The trackers of the walking player.
#[derive(Resource)]
struct Trackers {
    character: Entity,
    head: Entity,
    left: Entity,
    right: Entity,
    /// Each hand tracker's offset from the head at calibration (world), once placed.
    offsets: Option<[Vec3; 2]>,
    /// The head's height above the ground at calibration.
    head_height: f32,
}

fn main() {
    let file = character_file();
    // Bevy picks a loader by extension and does not know `.vrm` (a GLB): serve a copy
    // named `.glb` from a temporary asset folder.
    let assets = std::env::temp_dir().join("ikarus-reach");
    std::fs::create_dir_all(&assets).expect("a temporary folder");
    std::fs::copy(&file, assets.join("character.glb"))
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let character = vrm_bones(&file);
    App::new()
        .add_plugins((
            DefaultPlugins.set(AssetPlugin {
                file_path: assets.display().to_string(),
                ..default()
            }),
            MeshPickingPlugin,
            IkarusPlugin,
        ))
        .insert_resource(IkarusGround::Heightfield(terrain()))
        .insert_resource(CharacterBones(character))
        .add_systems(Startup, setup)
        .add_systems(Update, (calibrate, walk, report).chain())
        .run();
}

#[derive(Resource)]
struct CharacterBones(IkarusCharacter);

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    bones: Res<CharacterBones>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    // VRM 0.x characters face −Z: the camera stands in front of the walking circle.
    commands.spawn((
        Camera3d::default(),
        Transform::from_xyz(1.6, 1.9, -4.6).looking_at(Vec3::new(0.0, 0.7, -1.0), Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(3.0, 6.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        Mesh3d(meshes.add(terrain_mesh(&terrain()))),
        MeshMaterial3d(materials.add(Color::srgb(0.35, 0.5, 0.3))),
    ));
    let character = commands
        .spawn((
            WorldAssetRoot(assets.load(GltfAssetLabel::Scene(0).from_asset("character.glb"))),
            bones.0.clone(),
        ))
        .id();
    let ball = meshes.add(Sphere::new(0.04));
    let white = materials.add(Color::WHITE);
    let tracker = |commands: &mut Commands, material: Handle<StandardMaterial>| {
        commands
            .spawn((
                Mesh3d(ball.clone()),
                MeshMaterial3d(material),
                Transform::default(),
            ))
            .id()
    };
    let head = tracker(&mut commands, white.clone());
    let left = tracker(&mut commands, white);
    let right = tracker(&mut commands, materials.add(Color::srgb(0.9, 0.1, 0.1)));
    // The red ball follows the mouse while dragged, in the camera's plane.
    commands.entity(right).observe(
        |drag: On<Pointer<Drag>>,
         cameras: Query<&GlobalTransform, With<Camera3d>>,
         mut transforms: Query<&mut Transform>| {
            let Ok(camera) = cameras.single() else {
                return;
            };
            if let Ok(mut transform) = transforms.get_mut(drag.event_target()) {
                let d = drag.delta * 0.004;
                transform.translation += camera.right() * d.x - camera.up() * d.y;
            }
        },
    );
    commands.insert_resource(Trackers {
        character,
        head,
        left,
        right,
        offsets: None,
        head_height: 0.0,
    });
}

/// Once the scene has spawned and its rig is built: the trackers put on the avatar's head and
/// hands (the player standing in the avatar's reference pose), then tracking starts.
fn calibrate(
    mut commands: Commands,
    mut trackers: ResMut<Trackers>,
    rigs: Query<&CharacterRig>,
    mut transforms: Query<&mut Transform>,
) {
    if trackers.offsets.is_some() {
        return;
    }
    let Ok(rig) = rigs.get(trackers.character) else {
        return;
    };
    let at = |bone| {
        rig.map().joint(bone).map(|j| {
            let p = rig.world_position(j);
            Vec3::new(p.x as f32, p.y as f32, p.z as f32)
        })
    };
    let (Some(head), Some(left), Some(right)) = (
        at(HumanoidBone::Head),
        at(HumanoidBone::LeftHand),
        at(HumanoidBone::RightHand),
    ) else {
        return;
    };
    for (entity, p) in [
        (trackers.head, head),
        (trackers.left, left),
        (trackers.right, right),
    ] {
        if let Ok(mut t) = transforms.get_mut(entity) {
            t.translation = p;
        }
    }
    let lowest = rig
        .model_pose()
        .positions()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let mut body = TrackedBody::new(trackers.head, trackers.left, trackers.right);
    body.config = TrackConfig {
        floor: lowest,
        ..TrackConfig::default()
    };
    commands.entity(trackers.character).insert(body);
    trackers.offsets = Some([left - head, right - head]);
    trackers.head_height = head.y;
}

/// Seconds of the walk: 1/60 a frame, whatever the frame rate (the tracker solver steps at
/// 60 frames per second; a software renderer draws one frame a second).
#[derive(Default)]
struct Clock(u32);

/// The headset walks a slow circle over the bumps (its height following the ground), the
/// left hand swings beside it; the right hand is where it was dragged, carried along.
fn walk(
    mut clock: Local<Clock>,
    trackers: Res<Trackers>,
    ground: Res<IkarusGround>,
    mut transforms: Query<&mut Transform>,
) {
    use ikarus_anim::ground::Ground;
    let Some([left_offset, _]) = trackers.offsets else {
        return;
    };
    // Half a second standing still after calibration, then walking; the right hand reaching
    // ahead for the red ball until it is dragged elsewhere.
    clock.0 += 1;
    let seconds = clock.0 as f32 / 60.0;
    let t = (seconds - 0.5).max(0.0) * 0.25;
    let radius = 1.2;
    let centre = Vec3::new(0.0, 0.0, -radius);
    let along = Vec3::new(radius * t.sin(), 0.0, radius * t.cos()) + centre;
    let height = ground
        .sample(f64::from(along.x), f64::from(along.z))
        .map_or(0.0, |(h, _)| h as f32);
    let Ok(head) = transforms.get(trackers.head).map(|t| t.translation) else {
        return;
    };
    // The ground under the start is at about 0: the head keeps its height above the ground.
    let next = Vec3::new(along.x, height + trackers.head_height, along.z);
    let step = next - head;
    for (entity, moved) in [
        (trackers.head, next),
        (
            trackers.left,
            next + left_offset + Vec3::Y * 0.1 * (4.0 * t).sin(),
        ),
    ] {
        if let Ok(mut transform) = transforms.get_mut(entity) {
            transform.translation = moved;
        }
    }
    if let Ok(mut right) = transforms.get_mut(trackers.right) {
        right.translation += step;
        if clock.0 == 2 {
            // In and ahead of the T-pose's hand: within reach.
            right.translation += Vec3::new(-0.15, -0.1, -0.2);
        }
    }
}

/// Every two seconds: where the hips are, how the last solve went.
fn report(
    time: Res<Time>,
    trackers: Res<Trackers>,
    rigs: Query<(&CharacterRig, &IkReport)>,
    mut next: Local<f32>,
) {
    if time.elapsed_secs() < *next {
        return;
    }
    *next = time.elapsed_secs() + 2.0;
    if let Ok((rig, report)) = rigs.get(trackers.character)
        && let Some(hips) = rig.map().joint(HumanoidBone::Hips)
    {
        info!("hips at {:.3}; {report:?}", rig.world_position(hips));
    }
}

/// The heightfield as a mesh.
fn terrain_mesh(field: &Heightfield) -> Mesh {
    let rows = field.heights.len();
    let cols = field.heights[0].len();
    let mut positions = Vec::with_capacity(rows * cols);
    for (i, row) in field.heights.iter().enumerate() {
        for (j, h) in row.iter().enumerate() {
            positions.push([
                (field.origin[0] + j as f64 * field.cell) as f32,
                *h as f32,
                (field.origin[1] + i as f64 * field.cell) as f32,
            ]);
        }
    }
    let mut indices = Vec::with_capacity((rows - 1) * (cols - 1) * 6);
    for i in 0..rows - 1 {
        for j in 0..cols - 1 {
            let a = (i * cols + j) as u32;
            let (b, c, d) = (a + 1, a + cols as u32, a + cols as u32 + 1);
            indices.extend([a, c, b, b, c, d]);
        }
    }
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices))
    .with_computed_smooth_normals()
}
