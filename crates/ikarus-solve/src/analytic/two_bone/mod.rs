//! Closed-form two-bone IK: an arm or a leg (start → mid → end joint) whose mid joint is a
//! hinge, solved exactly in one pass — the job of ozz-animation's `IKTwoBoneJob` and Unity's
//! two-bone IK constraint.
//!
//! ## Conventions
//!
//! - Column vectors, right-handed, radians, quaternions `[x, y, z, w]` (glam [`DQuat`]), f64.
//! - Joint transforms are `model_from_joint` ([`DAffine3`]): model-space positions of the three
//!   joints are their translations. They may carry any translation, rotation, uniform or
//!   non-uniform scale, shear and mirroring (negative determinant) inherited from their parents.
//! - Outputs are **corrections in the joints' local space**: post-multiply them onto the local
//!   rotations, `local.rotation = local.rotation * correction` ([`TwoBoneOutput::apply_to`]).
//!   Equivalently the solver's model of the result is `model_from_joint * rotation(correction)`.
//!
//! ## What it computes
//!
//! [`solve`] is a pure function of the model-space transforms:
//!
//! 1. Everything is expressed in the start joint's space, where the start correction is a plain
//!    rotation. `start_from_model` is applied up to a factor, as the adjugate of the start
//!    transform (no division): lengths are only compared within that space.
//! 2. The mid joint rotates about `mid_axis` only (a hinge). With `a` the start→mid bone, `b` the
//!    mid→end bone and `n` the hinge axis (all in start space), the distance start→end is
//!    `d² = |a|² + |b|² + 2(a·n)(b·n) + 2ρ cos φ` where `ρ = |a⊥||b⊥|` (components normal to
//!    `n`) and `φ` the flexion angle about `n` (0 = straight). The law of cosines gives the
//!    target flexion `φ*` in `[0, π]`; the correction is `φ* − φ`, built from cosines and sines
//!    with square roots only (no `acos`/`atan2`). Positive rotation about `mid_axis` flexes
//!    the joint, so the solution always bends the anatomical way; an axis oblique to the bones
//!    is handled exactly (it narrows the reachable range).
//! 3. The start correction is the rotation taking the corrected chain's frame (start→end
//!    direction, bend-plane normal) onto the target frame (start→target direction, normal of the
//!    plane holding the start→target axis and the pole), so the end lands on the target and the
//!    mid joint lies in that plane, on the pole's side.
//!
//! Planes and "which side" are preserved by linear maps, so the pole condition holds in model
//! space whatever the parents' scale; twist is applied to the pole in model space, so the bend
//! plane turns by exactly `twist_angle` in model space too.
//!
//! ### Non-uniform scale: what "reached" means
//!
//! Reached means the end joint's **model-space position equals the target** (after FK of the
//! corrected pose). This is exact for any transform above the start joint, including
//! non-uniform scale, shear and mirroring: the chain is solved in start space, where the start
//! correction is a rotation. It needs the mid joint's transform relative to the start joint to
//! be a similarity (rotation, uniform scale, optional mirror), i.e. the start joint's own local
//! scale uniform; [`solve_chain`] removes the joints' own scale so that the mid joint's own
//! scale may be anything. Distances such as "fully extended" and the soften zone are measured
//! in start space (equal to model space up to the uniform scale when the parents are
//! similarities).
//!
//! ### Unreachable targets and degenerate input
//!
//! Too far: the chain straightens and points at the target (the closest pose). Too close: it
//! folds as far as the hinge allows, pointing at the target. Both give `reached = false`.
//! A target at the start joint folds the chain and leaves the start joint as it is; a pole
//! parallel to start→target (or zero) keeps the bend plane as close as possible to its current
//! orientation; a bone along the hinge axis (or of zero length) keeps the mid joint as it is.
//! NaN or infinite input, a singular start or mid transform or a zero `mid_axis` give
//! identity corrections and `reached = false`. The solver never panics and never returns NaN.
//!
//! Cost: about 55–58 ns per [`solve`] here (f64; no `acos`/`atan2`, six square roots and six
//! divisions on the common path), and about 26 ns per problem through [`solve_slice`], which
//! solves 8 problems at once with AVX-512 (4 with AVX2). Both pick the instruction set at run
//! time and give the same bits on every machine; see `BENCHMARKS.md`.
//!
//! ## Example
//!
//! ```
//! use ikarus_core::glam::{DAffine3, DVec3};
//! use ikarus_solve::two_bone::{solve, Pole, TwoBoneInput, TwoBoneSettings};
//!
//! // A straight arm along +X (two 1 m bones) whose elbow flexes about +Z.
//! let input = TwoBoneInput {
//!     start_joint: DAffine3::IDENTITY,
//!     mid_joint: DAffine3::from_translation(DVec3::X),
//!     end_joint: DAffine3::from_translation(DVec3::X * 2.0),
//!     target: DVec3::new(1.0, 1.0, 0.0),
//!     pole: Pole::Vector(DVec3::new(1.0, -1.0, 0.0)), // elbow towards +X −Y
//!     mid_axis: DVec3::Z,
//! };
//! let out = solve(&input, &TwoBoneSettings::default());
//! assert!(out.reached);
//! // Rigid chain: the corrected end is start · (mid offset + mid · end offset).
//! let end = out.start_correction * (DVec3::X + out.mid_correction * DVec3::X);
//! assert!((end - input.target).length() < 1e-12);
//! ```
//!
//! Seeds: ozz-animation `IKTwoBoneJob` (start-space formulation, pole and twist semantics,
//! soften, weight), Unity Animation Rigging `TwoBoneIKConstraint` (hint position). The code is
//! written from the geometry above.

