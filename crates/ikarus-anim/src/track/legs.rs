//! Legs that step when the feet are not tracked: each foot planted until balance wants it
//! elsewhere, then a step along an arc, one foot at a time. The feet stand first where the
//! reference pose has them (the calibration's) and may stay there; steps land under the hip
//! joints, as people stand and walk, however wide the reference (a T-pose's) spreads them.

use glam::{DQuat, DVec3};

use ikarus_solve::two_bone;

use crate::ground::Ground;

/// How untracked legs step. Lengths are in leg lengths (hip to ankle of the avatar's
/// reference), so one setting fits a child, a giant and any unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepConfig {
    /// A planted foot steps when the place balance wants it is farther than this, plus the
    /// pelvis's travel in [`lead`](Self::lead) step durations (a walk's feet fall as far
    /// behind as they landed ahead). Default 0.15; smaller steps more often.
    pub threshold: f64,
    /// …or when the pelvis has turned this many radians from the foot. Default 0.5.
    pub turn: f64,
    /// Longest step. Default 1.6.
    pub length: f64,
    /// Height of a step's arc at its middle. Default 0.1.
    pub height: f64,
    /// Seconds a step takes. Default 0.25; shorter when the pelvis moves faster than feet
    /// stepping in turn, each at most [`length`](Self::length), could follow (a run).
    pub duration: f64,
    /// How far ahead the step lands along the pelvis's velocity, in step durations. Default
    /// 0.5; 0 lands under the pelvis as it is when the step starts. (Measured on the ten BVH
    /// clips, steps landing under the hips: 4-point MPJPE 6.38 / 6.52 / 6.73 / 7.0 cm at 0.5
    /// / 0.75 / 1 / 1.25; 1 was chosen while steps landed as wide as a T-pose.)
    pub lead: f64,
    /// The share of the leg's reach over which it straightens softly (a "soft" two-bone
    /// reach): an ankle goal farther from the hip than `1 − soft_reach` of the leg is drawn
    /// in along the hip–goal line, nearer the further it is, never to full stretch. Near full
    /// stretch a knee's bend swings tens of degrees for a few centimetres of the goal (a foot
    /// left behind in a run, then lifted), which a soft reach spreads over frames. Only a
    /// foot off its standing place is drawn in (fully from a quarter of the leg off it), so
    /// straight legs still stand straight. Default 0.1; 0 reaches as far as the leg does.
    pub soft_reach: f64,
}

impl Default for StepConfig {
    fn default() -> Self {
        Self {
            threshold: 0.15,
            turn: 0.5,
            length: 1.6,
            height: 0.1,
            duration: 0.25,
            lead: 0.5,
            soft_reach: SOFT,
        }
    }
}

impl StepConfig {
    /// The first setting that is not a finite non-negative number (duration positive).
    pub(crate) fn invalid(&self) -> Option<&'static str> {
        [
            ("threshold", self.threshold),
            ("turn", self.turn),
            ("length", self.length),
            ("height", self.height),
            ("lead", self.lead),
            ("soft_reach", self.soft_reach),
        ]
        .into_iter()
        .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
        .map(|(name, _)| name)
        .or((!(self.duration.is_finite() && self.duration > 0.0)).then_some("duration"))
    }
}

/// [`StepConfig::soft_reach`]'s default. Measured on the ten BVH clips (4- and 3-point):
/// 0.05–0.2 all keep every joint's turn between frames within the clip's own + 15° (without
/// it, knees snapping from straight turned up to 42°); MPJPE within ±0.02 cm across them
/// (measured while steps still landed as wide as the reference pose, as is `RAMP`).
const SOFT: f64 = 0.1;
/// How far a foot is off its standing place (horizontally, in leg lengths) for its goal to be
/// drawn in fully; nearer, by a smooth share. 0.1 left a walk's knees turning 15.5° (CMU, its
/// own 7.3°), 0.5 a run's 28.6° (Bandai, its own 19.2°); 0.25 gives 13.6° and 23.9°.
const RAMP: f64 = 0.25;

