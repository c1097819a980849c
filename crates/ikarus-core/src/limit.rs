//! Joint limits as model data, with one projection onto the legal set.
//!
//! Every limit constrains a joint's rotation **relative to its rest rotation**, expressed in the
//! joint's rest frame: `delta = rest.rotation⁻¹ * local.rotation`. The rest pose is therefore
//! always legal when every range contains zero.
//!
//! Each limit answers three questions about a `delta`:
//! - [`JointLimit::contains`]: is it legal?
//! - [`JointLimit::project`]: the legal rotation the solvers use instead (idempotent, identity
//!   on legal rotations, continuous across ±180°; see each variant for the exact rule);
//! - [`JointLimit::violation`]: how far outside, in radians.
//!
//! [`JointLimit::unlocked_part`] removes from a rotation the directions a joint can never move
//! in; seed 001, MMD CCD, uses it to stop residual rotations from oscillating.

use std::f64::consts::{FRAC_PI_2, PI, TAU};

use glam::{DQuat, DVec3, EulerRot};

/// Angles within this many radians of a bound count as inside.
const ANGLE_TOLERANCE: f64 = 1e-9;

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

impl HingeLimit {
    /// The angle of `delta` about the axis in `(-π, π]` (the twist part; any swing is
    /// ignored).
    pub fn angle(&self, delta: DQuat) -> f64 {
        // The twist part is (axis · (axis · v), w) up to a positive scale, which atan2 ignores.
        wrap_angle(2.0 * delta.xyz().dot(self.axis).atan2(delta.w))
    }

    /// True when the range covers the whole circle (a continuous joint).
    pub fn is_full_circle(&self) -> bool {
        self.max - self.min >= TAU - ANGLE_TOLERANCE
    }
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

/// An intrinsic Tait–Bryan rotation order about the rest frame's axes: `Xyz` means
/// `delta = Rx(a) · Ry(b) · Rz(c)` (column vectors), `a`, `b`, `c` being the first, second and
/// third angle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum EulerOrder {
    /// `Rx · Ry · Rz`.
    Xyz,
    /// `Rx · Rz · Ry`.
    Xzy,
    /// `Ry · Rx · Rz`.
    Yxz,
    /// `Ry · Rz · Rx`.
    Yzx,
    /// `Rz · Rx · Ry`.
    Zxy,
    /// `Rz · Ry · Rx`.
    Zyx,
}

impl EulerOrder {
    /// The same order as a glam [`EulerRot`] (intrinsic).
    pub fn to_euler_rot(self) -> EulerRot {
        match self {
            Self::Xyz => EulerRot::XYZ,
            Self::Xzy => EulerRot::XZY,
            Self::Yxz => EulerRot::YXZ,
            Self::Yzx => EulerRot::YZX,
            Self::Zxy => EulerRot::ZXY,
            Self::Zyx => EulerRot::ZYX,
        }
    }

    /// The rest-frame axis index (0 = X, 1 = Y, 2 = Z) of the first, second and third angle.
    pub fn axes(self) -> [usize; 3] {
        match self {
            Self::Xyz => [0, 1, 2],
            Self::Xzy => [0, 2, 1],
            Self::Yxz => [1, 0, 2],
            Self::Yzx => [1, 2, 0],
            Self::Zxy => [2, 0, 1],
            Self::Zyx => [2, 1, 0],
        }
    }
}

/// Per-axis Euler ranges (seed 002, Euler limits): the rotation is legal when **either** of its two
/// Euler decompositions in `order` lies inside the ranges. A rotation has the decomposition
/// `(a, b, c)` with the middle angle `b` in `[-π/2, π/2]` and the equivalent
/// `(a + π, π − b, c + π)`; at the fold `b = ±π/2` only `a ± c` is determined, and any split
/// inside the ranges counts (the seed's cases 3 and 4).
///
/// Projection clamps each decomposition's angles to their ranges (to the nearer bound on the
/// circle) and keeps the candidate closest to the input rotation.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EulerLimit {
    /// The rotation order the angles refer to.
    pub order: EulerOrder,
    /// Smallest first, second and third angle, radians, each in `[-π, π]`.
    pub min: [f64; 3],
    /// Largest first, second and third angle, radians, each in `[min, π]`.
    pub max: [f64; 3],
}

