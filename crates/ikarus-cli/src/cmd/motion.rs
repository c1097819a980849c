//! `ikarus motion`: a smooth motion between postures (seed 002), written as BVH.
//!
//! Postures are `FILE#FRAME` (a frame of a BVH file, 0-based) or `rest` (the skeleton's rest
//! pose); every posture must use the skeleton of `--skeleton` (default: the first file named,
//! else `builtin:humanoid`). `--via POSTURE@SECONDS` may repeat; the motion starts and ends at
//! rest and minimises the integral of squared angular acceleration through the via postures.

use std::path::PathBuf;

use anyhow::{Context, Result, bail, ensure};
use ikarus_core::trajectory::{Parameterisation, PoseTrajectory, Profile, ViaVelocity};
use ikarus_core::{LocalPose, Motion};
use ikarus_formats::Document;
use ikarus_formats::bvh::{Bvh, BvhLayout};

use crate::load;

/// Arguments of `ikarus motion`.
#[derive(clap::Args)]
pub struct Args {
    /// Start posture: `FILE#FRAME` or `rest`.
    #[arg(long)]
    from: String,
    /// Via posture at a time: `FILE#FRAME@SECONDS` or `rest@SECONDS` (repeatable).
    #[arg(long)]
    via: Vec<String>,
    /// End posture: `FILE#FRAME` or `rest`.
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
    let mut keys = vec![(0.0, posture(&document, &args.from, args.scale)?)];
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
        keys.push((time, posture(&document, spec, args.scale)?));
    }
    keys.push((args.duration, posture(&document, &args.to, args.scale)?));
    keys.sort_by(|a, b| a.0.total_cmp(&b.0));
    let trajectory = PoseTrajectory::new(
        &keys,
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
    let skeleton = &document.skeleton;
    let frame_time = 1.0 / args.fps;
    let mut motion = Motion::for_skeleton(skeleton, frame_time)?;
    let frames = (args.duration * args.fps).round() as usize + 1;
    let mut pose = skeleton.rest_pose();
    for k in 0..frames {
        trajectory.sample((k as f64 * frame_time).min(args.duration), &mut pose);
        motion.push(pose.clone())?;
    }
    let bvh = Bvh::from_motion(
        skeleton,
        &motion,
        BvhLayout::for_motion(skeleton, Some(&motion)),
    )?;
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

/// `FILE#FRAME` or `rest`, on the skeleton of `document`.
fn posture(document: &Document, spec: &str, scale: Option<f64>) -> Result<LocalPose> {
    if spec == "rest" {
        return Ok(document.skeleton.rest_pose());
    }
    let (file, frame) = spec
        .rsplit_once('#')
        .with_context(|| format!("posture `{spec}`: expected FILE#FRAME or rest"))?;
    let frame: usize = frame
        .parse()
        .with_context(|| format!("posture `{spec}`: `{frame}` is not a frame number"))?;
    let source = load::open(file, scale)?;
    if source.skeleton.names() != document.skeleton.names() {
        bail!("posture `{spec}`: its skeleton differs from the motion's skeleton");
    }
    load::frame_pose(&source, frame)
}
