//! The per-frame tracker solve: samples checked and held, goals from the calibration, the
//! pelvis and legs when untracked, then the full-body solver.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::trackers::TrackerPose;
use ikarus_core::{JointId, LocalPose, ModelPose};
use ikarus_solve::body::{BodyRig, BodyScratch};
use ikarus_solve::{Effector, Goal, IkTask, SolveReport};

use super::calibrate::{Reference, avatar_joint, yaw_between};
use super::legs::{FootGoal, Legs};
use super::{Calibration, FrameReport, TrackConfig, TrackError};
use crate::ground::Ground;
use crate::retarget::Character;

/// Weight of the pelvis goal the 3-point rule guesses: weak, so the head and hands win.
const GUESSED_HIPS: f64 = 0.05;
/// Pull of stepped (untracked) feet on the body: low, so a planted foot does not hold the
/// pelvis back from the head; the foot steps instead.
const STEPPED_FOOT_PULL: f64 = 0.2;

/// One tracker in use: its bone, the avatar joint it drives, its last good sample and how
/// many frames it has been held.
#[derive(Clone, Debug)]
struct Slot {
    bone: HumanoidBone,
    joint: JointId,
    last: Option<TrackerPose>,
    held_frames: u32,
    /// A sample that jumped from `last`, and for how many frames the samples have stayed
    /// near it.
    jumped: Option<(TrackerPose, u32)>,
}

/// Poses a character from trackers frame by frame (see the [module docs](super)); keeps
/// the held samples, the legs' steps and the smoothed heading between frames.
#[derive(Clone, Debug)]
pub struct TrackSolver<'a> {
    character: Character<'a>,
    rig: BodyRig,
    config: TrackConfig,
    calibration: Calibration,
    dt: f64,
    slots: Vec<Slot>,
    /// The avatar's hips, its reference rotation, and the reference's head-to-hips vector.
    hips: JointId,
    hips_rotation: DQuat,
    head_to_hips: DVec3,
    /// The reference's facing (horizontal unit).
    forward: DVec3,
    /// The head's and hips' reference rotations (for their headings).
    head_rotation: DQuat,
    /// Smoothed heading of the body (horizontal unit), when guessed.
    heading: Option<DVec3>,
    legs: Option<(Legs, [JointId; 2])>,
    /// Each leg's hip, knee and ankle joints.
    leg_joints: [Option<[JointId; 3]>; 2],
    start: LocalPose,
    task: IkTask,
    /// Scratch forward kinematics.
    model: ModelPose,
    /// The body solve's buffers, kept from frame to frame.
    scratch: BodyScratch,
}

