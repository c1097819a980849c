//! `ikarus convert`: between BVH, glTF/GLB/VRM and VRMA, with rescaling and resampling.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use ikarus_core::Motion;
use ikarus_formats::bvh::Bvh;

use crate::load;

/// Arguments of `ikarus convert`.
#[derive(clap::Args)]
pub struct Args {
    /// Input: a .bvh, .gltf, .glb, .vrm or .vrma file or `builtin:humanoid` (written as one rest-pose frame).
    input: String,
    /// Output file: .bvh, .glb (skeleton, skin and animation) or .vrma (needs a recognisable humanoid).
    output: PathBuf,
    /// Multiply lengths by this factor (0.01: centimetres to metres).
    #[arg(long)]
    scale: Option<f64>,
    /// Resample to this many frames per second (slerp between frames).
    #[arg(long)]
    fps: Option<f64>,
    /// A VMD motion played on the .pmx/.pmd input with its IK; the output is .bvh or .vmd.
    #[arg(long)]
    motion: Option<String>,
    /// MMD IK mode with `--motion`.
    #[arg(long, value_enum, default_value_t)]
    mode: crate::mmd::Mode,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    if let Some(motion) = &args.motion {
        return crate::mmd::convert(
            &args.input,
            motion,
            &args.output,
            args.scale.unwrap_or(1.0),
            args.mode,
        );
    }
    let extension = args
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !matches!(extension.as_deref(), Some("bvh" | "glb" | "vrma")) {
        bail!(
            "{}: unknown output format (expected a .bvh, .glb or .vrma file name)",
            args.output.display()
        );
    }
    let document = load::open(&args.input, args.scale)?;
    let motion = if let Some(motion) = &document.motion {
        motion.clone()
    } else {
        let mut motion = Motion::for_skeleton(&document.skeleton, 1.0 / 30.0)?;
        motion.push(document.skeleton.rest_pose())?;
        motion
    };
    let motion = match args.fps {
        Some(fps) if fps.is_finite() && fps > 0.0 => motion
            .resampled(1.0 / fps)
            .with_context(|| format!("resampling to {fps} fps"))?,
        Some(fps) => bail!("--fps {fps}: expected a finite positive frame rate"),
        None => motion,
    };
    let progress = indicatif::ProgressBar::new_spinner().with_message(format!(
        "writing {} frames to {}",
        motion.len(),
        args.output.display()
    ));
    progress.enable_steady_tick(std::time::Duration::from_millis(100));
    match extension.as_deref() {
        Some("glb") => write_file(
            &args.output,
            &ikarus_formats::gltf::write_glb(&document.skeleton, Some(&motion), "motion"),
        )?,
        Some("vrma") => write_file(&args.output, &to_vrma(&document.skeleton, &motion)?)?,
        _ => {
            let bvh = Bvh::from_motion(&document.skeleton, &motion, document.layout_or_default())?;
            bvh.write(&args.output)?;
        }
    }
    progress.finish_and_clear();
    eprintln!(
        "wrote {} ({} joints, {} frames at {:.3} fps)",
        args.output.display(),
        document.skeleton.len(),
        motion.len(),
        motion.frame_rate()
    );
    Ok(())
}

fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// The motion on the skeleton's normalised humanoid (bones recognised from joint names) as VRMA.
fn to_vrma(skeleton: &ikarus_core::Skeleton, motion: &Motion) -> Result<Vec<u8>> {
    let map = ikarus_core::humanoid_map::HumanoidMap::recognise(skeleton);
    Ok(ikarus_formats::gltf::vrma::write_humanoid_vrma(
        skeleton, &map, motion,
    )?)
}
