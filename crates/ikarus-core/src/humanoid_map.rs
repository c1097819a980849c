//! The humanoid bone map: the one place that knows which joint is "the left hand" in every
//! naming scheme.
//!
//! [`HumanoidBone`] is the canonical list (VRM 1.0's bone names). [`HumanoidMap`] ties bones to
//! the joints of one [`Skeleton`]; it comes from a file's own map (VRM), from automatic
//! recognition of joint names ([`HumanoidMap::recognise`]) or from explicit pairs (a JSON bone
//! map in `ikarus-formats`), and [`HumanoidMap::with_overrides`] lets explicit pairs win over
//! whatever was recognised.
//!
//! Recognition tries every known [`NamingScheme`] on the whole skeleton and keeps the one that
//! finds the most required bones (then the most bones), because the same name means different
//! bones in different schemes: `LeftShoulder` is the clavicle for Mixamo and the upper arm in
//! Biovision files that also have `LeftCollar`.

use crate::{JointId, Skeleton};

macro_rules! bones {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// A humanoid bone, named as in VRM 1.0 (`VRMC_vrm` `humanoid.humanBones`).
        ///
        /// Left is the character's left (+X when it faces +Z).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)]
        pub enum HumanoidBone {
            $($variant),*
        }

        impl HumanoidBone {
            /// Every bone, torso first, in the order of VRM 1.0's specification table.
            pub const ALL: &'static [HumanoidBone] = &[$(HumanoidBone::$variant),*];

            /// The VRM 1.0 name (`leftUpperArm`).
            pub const fn vrm_name(self) -> &'static str {
                match self {
                    $(HumanoidBone::$variant => $name),*
                }
            }

            /// The bone whose VRM 1.0 name is `name` (exact, case-sensitive).
            pub fn from_vrm_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(HumanoidBone::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

bones! {
    Hips = "hips", Spine = "spine", Chest = "chest", UpperChest = "upperChest", Neck = "neck",
    Head = "head", LeftEye = "leftEye", RightEye = "rightEye", Jaw = "jaw",
    LeftUpperLeg = "leftUpperLeg", LeftLowerLeg = "leftLowerLeg", LeftFoot = "leftFoot",
    LeftToes = "leftToes", RightUpperLeg = "rightUpperLeg", RightLowerLeg = "rightLowerLeg",
    RightFoot = "rightFoot", RightToes = "rightToes",
    LeftShoulder = "leftShoulder", LeftUpperArm = "leftUpperArm", LeftLowerArm = "leftLowerArm",
    LeftHand = "leftHand", RightShoulder = "rightShoulder", RightUpperArm = "rightUpperArm",
    RightLowerArm = "rightLowerArm", RightHand = "rightHand",
    LeftThumbMetacarpal = "leftThumbMetacarpal", LeftThumbProximal = "leftThumbProximal",
    LeftThumbDistal = "leftThumbDistal", LeftIndexProximal = "leftIndexProximal",
    LeftIndexIntermediate = "leftIndexIntermediate", LeftIndexDistal = "leftIndexDistal",
    LeftMiddleProximal = "leftMiddleProximal", LeftMiddleIntermediate = "leftMiddleIntermediate",
    LeftMiddleDistal = "leftMiddleDistal", LeftRingProximal = "leftRingProximal",
    LeftRingIntermediate = "leftRingIntermediate", LeftRingDistal = "leftRingDistal",
    LeftLittleProximal = "leftLittleProximal", LeftLittleIntermediate = "leftLittleIntermediate",
    LeftLittleDistal = "leftLittleDistal",
    RightThumbMetacarpal = "rightThumbMetacarpal", RightThumbProximal = "rightThumbProximal",
    RightThumbDistal = "rightThumbDistal", RightIndexProximal = "rightIndexProximal",
    RightIndexIntermediate = "rightIndexIntermediate", RightIndexDistal = "rightIndexDistal",
    RightMiddleProximal = "rightMiddleProximal",
    RightMiddleIntermediate = "rightMiddleIntermediate", RightMiddleDistal = "rightMiddleDistal",
    RightRingProximal = "rightRingProximal", RightRingIntermediate = "rightRingIntermediate",
    RightRingDistal = "rightRingDistal", RightLittleProximal = "rightLittleProximal",
    RightLittleIntermediate = "rightLittleIntermediate", RightLittleDistal = "rightLittleDistal",
}

impl HumanoidBone {
    /// The bones VRM 1.0 requires: hips, spine, head and both arms and legs down to hands and feet.
    pub const REQUIRED: &'static [HumanoidBone] = &[
        HumanoidBone::Hips,
        HumanoidBone::Spine,
        HumanoidBone::Head,
        HumanoidBone::LeftUpperArm,
        HumanoidBone::LeftLowerArm,
        HumanoidBone::LeftHand,
        HumanoidBone::RightUpperArm,
        HumanoidBone::RightLowerArm,
        HumanoidBone::RightHand,
        HumanoidBone::LeftUpperLeg,
        HumanoidBone::LeftLowerLeg,
        HumanoidBone::LeftFoot,
        HumanoidBone::RightUpperLeg,
        HumanoidBone::RightLowerLeg,
        HumanoidBone::RightFoot,
    ];

    /// The legs, left then right: upper leg, lower leg, foot.
    pub const LEGS: [[HumanoidBone; 3]; 2] = [
        [Self::LeftUpperLeg, Self::LeftLowerLeg, Self::LeftFoot],
        [Self::RightUpperLeg, Self::RightLowerLeg, Self::RightFoot],
    ];

    /// The arms, left then right: upper arm, lower arm, hand.
    pub const ARMS: [[HumanoidBone; 3]; 2] = [
        [Self::LeftUpperArm, Self::LeftLowerArm, Self::LeftHand],
        [Self::RightUpperArm, Self::RightLowerArm, Self::RightHand],
    ];

    /// The ends a whole body is usually posed by: hips, head, hands and feet (a tracker set,
    /// a full-body solve's effectors).
    pub const BODY_ENDS: [HumanoidBone; 6] = [
        HumanoidBone::Hips,
        HumanoidBone::Head,
        HumanoidBone::LeftHand,
        HumanoidBone::RightHand,
        HumanoidBone::LeftFoot,
        HumanoidBone::RightFoot,
    ];

    /// The body as pose-estimation papers measure it (the 22 joints of AMASS's body): torso,
    /// neck, head, clavicles, arms, legs, feet and toes; no fingers, eyes or jaw. What an
    /// all-joint MPJPE of a humanoid averages over, as far as a skeleton maps these bones.
    pub const BODY: [HumanoidBone; 22] = [
        HumanoidBone::Hips,
        HumanoidBone::Spine,
        HumanoidBone::Chest,
        HumanoidBone::UpperChest,
        HumanoidBone::Neck,
        HumanoidBone::Head,
        HumanoidBone::LeftShoulder,
        HumanoidBone::LeftUpperArm,
        HumanoidBone::LeftLowerArm,
        HumanoidBone::LeftHand,
        HumanoidBone::RightShoulder,
        HumanoidBone::RightUpperArm,
        HumanoidBone::RightLowerArm,
        HumanoidBone::RightHand,
        HumanoidBone::LeftUpperLeg,
        HumanoidBone::LeftLowerLeg,
        HumanoidBone::LeftFoot,
        HumanoidBone::LeftToes,
        HumanoidBone::RightUpperLeg,
        HumanoidBone::RightLowerLeg,
        HumanoidBone::RightFoot,
        HumanoidBone::RightToes,
    ];

    /// The toes, left then right.
    pub const TOES: [HumanoidBone; 2] = [HumanoidBone::LeftToes, HumanoidBone::RightToes];

    /// True for the bones in [`REQUIRED`](Self::REQUIRED).
    pub fn is_required(self) -> bool {
        Self::REQUIRED.contains(&self)
    }

    /// The bone's index in [`ALL`](Self::ALL).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The bone named `name` in VRM 0.x (`VRM` extension): VRM 1.0's names, except that 0.x's
    /// thumb is `Proximal, Intermediate, Distal` where 1.0 says `Metacarpal, Proximal, Distal`.
    pub fn from_vrm0_name(name: &str) -> Option<Self> {
        let renamed = match name {
            "leftThumbProximal" => "leftThumbMetacarpal",
            "leftThumbIntermediate" => "leftThumbProximal",
            "rightThumbProximal" => "rightThumbMetacarpal",
            "rightThumbIntermediate" => "rightThumbProximal",
            other => other,
        };
        Self::from_vrm_name(renamed)
    }

    /// The VRM 0.x name (see [`from_vrm0_name`](Self::from_vrm0_name)).
    pub fn vrm0_name(self) -> &'static str {
        match self {
            HumanoidBone::LeftThumbMetacarpal => "leftThumbProximal",
            HumanoidBone::LeftThumbProximal => "leftThumbIntermediate",
            HumanoidBone::RightThumbMetacarpal => "rightThumbProximal",
            HumanoidBone::RightThumbProximal => "rightThumbIntermediate",
            other => other.vrm_name(),
        }
    }
}

