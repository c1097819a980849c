//! Lane-wise f64 arithmetic for the batch kernels of the closed-form solvers: one value per
//! problem, as many problems at once as the instruction set dispatched to holds (1 on the
//! baseline, 4 with AVX2, 8 with AVX-512), through [`pulp`]'s safe SIMD.
//!
//! Every operation is the same IEEE operation as its scalar (glam) counterpart, applied in the
//! same order — [`Vec3::dot`] is `(x·x') + (y·y') + (z·z')` as in glam, [`Vec3::cross`] has
//! glam's operand order — so a kernel written with these types gives, lane by lane, the bits of
//! the scalar code it mirrors. No fused multiply-add is used for that reason.
//!
//! Everything here is `#[inline(always)]`: it must be compiled inside the function that pulp
//! dispatched to, with that function's instruction set.
#![allow(clippy::inline_always)]

use core::f64::consts::FRAC_PI_2;
use core::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};
use ikarus_core::{
    APPROX_ATAN_COEFFICIENTS, HingeLimit, INSIDE_MARGIN, JointLimit, SwingTwistLimit,
};
use pulp::Simd;

/// One f64 per lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lanes<S: Simd> {
    simd: S,
    value: S::f64s,
}

impl<S: Simd> Lanes<S> {
    /// Wraps a register.
    #[inline(always)]
    pub(crate) fn new(simd: S, value: S::f64s) -> Self {
        Self { simd, value }
    }

    /// `value` in every lane.
    #[inline(always)]
    pub(crate) fn splat(simd: S, value: f64) -> Self {
        Self::new(simd, simd.splat_f64s(value))
    }

    /// The register.
    #[inline(always)]
    pub(crate) fn value(self) -> S::f64s {
        self.value
    }

    /// A constant in every lane, with this value's instruction set.
    #[inline(always)]
    pub(crate) fn constant(self, value: f64) -> Self {
        Self::splat(self.simd, value)
    }

    /// Square root (correctly rounded, as `f64::sqrt`).
    #[inline(always)]
    pub(crate) fn sqrt(self) -> Self {
        Self::new(self.simd, self.simd.sqrt_f64s(self.value))
    }

    /// `1 / self`, as `f64::recip`.
    #[inline(always)]
    pub(crate) fn recip(self) -> Self {
        self.constant(1.0) / self
    }

    /// Absolute value (clears the sign bit).
    #[inline(always)]
    pub(crate) fn abs(self) -> Self {
        Self::new(self.simd, self.simd.abs_f64s(self.value))
    }

    /// `self`'s magnitude with `sign`'s sign bit, as `f64::copysign`.
    #[inline(always)]
    pub(crate) fn copysign(self, sign: Self) -> Self {
        let simd = self.simd;
        let sign_bit = simd.and_f64s(sign.value, simd.splat_f64s(-0.0));
        Self::new(simd, simd.or_f64s(simd.abs_f64s(self.value), sign_bit))
    }

    /// `self <= other` per lane (false where either is NaN).
    #[inline(always)]
    pub(crate) fn le(self, other: Self) -> Mask<S> {
        Mask::new(
            self.simd,
            self.simd.less_than_or_equal_f64s(self.value, other.value),
        )
    }

    /// `self < other` per lane (false where either is NaN).
    #[inline(always)]
    pub(crate) fn lt(self, other: Self) -> Mask<S> {
        Mask::new(self.simd, self.simd.less_than_f64s(self.value, other.value))
    }

    /// `self >= other` per lane (false where either is NaN).
    #[inline(always)]
    pub(crate) fn ge(self, other: Self) -> Mask<S> {
        other.le(self)
    }

    /// `self > other` per lane (false where either is NaN).
    #[inline(always)]
    pub(crate) fn gt(self, other: Self) -> Mask<S> {
        other.lt(self)
    }

    /// `self == other` per lane (false where either is NaN).
    #[inline(always)]
    pub(crate) fn eq(self, other: Self) -> Mask<S> {
        Mask::new(self.simd, self.simd.equal_f64s(self.value, other.value))
    }

