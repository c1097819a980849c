//! The passes of one clip, in the order the module docs of [`super`] number them:
//! [`Clip::new`] (passes 1–2 and the limbs), [`Clip::contacts`] (pass 3),
//! [`Clip::solve`] (passes 4–5 for one table of contact weights), [`Clip::ease_heels`]
//! and [`Clip::merge`] (the heels' second run), [`Clip::finish`] (the result).

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, fk};
use ikarus_solve::limb7::Limb7Chain;

use super::align::{self, AlignError, Alignment, RootMapping};
use super::contacts::{self, Channel, Contact};
use super::hold::{self, FootHold};
use super::repair::{self, Limb, LimbGoal, LimbState};
use super::stages::{self, HeelEase};
use super::target_rest::TargetRest;
use super::{Character, Feet, RetargetConfig, RetargetError, Retargeted, leg_length, limb_joints};

/// A contact's hold on a point per frame, per channel (in [`Channel::ALL`]'s order): its
/// weight and anchor (model space), if any.
type Weights = Vec<Vec<Option<(f64, DVec3)>>>;

/// A channel: the point followed, its source joint and its target joint.
type ChannelJoints = (Channel, JointId, JointId);

/// The limbs' states (legs, arms) a frame starts from.
type States = ([LimbState; 2], [LimbState; 2]);

/// What every pass of one clip reads: the target, the configuration, the body frame and
/// floor, the source's frames and the target frames copied from them (passes 1–2), the
/// limbs.
pub(super) struct Clip<'a> {
    target: Character<'a>,
    config: &'a RetargetConfig,
    frame_time: f64,
    frames: usize,
    rest: TargetRest<'a>,
    /// The floor the feet are held above (body frame).
    floor: f64,
    root: RootMapping,
    source_frames: Vec<ModelPose>,
    /// The copied target frames (pass 2) and their FK.
    poses: Vec<LocalPose>,
    models: Vec<ModelPose>,
    /// The source's feet (left, right).
    source_feet: [JointId; 2],
    target_legs: [[JointId; 3]; 2],
    target_arms: [Option<[JointId; 3]>; 2],
    legs: [Limb; 2],
    arms: [Option<Limb>; 2],
    /// Contact blend window in frames.
    blend: usize,
}

/// What passes 4 and 5 give for one table of contact weights.
pub(super) struct Solved {
    motion: Motion,
    leg_weights: Vec<[f64; 2]>,
    /// Per frame, whether a limb missed its goal.
    missed: Vec<bool>,
    max_hip_drop: f64,
    /// Each frame's ankles (left, right) after the IK.
    ankles: Vec<[DVec3; 2]>,
    /// Each frame's deepest heel or ball below the floor plus its rest height.
    depths: Vec<f64>,
    /// The toe bends planned, per leg and frame.
    toe_plans: [Vec<f64>; 2],
    /// The limbs' states each frame started from.
    states_before: Vec<States>,
}

/// Pass 4's plan: per frame the leg goals, the hip drop and each side's contact weight.
struct Plan {
    goals: Vec<[LimbGoal; 2]>,
    drops: Vec<f64>,
    leg_weights: Vec<[f64; 2]>,
    toe_plans: [Vec<f64>; 2],
    max_hip_drop: f64,
}

/// One frame's result of pass 5.
struct Frame {
    pose: LocalPose,
    missed: bool,
    ankles: [DVec3; 2],
    depth: f64,
}

