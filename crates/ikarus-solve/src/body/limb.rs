//! The limbs of the full-body solve (see the [module docs](super)): each hand and foot by
//! the two-bone closed form, its swivel searched where a joint limit needs it, and the
//! clavicle's help for an arm past its reach.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, fk};

use super::descent::{REACH, Target};
use super::rig::Limb;
use crate::analytic::enforce_limits_into;
use crate::analytic::two_bone::{self, Pole, TwoBoneChain, TwoBoneOutput, TwoBoneSettings};

/// How far `local` (joint `j`'s local rotation) is past the joint's limit, radians: 0 where
/// the limit's `contains` (its cheap test first, 1e-9 rad of tolerance) holds it.
fn past_limit(skeleton: &Skeleton, j: JointId, local: DQuat) -> f64 {
    let delta = skeleton.rest(j).rotation.conjugate() * local;
    skeleton.limit(j).excess(delta)
}

/// The share of the upper arm's turn in the swivel's cost for an arm whose elbow takes the
/// forearm's roll ([`roll_axis`]): with the wrist's roll free, a near-straight arm would
/// otherwise spin about itself at no cost. The cost is the wrist's swing plus this share of
/// the upper arm's turn, a sum, so that a pose whose wrist has not turned is found exactly
/// (the wrist's term grows faster off it than the share can gain). Measured on the tracker
/// clips (6-point, ten BVH clips): 0.15–0.5 give 1.41–1.45 cm MPJPE; without the share
/// straight arms flip (turns of 70–180° between frames).
const UPPER_ARM_SHARE: f64 = 0.3;

/// The forearm's roll axis of an arm whose elbow is a free joint directly above the wrist
/// (a motion-capture skeleton's): the wrist's offset in the elbow's frame. Such an elbow
/// takes the hand's roll about the forearm, as the forearm's bones do (pronation), and the
/// wrist keeps only its swing. `None` for a leg (a knee hardly rolls: the foot's turn
/// comes from the hip, by the swivel), an elbow with a limit or a twist bone between.
fn roll_axis(skeleton: &Skeleton, limb: &Limb, pose: &LocalPose) -> Option<DVec3> {
    let [_, b, c] = limb.joints;
    let arm = matches!(
        limb.bones[1],
        HumanoidBone::LeftLowerArm | HumanoidBone::RightLowerArm
    );
    (arm && matches!(skeleton.limit(b), JointLimit::Free) && skeleton.parent(c) == Some(b))
        .then(|| pose[c].translation.try_normalize())
        .flatten()
}

/// The angle of `turn`'s swing off `axis` (its twist about `axis` left out), radians.
fn swing_angle(turn: DQuat, axis: DVec3) -> f64 {
    let along = turn.xyz().dot(axis);
    2.0 * (turn.w * turn.w + along * along).sqrt().min(1.0).acos()
}

/// `local`'s roll about `axis` off the rest rotation `rest`: the twist part of
/// `local · rest⁻¹` (a rotation in the parent's frame) about `axis`.
fn roll_off_rest(local: DQuat, rest: DQuat, axis: DVec3) -> DQuat {
    let off_rest = local * rest.conjugate();
    let along = off_rest.xyz().dot(axis);
    let roll = DQuat::from_xyzw(axis.x * along, axis.y * along, axis.z * along, off_rest.w);
    let length = roll.length();
    if length > 1e-12 && length.is_finite() {
        roll / length
    } else {
        // Half a turn about an axis across the forearm: no roll to take.
        DQuat::IDENTITY
    }
}

