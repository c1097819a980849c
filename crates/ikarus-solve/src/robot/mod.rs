//! Closed-form IK for robot chains read from URDF ([`JointChain`]): which closed form a chain's
//! geometry admits ([`ClosedForm::detect`]), and the solvers that map it once onto the 7-DOF
//! limb ([`SrsArm`], on [`Limb7`](crate::analytic::limb7::Limb7); seed 000, 7-DOF limb) or
//! the leg decomposition ([`RobotLeg`]; seed 003, humanoid robot leg) and return joint vectors `q`
//! in the URDF's own convention. Chains without a closed form are solved numerically on the same
//! axis lines by [`lm`] (Levenberg–Marquardt on `q`, what [`batch`](crate::runtime::threaded) runs
//! for LM).
//!
//! ## Conventions
//!
//! - Everything is in the chain's **base frame** (the base link's frame); targets are
//!   `base_from_tip` frames, as robot IK is posed and as [`batch`](crate::runtime::threaded) takes them.
//! - The chain is read once at `q = 0` as a product of exponentials: each joint is a unit axis
//!   and a point on it in the base frame ([`Screws`]), and the tip frame at `q = 0`. The URDF's
//!   fixed offsets, frame rotations (`rpy`) and axis signs all end up in these lines, so the
//!   solvers never see a link frame and `q` needs no sign or offset conversion.
//! - Radians and metres; `q` angles are fitted into each joint's limits by whole turns.
//!
//! ## The shapes (tolerances)
//!
//! Lines *meet* when a point lies within `MEET_TOLERANCE` (1e-6) × the chain's size (the
//! summed distances between consecutive joint points and the tip) of each; two axes are
//! *parallel* when `|a × b| < PARALLEL_TOLERANCE` (1e-6). A geometry within these tolerances
//! of the ideal one is solved as the ideal one; the residuals the callers report are measured
//! by forward kinematics, so any such error shows.
//!
//! | form | joints | condition |
//! |---|---|---|
//! | [`ClosedForm::SrsArm`] | 7 revolute | axes 1–3 meet (shoulder), axes 5–7 meet (wrist), consecutive axes of each not parallel, the elbow (4) changes the shoulder–wrist distance |
//! | [`ClosedForm::Leg`] | 6 revolute | axes 1–3 meet (hip), axes 5–6 meet (ankle), not parallel pairwise in order, the knee (4) changes the hip–ankle distance |
//! | [`ClosedForm::SphericalWristArm`] | 6 revolute | axes 4–6 meet (spherical wrist), axes 1–2 meet: the leg's shape read from the tip, solved by the same code on the reversed chain |
//!
//! [`NoClosedForm`] says, for each form, the first condition that failed (for UR-type arms:
//! their wrist axes do not meet; for the Panda: its forearm and flange offsets keep axes 5–7
//! apart).

mod auto;
mod leg;
pub mod lm;
mod srs;
pub(crate) mod subproblem;

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::chain::{ChainError, ChainMotion, JointChain};
use ikarus_core::{ModelPose, Skeleton, fk};
use serde::{Deserialize, Serialize};

pub(crate) use auto::solve_task;
pub use leg::RobotLeg;
pub use srs::SrsArm;

use crate::analytic::limb7::SwivelPolicy;

/// Lines meet when a point is within this fraction of the chain's size from each.
pub const MEET_TOLERANCE: f64 = 1e-6;

/// Unit axes are parallel when the length of their cross product is below this.
pub const PARALLEL_TOLERANCE: f64 = 1e-6;

/// Limit overshoots up to this (radians) are rounding and are clamped away.
const LIMIT_SLACK: f64 = 1e-9;

/// One revolute joint at `q = 0`: its axis line in the base frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Screw {
    /// Unit axis, base frame; positive `q` turns right-handedly about it.
    pub axis: DVec3,
    /// A point on the axis, base frame, metres.
    pub point: DVec3,
}

impl Screw {
    /// The rotation of this joint by `angle` as a rigid motion of the base frame.
    pub fn motion(&self, angle: f64) -> DAffine3 {
        let rotation = DQuat::from_axis_angle(self.axis, angle);
        DAffine3::from_rotation_translation(rotation, self.point - rotation * self.point)
    }
}

