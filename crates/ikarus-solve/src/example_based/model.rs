//! The posture model: a probabilistic PCA over joint rotations.
//!
//! **Parameterisation.** Each modelled joint's local rotation `q_j` is written as
//! `q_j = m_j · exp(x_j)`, where `m_j` is the joint's mean rotation over the training frames
//! (its Karcher mean) and `x_j` a rotation vector (axis × angle) in the joint's own frame after
//! the mean. Averaging and linear combinations of these tangent vectors are safe: they are small
//! around the mean, have no sign ambiguity (unlike quaternion components) and no gimbal lock
//! (unlike Euler angles). A posture is the stacked vector `x` of `3·J` numbers.
//!
//! **Model.** Probabilistic PCA (Tipping & Bishop): `x = μ + W z + ε` with `z ~ N(0, I_K)` and
//! isotropic noise `ε ~ N(0, σ² I)`, so `x ~ N(μ, C)` with `C = W Wᵀ + σ² I`. `W`'s columns are
//! the principal directions scaled by `sqrt(λ_k − σ²)`, and `σ²` is the mean of the discarded
//! eigenvalues.

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, Skeleton};
use serde::{Deserialize, Serialize};

use crate::iterative::dofs::rotation_vector;

/// The model file's format name, checked on load.
pub const FORMAT: &str = "ikarus-posture-model";

/// The model file's version this build reads and writes.
pub const VERSION: u32 = 1;

/// A learned posture space over some of a skeleton's joints (see the module docs). Built by a
/// learner (`ikarus_anim::posture::learn`) or read from a file; validated on construction, so
/// every model holds consistent sizes and finite numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ModelFile", into = "ModelFile")]
pub struct PostureModel {
    joints: Vec<String>,
    mean: Vec<DQuat>,
    offset: Vec<f64>,
    /// `3J × K`, row-major.
    basis: Vec<f64>,
    variances: Vec<f64>,
    noise: f64,
    scale: f64,
    frames: usize,
    /// The covariance of the latent point's change between frames, `K × K` row-major (see
    /// [`PostureModel::with_motion`]), when learned.
    motion: Option<Vec<f64>>,
}

/// What [`PostureModel::new`] checks.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The file names another format or version.
    #[error("not an {FORMAT} version {VERSION} file: found format {format:?} version {version}")]
    Version {
        /// The format name found.
        format: String,
        /// The version found.
        version: u32,
    },
    /// Two parts of the model disagree in size.
    #[error("{what}: expected {expected} numbers, found {found}")]
    Size {
        /// Which part.
        what: &'static str,
        /// The size the joint count and dimension call for.
        expected: usize,
        /// The size found.
        found: usize,
    },
    /// A number is NaN or infinite, a variance negative, a scale not positive, a rotation zero.
    #[error("{what} must be finite{extra}")]
    Value {
        /// Which part.
        what: &'static str,
        /// What else it must be.
        extra: &'static str,
    },
    /// A joint name appears twice.
    #[error("joint {0:?} appears twice")]
    DuplicateJoint(String),
    /// A modelled joint is the skeleton's root ([`PostureModel::bind`]): the model moves joints
    /// below a fixed root.
    #[error("posture model joint {0:?} is the root")]
    RootJoint(String),
    /// The skeleton lacks a modelled joint ([`PostureModel::bind`]).
    #[error("the posture model does not fit this skeleton: it has no joint {0:?}")]
    MissingJoint(String),
}

/// The parts of a model, as [`PostureModel::new`] takes them.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelParts {
    /// The modelled joints, by name.
    pub joints: Vec<String>,
    /// Each joint's mean local rotation `m_j`.
    pub mean: Vec<DQuat>,
    /// `μ`, the mean tangent vector (`3J`; near zero when `m` is the Karcher mean).
    pub offset: Vec<f64>,
    /// `W`, `3J × K` row-major.
    pub basis: Vec<f64>,
    /// The eigenvalues `λ_1 ≥ … ≥ λ_K` of the kept directions.
    pub variances: Vec<f64>,
    /// `σ²`, the variance left in the discarded directions (> 0).
    pub noise: f64,
    /// A length of the skeleton (its rest height), for the solver's goal noise.
    pub scale: f64,
    /// How many frames it was learned from.
    pub frames: usize,
}