/// One limb onto its target by the two-bone closed form, the end turned to its goal
/// rotation, the three joints put onto their limits; whether the closed form reached.
#[allow(clippy::too_many_arguments)] // the solve's state, passed down once
pub(super) fn solve_limb(
    skeleton: &Skeleton,
    (limb, body_axes): (&Limb, (DVec3, DVec3)),
    target: &Target,
    pose: &mut LocalPose,
    model: &mut ModelPose,
    active: &mut Vec<String>,
) -> bool {
    let [a, b, c] = limb.joints;
    let mut reached = true;
    let mut checked = [false; 3];
    if let Some(goal) = target.position {
        if let Some(clavicle) = limb.clavicle {
            reach_with_clavicle(skeleton, limb, clavicle, goal, pose, model, active);
        }
        let (s, m, e) = (model.position(a), model.position(b), model.position(c));
        // The elbow or knee keeps the side of its current bend where the bend is clear;
        // a limb too straight to show one bends about its flexion axis as it is turned
        // now, so consecutive frames never flip.
        let rest_to_model =
            model.rotation(b) * pose[b].rotation.conjugate() * skeleton.rest(b).rotation;
        let clear = (m - s).reject_from(e - s).length() > 0.01 * m.distance(s);
        // A hinge bends about its axis; a free mid joint about the normal of its current
        // bend where it is clear (an axis off that normal would narrow the limb's reach),
        // else about the humanoid's convention in the body as it stands now (knees about
        // its left, the left elbow about its down, the right about its up).
        let bend_normal = (m - s).cross(e - m).try_normalize();
        let (up, left) = body_axes;
        let convention = match limb.bones[1] {
            HumanoidBone::LeftLowerArm => -up,
            HumanoidBone::RightLowerArm => up,
            _ => left,
        };
        let axis = match (skeleton.limit(b), clear, bend_normal) {
            (JointLimit::Hinge(_), _, _) => limb.axis,
            (_, true, Some(n)) => rest_to_model.conjugate() * n,
            // Straight: the preferred angle's axis, else the convention.
            _ => limb
                .preferred
                .unwrap_or_else(|| rest_to_model.conjugate() * convention),
        };
        let axis_model = rest_to_model * axis;
        let side = limb
            .bend_goal
            .map(|p| p - s)
            .or_else(|| clear.then(|| two_bone::recover_pole(s, m, e)).flatten())
            .unwrap_or_else(|| (goal - s).cross(axis_model));
        let pole = limb.bend_goal.map_or(Pole::Vector(side), Pole::Hint);
        if let Ok(chain) = TwoBoneChain::new(skeleton, a, b, c, axis) {
            // `model` is the FK of `pose` here (the body placed, the clavicle turned), so
            // the chain's input is read from it directly.
            let input = chain.input(skeleton, pose, model, goal, pole);
            // The swivel, the limb solved there when the search already has it, and whether
            // the search found the limb's joints inside their limits there.
            let (twist_angle, solved, inside) = match (target.orientation, limb.bend_goal) {
                (Some(rotation), None) => swivel(skeleton, limb, &input, rotation, pose, model),
                (None, None) => free_swivel(skeleton, limb, &input, pose, model.rotation(a)),
                _ => (0.0, None, [false; 3]),
            };
            checked = inside;
            let output = solved.unwrap_or_else(|| {
                let settings = TwoBoneSettings {
                    twist_angle,
                    ..TwoBoneSettings::default()
                };
                two_bone::solve(&input, &settings)
            });
            output.apply_to(&chain, pose);
            reached = output.reached;
            if target.orientation.is_some() {
                // The end's parent frame, for the end's goal rotation below.
                fk::update_joints(skeleton, pose, model, &limb.inner);
            }
        }
    }
    if let Some(goal) = target.orientation {
        let parent = skeleton
            .parent(c)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p));
        let local = (parent.conjugate() * goal).normalize();
        if local.is_finite() {
            pose[c].rotation = local;
            if let Some(axis) = roll_axis(skeleton, limb, pose) {
                // The elbow takes the hand's roll about the forearm: the wrist keeps its
                // swing off the rest, the hand its place and rotation (the roll turns the
                // forearm about the line through the wrist).
                let roll = roll_off_rest(local, skeleton.rest(c).rotation, axis);
                pose[b].rotation = (pose[b].rotation * roll).normalize();
                pose[c].rotation = (roll.conjugate() * local).normalize();
            }
        }
    }
    // The joints a search found inside their limits are not tested again.
    let mut joints = [a; 3];
    let mut n = 0;
    for (j, inside) in [a, b, c].into_iter().zip(checked) {
        if !inside {
            joints[n] = j;
            n += 1;
        }
    }
    enforce_limits_into(skeleton, &joints[..n], pose, active);
    fk::update_subtree(skeleton, pose, model, a);
    reached
}

