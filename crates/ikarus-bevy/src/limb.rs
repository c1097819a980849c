//! A limb solved by a closed form: two-bone or the 7-DOF limb, towards a target entity, its
//! elbow or knee turned towards a pole entity.

use std::sync::Arc;

use bevy::prelude::*;
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, JointLimit, ModelPose, Skeleton, Transform as IkTransform, fk};
use ikarus_solve::SolveStatus;
use ikarus_solve::limb7::{self, Limb7Chain, Limb7Goal, SwivelPolicy};
use ikarus_solve::two_bone::{self, Pole, TwoBoneChain, TwoBoneSettings};

use crate::character::CharacterRig;
use crate::convert::{WorldFrames, dvec3, to_model};
use crate::error::{IkReport, IkarusError};

/// Which limb: a humanoid hand or foot (its chain found through the humanoid map), or three
/// joints by name.
#[derive(Clone, Debug, PartialEq)]
pub enum LimbEnd {
    /// Left upper arm → lower arm → hand.
    LeftHand,
    /// Right upper arm → lower arm → hand.
    RightHand,
    /// Left upper leg → lower leg → foot.
    LeftFoot,
    /// Right upper leg → lower leg → foot.
    RightFoot,
    /// Any start → mid → end joints down one branch, by their entities' `Name`s.
    Joints {
        /// Shoulder or hip.
        start: String,
        /// Elbow or knee.
        mid: String,
        /// Wrist or ankle: the joint that reaches the target.
        end: String,
    },
}

impl LimbEnd {
    /// The humanoid bones of this limb, root first.
    fn bones(&self) -> Option<[HumanoidBone; 3]> {
        match self {
            LimbEnd::LeftHand => Some(HumanoidBone::ARMS[0]),
            LimbEnd::RightHand => Some(HumanoidBone::ARMS[1]),
            LimbEnd::LeftFoot => Some(HumanoidBone::LEGS[0]),
            LimbEnd::RightFoot => Some(HumanoidBone::LEGS[1]),
            LimbEnd::Joints { .. } => None,
        }
    }
}

/// Which closed form solves the limb.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum LimbSolver {
    /// Two-bone IK (ozz's and Unity's): the mid joint a hinge, the pole a hint position.
    #[default]
    TwoBone,
    /// The 7-DOF limb (seed 000, 7-DOF limb): the elbow a hinge with a range, the swivel
    /// chosen by `swivel` (the pole, when given, asks for its swivel: the nearest feasible
    /// one), every limit of the shoulder and wrist kept exactly.
    Limb7 {
        /// The elbow's range `[min, max]`, radians, when its joint has no hinge limit.
        elbow_range: [f64; 2],
        /// The swivel without a pole. Default `KeepCurrent`.
        swivel: SwivelPolicy,
    },
}

/// A limb of a character solved towards a target entity: put it on any entity (its own, or
/// the target's). Its outcome is the [`IkReport`] on the same entity.
#[derive(Component, Clone, Debug, PartialEq)]
#[require(IkReport)]
pub struct LimbIk {
    /// The character (the entity with [`IkarusCharacter`](crate::IkarusCharacter)).
    pub character: Entity,
    /// Which limb.
    pub end: LimbEnd,
    /// Where the end joint goes: this entity's world position (and rotation, by
    /// [`rotation_weight`](Self::rotation_weight)).
    pub target: Entity,
    /// The elbow or knee turns towards this entity's world position; `None` keeps the
    /// current bend plane.
    pub pole: Option<Entity>,
    /// The closed form. Default [`LimbSolver::TwoBone`].
    pub solver: LimbSolver,
    /// How far the end goes to the target, 0..1 (0 keeps the animation). Default 1.
    pub position_weight: f64,
    /// How far the end joint turns to the target's rotation, 0..1. Default 0 (the hand
    /// keeps its rotation relative to the forearm).
    pub rotation_weight: f64,
    /// The mid joint's hinge axis in its rest frame; `None` (default) takes the joint's hinge
    /// limit, else the humanoid convention (knees about the body's left, elbows about its
    /// down or up), else the rest bend's normal.
    pub mid_axis: Option<Vec3>,
}

impl LimbIk {
    /// `end` of `character` to `target`, two-bone, full position weight, no pole.
    pub fn new(character: Entity, end: LimbEnd, target: Entity) -> Self {
        Self {
            character,
            end,
            target,
            pole: None,
            solver: LimbSolver::TwoBone,
            position_weight: 1.0,
            rotation_weight: 0.0,
            mid_axis: None,
        }
    }

