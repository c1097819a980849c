//! A foot on the ground, shared by the clip ([`ground_motion`](super::ground_motion)) and the
//! frame-by-frame ([`FrameGrounder`](super::FrameGrounder)) grounding: its sole points, and its
//! goal in one frame.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, JointLimit, ModelPose, Skeleton};
use ikarus_solve::two_bone;

use super::Ground;
use crate::retarget::RetargetError;

/// The hips and the legs (upper leg, lower leg, foot; left, right) of a humanoid map, or
/// the first of them it lacks.
pub(super) fn hips_and_legs(
    map: &HumanoidMap,
) -> Result<(JointId, [[JointId; 3]; 2]), RetargetError> {
    let joint = |b: HumanoidBone| {
        map.joint(b).ok_or(RetargetError::MissingBone {
            side: "source",
            bone: b.vrm_name(),
        })
    };
    let leg = |[a, b, c]: [HumanoidBone; 3]| -> Result<[JointId; 3], RetargetError> {
        Ok([joint(a)?, joint(b)?, joint(c)?])
    };
    Ok((
        joint(HumanoidBone::Hips)?,
        [leg(HumanoidBone::LEGS[0])?, leg(HumanoidBone::LEGS[1])?],
    ))
}

/// How far (metres) a toe tip may sit below its place before the toes bend for it.
const TIP_SLACK: f64 = 1e-6;

/// Bisection steps for how far the toes may bend within a limit other than a hinge (whose
/// room is its range's): a quarter turn over 2¹², the bend found within 4e-4 rad of the
/// limit, on its inside (was 16 steps).
const LIMIT_STEPS: u32 = 12;

/// Bisection steps for the least bend that sets the tip on the ground: a quarter turn over
/// 2¹⁸, 6e-6 rad, the tip under a micrometre above where it belongs, never below (was 24).
const CLEAR_STEPS: u32 = 18;

/// A foot's goal in one frame: where the ankle goes, how the foot turns, how far it was
/// lifted, and the toes bent up over an edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct FootGoal {
    pub(super) position: DVec3,
    pub(super) rotation: DQuat,
    pub(super) lift: f64,
    /// The toes' local rotation, bent up so that the toe tip clears a step or a bump the
    /// rest of the sole does not reach; `None`: the toes as animated.
    pub(super) toes: Option<DQuat>,
}

/// The toes' joint: its parent, rest rotation and limit (how far it bends).
#[derive(Clone, Debug)]
struct Toes {
    parent: JointId,
    rest: DQuat,
    limit: JointLimit,
}

/// One foot: its joints, its toe tip, and its ankle's limit.
#[derive(Clone, Debug)]
pub(super) struct Foot {
    pub(super) ankle: JointId,
    pub(super) toes: Option<JointId>,
    /// The toes' joint, when it can bend (mapped, with a tip and a parent).
    bend: Option<Toes>,
    /// The toe tip in the toes' frame (the toes' first child, else half a foot ahead).
    pub(super) tip: Option<DVec3>,
    /// The ankle's parent (the shin), its rest rotation and its limit: the sole's turn
    /// towards the ground is kept within what the ankle bends.
    shin: Option<JointId>,
    rest: DQuat,
    limit: JointLimit,
}

impl Foot {
    /// Both feet of `skeleton` (left, right), their ankles `ankles`, with the toe tips read
    /// from `rest` (an upright reference pose's model frames).
    pub(super) fn both(
        skeleton: &Skeleton,
        map: &HumanoidMap,
        ankles: [JointId; 2],
        rest: &ModelPose,
    ) -> [Self; 2] {
        [0, 1].map(|s| {
            let ankle = ankles[s];
            let toes = map
                .joint(HumanoidBone::TOES[s])
                .filter(|&t| t != ankle && skeleton.is_ancestor_or_self(ankle, t));
            let tip = toes.map(|t| {
                let child = skeleton
                    .children(t)
                    .next()
                    .map(|c| rest.position(c))
                    .filter(|p| p.distance(rest.position(t)) > 1e-6);
                let at = child.unwrap_or_else(|| {
                    let foot = rest.position(t) - rest.position(ankle);
                    rest.position(t) + foot.reject_from(DVec3::Y) * 0.5
                });
                rest.rotation(t).conjugate() * (at - rest.position(t))
            });
            let bend = toes.zip(tip).and_then(|(t, _)| {
                Some(Toes {
                    parent: skeleton.parent(t)?,
                    rest: skeleton.rest(t).rotation,
                    limit: skeleton.limit(t).clone(),
                })
            });
            Self {
                ankle,
                toes,
                bend,
                tip,
                shin: skeleton.parent(ankle),
                rest: skeleton.rest(ankle).rotation,
                limit: skeleton.limit(ankle).clone(),
            }
        })
    }

