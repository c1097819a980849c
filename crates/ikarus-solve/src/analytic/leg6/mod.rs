//! Closed-form IK of a six-joint humanoid robot leg: hip yaw, hip roll, hip pitch, knee
//! pitch, ankle pitch, ankle roll. Seed 003 (the geometric solution with the sole parallel to
//! the ground), the general solution for any 6-D foot pose on the same kinematics, and the
//! heel-only / toe-only contacts the seed announces.
//!
//! ## Conventions
//!
//! - **Leg frame**: the pure solver works in the pelvis joint's space with leg axes
//!   **x forward, y left, z up**, metres, radians, right-handed. These are the seed's axes and
//!   those of robot description files (URDF, +Z up). For ikarus skeletons (+Y up, facing +Z,
//!   left +X) the leg frame is [`Y_UP_FROM_LEG`] away; the chain adapter ([`Leg6Chain`])
//!   derives the leg frame from the joints' hinge axes, so it works for any skeleton
//!   orientation and converts targets and angles itself.
//! - **Axes and signs**: hip yaw turns about +z, hip and ankle roll about +x, hip, knee and
//!   ankle pitch about +y, all right-handed, all zero in the leg's zero pose
//!   ([`Leg6Params`]). Hence a **negative hip pitch swings the thigh forward** (flexion), a
//!   **positive knee angle bends the knee** (the shank swings back, the knee points forward;
//!   the solver never bends it the other way), a positive ankle pitch points the toes down and
//!   a positive roll tilts the leg's lower end towards +y (left).
//! - Quaternions `[x, y, z, w]` (glam [`DQuat`]), column vectors, f64.
//!
//! ## The leg ([`Leg6Params`])
//!
//! In the zero pose the hip centre, where the **three hip axes meet** (a spherical hip, in any
//! of the six [`HipOrder`]s), sits at `hip` in the leg frame; the knee axis passes through
//! `hip + thigh`, the ankle pitch axis through `+ shank`, the ankle roll axis through
//! `+ ankle`, and the sole point lies at `+ sole`. The three pitch axes are parallel (+y) and
//! the ankle roll axis is perpendicular to them. Everything this describes is solved
//! **exactly**:
//!
//! - forward/backward components of `thigh` and `shank` (a knee set off the hip–ankle line),
//!   and `ankle` anywhere (an ankle roll axis below the pitch axis, as on the Unitree G1);
//! - lateral components (along the pitch axes) of `thigh`, `shank` and `ankle`: their sum `W`
//!   is the seed's offset between the hip roll axis and the leg's sagittal plane.
//!
//! Not covered by the closed form: a hip whose three axes do not meet (the G1's hip pitch axis
//! passes 3.6 cm from the point where its roll and yaw axes meet — such a leg has no closed
//! form), hip axes tilted from the leg frame, and a hyperextending knee.
//!
//! ## Seed 003: sole parallel to the ground ([`solve_level`])
//!
//! The target is the sole point and the foot's yaw, with the pelvis upright (seed
//! constraints 1 and 2; the pelvis's yaw is the frame's, so `yaw` is the seed's `ψ_f − ψ_r`).
//! Following the seed, for the `YawRollPitch` order:
//!
//! 1. **Hip yaw** is the only yaw joint: `θ_h = ψ_f − ψ_r`.
//! 2. **Roll**: in the hip yaw joint's YZ plane, with `a = y'_f − y'_l`, `b = z'_l − z'_f`
//!    (ankle roll joint relative to the hip centre), the leg's plane lies at distance `W` from
//!    the hip roll axis: `a − b tan θ_l = W / cos θ_l`. The seed's root
//!    `tan θ_l = (ab − W√(a² + b² − W²)) / (b² − W²)` (the one with `θ_l = 0` at `a = W`) is
//!    evaluated as `θ_l = atan2(a h − b W, a W + b h)` with `h = √(a² + b² − W²)`, the same
//!    angle without a division by `b² − W²`. The sole stays level, so the ankle roll is
//!    `−θ_l` in these axes (the seed's `θ_f = θ_l` with its own sign convention).
//! 3. **Pitches** by the law of cosines in the hip roll joint's XZ plane, hip `P_u`, ankle
//!    pitch joint `P_a`: `γ` from `L_ua² = L_uk² + L_ka² − 2 L_uk L_ka cos γ`, the knee
//!    `θ_k = π − γ`, `α` at the hip (its sine from the law of sines, so that `α` and `γ`
//!    carry the same rounding), `β` the direction of `P_u → P_a`, and the hip pitch
//!    `−(α + β)`. The seed writes `β = arctan((z'_u − z'_a) / (x'_a − x'_u))`, measured from
//!    the horizontal; here the zero pose hangs straight down, so `β` is measured from the
//!    downward vertical, `atan2(x'_a − x'_u, z'_u − z'_a)`. Knee and thigh directions of
//!    offset links are added. The sole stays level: ankle pitch `= −(hip pitch + knee)` (the
//!    seed's `θ_a = θ_k − θ_u`).
//!
//! Other hip orders have no such shortcut; [`solve_level`] then solves the foot pose
//! `Rz(yaw)` with [`solve_pose`].
//!
//! ## General 6-D foot pose ([`solve_pose`])
//!
//! From the foot back to the hip:
//!
//! 1. The ankle roll joint is `position − R_foot · sole`; `r` is the vector from it to the hip
//!    centre in the foot frame.
//! 2. **Ankle roll** turns `(r_y, r_z)` onto `(−W, h)`, `h = √(r_y² + r_z² − W²)`: the seed's
//!    roll equation seen from the foot. The root with the hip above the ankle (`h ≥ 0`) is
//!    tried first; the other root only when the first cannot be reached or breaks a limit.
//! 3. **Knee** by the law of cosines on the hip → ankle pitch joint vector `w` in the ankle
//!    pitch joint's XZ plane (`|w|² = |t|² + |s|² + 2|t||s| cos(k − δ)` for thigh `t` and
//!    shank `s`, `δ` the knee angle that straightens offset links, 0 for straight ones), then
//!    **ankle pitch** as the angle that turns the two-link vector onto `w`.
//! 4. **Hip**: `R_hip = R_foot · Rx(−roll) · Ry(−(knee + ankle pitch))`, decomposed in the hip
//!    order. Of its two decompositions the one inside the limits is taken (the one with the
//!    middle angle in `[−π/2, π/2]` when both or neither are).
//!
//! The two forms agree on level targets ([`solve_level`] with `YawRollPitch` equals
//! [`solve_pose`] of `Rz(yaw)` to rounding).
//!
//! ## Heel and toe contact ([`solve_contact`])
//!
//! The foot rests on its heel line (`heel` metres behind the sole point) or its toe line
//! (`toe` metres ahead), pitched about it by `pitch` (the ankle pitch's sign: negative lifts
//! the toes, positive lifts the heel) and yawed by `yaw`: the foot rotation is
//! `Rz(yaw) · Ry(pitch)` and the sole point is placed so that the contact point stays where
//! asked; that pose is then solved with [`solve_pose`].
//!
//! ## Limits, unreachable targets, degenerate input
//!
//! Joint limits ([`Leg6Limits`], relative to the zero pose) are applied joint by joint from
//! the foot up: ankle roll, knee, ankle pitch, then the hip. A clamped lower joint is followed
//! by the joints above it, so the **foot orientation stays exact unless a hip joint is
//! clamped**; the position is what gives. Clamped joints are flagged in
//! [`Leg6Output::limited`], and the status is [`Leg6Status::Limited`].
//!
//! A target too far away straightens the knee and points the leg at it, a target too close
//! folds the knee fully; the foot keeps the asked orientation and the status is
//! [`Leg6Status::OutOfReach`]. A target at the hip, zero-length links and a sole point at the
//! ankle are handled (undetermined angles are 0; a fully folded pair of equal links lands
//! exactly on the hip). NaN or infinite input (target or parameters), unordered limits or a
//! zero quaternion give [`Leg6Status::InvalidInput`] and zero angles. The solver never panics
//! and never returns NaN.
//!
//! ## Skeletons ([`Leg6Chain`], [`solve_chain`])
//!
//! [`Leg6Chain::new`] binds six hinge joints of a [`Skeleton`] (their axes and ranges from
//! [`JointLimit::Hinge`]), finds the hip order from the hierarchy, derives the leg frame from
//! the axes (so +Y-up skeletons and URDF-style +Z-up ones work alike) and checks that the leg
//! is one the closed form solves exactly: axes along the leg frame within [`CHAIN_TOLERANCE`],
//! hip axes meeting in one point. The real Unitree G1 leg is rejected (its hip is not
//! spherical); the tests solve a G1-proportioned leg whose hip is. [`solve_chain`] takes a
//! model-space target, writes the six local rotations and updates the [`ModelPose`].
//!
//! ## Cost
//!
//! About 82 ns per [`solve_level`] and 88–91 ns per [`solve_pose`] (f64, see `BENCHMARKS.md`;
//! `solve_pose` runs code compiled for the instruction set found at run time, AVX2 or
//! AVX-512, with the same bits as the baseline build). No libm call on the common path: the
//! six angles come from an in-module `atan2` (within 2 ulp) evaluated for all six together,
//! limits are checked once at the end (the joint-by-joint clamping pass runs only when a lower
//! joint is out), and lengths known early replace normalizations.
//!
//! ## Example
//!
//! ```
//! use ikarus_core::glam::DVec3;
//! use ikarus_solve::leg6::{Leg6Params, forward, solve_level};
//!
//! // Hip 8 cm to the left of and 5 cm below the pelvis, 0.3 m thigh and shank, ankle 4 cm
//! // above the sole.
//! let params = Leg6Params::new(DVec3::new(0.0, 0.08, -0.05), 0.3, 0.3, 0.04);
//! let sole = DVec3::new(0.1, 0.12, -0.6);
//! let out = solve_level(&params, sole, 0.2);
//! assert!(out.reached);
//! let foot = forward(&params, &out.angles);
//! assert!((foot.translation - sole).length() < 1e-12);
//! assert!(out.angles.knee > 0.0); // the knee bends forward
//! ```
//!
//! Seed: 003, "AIさんの足の逆運動学(IK)を幾何的に解く" (hip yaw from the foot yaw, the roll
//! equation with the offset `W`, pitches by the law of cosines). The general form follows the
//! usual ankle-first decomposition of a leg with a spherical hip; the code is written from the
//! geometry above.

