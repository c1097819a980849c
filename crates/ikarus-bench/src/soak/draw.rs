//! The soak's random cases: a skeleton, a task and a legal start pose, each drawn
//! deterministically from `(seed, task index)`.

use std::f64::consts::PI;

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::{
    EulerLimit, HingeLimit, JointId, JointLimit, LocalPose, MmdLimit, ModelPose, Skeleton,
    SkeletonBuilder, SwingTwistLimit, Transform, fk,
};
use ikarus_solve::{Effector, Goal, IkTask, Tolerance};
use ikarus_testdata::Rng;
use ikarus_testdata::limits::{EULER_ORDERS, LIMIT_KINDS};

/// The generator of task `index` of the run seeded `seed` (two splitmix rounds mix the pair, so
/// neighbouring indices and seeds give unrelated streams).
pub fn rng_for_task(seed: u64, index: u64) -> Rng {
    let mut rng = Rng(seed);
    let mixed = rng.next_u64() ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    Rng(mixed)
}

/// The soak's own geometric draws (not [`ikarus_testdata::Draw`]'s: another threshold and a
/// division, and the soak's cases depend on them).
pub trait SoakDraw {
    /// A uniformly distributed unit direction.
    fn direction(&mut self) -> DVec3;

    /// A rotation about a random axis by an angle uniform in `[-max_angle, max_angle]`.
    fn rotation(&mut self, max_angle: f64) -> DQuat;
}

impl SoakDraw for Rng {
    fn direction(&mut self) -> DVec3 {
        let (v, l) = self.in_ball_above(1e-4);
        v / l.sqrt()
    }

    fn rotation(&mut self, max_angle: f64) -> DQuat {
        let axis = self.direction();
        DQuat::from_axis_angle(axis, self.range(-max_angle, max_angle))
    }
}

/// What a case's goals were drawn as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalKind {
    /// Forward kinematics of a random legal pose of the path joints (reachable by
    /// construction; with a base, the root moved the way the driver moves it).
    Reachable,
    /// Positions three times the skeleton's reach away, random orientations.
    Unreachable,
    /// Each effector reachable or unreachable at random.
    Mixed,
    /// Reachable goals with one part corrupted (see [`Case::bad_input`]).
    Bad,
}

/// One soak case.
#[derive(Clone, Debug)]
pub struct Case {
    /// What the skeleton is, for reports (`chain 12 hinge`, `tree 40 mixed`, `leg6 rig`).
    pub shape: String,
    /// The skeleton.
    pub skeleton: Skeleton,
    /// The task.
    pub task: IkTask,
    /// A legal start pose (every joint projected onto its limit).
    pub start: LocalPose,
    /// How the goals were drawn.
    pub goals: GoalKind,
    /// The corruption applied for [`GoalKind::Bad`], e.g. `NaN position x`.
    pub bad_input: Option<&'static str>,
    /// True when the corruption makes the task invalid (every solver must say
    /// `invalid_input`); false for corruptions that stay valid (a goal 1e300 away).
    pub expect_invalid: bool,
}

/// The case of task `index` in the run seeded `seed`.
pub fn case(seed: u64, index: u64) -> Case {
    let mut rng = rng_for_task(seed, index);
    let roll = rng.unit();
    let (shape, skeleton, fit) = if roll < 0.08 {
        ("leg6 rig".to_owned(), leg_rig(&mut rng), true)
    } else if roll >= 0.92 {
        // The built-in humanoid, whose body bones the full-body solver drives.
        (
            "humanoid".to_owned(),
            ikarus_core::humanoid::builtin_humanoid(),
            false,
        )
    } else {
        // A quarter of the general skeletons get a task that fits the closed forms.
        let fit = roll < 0.3;
        let n = 2 + (59.0 * rng.unit().powi(3)) as usize;
        let tree = rng.chance(0.5);
        let kind = LIMIT_KINDS[rng.int(0, LIMIT_KINDS.len() - 1)];
        let skeleton = general(n, tree, kind, &mut rng);
        let shape = format!("{} {n} {kind}", if tree { "tree" } else { "chain" });
        (shape, skeleton, fit)
    };
    let start = if rng.chance(0.6) {
        legal_pose(&skeleton, &skeleton.rest_pose(), 0.0, &mut rng)
    } else {
        legal_pose(&skeleton, &skeleton.rest_pose(), 1.2, &mut rng)
    };
    let mut case = Case {
        shape,
        task: IkTask::default(),
        start,
        goals: GoalKind::Reachable,
        bad_input: None,
        expect_invalid: false,
        skeleton,
    };
    draw_task(&mut case, fit, &mut rng);
    case
}

