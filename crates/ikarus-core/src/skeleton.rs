//! The immutable [`Skeleton`] and its validating [`SkeletonBuilder`].

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use crate::{JointLimit, LocalPose, Transform};

/// The largest number of joints a skeleton may have. Real characters have tens to a few
/// hundred; the cap keeps hostile input (a file declaring a million joints) from exhausting memory.
pub const MAX_JOINTS: usize = 65_536;

/// Index of a joint in a [`Skeleton`]; valid for the skeleton that produced it.
///
/// Joints are ordered parents-before-children, so `parent(j) < j` for every non-root joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JointId(u32);

impl JointId {
    /// The joint's index into every per-joint array (poses, limits, names).
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The id of the joint at `index`. Callers make sure the index is below the skeleton's
    /// [`len`](Skeleton::len); indices at or above [`MAX_JOINTS`] saturate.
    #[inline]
    pub fn from_index(index: usize) -> Self {
        Self(u32::try_from(index).unwrap_or(u32::MAX))
    }
}

impl fmt::Display for JointId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

const NO_PARENT: u32 = u32::MAX;

/// An articulated figure: joint names, hierarchy, rest pose and joint limits.
///
/// Built once by [`SkeletonBuilder::build`] and never changed afterwards; per-frame state lives
/// in [`LocalPose`] / [`ModelPose`](crate::ModelPose). Joints are stored depth first with parents
/// before children, so the descendants of joint `j` are exactly [`subtree(j)`](Self::subtree).
#[derive(Clone, Debug)]
pub struct Skeleton {
    names: Vec<String>,
    parents: Vec<u32>,
    rest: Vec<Transform>,
    limits: Vec<JointLimit>,
    subtree_end: Vec<u32>,
    by_name: HashMap<String, JointId>,
}

impl Skeleton {
    /// Number of joints.
    #[inline]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: a built skeleton has at least one joint.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// All joint ids in order (parents before children).
    pub fn joints(&self) -> impl ExactSizeIterator<Item = JointId> + use<> {
        (0..self.len()).map(JointId::from_index)
    }

    /// The joint's name.
    #[inline]
    pub fn name(&self, joint: JointId) -> &str {
        &self.names[joint.index()]
    }

    /// All names, indexed by joint.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The joint called `name`, if any.
    pub fn joint(&self, name: &str) -> Option<JointId> {
        self.by_name.get(name).copied()
    }

    /// The joint called `name`, or an [`SkeletonError::UnknownJoint`] naming it.
    ///
    /// # Errors
    /// When no joint has that name.
    pub fn try_joint(&self, name: &str) -> Result<JointId, SkeletonError> {
        self.joint(name).ok_or_else(|| SkeletonError::UnknownJoint {
            name: name.to_owned(),
        })
    }

    /// The joint's parent, `None` for a root.
    #[inline]
    pub fn parent(&self, joint: JointId) -> Option<JointId> {
        match self.parents[joint.index()] {
            NO_PARENT => None,
            p => Some(JointId(p)),
        }
    }

    /// Parent indices as raw `u32` with `u32::MAX` for roots — the flat form hot loops use.
    #[inline]
    pub fn parent_indices(&self) -> &[u32] {
        &self.parents
    }

    /// The joint's rest transform relative to its parent (`parent_from_joint` at rest).
    #[inline]
    pub fn rest(&self, joint: JointId) -> &Transform {
        &self.rest[joint.index()]
    }

    /// All rest transforms, indexed by joint.
    pub fn rest_transforms(&self) -> &[Transform] {
        &self.rest
    }

    /// A pose holding the rest transforms.
    pub fn rest_pose(&self) -> LocalPose {
        LocalPose::from_transforms(self.rest.clone())
    }

    /// Whether the rest pose has any extent: some joint away from another. A skeleton whose
    /// bones all have zero length (every joint at one place) carries no shape for a
    /// retargeting, a grounding or a tracker calibration to measure.
    pub fn has_extent(&self) -> bool {
        let mut model = crate::ModelPose::new(self);
        crate::fk::forward_kinematics(self, &self.rest_pose(), &mut model);
        let mut positions = model.positions();
        let Some(first) = positions.next() else {
            return false;
        };
        positions.any(|p| p.distance(first) > 1e-9)
    }

    /// The joint's limit, relative to its rest rotation (see [`JointLimit`]).
    #[inline]
    pub fn limit(&self, joint: JointId) -> &JointLimit {
        &self.limits[joint.index()]
    }

    /// All limits, indexed by joint.
    pub fn limits(&self) -> &[JointLimit] {
        &self.limits
    }