impl<'a> Clip<'a> {
    /// Passes 1–2: the source's FK, the root mapping and floor, every frame copied onto the
    /// target (or kept, on the motion's own skeleton: `alignment` `None`), and the limbs.
    ///
    /// Kept as one function of about 100 lines: passes 1 and 2 in their order, each reading the
    /// references and rest frames the lines before set up.
    pub(super) fn new(
        source: Character<'_>,
        motion: &Motion,
        target: Character<'a>,
        config: &'a RetargetConfig,
        alignment: Option<&Alignment>,
    ) -> Result<Self, RetargetError> {
        let source_legs = [
            limb_joints(source.map, "source", HumanoidBone::LEGS[0])?,
            limb_joints(source.map, "source", HumanoidBone::LEGS[1])?,
        ];
        let target_legs = [
            limb_joints(target.map, "target", HumanoidBone::LEGS[0])?,
            limb_joints(target.map, "target", HumanoidBone::LEGS[1])?,
        ];
        let (_, source_rest) = align::reference(source.skeleton, source.map, Some(motion));
        let (_, target_rest) = align::reference(target.skeleton, target.map, None);
        let (source_body, target_body) = if let Some(a) = alignment {
            (a.source_body(), a.target_body())
        } else {
            let body = align::body_from_model(target.map, &target_rest)
                .ok_or(AlignError::NoBodyFrame { side: "target" })?;
            (body, body)
        };
        let up = target_body.conjugate() * DVec3::Y;
        let rest_floor = target_rest
            .positions()
            .map(|p| (target_body * p).y)
            .fold(0.0_f64, f64::min);
        let scale = {
            let s = leg_length(&source_rest, &source_legs);
            let t = leg_length(&target_rest, &target_legs);
            if s > 1e-9 && t.is_finite() {
                t / s
            } else {
                1.0
            }
        };
        let rest = TargetRest {
            skeleton: target.skeleton,
            model: target_rest,
            body: target_body,
            up,
            floor: rest_floor,
        };

        // Pass 1: source FK.
        let frames = motion.len();
        let source_frames = forward_kinematics(source.skeleton, motion);
        let source_feet = [source_legs[0][2], source_legs[1][2]];
        let (floor, root) = rest.ground(
            &source_frames,
            source_body,
            source_feet,
            [target_legs[0][2], target_legs[1][2]],
            alignment.is_some().then_some(scale),
        );

        // Pass 2: rotations copied, root placed (or the frames kept).
        let (poses, models) = match alignment {
            Some(alignment) => copy_frames(target.skeleton, alignment, &source_frames, &root),
            None => (motion.frames().to_vec(), source_frames.clone()),
        };
        let target_arms = [
            limb_joints(target.map, "target", HumanoidBone::ARMS[0]).ok(),
            limb_joints(target.map, "target", HumanoidBone::ARMS[1]).ok(),
        ];
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small, positive
        let blend = config.contacts.map_or(0, |c| {
            (c.blend_seconds / motion.frame_time()).round().max(1.0) as usize
        });
        let legs = [0, 1].map(|side| {
            rest.limb(
                target_legs[side],
                target.map.joint(HumanoidBone::TOES[side]),
                DVec3::X,
                DVec3::Z,
            )
        });
        // Elbows bend about the body's down (left arm) / up (right arm) at a T-pose.
        let arms = [
            target_arms[0].map(|a| rest.limb(a, None, -DVec3::Y, DVec3::NEG_Z)),
            target_arms[1].map(|a| rest.limb(a, None, DVec3::Y, DVec3::NEG_Z)),
        ];
        let clip = Clip {
            target,
            config,
            frame_time: motion.frame_time(),
            frames,
            rest,
            floor,
            root,
            source_frames,
            poses,
            models,
            source_feet,
            target_legs,
            target_arms,
            legs,
            arms,
            blend,
        };
        Ok(clip)
    }

    /// A point's height in the target's body frame.
    fn height(&self, p: DVec3) -> f64 {
        self.rest.height(p)
    }

    /// A joint's rest height above the lowest rest joint.
    fn clearance(&self, j: JointId) -> f64 {
        self.rest.clearance(j)
    }

    /// The points followed: each side's heel and ball (when both maps have toes), and the
    /// hands when hand contacts are asked for.
    pub(super) fn channels(&self, source: Character<'_>) -> Vec<ChannelJoints> {
        let mut channels: Vec<ChannelJoints> = Vec::new();
        for (side, ([heel, ball], toes)) in Channel::FEET
            .into_iter()
            .zip(HumanoidBone::TOES)
            .enumerate()
        {
            channels.push((heel, self.source_feet[side], self.target_legs[side][2]));
            if let (Some(s), Some(t)) = (source.map.joint(toes), self.target.map.joint(toes)) {
                channels.push((ball, s, t));
            }
        }
        if self.config.contacts.is_some_and(|c| c.hands) {
            for (side, channel) in [(0, Channel::LeftHand), (1, Channel::RightHand)] {
                if let (Some(s), Some(t)) = (
                    source.map.joint(HumanoidBone::ARMS[side][2]),
                    self.target_arms[side],
                ) {
                    channels.push((channel, s, t[2]));
                }
            }
        }
        channels
    }

