//! Grounding one frame at a time, for a game's frame loop (Final IK's Grounder): the same
//! foot rule as [`ground_motion`](super::ground_motion), with only the past to go on.
//!
//! Per frame, from the animated pose's model frames:
//! 1. each foot's contact weight from the height of its lowest sole point above the
//!    animation's floor ([`FrameGroundConfig::floor`]): 1 within
//!    [`FrameGroundConfig::contact_height`], fading to 0 at three times that (a clip's
//!    contacts cannot be detected from frames that have not come yet);
//! 2. the foot turned towards the ground's normal under the ankle by that weight, at most
//!    [`FrameGroundConfig::max_tilt`];
//! 3. the foot lifted (or lowered) so that every sole point (the ankle, the toes joint and the
//!    toe tip when the toes are mapped) is as high above the ground under it as the animation
//!    had it above its floor: its sole offset is kept, so a planted foot stands on the ground
//!    and a swinging one clears it by what the animation lifted it;
//! 4. the pelvis moved along +Y by the lower foot's lift, through a critically damped spring
//!    of time constant [`FrameGroundConfig::time_constant`] (run forwards only, one exact step
//!    per frame of any length), never higher than both legs reach from and never so low
//!    that a foot is nearer its hip than its knee folds.
//!
//! [`FrameGrounder::goals`] returns these as goals for the full-body solver
//! ([`ikarus_solve::body`]): the hips' 6-D goal and each foot's. It allocates nothing.
//! Model space is the character's (+Y up); the [`Ground`] is sampled in it.

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, ModelPose};
use ikarus_solve::Goal;

use super::foot::{Foot, hips_and_legs};
use super::{Ground, GroundError, Leg, hang, pelvis_band, settle_round, within};
use crate::retarget::Character;

/// Options of [`FrameGrounder`]. Lengths in the skeleton's unit (metres).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameGroundConfig {
    /// Height of the animation's own floor in model space: where the clip's planted soles
    /// are. Default 0 (the character's origin, as glTF and VRM characters stand).
    pub floor: f64,
    /// A foot whose lowest sole point is within this height above the floor is planted
    /// (turned fully to the ground's normal); the turn fades out up to three times this.
    /// Default 0.05.
    pub contact_height: f64,
    /// Time constant of the pelvis's critically damped spring, seconds. Default 0.1; 0 moves
    /// the pelvis at once, larger follows steps more slowly.
    pub time_constant: f64,
    /// The largest turn (radians) of a planted foot towards the ground's normal. Default 30°.
    pub max_tilt: f64,
}

impl Default for FrameGroundConfig {
    fn default() -> Self {
        Self {
            floor: 0.0,
            contact_height: 0.05,
            time_constant: 0.1,
            max_tilt: 30f64.to_radians(),
        }
    }
}

/// One frame's goals from [`FrameGrounder::goals`], model space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameGoals {
    /// The hips: the animated position moved by [`pelvis_offset`](Self::pelvis_offset) along
    /// +Y, the animated rotation.
    pub hips: Goal,
    /// Left and right ankle: position and rotation.
    pub feet: [Goal; 2],
    /// Each foot's lift along +Y (negative: lowered into a dip).
    pub lifts: [f64; 2],
    /// Each foot's contact weight, 0..1.
    pub weights: [f64; 2],
    /// Each foot's toes bent up over an edge, a bump or a step the rest of the sole does not
    /// reach: the toes' joint and its local rotation, to set on the solved pose (their
    /// parent's frame is the foot's goal); `None`: the toes as animated.
    pub toes: [Option<(JointId, DQuat)>; 2],
    /// The pelvis's move along +Y after the spring.
    pub pelvis_offset: f64,
}

/// Grounds a character frame after frame; keeps the pelvis's spring between frames. See the
/// module docs of `ground::frame`.
#[derive(Clone, Debug)]
pub struct FrameGrounder {
    hips: JointId,
    legs: [Leg; 2],
    feet: [Foot; 2],
    config: FrameGroundConfig,
    /// The pelvis spring's position and velocity; `None` before the first frame.
    spring: Option<(f64, f64)>,
    /// The last frame's feet lifts: with the spring's position, where this frame's shins will
    /// be ([`goals`](FrameGrounder::goals)); zero before the first frame.
    lifts: [f64; 2],
}

