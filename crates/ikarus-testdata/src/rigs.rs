//! Rigs and chains built in code that several crates test and bench.

pub mod iiwa;
