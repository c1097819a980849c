//! PMX 2.0 / 2.1 models.
//!
//! Layout (all little-endian): `"PMX "`, version `f32`, a globals count and the globals
//! (text encoding, additional UVs, vertex / texture / material / bone / morph / rigid-body
//! index sizes), four texts (names and comments), then counted sections: vertices, face
//! indices, textures, materials, bones (with IK), morphs, display frames, rigid bodies, joints
//! (and in 2.1 soft bodies, which are left unread).

use super::bytes::{Encoding, Reader};
use super::model::{
    Bone, BoneFlags, BoneInherit, IkDef, IkLinkDef, MaterialDef, MmdModel, ModelFormat, Tail,
    Vertex, limit_from_mmd,
};
use super::{MmdError, position_from_mmd};

/// Index sizes and encoding from the header.
#[derive(Clone, Copy)]
struct Globals {
    encoding: Encoding,
    extra_uvs: usize,
    vertex: u8,
    texture: u8,
    material: u8,
    bone: u8,
    morph: u8,
    rigid: u8,
}

/// Reads a PMX model; lengths in metres times `scale`.
///
/// # Errors
/// [`MmdError`] with the byte offset and what was expected.
pub fn parse(bytes: &[u8], scale: f64) -> Result<MmdModel, MmdError> {
    let mut r = Reader::new(bytes);
    if r.take(4, "the PMX signature")? != b"PMX " {
        return Err(MmdError::new(0, "expected the signature `PMX `"));
    }
    let version = r.f32("the PMX version")?;
    if !(2.0..=2.1).contains(&version) {
        return Err(MmdError::new(
            4,
            format!("expected PMX version 2.0 or 2.1, found {version}"),
        ));
    }
    let g = globals(&mut r)?;
    let name = r.text(g.encoding, "the model name")?;
    let english_name = r.text(g.encoding, "the English model name")?;
    let comment = r.text(g.encoding, "the comment")?;
    r.text(g.encoding, "the English comment")?;
    let vertices = read_vertices(&mut r, &g, scale)?;
    let indices = read_faces(&mut r, &g, vertices.len())?;
    let textures = read_textures(&mut r, &g)?;
    let materials = read_materials(&mut r, &g, &textures)?;
    let (bones, ik) = read_bones(&mut r, &g, scale)?;
    let morph_count = skip_morphs(&mut r, &g, version)?;
    skip_display_frames(&mut r, &g)?;
    let rigid_body_count = skip_rigid_bodies(&mut r, &g)?;
    let joint_count = skip_joints(&mut r, &g)?;
    Ok(MmdModel {
        format: ModelFormat::Pmx(version),
        name,
        english_name,
        comment,
        bones,
        ik,
        vertices,
        indices,
        materials,
        morph_count,
        rigid_body_count,
        joint_count,
    })
}

fn globals(r: &mut Reader<'_>) -> Result<Globals, MmdError> {
    let count = r.u8("the globals count")?;
    if count < 8 {
        return Err(r.error(format!("expected at least 8 globals, found {count}")));
    }
    let at = r.offset();
    let raw = r.take(usize::from(count), "the globals")?;
    let encoding = match raw[0] {
        0 => Encoding::Utf16Le,
        1 => Encoding::Utf8,
        other => {
            return Err(MmdError::new(
                at,
                format!("expected text encoding 0 or 1, found {other}"),
            ));
        }
    };
    if raw[1] > 4 {
        return Err(MmdError::new(
            at + 1,
            format!("expected 0–4 additional UVs, found {}", raw[1]),
        ));
    }
    for (k, &size) in raw[2..8].iter().enumerate() {
        if !matches!(size, 1 | 2 | 4) {
            return Err(MmdError::new(
                at + 2 + k,
                format!("expected an index size of 1, 2 or 4, found {size}"),
            ));
        }
    }
    Ok(Globals {
        encoding,
        extra_uvs: usize::from(raw[1]),
        vertex: raw[2],
        texture: raw[3],
        material: raw[4],
        bone: raw[5],
        morph: raw[6],
        rigid: raw[7],
    })
}

/// A bone index that must name one of `count` bones, or −1.
fn optional_index(r: &mut Reader<'_>, size: u8, what: &str) -> Result<Option<usize>, MmdError> {
    let at = r.offset();
    let raw = r.index(size, false, what)?;
    match raw {
        -1 => Ok(None),
        i if i >= 0 => Ok(Some(i as usize)),
        other => Err(MmdError::new(
            at,
            format!("expected {what} ≥ −1, found {other}"),
        )),
    }
}