/// The fastest a pelvis moves in locomotion, leg lengths a second (a sprinter's 12 m/s on
/// 0.9 m legs is about 13).
const FASTEST_RUN: f64 = 15.0;

/// A foot's ankle goal: where it is and how it is turned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FootGoal {
    pub(crate) position: DVec3,
    pub(crate) rotation: DQuat,
}

#[derive(Clone, Copy, Debug)]
struct Step {
    from: FootGoal,
    /// 0..1 through the step.
    t: f64,
}

#[derive(Clone, Copy, Debug)]
struct Foot {
    at: FootGoal,
    step: Option<Step>,
}

/// The stepping state of both legs, and what it knows of the avatar's reference stance.
#[derive(Clone, Debug)]
pub(crate) struct Legs {
    /// Each ankle's place from the hips standing naturally (under its hip joint), horizontal,
    /// in the reference's facing: where steps land.
    stance: [DVec3; 2],
    /// Each ankle from the hips in the reference pose (a T- or A-pose may spread the legs):
    /// where the feet stand at first, and a place a planted foot may stay.
    calibrated: [DVec3; 2],
    /// Each ankle's height above the reference's floor.
    ankle_height: [f64; 2],
    /// Each hip joint from the hips in the reference, in the reference's facing.
    hip: [DVec3; 2],
    /// Each foot's reference rotation.
    rotation: [DQuat; 2],
    /// Hip to ankle of the reference (the mean of both legs).
    leg: f64,
    feet: Option<[Foot; 2]>,
    last_hips: Option<DVec3>,
    velocity: DVec3,
}

impl Legs {
    pub(crate) fn new(
        (calibrated, hip): ([DVec3; 2], [DVec3; 2]),
        ankle_height: [f64; 2],
        rotation: [DQuat; 2],
        leg: f64,
    ) -> Self {
        Self {
            stance: hip.map(|h| h.reject_from(DVec3::Y)),
            calibrated,
            hip,
            ankle_height,
            rotation,
            leg,
            feet: None,
            last_hips: None,
            velocity: DVec3::ZERO,
        }
    }

    /// How long a step takes: the configured duration, shorter when the pelvis moves so fast
    /// that feet stepping in turn could not keep up with it (each foot steps every two step
    /// durations, at most a step long). A pelvis faster than anyone runs (over
    /// [`FASTEST_RUN`] leg lengths a second: the jump after the calibration pose, a cut) is
    /// not followed by quicker steps; the feet are put back under it instead (see `update`).
    fn duration(&self, config: &StepConfig) -> f64 {
        let speed = self.velocity.length();
        if speed > FASTEST_RUN * self.leg {
            return config.duration;
        }
        let keep_up = 0.5 * config.length * self.leg / speed;
        if keep_up.is_finite() && keep_up < config.duration {
            keep_up.max(0.25 * config.duration)
        } else {
            config.duration
        }
    }

    /// The horizontal place `stance` (an ankle's offset from the hips in the reference's
    /// facing) comes to with the pelvis at `hips` turned by `heading`, led by the pelvis's
    /// velocity over `duration` × the configured lead (its height is the pelvis's).
    fn place(
        &self,
        stance: DVec3,
        (hips, heading): (DVec3, DQuat),
        config: &StepConfig,
        duration: f64,
    ) -> DVec3 {
        hips + heading * stance + self.velocity * (duration * config.lead)
    }

    /// Where balance wants foot `s` with the pelvis at `hips` turned by `heading` (a turn
    /// about +Y from the reference's facing), led by the pelvis's velocity over `duration`
    /// (a step's, [`duration`](Self::duration)) × the configured lead.
    fn wanted(
        &self,
        (s, stance): (usize, DVec3),
        hips: DVec3,
        heading: DQuat,
        ground: &dyn Ground,
        config: &StepConfig,
        duration: f64,
    ) -> FootGoal {
        let xz = self.place(stance, (hips, heading), config, duration);
        let (height, normal) = ground
            .sample(xz.x, xz.z)
            .unwrap_or((hips.y - self.leg, DVec3::Y));
        let tilt = DQuat::from_rotation_arc(DVec3::Y, normal);
        FootGoal {
            position: DVec3::new(xz.x, height + self.ankle_height[s], xz.z),
            rotation: (tilt * heading * self.rotation[s]).normalize(),
        }
    }

