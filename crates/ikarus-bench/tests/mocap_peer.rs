//! Our keypoint solver against the usual per-bone look-at method ([`look_at`]) on the same
//! inputs: every shared BVH's joints as Human3.6M 17 points (forward kinematics), solved back
//! onto the source skeleton by both, measured by forward kinematics of each result.

use glam::DVec3;
use ikarus_anim::mocap::{
    Binding, KeypointClip, Layout, MocapConfig, largest_frame_rotation, solve_positions,
};
use ikarus_bench::mocap_peer::look_at;
use ikarus_core::Skeleton;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::HumanoidMap;

/// Keypoints by forward kinematics, shared with `ikarus-anim`'s motion-capture tests.
#[path = "../../ikarus-anim/tests/common/mocap.rs"]
mod mocap;

use mocap::keypoints;

/// Hips to head plus hips to left foot at rest.
fn body_size(skeleton: &Skeleton) -> Option<f64> {
    ikarus_testdata::rigs::body_size(skeleton, &HumanoidMap::recognise(skeleton))
}

/// Mean distance between the points the skeleton has (unmapped points are NaN).
fn mpjpe(truth: &[DVec3], got: &[DVec3]) -> f64 {
    let pairs: Vec<f64> = truth
        .iter()
        .zip(got)
        .filter(|(t, _)| t.is_finite())
        .map(|(t, g)| (*t - *g).length())
        .collect();
    #[allow(clippy::cast_precision_loss)] // point counts
    let n = pairs.len() as f64;
    pairs.iter().sum::<f64>() / n
}

#[test]
fn usual_look_at_method_for_comparison() {
    let layout = Layout::H36m;
    let (mut ours, mut theirs, mut files) = (0.0, 0.0, 0.0);
    let reference = body_size(&builtin_humanoid()).unwrap();
    for path in ikarus_testdata::files("bvh", "bvh", "usual_look_at_method_for_comparison") {
        // Every file scaled to the built-in humanoid's size, so that millimetres compare.
        let doc = ikarus_formats::open(path.to_str().unwrap(), 1.0).unwrap();
        let Some(size) = body_size(&doc.skeleton) else {
            println!("{}: no hips, head or foot, skipped", path.display());
            continue;
        };
        let doc = ikarus_formats::open(path.to_str().unwrap(), reference / size).unwrap();
        let (skeleton, motion) = (doc.skeleton, doc.motion.unwrap());
        let map = HumanoidMap::recognise(&skeleton);
        let binding = Binding::new(&skeleton, &map, &layout, &[true; 17]);
        let truth = keypoints(&skeleton, &motion, &binding);
        let peer = look_at(&skeleton, &binding, &truth, 17, motion.frame_time());
        let theirs_error = mpjpe(&truth, &keypoints(&skeleton, &peer, &binding));
        let clip = KeypointClip {
            layout: &layout,
            frame_time: motion.frame_time(),
            points: &truth,
            confidence: None,
        };
        let solved = solve_positions(&skeleton, &map, &clip, &MocapConfig::default()).unwrap();
        let back = Binding::new(&solved.skeleton, &map, &layout, &[true; 17]);
        let ours_error = mpjpe(&truth, &keypoints(&solved.skeleton, &solved.motion, &back));
        let scale = 1e-3;
        println!(
            "look-at peer {:<40} MPJPE {:>6.1} (ours {:>5.2}) mm; step {:>6.1}° (ours {:>6.1}°, source {:>6.1}°)",
            path.file_name().unwrap().to_string_lossy(),
            theirs_error / scale,
            ours_error / scale,
            largest_frame_rotation(&peer).to_degrees(),
            largest_frame_rotation(&solved.motion).to_degrees(),
            largest_frame_rotation(&motion).to_degrees()
        );
        assert!(
            ours_error < theirs_error,
            "{}: ours {ours_error}, peer {theirs_error}",
            path.display()
        );
        ours += ours_error / scale;
        theirs += theirs_error / scale;
        files += 1.0;
    }
    assert!(files >= 8.0, "only {files} files compared");
    println!(
        "look-at peer mean {:.1} mm, ours {:.2} mm",
        theirs / files,
        ours / files
    );
}
