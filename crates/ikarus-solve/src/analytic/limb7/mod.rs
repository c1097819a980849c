//! Analytic IK for a 7-DOF limb — shoulder (3 DOF), elbow (1 DOF hinge), wrist (3 DOF) — with
//! the elbow's swivel angle as the free parameter (seed 000; Tolani, Goswami and Badler,
//! "Real-time inverse kinematics techniques for anthropomorphic limbs", Graphical Models 62(5),
//! 2000).
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
//! ## The solution (seed 000, Fig. 4)
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

use crate::runtime::crowd::ChainEngine;
use crate::{IkTask, SolveReport, SolveStatus, analytic};

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

impl Limb7 {
    /// Validates the geometry and precomputes the constants.
    ///
    /// # Errors
    /// Zero-length bones, zero axis or reference, non-unit frames, a bad range, or a limb whose
    /// reach does not depend on the elbow.
    pub fn new(geometry: Limb7Geometry) -> Result<Self, Limb7Error> {
        let g = geometry;
        let a = g.upper;
        let a_len = a.length();
        if !(a_len.is_finite() && a_len > 0.0) {
            return Err(Limb7Error::ZeroLengthBone { bone: "upper" });
        }
        let b_len = g.lower.length();
        if !(b_len.is_finite() && b_len > 0.0) {
            return Err(Limb7Error::ZeroLengthBone { bone: "lower" });
        }
        let [lo, hi] = g.elbow_range;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi && hi - lo <= TAU + 1e-12) {
            return Err(Limb7Error::BadRange { min: lo, max: hi });
        }
        for (what, q) in [
            ("elbow_frame", g.elbow_frame),
            ("wrist_frame", g.wrist_frame),
        ] {
            if !q.is_finite() || (q.length_squared() - 1.0).abs() > 1e-9 {
                return Err(Limb7Error::BadDirection { what });
            }
        }
        let axis = unit(g.elbow_axis).ok_or(Limb7Error::BadDirection { what: "elbow_axis" })?;
        let reference = unit(g.swivel_reference).ok_or(Limb7Error::BadDirection {
            what: "swivel_reference",
        })?;
        let m = g.elbow_frame * axis;
        let b0 = g.elbow_frame * g.lower;
        let (a_par, b_par) = (a.dot(m), b0.dot(m));
        let (a_perp, b_perp) = (a - a_par * m, b0 - b_par * m);
        let cos_part = a_perp.dot(b_perp);
        let sin_part = a_perp.dot(m.cross(b_perp));
        let rho = a_perp.length() * b_perp.length();
        if rho <= DEGENERATE * a_len * b_len {
            return Err(Limb7Error::NoReach);
        }
        let theta0 = sin_part.atan2(cos_part);
        let d2_const = a.length_squared() + g.lower.length_squared() + 2.0 * a_par * b_par;
        let (branches, branch_count) = branches(lo - theta0, hi - theta0);
        let mut limb = Self {
            geometry: g,
            axis,
            m,
            b0,
            d2_const,
            two_rho: 2.0 * rho,
            theta0,
            cos_theta0: theta0.cos(),
            sin_theta0: theta0.sin(),
            base: a + b_par * m,
            b_perp,
            m_x_b_perp: m.cross(b_perp),
            branches,
            branch_count,
            d2_min: 0.0,
            d2_max: 0.0,
            reference,
            reference2: DVec3::ZERO,
            straight_beta: 0.0,
            wrist_c: g.elbow_frame * g.wrist_frame,
            wrist_s: g.elbow_frame * DQuat::from_xyzw(axis.x, axis.y, axis.z, 0.0) * g.wrist_frame,
        };
        // Reach over the range: its ends and the extremes of the cosine inside it.
        let (mut d2_min, mut d2_max) = (f64::INFINITY, f64::NEG_INFINITY);
        for theta in limb.critical_angles() {
            let d2 = limb.d2(theta);
            d2_min = d2_min.min(d2);
            d2_max = d2_max.max(d2);
        }
        limb.d2_min = d2_min.max(0.0);
        limb.d2_max = d2_max;
        // Secondary reference: perpendicular to the reference and, as far as possible, to the
        // upper bone at rest.
        limb.reference2 = unit(reference.cross(a))
            .or_else(|| unit(reference.cross(DVec3::X)))
            .or_else(|| unit(reference.cross(DVec3::Y)))
            .unwrap_or(DVec3::Z);
        // The elbow offset's angle from m × ŵ in a well-bent pose, reused when straight.
        let theta_bent = limb.bent_angle();
        let w = a + limb.hinge_in_shoulder(theta_bent) * b0;
        if let (Some(w_hat), Some(k)) = (unit(w), unit(m.cross(w))) {
            let offset = a - a.dot(w_hat) * w_hat;
            limb.straight_beta = offset.dot(w_hat.cross(k)).atan2(offset.dot(k));
        }
        Ok(limb)
    }

    /// The geometry this limb was built from.
    pub fn geometry(&self) -> &Limb7Geometry {
        &self.geometry
    }

    /// The shortest and longest shoulder–wrist distances the hinge range allows, metres.
    pub fn reach(&self) -> (f64, f64) {
        (self.d2_min.sqrt(), self.d2_max.sqrt())
    }

    /// True when the wrist can reach `target` (limb frame) within the elbow's range (the
    /// seed's `IsSolution`, with the range's shortest reach as the inner bound).
    pub fn is_reachable(&self, target: DVec3) -> bool {
        let d2 = target.length_squared();
        d2.is_finite()
            && d2 <= self.d2_max * (1.0 + REACH_TOLERANCE)
            && d2 >= self.d2_min * (1.0 - REACH_TOLERANCE)
    }

    /// Solves shoulder and elbow so the wrist reaches `target` (limb frame, metres) with the
    /// elbow at `swivel` (radians; see the module docs for the reference); the wrist is left
    /// alone (the seed's first `Solve`). `elbow_hint` picks between two legal elbow angles
    /// (the current angle; `None` prefers the larger).
    ///
    /// # Errors
    /// [`Limb7Error::NonFinite`] for a NaN or infinite target or swivel.
    pub fn solve_position(
        &self,
        target: DVec3,
        swivel: f64,
        elbow_hint: Option<f64>,
    ) -> Result<Limb7Solution, Limb7Error> {
        if !target.is_finite() || !swivel.is_finite() || !elbow_hint.unwrap_or(0.0).is_finite() {
            return Err(Limb7Error::NonFinite);
        }
        Ok(self.solve_unchecked(target, swivel, elbow_hint))
    }

    /// Solves all seven joints so the wrist reaches `target` with `orientation` (the wrist's
    /// rotation in the limb frame, `limb_from_wrist`) and the elbow at `swivel` (the seed's
    /// second `Solve`).
    ///
    /// # Errors
    /// [`Limb7Error::NonFinite`] for a NaN or infinite goal or swivel, or a zero quaternion.
    pub fn solve_pose(
        &self,
        target: DVec3,
        orientation: DQuat,
        swivel: f64,
        elbow_hint: Option<f64>,
    ) -> Result<Limb7Solution, Limb7Error> {
        let goal = unit_quat(orientation).ok_or(Limb7Error::NonFinite)?;
        if !target.is_finite() || !swivel.is_finite() || !elbow_hint.unwrap_or(0.0).is_finite() {
            return Err(Limb7Error::NonFinite);
        }
        Ok(pulp::Arch::new().dispatch(PoseSolve {
            limb: self,
            target,
            goal,
            swivel,
            elbow_hint,
        }))
    }

    /// The wrist's local rotation that gives it the limb-frame orientation `goal` on top of the
    /// shoulder and elbow of `solution`.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    pub fn wrist_for(&self, solution: &Limb7Solution, goal: DQuat) -> DQuat {
        let hinge = solution.elbow_hinge;
        let (c, s) = (hinge.w, hinge.xyz().dot(self.axis));
        let before_wrist = solution.shoulder * (self.wrist_c * c + self.wrist_s * s);
        // A product of unit quaternions: unit to rounding.
        before_wrist.conjugate() * goal
    }

    /// Forward kinematics of the limb: the elbow's and wrist's positions and the wrist's
    /// orientation in the limb frame, for a shoulder rotation, an elbow angle and a wrist
    /// rotation.
    pub fn forward(
        &self,
        shoulder: DQuat,
        elbow_angle: f64,
        wrist: DQuat,
    ) -> (DVec3, DVec3, DQuat) {
        let g = &self.geometry;
        let elbow_rotation =
            shoulder * g.elbow_frame * DQuat::from_axis_angle(self.axis, elbow_angle);
        let elbow = shoulder * g.upper;
        let wrist_position = elbow + elbow_rotation * g.lower;
        (
            elbow,
            wrist_position,
            elbow_rotation * g.wrist_frame * wrist,
        )
    }

    /// The swivel angle of a pose given by the wrist's and elbow's positions (limb frame): the
    /// seed's `GetSwivel`, measured about the shoulder→wrist axis. `None` when the elbow lies
    /// on that axis (a straight limb: use [`swivel_from_pose`](Self::swivel_from_pose)) or the
    /// wrist is at the shoulder.
    pub fn swivel_from_positions(&self, wrist: DVec3, elbow: DVec3) -> Option<f64> {
        let n = unit(wrist)?;
        let offset = elbow - elbow.dot(n) * n;
        if offset.length_squared() <= (DEGENERATE * elbow.length()).powi(2) {
            return None;
        }
        let (u, v) = self.swivel_basis(n);
        Some(offset.dot(v).atan2(offset.dot(u)))
    }

    /// The swivel angle of a pose given by the shoulder's local rotation and the elbow angle,
    /// measured about the shoulder→wrist axis; defined for straight limbs too (the bend plane
    /// carries it, as in [`solve_position`](Self::solve_position)).
    pub fn swivel_from_pose(&self, shoulder: DQuat, elbow_angle: f64) -> f64 {
        let w = self.geometry.upper + self.hinge_in_shoulder(elbow_angle) * self.b0;
        let Some(w_hat) = unit(w) else {
            return 0.0;
        };
        let k = self.elbow_direction(w, w_hat);
        let n = shoulder * w_hat;
        let (u, v) = self.swivel_basis(n);
        let dir = shoulder * k;
        atan2(dir.dot(v), dir.dot(u))
    }

    /// The feasible swivel intervals for a goal: every swivel in them keeps the shoulder (and,
    /// with an `orientation`, the wrist) inside `limits`. Sorted by start; empty when no swivel
    /// is feasible; `[SwivelInterval::FULL]` when all are. The elbow's own range is not a
    /// function of the swivel and is not part of the answer (see
    /// [`is_reachable`](Self::is_reachable)). `include` lists swivels sampled besides the
    /// regular grid (the current and the wished swivel, say), so that a narrow interval holding
    /// one of them is never missed.
    ///
    /// # Errors
    /// [`Limb7Error::NonFinite`] for a NaN or infinite goal.
    pub fn feasible_swivels(
        &self,
        target: DVec3,
        orientation: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        elbow_hint: Option<f64>,
        include: &[f64],
    ) -> Result<Vec<SwivelInterval>, Limb7Error> {
        if !target.is_finite() || !elbow_hint.unwrap_or(0.0).is_finite() {
            return Err(Limb7Error::NonFinite);
        }
        let goal = match orientation {
            Some(q) => Some(unit_quat(q).ok_or(Limb7Error::NonFinite)?),
            None => None,
        };
        let legal = |swivel: f64| self.is_legal(target, goal, limits, elbow_hint, swivel);
        let step = TAU / SWIVEL_SAMPLES as f64;
        let mut angles: Vec<f64> = (0..SWIVEL_SAMPLES)
            .map(|i| -PI + step * i as f64)
            .chain(include.iter().filter(|a| a.is_finite()).map(|&a| {
                let a = wrap(a);
                if a >= PI { -PI } else { a }
            }))
            .collect();
        angles.sort_by(f64::total_cmp);
        angles.dedup();
        let samples: Vec<bool> = angles.iter().map(|&a| legal(a)).collect();
        if samples.iter().all(|&ok| ok) {
            return Ok(vec![SwivelInterval::FULL]);
        }
        // Boundaries between consecutive samples, refined by bisection.
        let refine = |mut inside: f64, mut outside: f64| {
            for _ in 0..60 {
                let mid = 0.5 * (inside + outside);
                if legal(mid) {
                    inside = mid;
                } else {
                    outside = mid;
                }
                if (inside - outside).abs() < 1e-13 {
                    break;
                }
            }
            wrap(inside)
        };
        let mut starts = Vec::new();
        let mut ends = Vec::new();
        for i in 0..angles.len() {
            let j = (i + 1) % angles.len();
            let (a, b) = (angles[i], if j == 0 { angles[0] + TAU } else { angles[j] });
            match (samples[i], samples[j]) {
                (false, true) => starts.push(refine(b, a)),
                (true, false) => ends.push(refine(a, b)),
                _ => {}
            }
        }
        // Pair each start with the next end counter-clockwise.
        let mut intervals: Vec<SwivelInterval> = starts
            .iter()
            .map(|&start| {
                let end = ends
                    .iter()
                    .copied()
                    .min_by(|x, y| {
                        (x - start)
                            .rem_euclid(TAU)
                            .total_cmp(&(y - start).rem_euclid(TAU))
                    })
                    .unwrap_or(start);
                SwivelInterval { start, end }
            })
            .collect();
        intervals.sort_by(|x, y| x.start.total_cmp(&y.start));
        Ok(intervals)
    }

    /// True when the swivel keeps the shoulder (and, with a unit `goal` orientation, the
    /// wrist) inside `limits`: one closed-form solve and the limits' `contains`. Every input
    /// must be finite (see [`feasible_swivels`](Self::feasible_swivels), which checks).
    fn is_legal(
        &self,
        target: DVec3,
        goal: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        elbow_hint: Option<f64>,
        swivel: f64,
    ) -> bool {
        self.solution_is_legal(
            &self.solve_unchecked(target, swivel, elbow_hint),
            goal,
            limits,
        )
    }

    /// True when `solution` keeps the shoulder (and, with a unit `goal` orientation, the
    /// wrist) inside `limits`.
    fn solution_is_legal(
        &self,
        solution: &Limb7Solution,
        goal: Option<DQuat>,
        limits: &Limb7Limits<'_>,
    ) -> bool {
        limits
            .shoulder
            .contains(limits.shoulder_rest.conjugate() * solution.shoulder)
            && goal.is_none_or(|goal| {
                let wrist = self.wrist_for(solution, goal);
                limits.wrist.contains(limits.wrist_rest.conjugate() * wrist)
            })
    }

    /// The swivel whose closed-form pose lies least outside `limits` (the sum of the
    /// shoulder's and, with a unit `goal`, the wrist's [`JointLimit::violation`]): the
    /// [`SWIVEL_SAMPLES`] grid, then a golden-section search between the best sample's
    /// neighbours. Used when no swivel is feasible, so that projecting onto the limits moves
    /// the limb as little as possible (a target just outside the legal workspace is then
    /// missed by about how far it lies outside). Every input must be finite.
    fn least_violating_swivel(
        &self,
        target: DVec3,
        goal: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        elbow_hint: Option<f64>,
    ) -> f64 {
        let violation = |swivel: f64| {
            let s = self.solve_unchecked(target, swivel, elbow_hint);
            let shoulder = limits
                .shoulder
                .violation(limits.shoulder_rest.conjugate() * s.shoulder);
            shoulder
                + goal.map_or(0.0, |goal| {
                    let wrist = self.wrist_for(&s, goal);
                    limits
                        .wrist
                        .violation(limits.wrist_rest.conjugate() * wrist)
                })
        };
        let step = TAU / SWIVEL_SAMPLES as f64;
        let (mut best, mut best_violation) = (0.0, f64::INFINITY);
        for i in 0..SWIVEL_SAMPLES {
            let swivel = -PI + step * i as f64;
            let v = violation(swivel);
            if v < best_violation {
                (best, best_violation) = (swivel, v);
            }
        }
        // Golden-section search on [best − step, best + step].
        let ratio = 0.5 * (5f64.sqrt() - 1.0);
        let (mut lo, mut hi) = (best - step, best + step);
        let (mut x1, mut x2) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
        let (mut v1, mut v2) = (violation(x1), violation(x2));
        for _ in 0..48 {
            if v1 <= v2 {
                (hi, x2, v2) = (x2, x1, v1);
                x1 = hi - ratio * (hi - lo);
                v1 = violation(x1);
            } else {
                (lo, x1, v1) = (x1, x2, v2);
                x2 = lo + ratio * (hi - lo);
                v2 = violation(x2);
            }
        }
        let (x, v) = if v1 <= v2 { (x1, v1) } else { (x2, v2) };
        wrap(if v < best_violation { x } else { best })
    }

    /// The swivel for `policy` and its closed-form solution (shoulder and elbow; the wrist is
    /// the caller's), whether that solution is already known to be legal, and the feasible
    /// intervals when they were computed. `current` is the pose's swivel, `hint` its elbow
    /// angle.
    fn choose_solution(
        &self,
        policy: SwivelPolicy,
        target: DVec3,
        orientation: Option<DQuat>,
        limits: &Limb7Limits<'_>,
        hint: f64,
        current: f64,
    ) -> Result<(Limb7Solution, bool, Option<Vec<SwivelInterval>>), Limb7Error> {
        let wishes = match policy {
            SwivelPolicy::Fixed(wish) | SwivelPolicy::NearestFeasible(wish) => [wish, current],
            SwivelPolicy::KeepCurrent | SwivelPolicy::MiddleOfFeasible => [current, current],
        };
        // `KeepCurrent`: the current swivel's solution, once found legal, is the answer (its
        // shoulder and wrist need no second check).
        let mut legal_current = None;
        let needs_feasible = match policy {
            SwivelPolicy::NearestFeasible(_) | SwivelPolicy::MiddleOfFeasible => true,
            SwivelPolicy::KeepCurrent => {
                let solution = self.solve_unchecked(target, wrap(current), Some(hint));
                let legal = solution.shoulder.is_finite()
                    && self.solution_is_legal(&solution, orientation, limits);
                legal_current = legal.then_some(solution);
                !legal
            }
            SwivelPolicy::Fixed(_) => false,
        };
        let feasible = if needs_feasible {
            Some(self.feasible_swivels(target, orientation, limits, Some(hint), &wishes)?)
        } else {
            None
        };
        let swivel = match feasible.as_deref() {
            // Nothing is feasible: the swivel that needs the smallest correction by the limits
            // (except for a fixed swivel, which is the caller's to keep).
            Some([]) if !matches!(policy, SwivelPolicy::Fixed(_)) => {
                self.least_violating_swivel(target, orientation, limits, Some(hint))
            }
            intervals => Limb7::choose_swivel(policy, current, intervals.unwrap_or(&[])),
        };
        let known_legal = legal_current.is_some();
        let solution = match legal_current {
            Some(solution) => solution,
            None => self.solve_position(target, swivel, Some(hint))?,
        };
        Ok((solution, known_legal, feasible))
    }

    /// Picks the swivel for `policy`: `current` is the current pose's swivel, `feasible` the
    /// feasible intervals (read by every policy but `Fixed`; empty means none is feasible —
    /// or, for `KeepCurrent`, that the current swivel is known to be feasible — in which case
    /// the wish or the current swivel is kept).
    pub fn choose_swivel(policy: SwivelPolicy, current: f64, feasible: &[SwivelInterval]) -> f64 {
        let nearest = |wish: f64| {
            feasible
                .iter()
                .map(|interval| interval.nearest(wish))
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map_or(wrap(wish), |(swivel, _)| swivel)
        };
        match policy {
            SwivelPolicy::Fixed(swivel) => wrap(swivel),
            SwivelPolicy::KeepCurrent => nearest(current),
            SwivelPolicy::NearestFeasible(wish) => nearest(wish),
            SwivelPolicy::MiddleOfFeasible => feasible
                .iter()
                .min_by(|x, y| x.nearest(current).1.total_cmp(&y.nearest(current).1))
                .map_or(wrap(current), SwivelInterval::middle),
        }
    }

    #[allow(clippy::inline_always)] // inlined into `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    fn solve_unchecked(
        &self,
        target: DVec3,
        swivel: f64,
        elbow_hint: Option<f64>,
    ) -> Limb7Solution {
        let d2_target = target.length_squared();
        let (theta, cos, sin, reached_elbow) = self.elbow_angle_for(d2_target, elbow_hint);
        let hinge = half_angle_rotation(self.axis, cos, sin);
        let w = self.base + cos * self.b_perp + sin * self.m_x_b_perp;
        let w_len2 = w.length_squared();
        let tiny = (DEGENERATE * DEGENERATE) * self.d2_max;
        let target_far = d2_target > tiny;
        let inv_target = if target_far {
            1.0 / d2_target.sqrt()
        } else {
            0.0
        };
        let w_hat = if reached_elbow && target_far {
            // |w| = |target| up to rounding when the elbow angle is exact: one square root.
            w * inv_target
        } else if w_len2 > tiny {
            w / w_len2.sqrt()
        } else {
            // Folded onto the shoulder (bones of equal length): the upper bone's axis.
            self.geometry.upper.normalize()
        };
        // The shoulder→target axis; a target at the shoulder keeps the limb's own axis.
        let n = if target_far {
            target * inv_target
        } else {
            w_hat
        };
        let (u, v) = self.swivel_basis(n);
        let (sin, cos) = sin_cos(swivel);
        let elbow_dir = cos * u + sin * v;
        let k = self.elbow_direction(w, w_hat);
        // Rotation taking (ŵ, k, ŵ×k) to (n, e, n×e).
        let from = DMat3::from_cols(w_hat, k, w_hat.cross(k));
        let to = DMat3::from_cols(n, elbow_dir, n.cross(elbow_dir));
        // Both frames are orthonormal, so the product is a rotation and its quaternion unit.
        let shoulder = DQuat::from_mat3(&(to * from.transpose()));
        let reached = reached_elbow
            && (w_len2 - d2_target).abs() <= 4.0 * REACH_TOLERANCE * self.d2_max.max(d2_target);
        Limb7Solution {
            shoulder,
            elbow_angle: theta,
            elbow_hinge: hinge,
            wrist: None,
            swivel: wrap(swivel),
            reached,
        }
    }

    /// Elbow angle whose reach is `d2` (or nearest to it in range), its cosine and sine, and
    /// whether it is exact.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    fn elbow_angle_for(&self, d2: f64, hint: Option<f64>) -> (f64, f64, f64, bool) {
        let [lo, hi] = self.geometry.elbow_range;
        let c = (d2 - self.d2_const) / self.two_rho;
        if (-1.0..=1.0).contains(&c) {
            // Branches are tested on cos δ = c; δ itself (an arc cosine) is only needed for
            // the angle returned, off the critical path of the pose.
            let mut found: Option<(usize, f64)> = None;
            for (index, branch) in self.branches[..self.branch_count].iter().enumerate() {
                if c > branch.cos_lo || c < branch.cos_hi {
                    continue;
                }
                let theta = || (self.theta0 + branch.sign * c.acos() + branch.shift).clamp(lo, hi);
                found = match (found, hint) {
                    (None, _) => Some((index, f64::NAN)),
                    (Some((best, _)), hint) => {
                        let b = &self.branches[best];
                        let best_theta = (self.theta0 + b.sign * c.acos() + b.shift).clamp(lo, hi);
                        let this = theta();
                        let better = match hint {
                            Some(h) => near_distance(this, h) < near_distance(best_theta, h),
                            None => this > best_theta,
                        };
                        Some(if better {
                            (index, this)
                        } else {
                            (best, best_theta)
                        })
                    }
                };
            }
            if let Some((index, theta)) = found {
                let branch = &self.branches[index];
                let theta = if theta.is_nan() {
                    (self.theta0 + branch.sign * c.acos() + branch.shift).clamp(lo, hi)
                } else {
                    theta
                };
                // cos and sin of θ₀ ± δ without evaluating them.
                let s = (1.0 - c * c).max(0.0).sqrt() * branch.sign;
                let cos = self.cos_theta0 * c - self.sin_theta0 * s;
                let sin = self.sin_theta0 * c + self.cos_theta0 * s;
                return (theta, cos, sin, true);
            }
        }
        // Out of reach within the range: the critical angle whose distance is nearest.
        let target = d2.sqrt();
        let theta = self
            .critical_angles()
            .min_by(|x, y| {
                (self.d2(*x).max(0.0).sqrt() - target)
                    .abs()
                    .total_cmp(&(self.d2(*y).max(0.0).sqrt() - target).abs())
            })
            .unwrap_or(lo);
        let exact = (self.d2(theta) - d2).abs() <= REACH_TOLERANCE * self.d2_max.max(d2);
        let (sin, cos) = (theta - self.theta0).sin_cos();
        // Rotate back by θ₀: the cosine and sine of θ itself.
        let (cos, sin) = (
            cos * self.cos_theta0 - sin * self.sin_theta0,
            sin * self.cos_theta0 + cos * self.sin_theta0,
        );
        (theta, cos, sin, exact)
    }

    /// The range's ends and the cosine's extremes inside it.
    fn critical_angles(&self) -> impl Iterator<Item = f64> + '_ {
        let [lo, hi] = self.geometry.elbow_range;
        [lo, hi, self.theta0, self.theta0 + PI]
            .into_iter()
            .enumerate()
            .filter_map(move |(i, theta)| {
                if i < 2 {
                    Some(theta)
                } else {
                    into_range(theta, lo, hi)
                }
            })
    }

    fn d2(&self, theta: f64) -> f64 {
        self.d2_const + self.two_rho * (theta - self.theta0).cos()
    }

    /// An elbow angle well inside the range and away from straight, for reference frames.
    fn bent_angle(&self) -> f64 {
        let [lo, hi] = self.geometry.elbow_range;
        let middle = 0.5 * (lo + hi);
        if hi - lo < 1e-6 {
            // A locked elbow: bend off straight as far as possible by hand.
            return self.theta0 + PI / 2.0;
        }
        middle
    }

    fn hinge_in_shoulder(&self, theta: f64) -> DQuat {
        DQuat::from_axis_angle(self.m, theta)
    }

    /// The unit direction (shoulder frame, normal to ŵ) from the shoulder→wrist axis to the
    /// elbow; for a straight limb the bend plane's direction with the same offset angle.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    fn elbow_direction(&self, w: DVec3, w_hat: DVec3) -> DVec3 {
        let a = self.geometry.upper;
        let offset = a - a.dot(w_hat) * w_hat;
        let offset2 = offset.length_squared();
        let a2 = a.length_squared();
        if offset2 > 1e-4 * a2 {
            return offset / offset2.sqrt();
        }
        // Near straight, rounding along ŵ matters: project once more. Below 1e-6 of the bone
        // the offset's direction is mostly rounding; the bend plane gives the same direction
        // in the limit.
        if offset2 > 1e-12 * a2 {
            let offset = offset - offset.dot(w_hat) * w_hat;
            return offset / offset.length();
        }
        let k = unit(self.m.cross(w)).unwrap_or_else(|| w_hat.any_orthonormal_vector());
        let (sin, cos) = self.straight_beta.sin_cos();
        cos * k + sin * w_hat.cross(k)
    }

    /// `(û, v̂)`: the reference projected normal to `n`, and `n × û`.
    #[allow(clippy::inline_always)] // compiled inside `solve_pose`'s instruction-set dispatch
    #[inline(always)]
    fn swivel_basis(&self, n: DVec3) -> (DVec3, DVec3) {
        let p = self.reference - self.reference.dot(n) * n;
        let len2 = p.length_squared();
        let u = if len2 > 1e-12 {
            p / len2.sqrt()
        } else {
            let p = self.reference2 - self.reference2.dot(n) * n;
            let len2 = p.length_squared();
            if len2 > 1e-12 {
                p / len2.sqrt()
            } else {
                n.any_orthonormal_vector()
            }
        };
        (u, n.cross(u))
    }
}

