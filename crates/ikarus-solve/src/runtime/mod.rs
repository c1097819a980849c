//! Solving many tasks, three ways with three names: [`prepared`] (one task compiled once and
//! solved per frame without allocating; `solve_many_in` for the same limb of a crowd of
//! characters in SIMD lanes, on the closed forms' crowd batches), and [`threaded`] (many
//! targets of one chain spread over threads). The third, a closed-form kernel's `solve_slice`,
//! is many problems of one kernel in a slice.

pub mod prepared;
#[cfg(feature = "threads")]
pub mod threaded;
