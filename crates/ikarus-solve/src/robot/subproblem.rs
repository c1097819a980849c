//! The Paden–Kahan subproblems the robot closed forms are built from (Paden 1985; Murray, Li and
//! Sastry, "A Mathematical Introduction to Robotic Manipulation", 1994, §3.3), on unit axes.
//!
//! Subproblems 1 and 2 work on vectors (axes through the origin: the caller subtracts the point
//! the axes share); subproblem 3 on points and an axis line. Angles are radians, right-handed
//! about the axis; everything is in one frame (the chain's base frame).

use glam::{DQuat, DVec3};

use crate::linalg::trig::atan2;

/// Below this, a vector's part normal to an axis has no direction (relative to the vectors'
/// lengths): the angle about the axis is free and the caller's hint is used.
const FREE: f64 = 1e-10;

/// Subproblem 1: the angle about unit `axis` that turns `from` onto `to` (their parts normal
/// to the axis). When either part is too short to have a direction the angle is free and
/// `hint` is returned.
#[allow(clippy::inline_always)] // small and hot: inlined into every closed form
#[inline(always)]
pub(crate) fn angle_about(axis: DVec3, from: DVec3, to: DVec3, hint: f64) -> f64 {
    let f = from - axis.dot(from) * axis;
    let t = to - axis.dot(to) * axis;
    let sin = axis.dot(f.cross(t));
    let cos = f.dot(t);
    let scale = from.length_squared() * to.length_squared();
    if sin * sin + cos * cos <= FREE * FREE * scale {
        hint
    } else {
        atan2(sin, cos)
    }
}

/// Subproblem 2: the angle pairs `(θ₁, θ₂)` with `R(a₁, θ₁) · R(a₂, θ₂) · p = q` for unit,
/// non-parallel `a₁`, `a₂` and `|p| = |q|`. Two pairs (equal when the circles touch; when
/// they miss by rounding or by an unreachable `q`, the pair that comes closest, with `false`).
/// `hint` fills an angle that is free (a vector along its axis).
#[allow(clippy::inline_always)] // hot: inlined into every closed form
#[inline(always)]
pub(crate) fn two_axes(
    a1: DVec3,
    a2: DVec3,
    p: DVec3,
    q: DVec3,
    hint: [f64; 2],
) -> ([[f64; 2]; 2], bool) {
    // R(a₂, θ₂) p = R(a₁, −θ₁) q = c, with a₂·c = a₂·p, a₁·c = a₁·q, |c| = |p|.
    let k = a1.dot(a2);
    let (a1q, a2p) = (a1.dot(q), a2.dot(p));
    let det = k * k - 1.0;
    let alpha = (k * a2p - a1q) / det;
    let beta = (k * a1q - a2p) / det;
    let normal = a1.cross(a2);
    let normal2 = normal.length_squared();
    let in_plane = alpha * alpha + beta * beta + 2.0 * alpha * beta * k;
    let gamma2 = (p.length_squared() - in_plane) / normal2;
    let exact = gamma2 >= -1e-12 * p.length_squared().max(1e-300);
    let gamma = gamma2.max(0.0).sqrt();
    let base = alpha * a1 + beta * a2;
    let mut out = [[0.0; 2]; 2];
    for (slot, sign) in out.iter_mut().zip([1.0, -1.0]) {
        let c = base + (sign * gamma) * normal;
        let theta2 = angle_about(a2, p, c, hint[1]);
        let theta1 = angle_about(a1, c, q, hint[0]);
        *slot = [theta1, theta2];
    }
    (out, exact)
}

/// Subproblem 3: the angles `θ` that rotate `point` about the line through `on_axis` along
/// unit `axis` to distance `distance` from `centre`. Two angles (equal at the extremes); when
/// no angle reaches the distance, the angle that comes closest (twice) and `false`.
#[allow(clippy::inline_always)] // hot: inlined into the leg's closed form
#[inline(always)]
pub(crate) fn to_distance(
    axis: DVec3,
    on_axis: DVec3,
    point: DVec3,
    centre: DVec3,
    distance: f64,
    hint: f64,
) -> ([f64; 2], bool) {
    let (u, v) = (point - on_axis, centre - on_axis);
    let along = axis.dot(u - v);
    let (up, vp) = (u - axis.dot(u) * axis, v - axis.dot(v) * axis);
    let theta0 = angle_about(axis, up, vp, hint);
    let (lu, lv) = (up.length(), vp.length());
    let denominator = 2.0 * lu * lv;
    if denominator <= FREE * FREE {
        // The point or the centre is on the axis: the distance does not depend on θ.
        return ([hint, hint], false);
    }
    let cos = (lu * lu + lv * lv + along * along - distance * distance) / denominator;
    let exact = (-1.0 - 1e-12..=1.0 + 1e-12).contains(&cos);
    let delta = cos.clamp(-1.0, 1.0).acos();
    ([theta0 + delta, theta0 - delta], exact)
}