/// The MMD (Miku Miku Dance) IK angle limit (seed 001, MMD CCD), per rest-frame axis: the
/// quaternion's `x`, `y`, `z` components (taken with `w ≥ 0`) must lie within `[sin(min/2),
/// sin(max/2)]` of the axis.
///
/// Projection clamps those three components and recomputes `w ≥ 0` so the quaternion stays
/// unit (the seed renormalises; recomputing `w` keeps a clamped component exactly at its bound,
/// which makes the projection idempotent). Both signs of the quaternion are tried and the
/// result closer to the input wins, so the projection does not jump at 180°.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MmdLimit {
    /// Lower angle about the rest frame's X, Y and Z axes, radians, each in `[-π, π]`.
    pub min: DVec3,
    /// Upper angle about X, Y and Z, radians, each in `[min, π]`.
    pub max: DVec3,
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
    /// One rotational degree of freedom (elbows, knees). Projection keeps the twist about the
    /// axis (the nearest rotation about it) and clamps its angle.
    Hinge(HingeLimit),
    /// Swing cone/ellipse plus twist range (shoulders, hips, spine). Projection clamps the
    /// twist angle and scales the swing vector radially onto the ellipse.
    SwingTwist(SwingTwistLimit),
    /// Per-axis Euler ranges accepting both decompositions (seed 002, Euler limits).
    Euler(EulerLimit),
    /// MMD quaternion-component limits (seed 001, MMD CCD).
    Mmd(MmdLimit),
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
    /// [`LimitError`] naming the axis or range that is wrong.
    pub fn validate(&self) -> Result<(), LimitError> {
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
                    return Err(LimitError::NotPerpendicular);
                }
                check_range("swing_u range", s.swing_u, true)?;
                check_range("swing_v range", s.swing_v, true)?;
                check_range("twist range", s.twist, false)
            }
            Self::Euler(e) => {
                for (i, name) in [
                    "first Euler range",
                    "second Euler range",
                    "third Euler range",
                ]
                .into_iter()
                .enumerate()
                {
                    check_range(name, (e.min[i], e.max[i]), false)?;
                }
                Ok(())
            }
            Self::Mmd(m) => {
                for (i, name) in ["MMD x range", "MMD y range", "MMD z range"]
                    .into_iter()
                    .enumerate()
                {
                    check_range(name, (m.min[i], m.max[i]), false)?;
                }
                let (lo, hi) = mmd_bounds(m);
                if DVec3::ZERO.clamp(lo, hi).length_squared() > 1.0 {
                    return Err(LimitError::EmptyMmd);
                }
                Ok(())
            }
        }
    }

    /// True when `delta` (the rotation relative to rest, see the module docs) is legal, within
    /// 1e-9 rad.
    pub fn contains(&self, delta: DQuat) -> bool {
        match self {
            Self::Euler(e) => euler_contains(e, delta),
            Self::Mmd(m) => mmd_contains(m, delta) || mmd_contains(m, -delta),
            Self::Hinge(h) if hinge_clearly_inside(h, delta) => true,
            Self::SwingTwist(s) if swing_twist_clearly_inside(s, delta) => true,
            _ => self.violation(delta) <= ANGLE_TOLERANCE,
        }
    }

    /// [`violation`](Self::violation), but 0 wherever [`contains`](Self::contains) holds
    /// (within its 1e-9 rad), and by the cheap inside test first: a joint clearly inside its
    /// limit costs no exact decomposition, and one outside costs one (not the two of
    /// `contains` then `violation`).
    pub fn excess(&self, delta: DQuat) -> f64 {
        match self {
            Self::Hinge(h) if hinge_clearly_inside(h, delta) => 0.0,
            Self::SwingTwist(s) if swing_twist_clearly_inside(s, delta) => 0.0,
            Self::Free | Self::Locked | Self::Hinge(_) | Self::SwingTwist(_) => {
                let v = self.violation(delta);
                if v <= ANGLE_TOLERANCE { 0.0 } else { v }
            }
            Self::Euler(_) | Self::Mmd(_) => self.violation(delta),
        }
    }

    /// How far `delta` (the rotation relative to rest, see the module docs) lies outside the
    /// limit, in radians; 0 when legal.
    ///
    /// Hinge and swing–twist limits measure the excess angle per component (off-axis swing plus
    /// range excess); Euler and MMD limits measure the angle from `delta` to its projection.
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
                let (su, sv) = swing_components(s, swing);
                let (pu, pv) = project_swing(s, su, sv);
                let swing_excess = (su - pu).hypot(sv - pv);
                swing_excess + outside(twist_angle, s.twist.0, s.twist.1)
            }
            Self::Euler(_) | Self::Mmd(_) => {
                if self.contains(delta) {
                    0.0
                } else {
                    angle_between(delta, self.project(delta))
                }
            }
        }
    }

    /// The legal rotation used in place of `delta` (see each variant for the rule). Returns
    /// `delta` itself when it is legal, so projecting twice changes nothing.
    pub fn project(&self, delta: DQuat) -> DQuat {
        match self {
            Self::Free => delta,
            Self::Locked => DQuat::IDENTITY,
            Self::Hinge(h) => {
                let (swing, twist) = swing_twist(delta, h.axis);
                let angle = signed_angle_about(twist, h.axis);
                let clamped = clamp_circular(angle, h.min, h.max);
                // Legal: on the axis (swing below the tolerance angle) and inside the range.
                let half = 0.5 * ANGLE_TOLERANCE;
                if clamped == angle && swing.xyz().length_squared() <= half * half {
                    return delta;
                }
                DQuat::from_axis_angle(h.axis, clamped)
            }
            Self::SwingTwist(s) => {
                // One decomposition serves the legality test (that of `contains`) and the
                // projection.
                let (swing, twist) = swing_twist(delta, s.twist_axis);
                let angle = signed_angle_about(twist, s.twist_axis);
                let (su, sv) = swing_components(s, swing);
                let (pu, pv) = project_swing(s, su, sv);
                let excess = (su - pu).hypot(sv - pv) + outside(angle, s.twist.0, s.twist.1);
                if excess <= ANGLE_TOLERANCE {
                    return delta;
                }
                let twist = DQuat::from_axis_angle(
                    s.twist_axis,
                    clamp_circular(angle, s.twist.0, s.twist.1),
                );
                let v_axis = s.twist_axis.cross(s.swing_axis);
                DQuat::from_scaled_axis(s.swing_axis * pu + v_axis * pv) * twist
            }
            Self::Euler(e) => {
                if euler_contains(e, delta) {
                    return delta;
                }
                euler_project(e, delta)
            }
            Self::Mmd(m) => {
                if self.contains(delta) {
                    return delta;
                }
                let a = mmd_clamp(m, delta);
                let b = mmd_clamp(m, -delta);
                if angle_between(delta, a) <= angle_between(delta, b) {
                    a
                } else {
                    b
                }
            }
        }
    }

    /// The part of `rotation` (rest frame) about directions this limit does not lock entirely:
    /// identity for [`JointLimit::Locked`], the twist about the axis for a hinge, and for Euler
    /// and MMD limits the quaternion with the components of fully locked axes (range `[0, 0]`)
    /// zeroed and renormalised, as seed 001, MMD CCD, does with the residual rotation.
    pub fn unlocked_part(&self, rotation: DQuat) -> DQuat {
        let zero_axes = |locked: [bool; 3]| {
            let mut v = rotation.xyz();
            for (i, &l) in locked.iter().enumerate() {
                if l {
                    v[i] = 0.0;
                }
            }
            let q = DQuat::from_xyzw(v.x, v.y, v.z, rotation.w);
            let n = q.length();
            if n < 1e-12 { DQuat::IDENTITY } else { q / n }
        };
        match self {
            Self::Free => rotation,
            Self::Locked => DQuat::IDENTITY,
            Self::Hinge(h) => swing_twist(rotation, h.axis).1,
            Self::SwingTwist(s) => {
                let swing_locked = s.swing_u == (0.0, 0.0) && s.swing_v == (0.0, 0.0);
                let twist_locked = s.twist == (0.0, 0.0);
                match (swing_locked, twist_locked) {
                    (true, true) => DQuat::IDENTITY,
                    (true, false) => swing_twist(rotation, s.twist_axis).1,
                    (false, true) => swing_twist(rotation, s.twist_axis).0,
                    (false, false) => rotation,
                }
            }
            Self::Euler(e) => {
                let mut locked = [false; 3];
                for (k, &axis) in e.order.axes().iter().enumerate() {
                    locked[axis] = e.min[k] == 0.0 && e.max[k] == 0.0;
                }
                zero_axes(locked)
            }
            Self::Mmd(m) => zero_axes([0, 1, 2].map(|i| m.min[i] == 0.0 && m.max[i] == 0.0)),
        }
    }
}

