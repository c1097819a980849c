//! Posture models learned from motions (example-based IK, seed 004, IK overview): which joints a
//! model covers, the learner ([`learn`]: Karcher means, then probabilistic PCA on rotation vectors
//! about them — see [`ikarus_solve::example_based::PostureModel`] for the parameterisation), postures
//! carried between humanoids through their bone maps ([`HumanoidTransfer`]) so one skeleton can
//! learn from another's motions, and feature-driven interpolation of example postures
//! ([`FeatureInterpolator`], Kovar–Gleicher).

mod interpolate;
mod transfer;

pub use interpolate::{FeatureInterpolator, InterpolateError};
pub use transfer::HumanoidTransfer;

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, Skeleton, fk};
use ikarus_solve::dofs::rotation_vector;
use ikarus_solve::example_based::{ModelError, ModelParts, PostureModel};
use nalgebra::{DMatrix, SymmetricEigen};

/// Why a model could not be learned.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LearnError {
    /// Fewer than two frames.
    #[error("a posture model needs at least 2 frames, got {0}")]
    TooFewFrames(usize),
    /// No joint to model.
    #[error("no joints to model (the skeleton has nothing below its root or hips)")]
    NoJoints,
    /// A frame does not match the skeleton, or holds a non-finite rotation.
    #[error("frame {frame}: {reason}")]
    BadFrame {
        /// The frame's index over all frames given.
        frame: usize,
        /// What is wrong.
        reason: String,
    },
    /// The learned numbers did not make a valid model.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Zero latent dimensions asked for. Ask for at least 1 (12 suits a humanoid).
    #[error("a posture model needs at least 1 latent dimension")]
    NoDims,
    /// A frame step of zero. Use 1 for every frame, N for every N-th.
    #[error("the frame step must be at least 1")]
    NoStep,
    /// A motion without frames. Leave it out.
    #[error("the motion has no frames to learn from")]
    EmptyMotion {
        /// The motion's index in the list given.
        motion: usize,
    },
    /// A motion of another skeleton whose humanoid map shares too few bones with the model's
    /// to carry its postures over. Give motions of humanoids whose bones the maps recognise.
    #[error(
        "its skeleton differs from the model's and the humanoid maps match too few bones \
         ({matched}, at least {MIN_MATCHED} needed) to carry its postures over"
    )]
    Unmatched {
        /// The motion's index in the list given.
        motion: usize,
        /// Bones the two maps share.
        matched: usize,
    },
}

/// The fewest bones two humanoid maps must share for [`learn_from_motions`] to carry postures
/// from one skeleton to the other.
pub const MIN_MATCHED: usize = 10;

/// A model learned by [`learn_from_motions`], with what went into it.
#[derive(Clone, Debug)]
pub struct Learned {
    /// The model.
    pub model: PostureModel,
    /// Frames that were outside the target's joint limits and were moved onto them first.
    pub projected: usize,
}

