//! The leg repair's stages, in the order they run, each with its own settings.
//!
//! Retargeting copies every frame, then repairs the legs so that planted feet hold their
//! anchors and nothing goes through the floor. That repair is eight stages (see
//! [`LegStage::ALL`]); [`LegRepair`] holds the settings of each, with its unit, its default
//! and what a larger value does. Every stage but the closed form can be left out
//! ([`LegRepair::without`]), which is how each stage's test measures what it is for.
//!
//! Per clip, before any frame is solved:
//! 1. [`HipDrop`]: the hips lowered by the largest drop a leg needs to reach its goal,
//!    spread over a window so they never pop;
//! 2. [`ToePlan`]: the toe bends the toe tips need to stay above the floor, planned over the
//!    clip so they change smoothly.
//!
//! Per frame and leg:
//! 3. [`ClosedForm`]: the two-bone solve of the leg towards its goal (hip, knee, ankle);
//! 4. [`GoalShift`]: the goal moved by what forward kinematics still finds off (the ball's
//!    miss, the depth below the floor) and the leg solved again, keeping the best attempt;
//! 5. [`SwivelSearch`]: in the first attempts, the knee turned about the hip–ankle line
//!    (seed 000, the analytic 7-DOF limb) until an ankle its limit holds fits;
//! 6. [`Hold`]: a fully planted foot the closed form leaves off its goals goes on from the
//!    last frame's pose by a damped Gauss–Newton descent ([`super::hold`]);
//! 7. toe-tip lift ([`LegRepair::toe_tip_lift`]): the toes bent further where the tip is
//!    still below the floor.
//!
//! Per clip, after the frames:
//! 8. [`HeelEase`]: heels the limits lift off their anchors eased in and out over frames,
//!    and the frames that changed solved again.
//!
//! The constrained descent of stage 6 seeded by the closed form could in principle replace
//! stages 4–5 (one solver for the whole leg instead of a goal loop and a swivel search); the
//! retargeting table's numbers with each stage left out are in BENCHMARKS.md ("Leg repair
//! stages"), which is why all of them are kept.

/// One stage of the leg repair (see the module docs for what each does, in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LegStage {
    /// Stage 1: the hips lowered for legs that cannot reach ([`HipDrop`]).
    HipDrop,
    /// Stage 2: toe bends planned over the clip ([`ToePlan`]).
    ToePlan,
    /// Stage 3: the two-bone solve of each leg ([`ClosedForm`]); cannot be left out.
    ClosedForm,
    /// Stage 4: the goal moved by what is still off, and solved again ([`GoalShift`]).
    GoalShift,
    /// Stage 5: the knee's swivel searched for an ankle its limit holds ([`SwivelSearch`]).
    SwivelSearch,
    /// Stage 6: a planted foot gone on with from the last frame ([`Hold`]).
    Hold,
    /// Stage 7: the toes bent further where the tip is still below the floor.
    ToeTipLift,
    /// Stage 8: heels lifted by the limits eased over frames ([`HeelEase`]).
    HeelEase,
}

impl LegStage {
    /// Every stage, in the order it runs.
    pub const ALL: [LegStage; 8] = [
        LegStage::HipDrop,
        LegStage::ToePlan,
        LegStage::ClosedForm,
        LegStage::GoalShift,
        LegStage::SwivelSearch,
        LegStage::Hold,
        LegStage::ToeTipLift,
        LegStage::HeelEase,
    ];

    /// The stage's name as the documents and reports write it (`hip_drop`, …).
    pub fn name(self) -> &'static str {
        match self {
            LegStage::HipDrop => "hip_drop",
            LegStage::ToePlan => "toe_plan",
            LegStage::ClosedForm => "closed_form",
            LegStage::GoalShift => "goal_shift",
            LegStage::SwivelSearch => "swivel_search",
            LegStage::Hold => "hold",
            LegStage::ToeTipLift => "toe_tip_lift",
            LegStage::HeelEase => "heel_ease",
        }
    }
}

/// Stage 1: the hips come down when a leg's goal is beyond its reach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HipDrop {
    /// The fraction of a leg's rest reach (upper plus lower leg) the drop brings its goal
    /// within. Default 0.999. Larger leaves the reached legs straighter (at 1 the two-bone
    /// solve sits on its singular, fully stretched pose); smaller drops the hips further.
    pub reach: f64,
    /// The shortest window (frames) each drop is eased in before and out after; the contact
    /// blend window is used when it is longer. Default 3. Larger lowers the hips earlier and
    /// raises them later, more smoothly.
    pub min_window: usize,
}

impl Default for HipDrop {
    fn default() -> Self {
        Self {
            reach: 0.999,
            min_window: 3,
        }
    }
}