use std::f64::consts::{PI, TAU};

use glam::{DAffine3, DMat3, DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, fk};
use serde::{Deserialize, Serialize};

use crate::{IkTask, SolveReport, analytic};

mod closed_form;
#[allow(clippy::wildcard_imports)]
use closed_form::*;
mod chain;
pub use chain::*;
mod task;
#[cfg(test)]
mod tests;
pub use task::*;

/// Tolerance on the knee's cosine for "within reach" (targets on the boundary of the
/// reachable shell count as reached).
const REACH_TOLERANCE: f64 = 1e-10;

/// Relative tolerance on `r_y² + r_z² − W²` for "outside the lateral offset".
const LATERAL_TOLERANCE: f64 = 1e-12;

/// How far (radians, and metres relative to the leg's length) a skeleton's hinge axes may be
/// from the leg frame's axes, and its hip axes from meeting in one point, for
/// [`Leg6Chain::new`] to accept it.
pub const CHAIN_TOLERANCE: f64 = 1e-9;

/// The leg frame (x forward, y left, z up) in the ikarus humanoid's model axes (+Y up, facing
/// +Z, left +X): columns are the leg's x, y and z axes. `Y_UP_FROM_LEG * v_leg = v_model`.
pub const Y_UP_FROM_LEG: DMat3 = DMat3::from_cols(DVec3::Z, DVec3::X, DVec3::Y);

