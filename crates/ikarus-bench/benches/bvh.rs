//! BVH parsing and writing throughput on the 2 MB CMU jump file.
//!
//! ## What explains the numbers
//!
//! - Numbers parse by Clinger's exact fast path (mantissa below 2^53, `|exponent| ≤ 22`, one
//!   rounded multiply or divide), the standard library as the fallback; a property test checks it
//!   against `str::parse::<f64>` bit for bit.
//! - `to_motion` spends ~8 ms on three `sin_cos` and two quaternion products per joint per frame
//!   (104,576 joint-frames, ~77 ns each).
//! - The writer's time is mostly `f64` shortest round-trip formatting.
//! - The writer makes every name one token at no measurable cost: on a slower VM of the same kind
//!   (parsing, unchanged code, at 2.0× its quiet time) parse 4.88 ms, to motion 15.3 ms, write
//!   34.8 ms (1.6× its quiet time; write/parse 8.9 → 7.1).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_bench::bvh_path;
use ikarus_formats::bvh::{Bvh, BvhReadOptions};
use std::hint::black_box;

fn bench_bvh(c: &mut Criterion) {
    let bytes = std::fs::read(bvh_path("cmu_01_01_jump_cgspeed.bvh")).expect("CMU jump file");
    let options = BvhReadOptions::default();
    let parsed = Bvh::parse(&bytes, &options).expect("parses");
    let motion = parsed.to_motion().expect("converts");
    let written = Bvh::from_motion(&parsed.skeleton, &motion, parsed.layout.clone())
        .expect("fits")
        .to_bvh_string();

    let mut group = c.benchmark_group("bvh");
    group.sample_size(30);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    // Every value parsed into f64 (264,198 values), hierarchy built.
    group.bench_function("parse_cmu_jump", |b| {
        b.iter(|| Bvh::parse(black_box(&bytes), &options).expect("parses"));
    });
    // Parsing plus Euler-to-quaternion conversion of every frame into a Motion.
    group.bench_function("parse_to_motion_cmu_jump", |b| {
        b.iter(|| {
            Bvh::parse(black_box(&bytes), &options)
                .expect("parses")
                .to_motion()
                .expect("converts")
        });
    });
    group.throughput(Throughput::Bytes(written.len() as u64));
    // Quaternion motion to Euler channels to text.
    group.bench_function("write_cmu_jump", |b| {
        b.iter(|| {
            Bvh::from_motion(&parsed.skeleton, black_box(&motion), parsed.layout.clone())
                .expect("fits")
                .to_bvh_string()
        });
    });
    group.finish();
}

criterion_group!(benches, bench_bvh);
criterion_main!(benches);