use glam::{DAffine3, DMat3, DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, fk};
use serde::{Deserialize, Serialize};

use crate::analytic::ChainEngine;
use crate::linalg::frames::{adjugate_rows, apply_rows, twist, unit_or_nan, unscaled};
use crate::{FitError, IkTask, SolveReport, analytic};

mod many;
mod simd;

mod chain;
pub use chain::*;
mod task;
#[cfg(test)]
mod tests;
pub use task::*;

pub(crate) use many::TwoBoneLanes;

/// Squared relative size below which a direction counts as degenerate (1e-12 on lengths).
const DEGENERATE: f64 = 1e-24;

/// Relative tolerance on squared distances for "within reach" (targets on the boundary of the
/// reachable shell count as reached).
const REACH_TOLERANCE: f64 = 1e-12;

/// Where the bend plane should face: the mid joint (elbow, knee) ends up in the plane holding
/// the start→target axis and this direction, on its side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pole {
    /// A direction in model space (ozz-animation's `pole_vector`): the elbow or knee points
    /// along its component normal to the start→target axis. Any length.
    Vector(DVec3),
    /// A position in model space (Unity's "hint"): the mid joint lies in the plane through the
    /// start joint, the target and this point, on the point's side. Same as
    /// `Vector(hint − start)`.
    Hint(DVec3),
}

impl Default for Pole {
    /// `Vector(+Y)`, ozz's default.
    fn default() -> Self {
        Self::Vector(DVec3::Y)
    }
}

impl Pole {
    /// The pole as a direction from `origin` (the start joint), turned by `twist_angle` about
    /// `to_target` (the start→target axis) when it is not 0.
    #[allow(clippy::inline_always)] // the closed forms' hot path: as written inline
    #[inline(always)]
    pub(crate) fn direction(self, origin: DVec3, to_target: DVec3, twist_angle: f64) -> DVec3 {
        let pole = match self {
            Self::Vector(v) => v,
            Self::Hint(h) => h - origin,
        };
        if twist_angle == 0.0 {
            pole
        } else {
            twist(pole, to_target, twist_angle)
        }
    }
}

/// The geometry of one two-bone problem: the joints' model-space transforms, the target, the
/// pole and the hinge axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneInput {
    /// The start joint (shoulder, hip): `model_from_joint`, model space. Default identity.
    pub start_joint: DAffine3,
    /// The mid joint (elbow, knee): `model_from_joint`, model space. Default identity.
    pub mid_joint: DAffine3,
    /// The end joint (wrist, ankle): `model_from_joint`, model space; only its translation is
    /// read. Default identity.
    pub end_joint: DAffine3,
    /// Where the end joint should go, model space (metres). Default the origin.
    pub target: DVec3,
    /// Which way the bend plane faces, model space. Default `Pole::Vector(+Y)`.
    pub pole: Pole,
    /// The mid joint's hinge axis in the mid joint's local space (the space its correction
    /// rotates in), any non-zero length; positive rotation about it flexes the joint. Usually
    /// perpendicular to both bones; an oblique axis is solved exactly but narrows the reach.
    /// Default +Z (ozz's default).
    pub mid_axis: DVec3,
}