/// Solves many limbs at once: `out[i]` is [`Limb7::solve_pose`] of `limbs[i]` for
/// `targets[i]`, `orientations[i]` and `swivels[i]` (no hint). Allocates nothing; the shortest
/// slice sets the count.
pub fn solve_slice(
    limbs: &[Limb7],
    targets: &[DVec3],
    orientations: &[DQuat],
    swivels: &[f64],
    out: &mut [Result<Limb7Solution, Limb7Error>],
) {
    for ((((limb, &target), &orientation), &swivel), slot) in limbs
        .iter()
        .zip(targets)
        .zip(orientations)
        .zip(swivels)
        .zip(out.iter_mut())
    {
        *slot = limb.solve_pose(target, orientation, swivel, None);
    }
}

/// A shoulder → elbow → wrist chain of a [`Skeleton`] solved as a 7-DOF limb. The elbow must
/// carry a [`JointLimit::Hinge`] (its axis and range are the limb's); joints between shoulder
/// and elbow or elbow and wrist are kept fixed.
#[derive(Clone, Debug, PartialEq)]
pub struct Limb7Chain {
    /// The shoulder (hip) joint.
    pub shoulder: JointId,
    /// The elbow (knee) joint.
    pub elbow: JointId,
    /// The wrist (ankle) joint.
    pub wrist: JointId,
    /// Unit elbow hinge axis in the elbow's rest frame; positive angles flex.
    pub elbow_axis: DVec3,
    /// The elbow's range `[min, max]`, radians.
    pub elbow_range: [f64; 2],
    /// Swivel reference in the limb frame (the shoulder's parent frame); by default the way
    /// the elbow moves as the wrist approaches the shoulder in the rest pose.
    pub swivel_reference: DVec3,
}

