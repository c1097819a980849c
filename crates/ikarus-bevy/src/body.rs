//! Full-body IK on a character: effector entities pulling hips, chest, head, hands and feet,
//! with grounding; one body solve per character and frame.

use std::sync::Arc;

use bevy::prelude::*;
use ikarus_anim::ground::FrameGrounder;
use ikarus_anim::retarget::Character;
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, Skeleton, fk};
use ikarus_solve::body::{BodyConfig, BodyRig, BodyScratch};
use ikarus_solve::{Effector, Goal, IkTask, SolveReport, SolveStatus};

use crate::character::CharacterRig;
use crate::convert::WorldFrames;
use crate::error::{IkReport, IkarusError};
use crate::ground::{Grounding, IkarusGround, ModelGround};
use crate::limb::{target_in, weight};
use crate::tracked::TrackedBody;

/// One effector of a [`FullBodyIk`]: a humanoid bone pulled towards an entity.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyEffector {
    /// The bone: hips, spine / chest / upper chest (the highest the character maps), head,
    /// a hand or a foot.
    pub bone: HumanoidBone,
    /// The entity whose world transform is the goal.
    pub target: Entity,
    /// How far the bone goes to the target's position, 0..1 (0 keeps the animation's).
    /// Default 1.
    pub position_weight: f64,
    /// How far the bone turns to the target's rotation, 0..1. Default 0 (free).
    pub rotation_weight: f64,
    /// How far the body follows this effector, 0..1: 0 leaves the pelvis and spine where they
    /// are and the limb does what it can; 1 moves them until the goal is in reach, weighed
    /// against the other effectors. Default 1.
    pub pull: f64,
}

impl BodyEffector {
    /// `bone` to `target`'s position, full weight and pull, rotation free.
    pub fn new(bone: HumanoidBone, target: Entity) -> Self {
        Self {
            bone,
            target,
            position_weight: 1.0,
            rotation_weight: 0.0,
            pull: 1.0,
        }
    }

    /// With a rotation weight.
    #[must_use]
    pub fn with_rotation_weight(mut self, weight: f64) -> Self {
        self.rotation_weight = weight;
        self
    }

    /// With a pull.
    #[must_use]
    pub fn with_pull(mut self, pull: f64) -> Self {
        self.pull = pull;
        self
    }
}

/// Full-body IK on the character's entity (Final IK's `FullBodyBipedIK`): the pelvis, spine,
/// clavicles, head and four limbs solved at once ([`ikarus_solve::body`]) for the
/// [`effectors`](Self::effectors), over the animated pose. The outcome is the [`IkReport`] on
/// the same entity. Changing the component re-prepares the solver (allocates); moving the
/// targets does not.
#[derive(Component, Clone, Debug, Default, PartialEq)]
#[require(IkReport)]
pub struct FullBodyIk {
    /// The effectors, at most one per bone.
    pub effectors: Vec<BodyEffector>,
    /// Elbows and knees turned towards entities (the lower arm's or leg's bone →
    /// entity), every frame.
    pub bend_goals: Vec<(HumanoidBone, Entity)>,
    /// The solver's settings: `blend` per bone, root mode, stiffnesses, iterations (the
    /// effectors' `pull` override `pull`).
    pub config: BodyConfig,
}

impl FullBodyIk {
    /// With an effector.
    #[must_use]
    pub fn with(mut self, effector: BodyEffector) -> Self {
        self.effectors.push(effector);
        self
    }
}

/// Where a grounded goal goes in the task (`None`: an effector of the game's drives it).
#[derive(Clone, Copy, Debug)]
struct Grounded {
    hips: Option<usize>,
    feet: [Option<usize>; 2],
}