impl Default for TwoBoneInput {
    fn default() -> Self {
        Self {
            start_joint: DAffine3::IDENTITY,
            mid_joint: DAffine3::IDENTITY,
            end_joint: DAffine3::IDENTITY,
            target: DVec3::ZERO,
            pole: Pole::default(),
            mid_axis: DVec3::Z,
        }
    }
}

/// Options of the two-bone solver, shared by a batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneSettings {
    /// Rotation of the bend plane about the start→target axis, radians, right-handed about
    /// start→target, model space (the pole is turned by this angle before solving). Default 0.
    pub twist_angle: f64,
    /// Fraction of the full reach (start→end distance with the chain straight) up to which
    /// targets are reached exactly, clamped to `[0, 1]`. Default 1: no softening, the chain
    /// snaps straight as the target crosses the full reach. Below 1, a target at distance
    /// `x > da = soften · reach` is approached to `da + ds·(1 − e^(−(x − da)/ds))` with
    /// `ds = reach − da`: continuous with slope 1 at `da`, increasing with `x`, and reaching
    /// full extension only at infinity, so the arm never snaps. Targets in that soft zone
    /// are not reached (`reached = false`). Small values start softening early (0 softens
    /// everything); values near 1 soften only the last bit. NaN makes the solve invalid.
    pub soften: f64,
    /// Blend between no correction (0) and the full correction (1), clamped to `[0, 1]`;
    /// corrections are slerped from identity. Default 1. Below 1 the end joint does not reach
    /// the target and `reached` is false. NaN makes the solve invalid.
    pub weight: f64,
}

impl Default for TwoBoneSettings {
    fn default() -> Self {
        Self {
            twist_angle: 0.0,
            soften: 1.0,
            weight: 1.0,
        }
    }
}

/// The solution: rotations to post-multiply onto the start and mid joints' local rotations.
/// The default is [`IDENTITY`](Self::IDENTITY) (glam's default quaternion is the identity).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TwoBoneOutput {
    /// Correction of the start joint in its local space (`local.rotation *= start_correction`).
    pub start_correction: DQuat,
    /// Correction of the mid joint in its local space, a rotation about `mid_axis`
    /// (`local.rotation *= mid_correction`).
    pub mid_correction: DQuat,
    /// True when the corrected pose puts the end joint on the target: the target is within
    /// reach (between fully folded and full extension, within 1e-12 relative), softening
    /// did not hold the end back (by more than 1e-12 relative), and `weight` is 1.
    pub reached: bool,
}

impl TwoBoneOutput {
    /// Identity corrections, not reached: what invalid input returns.
    pub const IDENTITY: Self = Self {
        start_correction: DQuat::IDENTITY,
        mid_correction: DQuat::IDENTITY,
        reached: false,
    };

    /// Post-multiplies the corrections onto the local rotations of the chain's start and mid
    /// joints (renormalized).
    ///
    /// # Panics
    /// When the chain's joints are not in `pose` (a chain of another skeleton).
    pub fn apply_to(&self, chain: &TwoBoneChain, pose: &mut LocalPose) {
        let start = &mut pose[chain.start].rotation;
        *start = (*start * self.start_correction).normalize();
        let mid = &mut pose[chain.mid].rotation;
        *mid = (*mid * self.mid_correction).normalize();
    }
}

/// Solves one two-bone problem (see the [module docs](self) for the method and conventions).
///
/// Pure: reads the model-space transforms and returns the local corrections. Never panics and
/// never returns NaN; invalid input gives [`TwoBoneOutput::IDENTITY`].
#[inline]
pub fn solve(input: &TwoBoneInput, settings: &TwoBoneSettings) -> TwoBoneOutput {
    pulp::Arch::new().dispatch(Solve { input, settings })
}

/// [`solve_unchecked`], with non-finite results turned into [`TwoBoneOutput::IDENTITY`].
#[allow(clippy::inline_always)] // inlined into the instruction-set dispatch of its callers
#[inline(always)]
fn solve_checked(input: &TwoBoneInput, settings: &TwoBoneSettings) -> TwoBoneOutput {
    let out = solve_unchecked(input, settings);
    if out.start_correction.is_finite() && out.mid_correction.is_finite() {
        out
    } else {
        TwoBoneOutput::IDENTITY
    }
}