impl PostureModel {
    /// A model from its parts, checked.
    ///
    /// # Errors
    /// [`ModelError`] when sizes disagree or a number is not finite.
    pub fn new(parts: ModelParts) -> Result<Self, ModelError> {
        let j = parts.joints.len();
        let k = parts.variances.len();
        let size = |what, expected, found| {
            if expected == found {
                Ok(())
            } else {
                Err(ModelError::Size {
                    what,
                    expected,
                    found,
                })
            }
        };
        size("mean", j, parts.mean.len())?;
        size("offset", 3 * j, parts.offset.len())?;
        size("basis", 3 * j * k, parts.basis.len())?;
        for (i, name) in parts.joints.iter().enumerate() {
            if parts.joints[..i].contains(name) {
                return Err(ModelError::DuplicateJoint(name.clone()));
            }
        }
        let finite = |what, values: &[f64]| {
            if values.iter().all(|v| v.is_finite()) {
                Ok(())
            } else {
                Err(ModelError::Value { what, extra: "" })
            }
        };
        finite("offset", &parts.offset)?;
        finite("basis", &parts.basis)?;
        if !parts.variances.iter().all(|v| v.is_finite() && *v >= 0.0) {
            return Err(ModelError::Value {
                what: "variances",
                extra: " and not negative",
            });
        }
        if !(parts.noise.is_finite() && parts.noise > 0.0) {
            return Err(ModelError::Value {
                what: "noise",
                extra: " and positive",
            });
        }
        if !(parts.scale.is_finite() && parts.scale > 0.0) {
            return Err(ModelError::Value {
                what: "scale",
                extra: " and positive",
            });
        }
        let mut mean = parts.mean;
        for q in &mut mean {
            let n = q.length();
            if !(n.is_finite() && n > 1e-6) {
                return Err(ModelError::Value {
                    what: "mean rotations",
                    extra: " and non-zero",
                });
            }
            // Unit within rounding is kept as is, so reading and writing a file is exact.
            if (n - 1.0).abs() > 1e-12 {
                *q /= n;
            }
        }
        Ok(Self {
            joints: parts.joints,
            mean,
            offset: parts.offset,
            basis: parts.basis,
            variances: parts.variances,
            noise: parts.noise,
            scale: parts.scale,
            frames: parts.frames,
            motion: None,
        })
    }

    /// The model with a motion part: `covariance`, `K × K` row-major, the covariance of the
    /// latent point's change between two frames of a motion (what
    /// `ikarus_anim::posture::learn_motion` measures). A start the example-based solver trusts
    /// (a drag, a per-frame solve) then moves in the latent space as the examples move between
    /// frames, not equally in every direction.
    ///
    /// # Errors
    /// [`ModelError::Size`] for another size than `K × K`, [`ModelError::Value`] for a number
    /// that is not finite or a matrix that is not symmetric with a positive diagonal.
    pub fn with_motion(mut self, covariance: Vec<f64>) -> Result<Self, ModelError> {
        let k = self.dims();
        if covariance.len() != k * k {
            return Err(ModelError::Size {
                what: "motion",
                expected: k * k,
                found: covariance.len(),
            });
        }
        let symmetric = (0..k).all(|a| {
            covariance[a * k + a] > 0.0
                && (0..k).all(|b| {
                    let (x, y) = (covariance[a * k + b], covariance[b * k + a]);
                    x.is_finite() && (x - y).abs() <= 1e-9 * (x.abs() + y.abs())
                })
        });
        if !symmetric {
            return Err(ModelError::Value {
                what: "motion",
                extra: ", symmetric and with a positive diagonal",
            });
        }
        self.motion = Some(covariance);
        Ok(self)
    }

    /// The motion part's covariance (`K × K` row-major), when the model has one.
    pub fn motion(&self) -> Option<&[f64]> {
        self.motion.as_deref()
    }

    /// `z = (WᵀW + σ² I)⁻¹ Wᵀ (x − μ)`, the PPCA posterior mean of posture `x` (`3J`; zeros
    /// when the system is singular).
    pub fn latent_of(&self, x: &[f64]) -> Vec<f64> {
        let k = self.dims();
        let mut m = nalgebra::DMatrix::<f64>::identity(k, k) * self.noise;
        let mut b = nalgebra::DVector::<f64>::zeros(k);
        for (row, (&xr, &mr)) in x[..self.len()].iter().zip(&self.offset).enumerate() {
            for a in 0..k {
                let wa = self.basis(row, a);
                b[a] += wa * (xr - mr);
                for c in 0..k {
                    m[(a, c)] += wa * self.basis(row, c);
                }
            }
        }
        m.cholesky()
            .map_or_else(|| vec![0.0; k], |c| c.solve(&b).iter().copied().collect())
    }