    /// True where the value is finite, nonzero and not subnormal, as `f64::is_normal`.
    #[inline(always)]
    pub(crate) fn is_normal(self) -> Mask<S> {
        let size = self.abs();
        size.ge(self.constant(f64::MIN_POSITIVE)) & size.lt(self.constant(f64::INFINITY))
    }

    /// True where the value is neither infinite nor NaN, as `f64::is_finite`.
    #[inline(always)]
    pub(crate) fn is_finite(self) -> Mask<S> {
        self.abs().lt(self.constant(f64::INFINITY))
    }
}

macro_rules! lane_op {
    ($trait:ident, $method:ident, $simd_method:ident) => {
        impl<S: Simd> $trait for Lanes<S> {
            type Output = Self;

            #[inline(always)]
            fn $method(self, rhs: Self) -> Self {
                Self::new(self.simd, self.simd.$simd_method(self.value, rhs.value))
            }
        }
    };
}

lane_op!(Add, add, add_f64s);
lane_op!(Sub, sub, sub_f64s);
lane_op!(Mul, mul, mul_f64s);
lane_op!(Div, div, div_f64s);

impl<S: Simd> Neg for Lanes<S> {
    type Output = Self;

    #[inline(always)]
    fn neg(self) -> Self {
        Self::new(self.simd, self.simd.neg_f64s(self.value))
    }
}

/// One truth value per lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mask<S: Simd> {
    simd: S,
    mask: S::m64s,
}

impl<S: Simd> Mask<S> {
    #[inline(always)]
    fn new(simd: S, mask: S::m64s) -> Self {
        Self { simd, mask }
    }

    /// `if_true` where the mask is set, else `if_false`.
    #[inline(always)]
    pub(crate) fn select(self, if_true: Lanes<S>, if_false: Lanes<S>) -> Lanes<S> {
        Lanes::new(
            self.simd,
            self.simd
                .select_f64s(self.mask, if_true.value, if_false.value),
        )
    }

    /// Lane by lane, [`select`](Self::select) on each coordinate.
    #[inline(always)]
    pub(crate) fn select3(self, if_true: Vec3<S>, if_false: Vec3<S>) -> Vec3<S> {
        Vec3::new(
            self.select(if_true.x, if_false.x),
            self.select(if_true.y, if_false.y),
            self.select(if_true.z, if_false.z),
        )
    }

    /// The mask as lane bits, lane `i` in bit `i`.
    #[inline(always)]
    pub(crate) fn bits(self) -> u64 {
        let simd = self.simd;
        let ones = [simd.select_f64s(self.mask, simd.splat_f64s(1.0), simd.splat_f64s(0.0))];
        let lanes: &[f64] = pulp::bytemuck::cast_slice(ones.as_slice());
        // A loop, not a closure: a closure would be compiled apart from the dispatched code.
        let mut bits = 0;
        for (lane, &value) in lanes.iter().enumerate() {
            bits |= u64::from(value != 0.0) << lane;
        }
        bits
    }
}

impl<S: Simd> BitAnd for Mask<S> {
    type Output = Self;

    #[inline(always)]
    fn bitand(self, rhs: Self) -> Self {
        Self::new(self.simd, self.simd.and_m64s(self.mask, rhs.mask))
    }
}

impl<S: Simd> BitOr for Mask<S> {
    type Output = Self;

    #[inline(always)]
    fn bitor(self, rhs: Self) -> Self {
        Self::new(self.simd, self.simd.or_m64s(self.mask, rhs.mask))
    }
}

impl<S: Simd> Not for Mask<S> {
    type Output = Self;

    #[inline(always)]
    fn not(self) -> Self {
        Self::new(self.simd, self.simd.not_m64s(self.mask))
    }
}

/// A 3-vector per lane, with glam's `DVec3` arithmetic.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vec3<S: Simd> {
    /// x per lane.
    pub x: Lanes<S>,
    /// y per lane.
    pub y: Lanes<S>,
    /// z per lane.
    pub z: Lanes<S>,
}

