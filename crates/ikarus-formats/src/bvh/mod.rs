//! Biovision Hierarchy (BVH): skeleton and motion, read and written by hand.
//!
//! ## Mapping to the core model
//!
//! - Every `ROOT`/`JOINT` becomes a joint; every `End Site` becomes a leaf joint named
//!   `<parent>_End` (made unique with a numeric suffix), so effectors can sit on it and round
//!   trips keep it. The joint's [`JointChannels::end_site`] flag remembers which is which.
//! - `OFFSET` is the rest translation; rest rotations are identity.
//! - Position channels replace the matching component of the offset (the Biovision and
//!   `MotionBuilder` reading: root `OFFSET`s holding a world position and the all-6-channel files
//!   whose translation channels repeat the offsets both come out right).
//! - Rotation channels are degrees, applied in the order listed as intrinsic rotations:
//!   `Zrotation Xrotation Yrotation` is `Rz · Rx · Ry`. Euler angles exist only in this module.
//! - BVH has no units; lengths are the file's unit times [`BvhReadOptions::scale`].
//! - BVH cannot store scale; joint scale is ignored when writing.

mod number;
mod read;
mod write;

pub use write::{renamed_joints, shared_root, token_names};

use glam::{DQuat, DVec3, EulerRot};
use ikarus_core::{JointId, LocalPose, Motion, Skeleton, Transform};

pub use read::BvhReadOptions;

/// Files whose frames times joints exceed this are refused by [`Bvh::to_motion`] (800 MB of
/// transforms; a ten-minute 120 fps capture of 100 joints needs 7.2 million).
const MAX_MOTION_TRANSFORMS: usize = 10_000_000;

/// One BVH channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Translation along X.
    Xposition,
    /// Translation along Y.
    Yposition,
    /// Translation along Z.
    Zposition,
    /// Rotation about X, degrees.
    Xrotation,
    /// Rotation about Y, degrees.
    Yrotation,
    /// Rotation about Z, degrees.
    Zrotation,
}

impl Channel {
    /// The channel's name in a BVH file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Xposition => "Xposition",
            Self::Yposition => "Yposition",
            Self::Zposition => "Zposition",
            Self::Xrotation => "Xrotation",
            Self::Yrotation => "Yrotation",
            Self::Zrotation => "Zrotation",
        }
    }

    /// Parses a channel name (case-insensitive).
    pub fn from_name(name: &[u8]) -> Option<Self> {
        [
            Self::Xposition,
            Self::Yposition,
            Self::Zposition,
            Self::Xrotation,
            Self::Yrotation,
            Self::Zrotation,
        ]
        .into_iter()
        .find(|c| c.name().as_bytes().eq_ignore_ascii_case(name))
    }

    /// True for the three rotation channels.
    pub fn is_rotation(self) -> bool {
        matches!(self, Self::Xrotation | Self::Yrotation | Self::Zrotation)
    }

    /// The channel's axis as a unit vector.
    pub fn axis(self) -> DVec3 {
        match self {
            Self::Xposition | Self::Xrotation => DVec3::X,
            Self::Yposition | Self::Yrotation => DVec3::Y,
            Self::Zposition | Self::Zrotation => DVec3::Z,
        }
    }

    fn axis_index(self) -> usize {
        match self {
            Self::Xposition | Self::Xrotation => 0,
            Self::Yposition | Self::Yrotation => 1,
            Self::Zposition | Self::Zrotation => 2,
        }
    }
}

/// The channels of one joint, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JointChannels {
    /// Channels in the order their values appear in each frame (each kind at most once).
    pub channels: Vec<Channel>,
    /// True when the joint was (or is to be written as) an `End Site`: no channels, no name.
    pub end_site: bool,
}

/// How a skeleton's joints map to BVH channels: one entry per joint, in the skeleton's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BvhLayout {
    /// Per-joint channels, indexed by joint.
    pub joints: Vec<JointChannels>,
}

impl BvhLayout {
    /// Total channels per frame.
    pub fn channel_count(&self) -> usize {
        self.joints.iter().map(|j| j.channels.len()).sum()
    }

    /// The default layout for writing `skeleton`: roots get
    /// `Xposition Yposition Zposition Zrotation Xrotation Yrotation`, other joints the three
    /// rotations in the same order, plus position channels when `motion` moves them away from
    /// their offset in any frame. No joint is an end site.
    pub fn for_motion(skeleton: &Skeleton, motion: Option<&Motion>) -> Self {
        use Channel::{Xposition, Xrotation, Yposition, Yrotation, Zposition, Zrotation};
        let translated = |j: JointId| {
            motion.is_some_and(|m| {
                m.frames().iter().any(|f| {
                    let offset = skeleton.rest(j).translation;
                    (f[j].translation - offset).abs().max_element()
                        > 1e-12 * (1.0 + offset.abs().max_element())
                })
            })
        };
        let joints = skeleton
            .joints()
            .map(|j| {
                let channels = if skeleton.parent(j).is_none() || translated(j) {
                    vec![
                        Xposition, Yposition, Zposition, Zrotation, Xrotation, Yrotation,
                    ]
                } else {
                    vec![Zrotation, Xrotation, Yrotation]
                };
                JointChannels {
                    channels,
                    end_site: false,
                }
            })
            .collect();
        Self { joints }
    }

