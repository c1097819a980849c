//! A planted foot followed from the last frame where the closed forms lose it. Near a leg's
//! limits the two-bone and 7-DOF solves of [`super::repair`] can land the foot on another
//! branch than in the frame before — a hip extension or twist bound switching which joint
//! gives way — and miss its held points although the last frame's pose, moved a little,
//! would still meet them: a slide or a lifted ball for one frame. [`hold_foot`] moves the
//! leg from the last frame's pose by a damped Gauss–Newton descent on its three joints (each
//! joint's rotation turned by a rotation vector in its own frame and put back onto its limit;
//! the Jacobian by central differences through that projection, so a joint on its bound
//! moves only inwards) towards:
//! - the held ball (the toes joint) on its goal, weighted [`HoldDescent::ball_weight`]: the pivot a foot
//!   turns about;
//! - the held heel (the limb's end joint) on its goal, across the floor with [`HoldDescent::heel_weight`]
//!   and in height with [`HoldDescent::height_weight`] only: limits may lift a planted heel, sliding is
//!   what shows (the caller puts the goal where the heel was, moved towards its anchor by at
//!   most a step);
//! - the heel, ball and toe tip not below the floor plus their rest heights (one-sided,
//!   [`HoldDescent::floor_weight`], starting [`HoldDescent::floor_margin`] above it so the
//!   soft floor's give stays above the floor);
//! - the foot's wanted rotation, softly (its rotation vector times
//!   [`HoldDescent::rotation_length`]).
//!
//! Residuals are in metres. The caller compares [`cost`] of the closed form's pose with the
//! cost this reaches and keeps the lower.

use glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};

use super::repair::{Limb, project};
use super::stages::HoldDescent;

/// Residuals: heel (3), ball (3), heel, ball and tip floors (3), rotation (3).
const RESIDUALS: usize = 12;
/// Three joints, a rotation vector each.
const PARAMETERS: usize = 9;

/// What a planted foot holds in one frame (model space).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootHold {
    /// Where the heel (the limb's end joint) should be, if held.
    pub heel: Option<DVec3>,
    /// Where the ball (the toes joint) should be, if held.
    pub ball: Option<DVec3>,
    /// The foot's wanted model rotation (soft).
    pub rotation: DQuat,
    /// The body's up.
    pub up: DVec3,
    /// The floor's height along `up`.
    pub floor: f64,
}

/// The residuals of the limb's frames in `model` against `hold`.
fn residuals(
    limb: &Limb,
    hold: &FootHold,
    d: &HoldDescent,
    model: &ModelPose,
    margin: f64,
) -> [f64; RESIDUALS] {
    let up = hold.up;
    let mut r = [0.0; RESIDUALS];
    let heel = model.position(limb.end);
    let height = |p: DVec3| p.dot(up) - margin;
    let (e1, e2) = up.any_orthonormal_pair();
    if let Some(target) = hold.heel {
        let off = heel - target;
        r[..3].copy_from_slice(&[
            d.heel_weight * off.dot(e1),
            d.heel_weight * off.dot(e2),
            d.height_weight * off.dot(up),
        ]);
    }
    r[6] = d.floor_weight * (hold.floor + limb.end_clearance - height(heel)).max(0.0);
    if let Some(toes) = limb.toes {
        let ball = model.position(toes);
        if let Some(target) = hold.ball {
            let off = (ball - target) * d.ball_weight;
            r[3..6].copy_from_slice(&[off.dot(e1), off.dot(e2), d.height_weight * off.dot(up)]);
        }
        r[7] = d.floor_weight * (hold.floor + limb.toes_clearance - height(ball)).max(0.0);
        if let Some((tip, clearance)) = limb.toe_tip {
            let at = ball + model.rotation(toes) * tip;
            r[8] = d.floor_weight * (hold.floor + clearance - height(at)).max(0.0);
        }
    }
    let turn = (hold.rotation.conjugate() * model.rotation(limb.end)).normalize();
    let turn = if turn.w < 0.0 { -turn } else { turn };
    let v = turn.to_scaled_axis() * d.rotation_length;
    r[9..].copy_from_slice(&v.to_array());
    r
}

