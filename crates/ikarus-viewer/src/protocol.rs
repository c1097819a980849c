//! The JSON messages between page and server (see the crate docs for the exchange).
//!
//! Every message is one JSON object whose `type` names it. Positions are model space
//! `[x, y, z]` in the skeleton's length unit; orientations are unit quaternions `[x, y, z, w]`
//! in model space.

use ikarus_core::JointLimit;
use ikarus_solve::{SolveReport, SolverConfig};
use serde::{Deserialize, Serialize};

/// A message from the page.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Request {
    /// Open a skeleton: `source` is `builtin:humanoid` or one of the files named on the command
    /// line (as listed in [`Reply::Welcome`]); or `name` + `text` (`.bvh`, `.urdf`) or `name` +
    /// `base64` (any format, binary ones: `.pmx`, `.pmd`, `.glb`, `.vrm`, `.gltf` with embedded
    /// buffers) upload a file's contents, at most [`crate::MAX_UPLOAD_BYTES`]. A `.vmd` applies
    /// to the loaded MMD model and a `.vrma` to the loaded humanoid (through its humanoid map);
    /// the skeleton stays and a `motion` reply follows.
    Load {
        /// A source the server knows.
        #[serde(default)]
        source: Option<String>,
        /// The uploaded file's name (its extension picks the format).
        #[serde(default)]
        name: Option<String>,
        /// The uploaded file's text.
        #[serde(default)]
        text: Option<String>,
        /// The uploaded file's bytes in base64 (standard alphabet, padded).
        #[serde(default)]
        base64: Option<String>,
    },
    /// Switch the MMD model's IK chains on or off (all of them; a motion's own IK keys still
    /// switch single chains off) and re-evaluate the pose.
    Ik {
        /// On or off.
        enabled: bool,
    },
    /// Make `joint` an effector (or change its goal). Without `position` it is pinned where
    /// it is now; `orientation` adds an orientation goal. Solves.
    SetEffector {
        /// Joint name.
        joint: String,
        /// Target position, model space.
        #[serde(default)]
        position: Option<[f64; 3]>,
        /// Target orientation, model space.
        #[serde(default)]
        orientation: Option<[f64; 4]>,
    },
    /// Remove `joint` from the effectors.
    RemoveEffector {
        /// Joint name.
        joint: String,
    },
    /// Make `joint` the base (support) joint that stays fixed; `null` keeps the root fixed.
    /// Feet pinned by the solver (and not dragged since) are released. Solves when there are
    /// effectors.
    SetBase {
        /// Joint name or `null`.
        joint: Option<String>,
    },
    /// Move an effector's target (creating the effector if needed) and solve. Consecutive drags
    /// of the same joint share one undo step.
    Drag {
        /// Joint name.
        joint: String,
        /// New target position, model space.
        position: [f64; 3],
        /// New target orientation, model space (keeps the current goal when absent).
        #[serde(default)]
        orientation: Option<[f64; 4]>,
    },
    /// Choose the solver and its parameters (any [`SolverConfig`], e.g. `{"kind": "ccd"}`).
    /// Solves when there are effectors.
    Solver {
        /// The configuration.
        config: SolverConfig,
    },
    /// The residual after each iteration of the last solve (re-run with budgets 1, 2, ...).
    Trace,
    /// Undo the last edit.
    Undo,
    /// Redo the last undone edit.
    Redo,
    /// Back to the rest pose, no effectors, no base.
    Reset,
    /// Show frame `index` of the loaded (or generated) motion.
    Frame {
        /// 0-based frame.
        index: usize,
    },
    /// Append the current pose to the key postures.
    CaptureKey,
    /// Forget the key postures.
    ClearKeys,
    /// Build a motion through the key postures (evenly spaced over `duration` seconds) and make
    /// it the loaded motion.
    Generate {
        /// Seconds from the first key to the last.
        duration: f64,
        /// Frames per second of the result (default 30).
        #[serde(default)]
        fps: Option<f64>,
        /// `minimum_acceleration` (default) or `minimum_jerk`.
        #[serde(default)]
        profile: ikarus_core::trajectory::Profile,
    },
    /// The loaded motion (or the current pose as one frame) as BVH text.
    ExportBvh,
    /// Ground the loaded humanoid's motion on a terrain ([`ikarus_anim::ground`]): a
    /// `preset` (`slope`, `stairs`, `bumps`) laid along the motion's travel, or a terrain file
    /// (`name` + `text`: the JSON `ikarus ground` reads; `name` + `base64`: a `.glb`/`.gltf`
    /// whose triangles are the ground); neither puts the motion back on its own floor. The grounded motion replaces the loaded one (`motion` reply with
    /// `grounding`), and a `terrain` reply gives the ground to draw.
    Ground {
        /// A terrain made for the motion.
        #[serde(default)]
        preset: Option<ikarus_jobs::terrain::TerrainPreset>,
        /// A terrain file's name.
        #[serde(default)]
        name: Option<String>,
        /// A terrain file's JSON text.
        #[serde(default)]
        text: Option<String>,
        /// A terrain file's bytes in base64 (glTF/GLB).
        #[serde(default)]
        base64: Option<String>,
    },
    /// Pose the loaded humanoid from trackers ([`ikarus_anim::track`]): a recording (`name` +
    /// `text`, `.json` or `.csv`, the format `ikarus track` reads) played onto it, or a motion
    /// (`.bvh` as `text`; `.glb`, `.gltf`, `.vrm`, `.vrma` as `base64`) retargeted onto it
    /// whose own bones give the trackers (`points`: 3, 4 or 6; default 6), the retargeted
    /// motion (the truth) drawn beside the result. The result replaces the loaded motion
    /// (`motion` reply with `tracking`); every `pose` of it carries an `overlay`: the truth's
    /// joints beside it (none for a recording) and the trackers as markers.
    Track {
        /// The uploaded file's name (its extension picks the format).
        name: String,
        /// The uploaded file's text.
        #[serde(default)]
        text: Option<String>,
        /// The uploaded file's bytes in base64.
        #[serde(default)]
        base64: Option<String>,
        /// Trackers used: 3, 4 or 6 (default: every tracker of a recording; 6 for a motion).
        #[serde(default)]
        points: Option<usize>,
    },
    /// Retarget an uploaded motion (`name` + `text` for `.bvh`, or `name` + `base64` for
    /// `.bvh`, `.glb`, `.gltf`, `.vrm`, `.vrma`, `.vmd`) onto the loaded humanoid with contacts
    /// and IK repair ([`ikarus_anim::retarget`]). A `.vmd` is played with IK
    /// ([`ikarus_jobs::MmdPlayer`]) on the PMX/PMD model sent with it (`model_name` +
    /// `model_base64`), else on the loaded model when that is a PMX/PMD. The retargeted motion
    /// replaces the loaded one (`motion` reply) and every `pose` of it carries an `overlay`:
    /// the source's joints beside the target and the contacts held at that frame. Onto a
    /// loaded PMX/PMD the motion is resampled to 30 fps, written as the VMD `ikarus retarget …
    /// --out x.vmd` writes (IK bones placed on their effectors, [`ikarus_jobs::vmd_bytes`])
    /// and played from it with the model's IK, as MMD would play it.
    Retarget {
        /// The uploaded file's name (its extension picks the format).
        name: String,
        /// The uploaded file's text.
        #[serde(default)]
        text: Option<String>,
        /// The uploaded file's bytes in base64.
        #[serde(default)]
        base64: Option<String>,
        /// For a `.vmd`: the file name of the PMX/PMD model it plays on (its extension picks
        /// the format). Without it, a `.vmd` plays on the loaded model.
        #[serde(default)]
        model_name: Option<String>,
        /// For a `.vmd`: that model's bytes in base64.
        #[serde(default)]
        model_base64: Option<String>,
    },
}