/// [`solve_unchecked`] as a [`pulp::WithSimd`] operation, so that it is inlined into the code
/// compiled for the instruction set dispatched to (AVX2, AVX-512, or the baseline). The same
/// IEEE operations run in the same order on every path, so every machine gets the same bits.
struct Solve<'a> {
    input: &'a TwoBoneInput,
    settings: &'a TwoBoneSettings,
}

impl pulp::WithSimd for Solve<'_> {
    type Output = TwoBoneOutput;

    #[allow(clippy::inline_always)] // the point: compiled inside the dispatched function
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> TwoBoneOutput {
        solve_checked(self.input, self.settings)
    }
}

/// Solves every input with the same settings into `outputs` (same length). Allocates nothing.
///
/// Each output is exactly [`solve`]'s for its input. Without softening or blending
/// (`soften` ≥ 1, `weight` ≥ 1, the defaults) the problems are solved several at a time in
/// SIMD lanes — 4 with AVX2, 8 with AVX-512, chosen at run time — and only the rare lanes that
/// need a special case (singular joints, a straight or folded chain, a pole along the target
/// axis, non-finite input) go through the scalar solver.
///
/// # Panics
/// When `inputs` and `outputs` have different lengths.
pub fn solve_slice(
    inputs: &[TwoBoneInput],
    settings: &TwoBoneSettings,
    outputs: &mut [TwoBoneOutput],
) {
    assert_eq!(
        inputs.len(),
        outputs.len(),
        "solve_slice: one output per input"
    );
    if settings.soften >= 1.0 && settings.weight >= 1.0 {
        pulp::Arch::new().dispatch(simd::Batch {
            inputs,
            settings,
            outputs,
        });
    } else {
        for (input, output) in inputs.iter().zip(outputs) {
            *output = solve(input, settings);
        }
    }
}

/// The pole vector that reproduces a pose's bend plane: the unit component of `mid − start`
/// normal to the start→end line (model space). Solving with `Pole::Vector` of it (or
/// `Pole::Hint(start + it)`) and the end position as target keeps the plane. `None` when the
/// chain is straight or a point coincides (no plane), or for non-finite input.
pub fn recover_pole(start: DVec3, mid: DVec3, end: DVec3) -> Option<DVec3> {
    let line = end - start;
    let to_mid = mid - start;
    let line2 = line.length_squared();
    let mid2 = to_mid.length_squared();
    if !(line2.is_normal() && mid2.is_normal()) {
        return None;
    }
    let normal = to_mid - line * (line.dot(to_mid) / line2);
    let normal2 = normal.length_squared();
    (normal2 > DEGENERATE * mid2).then(|| normal / normal2.sqrt())
}