/// The order of the three hip joints from the pelvis down, named by their axes (yaw about z,
/// roll about x, pitch about y). The hip rotation is the product in this order:
/// `YawRollPitch` is `Rz(yaw) · Rx(roll) · Ry(pitch)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HipOrder {
    /// Yaw, roll, pitch: seed 003, humanoid robot leg; HRP-2 and most position-controlled
    /// humanoids. Default.
    #[default]
    YawRollPitch,
    /// Yaw, pitch, roll.
    YawPitchRoll,
    /// Roll, yaw, pitch.
    RollYawPitch,
    /// Roll, pitch, yaw: `simple_humanoid.urdf` (`LLEG_HIP_R`, `_P`, `_Y`).
    RollPitchYaw,
    /// Pitch, yaw, roll.
    PitchYawRoll,
    /// Pitch, roll, yaw: the Unitree G1 and H1.
    PitchRollYaw,
}

impl HipOrder {
    /// All six orders.
    pub const ALL: [Self; 6] = [
        Self::YawRollPitch,
        Self::YawPitchRoll,
        Self::RollYawPitch,
        Self::RollPitchYaw,
        Self::PitchYawRoll,
        Self::PitchRollYaw,
    ];

    /// The leg-frame axis (0 = x roll, 1 = y pitch, 2 = z yaw) of the first, second and third
    /// hip joint from the pelvis.
    pub const fn axes(self) -> [usize; 3] {
        match self {
            Self::YawRollPitch => [2, 0, 1],
            Self::YawPitchRoll => [2, 1, 0],
            Self::RollYawPitch => [0, 2, 1],
            Self::RollPitchYaw => [0, 1, 2],
            Self::PitchYawRoll => [1, 2, 0],
            Self::PitchRollYaw => [1, 0, 2],
        }
    }