/// A message from the server.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reply {
    /// Sent once on connection.
    Welcome {
        /// The solver kinds the server knows, each with its default configuration.
        solvers: Vec<SolverChoice>,
        /// Sources a `load` may name.
        sources: Vec<String>,
        /// Largest upload in bytes.
        max_upload: usize,
    },
    /// The skeleton after a load.
    Skeleton(SkeletonInfo),
    /// The loaded character's skinned mesh (after `skeleton`, when the file has one).
    Mesh(Box<MeshInfo>),
    /// The pose after any edit.
    Pose(Box<PoseInfo>),
    /// The residual after each iteration of the last solve.
    Trace {
        /// Largest position error after iteration 1, 2, ..., by FK.
        position_errors: Vec<f64>,
        /// Largest rotation error after iteration 1, 2, ..., radians.
        rotation_errors: Vec<f64>,
    },
    /// The key postures captured so far.
    Keys {
        /// How many.
        count: usize,
    },
    /// The loaded motion changed (a trajectory was generated).
    Motion(MotionInfo),
    /// The ground the loaded motion stands on: `null` for its own flat floor.
    Terrain {
        /// The heights to draw.
        terrain: Option<TerrainInfo>,
    },
    /// BVH text for download.
    Bvh {
        /// A file name.
        name: String,
        /// The file's contents.
        text: String,
    },
    /// The request failed; the session state is unchanged.
    Error {
        /// What went wrong.
        message: String,
    },
}

/// A solver kind and its default configuration (every parameter present).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SolverChoice {
    /// The `kind` tag.
    pub kind: String,
    /// `{"kind": ..., parameters...}` as [`SolverConfig`] serializes it.
    pub config: serde_json::Value,
}