impl<S: Simd> Vec3<S> {
    /// From coordinates.
    #[inline(always)]
    pub(crate) fn new(x: Lanes<S>, y: Lanes<S>, z: Lanes<S>) -> Self {
        Self { x, y, z }
    }

    /// `(x·x') + (y·y') + (z·z')`, as `DVec3::dot`.
    #[inline(always)]
    pub(crate) fn dot(self, rhs: Self) -> Lanes<S> {
        self.x * rhs.x + self.y * rhs.y + self.z * rhs.z
    }

    /// As `DVec3::cross`.
    #[inline(always)]
    pub(crate) fn cross(self, rhs: Self) -> Self {
        Self::new(
            self.y * rhs.z - rhs.y * self.z,
            self.z * rhs.x - rhs.z * self.x,
            self.x * rhs.y - rhs.x * self.y,
        )
    }

    /// As `DVec3::length_squared`.
    #[inline(always)]
    pub(crate) fn length_squared(self) -> Lanes<S> {
        self.dot(self)
    }

    /// Every coordinate times `factor`, as `DVec3 * f64`.
    #[inline(always)]
    pub(crate) fn scale(self, factor: Lanes<S>) -> Self {
        Self::new(self.x * factor, self.y * factor, self.z * factor)
    }
}

impl<S: Simd> Add for Vec3<S> {
    type Output = Self;

    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        Self::new(self.x + rhs.x, self.y + rhs.y, self.z + rhs.z)
    }
}

impl<S: Simd> Sub for Vec3<S> {
    type Output = Self;

    #[inline(always)]
    fn sub(self, rhs: Self) -> Self {
        Self::new(self.x - rhs.x, self.y - rhs.y, self.z - rhs.z)
    }
}

/// A 3×3 matrix per lane, by columns, with glam's `DMat3` arithmetic (and its field names).
#[allow(clippy::struct_field_names)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mat3<S: Simd> {
    /// First column.
    pub x_axis: Vec3<S>,
    /// Second column.
    pub y_axis: Vec3<S>,
    /// Third column.
    pub z_axis: Vec3<S>,
}

impl<S: Simd> Mat3<S> {
    /// `x·v.x + y·v.y + z·v.z` (columns), as `DMat3 * DVec3`.
    #[inline(always)]
    pub(crate) fn mul_vec3(&self, v: Vec3<S>) -> Vec3<S> {
        self.x_axis.scale(v.x) + self.y_axis.scale(v.y) + self.z_axis.scale(v.z)
    }

    /// As `DMat3::determinant`.
    #[inline(always)]
    pub(crate) fn determinant(&self) -> Lanes<S> {
        self.x_axis.dot(self.y_axis.cross(self.z_axis))
    }
}

impl<S: Simd> Vec3<S> {
    /// `value` in every lane.
    #[inline(always)]
    pub(crate) fn splat(simd: S, value: glam::DVec3) -> Self {
        Self::new(
            Lanes::splat(simd, value.x),
            Lanes::splat(simd, value.y),
            Lanes::splat(simd, value.z),
        )
    }

    /// The registers `values[offset..offset + 3]`.
    #[inline(always)]
    pub(crate) fn load(simd: S, values: &[S::f64s], offset: usize) -> Self {
        Self::new(
            Lanes::new(simd, values[offset]),
            Lanes::new(simd, values[offset + 1]),
            Lanes::new(simd, values[offset + 2]),
        )
    }

    /// Into the registers `values[offset..offset + 3]`.
    #[inline(always)]
    pub(crate) fn store(self, values: &mut [S::f64s], offset: usize) {
        values[offset] = self.x.value();
        values[offset + 1] = self.y.value();
        values[offset + 2] = self.z.value();
    }

    /// As `DVec3::length`.
    #[inline(always)]
    pub(crate) fn length(self) -> Lanes<S> {
        self.length_squared().sqrt()
    }

    /// The mask where every coordinate is finite.
    #[inline(always)]
    pub(crate) fn is_finite(self) -> Mask<S> {
        self.x.is_finite() & self.y.is_finite() & self.z.is_finite()
    }
}