    /// With a pole entity.
    #[must_use]
    pub fn with_pole(mut self, pole: Entity) -> Self {
        self.pole = Some(pole);
        self
    }

    /// With another closed form.
    #[must_use]
    pub fn with_solver(mut self, solver: LimbSolver) -> Self {
        self.solver = solver;
        self
    }

    /// With a rotation weight (the end joint turned to the target's rotation).
    #[must_use]
    pub fn with_rotation_weight(mut self, weight: f64) -> Self {
        self.rotation_weight = weight;
        self
    }
}

/// The chain of a prepared limb.
#[derive(Clone, Debug)]
enum Chain {
    TwoBone(TwoBoneChain),
    Limb7(Limb7Chain),
}

/// A limb's chain found once on its character's skeleton, and this frame's goals.
#[derive(Component, Debug)]
pub(crate) struct LimbState {
    /// The skeleton the chain was found on (rebuilt when the character's rig is).
    skeleton: Arc<Skeleton>,
    chain: Chain,
    /// The start, mid and end joints.
    joints: [JointId; 3],
    /// This frame's target (model space), pole, or why not.
    target: Result<(DVec3, DQuat), IkarusError>,
    pole: Option<Result<DVec3, IkarusError>>,
    /// The rig asked for the chain's joints (its identity).
    registered: Option<u64>,
}

impl LimbState {
    /// The chain's joints, from its end up to its start.
    fn chain(&self) -> impl Iterator<Item = JointId> + '_ {
        let [start, _, end] = self.joints;
        std::iter::successors(Some(end), move |&j| {
            (j != start).then(|| self.skeleton.parent(j)).flatten()
        })
    }
}

/// The mid joint's hinge axis in its rest frame: given, its hinge limit, the humanoid
/// convention, else the rest bend's normal (else +X).
fn mid_axis(rig: &CharacterRig, limb: &LimbIk, [start, mid, end]: [JointId; 3]) -> DVec3 {
    let skeleton = rig.skeleton();
    if let Some(axis) = limb
        .mid_axis
        .map(dvec3)
        .filter(|a| a.length_squared() > 0.0)
    {
        return axis;
    }
    if let JointLimit::Hinge(h) = skeleton.limit(mid) {
        return h.axis;
    }
    let mut rest = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
    let map = rig.map();
    let at = |b: HumanoidBone| map.joint(b).map(|j| rest.position(j));
    let up = match (at(HumanoidBone::Head), at(HumanoidBone::Hips)) {
        (Some(h), Some(p)) => (h - p).try_normalize(),
        _ => None,
    };
    let left = match (
        at(HumanoidBone::LeftUpperLeg),
        at(HumanoidBone::RightUpperLeg),
        up,
    ) {
        (Some(l), Some(r), Some(up)) => (l - r).reject_from(up).try_normalize(),
        _ => None,
    };
    let convention = match (&limb.end, up, left) {
        (LimbEnd::LeftHand, Some(up), _) => Some(-up),
        (LimbEnd::RightHand, Some(up), _) => Some(up),
        (LimbEnd::LeftFoot | LimbEnd::RightFoot, _, Some(left)) => Some(left),
        _ => None,
    };
    let model_axis = convention.or_else(|| {
        let (a, b, c) = (rest.position(start), rest.position(mid), rest.position(end));
        (b - a).cross(c - b).try_normalize()
    });
    model_axis.map_or(DVec3::X, |axis| rest.rotation(mid).conjugate() * axis)
}

