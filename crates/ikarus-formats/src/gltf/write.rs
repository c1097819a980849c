//! Writing: a motion as a glTF animation into an existing file (everything else kept), and a
//! skeleton with its motion as a new GLB.

use base64::Engine as _;
use glam::{DQuat, DVec3};
use ikarus_core::{ModelPose, Motion, Skeleton, fk};
use serde_json::{Value, json};

use super::{GltfError, GltfFile, GltfSkeleton, container};

/// Appends accessors to a JSON root and their bytes to one buffer.
pub(crate) struct Builder {
    pub json: Value,
    pub bin: Vec<u8>,
    buffer: usize,
}

impl Builder {
    /// A builder writing into buffer `buffer`, whose existing bytes are `bin`.
    pub fn new(json: Value, bin: Vec<u8>, buffer: usize) -> Self {
        Self { json, bin, buffer }
    }

    fn array(&mut self, key: &str) -> &mut Vec<Value> {
        if !self.json[key].is_array() {
            self.json[key] = json!([]);
        }
        self.json[key].as_array_mut().expect("just made an array")
    }

    /// Pushes `value` onto the root array `key`, returning its index.
    pub fn push(&mut self, key: &str, value: Value) -> usize {
        let array = self.array(key);
        array.push(value);
        array.len() - 1
    }

    /// A float accessor of `kind` (`SCALAR`, `VEC3`, `VEC4`, `MAT4`) holding `values`.
    pub fn accessor(
        &mut self,
        kind: &str,
        width: usize,
        values: &[f64],
        with_bounds: bool,
    ) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        for v in values {
            self.bin.extend_from_slice(&(*v as f32).to_le_bytes());
        }
        let view = self.push(
            "bufferViews",
            json!({"buffer": self.buffer, "byteOffset": offset, "byteLength": values.len() * 4}),
        );
        let mut accessor = json!({
            "bufferView": view, "componentType": 5126, "count": values.len() / width, "type": kind,
        });
        if with_bounds {
            let mut min = vec![f64::INFINITY; width];
            let mut max = vec![f64::NEG_INFINITY; width];
            for chunk in values.chunks_exact(width) {
                for (k, v) in chunk.iter().enumerate() {
                    let v = f64::from(*v as f32);
                    min[k] = min[k].min(v);
                    max[k] = max[k].max(v);
                }
            }
            accessor["min"] = json!(min);
            accessor["max"] = json!(max);
        }
        self.push("accessors", accessor)
    }

    /// The animation of `motion` on `skeleton`'s nodes: one LINEAR channel per joint for
    /// rotation, and for translation and scale where they move or differ from the rest.
    pub fn animation(&mut self, skeleton: &GltfSkeleton, motion: &Motion, name: &str) -> usize {
        let times: Vec<f64> = (0..motion.len())
            .map(|k| k as f64 * motion.frame_time())
            .collect();
        let input = self.accessor("SCALAR", 1, &times, true);
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        let frames = motion.frames();
        let stored = stored_rotations(skeleton, motion);
        for j in 0..skeleton.skeleton.len() {
            let node_local: Vec<_> = frames
                .iter()
                .map(|f| skeleton.to_node_local(j, &f.transforms()[j]))
                .collect();
            let rest = skeleton.node_rest[j];
            let moves = |get: &dyn Fn(&ikarus_core::Transform) -> DVec3| {
                node_local
                    .iter()
                    .any(|t| (get(t) - get(&rest)).abs().max_element() > 0.0)
            };
            let mut tracks: Vec<(&str, &str, usize, Vec<f64>)> = Vec::new();
            tracks.push((
                "rotation",
                "VEC4",
                4,
                stored.iter().flat_map(|f| f[j].to_array()).collect(),
            ));
            if j == 0
                || skeleton
                    .skeleton
                    .parent(ikarus_core::JointId::from_index(j))
                    .is_none()
                || moves(&|t| t.translation)
            {
                tracks.push((
                    "translation",
                    "VEC3",
                    3,
                    node_local
                        .iter()
                        .flat_map(|t| t.translation.to_array())
                        .collect(),
                ));
            }
            if moves(&|t| t.scale) {
                tracks.push((
                    "scale",
                    "VEC3",
                    3,
                    node_local.iter().flat_map(|t| t.scale.to_array()).collect(),
                ));
            }
            for (path, kind, width, values) in tracks {
                let output = self.accessor(kind, width, &values, false);
                samplers.push(json!({"input": input, "output": output, "interpolation": "LINEAR"}));
                channels.push(json!({
                    "sampler": samplers.len() - 1,
                    "target": {"node": skeleton.joint_nodes[j], "path": path},
                }));
            }
        }
        self.push(
            "animations",
            json!({"name": name, "samplers": samplers, "channels": channels}),
        )
    }

    /// Sets the target buffer's `byteLength` and returns the finished JSON and bytes.
    pub fn finish(mut self) -> (Value, Vec<u8>) {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let length = self.bin.len();
        let buffer = self.buffer;
        let buffers = self.array("buffers");
        while buffers.len() <= buffer {
            buffers.push(json!({"byteLength": 0}));
        }
        buffers[buffer]["byteLength"] = json!(length);
        (self.json, self.bin)
    }
}

