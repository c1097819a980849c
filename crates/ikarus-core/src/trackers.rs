//! Tracker recordings: per frame, the world pose of a few devices worn on the body (a VR
//! headset and controllers, hip and foot trackers), each tied to the humanoid bone it rides
//! on. The data only; `ikarus-formats` reads and writes the files, `ikarus-anim`'s `track`
//! poses a character from them.

use glam::{DQuat, DVec3};

use crate::humanoid_map::HumanoidBone;

/// One device's pose in one frame: world position (metres, +Y up, right-handed) and world
/// rotation. A lost sample is written as NaN; readers keep it as such and the solver holds
/// the device's last good pose over it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackerPose {
    /// World position.
    pub position: DVec3,
    /// World rotation (unit length when the sample is good).
    pub rotation: DQuat,
}

impl TrackerPose {
    /// The identity: at the origin, unturned.
    pub const IDENTITY: Self = Self {
        position: DVec3::ZERO,
        rotation: DQuat::IDENTITY,
    };

    /// From a row `[x, y, z, qx, qy, qz, qw]`.
    pub fn from_row(row: [f64; 7]) -> Self {
        let [x, y, z, qx, qy, qz, qw] = row;
        Self {
            position: DVec3::new(x, y, z),
            rotation: DQuat::from_xyzw(qx, qy, qz, qw),
        }
    }

    /// As a row `[x, y, z, qx, qy, qz, qw]`.
    pub fn to_row(self) -> [f64; 7] {
        let p = self.position;
        let q = self.rotation;
        [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
    }

    /// Whether the sample is usable: finite, and its rotation of length 1 within 1% (a
    /// device's quaternion drifts a little; a zero quaternion is a lost sample).
    pub fn is_valid(self) -> bool {
        self.position.is_finite()
            && self.rotation.is_finite()
            && (self.rotation.length_squared() - 1.0).abs() < 0.02
    }

    /// `self * other`: `other` expressed in this pose's frame, taken to the world.
    #[must_use]
    pub fn compose(self, other: Self) -> Self {
        Self {
            position: self.position + self.rotation * other.position,
            rotation: (self.rotation * other.rotation).normalize(),
        }
    }

    /// The inverse pose.
    #[must_use]
    pub fn inverse(self) -> Self {
        let rotation = self.rotation.conjugate();
        Self {
            position: -(rotation * self.position),
            rotation,
        }
    }
}

/// One device's samples over a recording.
#[derive(Clone, Debug, PartialEq)]
pub struct Track {
    /// The bone the device rides on.
    pub bone: HumanoidBone,
    /// One sample per frame.
    pub samples: Vec<TrackerPose>,
    /// Where the bone sits in the device's frame (`device_from_bone`), when the file says so;
    /// otherwise calibration measures it.
    pub offset: Option<TrackerPose>,
}

/// A recording of trackers at a fixed rate: every track has the same number of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Trackers {
    /// Frames per second.
    pub fps: f64,
    /// One track per device, each on a different bone.
    pub tracks: Vec<Track>,
}

impl Trackers {
    /// Frames in the recording (the shortest track's length; 0 without tracks).
    pub fn len(&self) -> usize {
        self.tracks
            .iter()
            .map(|t| t.samples.len())
            .min()
            .unwrap_or(0)
    }

    /// Whether the recording has no frame.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The track on `bone`, if any.
    pub fn track(&self, bone: HumanoidBone) -> Option<&Track> {
        self.tracks.iter().find(|t| t.bone == bone)
    }

    /// Frame `frame` as (bone, sample) pairs, written into `out` (cleared first).
    pub fn frame_into(&self, frame: usize, out: &mut Vec<(HumanoidBone, TrackerPose)>) {
        out.clear();
        out.extend(
            self.tracks
                .iter()
                .filter_map(|t| t.samples.get(frame).map(|&s| (t.bone, s))),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_and_inverse_round_trip() {
        let a = TrackerPose {
            position: DVec3::new(0.3, 1.2, -0.4),
            rotation: DQuat::from_euler(glam::EulerRot::YXZ, 0.7, -0.2, 0.4),
        };
        let b = TrackerPose {
            position: DVec3::new(-0.05, 0.02, 0.1),
            rotation: DQuat::from_rotation_x(0.3),
        };
        let back = a.compose(b).compose(b.inverse());
        assert!(back.position.distance(a.position) < 1e-12);
        assert!(back.rotation.angle_between(a.rotation) < 1e-7);
        // compose is the affine product.
        let affine = glam::DAffine3::from_rotation_translation(a.rotation, a.position)
            * glam::DAffine3::from_rotation_translation(b.rotation, b.position);
        assert!(affine.translation.distance(a.compose(b).position).abs() < 1e-12);
        assert_eq!(TrackerPose::from_row(a.to_row()), a);
    }

    #[test]
    fn lost_samples_are_invalid() {
        assert!(TrackerPose::IDENTITY.is_valid());
        let mut p = TrackerPose::IDENTITY;
        p.rotation = DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        assert!(!p.is_valid());
        p.rotation = DQuat::IDENTITY;
        p.position.x = f64::NAN;
        assert!(!p.is_valid());
    }
}