/// A revolute chain as a product of exponentials: `base_from_tip(q) = e₁(q₁) ⋯ eₙ(qₙ) · tip`,
/// with `eᵢ` the turn about [`Screw`] `i` and `tip` the tip frame at `q = 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Screws {
    /// The joints, base to tip.
    pub joints: Vec<Screw>,
    /// Their names (the URDF joints').
    pub names: Vec<String>,
    /// `base_from_tip` at `q = 0`.
    pub tip: DAffine3,
    /// Lower limits (`-∞` for continuous joints).
    pub lower: Vec<f64>,
    /// Upper limits (`+∞` for continuous joints).
    pub upper: Vec<f64>,
    /// The chain's size: summed distances between consecutive joint points and to the tip,
    /// metres (at least 1 mm); the scale of [`MEET_TOLERANCE`].
    pub size: f64,
}

impl Screws {
    /// Reads `chain` at `q = 0`.
    ///
    /// # Errors
    /// [`ShapeError`] when a joint is prismatic (the closed forms here turn joints only).
    pub fn from_chain(skeleton: &Skeleton, chain: &JointChain) -> Result<Self, ShapeError> {
        let mut pose = skeleton.rest_pose();
        chain.set_q(skeleton, &vec![0.0; chain.dof()], &mut pose)?;
        let mut model = ModelPose::new(skeleton);
        fk::forward_kinematics(skeleton, &pose, &mut model);
        let base_from_model = model[chain.base()].inverse();
        let mut joints = Vec::with_capacity(chain.dof());
        for dof in chain.dofs() {
            let ChainMotion::Revolute { axis, .. } = dof.motion else {
                return Err(ShapeError::Prismatic {
                    joint: dof.name.clone(),
                });
            };
            let frame = base_from_model * model[dof.joint];
            joints.push(Screw {
                axis: frame.transform_vector3(axis).normalize(),
                point: frame.translation,
            });
        }
        let tip = chain.tip_in_base(&model);
        let mut size: f64 = joints
            .windows(2)
            .map(|w| (w[1].point - w[0].point).length())
            .sum();
        size += joints
            .last()
            .map_or(0.0, |j| (tip.translation - j.point).length());
        Ok(Self {
            joints,
            names: chain.names().map(str::to_owned).collect(),
            tip,
            lower: chain.lower().to_vec(),
            upper: chain.upper().to_vec(),
            size: size.max(1e-3),
        })
    }

    /// Forward kinematics: `base_from_tip` for `q`.
    pub fn forward(&self, q: &[f64]) -> DAffine3 {
        self.joints
            .iter()
            .zip(q)
            .fold(DAffine3::IDENTITY, |frame, (joint, &angle)| {
                frame * joint.motion(angle)
            })
            * self.tip
    }

    /// The same chain read from the tip: `tip_from_base(q) = e′₁(−qₙ) ⋯ e′ₙ(−q₁) · tip⁻¹`,
    /// joints in reverse order with negated angles and limits.
    #[must_use]
    pub fn reversed(&self) -> Self {
        let tip_from_base = self.tip.inverse();
        Self {
            joints: self
                .joints
                .iter()
                .rev()
                .map(|j| Screw {
                    axis: tip_from_base.transform_vector3(j.axis),
                    point: tip_from_base.transform_point3(j.point),
                })
                .collect(),
            names: self.names.iter().rev().cloned().collect(),
            tip: tip_from_base,
            lower: self.upper.iter().rev().map(|u| -u).collect(),
            upper: self.lower.iter().rev().map(|l| -l).collect(),
            size: self.size,
        }
    }

