//! Helpers shared by the solver tests that need `ikarus_solve` or `ikarus_formats` types (the
//! rest, re-exported here, is in `ikarus_testdata`).

#![allow(clippy::disallowed_methods)] // tests read the shared data files
#![allow(dead_code)]

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton};
use ikarus_solve::{Goal, IkTask};

#[allow(unused_imports)] // not every test file asserts legality
pub use ikarus_testdata::assert::{assert_legal, model_of as model};
pub use ikarus_testdata::{Draw, Rng};

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
        let delta = skeleton.limit(j).project(rng.rotation_up_to(max_angle));
        pose[j].rotation = rest * delta;
    }
    pose
}

/// A task of one position goal: `joint` to `target` (model space), weight 1.
pub fn position_task(joint: JointId, target: DVec3) -> IkTask {
    IkTask::from_goal(joint, Goal::from_position(target))
}

/// A task of one position goal per joint of `joints`, each where it is in `model` (weight 1).
pub fn positions_task(model: &ModelPose, joints: &[JointId]) -> IkTask {
    IkTask::from_effectors(
        joints
            .iter()
            .map(|&j| ikarus_solve::Effector::new(j, Goal::from_position(model.position(j))))
            .collect(),
    )
}

/// A task of one 6-D goal: `joint` to where and how it is in `model` (weight 1), so that the
/// pose `model` came from meets it exactly.
pub fn pose_task(model: &ModelPose, joint: JointId) -> IkTask {
    IkTask::from_goal(
        joint,
        Goal::from_position_orientation(model.position(joint), model.rotation(joint)),
    )
}

/// The built-in humanoid's left arm, shoulder to hand.
pub const LEFT_ARM: [&str; 4] = ["leftShoulder", "leftUpperArm", "leftLowerArm", "leftHand"];

/// Driver settings for `max_iterations` sweeps and no restarts (the rest default).
pub fn sweeps(max_iterations: u32) -> ikarus_solve::IterationSettings {
    ikarus_solve::IterationSettings {
        max_iterations,
        restarts: 0,
        ..ikarus_solve::IterationSettings::default()
    }
}

/// The joints with these names.
pub fn joints(skeleton: &Skeleton, names: &[&str]) -> Vec<JointId> {
    names
        .iter()
        .map(|n| skeleton.joint(n).unwrap_or_else(|| panic!("no joint {n}")))
        .collect()
}

/// The built-in humanoid, its joints with these names and its left hand (the arm tests'
/// effector).
pub fn humanoid_left_hand(names: &[&str]) -> (Skeleton, Vec<JointId>, JointId) {
    let (s, movers) = humanoid_joints(names);
    let hand = s.joint("leftHand").unwrap();
    (s, movers, hand)
}

/// The built-in humanoid and its joints with these names.
pub fn humanoid_joints(names: &[&str]) -> (Skeleton, Vec<JointId>) {
    let s = ikarus_core::humanoid::builtin_humanoid();
    let joints = joints(&s, names);
    (s, joints)
}

/// The joints with these names, as an array to destructure.
pub fn joint_array<const N: usize>(skeleton: &Skeleton, names: [&str; N]) -> [JointId; N] {
    names.map(|n| skeleton.joint(n).unwrap_or_else(|| panic!("no joint {n}")))
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

impl Robot {
    /// `base_from_tip` by the skeleton's forward kinematics.
    pub fn tip(&self, q: &[f64]) -> DAffine3 {
        let s = &self.urdf.skeleton;
        let mut pose = s.rest_pose();
        self.chain.set_q(s, q, &mut pose).expect("q fits");
        self.chain.tip_in_base(&model(s, &pose))
    }

    /// A joint vector uniform inside the limits: `rng.range(lower, upper)` per joint.
    pub fn random_q(&self, rng: &mut Rng) -> Vec<f64> {
        self.chain
            .lower()
            .iter()
            .zip(self.chain.upper())
            .map(|(&l, &u)| rng.range(l, u))
            .collect()
    }
}

/// The position and (normalised) rotation of a rigid `frame`.
pub fn pose_of(frame: &DAffine3) -> (DVec3, DQuat) {
    let (_, r, t) = frame.to_scale_rotation_translation();
    (t, r.normalize())
}

/// CMU units to metres: (1 / 0.45) inch.
pub const CMU_TO_METRES: f64 = 0.0254 / 0.45;

/// The CMU jump (`bvh/cmu_01_01_jump_cgspeed.bvh` of the shared data, 38 joints, no limits)
/// opened at `scale`; `None` without the shared data (see [`ikarus_testdata::require`]).
pub fn cmu_jump(test: &str, scale: f64) -> Option<ikarus_formats::Document> {
    let dir = ikarus_testdata::require("bvh", test)?;
    let path = dir.join("cmu_01_01_jump_cgspeed.bvh");
    Some(ikarus_formats::open(path.to_str().unwrap(), scale).unwrap())
}

/// Runs `case` `n` times, drawing from one `Rng(seed)`, and counts the runs that returned
/// `true` (the solves that converged).
pub fn count_converged(seed: u64, n: usize, mut case: impl FnMut(&mut Rng) -> bool) -> usize {
    let mut rng = Rng(seed);
    (0..n).filter(|_| case(&mut rng)).count()
}

/// The built-in humanoid's left hand with the right hand as base: the path runs from the left
/// hand over the chest to the right hand, which stays put while the root moves (the IK
/// overview's base joint). Returns the skeleton, the effector (left hand) and the base (right
/// hand).
pub fn humanoid_hand_to_hand() -> (Skeleton, JointId, JointId) {
    let s = ikarus_core::humanoid::builtin_humanoid();
    let [hand, base] = joint_array(&s, ["leftHand", "rightHand"]);
    (s, hand, base)
}

/// `count` position targets (model space) for `joint` drawn from `Rng(seed)`: its position
/// in the rest pose plus a uniform direction times a distance uniform in 5–25 cm. Some lie
/// out of reach of a limb.
pub fn reach_targets(skeleton: &Skeleton, joint: JointId, count: usize, seed: u64) -> Vec<DVec3> {
    let rest = model(skeleton, &skeleton.rest_pose()).position(joint);
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| rest + rng.direction() * rng.range(0.05, 0.25))
        .collect()
}

/// The weight contract the closed-form kernels share, for `with(weight)` solving one input:
/// weight 0 and `below` (< 0) give `identity`, `above` (> 1) gives what weight 1 gives.
/// Returns the output of weight 1.
pub fn assert_weight_clamped<O: PartialEq + std::fmt::Debug>(
    what: &str,
    with: impl Fn(f64) -> O,
    identity: &O,
    below: f64,
    above: f64,
) -> O {
    let full = with(1.0);
    assert_eq!(&with(0.0), identity, "{what}: weight 0");
    assert_eq!(&with(below), identity, "{what}: weight {below} < 0");
    assert_eq!(
        with(above),
        full,
        "{what}: weight {above} > 1 is clamped to 1"
    );
    full
}

/// Asserts that `twisted` is `plain` turned about `axis` by `twist` radians (modulo a turn),
/// both normal to `axis`.
pub fn assert_turned_by(plain: DVec3, twisted: DVec3, axis: DVec3, twist: f64, what: &str) {
    let turned = ikarus_testdata::assert::signed_angle(plain, twisted, axis);
    let off = ikarus_testdata::assert::wrap(turned - twist).abs();
    assert!(off < 1e-8, "{what}: twist {twist} turned it by {turned}");
}
