//! Postures carried from one humanoid to another through their bone maps.

use ikarus_core::humanoid_map::{HumanoidMap, NormalizedHumanoid};
use ikarus_core::{JointId, LocalPose, Skeleton};

/// Carries poses of a source humanoid onto a target humanoid: each mapped bone's normalised
/// rotation (its change of model-space orientation relative to its parent bone's, see
/// [`NormalizedHumanoid`]) copied by bone name, so a target bone turns the way the source bone
/// turns whatever the two rest poses are. Target bones the source lacks stay at rest; the
/// target's hips keep their rest position (posture only, no root motion).
#[derive(Clone, Debug)]
pub struct HumanoidTransfer {
    from: NormalizedHumanoid,
    to: NormalizedHumanoid,
    /// Per target normalised joint, the source normalised joint of the same bone.
    pairs: Vec<(JointId, Option<JointId>)>,
}

impl HumanoidTransfer {
    /// The transfer between two mapped skeletons; `None` when either map is empty.
    pub fn new(
        source: &Skeleton,
        source_map: &HumanoidMap,
        target: &Skeleton,
        target_map: &HumanoidMap,
    ) -> Option<Self> {
        let from = NormalizedHumanoid::new(source, source_map)?;
        let to = NormalizedHumanoid::new(target, target_map)?;
        let pairs = to
            .skeleton()
            .joints()
            .map(|j| (j, from.skeleton().joint(to.skeleton().name(j))))
            .collect();
        Some(Self { from, to, pairs })
    }

    /// How many target bones find a source bone.
    pub fn matched(&self) -> usize {
        self.pairs.iter().filter(|(_, s)| s.is_some()).count()
    }

    /// The target pose (`out`, sized for `target`) of a source pose.
    pub fn apply(
        &self,
        source: &Skeleton,
        pose: &LocalPose,
        target: &Skeleton,
        out: &mut LocalPose,
    ) {
        let mut from_pose = self.from.skeleton().rest_pose();
        self.from.to_normalized(source, pose, &mut from_pose);
        let to_skeleton = self.to.skeleton();
        let mut to_pose = to_skeleton.rest_pose();
        for &(j, s) in &self.pairs {
            if let Some(s) = s {
                to_pose[j].rotation = from_pose[s].rotation;
            }
        }
        self.to.from_normalized(target, &to_pose, out);
    }
}
