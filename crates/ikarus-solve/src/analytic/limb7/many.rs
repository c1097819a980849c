//! A prepared limb7 task solved for many characters at once
//! ([`PreparedTask::solve_many_in`](crate::PreparedTask::solve_many_in)): the same arm of every
//! character, as many at a time as the dispatched instruction set holds (4 with AVX2, 8 with
//! AVX-512), for the default `keep_current` swivel.
//!
//! Per chunk of lanes: each character's chain is read from its pose and model pose (the
//! parent's model frame, the shoulder's and wrist's local rotations, the bones'
//! translations, the goal); the elbow's current angle and its hinge rotation are taken per
//! character by the library (`atan2`, `DQuat::from_axis_angle`), as the scalar path takes
//! them. Then, in lanes and by the scalar path's operations in its order (so each lane has its
//! bits): the goal in the limb's frame, the current swivel ([`Limb7::swivel_from_pose`], with
//! the crate's `atan2` in lanes), the closed form at that swivel (the elbow's branch picked as
//! `elbow_angle_for` picks it), the wrist's rotation for the orientation goal, the three
//! limits' cheap inside test, the chain's forward kinematics and the residual. The results are written back per character, the rest of the chain's subtree
//! brought along by scalar forward kinematics.
//!
//! A lane leaves the lanes for the scalar path — solved there from its untouched pose — when
//! its goal is invalid, its bones differ from the limb the task keeps, a joint is scaled, the
//! target is out of the elbow's reach, the limb is straight or meets another special case, or
//! a limit's cheap test does not call the new rotation inside (the current swivel may then be
//! infeasible: the scalar path searches the feasible swivels).

#![allow(clippy::inline_always)] // the lane code must be compiled inside the dispatched function

use std::f64::consts::TAU;

use glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose, Skeleton, Transform};
use pulp::{Simd, WithSimd, bytemuck};

use super::{DEGENERATE, Limb7, Limb7Task, REACH_TOLERANCE, SwivelPolicy, unit_quat};
use crate::analytic::crowd::{Batch, ChainLanes, SOLVED, SolvedChain, write_back};
use crate::linalg::lanes::{Lanes, Mask, Mat3, Quat, Vec3};
use crate::linalg::trig::{SHIFT, atan2_lanes, sin_cos_lanes};
use crate::{Goal, IkTask};

/// What the lane path needs of a prepared limb7 task, compiled once: the chain, when its
/// shape has a lane path — the `keep_current` swivel, an elbow axis that does not depend on
/// the pose, and a chain the lanes take ([`ChainLanes::new`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limb7Lanes(ChainLanes);

impl Limb7Lanes {
    /// The lane path for `task`, when its shape has one (see the type).
    pub(crate) fn new(engine: &Limb7Task, skeleton: &Skeleton, task: &IkTask) -> Option<Self> {
        if engine.config.swivel != SwivelPolicy::KeepCurrent || engine.chain.is_none() {
            return None;
        }
        let path = &engine.path[engine.chain_from..];
        ChainLanes::new(skeleton, task, engine.joints, path).map(Self)
    }
}

/// Values gathered per character: the parent's model rotation (4) and position (3); the
/// shoulder's local translation (3) and rotation (4); the wrist's local rotation (4); the
/// elbow's and wrist's local translations (6); the goal's position (3), orientation as given
/// (4) and as a unit quaternion (4), and whether there is one (1); the elbow's current hinge
/// rotation in the shoulder's frame (4) and its angle (1).
const GATHERED: usize = 41;

/// Values computed per character: the solved chain ([`SOLVED`]), then the swivel (1).
const COMPUTED: usize = SOLVED + 1;