impl FrameGrounder {
    /// A grounder for `character` (hips, both legs and feet mapped; toes optional).
    ///
    /// # Errors
    /// [`GroundError::Clip`] naming a missing leg bone; [`GroundError::Setting`] for a
    /// setting that is not a finite number ≥ 0.
    pub fn new(character: Character<'_>, config: &FrameGroundConfig) -> Result<Self, GroundError> {
        for (name, value) in [
            ("floor", config.floor),
            ("contact_height", config.contact_height),
            ("time_constant", config.time_constant),
            ("max_tilt", config.max_tilt),
        ] {
            if !(value.is_finite() && (value >= 0.0 || name == "floor")) {
                return Err(GroundError::Setting(name));
            }
        }
        let (skeleton, map) = (character.skeleton, character.map);
        let (hips, legs) = hips_and_legs(map)?;
        let (_, rest) = crate::retarget::align::reference(skeleton, map, None);
        let feet = Foot::both(skeleton, map, [legs[0][2], legs[1][2]], &rest);
        Ok(Self {
            hips,
            legs: legs.map(|joints| Leg::new(skeleton, joints)),
            feet,
            config: *config,
            spring: None,
            lifts: [0.0; 2],
        })
    }

    /// The hips joint the goals are for.
    pub fn hips(&self) -> JointId {
        self.hips
    }

    /// The left and right ankle joints the goals are for.
    pub fn ankles(&self) -> [JointId; 2] {
        [self.feet[0].ankle, self.feet[1].ankle]
    }

    /// The settings in use.
    pub fn config(&self) -> &FrameGroundConfig {
        &self.config
    }

    /// Forgets the pelvis spring and the feet's last lifts: the next frame starts at its
    /// target (after a teleport or a cut).
    pub fn reset(&mut self) {
        self.spring = None;
        self.lifts = [0.0; 2];
    }

    /// After a solve of this frame's `goals` (from [`goals`](Self::goals) for the animated
    /// frames `model`, on `ground`; `solved`: the solve's model frames): a foot the ankle's
    /// limit left tilted into the ground (the shin as solved cannot take the ground's slope)
    /// is raised until its lowest sole point rests on the ground, its toes bent for it as it
    /// stands, and the hips with it where the raised foot would come nearer its hip than the
    /// knee folds (the clip grounding's rounds, one at a time). True when `goals` changed:
    /// solve again from them and call this again, a few rounds at most (the clip grounding
    /// stops after 8). Each round costs a solve; without them such a foot stays tilted into
    /// the ground by up to 1.5 mm on the `body` bench's crouch on bumps (0.0 with them,
    /// `ikarus-bench`'s `tests/grounded.rs`). Only a foot the solve put on its goal's place
    /// is raised.
    pub fn settle(
        &self,
        (model, solved): (&ModelPose, &ModelPose),
        ground: &dyn Ground,
        goals: &mut FrameGoals,
    ) -> bool {
        let [left, right] = &mut goals.feet;
        let (Some(hips), Some(left), Some(right)) = (
            goals.hips.position.as_mut(),
            left.position.as_mut(),
            right.position.as_mut(),
        ) else {
            return false;
        };
        let (toes, sinking) = settle_round(
            (&self.feet, &self.legs),
            (model, [DVec3::ZERO; 2], solved),
            (ground, self.config.floor),
            (hips, [left, right], &mut goals.pelvis_offset),
            true,
        );
        goals.toes = [0, 1].map(|s| self.feet[s].toes.zip(toes[s]));
        sinking
    }