/// Learns a posture model of `target` from whole motions, each with its own skeleton (what
/// `ikarus learn` and the Python `ikarus.learn` run): every `every`-th frame of each motion;
/// motions of another skeleton (other joint names) carried onto `target` bone by bone through
/// both humanoid maps ([`HumanoidTransfer`], at least [`MIN_MATCHED`] shared bones); frames
/// outside `target`'s joint limits moved onto them (the model describes postures the skeleton
/// may take); then [`learn`] on [`modelled_joints`] with `dims` latent dimensions; then the
/// motion part ([`learn_motion`]) from each motion's frames [`MOTION_LAG_SECONDS`] apart (at
/// least one picked frame), when the motions hold at least two such pairs.
///
/// # Errors
/// [`LearnError::NoDims`], [`LearnError::NoStep`], [`LearnError::EmptyMotion`],
/// [`LearnError::Unmatched`] naming the motion, or [`learn`]'s errors.
pub fn learn_from_motions(
    target: &Skeleton,
    motions: &[(&Skeleton, &Motion)],
    dims: usize,
    every: usize,
) -> Result<Learned, LearnError> {
    if dims == 0 {
        return Err(LearnError::NoDims);
    }
    if every == 0 {
        return Err(LearnError::NoStep);
    }
    let target_map = HumanoidMap::recognise(target);
    let mut frames: Vec<LocalPose> = Vec::new();
    // Per motion: where its frames start in `frames`, and the lag of the motion part.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (index, &(skeleton, motion)) in motions.iter().enumerate() {
        if motion.is_empty() {
            return Err(LearnError::EmptyMotion { motion: index });
        }
        #[allow(clippy::cast_precision_loss)] // a frame step far below 2^52
        let step = motion.frame_time() * every as f64;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a few frames
        let lag = (MOTION_LAG_SECONDS / step).round().max(1.0) as usize;
        runs.push((frames.len(), lag));
        let picked = motion.frames().iter().step_by(every);
        if skeleton.names() == target.names() {
            frames.extend(picked.cloned());
            continue;
        }
        let source_map = HumanoidMap::recognise(skeleton);
        let transfer = HumanoidTransfer::new(skeleton, &source_map, target, &target_map);
        let matched = transfer.as_ref().map_or(0, HumanoidTransfer::matched);
        let Some(transfer) = transfer.filter(|_| matched >= MIN_MATCHED) else {
            return Err(LearnError::Unmatched {
                motion: index,
                matched,
            });
        };
        for frame in picked {
            let mut out = target.rest_pose();
            transfer.apply(skeleton, frame, target, &mut out);
            frames.push(out);
        }
    }
    let mut projected = 0;
    for frame in &mut frames {
        projected += usize::from(target.project_to_limits(frame) > 0);
    }
    let joints = modelled_joints(target, Some(&target_map).filter(|m| !m.is_empty()));
    let model = learn(target, &joints, &frames, dims)?;
    // The motion part, from each motion's run of frames at its own lag, when they hold pairs.
    let ends = runs.iter().skip(1).map(|r| r.0).chain([frames.len()]);
    let runs: Vec<(&[LocalPose], usize)> = runs
        .iter()
        .zip(ends)
        .map(|(&(start, lag), end)| (&frames[start..end], lag))
        .collect();
    let (covariance, pairs) = motion_covariance(&model, target, &runs)?;
    let model = if pairs >= 2 {
        model.with_motion(covariance)?
    } else {
        model
    };
    Ok(Learned { model, projected })
}

/// The time between the two frames of the motion part's changes (seconds): the spacing of the
/// naturalness protocol's held-out frames, a drag's or a per-frame solve's step at 15 fps.
pub const MOTION_LAG_SECONDS: f64 = 1.0 / 15.0;

/// Adds the motion part to `model` ([`PostureModel::with_motion`]): the covariance of the
/// latent point's change over `lag` frames, measured on `runs` (each a run of consecutive
/// frames of `skeleton`; pairs never span two runs). The latent points are the frames'
/// posterior means; a ridge of 1e-6 of the mean variance keeps the covariance invertible.
///
/// # Errors
/// [`LearnError::NoStep`] for a lag of 0, [`LearnError::TooFewFrames`] when the runs hold
/// fewer than two pairs `lag` frames apart, [`LearnError::Model`] when the model does not fit
/// `skeleton`, [`LearnError::BadFrame`] for a frame of another size.
pub fn learn_motion(
    model: PostureModel,
    skeleton: &Skeleton,
    runs: &[&[LocalPose]],
    lag: usize,
) -> Result<PostureModel, LearnError> {
    if lag == 0 {
        return Err(LearnError::NoStep);
    }
    let runs: Vec<(&[LocalPose], usize)> = runs.iter().map(|&run| (run, lag)).collect();
    let (covariance, pairs) = motion_covariance(&model, skeleton, &runs)?;
    if pairs < 2 {
        return Err(LearnError::TooFewFrames(pairs));
    }
    Ok(model.with_motion(covariance)?)
}