/// The batch in lanes: see the [module docs](self).
impl WithSimd for Batch<'_, Limb7Task, Limb7Lanes> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(mut self, simd: S) {
        let width = S::F64_LANES;
        let count = self.poses.len();
        let shape = (self.lanes.0.joints, self.skeleton, self.task.tolerance);
        let mut gathered = [simd.splat_f64s(0.0); GATHERED];
        let mut computed = [simd.splat_f64s(0.0); COMPUTED];
        // The limb the lanes solve with: the one the task keeps when the batch starts (or
        // once the scalar path has built one), kept while most characters share its bones —
        // the scalar path rebuilds the task's limb for each character with other bones, which
        // must not take it away from the rest of the crowd.
        let mut kept: Option<(Limb7, [Transform; 3])> = None;
        let mut first = 0;
        while first + width <= count {
            if kept.is_none() {
                kept = self
                    .engine
                    .limb
                    .as_ref()
                    .and_then(|(limb, bones)| Some((*limb, bones.as_slice().try_into().ok()?)));
            }
            let Some((limb, bones)) = kept else {
                for i in first..first + width {
                    self.scalar(i);
                }
                first += width;
                continue;
            };
            let mut skip = 0_u64;
            let mut strangers = 0;
            for lane in 0..width {
                let i = first + lane;
                let pose = &self.poses[i];
                let engine = &*self.engine;
                let same = (self.lanes.0.joints.iter().zip(&bones))
                    .all(|(&j, bone)| engine.bone(pose, j) == *bone);
                let at = (&self.goals[i], pose, &self.models[i]);
                let by = (self.lanes, self.skeleton);
                if !same {
                    strangers += 1;
                    skip |= 1 << lane;
                } else if !gather::<S>(by, engine, &limb, at, lane, &mut gathered) {
                    skip |= 1 << lane;
                }
            }
            if 2 * strangers > width {
                kept = None;
            }
            let leave = compute(simd, self.lanes, &limb, &gathered, &mut computed) | skip;
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
                    self.reports[i].swivel = Some(lane_value::<S>(&computed, SOLVED, lane));
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
    (lanes, skeleton): (&Limb7Lanes, &Skeleton),
    engine: &Limb7Task,
    limb: &Limb7,
    (goal, pose, model): (&Goal, &LocalPose, &ModelPose),
    lane: usize,
    gathered: &mut [S::f64s; GATHERED],
) -> bool {
    let [shoulder, elbow, wrist] = lanes.0.joints;
    let Some(target) = goal.position else {
        return false;
    };
    if goal.validate(String::new).is_err()
        || !model.is_rigid(lanes.0.parent)
        || lanes.0.joints.iter().any(|&j| pose[j].scale != DVec3::ONE)
    {
        return false;
    }
    let Some(chain) = &engine.chain else {
        return false;
    };
    let orientation = goal.orientation.unwrap_or(DQuat::IDENTITY);
    let Some(unit) = unit_quat(orientation) else {
        return false;
    };
    // The elbow's current angle and its rotation in the shoulder's frame, by the library as
    // the scalar path takes them (`Limb7Chain::elbow_angle`, `Limb7::hinge_in_shoulder`).
    let hint = chain.elbow_angle(skeleton, pose);
    let hinge = DQuat::from_axis_angle(limb.m, hint);
    let width = S::F64_LANES;
    let flat: &mut [f64] = bytemuck::cast_slice_mut(gathered.as_mut_slice());
    let mut field = 0;
    let mut put = |values: &[f64]| {
        for &value in values {
            flat[field * width + lane] = value;
            field += 1;
        }
    };
    put(&model.rotation(lanes.0.parent).to_array());
    put(&model.position(lanes.0.parent).to_array());
    put(&pose[shoulder].translation.to_array());
    put(&pose[shoulder].rotation.to_array());
    put(&pose[wrist].rotation.to_array());
    put(&pose[elbow].translation.to_array());
    put(&pose[wrist].translation.to_array());
    put(&target.to_array());
    put(&orientation.to_array());
    put(&unit.to_array());
    put(&[if goal.orientation.is_some() { 1.0 } else { 0.0 }]);
    put(&hinge.to_array());
    put(&[hint]);
    true
}

/// Lane `lane` of register `field`.
#[inline(always)]
fn lane_value<S: Simd>(values: &[S::f64s], field: usize, lane: usize) -> f64 {
    let flat: &[f64] = bytemuck::cast_slice(values);
    flat[field * S::F64_LANES + lane]
}

/// `v / |v|` where `|v|² > bound` (`None`'s lanes cleared in `keep`), as the scalar path
/// divides: each coordinate by the length.
#[inline(always)]
fn unit_above<S: Simd>(
    v: Vec3<S>,
    length2: Lanes<S>,
    bound: Lanes<S>,
    keep: &mut Mask<S>,
) -> Vec3<S> {
    *keep = *keep & length2.gt(bound);
    let length = length2.sqrt();
    Vec3::new(v.x / length, v.y / length, v.z / length)
}

/// [`Limb7::elbow_direction`]'s common case (the elbow well off the shoulder–wrist axis).
#[inline(always)]
fn elbow_direction<S: Simd>(simd: S, limb: &Limb7, w_hat: Vec3<S>, keep: &mut Mask<S>) -> Vec3<S> {
    let a = limb.geometry.upper;
    let upper = Vec3::splat(simd, a);
    let offset = upper - w_hat.scale(upper.dot(w_hat));
    let bound = Lanes::splat(simd, 1e-4 * a.length_squared());
    unit_above(offset, offset.length_squared(), bound, keep)
}

