//! Aim (look-at) IK: turns one joint so that a ray fixed to it — a head's or an eye's line of
//! sight, a gun barrel, a spotlight — passes through a target, with its up axis facing a pole
//! direction. The job of ozz-animation's `IKAimJob`; [`solve_chain_multi`] spreads the turn
//! over several joints (spine → neck → head) as ozz's look-at sample does.
//!
//! ## Conventions
//!
//! - Column vectors, right-handed, +Y up, metres, radians, quaternions `[x, y, z, w]` (glam
//!   [`DQuat`]), f64.
//! - The joint's transform is `model_from_joint` ([`DAffine3`]). It may carry any translation,
//!   rotation, uniform or non-uniform scale, shear and mirroring (negative determinant)
//!   inherited from its parents.
//! - `forward`, `up` and `offset` are in the **joint's local space** (they turn with the
//!   joint); `target` and `pole` are in **model space**.
//! - The output is a **correction in the joint's local space**: post-multiply it onto the local
//!   rotation, `local.rotation = local.rotation * correction` ([`AimOutput::apply_to`]).
//!   Equivalently the solver's model of the result is `model_from_joint * rotation(correction)`.
//!
//! ## What it computes
//!
//! [`solve`] is a pure function. Everything is expressed in the joint's space (`t` the target,
//! `p` the pole, both through `joint_from_model`), where the correction `R` is a plain rotation
//! about the joint's origin:
//!
//! 1. **The ray.** The "eye" sits at `offset` (`o`) and looks along the unit `forward` (`f`):
//!    the ray `o + s·f`, `s ≥ 0`. A rotation about the origin keeps distances to it, so the
//!    ray can pass through `t` after the turn only at its point `i` with `|i| = |t|`. With
//!    `c = o − (f·o) f` the point of the ray's line closest to the joint, that point is
//!    `i = c + f·√(|t|² − |c|²)`, where the line leaves the sphere of radius `|t|` (of two
//!    crossings on the ray, the far one, which continues the single crossing). It lies on the
//!    ray (`s ≥ 0`) unless the target is **inside the offset sphere** (`|t| < |o|`) and the ray
//!    starts off pointing away from the joint (`f·o > 0`), or the line misses the sphere
//!    (`|c| > |t|`): no rotation puts the target on the ray then, and `reached = false`.
//! 2. **The aim.** The shortest arc `q₁` taking `i` onto `t` puts the target on the ray. With
//!    no offset `i = |t|·f`, and this is simply "forward onto the target".
//! 3. **The roll.** Every rotation about the joint→target line keeps the target on the ray, and
//!    nothing else does. `q₂` is the rotation about that line that brings the corrected up
//!    axis (`q₁·up`) into the plane holding the line and the pole, on the pole's side — among
//!    all rotations that aim, the one whose up axis is closest to the pole (largest `up · p`).
//!    With no offset the joint→target line is the line of sight itself.
//! 4. `R = q₂ · q₁` is computed in one step, as the rotation taking the orthogonal frame
//!    (`i`, the part of `up` normal to `i`) onto (`t`, the part of the pole normal to `t`):
//!    rotations keep angles, so it satisfies both conditions, and it is the only one that
//!    does. Then it is weighted and limited (below).
//!
//! Lines, planes, "which side" and "passes through" are preserved by linear maps, so the ray
//! passes exactly through the target and the up axis lies exactly in the pole plane **in model
//! space** too, whatever the parents' scale, shear or mirroring. `twist_angle` turns the pole
//! about the joint→target line in model space before solving, so the up axis turns by exactly
//! that angle (in model space) about that line.
//!
//! When the target is out of reach (step 1), the ray is brought **as close to the target as
//! any rotation can bring it**: the ray's point nearest the joint (`c` when `f·o < 0`, else
//! the eye `o`) is turned onto the joint→target line, leaving the target `|c|` (or `|o|`)
//! `− |t|` from the ray, the least possible. This continues the reached solution across the
//! boundary (no pop as the target enters the offset sphere); the roll is solved as in step 3.
//!
//! ### Weight and limits
//!
//! `weight` slerps the correction from identity (half the weight, half the angle). The
//! optional cone (`AimSettings::max_angle`) keeps the corrected forward axis within that angle
//! of `AimInput::cone_axis` (the rest forward in [`AimChain::input`]), turning it back along
//! the great circle when it strays out; `limited` reports that the cone was active. The
//! skeleton adapters [`solve_chain`] and [`solve_chain_multi`] then project each joint onto
//! its [`JointLimit`](ikarus_core::JointLimit) (in the joint's rest frame) and report whether that projection moved it;
//! `reached` stays true only when the clamped pose still puts the target on the ray.
//!
//! ### Degenerate and invalid input
//!
//! A pole along the joint→target line (or zero) leaves the roll undefined: the shortest-arc
//! aim (`q₁`) is kept, the target is still reached. So is an up axis along the line after the
//! aim (e.g. `up` parallel to `forward` with no offset). A target at the joint, a zero or
//! non-finite `forward` or `up`, NaN or infinite input anywhere, a singular joint transform or
//! a NaN weight, twist or cone angle give the identity correction and `reached = false`. The
//! solver never panics and never returns NaN.
//!
//! Cost: about 50 ns per solve with an offset and a pole (f64, x86-64 baseline; no
//! trigonometry unless `weight < 1`, a twist or a cone is set; five square roots and four
//! divisions); see `BENCHMARKS.md`.
//!
//! ## Example
//!
//! ```
//! use ikarus_core::glam::{DAffine3, DVec3};
//! use ikarus_solve::aim::{solve, AimInput, AimSettings, Pole};
//!
//! // A head at the origin looking along +Z, its eyes 0.1 m in front; look at a point to the
//! // left (+X) and above.
//! let input = AimInput {
//!     joint: DAffine3::IDENTITY,
//!     target: DVec3::new(1.0, 0.5, 0.3),
//!     pole: Pole::Vector(DVec3::Y),
//!     forward: DVec3::Z,
//!     up: DVec3::Y,
//!     offset: DVec3::new(0.0, 0.0, 0.1),
//!     cone_axis: None,
//! };
//! let out = solve(&input, &AimSettings::default());
//! assert!(out.reached);
//! // The corrected line of sight passes through the target.
//! let eye = out.correction * input.offset;
//! let sight = out.correction * input.forward;
//! assert!(sight.cross((input.target - eye).normalize()).length() < 1e-12);
//! ```
//!
//! Seeds: ozz-animation `IKAimJob` (forward, up, pole, twist, offset and weight semantics; the
//! offset handled by the ray/sphere intersection) and its look-at sample (a chain of joints
//! sharing one line of sight). The code is written from the geometry above.

