//! A prepared two-bone task solved for many characters at once
//! ([`PreparedTask::solve_many_in`](crate::PreparedTask::solve_many_in)): the same limb of
//! every character, as many at a time as the dispatched instruction set holds (4 with AVX2, 8
//! with AVX-512).
//!
//! Per chunk of lanes: each character's chain is read from its pose and model pose
//! (the parent's model rotation, the start joint's position, the three local rotations and
//! the two bones' translations; the chain's model frames are recomputed from them in lanes,
//! by the forward kinematics' own operations); the closed form runs in lanes
//! ([`simd::kernel`](super::simd)); the corrections are applied, the chain put through forward
//! kinematics, the end given its orientation goal, the limits given their cheap inside test
//! and the residual measured — all in lanes, by the operations of the scalar path
//! ([`TwoBoneTask::solve`](super::TwoBoneTask)) in its order, so each lane has its bits. The
//! results are written back per character, and the rest of the chain's subtree (toes, fingers)
//! is brought along by scalar forward kinematics.
//!
//! A lane leaves the lanes for the scalar path — solved there from its untouched pose — when
//! its goal is invalid, a joint of its chain is scaled or non-rigid, its chain is straight (no
//! bend plane to keep), the closed form needs a special case, or a limit's cheap test does not
//! call the new rotation inside (the exact test and, if needed, the projection then decide).

#![allow(clippy::inline_always)] // the lane code must be compiled inside the dispatched function

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton};
use pulp::{Simd, WithSimd, bytemuck};

use super::simd::{FIELDS, RESULTS, kernel};
use super::{DEGENERATE, TwoBoneTask};
use crate::lanes::{InsideTest, Lanes, Quat, Vec3};
use crate::{Goal, IkTask, SolveReport, SolveStatus, Tolerance, analytic};

/// What the lane path needs of a prepared two-bone task, compiled once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TwoBoneLanes {
    /// The start joint's parent.
    parent: JointId,
    /// Start, mid, end.
    joints: [JointId; 3],
    /// Their rest rotations.
    rest: [DQuat; 3],
    /// Their limits' cheap inside tests.
    tests: [InsideTest; 3],
    /// The hinge axis, mid joint's rest frame.
    mid_axis: DVec3,
    /// `sin_cos` of the twist angle, when not 0.
    twist: Option<(f64, f64)>,
}

impl TwoBoneLanes {
    /// The lane path for `task`, when its shape has one: a hinge axis that does not depend on
    /// the pose, the bend plane kept (no pole, no hint), no softening or blending, a positive
    /// weight, a start joint with a parent, and limits the lanes can test (free, hinge,
    /// swing–twist).
    pub(crate) fn new(engine: &TwoBoneTask, skeleton: &Skeleton, task: &IkTask) -> Option<Self> {
        let config = &engine.config;
        let chain = engine.chain?;
        let [start, mid, end] = engine.joints;
        if config.pole.is_some()
            || config.hint.is_some()
            || config.soften < 1.0
            || config.weight < 1.0
            || !config.twist_angle.is_finite()
            || task.effectors[0].weight <= 0.0
            || engine.path[engine.chain_from..] != engine.joints
        {
            return None;
        }
        let tests = [start, mid, end].map(|j| InsideTest::new(skeleton.limit(j)));
        let [Some(a), Some(b), Some(c)] = tests else {
            return None;
        };
        Some(Self {
            parent: skeleton.parent(start)?,
            joints: engine.joints,
            rest: engine.joints.map(|j| skeleton.rest(j).rotation),
            tests: [a, b, c],
            mid_axis: chain.mid_axis,
            twist: (config.twist_angle != 0.0).then(|| config.twist_angle.sin_cos()),
        })
    }
}

/// Values gathered per character: the parent's model rotation (4), the three local rotations
/// (12), the start's model position (3), the mid's and end's local translations (6), the
/// target (3), the orientation goal (4) and whether there is one (1).
const GATHERED: usize = 33;

/// Values computed per character: three local and three model rotations (24), the mid's and
/// end's model positions (6), `reached` (1), the position error (1), and the rotation error's
/// `|xyz|` and `|w|` (2).
const COMPUTED: usize = 34;