/// A quaternion `[x, y, z, w]` per lane, with glam's `DQuat` arithmetic in glam's order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quat<S: Simd> {
    /// x per lane.
    pub x: Lanes<S>,
    /// y per lane.
    pub y: Lanes<S>,
    /// z per lane.
    pub z: Lanes<S>,
    /// w per lane.
    pub w: Lanes<S>,
}

impl<S: Simd> Quat<S> {
    /// From components.
    #[inline(always)]
    pub(crate) fn new(x: Lanes<S>, y: Lanes<S>, z: Lanes<S>, w: Lanes<S>) -> Self {
        Self { x, y, z, w }
    }

    /// `value` in every lane.
    #[inline(always)]
    pub(crate) fn splat(simd: S, value: glam::DQuat) -> Self {
        Self::new(
            Lanes::splat(simd, value.x),
            Lanes::splat(simd, value.y),
            Lanes::splat(simd, value.z),
            Lanes::splat(simd, value.w),
        )
    }

    /// The registers `values[offset..offset + 4]`, `[x, y, z, w]`.
    #[inline(always)]
    pub(crate) fn load(simd: S, values: &[S::f64s], offset: usize) -> Self {
        let xyz = Vec3::load(simd, values, offset);
        Self::new(xyz.x, xyz.y, xyz.z, Lanes::new(simd, values[offset + 3]))
    }

    /// Into the registers `values[offset..offset + 4]`, `[x, y, z, w]`.
    #[inline(always)]
    pub(crate) fn store(self, values: &mut [S::f64s], offset: usize) {
        self.xyz().store(values, offset);
        values[offset + 3] = self.w.value();
    }

    /// The vector part.
    #[inline(always)]
    pub(crate) fn xyz(self) -> Vec3<S> {
        Vec3::new(self.x, self.y, self.z)
    }

    /// As `DQuat::conjugate` (= `inverse` of a unit quaternion).
    #[inline(always)]
    pub(crate) fn conjugate(self) -> Self {
        Self::new(-self.x, -self.y, -self.z, self.w)
    }

    /// As `DQuat * DQuat` (`mul_quat`).
    #[inline(always)]
    pub(crate) fn mul(self, rhs: Self) -> Self {
        let (x0, y0, z0, w0) = (self.x, self.y, self.z, self.w);
        let (x1, y1, z1, w1) = (rhs.x, rhs.y, rhs.z, rhs.w);
        Self::new(
            w0 * x1 + x0 * w1 + y0 * z1 - z0 * y1,
            w0 * y1 - x0 * z1 + y0 * w1 + z0 * x1,
            w0 * z1 + x0 * y1 - y0 * x1 + z0 * w1,
            w0 * w1 - x0 * x1 - y0 * y1 - z0 * z1,
        )
    }

    /// As `DQuat::dot` (the 4-vector dot product).
    #[inline(always)]
    pub(crate) fn dot(self, rhs: Self) -> Lanes<S> {
        self.x * rhs.x + self.y * rhs.y + self.z * rhs.z + self.w * rhs.w
    }

    /// As `DQuat::length`.
    #[inline(always)]
    pub(crate) fn length(self) -> Lanes<S> {
        self.dot(self).sqrt()
    }

    /// Every component times `factor`.
    #[inline(always)]
    pub(crate) fn scale(self, factor: Lanes<S>) -> Self {
        Self::new(
            self.x * factor,
            self.y * factor,
            self.z * factor,
            self.w * factor,
        )
    }

    /// As `DQuat + DQuat` (component by component).
    #[inline(always)]
    pub(crate) fn add(self, rhs: Self) -> Self {
        Self::new(
            self.x + rhs.x,
            self.y + rhs.y,
            self.z + rhs.z,
            self.w + rhs.w,
        )
    }

    /// As `DQuat::normalize`: times `1 / length`.
    #[inline(always)]
    pub(crate) fn normalize(self) -> Self {
        self.scale(self.length().recip())
    }