    /// The first joint of `pose` outside its limit (see [`JointLimit::contains`]) and by how
    /// many radians ([`JointLimit::violation`]); `None` when every joint is legal.
    pub fn limit_violation(&self, pose: &LocalPose) -> Option<(JointId, f64)> {
        self.joints().find_map(|j| {
            let delta = self.rest(j).rotation.conjugate() * pose[j].rotation;
            let limit = self.limit(j);
            (!limit.contains(delta)).then(|| (j, limit.violation(delta)))
        })
    }

    /// Moves every joint of `pose` onto its limit ([`JointLimit::project`], the nearest legal
    /// rotation relative to rest); returns how many joints moved.
    pub fn project_to_limits(&self, pose: &mut LocalPose) -> usize {
        let mut moved = 0;
        for j in self.joints() {
            let rest = self.rest(j).rotation;
            let delta = rest.conjugate() * pose[j].rotation;
            let limit = self.limit(j);
            if !limit.contains(delta) {
                pose[j].rotation = (rest * limit.project(delta)).normalize();
                moved += 1;
            }
        }
        moved
    }

    /// The joint and all its descendants as a contiguous index range.
    #[inline]
    pub fn subtree(&self, joint: JointId) -> Range<usize> {
        joint.index()..self.subtree_end[joint.index()] as usize
    }

    /// True when `ancestor` is `joint` or one of its ancestors.
    pub fn is_ancestor_or_self(&self, ancestor: JointId, joint: JointId) -> bool {
        self.subtree(ancestor).contains(&joint.index())
    }

    /// The joint's direct children, in order.
    pub fn children(&self, joint: JointId) -> impl Iterator<Item = JointId> + '_ {
        let range = self.subtree(joint);
        let parent = joint.0;
        range
            .skip(1)
            .filter(move |&i| self.parents[i] == parent)
            .map(JointId::from_index)
    }

    /// The root joints (one for a single figure, several for a forest).
    pub fn roots(&self) -> impl Iterator<Item = JointId> + '_ {
        self.parents
            .iter()
            .enumerate()
            .filter(|(_, p)| **p == NO_PARENT)
            .map(|(i, _)| JointId::from_index(i))
    }

    /// The joints from `joint` up to its root, `joint` first.
    pub fn path_to_root(&self, joint: JointId) -> impl Iterator<Item = JointId> + '_ {
        std::iter::successors(Some(joint), |&j| self.parent(j))
    }

    /// The chain from `ancestor` down to `tip`, both included, ancestor first; `None` when
    /// `ancestor` is not an ancestor of (or equal to) `tip`.
    pub fn chain(&self, ancestor: JointId, tip: JointId) -> Option<Vec<JointId>> {
        if !self.is_ancestor_or_self(ancestor, tip) {
            return None;
        }
        let mut chain: Vec<JointId> = self
            .path_to_root(tip)
            .take_while(|&j| j != ancestor)
            .collect();
        chain.push(ancestor);
        chain.reverse();
        Some(chain)
    }

    /// A copy with every rest translation multiplied by `factor` (a change of length unit).
    #[must_use]
    pub fn scaled(&self, factor: f64) -> Skeleton {
        let mut scaled = self.clone();
        for rest in &mut scaled.rest {
            rest.translation *= factor;
        }
        scaled
    }

    /// A copy with every joint free ([`JointLimit::Free`]): for passes that must keep a
    /// motion's own joint space (a clip that already breaks the limits is not snapped onto
    /// them).
    #[must_use]
    pub fn without_limits(&self) -> Skeleton {
        let mut free = self.clone();
        free.limits.fill(JointLimit::Free);
        free
    }

    /// Depth of the joint: 0 for a root.
    pub fn depth(&self, joint: JointId) -> usize {
        self.path_to_root(joint).count() - 1
    }
}

/// One joint as given to the [`SkeletonBuilder`].
#[derive(Clone, Debug, PartialEq)]
pub struct RawJoint {
    /// Unique, non-empty name.
    pub name: String,
    /// Name of the parent joint; `None` for a root.
    pub parent: Option<String>,
    /// Rest transform relative to the parent (`parent_from_joint`).
    pub rest: Transform,
    /// Limit relative to the rest rotation.
    pub limit: JointLimit,
}

/// The editable form of a [`Skeleton`]: add joints in any order, then [`build`](Self::build)
/// validates them and orders them depth first.
///
/// ```
/// use ikarus_core::{SkeletonBuilder, Transform, glam::DVec3};
///
/// let mut builder = SkeletonBuilder::new();
/// builder.joint("hips", None, Transform::from_translation(DVec3::new(0.0, 1.0, 0.0)));
/// builder.joint("spine", Some("hips"), Transform::from_translation(DVec3::Y * 0.2));
/// let skeleton = builder.build().unwrap();
/// assert_eq!(skeleton.len(), 2);
/// ```
#[derive(Clone, Debug, Default)]
pub struct SkeletonBuilder {
    joints: Vec<RawJoint>,
}