    /// Pass 3: contacts on the mapped source points, anchors from the copied target; then
    /// each ball anchor a foot length from the heel anchor it overlaps most, so a foot planted
    /// at both ends is held exactly.
    pub(super) fn contacts(&self, channels: &[ChannelJoints]) -> Vec<Contact> {
        let mut found: Vec<Contact> = Vec::new();
        let Some(cfg) = &self.config.contacts else {
            return found;
        };
        let tracks: Vec<Vec<DVec3>> = channels
            .iter()
            .map(|&(_, s, _)| {
                self.source_frames
                    .iter()
                    .map(|m| self.root.map_point(m.position(s)))
                    .collect()
            })
            .collect();
        for (k, &(channel, _, joint)) in channels.iter().enumerate() {
            let track = &tracks[k];
            let speeds = contacts::speeds(track, self.frame_time);
            let intervals = if channel.is_hand() {
                contacts::detect_hand(&speeds, self.frame_time, cfg)
            } else {
                // Ground level over both sides' same point.
                let pooled: Vec<f64> = channels
                    .iter()
                    .zip(&tracks)
                    .filter(|((c, _, _), _)| same_kind(*c, channel))
                    .flat_map(|(_, t)| t.iter().map(|&p| self.height(p)))
                    .collect();
                let ground = contacts::low_level(&pooled);
                let heights: Vec<f64> = track.iter().map(|&p| self.height(p) - ground).collect();
                contacts::detect_foot(&heights, &speeds, self.frame_time, cfg)
            };
            for (start, end) in intervals {
                let sum: DVec3 = self.models[start..=end]
                    .iter()
                    .map(|m| m.position(joint))
                    .sum();
                #[allow(clippy::cast_precision_loss)] // frame counts
                let mut anchor = sum / (end + 1 - start) as f64;
                if !channel.is_hand() {
                    let lift = self.floor + self.clearance(joint) - self.height(anchor);
                    if lift > 0.0 {
                        anchor += self.rest.up * lift;
                    }
                }
                found.push(Contact {
                    channel,
                    start,
                    end,
                    anchor,
                });
            }
        }
        for k in 0..found.len() {
            let c = found[k];
            let (side, is_ball) = match c.channel {
                Channel::LeftBall => (0, true),
                Channel::RightBall => (1, true),
                _ => (0, false),
            };
            let (Some(toes), true) = (self.target.map.joint(HumanoidBone::TOES[side]), is_ball)
            else {
                continue;
            };
            let heel_channel = Channel::FEET[side][0];
            let overlap = |h: &Contact| (c.end.min(h.end) + 1).saturating_sub(c.start.max(h.start));
            let heel = found
                .iter()
                .filter(|h| h.channel == heel_channel && overlap(h) > 0)
                .max_by_key(|h| overlap(h));
            if let Some(heel) = heel {
                let foot = (self.rest.model.position(toes)
                    - self.rest.model.position(self.target_legs[side][2]))
                .length();
                if let Some(direction) = (c.anchor - heel.anchor).try_normalize() {
                    found[k].anchor = heel.anchor + direction * foot;
                }
            }
        }
        found
    }

    /// Every channel's contact weight and anchor per frame.
    pub(super) fn weights(&self, found: &[Contact]) -> Weights {
        Channel::ALL
            .iter()
            .map(|&c| contacts::weights(found, c, self.frames, self.blend))
            .collect()
    }

    /// Passes 4 and 5 for a table of contact weights (run again with heels eased).
    /// `again`: the frames to solve, the others copied from the earlier pass given.
    pub(super) fn solve(
        &self,
        weights: &Weights,
        again: Option<(&[bool], &Solved)>,
    ) -> Result<Solved, RetargetError> {
        let plan = self.plan(weights);
        let mut out = Motion::for_skeleton(self.target.skeleton, self.frame_time)
            .map_err(|_| RetargetError::FrameTime(self.frame_time))?;
        let frames = self.frames;
        let mut missed_frames: Vec<bool> = Vec::with_capacity(frames);
        let mut ankles: Vec<[DVec3; 2]> = Vec::with_capacity(frames);
        let mut depths: Vec<f64> = Vec::with_capacity(frames);
        let mut states_before = Vec::with_capacity(frames);
        let mut states: States = (
            self.legs.map(|l| LimbState::new(&l)),
            self.arms.map(|a| {
                a.map_or(
                    LimbState {
                        pole_in_start: DVec3::Z,
                        axis_in_start: DVec3::X,
                        last: None,
                    },
                    |a| LimbState::new(&a),
                )
            }),
        );
        // Legs whose knee is a hinge: the 7-DOF limb for ankles their limits hold.
        let leg_chains = self
            .legs
            .map(|l| Limb7Chain::new(self.target.skeleton, l.start, l.mid, l.end).ok());
        for f in 0..frames {
            if let Some((redo, earlier)) = again {
                let same_toes = (0..2).all(|s| plan.toe_plans[s][f] == earlier.toe_plans[s][f]);
                if !redo[f] && same_toes {
                    // Nothing moved here: the earlier pass's frame as it was.
                    states_before.push(earlier.states_before[f]);
                    missed_frames.push(earlier.missed[f]);
                    ankles.push(earlier.ankles[f]);
                    depths.push(earlier.depths[f]);
                    let _ = out.push(earlier.motion.frames()[f].clone());
                    continue;
                }
                states = earlier.states_before[f];
            }
            states_before.push(states);
            let frame = self.solve_frame(f, weights, &plan, &leg_chains, &mut states);
            missed_frames.push(frame.missed);
            ankles.push(frame.ankles);
            depths.push(frame.depth);
            // The motion was sized for this skeleton.
            let _ = out.push(frame.pose);
        }
        Ok(Solved {
            motion: out,
            leg_weights: plan.leg_weights,
            missed: missed_frames,
            max_hip_drop: plan.max_hip_drop,
            ankles,
            depths,
            toe_plans: plan.toe_plans,
            states_before,
        })
    }

