//! The model both readers produce, already in ikarus conventions, and its translation into
//! core types.

use std::collections::HashMap;
use std::f64::consts::PI;

use glam::{DAffine3, DVec3};
use ikarus_core::rig::{IkChain, IkLink, Inherit, Rig};
use ikarus_core::{
    EulerLimit, EulerOrder, JointId, JointLimit, RawJoint, Skeleton, SkeletonBuilder, Transform,
};

use crate::mesh::{Material, SkinnedMesh, Texture};

/// Which file a model came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ModelFormat {
    /// PMX with its version (2.0 or 2.1).
    Pmx(f32),
    /// PMD (version 1.0).
    Pmd,
}

/// A bone's flags as PMX stores them (PMD bone types are translated into the same bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoneFlags(pub u16);

impl BoneFlags {
    /// The tail is another bone (else an offset).
    pub const CONNECTED: u16 = 0x0001;
    /// The bone may rotate.
    pub const ROTATABLE: u16 = 0x0002;
    /// The bone may translate.
    pub const TRANSLATABLE: u16 = 0x0004;
    /// Shown in the editor.
    pub const VISIBLE: u16 = 0x0008;
    /// Operable in the editor.
    pub const ENABLED: u16 = 0x0010;
    /// The bone is an IK goal with a chain.
    pub const IK: u16 = 0x0020;
    /// Inherit copies the source's own motion only.
    pub const INHERIT_LOCAL: u16 = 0x0080;
    /// Inherits rotation.
    pub const INHERIT_ROTATION: u16 = 0x0100;
    /// Inherits translation.
    pub const INHERIT_TRANSLATION: u16 = 0x0200;
    /// Rotates about a fixed axis only.
    pub const FIXED_AXIS: u16 = 0x0400;
    /// Has its own local axes.
    pub const LOCAL_AXES: u16 = 0x0800;
    /// Deformed after physics.
    pub const AFTER_PHYSICS: u16 = 0x1000;
    /// Parented to another model's bone.
    pub const EXTERNAL_PARENT: u16 = 0x2000;

    /// True when every bit of `flag` is set.
    pub fn has(self, flag: u16) -> bool {
        self.0 & flag == flag
    }
}

/// Where a bone's tail (its display end) is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tail {
    /// At another bone (file index), or nowhere.
    Bone(Option<usize>),
    /// At an offset from the bone, model space metres.
    Offset(DVec3),
}

/// Part of another bone's motion a bone copies (付与).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoneInherit {
    /// The source bone (file index).
    pub source: usize,
    /// The fraction copied.
    pub ratio: f64,
}

/// One bone as the file declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Bone {
    /// Japanese name (UTF-8).
    pub name: String,
    /// English name; empty when the file has none.
    pub english_name: String,
    /// Position in model space at rest, metres.
    pub position: DVec3,
    /// Parent bone (file index).
    pub parent: Option<usize>,
    /// Deform layer (evaluation order key; PMD: 0).
    pub deform_layer: i32,
    /// Flags.
    pub flags: BoneFlags,
    /// Tail.
    pub tail: Tail,
    /// Inherited motion.
    pub inherit: Option<BoneInherit>,
    /// The fixed rotation axis (model space, unit), for twist bones.
    pub fixed_axis: Option<DVec3>,
    /// Local X and Z axes (model space), when the bone declares them.
    pub local_axes: Option<[DVec3; 2]>,
    /// External parent key.
    pub external_parent: Option<i32>,
    /// The PMD bone type (0 rotate, 1 rotate+move, 2 IK, 4 under IK, 5 under rotation,
    /// 6 IK target, 7 invisible, 8 twist, 9 rotation follow); `None` for PMX.
    pub pmd_type: Option<u8>,
}

/// One IK link as the file declares it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkLinkDef {
    /// The bone turned (file index).
    pub bone: usize,
    /// Euler X-Y-Z limits in ikarus (right-handed) angles, radians: `(min, max)`.
    pub limit: Option<(DVec3, DVec3)>,
}