    /// The foot's sole points in `model`: its ankle, ball and toe tip; `None` for a foot
    /// without toes or a tip.
    pub(super) fn sole(&self, model: &ModelPose) -> Option<[DVec3; 3]> {
        let (toes, tip) = (self.toes?, self.tip?);
        let ball = model.position(toes);
        Some([
            model.position(self.ankle),
            ball,
            ball + model.rotation(toes) * tip,
        ])
    }

    /// The shin's model rotation once the leg `[hip, knee, ankle]` (animated in `model`) is
    /// solved with its hip moved by `shift` and its ankle at `goal`, the knee on the side of
    /// its animated bend (as the full-body solve keeps it): the animated shin turned the
    /// least way to the new knee–ankle line. `None` for a leg too straight to show its bend's
    /// side, an ankle without a parent, or an ankle without a limit (where the shin does not
    /// matter).
    pub(super) fn predicted_shin(
        &self,
        model: &ModelPose,
        [a, b, c]: [JointId; 3],
        shift: DVec3,
        goal: DVec3,
    ) -> Option<DQuat> {
        let shin = self.shin.filter(|_| !self.limit.is_free())?;
        let (hip, knee, ankle) = (model.position(a), model.position(b), model.position(c));
        let (l1, l2) = (knee.distance(hip), ankle.distance(knee));
        let moved = hip + shift;
        let u = (goal - moved).try_normalize()?;
        let d = (goal - moved)
            .length()
            .clamp((l1 - l2).abs() + 1e-9, 0.9995 * (l1 + l2));
        // The side the knee bends to, square to the new hip–ankle line.
        let side = two_bone::recover_pole(hip, knee, ankle)?;
        let w = side.reject_from(u).try_normalize()?;
        let cos = ((l1 * l1 + d * d - l2 * l2) / (2.0 * l1 * d)).clamp(-1.0, 1.0);
        let new_knee = moved + (u * cos + w * (1.0 - cos * cos).sqrt()) * l1;
        let before = (ankle - knee).try_normalize()?;
        let after = (moved + u * d - new_knee).try_normalize()?;
        Some((DQuat::from_rotation_arc(before, after) * model.rotation(shin)).normalize())
    }

