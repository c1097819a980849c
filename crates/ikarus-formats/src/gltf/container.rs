//! The file container: GLB chunks or JSON text, and the buffers the JSON names.

use std::path::Path;

use base64::Engine as _;

use super::GltfError;

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// The JSON text and the binary chunk of a GLB, or the whole text of a `.gltf`.
pub(crate) struct Container<'a> {
    pub json: &'a [u8],
    pub bin: Option<&'a [u8]>,
    pub binary: bool,
}

fn u32_at(bytes: &[u8], offset: usize, what: &str) -> Result<u32, GltfError> {
    bytes
        .get(offset..offset + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| GltfError::Container {
            offset,
            reason: format!("file ends inside the {what} ({} bytes in all)", bytes.len()),
        })
}

/// Splits a GLB into its chunks, or takes the bytes as JSON text when they do not start with
/// the GLB magic.
pub(crate) fn split(bytes: &[u8]) -> Result<Container<'_>, GltfError> {
    if !bytes.starts_with(GLB_MAGIC) {
        return Ok(Container {
            json: bytes,
            bin: None,
            binary: false,
        });
    }
    let version = u32_at(bytes, 4, "GLB header")?;
    if version != 2 {
        return Err(GltfError::Container {
            offset: 4,
            reason: format!("GLB version {version}; only version 2 (glTF 2.0) is read"),
        });
    }
    let declared = u32_at(bytes, 8, "GLB header")? as usize;
    if declared > bytes.len() {
        return Err(GltfError::Container {
            offset: 8,
            reason: format!(
                "header declares {declared} bytes but the file has {} (truncated)",
                bytes.len()
            ),
        });
    }
    let bytes = &bytes[..declared];
    let mut offset = 12;
    let mut json = None;
    let mut bin = None;
    while offset < bytes.len() {
        let length = u32_at(bytes, offset, "chunk header")? as usize;
        let kind = u32_at(bytes, offset + 4, "chunk header")?;
        let start = offset + 8;
        let end = start
            .checked_add(length)
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| GltfError::Container {
                offset,
                reason: format!(
                    "chunk of {length} bytes runs past the end of the file at byte {} (truncated)",
                    bytes.len()
                ),
            })?;
        let data = &bytes[start..end];
        match kind {
            CHUNK_JSON if json.is_none() => {
                if offset != 12 {
                    return Err(GltfError::Container {
                        offset,
                        reason: "the JSON chunk must be the first chunk".into(),
                    });
                }
                json = Some(data);
            }
            CHUNK_BIN if bin.is_none() && json.is_some() => bin = Some(data),
            CHUNK_JSON | CHUNK_BIN => {
                return Err(GltfError::Container {
                    offset,
                    reason: "duplicate or misplaced JSON/BIN chunk".into(),
                });
            }
            _ => {} // Unknown chunks are skipped, as the specification asks.
        }
        // Chunks are 4-byte aligned; tolerate writers that forget the last padding.
        offset = end.next_multiple_of(4).min(bytes.len()).max(end);
    }
    let json = json.ok_or_else(|| GltfError::Container {
        offset: 12,
        reason: "no JSON chunk".into(),
    })?;
    Ok(Container {
        json,
        bin,
        binary: true,
    })
}

/// Loads buffer `index` of the JSON: the BIN chunk, a `data:` URI or a file beside `base`.
pub(crate) fn load_buffer(
    index: usize,
    uri: Option<&str>,
    byte_length: usize,
    bin: Option<&[u8]>,
    base: Option<&Path>,
) -> Result<Vec<u8>, GltfError> {
    let pointer = format!("buffers[{index}]");
    let data = match uri {
        None => {
            if index != 0 {
                return Err(GltfError::invalid(
                    pointer,
                    "only the first buffer may omit `uri` (it is the GLB BIN chunk)",
                ));
            }
            bin.ok_or_else(|| {
                GltfError::invalid(&pointer, "no `uri` and the file has no GLB BIN chunk")
            })?
            .to_vec()
        }
        Some(uri) if uri.starts_with("data:") => {
            let (_, encoded) =
                uri.split_once(";base64,")
                    .ok_or_else(|| GltfError::Unsupported {
                        pointer: format!("{pointer}.uri"),
                        reason: "data URI without `;base64,`".into(),
                    })?;
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| {
                    GltfError::invalid(format!("{pointer}.uri"), format!("bad base64: {e}"))
                })?
        }
        Some(uri) => {
            let Some(base) = base else {
                return Err(GltfError::Unsupported {
                    pointer: format!("{pointer}.uri"),
                    reason: format!("external buffer `{uri}` when reading from bytes"),
                });
            };
            read_external(base, uri, &pointer)?
        }
    };
    if data.len() < byte_length {
        return Err(GltfError::invalid(
            format!("{pointer}.byteLength"),
            format!(
                "declares {byte_length} bytes but the data has {}",
                data.len()
            ),
        ));
    }
    Ok(data)
}

/// An external buffer's bytes, `uri` relative to `base` (`pointer` names the buffer in errors).
#[cfg(feature = "fs")]
#[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
fn read_external(base: &Path, uri: &str, pointer: &str) -> Result<Vec<u8>, GltfError> {
    let path = base.join(uri);
    std::fs::read(&path).map_err(|e| {
        GltfError::invalid(format!("{pointer}.uri"), format!("{}: {e}", path.display()))
    })
}

/// Without the `fs` feature no file is read: an external buffer is refused.
#[cfg(not(feature = "fs"))]
fn read_external(_base: &Path, uri: &str, pointer: &str) -> Result<Vec<u8>, GltfError> {
    Err(GltfError::Unsupported {
        pointer: format!("{pointer}.uri"),
        reason: format!("external buffer `{uri}`: reading files needs the `fs` feature"),
    })
}

/// A GLB file from JSON text and a binary chunk (padded as the specification requires).
pub(crate) fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let json_padded = json.len().next_multiple_of(4);
    let bin_padded = bin.len().next_multiple_of(4);
    let total = 12 + 8 + json_padded + if bin.is_empty() { 0 } else { 8 + bin_padded };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(GLB_MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_padded as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(20 + json_padded, b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(bin_padded as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    out
}