/// [`Limb7::swivel_basis`]'s common case (the reference well off `n`).
#[inline(always)]
fn swivel_basis<S: Simd>(
    simd: S,
    limb: &Limb7,
    n: Vec3<S>,
    keep: &mut Mask<S>,
) -> (Vec3<S>, Vec3<S>) {
    let reference = Vec3::splat(simd, limb.reference);
    let p = reference - n.scale(reference.dot(n));
    let u = unit_above(p, p.length_squared(), Lanes::splat(simd, 1e-12), keep);
    (u, n.cross(u))
}

/// The sign of the elbow branch `elbow_angle_for` takes for the law of cosines' `c` (in
/// `[-1, 1]`) and the current angle `hint`: the first branch holding `c`, replaced by each
/// later one whose angle lies strictly nearer the hint. The branch's angle needs `acos c`,
/// which the lanes take as `atan2(√(1 − c²), c)` (within a few ulp of the library's): a lane
/// whose two candidate distances to the hint differ by less than 1e-9 — where that could
/// change the choice — leaves `keep`, as does a lane no branch holds (out of reach).
#[inline(always)]
fn branch_sign<S: Simd>(
    simd: S,
    limb: &Limb7,
    c: Lanes<S>,
    hint: Lanes<S>,
    keep: &mut Mask<S>,
) -> Lanes<S> {
    let splat = |value: f64| Lanes::splat(simd, value);
    let one = splat(1.0);
    let (delta, _) = atan2_lanes(((one - c) * (one + c)).sqrt(), c);
    let [lo, hi] = limb.geometry.elbow_range;
    let (lo, hi) = (splat(lo), splat(hi));
    let tau = splat(TAU);
    let shift = splat(SHIFT);
    let mut found = splat(0.0).gt(one);
    let mut ambiguous = found;
    let mut sign = splat(1.0);
    let mut best = splat(f64::INFINITY);
    let mut index = 0;
    while index < limb.branch_count {
        let branch = &limb.branches[index];
        let holds = c.le(splat(branch.cos_lo)) & c.ge(splat(branch.cos_hi));
        let theta = splat(limb.theta0) + splat(branch.sign) * delta + splat(branch.shift);
        let theta = theta.lt(lo).select(lo, theta.gt(hi).select(hi, theta));
        let d = theta - hint;
        let distance = (d - tau * (((d / tau) + shift) - shift)).abs();
        let compared = holds & found;
        ambiguous = ambiguous | (compared & (distance - best).abs().le(splat(1e-9)));
        let take = (holds & !found) | (compared & distance.lt(best));
        sign = take.select(splat(branch.sign), sign);
        best = take.select(distance, best);
        found = found | holds;
        index += 1;
    }
    *keep = *keep & found & !ambiguous;
    sign
}

