//! Analytic IK for a 7-DOF limb — shoulder (3 DOF), elbow (1 DOF hinge), wrist (3 DOF) — with
//! the elbow's swivel angle as the free parameter (seed 000, 7-DOF limb; Tolani, Goswami and
//! Badler, "Real-time inverse kinematics techniques for anthropomorphic limbs", Graphical Models
//! 62(5), 2000).
//!
//! ## Conventions
//!
//! - Column vectors, right-handed, radians, quaternions `[x, y, z, w]` (glam [`DQuat`]), f64.
//!   The seed's Direct3D row-major layout and degrees are not used.
//! - Everything the pure functions read and return is in the **limb frame**: the shoulder's
//!   parent frame moved to the shoulder joint, i.e. the frame the shoulder's *local* rotation is
//!   expressed in. The shoulder sits at its origin. [`Limb7Chain`] converts from model space.
//! - Joint rotations are **local rotations** (absolute, not corrections): the shoulder's is
//!   `limb_from_shoulder`, the elbow's is a hinge angle about [`Limb7Geometry::elbow_axis`], the
//!   wrist's is its local rotation in its parent frame.
//!
//! ## The limb
//!
//! [`Limb7Geometry`] describes the chain at elbow angle 0 whatever its rest orientations and bone
//! lengths: the elbow's position in the shoulder frame (`upper`), the elbow's frame relative to
//! the shoulder (`elbow_frame`), the hinge axis and range, the wrist's position in the elbow
//! frame (`lower`) and the wrist's parent frame relative to the elbow (`wrist_frame`). The seed's
//! limb (bones along +Z, elbow about +Y, 0..180°) is one instance; the arms and legs of the
//! built-in humanoid and of BVH skeletons are others ([`Limb7Chain`] reads them off a skeleton).
//!
//! ## The solution (seed 000, 7-DOF limb: Fig. 4)
//!
//! 1. **Elbow.** The shoulder–wrist distance depends only on the elbow angle θ:
//!    `d² = |a|² + |b|² + 2(a·m)(b·m) + 2ρ cos(θ − θ₀)` with `a` the upper bone, `b` the lower
//!    bone at θ = 0 and `m` the hinge axis (shoulder frame), `ρ = |a⊥||b⊥|` (parts normal to
//!    `m`) and `θ₀` the angle of the straightest pose. The law of cosines gives two angles; the
//!    one inside the hinge range is taken (nearest to `elbow_hint` when both are).
//! 2. **Swivel circle.** With `n̂` the unit shoulder→target axis, the elbow lies on a circle about
//!    `n̂` with centre `c = (a·ŵ) n̂` and radius `r = |a − (a·ŵ)ŵ|` (`ŵ` the shoulder→wrist
//!    direction of the bent limb in the shoulder frame).
//! 3. **Swivel angle φ.** The elbow is at `c + r (cos φ û + sin φ v̂)` with
//!    `û = normalize(s − (s·n̂) n̂)`, `v̂ = n̂ × û`, where `s` is
//!    [`Limb7Geometry::swivel_reference`]: **φ = 0 puts the elbow on the side of the reference
//!    direction, and φ grows right-handedly about the shoulder→target axis.** The seed's
//!    reference is its limb frame's −X, "the way the elbow moves as the target approaches the
//!    shoulder"; [`Limb7Chain`] uses that same rule on the rest pose (so for the built-in
//!    humanoid's arms φ = 0 points the elbow backwards, for its legs the knee forwards). When
//!    the axis is parallel to the reference the secondary reference (perpendicular to both the
//!    reference and the rest upper bone) takes over; every fixed reference has such a pair of
//!    directions (a hairy-ball fact), the seed's included.
//! 4. **Shoulder.** The rotation taking (ŵ, elbow offset) in the shoulder frame to (n̂, elbow
//!    direction at φ) in the limb frame. When the limb is straight (`r = 0`) the bend plane (the
//!    one holding the hinge axis' normal) carries the swivel, so the angle stays continuous
//!    through full extension.
//! 5. **Wrist** (orientation goals): the rotation that remains,
//!    `wrist = (shoulder · elbow_frame · hinge(θ) · wrist_frame)⁻¹ · goal` (the seed's
//!    `mR2 = mGoalRot · R1ᵀ · Ryᵀ`).
//!
//! ## Beyond the seed (as in the paper)
//!
//! - [`Limb7::feasible_swivels`]: given shoulder and wrist [`JointLimit`]s, the swivel
//!   interval(s) in which both joints stay legal. The paper solves Euler-angle limits in closed
//!   form; here every limit kind is supported by sampling the circle at
//!   [`SWIVEL_SAMPLES`] points and bisecting each sign change of legality to 1e-12 rad. An
//!   interval narrower than one sample step (2π/256 ≈ 1.4°) between two illegal samples can be
//!   missed; everything reported is legal.
//! - [`SwivelPolicy`]: a fixed swivel, keep the current one, the feasible swivel nearest to a
//!   wish, or the middle of the feasible interval.
//! - [`Limb7::swivel_from_positions`] and [`Limb7::swivel_from_pose`] recover the swivel angle
//!   (the seed's `GetSwivel`).
//!
//! ## Unreachable targets and bad input
//!
//! A target beyond the reach allowed by the hinge range gives the closest pose — the elbow at
//! the angle whose shoulder–wrist distance is nearest the target's, the limb pointing at the
//! target — with `reached = false`; the wrist still takes the goal orientation. A target at the
//! shoulder keeps the current axis. Non-finite input gives [`Limb7Error::NonFinite`]; zero-length
//! bones and zero axes are refused by [`Limb7::new`]. Nothing panics or returns NaN.
//!
//! ## Example
//!
//! ```
//! use ikarus_core::glam::{DQuat, DVec3};
//! use ikarus_solve::limb7::{Limb7, Limb7Geometry};
//!
//! // The seed's limb: two 1 m bones along +Z, elbow about +Y from 0 to 180°, reference −X.
//! let limb = Limb7::new(Limb7Geometry::seed(1.0, 1.0)).unwrap();
//! let target = DVec3::new(0.3, 0.2, 1.5);
//! let solution = limb.solve_position(target, 0.4, None).unwrap();
//! assert!(solution.reached);
//! let (elbow, wrist, _) = limb.forward(solution.shoulder, solution.elbow_angle, DQuat::IDENTITY);
//! assert!((wrist - target).length() < 1e-12);
//! let swivel = limb.swivel_from_positions(target, elbow).unwrap();
//! assert!((swivel - 0.4).abs() < 1e-12);
//! ```