/// The motion part's covariance over `runs` (each with its own lag, at least 1), row-major,
/// and the number of pairs it was measured on (see [`learn_motion`]).
fn motion_covariance(
    model: &PostureModel,
    skeleton: &Skeleton,
    runs: &[(&[LocalPose], usize)],
) -> Result<(Vec<f64>, usize), LearnError> {
    let joints = model.bind(skeleton)?;
    let k = model.dims();
    let mut sum = DMatrix::<f64>::zeros(k, k);
    let mut pairs = 0_usize;
    let mut x = vec![0.0; model.len()];
    let mut seen = 0;
    for &(run, lag) in runs {
        let mut latent = Vec::with_capacity(run.len());
        for (i, frame) in run.iter().enumerate() {
            if frame.len() != skeleton.len() {
                return Err(LearnError::BadFrame {
                    frame: seen + i,
                    reason: format!(
                        "{} joints, the skeleton has {}",
                        frame.len(),
                        skeleton.len()
                    ),
                });
            }
            model.encode(frame, &joints, &mut x);
            latent.push(nalgebra::DVector::from_vec(model.latent_of(&x)));
        }
        seen += run.len();
        for (a, b) in latent.iter().zip(latent.iter().skip(lag.max(1))) {
            let d = b - a;
            sum += &d * d.transpose();
            pairs += 1;
        }
    }
    #[allow(clippy::cast_precision_loss)] // frame counts far below 2^52
    let mut covariance = sum / pairs.max(1) as f64;
    #[allow(clippy::cast_precision_loss)]
    let ridge = 1e-6 * covariance.trace() / k.max(1) as f64;
    for a in 0..k {
        covariance[(a, a)] += ridge.max(f64::MIN_POSITIVE);
    }
    // Exactly symmetric, row-major.
    let rows = (0..k * k)
        .map(|i| {
            let (a, b) = (i / k, i % k);
            0.5 * (covariance[(a, b)] + covariance[(b, a)])
        })
        .collect();
    Ok((rows, pairs))
}

/// The joints a posture model of `skeleton` covers: everything below the hips when the map
/// names them (the hips and the joints above carry the root transform, which the solvers keep
/// fixed), otherwise everything below the root.
pub fn modelled_joints(skeleton: &Skeleton, map: Option<&HumanoidMap>) -> Vec<JointId> {
    let top = map
        .and_then(|m| m.joint(HumanoidBone::Hips))
        .or_else(|| skeleton.roots().next());
    let Some(top) = top else { return Vec::new() };
    skeleton
        .joints()
        .filter(|&j| j != top && skeleton.is_ancestor_or_self(top, j))
        .collect()
}

/// The rest height of `skeleton` (vertical extent of its joints at rest), or its largest extent
/// when flat, or 1: the length scale a model records.
pub fn rest_height(skeleton: &Skeleton) -> f64 {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut model);
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for p in model.positions() {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    let extent = hi - lo;
    [extent.y, extent.max_element(), 1.0]
        .into_iter()
        .find(|v| v.is_finite() && *v > 1e-9)
        .unwrap_or(1.0)
}