/// The pose `from` with every non-root joint turned by a random rotation of up to
/// `max_angle` (none when 0) and projected onto its limit; the root keeps its transform.
fn legal_pose(skeleton: &Skeleton, from: &LocalPose, max_angle: f64, rng: &mut Rng) -> LocalPose {
    let mut pose = from.clone();
    for j in skeleton.joints() {
        if skeleton.parent(j).is_none() {
            continue;
        }
        let rest = skeleton.rest(j).rotation;
        let mut delta = rest.conjugate() * pose[j].rotation;
        if max_angle > 0.0 {
            delta = (delta * rng.rotation(max_angle)).normalize();
        }
        pose[j].rotation = (rest * skeleton.limit(j).project(delta)).normalize();
    }
    pose
}

/// The six parent transforms of the conformance suite, one at random, with a random extra
/// placement.
fn root_transform(rng: &mut Rng) -> Transform {
    let tilt = rng.rotation(PI);
    let (translation, rotation, scale) = match rng.int(0, 5) {
        0 => (DVec3::ZERO, DQuat::IDENTITY, DVec3::ONE),
        1 => (
            rng.direction() * rng.range(0.0, 5.0),
            DQuat::IDENTITY,
            DVec3::ONE,
        ),
        2 => (DVec3::ZERO, tilt, DVec3::ONE),
        3 => (DVec3::ZERO, tilt, DVec3::splat(rng.range(0.2, 4.0))),
        4 => (
            DVec3::ZERO,
            tilt,
            DVec3::new(
                rng.range(0.3, 2.5),
                rng.range(0.3, 2.5),
                rng.range(0.3, 2.5),
            ),
        ),
        _ => (DVec3::new(0.5, 0.0, 0.0), tilt, DVec3::new(-1.0, 1.0, 1.0)),
    };
    Transform {
        translation,
        rotation,
        scale,
    }
}

/// A chain (each joint the child of the previous one) or a tree (parents drawn among the
/// earlier joints, mostly the previous one) of `n` joints `j0 … j{n-1}`; `j0` is the free
/// root under a random parent transform.
fn general(n: usize, tree: bool, kind: &str, rng: &mut Rng) -> Skeleton {
    let mut builder = SkeletonBuilder::new();
    builder.joint("j0", None, root_transform(rng));
    for i in 1..n {
        let parent = if tree && i > 1 && rng.chance(0.4) {
            rng.int(0, i - 2)
        } else {
            i - 1
        };
        let length = match rng.unit() {
            u if u < 0.08 => 0.0,
            u if u < 0.1 => 1e-7,
            _ => rng.range(0.05, 0.3),
        };
        let direction = DVec3::new(
            rng.range(-1.0, 1.0),
            rng.range(0.2, 1.0),
            rng.range(-1.0, 1.0),
        );
        let scale = match rng.unit() {
            u if u < 0.04 => DVec3::splat(rng.range(0.5, 2.0)),
            u if u < 0.05 => DVec3::new(rng.range(0.5, 2.0), rng.range(0.5, 2.0), 1.0),
            _ => DVec3::ONE,
        };
        let rest = Transform {
            translation: direction.normalize() * length,
            rotation: {
                let angle = if rng.chance(0.1) { PI } else { 0.6 };
                rng.rotation(angle)
            },
            scale,
        };
        let limit = valid_or_free(limit(kind, i, rng));
        builder.limited_joint(&format!("j{i}"), Some(&format!("j{parent}")), rest, limit);
    }
    builder
        .build()
        .expect("soak skeletons are valid by construction")
}

fn valid_or_free(limit: JointLimit) -> JointLimit {
    if limit.validate().is_ok() {
        limit
    } else {
        JointLimit::Free
    }
}

