//! `ikarus motion`: a smooth motion between postures (seed 002, trajectories), written as BVH.
//!
//! Postures are `FILE#FRAME` (a frame of a BVH file, 0-based), `FILE.json` (a pose as
//! `ikarus solve` writes it) or `rest` (the skeleton's rest pose); every posture must use the
//! skeleton of `--skeleton` (default: the first `FILE#FRAME` named, else `builtin:humanoid`).
//! A pose JSON sets each listed joint's local `rotation` (`[x, y, z, w]`) by name on the rest
//! pose, and a root joint's translation from its `position` (model space, the skeleton's
//! units); joints it does not list keep their rest transform, a name the skeleton lacks is an
//! error. `--via POSTURE@SECONDS` may repeat; the motion starts and ends at rest and minimises
//! the integral of squared angular acceleration through the via postures. With `--keyframes`
//! the postures are instead keyframes at their times, interpolated by squad (rotations) and the
//! matching Catmull–Rom cubic (translations): velocity continuous through the via postures but
//! not zero at the ends.

use std::path::PathBuf;

use anyhow::{Context, Result, bail, ensure};
use glam::{DQuat, DVec3};
use ikarus_core::keyframes::{Interpolation, Keyframes};
use ikarus_core::trajectory::{Parameterisation, PoseTrajectory, Profile, ViaVelocity};
use ikarus_core::{LocalPose, Motion};
use ikarus_formats::Document;
use ikarus_formats::bvh::{Bvh, BvhLayout};
use serde::Deserialize;

use crate::load;

/// Arguments of `ikarus motion`.
#[derive(clap::Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches; clap rejects the conflicting ones"
)]
pub struct Args {
    /// Start posture: `FILE#FRAME`, `POSE.json` or `rest`.
    #[arg(long)]
    from: String,
    /// Via posture at a time: `POSTURE@SECONDS` (repeatable).
    #[arg(long)]
    via: Vec<String>,
    /// End posture: `FILE#FRAME`, `POSE.json` or `rest`.
    #[arg(long)]
    to: String,
    /// Seconds from start to end.
    #[arg(long)]
    duration: f64,
    /// Frames per second of the output.
    #[arg(long, default_value_t = 30.0)]
    fps: f64,
    /// Skeleton of the postures (default: the first file named, else `builtin:humanoid`).
    #[arg(long)]
    skeleton: Option<String>,
    /// Length scale applied when loading files.
    #[arg(long)]
    scale: Option<f64>,
    /// Minimum jerk (quintic, stops at every key) instead of minimum acceleration.
    #[arg(long)]
    minimum_jerk: bool,
    /// Interpolate XYZ Euler angles, as the seed does, instead of rotation vectors.
    #[arg(long)]
    euler: bool,
    /// Use the seed's printed via-point velocity (acceleration jumps at via points).
    #[arg(long)]
    seed_via_formula: bool,
    /// Interpolate the postures as keyframes by squad instead of the minimum-acceleration
    /// trajectory (not at rest at the ends).
    #[arg(long, conflicts_with_all = ["minimum_jerk", "euler", "seed_via_formula"])]
    keyframes: bool,
    /// Output BVH file.
    out: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        args.duration.is_finite() && args.duration > 0.0,
        "--duration {}: expected a positive number of seconds",
        args.duration
    );
    ensure!(
        args.fps.is_finite() && args.fps > 0.0 && args.fps <= 1000.0,
        "--fps {}: expected 0 < fps ≤ 1000",
        args.fps
    );
    let file_of = |spec: &str| spec.split_once('#').map(|(file, _)| file.to_owned());
    let skeleton_source = args
        .skeleton
        .clone()
        .or_else(|| file_of(&args.from))
        .or_else(|| args.via.iter().find_map(|v| file_of(v)))
        .or_else(|| file_of(&args.to))
        .unwrap_or_else(|| "builtin:humanoid".to_owned());
    let document = load::open(&skeleton_source, args.scale)?;
    let keys = keys(args, &document)?;
    let sampler = sampler(args, &keys)?;
    let skeleton = &document.skeleton;
    let frame_time = 1.0 / args.fps;
    let mut motion = Motion::for_skeleton(skeleton, frame_time)?;
    let frames = (args.duration * args.fps).round() as usize + 1;
    let mut pose = skeleton.rest_pose();
    for k in 0..frames {
        sampler((k as f64 * frame_time).min(args.duration), &mut pose);
        motion.push(pose.clone())?;
    }
    // The source's own layout when it has one (end sites stay end sites, channels keep their
    // order), as `convert` does; otherwise one made for the motion.
    let layout = document
        .layout
        .clone()
        .unwrap_or_else(|| BvhLayout::for_motion(skeleton, Some(&motion)));
    let bvh = Bvh::from_motion(skeleton, &motion, layout)?;
    bvh.write(&args.out)?;
    println!(
        "{} frames at {} fps through {} postures written to {}",
        motion.len(),
        args.fps,
        keys.len(),
        args.out.display()
    );
    Ok(())
}

