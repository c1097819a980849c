//! The full-body solver on held-out frames of the shared BVH clips: effectors on the hips,
//! head, hands and feet (6-D each) set to a frame's own transforms, solved from the clip's
//! pose 10 frames earlier (as a per-frame solve would start), beside Levenberg–Marquardt on
//! the same tasks. Measured by FK against the frame itself: every body joint's position
//! error (MPJPE) and the effectors' residuals.
//! `cargo test -p ikarus-solve --test body -- --nocapture` prints a line per clip.

use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::body::BodyConfig;
use ikarus_solve::lm::LmConfig;
use ikarus_solve::{Effector, Goal, IkTask, SolveStatus, SolverConfig, solve};

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
    let leg = ikarus_testdata::rigs::left_leg_length(&unscaled.skeleton, &map);
    Some(ikarus_formats::open(path.to_str()?, LEG / leg).unwrap())
}

/// The mean distance of every joint of the body (the hips' subtree: a BVH's
/// ground-projected root above the hips is no joint of the character) from the truth.
fn mpjpe(skeleton: &Skeleton, hips: JointId, model: &ModelPose, truth: &ModelPose) -> f64 {
    let body = skeleton.subtree(hips);
    #[allow(clippy::cast_precision_loss)] // joint counts
    let count = body.len() as f64;
    body.map(|i| {
        let j = JointId::from_index(i);
        model.position(j).distance(truth.position(j))
    })
    .sum::<f64>()
        / count
}

/// The 6-D task of frame `truth` on the hips, head, hands and feet.
fn task_of(map: &HumanoidMap, truth: &ModelPose) -> IkTask {
    IkTask::from_effectors(
        HumanoidBone::BODY_ENDS
            .iter()
            .map(|&b| {
                let j = map.joint(b).unwrap();
                Effector::new(j, Goal::from_frame(truth, j))
            })
            .collect(),
    )
}

#[test]
fn held_out_frames_of_every_clip() {
    let body = SolverConfig::Body(BodyConfig::default());
    let lm = SolverConfig::Lm(LmConfig::default());
    // The aim: every body joint within 1 cm on average (measured: CMU walk 0.33, jump 0.26,
    // Bandai Namco walk 0.63, run 0.71 cm, the run's start 0.33 s before the frame).
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
        let hips = map.joint(HumanoidBone::Hips).unwrap();
        let (mut solves, mut sum, mut worst, mut lm_sum, mut lm_converged) =
            (0_u32, 0.0, 0.0_f64, 0.0, 0);
        for f in (10..motion.len()).step_by(motion.len() / 12) {
            let truth = model_of(skeleton, &motion.frames()[f]);
            let task = task_of(&map, &truth);
            let mut pose = motion.frames()[f - 10].clone();
            let report = solve(skeleton, &task, &body, &mut pose);
            // Every effector met: the report's residuals are measured by FK.
            assert_eq!(
                report.status,
                SolveStatus::Converged,
                "{file} frame {f}: {report:?}"
            );
            assert!(pose.is_finite());
            let error = mpjpe(skeleton, hips, &model_of(skeleton, &pose), &truth);
            let mut lm_pose = motion.frames()[f - 10].clone();
            let lm_report = solve(skeleton, &task, &lm, &mut lm_pose);
            lm_converged += usize::from(lm_report.status == SolveStatus::Converged);
            lm_sum += mpjpe(skeleton, hips, &model_of(skeleton, &lm_pose), &truth);
            solves += 1;
            sum += error;
            worst = worst.max(error);
        }
        let (mean, lm_mean) = (sum / f64::from(solves), lm_sum / f64::from(solves));
        println!(
            "{file}: body {solves}/{solves} converged, MPJPE mean {:.2} cm, worst {:.2} cm; lm {lm_converged}/{solves} converged, MPJPE mean {:.2} cm",
            mean * 100.0,
            worst * 100.0,
            lm_mean * 100.0
        );
        assert!(mean < 0.01, "{file}: MPJPE mean {mean} m");
    }
}
