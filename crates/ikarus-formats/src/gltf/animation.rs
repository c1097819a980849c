//! Animations: keyframe channels on a [`GltfSkeleton`], sampled at any time or into a [`Motion`].

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, Motion};

use gltf::json::animation::{Interpolation as I, Property};
use gltf::json::validation::Checked;

use super::accessor::{self, Shape};
use super::{GltfError, GltfFile, GltfSkeleton};

/// How values between two keyframes are computed (glTF `sampler.interpolation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// The earlier keyframe's value until the next keyframe.
    Step,
    /// Linear for translation and scale, spherical linear (shortest arc) for rotation.
    Linear,
    /// Cubic Hermite with an in- and an out-tangent per keyframe (glTF Appendix C):
    /// `p(s) = (2s³−3s²+1)·v_k + (s³−2s²+s)·Δt·b_k + (−2s³+3s²)·v_{k+1} + (s³−s²)·Δt·a_{k+1}`,
    /// rotations normalised afterwards.
    CubicSpline,
}

/// Which part of a joint's local transform a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelTarget {
    /// `translation` (3 values per key).
    Translation,
    /// `rotation` (a quaternion `[x, y, z, w]` per key).
    Rotation,
    /// `scale` (3 values per key).
    Scale,
}

impl ChannelTarget {
    /// Values per keyframe.
    pub const fn width(self) -> usize {
        match self {
            Self::Rotation => 4,
            Self::Translation | Self::Scale => 3,
        }
    }

    /// The glTF `target.path`.
    pub const fn gltf_path(self) -> &'static str {
        match self {
            Self::Translation => "translation",
            Self::Rotation => "rotation",
            Self::Scale => "scale",
        }
    }
}

/// One animated property of one joint: keyframe times and values.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// The joint (of the [`GltfSkeleton`] the clip was read for).
    pub joint: JointId,
    /// The property.
    pub target: ChannelTarget,
    /// Interpolation between keys.
    pub interpolation: Interpolation,
    /// Keyframe times in seconds, non-decreasing.
    pub times: Vec<f64>,
    /// [`target.width()`](ChannelTarget::width) values per key in node-local space (the
    /// node's own `parent_from_node`, before any folded parents); for
    /// [`CubicSpline`](Interpolation::CubicSpline) three such groups per key: in-tangent,
    /// value, out-tangent.
    pub values: Vec<f64>,
}

/// An animation's channels on one skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// The animation's name (`animation<i>` when it has none).
    pub name: String,
    /// The channels that drive skeleton joints (channels on other nodes and morph weights are
    /// not kept).
    pub channels: Vec<Channel>,
}

impl Channel {
    /// The channel's value at `time` (clamped to the first and last key), `width` values into `out`.
    fn sample_into(&self, time: f64, out: &mut [f64; 4]) {
        let w = self.target.width();
        let keys = self.times.len();
        let group = if self.interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let value = |k: usize, part: usize| {
            &self.values[(k * group + part) * w..(k * group + part + 1) * w]
        };
        let at = |k: usize| if group == 3 { value(k, 1) } else { value(k, 0) };
        // The first key after `time`.
        let next = self.times.partition_point(|&t| t <= time);
        // A time within `f32` rounding of a key is that key: key times are stored as `f32`,
        // so a clip sampled at its own frame times (computed in `f64`) lands on its keys
        // exactly instead of a hair beside them (which, at 20 s and 1 m/s, moves a point by
        // 2e-6 m).
        let tolerance = f64::from(f32::EPSILON) * time.abs().max(1.0);
        for k in [next.wrapping_sub(1), next] {
            if let Some(&t) = self.times.get(k)
                && (t - time).abs() <= tolerance
            {
                out[..w].copy_from_slice(at(k));
                return;
            }
        }
        if next == 0 || next >= keys || keys == 1 {
            let k = if next == 0 { 0 } else { keys - 1 };
            out[..w].copy_from_slice(at(k));
            return;
        }
        let k = next - 1;
        let dt = self.times[next] - self.times[k];
        let s = if dt > 0.0 {
            (time - self.times[k]) / dt
        } else {
            0.0
        };
        match self.interpolation {
            Interpolation::Step => out[..w].copy_from_slice(at(k)),
            Interpolation::Linear => {
                let (a, b) = (at(k), at(next));
                if self.target == ChannelTarget::Rotation {
                    let qa = DQuat::from_slice(a);
                    let qb = DQuat::from_slice(b);
                    out.copy_from_slice(&qa.slerp(qb, s).to_array());
                } else {
                    for i in 0..w {
                        out[i] = a[i] + (b[i] - a[i]) * s;
                    }
                }
            }
            Interpolation::CubicSpline => {
                let (s2, s3) = (s * s, s * s * s);
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = s3 - 2.0 * s2 + s;
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = s3 - s2;
                let (v0, b0) = (value(k, 1), value(k, 2));
                let (a1, v1) = (value(next, 0), value(next, 1));
                for i in 0..w {
                    out[i] = h00 * v0[i] + h10 * dt * b0[i] + h01 * v1[i] + h11 * dt * a1[i];
                }
            }
        }
        if self.target == ChannelTarget::Rotation {
            let q = DQuat::from_slice(&out[..4]);
            let length = q.length();
            if length.is_finite() && length > 0.0 {
                out.copy_from_slice(&(q / length).to_array());
            } else {
                *out = [0.0, 0.0, 0.0, 1.0];
            }
        }
    }
}

