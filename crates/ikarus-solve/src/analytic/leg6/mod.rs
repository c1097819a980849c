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
    /// Yaw, roll, pitch: seed 003, HRP-2 and most position-controlled humanoids. Default.
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
    /// The sole parallel to the pelvis's xy plane (seed 003, [`solve_level`]).
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

#[allow(clippy::inline_always)] // inlined into `solve_pose`'s instruction-set dispatch
#[inline(always)]
fn solve_pose_unchecked(params: &Leg6Params, position: DVec3, rotation: DQuat) -> Leg6Output {
    let foot = DMat3::from_quat(rotation);
    let roll_joint = position - foot * params.sole;
    // Ankle roll joint → hip centre, foot frame.
    let r = foot.transpose() * (params.hip - roll_joint);
    let lateral = params.lateral_offset();
    let rho2 = r.y * r.y + r.z * r.z;
    let h2 = rho2 - lateral * lateral;
    let lateral_ok = h2 >= -LATERAL_TOLERANCE * rho2;
    let h = h2.max(0.0).sqrt();
    let first = climb(params, &foot, r, lateral, h, rho2);
    let best = if first.is_clean() || h == 0.0 {
        first
    } else {
        other_root(params, &foot, r, lateral, h, rho2, first)
    };
    Leg6Output::new(best.angles, best.in_reach && lateral_ok, best.limited)
}

/// The root with the hip below the ankle (in the ankle pitch joint's frame), kept when it does
/// better than `first`.
#[inline(never)]
fn other_root(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
    first: Candidate,
) -> Candidate {
    let second = climb(params, foot, r, lateral, -h, rho2);
    let score = |c: &Candidate| u8::from(c.in_reach) * 2 + u8::from(c.is_clean());
    if score(&second) > score(&first) {
        second
    } else {
        first
    }
}

/// Ankle roll, knee, ankle pitch and hip for one root `h` of the roll equation
/// (`rho2 = r_y² + r_z²`): first optimistically, with the lower joints' limits checked only
/// at the end, so that no angle waits for another; when a lower joint turns out to be outside
/// its limit, again joint by joint with clamping.
#[inline]
fn climb(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
) -> Candidate {
    let optimistic = climb_with::<false>(params, foot, r, lateral, h, rho2);
    if optimistic.lower_outside {
        climb_clamped(params, foot, r, lateral, h, rho2)
    } else {
        optimistic
    }
}

#[inline(never)]
fn climb_clamped(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
) -> Candidate {
    climb_with::<true>(params, foot, r, lateral, h, rho2)
}

/// [`climb`] with (`CLAMP`) or without clamping the lower joints on the way up; without, a
/// lower joint outside its limit gives `lower_outside`.
///
/// The common path divides instead of normalizing: when the lateral offset is within reach
/// `(r_y, r_z)` and `(−W, h)` both have length `ρ`, and when the knee is within reach the two
/// ankle pitch vectors both have length `|w|`, so their dot and cross products are cosine and
/// sine times a length known early. Clamped or out-of-reach cases normalize.
#[allow(clippy::too_many_lines)] // one straight-line computation, split only by its comments
#[allow(clippy::inline_always)] // measured: 131-134 ns per pose solve without, 108-118 with
#[inline(always)]
fn climb_with<const CLAMP: bool>(
    params: &Leg6Params,
    foot: &DMat3,
    r: DVec3,
    lateral: f64,
    h: f64,
    rho2: f64,
) -> Candidate {
    let limits = &params.limits;
    let mut limited = [false; 6];
    let (mut roll, mut knee, mut ankle_pitch) = (0.0, 0.0, 0.0);

    // Ankle roll: turn (r_y, r_z) onto (−W, h).
    let (sin0, cos0) = (h * r.y + lateral * r.z, h * r.z - lateral * r.y);
    let exact_roll = rho2 > f64::MIN_POSITIVE && rho2 >= lateral * lateral;
    let (mut sin_roll, mut cos_roll) = if exact_roll {
        let inv = rho2.recip();
        (sin0 * inv, cos0 * inv)
    } else {
        unit2(sin0, cos0)
    };
    if CLAMP {
        (roll, limited[5]) = fit(
            angle(sin_roll, cos_roll),
            limits.min.ankle_roll,
            limits.max.ankle_roll,
        );
        if limited[5] {
            (sin_roll, cos_roll) = roll.sin_cos();
        }
    }

    // Hip centre → ankle pitch joint in the ankle pitch joint's XZ plane; the rolled height
    // of the hip is h itself when the roll is exact.
    let wx = -r.x - params.ankle.x;
    let uz = if exact_roll && !limited[5] {
        -h
    } else {
        -(r.y * sin_roll + r.z * cos_roll)
    };
    let wz = uz - params.ankle.z;

    // Knee: |w|² = |t|² + |s|² + 2|t||s| cos(k − δ), bent to the positive side.
    let (tx, tz, sx, sz) = (
        params.thigh.x,
        params.thigh.z,
        params.shank.x,
        params.shank.z,
    );
    let tt = tx * tx + tz * tz;
    let ss = sx * sx + sz * sz;
    // |w|²; with the exact roll wz = −h − ankle.z and h² = h2 is known before h, so |w|² is one
    // multiply-add after the square root.
    let az = params.ankle.z;
    let ww = if exact_roll && !limited[5] {
        let h2 = rho2 - lateral * lateral;
        (wx * wx + h2 + az * az) + h * (2.0 * az)
    } else {
        wx * wx + wz * wz
    };
    let inv_ww = ww.recip();
    let (lt, ls) = (tt.sqrt(), ss.sqrt());
    let ts = lt * ls;
    let mut exact_pitch = ts > 0.0 && ww > f64::MIN_POSITIVE;
    let (mut sin_knee, mut cos_knee, in_plane) = if ts > 0.0 {
        let inv = ts.recip();
        let cos = (ww - tt - ss) * 0.5 * inv;
        let in_plane = cos.abs() <= 1.0 + REACH_TOLERANCE;
        exact_pitch &= cos.abs() <= 1.0;
        let cos = cos.clamp(-1.0, 1.0);
        let sin = triangle_sine(lt, ls, ww) * inv;
        let (cos_d, sin_d) = ((sx * tx + sz * tz) * inv, (sz * tx - sx * tz) * inv);
        (
            sin_d * cos + cos_d * sin,
            cos_d * cos - sin_d * sin,
            in_plane,
        )
    } else {
        (0.0, 1.0, single_link_reach(params, tt + ss, ww))
    };
    if CLAMP {
        (knee, limited[3]) = fit(angle(sin_knee, cos_knee), limits.min.knee, limits.max.knee);
        if limited[3] {
            (sin_knee, cos_knee) = knee.sin_cos();
        }
    }

    // Ankle pitch: turns v = Ry(−knee)·thigh + shank onto w (counterclockwise in (z, x)).
    let vx = tx * cos_knee - tz * sin_knee + sx;
    let vz = tx * sin_knee + tz * cos_knee + sz;
    let (sin0, cos0) = (wz * vx - wx * vz, wz * vz + wx * vx);
    let (mut sin_pitch, mut cos_pitch) = if exact_pitch && !limited[3] {
        (sin0 * inv_ww, cos0 * inv_ww)
    } else {
        unit2(sin0, cos0)
    };
    if CLAMP {
        (ankle_pitch, limited[4]) = fit(
            angle(sin_pitch, cos_pitch),
            limits.min.ankle_pitch,
            limits.max.ankle_pitch,
        );
        if limited[4] {
            (sin_pitch, cos_pitch) = ankle_pitch.sin_cos();
        }
    }

    // Hip: R_hip = R_foot · Rx(−roll) · Ry(−(knee + ankle pitch)); the first product does
    // not wait for the knee.
    let rolled = DMat3::from_cols(
        foot.x_axis,
        foot.y_axis * cos_roll - foot.z_axis * sin_roll,
        foot.y_axis * sin_roll + foot.z_axis * cos_roll,
    );
    let cq = cos_knee * cos_pitch - sin_knee * sin_pitch;
    let sq = sin_knee * cos_pitch + cos_knee * sin_pitch;
    let (hip_sin, hip_cos) = hip_pairs(&rolled, cq, sq, params.hip_order);

    // All six angles at once (the lower three again when clamping: cold).
    let [a_roll, a_knee, a_pitch, hip_x, hip_y, hip_z] = angles(
        [
            sin_roll, sin_knee, sin_pitch, hip_sin[0], hip_sin[1], hip_sin[2],
        ],
        [
            cos_roll, cos_knee, cos_pitch, hip_cos[0], hip_cos[1], hip_cos[2],
        ],
    );
    if !CLAMP {
        let (lo, hi) = (&limits.min, &limits.max);
        let (roll_out, knee_out, pitch_out);
        (roll, roll_out) = fit(a_roll, lo.ankle_roll, hi.ankle_roll);
        (knee, knee_out) = fit(a_knee, lo.knee, hi.knee);
        (ankle_pitch, pitch_out) = fit(a_pitch, lo.ankle_pitch, hi.ankle_pitch);
        if roll_out | knee_out | pitch_out {
            return Candidate::LOWER_OUTSIDE;
        }
    }
    let ([yaw, hip_roll, hip_pitch], hip_limited) = hip_angles([hip_x, hip_y, hip_z], params);
    limited[0] = hip_limited[0];
    limited[1] = hip_limited[1];
    limited[2] = hip_limited[2];

    Candidate {
        angles: Leg6Angles {
            hip_yaw: yaw,
            hip_roll,
            hip_pitch,
            knee,
            ankle_pitch,
            ankle_roll: roll,
        },
        in_reach: in_plane,
        limited,
        lower_outside: false,
    }
}

