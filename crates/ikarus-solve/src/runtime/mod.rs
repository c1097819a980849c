//! Solving many tasks, three ways with three names: [`prepared`] (one task compiled once and
//! solved per frame without allocating; `solve_many_in` for the same limb of a crowd of
//! characters in SIMD lanes, on [`crowd`]), and [`threaded`] (many targets of one chain spread
//! over threads).

pub(crate) mod crowd;
pub mod prepared;
pub mod threaded;