    /// The modelled joints, by name.
    pub fn joints(&self) -> &[String] {
        &self.joints
    }

    /// The posture vector's length, `3J`.
    pub fn len(&self) -> usize {
        3 * self.joints.len()
    }

    /// True for a model of no joints.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The latent dimension `K`.
    pub fn dims(&self) -> usize {
        self.variances.len()
    }

    /// The kept eigenvalues, largest first.
    pub fn variances(&self) -> &[f64] {
        &self.variances
    }

    /// `σ²`, the isotropic variance of the discarded directions.
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// The skeleton length the model was learned at (its rest height).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// How many frames it was learned from.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Each joint's mean local rotation.
    pub fn mean_rotations(&self) -> &[DQuat] {
        &self.mean
    }

    /// `μ`, the mean tangent vector.
    pub fn offset(&self) -> &[f64] {
        &self.offset
    }

    /// Reads a model file's text (JSON; see the crate's `data/README.md`): format name and
    /// version checked, then every size and number.
    ///
    /// # Errors
    /// What is wrong (a [`ModelError`] or bad JSON), with the JSON line and column.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The model file's text: JSON with one key, mean rotation or basis row per line, the
    /// format name and version first.
    pub fn to_json(&self) -> String {
        let file = ModelFile::from(self.clone());
        let text = |v: &dyn erased::Json| v.json();
        let rows = |rows: &[Vec<f64>]| {
            let lines: Vec<String> = rows.iter().map(|r| text(r)).collect();
            format!("[\n    {}\n  ]", lines.join(",\n    "))
        };
        let mean: Vec<Vec<f64>> = file.mean.iter().map(|q| q.to_vec()).collect();
        let fields = [
            ("format", text(&file.format)),
            ("version", text(&file.version)),
            ("parameterisation", text(&file.parameterisation)),
            ("joints", text(&file.joints)),
            ("frames", text(&file.frames)),
            ("scale", text(&file.scale)),
            ("noise", text(&file.noise)),
            ("variances", text(&file.variances)),
            ("mean", rows(&mean)),
            ("offset", text(&file.offset)),
            ("basis", rows(&file.basis)),
        ];
        let motion = file.motion.as_deref().map(|m| ("motion", rows(m)));
        let fields: Vec<(&str, String)> = fields.into_iter().chain(motion).collect();
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("  {k:?}: {v}"))
            .collect();
        format!("{{\n{}\n}}\n", body.join(",\n"))
    }

    /// `W[row, k]`.
    pub fn basis(&self, row: usize, k: usize) -> f64 {
        self.basis[row * self.dims() + k]
    }

    /// The joints of `skeleton` the model covers, in the model's order.
    ///
    /// # Errors
    /// The first modelled joint `skeleton` lacks, or a root among them (the model moves joints
    /// below a fixed root).
    pub fn bind(&self, skeleton: &Skeleton) -> Result<Vec<JointId>, ModelError> {
        self.joints
            .iter()
            .map(|name| match skeleton.joint(name) {
                Some(j) if skeleton.parent(j).is_some() => Ok(j),
                Some(_) => Err(ModelError::RootJoint(name.clone())),
                None => Err(ModelError::MissingJoint(name.clone())),
            })
            .collect()
    }

    /// Writes the posture `x` (tangent vector, `3J`) into `pose`'s rotations of `joints`
    /// (from [`bind`](Self::bind)).
    pub fn decode(&self, x: &[f64], joints: &[JointId], pose: &mut LocalPose) {
        for (k, &joint) in joints.iter().enumerate() {
            let v = DVec3::new(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
            pose[joint].rotation = (self.mean[k] * DQuat::from_scaled_axis(v)).normalize();
        }
    }

    /// Reads the posture `x` of `pose` (the inverse of [`decode`](Self::decode)).
    pub fn encode(&self, pose: &LocalPose, joints: &[JointId], x: &mut [f64]) {
        for (k, &joint) in joints.iter().enumerate() {
            let v = rotation_vector(self.mean[k].conjugate() * pose[joint].rotation);
            x[3 * k..3 * k + 3].copy_from_slice(&v.to_array());
        }
    }

    /// The posture of latent point `z`: `x = μ + W z`.
    pub fn posture(&self, z: &[f64], x: &mut [f64]) {
        let k = self.dims();
        for (row, out) in x.iter_mut().enumerate() {
            let w = &self.basis[row * k..(row + 1) * k];
            *out = self.offset[row] + w.iter().zip(z).map(|(a, b)| a * b).sum::<f64>();
        }
    }

    /// `C v = W (Wᵀ v) + σ² v`, the prior covariance applied to a vector (`3J`).
    pub fn covariance_times(&self, v: &[f64], scratch: &mut Vec<f64>, out: &mut [f64]) {
        let k = self.dims();
        scratch.clear();
        scratch.resize(k, 0.0);
        for (row, &vr) in v.iter().enumerate() {
            for (s, w) in scratch.iter_mut().zip(&self.basis[row * k..(row + 1) * k]) {
                *s += w * vr;
            }
        }
        for (row, o) in out.iter_mut().enumerate() {
            let w = &self.basis[row * k..(row + 1) * k];
            *o = self.noise * v[row]
                + w.iter()
                    .zip(scratch.iter())
                    .map(|(a, b)| a * b)
                    .sum::<f64>();
        }
    }
}

