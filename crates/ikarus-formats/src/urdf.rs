//! URDF robots: the kinematic tree as a [`Skeleton`] and serial chains with a joint-vector `q`
//! interface ([`JointChain`]).
//!
//! The XML is read by [`urdf_rs`]; [`roxmltree`] checks the syntax first and locates elements,
//! so every error names a line and column of the original text.
//!
//! # Conventions
//! URDF frames are kept as they are (+Z up in most robot files; IK does not care which way is
//! up): one skeleton joint per **link**, named after the link, whose rest transform is the URDF
//! joint's `<origin>` (`xyz`, then `rpy` as fixed-axis roll about X, pitch about Y, yaw about
//! Z: `R = Rz(yaw)·Ry(pitch)·Rx(roll)`). Lengths are metres, angles radians.
//!
//! | URDF joint | skeleton limit | `q` |
//! |---|---|---|
//! | `revolute` | [`HingeLimit`] about `<axis>` with `<limit lower upper>` | angle, radians |
//! | `continuous` | full-circle hinge | angle, radians, unbounded |
//! | `prismatic` | [`JointLimit::Locked`] (the skeleton's solvers turn joints only) | offset along `<axis>`, metres, written into the local translation |
//! | `fixed`, `planar` | [`JointLimit::Locked`] | none |
//! | `floating` | [`JointLimit::Free`] | none |
//!
//! A revolute range reaching outside `[-π, π]` but narrower than a full turn is centred: the
//! skeleton's rest rotation includes the turn to the middle of the range and the hinge limit is
//! relative to it; the [`JointChain`] adds the offset back, so `q` is always URDF's angle. `<mimic>`
//! couplings are not enforced: mimic joints move independently.

use std::collections::HashMap;

use glam::{DQuat, DVec3};
use ikarus_core::chain::{ChainDof, ChainMotion, JointChain};
use ikarus_core::{
    HingeLimit, JointId, JointLimit, RawJoint, Skeleton, SkeletonBuilder, Transform,
};

/// Largest URDF text read, bytes.
pub const MAX_URDF_BYTES: usize = 64 << 20;

/// What is wrong with a URDF text and where.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct UrdfError {
    /// 1-based line of the offending element (1 when the whole document is at fault).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What was expected and what was found.
    pub message: String,
}

/// The kind of a URDF joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrdfJointKind {
    /// A hinge with limits.
    Revolute,
    /// A hinge without limits.
    Continuous,
    /// A slider along the axis.
    Prismatic,
    /// No motion.
    Fixed,
    /// Six degrees of freedom (a floating base).
    Floating,
    /// Motion in a plane (not solved: treated as fixed).
    Planar,
}

impl UrdfJointKind {
    /// True for the kinds with a `q` entry: revolute, continuous, prismatic.
    pub fn is_actuated(self) -> bool {
        matches!(self, Self::Revolute | Self::Continuous | Self::Prismatic)
    }
}

/// One URDF joint, converted to ikarus types.
#[derive(Clone, Debug, PartialEq)]
pub struct UrdfJoint {
    /// The URDF joint's name.
    pub name: String,
    /// Its kind.
    pub kind: UrdfJointKind,
    /// The parent link.
    pub parent: String,
    /// The child link (the skeleton joint this URDF joint moves).
    pub child: String,
    /// `<origin>`: the child frame at `q = 0` in the parent link's frame.
    pub origin: Transform,
    /// Unit `<axis>` in the child frame.
    pub axis: DVec3,
    /// `<limit lower>` (radians or metres); `-∞` for continuous joints.
    pub lower: f64,
    /// `<limit upper>`; `+∞` for continuous joints.
    pub upper: f64,
    /// Turn (radians) built into the skeleton's rest rotation to centre a wide revolute range;
    /// 0 otherwise. `q = offset + hinge angle`.
    pub offset: f64,
    /// Line of the `<joint>` element.
    pub line: u32,
}

/// A URDF robot: its joints and the skeleton of its links.
#[derive(Clone, Debug)]
pub struct Urdf {
    /// `<robot name>`.
    pub name: String,
    /// The joints, in file order.
    pub joints: Vec<UrdfJoint>,
    /// One joint per link, named after the link.
    pub skeleton: Skeleton,
    /// URDF joint index of each skeleton joint (`None` for root links).
    joint_of: Vec<Option<usize>>,
}