/// With a zero-length thigh or shank, whether the hip → ankle pitch distance `√ww` equals the
/// one link's length `√ll`, within the rounding of the positions it was computed from.
#[inline(never)]
fn single_link_reach(params: &Leg6Params, ll: f64, ww: f64) -> bool {
    let scale = ll.sqrt() + params.hip.length() + params.ankle.length() + params.sole.length();
    (ww.sqrt() - ll.sqrt()).abs() <= REACH_TOLERANCE * scale
}

/// `a b sin γ` for the triangle with sides `a`, `b` and `√cc` (γ between `a` and `b`), as
/// `√((cc − (a − b)²)((a + b)² − cc)) / 2`, 0 outside the triangle inequality. Unlike
/// `√(1 − cos²)` it is exactly 0 for a fully folded pair of equal links, where the direction
/// of the fold is undefined and `√(rounding)` would move the end by nanometres.
#[inline]
fn triangle_sine(a: f64, b: f64, cc: f64) -> f64 {
    let (d, s) = (a - b, a + b);
    ((cc - d * d).max(0.0) * (s * s - cc).max(0.0)).sqrt() * 0.5
}

/// `(sin, cos)` of the angle of the vector `(cos·n, sin·n)`; `(0, 1)` for a zero vector.
#[inline]
fn unit2(sin: f64, cos: f64) -> (f64, f64) {
    let n2 = sin * sin + cos * cos;
    if n2 > f64::MIN_POSITIVE {
        let inv = n2.sqrt().recip();
        (sin * inv, cos * inv)
    } else {
        (0.0, 1.0)
    }
}

/// The hip rotation `rolled · Ry(−q)` (thigh to leg frame, `(cq, sq)` the cosine and sine
/// of `q`) decomposed in the leg's hip order, as (sine, cosine) pairs by axis (roll, pitch,
/// yaw), for [`angles`].
#[allow(clippy::inline_always)] // inside `solve_pose`'s dispatched code
#[inline(always)]
fn hip_pairs(rolled: &DMat3, cq: f64, sq: f64, order: HipOrder) -> ([f64; 3], [f64; 3]) {
    match order {
        HipOrder::YawRollPitch => decompose::<2, 0, 1>(rolled, cq, sq),
        HipOrder::YawPitchRoll => decompose::<2, 1, 0>(rolled, cq, sq),
        HipOrder::RollYawPitch => decompose::<0, 2, 1>(rolled, cq, sq),
        HipOrder::RollPitchYaw => decompose::<0, 1, 2>(rolled, cq, sq),
        HipOrder::PitchYawRoll => decompose::<1, 2, 0>(rolled, cq, sq),
        HipOrder::PitchRollYaw => decompose::<1, 0, 2>(rolled, cq, sq),
    }
}

/// The hip's (yaw, roll, pitch) from the first decomposition's angles by axis (roll, pitch,
/// yaw): the decomposition inside the limits when there is one, and which angles were
/// clamped.
#[allow(clippy::inline_always)] // inside `solve_pose`'s dispatched code
#[inline(always)]
fn hip_angles(first: [f64; 3], params: &Leg6Params) -> ([f64; 3], [bool; 3]) {
    let (lo, hi) = (&params.limits.min, &params.limits.max);
    let (yaw, yaw_out) = fit(first[2], lo.hip_yaw, hi.hip_yaw);
    let (roll, roll_out) = fit(first[0], lo.hip_roll, hi.hip_roll);
    let (pitch, pitch_out) = fit(first[1], lo.hip_pitch, hi.hip_pitch);
    if yaw_out | roll_out | pitch_out {
        hip_angles_limited(first, params)
    } else {
        ([yaw, roll, pitch], [false; 3])
    }
}