/// Learns a posture model of `joints` from `frames` of `skeleton` with `dims` latent
/// dimensions (at most `3·joints`; the rest of the variance becomes the isotropic noise).
///
/// Each joint's mean is its Karcher mean (the rotation minimising the summed squared geodesic
/// distances, by fixed-point iteration from the first frame); postures are the rotation vectors
/// about it; `W` and `σ²` are the maximum-likelihood PPCA solution from the eigenvectors of the
/// sample covariance.
///
/// # Errors
/// [`LearnError`] for fewer than two frames, no joints, or a frame that does not fit.
pub fn learn(
    skeleton: &Skeleton,
    joints: &[JointId],
    frames: &[LocalPose],
    dims: usize,
) -> Result<PostureModel, LearnError> {
    if frames.len() < 2 {
        return Err(LearnError::TooFewFrames(frames.len()));
    }
    if joints.is_empty() {
        return Err(LearnError::NoJoints);
    }
    for (i, frame) in frames.iter().enumerate() {
        if frame.len() != skeleton.len() {
            return Err(LearnError::BadFrame {
                frame: i,
                reason: format!(
                    "{} joints, the skeleton has {}",
                    frame.len(),
                    skeleton.len()
                ),
            });
        }
        if let Some(&j) = joints.iter().find(|&&j| !frame[j].rotation.is_finite()) {
            return Err(LearnError::BadFrame {
                frame: i,
                reason: format!("joint {:?} has a non-finite rotation", skeleton.name(j)),
            });
        }
    }
    let mean: Vec<DQuat> = joints
        .iter()
        .map(|&j| {
            let rotations: Vec<DQuat> = frames.iter().map(|f| f[j].rotation.normalize()).collect();
            karcher_mean(&rotations)
        })
        .collect();
    let n = 3 * joints.len();
    let count = frames.len();
    let mut data = DMatrix::<f64>::zeros(count, n);
    for (i, frame) in frames.iter().enumerate() {
        for (k, &j) in joints.iter().enumerate() {
            let v = rotation_vector(mean[k].conjugate() * frame[j].rotation.normalize());
            for c in 0..3 {
                data[(i, 3 * k + c)] = v[c];
            }
        }
    }
    let offset: Vec<f64> = (0..n).map(|c| data.column(c).mean()).collect();
    for (c, &m) in offset.iter().enumerate() {
        data.column_mut(c).add_scalar_mut(-m);
    }
    #[allow(clippy::cast_precision_loss)] // frame counts far below 2^52
    let covariance = data.transpose() * &data / count as f64;
    let eigen = SymmetricEigen::new(covariance);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
    let k = dims.min(n);
    let values: Vec<f64> = order
        .iter()
        .map(|&i| eigen.eigenvalues[i].max(0.0))
        .collect();
    let total: f64 = values.iter().sum();
    #[allow(clippy::cast_precision_loss)]
    let noise = if k < n {
        values[k..].iter().sum::<f64>() / (n - k) as f64
    } else {
        0.0
    }
    .max(total * 1e-9)
    .max(1e-12);
    let mut basis = vec![0.0; n * k];
    for (a, &i) in order.iter().take(k).enumerate() {
        let scale = (values[a] - noise).max(0.0).sqrt();
        for row in 0..n {
            basis[row * k + a] = eigen.eigenvectors[(row, i)] * scale;
        }
    }
    Ok(PostureModel::new(ModelParts {
        joints: joints
            .iter()
            .map(|&j| skeleton.name(j).to_owned())
            .collect(),
        mean,
        offset,
        basis,
        variances: values[..k].to_vec(),
        noise,
        scale: rest_height(skeleton),
        frames: count,
    })?)
}

/// The Karcher mean of unit rotations: `m ← m · exp(mean_i log(m⁻¹ q_i))` until the update is
/// below 1e-12 rad (at most 50 rounds), starting from the first.
pub fn karcher_mean(rotations: &[DQuat]) -> DQuat {
    let Some(&first) = rotations.first() else {
        return DQuat::IDENTITY;
    };
    let mut mean = first;
    for _ in 0..50 {
        let (sum, count) = rotations.iter().fold((DVec3::ZERO, 0.0), |(s, c), q| {
            (s + rotation_vector(mean.conjugate() * *q), c + 1.0)
        });
        let step = sum / count;
        mean = (mean * DQuat::from_scaled_axis(step)).normalize();
        if step.length() < 1e-12 {
            break;
        }
    }
    mean
}

/// Mean per-joint position error between two poses of `skeleton`, over all joints, in the
/// skeleton's length unit (MPJPE).
pub fn mean_joint_error(skeleton: &Skeleton, a: &LocalPose, b: &LocalPose) -> f64 {
    let mut ma = ModelPose::new(skeleton);
    let mut mb = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, a, &mut ma);
    fk::forward_kinematics(skeleton, b, &mut mb);
    #[allow(clippy::cast_precision_loss)]
    let count = skeleton.len().max(1) as f64;
    ma.positions()
        .zip(mb.positions())
        .map(|(p, q)| p.distance(q))
        .sum::<f64>()
        / count
}