    /// The point where the axes of `joints` meet, or a sentence saying by how much they miss
    /// (or which two are parallel, for two axes).
    fn meet(&self, joints: &[usize]) -> Result<DVec3, ShapeError> {
        let names = || {
            joints
                .iter()
                .map(|&i| format!("`{}`", self.names[i]))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // The point nearest every line: Σ (I − aaᵀ) x = Σ (I − aaᵀ) p.
        let mut matrix = glam::DMat3::ZERO;
        let mut rhs = DVec3::ZERO;
        for &i in joints {
            let Screw { axis, point } = self.joints[i];
            let projector = glam::DMat3::IDENTITY
                - glam::DMat3::from_cols(axis * axis.x, axis * axis.y, axis * axis.z);
            matrix += projector;
            rhs += projector * point;
        }
        if matrix.determinant().abs() < PARALLEL_TOLERANCE * PARALLEL_TOLERANCE {
            return Err(ShapeError::Parallel { joints: names() });
        }
        let point = matrix.inverse() * rhs;
        let miss = joints
            .iter()
            .map(|&i| {
                let Screw { axis, point: on } = self.joints[i];
                let d = point - on;
                (d - axis.dot(d) * axis).length()
            })
            .fold(0.0, f64::max);
        if miss > MEET_TOLERANCE * self.size {
            return Err(ShapeError::Miss {
                joints: names(),
                miss,
            });
        }
        Ok(point)
    }

    /// A sentence when the axes of consecutive `joints` are parallel.
    fn not_parallel(&self, joints: &[usize]) -> Result<(), ShapeError> {
        for pair in joints.windows(2) {
            let (a, b) = (self.joints[pair[0]].axis, self.joints[pair[1]].axis);
            if a.cross(b).length() < PARALLEL_TOLERANCE {
                return Err(ShapeError::Parallel {
                    joints: format!("`{}`, `{}`", self.names[pair[0]], self.names[pair[1]]),
                });
            }
        }
        Ok(())
    }

    fn expect_revolute(&self, count: usize) -> Result<(), ShapeError> {
        if self.joints.len() == count {
            Ok(())
        } else {
            Err(ShapeError::Joints {
                needed: count,
                found: self.joints.len(),
            })
        }
    }
}

/// The closed form a chain admits, prepared once.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // built once per chain; boxing would add a load per solve
pub enum ClosedForm {
    /// A 7-DOF spherical–revolute–spherical arm (KUKA iiwa and the like) on the 7-DOF limb
    /// (seed 000, 7-DOF limb).
    SrsArm(SrsArm),
    /// A six-joint leg (seed 003, humanoid robot leg): three hip axes meeting, a knee, two
    /// ankle axes meeting.
    Leg(RobotLeg),
    /// A 6R arm with a spherical wrist and intersecting first two axes (the leg read from the
    /// tip).
    SphericalWristArm(RobotLeg),
}

/// Why a chain has no closed form: the first failed condition of each shape.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "no closed form: not an S-R-S arm ({srs_arm}); not a six-joint leg ({leg}); \
     not a 6R arm with a spherical wrist ({spherical_wrist})"
)]
#[non_exhaustive]
pub struct NoClosedForm {
    /// Why the chain is not a 7-DOF S-R-S arm.
    pub srs_arm: ShapeError,
    /// Why it is not a six-joint leg.
    pub leg: ShapeError,
    /// Why it is not a 6R arm with a spherical wrist.
    pub spherical_wrist: ShapeError,
}

/// Why a chain does not have a closed form's shape: the first condition that fails.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeError {
    /// The chain's joint vector could not be set (see [`ChainError`]).
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// A joint slides; the closed forms turn joints only.
    #[error("joint `{joint}` is prismatic")]
    Prismatic {
        /// The joint.
        joint: String,
    },
    /// The shape needs another number of revolute joints.
    #[error("{needed} revolute joints needed, the chain has {found}")]
    Joints {
        /// Joints the shape has.
        needed: usize,
        /// Joints the chain has.
        found: usize,
    },
    /// Axes that must cross are parallel.
    #[error("the axes of {joints} are parallel")]
    Parallel {
        /// The joints, quoted and comma-separated.
        joints: String,
    },
    /// Axes that must meet in one point miss it.
    #[error("the axes of {joints} miss a common point by {miss:.3e} m")]
    Miss {
        /// The joints, quoted and comma-separated.
        joints: String,
        /// The largest distance of an axis from the nearest common point, metres.
        miss: f64,
    },
    /// The point where a group of axes should meet (`spherical shoulder`, `spherical hip`, …)
    /// is not there.
    #[error("no {point}: {source}")]
    NoPoint {
        /// The point's name.
        point: &'static str,
        /// Why.
        source: Box<ShapeError>,
    },
    /// The knee's axis passes through the hip or the ankle point.
    #[error(
        "the knee `{joint}` does not change the hip–ankle distance (its axis passes through the \
         hip or the ankle point)"
    )]
    Knee {
        /// The knee joint.
        joint: String,
    },
    /// The elbow's geometry does not make a 7-DOF limb.
    #[error("the elbow `{joint}` does not fit a limb: {source}")]
    Elbow {
        /// The elbow joint.
        joint: String,
        /// The limb's complaint.
        source: Box<crate::analytic::limb7::Limb7Error>,
    },
    /// The chain read from the tip does not have the shape.
    #[error("read from the tip: {0}")]
    FromTip(Box<ShapeError>),
}

impl ShapeError {
    /// `self` as the reason the point `point` is missing.
    pub(crate) fn no_point(point: &'static str) -> impl FnOnce(Self) -> Self {
        move |source| Self::NoPoint {
            point,
            source: Box::new(source),
        }
    }
}

