//! Blending poses and motions: a weighted mix of two poses or clips with an optional per-joint
//! mask (e.g. the upper body from one clip, the legs from another), and a crossfade from one
//! clip to another — the layer and transition operations of ozz-animation's `BlendingJob` and
//! Unity's animator.
//!
//! ## Conventions
//!
//! A weight `w` mixes `a` (at `w = 0`) and `b` (at `w = 1`): translations and scales by
//! `(1 − w) a + w b`, rotations by shortest-path slerp or normalised lerp ([`RotationBlend`]).
//! With a [`JointMask`], joint `j` uses `w · mask[j]`, so a mask weight of 0 keeps `a`'s joint
//! exactly. Weights 0 and 1 reproduce the inputs bit for bit. Clips are aligned on their
//! clocks: frame `k` is at `k · frame_time`, and a clip holds its last frame after its end.

use crate::trajectory::Profile;
use crate::{JointId, LocalPose, Motion, MotionError, Skeleton, Transform};

/// How rotations are mixed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum RotationBlend {
    /// Shortest-path spherical interpolation: constant angular speed in the weight. Default.
    #[default]
    Slerp,
    /// Normalised linear interpolation of the hemisphere-aligned quaternions (ozz's choice):
    /// cheaper, the same end points and path, uneven speed in the weight.
    Nlerp,
}

/// A weight in `[0, 1]` per joint, multiplying a blend's weight.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JointMask {
    weights: Vec<f64>,
}

impl JointMask {
    /// A mask of `weight` on every joint of `skeleton` (clamped to `[0, 1]`; NaN counts as 0).
    pub fn uniform(skeleton: &Skeleton, weight: f64) -> Self {
        Self {
            weights: vec![clamp_weight(weight); skeleton.len()],
        }
    }

    /// A mask from one weight per joint, in the skeleton's joint order.
    ///
    /// # Errors
    /// [`MotionError::InvalidWeight`] when a weight is outside `[0, 1]` or not a number.
    pub fn from_weights(weights: Vec<f64>) -> Result<Self, MotionError> {
        if let Some(&weight) = weights.iter().find(|w| !(0.0..=1.0).contains(*w)) {
            return Err(MotionError::InvalidWeight { weight });
        }
        Ok(Self { weights })
    }

    /// Returns the mask with `weight` on `joint` and all its descendants (clamped to `[0, 1]`).
    ///
    /// # Panics
    /// When the mask was made for another skeleton (fewer joints than the subtree needs).
    #[must_use]
    pub fn with_subtree(mut self, skeleton: &Skeleton, joint: JointId, weight: f64) -> Self {
        let weight = clamp_weight(weight);
        for w in &mut self.weights[skeleton.subtree(joint)] {
            *w = weight;
        }
        self
    }

    /// The weights, indexed by joint.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }
}

fn clamp_weight(weight: f64) -> f64 {
    if weight.is_nan() {
        0.0
    } else {
        weight.clamp(0.0, 1.0)
    }
}

/// Mixes two transforms: `a` at `w = 0`, `b` at `w = 1` (exactly), in between as the module
/// docs say.
#[must_use]
pub fn blend_transforms(
    a: &Transform,
    b: &Transform,
    w: f64,
    rotation: RotationBlend,
) -> Transform {
    if w <= 0.0 {
        return *a;
    }
    if w >= 1.0 {
        return *b;
    }
    Transform {
        translation: a.translation + (b.translation - a.translation) * w,
        rotation: match rotation {
            RotationBlend::Slerp => a.rotation.slerp(b.rotation, w),
            RotationBlend::Nlerp => {
                let b = if a.rotation.dot(b.rotation) < 0.0 {
                    -b.rotation
                } else {
                    b.rotation
                };
                (a.rotation * (1.0 - w) + b * w).normalize()
            }
        },
        scale: a.scale + (b.scale - a.scale) * w,
    }
}

/// Writes the blend of `a` and `b` with `weight` (clamped to `[0, 1]`), times `mask` per joint
/// when given, into `out`. Allocates nothing.
///
/// # Errors
/// [`MotionError::JointCount`] when the poses or the mask differ in joint count,
/// [`MotionError::InvalidWeight`] when `weight` is NaN.
pub fn blend_poses(
    a: &LocalPose,
    b: &LocalPose,
    weight: f64,
    mask: Option<&JointMask>,
    rotation: RotationBlend,
    out: &mut LocalPose,
) -> Result<(), MotionError> {
    if weight.is_nan() {
        return Err(MotionError::InvalidWeight { weight });
    }
    let expected = a.len();
    for found in [
        b.len(),
        out.len(),
        mask.map_or(expected, |m| m.weights.len()),
    ] {
        if found != expected {
            return Err(MotionError::JointCount { expected, found });
        }
    }
    let weight = weight.clamp(0.0, 1.0);
    for (j, ((out, a), b)) in out
        .transforms_mut()
        .iter_mut()
        .zip(a.transforms())
        .zip(b.transforms())
        .enumerate()
    {
        let w = mask.map_or(weight, |m| weight * m.weights[j]);
        *out = blend_transforms(a, b, w, rotation);
    }
    Ok(())
}