    /// As `DQuat * DVec3` (`mul_vec3`) for a unit quaternion.
    #[inline(always)]
    pub(crate) fn rotate(self, v: Vec3<S>) -> Vec3<S> {
        let w = self.w;
        let b = self.xyz();
        let b2 = b.dot(b);
        let two = w.constant(2.0);
        v.scale(w * w - b2) + b.scale(v.dot(b) * two) + b.cross(v).scale(w * two)
    }

    /// As `DMat3::from_quat`.
    #[inline(always)]
    pub(crate) fn to_mat3(self) -> Mat3<S> {
        let (x, y, z, w) = (self.x, self.y, self.z, self.w);
        let one = x.constant(1.0);
        let (x2, y2, z2) = (x + x, y + y, z + z);
        let (xx, xy, xz) = (x * x2, x * y2, x * z2);
        let (yy, yz, zz) = (y * y2, y * z2, z * z2);
        let (wx, wy, wz) = (w * x2, w * y2, w * z2);
        Mat3 {
            x_axis: Vec3::new(one - (yy + zz), xy + wz, xz - wy),
            y_axis: Vec3::new(xy - wz, one - (xx + zz), yz + wx),
            z_axis: Vec3::new(xz + wy, yz - wx, one - (xx + yy)),
        }
    }

    /// The mask where every component is finite.
    #[inline(always)]
    pub(crate) fn is_finite(self) -> Mask<S> {
        self.xyz().is_finite() & self.w.is_finite()
    }

    /// Lane by lane, `if_true` where `mask` is set, else `if_false`.
    #[inline(always)]
    pub(crate) fn select(mask: Mask<S>, if_true: Self, if_false: Self) -> Self {
        Self::new(
            mask.select(if_true.x, if_false.x),
            mask.select(if_true.y, if_false.y),
            mask.select(if_true.z, if_false.z),
            mask.select(if_true.w, if_false.w),
        )
    }
}

impl<S: Simd> Mat3<S> {
    /// As `DAffine3::transform_point3` of the frame `(self, translation)`:
    /// `((x·p.x + y·p.y) + z·p.z) + translation`.
    #[inline(always)]
    pub(crate) fn transform_point(&self, p: Vec3<S>, translation: Vec3<S>) -> Vec3<S> {
        self.mul_vec3(p) + translation
    }
}

/// `atan t` as the cheap inside tests of [`JointLimit::contains`] approximate it
/// ([`APPROX_ATAN_COEFFICIENTS`], the same operations in the same order), on every lane.
#[inline(always)]
fn approx_atan<S: Simd>(t: Lanes<S>) -> Lanes<S> {
    let [c0, c1, c2, c3, c4] = APPROX_ATAN_COEFFICIENTS;
    let (c0, c1, c2, c3, c4) = (
        t.constant(c0),
        t.constant(c1),
        t.constant(c2),
        t.constant(c3),
        t.constant(c4),
    );
    // Not a closure: it would be compiled apart from the dispatched code.
    let near = {
        let x2 = t * t;
        t * (c0 + x2 * (c1 + x2 * (c2 + x2 * (c3 + x2 * c4))))
    };
    let far = {
        let x = t.recip();
        let x2 = x * x;
        t.constant(FRAC_PI_2).copysign(t) - x * (c0 + x2 * (c1 + x2 * (c2 + x2 * (c3 + x2 * c4))))
    };
    t.abs().le(t.constant(1.0)).select(near, far)
}

/// The cheap inside test of a joint's limit ([`JointLimit::contains`]'s first step, which
/// decides most rotations without the exact swing–twist decomposition), compiled once for
/// lanes. A lane it does not call inside may still be legal: the exact test decides there.
#[derive(Clone, Copy, Debug)]
pub(crate) enum InsideTest {
    /// Any rotation is legal.
    Free,
    /// A hinge.
    Hinge(HingeLimit),
    /// A swing–twist limit, with `twist_axis × swing_axis`.
    SwingTwist(SwingTwistLimit, glam::DVec3),
}

