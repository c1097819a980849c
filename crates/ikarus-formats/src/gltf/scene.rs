//! The node hierarchy and the skeleton built from a skin (or a VRM humanoid, or every node).

use std::collections::HashSet;

use glam::{DAffine3, DMat4, DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, Skeleton, SkeletonBuilder, Transform};

use super::{GltfError, GltfFile};

/// Which nodes become the skeleton.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SkeletonSource {
    /// The skin with the most joints (the first of equals); without skins, the VRM humanoid's
    /// nodes; without those, every node.
    #[default]
    Auto,
    /// Skin number `i`.
    Skin(usize),
    /// The skin with this name.
    SkinNamed(String),
    /// The given nodes (for example a VRM humanoid's) and the nodes between them.
    Nodes(Vec<usize>),
    /// Every node of the file.
    AllNodes,
}

/// A skeleton built from glTF nodes, with the maps between nodes and joints.
///
/// Joints are the chosen nodes and the nodes between them, in the core's depth-first order.
/// A chain of non-joint nodes above the top joint (an `Armature`, a Z-up correction) is not a
/// joint: its rest transform is folded into the root's (`model_from_parent`), so model space is
/// glTF world space (turned by `model_from_world` for VRM 0.x).
#[derive(Clone, Debug)]
pub struct GltfSkeleton {
    /// The skeleton, joints named after their nodes (`node<i>` for unnamed nodes; a repeated
    /// name gets `#<i>` appended).
    pub skeleton: Skeleton,
    /// Per joint, its node index.
    pub joint_nodes: Vec<usize>,
    /// Per node, its joint (`None` for nodes outside the skeleton).
    pub node_joints: Vec<Option<JointId>>,
    /// The skin the skeleton was built from, if any.
    pub skin: Option<usize>,
    /// Per joint, the node's own rest transform (`parent_from_node` in glTF's terms); equal
    /// to the skeleton's rest except at roots, where the skeleton's includes `model_from_parent`.
    pub node_rest: Vec<Transform>,
    /// Per joint, the static transform folded in front of the node's local transform: identity
    /// for non-roots, `model_from_world · world_from_parent_node` for roots.
    pub model_from_parent: Vec<DAffine3>,
    /// The turn applied to the whole file at load: identity, or 180° about +Y for VRM 0.x.
    pub model_from_world: DAffine3,
}

impl GltfSkeleton {
    /// The joint's skeleton-local transform for a node-local `local`: `local` itself except at
    /// roots, where the folded parents come in front.
    #[inline]
    pub fn to_joint_local(&self, joint: usize, local: &Transform) -> Transform {
        let prefix = &self.model_from_parent[joint];
        if *prefix == DAffine3::IDENTITY {
            *local
        } else {
            decompose(&(*prefix * local.to_affine()))
        }
    }

    /// The node-local transform for a skeleton-local one (the inverse of
    /// [`to_joint_local`](Self::to_joint_local)), as written back into the file.
    pub fn to_node_local(&self, joint: usize, local: &Transform) -> Transform {
        let prefix = &self.model_from_parent[joint];
        if *prefix == DAffine3::IDENTITY {
            *local
        } else {
            decompose(&(prefix.inverse() * local.to_affine()))
        }
    }

    /// A pose holding every node's own rest transform (the start of [`Clip::sample`](super::Clip::sample)).
    pub fn node_rest_pose(&self) -> LocalPose {
        LocalPose::from_transforms(self.node_rest.clone())
    }
}

/// A transform's translation, rotation and scale (shear, which TRS cannot hold, is dropped).
pub(crate) fn decompose(affine: &DAffine3) -> Transform {
    let (scale, rotation, translation) = affine.to_scale_rotation_translation();
    Transform {
        translation,
        rotation: rotation.normalize(),
        scale,
    }
}

pub(crate) fn node_name(node: &gltf::json::Node, index: usize) -> String {
    match node.name.as_deref() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => format!("node{index}"),
    }
}

/// Per node, its parent (checked by [`check_hierarchy`] to be unique and acyclic).
pub(crate) fn parents(root: &gltf::json::Root) -> Vec<Option<usize>> {
    let mut parents = vec![None; root.nodes.len()];
    for (i, node) in root.nodes.iter().enumerate() {
        for child in node.children.iter().flatten() {
            if let Some(slot) = parents.get_mut(child.value()) {
                slot.get_or_insert(i);
            }
        }
    }
    parents
}