/// [`hip_angles`] when the first decomposition (angles by axis: roll, pitch, yaw) leaves a
/// limit: the other decomposition when it is closer to the limits, then clamped.
#[inline(never)]
fn hip_angles_limited(first: [f64; 3], params: &Leg6Params) -> ([f64; 3], [bool; 3]) {
    let axes = params.hip_order.axes();
    let (lo, hi) = (params.limits.min, params.limits.max);
    let range = |axis: usize| match axis {
        0 => (lo.hip_roll, hi.hip_roll),
        1 => (lo.hip_pitch, hi.hip_pitch),
        _ => (lo.hip_yaw, hi.hip_yaw),
    };
    // The same rotation as (q1 + π, π − q2, q3 + π) in joint order.
    let [q1, q2, q3] = axes.map(|axis| first[axis]);
    let second_in_order = [wrap(q1 + PI), wrap(PI - q2), wrap(q3 + PI)];
    let mut second = [0.0; 3];
    for (angle, axis) in second_in_order.into_iter().zip(axes) {
        second[axis] = angle;
    }
    let outside = |q: [f64; 3]| -> f64 { (0..3).map(|axis| excess(q[axis], range(axis))).sum() };
    let chosen = if outside(second) < outside(first) {
        second
    } else {
        first
    };
    let mut angles = [0.0; 3];
    let mut limited = [false; 3];
    for axis in 0..3 {
        let (min, max) = range(axis);
        (angles[axis], limited[axis]) = fit(chosen[axis], min, max);
    }
    // Axes 2, 0, 1 are yaw, roll, pitch.
    (
        [angles[2], angles[0], angles[1]],
        [limited[2], limited[0], limited[1]],
    )
}

/// Tait–Bryan angles with `m = R_I(q1) · R_J(q2) · R_K(q3)`, `q2` in `[−π/2, π/2]`, as
/// (sine, cosine) pairs up to a positive scale, by axis (roll about x, pitch about y, yaw
/// about z). The first angle comes from the last column, the others from `R_I(−q1) · m`, so
/// they stay consistent at gimbal lock (where `q1` is 0).
///
/// `m = rolled · Ry(−q)` is read entry by entry: seven of its nine entries are needed.
#[inline]
fn decompose<const I: usize, const J: usize, const K: usize>(
    rolled: &DMat3,
    cq: f64,
    sq: f64,
) -> ([f64; 3], [f64; 3]) {
    // +1 for cyclic orders (xyz, yzx, zxy), −1 for the others.
    let e = if (I + 1) % 3 == J { 1.0 } else { -1.0 };
    let f = rolled.to_cols_array_2d();
    // Columns of Ry(−q): (cq, 0, sq), (0, 1, 0), (−sq, 0, cq).
    let at = |row: usize, col: usize| match col {
        0 => f[0][row] * cq + f[2][row] * sq,
        1 => f[1][row],
        _ => f[2][row] * cq - f[0][row] * sq,
    };
    // (sin q1, cos q1) times cos q2 ≥ 0; at gimbal lock (cos q2 = 0) q1 is taken as 0.
    let (mut s1, mut c1) = (-e * at(J, K), at(K, K));
    let n2 = s1 * s1 + c1 * c1;
    if n2 <= 1e-300 {
        (s1, c1) = (0.0, 1.0);
    }
    // Row J of R_I(−q1) · m (times cos q2); its row K has cos q2 on the diagonal.
    let m_jj = c1 * at(J, J) + e * s1 * at(K, J);
    let m_ji = c1 * at(J, I) + e * s1 * at(K, I);
    let (mut sin, mut cos) = ([0.0; 3], [0.0; 3]);
    (sin[I], cos[I]) = (s1, c1);
    (sin[J], cos[J]) = (e * at(I, K), n2.sqrt());
    (sin[K], cos[K]) = (e * m_ji, m_jj);
    (sin, cos)
}

/// `atan2(sin, cos)` in `(−π, π]`, for any scale of `(cos, sin)`; 0 for `(0, 0)`.
#[inline]
fn angle(sin: f64, cos: f64) -> f64 {
    let [a] = angles([sin], [cos]);
    a
}

/// `atan2(sin[i], cos[i])` in `(−π, π]` for each `i`, for any scale of `(cos, sin)`; 0 for
/// `(0, 0)`.
///
/// Written out rather than calling libm (19 ns per call here, half of a solve) and without
/// branches, so that the six angles of a solve share SSE2 instructions: the ratio
/// `q = min/max` of the absolute values is reduced to `t = (q − c)/(1 + q c)` around the
/// nearest `c = k/16`, so `|t| ≤ 1/32` and `atan q = atan(k/16) + t − t³/3 + … − t¹¹/11` (the
/// next term is below 1e-19 relative); then the octant is restored. Within 2 ulp of the
/// correctly rounded angle (checked against `f64::atan2` in the tests below).
#[inline(always)]
#[allow(clippy::inline_always)] // the point is to inline the whole loop where it is used
fn angles<const N: usize>(sin: [f64; N], cos: [f64; N]) -> [f64; N] {
    /// `atan(k/16)` for `k = 0..=16`, correctly rounded (exact rational arithmetic), padded
    /// to 32 so that a 5-bit index needs no bounds check.
    const ATAN_SIXTEENTHS: [f64; 32] = [
        0.0,
        0.062_418_809_995_957_35,
        0.124_354_994_546_761_44,
        0.185_347_949_995_694_76,
        0.244_978_663_126_864_14,
        0.302_884_868_374_971_4,
        0.358_770_670_270_572_25,
        0.412_410_441_597_387_3,
        0.463_647_609_000_806_1,
        0.512_389_460_310_737_7,
        0.558_599_315_343_562_4,
        0.602_287_346_134_964_2,
        0.643_501_108_793_284_4,
        0.682_316_554_874_748_1,
        0.718_829_999_621_624_5,
        0.753_151_280_962_194_4,
        std::f64::consts::FRAC_PI_4,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ];
    /// Adding 2⁵² rounds to an integer, which is then the low bits of the sum: no
    /// float-to-integer conversion, and no libm `round` (a call without SSE4.1).
    const ROUND: f64 = 4_503_599_627_370_496.0;
    let mut out = [0.0; N];
    for i in 0..N {
        let (s, c) = (sin[i], cos[i]);
        let (ax, ay) = (c.abs(), s.abs());
        let swap = ay > ax;
        let num = if swap { ax } else { ay };
        let den = if swap { ay } else { ax };
        // Nearest sixteenth k/16 of q = num/den (NaN gives any k and stays NaN).
        let rounded = num / den * 16.0 + ROUND;
        let k = (rounded.to_bits() & 31) as usize;
        let sixteenth = (rounded - ROUND) * 0.0625;
        let t = (num - sixteenth * den) / (den + sixteenth * num);
        // 1 − z/3 + z²/5 − z³/7 + z⁴/9 − z⁵/11 by Estrin's scheme.
        let z = t * t;
        let z2 = z * z;
        let series = (1.0 - z * (1.0 / 3.0))
            + z2 * (1.0 / 5.0 - z * (1.0 / 7.0))
            + z2 * z2 * (1.0 / 9.0 - z * (1.0 / 11.0));
        let mut a = ATAN_SIXTEENTHS[k] + t * series;
        a = if swap {
            std::f64::consts::FRAC_PI_2 - a
        } else {
            a
        };
        a = if c < 0.0 { PI - a } else { a };
        a = if s < 0.0 { -a } else { a };
        out[i] = if den == 0.0 { 0.0 } else { a };
    }
    out
}

