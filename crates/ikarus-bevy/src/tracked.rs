//! A character driven by VR trackers: head and hands (3-point), hips (4), feet (6), each a
//! tracker entity, through [`ikarus_anim::track::TrackSolver`].

use std::sync::Arc;

use bevy::prelude::*;
use ikarus_anim::retarget::Character;
use ikarus_anim::track::{Points, TrackConfig, TrackSolver, calibrate};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::trackers::TrackerPose;
use ikarus_core::{LocalPose, Skeleton};
use ikarus_solve::SolveStatus;

use crate::character::CharacterRig;
use crate::convert::WorldFrames;
use crate::error::{IkReport, IkarusError};
use crate::ground::{IkarusGround, ModelGround};
use crate::limb::target_in;
use crate::owned::OwnedTracker;

/// A character posed from trackers every frame (a VR player's avatar): put it on the
/// character's entity. On the first frame its head and hand trackers are all present, it
/// calibrates — the player standing in the avatar's reference pose (its rest, or a T-pose)
/// on the floor: that frame gives the scale and each device's offset to its bone. Touch the
/// component (`set_changed`) to calibrate again. Untracked feet step; a lost tracker is held.
/// The outcome is the [`IkReport`] on the same entity.
#[derive(Component, Clone, Debug, PartialEq)]
#[require(IkReport)]
pub struct TrackedBody {
    /// The headset.
    pub head: Entity,
    /// The left controller.
    pub left_hand: Entity,
    /// The right controller.
    pub right_hand: Entity,
    /// A hip tracker (4-point).
    pub hips: Option<Entity>,
    /// Left and right foot trackers (6-point, with `hips`).
    pub feet: Option<[Entity; 2]>,
    /// The rate the solver's smoothing and steps are timed at, frames per second. Default 60.
    pub fps: f64,
    /// The tracker solver's settings; `floor` is the floor's height in the character's model
    /// space (0: where its root stands).
    pub config: TrackConfig,
}

impl TrackedBody {
    /// 3-point tracking from a headset and two controllers.
    pub fn new(head: Entity, left_hand: Entity, right_hand: Entity) -> Self {
        Self {
            head,
            left_hand,
            right_hand,
            hips: None,
            feet: None,
            fps: 60.0,
            config: TrackConfig::default(),
        }
    }

    /// The trackers in the order of their points' bones.
    fn entities(&self) -> Result<(Points, Vec<Entity>), IkarusError> {
        let mut entities = vec![self.head, self.left_hand, self.right_hand];
        let points = match (self.hips, self.feet) {
            (None, None) => Points::Three,
            (Some(h), None) => {
                entities.push(h);
                Points::Four
            }
            (Some(h), Some([l, r])) => {
                entities.extend([h, l, r]);
                Points::Six
            }
            (None, Some(_)) => {
                return Err(IkarusError::Setup(
                    "foot trackers need a hip tracker (6-point tracking)".into(),
                ));
            }
        };
        Ok((points, entities))
    }
}

/// A tracked body's solver (after calibration) and this frame's samples.
#[derive(Component, Debug)]
pub(crate) struct TrackerState {
    skeleton: Arc<Skeleton>,
    points: Points,
    entities: Vec<Entity>,
    /// This frame's good samples (model space).
    frame: Vec<(HumanoidBone, TrackerPose)>,
    /// Why a sample is missing this frame (the first such), for the report.
    lost: Option<IkarusError>,
    solver: Option<OwnedTracker>,
    /// The tracker's last solved pose: where its next frame starts (the solver's steps and
    /// held samples continue from it, whatever the joints' animation holds).
    pose: LocalPose,
    /// The rig asked for every joint (its identity): the tracker sets the whole pose.
    registered: Option<u64>,
}