/// A family of joint names that [`HumanoidMap::recognise`] understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamingScheme {
    /// VRM 1.0 / Unity Humanoid names in any case and with any separators (`leftUpperArm`,
    /// `Left Upper Arm`, `UpperArm_L`, `upper_arm.L`), which also covers ikarus's built-in humanoid.
    VrmUnity,
    /// Mixamo (`mixamorig:LeftForeArm`), `MotionBuilder` `HumanIK` (`Character1_LeftArm`) and the CMU
    /// BVH conversions (`LeftUpLeg`, `LeftLeg`, `Spine1`).
    MixamoHumanIk,
    /// Older Biovision names (`LeftCollar`, `LeftShoulder` = upper arm, `LeftElbow`, `LeftHip`, `LeftKnee`).
    Biovision,
    /// Descriptive rig names (Blender and game rigs: `thigh.l`, `shin.l`, `Left knee`,
    /// `pelvis`, `tummy`, `forearm`, `IndexFinger1_L`).
    Descriptive,
    /// `MikuMikuDance`'s Japanese bone names (`センター`, `上半身`, `左腕`, `左ひじ`, `左手首`, `左足`, `左ひざ`, `左足首`).
    Mmd,
    /// A file's own humanoid map (VRM) or explicit pairs.
    Explicit,
}