/// Largest error of [`approx_atan`], radians (measured 1.15e-5 with these coefficients;
/// checked by a test).
const ATAN_ERROR: f64 = 1.5e-5;

/// The coefficients of the odd polynomial the cheap inside tests of [`JointLimit::contains`]
/// take for `atan t` on `[-1, 1]` (Abramowitz & Stegun 4.4.47):
/// `t (c₀ + t² (c₁ + t² (c₂ + t² (c₃ + t² c₄))))`, evaluated in that order; outside,
/// `±π/2 − atan(1/t)`. Public for lane-wise copies of those tests, which must agree with them.
pub const APPROX_ATAN_COEFFICIENTS: [f64; 5] =
    [0.999_866, -0.330_299_5, 0.180_141, -0.085_133, 0.020_835_1];

/// How far inside a range (radians) an angle measured with the approximate `atan` of
/// [`APPROX_ATAN_COEFFICIENTS`] must lie for the cheap inside tests of
/// [`JointLimit::contains`] to call it inside without the exact test: twice the
/// approximation's error bound, plus 1e-12 for rounding.
pub const INSIDE_MARGIN: f64 = 2.0 * ATAN_ERROR + 1e-12;

/// `atan(t)` to within [`ATAN_ERROR`] without a library call: the polynomial of Abramowitz &
/// Stegun 4.4.47 on `[-1, 1]`, `±π/2 − atan(1/t)` outside.
#[inline]
fn approx_atan(t: f64) -> f64 {
    let [c0, c1, c2, c3, c4] = APPROX_ATAN_COEFFICIENTS;
    let poly = |x: f64| {
        let x2 = x * x;
        x * (c0 + x2 * (c1 + x2 * (c2 + x2 * (c3 + x2 * c4))))
    };
    if t.abs() <= 1.0 {
        poly(t)
    } else {
        FRAC_PI_2.copysign(t) - poly(1.0 / t)
    }
}

