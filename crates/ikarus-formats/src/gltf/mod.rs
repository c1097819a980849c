//! glTF 2.0 (`.gltf`, `.glb`) with VRM 0.x / 1.0 avatars (`.vrm`) and VRM animations (`.vrma`).
//!
//! Parsing uses the [`gltf`] crate's JSON model (no image decoding); the container, buffers and
//! accessors are read here with every bound checked, so malformed files give a [`GltfError`]
//! naming the byte offset or JSON path, never a panic.
//!
//! - [`GltfFile`]: the parsed file (JSON + buffers), kept whole so a motion can be written back
//!   into it with everything else unchanged ([`GltfFile::with_motion`]).
//! - [`GltfSkeleton`] ([`GltfFile::skeleton`]): a skin's joints and the nodes between them as a
//!   core [`Skeleton`](ikarus_core::Skeleton) with the node ↔ joint map.
//! - [`Clip`] ([`GltfFile::clip`]): an animation's keyframes on that skeleton, sampled at any time
//!   ([`Clip::sample`]: STEP, LINEAR with slerp, CUBICSPLINE) or into a [`Motion`](ikarus_core::Motion).
//! - [`GltfFile::mesh`]: the skinned mesh ([`SkinnedMesh`](crate::mesh::SkinnedMesh)).
//! - [`vrm`]: the VRM humanoid bone map and the facing conversion; [`vrma`]: VRM animation read
//!   and write; [`write_glb`]: a skeleton and motion as a new GLB.
//!
//! ## Conventions at this boundary
//!
//! glTF is right-handed, +Y up, metres, like the core. Node transforms become rest
//! [`Transform`](ikarus_core::Transform)s (a `matrix` is decomposed into TRS). Nodes above a
//! skeleton's root (an `Armature` or a Z-up correction node) are folded into the root's rest and
//! every sampled root transform, so model space is the glTF world space. VRM 0.x avatars face −Z;
//! they are turned 180° about +Y at load so that every humanoid faces +Z with its left on +X.

mod accessor;
mod animation;
mod container;
mod error;
mod mesh;
mod scene;
mod triangles;
pub mod vrm;
pub mod vrma;
mod write;

use std::path::Path;

use gltf::json::validation::{Error as ValidationError, Validate as _};

pub use animation::{Channel, ChannelTarget, Clip, Interpolation};
pub use error::GltfError;
pub use scene::{GltfSkeleton, SkeletonSource};
pub use write::write_glb;

/// A parsed glTF file: its JSON (typed and raw) and its loaded buffers.
#[derive(Clone, Debug)]
pub struct GltfFile {
    root: gltf::json::Root,
    raw: serde_json::Value,
    buffers: Vec<Vec<u8>>,
    binary: bool,
}

/// A node's summary for listings (`ikarus info`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeInfo {
    /// The node's name, `node<i>` when it has none.
    pub name: String,
    /// Parent node index.
    pub parent: Option<usize>,
}

impl GltfFile {
    /// Reads a `.gltf`, `.glb`, `.vrm` or `.vrma` file; external buffers are read beside it.
    ///
    /// # Errors
    /// [`crate::FormatError::Io`] or [`crate::FormatError::Gltf`] naming the file.
    #[cfg(feature = "fs")]
    #[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
    pub fn read(path: &Path) -> Result<Self, crate::FormatError> {
        let bytes = std::fs::read(path).map_err(|source| crate::FormatError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&bytes, path.parent()).map_err(|source| crate::FormatError::Gltf {
            path: path.to_owned(),
            source,
        })
    }

    /// Parses GLB bytes or glTF JSON text. External buffer files are read relative to `base`
    /// (none: only embedded buffers are allowed).
    ///
    /// # Errors
    /// [`GltfError`] with the byte offset, JSON line/column or JSON path.
    pub fn parse(bytes: &[u8], base: Option<&Path>) -> Result<Self, GltfError> {
        let container = container::split(bytes)?;
        let json_error = |e: &serde_json::Error| GltfError::Json {
            line: e.line(),
            column: e.column(),
            reason: e.to_string(),
        };
        let raw: serde_json::Value =
            serde_json::from_slice(container.json).map_err(|e| json_error(&e))?;
        let root: gltf::json::Root =
            serde_json::from_value(raw.clone()).map_err(|e| json_error(&e))?;
        // The crate's validator indexes `accessors` with each POSITION attribute unchecked.
        for (m, mesh) in root.meshes.iter().enumerate() {
            for (p, primitive) in mesh.primitives.iter().enumerate() {
                for accessor in primitive.attributes.values() {
                    if accessor.value() >= root.accessors.len() {
                        return Err(GltfError::invalid(
                            format!("meshes[{m}].primitives[{p}].attributes"),
                            format!(
                                "accessor {} does not exist ({} accessors)",
                                accessor.value(),
                                root.accessors.len()
                            ),
                        ));
                    }
                }
            }
        }
        let mut first = None;
        root.validate(&root, gltf::json::Path::new, &mut |path, error| {
            // Required extensions the crate does not model (material or texture ones) do not
            // matter for skeletons, motion and mesh geometry.
            if first.is_none() && error != ValidationError::Unsupported {
                first = Some(GltfError::invalid(path().to_string(), format!("{error}")));
            }
        });
        if let Some(error) = first {
            return Err(error);
        }
        let mut buffers = Vec::with_capacity(root.buffers.len().min(64));
        for (index, buffer) in root.buffers.iter().enumerate() {
            let length = usize::try_from(buffer.byte_length.0).unwrap_or(usize::MAX);
            buffers.push(container::load_buffer(
                index,
                buffer.uri.as_deref(),
                length,
                container.bin,
                base,
            )?);
        }
        scene::check_hierarchy(&root)?;
        Ok(Self {
            root,
            raw,
            buffers,
            binary: container.binary,
        })
    }