use crate::linalg::trig::{atan2, sin_cos};

mod many;

pub(crate) use many::Limb7Lanes;
use std::f64::consts::{PI, TAU};

use glam::{DAffine3, DMat3, DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, Transform, fk};
use serde::{Deserialize, Serialize};

use crate::analytic::ChainEngine;
use crate::{FitError, IkTask, SolveReport, SolveStatus, analytic};

mod solve;
pub use solve::*;
mod chain;
pub use chain::*;
mod task;
pub use task::*;
#[cfg(test)]
mod tests;

/// Samples around the swivel circle used by [`Limb7::feasible_swivels`] before bisection.
pub const SWIVEL_SAMPLES: usize = 256;

/// Relative size below which a length or a direction counts as degenerate.
const DEGENERATE: f64 = 1e-12;

/// Relative tolerance on distances for "within reach".
const REACH_TOLERANCE: f64 = 1e-12;

/// The kinematics of a 7-DOF limb at elbow angle 0, in the shoulder's frame (see the module
/// docs). All fields are plain data; [`Limb7::new`] validates them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb7Geometry {
    /// The elbow joint's position in the shoulder frame (after the shoulder's local rotation),
    /// metres. Must be non-zero.
    pub upper: DVec3,
    /// Rotation of the elbow's hinge frame relative to the shoulder frame at elbow angle 0
    /// (fixed joints in between and the elbow's rest rotation). Identity for the seed.
    pub elbow_frame: DQuat,
    /// The elbow's hinge axis in the hinge frame, any non-zero length; positive angles flex.
    pub elbow_axis: DVec3,
    /// The elbow's range `[min, max]` in radians, `max − min ≤ 2π` (the seed: `[0, π]`).
    pub elbow_range: [f64; 2],
    /// The wrist joint's position in the elbow frame (after the hinge rotation), metres. Must
    /// be non-zero.
    pub lower: DVec3,
    /// Rotation of the wrist's parent frame relative to the elbow frame (fixed joints between
    /// elbow and wrist); identity when the wrist is the elbow's child.
    pub wrist_frame: DQuat,
    /// The swivel reference direction `s` in the limb frame (any non-zero length): swivel 0
    /// puts the elbow on its side of the shoulder→target axis.
    pub swivel_reference: DVec3,
}

