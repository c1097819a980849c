//! The skinned mesh of a skeleton's skin: every triangle primitive of every node skinned with it.

use base64::Engine as _;
use glam::{DAffine3, DMat4, DVec3};
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::Checked;
use ikarus_core::{ModelPose, fk};

use super::accessor::{self, Shape};
use super::{GltfError, GltfFile, GltfSkeleton};
use crate::mesh::{Material, SkinnedMesh, Texture};

impl GltfFile {
    /// The skin's inverse bind matrices (`joint_from_world` at the bind pose), checked to be
    /// finite and invertible. Identity when the skin has none, as the specification says.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] naming the accessor or the singular matrix.
    pub fn inverse_binds(&self, skin: usize) -> Result<Vec<DAffine3>, GltfError> {
        let pointer = format!("skins[{skin}]");
        let s = self
            .root
            .skins
            .get(skin)
            .ok_or_else(|| GltfError::invalid(&pointer, "no such skin"))?;
        let Some(accessor) = s.inverse_bind_matrices else {
            return Ok(vec![DAffine3::IDENTITY; s.joints.len()]);
        };
        let values = accessor::read_f64(self, accessor.value(), Shape::MAT4)?;
        if values.len() / 16 < s.joints.len() {
            return Err(GltfError::invalid(
                format!("{pointer}.inverseBindMatrices"),
                format!(
                    "{} matrices for {} joints",
                    values.len() / 16,
                    s.joints.len()
                ),
            ));
        }
        values
            .chunks_exact(16)
            .take(s.joints.len())
            .enumerate()
            .map(|(k, m)| {
                let mut cols = [0.0; 16];
                cols.copy_from_slice(m);
                let m = DMat4::from_cols_array(&cols);
                let det = m.determinant();
                if !(m.is_finite() && det.is_finite() && det.abs() > 1e-12) {
                    return Err(GltfError::invalid(
                        format!("{pointer}.inverseBindMatrices[{k}]"),
                        format!("matrix is not invertible (determinant {det})"),
                    ));
                }
                Ok(DAffine3::from_mat4(m))
            })
            .collect()
    }

    /// The skinned mesh of `skeleton`'s skin: every triangle primitive of the nodes that use
    /// that skin, in model space at the bind pose (placed by the first such node's world
    /// transform, turned like the skeleton for VRM 0.x), with
    /// four influences per vertex (weights normalised to sum 1), base colours and textures.
    /// `None` when the skeleton has no skin or no node draws with it (unskinned meshes are not
    /// read).
    ///
    /// # Errors
    /// [`GltfError::Invalid`] naming the attribute, accessor or joint index that is out of range.
    pub fn mesh(&self, skeleton: &GltfSkeleton) -> Result<Option<SkinnedMesh>, GltfError> {
        let Some(skin) = skeleton.skin else {
            return Ok(None);
        };
        let skin_joints: Vec<usize> = self.root.skins[skin]
            .joints
            .iter()
            .map(gltf::json::Index::value)
            .collect();
        let binds = self.inverse_binds(skin)?;
        // The bind shape sits where the first node drawing with the skin puts it; vertices go
        // to model space through that node, and the binds take the inverse, so skinning is
        // unchanged: `model_from_joint · (bind · mesh_from_model) · (model_from_mesh · v)`.
        let first = self
            .root
            .nodes
            .iter()
            .position(|n| n.mesh.is_some() && n.skin.is_some_and(|s| s.value() == skin));
        let Some(first) = first else {
            return Ok(None);
        };
        let model_from_mesh =
            skeleton.model_from_world * super::scene::world_transform(&self.root, first)?;
        let mesh_from_model = model_from_mesh.inverse();
        // Joints outside the skin carry no weight; their bind is the rest pose.
        let mut rest = ModelPose::new(&skeleton.skeleton);
        fk::forward_kinematics(
            &skeleton.skeleton,
            &skeleton.skeleton.rest_pose(),
            &mut rest,
        );
        let mut inverse_bind: Vec<DAffine3> =
            rest.transforms().iter().map(DAffine3::inverse).collect();
        for (k, &node) in skin_joints.iter().enumerate() {
            if let Some(Some(joint)) = skeleton.node_joints.get(node) {
                inverse_bind[joint.index()] = binds[k] * mesh_from_model;
            }
        }
        let mut mesh = SkinnedMesh {
            inverse_bind,
            ..SkinnedMesh::default()
        };
        let mut any = false;
        for (n, node) in self.root.nodes.iter().enumerate() {
            let (Some(m), Some(s)) = (node.mesh, node.skin) else {
                continue;
            };
            if s.value() != skin {
                continue;
            }
            let m = m.value();
            let gltf_mesh = self.root.meshes.get(m).ok_or_else(|| {
                GltfError::invalid(
                    format!("nodes[{n}].mesh"),
                    format!("mesh {m} does not exist"),
                )
            })?;
            for (p, primitive) in gltf_mesh.primitives.iter().enumerate() {
                if primitive.mode != Checked::Valid(Mode::Triangles) {
                    continue;
                }
                let pointer = format!("meshes[{m}].primitives[{p}]");
                if self.append_primitive(
                    &mut mesh,
                    primitive,
                    &pointer,
                    &skin_joints,
                    skeleton,
                    &model_from_mesh,
                )? {
                    any = true;
                }
            }
        }
        Ok(any.then_some(mesh))
    }

