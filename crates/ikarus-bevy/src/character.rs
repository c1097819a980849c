//! A character: the ikarus skeleton built from a scene's joint entities, and its pose read
//! and written each frame.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy::prelude::*;
use ikarus_core::glam::{DAffine3, DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, SkeletonBuilder, fk};

use crate::convert::{WorldFrames, from_local, model_frame, to_local, uniform};
use crate::error::IkarusError;

/// Marks a character: put it on the root entity of a glTF or VRM scene (the entity with
/// `WorldAssetRoot`, or any entity whose descendants are the joints). When its descendants have
/// spawned, the plugin builds the character's ikarus skeleton from their `Name`s and
/// `Transform`s (the rest pose is what they hold then) and inserts a [`CharacterRig`]; the
/// humanoid bones are recognised from the names (VRM/Unity, Mixamo, Biovision, MMD, …) with
/// [`bones`](Self::bones) overriding.
#[derive(Component, Clone, Debug, Default, PartialEq)]
#[require(Transform, IkarusStatus)]
pub struct IkarusCharacter {
    /// Humanoid bones mapped by joint name (the entity's `Name`), over the recognised ones:
    /// for rigs whose names no scheme knows, or a VRM's declared humanoid map.
    pub bones: Vec<(HumanoidBone, String)>,
    /// Joint limits by joint name, or by a VRM humanoid bone name (`leftLowerArm`), in the
    /// joint's rest frame (the rest being the pose the scene had when the rig was built).
    /// Every solver keeps them. Default: none (free joints).
    pub limits: Vec<(String, JointLimit)>,
    /// Whether every joint is read each frame. By default (`false`) only the joints the
    /// character's solvers read or move, and their ancestors, are (as Unreal's IK Rig and
    /// Final IK read only the bones they use): for a full body that is the body's 20 or so
    /// joints, not the fingers, toes, hair and face. The others keep the local transform last
    /// read in [`CharacterRig::pose`], so their [`CharacterRig::model_pose`] frames follow the
    /// solved body but not this frame's animation of them; their entities are never written.
    /// Set it for a game system that reads every joint's frame from the rig.
    pub read_all_joints: bool,
}

impl IkarusCharacter {
    /// Maps `bone` to the joint named `name` (over what the names say).
    #[must_use]
    pub fn with_bone(mut self, bone: HumanoidBone, name: impl Into<String>) -> Self {
        self.bones.push((bone, name.into()));
        self
    }

    /// Gives the joint named `joint` (or the joint of the VRM bone so named) a limit.
    #[must_use]
    pub fn with_limit(mut self, joint: impl Into<String>, limit: JointLimit) -> Self {
        self.limits.push((joint.into(), limit));
        self
    }
}

/// Where a character stands: waiting for its scene, ready, or refused (and why).
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub enum IkarusStatus {
    /// The character's joints have not spawned yet (or no frame has run).
    #[default]
    Waiting,
    /// The skeleton is built; the solvers run.
    Ready,
    /// The skeleton cannot be built or read this frame; nothing is solved. Fix the cause and
    /// touch the [`IkarusCharacter`] (or respawn the scene) to build again.
    Error(IkarusError),
}