impl Limb7Geometry {
    /// The seed's limb: bones of the given lengths along +Z, the elbow flexing about +Y over
    /// `[0, π]`, swivel reference −X (the seed's `vA`).
    pub fn seed(upper_length: f64, lower_length: f64) -> Self {
        Self {
            upper: DVec3::Z * upper_length,
            elbow_frame: DQuat::IDENTITY,
            elbow_axis: DVec3::Y,
            elbow_range: [0.0, PI],
            lower: DVec3::Z * lower_length,
            wrist_frame: DQuat::IDENTITY,
            swivel_reference: DVec3::NEG_X,
        }
    }
}

/// A validated 7-DOF limb with its law-of-cosines constants precomputed: build once, solve many
/// times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb7 {
    geometry: Limb7Geometry,
    /// Unit hinge axis in the hinge frame.
    axis: DVec3,
    /// Unit hinge axis in the shoulder frame.
    m: DVec3,
    /// Lower bone at θ = 0 in the shoulder frame.
    b0: DVec3,
    /// Constant part of d²: |a|² + |b|² + 2(a·m)(b·m).
    d2_const: f64,
    /// Amplitude of the cosine term: 2|a⊥||b⊥|.
    two_rho: f64,
    /// Angle of the straightest pose, its cosine and sine.
    theta0: f64,
    cos_theta0: f64,
    sin_theta0: f64,
    /// `w(θ) = base + cos θ · b_perp + sin θ · m_x_b_perp` (shoulder frame).
    base: DVec3,
    b_perp: DVec3,
    m_x_b_perp: DVec3,
    /// Where `θ₀ ± δ` (δ ∈ [0, π] from the law of cosines) lies in the range.
    branches: [Branch; MAX_BRANCHES],
    branch_count: usize,
    /// Smallest and largest reachable squared distance within the hinge range.
    d2_min: f64,
    d2_max: f64,
    /// Unit swivel reference and the secondary reference, limb frame.
    reference: DVec3,
    reference2: DVec3,
    /// Angle (about ŵ) from `normalize(m × ŵ)` to the elbow offset, for straight limbs.
    straight_beta: f64,
    /// `elbow_frame · wrist_frame` and `elbow_frame · (axis, 0) · wrist_frame`: the rotation
    /// between the shoulder and the wrist is `shoulder · (c·wrist_c + s·wrist_s)` for the
    /// hinge's half-angle cosine `c` and sine `s` (the quaternion product is bilinear), one
    /// product instead of three on the wrist's path.
    wrist_c: DQuat,
    wrist_s: DQuat,
}

const MAX_BRANCHES: usize = 6;

/// The elbow angles `θ₀ + sign·δ + shift` for `δ` in `[lo, hi]` lie in the hinge range.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Branch {
    sign: f64,
    lo: f64,
    hi: f64,
    shift: f64,
    /// `cos hi ≤ cos δ ≤ cos lo`: the same test without computing δ.
    cos_hi: f64,
    cos_lo: f64,
}

/// What went wrong with a limb or a goal.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Limb7Error {
    /// A bone has zero (or non-finite) length. Give the joints distinct positions.
    #[error("the {bone} bone has zero or non-finite length; give the joints distinct positions")]
    ZeroLengthBone {
        /// `"upper"` or `"lower"`.
        bone: &'static str,
    },
    /// The elbow axis or swivel reference is zero or non-finite, or a frame is not a rotation.
    #[error("{what} is zero or not finite; give a non-zero direction or a unit quaternion")]
    BadDirection {
        /// Which field.
        what: &'static str,
    },
    /// The elbow range is empty, reversed, wider than 2π or not finite.
    #[error("elbow range [{min}, {max}] is invalid; need finite min ≤ max with max − min ≤ 2π")]
    BadRange {
        /// The minimum given.
        min: f64,
        /// The maximum given.
        max: f64,
    },
    /// The elbow's axis makes the shoulder–wrist distance independent of the elbow angle (a
    /// bone along the axis): the limb cannot reach by bending. Use a two-bone or CCD solver.
    #[error("a bone lies along the elbow axis; bending the elbow does not change the reach")]
    NoReach,
    /// A target, orientation or swivel is NaN or infinite. The pose is left as it was.
    #[error("the goal or swivel is NaN or infinite")]
    NonFinite,
}