    /// Checks that the layout fits the skeleton: one entry per joint, end sites are leaves with
    /// no channels, and no channel kind repeats within a joint.
    ///
    /// # Errors
    /// [`BvhError::Layout`] saying what does not fit.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), BvhError> {
        if self.joints.len() != skeleton.len() {
            return Err(BvhError::Layout(format!(
                "layout has {} joints, skeleton has {}",
                self.joints.len(),
                skeleton.len()
            )));
        }
        for (j, entry) in skeleton.joints().zip(&self.joints) {
            let name = skeleton.name(j);
            if entry.end_site
                && (!entry.channels.is_empty()
                    || skeleton.children(j).next().is_some()
                    || skeleton.parent(j).is_none())
            {
                return Err(BvhError::Layout(format!(
                    "joint `{name}` is marked as End Site but has channels, children or no parent"
                )));
            }
            for (k, c) in entry.channels.iter().enumerate() {
                if entry.channels[..k].contains(c) {
                    return Err(BvhError::Layout(format!(
                        "joint `{name}` lists channel {} twice",
                        c.name()
                    )));
                }
            }
        }
        Ok(())
    }
}

/// A parsed BVH file: the skeleton, its channel layout and the raw channel values of every frame.
///
/// Values stay as parsed (angles in degrees, lengths already multiplied by the read scale) so
/// that parsing does no trigonometry; [`Bvh::frame_pose`] and [`Bvh::to_motion`] convert.
#[derive(Clone, Debug)]
pub struct Bvh {
    /// The hierarchy, End Sites included as leaf joints.
    pub skeleton: Skeleton,
    /// Channels per joint.
    pub layout: BvhLayout,
    /// Seconds per frame (`Frame Time`).
    pub frame_time: f64,
    /// Number of frames.
    pub frame_count: usize,
    /// `frame_count × layout.channel_count()` values, frame after frame, in file order.
    pub values: Vec<f64>,
}

impl Bvh {
    /// The channel values of one frame, or `None` past the last frame.
    pub fn frame_values(&self, frame: usize) -> Option<&[f64]> {
        let c = self.layout.channel_count();
        if frame >= self.frame_count {
            return None;
        }
        self.values.get(frame * c..(frame + 1) * c)
    }

    /// Writes frame `frame`'s local pose into `out` (sized for [`Self::skeleton`]); returns
    /// false (leaving `out` untouched) when the frame does not exist.
    pub fn frame_pose(&self, frame: usize, out: &mut LocalPose) -> bool {
        let Some(values) = self.frame_values(frame) else {
            return false;
        };
        let mut k = 0;
        for (j, entry) in self.skeleton.joints().zip(&self.layout.joints) {
            let n = entry.channels.len();
            out[j] = channels_to_transform(
                self.skeleton.rest(j).translation,
                &entry.channels,
                &values[k..k + n],
            );
            k += n;
        }
        true
    }

    /// All frames as a [`Motion`] of quaternion poses.
    ///
    /// # Errors
    /// [`BvhError::Layout`] when frames × joints is too large to hold.
    pub fn to_motion(&self) -> Result<Motion, BvhError> {
        if self.frame_count.saturating_mul(self.skeleton.len()) > MAX_MOTION_TRANSFORMS {
            return Err(BvhError::Layout(format!(
                "{} frames of {} joints are too many to hold as poses",
                self.frame_count,
                self.skeleton.len()
            )));
        }
        let mut motion = Motion::for_skeleton(&self.skeleton, self.frame_time)
            .map_err(|e| BvhError::Layout(e.to_string()))?;
        let mut pose = self.skeleton.rest_pose();
        for frame in 0..self.frame_count {
            self.frame_pose(frame, &mut pose);
            motion
                .push(pose.clone())
                .map_err(|e| BvhError::Layout(e.to_string()))?;
        }
        Ok(motion)
    }

    /// A BVH document for `motion` on `skeleton` with the given layout: rotations are converted
    /// to each joint's Euler order, translations to its position channels.
    ///
    /// A joint's rotation must be expressible by its rotation channels (any rotation when it has
    /// all three); the part a joint with fewer channels cannot express is lost, as is any
    /// translation of a joint without position channels and all scale.
    ///
    /// # Errors
    /// [`BvhError::Layout`] when the layout or the motion does not fit the skeleton.
    pub fn from_motion(
        skeleton: &Skeleton,
        motion: &Motion,
        layout: BvhLayout,
    ) -> Result<Self, BvhError> {
        layout.validate(skeleton)?;
        if motion.joint_count() != skeleton.len() {
            return Err(BvhError::Layout(format!(
                "motion has {} joints, skeleton has {}",
                motion.joint_count(),
                skeleton.len()
            )));
        }
        let channel_count = layout.channel_count();
        let mut values = Vec::with_capacity(channel_count * motion.len());
        for frame in motion.frames() {
            for (j, entry) in skeleton.joints().zip(&layout.joints) {
                transform_to_channels(&frame[j], &entry.channels, &mut values);
            }
        }
        Ok(Self {
            skeleton: skeleton.clone(),
            layout,
            frame_time: motion.frame_time(),
            frame_count: motion.len(),
            values,
        })
    }
}