    /// Pass 4: goals and hip drops. First the toe bends the tips need, planned over the clip
    /// (bends that change smoothly), then the goals with those bends.
    fn plan(&self, weights: &Weights) -> Plan {
        let weight = |c: Channel, f: usize| weight(weights, c, f);
        let repair = self.repairs();
        let frames = self.frames;
        let mut goals: Vec<[LimbGoal; 2]> = Vec::with_capacity(frames);
        let mut drops: Vec<f64> = Vec::with_capacity(frames);
        let mut leg_weights = Vec::with_capacity(frames);
        let foot_goal = |f: usize, side: usize, model: &ModelPose, plan: Option<f64>| {
            let [heel, ball] = Channel::FEET[side];
            LimbGoal::for_foot(
                &self.legs[side],
                model,
                (weight(heel, f), weight(ball, f)),
                (self.rest.up, self.floor),
                self.config.ground,
                (plan, self.toe_range(side, &self.poses[f])),
            )
        };
        let legs = &self.config.legs;
        let toe_plans = [0, 1].map(|side| {
            let Some(toe_plan) = legs.toe_plan else {
                // No plan: the toes as copied, the foot lifted by what the tip needs.
                return vec![0.0; frames];
            };
            let needs: Vec<f64> = self
                .models
                .iter()
                .enumerate()
                .map(|(f, model)| foot_goal(f, side, model, None).toe_bend)
                .collect();
            let ranges: Vec<(f64, f64)> = self
                .poses
                .iter()
                .map(|pose| self.toe_range(side, pose))
                .collect();
            let step = toe_plan.max_speed * self.frame_time;
            repair::plan_toe_bends(&needs, &ranges, step)
        });
        for (f, model) in self.models.iter().enumerate() {
            let side_goal = |side: usize| foot_goal(f, side, model, Some(toe_plans[side][f]));
            let pair = [side_goal(0), side_goal(1)];
            let drop = legs.hip_drop.map_or(0.0, |hip_drop| {
                (0..2)
                    .map(|s| {
                        repair::hip_drop(
                            model.position(self.legs[s].start),
                            pair[s].end,
                            self.legs[s].reach * hip_drop.reach,
                            self.rest.up,
                        )
                    })
                    .fold(0.0, f64::max)
            });
            leg_weights.push(Channel::FEET.map(|[heel, ball]| {
                weight(heel, f)
                    .map_or(0.0, |w| w.0)
                    .max(weight(ball, f).map_or(0.0, |w| w.0))
            }));
            goals.push(pair);
            drops.push(if repair { drop } else { 0.0 });
        }
        let window = legs.hip_drop.map_or(0, |h| h.min_window);
        let drops = super::spread(&drops, self.blend.max(window));
        let max_hip_drop = drops.iter().copied().fold(0.0, f64::max);
        Plan {
            goals,
            drops,
            leg_weights,
            toe_plans,
            max_hip_drop,
        }
    }

    /// How far the toes of leg `side` may bend in `pose` ([`repair::toe_range`]).
    fn toe_range(&self, side: usize, pose: &LocalPose) -> (f64, f64) {
        let free = self.config.legs.toe_plan.unwrap_or_default().free_range;
        repair::toe_range(self.target.skeleton, &self.legs[side], pose, free)
    }

    /// Whether the IK repairs anything (contacts or the ground).
    fn repairs(&self) -> bool {
        self.config.contacts.is_some() || self.config.ground
    }

