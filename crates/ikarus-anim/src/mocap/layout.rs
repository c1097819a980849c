//! Keypoint layouts: which point of a pose-estimation output is which humanoid bone.
//!
//! Every keypoint names candidate places on the skeleton, tried in order: a humanoid bone's
//! joint, or a site fixed to a bone (nose, ears, head top, heel, finger knuckles) given as an
//! offset in **body axes at the rest T-pose** (`[left, up, forward]`, metres for the built-in
//! humanoid; scaled by the target's size when bound). Left is the subject's left, as in every
//! layout here.

use std::fmt;

use ikarus_core::humanoid_map::HumanoidBone as B;

/// Where one keypoint sits: candidate `(bone, offset)` pairs, the first whose bone the skeleton
/// has wins. A zero offset is the bone's joint itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeypointDef {
    /// The layout's name of the point (`left_wrist`).
    pub name: &'static str,
    /// Candidate places, in order of preference.
    pub candidates: &'static [(B, [f64; 3])],
}

const O: [f64; 3] = [0.0; 3];

macro_rules! kp {
    ($name:literal, $($bone:ident $off:expr),+) => {
        KeypointDef { name: $name, candidates: &[$((B::$bone, $off)),+] }
    };
}

/// Sites on the head, body axes `[left, up, forward]` from the head joint (the built-in
/// humanoid's head joint sits at the top of the neck, 1.52 m).
const NOSE: [f64; 3] = [0.0, 0.06, 0.11];
const HEAD_TOP: [f64; 3] = [0.0, 0.20, 0.0];
const LEFT_EYE: [f64; 3] = [0.032, 0.07, 0.08];
const RIGHT_EYE: [f64; 3] = [-0.032, 0.07, 0.08];
const LEFT_EAR: [f64; 3] = [0.075, 0.06, 0.0];
const RIGHT_EAR: [f64; 3] = [-0.075, 0.06, 0.0];

/// Human3.6M's 17 points (the `VideoPose3D` order).
pub const H36M: &[KeypointDef] = &[
    kp!("hip", Hips O),
    kp!("right_hip", RightUpperLeg O),
    kp!("right_knee", RightLowerLeg O),
    kp!("right_foot", RightFoot O),
    kp!("left_hip", LeftUpperLeg O),
    kp!("left_knee", LeftLowerLeg O),
    kp!("left_foot", LeftFoot O),
    kp!("spine", Spine O, Chest O),
    kp!("thorax", Neck O, UpperChest O),
    kp!("neck_nose", Head O),
    kp!("head", Head HEAD_TOP),
    kp!("left_shoulder", LeftUpperArm O),
    kp!("left_elbow", LeftLowerArm O),
    kp!("left_wrist", LeftHand O),
    kp!("right_shoulder", RightUpperArm O),
    kp!("right_elbow", RightLowerArm O),
    kp!("right_wrist", RightHand O),
];

/// COCO's 17 points, lifted to 3-D.
pub const COCO: &[KeypointDef] = &[
    kp!("nose", Head NOSE),
    kp!("left_eye", LeftEye O, Head LEFT_EYE),
    kp!("right_eye", RightEye O, Head RIGHT_EYE),
    kp!("left_ear", Head LEFT_EAR),
    kp!("right_ear", Head RIGHT_EAR),
    kp!("left_shoulder", LeftUpperArm O),
    kp!("right_shoulder", RightUpperArm O),
    kp!("left_elbow", LeftLowerArm O),
    kp!("right_elbow", RightLowerArm O),
    kp!("left_wrist", LeftHand O),
    kp!("right_wrist", RightHand O),
    kp!("left_hip", LeftUpperLeg O),
    kp!("right_hip", RightUpperLeg O),
    kp!("left_knee", LeftLowerLeg O),
    kp!("right_knee", RightLowerLeg O),
    kp!("left_ankle", LeftFoot O),
    kp!("right_ankle", RightFoot O),
];