#[allow(clippy::too_many_lines)] // one straight-line computation, split only by its comments
#[allow(clippy::inline_always)] // inlined into `solve`'s instruction-set dispatch
#[inline(always)]
fn solve_unchecked(input: &TwoBoneInput, settings: &TwoBoneSettings) -> TwoBoneOutput {
    if settings.weight.is_nan() || settings.weight <= 0.0 || settings.soften.is_nan() {
        return TwoBoneOutput::IDENTITY; // weight ≤ 0 or NaN, soften NaN
    }

    // `start_from_model` up to its determinant (adjugate rows, no division): the problem only
    // compares lengths within start space, so that space's scale is irrelevant.
    let mid_matrix = input.mid_joint.matrix3;
    let (rows, det_start) = adjugate_rows(&input.start_joint.matrix3);
    let det_mid = mid_matrix.determinant();
    if !(det_start.is_normal() && det_mid.is_normal()) {
        return TwoBoneOutput::IDENTITY; // singular or non-finite transform
    }
    let axis = unit_or_nan(input.mid_axis);

    let origin = input.start_joint.translation;
    let to_mid = input.mid_joint.translation - origin;
    let mid_to_end = input.end_joint.translation - input.mid_joint.translation;
    let to_target = input.target - origin;
    let pole = input
        .pole
        .direction(origin, to_target, settings.twist_angle);

    // Start space. `axis_s` (N) is the hinge axis seen from the start joint, not normalized:
    // the hinge scalars below carry powers of |N|² instead, so no division or square root
    // heads the dependency chain. The hinge turns about n = sign · N / |N|, sign = sign(det
    // mid) (axes are pseudovectors).
    let a = apply_rows(rows, to_mid);
    let b = apply_rows(rows, mid_to_end);
    let t = apply_rows(rows, to_target);
    let p = apply_rows(rows, pole);
    let axis_s = apply_rows(rows, mid_matrix * axis);
    let n2 = axis_s.length_squared();

    // Hinge: d² = base + 2ρ cos φ with (ρ cos φ, ρ sin φ) = (cos_now, sin_now), φ the flexion;
    // every quantity here is scaled by |N|² (squared ones by |N|⁴).
    let a2 = a.length_squared();
    let b2 = b.length_squared();
    let a_n = a.dot(axis_s);
    let b_n = b.dot(axis_s);
    let a_x_b_n = a.cross(b).dot(axis_s);
    let cos_now = a.dot(b) * n2 - a_n * b_n;
    let rho2 = cos_now * cos_now + a_x_b_n * a_x_b_n * n2;
    let size2 = (a2 + b2) * n2;
    let base = size2 + 2.0 * a_n * b_n;
    let x2 = t.length_squared();

    // Distance aimed at (× |N|²), softened near full extension.
    let (aim2, softened) = if settings.soften < 1.0 {
        soften_aim(settings.soften, x2, base, rho2, n2)
    } else {
        (x2 * n2, false)
    };

    // Target flexion (ρ cos φ*, ρ sin φ*) with φ* in [0, π], clamped to the reachable range.
    let inv_n = n2.sqrt().recip().copysign(det_mid);
    let sin_now = a_x_b_n * n2 * inv_n;
    let half_gap = 0.5 * (aim2 - base);
    // Half the tolerance on d², relative to |a|² + |b|² (≥ half the largest d²).
    let tolerance = REACH_TOLERANCE * size2;
    let flexible = rho2 > DEGENERATE * size2 * size2;
    let (cos_new, sin_new, in_range) = if !flexible {
        (cos_now, sin_now, half_gap.abs() <= tolerance)
    } else if half_gap * half_gap <= rho2 {
        let sin = (rho2 - half_gap * half_gap).sqrt();
        (half_gap, sin, true)
    } else {
        let rho = rho2.sqrt();
        (
            rho.copysign(half_gap),
            0.0,
            half_gap.abs() <= rho + tolerance,
        )
    };

    // Mid correction ψ = φ* − φ about `axis`, from (cos ψ, sin ψ) by the half-angle formulas.
    let (cos_psi, sin_psi) = if flexible {
        let inv = rho2.recip();
        (
            (cos_new * cos_now + sin_new * sin_now) * inv,
            (sin_new * cos_now - cos_new * sin_now) * inv,
        )
    } else {
        (1.0, 0.0)
    };
    let (half_cos, half_sin) = if cos_psi >= 0.0 {
        let s = (2.0 * (1.0 + cos_psi)).sqrt().recip();
        ((1.0 + cos_psi) * s, sin_psi * s)
    } else {
        let s = (2.0 * (1.0 - cos_psi)).sqrt().recip();
        (sin_psi * s, (1.0 - cos_psi) * s) // the same rotation, quaternion possibly negated
    };
    let mid_correction = DQuat::from_xyzw(
        axis.x * half_sin,
        axis.y * half_sin,
        axis.z * half_sin,
        half_cos,
    );

    // The corrected chain: b turned by ψ about n (Rodrigues).
    let along = axis_s * (b_n * inv_n * inv_n); // (b·n) n
    let across = axis_s.cross(b) * inv_n; // n × b
    let e_new = a + along + (b - along) * cos_psi + across * sin_psi;

    // Start correction: frame (start→end, bend normal) onto (start→target, pole-plane normal).
    // The frames' norms come from scalars known before `e_new` (|e'|² = base + 2ρ cos φ*,
    // |e' × a|² from the parts along and across the axis), so no square root waits for it.
    let e2 = base + 2.0 * cos_new;
    let normal2 =
        sin_new * sin_new + a_n * a_n * (b2 * n2 - b_n * b_n) + b_n * b_n * (a2 * n2 - a_n * a_n)
            - 2.0 * a_n * b_n * cos_new;
    let normal_aim = t.cross(p);
    let normal_aim2 = normal_aim.length_squared();
    let can_aim = e2 > DEGENERATE * size2 && x2 * n2 > DEGENERATE * size2;
    let start_correction = if can_aim
        && normal2 > DEGENERATE * e2 * a2 * n2
        && normal_aim2 > DEGENERATE * x2 * p.length_squared()
    {
        let scale_u = (n2 / (e2 * x2)).sqrt();
        let scale_v = n2 / (normal2 * normal_aim2).sqrt();
        let normal_now = e_new.cross(a);
        rotation_between_frames(
            [e_new, normal_now, e_new.cross(normal_now)],
            [t, normal_aim, t.cross(normal_aim)],
            [scale_u, scale_v, scale_u * scale_v],
        )
    } else if !(a + b + t + p + axis_s).is_finite() {
        // Non-finite input lands here (its comparisons above are false) or gives NaN, which
        // `solve` turns into identity.
        return TwoBoneOutput::IDENTITY;
    } else if can_aim {
        aim_degenerate(e_new, a, axis_s * inv_n, t, p)
    } else {
        DQuat::IDENTITY
    };

    let reached = in_range && !softened && (can_aim || x2 * n2 <= tolerance);
    let out = TwoBoneOutput {
        start_correction,
        mid_correction,
        reached,
    };
    if settings.weight < 1.0 {
        blend(out, settings.weight)
    } else {
        out
    }
}

