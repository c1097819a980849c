//! Motion clips: frames of local poses sampled at a fixed rate.

use crate::{LocalPose, Skeleton};

/// A clip of local poses at a fixed frame time. Root translation (and any other translated
/// joint) lives in each frame's local transforms.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Motion {
    frame_time: f64,
    joint_count: usize,
    frames: Vec<LocalPose>,
}

impl Motion {
    /// An empty clip for a skeleton with `joint_count` joints, sampled every `frame_time` seconds.
    ///
    /// # Errors
    /// [`MotionError::InvalidFrameTime`] unless `frame_time` is finite and positive.
    pub fn new(frame_time: f64, joint_count: usize) -> Result<Self, MotionError> {
        if !(frame_time.is_finite() && frame_time > 0.0) {
            return Err(MotionError::InvalidFrameTime { frame_time });
        }
        Ok(Self {
            frame_time,
            joint_count,
            frames: Vec::new(),
        })
    }

    /// An empty clip for `skeleton`.
    ///
    /// # Errors
    /// As [`Motion::new`].
    pub fn for_skeleton(skeleton: &Skeleton, frame_time: f64) -> Result<Self, MotionError> {
        Self::new(frame_time, skeleton.len())
    }

    /// Appends a frame.
    ///
    /// # Errors
    /// [`MotionError::JointCount`] when the pose has another number of joints than the clip.
    pub fn push(&mut self, pose: LocalPose) -> Result<(), MotionError> {
        if pose.len() != self.joint_count {
            return Err(MotionError::JointCount {
                expected: self.joint_count,
                found: pose.len(),
            });
        }
        self.frames.push(pose);
        Ok(())
    }

    /// Seconds between frames.
    pub fn frame_time(&self) -> f64 {
        self.frame_time
    }

    /// Frames per second.
    pub fn frame_rate(&self) -> f64 {
        1.0 / self.frame_time
    }

    /// Number of joints in every frame.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True when the clip has no frames.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Time of the last frame, `(frames − 1) · frame_time` seconds (0 for one frame or none).
    pub fn duration(&self) -> f64 {
        self.frames.len().saturating_sub(1) as f64 * self.frame_time
    }

    /// The frames.
    pub fn frames(&self) -> &[LocalPose] {
        &self.frames
    }

    /// The frames, mutable (joint counts cannot change through a slice).
    pub fn frames_mut(&mut self) -> &mut [LocalPose] {
        &mut self.frames
    }

    /// Multiplies every translation by `factor` (a change of length unit).
    pub fn scale_lengths(&mut self, factor: f64) {
        for frame in &mut self.frames {
            for t in frame.transforms_mut() {
                t.translation *= factor;
            }
        }
    }

    /// One frame.
    pub fn frame(&self, index: usize) -> Option<&LocalPose> {
        self.frames.get(index)
    }

    /// Samples the clip at `time` seconds into `out`: slerp/lerp between the two nearest
    /// frames (within 1e-9 frame times of a frame, that frame exactly), clamped to the first and last
    /// frame. Does nothing on an empty clip.
    ///
    /// # Panics
    /// When `out` has another joint count than the clip.
    pub fn sample(&self, time: f64, out: &mut LocalPose) {
        let Some(last) = self.frames.len().checked_sub(1) else {
            return;
        };
        let mut position = if time.is_finite() {
            (time / self.frame_time).clamp(0.0, last as f64)
        } else {
            0.0
        };
        // Times computed by arithmetic (`k · dt − start`) land on frames only up to rounding.
        if (position - position.round()).abs() < 1e-9 {
            position = position.round();
        }
        let i = (position.floor() as usize).min(last);
        let j = (i + 1).min(last);
        let fraction = position - i as f64;
        if fraction == 0.0 {
            out.transforms_mut()
                .copy_from_slice(self.frames[i].transforms());
        } else {
            out.set_interpolated(&self.frames[i], &self.frames[j], fraction);
        }
    }

