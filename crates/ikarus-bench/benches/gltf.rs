//! glTF: GLB load time for the sample avatars (parse, skeleton, first clip, skinned mesh) and
//! animation sampling cost per joint per frame.
//!
//! ## What explains the numbers
//!
//! - BVH → GLB → BVH keeps FK within 1.8e-7 m (was 1.6e-6 m): samples a hair beside a key's `f32`
//!   time, within its rounding, now take the key.
//! - The writer rounds each stored rotation with its parents' rounding fed back, so `f32` errors
//!   do not add up down a chain.
//! - The skinned mesh at rest meets the bind positions within 4.2e-7 m (`CesiumMan`) and 5.8e-8 m
//!   (Godette); cryptovoxels' node rest pose is not its bind pose (7.8 mm).

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};
use std::hint::black_box;

fn gltf_path(name: &str) -> std::path::PathBuf {
    ikarus_testdata::require("gltf", "benchmark")
        .expect("benchmarks need ../shared/data")
        .join(name)
}

fn bench_gltf(c: &mut Criterion) {
    let mut group = c.benchmark_group("gltf");
    group.sample_size(20);
    for name in [
        "Fox.glb",
        "CesiumMan.glb",
        "Godette_vrm_v4.vrm",
        "cryptovoxels.vrm",
    ] {
        let bytes = std::fs::read(gltf_path(name)).expect("sample file");
        // Everything `ikarus_formats::open` does after reading the bytes.
        group.bench_function(format!("load_{name}"), |b| {
            b.iter(|| {
                let file = GltfFile::parse(black_box(&bytes), None).expect("parses");
                let skeleton = file.skeleton(&SkeletonSource::Auto).expect("skeleton");
                let mesh = file.mesh(&skeleton).expect("mesh");
                let clip = (!file.json().animations.is_empty())
                    .then(|| file.clip(0, &skeleton).expect("clip"));
                (mesh, clip)
            });
        });
    }
    // Sampling: Fox "Survey" (24 joints, 21 LINEAR channels) at 1000 times per iteration; the
    // per-joint-per-frame cost is the time / (1000 · 24).
    let bytes = std::fs::read(gltf_path("Fox.glb")).expect("Fox");
    let file = GltfFile::parse(&bytes, None).expect("parses");
    let skeleton = file.skeleton(&SkeletonSource::Auto).expect("skeleton");
    let clip = file.clip(0, &skeleton).expect("clip");
    let mut pose = skeleton.skeleton.rest_pose();
    let duration = clip.duration();
    group.bench_function("sample_fox_survey_1000_frames", |b| {
        b.iter(|| {
            for k in 0..1000 {
                clip.sample(
                    &skeleton,
                    black_box(duration * f64::from(k) / 1000.0),
                    &mut pose,
                );
            }
        });
    });
    group.finish();
}

criterion_group!(benches, bench_gltf);
criterion_main!(benches);
