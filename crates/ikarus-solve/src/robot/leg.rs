//! Six-joint robot legs (seed 003, humanoid robot leg: its decomposition, in the robot's own
//! frames): three hip axes meeting in the hip point `H`, a knee, two ankle axes meeting in the
//! ankle point `A`.
//!
//! For a target `T` (`base_from_tip`) let `G = T · tip⁻¹` (`tip` the tip frame at `q = 0`),
//! so that `G = e₁e₂e₃ · e₄e₅e₆`. The hip turns fix `H`, so the hip seen from the foot,
//! `h = G⁻¹ · H`, satisfies `e₅e₆ · h = e₄⁻¹ · H`; the ankle turns fix `A`, so
//! `|h − A| = |e₄ · A − H|`:
//!
//! 1. **Knee** — the angle that puts the ankle at that distance from the hip (subproblem 3;
//!    the seed's law of cosines), two angles.
//! 2. **Ankle** — the two angles that turn `h − A` onto `e₄⁻¹ · H − A` (subproblem 2; the
//!    seed's ankle pitch and roll from the hip's position in the foot frame), two pairs.
//! 3. **Hip** — the rotation left, `G · (e₄e₅e₆)⁻¹`, split into the three hip angles
//!    (subproblems 2 and 1; the seed's yaw, roll and pitch), two triples.
//!
//! Up to eight solutions; the legal one nearest the seed is returned. The seed's leg is one
//! instance (yaw–roll–pitch hip, parallel pitch axes, foot kept level); nothing here needs the
//! pitch axes parallel or the links in one plane, so legs with offsets are solved exactly.
//!
//! Read from the tip ([`Screws::reversed`]), the same shape is a 6R arm with a spherical wrist
//! whose first two axes meet: [`RobotLeg::new_reversed`].

use glam::{DAffine3, DQuat, DVec3};

use super::subproblem::{Spherical, to_distance, two_axes};
use super::{Best, Screw, Screws, ShapeError, copy_array, fit_all};

/// A six-joint leg (or, reversed, a spherical-wrist arm) prepared for closed-form solves.
#[derive(Clone, Debug, PartialEq)]
pub struct RobotLeg {
    hip: DVec3,
    ankle: DVec3,
    hip_axes: Spherical,
    knee: Screw,
    ankle_axes: [DVec3; 2],
    /// `tip_from_base` at `q = 0`.
    tip_inverse: DAffine3,
    /// Limits in the solved chain's order (reversed for an arm).
    lower: [f64; 6],
    upper: [f64; 6],
    /// Limits in the caller's order.
    caller_lower: [f64; 6],
    caller_upper: [f64; 6],
    /// Solved on the reversed chain (a spherical-wrist arm).
    reversed: bool,
}

impl RobotLeg {
    /// Recognises a leg.
    ///
    /// # Errors
    /// A sentence naming the first condition that fails.
    pub fn new(screws: &Screws) -> Result<Self, ShapeError> {
        screws.expect_revolute(6)?;
        screws.not_parallel(&[0, 1, 2])?;
        screws.not_parallel(&[4, 5])?;
        let hip = screws
            .meet(&[0, 1, 2])
            .map_err(ShapeError::no_point("spherical hip"))?;
        let ankle = screws
            .meet(&[4, 5])
            .map_err(ShapeError::no_point("ankle point"))?;
        let knee = screws.joints[3];
        let normal = |p: DVec3| {
            let d = p - knee.point;
            (d - knee.axis.dot(d) * knee.axis).length()
        };
        if normal(hip) * normal(ankle) <= 1e-12 * screws.size * screws.size {
            return Err(ShapeError::Knee {
                joint: screws.names[3].clone(),
            });
        }
        let axes: Vec<DVec3> = screws.joints.iter().map(|j| j.axis).collect();
        Ok(Self {
            hip,
            ankle,
            hip_axes: Spherical::new([axes[0], axes[1], axes[2]]),
            knee,
            ankle_axes: [axes[4], axes[5]],
            tip_inverse: screws.tip.inverse(),
            lower: copy_array(&screws.lower),
            upper: copy_array(&screws.upper),
            caller_lower: copy_array(&screws.lower),
            caller_upper: copy_array(&screws.upper),
            reversed: false,
        })
    }