    /// Appends one primitive; false when it has no skinning attributes.
    ///
    /// Kept as one function of about 130 lines: the attributes of one primitive are read, checked
    /// against each other and appended together, so a failure leaves the mesh unchanged.
    #[allow(clippy::too_many_lines)] // one checked pass; splitting scatters the checks
    fn append_primitive(
        &self,
        mesh: &mut SkinnedMesh,
        primitive: &gltf::json::mesh::Primitive,
        pointer: &str,
        skin_joints: &[usize],
        skeleton: &GltfSkeleton,
        turn: &DAffine3,
    ) -> Result<bool, GltfError> {
        let attribute = |semantic: Semantic| {
            primitive
                .attributes
                .get(&Checked::Valid(semantic))
                .map(gltf::json::Index::value)
        };
        let (Some(positions), Some(joints), Some(weights)) = (
            attribute(Semantic::Positions),
            attribute(Semantic::Joints(0)),
            attribute(Semantic::Weights(0)),
        ) else {
            return Ok(false);
        };
        let positions = accessor::read_f64(self, positions, Shape::VEC3)?;
        let count = positions.len() / 3;
        let joints = accessor::read_u32(self, joints, Shape::VEC4)?;
        let weights = accessor::read_f64(self, weights, Shape::VEC4)?;
        if joints.len() != count * 4 || weights.len() != count * 4 {
            return Err(GltfError::invalid(
                format!("{pointer}.attributes"),
                format!(
                    "{count} positions but {} joint and {} weight sets",
                    joints.len() / 4,
                    weights.len() / 4
                ),
            ));
        }
        let normals = match attribute(Semantic::Normals) {
            Some(a) => {
                Some(accessor::read_f64(self, a, Shape::VEC3)?).filter(|n| n.len() == count * 3)
            }
            None => None,
        };
        let uvs = match attribute(Semantic::TexCoords(0)) {
            Some(a) => {
                Some(accessor::read_f64(self, a, Shape::VEC2)?).filter(|u| u.len() == count * 2)
            }
            None => None,
        };
        let base = mesh.positions.len();
        let base_u32 = u32::try_from(base + count)
            .map_err(|_| GltfError::invalid(pointer, "more than 2³² vertices"))?
            - count as u32;
        // Keep the per-vertex arrays aligned: attributes missing here (or earlier) are padded.
        if normals.is_some() && mesh.normals.len() < base {
            mesh.normals.resize(base, [0.0, 1.0, 0.0]);
        }
        if uvs.is_some() && mesh.uvs.len() < base {
            mesh.uvs.resize(base, [0.0; 2]);
        }
        for v in 0..count {
            let p = turn.transform_point3(DVec3::from_slice(&positions[v * 3..v * 3 + 3]));
            mesh.positions.push(p.as_vec3().to_array());
            if let Some(normals) = &normals {
                let n = turn.transform_vector3(DVec3::from_slice(&normals[v * 3..v * 3 + 3]));
                mesh.normals
                    .push(n.normalize_or_zero().as_vec3().to_array());
            } else if !mesh.normals.is_empty() {
                mesh.normals.push([0.0, 1.0, 0.0]);
            }
            if let Some(uvs) = &uvs {
                mesh.uvs.push([uvs[v * 2] as f32, uvs[v * 2 + 1] as f32]);
            } else if !mesh.uvs.is_empty() {
                mesh.uvs.push([0.0; 2]);
            }
            let mut vj = [0u16; 4];
            let mut vw = [0f32; 4];
            let sum: f64 = weights[v * 4..v * 4 + 4].iter().sum();
            for k in 0..4 {
                let w = weights[v * 4 + k];
                if w == 0.0 {
                    continue;
                }
                let index = joints[v * 4 + k] as usize;
                let node = *skin_joints.get(index).ok_or_else(|| {
                    GltfError::invalid(
                        format!("{pointer}.attributes.JOINTS_0"),
                        format!(
                            "vertex {v} uses joint {index} of a skin with {}",
                            skin_joints.len()
                        ),
                    )
                })?;
                let joint = skeleton.node_joints[node].ok_or_else(|| {
                    GltfError::invalid(
                        format!("{pointer}.attributes.JOINTS_0"),
                        format!("node {node} is not a skeleton joint"),
                    )
                })?;
                vj[k] = u16::try_from(joint.index()).unwrap_or(u16::MAX);
                vw[k] = if sum > 0.0 { (w / sum) as f32 } else { 0.0 };
            }
            mesh.joints.push(vj);
            mesh.weights.push(vw);
        }
        let first_index = mesh.indices.len();
        match primitive.indices {
            Some(indices) => {
                let indices = accessor::read_indices(self, indices.value(), count, pointer)?;
                let whole = indices.len() - indices.len() % 3;
                mesh.indices
                    .extend(indices[..whole].iter().map(|i| i + base_u32));
            }
            None => mesh
                .indices
                .extend((0..(count - count % 3) as u32).map(|i| i + base_u32)),
        }
        mesh.materials.push(self.material(
            primitive,
            first_index,
            mesh.indices.len() - first_index,
        ));
        Ok(true)
    }

