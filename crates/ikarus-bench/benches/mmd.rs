//! MMD (issue 14): one frame of `Miku_Hatsune_Ver2.pmd` playing `kishimen.vmd` — VMD sampling,
//! inheritance and all seven IK chains (legs, toes, hair, necktie) — in compatible and exact
//! mode (and with every chain off: sampling, inheritance and FK alone), cycling through the
//! dance's 630 frames; and parse throughput of the PMX, PMD and VMD
//! files.

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