use std::f64::consts::PI;

use glam::{DAffine3, DMat3, DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};
use serde::{Deserialize, Serialize};

use crate::linalg::frames::{adjugate_rows, apply_rows, unit_or_nan, unscaled};
use crate::{IkTask, SolveReport, analytic};

pub use crate::analytic::two_bone::Pole;

mod chain;
pub use chain::*;
mod task;
#[cfg(test)]
mod tests;
pub use task::*;

/// Squared relative size below which a direction counts as degenerate (1e-12 on lengths).
const DEGENERATE: f64 = 1e-24;

/// Relative tolerance on squared distances for "on the ray" (targets on the boundary of the
/// offset sphere count as reached).
const REACH_TOLERANCE: f64 = 1e-12;

/// Angle (radians) within which a limit-clamped line of sight still counts as on target.
const AIM_TOLERANCE: f64 = 1e-9;

/// The geometry of one aim problem: the joint's model-space transform, the target, the pole
/// and the joint-local line of sight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimInput {
    /// The joint to turn: `model_from_joint`, model space. Default identity.
    pub joint: DAffine3,
    /// The point the line of sight should pass through, model space (metres). Default
    /// `(0, 0, 1)`, one metre along the default forward axis.
    pub target: DVec3,
    /// Which way the up axis should face, model space: a direction (`Pole::Vector`, any
    /// length) or a point (`Pole::Hint`, the direction from the joint to it). Only its
    /// component normal to the joint→target line matters. Default `Pole::Vector(+Y)`.
    pub pole: Pole,
    /// The axis that should point at the target, joint-local, any non-zero length. Default
    /// +Z (the built-in humanoid's heads and eyes look along +Z; ozz's default is +X).
    pub forward: DVec3,
    /// The axis kept facing the pole, joint-local, any non-zero length; best not parallel to
    /// `forward`. Default +Y.
    pub up: DVec3,
    /// Where the line of sight starts, joint-local (metres): the eyes' position relative to a
    /// head joint, for example. Default zero (the ray starts at the joint).
    pub offset: DVec3,
    /// Centre of the cone limit ([`AimSettings::max_angle`]), joint-local (the current frame,
    /// the one `forward` is in), any non-zero length; `None` centres it on `forward`, so the
    /// cone bounds how far the joint turns from its current pose. [`AimChain::input`] sets it
    /// to the rest pose's forward axis. Default `None`.
    pub cone_axis: Option<DVec3>,
}

