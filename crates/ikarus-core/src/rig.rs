//! A character rig's evaluation rules beyond the skeleton: which joints copy part of another
//! joint's motion (MMD's 付与, "inherit"), the order joints are evaluated in, and the IK chains
//! the file itself declares (MMD's leg, toe and hair IK) with their iteration budgets and link
//! limits.
//!
//! Formats fill a [`Rig`] in the core's conventions (right-handed, metres, radians); the
//! evaluator that plays a motion through it lives in `ikarus-anim`. Every joint reference is a
//! [`JointId`] of the skeleton the rig was built with; [`Rig::validate`] checks that.

use crate::{EulerLimit, JointId, Skeleton};

/// Evaluation rules for one skeleton.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rig {
    /// Every joint exactly once, in the order the rig evaluates them (MMD: deform layer, then
    /// file order; joints deformed after physics last). Inheritance and IK run in this order.
    pub order: Vec<JointId>,
    /// How many joints at the end of [`order`](Self::order) are evaluated after physics (MMD's
    /// "after physics" flag). With no physics simulation they are evaluated last, in order.
    pub after_physics: usize,
    /// Per joint (indexed by [`JointId::index`]), the motion it inherits, if any.
    pub inherit: Vec<Option<Inherit>>,
    /// The IK chains, each solved when its goal joint comes up in [`order`](Self::order).
    pub ik: Vec<IkChain>,
}

/// A joint that adds a fraction of another joint's animated motion to its own (MMD 付与).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inherit {
    /// The joint whose motion is copied.
    pub source: JointId,
    /// The fraction copied: rotations are slerped from identity by it, translations scaled.
    /// Negative values copy the motion reversed.
    pub ratio: f64,
    /// Copies the source's rotation.
    pub rotation: bool,
    /// Copies the source's translation (relative to its rest).
    pub translation: bool,
    /// Copies the source's own animated motion only, never what the source itself inherited
    /// (MMD's "local" inherit flag).
    pub local: bool,
}

/// An IK chain declared by the file: turn the links so the effector reaches the goal joint.
#[derive(Clone, Debug, PartialEq)]
pub struct IkChain {
    /// The chain's name (its goal joint's name in MMD: 左足ＩＫ).
    pub name: String,
    /// The joint whose position is the target (MMD's IK bone).
    pub goal: JointId,
    /// The joint brought to the goal (MMD's IK target bone, e.g. the ankle).
    pub effector: JointId,
    /// The joints turned, effector side first (MMD's link order: knee, then leg).
    pub links: Vec<IkLink>,
    /// The iteration budget (MMD's loop count).
    pub iterations: u32,
    /// The largest rotation one link takes per step, radians (MMD's unit angle).
    pub unit_angle: f64,
}

/// One joint an [`IkChain`] turns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkLink {
    /// The joint.
    pub joint: JointId,
    /// Its angle limit as X-Y-Z Euler ranges of the joint's local rotation (MMD's link limit,
    /// converted to right-handed angles), if it has one.
    pub limit: Option<EulerLimit>,
}

impl Rig {
    /// A rig with no inheritance and no IK, evaluating joints in skeleton order.
    pub fn plain(skeleton: &Skeleton) -> Self {
        Self {
            order: skeleton.joints().collect(),
            after_physics: 0,
            inherit: vec![None; skeleton.len()],
            ik: Vec::new(),
        }
    }

    /// Checks every joint reference against `skeleton`: the order is a permutation of its
    /// joints, the per-joint table has its length, chains have at least one link, and every
    /// referenced joint exists. Returns what is wrong.
    ///
    /// # Errors
    /// [`RigError`] naming the first problem.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), RigError> {
        let n = skeleton.len();
        if self.order.len() != n {
            return Err(RigError::OrderLength {
                found: self.order.len(),
                joints: n,
            });
        }
        let mut seen = vec![false; n];
        for &joint in &self.order {
            let slot = seen.get_mut(joint.index()).ok_or(RigError::UnknownJoint {
                what: "order".to_owned(),
                joint,
                joints: n,
            })?;
            if std::mem::replace(slot, true) {
                return Err(RigError::OrderTwice { joint });
            }
        }
        if self.after_physics > n {
            return Err(RigError::AfterPhysics {
                found: self.after_physics,
                joints: n,
            });
        }
        if self.inherit.len() != n {
            return Err(RigError::InheritLength {
                found: self.inherit.len(),
                joints: n,
            });
        }
        let check = |joint: JointId, what: &str| {
            if joint.index() < n {
                Ok(())
            } else {
                Err(RigError::UnknownJoint {
                    what: what.to_owned(),
                    joint,
                    joints: n,
                })
            }
        };
        for inherit in self.inherit.iter().flatten() {
            check(inherit.source, "an inherit")?;
            if !inherit.ratio.is_finite() {
                return Err(RigError::InheritRatio);
            }
        }
        for chain in &self.ik {
            check(chain.goal, &chain.name)?;
            check(chain.effector, &chain.name)?;
            if chain.links.is_empty() {
                return Err(RigError::NoLinks {
                    chain: chain.name.clone(),
                });
            }
            for link in &chain.links {
                check(link.joint, &chain.name)?;
            }
            if !chain.unit_angle.is_finite() {
                return Err(RigError::UnitAngle {
                    chain: chain.name.clone(),
                });
            }
        }
        Ok(())
    }
}

/// What is wrong with a [`Rig`] for a skeleton ([`Rig::validate`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RigError {
    /// The evaluation order does not list every joint once.
    #[error("order lists {found} joints, the skeleton has {joints}")]
    OrderLength {
        /// Joints listed.
        found: usize,
        /// The skeleton's joints.
        joints: usize,
    },
    /// The evaluation order lists a joint twice.
    #[error("order lists joint {joint} twice")]
    OrderTwice {
        /// The joint.
        joint: JointId,
    },
    /// More after-physics joints than joints.
    #[error("{found} after-physics joints of {joints}")]
    AfterPhysics {
        /// After-physics joints given.
        found: usize,
        /// The skeleton's joints.
        joints: usize,
    },
    /// The per-joint inheritance table is not one entry per joint.
    #[error("{found} inherit entries for {joints} joints")]
    InheritLength {
        /// Entries given.
        found: usize,
        /// The skeleton's joints.
        joints: usize,
    },
    /// A joint reference past the skeleton's joints.
    #[error("{what} names joint {joint}, past the {joints} joints")]
    UnknownJoint {
        /// What refers to it (`order`, `an inherit`, or the IK chain's name).
        what: String,
        /// The joint referred to.
        joint: JointId,
        /// The skeleton's joints.
        joints: usize,
    },
    /// An inheritance ratio is NaN or infinite.
    #[error("an inherit ratio is not finite")]
    InheritRatio,
    /// An IK chain has no links.
    #[error("IK chain `{chain}` has no links")]
    NoLinks {
        /// The chain's name.
        chain: String,
    },
    /// An IK chain's unit angle is NaN or infinite.
    #[error("IK chain `{chain}` has a non-finite unit angle")]
    UnitAngle {
        /// The chain's name.
        chain: String,
    },
}
