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
use ikarus_core::{LocalPose, ModelPose, Skeleton};
use pulp::{Simd, WithSimd, bytemuck};

use super::simd::{FIELDS, RESULTS, kernel};
use super::{DEGENERATE, TwoBoneTask};
use crate::analytic::crowd::{Batch, ChainLanes, SOLVED, SolvedChain, write_back};
use crate::linalg::lanes::{Lanes, Quat, Vec3};
use crate::{Goal, IkTask};

/// What the lane path needs of a prepared two-bone task, compiled once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TwoBoneLanes {
    /// The chain.
    chain: ChainLanes,
    /// The hinge axis, mid joint's rest frame.
    mid_axis: DVec3,
    /// `sin_cos` of the twist angle, when not 0.
    twist: Option<(f64, f64)>,
}

impl TwoBoneLanes {
    /// The lane path for `task`, when its shape has one: a hinge axis that does not depend on
    /// the pose, the bend plane kept (no pole, no hint), no softening or blending, and a
    /// chain the lanes take ([`ChainLanes::new`]).
    pub(crate) fn new(engine: &TwoBoneTask, skeleton: &Skeleton, task: &IkTask) -> Option<Self> {
        let config = &engine.config;
        if config.pole.is_some()
            || config.hint.is_some()
            || config.soften < 1.0
            || config.weight < 1.0
            || !config.twist_angle.is_finite()
        {
            return None;
        }
        let path = &engine.path[engine.chain_from..];
        Some(Self {
            chain: ChainLanes::new(skeleton, task, engine.joints, path)?,
            mid_axis: engine.chain?.mid_axis,
            twist: (config.twist_angle != 0.0).then(|| config.twist_angle.sin_cos()),
        })
    }
}

/// Values gathered per character: the parent's model rotation (4), the three local rotations
/// (12), the start's model position (3), the mid's and end's local translations (6), the
/// target (3), the orientation goal (4) and whether there is one (1).
const GATHERED: usize = 33;

/// The batch in lanes: see the [module docs](self).
impl WithSimd for Batch<'_, TwoBoneTask, TwoBoneLanes> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(mut self, simd: S) {
        let width = S::F64_LANES;
        let count = self.poses.len();
        let shape = (self.lanes.chain.joints, self.skeleton, self.task.tolerance);
        let mut gathered = [simd.splat_f64s(0.0); GATHERED];
        let mut computed = [simd.splat_f64s(0.0); SOLVED];
        let mut first = 0;
        while first + width <= count {
            let mut skip = 0_u64;
            for lane in 0..width {
                let i = first + lane;
                let at = (&self.goals[i], &self.poses[i], &self.models[i]);
                if !gather::<S>(self.lanes, at, lane, &mut gathered) {
                    skip |= 1 << lane;
                }
            }
            let leave = compute(simd, self.lanes, &gathered, &mut computed) | skip;
            for lane in 0..width {
                let i = first + lane;
                if leave & (1 << lane) == 0 {
                    let at = (
                        computed.as_slice(),
                        lane,
                        self.goals[i].orientation.is_some(),
                    );
                    let (pose, model) = (&mut self.poses[i], &mut self.models[i]);
                    self.reports[i] = write_back::<S>(shape, at, pose, model);
                } else {
                    self.scalar(i);
                }
            }
            first += width;
        }
        for i in first..count {
            self.scalar(i);
        }
    }
}