/// Every node has at most one parent and no node is its own ancestor.
pub(crate) fn check_hierarchy(root: &gltf::json::Root) -> Result<(), GltfError> {
    let n = root.nodes.len();
    let mut parents = vec![None; n];
    for (i, node) in root.nodes.iter().enumerate() {
        for (k, child) in node.children.iter().flatten().enumerate() {
            let c = child.value();
            let pointer = format!("nodes[{i}].children[{k}]");
            let slot = parents
                .get_mut(c)
                .ok_or_else(|| GltfError::invalid(&pointer, format!("node {c} does not exist")))?;
            if c == i {
                return Err(GltfError::invalid(
                    pointer,
                    "a node cannot be its own child (cyclic hierarchy)",
                ));
            }
            if let Some(p) = *slot {
                return Err(GltfError::invalid(
                    pointer,
                    format!("node {c} already has parent {p}; glTF nodes form a forest"),
                ));
            }
            *slot = Some(i);
        }
    }
    for start in 0..n {
        let mut node = start;
        let mut steps = 0;
        while let Some(p) = parents[node] {
            node = p;
            steps += 1;
            if steps > n {
                return Err(GltfError::invalid(
                    format!("nodes[{start}]"),
                    "cyclic hierarchy: the node is its own ancestor",
                ));
            }
        }
    }
    Ok(())
}

/// A node's local transform (`parent_from_node`), from `matrix` or TRS.
pub(crate) fn node_transform(
    node: &gltf::json::Node,
    index: usize,
) -> Result<Transform, GltfError> {
    let pointer = format!("nodes[{index}]");
    let t = if let Some(m) = node.matrix {
        let m = DMat4::from_cols_array(&m.map(f64::from));
        if !m.is_finite() || m.row(3) != glam::DVec4::W {
            return Err(GltfError::invalid(
                format!("{pointer}.matrix"),
                "not a finite affine matrix",
            ));
        }
        decompose(&DAffine3::from_mat4(m))
    } else {
        let translation = node
            .translation
            .map_or(DVec3::ZERO, |t| DVec3::from(t.map(f64::from)));
        let rotation = node
            .rotation
            .map_or(DQuat::IDENTITY, |r| DQuat::from_array(r.0.map(f64::from)));
        let scale = node
            .scale
            .map_or(DVec3::ONE, |s| DVec3::from(s.map(f64::from)));
        let length = rotation.length();
        if !(length.is_finite() && length > 0.5) {
            return Err(GltfError::invalid(
                format!("{pointer}.rotation"),
                "not a unit quaternion",
            ));
        }
        Transform {
            translation,
            rotation: rotation / length,
            scale,
        }
    };
    if !t.is_finite() {
        return Err(GltfError::invalid(pointer, "non-finite transform"));
    }
    Ok(t)
}

impl GltfFile {
    /// Builds the skeleton from `source` (see [`SkeletonSource`]); VRM 0.x files are turned to
    /// face +Z.
    ///
    /// # Errors
    /// [`GltfError::NoSkeleton`] when the source names nothing; [`GltfError::Invalid`] for
    /// bad node transforms or indices.
    pub fn skeleton(&self, source: &SkeletonSource) -> Result<GltfSkeleton, GltfError> {
        let n = self.root.nodes.len();
        let skin_named = |name: &str| {
            self.root
                .skins
                .iter()
                .position(|s| s.name.as_deref() == Some(name))
                .ok_or_else(|| GltfError::NoSkeleton {
                    reason: format!("no skin named `{name}`"),
                })
        };
        let skin = match source {
            SkeletonSource::Skin(i) if *i < self.root.skins.len() => Some(*i),
            SkeletonSource::Skin(i) => {
                return Err(GltfError::NoSkeleton {
                    reason: format!("no skin {i} (the file has {})", self.root.skins.len()),
                });
            }
            SkeletonSource::SkinNamed(name) => Some(skin_named(name)?),
            SkeletonSource::Auto => {
                let mut best: Option<usize> = None;
                for (i, s) in self.root.skins.iter().enumerate() {
                    if best.is_none_or(|b| s.joints.len() > self.root.skins[b].joints.len()) {
                        best = Some(i);
                    }
                }
                best
            }
            SkeletonSource::Nodes(_) | SkeletonSource::AllNodes => None,
        };
        let seeds: Vec<usize> = if let Some(s) = skin {
            self.root.skins[s]
                .joints
                .iter()
                .map(gltf::json::Index::value)
                .collect()
        } else {
            match source {
                SkeletonSource::Nodes(nodes) => nodes.clone(),
                SkeletonSource::Auto => match self.vrm_humanoid()? {
                    Some(humanoid) => humanoid.bones.iter().map(|&(_, node)| node).collect(),
                    None => (0..n).collect(),
                },
                _ => (0..n).collect(),
            }
        };
        if seeds.is_empty() {
            return Err(GltfError::NoSkeleton {
                reason: "no skin, no VRM humanoid and no nodes".into(),
            });
        }
        if let Some(&bad) = seeds.iter().find(|&&s| s >= n) {
            return Err(GltfError::invalid(
                skin.map_or_else(|| "nodes".to_owned(), |s| format!("skins[{s}].joints")),
                format!("node {bad} does not exist ({n} nodes)"),
            ));
        }
        let model_from_world = if self.vrm_humanoid()?.is_some_and(|h| h.faces_minus_z()) {
            DAffine3::from_rotation_y(std::f64::consts::PI)
        } else {
            DAffine3::IDENTITY
        };
        self.build_skeleton(&seeds, skin, model_from_world)
    }

