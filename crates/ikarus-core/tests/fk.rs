//! Forward kinematics against an independent naive walk to the root with 4×4 matrices.

use glam::{DMat4, DQuat, DVec3, DVec4};
use ikarus_core::{JointId, LocalPose, ModelPose, RawJoint, SkeletonBuilder, Transform, fk};
use proptest::prelude::*;

fn transform() -> impl Strategy<Value = Transform> {
    (
        prop::array::uniform3(-2.0..2.0f64),
        prop::array::uniform4(-1.0..1.0f64),
        prop::bool::ANY,
        prop::array::uniform3(0.5..2.0f64),
        prop::bool::ANY,
    )
        .prop_filter_map("degenerate quaternion", |(t, q, scaled, s, mirror)| {
            let q = DQuat::from_array(q);
            (q.length() > 0.1).then(|| Transform {
                translation: DVec3::from_array(t),
                rotation: q.normalize(),
                scale: if scaled {
                    DVec3::from_array(s) * if mirror { -1.0 } else { 1.0 }
                } else {
                    DVec3::ONE
                },
            })
        })
}

/// Random forest: joint i's parent is one of 0..i, or none.
fn skeleton_and_pose() -> impl Strategy<Value = (Vec<Option<usize>>, Vec<Transform>, Vec<Transform>)>
{
    (1usize..40).prop_flat_map(|n| {
        (
            (0..n)
                .map(|i| {
                    if i == 0 {
                        Just(None).boxed()
                    } else {
                        prop_oneof![1 => Just(None), 8 => (0..i).prop_map(Some)].boxed()
                    }
                })
                .collect::<Vec<_>>(),
            prop::collection::vec(transform(), n),
            prop::collection::vec(transform(), n),
        )
    })
}

fn to_mat4(t: &Transform) -> DMat4 {
    DMat4::from_translation(t.translation)
        * DMat4::from_quat(t.rotation)
        * DMat4::from_scale(t.scale)
}

proptest! {
    #[test]
    fn fk_matches_naive_walk_to_root((parents, rest, pose) in skeleton_and_pose()) {
        let mut b = SkeletonBuilder::new();
        for (i, (p, r)) in parents.iter().zip(&rest).enumerate() {
            b.push(RawJoint {
                name: format!("j{i}"),
                parent: p.map(|p| format!("j{p}")),
                rest: *r,
                limit: ikarus_core::JointLimit::Free,
            });
        }
        let skeleton = b.build().unwrap();
        // The builder may reorder (depth first); map the random pose by name.
        let mut local = LocalPose::new(&skeleton);
        for j in skeleton.joints() {
            let input: usize = skeleton.name(j)[1..].parse().unwrap();
            local[j] = pose[input];
        }
        let mut model = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &local, &mut model);
        for j in skeleton.joints() {
            let input: usize = skeleton.name(j)[1..].parse().unwrap();
            let mut m = DMat4::IDENTITY;
            let mut k = Some(input);
            while let Some(i) = k {
                m = to_mat4(&pose[i]) * m;
                k = parents[i];
            }
            // Where every scale on the path is 1, the model rotation is the naive matrix's 3×3.
            let mut rigid = true;
            let mut k = Some(input);
            while let Some(i) = k {
                rigid &= pose[i].scale == DVec3::ONE;
                k = parents[i];
            }
            if rigid {
                let r = glam::DMat3::from_quat(model.rotation(j));
                let naive = glam::DMat3::from_mat4(m);
                prop_assert!((r - naive).abs_diff_eq(glam::DMat3::ZERO, 1e-9),
                    "rotation of {}: {r} vs {naive}", skeleton.name(j));
            }
            let got = DMat4::from(model[j]);
            for c in 0..4 {
                let diff: DVec4 = got.col(c) - m.col(c);
                prop_assert!(diff.abs().max_element() < 1e-9 * (1.0 + m.col(c).abs().max_element()),
                    "joint {} column {c}: {} vs {}", skeleton.name(j), got.col(c), m.col(c));
            }
        }
        // Partial update from a random joint after changing it equals a full recompute.
        let changed = JointId::from_index(skeleton.len() / 2);
        local[changed].rotation = DQuat::from_rotation_y(0.3) * local[changed].rotation;
        fk::update_subtree(&skeleton, &local, &mut model, changed);
        let mut full = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &local, &mut full);
        prop_assert_eq!(model, full);
    }
}