/// What a closed-form solve found besides `q`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotOutcome {
    /// The returned `q` reaches the target (exactly, up to rounding) with every joint inside
    /// its limits. When false the target is out of reach or no branch (and no swivel) fits
    /// the limits, and `q` is the legal pose nearest a solution (its joints clamped).
    pub reached: bool,
    /// The swivel angle used (radians; S-R-S arms only).
    pub swivel: Option<f64>,
}

impl ClosedForm {
    /// Recognises the chain's shape (see the module docs) and prepares its solver.
    ///
    /// # Errors
    /// [`NoClosedForm`] with the reason for each shape.
    pub fn detect(skeleton: &Skeleton, chain: &JointChain) -> Result<Self, NoClosedForm> {
        let screws = Screws::from_chain(skeleton, chain).map_err(|reason| NoClosedForm {
            srs_arm: reason.clone(),
            leg: reason.clone(),
            spherical_wrist: reason,
        })?;
        Self::from_screws(&screws)
    }

    /// [`detect`](Self::detect) on a chain already read as screws.
    ///
    /// # Errors
    /// [`NoClosedForm`] with the reason for each shape.
    pub fn from_screws(screws: &Screws) -> Result<Self, NoClosedForm> {
        let srs_arm = match SrsArm::new(screws) {
            Ok(arm) => return Ok(Self::SrsArm(arm)),
            Err(reason) => reason,
        };
        let leg = match RobotLeg::new(screws) {
            Ok(leg) => return Ok(Self::Leg(leg)),
            Err(reason) => reason,
        };
        let spherical_wrist = match RobotLeg::new_reversed(screws) {
            Ok(arm) => return Ok(Self::SphericalWristArm(arm)),
            Err(reason) => reason,
        };
        Err(NoClosedForm {
            srs_arm,
            leg,
            spherical_wrist,
        })
    }

    /// The form's name: `srs_arm`, `leg` or `spherical_wrist_arm`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::SrsArm(_) => "srs_arm",
            Self::Leg(_) => "leg",
            Self::SphericalWristArm(_) => "spherical_wrist_arm",
        }
    }

    /// The length of `q`.
    pub fn dof(&self) -> usize {
        match self {
            Self::SrsArm(_) => 7,
            Self::Leg(_) | Self::SphericalWristArm(_) => 6,
        }
    }

    /// Solves for the tip frame `position`, `rotation` (`base_from_tip`, base frame) from
    /// `seed` and writes `q` (URDF convention). Among all solutions (every branch; for arms,
    /// the swivel `swivel` picks) the one inside the limits nearest the seed is returned.
    /// `seed` and `q` must have [`dof`](Self::dof) entries; a wrong length or a non-finite
    /// input leaves `q` as the seed and reports not reached.
    pub fn solve(
        &self,
        position: DVec3,
        rotation: DQuat,
        seed: &[f64],
        swivel: SwivelPolicy,
        q: &mut [f64],
    ) -> RobotOutcome {
        let n = self.dof();
        let failed = RobotOutcome {
            reached: false,
            swivel: None,
        };
        if seed.len() != n || q.len() != n {
            return failed;
        }
        q.copy_from_slice(seed);
        let rotation = rotation.normalize();
        if !position.is_finite() || !rotation.is_finite() || seed.iter().any(|v| !v.is_finite()) {
            return failed;
        }
        match self {
            Self::SrsArm(arm) => {
                let mut s = [0.0; 7];
                s.copy_from_slice(seed);
                let (solution, outcome) = arm.solve(position, rotation, &s, swivel);
                q.copy_from_slice(&solution);
                outcome
            }
            Self::Leg(leg) | Self::SphericalWristArm(leg) => {
                let mut s = [0.0; 6];
                s.copy_from_slice(seed);
                let (solution, reached) = leg.solve(position, rotation, &s);
                q.copy_from_slice(&solution);
                RobotOutcome {
                    reached,
                    swivel: None,
                }
            }
        }
    }
}