    /// This frame's goals for the animated pose whose model frames are `model`, on `ground`
    /// (model space), `dt` seconds after the previous frame (a non-finite or negative `dt`
    /// counts as 0). Where the ground has no sample under a foot, the foot keeps the
    /// animation. A limited ankle's turn is held against the shin the solve will leave,
    /// foreseen from the last frame's pelvis offset and lifts (see [`reset`](Self::reset)).
    pub fn goals(&mut self, model: &ModelPose, ground: &dyn Ground, dt: f64) -> FrameGoals {
        let config = self.config;
        // The ankle's limit is held against the shin the solve will leave, not the animated
        // one: a pelvis lowered for a foot bends the knees deeper, and against the animated
        // shin the goal's rotation was past the limit, the foot tilted into the ground and
        // the solve searching the knee's swivel for a fit. The shin is foreseen from the
        // last frame's pelvis offset and lifts (both move smoothly), the knee on the side of
        // its bend.
        let offset = self.spring.map_or(0.0, |(x, _)| x);
        let offset = if offset.is_finite() { offset } else { 0.0 };
        let feet = [0, 1].map(|s| {
            let foot = &self.feet[s];
            let weight = contact_weight(foot, model, &config);
            let ankle = model.position(foot.ankle) + DVec3::Y * self.lifts[s];
            let shin = foot.predicted_shin(model, self.legs[s].joints, DVec3::Y * offset, ankle);
            let terrain = (ground, config.floor);
            let goal = foot.goal_with((model, DVec3::ZERO), shin, weight, terrain, config.max_tilt);
            (goal, weight)
        });
        self.lifts = feet.map(|f| if f.0.lift.is_finite() { f.0.lift } else { 0.0 });
        let target = feet[0].0.lift.min(feet[1].0.lift);
        // Never above what both legs reach from (the hip's highest point above each foot
        // goal, by the leg's length as the frame poses it), and never so low that a foot is
        // nearer its hip than its knee folds; where the two cross, the fold wins and the
        // other foot hangs at its reach (a foot above the ground rather than in it).
        let band = pelvis_band(&self.legs, model, feet.map(|(goal, _)| goal.position));
        let bounded = |x: f64| within(x, band);
        let target = bounded(target);
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        let (x, v) = match self.spring {
            Some((x, v)) if config.time_constant > 0.0 && x.is_finite() && v.is_finite() => {
                spring_step(x, v, target, 1.0 / config.time_constant, dt)
            }
            _ => (target, 0.0),
        };
        self.spring = Some((x, v));
        let offset = bounded(x);
        let offset = if offset.is_finite() { offset } else { 0.0 };
        let mut feet = feet;
        for (leg, (goal, _)) in self.legs.iter().zip(&mut feet) {
            hang(leg, model, DVec3::Y * offset, goal);
        }
        FrameGoals {
            hips: Goal::from_position_orientation(
                model.position(self.hips) + DVec3::Y * offset,
                model.rotation(self.hips),
            ),
            feet: feet
                .map(|(goal, _)| Goal::from_position_orientation(goal.position, goal.rotation)),
            lifts: feet.map(|f| f.0.lift),
            weights: feet.map(|f| f.1),
            toes: [0, 1].map(|s| self.feet[s].toes.zip(feet[s].0.toes)),
            pelvis_offset: offset,
        }
    }
}

/// One exact step of `dt` seconds of a critically damped spring of angular frequency
/// `omega` at `x` with velocity `v` towards `target`.
fn spring_step(x: f64, v: f64, target: f64, omega: f64, dt: f64) -> (f64, f64) {
    let delta = x - target;
    let temp = (v + omega * delta) * dt;
    let decay = (-omega * dt).exp();
    (target + (delta + temp) * decay, (v - omega * temp) * decay)
}

