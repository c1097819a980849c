//! A planted foot followed from the last frame where the closed forms lose it. Near a leg's
//! limits the two-bone and 7-DOF solves of [`super::repair`] can land the foot on another
//! branch than in the frame before — a hip extension or twist bound switching which joint
//! gives way — and miss its held points although the last frame's pose, moved a little,
//! would still meet them: a slide or a lifted ball for one frame. [`hold_foot`] moves the
//! leg from the last frame's pose by a damped Gauss–Newton descent on its three joints (each
//! joint's rotation turned by a rotation vector in its own frame and put back onto its limit;
//! the Jacobian by central differences through that projection, so a joint on its bound
//! moves only inwards) towards:
//! - the held heel (the limb's end joint) and ball (its toes joint) on their goals (the ball
//!   weighted [`BALL_WEIGHT`]: the pivot a foot turns about);
//! - the heel, ball and toe tip not below the floor plus their rest heights (one-sided,
//!   [`FLOOR_WEIGHT`]);
//! - the foot's wanted rotation, softly (its rotation vector times [`ROTATION_LENGTH`]).
//!
//! Residuals are in metres. The caller compares [`cost`] of the closed form's pose with the
//! cost this reaches and keeps the lower.

use glam::{DQuat, DVec3};
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};

use super::repair::{Limb, project};

/// Residuals: heel (3), ball (3), heel, ball and tip floors (3), rotation (3).
const RESIDUALS: usize = 12;
/// Three joints, a rotation vector each.
const PARAMETERS: usize = 9;

/// Metres per radian of the foot's rotation error: a degree costs as much as 0.9 mm.
pub const ROTATION_LENGTH: f64 = 0.05;
/// Weight of the heel's place across the floor.
pub const HEEL_WEIGHT: f64 = 3.0;
/// Weight of the ball against the heel.
pub const BALL_WEIGHT: f64 = 4.0;
/// Weight of a held point's height against its place across the floor: limits may lift a
/// planted foot, the floor keeps it from sinking, and sliding is what shows.
pub const HEIGHT_WEIGHT: f64 = 0.3;
/// Weight of a point below the floor.
pub const FLOOR_WEIGHT: f64 = 30.0;
/// How far above the floor (metres) the descent's floor terms start: its soft floor leaves
/// points a fraction of a millimetre below the line it pushes them above.
const FLOOR_MARGIN: f64 = 1e-3;
/// Descent steps at most.
const ITERATIONS: usize = 200;
/// Finite-difference step of a joint's rotation vector (radians).
const DIFFERENCE: f64 = 1e-6;

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
fn residuals(limb: &Limb, hold: &FootHold, model: &ModelPose, margin: f64) -> [f64; RESIDUALS] {
    let up = hold.up;
    let mut r = [0.0; RESIDUALS];
    let heel = model.position(limb.end);
    let height = |p: DVec3| p.dot(up) - margin;
    let (e1, e2) = up.any_orthonormal_pair();
    if let Some(target) = hold.heel {
        let d = heel - target;
        r[..3].copy_from_slice(&[
            HEEL_WEIGHT * d.dot(e1),
            HEEL_WEIGHT * d.dot(e2),
            HEIGHT_WEIGHT * d.dot(up),
        ]);
    }
    r[6] = FLOOR_WEIGHT * (hold.floor + limb.end_clearance - height(heel)).max(0.0);
    if let Some(toes) = limb.toes {
        let ball = model.position(toes);
        if let Some(target) = hold.ball {
            let d = (ball - target) * BALL_WEIGHT;
            r[3..6].copy_from_slice(&[d.dot(e1), d.dot(e2), HEIGHT_WEIGHT * d.dot(up)]);
        }
        r[7] = FLOOR_WEIGHT * (hold.floor + limb.toes_clearance - height(ball)).max(0.0);
        if let Some((tip, clearance)) = limb.toe_tip {
            let at = ball + model.rotation(toes) * tip;
            r[8] = FLOOR_WEIGHT * (hold.floor + clearance - height(at)).max(0.0);
        }
    }
    let turn = (hold.rotation.conjugate() * model.rotation(limb.end)).normalize();
    let turn = if turn.w < 0.0 { -turn } else { turn };
    let v = turn.to_scaled_axis() * ROTATION_LENGTH;
    r[9..].copy_from_slice(&v.to_array());
    r
}

fn sum_of_squares(r: &[f64; RESIDUALS]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

/// The cost (sum of squared residuals, m²) of the limb's frames in `model` against `hold`.
pub fn cost(limb: &Limb, hold: &FootHold, model: &ModelPose) -> f64 {
    sum_of_squares(&residuals(limb, hold, model, 0.0))
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
/// `hold` by a damped Gauss–Newton descent from where it stands (see the module docs).
/// Returns the [`cost`] reached.
pub fn hold_foot(
    skeleton: &Skeleton,
    limb: &Limb,
    hold: &FootHold,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> f64 {
    let joints = [limb.start, limb.mid, limb.end];
    let mut current = joints.map(|j| pose[j].rotation);
    let mut r = residuals(limb, hold, model, FLOOR_MARGIN);
    let mut c = sum_of_squares(&r);
    let mut lambda = 1e-3;
    for _ in 0..ITERATIONS {
        if c < 1e-14 {
            break;
        }
        let mut jacobian = [[0.0; PARAMETERS]; RESIDUALS];
        for p in 0..PARAMETERS {
            let mut step = [0.0; PARAMETERS];
            step[p] = DIFFERENCE;
            apply(skeleton, limb, &current, &step, pose, model);
            let plus = residuals(limb, hold, model, FLOOR_MARGIN);
            step[p] = -DIFFERENCE;
            apply(skeleton, limb, &current, &step, pose, model);
            let minus = residuals(limb, hold, model, FLOOR_MARGIN);
            for (row, (a, b)) in jacobian.iter_mut().zip(plus.iter().zip(&minus)) {
                row[p] = (a - b) / (2.0 * DIFFERENCE);
            }
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
            let trial = residuals(limb, hold, model, FLOOR_MARGIN);
            let trial_cost = sum_of_squares(&trial);
            if trial_cost < c {
                current = joints.map(|j| pose[j].rotation);
                improved = c - trial_cost > 1e-9 * c;
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
    cost(limb, hold, model)
}
