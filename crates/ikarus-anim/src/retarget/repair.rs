//! IK repair of a retargeted frame: planted points held with the two-bone leg (and arm)
//! solver, the knee (elbow) kept on its side, the hips lowered when a leg cannot reach, and
//! the feet kept above the floor.
//!
//! Per leg and frame the goal of the foot joint comes from the copied pose and the contacts'
//! weights ([`LimbGoal::for_foot`]): a ball contact moves the ankle so the toes joint lands on
//! its anchor with the foot's copied orientation, a heel contact moves the ankle onto its
//! anchor, each blended by its weight; then the foot turns about the ankle towards the ball's
//! anchor by the ball's weight (a slerp) and the ankle moves along the foot so the ball lands
//! on its goal. The ground then lifts the goal so that neither the ankle nor the toes joint is
//! below the floor plus its rest height, and after the leg solve [`bend_toes`] bends the toes
//! up so the toe tip is not either (a foot never sinks: on a tiptoe the toes bend; the foot
//! rises only by what the toes' limit leaves), and [`lift_toe_tip`] bends them further where
//! the leg's final pose still leaves the tip under the floor. [`hip_drop`] says how far the
//! hips must come down for both legs to reach. [`solve_limb`] runs [`ikarus_solve::two_bone::solve`] with the
//! knee's pole where the copied knee points (off the hip–ankle line) and the hinge axis of the
//! joint's limit (a hinge, or an Euler limit with one open axis as MMD knees have), or else
//! the copied bend normal; while the leg is too straight to show a bend, the last clear one
//! carried by the thigh ([`LimbState`]), so the knee never flips; then it gives the foot back
//! its wanted model rotation and projects the three joints onto their limits. When the
//! ankle's limit keeps the foot from that rotation and the knee is a hinge, the 7-DOF limb
//! (seed 000, 7-DOF limb) turns the knee about the hip–ankle line to the nearest swivel where the
//! ankle fits (kept if it meets the foot's goal better; [`fit_end_by_swivel`], once per leg and
//! frame).

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::limb7::{self, Limb7Chain, Limb7Goal, SwivelPolicy};
use ikarus_solve::two_bone::{self, Pole, TwoBoneInput, TwoBoneSettings};

use super::stages::ClosedForm;

/// A two-bone limb of the target: start (hip, shoulder), mid (knee, elbow), end (ankle,
/// wrist) and, for legs, the toes joint.
#[derive(Clone, Copy, Debug)]
pub struct Limb {
    /// Upper leg or upper arm.
    pub start: JointId,
    /// Lower leg or lower arm.
    pub mid: JointId,
    /// Foot or hand.
    pub end: JointId,
    /// The toes joint (legs), if mapped.
    pub toes: Option<JointId>,
    /// Rest lengths start→mid plus mid→end (metres).
    pub reach: f64,
    /// Rest height above the floor of the end joint (metres, body frame).
    pub end_clearance: f64,
    /// Rest height above the floor of the toes joint.
    pub toes_clearance: f64,
    /// The toe tip in the toes joint's frame (its child joint, or half the foot's length
    /// further along the foot) and its rest height above the floor; `None` without toes.
    /// The ground keeps it above the floor too: [`bend_toes`] bends the toes, and the foot
    /// rises by what their limit leaves.
    pub toe_tip: Option<(DVec3, f64)>,
    /// The axis the toes bend about, in the toes joint's own frame (the rotation applied is
    /// `local · R(axis, θ)`): the hinge axis of their limit, else the character's left at
    /// rest.
    pub toe_axis: DVec3,
    /// The mid joint's bend axis in the start joint's rest frame carried to model space at
    /// rest (the character's left for legs, up/down for arms): `start_rest_model⁻¹ · axis`.
    pub bend_in_start: DVec3,
    /// Where the mid joint points (knee forward, elbow back) in the start joint's reference
    /// frame.
    pub front_in_start: DVec3,
}

/// A contact's hold on a point: its weight and anchor (model space), if any.
type Hold = Option<(f64, DVec3)>;