/// The swivel (a two-bone `twist_angle`, radians about the start→goal line) for a limb whose
/// end also has a rotation goal: the one that leaves the end joint's local rotation nearest
/// to what it is now, and every joint of the limb inside its limit — a wrist or ankle keeps
/// its own turn and the elbow or knee swings to where it fits, as the 7-DOF limb's swivel
/// (seed 000, 7-DOF limb) does; 0 when nothing beats the current side.
pub(super) fn swivel(
    skeleton: &Skeleton,
    limb: &Limb,
    input: &two_bone::TwoBoneInput,
    rotation: DQuat,
    pose: &LocalPose,
    model: &ModelPose,
) -> (f64, Option<TwoBoneOutput>, [bool; 3]) {
    let [a, b, c] = limb.joints;
    let end_parent = skeleton.parent(c).unwrap_or(b);
    // Frames between the start and the mid joint, and the mid joint and the end's parent,
    // stay as they are.
    let start_to_mid = model.rotation(a).conjugate() * model.rotation(b);
    let mid_to_parent = model.rotation(b).conjugate() * model.rotation(end_parent);
    let violation = |j: JointId, local: DQuat| past_limit(skeleton, j, local);
    let roll = roll_axis(skeleton, limb, pose);
    // The limb solved at swivel 0; every other swivel turns it rigidly about the start→goal
    // line `n` (`twisted`), so the mid joint's local rotation, and how far it is past its
    // limit, are the same at every swivel.
    let at_zero = two_bone::solve(input, &TwoBoneSettings::default());
    let mid_past = violation(b, pose[b].rotation * at_zero.mid_correction);
    let start = model.rotation(a);
    let n = (input.target - input.start_joint.translation).normalize_or_zero();
    // At swivel φ the start joint's correction is `R(S⁻¹n, φ) C₀` (`twisted`) and the end's
    // parent frame `R(n, φ) P₀`, with `P₀` that frame at φ = 0; the end joint's local
    // rotation is then `P₀⁻¹ R(n, −φ) G`. Each swivel a search tries costs one sine and
    // cosine and four quaternion products.
    let parent_frame =
        start * at_zero.start_correction * start_to_mid * at_zero.mid_correction * mid_to_parent;
    let from_end_parent = parent_frame.conjugate();
    let turn_axis = start.conjugate() * n;
    // The start joint's correction and the end joint's local rotation at swivel φ.
    let at = |phi: f64| {
        if phi == 0.0 {
            let local = (from_end_parent * rotation).normalize();
            return (at_zero.start_correction, local);
        }
        let (sin, cos) = (0.5 * phi).sin_cos();
        let (m, k) = (turn_axis * sin, n * -sin);
        let correction =
            (DQuat::from_xyzw(m.x, m.y, m.z, cos) * at_zero.start_correction).normalize();
        let back = DQuat::from_xyzw(k.x, k.y, k.z, cos);
        (
            correction,
            (from_end_parent * (back * rotation)).normalize(),
        )
    };
    let output = |correction: DQuat| TwoBoneOutput {
        start_correction: correction,
        ..at_zero
    };
    // The wrist's or ankle's turn from its own, and how far the limb's joints are past their
    // limits (radians each).
    let parts = |twist_angle: f64| {
        let (correction, local) = at(twist_angle);
        let turn = match roll {
            // The elbow takes the roll (see `solve_limb`): the wrist's swing counts, plus a
            // share of the upper arm's turn.
            Some(axis) => {
                swing_angle(local * pose[c].rotation.conjugate(), axis)
                    + UPPER_ARM_SHARE * correction.angle_between(DQuat::IDENTITY)
            }
            None => local.angle_between(pose[c].rotation),
        };
        (
            turn,
            violation(a, pose[a].rotation * correction) + mid_past,
            violation(c, local),
        )
    };
    // Inside the limits first (a radian past a limit outweighs any turn), then the turn.
    let cost = |twist_angle: f64| {
        let (turn, limb, end) = parts(twist_angle);
        turn + 1000.0 * (limb + end)
    };
    // The swivel that turns the wrist or ankle least, in closed form: the end joint's local
    // rotation at swivel φ is `P₀⁻¹ R(−φ) G` (above); its angle from the current `C` is the
    // angle of `R(−φ) Q` with `Q = G C⁻¹ P₀⁻¹` (an angle is unchanged by conjugation),
    // whose scalar part `cos(φ/2) Q_w + sin(φ/2) n·Q_v` is largest at
    // `φ = 2 atan2(n·Q_v, Q_w)`. When every joint there is inside its limit (within the
    // limits' 1e-9 rad: a joint the closed form leaves on its limit measures ~1e-16 past
    // it), that is the answer (the usual case: one solve instead of a search), and the
    // limits need no test after it; the end joint, the likelier to be past, is tested
    // first.
    // (An arm whose elbow takes the roll measures its turn otherwise: it is searched.)
    let least_turn = roll.is_none().then(|| {
        let q = (rotation * pose[c].rotation.conjugate() * from_end_parent).normalize();
        let q = if q.w < 0.0 { -q } else { q };
        2.0 * n.dot(q.xyz()).atan2(q.w)
    });
    if let Some(least_turn) = least_turn.filter(|t| t.is_finite()) {
        let (correction, local) = at(least_turn);
        if violation(c, local) == 0.0
            && violation(a, pose[a].rotation * correction) + mid_past == 0.0
        {
            return (least_turn, Some(output(correction)), [true; 3]);
        }
    }
    // Else, from the current side first (tracking: the last frame's swivel is nearly
    // right), a pattern search down to 0.2°; the whole circle only when that ends in the
    // upper or mid joint past its limit or a wrist turned by more than half a radian. A goal
    // rotation past the end joint's own limit at every swivel (a sole tilted to a slope
    // further than the ankle bends) is met as nearly as the descent finds, without the
    // circle: there is nothing inside the limits for it to find.
    let descend = |best: (f64, f64), step: f64| pattern_search(&cost, best, step, 4e-3);
    let mut best = descend((cost(0.0), 0.0), 0.125);
    let (turn, limb, _) = parts(best.1);
    if turn > 0.5 || limb > 0.0 {
        let step = std::f64::consts::TAU / 24.0;
        let mut scan = best;
        for k in 0..24 {
            let angle = f64::from(k) * step - std::f64::consts::PI;
            let c = cost(angle);
            if c < scan.0 {
                scan = (c, angle);
            }
        }
        if scan.1 != best.1 {
            best = descend(scan, step / 2.0);
        }
    }
    (
        if best.1.is_finite() { best.1 } else { 0.0 },
        None,
        [false; 3],
    )
}

