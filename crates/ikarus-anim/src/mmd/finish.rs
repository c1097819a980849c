//! Exact mode's finishes for a chain CCD left short of its goal (see the [module
//! docs](super)): the knee by the law of cosines, and a damped least-squares polish.

use std::f64::consts::PI;

use glam::{DMat3, DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};

use super::{ChainPlan, LinkPlan, State, clamp_euler};

/// Exact mode's finish for a leg (a plane-mode link, then a free link above it on the path):
/// CCD creeps where the leg is nearly straight, so the knee angle comes from the law of
/// cosines (the solution inside its range nearest the current one, or the nearer bound) and
/// the upper link turns the effector onto the goal. Kept only when it lowers the distance.
pub(super) fn knee_closed_form(
    chain: &ChainPlan,
    goal: DVec3,
    best: f64,
    state: &mut State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) {
    let [knee, hip] = chain.links.as_slice() else {
        return;
    };
    let (Some(axis), Some(limit), None, Some(0), Some(knee_at)) = (
        knee.plane,
        knee.limit,
        hip.limit,
        hip.path_from,
        knee.path_from,
    ) else {
        return;
    };
    // Only the knee's own rotation may lie between knee and effector, and the knee must be
    // the hip's child on the path.
    if knee_at != 1 {
        return;
    }
    let (k, h) = (knee.joint.index(), hip.joint.index());
    let before = (state.ik_rotation[k], state.ik_rotation[h]);
    let u = DVec3::AXES[axis];
    let knee_origin = model.position(knee.joint);
    let hip_rotation = model.rotation(hip.joint);
    // The knee's current angle about its axis (its rotation without the inherited part is a
    // pure turn about the axis in plane mode).
    let own = state.ik_rotation[k] * state.anim_rotation[k];
    let plane_angle = 2.0 * own.xyz().dot(u).atan2(own.w);
    // Effector seen from the knee in the hip's frame, with the knee's turn removed:
    // `t + R(θ)·e` is the effector in the hip's frame for a knee angle θ.
    let e = DQuat::from_axis_angle(u, -plane_angle)
        * (hip_rotation.inverse() * (model.position(chain.effector) - knee_origin));
    let t = out.transforms()[k].translation; // knee origin in the hip's frame
    let hip_origin = model.position(hip.joint);
    let reach = goal.distance(hip_origin);
    let (e_parallel, e_perpendicular) = (u * u.dot(e), e - u * u.dot(e));
    let c = t.dot(e_parallel);
    let a = t.dot(e_perpendicular);
    let b = t.dot(u.cross(e));
    let rhs = 0.5 * (reach * reach - t.length_squared() - e.length_squared()) - c;
    let r0 = a.hypot(b);
    if r0 < 1e-12 {
        return;
    }
    let phi = b.atan2(a);
    let spread = (rhs / r0).clamp(-1.0, 1.0).acos();
    let (lo, hi) = (limit.min[axis], limit.max[axis]);
    let candidates = [phi + spread, phi - spread].map(|theta| {
        // The representative of θ nearest the range.
        let mut best_theta = theta;
        for shift in [-2.0 * PI, 0.0, 2.0 * PI] {
            let x = theta + shift;
            if x >= lo && x <= hi {
                best_theta = x;
            }
        }
        best_theta.clamp(lo, hi)
    });
    let theta = if (candidates[0] - plane_angle).abs() <= (candidates[1] - plane_angle).abs() {
        candidates[0]
    } else {
        candidates[1]
    };
    state.ik_rotation[k] = DQuat::from_axis_angle(u, theta) * state.anim_rotation[k].inverse();
    state.compose(k, out);
    fk::update_joints(skeleton, out, model, &chain.path);
    // Turn the hip so the effector points at the goal.
    let hip_from_model = model.rotation(hip.joint).inverse();
    let from = hip_from_model * (model.position(chain.effector) - hip_origin);
    let to = hip_from_model * (goal - hip_origin);
    if from.length_squared() > 1e-24 && to.length_squared() > 1e-24 {
        let turn = DQuat::from_rotation_arc(from.normalize(), to.normalize());
        let rotation = state.ik_rotation[h] * state.anim_rotation[h] * turn;
        state.ik_rotation[h] = (rotation * state.anim_rotation[h].inverse()).normalize();
        state.compose(h, out);
        fk::update_joints(skeleton, out, model, &chain.path);
    }
    if model.position(chain.effector).distance(goal) < best {
        state.steps[0].plane = theta;
    } else {
        state.ik_rotation[k] = before.0;
        state.ik_rotation[h] = before.1;
        state.compose(k, out);
        state.compose(h, out);
        fk::update_joints(skeleton, out, model, &chain.path);
    }
}