/// The local transform given by a joint's channel values; components without a position
/// channel keep the offset.
pub fn channels_to_transform(offset: DVec3, channels: &[Channel], values: &[f64]) -> Transform {
    let mut translation = offset;
    let mut rotation = DQuat::IDENTITY;
    for (&c, &v) in channels.iter().zip(values) {
        if c.is_rotation() {
            rotation *= DQuat::from_axis_angle(c.axis(), v.to_radians());
        } else {
            translation[c.axis_index()] = v;
        }
    }
    Transform::from_translation_rotation(translation, rotation)
}

/// Appends the channel values of `transform` for `channels` to `out` (angles in degrees).
pub fn transform_to_channels(transform: &Transform, channels: &[Channel], out: &mut Vec<f64>) {
    let angles = euler_angles(transform.rotation, channels);
    let mut r = 0;
    for &c in channels {
        if c.is_rotation() {
            out.push(angles[r].to_degrees());
            r += 1;
        } else {
            out.push(transform.translation[c.axis_index()]);
        }
    }
}

/// The intrinsic Euler angles (radians) of `q` about the rotation channels' axes in their order.
/// With fewer than three rotation channels the missing axes are appended to complete a
/// Tait–Bryan order and their angles dropped, which is exact when `q` is expressible.
fn euler_angles(q: DQuat, channels: &[Channel]) -> [f64; 3] {
    let mut order = [0usize; 3];
    let mut n = 0;
    for c in channels.iter().filter(|c| c.is_rotation()) {
        order[n] = c.axis_index();
        n += 1;
    }
    if n == 0 {
        return [0.0; 3];
    }
    for axis in 0..3 {
        if n < 3 && !order[..n].contains(&axis) {
            order[n] = axis;
            n += 1;
        }
    }
    let rot = match order {
        [0, 1, 2] => EulerRot::XYZ,
        [0, 2, 1] => EulerRot::XZY,
        [1, 0, 2] => EulerRot::YXZ,
        [1, 2, 0] => EulerRot::YZX,
        [2, 0, 1] => EulerRot::ZXY,
        _ => EulerRot::ZYX,
    };
    let (a, b, c) = q.to_euler(rot);
    [a, b, c]
}

/// What is wrong with BVH input or with a layout.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BvhError {
    /// The text is not valid BVH at the given place (1-based line and column, in bytes).
    #[error("{line}:{column}: {message}")]
    Parse {
        /// 1-based line.
        line: usize,
        /// 1-based column (byte offset within the line plus one).
        column: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// A layout or motion does not fit the skeleton.
    #[error("{0}")]
    Layout(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ROTATIONS: [Channel; 3] = [Channel::Xrotation, Channel::Yrotation, Channel::Zrotation];

    proptest! {
        #[test]
        fn euler_round_trip_in_every_order(
            order in prop::sample::select(vec![[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]),
            q in prop::array::uniform4(-1.0..1.0f64).prop_filter("non-zero", |q| DQuat::from_array(*q).length() > 0.1),
        ) {
            let q = DQuat::from_array(q).normalize();
            let channels: Vec<Channel> = order.iter().map(|&i| ROTATIONS[i]).collect();
            let mut values = Vec::new();
            transform_to_channels(&Transform::from_rotation(q), &channels, &mut values);
            // Independent check: the product of axis rotations in channel order.
            let mut back = DQuat::IDENTITY;
            for (c, v) in channels.iter().zip(&values) {
                back *= DQuat::from_axis_angle(c.axis(), v.to_radians());
            }
            prop_assert!(back.dot(q).abs() > 1.0 - 1e-12, "{q} -> {values:?} -> {back}");
            let t = channels_to_transform(DVec3::ZERO, &channels, &values);
            prop_assert!(t.rotation.dot(q).abs() > 1.0 - 1e-12);
        }
    }

    #[test]
    fn fewer_rotation_channels_are_exact_for_expressible_rotations() {
        let channels = [Channel::Zrotation, Channel::Xrotation];
        let q = DQuat::from_rotation_z(0.4) * DQuat::from_rotation_x(-1.1);
        let mut values = Vec::new();
        transform_to_channels(&Transform::from_rotation(q), &channels, &mut values);
        assert!((values[0] - 0.4f64.to_degrees()).abs() < 1e-9, "{values:?}");
        assert!((values[1] + 1.1f64.to_degrees()).abs() < 1e-9, "{values:?}");
    }
}