/// The swivel for a limb with a position goal only: 0 (the current side of the bend) when
/// the upper and mid joints stay inside their limits there; else, of 48 swivels round the
/// circle and then a finer look about the best, the one that leaves them least past their
/// limits, the nearest to 0 among equals — so that a reachable hand is reached inside the
/// limits rather than pulled off its goal by the limits' projection.
fn free_swivel(
    skeleton: &Skeleton,
    limb: &Limb,
    input: &two_bone::TwoBoneInput,
    pose: &LocalPose,
    model_start: DQuat,
) -> (f64, Option<TwoBoneOutput>, [bool; 3]) {
    let [a, b, _] = limb.joints;
    // As in `swivel`: the limb solved once, turned rigidly for every other swivel.
    let solved = two_bone::solve(input, &TwoBoneSettings::default());
    let mid_past = past_limit(skeleton, b, pose[b].rotation * solved.mid_correction);
    let past = |twist_angle: f64| {
        let out = twisted(input, &solved, model_start, twist_angle);
        (
            past_limit(skeleton, a, pose[a].rotation * out.start_correction) + mid_past,
            out,
        )
    };
    let (at_zero, out) = past(0.0);
    if at_zero == 0.0 {
        // The end joint keeps its rotation, which may be past its own limit.
        return (0.0, Some(out), [true, true, false]);
    }
    let cost = |angle: f64| past(angle).0 + 1e-3 * angle.abs();
    let step = std::f64::consts::TAU / 48.0;
    let mut best = (cost(0.0), 0.0);
    for k in 1..48 {
        let angle = f64::from(k) * step - std::f64::consts::PI;
        let c = cost(angle);
        if c < best.0 {
            best = (c, angle);
        }
    }
    let best = pattern_search(&cost, best, step / 2.0, 1e-3);
    if best.1.is_finite() && past(best.1).0 < at_zero {
        (best.1, None, [false; 3])
    } else {
        (0.0, Some(out), [false; 3])
    }
}