    /// The foot's goal in one frame (model frames `model`, the foot moved by `shift`): the
    /// ankle's position and the foot's rotation, turned towards the ground's normal under the
    /// ankle by the contact `weight` (at most `max_tilt`, and no further than the ankle's
    /// limit lets it turn against the shin's model rotation `shin` the solve will leave, or
    /// the animated one for `None`; a foot rotation the animation has past the limit against
    /// it is first turned the least way onto the limit), and lifted so that each sole point
    /// is as high above the ground under it as the animation had it above `floor`; and the
    /// lift. A toe tip that alone would go into the ground (over a step's edge, a bump) bends
    /// the toes up instead of lifting the foot, as far as the toes' limit lets them; the foot
    /// is lifted by what is left. Where the ground has no sample under the ankle, the
    /// animated foot and no lift. `shift` moves the foot horizontally off a step's edge (see
    /// [`off_edge`]). Allocates nothing.
    pub(super) fn goal_with(
        &self,
        (model, shift): (&ModelPose, DVec3),
        shin: Option<DQuat>,
        weight: f64,
        (ground, floor): (&dyn Ground, f64),
        max_tilt: f64,
    ) -> FootGoal {
        let ankle = model.position(self.ankle) + shift;
        let rotation = model.rotation(self.ankle);
        let Some((_, normal)) = ground.sample(ankle.x, ankle.z) else {
            return FootGoal {
                position: ankle,
                rotation,
                lift: 0.0,
                toes: None,
            };
        };
        let full = DQuat::from_rotation_arc(DVec3::Y, normal);
        let angle = full.angle_between(DQuat::IDENTITY);
        let limited = if angle > max_tilt && angle > 0.0 {
            DQuat::IDENTITY.slerp(full, max_tilt / angle)
        } else {
            full
        };
        // The foot's rotation before the turn to the ground: the animation's, or against a
        // shin turned otherwise the nearest the ankle's limit allows.
        let base = match shin {
            Some(shin) if self.shin.is_some() => {
                let delta = self.rest.conjugate() * (shin.conjugate() * rotation).normalize();
                if self.limit.contains(delta) {
                    DQuat::IDENTITY
                } else {
                    let legal = shin * self.rest * self.limit.project(delta);
                    (legal * rotation.conjugate()).normalize()
                }
            }
            _ => DQuat::IDENTITY,
        };
        let shin = shin.or_else(|| self.shin.map(|j| model.rotation(j)));
        let tilt = self.within_limit(
            shin,
            (base * rotation).normalize(),
            DQuat::IDENTITY.slerp(limited, weight.clamp(0.0, 1.0)),
        ) * base;
        // The sole points in the animation (fixed size: no allocation per frame): the ankle,
        // the ball of the foot, the toe tip.
        let mut points = [ankle; 3];
        let mut count = 1;
        if let Some(toes) = self.toes {
            points[1] = model.position(toes) + shift;
            count = 2;
            if let Some(tip) = self.tip {
                points[2] = points[1] + model.rotation(toes) * tip;
                count = 3;
            }
        }
        // How far each point must go up, turned about the ankle, to keep its height.
        let need = |p: DVec3| need(p, (ankle, tilt, 0.0), (ground, floor));
        // The tip is left to the toes when they can bend.
        let lifted = if self.bend.is_some() {
            count.min(2)
        } else {
            count
        };
        let lift = points[..lifted]
            .iter()
            .filter_map(|&p| need(p))
            .fold(f64::NEG_INFINITY, f64::max);
        let mut lift = if lift.is_finite() { lift } else { 0.0 };
        let mut toes = None;
        // (A tip within a micrometre of its place, rounding on flat ground, needs no bend.)
        if let (Some(bend), 3) = (&self.bend, count)
            && need(points[2]).is_some_and(|n| n > lift + TIP_SLACK)
        {
            let (local, rest) = self.bend_toes(bend, model, (tilt, lift), points, (ground, floor));
            toes = local;
            lift += rest;
        }
        FootGoal {
            position: ankle + DVec3::Y * lift,
            rotation: (tilt * rotation).normalize(),
            lift,
            toes,
        }
    }