impl NamingScheme {
    /// The schemes recognition tries, in the order that breaks ties.
    pub const RECOGNISED: &'static [NamingScheme] = &[
        NamingScheme::VrmUnity,
        NamingScheme::MixamoHumanIk,
        NamingScheme::Biovision,
        NamingScheme::Descriptive,
        NamingScheme::Mmd,
    ];
}

/// Humanoid bones mapped to the joints of one skeleton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HumanoidMap {
    joints: Vec<Option<JointId>>,
    scheme: NamingScheme,
}

/// What is wrong with an explicit bone map.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HumanoidMapError {
    /// A bone name is not one of VRM 1.0's. Use the names of [`HumanoidBone::vrm_name`].
    #[error("`{name}` is not a humanoid bone name (expected VRM 1.0 names such as `leftHand`)")]
    UnknownBone {
        /// The rejected name.
        name: String,
    },
    /// A joint named in the map is not in the skeleton.
    #[error("bone `{bone}` names joint `{joint}`, which the skeleton does not have")]
    UnknownJoint {
        /// The bone's VRM name.
        bone: &'static str,
        /// The missing joint name.
        joint: String,
    },
}

impl HumanoidMap {
    /// A map with no bones.
    pub fn empty(scheme: NamingScheme) -> Self {
        Self {
            joints: vec![None; HumanoidBone::ALL.len()],
            scheme,
        }
    }

    /// Recognises the bones from the skeleton's joint names: every [`NamingScheme::RECOGNISED`]
    /// scheme is tried and the one finding the most required bones (then the most bones) wins.
    /// When two joints give the same bone, the first in joint order (nearer the root) keeps it.
    pub fn recognise(skeleton: &Skeleton) -> Self {
        let parsed: Vec<ParsedName> = skeleton.names().iter().map(|n| parse(n)).collect();
        let mut best = Self::empty(NamingScheme::VrmUnity);
        let mut best_score = (0, 0);
        for &scheme in NamingScheme::RECOGNISED {
            let mut map = Self::empty(scheme);
            for (index, name) in parsed.iter().enumerate() {
                if let Some(bone) = scheme_bone(scheme, name) {
                    let slot = &mut map.joints[bone.index()];
                    if slot.is_none() {
                        *slot = Some(JointId::from_index(index));
                    }
                }
            }
            let score = (map.missing_required().count(), map.len());
            let score = (HumanoidBone::REQUIRED.len() - score.0, score.1);
            if score > best_score {
                best_score = score;
                best = map;
            }
        }
        best
    }

    /// A map from explicit `(bone, joint name)` pairs.
    ///
    /// # Errors
    /// [`HumanoidMapError::UnknownJoint`] when a joint name is not in the skeleton.
    pub fn from_pairs<'a>(
        skeleton: &Skeleton,
        pairs: impl IntoIterator<Item = (HumanoidBone, &'a str)>,
    ) -> Result<Self, HumanoidMapError> {
        Self::empty(NamingScheme::Explicit).with_overrides(skeleton, pairs)
    }

    /// This map with the given pairs replacing whatever it had for those bones.
    ///
    /// # Errors
    /// [`HumanoidMapError::UnknownJoint`] when a joint name is not in the skeleton.
    pub fn with_overrides<'a>(
        mut self,
        skeleton: &Skeleton,
        pairs: impl IntoIterator<Item = (HumanoidBone, &'a str)>,
    ) -> Result<Self, HumanoidMapError> {
        for (bone, joint) in pairs {
            let id = skeleton
                .joint(joint)
                .ok_or_else(|| HumanoidMapError::UnknownJoint {
                    bone: bone.vrm_name(),
                    joint: joint.to_owned(),
                })?;
            self.joints[bone.index()] = Some(id);
        }
        Ok(self)
    }