/// The softened squared distance (× `n2`) for a target at squared distance `x2` (start
/// space), and whether softening holds the end back; `base`, `rho2` and `n2` as in the hinge.
#[inline(never)]
fn soften_aim(soften: f64, x2: f64, base: f64, rho2: f64, n2: f64) -> (f64, bool) {
    let full = ((base + 2.0 * rho2.sqrt()) / n2).max(0.0).sqrt();
    let x = x2.sqrt();
    match soft_distance(x, full, soften) {
        Some(aim) => (aim * aim * n2, x - aim > REACH_TOLERANCE * full),
        None => (x2 * n2, false),
    }
}

/// The soft reach of [`TwoBoneSettings::soften`]: a target `x` from the chain's start, of a
/// chain reaching `full`, is aimed at `da + ds·(1 − e^(−(x − da)/ds))` past
/// `da = soften · full` (`ds = full − da`), which rises with `x` and reaches `full` only at
/// infinity; `None` where no softening applies (`x ≤ da`, or `soften ≥ 1`). For a caller
/// that softens its goals before any solver sees them (stepped feet in tracking).
#[must_use]
pub fn soft_distance(x: f64, full: f64, soften: f64) -> Option<f64> {
    let da = full * soften.max(0.0);
    let ds = full - da;
    (x > da && ds > 0.0).then(|| da - ds * (-(x - da) / ds).exp_m1())
}

/// The corrections slerped from identity by `weight` in `(0, 1)`; never reached.
#[inline(never)]
fn blend(out: TwoBoneOutput, weight: f64) -> TwoBoneOutput {
    TwoBoneOutput {
        start_correction: DQuat::IDENTITY.slerp(out.start_correction, weight),
        mid_correction: DQuat::IDENTITY.slerp(out.mid_correction, weight),
        reached: false,
    }
}

/// The start correction when a plane is missing: a straight or folded chain (its bend normal
/// is then the limit as the hinge flexes, `−axis`), or a pole along start→target (the target
/// plane is then the one closest to the chain's). All vectors in start space, `axis` unit.
#[inline(never)]
fn aim_degenerate(end: DVec3, mid: DVec3, axis: DVec3, aim: DVec3, pole: DVec3) -> DQuat {
    let end2 = end.length_squared();
    let aim2 = aim.length_squared();
    let mut normal = end.cross(mid);
    if normal.length_squared() <= DEGENERATE * end2 * mid.length_squared() {
        normal = end * (end.dot(axis) / end2) - axis;
        if normal.length_squared() <= DEGENERATE {
            normal = end.any_orthogonal_vector();
        }
    }
    let mut normal_aim = aim.cross(pole);
    if normal_aim.length_squared() <= DEGENERATE * aim2 * pole.length_squared() {
        normal_aim = normal - aim * (aim.dot(normal) / aim2);
        if normal_aim.length_squared() <= DEGENERATE * normal.length_squared() {
            normal_aim = aim.any_orthogonal_vector();
        }
    }
    let scale_u = (end2 * aim2).sqrt().recip();
    let scale_v = (normal.length_squared() * normal_aim.length_squared())
        .sqrt()
        .recip();
    rotation_between_frames(
        [end, normal, end.cross(normal)],
        [aim, normal_aim, aim.cross(normal_aim)],
        [scale_u, scale_v, scale_u * scale_v],
    )
}

// Left to itself LLVM calls two-bone's copy: 67 ns per solve instead of 75.
rotation_between_frames!(#[allow(clippy::inline_always)] #[inline(always)]);
