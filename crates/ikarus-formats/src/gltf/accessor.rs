//! Reading accessors with every bound checked before a byte is touched: the view inside its
//! buffer, the elements inside their view, the element count against the bytes available (so
//! nothing is allocated from an unchecked count).

use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;

use super::{GltfError, GltfFile};

/// The shape an accessor must have to be read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    /// Components per element (1 scalar … 16 mat4).
    pub components: usize,
}

impl Shape {
    pub const SCALAR: Self = Self { components: 1 };
    pub const VEC2: Self = Self { components: 2 };
    pub const VEC3: Self = Self { components: 3 };
    pub const VEC4: Self = Self { components: 4 };
    pub const MAT4: Self = Self { components: 16 };
}

fn type_components(t: Type) -> usize {
    match t {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 | Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

fn component_size(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

/// The raw bytes of accessor `index` with its layout, all bounds checked.
struct Raw<'a> {
    bytes: &'a [u8],
    count: usize,
    stride: usize,
    component: ComponentType,
    normalized: bool,
    components: usize,
}

impl Raw<'_> {
    fn component(&self, element: usize, k: usize) -> f64 {
        let size = component_size(self.component);
        let at = element * self.stride + k * size;
        let b = &self.bytes[at..at + size];
        match self.component {
            ComponentType::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            ComponentType::U32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            ComponentType::U16 => {
                let v = f64::from(u16::from_le_bytes([b[0], b[1]]));
                if self.normalized { v / 65535.0 } else { v }
            }
            ComponentType::I16 => {
                let v = f64::from(i16::from_le_bytes([b[0], b[1]]));
                if self.normalized {
                    (v / 32767.0).max(-1.0)
                } else {
                    v
                }
            }
            ComponentType::U8 => {
                let v = f64::from(b[0]);
                if self.normalized { v / 255.0 } else { v }
            }
            ComponentType::I8 => {
                let v = f64::from(b[0].cast_signed());
                if self.normalized {
                    (v / 127.0).max(-1.0)
                } else {
                    v
                }
            }
        }
    }
}

/// Kept as one function of about 110 lines: the glTF rules an accessor must meet, checked in the
/// order the specification states them, each naming the accessor or view it fails on.
#[allow(clippy::too_many_lines)] // one checked pass; splitting scatters the checks
fn raw(file: &GltfFile, index: usize, shape: Shape) -> Result<Raw<'_>, GltfError> {
    let pointer = format!("accessors[{index}]");
    let accessor = file.root.accessors.get(index).ok_or_else(|| {
        GltfError::invalid(
            &pointer,
            format!(
                "no such accessor ({} in the file)",
                file.root.accessors.len()
            ),
        )
    })?;
    if accessor.sparse.is_some() {
        return Err(GltfError::Unsupported {
            pointer: format!("{pointer}.sparse"),
            reason: "sparse accessors".into(),
        });
    }
    let Checked::Valid(component) = &accessor.component_type else {
        return Err(GltfError::invalid(
            format!("{pointer}.componentType"),
            "unknown component type",
        ));
    };
    let component = component.0;
    let Checked::Valid(kind) = accessor.type_ else {
        return Err(GltfError::invalid(
            format!("{pointer}.type"),
            "unknown type",
        ));
    };
    let components = type_components(kind);
    if components != shape.components {
        return Err(GltfError::invalid(
            format!("{pointer}.type"),
            format!(
                "{components} components per element, expected {}",
                shape.components
            ),
        ));
    }
    let count = usize::try_from(accessor.count.0).unwrap_or(usize::MAX);
    let view_index = accessor
        .buffer_view
        .ok_or_else(|| GltfError::Unsupported {
            pointer: format!("{pointer}.bufferView"),
            reason: "accessor without a buffer view".into(),
        })?
        .value();
    let view = file.root.buffer_views.get(view_index).ok_or_else(|| {
        GltfError::invalid(
            format!("{pointer}.bufferView"),
            format!("buffer view {view_index} does not exist"),
        )
    })?;
    let view_pointer = format!("bufferViews[{view_index}]");
    let buffer_index = view.buffer.value();
    let buffer = file.buffers.get(buffer_index).ok_or_else(|| {
        GltfError::invalid(
            format!("{view_pointer}.buffer"),
            format!("buffer {buffer_index} does not exist"),
        )
    })?;
    let view_start = view.byte_offset.map_or(0, |o| o.0);
    let view_length = view.byte_length.0;
    let view_end = view_start
        .checked_add(view_length)
        .filter(|&e| e <= buffer.len() as u64)
        .ok_or_else(|| {
            GltfError::invalid(
                &view_pointer,
                format!(
                    "bytes {view_start}..{} lie past the end of buffer {buffer_index} ({} bytes)",
                    view_start.saturating_add(view_length),
                    buffer.len()
                ),
            )
        })?;
    let view_bytes = &buffer[view_start as usize..view_end as usize];
    let element = components * component_size(component);
    let stride = view.byte_stride.map_or(element, |s| s.0);
    if stride < element {
        return Err(GltfError::invalid(
            format!("{view_pointer}.byteStride"),
            format!("stride {stride} is smaller than the {element}-byte element"),
        ));
    }
    let offset = usize::try_from(accessor.byte_offset.map_or(0, |o| o.0)).unwrap_or(usize::MAX);
    let needed = match count {
        0 => Some(0),
        n => (n - 1)
            .checked_mul(stride)
            .and_then(|b| b.checked_add(element))
            .and_then(|b| b.checked_add(offset)),
    };
    match needed {
        Some(needed) if needed <= view_bytes.len() => Ok(Raw {
            bytes: &view_bytes[offset.min(view_bytes.len())..],
            count,
            stride,
            component,
            normalized: accessor.normalized,
            components,
        }),
        _ => Err(GltfError::invalid(
            &pointer,
            format!(
                "{count} elements of {element} bytes (stride {stride}) from offset {offset} run past the end of buffer view {view_index} ({} bytes)",
                view_bytes.len()
            ),
        )),
    }
}