/// The angle in `(−π, π]` equal to `angle` modulo 2π.
#[inline]
fn wrap(angle: f64) -> f64 {
    if angle > PI {
        angle - TAU
    } else if angle <= -PI {
        angle + TAU
    } else {
        angle
    }
}

/// How far (radians, around the circle) `angle` lies outside `range`; 0 inside.
fn excess(angle: f64, (min, max): (f64, f64)) -> f64 {
    let (fitted, clamped) = fit(angle, min, max);
    if clamped {
        let d = (fitted - angle).rem_euclid(TAU);
        d.min(TAU - d)
    } else {
        0.0
    }
}

/// `angle`, or `angle ± 2π`, when inside `[min, max]`; otherwise the bound nearer around the
/// circle, and `true`.
#[inline]
fn fit(angle: f64, min: f64, max: f64) -> (f64, bool) {
    if angle >= min && angle <= max {
        return (angle, false);
    }
    fit_outside(angle, min, max)
}

#[inline(never)]
fn fit_outside(angle: f64, min: f64, max: f64) -> (f64, bool) {
    for shifted in [angle - TAU, angle + TAU] {
        if shifted >= min && shifted <= max {
            return (shifted, false);
        }
    }
    let to_min = (min - angle).rem_euclid(TAU);
    let to_max = (angle - max).rem_euclid(TAU);
    if to_min <= to_max {
        (min, true)
    } else {
        (max, true)
    }
}

/// Seed 003 for the `YawRollPitch` order (see the module docs for the steps).
fn solve_level_unchecked(params: &Leg6Params, position: DVec3, yaw: f64) -> Leg6Output {
    let limits = &params.limits;
    let (sin_yaw, cos_yaw) = yaw.sin_cos();
    let turn = |v: DVec3, s: f64| DVec3::new(cos_yaw * v.x - s * v.y, s * v.x + cos_yaw * v.y, v.z);

    // HipJoint: θ_h = ψ_f − ψ_r. The ankle roll joint (the seed's Foot) relative to the hip
    // centre (LegRoot), in the hip yaw joint's frame.
    let foot_joint = position - turn(params.sole, sin_yaw);
    let d = turn(foot_joint - params.hip, -sin_yaw);

    // LegRoot and Foot: a − b tan θ_l = W / cos θ_l, the root with θ_l = 0 at a = W, as
    // (sin θ_l, cos θ_l) = (a h − b W, a W + b h) / (a² + b²).
    let w = params.lateral_offset();
    let (a, b) = (d.y, -d.z);
    let ab2 = a * a + b * b;
    let h2 = ab2 - w * w;
    let lateral_ok = h2 >= -LATERAL_TOLERANCE * ab2;
    let h = h2.max(0.0).sqrt();
    let (sin_l0, cos_l0) = (a * h - b * w, a * w + b * h);
    let exact = ab2 > f64::MIN_POSITIVE && h2 >= 0.0;
    let (sin_l, cos_l) = if exact {
        let inv = ab2.recip();
        (sin_l0 * inv, cos_l0 * inv)
    } else {
        unit2(sin_l0, cos_l0)
    };

    // UpperLeg, Knee, Ankle in LegRoot's XZ plane: P_u at the origin, P_a the ankle pitch
    // joint (the sole is level, so the ankle pitch joint's frame is LegRoot's). Rolled by
    // θ_l, the hip is h above the ankle roll joint.
    let x_a = d.x - params.ankle.x;
    let z_a = if exact {
        -h
    } else {
        -d.y * sin_l + d.z * cos_l
    } - params.ankle.z;
    let (tx, tz, sx, sz) = (
        params.thigh.x,
        params.thigh.z,
        params.shank.x,
        params.shank.z,
    );
    let l_uk2 = tx * tx + tz * tz;
    let l_ka2 = sx * sx + sz * sz;
    let l_ua2 = x_a * x_a + z_a * z_a;
    let (l_uk, l_ka) = (l_uk2.sqrt(), l_ka2.sqrt());
    // γ from L_ua² = L_uk² + L_ka² − 2 L_uk L_ka cos γ and α from
    // L_ka² = L_uk² + L_ua² − 2 L_uk L_ua cos α, with the triangle's sines (law of sines) so
    // that both carry the same rounding; as (sine, cosine) pairs up to a positive scale:
    // 2 L_uk L_ka × (sin γ, cos γ) and 2 L_uk L_ua × (sin α, cos α).
    let two_area = 2.0 * triangle_sine(l_uk, l_ka, l_ua2); // 2 L_uk L_ka sin γ (twice the area)
    let ((sin_g, cos_g), in_plane) = if l_uk * l_ka > 0.0 {
        let cos = l_uk2 + l_ka2 - l_ua2;
        let reach = cos.abs() <= (1.0 + REACH_TOLERANCE) * 2.0 * l_uk * l_ka;
        ((two_area, cos), reach)
    } else {
        ((0.0, -1.0), single_link_reach(params, l_uk2 + l_ka2, l_ua2))
    };
    let (sin_al, cos_al) = if l_uk * l_ka > 0.0 && l_ua2 > 0.0 {
        (two_area, l_uk2 + l_ua2 - l_ka2)
    } else {
        (0.0, 1.0)
    };
    // θ_l, γ, α; β the direction of P_u → P_a from the downward vertical (0 with the ankle
    // right below); the directions of the thigh and shank links in the zero pose (0 for
    // straight links). All at once (see `angles`).
    let [theta_l, gamma, alpha, beta, thigh_dir, shank_dir] = angles(
        [sin_l, sin_g, sin_al, x_a, -tx, -sx],
        [cos_l, cos_g, cos_al, -z_a, -tz, -sz],
    );
    let knee = wrap(PI - gamma - shank_dir + thigh_dir);
    let hip_pitch = wrap(-(alpha + beta) - thigh_dir);
    let ankle_pitch = wrap(-hip_pitch - knee);

    let mut limited = [false; 6];
    let mut angles = [yaw, theta_l, hip_pitch, knee, ankle_pitch, -theta_l];
    let lo = limits.min.to_array();
    let hi = limits.max.to_array();
    for i in 0..6 {
        (angles[i], limited[i]) = fit(angles[i], lo[i], hi[i]);
    }
    Leg6Output::new(
        Leg6Angles::from_array(angles),
        in_plane && lateral_ok,
        limited,
    )
}

