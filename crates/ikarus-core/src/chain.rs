//! Serial chains with a joint-vector `q` interface, the way robot software addresses a
//! manipulator: one number per actuated joint from a base joint to a tip joint.
//!
//! A [`JointChain`] does not own a pose: it maps `q` into a [`LocalPose`] of its skeleton
//! ([`JointChain::set_q`]) and back ([`JointChain::q_from_pose`]), so every solver that works
//! on poses works on robots, and `q` is only the boundary (URDF loading builds chains;
//! `ikarus batch` reads seeds and writes solutions as `q`).

use glam::{DAffine3, DQuat, DVec3};

use crate::{JointId, LocalPose, ModelPose, Skeleton};

/// How one entry of `q` moves its joint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChainMotion {
    /// Rotation by `q − offset` radians about `axis` (unit, in the joint's rest frame) on top
    /// of the rest rotation: `local.rotation = rest.rotation · R(axis, q − offset)`.
    Revolute {
        /// Unit axis in the joint's rest frame.
        axis: DVec3,
        /// The value of `q` at the rest rotation.
        offset: f64,
    },
    /// Translation by `q` metres along `axis`:
    /// `local.translation = origin + frame · (axis · q)`.
    Prismatic {
        /// Unit axis in the joint's frame.
        axis: DVec3,
        /// Local translation at `q = 0`, parent space.
        origin: DVec3,
        /// The joint frame's rotation relative to the parent at `q = 0`.
        frame: DQuat,
    },
}

/// One entry of `q`.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainDof {
    /// The skeleton joint it moves.
    pub joint: JointId,
    /// Its name (e.g. the URDF joint's).
    pub name: String,
    /// How it moves the joint.
    pub motion: ChainMotion,
    /// Lower limit (radians or metres; `-∞` when unbounded).
    pub lower: f64,
    /// Upper limit (`+∞` when unbounded).
    pub upper: f64,
}

/// A serial chain from `base` to `tip` with one `q` entry per [`ChainDof`], base to tip.
#[derive(Clone, Debug, PartialEq)]
pub struct JointChain {
    base: JointId,
    tip: JointId,
    dofs: Vec<ChainDof>,
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl JointChain {
    /// A chain of `skeleton` from `base` to `tip` moved by `dofs`.
    ///
    /// # Errors
    /// [`ChainError`] when `base` is not an ancestor of `tip`, a dof's joint is not strictly
    /// between them (or is `tip`), appears twice, has a non-unit axis, or has `lower > upper`.
    pub fn new(
        skeleton: &Skeleton,
        base: JointId,
        tip: JointId,
        dofs: Vec<ChainDof>,
    ) -> Result<Self, ChainError> {
        let n = skeleton.len();
        if base.index() >= n || tip.index() >= n || !skeleton.is_ancestor_or_self(base, tip) {
            return Err(ChainError::BaseNotAncestor);
        }
        for (i, dof) in dofs.iter().enumerate() {
            let j = dof.joint;
            if j.index() >= n
                || j == base
                || !skeleton.is_ancestor_or_self(base, j)
                || !skeleton.is_ancestor_or_self(j, tip)
            {
                return Err(ChainError::NotBetween {
                    dof: dof.name.clone(),
                });
            }
            if dofs[..i].iter().any(|d| d.joint == j) {
                return Err(ChainError::Twice {
                    dof: dof.name.clone(),
                });
            }
            let axis = match dof.motion {
                ChainMotion::Revolute { axis, .. } | ChainMotion::Prismatic { axis, .. } => axis,
            };
            if !axis.is_finite() || (axis.length() - 1.0).abs() > 1e-9 {
                return Err(ChainError::NonUnitAxis {
                    dof: dof.name.clone(),
                });
            }
            if dof.lower.is_nan() || dof.upper.is_nan() || dof.lower > dof.upper {
                return Err(ChainError::Range {
                    dof: dof.name.clone(),
                });
            }
        }
        Ok(Self {
            base,
            tip,
            lower: dofs.iter().map(|d| d.lower).collect(),
            upper: dofs.iter().map(|d| d.upper).collect(),
            dofs,
        })
    }

    /// The base joint.
    pub fn base(&self) -> JointId {
        self.base
    }

    /// The tip joint.
    pub fn tip(&self) -> JointId {
        self.tip
    }

    /// Number of entries of `q`.
    pub fn dof(&self) -> usize {
        self.dofs.len()
    }

    /// The entries of `q`, base to tip.
    pub fn dofs(&self) -> &[ChainDof] {
        &self.dofs
    }

    /// Their names, in `q` order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.dofs.iter().map(|d| d.name.as_str())
    }

