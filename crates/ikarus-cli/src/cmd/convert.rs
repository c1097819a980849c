//! `ikarus convert`: between BVH, glTF/GLB/VRM, VRMA and VMD, with rescaling and resampling
//! ([`ikarus_jobs::convert()`], the call Python's `ikarus.convert` makes too).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ikarus_jobs::{ConvertOptions, ReadOptions};

/// Arguments of `ikarus convert`.
#[derive(clap::Args)]
pub struct Args {
    /// Input: a .bvh, .gltf, .glb, .vrm, .vrma, .pmx/.pmd (with `--motion`) or .vmd (with
    /// `--model`) file or `builtin:humanoid` (written as one rest-pose frame).
    input: String,
    /// Output file: .bvh, .glb (skeleton, skin and animation; or `--into` an avatar), .vmd
    /// (MMD sources: for their model) or .vrma (needs a humanoid: declared, recognised or `--map`).
    output: PathBuf,
    /// Multiply lengths by this factor (0.01: centimetres to metres).
    #[arg(long)]
    scale: Option<f64>,
    /// Resample to this many frames per second (slerp between frames).
    #[arg(long)]
    fps: Option<f64>,
    /// The glTF animation to convert, by name (default: the first).
    #[arg(long)]
    animation: Option<String>,
    /// A VMD motion played on the .pmx/.pmd input with its IK.
    #[arg(long)]
    motion: Option<String>,
    /// The .pmx/.pmd model a .vmd input plays on (with its IK).
    #[arg(long)]
    model: Option<String>,
    /// MMD IK mode with `--motion` / `--model`.
    #[arg(long, value_enum, default_value_t)]
    mode: crate::mmd::Mode,
    /// .glb output: add the motion as an animation into this glTF/GLB/VRM file, whose skin is
    /// the input's skeleton (read from it).
    #[arg(long)]
    into: Option<PathBuf>,
    /// .vrma output: JSON bone map (`{"leftHand": "joint name", …}`, VRM 1.0 bone names) over
    /// what the input declares or its names give.
    #[arg(long)]
    map: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    let map = args
        .map
        .as_deref()
        .map(|path| {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
        })
        .transpose()?;
    let options = ConvertOptions {
        read: ReadOptions {
            scale: args.scale.unwrap_or(1.0),
            fps: args.fps,
            animation: args.animation.as_deref(),
            model: args.model.as_deref().map(Path::new),
            motion: args.motion.as_deref().map(Path::new),
            mode: args.mode.into(),
        },
        into: args.into.as_deref(),
        map_json: map.as_deref(),
    };
    let progress = indicatif::ProgressBar::new_spinner()
        .with_message(format!("converting to {}", args.output.display()));
    progress.enable_steady_tick(std::time::Duration::from_millis(100));
    let converted = ikarus_jobs::convert(&args.input, &args.output, &options, |done, total| {
        progress.set_message(format!("evaluating frame {done} of {total} with IK"));
    });
    progress.finish_and_clear();
    let converted = converted?;
    if let Some(vmd) = [args.motion.as_deref(), Some(args.input.as_str())]
        .into_iter()
        .flatten()
        .find(|f| crate::mmd::is_motion(f))
    {
        let model = args.model.as_deref().unwrap_or(&args.input);
        crate::mmd::warn_unmatched(vmd, model, &converted.unmatched);
    }
    crate::note_renamed(&args.output, &converted.renamed);
    crate::note_bvh_root(&args.output, converted.bvh_root.as_deref());
    eprintln!(
        "wrote {} ({} joints, {} frames at {:.3} fps)",
        args.output.display(),
        converted.joints,
        converted.frames,
        converted.frame_rate
    );
    Ok(())
}