impl<'a> TrackSolver<'a> {
    /// A solver for the trackers on `bones` with `calibration` at `fps` frames per second.
    ///
    /// # Errors
    /// [`TrackError`] when the avatar lacks a tracked bone or a leg, does not fit the body
    /// solver, or a setting is out of range.
    ///
    /// The settings checked (`check_settings`), then the rig, the reference and the tracker
    /// slots, each built from the one before.
    pub fn new(
        character: Character<'a>,
        bones: &[HumanoidBone],
        calibration: Calibration,
        config: &TrackConfig,
        fps: f64,
    ) -> Result<Self, TrackError> {
        check_settings(config, fps)?;
        let map = character.map;
        let skeleton = character.skeleton;
        let joint =
            |b: HumanoidBone| avatar_joint(map, b).ok_or(TrackError::AvatarBone(b.vrm_name()));
        let slots = bones
            .iter()
            .map(|&bone| {
                Ok(Slot {
                    bone,
                    joint: joint(bone)?,
                    last: None,
                    held_frames: 0,
                    jumped: None,
                })
            })
            .collect::<Result<Vec<_>, TrackError>>()?;
        let mut body = config.body.clone();
        let tracked = |b: HumanoidBone| bones.contains(&b);
        let feet = [HumanoidBone::LeftFoot, HumanoidBone::RightFoot];
        if !feet.iter().any(|&b| tracked(b)) {
            for b in feet {
                body.pull
                    .entry(b.vrm_name().to_owned())
                    .or_insert(STEPPED_FOOT_PULL);
            }
        }
        let rig = BodyRig::from_map(skeleton, map, &body)?;
        let reference = Reference::new(character)?;
        let model = &reference.model;
        let hips = joint(HumanoidBone::Hips)?;
        let head = joint(HumanoidBone::Head)?;
        let legs = if feet.iter().all(|&b| tracked(b)) {
            None
        } else {
            let leg = |s: usize| -> Result<[JointId; 3], TrackError> {
                let [a, b, c] = HumanoidBone::LEGS[s];
                Ok([joint(a)?, joint(b)?, joint(c)?])
            };
            let legs = [leg(0)?, leg(1)?];
            let facing = DQuat::from_rotation_y(-yaw_between(DVec3::Z, reference.forward));
            let stance = legs.map(|[_, _, ankle]| {
                facing * (model.position(ankle) - model.position(hips)).reject_from(DVec3::Y)
            });
            // Stance and rotations in a frame that faces +Z: headings turn them from there.
            let length = |[a, b, c]: [JointId; 3]| {
                model.position(a).distance(model.position(b))
                    + model.position(b).distance(model.position(c))
            };
            let leg_length = 0.5 * (length(legs[0]) + length(legs[1]));
            let hip = legs.map(|[hip, _, _]| facing * (model.position(hip) - model.position(hips)));
            Some((
                Legs::new(
                    (stance, hip),
                    legs.map(|[_, _, ankle]| model.position(ankle).y - reference.floor),
                    legs.map(|[_, _, ankle]| (facing * model.rotation(ankle)).normalize()),
                    leg_length,
                ),
                legs.map(|[_, _, ankle]| ankle),
            ))
        };
        let (start, _) = crate::retarget::align::reference(skeleton, map, None);
        let leg_joints = [0, 1].map(|s| {
            let [a, b, c] = HumanoidBone::LEGS[s];
            Some([map.joint(a)?, map.joint(b)?, map.joint(c)?])
        });
        let mut config = config.clone();
        config.body = body;
        Ok(Self {
            character,
            // Before `rig` moves in.
            scratch: BodyScratch::new(skeleton, &rig),
            rig,
            calibration,
            dt: 1.0 / fps,
            slots,
            hips,
            hips_rotation: model.rotation(hips),
            head_to_hips: model.position(hips) - model.position(head),
            forward: reference.forward,
            head_rotation: model.rotation(head),
            heading: None,
            legs,
            leg_joints,
            start,
            task: IkTask::default(),
            model: ModelPose::new(skeleton),
            config,
        })
    }

    /// The avatar's reference pose: where a recording's first solve starts.
    pub fn start_pose(&self) -> &LocalPose {
        &self.start
    }

    /// Forgets every tracker's last good sample: the next frame's samples are taken as they
    /// come, however far they jumped (after the calibration pose, at a cut).
    pub fn forget_samples(&mut self) {
        for slot in &mut self.slots {
            slot.last = None;
            slot.jumped = None;
        }
    }

