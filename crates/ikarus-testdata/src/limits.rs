//! The joint-limit families the conformance test and the soak draw from.

use ikarus_core::EulerOrder;

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

/// The six Euler orders, in this order (tests and the soak pick them by index).
pub const EULER_ORDERS: [EulerOrder; 6] = [
    EulerOrder::Xyz,
    EulerOrder::Xzy,
    EulerOrder::Yxz,
    EulerOrder::Yzx,
    EulerOrder::Zxy,
    EulerOrder::Zyx,
];