/// What one limb should do in one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimbGoal {
    /// Where the end joint goes (model space).
    pub end: DVec3,
    /// The end joint's model rotation afterwards.
    pub end_rotation: DQuat,
    /// Where the toes joint should be (a weighted ball contact), model space.
    pub ball: Option<DVec3>,
    /// How far the toes bend from their copied rotation (radians about [`Limb::toe_axis`]):
    /// the bend the toe tip needs ([`LimbGoal::for_foot`] without a plan), or the planned one.
    pub toe_bend: f64,
}

impl LimbGoal {
    /// The goal of a foot from the copied pose (`model`) and the heel and ball contacts'
    /// `(weight, anchor)`, lifted above the floor (`up` the model-space up, `floor` its height
    /// along `up`) when `ground` is set: the ankle and the toes joint by their depth, the toe
    /// tip by its depth once the toes bend by the planned `toe_plan`. Without a plan the tip
    /// is not lifted and [`toe_bend`](Self::toe_bend) is the bend it needs, within
    /// `toe_range` ([`toe_range`]): the caller plans the bends of a clip from those
    /// ([`plan_toe_bends`]) and asks again with its plan.
    pub fn for_foot(
        limb: &Limb,
        model: &ModelPose,
        (heel, ball): (Hold, Hold),
        (up, floor): (DVec3, f64),
        ground: bool,
        (toe_plan, toe_range): (Option<f64>, (f64, f64)),
    ) -> Self {
        let ankle = model.position(limb.end);
        let mut rotation = model.rotation(limb.end);
        let mut toes_rotation = limb.toes.map(|t| model.rotation(t));
        let mut offset = limb.toes.map(|t| model.position(t) - ankle);
        // The toe tip from the ankle, and the foot turn applied to it below.
        let mut goal = ankle;
        let mut ball_at = None;
        if let (Some((w, anchor)), Some(o)) = (ball, offset) {
            goal = goal.lerp(anchor - o, w);
        }
        if let Some((w, anchor)) = heel {
            goal = goal.lerp(anchor, w);
        }
        // Then the foot turns about the ankle towards the ball's anchor by the ball's weight
        // (a slerp, so a planted heel stays planted while the ball comes down), the ball's
        // goal is that point moved towards the anchor by the weight, and the ankle moves the
        // little left along the foot so the ball lands on its goal (anchors of overlapping
        // heel and ball contacts are a foot length apart, so a foot planted at both ends
        // keeps both).
        if let (Some((w, anchor)), Some(o)) = (ball, offset) {
            let length = o.length();
            if let Some(direction) = (anchor - goal).try_normalize()
                && length > 0.0
            {
                let turn =
                    DQuat::IDENTITY.slerp(DQuat::from_rotation_arc(o / length, direction), w);
                let target = (goal + turn * o).lerp(anchor, w);
                if let (true, Some(along)) = (turn.is_finite(), (target - goal).try_normalize()) {
                    // The ankle onto the sphere of the foot's length about the ball's goal.
                    let turn = DQuat::from_rotation_arc(o / length, along);
                    rotation = (turn * rotation).normalize();
                    toes_rotation = toes_rotation.map(|r| turn * r);
                    offset = Some(along * length);
                    goal = target - along * length;
                    ball_at = Some(target);
                }
            }
        }
        let mut toe_bend = toe_plan.unwrap_or(0.0);
        if ground {
            let mut lift = floor + limb.end_clearance - goal.dot(up);
            if let Some(o) = offset {
                lift = lift.max(floor + limb.toes_clearance - (goal + o).dot(up));
            }
            if let (Some(o), Some(r), Some((tip, clearance))) =
                (offset, toes_rotation, limb.toe_tip)
            {
                let (tip, axis) = (r * tip, r * limb.toe_axis);
                let need = floor + clearance - (goal + o).dot(up);
                if let Some(plan) = toe_plan {
                    let tip = DQuat::from_axis_angle(axis, plan) * tip;
                    lift = lift.max(need - tip.dot(up));
                    toe_bend = plan;
                } else {
                    toe_bend = bend_for(tip, axis, up, need).clamp(toe_range.0, toe_range.1);
                }
            }
            if lift > 0.0 {
                goal += up * lift;
                ball_at = ball_at.map(|b| b + up * lift);
            }
        }
        Self {
            end: goal,
            end_rotation: rotation,
            ball: ball_at,
            toe_bend,
        }
    }
}

