//! Retargeting (issue 18): whole clips (the CMU walk and jump, the Bandai Namco walk and run,
//! kishimen.vmd evaluated with IK on Miku) onto the built-in humanoid, both VRM samples and the
//! PMX test model, with contacts and IK repair (`retarget`) and as plain rotation copying
//! (`plain_copy`, the baseline), timed per frame (throughput = the clip's frames). The quality
//! numbers of the same runs are the test's (`cargo test -p ikarus-anim --test retarget`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_anim::retarget::{self, RetargetConfig};
use ikarus_bench::retarget::{clips, targets};
use std::hint::black_box;
use std::time::Duration;

fn retargeting(c: &mut Criterion) {
    let clips = clips();
    let targets = targets();
    let mut group = c.benchmark_group("retarget");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(2));
    group.warm_up_time(Duration::from_millis(500));
    for clip in &clips {
        let Some(motion) = &clip.motion else { continue };
        group.throughput(Throughput::Elements(motion.len() as u64));
        let source = retarget::Character {
            skeleton: &clip.skeleton,
            map: &clip.map,
        };
        for target in &targets {
            let to = retarget::Character {
                skeleton: &target.skeleton,
                map: &target.map,
            };
            for (method, config) in [
                ("retarget", RetargetConfig::default()),
                ("plain_copy", RetargetConfig::plain_copy()),
            ] {
                group.bench_function(format!("{}/{}/{method}", clip.name, target.name), |b| {
                    b.iter(|| {
                        let out = retarget::retarget(source, black_box(motion), to, &config)
                            .expect("the clip retargets");
                        black_box(out.motion.len())
                    });
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, retargeting);
criterion_main!(benches);
