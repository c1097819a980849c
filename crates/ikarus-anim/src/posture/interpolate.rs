//! Feature-driven interpolation of example postures (Kovar & Gleicher, "Automated extraction and
//! parameterization of motions in large data sets", 2004): examples annotated with a feature
//! (a hand position for reaching, a foot position for kicking) give, for a new feature value,
//! blend weights and a blended posture.
//!
//! Weights are **k-nearest with inverse distance**, in the form that stays continuous as the
//! neighbour set changes: with `d_1 ≤ … ≤ d_k` the distances to the `k` nearest examples,
//! `w_i ∝ 1/d_i − 1/d_k` for `i < k` (the `k`-th neighbour has weight 0, so a neighbour enters
//! and leaves the set with weight 0), normalised to sum to 1; a feature equal to an example's
//! gives that example alone. Postures blend as weighted sums of rotation vectors about each
//! joint's Karcher mean over the examples (the parameterisation of the posture model).

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, Skeleton};
use ikarus_solve::dofs::rotation_vector;

use super::karcher_mean;

/// Why an interpolator could not be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InterpolateError {
    /// No examples, or `k` below 2.
    #[error("need at least one example and k ≥ 2 (got {examples} examples, k = {k})")]
    Empty {
        /// Examples given.
        examples: usize,
        /// Neighbours asked for.
        k: usize,
    },
    /// Examples disagree in feature length, or a feature value is not finite.
    #[error("example {0}: features must all have the same length and be finite")]
    Feature(usize),
    /// An example pose does not fit the skeleton.
    #[error("example {0}: the pose has the wrong joint count")]
    Pose(usize),
}

/// Example postures of some joints with their features (see the module docs).
#[derive(Clone, Debug)]
pub struct FeatureInterpolator {
    joints: Vec<JointId>,
    mean: Vec<DQuat>,
    /// Per example, the feature.
    features: Vec<Vec<f64>>,
    /// Per example, the rotation vectors about `mean` (`3·joints`).
    postures: Vec<Vec<f64>>,
    k: usize,
}

impl FeatureInterpolator {
    /// Examples `(feature, pose)` of `skeleton`'s `joints`, blended from `k` neighbours.
    ///
    /// # Errors
    /// [`InterpolateError`] for no examples, `k < 2`, uneven or non-finite features, or poses
    /// that do not fit.
    pub fn new(
        skeleton: &Skeleton,
        joints: &[JointId],
        examples: &[(Vec<f64>, LocalPose)],
        k: usize,
    ) -> Result<Self, InterpolateError> {
        if examples.is_empty() || k < 2 {
            return Err(InterpolateError::Empty {
                examples: examples.len(),
                k,
            });
        }
        let width = examples[0].0.len();
        for (i, (feature, pose)) in examples.iter().enumerate() {
            if feature.len() != width || !feature.iter().all(|v| v.is_finite()) {
                return Err(InterpolateError::Feature(i));
            }
            if pose.len() != skeleton.len() {
                return Err(InterpolateError::Pose(i));
            }
        }
        let mean: Vec<DQuat> = joints
            .iter()
            .map(|&j| {
                let rotations: Vec<DQuat> = examples
                    .iter()
                    .map(|(_, p)| p[j].rotation.normalize())
                    .collect();
                karcher_mean(&rotations)
            })
            .collect();
        let postures = examples
            .iter()
            .map(|(_, pose)| {
                joints
                    .iter()
                    .zip(&mean)
                    .flat_map(|(&j, m)| {
                        rotation_vector(m.conjugate() * pose[j].rotation).to_array()
                    })
                    .collect()
            })
            .collect();
        Ok(Self {
            joints: joints.to_vec(),
            mean,
            features: examples.iter().map(|(f, _)| f.clone()).collect(),
            postures,
            k,
        })
    }

    /// The blend weights for `feature`: `(example index, weight)`, weights summing to 1; empty
    /// when the feature has the wrong length or is not finite.
    pub fn weights(&self, feature: &[f64]) -> Vec<(usize, f64)> {
        if feature.len() != self.features[0].len() || !feature.iter().all(|v| v.is_finite()) {
            return Vec::new();
        }
        let mut distances: Vec<(usize, f64)> = self
            .features
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let d2: f64 = f.iter().zip(feature).map(|(a, b)| (a - b) * (a - b)).sum();
                (i, d2.sqrt())
            })
            .collect();
        distances.sort_by(|a, b| a.1.total_cmp(&b.1));
        let nearest = distances[0];
        if nearest.1 <= f64::EPSILON * (1.0 + feature.iter().map(|v| v.abs()).sum::<f64>()) {
            return vec![(nearest.0, 1.0)];
        }
        distances.truncate(self.k);
        let last = distances[distances.len() - 1].1;
        let mut weights: Vec<(usize, f64)> = distances
            .iter()
            .map(|&(i, d)| (i, (1.0 / d - 1.0 / last).max(0.0)))
            .collect();
        let sum: f64 = weights.iter().map(|w| w.1).sum();
        if sum <= 0.0 {
            // Every neighbour at the same distance: equal weights.
            #[allow(clippy::cast_precision_loss)]
            let equal = 1.0 / weights.len() as f64;
            for w in &mut weights {
                w.1 = equal;
            }
        } else {
            for w in &mut weights {
                w.1 /= sum;
            }
        }
        weights.retain(|w| w.1 > 0.0);
        weights
    }

    /// Writes the blended posture for `feature` into `pose`'s modelled joints (others untouched)
    /// and returns the weights; leaves `pose` untouched when [`weights`](Self::weights) is empty.
    pub fn interpolate(&self, feature: &[f64], pose: &mut LocalPose) -> Vec<(usize, f64)> {
        let weights = self.weights(feature);
        if weights.is_empty() {
            return weights;
        }
        for (k, (&joint, mean)) in self.joints.iter().zip(&self.mean).enumerate() {
            let v = weights.iter().fold(DVec3::ZERO, |acc, &(i, w)| {
                let p = &self.postures[i];
                acc + DVec3::new(p[3 * k], p[3 * k + 1], p[3 * k + 2]) * w
            });
            pose[joint].rotation = (*mean * DQuat::from_scaled_axis(v)).normalize();
        }
        weights
    }
}