/// True when `delta` is certainly inside the hinge (the cheap test of
/// [`JointLimit::contains`]): its twist angle, bounded by [`approx_atan`], lies in the range
/// with room for the approximation, and its swing is zero to rounding. `false` means "not
/// sure": the exact test decides.
#[inline]
fn hinge_clearly_inside(h: &HingeLimit, delta: DQuat) -> bool {
    let s = delta.xyz().dot(h.axis);
    let off_axis = (delta.xyz() - h.axis * s).length_squared();
    if !(delta.w > 0.0 && off_axis <= 1e-24) {
        return false;
    }
    let margin = INSIDE_MARGIN;
    let angle = 2.0 * approx_atan(s / delta.w);
    angle - margin >= h.min && angle + margin <= h.max
}

/// True when `delta` is certainly inside the swing–twist limit (the cheap test of
/// [`JointLimit::contains`]): twist angle and swing angle bounded by [`approx_atan`], the swing
/// inside its quadrant's ellipse and the twist inside its range, both with room for the
/// approximation. `false` means "not sure": the exact test decides.
#[inline]
fn swing_twist_clearly_inside(s: &SwingTwistLimit, delta: DQuat) -> bool {
    // The swing–twist split without normalising: the twist `t = (d·axis, w)` with
    // `d = v·axis` is the unit twist scaled by its length, and the swing `delta · t*` the unit
    // swing scaled by the same length; every quantity below is a ratio of their components
    // (the angles' tangents, the swing's direction), which the scale leaves alone, and a
    // positive scale keeps the signs. Written out: `delta · t* = (w² + d², w (v − d axis) −
    // d (v × axis))`, the swing's vector part perpendicular to the axis.
    let axis = s.twist_axis;
    let (w, v) = (delta.w, delta.xyz());
    let d = v.dot(axis);
    // (A split with no twist to speak of, |t| < 1e-12, is the exact test's to make.)
    if !(w > 0.0 && w * w + d * d >= 1e-24) {
        return false;
    }
    let margin = INSIDE_MARGIN;
    let twist_angle = 2.0 * approx_atan(d / w);
    if !(twist_angle - margin >= s.twist.0 && twist_angle + margin <= s.twist.1) {
        return false;
    }
    let swing_w = w * w + d * d;
    let swing_v = (v - axis * d) * w - v.cross(axis) * d;
    let length = swing_v.length();
    if length == 0.0 {
        return true;
    }
    // The swing's rotation vector is θ·v̂ with θ = 2 atan(|v| / w) ≤ `theta`.
    let theta = 2.0 * approx_atan(length / swing_w) + margin;
    let (p, r) = (
        swing_v.dot(s.swing_axis) / length,
        swing_v.dot(axis.cross(s.swing_axis)) / length,
    );
    let a = if p >= 0.0 { s.swing_u.1 } else { -s.swing_u.0 };
    let b = if r >= 0.0 { s.swing_v.1 } else { -s.swing_v.0 };
    // Inside the ellipse: θ² ((b p)² + (a r)²) ≤ a² b², with a relative margin for rounding.
    a > 0.0
        && b > 0.0
        && theta * theta * ((b * p).powi(2) + (a * r).powi(2)) <= (a * b).powi(2) * (1.0 - 1e-9)
}