/// The six joints of a leg in a [`Skeleton`], by role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leg6Joints {
    /// The hip joint turning about the leg's up axis.
    pub hip_yaw: JointId,
    /// The hip joint turning about the leg's forward axis.
    pub hip_roll: JointId,
    /// The hip joint turning about the leg's lateral axis.
    pub hip_pitch: JointId,
    /// The knee, a child of the last hip joint.
    pub knee: JointId,
    /// The ankle pitch joint, a child of the knee.
    pub ankle_pitch: JointId,
    /// The ankle roll joint (the foot), a child of the ankle pitch joint.
    pub ankle_roll: JointId,
}

impl Leg6Joints {
    /// The ids in [`Leg6Angles::to_array`] order.
    pub const fn to_array(&self) -> [JointId; 6] {
        [
            self.hip_yaw,
            self.hip_roll,
            self.hip_pitch,
            self.knee,
            self.ankle_pitch,
            self.ankle_roll,
        ]
    }

    /// Looks the six joints up by name, in [`Leg6Angles::to_array`] order.
    ///
    /// # Errors
    /// [`Leg6ChainError::UnknownName`] for a name the skeleton does not have.
    pub fn from_names(skeleton: &Skeleton, names: [&str; 6]) -> Result<Self, Leg6ChainError> {
        let mut ids = [JointId::from_index(0); 6];
        for (id, name) in ids.iter_mut().zip(names) {
            *id = skeleton
                .joint(name)
                .ok_or_else(|| Leg6ChainError::UnknownName {
                    name: name.to_owned(),
                })?;
        }
        let [hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll] = ids;
        Ok(Self {
            hip_yaw,
            hip_roll,
            hip_pitch,
            knee,
            ankle_pitch,
            ankle_roll,
        })
    }
}

/// Six hinge joints of a [`Skeleton`] bound to the closed form, validated once: the leg frame
/// and [`Leg6Params`] are derived from the rest pose and the joints' [`JointLimit::Hinge`]
/// axes and ranges.
///
/// The rest pose is the zero pose: each joint's angle is its rotation about its hinge axis
/// relative to its rest rotation (the [`JointLimit`] convention). The leg frame's y axis is
/// the knee axis, oriented so that the knee's larger range side bends it; z is the hip yaw axis
/// pointing from the foot to the hip; x = y × z. Axes given as the opposite of the leg frame's
/// are handled by flipping the angle's sign (and the range).
#[derive(Clone, Debug, PartialEq)]
pub struct Leg6Chain {
    joints: [JointId; 6],
    first: JointId,
    pelvis: Option<JointId>,
    axes: [DVec3; 6],
    rest: [DQuat; 6],
    pelvis_from_leg: DQuat,
    foot_from_leg: DQuat,
    sole: DVec3,
    params: Leg6Params,
}

