//! MMD: one frame of `Miku_Hatsune_Ver2.pmd` playing `kishimen.vmd` — VMD sampling,
//! inheritance and all seven IK chains (legs, toes, hair, necktie) — in compatible and exact
//! mode (and with every chain off: sampling, inheritance and FK alone), cycling through the
//! dance's 630 frames; and parse throughput of the PMX, PMD and VMD
//! files.
//!
//! ## What explains the numbers
//!
//! Compatible mode now plays MMD's rules (`ikarus_anim::mmd` module docs: a budget of at least
//! `⌊4π / unit angle⌋` iterations, so hair and necktie run 104 instead of 8 and 15; no rollback;
//! the chain skipped when its effector starts within 1e-4 units): on kishimen the necktie runs 44
//! and the hair 14 loops a frame on average (up to 104), and on a 2-core Xeon its frame is
//! 8.4× the IK-off frame (BENCHMARKS.md). Its steps take the half-angle sine and cosine from
//! the single-precision dot product (two square roots, no trigonometry), and a limited link
//! decomposes only its free axes (a knee: one `atan2`). The instruction counts below were
//! measured under the earlier, saba-derived rules.
//!
//! - Under those rules a compatible frame was 151 k instructions in `evaluate` plus 30.6 k of VMD
//!   sampling (from 210 k and 43.3 k); 11.2 k of that is the rest-pose copy, counted per byte.
//! - Time fell by more than that: the key search over ~190-byte keys missed the cache (half of
//!   sampling's cycles; now a per-track cursor), and the knee's `acos` → `sin_cos` chain went.
//! - Exact mode's knee step needs no trigonometry: a plane-mode link keeps `cos(θ/2)`,
//!   `sin(θ/2)`, the step enters by its half-angle cosine and sine from `a·b` and `|a × b|²`,
//!   combined by the addition formulas, and the clamp compares `cos α` with `cos(room)`.
//! - Early exit: babylon-mmd stops at `|effector − goal|²` under 1e-8 units², mmd-anim-runtime and
//!   compatible mode at 1e-4 units, before and after iterations, and when the effector and goal
//!   directions from a link agree (`|â − b̂|² < 1e-7`).
//! - Exact mode hands CCD over to an LM polish of all links at once after 16 iterations that gained
//!   under 10% of the squared distance (mean CCD iterations: legs 536 → 80, necktie 651 → 95).
//! - Left: the frame's full FK (24 k instructions, ~170 a joint on the SSE2 baseline), the subtree
//!   updates after each chain (5 k), and the legs' CCD steps (two dependent square roots and a
//!   division each).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_anim::mmd::{IkMode, MmdEvaluator, MmdSettings};
use ikarus_core::ModelPose;
use ikarus_formats::mmd::vmd::{BoundMotion, Vmd};
use ikarus_formats::mmd::{pmd, pmx};
use std::hint::black_box;

fn frame(c: &mut Criterion) {
    let Some(dir) = ikarus_testdata::require("mmd", "bench mmd") else {
        return;
    };
    let model = pmd::parse(
        &std::fs::read(dir.join("Miku_Hatsune_Ver2.pmd")).unwrap(),
        1.0,
    )
    .unwrap()
    .build()
    .unwrap();
    let vmd = Vmd::parse(&std::fs::read(dir.join("kishimen.vmd")).unwrap(), 1.0).unwrap();
    let motion = BoundMotion::new(&vmd, &model.skeleton);
    let mut group = c.benchmark_group("mmd_frame");
    for (label, mode, ik) in [
        ("compatible", IkMode::Compatible, true),
        ("exact", IkMode::Exact, true),
        ("ik_off", IkMode::Compatible, false),
    ] {
        let settings = MmdSettings {
            mode,
            ..MmdSettings::default()
        };
        let mut evaluator = MmdEvaluator::new(&model.skeleton, &model.rig, settings).unwrap();
        let enabled = vec![ik; evaluator.chain_names().len()];
        let mut animated = model.skeleton.rest_pose();
        let mut out = model.skeleton.rest_pose();
        let mut frames = ModelPose::new(&model.skeleton);
        let mut frame = 0u32;
        group.bench_function(format!("miku_kishimen_{label}"), |b| {
            b.iter(|| {
                frame = (frame + 1) % 630;
                motion.sample(&model.skeleton, f64::from(frame), &mut animated);
                let outcomes =
                    evaluator.evaluate(&model.skeleton, &animated, &enabled, &mut out, &mut frames);
                black_box(outcomes[0].distance)
            });
        });
    }
    group.finish();
}

fn parse(c: &mut Criterion) {
    let Some(dir) = ikarus_testdata::require("mmd", "bench mmd parse") else {
        return;
    };
    let mut group = c.benchmark_group("mmd_parse");
    for name in ["Miku_Hatsune_Ver2.pmd", "Gene.pmx", "kishimen.vmd"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| match name.rsplit('.').next() {
                Some("pmd") => black_box(pmd::parse(&bytes, 1.0).unwrap().bones.len()),
                Some("pmx") => black_box(pmx::parse(&bytes, 1.0).unwrap().bones.len()),
                _ => black_box(Vmd::parse(&bytes, 1.0).unwrap().bones.len()),
            });
        });
    }
    group.finish();
}

criterion_group!(benches, frame, parse);
criterion_main!(benches);
