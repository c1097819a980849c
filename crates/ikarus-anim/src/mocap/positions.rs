//! Joint positions → posture, one frame at a time (seed 004, IK overview: posture from joint
//! positions).
//!
//! Per joint, parents first, with the joint placed where its solved parent puts it:
//! - **a root** owning a point goes to it; a root without one is placed with its rotation by
//!   the best rigid fit of its frontier (Procrustes: centroids, then the best rotation);
//! - **several frontier points** (pelvis from both hips and the spine, chest from the neck and
//!   both shoulders: the IK overview's `R = (l_j l_k l_m)(l_j0 l_k0 l_m0)⁻¹`) give the best proper
//!   rotation by Horn's method ([`RotationFit`]);
//! - **one point** gives the shortest rotation from the rest bone onto it, keeping the rest
//!   twist; the limbs' upper bones instead take their twist from the plane of their three
//!   points (the elbow or knee bends about its rest axis), blended toward the previous frame's
//!   twist as the limb straightens and the plane is lost, so the twist never flips;
//! - **no point below** (toes, fingers, eyes without points): the rest rotation;
//! - a chain of joints without points of their own (spine segments) shares the bend
//!   (see [`binding`](super::binding)).

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::{LocalPose, Skeleton};
use ikarus_solve::recover::{RotationFit, shortest_arc_on};

use super::binding::{Binding, JointPlan, VirtualPoint, near};

/// Prepared per-frame solver: a binding and its buffers. Solving allocates nothing.
#[derive(Clone, Debug)]
pub struct PositionSolver {
    binding: Binding,
    rest: Vec<ikarus_core::Transform>,
    model: Vec<DAffine3>,
    previous: Option<LocalPose>,
    stretch: bool,
    /// The frame's points followed by the virtual points.
    points: Vec<DVec3>,
}

/// Bend (sine of the angle between a limb's two bones) below which the bend plane gives no
/// twist, and above which it gives all of it.
const BEND_LOST: f64 = 0.1;
const BEND_SURE: f64 = 0.35;
/// Largest change of a limb's twist from one frame to the next that the bend plane may cause,
/// radians: a plane that swings faster (noise on a nearly straight limb) is followed slowly.
const MAX_TWIST_STEP: f64 = 0.1;

impl PositionSolver {
    /// A solver for `skeleton` with `binding` (made for the same skeleton).
    pub fn new(skeleton: &Skeleton, binding: Binding) -> Self {
        Self {
            binding,
            rest: skeleton.rest_transforms().to_vec(),
            model: vec![DAffine3::IDENTITY; skeleton.len()],
            previous: None,
            stretch: false,
            points: Vec::new(),
        }
    }

    /// The binding.
    pub fn binding(&self) -> &Binding {
        &self.binding
    }

    /// With `stretch`, a joint owning a point whose parent owns one too is moved along its
    /// bone to that frame's measured distance (see `BoneLengths::PerFrame`). Default off.
    pub fn set_stretch(&mut self, stretch: bool) {
        self.stretch = stretch;
    }

    /// Forgets the previous frame (the next frame's twists start from rest).
    pub fn reset(&mut self) {
        self.previous = None;
    }

    /// The posture for one frame of keypoints (model space, `binding().len()` points; points
    /// not used by the binding are not read, used ones must be finite). Writes `pose` (sized for
    /// the skeleton) and remembers it as the previous frame.
    pub fn solve_frame(&mut self, skeleton: &Skeleton, points: &[DVec3], pose: &mut LocalPose) {
        pose.transforms_mut().copy_from_slice(&self.rest);
        let mut all = std::mem::take(&mut self.points);
        all.clear();
        all.extend_from_slice(&points[..self.binding.len().min(points.len())]);
        all.resize(self.binding.len(), DVec3::ZERO);
        for v in &self.binding.virtuals {
            all.push(place_virtual(v, &all));
        }
        self.solve_joints(skeleton, &all, pose);
        self.points = all;
        match &mut self.previous {
            Some(previous) => previous.transforms_mut().copy_from_slice(pose.transforms()),
            None => self.previous = Some(pose.clone()),
        }
    }

    fn solve_joints(&mut self, skeleton: &Skeleton, points: &[DVec3], pose: &mut LocalPose) {
        for j in skeleton.joints() {
            let i = j.index();
            let plan = &self.binding.plans[i];
            let parent = skeleton.parent(j);
            let model_from_parent = parent.map_or(DAffine3::IDENTITY, |p| self.model[p.index()]);
            let reference = self.rest[i].rotation;
            if parent.is_none() {
                if let Some(k) = plan.origin {
                    pose[j].translation = points[k as usize];
                } else if !plan.frontier.is_empty() {
                    let (rotation, translation) = place_root(plan, points, reference);
                    pose[j].rotation = rotation;
                    pose[j].translation = translation;
                    self.model[i] = pose[j].to_affine();
                    continue;
                }
            }
            if self.stretch
                && !plan.translate
                && let (Some(k), Some(p)) = (plan.origin, parent)
                && self.binding.plans[p.index()].origin.is_some()
            {
                let measured = (points[k as usize] - model_from_parent.translation).length();
                let local = model_from_parent.matrix3 * (self.rest[i].translation);
                let ratio = measured / local.length();
                if ratio.is_finite() {
                    pose[j].translation = self.rest[i].translation * ratio;
                }
            }
            if plan.translate
                && let Some(k) = plan.origin
            {
                let local = model_from_parent
                    .inverse()
                    .transform_point3(points[k as usize]);
                if local.is_finite() {
                    pose[j].translation = local;
                }
            }
            if !plan.frontier.is_empty() {
                let at = model_from_parent.transform_point3(pose[j].translation);
                let parent_from_model = model_from_parent.matrix3.inverse();
                if parent_from_model.is_finite() {
                    let previous = self.previous.as_ref().map(|p| p[j].rotation);
                    let rotation =
                        fit_joint(plan, points, at, &parent_from_model, reference, previous);
                    pose[j].rotation = rotation;
                }
            }
            self.model[i] = model_from_parent * pose[j].to_affine();
        }
        match &mut self.previous {
            Some(previous) => previous.transforms_mut().copy_from_slice(pose.transforms()),
            None => self.previous = Some(pose.clone()),
        }
    }
}