/// A limit of family `kind` for joint `index` (the conformance suite's ranges, plus ranges
/// that exclude the rest rotation now and then, full-circle hinges and general MMD boxes).
fn limit(kind: &str, index: usize, rng: &mut Rng) -> JointLimit {
    let axis = rng.direction();
    let pair = |rng: &mut Rng, lo: f64, hi: f64| {
        let (a, b) = (rng.range(lo, hi), rng.range(lo, hi));
        (a.min(b), a.max(b))
    };
    match kind {
        "free" => JointLimit::Free,
        "locked" => ikarus_testdata::limits::locked_every_third(index),
        "hinge" => {
            let (min, max) = match rng.unit() {
                u if u < 0.1 => (-PI, PI),
                u if u < 0.2 => pair(rng, -PI, PI),
                _ => (rng.range(-2.5, 0.0), rng.range(0.2, 2.5)),
            };
            JointLimit::Hinge(HingeLimit { axis, min, max })
        }
        "swing_twist" => JointLimit::SwingTwist(SwingTwistLimit {
            twist_axis: axis,
            swing_axis: axis.any_orthonormal_vector(),
            swing_u: (rng.range(-1.2, 0.0), rng.range(0.0, 1.2)),
            swing_v: (rng.range(-1.2, 0.0), rng.range(0.0, 1.2)),
            twist: if rng.chance(0.1) {
                pair(rng, -PI, PI)
            } else {
                (rng.range(-1.0, 0.0), rng.range(0.0, 1.0))
            },
        }),
        "euler" => {
            let (mut min, mut max) = ([0.0; 3], [0.0; 3]);
            for i in 0..3 {
                (min[i], max[i]) = if rng.chance(0.1) {
                    pair(rng, -PI, PI)
                } else {
                    (rng.range(-2.0, 0.0), rng.range(0.0, 2.0))
                };
            }
            JointLimit::Euler(EulerLimit {
                order: EULER_ORDERS[rng.int(0, 5)],
                min,
                max,
            })
        }
        "mmd" => match rng.int(0, 2) {
            0 => JointLimit::Mmd(MmdLimit {
                min: DVec3::ZERO,
                max: DVec3::new(rng.range(1.0, PI), 0.0, 0.0),
            }),
            1 => JointLimit::Mmd(MmdLimit {
                min: DVec3::splat(-PI),
                max: DVec3::splat(PI),
            }),
            _ => {
                let (x, y, z) = (pair(rng, -PI, PI), pair(rng, -PI, PI), pair(rng, -PI, PI));
                JointLimit::Mmd(MmdLimit {
                    min: DVec3::new(x.0, y.0, z.0),
                    max: DVec3::new(x.1, y.1, z.1),
                })
            }
        },
        _ => {
            let kinds = ["free", "hinge", "swing_twist", "euler", "mmd", "locked"];
            limit(kinds[rng.int(0, kinds.len() - 1)], index, rng)
        }
    }
}

/// A +Y-up robot leg the `leg6` closed form accepts: a `pelvis` root (random parent
/// transform), hip yaw (Y), roll (Z) and pitch (X) hinges meeting at the hip, a knee and an
/// ankle pitch (X) and an ankle roll (Z), random link lengths and ranges around zero; a
/// second branch (`spine`) makes it a tree.
fn leg_rig(rng: &mut Rng) -> Skeleton {
    let mut builder = SkeletonBuilder::new();
    let mut pelvis = root_transform(rng);
    // The closed form needs unscaled leg joints; a uniform scale on the pelvis is allowed.
    if pelvis.scale.x != pelvis.scale.y || pelvis.scale.y != pelvis.scale.z {
        pelvis.scale = DVec3::ONE;
    }
    builder.joint("pelvis", None, pelvis);
    builder.limited_joint(
        "spine",
        Some("pelvis"),
        Transform::from_translation(DVec3::new(0.0, 0.2, 0.0)),
        JointLimit::Free,
    );
    let hip = DVec3::new(
        rng.range(0.05, 0.12),
        -rng.range(0.0, 0.1),
        rng.range(-0.02, 0.02),
    );
    let thigh = rng.range(0.2, 0.5);
    let shank = rng.range(0.2, 0.5);
    let joints = [
        ("hip_yaw", hip, DVec3::Y),
        ("hip_roll", DVec3::ZERO, DVec3::Z),
        ("hip_pitch", DVec3::ZERO, DVec3::X),
        ("knee", DVec3::new(0.0, -thigh, 0.0), DVec3::X),
        ("ankle_pitch", DVec3::new(0.0, -shank, 0.0), DVec3::X),
        ("ankle_roll", DVec3::ZERO, DVec3::Z),
    ];
    let mut parent = "pelvis";
    for (name, origin, axis) in joints {
        let (min, max) = if name == "knee" {
            (0.0, rng.range(1.5, 2.6))
        } else {
            (-rng.range(0.2, 1.5), rng.range(0.2, 1.5))
        };
        let axis = if rng.chance(0.2) { -axis } else { axis };
        builder.limited_joint(
            name,
            Some(parent),
            Transform::from_translation(origin),
            JointLimit::Hinge(HingeLimit { axis, min, max }),
        );
        parent = name;
    }
    builder.limited_joint(
        "toe",
        Some("ankle_roll"),
        Transform::from_translation(DVec3::new(0.0, -0.05, 0.12)),
        JointLimit::Free,
    );
    builder.build().expect("the leg rig is valid")
}

