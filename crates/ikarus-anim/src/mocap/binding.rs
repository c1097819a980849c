//! A keypoint layout bound to one skeleton: where each point sits (an anchor: a joint and an
//! offset in its frame) and, per joint, the points its rotation is fitted to.
//!
//! A joint *owns* a keypoint when the point sits at its origin. Joint `j`'s rotation is fitted
//! to its *frontier*: the sites fixed to `j` itself and the points below it up to and including
//! the first owning joint on each branch, with every joint in between at rest (a rigid
//! segment). When the frontier is reached through a chain of `n` joints without points of their
//! own (spine segments), each joint of the chain turns `1/n` of the way and the next one fits
//! again from where it now stands, so the bend is spread along the chain.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, ModelPose, Skeleton, fk};

use super::layout::Layout;

/// Where a keypoint sits on the skeleton.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Anchor {
    /// The joint the point is fixed to.
    pub joint: JointId,
    /// The point in the joint's frame (zero: the joint's origin).
    pub offset: DVec3,
}

/// One point of a joint's frontier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FrontierPoint {
    /// The keypoint.
    pub k: u32,
    /// The point in the joint's frame before its rotation (its scale applied), with every joint
    /// between at rest.
    pub from: DVec3,
    /// Weight in the fit (1 for points of a direct child or the joint itself, less for points
    /// further down).
    pub weight: f64,
}

/// Twist of a limb's upper bone from the plane of its three points (shoulder, elbow, wrist or
/// hip, knee, ankle).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BendCue {
    /// The elbow's (knee's) keypoint.
    pub middle: u32,
    /// The wrist's (ankle's) keypoint.
    pub end: u32,
    /// The rest bend axis in the joint's frame before its rotation (unit).
    pub axis: DVec3,
}

/// What the solver does at one joint.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct JointPlan {
    pub frontier: Vec<FrontierPoint>,
    /// The keypoint at the joint's origin, if any.
    pub origin: Option<u32>,
    /// Fraction of the rigid fit this joint takes (`1/n` along a chain without points).
    pub share: f64,
    pub cue: Option<BendCue>,
    /// The joint moves to its own point by translation (the only child of a root that owns a
    /// point: a placement node above the hips, as in many game exports).
    pub translate: bool,
}

/// A layout bound to a skeleton.
#[derive(Clone, Debug)]
pub struct Binding {
    /// The layout's points, then one virtual point per [`VirtualPoint`].
    anchors: Vec<Option<Anchor>>,
    count: usize,
    pub(crate) plans: Vec<JointPlan>,
    pub(crate) virtuals: Vec<VirtualPoint>,
}

/// The origin of a joint without a point of its own but with three or more sites (a head seen
/// by its nose, eyes and ears), placed each frame by the best rigid fit of the sites, so the
/// chain above it (the neck) can aim at it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VirtualPoint {
    /// The sites: keypoint and offset in the joint's frame.
    pub sites: Vec<(u32, DVec3)>,
    /// The joint's rest rotation in model space (the fit's reference).
    pub reference: DQuat,
}

/// Body axes of a skeleton at rest (model space) and its size relative to the built-in
/// humanoid.
#[derive(Clone, Copy, Debug)]
struct Body {
    left: DVec3,
    up: DVec3,
    forward: DVec3,
    scale: f64,
}

fn body(skeleton: &Skeleton, map: &HumanoidMap, rest: &ModelPose) -> Body {
    let at = |b: HumanoidBone| map.joint(b).map(|j| rest.position(j));
    let up = match (at(HumanoidBone::Hips), at(HumanoidBone::Head)) {
        (Some(h), Some(head)) if (head - h).length() > 0.0 => (head - h).normalize(),
        _ => DVec3::Y,
    };
    let side = [
        (HumanoidBone::LeftUpperLeg, HumanoidBone::RightUpperLeg),
        (HumanoidBone::LeftUpperArm, HumanoidBone::RightUpperArm),
    ]
    .iter()
    .find_map(|&(l, r)| Some(at(l)? - at(r)?))
    .unwrap_or(DVec3::X);
    let left = (side - up * side.dot(up))
        .try_normalize()
        .unwrap_or(DVec3::X);
    let forward = left.cross(up);
    let size = |m: &HumanoidMap, pose: &ModelPose| {
        let p = |b| m.joint(b).map(|j| pose.position(j));
        match (
            p(HumanoidBone::Hips),
            p(HumanoidBone::Head),
            p(HumanoidBone::LeftFoot),
        ) {
            (Some(h), Some(head), Some(foot)) => (head - h).length() + (h - foot).length(),
            _ => f64::NAN,
        }
    };
    let reference = builtin_humanoid();
    let mut reference_rest = ModelPose::new(&reference);
    fk::forward_kinematics(&reference, &reference.rest_pose(), &mut reference_rest);
    let scale = size(map, rest) / size(&HumanoidMap::recognise(&reference), &reference_rest);
    let _ = skeleton;
    Body {
        left,
        up,
        forward,
        scale: if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        },
    }
}