fn fit_joint(
    plan: &JointPlan,
    points: &[DVec3],
    at: DVec3,
    parent_from_model: &glam::DMat3,
    reference: DQuat,
    previous: Option<DQuat>,
) -> DQuat {
    let rotation = if let (Some(cue), Some(bone)) = (plan.cue, plan.frontier.first()) {
        let middle = points[cue.middle as usize];
        let upper = middle - at;
        let lower = points[cue.end as usize] - middle;
        let normal = upper.cross(lower);
        let sine = normal.length() / (upper.length() * lower.length());
        let to_bone = *parent_from_model * upper;
        let carry = shortest_arc_on(previous.unwrap_or(reference), bone.from, to_bone);
        let weight = smoothstep((sine - BEND_LOST) / (BEND_SURE - BEND_LOST));
        let bent = (weight > 0.0 && sine.is_finite())
            .then(|| frame_pair(bone.from, cue.axis, to_bone, *parent_from_model * normal))
            .flatten();
        match bent {
            Some(bent) => {
                let bent = near(bent, carry);
                let angle = carry.angle_between(bent);
                let step = (weight * angle).min(MAX_TWIST_STEP);
                if angle > 0.0 {
                    carry.slerp(bent, step / angle)
                } else {
                    carry
                }
            }
            None => carry,
        }
    } else {
        let mut fit = RotationFit::new();
        for f in &plan.frontier {
            let to = *parent_from_model * (points[f.k as usize] - at);
            fit.add(f.from, to, f.weight);
        }
        fit.solve(reference).rotation
    };
    let rotation = if plan.share < 1.0 {
        reference.slerp(near(rotation, reference), plan.share)
    } else {
        rotation
    };
    let rotation = rotation.normalize();
    if rotation.is_finite() {
        rotation
    } else {
        reference
    }
}

/// A root without its own point: the rotation and translation that best place its frontier
/// (weighted centroids, then Horn on the centred vectors).
fn place_root(plan: &JointPlan, points: &[DVec3], reference: DQuat) -> (DQuat, DVec3) {
    let (mut mean_from, mut mean_to, mut total) = (DVec3::ZERO, DVec3::ZERO, 0.0);
    for f in &plan.frontier {
        mean_from += f.from * f.weight;
        mean_to += points[f.k as usize] * f.weight;
        total += f.weight;
    }
    mean_from /= total;
    mean_to /= total;
    let mut fit = RotationFit::new();
    for f in &plan.frontier {
        fit.add(f.from - mean_from, points[f.k as usize] - mean_to, f.weight);
    }
    let rotation = if plan.frontier.len() >= 2 {
        fit.solve(reference).rotation
    } else {
        reference
    };
    let rotation = if plan.share < 1.0 {
        reference.slerp(near(rotation, reference), plan.share)
    } else {
        rotation
    };
    (rotation, mean_to - rotation * mean_from)
}

/// The origin of a joint placed by the best rigid fit of its sites.
fn place_virtual(v: &VirtualPoint, points: &[DVec3]) -> DVec3 {
    let count = v.sites.len() as f64;
    let mean_from = v.sites.iter().map(|s| s.1).sum::<DVec3>() / count;
    let mean_to = v.sites.iter().map(|s| points[s.0 as usize]).sum::<DVec3>() / count;
    let mut fit = RotationFit::new();
    for &(k, offset) in &v.sites {
        fit.add(offset - mean_from, points[k as usize] - mean_to, 1.0);
    }
    let rotation = fit.solve(v.reference).rotation;
    mean_to - rotation * mean_from
}

/// The rotation taking the frame of `from` (a direction) and `from_axis` (perpendicular to it)
/// onto the frame of `to` and `to_axis` (perpendicular): the limb's bone and bend axis.
fn frame_pair(from: DVec3, from_axis: DVec3, to: DVec3, to_axis: DVec3) -> Option<DQuat> {
    let frame = |a: DVec3, b: DVec3| {
        let x = a.try_normalize()?;
        let y = (b - x * b.dot(x)).try_normalize()?;
        Some(glam::DMat3::from_cols(x, y, x.cross(y)))
    };
    let rotation = frame(to, to_axis)? * frame(from, from_axis)?.transpose();
    let q = DQuat::from_mat3(&rotation).normalize();
    q.is_finite().then_some(q)
}

fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}