/// A character's ikarus skeleton and its per-frame buffers, inserted by the plugin on the
/// [`IkarusCharacter`]'s entity. The skeleton's model space is the root entity's frame
/// without its scale, in world units (see the crate's conventions).
#[derive(Component, Debug)]
pub struct CharacterRig {
    skeleton: Arc<Skeleton>,
    map: Arc<HumanoidMap>,
    /// The joint entities, by joint index.
    joints: Vec<Entity>,
    /// This rig's identity (solvers note which rig they asked their joints of).
    id: u64,
    /// Per joint, whether it is read each frame, and those joints in order (parents first).
    reads: Vec<bool>,
    read_list: Vec<usize>,
    /// Per joint, the uniform scale of its parent frame in model units (translations read
    /// are multiplied by it), as read this frame.
    units: Vec<f64>,
    /// Per joint, its own Bevy scale as read (kept when written back).
    scales: Vec<Vec3>,
    /// The root's world scale as last read (the first joints' unit).
    root_unit: f64,
    /// This frame's pose: the animation after [`IkarusSystems::Read`](crate::IkarusSystems),
    /// the solved pose after `Solve`.
    pub(crate) pose: LocalPose,
    /// The animated input of the last frame read (model units).
    input: LocalPose,
    /// What the plugin last wrote into each joint's `Transform` (empty before the first
    /// write). A joint still holding it was not animated since: its input is then
    /// [`input`](Self::input)'s, not the solved pose (Final IK's "fix transforms"), so IK
    /// never feeds on its own output.
    written: Vec<Transform>,
    /// The forward kinematics of [`pose`](Self::pose) when `model_current` (solvers that need
    /// it call [`update_model`](Self::update_model); `Write` leaves it current).
    pub(crate) model: ModelPose,
    pub(crate) model_current: bool,
    /// Per joint, whether the last write put a solved (not animated) transform there.
    touched: Vec<bool>,
    /// The joints `touched` marks, and a spare list for the next write's.
    touched_list: Vec<usize>,
    touched_spare: Vec<usize>,
    /// The joints a solver may have changed this frame, each once (`Write` looks only at
    /// these and at [`touched_list`](Self::touched_list)), and per joint whether it is listed.
    changed: Vec<usize>,
    listed: Vec<bool>,
    world_from_model: DAffine3,
    model_from_world: DAffine3,
    /// The rotation of [`model_from_world`](Self::model_from_world).
    model_from_world_rotation: DQuat,
    /// Seconds since the previous frame.
    pub(crate) dt: f64,
    /// Whether this frame's pose was read (finite) and so may be solved and written.
    pub(crate) readable: bool,
    /// Whether a solver on the character refused this frame (a bad target, a failed setup):
    /// the joints then keep what the last write put there (held over, not snapped back to
    /// the animation for a frame).
    pub(crate) refused: bool,
}

impl CharacterRig {
    /// The character's ikarus skeleton (model space, world units).
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The shared skeleton, for solvers that keep it.
    pub(crate) fn skeleton_arc(&self) -> &Arc<Skeleton> {
        &self.skeleton
    }

    /// The character's humanoid map.
    pub fn map(&self) -> &HumanoidMap {
        &self.map
    }

    /// The shared humanoid map, for solvers that keep it.
    pub(crate) fn map_arc(&self) -> &Arc<HumanoidMap> {
        &self.map
    }

    /// The entity of joint `joint`.
    pub fn joint_entity(&self, joint: JointId) -> Entity {
        self.joints[joint.index()]
    }

    /// The entity of the humanoid `bone`, if mapped.
    pub fn bone_entity(&self, bone: HumanoidBone) -> Option<Entity> {
        self.map.joint(bone).map(|j| self.joint_entity(j))
    }

    /// This frame's pose (after the plugin's `Solve`: the solved one), model units.
    pub fn pose(&self) -> &LocalPose {
        &self.pose
    }

    /// The model frames of [`pose`](Self::pose), current after the plugin's `Write`.
    pub fn model_pose(&self) -> &ModelPose {
        &self.model
    }

    /// This rig's identity: a rig built again (the same skeleton or not) is another.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Has `joints` and their ancestors read from the next read on (a solver asks for the
    /// joints it reads or moves when it is prepared on this rig).
    pub(crate) fn need(&mut self, joints: impl IntoIterator<Item = JointId>) {
        let mut grew = false;
        for joint in joints {
            let mut at = Some(joint);
            while let Some(j) = at {
                if self.reads[j.index()] {
                    break;
                }
                self.reads[j.index()] = true;
                grew = true;
                at = self.skeleton.parent(j);
            }
        }
        if grew {
            self.read_list.clear();
            self.read_list
                .extend((0..self.reads.len()).filter(|&k| self.reads[k]));
        }
    }

    /// [`need`](Self::need) for every joint (a solver that sets the whole pose).
    pub(crate) fn need_all(&mut self) {
        self.need(self.skeleton.joints());
    }

