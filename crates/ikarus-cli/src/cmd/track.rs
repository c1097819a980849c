//! `ikarus track`: an avatar posed from VR trackers ([`ikarus_anim::track`]). Trackers: a
//! recording (`.json` or `.csv`, see [`ikarus_formats::trackers`]) or a motion (`.bvh`,
//! glTF/VRM with an animation, `.vrma`) whose own bones give them (`--points` picks which).
//! Output by extension: `.bvh`, `.glb`, `.vrma`.
//!
//! Several inputs run in parallel, one thread per core, each to `--out-dir/NAME.EXT`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ikarus_anim::retarget::Character;
use ikarus_anim::track::{self, Points, TrackConfig};
use ikarus_core::trackers::Trackers;
use ikarus_jobs::{Terrain, WriteOptions};

use crate::load::HumanoidMotion;
use crate::many;

/// Arguments of `ikarus track`.
#[derive(clap::Args)]
pub struct Args {
    /// Tracker recordings (`.json`, `.csv`), or motions whose bones give the trackers.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The avatar: `.vrm`/`.glb`/`.gltf`, `.bvh`, `.pmx`/`.pmd` or `builtin:humanoid`.
    #[arg(long)]
    to: String,
    /// Trackers used: 3 (head, hands), 4 (+ hips) or 6 (+ feet). Default: every tracker in
    /// the recording (for a motion input: 6).
    #[arg(long, value_parser = ["3", "4", "6"])]
    points: Option<String>,
    /// The recording's frame where the user stands in the avatar's reference pose.
    #[arg(long, default_value_t = 0)]
    calibration_frame: usize,
    /// Height of the floor in the recording's world (metres).
    #[arg(long, default_value_t = 0.0)]
    floor: f64,
    /// The ground the feet stand on (JSON heightfield or plane, metres, +Y up); default the
    /// plane at `--floor`.
    #[arg(long)]
    terrain: Option<PathBuf>,
    /// Multiplies a motion input's lengths on reading, to metres (e.g. 0.01 for a BVH in
    /// centimetres).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Also write the trackers a motion input gave (JSON), with one input.
    #[arg(long)]
    save_trackers: Option<PathBuf>,
    /// Where the results go.
    #[command(flatten)]
    output: many::MotionOutput,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    if !(args.scale.is_finite() && args.scale > 0.0) {
        bail!("--scale must be a positive number, got {}", args.scale);
    }
    if args.save_trackers.is_some() && args.inputs.len() != 1 {
        bail!("--save-trackers takes one input");
    }
    let terrain = args.terrain.as_deref().map(Terrain::read).transpose()?;
    let avatar = ikarus_formats::open(&args.to, 1.0)?;
    let map = ikarus_formats::humanoid_map(&args.to, &avatar.skeleton)?;
    let outputs = args.output.paths(&args.inputs, "recording")?;
    let character = Character {
        skeleton: &avatar.skeleton,
        map: &map,
    };
    if let ([input], [output]) = (args.inputs.as_slice(), outputs.as_slice()) {
        // One recording: its error is the command's.
        let summary = track_one(args, character, input, output, terrain.as_ref())?;
        println!("{}: {summary}", output.display());
        return Ok(());
    }
    many::run_each(
        &args.inputs,
        &outputs,
        format!("tracking onto {}", args.to),
        "recording",
        |i| {
            track_one(
                args,
                character,
                &args.inputs[i],
                &outputs[i],
                terrain.as_ref(),
            )
        },
    )
}

/// The trackers of `input`: read, or made from a motion's own bones.
fn trackers_of(args: &Args, input: &Path, points: Option<Points>) -> Result<Trackers> {
    let is_recording = input
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json") || e.eq_ignore_ascii_case("csv"));
    if is_recording {
        return Ok(ikarus_formats::trackers::read(input)?);
    }
    let name = input.to_string_lossy();
    let source = HumanoidMotion::open(&name, args.scale, "make trackers from")?;
    let bones = points.unwrap_or(Points::Six).bones();
    let trackers = track::derive_trackers(source.character(), &source.motion, bones)
        .with_context(|| format!("{name}: trackers from its bones"))?;
    if let Some(path) = &args.save_trackers {
        std::fs::write(path, ikarus_formats::trackers::to_json(&trackers))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(trackers)
}

fn track_one(
    args: &Args,
    character: Character<'_>,
    input: &Path,
    output: &Path,
    terrain: Option<&Terrain>,
) -> Result<String> {
    let points = args
        .points
        .as_deref()
        .and_then(|p| p.parse().ok())
        .and_then(Points::from_count);
    let trackers = trackers_of(args, input, points)?;
    let config = TrackConfig {
        points,
        calibration_frame: args.calibration_frame,
        floor: args.floor,
        ..TrackConfig::default()
    };
    let ground = terrain.map(|t| t as &dyn ikarus_anim::ground::Ground);
    let tracked = track::track(character, &trackers, &config, ground)
        .with_context(|| input.display().to_string())?;
    let extension = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let options = WriteOptions {
        animation: "tracked",
        humanoid: (extension.as_deref() == Some("vrma")).then(|| character.map.clone()),
        ..WriteOptions::default()
    };
    ikarus_jobs::write_motion(output, character.skeleton, &tracked.motion, &options)?;
    Ok(format!(
        "{} frames from {} trackers, scale {:.3}, {} steps, {} frames with a tracker held over, {} frames not converged",
        tracked.motion.len(),
        trackers.tracks.len(),
        tracked.calibration.scale,
        tracked.steps(),
        tracked.held_frames(),
        tracked.unconverged()
    ))
}
