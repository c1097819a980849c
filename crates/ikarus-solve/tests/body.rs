//! The full-body solver on held-out frames of the shared BVH clips: effectors on the hips,
//! head, hands and feet (6-D each) set to a frame's own transforms, solved from the clip's
//! pose 10 frames earlier (as a per-frame solve would start). Measured by FK against the
//! frame itself: every joint's position error (MPJPE) and the effectors' residuals.
//! `cargo test -p ikarus-solve --test body -- --nocapture` prints a line per solve.

use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::body::BodyConfig;
use ikarus_solve::{Effector, Goal, IkTask, SolveStatus, SolverConfig, Tolerance, solve};

/// Each clip scaled so that its upper plus lower leg is 0.85 m (an adult's), since BVH units
/// vary; errors are then in metres.
const LEG: f64 = 0.85;

fn model_of(skeleton: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    model
}

fn open(file: &str) -> Option<ikarus_formats::Document> {
    let dir = ikarus_testdata::require("bvh", "body held-out frames")?;
    let path = dir.join(file);
    let unscaled = ikarus_formats::open(path.to_str()?, 1.0).unwrap();
    let map = HumanoidMap::recognise(&unscaled.skeleton);
    let rest = model_of(&unscaled.skeleton, &unscaled.skeleton.rest_pose());
    let at = |b| rest.position(map.joint(b).unwrap());
    let leg = at(HumanoidBone::LeftUpperLeg).distance(at(HumanoidBone::LeftLowerLeg))
        + at(HumanoidBone::LeftLowerLeg).distance(at(HumanoidBone::LeftFoot));
    Some(ikarus_formats::open(path.to_str()?, LEG / leg).unwrap())
}

#[test]
fn held_out_frames_of_every_clip() {
    let bones = [
        HumanoidBone::Hips,
        HumanoidBone::Head,
        HumanoidBone::LeftHand,
        HumanoidBone::RightHand,
        HumanoidBone::LeftFoot,
        HumanoidBone::RightFoot,
    ];
    let config = SolverConfig::Body(BodyConfig::default());
    for file in [
        "cmu_02_01_walk_cgspeed_crlf.bvh",
        "cmu_01_01_jump_cgspeed.bvh",
        "bandainamco_ds1_walk_normal_002.bvh",
        "bandainamco_ds1_run_normal_001.bvh",
    ] {
        let Some(document) = open(file) else { return };
        let skeleton = &document.skeleton;
        let motion = document.motion.as_ref().unwrap();
        let map = HumanoidMap::recognise(skeleton);
        let (mut converged, mut solves, mut worst_mpjpe, mut sum_mpjpe) = (0, 0_u32, 0.0_f64, 0.0);
        for f in (10..motion.len()).step_by(motion.len() / 12) {
            let truth = &motion.frames()[f];
            let truth_model = model_of(skeleton, truth);
            let effectors = bones
                .iter()
                .map(|&b| {
                    let j = map.joint(b).unwrap();
                    Effector {
                        joint: j,
                        goal: Goal {
                            position: Some(truth_model.position(j)),
                            orientation: Some(truth_model.rotation(j)),
                        },
                        weight: 1.0,
                    }
                })
                .collect();
            let task = IkTask {
                effectors,
                base: None,
                tolerance: Tolerance::default(),
            };
            let mut pose = motion.frames()[f - 10].clone();
            let report = solve(skeleton, &task, &config, &mut pose);
            assert!(pose.is_finite(), "{file} frame {f}");
            let model = model_of(skeleton, &pose);
            #[allow(clippy::cast_precision_loss)] // joint counts
            let mpjpe = skeleton
                .joints()
                .map(|j| model.position(j).distance(truth_model.position(j)))
                .sum::<f64>()
                / skeleton.len() as f64;
            // The pelvis, head and feet are met within 1 mm on every frame (to 1e-10 m on most);
            // hands can fall short
            // where the clip's clavicles moved the shoulder (the solver does not move them yet).
            for e in &task.effectors {
                let miss = model.position(e.joint).distance(e.goal.position.unwrap());
                let hand = matches!(
                    map.bone_of(e.joint),
                    Some(HumanoidBone::LeftHand | HumanoidBone::RightHand)
                );
                // Measured worst when the solver landed: 6.3 cm (Bandai Namco run).
                let bound = if hand { 0.08 } else { 1e-3 };
                assert!(
                    miss < bound,
                    "{file} frame {f}: {} off by {miss} m",
                    skeleton.name(e.joint)
                );
            }
            assert!(report.rotation_error < 1e-3, "{file} frame {f}: {report:?}");
            solves += 1;
            converged += usize::from(report.status == SolveStatus::Converged);
            worst_mpjpe = worst_mpjpe.max(mpjpe);
            sum_mpjpe += mpjpe;
            println!(
                "{file} frame {f}: {:?}, residual {:.2e} m / {:.2e} rad, MPJPE {:.2} cm",
                report.status,
                report.position_error,
                report.rotation_error,
                mpjpe * 100.0
            );
        }
        let mean = sum_mpjpe / f64::from(solves);
        println!(
            "{file}: {converged}/{solves} converged, MPJPE mean {:.2} cm, worst {:.2} cm",
            mean * 100.0,
            worst_mpjpe * 100.0
        );
        // The numbers measured when the solver landed (CMU 0.5 and 0.4 cm, Bandai Namco
        // walk 2.5 and run 5.1 cm), as bounds a change must not cross; the aim is
        // 1 cm on every clip.
        let bound = if file.starts_with("cmu") { 0.01 } else { 0.06 };
        assert!(mean < bound, "{file}: MPJPE mean {mean} m");
    }
}