/// Solves the task on every character: `goals[i]` on `poses[i]` with `models[i]` its forward
/// kinematics, into `reports[i]`. `fallback(i, pose, model)` solves one character by the
/// scalar path.
#[allow(clippy::too_many_arguments)] // the batch's slices, as `solve_many_in` takes them
pub(crate) fn solve_many(
    lanes: &TwoBoneLanes,
    skeleton: &Skeleton,
    tolerance: Tolerance,
    goals: &[Goal],
    poses: &mut [LocalPose],
    models: &mut [ModelPose],
    reports: &mut [SolveReport],
    fallback: &mut dyn FnMut(usize, &mut LocalPose, &mut ModelPose) -> SolveReport,
) {
    pulp::Arch::new().dispatch(Many {
        lanes,
        skeleton,
        tolerance,
        goals,
        poses,
        models,
        reports,
        fallback,
    });
}

/// The batch as a [`WithSimd`] operation.
struct Many<'a, 'f> {
    lanes: &'a TwoBoneLanes,
    skeleton: &'a Skeleton,
    tolerance: Tolerance,
    goals: &'a [Goal],
    poses: &'a mut [LocalPose],
    models: &'a mut [ModelPose],
    reports: &'a mut [SolveReport],
    fallback: &'f mut dyn FnMut(usize, &mut LocalPose, &mut ModelPose) -> SolveReport,
}

impl WithSimd for Many<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let width = S::F64_LANES;
        let count = self.poses.len();
        let mut gathered = [simd.splat_f64s(0.0); GATHERED];
        let mut computed = [simd.splat_f64s(0.0); COMPUTED];
        let mut first = 0;
        while first + width <= count {
            let mut skip = 0_u64;
            for lane in 0..width {
                let i = first + lane;
                if !gather::<S>(
                    self.lanes,
                    &self.goals[i],
                    &self.poses[i],
                    &self.models[i],
                    lane,
                    &mut gathered,
                ) {
                    skip |= 1 << lane;
                }
            }
            let leave = compute(simd, self.lanes, &gathered, &mut computed) | skip;
            for lane in 0..width {
                let i = first + lane;
                let (pose, model) = (&mut self.poses[i], &mut self.models[i]);
                self.reports[i] = if leave & (1 << lane) == 0 {
                    let orientation = self.goals[i].orientation.is_some();
                    let at = (&computed, lane, orientation);
                    scatter::<S>(self.lanes, self.skeleton, self.tolerance, at, pose, model)
                } else {
                    (self.fallback)(i, pose, model)
                };
            }
            first += width;
        }
        for i in first..count {
            self.reports[i] = (self.fallback)(i, &mut self.poses[i], &mut self.models[i]);
        }
    }
}

/// Character `lane`'s values into lane `lane` of `gathered`; false when the character must
/// take the scalar path.
#[inline(always)]
fn gather<S: Simd>(
    lanes: &TwoBoneLanes,
    goal: &Goal,
    pose: &LocalPose,
    model: &ModelPose,
    lane: usize,
    gathered: &mut [S::f64s; GATHERED],
) -> bool {
    let [start, mid, end] = lanes.joints;
    let Some(target) = goal.position else {
        return false;
    };
    if goal.validate(String::new).is_err()
        || !model.is_rigid(lanes.parent)
        || pose[start].scale != DVec3::ONE
        || pose[mid].scale != DVec3::ONE
        || pose[end].scale != DVec3::ONE
    {
        return false;
    }
    let width = S::F64_LANES;
    let flat: &mut [f64] = bytemuck::cast_slice_mut(gathered.as_mut_slice());
    let orientation = goal.orientation.unwrap_or(DQuat::IDENTITY);
    let quats = [
        model.rotation(lanes.parent),
        pose[start].rotation,
        pose[mid].rotation,
        pose[end].rotation,
        orientation,
    ];
    for (index, q) in quats.iter().enumerate() {
        for (k, value) in q.to_array().into_iter().enumerate() {
            flat[(4 * index + k) * width + lane] = value;
        }
    }
    let vectors = [
        model.position(start),
        pose[mid].translation,
        pose[end].translation,
        target,
    ];
    for (index, v) in vectors.iter().enumerate() {
        for (k, value) in v.to_array().into_iter().enumerate() {
            flat[(20 + 3 * index + k) * width + lane] = value;
        }
    }
    flat[32 * width + lane] = if goal.orientation.is_some() { 1.0 } else { 0.0 };
    true
}

/// Quaternion `index` (of the five gathered first).
#[inline(always)]
fn quat<S: Simd>(simd: S, values: &[S::f64s], index: usize) -> Quat<S> {
    Quat::new(
        Lanes::new(simd, values[4 * index]),
        Lanes::new(simd, values[4 * index + 1]),
        Lanes::new(simd, values[4 * index + 2]),
        Lanes::new(simd, values[4 * index + 3]),
    )
}