impl GltfFile {
    /// This file with `motion` (on `skeleton`, read from this file) added as a new animation
    /// called `name`; every other part of the file is kept as it was. A GLB gets the keys
    /// appended to its BIN chunk and is returned as GLB bytes; a `.gltf` gets a new embedded
    /// (`data:` URI) buffer and is returned as JSON text.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] when the motion was made for another joint count.
    pub fn with_motion(
        &self,
        skeleton: &GltfSkeleton,
        motion: &Motion,
        name: &str,
    ) -> Result<Vec<u8>, GltfError> {
        if motion.joint_count() != skeleton.skeleton.len() {
            return Err(GltfError::invalid(
                "animations",
                format!(
                    "the motion has {} joints, the skeleton {}",
                    motion.joint_count(),
                    skeleton.skeleton.len()
                ),
            ));
        }
        let glb_bin = self.binary && self.root.buffers.first().is_some_and(|b| b.uri.is_none());
        if self.binary && (glb_bin || self.root.buffers.is_empty()) {
            let bin = self.buffers.first().cloned().unwrap_or_default();
            let mut builder = Builder::new(self.raw.clone(), bin, 0);
            builder.animation(skeleton, motion, name);
            let (json, bin) = builder.finish();
            let text =
                serde_json::to_vec(&json).map_err(|e| GltfError::invalid("", e.to_string()))?;
            return Ok(container::glb(&text, &bin));
        }
        let buffer = self.root.buffers.len();
        let mut builder = Builder::new(self.raw.clone(), Vec::new(), buffer);
        builder.animation(skeleton, motion, name);
        let (mut json, bin) = builder.finish();
        json["buffers"][buffer]["uri"] = json!(format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&bin)
        ));
        if self.binary {
            let text =
                serde_json::to_vec(&json).map_err(|e| GltfError::invalid("", e.to_string()))?;
            let first_bin = self
                .buffers
                .first()
                .filter(|_| glb_bin)
                .cloned()
                .unwrap_or_default();
            return Ok(container::glb(&text, &first_bin));
        }
        serde_json::to_vec_pretty(&json).map_err(|e| GltfError::invalid("", e.to_string()))
    }
}

/// A new GLB holding `skeleton` as nodes (one per joint, named after it, rest TRS), a skin over
/// all joints with inverse bind matrices from the rest pose, and `motion` (if any) as one
/// LINEAR animation called `name`.
pub fn write_glb(skeleton: &Skeleton, motion: Option<&Motion>, name: &str) -> Vec<u8> {
    let (json, bin) = skeleton_json(skeleton, motion, name, |b| add_skin(b, skeleton), json!({}));
    let text = serde_json::to_vec(&json).unwrap_or_default();
    container::glb(&text, &bin)
}

