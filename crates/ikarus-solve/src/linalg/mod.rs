//! The numerics the solvers share: [`svd`], rotation [`align`]ment, bone frames, SIMD lanes
//! and trigonometry with lane versions.

pub mod align;
pub(crate) mod frames;
pub(crate) mod lanes;
pub mod svd;
pub(crate) mod trig;