    /// Each clavicle whose elbow has a tracker, turned by the least rotation that puts the
    /// shoulder at the upper arm's length from the elbow's goal (the nearest point of the
    /// circle where the shoulder's sphere about the clavicle meets the upper arm's sphere about
    /// the elbow; towards the elbow when they do not meet), inside the clavicle's limit.
    fn reach_elbows(&mut self, elbows: [Option<DVec3>; 2], pose: &mut LocalPose) {
        let skeleton = self.character.skeleton;
        let map = self.character.map;
        ikarus_core::fk::forward_kinematics(skeleton, pose, &mut self.model);
        let arms = [
            [
                HumanoidBone::LeftShoulder,
                HumanoidBone::LeftUpperArm,
                HumanoidBone::LeftLowerArm,
            ],
            [
                HumanoidBone::RightShoulder,
                HumanoidBone::RightUpperArm,
                HumanoidBone::RightLowerArm,
            ],
        ];
        for (bones, elbow) in arms.iter().zip(elbows) {
            let (Some(e), Some(c), Some(u), Some(l)) = (
                elbow,
                map.joint(bones[0]),
                map.joint(bones[1]),
                map.joint(bones[2]),
            ) else {
                continue;
            };
            if skeleton.parent(u) != Some(c) {
                continue;
            }
            let (pc, pu) = (self.model.position(c), self.model.position(u));
            let radius = pu.distance(pc);
            let upper = self.model.position(l).distance(pu);
            let axis = e - pc;
            let d = axis.length();
            let Some(n) = axis.try_normalize() else {
                continue;
            };
            // The circle's centre along c→e and its radius; the shoulder's nearest point on it.
            let along = (d * d + radius * radius - upper * upper) / (2.0 * d);
            let wanted = if along.abs() < radius {
                let ring = (radius * radius - along * along).sqrt();
                let side = (pu - pc).reject_from(n).try_normalize();
                match side {
                    Some(side) => pc + n * along + side * ring,
                    None => continue,
                }
            } else {
                pc + n * radius * along.signum()
            };
            let (Some(from), Some(to)) = ((pu - pc).try_normalize(), (wanted - pc).try_normalize())
            else {
                continue;
            };
            let turn = DQuat::from_rotation_arc(from, to);
            let parent = skeleton
                .parent(c)
                .map_or(DQuat::IDENTITY, |p| self.model.rotation(p));
            let local = (parent.conjugate() * turn * self.model.rotation(c)).normalize();
            let rest = skeleton.rest(c).rotation;
            let legal = rest
                * skeleton
                    .limit(c)
                    .project((rest.conjugate() * local).normalize());
            if legal.is_finite() {
                pose[c].rotation = legal.normalize();
                ikarus_core::fk::update_subtree(skeleton, pose, &mut self.model, c);
            }
        }
    }

    /// A nearly straight leg has two closed-form answers half a turn apart about its hip–ankle
    /// line, and the limb stage can take the other one from one frame to the next. Where a
    /// thigh turned by more than 45° since the last frame and half a turn about that
    /// line brings it nearer, that turn is taken back: the ankle stays where it is (it is on
    /// the line) and the foot keeps its rotation; only a leg whose limits allow it.
    fn keep_leg_twists(&mut self, before: [Option<DQuat>; 2], pose: &mut LocalPose) {
        let skeleton = self.character.skeleton;
        let mut computed = false;
        for (leg, last) in self.leg_joints.iter().zip(before) {
            let (Some([hip, _, ankle]), Some(last)) = (*leg, last) else {
                continue;
            };
            let now = pose[hip].rotation;
            if last.angle_between(now) <= std::f64::consts::FRAC_PI_4 {
                continue;
            }
            if !computed {
                ikarus_core::fk::forward_kinematics(skeleton, pose, &mut self.model);
                computed = true;
            }
            let Some(line) =
                (self.model.position(ankle) - self.model.position(hip)).try_normalize()
            else {
                continue;
            };
            let parent = skeleton
                .parent(hip)
                .map_or(DQuat::IDENTITY, |p| self.model.rotation(p));
            let turned =
                DQuat::from_axis_angle(line, std::f64::consts::PI) * self.model.rotation(hip);
            let local = (parent.conjugate() * turned).normalize();
            let legal = |j: JointId, q: DQuat| {
                let delta = skeleton.rest(j).rotation.conjugate() * q;
                skeleton.limit(j).violation(delta) <= 1e-9
            };
            if local.angle_between(last) >= last.angle_between(now) || !legal(hip, local) {
                continue;
            }
            let foot = self.model.rotation(ankle);
            pose[hip].rotation = local;
            ikarus_core::fk::update_subtree(skeleton, pose, &mut self.model, hip);
            let foot_parent = skeleton
                .parent(ankle)
                .map_or(DQuat::IDENTITY, |p| self.model.rotation(p));
            let foot_local = (foot_parent.conjugate() * foot).normalize();
            if legal(ankle, foot_local) {
                pose[ankle].rotation = foot_local;
            } else {
                pose[hip].rotation = now;
            }
            ikarus_core::fk::update_subtree(skeleton, pose, &mut self.model, hip);
        }
    }

