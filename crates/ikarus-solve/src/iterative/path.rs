//! Which joints move an effector relative to the base joint, and in which sense (seed 004, the
//! IK overview: its `FindJointPath`).

use ikarus_core::{JointId, Skeleton};

use crate::{IkTask, TaskError};

/// On which side of the skeleton's root a path joint lies.
///
/// Turning an [`Side::Effector`]-side joint turns the effector about it; turning a
/// [`Side::Base`]-side joint turns the base instead, so the solver applies the inverse rotation
/// and moves the root to keep the base where it was (seed 004, IK overview).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Between the effector and the common ancestor: rotations move the effector side.
    Effector,
    /// Between the base joint and the common ancestor (the path runs through the root).
    Base,
}

/// One joint of a solver's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathJoint {
    /// The joint.
    pub joint: JointId,
    /// Its side.
    pub side: Side,
}

/// The joints that move a task's effectors relative to its base, tip first: effector-side
/// joints deepest first, then base-side joints from the common ancestor down to the base.
///
/// Without a base, the effectors' ancestors below their tree's root (the root stays fixed).
/// With a base `B`, for each effector `E` with common ancestor `C`: `E`'s ancestors strictly
/// below `C`, and `B` with its ancestors strictly below `C`. An effector joint itself is on the
/// path when its goal has an orientation (its own rotation turns it).
///
/// `affects[k]` lists, for path joint `k`, the indices of the effectors it moves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointPath {
    joints: Vec<PathJoint>,
    affects: Vec<Vec<u16>>,
    /// The root joint of the tree that holds the path.
    root: Option<JointId>,
    scratch: Vec<(JointId, Side, u16)>,
}

impl JointPath {
    /// Builds the path of `task` on `skeleton`.
    ///
    /// # Errors
    /// [`TaskError::Disconnected`] when an effector and the base are in different trees of a
    /// forest, [`TaskError::TooManyEffectors`] beyond 65,536 effectors.
    pub fn new(skeleton: &Skeleton, task: &IkTask) -> Result<Self, TaskError> {
        let mut path = Self::default();
        path.rebuild(skeleton, task)?;
        Ok(path)
    }

    /// Rebuilds in place (reusing the buffers).
    ///
    /// # Errors
    /// As [`JointPath::new`].
    pub fn rebuild(&mut self, skeleton: &Skeleton, task: &IkTask) -> Result<(), TaskError> {
        self.joints.clear();
        for a in &mut self.affects {
            a.clear();
        }
        if task.effectors.len() > usize::from(u16::MAX) + 1 {
            return Err(TaskError::TooManyEffectors);
        }
        let tree_root = |j: JointId| skeleton.path_to_root(j).last().unwrap_or(j);
        self.root = task
            .base
            .or(task.effectors.first().map(|e| e.joint))
            .map(tree_root);
        let sides = &mut self.scratch;
        sides.clear();
        for (index, effector) in task.effectors.iter().enumerate() {
            let e = effector.joint;
            let root = tree_root(e);
            let (common, base) = match task.base {
                None => (root, None),
                Some(b) => {
                    if tree_root(b) != root {
                        return Err(TaskError::Disconnected {
                            effector: skeleton.name(e).to_owned(),
                            base: skeleton.name(b).to_owned(),
                        });
                    }
                    let common = skeleton
                        .path_to_root(e)
                        .find(|&a| skeleton.is_ancestor_or_self(a, b))
                        .unwrap_or(root);
                    (common, Some(b))
                }
            };
            let index = index as u16;
            let start = if effector.goal.orientation.is_some() {
                Some(e)
            } else {
                skeleton.parent(e)
            };
            let mut joint = start;
            while let Some(j) =
                joint.filter(|&j| j != common && skeleton.is_ancestor_or_self(common, j))
            {
                sides.push((j, Side::Effector, index));
                joint = skeleton.parent(j);
            }
            let mut joint = base;
            while let Some(j) = joint.filter(|&j| j != common) {
                sides.push((j, Side::Base, index));
                joint = skeleton.parent(j);
            }
        }
        // Effector side deepest first (children have larger indices), then the base side from
        // the common ancestor down.
        sides.sort_by_key(|&(j, side, _)| match side {
            Side::Effector => (0, usize::MAX - j.index()),
            Side::Base => (1, j.index()),
        });
        for &(j, side, effector) in sides.iter() {
            if self.joints.last().is_none_or(|p| p.joint != j) {
                self.joints.push(PathJoint { joint: j, side });
                if self.affects.len() < self.joints.len() {
                    self.affects.push(Vec::new());
                }
            }
            let affects = &mut self.affects[self.joints.len() - 1];
            if !affects.contains(&effector) {
                affects.push(effector);
            }
        }
        // A base-side joint moves every effector outside its own subtree (the root side), not
        // only the one whose path listed it.
        for (k, pj) in self.joints.iter().enumerate() {
            if pj.side == Side::Base {
                let affects = &mut self.affects[k];
                affects.clear();
                for (i, e) in task.effectors.iter().enumerate() {
                    if !skeleton.is_ancestor_or_self(pj.joint, e.joint) {
                        affects.push(i as u16);
                    }
                }
            }
        }
        Ok(())
    }

    /// The path joints, tip first.
    pub fn joints(&self) -> &[PathJoint] {
        &self.joints
    }

    /// Indices (into the task's effectors) of the effectors path joint `k` moves.
    pub fn affects(&self, k: usize) -> &[u16] {
        &self.affects[k]
    }

    /// Number of path joints.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// True when no joint can move an effector.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The root of the tree the path lies in.
    pub fn root(&self) -> Option<JointId> {
        self.root
    }
}