    /// Recognises a 6R arm with a spherical wrist (axes 4–6 meet) whose first two axes meet:
    /// the leg's shape read from the tip.
    ///
    /// # Errors
    /// A sentence naming the first condition that fails.
    pub fn new_reversed(screws: &Screws) -> Result<Self, ShapeError> {
        screws.expect_revolute(6)?;
        screws
            .meet(&[3, 4, 5])
            .map_err(ShapeError::no_point("spherical wrist"))?;
        let mut leg =
            Self::new(&screws.reversed()).map_err(|e| ShapeError::FromTip(Box::new(e)))?;
        leg.reversed = true;
        leg.caller_lower = copy_array(&screws.lower);
        leg.caller_upper = copy_array(&screws.upper);
        Ok(leg)
    }

    /// Every solution for the tip frame `position`, `rotation` (`base_from_tip`): up to
    /// eight joint vectors (angles moved by whole turns toward the limits and the seed, legal
    /// or not), and whether the target is within reach.
    pub fn solutions(
        &self,
        position: DVec3,
        rotation: DQuat,
        seed: &[f64; 6],
    ) -> (Vec<[f64; 6]>, bool) {
        let mut all = Vec::with_capacity(8);
        let reached = self.each(position, rotation, seed, |q, _, _| all.push(q));
        (all, reached)
    }

    /// The legal solution nearest `seed`, or the clamped least-violating one; and whether it
    /// reaches the target within the limits.
    pub(crate) fn solve(
        &self,
        position: DVec3,
        rotation: DQuat,
        seed: &[f64; 6],
    ) -> ([f64; 6], bool) {
        let mut best = Best::NONE;
        let reached = self.each(position, rotation, seed, |q, violation, distance| {
            best.offer(q, violation, distance);
        });
        let legal = best.is_legal();
        (
            best.clamped(&self.caller_lower, &self.caller_upper),
            reached && legal,
        )
    }

    /// Calls `visit(q, violation, distance to the seed)` for each solution (in the caller's
    /// joint order); returns whether the target is within reach.
    fn each(
        &self,
        position: DVec3,
        rotation: DQuat,
        seed: &[f64; 6],
        mut visit: impl FnMut([f64; 6], f64, f64),
    ) -> bool {
        let target = DAffine3::from_rotation_translation(rotation, position);
        let (target, seed_here) = if self.reversed {
            (target.inverse(), reverse(seed))
        } else {
            (target, *seed)
        };
        let g = target * self.tip_inverse;
        let h = g.inverse().transform_point3(self.hip);
        let distance = (h - self.ankle).length();
        let (knees, mut reached) = to_distance(
            self.knee.axis,
            self.knee.point,
            self.ankle,
            self.hip,
            distance,
            seed_here[3],
        );
        let (_, g_rotation, _) = g.to_scale_rotation_translation();
        for (k, &knee) in knees.iter().enumerate() {
            if k == 1 && knee == knees[0] {
                break;
            }
            let knee_rotation = DQuat::from_axis_angle(self.knee.axis, knee);
            let y = knee_rotation.conjugate() * (self.hip - self.knee.point) + self.knee.point;
            let (ankles, exact) = two_axes(
                self.ankle_axes[0],
                self.ankle_axes[1],
                h - self.ankle,
                y - self.ankle,
                [seed_here[4], seed_here[5]],
            );
            reached &= exact;
            for (a, [q5, q6]) in ankles.iter().enumerate() {
                if a == 1 && ankles[0] == ankles[1] {
                    break;
                }
                let lower_leg = knee_rotation
                    * DQuat::from_axis_angle(self.ankle_axes[0], *q5)
                    * DQuat::from_axis_angle(self.ankle_axes[1], *q6);
                let hips = self.hip_axes.split(
                    g_rotation * lower_leg.conjugate(),
                    [seed_here[0], seed_here[1], seed_here[2]],
                );
                for hip in hips {
                    let mut q = [hip[0], hip[1], hip[2], knee, *q5, *q6];
                    let (violation, distance) =
                        fit_all(&mut q, &self.lower, &self.upper, &seed_here);
                    visit(
                        if self.reversed { reverse(&q) } else { q },
                        violation,
                        distance,
                    );
                }
            }
        }
        reached
    }
}

/// The joint vector of the reversed chain: order reversed, angles negated (an involution).
fn reverse(q: &[f64; 6]) -> [f64; 6] {
    [-q[5], -q[4], -q[3], -q[2], -q[1], -q[0]]
}
