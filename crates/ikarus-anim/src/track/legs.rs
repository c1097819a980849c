//! Legs that step when the feet are not tracked: each foot planted until balance wants it
//! elsewhere, then a step along an arc, one foot at a time.

use glam::{DQuat, DVec3};

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
    /// Longest step. Default 0.9.
    pub length: f64,
    /// Height of a step's arc at its middle. Default 0.1.
    pub height: f64,
    /// Seconds a step takes. Default 0.25; shorter when the pelvis moves faster than feet
    /// stepping in turn, each at most [`length`](Self::length), could follow (a run).
    pub duration: f64,
    /// How far ahead the step lands along the pelvis's velocity, in step durations. Default
    /// 0.5; 0 lands under the pelvis as it is when the step starts.
    pub lead: f64,
}

impl Default for StepConfig {
    fn default() -> Self {
        Self {
            threshold: 0.15,
            turn: 0.5,
            length: 1.6,
            height: 0.1,
            duration: 0.25,
            lead: 1.0,
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
        ]
        .into_iter()
        .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
        .map(|(name, _)| name)
        .or((!(self.duration.is_finite() && self.duration > 0.0)).then_some("duration"))
    }
}

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
    /// Each ankle from the hips in the reference, horizontal, in the reference's facing.
    stance: [DVec3; 2],
    /// Each ankle's height above the reference's floor.
    ankle_height: [f64; 2],
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
        stance: [DVec3; 2],
        ankle_height: [f64; 2],
        rotation: [DQuat; 2],
        leg: f64,
    ) -> Self {
        Self {
            stance,
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

    /// Where balance wants foot `s` with the pelvis at `hips` turned by `heading` (a turn
    /// about +Y from the reference's facing), led by the pelvis's velocity over `duration`
    /// (a step's, [`duration`](Self::duration)) × the configured lead.
    fn wanted(
        &self,
        s: usize,
        hips: DVec3,
        heading: DQuat,
        ground: &dyn Ground,
        config: &StepConfig,
        duration: f64,
    ) -> FootGoal {
        let lead = self.velocity * (duration * config.lead);
        let xz = hips + heading * self.stance[s] + lead;
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
        let wanted = [0, 1].map(|s| self.wanted(s, hips, heading, ground, config, duration));
        // First frame, or the pelvis far from both feet (a teleport): stand where wanted.
        let far = |f: &Foot, w: &FootGoal| {
            (f.at.position - w.position).reject_from(DVec3::Y).length() > 3.0 * self.leg
        };
        let feet = match &mut self.feet {
            Some(feet) if !(far(&feet[0], &wanted[0]) && far(&feet[1], &wanted[1])) => feet,
            slot => {
                self.velocity = DVec3::ZERO;
                slot.insert(wanted.map(|at| Foot { at, step: None }))
            }
        };
        // A planted foot steps when balance wants it elsewhere and the other foot stands.
        if feet.iter().all(|f| f.step.is_none()) {
            let need = [0, 1].map(|s| {
                let f = &feet[s];
                let apart = (wanted[s].position - f.at.position)
                    .reject_from(DVec3::Y)
                    .length();
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
        }
        out
    }
}