impl Leg6Chain {
    /// Binds the six joints, with the sole point at `sole` in the ankle roll joint's frame
    /// (metres; zero makes the ankle roll joint's origin the point targets place).
    ///
    /// # Errors
    /// An unknown joint, joints that are not one parent → child chain (three hip joints in any
    /// order, knee, ankle pitch, ankle roll), a joint without a hinge limit or with a rest
    /// scale, axes that do not match the roles (within [`CHAIN_TOLERANCE`]), hip axes that do
    /// not meet in one point, or a non-finite sole.
    #[allow(clippy::too_many_lines)] // one validation after another
    pub fn new(
        skeleton: &Skeleton,
        joints: &Leg6Joints,
        sole: DVec3,
    ) -> Result<Self, Leg6ChainError> {
        let ids = joints.to_array();
        for joint in ids {
            if joint.index() >= skeleton.len() {
                return Err(Leg6ChainError::UnknownJoint { joint });
            }
        }
        let name = |j: JointId| skeleton.name(j).to_owned();
        if !sole.is_finite() {
            return Err(Leg6ChainError::BadSole { sole });
        }

        // Hierarchy: hip, hip, hip, knee, ankle pitch, ankle roll, each the next one's parent.
        let is_hip = |j: Option<JointId>| j.is_some_and(|j| ids[..3].contains(&j));
        let not_child = |joint: JointId| Leg6ChainError::NotAChain { joint: name(joint) };
        for (child, parent) in [(ids[5], ids[4]), (ids[4], ids[3])] {
            if skeleton.parent(child) != Some(parent) {
                return Err(not_child(child));
            }
        }
        let h3 = skeleton
            .parent(ids[3])
            .filter(|_| is_hip(skeleton.parent(ids[3])));
        let h3 = h3.ok_or_else(|| not_child(ids[3]))?;
        let h2 = skeleton
            .parent(h3)
            .filter(|&p| is_hip(Some(p)) && p != h3)
            .ok_or_else(|| not_child(h3))?;
        let h1 = skeleton
            .parent(h2)
            .filter(|&p| is_hip(Some(p)) && p != h2 && p != h3)
            .ok_or_else(|| not_child(h2))?;
        let order_ids = [h1, h2, h3, ids[3], ids[4], ids[5]];

        // Hinges and rest frames relative to the pelvis (the first hip joint's parent).
        let mut hinge = [(DVec3::ZERO, 0.0, 0.0); 6]; // (axis, min, max) by role
        for (role, &joint) in ids.iter().enumerate() {
            let JointLimit::Hinge(h) = skeleton.limit(joint) else {
                return Err(Leg6ChainError::NoHinge { joint: name(joint) });
            };
            if skeleton.rest(joint).scale != DVec3::ONE {
                return Err(Leg6ChainError::Scaled { joint: name(joint) });
            }
            hinge[role] = (h.axis, h.min, h.max);
        }
        let mut rotation = DQuat::IDENTITY;
        let mut position = DVec3::ZERO;
        let mut rest_frame = [(DVec3::ZERO, DQuat::IDENTITY); 6]; // by role
        for joint in order_ids {
            let rest = skeleton.rest(joint);
            position += rotation * rest.translation;
            rotation = (rotation * rest.rotation).normalize();
            let role = ids.iter().position(|&j| j == joint).unwrap_or(0);
            rest_frame[role] = (position, rotation);
        }
        let axis_in_pelvis = |role: usize| rest_frame[role].1 * hinge[role].0;

        // Leg frame: y bends the knee, z points from the foot to the hip, x = y × z.
        let (_, knee_min, knee_max) = hinge[3];
        let flex = if knee_max >= -knee_min { 1.0 } else { -1.0 };
        let y = axis_in_pelvis(3) * flex;
        let yaw_axis = axis_in_pelvis(0);
        let misaligned = |role: usize, expected: DVec3| Leg6ChainError::Misaligned {
            joint: name(ids[role]),
            role: Leg6Angles::NAMES[role],
            axis: axis_in_pelvis(role),
            expected,
        };
        if yaw_axis.dot(y).abs() > CHAIN_TOLERANCE {
            return Err(misaligned(0, DVec3::ZERO));
        }
        let up = rest_frame[0].0.lerp(rest_frame[2].0, 0.5) - rest_frame[5].0;
        let z = (yaw_axis - y * yaw_axis.dot(y)).normalize() * yaw_axis.dot(up).signum();
        let x = y.cross(z);
        let pelvis_from_leg = DQuat::from_mat3(&DMat3::from_cols(x, y, z)).normalize();
        let leg_axis = [z, x, y, y, y, x];
        let mut axes = [DVec3::ZERO; 6];
        let mut ranges = [(0.0, 0.0); 6];
        for role in 0..6 {
            let along = axis_in_pelvis(role).dot(leg_axis[role]);
            if axis_in_pelvis(role).cross(leg_axis[role]).length() > CHAIN_TOLERANCE {
                return Err(misaligned(role, leg_axis[role]));
            }
            let (axis, min, max) = hinge[role];
            (axes[role], ranges[role]) = if along > 0.0 {
                (axis, (min, max))
            } else {
                (-axis, (-max, -min))
            };
        }

        // Points in the leg frame; the hip centre is where the three hip axes meet.
        let leg_from_pelvis = pelvis_from_leg.inverse();
        let at = |role: usize| leg_from_pelvis * rest_frame[role].0;
        let (yaw_at, roll_at, pitch_at) = (at(0), at(1), at(2));
        let hip = DVec3::new(
            0.5 * (yaw_at.x + pitch_at.x),
            0.5 * (yaw_at.y + roll_at.y),
            0.5 * (roll_at.z + pitch_at.z),
        );
        let thigh = at(3) - hip;
        let shank = at(4) - at(3);
        let size = thigh.length() + shank.length() + hip.length();
        let gap = (yaw_at.x - pitch_at.x)
            .abs()
            .max((yaw_at.y - roll_at.y).abs())
            .max((roll_at.z - pitch_at.z).abs());
        if gap > CHAIN_TOLERANCE * size.max(1.0) {
            return Err(Leg6ChainError::NotSpherical { gap });
        }
        let foot_rest = rest_frame[5].1;
        // Roles 0, 1, 2 (yaw, roll, pitch) turn about leg axes 2, 0, 1.
        let role_axis = |j: JointId| match ids.iter().position(|&k| k == j) {
            Some(0) => 2,
            Some(1) => 0,
            _ => 1,
        };
        let hip_order = HipOrder::from_axes([h1, h2, h3].map(role_axis)).unwrap_or_default();
        let params = Leg6Params {
            hip,
            thigh,
            shank,
            ankle: at(5) - at(4),
            sole: leg_from_pelvis * (foot_rest * sole),
            heel: 0.0,
            toe: 0.0,
            hip_order,
            limits: Leg6Limits::from_ranges(ranges),
        };
        Ok(Self {
            joints: ids,
            first: h1,
            pelvis: skeleton.parent(h1),
            axes,
            rest: ids.map(|j| skeleton.rest(j).rotation),
            pelvis_from_leg,
            foot_from_leg: (foot_rest.inverse() * pelvis_from_leg).normalize(),
            sole,
            params,
        })
    }

    /// The same chain with heel and toe distances from the sole point along the foot's
    /// forward axis (metres), for [`Leg6Target::Contact`].
    #[must_use]
    pub fn with_heel_toe(mut self, heel: f64, toe: f64) -> Self {
        self.params.heel = heel;
        self.params.toe = toe;
        self
    }

    /// The leg's geometry and limits in its leg frame, as the pure solvers take them.
    pub fn params(&self) -> &Leg6Params {
        &self.params
    }

    /// The six joints in [`Leg6Angles::to_array`] order.
    pub fn joints(&self) -> [JointId; 6] {
        self.joints
    }

    /// The leg frame's orientation in the pelvis joint's frame (the first hip joint's parent;
    /// model space when the hip is a root).
    pub fn pelvis_from_leg(&self) -> DQuat {
        self.pelvis_from_leg
    }

    /// The leg frame in model space for a pose whose FK is `model` (`model_from_leg`).
    ///
    /// # Panics
    /// When `model` belongs to another skeleton.
    pub fn model_from_leg(&self, model: &ModelPose) -> DAffine3 {
        match self.pelvis {
            Some(pelvis) => DAffine3::from_rotation_translation(
                model.rotation(pelvis) * self.pelvis_from_leg,
                model.position(pelvis),
            ),
            None => DAffine3::from_quat(self.pelvis_from_leg),
        }
    }

    /// The sole point in model space (the point targets place) for a pose whose FK is `model`.
    ///
    /// # Panics
    /// When `model` belongs to another skeleton.
    pub fn sole_position(&self, model: &ModelPose) -> DVec3 {
        model[self.joints[5]].transform_point3(self.sole)
    }

    /// The joint angles of `pose` (each joint's rotation about its hinge axis relative to its
    /// rest rotation, in the leg frame's sign convention), in `(−π, π]`.
    ///
    /// # Panics
    /// When `pose` belongs to another skeleton.
    pub fn angles(&self, pose: &LocalPose) -> Leg6Angles {
        let mut angles = [0.0; 6];
        for (i, angle) in angles.iter_mut().enumerate() {
            let delta = self.rest[i].inverse() * pose[self.joints[i]].rotation;
            *angle = wrap(2.0 * delta.xyz().dot(self.axes[i]).atan2(delta.w));
        }
        Leg6Angles::from_array(angles)
    }