/// A character's body solver prepared once, and this frame's targets.
#[derive(Component, Debug)]
pub(crate) struct BodyState {
    skeleton: Arc<Skeleton>,
    rig: BodyRig,
    config: BodyConfig,
    /// The game's effectors first (in [`FullBodyIk::effectors`]' order), then the grounded
    /// ones.
    task: IkTask,
    /// Per game effector: its joint and weights `[position, rotation]`.
    slots: Vec<(JointId, [f64; 2])>,
    targets: Vec<Result<(DVec3, DQuat), IkarusError>>,
    bends: Vec<(HumanoidBone, Entity, Result<DVec3, IkarusError>)>,
    grounder: Option<(FrameGrounder, Grounded)>,
    /// The body solve's buffers, kept from frame to frame (no allocation per frame).
    scratch: BodyScratch,
    /// The joints the solve reads or moves (the body's, the grounded toes), asked of the rig
    /// whose identity is `registered`.
    needs: Vec<JointId>,
    registered: Option<u64>,
}

/// The joint a body effector on `bone` drives (the chest's: the highest of spine, chest and
/// upper chest the character maps).
fn effector_joint(rig: &CharacterRig, bone: HumanoidBone) -> Result<JointId, IkarusError> {
    use HumanoidBone as B;
    let map = rig.map();
    let joint = match bone {
        B::Spine | B::Chest | B::UpperChest => [B::UpperChest, B::Chest, B::Spine]
            .iter()
            .find_map(|&b| map.joint(b)),
        _ => map.joint(bone),
    };
    joint.ok_or(IkarusError::MissingBone {
        bone: bone.vrm_name(),
    })
}

fn prepare(
    rig: &CharacterRig,
    body: Option<&FullBodyIk>,
    grounding: Option<&Grounding>,
) -> Result<BodyState, IkarusError> {
    let skeleton = rig.skeleton();
    let setup = |e: &dyn std::fmt::Display| IkarusError::Setup(e.to_string());
    let empty = FullBodyIk::default();
    let body = body.unwrap_or(&empty);
    let mut config = body.config.clone();
    let mut task = IkTask::default();
    let mut slots = Vec::with_capacity(body.effectors.len());
    for e in &body.effectors {
        let joint = effector_joint(rig, e.bone)?;
        // Only a pull other than what the settings give (1 by default) is written in: every
        // solve looks the effectors' pulls up by name.
        let pull = weight(e.pull);
        if config.pull.get(e.bone.vrm_name()).copied().unwrap_or(1.0) != pull {
            config.pull.insert(e.bone.vrm_name().to_owned(), pull);
        }
        task.effectors
            .push(Effector::new(joint, Goal::from_position(DVec3::ZERO)));
        slots.push((
            joint,
            [weight(e.position_weight), weight(e.rotation_weight)],
        ));
    }
    let grounder = match grounding {
        Some(g) => {
            let character = Character {
                skeleton,
                map: rig.map(),
            };
            let grounder = FrameGrounder::new(character, &g.config).map_err(|e| setup(&e))?;
            let mut slot = |joint: JointId| {
                if slots.iter().any(|&(j, _)| j == joint) {
                    return None;
                }
                task.effectors
                    .push(Effector::new(joint, Goal::from_position(DVec3::ZERO)));
                Some(task.effectors.len() - 1)
            };
            let hips = slot(grounder.hips());
            let [l, r] = grounder.ankles();
            let feet = [slot(l), slot(r)];
            Some((grounder, Grounded { hips, feet }))
        }
        None => None,
    };
    let mut body_rig = BodyRig::from_map(skeleton, rig.map(), &config).map_err(|e| setup(&e))?;
    body_rig
        .check_task(skeleton, &task)
        .map_err(|e| setup(&e))?;
    for &(bone, _) in &body.bend_goals {
        body_rig.set_bend_goal(bone, None).map_err(|e| setup(&e))?;
    }
    let mut needs = body_rig.driven().to_vec();
    needs.extend(task.effectors.iter().map(|e| e.joint));
    if grounder.is_some() {
        needs.extend(
            HumanoidBone::TOES
                .iter()
                .filter_map(|&b| rig.map().joint(b)),
        );
    }
    Ok(BodyState {
        needs,
        registered: None,
        skeleton: Arc::clone(rig.skeleton_arc()),
        scratch: BodyScratch::new(skeleton, &body_rig),
        rig: body_rig,
        config,
        targets: body
            .effectors
            .iter()
            .map(|e| Err(IkarusError::MissingTarget(e.target)))
            .collect(),
        bends: body
            .bend_goals
            .iter()
            .map(|&(b, e)| (b, e, Err(IkarusError::MissingTarget(e))))
            .collect(),
        task,
        slots,
        grounder,
    })
}