/// The two angle triples `(θ₁, θ₂, θ₃)` with `R(a₁, θ₁) · R(a₂, θ₂) · R(a₃, θ₃) = rotation`
/// for unit axes with `a₁ ∦ a₂` and `a₂ ∦ a₃` (a three-hinge spherical joint). At a singular
/// rotation (`a₃` turned onto `a₁`) only `θ₁ + θ₃` is fixed; `θ₁` is then `hint[0]`.
#[allow(clippy::inline_always)] // hot: inlined into every closed form
#[inline(always)]
pub(crate) fn three_axes(axes: &[DVec3; 3], rotation: DQuat, hint: [f64; 3]) -> [[f64; 3]; 2] {
    let [a1, a2, a3] = *axes;
    let (pairs, _) = two_axes(a1, a2, a3, rotation * a3, [hint[0], hint[1]]);
    // Any direction normal to a₃ fixes θ₃.
    let normal = a3.cross(a2).normalize();
    let turned = rotation * normal;
    let mut out = [[0.0; 3]; 2];
    for (slot, [t1, t2]) in out.iter_mut().zip(pairs) {
        let first = DQuat::from_axis_angle(a1, t1) * DQuat::from_axis_angle(a2, t2);
        let rest = first.conjugate() * turned;
        *slot = [t1, t2, angle_about(a3, normal, rest, hint[2])];
    }
    out
}

/// Largest deviation (radians) from parallel first and third axes and a normal second one for
/// which [`Spherical`] takes the Euler split.
pub(crate) const EULER_TOLERANCE: f64 = 1e-9;

/// Three hinge axes meeting in a point (a spherical joint made of hinges), prepared for
/// splitting rotations into their three angles ([`three_axes`]). When the first and third
/// axes are parallel and the second normal to both (the iiwa's z–y–z shoulder and wrist) the
/// split is the classic Euler one read off the rotation's entries: three arc tangents for
/// both triples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Spherical {
    axes: [DVec3; 3],
    /// For parallel first and third axes normal to the second: the frame `(x, y, z)` with
    /// `z = a₁`, `y = a₂`, and the sign of `a₃` along `a₁`.
    euler: Option<([DVec3; 3], f64)>,
}

impl Spherical {
    /// Prepares the split for unit `axes` (`a₁ ∦ a₂`, `a₂ ∦ a₃`). The Euler split is taken
    /// when `a₁ ∥ a₃` and `a₂ ⟂ a₁` within [`EULER_TOLERANCE`] (URDFs write π/2 to 11 or 12
    /// digits); its angles are then off by at most about that much.
    pub(crate) fn new(axes: [DVec3; 3]) -> Self {
        let [a1, a2, a3] = axes;
        let euler = (a1.cross(a3).length() < EULER_TOLERANCE && a1.dot(a2).abs() < EULER_TOLERANCE)
            .then(|| {
                let y = (a2 - a1.dot(a2) * a1).normalize();
                ([y.cross(a1), y, a1], a1.dot(a3).signum())
            });
        Self { axes, euler }
    }

    /// The axes.
    pub(crate) fn axes(&self) -> &[DVec3; 3] {
        &self.axes
    }