impl Binding {
    /// Binds `layout` to `skeleton` through its humanoid `map` (unused for
    /// [`Layout::Skeleton`]). Points with `available[k] == false` (never seen in the clip) are
    /// left out; so are points whose bones the skeleton lacks and a second point at a joint that
    /// already has one.
    pub fn new(
        skeleton: &Skeleton,
        map: &HumanoidMap,
        layout: &Layout,
        available: &[bool],
    ) -> Self {
        let mut rest = ModelPose::new(skeleton);
        fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut rest);
        let body = body(skeleton, map, &rest);
        let n = layout.len();
        let mut anchors: Vec<Option<Anchor>> = vec![None; n];
        let mut owner: Vec<Option<u32>> = vec![None; skeleton.len()];
        for (k, slot) in anchors.iter_mut().enumerate() {
            if !available.get(k).copied().unwrap_or(false) {
                continue;
            }
            let anchor = match layout {
                Layout::Skeleton(names) => skeleton.joint(&names[k]).map(|joint| Anchor {
                    joint,
                    offset: DVec3::ZERO,
                }),
                other => other.definitions()[k]
                    .candidates
                    .iter()
                    .find_map(|&(b, o)| {
                        let joint = map.joint(b)?;
                        let model =
                            body.scale * (o[0] * body.left + o[1] * body.up + o[2] * body.forward);
                        let rotation = rest.rotation(joint);
                        let linear = rest.transforms()[joint.index()].matrix3;
                        let offset = if model == DVec3::ZERO {
                            DVec3::ZERO
                        } else {
                            let local = linear.inverse() * model;
                            if local.is_finite() {
                                local
                            } else {
                                rotation.inverse() * model
                            }
                        };
                        Some(Anchor { joint, offset })
                    }),
            };
            if let Some(a) = anchor {
                if a.offset == DVec3::ZERO {
                    if owner[a.joint.index()].is_some() {
                        continue;
                    }
                    owner[a.joint.index()] = Some(k as u32);
                }
                *slot = Some(a);
            }
        }
        let mut virtuals = Vec::new();
        for j in skeleton.joints() {
            let sites: Vec<(u32, DVec3)> = anchors
                .iter()
                .enumerate()
                .filter_map(|(k, a)| a.filter(|a| a.joint == j).map(|a| (k as u32, a.offset)))
                .collect();
            if owner[j.index()].is_none() && sites.len() >= 3 {
                owner[j.index()] = Some((n + virtuals.len()) as u32);
                virtuals.push(VirtualPoint {
                    sites,
                    reference: rest.rotation(j),
                });
            }
        }
        for v in &virtuals {
            let joint = anchors[v.sites[0].0 as usize].expect("a site").joint;
            anchors.push(Some(Anchor {
                joint,
                offset: DVec3::ZERO,
            }));
        }
        let mut plans = vec![JointPlan::default(); skeleton.len()];
        for (j, plan) in plans.iter_mut().enumerate() {
            plan.origin = owner[j];
        }
        add_frontiers(skeleton, &anchors, &owner, &mut plans);
        place_nodes(skeleton, &owner, &mut plans);
        set_shares(skeleton, &anchors, &owner, &mut plans);
        if !matches!(layout, Layout::Skeleton(_)) || !map.is_empty() {
            add_cues(map, &rest, skeleton, &body, &owner, &mut plans);
        }
        Self {
            anchors,
            count: n,
            plans,
            virtuals,
        }
    }

    /// The anchor of keypoint `k` (`None`: the point is not used).
    pub fn anchor(&self, k: usize) -> Option<Anchor> {
        self.anchors[..self.count].get(k).copied().flatten()
    }

    /// Number of keypoints of the layout.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the layout has no points.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Keypoints used (anchored).
    pub fn used(&self) -> usize {
        self.anchors[..self.count].iter().flatten().count()
    }

    /// The keypoints of a posture: each anchored point where forward kinematics puts it (model
    /// space), NaN for points that are not used. `out` must hold [`len`](Self::len) points.
    pub fn keypoints(&self, model: &ModelPose, out: &mut [DVec3]) {
        for (o, anchor) in out.iter_mut().zip(&self.anchors[..self.count]) {
            *o = anchor.map_or(DVec3::NAN, |a| {
                model.transforms()[a.joint.index()].transform_point3(a.offset)
            });
        }
    }

    /// True when a root of `skeleton` is placed by the points (it owns a point or has a
    /// frontier). Other roots have no point below them (an MMD model's IK goal bones, loose
    /// props) and keep their pose.
    pub fn reaches_root(&self, skeleton: &Skeleton) -> bool {
        skeleton.roots().any(|r| {
            let plan = &self.plans[r.index()];
            plan.origin.is_some() || !plan.frontier.is_empty()
        })
    }
}