    /// The typed JSON (the [`gltf`] crate's model).
    pub fn json(&self) -> &gltf::json::Root {
        &self.root
    }

    /// The raw JSON, with every extension as written.
    pub fn raw_json(&self) -> &serde_json::Value {
        &self.raw
    }

    /// True for a GLB (binary) file.
    pub fn is_binary(&self) -> bool {
        self.binary
    }

    /// The nodes with names and parents.
    pub fn nodes(&self) -> Vec<NodeInfo> {
        let parents = scene::parents(&self.root);
        self.root
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| NodeInfo {
                name: scene::node_name(n, i),
                parent: parents[i],
            })
            .collect()
    }

    /// Per skin: its name (or `skin<i>`) and its joint count.
    pub fn skins(&self) -> Vec<(String, usize)> {
        self.root
            .skins
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    s.name.clone().unwrap_or_else(|| format!("skin{i}")),
                    s.joints.len(),
                )
            })
            .collect()
    }

    /// Per animation: its name (or `animation<i>`) and its duration in seconds (the largest
    /// keyframe time of its samplers' inputs, read from the accessors' data).
    ///
    /// # Errors
    /// When an input accessor cannot be read.
    pub fn animations(&self) -> Result<Vec<(String, f64)>, GltfError> {
        let mut out = Vec::with_capacity(self.root.animations.len());
        for (i, animation) in self.root.animations.iter().enumerate() {
            let mut end = 0.0_f64;
            for sampler in &animation.samplers {
                let times =
                    accessor::read_f64(self, sampler.input.value(), accessor::Shape::SCALAR)?;
                end = times.iter().copied().fold(end, f64::max);
            }
            out.push((animation_name(animation, i), end));
        }
        Ok(out)
    }

    /// The index of the animation called `name` (or `animation<i>`).
    pub fn animation_index(&self, name: &str) -> Option<usize> {
        self.root
            .animations
            .iter()
            .enumerate()
            .position(|(i, a)| animation_name(a, i) == name)
    }
}

fn animation_name(animation: &gltf::json::Animation, index: usize) -> String {
    animation
        .name
        .clone()
        .unwrap_or_else(|| format!("animation{index}"))
}

/// [`crate::open`] for `.gltf`, `.glb`, `.vrm` and `.vrma` files.
#[cfg(feature = "fs")]
pub(crate) fn open_document(
    path: &Path,
    scale: f64,
    animation: Option<&str>,
) -> Result<crate::Document, crate::FormatError> {
    let error = |source| crate::FormatError::Gltf {
        path: path.to_owned(),
        source,
    };
    let file = GltfFile::read(path)?;
    let is_vrma = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("vrma"));
    document_from_file(&file, is_vrma, scale, animation).map_err(error)
}

/// The document of a parsed glTF file (see [`crate::open`]); `is_vrma` reads the skeleton of
/// the VRM animation's humanoid instead of the largest skin.
pub(crate) fn document_from_file(
    file: &GltfFile,
    is_vrma: bool,
    scale: f64,
    animation: Option<&str>,
) -> Result<crate::Document, GltfError> {
    let skeleton = if is_vrma {
        vrma::Vrma::from_file(file)?.skeleton
    } else {
        file.skeleton(&SkeletonSource::Auto)?
    };
    let index = match animation {
        Some(name) => Some(file.animation_index(name).ok_or_else(|| {
            GltfError::invalid("animations", format!("no animation named `{name}`"))
        })?),
        None => (!file.json().animations.is_empty()).then_some(0),
    };
    let mut motion = match index {
        Some(i) => Some(file.clip(i, &skeleton)?.to_motion(&skeleton, None)?),
        None => None,
    };
    let mut mesh = file.mesh(&skeleton)?;
    if scale != 1.0 {
        if let Some(motion) = &mut motion {
            motion.scale_lengths(scale);
        }
        if let Some(mesh) = &mut mesh {
            for p in &mut mesh.positions {
                *p = p.map(|c| (f64::from(c) * scale) as f32);
            }
            for bind in &mut mesh.inverse_bind {
                bind.translation *= scale;
            }
        }
    }
    Ok(crate::Document {
        skeleton: skeleton.skeleton.scaled(scale),
        motion,
        layout: None,
        mesh,
        rig: None,
    })
}
