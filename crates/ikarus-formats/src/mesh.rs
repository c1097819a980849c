//! A skinned triangle mesh, the one shape every character format (PMX/PMD, glTF/VRM) hands to
//! the viewer: vertices in model space at the bind pose, up to four joint influences each,
//! triangles, and materials as index ranges.
//!
//! Skinning is linear blend: a vertex `v` with joints `j_k` and weights `w_k` is drawn at
//! `Σ w_k · model_from_joint(j_k) · bind_from_model(j_k) · v`, where `model_from_joint` comes from
//! FK of the current pose and `bind_from_model` is the inverse bind matrix ([`SkinnedMesh::inverse_bind`]).
//! Formats convert vertices and bind matrices to the core's conventions (right-handed, +Y up,
//! metres) on load, like every other quantity.

use glam::{DAffine3, DVec3};

/// A triangle mesh skinned to the joints of one skeleton.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedMesh {
    /// Vertex positions in model space at the bind pose.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals in model space at the bind pose; empty when the file has none.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates (`u` right, `v` down as in glTF and PMX); empty when the file has none.
    pub uvs: Vec<[f32; 2]>,
    /// Up to four skeleton joint indices per vertex (unused slots have weight 0).
    pub joints: Vec<[u16; 4]>,
    /// The weights of [`joints`](Self::joints), summing to 1 per vertex.
    pub weights: Vec<[f32; 4]>,
    /// Triangles as vertex indices, counter-clockwise when seen from the front (glTF's winding).
    pub indices: Vec<u32>,
    /// Materials, each drawing a contiguous range of [`indices`](Self::indices).
    pub materials: Vec<Material>,
    /// Per skeleton joint, the inverse bind matrix: model space at the bind pose → joint space.
    /// Its length equals the skeleton's joint count.
    pub inverse_bind: Vec<DAffine3>,
}

/// How a range of triangles is drawn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Material {
    /// The material's name in the file (UTF-8).
    pub name: String,
    /// Base (diffuse) colour, linear RGBA.
    pub base_color: [f32; 4],
    /// The base-colour texture, when the file names one.
    pub texture: Option<Texture>,
    /// The first index (into [`SkinnedMesh::indices`]) this material draws.
    pub first_index: u32,
    /// How many indices (three per triangle) this material draws.
    pub index_count: u32,
    /// Both faces of its triangles are drawn (no back-face culling): glTF's `doubleSided`,
    /// PMX's "double-sided" drawing flag, PMD materials that are not opaque.
    pub double_sided: bool,
}

/// A texture image: embedded bytes or a file beside the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Texture {
    /// Image bytes embedded in the file, with their MIME type (`image/png`, `image/jpeg`).
    Embedded {
        /// The MIME type.
        mime: String,
        /// The encoded image.
        bytes: Vec<u8>,
    },
    /// A path relative to the model file (as written in the file, `/` separators).
    File(String),
}

impl SkinnedMesh {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// The vertex `index` skinned by the model-space joint transforms `model_from_joint`
    /// (from FK of a pose of the mesh's skeleton). Slots with weight 0 are skipped.
    pub fn skinned_position(&self, index: usize, model_from_joint: &[DAffine3]) -> DVec3 {
        let rest = DVec3::from(self.positions[index].map(f64::from));
        let mut sum = DVec3::ZERO;
        for (&joint, &weight) in self.joints[index].iter().zip(&self.weights[index]) {
            if weight == 0.0 {
                continue;
            }
            let joint = usize::from(joint);
            let skin = model_from_joint[joint] * self.inverse_bind[joint];
            sum += f64::from(weight) * skin.transform_point3(rest);
        }
        sum
    }

    /// Checks the mesh's internal consistency against a skeleton of `joint_count` joints:
    /// per-vertex arrays of equal length, indices inside the vertex range, joint indices inside
    /// the skeleton, material ranges inside the index list. Returns what is wrong.
    ///
    /// # Errors
    /// [`MeshError`] naming the first inconsistency.
    pub fn validate(&self, joint_count: usize) -> Result<(), MeshError> {
        let n = self.positions.len();
        if self.joints.len() != n || self.weights.len() != n {
            return Err(MeshError::Skin {
                positions: n,
                joints: self.joints.len(),
                weights: self.weights.len(),
            });
        }
        if !self.normals.is_empty() && self.normals.len() != n {
            return Err(MeshError::Normals {
                positions: n,
                normals: self.normals.len(),
            });
        }
        if !self.uvs.is_empty() && self.uvs.len() != n {
            return Err(MeshError::Uvs {
                positions: n,
                uvs: self.uvs.len(),
            });
        }
        if !self.indices.len().is_multiple_of(3) {
            return Err(MeshError::Triangles {
                indices: self.indices.len(),
            });
        }
        if let Some(bad) = self.indices.iter().find(|&&i| i as usize >= n) {
            return Err(MeshError::Index {
                index: *bad,
                vertices: n,
            });
        }
        if let Some(bad) = self
            .joints
            .iter()
            .flatten()
            .find(|&&j| usize::from(j) >= joint_count)
        {
            return Err(MeshError::Joint {
                joint: *bad,
                joints: joint_count,
            });
        }
        if self.inverse_bind.len() != joint_count {
            return Err(MeshError::InverseBinds {
                found: self.inverse_bind.len(),
                joints: joint_count,
            });
        }
        for material in &self.materials {
            let end = u64::from(material.first_index) + u64::from(material.index_count);
            if end > self.indices.len() as u64 {
                return Err(MeshError::Material {
                    material: material.name.clone(),
                    end,
                    indices: self.indices.len(),
                });
            }
        }
        Ok(())
    }
}

/// What is inconsistent in a [`SkinnedMesh`] ([`SkinnedMesh::validate`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MeshError {
    /// The per-vertex joint or weight sets are not one per position.
    #[error("{positions} positions but {joints} joint sets and {weights} weight sets")]
    Skin {
        /// Positions.
        positions: usize,
        /// Joint sets.
        joints: usize,
        /// Weight sets.
        weights: usize,
    },
    /// Normals are given, but not one per position.
    #[error("{positions} positions but {normals} normals")]
    Normals {
        /// Positions.
        positions: usize,
        /// Normals.
        normals: usize,
    },
    /// Texture coordinates are given, but not one per position.
    #[error("{positions} positions but {uvs} uvs")]
    Uvs {
        /// Positions.
        positions: usize,
        /// Texture coordinates.
        uvs: usize,
    },
    /// The index list is not a whole number of triangles.
    #[error("{indices} indices is not a whole number of triangles")]
    Triangles {
        /// Indices.
        indices: usize,
    },
    /// An index past the vertices.
    #[error("index {index} is past the {vertices} vertices")]
    Index {
        /// The index.
        index: u32,
        /// Vertices.
        vertices: usize,
    },
    /// A skin joint index past the skeleton's joints.
    #[error("joint {joint} is past the {joints} joints")]
    Joint {
        /// The joint index.
        joint: u16,
        /// The skeleton's joints.
        joints: usize,
    },
    /// The inverse bind matrices are not one per joint.
    #[error("{found} inverse bind matrices for {joints} joints")]
    InverseBinds {
        /// Matrices given.
        found: usize,
        /// The skeleton's joints.
        joints: usize,
    },
    /// A material's index range runs past the index list.
    #[error("material `{material}` draws indices up to {end}, past the {indices} indices")]
    Material {
        /// The material's name.
        material: String,
        /// The end of its range.
        end: u64,
        /// Indices.
        indices: usize,
    },
}