/// Swing rotation vector components `(s_u, s_v)` of a swing–twist limit.
fn swing_components(s: &SwingTwistLimit, swing: DQuat) -> (f64, f64) {
    let v_axis = s.twist_axis.cross(s.swing_axis);
    let rotvec = swing.to_scaled_axis();
    (rotvec.dot(s.swing_axis), rotvec.dot(v_axis))
}

/// The swing components scaled radially onto the per-quadrant ellipse (unchanged inside it).
/// A zero semi-axis closes that half: the point moves onto the open axis and is clamped there.
fn project_swing(s: &SwingTwistLimit, su: f64, sv: f64) -> (f64, f64) {
    let a = if su >= 0.0 { s.swing_u.1 } else { -s.swing_u.0 };
    let b = if sv >= 0.0 { s.swing_v.1 } else { -s.swing_v.0 };
    let radius = su.hypot(sv);
    if radius == 0.0 {
        return (0.0, 0.0);
    }
    match (a > 0.0, b > 0.0) {
        (false, false) => (0.0, 0.0),
        (false, true) => (0.0, sv.clamp(-b, b)),
        (true, false) => (su.clamp(-a, a), 0.0),
        (true, true) => {
            let (c, sn) = (su / radius, sv / radius);
            let limit = a * b / ((b * c).powi(2) + (a * sn).powi(2)).sqrt();
            if radius <= limit {
                (su, sv)
            } else {
                (c * limit, sn * limit)
            }
        }
    }
}

/// The two Euler decompositions of `delta`: glam's (middle angle in `[-π/2, π/2]`) and the
/// equivalent `(a + π, π − b, c + π)`, all wrapped to `(-π, π]`.
fn euler_decompositions(order: EulerOrder, delta: DQuat) -> [[f64; 3]; 2] {
    let (a, b, c) = delta.to_euler(order.to_euler_rot());
    [
        [wrap_angle(a), wrap_angle(b), wrap_angle(c)],
        [wrap_angle(a + PI), wrap_angle(PI - b), wrap_angle(c + PI)],
    ]
}

fn euler_in_ranges(e: &EulerLimit, angles: [f64; 3]) -> bool {
    (0..3).all(|i| in_circular_range(angles[i], e.min[i], e.max[i]))
}