    /// Notes that a solver may have changed `joints`' local transforms this frame: `Write`
    /// writes back only such joints (and those it left solved last frame).
    pub(crate) fn may_change(&mut self, joints: impl IntoIterator<Item = JointId>) {
        for joint in joints {
            let k = joint.index();
            if !self.listed[k] {
                self.listed[k] = true;
                self.changed.push(k);
            }
        }
    }

    /// [`may_change`](Self::may_change) for every joint (a solver that sets the whole pose).
    pub(crate) fn may_change_all(&mut self) {
        self.may_change(self.skeleton.joints());
    }

    /// Forgets the joints listed by [`may_change`](Self::may_change).
    fn clear_changed(&mut self) {
        for &k in &self.changed {
            self.listed[k] = false;
        }
        self.changed.clear();
    }

    /// Brings [`model`](Self::model) up to the current pose (forward kinematics, when a read
    /// or a solve left it stale).
    pub(crate) fn update_model(&mut self) {
        if !self.model_current {
            fk::forward_kinematics(&self.skeleton, &self.pose, &mut self.model);
            self.model_current = true;
        }
    }

    /// The root's frame this frame: `world_from_model` (rotation and translation).
    pub fn world_from_model(&self) -> DAffine3 {
        self.world_from_model
    }

    /// `model_from_world`, the inverse of [`world_from_model`](Self::world_from_model).
    pub fn model_from_world(&self) -> DAffine3 {
        self.model_from_world
    }

    /// The rotation of [`model_from_world`](Self::model_from_world).
    pub(crate) fn model_from_world_rotation(&self) -> DQuat {
        self.model_from_world_rotation
    }

    /// A joint's world position this frame (after `Solve`: solved), f64.
    pub fn world_position(&self, joint: JointId) -> DVec3 {
        self.world_from_model
            .transform_point3(self.model.position(joint))
    }

    /// A joint's world rotation this frame (after `Solve`: solved), f64.
    pub fn world_rotation(&self, joint: JointId) -> DQuat {
        self.model_from_world_rotation.conjugate() * self.model.rotation(joint)
    }
}

/// Rig identities, never reused.
static RIGS: AtomicU64 = AtomicU64::new(0);

/// The skeletons of the characters alive, shared between instances of one model (same
/// joints, names, rest and limits): a crowd of one character reads one skeleton.
#[derive(Resource, Default)]
pub(crate) struct Skeletons(Vec<Arc<Skeleton>>);

impl Skeletons {
    /// The shared skeleton equal to `skeleton`, or `skeleton` itself, now shared; forgets
    /// skeletons no character holds any more.
    fn share(&mut self, skeleton: Arc<Skeleton>) -> Arc<Skeleton> {
        self.0.retain(|s| Arc::strong_count(s) > 1);
        let same = |a: &Skeleton, b: &Skeleton| {
            a.names() == b.names()
                && a.parent_indices() == b.parent_indices()
                && a.rest_transforms() == b.rest_transforms()
                && a.limits() == b.limits()
        };
        if let Some(shared) = self.0.iter().find(|s| same(s, &skeleton)) {
            return Arc::clone(shared);
        }
        self.0.push(Arc::clone(&skeleton));
        skeleton
    }
}

/// The joints below `root`, parents first, depth first: `(entity, parent index)`.
fn joints_below(root: Entity, children: &Query<&Children>) -> Vec<(Entity, Option<usize>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Entity, Option<usize>)> = Vec::new();
    if let Ok(kids) = children.get(root) {
        stack.extend(kids.iter().rev().map(|e| (e, None)));
    }
    while let Some((entity, parent)) = stack.pop() {
        let index = out.len();
        out.push((entity, parent));
        if let Ok(kids) = children.get(entity) {
            stack.extend(kids.iter().rev().map(|e| (e, Some(index))));
        }
    }
    out
}