    /// The order whose [`axes`](Self::axes) are `axes`; `None` unless they are 0, 1 and 2 in
    /// some order.
    pub fn from_axes(axes: [usize; 3]) -> Option<Self> {
        Self::ALL.into_iter().find(|order| order.axes() == axes)
    }

    /// The hip rotation (thigh frame in the leg frame) for the three hip angles.
    pub fn rotation(self, yaw: f64, roll: f64, pitch: f64) -> DQuat {
        let about = |axis: usize| match axis {
            0 => DQuat::from_rotation_x(roll),
            1 => DQuat::from_rotation_y(pitch),
            _ => DQuat::from_rotation_z(yaw),
        };
        let [a, b, c] = self.axes();
        about(a) * about(b) * about(c)
    }
}

/// The six joint angles of a leg, radians, relative to the zero pose (see the
/// [module docs](self) for axes and signs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Leg6Angles {
    /// Hip yaw about +z (up); positive turns the toes to the left.
    pub hip_yaw: f64,
    /// Hip roll about +x (forward); positive swings the leg to the left.
    pub hip_roll: f64,
    /// Hip pitch about +y (left); negative swings the thigh forward.
    pub hip_pitch: f64,
    /// Knee pitch about +y; positive bends the knee (the shank swings back).
    pub knee: f64,
    /// Ankle pitch about +y; positive points the toes down.
    pub ankle_pitch: f64,
    /// Ankle roll about +x; positive tilts the sole's left edge up.
    pub ankle_roll: f64,
}

impl Leg6Angles {
    /// All zero: the zero pose.
    pub const ZERO: Self = Self {
        hip_yaw: 0.0,
        hip_roll: 0.0,
        hip_pitch: 0.0,
        knee: 0.0,
        ankle_pitch: 0.0,
        ankle_roll: 0.0,
    };

    /// The joints' names in [`to_array`](Self::to_array) order.
    pub const NAMES: [&'static str; 6] = [
        "hip_yaw",
        "hip_roll",
        "hip_pitch",
        "knee",
        "ankle_pitch",
        "ankle_roll",
    ];

    /// From `[hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll]`.
    pub const fn from_array(a: [f64; 6]) -> Self {
        Self {
            hip_yaw: a[0],
            hip_roll: a[1],
            hip_pitch: a[2],
            knee: a[3],
            ankle_pitch: a[4],
            ankle_roll: a[5],
        }
    }

    /// `[hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll]`.
    pub const fn to_array(&self) -> [f64; 6] {
        [
            self.hip_yaw,
            self.hip_roll,
            self.hip_pitch,
            self.knee,
            self.ankle_pitch,
            self.ankle_roll,
        ]
    }