/// Character `lane`'s values into lane `lane` of `gathered`; false when the character must
/// take the scalar path.
#[inline(always)]
fn gather<S: Simd>(
    lanes: &TwoBoneLanes,
    (goal, pose, model): (&Goal, &LocalPose, &ModelPose),
    lane: usize,
    gathered: &mut [S::f64s; GATHERED],
) -> bool {
    let [start, mid, end] = lanes.chain.joints;
    let Some(target) = goal.position else {
        return false;
    };
    if goal.validate(String::new).is_err()
        || !model.is_rigid(lanes.chain.parent)
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
        model.rotation(lanes.chain.parent),
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

/// The scalar path on every lane; the lanes that must leave for it, one bit each.
///
/// Kept as one function of over 100 lines: one straight-line computation on SIMD lanes; split, the
/// lanes would be stored and loaded between the pieces.
#[allow(clippy::too_many_lines)] // one straight-line computation, as `TwoBoneTask::solve`
#[inline(always)]
fn compute<S: Simd>(
    simd: S,
    lanes: &TwoBoneLanes,
    gathered: &[S::f64s; GATHERED],
    computed: &mut [S::f64s; SOLVED],
) -> u64 {
    let zero = Lanes::splat(simd, 0.0);
    let parent = Quat::load(simd, gathered, 0);
    let local = [
        Quat::load(simd, gathered, 4),
        Quat::load(simd, gathered, 8),
        Quat::load(simd, gathered, 12),
    ];
    let orientation = Quat::load(simd, gathered, 16);
    let start_at = Vec3::load(simd, gathered, 20);
    let mid_local = Vec3::load(simd, gathered, 23);
    let end_local = Vec3::load(simd, gathered, 26);
    let target = Vec3::load(simd, gathered, 29);
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
    let rest_to_current = local[1]
        .conjugate()
        .mul(Quat::splat(simd, lanes.chain.rest[1]));
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
    let start_correction = Quat::load(simd, &output, 0);
    let mid_correction = Quat::load(simd, &output, 4);

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
        let delta = Quat::splat(simd, lanes.chain.rest[joint])
            .conjugate()
            .mul(locals[joint]);
        keep =
            keep & locals[joint].is_finite() & lanes.chain.tests[joint].clearly_inside(simd, delta);
        joint += 1;
    }
    keep = keep & end_at.is_finite() & end_rotation.is_finite();

    // The residuals, as `residuals` measures them (the angle's `atan2` per character later).
    SolvedChain {
        locals,
        rotations: [start_rotation, mid_rotation, end_rotation],
        mid_at,
        end_at,
        reached: !Lanes::new(simd, output[8]).eq(zero),
        position_error: (end_at - target).length(),
        difference: end_rotation.conjugate().mul(orientation).normalize(),
    }
    .store(computed);
    (!keep).bits() | kernel_leaves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::crowd::tests::{
        Run, SPECIAL, check_frames, crowd, on_every_instruction_set,
    };
    use ikarus_core::JointId;

    /// Hip and ankle turned a little about a random axis, the knee bent (a leg in motion; a
    /// straight knee has no bend plane to keep and takes the scalar path).
    fn leg(
        skeleton: &Skeleton,
        limb: [JointId; 3],
        pose: &mut LocalPose,
        next: &mut dyn FnMut() -> f64,
    ) {
        for (k, j) in limb.into_iter().enumerate() {
            let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::X);
            let turn = if k == 1 {
                DQuat::from_rotation_x(0.8 + 0.5 * next())
            } else {
                DQuat::from_axis_angle(axis, 0.3 * next())
            };
            pose[j].rotation = skeleton.rest(j).rotation * skeleton.limit(j).project(turn);
        }
    }

    /// The batch of this module against `solve_in` on a crowd.
    struct Legs;

    impl Run for Legs {
        fn run<S: Simd>(&self, simd: S, seed: u64) {
            let crowd = crowd(seed, ["leftUpperLeg", "leftLowerLeg", "leftFoot"], leg);
            let width = S::F64_LANES;
            let remainder = crowd.1.len() % width;
            let make = |skeleton: &Skeleton, shape: &IkTask| {
                let config = super::super::TwoBoneConfig::default();
                let engine = TwoBoneTask::new(skeleton, shape, &config).unwrap();
                let lanes = TwoBoneLanes::new(&engine, skeleton, shape).expect("leg lanes");
                (engine, lanes)
            };
            // The lanes solve every ordinary character: the scalar path takes the special ones,
            // those whose ankle the solve leaves on or past a limit (the hip and knee differ from
            // the goal pose's) and the remainder after the last whole chunk.
            let bound = |_frame: usize| SPECIAL + remainder + 6;
            check_frames(
                simd,
                crowd,
                ("leftFoot", r#"{"kind": "two_bone"}"#),
                make,
                bound,
            );
        }
    }

    #[test]
    fn every_character_gets_the_bits_of_solve_in_on_every_instruction_set() {
        on_every_instruction_set(&Legs);
    }
}