    /// Pass 5 on frame `f`: the hips lowered by the plan's drop, the legs solved, the hands
    /// held; `states` carries the limbs' states to the next frame.
    fn solve_frame(
        &self,
        f: usize,
        weights: &Weights,
        plan: &Plan,
        leg_chains: &[Option<Limb7Chain>; 2],
        states: &mut States,
    ) -> Frame {
        let (mut pose, mut model) = (self.poses[f].clone(), self.models[f].clone());
        let mut missed = false;
        if self.repairs() {
            let skeleton = self.target.skeleton;
            if let Some(h) = self.target.map.joint(HumanoidBone::Hips)
                && plan.drops[f] > 0.0
            {
                let parent = skeleton
                    .parent(h)
                    .map_or(glam::DAffine3::IDENTITY, |p| model[p]);
                pose[h].translation -= parent
                    .inverse()
                    .transform_vector3(self.rest.up * plan.drops[f]);
                fk::update_subtree(skeleton, &pose, &mut model, h);
            }
            for (side, chain) in leg_chains.iter().enumerate() {
                let leg = &self.legs[side];
                let goal = plan.goals[f][side];
                // A leg with nothing to do (no contact weight, no lift, hips in place, no toe
                // tip below the floor) keeps its copied pose: the two-bone solve would still
                // turn its plane to the carried pole.
                if plan.drops[f] == 0.0
                    && goal.ball.is_none()
                    && goal.end.distance(model.position(leg.end)) <= 1e-12
                    && goal.toe_bend == 0.0
                    && !(self.config.ground
                        && repair::depth(leg, &model, self.rest.up, self.floor) > 0.0)
                {
                    continue;
                }
                let holds =
                    Channel::FEET[side].map(|c| weight(weights, c, f).is_some_and(|w| w.0 >= 1.0));
                missed |= !self.solve_leg(
                    side,
                    (goal, holds),
                    chain.as_ref(),
                    &mut states.0[side],
                    &mut pose,
                    &mut model,
                );
            }
            for (side, channel) in [(0, Channel::LeftHand), (1, Channel::RightHand)] {
                if let (Some(arm), Some((w, anchor))) =
                    (&self.arms[side], weight(weights, channel, f))
                {
                    let goal = LimbGoal {
                        end: model.position(arm.end).lerp(anchor, w),
                        end_rotation: model.rotation(arm.end),
                        ball: None,
                        toe_bend: 0.0,
                    };
                    missed |= !repair::solve_limb(
                        skeleton,
                        (arm, &self.config.legs.closed_form),
                        &goal,
                        &mut states.1[side],
                        &mut pose,
                        &mut model,
                    );
                }
            }
        }
        if !pose.is_finite() {
            pose = self.target.skeleton.rest_pose();
        }
        let (up, floor) = (self.rest.up, self.floor);
        // Heels and balls only (toe tips the toes' limits may leave low are not compared).
        let depth = self
            .legs
            .iter()
            .map(|l| repair::depth_of_points(l, &model, up, floor))
            .fold(0.0, f64::max);
        Frame {
            pose,
            missed,
            ankles: self.legs.map(|l| model.position(l.end)),
            depth,
        }
    }