    /// True when every angle is finite.
    pub fn is_finite(&self) -> bool {
        self.to_array().iter().all(|a| a.is_finite())
    }
}

/// Per-joint angle ranges `[min, max]`, radians, relative to the zero pose; infinite bounds
/// leave a joint free. A range narrower than 2π is met modulo 2π (an angle of 3.0 rad fits
/// `[-4, -3]` as 3.0 − 2π).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg6Limits {
    /// Smallest angle of each joint. Default −∞.
    pub min: Leg6Angles,
    /// Largest angle of each joint, at least `min`. Default +∞.
    pub max: Leg6Angles,
}

impl Default for Leg6Limits {
    fn default() -> Self {
        Self::NONE
    }
}

impl Leg6Limits {
    /// No limits.
    pub const NONE: Self = Self {
        min: Leg6Angles::from_array([f64::NEG_INFINITY; 6]),
        max: Leg6Angles::from_array([f64::INFINITY; 6]),
    };

    /// Limits from `[min, max]` pairs in [`Leg6Angles::to_array`] order.
    pub fn from_ranges(ranges: [(f64, f64); 6]) -> Self {
        Self {
            min: Leg6Angles::from_array(ranges.map(|r| r.0)),
            max: Leg6Angles::from_array(ranges.map(|r| r.1)),
        }
    }

    /// True when every `min ≤ max` (neither NaN).
    pub fn is_valid(&self) -> bool {
        let (lo, hi) = (self.min.to_array(), self.max.to_array());
        (0..6).all(|i| lo[i] <= hi[i])
    }

    /// True when every angle lies within its range (without wrapping).
    pub fn contains(&self, angles: &Leg6Angles) -> bool {
        let (lo, hi, a) = (self.min.to_array(), self.max.to_array(), angles.to_array());
        (0..6).all(|i| lo[i] <= a[i] && a[i] <= hi[i])
    }
}

/// The geometry of one leg in its zero pose, in the leg frame (x forward, y left, z up, origin
/// at the pelvis joint), and its limits. See the [module docs](self) for what the closed form
/// covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg6Params {
    /// The hip centre, where the three hip axes meet, from the pelvis joint (metres).
    pub hip: DVec3,
    /// Hip centre → a point of the knee axis in the zero pose (metres). A straight thigh of
    /// length `L` is `(0, 0, −L)`; the y component is part of the lateral offset `W`.
    pub thigh: DVec3,
    /// That knee point → a point of the ankle pitch axis in the zero pose (metres).
    pub shank: DVec3,
    /// That ankle pitch point → a point of the ankle roll axis in the zero pose (metres);
    /// zero when the two ankle axes meet. The G1's is `(0, 0, −0.017558)`.
    pub ankle: DVec3,
    /// That ankle roll point → the sole point, in the foot frame (metres). The sole point is
    /// what targets place: `(0, 0, −ankle height)` for a sole right under the ankle.
    pub sole: DVec3,
    /// Distance from the sole point back to the heel's contact line, along the foot's x
    /// (metres), for [`Contact::Heel`].
    pub heel: f64,
    /// Distance from the sole point forward to the toe's contact line, along the foot's x
    /// (metres), for [`Contact::Toe`].
    pub toe: f64,
    /// The order of the hip joints from the pelvis down.
    pub hip_order: HipOrder,
    /// Joint ranges; [`Leg6Limits::NONE`] by default.
    pub limits: Leg6Limits,
}

impl Leg6Params {
    /// A leg with straight links: the hip centre at `hip` (leg frame), a thigh and a shank of
    /// the given lengths straight down, the ankle axes meeting `ankle_height` above the sole
    /// point, hip order `YawRollPitch`, no heel or toe length, no limits.
    pub fn new(hip: DVec3, thigh_length: f64, shank_length: f64, ankle_height: f64) -> Self {
        Self {
            hip,
            thigh: DVec3::new(0.0, 0.0, -thigh_length),
            shank: DVec3::new(0.0, 0.0, -shank_length),
            ankle: DVec3::ZERO,
            sole: DVec3::new(0.0, 0.0, -ankle_height),
            heel: 0.0,
            toe: 0.0,
            hip_order: HipOrder::YawRollPitch,
            limits: Leg6Limits::NONE,
        }
    }