/// The postures at their times, sorted.
fn keys(args: &Args, document: &Document) -> Result<Vec<(f64, LocalPose)>> {
    let mut keys = vec![(0.0, posture(document, &args.from, args.scale)?)];
    for via in &args.via {
        let (spec, time) = via
            .rsplit_once('@')
            .with_context(|| format!("--via {via}: expected POSTURE@SECONDS"))?;
        let time: f64 = time
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t > 0.0 && *t < args.duration)
            .with_context(|| {
                format!("--via {via}: the time must be a number strictly between 0 and --duration")
            })?;
        keys.push((time, posture(document, spec, args.scale)?));
    }
    keys.push((args.duration, posture(document, &args.to, args.scale)?));
    keys.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(keys)
}

/// The posture at a time: squad keyframes or the seed-002 trajectory.
type Sampler = Box<dyn Fn(f64, &mut LocalPose)>;

fn sampler(args: &Args, keys: &[(f64, LocalPose)]) -> Result<Sampler> {
    if args.keyframes {
        let frames = Keyframes::new(keys, Interpolation::Squad)?;
        return Ok(Box::new(move |t, pose| frames.sample(t, pose)));
    }
    let trajectory = PoseTrajectory::new(
        keys,
        if args.minimum_jerk {
            Profile::MinimumJerk
        } else {
            Profile::MinimumAcceleration
        },
        if args.seed_via_formula {
            ViaVelocity::SeedFormula
        } else {
            ViaVelocity::Continuous
        },
        if args.euler {
            Parameterisation::Euler
        } else {
            Parameterisation::RotationVector
        },
    )?;
    Ok(Box::new(move |t, pose| trajectory.sample(t, pose)))
}

/// `FILE#FRAME`, `FILE.json` or `rest`, on the skeleton of `document`.
fn posture(document: &Document, spec: &str, scale: Option<f64>) -> Result<LocalPose> {
    if spec == "rest" {
        return Ok(document.skeleton.rest_pose());
    }
    if spec.to_ascii_lowercase().ends_with(".json") {
        return pose_json(document, spec);
    }
    let (file, frame) = spec
        .rsplit_once('#')
        .with_context(|| format!("posture `{spec}`: expected FILE#FRAME, FILE.json or rest"))?;
    let frame: usize = frame
        .parse()
        .with_context(|| format!("posture `{spec}`: `{frame}` is not a frame number"))?;
    let source = load::open(file, scale)?;
    if source.skeleton.names() != document.skeleton.names() {
        bail!("posture `{spec}`: its skeleton differs from the motion's skeleton");
    }
    load::frame_pose(&source, frame)
}

/// A pose file as `ikarus solve` writes it (other fields, such as `report`, are ignored).
#[derive(Deserialize)]
struct PoseFile {
    joints: Vec<PoseJoint>,
}

#[derive(Deserialize)]
struct PoseJoint {
    name: String,
    /// Model-space position; used for root joints only.
    position: Option<[f64; 3]>,
    /// Local rotation `[x, y, z, w]`.
    rotation: [f64; 4],
}

/// The rest pose with the file's local rotations by joint name, and root translations from
/// their positions.
fn pose_json(document: &Document, path: &str) -> Result<LocalPose> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("posture `{path}`: cannot read the file"))?;
    let file: PoseFile = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("posture `{path}`:{}:{}: {e}", e.line(), e.column()))?;
    let skeleton = &document.skeleton;
    let mut pose = skeleton.rest_pose();
    for joint in &file.joints {
        let Some(id) = skeleton.joint(&joint.name) else {
            bail!(
                "posture `{path}`: joint `{}` is not in the motion's skeleton",
                joint.name
            );
        };
        let rotation = DQuat::from_array(joint.rotation);
        let length = rotation.length();
        ensure!(
            length.is_finite() && length > 1e-6,
            "posture `{path}`: joint `{}` has no valid rotation",
            joint.name
        );
        pose[id].rotation = rotation / length;
        if let (None, Some(position)) = (skeleton.parent(id), joint.position) {
            let position = DVec3::from_array(position);
            ensure!(
                position.is_finite(),
                "posture `{path}`: root `{}` has a non-finite position",
                joint.name
            );
            pose[id].translation = position;
        }
    }
    Ok(pose)
}