/// A goal for [`solve_chain`], in model space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limb7Goal {
    /// Where the wrist should be, model space, metres.
    pub position: DVec3,
    /// The wrist's model-space orientation, if it is to be solved too.
    pub orientation: Option<DQuat>,
}

/// What [`solve_chain`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct Limb7Report {
    /// The wrist reached the goal (position, and orientation when given) with every limb joint
    /// inside its limit.
    pub reached: bool,
    /// The target lies within the shoulder–wrist distances the elbow's range allows (the
    /// position is reachable for some swivel unless the shoulder limit forbids every one).
    pub in_reach: bool,
    /// The swivel used, radians.
    pub swivel: f64,
    /// The feasible swivel intervals (computed for the feasible policies and whenever the
    /// chosen swivel left a joint outside its limit).
    pub feasible: Option<Vec<SwivelInterval>>,
    /// Joints whose limit had to be enforced after the analytic solve (names).
    pub limited: Vec<String>,
}

/// Why a chain or a goal is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Limb7ChainError {
    /// A joint id is not in the skeleton.
    #[error("joint {joint} is not in the skeleton")]
    UnknownJoint {
        /// The id.
        joint: JointId,
    },
    /// The joints are not ordered shoulder → elbow → wrist down one branch. Pass them in that
    /// order (e.g. upper arm, lower arm, hand).
    #[error(
        "`{ancestor}` is not a proper ancestor of `{joint}`; pass shoulder, elbow, wrist down one branch"
    )]
    NotAChain {
        /// The joint that should be the ancestor.
        ancestor: String,
        /// The joint that should descend from it.
        joint: String,
    },
    /// The elbow has no hinge limit. Give it a `JointLimit::Hinge`, or solve with a two-bone or
    /// CCD solver.
    #[error("`{joint}` has no hinge limit; a 7-DOF limb needs a hinge elbow")]
    NoHinge {
        /// The elbow.
        joint: String,
    },
    /// The limb's geometry is unusable in this pose.
    #[error("limb `{joint}`: {source}")]
    Geometry {
        /// The shoulder.
        joint: String,
        /// Why.
        source: Limb7Error,
    },
}