    /// The same leg with another hip order.
    #[must_use]
    pub fn with_hip_order(mut self, hip_order: HipOrder) -> Self {
        self.hip_order = hip_order;
        self
    }

    /// The same leg with limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Leg6Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same leg with heel and toe distances from the sole point (metres).
    #[must_use]
    pub fn with_heel_toe(mut self, heel: f64, toe: f64) -> Self {
        self.heel = heel;
        self.toe = toe;
        self
    }

    /// The seed's `W`: the lateral offset (along the pitch axes) from the hip centre to the
    /// ankle roll axis, `thigh.y + shank.y + ankle.y`.
    pub fn lateral_offset(&self) -> f64 {
        self.thigh.y + self.shank.y + self.ankle.y
    }

    /// True when every length is finite and the limits are ordered: what the solvers need.
    pub fn is_valid(&self) -> bool {
        self.is_finite() && self.limits.is_valid()
    }

    /// Lengths finite: what the solvers check up front. The limits are checked only when a
    /// joint was clamped (a solve that clamps nothing has seen `min ≤ angle ≤ max` for every
    /// joint, which orders the limits).
    fn is_finite(&self) -> bool {
        (self.hip + self.thigh + self.shank + self.ankle + self.sole).is_finite()
            && (self.heel + self.toe).is_finite()
    }
}

/// Which edge of the foot touches the ground.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Contact {
    /// The heel line, [`Leg6Params::heel`] behind the sole point.
    Heel,
    /// The toe line, [`Leg6Params::toe`] ahead of the sole point.
    Toe,
}

/// What the foot should do, in the leg frame (x forward, y left, z up, origin at the pelvis).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leg6Target {
    /// A full 6-D foot pose ([`solve_pose`]).
    Pose {
        /// Where the sole point goes (metres).
        position: DVec3,
        /// The foot's orientation, foot frame to leg frame; identity is the zero pose's foot.
        /// Normalized before use.
        rotation: DQuat,
    },
    /// The sole parallel to the pelvis's xy plane (seed 003, humanoid robot leg; [`solve_level`]).
    Level {
        /// Where the sole point goes (metres).
        position: DVec3,
        /// The foot's yaw about +z relative to the pelvis (the seed's `ψ_f − ψ_r`), radians.
        yaw: f64,
    },
    /// The foot on its heel or toe line, pitched about it ([`solve_contact`]).
    Contact {
        /// Heel or toe.
        contact: Contact,
        /// Where the contact line's point in the foot's mid-plane goes (metres).
        point: DVec3,
        /// The foot's yaw about +z relative to the pelvis, radians.
        yaw: f64,
        /// The foot's pitch about its contact line (about the yawed +y), radians; negative
        /// lifts the toes (heel contact), positive lifts the heel (toe contact).
        pitch: f64,
    },
}

impl Leg6Target {
    /// The sole point and foot rotation this target asks for (leg frame).
    pub fn to_pose(&self, params: &Leg6Params) -> (DVec3, DQuat) {
        match *self {
            Self::Pose { position, rotation } => (position, rotation),
            Self::Level { position, yaw } => (position, DQuat::from_rotation_z(yaw)),
            Self::Contact {
                contact,
                point,
                yaw,
                pitch,
            } => {
                let rotation = DQuat::from_rotation_z(yaw) * DQuat::from_rotation_y(pitch);
                let along = match contact {
                    Contact::Heel => -params.heel,
                    Contact::Toe => params.toe,
                };
                (point - rotation * DVec3::new(along, 0.0, 0.0), rotation)
            }
        }
    }

    /// True when every number is finite.
    pub fn is_finite(&self) -> bool {
        match *self {
            Self::Pose { position, rotation } => position.is_finite() && rotation.is_finite(),
            Self::Level { position, yaw } => position.is_finite() && yaw.is_finite(),
            Self::Contact {
                point, yaw, pitch, ..
            } => point.is_finite() && yaw.is_finite() && pitch.is_finite(),
        }
    }
}