    /// Sets one bone (or clears it with `None`).
    pub fn set(&mut self, bone: HumanoidBone, joint: Option<JointId>) {
        self.joints[bone.index()] = joint;
    }

    /// The scheme the map came from.
    pub fn scheme(&self) -> NamingScheme {
        self.scheme
    }

    /// The joint of `bone`, if mapped.
    pub fn joint(&self, bone: HumanoidBone) -> Option<JointId> {
        self.joints[bone.index()]
    }

    /// The bone mapped to `joint`, if any.
    pub fn bone_of(&self, joint: JointId) -> Option<HumanoidBone> {
        self.iter().find(|&(_, j)| j == joint).map(|(b, _)| b)
    }

    /// The mapped bones with their joints, in [`HumanoidBone::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (HumanoidBone, JointId)> + '_ {
        HumanoidBone::ALL
            .iter()
            .zip(&self.joints)
            .filter_map(|(&b, j)| j.map(|j| (b, j)))
    }

    /// Number of mapped bones.
    pub fn len(&self) -> usize {
        self.joints.iter().flatten().count()
    }

    /// True when no bone is mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The required bones ([`HumanoidBone::REQUIRED`]) that are not mapped.
    pub fn missing_required(&self) -> impl Iterator<Item = HumanoidBone> + '_ {
        HumanoidBone::REQUIRED
            .iter()
            .copied()
            .filter(|b| self.joint(*b).is_none())
    }

    /// True when every required bone is mapped.
    pub fn is_complete(&self) -> bool {
        self.missing_required().next().is_none()
    }
}

/// The normalised humanoid that VRM animation speaks: one joint per mapped bone (named by its
/// VRM 1.0 name), parented to the nearest mapped ancestor, every rest rotation identity and
/// every rest translation the bone's model-space offset from its parent bone at the source's
/// rest pose. A rotation `q` on a normalised bone is the bone's change of model-space
/// orientation relative to its parent bone's change, so a pose means the same on every avatar
/// whatever its rest rotations are.
///
/// Conversions go through model space: `to_normalized` reads FK of the source pose, and
/// `from_normalized` writes the source's local rotations so that each mapped joint's
/// model-space rotation is `normalised_model_rotation · source_rest_model_rotation`;
/// joints that are not mapped keep their rest transform. The root bone (normally the hips)
/// carries its model-space position as translation.
#[derive(Clone, Debug)]
pub struct NormalizedHumanoid {
    skeleton: Skeleton,
    bones: Vec<HumanoidBone>,
    source_joints: Vec<JointId>,
    source_rest_model: Vec<glam::DAffine3>,
}

impl NormalizedHumanoid {
    /// The normalised view of `source` through `map`; `None` when the map is empty.
    pub fn new(source: &Skeleton, map: &HumanoidMap) -> Option<Self> {
        let mut rest = crate::ModelPose::new(source);
        crate::fk::forward_kinematics(source, &source.rest_pose(), &mut rest);
        let mut mapped: Vec<(JointId, HumanoidBone)> = map.iter().map(|(b, j)| (j, b)).collect();
        mapped.sort_by_key(|&(j, _)| j);
        mapped.dedup_by_key(|&mut (j, _)| j);
        let mut builder = crate::SkeletonBuilder::new();
        for &(joint, bone) in &mapped {
            let parent = source
                .path_to_root(joint)
                .skip(1)
                .find_map(|a| mapped.iter().find(|&&(j, _)| j == a));
            let offset = match parent {
                Some(&(p, _)) => rest.position(joint) - rest.position(p),
                None => rest.position(joint),
            };
            builder.joint(
                bone.vrm_name(),
                parent.map(|&(_, b)| b.vrm_name()),
                crate::Transform::from_translation(offset),
            );
        }
        let skeleton = builder.build().ok()?;
        let bones: Vec<HumanoidBone> = skeleton
            .names()
            .iter()
            .filter_map(|n| HumanoidBone::from_vrm_name(n))
            .collect();
        let source_joints: Vec<JointId> = bones
            .iter()
            .filter_map(|&b| mapped.iter().find(|&&(_, mb)| mb == b).map(|&(j, _)| j))
            .collect();
        Some(Self {
            skeleton,
            bones,
            source_joints,
            source_rest_model: rest.transforms().to_vec(),
        })
    }

    /// The normalised skeleton (bones named by VRM 1.0 names, identity rest rotations).
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The bone of each normalised joint.
    pub fn bones(&self) -> &[HumanoidBone] {
        &self.bones
    }

    /// The source joint of each normalised joint.
    pub fn source_joints(&self) -> &[JointId] {
        &self.source_joints
    }