impl Limb7Chain {
    /// A chain whose elbow axis and range are the elbow's [`JointLimit::Hinge`] (the built-in
    /// humanoid's elbows and knees), with the default swivel reference (see the field).
    ///
    /// # Errors
    /// Unknown joints, joints not in order down one branch, an elbow without a hinge limit, or
    /// a rest pose with zero-length bones.
    pub fn new(
        skeleton: &Skeleton,
        shoulder: JointId,
        elbow: JointId,
        wrist: JointId,
    ) -> Result<Self, Limb7ChainError> {
        if elbow.index() >= skeleton.len() {
            return Err(Limb7ChainError::UnknownJoint { joint: elbow });
        }
        let JointLimit::Hinge(hinge) = skeleton.limit(elbow) else {
            return Err(Limb7ChainError::NoHinge {
                joint: skeleton.name(elbow).to_owned(),
            });
        };
        Self::with_hinge(
            skeleton,
            [shoulder, elbow, wrist],
            hinge.axis,
            [hinge.min, hinge.max],
        )
    }

    /// A chain with an explicit elbow axis (elbow rest frame) and range (radians), for
    /// skeletons without limits such as BVH files; the default swivel reference.
    ///
    /// # Errors
    /// Unknown joints, joints not in order down one branch, a bad axis or range, or a rest pose
    /// with zero-length bones.
    pub fn with_hinge(
        skeleton: &Skeleton,
        [shoulder, elbow, wrist]: [JointId; 3],
        elbow_axis: DVec3,
        elbow_range: [f64; 2],
    ) -> Result<Self, Limb7ChainError> {
        for joint in [shoulder, elbow, wrist] {
            if joint.index() >= skeleton.len() {
                return Err(Limb7ChainError::UnknownJoint { joint });
            }
        }
        for (ancestor, joint) in [(shoulder, elbow), (elbow, wrist)] {
            if ancestor == joint || !skeleton.is_ancestor_or_self(ancestor, joint) {
                return Err(Limb7ChainError::NotAChain {
                    ancestor: skeleton.name(ancestor).to_owned(),
                    joint: skeleton.name(joint).to_owned(),
                });
            }
        }
        let mut chain = Self {
            shoulder,
            elbow,
            wrist,
            elbow_axis,
            elbow_range,
            swivel_reference: DVec3::X,
        };
        // The seed's reference: the way the elbow moves as the wrist approaches, at rest.
        let rest = skeleton.rest_pose();
        let limb = chain.limb(skeleton, &rest)?;
        chain.elbow_axis = limb.axis;
        let shoulder_rest = rest[shoulder].rotation;
        let g = limb.geometry;
        let w = g.upper + limb.hinge_in_shoulder(limb.bent_angle()) * limb.b0;
        let offset = unit(w).map_or(DVec3::ZERO, |w_hat| g.upper - g.upper.dot(w_hat) * w_hat);
        // Keep the part normal to the rest upper bone (the seed's vA is normal to its limb).
        let a_hat = g.upper / g.upper.length();
        let normal = offset - offset.dot(a_hat) * a_hat;
        chain.swivel_reference = unit(shoulder_rest * normal)
            .unwrap_or_else(|| (shoulder_rest * a_hat).any_orthonormal_vector());
        Ok(chain)
    }