/// Finds a limb's joints and builds its chain.
fn prepare(rig: &CharacterRig, limb: &LimbIk) -> Result<LimbState, IkarusError> {
    let skeleton = rig.skeleton();
    let joints = match (&limb.end, limb.end.bones()) {
        (_, Some(bones)) => bones.map(|b| {
            rig.map()
                .joint(b)
                .ok_or(IkarusError::MissingBone { bone: b.vrm_name() })
        }),
        (LimbEnd::Joints { start, mid, end }, None) => [start, mid, end].map(|name| {
            skeleton
                .joint(name)
                .ok_or_else(|| IkarusError::UnknownJoint { name: name.clone() })
        }),
        _ => unreachable!("bones() is None only for Joints"),
    };
    let [start, mid, end] = joints;
    let joints = [start?, mid?, end?];
    let axis = mid_axis(rig, limb, joints);
    let setup = |e: &dyn std::fmt::Display| IkarusError::Setup(e.to_string());
    let chain = match limb.solver {
        LimbSolver::TwoBone => Chain::TwoBone(
            TwoBoneChain::new(skeleton, joints[0], joints[1], joints[2], axis)
                .map_err(|e| setup(&e))?,
        ),
        LimbSolver::Limb7 { elbow_range, .. } => {
            let range = match skeleton.limit(joints[1]) {
                JointLimit::Hinge(h) => [h.min, h.max],
                _ => elbow_range,
            };
            Chain::Limb7(
                Limb7Chain::with_hinge(skeleton, joints, axis, range).map_err(|e| setup(&e))?,
            )
        }
    };
    Ok(LimbState {
        skeleton: Arc::clone(rig.skeleton_arc()),
        chain,
        joints,
        target: Err(IkarusError::MissingTarget(limb.target)),
        pole: None,
        registered: None,
    })
}

/// Prepares every limb that is new, changed, or whose character was rebuilt.
pub(crate) fn prepare_limbs(
    mut commands: Commands,
    mut limbs: Query<(Entity, Ref<LimbIk>, Option<&mut LimbState>, &mut IkReport)>,
    mut rigs: Query<&mut CharacterRig>,
) {
    for (entity, limb, state, mut report) in &mut limbs {
        let Ok(mut rig) = rigs.get_mut(limb.character) else {
            if state.is_some() {
                commands.entity(entity).remove::<LimbState>();
            }
            report.set_error(IkarusError::NotACharacter(limb.character));
            continue;
        };
        if let Some(mut state) = state
            && Arc::ptr_eq(&state.skeleton, rig.skeleton_arc())
            && !limb.is_changed()
        {
            // A rig built again on the same skeleton is asked for the joints again.
            if state.registered != Some(rig.id()) {
                rig.need(state.chain());
                state.registered = Some(rig.id());
            }
            continue;
        }
        match prepare(&rig, &limb) {
            Ok(mut state) => {
                rig.need(state.chain());
                state.registered = Some(rig.id());
                commands.entity(entity).insert(state);
            }
            Err(error) => {
                commands.entity(entity).remove::<LimbState>();
                report.set_error(error);
            }
        }
    }
}

/// A target entity's model-space position and rotation.
pub(crate) fn target_in(
    rig: &CharacterRig,
    entity: Entity,
    frames: &WorldFrames,
) -> Result<(DVec3, DQuat), IkarusError> {
    let world = frames
        .get(entity)
        .ok_or(IkarusError::MissingTarget(entity))?;
    to_model(
        &world,
        &rig.model_from_world(),
        rig.model_from_world_rotation(),
    )
    .ok_or(IkarusError::NonFiniteTarget(entity))
}

/// Solves every limb on its character's current pose (after the full-body solvers): its
/// target and pole read, then the chain's closed form.
pub(crate) fn solve_limbs(
    mut limbs: Query<(&LimbIk, &mut LimbState, &mut IkReport)>,
    mut rigs: Query<&mut CharacterRig>,
    frames: WorldFrames,
) {
    for (limb, mut state, mut report) in &mut limbs {
        let Ok(mut rig) = rigs.get_mut(limb.character) else {
            continue;
        };
        if !rig.readable || !Arc::ptr_eq(&state.skeleton, rig.skeleton_arc()) {
            continue;
        }
        state.target = target_in(&rig, limb.target, &frames);
        state.pole = limb
            .pole
            .map(|pole| target_in(&rig, pole, &frames).map(|(p, _)| p));
        match solve_limb(&mut rig, limb, &state) {
            Ok((status, errors, limited)) => report.set_solved(status, errors, limited),
            Err(error) => {
                rig.refused = true;
                report.set_error(error);
            }
        }
    }
}

/// A weight clamped to 0..1 (NaN: 0).
pub(crate) fn weight(w: f64) -> f64 {
    if w.is_nan() { 0.0 } else { w.clamp(0.0, 1.0) }
}

/// Puts `joint`'s local rotation back onto its limit; whether it had to.
fn hold_limit(skeleton: &Skeleton, pose: &mut ikarus_core::LocalPose, joint: JointId) -> bool {
    let limit = skeleton.limit(joint);
    if limit.is_free() {
        return false;
    }
    let rest = skeleton.rest(joint).rotation;
    let delta = rest.conjugate() * pose[joint].rotation;
    if limit.contains(delta) {
        return false;
    }
    pose[joint] = IkTransform {
        rotation: (rest * limit.project(delta)).normalize(),
        ..pose[joint]
    };
    true
}

