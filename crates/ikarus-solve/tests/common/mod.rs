//! Helpers shared by the solver tests: a deterministic generator, FK, legality checks.

#![allow(dead_code)]

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::{Effector, Goal, IkTask};

pub use ikarus_testdata::Rng;

/// Test draws on [`Rng`] beyond plain numbers.
pub trait Draw {
    fn rotation(&mut self, max_angle: f64) -> DQuat;
}

impl Draw for Rng {
    fn rotation(&mut self, max_angle: f64) -> DQuat {
        let axis = DVec3::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        );
        DQuat::from_axis_angle(axis.normalize(), self.range(-max_angle, max_angle))
    }
}

pub fn model(skeleton: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut m = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut m);
    m
}

/// A random legal pose: each listed joint turned randomly, then projected onto its limit.
pub fn random_pose(
    skeleton: &Skeleton,
    joints: &[JointId],
    rng: &mut Rng,
    max_angle: f64,
) -> LocalPose {
    let mut pose = skeleton.rest_pose();
    for &j in joints {
        let rest = skeleton.rest(j).rotation;
        let delta = skeleton.limit(j).project(rng.rotation(max_angle));
        pose[j].rotation = rest * delta;
    }
    pose
}

pub fn assert_legal(skeleton: &Skeleton, pose: &LocalPose) {
    assert!(pose.is_finite());
    if let Some((j, by)) = skeleton.limit_violation(pose) {
        panic!("{} outside its limit by {by}", skeleton.name(j));
    }
}

pub fn position_task(joint: JointId, target: DVec3) -> IkTask {
    IkTask {
        effectors: vec![Effector {
            joint,
            goal: Goal {
                position: Some(target),
                orientation: None,
            },
            weight: 1.0,
        }],
        ..IkTask::default()
    }
}

/// The joints with these names.
pub fn joints(skeleton: &Skeleton, names: &[&str]) -> Vec<JointId> {
    names
        .iter()
        .map(|n| skeleton.joint(n).unwrap_or_else(|| panic!("no joint {n}")))
        .collect()
}

/// A robot from a shared URDF file and one of its chains.
pub struct Robot {
    pub urdf: ikarus_formats::urdf::Urdf,
    pub chain: ikarus_core::chain::JointChain,
}

/// The chain `base` → `tip` of `../shared/data/urdf/<file>`; `None` without the shared data.
pub fn load_robot(file: &str, base: &str, tip: &str) -> Option<Robot> {
    let dir = ikarus_testdata::require("urdf", file)?;
    let text = std::fs::read_to_string(dir.join(file)).expect("readable URDF");
    let urdf = ikarus_formats::urdf::Urdf::parse(&text).expect("valid URDF");
    let chain = urdf.chain(base, tip).expect("chain");
    Some(Robot { urdf, chain })
}
