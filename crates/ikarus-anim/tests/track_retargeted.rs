//! Tracker solving on clips retargeted onto the built-in humanoid (every joint limited) and a
//! VRM: trackers from the retargeted clip's own bones (`derive_trackers`: frame 0 the
//! avatar's reference pose on the clip's floor, the floor moved to y = 0), solved with 6, 4
//! and 3 points, every humanoid body bone compared with the retargeted clip by FK (MPJPE).
//! `cargo test -p ikarus-anim --test track_retargeted -- --nocapture` prints a line per case.

use glam::DVec3;
mod common;

use ikarus_anim::retarget::{self, Character};
use ikarus_anim::track::{self, Points, TrackConfig};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, Skeleton, fk};

fn model_of(skeleton: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    model
}

/// `file` retargeted onto `target`, at most 10 s.
fn retargeted(file: &str, target: Character<'_>) -> Option<Motion> {
    let out = common::retargeted(file, "tracking retargeted clips", target)?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let keep = (10.0 * out.frame_rate()) as usize;
    let mut short = Motion::new(out.frame_time(), out.joint_count()).unwrap();
    for pose in out.frames().iter().skip(1).take(keep) {
        short.push(pose.clone()).unwrap();
    }
    Some(short)
}

#[test]
fn retargeted_clips_from_three_four_and_six_points() {
    let targets = common::retarget_targets("tracking retargeted clips");
    for file in [
        "cmu_02_01_walk_cgspeed_crlf.bvh",
        "bandainamco_ds1_walk_normal_002.bvh",
    ] {
        for (name, skeleton, map) in &targets {
            let character = Character { skeleton, map };
            let Some(motion) = retargeted(file, character) else {
                return;
            };
            let (_, reference) = retarget::align::reference(skeleton, map, None);
            let truth: Vec<ModelPose> = motion
                .frames()
                .iter()
                .map(|p| model_of(skeleton, p))
                .collect();
            let floor = track::floor_of(character, &reference, &truth).unwrap();
            let trackers = track::derive_trackers(character, &motion, Points::Six.bones()).unwrap();
            let body: Vec<JointId> = HumanoidBone::BODY
                .iter()
                .filter_map(|&b| map.joint(b))
                .collect();
            for points in [Points::Six, Points::Four, Points::Three] {
                let config = TrackConfig {
                    points: Some(points),
                    ..TrackConfig::default()
                };
                let tracked = track::track(character, &trackers, &config, None).unwrap();
                let mut sum = 0.0;
                for (pose, t) in tracked.motion.frames()[1..].iter().zip(&truth) {
                    assert!(pose.is_finite());
                    let model = model_of(skeleton, pose);
                    #[allow(clippy::cast_precision_loss)] // joint counts
                    let e = body
                        .iter()
                        .map(|&j| model.position(j).distance(t.position(j) - DVec3::Y * floor))
                        .sum::<f64>()
                        / body.len() as f64;
                    sum += e;
                }
                #[allow(clippy::cast_precision_loss)] // frame counts
                let mpjpe = sum / truth.len() as f64;
                println!(
                    "{file} onto {name}, {}-point: {} frames, MPJPE {:.2} cm, held {}, unconverged {}",
                    points.bones().len(),
                    truth.len(),
                    mpjpe * 100.0,
                    tracked.held_frames(),
                    tracked.unconverged()
                );
                assert_eq!(tracked.held_frames(), 0, "{file} onto {name}");
                // Regression guards at what this version reaches (measured: 6-point 0.81 and
                // 1.30 cm on the VRM, within the 1.5 cm aim; 2.13 and 0.79 cm on the built-in
                // humanoid (the Bandai walk's 1.78 before a placed head's turn past its own
                // limit went to the spine and neck: the head had been 33–53° off its goal),
                // whose limits hold the CMU walk's hands off: with the body's chest and
                // clavicles placed as the solve places them, no swivel keeps the upper arm
                // inside its limit (0.36 rad past at best on the CMU walk's first frames), so
                // the limit's projection takes the hand up to 18 cm off; 4-point 4.6 – 8.0
                // cm; 3-point 5.7 – 10.8 cm).
                let bound = match (points, *name) {
                    (Points::Six, "Godette.vrm") => 0.015,
                    (Points::Six, _) => 0.025,
                    (Points::Four, _) => 0.085,
                    (Points::Three, _) => 0.115,
                };
                assert!(mpjpe < bound, "{file} onto {name}, {points:?}: {mpjpe}");
            }
        }
    }
}