impl Clip {
    /// The time of the last keyframe of any channel (0 without channels).
    pub fn duration(&self) -> f64 {
        self.channels
            .iter()
            .filter_map(|c| c.times.last())
            .copied()
            .fold(0.0, f64::max)
    }

    /// The pose at `time` seconds (clamped per channel to its first and last key): every
    /// joint's node rest transform with the animated properties replaced, then the folded
    /// parents put in front of the roots. `out` must have the skeleton's joint count.
    /// Allocates nothing.
    ///
    /// # Panics
    /// When `out` was sized for another skeleton.
    pub fn sample(&self, skeleton: &GltfSkeleton, time: f64, out: &mut LocalPose) {
        out.transforms_mut().copy_from_slice(&skeleton.node_rest);
        let mut value = [0.0; 4];
        for channel in &self.channels {
            channel.sample_into(time, &mut value);
            let t = &mut out[channel.joint];
            match channel.target {
                ChannelTarget::Translation => t.translation = DVec3::from_slice(&value[..3]),
                ChannelTarget::Rotation => t.rotation = DQuat::from_array(value),
                ChannelTarget::Scale => t.scale = DVec3::from_slice(&value[..3]),
            }
        }
        for (j, t) in out.transforms_mut().iter_mut().enumerate() {
            *t = skeleton.to_joint_local(j, t);
        }
    }

    /// The frame rate the keys suggest: when every channel has the same evenly spaced times
    /// (within 0.1 %), one frame per key; otherwise `None`.
    pub fn key_rate(&self) -> Option<f64> {
        let first = &self.channels.first()?.times;
        if first.len() < 2 || self.channels.iter().any(|c| c.times != *first) {
            return None;
        }
        let dt = (first[first.len() - 1] - first[0]) / (first.len() - 1) as f64;
        let even = first
            .windows(2)
            .all(|w| ((w[1] - w[0]) - dt).abs() <= 1e-3 * dt);
        (dt > 0.0 && even && first[0].abs() <= 1e-3 * dt).then(|| 1.0 / dt)
    }

    /// The clip sampled from 0 to [`duration`](Self::duration) into a [`Motion`]: at `fps`
    /// frames per second, or (for `None`) at [`key_rate`](Self::key_rate), else 30. The frame
    /// time is adjusted so that the last frame falls on the last key.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] for a non-positive rate or more than ten million frames.
    pub fn to_motion(
        &self,
        skeleton: &GltfSkeleton,
        fps: Option<f64>,
    ) -> Result<Motion, GltfError> {
        let fps = fps.or_else(|| self.key_rate()).unwrap_or(30.0);
        let duration = self.duration();
        let intervals = (duration * fps).round();
        if !(fps.is_finite() && fps > 0.0 && intervals.is_finite() && intervals <= 1e7) {
            return Err(GltfError::invalid(
                format!("animation `{}`", self.name),
                format!("{duration} s at {fps} fps is not a usable frame count"),
            ));
        }
        let intervals = intervals as usize;
        let frame_time = if intervals == 0 {
            1.0 / fps
        } else {
            duration / intervals as f64
        };
        let mut motion = Motion::for_skeleton(&skeleton.skeleton, frame_time)
            .map_err(|e| GltfError::invalid(format!("animation `{}`", self.name), e.to_string()))?;
        let mut pose = skeleton.skeleton.rest_pose();
        for k in 0..=intervals {
            self.sample(skeleton, (k as f64 * frame_time).min(duration), &mut pose);
            motion
                .push(pose.clone())
                .map_err(|e| GltfError::invalid("animations", e.to_string()))?;
        }
        Ok(motion)
    }
}