/// The two-bone solve at swivel `angle` from the one at 0 (`at_zero`): the swivel turns the
/// solved limb rigidly about the start→goal line (the two-bone solve turns its pole about that
/// line and aligns the limb's frame to it), so the start joint's model rotation turns by
/// `angle` about the line and the mid joint's correction stays (tested against the solve).
/// `start` is the start joint's model rotation before the solve. One quaternion product in
/// place of a solve for each swivel a search tries.
pub(super) fn twisted(
    input: &two_bone::TwoBoneInput,
    at_zero: &TwoBoneOutput,
    start: DQuat,
    angle: f64,
) -> TwoBoneOutput {
    if angle == 0.0 {
        return *at_zero;
    }
    // `S⁻¹ R(n, φ) S` is the turn about `S⁻¹ n`.
    let n = (input.target - input.start_joint.translation).normalize_or_zero();
    let turn = DQuat::from_axis_angle(start.conjugate() * n, angle);
    TwoBoneOutput {
        start_correction: (turn * at_zero.start_correction).normalize(),
        ..*at_zero
    }
}

/// A one-dimensional pattern search of `cost` from `best` (its cost, its argument): a step
/// each way, taken when it lowers the cost, else halved, until it is under `finest`. The
/// point a step leaves behind is the new point's neighbour on that side, its cost known.
fn pattern_search(
    cost: &impl Fn(f64) -> f64,
    mut best: (f64, f64),
    mut step: f64,
    finest: f64,
) -> (f64, f64) {
    // The cost one step to the left or right of `best`, when known.
    let mut known: (Option<f64>, Option<f64>) = (None, None);
    while step > finest {
        let left = known.0.unwrap_or_else(|| cost(best.1 - step));
        let right = known.1.unwrap_or_else(|| cost(best.1 + step));
        if left < best.0 && left <= right {
            known = (None, Some(best.0));
            best = (left, best.1 - step);
        } else if right < best.0 {
            known = (Some(best.0), None);
            best = (right, best.1 + step);
        } else {
            step *= 0.5;
            known = (None, None);
        }
    }
    best
}

/// An arm whose goal is beyond its reach: the clavicle turns its upper arm's start towards
/// the goal, by the least angle that brings the goal within reach (or as far as its limit
/// lets it).
fn reach_with_clavicle(
    skeleton: &Skeleton,
    limb: &Limb,
    clavicle: JointId,
    goal: DVec3,
    pose: &mut LocalPose,
    model: &mut ModelPose,
    active: &mut Vec<String>,
) {
    let [a, b, c] = limb.joints;
    let reach = REACH
        * (model.position(b).distance(model.position(a))
            + model.position(c).distance(model.position(b)));
    let pivot = model.position(clavicle);
    let arm = model.position(a) - pivot;
    if (goal - model.position(a)).length() <= reach {
        return;
    }
    let Some(axis) = arm.cross(goal - pivot).try_normalize() else {
        return;
    };
    let full = arm.angle_between(goal - pivot);
    let off = |angle: f64| (goal - (pivot + DQuat::from_axis_angle(axis, angle) * arm)).length();
    // The distance falls as the angle grows to `full`: bisect for where it meets the reach.
    let (mut lo, mut hi) = (0.0, full);
    if off(hi) > reach {
        lo = hi;
    } else {
        for _ in 0..40 {
            let mid = 0.5 * (lo + hi);
            if off(mid) > reach { lo = mid } else { hi = mid }
        }
        lo = hi;
    }
    let turn = DQuat::from_axis_angle(axis, lo);
    let parent = skeleton
        .parent(clavicle)
        .map_or(DQuat::IDENTITY, |p| model.rotation(p));
    let wanted = (turn * model.rotation(clavicle)).normalize();
    pose[clavicle].rotation = (parent.conjugate() * wanted).normalize();
    enforce_limits_into(skeleton, &[clavicle], pose, active);
    fk::update_subtree(skeleton, pose, model, clavicle);
}