/// Prepares every tracked body that is new, changed, or whose rig was rebuilt (it calibrates
/// on its next frame).
pub(crate) fn prepare_tracked(
    mut commands: Commands,
    mut bodies: Query<(
        Entity,
        Ref<TrackedBody>,
        Option<&mut TrackerState>,
        &mut IkReport,
    )>,
    mut rigs: Query<&mut CharacterRig>,
) {
    for (entity, body, state, mut report) in &mut bodies {
        let Ok(mut rig) = rigs.get_mut(entity) else {
            continue;
        };
        if let Some(mut state) = state
            && Arc::ptr_eq(&state.skeleton, rig.skeleton_arc())
            && !body.is_changed()
        {
            // A rig built again on the same skeleton is asked for the joints again.
            if state.registered != Some(rig.id()) {
                rig.need_all();
                state.registered = Some(rig.id());
            }
            continue;
        }
        match body.entities() {
            Ok((points, entities)) => {
                rig.need_all();
                commands.entity(entity).insert(TrackerState {
                    skeleton: Arc::clone(rig.skeleton_arc()),
                    points,
                    frame: Vec::with_capacity(entities.len()),
                    entities,
                    lost: None,
                    solver: None,
                    pose: rig.pose().clone(),
                    registered: Some(rig.id()),
                });
            }
            Err(error) => report.set_error(error),
        }
    }
}

/// Reads every tracker's sample into its body's frame (model space); a missing or
/// non-finite one is left out (the solver holds it).
fn read_trackers(rig: &CharacterRig, state: &mut TrackerState, frames: &WorldFrames) {
    state.frame.clear();
    state.lost = None;
    for (&bone, &entity) in state.points.bones().iter().zip(&state.entities) {
        match target_in(rig, entity, frames) {
            Ok((position, rotation)) => {
                state.frame.push((bone, TrackerPose { position, rotation }));
            }
            Err(error) => {
                if state.lost.is_none() {
                    state.lost = Some(error);
                }
            }
        }
    }
}

/// Reads the trackers of, calibrates (first frame) and solves every tracked body.
pub(crate) fn solve_tracked(
    mut bodies: Query<(
        &mut CharacterRig,
        &TrackedBody,
        &mut TrackerState,
        &mut IkReport,
    )>,
    frames: WorldFrames,
    ground: Option<Res<IkarusGround>>,
) {
    let flat = IkarusGround::default();
    let ground = ground.as_deref().unwrap_or(&flat);
    for (mut rig, body, mut state, mut report) in &mut bodies {
        let rig = &mut *rig;
        let state = &mut *state;
        if !rig.readable || !Arc::ptr_eq(&state.skeleton, rig.skeleton_arc()) {
            continue;
        }
        read_trackers(rig, state, &frames);
        if state.solver.is_none() {
            if let Some(error) = state.lost.take() {
                report.set_error(error);
                rig.refused = true;
                continue;
            }
            let fps = body.fps;
            let (points, frame) = (state.points, &state.frame);
            let built = OwnedTracker::new(
                Arc::clone(rig.skeleton_arc()),
                Arc::clone(rig.map_arc()),
                |character: Character<'_>| -> Result<TrackSolver<'_>, _> {
                    let calibration = calibrate(character, frame, &[], body.config.floor)?;
                    let config = TrackConfig {
                        points: Some(points),
                        ..body.config.clone()
                    };
                    TrackSolver::new(character, points.bones(), calibration, &config, fps)
                },
            );
            match built {
                Ok(solver) => {
                    state.pose.clone_from(solver.start_pose());
                    state.solver = Some(solver);
                }
                Err(error) => {
                    report.set_error(IkarusError::Setup(error.to_string()));
                    rig.refused = true;
                    continue;
                }
            }
        }
        let Some(solver) = state.solver.as_mut() else {
            continue;
        };
        let in_model = ModelGround {
            ground,
            world_from_model: rig.world_from_model(),
            model_from_world: rig.model_from_world(),
        };
        let frame = solver.solve_frame(&state.frame, &in_model, &mut state.pose);
        if frame.solve.status == SolveStatus::InvalidInput || !state.pose.is_finite() {
            report.set_error(IkarusError::Solve(
                frame.solve.message.clone().unwrap_or_default(),
            ));
            rig.refused = true;
            continue;
        }
        rig.pose
            .transforms_mut()
            .copy_from_slice(state.pose.transforms());
        rig.model_current = false;
        rig.may_change_all();
        report.set_report(&frame.solve);
    }
}
