//! Why a file does not load ([`LoadError`]) and why a request is refused ([`RequestError`]).
//!
//! The page sees an error's `Display` text in its `error` reply (the session converts it
//! there and nowhere else), so every message names the file, joint or argument involved.

use glam::{DQuat, DVec3};
use ikarus_anim::retarget::RetargetError;
use ikarus_core::MotionError;
use ikarus_core::rig::RigError;
use ikarus_core::trajectory::TrajectoryError;
use ikarus_formats::FormatError;
use ikarus_formats::bvh::BvhError;
use ikarus_formats::gltf::GltfError;
use ikarus_formats::mmd::{MmdBuildError, MmdError};
use ikarus_jobs::{JobError, VmdBytesError};

/// Why a file (a source named in a `load`, or an uploaded file) cannot become a session's
/// document or motion. Each variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A `load` named a source this server was not started with. Name one of the welcome's
    /// `sources`, or upload the file instead.
    #[error("unknown source `{name}`; this server has {}", .available.join(", "))]
    UnknownSource {
        /// The source asked for.
        name: String,
        /// The sources this server has.
        available: Vec<String>,
    },
    /// The upload is larger than [`crate::MAX_UPLOAD_BYTES`]. Send a smaller file, or open it
    /// from the command line (`ikarus serve FILE`), where no limit applies.
    #[error("{name}: {bytes} bytes is larger than the {limit} byte upload limit")]
    TooLarge {
        /// The uploaded file's name.
        name: String,
        /// Its size in bytes.
        bytes: usize,
        /// The largest upload in bytes.
        limit: usize,
    },
    /// The file's extension names no format the page opens. Convert the file to one of
    /// those listed, or rename it if the extension is wrong.
    #[error(
        "{name}: the page opens .bvh, .urdf, .pmx, .pmd, .gltf, .glb, .vrm and .vrma files \
         (and .vmd motions for a loaded MMD model)"
    )]
    UnknownFormat {
        /// The uploaded file's name.
        name: String,
    },
    /// The upload's `base64` field is not standard, padded base64. Encode the file's bytes
    /// with the standard alphabet.
    #[error("{name}: the upload is not valid base64: {source}")]
    Base64 {
        /// The uploaded file's name.
        name: String,
        /// Where the decoding stopped.
        source: base64::DecodeError,
    },
    /// The file does not parse (BVH, URDF, glTF/VRM: the message names the file, line and
    /// column or byte offset). Fix the file there.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A PMX, PMD or VMD file does not parse. Re-export it from an MMD editor.
    #[error("{name}: {source}")]
    Mmd {
        /// The file's name.
        name: String,
        /// What is wrong and at which byte.
        source: MmdError,
    },
    /// A glTF/GLB/VRM/VRMA upload does not parse or holds no VRM animation. Re-export it as
    /// a VRM animation.
    #[error("{name}: {source}")]
    Gltf {
        /// The file's name.
        name: String,
        /// What is wrong and where (byte offset, JSON line and column, or JSON path).
        source: GltfError,
    },
    /// A PMX/PMD model parses but does not build (no bones, a bone loop). Fix the model in an
    /// MMD editor.
    #[error("{name}: {source}")]
    Model {
        /// The model file's name.
        name: String,
        /// What does not build.
        source: MmdBuildError,
    },
    /// A model's rig (inheritance and IK chains) does not compile for its skeleton. Fix the
    /// chain or bone it names in an MMD editor.
    #[error("{name}: {source}")]
    Rig {
        /// The model file's name.
        name: String,
        /// What is wrong with the rig.
        source: RigError,
    },
}