/// Puts every anchored point into the frontier of its own joint (a site) and of each ancestor
/// up to and including the first owning one.
fn add_frontiers(
    skeleton: &Skeleton,
    anchors: &[Option<Anchor>],
    owner: &[Option<u32>],
    plans: &mut [JointPlan],
) {
    for (k, anchor) in anchors.iter().enumerate() {
        let Some(a) = anchor else { continue };
        // Walk up from the anchor: the point is in the frontier of its own joint (a site) and
        // of each ancestor up to and including the first owning one.
        let mut from = a.offset;
        let mut depth = 0.0;
        let mut joint = a.joint;
        if a.offset != DVec3::ZERO {
            plans[joint.index()].frontier.push(FrontierPoint {
                k: k as u32,
                from: skeleton.rest(joint).scale * from,
                weight: 1.0,
            });
            if owner[joint.index()].is_some() {
                continue;
            }
        }
        while let Some(parent) = skeleton.parent(joint) {
            from = skeleton.rest(joint).transform_point(from);
            depth += 1.0;
            plans[parent.index()].frontier.push(FrontierPoint {
                k: k as u32,
                from: skeleton.rest(parent).scale * from,
                weight: 1.0 / depth,
            });
            if owner[parent.index()].is_some() {
                break;
            }
            joint = parent;
        }
    }
}

/// A root with one child, both owning points: the root stays at its rest rotation on its point
/// and the child is translated onto its own.
fn place_nodes(skeleton: &Skeleton, owner: &[Option<u32>], plans: &mut [JointPlan]) {
    // A root with one child, both owning points: the root stays at rest rotation on its
    // point and the child is translated onto its own.
    for r in skeleton.roots() {
        let mut children = skeleton.children(r);
        if let (Some(c), None) = (children.next(), children.next())
            && owner[r.index()].is_some()
            && owner[c.index()].is_some()
        {
            plans[c.index()].translate = true;
            let k = owner[c.index()];
            plans[r.index()].frontier.retain(|f| Some(f.k) != k);
        }
    }
}

/// Shares: a joint whose whole frontier goes through one child without a point of its own
/// continues that child's chain.
fn set_shares(
    skeleton: &Skeleton,
    anchors: &[Option<Anchor>],
    owner: &[Option<u32>],
    plans: &mut [JointPlan],
) {
    // Shares: a joint whose whole frontier goes through one child without a point of its
    // own continues that child's chain.
    let mut chain = vec![1.0_f64; skeleton.len()];
    for j in (0..skeleton.len()).rev().map(JointId::from_index) {
        let plan = &plans[j.index()];
        if plan.frontier.is_empty() {
            continue;
        }
        let through = |f: &FrontierPoint| {
            let a = anchors[f.k as usize]
                .expect("frontier points are anchored")
                .joint;
            skeleton
                .children(j)
                .find(|&c| skeleton.subtree(c).contains(&a.index()))
        };
        let first = through(&plan.frontier[0]);
        if let Some(c) = first
            && plan.frontier.iter().all(|f| through(f) == Some(c))
            && owner[c.index()].is_none()
            && !plans[c.index()].frontier.is_empty()
        {
            chain[j.index()] = 1.0 + chain[c.index()];
        }
    }
    for (plan, n) in plans.iter_mut().zip(&chain) {
        plan.share = 1.0 / n;
    }
}

/// Bend cues of the limbs' upper bones.
fn add_cues(
    map: &HumanoidMap,
    rest: &ModelPose,
    skeleton: &Skeleton,
    body: &Body,
    owner: &[Option<u32>],
    plans: &mut [JointPlan],
) {
    // Bend cues of the limbs' upper bones.
    let limbs = [
        (
            HumanoidBone::LeftUpperArm,
            HumanoidBone::LeftLowerArm,
            HumanoidBone::LeftHand,
            body.forward,
        ),
        (
            HumanoidBone::RightUpperArm,
            HumanoidBone::RightLowerArm,
            HumanoidBone::RightHand,
            body.forward,
        ),
        (
            HumanoidBone::LeftUpperLeg,
            HumanoidBone::LeftLowerLeg,
            HumanoidBone::LeftFoot,
            -body.forward,
        ),
        (
            HumanoidBone::RightUpperLeg,
            HumanoidBone::RightLowerLeg,
            HumanoidBone::RightFoot,
            -body.forward,
        ),
    ];
    for (upper, middle, end, bend) in limbs {
        let (Some(u), Some(m), Some(e)) = (map.joint(upper), map.joint(middle), map.joint(end))
        else {
            continue;
        };
        let (Some(km), Some(ke)) = (owner[m.index()], owner[e.index()]) else {
            continue;
        };
        let plan = &plans[u.index()];
        if owner[u.index()].is_none() || plan.frontier.len() != 1 || plan.frontier[0].k != km {
            continue;
        }
        let axis_model = (rest.position(m) - rest.position(u)).cross(bend);
        let local = rest.rotation(u).inverse() * axis_model;
        if let Some(axis) = (skeleton.rest(u).scale * local).try_normalize() {
            plans[u.index()].cue = Some(BendCue {
                middle: km,
                end: ke,
                axis,
            });
        }
    }
}

/// The rotation `q` or `−q`, whichever is nearer `reference` (same hemisphere).
pub(crate) fn near(q: DQuat, reference: DQuat) -> DQuat {
    if q.dot(reference) < 0.0 { -q } else { q }
}
