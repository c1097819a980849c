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
    /// line (as listed in [`Reply::Welcome`]); or `name` + `text` upload a file's contents
    /// (`.bvh` or `.urdf`), at most [`crate::MAX_UPLOAD_BYTES`].
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
    /// Solves when there are effectors.
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
            _ => None,
        }
    }

    /// The model-space up direction of skeletons in this format: +Z for URDF, +Y otherwise.
    pub fn up(self) -> [f64; 3] {
        match self {
            Self::Urdf => [0.0, 0.0, 1.0],
            Self::Builtin | Self::Bvh => [0.0, 1.0, 0.0],
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