/// Stage 2: the toe bends that keep the toe tips above the floor, planned over the clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToePlan {
    /// How fast (radians per second) a planned bend may change from one frame to the next.
    /// Default 10 (about 19° a frame at 30 fps). Larger lets toes snap with a fast foot
    /// pitch (a 53° step was measured at 30 fps without the limit); smaller starts bending
    /// earlier and lifts the foot where the bend cannot keep up.
    pub max_speed: f64,
    /// The largest bend (radians) of toes whose limit does not bound it (a hinge limit bounds
    /// it by its range). Default π/3 (60°, about how far a standing foot's toes bend).
    /// Larger lets free toes fold further before the foot is lifted instead.
    pub free_range: f64,
}

impl Default for ToePlan {
    fn default() -> Self {
        Self {
            max_speed: 10.0,
            free_range: std::f64::consts::FRAC_PI_3,
        }
    }
}

/// Stage 3: the two-bone solve of each leg (and of each held arm).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosedForm {
    /// A limb's bend plane is taken from its current pose when the knee is off the hip–ankle
    /// line by more than this fraction of the upper bone; otherwise the last clear plane is
    /// kept. Default 0.001. Larger keeps an older plane for longer on nearly straight legs;
    /// smaller follows noise (at 0, noisy capture turned thighs by 40–60° a frame).
    pub clear_bend: f64,
}

impl Default for ClosedForm {
    fn default() -> Self {
        Self { clear_bend: 0.001 }
    }
}

/// Stage 4: the leg's goal moved by what is still off after a solve, and solved again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoalShift {
    /// Solves per leg and frame, the first included; the best is kept. Default 24. Larger
    /// closes more of what joint limits leave (each attempt costs one two-bone solve).
    pub attempts: usize,
    /// The remaining shift (metres: the ball's miss plus the depth below the floor) at which
    /// the attempts stop. Default 1e-6 (a micrometre). Larger stops sooner.
    pub tolerance: f64,
}

impl Default for GoalShift {
    fn default() -> Self {
        Self {
            attempts: 24,
            tolerance: 1e-6,
        }
    }
}

/// Stage 5: the knee's swivel searched when the ankle's limit keeps the foot from its
/// rotation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwivelSearch {
    /// How many of a leg's first attempts may search. Default 3. Larger searches more often
    /// (a search that finds no fitting swivel costs about 0.3 ms).
    pub attempts: usize,
    /// After the first attempt, a search runs only while the goal still moves by more than
    /// this (metres). Default 1e-4 (0.1 mm). Larger searches less often.
    pub min_shift: f64,
    /// The foot must miss its wanted rotation by more than this (radians) for a search.
    /// Default 0.5° (below what foot contacts show). Larger accepts larger turns of a
    /// planted foot.
    pub min_angle: f64,
}

impl Default for SwivelSearch {
    fn default() -> Self {
        Self {
            attempts: 3,
            min_shift: 1e-4,
            min_angle: 0.5 * std::f64::consts::PI / 180.0,
        }
    }
}

/// Stage 6: a fully planted foot the closed form leaves off its goals goes on from the last
/// frame's pose by a damped Gauss–Newton descent on the leg's three joints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hold {
    /// How far (metres, heel and ball summed) the closed form must leave the foot off its
    /// goals for the descent to run. Default 1e-3. Larger lets more of a closed form's branch
    /// switch show as a slide; smaller runs the descent more often.
    pub from: f64,
    /// The cost (m²) below which the descent from the last frame counts as holding (then the
    /// closed form's pose is not refined as well). Default 1e-8 (about 0.1 mm).
    pub held: f64,
    /// How fast (metres per second across the floor) the held heel may go from where it was
    /// towards its goal. Default 0.15 (5 mm a frame at 30 fps). Larger lets a heel the
    /// limits lifted slide back faster.
    pub heel_speed: f64,
    /// The descent's weights and stopping rules.
    pub descent: HoldDescent,
}

impl Default for Hold {
    fn default() -> Self {
        Self {
            from: 1e-3,
            held: 1e-8,
            heel_speed: 0.15,
            descent: HoldDescent::default(),
        }
    }
}

/// The weights and stopping rules of stage 6's descent ([`super::hold::hold_foot`]).
/// Residuals are in metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldDescent {
    /// Metres per radian of the foot's rotation error. Default 0.05 (a degree costs as much as
    /// 0.9 mm). Larger keeps the foot's turn at the expense of its place.
    pub rotation_length: f64,
    /// Weight of the heel's place across the floor. Default 3.
    pub heel_weight: f64,
    /// Weight of the ball's place (the pivot a foot turns about). Default 4. Larger than the
    /// heel's: a foot rolling off its ball keeps the ball.
    pub ball_weight: f64,
    /// Weight of a held point's height against its place across the floor. Default 0.3:
    /// limits may lift a planted foot, sliding is what shows. Larger holds heights harder.
    pub height_weight: f64,
    /// Weight of a heel, ball or toe tip below the floor plus its rest height. Default 30.
    /// Larger makes the soft floor harder.
    pub floor_weight: f64,
    /// How far above the floor (metres) the floor terms start. Default 1e-3: the soft floor
    /// leaves points a fraction of a millimetre below the line it pushes them above.
    pub floor_margin: f64,
    /// Descent steps at most. Default 200.
    pub iterations: usize,
    /// A cost (m²) that counts as the goals met. Default 1e-10 (residuals of about 10 µm).
    pub met: f64,
    /// The smallest relative gain of a step for the descent to go on. Default 1e-4. Larger
    /// stops sooner.
    pub min_gain: f64,
    /// Finite-difference step (radians) of a joint's rotation vector for the Jacobian.
    /// Default 1e-6.
    pub difference: f64,
}