/// Fills `case.task`: effectors, base, goals, tolerance and perhaps one corruption.
#[allow(clippy::too_many_lines)] // one draw after another
/// The effectors of a task on `s`: one to six distinct body bones on a humanoid; one joint
/// with 2–5 ancestors (or the leg rig's ankle) when the task should `fit` the closed forms;
/// else one to four joints, mostly leaves.
fn draw_effectors(s: &Skeleton, fit: bool, rng: &mut Rng) -> Vec<JointId> {
    let joints: Vec<JointId> = s.joints().collect();
    let leaves: Vec<JointId> = joints
        .iter()
        .copied()
        .filter(|&j| s.children(j).next().is_none())
        .collect();
    let body = HumanoidBone::BODY_ENDS.map(|b| s.joint(b.vrm_name()));
    if body.iter().all(Option::is_some) {
        // One to six distinct body bones (the full-body solver's effectors).
        let mut bones: Vec<JointId> = body.iter().flatten().copied().collect();
        let count = rng.int(1, bones.len());
        for i in 0..count {
            let j = rng.int(i, bones.len() - 1);
            bones.swap(i, j);
        }
        bones.truncate(count);
        bones
    } else if fit {
        let fitting: Vec<JointId> = if s.joint("ankle_roll").is_some() && rng.chance(0.8) {
            vec![s.joint("ankle_roll").expect("the leg rig has an ankle")]
        } else {
            let found: Vec<JointId> = joints
                .iter()
                .copied()
                .filter(|&j| (2..=5).contains(&s.depth(j)))
                .collect();
            if found.is_empty() {
                vec![*joints.last().expect("non-empty")]
            } else {
                found
            }
        };
        vec![fitting[rng.int(0, fitting.len() - 1)]]
    } else {
        let count = match rng.unit() {
            u if u < 0.4 => 1,
            u if u < 0.7 => 2,
            u if u < 0.9 => 3,
            _ => 4,
        };
        (0..count)
            .map(|_| {
                if rng.chance(0.7) {
                    leaves[rng.int(0, leaves.len() - 1)]
                } else {
                    joints[rng.int(0, joints.len() - 1)]
                }
            })
            .collect()
    }
}

fn draw_task(case: &mut Case, fit: bool, rng: &mut Rng) {
    let s = &case.skeleton;
    let joints: Vec<JointId> = s.joints().collect();
    let humanoid = HumanoidBone::BODY_ENDS
        .iter()
        .all(|b| s.joint(b.vrm_name()).is_some());
    let effectors = draw_effectors(s, fit, rng);
    let base = if !fit && !humanoid && rng.chance(0.5) {
        Some(joints[rng.int(0, joints.len() - 1)])
    } else {
        None
    };
    case.goals = match rng.unit() {
        u if u < 0.55 => GoalKind::Reachable,
        u if u < 0.8 => GoalKind::Unreachable,
        u if u < 0.9 => GoalKind::Mixed,
        _ => GoalKind::Bad,
    };
    let target_pose = reachable_pose(s, &case.start, base, rng);
    let mut target_model = ModelPose::new(s);
    fk::forward_kinematics(s, &target_pose, &mut target_model);
    let mut start_model = ModelPose::new(s);
    fk::forward_kinematics(s, &case.start, &mut start_model);
    let reach = reach(s, &start_model) + 0.1;
    let centre = start_model.position(joints[0]);
    let weighted = rng.chance(0.1);
    let task_effectors = effectors
        .iter()
        .map(|&joint| {
            let reachable = match case.goals {
                GoalKind::Reachable | GoalKind::Bad => true,
                GoalKind::Unreachable => false,
                GoalKind::Mixed => rng.chance(0.5),
            };
            let (position, orientation) = if reachable {
                (target_model.position(joint), target_model.rotation(joint))
            } else {
                (centre + rng.direction() * reach * 3.0, rng.rotation(PI))
            };
            let goal = match rng.unit() {
                u if u < 0.5 || fit && u < 0.8 => Goal {
                    position: Some(position),
                    orientation: None,
                },
                u if u < 0.65 => Goal {
                    position: None,
                    orientation: Some(orientation),
                },
                _ => Goal {
                    position: Some(position),
                    orientation: Some(orientation),
                },
            };
            let weight = if weighted { rng.range(0.0, 3.0) } else { 1.0 };
            Effector {
                joint,
                goal,
                weight,
            }
        })
        .collect();
    let tolerance = if rng.chance(0.1) {
        Tolerance {
            position: 10f64.powf(rng.range(-6.0, -2.0)),
            rotation: 10f64.powf(rng.range(-5.0, -1.0)),
        }
    } else {
        Tolerance::default()
    };
    case.task = IkTask {
        effectors: task_effectors,
        base,
        tolerance,
    };
    if case.goals == GoalKind::Bad {
        corrupt(case, rng);
    }
}

