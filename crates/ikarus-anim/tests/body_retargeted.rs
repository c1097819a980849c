//! The full-body solver on held-out frames of clips retargeted onto the built-in humanoid (every
//! joint limited) and a VRM: six 6-D effectors (hips, head, hands, feet) set to a frame of the
//! retargeted clip, solved from its pose 10 frames earlier. Measured by FK against the frame:
//! every body joint's position error (MPJPE) and whether each solve met its goals.
//!
//! Measured (2026-11-27): CMU walk → built-in humanoid 5/12 converged, MPJPE 0.48 cm; →
//! Godette.vrm 12/12, 0.13 cm; Bandai walk → built-in 9/11, 0.42 cm; → Godette.vrm 11/11, 0.30 cm.
//! The built-in humanoid's arm and ankle limits hold some goals off (up to 11 cm on the CMU clip's
//! first frames, from its T-pose).

mod common;

use ikarus_anim::retarget::Character;
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::body::BodyConfig;
use ikarus_solve::{Effector, Goal, IkTask, SolveStatus, SolverConfig, solve};

fn model_of(skeleton: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    model
}

#[test]
fn held_out_frames_of_retargeted_clips() {
    let targets = common::retarget_targets("body on retargeted clips");
    let config = SolverConfig::Body(BodyConfig::default());
    for file in [
        "cmu_02_01_walk_cgspeed_crlf.bvh",
        "bandainamco_ds1_walk_normal_002.bvh",
    ] {
        for (name, skeleton, map) in &targets {
            let character = Character { skeleton, map };
            let Some(motion) = common::retargeted(file, "body on retargeted clips", character)
            else {
                return;
            };
            let hips = map.joint(HumanoidBone::Hips).unwrap();
            let body = skeleton.subtree(hips);
            let (mut solves, mut converged, mut sum, mut worst) = (0_u32, 0, 0.0, 0.0_f64);
            for f in (10..motion.len()).step_by(motion.len() / 12) {
                let truth = model_of(skeleton, &motion.frames()[f]);
                let effectors = HumanoidBone::BODY_ENDS
                    .iter()
                    .map(|&b| {
                        let j = map.joint(b).unwrap();
                        Effector::new(j, Goal::from_frame(&truth, j))
                    })
                    .collect();
                let task = IkTask::from_effectors(effectors);
                let mut pose = motion.frames()[f - 10].clone();
                let report = solve(skeleton, &task, &config, &mut pose);
                assert!(pose.is_finite());
                assert!(
                    skeleton
                        .limit_violation(&pose)
                        .is_none_or(|(_, v)| v < 1e-6)
                );
                let model = model_of(skeleton, &pose);
                #[allow(clippy::cast_precision_loss)] // joint counts
                let error = body
                    .clone()
                    .map(|i| {
                        let j = JointId::from_index(i);
                        model.position(j).distance(truth.position(j))
                    })
                    .sum::<f64>()
                    / body.len() as f64;
                solves += 1;
                converged += usize::from(report.status == SolveStatus::Converged);
                sum += error;
                worst = worst.max(error);
            }
            let mean = sum / f64::from(solves);
            println!(
                "{file} → {name}: {converged}/{solves} converged, MPJPE mean {:.2} cm, worst {:.2} cm",
                mean * 100.0,
                worst * 100.0
            );
            // Every body joint within 1 cm on average. On the VRM (no limits) every solve
            // meets its goals; on the built-in humanoid (CMU walk 5/12, Bandai walk 9/11
            // converged) the arms' and ankles' limits hold some goals off, by up to 11 cm on
            // the CMU clip's first frames from its T-pose: the open gap.
            assert!(mean < 0.01, "{file} → {name}: MPJPE mean {mean} m");
            if *name != "builtin" {
                assert_eq!(converged, solves as usize, "{file} → {name}");
            }
        }
    }
}
