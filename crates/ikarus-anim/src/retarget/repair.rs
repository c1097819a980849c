//! IK repair of a retargeted frame: planted points held with the two-bone leg (and arm)
//! solver, the knee (elbow) kept on its side, the hips lowered when a leg cannot reach, and
//! the feet kept above the floor.
//!
//! Per leg and frame the goal of the foot joint comes from the copied pose and the contacts'
//! weights ([`LimbGoal::for_foot`]): a ball contact moves the ankle so the toes joint lands on
//! its anchor with the foot's copied orientation, a heel contact moves the ankle onto its
//! anchor, each blended by its weight; then the foot turns about the ankle towards the ball's
//! anchor by the ball's weight (a slerp) and the ankle moves along the foot so the ball lands
//! on its goal. The ground then lifts the goal so that neither the ankle, the toes joint nor
//! the toe tip is below the floor plus its rest height (a foot never sinks: on a tiptoe the
//! whole foot rises; the toes do not bend yet). [`hip_drop`] says how far the hips must come
//! down for both legs to reach. [`solve_limb`] runs [`ikarus_solve::two_bone::solve`] with the
//! knee's pole where the copied knee points (off the hip–ankle line) and the hinge axis of the
//! joint's limit (a hinge, or an Euler limit with one open axis as MMD knees have), or else
//! the copied bend normal; while the leg is too straight to show a bend, the last clear one
//! carried by the thigh ([`LimbState`]), so the knee never flips; then it gives the foot back
//! its wanted model rotation and projects the three joints onto their limits.

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::two_bone::{self, Pole, TwoBoneInput, TwoBoneSettings};

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
    /// The ground keeps it above the floor too (the foot rises; toes do not bend yet).
    pub toe_tip: Option<(DVec3, f64)>,
    /// The mid joint's bend axis in the start joint's rest frame carried to model space at
    /// rest (the character's left for legs, up/down for arms): `start_rest_model⁻¹ · axis`.
    pub bend_in_start: DVec3,
    /// Where the mid joint points (knee forward, elbow back) in the start joint's reference
    /// frame.
    pub front_in_start: DVec3,
}

/// What one limb should do in one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimbGoal {
    /// Where the end joint goes (model space).
    pub end: DVec3,
    /// The end joint's model rotation afterwards.
    pub end_rotation: DQuat,
    /// Where the toes joint should be (a weighted ball contact), model space.
    pub ball: Option<DVec3>,
}

impl LimbGoal {
    /// The goal of a foot from the copied pose (`model`) and the heel and ball contacts'
    /// `(weight, anchor)`, lifted above the floor (`up` the model-space up, `floor` its height
    /// along `up`) when `ground` is set.
    pub fn for_foot(
        limb: &Limb,
        model: &ModelPose,
        heel: Option<(f64, DVec3)>,
        ball: Option<(f64, DVec3)>,
        up: DVec3,
        floor: f64,
        ground: bool,
    ) -> Self {
        let ankle = model.position(limb.end);
        let mut rotation = model.rotation(limb.end);
        let mut offset = limb.toes.map(|t| model.position(t) - ankle);
        // The toe tip from the ankle, and the foot turn applied to it below.
        let mut tip = limb
            .toes
            .zip(limb.toe_tip)
            .map(|(t, (local, _))| model.position(t) + model.rotation(t) * local - ankle);
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
                    tip = tip.map(|t| turn * t);
                    offset = Some(along * length);
                    goal = target - along * length;
                    ball_at = Some(target);
                }
            }
        }
        if ground {
            let mut lift = floor + limb.end_clearance - goal.dot(up);
            if let Some(o) = offset {
                lift = lift.max(floor + limb.toes_clearance - (goal + o).dot(up));
            }
            if let (Some(t), Some((_, clearance))) = (tip, limb.toe_tip) {
                lift = lift.max(floor + clearance - (goal + t).dot(up));
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
}

impl LimbState {
    /// The reference bend of `limb` (knee forward, the character's left as axis).
    pub fn new(limb: &Limb) -> Self {
        Self {
            pole_in_start: limb.front_in_start,
            axis_in_start: limb.bend_in_start,
        }
    }
}

/// A limb's bend is taken from its current pose when the mid joint is off the start–end line
/// by more than this fraction of the upper bone (else the last clear bend is kept): planted
/// nearly straight legs keep their own plane instead of turning to an older one (which turned
/// thighs by 40–60° a frame on noisy capture).
const CLEAR: f64 = 0.001;

/// Solves one limb so its end joint reaches `goal.end` and turns to `goal.end_rotation`;
/// `model` holds the FK of `pose` before and after; `state` carries the last clear bend.
/// Returns whether the end reached the goal (two-bone `reached`).
pub fn solve_limb(
    skeleton: &Skeleton,
    limb: &Limb,
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
    // The copied bend where it is clear (the mid joint off the start–end line by `CLEAR` of
    // the upper bone), else the last clear one carried by the start joint.
    let off_line = (m - s).reject_from(e - s);
    if off_line.length() > CLEAR * (m - s).length() {
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

/// How far (metres, ≥ 0) the limb's end joint, toes joint or toe tip is below the floor plus
/// its rest height in the FK `model`.
pub fn depth(limb: &Limb, model: &ModelPose, up: DVec3, floor: f64) -> f64 {
    let end = floor + limb.end_clearance - model.position(limb.end).dot(up);
    let toes = limb.toes.map_or(0.0, |t| {
        floor + limb.toes_clearance - model.position(t).dot(up)
    });
    let tip = limb
        .toes
        .zip(limb.toe_tip)
        .map_or(0.0, |(t, (local, clearance))| {
            floor + clearance - (model.position(t) + model.rotation(t) * local).dot(up)
        });
    end.max(toes).max(tip).max(0.0)
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