    /// The clip resampled at a new frame time, covering the same duration (the last frame is
    /// kept when the duration is not a multiple of the new frame time).
    ///
    /// # Errors
    /// [`MotionError::InvalidFrameTime`] unless `frame_time` is finite and positive, and
    /// [`MotionError::TooManyFrames`] when the result would exceed ten million frames.
    pub fn resampled(&self, frame_time: f64) -> Result<Self, MotionError> {
        let mut out = Self::new(frame_time, self.joint_count)?;
        if self.frames.is_empty() {
            return Ok(out);
        }
        let duration = self.duration();
        let steps = (duration / frame_time - 1e-9).ceil().max(0.0);
        if steps > 1e7 {
            return Err(MotionError::TooManyFrames);
        }
        let count = steps as usize + 1;
        let mut pose = self.frames[0].clone();
        for k in 0..count {
            self.sample((k as f64 * frame_time).min(duration), &mut pose);
            out.frames.push(pose.clone());
        }
        Ok(out)
    }
}

/// What is wrong with a motion operation.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MotionError {
    /// The frame time is zero, negative or not finite. Use `1 / fps` seconds.
    #[error("frame time {frame_time} s must be finite and positive")]
    InvalidFrameTime {
        /// The rejected value.
        frame_time: f64,
    },
    /// A frame's joint count differs from the clip's. Build poses from the clip's skeleton.
    #[error("frame has {found} joints but the clip's skeleton has {expected}")]
    JointCount {
        /// The clip's joint count.
        expected: usize,
        /// The frame's joint count.
        found: usize,
    },
    /// Resampling would produce more than ten million frames. Use a longer frame time.
    #[error("resampling would produce more than ten million frames")]
    TooManyFrames,
    /// A blend weight is NaN or (in a mask) outside `[0, 1]`.
    #[error("blend weight {weight} must lie in [0, 1]")]
    InvalidWeight {
        /// The rejected value.
        weight: f64,
    },
    /// A crossfade's start or duration is negative or not finite.
    #[error("crossfade start {start} s and duration {duration} s must be finite and non-negative")]
    InvalidFade {
        /// Start on the first clip's clock, seconds.
        start: f64,
        /// Fade length, seconds.
        duration: f64,
    },
    /// A clip to blend has no frames.
    #[error("cannot blend a clip without frames")]
    Empty,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transform;
    use glam::{DQuat, DVec3};

    fn pose(x: f64, angle: f64) -> LocalPose {
        LocalPose::from_transforms(vec![Transform::from_translation_rotation(
            DVec3::new(x, 0.0, 0.0),
            DQuat::from_rotation_y(angle),
        )])
    }

    #[test]
    fn sample_interpolates_and_clamps() {
        let mut m = Motion::new(0.5, 1).unwrap();
        m.push(pose(0.0, 0.0)).unwrap();
        m.push(pose(2.0, 1.0)).unwrap();
        let mut out = pose(9.0, 0.0);
        m.sample(0.125, &mut out);
        let t = out.transforms()[0];
        assert!((t.translation.x - 0.5).abs() < 1e-12);
        assert!((t.rotation - DQuat::from_rotation_y(0.25)).length() < 1e-12);
        m.sample(7.0, &mut out);
        assert!((out.transforms()[0].translation.x - 2.0).abs() < 1e-12);
        assert!(m.push(LocalPose::from_transforms(vec![])).is_err());
        assert!(Motion::new(0.0, 1).is_err());
        assert!(Motion::new(f64::NAN, 1).is_err());
    }

    #[test]
    fn resample_keeps_duration_and_endpoints() {
        let mut m = Motion::new(1.0 / 120.0, 1).unwrap();
        for k in 0..121 {
            m.push(pose(f64::from(k), 0.0)).unwrap();
        }
        let r = m.resampled(1.0 / 30.0).unwrap();
        assert_eq!(r.len(), 31);
        assert!((r.duration() - 1.0).abs() < 1e-9);
        assert!((r.frames()[30].transforms()[0].translation.x - 120.0).abs() < 1e-9);
        assert!((r.frames()[1].transforms()[0].translation.x - 4.0).abs() < 1e-9);
    }
}