fn euler_contains(e: &EulerLimit, delta: DQuat) -> bool {
    let rot = e.order.to_euler_rot();
    let decompositions = euler_decompositions(e.order, delta);
    if decompositions.iter().any(|&d| euler_in_ranges(e, d)) {
        return true;
    }
    let [a, b, c] = decompositions[0];
    if b.cos() > 1e-6 {
        return false;
    }
    // At the fold only a + c or a − c is determined (seed 002, Euler limits: cases 3 and 4): the
    // family (a + t, b, c − σt) is one rotation. Find σ, then look for a t putting both angles
    // inside their ranges; if such t exist, one of them puts an angle on a bound.
    let sigma = if delta.angle_between(DQuat::from_euler(rot, a + 0.5, b, c - 0.5)) < 1e-6 {
        1.0
    } else {
        -1.0
    };
    for middle in [b, wrap_angle(PI - b)] {
        if !in_circular_range(middle, e.min[1], e.max[1]) {
            continue;
        }
        let (a0, c0) = if middle == b {
            (a, c)
        } else {
            (a + PI, c + PI)
        };
        let candidates = [
            e.min[0] - a0,
            e.max[0] - a0,
            (c0 - e.min[2]) * sigma,
            (c0 - e.max[2]) * sigma,
        ];
        if candidates.iter().any(|&t| {
            in_circular_range(wrap_angle(a0 + t), e.min[0], e.max[0])
                && in_circular_range(wrap_angle(c0 - sigma * t), e.min[2], e.max[2])
        }) {
            return true;
        }
    }
    false
}

/// Clamps each decomposition's angles to the ranges and keeps the candidate nearest `delta`.
fn euler_project(e: &EulerLimit, delta: DQuat) -> DQuat {
    let rot = e.order.to_euler_rot();
    let mut best = DQuat::IDENTITY;
    let mut best_distance = f64::INFINITY;
    for d in euler_decompositions(e.order, delta) {
        let clamped: [f64; 3] = std::array::from_fn(|i| clamp_circular(d[i], e.min[i], e.max[i]));
        let candidate = DQuat::from_euler(rot, clamped[0], clamped[1], clamped[2]);
        let distance = angle_between(delta, candidate);
        if distance < best_distance {
            best = candidate;
            best_distance = distance;
        }
    }
    best
}

fn mmd_bounds(m: &MmdLimit) -> (DVec3, DVec3) {
    let half_sine = |v: DVec3| DVec3::new((v.x * 0.5).sin(), (v.y * 0.5).sin(), (v.z * 0.5).sin());
    (half_sine(m.min), half_sine(m.max))
}

fn mmd_contains(m: &MmdLimit, q: DQuat) -> bool {
    let eps = 0.5 * ANGLE_TOLERANCE;
    // `w` a rounding below 0 is a half-turn: within the tolerance, not the other sign's
    // rotation (whose vector part is mirrored and may leave the bounds).
    if q.w < -eps {
        return false;
    }
    let (lo, hi) = mmd_bounds(m);
    let v = q.xyz();
    (0..3).all(|i| v[i] >= lo[i] - eps && v[i] <= hi[i] + eps)
}

/// Clamps `q`'s vector part to the MMD bounds and recomputes `w ≥ 0`.
fn mmd_clamp(m: &MmdLimit, q: DQuat) -> DQuat {
    let (lo, hi) = mmd_bounds(m);
    let v = q.xyz().clamp(lo, hi);
    let n2 = v.length_squared();
    if n2 <= 1.0 {
        return DQuat::from_xyzw(v.x, v.y, v.z, (1.0 - n2).sqrt());
    }
    // Outside the unit ball: walk from v towards the box's point nearest the origin (inside
    // the ball, see `validate`) until the ball's surface; the segment stays in the box.
    let near = DVec3::ZERO.clamp(lo, hi);
    let d = v - near;
    let (a, b, c) = (
        d.length_squared(),
        2.0 * near.dot(d),
        near.length_squared() - 1.0,
    );
    let t = ((-b + (b * b - 4.0 * a * c).max(0.0).sqrt()) / (2.0 * a)).clamp(0.0, 1.0);
    let v = (near + d * t).normalize_or_zero();
    DQuat::from_xyzw(v.x, v.y, v.z, 0.0)
}

/// `angle` wrapped to `(-π, π]`.
fn wrap_angle(angle: f64) -> f64 {
    let wrapped = angle - TAU * ((angle + PI) / TAU).floor();
    if wrapped <= -PI {
        wrapped + TAU
    } else {
        wrapped
    }
}

/// True when `angle` lies in `[min, max]` (within the tolerance), treating angles modulo 2π.
fn in_circular_range(angle: f64, min: f64, max: f64) -> bool {
    [angle, angle - TAU, angle + TAU]
        .iter()
        .any(|&a| a >= min - ANGLE_TOLERANCE && a <= max + ANGLE_TOLERANCE)
}