/// The 3-vector at `offset`.
#[inline(always)]
fn vec3<S: Simd>(simd: S, values: &[S::f64s], offset: usize) -> Vec3<S> {
    Vec3::new(
        Lanes::new(simd, values[offset]),
        Lanes::new(simd, values[offset + 1]),
        Lanes::new(simd, values[offset + 2]),
    )
}

/// The scalar path on every lane; the lanes that must leave for it, one bit each.
#[allow(clippy::too_many_lines)] // one straight-line computation, as `TwoBoneTask::solve`
#[inline(always)]
fn compute<S: Simd>(
    simd: S,
    lanes: &TwoBoneLanes,
    gathered: &[S::f64s; GATHERED],
    computed: &mut [S::f64s; COMPUTED],
) -> u64 {
    let zero = Lanes::splat(simd, 0.0);
    let parent = quat(simd, gathered, 0);
    let local = [
        quat(simd, gathered, 1),
        quat(simd, gathered, 2),
        quat(simd, gathered, 3),
    ];
    let orientation = quat(simd, gathered, 4);
    let start_at = vec3(simd, gathered, 20);
    let mid_local = vec3(simd, gathered, 23);
    let end_local = vec3(simd, gathered, 26);
    let target = vec3(simd, gathered, 29);
    let has_orientation = !Lanes::new(simd, gathered[32]).eq(zero);

    // The chain's model frames, as forward kinematics computed them.
    let start_rotation = parent.mul(local[0]);
    let start_matrix = start_rotation.to_mat3();
    let mid_rotation = start_rotation.mul(local[1]);
    let mid_matrix = mid_rotation.to_mat3();
    let mid_at = start_matrix.transform_point(mid_local, start_at);
    let end_at = mid_matrix.transform_point(end_local, mid_at);

    // `recover_pole`: the bend plane kept.
    let line = end_at - start_at;
    let to_mid = mid_at - start_at;
    let line2 = line.length_squared();
    let mid2 = to_mid.length_squared();
    let normal = to_mid - line.scale(line.dot(to_mid) / line2);
    let normal2 = normal.length_squared();
    let mut keep =
        line2.is_normal() & mid2.is_normal() & normal2.gt(Lanes::splat(simd, DEGENERATE) * mid2);
    let length = normal2.sqrt();
    let pole = Vec3::new(normal.x / length, normal.y / length, normal.z / length);
    // The hinge axis carried into the mid joint's current frame (`TwoBoneChain::input`).
    let rest_to_current = local[1].conjugate().mul(Quat::splat(simd, lanes.rest[1]));
    let axis = rest_to_current.rotate(Vec3::splat(simd, lanes.mid_axis));

    let mut input = [simd.splat_f64s(0.0); FIELDS];
    let columns = [
        start_matrix.x_axis,
        start_matrix.y_axis,
        start_matrix.z_axis,
        start_at,
        mid_matrix.x_axis,
        mid_matrix.y_axis,
        mid_matrix.z_axis,
        mid_at,
        end_at,
        target,
        pole,
        axis,
    ];
    let mut index = 0;
    while index < columns.len() {
        input[3 * index] = columns[index].x.value();
        input[3 * index + 1] = columns[index].y.value();
        input[3 * index + 2] = columns[index].z.value();
        index += 1;
    }
    let mut output = [simd.splat_f64s(0.0); RESULTS];
    let kernel_leaves = kernel(simd, &input, lanes.twist, &mut output);
    let start_correction = quat(simd, &output, 0);
    let mid_correction = quat(simd, &output, 1);

    // `TwoBoneOutput::apply_to`, then forward kinematics of the chain with the end's goal.
    let start_local = local[0].mul(start_correction).normalize();
    let mid_local_rotation = local[1].mul(mid_correction).normalize();
    let start_rotation = parent.mul(start_local);
    let mid_rotation = start_rotation.mul(mid_local_rotation);
    let mid_at = start_rotation
        .to_mat3()
        .transform_point(mid_local, start_at);
    let end_local_rotation = Quat::select(
        has_orientation,
        mid_rotation.conjugate().mul(orientation).normalize(),
        local[2],
    );
    let end_rotation = mid_rotation.mul(end_local_rotation);
    let end_at = mid_rotation.to_mat3().transform_point(end_local, mid_at);
    let locals = [start_local, mid_local_rotation, end_local_rotation];

    // The limits' cheap test on the new local rotations (`finish_in`'s `contains`).
    let mut joint = 0;
    while joint < 3 {
        let delta = Quat::splat(simd, lanes.rest[joint])
            .conjugate()
            .mul(locals[joint]);
        keep = keep & locals[joint].is_finite() & lanes.tests[joint].clearly_inside(simd, delta);
        joint += 1;
    }
    keep = keep & end_at.is_finite() & end_rotation.is_finite();

    // The residuals, as `residuals` measures them (the angle's `atan2` per character later).
    let position_error = (end_at - target).length();
    let d = end_rotation.conjugate().mul(orientation).normalize();
    let values = [
        start_local,
        mid_local_rotation,
        end_local_rotation,
        start_rotation,
        mid_rotation,
        end_rotation,
    ];
    let mut q = 0;
    while q < values.len() {
        computed[4 * q] = values[q].x.value();
        computed[4 * q + 1] = values[q].y.value();
        computed[4 * q + 2] = values[q].z.value();
        computed[4 * q + 3] = values[q].w.value();
        q += 1;
    }
    let rest = [
        mid_at.x,
        mid_at.y,
        mid_at.z,
        end_at.x,
        end_at.y,
        end_at.z,
        Lanes::new(simd, output[8]),
        position_error,
        d.xyz().length(),
        d.w.abs(),
    ];
    let mut k = 0;
    while k < rest.len() {
        computed[24 + k] = rest[k].value();
        k += 1;
    }
    (!keep).bits() | kernel_leaves
}