/// The JSON and binary of a skeleton file; `extensions` goes to the root's `extensions`.
pub(crate) fn skeleton_json(
    skeleton: &Skeleton,
    motion: Option<&Motion>,
    name: &str,
    edit: impl FnOnce(&mut Builder),
    extensions: Value,
) -> (Value, Vec<u8>) {
    let nodes: Vec<Value> = skeleton
        .joints()
        .map(|j| {
            let rest = skeleton.rest(j);
            let mut node = json!({
                "name": skeleton.name(j),
                "translation": rest.translation.to_array(),
                "rotation": rest.rotation.to_array(),
            });
            if rest.scale != DVec3::ONE {
                node["scale"] = json!(rest.scale.to_array());
            }
            let children: Vec<usize> = skeleton
                .children(j)
                .map(ikarus_core::JointId::index)
                .collect();
            if !children.is_empty() {
                node["children"] = json!(children);
            }
            node
        })
        .collect();
    let roots: Vec<usize> = skeleton.roots().map(ikarus_core::JointId::index).collect();
    let mut root = json!({
        "asset": {"version": "2.0", "generator": "ikarus"},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
    });
    if extensions.as_object().is_some_and(|o| !o.is_empty()) {
        root["extensionsUsed"] = json!(
            extensions
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
        );
        root["extensions"] = extensions;
    }
    let mut builder = Builder::new(root, Vec::new(), 0);
    let gltf_skeleton = GltfSkeleton::identity(skeleton);
    edit(&mut builder);
    if let Some(motion) = motion {
        builder.animation(&gltf_skeleton, motion, name);
    }
    builder.finish()
}

/// Per frame and joint, the node-local rotation to store, already rounded to `f32`. Each
/// joint's rotation is rounded so that its *model* rotation, after its parents' rounded
/// rotations, is nearest the motion's (the parents' rounding fed back), so `f32` errors do not
/// add up down a chain: forward kinematics of the stored keys stays within about 1e-7 rad of
/// the motion at every joint. Each key keeps the sign of the motion's own quaternion.
fn stored_rotations(skeleton: &GltfSkeleton, motion: &Motion) -> Vec<Vec<DQuat>> {
    let joints = &skeleton.skeleton;
    let n = joints.len();
    let round = |q: DQuat| {
        let a = q.normalize().to_array().map(|c| f64::from(c as f32));
        DQuat::from_array(a)
    };
    let mut exact = vec![DQuat::IDENTITY; n];
    let mut rounded = vec![DQuat::IDENTITY; n];
    motion
        .frames()
        .iter()
        .map(|frame| {
            (0..n)
                .map(|j| {
                    let id = ikarus_core::JointId::from_index(j);
                    let local = frame.transforms()[j];
                    let (parent_exact, parent_rounded) = joints
                        .parent(id)
                        .map_or((DQuat::IDENTITY, DQuat::IDENTITY), |p| {
                            (exact[p.index()], rounded[p.index()])
                        });
                    exact[j] = (parent_exact * local.rotation).normalize();
                    let mut wanted = local;
                    wanted.rotation = (parent_rounded.conjugate() * exact[j]).normalize();
                    if wanted.rotation.dot(local.rotation) < 0.0 {
                        wanted.rotation = -wanted.rotation;
                    }
                    let mut node = skeleton.to_node_local(j, &wanted);
                    node.rotation = round(node.rotation);
                    let back = skeleton.to_joint_local(j, &node).rotation.normalize();
                    rounded[j] = (parent_rounded * back).normalize();
                    node.rotation
                })
                .collect()
        })
        .collect()
}

impl GltfSkeleton {
    /// The node view of a skeleton written one node per joint (`write_glb`).
    pub(crate) fn identity(skeleton: &Skeleton) -> Self {
        let n = skeleton.len();
        Self {
            skeleton: skeleton.clone(),
            joint_nodes: (0..n).collect(),
            node_joints: skeleton.joints().map(Some).collect(),
            skin: None,
            node_rest: skeleton.rest_transforms().to_vec(),
            model_from_parent: vec![glam::DAffine3::IDENTITY; n],
            model_from_world: glam::DAffine3::IDENTITY,
        }
    }
}

/// Adds a skin over every node with inverse bind matrices from the rest pose.
pub(crate) fn add_skin(builder: &mut Builder, skeleton: &Skeleton) {
    let mut rest = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
    let matrices: Vec<f64> = rest
        .transforms()
        .iter()
        .flat_map(|m| glam::DMat4::from(m.inverse()).to_cols_array())
        .collect();
    let accessor = builder.accessor("MAT4", 16, &matrices, false);
    let joints: Vec<usize> = (0..skeleton.len()).collect();
    builder.push(
        "skins",
        json!({"joints": joints, "inverseBindMatrices": accessor}),
    );
}
