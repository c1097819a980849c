//! Motion capture → posture: frames per second for keypoints of the CMU walk
//! (`cmu_02_01_walk_cgspeed_crlf.bvh`, forward kinematics of every frame turned into Human3.6M
//! 17 and `MediaPipe` 33 points) solved onto the built-in humanoid (26 joints): one frame
//! through a prepared [`PositionSolver`], and whole clips through `solve_positions` (gap
//! filling, bone-length fit, solve, FK residuals); and beside it, the same clip onto the walk's
//! own skeleton by ours and by the usual per-bone look-at method (`ikarus_bench::mocap_peer`).
//!
//! ## What explains the numbers
//!
//! - The error left onto the source skeleton is the 17-point skeleton's non-rigid part: clavicles
//!   and spine segments with no point of their own.
//! - One-Euro runs forward, then backward in time, so it does not lag: forward only gave 13.3 mm on
//!   the CMU walk at 5 mm noise (now 6.7) and 21–25 mm on the 30 fps runs (now 12.4–15.8).
//! - Open: the pelvis point is anchored on the hips joint, on MMD models センター, 10+ cm above the
//!   hip joints (Miku 80.5 mm); a midpoint anchor helped Miku but hurt cryptovoxels.
//! - The contact cleanup imposes no limits (the raw solve breaks the humanoid's by up to 140°;
//!   snapping costs 55 mm) and no floor (an estimated one bent knees by up to 64° in a frame).
//! - The leg solve takes the knee's bend plane from the current pose when the knee is off the
//!   hip–ankle line by 0.1% of the thigh (at 10%, straight planted legs twisted 40–60°).
//! - A frame took 9.15 µs while limbs' bend planes came from Horn's 4×4 eigen-solve, 5.68 µs with
//!   the closed-form frame pair; the look-at peer is 3.9–4.3× faster but 31× less accurate.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::DVec3;
use ikarus_anim::mocap::{
    Binding, KeypointClip, Layout, MocapConfig, PositionSolver, solve_positions,
};
use ikarus_anim::retarget::ContactConfig;
use ikarus_bench::mocap_peer::look_at;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{ModelPose, fk};
use std::hint::black_box;

fn walk_points(layout: &Layout) -> Option<(Vec<DVec3>, f64)> {
    let dir = ikarus_testdata::require("bvh", "bench mocap")?;
    let path = dir.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    // 0.056 brings the CMU file's units near the built-in humanoid's size (metres).
    let doc = ikarus_formats::open(path.to_str()?, 0.056).ok()?;
    let motion = doc.motion?;
    let map = HumanoidMap::recognise(&doc.skeleton);
    let binding = Binding::new(&doc.skeleton, &map, layout, &vec![true; layout.len()]);
    let mut model = ModelPose::new(&doc.skeleton);
    let mut frame = vec![DVec3::ZERO; layout.len()];
    let mut points = Vec::new();
    for pose in motion.frames() {
        fk::forward_kinematics(&doc.skeleton, pose, &mut model);
        binding.keypoints(&model, &mut frame);
        points.extend_from_slice(&frame);
    }
    Some((points, motion.frame_time()))
}

fn mocap(c: &mut Criterion) {
    let target = builtin_humanoid();
    let map = HumanoidMap::recognise(&target);
    let mut group = c.benchmark_group("mocap");
    for (label, layout) in [("h36m", Layout::H36m), ("mediapipe", Layout::MediaPipe)] {
        let Some((points, frame_time)) = walk_points(&layout) else {
            return;
        };
        let n = layout.len();
        let clip = KeypointClip {
            layout: &layout,
            frame_time,
            points: &points,
            confidence: None,
        };
        let fitted = solve_positions(&target, &map, &clip, &MocapConfig::default())
            .expect("the walk solves")
            .skeleton;
        let binding = Binding::new(&fitted, &map, &layout, &vec![true; n]);
        let mut solver = PositionSolver::new(&fitted, binding);
        let mut pose = fitted.rest_pose();
        let frames = points.len() / n;
        let mut f = 0;
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("{label}_frame_onto_builtin"), |b| {
            b.iter(|| {
                f = (f + 1) % frames;
                solver.solve_frame(&fitted, black_box(&points[f * n..(f + 1) * n]), &mut pose);
                black_box(pose[ikarus_core::JointId::from_index(0)].translation)
            });
        });
        group.throughput(Throughput::Elements(frames as u64));
        group.bench_function(format!("{label}_clip_onto_builtin"), |b| {
            b.iter(|| {
                let result =
                    solve_positions(&target, &map, black_box(&clip), &MocapConfig::default())
                        .expect("the walk solves");
                black_box(result.report.mean_error)
            });
        });
        if label == "h36m" {
            let config = MocapConfig {
                contacts: Some(ContactConfig::default()),
                ..MocapConfig::default()
            };
            group.bench_function("h36m_clip_onto_builtin_contacts", |b| {
                b.iter(|| {
                    let result = solve_positions(&target, &map, black_box(&clip), &config)
                        .expect("the walk solves");
                    black_box(result.report.contacts)
                });
            });
        }
    }
    group.finish();
}

/// Side by side with the peer ([`look_at`], the usual per-bone look-at method): the walk's
/// Human3.6M points solved back onto the walk's own skeleton by both, whole clips.
fn peer(c: &mut Criterion) {
    let layout = Layout::H36m;
    let Some(dir) = ikarus_testdata::require("bvh", "bench mocap peer") else {
        return;
    };
    let path = dir.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let doc =
        ikarus_formats::open(path.to_str().expect("a UTF-8 path"), 0.056).expect("the walk loads");
    let (skeleton, motion) = (doc.skeleton, doc.motion.expect("the walk has frames"));
    let map = HumanoidMap::recognise(&skeleton);
    let binding = Binding::new(&skeleton, &map, &layout, &[true; 17]);
    let Some((points, frame_time)) = walk_points(&layout) else {
        return;
    };
    let clip = KeypointClip {
        layout: &layout,
        frame_time,
        points: &points,
        confidence: None,
    };
    let mut group = c.benchmark_group("mocap");
    group.throughput(Throughput::Elements(motion.len() as u64));
    group.bench_function("h36m_clip_onto_source", |b| {
        b.iter(|| {
            let result =
                solve_positions(&skeleton, &map, black_box(&clip), &MocapConfig::default())
                    .expect("the walk solves");
            black_box(result.report.mean_error)
        });
    });
    group.bench_function("h36m_clip_look_at_peer", |b| {
        b.iter(|| {
            let result = look_at(&skeleton, &binding, black_box(&points), 17, frame_time);
            black_box(result.len())
        });
    });
    group.finish();
}

criterion_group!(benches, mocap, peer);
criterion_main!(benches);