/// One solution of the limb. Joint rotations are local (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb7Solution {
    /// The shoulder's local rotation (`limb_from_shoulder`).
    pub shoulder: DQuat,
    /// The elbow's hinge angle, radians, inside the range.
    pub elbow_angle: f64,
    /// The elbow's hinge rotation (`hinge frame` rotation by `elbow_angle` about the axis);
    /// the elbow's local rotation is its rest rotation times this.
    pub elbow_hinge: DQuat,
    /// The wrist's local rotation when an orientation was asked for.
    pub wrist: Option<DQuat>,
    /// The swivel angle used, radians in `(-π, π]`.
    pub swivel: f64,
    /// The wrist reaches the target position (within 1e-12 relative).
    pub reached: bool,
}

/// One feasible swivel interval `[start, end]`, radians, counter-clockwise from `start` (it may
/// wrap through ±π, in which case `end < start`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwivelInterval {
    /// First feasible swivel.
    pub start: f64,
    /// Last feasible swivel.
    pub end: f64,
}

impl SwivelInterval {
    /// The whole circle.
    pub const FULL: Self = Self {
        start: -PI,
        end: PI,
    };

    /// Angular width in `[0, 2π]`.
    pub fn width(&self) -> f64 {
        if self.is_full() {
            TAU
        } else {
            (self.end - self.start).rem_euclid(TAU)
        }
    }

    /// True for the whole circle.
    pub fn is_full(&self) -> bool {
        self.start == -PI && self.end == PI
    }

    /// True when `swivel` lies in the interval (angles compared on the circle).
    pub fn contains(&self, swivel: f64) -> bool {
        self.is_full() || (swivel - self.start).rem_euclid(TAU) <= self.width()
    }

    /// The middle of the interval, in `(-π, π]`.
    pub fn middle(&self) -> f64 {
        wrap(self.start + 0.5 * self.width())
    }

    /// The interval's closest swivel to `swivel` (itself when inside), and the angular
    /// distance.
    pub fn nearest(&self, swivel: f64) -> (f64, f64) {
        if self.contains(swivel) {
            return (wrap(swivel), 0.0);
        }
        let to_start = circular_distance(swivel, self.start);
        let to_end = circular_distance(swivel, self.end);
        if to_start <= to_end {
            (self.start, to_start)
        } else {
            (self.end, to_end)
        }
    }
}

/// The shoulder and wrist limits that bound the swivel (each acts on `rest⁻¹ · local`, as
/// every [`JointLimit`] does).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb7Limits<'a> {
    /// The shoulder's limit.
    pub shoulder: &'a JointLimit,
    /// The shoulder's rest rotation.
    pub shoulder_rest: DQuat,
    /// The wrist's limit (checked only when an orientation goal fixes the wrist).
    pub wrist: &'a JointLimit,
    /// The wrist's rest rotation.
    pub wrist_rest: DQuat,
}

/// How the swivel angle is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwivelPolicy {
    /// Exactly this swivel (radians), limits or not.
    Fixed(f64),
    /// The swivel of the current pose when it is feasible (the elbow keeps its side as the
    /// target moves), otherwise the nearest feasible swivel: the elbow moves only as far as
    /// the limits make it. The feasible intervals are computed only when the current swivel
    /// is not feasible, so the common case costs one closed-form solve more than `Fixed`.
    KeepCurrent,
    /// This swivel if feasible, otherwise the nearest feasible one.
    NearestFeasible(f64),
    /// The middle of the feasible interval holding the current swivel (or of the nearest one).
    MiddleOfFeasible,
}

impl Default for SwivelPolicy {
    /// `KeepCurrent`.
    fn default() -> Self {
        Self::KeepCurrent
    }
}

/// `from`'s scale, the local transforms strictly between `from` and `to`, and `to`'s
/// translation: `from_frame_from_to_parent_frame · T(to.translation)`.
fn between(skeleton: &Skeleton, pose: &LocalPose, from: JointId, to: JointId) -> DAffine3 {
    let mut inner = DAffine3::from_translation(pose[to].translation);
    let mut joint = skeleton.parent(to);
    while let Some(j) = joint {
        if j == from {
            break;
        }
        inner = pose[j].to_affine() * inner;
        joint = skeleton.parent(j);
    }
    DAffine3::from_scale(pose[from].scale) * inner
}

fn unit(v: DVec3) -> Option<DVec3> {
    let len2 = v.length_squared();
    (len2.is_finite() && len2 > 1e-300).then(|| v / len2.sqrt())
}