/// Halpe's 26 points: COCO's 17, then head top, neck, pelvis, toes and heels.
pub const HALPE: &[KeypointDef] = &[
    COCO[0],
    COCO[1],
    COCO[2],
    COCO[3],
    COCO[4],
    COCO[5],
    COCO[6],
    COCO[7],
    COCO[8],
    COCO[9],
    COCO[10],
    COCO[11],
    COCO[12],
    COCO[13],
    COCO[14],
    COCO[15],
    COCO[16],
    kp!("head", Head HEAD_TOP),
    kp!("neck", Neck O),
    kp!("hip", Hips O),
    kp!("left_big_toe", LeftToes [0.02, -0.02, 0.06], LeftFoot [0.02, -0.07, 0.19]),
    kp!("right_big_toe", RightToes [-0.02, -0.02, 0.06], RightFoot [-0.02, -0.07, 0.19]),
    kp!("left_small_toe", LeftToes [0.06, -0.02, 0.03], LeftFoot [0.06, -0.07, 0.16]),
    kp!("right_small_toe", RightToes [-0.06, -0.02, 0.03], RightFoot [-0.06, -0.07, 0.16]),
    kp!("left_heel", LeftFoot [0.0, -0.06, -0.05]),
    kp!("right_heel", RightFoot [0.0, -0.06, -0.05]),
];

/// `MediaPipe` Pose's 33 world landmarks.
pub const MEDIAPIPE: &[KeypointDef] = &[
    kp!("nose", Head NOSE),
    kp!("left_eye_inner", Head [0.015, 0.07, 0.09]),
    kp!("left_eye", LeftEye O, Head LEFT_EYE),
    kp!("left_eye_outer", Head [0.05, 0.07, 0.075]),
    kp!("right_eye_inner", Head [-0.015, 0.07, 0.09]),
    kp!("right_eye", RightEye O, Head RIGHT_EYE),
    kp!("right_eye_outer", Head [-0.05, 0.07, 0.075]),
    kp!("left_ear", Head LEFT_EAR),
    kp!("right_ear", Head RIGHT_EAR),
    kp!("mouth_left", Head [0.025, 0.02, 0.09]),
    kp!("mouth_right", Head [-0.025, 0.02, 0.09]),
    kp!("left_shoulder", LeftUpperArm O),
    kp!("right_shoulder", RightUpperArm O),
    kp!("left_elbow", LeftLowerArm O),
    kp!("right_elbow", RightLowerArm O),
    kp!("left_wrist", LeftHand O),
    kp!("right_wrist", RightHand O),
    kp!("left_pinky", LeftHand [0.08, 0.0, -0.03]),
    kp!("right_pinky", RightHand [-0.08, 0.0, -0.03]),
    kp!("left_index", LeftHand [0.09, 0.0, 0.03]),
    kp!("right_index", RightHand [-0.09, 0.0, 0.03]),
    kp!("left_thumb", LeftHand [0.04, -0.01, 0.05]),
    kp!("right_thumb", RightHand [-0.04, -0.01, 0.05]),
    kp!("left_hip", LeftUpperLeg O),
    kp!("right_hip", RightUpperLeg O),
    kp!("left_knee", LeftLowerLeg O),
    kp!("right_knee", RightLowerLeg O),
    kp!("left_ankle", LeftFoot O),
    kp!("right_ankle", RightFoot O),
    kp!("left_heel", LeftFoot [0.0, -0.06, -0.05]),
    kp!("right_heel", RightFoot [0.0, -0.06, -0.05]),
    kp!("left_foot_index", LeftToes [0.0, -0.02, 0.06], LeftFoot [0.0, -0.07, 0.19]),
    kp!("right_foot_index", RightToes [0.0, -0.02, 0.06], RightFoot [0.0, -0.07, 0.19]),
];

/// SMPL's 24 joints (SMPL-H/X bodies share the first 22).
pub const SMPL24: &[KeypointDef] = &[
    kp!("pelvis", Hips O),
    kp!("left_hip", LeftUpperLeg O),
    kp!("right_hip", RightUpperLeg O),
    kp!("spine1", Spine O),
    kp!("left_knee", LeftLowerLeg O),
    kp!("right_knee", RightLowerLeg O),
    kp!("spine2", Chest O),
    kp!("left_ankle", LeftFoot O),
    kp!("right_ankle", RightFoot O),
    kp!("spine3", UpperChest O),
    kp!("left_foot", LeftToes O),
    kp!("right_foot", RightToes O),
    kp!("neck", Neck O),
    kp!("left_collar", LeftShoulder O),
    kp!("right_collar", RightShoulder O),
    kp!("head", Head O),
    kp!("left_shoulder", LeftUpperArm O),
    kp!("right_shoulder", RightUpperArm O),
    kp!("left_elbow", LeftLowerArm O),
    kp!("right_elbow", RightLowerArm O),
    kp!("left_wrist", LeftHand O),
    kp!("right_wrist", RightHand O),
    kp!("left_hand", LeftMiddleProximal O, LeftHand [0.09, 0.0, 0.0]),
    kp!("right_hand", RightMiddleProximal O, RightHand [-0.09, 0.0, 0.0]),
];

