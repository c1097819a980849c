//! A foot on the ground, shared by the clip ([`ground_motion`](super::ground_motion)) and the
//! frame-by-frame ([`FrameGrounder`](super::FrameGrounder)) grounding: its sole points, and its
//! goal in one frame.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, JointLimit, ModelPose, Skeleton};

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

/// One foot: its joints, its toe tip, and its ankle's limit.
#[derive(Clone, Debug)]
pub(super) struct Foot {
    pub(super) ankle: JointId,
    pub(super) toes: Option<JointId>,
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
            Self {
                ankle,
                toes,
                tip,
                shin: skeleton.parent(ankle),
                rest: skeleton.rest(ankle).rotation,
                limit: skeleton.limit(ankle).clone(),
            }
        })
    }

    /// The foot's goal in one frame (model frames `model`): the ankle's position and the
    /// foot's rotation, turned towards the ground's normal under the ankle by the contact
    /// `weight` (at most `max_tilt`, and no further than the ankle's limit lets it turn
    /// against the shin as animated, when the animation has it inside), and lifted so that
    /// each sole point is as high above the ground under it as the animation had it above
    /// `floor`; and the lift. Where the ground has no sample under the ankle, the animated
    /// foot and no lift. Allocates nothing.
    pub(super) fn goal(
        &self,
        model: &ModelPose,
        weight: f64,
        (ground, floor): (&dyn Ground, f64),
        max_tilt: f64,
    ) -> (DVec3, DQuat, f64) {
        let ankle = model.position(self.ankle);
        let rotation = model.rotation(self.ankle);
        let Some((_, normal)) = ground.sample(ankle.x, ankle.z) else {
            return (ankle, rotation, 0.0);
        };
        let full = DQuat::from_rotation_arc(DVec3::Y, normal);
        let angle = full.angle_between(DQuat::IDENTITY);
        let limited = if angle > max_tilt && angle > 0.0 {
            DQuat::IDENTITY.slerp(full, max_tilt / angle)
        } else {
            full
        };
        let tilt = self.within_limit(
            model,
            DQuat::IDENTITY.slerp(limited, weight.clamp(0.0, 1.0)),
        );
        // The sole points in the animation (fixed size: no allocation per frame), and where
        // the turn takes them about the ankle.
        let mut points = [ankle; 3];
        let mut count = 1;
        if let Some(toes) = self.toes {
            points[1] = model.position(toes);
            count = 2;
            if let Some(tip) = self.tip {
                points[2] = model.position(toes) + model.rotation(toes) * tip;
                count = 3;
            }
        }
        let lift = points[..count]
            .iter()
            .filter_map(|&p| {
                let turned = ankle + tilt * (p - ankle);
                let (height, _) = ground.sample(turned.x, turned.z)?;
                Some(height + (p.y - floor) - turned.y)
            })
            .fold(f64::NEG_INFINITY, f64::max);
        let lift = if lift.is_finite() { lift } else { 0.0 };
        (ankle + DVec3::Y * lift, (tilt * rotation).normalize(), lift)
    }

    /// `tilt` (a model-space turn of the animated foot), shortened along its way so that
    /// the ankle stays inside its limit against the shin as animated; `tilt` itself where
    /// the animation already has the ankle past its limit (the turn is then not the cause),
    /// or the ankle has no parent.
    fn within_limit(&self, model: &ModelPose, tilt: DQuat) -> DQuat {
        let Some(shin) = self.shin else {
            return tilt;
        };
        let shin = model.rotation(shin);
        let rotation = model.rotation(self.ankle);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::Plane;
    use ikarus_core::fk;
    use ikarus_core::humanoid::builtin_humanoid;

    #[test]
    fn a_sole_on_a_side_slope_turns_no_further_than_the_ankle_bends() {
        // The built-in humanoid standing at rest on a plane sloping 28° sideways (about +Z):
        // the full turn towards the normal rolls the ankle 28° against the shin, past its
        // ±20° limit (checked); the goal turns it only as far as the limit, and lifts the
        // foot so that every sole point clears the slope by its animated height and the
        // highest requirement is met exactly.
        let skeleton = builtin_humanoid();
        let map = HumanoidMap::recognise(&skeleton);
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut model);
        let ankles =
            [HumanoidBone::LeftFoot, HumanoidBone::RightFoot].map(|b| map.joint(b).expect("feet"));
        let feet = Foot::both(&skeleton, &map, ankles, &model);
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
            let (position, rotation, lift) =
                foot.goal(&model, 1.0, (&ground, 0.0), 30f64.to_radians());
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
}