/// Prepares the body solver of every character with [`FullBodyIk`] or [`Grounding`] that is
/// new, changed, or whose rig was rebuilt (tracked bodies have their own).
pub(crate) fn prepare_bodies(
    mut commands: Commands,
    mut bodies: Query<
        (
            Entity,
            Option<Ref<FullBodyIk>>,
            Option<Ref<Grounding>>,
            Option<&mut BodyState>,
            &mut IkReport,
        ),
        (
            Or<(With<FullBodyIk>, With<Grounding>)>,
            Without<TrackedBody>,
        ),
    >,
    mut rigs: Query<&mut CharacterRig>,
    mut gone: RemovedComponents<FullBodyIk>,
    mut ungrounded: RemovedComponents<Grounding>,
) {
    for entity in gone.read().chain(ungrounded.read()) {
        if let Ok(mut e) = commands.get_entity(entity) {
            e.remove::<BodyState>();
        }
    }
    for (entity, body, grounding, state, mut report) in &mut bodies {
        let Ok(mut rig) = rigs.get_mut(entity) else {
            continue;
        };
        let changed = body.as_ref().is_some_and(Ref::is_changed)
            || grounding.as_ref().is_some_and(Ref::is_changed);
        if let Some(mut state) = state
            && Arc::ptr_eq(&state.skeleton, rig.skeleton_arc())
            && !changed
        {
            // A rig built again on the same skeleton is asked for the joints again.
            if state.registered != Some(rig.id()) {
                rig.need(state.needs.iter().copied());
                state.registered = Some(rig.id());
            }
            continue;
        }
        match prepare(&rig, body.as_deref(), grounding.as_deref()) {
            Ok(mut state) => {
                rig.need(state.needs.iter().copied());
                state.registered = Some(rig.id());
                commands.entity(entity).insert(state);
            }
            Err(error) => {
                commands.entity(entity).remove::<BodyState>();
                report.set_error(error);
            }
        }
    }
}

/// Reads a body's targets and bend goals (model space).
fn read_targets(
    rig: &CharacterRig,
    body: &FullBodyIk,
    state: &mut BodyState,
    frames: &WorldFrames,
) {
    for (target, e) in state.targets.iter_mut().zip(&body.effectors) {
        *target = target_in(rig, e.target, frames);
    }
    for (_, entity, at) in &mut state.bends {
        *at = target_in(rig, *entity, frames).map(|(p, _)| p);
    }
}

/// Solves every body: its targets read, the game's effectors blended over the animation,
/// the grounded hips and feet, then the full-body solver.
pub(crate) fn solve_bodies(
    mut bodies: Query<
        (
            &mut CharacterRig,
            Option<&FullBodyIk>,
            &mut BodyState,
            &mut IkReport,
        ),
        Without<TrackedBody>,
    >,
    frames: WorldFrames,
    ground: Option<Res<IkarusGround>>,
) {
    let flat = IkarusGround::default();
    let ground = ground.as_deref().unwrap_or(&flat);
    // Characters are independent: with Bevy's `multi_threaded` feature (this crate's
    // `multi_threaded`) they are solved on the compute task pool's threads, else in turn.
    bodies
        .par_iter_mut()
        .for_each(|(mut rig, body, mut state, mut report)| {
            if !rig.readable || !Arc::ptr_eq(&state.skeleton, rig.skeleton_arc()) {
                return;
            }
            if let Some(body) = body {
                read_targets(&rig, body, &mut state, &frames);
            }
            match solve_body(&mut rig, &mut state, ground) {
                Ok(solved) => report.set_report(&solved),
                Err(error) => {
                    rig.refused = true;
                    report.set_error(error);
                }
            }
        });
}