impl Default for AimInput {
    fn default() -> Self {
        Self {
            joint: DAffine3::IDENTITY,
            target: DVec3::Z,
            pole: Pole::default(),
            forward: DVec3::Z,
            up: DVec3::Y,
            offset: DVec3::ZERO,
            cone_axis: None,
        }
    }
}

/// Options of the aim solver, shared by a batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimSettings {
    /// Rotation of the up axis about the joint→target line, radians, right-handed about
    /// joint→target, model space (the pole is turned by this angle before solving). Default 0.
    pub twist_angle: f64,
    /// Blend between no correction (0) and the full correction (1), clamped to `[0, 1]`; the
    /// correction is slerped from identity, so 0.5 turns by half the angle. Default 1. Below 1
    /// the target is not reached and `reached` is false. NaN makes the solve invalid.
    pub weight: f64,
    /// Cone limit: the largest angle (radians) between the corrected forward axis and
    /// [`AimInput::cone_axis`], clamped to `[0, π]`. Default π: no limit. Small values keep
    /// the joint close to its reference direction (0 locks the forward axis on it); an aim
    /// that would leave the cone is turned back onto its rim, with `limited` set and
    /// `reached` false. NaN makes the solve invalid.
    pub max_angle: f64,
}

impl Default for AimSettings {
    fn default() -> Self {
        Self {
            twist_angle: 0.0,
            weight: 1.0,
            max_angle: PI,
        }
    }
}

/// The solution: the rotation to post-multiply onto the joint's local rotation.
/// The default is [`IDENTITY`](Self::IDENTITY) (glam's default quaternion is the identity).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AimOutput {
    /// Correction in the joint's local space (`local.rotation *= correction`).
    pub correction: DQuat,
    /// True when the corrected pose puts the target on the line of sight: the target is
    /// reachable (see the [module docs](self)), `weight` is 1, and no limit moved the aim off
    /// the target.
    pub reached: bool,
    /// True when a limit changed the correction: the cone of [`AimSettings::max_angle`] in
    /// [`solve`], or also the joint's [`JointLimit`](ikarus_core::JointLimit) in the skeleton
    /// adapters.
    pub limited: bool,
}

impl AimOutput {
    /// Identity correction, not reached, not limited: what invalid input returns.
    pub const IDENTITY: Self = Self {
        correction: DQuat::IDENTITY,
        reached: false,
        limited: false,
    };

    /// Post-multiplies the correction onto `joint`'s local rotation (renormalized), without
    /// limits ([`solve_chain`] applies the joint's limit too).
    ///
    /// # Panics
    /// When `joint` is not in `pose`.
    pub fn apply_to(&self, joint: JointId, pose: &mut LocalPose) {
        let rotation = &mut pose[joint].rotation;
        *rotation = (*rotation * self.correction).normalize();
    }
}