/// One IK chain as the file declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct IkDef {
    /// The IK bone (its position is the goal).
    pub bone: usize,
    /// The bone brought to the goal.
    pub target: usize,
    /// The loop count.
    pub iterations: u32,
    /// Largest rotation per link step, radians (PMD: the control weight × 4, the rule the
    /// established runtimes use).
    pub unit_angle: f64,
    /// Links, target side first.
    pub links: Vec<IkLinkDef>,
}

/// One vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex {
    /// Position at rest, model space metres.
    pub position: DVec3,
    /// Unit normal, model space.
    pub normal: DVec3,
    /// Texture coordinate.
    pub uv: [f32; 2],
    /// Up to four bones (file indices) and weights; unused slots have weight 0. SDEF and QDEF
    /// are drawn as BDEF2 and BDEF4 (linear blend) — the viewer's skinning.
    pub bones: [usize; 4],
    /// Weights of [`bones`](Self::bones).
    pub weights: [f32; 4],
}

/// One material.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialDef {
    /// Name (UTF-8; PMD materials have none and get `material N`).
    pub name: String,
    /// Diffuse RGBA.
    pub diffuse: [f32; 4],
    /// The texture's path relative to the model, if any.
    pub texture: Option<String>,
    /// Number of face indices (three per triangle) it draws, following the previous material.
    pub index_count: u32,
    /// Drawn without back-face culling: PMX's drawing flag bit 0; PMD has no flag, and MMD
    /// draws its materials double-sided when their diffuse alpha is below 1 (the rule of
    /// established MMD loaders, e.g. three.js's `MMDLoader`).
    pub double_sided: bool,
}

/// A PMX or PMD model in ikarus conventions.
#[derive(Clone, Debug, PartialEq)]
pub struct MmdModel {
    /// The file format.
    pub format: ModelFormat,
    /// Model name (Japanese).
    pub name: String,
    /// Model name (English); empty when absent.
    pub english_name: String,
    /// Comment.
    pub comment: String,
    /// Bones in file order.
    pub bones: Vec<Bone>,
    /// IK chains in file order (PMX: bones with the IK flag, in bone order).
    pub ik: Vec<IkDef>,
    /// Vertices.
    pub vertices: Vec<Vertex>,
    /// Triangle vertex indices.
    pub indices: Vec<u32>,
    /// Materials, drawing consecutive index ranges.
    pub materials: Vec<MaterialDef>,
    /// Morph count (parsed past).
    pub morph_count: usize,
    /// Rigid-body count (parsed past).
    pub rigid_body_count: usize,
    /// Physics joint count (parsed past).
    pub joint_count: usize,
}

/// A model turned into core types.
#[derive(Clone, Debug)]
pub struct Built {
    /// The skeleton: one joint per bone, named by the bone's Japanese name (a repeated name
    /// gets ` (N)` appended), rest = offset from the parent, no rest rotation. IK links with a
    /// limit carry it as an X-Y-Z [`EulerLimit`].
    pub skeleton: Skeleton,
    /// Inheritance, evaluation order and IK chains.
    pub rig: Rig,
    /// The skinned mesh.
    pub mesh: SkinnedMesh,
    /// Per bone (file index), its joint.
    pub joint_of_bone: Vec<JointId>,
}

/// PMD knees (bones named ひざ) bend about X only, between 0.5° and 180° in right-handed
/// angles: the rule saba and MMD-derived runtimes apply, since PMD stores no link limits. The
/// small positive minimum keeps the knee from locking straight, where the CCD step cannot
/// choose a bending direction.
const PMD_KNEE_MIN: f64 = 0.5 * PI / 180.0;

