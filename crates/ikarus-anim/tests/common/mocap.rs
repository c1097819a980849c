//! Keypoints by forward kinematics, and keypoint files as Human3.6M writes them: shared by the
//! motion-capture tests here, `ikarus-bench`'s `tests/mocap_peer.rs` and `ikarus-cli`'s
//! `tests/cli_mocap.rs` (which include this file).

#![allow(dead_code)] // not every includer uses every helper

use glam::DVec3;
use ikarus_anim::mocap::Binding;
use ikarus_core::{ModelPose, Motion, Skeleton, fk};
use ikarus_formats::keypoints::KeypointFile;

/// FK keypoints of every frame (frame-major).
pub fn keypoints(skeleton: &Skeleton, motion: &Motion, binding: &Binding) -> Vec<DVec3> {
    let mut model = ModelPose::new(skeleton);
    let mut frame = vec![DVec3::ZERO; binding.len()];
    let mut out = Vec::with_capacity(motion.len() * binding.len());
    for pose in motion.frames() {
        fk::forward_kinematics(skeleton, pose, &mut model);
        binding.keypoints(&model, &mut frame);
        out.extend_from_slice(&frame);
    }
    out
}

/// Human3.6M's 17 points a frame (`points`, Y up, metres) at `fps`, as a keypoint file in that
/// dataset's own units: Z up, millimetres.
pub fn h36m_file(points: &[DVec3], fps: f64) -> KeypointFile {
    KeypointFile {
        layout: Some("h36m".into()),
        fps: Some(fps),
        names: None,
        points_per_frame: 17,
        points: points
            .iter()
            .map(|p| DVec3::new(p.x, -p.z, p.y) * 1000.0)
            .collect(),
        confidence: None,
    }
}
