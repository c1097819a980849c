//! `MikuMikuDance` files: PMX 2.0/2.1 and PMD models, VMD motions.
//!
//! **Conversion at the boundary.** MMD is left-handed, +Y up, with the model facing −Z and
//! 1 unit = 0.08 m. Inside ikarus a model is right-handed metres facing +Z with its left on +X,
//! so every position `(x, y, z)` becomes `0.08 · (x, y, −z)` and every rotation quaternion
//! `(x, y, z, w)` becomes `(−x, −y, z, w)` (the mirror `diag(1, 1, −1)` conjugates a rotation by
//! `a` about X or Y into one by `−a`, and leaves rotations about Z alone). Euler link limits
//! follow: X and Y ranges `[min, max]` become `[−max, −min]`, Z ranges stay. Triangles swap their
//! last two corners: mirrored, MMD's triangles wind clockwise around their vertex normals, and
//! the core (like glTF) draws counter-clockwise faces as front faces. Export
//! ([`vmd::Vmd::write`]) applies the inverse conversion.
//!
//! - [`pmx`] and [`pmd`] read a model into one [`MmdModel`] (bones with every flag, IK
//!   chains, vertices, faces, materials; morphs, rigid bodies and joints are parsed past);
//!   [`MmdModel::build`] turns it into a core [`Skeleton`](ikarus_core::Skeleton),
//!   [`Rig`](ikarus_core::rig::Rig) and [`SkinnedMesh`](crate::mesh::SkinnedMesh).
//! - [`vmd`] reads and writes motions (bone keyframes with their Bézier curves, IK on/off
//!   frames; morph, camera, light and shadow sections kept) and samples them per frame.
//!
//! Readers never panic and never allocate from a count they have not checked against the
//! bytes left; errors carry the byte offset and what was expected.

mod bytes;
mod model;
pub mod pmd;
pub mod pmx;
pub mod vmd;

pub use model::{
    Bone, BoneFlags, BoneInherit, Built, IkDef, IkLinkDef, MaterialDef, MmdBuildError, MmdModel,
    ModelFormat, Tail, Vertex,
};

/// Metres per MMD length unit.
pub const METRES_PER_UNIT: f64 = 0.08;

/// What is wrong with an MMD file and at which byte.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {message}")]
pub struct MmdError {
    /// Byte offset into the file where reading stopped.
    pub offset: usize,
    /// What was expected and what was found.
    pub message: String,
}

impl MmdError {
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> Self {
        Self {
            offset,
            message: message.into(),
        }
    }
}

/// MMD position (left-handed units) → ikarus model space (right-handed metres times `scale`).
pub fn position_from_mmd(p: [f32; 3], scale: f64) -> glam::DVec3 {
    glam::DVec3::new(f64::from(p[0]), f64::from(p[1]), -f64::from(p[2])) * (METRES_PER_UNIT * scale)
}

/// ikarus model space → MMD position (inverse of [`position_from_mmd`]).
pub fn position_to_mmd(p: glam::DVec3, scale: f64) -> [f32; 3] {
    let q = p / (METRES_PER_UNIT * scale);
    [q.x as f32, q.y as f32, (-q.z) as f32]
}

/// MMD rotation `[x, y, z, w]` → ikarus (right-handed), as stored (not normalised, so a
/// write gives back the file's numbers; [`unit()`] normalises for use).
pub fn rotation_from_mmd(q: [f32; 4]) -> glam::DQuat {
    glam::DQuat::from_xyzw(
        -f64::from(q[0]),
        -f64::from(q[1]),
        f64::from(q[2]),
        f64::from(q[3]),
    )
}

/// `q` normalised; a zero quaternion (files hold them) is identity.
pub fn unit(q: glam::DQuat) -> glam::DQuat {
    let length = q.length();
    if length > 1e-12 && length.is_finite() {
        q / length
    } else {
        glam::DQuat::IDENTITY
    }
}

/// ikarus rotation → MMD `[x, y, z, w]` (inverse of [`rotation_from_mmd`]).
pub fn rotation_to_mmd(q: glam::DQuat) -> [f32; 4] {
    [(-q.x) as f32, (-q.y) as f32, q.z as f32, q.w as f32]
}