    /// One leg towards `goal`, with whether a contact fully holds its heel and ball: the
    /// per-frame stages of [`stages`] in order. Limits may turn the foot or hold the leg: the
    /// ankle goal moves by what FK still finds off (the ball's miss, the depth below the
    /// floor) and the leg is solved again ([`stages::GoalShift`]), keeping the best attempt,
    /// the first attempts with a swivel search ([`stages::SwivelSearch`]); then a held foot
    /// left off its goals goes on from the last frame ([`Clip::hold_leg`]), and the toe tip
    /// is lifted. Returns whether it reached.
    fn solve_leg(
        &self,
        side: usize,
        (mut goal, [heel, ball]): (LimbGoal, [bool; 2]),
        chain: Option<&Limb7Chain>,
        state: &mut LimbState,
        pose: &mut LocalPose,
        model: &mut ModelPose,
    ) -> bool {
        let skeleton = self.target.skeleton;
        let stages = &self.config.legs;
        let leg = &self.legs[side];
        let mut reached = false;
        let joints = [leg.start, leg.mid, leg.end];
        // The toes as copied: each attempt bends them from there.
        let copied_toes = leg.toes.map(|t| pose[t].rotation);
        let wanted = goal;
        let mut best: Option<(f64, [DQuat; 3], Option<DQuat>, bool)> = None;
        let mut last_shift = f64::INFINITY;
        let (attempts, tolerance) = stages
            .goal_shift
            .map_or((1, 0.0), |g| (g.attempts, g.tolerance));
        for attempt in 0..attempts.max(1) {
            reached = repair::solve_limb(
                skeleton,
                (leg, &stages.closed_form),
                &goal,
                state,
                pose,
                model,
            );
            // The ankle's limit held the foot: turn the knee to a swivel where it fits (on the
            // first attempt, and on the next ones while the goal still moves by more than
            // `min_shift`: a search that finds no better swivel costs about 0.3 ms).
            if let (Some(search), Some(chain)) = (stages.swivel_search, chain)
                && attempt < search.attempts
                && (attempt == 0 || last_shift > search.min_shift)
                && let Some(swivel_reached) = repair::fit_end_by_swivel(
                    skeleton,
                    (leg, chain),
                    (&goal, search.min_angle),
                    pose,
                    model,
                )
            {
                reached = swivel_reached;
            }
            let mut lift = 0.0;
            if self.config.ground {
                if let (Some(t), Some(copied)) = (leg.toes, copied_toes) {
                    pose[t].rotation = copied;
                    fk::update_subtree(skeleton, pose, model, t);
                }
                repair::bend_toes(skeleton, leg, goal.toe_bend, pose, model);
                lift = repair::depth(leg, model, self.rest.up, self.floor);
            }
            // What the toes' limit leaves below the floor lifts the foot.
            let mut shift = self.rest.up * lift;
            if let (Some(ball), Some(toes)) = (goal.ball, leg.toes) {
                shift += ball - model.position(toes);
            }
            let error = shift.length();
            if best.is_none_or(|b| error < b.0) {
                let toes = leg.toes.map(|t| pose[t].rotation);
                best = Some((error, joints.map(|j| pose[j].rotation), toes, reached));
            }
            // Done when nothing is below the floor and the ball is within the tolerance.
            if lift == 0.0 && error <= tolerance {
                break;
            }
            goal.end += shift;
            last_shift = error;
        }
        if let Some((_, rotations, toes, was_reached)) = best {
            for (j, r) in joints.iter().zip(rotations) {
                pose[*j].rotation = r;
            }
            if let (Some(t), Some(r)) = (leg.toes, toes) {
                pose[t].rotation = r;
            }
            reached = was_reached;
            fk::update_subtree(skeleton, pose, model, leg.start);
        }
        // A fully held foot the closed form left off its goals: gone on with from the last
        // frame's pose (or refined from the closed form's) when that costs less.
        if let (Some((last, heel_was)), Some(settings)) = (state.last, &stages.hold) {
            let hold = self.foot_hold(&wanted, [heel, ball], heel_was, settings);
            if held_miss(leg, &hold, model) > settings.from
                && let Some(now_reached) =
                    self.hold_leg((leg, settings), &hold, &last, *state, pose, model)
            {
                reached = now_reached;
            }
        }
        if self.config.ground && stages.toe_tip_lift {
            repair::lift_toe_tip(skeleton, leg, (self.rest.up, self.floor), pose, model);
        }
        state.last =
            (heel || ball).then(|| (joints.map(|j| pose[j].rotation), model.position(leg.end)));
        reached
    }

    /// What a fully held foot holds this frame: the ball on its goal, the heel across the
    /// floor from where it was (`heel_was`) towards its goal by at most
    /// [`stages::Hold::heel_speed`] a second, at its goal's height.
    fn foot_hold(
        &self,
        wanted: &LimbGoal,
        [heel, ball]: [bool; 2],
        heel_was: DVec3,
        settings: &stages::Hold,
    ) -> FootHold {
        let up = self.rest.up;
        let step = settings.heel_speed * self.frame_time;
        let across = (wanted.end - heel_was)
            .reject_from(up)
            .clamp_length_max(step);
        FootHold {
            heel: heel.then(|| heel_was.reject_from(up) + across + up * wanted.end.dot(up)),
            ball: wanted.ball.filter(|_| ball),
            rotation: wanted.end_rotation,
            up,
            floor: self.floor,
        }
    }