    fn material(
        &self,
        primitive: &gltf::json::mesh::Primitive,
        first_index: usize,
        index_count: usize,
    ) -> Material {
        let source = primitive
            .material
            .and_then(|m| self.root.materials.get(m.value()));
        let base_color = source.map_or([1.0; 4], |m| m.pbr_metallic_roughness.base_color_factor.0);
        let texture = source
            .and_then(|m| m.pbr_metallic_roughness.base_color_texture.as_ref())
            .and_then(|info| self.root.textures.get(info.index.value()))
            .and_then(|t| self.texture(t.source.value()));
        Material {
            name: source.and_then(|m| m.name.clone()).unwrap_or_default(),
            base_color,
            texture,
            first_index: first_index as u32,
            index_count: index_count as u32,
            double_sided: source.is_some_and(|m| m.double_sided),
        }
    }

    /// Image `index` as embedded bytes or a file name; `None` when it points nowhere valid.
    fn texture(&self, index: usize) -> Option<Texture> {
        let image = self.root.images.get(index)?;
        let mime = image.mime_type.as_ref().map(|m| m.0.clone());
        if let Some(view) = image.buffer_view {
            let view = self.root.buffer_views.get(view.value())?;
            let buffer = self.buffers.get(view.buffer.value())?;
            let start = usize::try_from(view.byte_offset.map_or(0, |o| o.0)).ok()?;
            let end = start.checked_add(usize::try_from(view.byte_length.0).ok()?)?;
            return Some(Texture::Embedded {
                mime: mime.unwrap_or_else(|| "image/png".into()),
                bytes: buffer.get(start..end)?.to_vec(),
            });
        }
        let uri = image.uri.as_deref()?;
        if let Some(data) = uri.strip_prefix("data:") {
            let (kind, encoded) = data.split_once(";base64,")?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            return Some(Texture::Embedded {
                mime: kind.to_owned(),
                bytes,
            });
        }
        Some(Texture::File(uri.to_owned()))
    }
}