fn read_vertices(r: &mut Reader<'_>, g: &Globals, scale: f64) -> Result<Vec<Vertex>, MmdError> {
    let raw = r.i32("the vertex count")?;
    // Smallest vertex: position, normal, uv, extra uvs, weight type, one bone, edge scale.
    let min_size = 32 + 16 * g.extra_uvs + 1 + usize::from(g.bone) + 4;
    let count = r.count(i64::from(raw), min_size, "vertices")?;
    let mut vertices = Vec::with_capacity(count);
    for _ in 0..count {
        let position = position_from_mmd(r.vec3("a vertex position")?, scale);
        let normal = position_from_mmd(r.vec3("a vertex normal")?, 1.0).normalize_or_zero();
        let uv = r.vec2("a vertex uv")?;
        r.skip(16 * g.extra_uvs, "additional uvs")?;
        let at = r.offset();
        let kind = r.u8("a weight type")?;
        let bone = |r: &mut Reader<'_>| -> Result<usize, MmdError> {
            Ok(optional_index(r, g.bone, "a weight bone")?.unwrap_or(0))
        };
        let (bones, weights) = match kind {
            0 => ([bone(r)?, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
            1 | 3 => {
                let (a, b) = (bone(r)?, bone(r)?);
                let w = r.f32("a BDEF2 weight")?.clamp(0.0, 1.0);
                if kind == 3 {
                    r.skip(36, "the SDEF C, R0 and R1 vectors")?;
                }
                ([a, b, 0, 0], [w, 1.0 - w, 0.0, 0.0])
            }
            2 | 4 => {
                let bones = [bone(r)?, bone(r)?, bone(r)?, bone(r)?];
                let w = r.vec4("BDEF4 weights")?.map(|w| w.max(0.0));
                (bones, w)
            }
            other => {
                return Err(MmdError::new(
                    at,
                    format!("expected a weight type 0–4, found {other}"),
                ));
            }
        };
        r.skip(4, "the edge scale")?;
        vertices.push(Vertex {
            position,
            normal,
            uv,
            bones,
            weights,
        });
    }
    Ok(vertices)
}

fn read_faces(r: &mut Reader<'_>, g: &Globals, vertex_count: usize) -> Result<Vec<u32>, MmdError> {
    let raw = r.i32("the face index count")?;
    let at = r.offset();
    let count = r.count(i64::from(raw), usize::from(g.vertex), "face indices")?;
    if count % 3 != 0 {
        return Err(MmdError::new(
            at,
            format!("expected a multiple of 3 face indices, found {count}"),
        ));
    }
    let mut indices = Vec::with_capacity(count);
    for _ in 0..count {
        let at = r.offset();
        let index = r.index(g.vertex, true, "a face index")?;
        if index < 0 || index as usize >= vertex_count {
            return Err(MmdError::new(
                at,
                format!("face index {index} is past the {vertex_count} vertices"),
            ));
        }
        indices.push(index as u32);
    }
    Ok(indices)
}

fn read_textures(r: &mut Reader<'_>, g: &Globals) -> Result<Vec<String>, MmdError> {
    let raw = r.i32("the texture count")?;
    let count = r.count(i64::from(raw), 4, "textures")?;
    let mut textures = Vec::with_capacity(count);
    for _ in 0..count {
        textures.push(r.text(g.encoding, "a texture path")?.replace('\\', "/"));
    }
    Ok(textures)
}

fn read_materials(
    r: &mut Reader<'_>,
    g: &Globals,
    textures: &[String],
) -> Result<Vec<MaterialDef>, MmdError> {
    let raw = r.i32("the material count")?;
    let count = r.count(
        i64::from(raw),
        8 + 84 + 2 * usize::from(g.texture) + 3 + 4 + 4,
        "materials",
    )?;
    let mut materials = Vec::with_capacity(count);
    for _ in 0..count {
        let name = r.text(g.encoding, "a material name")?;
        r.text(g.encoding, "an English material name")?;
        let diffuse = r.vec4("a diffuse colour")?;
        r.skip(4 * (3 + 1 + 3), "specular, specular strength and ambient")?;
        let flags = r.u8("the drawing flags")?;
        r.skip(4 * 5, "the edge colour and size")?;
        let texture = optional_index(r, g.texture, "a texture index")?;
        optional_index(r, g.texture, "a sphere texture index")?;
        r.skip(1, "the sphere mode")?;
        let shared_toon = r.u8("the toon flag")?;
        if shared_toon == 0 {
            optional_index(r, g.texture, "a toon texture index")?;
        } else {
            r.skip(1, "a shared toon index")?;
        }
        r.text(g.encoding, "a material memo")?;
        let at = r.offset();
        let index_count = r.i32("the material's face index count")?;
        let index_count = u32::try_from(index_count).map_err(|_| {
            MmdError::new(
                at,
                format!("expected a face index count ≥ 0, found {index_count}"),
            )
        })?;
        materials.push(MaterialDef {
            name,
            diffuse,
            texture: texture.and_then(|t| textures.get(t).cloned()),
            index_count,
            double_sided: flags & 1 != 0,
        });
    }
    Ok(materials)
}

fn read_bones(
    r: &mut Reader<'_>,
    g: &Globals,
    scale: f64,
) -> Result<(Vec<Bone>, Vec<IkDef>), MmdError> {
    let raw = r.i32("the bone count")?;
    let count = r.count(
        i64::from(raw),
        8 + 12 + usize::from(g.bone) + 4 + 2 + usize::from(g.bone),
        "bones",
    )?;
    let mut bones = Vec::with_capacity(count);
    let mut ik = Vec::new();
    for index in 0..count {
        let name = r.text(g.encoding, "a bone name")?;
        let english_name = r.text(g.encoding, "an English bone name")?;
        let position = position_from_mmd(r.vec3("a bone position")?, scale);
        let parent = checked(r, g.bone, count, "a parent bone index")?;
        let deform_layer = r.i32("a deform layer")?;
        let flags = BoneFlags(r.u16("bone flags")?);
        let tail = if flags.has(BoneFlags::CONNECTED) {
            Tail::Bone(checked(r, g.bone, count, "a tail bone index")?)
        } else {
            Tail::Offset(position_from_mmd(r.vec3("a tail offset")?, scale))
        };
        let inherit =
            if flags.0 & (BoneFlags::INHERIT_ROTATION | BoneFlags::INHERIT_TRANSLATION) != 0 {
                let source = checked(r, g.bone, count, "an inherit source bone index")?;
                let ratio = f64::from(r.f32("an inherit ratio")?);
                source.map(|source| BoneInherit { source, ratio })
            } else {
                None
            };
        let fixed_axis = if flags.has(BoneFlags::FIXED_AXIS) {
            Some(position_from_mmd(r.vec3("a fixed axis")?, 1.0).normalize_or_zero())
        } else {
            None
        };
        let local_axes = if flags.has(BoneFlags::LOCAL_AXES) {
            let x = position_from_mmd(r.vec3("a local X axis")?, 1.0);
            let z = position_from_mmd(r.vec3("a local Z axis")?, 1.0);
            Some([x, z])
        } else {
            None
        };
        let external_parent = if flags.has(BoneFlags::EXTERNAL_PARENT) {
            Some(r.i32("an external parent key")?)
        } else {
            None
        };
        if flags.has(BoneFlags::IK) {
            ik.push(read_ik(r, g, index, count)?);
        }
        bones.push(Bone {
            name,
            english_name,
            position,
            parent,
            deform_layer,
            flags,
            tail,
            inherit,
            fixed_axis,
            local_axes,
            external_parent,
            pmd_type: None,
        });
    }
    Ok((bones, ik))
}

/// A bone index below `count`, or −1.
fn checked(
    r: &mut Reader<'_>,
    size: u8,
    count: usize,
    what: &str,
) -> Result<Option<usize>, MmdError> {
    let at = r.offset();
    match optional_index(r, size, what)? {
        Some(i) if i >= count => Err(MmdError::new(
            at,
            format!("{what} {i} is past the {count} bones"),
        )),
        other => Ok(other),
    }
}

fn read_ik(r: &mut Reader<'_>, g: &Globals, bone: usize, count: usize) -> Result<IkDef, MmdError> {
    let at = r.offset();
    let target = checked(r, g.bone, count, "an IK target bone index")?
        .ok_or_else(|| MmdError::new(at, "expected an IK target bone, found −1"))?;
    let loops = r.i32("an IK loop count")?;
    let unit_angle = f64::from(r.f32("an IK unit angle")?);
    let raw = r.i32("an IK link count")?;
    let links_count = r.count(i64::from(raw), usize::from(g.bone) + 1, "IK links")?;
    let mut links = Vec::with_capacity(links_count);
    for _ in 0..links_count {
        let at = r.offset();
        let link = checked(r, g.bone, count, "an IK link bone index")?
            .ok_or_else(|| MmdError::new(at, "expected an IK link bone, found −1"))?;
        let limited = r.u8("an IK link limit flag")?;
        let limit = if limited == 1 {
            let min = r.vec3("an IK link lower limit")?;
            let max = r.vec3("an IK link upper limit")?;
            Some(limit_from_mmd(min, max))
        } else {
            None
        };
        links.push(IkLinkDef { bone: link, limit });
    }
    Ok(IkDef {
        bone,
        target,
        // A negative loop count is read as 0: the chain then moves nothing.
        iterations: u32::try_from(loops.max(0)).unwrap_or(0),
        unit_angle,
        links,
    })
}

/// Reads a list of records that each open with a name and an English name, and hands each
/// record's rest to `rest` (which reads or skips it); returns how many there were. `one` names a
/// record in messages ("the {one} count", "a {one} name"), `plural` the records, and `rest_min`
/// is the smallest size of a record's rest in bytes (the names add their 4-byte lengths).
fn named_records<'a>(
    r: &mut Reader<'a>,
    g: &Globals,
    one: &str,
    plural: &str,
    rest_min: usize,
    mut rest: impl FnMut(&mut Reader<'a>) -> Result<(), MmdError>,
) -> Result<usize, MmdError> {
    let raw = r.i32(&format!("the {one} count"))?;
    let count = r.count(i64::from(raw), 8 + rest_min, plural)?;
    let (name, english_name) = (format!("a {one} name"), format!("an English {one} name"));
    for _ in 0..count {
        r.text(g.encoding, &name)?;
        r.text(g.encoding, &english_name)?;
        rest(r)?;
    }
    Ok(count)
}

fn skip_morphs(r: &mut Reader<'_>, g: &Globals, version: f32) -> Result<usize, MmdError> {
    named_records(r, g, "morph", "morphs", 2 + 4, |r| {
        r.skip(1, "a morph panel")?;
        let at = r.offset();
        let kind = r.u8("a morph type")?;
        let offset_size = match kind {
            0 => usize::from(g.morph) + 4,
            1 => usize::from(g.vertex) + 12,
            2 => usize::from(g.bone) + 28,
            3..=7 => usize::from(g.vertex) + 16,
            8 => usize::from(g.material) + 1 + 4 * 28,
            9 if version >= 2.1 => usize::from(g.morph) + 4,
            10 if version >= 2.1 => usize::from(g.rigid) + 1 + 24,
            other => {
                return Err(MmdError::new(
                    at,
                    format!("expected a morph type 0–8 (0–10 in PMX 2.1), found {other}"),
                ));
            }
        };
        let raw = r.i32("a morph offset count")?;
        let offsets = r.count(i64::from(raw), offset_size, "morph offsets")?;
        r.skip(offsets * offset_size, "morph offsets")
    })
}

fn skip_display_frames(r: &mut Reader<'_>, g: &Globals) -> Result<(), MmdError> {
    named_records(r, g, "display frame", "display frames", 1 + 4, |r| {
        r.skip(1, "the special flag")?;
        let raw = r.i32("a display element count")?;
        let elements = r.count(i64::from(raw), 2, "display elements")?;
        for _ in 0..elements {
            let at = r.offset();
            match r.u8("a display element type")? {
                0 => r.skip(usize::from(g.bone), "a display bone index")?,
                1 => r.skip(usize::from(g.morph), "a display morph index")?,
                other => {
                    return Err(MmdError::new(
                        at,
                        format!("expected display element type 0 or 1, found {other}"),
                    ));
                }
            }
        }
        Ok(())
    })?;
    Ok(())
}

fn skip_rigid_bodies(r: &mut Reader<'_>, g: &Globals) -> Result<usize, MmdError> {
    let size = usize::from(g.bone) + 1 + 2 + 1 + 12 * 3 + 4 * 5 + 1;
    named_records(r, g, "rigid body", "rigid bodies", size, |r| {
        r.skip(size, "a rigid body")
    })
}

fn skip_joints(r: &mut Reader<'_>, g: &Globals) -> Result<usize, MmdError> {
    let size = 1 + 2 * usize::from(g.rigid) + 12 * 8;
    named_records(r, g, "joint", "joints", size, |r| r.skip(size, "a joint"))
}