/// `name`, or `name#2`, `name#3`, … when `names` has it (glTF allows duplicate node names;
/// a skeleton does not).
fn unique_name(names: &[String], name: String) -> String {
    if !names.contains(&name) {
        return name;
    }
    // Among `names.len() + 1` suffixes one is free.
    (2..names.len() + 3)
        .map(|k| format!("{name}#{k}"))
        .find(|n| !names.contains(n))
        .expect("an unused suffix")
}

/// Builds a character's rig from its joint entities, or says why not (`Ok(None)`: nothing
/// has spawned below the root yet).
fn build_rig(
    root: Entity,
    character: &IkarusCharacter,
    children: &Query<&Children>,
    nodes: &Query<(&Transform, Option<&Name>)>,
    frames: &WorldFrames,
) -> Result<Option<CharacterRig>, IkarusError> {
    let found = joints_below(root, children);
    let found: Vec<_> = found
        .into_iter()
        .filter(|(e, _)| nodes.contains(*e))
        .collect();
    if found.is_empty() {
        return Ok(None);
    }
    let root_world = frames.get(root).ok_or(IkarusError::MissingTarget(root))?;
    let Some((world_from_model, root_unit)) = model_frame(&root_world) else {
        return Err(IkarusError::NonUniformScale {
            joint: "(the character's root)".into(),
            scale: root_world.scale.to_array().map(|x| x as f32),
        });
    };
    let mut names: Vec<String> = Vec::with_capacity(found.len());
    let mut units = Vec::with_capacity(found.len());
    let mut scales = Vec::with_capacity(found.len());
    let mut rest = Vec::with_capacity(found.len());
    for &(entity, parent) in &found {
        let (transform, name) = nodes.get(entity).expect("filtered above");
        let name = unique_name(
            &names,
            name.map_or_else(|| format!("entity{}", entity.index()), ToString::to_string),
        );
        let unit = match parent {
            Some(p) => {
                let own = uniform(scales[p]).ok_or_else(|| IkarusError::NonUniformScale {
                    joint: names[p].clone(),
                    scale: scales[p].to_array(),
                })?;
                units[p] * own
            }
            None => root_unit,
        };
        units.push(unit);
        scales.push(transform.scale);
        rest.push(to_local(transform, unit));
        names.push(name);
    }
    let build = |limits: &[Option<JointLimit>]| -> Result<Skeleton, IkarusError> {
        let mut builder = SkeletonBuilder::new();
        for (k, &(_, parent)) in found.iter().enumerate() {
            let parent = parent.map(|p| names[p].as_str());
            match &limits[k] {
                Some(limit) => builder.limited_joint(&names[k], parent, rest[k], limit.clone()),
                None => builder.joint(&names[k], parent, rest[k]),
            };
        }
        builder
            .build()
            .map_err(|e| IkarusError::Skeleton(e.to_string()))
    };
    let free = build(&vec![None; found.len()])?;
    let mut map = HumanoidMap::recognise(&free);
    for (bone, name) in &character.bones {
        let joint = free
            .joint(name)
            .ok_or_else(|| IkarusError::UnknownJoint { name: name.clone() })?;
        map.set(*bone, Some(joint));
    }
    let skeleton = if character.limits.is_empty() {
        free
    } else {
        let mut limits = vec![None; found.len()];
        for (name, limit) in &character.limits {
            let joint = free
                .joint(name)
                .or_else(|| HumanoidBone::from_vrm_name(name).and_then(|b| map.joint(b)))
                .ok_or_else(|| IkarusError::UnknownJoint { name: name.clone() })?;
            limits[joint.index()] = Some(limit.clone());
        }
        build(&limits)?
    };
    let mut rig = CharacterRig::new(
        skeleton,
        map,
        found.iter().map(|&(e, _)| e).collect(),
        (units, scales),
        world_from_model,
    );
    if character.read_all_joints {
        rig.need_all();
    }
    Ok(Some(rig))
}

