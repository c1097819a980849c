//! Joint limits as model data.
//!
//! Every limit constrains a joint's rotation **relative to its rest rotation**, expressed in the
//! joint's rest frame: `delta = rest.rotation⁻¹ * local.rotation`. The rest pose is therefore
//! always legal when every range contains zero.
//!
//! This module holds the data and a "how far outside" measure ([`JointLimit::violation`]);
//! projection onto the legal set belongs to the shared limit mechanism of the solvers.

use std::f64::consts::PI;

use glam::{DQuat, DVec3};

/// A hinge: rotation only about `axis`, by an angle in `[min, max]` radians.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HingeLimit {
    /// Unit axis in the joint's rest frame.
    pub axis: DVec3,
    /// Smallest angle about `axis`, radians, in `[-π, max]`.
    pub min: f64,
    /// Largest angle about `axis`, radians, in `[min, π]`.
    pub max: f64,
}

/// A swing–twist limit: the rotation is split into a twist about `twist_axis` and a swing about
/// an axis perpendicular to it. The swing, written as a rotation vector `s = angle · axis`, has
/// components `s_u` about `swing_axis` and `s_v` about `twist_axis × swing_axis`; it must lie in
/// the ellipse whose four semi-axes are the per-direction limits (`swing_u.0 ≤ 0 ≤ swing_u.1`,
/// likewise `swing_v`), quadrant by quadrant. A circular cone is the special case of four equal
/// limits.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SwingTwistLimit {
    /// Unit twist axis in the joint's rest frame (usually along the bone).
    pub twist_axis: DVec3,
    /// Unit axis perpendicular to `twist_axis` that fixes the ellipse's orientation.
    pub swing_axis: DVec3,
    /// `(min, max)` swing angle about `swing_axis`, radians.
    pub swing_u: (f64, f64),
    /// `(min, max)` swing angle about `twist_axis × swing_axis`, radians.
    pub swing_v: (f64, f64),
    /// `(min, max)` twist angle about `twist_axis`, radians.
    pub twist: (f64, f64),
}

/// The legal rotations of one joint, relative to its rest rotation (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
#[non_exhaustive]
pub enum JointLimit {
    /// Any rotation.
    #[default]
    Free,
    /// Only the rest rotation.
    Locked,
    /// One rotational degree of freedom (elbows, knees).
    Hinge(HingeLimit),
    /// Swing cone/ellipse plus twist range (shoulders, hips, spine).
    SwingTwist(SwingTwistLimit),
}

impl JointLimit {
    /// True for [`JointLimit::Free`].
    pub fn is_free(&self) -> bool {
        matches!(self, Self::Free)
    }

    /// Checks that axes are finite unit vectors, perpendicular where required, and that ranges
    /// are ordered, contain the rest rotation's zero where required, and stay within `[-π, π]`.
    ///
    /// # Errors
    /// A sentence saying what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Self::Free | Self::Locked => Ok(()),
            Self::Hinge(h) => {
                check_unit("hinge axis", h.axis)?;
                check_range("hinge range", (h.min, h.max), false)
            }
            Self::SwingTwist(s) => {
                check_unit("twist axis", s.twist_axis)?;
                check_unit("swing axis", s.swing_axis)?;
                if s.twist_axis.dot(s.swing_axis).abs() > 1e-6 {
                    return Err("swing axis must be perpendicular to the twist axis".into());
                }
                check_range("swing_u range", s.swing_u, true)?;
                check_range("swing_v range", s.swing_v, true)?;
                check_range("twist range", s.twist, false)
            }
        }
    }

    /// How far `delta` (the rotation relative to rest, see the module docs) lies outside the
    /// limit, in radians; 0 when legal.
    pub fn violation(&self, delta: DQuat) -> f64 {
        match self {
            Self::Free => 0.0,
            Self::Locked => rotation_angle(delta),
            Self::Hinge(h) => {
                let (swing, twist) = swing_twist(delta, h.axis);
                let angle = signed_angle_about(twist, h.axis);
                rotation_angle(swing) + outside(angle, h.min, h.max)
            }
            Self::SwingTwist(s) => {
                let (swing, twist) = swing_twist(delta, s.twist_axis);
                let twist_angle = signed_angle_about(twist, s.twist_axis);
                let v_axis = s.twist_axis.cross(s.swing_axis);
                let rotvec = swing.to_scaled_axis();
                let (su, sv) = (rotvec.dot(s.swing_axis), rotvec.dot(v_axis));
                let a = if su >= 0.0 { s.swing_u.1 } else { -s.swing_u.0 };
                let b = if sv >= 0.0 { s.swing_v.1 } else { -s.swing_v.0 };
                let radius = (su * su + sv * sv).sqrt();
                let swing_excess = if radius == 0.0 {
                    0.0
                } else if a <= 0.0 || b <= 0.0 {
                    // Degenerate ellipse: only the axis with a positive limit is open.
                    let along = if a <= 0.0 { su.abs() } else { sv.abs() };
                    let limit = if a <= 0.0 { b.max(0.0) } else { a };
                    along + outside((su * su + sv * sv - along * along).sqrt(), 0.0, limit)
                } else {
                    // Ellipse radius in the swing's direction.
                    let (c, sn) = (su / radius, sv / radius);
                    let limit = a * b / ((b * c).powi(2) + (a * sn).powi(2)).sqrt();
                    (radius - limit).max(0.0)
                };
                swing_excess + outside(twist_angle, s.twist.0, s.twist.1)
            }
        }
    }
}