    /// [`hold::hold_foot`] on `leg` from the last frame's rotations (`last`) and from the
    /// closed form's pose in `pose`; the lower cost is kept if it is below the closed form's
    /// and leaves no heel or ball below the floor (a soft floor's last fraction of a
    /// millimetre is lifted by a two-bone solve). Returns whether the held points are now
    /// within [`stages::Hold::from`] of their goals, or `None` when the closed form's pose
    /// stays.
    fn hold_leg(
        &self,
        (leg, settings): (&Limb, &stages::Hold),
        hold: &FootHold,
        last: &[DQuat; 3],
        mut state: LimbState,
        pose: &mut LocalPose,
        model: &mut ModelPose,
    ) -> Option<bool> {
        let skeleton = self.target.skeleton;
        let joints = [leg.start, leg.mid, leg.end];
        let set = |rotations: &[DQuat; 3], pose: &mut LocalPose, model: &mut ModelPose| {
            for (j, r) in joints.iter().zip(rotations) {
                pose[*j].rotation = *r;
            }
            fk::update_subtree(skeleton, pose, model, leg.start);
        };
        let descent = &settings.descent;
        let closed_form = (
            hold::cost(leg, hold, descent, model),
            joints.map(|j| pose[j].rotation),
        );
        set(last, pose, model);
        let held_cost = hold::hold_foot(skeleton, leg, (hold, descent), pose, model);
        let held = (held_cost, joints.map(|j| pose[j].rotation));
        // The closed form's pose refined too, unless going on from the last frame met the
        // goals (`held`, about 0.1 mm).
        let refined = (held_cost > settings.held).then(|| {
            set(&closed_form.1, pose, model);
            let refined_cost = hold::hold_foot(skeleton, leg, (hold, descent), pose, model);
            (refined_cost, joints.map(|j| pose[j].rotation))
        });
        let best = [Some(held), refined]
            .into_iter()
            .flatten()
            .filter(|c| c.0 < closed_form.0 && c.0.is_finite())
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let Some((_, rotations)) = best else {
            set(&closed_form.1, pose, model);
            return None;
        };
        set(&rotations, pose, model);
        let (up, floor) = (self.rest.up, self.floor);
        let depth = repair::depth_of_points(leg, model, up, floor);
        if depth > 0.0 {
            let goal = LimbGoal {
                end: model.position(leg.end) + up * depth,
                end_rotation: model.rotation(leg.end),
                ball: None,
                toe_bend: 0.0,
            };
            let closed = &self.config.legs.closed_form;
            repair::solve_limb(skeleton, (leg, closed), &goal, &mut state, pose, model);
            if repair::depth_of_points(leg, model, up, floor) > 0.0 || !pose.is_finite() {
                set(&closed_form.1, pose, model);
                return None;
            }
        }
        Some(held_miss(leg, hold, model) <= settings.from)
    }

    /// Heels the limbs' limits lift off their anchors move at most [`HeelEase::speed`]: the
    /// weights with those heels' anchors moved ahead of (and after) the frames that need it,
    /// along the sphere of the foot's length about the ball's anchor; `None` when no anchor
    /// moved.
    pub(super) fn ease_heels(
        &self,
        found: &[Contact],
        weights: &Weights,
        solved: &Solved,
        ease: &HeelEase,
    ) -> Option<Weights> {
        let step = ease.speed * self.frame_time;
        let heels = [Channel::LeftHeel, Channel::RightHeel];
        let foot_lengths = self.legs.map(|l| {
            l.toes
                .map(|t| (self.rest.model.position(t) - self.rest.model.position(l.end)).length())
        });
        let mut eased = weights.clone();
        let mut changed = false;
        for contact in found.iter().filter(|c| heels.contains(&c.channel)) {
            let side = usize::from(contact.channel == Channel::RightHeel);
            let ball = if side == 0 {
                Channel::LeftBall
            } else {
                Channel::RightBall
            };
            let [i, b] = [contact.channel, ball].map(channel_index);
            let frames_in = contact.start..=contact.end;
            let moves: Vec<DVec3> = frames_in
                .clone()
                .map(|f| (solved.ankles[f][side] - contact.anchor).reject_from(self.rest.up))
                .collect();
            for (k, f) in frames_in.enumerate() {
                let Some((w, _)) = eased[i][f] else { continue };
                let Some(target_move) = repair::ease_move(&moves, k, (step, ease.from)) else {
                    continue;
                };
                // On the sphere of the foot's length about the ball's anchor when the ball is
                // held: the heel rises as it comes forward instead of sinking.
                let mut anchor = contact.anchor + target_move;
                if let (Some((_, ball_at)), Some(length)) = (eased[b][f], foot_lengths[side]) {
                    let across = (anchor - ball_at).reject_from(self.rest.up).length();
                    if across < length {
                        let height =
                            ball_at.dot(self.rest.up) + (length * length - across * across).sqrt();
                        anchor += self.rest.up * (height - anchor.dot(self.rest.up)).max(0.0);
                    }
                }
                eased[i][f] = Some((w, anchor));
                changed = true;
            }
        }
        changed.then_some(eased)
    }