/// The scalar path on every lane; the lanes that must leave for it, one bit each.
///
/// Kept as one function of over 100 lines: one straight-line computation on SIMD lanes; split, the
/// lanes would be stored and loaded between the pieces.
#[allow(clippy::too_many_lines)] // one straight-line computation, as the scalar path
#[inline(always)]
fn compute<S: Simd>(
    simd: S,
    lanes: &Limb7Lanes,
    limb: &Limb7,
    gathered: &[S::f64s; GATHERED],
    computed: &mut [S::f64s; COMPUTED],
) -> u64 {
    let splat = |value: f64| Lanes::splat(simd, value);
    let zero = Lanes::splat(simd, 0.0);
    let one = Lanes::splat(simd, 1.0);
    let parent = Quat::load(simd, gathered, 0);
    let parent_at = Vec3::load(simd, gathered, 4);
    let shoulder_local = Vec3::load(simd, gathered, 7);
    let shoulder_now = Quat::load(simd, gathered, 10);
    let wrist_now = Quat::load(simd, gathered, 14);
    let elbow_local = Vec3::load(simd, gathered, 18);
    let wrist_local = Vec3::load(simd, gathered, 21);
    let goal = Vec3::load(simd, gathered, 24);
    let orientation_given = Quat::load(simd, gathered, 27);
    let orientation_unit = Quat::load(simd, gathered, 31);
    let has_orientation = !Lanes::new(simd, gathered[35]).eq(zero);
    let hinge_now = Quat::load(simd, gathered, 36);
    let hint = Lanes::new(simd, gathered[40]);

    // `model_from_limb` (the parent's frame times the shoulder's translation) and the goal in
    // the limb's frame through its inverse.
    let parent_matrix = parent.to_mat3();
    let limb_matrix = parent_matrix.mul_mat3(&Mat3::from_cols(
        Vec3::splat(simd, DVec3::X),
        Vec3::splat(simd, DVec3::Y),
        Vec3::splat(simd, DVec3::Z),
    ));
    let limb_at = parent_matrix.mul_vec3(shoulder_local) + parent_at;
    let mut keep = !limb_matrix.determinant().abs().lt(splat(1e-300));
    let inverse = limb_matrix.inverse();
    let inverse_at = inverse.mul_vec3(limb_at);
    let target = inverse.mul_vec3(goal) + Vec3::new(-inverse_at.x, -inverse_at.y, -inverse_at.z);
    let orientation = parent.conjugate().mul(orientation_unit);

    // `swivel_from_pose`: the current swivel.
    let w = Vec3::splat(simd, limb.geometry.upper) + hinge_now.rotate(Vec3::splat(simd, limb.b0));
    let w_len2 = w.length_squared();
    keep = keep & w_len2.lt(splat(f64::INFINITY));
    let w_hat = unit_above(w, w_len2, splat(1e-300), &mut keep);
    let k = elbow_direction(simd, limb, w_hat, &mut keep);
    let n = shoulder_now.rotate(w_hat);
    let (u, v) = swivel_basis(simd, limb, n, &mut keep);
    let dir = shoulder_now.rotate(k);
    let (current, atan_leaves) = atan2_lanes(dir.dot(v), dir.dot(u));
    // `wrap`: the library's range is [−π, π]; −π becomes π.
    let pi = splat(std::f64::consts::PI);
    let swivel = current.gt(-pi).select(current, pi);

    // `solve_unchecked` at that swivel, the target in the elbow's reach.
    let d2 = target.length_squared();
    let c = (d2 - splat(limb.d2_const)) / splat(limb.two_rho);
    keep = keep & c.ge(-one) & c.le(one);
    let sign = branch_sign(simd, limb, c, hint, &mut keep);
    let root = one - c * c;
    let s = root.lt(zero).select(zero, root).sqrt() * sign;
    let (cos_theta0, sin_theta0) = (splat(limb.cos_theta0), splat(limb.sin_theta0));
    let cos = cos_theta0 * c - sin_theta0 * s;
    let sin = sin_theta0 * c + cos_theta0 * s;
    // `half_angle_rotation`.
    let half = splat(0.5);
    let upper_half = cos.gt(splat(-0.5));
    let c_a = (half * (one + cos)).sqrt();
    let s_b = (half * (one - cos)).sqrt().copysign(sin);
    let hinge_c = upper_half.select(c_a, half * sin / s_b);
    let hinge_s = upper_half.select(half * sin / c_a, s_b);
    let axis = Vec3::splat(simd, limb.axis);
    let hinge = Quat::new(
        axis.x * hinge_s,
        axis.y * hinge_s,
        axis.z * hinge_s,
        hinge_c,
    );
    let w = Vec3::splat(simd, limb.base)
        + Vec3::splat(simd, limb.b_perp).scale(cos)
        + Vec3::splat(simd, limb.m_x_b_perp).scale(sin);
    let w_len2 = w.length_squared();
    keep = keep & d2.gt(splat((DEGENERATE * DEGENERATE) * limb.d2_max));
    let inv_target = one / d2.sqrt();
    let w_hat = w.scale(inv_target);
    let n = target.scale(inv_target);
    let (u, v) = swivel_basis(simd, limb, n, &mut keep);
    let (swivel_sin, swivel_cos, trig_leaves) = sin_cos_lanes(swivel);
    let elbow_dir = u.scale(swivel_cos) + v.scale(swivel_sin);
    let k = elbow_direction(simd, limb, w_hat, &mut keep);
    let from = Mat3::from_cols(w_hat, k, w_hat.cross(k));
    let to = Mat3::from_cols(n, elbow_dir, n.cross(elbow_dir));
    let shoulder = to.mul_mat3(&from.transpose()).rotation();
    let d2_max = splat(limb.d2_max);
    let reached = (w_len2 - d2)
        .abs()
        .le(splat(4.0 * REACH_TOLERANCE) * d2.gt(d2_max).select(d2, d2_max));

    // The wrist for the orientation goal (`wrist_for`), or the one the pose has.
    let (hc, hs) = (hinge.w, hinge.xyz().dot(axis));
    let (wrist_c, wrist_s) = (
        Quat::splat(simd, limb.wrist_c),
        Quat::splat(simd, limb.wrist_s),
    );
    let before_wrist = shoulder.mul(wrist_c.scale(hc).add(wrist_s.scale(hs)));
    let wrist = Quat::select(
        has_orientation,
        before_wrist.conjugate().mul(orientation),
        wrist_now,
    );
    let elbow = Quat::splat(simd, lanes.0.rest[1]).mul(hinge);
    let locals = [shoulder, elbow, wrist];
    // The limits' cheap test (`solution_is_legal`, and the elbow's and a kept wrist's
    // `contains` when they are written).
    let mut joint = 0;
    while joint < 3 {
        let delta = Quat::splat(simd, lanes.0.rest[joint])
            .conjugate()
            .mul(locals[joint]);
        keep = keep & locals[joint].is_finite() & lanes.0.tests[joint].clearly_inside(simd, delta);
        joint += 1;
    }

    // Forward kinematics of the chain, and the residuals as `residuals` measures them.
    let shoulder_rotation = parent.mul(shoulder);
    let elbow_rotation = shoulder_rotation.mul(elbow);
    let elbow_at = shoulder_rotation.to_mat3().mul_vec3(elbow_local) + limb_at;
    let wrist_rotation = elbow_rotation.mul(wrist);
    let wrist_at = elbow_rotation.to_mat3().mul_vec3(wrist_local) + elbow_at;
    keep = keep & wrist_at.is_finite() & wrist_rotation.is_finite();
    SolvedChain {
        locals,
        rotations: [shoulder_rotation, elbow_rotation, wrist_rotation],
        mid_at: elbow_at,
        end_at: wrist_at,
        reached,
        position_error: (wrist_at - goal).length(),
        difference: wrist_rotation
            .conjugate()
            .mul(orientation_given)
            .normalize(),
    }
    .store(computed);
    computed[SOLVED] = swivel.value();
    (!keep).bits() | atan_leaves.bits() | trig_leaves.bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::crowd::tests::{
        Run, SPECIAL, check_frames, crowd, on_every_instruction_set,
    };
    use ikarus_core::JointId;

    /// The upper arm raised forward and turned a little, the elbow bent, the hand turned a
    /// little (an arm reaching in front of the body).
    fn arm(
        skeleton: &Skeleton,
        limb: [JointId; 3],
        pose: &mut LocalPose,
        next: &mut dyn FnMut() -> f64,
    ) {
        for (k, j) in limb.into_iter().enumerate() {
            let axis = DVec3::new(next(), next(), next()).normalize_or(DVec3::X);
            let turn = match k {
                0 => {
                    DQuat::from_rotation_z(-0.9 + 0.2 * next())
                        * DQuat::from_axis_angle(axis, 0.3 * next())
                }
                1 => DQuat::from_rotation_y(-(0.9 + 0.5 * next())),
                _ => DQuat::from_axis_angle(axis, 0.3 * next()),
            };
            pose[j].rotation = skeleton.rest(j).rotation * skeleton.limit(j).project(turn);
        }
    }

    /// The batch of this module against `solve_in` on a crowd.
    struct Arms;

    impl Run for Arms {
        fn run<S: Simd>(&self, simd: S, seed: u64) {
            let crowd = crowd(seed, ["leftUpperArm", "leftLowerArm", "leftHand"], arm);
            let width = S::F64_LANES;
            let remainder = crowd.1.len() % width;
            let make = |skeleton: &Skeleton, shape: &IkTask| {
                let config = crate::analytic::limb7::Limb7Config::default();
                let engine = Limb7Task::new(skeleton, shape, &config).unwrap();
                let lanes = Limb7Lanes::new(&engine, skeleton, shape).expect("arm lanes");
                (engine, lanes)
            };
            // The lanes solve the ordinary characters. The scalar path takes the special ones, a
            // few whose new pose lies on or past a limit (the kept swivel may be infeasible), the
            // remainder after the last whole chunk, on the first frame the first chunk (the task
            // keeps no limb yet), and one chunk after each character with other bones when chunks
            // are single characters (its limb is taken up, then put back).
            let bound = |frame: usize| {
                let first_chunk = if frame == 0 { width } else { 0 };
                let after_strangers = if width == 1 { 8 } else { 0 };
                SPECIAL + remainder + first_chunk + after_strangers + 6
            };
            check_frames(
                simd,
                crowd,
                ("leftHand", r#"{"kind": "limb7"}"#),
                make,
                bound,
            );
        }
    }

    #[test]
    fn every_character_gets_the_bits_of_solve_in_on_every_instruction_set() {
        on_every_instruction_set(&Arms);
    }
}
