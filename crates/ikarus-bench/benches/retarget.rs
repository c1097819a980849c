//! Retargeting: whole clips (the CMU walk and jump, the Bandai Namco walk and run,
//! kishimen.vmd evaluated with IK on Miku) onto the built-in humanoid, both VRM samples and the
//! PMX test model, with contacts and IK repair (`retarget`) and as plain rotation copying
//! (`plain_copy`, the baseline), timed per frame (throughput = the clip's frames). The quality
//! numbers of the same runs are the test's (`cargo test -p ikarus-anim --test retarget`).
//!
//! ## What explains the numbers
//!
//! - Hold: a held foot the closed form leaves over 1 mm off also descends from the last frame's leg
//!   (damped Gauss–Newton, limits projected): ball weight 4, heel 3, the heel's height 0.3.
//! - That replaced the per-frame closed form's branch switches in squats on three limits (a heel
//!   2.6 cm across the floor in one kishimen frame); the lowest cost of three poses is kept.
//! - The built-in ankle dorsiflexes 30° (20° is the unloaded range; a squat with the heels down
//!   needs 30–40°); the ground loop runs up to 24 attempts, until nothing is below the floor.
//! - Toes bend further within their hinge where a tip is still under the floor; the bends are
//!   planned over the clip to change by at most 10 rad/s (per-frame bends snapped toes by 53°).
//! - Heels the ankle limits lift get their anchors eased by at most 0.15 m/s along the sphere of
//!   the foot's length about the held ball, and those frames are solved again.
//! - Where the ankle's limit holds the foot off its rotation, limb7 (`KeepCurrent`) turns the knee
//!   to the nearest swivel where the ankle fits (kishimen's slide 16.1 → 3.4 cm).
//! - The Bandai Namco rest lays every bone along one axis: both methods start from a T-pose
//!   reference built from it (twists from the clip's knee and elbow bend axes).
//! - Built-in humanoid: `perf` puts `hold_foot` at 46% of the CMU jump's time (a step is 18 leg
//!   FKs) and the knee's swivel search at 47%; VRM and PMX legs are unlimited, so neither runs.
//! - The VRM/PMX times are bimodal: in the slow mode the kernel zeroes and unmaps pages, as the
//!   per-frame poses (~9 MB for 344 frames of a 120-bone model) are mapped afresh each call.
//! - Tried and dropped: a hips yaw or shift searched per frame, LM as the refinement (no floor),
//!   a limit penalty instead of projection, a branch hysteresis, sticky heels, three easing rounds.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_anim::retarget::{self, RetargetConfig};
use ikarus_bench::retarget::{clips, targets};
use std::hint::black_box;
use std::time::Duration;

/// The library's view of a bench character: its skeleton with its humanoid map.
fn character(of: &ikarus_bench::retarget::Character) -> retarget::Character<'_> {
    retarget::Character {
        skeleton: &of.skeleton,
        map: &of.map,
    }
}

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
        let source = character(clip);
        for target in &targets {
            let to = character(target);
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