    /// Passes 4 and 5 again with the eased weights, on the frames whose weights changed; per
    /// frame the eased solve is kept unless it leaves a heel or ball below the floor where the
    /// first did not, by more than [`HeelEase::depth_tolerance`] (its leg could not hold the
    /// moved heel and the ball together).
    pub(super) fn merge(
        &self,
        weights: &Weights,
        eased: &Weights,
        mut solved: Solved,
        ease: &HeelEase,
    ) -> Result<Solved, RetargetError> {
        let redo: Vec<bool> = (0..self.frames)
            .map(|f| (0..eased.len()).any(|i| eased[i][f] != weights[i][f]))
            .collect();
        let again = self.solve(eased, Some((&redo, &solved)))?;
        let mut merged = Motion::for_skeleton(self.target.skeleton, self.frame_time)
            .map_err(|_| RetargetError::FrameTime(self.frame_time))?;
        for f in 0..self.frames {
            let take = again.depths[f] <= solved.depths[f].max(0.0) + ease.depth_tolerance;
            let from = if take { &again } else { &solved };
            // The motions were sized for this skeleton.
            let _ = merged.push(from.motion.frames()[f].clone());
            if take {
                solved.missed[f] = again.missed[f];
                solved.ankles[f] = again.ankles[f];
                solved.depths[f] = again.depths[f];
            }
        }
        solved.motion = merged;
        solved.max_hip_drop = solved.max_hip_drop.max(again.max_hip_drop);
        Ok(solved)
    }

    /// The result: the solved motion, the contacts, and the target's contact points.
    pub(super) fn finish(
        self,
        channels: &[ChannelJoints],
        found: Vec<Contact>,
        solved: Solved,
    ) -> Retargeted {
        let feet = Feet {
            joints: channels.iter().map(|&(c, _, t)| (c, t)).collect(),
            clearance: channels
                .iter()
                .map(|&(_, _, t)| (t, self.clearance(t)))
                .collect(),
            toe_tips: self
                .legs
                .iter()
                .filter_map(|l| l.toes.zip(l.toe_tip).map(|(t, (tip, c))| (t, tip, c)))
                .collect(),
            target_body: self.rest.body,
            floor: self.floor,
        };
        Retargeted {
            motion: solved.motion,
            contacts: found,
            root: self.root,
            feet,
            leg_weights: solved.leg_weights,
            unreached: solved.missed.iter().filter(|&&m| m).count(),
            max_hip_drop: solved.max_hip_drop,
        }
    }
}

/// Every frame's FK.
fn forward_kinematics(skeleton: &ikarus_core::Skeleton, motion: &Motion) -> Vec<ModelPose> {
    fk::model_frames(skeleton, motion.frames())
}

/// Pass 2: every source frame's rotations copied onto the target and its root placed, with
/// the target frames' FK.
fn copy_frames(
    skeleton: &ikarus_core::Skeleton,
    alignment: &Alignment,
    source_frames: &[ModelPose],
    root: &RootMapping,
) -> (Vec<LocalPose>, Vec<ModelPose>) {
    let mut model = ModelPose::new(skeleton);
    let mut pose = skeleton.rest_pose();
    source_frames
        .iter()
        .map(|m| {
            alignment.pose(skeleton, m, root, &mut pose, &mut model);
            (pose.clone(), model.clone())
        })
        .unzip()
}

/// How far the held heel and ball of `hold` are from their goals (metres, summed).
fn held_miss(leg: &Limb, hold: &FootHold, model: &ModelPose) -> f64 {
    hold.heel
        .map_or(0.0, |h| model.position(leg.end).distance(h))
        + hold
            .ball
            .zip(leg.toes)
            .map_or(0.0, |(b, t)| model.position(t).distance(b))
}

/// A channel's index in [`Channel::ALL`] (the rows of [`Weights`]).
fn channel_index(c: Channel) -> usize {
    Channel::ALL.iter().position(|&x| x == c).unwrap_or(0)
}

/// A channel's hold in frame `f`.
fn weight(weights: &Weights, c: Channel, f: usize) -> Option<(f64, DVec3)> {
    weights[channel_index(c)][f]
}

/// Heels pool with heels, balls with balls.
fn same_kind(a: Channel, b: Channel) -> bool {
    let kind = |c: Channel| match c {
        Channel::LeftHeel | Channel::RightHeel => 0,
        Channel::LeftBall | Channel::RightBall => 1,
        _ => 2,
    };
    kind(a) == kind(b)
}