impl CharacterRig {
    /// A rig at its rest pose: the skeleton, its map, the joint entities by joint index, the
    /// units and scales read, the root's frame.
    fn new(
        skeleton: Skeleton,
        map: HumanoidMap,
        joints: Vec<Entity>,
        (units, scales): (Vec<f64>, Vec<Vec3>),
        world_from_model: DAffine3,
    ) -> Self {
        let pose = skeleton.rest_pose();
        let n = pose.len();
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let model_from_world = world_from_model.inverse();
        Self {
            joints,
            id: RIGS.fetch_add(1, Ordering::Relaxed),
            reads: vec![false; n],
            read_list: Vec::with_capacity(n),
            root_unit: units.first().copied().unwrap_or(1.0),
            units,
            scales,
            model,
            input: pose.clone(),
            model_current: true,
            touched: vec![false; n],
            touched_list: Vec::with_capacity(n),
            touched_spare: Vec::with_capacity(n),
            changed: Vec::with_capacity(n),
            listed: vec![false; n],
            pose,
            written: Vec::new(),
            world_from_model,
            model_from_world,
            model_from_world_rotation: DQuat::from_affine3(&model_from_world),
            dt: 0.0,
            readable: false,
            refused: false,
            skeleton: Arc::new(skeleton),
            map: Arc::new(map),
        }
    }
}

/// Builds the rig of every character that has none yet (when something below it spawned) or
/// whose [`IkarusCharacter`] changed.
pub(crate) fn build_characters(
    mut commands: Commands,
    mut characters: Query<(
        Entity,
        Ref<IkarusCharacter>,
        Has<CharacterRig>,
        &mut IkarusStatus,
    )>,
    spawned: Query<(), Changed<Children>>,
    children: Query<&Children>,
    nodes: Query<(&Transform, Option<&Name>)>,
    frames: WorldFrames,
    mut skeletons: ResMut<Skeletons>,
) {
    // Whether any entity got children this frame: looked up (a walk over every parent
    // entity) only when a character still waits for its joints.
    let mut anything_spawned = None;
    for (root, character, has_rig, mut status) in &mut characters {
        let changed = character.is_changed();
        if has_rig && !changed {
            continue;
        }
        if !(changed || *anything_spawned.get_or_insert_with(|| !spawned.is_empty())) {
            continue;
        }
        match build_rig(root, &character, &children, &nodes, &frames) {
            Ok(Some(mut rig)) => {
                rig.skeleton = skeletons.share(rig.skeleton);
                commands.entity(root).insert(rig);
                *status = IkarusStatus::Ready;
            }
            Ok(None) => *status = IkarusStatus::Waiting,
            Err(error) => {
                commands.entity(root).remove::<CharacterRig>();
                *status = IkarusStatus::Error(error);
            }
        }
    }
}

/// Reads every character's animated pose, root frame and frame time.
pub(crate) fn read_characters(
    mut characters: Query<(Entity, &mut CharacterRig, &mut IkarusStatus)>,
    transforms: Query<&Transform>,
    frames: WorldFrames,
    time: Res<Time>,
) {
    let dt = time.delta_secs_f64();
    for (root, rig, status) in &mut characters {
        read_character(root, rig, status, &transforms, &frames, dt);
    }
}

