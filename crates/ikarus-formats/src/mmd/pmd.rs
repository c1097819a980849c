//! PMD models (MMD's original format).
//!
//! Layout (little-endian, Shift-JIS names in fixed fields): `"Pmd"`, version `f32`, name
//! (20 bytes), comment (256), then vertices (`u32` count, 38 bytes each), face indices (`u32`
//! count, `u16` each), materials (`u32` count, 70 bytes each), bones (`u16` count, 39 bytes
//! each), IK chains (`u16` count), morphs, display lists, and optionally English names, toon
//! textures, rigid bodies and joints.

use super::bytes::Reader;
use super::model::{
    Bone, BoneFlags, BoneInherit, IkDef, IkLinkDef, MaterialDef, MmdModel, ModelFormat, Tail,
    Vertex,
};
use super::{MmdError, position_from_mmd};

/// Reads a PMD model; lengths in metres times `scale`.
///
/// # Errors
/// [`MmdError`] with the byte offset and what was expected.
pub fn parse(bytes: &[u8], scale: f64) -> Result<MmdModel, MmdError> {
    let mut r = Reader::new(bytes);
    if r.take(3, "the PMD signature")? != b"Pmd" {
        return Err(MmdError::new(0, "expected the signature `Pmd`"));
    }
    r.f32("the PMD version")?;
    let name = r.sjis(20, "the model name")?;
    let comment = r.sjis(256, "the comment")?;
    let vertices = read_vertices(&mut r, scale)?;
    let indices = read_faces(&mut r, vertices.len())?;
    let materials = read_materials(&mut r)?;
    let mut bones = read_bones(&mut r, scale)?;
    let ik = read_ik(&mut r, bones.len())?;
    let morph_count = skip_morphs(&mut r)?;
    let display_names = skip_display(&mut r)?;
    let mut english_name = String::new();
    if r.remaining() > 0 && r.u8("the English names flag")? == 1 {
        english_name = r.sjis(20, "the English model name")?;
        r.skip(256, "the English comment")?;
        for bone in &mut bones {
            bone.english_name = r.sjis(20, "an English bone name")?;
        }
        r.skip(20 * morph_count.saturating_sub(1), "English morph names")?;
        r.skip(50 * display_names, "English display names")?;
    }
    // Toon textures, rigid bodies and joints follow; physics is not simulated, so they are
    // counted when present and otherwise ignored.
    let (rigid_body_count, joint_count) = skip_physics(&mut r)?;
    Ok(MmdModel {
        format: ModelFormat::Pmd,
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

fn read_vertices(r: &mut Reader<'_>, scale: f64) -> Result<Vec<Vertex>, MmdError> {
    let raw = r.u32("the vertex count")?;
    let count = r.count(i64::from(raw), 38, "vertices")?;
    let mut vertices = Vec::with_capacity(count);
    for _ in 0..count {
        let position = position_from_mmd(r.vec3("a vertex position")?, scale);
        let normal = position_from_mmd(r.vec3("a vertex normal")?, 1.0).normalize_or_zero();
        let uv = r.vec2("a vertex uv")?;
        let a = usize::from(r.u16("a vertex bone")?);
        let b = usize::from(r.u16("a vertex bone")?);
        let w = f32::from(r.u8("a vertex weight")?.min(100)) / 100.0;
        r.skip(1, "the edge flag")?;
        vertices.push(Vertex {
            position,
            normal,
            uv,
            bones: [a, b, 0, 0],
            weights: [w, 1.0 - w, 0.0, 0.0],
        });
    }
    Ok(vertices)
}

fn read_faces(r: &mut Reader<'_>, vertex_count: usize) -> Result<Vec<u32>, MmdError> {
    let at = r.offset();
    let raw = r.u32("the face index count")?;
    let count = r.count(i64::from(raw), 2, "face indices")?;
    if count % 3 != 0 {
        return Err(MmdError::new(
            at,
            format!("expected a multiple of 3 face indices, found {count}"),
        ));
    }
    let mut indices = Vec::with_capacity(count);
    for _ in 0..count {
        let at = r.offset();
        let index = r.u16("a face index")?;
        if usize::from(index) >= vertex_count {
            return Err(MmdError::new(
                at,
                format!("face index {index} is past the {vertex_count} vertices"),
            ));
        }
        indices.push(u32::from(index));
    }
    Ok(indices)
}

fn read_materials(r: &mut Reader<'_>) -> Result<Vec<MaterialDef>, MmdError> {
    let raw = r.u32("the material count")?;
    let count = r.count(i64::from(raw), 70, "materials")?;
    let mut materials = Vec::with_capacity(count);
    for m in 0..count {
        let diffuse = r.vec4("a diffuse colour")?;
        r.skip(4 + 12 + 12 + 1 + 1, "specular, ambient, toon and edge")?;
        let index_count = r.u32("the material's face index count")?;
        let file = r.sjis(20, "a texture file name")?;
        // `tex.bmp*sphere.sph`: the part before `*` is the colour texture; sphere maps alone
        // (.sph, .spa) are not colour.
        let colour = file.split('*').next().unwrap_or("").replace('\\', "/");
        let sphere = std::path::Path::new(&colour)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("sph") || e.eq_ignore_ascii_case("spa"));
        let texture = (!colour.is_empty() && !sphere).then_some(colour);
        materials.push(MaterialDef {
            name: format!("material {m}"),
            diffuse,
            texture,
            index_count,
            double_sided: diffuse[3] < 1.0,
        });
    }
    Ok(materials)
}

fn read_bones(r: &mut Reader<'_>, scale: f64) -> Result<Vec<Bone>, MmdError> {
    let raw = r.u16("the bone count")?;
    let count = r.count(i64::from(raw), 39, "bones")?;
    let mut bones = Vec::with_capacity(count);
    for _ in 0..count {
        let name = r.sjis(20, "a bone name")?;
        let parent = index_or_none(r.u16("a parent bone index")?, count);
        let tail = r.u16("a tail bone index")?;
        let at = r.offset();
        let kind = r.u8("a bone type")?;
        let ik_parent = r.u16("an IK parent bone index")?;
        let position = position_from_mmd(r.vec3("a bone position")?, scale);
        if kind > 9 {
            return Err(MmdError::new(
                at,
                format!("expected a bone type 0–9, found {kind}"),
            ));
        }
        let mut flags = BoneFlags::ROTATABLE | BoneFlags::ENABLED | BoneFlags::CONNECTED;
        if matches!(kind, 1 | 2) {
            flags |= BoneFlags::TRANSLATABLE;
        }
        if kind != 7 {
            flags |= BoneFlags::VISIBLE;
        }
        // Type 5 (回転影響下) turns with the bone named in its IK-parent field, fully: the
        // eyes follow 両目 this way. Type 9 (回転連動) is left alone: its tail field holds a bone
        // index in the files seen (Miku's twist bones point at 19 and 51, left and right), not
        // a ratio, and saba ignores both types; a guessed ratio would twist arms MMD does not.
        let inherit = match kind {
            5 => index_or_none(ik_parent, count).map(|source| BoneInherit { source, ratio: 1.0 }),
            _ => None,
        };
        if inherit.is_some() {
            flags |= BoneFlags::INHERIT_ROTATION;
        }
        let tail = index_or_none(tail, count);
        bones.push(Bone {
            name,
            english_name: String::new(),
            position,
            parent,
            deform_layer: 0,
            flags: BoneFlags(flags),
            tail: Tail::Bone(tail),
            inherit,
            fixed_axis: None,
            local_axes: None,
            external_parent: None,
            pmd_type: Some(kind),
        });
    }
    Ok(bones)
}

fn index_or_none(raw: u16, count: usize) -> Option<usize> {
    let index = usize::from(raw);
    (raw != u16::MAX && index < count).then_some(index)
}

fn read_ik(r: &mut Reader<'_>, bone_count: usize) -> Result<Vec<IkDef>, MmdError> {
    let raw = r.u16("the IK count")?;
    let count = r.count(i64::from(raw), 11, "IK chains")?;
    let mut chains = Vec::with_capacity(count);
    let bone = |r: &mut Reader<'_>, what: &str| -> Result<usize, MmdError> {
        let at = r.offset();
        let index = r.u16(what)?;
        index_or_none(index, bone_count).ok_or_else(|| {
            MmdError::new(at, format!("{what} {index} is past the {bone_count} bones"))
        })
    };
    for _ in 0..count {
        let ik_bone = bone(r, "an IK bone index")?;
        let target = bone(r, "an IK target bone index")?;
        let length = usize::from(r.u8("an IK chain length")?);
        let iterations = u32::from(r.u16("an IK iteration count")?);
        let control_weight = f64::from(r.f32("an IK control weight")?);
        let mut links = Vec::with_capacity(length);
        for _ in 0..length {
            links.push(IkLinkDef {
                bone: bone(r, "an IK link bone index")?,
                limit: None,
            });
        }
        chains.push(IkDef {
            bone: ik_bone,
            target,
            iterations,
            // PMD stores the per-step limit in units of 4 radians (saba, MMDAgent).
            unit_angle: control_weight * 4.0,
            links,
        });
    }
    Ok(chains)
}

fn skip_morphs(r: &mut Reader<'_>) -> Result<usize, MmdError> {
    let raw = r.u16("the morph count")?;
    let count = r.count(i64::from(raw), 25, "morphs")?;
    for _ in 0..count {
        r.skip(20, "a morph name")?;
        let raw = r.u32("a morph vertex count")?;
        r.skip(1, "a morph type")?;
        let vertices = r.count(i64::from(raw), 16, "morph vertices")?;
        r.skip(16 * vertices, "morph vertices")?;
    }
    Ok(count)
}

/// Skips the morph display list, bone display names and bone display list; returns the number
/// of display names (the English section repeats them).
fn skip_display(r: &mut Reader<'_>) -> Result<usize, MmdError> {
    let morphs = usize::from(r.u8("the morph display count")?);
    r.skip(2 * morphs, "the morph display list")?;
    let names = usize::from(r.u8("the bone display name count")?);
    r.skip(50 * names, "bone display names")?;
    let raw = r.u32("the bone display count")?;
    let entries = r.count(i64::from(raw), 3, "bone display entries")?;
    r.skip(3 * entries, "bone display entries")?;
    Ok(names)
}

fn skip_physics(r: &mut Reader<'_>) -> Result<(usize, usize), MmdError> {
    if r.remaining() == 0 {
        return Ok((0, 0));
    }
    r.skip(100 * 10, "the toon texture names")?;
    if r.remaining() == 0 {
        return Ok((0, 0));
    }
    let raw = r.u32("the rigid body count")?;
    let bodies = r.count(i64::from(raw), 83, "rigid bodies")?;
    r.skip(83 * bodies, "rigid bodies")?;
    if r.remaining() == 0 {
        return Ok((bodies, 0));
    }
    let raw = r.u32("the joint count")?;
    let joints = r.count(i64::from(raw), 124, "joints")?;
    r.skip(124 * joints, "joints")?;
    Ok((bodies, joints))
}