/// One character's body solve on its pose (the animation on entry); its report.
///
/// Kept as one function of about 110 lines: the effectors, bend goals, grounding and solve of one
/// character read the same borrowed rig and state in the order the frame runs them.
fn solve_body(
    rig: &mut CharacterRig,
    state: &mut BodyState,
    ground: &IkarusGround,
) -> Result<SolveReport, IkarusError> {
    let rig = &mut *rig;
    let state = &mut *state;
    // The animated frames, for weights below 1 and the grounder.
    let partial = |w: f64| w > 0.0 && w < 1.0;
    if state.grounder.is_some()
        || state
            .slots
            .iter()
            .any(|(_, [wp, wr])| partial(*wp) || partial(*wr))
    {
        rig.update_model();
    }
    let model = &rig.model;
    // The game's effectors: the animated frame moved towards the target by the weights.
    for ((effector, &(joint, [wp, wr])), target) in state
        .task
        .effectors
        .iter_mut()
        .zip(&state.slots)
        .zip(&state.targets)
    {
        let (position, rotation) = target.clone()?;
        effector.goal = Goal {
            position: match wp {
                0.0 => None,
                1.0 => Some(position),
                w => Some(model.position(joint).lerp(position, w)),
            },
            orientation: match wr {
                0.0 => None,
                1.0 => Some(rotation),
                w => Some(model.rotation(joint).slerp(rotation, w).normalize()),
            },
        };
        effector.weight = 1.0;
        if effector.goal.position.is_none() && effector.goal.orientation.is_none() {
            // Both weights 0: the effector holds nothing (its goal is never read).
            effector.goal = Goal::from_position(position);
            effector.weight = 0.0;
        }
    }
    for (bone, _, at) in &state.bends {
        let at = at.clone()?;
        state
            .rig
            .set_bend_goal(*bone, Some(at))
            .map_err(|e| IkarusError::Setup(e.to_string()))?;
    }
    // The toes the grounder bends over an edge, set on the solved pose.
    let mut toes = [None; 2];
    if let Some((grounder, slots)) = &mut state.grounder {
        let in_model = ModelGround {
            ground,
            world_from_model: rig.world_from_model(),
            model_from_world: rig.model_from_world(),
        };
        let goals = grounder.goals(model, &in_model, rig.dt);
        if let Some(k) = slots.hips {
            state.task.effectors[k].goal = goals.hips;
        }
        for (slot, goal) in slots.feet.iter().zip(goals.feet) {
            if let Some(k) = *slot {
                state.task.effectors[k].goal = goal;
            }
        }
        // Only for a foot the grounder drives (not one a game's effector holds).
        for (s, slot) in slots.feet.iter().enumerate() {
            toes[s] = goals.toes[s].filter(|_| slot.is_some());
        }
    }
    // The solve's own model frames are the FK of the pose it returned: no FK again at
    // `Write`. Frames already made for the grounder or the weights are its starting frames
    // (`solve_in`); else they are exchanged after, not copied (the next solve overwrites
    // what the scratch holds).
    let report = if rig.model_current {
        state.rig.solve_in(
            &state.skeleton,
            &state.task,
            &state.config,
            &mut rig.pose,
            &mut rig.model,
            &mut state.scratch,
        )
    } else {
        let report = state.rig.solve_with(
            &state.skeleton,
            &state.task,
            &state.config,
            &mut rig.pose,
            &mut state.scratch,
        );
        state.scratch.swap_model(&mut rig.model);
        report
    };
    if report.status == SolveStatus::InvalidInput {
        return Err(IkarusError::Solve(report.message.unwrap_or_default()));
    }
    for (joint, bent) in toes.into_iter().flatten() {
        rig.pose[joint].rotation = bent;
        fk::update_subtree(&state.skeleton, &rig.pose, &mut rig.model, joint);
        rig.may_change([joint]);
    }
    rig.model_current = true;
    rig.may_change(state.rig.driven().iter().copied());
    Ok(report)
}