/// Why a session refuses a request. The session's state is as it was before the request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The message is larger than any allowed upload makes one. Upload a smaller file.
    #[error("message of {bytes} bytes is larger than the {limit} byte limit")]
    MessageTooLarge {
        /// The message's length in bytes.
        bytes: usize,
        /// The upload limit, [`crate::MAX_UPLOAD_BYTES`].
        limit: usize,
    },
    /// The message is not JSON, or not a [`crate::protocol::Request`] (unknown `type`, an
    /// unknown, missing or mistyped field). The message says which.
    #[error("bad message: {0}")]
    BadMessage(#[source] serde_json::Error),
    /// The request's fields do not go together. Send the combination `expected` describes.
    #[error("{request} takes {expected}")]
    Arguments {
        /// The request's `type`.
        request: &'static str,
        /// The fields it takes.
        expected: &'static str,
    },
    /// A file in the request does not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A motion was read but the loaded document shows none (a fault in the viewer: the
    /// bound motion has no frames to report).
    #[error("the motion did not bind")]
    MotionNotBound,
    /// The loaded skeleton has no joint of this name. Use a name from the `skeleton` reply.
    #[error("unknown joint `{joint}` in {model} (it has {joints} joints)")]
    UnknownJoint {
        /// The joint name asked for.
        joint: String,
        /// The loaded document.
        model: String,
        /// How many joints it has.
        joints: usize,
    },
    /// A target position has a NaN or infinite coordinate. Send finite numbers.
    #[error("target position is not finite")]
    NonFinitePosition {
        /// The position sent, model space.
        position: DVec3,
    },
    /// A target orientation is not a finite unit quaternion `[x, y, z, w]`. Normalise it.
    #[error("target orientation {orientation} is not a unit quaternion")]
    NonUnitOrientation {
        /// The orientation sent, model space.
        orientation: DQuat,
    },
    /// A solver configuration asks for more iterations than one request may run. Lower
    /// `iteration.max_iterations` to at most `limit`.
    #[error("iteration.max_iterations {requested} is more than the viewer allows ({limit})")]
    IterationBudget {
        /// The `iteration.max_iterations` sent.
        requested: u64,
        /// The most the viewer allows.
        limit: u64,
    },
    /// The solver returned NaN or infinite joint values; the previous pose is kept. Try
    /// another solver or a reachable target.
    #[error("{solver} returned a non-finite pose; kept the previous pose")]
    NonFinitePose {
        /// The solver's kind.
        solver: &'static str,
    },
    /// `undo` with no edit to undo.
    #[error("nothing to undo")]
    NothingToUndo,
    /// `redo` with no undone edit to redo.
    #[error("nothing to redo")]
    NothingToRedo,
    /// The `ik` switch on a document without MMD IK chains. Load a PMX or PMD model.
    #[error("{model} has no IK chains of its own (the ik switch is for MMD models)")]
    NoIkChains {
        /// The loaded document.
        model: String,
    },
    /// An MMD IK bone was moved on a session without an MMD rig (the protocol never leads
    /// here: only MMD models have IK bones).
    #[error("no MMD rig")]
    NoMmdRig,
    /// A `frame` with no motion loaded. Load a file with a motion, or `generate` one.
    #[error("{model} has no motion to play")]
    NoMotion {
        /// The loaded document.
        model: String,
    },
    /// A `frame` index past the motion's end. Ask for a frame from 0 to `last`.
    #[error("frame {index} does not exist; the motion has frames 0 to {last}")]
    FrameOutOfRange {
        /// The frame asked for.
        index: usize,
        /// The motion's last frame.
        last: usize,
    },
    /// A `capture_key` beyond the most key postures a session keeps. `clear_keys` first.
    #[error("at most {limit} key postures")]
    TooManyKeys {
        /// The most key postures a session keeps.
        limit: usize,
    },
    /// A `generate` with fewer than two key postures. `capture_key` at least twice.
    #[error("capture at least two key postures first ({count} so far)")]
    TooFewKeys {
        /// The key postures captured.
        count: usize,
    },
    /// A `generate` whose `duration` or `fps` is not finite and positive.
    #[error("duration {duration} s and fps {fps} must be finite and positive")]
    InvalidTiming {
        /// The `duration` sent, seconds.
        duration: f64,
        /// The `fps` sent (30 when absent).
        fps: f64,
    },
    /// A `generate` that would make more frames than a session keeps. Shorten the duration
    /// or lower `fps`.
    #[error("{frames} frames is more than {limit}; shorten the duration or lower fps")]
    TooManyFrames {
        /// The frames `duration` and `fps` ask for.
        frames: usize,
        /// The most frames a generated motion may have.
        limit: usize,
    },
    /// The key postures give no trajectory (non-finite values).
    #[error(transparent)]
    Trajectory(#[from] TrajectoryError),
    /// A motion could not be built for the loaded skeleton.
    #[error(transparent)]
    Motion(#[from] MotionError),
    /// The motion does not fit the BVH channel layout it is exported with.
    #[error(transparent)]
    Bvh(#[from] BvhError),
    /// A `.vmd` was loaded onto a document that is not an MMD model. Load its `.pmx` or
    /// `.pmd` model first.
    #[error(
        "{name}: a VMD motion plays on an MMD model; load a .pmx or .pmd first (this is {model})"
    )]
    VmdNeedsMmdModel {
        /// The VMD file's name.
        name: String,
        /// The loaded document.
        model: String,
    },
    /// None of the bones a VMD keys is in the model it plays on. Use the motion made for
    /// this model (VMD keys bones by their Japanese names).
    #[error("{name}: none of its {keyed} keyed bones is in {model}")]
    NoKeyedBones {
        /// The VMD file's name.
        name: String,
        /// How many bones the VMD keys.
        keyed: usize,
        /// The model it was played on.
        model: String,
    },
    /// A `.vrma` on a document whose humanoid map has no bone to play it on. Load a
    /// humanoid (VRM, the built-in one, or a skeleton with recognisable joint names).
    #[error("{name}: {model} has no humanoid bones to play it on")]
    NoHumanoidToPlayOn {
        /// The VRMA file's name.
        name: String,
        /// The loaded document.
        model: String,
    },
    /// A `retarget` onto a document without a humanoid map. Load a humanoid first.
    #[error("{name}: {model} has no humanoid bones to retarget onto")]
    NoHumanoidTarget {
        /// The motion file's name.
        name: String,
        /// The loaded document.
        model: String,
    },
    /// A `retarget` source whose joint names give no humanoid bone. Use a humanoid's motion
    /// (VRM, or a skeleton with standard bone names).
    #[error("{name}: no humanoid bones recognised")]
    NoHumanoidSource {
        /// The source's file name (for a `.vmd`, its model's).
        name: String,
    },
    /// A `retarget` source file without a motion. Send a file with an animation.
    #[error("{name}: no motion to retarget")]
    NoMotionToRetarget {
        /// The source's file name.
        name: String,
    },
    /// A `retarget` sent `model_name` or `model_base64` with a motion that is not a `.vmd`.
    /// Leave them out: only a VMD needs its model.
    #[error("{name}: `model_name` and `model_base64` go with a .vmd motion only")]
    ModelWithoutVmd {
        /// The motion file's name.
        name: String,
    },
    /// A `retarget` sent one of `model_name` and `model_base64` without the other. Send both.
    #[error("`model_name` and `model_base64` go together")]
    IncompleteModel,
    /// A `retarget`'s `model_name` is not a `.pmx` or `.pmd`. Send the VMD's PMX/PMD model.
    #[error("{model}: a VMD motion plays on a .pmx or .pmd model")]
    NotMmdModel {
        /// The `model_name` sent.
        model: String,
    },
    /// A `.vmd` retargeted with no model sent and no PMX/PMD loaded. Load the model, or send
    /// it as `model_name` + `model_base64`.
    #[error(
        "{name}: a VMD motion plays on its .pmx or .pmd model: load the model, or send it \
         with the motion (`model_name` + `model_base64`); {model} is not one"
    )]
    RetargetVmdNeedsModel {
        /// The VMD file's name.
        name: String,
        /// The loaded document.
        model: String,
    },
    /// A VMD could not be played on its model.
    #[error("{name}: {source}")]
    Play {
        /// The VMD file's name.
        name: String,
        /// Why it does not play (boxed: the largest of these errors).
        source: Box<JobError>,
    },
    /// A retarget source's motion could not be resampled to 30 fps for an MMD target.
    #[error("{name}: {source}")]
    Resample {
        /// The source's file name.
        name: String,
        /// Why it does not resample.
        source: MotionError,
    },
    /// The source motion does not retarget onto the loaded humanoid (see
    /// [`RetargetError`] for each cause and its fix).
    #[error("{name} onto {target}: {source}")]
    Retarget {
        /// The source's file name.
        name: String,
        /// The loaded document.
        target: String,
        /// Why it does not retarget.
        source: RetargetError,
    },
    /// A `track` upload is neither a tracker recording nor a motion the page opens, or its
    /// recording is malformed (the reader's message says where).
    #[error(transparent)]
    TrackerFile(#[from] ikarus_formats::trackers::TrackerFileError),
    /// The trackers do not pose the loaded humanoid (see
    /// [`TrackError`](ikarus_anim::track::TrackError) for each cause).
    #[error("{name} onto {target}: {source}")]
    Track {
        /// The upload's file name.
        name: String,
        /// The loaded document.
        target: String,
        /// Why.
        source: ikarus_anim::track::TrackError,
    },
    /// A `ground` on a document without a humanoid map, or without a motion (MMD models
    /// play through their VMD and are not grounded here). Load a humanoid's motion first.
    #[error(
        "ground: {model} has no humanoid motion to ground (load a BVH, glTF/VRM or VRMA motion)"
    )]
    NothingToGround {
        /// The loaded document.
        model: String,
    },
    /// A `ground` request's terrain file is malformed (the reader's message says where).
    #[error(transparent)]
    Terrain(#[from] ikarus_jobs::terrain::TerrainError),
    /// A `ground` request with both a preset and a file, or a file's name without its text.
    #[error("ground: give a `preset`, or a terrain file's `name` and `text`, or neither (flat)")]
    GroundArguments,
    /// The motion does not ground (see [`GroundError`](ikarus_anim::ground::GroundError)).
    #[error("grounding {model}: {source}")]
    Ground {
        /// The loaded document.
        model: String,
        /// Why.
        source: ikarus_anim::ground::GroundError,
    },
    /// A `track` asked for another number of points than 3, 4 or 6.
    #[error("track: `points` is 3, 4 or 6, not {0}")]
    Points(usize),
    /// A `track` onto an MMD model: the viewer plays MMD models through their VMD.
    #[error(
        "{model}: tracking plays onto glTF/VRM, BVH and the built-in humanoid, not onto an MMD model"
    )]
    TrackOntoMmd {
        /// The loaded document.
        model: String,
    },
    /// A retargeted motion was to be bound to a document without an MMD rig.
    #[error("{model}: no MMD rig to play on")]
    NoRigToPlayOn {
        /// The loaded document.
        model: String,
    },
    /// The retargeted motion cannot be written as a VMD for the loaded MMD model.
    #[error("{name} onto {target}: {source}")]
    WriteVmd {
        /// The source's file name.
        name: String,
        /// The loaded MMD model.
        target: String,
        /// Why it cannot be written.
        source: VmdBytesError,
    },
    /// The VMD written for the retargeted motion does not read back (a fault in the writer).
    #[error("{name}: the written VMD: {source}")]
    ReadWrittenVmd {
        /// The source's file name.
        name: String,
        /// What the reader found.
        source: MmdError,
    },
}