    /// The calibration in use.
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// Solves one frame (`frame`: each tracker's raw sample; trackers missing from it are
    /// held) on `ground`, from `pose` (the previous frame's result, or
    /// [`start_pose`](Self::start_pose)) into `pose`.
    ///
    /// Kept as one function of about 200 lines: the frame's numbered steps in order, each using
    /// what the step before computed (samples → goals → heading → pelvis → feet → solve); the steps
    /// that stand alone are methods of their own.
    #[allow(clippy::too_many_lines)] // the steps of a frame in order, each a few lines
    pub fn solve_frame(
        &mut self,
        frame: &[(HumanoidBone, TrackerPose)],
        ground: &dyn Ground,
        pose: &mut LocalPose,
    ) -> FrameReport {
        let dt = self.dt;
        let mut held = Vec::new();
        // 1. Samples checked; a bad or missing one held at its last good one.
        for slot in &mut self.slots {
            let sample = frame.iter().find(|(b, _)| *b == slot.bone).map(|&(_, s)| s);
            let max_jump = self.config.max_jump;
            let good = sample.filter(|s| s.is_valid()).filter(|s| {
                let near = |p: &TrackerPose| p.position.distance(s.position) <= max_jump;
                if slot.last.is_none_or(|last| near(&last)) {
                    return true;
                }
                // A jump: believed once it has held still for `hold_seconds` (the device
                // was moved while lost), a glitch otherwise.
                match &mut slot.jumped {
                    Some((at, since)) if near(at) => {
                        *since += 1;
                        *at = *s;
                        f64::from(*since) * dt >= self.config.hold_seconds
                    }
                    jumped => {
                        *jumped = Some((*s, 0));
                        false
                    }
                }
            });
            if let Some(s) = good {
                slot.last = Some(TrackerPose {
                    position: s.position,
                    rotation: s.rotation.normalize(),
                });
                slot.held_frames = 0;
                slot.jumped = None;
            } else {
                slot.held_frames += 1;
                held.push(slot.bone);
            }
        }
        // 2. Goals in the avatar's world.
        let calibration = &self.calibration;
        let head_sample = self
            .slots
            .iter()
            .find(|s| s.bone == HumanoidBone::Head)
            .and_then(|s| s.last)
            .map(|s| calibration.to_avatar(HumanoidBone::Head, s, None).position);
        self.task.effectors.clear();
        let mut goals: Vec<(HumanoidBone, JointId, TrackerPose)> =
            Vec::with_capacity(self.slots.len());
        for slot in &self.slots {
            if let Some(s) = slot.last {
                let avatar = calibration.to_avatar(slot.bone, s, head_sample);
                goals.push((
                    slot.bone,
                    slot.joint,
                    calibration.bone_goal(slot.bone, avatar),
                ));
            }
        }
        let goal_of = |bone: HumanoidBone| goals.iter().find(|g| g.0 == bone).map(|g| g.2);
        for &(bone, joint, goal) in &goals {
            match bone {
                HumanoidBone::LeftLowerArm
                | HumanoidBone::RightLowerArm
                | HumanoidBone::LeftLowerLeg
                | HumanoidBone::RightLowerLeg => {
                    // The avatar has this limb (checked at construction) and the goal is
                    // finite (a good sample): nothing to refuse.
                    let _ = self.rig.set_bend_goal(bone, Some(goal.position));
                }
                _ => self.task.effectors.push(Effector {
                    joint,
                    goal: Goal {
                        position: Some(goal.position),
                        orientation: Some(goal.rotation),
                    },
                    weight: 1.0,
                }),
            }
        }
        // 3. The body's heading: the hips tracker's, else the head's and the hands', smoothed.
        let hips_goal = goal_of(HumanoidBone::Hips);
        let heading = if let Some(h) = hips_goal {
            (h.rotation * (self.hips_rotation.conjugate() * self.forward))
                .reject_from(DVec3::Y)
                .try_normalize()
                .unwrap_or(self.forward)
        } else {
            let mut want = goal_of(HumanoidBone::Head)
                .and_then(|h| {
                    (h.rotation * (self.head_rotation.conjugate() * self.forward))
                        .reject_from(DVec3::Y)
                        .try_normalize()
                })
                .unwrap_or(self.heading.unwrap_or(self.forward));
            if let (Some(l), Some(r)) = (
                goal_of(HumanoidBone::LeftHand),
                goal_of(HumanoidBone::RightHand),
            ) {
                let across = (l.position - r.position).reject_from(DVec3::Y);
                let span = calibration.arm_span * calibration.scale * calibration.arm_scale;
                if let Some(hands) = across.cross(DVec3::Y).try_normalize() {
                    // Hands far apart and in front say where the body faces; close or
                    // crossed hands say nothing.
                    let w = (across.length() / span.max(1e-9)).min(1.0) * hands.dot(want).max(0.0);
                    want = (want + hands * w).try_normalize().unwrap_or(want);
                }
            }
            let smoothed = match self.heading {
                Some(h) => {
                    let a = if self.config.heading_time_constant > 0.0 {
                        1.0 - (-dt / self.config.heading_time_constant).exp()
                    } else {
                        1.0
                    };
                    h.lerp(want, a).try_normalize().unwrap_or(want)
                }
                None => want,
            };
            self.heading = Some(smoothed);
            smoothed
        };
        let turn = DQuat::from_rotation_y(yaw_between(self.forward, heading));
        // 4. The pelvis by the 3-point rule: under the head as the reference has it, turned
        // to the heading; a lower head is a crouch, a head tilted past the neck's share a
        // trunk leaning with it.
        let hips_at = match (hips_goal, head_sample.and(goal_of(HumanoidBone::Head))) {
            (Some(h), _) => Some(h.position),
            (None, Some(head)) => {
                let lean = trunk_lean(head.rotation, self.head_rotation, self.config.neck_tilt);
                let position = head.position + lean * (turn * self.head_to_hips);
                self.task.effectors.push(Effector {
                    joint: self.hips,
                    goal: Goal {
                        position: Some(position),
                        orientation: Some((lean * turn * self.hips_rotation).normalize()),
                    },
                    weight: GUESSED_HIPS,
                });
                Some(position)
            }
            (None, None) => None,
        };
        // 5. Untracked feet step.
        let mut stepping = [false; 2];
        if let (Some((legs, ankles)), Some(hips)) = (&mut self.legs, hips_at) {
            let facing = DQuat::from_rotation_y(yaw_between(DVec3::Z, heading));
            let feet = legs.update(hips, facing, dt, ground, &self.config.steps);
            for (s, (FootGoal { position, rotation }, step)) in feet.into_iter().enumerate() {
                stepping[s] = step;
                if self.task.effectors.iter().all(|e| e.joint != ankles[s]) {
                    self.task.effectors.push(Effector {
                        joint: ankles[s],
                        goal: Goal {
                            position: Some(position),
                            orientation: Some(rotation),
                        },
                        weight: 1.0,
                    });
                }
            }
        }
        // 6. With an elbow tracker, the clavicle turned so that the upper arm reaches it.
        let elbows = [HumanoidBone::LeftLowerArm, HumanoidBone::RightLowerArm]
            .map(|b| goal_of(b).map(|g| g.position));
        if elbows.iter().any(Option::is_some) {
            self.reach_elbows(elbows, pose);
        }
        // 7. The body solve from the previous pose.
        let before = self
            .leg_joints
            .map(|leg| leg.map(|[hip, ..]| pose[hip].rotation));
        let solve = if self.task.effectors.is_empty() {
            SolveReport::invalid("no tracker has had a good sample yet: the pose is kept")
        } else {
            self.rig.solve_with(
                self.character.skeleton,
                &self.task,
                &self.config.body,
                pose,
                &mut self.scratch,
            )
        };
        if solve.status != ikarus_solve::SolveStatus::InvalidInput {
            self.keep_leg_twists(before, pose);
        }
        FrameReport {
            solve,
            held,
            stepping,
        }
    }
}