    /// The limb of this chain in `pose` (bone offsets and fixed joints read from the pose; the
    /// elbow's rest rotation and hinge from the skeleton).
    ///
    /// # Errors
    /// Zero-length bones or non-finite transforms in `pose`.
    pub fn limb(&self, skeleton: &Skeleton, pose: &LocalPose) -> Result<Limb7, Limb7ChainError> {
        // shoulder frame → elbow's parent frame, then the elbow's translation and rest rotation.
        let to_elbow = between(skeleton, pose, self.shoulder, self.elbow);
        let (_, frame, upper) = to_elbow.to_scale_rotation_translation();
        let elbow_frame = (frame * skeleton.rest(self.elbow).rotation).normalize();
        let to_wrist = between(skeleton, pose, self.elbow, self.wrist);
        let (_, wrist_frame, lower) = to_wrist.to_scale_rotation_translation();
        Limb7::new(Limb7Geometry {
            upper,
            elbow_frame,
            elbow_axis: self.elbow_axis,
            elbow_range: self.elbow_range,
            lower,
            wrist_frame: wrist_frame.normalize(),
            swivel_reference: self.swivel_reference,
        })
        .map_err(|source| Limb7ChainError::Geometry {
            joint: skeleton.name(self.shoulder).to_owned(),
            source,
        })
    }