impl SkeletonBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a free joint.
    pub fn joint(&mut self, name: &str, parent: Option<&str>, rest: Transform) -> &mut Self {
        self.push(RawJoint {
            name: name.to_owned(),
            parent: parent.map(str::to_owned),
            rest,
            limit: JointLimit::Free,
        })
    }

    /// Adds a joint with a limit.
    pub fn limited_joint(
        &mut self,
        name: &str,
        parent: Option<&str>,
        rest: Transform,
        limit: JointLimit,
    ) -> &mut Self {
        self.push(RawJoint {
            name: name.to_owned(),
            parent: parent.map(str::to_owned),
            rest,
            limit,
        })
    }

    /// Adds a joint.
    pub fn push(&mut self, joint: RawJoint) -> &mut Self {
        self.joints.push(joint);
        self
    }

    /// Number of joints added so far.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// True when no joint has been added.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Validates the joints and builds the skeleton, ordered depth first (roots and siblings
    /// keep the order they were added in; input that is already depth first keeps its indices).
    ///
    /// # Errors
    /// Every [`SkeletonError`] variant but `UnknownJoint`, each naming the offending joint.
    pub fn build(&self) -> Result<Skeleton, SkeletonError> {
        let n = self.joints.len();
        if n == 0 {
            return Err(SkeletonError::Empty);
        }
        if n > MAX_JOINTS {
            return Err(SkeletonError::TooManyJoints {
                count: n,
                max: MAX_JOINTS,
            });
        }
        let mut by_input_name: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (index, joint) in self.joints.iter().enumerate() {
            if joint.name.is_empty() {
                return Err(SkeletonError::EmptyName { index });
            }
            if by_input_name.insert(joint.name.as_str(), index).is_some() {
                return Err(SkeletonError::DuplicateName {
                    name: joint.name.clone(),
                });
            }
            validate_rest(joint)?;
            joint
                .limit
                .validate()
                .map_err(|reason| SkeletonError::InvalidLimit {
                    joint: joint.name.clone(),
                    reason,
                })?;
        }
        let mut input_parent = vec![usize::MAX; n];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (index, joint) in self.joints.iter().enumerate() {
            match &joint.parent {
                None => roots.push(index),
                Some(parent) => {
                    let Some(&p) = by_input_name.get(parent.as_str()) else {
                        return Err(SkeletonError::UnknownParent {
                            joint: joint.name.clone(),
                            parent: parent.clone(),
                        });
                    };
                    if p == index {
                        return Err(SkeletonError::Cycle {
                            joint: joint.name.clone(),
                        });
                    }
                    input_parent[index] = p;
                    children[p].push(index);
                }
            }
        }
        let order = self.depth_first_order(&roots, &children)?;
        let mut new_index = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new as u32;
        }
        let parents: Vec<u32> = order
            .iter()
            .map(|&old| match input_parent[old] {
                usize::MAX => NO_PARENT,
                p => new_index[p],
            })
            .collect();
        let mut subtree_end: Vec<u32> = (1..=n as u32).collect();
        for j in (0..n).rev() {
            if parents[j] != NO_PARENT {
                let p = parents[j] as usize;
                subtree_end[p] = subtree_end[p].max(subtree_end[j]);
            }
        }
        let names: Vec<String> = order.iter().map(|&o| self.joints[o].name.clone()).collect();
        let by_name = names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), JointId::from_index(i)))
            .collect();
        Ok(Skeleton {
            rest: order.iter().map(|&o| self.joints[o].rest).collect(),
            limits: order
                .iter()
                .map(|&o| self.joints[o].limit.clone())
                .collect(),
            names,
            parents,
            subtree_end,
            by_name,
        })
    }
}

impl SkeletonBuilder {
    /// Depth-first order from the roots; a joint never reached hangs on a parent cycle.
    fn depth_first_order(
        &self,
        roots: &[usize],
        children: &[Vec<usize>],
    ) -> Result<Vec<usize>, SkeletonError> {
        let n = self.joints.len();
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(j) = stack.pop() {
            order.push(j);
            stack.extend(children[j].iter().rev());
        }
        if order.len() != n {
            let mut reached = vec![false; n];
            for &j in &order {
                reached[j] = true;
            }
            let first = reached.iter().position(|r| !r).unwrap_or(0);
            return Err(SkeletonError::Cycle {
                joint: self.joints[first].name.clone(),
            });
        }
        Ok(order)
    }
}

fn validate_rest(joint: &RawJoint) -> Result<(), SkeletonError> {
    let non_finite = |field| SkeletonError::NonFinite {
        joint: joint.name.clone(),
        field,
    };
    if !joint.rest.translation.is_finite() {
        return Err(non_finite("translation"));
    }
    if !joint.rest.rotation.is_finite() {
        return Err(non_finite("rotation"));
    }
    if !joint.rest.scale.is_finite() {
        return Err(non_finite("scale"));
    }
    let length = joint.rest.rotation.length();
    if (length - 1.0).abs() > 1e-6 {
        return Err(SkeletonError::NonUnitRotation {
            joint: joint.name.clone(),
            length,
        });
    }
    Ok(())
}