/// Solves one aim problem (see the [module docs](self) for the method and conventions).
///
/// Pure: reads the model-space transform and returns the local correction. Never panics and
/// never returns NaN; invalid input gives [`AimOutput::IDENTITY`].
#[inline]
pub fn solve(input: &AimInput, settings: &AimSettings) -> AimOutput {
    let out = solve_unchecked(input, settings);
    if out.correction.is_finite() {
        out
    } else {
        AimOutput::IDENTITY
    }
}

/// Solves every input with the same settings into `outputs` (same length). Allocates nothing.
///
/// # Panics
/// When `inputs` and `outputs` have different lengths.
pub fn solve_slice(inputs: &[AimInput], settings: &AimSettings, outputs: &mut [AimOutput]) {
    assert_eq!(
        inputs.len(),
        outputs.len(),
        "solve_slice: one output per input"
    );
    for (input, output) in inputs.iter().zip(outputs) {
        *output = solve(input, settings);
    }
}

/// [`solve`] without the input checks: one straight-line computation of about 100 lines (the
/// aim, the roll about the line of sight, the weight, the cone limit), split only by its
/// comments.
fn solve_unchecked(input: &AimInput, settings: &AimSettings) -> AimOutput {
    let weight = settings.weight;
    if weight.is_nan() || weight <= 0.0 || settings.max_angle.is_nan() {
        return AimOutput::IDENTITY; // weight ≤ 0 or NaN, cone angle NaN
    }

    // Joint space scaled by |det|: `joint_from_model` is the adjugate over the determinant,
    // and instead of dividing by it (a division at the head of the dependency chain) the
    // offset is multiplied by |det|. The offset sphere compares lengths in joint space, so
    // the scale must be the same on both sides; its size does not matter.
    let (rows, det) = adjugate_rows(&input.joint.matrix3);
    if !det.is_normal() {
        return AimOutput::IDENTITY; // singular or non-finite transform
    }
    let sign = 1.0_f64.copysign(det);
    let origin = input.joint.translation;
    let to_target = input.target - origin;
    let pole = input
        .pole
        .direction(origin, to_target, settings.twist_angle);
    let t = apply_rows(rows, to_target) * sign;
    let p = apply_rows(rows, pole) * sign;
    let f = unit_or_nan(input.forward);
    let u = input.up;
    let o = input.offset * det.abs();
    let t2 = t.length_squared();
    if !(t2.is_normal()
        && u.length_squared().is_normal()
        && f.is_finite()
        && o.is_finite()
        && p.is_finite())
    {
        return AimOutput::IDENTITY; // target at the joint, zero axes, non-finite input
    }

    // 1. The ray's point at the target's distance from the joint (or, out of reach, its
    //    point closest to the joint).
    let along = f.dot(o);
    let closest = o - f * along; // c: the line's point closest to the joint
    let c2 = closest.length_squared();
    let o2 = o.length_squared();
    let reachable =
        t2 >= o2 * (1.0 - REACH_TOLERANCE) || (along <= 0.0 && c2 <= t2 * (1.0 + REACH_TOLERANCE));
    let i = if reachable {
        closest + f * (t2 - c2).max(0.0).sqrt()
    } else if along < 0.0 {
        closest
    } else {
        o
    };

    // 2–3. Aim and roll in one rotation: the frame (i, up across i) onto the frame (t, pole
    //    across t). It takes i onto t (the ray through the target) and the up axis into the
    //    (t, pole) plane on the pole's side; rotations preserve the angle between i and up,
    //    so that is the roll q₂ after the shortest arc q₁. All scaled by 1/|t|, so that no
    //    product of squared lengths overflows.
    let inv_r = t2.sqrt().recip();
    let k = t * inv_r; // unit joint→target direction
    let i = i * inv_r; // unit when reachable
    let i2 = i.length_squared();
    let up_across = u * i2 - i * i.dot(u); // i2 × (up's part normal to i)
    let pole_across = p - k * k.dot(p);
    let up_across2 = up_across.length_squared();
    let pole_across2 = pole_across.length_squared();
    let correction = if i2 > DEGENERATE
        && up_across2 > DEGENERATE * i2 * i2 * u.length_squared()
        && pole_across2 > DEGENERATE * p.length_squared()
    {
        let scale_u = i2.sqrt().recip(); // 1 / (|i| |k|)
        let scale_v = (up_across2 * pole_across2).sqrt().recip();
        rotation_between_frames(
            [i, up_across, i.cross(up_across)],
            [k, pole_across, k.cross(pole_across)],
            [scale_u, scale_v, scale_u * scale_v],
        )
    } else if i2 > DEGENERATE {
        // No roll preference (pole along the line or zero, up along i): the shortest arc.
        arc(i, k, i2)
    } else {
        DQuat::IDENTITY // i at the joint (rounding only): every rotation is as good
    };

    let mut out = AimOutput {
        correction,
        reached: reachable,
        limited: false,
    };
    if weight < 1.0 {
        out.correction = slerp_from_identity(out.correction, weight);
        out.reached = false;
    }
    if settings.max_angle < PI {
        cone_limit(
            &mut out,
            f,
            input.cone_axis.unwrap_or(f),
            settings.max_angle,
        );
    }
    out
}