    /// Writes the angles into `pose`: each joint's local rotation becomes its rest rotation
    /// turned by its angle about its hinge axis. Translations and scales are kept.
    ///
    /// # Panics
    /// When `pose` belongs to another skeleton.
    pub fn set_angles(&self, angles: &Leg6Angles, pose: &mut LocalPose) {
        for (i, angle) in angles.to_array().into_iter().enumerate() {
            pose[self.joints[i]].rotation =
                self.rest[i] * DQuat::from_axis_angle(self.axes[i], angle);
        }
    }

    /// A model-space target seen in the leg frame of the pose whose FK is `model`. Positions
    /// are model-space points; a `Pose`'s rotation is the ankle roll joint's model-space
    /// rotation (what [`ModelPose::rotation`] reports); `Level` and `Contact` yaw and pitch are
    /// relative to the pelvis (the seed's upright pelvis).
    ///
    /// # Panics
    /// When `model` belongs to another skeleton.
    pub fn leg_target(&self, model: &ModelPose, target: &Leg6Target) -> Leg6Target {
        let (model_from_pelvis, origin) = match self.pelvis {
            Some(pelvis) => (model.rotation(pelvis), model.position(pelvis)),
            None => (DQuat::IDENTITY, DVec3::ZERO),
        };
        let leg_from_model = (model_from_pelvis * self.pelvis_from_leg).inverse();
        let point = |p: DVec3| leg_from_model * (p - origin);
        match *target {
            Leg6Target::Pose { position, rotation } => Leg6Target::Pose {
                position: point(position),
                rotation: leg_from_model * rotation * self.foot_from_leg,
            },
            Leg6Target::Level { position, yaw } => Leg6Target::Level {
                position: point(position),
                yaw,
            },
            Leg6Target::Contact {
                contact,
                point: p,
                yaw,
                pitch,
            } => Leg6Target::Contact {
                contact,
                point: point(p),
                yaw,
                pitch,
            },
        }
    }
}

/// Solves the leg on a pose: forward kinematics into `model` (a workspace sized for the
/// skeleton), the model-space `target` seen in the leg frame ([`Leg6Chain::leg_target`]),
/// [`solve`], the angles written into `pose` ([`Leg6Chain::set_angles`]) and `model` updated
/// from the first hip joint down so that it holds the FK of the new pose. Invalid input leaves
/// `pose` untouched.
///
/// # Panics
/// When `pose` or `model` was sized for another skeleton, or the chain belongs to another
/// skeleton.
pub fn solve_chain(
    skeleton: &Skeleton,
    chain: &Leg6Chain,
    target: &Leg6Target,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> Leg6Output {
    fk::forward_kinematics(skeleton, pose, model);
    let leg_target = chain.leg_target(model, target);
    let output = solve(&chain.params, &leg_target);
    if output.status != Leg6Status::InvalidInput {
        chain.set_angles(&output.angles, pose);
        fk::update_subtree(skeleton, pose, model, chain.first);
    }
    output
}

/// Why a [`Leg6Chain`] cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Leg6ChainError {
    /// A joint id is not in the skeleton. Look joints up by name on the same skeleton.
    #[error("joint {joint} is not in the skeleton")]
    UnknownJoint {
        /// The id.
        joint: JointId,
    },
    /// A joint name is not in the skeleton. Check the spelling against the skeleton's names.
    #[error("no joint is called `{name}`")]
    UnknownName {
        /// The name.
        name: String,
    },
    /// The joints do not form one parent → child chain. Pass the three hip joints (in any
    /// order down the hierarchy), then the knee, ankle pitch and ankle roll, each the child of
    /// the one before.
    #[error(
        "`{joint}` is not the child of the previous leg joint; the six joints must be three hip joints, knee, ankle pitch and ankle roll, each the parent of the next"
    )]
    NotAChain {
        /// The joint whose parent is not the previous leg joint.
        joint: String,
    },
    /// A joint has no hinge limit to take its axis from. Give every leg joint a
    /// [`JointLimit::Hinge`] (a full-circle range for a free one).
    #[error("joint `{joint}` has no hinge limit to take its axis from; give it a hinge limit")]
    NoHinge {
        /// The joint.
        joint: String,
    },
    /// A joint's rest transform is scaled. Bake the scale into the rest translations.
    #[error("joint `{joint}` has a rest scale; the leg must be rigid")]
    Scaled {
        /// The joint.
        joint: String,
    },
    /// A hinge axis does not match its role: hip yaw along the up axis (perpendicular to the
    /// knee axis), hip and ankle roll along forward, hip and ankle pitch parallel to the knee.
    /// Check which joint has which role, or fix the axes in the rest pose.
    #[error(
        "hinge axis of `{joint}` ({role}) is {axis} in the pelvis frame, expected ± {expected} (zero: perpendicular to the knee axis)"
    )]
    Misaligned {
        /// The joint.
        joint: String,
        /// Its role.
        role: &'static str,
        /// Its axis in the pelvis frame at rest.
        axis: DVec3,
        /// The leg-frame axis it should lie along (zero: any axis perpendicular to the knee's).
        expected: DVec3,
    },
    /// The three hip axes do not meet in one point (by `gap` metres), so the leg has no closed
    /// form. Move the hip joints so that their axes meet (an approximation of the real leg).
    #[error(
        "the hip axes miss each other by {gap} m; the closed form needs them to meet in one point"
    )]
    NotSpherical {
        /// The largest distance between the axes, metres.
        gap: f64,
    },
    /// The sole offset is not finite.
    #[error("sole offset {sole} is not finite")]
    BadSole {
        /// The offset given.
        sole: DVec3,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decompose_recomposes_every_order() {
        let m = DMat3::from_quat(DQuat::from_axis_angle(
            DVec3::new(0.3, -0.5, 0.8).normalize(),
            1.3,
        ));
        for order in HipOrder::ALL {
            let (sin, cos) = hip_pairs(&m, 1.0, 0.0, order);
            let by_axis = angles(sin, cos);
            assert!((-PI / 2.0..=PI / 2.0).contains(&by_axis[order.axes()[1]]));
            let back = DMat3::from_quat(order.rotation(by_axis[2], by_axis[0], by_axis[1]));
            assert!(back.abs_diff_eq(m, 1e-14), "{order:?}");
        }
    }

    #[test]
    fn angle_matches_std_atan2() {
        let mut rng = crate::test_rng::Xorshift(0x1234_5678_9abc_def0_u64);
        let mut next = || rng.signed();
        let mut worst: f64 = 0.0;
        for i in 0..1_000_000 {
            let scale = 10f64.powi(i % 40 - 20);
            let (y, x) = (next() * scale, next() * scale);
            let (ours, std) = (angle(y, x), y.atan2(x));
            let ulp = f64::EPSILON * std.abs().max(f64::MIN_POSITIVE);
            worst = worst.max((ours - std).abs() / ulp);
        }
        eprintln!("angle vs f64::atan2: worst {worst} ulp");
        assert!(worst <= 2.0, "{worst} ulp");
        for (y, x, want) in [
            (0.0, 0.0, 0.0),
            (-0.0, -1.0, PI),
            (0.0, -1.0, PI),
            (1.0, 0.0, PI / 2.0),
            (-1.0, 0.0, -PI / 2.0),
            (1.0, 1.0, PI / 4.0),
            (-1.0, -1.0, -3.0 * PI / 4.0),
            (1e-300, 1.0, 1e-300),
        ] {
            assert_eq!(angle(y, x), want, "{y} {x}");
        }
        assert!(angle(f64::NAN, 1.0).is_nan());
    }

    #[test]
    fn dispatched_solve_gives_the_bits_of_the_baseline_build() {
        // `solve_pose` runs the closed form compiled for the best instruction set of this
        // machine; called directly here it is the baseline (SSE2) build. Same bits expected.
        let mut params = Leg6Params::new(DVec3::new(0.0, -0.1, 0.0), 0.4, 0.38, 0.05)
            .with_hip_order(HipOrder::YawRollPitch);
        params.thigh = DVec3::new(0.01, 0.0, -0.4);
        params.ankle = DVec3::new(0.0, 0.0, -0.02);
        let mut rng = crate::test_rng::Xorshift(0x9e37_79b9_7f4a_7c15_u64);
        let mut next = || rng.signed();
        for order in HipOrder::ALL {
            let params = params.with_hip_order(order);
            for _ in 0..2000 {
                let position = DVec3::new(next() * 0.3, -0.1 + next() * 0.3, -0.6 + next() * 0.3);
                let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::Z);
                let rotation = DQuat::from_axis_angle(axis, next() * 1.5);
                let dispatched = solve_pose(&params, position, rotation);
                let baseline =
                    finite_or_invalid(solve_pose_unchecked(&params, position, rotation), &params);
                assert_eq!(dispatched, baseline, "{order:?} {position} {rotation}");
            }
        }
    }

    #[test]
    fn fit_wraps_before_clamping() {
        assert_eq!(fit(3.0, -4.0, -3.0), (3.0 - TAU, false));
        assert_eq!(fit(0.5, -0.2, 0.2), (0.2, true));
        assert_eq!(fit(-3.0, -0.2, 3.0), (3.0, true)); // nearer around the circle
        assert_eq!(fit(1.0, f64::NEG_INFINITY, f64::INFINITY), (1.0, false));
    }
}