/// What is wrong with a skeleton definition, or a joint name that does not exist.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SkeletonError {
    /// No joints were given. Add at least one root joint.
    #[error("the skeleton has no joints; add at least one root joint")]
    Empty,
    /// More than [`MAX_JOINTS`] joints. Split the figure or raise the cap.
    #[error("the skeleton has {count} joints, more than the {max} supported")]
    TooManyJoints {
        /// Joints given.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// A joint has an empty name. Name every joint.
    #[error("joint #{index} has an empty name; every joint needs a unique name")]
    EmptyName {
        /// Position of the joint in the input.
        index: usize,
    },
    /// Two joints share a name. Rename one of them.
    #[error("joint name `{name}` is used twice; joint names must be unique")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
    /// A joint names a parent that is not in the skeleton. Add the parent or fix the name.
    #[error("joint `{joint}` names parent `{parent}`, which is not a joint of this skeleton")]
    UnknownParent {
        /// The child.
        joint: String,
        /// The missing parent's name.
        parent: String,
    },
    /// A joint is its own ancestor (or hangs below such a loop). Break the loop by making one
    /// joint a root.
    #[error("joint `{joint}` is its own ancestor or hangs below a parent cycle; break the cycle")]
    Cycle {
        /// A joint on or below the cycle.
        joint: String,
    },
    /// A rest transform holds NaN or infinity. Fix the source data.
    #[error("joint `{joint}` has a non-finite rest {field}")]
    NonFinite {
        /// The joint.
        joint: String,
        /// `translation`, `rotation` or `scale`.
        field: &'static str,
    },
    /// A rest rotation is not a unit quaternion. Normalize it.
    #[error(
        "joint `{joint}` has a rest rotation of length {length}; rotations must be unit quaternions"
    )]
    NonUnitRotation {
        /// The joint.
        joint: String,
        /// The quaternion's length.
        length: f64,
    },
    /// A joint limit is malformed (non-unit axis, min above max, ...). The reason says which.
    #[error("joint `{joint}` has an invalid limit: {reason}")]
    InvalidLimit {
        /// The joint.
        joint: String,
        /// What is wrong.
        reason: crate::LimitError,
    },
    /// A lookup by name found no joint. Check the spelling against the skeleton's joint names.
    #[error("no joint named `{name}`")]
    UnknownJoint {
        /// The name looked up.
        name: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn t(y: f64) -> Transform {
        Transform::from_translation(DVec3::new(0.0, y, 0.0))
    }

    #[test]
    fn a_skeleton_of_zero_length_bones_has_no_extent() {
        let mut b = SkeletonBuilder::new();
        b.joint("r", None, t(0.0))
            .joint("a", Some("r"), t(0.0))
            .joint("b", Some("a"), t(0.0));
        assert!(!b.build().unwrap().has_extent());
        // One bone of length: extent, also when it is not the root's.
        let mut b = SkeletonBuilder::new();
        b.joint("r", None, t(0.0))
            .joint("a", Some("r"), t(0.0))
            .joint("b", Some("a"), t(1e-3));
        assert!(b.build().unwrap().has_extent());
        assert!(crate::humanoid::builtin_humanoid().has_extent());
    }

    #[test]
    fn reorders_children_given_before_parents_depth_first() {
        let mut b = SkeletonBuilder::new();
        b.joint("b1", Some("a"), t(1.0))
            .joint("c", None, t(0.0))
            .joint("a", Some("r"), t(1.0))
            .joint("r", None, t(0.0))
            .joint("a2", Some("r"), t(2.0));
        let s = b.build().unwrap();
        let names: Vec<&str> = s.names().iter().map(String::as_str).collect();
        assert_eq!(names, ["c", "r", "a", "b1", "a2"]);
        let r = s.joint("r").unwrap();
        assert_eq!(s.subtree(r), 1..5);
        assert_eq!(
            s.children(r).map(|j| s.name(j)).collect::<Vec<_>>(),
            ["a", "a2"]
        );
        for j in s.joints() {
            if let Some(p) = s.parent(j) {
                assert!(p < j);
            }
        }
        let chain = s.chain(r, s.joint("b1").unwrap()).unwrap();
        assert_eq!(
            chain.iter().map(|&j| s.name(j)).collect::<Vec<_>>(),
            ["r", "a", "b1"]
        );
        assert!(
            s.chain(s.joint("a2").unwrap(), s.joint("b1").unwrap())
                .is_none()
        );
    }
}