/// How far (metres, ≥ 0) the start joint at `start` must come down along `up` for a limb of
/// `reach` to touch `goal` (at most to the goal's height: no further help).
pub fn hip_drop(start: DVec3, goal: DVec3, reach: f64, up: DVec3) -> f64 {
    let v = goal - start;
    let vertical = v.dot(up);
    let horizontal2 = (v - up * vertical).length_squared();
    if v.length_squared() <= reach * reach {
        return 0.0;
    }
    let room = reach * reach - horizontal2;
    let drop = if room > 0.0 {
        -room.sqrt() - vertical
    } else {
        -vertical
    };
    drop.max(0.0)
}

/// What a limb remembers between frames: its last clear bend (pole and hinge normal) in the
/// start joint's frame, used while the limb is too straight to show one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimbState {
    /// Direction from the start–end line to the mid joint, start joint's frame.
    pub pole_in_start: DVec3,
    /// Bend normal (flexion axis), start joint's frame.
    pub axis_in_start: DVec3,
    /// While a contact fully held the limb: the local rotations (start, mid, end) it ended the
    /// last frame with and where its end joint was (model space), for
    /// [`hold_foot`](super::hold::hold_foot) to go on from; `None` otherwise.
    pub last: Option<([DQuat; 3], DVec3)>,
}

impl LimbState {
    /// The reference bend of `limb` (knee forward, the character's left as axis).
    pub fn new(limb: &Limb) -> Self {
        Self {
            pole_in_start: limb.front_in_start,
            axis_in_start: limb.bend_in_start,
            last: None,
        }
    }
}