    /// `model_from_limb`: the shoulder's parent transform moved to the shoulder (model must
    /// hold the FK of `pose`).
    pub fn model_from_limb(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
        model: &ModelPose,
    ) -> DAffine3 {
        let local = DAffine3::from_translation(pose[self.shoulder].translation);
        skeleton
            .parent(self.shoulder)
            .map_or(local, |p| model[p] * local)
    }

    /// The limb-frame rotation of the limb frame's parent (model rotation of the shoulder's
    /// parent).
    fn model_rotation_of_limb(&self, skeleton: &Skeleton, model: &ModelPose) -> DQuat {
        skeleton
            .parent(self.shoulder)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p))
    }

    /// The current pose's swivel (model must hold the FK of `pose`).
    ///
    /// # Errors
    /// As [`limb`](Self::limb).
    pub fn current_swivel(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
    ) -> Result<f64, Limb7ChainError> {
        let limb = self.limb(skeleton, pose)?;
        Ok(limb.swivel_from_pose(
            pose[self.shoulder].rotation,
            self.elbow_angle(skeleton, pose),
        ))
    }

    /// The elbow's current hinge angle (the twist about the axis), moved into the range when a
    /// whole turn allows.
    pub fn elbow_angle(&self, skeleton: &Skeleton, pose: &LocalPose) -> f64 {
        let delta = skeleton.rest(self.elbow).rotation.conjugate() * pose[self.elbow].rotation;
        let angle = 2.0 * delta.xyz().dot(self.elbow_axis).atan2(delta.w);
        let [lo, hi] = self.elbow_range;
        into_range(angle, lo, hi).unwrap_or(angle)
    }
}