fn sum_of_squares(r: &[f64; RESIDUALS]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// The cost (sum of squared residuals, m², weighted by `descent`) of the limb's frames in
/// `model` against `hold`.
pub fn cost(limb: &Limb, hold: &FootHold, descent: &HoldDescent, model: &ModelPose) -> f64 {
    sum_of_squares(&residuals(limb, hold, descent, model, 0.0))
}

/// The three joints turned by `step` (a rotation vector each, in the joint's own frame) from
/// `from`, put onto their limits, and the limb's subtree updated.
fn apply(
    skeleton: &Skeleton,
    limb: &Limb,
    from: &[DQuat; 3],
    step: &[f64; PARAMETERS],
    pose: &mut LocalPose,
    model: &mut ModelPose,
) {
    for (k, joint) in [limb.start, limb.mid, limb.end].into_iter().enumerate() {
        let v = DVec3::new(step[3 * k], step[3 * k + 1], step[3 * k + 2]);
        pose[joint].rotation = (from[k] * DQuat::from_scaled_axis(v)).normalize();
        project(skeleton, pose, joint);
    }
    fk::update_subtree(skeleton, pose, model, limb.start);
}

/// Solves `(a + λ·diag(a)) x = b` for the normal matrix `a` by Gaussian elimination with
/// partial pivoting; `None` when it is singular.
fn solve_damped(
    a: &[[f64; PARAMETERS]; PARAMETERS],
    b: &[f64; PARAMETERS],
    lambda: f64,
) -> Option<[f64; PARAMETERS]> {
    let mut m = *a;
    let mut x = *b;
    for (i, row) in m.iter_mut().enumerate() {
        // A column the limits hold (all zero) gets a unit diagonal: its step is zero.
        row[i] += lambda * row[i].max(1e-12) + if row[i] == 0.0 { 1.0 } else { 0.0 };
    }
    for col in 0..PARAMETERS {
        let pivot = (col..PARAMETERS)
            .max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))
            .unwrap_or(col);
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        x.swap(col, pivot);
        for row in col + 1..PARAMETERS {
            let factor = m[row][col] / m[col][col];
            let (upper, lower) = m.split_at_mut(row);
            for (a, b) in lower[0][col..].iter_mut().zip(&upper[col][col..]) {
                *a -= factor * b;
            }
            x[row] -= factor * x[col];
        }
    }
    for col in (0..PARAMETERS).rev() {
        let tail: f64 = (col + 1..PARAMETERS).map(|k| m[col][k] * x[k]).sum();
        x[col] = (x[col] - tail) / m[col][col];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Moves the limb of `pose` (its frames in `model`, current on entry and on return) towards
/// `hold` by a damped Gauss–Newton descent from where it stands (see the module docs),
/// weighted and stopped as `descent` says. Returns the [`cost`] reached.
pub fn hold_foot(
    skeleton: &Skeleton,
    limb: &Limb,
    (hold, descent): (&FootHold, &HoldDescent),
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> f64 {
    let joints = [limb.start, limb.mid, limb.end];
    let mut current = joints.map(|j| pose[j].rotation);
    let mut r = residuals(limb, hold, descent, model, descent.floor_margin);
    let mut c = sum_of_squares(&r);
    let mut lambda = 1e-3;
    for _ in 0..descent.iterations {
        if c < descent.met {
            break;
        }
        // Each joint turned alone, put back onto its limit, and only its subtree updated;
        // restored before the next joint.
        let mut jacobian = [[0.0; PARAMETERS]; RESIDUALS];
        for (k, &joint) in joints.iter().enumerate() {
            for axis in 0..3 {
                let mut sides = [[0.0; RESIDUALS]; 2];
                for (side, sign) in sides.iter_mut().zip([1.0, -1.0]) {
                    let mut v = DVec3::ZERO;
                    v[axis] = sign * descent.difference;
                    pose[joint].rotation = (current[k] * DQuat::from_scaled_axis(v)).normalize();
                    project(skeleton, pose, joint);
                    fk::update_subtree(skeleton, pose, model, joint);
                    *side = residuals(limb, hold, descent, model, descent.floor_margin);
                }
                for (row, (a, b)) in jacobian.iter_mut().zip(sides[0].iter().zip(&sides[1])) {
                    row[3 * k + axis] = (a - b) / (2.0 * descent.difference);
                }
            }
            pose[joint].rotation = current[k];
            fk::update_subtree(skeleton, pose, model, joint);
        }
        let mut normal = [[0.0; PARAMETERS]; PARAMETERS];
        let mut gradient = [0.0; PARAMETERS];
        for (row, residual) in jacobian.iter().zip(&r) {
            for i in 0..PARAMETERS {
                gradient[i] -= row[i] * residual;
                for k in 0..PARAMETERS {
                    normal[i][k] += row[i] * row[k];
                }
            }
        }
        let mut improved = false;
        for _ in 0..10 {
            let Some(step) = solve_damped(&normal, &gradient, lambda) else {
                lambda *= 10.0;
                continue;
            };
            apply(skeleton, limb, &current, &step, pose, model);
            let trial = residuals(limb, hold, descent, model, descent.floor_margin);
            let trial_cost = sum_of_squares(&trial);
            if trial_cost < c {
                current = joints.map(|j| pose[j].rotation);
                improved = c - trial_cost > descent.min_gain * c;
                (r, c) = (trial, trial_cost);
                lambda = (lambda / 3.0).max(1e-9);
                break;
            }
            lambda *= 4.0;
        }
        if !improved {
            break;
        }
    }
    for (j, q) in joints.into_iter().zip(current) {
        pose[j].rotation = q;
    }
    fk::update_subtree(skeleton, pose, model, limb.start);
    cost(limb, hold, descent, model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ikarus_core::humanoid::builtin_humanoid;

    /// The built-in humanoid's left leg (floor at 0: its rest heights are the clearances).
    fn left_leg(skeleton: &Skeleton) -> Limb {
        let joint = |name: &str| skeleton.joint(name).unwrap();
        let mut rest = ModelPose::new(skeleton);
        fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
        let (start, mid, end, toes) = (
            joint("leftUpperLeg"),
            joint("leftLowerLeg"),
            joint("leftFoot"),
            joint("leftToes"),
        );
        Limb {
            start,
            mid,
            end,
            toes: Some(toes),
            reach: 0.82,
            end_clearance: rest.position(end).y,
            toes_clearance: rest.position(toes).y,
            toe_tip: Some((DVec3::new(0.0, 0.0, 0.05), rest.position(toes).y)),
            toe_axis: DVec3::X,
            bend_in_start: DVec3::X,
            front_in_start: DVec3::Z,
        }
    }

    /// A random rotation of up to `angle` radians.
    fn turn(rng: &mut ikarus_testdata::Rng, angle: f64) -> DQuat {
        let axis = DVec3::new(rng.signed(), rng.signed(), rng.signed()).normalize_or(DVec3::X);
        DQuat::from_axis_angle(axis, angle * rng.unit())
    }

    #[test]
    fn a_foot_reachable_near_the_seed_is_reached_within_the_limits() {
        // Ground truth by FK: a legal leg pose gives the goals; the descent starts from that
        // pose turned by up to 8° per joint (back on the limits) and must find the goals again,
        // within the limits, its cost never above the start's.
        let skeleton = builtin_humanoid();
        let leg = left_leg(&skeleton);
        let mut rng = ikarus_testdata::Rng(7);
        let (mut reached, mut near, trials) = (0, 0, 200);
        for _ in 0..trials {
            let mut pose = skeleton.rest_pose();
            for joint in [leg.start, leg.mid, leg.end] {
                pose[joint].rotation = turn(&mut rng, 1.2);
                project(&skeleton, &mut pose, joint);
            }
            let mut model = ModelPose::new(&skeleton);
            fk::forward_kinematics(&skeleton, &pose, &mut model);
            let hold = FootHold {
                heel: Some(model.position(leg.end)),
                ball: Some(model.position(leg.toes.unwrap())),
                rotation: model.rotation(leg.end),
                up: DVec3::Y,
                floor: -10.0,
            };
            for joint in [leg.start, leg.mid, leg.end] {
                pose[joint].rotation *= turn(&mut rng, 0.14);
                project(&skeleton, &mut pose, joint);
            }
            fk::forward_kinematics(&skeleton, &pose, &mut model);
            let descent = HoldDescent::default();
            let before = cost(&leg, &hold, &descent, &model);
            let after = hold_foot(&skeleton, &leg, (&hold, &descent), &mut pose, &mut model);
            assert!(after <= before, "{after} > {before}");
            assert!(pose.is_finite());
            assert!(skeleton.limit_violation(&pose).is_none());
            // The cost returned is the cost of the pose returned (FK again, independently).
            let mut again = ModelPose::new(&skeleton);
            fk::forward_kinematics(&skeleton, &pose, &mut again);
            assert!((cost(&leg, &hold, &descent, &again) - after).abs() <= 1e-12 * (1.0 + after));
            let heel = again.position(leg.end).distance(hold.heel.unwrap());
            let ball = again
                .position(leg.toes.unwrap())
                .distance(hold.ball.unwrap());
            if heel < 1e-4 && ball < 1e-4 {
                reached += 1;
            }
            if heel < 1e-3 && ball < 1e-3 {
                near += 1;
            }
        }
        // A local refinement, not an exact solver: goals on a limit's bound (most of these,
        // drawn up to 69° and projected) converge linearly, and some stop a fraction of a
        // millimetre short.
        assert!(
            reached * 100 >= trials * 80,
            "{reached} of {trials} within 0.1 mm"
        );
        assert!(near * 100 >= trials * 95, "{near} of {trials} within 1 mm");
    }

    #[test]
    fn a_goal_under_the_floor_stops_the_heel_at_the_floor() {
        // The floor 5 cm above the rest pose's: a knee-bent leg asked to put its heel where it
        // stands at rest, 5 cm under that floor plus the heel's rest height. The descent
        // lowers the heel to the floor line (its soft floor starts `floor_margin` above it),
        // not to the goal; without a floor the same descent takes the heel to the goal.
        let skeleton = builtin_humanoid();
        let leg = left_leg(&skeleton);
        let mut rest = ModelPose::new(&skeleton);
        fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut rest);
        let bent = |pose: &mut LocalPose| {
            pose[leg.start].rotation = DQuat::from_rotation_x(-0.4);
            pose[leg.mid].rotation = DQuat::from_rotation_x(0.8);
            pose[leg.end].rotation = DQuat::from_rotation_x(-0.4);
        };
        let (mut pose, mut model) = (skeleton.rest_pose(), ModelPose::new(&skeleton));
        bent(&mut pose);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let hold = FootHold {
            heel: Some(rest.position(leg.end)),
            ball: None,
            rotation: DQuat::IDENTITY,
            up: DVec3::Y,
            floor: 0.05,
        };
        hold_foot(
            &skeleton,
            &leg,
            (&hold, &HoldDescent::default()),
            &mut pose,
            &mut model,
        );
        let above = model.position(leg.end).y - (hold.floor + leg.end_clearance);
        assert!(above > -1e-3 && above < 2e-3, "{above}");
        assert!(skeleton.limit_violation(&pose).is_none());
        let (mut pose, mut model) = (skeleton.rest_pose(), ModelPose::new(&skeleton));
        bent(&mut pose);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let deep = FootHold {
            floor: -10.0,
            ..hold
        };
        hold_foot(
            &skeleton,
            &leg,
            (&deep, &HoldDescent::default()),
            &mut pose,
            &mut model,
        );
        let miss = model.position(leg.end).distance(rest.position(leg.end));
        assert!(miss < 1e-3, "{miss}");
    }

    #[test]
    fn the_damped_system_is_solved() {
        // Against the product: (A + λ·diag A)·x = b, A = MᵀM for a random M.
        let mut rng = ikarus_testdata::Rng(3);
        for lambda in [0.0, 1e-3, 1.0] {
            let m: Vec<[f64; PARAMETERS]> = (0..RESIDUALS)
                .map(|_| std::array::from_fn(|_| rng.signed()))
                .collect();
            let mut a = [[0.0; PARAMETERS]; PARAMETERS];
            for row in &m {
                for i in 0..PARAMETERS {
                    for k in 0..PARAMETERS {
                        a[i][k] += row[i] * row[k];
                    }
                }
            }
            let b: [f64; PARAMETERS] = std::array::from_fn(|_| rng.signed());
            let x = solve_damped(&a, &b, lambda).unwrap();
            for i in 0..PARAMETERS {
                let lhs: f64 = (0..PARAMETERS)
                    .map(|k| (a[i][k] + if i == k { lambda * a[i][i] } else { 0.0 }) * x[k])
                    .sum();
                assert!((lhs - b[i]).abs() < 1e-9, "{lhs} vs {}", b[i]);
            }
        }
    }
}
