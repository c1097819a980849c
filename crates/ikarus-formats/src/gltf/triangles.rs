//! Every triangle a glTF file draws, in world space: a level or a terrain to stand on.

use glam::DVec3;
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::Checked;

use super::accessor::{self, Shape};
use super::{GltfError, GltfFile, scene};

impl GltfFile {
    /// Every triangle of every node's mesh primitives (skinned meshes at their bind shape),
    /// placed by the node's world transform: glTF's world space (metres, +Y up), each
    /// `[a, b, c]` counter-clockwise seen from its front. Primitives that are not triangle
    /// lists are passed over.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] naming the mesh, accessor or index that is out of range.
    pub fn triangles(&self) -> Result<Vec<[DVec3; 3]>, GltfError> {
        let mut out = Vec::new();
        for (n, node) in self.root.nodes.iter().enumerate() {
            let Some(m) = node.mesh.map(|m| m.value()) else {
                continue;
            };
            let mesh = self.root.meshes.get(m).ok_or_else(|| {
                GltfError::invalid(
                    format!("nodes[{n}].mesh"),
                    format!("mesh {m} does not exist"),
                )
            })?;
            let world = scene::world_transform(&self.root, n)?;
            for (p, primitive) in mesh.primitives.iter().enumerate() {
                if primitive.mode != Checked::Valid(Mode::Triangles) {
                    continue;
                }
                let Some(positions) = primitive
                    .attributes
                    .get(&Checked::Valid(Semantic::Positions))
                else {
                    continue;
                };
                let positions = accessor::read_f64(self, positions.value(), Shape::VEC3)?;
                let count = positions.len() / 3;
                let vertex = |i: u32| {
                    let i = i as usize * 3;
                    world.transform_point3(DVec3::new(
                        positions[i],
                        positions[i + 1],
                        positions[i + 2],
                    ))
                };
                let indices = match primitive.indices {
                    Some(indices) => accessor::read_indices(
                        self,
                        indices.value(),
                        count,
                        &format!("meshes[{m}].primitives[{p}]"),
                    )?,
                    None => (0..u32::try_from(count).map_err(|_| {
                        GltfError::invalid(
                            format!("meshes[{m}].primitives[{p}]"),
                            "more than 2³² vertices",
                        )
                    })?)
                        .collect(),
                };
                out.extend(
                    indices
                        .chunks_exact(3)
                        .map(|t| [vertex(t[0]), vertex(t[1]), vertex(t[2])]),
                );
            }
        }
        Ok(out)
    }
}