/// Accessor `index` as `f64` values, `shape.components` per element, flattened; normalized
/// integers are mapped to `[0, 1]` or `[-1, 1]`.
pub(crate) fn read_f64(file: &GltfFile, index: usize, shape: Shape) -> Result<Vec<f64>, GltfError> {
    let raw = raw(file, index, shape)?;
    let mut out = Vec::with_capacity(raw.count * raw.components);
    for e in 0..raw.count {
        for k in 0..raw.components {
            out.push(raw.component(e, k));
        }
    }
    Ok(out)
}

/// Accessor `index` as unsigned integers (indices, joint numbers); floats are rejected.
pub(crate) fn read_u32(file: &GltfFile, index: usize, shape: Shape) -> Result<Vec<u32>, GltfError> {
    let raw = raw(file, index, shape)?;
    if matches!(
        raw.component,
        ComponentType::F32 | ComponentType::I8 | ComponentType::I16
    ) || raw.normalized
    {
        return Err(GltfError::invalid(
            format!("accessors[{index}].componentType"),
            "expected unsigned integers (UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT)",
        ));
    }
    let mut out = Vec::with_capacity(raw.count * raw.components);
    for e in 0..raw.count {
        for k in 0..raw.components {
            out.push(raw.component(e, k) as u32);
        }
    }
    Ok(out)
}

/// A triangle primitive's indices from accessor `index`, each checked to be below
/// `vertex_count`; `pointer` is the primitive's JSON pointer, for the error.
pub(crate) fn read_indices(
    file: &GltfFile,
    index: usize,
    vertex_count: usize,
    pointer: &str,
) -> Result<Vec<u32>, GltfError> {
    let indices = read_u32(file, index, Shape::SCALAR)?;
    if let Some(bad) = indices.iter().find(|&&i| i as usize >= vertex_count) {
        return Err(GltfError::invalid(
            format!("{pointer}.indices"),
            format!("index {bad} is past the {vertex_count} vertices"),
        ));
    }
    Ok(indices)
}