/// Lane `lane`'s results into the character's pose, model pose and report.
#[inline(always)]
fn scatter<S: Simd>(
    lanes: &TwoBoneLanes,
    skeleton: &Skeleton,
    tolerance: Tolerance,
    (computed, lane, orientation): (&[S::f64s; COMPUTED], usize, bool),
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> SolveReport {
    let width = S::F64_LANES;
    let flat: &[f64] = bytemuck::cast_slice(computed.as_slice());
    let value = |field: usize| flat[field * width + lane];
    let quat = |index: usize| {
        DQuat::from_xyzw(
            value(4 * index),
            value(4 * index + 1),
            value(4 * index + 2),
            value(4 * index + 3),
        )
    };
    let [start, mid, end] = lanes.joints;
    for (index, joint) in lanes.joints.into_iter().enumerate() {
        pose[joint].rotation = quat(index);
    }
    let start_at = model.position(start);
    model.set_rigid(start, quat(3), start_at);
    model.set_rigid(mid, quat(4), DVec3::new(value(24), value(25), value(26)));
    model.set_rigid(end, quat(5), DVec3::new(value(27), value(28), value(29)));
    analytic::update_around_chain(skeleton, pose, model, &lanes.joints);
    let reached = value(30) != 0.0;
    let rotation_error = if orientation {
        2.0 * value(32).atan2(value(33))
    } else {
        0.0
    };
    let mut report = SolveReport::from_tolerance(tolerance, value(31), rotation_error, 1, false);
    if !report.converged() && !reached {
        report.status = SolveStatus::Unreachable;
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Xorshift;
    use crate::{Effector, PreparedTask, SolverConfig};
    use ikarus_core::fk;
    use ikarus_core::humanoid::builtin_humanoid;

    /// A crowd of built-in humanoids (61: not a whole number of chunks) in random legal leg
    /// poses, and per character a goal for its left foot: mostly the FK of another legal leg
    /// pose (reachable, inside the limits), some without an orientation, some far out of
    /// reach, some twisted past the ankle's limits, one not finite; a few characters have a
    /// scaled thigh.
    fn crowd(seed: u64) -> (Skeleton, Vec<LocalPose>, Vec<Goal>) {
        let skeleton = builtin_humanoid();
        let mut rng = Xorshift(seed);
        let mut next = || rng.signed();
        let joints = ["hips", "leftUpperLeg", "leftLowerLeg", "leftFoot"]
            .map(|name| skeleton.joint(name).unwrap());
        let [hips, thigh, knee, foot] = joints;
        let mut model = ModelPose::new(&skeleton);
        // Hip and ankle turned a little about a random axis, the knee bent (a leg in
        // motion; a straight knee has no bend plane to keep and takes the scalar path).
        let legal = |pose: &mut LocalPose, next: &mut dyn FnMut() -> f64| {
            for j in [thigh, knee, foot] {
                let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::X);
                let turn = if j == knee {
                    DQuat::from_rotation_x(0.8 + 0.5 * next())
                } else {
                    DQuat::from_axis_angle(axis, 0.3 * next())
                };
                pose[j].rotation = skeleton.rest(j).rotation * skeleton.limit(j).project(turn);
            }
        };
        let mut poses = Vec::new();
        let mut goals = Vec::new();
        for c in 0..61 {
            let mut pose = skeleton.rest_pose();
            pose[hips].translation = DVec3::new(next() * 5.0, 0.9 + 0.1 * next(), next() * 5.0);
            pose[hips].rotation = DQuat::from_rotation_y(3.0 * next());
            legal(&mut pose, &mut next);
            let mut source = pose.clone();
            legal(&mut source, &mut next);
            fk::forward_kinematics(&skeleton, &source, &mut model);
            let mut goal = Goal {
                position: Some(model.position(foot)),
                orientation: Some(model.rotation(foot)),
            };
            match c % 13 {
                3 => goal.orientation = None,
                5 => goal.position = Some(model.position(foot) + DVec3::new(0.0, -2.0, 0.0)),
                7 => {
                    goal.orientation =
                        Some(model.rotation(foot) * DQuat::from_rotation_y(1.5 + next()));
                }
                11 if c == 11 => goal.position = Some(DVec3::new(f64::NAN, 0.0, 0.0)),
                12 => pose[thigh].scale = DVec3::new(1.0, 1.2, 1.0),
                _ => {}
            }
            poses.push(pose);
            goals.push(goal);
        }
        (skeleton, poses, goals)
    }

    fn run<S: Simd>(simd: S, seed: u64) {
        let (skeleton, mut poses, goals) = crowd(seed);
        let foot = skeleton.joint("leftFoot").unwrap();
        let shape = IkTask {
            effectors: vec![Effector {
                joint: foot,
                goal: goals[0],
                weight: 1.0,
            }],
            ..IkTask::default()
        };
        let config: SolverConfig = serde_json::from_str(r#"{"kind": "two_bone"}"#).unwrap();
        let mut scalar = PreparedTask::new(&skeleton, &shape, &config).unwrap();
        let engine = TwoBoneTask::new(
            &skeleton,
            &shape,
            &crate::two_bone::TwoBoneConfig::default(),
        )
        .unwrap();
        let lanes = TwoBoneLanes::new(&engine, &skeleton, &shape).expect("the leg has lanes");
        let mut models: Vec<ModelPose> = poses
            .iter()
            .map(|pose| {
                let mut model = ModelPose::new(&skeleton);
                fk::forward_kinematics(&skeleton, pose, &mut model);
                model
            })
            .collect();
        // Three frames, each from the poses the last one left.
        for frame in 0..3 {
            let mut expected_poses = poses.clone();
            let mut expected_models = models.clone();
            let expected: Vec<SolveReport> = expected_poses
                .iter_mut()
                .zip(&mut expected_models)
                .zip(&goals)
                .map(|((pose, model), goal)| {
                    *scalar.goal_mut(0) = *goal;
                    scalar.solve_in(pose, model)
                })
                .collect();
            let mut reports = vec![SolveReport::invalid(String::new()); poses.len()];
            let mut scalar_solves = 0;
            let mut fallback = |i: usize, pose: &mut LocalPose, model: &mut ModelPose| {
                scalar_solves += 1;
                *scalar.goal_mut(0) = goals[i];
                scalar.solve_in(pose, model)
            };
            simd.vectorize(Many {
                lanes: &lanes,
                skeleton: &skeleton,
                tolerance: shape.tolerance,
                goals: &goals,
                poses: &mut poses,
                models: &mut models,
                reports: &mut reports,
                fallback: &mut fallback,
            });
            for i in 0..poses.len() {
                let at = format!("{simd:?} seed {seed} frame {frame} character {i}");
                assert_eq!(reports[i], expected[i], "{at}");
                assert_eq!(poses[i], expected_poses[i], "{at}");
                assert_eq!(models[i], expected_models[i], "{at}");
            }
            // Not vacuous: the lanes solved most characters. The scalar path took the
            // special ones (a third: out of reach with the knee straight on its bound, an
            // ankle to project, not finite, scaled) and the remainder after the last chunk.
            let width = S::F64_LANES;
            let remainder = poses.len() % width;
            assert!(
                scalar_solves <= remainder + poses.len() / 2,
                "{simd:?} frame {frame}: {scalar_solves} of {} by the scalar path",
                poses.len()
            );
            let converged = reports.iter().filter(|r| r.converged()).count();
            assert!(converged >= poses.len() / 2, "{converged}");
        }
    }

    #[test]
    fn every_character_gets_the_bits_of_solve_in_on_every_instruction_set() {
        for seed in [1, 2, 3] {
            run(pulp::Scalar::new(), seed);
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(simd) = pulp::x86::V3::try_new() {
                    run(simd, seed);
                }
                if let Some(simd) = pulp::x86::V4::try_new() {
                    run(simd, seed);
                }
            }
        }
    }
}
