//! The joint-limit families the conformance test and the soak draw from, and short builders
//! of the hinge and swing–twist limits the test rigs use.

use glam::DVec3;
use ikarus_core::{EulerOrder, HingeLimit, JointLimit, SwingTwistLimit};

/// The per-skeleton limit families of the conformance suite, in this order (the soak picks
/// one by index): `mixed` gives each joint one of the others.
pub const LIMIT_KINDS: [&str; 7] = [
    "free",
    "locked",
    "hinge",
    "swing_twist",
    "euler",
    "mmd",
    "mixed",
];

/// The `locked` family of [`LIMIT_KINDS`]: every third joint (index 1, 4, 7, …) locked, the
/// others free.
pub fn locked_every_third(index: usize) -> JointLimit {
    if index % 3 == 1 {
        JointLimit::Locked
    } else {
        JointLimit::Free
    }
}

/// The six Euler orders, in this order (tests and the soak pick them by index).
pub const EULER_ORDERS: [EulerOrder; 6] = [
    EulerOrder::Xyz,
    EulerOrder::Xzy,
    EulerOrder::Yxz,
    EulerOrder::Yzx,
    EulerOrder::Zxy,
    EulerOrder::Zyx,
];

/// A swing–twist limit twisting about +Y (the bone's direction in the test rigs) with the
/// swing measured about +X: `swing_u` and `swing_v` bound the swing components, `twist` the
/// twist, all `(min, max)` in radians.
pub fn swing_twist_y(swing_u: (f64, f64), swing_v: (f64, f64), twist: (f64, f64)) -> JointLimit {
    JointLimit::SwingTwist(SwingTwistLimit {
        twist_axis: DVec3::Y,
        swing_axis: DVec3::X,
        swing_u,
        swing_v,
        twist,
    })
}

/// A hinge about `axis` (unit, in the joint's rest frame) from `min` to `max` radians.
pub fn hinge(axis: DVec3, min: f64, max: f64) -> JointLimit {
    JointLimit::Hinge(HingeLimit { axis, min, max })
}