/// The up axis of the input's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum UpAxis {
    /// +Y up (ikarus, glTF, BVH, Human3.6M as lifted by most networks).
    #[default]
    Y,
    /// +Z up, right-handed (Human3.6M's world frame, Blender, most motion-capture rooms).
    Z,
    /// −Y up, right-handed: image axes with y down (`MediaPipe`'s world landmarks).
    NegY,
}

impl UpAxis {
    /// The point in ikarus's +Y-up frame (a proper rotation, so handedness is kept).
    pub fn to_y_up(self, p: glam::DVec3) -> glam::DVec3 {
        match self {
            UpAxis::Y => p,
            UpAxis::Z => glam::DVec3::new(p.x, p.z, -p.y),
            UpAxis::NegY => glam::DVec3::new(p.x, -p.y, -p.z),
        }
    }
}

/// A keypoint layout.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    /// Human3.6M 17 ([`H36M`]).
    H36m,
    /// COCO 17 ([`COCO`]).
    Coco,
    /// Halpe 26 ([`HALPE`]).
    Halpe,
    /// `MediaPipe` Pose 33 world landmarks ([`MEDIAPIPE`]); y down, metres.
    MediaPipe,
    /// SMPL's first 22 joints (no hands).
    Smpl22,
    /// SMPL's 24 joints ([`SMPL24`]).
    Smpl24,
    /// One keypoint per named joint of the target skeleton (names as the skeleton's).
    Skeleton(Vec<String>),
}

/// A layout name that is not known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown keypoint layout `{0}`; expected h36m, coco, halpe, mediapipe, smpl22, smpl24 or skeleton"
)]
pub struct UnknownLayout(pub String);

impl Layout {
    /// The layout named `name` (case-insensitive: `h36m`, `coco`, `halpe`, `mediapipe`,
    /// `smpl22`, `smpl24`); `skeleton` needs names, see [`Layout::Skeleton`].
    ///
    /// # Errors
    /// [`UnknownLayout`] for other names.
    pub fn from_name(name: &str) -> Result<Self, UnknownLayout> {
        Ok(
            match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
                "h36m" | "human36m" => Layout::H36m,
                "coco" | "coco17" => Layout::Coco,
                "halpe" | "halpe26" => Layout::Halpe,
                "mediapipe" | "blazepose" => Layout::MediaPipe,
                "smpl22" => Layout::Smpl22,
                "smpl" | "smpl24" => Layout::Smpl24,
                _ => return Err(UnknownLayout(name.to_owned())),
            },
        )
    }

    /// The built-in definitions (empty for [`Layout::Skeleton`]).
    pub fn definitions(&self) -> &'static [KeypointDef] {
        match self {
            Layout::H36m => H36M,
            Layout::Coco => COCO,
            Layout::Halpe => HALPE,
            Layout::MediaPipe => MEDIAPIPE,
            Layout::Smpl22 => &SMPL24[..22],
            Layout::Smpl24 => SMPL24,
            Layout::Skeleton(_) => &[],
        }
    }

    /// Number of keypoints per frame.
    pub fn len(&self) -> usize {
        match self {
            Layout::Skeleton(names) => names.len(),
            other => other.definitions().len(),
        }
    }

    /// True for a layout without points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The name of keypoint `k`.
    pub fn point_name(&self, k: usize) -> &str {
        match self {
            Layout::Skeleton(names) => names.get(k).map_or("?", String::as_str),
            other => other.definitions().get(k).map_or("?", |d| d.name),
        }
    }

    /// The up axis such files usually have (`MediaPipe`: −Y; the rest: +Y).
    pub fn usual_up(&self) -> UpAxis {
        match self {
            Layout::MediaPipe => UpAxis::NegY,
            _ => UpAxis::Y,
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::H36m => "h36m",
            Layout::Coco => "coco",
            Layout::Halpe => "halpe",
            Layout::MediaPipe => "mediapipe",
            Layout::Smpl22 => "smpl22",
            Layout::Smpl24 => "smpl24",
            Layout::Skeleton(_) => "skeleton",
        })
    }
}