/// Where a skeleton came from, which says how to show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceFormat {
    /// The built-in humanoid (+Y up, metres).
    Builtin,
    /// A BVH file (+Y up by the format's convention, the file's unit).
    Bvh,
    /// A URDF robot (its own frames, +Z up, metres).
    Urdf,
    /// An MMD model (PMX/PMD, converted to right-handed metres, +Y up).
    Mmd,
    /// A glTF / GLB / VRM avatar or a VRM animation (+Y up, metres).
    Gltf,
}

impl SourceFormat {
    /// The format of a source name: `builtin:…`, or a file name by its extension.
    pub fn of(name: &str) -> Option<Self> {
        if name.starts_with("builtin:") {
            return Some(Self::Builtin);
        }
        let extension = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match extension.as_str() {
            "bvh" => Some(Self::Bvh),
            "urdf" => Some(Self::Urdf),
            "pmx" | "pmd" => Some(Self::Mmd),
            "gltf" | "glb" | "vrm" | "vrma" => Some(Self::Gltf),
            _ => None,
        }
    }

    /// The model-space up direction of skeletons in this format: +Z for URDF, +Y otherwise.
    pub fn up(self) -> [f64; 3] {
        match self {
            Self::Urdf => [0.0, 0.0, 1.0],
            Self::Builtin | Self::Bvh | Self::Mmd | Self::Gltf => [0.0, 1.0, 0.0],
        }
    }
}

/// The loaded skeleton.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkeletonInfo {
    /// Source name.
    pub name: String,
    /// The source's format.
    pub format: SourceFormat,
    /// Model-space up direction (`[0, 0, 1]` for URDF robots): the page turns the drawing so
    /// this points up on screen. Positions in messages stay in model space.
    pub up: [f64; 3],
    /// Joints in order (parents first).
    pub joints: Vec<JointInfo>,
    /// The loaded motion, if any.
    pub motion: Option<MotionInfo>,
    /// Per joint, its humanoid bone's VRM 1.0 name (`leftHand`), when the skeleton's humanoid
    /// map (a VRM file's own, else recognised from the names) has one.
    pub humanoid: Vec<Option<&'static str>>,
    /// The solver kind in use after this load: `body` (the full-body solver, feet pinned) on
    /// a humanoid unless the page chose another, `example` (the shipped posture model) on
    /// other skeletons it fits, `ccd` by default elsewhere.
    pub solver: &'static str,
    /// The IK chains the file declares (MMD), run by the server's MMD evaluation.
    pub ik_chains: Vec<IkChainInfo>,
}

/// An IK chain declared by the file (MMD): dragging its `goal` joint runs it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IkChainInfo {
    /// The chain's name (its IK bone's name).
    pub name: String,
    /// The IK bone: the joint whose position is the chain's target.
    pub goal: String,
    /// The joint brought to the goal.
    pub effector: String,
    /// The joints the chain turns, from the effector up.
    pub links: Vec<String>,
}

/// A skinned mesh: buffers are base64 of little-endian arrays (three per vertex `positions`
/// and `normals` as f32, two `uvs` f32, four `joints` u16 skeleton joint indices, four
/// `weights` f32; `indices` u32, three per triangle, counter-clockwise from the front).
/// Vertices are model space at the bind pose; a vertex is drawn at
/// `Σ weight · model_from_joint · inverse_bind · position`, `model_from_joint` from the
/// `pose` replies' positions and rotations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeshInfo {
    /// Number of vertices.
    pub vertices: usize,
    /// Positions, f32 × 3 per vertex.
    pub positions: String,
    /// Normals, f32 × 3 per vertex (empty when the file has none).
    pub normals: String,
    /// Texture coordinates, f32 × 2 per vertex, `v` down (empty when the file has none).
    pub uvs: String,
    /// Joint indices, u16 × 4 per vertex.
    pub joints: String,
    /// Weights, f32 × 4 per vertex.
    pub weights: String,
    /// Triangle indices, u32.
    pub indices: String,
    /// Per joint, its inverse bind matrix (bind-pose model space → joint space), column-major 4×4.
    pub inverse_bind: Vec<[f64; 16]>,
    /// Materials as index ranges.
    pub materials: Vec<MaterialInfo>,
}

/// How a range of the mesh's triangles is drawn.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MaterialInfo {
    /// The material's name.
    pub name: String,
    /// Base colour, linear RGBA.
    pub base_color: [f32; 4],
    /// The base-colour texture as a data URL, when embedded or found beside the model.
    pub texture: Option<String>,
    /// First index drawn.
    pub first_index: u32,
    /// Number of indices drawn.
    pub index_count: u32,
    /// Both faces drawn (no back-face culling), as the file says.
    pub double_sided: bool,
}