/// The settings [`TrackSolver::new`] checks: the frame rate, every time and length finite and
/// not negative (`neck_tilt` may be infinite), the steps'.
fn check_settings(config: &TrackConfig, fps: f64) -> Result<(), TrackError> {
    if !(fps.is_finite() && fps > 0.0) {
        return Err(TrackError::Fps(fps));
    }
    for (name, value) in [
        ("max_jump", config.max_jump),
        ("hold_seconds", config.hold_seconds),
        ("heading_time_constant", config.heading_time_constant),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(TrackError::Setting(name));
        }
    }
    // Infinity is allowed: the trunk never leans.
    if config.neck_tilt.is_nan() || config.neck_tilt < 0.0 {
        return Err(TrackError::Setting("neck_tilt"));
    }
    if let Some(name) = config.steps.invalid() {
        return Err(TrackError::Setting(name));
    }
    Ok(())
}

/// The trunk's lean when the head is turned to `head` (world) from its reference rotation
/// `reference`: the head's tilt off the vertical axis (its turn with the yaw about +Y
/// taken out) beyond `neck_tilt` radians, about the same axis; identity within it.
fn trunk_lean(head: DQuat, reference: DQuat, neck_tilt: f64) -> DQuat {
    let turn = (head * reference.conjugate()).normalize();
    let yaw = DQuat::from_xyzw(0.0, turn.y, 0.0, turn.w);
    let length = yaw.length();
    if length.is_nan() || length <= 1e-12 {
        // Half a turn about a horizontal axis: no yaw to take out, and no lean to guess.
        return DQuat::IDENTITY;
    }
    let tilt = (turn * (yaw / length).conjugate()).normalize();
    let (axis, angle) = tilt.to_axis_angle();
    // `to_axis_angle` gives angles in [0, 2π): the shorter way round.
    let angle = if angle > std::f64::consts::PI {
        angle - std::f64::consts::TAU
    } else {
        angle
    };
    if angle.abs() > neck_tilt && axis.is_finite() {
        DQuat::from_axis_angle(axis, (angle.abs() - neck_tilt) * angle.signum())
    } else {
        DQuat::IDENTITY
    }
}

