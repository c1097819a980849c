//! The peer of motion capture → posture: the usual open converter's per-bone
//! look-at method, re-implemented so that the bench and the comparison test run it on the same
//! inputs as ours (`benches/mocap.rs`, `tests/mocap_peer.rs`).

use glam::{DQuat, DVec3};
use ikarus_anim::mocap::Binding;
use ikarus_core::{ModelPose, Motion, Skeleton, fk};

/// The usual open converter's method: every joint looks at its first
/// keypoint downstream with one twist vector for the whole body (the right-to-left hip line),
/// rest offsets fixed, the root at the pelvis point. `points` are frame-major Human3.6M 17
/// frames (`count` points each) bound to `skeleton` by `binding`. Returns the motion on
/// `skeleton`.
///
/// # Panics
/// When `frame_time` is not a positive number, or `binding` leaves a hip point unbound.
pub fn look_at(
    skeleton: &Skeleton,
    binding: &Binding,
    points: &[DVec3],
    count: usize,
    frame_time: f64,
) -> Motion {
    let owner: Vec<Option<usize>> = skeleton
        .joints()
        .map(|j| {
            (0..count).find(|&k| {
                binding
                    .anchor(k)
                    .is_some_and(|a| a.joint == j && a.offset == DVec3::ZERO)
            })
        })
        .collect();
    // The first owning joint below each joint (depth first), if any.
    let target: Vec<Option<(ikarus_core::JointId, usize)>> = skeleton
        .joints()
        .map(|j| {
            skeleton
                .subtree(j)
                .skip(1)
                .map(ikarus_core::JointId::from_index)
                .find_map(|d| owner[d.index()].map(|k| (d, k)))
        })
        .collect();
    let mut rest_model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest_model);
    let frame = |primary: DVec3, twist: DVec3| {
        let x = primary.try_normalize()?;
        let z = x.cross(twist).try_normalize()?;
        Some(glam::DMat3::from_cols(x, z.cross(x), z))
    };
    // Human3.6M's left and right hip points.
    let (left, right) = (
        Some(4).filter(|&k| k < count),
        Some(1).filter(|&k| k < count),
    );
    let rest_twist = match (left, right) {
        (Some(l), Some(r)) => {
            rest_model.position(
                binding
                    .anchor(l)
                    .expect("the left hip point is bound")
                    .joint,
            ) - rest_model.position(
                binding
                    .anchor(r)
                    .expect("the right hip point is bound")
                    .joint,
            )
        }
        _ => DVec3::X,
    };
    let mut motion = Motion::for_skeleton(skeleton, frame_time).expect("a positive frame time");
    let mut model_rotation = vec![DQuat::IDENTITY; skeleton.len()];
    for f in points.chunks_exact(count) {
        let twist = match (left, right) {
            (Some(l), Some(r)) => f[l] - f[r],
            _ => DVec3::X,
        };
        let mut pose = skeleton.rest_pose();
        for j in skeleton.joints() {
            let parent = skeleton
                .parent(j)
                .map_or(DQuat::IDENTITY, |p| model_rotation[p.index()]);
            // The joint's own point, else its parent's (fixed offsets in between).
            let here = owner[j.index()]
                .or_else(|| skeleton.parent(j).and_then(|p| owner[p.index()]))
                .map(|k| f[k]);
            if let (Some((d, k)), Some(here)) = (target[j.index()], here) {
                let from = rest_model.position(d) - rest_model.position(j);
                let to = f[k] - here;
                if let (Some(a), Some(b)) = (frame(to, twist), frame(from, rest_twist)) {
                    let model = DQuat::from_mat3(&(a * b.transpose())) * rest_model.rotation(j);
                    pose[j].rotation = (parent.inverse() * model).normalize();
                }
            }
            if skeleton.parent(j).is_none() {
                // The root on its point, or moved with the first owning joint below it.
                if let Some(k) = owner[j.index()] {
                    pose[j].translation = f[k];
                } else if let Some((d, k)) = target[j.index()] {
                    pose[j].translation += f[k] - rest_model.position(d);
                }
            }
            model_rotation[j.index()] = parent * pose[j].rotation;
        }
        motion.push(pose).expect("a pose of this skeleton");
    }
    motion
}