    /// Advances both legs by `dt` seconds with the pelvis at `hips` turned by `heading`;
    /// returns each ankle's goal and whether it is stepping.
    pub(crate) fn update(
        &mut self,
        hips: DVec3,
        heading: DQuat,
        dt: f64,
        ground: &dyn Ground,
        config: &StepConfig,
    ) -> [(FootGoal, bool); 2] {
        // The pelvis's horizontal velocity, smoothed over about 0.1 s.
        if let Some(last) = self.last_hips {
            let v = ((hips - last) / dt).reject_from(DVec3::Y);
            let a = 1.0 - (-dt / 0.1).exp();
            self.velocity = self.velocity.lerp(v, a);
        }
        self.last_hips = Some(hips);
        let duration = self.duration(config);
        let wanted = [0, 1]
            .map(|s| self.wanted((s, self.stance[s]), hips, heading, ground, config, duration));
        // Where the feet stood in the reference pose, with the pelvis as it is now.
        let calibrated =
            [0, 1].map(|s| self.place(self.calibrated[s], (hips, heading), config, duration));
        // First frame, or the pelvis far from both feet (a teleport): stand as calibrated.
        let far = |f: &Foot, w: &FootGoal| {
            (f.at.position - w.position).reject_from(DVec3::Y).length() > 3.0 * self.leg
        };
        let mut feet = match self.feet.take() {
            Some(feet) if !(far(&feet[0], &wanted[0]) && far(&feet[1], &wanted[1])) => feet,
            _ => {
                let at = [0, 1].map(|s| {
                    let stance = (s, self.calibrated[s]);
                    self.wanted(stance, hips, heading, ground, config, duration)
                });
                self.velocity = DVec3::ZERO;
                at.map(|at| Foot { at, step: None })
            }
        };
        // A planted foot steps when balance wants it elsewhere and the other foot stands.
        if feet.iter().all(|f| f.step.is_none()) {
            let need = [0, 1].map(|s| {
                let f = &feet[s];
                // A foot still where it stood calibrated is where balance wants it too (a
                // wide stance stands).
                let apart = [wanted[s].position, calibrated[s]]
                    .map(|w| (w - f.at.position).reject_from(DVec3::Y).length());
                let apart = apart[0].min(apart[1]);
                let turned = f.at.rotation.angle_between(wanted[s].rotation);
                // A walk lands each foot a step's travel ahead and lifts it as far behind:
                // the feet then keep up with the body at any speed.
                let threshold =
                    config.threshold * self.leg + self.velocity.length() * duration * config.lead;
                (apart / threshold.max(1e-9)).max(turned / config.turn.max(1e-9))
            });
            let s = usize::from(need[1] > need[0]);
            if need[s] > 1.0 {
                feet[s].step = Some(Step {
                    from: feet[s].at,
                    t: 0.0,
                });
            }
        }
        let mut out = [(wanted[0], false), (wanted[1], false)];
        for s in 0..2 {
            let foot = &mut feet[s];
            if let Some(step) = &mut foot.step {
                step.t = (step.t + dt / duration).min(1.0);
                // The landing place follows balance as the step goes, at most a step long.
                let mut to = wanted[s];
                let reach = (to.position - step.from.position).reject_from(DVec3::Y);
                let longest = config.length * self.leg;
                if reach.length() > longest {
                    let xz = step.from.position + reach.normalize() * longest;
                    let height = ground
                        .sample(xz.x, xz.z)
                        .map_or(to.position.y, |(h, _)| h + self.ankle_height[s]);
                    to.position = DVec3::new(xz.x, height, xz.z);
                }
                let h = step.t * step.t * (3.0 - 2.0 * step.t);
                let arc = config.height * self.leg * (std::f64::consts::PI * step.t).sin();
                foot.at = FootGoal {
                    position: step.from.position.lerp(to.position, h) + DVec3::Y * arc,
                    rotation: step.from.rotation.slerp(to.rotation, h).normalize(),
                };
                out[s].1 = true;
                if step.t >= 1.0 {
                    foot.at = to;
                    foot.step = None;
                }
            } else if let Some((height, _)) = ground.sample(foot.at.position.x, foot.at.position.z)
            {
                // A planted foot stays on the ground under it.
                foot.at.position.y = height + self.ankle_height[s];
            }
            out[s].0 = foot.at;
            // Drawn in by the share the foot is off its standing place: a foot standing
            // under the hips keeps its goal (straight legs stand straight).
            let hip = hips + heading * self.hip[s];
            let off = [self.stance[s], self.calibrated[s]].map(|home| {
                (out[s].0.position - self.place(home, (hips, heading), config, 0.0))
                    .reject_from(DVec3::Y)
                    .length()
            });
            let off = off[0].min(off[1]);
            let share = (off / (RAMP * self.leg)).min(1.0);
            let share = share * share * (3.0 - 2.0 * share);
            let soft = soft_reach(hip, out[s].0.position, self.leg, config.soft_reach);
            out[s].0.position = out[s].0.position.lerp(soft, share);
        }
        self.feet = Some(feet);
        out
    }
}