#[cfg(test)]
mod lean_tests {
    use super::*;

    #[test]
    fn the_trunk_leans_by_the_heads_tilt_past_the_necks_share() {
        let reference = DQuat::from_rotation_y(0.4);
        let neck = 0.35;
        // Within the neck's share, with any yaw: no lean.
        let head = DQuat::from_rotation_y(1.5) * DQuat::from_rotation_x(0.3) * reference;
        assert!(trunk_lean(head, reference, neck).angle_between(DQuat::IDENTITY) < 1e-12);
        // Bowed 60° about a horizontal axis (after a yaw): the trunk leans 40° about that axis.
        let axis = DVec3::new(0.6, 0.0, 0.8);
        let head = DQuat::from_axis_angle(axis, 1.0) * DQuat::from_rotation_y(0.7) * reference;
        let lean = trunk_lean(head, reference, neck);
        let (got_axis, got_angle) = lean.to_axis_angle();
        assert!((got_angle - (1.0 - neck)).abs() < 1e-9, "{got_angle}");
        assert!(got_axis.distance(axis) < 1e-9, "{got_axis}");
        // Backwards the other way round; an infinite share never leans.
        let head = DQuat::from_axis_angle(axis, -0.9) * reference;
        let lean = trunk_lean(head, reference, neck);
        assert!(lean.angle_between(DQuat::from_axis_angle(axis, -(0.9 - neck))) < 1e-9);
        assert_eq!(trunk_lean(head, reference, f64::INFINITY), DQuat::IDENTITY);
    }
}