/// `angle` if it is in `[min, max]`, otherwise the bound nearer to it on the circle (so that
/// angles just past +π and just past −π, the same rotation, clamp alike).
fn clamp_circular(angle: f64, min: f64, max: f64) -> f64 {
    if let Some(inside) = [angle, angle - TAU, angle + TAU]
        .into_iter()
        .find(|&a| a >= min - ANGLE_TOLERANCE && a <= max + ANGLE_TOLERANCE)
    {
        return inside.clamp(min, max);
    }
    let to_min = wrap_angle(angle - min).abs();
    let to_max = wrap_angle(angle - max).abs();
    if to_min <= to_max { min } else { max }
}

/// Angle of the rotation taking `a` to `b`, in `[0, π]`.
fn angle_between(a: DQuat, b: DQuat) -> f64 {
    rotation_angle(a.conjugate() * b)
}

fn check_unit(what: &'static str, axis: DVec3) -> Result<(), LimitError> {
    if !axis.is_finite() || (axis.length() - 1.0).abs() > 1e-6 {
        return Err(LimitError::NotUnit { what, axis });
    }
    Ok(())
}

fn check_range(
    what: &'static str,
    (min, max): (f64, f64),
    must_contain_zero: bool,
) -> Result<(), LimitError> {
    if !(min.is_finite() && max.is_finite() && min <= max && min >= -PI && max <= PI) {
        return Err(LimitError::BadRange { what, min, max });
    }
    if must_contain_zero && !(min <= 0.0 && max >= 0.0) {
        return Err(LimitError::ExcludesZero { what, min, max });
    }
    Ok(())
}