impl Urdf {
    /// Parses URDF text.
    ///
    /// # Errors
    /// [`UrdfError`] with the line and column: malformed XML, a joint naming a link that does
    /// not exist, a link with two parents, a cycle, a non-finite number, a zero axis, a
    /// revolute or prismatic joint whose `lower` exceeds `upper`, an unknown joint type, or a
    /// text larger than [`MAX_URDF_BYTES`].
    pub fn parse(text: &str) -> Result<Self, UrdfError> {
        if text.len() > MAX_URDF_BYTES {
            return Err(at(
                1,
                1,
                format!("{} bytes: larger than {MAX_URDF_BYTES}", text.len()),
            ));
        }
        let document = roxmltree::Document::parse(text).map_err(|e| {
            let p = e.pos();
            at(p.row, p.col, format!("malformed XML: {e}"))
        })?;
        let locator = Locator::new(&document);
        if document.root_element().tag_name().name() != "robot" {
            let (line, column) = locator.position(document.root_element());
            return Err(at(
                line,
                column,
                format!(
                    "expected a <robot> element, found <{}>",
                    document.root_element().tag_name().name()
                ),
            ));
        }
        locator.check_joint_types()?;
        let robot = urdf_rs::read_from_string(text).map_err(|e| {
            // The XML is well formed, so urdf-rs rejected the structure; point at the first
            // link or joint missing something it needs.
            let (line, column) = locator.first_incomplete().unwrap_or((1, 1));
            at(line, column, format!("not a valid URDF robot: {e}"))
        })?;
        let mut joints = Vec::with_capacity(robot.joints.len());
        for joint in &robot.joints {
            joints.push(convert_joint(joint, &locator)?);
        }
        let links: Vec<&str> = robot.links.iter().map(|l| l.name.as_str()).collect();
        let (skeleton, joint_of) = build_skeleton(&links, &joints, &locator)?;
        Ok(Self {
            name: robot.name,
            joints,
            skeleton,
            joint_of,
        })
    }

    /// The URDF joint that moves link `joint` (`None` for a root link).
    pub fn joint_of(&self, joint: JointId) -> Option<&UrdfJoint> {
        self.joint_of
            .get(joint.index())
            .copied()
            .flatten()
            .map(|i| &self.joints[i])
    }

    /// The serial chain from link `base` to link `tip` (`base` must be an ancestor of `tip`).
    ///
    /// # Errors
    /// [`UrdfChainError`] naming the unknown link, or saying `base` is not above `tip`.
    pub fn chain(&self, base: &str, tip: &str) -> Result<JointChain, UrdfChainError> {
        let find = |name: &str| {
            self.skeleton
                .joint(name)
                .ok_or_else(|| UrdfChainError::UnknownLink {
                    link: name.to_owned(),
                    robot: self.name.clone(),
                })
        };
        let (base_id, tip_id) = (find(base)?, find(tip)?);
        let links =
            self.skeleton
                .chain(base_id, tip_id)
                .ok_or_else(|| UrdfChainError::NotAncestor {
                    base: base.to_owned(),
                    tip: tip.to_owned(),
                })?;
        let mut dofs = Vec::new();
        for &link in links.iter().skip(1) {
            let Some(joint) = self.joint_of(link) else {
                continue;
            };
            if !joint.kind.is_actuated() {
                continue;
            }
            let motion = if joint.kind == UrdfJointKind::Prismatic {
                ChainMotion::Prismatic {
                    axis: joint.axis,
                    origin: joint.origin.translation,
                    frame: joint.origin.rotation,
                }
            } else {
                ChainMotion::Revolute {
                    axis: joint.axis,
                    offset: joint.offset,
                }
            };
            dofs.push(ChainDof {
                joint: link,
                name: joint.name.clone(),
                motion,
                lower: joint.lower,
                upper: joint.upper,
            });
        }
        Ok(JointChain::new(&self.skeleton, base_id, tip_id, dofs)?)
    }
}

/// Why [`Urdf::chain`] has no chain between two links.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrdfChainError {
    /// A link name the robot lacks.
    #[error("no link `{link}` in robot `{robot}`")]
    UnknownLink {
        /// The link name given.
        link: String,
        /// The robot's name.
        robot: String,
    },
    /// `base` is not an ancestor of `tip`.
    #[error("link `{base}` is not an ancestor of link `{tip}`")]
    NotAncestor {
        /// The base link.
        base: String,
        /// The tip link.
        tip: String,
    },
    /// The chain's joints do not make a valid chain.
    #[error(transparent)]
    Chain(#[from] ikarus_core::chain::ChainError),
}