/// Why an [`MmdModel`] does not build ([`MmdModel::build`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MmdBuildError {
    /// The model has no bones.
    #[error("the model has no bones")]
    NoBones,
    /// The bones do not make a skeleton (a parent loop, a duplicate name, …).
    #[error(transparent)]
    Skeleton(#[from] ikarus_core::SkeletonError),
    /// An IK chain names a bone or target past the bones.
    #[error("IK chain of bone {bone} names target bone {target}, past the {bones} bones")]
    IkTarget {
        /// The chain's bone index.
        bone: usize,
        /// The target bone index.
        target: usize,
        /// Bones in the model.
        bones: usize,
    },
    /// An IK chain names a link past the bones.
    #[error("IK chain `{chain}` names link bone {link}, past the {bones} bones")]
    IkLink {
        /// The chain's bone name.
        chain: String,
        /// The link's bone index.
        link: usize,
        /// Bones in the model.
        bones: usize,
    },
    /// The rig does not fit the skeleton.
    #[error(transparent)]
    Rig(#[from] ikarus_core::rig::RigError),
    /// A vertex is weighted to a bone past the bones.
    #[error("vertex {vertex} names bone {bone}, past the bones")]
    VertexBone {
        /// The vertex index.
        vertex: usize,
        /// The bone index.
        bone: usize,
    },
    /// More joints than a skin's 16-bit joint index holds.
    #[error("too many joints")]
    TooManyJoints,
    /// The mesh is inconsistent.
    #[error(transparent)]
    Mesh(#[from] crate::mesh::MeshError),
}

impl MmdModel {
    /// Builds the skeleton, rig and mesh.
    ///
    /// # Errors
    /// [`MmdBuildError`] naming the bone, chain or vertex that makes no sense (a parent loop,
    /// an index past the bones).
    pub fn build(&self) -> Result<Built, MmdBuildError> {
        let n = self.bones.len();
        if n == 0 {
            return Err(MmdBuildError::NoBones);
        }
        let names = unique_names(&self.bones);
        let limits = self.link_limits();
        let mut builder = SkeletonBuilder::new();
        for (i, bone) in self.bones.iter().enumerate() {
            let parent = bone.parent.filter(|&p| p < n && p != i);
            let offset = parent.map_or(bone.position, |p| bone.position - self.bones[p].position);
            builder.push(RawJoint {
                name: names[i].clone(),
                parent: parent.map(|p| names[p].clone()),
                rest: Transform::from_translation(offset),
                limit: limits[i].map_or(JointLimit::Free, JointLimit::Euler),
            });
        }
        let skeleton = builder.build()?;
        let joint_of_bone: Vec<JointId> = names
            .iter()
            .map(|name| skeleton.joint(name).expect("every bone was added"))
            .collect();
        let rig = self.rig(&skeleton, &joint_of_bone, &limits)?;
        let mesh = self.mesh(&joint_of_bone, skeleton.len())?;
        Ok(Built {
            skeleton,
            rig,
            mesh,
            joint_of_bone,
        })
    }

    /// Per bone, its IK link limit (the first chain that limits it wins; PMD knees get the
    /// knee rule).
    fn link_limits(&self) -> Vec<Option<EulerLimit>> {
        let mut limits = vec![None; self.bones.len()];
        for chain in &self.ik {
            for link in &chain.links {
                let Some(slot) = limits.get_mut(link.bone) else {
                    continue;
                };
                if slot.is_some() {
                    continue;
                }
                let range = match (self.format, link.limit) {
                    (_, Some(range)) => Some(range),
                    (ModelFormat::Pmd, None) if self.bones[link.bone].name.contains("ひざ") => {
                        Some((DVec3::new(PMD_KNEE_MIN, 0.0, 0.0), DVec3::new(PI, 0.0, 0.0)))
                    }
                    _ => None,
                };
                *slot = range.map(|(min, max)| euler_limit(min, max));
            }
        }
        limits
    }

    fn rig(
        &self,
        skeleton: &Skeleton,
        joint_of_bone: &[JointId],
        limits: &[Option<EulerLimit>],
    ) -> Result<Rig, MmdBuildError> {
        let n = self.bones.len();
        // Evaluation order: after-physics last, then deform layer, then file order (a stable
        // sort, as MMD and the open runtimes do).
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| {
            let bone = &self.bones[i];
            (bone.flags.has(BoneFlags::AFTER_PHYSICS), bone.deform_layer)
        });
        let after_physics = self
            .bones
            .iter()
            .filter(|b| b.flags.has(BoneFlags::AFTER_PHYSICS))
            .count();
        let mut inherit = vec![None; skeleton.len()];
        for (i, bone) in self.bones.iter().enumerate() {
            let rotation = bone.flags.has(BoneFlags::INHERIT_ROTATION);
            let translation = bone.flags.has(BoneFlags::INHERIT_TRANSLATION);
            let Some(source) = bone.inherit.filter(|_| rotation || translation) else {
                continue;
            };
            if source.source >= n || source.source == i {
                continue; // No source or itself: nothing to inherit (runtimes skip it too).
            }
            inherit[joint_of_bone[i].index()] = Some(Inherit {
                source: joint_of_bone[source.source],
                ratio: source.ratio,
                rotation,
                translation,
                local: bone.flags.has(BoneFlags::INHERIT_LOCAL),
            });
        }
        let mut ik = Vec::with_capacity(self.ik.len());
        for chain in &self.ik {
            let bone_name = |i: usize| self.bones.get(i).map_or("?", |b| b.name.as_str());
            if chain.bone >= n || chain.target >= n {
                return Err(MmdBuildError::IkTarget {
                    bone: chain.bone,
                    target: chain.target,
                    bones: n,
                });
            }
            let mut links = Vec::with_capacity(chain.links.len());
            for link in &chain.links {
                if link.bone >= n {
                    return Err(MmdBuildError::IkLink {
                        chain: bone_name(chain.bone).to_owned(),
                        link: link.bone,
                        bones: n,
                    });
                }
                links.push(IkLink {
                    joint: joint_of_bone[link.bone],
                    limit: limits[link.bone],
                });
            }
            if links.is_empty() {
                continue; // A chain without links moves nothing; MMD ignores it.
            }
            ik.push(IkChain {
                name: self.bones[chain.bone].name.clone(),
                goal: joint_of_bone[chain.bone],
                effector: joint_of_bone[chain.target],
                links,
                iterations: chain.iterations,
                unit_angle: chain.unit_angle,
            });
        }
        let rig = Rig {
            order: order.iter().map(|&i| joint_of_bone[i]).collect(),
            after_physics,
            inherit,
            ik,
        };
        rig.validate(skeleton)?;
        Ok(rig)
    }

    fn mesh(
        &self,
        joint_of_bone: &[JointId],
        joint_count: usize,
    ) -> Result<SkinnedMesh, MmdBuildError> {
        let mut mesh = SkinnedMesh {
            positions: Vec::with_capacity(self.vertices.len()),
            normals: Vec::with_capacity(self.vertices.len()),
            uvs: Vec::with_capacity(self.vertices.len()),
            joints: Vec::with_capacity(self.vertices.len()),
            weights: Vec::with_capacity(self.vertices.len()),
            // MMD's triangles wind clockwise around their normals once mirrored into the
            // right-handed frame (measured: 22,880 of 22,961 Miku and 47,029 of 47,106 Gene
            // triangles); glTF's front faces are counter-clockwise, so each triangle's last two
            // corners swap.
            indices: self
                .indices
                .chunks_exact(3)
                .flat_map(|t| [t[0], t[2], t[1]])
                .collect(),
            materials: Vec::with_capacity(self.materials.len()),
            inverse_bind: vec![DAffine3::IDENTITY; joint_count],
        };
        for (v, vertex) in self.vertices.iter().enumerate() {
            let mut joints = [0u16; 4];
            let mut weights = [0f32; 4];
            let mut total = 0.0;
            for k in 0..4 {
                if vertex.weights[k] <= 0.0 {
                    continue;
                }
                let bone = vertex.bones[k];
                let joint = joint_of_bone
                    .get(bone)
                    .ok_or(MmdBuildError::VertexBone { vertex: v, bone })?;
                joints[k] =
                    u16::try_from(joint.index()).map_err(|_| MmdBuildError::TooManyJoints)?;
                weights[k] = vertex.weights[k];
                total += vertex.weights[k];
            }
            if total > 0.0 {
                weights = weights.map(|w| w / total);
            } else {
                // No weight at all: follow the first bone named (or the first joint).
                let bone = vertex.bones[0].min(joint_of_bone.len() - 1);
                joints[0] = joint_of_bone[bone].index() as u16;
                weights[0] = 1.0;
            }
            mesh.positions.push(vertex.position.as_vec3().to_array());
            mesh.normals.push(vertex.normal.as_vec3().to_array());
            mesh.uvs.push(vertex.uv);
            mesh.joints.push(joints);
            mesh.weights.push(weights);
        }
        for (b, bone) in self.bones.iter().enumerate() {
            mesh.inverse_bind[joint_of_bone[b].index()] =
                DAffine3::from_translation(-bone.position);
        }
        let mut first = 0u32;
        for material in &self.materials {
            mesh.materials.push(Material {
                name: material.name.clone(),
                base_color: material.diffuse,
                texture: material.texture.clone().map(Texture::File),
                first_index: first,
                index_count: material.index_count,
                double_sided: material.double_sided,
            });
            first = first.saturating_add(material.index_count);
        }
        mesh.validate(joint_count)?;
        Ok(mesh)
    }

    /// Per bone name, its file index (first occurrence).
    pub fn bone_index(&self) -> HashMap<&str, usize> {
        let mut map = HashMap::with_capacity(self.bones.len());
        for (i, bone) in self.bones.iter().enumerate() {
            map.entry(bone.name.as_str()).or_insert(i);
        }
        map
    }
}

/// Bone names made unique: a repeated (or empty) name gets ` (N)` appended, N its file index.
fn unique_names(bones: &[Bone]) -> Vec<String> {
    let mut seen = std::collections::HashSet::with_capacity(bones.len());
    bones
        .iter()
        .enumerate()
        .map(|(i, bone)| {
            let name = if bone.name.is_empty() || seen.contains(bone.name.as_str()) {
                format!("{} ({i})", bone.name)
            } else {
                bone.name.clone()
            };
            seen.insert(bone.name.as_str());
            name
        })
        .collect()
}

/// An X-Y-Z Euler limit from right-handed ranges, each clamped to `[−π, π]` and ordered (files
/// with `min > max` on an axis get the two swapped).
fn euler_limit(min: DVec3, max: DVec3) -> EulerLimit {
    let mut lo = [0.0; 3];
    let mut hi = [0.0; 3];
    for k in 0..3 {
        let (a, b) = (min[k].clamp(-PI, PI), max[k].clamp(-PI, PI));
        lo[k] = a.min(b);
        hi[k] = a.max(b);
    }
    EulerLimit {
        order: EulerOrder::Xyz,
        min: lo,
        max: hi,
    }
}

/// MMD's left-handed link limit `(min, max)` (radians) → right-handed ranges (see the module
/// docs: X and Y negate and swap, Z stays).
pub(crate) fn limit_from_mmd(min: [f32; 3], max: [f32; 3]) -> (DVec3, DVec3) {
    let (min, max) = (
        DVec3::from(min.map(f64::from)),
        DVec3::from(max.map(f64::from)),
    );
    (
        DVec3::new(-max.x, -max.y, min.z),
        DVec3::new(-min.x, -min.y, max.z),
    )
}