    /// The skeleton joint moved by each entry of `q`.
    pub fn joints(&self) -> impl ExactSizeIterator<Item = JointId> + '_ {
        self.dofs.iter().map(|d| d.joint)
    }

    /// Lower limits (`-∞` for unbounded joints).
    pub fn lower(&self) -> &[f64] {
        &self.lower
    }

    /// Upper limits (`+∞` for unbounded joints).
    pub fn upper(&self) -> &[f64] {
        &self.upper
    }

    /// The middle of the limits (0 for unbounded joints): TRAC-IK's default seed.
    pub fn middle(&self) -> Vec<f64> {
        self.lower
            .iter()
            .zip(&self.upper)
            .map(|(&l, &u)| {
                if l.is_finite() && u.is_finite() {
                    0.5 * (l + u)
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// True when every entry of `q` is finite and within its limits (plus `tolerance`).
    pub fn within_limits(&self, q: &[f64], tolerance: f64) -> bool {
        q.len() == self.dof()
            && q.iter()
                .zip(self.lower.iter().zip(&self.upper))
                .all(|(&v, (&l, &u))| v.is_finite() && v >= l - tolerance && v <= u + tolerance)
    }

    /// Writes `q` into `pose` (local rotations of revolute joints, local translations of
    /// prismatic ones); other joints are left as they are.
    ///
    /// # Errors
    /// [`ChainError`] when `q` has the wrong length or a non-finite entry, or `pose` is not a pose
    /// of `skeleton`; `pose` is then unchanged.
    pub fn set_q(
        &self,
        skeleton: &Skeleton,
        q: &[f64],
        pose: &mut LocalPose,
    ) -> Result<(), ChainError> {
        if q.len() != self.dof() {
            return Err(ChainError::QLength {
                found: q.len(),
                expected: self.dof(),
            });
        }
        if let Some(i) = q.iter().position(|v| !v.is_finite()) {
            return Err(ChainError::NonFiniteQ { index: i });
        }
        if pose.len() != skeleton.len() {
            return Err(ChainError::PoseMismatch);
        }
        for (dof, &v) in self.dofs.iter().zip(q) {
            let rest = skeleton.rest(dof.joint).rotation;
            let local = &mut pose[dof.joint];
            match dof.motion {
                ChainMotion::Revolute { axis, offset } => {
                    local.rotation = (rest * DQuat::from_axis_angle(axis, v - offset)).normalize();
                }
                ChainMotion::Prismatic {
                    axis,
                    origin,
                    frame,
                } => local.translation = origin + frame * (axis * v),
            }
        }
        Ok(())
    }

    /// Reads `q` from `pose` into `out` (`out.len()` must be [`JointChain::dof`]). A revolute
    /// angle is taken in the turn that lies within the limits when one does.
    pub fn q_from_pose(&self, skeleton: &Skeleton, pose: &LocalPose, out: &mut [f64]) {
        let tau = std::f64::consts::TAU;
        for (i, dof) in self.dofs.iter().enumerate() {
            let local = pose[dof.joint];
            out[i] = match dof.motion {
                ChainMotion::Prismatic {
                    axis,
                    origin,
                    frame,
                } => (frame.conjugate() * (local.translation - origin)).dot(axis),
                ChainMotion::Revolute { axis, offset } => {
                    let delta = skeleton.rest(dof.joint).rotation.conjugate() * local.rotation;
                    let mut angle = 2.0 * delta.xyz().dot(axis).atan2(delta.w);
                    if angle > std::f64::consts::PI {
                        angle -= tau;
                    } else if angle < -std::f64::consts::PI {
                        angle += tau;
                    }
                    let q = offset + angle;
                    [q, q - tau, q + tau]
                        .into_iter()
                        .find(|v| *v >= self.lower[i] - 1e-9 && *v <= self.upper[i] + 1e-9)
                        .unwrap_or(q)
                }
            };
        }
    }

    /// The tip's frame in the base's frame, `base_from_tip`, from a model pose.
    pub fn tip_in_base(&self, model: &ModelPose) -> DAffine3 {
        model[self.base].inverse() * model[self.tip]
    }
}

/// Why a [`JointChain`] cannot be built ([`JointChain::new`]) or a joint vector not written
/// ([`JointChain::set_q`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The base joint is not an ancestor of the tip joint (or either is unknown).
    #[error("the base joint must be an ancestor of the tip joint")]
    BaseNotAncestor,
    /// A degree of freedom's joint is not strictly between base and tip (or is the tip).
    #[error("dof `{dof}` is not between base and tip")]
    NotBetween {
        /// The degree of freedom.
        dof: String,
    },
    /// Two degrees of freedom move the same joint.
    #[error("joint of dof `{dof}` appears twice")]
    Twice {
        /// The degree of freedom.
        dof: String,
    },
    /// A degree of freedom's axis is not a finite unit vector.
    #[error("dof `{dof}` has a non-unit axis")]
    NonUnitAxis {
        /// The degree of freedom.
        dof: String,
    },
    /// A degree of freedom's range is NaN or has `lower > upper`.
    #[error("dof `{dof}` has lower > upper")]
    Range {
        /// The degree of freedom.
        dof: String,
    },
    /// The joint vector's length is not the chain's number of degrees of freedom.
    #[error("q has {found} entries; the chain has {expected}")]
    QLength {
        /// Entries given.
        found: usize,
        /// The chain's degrees of freedom.
        expected: usize,
    },
    /// An entry of the joint vector is NaN or infinite.
    #[error("q[{index}] is not finite")]
    NonFiniteQ {
        /// Its index.
        index: usize,
    },
    /// The pose has another number of joints than the skeleton.
    #[error("the pose is not a pose of this skeleton")]
    PoseMismatch,
}