/// Solves one limb so its end joint reaches `goal.end` and turns to `goal.end_rotation`;
/// `model` holds the FK of `pose` before and after; `state` carries the last clear bend
/// (a bend is clear when the mid joint is off the start–end line by more than
/// [`ClosedForm::clear_bend`] of the upper bone).
/// Returns whether the end reached the goal (two-bone `reached`).
pub fn solve_limb(
    skeleton: &Skeleton,
    (limb, settings): (&Limb, &ClosedForm),
    goal: &LimbGoal,
    state: &mut LimbState,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> bool {
    let start = model[limb.start];
    let mid = model[limb.mid];
    let end = model[limb.end];
    let (s, m, e) = (start.translation, mid.translation, end.translation);
    let mid_rotation = model.rotation(limb.mid);
    let start_rotation = model.rotation(limb.start);
    // The copied bend where it is clear (the mid joint off the start–end line by
    // `clear_bend` of the upper bone), else the last clear one carried by the start joint.
    let off_line = (m - s).reject_from(e - s);
    if off_line.length() > settings.clear_bend * (m - s).length() {
        let normal = (m - s).cross(e - m).normalize_or_zero();
        state.pole_in_start = start_rotation.conjugate() * off_line.normalize();
        if normal != DVec3::ZERO {
            state.axis_in_start = start_rotation.conjugate() * normal;
        }
    }
    let axis_model = match hinge_axis(skeleton.limit(limb.mid)) {
        Some(axis) => {
            mid_rotation
                * (skeleton.rest(limb.mid).rotation.conjugate() * pose[limb.mid].rotation)
                    .conjugate()
                * axis
        }
        None => start_rotation * state.axis_in_start,
    };
    let pole = Pole::Vector(start_rotation * state.pole_in_start);
    let input = TwoBoneInput {
        start_joint: start,
        mid_joint: mid,
        end_joint: end,
        target: goal.end,
        pole,
        mid_axis: mid_rotation.conjugate() * axis_model,
    };
    let out = two_bone::solve(&input, &TwoBoneSettings::default());
    pose[limb.start].rotation = (pose[limb.start].rotation * out.start_correction).normalize();
    pose[limb.mid].rotation = (pose[limb.mid].rotation * out.mid_correction).normalize();
    for joint in [limb.start, limb.mid] {
        project(skeleton, pose, joint);
    }
    fk::update_subtree(skeleton, pose, model, limb.start);
    let parent = skeleton
        .parent(limb.end)
        .map_or(DQuat::IDENTITY, |p| model.rotation(p));
    let local = (parent.conjugate() * goal.end_rotation).normalize();
    if local.is_finite() {
        pose[limb.end].rotation = local;
        project(skeleton, pose, limb.end);
    }
    fk::update_subtree(skeleton, pose, model, limb.end);
    out.reached
}

/// After [`solve_limb`], when the end joint's limit kept it from its wanted rotation (an
/// ankle): the 7-DOF limb closed form (seed 000, 7-DOF limb) on the same joints (`chain`, built
/// once per limb), for the end joint's position and rotation, with the knee's swivel kept where
/// that is legal and moved to the nearest legal one otherwise — the knee turns about the hip–ankle
/// line until the ankle fits its limit. Kept when it meets the goal better than the two-bone pose
/// (which is restored otherwise): `Some(reached)` then, else `None`; also `None` without a
/// search when the end joint misses its rotation by at most `min_angle` radians
/// ([`SwivelSearch::min_angle`](super::stages::SwivelSearch::min_angle)). Its feasible-swivel search costs about 0.3 ms when no
/// swivel fits, so callers limit how often they ask.
pub fn fit_end_by_swivel(
    skeleton: &Skeleton,
    (limb, chain): (&Limb, &Limb7Chain),
    (goal, min_angle): (&LimbGoal, f64),
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> Option<bool> {
    if model.rotation(limb.end).angle_between(goal.end_rotation) <= min_angle {
        return None;
    }
    let miss = |model: &ModelPose| {
        model.rotation(limb.end).angle_between(goal.end_rotation)
            + model.position(limb.end).distance(goal.end) / limb.reach
    };
    let before = miss(model);
    let saved = [limb.start, limb.mid, limb.end].map(|j| pose[j]);
    let limb7_goal = Limb7Goal {
        position: goal.end,
        orientation: Some(goal.end_rotation),
    };
    let report = limb7::solve_chain(
        skeleton,
        chain,
        &limb7_goal,
        SwivelPolicy::KeepCurrent,
        pose,
        model,
    )
    .ok();
    if let Some(report) = report
        && pose.is_finite()
        && miss(model) < before
    {
        return Some(report.in_reach);
    }
    for (j, t) in [limb.start, limb.mid, limb.end].into_iter().zip(saved) {
        pose[j] = t;
    }
    fk::update_subtree(skeleton, pose, model, limb.start);
    None
}

/// The toe bends of a clip, frame by frame, from the bends the toe tips need (`needs`,
/// [`LimbGoal::for_foot`] without a plan) and each frame's `ranges` ([`toe_range`]): the
/// smallest bends at least as large as the needs (in the needs' direction) that change by at
/// most `step` a frame — the needs' upper envelope with slopes of `step`, so the toes start
/// bending a little before the tip would touch and straighten a little after — then kept
/// within each frame's range (what a range leaves, the foot rises by).
pub fn plan_toe_bends(needs: &[f64], ranges: &[(f64, f64)], step: f64) -> Vec<f64> {
    let envelope = |sign: f64| {
        let mut plan: Vec<f64> = needs.iter().map(|&n| (sign * n).max(0.0)).collect();
        for f in 1..plan.len() {
            plan[f] = plan[f].max(plan[f - 1] - step);
        }
        for f in (0..plan.len().saturating_sub(1)).rev() {
            plan[f] = plan[f].max(plan[f + 1] - step);
        }
        plan
    };
    let (up, down) = (envelope(1.0), envelope(-1.0));
    let mut plan: Vec<f64> = up
        .iter()
        .zip(&down)
        .zip(ranges)
        .map(|((u, d), &(lo, hi))| (u - d).clamp(lo, hi))
        .collect();
    // Needs of both directions within a few frames of each other (rare) would meet faster
    // than `step`: there the plan follows at `step` and the foot rises by the rest.
    for f in 1..plan.len() {
        let (lo, hi) = ranges[f];
        plan[f] = plan[f]
            .clamp(plan[f - 1] - step, plan[f - 1] + step)
            .clamp(lo.min(hi), hi.max(lo));
    }
    plan
}

/// Bends the limb's toes by `bend` (radians about [`Limb::toe_axis`], from their rotation in
/// `pose`) and projects them onto their limit; updates `model` for the toes' subtree.
pub fn bend_toes(
    skeleton: &Skeleton,
    limb: &Limb,
    bend: f64,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) {
    let Some(toes) = limb.toes else {
        return;
    };
    if bend == 0.0 {
        return;
    }
    let bent = (pose[toes].rotation * DQuat::from_axis_angle(limb.toe_axis, bend)).normalize();
    if bent.is_finite() {
        pose[toes].rotation = bent;
        project(skeleton, pose, toes);
        fk::update_subtree(skeleton, pose, model, toes);
    }
}

/// Bends the toes of `limb` further (within their limit) where the toe tip is still below
/// the floor plus its rest height after the leg's solve — the planned bends come from the
/// copied feet, and the leg's limits can pitch a foot further than those.
pub fn lift_toe_tip(
    skeleton: &Skeleton,
    limb: &Limb,
    (up, floor): (DVec3, f64),
    pose: &mut LocalPose,
    model: &mut ModelPose,
) {
    let (Some(toes), Some((tip, clearance))) = (limb.toes, limb.toe_tip) else {
        return;
    };
    let rotation = model.rotation(toes);
    let need = floor + clearance - model.position(toes).dot(up);
    let bend = bend_for(rotation * tip, rotation * limb.toe_axis, up, need);
    bend_toes(skeleton, limb, bend, pose, model);
}

/// The smallest angle about the unit `axis` that lifts `tip` (a vector from the toes joint) to
/// the height `need` along `up`: 0 when it is there already, the angle of the highest point
/// when no angle reaches it. The first such angle going uphill from 0.
fn bend_for(tip: DVec3, axis: DVec3, up: DVec3, need: f64) -> f64 {
    if tip.dot(up) >= need {
        return 0.0;
    }
    // The tip turned by θ about the axis: height a + b cos θ + c sin θ = a + r cos(θ − φ).
    let along = axis * axis.dot(tip);
    let (a, b, c) = (
        along.dot(up),
        (tip - along).dot(up),
        axis.cross(tip).dot(up),
    );
    let r = b.hypot(c);
    if r.is_nan() || r <= 1e-9 * tip.length() {
        return 0.0;
    }
    let phi = c.atan2(b);
    let spread = ((need - a) / r).clamp(-1.0, 1.0).acos();
    phi - spread.copysign(phi)
}

/// How far the toes of `limb` may bend from their rotation in `pose` (a [`bend_toes`] angle):
/// within a hinge limit's range, else ±`free_range` ([`ToePlan::free_range`](super::stages::ToePlan::free_range)). `(0, 0)`
/// without toes.
pub fn toe_range(
    skeleton: &Skeleton,
    limb: &Limb,
    pose: &LocalPose,
    free_range: f64,
) -> (f64, f64) {
    let Some(toes) = limb.toes else {
        return (0.0, 0.0);
    };
    if let JointLimit::Hinge(h) = skeleton.limit(toes) {
        let delta = skeleton.rest(toes).rotation.conjugate() * pose[toes].rotation;
        let angle = 2.0 * delta.xyz().dot(h.axis).atan2(delta.w);
        let angle =
            (angle + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
        let (lo, hi) = ((h.min - angle).min(0.0), (h.max - angle).max(0.0));
        return (lo, hi);
    }
    (-free_range, free_range)
}

/// How far (metres, ≥ 0) the limb's end joint, toes joint or toe tip is below the floor plus
/// its rest height in the FK `model`.
pub fn depth(limb: &Limb, model: &ModelPose, up: DVec3, floor: f64) -> f64 {
    let tip = limb
        .toes
        .zip(limb.toe_tip)
        .map_or(0.0, |(t, (local, clearance))| {
            floor + clearance - (model.position(t) + model.rotation(t) * local).dot(up)
        });
    depth_of_points(limb, model, up, floor).max(tip)
}

/// How far the heel (end joint) or ball (toes joint) of `limb` is below the floor plus its
/// rest height (0 when neither is): [`depth`] without the toe tip.
pub fn depth_of_points(limb: &Limb, model: &ModelPose, up: DVec3, floor: f64) -> f64 {
    let end = floor + limb.end_clearance - model.position(limb.end).dot(up);
    let toes = limb.toes.map_or(0.0, |t| {
        floor + limb.toes_clearance - model.position(t).dot(up)
    });
    end.max(toes).max(0.0)
}

/// The axis (rest frame) of a one-axis limit, signed so that positive rotation is inside
/// the range: a hinge, or an Euler limit with two ranges closed (MMD knees).
pub(crate) fn hinge_axis(limit: &JointLimit) -> Option<DVec3> {
    match limit {
        JointLimit::Hinge(h) => Some(h.axis),
        JointLimit::Euler(e) => {
            let open: Vec<usize> = (0..3).filter(|&k| e.max[k] - e.min[k] > 1e-6).collect();
            let [k] = open[..] else { return None };
            let axis = [DVec3::X, DVec3::Y, DVec3::Z][e.order.axes()[k]];
            Some(if e.max[k] + e.min[k] >= 0.0 {
                axis
            } else {
                -axis
            })
        }
        _ => None,
    }
}

/// Puts a joint's rotation onto its limit.
pub fn project(skeleton: &Skeleton, pose: &mut LocalPose, joint: JointId) {
    let limit = skeleton.limit(joint);
    if limit.is_free() {
        return;
    }
    let rest = skeleton.rest(joint).rotation;
    let delta = rest.conjugate() * pose[joint].rotation;
    if !limit.contains(delta) {
        pose[joint].rotation = (rest * limit.project(delta)).normalize();
    }
}

/// A held point's move across the floor from its anchor in frame `k` of a contact, eased
/// so that it changes by at most `step` a frame (plus `from` metres, [`HeelEase::from`](super::stages::HeelEase::from),
/// where the easing begins and ends): the upper envelope `max_j (|m_j| − step·|k − j|)` of
/// the contact's `moves`, in the direction of the move `m_j` that sets it. `None` when the
/// frame's own move is within `from` of it (nothing to change). A point its limits pull off
/// its anchor over a frame or two then leaves the anchor earlier and returns later, at most
/// `step` a frame, instead of jumping.
pub fn ease_move(moves: &[DVec3], k: usize, (step, from): (f64, f64)) -> Option<DVec3> {
    let own = moves.get(k)?.length();
    let (j, eased) = moves
        .iter()
        .enumerate()
        .map(|(j, m)| (j, m.length() - step * k.abs_diff(j) as f64))
        .fold((k, own), |best, c| if c.1 > best.1 { c } else { best });
    (eased > own + from).then(|| moves[j].normalize_or_zero() * eased)
}

#[cfg(test)]
mod tests {
    use super::super::stages::HeelEase;
    use super::*;

    #[test]
    fn the_toe_bend_puts_the_tip_at_the_height_needed() {
        // Independent check: turn the tip by the angle found (glam's axis-angle rotation) and
        // measure its height; the other root of the height equation is farther from 0.
        let up = DVec3::Y;
        let mut rng = ikarus_testdata::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.signed();
        let mut reached = 0;
        for _ in 0..2000 {
            let tip = DVec3::new(next(), next(), next()) * 0.1;
            let axis = DVec3::new(next(), next(), next()).normalize();
            let need = tip.dot(up) + 0.05 * next().abs();
            let theta = bend_for(tip, axis, up, need);
            let height = (DQuat::from_axis_angle(axis, theta) * tip).dot(up);
            // The highest point of the tip's circle about the axis.
            let along = axis * axis.dot(tip);
            let top = along.dot(up) + (up - axis * axis.dot(up)).length() * (tip - along).length();
            if need <= top - 1e-9 {
                reached += 1;
                assert!((height - need).abs() < 1e-9, "{height} vs {need}");
                // No smaller angle reaches it: the height below `need` on (0, θ).
                for k in 1..20 {
                    let t = theta * f64::from(k) / 20.0;
                    let h = (DQuat::from_axis_angle(axis, t) * tip).dot(up);
                    assert!(h < need + 1e-9);
                }
            } else {
                assert!(
                    height <= top + 1e-9 && height >= top - 1e-6,
                    "{height} {top}"
                );
            }
        }
        assert!(reached > 1000, "{reached}");
    }

    #[test]
    fn planned_toe_bends_cover_the_needs_and_change_by_at_most_a_step() {
        let needs = [
            0.0, 0.0, 0.0, 0.9, 0.2, 0.0, 0.0, 0.0, 0.0, -0.3, 0.0, 0.0, 0.0, 0.5,
        ];
        let ranges = vec![(-1.0, 1.0); needs.len()];
        let step = 0.25;
        let plan = plan_toe_bends(&needs, &ranges, step);
        for (f, (&p, &n)) in plan.iter().zip(&needs).enumerate() {
            // At least the need, in its direction.
            assert!(n * (p - n) >= -1e-12, "{f}: {p} {n}");
            // The smallest such plan: the envelope, computed by brute force.
            let up = needs
                .iter()
                .enumerate()
                .map(|(k, &m)| m.max(0.0) - step * f.abs_diff(k) as f64)
                .fold(0.0_f64, f64::max);
            let down = needs
                .iter()
                .enumerate()
                .map(|(k, &m)| (-m).max(0.0) - step * f.abs_diff(k) as f64)
                .fold(0.0_f64, f64::max);
            assert!((p - (up - down)).abs() < 1e-12, "{f}: {p} vs {}", up - down);
        }
        for w in plan.windows(2) {
            assert!((w[1] - w[0]).abs() <= step + 1e-12, "{w:?}");
        }
        // Opposite needs close together: the plan still changes by at most a step.
        let close = [0.0, 0.6, 0.0, -0.6, 0.0];
        let plan = plan_toe_bends(&close, &ranges[..close.len()], step);
        for w in plan.windows(2) {
            assert!((w[1] - w[0]).abs() <= step + 1e-12, "{w:?}");
        }
        // A range holds the plan (the foot rises by the rest).
        let narrow = vec![(-0.1, 0.4); needs.len()];
        let held = plan_toe_bends(&needs, &narrow, step);
        assert!(held.iter().all(|&p| (-0.1..=0.4).contains(&p)));
        assert!((held[3] - 0.4).abs() < 1e-12);
    }

    #[test]
    fn eased_moves_change_by_at_most_a_step_and_never_shrink() {
        // A heel that stays on its anchor, is pulled 3 cm off it over two frames, and lands
        // back: eased, it leaves earlier and returns later, at most `step` a frame, never
        // less far than it was pulled, and frames far from the pull keep their own move.
        let step = 0.005;
        let from = HeelEase::default().from;
        let mut moves = vec![DVec3::ZERO; 30];
        moves[14] = DVec3::new(0.012, 0.0, 0.0);
        moves[15] = DVec3::new(0.030, 0.0, 0.004);
        moves[16] = DVec3::new(0.002, 0.0, 0.0);
        let eased: Vec<DVec3> = (0..moves.len())
            .map(|k| ease_move(&moves, k, (step, from)).unwrap_or(moves[k]))
            .collect();
        for (k, (e, m)) in eased.iter().zip(&moves).enumerate() {
            assert!(e.length() >= m.length() - 1e-15, "frame {k} shrank");
            // The envelope by brute force: the largest |m_j| − step·|k − j|.
            let envelope = moves
                .iter()
                .enumerate()
                .map(|(j, m)| m.length() - step * k.abs_diff(j) as f64)
                .fold(0.0, f64::max);
            if envelope > m.length() + from {
                assert!((e.length() - envelope).abs() < 1e-12, "frame {k}");
                // Along the pull that sets it.
                assert!(e.normalize().dot(moves[15].normalize()) > 1.0 - 1e-12);
            } else {
                assert_eq!(*e, *m, "frame {k} changed");
            }
        }
        // Within a step a frame (plus the threshold where the easing starts and ends).
        for w in eased.windows(2) {
            assert!((w[1].length() - w[0].length()).abs() <= step + from + 1e-12);
        }
        // The pull (3.03 cm) starts 5 frames early at 5 mm a frame and ends 5 frames late.
        assert!(eased[10].length() > 0.005 && eased[9] == DVec3::ZERO);
        assert!(eased[20].length() > 0.005 && eased[21] == DVec3::ZERO);
    }
}