/// The shortest-arc rotation taking direction `from` (squared length `from2`) onto the unit
/// direction `to`. Exactly opposite directions turn by π about an axis normal to `from`.
#[inline(never)]
fn arc(from: DVec3, to: DVec3, from2: f64) -> DQuat {
    let n = from2.sqrt();
    let dot = from.dot(to); // n cos φ
    let cross = from.cross(to); // n sin φ · axis
    let cross2 = cross.length_squared();
    // Half-angle quaternion ∝ (cross, n + dot); for dot < 0, n + dot = |cross|² / (n − dot)
    // avoids the cancellation.
    let w = if dot >= 0.0 {
        n + dot
    } else {
        cross2 / (n - dot)
    };
    if cross2 > DEGENERATE * n * n || dot >= 0.0 {
        DQuat::from_xyzw(cross.x, cross.y, cross.z, w).normalize()
    } else {
        let axis = (from / n).any_orthonormal_vector();
        DQuat::from_xyzw(axis.x, axis.y, axis.z, 0.0)
    }
}

/// `q` turned by `weight` of its angle, about the same axis (shortest way), `weight` in
/// `(0, 1)`; exact for small angles (no `acos` near 1).
#[inline(never)]
fn slerp_from_identity(q: DQuat, weight: f64) -> DQuat {
    let q = if q.w < 0.0 { -q } else { q };
    let v = q.xyz();
    let sin_half = v.length();
    if sin_half == 0.0 {
        return DQuat::IDENTITY;
    }
    let half = sin_half.atan2(q.w) * weight;
    let (sin, cos) = half.sin_cos();
    let axis = v / sin_half;
    DQuat::from_xyzw(axis.x * sin, axis.y * sin, axis.z * sin, cos)
}

/// Turns `out.correction` back along the great circle so that the corrected `forward` lies
/// within `max_angle` of `cone_axis` (both joint-local); sets `limited` (and clears
/// `reached`) when it had to.
#[inline(never)]
fn cone_limit(out: &mut AimOutput, forward: DVec3, cone_axis: DVec3, max_angle: f64) {
    if !cone_axis.length_squared().is_normal() {
        out.correction = DQuat::NAN; // zero or non-finite cone axis: `solve` returns identity
        return;
    }
    let max_angle = max_angle.max(0.0);
    let aimed = out.correction * forward;
    let cross = aimed.cross(cone_axis);
    let sin = cross.length();
    let angle = sin.atan2(aimed.dot(cone_axis));
    if angle <= max_angle {
        return;
    }
    let axis = if sin > 1e-12 * aimed.length() * cone_axis.length() {
        cross / sin
    } else {
        aimed.normalize().any_orthonormal_vector() // straight away from the cone: any way back
    };
    out.correction = (DQuat::from_axis_angle(axis, angle - max_angle) * out.correction).normalize();
    out.limited = true;
    out.reached = false;
}

// Aim's copy inlines where LLVM chooses.
rotation_between_frames!(#[inline]);