impl GltfFile {
    /// Animation `index` as a [`Clip`] on `skeleton` (channels on nodes outside the skeleton and
    /// `weights` channels are skipped).
    ///
    /// # Errors
    /// [`GltfError::Invalid`] naming the sampler when keys and values do not match, times are
    /// not finite and non-decreasing, or an accessor is out of bounds.
    pub fn clip(&self, index: usize, skeleton: &GltfSkeleton) -> Result<Clip, GltfError> {
        let animation = self.root.animations.get(index).ok_or_else(|| {
            GltfError::invalid(
                "animations",
                format!(
                    "no animation {index} ({} in the file)",
                    self.root.animations.len()
                ),
            )
        })?;
        let mut channels = Vec::new();
        for (c, channel) in animation.channels.iter().enumerate() {
            let pointer = format!("animations[{index}].channels[{c}]");
            let node = channel.target.node.value();
            let Some(&Some(joint)) = skeleton.node_joints.get(node) else {
                continue;
            };
            let target = match channel.target.path {
                Checked::Valid(Property::Translation) => ChannelTarget::Translation,
                Checked::Valid(Property::Rotation) => ChannelTarget::Rotation,
                Checked::Valid(Property::Scale) => ChannelTarget::Scale,
                _ => continue,
            };
            let s = channel.sampler.value();
            let sampler = animation.samplers.get(s).ok_or_else(|| {
                GltfError::invalid(
                    format!("{pointer}.sampler"),
                    format!("sampler {s} does not exist"),
                )
            })?;
            let sampler_pointer = format!("animations[{index}].samplers[{s}]");
            let interpolation = match sampler.interpolation {
                Checked::Valid(I::Step) => Interpolation::Step,
                Checked::Valid(I::CubicSpline) => Interpolation::CubicSpline,
                _ => Interpolation::Linear,
            };
            let times = accessor::read_f64(self, sampler.input.value(), Shape::SCALAR)?;
            if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] < w[0]) {
                return Err(GltfError::invalid(
                    format!("{sampler_pointer}.input"),
                    "keyframe times must be finite and non-decreasing",
                ));
            }
            let shape = if target == ChannelTarget::Rotation {
                Shape::VEC4
            } else {
                Shape::VEC3
            };
            let values = accessor::read_f64(self, sampler.output.value(), shape)?;
            let group = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            if times.is_empty() || values.len() != times.len() * group * target.width() {
                return Err(GltfError::invalid(
                    format!("{sampler_pointer}.output"),
                    format!(
                        "{} values for {} keys (expected {} per key)",
                        values.len() / target.width(),
                        times.len(),
                        group
                    ),
                ));
            }
            if values.iter().any(|v| !v.is_finite()) {
                return Err(GltfError::invalid(
                    format!("{sampler_pointer}.output"),
                    "non-finite keyframe value",
                ));
            }
            let mut values = values;
            if target == ChannelTarget::Rotation && interpolation != Interpolation::CubicSpline {
                for q in values.chunks_exact_mut(4) {
                    let length = q.iter().map(|v| v * v).sum::<f64>().sqrt();
                    if length < 1e-6 {
                        return Err(GltfError::invalid(
                            format!("{sampler_pointer}.output"),
                            "zero rotation quaternion",
                        ));
                    }
                    for v in q.iter_mut() {
                        *v /= length;
                    }
                }
            }
            channels.push(Channel {
                joint,
                target,
                interpolation,
                times,
                values,
            });
        }
        Ok(Clip {
            name: super::animation_name(animation, index),
            channels,
        })
    }
}
