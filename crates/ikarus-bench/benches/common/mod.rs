//! What several benches print the same way.

#![allow(dead_code)] // each bench uses some of it

use ikarus_bench::iiwa;
use ikarus_core::{LocalPose, Skeleton};
use ikarus_solve::{IkTask, SolveReport};

/// Runs [`iiwa::jitter`] with `solve` and prints its line as `jitter/<label>`: the largest
/// frame-to-frame joint rotation and the worst residual.
pub fn print_jitter(
    label: &str,
    solve: impl FnMut(&Skeleton, &IkTask, &mut LocalPose) -> SolveReport,
) {
    let (largest, worst) = iiwa::jitter(solve);
    println!(
        "jitter/{label}: largest frame-to-frame joint rotation {largest:.4} rad ({:.2} deg) over 1000 frames, worst residual {worst:.1e} m",
        largest.to_degrees()
    );
}