/// How a solve ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Leg6Status {
    /// The foot is on the target (position and orientation).
    Reached,
    /// The target is out of reach: the knee is straight (too far) or fully folded (too close),
    /// or the ankle roll joint is nearer the hip's sagittal line than the offset `W`; the foot
    /// keeps the asked orientation unless a hip joint was also clamped.
    OutOfReach,
    /// Reachable, but a joint limit clamped at least one joint ([`Leg6Output::limited`]).
    Limited,
    /// NaN or infinite input, unordered limits or a zero quaternion: angles are zero.
    #[default]
    InvalidInput,
}

/// The solution of one leg problem.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Leg6Output {
    /// The joint angles (zero for invalid input), each inside its limit.
    pub angles: Leg6Angles,
    /// How the solve ended.
    pub status: Leg6Status,
    /// True when `status` is [`Leg6Status::Reached`]: forward kinematics of `angles` puts the
    /// foot on the target (to about 1e-10 m and rad for legs of about a metre).
    pub reached: bool,
    /// Which joints a limit clamped, in [`Leg6Angles::to_array`] order.
    pub limited: [bool; 6],
}

impl Leg6Output {
    /// Zero angles, [`Leg6Status::InvalidInput`].
    pub const INVALID: Self = Self {
        angles: Leg6Angles::ZERO,
        status: Leg6Status::InvalidInput,
        reached: false,
        limited: [false; 6],
    };

    fn new(angles: Leg6Angles, in_reach: bool, limited: [bool; 6]) -> Self {
        let status = if !in_reach {
            Leg6Status::OutOfReach
        } else if any(limited) {
            Leg6Status::Limited
        } else {
            Leg6Status::Reached
        };
        Self {
            angles,
            status,
            reached: status == Leg6Status::Reached,
            limited,
        }
    }
}

/// Forward kinematics: the foot pose (`leg_from_foot`, its translation the sole point) for the
/// given angles, leg frame. Independent of the solvers (quaternion products along the chain).
pub fn forward(params: &Leg6Params, angles: &Leg6Angles) -> DAffine3 {
    let thigh = params
        .hip_order
        .rotation(angles.hip_yaw, angles.hip_roll, angles.hip_pitch);
    let shank = thigh * DQuat::from_rotation_y(angles.knee);
    let ankle = shank * DQuat::from_rotation_y(angles.ankle_pitch);
    let foot = ankle * DQuat::from_rotation_x(angles.ankle_roll);
    let position = params.hip
        + thigh * params.thigh
        + shank * params.shank
        + ankle * params.ankle
        + foot * params.sole;
    DAffine3::from_rotation_translation(foot, position)
}

/// Solves any target form (see [`Leg6Target`]). Never panics and never returns NaN.
pub fn solve(params: &Leg6Params, target: &Leg6Target) -> Leg6Output {
    match *target {
        Leg6Target::Pose { position, rotation } => solve_pose(params, position, rotation),
        Leg6Target::Level { position, yaw } => solve_level(params, position, yaw),
        Leg6Target::Contact {
            contact,
            point,
            yaw,
            pitch,
        } => solve_contact(params, contact, point, yaw, pitch),
    }
}

/// Solves every target into `outputs` (same length). Allocates nothing.
///
/// # Panics
/// When `targets` and `outputs` have different lengths.
pub fn solve_slice(params: &Leg6Params, targets: &[Leg6Target], outputs: &mut [Leg6Output]) {
    assert_eq!(
        targets.len(),
        outputs.len(),
        "solve_slice: one output per target"
    );
    for (target, output) in targets.iter().zip(outputs) {
        *output = solve(params, target);
    }
}