    /// The toes bent up about the ball of the foot (`ankle`, `ball`, `tip`: animated positions,
    /// moved as the foot is; the foot turned by `tilt` about the ankle and lifted by `lift`;
    /// `model`: the animated frames, for rotations) until the tip is as high
    /// above the ground under it as the animation had it above `floor`, within the toes'
    /// limit: their local rotation then (`None` when they cannot bend that way), and how much
    /// higher the foot must still go for the tip.
    fn bend_toes(
        &self,
        bend: &Toes,
        model: &ModelPose,
        (tilt, lift): (DQuat, f64),
        [ankle, ball, tip]: [DVec3; 3],
        (ground, floor): (&dyn Ground, f64),
    ) -> (Option<DQuat>, f64) {
        let Some(joint) = self.toes else {
            return (None, 0.0);
        };
        let placed = |p: DVec3| placed(p, (ankle, tilt, lift));
        let (pivot, reach) = (placed(ball), placed(tip) - placed(ball));
        let parent = (tilt * model.rotation(bend.parent)).normalize();
        // Lifting the tip turns the toes about the horizontal axis across them; hinged toes
        // about their hinge (in the model, `parent · rest · axis`), the way that lifts the
        // tip: about any other axis a hinge leaves its axis at once, so on a foot turned to a
        // slope (the hinge no longer level) they could not bend at all. `sign`: +1 when the
        // bend raises the hinge's angle.
        let (axis, sign) = match &bend.limit {
            JointLimit::Hinge(h) => {
                let axis = (parent * bend.rest * h.axis).normalize();
                let lifts = axis.cross(reach).y;
                // A hinge along the toes or upright: bending does not lift the tip.
                if lifts.is_nan() || lifts.abs() <= 1e-6 * reach.length() {
                    return (None, 0.0);
                }
                (axis * lifts.signum(), lifts.signum())
            }
            _ => match reach.cross(DVec3::Y).try_normalize() {
                Some(axis) => (axis, 1.0),
                None => return (None, 0.0),
            },
        };
        // Below 0: the tip is that far under where it belongs, at a bend of `angle`.
        let short = |angle: f64| {
            let at = pivot + DQuat::from_axis_angle(axis, angle) * reach;
            ground
                .height(at.x, at.z)
                .map_or(0.0, |height| at.y - (height + (tip.y - floor)))
        };
        let turned = (tilt * model.rotation(joint)).normalize();
        let local = |angle: f64| {
            (parent.conjugate() * DQuat::from_axis_angle(axis, angle) * turned).normalize()
        };
        let inside = |angle: f64| bend.limit.contains(bend.rest.conjugate() * local(angle));
        // The most the toes bend: a quarter turn, or less by their limit (when the animation
        // has them inside it): for a hinge the room left in its range, by bisection for
        // other limits.
        let mut most = std::f64::consts::FRAC_PI_2;
        if let JointLimit::Hinge(h) = &bend.limit {
            if inside(0.0) {
                let now = h.angle(bend.rest.conjugate() * local(0.0));
                let room = if sign > 0.0 { h.max - now } else { now - h.min };
                most = most.min(room.max(0.0));
            }
        } else if inside(0.0) && !inside(most) {
            let (mut lo, mut hi) = (0.0, most);
            for _ in 0..LIMIT_STEPS {
                let mid = 0.5 * (lo + hi);
                if inside(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            most = lo;
        }
        if short(most) < 0.0 {
            // Bent as far as they go; the foot goes up by the rest.
            return ((most > 0.0).then(|| local(most)), -short(most));
        }
        // The least bend that clears, by bisection (its upper end, which clears).
        let (mut lo, mut hi) = (0.0, most);
        for _ in 0..CLEAR_STEPS {
            let mid = 0.5 * (lo + hi);
            if short(mid) >= 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        (Some(local(hi)), 0.0)
    }

    /// The solved foot (`solved`'s frames) checked against the ground: how far it must still
    /// go up for no sole point to be below where it belongs (the ground under the point plus
    /// the point's height above `floor` in the animation, `animated`'s frames, as
    /// [`goal_with`](Self::goal_with) places them), and the toes bent over an edge for the
    /// foot as it now stands (`None`: as animated). A foot the ankle's limit keeps from turning to its
    /// goal's rotation sits tilted: its lowest point must rest on the ground, not in it, and
    /// toes bent for the goal's rotation would miss. The solve must have met the foot's
    /// position goal (straight above the animated ankle moved by `shift`).
    pub(super) fn settle(
        &self,
        (animated, shift, solved): (&ModelPose, DVec3, &ModelPose),
        (ground, floor): (&dyn Ground, f64),
    ) -> (f64, Option<DQuat>) {
        let ankle = animated.position(self.ankle) + shift;
        let tilt =
            (solved.rotation(self.ankle) * animated.rotation(self.ankle).conjugate()).normalize();
        let lift = solved.position(self.ankle).y - ankle.y;
        let need = |p: DVec3| need(p, (ankle, tilt, lift), (ground, floor)).unwrap_or(0.0);
        let Some(toes) = self.toes else {
            return (need(ankle).max(0.0), None);
        };
        let ball = animated.position(toes) + shift;
        let mut raise = need(ankle).max(need(ball)).max(0.0);
        let Some(tip) = self.tip.map(|t| ball + animated.rotation(toes) * t) else {
            return (raise, None);
        };
        match &self.bend {
            Some(bend) if need(tip) > raise + TIP_SLACK => {
                let (bent, rest) = self.bend_toes(
                    bend,
                    animated,
                    (tilt, lift + raise),
                    [ankle, ball, tip],
                    (ground, floor),
                );
                raise += rest;
                (raise, bent)
            }
            Some(_) => (raise, None),
            None => {
                raise = raise.max(need(tip));
                (raise, None)
            }
        }
    }

    /// `tilt` (a model-space turn of the foot at `rotation`), shortened along its way so that
    /// the ankle stays inside its limit against the shin's model rotation `shin`; `tilt`
    /// itself where the foot is already past its limit (the turn is then not the cause), or
    /// the ankle has no parent (`shin` `None`).
    fn within_limit(&self, shin: Option<DQuat>, rotation: DQuat, tilt: DQuat) -> DQuat {
        let Some(shin) = shin else {
            return tilt;
        };
        let inside = |turn: DQuat| {
            let local = shin.conjugate() * (turn * rotation).normalize();
            self.limit.contains(self.rest.conjugate() * local)
        };
        if tilt == DQuat::IDENTITY || inside(tilt) || !inside(DQuat::IDENTITY) {
            return tilt;
        }
        // The largest share of the turn inside the limit, by bisection (to 1/1024).
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..10 {
            let mid = 0.5 * (lo + hi);
            if inside(DQuat::IDENTITY.slerp(tilt, mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        DQuat::IDENTITY.slerp(tilt, lo)
    }
}

/// How far (metres) the ground under the ball of a planted foot may be off the line from the
/// ground under its ankle to the ground under its toe tip before the foot counts as across a
/// step's edge and is moved off it ([`off_edge`]). The shared terrains: an 18 cm step puts
/// the ball 5–13 cm off the line, ±8 cm bumps under 1 cm.
const EDGE: f64 = 0.02;
/// The moves tried each way off a step's edge ([`off_edge`]): a twentieth of the foot's
/// length apart, up to its length.
const EDGE_STEPS: u32 = 20;

/// Whether no step's edge is under the sole `[ankle, ball, tip]` moved by `by` (see
/// [`off_edge`]); false where the ground has no sample under a point.
fn off_every_edge(sole: [DVec3; 3], by: DVec3, ground: &dyn Ground) -> bool {
    let [p0, p1, p2] = sole.map(|p| p + by);
    let heights = [p0, p1, p2].map(|p| ground.height(p.x, p.z));
    let [Some(h0), Some(h1), Some(h2)] = heights else {
        return false;
    };
    let span = (p2 - p0).reject_from(DVec3::Y);
    let t = ((p1 - p0).dot(span) / span.length_squared()).clamp(0.0, 1.0);
    let t = if t.is_finite() { t } else { 0.0 };
    (h1 - (h0 + t * (h2 - h0))).abs() <= EDGE
}

/// The least move of a foot along its length, in steps of a twentieth of the foot (ankle to
/// toe tip, across) up to its length either way, after which no step's edge is under its sole
/// in any of `soles` (its ankle, ball and toe tip in each frame it stands; an edge: the ground
/// under the ball more than [`EDGE`] off the line between the ground under the other two, as
/// a step between them puts it and a slope or a smooth bump does not). Zero when the sole is
/// off every edge already, no move takes it off, or the foot has no length.
pub(super) fn off_edge(soles: &[[DVec3; 3]], ground: &dyn Ground) -> DVec3 {
    let level = |by: DVec3| soles.iter().all(|&sole| off_every_edge(sole, by, ground));
    let Some(middle) = soles.get(soles.len() / 2) else {
        return DVec3::ZERO;
    };
    let along = (middle[2] - middle[0]).reject_from(DVec3::Y);
    let step = along.length() / f64::from(EDGE_STEPS);
    let Some(along) = along.try_normalize() else {
        return DVec3::ZERO;
    };
    if level(DVec3::ZERO) {
        return DVec3::ZERO;
    }
    (1..=EDGE_STEPS)
        .flat_map(|k| [-f64::from(k), f64::from(k)])
        .map(|k| along * (k * step))
        .find(|&by| level(by))
        .unwrap_or(DVec3::ZERO)
}

/// Where the animated foot's sole point `p` goes with the foot turned by `tilt` about the
/// animated `ankle` and lifted by `lift`.
fn placed(p: DVec3, (ankle, tilt, lift): (DVec3, DQuat, f64)) -> DVec3 {
    ankle + tilt * (p - ankle) + DVec3::Y * lift
}

/// How far the sole point `p`, placed so ([`placed`]), must still go up to be as high above
/// the ground under it as the animation had it above `floor`; `None` where the ground has no
/// sample there.
fn need(
    p: DVec3,
    placement: (DVec3, DQuat, f64),
    (ground, floor): (&dyn Ground, f64),
) -> Option<f64> {
    let at = placed(p, placement);
    let height = ground.height(at.x, at.z)?;
    Some(height + (p.y - floor) - at.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::Plane;
    use ikarus_core::fk;
    use ikarus_core::humanoid::builtin_humanoid;

    /// The built-in humanoid, its rest pose's model frames and its feet.
    fn humanoid_feet() -> (Skeleton, ModelPose, [Foot; 2]) {
        let skeleton = builtin_humanoid();
        let map = HumanoidMap::recognise(&skeleton);
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut model);
        let ankles =
            [HumanoidBone::LeftFoot, HumanoidBone::RightFoot].map(|b| map.joint(b).expect("feet"));
        let feet = Foot::both(&skeleton, &map, ankles, &model);
        (skeleton, model, feet)
    }

    #[test]
    fn a_sole_on_a_side_slope_turns_no_further_than_the_ankle_bends() {
        // The built-in humanoid standing at rest on a plane sloping 28° sideways (about +Z):
        // the full turn towards the normal rolls the ankle 28° against the shin, past its
        // ±20° limit (checked); the goal turns it only as far as the limit, and lifts the
        // foot so that every sole point clears the slope by its animated height and the
        // highest requirement is met exactly.
        let (_, model, feet) = humanoid_feet();
        let slope = 28f64.to_radians();
        let ground = Plane {
            point: DVec3::ZERO,
            normal: DVec3::new(-slope.sin(), slope.cos(), 0.0),
        };
        for foot in &feet {
            let shin = model.rotation(foot.shin.expect("a shin"));
            let local =
                |rotation: DQuat| foot.rest.conjugate() * (shin.conjugate() * rotation).normalize();
            let full = DQuat::from_rotation_arc(DVec3::Y, ground.normal.normalize());
            let unclamped = (full * model.rotation(foot.ankle)).normalize();
            assert!(
                !foot.limit.contains(local(unclamped)),
                "the full turn is past"
            );
            let FootGoal {
                position,
                rotation,
                lift,
                toes: bent,
            } = foot.goal_with(
                (&model, DVec3::ZERO),
                None,
                1.0,
                (&ground, 0.0),
                30f64.to_radians(),
            );
            assert_eq!(bent, None, "the tip clears a plane with the sole");
            assert!(foot.limit.contains(local(rotation)));
            // Turned as far as the limit lets it: a little more is past it.
            let tilt = (rotation * model.rotation(foot.ankle).conjugate()).normalize();
            let more = DQuat::IDENTITY.slerp(tilt, 1.01);
            assert!(
                !foot
                    .limit
                    .contains(local(more * model.rotation(foot.ankle)))
            );
            assert!(tilt.angle_between(DQuat::IDENTITY) > 15f64.to_radians());
            assert!((position - model.position(foot.ankle) - DVec3::Y * lift).length() < 1e-12);
            let ankle = model.position(foot.ankle);
            let toes = foot.toes.expect("toes");
            let points = [
                ankle,
                model.position(toes),
                model.position(toes) + model.rotation(toes) * foot.tip.expect("a tip"),
            ];
            let clearance = points
                .iter()
                .map(|&p| {
                    let turned = ankle + tilt * (p - ankle) + DVec3::Y * lift;
                    let (height, _) = ground.sample(turned.x, turned.z).expect("a plane");
                    turned.y - height - p.y
                })
                .fold(f64::INFINITY, f64::min);
            assert!(
                clearance.abs() < 1e-9,
                "the lowest sole point sits on: {clearance}"
            );
        }
    }

    #[test]
    fn toes_bend_up_over_a_step_the_rest_of_the_sole_does_not_reach() {
        // The built-in humanoid at rest on flat ground with a step of height `h` starting
        // between the ball of the foot and the toe tip: the ankle and ball stay down (no
        // lift), the toes bend up (about their hinge, within −50°) just enough for the tip
        // to sit on the step; a step higher than the toes can bend over lifts the foot by the
        // rest, the toes on their limit. Checked by FK of the bent toes.
        let (skeleton, model, feet) = humanoid_feet();
        let foot = &feet[0];
        let (toes, tip) = (foot.toes.expect("toes"), foot.tip.expect("a tip"));
        let ball = model.position(toes);
        let animated_tip = ball + model.rotation(toes) * tip;
        let edge = 0.5 * (ball.z + animated_tip.z);
        for (h, bends_fully) in [(0.03, false), (0.08, true)] {
            let step = crate::ground::GroundFn(move |_x: f64, z: f64| {
                Some((if z >= edge { h } else { 0.0 }, DVec3::Y))
            });
            let goal = foot.goal_with((&model, DVec3::ZERO), None, 1.0, (&step, 0.0), 0.5);
            let bent = goal.toes.expect("the toes bend");
            // The toes' frame: their parent as the goal turns it (not at all: flat), bent.
            let parent = skeleton.parent(toes).expect("a parent");
            let rotation = model.rotation(parent) * bent;
            let at = ball + DVec3::Y * goal.lift + rotation * tip;
            let wanted = h + animated_tip.y;
            assert!(at.z >= edge, "{h}: the tip left the step ({at})");
            let delta = skeleton.rest(toes).rotation.conjugate() * bent;
            assert!(
                skeleton.limit(toes).contains(delta),
                "{h}: past the toes' limit"
            );
            if bends_fully {
                assert!(
                    (at.y - wanted).abs() < 1e-9,
                    "{h}: tip at {} for {wanted}",
                    at.y
                );
                assert!(
                    goal.lift > 0.02,
                    "{h}: the foot goes up by the rest ({})",
                    goal.lift
                );
                let more = delta * DQuat::from_rotation_x(-1e-3);
                assert!(
                    !skeleton.limit(toes).contains(more),
                    "{h}: not on the limit"
                );
            } else {
                assert_eq!(goal.lift, 0.0, "{h}: the sole stays down");
                assert!(
                    at.y >= wanted && at.y - wanted < 1e-6,
                    "{h}: tip at {} for {wanted}",
                    at.y
                );
            }
        }
        // Flat ground: nothing bends, nothing lifts.
        let flat = crate::ground::Plane {
            point: DVec3::ZERO,
            normal: DVec3::Y,
        };
        let goal = foot.goal_with((&model, DVec3::ZERO), None, 1.0, (&flat, 0.0), 0.5);
        assert_eq!((goal.toes, goal.lift), (None, 0.0));
    }

    #[test]
    fn hinged_toes_bend_over_a_step_on_a_side_slope() {
        // As above, the step 3 cm high, but the ground sloping 8° sideways: the foot turns to
        // the slope (within the ankle's roll), so the toes' hinge is no longer level, and
        // they still bend up about it (before, bent about the level axis across the toes,
        // they left the hinge at once and the foot was lifted instead). Checked by FK of the
        // bent toes on the turned foot: the tip sits on the step, the toes on their hinge.
        let (skeleton, model, feet) = humanoid_feet();
        let slope = 8f64.to_radians().tan();
        for foot in &feet {
            let (toes, tip) = (foot.toes.expect("toes"), foot.tip.expect("a tip"));
            let ball = model.position(toes);
            let animated_tip = ball + model.rotation(toes) * tip;
            let edge = 0.5 * (ball.z + animated_tip.z);
            let height = move |x: f64, z: f64| x * slope + if z >= edge { 0.03 } else { 0.0 };
            let normal = DVec3::new(-slope, 1.0, 0.0).normalize();
            let ground =
                crate::ground::GroundFn(move |x: f64, z: f64| Some((height(x, z), normal)));
            let goal = foot.goal_with((&model, DVec3::ZERO), None, 1.0, (&ground, 0.0), 0.5);
            let tilt = (goal.rotation * model.rotation(foot.ankle).conjugate()).normalize();
            assert!(
                tilt.angle_between(DQuat::IDENTITY) > 7f64.to_radians(),
                "the foot turns to the slope"
            );
            let bent = goal.toes.expect("the toes bend on the slope too");
            let delta = skeleton.rest(toes).rotation.conjugate() * bent;
            let JointLimit::Hinge(hinge) = skeleton.limit(toes) else {
                panic!("the built-in humanoid's toes are hinged");
            };
            assert!(
                skeleton.limit(toes).contains(delta),
                "on the hinge, within its range"
            );
            assert!(
                hinge.angle(delta) < -0.05,
                "bent up: {}",
                hinge.angle(delta)
            );
            let ankle = model.position(foot.ankle);
            let placed_ball = ankle + tilt * (ball - ankle) + DVec3::Y * goal.lift;
            let at = placed_ball + (goal.rotation * bent) * tip;
            let wanted = height(at.x, at.z) + animated_tip.y;
            assert!(at.z >= edge, "the tip left the step ({at})");
            assert!(
                at.y >= wanted && at.y - wanted < 1e-6,
                "tip at {} for {wanted}",
                at.y
            );
        }
    }
}