/// The MMD evaluation's state in a pose.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IkInfo {
    /// Whether IK is on (the `ik` request).
    pub enabled: bool,
    /// What each declared chain did for this pose, in `ik_chains` order.
    pub chains: Vec<ChainInfo>,
}

/// One IK chain's outcome in the evaluated pose.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainInfo {
    /// The chain's name.
    pub name: String,
    /// False when switched off (by the `ik` toggle or the motion's IK keys).
    pub enabled: bool,
    /// Effector-to-goal distance after solving, by FK (model units).
    pub distance: f64,
    /// Iterations run.
    pub iterations: u32,
    /// Whether a link ended on its limit.
    pub limited: bool,
}

/// One joint of the skeleton.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JointInfo {
    /// Name.
    pub name: String,
    /// Parent index.
    pub parent: Option<usize>,
    /// Rest translation relative to the parent.
    pub rest_translation: [f64; 3],
    /// Rest rotation relative to the parent `[x, y, z, w]`: the limit's frame is the parent's
    /// model frame times this.
    pub rest_rotation: [f64; 4],
    /// The joint's limit, relative to its rest rotation in its rest frame.
    pub limit: JointLimit,
}

/// A motion's size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MotionInfo {
    /// Frames.
    pub frames: usize,
    /// Seconds per frame.
    pub frame_time: f64,
    /// After a `track`: what the tracker solve measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracking: Option<TrackingInfo>,
    /// After a `ground`: what the grounding measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounding: Option<GroundingInfo>,
}

/// A terrain to draw: `heights[i][j]` is the ground's height (+Y, metres) at
/// `x = origin[0] + j·cell`, `z = origin[1] + i·cell`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TerrainInfo {
    /// `[x0, z0]`.
    pub origin: [f64; 2],
    /// The sample spacing, metres.
    pub cell: f64,
    /// Rows along +Z of heights along +X.
    pub heights: Vec<Vec<f64>>,
}

/// What a `ground` request measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GroundingInfo {
    /// Foot contacts detected (both feet).
    pub contacts: usize,
    /// Frames whose feet the solver could not place.
    pub unreached: usize,
    /// The pelvis's largest move down and up (metres; down negative).
    pub pelvis_range: [f64; 2],
}

/// What a `track` request measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrackingInfo {
    /// Trackers used.
    pub points: usize,
    /// The calibration's scale (avatar units per tracker unit).
    pub scale: f64,
    /// Steps the legs took (both feet).
    pub steps: usize,
    /// Frames with a tracker held over.
    pub held_frames: usize,
    /// Frames whose body solve did not converge.
    pub unconverged: usize,
    /// With trackers made from a motion: the mean distance of the avatar's body bones from
    /// that motion retargeted onto it (the truth drawn beside), metres.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpjpe: Option<f64>,
}

/// The current pose and task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PoseInfo {
    /// Model-space position of every joint.
    pub positions: Vec<[f64; 3]>,
    /// Model-space rotation of every joint.
    pub rotations: Vec<[f64; 4]>,
    /// The effectors and their goals.
    pub effectors: Vec<EffectorInfo>,
    /// The base joint, if any.
    pub base: Option<String>,
    /// The report of the solve that produced this pose, if one ran.
    pub report: Option<ReportInfo>,
    /// The motion frame shown, when the pose is one.
    pub frame: Option<usize>,
    /// Whether `undo` / `redo` have something to do.
    pub can_undo: bool,
    /// See `can_undo`.
    pub can_redo: bool,
    /// For MMD models: IK on or off and each chain's outcome.
    pub ik: Option<IkInfo>,
    /// After a `retarget`: the source beside the target and the contacts held, at this frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<OverlayInfo>,
}

/// The source of a retargeted motion drawn beside the target, at one frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverlayInfo {
    /// The source's joints mapped onto the target's scale and floor and moved aside by
    /// about a body height along the target's right, model space.
    pub source: Vec<[f64; 3]>,
    /// Each source joint's parent index (`null` for roots).
    pub parents: Vec<Option<usize>>,
    /// Where the target's planted heels, balls and hands are held at this frame.
    pub contacts: Vec<[f64; 3]>,
}

/// An effector as shown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EffectorInfo {
    /// Joint name.
    pub joint: String,
    /// Target position.
    pub position: Option<[f64; 3]>,
    /// Target orientation.
    pub orientation: Option<[f64; 4]>,
}

/// A solve report with the solver's kind and its time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportInfo {
    /// Solver kind.
    pub solver: &'static str,
    /// The report (status, FK residuals, iterations, active limits, swivel, ...).
    #[serde(flatten)]
    pub report: SolveReport,
    /// Wall time of the solve call, microseconds.
    pub time_us: f64,
}