/// `angle` moved by whole turns into `[lo, hi]` nearest `seed` (for an unbounded joint, the
/// turn nearest the seed), and how far outside the limits it still is (0 when legal).
#[allow(clippy::inline_always)] // 56 calls per swivel of a 7-DOF arm
#[inline(always)]
fn fit(angle: f64, lo: f64, hi: f64, seed: f64) -> (f64, f64) {
    use std::f64::consts::TAU;
    if hi - lo < TAU {
        // At most one turn of the angle fits: the common case costs two comparisons.
        for a in [angle, angle - TAU, angle + TAU] {
            if lo <= a && a <= hi {
                return (a, 0.0);
            }
        }
        if angle.is_finite() {
            // None fits: the turn nearest the limits' middle is the least outside them (they
            // are symmetric about it). Rounded by the 1.5·2⁵² shift: `f64::round` is a
            // library call on baseline x86-64.
            const SHIFT: f64 = 6_755_399_441_055_744.0;
            let turns = ((0.5 * (lo + hi) - angle) * (1.0 / TAU) + SHIFT) - SHIFT;
            let a = angle + turns * TAU;
            return (a, (lo - a).max(a - hi).max(0.0));
        }
    }
    fit_slow(angle, lo, hi, seed)
}

/// [`fit`] for angles outside narrow limits, wide limits and unbounded joints.
fn fit_slow(angle: f64, lo: f64, hi: f64, seed: f64) -> (f64, f64) {
    use std::f64::consts::TAU;
    if !(lo.is_finite() && hi.is_finite()) {
        return (angle + ((seed - angle) / TAU).round() * TAU, 0.0);
    }
    let score = |a: f64| ((lo - a).max(a - hi).max(0.0), (a - seed).abs());
    let mut best = (angle, score(angle));
    // Every turn that can land inside, and one more either side.
    let first = ((lo - angle) / TAU).ceil() - 1.0;
    let last = ((hi - angle) / TAU).floor() + 1.0;
    let mut k = first;
    while k <= last && k - first < 64.0 {
        let a = angle + k * TAU;
        let s = score(a);
        if s < best.1 {
            best = (a, s);
        }
        k += 1.0;
    }
    let (a, (violation, _)) = best;
    if violation <= LIMIT_SLACK {
        (a.clamp(lo, hi), 0.0)
    } else {
        (a, violation)
    }
}

/// Fits every angle of `q` (see [`fit`]); returns the summed violation and the squared
/// distance to the seed.
#[allow(clippy::inline_always)] // hot: once per branch
#[inline(always)]
fn fit_all<const N: usize>(
    q: &mut [f64; N],
    lower: &[f64; N],
    upper: &[f64; N],
    seed: &[f64; N],
) -> (f64, f64) {
    let (mut violation, mut distance) = (0.0, 0.0);
    for i in 0..N {
        let (a, v) = fit(q[i], lower[i], upper[i], seed[i]);
        q[i] = a;
        violation += v;
        distance += (a - seed[i]) * (a - seed[i]);
    }
    (violation, distance)
}

/// The best of a set of candidates: the legal one nearest the seed, or, when none is legal,
/// the one with the smallest violation.
#[derive(Clone, Copy, Debug)]
struct Best<const N: usize> {
    q: [f64; N],
    violation: f64,
    distance: f64,
}

impl<const N: usize> Best<N> {
    const NONE: Self = Self {
        q: [0.0; N],
        violation: f64::INFINITY,
        distance: f64::INFINITY,
    };

    fn is_legal(&self) -> bool {
        self.violation == 0.0
    }

    /// Offers a candidate (already fitted).
    fn offer(&mut self, q: [f64; N], violation: f64, distance: f64) {
        if (violation, distance) < (self.violation, self.distance) {
            *self = Self {
                q,
                violation,
                distance,
            };
        }
    }

    /// The pose to return: legal as is, otherwise clamped into the limits.
    fn clamped(mut self, lower: &[f64; N], upper: &[f64; N]) -> [f64; N] {
        for i in 0..N {
            if self.q[i].is_finite() {
                self.q[i] = self.q[i].max(lower[i]).min(upper[i]);
            } else {
                self.q[i] = 0.0f64.max(lower[i]).min(upper[i]);
            }
        }
        self.q
    }
}

/// Closed form when the chain has one, Levenberg–Marquardt otherwise:
/// `{"kind": "auto", "swivel": "keep_current"}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutoConfig {
    /// How an S-R-S arm's swivel is chosen (`keep_current`: the seed's swivel, or the nearest
    /// feasible one).
    pub swivel: SwivelPolicy,
    /// The solver for chains without a closed form.
    pub fallback: crate::iterative::lm::LmConfig,
}

fn copy_array<const N: usize>(v: &[f64]) -> [f64; N] {
    let mut out = [0.0; N];
    out.copy_from_slice(&v[..N]);
    out
}
