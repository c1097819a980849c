//! The iterative solvers and what they share: the [`driver`] (sweeps, restarts, limits, the
//! report), the joint [`path`] from the base to each effector and its degrees of freedom
//! ([`dofs`]), and the solvers on them — [`ccd`], [`fabrik`], [`jacobian`], [`lm`].

pub mod ccd;
pub mod dofs;
pub mod driver;
pub mod fabrik;
pub mod jacobian;
pub mod lm;
pub mod path;
mod settings;