/// Why a [`JointLimit`] is malformed ([`JointLimit::validate`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LimitError {
    /// An axis is not a finite unit vector: normalise it.
    #[error("{what} {axis} must be a finite unit vector")]
    NotUnit {
        /// Which axis (`hinge axis`, `twist axis`, `swing axis`).
        what: &'static str,
        /// The axis given.
        axis: DVec3,
    },
    /// A swing–twist limit's swing axis is not perpendicular to its twist axis.
    #[error("swing axis must be perpendicular to the twist axis")]
    NotPerpendicular,
    /// A range is not finite, not ordered (`min > max`) or leaves `[-π, π]`.
    #[error("{what} ({min}, {max}) must be finite, ordered and inside [-pi, pi]")]
    BadRange {
        /// Which range (`hinge range`, `twist range`, `first Euler range`, `MMD x range`, …).
        what: &'static str,
        /// Its lower bound, radians.
        min: f64,
        /// Its upper bound, radians.
        max: f64,
    },
    /// A swing range must contain the rest rotation's zero.
    #[error("{what} ({min}, {max}) must contain 0")]
    ExcludesZero {
        /// Which range (`swing_u range`, `swing_v range`).
        what: &'static str,
        /// Its lower bound, radians.
        min: f64,
        /// Its upper bound, radians.
        max: f64,
    },
    /// An MMD limit's three ranges admit no rotation together.
    #[error("MMD ranges admit no rotation together")]
    EmptyMmd,
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
    fn mmd_half_turn_with_w_rounded_below_zero_is_contained() {
        // Found by the soak runner: a projected half turn stored as w = -1e-17 failed
        // `contains` (its negation mirrors the vector part out of the one-sided x range).
        let limit = JointLimit::Mmd(MmdLimit {
            min: DVec3::new(0.0, -0.1, -0.1),
            max: DVec3::new(PI, 0.1, 0.1),
        });
        let half_turn = DQuat::from_xyzw(1.0, 0.0, 0.0, -1e-17);
        assert!(limit.contains(half_turn));
        assert_eq!(limit.violation(half_turn), 0.0);
        assert_eq!(limit.project(half_turn), half_turn);
        // A real excess beyond the half turn is still refused.
        let beyond = DQuat::from_axis_angle(DVec3::X, PI + 1e-3);
        assert!(!limit.contains(beyond));
    }

    #[test]
    fn approx_atan_is_within_its_error_bound() {
        let mut worst: f64 = 0.0;
        for i in -2_000_000..=2_000_000 {
            let t = f64::from(i) * 1e-6 * 50.0; // [-100, 100], dense near 0
            worst = worst.max((approx_atan(t) - t.atan()).abs());
            let u = f64::from(i) * 5e-7; // [-1, 1]
            worst = worst.max((approx_atan(u) - u.atan()).abs());
        }
        assert!(worst < ATAN_ERROR, "{worst}");
    }

    #[test]
    fn the_cheap_inside_tests_agree_with_the_exact_violation() {
        // `contains` and `excess` take a shortcut for rotations well inside hinges and
        // swing–twist cones; they must answer exactly as `violation <= tolerance` does, near
        // the bounds too.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let limits = [
            JointLimit::Hinge(HingeLimit {
                axis: DVec3::new(0.0, -1.0, 0.0),
                min: 0.0,
                max: 150f64.to_radians(),
            }),
            JointLimit::SwingTwist(SwingTwistLimit {
                twist_axis: DVec3::X,
                swing_axis: DVec3::Y,
                swing_u: (-110f64.to_radians(), 40f64.to_radians()),
                swing_v: (-85f64.to_radians(), 90f64.to_radians()),
                twist: (-90f64.to_radians(), 90f64.to_radians()),
            }),
            JointLimit::SwingTwist(SwingTwistLimit {
                twist_axis: DVec3::Y,
                swing_axis: DVec3::X,
                swing_u: (-0.2, 0.0),
                swing_v: (-0.4, 0.4),
                twist: (-0.1, 0.1),
            }),
        ];
        let (mut inside, mut outside) = (0, 0);
        for limit in &limits {
            for i in 0..40_000 {
                let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::Z);
                let mut q = DQuat::from_axis_angle(axis, next() * 2.5);
                if i % 4 == 0 {
                    // On the bound, then nudged by a few tolerances either way.
                    q = limit.project(q) * DQuat::from_axis_angle(axis, next() * 4e-9);
                }
                if let JointLimit::Hinge(h) = limit
                    && i % 3 == 0
                {
                    q = DQuat::from_axis_angle(h.axis, next() * 3.0);
                }
                let exact = limit.violation(q) <= ANGLE_TOLERANCE;
                assert_eq!(limit.contains(q), exact, "{limit:?} {q}");
                // `excess` is the violation where `contains` fails, else 0, to the bit.
                let excess = if exact { 0.0 } else { limit.violation(q) };
                assert_eq!(limit.excess(q).to_bits(), excess.to_bits(), "{limit:?} {q}");
                inside += usize::from(exact);
                outside += usize::from(!exact);
            }
        }
        assert!(inside > 20_000 && outside > 20_000, "{inside} {outside}");
    }

    #[test]
    fn the_cheap_swing_twist_test_agrees_on_random_limits_and_axes() {
        // Limits with twist and swing axes in every direction and ranges up to ±2 rad of
        // swing and ±3 of twist: wherever the shortcut says "inside" the exact violation
        // agrees, and `contains` answers as the exact test does; the shortcut is taken often.
        let mut state = 0x1234_5678_9abc_def1_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut shortcut = 0;
        for _ in 0..50 {
            let twist_axis = DVec3::new(next(), next(), next()).normalize();
            let swing_axis = DQuat::from_axis_angle(twist_axis, next() * 3.0)
                * twist_axis.any_orthonormal_vector();
            let limit = SwingTwistLimit {
                twist_axis,
                swing_axis,
                swing_u: (-next().abs() * 2.0, next().abs() * 2.0),
                swing_v: (-next().abs() * 2.0, next().abs() * 2.0),
                twist: (-next().abs() * 3.0, next().abs() * 3.0),
            };
            let joint = JointLimit::SwingTwist(limit);
            for i in 0..4_000 {
                let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::Z);
                let mut q = DQuat::from_axis_angle(axis, next() * 3.1);
                if i % 3 == 0 {
                    q = joint.project(q) * DQuat::from_axis_angle(axis, next() * 4e-9);
                }
                let exact = joint.violation(q) <= ANGLE_TOLERANCE;
                assert_eq!(joint.contains(q), exact, "{joint:?} {q}");
                if swing_twist_clearly_inside(&limit, q) {
                    shortcut += 1;
                    assert!(exact, "{joint:?} {q}");
                }
            }
        }
        assert!(shortcut > 40_000, "{shortcut}");
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