    /// The normalised pose of a source pose (`source` must be the skeleton this view was made
    /// from; `out` sized for [`skeleton`](Self::skeleton)).
    pub fn to_normalized(
        &self,
        source: &Skeleton,
        pose: &crate::LocalPose,
        out: &mut crate::LocalPose,
    ) {
        let mut model = crate::ModelPose::new(source);
        crate::fk::forward_kinematics(source, pose, &mut model);
        let delta = |j: JointId| {
            model.rotation(j) * rotation_of(&self.source_rest_model[j.index()]).conjugate()
        };
        for (k, &joint) in self.source_joints.iter().enumerate() {
            let id = JointId::from_index(k);
            let rotation = match self.skeleton.parent(id) {
                Some(p) => delta(self.source_joints[p.index()]).conjugate() * delta(joint),
                None => delta(joint),
            };
            out[id] = match self.skeleton.parent(id) {
                Some(_) => *self.skeleton.rest(id),
                None => crate::Transform::from_translation(model.position(joint)),
            }
            .with_rotation(rotation.normalize());
        }
    }

    /// The source pose of a normalised pose: mapped joints turned, the root bone placed,
    /// every other joint at rest (see the type's docs).
    pub fn from_normalized(
        &self,
        source: &Skeleton,
        normalized: &crate::LocalPose,
        out: &mut crate::LocalPose,
    ) {
        let mut n_model = crate::ModelPose::new(&self.skeleton);
        crate::fk::forward_kinematics(&self.skeleton, normalized, &mut n_model);
        out.transforms_mut()
            .copy_from_slice(source.rest_transforms());
        let mut model: Vec<glam::DAffine3> = Vec::with_capacity(source.len());
        for j in source.joints() {
            let parent_model = source
                .parent(j)
                .map_or(glam::DAffine3::IDENTITY, |p| model[p.index()]);
            if let Some(k) = self.source_joints.iter().position(|&s| s == j) {
                let id = JointId::from_index(k);
                let wanted = n_model.rotation(id) * rotation_of(&self.source_rest_model[j.index()]);
                let local = &mut out[j];
                local.rotation = (rotation_of(&parent_model).conjugate() * wanted).normalize();
                if self.skeleton.parent(id).is_none() {
                    local.translation = parent_model
                        .inverse()
                        .transform_point3(n_model.position(id));
                }
            }
            model.push(parent_model * out[j].to_affine());
        }
    }
}

/// The rotation part of an affine transform (scale removed).
fn rotation_of(affine: &glam::DAffine3) -> glam::DQuat {
    let (_, rotation, _) = affine.to_scale_rotation_translation();
    rotation
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// A joint name reduced to its side and a lowercase core without separators or namespaces.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ParsedName {
    side: Option<Side>,
    core: String,
}

const PREFIXES: &[&str] = &[
    "character1_",
    "bip01_",
    "bip001_",
    "j_bip_",
    "b_",
    "def-",
    "def_",
];

fn parse(name: &str) -> ParsedName {
    // Namespaces: `mixamorig:Hips`, `rig|Hips`.
    let mut name = name.rsplit([':', '|']).next().unwrap_or(name).trim();
    let lower = name.to_lowercase();
    for prefix in PREFIXES {
        if lower.starts_with(prefix) && name.len() > prefix.len() {
            name = &name[prefix.len()..];
            break;
        }
    }
    let name: String = name
        .chars()
        .map(|c| match c {
            '０'..='９' => char::from_u32(c as u32 - '０' as u32 + '0' as u32).unwrap_or(c),
            _ => c,
        })
        .collect();
    if let Some(rest) = name.strip_prefix('左') {
        return ParsedName {
            side: Some(Side::Left),
            core: rest.to_owned(),
        };
    }
    if let Some(rest) = name.strip_prefix('右') {
        return ParsedName {
            side: Some(Side::Right),
            core: rest.to_owned(),
        };
    }
    // Tokens at separators and lower→upper case changes (`LeftUpLeg` → Left, Up, Leg;
    // `LHipJoint` → L, Hip, Joint).
    let mut tokens: Vec<String> = Vec::new();
    for part in name.split([' ', '_', '.', '-']).filter(|p| !p.is_empty()) {
        let chars: Vec<char> = part.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let boundary = (chars[i].is_uppercase() && chars[i - 1].is_lowercase())
                || (chars[i].is_uppercase()
                    && chars[i - 1].is_uppercase()
                    && chars.get(i + 1).is_some_and(|c| c.is_lowercase()));
            if boundary {
                tokens.push(chars[start..i].iter().collect());
                start = i;
            }
        }
        tokens.push(chars[start..].iter().collect());
    }
    let mut side = None;
    let mut core = String::new();
    for token in tokens {
        let lower = token.to_lowercase();
        match lower.as_str() {
            "left" | "l" if side.is_none() => side = Some(Side::Left),
            "right" | "r" if side.is_none() => side = Some(Side::Right),
            "armature" | "end" if !core.is_empty() => {}
            _ => core.push_str(&lower),
        }
    }
    // A numeric suffix after an underscore (`b_Spine01_02`): drop the trailing ordinal.
    if let Some((head, tail)) = name.rsplit_once('_')
        && !head.is_empty()
        && tail.chars().all(|c| c.is_ascii_digit())
        && !tail.is_empty()
    {
        core.truncate(core.len() - tail.len());
    }
    ParsedName { side, core }
}