/// A foot's contact weight in the animated frame `model`: 1 with its lowest sole point
/// within [`FrameGroundConfig::contact_height`] above the floor, fading to 0 at three times
/// that.
fn contact_weight(foot: &Foot, model: &ModelPose, config: &FrameGroundConfig) -> f64 {
    let ankle = model.position(foot.ankle);
    let mut lowest = ankle.y;
    if let Some(toes) = foot.toes {
        lowest = lowest.min(model.position(toes).y);
        if let Some(tip) = foot.tip {
            lowest = lowest.min((model.position(toes) + model.rotation(toes) * tip).y);
        }
    }
    let lowest = lowest - config.floor;
    if config.contact_height > 0.0 {
        ((3.0 * config.contact_height - lowest) / (2.0 * config.contact_height)).clamp(0.0, 1.0)
    } else if lowest <= 0.0 {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::{Heightfield, Plane};
    use ikarus_core::humanoid::builtin_humanoid;
    use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
    use ikarus_core::{ModelPose, fk};
    use ikarus_solve::body::{BodyConfig, BodyRig};
    use ikarus_solve::{Effector, IkTask, SolveStatus};

    #[test]
    fn the_spring_steps_match_its_closed_form_at_any_frame_length() {
        // A critically damped step response 1 − (1 + ωt)·e^(−ωt), stepped by uneven frames.
        let omega = 10.0;
        let (mut x, mut v, mut t) = (0.0, 0.0, 0.0);
        for k in 0..200 {
            let dt = if k % 3 == 0 { 1.0 / 30.0 } else { 1.0 / 144.0 };
            (x, v) = spring_step(x, v, 1.0, omega, dt);
            t += dt;
            let exact = 1.0 - (1.0 + omega * t) * (-omega * t).exp();
            assert!((x - exact).abs() < 1e-12, "{k}: {x} vs {exact}");
            assert!(x <= 1.0);
        }
    }

    /// The built-in humanoid standing on its soles at y = 0 (its rest lifted so the lowest
    /// joint is at the floor), its model frames and its grounder.
    fn standing() -> (
        ikarus_core::Skeleton,
        HumanoidMap,
        ikarus_core::LocalPose,
        ModelPose,
    ) {
        let skeleton = builtin_humanoid();
        let map = HumanoidMap::recognise(&skeleton);
        let mut pose = skeleton.rest_pose();
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let lowest = model.positions().map(|p| p.y).fold(f64::INFINITY, f64::min);
        let root = skeleton.roots().next().unwrap();
        pose[root].translation.y -= lowest;
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        (skeleton, map, pose, model)
    }

    /// A grounder for `skeleton` with no pelvis spring (the pelvis at its target at once).
    fn unsprung(skeleton: &ikarus_core::Skeleton, map: &HumanoidMap) -> FrameGrounder {
        let character = Character { skeleton, map };
        let config = FrameGroundConfig {
            time_constant: 0.0,
            ..FrameGroundConfig::default()
        };
        FrameGrounder::new(character, &config).unwrap()
    }

    /// One foot on a box higher than the knee folds to (the built-in humanoid's knees hinge
    /// 0–150°): the pelvis rises until the left ankle's goal is no nearer the hip than the
    /// folded leg (law of cosines on the bone lengths), and the right foot, which cannot
    /// reach the floor from there, hangs at the leg's reach instead of pulling the pelvis
    /// down. Before, the pelvis followed the lower foot and the left goal sat 17 cm from the
    /// hip, inside the fold (21 cm).
    #[test]
    fn a_foot_on_a_box_above_the_knees_fold_lifts_the_pelvis() {
        let (skeleton, map, _, model) = standing();
        let mut grounder = unsprung(&skeleton, &map);
        let top = 0.65;
        let terrain = crate::ground::GroundFn(move |x: f64, _: f64| {
            Some((if x > 0.0 { top } else { 0.0 }, DVec3::Y))
        });
        let goals = grounder.goals(&model, &terrain, 1.0 / 60.0);
        let leg = |s: usize| HumanoidBone::LEGS[s].map(|b| model.position(map.joint(b).unwrap()));
        for s in 0..2 {
            let [hip, knee, ankle] = leg(s);
            let (l1, l2) = (knee.distance(hip), ankle.distance(knee));
            let hip = hip + DVec3::Y * goals.pelvis_offset;
            let d = goals.feet[s].position.unwrap().distance(hip);
            let folded = (l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * 150f64.to_radians().cos()).sqrt();
            assert!(
                d >= folded - 1e-9,
                "foot {s}: {d} from the hip, folds to {folded}"
            );
            assert!(d <= l1 + l2, "foot {s}: {d} beyond the leg's {}", l1 + l2);
        }
        // The left goal on the box, the pelvis up for it, the right goal above the floor.
        let left = goals.feet[0].position.unwrap().y;
        let standing = model.position(grounder.ankles()[0]).y;
        assert!(left >= top + standing - 1e-9, "{left}");
        assert!(goals.pelvis_offset > 0.02, "{}", goals.pelvis_offset);
        assert!(goals.feet[1].position.unwrap().y > standing + 0.02);
    }

    #[test]
    fn feet_on_a_slope_keep_their_sole_offset_and_face_its_normal() {
        let (skeleton, map, pose, model) = standing();
        let mut grounder = unsprung(&skeleton, &map);
        let angle = 10f64.to_radians();
        let slope = Plane::slope(angle);
        let goals = grounder.goals(&model, &slope, 1.0 / 60.0);
        for s in 0..2 {
            let ankle = model.position(grounder.ankles()[s]);
            // Planted (the rest's ankles are near the floor): fully turned to the normal.
            assert_eq!(goals.weights[s], 1.0);
            let turned = goals.feet[s].orientation.unwrap()
                * model.rotation(grounder.ankles()[s]).conjugate();
            assert!((turned * DVec3::Y - slope.sample(0.0, 0.0).unwrap().1).length() < 1e-9);
            // Every sole point at least its rest height above the slope, one exactly.
            let position = goals.feet[s].position.unwrap();
            assert!((position.x - ankle.x).abs() < 1e-12 && (position.z - ankle.z).abs() < 1e-12);
            assert!((goals.lifts[s] - (position.y - ankle.y)).abs() < 1e-12);
        }
        // The lower foot pulls the pelvis down (no spring: at once).
        let lower = goals.lifts[0].min(goals.lifts[1]);
        assert!((goals.pelvis_offset - lower).abs() < 1e-12 || goals.pelvis_offset < lower);
        // The body solver puts the feet there: ankles at their goals within 1e-4.
        let rig = BodyRig::from_map(&skeleton, &map, &BodyConfig::default()).unwrap();
        let hips = grounder.hips();
        let [l, r] = grounder.ankles();
        let task = IkTask::from_effectors(vec![
            Effector::new(hips, goals.hips),
            Effector::new(l, goals.feet[0]),
            Effector::new(r, goals.feet[1]),
        ]);
        let mut solved = pose.clone();
        let report = rig.solve(&skeleton, &task, &BodyConfig::default(), &mut solved);
        assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
        let mut after = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &solved, &mut after);
        for (s, ankle) in [l, r].into_iter().enumerate() {
            let goal = goals.feet[s].position.unwrap();
            assert!(after.position(ankle).distance(goal) < 1e-4);
        }
    }

    #[test]
    fn a_swinging_foot_keeps_its_clearance_over_a_step_and_the_pelvis_follows_smoothly() {
        let (skeleton, map, mut pose, mut model) = standing();
        let character = Character {
            skeleton: &skeleton,
            map: &map,
        };
        let mut grounder = FrameGrounder::new(character, &FrameGroundConfig::default()).unwrap();
        // Swing the left leg forward (its foot well above the floor) over ground 0.1 m up.
        let thigh = map.joint(HumanoidBone::LeftUpperLeg).unwrap();
        pose[thigh].rotation *= DQuat::from_rotation_x(-1.2);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let ankle = map.joint(HumanoidBone::LeftFoot).unwrap();
        assert!(model.position(ankle).y > 0.3, "{}", model.position(ankle));
        let step =
            Heightfield::new([-5.0, -5.0], 10.0, vec![vec![0.1, 0.1], vec![0.1, 0.1]]).unwrap();
        let goals = grounder.goals(&model, &step, 1.0 / 60.0);
        // Flat ground 0.1 m up: every foot is lifted by exactly 0.1 m (sole offsets kept) and
        // the swinging foot is not turned (its contact weight is 0 well above the floor).
        for s in 0..2 {
            assert!((goals.lifts[s] - 0.1).abs() < 1e-9, "{:?}", goals.lifts);
        }
        assert_eq!(goals.weights[0], 0.0);
        // The pelvis rises with the ground, short of the straight standing leg's full reach
        // (0.999 of it, so the knee never locks).
        assert!(
            goals.pelvis_offset <= 0.1 && goals.pelvis_offset > 0.095,
            "{goals:?}"
        );
        // It starts at its target on lower ground, then rises to level ground by the spring:
        // after one frame of 1/60 s, the spring's closed form.
        let flat = |h: f64| Heightfield::new([-5.0, -5.0], 10.0, vec![vec![h; 2]; 2]).unwrap();
        let mut fresh = FrameGrounder::new(character, &FrameGroundConfig::default()).unwrap();
        let low = fresh.goals(&model, &flat(-0.3), 1.0 / 60.0);
        assert!(low.pelvis_offset < -0.3 + 1e-9, "{low:?}");
        let level = FrameGrounder::new(character, &FrameGroundConfig::default())
            .unwrap()
            .goals(&model, &flat(0.0), 1.0 / 60.0)
            .pelvis_offset;
        let next = fresh.goals(&model, &flat(0.0), 1.0 / 60.0);
        let (x, _) = spring_step(low.pelvis_offset, 0.0, level, 10.0, 1.0 / 60.0);
        assert!((next.pelvis_offset - x).abs() < 1e-12);
        assert!(next.pelvis_offset > low.pelvis_offset && next.pelvis_offset < level);
    }

    #[test]
    fn bad_settings_and_missing_legs_are_errors() {
        let (skeleton, map, _, _) = standing();
        let character = Character {
            skeleton: &skeleton,
            map: &map,
        };
        let bad = FrameGroundConfig {
            time_constant: f64::NAN,
            ..FrameGroundConfig::default()
        };
        assert!(matches!(
            FrameGrounder::new(character, &bad),
            Err(GroundError::Setting("time_constant"))
        ));
        let mut partial = map.clone();
        partial.set(HumanoidBone::LeftFoot, None);
        let character = Character {
            skeleton: &skeleton,
            map: &partial,
        };
        assert!(FrameGrounder::new(character, &FrameGroundConfig::default()).is_err());
    }
}