fn read_character(
    root: Entity,
    mut rig: Mut<CharacterRig>,
    mut status: Mut<IkarusStatus>,
    transforms: &Query<&Transform>,
    frames: &WorldFrames,
    dt: f64,
) {
    let rig = &mut *rig;
    rig.readable = false;
    rig.refused = false;
    rig.dt = dt;
    rig.clear_changed();
    let frame = frames.get(root).and_then(|world| model_frame(&world));
    let Some((world_from_model, root_unit)) = frame else {
        status.set_if_neq(IkarusStatus::Error(IkarusError::NonUniformScale {
            joint: "(the character's root)".into(),
            scale: [f32::NAN; 3],
        }));
        return;
    };
    rig.world_from_model = world_from_model;
    rig.model_from_world = world_from_model.inverse();
    rig.model_from_world_rotation = DQuat::from_affine3(&rig.model_from_world);
    let skeleton = &*rig.skeleton;
    // The units hold while no scale changes: from the first joint whose parent frame's scale
    // differs from the last read (parents come first), they are worked out again.
    let mut rescaled = root_unit != rig.root_unit;
    rig.root_unit = root_unit;
    for &k in &rig.read_list {
        let entity = rig.joints[k];
        let Ok(transform) = transforms.get(entity) else {
            status.set_if_neq(IkarusStatus::Error(IkarusError::MissingTarget(entity)));
            return;
        };
        let joint = JointId::from_index(k);
        if rescaled {
            rig.units[k] = if let Some(p) = skeleton.parent(joint) {
                let Some(own) = uniform(rig.scales[p.index()]) else {
                    status.set_if_neq(IkarusStatus::Error(IkarusError::NonUniformScale {
                        joint: skeleton.name(p).to_owned(),
                        scale: rig.scales[p.index()].to_array(),
                    }));
                    return;
                };
                rig.units[p.index()] * own
            } else {
                root_unit
            };
        }
        if transform.scale != rig.scales[k] {
            rig.scales[k] = transform.scale;
            rescaled = true;
        }
        let unit = rig.units[k];
        // A joint still holding what the last write put there was not animated since.
        if rig.touched[k] && rig.written[k] == *transform {
            rig.pose[joint] = rig.input[joint];
        } else if transform.translation.is_finite() && transform.rotation.is_finite() {
            let local = to_local(transform, unit);
            rig.pose[joint] = local;
            rig.input[joint] = local;
        } else {
            status.set_if_neq(IkarusStatus::Error(IkarusError::NonFinitePose));
            return;
        }
    }
    rig.model_current = false;
    rig.readable = true;
    if *status != IkarusStatus::Ready {
        *status = IkarusStatus::Ready;
    }
}

/// Writes every solved pose back into its joints: only the joints a solver may have changed
/// and those the last write left solved are looked at, and only the transforms that changed
/// are touched, so Bevy's change detection sees only what IK moved.
pub(crate) fn write_characters(
    mut characters: Query<&mut CharacterRig>,
    mut transforms: Query<&mut Transform>,
) {
    for mut rig in &mut characters {
        let rig = &mut *rig;
        let finite =
            |t: &ikarus_core::Transform| t.translation.is_finite() && t.rotation.is_finite();
        // Joints no solver listed hold the input, read finite. A frame nothing solved (no
        // solver on the character any more) puts the animation back where the last write
        // left a solved transform.
        let writable = rig.readable
            && !rig.refused
            && rig
                .changed
                .iter()
                .all(|&k| finite(&rig.pose[JointId::from_index(k)]));
        if !writable {
            if rig.readable {
                rig.update_model();
            }
            rig.clear_changed();
            continue;
        }
        if rig.written.len() != rig.joints.len() {
            // The first write: sized once.
            rig.written = vec![Transform::IDENTITY; rig.joints.len()];
        }
        let mut next = std::mem::take(&mut rig.touched_spare);
        next.clear();
        let (changed, previous) = (
            std::mem::take(&mut rig.changed),
            std::mem::take(&mut rig.touched_list),
        );
        // The listed joints, then those left solved last frame that no solver listed.
        let unlisted = previous.iter().copied().filter(|&k| !rig.listed[k]);
        for k in changed.iter().copied().chain(unlisted) {
            let joint = JointId::from_index(k);
            // A joint IK left as animated, and did not write last frame either, holds its
            // animation already: not even looked up.
            let moved = rig.pose[joint] != rig.input[joint];
            if (moved || rig.touched[k])
                && let Ok(mut transform) = transforms.get_mut(rig.joints[k])
            {
                let solved = from_local(&rig.pose[joint], rig.units[k], rig.scales[k]);
                transform.set_if_neq(solved);
                rig.written[k] = solved;
                rig.touched[k] = moved;
            }
            if rig.touched[k] {
                next.push(k);
            }
        }
        rig.changed = changed;
        rig.touched_list = next;
        rig.touched_spare = previous;
        rig.clear_changed();
        rig.update_model();
    }
}
