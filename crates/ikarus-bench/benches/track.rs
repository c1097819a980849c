//! Tracker solving per frame: trackers made from the CMU walk's own bones (metres), solved onto
//! the same skeleton frame by frame from the last frame's pose, as a VR runtime runs it
//! (`TrackSolver::solve_frame`; the recording's 343 frames after calibration, throughput in
//! frames), with 6, 4 and 3 points. The aim: ≥ 10,000 frames per second per core.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ikarus_anim::ground::Plane;
use ikarus_anim::retarget::Character;
use ikarus_anim::track::{self, Points, TrackConfig, TrackSolver};
use ikarus_core::glam::DVec3;
use ikarus_core::humanoid_map::HumanoidMap;
use std::hint::black_box;

fn tracking(c: &mut Criterion) {
    let Some(dir) = ikarus_testdata::data_dir() else {
        eprintln!("track bench: no shared data");
        return;
    };
    let path = dir.join("bvh/cmu_02_01_walk_cgspeed_crlf.bvh");
    let document = ikarus_formats::open(path.to_str().expect("path"), 0.056).expect("CMU walk");
    let skeleton = &document.skeleton;
    let map = HumanoidMap::recognise(skeleton);
    let character = Character {
        skeleton,
        map: &map,
    };
    let motion = document.motion.as_ref().expect("motion");
    let mut group = c.benchmark_group("track");
    group.sample_size(10);
    for points in [Points::Six, Points::Four, Points::Three] {
        let trackers = track::derive_trackers(character, motion, points.bones()).expect("trackers");
        let config = TrackConfig::default();
        let bones = track::used_bones(&trackers, &config).expect("bones");
        let mut frame = Vec::new();
        trackers.frame_into(0, &mut frame);
        let calibration = track::calibrate(character, &frame, &[], 0.0).expect("calibration");
        let ground = Plane {
            point: DVec3::ZERO,
            normal: DVec3::Y,
        };
        let frames: Vec<_> = (1..trackers.len())
            .map(|f| {
                let mut samples = Vec::new();
                trackers.frame_into(f, &mut samples);
                samples
            })
            .collect();
        group.throughput(Throughput::Elements(frames.len() as u64));
        group.bench_function(format!("walk_{}_points", points.bones().len()), |b| {
            b.iter(|| {
                let mut solver = TrackSolver::new(
                    character,
                    &bones,
                    calibration.clone(),
                    &config,
                    trackers.fps,
                )
                .expect("solver");
                let mut pose = solver.start_pose().clone();
                for samples in &frames {
                    black_box(solver.solve_frame(samples, &ground, &mut pose));
                }
                pose
            });
        });
    }
    group.finish();
}

criterion_group!(benches, tracking);
criterion_main!(benches);