impl Default for HoldDescent {
    fn default() -> Self {
        Self {
            rotation_length: 0.05,
            heel_weight: 3.0,
            ball_weight: 4.0,
            height_weight: 0.3,
            floor_weight: 30.0,
            floor_margin: 1e-3,
            iterations: 200,
            met: 1e-10,
            min_gain: 1e-4,
            difference: 1e-6,
        }
    }
}

/// Stage 8: heels the limits lift off their anchors within a frame or two are eased.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeelEase {
    /// How fast (metres per second across the floor) an eased heel's anchor may move from
    /// frame to frame. Default 0.15 (5 mm a frame at 30 fps). Larger eases over fewer frames
    /// (a heel jumping across the floor at the limit); smaller moves anchors of more frames.
    pub speed: f64,
    /// How much further (metres) than a frame's own move an eased move must be for that
    /// frame's anchor to change. Default 5e-4. Larger changes fewer frames.
    pub from: f64,
    /// An eased frame is kept unless its deepest heel or ball is lower under the floor than
    /// the first solve's by more than this (metres). Default 1e-6.
    pub depth_tolerance: f64,
}

impl Default for HeelEase {
    fn default() -> Self {
        Self {
            speed: 0.15,
            from: 5e-4,
            depth_tolerance: 1e-6,
        }
    }
}

/// The leg repair's stages (see the module docs), in the order they run. `None` leaves a
/// stage out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegRepair {
    /// Stage 1. Default on.
    pub hip_drop: Option<HipDrop>,
    /// Stage 2. Default on; without it the toes keep their copied rotation and the foot is
    /// lifted by what its toe tip is below the floor.
    pub toe_plan: Option<ToePlan>,
    /// Stage 3 (always runs).
    pub closed_form: ClosedForm,
    /// Stage 4. Default on; without it each leg is solved once a frame.
    pub goal_shift: Option<GoalShift>,
    /// Stage 5. Default on.
    pub swivel_search: Option<SwivelSearch>,
    /// Stage 6. Default on.
    pub hold: Option<Hold>,
    /// Stage 7. Default true.
    pub toe_tip_lift: bool,
    /// Stage 8. Default on (it runs only with contacts).
    pub heel_ease: Option<HeelEase>,
}

impl Default for LegRepair {
    fn default() -> Self {
        Self {
            hip_drop: Some(HipDrop::default()),
            toe_plan: Some(ToePlan::default()),
            closed_form: ClosedForm::default(),
            goal_shift: Some(GoalShift::default()),
            swivel_search: Some(SwivelSearch::default()),
            hold: Some(Hold::default()),
            toe_tip_lift: true,
            heel_ease: Some(HeelEase::default()),
        }
    }
}

impl LegRepair {
    /// These settings with `stage` left out; [`LegStage::ClosedForm`] is the repair itself
    /// and stays.
    #[must_use]
    pub fn without(mut self, stage: LegStage) -> Self {
        match stage {
            LegStage::HipDrop => self.hip_drop = None,
            LegStage::ToePlan => self.toe_plan = None,
            LegStage::ClosedForm => {}
            LegStage::GoalShift => self.goal_shift = None,
            LegStage::SwivelSearch => self.swivel_search = None,
            LegStage::Hold => self.hold = None,
            LegStage::ToeTipLift => self.toe_tip_lift = false,
            LegStage::HeelEase => self.heel_ease = None,
        }
        self
    }

    /// Whether `stage` runs with these settings.
    pub fn runs(&self, stage: LegStage) -> bool {
        match stage {
            LegStage::HipDrop => self.hip_drop.is_some(),
            LegStage::ToePlan => self.toe_plan.is_some(),
            LegStage::ClosedForm => true,
            LegStage::GoalShift => self.goal_shift.is_some(),
            LegStage::SwivelSearch => self.swivel_search.is_some(),
            LegStage::Hold => self.hold.is_some(),
            LegStage::ToeTipLift => self.toe_tip_lift,
            LegStage::HeelEase => self.heel_ease.is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_but_the_closed_form_can_be_left_out_alone() {
        for stage in LegStage::ALL {
            let without = LegRepair::default().without(stage);
            for other in LegStage::ALL {
                let expected = other != stage || stage == LegStage::ClosedForm;
                assert_eq!(
                    without.runs(other),
                    expected,
                    "{} without {}",
                    other.name(),
                    stage.name()
                );
            }
        }
    }
}