fn at(line: u32, column: u32, message: String) -> UrdfError {
    UrdfError {
        line,
        column,
        message,
    }
}

/// Finds `<joint>` and `<link>` elements of the original text by name.
struct Locator<'a, 'input> {
    document: &'a roxmltree::Document<'input>,
    joints: HashMap<&'a str, roxmltree::Node<'a, 'input>>,
}

impl<'a, 'input> Locator<'a, 'input> {
    fn new(document: &'a roxmltree::Document<'input>) -> Self {
        let joints = document
            .root_element()
            .children()
            .filter(|n| n.has_tag_name("joint"))
            .filter_map(|n| Some((n.attribute("name")?, n)))
            .collect();
        Self { document, joints }
    }

    fn position(&self, node: roxmltree::Node<'_, '_>) -> (u32, u32) {
        let p = self.document.text_pos_at(node.range().start);
        (p.row, p.col)
    }

    fn joint(&self, name: &str) -> (u32, u32) {
        self.joints.get(name).map_or((1, 1), |n| self.position(*n))
    }

    /// Every `<joint type>` must be a URDF joint type.
    fn check_joint_types(&self) -> Result<(), UrdfError> {
        const TYPES: [&str; 7] = [
            "revolute",
            "continuous",
            "prismatic",
            "fixed",
            "floating",
            "planar",
            "spherical",
        ];
        for node in self.document.root_element().children() {
            if !node.has_tag_name("joint") {
                continue;
            }
            let (line, column) = self.position(node);
            match node.attribute("type") {
                Some(t) if TYPES.contains(&t) => {}
                Some(t) => {
                    return Err(at(
                        line,
                        column,
                        format!("joint type `{t}`: expected one of {}", TYPES.join(", ")),
                    ));
                }
                None => return Err(at(line, column, "<joint> without a type".into())),
            }
        }
        Ok(())
    }

    /// The first `<link>` or `<joint>` missing a required attribute or child.
    fn first_incomplete(&self) -> Option<(u32, u32)> {
        self.document.root_element().children().find_map(|n| {
            let incomplete = if n.has_tag_name("link") {
                n.attribute("name").is_none()
            } else if n.has_tag_name("joint") {
                let child_with = |tag: &str, attribute: &str| {
                    n.children()
                        .any(|c| c.has_tag_name(tag) && c.attribute(attribute).is_some())
                };
                n.attribute("name").is_none()
                    || !child_with("parent", "link")
                    || !child_with("child", "link")
                    || n.children().any(|c| {
                        c.has_tag_name("limit")
                            && ["lower", "upper", "effort", "velocity"].iter().any(|a| {
                                c.attribute(*a)
                                    .is_some_and(|v| v.trim().parse::<f64>().is_err())
                            })
                    })
                    || n.children().any(|c| {
                        (c.has_tag_name("origin") || c.has_tag_name("axis"))
                            && ["xyz", "rpy"].iter().any(|a| {
                                c.attribute(*a).is_some_and(|v| {
                                    let parts: Vec<_> = v.split_whitespace().collect();
                                    parts.len() != 3
                                        || parts.iter().any(|p| p.parse::<f64>().is_err())
                                })
                            })
                    })
            } else {
                false
            };
            incomplete.then(|| self.position(n))
        })
    }
}

