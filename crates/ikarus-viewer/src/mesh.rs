//! The skinned mesh as the page receives it: flat little-endian buffers in base64 (three.js
//! typed arrays read them as they are), materials with their base colours and textures as
//! data URLs.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ikarus_formats::mesh::{SkinnedMesh, Texture};

use crate::protocol::{MaterialInfo, MeshInfo};

/// Largest texture file read from beside a model (bytes); larger ones are left out.
const MAX_TEXTURE_BYTES: u64 = 16 * 1024 * 1024;

/// Base64 of values written as little-endian bytes.
fn encode<T: Copy, const N: usize>(values: &[T], bytes: impl Fn(T) -> [u8; N]) -> String {
    let mut raw = Vec::with_capacity(values.len() * N);
    for &value in values {
        raw.extend_from_slice(&bytes(value));
    }
    STANDARD.encode(raw)
}

/// The MIME type of an image file the browser can decode, by its extension.
fn image_mime(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    match extension.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "bmp" => Some("image/bmp"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        // TGA, DDS, SPH/SPA (sphere maps): not base-colour images a browser decodes.
        _ => None,
    }
}

/// A material's texture as a data URL: embedded bytes, or the file beside `model` (when the
/// model came from a path and the file exists and is an image the browser reads).
fn texture_url(texture: &Texture, model: Option<&Path>) -> Option<String> {
    match texture {
        Texture::Embedded { mime, bytes } => {
            Some(format!("data:{mime};base64,{}", STANDARD.encode(bytes)))
        }
        Texture::File(relative) => {
            let mime = image_mime(relative)?;
            let path = model?.parent()?.join(relative.replace('\\', "/"));
            let size = std::fs::metadata(&path).ok()?.len();
            if size > MAX_TEXTURE_BYTES {
                return None;
            }
            let bytes = std::fs::read(&path).ok()?;
            Some(format!("data:{mime};base64,{}", STANDARD.encode(bytes)))
        }
    }
}

/// The reply form of `mesh`. `model` is the model file's path (textures named by file are read
/// beside it), `None` for uploads.
pub(crate) fn mesh_info(mesh: &SkinnedMesh, model: Option<&Path>) -> MeshInfo {
    let flat3 = |v: [f32; 3]| {
        let mut out = [0; 12];
        for (chunk, x) in out.chunks_exact_mut(4).zip(v) {
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        out
    };
    MeshInfo {
        vertices: mesh.vertex_count(),
        positions: encode(&mesh.positions, flat3),
        normals: encode(&mesh.normals, flat3),
        uvs: encode(&mesh.uvs, |[u, v]: [f32; 2]| {
            let mut out = [0; 8];
            out[..4].copy_from_slice(&u.to_le_bytes());
            out[4..].copy_from_slice(&v.to_le_bytes());
            out
        }),
        joints: encode(&mesh.joints, |j: [u16; 4]| {
            let mut out = [0; 8];
            for (chunk, x) in out.chunks_exact_mut(2).zip(j) {
                chunk.copy_from_slice(&x.to_le_bytes());
            }
            out
        }),
        weights: encode(&mesh.weights, |w: [f32; 4]| {
            let mut out = [0; 16];
            for (chunk, x) in out.chunks_exact_mut(4).zip(w) {
                chunk.copy_from_slice(&x.to_le_bytes());
            }
            out
        }),
        indices: encode(&mesh.indices, u32::to_le_bytes),
        // Column-major 4×4, as three.js `Matrix4.fromArray` reads it.
        inverse_bind: mesh
            .inverse_bind
            .iter()
            .map(|m| glam::DMat4::from(*m).to_cols_array())
            .collect(),
        materials: mesh
            .materials
            .iter()
            .map(|m| MaterialInfo {
                name: m.name.clone(),
                base_color: m.base_color,
                texture: m.texture.as_ref().and_then(|t| texture_url(t, model)),
                first_index: m.first_index,
                index_count: m.index_count,
                double_sided: m.double_sided,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_decode_to_the_mesh_values() {
        let mesh = SkinnedMesh {
            positions: vec![[1.0, -2.5, 3.25], [0.0, 0.5, -1.0]],
            normals: vec![],
            uvs: vec![[0.25, 0.75], [1.0, 0.0]],
            joints: vec![[0, 1, 0, 0], [1, 0, 0, 0]],
            weights: vec![[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
            indices: vec![0, 1, 1],
            materials: vec![],
            inverse_bind: vec![
                glam::DAffine3::from_translation(glam::DVec3::new(1.0, 2.0, 3.0));
                2
            ],
        };
        let info = mesh_info(&mesh, None);
        let positions = STANDARD.decode(&info.positions).unwrap();
        let floats: Vec<f32> = positions
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(floats, [1.0, -2.5, 3.25, 0.0, 0.5, -1.0]);
        let joints = STANDARD.decode(&info.joints).unwrap();
        assert_eq!(joints.len(), 16);
        assert_eq!(u16::from_le_bytes([joints[2], joints[3]]), 1);
        let indices = STANDARD.decode(&info.indices).unwrap();
        assert_eq!(indices.len(), 12);
        assert_eq!(info.normals, "");
        // Column-major: the translation is in elements 12..15.
        assert_eq!(info.inverse_bind[0][12..15], [1.0, 2.0, 3.0]);
        assert_eq!(info.vertices, 2);
    }

    #[test]
    fn textures_are_data_urls_and_unknown_images_are_left_out() {
        let embedded = Texture::Embedded {
            mime: "image/png".to_owned(),
            bytes: vec![1, 2, 3],
        };
        assert_eq!(
            texture_url(&embedded, None).unwrap(),
            "data:image/png;base64,AQID"
        );
        assert_eq!(texture_url(&Texture::File("a.tga".into()), None), None);
        assert_eq!(texture_url(&Texture::File("a.png".into()), None), None);
        let missing = Path::new("/nonexistent/model.pmx");
        assert_eq!(
            texture_url(&Texture::File("tex/a.png".into()), Some(missing)),
            None
        );
    }
}
