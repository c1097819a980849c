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

use core::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};
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