/// Solves the chain on a pose: FK into `model`, the limb's goal in its frame, the swivel from
/// `policy`, the closed form, limits enforced (a joint left outside its limit by the chosen
/// swivel is projected and named in the report), the rotations written into `pose` and `model`
/// updated (it holds the FK of the result).
///
/// # Errors
/// A non-finite goal or unusable geometry; `pose` is left untouched.
///
/// # Panics
/// When `pose` or `model` was sized for another skeleton.
pub fn solve_chain(
    skeleton: &Skeleton,
    chain: &Limb7Chain,
    goal: &Limb7Goal,
    policy: SwivelPolicy,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> Result<Limb7Report, Limb7ChainError> {
    fk::forward_kinematics(skeleton, pose, model);
    let limb = chain.limb(skeleton, pose)?;
    let report = solve_chain_in(skeleton, chain, &limb, goal, policy, pose, model)?;
    fk::update_subtree(skeleton, pose, model, chain.shoulder);
    Ok(report)
}

/// [`solve_chain`] with the chain's `limb` for this pose given (`chain.limb(skeleton, pose)`,
/// which a prepared task keeps while the bones do not change) and `model` holding the FK of
/// the shoulder's strict ancestors only. Writes the three rotations into `pose` and leaves
/// `model` as it was.
pub(crate) fn solve_chain_in(
    skeleton: &Skeleton,
    chain: &Limb7Chain,
    limb: &Limb7,
    goal: &Limb7Goal,
    policy: SwivelPolicy,
    pose: &mut LocalPose,
    model: &ModelPose,
) -> Result<Limb7Report, Limb7ChainError> {
    let geometry_error = |source| Limb7ChainError::Geometry {
        joint: skeleton.name(chain.shoulder).to_owned(),
        source,
    };
    if !goal.position.is_finite() || goal.orientation.is_some_and(|q| unit_quat(q).is_none()) {
        return Err(geometry_error(Limb7Error::NonFinite));
    }
    let model_from_limb = chain.model_from_limb(skeleton, pose, model);
    if model_from_limb.matrix3.determinant().abs() < 1e-300 {
        return Err(geometry_error(Limb7Error::NonFinite));
    }
    let target = model_from_limb.inverse().transform_point3(goal.position);
    let parent_rotation = chain.model_rotation_of_limb(skeleton, model);
    let orientation = goal
        .orientation
        .and_then(unit_quat)
        .map(|q| parent_rotation.conjugate() * q);
    let hint = chain.elbow_angle(skeleton, pose);
    let current = limb.swivel_from_pose(pose[chain.shoulder].rotation, hint);
    let limits = Limb7Limits {
        shoulder: skeleton.limit(chain.shoulder),
        shoulder_rest: skeleton.rest(chain.shoulder).rotation,
        wrist: skeleton.limit(chain.wrist),
        wrist_rest: skeleton.rest(chain.wrist).rotation,
    };
    let (mut solution, known_legal, mut feasible) = limb
        .choose_solution(policy, target, orientation, &limits, hint, current)
        .map_err(geometry_error)?;
    if let Some(goal) = orientation {
        solution.wrist = Some(limb.wrist_for(&solution, goal));
    }
    // Write, enforcing limits.
    let mut limited = Vec::new();
    let mut set = |joint: JointId, rotation: DQuat, known_legal: bool, pose: &mut LocalPose| {
        let rest = skeleton.rest(joint).rotation;
        let limit = skeleton.limit(joint);
        let delta = rest.conjugate() * rotation;
        let legal = if known_legal || limit.contains(delta) {
            rotation
        } else {
            limited.push(skeleton.name(joint).to_owned());
            (rest * limit.project(delta)).normalize()
        };
        pose[joint] = Transform {
            rotation: legal,
            ..pose[joint]
        };
    };
    set(chain.shoulder, solution.shoulder, known_legal, pose);
    set(
        chain.elbow,
        skeleton.rest(chain.elbow).rotation * solution.elbow_hinge,
        false,
        pose,
    );
    // Without an orientation goal the wrist keeps its rotation, which must be legal too.
    let wrist = solution.wrist.unwrap_or(pose[chain.wrist].rotation);
    set(
        chain.wrist,
        wrist,
        known_legal && solution.wrist.is_some(),
        pose,
    );
    if !limited.is_empty() && feasible.is_none() {
        let wishes = [solution.swivel, current];
        feasible = Some(
            limb.feasible_swivels(target, orientation, &limits, Some(hint), &wishes)
                .map_err(geometry_error)?,
        );
    }
    Ok(Limb7Report {
        reached: solution.reached && limited.is_empty(),
        in_reach: solution.reached,
        swivel: solution.swivel,
        feasible,
        limited,
    })
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

/// The 7-DOF limb as a [`SolverConfig`](crate::SolverConfig) kind: `{"kind": "limb7",
/// "swivel": "keep_current" | "middle_of_feasible" | {"fixed": 0.3} | {"nearest_feasible":
/// 0.3}}`. The chain is the task's single effector (wrist), its parent (elbow) and grandparent
/// (shoulder).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limb7Config {
    /// How the swivel is chosen. Default `keep_current`.
    pub swivel: SwivelPolicy,
    /// The elbow's hinge axis in its rest frame when it has no hinge limit; `None` (default)
    /// reads the hinge limit, or takes the current bend's normal (range then the whole circle,
    /// the current bend direction kept).
    pub elbow_axis: Option<[f64; 3]>,
}

/// Solves `task` (one effector: a position goal, and an orientation goal solved by the wrist)
/// as a 7-DOF limb. The report carries the swivel used and, for the feasible policies or when a
/// limit had to be enforced, the feasible swivel intervals.
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    config: &Limb7Config,
    pose: &mut LocalPose,
) -> SolveReport {
    match Limb7Task::new(skeleton, task, config) {
        Ok(mut prepared) => {
            let mut model = ModelPose::new(skeleton);
            prepared.update_frames(skeleton, pose, &mut model);
            prepared.solve_chain(skeleton, task, pose, &mut model)
        }
        Err(message) => SolveReport::invalid(message),
    }
}

/// A limb7 task's shape compiled once (the engine of [`solve_task`] and of a
/// [`PreparedTask`](crate::PreparedTask)): the chain validated, the frames it reads listed, and
/// the [`Limb7`] of the last solve kept while the bones it was built from stay the same.
#[derive(Clone, Debug)]
pub(crate) struct Limb7Task {
    /// Shoulder, elbow, wrist.
    joints: [JointId; 3],
    /// The shoulder's strict ancestors and then the shoulder → wrist path, root first.
    path: Vec<JointId>,
    /// Where the shoulder → wrist part of `path` begins.
    chain_from: usize,
    /// The chain, unless its elbow axis is taken from the current bend at each solve.
    chain: Option<Limb7Chain>,
    config: Limb7Config,
    /// The limb of the last solve, and the local transforms of the shoulder → wrist path it
    /// was built from (the chain joints' rotations, which it does not depend on, as identity).
    limb: Option<(Limb7, Vec<Transform>)>,
}

impl Limb7Task {
    /// Validates the task's shape (one effector with two ancestors, no base) and the chain.
    pub(crate) fn new(
        skeleton: &Skeleton,
        task: &IkTask,
        config: &Limb7Config,
    ) -> Result<Self, String> {
        let (_, joints) = analytic::chain_of::<3>(skeleton, task, "limb7")?;
        let [shoulder, elbow, wrist] = joints;
        let chain = match (config.elbow_axis, skeleton.limit(elbow)) {
            (None, JointLimit::Hinge(_)) => Some(Limb7Chain::new(skeleton, shoulder, elbow, wrist)),
            (Some(axis), _) => Some(Limb7Chain::with_hinge(
                skeleton,
                joints,
                DVec3::from_array(axis),
                [-PI, PI],
            )),
            (None, _) => None,
        }
        .transpose()
        .map_err(|error| error.to_string())?;
        let (path, chain_from) = analytic::frames_path(skeleton, shoulder, wrist);
        Ok(Self {
            joints,
            path,
            chain_from,
            chain,
            config: *config,
            limb: None,
        })
    }