/// A random legal pose reachable from `start` with `base` fixed: every non-root joint turned
/// at random (projected onto its limit) and, with a base, the root moved as the driver moves
/// it to bring the base back to its start transform.
fn reachable_pose(
    skeleton: &Skeleton,
    start: &LocalPose,
    base: Option<JointId>,
    rng: &mut Rng,
) -> LocalPose {
    let mut pose = legal_pose(skeleton, start, PI, rng);
    let Some(base) = base else {
        return pose;
    };
    let root = skeleton.path_to_root(base).last().unwrap_or(base);
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, start, &mut model);
    let (target, target_rotation) = (model[base], model.rotation(base));
    fk::forward_kinematics(skeleton, &pose, &mut model);
    let rotation = (target_rotation * model.rotation(base).conjugate()).normalize();
    let translation = target.translation - rotation * model.position(base);
    let root_local = &mut pose[root];
    root_local.rotation = (rotation * root_local.rotation).normalize();
    root_local.translation = rotation * root_local.translation + translation;
    pose
}

/// The sum of all bone lengths in `model`: no goal farther than this from the root is
/// reachable.
fn reach(skeleton: &Skeleton, model: &ModelPose) -> f64 {
    skeleton
        .joints()
        .filter_map(|j| {
            skeleton
                .parent(j)
                .map(|p| (model.position(j) - model.position(p)).length())
        })
        .sum()
}

/// Corrupts one part of the task: non-finite or huge goal components, zero or non-unit
/// quaternions, bad weights, tolerances or joints.
fn corrupt(case: &mut Case, rng: &mut Rng) {
    let task = &mut case.task;
    let i = rng.int(0, task.effectors.len() - 1);
    let e = &mut task.effectors[i];
    let axis = rng.int(0, 2);
    let position = e.goal.position.unwrap_or(DVec3::ZERO);
    let (what, invalid) = match rng.int(0, 10) {
        0 => {
            let mut p = position;
            p[axis] = f64::NAN;
            e.goal.position = Some(p);
            ("NaN position component", true)
        }
        1 => {
            let mut p = position;
            p[axis] = if rng.chance(0.5) {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
            e.goal.position = Some(p);
            ("infinite position component", true)
        }
        2 => {
            e.goal.orientation = Some(DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0));
            ("zero quaternion", true)
        }
        3 => {
            let q = e.goal.orientation.unwrap_or(DQuat::IDENTITY);
            e.goal.orientation = Some(DQuat::from_vec4(q.to_array().map(|c| c * 2.0).into()));
            ("non-unit quaternion", true)
        }
        4 => {
            let mut q = e.goal.orientation.unwrap_or(DQuat::IDENTITY).to_array();
            q[axis] = f64::NAN;
            e.goal.orientation = Some(DQuat::from_array(q));
            ("NaN quaternion component", true)
        }
        5 => {
            let mut p = position;
            p[axis] = if rng.chance(0.5) { 1e300 } else { -1e300 };
            e.goal.position = Some(p);
            ("position component 1e300", false)
        }
        6 => {
            e.goal.position = Some(position + rng.direction() * 1e12);
            ("position 1e12 away", false)
        }
        7 => {
            e.weight = if rng.chance(0.5) { -1.0 } else { f64::NAN };
            ("negative or NaN weight", true)
        }
        8 => {
            // Above `MAX_WEIGHT` (refused), or a large weight still accepted.
            if rng.chance(0.5) {
                e.weight = 1e300;
                ("weight 1e300", true)
            } else {
                e.weight = ikarus_solve::MAX_WEIGHT;
                ("weight at MAX_WEIGHT", false)
            }
        }
        9 => {
            task.tolerance.position = if rng.chance(0.5) { f64::NAN } else { -1e-4 };
            ("NaN or negative tolerance", true)
        }
        _ => {
            e.joint = JointId::from_index(case.skeleton.len() + rng.int(0, 3));
            ("unknown joint", true)
        }
    };
    case.bad_input = Some(what);
    case.expect_invalid = invalid;
}