    /// Kept as one function of about 110 lines: the node forest is cut to the skeleton in steps
    /// (membership, tops, local frames, order) that share the per-node arrays.
    #[allow(clippy::too_many_lines)] // one checked pass; splitting scatters the checks
    fn build_skeleton(
        &self,
        seeds: &[usize],
        skin: Option<usize>,
        model_from_world: DAffine3,
    ) -> Result<GltfSkeleton, GltfError> {
        let n = self.root.nodes.len();
        let parents = parents(&self.root);
        let mut member = vec![false; n];
        let mut is_seed = vec![false; n];
        for &s in seeds {
            is_seed[s] = true;
            let mut node = Some(s);
            while let Some(i) = node {
                if member[i] {
                    break;
                }
                member[i] = true;
                node = parents[i];
            }
        }
        // Drop the chain of non-seed nodes above the top seed: a node that is not a seed and has
        // one member child only leads to the skeleton.
        let mut children_in: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            if member[i]
                && let Some(p) = parents[i]
            {
                children_in[p].push(i);
            }
        }
        let mut tops: Vec<usize> = (0..n)
            .filter(|&i| member[i] && parents[i].is_none())
            .collect();
        let mut k = 0;
        while k < tops.len() {
            let top = tops[k];
            if !is_seed[top] && children_in[top].len() <= 1 {
                member[top] = false;
                tops.swap_remove(k);
                tops.extend(children_in[top].iter().copied());
            } else {
                k += 1;
            }
        }
        let mut local = vec![Transform::IDENTITY; n];
        for (i, node) in self.root.nodes.iter().enumerate() {
            local[i] = node_transform(node, i)?;
        }
        // World transform of each node's parent, for the folded roots.
        let world_of = |mut i: usize| {
            let mut m = DAffine3::IDENTITY;
            loop {
                m = local[i].to_affine() * m;
                match parents[i] {
                    Some(p) => i = p,
                    None => return m,
                }
            }
        };
        let mut used = HashSet::new();
        let mut names = vec![String::new(); n];
        for i in (0..n).filter(|&i| member[i]) {
            let mut name = node_name(&self.root.nodes[i], i);
            if !used.insert(name.clone()) {
                name = format!("{name}#{i}");
                used.insert(name.clone());
            }
            names[i] = name;
        }
        let mut builder = SkeletonBuilder::new();
        let mut prefix = vec![DAffine3::IDENTITY; n];
        for i in (0..n).filter(|&i| member[i]) {
            let parent = parents[i].filter(|&p| member[p]);
            let rest = if parent.is_none() {
                prefix[i] = model_from_world * parents[i].map_or(DAffine3::IDENTITY, world_of);
                if prefix[i] == DAffine3::IDENTITY {
                    local[i]
                } else {
                    decompose(&(prefix[i] * local[i].to_affine()))
                }
            } else {
                local[i]
            };
            builder.joint(&names[i], parent.map(|p| names[p].as_str()), rest);
        }
        let skeleton = builder
            .build()
            .map_err(|e| GltfError::invalid("nodes", e.to_string()))?;
        let by_name: std::collections::HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .filter(|(_, name)| !name.is_empty())
            .map(|(i, name)| (name.as_str(), i))
            .collect();
        let mut node_joints = vec![None; n];
        let mut joint_nodes = Vec::with_capacity(skeleton.len());
        for j in skeleton.joints() {
            let node = by_name.get(skeleton.name(j)).copied().unwrap_or(0);
            node_joints[node] = Some(j);
            joint_nodes.push(node);
        }
        Ok(GltfSkeleton {
            node_rest: joint_nodes.iter().map(|&i| local[i]).collect(),
            model_from_parent: joint_nodes.iter().map(|&i| prefix[i]).collect(),
            skeleton,
            joint_nodes,
            node_joints,
            skin,
            model_from_world,
        })
    }
}

/// The node's world transform at rest (`world_from_node`).
pub(crate) fn world_transform(root: &gltf::json::Root, node: usize) -> Result<DAffine3, GltfError> {
    let parents = parents(root);
    let mut m = DAffine3::IDENTITY;
    let mut i = node;
    loop {
        m = node_transform(&root.nodes[i], i)?.to_affine() * m;
        match parents[i] {
            Some(p) => i = p,
            None => return Ok(m),
        }
    }
}