fn convert_joint(
    joint: &urdf_rs::Joint,
    locator: &Locator<'_, '_>,
) -> Result<UrdfJoint, UrdfError> {
    let (line, column) = locator.joint(&joint.name);
    let fail = |message: String| at(line, column, format!("joint `{}`: {message}", joint.name));
    let kind = match joint.joint_type {
        urdf_rs::JointType::Revolute => UrdfJointKind::Revolute,
        urdf_rs::JointType::Continuous => UrdfJointKind::Continuous,
        urdf_rs::JointType::Prismatic => UrdfJointKind::Prismatic,
        urdf_rs::JointType::Fixed => UrdfJointKind::Fixed,
        urdf_rs::JointType::Floating => UrdfJointKind::Floating,
        urdf_rs::JointType::Planar | urdf_rs::JointType::Spherical => UrdfJointKind::Planar,
    };
    let xyz = DVec3::from_array(*joint.origin.xyz);
    let rpy = DVec3::from_array(*joint.origin.rpy);
    let axis = DVec3::from_array(*joint.axis.xyz);
    if !(xyz.is_finite() && rpy.is_finite() && axis.is_finite()) {
        return Err(fail("origin or axis is not finite".into()));
    }
    let rotation = DQuat::from_rotation_z(rpy.z)
        * DQuat::from_rotation_y(rpy.y)
        * DQuat::from_rotation_x(rpy.x);
    let origin = Transform::from_translation_rotation(xyz, rotation.normalize());
    let length = axis.length();
    if kind.is_actuated() && length <= 1e-12 {
        return Err(fail(
            "axis has zero length; expected a direction such as `0 0 1`".into(),
        ));
    }
    let axis = if length > 1e-12 {
        axis / length
    } else {
        DVec3::X
    };
    let (mut lower, mut upper) = (joint.limit.lower, joint.limit.upper);
    if kind == UrdfJointKind::Continuous {
        (lower, upper) = (f64::NEG_INFINITY, f64::INFINITY);
    } else if matches!(kind, UrdfJointKind::Revolute | UrdfJointKind::Prismatic)
        && !(lower.is_finite() && upper.is_finite() && lower <= upper)
    {
        return Err(fail(format!(
            "limit lower {lower} upper {upper}: expected finite numbers with lower <= upper"
        )));
    }
    let offset = if kind == UrdfJointKind::Revolute
        && upper - lower < std::f64::consts::TAU
        && (lower < -std::f64::consts::PI || upper > std::f64::consts::PI)
    {
        0.5 * (lower + upper)
    } else {
        0.0
    };
    Ok(UrdfJoint {
        name: joint.name.clone(),
        kind,
        parent: joint.parent.link.clone(),
        child: joint.child.link.clone(),
        origin,
        axis,
        lower,
        upper,
        offset,
        line,
    })
}

fn limit_of(joint: &UrdfJoint) -> JointLimit {
    let pi = std::f64::consts::PI;
    match joint.kind {
        UrdfJointKind::Revolute if joint.upper - joint.lower < std::f64::consts::TAU => {
            JointLimit::Hinge(HingeLimit {
                axis: joint.axis,
                min: (joint.lower - joint.offset).max(-pi),
                max: (joint.upper - joint.offset).min(pi),
            })
        }
        UrdfJointKind::Revolute | UrdfJointKind::Continuous => JointLimit::Hinge(HingeLimit {
            axis: joint.axis,
            min: -pi,
            max: pi,
        }),
        UrdfJointKind::Floating => JointLimit::Free,
        UrdfJointKind::Prismatic | UrdfJointKind::Fixed | UrdfJointKind::Planar => {
            JointLimit::Locked
        }
    }
}

fn build_skeleton(
    links: &[&str],
    joints: &[UrdfJoint],
    locator: &Locator<'_, '_>,
) -> Result<(Skeleton, Vec<Option<usize>>), UrdfError> {
    let mut parent_joint: HashMap<&str, usize> = HashMap::with_capacity(joints.len());
    for (i, joint) in joints.iter().enumerate() {
        let (line, column) = locator.joint(&joint.name);
        for link in [&joint.parent, &joint.child] {
            if !links.contains(&link.as_str()) {
                return Err(at(
                    line,
                    column,
                    format!(
                        "joint `{}` names link `{link}`, which is not defined",
                        joint.name
                    ),
                ));
            }
        }
        if let Some(&other) = parent_joint.get(joint.child.as_str()) {
            return Err(at(
                line,
                column,
                format!(
                    "link `{}` is the child of joints `{}` and `{}`; a link has one parent",
                    joint.child, joints[other].name, joint.name
                ),
            ));
        }
        parent_joint.insert(joint.child.as_str(), i);
    }
    let mut builder = SkeletonBuilder::new();
    for &link in links {
        let raw = match parent_joint.get(link) {
            Some(&i) => {
                let joint = &joints[i];
                let mut rest = joint.origin;
                rest.rotation =
                    (rest.rotation * DQuat::from_axis_angle(joint.axis, joint.offset)).normalize();
                RawJoint {
                    name: link.to_owned(),
                    parent: Some(joint.parent.clone()),
                    rest,
                    limit: limit_of(joint),
                }
            }
            None => RawJoint {
                name: link.to_owned(),
                parent: None,
                rest: Transform::IDENTITY,
                limit: JointLimit::Free,
            },
        };
        builder.push(raw);
    }
    let skeleton = builder
        .build()
        .map_err(|e| at(1, 1, format!("the links do not form a tree: {e}")))?;
    let joint_of = skeleton
        .names()
        .iter()
        .map(|name| parent_joint.get(name.as_str()).copied())
        .collect();
    Ok((skeleton, joint_of))
}