    /// The part of `pose` the limb is built from, for joint `j` of the shoulder → wrist path:
    /// the shoulder's scale, the elbow's and wrist's translation and scale, every transform
    /// between them.
    fn bone(&self, pose: &LocalPose, j: JointId) -> Transform {
        let t = pose[j];
        if j == self.joints[0] {
            Transform {
                translation: DVec3::ZERO,
                rotation: DQuat::IDENTITY,
                scale: t.scale,
            }
        } else if self.joints.contains(&j) {
            Transform {
                rotation: DQuat::IDENTITY,
                ..t
            }
        } else {
            t
        }
    }

    /// Computes into `model` the frames [`solve`](Self::solve) reads: the shoulder's
    /// ancestors, and the chain when the elbow axis comes from its current bend.
    pub(crate) fn update_frames(
        &self,
        skeleton: &Skeleton,
        pose: &LocalPose,
        model: &mut ModelPose,
    ) {
        let read = if self.chain.is_some() {
            &self.path[..self.chain_from]
        } else {
            &self.path[..]
        };
        fk::update_joints(skeleton, pose, model, read);
    }
}

impl ChainEngine for Limb7Task {
    /// The chain's joints, shoulder first.
    fn chain(&self) -> &[JointId] {
        &self.path[self.chain_from..]
    }

    /// Solves `task` (the shape given to [`new`](Self::new), its goals now) on `pose`, with
    /// `model` holding the frames [`update_frames`](Self::update_frames) computes (or the
    /// caller's forward kinematics of `pose`); afterwards `model` holds the chain's new frames
    /// (the rest of its subtree is stale).
    fn solve_chain(
        &mut self,
        skeleton: &Skeleton,
        task: &IkTask,
        pose: &mut LocalPose,
        model: &mut ModelPose,
    ) -> SolveReport {
        let effector = task.effectors[0];
        let Some(position) = effector.goal.position else {
            return SolveReport::invalid("`limb7` needs a position goal".into());
        };
        let [shoulder, elbow, wrist] = self.joints;
        let chain_path = &self.path[self.chain_from..];
        let rebuilt;
        let chain = if let Some(chain) = &self.chain {
            chain
        } else {
            // The elbow axis from the current bend (range the whole circle).
            let (s, e, w) = (
                model.position(shoulder),
                model.position(elbow),
                model.position(wrist),
            );
            let current = model.rotation(elbow).inverse() * (e - s).cross(w - e);
            let axis = skeleton.rest(elbow).rotation.inverse() * (pose[elbow].rotation * current);
            rebuilt = match Limb7Chain::with_hinge(skeleton, self.joints, axis, [-PI, PI]) {
                Ok(chain) => chain,
                Err(error) => return SolveReport::invalid(error.to_string()),
            };
            &rebuilt
        };
        // The kept limb stays in place (a `Limb7` is a few hundred bytes: no move per solve).
        let kept = self.limb.as_ref().is_some_and(|(_, bones)| {
            chain_path
                .iter()
                .zip(bones)
                .all(|(&j, bone)| self.bone(pose, j) == *bone)
        });
        let rebuilt_limb;
        let limb = match (&self.limb, kept) {
            (Some((limb, _)), true) => limb,
            _ => match chain.limb(skeleton, pose) {
                Ok(limb) => {
                    rebuilt_limb = limb;
                    &rebuilt_limb
                }
                Err(error) => return SolveReport::invalid(error.to_string()),
            },
        };
        let goal = Limb7Goal {
            position,
            orientation: effector.goal.orientation,
        };
        let outcome = match solve_chain_in(
            skeleton,
            chain,
            limb,
            &goal,
            self.config.swivel,
            pose,
            model,
        ) {
            Ok(outcome) => outcome,
            Err(error) => return SolveReport::invalid(error.to_string()),
        };
        if self.chain.is_some() && !kept {
            let bones = chain_path.iter().map(|&j| self.bone(pose, j)).collect();
            self.limb = Some((*limb, bones));
        }
        fk::update_joints(skeleton, pose, model, chain_path);
        // `solve_chain_in` enforced the three limits already.
        let mut report = analytic::report(task, outcome.reached, outcome.limited, model);
        if let (SolveStatus::Unreachable, SwivelPolicy::Fixed(_), Some(feasible)) =
            (report.status, self.config.swivel, &outcome.feasible)
            && !feasible.is_empty()
            && outcome.in_reach
        {
            // Only the swivel was in the way: another one is feasible. Not "unreachable".
            report.status = SolveStatus::MaxIterations;
            report.message = Some(format!(
                "the fixed swivel {:.4} rad puts {} outside the limits (projected); feasible \
                 swivels exist, use `nearest_feasible` or `keep_current`",
                outcome.swivel,
                report.active_limits.join(", ")
            ));
        }
        report.swivel = Some(outcome.swivel);
        report.feasible_swivels = outcome
            .feasible
            .map(|intervals| intervals.iter().map(|i| [i.start, i.end]).collect());
        report
    }
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

#[cfg(test)]
mod tests {
    use super::{DQuat, DVec3, Limb7, Limb7Geometry};

    #[test]
    fn dispatched_solve_pose_gives_the_bits_of_the_baseline_build() {
        // `solve_pose` runs the closed form compiled for the best instruction set of this
        // machine; called directly here it is the baseline (SSE2) build. Same bits expected.
        let mut geometry = Limb7Geometry::seed(0.28, 0.25);
        geometry.elbow_frame = DQuat::from_rotation_x(0.3);
        geometry.lower = DVec3::new(0.02, -0.25, 0.01);
        let limb = Limb7::new(geometry).expect("valid limb");
        let mut rng = crate::test_rng::Xorshift(0x9e37_79b9_7f4a_7c15_u64);
        let mut next = || rng.signed();
        for i in 0..5000 {
            let target = DVec3::new(next(), next(), next()) * 0.6;
            let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::Z);
            let goal = DQuat::from_axis_angle(axis, next() * 3.0);
            let swivel = next() * 4.0;
            let hint = (i % 2 == 0).then(|| next() * 3.0);
            let dispatched = limb
                .solve_pose(target, goal, swivel, hint)
                .expect("finite input");
            let mut baseline = limb.solve_unchecked(target, swivel, hint);
            baseline.wrist = Some(limb.wrist_for(&baseline, goal));
            assert_eq!(dispatched, baseline, "{target} {goal} {swivel} {hint:?}");
        }
    }
}