/// The general 6-D solve: the sole point at `position` and the foot frame at `rotation` (foot
/// to leg frame; normalized before use), both in the leg frame. See the
/// [module docs](self#general-6-d-foot-pose-solve_pose).
pub fn solve_pose(params: &Leg6Params, position: DVec3, rotation: DQuat) -> Leg6Output {
    let length2 = rotation.length_squared();
    if !(params.is_finite() && position.is_finite() && length2.is_normal()) {
        return Leg6Output::INVALID;
    }
    let rotation = if (length2 - 1.0).abs() <= 1e-14 {
        rotation
    } else {
        rotation * length2.sqrt().recip()
    };
    // The closed form compiled for the best instruction set found at run time (AVX2, …):
    // the same IEEE operations in the same order, so every machine gets the same angles.
    let out = pulp::Arch::new().dispatch(PoseSolve {
        params,
        position,
        rotation,
    });
    finite_or_invalid(out, params)
}

/// [`solve_pose_unchecked`] as a [`pulp::WithSimd`] operation, so that it is inlined into
/// the code compiled for the instruction set dispatched to.
struct PoseSolve<'a> {
    params: &'a Leg6Params,
    position: DVec3,
    rotation: DQuat,
}

impl pulp::WithSimd for PoseSolve<'_> {
    type Output = Leg6Output;

    #[allow(clippy::inline_always)] // the point: compiled inside the dispatched function
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Leg6Output {
        solve_pose_unchecked(self.params, self.position, self.rotation)
    }
}

/// Seed 003: the sole point at `position` with the sole parallel to the pelvis's xy plane and
/// the foot turned by `yaw` about +z, leg frame. The seed's derivation for
/// [`HipOrder::YawRollPitch`]; other orders go through [`solve_pose`]. See the
/// [module docs](self#seed-003-sole-parallel-to-the-ground-solve_level).
pub fn solve_level(params: &Leg6Params, position: DVec3, yaw: f64) -> Leg6Output {
    if !(params.is_finite() && position.is_finite() && yaw.is_finite()) {
        return Leg6Output::INVALID;
    }
    if params.hip_order != HipOrder::YawRollPitch {
        return solve_pose(params, position, DQuat::from_rotation_z(yaw));
    }
    finite_or_invalid(solve_level_unchecked(params, position, yaw), params)
}

/// Heel-only or toe-only contact: the contact line's mid point at `point`, the foot yawed by
/// `yaw` and pitched by `pitch` about the contact line, leg frame. See the
/// [module docs](self#heel-and-toe-contact-solve_contact).
pub fn solve_contact(
    params: &Leg6Params,
    contact: Contact,
    point: DVec3,
    yaw: f64,
    pitch: f64,
) -> Leg6Output {
    let target = Leg6Target::Contact {
        contact,
        point,
        yaw,
        pitch,
    };
    if !(params.is_finite() && target.is_finite()) {
        return Leg6Output::INVALID;
    }
    let (position, rotation) = target.to_pose(params);
    solve_pose(params, position, rotation)
}

/// True when any flag is set (without a loop).
#[inline]
fn any(flags: [bool; 6]) -> bool {
    flags[0] | flags[1] | flags[2] | flags[3] | flags[4] | flags[5]
}

/// `out`, or [`Leg6Output::INVALID`] when an angle is not finite or a clamp met unordered
/// limits.
#[inline]
fn finite_or_invalid(out: Leg6Output, params: &Leg6Params) -> Leg6Output {
    let a = &out.angles;
    // `+` propagates NaN and infinity: one test for six angles.
    let finite =
        (a.hip_yaw + a.hip_roll + a.hip_pitch + a.knee + a.ankle_pitch + a.ankle_roll).is_finite();
    if finite && (!any(out.limited) || params.limits.is_valid()) {
        out
    } else {
        Leg6Output::INVALID
    }
}

/// One root of the ankle roll equation solved up the leg.
struct Candidate {
    angles: Leg6Angles,
    in_reach: bool,
    limited: [bool; 6],
    /// The optimistic pass found a lower joint outside its limit; nothing else is set.
    lower_outside: bool,
}

impl Candidate {
    const LOWER_OUTSIDE: Self = Self {
        angles: Leg6Angles::ZERO,
        in_reach: false,
        limited: [false; 6],
        lower_outside: true,
    };

    /// Reached and inside the limits.
    fn is_clean(&self) -> bool {
        self.in_reach && !any(self.limited)
    }
}
