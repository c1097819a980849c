//! Segment orientations → posture (the IK overview's mocap part: `O_{i+1} = O_i R_j`, so
//! `R_j = O_iᵀ O_{i+1}`), for inertial suits and trackers that measure each segment's
//! orientation.
//!
//! A sensor sits on its segment at an unknown angle. A calibration frame in which the subject
//! holds the skeleton's rest pose (T-pose for the built-in humanoid) fixes it:
//! `segment_from_sensor` is chosen so that the calibrated orientation at that frame is the
//! segment's rest orientation. Then at any frame `model_from_segment = model_from_world ·
//! world_from_sensor · sensor_from_segment` and each joint's local rotation is its parent
//! segment's orientation transposed times its own. Joints without a sensor keep their rest
//! rotation (they turn with their parent).

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, fk};

/// Sensor-to-segment calibration for a set of joints carrying sensors.
#[derive(Clone, Debug, PartialEq)]
pub struct OrientationCalibration {
    joints: Vec<JointId>,
    sensor_from_segment: Vec<DQuat>,
    model_from_world: DQuat,
}

/// Why orientations could not be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OrientationError {
    /// One orientation per sensor joint is needed.
    #[error("expected {expected} orientations (one per sensor), found {found}")]
    WrongCount {
        /// Sensors.
        expected: usize,
        /// Orientations given.
        found: usize,
    },
    /// An orientation is not a finite non-zero quaternion.
    #[error("the orientation of sensor {index} is not a finite non-zero quaternion")]
    NotARotation {
        /// The sensor's index.
        index: usize,
    },
}

fn check(orientations: &[DQuat], expected: usize) -> Result<(), OrientationError> {
    if orientations.len() != expected {
        return Err(OrientationError::WrongCount {
            expected,
            found: orientations.len(),
        });
    }
    if let Some(index) = orientations
        .iter()
        .position(|q| !(q.is_finite() && q.length() > 1e-9))
    {
        return Err(OrientationError::NotARotation { index });
    }
    Ok(())
}

impl OrientationCalibration {
    /// Calibrates from a frame where the subject holds the rest pose of `skeleton`:
    /// `world_from_sensor[i]` is sensor `i`'s reading, on joint `joints[i]`.
    /// `model_from_world` turns the sensors' world frame into model space (+Y up, subject
    /// facing +Z at calibration); identity when they agree.
    ///
    /// # Errors
    /// [`OrientationError`] when the readings are not one finite rotation per joint.
    pub fn from_rest_frame(
        skeleton: &Skeleton,
        joints: &[JointId],
        world_from_sensor: &[DQuat],
        model_from_world: DQuat,
    ) -> Result<Self, OrientationError> {
        check(world_from_sensor, joints.len())?;
        let mut rest = ModelPose::new(skeleton);
        fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
        let sensor_from_segment = joints
            .iter()
            .zip(world_from_sensor)
            .map(|(&j, &s)| {
                ((model_from_world * s.normalize()).inverse() * rest.rotation(j)).normalize()
            })
            .collect();
        Ok(Self {
            joints: joints.to_vec(),
            sensor_from_segment,
            model_from_world: model_from_world.normalize(),
        })
    }

    /// The joints carrying sensors.
    pub fn joints(&self) -> &[JointId] {
        &self.joints
    }

    /// The posture for one frame of readings: local rotations `O_parentᵀ · O_joint` for
    /// joints with sensors, rest rotations for the others, the root at `root_position` (model
    /// space) when given, else at rest. Writes `pose` (sized for the skeleton).
    ///
    /// # Errors
    /// [`OrientationError`] when the readings are not one finite rotation per sensor; `pose`
    /// is then untouched.
    pub fn solve_frame(
        &self,
        skeleton: &Skeleton,
        world_from_sensor: &[DQuat],
        root_position: Option<DVec3>,
        pose: &mut LocalPose,
    ) -> Result<(), OrientationError> {
        check(world_from_sensor, self.joints.len())?;
        pose.transforms_mut()
            .copy_from_slice(skeleton.rest_transforms());
        let mut model = vec![DQuat::IDENTITY; skeleton.len()];
        let mut measured: Vec<Option<DQuat>> = vec![None; skeleton.len()];
        for ((&j, &s), &c) in self
            .joints
            .iter()
            .zip(world_from_sensor)
            .zip(&self.sensor_from_segment)
        {
            measured[j.index()] = Some((self.model_from_world * s.normalize() * c).normalize());
        }
        for j in skeleton.joints() {
            let parent = skeleton
                .parent(j)
                .map_or(DQuat::IDENTITY, |p| model[p.index()]);
            if let Some(o) = measured[j.index()] {
                let local = (parent.inverse() * o).normalize();
                let rest = skeleton.rest(j).rotation;
                pose[j].rotation = if local.dot(rest) < 0.0 { -local } else { local };
            }
            if skeleton.parent(j).is_none()
                && let Some(p) = root_position
            {
                pose[j].translation = p;
            }
            model[j.index()] = parent * pose[j].rotation;
        }
        Ok(())
    }
}
