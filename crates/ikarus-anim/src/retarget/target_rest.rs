//! The target's rest pose seen from its body frame, as the passes of [`super::passes`] read
//! it: up, the floor, heights, the limbs.

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, ModelPose};

use super::align::RootMapping;
use super::contacts;
use super::repair::{self, Limb};

/// The target's rest pose seen from its body frame: up, the lowest rest joint, heights.
pub(super) struct TargetRest<'a> {
    pub(super) skeleton: &'a ikarus_core::Skeleton,
    pub(super) model: ModelPose,
    /// The target's `body_from_model`.
    pub(super) body: DQuat,
    /// The target's up in model space.
    pub(super) up: DVec3,
    /// The lowest rest joint's height in the body frame.
    pub(super) floor: f64,
}

impl TargetRest<'_> {
    /// The floor the target stands on and the root mapping. Retargeting (`scale` given: the
    /// leg-length ratio) keeps the target's rest floor and puts the source's feet at their
    /// ground level (the 5th percentile of the lower ankle's height) on the target's rest
    /// ankle height; on the motion's own skeleton the floor is the clip's own ground level
    /// less the rest ankle height.
    pub(super) fn ground(
        &self,
        source_frames: &[ModelPose],
        source_body: DQuat,
        source_feet: [JointId; 2],
        target_feet: [JointId; 2],
        scale: Option<f64>,
    ) -> (f64, RootMapping) {
        let lowest_ankle: Vec<f64> = source_frames
            .iter()
            .map(|m| {
                (source_body * m.position(source_feet[0]))
                    .y
                    .min((source_body * m.position(source_feet[1])).y)
            })
            .collect();
        let target_ankle = 0.5 * (self.clearance(target_feet[0]) + self.clearance(target_feet[1]));
        if let Some(scale) = scale {
            let root = RootMapping {
                scale,
                source_floor: contacts::low_level(&lowest_ankle) - target_ankle / scale,
                target_floor: self.floor,
                source_body,
                target_body: self.body,
            };
            (self.floor, root)
        } else {
            let floor = contacts::low_level(&lowest_ankle) - target_ankle;
            let root = RootMapping {
                scale: 1.0,
                source_floor: floor,
                target_floor: floor,
                source_body,
                target_body: self.body,
            };
            (floor, root)
        }
    }

    /// A point's height in the target's body frame.
    pub(super) fn height(&self, p: DVec3) -> f64 {
        (self.body * p).y
    }

    /// A joint's rest height above the lowest rest joint.
    pub(super) fn clearance(&self, j: JointId) -> f64 {
        self.height(self.model.position(j)) - self.floor
    }

    /// The limb `[a, b, c]` of the target (with its toes, for legs) and the directions its
    /// middle joint bends about and points to in the body frame at rest.
    pub(super) fn limb(
        &self,
        [a, b, c]: [JointId; 3],
        toes: Option<JointId>,
        bend: DVec3,
        front: DVec3,
    ) -> Limb {
        let rest = &self.model;
        let body = self.body;
        let up = self.up;
        let reach = (rest.position(b) - rest.position(a)).length()
            + (rest.position(c) - rest.position(b)).length();
        Limb {
            start: a,
            mid: b,
            end: c,
            toes,
            reach,
            end_clearance: self.clearance(c),
            toes_clearance: toes.map_or(0.0, |t| self.clearance(t)),
            toe_tip: toes.map(|t| {
                let tip = self
                    .skeleton
                    .children(t)
                    .next()
                    .map(|child| rest.position(child))
                    .filter(|p| (*p - rest.position(t)).length() > 1e-6)
                    .unwrap_or_else(|| {
                        let foot = rest.position(t) - rest.position(c);
                        let forward = (foot - up * foot.dot(up)).normalize_or_zero();
                        rest.position(t) + forward * 0.5 * foot.length()
                    });
                let local = rest.rotation(t).conjugate() * (tip - rest.position(t));
                (local, (self.height(tip) - self.floor).max(0.0))
            }),
            toe_axis: toes.map_or(DVec3::X, |t| {
                repair::hinge_axis(self.skeleton.limit(t))
                    .unwrap_or_else(|| rest.rotation(t).conjugate() * (body.conjugate() * bend))
            }),
            bend_in_start: rest.rotation(a).conjugate() * (body.conjugate() * bend),
            front_in_start: rest.rotation(a).conjugate() * (body.conjugate() * front),
        }
    }
}