impl InsideTest {
    /// The test for `limit`; `None` for the kinds it does not cover (locked, Euler, MMD).
    pub(crate) fn new(limit: &JointLimit) -> Option<Self> {
        match limit {
            JointLimit::Free => Some(Self::Free),
            JointLimit::Hinge(h) => Some(Self::Hinge(*h)),
            JointLimit::SwingTwist(s) => {
                Some(Self::SwingTwist(*s, s.twist_axis.cross(s.swing_axis)))
            }
            _ => None,
        }
    }

    /// The lanes where `delta` (the rotation relative to rest) is certainly inside the limit:
    /// where the scalar cheap test says so, by the same operations.
    #[inline(always)]
    pub(crate) fn clearly_inside<S: Simd>(&self, simd: S, delta: Quat<S>) -> Mask<S> {
        let zero = Lanes::splat(simd, 0.0);
        let two = Lanes::splat(simd, 2.0);
        let margin = Lanes::splat(simd, INSIDE_MARGIN);
        match self {
            Self::Free => zero.le(zero),
            Self::Hinge(h) => {
                let axis = Vec3::splat(simd, h.axis);
                let s = delta.xyz().dot(axis);
                let off_axis = (delta.xyz() - axis.scale(s)).length_squared();
                let angle = two * approx_atan(s / delta.w);
                delta.w.gt(zero)
                    & off_axis.le(Lanes::splat(simd, 1e-24))
                    & (angle - margin).ge(Lanes::splat(simd, h.min))
                    & (angle + margin).le(Lanes::splat(simd, h.max))
            }
            Self::SwingTwist(s, v_axis) => {
                let (swing, twist) = swing_twist(simd, delta, s.twist_axis);
                let twist_axis = Vec3::splat(simd, s.twist_axis);
                let twist_angle = two * approx_atan(twist.xyz().dot(twist_axis) / twist.w);
                let twist_inside = swing.w.gt(zero)
                    & twist.w.gt(zero)
                    & (twist_angle - margin).ge(Lanes::splat(simd, s.twist.0))
                    & (twist_angle + margin).le(Lanes::splat(simd, s.twist.1));
                let v = swing.xyz();
                let length = v.length();
                let theta = two * approx_atan(length / swing.w) + margin;
                let p = v.dot(Vec3::splat(simd, s.swing_axis)) / length;
                let r = v.dot(Vec3::splat(simd, *v_axis)) / length;
                let a = p.ge(zero).select(
                    Lanes::splat(simd, s.swing_u.1),
                    Lanes::splat(simd, -s.swing_u.0),
                );
                let b = r.ge(zero).select(
                    Lanes::splat(simd, s.swing_v.1),
                    Lanes::splat(simd, -s.swing_v.0),
                );
                let (bp, ar, ab) = (b * p, a * r, a * b);
                let in_ellipse = a.gt(zero)
                    & b.gt(zero)
                    & (theta * theta * (bp * bp + ar * ar))
                        .le(ab * ab * Lanes::splat(simd, 1.0 - 1e-9));
                twist_inside & (length.eq(zero) | in_ellipse)
            }
        }
    }
}

/// [`ikarus_core::swing_twist`] on every lane: `(swing, twist)` with `q = swing · twist`.
#[inline(always)]
fn swing_twist<S: Simd>(simd: S, q: Quat<S>, axis: glam::DVec3) -> (Quat<S>, Quat<S>) {
    let axis = Vec3::splat(simd, axis);
    let projection = axis.scale(q.xyz().dot(axis));
    let twist = Quat::new(projection.x, projection.y, projection.z, q.w);
    let length = twist.length();
    let twist = Quat::select(
        length.lt(Lanes::splat(simd, 1e-12)),
        Quat::splat(simd, glam::DQuat::IDENTITY),
        Quat::new(
            twist.x / length,
            twist.y / length,
            twist.z / length,
            twist.w / length,
        ),
    );
    (q.mul(twist.conjugate()), twist)
}