/// One limb's solve on the character's pose: its status, `[position, rotation]` errors
/// measured by FK, and whether a limit held a joint.
fn solve_limb(
    rig: &mut CharacterRig,
    limb: &LimbIk,
    state: &LimbState,
) -> Result<(SolveStatus, [f64; 2], bool), IkarusError> {
    let (target, target_rotation) = state.target.clone()?;
    let pole = state.pole.clone().transpose()?;
    let [start, mid, end] = state.joints;
    let skeleton = Arc::clone(&state.skeleton);
    let rig = &mut *rig;
    rig.update_model();
    let (pose, model) = (&mut rig.pose, &mut rig.model);
    let goal = model
        .position(end)
        .lerp(target, weight(limb.position_weight));
    let mut limited = false;
    match &state.chain {
        Chain::TwoBone(chain) => {
            let pole = match pole {
                Some(p) => Pole::Hint(p),
                None => current_pole(&skeleton, model, chain),
            };
            two_bone::solve_chain(
                &skeleton,
                chain,
                goal,
                pole,
                &TwoBoneSettings::default(),
                pose,
                model,
            );
            for joint in [start, mid, end] {
                limited |= hold_limit(&skeleton, pose, joint);
            }
        }
        Chain::Limb7(chain) => {
            let LimbSolver::Limb7 { swivel, .. } = limb.solver else {
                unreachable!("a limb7 chain comes from LimbSolver::Limb7")
            };
            let policy = match pole {
                Some(p) => {
                    let limb7 = chain
                        .limb(&skeleton, pose)
                        .map_err(|e| IkarusError::Solve(e.to_string()))?;
                    let limb_from_model = chain.model_from_limb(&skeleton, pose, model).inverse();
                    limb7
                        .swivel_from_positions(
                            limb_from_model.transform_point3(goal),
                            limb_from_model.transform_point3(p),
                        )
                        .map_or(swivel, SwivelPolicy::NearestFeasible)
                }
                None => swivel,
            };
            let report = limb7::solve_chain(
                &skeleton,
                chain,
                &Limb7Goal {
                    position: goal,
                    orientation: None,
                },
                policy,
                pose,
                model,
            )
            .map_err(|e| IkarusError::Solve(e.to_string()))?;
            limited = !report.limited.is_empty();
        }
    }
    let rotation_weight = weight(limb.rotation_weight);
    let wanted = (rotation_weight > 0.0).then(|| {
        let parent = skeleton
            .parent(end)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p));
        let wanted = model
            .rotation(end)
            .slerp(target_rotation, rotation_weight)
            .normalize();
        pose[end].rotation = (parent.conjugate() * wanted).normalize();
        limited |= hold_limit(&skeleton, pose, end);
        wanted
    });
    fk::update_subtree(&skeleton, pose, model, start);
    let position_error = model.position(end).distance(goal);
    let rotation_error = wanted.map_or(0.0, |w| model.rotation(end).angle_between(w));
    rig.may_change(state.chain());
    // Reached within 1e-4 of the skeleton's unit (0.1 mm at metres) and 1e-3 rad.
    let status = if position_error <= 1e-4 && rotation_error <= 1e-3 {
        SolveStatus::Converged
    } else {
        SolveStatus::Unreachable
    };
    Ok((status, [position_error, rotation_error], limited))
}

/// The pole that keeps a two-bone chain's current bend plane: the mid joint's offset from the
/// start→end line, or for a straight limb the way its hinge bends it.
fn current_pole(skeleton: &Skeleton, model: &ModelPose, chain: &TwoBoneChain) -> Pole {
    let (a, b, c) = (
        model.position(chain.start),
        model.position(chain.mid),
        model.position(chain.end),
    );
    let line = c - a;
    let offset = (b - a).reject_from(line);
    if offset.length_squared() > 1e-12 * line.length_squared() {
        return Pole::Vector(offset);
    }
    let parent = skeleton
        .parent(chain.mid)
        .map_or(DQuat::IDENTITY, |p| model.rotation(p));
    let axis = parent * skeleton.rest(chain.mid).rotation * chain.mid_axis;
    Pole::Vector(line.cross(axis))
}