/// `goal` drawn in towards `hip` where it is within `soft` of a leg's `reach` or beyond: the
/// two-bone closed form's soft reach ([`two_bone::soft_distance`]) with the soft zone the last
/// `soft` share of the reach, along the hip–goal line.
fn soft_reach(hip: DVec3, goal: DVec3, reach: f64, soft: f64) -> DVec3 {
    let away = goal - hip;
    let d = away.length();
    two_bone::soft_distance(d, reach, 1.0 - soft).map_or(goal, |soft_d| hip + away * (soft_d / d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::Plane;

    /// The bend of a knee between two equal bones of a leg reaching `reach`, for an ankle
    /// `d` from the hip (the law of cosines), radians.
    fn knee_bend(d: f64, reach: f64) -> f64 {
        2.0 * (d / reach).clamp(-1.0, 1.0).acos()
    }

    #[test]
    fn a_soft_reach_never_snaps_the_knee_and_leaves_near_goals_alone() {
        let (reach, soft) = (0.85, SOFT);
        let hip = DVec3::new(0.1, 0.9, 0.0);
        let down = DVec3::new(0.3, -1.0, -0.2).normalize();
        let (mut last, mut steepest_soft, mut steepest_hard) = (None::<(f64, f64)>, 0.0, 0.0);
        // Goals from 0.3 to 1.5 reaches from the hip, 0.1 mm apart.
        for k in 0..=10_200 {
            let d = reach * 0.3 + f64::from(k) * 1e-4;
            let goal = hip + down * d;
            let drawn = soft_reach(hip, goal, reach, soft);
            let d_soft = drawn.distance(hip);
            // Along the hip–goal line, short of full stretch, unchanged well inside it.
            assert!((drawn - hip).normalize().distance(down) < 1e-12);
            assert!(d_soft < reach, "{d} drawn to {d_soft}");
            if d <= reach * (1.0 - soft) {
                assert_eq!(drawn, goal);
            }
            let bends = (knee_bend(d_soft, reach), knee_bend(d, reach));
            if let Some((soft_before, hard_before)) = last {
                // Per millimetre of the goal's move.
                steepest_soft = f64::max(steepest_soft, (bends.0 - soft_before).abs() * 10.0);
                steepest_hard = f64::max(steepest_hard, (bends.1 - hard_before).abs() * 10.0);
                // The soft distance rises with the goal's.
                assert!(bends.0 <= soft_before + 1e-12);
            }
            last = Some(bends);
        }
        // At most 2 / (reach √(1 − (1 − soft)²)) rad per metre (0.31° a millimetre here, at
        // the soft zone's start); a hard reach bends the knee 17.6° a millimetre in the last
        // 0.1 mm before full stretch (on this grid; without bound as the grid is refined).
        assert!(
            steepest_soft.to_degrees() < 0.31,
            "{}°/mm",
            steepest_soft.to_degrees()
        );
        assert!(
            steepest_hard.to_degrees() > 15.0,
            "{}°/mm",
            steepest_hard.to_degrees()
        );
    }

    #[test]
    fn standing_feet_keep_their_goals_and_trailing_feet_are_drawn_in() {
        // Straight legs of 0.85 m under a pelvis 0.95 m up (the ankles 0.1 m above the
        // floor): the hip joints 0.1 m to each side, the ankles straight below them.
        let hip = [DVec3::new(0.1, 0.0, 0.0), DVec3::new(-0.1, 0.0, 0.0)];
        let stance = hip;
        let mut legs = Legs::new((stance, hip), [0.1; 2], [DQuat::IDENTITY; 2], 0.85);
        let floor = Plane {
            point: DVec3::ZERO,
            normal: DVec3::Y,
        };
        let config = StepConfig::default();
        let hips = DVec3::new(0.0, 0.95, 0.0);
        for _ in 0..3 {
            let feet = legs.update(hips, DQuat::IDENTITY, 1.0 / 60.0, &floor, &config);
            for (s, (goal, stepping)) in feet.into_iter().enumerate() {
                // Where a straight leg puts it: not drawn in.
                let straight = hips + stance[s] - DVec3::Y * 0.85;
                assert!(
                    goal.position.distance(straight) < 1e-12,
                    "{}",
                    goal.position
                );
                assert!(!stepping);
            }
        }
        // The pelvis 0.45 m ahead in one frame (the feet planted, now behind): the goals are
        // drawn in within the leg's reach, still behind the hips.
        let ahead = hips + DVec3::Z * 0.45;
        let feet = legs.update(ahead, DQuat::IDENTITY, 1.0 / 60.0, &floor, &config);
        for (s, (goal, _)) in feet.into_iter().enumerate() {
            let reach = goal.position.distance(ahead + hip[s]);
            assert!(reach < 0.85, "{reach}");
            assert!(goal.position.z < ahead.z);
        }
    }

    #[test]
    fn a_calibration_pose_with_spread_legs_stands_and_walks_on_feet_under_the_hips() {
        // A T-pose whose ankles are 0.35 m to each side of the pelvis, the hip joints 0.1 m.
        let calibrated = [DVec3::new(0.35, 0.0, 0.0), DVec3::new(-0.35, 0.0, 0.0)];
        let hip = [DVec3::new(0.1, -0.1, 0.0), DVec3::new(-0.1, -0.1, 0.0)];
        let mut legs = Legs::new((calibrated, hip), [0.1; 2], [DQuat::IDENTITY; 2], 0.85);
        let floor = Plane {
            point: DVec3::ZERO,
            normal: DVec3::Y,
        };
        let config = StepConfig::default();
        let dt = 1.0 / 60.0;
        let mut hips = DVec3::new(0.0, 0.9, 0.0);
        // Standing still: the feet stay where the calibration put them, and never step.
        for _ in 0..120 {
            let feet = legs.update(hips, DQuat::IDENTITY, dt, &floor, &config);
            for (s, (goal, stepping)) in feet.into_iter().enumerate() {
                let x = goal.position.x;
                assert!((x - calibrated[s].x).abs() < 1e-12, "{x}");
                assert!(!stepping);
            }
        }
        // Walking 1.2 m/s along +Z for 3 s: the feet step, and end under the hip joints
        // (0.1 m to each side), not spread.
        let mut steps = [false; 2];
        for _ in 0..180 {
            hips.z += 1.2 * dt;
            let feet = legs.update(hips, DQuat::IDENTITY, dt, &floor, &config);
            for (s, (_, stepping)) in feet.into_iter().enumerate() {
                steps[s] |= stepping;
            }
        }
        // Then standing again until both feet have landed.
        let mut last = None;
        for _ in 0..60 {
            last = Some(legs.update(hips, DQuat::IDENTITY, dt, &floor, &config));
        }
        assert_eq!(steps, [true, true]);
        for (s, (goal, stepping)) in last.unwrap().into_iter().enumerate() {
            assert!(!stepping);
            let x = goal.position.x;
            assert!((x - hip[s].x).abs() < 0.02, "foot {s} at x = {x}");
        }
    }
}