fn sided(side: Option<Side>, left: HumanoidBone, right: HumanoidBone) -> Option<HumanoidBone> {
    match side? {
        Side::Left => Some(left),
        Side::Right => Some(right),
    }
}

/// Centre bones: these names must carry no side.
fn centre(name: &ParsedName, bone: HumanoidBone) -> Option<HumanoidBone> {
    name.side.is_none().then_some(bone)
}

/// Finger `finger` (0 thumb … 4 little) segment `segment` (0 first from the hand … 2).
fn finger(side: Option<Side>, finger: usize, segment: usize) -> Option<HumanoidBone> {
    use HumanoidBone as B;
    const LEFT: [[HumanoidBone; 3]; 5] = [
        [
            B::LeftThumbMetacarpal,
            B::LeftThumbProximal,
            B::LeftThumbDistal,
        ],
        [
            B::LeftIndexProximal,
            B::LeftIndexIntermediate,
            B::LeftIndexDistal,
        ],
        [
            B::LeftMiddleProximal,
            B::LeftMiddleIntermediate,
            B::LeftMiddleDistal,
        ],
        [
            B::LeftRingProximal,
            B::LeftRingIntermediate,
            B::LeftRingDistal,
        ],
        [
            B::LeftLittleProximal,
            B::LeftLittleIntermediate,
            B::LeftLittleDistal,
        ],
    ];
    const RIGHT: [[HumanoidBone; 3]; 5] = [
        [
            B::RightThumbMetacarpal,
            B::RightThumbProximal,
            B::RightThumbDistal,
        ],
        [
            B::RightIndexProximal,
            B::RightIndexIntermediate,
            B::RightIndexDistal,
        ],
        [
            B::RightMiddleProximal,
            B::RightMiddleIntermediate,
            B::RightMiddleDistal,
        ],
        [
            B::RightRingProximal,
            B::RightRingIntermediate,
            B::RightRingDistal,
        ],
        [
            B::RightLittleProximal,
            B::RightLittleIntermediate,
            B::RightLittleDistal,
        ],
    ];
    let table = match side? {
        Side::Left => &LEFT,
        Side::Right => &RIGHT,
    };
    table.get(finger)?.get(segment).copied()
}

/// A finger name `<prefix><finger word><digit>` with digits `first..first+2`.
fn numbered_finger(
    core: &str,
    side: Option<Side>,
    prefix: &str,
    words: &[&str; 5],
    first: u32,
) -> Option<HumanoidBone> {
    let rest = core.strip_prefix(prefix)?;
    let digit = rest.chars().last()?.to_digit(10)?;
    let word = &rest[..rest.len() - 1];
    let f = words.iter().position(|w| *w == word)?;
    let segment = digit.checked_sub(first)? as usize;
    finger(side, f, segment)
}