/// Most trial steps [`polish_local`] takes.
const POLISH_STEPS: usize = 100;

/// Exact mode's finish for a consecutive chain that CCD left short of the goal — nearly
/// straight chains (hair at 99 % of its reach), where each CCD sweep gains less and less:
/// damped least squares (Levenberg–Marquardt) on all links at once, from CCD's best pose
/// (`state.best_own`). The effector `p` moves by `ω × (p − oₖ)` when link `k` (origin `oₖ`)
/// turns by the small rotation vector `ω` (in the chain's base frame, the top link's parent),
/// so for a goal error `e` the step is `ωₖ = (p − oₖ) × y` with `(J Jᵀ + λI) y = e` — a
/// 3 × 3 system; a plane-mode link turns about its axis `aₖ` by `aₖ · ((p − oₖ) × y)`,
/// clamped to its range, and a link with an Euler limit is clamped as a CCD step clamps it.
/// A step is kept when it brings the effector closer (then `λ` shrinks), else `λ` grows.
/// Each trial's rotations are built in `state.local` (free after the CCD loop). Works in
/// squared distances; returns the best one, with its rotations in `state.best_own`.
pub(super) fn polish_local(
    chain: &ChainPlan,
    goal: DVec3,
    tolerance_squared: f64,
    mut best: f64,
    state: &mut State,
) -> f64 {
    let n = chain.links.len();
    let mut damping = 1e-3;
    for _ in 0..POLISH_STEPS {
        let effector = chain_points(n, false, state);
        let mut normal = DMat3::ZERO;
        for (k, link) in chain.links.iter().enumerate() {
            normal += polish_normal(link, state.parent_rotation[k], effector - state.origin[k]);
        }
        let Some(y) = polish_direction(normal, damping, goal - effector) else {
            break;
        };
        for (k, link) in chain.links.iter().enumerate() {
            (state.local[k], state.trial_angles[k]) = polish_link(
                link,
                state.best_own[k],
                state.parent_rotation[k],
                effector - state.origin[k],
                y,
                state.steps[k].previous,
            );
        }
        let trial = chain_points(n, true, state).distance_squared(goal);
        if trial < best {
            best = trial;
            for k in 0..n {
                state.best_own[k] = state.local[k];
                state.steps[k].previous = state.trial_angles[k];
            }
            if best <= tolerance_squared {
                break;
            }
            damping = (damping * 0.25).max(1e-12);
        } else {
            damping *= 8.0;
            if damping > 1e8 {
                break;
            }
        }
    }
    best
}

/// [`polish_local`] for chains that are not consecutive, on the model frames: the links on
/// the effector's path (the others do not move it) take the same steps, each trial written
/// to the links and their path updated by FK. Works in distances (not squared); returns the
/// best one, with its rotations in the links, `state.saved` and the path's model frames.
#[allow(clippy::too_many_arguments)]
pub(super) fn polish_in_model(
    chain: &ChainPlan,
    goal: DVec3,
    tolerance: f64,
    mut best: f64,
    state: &mut State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) -> f64 {
    let moves = |link: &LinkPlan| link.path_from.is_some() && link.joint != chain.effector;
    let parent_rotation = |model: &ModelPose, joint: JointId| {
        skeleton
            .parent(joint)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p))
    };
    let mut damping = 1e-3;
    for _ in 0..POLISH_STEPS {
        let effector = model.position(chain.effector);
        let mut normal = DMat3::ZERO;
        for link in chain.links.iter().filter(|l| moves(l)) {
            let lever = effector - model.position(link.joint);
            normal += polish_normal(link, parent_rotation(model, link.joint), lever);
        }
        let Some(y) = polish_direction(normal, damping, goal - effector) else {
            break;
        };
        for (k, link) in chain.links.iter().enumerate().filter(|(_, l)| moves(l)) {
            let j = link.joint.index();
            let own = state.ik_rotation[j] * state.anim_rotation[j];
            let lever = effector - model.position(link.joint);
            let parent = parent_rotation(model, link.joint);
            let (trial, angles) = polish_link(link, own, parent, lever, y, state.steps[k].previous);
            state.trial_angles[k] = angles;
            state.local[k] = (trial * state.anim_rotation[j].inverse()).normalize();
        }
        for (k, link) in chain.links.iter().enumerate().filter(|(_, l)| moves(l)) {
            state.ik_rotation[link.joint.index()] = state.local[k];
            state.compose(link.joint.index(), out);
        }
        fk::update_joints(skeleton, out, model, &chain.path);
        let trial = model.position(chain.effector).distance(goal);
        let kept = trial < best;
        for (k, link) in chain.links.iter().enumerate().filter(|(_, l)| moves(l)) {
            if kept {
                state.saved[k] = state.local[k];
                state.steps[k].previous = state.trial_angles[k];
            } else {
                state.ik_rotation[link.joint.index()] = state.saved[k];
                state.compose(link.joint.index(), out);
            }
        }
        if kept {
            best = trial;
            if best <= tolerance {
                break;
            }
            damping = (damping * 0.25).max(1e-12);
        } else {
            fk::update_joints(skeleton, out, model, &chain.path);
            damping *= 8.0;
            if damping > 1e8 {
                break;
            }
        }
    }
    best
}

