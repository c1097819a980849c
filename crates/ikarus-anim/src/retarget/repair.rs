//! IK repair of a retargeted frame: planted points held with the two-bone leg (and arm)
//! solver, the knee (elbow) kept on its side, the hips lowered when a leg cannot reach, and
//! the feet kept above the floor.
//!
//! Per leg and frame the goal of the foot joint comes from the copied pose and the contacts'
//! weights ([`LimbGoal::for_foot`]): a ball contact moves the ankle so the toes joint lands on
//! its anchor with the foot's copied orientation, a heel contact moves the ankle onto its
//! anchor, both together also turn the foot about the ankle so the ball points at its anchor;
//! each blends by its weight. The ground then lifts the goal so neither the ankle nor the
//! toes joint is below the floor plus its rest height (a foot never sinks: on a tiptoe the
//! whole foot rises). [`hip_drop`] says how far the hips must come down for both legs to
//! reach; [`solve_limb`] runs [`ikarus_solve::two_bone::solve`] with the knee's pole at its
//! copied position and the hinge axis of the joint's limit, or else the bend normal (the
//! character's left carried by the thigh when the leg is straight), then gives the foot back
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
    /// The mid joint's bend axis in the start joint's rest frame carried to model space at
    /// rest (the character's left for legs, up/down for arms): `start_rest_model⁻¹ · axis`.
    pub bend_in_start: DVec3,
}

/// What one limb should do in one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimbGoal {
    /// Where the end joint goes (model space).
    pub end: DVec3,
    /// The end joint's model rotation afterwards.
    pub end_rotation: DQuat,
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
        let toes = limb.toes.map(|t| model.position(t));
        let mut goal = ankle;
        let mut offset = toes.map(|t| t - ankle);
        if let (Some((wh, ah)), Some((wb, ab)), Some(o)) = (heel, ball, offset) {
            let turn =
                DQuat::from_rotation_arc(o.normalize_or_zero(), (ab - ah).normalize_or_zero());
            if turn.is_finite() {
                let turn = DQuat::IDENTITY.slerp(turn, wh.min(wb));
                rotation = (turn * rotation).normalize();
                offset = Some(turn * o);
            }
        }
        if let (Some((w, anchor)), Some(o)) = (ball, offset) {
            goal = goal.lerp(anchor - o, w);
        }
        if let Some((w, anchor)) = heel {
            goal = goal.lerp(anchor, w);
        }
        if ground {
            let mut lift = floor + limb.end_clearance - goal.dot(up);
            if let Some(o) = offset {
                lift = lift.max(floor + limb.toes_clearance - (goal + o).dot(up));
            }
            if lift > 0.0 {
                goal += up * lift;
            }
        }
        Self {
            end: goal,
            end_rotation: rotation,
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

/// Solves one limb so its end joint reaches `goal.end` and turns to `goal.end_rotation`;
/// `model` holds the FK of `pose` before and after. Returns whether the end reached the goal
/// (two-bone `reached`).
pub fn solve_limb(
    skeleton: &Skeleton,
    limb: &Limb,
    goal: &LimbGoal,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> bool {
    let start = model[limb.start];
    let mid = model[limb.mid];
    let end = model[limb.end];
    let (s, m, e) = (start.translation, mid.translation, end.translation);
    let mid_rotation = model.rotation(limb.mid);
    // The hinge axis in the mid joint's current local frame.
    let axis_model = match skeleton.limit(limb.mid) {
        JointLimit::Hinge(h) => {
            mid_rotation
                * (skeleton.rest(limb.mid).rotation.conjugate() * pose[limb.mid].rotation)
                    .conjugate()
                * h.axis
        }
        _ => {
            let carried = model.rotation(limb.start) * limb.bend_in_start;
            let normal = (m - s).cross(e - m);
            if normal.length() > 0.05 * (m - s).length() * (e - m).length() {
                let n = normal.normalize();
                if n.dot(carried) >= 0.0 { n } else { -n }
            } else {
                carried
            }
        }
    };
    let pole = if (m - s).cross(e - s).length_squared() > 1e-10 {
        Pole::Hint(m)
    } else {
        Pole::Vector(model.rotation(limb.start) * limb.bend_in_start.cross(DVec3::Y))
    };
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

/// How far (metres, ≥ 0) the limb's end or toes joint is below the floor plus its rest
/// height in the FK `model`.
pub fn depth(limb: &Limb, model: &ModelPose, up: DVec3, floor: f64) -> f64 {
    let end = floor + limb.end_clearance - model.position(limb.end).dot(up);
    let toes = limb.toes.map_or(0.0, |t| {
        floor + limb.toes_clearance - model.position(t).dot(up)
    });
    end.max(toes).max(0.0)
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