/// The blend of two clips with a constant `weight` (and optional mask): frame time of `a`,
/// lasting as long as the longer clip.
///
/// # Errors
/// [`MotionError::Empty`] when a clip has no frames, and as [`blend_poses`].
pub fn blend_motions(
    a: &Motion,
    b: &Motion,
    weight: f64,
    mask: Option<&JointMask>,
    rotation: RotationBlend,
) -> Result<Motion, MotionError> {
    let duration = a.duration().max(b.duration());
    mix(a, b, duration, |_| weight, mask, rotation)
}

/// A transition from one clip to the next.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Crossfade {
    /// Time on the first clip's clock at which the second clip starts (its frame 0) and the
    /// fade begins, seconds. Default 0.
    pub start: f64,
    /// Length of the fade, seconds; 0 cuts. Default 0.3.
    pub duration: f64,
    /// Weight curve from 0 to 1 over the fade: [`Profile::MinimumAcceleration`] is smoothstep
    /// `3s² − 2s³` (the trajectories' rest-to-rest cubic), [`Profile::MinimumJerk`] the quintic
    /// `10s³ − 15s⁴ + 6s⁵` (also zero weight acceleration at the ends). Default smoothstep.
    pub profile: Profile,
}

impl Default for Crossfade {
    fn default() -> Self {
        Self {
            start: 0.0,
            duration: 0.3,
            profile: Profile::MinimumAcceleration,
        }
    }
}

impl Crossfade {
    /// The second clip's weight at `time` on the first clip's clock.
    pub fn weight(&self, time: f64) -> f64 {
        if time < self.start {
            return 0.0;
        }
        if time >= self.start + self.duration {
            return 1.0;
        }
        self.profile
            .rest_to_rest((time - self.start) / self.duration)
    }
}

/// `a` until `fade.start`, then a fade to `b` (started at its frame 0), then `b` to its end:
/// frame time of `a`, lasting `fade.start + b.duration()`. Before the fade the frames are
/// `a`'s, after it `b`'s, exactly.
///
/// # Errors
/// [`MotionError::InvalidFade`] unless `start` and `duration` are finite and non-negative,
/// [`MotionError::Empty`] when a clip has no frames, [`MotionError::JointCount`] when the clips
/// differ in joint count.
pub fn crossfade(
    a: &Motion,
    b: &Motion,
    fade: &Crossfade,
    rotation: RotationBlend,
) -> Result<Motion, MotionError> {
    let valid = |x: f64| x.is_finite() && x >= 0.0;
    if !(valid(fade.start) && valid(fade.duration)) {
        return Err(MotionError::InvalidFade {
            start: fade.start,
            duration: fade.duration,
        });
    }
    let b_shifted = |t: f64| t - fade.start;
    let duration = fade.start + b.duration();
    mix_shifted(
        a,
        b,
        duration,
        b_shifted,
        |t| fade.weight(t),
        None,
        rotation,
    )
}

fn mix(
    a: &Motion,
    b: &Motion,
    duration: f64,
    weight: impl Fn(f64) -> f64,
    mask: Option<&JointMask>,
    rotation: RotationBlend,
) -> Result<Motion, MotionError> {
    mix_shifted(a, b, duration, |t| t, weight, mask, rotation)
}

/// Frames at `a`'s frame time over `duration`: `a` sampled at `t`, `b` at `b_time(t)`, mixed
/// with `weight(t)`; the last frame lies exactly at `duration`.
fn mix_shifted(
    a: &Motion,
    b: &Motion,
    duration: f64,
    b_time: impl Fn(f64) -> f64,
    weight: impl Fn(f64) -> f64,
    mask: Option<&JointMask>,
    rotation: RotationBlend,
) -> Result<Motion, MotionError> {
    if a.is_empty() || b.is_empty() {
        return Err(MotionError::Empty);
    }
    if a.joint_count() != b.joint_count() {
        return Err(MotionError::JointCount {
            expected: a.joint_count(),
            found: b.joint_count(),
        });
    }
    let frame_time = a.frame_time();
    let steps = (duration / frame_time - 1e-9).ceil().max(0.0);
    if steps > 1e7 {
        return Err(MotionError::TooManyFrames);
    }
    let mut out = Motion::new(frame_time, a.joint_count())?;
    let (mut pose_a, mut pose_b) = (a.frames()[0].clone(), b.frames()[0].clone());
    let mut pose = pose_a.clone();
    for k in 0..=steps as usize {
        let t = (k as f64 * frame_time).min(duration);
        a.sample(t, &mut pose_a);
        b.sample(b_time(t), &mut pose_b);
        blend_poses(&pose_a, &pose_b, weight(t), mask, rotation, &mut pose)?;
        out.push(pose.clone())?;
    }
    Ok(out)
}