/// The file form of a model (JSON through serde): the format name and version first, checked
/// when read.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    format: String,
    version: u32,
    parameterisation: String,
    joints: Vec<String>,
    mean: Vec<[f64; 4]>,
    offset: Vec<f64>,
    basis: Vec<Vec<f64>>,
    variances: Vec<f64>,
    noise: f64,
    scale: f64,
    frames: usize,
    /// The motion part, `K` rows of `K` (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    motion: Option<Vec<Vec<f64>>>,
}

/// The parameterisation name written in files.
const PARAMETERISATION: &str = "rotation_vector_about_karcher_mean";

impl TryFrom<ModelFile> for PostureModel {
    type Error = ModelError;

    fn try_from(file: ModelFile) -> Result<Self, ModelError> {
        if file.format != FORMAT
            || file.version != VERSION
            || file.parameterisation != PARAMETERISATION
        {
            return Err(ModelError::Version {
                format: format!("{} ({})", file.format, file.parameterisation),
                version: file.version,
            });
        }
        let k = file.variances.len();
        let basis = flatten_rows(&file.basis, k, "basis row")?;
        let model = Self::new(ModelParts {
            joints: file.joints,
            mean: file.mean.iter().map(|q| DQuat::from_array(*q)).collect(),
            offset: file.offset,
            basis,
            variances: file.variances,
            noise: file.noise,
            scale: file.scale,
            frames: file.frames,
        })?;
        let Some(rows) = file.motion else {
            return Ok(model);
        };
        model.with_motion(flatten_rows(&rows, k, "motion row")?)
    }
}

/// `rows` of `k` numbers each, row-major in one vector; [`ModelError::Size`] naming `what` for
/// a row of another length.
fn flatten_rows(rows: &[Vec<f64>], k: usize, what: &'static str) -> Result<Vec<f64>, ModelError> {
    let mut out = Vec::with_capacity(rows.len().saturating_mul(k));
    for row in rows {
        if row.len() != k {
            return Err(ModelError::Size {
                what,
                expected: k,
                found: row.len(),
            });
        }
        out.extend_from_slice(row);
    }
    Ok(out)
}

impl From<PostureModel> for ModelFile {
    fn from(model: PostureModel) -> Self {
        let k = model.dims();
        Self {
            format: FORMAT.to_owned(),
            version: VERSION,
            parameterisation: PARAMETERISATION.to_owned(),
            basis: model.basis.chunks(k.max(1)).map(<[f64]>::to_vec).collect(),
            mean: model.mean.iter().map(DQuat::to_array).collect(),
            joints: model.joints,
            offset: model.offset,
            variances: model.variances,
            noise: model.noise,
            scale: model.scale,
            frames: model.frames,
            motion: model
                .motion
                .map(|m| m.chunks(k.max(1)).map(<[f64]>::to_vec).collect()),
        }
    }
}

/// One value as compact JSON.
mod erased {
    /// A value serde can write as JSON.
    pub(super) trait Json {
        fn json(&self) -> String;
    }

    impl<T: serde::Serialize + ?Sized> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap_or_default()
        }
    }
}
