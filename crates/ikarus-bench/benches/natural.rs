//! Time per solve on the naturalness protocol (`ikarus_bench::natural`): every solver kind on
//! the held-out tasks of the built-in humanoid group (hands; hands and head; hands and feet),
//! each solve from the model's mean posture with the hips at the held-out transform. The MPJPE
//! table comes from `cargo run --release -p ikarus-bench --bin natural`.
//!
//! ## What explains the numbers
//!
//! - The latent stage alone (PPCA prior, goal noise 1% of the height) gets the humanoid's
//!   hands+feet tasks to 16.5 mm but misses the goals by centimetres.
//! - The refinement in the prior's metric `C = WWᵀ + σ²I` meets them once hinges turn about their
//!   axis only (26 of 78 limited hands+feet tasks reached before) and joints on a limit are held.
//! - Holding a joint on a limit for a step when the free step does not help reached 77 of 78; the
//!   LM finish catches the last one.
//! - The time is the latent LM (K = 12) plus refinement iterations with a `rows × rows` solve each;
//!   its buffers are per call, not in the `SolverWorkspace`.
//! - The CCD rows' times were measured at CCD's former 64-sweep default; the MPJPE and reach
//!   columns (`--bin natural`) are at the current 128.
//! - From real starts (`first`, `previous`), a start near the goals is trusted
//!   (`ExampleConfig::start_radius`), a far one replaced. Before that, the example solver ignored
//!   a real start: from the previous frame it was 58% worse than the best plain solver (21.3
//!   against 13.5 mm on cmu, three sets).

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_bench::natural::Protocol;
use ikarus_solve::{SolverWorkspace, solve_with};

fn bench_natural(c: &mut Criterion) {
    let protocol = Protocol::load();
    let g = protocol
        .groups
        .iter()
        .position(|g| g.name == "humanoid")
        .expect("the humanoid group");
    let skeleton = &protocol.groups[g].skeleton;
    let cases: Vec<_> = protocol.cases.iter().filter(|c| c.group == g).collect();
    let mut group = c.benchmark_group("natural");
    for (name, config) in protocol.solvers(g) {
        let mut workspace = SolverWorkspace::new();
        group.bench_function(name.replace(' ', "_"), |b| {
            let mut k = 0;
            b.iter(|| {
                k = (k + 1) % cases.len();
                let mut pose = cases[k].start.clone();
                std::hint::black_box(solve_with(
                    skeleton,
                    &cases[k].task,
                    &config,
                    &mut workspace,
                    &mut pose,
                ))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_natural);
criterion_main!(benches);