/// The six-joint leg as a [`SolverConfig`](crate::SolverConfig) kind: `{"kind": "leg6"}`. The
/// task's single effector is the ankle roll joint; it and its five nearest ancestors (hip yaw,
/// hip roll, hip pitch, knee, ankle pitch — in any hip order) must be hinges. With an
/// orientation goal the general 6-D form runs; without one the seed's form keeps the sole
/// level (yaw 0 in the leg frame, i.e. facing the pelvis's forward).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Leg6Config {}

/// Solves `task` (one effector, the ankle roll joint, with a position goal and optionally an
/// orientation goal) by the closed-form leg; limits from the joints' hinge ranges.
pub fn solve_task(
    skeleton: &Skeleton,
    task: &IkTask,
    _config: &Leg6Config,
    pose: &mut LocalPose,
) -> SolveReport {
    let (effector, joints) = match analytic::chain_of::<6>(skeleton, task, "leg6") {
        Ok(chain) => chain,
        Err(message) => return SolveReport::invalid(message),
    };
    let Some(position) = effector.goal.position else {
        return SolveReport::invalid("`leg6` needs a position goal".into());
    };
    // Roles of the three hip joints from their axes at rest (any hip order): the pitch axis
    // is the knee's, the roll axis the ankle roll's, the yaw axis the remaining one.
    let [h0, h1, h2, knee, ankle_pitch, ankle_roll] = joints;
    let mut rest_model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest_model);
    let axis = |joint: JointId| match skeleton.limit(joint) {
        JointLimit::Hinge(hinge) => Some(rest_model.rotation(joint) * hinge.axis),
        _ => None,
    };
    let (Some(knee_axis), Some(roll_axis)) = (axis(knee), axis(ankle_roll)) else {
        return SolveReport::invalid(
            "`leg6` needs hinge limits on the knee and ankle joints".into(),
        );
    };
    let parallel = |joint: JointId, to: DVec3| axis(joint).map_or(0.0, |a| a.dot(to).abs());
    let hips = [h0, h1, h2];
    let pick = |to: DVec3| {
        hips.into_iter()
            .max_by(|a, b| parallel(*a, to).total_cmp(&parallel(*b, to)))
            .unwrap_or(h0)
    };
    let (hip_pitch, hip_roll) = (pick(knee_axis), pick(roll_axis));
    let hip_yaw = hips
        .into_iter()
        .find(|&j| j != hip_pitch && j != hip_roll)
        .unwrap_or(h0);
    let leg = Leg6Joints {
        hip_yaw,
        hip_roll,
        hip_pitch,
        knee,
        ankle_pitch,
        ankle_roll,
    };
    let chain = match Leg6Chain::new(skeleton, &leg, DVec3::ZERO) {
        Ok(chain) => chain,
        Err(error) => return SolveReport::invalid(error.to_string()),
    };
    let target = match effector.goal.orientation {
        Some(rotation) => Leg6Target::Pose { position, rotation },
        None => Leg6Target::Level { position, yaw: 0.0 },
    };
    let before = pose.clone();
    let mut model = ModelPose::new(skeleton);
    let output = solve_chain(skeleton, &chain, &target, pose, &mut model);
    if output.status == Leg6Status::InvalidInput || !pose.is_finite() {
        *pose = before;
        return SolveReport::invalid("leg6 rejected the goal (non-finite or degenerate)".into());
    }
    analytic::finish(skeleton, task, &joints, output.reached, pose)
}