fn check_unit(what: &str, axis: DVec3) -> Result<(), String> {
    if !axis.is_finite() || (axis.length() - 1.0).abs() > 1e-6 {
        return Err(format!("{what} {axis} must be a finite unit vector"));
    }
    Ok(())
}

fn check_range(what: &str, (min, max): (f64, f64), must_contain_zero: bool) -> Result<(), String> {
    if !(min.is_finite() && max.is_finite() && min <= max && min >= -PI && max <= PI) {
        return Err(format!(
            "{what} ({min}, {max}) must be finite, ordered and inside [-pi, pi]"
        ));
    }
    if must_contain_zero && !(min <= 0.0 && max >= 0.0) {
        return Err(format!("{what} ({min}, {max}) must contain 0"));
    }
    Ok(())
}

fn outside(value: f64, min: f64, max: f64) -> f64 {
    (min - value).max(value - max).max(0.0)
}

/// Angle of a rotation in `[0, π]`.
fn rotation_angle(q: DQuat) -> f64 {
    2.0 * q.xyz().length().atan2(q.w.abs())
}

/// Signed angle in `(-π, π]` of a rotation known to be about `axis`.
fn signed_angle_about(q: DQuat, axis: DVec3) -> f64 {
    let s = q.xyz().dot(axis);
    let mut angle = 2.0 * s.atan2(q.w);
    if angle > PI {
        angle -= 2.0 * PI;
    } else if angle <= -PI {
        angle += 2.0 * PI;
    }
    angle
}

/// Splits `q` into `swing * twist`, where `twist` rotates about the unit `axis` and `swing`
/// about an axis perpendicular to it. When `q` turns `axis` by exactly π the twist is ambiguous
/// and identity is returned for it.
pub fn swing_twist(q: DQuat, axis: DVec3) -> (DQuat, DQuat) {
    let projection = axis * q.xyz().dot(axis);
    let twist = DQuat::from_xyzw(projection.x, projection.y, projection.z, q.w);
    let length = twist.length();
    let twist = if length < 1e-12 {
        DQuat::IDENTITY
    } else {
        twist / length
    };
    (q * twist.conjugate(), twist)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hinge_violation_measures_off_axis_and_out_of_range() {
        let hinge = JointLimit::Hinge(HingeLimit {
            axis: DVec3::X,
            min: 0.0,
            max: 2.0,
        });
        assert_eq!(hinge.violation(DQuat::from_rotation_x(1.0)), 0.0);
        assert!((hinge.violation(DQuat::from_rotation_x(2.5)) - 0.5).abs() < 1e-12);
        assert!((hinge.violation(DQuat::from_rotation_x(-0.25)) - 0.25).abs() < 1e-12);
        assert!((hinge.violation(DQuat::from_rotation_y(0.3)) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn swing_twist_ellipse_quadrants() {
        let limit = JointLimit::SwingTwist(SwingTwistLimit {
            twist_axis: DVec3::Y,
            swing_axis: DVec3::X,
            swing_u: (-0.2, 0.8),
            swing_v: (-0.4, 0.4),
            twist: (-0.1, 0.1),
        });
        assert!(limit.validate().is_ok());
        assert_eq!(limit.violation(DQuat::from_rotation_x(0.7)), 0.0);
        assert!((limit.violation(DQuat::from_rotation_x(-0.5)) - 0.3).abs() < 1e-12);
        // v = Y × X = -Z.
        assert!((limit.violation(DQuat::from_rotation_z(0.5)) - 0.1).abs() < 1e-12);
        assert!((limit.violation(DQuat::from_rotation_y(0.3)) - 0.2).abs() < 1e-12);
        let (swing, twist) = swing_twist(
            DQuat::from_rotation_x(0.3) * DQuat::from_rotation_y(0.05),
            DVec3::Y,
        );
        assert!((signed_angle_about(twist, DVec3::Y) - 0.05).abs() < 1e-12);
        assert!((swing.to_scaled_axis() - DVec3::X * 0.3).length() < 1e-12);
    }

    #[test]
    fn validation_rejects_bad_limits() {
        let bad_axis = JointLimit::Hinge(HingeLimit {
            axis: DVec3::new(1.0, 1.0, 0.0),
            min: 0.0,
            max: 1.0,
        });
        assert!(bad_axis.validate().is_err());
        let reversed = JointLimit::Hinge(HingeLimit {
            axis: DVec3::X,
            min: 1.0,
            max: 0.0,
        });
        assert!(reversed.validate().is_err());
        let nan = JointLimit::Hinge(HingeLimit {
            axis: DVec3::X,
            min: f64::NAN,
            max: 0.0,
        });
        assert!(nan.validate().is_err());
    }
}