fn unit_quat(q: DQuat) -> Option<DQuat> {
    let len2 = q.length_squared();
    if (len2 - 1.0).abs() < 1e-14 {
        // Unit to within 1e-14: normalising would change nothing that matters.
        return Some(q);
    }
    (len2.is_finite() && len2 > 1e-300).then(|| q * (1.0 / len2.sqrt()))
}

/// `angle` moved by whole turns into `[lo, hi]` if possible (with a 1e-12 slack at the ends,
/// clamped).
fn into_range(angle: f64, lo: f64, hi: f64) -> Option<f64> {
    let slack = 1e-12;
    let shifted = lo + (angle - lo).rem_euclid(TAU);
    if shifted <= hi + slack {
        return Some(shifted.min(hi));
    }
    if shifted >= lo + TAU - slack {
        return Some(lo);
    }
    None
}

/// The branches `θ₀ ± δ` (δ ∈ [0, π]) inside the range `[θ₀ + rel_lo, θ₀ + rel_hi]`, up to
/// whole turns.
fn branches(rel_lo: f64, rel_hi: f64) -> ([Branch; MAX_BRANCHES], usize) {
    let mut branches = [Branch::default(); MAX_BRANCHES];
    let mut branch_count = 0;
    for sign in [1.0, -1.0] {
        for k in -2..=2 {
            let turn = TAU * f64::from(k);
            // θ₀ + sign·δ ∈ [lo, hi] + turn  ⇔  sign·δ ∈ [rel_lo, rel_hi] + turn.
            let (a, b) = if sign > 0.0 {
                (rel_lo + turn, rel_hi + turn)
            } else {
                (-rel_hi - turn, -rel_lo - turn)
            };
            let (a, b) = (a.max(0.0), b.min(PI));
            if a <= b && branch_count < MAX_BRANCHES {
                branches[branch_count] = Branch {
                    sign,
                    lo: a,
                    hi: b,
                    shift: -turn,
                    cos_hi: b.cos() - 1e-15,
                    cos_lo: a.cos() + 1e-15,
                };
                branch_count += 1;
            }
        }
    }
    (branches, branch_count)
}

/// The rotation by the angle whose cosine and sine are given about a unit axis, by half-angle
/// formulas (no trigonometric calls); the angle is taken in `(-π, π]`.
#[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
#[inline(always)]
fn half_angle_rotation(axis: DVec3, cos: f64, sin: f64) -> DQuat {
    let (c, s) = if cos > -0.5 {
        let c = (0.5 * (1.0 + cos)).sqrt();
        (c, 0.5 * sin / c)
    } else {
        let s = (0.5 * (1.0 - cos)).sqrt().copysign(sin);
        (0.5 * sin / s, s)
    };
    // Unit by construction: c² + s² = 1 whenever cos² + sin² = 1.
    DQuat::from_xyzw(axis.x * s, axis.y * s, axis.z * s, c)
}

/// Angular distance for nearby angles (one rounding, no remainder).
#[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
#[inline(always)]
fn near_distance(a: f64, b: f64) -> f64 {
    let d = a - b;
    (d - TAU * (d / TAU).round()).abs()
}

/// `angle` in `(-π, π]`.
#[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
#[inline(always)]
fn wrap(angle: f64) -> f64 {
    if angle > -PI && angle <= PI {
        return angle;
    }
    let a = (angle + PI).rem_euclid(TAU) - PI;
    if a <= -PI { a + TAU } else { a }
}

fn circular_distance(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(TAU);
    d.min(TAU - d)
}

/// [`Limb7::solve_pose`]'s closed form as a [`pulp::WithSimd`] operation, so that it is
/// compiled inside the function dispatched to (AVX2, AVX-512 or the baseline). The same IEEE
/// operations run in the same order on every path, so every machine gets the same bits.
struct PoseSolve<'a> {
    limb: &'a Limb7,
    target: DVec3,
    goal: DQuat,
    swivel: f64,
    elbow_hint: Option<f64>,
}

impl pulp::WithSimd for PoseSolve<'_> {
    type Output = Limb7Solution;

    #[allow(clippy::inline_always)] // the point: compiled inside the dispatched function
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Limb7Solution {
        let mut solution = self
            .limb
            .solve_unchecked(self.target, self.swivel, self.elbow_hint);
        solution.wrist = Some(self.limb.wrist_for(&solution, self.goal));
        solution
    }
}