/// Kept as one function of about 140 lines: it is one table (a `match` per naming scheme), which
/// reads best whole.
#[allow(clippy::too_many_lines)] // one table per scheme, side by side
fn scheme_bone(scheme: NamingScheme, name: &ParsedName) -> Option<HumanoidBone> {
    use HumanoidBone as B;
    let side = name.side;
    let core = name.core.as_str();
    match scheme {
        NamingScheme::VrmUnity => {
            match core {
                "hips" => return centre(name, B::Hips),
                "spine" => return centre(name, B::Spine),
                "chest" => return centre(name, B::Chest),
                "upperchest" => return centre(name, B::UpperChest),
                "neck" => return centre(name, B::Neck),
                "head" => return centre(name, B::Head),
                "jaw" => return centre(name, B::Jaw),
                "eye" => return sided(side, B::LeftEye, B::RightEye),
                "shoulder" => return sided(side, B::LeftShoulder, B::RightShoulder),
                "upperarm" => return sided(side, B::LeftUpperArm, B::RightUpperArm),
                "lowerarm" => return sided(side, B::LeftLowerArm, B::RightLowerArm),
                "hand" => return sided(side, B::LeftHand, B::RightHand),
                "upperleg" => return sided(side, B::LeftUpperLeg, B::RightUpperLeg),
                "lowerleg" => return sided(side, B::LeftLowerLeg, B::RightLowerLeg),
                "foot" => return sided(side, B::LeftFoot, B::RightFoot),
                "toes" => return sided(side, B::LeftToes, B::RightToes),
                _ => {}
            }
            let fingers = ["thumb", "index", "middle", "ring", "little"];
            let f = fingers.iter().position(|w| core.starts_with(w))?;
            let segment = &core[fingers[f].len()..];
            // Thumb segments follow VRM 1.0 (metacarpal, proximal, distal).
            let s = match (f, segment) {
                (0, "metacarpal") | (1.., "proximal") => 0,
                (0, "proximal") | (1.., "intermediate") => 1,
                (_, "distal") => 2,
                _ => return None,
            };
            finger(side, f, s)
        }
        NamingScheme::MixamoHumanIk => match core {
            "hips" => centre(name, B::Hips),
            "spine" => centre(name, B::Spine),
            "spine1" => centre(name, B::Chest),
            "spine2" => centre(name, B::UpperChest),
            "neck" => centre(name, B::Neck),
            "head" => centre(name, B::Head),
            "eye" => sided(side, B::LeftEye, B::RightEye),
            "shoulder" => sided(side, B::LeftShoulder, B::RightShoulder),
            "arm" => sided(side, B::LeftUpperArm, B::RightUpperArm),
            "forearm" => sided(side, B::LeftLowerArm, B::RightLowerArm),
            "hand" => sided(side, B::LeftHand, B::RightHand),
            "upleg" => sided(side, B::LeftUpperLeg, B::RightUpperLeg),
            "leg" => sided(side, B::LeftLowerLeg, B::RightLowerLeg),
            "foot" => sided(side, B::LeftFoot, B::RightFoot),
            "toebase" => sided(side, B::LeftToes, B::RightToes),
            _ => numbered_finger(
                core,
                side,
                "hand",
                &["thumb", "index", "middle", "ring", "pinky"],
                1,
            ),
        },
        NamingScheme::Biovision => match core {
            "hips" => centre(name, B::Hips),
            "chest" => centre(name, B::Spine),
            "chest2" => centre(name, B::Chest),
            "neck" => centre(name, B::Neck),
            "head" => centre(name, B::Head),
            "collar" => sided(side, B::LeftShoulder, B::RightShoulder),
            "shoulder" => sided(side, B::LeftUpperArm, B::RightUpperArm),
            "elbow" => sided(side, B::LeftLowerArm, B::RightLowerArm),
            "wrist" => sided(side, B::LeftHand, B::RightHand),
            "hip" => sided(side, B::LeftUpperLeg, B::RightUpperLeg),
            "knee" => sided(side, B::LeftLowerLeg, B::RightLowerLeg),
            "ankle" => sided(side, B::LeftFoot, B::RightFoot),
            "toe" => sided(side, B::LeftToes, B::RightToes),
            _ => None,
        },
        NamingScheme::Descriptive => match core {
            "hips" | "hip" | "pelvis" => centre(name, B::Hips),
            "spine" | "spine01" | "tummy" | "abdomen" => centre(name, B::Spine),
            "chest" | "spine02" => centre(name, B::Chest),
            "upperchest" => centre(name, B::UpperChest),
            "neck" => centre(name, B::Neck),
            "head" => centre(name, B::Head),
            "jaw" => centre(name, B::Jaw),
            "eye" => sided(side, B::LeftEye, B::RightEye),
            "shoulder" | "clavicle" => sided(side, B::LeftShoulder, B::RightShoulder),
            "upperarm" | "arm" => sided(side, B::LeftUpperArm, B::RightUpperArm),
            "lowerarm" | "forearm" | "elbow" => sided(side, B::LeftLowerArm, B::RightLowerArm),
            "hand" | "wrist" => sided(side, B::LeftHand, B::RightHand),
            "thigh" | "upperleg" | "leg" | "leg01" => {
                sided(side, B::LeftUpperLeg, B::RightUpperLeg)
            }
            "shin" | "calf" | "knee" | "lowerleg" | "leg02" => {
                sided(side, B::LeftLowerLeg, B::RightLowerLeg)
            }
            "foot" | "ankle" | "foot01" => sided(side, B::LeftFoot, B::RightFoot),
            "toes" | "toe" | "foot02" => sided(side, B::LeftToes, B::RightToes),
            _ => numbered_finger(
                core,
                side,
                "",
                &[
                    "thumb",
                    "indexfinger",
                    "middlefinger",
                    "ringfinger",
                    "littlefinger",
                ],
                1,
            )
            .filter(|_| !core.starts_with("thumb"))
            .or_else(|| numbered_finger(core, side, "", &["thumb", "", "", "", ""], 0)),
        },
        NamingScheme::Mmd => match core {
            "センター" => centre(name, B::Hips),
            "上半身" => centre(name, B::Spine),
            "上半身2" => centre(name, B::Chest),
            "首" => centre(name, B::Neck),
            "頭" => centre(name, B::Head),
            "目" => sided(side, B::LeftEye, B::RightEye),
            "肩" => sided(side, B::LeftShoulder, B::RightShoulder),
            "腕" => sided(side, B::LeftUpperArm, B::RightUpperArm),
            "ひじ" => sided(side, B::LeftLowerArm, B::RightLowerArm),
            "手首" => sided(side, B::LeftHand, B::RightHand),
            "足" => sided(side, B::LeftUpperLeg, B::RightUpperLeg),
            "ひざ" => sided(side, B::LeftLowerLeg, B::RightLowerLeg),
            "足首" => sided(side, B::LeftFoot, B::RightFoot),
            "つま先" | "足先EX" => sided(side, B::LeftToes, B::RightToes),
            _ => numbered_finger(core, side, "", &["親指", "", "", "", ""], 0).or_else(|| {
                numbered_finger(core, side, "", &["", "人指", "中指", "薬指", "小指"], 1)
            }),
        },
        NamingScheme::Explicit => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bone(name: &str) -> Vec<Option<HumanoidBone>> {
        let parsed = parse(name);
        NamingScheme::RECOGNISED
            .iter()
            .map(|&s| scheme_bone(s, &parsed))
            .collect()
    }

    #[test]
    fn names_parse_to_side_and_core() {
        let p = parse("mixamorig:LeftForeArm");
        assert_eq!((p.side, p.core.as_str()), (Some(Side::Left), "forearm"));
        let p = parse("thigh.l_Armature");
        assert_eq!((p.side, p.core.as_str()), (Some(Side::Left), "thigh"));
        let p = parse("LHipJoint");
        assert_eq!((p.side, p.core.as_str()), (Some(Side::Left), "hipjoint"));
        let p = parse("b_Spine01_02");
        assert_eq!((p.side, p.core.as_str()), (None, "spine01"));
        let p = parse("左ひじ");
        assert_eq!((p.side, p.core.as_str()), (Some(Side::Left), "ひじ"));
        let p = parse("右人指２");
        assert_eq!((p.side, p.core.as_str()), (Some(Side::Right), "人指2"));
        let p = parse("Left Upper Arm");
        assert_eq!((p.side, p.core.as_str()), (Some(Side::Left), "upperarm"));
    }

    #[test]
    fn the_same_name_means_different_bones_per_scheme() {
        let b = bone("LeftShoulder");
        assert_eq!(b[0], Some(HumanoidBone::LeftShoulder));
        assert_eq!(b[1], Some(HumanoidBone::LeftShoulder));
        assert_eq!(b[2], Some(HumanoidBone::LeftUpperArm));
        // (name, scheme index, bone)
        for (name, scheme, expected) in [
            (
                "mixamorig:RightHandIndex2",
                1,
                HumanoidBone::RightIndexIntermediate,
            ),
            ("leftThumbMetacarpal", 0, HumanoidBone::LeftThumbMetacarpal),
            ("leftThumbProximal", 0, HumanoidBone::LeftThumbProximal),
            ("IndexFinger2_L", 3, HumanoidBone::LeftIndexIntermediate),
            ("Thumb0_R", 3, HumanoidBone::RightThumbMetacarpal),
            ("左親指０", 4, HumanoidBone::LeftThumbMetacarpal),
            ("右小指３", 4, HumanoidBone::RightLittleDistal),
        ] {
            assert_eq!(bone(name)[scheme], Some(expected), "{name}");
        }
    }

    #[test]
    fn vrm0_thumb_names_shift() {
        assert_eq!(
            HumanoidBone::from_vrm0_name("leftThumbIntermediate"),
            Some(HumanoidBone::LeftThumbProximal)
        );
        for &b in HumanoidBone::ALL {
            assert_eq!(HumanoidBone::from_vrm0_name(b.vrm0_name()), Some(b));
            assert_eq!(HumanoidBone::from_vrm_name(b.vrm_name()), Some(b));
        }
        assert_eq!(HumanoidBone::ALL.len(), 55);
    }

    #[test]
    fn builtin_humanoid_is_complete() {
        let skeleton = crate::humanoid::builtin_humanoid();
        let map = HumanoidMap::recognise(&skeleton);
        assert!(
            map.is_complete(),
            "{:?}",
            map.missing_required().collect::<Vec<_>>()
        );
        assert_eq!(map.scheme(), NamingScheme::VrmUnity);
        for (bone, joint) in map.iter() {
            assert_eq!(skeleton.name(joint), bone.vrm_name());
        }
        assert_eq!(map.len(), skeleton.len());
    }
}
