//! VRM avatars: the humanoid bone map of VRM 0.x (`VRM`) and 1.0 (`VRMC_vrm`), and of VRM
//! animations (`VRMC_vrm_animation`).
//!
//! VRM 0.x models face −Z; [`GltfFile::skeleton`] turns them 180° about +Y so that every
//! humanoid faces +Z with its left on +X. The normalised (T-pose, identity-rest) humanoid view
//! that VRM animation uses is [`ikarus_core::humanoid_map::NormalizedHumanoid`].

use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap, NamingScheme};

use super::{GltfError, GltfFile, GltfSkeleton};

/// Which extension the humanoid map came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VrmVersion {
    /// `VRM` (0.x): faces −Z, 0.x thumb names.
    V0,
    /// `VRMC_vrm` (1.0): faces +Z.
    V1,
    /// `VRMC_vrm_animation` (a `.vrma`): faces +Z.
    Animation,
}

/// A file's humanoid bones, as node indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VrmHumanoid {
    /// The extension it came from.
    pub version: VrmVersion,
    /// Bones with their node indices, in the file's order.
    pub bones: Vec<(HumanoidBone, usize)>,
}

impl VrmHumanoid {
    /// True for VRM 0.x, whose models face −Z.
    pub fn faces_minus_z(&self) -> bool {
        self.version == VrmVersion::V0
    }

    /// The map onto `skeleton` (bones whose node is not a joint are left out).
    pub fn map(&self, skeleton: &GltfSkeleton) -> HumanoidMap {
        let mut map = HumanoidMap::empty(NamingScheme::Explicit);
        for &(bone, node) in &self.bones {
            if let Some(&Some(joint)) = skeleton.node_joints.get(node) {
                map.set(bone, Some(joint));
            }
        }
        map
    }
}

impl GltfFile {
    /// The VRM humanoid (from `VRMC_vrm`, `VRMC_vrm_animation` or `VRM`), if the file has one.
    /// Unknown bone names are skipped.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] when a bone names a node that does not exist.
    pub fn vrm_humanoid(&self) -> Result<Option<VrmHumanoid>, GltfError> {
        let extensions = &self.raw["extensions"];
        let nodes = self.root.nodes.len();
        let node_of =
            |value: &serde_json::Value, pointer: String| -> Result<Option<usize>, GltfError> {
                match value.get("node").and_then(serde_json::Value::as_u64) {
                    Some(node) if (node as usize) < nodes => Ok(Some(node as usize)),
                    Some(node) => Err(GltfError::invalid(
                        pointer,
                        format!("node {node} does not exist ({nodes} nodes)"),
                    )),
                    None => Ok(None),
                }
            };
        for (key, version) in [
            ("VRMC_vrm", VrmVersion::V1),
            ("VRMC_vrm_animation", VrmVersion::Animation),
        ] {
            if let Some(bones) = extensions[key]["humanoid"]["humanBones"].as_object() {
                let mut out = Vec::new();
                for (name, value) in bones {
                    let pointer = format!("extensions.{key}.humanoid.humanBones.{name}.node");
                    if let (Some(bone), Some(node)) =
                        (HumanoidBone::from_vrm_name(name), node_of(value, pointer)?)
                    {
                        out.push((bone, node));
                    }
                }
                return Ok(Some(VrmHumanoid {
                    version,
                    bones: out,
                }));
            }
        }
        if let Some(bones) = extensions["VRM"]["humanoid"]["humanBones"].as_array() {
            let mut out = Vec::new();
            for (i, value) in bones.iter().enumerate() {
                let pointer = format!("extensions.VRM.humanoid.humanBones[{i}].node");
                let bone = value
                    .get("bone")
                    .and_then(serde_json::Value::as_str)
                    .and_then(HumanoidBone::from_vrm0_name);
                if let (Some(bone), Some(node)) = (bone, node_of(value, pointer)?)
                    && !out.iter().any(|&(b, _)| b == bone)
                {
                    out.push((bone, node));
                }
            }
            return Ok(Some(VrmHumanoid {
                version: VrmVersion::V0,
                bones: out,
            }));
        }
        Ok(None)
    }
}

/// `base` with the pairs of a JSON bone map (`{"leftHand": "mixamorig:LeftHand", …}`, VRM 1.0
/// bone names to joint names) replacing its entries.
///
/// # Errors
/// [`BoneMapError`] naming the bad JSON, unknown bone name or missing joint.
pub fn bone_map_from_json(
    json: &str,
    skeleton: &ikarus_core::Skeleton,
    base: HumanoidMap,
) -> Result<HumanoidMap, BoneMapError> {
    let pairs: std::collections::BTreeMap<String, String> =
        serde_json::from_str(json).map_err(|e| BoneMapError::Json(e.to_string()))?;
    let mut resolved = Vec::with_capacity(pairs.len());
    for (bone, joint) in &pairs {
        let bone = HumanoidBone::from_vrm_name(bone).ok_or_else(|| {
            ikarus_core::humanoid_map::HumanoidMapError::UnknownBone { name: bone.clone() }
        })?;
        resolved.push((bone, joint.as_str()));
    }
    Ok(base.with_overrides(skeleton, resolved)?)
}

/// Why [`bone_map_from_json`] cannot read a bone map.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BoneMapError {
    /// The text is not a JSON object of strings (serde's message, with line and column).
    #[error("bone map: {0}")]
    Json(String),
    /// An unknown VRM bone name, or a joint the skeleton lacks.
    #[error(transparent)]
    Map(#[from] ikarus_core::humanoid_map::HumanoidMapError),
}