    /// The two angle triples of `rotation` (see [`three_axes`]).
    #[allow(clippy::inline_always)] // hot: inlined into every closed form
    #[inline(always)]
    pub(crate) fn split(&self, rotation: DQuat, hint: [f64; 3]) -> [[f64; 3]; 2] {
        let Some(([ex, ey, ez], sign)) = self.euler else {
            return three_axes(&self.axes, rotation, hint);
        };
        // M = Rz(α) · Ry(β) · Rz(sign·γ) in the frame (x, y, z).
        let column = rotation * ez;
        let row = rotation.conjugate() * ez;
        let (m02, m12, m22) = (ex.dot(column), ey.dot(column), ez.dot(column));
        let (m20, m21) = (row.dot(ex), row.dot(ey));
        let sin_beta = (m02 * m02 + m12 * m12).sqrt();
        if sin_beta < 1e-9 {
            return three_axes(&self.axes, rotation, hint);
        }
        let beta = atan2(sin_beta, m22);
        let alpha = atan2(m12, m02);
        let gamma = sign * atan2(m21, -m20);
        let pi = std::f64::consts::PI;
        [[alpha, beta, gamma], [alpha + pi, -beta, gamma + pi]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Xorshift;

    fn unit(rng: &mut Xorshift) -> DVec3 {
        DVec3::new(rng.signed(), rng.signed(), rng.signed()).normalize()
    }

    #[test]
    fn subproblem_2_recovers_both_angles() {
        let mut rng = Xorshift(3);
        for _ in 0..1000 {
            let (a1, a2, p) = (unit(&mut rng), unit(&mut rng), unit(&mut rng) * 0.7);
            let (t1, t2) = (3.0 * rng.signed(), 3.0 * rng.signed());
            let q = DQuat::from_axis_angle(a1, t1) * DQuat::from_axis_angle(a2, t2) * p;
            let (pairs, exact) = two_axes(a1, a2, p, q, [0.0, 0.0]);
            assert!(exact);
            for [s1, s2] in pairs {
                let back = DQuat::from_axis_angle(a1, s1) * DQuat::from_axis_angle(a2, s2) * p;
                assert!((back - q).length() < 1e-9, "{back} vs {q}");
            }
        }
    }

    #[test]
    fn three_axes_rebuild_the_rotation() {
        let mut rng = Xorshift(5);
        for _ in 0..1000 {
            let axes = [unit(&mut rng), unit(&mut rng), unit(&mut rng)];
            let t = [3.0 * rng.signed(), 3.0 * rng.signed(), 3.0 * rng.signed()];
            let r = DQuat::from_axis_angle(axes[0], t[0])
                * DQuat::from_axis_angle(axes[1], t[1])
                * DQuat::from_axis_angle(axes[2], t[2]);
            let solutions = three_axes(&axes, r, [0.0; 3]);
            assert!(
                solutions
                    .iter()
                    .any(|s| s.iter().zip(&t).all(|(a, b)| (a - b).abs() < 1e-7)),
                "{solutions:?} vs {t:?}"
            );
            for s in solutions {
                let back = DQuat::from_axis_angle(axes[0], s[0])
                    * DQuat::from_axis_angle(axes[1], s[1])
                    * DQuat::from_axis_angle(axes[2], s[2]);
                assert!(back.dot(r).abs() > 1.0 - 1e-12, "{back} vs {r}");
            }
        }
    }

    #[test]
    fn euler_split_matches_the_general_one() {
        let mut rng = Xorshift(9);
        for sign in [1.0, -1.0] {
            let frame = DQuat::from_axis_angle(unit(&mut rng), 1.0);
            let axes = [
                frame * DVec3::Z,
                frame * DVec3::NEG_Y,
                frame * DVec3::Z * sign,
            ];
            let spherical = Spherical::new(axes);
            assert!(spherical.euler.is_some());
            for _ in 0..1000 {
                let t = [3.0 * rng.signed(), 3.0 * rng.signed(), 3.0 * rng.signed()];
                let r = DQuat::from_axis_angle(axes[0], t[0])
                    * DQuat::from_axis_angle(axes[1], t[1])
                    * DQuat::from_axis_angle(axes[2], t[2]);
                for s in spherical.split(r, [0.0; 3]) {
                    let back = DQuat::from_axis_angle(axes[0], s[0])
                        * DQuat::from_axis_angle(axes[1], s[1])
                        * DQuat::from_axis_angle(axes[2], s[2]);
                    assert!(back.dot(r).abs() > 1.0 - 1e-12, "{back} vs {r}");
                }
            }
        }
    }

    #[test]
    fn subproblem_3_reaches_the_distance() {
        let mut rng = Xorshift(7);
        for _ in 0..1000 {
            let axis = unit(&mut rng);
            let on_axis = unit(&mut rng);
            let point = unit(&mut rng) * 0.5;
            let centre = unit(&mut rng) * 0.8;
            let theta = 3.0 * rng.signed();
            let turned = |t: f64| DQuat::from_axis_angle(axis, t) * (point - on_axis) + on_axis;
            let distance = (turned(theta) - centre).length();
            let (angles, exact) = to_distance(axis, on_axis, point, centre, distance, 0.0);
            assert!(exact);
            for t in angles {
                assert!(((turned(t) - centre).length() - distance).abs() < 1e-9);
            }
        }
    }
}