/// A link's share of `J Jᵀ` in the polish, for the lever `r = p − oₖ` and the link's parent
/// rotation (both in the frame the polish works in): `|r|² I − r rᵀ` for a ball link,
/// `c cᵀ` with `c = a × r` for a plane-mode link turning about `a`.
fn polish_normal(link: &LinkPlan, parent: DQuat, lever: DVec3) -> DMat3 {
    match link.plane {
        Some(axis) => {
            let column = (parent * DVec3::AXES[axis]).cross(lever);
            outer(column, column)
        }
        None => DMat3::from_diagonal(DVec3::splat(lever.length_squared())) - outer(lever, lever),
    }
}

/// The polish's `y`: `(J Jᵀ + λI) y = e` with `λ` = `damping` times the mean diagonal of
/// `J Jᵀ`; `None` when the system is singular.
fn polish_direction(normal: DMat3, damping: f64, error: DVec3) -> Option<DVec3> {
    let scale = (normal.x_axis.x + normal.y_axis.y + normal.z_axis.z) / 3.0;
    let system = normal + DMat3::from_diagonal(DVec3::splat(damping * scale.max(1e-300)));
    let determinant = system.determinant();
    (determinant.is_finite() && determinant.abs() >= 1e-300).then(|| system.inverse() * error)
}

/// One link's polish step from its own rotation `own` (`ik · animated`) for the lever `r` and
/// the polish's `y`: a ball link turns by `ω = r × y` (taken into its own frame), clamped to
/// its Euler limit if it has one (the decomposition nearest `previous`; the new angles are
/// returned); a plane-mode link by `a · (r × y)` about its axis, clamped to its range.
fn polish_link(
    link: &LinkPlan,
    own: DQuat,
    parent: DQuat,
    lever: DVec3,
    y: DVec3,
    previous: DVec3,
) -> (DQuat, DVec3) {
    let turn = lever.cross(y);
    match (link.plane, link.limit) {
        (Some(axis), Some(limit)) => {
            let u = DVec3::AXES[axis];
            let angle = 2.0 * own.xyz().dot(u).atan2(own.w);
            let step = (parent * u).dot(turn);
            let next = (angle + step).clamp(limit.min[axis], limit.max[axis]);
            (DQuat::from_axis_angle(u, next), previous)
        }
        (_, limit) => {
            let rotation = (DQuat::from_scaled_axis(parent.inverse() * turn) * own).normalize();
            match limit {
                Some(limit) => clamp_euler(rotation, &limit, previous, PI),
                None => (rotation, previous),
            }
        }
    }
}

/// `a bᵀ`.
fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// For a consecutive chain whose links have the own rotations `state.local` (`trial`) or
/// `state.best_own`: each link's origin and its parent's rotation in the chain's base frame
/// (into `state.origin`, `state.parent_rotation`), top first; returns the effector there.
fn chain_points(n: usize, trial: bool, state: &mut State) -> DVec3 {
    let State {
        local,
        best_own,
        append,
        offset,
        origin,
        parent_rotation,
        effector_offset,
        ..
    } = state;
    let own = if trial { local } else { best_own };
    let (mut rotation, mut position) = (DQuat::IDENTITY, DVec3::ZERO);
    for k in (0..n).rev() {
        position += rotation * offset[k];
        origin[k] = position;
        parent_rotation[k] = rotation;
        rotation = match append[k] {
            Some(append) => rotation * own[k] * append,
            None => rotation * own[k],
        };
    }
    position + rotation * *effector_offset
}