impl<S: Simd> Mat3<S> {
    /// From columns.
    #[inline(always)]
    pub(crate) fn from_cols(x_axis: Vec3<S>, y_axis: Vec3<S>, z_axis: Vec3<S>) -> Self {
        Self {
            x_axis,
            y_axis,
            z_axis,
        }
    }

    /// As `DMat3::transpose`.
    #[inline(always)]
    pub(crate) fn transpose(&self) -> Self {
        Self::from_cols(
            Vec3::new(self.x_axis.x, self.y_axis.x, self.z_axis.x),
            Vec3::new(self.x_axis.y, self.y_axis.y, self.z_axis.y),
            Vec3::new(self.x_axis.z, self.y_axis.z, self.z_axis.z),
        )
    }

    /// As `DMat3 * DMat3` (each column of `rhs` through `self`).
    #[inline(always)]
    pub(crate) fn mul_mat3(&self, rhs: &Self) -> Self {
        Self::from_cols(
            self.mul_vec3(rhs.x_axis),
            self.mul_vec3(rhs.y_axis),
            self.mul_vec3(rhs.z_axis),
        )
    }

    /// As `DMat3::inverse` (the cofactors over the determinant `x · (y × z)`).
    #[inline(always)]
    pub(crate) fn inverse(&self) -> Self {
        let tmp0 = self.y_axis.cross(self.z_axis);
        let tmp1 = self.z_axis.cross(self.x_axis);
        let tmp2 = self.x_axis.cross(self.y_axis);
        let inv_det = self.x_axis.x.constant(1.0) / self.x_axis.dot(tmp0);
        Self::from_cols(
            tmp0.scale(inv_det),
            tmp1.scale(inv_det),
            tmp2.scale(inv_det),
        )
        .transpose()
    }

    /// As `DQuat::from_mat3` (glam's four branches as selects).
    #[inline(always)]
    pub(crate) fn rotation(&self) -> Quat<S> {
        let (m00, m01, m02) = (self.x_axis.x, self.x_axis.y, self.x_axis.z);
        let (m10, m11, m12) = (self.y_axis.x, self.y_axis.y, self.y_axis.z);
        let (m20, m21, m22) = (self.z_axis.x, self.z_axis.y, self.z_axis.z);
        let zero = m00.constant(0.0);
        let one = m00.constant(1.0);
        let low_z = m22.le(zero);
        let dif10 = m11 - m00;
        let sum10 = m11 + m00;
        let x_first = dif10.le(zero);
        let z_first = sum10.le(zero);
        let (omm22, opm22) = (one - m22, one + m22);
        let four_sq = low_z.select(
            x_first.select(omm22 - dif10, omm22 + dif10),
            z_first.select(opm22 - sum10, opm22 + sum10),
        );
        let inv4 = m00.constant(0.5) / four_sq.sqrt();
        let (s01, s02, s12) = (m01 + m10, m02 + m20, m12 + m21);
        let (d12, d20, d01) = (m12 - m21, m20 - m02, m01 - m10);
        // Per component, its numerator in glam's x, y, z and w branches.
        let branches = Branches {
            low_z,
            x_first,
            z_first,
            inv4,
        };
        Quat::new(
            branches.pick([four_sq, s01, s02, d12]),
            branches.pick([s01, four_sq, s12, d20]),
            branches.pick([s02, s12, four_sq, d01]),
            branches.pick([d12, d20, d01, four_sq]),
        )
    }
}

/// Which of glam's four branches of `DQuat::from_mat3` each lane takes, and its scale.
struct Branches<S: Simd> {
    low_z: Mask<S>,
    x_first: Mask<S>,
    z_first: Mask<S>,
    inv4: Lanes<S>,
}

impl<S: Simd> Branches<S> {
    /// The numerator of the lane's branch, scaled.
    #[inline(always)]
    fn pick(&self, [x, y, z, w]: [Lanes<S>; 4]) -> Lanes<S> {
        self.low_z
            .select(self.x_first.select(x, y), self.z_first.select(z, w))
            * self.inv4
    }
}
